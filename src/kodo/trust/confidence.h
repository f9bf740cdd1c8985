// The call graph and confidence propagation of docs/kodo.md §7.5: a
// function is only as confident as the least confident function it can reach.
//
//  * declared(f): f's `@confidence` value; 1.0 when absent, when it has no value, or when f's
//    body is never type-checked (generic functions).
//  * edges: every call in f's body whose callee is a plain identifier adds f -> name (builtins,
//    generic functions and undefined names included; method calls, `T.m()` and
//    `Ok/Err/Some/None` not). Calls inside closures, spawn and parallel blocks count; the
//    `requires`/`ensures` clauses are not part of the body.
//  * computed(f) = min(declared(f), computed(g) for each callee g), where a function met again
//    contributes only its declared value. Since every reachable function is met at least once,
//    that is the minimum declared value over everything reachable from f, f included, which is
//    what Computed() returns (one iterative walk; cycles and recursion need no special case).
//  * the weakest link of f: the first function in a depth-first walk from f (callees in name
//    order; upstream walks them in hash-set order [I]) whose declared value is strictly smaller
//    than every one before it.
//  * overall confidence: the minimum computed value over the module's free functions, 1.0 when
//    there are none.
//
// Upstream records edges while type-checking, so a body's calls after its first type error are
// missing there; Build() walks whole bodies. The two agree on every program without type
// errors, the only ones a confidence report is made for.
//
// Every walk is iterative, so neither a deep expression nor a long call chain can overflow the
// stack; the graph is bounded by the program's size.
//
// Thread safety: a built CallGraph is immutable; read it from any thread.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kodo/ast/ast.h"

namespace trove::kodo::trust {

struct WeakestLink {
  std::string name;
  double declared = 1.0;
};

class CallGraph {
 public:
  // Builds the graph of `module`'s free functions.
  static CallGraph Build(const ast::Module& module);

  // Returns declared(name): 1.0 for unknown names.
  double Declared(std::string_view name) const;
  // Returns computed(name): 1.0 for unknown names.
  double Computed(std::string_view name) const;
  WeakestLink Weakest(std::string_view name) const;
  // The direct callees of `name`, sorted by name; empty for unknown names.
  std::vector<std::string> Callees(std::string_view name) const;
  // The minimum computed value over `module`'s free functions (1.0 when none).
  double Overall(const ast::Module& module) const;

  // For tests: adds an edge or a declared value by hand.
  void AddEdgeForTesting(const std::string& from, const std::string& to) {
    edges_[from].insert(to);
  }
  void SetDeclaredForTesting(const std::string& name, double value) { declared_[name] = value; }

 private:
  std::map<std::string, std::set<std::string>, std::less<>> edges_;
  std::map<std::string, double, std::less<>> declared_;
};

}  // namespace trove::kodo::trust

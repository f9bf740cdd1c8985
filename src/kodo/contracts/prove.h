// `--contracts=prove` (Trove's own mode, docs/kodo-contracts.md §4): proves each `ensures`
// clause of a function from its `requires` clauses (invariants included), the refinements of
// its parameters' types and its body, for the loop-free integer fragment: straight-line code,
// `let`, assignment, `if` (statement or expression), `return`, Int and Bool arithmetic and
// logic, and calls to functions of the module, whose own requires and ensures are then assumed.
// Int is 64-bit two's complement (bit-vectors), as at run time (docs/kodo-contracts.md §4):
// wrapping `+ - *`,
// `/` and `%` truncating, and a division that would trap ends the path.
//
// Also here: a concrete evaluator of the same fragment, independent of the SMT encoding, so
// that a counter-example can be run to show the violation (prove_test.cc does).
//
// Thread safety: pure functions apart from the SmtCache passed in.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kodo/ast/ast.h"
#include "kodo/contracts/contracts.h"
#include "kodo/contracts/smt_solver.h"

namespace trove::kodo::contracts {

struct Proof {
  SmtOutcome outcome = SmtOutcome::kUnknown;
  std::string model;  // kRefuted: Z3's model text
  // kRefuted: each parameter's value in the counter-example, decoded ("-1", "true"), in
  // parameter order; parameters the model leaves free are "0" / "false" (any value will do).
  std::vector<std::pair<std::string, std::string>> values;
  std::string reason;  // kUnknown: why (a construct outside the fragment, a timeout, ...)
};

// Proves each of `goals` (ensures clauses of `fn`) separately; one Proof per goal, in order.
std::vector<Proof> ProveEnsures(const ast::Module& module, const ast::Function& fn,
                                const std::vector<const ast::Expr*>& goals, SmtCache& cache);

// A value of the fragment.
struct Value {
  bool is_bool = false;
  std::int64_t i = 0;
  bool b = false;
  friend bool operator==(const Value&, const Value&) = default;
};

// Runs `fn` on `args` with the fragment's run-time semantics (wrapping arithmetic, the callee's
// requires checked). Returns nothing when the run traps, fails a callee's requires, falls off
// the end, or leaves the fragment.
std::optional<Value> RunFunction(const ast::Module& module, const ast::Function& fn,
                                 const std::vector<Value>& args);

// Evaluates a contract expression with `env` (parameters and `result`). Nothing when it
// traps or leaves the fragment.
std::optional<Value> EvalContract(const ast::Expr& expr, const std::map<std::string, Value>& env);

// Parses a decoded counter-example value ("-1", "true") back into a Value.
std::optional<Value> ParseValue(const std::string& text);

}  // namespace trove::kodo::contracts

// Ownership and borrowing of Kōdo (docs/kodo.md §7.3, tier T4): the state machine the type checker
// drives while it types a function body, and the diagnostics E0240-E0242, E0245-E0248, E0280,
// E0281.
//
// The model is upstream's: a per-function map `name -> Owned | Moved(at) | Borrowed |
// MutBorrowed`, saved when a block starts and restored when it ends (so a move inside a nested
// block is forgotten after it), plus two sets of *active* borrows that live only while one
// call's argument list is checked (so only conflicts within one argument list are found and
// sequential calls never conflict).
//
// How the checker uses it. The checker (kodo/sema) owns one Tracker and calls it at the points
// where upstream's checker applies ownership, in the same order, because a body stops at its
// first error and which error comes first is part of the observable behaviour (§5.3):
//
//   BeginFunction, then DeclareParam per parameter;
//   EnterBlock / ExitBlock around every block (function body, branches, loop bodies, nested
//     blocks, closure bodies);
//   Use for every identifier expression (E0240);
//   Let after a `let NAME = ...` is typed (NAME becomes Owned; a bare-identifier initialiser
//     of a non-Copy type is moved);
//   BeginCall / Argument / EndCall around the arguments of a direct call (not a method, a
//     generic or a variant call), Argument after each argument is typed;
//   Assign, Return, Capture + MoveCaptures (closures), Spawn.
//
// Each event that can fail returns the diagnostic (message, span, suggestion as upstream's,
// §16.2); the checker throws it as the body's error. Copy-ness is the caller's: it knows the
// types. No fix patch is attached: upstream's patches for these codes (`ref x` in an argument,
// `x.clone()`, `own x`) do not parse or do not compile (docs/decisions/0061-kodo-ownership.md).
//
// Thread safety: a Tracker is used by one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kodo/ast/ast.h"
#include "kodo/diag/diagnostic.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::ownership {

enum class State : std::uint8_t { kOwned, kMoved, kBorrowed, kMutBorrowed };

class Tracker {
 public:
  // `file` is the id spans of the checked source carry.
  explicit Tracker(FileId file) : file_(file) {}

  // Forgets everything: a new function body starts.
  void BeginFunction();
  // `own`/unqualified parameters are Owned, `ref` Borrowed, `mut` MutBorrowed.
  void DeclareParam(std::string_view name, ast::Ownership qualifier);

  // Saves the state; ExitBlock restores it. Returns the mark ExitBlock takes.
  std::size_t EnterBlock();
  // REQUIRES: `mark` came from the innermost EnterBlock not yet exited.
  void ExitBlock(std::size_t mark);

  // A read of `name` at `span`: E0240 when it was moved.
  std::optional<diag::Diagnostic> Use(std::string_view name, ast::Span span) const;

  // `let name = value` at `stmt` was typed; `copy` says whether the binding's type is Copy.
  // `source` is the initialiser's identifier when the initialiser is a bare identifier. The
  // binding becomes Owned, then a non-Copy Owned source is moved (E0242 while it is borrowed).
  std::optional<diag::Diagnostic> Let(std::string_view name, std::optional<std::string_view> source,
                                      bool copy, ast::Span stmt);

  // A direct call's argument list. BeginCall returns a frame for EndCall, which releases the
  // borrows the arguments took.
  struct CallFrame {
    std::size_t shared_mark = 0;
    std::size_t mut_mark = 0;
  };
  CallFrame BeginCall() const { return CallFrame{shared_.size(), mut_.size()}; }
  // An argument that is the bare identifier `name` (at `span`), of a Copy type or not, passed to
  // a parameter with `qualifier` (kOwned for builtins and callees without recorded qualifiers).
  std::optional<diag::Diagnostic> Argument(std::string_view name, ast::Ownership qualifier,
                                           bool copy, ast::Span span);
  void EndCall(const CallFrame& frame);

  // `name = ...` at `stmt`: E0248 through a `ref` parameter, E0240 after a move.
  std::optional<diag::Diagnostic> Assign(std::string_view name, ast::Span stmt) const;
  // `return name` at `stmt`: E0241 when `name` is a `ref`/`mut` parameter.
  std::optional<diag::Diagnostic> Return(std::string_view name, ast::Span stmt) const;

  // A closure at `closure` captures `name` (a free variable of its body bound outside it): E0281
  // when it was moved. A non-Copy capture is moved once the closure's body has been checked:
  // the caller collects them and calls MoveCaptures after the body.
  std::optional<diag::Diagnostic> Capture(std::string_view name, ast::Span closure) const;
  void MoveCaptures(const std::vector<std::string_view>& names, ast::Span closure);

  // A `spawn` statement at `spawn` with `body`: E0280 when the body mentions a `ref` parameter
  // (upstream's Send check, which looks into expression, let, assign and return statements
  // through calls, operators, if-branches and field accesses).
  std::optional<diag::Diagnostic> Spawn(const ast::Block& body, ast::Span spawn) const;

  // The state of `name`, or nullopt when it is not tracked (for tests).
  std::optional<State> StateOf(std::string_view name) const;

 private:
  struct Entry {
    State state = State::kOwned;
    std::uint32_t moved_at = 0;  // what "moved at line N" shows (upstream: a byte offset)
  };
  struct Undo {
    std::string_view name;
    std::optional<Entry> previous;  // nullopt: the name was not tracked
  };
  struct Scope {
    std::size_t undo_mark = 0;
    std::vector<std::string_view> shared;
    std::vector<std::string_view> mut;
  };
  static constexpr std::size_t kNotTracked = static_cast<std::size_t>(-1);
  void Set(std::string_view name, Entry entry);
  const Entry* Find(std::string_view name) const;
  // The index of `name` in states_, or kNotTracked.
  std::size_t IndexOf(std::string_view name) const;
  void EraseAt(std::size_t at);
  SourceRange R(ast::Span span) const { return SourceRange{file_, span.start, span.end}; }
  std::optional<diag::Diagnostic> SpawnExpr(const ast::Expr& e, ast::Span spawn,
                                            std::uint32_t depth) const;
  std::optional<diag::Diagnostic> SpawnStmt(const ast::Stmt& s, ast::Span spawn,
                                            std::uint32_t depth) const;

  const FileId file_;
  // The tracked names and their states, each name once, in the order they were first set. A
  // vector scanned newest first while short: a body binds a handful of names, and a hashed map
  // allocated a node per binding (docs/decisions/0073-kodo-check-throughput.md).
  // Past kLinearNames names, index_ maps the names of states_[0, indexed_) to their indices.
  static constexpr std::size_t kLinearNames = 32;
  std::vector<std::pair<std::string_view, Entry>> states_;
  mutable std::unordered_map<std::string_view, std::size_t> index_;
  mutable std::size_t indexed_ = 0;
  std::size_t moved_ = 0;  // entries of states_ in State::kMoved (Use skips the lookup at 0)
  std::vector<Undo> undo_;
  std::vector<Scope> scopes_;
  // The active borrows of the argument lists being checked, as stacks: EndCall drops what its
  // call added, so a call nested in an argument keeps the outer call's borrows (upstream's sets
  // lose an outer borrow of the same name when the inner call releases it; decision 0061).
  std::vector<std::string_view> shared_;
  std::vector<std::string_view> mut_;
};

// The free variables of a closure body, in order of first use: identifiers that are not the
// closure's `params` and not bound by a `let` (or pattern) inside the body before their use.
// Depth-bounded like every walk over the tree (ast::kMaxTreeDepth).
std::vector<std::pair<std::string_view, ast::Span>> FreeVariables(
    const ast::Expr& body, const std::vector<std::string_view>& params);

}  // namespace trove::kodo::ownership

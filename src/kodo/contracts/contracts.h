// Kōdo contracts (docs/kodo.md §7.2, docs/kodo-contracts.md): the validator of the
// contract fragment, the modes of `--contracts=MODE`, the translation of a contract to SMT and
// what `kodoc check` reports, plus Trove's own `prove` mode (prove.h).
//
// Upstream's modes judge each contract *in isolation*: the formula must hold for every value of
// its free variables, with no assumption from types, refinements, other clauses or the body, so
// only tautologies are "statically verified". Module invariants are prepended to the requires
// of every free function and impl method (docs/kodo-contracts.md §6), as upstream's desugaring
// does, so they are verified and counted like requires clauses.
//
// Z3 is reached only through smt_solver.h (loaded lazily). Proof outcomes are cached by the
// formula's SMT-LIB text within one SmtCache, so a contract repeated across functions (or a
// module invariant prepended to every function) is solved once per run.
//
// Thread safety: the functions are pure apart from the SmtCache passed in, which is not
// thread-safe (use one per thread or per run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kodo/ast/ast.h"
#include "kodo/contracts/smt_solver.h"

namespace trove::kodo::contracts {

enum class ContractMode : std::uint8_t {
  kRuntime,      // default: validate, count every valid contract as a runtime check
  kStatic,       // Z3: proved → verified, refuted → failure, unknown → runtime check
  kBoth,         // Z3: proved → verified, refuted or unknown → runtime check
  kNone,         // nothing is validated or counted
  kRecoverable,  // as runtime for `check`; the interpreter continues after a violation
  kProve,        // Trove's own (prove.h): ensures proved from requires, refinements and body
};

struct ParsedMode {
  ContractMode mode = ContractMode::kRuntime;
  // Set for an unknown name: "warning: unknown contract mode `X`, falling back to `runtime`".
  std::optional<std::string> warning;
};

// Parses a `--contracts` value, case-insensitively (static, runtime, both, none, recoverable,
// and Trove's prove). Anything else is runtime with upstream's warning.
ParsedMode ParseContractMode(std::string_view text);
std::string_view ModeName(ContractMode mode);

// ---------------------------------------------------------------------------------------------
// Validation (docs/kodo-contracts.md §2).

struct InvalidContract {
  ast::Span span;      // of the offending sub-expression
  std::string reason;  // upstream's text, e.g. "string literals are not valid in contract ..."
};

// Returns the first construct outside the contract fragment (left operand before right), or
// nothing when `expr` is valid: literals, identifiers, unary and binary operators, field-access
// chains and a zero-argument `.length()` call on a valid receiver.
std::optional<InvalidContract> ValidateContractExpr(const ast::Expr& expr);

// ---------------------------------------------------------------------------------------------
// Translation to SMT (docs/kodo-contracts.md §3): quantifier-free integer arithmetic with Booleans.
// Identifiers and field chains (`a.b.c`, `a.b.length()`) are integer constants of that name.

// Returns an SMT-LIB 2 script that declares the constants of `expr` and asserts its negation,
// or nothing when `expr` is untranslatable (a float, a Bool used as an Int, an Int used as a
// Bool, anything but the constructs above).
std::optional<std::string> NegatedFormula(const ast::Expr& expr);

// A solver call memoized by formula text. Not thread-safe.
class SmtCache {
 public:
  explicit SmtCache(std::uint32_t timeout_ms = 5000) : timeout_ms_(timeout_ms) {}
  // Returns the cached answer for `smtlib2`, or solves it (CheckSat) and caches the answer.
  const SmtAnswer& Solve(const std::string& smtlib2);
  std::size_t solved() const { return solved_; }  // calls that reached the solver
  std::size_t hits() const { return hits_; }      // calls answered from the cache
  std::uint32_t timeout_ms() const { return timeout_ms_; }

 private:
  std::uint32_t timeout_ms_;
  std::unordered_map<std::string, SmtAnswer> answers_;
  std::size_t solved_ = 0;
  std::size_t hits_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Verification of a module (docs/kodo-contracts.md §1).

enum class ClauseKind : std::uint8_t { kRequires, kEnsures };

enum class ClauseVerdict : std::uint8_t {
  kIgnored,       // mode none
  kInvalid,       // outside the fragment: a failure in every mode but none
  kVerified,      // proved (counted "statically verified")
  kRefuted,       // a counter-example: a failure in static and prove modes
  kRuntimeCheck,  // counted as a runtime check
};

struct ClauseResult {
  ClauseKind kind = ClauseKind::kRequires;
  std::size_t number = 0;  // 1-based within its kind, invariants first (runtime messages)
  bool from_invariant = false;
  ast::Span span;  // the clause expression's span
  ClauseVerdict verdict = ClauseVerdict::kRuntimeCheck;
  std::string reason;  // kInvalid: the validator's reason; kRuntimeCheck: why not proved
  std::string model;   // kRefuted: Z3's model text ("x -> 0\n")
  // prove mode, kRefuted: the counter-example decoded as Kōdo values ("x = -1"), one per
  // parameter, in parameter order.
  std::vector<std::pair<std::string, std::string>> values;
  // A failure of `check` in this mode: kInvalid always, kRefuted in static and prove modes.
  bool failure = false;
};

struct FunctionContracts {
  std::string name;  // as registered: `f`, or `Type_method` for impl methods
  ast::Span span;
  std::vector<ClauseResult> clauses;  // requires (invariants first), then ensures
  bool failed() const;
};

struct VerifyOptions {
  ContractMode mode = ContractMode::kRuntime;
  // Consult Z3 in static/both/prove modes. Off: every valid contract is a runtime check, as
  // upstream built without its `smt` feature.
  bool use_smt = true;
};

struct ContractReport {
  ContractMode mode = ContractMode::kRuntime;
  std::size_t static_verified = 0;
  std::size_t runtime_checks = 0;
  // Free functions in source order, then impl methods (actor handlers are not verified by
  // upstream's check).
  std::vector<FunctionContracts> functions;
  // The first function with a failure, or null.
  const FunctionContracts* FirstFailure() const;
};

// Verifies every contract of `module` in `options.mode`. `cache` memoizes solver calls.
ContractReport VerifyModule(const ast::Module& module, const VerifyOptions& options,
                            SmtCache& cache);

// Upstream's stderr lines for the failures of one function (`kodoc check`, docs/kodo-contracts.md
// §1), e.g. "contract error: invalid contract expression at Span { start: 3, end: 8 }: REASON\n"
// and "contract error: contract refuted at Span { start: 3, end: 8 }: counter-example: x -> 0\n\n".
std::string FailureLines(const FunctionContracts& function);

// The summary line `kodoc check` prints after "Check passed" when any contract was counted:
// "  contracts: N statically verified, M runtime checks\n"; empty when none was.
std::string SummaryLine(const ContractReport& report);

// Prove mode's per-clause lines for `kodoc check` (stdout), one per valid ensures clause:
// "  proved: ensures clause 1 of `f` at Span { start: S, end: E }\n" or
// "  runtime check: ensures clause 1 of `f` at Span { ... }: REASON\n". Empty in other modes.
std::string ProveLines(const ContractReport& report);

// ---------------------------------------------------------------------------------------------
// Runtime checks (docs/kodo-contracts.md §6): what the interpreter must execute, decided here.

struct RuntimeCheck {
  enum class Kind : std::uint8_t { kRequires, kEnsures, kRefinement } kind;
  std::string function;   // the function it guards
  const ast::Expr* expr;  // the condition (for a refinement, `self` means `variable`)
  std::string variable;   // kRefinement: the let-bound name
  std::string alias;      // kRefinement: the refinement alias
  ast::Span span;
  std::string message;  // "requires clause N failed in function `F`", "refinement ..."
};

// Returns the runtime checks of every free function and impl method of `module`, whatever the
// mode (docs/kodo-contracts.md §6: they are emitted even in mode none): each requires (invariants
// first) and ensures with upstream's message, and each `let v: Alias = e` of a refinement alias.
// `module` must outlive the result (it points into it).
std::vector<RuntimeCheck> PlanRuntimeChecks(const ast::Module& module);

}  // namespace trove::kodo::contracts

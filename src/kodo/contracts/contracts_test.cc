#include "kodo/contracts/contracts.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kodo/parse/parser.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::contracts {
namespace {

// A parsed module that keeps its source alive (spans index it).
struct Parsed {
  std::unique_ptr<SourceBuffer> source;
  ast::Module module;
};

Parsed Parse(const std::string& text) {
  Result<SourceBuffer> source = SourceBuffer::Create(0, "t.ko", text);
  EXPECT_TRUE(source.ok());
  Parsed p{std::make_unique<SourceBuffer>(std::move(source).value()), {}};
  parse::ParseOptions options;
  options.recover = false;
  Result<parse::ParseResult> parsed = parse::ParseModule(*p.source, options);
  EXPECT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->ok()) << text << "\n" << parsed->diagnostics.front().message;
  p.module = std::move(*parsed->module);
  return p;
}

std::string Module(const std::string& body) {
  return "module m {\n  meta { purpose: \"t\" }\n" + body + "\n}\n";
}

// One function `f` with one requires clause.
Parsed WithRequires(const std::string& clause, const std::string& extra = "") {
  return Parse(Module(extra +
                      "  fn f(x: Int, y: Int, s: String, xs: List<Int>, flag: Bool) -> "
                      "Int\n    requires { " +
                      clause + " }\n  {\n    return 1\n  }\n"));
}

// ---------------------------------------------------------------------------------------------
// docs/kodo-contracts.md §2: one test per row of the table, plus the valid fragment.

struct Row {
  std::string clause;
  std::string reason;
  std::string offending;  // the text of the span reported
};

std::string Reason(const std::string& construct) {
  return construct + " not allowed in contract expressions";
}

TEST(ValidateTest, EveryRowOfTheTableGivesUpstreamsReason) {
  const std::string calls =
      "function calls are not allowed in contract expressions (only .length() is permitted)";
  const std::vector<Row> rows = {
      {"s == \"a\"", "string literals are not valid in contract expressions", "\"a\""},
      {"list_length(xs) > 0", calls, "list_length(xs)"},
      {"Some(x) == x", calls, "Some(x)"},
      {"s.contains(s)", calls, "s.contains(s)"},
      {"s.length(1) > 0", calls, "s.length(1)"},
      {"if x > 0 { true } else { false }", Reason("if expressions are"),
       "if x > 0 { true } else { false }"},
      {"x > 0 && { true }", Reason("block expressions are"), "{ true }"},
      {"P { a: 1 } == x", Reason("struct literals are"), "P { a: 1 }"},
      {"E::A(1) == x", Reason("enum variants are"), "E::A(1)"},
      {"match x { _ => true }", Reason("match expressions are"), "match x { _ => true }"},
      {"(0..x) == x", Reason("range expressions are"), "0..x"},
      {"x? > 0", Reason("try operator `?` is"), "x?"},
      {"x?.a > 0", Reason("optional chaining `?.` is"), "x?.a"},
      {"(x ?? 0) > 0", Reason("null coalescing `??` is"), "x ?? 0"},
      {"(|a: Int| a) == x", Reason("closures are"), "|a: Int| a"},
      {"x is Int", Reason("type test `is` is"), "x is Int"},
      {"x.await > 0", Reason("await is"), "x.await"},
      {"f\"{x}\" == s", Reason("string interpolation is"), "f\"{x}\""},
      {"(x, y) == x", Reason("tuple literals are"), "(x, y)"},
      {"x.0 > 0", Reason("tuple index is"), "x.0"},
  };
  for (const Row& row : rows) {
    Parsed p = WithRequires(row.clause);
    ASSERT_EQ(p.module.functions.size(), 1u) << row.clause;
    std::optional<InvalidContract> bad = ValidateContractExpr(p.module.functions[0].requires_[0]);
    ASSERT_TRUE(bad.has_value()) << row.clause;
    EXPECT_EQ(bad->reason, row.reason) << row.clause;
    const std::string_view text =
        p.source->text().substr(bad->span.start, bad->span.end - bad->span.start);
    EXPECT_EQ(text, row.offending) << row.clause;
  }
}

TEST(ValidateTest, TheFragmentIsValid) {
  for (const char* clause :
       {"true", "x > 0", "-x < 1 && !flag", "x + y * 2 - 3 / 1 % 2 >= 0 || false", "1.5 > 0.5",
        "s.length() > 0", "a.b.c > 0", "a.b.length() == y", "x == y"}) {
    Parsed p = WithRequires(clause);
    EXPECT_FALSE(ValidateContractExpr(p.module.functions[0].requires_[0]).has_value()) << clause;
  }
}

TEST(ValidateTest, TheFirstInvalidOperandIsReportedLeftFirst) {
  Parsed p = WithRequires("list_length(xs) > \"a\".length()");
  std::optional<InvalidContract> bad = ValidateContractExpr(p.module.functions[0].requires_[0]);
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->reason.find("function calls"), std::string::npos);
  // `.length()` on an invalid receiver: the receiver's reason.
  Parsed q = WithRequires("\"a\".length() > 0");
  bad = ValidateContractExpr(q.module.functions[0].requires_[0]);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->reason, "string literals are not valid in contract expressions");
}

// ---------------------------------------------------------------------------------------------
// docs/kodo-contracts.md §1: modes.

TEST(ModeTest, ParsesCaseInsensitivelyAndFallsBackWithUpstreamsWarning) {
  EXPECT_EQ(ParseContractMode("STATIC").mode, ContractMode::kStatic);
  EXPECT_EQ(ParseContractMode("Runtime").mode, ContractMode::kRuntime);
  EXPECT_EQ(ParseContractMode("both").mode, ContractMode::kBoth);
  EXPECT_EQ(ParseContractMode("none").mode, ContractMode::kNone);
  EXPECT_EQ(ParseContractMode("recoverable").mode, ContractMode::kRecoverable);
  EXPECT_EQ(ParseContractMode("prove").mode, ContractMode::kProve);
  EXPECT_FALSE(ParseContractMode("static").warning);
  ParsedMode bad = ParseContractMode("strict");
  EXPECT_EQ(bad.mode, ContractMode::kRuntime);
  ASSERT_TRUE(bad.warning);
  EXPECT_EQ(*bad.warning, "warning: unknown contract mode `strict`, falling back to `runtime`");
}

// The four outcome columns of docs/kodo-contracts.md §1, each as a one-clause function.
const char* const kInvalid = "s == \"a\"";
const char* const kProves = "x + 0 == x || x != x";
const char* const kRefutes = "x > 0";
const char* const kUnknown = "1.5 > 0.5";  // a float: untranslatable

struct Cell {
  ContractMode mode;
  const char* clause;
  ClauseVerdict verdict;
  bool failure;
  std::size_t verified;
  std::size_t runtime;
};

TEST(ModeTest, EveryModeAndOutcomeCell) {
  using V = ClauseVerdict;
  const std::vector<Cell> cells = {
      {ContractMode::kNone, kInvalid, V::kIgnored, false, 0, 0},
      {ContractMode::kNone, kProves, V::kIgnored, false, 0, 0},
      {ContractMode::kNone, kRefutes, V::kIgnored, false, 0, 0},
      {ContractMode::kNone, kUnknown, V::kIgnored, false, 0, 0},
      {ContractMode::kRuntime, kInvalid, V::kInvalid, true, 0, 0},
      {ContractMode::kRuntime, kProves, V::kRuntimeCheck, false, 0, 1},
      {ContractMode::kRuntime, kRefutes, V::kRuntimeCheck, false, 0, 1},
      {ContractMode::kRuntime, kUnknown, V::kRuntimeCheck, false, 0, 1},
      {ContractMode::kRecoverable, kInvalid, V::kInvalid, true, 0, 0},
      {ContractMode::kRecoverable, kProves, V::kRuntimeCheck, false, 0, 1},
      {ContractMode::kRecoverable, kRefutes, V::kRuntimeCheck, false, 0, 1},
      {ContractMode::kRecoverable, kUnknown, V::kRuntimeCheck, false, 0, 1},
      {ContractMode::kStatic, kInvalid, V::kInvalid, true, 0, 0},
      {ContractMode::kStatic, kProves, V::kVerified, false, 1, 0},
      {ContractMode::kStatic, kRefutes, V::kRefuted, true, 0, 0},
      {ContractMode::kStatic, kUnknown, V::kRuntimeCheck, false, 0, 1},
      {ContractMode::kBoth, kInvalid, V::kInvalid, true, 0, 0},
      {ContractMode::kBoth, kProves, V::kVerified, false, 1, 0},
      {ContractMode::kBoth, kRefutes, V::kRefuted, false, 0, 1},
      {ContractMode::kBoth, kUnknown, V::kRuntimeCheck, false, 0, 1},
  };
  for (const Cell& cell : cells) {
    SCOPED_TRACE(std::string(ModeName(cell.mode)) + " / " + cell.clause);
    Parsed p = WithRequires(cell.clause);
    SmtCache cache;
    ContractReport r = VerifyModule(p.module, {.mode = cell.mode}, cache);
    ASSERT_EQ(r.functions.size(), 1u);
    ASSERT_EQ(r.functions[0].clauses.size(), 1u);
    const ClauseResult& c = r.functions[0].clauses[0];
    EXPECT_EQ(c.verdict, cell.verdict);
    EXPECT_EQ(c.failure, cell.failure);
    EXPECT_EQ(r.static_verified, cell.verified);
    EXPECT_EQ(r.runtime_checks, cell.runtime);
    EXPECT_EQ(r.FirstFailure() != nullptr, cell.failure);
    // Runtime-like modes never ask Z3.
    if (cell.mode != ContractMode::kStatic && cell.mode != ContractMode::kBoth) {
      EXPECT_EQ(cache.solved(), 0u);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// docs/kodo-contracts.md §3: translation and Z3.

TEST(SmtTest, RefutationPrintsZ3sModelText) {
  ASSERT_TRUE(SmtAvailable());
  Parsed p = WithRequires("x > 0");
  SmtCache cache;
  ContractReport r = VerifyModule(p.module, {.mode = ContractMode::kStatic}, cache);
  const FunctionContracts* f = r.FirstFailure();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->clauses[0].model, "x -> 0\n");
  const ast::Span s = f->clauses[0].span;
  EXPECT_EQ(FailureLines(*f),
            "contract error: contract refuted at Span { start: " + std::to_string(s.start) +
                ", end: " + std::to_string(s.end) + " }: counter-example: x -> 0\n\n");
}

TEST(SmtTest, InvalidLineNamesTheSpanAndReason) {
  Parsed p = WithRequires("list_length(xs) > 0");
  SmtCache cache;
  ContractReport r = VerifyModule(p.module, {.mode = ContractMode::kRuntime}, cache);
  const FunctionContracts* f = r.FirstFailure();
  ASSERT_NE(f, nullptr);
  const ast::Span s = f->clauses[0].span;
  EXPECT_EQ(p.source->text().substr(s.start, s.end - s.start), "list_length(xs)");
  EXPECT_EQ(FailureLines(*f),
            "contract error: invalid contract expression at Span { start: " +
                std::to_string(s.start) + ", end: " + std::to_string(s.end) +
                " }: function calls are not allowed in contract expressions (only .length() is "
                "permitted)\n");
}

TEST(SmtTest, IdentifiersAndFieldChainsAreIntegerConstants) {
  Parsed p = WithRequires("a.b.length() >= 0");
  std::optional<std::string> f = NegatedFormula(p.module.functions[0].requires_[0]);
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, "(declare-const |a.b.length| Int)\n(assert (not (>= |a.b.length| 0)))\n");
  // No `>= 0` axiom for lengths: refuted.
  EXPECT_EQ(CheckSat(*f, 5000).outcome, SmtOutcome::kRefuted);
  Parsed q = WithRequires("s.length() > 0 || s.length() <= 0");
  EXPECT_EQ(CheckSat(*NegatedFormula(q.module.functions[0].requires_[0]), 5000).outcome,
            SmtOutcome::kProved);
}

TEST(SmtTest, UntranslatableFormulas) {
  // Identifiers are always Int: a Bool variable in a connective cannot be translated.
  for (const char* clause : {"flag && x > 0", "flag", "1.5 > 0.5", "x > 0 == true", "!x",
                             "-(x > 0) == 1", "(x + 1).a > 0", "x"}) {
    Parsed p = WithRequires(clause);
    EXPECT_FALSE(NegatedFormula(p.module.functions[0].requires_[0])) << clause;
  }
}

TEST(SmtTest, ArithmeticFollowsZ3sIntegers) {
  // `%` is Z3's Euclidean mod: never negative for a non-zero divisor.
  Parsed p = WithRequires("y == 0 || x % y >= 0");
  std::optional<std::string> f = NegatedFormula(p.module.functions[0].requires_[0]);
  ASSERT_TRUE(f);
  EXPECT_EQ(CheckSat(*f, 5000).outcome, SmtOutcome::kProved);
  // Nonlinear arithmetic is allowed.
  Parsed q = WithRequires("x * x >= 0");
  EXPECT_EQ(CheckSat(*NegatedFormula(q.module.functions[0].requires_[0]), 5000).outcome,
            SmtOutcome::kProved);
}

TEST(SmtTest, RepeatedFormulasAreSolvedOnce) {
  Parsed p = Parse(
      Module("  invariant { 1 + 1 == 2 }\n"
             "  fn f(x: Int) -> Int\n    requires { x * 2 == x + x }\n  {\n    return x\n  }\n"
             "  fn g(x: Int) -> Int\n    requires { x * 2 == x + x }\n  {\n    return x\n  }\n"));
  SmtCache cache;
  ContractReport r = VerifyModule(p.module, {.mode = ContractMode::kStatic}, cache);
  EXPECT_EQ(r.static_verified, 4u);  // two invariants (prepended) and two requires
  EXPECT_EQ(cache.solved(), 2u);
  EXPECT_EQ(cache.hits(), 2u);
  EXPECT_EQ(SummaryLine(r), "  contracts: 4 statically verified, 0 runtime checks\n");
}

TEST(SmtTest, ATimeoutFallsBackToARuntimeCheck) {
  // x³ + y³ + z³ = 33 has a solution only with 17-digit numbers: Z3 does not find it in time
  // (its own timeout parameter deadlocks here; the watchdog's interrupt must hold).
  Parsed p = WithRequires("x * x * x + y * y * y + z * z * z != 33");
  SmtCache cache(/*timeout_ms=*/300);
  ContractReport r = VerifyModule(p.module, {.mode = ContractMode::kStatic}, cache);
  ASSERT_EQ(r.functions.size(), 1u);
  const ClauseResult& c = r.functions[0].clauses[0];
  EXPECT_EQ(c.verdict, ClauseVerdict::kRuntimeCheck) << c.model;
  EXPECT_FALSE(c.failure);
  EXPECT_EQ(r.runtime_checks, 1u);
  EXPECT_EQ(r.FirstFailure(), nullptr);
  // And the solver still answers afterwards.
  EXPECT_EQ(CheckSat("(declare-const x Int)(assert (> x 1))", 5000).outcome, SmtOutcome::kRefuted);
}

TEST(SmtTest, WithoutZ3EveryValidContractIsARuntimeCheck) {
  Parsed p = WithRequires("true");
  SmtCache cache;
  ContractReport r =
      VerifyModule(p.module, {.mode = ContractMode::kStatic, .use_smt = false}, cache);
  EXPECT_EQ(r.runtime_checks, 1u);
  EXPECT_EQ(r.static_verified, 0u);
  EXPECT_EQ(cache.solved(), 0u);
}

TEST(VerifyTest, OnlyTheFirstFailingFunctionIsReportedAndImplMethodsFollow) {
  Parsed p = Parse(Module(
      "  struct P { a: Int }\n"
      "  impl P {\n    fn m(self) -> Int\n      requires { \"z\" == 1 }\n    {\n      return 1\n"
      "    }\n  }\n"
      "  fn f(x: Int) -> Int\n    requires { x > 0 }\n    ensures { \"s\" == 1 }\n"
      "  {\n    return x\n  }\n"
      "  fn g(x: Int) -> Int\n    requires { \"t\" == 1 }\n  {\n    return x\n  }\n"));
  SmtCache cache;
  ContractReport r = VerifyModule(p.module, {.mode = ContractMode::kStatic}, cache);
  const FunctionContracts* f = r.FirstFailure();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->name, "f");
  ASSERT_EQ(f->clauses.size(), 2u);
  EXPECT_TRUE(f->clauses[0].failure);  // refuted
  EXPECT_TRUE(f->clauses[1].failure);  // invalid
  EXPECT_EQ(r.functions.size(), 1u);   // g and P_m are not verified after a failure

  Parsed ok = Parse(
      Module("  struct P { a: Int }\n"
             "  impl P {\n    fn m(self) -> Int\n      requires { true }\n    {\n      return 1\n"
             "    }\n  }\n  fn f(x: Int) -> Int\n    requires { true }\n  {\n    return x\n  }\n"));
  ContractReport r2 = VerifyModule(ok.module, {.mode = ContractMode::kRuntime}, cache);
  ASSERT_EQ(r2.functions.size(), 2u);
  EXPECT_EQ(r2.functions[0].name, "f");
  EXPECT_EQ(r2.functions[1].name, "P_m");
  EXPECT_EQ(SummaryLine(r2), "  contracts: 0 statically verified, 2 runtime checks\n");
}

// ---------------------------------------------------------------------------------------------
// docs/kodo-contracts.md §6: invariants and runtime checks.

TEST(InvariantTest, InvariantsArePrependedToEveryRequiresList) {
  Parsed p =
      Parse(Module("  invariant { 1 > 0 }\n  invariant { \"bad\" == 1 }\n"
                   "  fn f(x: Int) -> Int\n    requires { x > 0 }\n  {\n    return x\n  }\n"));
  SmtCache cache;
  ContractReport r = VerifyModule(p.module, {.mode = ContractMode::kRuntime}, cache);
  ASSERT_EQ(r.functions.size(), 1u);
  const FunctionContracts& f = r.functions[0];
  ASSERT_EQ(f.clauses.size(), 3u);
  EXPECT_TRUE(f.clauses[0].from_invariant);
  EXPECT_EQ(f.clauses[0].number, 1u);
  EXPECT_EQ(f.clauses[1].verdict, ClauseVerdict::kInvalid);  // the second invariant
  EXPECT_EQ(f.clauses[2].number, 3u);                        // `x > 0` is requires clause 3
  EXPECT_FALSE(f.clauses[2].from_invariant);
}

TEST(RuntimePlanTest, MessagesNumberInvariantsFirstAndRefinedLetsAreChecked) {
  Parsed p = Parse(Module(
      "  type Port = Int requires { self > 0 && self < 65535 }\n"
      "  type Plain = Int\n"
      "  invariant { true }\n"
      "  fn f(x: Int) -> Int\n    requires { x > 0 }\n    ensures { result > 0 }\n"
      "  {\n    let p: Port = x\n    let q: Plain = x\n    if x > 1 {\n      let r: Port = 2\n"
      "    }\n    return p\n  }\n"));
  std::vector<RuntimeCheck> plan = PlanRuntimeChecks(p.module);
  ASSERT_EQ(plan.size(), 5u);
  EXPECT_EQ(plan[0].message, "requires clause 1 failed in function `f`");
  EXPECT_EQ(plan[1].message, "requires clause 2 failed in function `f`");
  EXPECT_EQ(plan[2].message, "ensures clause 1 failed in function `f`");
  EXPECT_EQ(plan[3].kind, RuntimeCheck::Kind::kRefinement);
  EXPECT_EQ(plan[3].message, "refinement constraint failed: `p` does not satisfy type `Port`");
  EXPECT_EQ(plan[4].message, "refinement constraint failed: `r` does not satisfy type `Port`");
  EXPECT_EQ(plan[4].alias, "Port");
}

}  // namespace
}  // namespace trove::kodo::contracts

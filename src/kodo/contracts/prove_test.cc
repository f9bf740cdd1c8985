// `--contracts=prove`: a test per rule of the fragment (docs/kodo-contracts.md §4), each with a
// proof and, where a rule can fail, a counter-example that is then run with the concrete
// evaluator to show the violation.
#include "kodo/contracts/prove.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kodo/contracts/contracts.h"
#include "kodo/parse/parser.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::contracts {
namespace {

struct Parsed {
  std::unique_ptr<SourceBuffer> source;
  ast::Module module;
};

Parsed Parse(const std::string& body) {
  const std::string text = "module m {\n  meta { purpose: \"t\" }\n" + body + "\n}\n";
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

const ast::Function& Fn(const Parsed& p, std::string_view name) {
  for (const ast::Function& f : p.module.functions) {
    if (f.name == name) return f;
  }
  ADD_FAILURE() << "no function " << name;
  return p.module.functions[0];
}

// Proves every ensures clause of `name`.
std::vector<Proof> ProveAll(const Parsed& p, std::string_view name) {
  const ast::Function& f = Fn(p, name);
  std::vector<const ast::Expr*> goals;
  for (const ast::Expr& e : f.ensures) goals.push_back(&e);
  SmtCache cache(/*timeout_ms=*/20000);  // a loaded machine: bit-vector proofs take seconds
  return ProveEnsures(p.module, f, goals, cache);
}

// Runs `name` on the counter-example of `proof` and returns whether ensures clause `clause`
// (0-based) fails on the value it returns: the violation, shown by execution.
bool CounterExampleViolates(const Parsed& p, std::string_view name, const Proof& proof,
                            std::size_t clause) {
  const ast::Function& f = Fn(p, name);
  std::vector<Value> args;
  std::map<std::string, Value> env;
  for (const auto& [param, text] : proof.values) {
    std::optional<Value> v = ParseValue(text);
    EXPECT_TRUE(v) << text;
    if (!v) return false;
    args.push_back(*v);
    env[param] = *v;
  }
  std::optional<Value> result = RunFunction(p.module, f, args);
  EXPECT_TRUE(result) << "the counter-example run did not return";
  if (!result) return false;
  env["result"] = *result;
  std::optional<Value> holds = EvalContract(f.ensures[clause], env);
  return holds && holds->is_bool && !holds->b;
}

void ExpectProved(const Proof& p) {
  EXPECT_EQ(p.outcome, SmtOutcome::kProved) << p.reason << p.model;
}

TEST(ProveTest, StraightLineLetAndArithmetic) {
  Parsed p = Parse(
      "  fn f(x: Int) -> Int\n    requires { x >= 0 && x < 1000 }\n    ensures { result > x }\n"
      "  {\n    let y = x * 2\n    let z = y + 1\n    return z - x\n  }\n"
      "  fn g(x: Int) -> Int\n    ensures { result > x }\n  {\n    let y = x * 2\n"
      "    return y + 1 - x\n  }\n");
  ExpectProved(ProveAll(p, "f")[0]);
  // Without the requires, 64-bit wrapping breaks it at x = MAX.
  Proof g = ProveAll(p, "g")[0];
  ASSERT_EQ(g.outcome, SmtOutcome::kRefuted);
  EXPECT_EQ(g.values[0].second, "9223372036854775807");
  EXPECT_TRUE(CounterExampleViolates(p, "g", g, 0));
}

TEST(ProveTest, IfStatementsAndEarlyReturns) {
  Parsed p = Parse(
      "  fn abs(x: Int) -> Int\n    requires { x > -1000000 }\n    ensures { result >= 0 }\n"
      "    ensures { result == x || result == -x }\n"
      "  {\n    if x < 0 {\n      return -x\n    }\n    return x\n  }\n"
      "  fn bad(x: Int) -> Int\n    ensures { result >= 0 }\n"
      "  {\n    if x < -5 {\n      return -x\n    }\n    return x\n  }\n");
  std::vector<Proof> abs = ProveAll(p, "abs");
  ExpectProved(abs[0]);
  ExpectProved(abs[1]);
  Proof bad = ProveAll(p, "bad")[0];
  ASSERT_EQ(bad.outcome, SmtOutcome::kRefuted);
  EXPECT_TRUE(CounterExampleViolates(p, "bad", bad, 0));
}

TEST(ProveTest, AssignmentsMergeAcrossBranches) {
  Parsed p = Parse(
      "  fn clamp(x: Int) -> Int\n    ensures { result <= 10 }\n    ensures { result >= 0 }\n"
      "  {\n    let mut y = x\n    if y > 10 {\n      y = 10\n    } else {\n      if y < 1 {\n"
      "        y = 1\n      }\n    }\n    return y\n  }\n");
  std::vector<Proof> proofs = ProveAll(p, "clamp");
  ExpectProved(proofs[0]);
  ExpectProved(proofs[1]);
}

TEST(ProveTest, IfExpressionsAsValues) {
  Parsed p = Parse(
      "  fn max(a: Int, b: Int) -> Int\n    ensures { result >= a && result >= b }\n"
      "    ensures { result == a }\n"
      "  {\n    let m = if a > b { a } else { b }\n    return m\n  }\n");
  std::vector<Proof> proofs = ProveAll(p, "max");
  ExpectProved(proofs[0]);
  ASSERT_EQ(proofs[1].outcome, SmtOutcome::kRefuted);
  EXPECT_TRUE(CounterExampleViolates(p, "max", proofs[1], 1));
}

TEST(ProveTest, CallsAssumeTheCalleesContracts) {
  Parsed p = Parse(
      "  fn inc(x: Int) -> Int\n    requires { x < 100 }\n    ensures { result == x + 1 }\n"
      "  {\n    return x + 1\n  }\n"
      "  fn twice(x: Int) -> Int\n    requires { x < 50 }\n    ensures { result == x + 2 }\n"
      "  {\n    return inc(inc(x))\n  }\n"
      "  fn opaque(x: Int) -> Int {\n    return x\n  }\n"
      "  fn uses_opaque(x: Int) -> Int\n    ensures { result == x }\n"
      "  {\n    return opaque(x)\n  }\n");
  ExpectProved(ProveAll(p, "twice")[0]);
  // A callee without ensures promises nothing: the call's result is any value.
  Proof o = ProveAll(p, "uses_opaque")[0];
  EXPECT_EQ(o.outcome, SmtOutcome::kRefuted);
}

TEST(ProveTest, RequiresRefinementsAndInvariantsAreAssumptions) {
  Parsed p = Parse(
      "  type Small = Int requires { self >= 0 && self < 100 }\n"
      "  invariant { 2 > 1 }\n"
      "  fn sq(n: Small) -> Int\n    ensures { result >= 0 && result < 10000 }\n"
      "  {\n    return n * n\n  }\n"
      "  fn dbl(n: Int) -> Int\n    ensures { result >= n }\n  {\n    return n + n\n  }\n");
  ExpectProved(ProveAll(p, "sq")[0]);
  Proof any = ProveAll(p, "dbl")[0];
  ASSERT_EQ(any.outcome, SmtOutcome::kRefuted);  // no refinement: n < 0 (or wrapping) breaks it
  EXPECT_TRUE(CounterExampleViolates(p, "dbl", any, 0));
}

TEST(ProveTest, DivisionTruncatesAndATrapNeverReturns) {
  Parsed p = Parse(
      "  fn half(x: Int) -> Int\n    ensures { x < 0 || result >= 0 }\n"
      "  {\n    return x / 2\n  }\n"
      "  fn rem(x: Int, y: Int) -> Int\n    ensures { y != 0 }\n"
      "  {\n    return x % y\n  }\n"
      "  fn neg_rem(x: Int) -> Int\n    ensures { result >= 0 }\n  {\n    return x % 3\n  }\n");
  ExpectProved(ProveAll(p, "half")[0]);
  ExpectProved(ProveAll(p, "rem")[0]);  // y == 0 traps: no return to check
  // `%` truncates toward zero (unlike upstream's Euclidean `mod` in static mode).
  Proof n = ProveAll(p, "neg_rem")[0];
  ASSERT_EQ(n.outcome, SmtOutcome::kRefuted);
  EXPECT_TRUE(CounterExampleViolates(p, "neg_rem", n, 0));
}

TEST(ProveTest, BoolResultsAndShortCircuit) {
  Parsed p = Parse(
      "  fn safe(x: Int, y: Int) -> Bool\n    ensures { result == (y != 0 && x / y > 1) }\n"
      "  {\n    return y != 0 && x / y > 1\n  }\n");
  ExpectProved(ProveAll(p, "safe")[0]);
}

TEST(ProveTest, OutsideTheFragmentIsARuntimeCheck) {
  Parsed p = Parse(
      "  fn loop(x: Int) -> Int\n    ensures { result >= 0 }\n"
      "  {\n    let mut i = 0\n    while i < x {\n      i = i + 1\n    }\n    return i\n  }\n"
      "  fn text(s: String) -> Int\n    ensures { result >= 0 }\n  {\n    return s.length()\n"
      "  }\n");
  Proof l = ProveAll(p, "loop")[0];
  EXPECT_EQ(l.outcome, SmtOutcome::kUnknown);
  EXPECT_NE(l.reason.find("outside the prove fragment"), std::string::npos) << l.reason;
  EXPECT_EQ(ProveAll(p, "text")[0].outcome, SmtOutcome::kUnknown);
}

TEST(ProveTest, ModeReportsEachClauseWithItsSpan) {
  Parsed p = Parse(
      "  fn f(x: Int) -> Int\n    requires { x > 0 }\n    ensures { result > 0 }\n"
      "    ensures { result > 1 }\n  {\n    return x\n  }\n");
  SmtCache cache;
  ContractReport r = VerifyModule(p.module, {.mode = ContractMode::kProve}, cache);
  ASSERT_EQ(r.functions.size(), 1u);
  const FunctionContracts& f = r.functions[0];
  ASSERT_EQ(f.clauses.size(), 3u);
  EXPECT_EQ(f.clauses[0].verdict, ClauseVerdict::kRuntimeCheck);  // requires: checked on entry
  EXPECT_EQ(f.clauses[1].verdict, ClauseVerdict::kVerified);
  EXPECT_EQ(f.clauses[2].verdict, ClauseVerdict::kRefuted);
  EXPECT_TRUE(f.clauses[2].failure);
  const ast::Span s = f.clauses[2].span;
  EXPECT_EQ(p.source->text().substr(s.start, s.end - s.start), "result > 1");
  EXPECT_EQ(r.static_verified, 1u);
  EXPECT_EQ(r.runtime_checks, 1u);
  const std::string lines = FailureLines(f);
  EXPECT_NE(lines.find("contract error: ensures clause 2 of `f` refuted at Span { start: " +
                       std::to_string(s.start)),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("counter-example: x = 1"), std::string::npos) << lines;
}

}  // namespace
}  // namespace trove::kodo::contracts

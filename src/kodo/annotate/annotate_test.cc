#include "kodo/annotate/annotate.h"

#include <gtest/gtest.h>

#include <string>

#include "kodo/parse/parser.h"

namespace trove::kodo::annotate {
namespace {

ast::Module Parse(const std::string& text) {
  Result<SourceBuffer> buffer = SourceBuffer::Create(0, "t.ko", text);
  EXPECT_TRUE(buffer.ok());
  Result<parse::ParseResult> parsed = parse::ParseModule(*buffer);
  EXPECT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->ok()) << (parsed->diagnostics.empty() ? "" : parsed->diagnostics[0].message);
  return std::move(*parsed->module);
}

std::string Module(const std::string& body) {
  return "module m {\n    meta { purpose: \"t\" }\n" + body + "}\n";
}

TEST(LineOfTest, CountsNewlinesBefore) {
  EXPECT_EQ(LineOf("a\nb\nc", 0), 1u);
  EXPECT_EQ(LineOf("a\nb\nc", 2), 2u);
  EXPECT_EQ(LineOf("a\nb\nc", 4), 3u);
  EXPECT_EQ(LineOf("a\n", 99), 2u);  // clamped
}

TEST(AnnotateForAgentTest, DivisorAndListIndexOncePerFunction) {
  const std::string src = Module(
      "    fn divide(a: Int, b: Int) -> Int {\n"
      "        let q = a / b\n"
      "        return q % b\n"
      "    }\n"
      "    fn pick(xs: List<Int>, i: Int) -> Int {\n"
      "        list_set(xs, i, 0)\n"
      "        return list_get(xs, i)\n"
      "    }\n");
  ast::Module m = Parse(src);
  AgentAnnotation a = AnnotateForAgent(m, src);
  ASSERT_EQ(a.suggestions.size(), 2u);
  EXPECT_EQ(a.suggestions[0].function, "divide");
  EXPECT_EQ(a.suggestions[0].line, 3u);
  EXPECT_EQ(a.suggestions[0].expression, "b != 0");
  EXPECT_EQ(a.suggestions[0].reason, "parameter `b` used as divisor");
  EXPECT_EQ(a.suggestions[1].function, "pick");
  EXPECT_EQ(a.suggestions[1].line, 7u);
  EXPECT_EQ(a.suggestions[1].expression, "i >= 0");
  EXPECT_EQ(a.suggestions[1].reason, "parameter `i` used as list index");
  EXPECT_TRUE(a.uncovered.empty());
  EXPECT_EQ(a.total_functions, 2u);
  EXPECT_EQ(a.already_annotated, 0u);
}

TEST(AnnotateForAgentTest, LocalsAndLiteralsAreNotParameters) {
  const std::string src = Module(
      "    fn f(a: Int) -> Int {\n"
      "        let d = 3\n"
      "        return a / d + a / 2\n"
      "    }\n");
  ast::Module m = Parse(src);
  AgentAnnotation a = AnnotateForAgent(m, src);
  EXPECT_TRUE(a.suggestions.empty());
  ASSERT_EQ(a.uncovered.size(), 1u);
  EXPECT_EQ(a.uncovered[0].name, "f");
}

TEST(AnnotateForAgentTest, FindsDivisorsInNestedPlaces) {
  const std::string src = Module(
      "    fn f(a: Int, b: Int, c: Int, d: Int) -> Int {\n"
      "        if a > 0 { return 1 / b }\n"
      "        while true { let x = match a { _ => a % c } }\n"
      "        let g = |x: Int| -> Int { x / d }\n"
      "        return 0\n"
      "    }\n");
  ast::Module m = Parse(src);
  AgentAnnotation a = AnnotateForAgent(m, src);
  ASSERT_EQ(a.suggestions.size(), 3u);
  EXPECT_EQ(a.suggestions[0].expression, "b != 0");
  EXPECT_EQ(a.suggestions[1].expression, "c != 0");
  EXPECT_EQ(a.suggestions[2].expression, "d != 0");
}

TEST(AnnotateForAgentTest, AnnotatedMainAndUncoveredWithSource) {
  const std::string src = Module(
      "    fn safe(a: Int, b: Int) -> Int\n"
      "        requires { b != 0 }\n"
      "    {\n"
      "        return a / b\n"
      "    }\n"
      "    fn process(amount: Int) -> Int {\n"
      "        return amount * 2\n"
      "    }\n"
      "    fn noop() {\n"
      "    }\n"
      "    fn main() -> Int {\n"
      "        return 10 / 2\n"
      "    }\n");
  ast::Module m = Parse(src);
  AgentAnnotation a = AnnotateForAgent(m, src);
  EXPECT_TRUE(a.suggestions.empty());
  EXPECT_EQ(a.total_functions, 3u);
  EXPECT_EQ(a.already_annotated, 1u);
  ASSERT_EQ(a.uncovered.size(), 2u);
  const UncoveredFunction& p = a.uncovered[0];
  EXPECT_EQ(p.name, "process");
  EXPECT_EQ(p.line, 8u);
  ASSERT_EQ(p.params.size(), 1u);
  EXPECT_EQ(p.params[0].name, "amount");
  EXPECT_EQ(p.params[0].type, "Named(\"Int\")");
  EXPECT_EQ(p.return_type, "Named(\"Int\")");
  EXPECT_EQ(p.source, "fn process(amount: Int) -> Int {\n        return amount * 2\n    }");
  EXPECT_EQ(a.uncovered[1].name, "noop");
  EXPECT_EQ(a.uncovered[1].return_type, "Unit");
  EXPECT_TRUE(a.uncovered[1].params.empty());
}

TEST(SuggestContractsTest, FiveHeuristics) {
  const std::string src = Module(
      "    fn divide(a: Int, b: Int) -> Int {\n"
      "        return a / b\n"
      "    }\n"
      "    fn get_item(items: List<Int>, idx: Int) -> Int {\n"
      "        return list_get(items, idx)\n"
      "    }\n"
      "    fn safe_op(x: Int) -> Int {\n"
      "        if x > 0 {\n"
      "            return x\n"
      "        }\n"
      "        return 0\n"
      "    }\n"
      "    fn fib(n: Int) -> Int {\n"
      "        if n <= 1 {\n"
      "            return n\n"
      "        }\n"
      "        return fib(n - 1) + fib(n - 2)\n"
      "    }\n"
      "    fn identity(x: Int) -> Int {\n"
      "        return x\n"
      "    }\n"
      "    fn main() -> Int {\n"
      "        return 10 / 2\n"
      "    }\n");
  ast::Module m = Parse(src);
  std::vector<CliSuggestion> s = SuggestContracts(m, src);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].function, "divide");
  EXPECT_EQ(s[0].expression, "b != 0");
  EXPECT_EQ(s[0].line, 3u);
  EXPECT_EQ(s[1].expression, "idx >= 0");
  EXPECT_EQ(s[1].reason, "parameter `idx` used as list index");
  EXPECT_EQ(s[2].function, "safe_op");
  EXPECT_EQ(s[2].expression, "x > 0");
  EXPECT_EQ(s[2].reason, "body checks `x > 0` \u2014 likely a precondition");
  EXPECT_EQ(s[3].function, "fib");
  EXPECT_EQ(s[3].expression, "n >= 0");
  EXPECT_EQ(s[3].reason, "recursive function with base case guard on `n`");
  EXPECT_EQ(s[4].function, "identity");
  EXPECT_EQ(s[4].kind, ContractKind::kEnsures);
  EXPECT_EQ(s[4].expression, "result == x");
  for (const CliSuggestion& c : s) EXPECT_FALSE(c.verified);
}

TEST(SuggestContractsTest, ExistingRequiresCoverTheSuggestion) {
  const std::string src = Module(
      "    fn divide(a: Int, b: Int) -> Int\n"
      "        requires { b != 0 }\n"
      "    {\n"
      "        return a / b\n"
      "    }\n"
      "    fn add(a: Int, b: Int) -> Int {\n"
      "        return a + b\n"
      "    }\n");
  ast::Module m = Parse(src);
  EXPECT_TRUE(SuggestContracts(m, src).empty());
}

}  // namespace
}  // namespace trove::kodo::annotate

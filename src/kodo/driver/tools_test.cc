#include "kodo/driver/tools.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <string>

#include "kodo/driver/front.h"

namespace trove::kodo::driver {
namespace {

using nlohmann::json;

const std::string kValid =
    "module test {\n    meta { purpose: \"test\" }\n    fn main() -> Int {\n        return 42\n"
    "    }\n}\n";
const std::string kTypeError =
    "module test {\n    meta { purpose: \"test\" }\n    fn main() -> Int {\n        return true\n"
    "    }\n}\n";

std::string SpanText(std::size_t start, std::size_t end) {
  return fmt::format("Span {{ start: {}, end: {} }}", start, end);
}

TEST(CompileSourceTest, OutcomesAndWhatRan) {
  Result<Compiled> ok = CompileSource(kValid, "a.ko");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->outcome, Outcome::kOk);
  EXPECT_TRUE(ok->type_checked);
  EXPECT_EQ(ok->module->name, "test");
  EXPECT_EQ(ok->source.name(), "a.ko");

  Result<Compiled> bad = CompileSource(kTypeError);
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->outcome, Outcome::kTypeErrors);
  ASSERT_EQ(bad->diagnostics.size(), 1u);
  EXPECT_EQ(bad->diagnostics[0].code(), "E0200");

  Result<Compiled> parse = CompileSource("module m {");
  ASSERT_TRUE(parse.ok());
  EXPECT_EQ(parse->outcome, Outcome::kParseFailed);
  EXPECT_FALSE(parse->module.has_value());
  EXPECT_FALSE(parse->type_checked);
  EXPECT_EQ(parse->diagnostics[0].code(), "E0101");

  // Parse only: a type error is not looked for.
  Result<Compiled> unchecked = CompileSource(kTypeError, "t", FrontOptions{.type_check = false});
  ASSERT_TRUE(unchecked.ok());
  EXPECT_TRUE(unchecked->ok());
  EXPECT_FALSE(unchecked->type_checked);
}

TEST(CompileSourceTest, BoundsAreStatusesNotCrashes) {
  FrontOptions small;
  small.parse.lex.max_source_bytes = 16;
  Result<Compiled> big = CompileSource(kValid, "big.ko", small);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), base::StatusCode::kResourceExhausted);

  // Deep nesting is a diagnostic, not a stack overflow.
  std::string deep = "module m {\n meta { purpose: \"p\" }\n fn f() -> Int { return " +
                     std::string(5000, '(') + "1" + std::string(5000, ')') + " }\n}\n";
  Result<Compiled> nested = CompileSource(deep);
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(nested->outcome, Outcome::kParseFailed);
}

TEST(CheckToolTest, UpstreamObjects) {
  Result<json> ok = CheckTool(kValid);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->dump(), R"j({"errors":[],"module":"test","status":"ok"})j");

  Result<json> failed = CheckTool(kTypeError);
  ASSERT_TRUE(failed.ok());
  // The span of a `return` mismatch is the whole statement; this is the example of docs/kodo.md
  // §3.4 (74..85).
  const std::size_t at = kTypeError.find("return true");
  const std::size_t end = at + std::string("return true").size();
  json error = (*failed)["errors"][0];
  EXPECT_EQ((*failed)["phase"], "types");
  EXPECT_EQ((*failed)["status"], "failed");
  EXPECT_EQ(error["code"], "E0200");
  EXPECT_EQ(error["span"], json({{"end", end}, {"start", at}}));
  EXPECT_EQ(error["message"],
            "type mismatch: expected `Int`, found `Bool` at " + SpanText(at, end));
  EXPECT_EQ(at, 74u);
  EXPECT_FALSE(error.contains("severity"));

  Result<json> parse = CheckTool("module m {");
  ASSERT_TRUE(parse.ok());
  EXPECT_EQ(parse->dump(),
            R"j({"errors":[{"code":"E0101","message":"unexpected end of input, expected RBrace",)j"
            R"j("span":null}],"phase":"parse","status":"failed"})j");
}

TEST(CheckToolTest, ImportsAreIgnored) {
  // Upstream's MCP front half loads no import: the line parses, the names it would bring are
  // unknown (issue 5, decision 5).
  std::string src =
      "module m {\n    import utils.strings\n    meta { purpose: \"p\" }\n"
      "    fn main() -> Int {\n        return helper(1)\n    }\n}\n";
  Result<json> r = CheckTool(src);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ((*r)["status"], "failed") << r->dump();
  EXPECT_EQ((*r)["errors"][0]["code"], "E0201");
}

TEST(FixToolTest, PatchesOfEveryError) {
  Result<json> none = FixTool(kValid);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->dump(),
            R"j({"message":"no errors to fix","patches":[],"repair_plans":[],"status":"ok"})j");
  const std::string typo =
      "module m {\n    meta { purpose: \"p\" }\n    fn main() -> Int {\n"
      "        let total = 1\n        return totl\n    }\n}\n";
  Result<json> some = FixTool(typo);
  ASSERT_TRUE(some.ok());
  EXPECT_EQ((*some)["status"], "errors_found");
  EXPECT_EQ((*some)["error_count"], 1);
  const std::size_t at = typo.find("totl");
  EXPECT_EQ((*some)["patches"].dump(), json::array({{{"description", "rename to `total`"},
                                                     {"end_offset", at + 4},
                                                     {"error_code", "E0201"},
                                                     {"replacement", "total"},
                                                     {"start_offset", at}}})
                                           .dump());
  // E0201 also has a one-step plan: declare the name before its use.
  ASSERT_EQ((*some)["repair_plans"].size(), 1u);
  const json& plan = (*some)["repair_plans"][0];
  EXPECT_EQ(plan["error_code"], "E0201");
  EXPECT_EQ(plan["message"], "undefined type `totl` at " + SpanText(at, at + 4));
  EXPECT_EQ(plan["steps"][0]["id"], 0);
  // The declaration goes before the statement, at the start of its line.
  EXPECT_EQ(plan["steps"][0]["patches"][0]["start_offset"], typo.find("return totl"));
}

// Issue 17: kodo.fix hands agents only verified patches. Every patch it lists, applied alone,
// gives a program that parses and no longer reports that error; a patch that fails (here E0224,
// whose fix would need the function's return type changed) is listed as a repair plan whose
// first step says why it is not automatic.
TEST(FixToolTest, ListsOnlyVerifiedPatches) {
  const std::string src =
      "module m {\n    meta { purpose: \"p\" }\n"
      "    struct Point { x: Int, y: Int }\n"
      "    fn parse(s: String) -> Result<Int, String> {\n        return Ok(1)\n    }\n"
      "    fn not_result() -> Int {\n        let v = parse(\"1\")?\n        return v\n    }\n"
      "    fn make() -> Point {\n        return Point { x: 1 }\n    }\n}\n";
  Result<json> fix = FixTool(src);
  ASSERT_TRUE(fix.ok());
  EXPECT_EQ((*fix)["error_count"], 2);
  ASSERT_EQ((*fix)["patches"].size(), 1u) << fix->dump(2);
  const json& patch = (*fix)["patches"][0];
  EXPECT_EQ(patch["error_code"], "E0214");
  std::string patched = src;
  patched.replace(patch["start_offset"].get<std::size_t>(),
                  patch["end_offset"].get<std::size_t>() - patch["start_offset"].get<std::size_t>(),
                  patch["replacement"].get<std::string>());
  Result<json> again = CheckTool(patched);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)["phase"], "types") << again->dump(2);
  for (const json& e : (*again)["errors"]) EXPECT_NE(e["code"], "E0214") << e.dump();
  bool withheld = false;
  for (const json& plan : (*fix)["repair_plans"]) {
    if (plan["error_code"] != "E0224") continue;
    withheld = true;
    EXPECT_NE(plan["steps"][0]["description"].get<std::string>().find(
                  "not offered as an automatic fix because the patched file does not parse"),
              std::string::npos)
        << plan.dump(2);
    EXPECT_EQ(plan["steps"][0]["patches"].size(), 1u);
  }
  EXPECT_TRUE(withheld) << fix->dump(2);
}

TEST(DescribeToolTest, FunctionsTypesAndMetaAsUpstreamPrintsThem) {
  const std::string src =
      "module pay {\n"
      "    meta { purpose: \"p\", version: \"1\", purpose: \"last\" }\n"
      "    @confidence(0.9)\n"
      "    fn div(a: Int, b: Int) -> Int\n"
      "        requires { b != 0 }\n"
      "    {\n"
      "        return a / b\n"
      "    }\n"
      "    async fn tick() {\n"
      "    }\n"
      "    struct Point { x: Int, y: Float64 }\n"
      "    enum Color { Red, Green }\n"
      "}\n";
  Result<json> r = DescribeTool(src);
  ASSERT_TRUE(r.ok());
  const std::size_t c = src.find("0.9");
  const std::size_t b = src.find("b != 0");
  json expected = {{"functions",
                    {{{"annotations",
                       {{{"args", {"Positional(FloatLit(0.9, " + SpanText(c, c + 3) + "))"}},
                         {"name", "confidence"}}}},
                      {"contracts",
                       {{{"expr", "BinaryOp { left: Ident(\"b\", " + SpanText(b, b + 1) +
                                      "), op: Ne, right: IntLit(0, " + SpanText(b + 5, b + 6) +
                                      "), span: " + SpanText(b, b + 6) + " }"},
                         {"kind", "requires"}}}},
                      {"is_async", false},
                      {"name", "div"},
                      {"params",
                       {{{"name", "a"}, {"type", "Named(\"Int\")"}},
                        {{"name", "b"}, {"type", "Named(\"Int\")"}}}},
                      {"return_type", "Named(\"Int\")"}},
                     {{"annotations", json::array()},
                      {"contracts", json::array()},
                      {"is_async", true},
                      {"name", "tick"},
                      {"params", json::array()},
                      {"return_type", "Unit"}}}},
                   {"meta", {{"purpose", "last"}, {"version", "1"}}},
                   {"module", "pay"},
                   {"types",
                    {{{"fields",
                       {{{"name", "x"}, {"type", "Named(\"Int\")"}},
                        {{"name", "y"}, {"type", "Named(\"Float64\")"}}}},
                      {"name", "Point"}}}}};
  EXPECT_EQ(r->dump(), expected.dump());

  Result<json> no_meta = DescribeTool("module m {\n}\n");
  ASSERT_TRUE(no_meta.ok());
  EXPECT_TRUE((*no_meta)["meta"].is_null());
}

TEST(AnnotateToolTest, ShapeAndParseFailure) {
  const std::string src =
      "module payment {\n    meta { purpose: \"p\" }\n"
      "    fn divide(a: Int, b: Int) -> Int {\n        return a / b\n    }\n"
      "    fn process(amount: Int) -> Int {\n        return amount * 2\n    }\n"
      "    fn main() {\n    }\n}\n";
  Result<json> r = AnnotateTool(src);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["status"], "ok");
  EXPECT_EQ((*r)["module"], "payment");
  EXPECT_EQ((*r)["heuristic_suggestions"].dump(),
            R"j([{"expression":"b != 0","function":"divide","kind":"requires","line":3,)j"
            R"j("reason":"parameter `b` used as divisor"}])j");
  EXPECT_EQ((*r)["uncovered_functions"].dump(),
            R"j([{"line":6,"name":"process","params":[{"name":"amount","type":"Named(\"Int\")"}],)j"
            R"j("return_type":"Named(\"Int\")","source":"fn process(amount: Int) -> Int {\n)j"
            R"j(        return amount * 2\n    }"}])j");
  EXPECT_EQ((*r)["summary"].dump(),
            R"j({"already_annotated":0,"heuristic_covered":1,"needs_agent_review":1,)j"
            R"j("total_functions":2})j");
  EXPECT_TRUE((*r)["hint"].is_string());

  Result<json> parse = AnnotateTool("module m {");
  ASSERT_TRUE(parse.ok());
  EXPECT_EQ(parse->dump(),
            R"j({"errors":[{"message":"unexpected end of input, expected RBrace"}],)j"
            R"j("phase":"parse","status":"failed"})j");
}

TEST(BuildToolTest, FailuresAsObjectsAndNoFakeSuccess) {
  Result<json> ok = BuildTool(kValid);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->dump(), R"j({"function_count":1,"message":"compilation successful (through MIR)",)j"
                        R"j("module":"test","phase":"mir","status":"ok"})j");
  // Lowered the CLI way: a method call works and the lifted method is counted.
  Result<json> methods = BuildTool(
      "module m {\n    meta { purpose: \"m\" }\n    struct P { x: Int }\n"
      "    impl P { fn get(self) -> Int { return self.x } }\n"
      "    fn main() { let p = P { x: 1 }\n print_int(p.get()) }\n}\n");
  ASSERT_TRUE(methods.ok());
  EXPECT_EQ((*methods)["status"], "ok");
  EXPECT_EQ((*methods)["function_count"], 2);
  Result<json> failed = BuildTool(kTypeError);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ((*failed)["phase"], "types");
}

// kodo.confidence_report (docs/kodo.md §3.4): the fail-fast checker, then the report.
TEST(ConfidenceReportToolTest, ShapesOfEachOutcome) {
  Result<json> ok = ConfidenceReportTool(kValid);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->dump(),
            R"j({"functions":[{"callees":[],"computed_confidence":1.0,"declared_confidence":1.0,)j"
            R"j("name":"main"}],"overall_confidence":1.0,"status":"ok"})j");
  Result<json> propagated = ConfidenceReportTool(
      "module m {\n    meta { purpose: \"p\" }\n    fn main() {\n        helper()\n    }\n"
      "    @confidence(0.5) @reviewed_by(human: \"ada\")\n    fn helper() {}\n}\n");
  ASSERT_TRUE(propagated.ok());
  EXPECT_EQ((*propagated)["overall_confidence"], 0.5);
  EXPECT_EQ((*propagated)["functions"][0]["computed_confidence"], 0.5);
  EXPECT_EQ((*propagated)["functions"][0]["callees"], json::array({"helper"}));
  // A type error: its message only, from the fail-fast checker.
  Result<json> failed = ConfidenceReportTool(kTypeError);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->size(), 2u);
  EXPECT_EQ((*failed)["status"], "failed");
  EXPECT_EQ((*failed)["error"].get<std::string>().rfind("type mismatch: expected `Int`", 0), 0u);
  // A policy error is a type error here too (E0260 without a human review).
  Result<json> policy = ConfidenceReportTool(
      "module m {\n    meta { purpose: \"p\" }\n    @confidence(0.5)\n    fn f() {}\n}\n");
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(
      (*policy)["error"].get<std::string>().rfind("function `f` has @confidence(0.5) < 0.8", 0),
      0u);
  Result<json> parse = ConfidenceReportTool("module m {");
  ASSERT_TRUE(parse.ok());
  EXPECT_EQ((*parse)["phase"], "parse");
}

TEST(ExplainToolTest, ClassifiesByPrefix) {
  EXPECT_EQ(ExplainTool("E0101")["title"], "Parser Error");
  EXPECT_EQ(ExplainTool("E0799")["title"], "Unknown Error Code");
  EXPECT_EQ(ExplainTool("E0200")["hint"],
            "Use `kodoc explain <code>` for detailed examples and fix suggestions.");
}

}  // namespace
}  // namespace trove::kodo::driver

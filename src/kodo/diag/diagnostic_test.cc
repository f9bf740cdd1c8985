#include "kodo/diag/diagnostic.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "kodo/diag/explain.h"
#include "kodo/diag/from_parse.h"
#include "kodo/diag/mcp_json.h"
#include "kodo/parse/parser.h"

namespace trove::kodo::diag {
namespace {

TEST(KindsTest, CodesAreUniqueAndFindable) {
  std::set<std::string_view> codes;
  for (const KindInfo& info : AllKinds()) {
    EXPECT_TRUE(codes.insert(info.code).second) << info.code;
    ASSERT_TRUE(FindKind(info.code).has_value()) << info.code;
    EXPECT_EQ(*FindKind(info.code), info.kind);
    EXPECT_EQ(&Info(info.kind), &info);
  }
  EXPECT_FALSE(FindKind("E9999").has_value());
  EXPECT_FALSE(FindKind("e0200").has_value());
}

TEST(KindsTest, CoversTheWholeErrorIndex) {
  // docs/kodo.md §6.1, every code listed.
  for (std::string_view code :
       {"E0001", "E0002", "E0100", "E0101", "E0102", "E0103", "E0104", "E0200", "E0201", "E0202",
        "E0203", "E0204", "E0205", "E0210", "E0211", "E0212", "E0213", "E0214", "E0215", "E0216",
        "E0217", "E0218", "E0219", "E0220", "E0221", "E0222", "E0223", "E0224", "E0225", "E0226",
        "E0227", "E0230", "E0231", "E0232", "E0233", "E0234", "E0235", "E0240", "E0241", "E0242",
        "E0243", "E0244", "E0245", "E0246", "E0247", "E0248", "E0250", "E0251", "E0252", "E0253",
        "E0260", "E0261", "E0262", "E0263", "E0264", "E0270", "E0280", "E0281", "E0282", "E0283",
        "E0310", "E0350", "E0300", "E0301", "E0302", "E0303", "E0400", "E0401", "E0402", "E0403",
        "E0500", "E0600", "E0700", "E0701", "E0702", "E0703", "E0704"}) {
    EXPECT_TRUE(FindKind(code).has_value()) << code;
  }
}

TEST(DiagnosticTest, MessageTemplatesAndSuffix) {
  Diagnostic d = Make(Kind::kE0214, SourceRange{0, 301, 316}, "y", "Point");
  EXPECT_EQ(d.message, "missing field `y` in struct `Point` at Span { start: 301, end: 316 }");
  EXPECT_EQ(d.code(), "E0214");
  EXPECT_EQ(d.fixability(), Fixability::kManual);
  d.suggestion = "add `y: <value>` to the struct literal";
  EXPECT_EQ(d.fixability(), Fixability::kAssisted);
  d.fix_patch = FixPatch{"add missing field `y`", 316, 316, "\n    y: TODO,"};
  EXPECT_EQ(d.fixability(), Fixability::kAuto);
  EXPECT_EQ(d.see_also(), "docs/error_index.md#E0214");
  // No suffix for E0210 / E0101.
  EXPECT_EQ(Make(Kind::kE0210, std::nullopt).message, "module is missing a required `meta` block");
  EXPECT_EQ(Make(Kind::kE0101, std::nullopt, "RBrace").message,
            "unexpected end of input, expected RBrace");
}

TEST(DiagnosticTest, CheckJsonEnvelope) {
  Result<SourceBuffer> source = SourceBuffer::Create(0, "a.ko", "ab\ncdef\n");
  ASSERT_TRUE(source.ok());
  Diagnostic d = Make(Kind::kE0201, SourceRange{0, 4, 6}, "de");
  d.suggestion = "check for typos or declare `de` before use";
  d.fix_patch = FixPatch{"declare `de`", 4, 4, "let de: TODO = TODO\n    "};
  d.repair_plan.push_back(RepairStep{"declare `de`", {*d.fix_patch}});
  std::vector<Diagnostic> diags = {d};
  const std::string json = RenderCheckJson(*source, "dir/a.ko", diags, {});
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(json);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"errors", "warnings", "status", "count"}));
  EXPECT_EQ(j["status"], "failed");
  EXPECT_EQ(j["count"], 1);
  const auto& e = j["errors"][0];
  keys.clear();
  for (const auto& [k, v] : e.items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"code", "severity", "message", "span", "suggestion",
                                            "fixability", "fix_patch", "repair_plan", "see_also"}));
  EXPECT_EQ(e["span"]["file"], "dir/a.ko");
  EXPECT_EQ(e["span"]["line"], 2);
  EXPECT_EQ(e["span"]["column"], 2);
  EXPECT_EQ(e["fixability"], "auto");
  EXPECT_EQ(e["fix_patch"]["file"], "");
  EXPECT_EQ(e["fix_patch"]["start_offset"], 4);
  EXPECT_NE(json.find("\n  \"errors\": [\n    {\n      \"code\": \"E0201\""), std::string::npos)
      << json;

  const std::string ok =
      RenderCheckJson(*source, "a.ko", {}, ModuleSummary{"m", "p", std::nullopt});
  EXPECT_EQ(ok,
            "{\n  \"errors\": [],\n  \"warnings\": [],\n  \"status\": \"ok\",\n  \"count\": 0,\n"
            "  \"meta\": {\n    \"module\": \"m\",\n    \"purpose\": \"p\",\n    \"version\": "
            "null\n  }\n}");
}

TEST(DiagnosticTest, McpShapes) {
  Diagnostic d = Make(Kind::kE0200, SourceRange{0, 74, 85}, "Int", "Bool");
  d.suggestion = "ensure the expression produces a value of type `Int`";
  d.fix_patch = FixPatch{"change type to `Int`", 74, 85, "Int"};
  EXPECT_EQ(McpCheckError(d).dump(),
            R"({"code":"E0200","fix_patch":{"description":"change type to `Int`","end_offset":85,)"
            R"("replacement":"Int","start_offset":74},"message":"type mismatch: expected `Int`, )"
            R"(found `Bool` at Span { start: 74, end: 85 }","span":{"end":85,"start":74},)"
            R"("suggestion":"ensure the expression produces a value of type `Int`"})");
  Diagnostic meta = Make(Kind::kE0210, std::nullopt);
  EXPECT_EQ(McpCheckError(meta).dump(),
            R"({"code":"E0210","message":"module is missing a required `meta` block"})");
  std::vector<Diagnostic> both = {d, meta};
  meta.repair_plan.push_back(RepairStep{"step", {FixPatch{"p", 0, 0, "x"}}});
  std::vector<Diagnostic> with_plan = {d, meta};
  const nlohmann::json fix = McpFixResult(with_plan);
  EXPECT_EQ(fix["status"], "errors_found");
  EXPECT_EQ(fix["error_count"], 2);
  EXPECT_EQ(fix["patches"].size(), 1u);
  EXPECT_EQ(fix["patches"][0]["error_code"], "E0200");
  EXPECT_EQ(fix["repair_plans"][0]["steps"][0]["id"], 0);
  EXPECT_EQ(McpFixResult({}).dump(),
            R"({"message":"no errors to fix","patches":[],"repair_plans":[],"status":"ok"})");
  EXPECT_EQ(McpTypeFailure(both)["phase"], "types");
}

TEST(DiagnosticTest, ParseAdapter) {
  Result<SourceBuffer> source = SourceBuffer::Create(0, "p.ko", "module m { fn f( }");
  ASSERT_TRUE(source.ok());
  Result<parse::ParseResult> parsed = parse::ParseModule(*source);
  ASSERT_TRUE(parsed.ok());
  ASSERT_EQ(parsed->diagnostics.size(), 1u);
  const Diagnostic d = FromParse(parsed->diagnostics[0]);
  EXPECT_EQ(d.code(), parsed->diagnostics[0].code);
  EXPECT_EQ(d.message, parsed->diagnostics[0].message);
  EXPECT_EQ(d.span, parsed->diagnostics[0].range);
  std::vector<Diagnostic> one = {d};
  EXPECT_EQ(McpParseFailure(one)["phase"], "parse");

  Result<SourceBuffer> bad = SourceBuffer::Create(0, "b.ko", "module m { # }");
  ASSERT_TRUE(bad.ok());
  Result<parse::ParseResult> lexed = parse::ParseModule(*bad);
  ASSERT_TRUE(lexed.ok());
  ASSERT_EQ(lexed->diagnostics.size(), 1u);
  const Diagnostic e = FromParse(lexed->diagnostics[0]);
  EXPECT_EQ(e.code(), "E0001");
  EXPECT_FALSE(e.span_in_json);
  std::vector<Diagnostic> lex_one = {e};
  EXPECT_TRUE(McpParseFailure(lex_one)["errors"][0]["span"].is_null());
}

TEST(DiagnosticTest, ApplyPatches) {
  Result<std::string> out =
      ApplyPatches("abcdef", {FixPatch{"a", 1, 2, "X"}, FixPatch{"b", 4, 4, "YY"}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "aXcdYYef");
  EXPECT_FALSE(ApplyPatches("abc", {FixPatch{"far", 2, 9, ""}}).ok());
  EXPECT_FALSE(ApplyPatches("abcdef", {FixPatch{"a", 1, 4, ""}, FixPatch{"b", 2, 5, ""}}).ok());
}

TEST(DiagnosticTest, TextRendering) {
  Result<SourceBuffer> source = SourceBuffer::Create(0, "t.ko", "x\n  let y = zz\n");
  ASSERT_TRUE(source.ok());
  Diagnostic d = Make(Kind::kE0201, SourceRange{0, 12, 14}, "zz");
  d.suggestion = "check for typos or declare `zz` before use";
  EXPECT_EQ(RenderText(*source, "t.ko", d),
            "error[E0201]: undefined type `zz` at Span { start: 12, end: 14 }\n"
            "  --> t.ko:2:11\n  |\n2 |   let y = zz\n  |           ^^\n"
            "  = help: check for typos or declare `zz` before use\n");
}

TEST(ExplainTest, EveryCodeHasAnExplanation) {
  for (const KindInfo& info : AllKinds()) {
    Result<Explanation> e = Explain(info.code);
    ASSERT_TRUE(e.ok()) << info.code;
    EXPECT_EQ(e->title, info.title);
    EXPECT_FALSE(e->explanation.empty());
    EXPECT_FALSE(e->bad_example.empty());
    EXPECT_FALSE(e->good_example.empty());
    const std::string text = RenderExplainText(*e);
    EXPECT_EQ(text.rfind(fmt::format("Error {}: {}\n", info.code, info.title), 0), 0u);
    EXPECT_EQ(ExplainJson(*e)["code"], info.code);
  }
  EXPECT_EQ(Explain("E0101")->title, "Unexpected End of File");
}

TEST(ExplainTest, UnknownCode) {
  Result<Explanation> e = Explain("E0999");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "unknown error code `E0999`");
  EXPECT_EQ(
      UnknownCodeJson("E0999").dump(),
      R"({"error":"unknown error code `E0999`","hint":"error codes range from E0001 to E0699"})");
}

TEST(ExplainTest, McpClassifiesByPrefix) {
  EXPECT_EQ(ExplainMcp("E0214")["title"], "Type Error");
  EXPECT_EQ(ExplainMcp("E0001")["title"], "Lexer Error");
  EXPECT_EQ(ExplainMcp("E0150")["title"], "Parser Error");
  EXPECT_EQ(ExplainMcp("E0700")["title"], "Unknown Error Code");
  EXPECT_EQ(ExplainMcp("bogus")["title"], "Unknown Error Code");
  EXPECT_EQ(ExplainMcp("E0310")["hint"],
            "Use `kodoc explain <code>` for detailed examples and fix suggestions.");
}

}  // namespace
}  // namespace trove::kodo::diag

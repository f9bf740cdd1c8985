#include "kodo/diag/sarif.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace trove::kodo::diag {
namespace {

using nlohmann::json;

TEST(SarifTest, EachDiagnosticIsAResultWithRegionAndFix) {
  // Line 2 holds "let p = Pöint": the 'ö' is two bytes, one code point.
  const std::string text = "module m {\n  let p = P\xC3\xB6int { x: 1 }\n}\n";
  Result<SourceBuffer> source = SourceBuffer::Create(0, "dir/a b.ko", text);
  ASSERT_TRUE(source.ok());
  const std::uint32_t begin = static_cast<std::uint32_t>(text.find("P\xC3\xB6int"));
  const std::uint32_t end = static_cast<std::uint32_t>(text.find('}', begin) + 1);
  Diagnostic missing = Make(Kind::kE0214, SourceRange{0, begin, end}, "y", "Point");
  missing.suggestion = "add `y: <value>` to the struct literal";
  missing.fix_patch = FixPatch{.description = "add missing field `y`",
                               .start_offset = end - 1,
                               .end_offset = end - 1,
                               .replacement = "y: TODO, "};
  Diagnostic unspanned = Make(Kind::kE0201, std::nullopt, "Q");
  const std::vector<Diagnostic> diags = {missing, unspanned, missing};

  const json log = json::parse(
      RenderSarif(*source, "dir/a b.ko", diags, {.version = "1.14.1", .full_name = "kodoc x"}));
  EXPECT_EQ(log["version"], "2.1.0");
  const json& run = log["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "kodoc");
  EXPECT_EQ(run["tool"]["driver"]["version"], "1.14.1");
  EXPECT_EQ(run["columnKind"], "unicodeCodePoints");
  // One rule per code used, in order of first use; results point at them.
  ASSERT_EQ(run["tool"]["driver"]["rules"].size(), 2u);
  EXPECT_EQ(run["tool"]["driver"]["rules"][0]["id"], "E0214");
  EXPECT_EQ(run["tool"]["driver"]["rules"][1]["id"], "E0201");
  ASSERT_EQ(run["results"].size(), 3u);
  const json& r = run["results"][0];
  EXPECT_EQ(r["ruleId"], "E0214");
  EXPECT_EQ(r["ruleIndex"], 0);
  EXPECT_EQ(r["level"], "error");
  EXPECT_EQ(r["message"]["text"], missing.message);
  const json& loc = r["locations"][0]["physicalLocation"];
  EXPECT_EQ(loc["artifactLocation"]["uri"], "dir/a%20b.ko");
  EXPECT_EQ(loc["region"]["startLine"], 2);
  EXPECT_EQ(loc["region"]["startColumn"], 11);
  EXPECT_EQ(loc["region"]["endLine"], 2);
  // "Pöint { x: 1 }" is 14 code points (15 bytes): the end column counts code points.
  EXPECT_EQ(loc["region"]["endColumn"], 25);
  EXPECT_EQ(loc["region"]["byteOffset"], begin);
  EXPECT_EQ(loc["region"]["byteLength"], end - begin);
  const json& fix = r["fixes"][0];
  EXPECT_EQ(fix["description"]["text"], "add missing field `y`");
  const json& rep = fix["artifactChanges"][0]["replacements"][0];
  EXPECT_EQ(rep["deletedRegion"]["byteOffset"], end - 1);
  EXPECT_EQ(rep["deletedRegion"]["byteLength"], 0);
  EXPECT_EQ(rep["insertedContent"]["text"], "y: TODO, ");
  EXPECT_EQ(r["properties"]["fixability"], "auto");
  // No span: the file without a region; no patch: no fixes.
  const json& u = run["results"][1];
  EXPECT_EQ(u["ruleIndex"], 1);
  EXPECT_FALSE(u["locations"][0]["physicalLocation"].contains("region"));
  EXPECT_FALSE(u.contains("fixes"));
  EXPECT_EQ(run["results"][2]["ruleIndex"], 0);
}

TEST(SarifTest, NoDiagnosticsIsAnEmptyRun) {
  Result<SourceBuffer> source = SourceBuffer::Create(0, "ok.ko", "module ok {}\n");
  ASSERT_TRUE(source.ok());
  const json log = json::parse(RenderSarif(*source, "ok.ko", {}, {}));
  EXPECT_TRUE(log["runs"][0]["results"].empty());
  EXPECT_TRUE(log["runs"][0]["tool"]["driver"]["rules"].empty());
}

// Warnings (decision 0085): the checked file's, then other files' (an imported module's), each
// of level "warning", located in its own file with a region from that file's text; every file
// is one artifact, the checked one first.
TEST(SarifTest, WarningsOfOtherFilesAreResultsInTheirOwnArtifacts) {
  const std::string main_text = "module m {\n  async fn f() -> Int { return 1 }\n}\n";
  const std::string util_text = "module u {\n\n  fn g() requires { true } { }\n}\n";
  Result<SourceBuffer> main = SourceBuffer::Create(0, "app/m.ko", main_text);
  Result<SourceBuffer> util = SourceBuffer::Create(1, "app/lib/u 1.ko", util_text);
  ASSERT_TRUE(main.ok() && util.ok());
  const std::uint32_t m_at = static_cast<std::uint32_t>(main_text.find("async"));
  const std::uint32_t u_at = static_cast<std::uint32_t>(util_text.find("requires"));
  const Diagnostic error = Make(Kind::kE0201, SourceRange{0, 7, 8}, "m");
  const Diagnostic own = Make(Kind::kW0901, SourceRange{0, m_at, m_at + 5}, "concurrency");
  const Diagnostic other = Make(Kind::kW0901, SourceRange{1, u_at, u_at + 8}, "contracts");
  const Diagnostic other2 = Make(Kind::kW0902, SourceRange{1, 0, 6}, "z");
  const std::vector<Diagnostic> errors = {error};
  const std::vector<Diagnostic> warnings = {own};
  const std::vector<FileDiagnostic> others = {{&*util, util->name(), &other},
                                              {&*util, util->name(), &other2}};
  const json log = json::parse(RenderSarif(*main, "app/m.ko", errors, {}, warnings, others));
  const json& run = log["runs"][0];
  ASSERT_EQ(run["artifacts"].size(), 2u);
  EXPECT_EQ(run["artifacts"][0]["location"]["uri"], "app/m.ko");
  EXPECT_EQ(run["artifacts"][0]["length"], main_text.size());
  EXPECT_EQ(run["artifacts"][1]["location"]["uri"], "app/lib/u%201.ko");
  EXPECT_EQ(run["artifacts"][1]["length"], util_text.size());
  ASSERT_EQ(run["results"].size(), 4u);
  const json& rules = run["tool"]["driver"]["rules"];
  ASSERT_EQ(rules.size(), 3u);  // E0201, W0901, W0902
  EXPECT_EQ(rules[0]["defaultConfiguration"]["level"], "error");
  EXPECT_EQ(rules[1]["defaultConfiguration"]["level"], "warning");
  EXPECT_EQ(rules[2]["defaultConfiguration"]["level"], "warning");
  const std::vector<std::string> levels = {"error", "warning", "warning", "warning"};
  const std::vector<std::string> uris = {"app/m.ko", "app/m.ko", "app/lib/u%201.ko",
                                         "app/lib/u%201.ko"};
  const std::vector<int> indexes = {0, 0, 1, 1};
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const json& r = run["results"][i];
    EXPECT_EQ(r["level"], levels[i]);
    EXPECT_EQ(rules[r["ruleIndex"].get<std::size_t>()]["id"], r["ruleId"]);
    EXPECT_EQ(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], uris[i]);
    EXPECT_EQ(r["locations"][0]["physicalLocation"]["artifactLocation"]["index"], indexes[i]);
  }
  EXPECT_EQ(run["results"][1]["message"]["text"], own.message);
  EXPECT_EQ(run["results"][2]["message"]["text"], other.message);
  // Regions from each file's own text: `requires` is on line 3 of u.ko, column 10.
  const json& region = run["results"][2]["locations"][0]["physicalLocation"]["region"];
  EXPECT_EQ(region["startLine"], 3);
  EXPECT_EQ(region["startColumn"], 10);
  EXPECT_EQ(region["byteOffset"], u_at);
  EXPECT_EQ(region["byteLength"], 8);
  const json& own_region = run["results"][1]["locations"][0]["physicalLocation"]["region"];
  EXPECT_EQ(own_region["startLine"], 2);
  EXPECT_EQ(own_region["startColumn"], 3);
}

TEST(SarifTest, PathsBecomeUriReferences) {
  EXPECT_EQ(PathToUriReference("src/main.ko"), "src/main.ko");
  EXPECT_EQ(PathToUriReference("/abs/x y.ko"), "/abs/x%20y.ko");
  EXPECT_EQ(PathToUriReference("100%.ko"), "100%25.ko");
  EXPECT_EQ(PathToUriReference("c:x.ko"), "c%3Ax.ko");  // not a scheme
  EXPECT_EQ(PathToUriReference("a/c:x.ko"), "a/c:x.ko");
  EXPECT_EQ(PathToUriReference("K\xC5\x8D"), "K%C5%8D");
}

}  // namespace
}  // namespace trove::kodo::diag

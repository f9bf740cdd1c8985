#include "warden/report/report.h"

#include <gtest/gtest.h>

#include <string>

namespace trove::warden::report {
namespace {

std::size_t Count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1)) {
    ++n;
  }
  return n;
}

constexpr char kHostile[] =
    "\"><img id=\"pwned\" src=x onerror=\"alert(1)\"></td><script>alert('x')</script>";

ReportData Sample() {
  ReportData d;
  d.project = "demo<project>";
  d.generator = "warden (trove) test";
  kb::VersionInfo v1{.id = 1, .label = "v1", .functions = 3, .imported = 1, .defined = 2};
  kb::VersionInfo v2{.id = 2,
                     .label = "v2</text><script>x()</script>",
                     .functions = 3,
                     .imported = 1,
                     .defined = 2};
  v2.sha256 = std::string(64, 'a');
  d.versions.push_back(
      {v1, kb::Coverage{.defined = 2, .named = 1, .coverage_pct = 50, .export_named = 1}});
  d.versions.push_back({v2, kb::Coverage{.defined = 2,
                                         .named = 2,
                                         .coverage_pct = 100,
                                         .human_named = 1,
                                         .export_named = 1,
                                         .locked = 1,
                                         .mean_confidence = 1.0}});
  d.selected = 1;
  FunctionEntry imp;
  imp.record.func_index = 0;
  imp.record.is_import = true;
  imp.record.import_module = "env";
  imp.record.import_field = "log<b>";
  imp.record.type_signature = "() -> ()";
  d.functions.push_back(imp);
  FunctionEntry hostile;
  hostile.record.func_index = 1;
  hostile.record.stable_id = "w1:0123456789abcdef";
  hostile.record.type_signature = "(i32) -> i32";
  hostile.record.raw_name = kHostile;
  hostile.record.export_names = {kHostile};
  hostile.record.referenced_strings = {"</script><script>alert(2)</script>"};
  hostile.record.defined_callees = {2};
  hostile.symbol = kb::SymbolRecord{.stable_id = "w1:0123456789abcdef",
                                    .name = kHostile,
                                    .provenance = "export",
                                    .confidence = 1.0};
  hostile.symbol->evidence.push_back(kb::EvidenceEntry{.at = "2026-01-01T00:00:00.000Z",
                                                       .actor = "ingest:name-section",
                                                       .provenance = "export",
                                                       .name = kHostile,
                                                       .confidence = 1.0,
                                                       .accepted = true,
                                                       .reason = "seeded"});
  d.functions.push_back(hostile);
  FunctionEntry human;
  human.record.func_index = 2;
  human.record.stable_id = "w1:fedcba9876543210";
  human.callers = {1};
  human.symbol = kb::SymbolRecord{.stable_id = "w1:fedcba9876543210",
                                  .name = "sqlite3_open",
                                  .provenance = "human",
                                  .confidence = 1.0,
                                  .locked = true};
  d.functions.push_back(human);
  return d;
}

TEST(ReportTest, HostileNamesAreEscapedEverywhere) {
  const std::string html = RenderHtml(Sample());
  // The page's own script is the only one, and no tag or attribute came from the data.
  EXPECT_EQ(Count(html, "<script"), 1u) << html;
  EXPECT_EQ(Count(html, "</script>"), 1u);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("id=\"pwned\""), std::string::npos);
  EXPECT_EQ(html.find("<b>"), std::string::npos);
  EXPECT_EQ(html.find("demo<project>"), std::string::npos);
  // The text is there, escaped: as the name cell, the data-name attribute, the evidence, the
  // raw name and the export.
  EXPECT_GE(Count(html, "&quot;&gt;&lt;img id=&quot;pwned&quot;"), 5u);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("env.log&lt;b&gt;"), std::string::npos);
}

TEST(ReportTest, ShowsCoverageChartAndFunctions) {
  const std::string html = RenderHtml(Sample());
  EXPECT_NE(html.find("id=\"cov-defined\" data-value=\"2\""), std::string::npos);
  EXPECT_NE(html.find("id=\"cov-human\" data-value=\"1\""), std::string::npos);
  EXPECT_NE(html.find("id=\"cov-pct\" data-value=\"100.0\""), std::string::npos);
  // One bar per version; v1 has an export band and an unnamed band, v2 human and export.
  EXPECT_EQ(Count(html, "<g class=\"bar\""), 2u);
  EXPECT_EQ(Count(html, "data-provenance=\"unnamed\" data-count=\"1\""), 1u);
  EXPECT_EQ(Count(html, "<rect class=\"seg\""), 4u);
  // Defined functions only in the table; the import is listed separately.
  EXPECT_EQ(Count(html, "<tr class=\"fn\""), 2u);
  EXPECT_NE(html.find("<span id=\"import-count\">1</span>"), std::string::npos);
  EXPECT_NE(html.find("<span id=\"export-count\">1</span>"), std::string::npos);
  EXPECT_NE(html.find("data-name=\"sqlite3_open\" data-provenance=\"human\" data-locked=\"true\""),
            std::string::npos);
  // Callers come from the data, facts carry the evidence trail.
  EXPECT_NE(html.find("<dt>callers</dt><dd>1</dd>"), std::string::npos);
  EXPECT_NE(html.find("ingest:name-section"), std::string::npos);
  // The filter offers the provenances present.
  EXPECT_NE(html.find("<option value=\"human\">human</option>"), std::string::npos);
  EXPECT_NE(html.find("<option value=\"export\">export</option>"), std::string::npos);
}

TEST(ReportTest, ScriptIsPinnedByTheContentSecurityPolicy) {
  const std::string html = RenderHtml(Sample());
  EXPECT_NE(html.find("script-src 'sha256-"), std::string::npos);
  EXPECT_EQ(html.find("script-src 'unsafe-inline'"), std::string::npos);
  EXPECT_EQ(RenderHtml(Sample()), html);  // deterministic
}

TEST(ReportTest, ShowsTheStoredChangelogEscaped) {
  ReportData d = Sample();
  EXPECT_NE(RenderHtml(d).find("No diff into this version is stored"), std::string::npos);
  d.changelog = kb::DiffRecord{.id = 1,
                               .from_version = 1,
                               .to_version = 2,
                               .created_at = "2026-11-26T12:00:00.000Z",
                               .changelog_md = "# v1 -> v2\n\n- renamed `a<script>b`\n"};
  const std::string html = RenderHtml(d);
  EXPECT_EQ(html.find("No diff into this version is stored"), std::string::npos);
  EXPECT_NE(
      html.find("<pre id=\"changelog-text\"># v1 -&gt; v2\n\n- renamed `a&lt;script&gt;b`\n</pre>"),
      std::string::npos)
      << html;
  EXPECT_NE(html.find("<p>From v1 to v2&lt;/text&gt;"), std::string::npos);
  EXPECT_EQ(Count(html, "<script"), 1u);
}

}  // namespace
}  // namespace trove::warden::report

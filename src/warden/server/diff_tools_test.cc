// The diff tools and resources through the MCP core's in-process client: diff_versions returns
// exactly the engine's report, carry_annotations writes through the gate with provenance
// diff-carry, the changelog resource serves the stored bytes, and bad ids are tool errors.
#include "warden/server/diff_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "mcp/testing/test_client.h"
#include "warden/diff/diff.h"
#include "warden/diff/testing/planted.h"
#include "warden/ingest/ingest.h"

namespace trove::warden::server {
namespace {

using mcp::Json;
using mcp::testing::TestClient;
using mcp::testing::TestServer;
using ::testing::HasSubstr;

class DiffToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/w.db";
    kb::KbOptions options;
    options.create_if_missing = true;
    auto opened = kb::Kb::Open(env_, db_, options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    kb_ = std::move(opened).value();
    int n = 0;
    for (const samples::Module& m : {diff::testing::PlantedV1(), diff::testing::PlantedV2()}) {
      Result<std::vector<std::uint8_t>> bytes = samples::WriteModule(m);
      ASSERT_TRUE(bytes.ok());
      const std::string path = dir_.path() + "/v" + std::to_string(++n) + ".wasm";
      ASSERT_TRUE(env_.WriteFile(path, std::string(bytes->begin(), bytes->end())).ok());
      auto r = ingest::IngestFile(env_, *kb_, path, ingest::IngestOptions{});
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  }

  base::testing::TempDir dir_{"diff_tools_test"};
  base::PosixEnv env_;
  std::string db_;
  std::unique_ptr<kb::Kb> kb_;
};

TEST_F(DiffToolsTest, DiffVersionsIsTheEngineReport) {
  KbPool pool(env_, db_, 4);
  TestServer ts;
  ASSERT_TRUE(RegisterWardenTools(ts.server(), pool, agents::AgentConfig{}).ok());
  TestClient client(ts.server());
  client.Initialize();
  Json r = client.CallTool("diff_versions", {{"from_version_id", 1}, {"to_version_id", 2}});
  ASSERT_TRUE(r.contains("result")) << r.dump();
  ASSERT_FALSE(r["result"].value("isError", false)) << r.dump();
  Json got = r["result"]["structuredContent"];
  EXPECT_EQ(got["changelog_uri"], "warden://diffs/1/2/changelog");
  EXPECT_EQ(got["counts"]["modified"]["total"], 7);
  EXPECT_EQ(got["changes"].size(), 9u);  // unchanged and moved are counted only

  // The same fields as the engine's JSON, value for value.
  Result<diff::VersionSide> from = diff::LoadSide(*kb_, 1);
  Result<diff::VersionSide> to = diff::LoadSide(*kb_, 2);
  ASSERT_TRUE(from.ok() && to.ok());
  Json engine = Json::parse(diff::ReportJson(diff::ComputeDiff(*from, *to), false));
  engine["diff_id"] = got["diff_id"];
  engine["changelog_uri"] = got["changelog_uri"];
  // Field order differs (the tool's description orders its output); compare as plain maps.
  EXPECT_EQ(nlohmann::json::parse(got.dump()), nlohmann::json::parse(engine.dump()));

  Json all = client.CallTool(
      "diff_versions", {{"from_version_id", 1}, {"to_version_id", 2}, {"include_unchanged", true}});
  EXPECT_EQ(all["result"]["structuredContent"]["changes"].size(), 18u);

  // The changelog resource serves the stored Markdown.
  Json read = client.Request("resources/read", {{"uri", "warden://diffs/1/2/changelog"}});
  ASSERT_TRUE(read.contains("result")) << read.dump();
  const std::string md = read["result"]["contents"][0]["text"];
  Result<std::optional<kb::DiffRecord>> stored = kb_->GetDiff(1, 2);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ(md, (*stored)->changelog_md);
  EXPECT_EQ(read["result"]["contents"][0]["mimeType"], "text/markdown");
  Json index = client.Request("resources/read", {{"uri", "warden://diffs"}});
  ASSERT_TRUE(index.contains("result")) << index.dump();
  const Json list = Json::parse(std::string(index["result"]["contents"][0]["text"]));
  ASSERT_EQ(list["diffs"].size(), 1u);
  EXPECT_EQ(list["diffs"][0]["changelog_uri"], "warden://diffs/1/2/changelog");
  Json missing = client.Request("resources/read", {{"uri", "warden://diffs/2/1/changelog"}});
  EXPECT_TRUE(missing.contains("error")) << missing.dump();
  Json templates = client.Request("resources/templates/list");
  EXPECT_EQ(templates["result"]["resourceTemplates"][0]["uriTemplate"],
            "warden://diffs/{from_version_id}/{to_version_id}/changelog");
}

TEST_F(DiffToolsTest, CarryAnnotationsGoesThroughTheGate) {
  KbPool pool(env_, db_, 4);
  TestServer ts;
  ASSERT_TRUE(RegisterWardenTools(ts.server(), pool, agents::AgentConfig{}).ok());
  TestClient client(ts.server());
  client.Initialize();
  Json r = client.CallTool("carry_annotations", {{"from_version_id", 1}, {"to_version_id", 2}});
  ASSERT_TRUE(r.contains("result")) << r.dump();
  ASSERT_FALSE(r["result"].value("isError", false)) << r.dump();
  const Json& out = r["result"]["structuredContent"];
  EXPECT_EQ(out["attempted"], 6);  // the seven modified pairs but f3, unnamed in v1
  EXPECT_EQ(out["unnamed_source"], 1);
  EXPECT_EQ(out["carried"], 5);
  EXPECT_EQ(out["rejected"], 1);  // B: v2's own export name outranks a carry
  for (const Json& d : out["details"]) {
    Result<std::optional<kb::SymbolRecord>> s =
        kb_->GetSymbol(d["to_stable_id"].get<std::string>());
    ASSERT_TRUE(s.ok() && s->has_value());
    if (d["written"] == true) {
      EXPECT_EQ((*s)->provenance, "diff-carry");
      EXPECT_EQ((*s)->actor, "diff:v1->v2");
      EXPECT_EQ((*s)->name, d["name"]);
    } else {
      EXPECT_EQ((*s)->provenance, "export");
    }
  }
  // Provenance and actor are not arguments.
  Json forged = client.CallTool(
      "carry_annotations", {{"from_version_id", 1}, {"to_version_id", 2}, {"provenance", "human"}});
  EXPECT_TRUE(forged["result"].value("isError", false)) << forged.dump();
}

TEST_F(DiffToolsTest, UnknownOrEqualVersionsAreToolErrors) {
  KbPool pool(env_, db_, 4);
  TestServer ts;
  ASSERT_TRUE(RegisterWardenTools(ts.server(), pool, agents::AgentConfig{}).ok());
  TestClient client(ts.server());
  client.Initialize();
  Json unknown = client.CallTool("diff_versions", {{"from_version_id", 1}, {"to_version_id", 9}});
  EXPECT_TRUE(unknown["result"].value("isError", false));
  EXPECT_THAT(unknown["result"]["content"][0].value("text", ""), HasSubstr("unknown version_id 9"));
  Json same = client.CallTool("carry_annotations", {{"from_version_id", 2}, {"to_version_id", 2}});
  EXPECT_TRUE(same["result"].value("isError", false));
  EXPECT_THAT(same["result"]["content"][0].value("text", ""), HasSubstr("both 2"));
}

}  // namespace
}  // namespace trove::warden::server

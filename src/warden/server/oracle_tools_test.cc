// identify_runtime through the MCP core's in-process client: a dry run by default, writing needs
// the write scope, written names go through the gate as provenance oracle, and
// get_function_facts reports the match behind an Oracle name with its pass and score.
#include "warden/server/oracle_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "mcp/testing/test_client.h"
#include "warden/diff/testing/planted.h"
#include "warden/ingest/ingest.h"
#include "warden/oracle/oracle.h"

namespace trove::warden::server {
namespace {

using mcp::Json;
using mcp::testing::TestClient;
using mcp::testing::TestServer;
using ::testing::HasSubstr;

class OracleToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/w.db";
    store_path_ = dir_.path() + "/oracle.db";
    kb::KbOptions options;
    options.create_if_missing = true;
    auto opened = kb::Kb::Open(env_, db_, options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    kb_ = std::move(opened).value();
    samples::Module named = diff::testing::PlantedV1();
    Result<std::vector<std::uint8_t>> corpus = samples::WriteModule(named);
    ASSERT_TRUE(corpus.ok());
    {
      auto store = oracle::OracleStore::Open(store_path_, true);
      ASSERT_TRUE(store.ok());
      oracle::BuildCounts counts;
      ASSERT_TRUE(oracle::AddModule(**store, *corpus, "corpus.wasm",
                                    {.library = "musl", .emscripten_version = "3.1.6"}, counts)
                      .ok());
      ASSERT_GT(counts.added, 0);
    }
    samples::Module stripped = named;
    stripped.name_section = false;
    Result<std::vector<std::uint8_t>> target = samples::WriteModule(stripped);
    ASSERT_TRUE(target.ok());
    const std::string path = dir_.path() + "/t.wasm";
    ASSERT_TRUE(env_.WriteFile(path, std::string(target->begin(), target->end())).ok());
    auto r = ingest::IngestFile(env_, *kb_, path, ingest::IngestOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  base::testing::TempDir dir_{"oracle_tools_test"};
  base::PosixEnv env_;
  std::string db_;
  std::string store_path_;
  std::unique_ptr<kb::Kb> kb_;
};

TEST_F(OracleToolsTest, DryRunByDefaultWriteNeedsScopeFactsShowTheMatch) {
  KbPool pool(env_, db_, 4);
  TestServer ts;
  WardenToolOptions options;
  options.oracle_store = store_path_;
  ASSERT_TRUE(RegisterWardenTools(ts.server(), pool, agents::AgentConfig{}, options).ok());

  // A reader: the dry run works, writing is refused.
  {
    TestClient reader(ts.server(), "reader");
    reader.session().set_principal({.name = "reader", .scopes = {"read"}});
    reader.Initialize();
    Json r = reader.CallTool("identify_runtime", {{"version_id", 1}});
    ASSERT_FALSE(r["result"].value("isError", false)) << r.dump();
    const Json& out = r["result"]["structuredContent"];
    EXPECT_EQ(out["dry_run"], true);
    EXPECT_EQ(out["written"], 0);
    EXPECT_GT(out["matched"].get<int>(), 0);
    EXPECT_EQ(out["matches"][0]["reason"], "dry run");
    Json w = reader.CallTool("identify_runtime", {{"version_id", 1}, {"dry_run", false}});
    ASSERT_TRUE(w["result"].value("isError", false)) << w.dump();
    EXPECT_THAT(w["result"]["content"][0]["text"].get<std::string>(), HasSubstr("write scope"));
  }
  auto cov = kb_->GetCoverage(1);
  ASSERT_TRUE(cov.ok());
  EXPECT_EQ(cov->oracle_named, 0);

  TestClient client(ts.server());
  client.Initialize();
  Json w = client.CallTool("identify_runtime", {{"version_id", 1}, {"dry_run", false}});
  ASSERT_FALSE(w["result"].value("isError", false)) << w.dump();
  const Json& out = w["result"]["structuredContent"];
  EXPECT_EQ(out["dry_run"], false);
  EXPECT_GT(out["written"].get<int>(), 0);
  const Json& first = out["matches"][0];
  EXPECT_EQ(first["written"], true);

  Json facts = client.CallTool("get_function_facts",
                               {{"version_id", 1}, {"func_index", first["func_index"]}});
  const Json& oracle = facts["result"]["structuredContent"]["facts"]["oracle"];
  ASSERT_TRUE(oracle.is_object()) << facts.dump();
  EXPECT_EQ(oracle["pass"], first["pass"]);
  EXPECT_DOUBLE_EQ(oracle["score"].get<double>(), first["score"].get<double>());
  EXPECT_EQ(oracle["name"], first["name"]);
  EXPECT_EQ(oracle["library"], "musl");

  // An unknown version is a tool error; a missing store says how to make one.
  Json bad = client.CallTool("identify_runtime", {{"version_id", 9}});
  EXPECT_TRUE(bad["result"].value("isError", false));
}

}  // namespace
}  // namespace trove::warden::server

// The WARDEN MCP binding in process: registration errors. A real KB in a temporary directory
// and the MCP core's in-process client.
#include "warden/server/warden_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "mcp/testing/test_client.h"
#include "warden/ingest/ingest.h"
#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::server {
namespace {

using mcp::Json;
using mcp::testing::TestClient;
using mcp::testing::TestServer;
using ::testing::HasSubstr;
using wasm::testing::Bytes;
using wasm::testing::Cat;
using wasm::testing::Module;
using wasm::testing::Section;
using wasm::testing::Sized;
using wasm::testing::U;

// Three defined functions, no names: an agent pass asks the backend about each.
Bytes ThreeFunctions() {
  const Bytes types = Cat({U(1), {0x60, 0x00, 0x01, 0x7f}});
  const Bytes functions = Cat({U(3), U(0), U(0), U(0)});
  const Bytes code = Cat({U(3), Sized({0x00, 0x41, 0x07, 0x0b}), Sized({0x00, 0x41, 0x08, 0x0b}),
                          Sized({0x00, 0x41, 0x09, 0x6a, 0x0b})});
  return Module({Section(1, types), Section(3, functions), Section(10, code)});
}

class WardenToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb::KbOptions options;
    options.create_if_missing = true;
    db_ = dir_.path() + "/w.db";
    auto opened = kb::Kb::Open(env_, db_, options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    const Bytes bytes = ThreeFunctions();
    ASSERT_TRUE(
        env_.WriteFile(dir_.path() + "/a.wasm", std::string(bytes.begin(), bytes.end())).ok());
    auto r = ingest::IngestFile(env_, **opened, dir_.path() + "/a.wasm", ingest::IngestOptions{});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    version_ = r->store.version_id;
  }

  base::testing::TempDir dir_{"warden_tools_test"};
  base::PosixEnv env_;
  std::string db_;
  std::int64_t version_ = 0;
};

TEST_F(WardenToolsTest, RegistrationReportsEveryFailedTool) {
  TestServer ts;
  // A tool already named propose_symbol makes its registration fail; the error must come back
  // even though the tools registered after it succeed.
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "propose_symbol", .description = "taken"},
                          Json{{"type", "object"}}, nullptr,
                          [](const Json&, mcp::CallContext&) -> Result<mcp::ToolResult> {
                            return mcp::ToolResult::Text("x");
                          })
                  .ok());
  KbPool pool(env_, db_, 2);
  Status s = RegisterWardenTools(ts.server(), pool, agents::AgentConfig{});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("propose_symbol"));
}

}  // namespace
}  // namespace trove::warden::server

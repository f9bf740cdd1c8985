// The WARDEN MCP binding in process: registration errors, and the cap on concurrent agent
// passes (a pass holds a worker for its whole run, so uncapped passes would stall every read).
// A real KB in a temporary directory, the real OpenAI backend against a local stand-in that
// holds each request until the test releases it, and the MCP core's in-process client.
#include "warden/server/warden_tools.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "mcp/policy/rate_limit.h"
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

// An OpenAI stand-in that holds every request until Release(), then answers 400 (not retried).
class HoldingProvider {
 public:
  HoldingProvider() {
    server_.Post("/v1/responses", [this](const httplib::Request&, httplib::Response& res) {
      std::unique_lock<std::mutex> lock(mu_);
      ++requests_;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
      res.status = 400;
      res.set_content(R"({"error":{"message":"stand-in"}})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~HoldingProvider() {
    Release();
    server_.stop();
    thread_.join();
  }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // Waits until `n` requests are being held; returns whether they are.
  bool WaitForHeld(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, mcp::testing::kWait, [&] { return requests_ >= n; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  int requests_ = 0;       // GUARDED_BY(mu_)
  bool released_ = false;  // GUARDED_BY(mu_)
};

// An OpenAI stand-in that fails (HTTP 500) until Heal(), then abstains on every function.
class FlakyProvider {
 public:
  FlakyProvider() {
    server_.Post("/v1/responses", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      ++requests_;
      if (!healthy_) {
        res.status = 500;
        res.set_content(R"({"error":{"message":"stand-in outage"}})", "application/json");
        return;
      }
      const Json text = {{"type", "output_text"}, {"text", R"({"abstain": true})"}};
      const Json message = {
          {"type", "message"}, {"role", "assistant"}, {"content", Json::array({text})}};
      res.set_content(Json{{"id", "resp_1"},
                           {"object", "response"},
                           {"status", "completed"},
                           {"output", Json::array({message})}}
                          .dump(),
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FlakyProvider() {
    server_.stop();
    thread_.join();
  }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Heal() {
    std::lock_guard<std::mutex> lock(mu_);
    healthy_ = true;
  }
  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  int requests_ = 0;      // GUARDED_BY(mu_)
  bool healthy_ = false;  // GUARDED_BY(mu_)
};

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

TEST_F(WardenToolsTest, PassLimitMustLeaveWorkersForOtherTools) {
  TestServer ts(4);
  KbPool pool(env_, db_, 2);
  Status s = RegisterWardenTools(ts.server(), pool, agents::AgentConfig{},
                                 WardenToolOptions{.max_concurrent_passes = 4});
  EXPECT_EQ(s.code(), base::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("below the 4 worker threads"));
  TestServer ts0(4);
  EXPECT_FALSE(RegisterWardenTools(ts0.server(), pool, agents::AgentConfig{},
                                   WardenToolOptions{.max_concurrent_passes = 0})
                   .ok());
}

// Two passes block in their backend calls: a third is refused with a clear error, and reads
// are answered while both still run.
TEST_F(WardenToolsTest, PassesBeyondTheLimitAreRefusedAndReadsContinue) {
  HoldingProvider provider;
  agents::AgentConfig config;
  config.openai = {.api_key = "sk-test", .model = "gpt-test", .base_url = provider.base_url()};
  KbPool pool(env_, db_, 8);
  TestServer ts(4, mcp::ServerOptions{.consent = {"run_agent_pass"}});  // --consent run_agent_pass
  ASSERT_TRUE(RegisterWardenTools(ts.server(), pool, config).ok());
  {
    TestClient client(ts.server());
    client.Initialize();
    const Json pass = {{"name", "run_agent_pass"},
                       {"arguments", {{"version_id", version_}, {"backend", "openai"}}}};
    client.SendRequest(101, "tools/call", pass);
    client.SendRequest(102, "tools/call", pass);
    ASSERT_TRUE(provider.WaitForHeld(2));

    Json third = client.CallTool("run_agent_pass", pass["arguments"]);
    ASSERT_TRUE(third.contains("result")) << third.dump();
    EXPECT_EQ(third["result"].value("isError", false), true) << third.dump();
    EXPECT_THAT(third["result"]["content"][0].value("text", ""),
                HasSubstr("2 agent passes are already running"));

    Json versions = client.CallTool("list_versions", Json::object());
    ASSERT_TRUE(versions.contains("result")) << versions.dump();
    EXPECT_EQ(versions["result"]["structuredContent"]["versions"].size(), 1u);
    Json funcs = client.CallTool("list_functions", {{"version_id", version_}});
    ASSERT_TRUE(funcs.contains("result")) << funcs.dump();
    const std::string id = funcs["result"]["structuredContent"]["functions"][0]["stable_id"];
    Json sym = client.CallTool("get_symbol", {{"stable_id", id}});
    ASSERT_TRUE(sym.contains("result")) << sym.dump();
    // Neither pass has answered: the reads ran beside them.
    EXPECT_TRUE(client.ResponsesFor(101).empty());
    EXPECT_TRUE(client.ResponsesFor(102).empty());

    provider.Release();
    EXPECT_FALSE(client.WaitResponse(101).is_null());
    EXPECT_FALSE(client.WaitResponse(102).is_null());
    // The slots are free again.
    Json again = client.CallTool("run_agent_pass", pass["arguments"]);
    ASSERT_TRUE(again.contains("result")) << again.dump();
    EXPECT_THAT(again["result"]["content"][0].value("text", ""),
                ::testing::Not(HasSubstr("already running")));
  }
}

// The circuit breaker "agent:openai" around the provider calls of run_agent_pass
// (docs/decisions/0052-breakers-around-dependencies.md): five failed calls open it; a pass then
// fails fast with a retryable RATE_LIMIT_EXCEEDED without calling the provider; after the open
// time, successful half-open calls close it. The breaker's clock is a MemEnv the test moves.
TEST_F(WardenToolsTest, ProviderBreakerOpensFailsFastAndClosesAfterRecovery) {
  FlakyProvider provider;
  agents::AgentConfig config;
  config.openai = {.api_key = "sk-test", .model = "gpt-test", .base_url = provider.base_url()};
  base::MemEnv clock;
  auto breakers = std::make_shared<mcp::policy::CircuitBreakers>(
      mcp::policy::CircuitBreakerOptions{.failure_threshold = 5,
                                         .failure_window_ms = 60'000,
                                         .open_ms = 30'000,
                                         .half_open_successes = 3},
      clock);
  KbPool pool(env_, db_, 4);
  TestServer ts(4, mcp::ServerOptions{.breakers = breakers, .consent = {"run_agent_pass"}});
  WardenToolOptions options;
  options.provider.max_retries = 0;  // each failed call is one failure, at once
  ASSERT_TRUE(RegisterWardenTools(ts.server(), pool, config, options).ok());
  TestClient client(ts.server());
  client.Initialize();
  const Json pass = {{"version_id", version_}, {"backend", "openai"}, {"only_unconfident", false}};
  mcp::policy::CircuitBreaker& breaker = breakers->For("agent:openai");

  // First pass: three functions, three failed calls (each an error detail), still closed.
  Json first = client.CallTool("run_agent_pass", pass);
  ASSERT_TRUE(first.contains("result")) << first.dump();
  EXPECT_FALSE(first["result"].value("isError", false)) << first.dump();
  EXPECT_EQ(provider.requests(), 3);
  EXPECT_EQ(breaker.state(), mcp::policy::CircuitState::kClosed);

  // Second pass: failures four and five open the breaker; the third call is refused, which
  // ends the pass with the breaker's retryable refusal.
  Json second = client.CallTool("run_agent_pass", pass);
  ASSERT_TRUE(second.contains("result")) << second.dump();
  EXPECT_TRUE(second["result"].value("isError", false)) << second.dump();
  EXPECT_EQ(provider.requests(), 5);
  EXPECT_EQ(breaker.state(), mcp::policy::CircuitState::kOpen);

  // Open: fail fast, the provider is not called.
  Json refused = client.CallTool("run_agent_pass", pass);
  ASSERT_TRUE(refused.contains("result")) << refused.dump();
  EXPECT_TRUE(refused["result"].value("isError", false));
  const Json error = refused["result"]["_meta"]["trove/error"];
  EXPECT_EQ(error["code"], "RATE_LIMIT_EXCEEDED") << refused.dump();
  EXPECT_EQ(error["retryable"], true);
  EXPECT_GT(error["retryDelayMs"].get<std::int64_t>(), 0);
  EXPECT_THAT(refused["result"]["content"][0].value("text", ""), HasSubstr("agent:openai"));
  EXPECT_EQ(provider.requests(), 5);

  // The provider recovers and the open time passes: three half-open successes close it.
  provider.Heal();
  clock.AdvanceMicros(30'000'000);
  Json healed = client.CallTool("run_agent_pass", pass);
  ASSERT_TRUE(healed.contains("result")) << healed.dump();
  EXPECT_FALSE(healed["result"].value("isError", false)) << healed.dump();
  EXPECT_EQ(healed["result"]["structuredContent"]["considered"], 3);
  EXPECT_EQ(provider.requests(), 8);
  EXPECT_EQ(breaker.state(), mcp::policy::CircuitState::kClosed);
}

}  // namespace
}  // namespace trove::warden::server

// Tests of the Streamable HTTP transport in process: ServeHttp on a free loopback port, driven
// with httplib's client (no mock). The e2e suite (e2e/negative_http.test.mjs) covers the rest.
#include "mcp/http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <functional>
#include <future>
#include <string>
#include <thread>

#include "mcp/json.h"
#include "mcp/testing/test_client.h"

namespace trove::mcp {
namespace {

using testing::kWait;
using testing::TestServer;

constexpr char kTokenA[] = "trove-http-test-token-a";
constexpr char kTokenB[] = "trove-http-test-token-b";

// Runs ServeHttp on its own thread with `options` (port 0) until the object dies.
class HttpRun {
 public:
  HttpRun(Server& server, HttpOptions options) {
    std::promise<int> port;
    std::promise<std::function<void()>> stop;
    auto port_ready = port.get_future();
    auto stop_ready = stop.get_future();
    options.port = 0;
    options.on_listening = [&port](int p) { port.set_value(p); };
    options.on_stoppable = [&stop](std::function<void()> fn) { stop.set_value(std::move(fn)); };
    thread_ = std::thread([&server, options, this] { status_ = ServeHttp(server, options); });
    if (port_ready.wait_for(kWait) == std::future_status::ready) port_ = port_ready.get();
    if (stop_ready.wait_for(kWait) == std::future_status::ready) stop_ = stop_ready.get();
  }
  ~HttpRun() {
    if (stop_) stop_();
    thread_.join();
  }

  int port() const { return port_; }

 private:
  std::thread thread_;
  int port_ = 0;
  std::function<void()> stop_;
  Status status_;
};

// A client speaking for one bearer token (none: empty).
class Client {
 public:
  Client(int port, std::string token) : http_("127.0.0.1", port), token_(std::move(token)) {
    http_.set_read_timeout(5, 0);
  }

  httplib::Headers Headers(const std::string& session) const {
    httplib::Headers h = {{"Accept", "application/json, text/event-stream"}};
    if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
    if (!session.empty()) h.emplace("Mcp-Session-Id", session);
    return h;
  }

  // POSTs `body`; returns the status (-1: no response) and sets the session id and body.
  int Post(const std::string& session, const Json& body, std::string* session_out = nullptr,
           std::string* body_out = nullptr) {
    auto res = http_.Post("/mcp", Headers(session), Dump(body), "application/json");
    if (!res) return -1;
    if (session_out) *session_out = res->get_header_value("Mcp-Session-Id");
    if (body_out) *body_out = res->body;
    return res->status;
  }

  // Initializes a session; returns its id (empty on failure).
  std::string Initialize() {
    std::string session;
    Json init = {{"jsonrpc", "2.0"},
                 {"id", 0},
                 {"method", "initialize"},
                 {"params",
                  {{"protocolVersion", "2025-11-25"},
                   {"capabilities", Json::object()},
                   {"clientInfo", {{"name", "http_test"}, {"version", "1"}}}}}};
    EXPECT_EQ(Post("", init, &session), 200);
    return session;
  }

  int Ping(const std::string& session) {
    return Post(session, {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}});
  }

  int CallEcho(const std::string& session, std::string* body = nullptr) {
    return Post(session,
                {{"jsonrpc", "2.0"},
                 {"id", 2},
                 {"method", "tools/call"},
                 {"params", {{"name", "echo"}, {"arguments", Json::object()}}}},
                nullptr, body);
  }

  // Opens the session's GET stream and returns the status (a 200 stream is read until the
  // first bytes, then dropped).
  int Get(const std::string& session) {
    httplib::Headers h = Headers(session);
    h.erase("Accept");
    h.emplace("Accept", "text/event-stream");
    int status = -1;
    auto res = http_.Get(
        "/mcp", h,
        [&](const httplib::Response& r) {
          status = r.status;
          return r.status != 200;  // stop reading an open stream
        },
        [](const char*, std::size_t) { return false; });
    (void)res;
    return status;
  }

  int Delete(const std::string& session) {
    auto res = http_.Delete("/mcp", Headers(session));
    return res ? res->status : -1;
  }

 private:
  httplib::Client http_;
  const std::string token_;
};

void AddEcho(Server& server) {
  ASSERT_TRUE(server.tools()
                  .AddRaw({.name = "echo", .description = "Echoes"},
                          {{"type", "object"}, {"additionalProperties", false}}, nullptr,
                          [](const Json&, CallContext&) -> Result<ToolResult> {
                            return ToolResult::Text("echoed");
                          })
                  .ok());
}

TEST(HttpSessionOwnerTest, AnotherTokensRequestsSeeNoSession) {
  TestServer ts(2);
  AddEcho(ts.server());
  HttpRun run(ts.server(), HttpOptions{.bearer_tokens = {kTokenA, kTokenB}});
  ASSERT_NE(run.port(), 0);
  Client a(run.port(), kTokenA);
  Client b(run.port(), kTokenB);
  const std::string session = a.Initialize();
  ASSERT_FALSE(session.empty());

  // Token B is valid, but the session is A's: every method answers as for an unknown id.
  std::string body;
  EXPECT_EQ(b.Ping(session), 404);
  EXPECT_EQ(b.CallEcho(session, &body), 404);
  EXPECT_THAT(body, ::testing::HasSubstr("session not found"));
  EXPECT_THAT(body, ::testing::Not(::testing::HasSubstr("echoed")));
  EXPECT_EQ(b.Get(session), 404);
  EXPECT_EQ(b.Delete(session), 404);
  EXPECT_EQ(b.Post(session, {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}), 404);

  // A's session survived all of that.
  EXPECT_EQ(a.Ping(session), 200);
  EXPECT_EQ(a.CallEcho(session, &body), 200);
  EXPECT_THAT(body, ::testing::HasSubstr("echoed"));

  // B's own session works for B and not for A.
  const std::string mine = b.Initialize();
  ASSERT_FALSE(mine.empty());
  EXPECT_EQ(b.Ping(mine), 200);
  EXPECT_EQ(a.Ping(mine), 404);
  EXPECT_EQ(a.Delete(mine), 404);
  EXPECT_EQ(b.Delete(mine), 200);
  EXPECT_EQ(b.Ping(mine), 404);

  EXPECT_EQ(a.Delete(session), 200);
  EXPECT_EQ(a.Ping(session), 404);
}

TEST(HttpSessionOwnerTest, WithoutAuthenticationSessionsWorkAsBefore) {
  TestServer ts(2);
  AddEcho(ts.server());
  HttpRun run(ts.server(), HttpOptions{});
  ASSERT_NE(run.port(), 0);
  Client c(run.port(), "");
  const std::string session = c.Initialize();
  ASSERT_FALSE(session.empty());
  EXPECT_EQ(c.CallEcho(session), 200);
  EXPECT_EQ(c.Delete(session), 200);
  EXPECT_EQ(c.Ping(session), 404);
}

}  // namespace
}  // namespace trove::mcp

// Tests of the Streamable HTTP transport in process: ServeHttp on a free loopback port, driven
// with httplib's client (no mock). The e2e suite (e2e/negative_http.test.mjs) covers the rest.
#include "mcp/http.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdio>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "base/env.h"
#include "mcp/json.h"
#include "mcp/policy/audit.h"
#include "mcp/policy/auth.h"
#include "mcp/policy/jwt.h"
#include "mcp/policy/rate_limit.h"
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
    return Post(session, {{"jsonrpc", "2.0"}, {"id", next_id_++}, {"method", "ping"}});
  }

  int CallEcho(const std::string& session, std::string* body = nullptr) {
    return Post(session,
                {{"jsonrpc", "2.0"},
                 {"id", next_id_++},
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

  // tools/call of `tool` with no arguments; returns the parsed JSON-RPC reply (null on failure).
  Json Call(const std::string& session, const std::string& tool) {
    std::string body;
    if (Post(session,
             {{"jsonrpc", "2.0"},
              {"id", next_id_++},
              {"method", "tools/call"},
              {"params", {{"name", tool}, {"arguments", Json::object()}}}},
             nullptr, &body) != 200) {
      return nullptr;
    }
    return Json::parse(body, nullptr, false);
  }

  // A whole HTTP answer to a tools/call of `tool` with no arguments.
  struct Answer {
    int status = -1;
    Json reply;                    // the parsed body (the JSON-RPC response)
    std::string www_authenticate;  // the header, or ""
    std::string retry_after;       // the header, or ""
  };
  Answer CallFull(const std::string& session, const std::string& tool) {
    Answer out;
    Json body = {{"jsonrpc", "2.0"},
                 {"id", next_id_++},
                 {"method", "tools/call"},
                 {"params", {{"name", tool}, {"arguments", Json::object()}}}};
    auto res = http_.Post("/mcp", Headers(session), Dump(body), "application/json");
    if (!res) return out;
    out.status = res->status;
    out.reply = Json::parse(res->body, nullptr, false);
    out.www_authenticate = res->get_header_value("WWW-Authenticate");
    out.retry_after = res->get_header_value("Retry-After");
    return out;
  }

  // The names tools/list returns.
  std::vector<std::string> ToolNames(const std::string& session) {
    std::string body;
    std::vector<std::string> names;
    if (Post(session, {{"jsonrpc", "2.0"}, {"id", next_id_++}, {"method", "tools/list"}}, nullptr,
             &body) != 200) {
      return names;
    }
    Json reply = Json::parse(body, nullptr, false);
    for (const auto& t : reply["result"]["tools"]) names.push_back(t["name"].get<std::string>());
    return names;
  }

  int Delete(const std::string& session) {
    auto res = http_.Delete("/mcp", Headers(session));
    return res ? res->status : -1;
  }

 private:
  httplib::Client http_;
  const std::string token_;
  // A session never reuses a request id (the server may not have retired the last one yet).
  int next_id_ = 1;
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

// Two principals from a token file: alice (read, write) and reader (read only).
constexpr char kAliceToken[] = "alice-token-0123456789";
constexpr char kReaderToken[] = "reader-token-0123456789";

std::shared_ptr<const policy::Authenticator> TwoPrincipals() {
  auto auth = policy::StaticTokenAuth::Parse(
      fmt::format("alice read,write {}\nreader read {}\n", kAliceToken, kReaderToken), "test");
  EXPECT_TRUE(auth.ok()) << auth.status().ToString();
  return auth.ok() ? std::shared_ptr<const policy::Authenticator>(std::move(auth).value())
                   : nullptr;
}

// Registers "lookup" (needs read) and "store" (needs write).
void AddReadAndWriteTools(Server& server) {
  auto add = [&](const char* name, const char* scope) {
    ASSERT_TRUE(server.tools()
                    .AddRaw({.name = name, .description = name, .scopes = {scope}},
                            {{"type", "object"}}, nullptr,
                            [name](const Json&, CallContext&) -> Result<ToolResult> {
                              return ToolResult::Text(fmt::format("{} ran", name));
                            })
                    .ok());
  };
  add("lookup", "read");
  add("store", "write");
}

// The code of a tools/call reply's error object; "" when there is none.
std::string ErrorCode(const Json& reply) {
  const Json* e = &reply;
  for (const char* key : {"result", "_meta", "trove/error", "code"}) {
    if (!e->is_object() || !e->contains(key)) return {};
    e = &(*e)[key];
  }
  return e->is_string() ? e->get<std::string>() : std::string();
}

TEST(HttpPolicyTest, AToolWithAnUnknownScopeIsRefusedAtRegistration) {
  TestServer ts(0);
  Status added = ts.server().tools().AddRaw(
      {.name = "typo", .description = "typo", .scopes = {"wirte"}}, {{"type", "object"}}, nullptr,
      [](const Json&, CallContext&) -> Result<ToolResult> { return ToolResult::Text("ran"); });
  EXPECT_EQ(added.code(), base::StatusCode::kInvalidArgument);
  EXPECT_THAT(added.message(), ::testing::HasSubstr("wirte"));
}

TEST(HttpPolicyTest, UnauthenticatedRequestsGet401WithAChallenge) {
  TestServer ts(2);
  AddReadAndWriteTools(ts.server());
  HttpRun run(ts.server(), HttpOptions{.authenticator = TwoPrincipals()});
  ASSERT_NE(run.port(), 0);
  httplib::Client http("127.0.0.1", run.port());
  const httplib::Headers accept = {{"Accept", "application/json, text/event-stream"}};
  auto res =
      http.Post("/mcp", accept, R"({"jsonrpc":"2.0","id":1,"method":"ping"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_THAT(res->get_header_value("WWW-Authenticate"), ::testing::StartsWith("Bearer"));

  httplib::Headers wrong = accept;
  wrong.emplace("Authorization", "Bearer not-a-known-token-at-all");
  res = http.Post("/mcp", wrong, R"({"jsonrpc":"2.0","id":1,"method":"ping"})", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  EXPECT_THAT(res->get_header_value("WWW-Authenticate"), ::testing::HasSubstr("invalid_token"));
  EXPECT_THAT(res->body, ::testing::Not(::testing::HasSubstr("not-a-known-token")));

  // No metadata outside oauth mode.
  res = http.Get("/.well-known/oauth-protected-resource");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

TEST(HttpPolicyTest, AReadOnlyPrincipalNeitherSeesNorCallsAWriteTool) {
  TestServer ts(2);
  AddReadAndWriteTools(ts.server());
  HttpRun run(ts.server(), HttpOptions{.authenticator = TwoPrincipals()});
  ASSERT_NE(run.port(), 0);
  Client reader(run.port(), kReaderToken);
  Client alice(run.port(), kAliceToken);
  const std::string rs = reader.Initialize();
  const std::string as = alice.Initialize();
  ASSERT_FALSE(rs.empty());
  ASSERT_FALSE(as.empty());

  EXPECT_THAT(reader.ToolNames(rs), ::testing::ElementsAre("lookup"));
  EXPECT_THAT(alice.ToolNames(as), ::testing::ElementsAre("lookup", "store"));

  // Static mode (docs/mcp.md §2.6): the refusal is the tool's PERMISSION_DENIED at 200, no
  // challenge; only oauth mode answers 403 with a step-up challenge.
  Client::Answer refused = reader.CallFull(rs, "store");
  EXPECT_EQ(refused.status, 200);
  EXPECT_EQ(refused.www_authenticate, "");
  const Json& denied = refused.reply;
  ASSERT_TRUE(denied.is_object()) << Dump(denied);
  EXPECT_EQ(denied["result"]["isError"], true);
  EXPECT_EQ(ErrorCode(denied), "PERMISSION_DENIED");
  EXPECT_THAT(Dump(denied), ::testing::Not(::testing::HasSubstr("store ran")));
  Json read = reader.Call(rs, "lookup");
  EXPECT_EQ(ErrorCode(read), "");
  EXPECT_THAT(Dump(read), ::testing::HasSubstr("lookup ran"));
  Json wrote = alice.Call(as, "store");
  EXPECT_EQ(ErrorCode(wrote), "");
  EXPECT_THAT(Dump(wrote), ::testing::HasSubstr("store ran"));
}

TEST(HttpPolicyTest, EveryCallLeavesOneAuditRecordWithoutTheToken) {
  base::PosixEnv env;
  const std::string path = ::testing::TempDir() + "/http_policy_audit.jsonl";
  std::remove(path.c_str());
  auto log = policy::AuditLog::Open(path, env);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  std::shared_ptr<policy::AuditLog> audit = std::move(log).value();
  ServerOptions options;
  options.audit_log = audit;
  TestServer ts(2, options);
  AddReadAndWriteTools(ts.server());
  {
    HttpRun run(ts.server(), HttpOptions{.authenticator = TwoPrincipals()});
    ASSERT_NE(run.port(), 0);
    Client reader(run.port(), kReaderToken);
    const std::string rs = reader.Initialize();
    ASSERT_FALSE(rs.empty());
    reader.Call(rs, "lookup");
    reader.Call(rs, "store");
  }
  ASSERT_TRUE(audit->Close().ok());
  auto report = policy::VerifyAuditLog(path);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->records, 2u);
  Result<std::string> read = env.ReadFile(path);
  ASSERT_TRUE(read.ok());
  const std::string& text = *read;
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr(kReaderToken)));
  std::vector<Json> records;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    records.push_back(Json::parse(text.substr(start, nl - start)));
  }
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["type"], "tool_call");
  EXPECT_EQ(records[0]["operation"], "lookup");
  EXPECT_EQ(records[0]["status"], "success");
  EXPECT_EQ(records[0]["principal"], "reader");
  EXPECT_EQ(records[0]["requestId"], "1");
  EXPECT_EQ(records[0]["sessionId"].get<std::string>().size(), 32u);
  EXPECT_EQ(records[0]["tokenId"].get<std::string>().size(), 12u);
  EXPECT_TRUE(records[0]["arguments"].contains("sha256"));
  EXPECT_EQ(records[1]["operation"], "store");
  EXPECT_EQ(records[1]["status"], "denied");
  EXPECT_EQ(records[1]["errorCode"], "PERMISSION_DENIED");
  std::remove(path.c_str());
}

TEST(HttpPolicyTest, TheCallAfterTheBurstIsRefusedAsRetryable) {
  base::MemEnv clock;  // time stands still: no refill
  ServerOptions options;
  options.rate_limiter = std::make_shared<policy::RateLimiter>(
      policy::RateLimitOptions{.per_minute = 60, .burst = 20}, clock);
  TestServer ts(2, options);
  AddReadAndWriteTools(ts.server());
  HttpRun run(ts.server(), HttpOptions{.authenticator = TwoPrincipals()});
  ASSERT_NE(run.port(), 0);
  Client reader(run.port(), kReaderToken);
  Client alice(run.port(), kAliceToken);
  const std::string rs = reader.Initialize();
  const std::string as = alice.Initialize();
  for (int i = 0; i < 20; ++i) {
    Client::Answer ok = reader.CallFull(rs, "lookup");
    EXPECT_EQ(ok.status, 200) << "call " << i + 1;
    EXPECT_EQ(ErrorCode(ok.reply), "") << "call " << i + 1 << ": " << Dump(ok.reply);
  }
  Client::Answer answer = reader.CallFull(rs, "lookup");
  EXPECT_EQ(answer.status, 429);
  const Json& refused = answer.reply;
  ASSERT_EQ(ErrorCode(refused), "RATE_LIMIT_EXCEEDED") << Dump(refused);
  const Json& e = refused["result"]["_meta"]["trove/error"];
  EXPECT_EQ(e["retryable"], true);
  EXPECT_GT(e["retryDelayMs"].get<std::int64_t>(), 0);
  // Retry-After: the delay in whole seconds, rounded up (60/min: one token a second).
  EXPECT_EQ(answer.retry_after,
            std::to_string((e["retryDelayMs"].get<std::int64_t>() + 999) / 1000));
  EXPECT_EQ(answer.retry_after, "1");
  // Another principal has its own bucket.
  EXPECT_EQ(ErrorCode(alice.Call(as, "lookup")), "");
}

// A P-256 public key (no token is ever signed with it here).
constexpr char kJwks[] =
    R"({"keys": [{"kty": "EC", "crv": "P-256", "x": "CUh7_-dAcy7gmV3bWBuWhm1-AaopqCa0D6jNkfistR4",)"
    R"( "y": "rhwz9cixIf0ugik8zBZu1acCH97BwzKdcCB8qwXSxfw"}]})";

policy::Jwks TestJwks() {
  Result<policy::Jwks> keys = policy::Jwks::Parse(kJwks);
  EXPECT_TRUE(keys.ok()) << keys.status().ToString();
  return std::move(keys).value();
}

// Bearer tokens as in static mode, challenges as in oauth mode: InsufficientScope is the real
// JwtAuthenticator's (the JWT path itself is tested in policy/jwt_test.cc).
class OauthLikeAuth final : public policy::Authenticator {
 public:
  OauthLikeAuth()
      : tokens_(TwoPrincipals()),
        jwt_(TestJwks(),
             policy::JwtOptions{.issuer = "https://as.example",
                                .audience = "https://mcp.example/mcp"},
             clock_) {}
  policy::AuthMode mode() const override { return policy::AuthMode::kOauth; }
  policy::AuthOutcome Authenticate(std::optional<std::string_view> header) const override {
    return tokens_->Authenticate(header);
  }
  policy::AuthDenial InsufficientScope(policy::Scopes needed) const override {
    return jwt_.InsufficientScope(needed);
  }

 private:
  base::MemEnv clock_;
  std::shared_ptr<const policy::Authenticator> tokens_;
  policy::JwtAuthenticator jwt_;
};

TEST(HttpPolicyTest, InOauthModeAScopeRefusalIs403WithAStepUpChallenge) {
  TestServer ts(2);
  AddReadAndWriteTools(ts.server());
  HttpRun run(ts.server(), HttpOptions{.authenticator = std::make_shared<OauthLikeAuth>()});
  ASSERT_NE(run.port(), 0);
  Client reader(run.port(), kReaderToken);
  const std::string rs = reader.Initialize();
  ASSERT_FALSE(rs.empty());
  Client::Answer refused = reader.CallFull(rs, "store");
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(ErrorCode(refused.reply), "PERMISSION_DENIED");
  EXPECT_THAT(refused.www_authenticate, ::testing::StartsWith("Bearer "));
  EXPECT_THAT(refused.www_authenticate, ::testing::HasSubstr(R"(error="insufficient_scope")"));
  EXPECT_THAT(refused.www_authenticate, ::testing::HasSubstr(R"(scope="write")"));
  EXPECT_THAT(
      refused.www_authenticate,
      ::testing::HasSubstr(
          R"(resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp")"));
  // An allowed call stays 200 without a challenge.
  Client::Answer ok = reader.CallFull(rs, "lookup");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.www_authenticate, "");
}

TEST(HttpPolicyTest, AnOpenBreakerAnswers429WithRetryAfter) {
  TestServer ts(2);
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "flaky", .description = "flaky"}, {{"type", "object"}}, nullptr,
                          [](const Json&, CallContext&) -> Result<ToolResult> {
                            return BreakerRefusal(
                                "agent:openai",
                                policy::Admission{.allowed = false, .retry_after_ms = 1200});
                          })
                  .ok());
  HttpRun run(ts.server(), HttpOptions{});
  ASSERT_NE(run.port(), 0);
  Client c(run.port(), "");
  const std::string session = c.Initialize();
  Client::Answer answer = c.CallFull(session, "flaky");
  EXPECT_EQ(answer.status, 429);
  EXPECT_EQ(answer.retry_after, "2");  // 1.2 s, rounded up
  EXPECT_EQ(ErrorCode(answer.reply), "RATE_LIMIT_EXCEEDED");
}

TEST(HttpPolicyTest, AStreamedAnswerStays200) {
  // A handler that sends a notification first turns the answer into an SSE stream, whose status
  // went out before the refusal was known.
  TestServer ts(2);
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "chatty", .description = "chatty"}, {{"type", "object"}},
                          nullptr,
                          [](const Json&, CallContext& ctx) -> Result<ToolResult> {
                            ctx.Log(LogSeverity::kError, "test", "before the refusal");
                            return BreakerRefusal(
                                "ctags", policy::Admission{.allowed = false, .retry_after_ms = 10});
                          })
                  .ok());
  HttpRun run(ts.server(), HttpOptions{});
  ASSERT_NE(run.port(), 0);
  Client c(run.port(), "");
  const std::string session = c.Initialize();
  Client::Answer answer = c.CallFull(session, "chatty");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.retry_after, "");
}

}  // namespace
}  // namespace trove::mcp

// Tests of the policy layer around tools/call and resources/read (docs/mcp.md §5.6,
// docs/decisions/0048-mcp-policy-layer.md): consent (configuration, elicitation, session
// memory, CallContext::RequireConsent), resource scopes, the HTTP status hints of refusals and
// the fail-closed audit log. Driven through real Sessions with the in-process test client.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "base/env.h"
#include "mcp/json.h"
#include "mcp/policy/audit.h"
#include "mcp/policy/rate_limit.h"
#include "mcp/server.h"
#include "mcp/testing/test_client.h"

namespace trove::mcp {
namespace {

using ::testing::HasSubstr;
using testing::kWait;
using testing::TestClient;
using testing::TestServer;

// The trove/error object of a tools/call reply; null when there is none.
Json ToolError(const Json& reply) {
  if (!reply.is_object() || !reply.contains("result")) return nullptr;
  const Json& result = reply["result"];
  if (!result.value("isError", false)) return nullptr;
  return result["_meta"]["trove/error"];
}

// The elicitation/create requests among `messages`.
std::vector<Json> Elicitations(const std::vector<Json>& messages) {
  std::vector<Json> out;
  for (const Json& m : messages) {
    if (m.is_object() && m.value("method", std::string()) == "elicitation/create") {
      out.push_back(m);
    }
  }
  return out;
}

// The elicitation/create requests the client received so far.
std::vector<Json> Elicitations(const TestClient& client) { return Elicitations(client.Messages()); }

// Waits until the client has received `n` elicitation requests; returns the last (null if not).
// (The predicate runs under the channel's lock: it must look only at what it is given.)
Json WaitElicitation(TestClient& client, std::size_t n) {
  client.channel().WaitUntil(
      [&](const std::vector<Json>& messages) { return Elicitations(messages).size() >= n; });
  std::vector<Json> all = Elicitations(client);
  return all.size() >= n ? all[n - 1] : Json();
}

// Answers a client-bound request with `result`.
void Answer(TestClient& client, const Json& request, const Json& result) {
  client.Send({{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}});
}

// Registers "danger" (needs consent) and "probe" (its handler asks for consent of "net" when
// called with {"network": true}); both count their runs.
struct ConsentTools {
  std::atomic<int> danger_runs{0};
  std::atomic<int> probe_runs{0};

  void Register(Server& server) {
    ASSERT_TRUE(server.tools()
                    .AddRaw({.name = "danger",
                             .description = "High-risk",
                             .needs_consent = true,
                             .run_inline = true},
                            {{"type", "object"}}, nullptr,
                            [this](const Json&, CallContext&) -> Result<ToolResult> {
                              ++danger_runs;
                              return ToolResult::Text("danger ran");
                            })
                    .ok());
    ASSERT_TRUE(server.tools()
                    .AddRaw({.name = "probe", .description = "Network only on request"},
                            {{"type", "object"}}, nullptr,
                            [this](const Json& args, CallContext& ctx) -> Result<ToolResult> {
                              if (args.value("network", false)) {
                                RETURN_IF_ERROR(ctx.RequireConsent("net"));
                              }
                              ++probe_runs;
                              return ToolResult::Text("probe ran");
                            })
                    .ok());
  }
};

const Json kElicitation = {{"elicitation", Json::object()}};

TEST(ConsentTest, RefusedWithoutTheElicitationCapability) {
  ConsentTools tools;
  TestServer ts(2);
  tools.Register(ts.server());
  TestClient client(ts.server());
  client.Initialize();
  Json reply = client.CallTool("danger", Json::object());
  Json e = ToolError(reply);
  ASSERT_TRUE(e.is_object()) << Dump(reply);
  EXPECT_EQ(e["code"], "PERMISSION_DENIED");
  EXPECT_EQ(e["retryable"], false);
  EXPECT_EQ(e["details"]["consentRequired"], "danger");
  EXPECT_THAT(e["message"].get<std::string>(), HasSubstr("--consent danger"));
  EXPECT_EQ(tools.danger_runs.load(), 0);
  EXPECT_TRUE(Elicitations(client).empty());  // no way to ask: nothing goes on the wire

  // A handler's argument-dependent consent: the same refusal, named after the operation.
  Json probe = client.CallTool("probe", {{"network", true}});
  Json pe = ToolError(probe);
  ASSERT_TRUE(pe.is_object()) << Dump(probe);
  EXPECT_EQ(pe["code"], "PERMISSION_DENIED");
  EXPECT_EQ(pe["details"]["consentRequired"], "net");
  EXPECT_EQ(tools.probe_runs.load(), 0);
  EXPECT_TRUE(ToolError(client.CallTool("probe", {{"network", false}})).is_null());
  EXPECT_EQ(tools.probe_runs.load(), 1);
}

TEST(ConsentTest, GrantedByConfiguration) {
  ConsentTools tools;
  ServerOptions options;
  options.consent = {"danger", "net"};
  TestServer ts(2, options);
  tools.Register(ts.server());
  TestClient client(ts.server());
  client.Initialize();  // no elicitation capability: configuration alone suffices
  EXPECT_TRUE(ToolError(client.CallTool("danger", Json::object())).is_null());
  EXPECT_TRUE(ToolError(client.CallTool("probe", {{"network", true}})).is_null());
  EXPECT_EQ(tools.danger_runs.load(), 1);
  EXPECT_EQ(tools.probe_runs.load(), 1);
  EXPECT_TRUE(Elicitations(client).empty());

  ConsentTools all_tools;
  ServerOptions star;
  star.consent = {"*"};
  TestServer ts2(2, star);
  all_tools.Register(ts2.server());
  TestClient other(ts2.server());
  other.Initialize();
  EXPECT_TRUE(ToolError(other.CallTool("danger", Json::object())).is_null());
  EXPECT_TRUE(ToolError(other.CallTool("probe", {{"network", true}})).is_null());
}

TEST(ConsentTest, AnElicitationAcceptIsRememberedForTheSession) {
  ConsentTools tools;
  TestServer ts(2);
  tools.Register(ts.server());
  TestClient client(ts.server());
  client.Initialize(kLatestProtocolVersion, kElicitation);

  Json id = client.NextId();
  client.SendRequest(id, "tools/call", {{"name", "danger"}, {"arguments", Json::object()}});
  Json ask = WaitElicitation(client, 1);
  ASSERT_TRUE(ask.is_object());
  const Json& params = ask["params"];
  EXPECT_EQ(params["mode"], "form");
  EXPECT_THAT(params["message"].get<std::string>(), HasSubstr("danger"));
  EXPECT_EQ(params["requestedSchema"]["type"], "object");
  EXPECT_EQ(params["requestedSchema"]["properties"]["confirm"]["type"], "boolean");
  EXPECT_EQ(tools.danger_runs.load(), 0);  // waits for the answer
  Answer(client, ask, {{"action", "accept"}, {"content", {{"confirm", true}}}});
  Json reply = client.WaitResponse(id);
  EXPECT_TRUE(ToolError(reply).is_null()) << Dump(reply);
  EXPECT_EQ(tools.danger_runs.load(), 1);

  // Remembered: the second call asks nothing.
  EXPECT_TRUE(ToolError(client.CallTool("danger", Json::object())).is_null());
  EXPECT_EQ(tools.danger_runs.load(), 2);
  EXPECT_EQ(Elicitations(client).size(), 1u);

  // RequireConsent uses the same machinery; an accept without content also grants.
  Json pid = client.NextId();
  client.SendRequest(pid, "tools/call", {{"name", "probe"}, {"arguments", {{"network", true}}}});
  Json ask2 = WaitElicitation(client, 2);
  ASSERT_TRUE(ask2.is_object());
  Answer(client, ask2, {{"action", "accept"}});
  EXPECT_TRUE(ToolError(client.WaitResponse(pid)).is_null());
  EXPECT_TRUE(ToolError(client.CallTool("probe", {{"network", true}})).is_null());
  EXPECT_EQ(Elicitations(client).size(), 2u);
  EXPECT_EQ(tools.probe_runs.load(), 2);

  // Another session has not consented: it is asked again.
  TestClient other(ts.server(), "other-session");
  other.Initialize(kLatestProtocolVersion, kElicitation);
  Json oid = other.NextId();
  other.SendRequest(oid, "tools/call", {{"name", "danger"}, {"arguments", Json::object()}});
  Json ask3 = WaitElicitation(other, 1);
  ASSERT_TRUE(ask3.is_object());
  Answer(other, ask3, {{"action", "decline"}});
  EXPECT_EQ(ToolError(other.WaitResponse(oid))["code"], "PERMISSION_DENIED");
}

TEST(ConsentTest, DeclineCancelAndAnUncheckedBoxAreRefused) {
  ConsentTools tools;
  TestServer ts(2);
  tools.Register(ts.server());
  TestClient client(ts.server());
  client.Initialize("2025-06-18", kElicitation);
  const Json answers[] = {
      {{"action", "decline"}},
      {{"action", "cancel"}},
      {{"action", "accept"}, {"content", {{"confirm", false}}}},
      {{"action", "maybe"}},
  };
  std::size_t n = 0;
  for (const Json& answer : answers) {
    Json id = client.NextId();
    client.SendRequest(id, "tools/call", {{"name", "danger"}, {"arguments", Json::object()}});
    Json ask = WaitElicitation(client, ++n);
    ASSERT_TRUE(ask.is_object()) << Dump(answer);
    EXPECT_FALSE(ask["params"].contains("mode"));  // a 2025-06-18 session knows no modes
    Answer(client, ask, answer);
    Json e = ToolError(client.WaitResponse(id));
    ASSERT_TRUE(e.is_object()) << Dump(answer);
    EXPECT_EQ(e["code"], "PERMISSION_DENIED") << Dump(answer);
    EXPECT_EQ(e["details"]["consentRequired"], "danger");
  }
  EXPECT_EQ(tools.danger_runs.load(), 0);
  // Nothing was remembered: the next call asks again.
  Json id = client.NextId();
  client.SendRequest(id, "tools/call", {{"name", "danger"}, {"arguments", Json::object()}});
  Json ask = WaitElicitation(client, ++n);
  ASSERT_TRUE(ask.is_object());
  Answer(client, ask, {{"action", "accept"}, {"content", {{"confirm", true}}}});
  EXPECT_TRUE(ToolError(client.WaitResponse(id)).is_null());
}

TEST(ConsentTest, AClientWithOnlyUrlElicitationCannotBeAsked) {
  ConsentTools tools;
  TestServer ts(2);
  tools.Register(ts.server());
  TestClient client(ts.server());
  client.Initialize(kLatestProtocolVersion, {{"elicitation", {{"url", Json::object()}}}});
  EXPECT_EQ(ToolError(client.CallTool("danger", Json::object()))["code"], "PERMISSION_DENIED");
  EXPECT_TRUE(Elicitations(client).empty());
}

// Reads the JSON Lines of an audit log.
std::vector<Json> ReadAudit(const std::string& path) {
  base::PosixEnv env;
  std::vector<Json> out;
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) return out;
  std::size_t start = 0;
  for (std::size_t nl; (nl = text->find('\n', start)) != std::string::npos; start = nl + 1) {
    out.push_back(ParseJson(text->substr(start, nl - start)));
  }
  return out;
}

TEST(ConsentTest, RefusalsAreAuditedAsDenied) {
  base::PosixEnv env;
  const std::string path = ::testing::TempDir() + "/consent_audit.jsonl";
  std::remove(path.c_str());
  auto log = policy::AuditLog::Open(path, env);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  std::shared_ptr<policy::AuditLog> audit = std::move(log).value();
  ConsentTools tools;
  ServerOptions options;
  options.audit_log = audit;
  {
    TestServer ts(2, options);
    tools.Register(ts.server());
    TestClient client(ts.server());
    client.Initialize();
    client.CallTool("danger", Json::object());
    client.CallTool("probe", {{"network", true}});
  }
  ASSERT_TRUE(audit->Close().ok());
  std::vector<Json> records = ReadAudit(path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["operation"], "danger");
  EXPECT_EQ(records[0]["status"], "denied");
  EXPECT_EQ(records[0]["errorCode"], "PERMISSION_DENIED");
  EXPECT_EQ(records[1]["operation"], "probe");
  EXPECT_EQ(records[1]["status"], "denied");
  std::remove(path.c_str());
}

// Resources: "r://open" (read, the default), "r://admin" (admin) and the template
// "t://{id}" (execute).
void AddScopedResources(Server& server) {
  auto reader = [](const std::string& uri, const ResourceVars&,
                   CallContext&) -> Result<std::vector<ResourceContents>> {
    return std::vector<ResourceContents>{{.uri = uri, .mime_type = "text/plain", .text = "body"}};
  };
  ASSERT_TRUE(server.resources().Add({.uri = "r://open", .name = "open"}, reader).ok());
  ASSERT_TRUE(server.resources()
                  .Add({.uri = "r://admin", .name = "admin", .scopes = {"admin"}}, reader)
                  .ok());
  ASSERT_TRUE(
      server.resources()
          .AddTemplate({.uri_template = "t://{id}", .name = "t", .scopes = {"execute"}}, reader)
          .ok());
}

std::vector<std::string> Names(const Json& reply, const char* key, const char* field) {
  std::vector<std::string> out;
  for (const Json& r : reply["result"][key]) out.push_back(r[field].get<std::string>());
  return out;
}

TEST(ResourceScopesTest, ListsLeaveOutAndReadsRefuseWhatTheCallerMayNotRead) {
  base::PosixEnv env;
  const std::string path = ::testing::TempDir() + "/resource_scopes_audit.jsonl";
  std::remove(path.c_str());
  auto log = policy::AuditLog::Open(path, env);
  ASSERT_TRUE(log.ok());
  std::shared_ptr<policy::AuditLog> audit = std::move(log).value();
  ServerOptions options;
  options.audit_log = audit;
  {
    TestServer ts(0, options);
    AddScopedResources(ts.server());
    TestClient reader(ts.server());
    reader.session().set_principal(Principal{"reader", {"read"}});
    reader.Initialize();
    EXPECT_THAT(Names(reader.Request("resources/list"), "resources", "uri"),
                ::testing::ElementsAre("r://open"));
    EXPECT_TRUE(
        Names(reader.Request("resources/templates/list"), "resourceTemplates", "uriTemplate")
            .empty());
    Json ok = reader.Request("resources/read", {{"uri", "r://open"}});
    EXPECT_EQ(ok["result"]["contents"][0]["text"], "body");
    for (const char* uri : {"r://admin", "t://7"}) {
      Json denied = reader.Request("resources/read", {{"uri", uri}});
      ASSERT_TRUE(denied.contains("error")) << Dump(denied);
      EXPECT_EQ(denied["error"]["code"], error_code::kPermissionDenied);
      EXPECT_EQ(denied["error"]["data"]["code"], "PERMISSION_DENIED");
      EXPECT_THAT(Dump(denied), ::testing::Not(HasSubstr("body")));
    }
    ASSERT_EQ(reader.channel().Hints().size(), 2u);  // HTTP answers these 403
    EXPECT_EQ(reader.channel().Hints()[0].http_status, 403);
    EXPECT_THAT(reader.channel().Hints()[0].scopes, ::testing::ElementsAre("admin"));

    TestClient admin(ts.server(), "admin-session");
    admin.Initialize();  // the default principal holds admin
    EXPECT_THAT(Names(admin.Request("resources/list"), "resources", "uri"),
                ::testing::ElementsAre("r://open", "r://admin"));
    EXPECT_THAT(
        Names(admin.Request("resources/templates/list"), "resourceTemplates", "uriTemplate"),
        ::testing::ElementsAre("t://{id}"));
    EXPECT_EQ(admin.Request("resources/read", {{"uri", "t://7"}})["result"]["contents"][0]["text"],
              "body");
  }
  ASSERT_TRUE(audit->Close().ok());
  std::vector<Json> records = ReadAudit(path);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0]["status"], "success");
  EXPECT_EQ(records[1]["operation"], "r://admin");
  EXPECT_EQ(records[1]["status"], "denied");
  EXPECT_EQ(records[1]["errorCode"], "PERMISSION_DENIED");
  EXPECT_EQ(records[2]["status"], "denied");
  EXPECT_EQ(records[3]["status"], "success");
  std::remove(path.c_str());
}

TEST(ResourceScopesTest, AnUnknownScopeIsRefusedAtRegistration) {
  TestServer ts(0);
  auto reader = [](const std::string&, const ResourceVars&,
                   CallContext&) -> Result<std::vector<ResourceContents>> {
    return std::vector<ResourceContents>{};
  };
  EXPECT_FALSE(
      ts.server().resources().Add({.uri = "r://x", .name = "x", .scopes = {"raed"}}, reader).ok());
  EXPECT_FALSE(ts.server()
                   .resources()
                   .AddTemplate({.uri_template = "t://{x}", .name = "t", .scopes = {""}}, reader)
                   .ok());
}

// A resource read takes a token from the principal's bucket, as a tool call does; a refusal
// is -32012 with the retryable error object, HTTP 429, and audited as denied.
TEST(ResourceScopesTest, ReadsTakeATokenFromThePrincipalsBucket) {
  base::MemEnv clock;  // time stands still: no refill
  ServerOptions options;
  options.rate_limiter = std::make_shared<policy::RateLimiter>(
      policy::RateLimitOptions{.per_minute = 60, .burst = 2}, clock);
  TestServer ts(0, options);
  AddScopedResources(ts.server());
  TestClient client(ts.server());
  client.session().set_principal(Principal{"reader", {"read"}});
  client.Initialize();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(
        client.Request("resources/read", {{"uri", "r://open"}})["result"]["contents"][0]["text"],
        "body");
  }
  Json limited = client.Request("resources/read", {{"uri", "r://open"}});
  ASSERT_TRUE(limited.contains("error")) << Dump(limited);
  EXPECT_EQ(limited["error"]["code"], error_code::kRateLimitExceeded);
  EXPECT_EQ(limited["error"]["data"]["code"], "RATE_LIMIT_EXCEEDED");
  EXPECT_EQ(limited["error"]["data"]["retryable"], true);
  EXPECT_GT(limited["error"]["data"]["retryDelayMs"].get<std::int64_t>(), 0);
  EXPECT_THAT(Dump(limited), ::testing::Not(HasSubstr("body")));
  std::vector<StatusHint> hints = client.channel().Hints();
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].http_status, 429);
  EXPECT_GE(hints[0].retry_after_seconds, 1);
  // Another principal has its own bucket.
  TestClient other(ts.server(), "other-session");
  other.session().set_principal(Principal{"other", {"read"}});
  other.Initialize();
  EXPECT_TRUE(other.Request("resources/read", {{"uri", "r://open"}}).contains("result"));
}

TEST(StatusHintTest, ScopeRateLimitAndBreakerRefusalsCarryTheirHttpStatus) {
  base::MemEnv clock;  // time stands still: no refill
  ServerOptions options;
  options.rate_limiter = std::make_shared<policy::RateLimiter>(
      policy::RateLimitOptions{.per_minute = 60, .burst = 2}, clock);
  TestServer ts(0, options);
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "store", .description = "store", .scopes = {"write"}},
                          {{"type", "object"}}, nullptr,
                          [](const Json&, CallContext&) -> Result<ToolResult> {
                            return ToolResult::Text("stored");
                          })
                  .ok());
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "flaky", .description = "flaky"}, {{"type", "object"}}, nullptr,
                          [](const Json&, CallContext&) -> Result<ToolResult> {
                            return BreakerRefusal(
                                "ctags",
                                policy::Admission{.allowed = false, .retry_after_ms = 2500});
                          })
                  .ok());
  TestClient client(ts.server());
  client.session().set_principal(Principal{"reader", {"read"}});
  client.Initialize();

  EXPECT_EQ(ToolError(client.CallTool("store", Json::object()))["code"], "PERMISSION_DENIED");
  std::vector<StatusHint> hints = client.channel().Hints();
  ASSERT_EQ(hints.size(), 1u);
  EXPECT_EQ(hints[0].http_status, 403);
  EXPECT_THAT(hints[0].scopes, ::testing::ElementsAre("write"));

  // The breaker's refusal (the handler ran: one token), then the bucket's.
  EXPECT_EQ(ToolError(client.CallTool("flaky", Json::object()))["code"], "RATE_LIMIT_EXCEEDED");
  hints = client.channel().Hints();
  ASSERT_EQ(hints.size(), 2u);
  EXPECT_EQ(hints[1].http_status, 429);
  EXPECT_EQ(hints[1].retry_after_seconds, 3);  // 2500 ms, rounded up
  client.CallTool("flaky", Json::object());
  Json limited = ToolError(client.CallTool("flaky", Json::object()));
  EXPECT_EQ(limited["code"], "RATE_LIMIT_EXCEEDED");
  EXPECT_THAT(limited["message"].get<std::string>(), HasSubstr("rate limit"));
  hints = client.channel().Hints();
  ASSERT_EQ(hints.size(), 4u);
  EXPECT_EQ(hints[3].http_status, 429);
  EXPECT_EQ(hints[3].retry_after_seconds,
            (limited["retryDelayMs"].get<std::int64_t>() + 999) / 1000);
  // Successes and other methods carry none.
  client.Request("tools/list");
  EXPECT_EQ(client.channel().Hints().size(), 4u);
}

// A temp file the test server's logger writes to.
class LogFile {
 public:
  LogFile() : path_(::testing::TempDir() + "/policy_log_" + std::to_string(::getpid()) + ".txt") {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  }
  ~LogFile() {
    if (fd_ >= 0) ::close(fd_);
    std::remove(path_.c_str());
  }
  int fd() const { return fd_; }
  std::string Text() const {
    base::PosixEnv env;
    Result<std::string> text = env.ReadFile(path_);
    return text.ok() ? *text : std::string();
  }

 private:
  std::string path_;
  int fd_ = -1;
};

std::size_t Count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(AuditFailureTest, AnUnwritableAuditLogFailsEveryCallClosedAndIsLoggedOnce) {
  base::PosixEnv env;
  // Every write to /dev/full fails with ENOSPC.
  auto log = policy::AuditLog::Open("/dev/full", env);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  std::shared_ptr<policy::AuditLog> audit = std::move(log).value();
  LogFile stderr_log;
  ASSERT_GE(stderr_log.fd(), 0);
  ServerOptions options;
  options.audit_log = audit;
  std::atomic<int> runs{0};
  {
    TestServer ts(0, options, TestServer::DefaultInfo(), stderr_log.fd());
    ASSERT_TRUE(ts.server()
                    .tools()
                    .AddRaw({.name = "echo", .description = "echo"}, {{"type", "object"}}, nullptr,
                            [&runs](const Json&, CallContext&) -> Result<ToolResult> {
                              ++runs;
                              return ToolResult::Text("echoed");
                            })
                    .ok());
    AddScopedResources(ts.server());
    TestClient client(ts.server());
    client.Initialize();
    // The first call is answered (the record is written after it, in the background) and its
    // record fails.
    EXPECT_TRUE(ToolError(client.CallTool("echo", Json::object())).is_null());
    EXPECT_FALSE(audit->Flush().ok());
    EXPECT_EQ(runs.load(), 1);

    std::string ref;
    for (int i = 0; i < 3; ++i) {
      Json e = ToolError(client.CallTool("echo", Json::object()));
      ASSERT_TRUE(e.is_object());
      EXPECT_EQ(e["code"], "INTERNAL_ERROR");
      EXPECT_EQ(e["retryable"], false);
      ASSERT_TRUE(e.contains("errorId"));
      if (ref.empty()) ref = e["errorId"].get<std::string>();
      EXPECT_EQ(e["errorId"], ref);  // names the one log line with the detail
      EXPECT_THAT(e["message"].get<std::string>(), ::testing::Not(HasSubstr("/dev/full")));
    }
    EXPECT_EQ(runs.load(), 1);  // fails closed: the handler never ran again

    Json read = client.Request("resources/read", {{"uri", "r://open"}});
    ASSERT_TRUE(read.contains("error")) << Dump(read);
    EXPECT_EQ(read["error"]["code"], error_code::kInternalError);
    EXPECT_EQ(read["error"]["data"]["code"], "INTERNAL_ERROR");
    EXPECT_EQ(read["error"]["data"]["errorId"], ref);

    // The session itself keeps working.
    EXPECT_TRUE(client.Request("ping").contains("result"));
    EXPECT_TRUE(client.Request("tools/list").contains("result"));

    const std::string text = stderr_log.Text();
    EXPECT_EQ(Count(text, "audit log failed"), 1u) << text;
    EXPECT_THAT(text, HasSubstr(ref));
    EXPECT_THAT(text, HasSubstr("/dev/full"));
  }
}

}  // namespace
}  // namespace trove::mcp

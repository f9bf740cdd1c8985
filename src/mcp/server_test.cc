#include "mcp/server.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <future>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/sqlite.h"
#include "base/testing/temp_dir.h"
#include "mcp/describe.h"
#include "mcp/json.h"
#include "mcp/jsonrpc.h"
#include "mcp/registry.h"
#include "mcp/stdio.h"
#include "mcp/testing/test_client.h"

namespace trove::mcp {
namespace {

using testing::Gate;
using ::testing::HasSubstr;
using testing::kWait;
using ::testing::Not;
using testing::NotificationsNamed;
using testing::TestClient;
using testing::TestServer;

// ---------------------------------------------------------------------------------------------
// The tools, resources and prompts every test server declares

struct EchoArgs {
  std::string message;
  std::optional<std::int32_t> count;
};
auto DescribeFields(Tag<EchoArgs>) {
  return Fields(Field("message", &EchoArgs::message, "Text to echo"),
                Field("count", &EchoArgs::count, "How many times", InRange(1, 5)));
}

struct EchoOut {
  std::string echoed;
  std::int32_t count = 0;
  std::vector<std::string> parts;
};
auto DescribeFields(Tag<EchoOut>) {
  return Fields(Field("echoed", &EchoOut::echoed, "The echoed text"),
                Field("count", &EchoOut::count, "How many times"),
                Field("parts", &EchoOut::parts, "Each repetition"));
}

Json ClosedObject() { return {{"type", "object"}, {"additionalProperties", false}}; }

Json ValidateSchema() {
  return ParseJson(R"({"type":"object","properties":{
      "name":{"type":"string","description":"A name"},
      "limit":{"type":"integer","minimum":1,"description":"A limit"},
      "level":{"type":"string","enum":["L0","L1","L2","L3"],"description":"A level"},
      "max files":{"type":"integer","description":"A file count"},
      "include":{"type":"array","items":{"type":"string"},"description":"Paths"}},
    "required":["name"],"additionalProperties":false})");
}

Json BlockSchema() {
  return ParseJson(R"({"type":"object","properties":{
      "report_after":{"type":"boolean","description":"Report progress and log once unblocked"}},
    "additionalProperties":false})");
}

struct ToolState {
  std::atomic<int> validate_runs{0};
};

Result<std::vector<ResourceContents>> ReadStatic(const std::string& uri, const ResourceVars&,
                                                 CallContext&) {
  return std::vector<ResourceContents>{{.uri = uri, .mime_type = "text/plain", .text = "static"}};
}

void RegisterAll(Server& server, Gate& gate, ToolState& state) {
  ToolRegistry& tools = server.tools();
  auto must = [](Status s) { ASSERT_TRUE(s.ok()) << s.ToString(); };

  must(tools.Add<EchoArgs, EchoOut>(
      {.name = "echo",
       .title = "Echo tool",
       .description = "Echoes a message",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      [](const EchoArgs& a, CallContext&) -> Result<EchoOut> {
        EchoOut out;
        out.count = a.count.value_or(1);
        for (int i = 0; i < out.count; ++i) {
          if (i > 0) out.echoed += ' ';
          out.echoed += a.message;
          out.parts.push_back(a.message);
        }
        return out;
      }));

  must(tools.AddRaw({.name = "validate", .description = "Validates its arguments"},
                    ValidateSchema(), nullptr,
                    [&state](const Json&, CallContext&) -> Result<ToolResult> {
                      ++state.validate_runs;
                      return ToolResult::Text("ran");
                    }));

  must(tools.AddRaw({.name = "throws", .description = "Throws"}, ClosedObject(), nullptr,
                    [](const Json&, CallContext&) -> Result<ToolResult> {
                      throw std::runtime_error("secret detail /etc/passwd");
                    }));

  must(tools.AddRaw({.name = "fails", .description = "Fails with a status"}, ClosedObject(),
                    nullptr, [](const Json&, CallContext&) -> Result<ToolResult> {
                      return Status::NotFound("version 7 does not exist");
                    }));

  must(tools.AddRaw({.name = "progress", .description = "Reports progress"}, ClosedObject(),
                    nullptr, [](const Json&, CallContext& ctx) -> Result<ToolResult> {
                      ctx.ReportProgress(0.5, 3, "start");
                      ctx.ReportProgress(0.5);   // not increasing: dropped
                      ctx.ReportProgress(0.25);  // decreasing: dropped
                      ctx.ReportProgress(1.5);
                      ctx.MakeProgress().Report(3, 3, "done");
                      return ToolResult::Text(ctx.has_progress_token() ? "with token" : "no token");
                    }));

  must(tools.AddRaw({.name = "progress_nan", .description = "Reports a NaN progress"},
                    ClosedObject(), nullptr,
                    [](const Json&, CallContext& ctx) -> Result<ToolResult> {
                      ctx.ReportProgress(1);
                      ctx.ReportProgress(std::numeric_limits<double>::quiet_NaN());
                      ctx.ReportProgress(0.5);
                      ctx.ReportProgress(2);
                      return ToolResult::Text("done");
                    }));

  must(tools.AddRaw(
      {.name = "log", .description = "Logs at every level"}, ClosedObject(), nullptr,
      [](const Json&, CallContext& ctx) -> Result<ToolResult> {
        for (int i = 0; i <= static_cast<int>(LogSeverity::kEmergency); ++i) {
          auto level = static_cast<LogSeverity>(i);
          ctx.Log(level, "test.log", Json{{"level", std::string(LogSeverityName(level))}});
        }
        return ToolResult::Text("logged");
      }));

  must(tools.AddRaw({.name = "block", .description = "Blocks until released or cancelled"},
                    BlockSchema(), nullptr,
                    [&gate](const Json& args, CallContext& ctx) -> Result<ToolResult> {
                      ctx.cancellation().OnCancel([&gate] { gate.MarkCancelled(); });
                      ctx.ReportProgress(1);
                      bool released = gate.Wait([&ctx] { return ctx.cancelled(); });
                      if (args.value("report_after", false)) {
                        ctx.ReportProgress(100);
                        ctx.Log(LogSeverity::kEmergency, "test.block", "after");
                      }
                      gate.MarkFinished();
                      return ToolResult::Text(released ? "released" : "not released");
                    }));

  must(tools.AddWithContent<NoArgs>(
      {.name = "no_args", .description = "Takes nothing"},
      [](const NoArgs&, CallContext&) -> Result<ToolResult> { return ToolResult::Text("none"); }));

  must(tools.AddRaw({.name = "error_with_structured", .description = "A domain error"},
                    ClosedObject(),
                    ParseJson(R"({"type":"object","properties":{"x":{"type":"integer"}},
                                  "required":["x"]})"),
                    [](const Json&, CallContext&) -> Result<ToolResult> {
                      ToolResult r = ToolResult::Text("domain failure");
                      r.structured = Json{{"x", 1}};
                      r.is_error = true;
                      return r;
                    }));

  must(tools.AddRaw({.name = "sample", .description = "Asks the client to sample"}, ClosedObject(),
                    nullptr, [](const Json&, CallContext& ctx) -> Result<ToolResult> {
                      ASSIGN_OR_RETURN(
                          Json result,
                          ctx.SendClientRequest("sampling/createMessage",
                                                Json{{"messages", Json::array()}, {"maxTokens", 5}},
                                                std::chrono::milliseconds(3000)));
                      return ToolResult::Text("sampled: " + Dump(result));
                    }));

  ResourceRegistry& resources = server.resources();
  must(resources.Add({.uri = "test://static",
                      .name = "static",
                      .title = "Static",
                      .description = "A static text",
                      .mime_type = "text/plain",
                      .subscribable = true},
                     ReadStatic));
  must(resources.AddTemplate(
      {.uri_template = "test://template/{id}/data",
       .name = "template",
       .title = "Template",
       .description = "Data by id",
       .mime_type = "application/octet-stream"},
      [&gate](const std::string& uri, const ResourceVars& vars,
              CallContext& ctx) -> Result<std::vector<ResourceContents>> {
        const std::string& id = vars.at("id");
        if (id == "missing") return Status::NotFound("no data for " + id);
        if (id == "broken") return Status::Internal("sqlite: disk I/O error at /var/db");
        if (id == "slow") {
          gate.Wait([&ctx] { return ctx.cancelled(); });
          gate.MarkFinished();
        }
        if (id == "bin") return std::vector<ResourceContents>{{.uri = uri, .blob = "AAEC"}};
        return std::vector<ResourceContents>{
            {.uri = uri, .mime_type = "text/plain", .text = "data " + id}};
      },
      [](std::string_view, std::string_view value, const Json&) {
        std::vector<std::string> out;
        for (int i = 0; i < 150; ++i) {
          char v[8];
          std::snprintf(v, sizeof v, "v%03d", i);
          if (std::string_view(v).substr(0, value.size()) == value) out.push_back(v);
        }
        return out;
      }));

  PromptRegistry& prompts = server.prompts();
  must(prompts.Add(
      {.name = "greet",
       .title = "Greeting",
       .description = "Greets someone",
       .arguments = {{.name = "name", .description = "Who", .required = true},
                     {.name = "style", .description = "How"}}},
      [](const std::map<std::string, std::string>& args, CallContext&) -> Result<Json> {
        Json content = {{"type", "text"}, {"text", "Hello, " + args.at("name") + "!"}};
        Json message = {{"role", "user"}, {"content", content}};
        return Json{{"description", "A greeting"}, {"messages", Json::array({message})}};
      },
      [](std::string_view argument, std::string_view value, const Json& context) {
        std::vector<std::string> out;
        if (argument == "name") {
          for (const char* n : {"alice", "albert", "bob"}) {
            if (std::string_view(n).substr(0, value.size()) == value) out.push_back(n);
          }
        } else if (argument == "style" && context.contains("name")) {
          out.push_back(context["name"].get<std::string>() + "-style");
        }
        return out;
      }));
  must(prompts.Add({.name = "throwing_prompt", .description = "Throws"},
                   [](const std::map<std::string, std::string>&, CallContext&) -> Result<Json> {
                     throw std::runtime_error("prompt secret");
                   }));
}

// Declares everything for a test; the gate and state outlive the server and its handlers.
class World {
 public:
  explicit World(std::size_t workers = 0, ServerOptions options = {}, int log_fd = -1)
      : ts_(workers, options, TestServer::DefaultInfo(), log_fd) {
    RegisterAll(ts_.server(), gate, state);
  }
  Server& server() { return ts_.server(); }
  base::ThreadPool& pool() { return ts_.pool(); }

  Gate gate;
  ToolState state;

 private:
  TestServer ts_;
};

// The result of a response, or a failure when it is an error or missing.
Json ResultOf(const Json& response) {
  EXPECT_TRUE(response.contains("result")) << Dump(response);
  return response.contains("result") ? response["result"] : Json();
}

// The error code of a response (0 when it is not an error).
int ErrorCodeOf(const Json& response) {
  if (!response.contains("error")) return 0;
  return response["error"].value("code", 0);
}

std::string ErrorMessageOf(const Json& response) {
  if (!response.contains("error")) return "";
  return response["error"].value("message", std::string());
}

// The text of content[0] of a tools/call response.
std::string TextOf(const Json& response) {
  Json result = ResultOf(response);
  if (!result.contains("content") || result["content"].empty()) return "";
  return result["content"][0].value("text", std::string());
}

Json CallParams(std::string_view name, const Json& arguments = Json::object(),
                const Json& meta = nullptr) {
  Json params = {{"name", name}, {"arguments", arguments}};
  if (!meta.is_null()) params["_meta"] = meta;
  return params;
}

// Asserts that every id in `ids` has exactly one response and that no other response exists.
void ExpectEachAnsweredOnce(const std::vector<Json>& messages, const std::vector<Json>& ids) {
  std::map<std::string, int> count;
  for (const auto& m : messages) {
    if (testing::IsResponse(m)) ++count[IdKey(m["id"])];
  }
  for (const auto& id : ids) {
    EXPECT_EQ(count[IdKey(id)], 1) << "id " << Dump(id);
    count.erase(IdKey(id));
  }
  for (const auto& [key, n] : count) ADD_FAILURE() << "unexpected response(s) to id " << key;
}

// ---------------------------------------------------------------------------------------------
// Lifecycle and version negotiation

TEST(LifecycleTest, PingBeforeInitializeIsAnswered) {
  World w;
  TestClient c(w.server());
  Json response = c.Request("ping");
  EXPECT_EQ(Dump(response), R"({"jsonrpc":"2.0","id":1,"result":{}})");
  EXPECT_FALSE(c.session().initialized());
}

TEST(LifecycleTest, OtherRequestsBeforeInitializeAreRejected) {
  World w;
  TestClient c(w.server());
  for (const char* method : {"tools/list", "tools/call", "resources/list", "prompts/get",
                             "logging/setLevel", "completion/complete", "no/such/method"}) {
    SCOPED_TRACE(method);
    Json response = c.Request(method, Json{{"name", "echo"}, {"level", "debug"}});
    EXPECT_EQ(ErrorCodeOf(response), error_code::kInvalidRequest);
    EXPECT_EQ(ErrorMessageOf(response), "invalid request: server not initialized");
  }
  EXPECT_EQ(w.state.validate_runs.load(), 0);
}

TEST(LifecycleTest, InitializeResult) {
  World w;
  TestClient c(w.server());
  Json response = c.Initialize();
  EXPECT_EQ(Dump(ResultOf(response)),
            R"({"protocolVersion":"2025-11-25",)"
            R"("capabilities":{"tools":{},"resources":{"subscribe":true},"prompts":{},)"
            R"("logging":{},"completions":{}},)"
            R"("serverInfo":{"name":"trove-test","version":"1.2.3","title":"Trove Test"},)"
            R"("instructions":"Call list_things first."})");
  EXPECT_TRUE(c.session().initialized());
  EXPECT_EQ(Dump(c.session().client_info()), R"({"name":"test-client","version":"0.0.1"})");
}

TEST(LifecycleTest, CapabilitiesFollowWhatIsRegistered) {
  TestServer ts;
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "t", .description = "T"}, ClosedObject(), nullptr,
                          [](const Json&, CallContext&) -> Result<ToolResult> {
                            return ToolResult::Text("t");
                          })
                  .ok());
  TestClient c(ts.server());
  EXPECT_EQ(Dump(ResultOf(c.Initialize())["capabilities"]),
            R"({"tools":{},"logging":{},"completions":{}})");

  // Methods of capabilities the server did not declare are not found.
  for (const char* method : {"resources/list", "resources/read", "resources/templates/list",
                             "resources/subscribe", "prompts/list", "prompts/get"}) {
    SCOPED_TRACE(method);
    EXPECT_EQ(ErrorCodeOf(c.Request(method, Json{{"uri", "x://y"}, {"name", "p"}})),
              error_code::kMethodNotFound);
  }
}

TEST(LifecycleTest, SecondInitializeIsRejected) {
  World w;
  TestClient c(w.server());
  ASSERT_EQ(ResultOf(c.Initialize("2025-06-18"))["protocolVersion"], "2025-06-18");
  Json again = c.Initialize("2025-11-25");
  EXPECT_EQ(ErrorCodeOf(again), error_code::kInvalidRequest);
  EXPECT_EQ(c.session().protocol_version(), "2025-06-18");
}

TEST(LifecycleTest, AcceptedVersionsAreEchoed) {
  World w;
  for (const char* version : {"2025-11-25", "2025-06-18", "2025-03-26"}) {
    SCOPED_TRACE(version);
    TestClient c(w.server(), version);
    EXPECT_EQ(ResultOf(c.Initialize(version))["protocolVersion"], version);
    EXPECT_EQ(c.session().protocol_version(), version);
  }
}

TEST(LifecycleTest, OtherVersionsGetTheLatest) {
  World w;
  for (const char* version :
       {"1999-01-01", "2024-11-05", "2024-10-07", "", "2025-11-26", "2026-07-28"}) {
    SCOPED_TRACE(version);
    TestClient c(w.server(), version);
    EXPECT_EQ(ResultOf(c.Initialize(version))["protocolVersion"], "2025-11-25");
    EXPECT_EQ(c.session().protocol_version(), "2025-11-25");
  }
  TestClient c(w.server());
  Json response = c.Request("initialize", Json{{"protocolVersion", 20251125}});
  EXPECT_EQ(ResultOf(response)["protocolVersion"], "2025-11-25");
}

TEST(LifecycleTest, RequestsBeforeTheInitializedNotificationAreAccepted) {
  World w;
  TestClient c(w.server());
  ASSERT_TRUE(ResultOf(c.Request("initialize", Json{{"protocolVersion", "2025-11-25"}}))
                  .contains("protocolVersion"));
  Json response = c.Request("tools/list");
  EXPECT_TRUE(ResultOf(response).contains("tools"));
}

TEST(LifecycleTest, A20250326SessionSeesNoNewerFields) {
  World w;
  TestClient c(w.server());
  Json init = ResultOf(c.Initialize("2025-03-26"));
  EXPECT_FALSE(init["serverInfo"].contains("title"));

  Json tools = ResultOf(c.Request("tools/list"))["tools"];
  ASSERT_FALSE(tools.empty());
  for (const auto& tool : tools) {
    EXPECT_FALSE(tool.contains("title")) << Dump(tool);
    EXPECT_FALSE(tool.contains("outputSchema")) << Dump(tool);
    EXPECT_FALSE(tool.contains("icons")) << Dump(tool);
    EXPECT_TRUE(tool.contains("annotations"));
  }

  Json call = c.CallTool("echo", {{"message", "hi"}, {"count", 2}});
  Json result = ResultOf(call);
  EXPECT_FALSE(result.contains("structuredContent")) << Dump(result);
  // The text mirror still carries the data.
  EXPECT_EQ(TextOf(call), R"({"echoed":"hi hi","count":2,"parts":["hi","hi"]})");

  const Json resources_list = ResultOf(c.Request("resources/list"))["resources"];
  ASSERT_FALSE(resources_list.empty());
  for (const auto& r : resources_list) {
    EXPECT_FALSE(r.contains("title")) << Dump(r);
  }
  const Json templates_list = ResultOf(c.Request("resources/templates/list"))["resourceTemplates"];
  ASSERT_FALSE(templates_list.empty());
  for (const auto& t : templates_list) {
    EXPECT_FALSE(t.contains("title")) << Dump(t);
  }
  const Json prompts_list = ResultOf(c.Request("prompts/list"))["prompts"];
  ASSERT_FALSE(prompts_list.empty());
  for (const auto& p : prompts_list) {
    EXPECT_FALSE(p.contains("title")) << Dump(p);
  }
}

TEST(LifecycleTest, A20250618SessionSeesTitlesAndStructuredContent) {
  World w;
  TestClient c(w.server());
  Json init = ResultOf(c.Initialize("2025-06-18"));
  EXPECT_EQ(init["serverInfo"]["title"], "Trove Test");
  Json tools = ResultOf(c.Request("tools/list"))["tools"];
  ASSERT_FALSE(tools.empty());
  EXPECT_EQ(tools[0]["name"], "echo");
  EXPECT_EQ(tools[0]["title"], "Echo tool");
  EXPECT_TRUE(tools[0].contains("outputSchema"));
  EXPECT_TRUE(ResultOf(c.CallTool("echo", {{"message", "x"}})).contains("structuredContent"));
}

// ---------------------------------------------------------------------------------------------
// Messages

TEST(MessagesTest, NotificationsGetNoReply) {
  World w;
  TestClient c(w.server());
  c.Notify("notifications/initialized");  // before initialize, too
  c.Initialize();
  const std::size_t before = c.channel().size();
  c.Notify("notifications/initialized");
  c.Notify("notifications/unknown", Json{{"x", 1}});
  c.Notify("notifications/cancelled", Json{{"requestId", 12345}});
  c.Notify("notifications/cancelled", Json{{"no", "id"}});
  c.Notify("notifications/progress", Json{{"progressToken", 1}, {"progress", 1}});
  c.Notify("tools/list");  // a request method without an id is a notification
  c.Notify("ping");
  EXPECT_EQ(c.channel().size(), before);
  EXPECT_EQ(Dump(ResultOf(c.Request("ping"))), "{}");
  EXPECT_EQ(c.channel().size(), before + 1);
}

TEST(MessagesTest, ResponsesFromTheClientAreDroppedSilently) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  const std::size_t before = c.channel().size();
  c.SendRaw(R"({"jsonrpc":"2.0","id":99,"result":{}})");
  c.SendRaw(R"({"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"m"}})");
  EXPECT_EQ(c.channel().size(), before);
}

TEST(MessagesTest, IdsAreEchoedWithTheirType) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  for (const char* id : {"5", R"("5")", "-1", "9007199254740993", R"("")"}) {
    SCOPED_TRACE(id);
    c.SendRaw(std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"method":"tools/list"})");
    std::vector<std::string> texts = c.channel().Texts();
    ASSERT_FALSE(texts.empty());
    EXPECT_EQ(texts.back().rfind(std::string(R"({"jsonrpc":"2.0","id":)") + id + ",", 0), 0u)
        << texts.back();
  }
}

TEST(MessagesTest, MalformedInputIsAnsweredAndTheServerStaysUp) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  struct Case {
    std::string text;
    int code;
    std::string id;
  };
  const std::vector<Case> cases = {
      {"not json", error_code::kParseError, "null"},
      {"{\"jsonrpc\":\"2.0\",\"id\":600,\"method\":\"ping\",\"params\":{\"s\":\"\xff\"}}",
       error_code::kParseError, "null"},
      {std::string(65, '[') + std::string(65, ']'), error_code::kParseError, "null"},
      {R"([{"jsonrpc":"2.0","id":500,"method":"ping"}])", error_code::kInvalidRequest, "null"},
      {R"({"id":700,"method":"ping"})", error_code::kInvalidRequest, "700"},
      {R"({"jsonrpc":"1.0","id":"a","method":"ping"})", error_code::kInvalidRequest, R"("a")"},
      {R"({"jsonrpc":"2.0","id":800,"method":8})", error_code::kInvalidRequest, "800"},
      {R"({"jsonrpc":"2.0","id":900,"method":"tools/list","params":[]})",
       error_code::kInvalidRequest, "900"},
      {R"({"jsonrpc":"2.0","id":null,"method":"ping"})", error_code::kInvalidRequest, "null"},
      {R"({"jsonrpc":"2.0","id":true,"method":"ping"})", error_code::kInvalidRequest, "null"},
      {R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})", error_code::kInvalidRequest, "null"},
      {R"({"jsonrpc":"2.0","id":{},"method":"ping"})", error_code::kInvalidRequest, "null"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.text.substr(0, 60));
    const std::size_t before = c.channel().size();
    c.SendRaw(k.text);
    std::vector<Json> messages = c.Messages();
    ASSERT_EQ(messages.size(), before + 1);
    EXPECT_EQ(ErrorCodeOf(messages.back()), k.code);
    EXPECT_EQ(Dump(messages.back()["id"]), k.id);
    // The next valid request is answered.
    EXPECT_EQ(Dump(ResultOf(c.Request("ping"))), "{}");
  }
}

TEST(MessagesTest, UnknownMethodIsMethodNotFound) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json response = c.Request("tools/frobnicate");
  EXPECT_EQ(ErrorCodeOf(response), error_code::kMethodNotFound);
  EXPECT_FALSE(response.contains("result"));
}

// ---------------------------------------------------------------------------------------------
// Tools

TEST(ToolsTest, ListEntry) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json tools = ResultOf(c.Request("tools/list"))["tools"];
  ASSERT_FALSE(tools.empty());
  Json expected = {{"name", "echo"},
                   {"title", "Echo tool"},
                   {"description", "Echoes a message"},
                   {"inputSchema", SchemaFor<EchoArgs>()},
                   {"outputSchema", SchemaFor<EchoOut>()},
                   {"annotations",
                    {{"readOnlyHint", true},
                     {"destructiveHint", false},
                     {"idempotentHint", true},
                     {"openWorldHint", false}}}};
  EXPECT_EQ(Dump(tools[0]), Dump(expected));
  // Defaults: destructive and open-world unless declared otherwise.
  Json validate = tools[1];
  ASSERT_EQ(validate["name"], "validate");
  EXPECT_EQ(
      Dump(validate["annotations"]),
      R"({"readOnlyHint":false,"destructiveHint":true,"idempotentHint":false,"openWorldHint":true})");
  EXPECT_EQ(Dump(validate["inputSchema"]), Dump(ValidateSchema()));  // served verbatim
  EXPECT_FALSE(validate.contains("outputSchema"));
  EXPECT_FALSE(ResultOf(c.Request("tools/list")).contains("nextCursor"));
}

TEST(ToolsTest, UnknownToolIsAProtocolError) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json response = c.CallTool("x", Json::object());
  EXPECT_EQ(ErrorCodeOf(response), error_code::kInvalidParams);
  EXPECT_EQ(ErrorMessageOf(response), "Unknown tool: x");
  EXPECT_FALSE(response.contains("result"));

  EXPECT_EQ(ErrorCodeOf(c.Request("tools/call", Json{{"arguments", Json::object()}})),
            error_code::kInvalidParams);
  EXPECT_EQ(ErrorCodeOf(c.Request("tools/call", Json{{"name", 5}})), error_code::kInvalidParams);
  EXPECT_EQ(ErrorCodeOf(c.Request("tools/call")), error_code::kInvalidParams);
}

TEST(ToolsTest, NonObjectArgumentsAreAProtocolError) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  for (const char* args : {"[]", R"(["message","hi"])", R"("hi")", "5", "true"}) {
    SCOPED_TRACE(args);
    Json response = c.CallTool("echo", ParseJson(args));
    EXPECT_EQ(ErrorCodeOf(response), error_code::kInvalidParams);
    EXPECT_FALSE(response.contains("result"));
  }
}

TEST(ToolsTest, MissingOrNullArgumentsAreAnEmptyObject) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  EXPECT_EQ(TextOf(c.Request("tools/call", Json{{"name", "no_args"}})), "none");
  EXPECT_EQ(TextOf(c.Request("tools/call", Json{{"name", "no_args"}, {"arguments", nullptr}})),
            "none");
  Json extra = ResultOf(c.CallTool("no_args", {{"x", 1}}));
  EXPECT_EQ(extra.value("isError", false), true);
}

TEST(ToolsTest, ValidationFailureIsAToolErrorWithEveryFailure) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json response = c.CallTool("validate", ParseJson(R"({"limit":0,"level":"L9","max files":"x",
                                                       "include":["a",2],"extra":true})"));
  Json result = ResultOf(response);
  EXPECT_EQ(result.value("isError", false), true);
  EXPECT_FALSE(result.contains("structuredContent"));
  EXPECT_EQ(TextOf(response),
            "invalid arguments for tool 'validate':\n"
            "arguments.extra: unexpected property (additionalProperties is false)\n"
            "arguments.include[1]: expected string, got integer\n"
            "arguments.level: must be one of \"L0\", \"L1\", \"L2\", \"L3\"; got \"L9\"\n"
            "arguments.limit: must be at least 1; got 0\n"
            "arguments.name: required property missing\n"
            "arguments['max files']: expected integer, got string");
  ASSERT_TRUE(result.contains("_meta"));
  Json error = result["_meta"]["trove/error"];
  EXPECT_EQ(error["code"], "INVALID_INPUT");
  EXPECT_EQ(error["category"], "validation");
  EXPECT_EQ(error["severity"], "low");
  EXPECT_EQ(error["statusCode"], 400);
  EXPECT_EQ(error["retryable"], false);
  EXPECT_TRUE(error.contains("timestamp"));
  EXPECT_EQ(
      Dump(error["errors"]),
      R"j([{"path":"arguments.extra","message":"unexpected property (additionalProperties is false)"},)j"
      R"j({"path":"arguments.include[1]","message":"expected string, got integer"},)j"
      R"j({"path":"arguments.level","message":"must be one of \"L0\", \"L1\", \"L2\", \"L3\"; got \"L9\""},)j"
      R"j({"path":"arguments.limit","message":"must be at least 1; got 0"},)j"
      R"j({"path":"arguments.name","message":"required property missing"},)j"
      R"j({"path":"arguments['max files']","message":"expected integer, got string"}])j");
  // The handler never saw invalid arguments.
  EXPECT_EQ(w.state.validate_runs.load(), 0);
  EXPECT_EQ(TextOf(c.CallTool("validate", {{"name", "n"}, {"limit", 30.0}})), "ran");
  EXPECT_EQ(w.state.validate_runs.load(), 1);
}

TEST(ToolsTest, TypedToolValidationUsesTheDeclaredConstraints) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json response = c.CallTool("echo", {{"message", 5}, {"count", 9}});
  EXPECT_EQ(ResultOf(response).value("isError", false), true);
  EXPECT_EQ(TextOf(response),
            "invalid arguments for tool 'echo':\n"
            "arguments.count: must be at most 5; got 9\n"
            "arguments.message: expected string, got integer");
}

TEST(ToolsTest, ThrowingHandlerGivesASanitizedToolError) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
  std::string text;
  std::string whole;
  {
    World w(0, {}, fds[1]);
    TestClient c(w.server());
    c.Initialize();
    Json response = c.CallTool("throws", Json::object());
    whole = Dump(response);
    Json result = ResultOf(response);
    EXPECT_EQ(result.value("isError", false), true);
    text = TextOf(response);
    EXPECT_EQ(result["_meta"]["trove/error"]["code"], "INTERNAL_ERROR");
    EXPECT_EQ(result["_meta"]["trove/error"]["severity"], "high");
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_match(text, m,
                               std::regex(R"(INTERNAL_ERROR: internal error \(ref ([0-9a-f]+)\))")))
      << text;
  const std::string ref = m[1];
  for (const char* secret : {"secret", "passwd", "runtime_error", "exception"}) {
    EXPECT_THAT(whole, Not(HasSubstr(secret)));
  }
  // The detail goes to the log only, tied to the reply by the ref.
  std::string log;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    log.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_THAT(log, HasSubstr("ref " + ref));
  EXPECT_THAT(log, HasSubstr("secret detail /etc/passwd"));
}

TEST(ToolsTest, HandlerStatusIsAToolError) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json response = c.CallTool("fails", Json::object());
  Json result = ResultOf(response);
  EXPECT_EQ(result.value("isError", false), true);
  EXPECT_EQ(TextOf(response), "RESOURCE_NOT_FOUND: version 7 does not exist");
  EXPECT_EQ(result["_meta"]["trove/error"]["code"], "RESOURCE_NOT_FOUND");
  EXPECT_EQ(result["_meta"]["trove/error"]["message"], "version 7 does not exist");
}

TEST(ToolsTest, StructuredOutputAndItsTextMirrorAgree) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json response = c.CallTool("echo", {{"message", "h\xc3\xa9\n\"q\""}, {"count", 2}});
  Json result = ResultOf(response);
  ASSERT_TRUE(result.contains("structuredContent")) << Dump(result);
  EXPECT_FALSE(result.contains("isError"));
  Json structured = result["structuredContent"];
  EXPECT_EQ(structured["count"], 2);
  EXPECT_EQ(structured["echoed"], "h\xc3\xa9\n\"q\" h\xc3\xa9\n\"q\"");
  ASSERT_EQ(result["content"].size(), 1u);
  EXPECT_EQ(result["content"][0]["type"], "text");
  Json mirror = ParseJson(result["content"][0]["text"].get<std::string>());
  ASSERT_FALSE(mirror.is_discarded());
  EXPECT_EQ(Dump(mirror), Dump(structured));
  std::vector<ValidationError> errors = ValidateAgainstSchema(SchemaFor<EchoOut>(), structured);
  EXPECT_TRUE(errors.empty()) << FormatValidationErrors(errors);
}

TEST(ToolsTest, ErrorResultsCarryNoStructuredContent) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json response = c.CallTool("error_with_structured", Json::object());
  Json result = ResultOf(response);
  EXPECT_EQ(result.value("isError", false), true);
  EXPECT_FALSE(result.contains("structuredContent")) << Dump(result);
  EXPECT_EQ(TextOf(response), "domain failure");
}

// Reads everything written so far to the non-blocking pipe end `fd`.
std::string Drain(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  return out;
}

// A logger writing to a pipe, for tests that read what reached the server's log.
class LogPipe {
 public:
  LogPipe() {
    EXPECT_EQ(::pipe(fds_), 0);
    EXPECT_EQ(::fcntl(fds_[0], F_SETFL, O_NONBLOCK), 0);
  }
  ~LogPipe() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  int write_fd() const { return fds_[1]; }
  std::string Read() { return Drain(fds_[0]); }

 private:
  int fds_[2] = {-1, -1};
};

TEST(ToolsTest, ToolErrorFromStatusMapsCodes) {
  struct Case {
    Status status;
    const char* code;
    const char* category;
    const char* severity;
    int http;
    bool retryable;
    bool internal;  // the message stays in the log; the client gets a reference
  };
  const std::regex rfc3339(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");
  const std::string detail = "exec `DELETE FROM secret_table`: /srv/kb/private.db: disk I/O";
  for (const Case& k :
       {Case{Status::InvalidArgument("bad"), "INVALID_INPUT", "validation", "low", 400, false,
             false},
        Case{Status::Malformed("bad"), "INVALID_INPUT", "validation", "low", 400, false, false},
        Case{Status::ResourceExhausted("bad"), "INVALID_INPUT", "validation", "low", 400, false,
             false},
        Case{Status::NotFound("bad"), "RESOURCE_NOT_FOUND", "resource_not_found", "low", 404, false,
             false},
        Case{Status::PermissionDenied("bad"), "PERMISSION_DENIED", "authorization", "medium", 403,
             false, false},
        Case{Status::DeadlineExceeded("bad"), "INTERNAL_ERROR", "internal", "high", 500, true,
             false},
        Case{Status::Internal(detail), "INTERNAL_ERROR", "internal", "high", 500, false, true},
        Case{Status::Io(detail), "INTERNAL_ERROR", "internal", "high", 500, false, true},
        Case{Status::DataLoss(detail), "INTERNAL_ERROR", "internal", "high", 500, false, true},
        Case{Status::Cancelled(detail), "INTERNAL_ERROR", "internal", "high", 500, false, true},
        Case{Status::Unavailable(detail), "INTERNAL_ERROR", "internal", "high", 500, true, true}}) {
    SCOPED_TRACE(k.status.ToString());
    LogPipe log;
    base::Logger logger(base::LogLevel::kError, log.write_fd());
    ToolResult r = ToolErrorFromStatus(k.status, logger, "tool t");
    const std::string logged = log.Read();
    EXPECT_TRUE(r.is_error);
    EXPECT_FALSE(r.structured.has_value());
    ASSERT_EQ(r.content.size(), 1u);
    const std::string text = r.content[0]["text"];
    Json e = r.meta["trove/error"];
    EXPECT_EQ(e["code"], k.code);
    EXPECT_EQ(e["category"], k.category);
    EXPECT_EQ(e["severity"], k.severity);
    EXPECT_EQ(e["statusCode"], k.http);
    EXPECT_EQ(e["retryable"], k.retryable);
    EXPECT_EQ(e.contains("retryDelayMs"), k.retryable);
    if (k.retryable) {
      EXPECT_EQ(e["retryDelayMs"], kRetryDelayMs);
    }
    EXPECT_TRUE(std::regex_match(e["timestamp"].get<std::string>(), rfc3339)) << e["timestamp"];
    EXPECT_EQ(text, std::string(k.code) + ": " + e["message"].get<std::string>());
    if (!k.internal) {
      EXPECT_EQ(e["message"], "bad");
      EXPECT_FALSE(e.contains("errorId"));
      EXPECT_EQ(logged, "");
      continue;
    }
    // Nothing of the detail reaches the client; the log has all of it under the same id.
    ASSERT_TRUE(e.contains("errorId"));
    const std::string id = e["errorId"];
    EXPECT_TRUE(std::regex_match(id, std::regex("[0-9a-f]{12}"))) << id;
    EXPECT_THAT(text, HasSubstr("(ref " + id + ")"));
    for (const char* secret : {"secret_table", "/srv/kb", "private.db", "DELETE", "disk I/O"}) {
      EXPECT_THAT(Dump(r.meta), Not(HasSubstr(secret)));
      EXPECT_THAT(text, Not(HasSubstr(secret)));
    }
    EXPECT_THAT(logged, HasSubstr("tool t failed (ref " + id + "): " + k.status.ToString()));
  }
}

TEST(ToolsTest, ErrorIdsDiffer) {
  base::Logger logger(base::LogLevel::kOff);
  ToolResult a = ToolErrorFromStatus(Status::Io("x"), logger, "t");
  ToolResult b = ToolErrorFromStatus(Status::Io("x"), logger, "t");
  EXPECT_NE(a.meta["trove/error"]["errorId"], b.meta["trove/error"]["errorId"]);
}

// A tool backed by a real SQLite database: the errors come from base/sqlite.cc itself.
class SqliteToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_path_ = dir_.Abs("private_kb.db");
    Result<std::unique_ptr<base::Database>> writer = base::Database::Open(db_path_);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    writer_ = std::move(writer).value();
    ASSERT_TRUE(writer_->Exec("CREATE TABLE t(x)").ok());
    ASSERT_TRUE(ts_.server()
                    .tools()
                    .AddRaw({.name = "query", .description = "Runs a query"},
                            ParseJson(R"({"type":"object","properties":{
                                "write":{"type":"boolean","description":"Write instead"}},
                                "additionalProperties":false})"),
                            nullptr,
                            [this](const Json& args, CallContext&) -> Result<ToolResult> {
                              return Query(args.value("write", false));
                            })
                    .ok());
  }

  // What an engine does: open, run SQL, add the database path as context on the way out.
  Result<ToolResult> Query(bool write) {
    auto run = [&]() -> Status {
      ASSIGN_OR_RETURN(std::unique_ptr<base::Database> db,
                       base::Database::Open(db_path_, {.busy_timeout_ms = 10}));
      if (write) return db->Begin().status();
      return db->Prepare("SELECT secret_column FROM no_such_table").status();
    };
    RETURN_IF_ERROR(run().WithContext(db_path_));
    return ToolResult::Text("ok");
  }

  base::testing::TempDir dir_{"trove_mcp_sqlite"};
  std::string db_path_;
  std::unique_ptr<base::Database> writer_;
  LogPipe log_;
  TestServer ts_{0, ServerOptions{}, TestServer::DefaultInfo(), log_.write_fd()};
};

TEST_F(SqliteToolTest, SqlAndPathsStayInTheLogUnderTheErrorId) {
  TestClient c(ts_.server());
  c.Initialize();
  Json response = c.CallTool("query", Json::object());
  const std::string whole = Dump(response);
  const std::string logged = log_.Read();
  Json result = ResultOf(response);
  EXPECT_EQ(result.value("isError", false), true);
  Json e = result["_meta"]["trove/error"];
  EXPECT_EQ(e["code"], "INTERNAL_ERROR");
  EXPECT_EQ(e["retryable"], false);
  ASSERT_TRUE(e.contains("errorId")) << whole;
  const std::string id = e["errorId"];
  EXPECT_EQ(TextOf(response), "INTERNAL_ERROR: internal error (ref " + id + ")");
  for (const std::string& secret :
       {dir_.path(), std::string("private_kb"), std::string("secret_column"),
        std::string("no_such_table"), std::string("SELECT")}) {
    EXPECT_THAT(whole, Not(HasSubstr(secret)));
  }
  // The log line carries the id, the path and the SQL.
  std::smatch line;
  ASSERT_TRUE(std::regex_search(logged, line, std::regex("[^\n]*ref " + id + "[^\n]*"))) << logged;
  EXPECT_THAT(line.str(), HasSubstr(db_path_));
  EXPECT_THAT(line.str(), HasSubstr("SELECT secret_column FROM no_such_table"));
  EXPECT_THAT(line.str(), HasSubstr("no such table"));
}

TEST_F(SqliteToolTest, ABusyDatabaseIsRetryableWithADelay) {
  Result<base::Transaction> held = writer_->Begin();
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  TestClient c(ts_.server());
  c.Initialize();
  Json response = c.CallTool("query", Json{{"write", true}});
  const std::string whole = Dump(response);
  const std::string logged = log_.Read();
  Json e = ResultOf(response)["_meta"]["trove/error"];
  EXPECT_EQ(e["code"], "INTERNAL_ERROR");
  EXPECT_EQ(e["retryable"], true);
  EXPECT_EQ(e["retryDelayMs"], kRetryDelayMs);
  ASSERT_TRUE(e.contains("errorId")) << whole;
  EXPECT_THAT(whole, Not(HasSubstr(dir_.path())));
  EXPECT_THAT(whole, Not(HasSubstr("BEGIN")));
  EXPECT_THAT(logged,
              HasSubstr("ref " + e["errorId"].get<std::string>() + "): unavailable: " + db_path_));
  EXPECT_THAT(logged, HasSubstr("database is busy"));
  ASSERT_TRUE(held->Commit().ok());
  EXPECT_EQ(TextOf(c.CallTool("query", Json{{"write", true}})), "ok");
}

TEST(ToolsTest, OutputValidationOffPassesAMismatchThrough) {
  ServerOptions options;
  options.validate_output = false;
  TestServer ts(0, options);
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "bad", .description = "Bad output"}, ClosedObject(),
                          ParseJson(R"({"type":"object","properties":{"n":{"type":"integer"}}})"),
                          [](const Json&, CallContext&) -> Result<ToolResult> {
                            return ToolResult::Structured({{"n", "x"}});
                          })
                  .ok());
  TestClient c(ts.server());
  c.Initialize();
  EXPECT_EQ(Dump(ResultOf(c.CallTool("bad", Json::object()))["structuredContent"]), R"({"n":"x"})");
}

TEST(ServerDeathTest, InvalidStructuredOutputAbortsWhenValidating) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto run = [] {
    ServerOptions options;
    options.validate_output = true;
    TestServer ts(0, options);
    Status added = ts.server().tools().AddRaw(
        {.name = "bad", .description = "Bad output"}, ClosedObject(),
        ParseJson(R"({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]})"),
        [](const Json&, CallContext&) -> Result<ToolResult> {
          return ToolResult::Structured({{"n", "x"}});
        });
    if (!added.ok()) return;
    TestClient c(ts.server());
    c.Initialize();
    c.CallTool("bad", Json::object());
  };
  EXPECT_DEATH(run(), "CHECK failed");
}

// ---------------------------------------------------------------------------------------------
// Pagination

TEST(PaginationTest, CursorChainCoversEveryToolOnce) {
  ServerOptions options;
  options.page_size = 2;
  TestServer ts(0, options);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(ts.server()
                    .tools()
                    .AddRaw({.name = "t" + std::to_string(i), .description = "T"}, ClosedObject(),
                            nullptr,
                            [](const Json&, CallContext&) -> Result<ToolResult> {
                              return ToolResult::Text("t");
                            })
                    .ok());
  }
  TestClient c(ts.server());
  c.Initialize();
  std::vector<std::string> names;
  std::set<std::string> cursors;
  Json params = Json::object();
  int pages = 0;
  for (; pages < 10; ++pages) {
    Json result = ResultOf(c.Request("tools/list", params));
    ASSERT_TRUE(result.contains("tools"));
    EXPECT_LE(result["tools"].size(), 2u);
    for (const auto& t : result["tools"]) names.push_back(t["name"].get<std::string>());
    if (!result.contains("nextCursor")) break;
    ASSERT_TRUE(result["nextCursor"].is_string());
    EXPECT_TRUE(cursors.insert(result["nextCursor"].get<std::string>()).second);
    params = {{"cursor", result["nextCursor"]}};
  }
  EXPECT_EQ(pages, 2);  // three pages: 2 + 2 + 1
  EXPECT_EQ(names, (std::vector<std::string>{"t0", "t1", "t2", "t3", "t4"}));
  // An explicit null cursor is the first page.
  Json first = ResultOf(c.Request("tools/list", Json{{"cursor", nullptr}}));
  EXPECT_EQ(first["tools"][0]["name"], "t0");
}

TEST(PaginationTest, GarbageCursorsAreInvalidParams) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  for (const Json& cursor :
       {Json("!!!"), Json(""), Json("AAAA"), Json("not a cursor"), Json(5), Json::object()}) {
    SCOPED_TRACE(Dump(cursor));
    for (const char* method :
         {"tools/list", "resources/list", "resources/templates/list", "prompts/list"}) {
      SCOPED_TRACE(method);
      EXPECT_EQ(ErrorCodeOf(c.Request(method, Json{{"cursor", cursor}})),
                error_code::kInvalidParams);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Resources

TEST(ResourcesTest, ListAndTemplates) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  EXPECT_EQ(Dump(ResultOf(c.Request("resources/list"))),
            R"({"resources":[{"uri":"test://static","name":"static","title":"Static",)"
            R"("description":"A static text","mimeType":"text/plain"}]})");
  EXPECT_EQ(
      Dump(ResultOf(c.Request("resources/templates/list"))),
      R"({"resourceTemplates":[{"uriTemplate":"test://template/{id}/data","name":"template",)"
      R"("title":"Template","description":"Data by id","mimeType":"application/octet-stream"}]})");
}

TEST(ResourcesTest, Read) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  EXPECT_EQ(Dump(ResultOf(c.Request("resources/read", Json{{"uri", "test://static"}}))),
            R"({"contents":[{"uri":"test://static","mimeType":"text/plain","text":"static"}]})");
  EXPECT_EQ(
      Dump(ResultOf(c.Request("resources/read", Json{{"uri", "test://template/42/data"}}))),
      R"({"contents":[{"uri":"test://template/42/data","mimeType":"text/plain","text":"data 42"}]})");
  EXPECT_EQ(Dump(ResultOf(c.Request("resources/read", Json{{"uri", "test://template/bin/data"}}))),
            R"({"contents":[{"uri":"test://template/bin/data","blob":"AAEC"}]})");
}

TEST(ResourcesTest, UnknownResourceIsResourceNotFound) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  for (const char* uri : {"test://nope", "test://template/missing/data", "test://template//data"}) {
    SCOPED_TRACE(uri);
    Json response = c.Request("resources/read", Json{{"uri", uri}});
    EXPECT_EQ(ErrorCodeOf(response), error_code::kResourceNotFound);
    EXPECT_EQ(Dump(response["error"]["data"]), Dump(Json{{"uri", uri}}));
  }
  EXPECT_EQ(ErrorCodeOf(c.Request("resources/read", Json::object())), error_code::kInvalidParams);
  EXPECT_EQ(ErrorCodeOf(c.Request("resources/read", Json{{"uri", 5}})), error_code::kInvalidParams);
}

TEST(ResourcesTest, ReaderFailuresHideTheirDetail) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json response = c.Request("resources/read", Json{{"uri", "test://template/broken/data"}});
  EXPECT_EQ(ErrorCodeOf(response), error_code::kInternalError);
  EXPECT_THAT(ErrorMessageOf(response), HasSubstr("internal error (ref "));
  EXPECT_THAT(Dump(response), Not(HasSubstr("sqlite")));
  EXPECT_THAT(Dump(response), Not(HasSubstr("/var/db")));
}

TEST(ResourcesTest, SubscribeAndUnsubscribe) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  EXPECT_EQ(Dump(ResultOf(c.Request("resources/subscribe", Json{{"uri", "test://static"}}))), "{}");
  EXPECT_TRUE(c.session().subscribed("test://static"));

  std::size_t before = c.channel().size();
  w.server().NotifyResourceUpdated("test://static");
  w.server().NotifyResourceUpdated("test://other");
  std::vector<Json> messages = c.Messages();
  ASSERT_EQ(messages.size(), before + 1);
  EXPECT_EQ(
      Dump(messages.back()),
      R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://static"}})");

  // Another session that did not subscribe hears nothing.
  TestClient other(w.server(), "other");
  other.Initialize();
  std::size_t other_before = other.channel().size();
  w.server().NotifyResourceUpdated("test://static");
  EXPECT_EQ(other.channel().size(), other_before);

  EXPECT_EQ(Dump(ResultOf(c.Request("resources/unsubscribe", Json{{"uri", "test://static"}}))),
            "{}");
  EXPECT_FALSE(c.session().subscribed("test://static"));
  before = c.channel().size();
  w.server().NotifyResourceUpdated("test://static");
  EXPECT_EQ(c.channel().size(), before);

  // Unsubscribing what is not subscribed is a no-op; subscribing to nothing is not found.
  EXPECT_EQ(Dump(ResultOf(c.Request("resources/unsubscribe", Json{{"uri", "test://nope"}}))), "{}");
  Json unknown = c.Request("resources/subscribe", Json{{"uri", "test://nope"}});
  EXPECT_EQ(ErrorCodeOf(unknown), error_code::kResourceNotFound);
  EXPECT_EQ(Dump(unknown["error"]["data"]), R"({"uri":"test://nope"})");
}

TEST(ResourcesTest, NotifyUnderAPrefixReachesEachSubscribedUri) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  TestClient other(w.server(), "other");
  other.Initialize();
  for (const char* uri : {"test://template/a/data", "test://template/b/data", "test://static"}) {
    EXPECT_EQ(Dump(ResultOf(c.Request("resources/subscribe", Json{{"uri", uri}}))), "{}");
  }
  EXPECT_EQ(
      Dump(ResultOf(other.Request("resources/subscribe", Json{{"uri", "test://template/c/data"}}))),
      "{}");
  const std::size_t before = c.channel().size();
  const std::size_t other_before = other.channel().size();
  w.server().NotifyResourcesUpdatedUnder("test://template/");
  std::vector<Json> messages = c.Messages();
  ASSERT_EQ(messages.size(), before + 2);
  EXPECT_EQ(Dump(messages[before]["params"]), R"({"uri":"test://template/a/data"})");
  EXPECT_EQ(Dump(messages[before + 1]["params"]), R"({"uri":"test://template/b/data"})");
  std::vector<Json> other_messages = other.Messages();
  ASSERT_EQ(other_messages.size(), other_before + 1);
  EXPECT_EQ(Dump(other_messages.back()),
            R"({"jsonrpc":"2.0","method":"notifications/resources/updated",)"
            R"("params":{"uri":"test://template/c/data"}})");
  // Nothing under a prefix no one subscribed to.
  w.server().NotifyResourcesUpdatedUnder("test://nothing/");
  EXPECT_EQ(c.channel().size(), before + 2);
}

// ---------------------------------------------------------------------------------------------
// Prompts and completion

TEST(PromptsTest, ListAndGet) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json prompts = ResultOf(c.Request("prompts/list"))["prompts"];
  ASSERT_EQ(prompts.size(), 2u);
  EXPECT_EQ(Dump(prompts[0]),
            R"({"name":"greet","title":"Greeting","description":"Greets someone","arguments":[)"
            R"({"name":"name","description":"Who","required":true},)"
            R"({"name":"style","description":"How","required":false}]})");
  Json got =
      ResultOf(c.Request("prompts/get", Json{{"name", "greet"}, {"arguments", {{"name", "Ann"}}}}));
  EXPECT_EQ(got["messages"][0]["content"]["text"], "Hello, Ann!");
}

TEST(PromptsTest, Errors) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json unknown = c.Request("prompts/get", Json{{"name", "nope"}});
  EXPECT_EQ(ErrorCodeOf(unknown), error_code::kInvalidParams);
  EXPECT_EQ(ErrorMessageOf(unknown), "Unknown prompt: nope");
  EXPECT_EQ(ErrorCodeOf(c.Request("prompts/get", Json{{"name", "greet"}})),
            error_code::kInvalidParams);
  EXPECT_EQ(ErrorCodeOf(
                c.Request("prompts/get", Json{{"name", "greet"}, {"arguments", {{"style", "x"}}}})),
            error_code::kInvalidParams);
  EXPECT_EQ(
      ErrorCodeOf(c.Request("prompts/get", Json{{"name", "greet"}, {"arguments", {{"name", 5}}}})),
      error_code::kInvalidParams);
  EXPECT_EQ(ErrorCodeOf(c.Request("prompts/get", Json{{"name", "greet"}, {"arguments", "x"}})),
            error_code::kInvalidParams);
  EXPECT_EQ(ErrorCodeOf(c.Request("prompts/get", Json::object())), error_code::kInvalidParams);

  Json thrown = c.Request("prompts/get", Json{{"name", "throwing_prompt"}});
  EXPECT_EQ(ErrorCodeOf(thrown), error_code::kInternalError);
  EXPECT_THAT(ErrorMessageOf(thrown), HasSubstr("internal error (ref "));
  EXPECT_THAT(Dump(thrown), Not(HasSubstr("secret")));
}

TEST(CompletionTest, CompletesPromptArguments) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json r =
      c.Request("completion/complete", Json{{"ref", {{"type", "ref/prompt"}, {"name", "greet"}}},
                                            {"argument", {{"name", "name"}, {"value", "al"}}}});
  EXPECT_EQ(Dump(ResultOf(r)),
            R"({"completion":{"values":["alice","albert"],"total":2,"hasMore":false}})");

  Json with_context =
      c.Request("completion/complete", Json{{"ref", {{"type", "ref/prompt"}, {"name", "greet"}}},
                                            {"argument", {{"name", "style"}, {"value", ""}}},
                                            {"context", {{"arguments", {{"name", "bob"}}}}}});
  EXPECT_EQ(Dump(ResultOf(with_context)["completion"]["values"]), R"(["bob-style"])");

  Json none = c.Request("completion/complete",
                        Json{{"ref", {{"type", "ref/prompt"}, {"name", "throwing_prompt"}}},
                             {"argument", {{"name", "x"}, {"value", ""}}}});
  EXPECT_EQ(Dump(ResultOf(none)), R"({"completion":{"values":[],"total":0,"hasMore":false}})");
}

TEST(CompletionTest, CompletesTemplateVariablesUpToAHundred) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  Json r = c.Request("completion/complete",
                     Json{{"ref", {{"type", "ref/resource"}, {"uri", "test://template/{id}/data"}}},
                          {"argument", {{"name", "id"}, {"value", ""}}}});
  Json completion = ResultOf(r)["completion"];
  EXPECT_EQ(completion["values"].size(), 100u);
  EXPECT_EQ(completion["values"][0], "v000");
  EXPECT_EQ(completion["total"], 150);
  EXPECT_EQ(completion["hasMore"], true);

  Json few =
      c.Request("completion/complete",
                Json{{"ref", {{"type", "ref/resource"}, {"uri", "test://template/{id}/data"}}},
                     {"argument", {{"name", "id"}, {"value", "v14"}}}});
  EXPECT_EQ(ResultOf(few)["completion"]["values"].size(), 10u);
  EXPECT_EQ(ResultOf(few)["completion"]["hasMore"], false);
}

TEST(CompletionTest, UnknownReferencesAreInvalidParams) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  const Json argument = {{"name", "x"}, {"value", ""}};
  for (const Json& params :
       {Json{{"ref", {{"type", "ref/prompt"}, {"name", "nope"}}}, {"argument", argument}},
        Json{{"ref", {{"type", "ref/resource"}, {"uri", "test://nope/{x}"}}},
             {"argument", argument}},
        Json{{"ref", {{"type", "ref/tool"}, {"name", "echo"}}}, {"argument", argument}},
        Json{{"ref", {{"type", "ref/prompt"}, {"name", "greet"}}}}, Json{{"argument", argument}},
        Json::object()}) {
    SCOPED_TRACE(Dump(params));
    EXPECT_EQ(ErrorCodeOf(c.Request("completion/complete", params)), error_code::kInvalidParams);
  }
}

// ---------------------------------------------------------------------------------------------
// Logging

std::vector<std::string> LoggedLevels(const std::vector<Json>& messages) {
  std::vector<std::string> levels;
  for (const auto& n : NotificationsNamed(messages, "notifications/message")) {
    EXPECT_EQ(n["params"]["logger"], "test.log");
    EXPECT_EQ(n["params"]["data"]["level"], n["params"]["level"]);
    levels.push_back(n["params"]["level"].get<std::string>());
  }
  return levels;
}

TEST(LoggingTest, ThresholdIsPerSessionAndDefaultsToWarning) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  using Levels = std::vector<std::string>;

  std::size_t mark = c.channel().size();
  ASSERT_EQ(TextOf(c.CallTool("log", Json::object())), "logged");
  std::vector<Json> messages = c.Messages();
  messages.erase(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(mark));
  EXPECT_EQ(LoggedLevels(messages), (Levels{"warning", "error", "critical", "alert", "emergency"}));
  // The records travel before the response of the call that emitted them.
  EXPECT_TRUE(testing::IsResponse(messages.back()));

  EXPECT_EQ(Dump(ResultOf(c.Request("logging/setLevel", Json{{"level", "error"}}))), "{}");
  mark = c.channel().size();
  c.CallTool("log", Json::object());
  messages = c.Messages();
  messages.erase(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(mark));
  EXPECT_EQ(LoggedLevels(messages), (Levels{"error", "critical", "alert", "emergency"}));

  // Another session keeps its own threshold.
  TestClient other(w.server(), "other");
  other.Initialize();
  other.CallTool("log", Json::object());
  EXPECT_EQ(LoggedLevels(other.Messages()).size(), 5u);

  EXPECT_EQ(Dump(ResultOf(c.Request("logging/setLevel", Json{{"level", "debug"}}))), "{}");
  mark = c.channel().size();
  c.CallTool("log", Json::object());
  messages = c.Messages();
  messages.erase(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(mark));
  EXPECT_EQ(LoggedLevels(messages).size(), 8u);
}

TEST(LoggingTest, InvalidLevelIsInvalidParams) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  for (const Json& params : {Json{{"level", "verbose"}}, Json{{"level", "WARNING"}},
                             Json{{"level", 3}}, Json::object()}) {
    SCOPED_TRACE(Dump(params));
    EXPECT_EQ(ErrorCodeOf(c.Request("logging/setLevel", params)), error_code::kInvalidParams);
  }
  EXPECT_EQ(ErrorCodeOf(c.Request("logging/setLevel")), error_code::kInvalidParams);
  // The threshold is unchanged.
  EXPECT_EQ(c.session().log_level(), LogSeverity::kWarning);
}

// ---------------------------------------------------------------------------------------------
// Progress

std::vector<double> ProgressValues(const std::vector<Json>& messages, const Json& token) {
  std::vector<double> values;
  for (const auto& n : NotificationsNamed(messages, "notifications/progress")) {
    EXPECT_EQ(IdKey(n["params"]["progressToken"]), IdKey(token));
    EXPECT_TRUE(n["params"]["progress"].is_number()) << Dump(n);
    values.push_back(n["params"]["progress"].is_number() ? n["params"]["progress"].get<double>()
                                                         : -1);
  }
  return values;
}

TEST(ProgressTest, ReportsStrictlyIncreasingValuesBeforeTheResponse) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  for (const Json& token : {Json("tok-1"), Json(42), Json(-7)}) {
    SCOPED_TRACE(Dump(token));
    std::size_t mark = c.channel().size();
    Json response = c.CallTool("progress", Json::object(), Json{{"progressToken", token}});
    EXPECT_EQ(TextOf(response), "with token");
    std::vector<Json> messages = c.Messages();
    messages.erase(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(mark));
    EXPECT_EQ(ProgressValues(messages, token), (std::vector<double>{0.5, 1.5, 3}));
    std::vector<Json> notes = NotificationsNamed(messages, "notifications/progress");
    ASSERT_EQ(notes.size(), 3u);
    EXPECT_EQ(
        Dump(notes[0]["params"]),
        Dump(Json{
            {"progressToken", token}, {"progress", 0.5}, {"total", 3.0}, {"message", "start"}}));
    EXPECT_EQ(notes[2]["params"]["message"], "done");
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_TRUE(testing::IsResponse(messages.back()));
  }
}

TEST(ProgressTest, WithoutATokenNothingIsSent) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  for (const Json& meta : {Json(nullptr), Json::object(), Json{{"progressToken", true}},
                           Json{{"progressToken", 1.5}}, Json{{"other/key", 1}}}) {
    SCOPED_TRACE(Dump(meta));
    std::size_t mark = c.channel().size();
    Json response = c.CallTool("progress", Json::object(), meta);
    EXPECT_EQ(TextOf(response), "no token");
    EXPECT_EQ(c.channel().size(), mark + 1);
  }
}

// NaN is not greater than the last value; it must not be sent (as null) nor reset the order.
TEST(ProgressTest, NanReportsAreDropped) {
  World w;
  TestClient c(w.server());
  c.Initialize();
  std::size_t mark = c.channel().size();
  c.CallTool("progress_nan", Json::object(), Json{{"progressToken", "t"}});
  std::vector<Json> messages = c.Messages();
  messages.erase(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(mark));
  EXPECT_EQ(ProgressValues(messages, Json("t")), (std::vector<double>{1, 2}));
}

// ---------------------------------------------------------------------------------------------
// Cancellation, duplicates, the in-flight limit and deadlines (worker pool)

TEST(CancellationTest, CancelledRequestIsNeverAnswered) {
  World w(2);
  TestClient c(w.server());
  c.Initialize();
  c.SendRequest(10, "tools/call", CallParams("block"));
  ASSERT_TRUE(w.gate.WaitStarted(1));

  // The id must match with its JSON type: "10" is another request.
  c.Notify("notifications/cancelled", Json{{"requestId", "10"}});
  EXPECT_EQ(w.gate.cancelled(), 0);

  c.Notify("notifications/cancelled", Json{{"requestId", 10}, {"reason", "user"}});
  EXPECT_EQ(w.gate.cancelled(), 1);  // set by the notification, before it returns
  ASSERT_TRUE(w.gate.WaitFinished(1));
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  w.pool().Wait();

  EXPECT_TRUE(c.ResponsesFor(10).empty());
  EXPECT_GE(c.channel().closes(), 1);

  // A late cancellation of a finished id is ignored, and the server is still up.
  c.Notify("notifications/cancelled", Json{{"requestId", 10}});
  EXPECT_EQ(Dump(ResultOf(c.Request("ping"))), "{}");
  EXPECT_TRUE(c.ResponsesFor(10).empty());
  ExpectEachAnsweredOnce(c.Messages(), {Json(1), Json(2)});
}

TEST(CancellationTest, NothingFollowsACancellation) {
  World w(2);
  TestClient c(w.server());
  c.Initialize();
  c.SendRequest("p", "tools/call",
                CallParams("block", {{"report_after", true}}, {{"progressToken", "pt"}}));
  ASSERT_TRUE(w.gate.WaitStarted(1));
  ASSERT_TRUE(c.channel().WaitUntil([](const std::vector<Json>& messages) {
    return !NotificationsNamed(messages, "notifications/progress").empty();
  }));
  const std::size_t mark = c.channel().size();
  c.Notify("notifications/cancelled", Json{{"requestId", "p"}});
  ASSERT_TRUE(w.gate.WaitFinished(1));
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  w.pool().Wait();
  // The handler reported progress and logged after the cancellation: all dropped.
  EXPECT_EQ(c.channel().size(), mark);
}

TEST(CancellationTest, ARequestCancelledWhileQueuedNeverRuns) {
  World w(2);
  TestClient c(w.server());
  c.Initialize();
  c.SendRequest(1001, "tools/call", CallParams("block"));
  c.SendRequest(1002, "tools/call", CallParams("block"));
  ASSERT_TRUE(w.gate.WaitStarted(2));  // both workers are busy
  c.SendRequest(1003, "tools/call", CallParams("block"));
  c.Notify("notifications/cancelled", Json{{"requestId", 1003}});
  w.gate.Release();
  ASSERT_FALSE(c.WaitResponse(1001).is_null());
  ASSERT_FALSE(c.WaitResponse(1002).is_null());
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  w.pool().Wait();
  EXPECT_EQ(w.gate.started(), 2);
  EXPECT_EQ(TextOf(c.ResponsesFor(1001)[0]), "released");
  ExpectEachAnsweredOnce(c.Messages(), {Json(1), Json(1001), Json(1002)});
}

TEST(CancellationTest, InitializeCannotBeCancelled) {
  World w(2);
  TestClient c(w.server());
  c.SendRequest("init", "initialize", Json{{"protocolVersion", "2025-11-25"}});
  c.Notify("notifications/cancelled", Json{{"requestId", "init"}});
  ASSERT_EQ(c.ResponsesFor("init").size(), 1u);
  EXPECT_TRUE(c.session().initialized());
}

TEST(InFlightTest, DuplicateIdIsRejectedWhileTheOriginalContinues) {
  World w(2);
  TestClient c(w.server());
  c.Initialize();
  c.SendRequest(20, "tools/call", CallParams("block"));
  ASSERT_TRUE(w.gate.WaitStarted(1));

  c.SendRequest(20, "tools/list");
  std::vector<Json> dup = c.ResponsesFor(20);
  ASSERT_EQ(dup.size(), 1u);
  EXPECT_EQ(ErrorCodeOf(dup[0]), error_code::kInvalidRequest);
  EXPECT_EQ(ErrorMessageOf(dup[0]), "invalid request: a request with this id is already in flight");

  // "20" is a different id.
  c.SendRequest("20", "tools/list");
  EXPECT_TRUE(ResultOf(c.WaitResponse("20")).contains("tools"));

  w.gate.Release();
  ASSERT_TRUE(c.channel().WaitUntil([](const std::vector<Json>& messages) {
    return testing::ResponsesFor(messages, Json(20)).size() >= 2;
  }));
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  w.pool().Wait();
  std::vector<Json> all = c.ResponsesFor(20);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(ErrorCodeOf(all[0]), error_code::kInvalidRequest);
  EXPECT_EQ(TextOf(all[1]), "released");
  EXPECT_EQ(w.gate.started(), 1);

  // Once finished, the id may be used again.
  c.SendRequest(20, "tools/list");
  ASSERT_TRUE(c.channel().WaitUntil([](const std::vector<Json>& messages) {
    return testing::ResponsesFor(messages, Json(20)).size() >= 3;
  }));
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  all = c.ResponsesFor(20);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_TRUE(ResultOf(all[2]).contains("tools"));
}

// Control requests (ping, setLevel) are answered inline, but an id still in flight is still a
// duplicate: the client must never see two responses with one id.
TEST(InFlightTest, ControlRequestReusingAnInFlightIdIsRejected) {
  World w(2);
  TestClient c(w.server());
  c.Initialize();
  c.SendRequest(30, "tools/call", CallParams("block"));
  ASSERT_TRUE(w.gate.WaitStarted(1));
  c.SendRequest(30, "ping");
  std::vector<Json> dup = c.ResponsesFor(30);
  ASSERT_EQ(dup.size(), 1u);
  EXPECT_EQ(ErrorCodeOf(dup[0]), error_code::kInvalidRequest);
  w.gate.Release();
  ASSERT_TRUE(c.channel().WaitUntil([](const std::vector<Json>& messages) {
    return testing::ResponsesFor(messages, Json(30)).size() >= 2;
  }));
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  EXPECT_EQ(TextOf(c.ResponsesFor(30)[1]), "released");
}

TEST(InFlightTest, LimitGivesRetryableServerBusy) {
  ServerOptions options;
  options.max_in_flight = 2;
  World w(2, options);
  TestClient c(w.server());
  c.Initialize();
  c.SendRequest(101, "tools/call", CallParams("block"));
  c.SendRequest(102, "tools/call", CallParams("block"));
  ASSERT_TRUE(w.gate.WaitStarted(2));

  c.SendRequest(103, "tools/list");
  Json busy = c.WaitResponse(103);
  EXPECT_EQ(ErrorCodeOf(busy), error_code::kServerBusy);
  EXPECT_THAT(ErrorMessageOf(busy), HasSubstr("too many requests in flight"));
  EXPECT_EQ(busy["error"]["data"]["retryable"], true);

  // Control messages never count against the limit.
  EXPECT_EQ(Dump(ResultOf(c.Request("ping"))), "{}");
  EXPECT_EQ(Dump(ResultOf(c.Request("logging/setLevel", Json{{"level", "info"}}))), "{}");

  w.gate.Release();
  ASSERT_FALSE(c.WaitResponse(101).is_null());
  ASSERT_FALSE(c.WaitResponse(102).is_null());
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  w.pool().Wait();
  EXPECT_TRUE(ResultOf(c.Request("tools/list")).contains("tools"));
  // Initialize, ping, setLevel and the last tools/list took ids 1-4.
  ExpectEachAnsweredOnce(c.Messages(),
                         {Json(1), Json(2), Json(3), Json(4), Json(101), Json(102), Json(103)});
  EXPECT_EQ(TextOf(c.ResponsesFor(101)[0]), "released");
}

TEST(DeadlineTest, ToolTimesOutAsAToolErrorAndIsCancelled) {
  ServerOptions options;
  options.handler_deadline = std::chrono::milliseconds(300);
  World w(2, options);
  TestClient c(w.server());
  c.Initialize();
  c.SendRequest(30, "tools/call",
                CallParams("block", {{"report_after", true}}, {{"progressToken", 30}}));
  Json response = c.WaitResponse(30, std::chrono::milliseconds(4000));
  ASSERT_FALSE(response.is_null()) << "no reply after the deadline";
  Json result = ResultOf(response);
  EXPECT_EQ(result.value("isError", false), true);
  EXPECT_THAT(TextOf(response), HasSubstr("timed out after 0.3 s"));
  EXPECT_FALSE(result.contains("structuredContent"));

  // The handler's token was cancelled; what it does afterwards is never sent.
  ASSERT_TRUE(w.gate.WaitFinished(1));
  EXPECT_EQ(w.gate.cancelled(), 1);
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  w.pool().Wait();
  std::vector<Json> messages = c.Messages();
  ASSERT_FALSE(messages.empty());
  EXPECT_TRUE(testing::IsResponse(messages.back()) && testing::HasId(messages.back(), 30))
      << Dump(messages.back());
  EXPECT_EQ(c.ResponsesFor(30).size(), 1u);
  // Progress 1 (reported before blocking) may or may not beat the deadline; 100 never comes.
  for (double v : ProgressValues(messages, Json(30))) EXPECT_EQ(v, 1);
  EXPECT_TRUE(NotificationsNamed(messages, "notifications/message").empty());
}

TEST(DeadlineTest, PerToolDeadlineOverridesTheServerDefault) {
  Gate gate;
  TestServer ts(2);
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "slow",
                           .description = "Waits for cancellation",
                           .deadline = std::chrono::milliseconds(200)},
                          ClosedObject(), nullptr,
                          [&gate](const Json&, CallContext& ctx) -> Result<ToolResult> {
                            gate.Wait([&ctx] { return ctx.cancelled(); });
                            gate.MarkFinished();
                            return ToolResult::Text("late");
                          })
                  .ok());
  TestClient c(ts.server());
  c.Initialize();
  c.SendRequest(7, "tools/call", CallParams("slow"));
  Json response = c.WaitResponse(7, std::chrono::milliseconds(4000));
  ASSERT_FALSE(response.is_null());
  EXPECT_THAT(TextOf(response), HasSubstr("timed out after 0.2 s"));
  ASSERT_TRUE(gate.WaitFinished(1));
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  ts.pool().Wait();
  EXPECT_EQ(c.ResponsesFor(7).size(), 1u);
}

TEST(DeadlineTest, NonToolRequestTimesOutWithRequestTimeout) {
  ServerOptions options;
  options.handler_deadline = std::chrono::milliseconds(300);
  World w(2, options);
  TestClient c(w.server());
  c.Initialize();
  c.SendRequest("r", "resources/read", Json{{"uri", "test://template/slow/data"}});
  Json response = c.WaitResponse("r", std::chrono::milliseconds(4000));
  ASSERT_FALSE(response.is_null());
  EXPECT_EQ(ErrorCodeOf(response), error_code::kRequestTimeout);
  EXPECT_THAT(ErrorMessageOf(response), HasSubstr("timed out after 0.3 s"));
  ASSERT_TRUE(w.gate.WaitFinished(1));
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  w.pool().Wait();
  EXPECT_EQ(c.ResponsesFor("r").size(), 1u);
}

TEST(InlineToolTest, RunInlineToolsAnswerOnTheReaderThread) {
  TestServer ts(2);
  std::thread::id ran_on;
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "quick", .description = "Cheap", .run_inline = true},
                          ClosedObject(), nullptr,
                          [&ran_on](const Json&, CallContext&) -> Result<ToolResult> {
                            ran_on = std::this_thread::get_id();
                            return ToolResult::Text("quick");
                          })
                  .ok());
  TestClient c(ts.server());
  c.Initialize();
  c.SendRequest(5, "tools/call", CallParams("quick"));
  // Answered before SendRequest returned, on this thread.
  ASSERT_EQ(c.ResponsesFor(5).size(), 1u);
  EXPECT_EQ(TextOf(c.ResponsesFor(5)[0]), "quick");
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

// The session's principal reaches handlers through the context, never from arguments.
TEST(PrincipalTest, HandlersSeeTheSessionPrincipalAndScopes) {
  TestServer ts(0);
  ASSERT_TRUE(ts.server()
                  .tools()
                  .AddRaw({.name = "whoami", .description = "Names the caller"}, ClosedObject(),
                          nullptr,
                          [](const Json&, CallContext& ctx) -> Result<ToolResult> {
                            return ToolResult::Text(ctx.principal().name + " " +
                                                    (ctx.HasScope("write") ? "w" : "-") +
                                                    (ctx.HasScope("read") ? "r" : "-"));
                          })
                  .ok());
  TestClient local(ts.server());
  local.Initialize();
  local.SendRequest(7, "tools/call", CallParams("whoami"));
  EXPECT_EQ(TextOf(local.WaitResponse(7)), "local wr");

  TestClient reader(ts.server());
  reader.session().set_principal(Principal{"token:0123456789ab", {"read"}});
  reader.Initialize();
  reader.SendRequest(7, "tools/call", CallParams("whoami"));
  EXPECT_EQ(TextOf(reader.WaitResponse(7)), "token:0123456789ab -r");
}

// ---------------------------------------------------------------------------------------------
// Exactly one reply per request

void SendMix(TestClient& c, std::vector<Json>& ids) {
  for (int i = 0; i < 60; ++i) {
    Json id = (i % 2 == 0) ? Json(100 + i) : Json("s" + std::to_string(i));
    ids.push_back(id);
    switch (i % 10) {
      case 0:
        c.SendRequest(id, "ping");
        break;
      case 1:
        c.SendRequest(id, "tools/list");
        break;
      case 2:
        c.SendRequest(id, "tools/call", CallParams("echo", {{"message", "m"}}));
        break;
      case 3:
        c.SendRequest(id, "tools/call", CallParams("nope"));
        break;
      case 4:
        c.SendRequest(id, "tools/call", CallParams("validate", {{"limit", 0}}));
        break;
      case 5:
        c.SendRequest(id, "tools/call", CallParams("throws"));
        break;
      case 6:
        c.SendRequest(id, "no/such/method");
        break;
      case 7:
        c.SendRequest(id, "resources/read", Json{{"uri", "test://nope"}});
        break;
      case 8:
        c.SendRequest(id, "prompts/get", Json{{"name", "greet"}, {"arguments", {{"name", "x"}}}});
        break;
      case 9:
        c.SendRequest(id, "tools/call", CallParams("fails"));
        break;
    }
  }
}

TEST(ExactlyOnceTest, EveryRequestIsAnsweredOnceInline) {
  World w;
  TestClient c(w.server());
  std::vector<Json> ids = {Json(1)};
  c.Initialize();
  SendMix(c, ids);
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  ExpectEachAnsweredOnce(c.Messages(), ids);
}

TEST(ExactlyOnceTest, EveryRequestIsAnsweredOnceOnThePool) {
  World w(2);
  TestClient c(w.server());
  std::vector<Json> ids = {Json(1)};
  c.Initialize();
  SendMix(c, ids);
  ASSERT_TRUE(c.channel().WaitUntil([&](const std::vector<Json>& messages) {
    std::size_t n = 0;
    for (const auto& m : messages) n += testing::IsResponse(m);
    return n >= ids.size();
  }));
  ASSERT_TRUE(c.session().WaitIdle(kWait));
  w.pool().Wait();
  ExpectEachAnsweredOnce(c.Messages(), ids);
  for (const auto& text : c.channel().Texts()) EXPECT_THAT(text, Not(HasSubstr("secret")));
}

// ---------------------------------------------------------------------------------------------
// Requests to the client

TEST(ClientRequestTest, RefusedLocallyWithoutTheCapability) {
  World w(2);
  TestClient c(w.server());
  c.Initialize();
  std::size_t mark = c.channel().size();
  Json response = c.CallTool("sample", Json::object());
  EXPECT_EQ(ResultOf(response).value("isError", false), true);
  EXPECT_THAT(TextOf(response), HasSubstr("did not declare the sampling capability"));
  EXPECT_EQ(c.channel().size(), mark + 1);  // no request went to the client
}

TEST(ClientRequestTest, UnavailableInInlineMode) {
  World w;
  TestClient c(w.server());
  c.Initialize(kLatestProtocolVersion, Json{{"sampling", Json::object()}});
  Json response = c.CallTool("sample", Json::object());
  EXPECT_EQ(ResultOf(response).value("isError", false), true);
  EXPECT_THAT(TextOf(response), HasSubstr("inline mode"));
}

TEST(ClientRequestTest, RoundTrip) {
  World w(2);
  TestClient c(w.server());
  c.Initialize(kLatestProtocolVersion, Json{{"sampling", Json::object()}});
  c.SendRequest("call", "tools/call", CallParams("sample"));
  Json request;
  ASSERT_TRUE(c.channel().WaitUntil([&](const std::vector<Json>& messages) {
    for (const auto& m : messages) {
      if (m.value("method", std::string()) == "sampling/createMessage") {
        request = m;
        return true;
      }
    }
    return false;
  }));
  ASSERT_TRUE(request["id"].is_number_integer()) << Dump(request);
  EXPECT_EQ(request["params"]["maxTokens"], 5);
  c.Send(
      Json{{"jsonrpc", "2.0"},
           {"id", request["id"]},
           {"result", {{"role", "assistant"}, {"content", {{"type", "text"}, {"text", "hi"}}}}}});
  Json response = c.WaitResponse("call");
  ASSERT_FALSE(response.is_null());
  EXPECT_EQ(TextOf(response),
            R"(sampled: {"role":"assistant","content":{"type":"text","text":"hi"}})");
}

// ---------------------------------------------------------------------------------------------
// stdio, in process

class Pipe {
 public:
  Pipe() { EXPECT_EQ(::pipe(fds_), 0); }
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  int read_fd() const { return fds_[0]; }
  int write_fd() const { return fds_[1]; }
  void CloseRead() {
    if (fds_[0] >= 0) ::close(fds_[0]);
    fds_[0] = -1;
  }
  void CloseWrite() {
    if (fds_[1] >= 0) ::close(fds_[1]);
    fds_[1] = -1;
  }

 private:
  int fds_[2] = {-1, -1};
};

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      ADD_FAILURE() << "write: " << errno;
      return;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

// Reads from `fd` until `buffer` holds `n` complete lines, EOF, or the timeout; returns the
// complete lines taken from the buffer.
std::vector<std::string> ReadLines(int fd, std::size_t n, std::string& buffer,
                                   std::chrono::milliseconds timeout = kWait) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto count = [&] {
    return static_cast<std::size_t>(std::count(buffer.begin(), buffer.end(), '\n'));
  };
  while (count() < n) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[4096];
    ssize_t r = ::read(fd, chunk, sizeof chunk);
    if (r <= 0) break;
    buffer.append(chunk, static_cast<std::size_t>(r));
  }
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(buffer.substr(start, nl - start));
  }
  buffer.erase(0, start);
  return lines;
}

std::string Line(const Json& message) { return Dump(message) + "\n"; }

// Runs ServeStdio on a pipe pair on its own thread.
class StdioRun {
 public:
  explicit StdioRun(Server& server) {
    result_ = done_.get_future();
    thread_ = std::thread([this, &server] {
      done_.set_value(ServeStdio(
          server,
          {.in_fd = in_.read_fd(), .out_fd = out_.write_fd(), .redirect_stdout_to_stderr = false}));
    });
  }
  ~StdioRun() {
    in_.CloseWrite();
    if (thread_.joinable()) thread_.join();
  }

  void Write(std::string_view data) { WriteAll(in_.write_fd(), data); }
  std::vector<std::string> Read(std::size_t n) { return ReadLines(out_.read_fd(), n, buffer_); }
  // Closes stdin and waits for ServeStdio to return; returns whether it did within the bound.
  bool CloseAndWait(Status* status) {
    in_.CloseWrite();
    if (result_.wait_for(kWait) != std::future_status::ready) return false;
    *status = result_.get();
    thread_.join();
    out_.CloseWrite();
    return true;
  }
  // The lines written after the last Read (call after CloseAndWait).
  std::vector<std::string> Rest() { return ReadLines(out_.read_fd(), 1000, buffer_); }

 private:
  Pipe in_;
  Pipe out_;
  std::string buffer_;
  std::promise<Status> done_;
  std::future<Status> result_;
  std::thread thread_;
};

Json InitializeMessage(const Json& id = 1) {
  return {{"jsonrpc", "2.0"},
          {"id", id},
          {"method", "initialize"},
          {"params", {{"protocolVersion", "2025-11-25"}, {"capabilities", Json::object()}}}};
}

TEST(StdioTest, FramesLinesAndSurvivesOversizeInput) {
  ServerOptions options;
  options.parse.max_message_bytes = 256;
  World w(0, options);
  StdioRun run(w.server());

  run.Write(Line(InitializeMessage()));
  run.Write(Line({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
  // Over the limit: -32600 with a null id, then the next line is served.
  run.Write(Line({{"jsonrpc", "2.0"},
                  {"id", 99},
                  {"method", "ping"},
                  {"params", {{"pad", std::string(400, 'x')}}}}));
  run.Write(Dump(Json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}) + "\r\n");
  run.Write("\n   \n\n");  // blank lines are skipped
  run.Write("{not json\n");
  // Far over the limit and larger than one read: discarded up to its newline.
  run.Write(std::string(200000, 'y') + "\n");
  run.Write(Line({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}}));
  // A message split across writes.
  std::string split = Line({{"jsonrpc", "2.0"}, {"id", "four"}, {"method", "ping"}});
  run.Write(split.substr(0, 10));
  run.Write(split.substr(10));

  std::vector<std::string> lines = run.Read(7);
  ASSERT_EQ(lines.size(), 7u);
  std::vector<Json> m;
  for (const auto& l : lines) {
    m.push_back(ParseJson(l));
    ASSERT_FALSE(m.back().is_discarded()) << l;
  }
  EXPECT_EQ(m[0]["id"], 1);
  EXPECT_EQ(m[0]["result"]["protocolVersion"], "2025-11-25");
  EXPECT_EQ(ErrorCodeOf(m[1]), error_code::kInvalidRequest);
  EXPECT_TRUE(m[1]["id"].is_null());
  EXPECT_EQ(lines[2], R"({"jsonrpc":"2.0","id":2,"result":{}})");
  EXPECT_EQ(ErrorCodeOf(m[3]), error_code::kParseError);
  EXPECT_TRUE(m[3]["id"].is_null());
  EXPECT_EQ(ErrorCodeOf(m[4]), error_code::kInvalidRequest);
  EXPECT_TRUE(m[4]["id"].is_null());
  EXPECT_EQ(m[5]["id"], 3);
  EXPECT_TRUE(m[5]["result"].contains("tools"));
  EXPECT_EQ(lines[6], R"({"jsonrpc":"2.0","id":"four","result":{}})");

  Status status;
  ASSERT_TRUE(run.CloseAndWait(&status)) << "ServeStdio did not return after EOF";
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(run.Rest().empty());
}

TEST(StdioTest, EofCancelsWhatStillRunsWithoutAReply) {
  World w(2);
  StdioRun run(w.server());
  run.Write(Line(InitializeMessage()));
  ASSERT_EQ(run.Read(1).size(), 1u);
  run.Write(Line(
      {{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"}, {"params", CallParams("block")}}));
  ASSERT_TRUE(w.gate.WaitStarted(1));
  Status status;
  ASSERT_TRUE(run.CloseAndWait(&status)) << "ServeStdio did not return after EOF";
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(w.gate.cancelled(), 1);
  ASSERT_TRUE(w.gate.WaitFinished(1));
  w.pool().Wait();
  for (const auto& line : run.Rest()) {
    EXPECT_THAT(line, Not(HasSubstr(R"("id":7)"))) << line;
  }
}

// Pipelined requests that arrive in one read get their replies in one write: over
// SOCK_SEQPACKET every write is one packet, so the reply count per packet shows the batching.
TEST(StdioTest, RepliesToOneReadLeaveInOneWrite) {
  World w;  // no workers: every request is answered on the reader thread
  int in[2];
  int out[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, in), 0);
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, out), 0);
  std::promise<Status> done;
  std::future<Status> result = done.get_future();
  std::thread serve([&] {
    done.set_value(ServeStdio(
        w.server(), {.in_fd = in[0], .out_fd = out[1], .redirect_stdout_to_stderr = false}));
  });

  std::string batch = Line(InitializeMessage());
  batch += Line({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  for (int id = 2; id <= 6; ++id)
    batch += Line({{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}});
  batch += "{not json\n";
  ASSERT_EQ(::send(in[1], batch.data(), batch.size(), 0), static_cast<ssize_t>(batch.size()));

  pollfd readable = {out[0], POLLIN, 0};
  ASSERT_EQ(::poll(&readable, 1, 10000), 1) << "no reply";
  std::vector<char> packet(1 << 16);
  ssize_t n = ::recv(out[0], packet.data(), packet.size(), 0);
  ASSERT_GT(n, 0);
  std::string text(packet.data(), static_cast<std::size_t>(n));
  std::vector<std::string> lines;
  for (std::size_t start = 0, nl; (nl = text.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    lines.push_back(text.substr(start, nl - start));
  }
  ASSERT_EQ(lines.size(), 7u) << text;  // initialize, five pings and the parse error, in order
  EXPECT_EQ(ParseJson(lines[0])["id"], 1);
  for (int id = 2; id <= 6; ++id) {
    EXPECT_EQ(lines[static_cast<std::size_t>(id - 1)],
              fmt::format(R"({{"jsonrpc":"2.0","id":{},"result":{{}}}})", id));
  }
  EXPECT_EQ(ErrorCodeOf(ParseJson(lines[6])), error_code::kParseError);

  ::shutdown(in[1], SHUT_WR);
  ASSERT_EQ(result.wait_for(kWait), std::future_status::ready) << "ServeStdio did not return";
  EXPECT_TRUE(result.get().ok());
  serve.join();
  for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
}

TEST(StdioTest, NotificationsWriteNothing) {
  World w;
  StdioRun run(w.server());
  run.Write(Line(InitializeMessage()));
  run.Write(Line({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
  run.Write(Line({{"jsonrpc", "2.0"}, {"method", "notifications/whatever"}}));
  run.Write(Line({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}));
  std::vector<std::string> lines = run.Read(2);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], R"({"jsonrpc":"2.0","id":2,"result":{}})");
  Status status;
  ASSERT_TRUE(run.CloseAndWait(&status));
  EXPECT_TRUE(run.Rest().empty());
}

// ---------------------------------------------------------------------------------------------
// ServerOptions::ordered_replies over stdio

Json Request(const Json& id, std::string_view method, const Json& params = nullptr) {
  Json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) m["params"] = params;
  return m;
}

Json BlockCall(const Json& id, const std::string& token) {
  return Request(id, "tools/call", CallParams("block", Json::object(), {{"progressToken", token}}));
}

// Parses `lines`; fails the test on a line that is not JSON.
std::vector<Json> ParseLines(const std::vector<std::string>& lines) {
  std::vector<Json> out;
  for (const auto& l : lines) {
    out.push_back(ParseJson(l));
    EXPECT_FALSE(out.back().is_discarded()) << l;
  }
  return out;
}

// The ids of the responses among `messages`, in order.
std::vector<Json> ResponseIds(const std::vector<Json>& messages) {
  std::vector<Json> ids;
  for (const auto& m : messages) {
    if (testing::IsResponse(m)) ids.push_back(m["id"]);
  }
  return ids;
}

ServerOptions Ordered() {
  ServerOptions options;
  options.ordered_replies = true;
  return options;
}

TEST(OrderedRepliesTest, LaterRepliesWaitForEarlierOnes) {
  World w(2, Ordered());
  StdioRun run(w.server());
  run.Write(Line(InitializeMessage()));
  ASSERT_EQ(run.Read(1).size(), 1u);
  // 10 blocks; 11 is answered inline and 12 on the pool, both before 13 starts (FIFO pool).
  run.Write(Line(BlockCall(10, "p10")));
  run.Write(Line(Request(11, "ping")));
  run.Write(Line(Request(12, "tools/call", CallParams("echo", {{"message", "m"}}))));
  run.Write(Line(BlockCall(13, "p13")));
  ASSERT_TRUE(w.gate.WaitStarted(2));
  // Both progress notifications flow at once; a worker's write also flushes anything the
  // reader held, so a reply to 11 or 12 would be among these lines if it had been sent.
  std::vector<Json> early = ParseLines(run.Read(2));
  ASSERT_EQ(early.size(), 2u);
  for (const auto& m : early)
    EXPECT_TRUE(testing::IsNotification(m, "notifications/progress")) << Dump(m);
  w.gate.Release();
  std::vector<Json> late = ParseLines(run.Read(4));
  EXPECT_EQ(Dump(ResponseIds(late)), "[10,11,12,13]");
  EXPECT_THAT(TextOf(late[2]), HasSubstr(R"("echoed":"m")"));
  Status status;
  ASSERT_TRUE(run.CloseAndWait(&status));
  EXPECT_TRUE(run.Rest().empty());
}

TEST(OrderedRepliesTest, ACancelledRequestHoldsNothingUp) {
  World w(2, Ordered());
  StdioRun run(w.server());
  run.Write(Line(InitializeMessage()));
  ASSERT_EQ(run.Read(1).size(), 1u);
  run.Write(Line(BlockCall(20, "p20")));
  run.Write(Line(Request(21, "ping")));
  std::vector<Json> progress = ParseLines(run.Read(1));
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_TRUE(testing::IsNotification(progress[0], "notifications/progress"));
  run.Write(Line({{"jsonrpc", "2.0"},
                  {"method", "notifications/cancelled"},
                  {"params", {{"requestId", 20}}}}));
  run.Write(Line(Request(22, "ping")));
  std::vector<Json> after = ParseLines(run.Read(2));
  EXPECT_EQ(Dump(ResponseIds(after)), "[21,22]");
  ASSERT_TRUE(w.gate.WaitFinished(1));
  Status status;
  ASSERT_TRUE(run.CloseAndWait(&status));
  for (const auto& line : run.Rest()) EXPECT_THAT(line, Not(HasSubstr(R"("id":20)"))) << line;
}

TEST(OrderedRepliesTest, ParseErrorsAndControlRepliesKeepTheirPlace) {
  ServerOptions options = Ordered();
  options.max_in_flight = 2;  // the reader waits while two replies are outstanding
  World w(2, options);
  StdioRun run(w.server());
  run.Write(Line(InitializeMessage()));
  ASSERT_EQ(run.Read(1).size(), 1u);
  run.Write(Line(BlockCall(30, "p30")));
  run.Write("{not json\n");
  run.Write(Line(Request(31, "no/such/method")));
  run.Write(Line(Request(32, "logging/setLevel", {{"level", "debug"}})));
  run.Write(Line(Request(33, "tools/list")));
  std::vector<Json> progress = ParseLines(run.Read(1));
  ASSERT_EQ(progress.size(), 1u);
  EXPECT_TRUE(testing::IsNotification(progress[0], "notifications/progress"));
  w.gate.Release();
  std::vector<Json> replies = ParseLines(run.Read(5));
  ASSERT_EQ(replies.size(), 5u);
  EXPECT_EQ(replies[0]["id"], 30);
  EXPECT_EQ(ErrorCodeOf(replies[1]), error_code::kParseError);
  EXPECT_TRUE(replies[1]["id"].is_null());
  EXPECT_EQ(ErrorCodeOf(replies[2]), error_code::kMethodNotFound);
  EXPECT_EQ(Dump(ResponseIds(replies)), "[30,null,31,32,33]");
  Status status;
  ASSERT_TRUE(run.CloseAndWait(&status));
}

TEST(OrderedRepliesTest, FiftyMixedRequestsAreAnsweredInOrder) {
  World w(2, Ordered());
  StdioRun run(w.server());
  run.Write(Line(InitializeMessage()));
  ASSERT_EQ(run.Read(1).size(), 1u);
  std::string batch;
  std::vector<Json> ids;
  for (int i = 0; i < 50; ++i) {
    Json id = i % 7 == 3 ? Json(fmt::format("s{}", i)) : Json(100 + i);
    ids.push_back(id);
    switch (i % 5) {
      case 0:
        batch += Line(Request(id, "tools/call",
                              CallParams("echo", {{"message", std::string(200 * i, 'x')}})));
        break;
      case 1:
        batch += Line(Request(id, "ping"));
        break;
      case 2:
        batch += Line(Request(id, "tools/call", CallParams("validate", {{"limit", 0}})));
        break;
      case 3:
        batch += Line(Request(id, "tools/list"));
        break;
      default:
        batch += Line(Request(id, "resources/read", {{"uri", "test://template/d/data"}}));
        break;
    }
  }
  // Written from another thread, since the replies fill the output pipe before the last
  // request is read.
  std::thread writer([&] { run.Write(batch); });
  std::vector<Json> replies = ParseLines(run.Read(50));
  writer.join();
  ASSERT_EQ(replies.size(), 50u);
  EXPECT_EQ(Dump(ResponseIds(replies)), Dump(Json(ids)));
  Status status;
  ASSERT_TRUE(run.CloseAndWait(&status));
}

TEST(OrderedRepliesTest, OffByDefault) { EXPECT_FALSE(ServerOptions{}.ordered_replies); }

}  // namespace
}  // namespace trove::mcp

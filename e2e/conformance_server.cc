// conformance_server: a test-only MCP server on the Trove core that registers every fixture
// the official conformance suite calls (docs/mcp.md §6.2), plus the tools Trove's own
// end-to-end and negative tests use (echo, slow, throw, schema_probe).
//
//   conformance_server                 # stdio
//   conformance_server --http 0        # Streamable HTTP on 127.0.0.1, free port
#include <fmt/core.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/hash.h"
#include "base/logging.h"
#include "base/thread_pool.h"
#include "mcp/describe.h"
#include "mcp/http.h"
#include "mcp/policy/options.h"
#include "mcp/serve.h"
#include "mcp/server.h"
#include "mcp/stdio.h"

namespace trove::e2e {
namespace {

using mcp::Json;

// A valid 1x1 PNG.
constexpr const char* kPngBase64 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJg"
    "gg==";

// A valid WAV: 16-bit mono PCM at 8 kHz, 8 silent samples.
std::string TinyWavBase64() {
  std::string w;
  auto u32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) w.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  auto u16 = [&](std::uint16_t v) {
    w.push_back(static_cast<char>(v & 0xff));
    w.push_back(static_cast<char>(v >> 8));
  };
  const std::uint32_t data_bytes = 16;
  w += "RIFF";
  u32(36 + data_bytes);
  w += "WAVEfmt ";
  u32(16);
  u16(1);      // PCM
  u16(1);      // mono
  u32(8000);   // sample rate
  u32(16000);  // byte rate
  u16(2);      // block align
  u16(16);     // bits per sample
  w += "data";
  u32(data_bytes);
  w.append(data_bytes, '\0');
  return base::Base64Encode(w);
}

Json TextItem(std::string text) { return {{"type", "text"}, {"text", std::move(text)}}; }

mcp::ToolResult Content(Json items) {
  mcp::ToolResult r;
  r.content = std::move(items);
  return r;
}

// Sleeps `ms` in 10 ms steps; returns false when cancelled.
bool SleepCancellable(mcp::CallContext& ctx, int ms) {
  for (int slept = 0; slept < ms; slept += 10) {
    if (ctx.cancelled()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(10, ms - slept)));
  }
  return !ctx.cancelled();
}

struct EchoArgs {
  std::string text;
};
inline auto DescribeFields(mcp::Tag<EchoArgs>) {
  return mcp::Fields(mcp::Field("text", &EchoArgs::text, "Text to echo back"));
}

struct SlowArgs {
  std::int64_t ms = 0;
};
inline auto DescribeFields(mcp::Tag<SlowArgs>) {
  return mcp::Fields(
      mcp::Field("ms", &SlowArgs::ms, "How long to run, in milliseconds", mcp::InRange(0, 600000)));
}
struct SlowResult {
  std::int64_t slept_ms = 0;
};
inline auto DescribeFields(mcp::Tag<SlowResult>) {
  return mcp::Fields(mcp::Field("slept_ms", &SlowResult::slept_ms, "Milliseconds slept"));
}

constexpr std::string_view kDepths[] = {"L0", "L1", "L2", "L3"};
struct ProbeArgs {
  std::string depth;
  std::optional<std::int64_t> limit;
  std::optional<std::vector<std::string>> include;
  std::optional<std::int64_t> max_files;
  std::optional<bool> flag;
};
inline auto DescribeFields(mcp::Tag<ProbeArgs>) {
  using A = ProbeArgs;
  return mcp::Fields(
      mcp::Field("depth", &A::depth, "Depth level", mcp::OneOf{kDepths}),
      mcp::Field("limit", &A::limit, "Page size", mcp::InRange(1, 1000)),
      mcp::Field("include", &A::include, "Globs to include"),
      mcp::Field("max files", &A::max_files, "A key that is not an identifier", mcp::AtLeast{0}),
      mcp::Field("flag", &A::flag, "A boolean"));
}
struct OkResult {
  bool ok = true;
};
inline auto DescribeFields(mcp::Tag<OkResult>) {
  return mcp::Fields(mcp::Field("ok", &OkResult::ok, "Always true"));
}

struct PromptArgs {
  std::string prompt;
};
inline auto DescribeFields(mcp::Tag<PromptArgs>) {
  return mcp::Fields(mcp::Field("prompt", &PromptArgs::prompt, "The prompt to send for sampling"));
}
struct MessageArgs {
  std::string message;
};
inline auto DescribeFields(mcp::Tag<MessageArgs>) {
  return mcp::Fields(mcp::Field("message", &MessageArgs::message, "The message to show the user"));
}

Status RegisterTools(mcp::Server& server) {
  mcp::ToolRegistry& tools = server.tools();
  const std::string wav = TinyWavBase64();

  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_simple_text",
       .description = "Returns a simple text response",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      [](const mcp::NoArgs&, mcp::CallContext&) -> Result<mcp::ToolResult> {
        return mcp::ToolResult::Text("This is a simple text response for testing.");
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_image_content",
       .description = "Returns an image content item (a 1x1 PNG)",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      [](const mcp::NoArgs&, mcp::CallContext&) -> Result<mcp::ToolResult> {
        return Content(
            Json::array({{{"type", "image"}, {"data", kPngBase64}, {"mimeType", "image/png"}}}));
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_audio_content",
       .description = "Returns an audio content item (a short WAV)",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      [wav](const mcp::NoArgs&, mcp::CallContext&) -> Result<mcp::ToolResult> {
        return Content(
            Json::array({{{"type", "audio"}, {"data", wav}, {"mimeType", "audio/wav"}}}));
      }));
  const Json embedded = {{"type", "resource"},
                         {"resource",
                          {{"uri", "test://embedded-resource"},
                           {"mimeType", "text/plain"},
                           {"text", "This is an embedded resource content."}}}};
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_embedded_resource",
       .description = "Returns an embedded resource item",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      [embedded](const mcp::NoArgs&, mcp::CallContext&) -> Result<mcp::ToolResult> {
        return Content(Json::array({embedded}));
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_multiple_content_types",
       .description = "Returns text, image and embedded resource items",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      [embedded](const mcp::NoArgs&, mcp::CallContext&) -> Result<mcp::ToolResult> {
        return Content(
            Json::array({TextItem("Multiple content types test:"),
                         {{"type", "image"}, {"data", kPngBase64}, {"mimeType", "image/png"}},
                         embedded}));
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_tool_with_logging",
       .description = "Sends three log notifications while it runs, then returns text",
       .annotations = {.read_only = true, .open_world = false}},
      [](const mcp::NoArgs&, mcp::CallContext& ctx) -> Result<mcp::ToolResult> {
        ctx.Log(mcp::LogSeverity::kInfo, "test_tool_with_logging", "Tool execution started");
        SleepCancellable(ctx, 50);
        ctx.Log(mcp::LogSeverity::kInfo, "test_tool_with_logging", "Tool processing data");
        SleepCancellable(ctx, 50);
        ctx.Log(mcp::LogSeverity::kInfo, "test_tool_with_logging", "Tool execution completed");
        return mcp::ToolResult::Text("Tool with logging executed successfully");
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_error_handling",
       .description = "Always returns a tool error (isError: true)",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      [](const mcp::NoArgs&, mcp::CallContext&) -> Result<mcp::ToolResult> {
        mcp::ToolResult r =
            mcp::ToolResult::Text("This tool intentionally returns an error for testing");
        r.is_error = true;
        return r;
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_tool_with_progress",
       .description = "Reports progress 0, 50 and 100 of 100, then returns text",
       .annotations = {.read_only = true, .open_world = false}},
      [](const mcp::NoArgs&, mcp::CallContext& ctx) -> Result<mcp::ToolResult> {
        for (int p : {0, 50, 100}) {
          ctx.ReportProgress(p, 100, fmt::format("step {}", p / 50 + 1));
          if (p != 100 && !SleepCancellable(ctx, 50)) return Status::Cancelled("cancelled");
        }
        return mcp::ToolResult::Text("Progress tool completed");
      }));
  RETURN_IF_ERROR(tools.AddWithContent<PromptArgs>(
      {.name = "test_sampling",
       .description = "Asks the client's LLM (sampling/createMessage)",
       .annotations = {.read_only = true, .open_world = true}},
      [](const PromptArgs& args, mcp::CallContext& ctx) -> Result<mcp::ToolResult> {
        Json params = {
            {"messages", Json::array({{{"role", "user"},
                                       {"content", {{"type", "text"}, {"text", args.prompt}}}}})},
            {"maxTokens", 100}};
        ASSIGN_OR_RETURN(Json result, ctx.SendClientRequest("sampling/createMessage", params));
        std::string text;
        if (result.contains("content") && result["content"].is_object()) {
          text = result["content"].value("text", "");
        }
        return mcp::ToolResult::Text("LLM response: " + text);
      }));
  RETURN_IF_ERROR(tools.AddWithContent<MessageArgs>(
      {.name = "test_elicitation",
       .description = "Asks the user for a username and an email",
       .annotations = {.read_only = true, .open_world = true}},
      [](const MessageArgs& args, mcp::CallContext& ctx) -> Result<mcp::ToolResult> {
        Json schema = {{"type", "object"},
                       {"properties",
                        {{"username", {{"type", "string"}, {"description", "User's response"}}},
                         {"email", {{"type", "string"}, {"description", "User's email address"}}}}},
                       {"required", {"username", "email"}}};
        ASSIGN_OR_RETURN(Json result, ctx.SendClientRequest("elicitation/create",
                                                            {{"message", args.message},
                                                             {"requestedSchema", schema}}));
        return mcp::ToolResult::Text(fmt::format(
            "User response: action={}, content={}", result.value("action", std::string("?")),
            mcp::Dump(result.value("content", Json::object()))));
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_elicitation_sep1034_defaults",
       .description = "Elicits values whose schema carries defaults (SEP-1034)",
       .annotations = {.read_only = true, .open_world = true}},
      [](const mcp::NoArgs&, mcp::CallContext& ctx) -> Result<mcp::ToolResult> {
        Json schema = {
            {"type", "object"},
            {"properties",
             {{"name", {{"type", "string"}, {"description", "User name"}, {"default", "John Doe"}}},
              {"age", {{"type", "integer"}, {"description", "User age"}, {"default", 30}}},
              {"score", {{"type", "number"}, {"description", "User score"}, {"default", 95.5}}},
              {"status",
               {{"type", "string"},
                {"description", "User status"},
                {"enum", {"active", "inactive", "pending"}},
                {"default", "active"}}},
              {"verified",
               {{"type", "boolean"}, {"description", "Verification status"}, {"default", true}}}}}};
        ASSIGN_OR_RETURN(Json result,
                         ctx.SendClientRequest(
                             "elicitation/create",
                             {{"message", "Please review and update the form fields with defaults"},
                              {"requestedSchema", schema}}));
        return mcp::ToolResult::Text(
            fmt::format("Elicitation completed: action={}, content={}",
                        result.value("action", std::string("?")),
                        mcp::Dump(result.value("content", Json::object()))));
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_elicitation_sep1330_enums",
       .description = "Elicits the five enum shapes of SEP-1330",
       .annotations = {.read_only = true, .open_world = true}},
      [](const mcp::NoArgs&, mcp::CallContext& ctx) -> Result<mcp::ToolResult> {
        Json schema = {
            {"type", "object"},
            {"properties",
             {{"untitledSingle",
               {{"type", "string"},
                {"description", "Select one option"},
                {"enum", {"option1", "option2", "option3"}}}},
              {"titledSingle",
               {{"type", "string"},
                {"description", "Select one option with titles"},
                {"oneOf",
                 {{{"const", "value1"}, {"title", "First Option"}},
                  {{"const", "value2"}, {"title", "Second Option"}},
                  {{"const", "value3"}, {"title", "Third Option"}}}}}},
              {"legacyEnum",
               {{"type", "string"},
                {"description", "Select one option (legacy)"},
                {"enum", {"opt1", "opt2", "opt3"}},
                {"enumNames", {"Option One", "Option Two", "Option Three"}}}},
              {"untitledMulti",
               {{"type", "array"},
                {"description", "Select multiple options"},
                {"minItems", 1},
                {"maxItems", 3},
                {"items", {{"type", "string"}, {"enum", {"option1", "option2", "option3"}}}}}},
              {"titledMulti",
               {{"type", "array"},
                {"description", "Select multiple options with titles"},
                {"minItems", 1},
                {"maxItems", 3},
                {"items",
                 {{"anyOf",
                   {{{"const", "value1"}, {"title", "First Choice"}},
                    {{"const", "value2"}, {"title", "Second Choice"}},
                    {{"const", "value3"}, {"title", "Third Choice"}}}}}}}}}}};
        ASSIGN_OR_RETURN(Json result, ctx.SendClientRequest("elicitation/create",
                                                            {{"message", "Please select options"},
                                                             {"requestedSchema", schema}}));
        return mcp::ToolResult::Text(
            fmt::format("Elicitation completed: action={}, content={}",
                        result.value("action", std::string("?")),
                        mcp::Dump(result.value("content", Json::object()))));
      }));
  RETURN_IF_ERROR(tools.AddRaw(
      {.name = "json_schema_2020_12_tool",
       .description = "A tool whose input schema uses JSON Schema 2020-12 ($schema, $defs, $ref)",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      Json::parse(R"({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
          "address": {
            "type": "object",
            "properties": {
              "street": {"type": "string", "description": "Street"},
              "city": {"type": "string", "description": "City"}
            }
          }
        },
        "properties": {
          "name": {"type": "string", "description": "Name"},
          "address": {"$ref": "#/$defs/address"}
        },
        "additionalProperties": false
      })"),
      nullptr, [](const Json& args, mcp::CallContext&) -> Result<mcp::ToolResult> {
        return mcp::ToolResult::Text("JSON Schema 2020-12 tool called with " + mcp::Dump(args));
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "test_reconnection",
       .description = "Closes its SSE stream mid-call (SEP-1699); the result arrives after the "
                      "client resumes with GET and Last-Event-ID",
       .annotations = {.read_only = true, .open_world = false}},
      [](const mcp::NoArgs&, mcp::CallContext& ctx) -> Result<mcp::ToolResult> {
        SleepCancellable(ctx, 100);
        ctx.DisconnectStream(std::chrono::milliseconds(500));
        SleepCancellable(ctx, 700);
        return mcp::ToolResult::Text("Reconnection test completed");
      }));

  // Trove's own test tools.
  RETURN_IF_ERROR(tools.Add<EchoArgs, EchoArgs>(
      {.name = "echo",
       .description = "Echoes its text argument",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false},
       .scopes = {"read"},
       .run_inline = true},
      [](const EchoArgs& args, mcp::CallContext&) -> Result<EchoArgs> { return args; }));
  RETURN_IF_ERROR(tools.Add<SlowArgs, SlowResult>(
      {.name = "slow",
       .description = "Runs for about ms milliseconds, reporting progress every 10 ms, and can "
                      "be cancelled",
       .annotations = {.read_only = true, .open_world = false},
       // Stands in for a write tool in the policy e2e tests (a read-only principal may not
       // call it nor see it listed).
       .scopes = {"write"}},
      [](const SlowArgs& args, mcp::CallContext& ctx) -> Result<SlowResult> {
        std::int64_t slept = 0;
        while (slept < args.ms) {
          if (ctx.cancelled()) return Status::Cancelled("slow was cancelled");
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          slept += 10;
          ctx.ReportProgress(static_cast<double>(slept), static_cast<double>(args.ms));
        }
        return SlowResult{slept};
      }));
  RETURN_IF_ERROR(tools.AddWithContent<mcp::NoArgs>(
      {.name = "throw",
       .description = "Throws an exception inside its handler",
       .annotations = {.read_only = true, .open_world = false}},
      [](const mcp::NoArgs&, mcp::CallContext&) -> Result<mcp::ToolResult> {
        throw std::runtime_error("failed to open /secret/path/db.sqlite: SELECT * FROM secrets");
      }));
  RETURN_IF_ERROR(tools.Add<ProbeArgs, OkResult>(
      {.name = "schema_probe",
       .description = "Validates its arguments against a strict schema",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false}},
      [](const ProbeArgs&, mcp::CallContext&) -> Result<OkResult> { return OkResult{}; }));
  return Status::Ok();
}

Status RegisterResources(mcp::Server& server) {
  mcp::ResourceRegistry& res = server.resources();
  RETURN_IF_ERROR(res.Add({.uri = "test://static-text",
                           .name = "static-text",
                           .title = "Static text",
                           .description = "A static text resource",
                           .mime_type = "text/plain"},
                          [](const std::string& uri, const mcp::ResourceVars&,
                             mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
                            return std::vector<mcp::ResourceContents>{
                                {uri, "text/plain",
                                 "This is the content of the static text resource.", std::nullopt}};
                          }));
  RETURN_IF_ERROR(res.Add(
      {.uri = "test://static-binary",
       .name = "static-binary",
       .title = "Static binary",
       .description = "A static binary resource (a 1x1 PNG)",
       .mime_type = "image/png"},
      [](const std::string& uri, const mcp::ResourceVars&,
         mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
        return std::vector<mcp::ResourceContents>{{uri, "image/png", std::nullopt, kPngBase64}};
      }));
  RETURN_IF_ERROR(res.Add({.uri = "test://watched-resource",
                           .name = "watched-resource",
                           .title = "Watched resource",
                           .description = "A resource that changes every 3 s; subscribe to be told",
                           .mime_type = "text/plain",
                           .subscribable = true},
                          [](const std::string& uri, const mcp::ResourceVars&,
                             mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
                            auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count();
                            return std::vector<mcp::ResourceContents>{
                                {uri, "text/plain",
                                 fmt::format("Watched resource, version {}", secs / 3),
                                 std::nullopt}};
                          }));
  RETURN_IF_ERROR(res.Add({.uri = "test://example-resource",
                           .name = "example-resource",
                           .title = "Example resource",
                           .description = "An ordinary readable text resource",
                           .mime_type = "text/plain"},
                          [](const std::string& uri, const mcp::ResourceVars&,
                             mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
                            return std::vector<mcp::ResourceContents>{
                                {uri, "text/plain", "This is an example resource.", std::nullopt}};
                          }));
  RETURN_IF_ERROR(res.AddTemplate(
      {.uri_template = "test://template/{id}/data",
       .name = "template-data",
       .title = "Templated data",
       .description = "Data for an id",
       .mime_type = "application/json"},
      [](const std::string& uri, const mcp::ResourceVars& vars,
         mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
        const std::string& id = vars.at("id");
        return std::vector<mcp::ResourceContents>{
            {uri, "application/json",
             mcp::Dump({{"id", id}, {"templateTest", true}, {"data", "Data for ID: " + id}}),
             std::nullopt}};
      },
      [](std::string_view, std::string_view value, const Json&) {
        std::vector<std::string> out;
        for (const char* c : {"123", "456", "789"}) {
          if (std::string_view(c).substr(0, value.size()) == value) out.emplace_back(c);
        }
        return out;
      }));
  return Status::Ok();
}

Status RegisterPrompts(mcp::Server& server) {
  mcp::PromptRegistry& prompts = server.prompts();
  auto user_text = [](std::string text) {
    return Json{{"role", "user"}, {"content", {{"type", "text"}, {"text", std::move(text)}}}};
  };
  RETURN_IF_ERROR(prompts.Add(
      {.name = "test_simple_prompt",
       .title = "Simple prompt",
       .description = "A prompt without arguments"},
      [user_text](const std::map<std::string, std::string>&, mcp::CallContext&) -> Result<Json> {
        return Json{{"messages", Json::array({user_text("This is a simple prompt for testing.")})}};
      }));
  RETURN_IF_ERROR(prompts.Add(
      {.name = "test_prompt_with_arguments",
       .title = "Prompt with arguments",
       .description = "A prompt with two required arguments",
       .arguments = {{"arg1", "First test argument", true},
                     {"arg2", "Second test argument", true}}},
      [user_text](const std::map<std::string, std::string>& args,
                  mcp::CallContext&) -> Result<Json> {
        return Json{
            {"messages",
             Json::array({user_text(fmt::format("Prompt with arguments: arg1='{}', arg2='{}'",
                                                args.at("arg1"), args.at("arg2")))})}};
      },
      [](std::string_view argument, std::string_view value, const Json&) {
        std::vector<std::string> out;
        if (argument != "arg1" && argument != "arg2") return out;
        for (const char* c : {"test", "testing", "example", "value"}) {
          if (std::string_view(c).substr(0, value.size()) == value) out.emplace_back(c);
        }
        return out;
      }));
  RETURN_IF_ERROR(prompts.Add(
      {.name = "test_prompt_with_embedded_resource",
       .title = "Prompt with a resource",
       .description = "A prompt that embeds a resource",
       .arguments = {{"resourceUri", "URI of the resource to embed", true}}},
      [user_text](const std::map<std::string, std::string>& args,
                  mcp::CallContext&) -> Result<Json> {
        const std::string& uri = args.at("resourceUri");
        Json resource = {{"role", "user"},
                         {"content",
                          {{"type", "resource"},
                           {"resource",
                            {{"uri", uri},
                             {"mimeType", "text/plain"},
                             {"text", "Embedded resource content for testing."}}}}}};
        return Json{
            {"messages",
             Json::array({resource, user_text("Please process the embedded resource above.")})}};
      }));
  RETURN_IF_ERROR(prompts.Add(
      {.name = "test_prompt_with_image",
       .title = "Prompt with an image",
       .description = "A prompt that carries an image"},
      [user_text](const std::map<std::string, std::string>&, mcp::CallContext&) -> Result<Json> {
        Json image = {
            {"role", "user"},
            {"content", {{"type", "image"}, {"data", kPngBase64}, {"mimeType", "image/png"}}}};
        return Json{
            {"messages", Json::array({image, user_text("Please analyze the image above.")})}};
      }));
  return Status::Ok();
}

int Main(int argc, char** argv) {
  mcp::BlockShutdownSignals();
  CLI::App app{"Trove MCP conformance fixture server"};
  app.set_version_flag("--version", "conformance_server 0.1.0");
  std::optional<int> http_port;
  int workers = -1;
  std::size_t max_message_bytes = 4u << 20;
  std::size_t max_in_flight = 256;
  std::vector<std::string> tokens;
  std::string log_level = "warning";
  int deadline_ms = 120000;
  app.add_option("--http", http_port, "Serve Streamable HTTP on this port (0: any free port)");
  app.add_option("--workers", workers, "Worker threads (0: inline; default: hardware threads)");
  app.add_option("--max-message-bytes", max_message_bytes, "Largest accepted message");
  app.add_option("--max-in-flight", max_in_flight, "Requests in flight per session");
  app.add_option("--auth-token", tokens, "Accept this bearer token (enables authentication)");
  app.add_option("--log-level", log_level, "stderr log level: debug, info, warning, error");
  app.add_option("--deadline-ms", deadline_ms, "Handler deadline in milliseconds");
  mcp::policy::PolicyFlags policy_flags;
  mcp::AddServeFlags(app, policy_flags);  // --host, --auth, --token-file, --audit-log, ...
  CLI11_PARSE(app, argc, argv);
  Result<mcp::ServePolicy> policy = mcp::ResolveServePolicy(policy_flags);
  if (!policy.ok()) {
    std::fprintf(stderr, "conformance_server: error: %s\n", policy.status().message().c_str());
    return 2;
  }
  mcp::ServeOptions serve;

  base::Logger logger(base::ParseLogLevel(log_level, base::LogLevel::kWarning));
  base::ThreadPool pool(workers < 0 ? base::ThreadPool::DefaultWorkers()
                                    : static_cast<std::size_t>(workers));
  mcp::ServerOptions options;
  options.parse.max_message_bytes = max_message_bytes;
  options.max_in_flight = max_in_flight;
  options.handler_deadline = std::chrono::milliseconds(deadline_ms);
  options.validate_output = true;
  policy->Apply(options, serve);
  mcp::Server server({.name = "trove-conformance-server",
                      .version = "0.1.0",
                      .title = "Trove conformance fixtures",
                      .instructions = "Test fixtures for the MCP conformance suite."},
                     options, pool, logger);
  for (Status s : {RegisterTools(server), RegisterResources(server), RegisterPrompts(server)}) {
    if (!s.ok()) {
      std::fprintf(stderr, "conformance_server: registration failed: %s\n", s.message().c_str());
      return 2;
    }
  }

  // test://watched-resource changes every 3 s.
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    int ticks = 0;
    while (!stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (++ticks % 30 == 0) server.NotifyResourceUpdated("test://watched-resource");
    }
  });

  Status status;
  if (http_port) {
    mcp::HttpOptions http = serve.http;
    http.port = *http_port;
    // --auth-token (tests): plain tokens with every scope, when no --auth mode is given.
    if (policy->options.auth == mcp::policy::AuthMode::kNone) {
      http.authenticator = nullptr;
      http.bearer_tokens = tokens;
    }
    const std::string host = http.host;
    http.on_listening = [host](int port) {
      std::fprintf(stderr, "listening on http://%s:%d/mcp\n", host.c_str(), port);
      std::fflush(stderr);
    };
    status = mcp::ServeHttp(server, http);
  } else {
    status = mcp::ServeStdio(server, mcp::StdioOptions{.principal = serve.stdio_principal});
  }
  stop.store(true);
  watcher.join();
  // Serving cancelled every request; let the pool finish them before the Server they use goes.
  pool.Wait();
  if (!status.ok()) {
    std::fprintf(stderr, "conformance_server: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace trove::e2e

int main(int argc, char** argv) { return trove::e2e::Main(argc, argv); }

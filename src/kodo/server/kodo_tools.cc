#include "kodo/server/kodo_tools.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "kodo/driver/tools.h"
#include "mcp/describe.h"
#include "mcp/registry.h"

#ifndef TROVE_VERSION
#define TROVE_VERSION "0.1.0"
#endif

namespace trove::kodo::server {
namespace {

using mcp::Field;
using mcp::Fields;
using mcp::Tag;

// --- Arguments (docs/kodo.md §3.2: every property is a string) ---

struct CheckArgs {
  std::string source;
  std::optional<std::string> filename;  // accepted and ignored, as upstream (§3.3)
};
inline auto DescribeFields(Tag<CheckArgs>) {
  return Fields(Field("source", &CheckArgs::source, "Kōdo source code to check"),
                Field("filename", &CheckArgs::filename, "Optional filename for error reporting"));
}

struct DescribeArgs {
  std::string source;
};
inline auto DescribeFields(Tag<DescribeArgs>) {
  return Fields(Field("source", &DescribeArgs::source, "Kōdo source code to describe"));
}

struct ExplainArgs {
  std::string code;
};
inline auto DescribeFields(Tag<ExplainArgs>) {
  return Fields(Field("code", &ExplainArgs::code, "Error code (e.g. E0200)"));
}

struct BuildArgs {
  std::string source;
};
inline auto DescribeFields(Tag<BuildArgs>) {
  return Fields(Field("source", &BuildArgs::source, "Kōdo source code to compile"));
}

struct FixArgs {
  std::string source;
};
inline auto DescribeFields(Tag<FixArgs>) {
  return Fields(Field("source", &FixArgs::source, "Kōdo source code to fix"));
}

struct AnnotateArgs {
  std::string source;
};
inline auto DescribeFields(Tag<AnnotateArgs>) {
  return Fields(
      Field("source", &AnnotateArgs::source, "Kōdo source code to analyze for missing contracts"));
}

struct ConfidenceArgs {
  std::string source;
};
inline auto DescribeFields(Tag<ConfidenceArgs>) {
  return Fields(Field("source", &ConfidenceArgs::source, "Kōdo source code to analyze"));
}

// Upstream's inputSchema shape, derived from the one description of the arguments: keys
// sorted as upstream's ad-hoc objects are ({"properties", "required", "type"}, properties by
// name, each {"description", "type"}), and no "additionalProperties" (upstream ignores unknown
// arguments). An optional string is written as plain "string", as upstream lists it.
template <typename T>
mcp::Json UpstreamSchema() {
  const mcp::Json& derived = mcp::SchemaFor<T>();
  std::map<std::string, mcp::Json> sorted;
  for (const auto& [name, property] : derived.at("properties").items()) {
    const mcp::Json& type = property.at("type");
    sorted[name] = {{"description", property.at("description")},
                    {"type", type.is_array() ? type.at(0) : type}};
  }
  mcp::Json properties = mcp::Json::object();
  for (auto& [name, property] : sorted) properties[name] = std::move(property);
  return {{"properties", std::move(properties)},
          {"required", derived.value("required", mcp::Json::array())},
          {"type", "object"}};
}

// An engine answer as a tool result: upstream's object as structuredContent plus its text.
Result<mcp::ToolResult> Answer(Result<nlohmann::json> answer) {
  if (answer.ok()) return mcp::ToolResult::Structured(mcp::Json(*answer));
  // A phase that does not exist yet: its message is the whole answer (issue 5, decision 3).
  if (answer.status().code() == base::StatusCode::kUnsupported) {
    mcp::ToolResult r = mcp::ToolResult::Text(answer.status().message());
    r.is_error = true;
    return r;
  }
  return std::move(answer).status();
}

template <typename Args, typename Run>
Status AddSourceTool(mcp::ToolRegistry& tools, std::string name, std::string description, Run run) {
  return tools.AddRaw(
      mcp::ToolSpec{.name = std::move(name),
                    .description = std::move(description),
                    .annotations = {.read_only = true, .idempotent = true, .open_world = false},
                    // Every kodo tool reads the source it is given (kodo.build compiles to MIR
                    // in memory; nothing is written or run).
                    .scopes = {"read"}},
      UpstreamSchema<Args>(), nullptr,
      [run = std::move(run)](const mcp::Json& arguments,
                             mcp::CallContext&) -> Result<mcp::ToolResult> {
        ASSIGN_OR_RETURN(Args args, mcp::FromJson<Args>(arguments));
        return Answer(run(std::move(args)));
      });
}

}  // namespace

mcp::ServerInfo KodoServerInfo() {
  return mcp::ServerInfo{
      .name = "kodo-mcp",
      .version = TROVE_VERSION,
      .title = "Kōdo",
      .instructions =
          "The Kōdo compiler front end (compatible with kodoc 1.14.1, tiers T0-T1). Agent loop: "
          "write source, call kodo.check; on errors call kodo.fix and apply its patches (byte "
          "offsets, from the end backwards), then check again. kodo.describe and kodo.annotate "
          "read a module; kodo.explain explains an error code."};
}

Status RegisterKodoTools(mcp::Server& server) {
  mcp::ToolRegistry& tools = server.tools();
  RETURN_IF_ERROR(AddSourceTool<CheckArgs>(
      tools, "kodo.check",
      "Type-check a Kōdo source file and return structured errors with repair plans",
      [](CheckArgs a) { return driver::CheckTool(std::move(a.source)); }));
  RETURN_IF_ERROR(AddSourceTool<DescribeArgs>(
      tools, "kodo.describe", "Describe a Kōdo module: functions, types, contracts, metadata",
      [](DescribeArgs a) { return driver::DescribeTool(std::move(a.source)); }));
  RETURN_IF_ERROR(AddSourceTool<ExplainArgs>(
      tools, "kodo.explain", "Explain a Kōdo compiler error code",
      [](ExplainArgs a) -> Result<nlohmann::json> { return driver::ExplainTool(a.code); }));
  RETURN_IF_ERROR(AddSourceTool<BuildArgs>(
      tools, "kodo.build",
      "Compile Kōdo source through the full pipeline (parse \u2192 type-check \u2192 contracts "
      "\u2192 desugar \u2192 MIR)",
      [](BuildArgs a) { return driver::BuildTool(std::move(a.source)); }));
  RETURN_IF_ERROR(AddSourceTool<FixArgs>(
      tools, "kodo.fix", "Collect auto-fix patches and repair plans for Kōdo source errors",
      [](FixArgs a) { return driver::FixTool(std::move(a.source)); }));
  RETURN_IF_ERROR(AddSourceTool<AnnotateArgs>(
      tools, "kodo.annotate",
      "Analyze a Kōdo module and suggest missing contracts. Returns heuristic suggestions and "
      "lists functions without contracts (with their source) so the agent can suggest "
      "additional contracts. Use kodo.check to verify suggested contracts.",
      [](AnnotateArgs a) { return driver::AnnotateTool(std::move(a.source)); }));
  RETURN_IF_ERROR(AddSourceTool<ConfidenceArgs>(
      tools, "kodo.confidence_report",
      "Generate a confidence report for all functions in a Kōdo module",
      [](ConfidenceArgs a) { return driver::ConfidenceReportTool(std::move(a.source)); }));
  return Status::Ok();
}

}  // namespace trove::kodo::server

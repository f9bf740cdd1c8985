// Tool, resource and prompt registries: each entry is declared once (name, description,
// schemas, annotations, scopes, deadline) and the core derives its list entry, argument
// validation and typed argument view from that declaration (docs/mcp.md §4.2, §5.1).
//
// Thread safety: registries are filled before serving starts and are read-only afterwards;
// concurrent reads are safe, a registration while serving is not.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "mcp/describe.h"
#include "mcp/json.h"

namespace trove::mcp {

class CallContext;

// What a tool call returns on success. A tool error the model can act on is a non-OK Status
// from the handler, or a ToolResult with is_error set.
struct ToolResult {
  Json content = Json::array();    // content items: text, image, audio, resource_link, resource
  std::optional<Json> structured;  // structuredContent; must be an object matching outputSchema
  // When set, the core writes the compact JSON of `structured` as a text item before
  // `content` (the text mirror), serializing the object once for both.
  bool mirror_structured = false;
  bool is_error = false;
  Json meta;  // _meta, null when absent

  // A result with one text item.
  static ToolResult Text(std::string text);
  // A structured result; its compact JSON becomes content[0].text (the text mirror).
  static ToolResult Structured(Json object);
};

struct ToolAnnotations {
  std::string title;
  bool read_only = false;
  bool destructive = true;  // meaningful only when !read_only
  bool idempotent = false;
  bool open_world = true;
};

struct ToolSpec {
  std::string name;         // 1-128 of A-Z a-z 0-9 _ - .
  std::string title;        // optional display name
  std::string description;  // required
  ToolAnnotations annotations;
  // Needed scopes ("read", "write", "execute", "network", "admin"): a principal lacking one
  // neither sees the tool in tools/list nor may call it (PERMISSION_DENIED).
  std::vector<std::string> scopes;
  // High-risk: the call runs only after consent for (session, tool), granted by configuration
  // (ServerOptions::consent, --consent) or by an elicitation/create confirmation remembered for
  // the session; otherwise PERMISSION_DENIED with details.consentRequired (docs/mcp.md §5.6).
  bool needs_consent = false;
  std::chrono::milliseconds deadline{0};  // 0: the server's default
  // Run on the transport's reader thread instead of the worker pool. Only for handlers that
  // neither block nor take long (no I/O, no locks held for long): it saves two thread
  // handoffs per call, and such a handler cannot be cancelled mid-run anyway.
  bool run_inline = false;
};

using ToolHandler = std::function<Result<ToolResult>(const Json& arguments, CallContext& ctx)>;

struct Tool {
  ToolSpec spec;
  Json input_schema;
  Json output_schema;  // null: no outputSchema
  ToolHandler handler;
};

class ToolRegistry {
 public:
  // Registers a tool with explicit schemas. Rejects an invalid or duplicate name, a missing
  // description (of the tool or of any input property), a non-object schema, and schema
  // keywords the validator does not support.
  Status AddRaw(ToolSpec spec, Json input_schema, Json output_schema, ToolHandler handler);

  // Registers a typed tool: In and Out are described structs (describe.h). The handler gets
  // validated, converted arguments; its Out becomes structuredContent plus a text mirror.
  template <typename In, typename Out, typename H>
  Status Add(ToolSpec spec, H handler) {
    return AddRaw(
        std::move(spec), SchemaFor<In>(), SchemaFor<Out>(),
        [h = std::move(handler)](const Json& args, CallContext& ctx) -> Result<ToolResult> {
          ASSIGN_OR_RETURN(In in, FromJson<In>(args));
          ASSIGN_OR_RETURN(Out out, h(in, ctx));
          return ToolResult::Structured(ToJson(out));
        });
  }

  // Registers a typed-input tool whose handler builds its own content (no outputSchema).
  template <typename In, typename H>
  Status AddWithContent(ToolSpec spec, H handler) {
    return AddRaw(
        std::move(spec), SchemaFor<In>(), nullptr,
        [h = std::move(handler)](const Json& args, CallContext& ctx) -> Result<ToolResult> {
          ASSIGN_OR_RETURN(In in, FromJson<In>(args));
          return h(in, ctx);
        });
  }

  // Returns the tool, or null.
  const Tool* Find(std::string_view name) const;
  const std::vector<std::unique_ptr<Tool>>& all() const { return tools_; }
  bool empty() const { return tools_.empty(); }

 private:
  std::vector<std::unique_ptr<Tool>> tools_;
  std::unordered_map<std::string, const Tool*> by_name_;
};

// One item of resources/read contents.
struct ResourceContents {
  std::string uri;
  std::string mime_type;            // optional
  std::optional<std::string> text;  // exactly one of text and blob
  std::optional<std::string> blob;  // base64
};

using ResourceVars = std::map<std::string, std::string>;
using ResourceReader = std::function<Result<std::vector<ResourceContents>>(
    const std::string& uri, const ResourceVars& vars, CallContext& ctx)>;
// Returns completion values for `argument` given its prefix `value` and the other arguments.
using Completer = std::function<std::vector<std::string>(
    std::string_view argument, std::string_view value, const Json& context_arguments)>;

struct ResourceSpec {
  std::string uri;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
  bool subscribable = false;
  // Needed scopes, as for tools: a principal lacking one neither sees the resource in
  // resources/list nor may read it (-32011 PERMISSION_DENIED).
  std::vector<std::string> scopes = {"read"};
};

struct ResourceTemplateSpec {
  std::string uri_template;  // RFC 6570 level 1: "test://template/{id}/data"
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
  // Needed scopes of every URI the template matches (see ResourceSpec::scopes).
  std::vector<std::string> scopes = {"read"};
};

struct Resource {
  ResourceSpec spec;
  ResourceReader reader;
};

struct ResourceTemplate {
  ResourceTemplateSpec spec;
  ResourceReader reader;
  Completer completer;
};

// Matches `uri` against a level-1 template; fills `vars` and returns true on a match.
// A variable matches one or more characters other than '/'.
bool MatchUriTemplate(std::string_view tmpl, std::string_view uri, ResourceVars& vars);

class ResourceRegistry {
 public:
  Status Add(ResourceSpec spec, ResourceReader reader);
  Status AddTemplate(ResourceTemplateSpec spec, ResourceReader reader, Completer completer = {});

  // Finds the resource or template serving `uri`; returns false when none does. `scopes`, when
  // not null, is set to the scopes reading it needs.
  bool Resolve(const std::string& uri, const ResourceReader** reader, ResourceVars& vars,
               bool* subscribable, const std::vector<std::string>** scopes = nullptr) const;
  const ResourceTemplate* FindTemplate(std::string_view uri_template) const;

  const std::vector<Resource>& resources() const { return resources_; }
  const std::vector<ResourceTemplate>& templates() const { return templates_; }
  bool empty() const { return resources_.empty() && templates_.empty(); }
  bool any_subscribable() const;

  // Resources whose set changes at run time (one per indexed workspace, say): `lister` runs at
  // every resources/list and its entries are listed after the static ones, paginated with them
  // (nextCursor). Listing adds no reader: a listed URI is read through a static resource or a
  // template matching it. `lister` may be called from any thread.
  using ResourceLister = std::function<std::vector<ResourceSpec>()>;
  void SetLister(ResourceLister lister) { lister_ = std::move(lister); }
  std::vector<ResourceSpec> Listed() const {
    return lister_ ? lister_() : std::vector<ResourceSpec>();
  }

 private:
  std::vector<Resource> resources_;
  std::vector<ResourceTemplate> templates_;
  ResourceLister lister_;
};

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

struct PromptSpec {
  std::string name;
  std::string title;
  std::string description;  // required
  std::vector<PromptArgument> arguments;
};

// Returns the prompts/get result: {description?, messages: [{role, content}]}.
using PromptHandler =
    std::function<Result<Json>(const std::map<std::string, std::string>& args, CallContext& ctx)>;

struct Prompt {
  PromptSpec spec;
  PromptHandler handler;
  Completer completer;
};

class PromptRegistry {
 public:
  Status Add(PromptSpec spec, PromptHandler handler, Completer completer = {});
  const Prompt* Find(std::string_view name) const;
  const std::vector<Prompt>& all() const { return prompts_; }
  bool empty() const { return prompts_.empty(); }

 private:
  std::vector<Prompt> prompts_;
};

// Returns OK when `name` is a valid tool name (1-128 of A-Z a-z 0-9 _ - .).
Status CheckToolName(std::string_view name);

}  // namespace trove::mcp

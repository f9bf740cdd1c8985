#include "mcp/registry.h"

#include <fmt/core.h>

#include <algorithm>

#include "mcp/policy/scopes.h"

namespace trove::mcp {

namespace {

// A misspelt scope would make an entry unusable for everyone but admin.
Status CheckScopeNames(const std::vector<std::string>& scopes) {
  for (const auto& scope : scopes) {
    if (scope.empty() || !policy::ParseScopes(scope).ok()) {
      return Status::InvalidArgument(fmt::format("unknown scope '{}'", scope));
    }
  }
  return Status::Ok();
}

}  // namespace

ToolResult ToolResult::Text(std::string text) {
  ToolResult r;
  r.content.push_back({{"type", "text"}, {"text", std::move(text)}});
  return r;
}

ToolResult ToolResult::Structured(Json object) {
  ToolResult r;
  r.structured = std::move(object);
  r.mirror_structured = true;
  return r;
}

Status CheckToolName(std::string_view name) {
  if (name.empty() || name.size() > 128) {
    return Status::InvalidArgument(fmt::format("tool name '{}': must be 1-128 characters", name));
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) {
      return Status::InvalidArgument(
          fmt::format("tool name '{}': only A-Z a-z 0-9 _ - . are allowed", name));
    }
  }
  return Status::Ok();
}

namespace {

// Every property of an object schema, at any depth, must carry a description: it is all the
// model reads. (A property given by $ref takes its description from the definition.)
Status CheckDescriptions(const Json& schema, const std::string& where, int depth = 0) {
  if (!schema.is_object() || depth > 32) return Status::Ok();
  if (auto props = schema.find("properties"); props != schema.end() && props->is_object()) {
    for (auto it = props->begin(); it != props->end(); ++it) {
      const Json& p = it.value();
      const std::string here = where + "." + it.key();
      if (p.is_object() && !p.contains("description") && !p.contains("$ref")) {
        return Status::InvalidArgument(here + ": a property needs a description");
      }
      RETURN_IF_ERROR(CheckDescriptions(p, here, depth + 1));
    }
  }
  for (const char* key : {"items", "additionalProperties"}) {
    if (auto sub = schema.find(key); sub != schema.end()) {
      RETURN_IF_ERROR(CheckDescriptions(*sub, where + "." + key, depth + 1));
    }
  }
  for (const char* key : {"$defs", "prefixItems", "allOf", "anyOf", "oneOf"}) {
    auto group = schema.find(key);
    if (group == schema.end()) continue;
    for (auto it = group->begin(); it != group->end(); ++it) {
      RETURN_IF_ERROR(CheckDescriptions(*it, where + "." + key, depth + 1));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ToolRegistry::AddRaw(ToolSpec spec, Json input_schema, Json output_schema,
                            ToolHandler handler) {
  RETURN_IF_ERROR(CheckToolName(spec.name));
  if (by_name_.count(spec.name)) {
    return Status::AlreadyExists(fmt::format("tool '{}': registered twice", spec.name));
  }
  if (spec.description.empty()) {
    return Status::InvalidArgument(fmt::format("tool '{}': a description is required", spec.name));
  }
  if (!input_schema.is_object() || input_schema.value("type", "") != "object") {
    return Status::InvalidArgument(fmt::format(
        "tool '{}': inputSchema must be an object schema with \"type\": \"object\"", spec.name));
  }
  RETURN_IF_ERROR(
      CheckSchemaSupported(input_schema).WithContext("tool '" + spec.name + "' inputSchema"));
  RETURN_IF_ERROR(CheckDescriptions(input_schema, "tool '" + spec.name + "' inputSchema"));
  if (!output_schema.is_null()) {
    if (!output_schema.is_object() || output_schema.value("type", "") != "object") {
      return Status::InvalidArgument(
          fmt::format("tool '{}': outputSchema must be an object schema", spec.name));
    }
    RETURN_IF_ERROR(
        CheckSchemaSupported(output_schema).WithContext("tool '" + spec.name + "' outputSchema"));
  }
  if (!handler) return Status::InvalidArgument(fmt::format("tool '{}': no handler", spec.name));
  for (const auto& scope : spec.scopes) {
    // A misspelt scope would make the tool uncallable for everyone but admin.
    if (scope.empty() || !policy::ParseScopes(scope).ok()) {
      return Status::InvalidArgument(
          fmt::format("tool '{}': unknown scope '{}'", spec.name, scope));
    }
  }
  auto tool = std::make_unique<Tool>(
      Tool{std::move(spec), std::move(input_schema), std::move(output_schema), std::move(handler)});
  by_name_.emplace(tool->spec.name, tool.get());
  tools_.push_back(std::move(tool));
  return Status::Ok();
}

const Tool* ToolRegistry::Find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

bool MatchUriTemplate(std::string_view tmpl, std::string_view uri, ResourceVars& vars) {
  std::size_t t = 0, u = 0;
  ResourceVars found;
  while (t < tmpl.size()) {
    if (tmpl[t] == '{') {
      std::size_t close = tmpl.find('}', t);
      if (close == std::string_view::npos) return false;
      std::string name(tmpl.substr(t + 1, close - t - 1));
      t = close + 1;
      // The variable runs to the next literal character of the template (or '/' or the end).
      char stop = t < tmpl.size() ? tmpl[t] : '\0';
      std::size_t start = u;
      while (u < uri.size() && uri[u] != '/' && (stop == '\0' || uri[u] != stop)) ++u;
      if (u == start) return false;
      found[name] = std::string(uri.substr(start, u - start));
    } else {
      if (u >= uri.size() || uri[u] != tmpl[t]) return false;
      ++t;
      ++u;
    }
  }
  if (u != uri.size()) return false;
  vars = std::move(found);
  return true;
}

Status ResourceRegistry::Add(ResourceSpec spec, ResourceReader reader) {
  if (spec.uri.empty() || spec.name.empty()) {
    return Status::InvalidArgument("resource: uri and name are required");
  }
  for (const auto& r : resources_) {
    if (r.spec.uri == spec.uri) {
      return Status::AlreadyExists(fmt::format("resource '{}': registered twice", spec.uri));
    }
  }
  RETURN_IF_ERROR(CheckScopeNames(spec.scopes).WithContext("resource '" + spec.uri + "'"));
  resources_.push_back({std::move(spec), std::move(reader)});
  return Status::Ok();
}

Status ResourceRegistry::AddTemplate(ResourceTemplateSpec spec, ResourceReader reader,
                                     Completer completer) {
  if (spec.uri_template.empty() || spec.name.empty()) {
    return Status::InvalidArgument("resource template: uriTemplate and name are required");
  }
  RETURN_IF_ERROR(
      CheckScopeNames(spec.scopes).WithContext("resource template '" + spec.uri_template + "'"));
  templates_.push_back({std::move(spec), std::move(reader), std::move(completer)});
  return Status::Ok();
}

bool ResourceRegistry::Resolve(const std::string& uri, const ResourceReader** reader,
                               ResourceVars& vars, bool* subscribable,
                               const std::vector<std::string>** scopes) const {
  for (const auto& r : resources_) {
    if (r.spec.uri == uri) {
      *reader = &r.reader;
      vars.clear();
      if (subscribable) *subscribable = r.spec.subscribable;
      if (scopes) *scopes = &r.spec.scopes;
      return true;
    }
  }
  for (const auto& t : templates_) {
    if (MatchUriTemplate(t.spec.uri_template, uri, vars)) {
      *reader = &t.reader;
      if (subscribable) *subscribable = false;
      if (scopes) *scopes = &t.spec.scopes;
      return true;
    }
  }
  return false;
}

const ResourceTemplate* ResourceRegistry::FindTemplate(std::string_view uri_template) const {
  for (const auto& t : templates_) {
    if (t.spec.uri_template == uri_template) return &t;
  }
  return nullptr;
}

bool ResourceRegistry::any_subscribable() const {
  return std::any_of(resources_.begin(), resources_.end(),
                     [](const Resource& r) { return r.spec.subscribable; });
}

Status PromptRegistry::Add(PromptSpec spec, PromptHandler handler, Completer completer) {
  if (spec.name.empty()) return Status::InvalidArgument("prompt: a name is required");
  if (spec.description.empty()) {
    return Status::InvalidArgument(
        fmt::format("prompt '{}': a description is required", spec.name));
  }
  if (Find(spec.name)) {
    return Status::AlreadyExists(fmt::format("prompt '{}': registered twice", spec.name));
  }
  prompts_.push_back({std::move(spec), std::move(handler), std::move(completer)});
  return Status::Ok();
}

const Prompt* PromptRegistry::Find(std::string_view name) const {
  for (const auto& p : prompts_) {
    if (p.spec.name == name) return &p;
  }
  return nullptr;
}

}  // namespace trove::mcp

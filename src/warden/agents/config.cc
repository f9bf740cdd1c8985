#include "warden/agents/config.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace trove::warden::agents {

namespace {

std::optional<std::string> NonEmpty(std::optional<std::string> value) {
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::optional<std::string> FromFile(const std::map<std::string, std::string>& file,
                                    const std::string& key) {
  auto it = file.find(key);
  if (it == file.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

std::string Resolve(const ConfigSources& sources, std::string_view env_var, const std::string& key,
                    std::string_view fallback) {
  if (!env_var.empty() && sources.getenv) {
    if (auto v = NonEmpty(sources.getenv(env_var))) return *v;
  }
  if (auto v = FromFile(sources.project, key)) return *v;
  if (auto v = FromFile(sources.global, key)) return *v;
  return std::string(fallback);
}

std::string StripTrailingSlashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

void Flatten(const nlohmann::json& value, const std::string& prefix,
             std::map<std::string, std::string>& out) {
  for (auto it = value.begin(); it != value.end(); ++it) {
    std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) {
      Flatten(*it, key, out);
    } else if (it->is_string()) {
      out[key] = it->get<std::string>();
    } else if (!it->is_null()) {
      out[key] = it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  }
}

}  // namespace

AgentConfig ResolveAgentConfig(const ConfigSources& sources) {
  AgentConfig config;
  config.backend = Resolve(sources, "", "agent.backend", "");
  config.openai.api_key = Resolve(sources, kOpenAiKeyVar, "openai.api_key", "");
  config.openai.model = Resolve(sources, "", "openai.model", kOpenAiDefaultModel);
  config.openai.base_url = StripTrailingSlashes(
      Resolve(sources, kOpenAiBaseUrlVar, "openai.base_url", kOpenAiDefaultBaseUrl));
  config.anthropic.api_key = Resolve(sources, kAnthropicKeyVar, "anthropic.api_key", "");
  config.anthropic.model = Resolve(sources, "", "anthropic.model", kAnthropicDefaultModel);
  config.anthropic.base_url = StripTrailingSlashes(
      Resolve(sources, kAnthropicBaseUrlVar, "anthropic.base_url", kAnthropicDefaultBaseUrl));
  return config;
}

Result<std::map<std::string, std::string>> ParseConfigJson(std::string_view text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Malformed("config: not valid JSON");
  if (!doc.is_object()) return Status::Malformed("config: top level is not a JSON object");
  std::map<std::string, std::string> out;
  Flatten(doc, "", out);
  return out;
}

std::function<std::optional<std::string>(std::string_view)> ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

}  // namespace trove::warden::agents

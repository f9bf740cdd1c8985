#include "warden/agents/backend.h"

#include <curl/curl.h>
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "warden/agents/anthropic_backend.h"
#include "warden/agents/offline_backend.h"
#include "warden/agents/openai_backend.h"

namespace trove::warden::agents {

namespace {

constexpr std::string_view kHttpsComponent = "libcurl with HTTPS support";

BackendInfo ProviderInfo(std::string_view name, std::vector<std::string> aliases,
                         std::string_view key_var, const ProviderConfig& provider,
                         std::string_view default_model, bool https) {
  BackendInfo info;
  info.name = std::string(name);
  info.backend = std::string(name);
  info.aliases = std::move(aliases);
  info.requirements.push_back(std::string(key_var));
  if (!https) info.requirements.push_back(std::string(kHttpsComponent));
  info.available = https && !provider.api_key.empty();
  info.default_model = std::string(default_model);
  return info;
}

const BackendInfo* Find(const std::vector<BackendInfo>& backends, std::string_view name) {
  for (const BackendInfo& info : backends) {
    if (info.backend == name) return &info;
  }
  return nullptr;
}

// Why `info` is unavailable, naming what is missing and never a value.
std::string Unavailable(const BackendInfo& info, std::string_view config_prefix) {
  std::string why;
  if (!HttpsSupported()) {
    why = fmt::format("this build's {} is missing", kHttpsComponent);
  } else {
    why = fmt::format(
        "{} is not set (set it in the environment or with 'warden config set "
        "{}.api_key ...')",
        info.requirements.front(), config_prefix);
  }
  return fmt::format("{} backend unavailable: {}", info.name, why);
}

// Returns the internal name `selector` runs, `auto` resolved.
Result<std::string> ResolveSelector(std::string_view selector, const AgentConfig& config) {
  Result<std::string> name = CanonicalBackendName(selector);
  if (name.ok() && *name == "auto") return ResolveAutoBackend(config);
  return name;
}

}  // namespace

bool HttpsSupported() {
  const curl_version_info_data* data = curl_version_info(CURLVERSION_NOW);
  return data != nullptr && (data->features & CURL_VERSION_SSL) != 0;
}

std::vector<BackendInfo> ListBackends(const AgentConfig& config) {
  bool https = HttpsSupported();
  std::vector<BackendInfo> out;
  BackendInfo offline;
  offline.name = "offline";
  offline.backend = "offline";
  offline.available = true;
  out.push_back(std::move(offline));
  out.push_back(ProviderInfo("openai", {"codex", "oai"}, kOpenAiKeyVar, config.openai,
                             kOpenAiDefaultModel, https));
  out.push_back(ProviderInfo("anthropic", {}, kAnthropicKeyVar, config.anthropic,
                             kAnthropicDefaultModel, https));
  return out;
}

std::string BackendsToJson(const std::vector<BackendInfo>& backends) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const BackendInfo& info : backends) {
    nlohmann::ordered_json row;
    row["name"] = info.name;
    row["backend"] = info.backend;
    row["aliases"] = info.aliases;
    row["available"] = info.available;
    row["requires"] = info.requirements;
    row["default_model"] =
        info.default_model ? nlohmann::ordered_json(*info.default_model) : nullptr;
    array.push_back(std::move(row));
  }
  nlohmann::ordered_json doc;
  doc["backends"] = std::move(array);
  return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<std::string> CanonicalBackendName(std::string_view selector) {
  if (selector == "auto" || selector == "offline" || selector == "openai" ||
      selector == "anthropic") {
    return std::string(selector);
  }
  if (selector == "codex" || selector == "oai") return std::string("openai");
  return Status::InvalidArgument(
      fmt::format("unknown backend '{}' (expected auto, offline, openai, codex, oai or "
                  "anthropic)",
                  selector));
}

Result<std::string> ResolveAutoBackend(const AgentConfig& config) {
  std::vector<BackendInfo> backends = ListBackends(config);
  if (!config.backend.empty()) {
    Result<std::string> configured = CanonicalBackendName(config.backend);
    if (!configured.ok()) return configured.status().WithContext("agent.backend");
    if (*configured != "auto") {
      const BackendInfo* info = Find(backends, *configured);
      if (info != nullptr && info->available) return *configured;
    }
  }
  for (std::string_view name : {"openai", "anthropic"}) {
    const BackendInfo* info = Find(backends, name);
    if (info != nullptr && info->available) return std::string(name);
  }
  return std::string("offline");
}

Result<std::unique_ptr<Backend>> MakeBackend(std::string_view selector,
                                             const std::optional<std::string>& model_flag,
                                             const AgentConfig& config,
                                             const ProviderOptions& options) {
  ASSIGN_OR_RETURN(const std::string name, ResolveSelector(selector, config));
  if (name == "offline") return std::unique_ptr<Backend>(std::make_unique<OfflineBackend>());
  std::vector<BackendInfo> backends = ListBackends(config);
  const BackendInfo* info = Find(backends, name);
  if (info == nullptr) return Status::Internal("backend registry is missing " + name);
  if (!info->available) return Status::Unsupported(Unavailable(*info, name));
  ProviderConfig provider = name == "openai" ? config.openai : config.anthropic;
  if (model_flag && !model_flag->empty()) provider.model = *model_flag;
  if (provider.model.empty()) provider.model = *info->default_model;
  if (name == "openai") {
    return std::unique_ptr<Backend>(std::make_unique<OpenAiBackend>(std::move(provider), options));
  }
  return std::unique_ptr<Backend>(std::make_unique<AnthropicBackend>(std::move(provider), options));
}

}  // namespace trove::warden::agents

// Agent configuration (docs/warden.md §2.1, §7.3): the settings of the provider backends and
// the `auto` preference, resolved with the precedence flag > environment variable > project
// config > global config > default.
//
// Reading the config files is the caller's job (the CLI and the MCP binding own the paths);
// this file turns their contents and the environment into one AgentConfig. Flags (`--backend`,
// `--model`) are applied by SelectBackend (backend.h), the last step.
// Secrets: an AgentConfig holds API keys; nothing here logs or formats one, and callers must
// not either (§2.1).
// Thread safety: plain values and pure functions.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace trove::warden::agents {

inline constexpr std::string_view kOpenAiKeyVar = "OPENAI_API_KEY";
inline constexpr std::string_view kOpenAiBaseUrlVar = "OPENAI_BASE_URL";
inline constexpr std::string_view kAnthropicKeyVar = "ANTHROPIC_API_KEY";
inline constexpr std::string_view kAnthropicBaseUrlVar = "ANTHROPIC_BASE_URL";

inline constexpr std::string_view kOpenAiDefaultModel = "gpt-5.3-codex";
inline constexpr std::string_view kAnthropicDefaultModel = "claude-sonnet-4-5";
inline constexpr std::string_view kOpenAiDefaultBaseUrl = "https://api.openai.com";
inline constexpr std::string_view kAnthropicDefaultBaseUrl = "https://api.anthropic.com";

// One provider's resolved settings.
struct ProviderConfig {
  std::string api_key;   // empty: not set anywhere (the backend is unavailable)
  std::string model;     // never empty after resolution
  std::string base_url;  // no trailing '/'
};

struct AgentConfig {
  // `agent.backend`, the preference `auto` tries first; empty when not configured.
  std::string backend;
  ProviderConfig openai;
  ProviderConfig anthropic;
};

// Where the values come from, lowest precedence last. `getenv` returns the value of an
// environment variable or nullopt; an empty value counts as unset.
struct ConfigSources {
  std::function<std::optional<std::string>(std::string_view name)> getenv;
  std::map<std::string, std::string> project;  // .warden/config.json, by dotted key
  std::map<std::string, std::string> global;   // $XDG_CONFIG_HOME/warden/config.json
};

// Returns the agent settings: each key from its environment variable (keys and base URLs
// only), else the project file, else the global file, else the default.
AgentConfig ResolveAgentConfig(const ConfigSources& sources);

// Parses the text of a WARDEN config file into dotted keys: a flat object
// {"openai.api_key": "..."} or nested objects {"openai": {"api_key": "..."}}; string values
// only (numbers and booleans are kept as their JSON text). Malformed JSON or a non-object is
// kMalformed; the message never quotes the file's contents, which may hold a key.
Result<std::map<std::string, std::string>> ParseConfigJson(std::string_view text);

// Returns a getenv for ConfigSources that reads the process environment.
std::function<std::optional<std::string>(std::string_view)> ProcessEnvironment();

}  // namespace trove::warden::agents

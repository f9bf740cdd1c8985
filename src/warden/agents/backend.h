// Agent backends (docs/warden.md §7.3): what proposes a name for one function from its facts.
//
// Three backends: `offline` (deterministic heuristics, no network), `openai` (aliases `codex`,
// `oai`; the Responses API) and `anthropic` (the Messages API). A reply is only ever a
// proposal: the pipeline passes it through the verifier (verifier.h) and the economy gate
// before anything is written.
//
// Errors a backend returns, and what the pass does with them:
//   kPermissionDenied  the provider refused the key (HTTP 401/403): the pass aborts; CLI exit 5
//   kUnsupported       the backend is unavailable (no key, no HTTPS): CLI exit 5, MCP tool error
//   kCancelled         the caller cancelled: the pass aborts
//   anything else      (timeout, retries exhausted, HTTP 4xx): recorded as an `error` detail of
//                      that one function; the pass goes on
// No error message, log line or detail ever contains an API key.
// Thread safety: a Backend is used by one thread at a time. The free functions are pure.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "warden/agents/config.h"
#include "warden/agents/facts.h"

namespace trove::warden::agents {

// A backend's claim about one function (§7.3 provider contract).
struct Proposal {
  std::string name;
  std::string summary;
  double confidence = 0;
  std::optional<std::string> type_signature;  // a refinement; kept in evidence only (§7.4)
  std::vector<std::string> cited_strings;
};

// What one Propose call returned: a proposal or an abstention.
struct BackendReply {
  std::optional<Proposal> proposal;  // nullopt: the backend abstained
  // Why it abstained when that was not the model's own clean `{"abstain": true}`, e.g.
  // "malformed model output: ..."; empty otherwise.
  std::string note;
  int retries = 0;  // HTTP attempts beyond the first (429 and 5xx)
};

class Backend {
 public:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual ~Backend() = default;

  // Returns the internal backend name written into evidence: "offline", "openai",
  // "anthropic".
  virtual std::string_view name() const = 0;
  // Returns the model asked, or nullopt (offline).
  virtual std::optional<std::string> model() const = 0;

  // Returns a proposal or an abstention for `facts`. `callees` are the current names of its
  // direct defined callees (§7.2). Providers poll `cancel` while waiting.
  virtual Result<BackendReply> Propose(const FunctionFacts& facts,
                                       std::span<const CalleeName> callees,
                                       base::Cancellation& cancel) = 0;
};

// --- Registry (§7.3, §3.2 agent_backends) ---

// One row of `agent_backends`.
struct BackendInfo {
  std::string name;     // user-facing selector
  std::string backend;  // internal name, written into evidence
  std::vector<std::string> aliases;
  bool available = false;
  // Wire name `requires` (a C++ keyword): required environment variables and components.
  std::vector<std::string> requirements;
  std::optional<std::string> default_model;
};

// Returns the three backends in the order offline, openai, anthropic, with availability from
// `config` (a provider needs its key and a libcurl with HTTPS).
std::vector<BackendInfo> ListBackends(const AgentConfig& config);

// Returns `{"backends": [...]}`, the agent_backends result (§3.1, §3.2), as compact JSON.
std::string BackendsToJson(const std::vector<BackendInfo>& backends);

// Returns the internal name for a selector: "offline", "openai" (also for "codex", "oai"),
// "anthropic" or "auto". Unknown selectors are kInvalidArgument naming the valid ones.
Result<std::string> CanonicalBackendName(std::string_view selector);

// Returns the backend `auto` runs (§7.3, Decision): the configured `agent.backend` if
// available, else openai, else anthropic, else offline. A configured value that is not a
// backend name is kInvalidArgument.
Result<std::string> ResolveAutoBackend(const AgentConfig& config);

// Whether the linked libcurl speaks HTTPS.
bool HttpsSupported();

// Knobs of the provider clients; the defaults are those of §7.3, tests shorten them.
struct ProviderOptions {
  std::int64_t timeout_ms = 60'000;  // whole request
  std::int64_t connect_timeout_ms = 10'000;
  int max_retries = 3;                   // for 429 and 5xx
  std::int64_t backoff_base_ms = 1'000;  // retry k waits base * 2^(k-1), k = 1..max_retries
  std::int64_t max_backoff_ms = 30'000;  // cap, also on a server's Retry-After
  std::size_t max_response_bytes = 8 << 20;
  int max_output_tokens = 1024;  // Anthropic's required max_tokens
};

// Returns the backend for `selector` (any CanonicalBackendName input) with model `model_flag`
// when given (`--model`), else the configured or default model. `auto` resolves through
// ResolveAutoBackend. An unavailable provider is kUnsupported with a message naming what is
// missing (e.g. "OPENAI_API_KEY is not set"), never a key.
Result<std::unique_ptr<Backend>> MakeBackend(std::string_view selector,
                                             const std::optional<std::string>& model_flag,
                                             const AgentConfig& config,
                                             const ProviderOptions& options = {});

}  // namespace trove::warden::agents

// The Anthropic backend (docs/warden.md §7.3; selector `anthropic`): one Messages API call per
// function, `POST {base}/v1/messages` with headers `x-api-key` and `anthropic-version:
// 2023-06-01`. The answer's JSON Schema is the input schema of one forced tool
// (`tool_choice: {type: tool}`), so the model answers with a tool_use block holding the
// object; a plain text answer holding the JSON object is accepted too. See backend.h for the
// error contract.
// Thread safety: one thread at a time (like every Backend).
#pragma once

#include <memory>

#include "warden/agents/backend.h"

namespace trove::base::http {
class Session;
}  // namespace trove::base::http

namespace trove::warden::agents {

inline constexpr std::string_view kAnthropicVersion = "2023-06-01";
inline constexpr std::string_view kAnthropicToolName = "propose_function_name";

class AnthropicBackend final : public Backend {
 public:
  // REQUIRES: config.api_key is not empty (MakeBackend checks availability).
  AnthropicBackend(ProviderConfig config, ProviderOptions options);
  ~AnthropicBackend() override;

  std::string_view name() const override { return "anthropic"; }
  std::optional<std::string> model() const override { return config_.model; }
  Result<BackendReply> Propose(const FunctionFacts& facts, std::span<const CalleeName> callees,
                               base::Cancellation& cancel) override;

 private:
  const ProviderConfig config_;
  const ProviderOptions options_;
  const std::unique_ptr<base::http::Session> session_;
};

}  // namespace trove::warden::agents

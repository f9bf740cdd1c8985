// The OpenAI backend (docs/warden.md §7.3; selectors `openai`, `codex`, `oai`): one Responses
// API call per function, `POST {base}/v1/responses` with a bearer key and JSON-schema
// structured output (text.format json_schema, strict). See backend.h for the error contract.
// Thread safety: one thread at a time (like every Backend).
#pragma once

#include <memory>

#include "warden/agents/backend.h"

namespace trove::base::http {
class Session;
}  // namespace trove::base::http

namespace trove::warden::agents {

class OpenAiBackend final : public Backend {
 public:
  // REQUIRES: config.api_key is not empty (MakeBackend checks availability).
  OpenAiBackend(ProviderConfig config, ProviderOptions options);
  ~OpenAiBackend() override;

  std::string_view name() const override { return "openai"; }
  std::optional<std::string> model() const override { return config_.model; }
  Result<BackendReply> Propose(const FunctionFacts& facts, std::span<const CalleeName> callees,
                               base::Cancellation& cancel) override;

 private:
  const ProviderConfig config_;
  const ProviderOptions options_;
  const std::unique_ptr<base::http::Session> session_;
};

}  // namespace trove::warden::agents

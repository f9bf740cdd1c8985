#include "warden/agents/anthropic_backend.h"

#include <nlohmann/json.hpp>

#include "warden/agents/provider_common.h"

namespace trove::warden::agents {

namespace {

using Json = nlohmann::json;

// Extracts the answer from a Messages API body: the input of our tool_use block, else the
// text blocks. A refusal is an abstention with a note.
BackendReply ParseMessage(const std::string& body) {
  BackendReply reply;
  Json doc = Json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    reply.note = "malformed model output: the response body is not a JSON object";
    return reply;
  }
  if (doc.value("stop_reason", "") == "refusal") {
    reply.note = "the model refused";
    return reply;
  }
  auto content = doc.find("content");
  if (content == doc.end() || !content->is_array()) {
    reply.note = "malformed model output: the response has no content array";
    return reply;
  }
  std::string text;
  for (const Json& block : *content) {
    if (!block.is_object()) continue;
    std::string type = block.value("type", "");
    if (type == "tool_use" && block.value("name", "") == kAnthropicToolName) {
      auto input = block.find("input");
      if (input == block.end() || !input->is_object()) {
        reply.note = "malformed model output: the tool input is not an object";
        return reply;
      }
      return internal::ParseModelText(input->dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    if (type == "text" && block.contains("text") && block["text"].is_string()) {
      text += block["text"].get<std::string>();
    }
  }
  if (text.empty()) {
    reply.note = "malformed model output: no tool_use or text block in the response";
    return reply;
  }
  return internal::ParseModelText(text);
}

}  // namespace

AnthropicBackend::AnthropicBackend(ProviderConfig config, ProviderOptions options)
    : config_(std::move(config)),
      options_(options),
      session_(std::make_unique<internal::HttpSession>()) {}

AnthropicBackend::~AnthropicBackend() = default;

Result<BackendReply> AnthropicBackend::Propose(const FunctionFacts& facts,
                                               std::span<const CalleeName> callees,
                                               base::Cancellation& cancel) {
  Json schema = Json::parse(internal::ProposalSchemaJson());
  Json body = {
      {"model", config_.model},
      {"max_tokens", options_.max_output_tokens},
      {"system", internal::SystemPrompt()},
      {"messages",
       Json::array({{{"role", "user"}, {"content", internal::UserPrompt(facts, callees)}}})},
      {"tools", Json::array({{{"name", kAnthropicToolName},
                              {"description",
                               "Record the proposed name for the function, or an abstention."},
                              {"input_schema", schema}}})},
      {"tool_choice", {{"type", "tool"}, {"name", kAnthropicToolName}}}};
  internal::HttpRequest request;
  request.url = config_.base_url + "/v1/messages";
  request.headers = {{"x-api-key", config_.api_key},
                     {"anthropic-version", std::string(kAnthropicVersion)},
                     {"Content-Type", "application/json"},
                     {"Accept", "application/json"}};
  request.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  ASSIGN_OR_RETURN(
      internal::PostResult posted,
      internal::PostWithRetry(*session_, "anthropic", request, options_, config_.api_key, cancel));
  BackendReply reply = ParseMessage(posted.response.body);
  reply.retries = posted.retries;
  return reply;
}

}  // namespace trove::warden::agents

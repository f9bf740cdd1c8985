#include "warden/agents/openai_backend.h"

#include <nlohmann/json.hpp>

#include "warden/agents/provider_common.h"

namespace trove::warden::agents {

namespace {

using Json = nlohmann::json;

// Extracts the answer from a Responses API body: the output_text parts of the message items
// of `output`. A refusal or an incomplete response is an abstention with a note.
BackendReply ParseResponse(const std::string& body) {
  BackendReply reply;
  Json doc = Json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    reply.note = "malformed model output: the response body is not a JSON object";
    return reply;
  }
  if (auto status = doc.find("status");
      status != doc.end() && status->is_string() && status->get<std::string>() == "incomplete") {
    reply.note = "malformed model output: the response is incomplete";
    return reply;
  }
  auto output = doc.find("output");
  if (output == doc.end() || !output->is_array()) {
    reply.note = "malformed model output: the response has no output array";
    return reply;
  }
  std::string text;
  for (const Json& item : *output) {
    if (!item.is_object() || item.value("type", "") != "message") continue;
    auto content = item.find("content");
    if (content == item.end() || !content->is_array()) continue;
    for (const Json& part : *content) {
      if (!part.is_object()) continue;
      std::string type = part.value("type", "");
      if (type == "refusal") {
        reply.note = "the model refused";
        return reply;
      }
      if (type == "output_text" && part.contains("text") && part["text"].is_string()) {
        text += part["text"].get<std::string>();
      }
    }
  }
  if (text.empty()) {
    reply.note = "malformed model output: no output_text in the response";
    return reply;
  }
  return internal::ParseModelText(text);
}

}  // namespace

OpenAiBackend::OpenAiBackend(ProviderConfig config, ProviderOptions options)
    : config_(std::move(config)),
      options_(options),
      session_(std::make_unique<internal::HttpSession>()) {}

OpenAiBackend::~OpenAiBackend() = default;

Result<BackendReply> OpenAiBackend::Propose(const FunctionFacts& facts,
                                            std::span<const CalleeName> callees,
                                            base::Cancellation& cancel) {
  Json schema = Json::parse(internal::ProposalSchemaJson());
  Json body = {{"model", config_.model},
               {"instructions", internal::SystemPrompt()},
               {"input", internal::UserPrompt(facts, callees)},
               {"store", false},
               {"text",
                {{"format",
                  {{"type", "json_schema"},
                   {"name", internal::kSchemaName},
                   {"schema", schema},
                   {"strict", true}}}}}};
  internal::HttpRequest request;
  request.url = config_.base_url + "/v1/responses";
  request.headers = {{"Authorization", "Bearer " + config_.api_key},
                     {"Content-Type", "application/json"},
                     {"Accept", "application/json"}};
  request.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  ASSIGN_OR_RETURN(
      internal::PostResult posted,
      internal::PostWithRetry(*session_, "openai", request, options_, config_.api_key, cancel));
  BackendReply reply = ParseResponse(posted.response.body);
  reply.retries = posted.retries;
  return reply;
}

}  // namespace trove::warden::agents

#include "warden/agents/provider_common.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

namespace trove::warden::agents::internal {

namespace {

using Json = nlohmann::json;

std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Sleeps `ms`, waking early when `cancel` is set. Returns false when cancelled.
bool SleepUnlessCancelled(std::int64_t ms, base::Cancellation& cancel) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (cancel.requested()) return false;
    auto left = deadline - std::chrono::steady_clock::now();
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(20)));
  }
  return !cancel.requested();
}

// A short, single-line excerpt of the provider's error message (error.message in both APIs),
// with the key redacted; empty when the body has none.
std::string ProviderErrorExcerpt(const std::string& body, std::string_view secret) {
  Json doc = Json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return {};
  auto error = doc.find("error");
  if (error == doc.end() || !error->is_object()) return {};
  auto message = error->find("message");
  if (message == error->end() || !message->is_string()) return {};
  std::string text = Redact(message->get<std::string>(), secret);
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  }
  if (text.size() > 200) text = text.substr(0, 200) + "...";
  return text;
}

std::string StripFence(std::string_view text) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  };
  text = trim(text);
  if (text.substr(0, 3) == "```") {
    std::size_t newline = text.find('\n');
    if (newline != std::string_view::npos) text = text.substr(newline + 1);
    text = trim(text);
    if (text.size() >= 3 && text.substr(text.size() - 3) == "```") {
      text = trim(text.substr(0, text.size() - 3));
    }
  }
  return std::string(text);
}

base::http::Limits LimitsOf(const ProviderOptions& options) {
  base::http::Limits limits;
  limits.timeout_ms = options.timeout_ms;
  limits.connect_timeout_ms = options.connect_timeout_ms;
  limits.max_response_bytes = options.max_response_bytes;
  return limits;
}

BackendReply Malformed(std::string why) {
  BackendReply reply;
  reply.note = "malformed model output: " + why;
  return reply;
}

}  // namespace

Result<PostResult> PostWithRetry(HttpSession& session, std::string_view provider,
                                 const HttpRequest& request, const ProviderOptions& options,
                                 std::string_view secret, base::Cancellation& cancel) {
  PostResult result;
  for (int attempt = 0;; ++attempt) {
    Result<HttpResponse> posted =
        session.Post(provider, request, LimitsOf(options), cancel, secret);
    if (!posted.ok()) {
      if (posted.status().code() == base::StatusCode::kCancelled) {
        return Status::Cancelled("agent pass cancelled");
      }
      return posted.status();
    }
    HttpResponse response = std::move(*posted);
    long status = response.status;
    if (status >= 200 && status < 300) {
      result.response = std::move(response);
      result.retries = attempt;
      return result;
    }
    if (status == 401 || status == 403) {
      // The provider's text for a bad key may echo part of it: not quoted at all.
      return Status::PermissionDenied(
          fmt::format("{}: authentication failed (HTTP {}); check the API key", provider, status));
    }
    std::string excerpt = ProviderErrorExcerpt(response.body, secret);
    std::string suffix = excerpt.empty() ? "" : ": " + excerpt;
    bool retryable = status == 429 || (status >= 500 && status < 600);
    if (!retryable) {
      return Status::InvalidArgument(fmt::format("{}: HTTP {}{}", provider, status, suffix));
    }
    if (attempt >= options.max_retries) {
      std::string message =
          fmt::format("{}: HTTP {} after {} attempts{}", provider, status, attempt + 1, suffix);
      if (status == 429) return Status::ResourceExhausted(std::move(message));
      return Status::Io(std::move(message));
    }
    std::int64_t wait = options.backoff_base_ms << attempt;
    if (response.retry_after_seconds) {
      wait = std::max<std::int64_t>(wait, *response.retry_after_seconds * 1000);
    }
    wait = std::min(wait, options.max_backoff_ms);
    if (!SleepUnlessCancelled(wait, cancel)) return Status::Cancelled("agent pass cancelled");
  }
}

std::string SystemPrompt() {
  return "You name functions of a stripped WebAssembly module for a reverse-engineering "
         "knowledge base. Use only the facts given: the signature, the imports called, the "
         "strings the function references, the instruction mnemonics, export names and the "
         "current names of its direct callees. Do not invent strings or behaviour the facts "
         "do not show. Answer with one JSON object: {\"name\": a C identifier (segments may "
         "be joined with ::), \"summary\": one or two sentences, \"confidence\": a number in "
         "[0, 1], \"type_signature\": a refined signature with the same number of parameters "
         "and results, or null, \"cited_strings\": the referenced strings your name relies "
         "on, copied exactly}. Quote in the summary only text that occurs in a referenced "
         "string. If the facts do not support a name, answer {\"abstain\": true}.";
}

std::string UserPrompt(const FunctionFacts& facts, std::span<const CalleeName> callees) {
  Json doc = Json::object();
  doc["func_index"] = facts.func_index;
  doc["stable_id"] = facts.stable_id;
  doc["type_signature"] = facts.type_signature;
  doc["call_targets"] = facts.call_targets;
  doc["referenced_strings"] = facts.referenced_strings;
  doc["raw_name"] = facts.raw_name ? Json(*facts.raw_name) : Json(nullptr);
  std::size_t kept = std::min(facts.instruction_mnemonics.size(), kPromptMnemonics);
  doc["instruction_mnemonics"] = std::vector<std::string>(
      facts.instruction_mnemonics.begin(),
      facts.instruction_mnemonics.begin() + static_cast<std::ptrdiff_t>(kept));
  doc["is_exported"] = facts.is_exported;
  doc["export_names"] = facts.export_names;
  Json named = Json::array();
  for (const CalleeName& callee : callees) {
    named.push_back({{"func_index", callee.func_index}, {"name", callee.name}});
  }
  std::string prompt = "FunctionFacts:\n" + Dump(doc) + "\n";
  if (kept < facts.instruction_mnemonics.size()) {
    prompt += fmt::format("(instruction_mnemonics: the first {} of {})\n", kept,
                          facts.instruction_mnemonics.size());
  }
  prompt += "Named direct callees:\n" + Dump(named) + "\n";
  prompt += "Propose a name for this function, or abstain.";
  return prompt;
}

std::string ProposalSchemaJson() {
  Json nullable_string = {{"type", Json::array({"string", "null"})}};
  Json schema = {{"type", "object"},
                 {"properties",
                  {{"abstain", {{"type", "boolean"}}},
                   {"name", nullable_string},
                   {"summary", nullable_string},
                   {"confidence", {{"type", Json::array({"number", "null"})}}},
                   {"type_signature", nullable_string},
                   {"cited_strings",
                    {{"type", Json::array({"array", "null"})}, {"items", {{"type", "string"}}}}}}},
                 {"required", Json::array({"abstain", "name", "summary", "confidence",
                                           "type_signature", "cited_strings"})},
                 {"additionalProperties", false}};
  return Dump(schema);
}

BackendReply ParseModelText(std::string_view text) {
  Json doc = Json::parse(StripFence(text), nullptr, false);
  if (doc.is_discarded()) return Malformed("not valid JSON");
  if (!doc.is_object()) return Malformed("not a JSON object");
  if (auto abstain = doc.find("abstain"); abstain != doc.end() && !abstain->is_null()) {
    if (!abstain->is_boolean()) return Malformed("abstain is not a boolean");
    if (abstain->get<bool>()) return BackendReply{};
  }
  Proposal proposal;
  auto name = doc.find("name");
  if (name == doc.end() || !name->is_string() || name->get<std::string>().empty()) {
    return Malformed("no name");
  }
  proposal.name = name->get<std::string>();
  auto confidence = doc.find("confidence");
  if (confidence == doc.end() || !confidence->is_number()) {
    return Malformed("confidence is not a number");
  }
  proposal.confidence = confidence->get<double>();
  if (auto summary = doc.find("summary"); summary != doc.end() && !summary->is_null()) {
    if (!summary->is_string()) return Malformed("summary is not a string");
    proposal.summary = summary->get<std::string>();
  }
  if (auto sig = doc.find("type_signature"); sig != doc.end() && !sig->is_null()) {
    if (!sig->is_string()) return Malformed("type_signature is not a string");
    if (!sig->get<std::string>().empty()) proposal.type_signature = sig->get<std::string>();
  }
  if (auto cited = doc.find("cited_strings"); cited != doc.end() && !cited->is_null()) {
    if (!cited->is_array()) return Malformed("cited_strings is not an array");
    for (const Json& entry : *cited) {
      if (!entry.is_string()) return Malformed("cited_strings holds a non-string");
      proposal.cited_strings.push_back(entry.get<std::string>());
    }
  }
  BackendReply reply;
  reply.proposal = std::move(proposal);
  return reply;
}

}  // namespace trove::warden::agents::internal

// What the two provider backends share (docs/warden.md §7.3): the bounded retry policy over
// the shared HTTP POST client (base/http), the prompt, the output schema of the provider contract
// and the parser of a model's answer. Internal to agents/; the backends are in openai_backend.h and
// anthropic_backend.h.
//
// Secrets: the API key travels only in request headers. No message built here contains a
// header, and Redact() removes the key from any provider text quoted in an error.
// Thread safety: an HttpSession belongs to one thread at a time; the free functions may run on
// several threads at once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/cancellation.h"
#include "base/http/http_post.h"
#include "base/status.h"
#include "warden/agents/backend.h"
#include "warden/agents/facts.h"

namespace trove::warden::agents::internal {

// The transport is the shared client (base/http/http_post.h).
using HttpSession = base::http::Session;
using HttpRequest = base::http::Request;
using HttpResponse = base::http::Response;
using base::http::Redact;

struct PostResult {
  HttpResponse response;  // a 2xx response
  int retries = 0;
};

// POSTs with the §7.3 policy: 429 and 5xx are retried up to options.max_retries times, waiting
// backoff_base_ms * 2^(k-1) before retry k (or the server's Retry-After, both capped at
// max_backoff_ms); 401 and 403 are kPermissionDenied at once; other statuses are
// kInvalidArgument; exhausted retries are kResourceExhausted (429) or kIo (5xx). `secret` is
// redacted from every message.
Result<PostResult> PostWithRetry(HttpSession& session, std::string_view provider,
                                 const HttpRequest& request, const ProviderOptions& options,
                                 std::string_view secret, base::Cancellation& cancel);

// The system instructions of both providers: the contract and the hallucination constraint.
std::string SystemPrompt();
// The user prompt: the facts as JSON (at most kPromptMnemonics mnemonics) and the callee names.
std::string UserPrompt(const FunctionFacts& facts, std::span<const CalleeName> callees);
// The JSON Schema of the answer, as JSON text (an object schema; every field present,
// optional ones nullable, so it also suits OpenAI's strict mode).
std::string ProposalSchemaJson();
inline constexpr std::string_view kSchemaName = "warden_proposal";

// Parses a model's answer text (one JSON object, optionally inside a ``` fence) into a reply:
// a proposal, a clean abstention, or an abstention with a note when it is malformed.
BackendReply ParseModelText(std::string_view text);

}  // namespace trove::warden::agents::internal

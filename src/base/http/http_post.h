// One HTTP POST client over libcurl for every outbound JSON API Trove speaks: WARDEN's model
// providers (warden/agents) and Librarian's embeddings endpoint (librarian/embed). It owns the
// transport rules both need: a reused easy handle (one connection and TLS session per client),
// http/https only, whole-request and connect timeouts, a cap on the response size, Retry-After
// read when numeric, and cancellation that interrupts a transfer in flight. What an HTTP status
// means is the caller's business: any status is a response.
//
// Secrets: a caller's key travels only in request headers. No message built here contains a
// header, and transport errors quoted from libcurl are passed through Redact with the caller's
// secret. Thread safety: a Session belongs to one thread at a time; Redact is pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"

namespace trove::base::http {

struct Request {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // may hold a key: never print
  std::string body;
};

struct Response {
  long status = 0;
  std::string body;
  std::optional<std::int64_t> retry_after_seconds;  // Retry-After, when numeric (≤ 1 day)
};

struct Limits {
  std::int64_t timeout_ms = 60'000;  // the whole request
  std::int64_t connect_timeout_ms = 10'000;
  std::size_t max_response_bytes = 8 << 20;
};

class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // POSTs `request` once. Transport failures are errors whose messages start with `who`:
  // kCancelled (`cancel` was set), kDeadlineExceeded (timeout), kResourceExhausted (response
  // over limits.max_response_bytes), kIo (anything else, libcurl's detail with `secret`
  // redacted), kInternal (libcurl could not start).
  Result<Response> Post(std::string_view who, const Request& request, const Limits& limits,
                        base::Cancellation& cancel, std::string_view secret = {});

 private:
  void* curl_;  // CURL*, opaque so that this header needs no curl.h; null if init failed
};

// Returns `text` with every occurrence of `secret` (when not empty) replaced by "[redacted]".
std::string Redact(std::string text, std::string_view secret);

}  // namespace trove::base::http

#include "base/http/http_post.h"

#include <curl/curl.h>
#include <fmt/core.h>

#include <algorithm>
#include <memory>

namespace trove::base::http {
namespace {

// libcurl's global state is initialised once, before the first handle, on whichever thread
// gets here first (curl_global_init is thread-safe in the libcurl Debian 12 ships).
bool CurlReady() {
  static const bool ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ready;
}

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

struct Transfer {
  std::string body;
  std::size_t max_bytes = 0;
  bool too_large = false;
  std::optional<std::int64_t> retry_after;
  base::Cancellation* cancel = nullptr;
};

std::size_t OnBody(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (transfer->body.size() + bytes > transfer->max_bytes) {
    transfer->too_large = true;
    return 0;  // makes libcurl fail with CURLE_WRITE_ERROR
  }
  transfer->body.append(data, bytes);
  return bytes;
}

// Reads a numeric Retry-After; an HTTP date is ignored.
std::size_t OnHeader(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  std::string_view line(data, size * count);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() <= kName.size()) return size * count;
  for (std::size_t i = 0; i < kName.size(); ++i) {
    char c = line[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kName[i]) return size * count;
  }
  std::int64_t seconds = 0;
  bool digits = false;
  for (char c : line.substr(kName.size())) {
    if (c >= '0' && c <= '9') {
      seconds = std::min<std::int64_t>(seconds * 10 + (c - '0'), 86'400);
      digits = true;
    } else if (c != ' ' && c != '\t' && c != '\r' && c != '\n') {
      digits = false;
      break;
    }
  }
  if (digits) transfer->retry_after = seconds;
  return size * count;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<Transfer*>(user)->cancel->requested() ? 1 : 0;
}

}  // namespace

std::string Redact(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  for (std::size_t at = 0; (at = text.find(secret, at)) != std::string::npos; at += 10) {
    text.replace(at, secret.size(), "[redacted]");
  }
  return text;
}

Session::Session() : curl_(CurlReady() ? curl_easy_init() : nullptr) {}

Session::~Session() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<Response> Session::Post(std::string_view who, const Request& request, const Limits& limits,
                               base::Cancellation& cancel, std::string_view secret) {
  if (curl_ == nullptr)
    return Status::Internal(fmt::format("{}: libcurl failed to initialise", who));
  if (cancel.requested()) return Status::Cancelled(fmt::format("{}: cancelled", who));
  CURL* h = static_cast<CURL*>(curl_);
  // Clears the options of the previous request; live connections and caches stay.
  curl_easy_reset(h);

  std::unique_ptr<curl_slist, SlistDeleter> headers;
  for (const auto& [name, value] : request.headers) {
    std::string line = name + ": " + value;
    curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
    if (grown == nullptr) return Status::Internal(fmt::format("{}: out of memory", who));
    (void)headers.release();
    headers.reset(grown);
  }

  Transfer transfer;
  transfer.max_bytes = limits.max_response_bytes;
  transfer.cancel = &cancel;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  // Declared after what the handle points at, so it runs first on every return: the handle
  // keeps no pointer to this frame between requests (not even into curl_easy_cleanup).
  struct ResetOnExit {
    CURL* handle;
    ~ResetOnExit() { curl_easy_reset(handle); }
  } reset_on_exit{h};

  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(limits.timeout_ms));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(limits.connect_timeout_ms));
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, &transfer);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever libcurl can decode

  const CURLcode code = curl_easy_perform(h);
  if (code == CURLE_ABORTED_BY_CALLBACK || cancel.requested()) {
    return Status::Cancelled(fmt::format("{}: cancelled", who));
  }
  if (code == CURLE_OPERATION_TIMEDOUT) {
    return Status::DeadlineExceeded(
        fmt::format("{}: request timed out after {} ms", who, limits.timeout_ms));
  }
  if (transfer.too_large) {
    return Status::ResourceExhausted(
        fmt::format("{}: response larger than {} bytes", who, limits.max_response_bytes));
  }
  if (code != CURLE_OK) {
    // The error buffer names the host or the TLS failure, never a header.
    std::string detail = error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
    return Status::Io(
        fmt::format("{}: request failed: {}", who, Redact(std::move(detail), secret)));
  }
  Response response;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  response.body = std::move(transfer.body);
  response.retry_after_seconds = transfer.retry_after;
  return response;
}

}  // namespace trove::base::http

// Server and Session: the MCP dispatcher shared by every transport.
//
// A Server owns the registries and options; a Session is one protocol conversation (stdio:
// the connection; HTTP: one Mcp-Session-Id). Transports only frame: they parse a message with
// ParseMessage and hand it to Session::Handle with the Channel its replies travel on. Control
// messages (ping, initialize, cancellation, setLevel, responses) are handled on the calling
// (reader) thread; other requests run on the worker pool. Every accepted request is answered
// exactly once, or deliberately not at all when cancelled (docs/mcp.md §5.2).
//
// Thread safety: Session::Handle may be called from several threads at once (HTTP); a Server
// is shared by all sessions. Registries must be filled before the first session starts.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/cancellation.h"
#include "base/logging.h"
#include "base/thread_pool.h"
#include "mcp/context.h"
#include "mcp/jsonrpc.h"
#include "mcp/registry.h"

namespace trove::mcp {

namespace policy {
class AuditLog;
class CircuitBreakers;
class PathConfiner;
class RateLimiter;
struct Admission;
struct Principal;
}  // namespace policy

struct ErrorObject;

inline constexpr std::string_view kLatestProtocolVersion = "2025-11-25";

// Returns true for the revisions Trove implements.
bool IsSupportedProtocolVersion(std::string_view version);

struct ServerInfo {
  std::string name;  // stable: "warden", "kodo-mcp", "librarian"
  std::string version;
  std::string title;         // optional
  std::string instructions;  // optional usage hint
};

struct ServerOptions {
  ParseLimits parse;                                    // message size, nesting depth
  std::size_t max_in_flight = 256;                      // per session; control excluded
  std::chrono::milliseconds handler_deadline{120'000};  // per-tool override in ToolSpec
  std::chrono::milliseconds client_request_timeout{60'000};
  std::size_t page_size = 100;          // list pagination
  bool resources_list_changed = false;  // only if really sent
  // stdio only: replies leave in the order their requests arrived, though handlers still run
  // in parallel on the pool. Notifications and requests to the client are not held back; a
  // cancelled request's missing reply holds up nothing. For clients that pair replies with
  // requests by position (upstream Kodo's, docs/kodo.md §3). At most max_in_flight replies
  // wait; past that the reader stops reading until the oldest is answered. Default: off
  // (docs/mcp.md §5.4: no order is promised in pool mode). HTTP answers each request on its own
  // stream.
  bool ordered_replies = false;
  // Validate every structuredContent against outputSchema and abort on a mismatch (debug and
  // test builds).
#ifdef NDEBUG
  bool validate_output = false;
#else
  bool validate_output = true;
#endif
  // The policy layer (docs/mcp.md §5.6, docs/decisions/0048-mcp-policy-layer.md). Scopes are
  // always enforced: a tool whose ToolSpec::scopes the session's principal lacks is refused
  // with PERMISSION_DENIED and left out of tools/list. With an audit log, every tools/call and
  // resources/read is recorded; with a rate limiter, tools/call takes one token per call from
  // the principal's bucket and a refusal is a retryable RATE_LIMIT_EXCEEDED.
  std::shared_ptr<policy::AuditLog> audit_log;
  std::shared_ptr<policy::RateLimiter> rate_limiter;
  // The allowed roots of client-sent paths (CallContext::ResolvePath); null: no roots, so every
  // path is refused (the HTTP default; stdio defaults to the current directory, serve.h).
  std::shared_ptr<const policy::PathConfiner> confiner;
  // One circuit breaker per external dependency (CallContext::breaker); null: the Server makes
  // one with the defaults of docs/mcp.md §5.6 (5 failures in 60 s, open 30 s, 3 probes).
  std::shared_ptr<policy::CircuitBreakers> breakers;
  // Consent granted by configuration (--consent, the policy file's "consent"): tool names, or
  // operation names passed to CallContext::RequireConsent; "*" grants every one. A tool with
  // ToolSpec::needs_consent that is not listed asks the client with elicitation/create (when it
  // declared the capability; an acceptance is remembered for the session) or is refused with
  // PERMISSION_DENIED and details.consentRequired.
  std::vector<std::string> consent;
};

// Returns the core principal of an authenticated policy principal (scope names, token id).
Principal ToCorePrincipal(const policy::Principal& principal);

// Returns whether `principal` holds every scope in `required` (admin implies all). An unknown
// scope name in `required` is never granted.
bool PrincipalAllows(const Principal& principal, const std::vector<std::string>& required);

// What a transport with status codes (HTTP) answers a request's final message with, instead of
// 200 (docs/mcp.md §2.6, §5.6): 403 for a call refused for its scopes (in oauth mode with an
// insufficient_scope challenge naming `scopes`), 429 with Retry-After for a call refused by the
// rate limiter or an open circuit breaker. The body stays the JSON-RPC response. Only a plain
// JSON answer can carry it: once a POST's answer became an SSE stream its status is already 200.
struct StatusHint {
  int http_status = 0;                   // 0: none (200)
  std::int64_t retry_after_seconds = 0;  // 429: Retry-After, rounded up, at least 1
  std::vector<std::string> scopes;       // 403: the scopes the call needed
};

// An outbound stream: stdout, an HTTP POST's response, or a session's GET stream.
// Implementations serialize writes with one lock (one writer per output, docs/mcp.md §5.3).
class Channel {
 public:
  virtual ~Channel() = default;
  // Writes one whole message. `final` marks the response that ends a POST stream. Returns
  // false when the peer is gone.
  virtual bool Send(const std::string& message, bool final) = 0;
  // Ends the stream without a final message (the request was cancelled).
  virtual void Close() {}
  // Called just before the final message of a request that has a StatusHint; only HTTP uses
  // it. Default: ignored.
  virtual void SetStatusHint(const StatusHint& /*hint*/) {}
  // Ends the current connection of an SSE stream after a `retry:` field, keeping the stream
  // for resumption with GET + Last-Event-ID (SSE polling, SEP-1699). No-op elsewhere.
  virtual void Disconnect(std::chrono::milliseconds /*retry*/) {}
};

class Server;

namespace internal {

// One accepted request while it runs.
struct InFlight {
  Json id;
  std::string key;  // IdKey(id)
  std::string method;
  Json params;
  Json progress_token;  // null: none
  std::shared_ptr<Channel> channel;
  base::Cancellation cancel;
  std::mutex mu;
  bool done = false;              // GUARDED_BY(mu): a reply was sent or suppressed
  bool suppressed = false;        // GUARDED_BY(mu): cancelled; nothing more is sent
  double last_progress = -1e300;  // GUARDED_BY(mu)
  bool is_tool_call = false;
  std::chrono::steady_clock::time_point deadline;  // max(): none
  std::chrono::milliseconds deadline_length{0};
  // Set by the thread running the request before it finishes; sent with the final message.
  StatusHint status_hint;
  // The operation whose consent CallContext::RequireConsent refused while the handler ran
  // (the core adds details.consentRequired to the handler's PERMISSION_DENIED).
  std::string consent_refused;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Server& server, std::string id);
  ~Session();

  // Handles one message; replies and related notifications travel on `channel`.
  void Handle(Message msg, const std::shared_ptr<Channel>& channel);

  // Sends a message that is not tied to a request (resource updates, pings) on the
  // session's stream; returns false when there is none.
  bool SendToSession(const std::string& message);
  void set_session_channel(std::shared_ptr<Channel> channel);
  std::shared_ptr<Channel> session_channel();

  // Cancels every in-flight request (no replies follow) and fails pending client requests.
  void Close();
  // Waits until no request is in flight or `timeout` passes; returns true when idle.
  bool WaitIdle(std::chrono::milliseconds timeout);

  const std::string& id() const { return id_; }
  bool initialized() const { return initialize_done_.load(); }
  std::string protocol_version() const;
  std::size_t in_flight() const;
  bool closed() const { return closed_.load(); }
  bool subscribed(const std::string& uri) const;
  // The URIs this session subscribed to that start with `prefix`, in order.
  std::vector<std::string> SubscriptionsUnder(std::string_view prefix) const;
  // Answers and cancels every request whose deadline is before `now` (docs/mcp.md §3.2).
  void ExpireDeadlines(std::chrono::steady_clock::time_point now);

  // Used by CallContext.
  const std::string& negotiated_version() const { return version_; }
  const Json& client_capabilities() const { return client_capabilities_; }
  const Json& client_info() const { return client_info_; }
  const Principal& principal() const { return principal_; }
  // Sets who the session speaks for. REQUIRES: called by the transport before the first message.
  void set_principal(Principal principal) { principal_ = std::move(principal); }
  LogSeverity log_level() const { return log_level_.load(); }
  Server& server() { return server_; }
  // Sends `message` on the request's stream unless it finished or was cancelled.
  bool SendForRequest(InFlight& request, const std::string& message);
  Result<Json> ClientRequest(InFlight& request, std::string_view method, const Json& params,
                             std::chrono::milliseconds timeout);
  // Returns OK when `operation` may run in this session: consent granted by configuration, or
  // earlier in the session, or now by an elicitation/create confirmation (remembered).
  // Otherwise PERMISSION_DENIED (decline, cancel, no elicitation capability, no answer).
  Status EnsureConsent(InFlight& request, std::string_view operation);

 private:
  struct PendingClientRequest {
    std::mutex mu;
    std::condition_variable cv;
    bool answered = false;
    Json result;
    Json error;
  };

  void HandleRequest(Message msg, const std::shared_ptr<Channel>& channel);
  void Reply(const std::shared_ptr<Channel>& channel, const Json& id, const Json& result);
  void ReplyError(const std::shared_ptr<Channel>& channel, const Json& id, int code,
                  std::string message, Json data = nullptr);
  void HandleNotification(const Message& msg);
  void HandleResponse(const Message& msg);
  void Run(const std::shared_ptr<InFlight>& request);
  // Sends the final reply of `request` (once); drops it when cancelled.
  void Finish(InFlight& request, const std::string& message);
  void Remove(const InFlight& request);

  Json Initialize(const Json& params);
  // Method handlers: return the result, or set `error`.
  Json Dispatch(InFlight& request, std::optional<ProtocolError>& error);
  // Returns the serialized result object of tools/call (built as text, so a structured
  // result is serialized once for both structuredContent and its text mirror).
  std::string CallTool(InFlight& request, std::optional<ProtocolError>& error);
  Json ListPage(std::string_view method, const Json& params, std::optional<ProtocolError>& error);
  Json ReadResource(InFlight& request, std::optional<ProtocolError>& error);
  Json Subscribe(InFlight& request, bool subscribe, std::optional<ProtocolError>& error);
  Json GetPrompt(InFlight& request, std::optional<ProtocolError>& error);
  Json Complete(InFlight& request, std::optional<ProtocolError>& error);
  bool AtLeast(std::string_view revision) const;

  Server& server_;
  const std::string id_;
  std::mutex init_mu_;
  bool initialize_started_ = false;  // GUARDED_BY(init_mu_)
  std::atomic<bool> initialize_done_{false};
  std::atomic<bool> closed_{false};
  std::atomic<LogSeverity> log_level_{LogSeverity::kWarning};
  // Written once by initialize, before initialize_done_ is set; read-only afterwards.
  std::string version_{kLatestProtocolVersion};
  Json client_capabilities_ = Json::object();
  Json client_info_ = Json::object();
  Principal principal_;  // set by the transport before the first message; read-only afterwards

  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  std::map<std::string, std::shared_ptr<InFlight>> in_flight_;             // GUARDED_BY(mu_)
  std::set<std::string> subscriptions_;                                    // GUARDED_BY(mu_)
  std::shared_ptr<Channel> session_channel_;                               // GUARDED_BY(mu_)
  std::int64_t next_client_request_id_ = 0;                                // GUARDED_BY(mu_)
  std::map<std::int64_t, std::shared_ptr<PendingClientRequest>> pending_;  // GUARDED_BY(mu_)
  std::set<std::string> consents_;  // GUARDED_BY(mu_): granted by elicitation this session
};

}  // namespace internal

class Server {
 public:
  // `pool` and `logger` must outlive the Server. A pool with zero workers runs every handler
  // inline on the reader thread, in arrival order (deterministic transcripts).
  // REQUIRES before destruction: no task of this Server is left on the pool (after serving
  // returns, call pool.Wait(); serving has cancelled every request by then).
  Server(ServerInfo info, ServerOptions options, base::ThreadPool& pool,
         const base::Logger& logger);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  ToolRegistry& tools() { return tools_; }
  ResourceRegistry& resources() { return resources_; }
  PromptRegistry& prompts() { return prompts_; }
  const ToolRegistry& tools() const { return tools_; }
  const ResourceRegistry& resources() const { return resources_; }
  const PromptRegistry& prompts() const { return prompts_; }

  // Creates a session (stdio: one per connection; HTTP: one per Mcp-Session-Id).
  std::shared_ptr<internal::Session> NewSession(std::string id);

  // Sends notifications/resources/updated to every session subscribed to `uri`.
  void NotifyResourceUpdated(const std::string& uri);
  // Sends notifications/resources/updated for every URI starting with `prefix` that a session
  // subscribed to, to that session (for a change whose extent is unknown: "anything under
  // warden://symbols/ may have changed").
  void NotifyResourcesUpdatedUnder(std::string_view prefix);

  const ServerInfo& info() const { return info_; }
  const ServerOptions& options() const { return options_; }
  base::ThreadPool& pool() { return pool_; }
  const base::Logger& logger() const { return logger_; }

  // Returns the live sessions (expired entries are pruned).
  std::vector<std::shared_ptr<internal::Session>> LiveSessions();

  // Returns whether configuration pre-approved `operation` (ServerOptions::consent).
  bool ConsentConfigured(std::string_view operation) const;

  // With an audit log that can no longer be written (AuditLog::health() not OK): the
  // INTERNAL_ERROR every tools/call and resources/read now fails with (fail closed). The first
  // time, the audit failure is logged once at error level with the reference the refusals
  // carry as errorId. nullopt while the log is healthy or absent.
  std::optional<ErrorObject> AuditRefusal() const;

 private:
  // Sweeps request deadlines every 250 ms.
  void TimerLoop();

  const ServerInfo info_;
  const ServerOptions options_;
  base::ThreadPool& pool_;
  const base::Logger& logger_;
  ToolRegistry tools_;
  ResourceRegistry resources_;
  PromptRegistry prompts_;

  std::mutex mu_;
  std::vector<std::weak_ptr<internal::Session>> sessions_;  // GUARDED_BY(mu_)

  mutable std::mutex audit_mu_;
  mutable std::string audit_failure_ref_;  // GUARDED_BY(audit_mu_): set once, when logged

  std::mutex timer_mu_;
  std::condition_variable timer_cv_;
  bool timer_stop_ = false;  // GUARDED_BY(timer_mu_)
  std::thread timer_thread_;
};

// One error in the format of docs/mcp.md §5.6 (the Librarian seed's error object). It goes in
// `_meta["trove/error"]` of a tool error and in `error.data` of a JSON-RPC error.
struct ErrorObject {
  // INVALID_INPUT, AUTHENTICATION_REQUIRED, PERMISSION_DENIED, RESOURCE_NOT_FOUND,
  // RATE_LIMIT_EXCEEDED or INTERNAL_ERROR, with its category, severity and HTTP status.
  std::string code;
  std::string message;   // what the client reads: never a path, SQL or exception text
  std::string category;  // validation, authentication, authorization, resource_not_found, ...
  std::string severity;  // low, medium, high
  int status_code = 500;
  bool retryable = false;           // the same call may succeed later
  std::int64_t retry_delay_ms = 0;  // when retryable: how long to wait first
  std::string error_id;  // server-side errors: names the log line that has the full detail
  Json details;          // safe values ({"consentRequired": "bootstrap"}); null: none

  // Returns the JSON object, with `timestamp` (RFC 3339 UTC, now); `retryDelayMs` only when
  // retryable, `errorId` and `details` only when set.
  Json ToJson() const;
};

// How long a client waits before retrying a transient failure (kUnavailable, e.g. a busy or
// locked database; kDeadlineExceeded).
inline constexpr std::int64_t kRetryDelayMs = 1000;

// Classifies a non-OK Status for a client (§5.6). The codes that speak to the caller about its
// own request (base/status.h: invalid argument, not found, permission denied, ...) keep their
// message. The server-side codes (kInternal, kIo, kUnavailable, and any other) reach the client
// as a short message with a fresh error_id, and the full status is written to `logger` at
// error level as "<where> failed (ref <error_id>): <status>"; kUnavailable is retryable after
// kRetryDelayMs.
ErrorObject ErrorObjectFromStatus(const Status& status, const base::Logger& logger,
                                  std::string_view where);

// Returns the tool error for a handler's non-OK Status: text "<CODE>: <message>" and
// `_meta["trove/error"]`, from ErrorObjectFromStatus (which logs server-side detail).
ToolResult ToolErrorFromStatus(const Status& status, const base::Logger& logger,
                               std::string_view where);

// Returns the fail-fast refusal of an open circuit breaker (CallContext::breaker): a retryable
// RATE_LIMIT_EXCEEDED naming `dependency`, retryDelayMs = the admission's remaining open time.
ToolResult BreakerRefusal(std::string_view dependency, const policy::Admission& admission);

// Returns an RFC 3339 UTC timestamp of now ("2026-11-22T04:12:09.123Z").
std::string NowRfc3339();

}  // namespace trove::mcp

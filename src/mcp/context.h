// CallContext: the per-request state a handler receives explicitly (docs/mcp.md §5.5):
// identification, cancellation, progress, logging to the client, the session view and
// requests to the client (sampling, elicitation). No thread-local or global carries it.
//
// Thread safety: a CallContext belongs to one request; its methods may be called from the
// thread running the handler (and from threads it starts while the handler runs). It must not
// be used after the handler returns.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "mcp/json.h"

namespace trove::mcp {

namespace internal {
class Session;
struct InFlight;
}  // namespace internal

namespace policy {
class CircuitBreaker;
}  // namespace policy

// The authenticated caller of a session. stdio: the local user (all scopes). HTTP: the
// bearer token's principal ("token:" plus 12 hex digits of its SHA-256), or the anonymous
// loopback principal when authentication is off.
struct Principal {
  std::string name = "local";
  std::vector<std::string> scopes = {"admin"};  // "admin" implies every other scope
  // At most 12 hex digits of the SHA-256 of the bearer token (audit log); empty over stdio and
  // without authentication. Never the token.
  std::string token_id;
};

// MCP log levels (RFC 5424), ascending.
enum class LogSeverity {
  kDebug = 0,
  kInfo,
  kNotice,
  kWarning,
  kError,
  kCritical,
  kAlert,
  kEmergency
};

std::string_view LogSeverityName(LogSeverity level);
std::optional<LogSeverity> ParseLogSeverity(std::string_view name);

class CallContext {
 public:
  CallContext(internal::Session& session, internal::InFlight& request);
  CallContext(const CallContext&) = delete;
  CallContext& operator=(const CallContext&) = delete;

  const Json& request_id() const;
  const std::string& method() const;
  // params._meta of the request, or null; foreign keys are passed through untouched.
  const Json& meta() const;

  base::Cancellation& cancellation();
  bool cancelled() const;

  // Sends notifications/progress when the request carried a progress token; a value not
  // greater than the last one, or any report after the response, is dropped.
  void ReportProgress(double progress, std::optional<double> total = {},
                      std::string_view message = {});
  // An engine-facing adapter of ReportProgress (a no-op without a token).
  base::Progress MakeProgress();
  bool has_progress_token() const;

  // Sends notifications/message when `level` is at or above the session's threshold.
  void Log(LogSeverity level, std::string_view logger, const Json& data);

  // Ends the current HTTP connection of this request's SSE stream after a `retry:` field; the
  // client resumes with GET + Last-Event-ID and receives later messages there. No-op on stdio.
  void DisconnectStream(std::chrono::milliseconds retry);

  // The session view.
  const std::string& session_id() const;
  const std::string& protocol_version() const;
  const Json& client_capabilities() const;
  const Json& client_info() const;

  // Who is calling, and with which scopes (read, write, execute, network, admin), as the
  // transport authenticated the session (docs/mcp.md §5.6). The policy layer that checks
  // scopes, consent and rate limits before a handler runs builds on these; authority always
  // comes from here, never from a tool's arguments.
  const Principal& principal() const;
  bool HasScope(std::string_view scope) const;

  // Resolves a path the client sent (a workspace, a source file) against the server's allowed
  // roots (ServerOptions::confiner, --allow-root; docs/decisions/0048-mcp-policy-layer.md).
  // Returns the canonical absolute path, or INVALID_INPUT (empty, NUL, over-long) or
  // PERMISSION_DENIED (traversal, a symlink out of every root, or no roots configured: the
  // HTTP default). Every tool that takes a path calls this before touching the file system.
  Result<std::string> ResolvePath(std::string_view client_path) const;

  // The circuit breaker of an external dependency ("ctags", "agent:openai", ...), shared by
  // every session of the server (docs/mcp.md §5.6). A handler calls Admit() before using the
  // dependency and Report() after it; an open breaker's refusal is returned as
  // BreakerRefusal(). Never null.
  policy::CircuitBreaker& breaker(std::string_view dependency) const;

  // Returns OK when the session has consent for `operation`, for a handler whose risk depends on
  // its arguments (WARDEN run_agent_pass with a network backend); a tool that is always
  // high-risk sets ToolSpec::needs_consent instead. Same rules as needs_consent (docs/mcp.md
  // §5.6): granted by configuration (ServerOptions::consent), by an earlier grant in this
  // session, or now by an elicitation/create confirmation (remembered for the session).
  // Otherwise PERMISSION_DENIED: return it from the handler; the core adds
  // details.consentRequired = `operation` and audits the call as denied. May block while the
  // client is asked.
  Status RequireConsent(std::string_view operation);

  // Sends a request to the client (sampling/createMessage, elicitation/create) on this
  // request's stream and waits for its answer. Refused locally (no wire traffic) when the
  // client did not declare the capability, or in inline mode. Returns the client's result.
  Result<Json> SendClientRequest(std::string_view method, const Json& params,
                                 std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

 private:
  internal::Session& session_;
  internal::InFlight& request_;
};

}  // namespace trove::mcp

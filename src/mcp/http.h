// The Streamable HTTP transport (docs/mcp.md §2.3-2.7): one endpoint serving POST, GET
// and DELETE, sessions keyed by Mcp-Session-Id, SSE streams with resumption, DNS-rebinding
// protection (Host and Origin), optional static bearer tokens compared in constant time.
//
// It binds 127.0.0.1 by default. Answers start as JSON and switch to SSE at the first message a
// handler emits before its result. Sessions expire after 30 min idle; at the cap the least
// recently used idle session is evicted (its next request gets 404), never refusing a client
// while an idle one can go.
// Thread safety: ServeHttp blocks the calling thread until SIGTERM/SIGINT (or Stop).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "mcp/server.h"

namespace trove::mcp {

namespace policy {
class Authenticator;
}  // namespace policy

struct HttpOptions {
  std::string host = "127.0.0.1";  // another address needs explicit allowed hosts/origins
  int port = 0;                    // 0: pick a free port
  std::string path = "/mcp";
  // Allowed Host values (without port); empty: 127.0.0.1, localhost, [::1].
  std::vector<std::string> allowed_hosts;
  // Allowed Origin values; empty: http://127.0.0.1:<port>, http://localhost:<port>,
  // http://[::1]:<port>.
  std::vector<std::string> allowed_origins;
  // Who may call (policy/auth.h): null or mode none: no authentication (loopback only). A
  // failure is answered with the denial's status (400, 401, 403) and WWW-Authenticate header.
  // In oauth mode the Protected Resource Metadata is served at
  // /.well-known/oauth-protected-resource and /.well-known/oauth-protected-resource<path>.
  std::shared_ptr<const policy::Authenticator> authenticator;
  // Static bearer tokens, used when `authenticator` is null: each one a principal
  // "token:<12 hex of its SHA-256>" with every scope. Kept as SHA-256 digests.
  std::vector<std::string> bearer_tokens;
  std::size_t max_sessions = 1024;
  std::chrono::seconds session_idle_expiry{30 * 60};
  std::size_t max_connections = 256;
  std::chrono::seconds read_timeout{30};
  std::size_t replay_events = 256;  // per SSE stream
  // Called once the port is bound, with the actual port.
  std::function<void(int port)> on_listening;
  // Called after on_listening with a function that stops serving (ServeHttp then returns). The
  // function may be called once, from any thread, while ServeHttp runs: for tests and
  // embedders that do not use signals.
  std::function<void(std::function<void()> stop)> on_stoppable;
};

class HttpTransport;

// Serves `server` over Streamable HTTP until SIGTERM/SIGINT (delivered by sigwait when main
// called BlockShutdownSignals) or until the function passed to options.on_stoppable is called.
Status ServeHttp(Server& server, const HttpOptions& options);

// ServeHttp that first announces the bound address on stderr, once listening, as
// "<program>: listening on http://HOST:PORT/mcp" (with --http 0 that line is the only way a
// client learns the port; tests and scripts wait for it). Any options.on_listening runs after.
Status ServeHttpAnnounced(Server& server, HttpOptions options, std::string_view program);

}  // namespace trove::mcp

// The transport loop every server binary's `mcp` command shares (kodo-mcp, `librarian mcp`,
// `warden mcp`): pick stdio or Streamable HTTP, serve until shutdown, report a failure on
// stderr, and turn the outcome into an exit code.
#pragma once

#include <memory>
#include <string>

#include "base/env.h"
#include "base/status.h"
#include "mcp/http.h"
#include "mcp/policy/options.h"
#include "mcp/server.h"

namespace CLI {
class App;
}  // namespace CLI

namespace trove::mcp {

struct ServeOptions {
  std::string transport = "stdio";  // "stdio" or "http"
  HttpOptions http;                 // used when transport is "http"
  std::string program;              // names the binary on stderr ("<program>: listening on ...")
  Principal stdio_principal;        // the caller over stdio (default: "local", every scope)
};

// The policy of a server process (docs/mcp.md §5.6), resolved once from the shared flags:
//   policy::PolicyFlags flags;  AddServeFlags(app, flags);  ...parse...
//   Result<ServePolicy> policy = ResolveServePolicy(flags);
//   policy->Apply(server_options, serve_options);   // before building the Server
// The audit log and rate limiter read the clock of a process-wide PosixEnv.
struct ServePolicy {
  policy::PolicyOptions options;
  std::shared_ptr<const policy::Authenticator> authenticator;  // HTTP
  std::shared_ptr<policy::AuditLog> audit_log;                 // null: --audit-log not given
  std::shared_ptr<policy::RateLimiter> rate_limiter;           // null: --rate-limit not given
  Principal stdio_principal;                                   // TROVE_PRINCIPAL / TROVE_SCOPES
  // --allow-root (or the policy file's allowRoots); null when none was given.
  std::shared_ptr<const policy::PathConfiner> confiner;

  // Sets the audit log, rate limiter, path confiner and pre-approved consents of `server` and
  // the host, authenticator
  // and stdio principal of `serve`. Call it after choosing serve.transport: without
  // --allow-root, stdio confines client paths to the current directory and HTTP refuses every
  // client path (docs/decisions/0048-mcp-policy-layer.md).
  void Apply(ServerOptions& server, ServeOptions& serve) const;
};

// Adds the policy flags (--host, --auth, --token-file, --jwks-file, --issuer, --resource,
// --allow-root, --audit-log, --rate-limit, --burst, --policy) to `app`.
void AddServeFlags(CLI::App& app, policy::PolicyFlags& flags);

// Resolves the flags (policy file, validation), loads the token file or JWKS, opens the audit
// log and builds the rate limiter. Errors name the flag or file.
Result<ServePolicy> ResolveServePolicy(const policy::PolicyFlags& flags,
                                       policy::PolicyOptions defaults = {});

// Serves `server` on the chosen transport until EOF or a shutdown signal. Returns the process
// exit code: 0 after a clean shutdown, 1 when the transport failed, 2 for an unknown transport.
// Failures are written to stderr as "<program>: error: <message>".
int Serve(Server& server, const ServeOptions& options);

}  // namespace trove::mcp

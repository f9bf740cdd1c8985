// `warden mcp`: serves the WARDEN tools over stdio or Streamable HTTP (docs/warden.md §3.1),
// behind the policy flags every Trove server shares (docs/decisions/0048-mcp-policy-layer.md),
// and `warden audit verify|stats`. Kept free of MCP implementation headers so the CLI can call
// it (only the plain flag struct of mcp/policy/options.h comes along).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "mcp/policy/options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace trove::base {
class Env;
}

namespace trove::warden::server {

struct McpRunOptions {
  std::string db_path;              // an existing KB (never created here)
  std::string transport = "stdio";  // "stdio" or "http" (--transport; --http implies http)
  // --http PORT: Streamable HTTP on --host (default 127.0.0.1); 0 picks a free port. With
  // --transport http and neither --http nor --listen, the port is 8765.
  std::optional<int> http_port;
  // --listen HOST:PORT, the older spelling of `--host HOST --http PORT` (kept as an alias;
  // refused together with --host or --http).
  std::optional<std::string> listen;
  mcp::policy::PolicyFlags policy;  // the shared policy flags (AddPolicyFlags)
  std::string log_level = "warning";
};

// Returns the process exit code: 0 after a clean shutdown, 2 for a bad option, 3 when the KB
// cannot be opened, 1 when the transport failed.
int RunWardenMcp(base::Env& env, const McpRunOptions& options);

// Must run first in main, before any thread starts (mcp::BlockShutdownSignals).
void PrepareMcpProcess();

// Adds the policy flags every Trove server shares (--host, --auth, --token-file, --jwks-file,
// --issuer, --resource, --allow-root, --audit-log, --rate-limit, --burst, --policy) to `app`;
// their values land in `options.policy`.
void AddPolicyFlags(CLI::App& app, McpRunOptions& options);

// `warden audit verify|stats FILE [--json]`: checks or summarizes an --audit-log file. `args`
// are the words after `audit` ({"verify", "log.jsonl", "--json"}). Returns the process exit
// code (0 ok, 1 the chain is broken, 2 usage error or unreadable file).
int RunAuditCommand(const std::vector<std::string>& args);

}  // namespace trove::warden::server

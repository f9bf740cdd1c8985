// `kodo-mcp`: serves the Kōdo tools over stdio (newline-delimited JSON-RPC, the default) or
// Streamable HTTP on 127.0.0.1. Kept free of MCP headers so that cli/ can call it.
#pragma once

#include <optional>
#include <string>

#include "mcp/policy/options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace trove::kodo::server {

struct McpRunOptions {
  std::optional<int> http_port;       // serve Streamable HTTP on 127.0.0.1:PORT (0: any free)
  std::string log_level = "warning";  // debug, info, warning or error (stderr)
  int workers = 2;                    // handler threads (0: run inline on the reader)
  mcp::policy::PolicyFlags policy;    // the shared policy flags (mcp::AddServeFlags)
};

// Returns the process exit code: 0 after a clean shutdown, 1 when the transport failed.
int RunKodoMcp(const McpRunOptions& options);

// Must run first in main, before any thread starts (mcp::BlockShutdownSignals).
void PrepareMcpProcess();

// Adds the policy flags every Trove server shares (--host, --auth, --token-file, --audit-log,
// --rate-limit, ...) to `app`; their values land in `options.policy`.
void AddPolicyFlags(CLI::App& app, McpRunOptions& options);

// `<program> audit verify|stats FILE [--json]`: checks or summarizes an --audit-log file.
// `first` is the index in argv of the word after `audit`. Returns the process exit code.
int RunAuditCommand(int argc, const char* const* argv, int first);

}  // namespace trove::kodo::server

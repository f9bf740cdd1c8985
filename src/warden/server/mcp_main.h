// `warden mcp`: serves the WARDEN tools over stdio or Streamable HTTP (docs/warden.md §3.1).
// Kept free of MCP headers so the CLI can call it.
#pragma once

#include <string>

namespace trove::base {
class Env;
}

namespace trove::warden::server {

struct McpRunOptions {
  std::string db_path;                    // an existing KB (never created here)
  std::string transport = "stdio";        // "stdio" or "http"
  std::string listen = "127.0.0.1:8765";  // HOST:PORT for http; port 0 picks a free one
  std::string log_level = "warning";
};

// Returns the process exit code: 0 after a clean shutdown, 2 for a bad option, 3 when the KB
// cannot be opened, 1 when the transport failed.
int RunWardenMcp(base::Env& env, const McpRunOptions& options);

// Must run first in main, before any thread starts (mcp::BlockShutdownSignals).
void PrepareMcpProcess();

}  // namespace trove::warden::server

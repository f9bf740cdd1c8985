// `kodo-mcp`: serves the Kōdo tools over stdio (newline-delimited JSON-RPC, the default) or
// Streamable HTTP on 127.0.0.1. Kept free of MCP headers so that cli/ can call it.
#pragma once

#include <optional>
#include <string>

#include "mcp/policy/options.h"

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

}  // namespace trove::kodo::server

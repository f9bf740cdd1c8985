// `librarian mcp`: serves the Librarian tools and resources over stdio or Streamable HTTP
// (docs/librarian.md §3.1). Kept free of MCP headers so the CLI can call it.
#pragma once

#include <string>
#include <vector>

#include "mcp/policy/options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace trove::librarian::server {

struct McpRunOptions {
  std::string transport = "stdio";  // "stdio" or "http"
  mcp::policy::PolicyFlags policy;  // the shared policy flags (mcp::AddServeFlags; --host)
  int port = 0;                     // http; 0 picks a free one (printed on stderr)
  // Workspaces to register at start-up when they already hold an index (docs/librarian.md §6.6).
  std::vector<std::string> workspaces;
  std::string ctags_program = "ctags";
  std::string log_level = "warning";
};

// Returns the process exit code: 0 after a clean shutdown, 2 for a bad option, 1 when the
// transport failed.
int RunLibrarianMcp(const McpRunOptions& options);

// Must run first in main, before any thread starts (mcp::BlockShutdownSignals).
void PrepareMcpProcess();

// Adds the policy flags every Trove server shares (--host, --auth, --token-file, --audit-log,
// --rate-limit, ...) to `app`; their values land in `options.policy`.
void AddPolicyFlags(CLI::App& app, McpRunOptions& options);

// `<program> audit verify|stats FILE [--json]`: checks or summarizes an --audit-log file.
// `first` is the index in argv of the word after `audit`. Returns the process exit code.
int RunAuditCommand(int argc, const char* const* argv, int first);

}  // namespace trove::librarian::server

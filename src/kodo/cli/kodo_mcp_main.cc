// kodo-mcp: the Kōdo MCP server (docs/kodo.md §3). Newline-delimited JSON-RPC on stdio by default;
// `--http PORT` serves Streamable HTTP on 127.0.0.1 instead (PORT 0 picks a free one and
// prints it on stderr).
#include <CLI/CLI.hpp>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include "base/terminal.h"
#include "kodo/cli/commands.h"
#include "kodo/server/mcp_main.h"

int main(int argc, char** argv) {
  // `kodo-mcp audit verify|stats FILE`: checks or summarizes an --audit-log file.
  if (argc >= 2 && std::strcmp(argv[1], "audit") == 0) {
    return trove::kodo::server::RunAuditCommand(argc, argv, 2);
  }
  trove::kodo::server::PrepareMcpProcess();
  CLI::App app{"kodo-mcp: the Kōdo compiler's tools over MCP (stdio, or --http PORT)", "kodo-mcp"};
  app.set_version_flag("--version", trove::kodo::cli::VersionText("kodo-mcp"));
  // CLI11's own usage errors start with the program's name too (base/terminal.h).
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return trove::base::ErrorLine("kodo-mcp", e.what()) + "Run with --help for more information.\n";
  });
  trove::kodo::server::McpRunOptions options;
  std::optional<int> http_port;
  app.add_option("--http", http_port, "Serve Streamable HTTP on 127.0.0.1:PORT")
      ->check(CLI::Range(0, 65535));
  app.add_option("--log-level", options.log_level, "debug, info, warning or error")
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}));
  app.add_option("--workers", options.workers, "Handler threads (default 2)")
      ->check(CLI::Range(0, 64));
  trove::kodo::server::AddPolicyFlags(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : trove::kodo::cli::kExitUsage;
  }
  options.http_port = http_port;
  return trove::kodo::server::RunKodoMcp(options);
}

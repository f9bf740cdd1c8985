#include "librarian/server/mcp_main.h"

#include <fmt/core.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "base/logging.h"
#include "base/thread_pool.h"
#include "librarian/crawl/path.h"
#include "librarian/server/librarian_tools.h"
#include "mcp/policy/audit_cli.h"
#include "mcp/serve.h"
#include "mcp/server.h"
#include "mcp/signals.h"

#ifndef TROVE_VERSION
#define TROVE_VERSION "0.1.0"
#endif

namespace trove::librarian::server {

void PrepareMcpProcess() { mcp::BlockShutdownSignals(); }

int RunLibrarianMcp(const McpRunOptions& options) {
  base::Logger logger(base::ParseLogLevel(options.log_level, base::LogLevel::kWarning));

  Workspaces workspaces;
  for (const std::string& w : options.workspaces) {
    Result<std::string> root = crawl::CanonicalWorkspaceRoot(w);
    if (!root.ok()) {
      std::fputs(fmt::format("librarian: error: --workspace {}\n", root.status().message()).c_str(),
                 stderr);
      return 2;
    }
    workspaces.Register(*root);
  }
  base::ThreadPool workers(4);
  mcp::ServerInfo info{
      .name = "librarian",
      .version = TROVE_VERSION,
      .title = "Librarian",
      .instructions =
          "Repository knowledge index. Run bootstrap once per workspace (an absolute "
          "path) before query; then query with a natural-language intent. "
          "Confidence values are uncalibrated ranking signals."};
  int exit_code = 0;
  {
    // Librarian's defaults (docs/librarian.md §8.5): 100 requests/min per principal, burst 20.
    Result<mcp::ServePolicy> policy = mcp::ResolveServePolicy(
        options.policy, {.rate_limit = mcp::policy::Rate{.tokens_per_minute = 100}, .burst = 20});
    if (!policy.ok()) {
      std::fputs(fmt::format("librarian: error: {}\n", policy.status().message()).c_str(), stderr);
      return 2;
    }
    mcp::ServerOptions server_options;
    mcp::ServeOptions serve{.transport = options.transport, .program = "librarian"};
    policy->Apply(server_options, serve);  // host, authenticator, audit log, rate limit
    mcp::Server server(info, server_options, workers, logger);
    ServiceOptions service;
    service.ctags_program = options.ctags_program;
    Status s = RegisterLibrarianTools(server, workspaces, service);
    if (!s.ok()) {
      std::fputs(fmt::format("librarian: error: {}\n", s.message()).c_str(), stderr);
      workers.Wait();
      return 1;
    }
    serve.http.port = options.port;
    exit_code = mcp::Serve(server, serve);
    workers.Wait();  // the Server must outlive every task still on the pool
  }
  return exit_code;
}

void AddPolicyFlags(CLI::App& app, McpRunOptions& options) {
  mcp::AddServeFlags(app, options.policy);
}

int RunAuditCommand(int argc, const char* const* argv, int first) {
  return mcp::policy::RunAuditCommand(argc, argv, first, std::cout, std::cerr);
}

}  // namespace trove::librarian::server

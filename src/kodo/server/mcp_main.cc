#include "kodo/server/mcp_main.h"

#include <fmt/core.h>

#include <cstdio>
#include <iostream>

#include "base/logging.h"
#include "base/thread_pool.h"
#include "kodo/server/kodo_tools.h"
#include "mcp/policy/audit_cli.h"
#include "mcp/serve.h"
#include "mcp/server.h"
#include "mcp/signals.h"

namespace trove::kodo::server {

void PrepareMcpProcess() { mcp::BlockShutdownSignals(); }

int RunKodoMcp(const McpRunOptions& options) {
  base::Logger logger(base::ParseLogLevel(options.log_level, base::LogLevel::kWarning));
  base::ThreadPool workers(static_cast<std::size_t>(options.workers));
  int exit_code = 0;
  {
    // Upstream Kodo's clients read replies line by line and pair them with requests by
    // position, so replies leave in request order (docs/kodo.md §3); checks still run in
    // parallel.
    Result<mcp::ServePolicy> policy = mcp::ResolveServePolicy(options.policy);
    if (!policy.ok()) {
      std::fputs(fmt::format("kodo-mcp: error: {}\n", policy.status().message()).c_str(), stderr);
      return 2;
    }
    mcp::ServerOptions server_options{.ordered_replies = true};
    mcp::ServeOptions serve{.program = "kodo-mcp"};
    policy->Apply(server_options, serve);
    mcp::Server server(KodoServerInfo(), server_options, workers, logger);
    Status s = RegisterKodoTools(server);
    if (s.ok()) {
      if (options.http_port) {
        serve.transport = "http";
        serve.http.port = *options.http_port;
      }
      exit_code = mcp::Serve(server, serve);
    } else {
      std::fputs(fmt::format("kodo-mcp: error: {}\n", s.message()).c_str(), stderr);
      exit_code = 1;
    }
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

}  // namespace trove::kodo::server

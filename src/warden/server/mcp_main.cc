#include "warden/server/mcp_main.h"

#include <fmt/core.h>

#include <cstdio>
#include <string>

#include "base/logging.h"
#include "base/thread_pool.h"
#include "mcp/serve.h"
#include "mcp/server.h"
#include "mcp/signals.h"
#include "warden/pass/kb_agent_store.h"
#include "warden/server/warden_tools.h"

#ifndef TROVE_VERSION
#define TROVE_VERSION "0.1.0"
#endif

namespace trove::warden::server {

void PrepareMcpProcess() { mcp::BlockShutdownSignals(); }

int RunWardenMcp(base::Env& env, const McpRunOptions& options) {
  base::Logger logger(base::ParseLogLevel(options.log_level, base::LogLevel::kWarning));

  // The KB must exist and be a WARDEN database: check once before serving, so a wrong path is
  // a clear error and a non-zero exit rather than a failing tool call.
  Result<std::unique_ptr<kb::Kb>> probe = kb::Kb::Open(env, options.db_path);
  if (!probe.ok()) {
    std::fputs(
        fmt::format("warden: error: {}: {}\n", options.db_path, probe.status().message()).c_str(),
        stderr);
    return 3;
  }
  probe->reset();

  // Provider keys come from the server's environment and config files (docs/warden.md §2.1).
  Result<agents::AgentConfig> agent_config =
      pass::LoadAgentConfig(env, pass::ProjectDirOfDb(options.db_path));
  if (!agent_config.ok()) {
    std::fputs(fmt::format("warden: error: {}\n", agent_config.status().message()).c_str(), stderr);
    return 2;
  }

  KbPool pool(env, options.db_path, 8);
  base::ThreadPool workers(4);
  mcp::ServerInfo info{
      .name = "warden",
      .version = TROVE_VERSION,
      .title = "WARDEN",
      .instructions =
          "WebAssembly reverse-engineering knowledge base. Call list_versions "
          "first; then coverage, list_functions, get_function_facts and get_symbol "
          "to read; propose_symbol to suggest a name (it never overwrites a "
          "human-verified name); agent_backends and run_agent_pass to run the "
          "built-in agent pass."};
  int exit_code = 0;
  {
    mcp::Server server(info, mcp::ServerOptions{}, workers, logger);
    Status s = RegisterWardenTools(server, pool, *agent_config);
    if (!s.ok()) {
      std::fputs(fmt::format("warden: error: {}\n", s.message()).c_str(), stderr);
      workers.Wait();
      return 1;
    }
    mcp::ServeOptions serve{.transport = options.transport, .program = "warden"};
    if (options.transport == "http") {
      const std::size_t colon = options.listen.rfind(':');
      int port = -1;
      if (colon != std::string::npos) {
        try {
          port = std::stoi(options.listen.substr(colon + 1));
        } catch (...) {
          port = -1;
        }
      }
      if (port < 0) {
        std::fputs("warden: error: --listen must be HOST:PORT\n", stderr);
        workers.Wait();
        return 2;
      }
      serve.http.host = options.listen.substr(0, colon);
      serve.http.port = port;
    }
    exit_code = mcp::Serve(server, serve);
    workers.Wait();  // the Server must outlive every task still on the pool
  }
  return exit_code;
}

}  // namespace trove::warden::server

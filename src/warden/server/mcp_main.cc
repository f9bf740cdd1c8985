#include "warden/server/mcp_main.h"

#include <fmt/core.h>

#include <cstdio>
#include <string>

#include "base/logging.h"
#include "base/thread_pool.h"
#include "mcp/http.h"
#include "mcp/server.h"
#include "mcp/signals.h"
#include "mcp/stdio.h"
#include "warden/pass/kb_agent_store.h"
#include "warden/server/warden_tools.h"

#ifndef TROVE_VERSION
#define TROVE_VERSION "0.1.0"
#endif

namespace trove::warden::server {

void PrepareMcpProcess() { mcp::BlockShutdownSignals(); }

int RunWardenMcp(base::Env& env, const McpRunOptions& options) {
  base::LogLevel level = base::LogLevel::kWarning;
  if (options.log_level == "debug") level = base::LogLevel::kDebug;
  if (options.log_level == "info") level = base::LogLevel::kInfo;
  if (options.log_level == "error") level = base::LogLevel::kError;
  base::Logger logger(level);

  // The KB must exist and be a WARDEN database: check once before serving, so a wrong path is
  // a clear error and a non-zero exit rather than a failing tool call.
  Result<std::unique_ptr<kb::Kb>> probe = kb::Kb::Open(env, options.db_path);
  if (!probe.ok()) {
    std::fputs(fmt::format("error: {}: {}\n", options.db_path, probe.status().message()).c_str(),
               stderr);
    return 3;
  }
  probe->reset();

  // Provider keys come from the server's environment and config files (§2.1).
  Result<agents::AgentConfig> agent_config =
      pass::LoadAgentConfig(env, pass::ProjectDirOfDb(options.db_path));
  if (!agent_config.ok()) {
    std::fputs(fmt::format("error: {}\n", agent_config.status().message()).c_str(), stderr);
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
      std::fputs(fmt::format("error: {}\n", s.message()).c_str(), stderr);
      workers.Wait();
      return 1;
    }
    if (options.transport == "stdio") {
      s = mcp::ServeStdio(server);
    } else if (options.transport == "http") {
      mcp::HttpOptions http;
      const std::size_t colon = options.listen.rfind(':');
      if (colon == std::string::npos) {
        std::fputs("error: --listen must be HOST:PORT\n", stderr);
        workers.Wait();
        return 2;
      }
      http.host = options.listen.substr(0, colon);
      try {
        http.port = std::stoi(options.listen.substr(colon + 1));
      } catch (...) {
        std::fputs("error: --listen must be HOST:PORT\n", stderr);
        workers.Wait();
        return 2;
      }
      s = mcp::ServeHttpAnnounced(server, http, "warden");
    } else {
      std::fputs(
          fmt::format("error: unknown transport '{}' (stdio or http)\n", options.transport).c_str(),
          stderr);
      workers.Wait();
      return 2;
    }
    if (!s.ok()) {
      std::fputs(fmt::format("error: {}\n", s.message()).c_str(), stderr);
      exit_code = 1;
    }
    workers.Wait();  // the Server must outlive every task still on the pool
  }
  return exit_code;
}

}  // namespace trove::warden::server

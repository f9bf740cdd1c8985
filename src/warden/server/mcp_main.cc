#include "warden/server/mcp_main.h"

#include <fmt/core.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "base/logging.h"
#include "base/pg.h"
#include "base/thread_pool.h"
#include "mcp/policy/audit_cli.h"
#include "mcp/serve.h"
#include "mcp/server.h"
#include "mcp/signals.h"
#include "warden/kb/kb.h"
#include "warden/oracle/oracle.h"
#include "warden/pass/kb_agent_store.h"
#include "warden/server/symbol_notifier.h"
#include "warden/server/warden_tools.h"

#ifndef TROVE_VERSION
#define TROVE_VERSION "0.1.0"
#endif

namespace trove::warden::server {

void PrepareMcpProcess() { mcp::BlockShutdownSignals(); }

namespace {

// Parses --listen HOST:PORT into `host` and `port`; false when it is not that shape.
bool ParseListen(const std::string& listen, std::string& host, int& port) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) return false;
  const std::string digits = listen.substr(colon + 1);
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  port = std::stoi(digits);
  if (port > 65535) return false;
  host = listen.substr(0, colon);
  return true;
}

int UsageError(const std::string& message) {
  std::fputs(fmt::format("warden: error: {}\n", message).c_str(), stderr);
  return 2;
}

}  // namespace

int RunWardenMcp(base::Env& env, const McpRunOptions& options) {
  base::Logger logger(base::ParseLogLevel(options.log_level, base::LogLevel::kWarning));

  // The transport: --http PORT (on --host), or the older --listen HOST:PORT, or --transport.
  mcp::policy::PolicyFlags flags = options.policy;
  std::string transport = options.transport;
  int port = 8765;
  if (options.listen) {
    if (options.http_port || options.policy.host) {
      return UsageError("--listen HOST:PORT cannot be combined with --host or --http");
    }
    std::string host;
    if (!ParseListen(*options.listen, host, port)) {
      return UsageError("--listen must be HOST:PORT");
    }
    flags.host = host;  // validated with the other policy flags (auth none: loopback only)
    transport = "http";
  } else if (options.http_port) {
    port = *options.http_port;
    transport = "http";
  }
  if (transport != "stdio" && transport != "http") {
    return UsageError(fmt::format("--transport must be stdio or http, not '{}'", transport));
  }
  Result<mcp::ServePolicy> policy = mcp::ResolveServePolicy(flags);
  if (!policy.ok()) return UsageError(policy.status().message());

  // The KB must exist and be a WARDEN database: check once before serving, so a wrong path is
  // a clear error and a non-zero exit rather than a failing tool call.
  Result<std::unique_ptr<kb::Kb>> probe = kb::Kb::Open(env, options.db_path);
  if (!probe.ok()) {
    std::fputs(fmt::format("warden: error: {}: {}\n", base::pg::RedactUrl(options.db_path),
                           probe.status().message())
                   .c_str(),
               stderr);
    return 3;
  }
  probe->reset();

  // The project: the KB file's, or for a KB at a URL (which has no directory) the working
  // directory's nearest `.warden/` (docs/warden.md §2.1, decision 0091).
  std::error_code cwd_ec;
  const std::string cwd = std::filesystem::current_path(cwd_ec).string();
  const bool at_url = base::pg::IsPostgresUrl(options.db_path);
  const std::string url_project = at_url ? kb::FindProjectDir(env, cwd) : std::string();

  // Provider keys come from the server's environment and config files (docs/warden.md §2.1).
  Result<agents::AgentConfig> agent_config =
      pass::LoadAgentConfig(env, at_url ? url_project : pass::ProjectDirOfDb(options.db_path));
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
    mcp::ServerOptions server_options;
    mcp::ServeOptions serve{.transport = transport, .program = "warden"};
    policy->Apply(server_options, serve);  // host, authenticator, audit log, rate limit, roots
    serve.http.port = port;
    mcp::Server server(info, server_options, workers, logger);
    WardenToolOptions tool_options;
    tool_options.oracle_store = oracle::ResolveStorePath(
        env, std::nullopt, at_url ? url_project : oracle::ProjectDirOfKb(options.db_path), cwd);
    // A KB on PostgreSQL: live symbol resources fed by a LISTEN connection (symbol_notifier.h).
    // A SQLite KB has none (docs/decisions/0092-warden-pg-live-symbols.md).
    std::unique_ptr<SymbolFeed> feed;
    if (base::pg::IsPostgresUrl(options.db_path)) feed = std::make_unique<SymbolFeed>();
    tool_options.symbol_feed = feed.get();
    Status s = RegisterWardenTools(server, pool, *agent_config, tool_options);
    std::unique_ptr<SymbolNotifier> notifier;
    if (s.ok() && feed) {
      Result<std::unique_ptr<SymbolNotifier>> started =
          SymbolNotifier::Start(server, *feed, options.db_path, logger);
      if (started.ok()) {
        notifier = std::move(started).value();
      } else {
        s = started.status();
      }
    }
    if (!s.ok()) {
      std::fputs(fmt::format("warden: error: {}\n", s.message()).c_str(), stderr);
      workers.Wait();
      return 1;
    }
    exit_code = mcp::Serve(server, serve);
    notifier.reset();  // no notification after serving ended
    workers.Wait();    // the Server must outlive every task still on the pool
  }
  return exit_code;
}

void AddPolicyFlags(CLI::App& app, McpRunOptions& options) {
  mcp::AddServeFlags(app, options.policy);
}

int RunAuditCommand(const std::vector<std::string>& args) {
  return mcp::policy::RunAuditCommand(args, std::cout, std::cerr);
}

}  // namespace trove::warden::server

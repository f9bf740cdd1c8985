#include "kodo/server/mcp_main.h"

#include <fmt/core.h>

#include <cstdio>

#include "base/logging.h"
#include "base/thread_pool.h"
#include "kodo/server/kodo_tools.h"
#include "mcp/http.h"
#include "mcp/server.h"
#include "mcp/signals.h"
#include "mcp/stdio.h"

namespace trove::kodo::server {

void PrepareMcpProcess() { mcp::BlockShutdownSignals(); }

int RunKodoMcp(const McpRunOptions& options) {
  base::LogLevel level = base::LogLevel::kWarning;
  if (options.log_level == "debug") level = base::LogLevel::kDebug;
  if (options.log_level == "info") level = base::LogLevel::kInfo;
  if (options.log_level == "error") level = base::LogLevel::kError;
  base::Logger logger(level);
  base::ThreadPool workers(static_cast<std::size_t>(options.workers));
  int exit_code = 0;
  {
    mcp::Server server(KodoServerInfo(), mcp::ServerOptions{}, workers, logger);
    Status s = RegisterKodoTools(server);
    if (s.ok()) {
      if (options.http_port) {
        mcp::HttpOptions http;
        http.port = *options.http_port;
        s = mcp::ServeHttpAnnounced(server, http, "kodo-mcp");
      } else {
        s = mcp::ServeStdio(server);
      }
    }
    if (!s.ok()) {
      std::fputs(fmt::format("kodo-mcp: error: {}\n", s.message()).c_str(), stderr);
      exit_code = 1;
    }
    workers.Wait();  // the Server must outlive every task still on the pool
  }
  return exit_code;
}

}  // namespace trove::kodo::server

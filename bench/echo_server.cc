// mcp_echo_server: the Trove MCP core over stdio with one `echo` tool (input and output schema
// {text: string}), the subject of bench/mcp_stdio_bench.mjs (docs/mcp.md §7.4).
#include <cstdio>

#include "base/logging.h"
#include "base/thread_pool.h"
#include "mcp/describe.h"
#include "mcp/server.h"
#include "mcp/stdio.h"

namespace {

struct Echo {
  std::string text;
};
inline auto DescribeFields(trove::mcp::Tag<Echo>) {
  return trove::mcp::Fields(trove::mcp::Field("text", &Echo::text, "Text to echo back"));
}

}  // namespace

int main() {
  using namespace trove;
  mcp::BlockShutdownSignals();
  base::Logger logger(base::LogLevel::kWarning);
  base::ThreadPool pool(2);
  mcp::Server server({.name = "trove-echo", .version = "0.1.0"}, mcp::ServerOptions{}, pool,
                     logger);
  Status s = server.tools().Add<Echo, Echo>(
      {.name = "echo",
       .description = "Echoes its text argument",
       .annotations = {.read_only = true, .idempotent = true, .open_world = false},
       .run_inline = true},
      [](const Echo& in, mcp::CallContext&) -> Result<Echo> { return in; });
  if (!s.ok()) {
    std::fprintf(stderr, "mcp_echo_server: %s\n", s.message().c_str());
    return 2;
  }
  s = mcp::ServeStdio(server);
  pool.Wait();  // the Server must outlive every task still on the pool
  return s.ok() ? 0 : 1;
}

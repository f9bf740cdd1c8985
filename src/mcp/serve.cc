#include "mcp/serve.h"

#include <fmt/core.h>

#include <cstdio>

#include "mcp/stdio.h"

namespace trove::mcp {

int Serve(Server& server, const ServeOptions& options) {
  Status s;
  if (options.transport == "stdio") {
    s = ServeStdio(server);
  } else if (options.transport == "http") {
    s = ServeHttpAnnounced(server, options.http, options.program);
  } else {
    std::fputs(fmt::format("{}: error: unknown transport '{}' (stdio or http)\n", options.program,
                           options.transport)
                   .c_str(),
               stderr);
    return 2;
  }
  if (s.ok()) return 0;
  std::fputs(fmt::format("{}: error: {}\n", options.program, s.message()).c_str(), stderr);
  return 1;
}

}  // namespace trove::mcp

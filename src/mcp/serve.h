// The transport loop every server binary's `mcp` command shares (kodo-mcp, `librarian mcp`,
// `warden mcp`): pick stdio or Streamable HTTP, serve until shutdown, report a failure on
// stderr, and turn the outcome into an exit code.
#pragma once

#include <string>

#include "mcp/http.h"
#include "mcp/server.h"

namespace trove::mcp {

struct ServeOptions {
  std::string transport = "stdio";  // "stdio" or "http"
  HttpOptions http;                 // used when transport is "http"
  std::string program;              // names the binary on stderr ("<program>: listening on ...")
};

// Serves `server` on the chosen transport until EOF or a shutdown signal. Returns the process
// exit code: 0 after a clean shutdown, 1 when the transport failed, 2 for an unknown transport.
// Failures are written to stderr as "<program>: error: <message>".
int Serve(Server& server, const ServeOptions& options);

}  // namespace trove::mcp

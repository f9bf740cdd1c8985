// The stdio transport: newline-delimited JSON-RPC on stdin/stdout (docs/mcp.md §2.2).
//
// At start the transport takes a private duplicate of descriptor 1 for protocol output and
// points descriptor 1 at stderr, so stray writes by third-party code cannot corrupt the
// stream. One reader thread (the caller's) frames input; replies are written whole under one
// lock. Replies the reader thread makes itself (inline tools, errors) for the requests of one
// read(2) leave together in one write; replies from worker threads are written at once, or,
// with ServerOptions::ordered_replies, as soon as every earlier request is answered. On EOF,
// SIGTERM or SIGINT it cancels in-flight work, allows it up to 1 s, and returns. Thread safety:
// ServeStdio runs on the calling thread until shutdown.
#pragma once

#include "base/status.h"
#include "mcp/server.h"
#include "mcp/signals.h"

namespace trove::mcp {

struct StdioOptions {
  int in_fd = 0;
  int out_fd = 1;
  bool redirect_stdout_to_stderr = true;  // only when out_fd is 1
  Principal principal;                    // the caller (default: "local" with every scope)
};

// Serves one session on the descriptors until EOF or a shutdown signal.
Status ServeStdio(Server& server, const StdioOptions& options = {});

// Returns a Channel writing newline-terminated messages to `fd` (shared by tests).
std::shared_ptr<Channel> MakeFdChannel(int fd);

}  // namespace trove::mcp

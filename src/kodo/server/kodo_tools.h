// The kodo-mcp binding (docs/kodo.md §3): the seven tools of upstream kodo-mcp 1.14.1, in
// upstream's order, with upstream's names, descriptions and input schemas, registered on an
// MCP server. The work is done by the engine (kodo/driver/tools.h); this file only converts.
//
// Result envelope (issue 5, decision 1): structuredContent is upstream's object with its exact
// keys and values, and content[0].text is the same object serialized. A program with errors is
// a successful call (isError false, "status": "failed"); isError is true only for a call that
// could not run: arguments that fail the schema (a missing `source`), a crossed bound, or a
// phase that does not exist yet (kodo.build, kodo.confidence_report), whose text says so.
//
// Thread safety: every tool may run concurrently; the handlers share no state.
#pragma once

#include "base/status.h"
#include "mcp/server.h"

namespace trove::kodo::server {

// Registers the seven tools on `server`.
Status RegisterKodoTools(mcp::Server& server);

// The server's name and version as initialize reports them.
mcp::ServerInfo KodoServerInfo();

}  // namespace trove::kodo::server

// The Oracle's MCP tool (docs/warden.md §3.2, §8): identify_runtime matches a version against
// the Oracle store; it is a dry run unless the caller asks to write, and writing needs the
// `write` scope. Registered by RegisterWardenTools with one call.
// Thread safety: the tool may run concurrently; each call leases its own KB connection and
// opens the store for itself.
#pragma once

#include <string>

#include "base/status.h"
#include "mcp/server.h"
#include "warden/server/warden_tools.h"

namespace trove::warden::server {

// `store_path` is the Oracle store (oracle::ResolveStorePath); `pool` must outlive `server`.
Status RegisterOracleTools(mcp::Server& server, KbPool& pool, std::string store_path);

}  // namespace trove::warden::server

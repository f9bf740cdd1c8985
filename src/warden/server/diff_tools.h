// The MCP binding of the diff engine (docs/warden.md §3.2, §9): the tools diff_versions (scope
// read) and carry_annotations (scope write), the resource warden://diffs listing the stored
// diffs, and the template warden://diffs/{from_version_id}/{to_version_id}/changelog serving
// the changelog of each stored diff. Registered by RegisterWardenTools with one call.
//
// carry_annotations writes only through Kb::DiffCarry: provenance diff-carry and actor
// diff:<from>-><to> come from the path, never from the arguments.
// Thread safety: every tool and resource may run concurrently; each leases its own connection.
#pragma once

#include "base/status.h"
#include "mcp/server.h"
#include "warden/server/warden_tools.h"

namespace trove::warden::server {

// The changelog resource of the diff from -> to.
std::string ChangelogUri(std::int64_t from_version_id, std::int64_t to_version_id);

// Registers the diff tools and resources on `server`. `pool` must outlive it.
Status RegisterDiffTools(mcp::Server& server, KbPool& pool);

}  // namespace trove::warden::server

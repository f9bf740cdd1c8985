// The MCP binding of run_audit and get_context_pack_bundle (docs/librarian.md §3.7, §3.8;
// decision 0063), each in the seed's exact shape. The engines are audit/ and bundle/; this file
// resolves the workspace (inside the server's allowed roots), declares scopes and converts
// results.
//
// Thread safety: the tools may run concurrently; each call uses its own store connection.
#pragma once

#include <string>

#include "base/status.h"
#include "librarian/server/librarian_tools.h"
#include "mcp/server.h"

namespace trove::librarian::audit {
struct AuditReport;
}
namespace trove::librarian::bundle {
struct Bundle;
}

namespace trove::librarian::server {

// The compact JSON the tools return, for `librarian run-audit|bundle --json`.
std::string AuditReportJson(const audit::AuditReport& report);
std::string BundleJson(const bundle::Bundle& bundle);

// Registers run_audit and get_context_pack_bundle on `server`. `workspaces` must outlive it.
Status RegisterAuditTools(mcp::Server& server, Workspaces& workspaces,
                          const ServiceOptions& options);

}  // namespace trove::librarian::server

// The MCP binding of verify_claim, diff_runs and export_index (docs/librarian.md §3.6,
// §3.6), each in the seed's shape: inputs as the seed declares them, outputs with the seed's
// fields plus the spec's decisions (errorCode, disclosures, typed claimConfidence, ...). The
// engines are verify/, diff/ and export/; this file only resolves workspaces and paths (through
// mcp::CallContext::ResolvePath, the server's allowed roots), declares scopes and consent and
// converts results.
//
// Thread safety: the tools may run concurrently; each call leases its own store connection and
// verifier.
#pragma once

#include <string>

#include "base/status.h"
#include "librarian/server/librarian_tools.h"
#include "mcp/server.h"

namespace trove::librarian::verify {
struct Verification;
}
namespace trove::librarian::diff {
struct RunDiff;
}
namespace trove::librarian::exports {
struct ExportResult;
}

namespace trove::librarian::server {

// The compact JSON the three tools return, for `librarian verify-claim|diff-runs|export --json`.
// `v` not found gives the tool's "Claim not found" result.
std::string VerificationJson(const verify::Verification& v);
std::string RunDiffJson(const diff::RunDiff& d);
std::string ExportResultJson(const exports::ExportResult& r);

// Registers verify_claim, diff_runs and export_index on `server`. `workspaces` must outlive it.
Status RegisterClaimsTools(mcp::Server& server, Workspaces& workspaces,
                           const ServiceOptions& options);

}  // namespace trove::librarian::server

// The `audit` subcommand every server's main can offer (docs/decisions/0048-mcp-policy-layer.md):
//   <server> audit verify FILE [--json]   checks the hash chain (audit.h VerifyAuditLog)
//   <server> audit stats FILE [--json]    prints the statistics (audit.h AuditStats)
// Exit codes: 0 ok, 1 the chain is broken (verify), 2 usage error or unreadable file.
//
// Thread safety: a free function; it only reads FILE and writes to the given streams.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace trove::mcp::policy {

inline constexpr int kAuditExitOk = 0;
inline constexpr int kAuditExitBroken = 1;
inline constexpr int kAuditExitUsage = 2;

// Runs the command in `args`, the words after "audit" ({"verify", "log.jsonl", "--json"}).
// Results go to `out`, messages and usage to `err`.
int RunAuditCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// The same with argv-style input: `argv[first]` is the word after "audit".
int RunAuditCommand(int argc, const char* const* argv, int first, std::ostream& out,
                    std::ostream& err);

}  // namespace trove::mcp::policy

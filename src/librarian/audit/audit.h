// Audit: `run_audit`'s engine (docs/librarian.md §3.7; decision 0063). Checks a
// workspace's index for completeness, freshness, confidence and coverage, and returns the seed's
// exact shape:
//
//   {audit_type, timestamp, findings: [{category, severity, message, recommendation?}],
//    summary: {total_findings, critical, warnings, info}}
//
// Severities are critical, warning and info. Findings of one kind are aggregated with a count
// and at most 10 example paths; at most 100 findings are kept, most severe first. `category` is
// the audit type the finding belongs to (completeness, freshness, confidence, coverage), so a
// `full` audit's findings say where they come from. Each audit can be stored (the `audits`
// table, with a `tool_call` ledger entry) for provenance and the markdown export.
//
// Freshness walks the workspace with the last run's include/exclude (stat, then hash what
// changed) within a time budget (default 5 s); past it, the stored files are only stat'ed and
// the finding says the result was sampled.
//
// Thread safety: one thread uses a Store at a time; the functions keep no state.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"

namespace trove::librarian::store {
class Store;
}

namespace trove::librarian::audit {

inline constexpr std::string_view kAuditTypes[] = {"completeness", "freshness", "confidence",
                                                   "coverage", "full"};
inline constexpr std::size_t kMaxFindings = 100;
inline constexpr std::size_t kMaxExamples = 10;

struct Finding {
  std::string category;  // completeness, freshness, confidence, coverage
  std::string severity;  // critical, warning, info
  std::string message;
  std::optional<std::string> recommendation;
};

struct Summary {
  std::uint64_t total_findings = 0;
  std::uint64_t critical = 0;
  std::uint64_t warnings = 0;
  std::uint64_t info = 0;
};

struct AuditReport {
  std::string audit_type;
  std::string timestamp;  // RFC 3339 UTC, milliseconds
  std::vector<Finding> findings;
  Summary summary;
};

struct AuditOptions {
  // Wall time for walking and hashing the workspace in the freshness audit. Default 5 s.
  std::chrono::milliseconds freshness_budget{5000};
  // A last successful bootstrap older than this is a warning. Default 7 days.
  std::chrono::hours stale_after{24 * 7};
  // "Now" for the age check and the timestamp; unset: the system clock.
  std::optional<std::chrono::system_clock::time_point> now;
};

// Runs the audit `type` (one of kAuditTypes) over the index `store` of the workspace at the
// canonical `root`. kInvalidArgument ("type: ...") for another type; a workspace never
// bootstrapped (null `store`) is not an error: the report holds critical findings.
Result<AuditReport> RunAudit(store::Store* store, std::string_view root, std::string_view type,
                             const AuditOptions& options, base::Cancellation* cancel);

// Stores `report` in the `audits` table and appends a `tool_call` ledger entry naming it, in
// one transaction. Returns the audit's row id.
Result<std::int64_t> StoreAudit(store::Store& store, const AuditReport& report,
                                std::string_view agent);
// The newest stored audit, if any.
Result<std::optional<AuditReport>> LatestAudit(store::Store& store);
// Stored audits newest first: (id, audit_type, timestamp, summary), at most `limit`.
struct StoredAudit {
  std::int64_t id = 0;
  std::string audit_type;
  std::string timestamp;
  Summary summary;
};
Result<std::vector<StoredAudit>> ListAudits(store::Store& store, std::size_t limit);

// The report as the seed's JSON (snake_case keys, `recommendation` only when set).
std::string ReportJson(const AuditReport& report);
// Parses ReportJson's output; kMalformed otherwise.
Result<AuditReport> ParseReportJson(std::string_view json);

}  // namespace trove::librarian::audit

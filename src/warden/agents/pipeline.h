// One agent pass (docs/warden.md §7): gather facts -> order bottom-up -> skip -> propose ->
// verify -> write back through the economy gate. `warden agent` and MCP `run_agent_pass` both
// call RunAgentPass.
//
// Per function, in ScheduleOrder (schedule.h):
//   1. cancellation is checked (kCancelled ends the pass; what was written stays written);
//   2. a locked symbol, or with only_unconfident one named at confidence >= 0.5, is skipped
//      (skipped_existing) before any backend call;
//   3. once `limit` backend calls were made, the pass stops;
//   4. the backend proposes, seeing the current names of the direct defined callees;
//      kPermissionDenied, kUnsupported and kCancelled end the pass with that error; any other
//      backend error, and a malformed answer, become an `error` detail and the pass goes on;
//   5. the verifier checks the proposal (verifier_reject);
//   6. the store's gate decides (written / economy_reject); a dry run asks the gate for its
//      decision without writing (PreviewAgentProposal), so the counts mean "would be".
// Invariant: proposed = written + rejected_by_verifier + rejected_by_economy.
// Thread safety: one pass per store and backend at a time; the pass holds no transaction
// during backend calls (the store's gate opens its own).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "warden/agents/backend.h"
#include "warden/agents/store.h"

namespace trove::warden::agents {

inline constexpr double kSkipConfidence = 0.5;  // SKIP_CONFIDENCE (§6.1)

struct PassOptions {
  std::int64_t version_id = 0;
  bool only_unconfident = true;       // false with `--all`
  std::optional<std::int64_t> limit;  // cap on backend calls (`--limit`); nullopt: none
  bool dry_run = false;               // write nothing
  std::string channel = "cli";        // "cli" or "mcp", recorded in evidence details
  std::string pass_id;                // recorded in evidence details; empty: a random one
};

enum class DetailOutcome { kWritten, kVerifierReject, kEconomyReject, kError };
// Returns "written", "verifier_reject", "economy_reject" or "error".
std::string_view OutcomeName(DetailOutcome outcome);

// One `details` entry (§7.5 Decision).
struct RunDetail {
  std::uint32_t func_index = 0;
  std::string stable_id;
  DetailOutcome outcome = DetailOutcome::kError;
  std::optional<std::string> name;   // the proposed name, when there was a proposal
  std::optional<double> confidence;  // its confidence
  std::string reason;
};

// The run summary (§7.5), exactly its fields.
struct RunSummary {
  std::string backend;  // the backend that actually ran
  std::int64_t considered = 0;
  std::int64_t proposed = 0;
  std::int64_t written = 0;
  std::int64_t rejected_by_verifier = 0;
  std::int64_t rejected_by_economy = 0;
  std::int64_t skipped_existing = 0;
  std::vector<RunDetail> details;
};

// Returns the summary as compact JSON, fields in §7.5 order (a non-finite confidence, which
// only a rejected proposal can carry, is null).
std::string RunSummaryToJson(const RunSummary& summary);

// Runs one pass of `backend` over `options.version_id` in `store`. Reports progress as
// (functions visited, functions in the version).
Result<RunSummary> RunAgentPass(AgentStore& store, Backend& backend, const PassOptions& options,
                                base::Cancellation& cancel,
                                const base::Progress& progress = base::Progress());

}  // namespace trove::warden::agents

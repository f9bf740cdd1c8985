// Ledger: the append-only evidence ledger of a workspace (docs/librarian.md §5.2;
// decision 0063), stored in the `ledger` table of the workspace's store (schema 5).
//
// Every entry has a kind (extraction, retrieval, synthesis, claim, verification, contradiction,
// feedback, outcome, tool_call, episode, calibration), the time it was recorded, the claim it
// concerns (a pack id; "" for none), the run, the agent and activity that produced it, an
// evidence-graph relation to its parent entry (supports, opposes, ..., or "") and a JSON
// payload. Entries are never updated: the table's triggers refuse UPDATE always and DELETE
// outside Prune, the explicit retention step (default: keep all). One Append is one INSERT, so
// kill -9 leaves an entry fully written or absent.
//
// Reads: filtered queries (kind, time range, claim, after an id), replay from an entry id (the
// entries in order and the claim states they lead to), a claim's evidence chain (its entries and
// the parent entries they derive from), counts by kind, and W3C PROV export (PROV-JSON).
//
// Thread safety: functions over one base::Database, used by one thread at a time (the Store's
// rule); entries and PROV documents are plain values.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::base {
class Database;
}

namespace trove::librarian::ledger {

enum class EntryKind : std::uint8_t {
  kExtraction,
  kRetrieval,
  kSynthesis,
  kClaim,
  kVerification,
  kContradiction,
  kFeedback,
  kOutcome,
  kToolCall,
  kEpisode,
  kCalibration,
};
inline constexpr EntryKind kAllKinds[] = {
    EntryKind::kExtraction, EntryKind::kRetrieval,    EntryKind::kSynthesis,
    EntryKind::kClaim,      EntryKind::kVerification, EntryKind::kContradiction,
    EntryKind::kFeedback,   EntryKind::kOutcome,      EntryKind::kToolCall,
    EntryKind::kEpisode,    EntryKind::kCalibration};
std::string_view KindName(EntryKind kind);  // "extraction", ..., "tool_call", ...
std::optional<EntryKind> ParseKind(std::string_view name);

// The evidence-graph edges of §5.2; "" means none.
bool IsRelation(std::string_view relation);

// Longest payload kept (its JSON); a larger one is refused with kResourceExhausted.
inline constexpr std::size_t kMaxPayloadBytes = 256 * 1024;
// Most entries one read returns.
inline constexpr std::size_t kMaxReadEntries = 10'000;
// Most parent links followed from one entry in an evidence chain.
inline constexpr std::size_t kMaxChainDepth = 64;

struct Entry {
  std::int64_t id = 0;  // assigned by Append, increasing
  EntryKind kind = EntryKind::kToolCall;
  std::string recorded_at;  // RFC 3339 UTC, milliseconds; Append fills it when empty
  std::string claim_id;     // a pack id, or ""
  std::string run_id;       // the run the entry concerns, or ""
  std::string agent;        // e.g. "librarian", "mcp:<client>", "cli"
  std::string activity;     // e.g. "verify_claim", "run_audit"
  std::string relation;     // supports, opposes, ..., or ""
  std::optional<std::int64_t> parent_id;
  nlohmann::json payload = nlohmann::json::object();
};

// Appends `entry` (its id is ignored) and returns the new id. kInvalidArgument for an unknown
// relation or a parent id that is not an earlier entry; kResourceExhausted for a payload over
// kMaxPayloadBytes.
Result<std::int64_t> Append(base::Database& db, const Entry& entry);

struct Filter {
  std::optional<EntryKind> kind;
  std::string since;  // RFC 3339; entries recorded at or after it ("" = no bound)
  std::string until;  // RFC 3339; entries recorded at or before it
  std::string claim_id;
  std::int64_t after_id = 0;  // entries with a larger id (keyset paging)
  std::size_t limit = 1000;   // capped at kMaxReadEntries
};
// Matching entries in id order.
Result<std::vector<Entry>> Query(base::Database& db, const Filter& filter);

// What replaying a claim's verifications and contradictions leads to.
struct ClaimState {
  std::string claim_id;
  std::int64_t last_entry_id = 0;
  std::string last_kind;           // of the last entry that concerned the claim
  std::optional<bool> verified;    // from the last verification, if any
  std::int64_t verifications = 0;  // verification entries replayed
  std::int64_t contradictions = 0;
  std::int64_t outcomes_success = 0, outcomes_failure = 0;  // outcome entries
};
struct Replay {
  std::vector<Entry> entries;                // from `from_id` on, in order (at most `limit`)
  std::map<std::string, ClaimState> claims;  // by claim id
  std::optional<std::int64_t> next_id;       // where to continue when more remain
};
// Replays the ledger from entry `from_id` (inclusive) on.
Result<Replay> ReplayFrom(base::Database& db, std::int64_t from_id, std::size_t limit = 1000);

// The claim's entries and, transitively (at most kMaxChainDepth links from each), the entries
// they derive from (parent_id), in id order, without repeats.
Result<std::vector<Entry>> EvidenceChain(base::Database& db, std::string_view claim_id,
                                         std::size_t limit = 1000);

// Entry counts by kind name (kinds without entries are absent).
Result<std::map<std::string, std::int64_t>> CountByKind(base::Database& db);

// Deletes all but the newest `keep` entries (the explicit retention setting); returns how many
// were deleted. Children of a deleted entry keep their parent_id (a dangling link is reported
// as such by EvidenceChain's caller, never followed).
Result<std::int64_t> Prune(base::Database& db, std::int64_t keep);

// A W3C PROV document (PROV-JSON, https://www.w3.org/submission/prov-json/) for `entries`: each
// entry an activity (`lib:entry/<id>`, prov:startTime, prov:type = kind) associated with its
// agent; each claim an entity (`lib:claim/<id>`) generated by its claim/verification entries;
// cited evidence (payload.evidence {file, contentHash}) an entity used by the entry; parent
// links as wasInformedBy plus, with a relation, `lib:relation`. `workspace_id` names the bundle.
nlohmann::json ToProvJson(std::span<const Entry> entries, std::string_view workspace_id);

}  // namespace trove::librarian::ledger

// The provenance / confidence economy (docs/warden.md §6): the one decision every symbol write
// passes, whatever path it came by.
//
// Decide() is the pure rule of §6.2: a function of the existing symbol E and the write alone
// (no clock, no actor of the write, no other symbol). Kb's write entry points (kb.h) build the
// write from their path — so that provenance and actor can never come from a caller's
// arguments — and run Decide inside the transaction that records the attempt; that code and
// every SQL statement modifying `symbols` live in economy.cc and nowhere else.
// Thread safety: every function here may be called from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace trove::warden::kb {

// Provenance labels and their authority rank (§6.1 Decision: human 5 > export 4 > oracle 3 >
// diff-carry 2 > agent 1). The enumerator's value is its rank.
enum class Provenance : int {
  kAgent = 1,
  kDiffCarry = 2,
  kOracle = 3,
  kExport = 4,
  kHuman = 5,
};

// Returns the wire label of `p`: "agent", "diff-carry", "oracle", "export", "human".
std::string_view ProvenanceName(Provenance p);
// Returns the provenance labelled `label`, or nullopt for an unknown label.
std::optional<Provenance> ParseProvenance(std::string_view label);
// Returns the rank of `label` (1..5), 0 for an unknown label.
int ProvenanceRank(std::string_view label);

// The longest name the gate accepts, in bytes (§6.2 rule 1).
inline constexpr std::size_t kMaxNameBytes = 512;
// Agent passes skip symbols at or above this confidence (§6.1). The gate does not apply it.
inline constexpr double kSkipConfidence = 0.5;

// The existing symbol E, as stored. A row with a null name is "unnamed".
struct ExistingSymbol {
  std::optional<std::string> name;
  std::optional<std::string> summary;
  std::string provenance;  // a label; an unknown one ranks 0
  std::string actor;
  double confidence = 0.0;
  bool locked = false;
};

// A write as the gate sees it (§6.2). Built by Kb's entry points, never from caller input.
// A human write without a name is the `--clear` action.
struct SymbolWrite {
  std::optional<std::string> name;
  std::optional<std::string> summary;  // none or empty: keep the existing summary
  std::string provenance;              // a label; an unknown one is an invalid write
  std::string actor;
  double confidence = 0.0;
  std::string details_json = "{}";  // a JSON object, recorded in evidence
};

// The gate's verdict. `reason` begins with "accepted:" or "rejected:" and names the rule, e.g.
// "rejected: existing oracle annotation has confidence 0.950 >= 0.600".
struct Decision {
  bool accepted = false;
  std::string reason;
  // The §6.2 rule (1..7) that decided; 0 for a rejection before the rules (unknown stable_id).
  int rule = 0;
  // True for an accepted human write without a name: the slot is emptied and unlocked.
  bool clears = false;
};

// Returns the decision of §6.2 for `write` against `existing` (nullopt: no symbol row), first
// matching rule wins:
//   1. invalid write -> reject: unknown provenance; confidence not finite or outside [0, 1];
//      missing (or empty) name on a non-human write; empty name; name over 512 bytes or not
//      UTF-8; summary not UTF-8; name or summary containing U+0000 (PostgreSQL text cannot
//      hold it)
//   2. E absent or unnamed -> accept
//   3. human write -> accept (locked; without a name: clear, unlocked)
//   4. E locked -> reject
//   5. same name as E with a lower rank -> reject (corroboration; provenance never downgraded)
//   6. rank(write) > rank(E) -> accept
//   7. accept iff write.confidence > E.confidence, strictly
Decision Decide(const std::optional<ExistingSymbol>& existing, const SymbolWrite& write);

// Returns whether `text` is well-formed UTF-8 (no overlongs, surrogates or code points above
// U+10FFFF).
bool IsValidUtf8(std::string_view text);

class KbWriteTxn;       // store.h
enum class SeedSource;  // records.h

namespace internal {

// The gate (§6.2, §6.4): inside `txn`, looks the stable_id up (unknown: rejected, nothing
// recorded), reads E locked against other writers, decides, writes `symbols` on accept with
// this file's statements, and appends the evidence row. Used by every write path and by
// StoreVersion's seeds; the caller commits.
Result<Decision> RunGate(KbWriteTxn& txn, std::string_view stable_id, const SymbolWrite& write,
                         std::string_view now);
// The statement that writes a copied symbol row as it was stored (Kb::CopyInto): ?1..?10 are
// the columns of SpecOf(KbTable::kSymbols), stable_id to updated_at.
extern const std::string_view kRestoreSymbolSql;
// The write of an ingest seed (provenance export, confidence 1.0, actor ingest:<source>).
SymbolWrite SeedWrite(SeedSource source, std::string name, std::string details_json);

}  // namespace internal

}  // namespace trove::warden::kb

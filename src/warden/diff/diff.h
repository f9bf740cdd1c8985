// The WARDEN diff engine (docs/warden.md §9): pairs the defined functions of two versions,
// classifies every function, renders the changelog, and carries annotations across through the
// economy gate.
//
// ComputeDiff is a pure function of two VersionSides (records and annotations as the KB holds
// them): five passes run in order over one shared unmatched set, each function consumed at
// most once (§9.1):
//   1 exact        exact hash + type signature                      score 1.00  unchanged/moved
//   2 stable_id    equal stable_id                                  score 0.99  unchanged/moved
//   3 normalised   structural hash + signature + call-outs + count, >= 5 instructions
//                                                                   similarity  modified
//   4 call_graph   opcode stream + signature + call-outs + the pair of each direct callee, at
//                  least one callee paired; repeated until no new pair (<= 8 rounds)
//                                                                   similarity  modified
//   5 fuzzy        LSH candidates (8 bands of 4 MinHash values, equal signature), best score
//                  first, mutual best, ties refused, docs/warden.md §5.4 diff thresholds
//                                                                   similarity  modified
//     then, after the call-graph neighbourhood pass, toolchain-robust candidates for the
//     functions still unpaired (equal signature and call-out set, or a shared paired callee;
//     histogram cosine, mutual best with a margin; docs/decisions/0088)   fuzzy  modified
// A key pairs only when it is unique among the unmatched functions of both sides. Unpaired
// functions are new (only in `to`) or deleted (only in `from`). Why each choice:
// docs/decisions/0056-warden-diff.md.
//
// LoadSide / RunDiff / CarryAnnotations bind the engine to a KB: RunDiff stores the report and
// changelog in `diffs`; CarryAnnotations writes names only through Kb::DiffCarry (provenance
// diff-carry, the gate decides).
//
// Thread safety: the pure functions may run on any thread; the KB functions use `kb` from the
// calling thread only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "warden/identity/similarity.h"
#include "warden/kb/records.h"

namespace trove::warden::kb {
class Kb;
}

namespace trove::warden::diff {

enum class ChangeClass : std::uint8_t { kUnchanged, kMoved, kModified, kNew, kDeleted };
inline constexpr std::size_t kChangeClassCount = 5;
// "unchanged", "moved", "modified", "new", "deleted".
std::string_view ChangeClassName(ChangeClass c);

enum class Origin : std::uint8_t { kApplication, kRuntime };
inline constexpr std::size_t kOriginCount = 2;
// "application", "runtime".
std::string_view OriginName(Origin o);

enum class Pass : std::uint8_t {
  kNone = 0,
  kExact = 1,
  kStableId = 2,
  kNormalised = 3,
  kCallGraph = 4,
  kFuzzy = 5
};
inline constexpr std::size_t kPassCount = 6;  // kNone included
// "none", "exact", "stable_id", "normalised", "call_graph", "fuzzy".
std::string_view PassName(Pass p);

// The current annotation of one function (a list_functions row's symbol part).
struct Annotation {
  std::optional<std::string> name;
  std::optional<std::string> provenance;
  std::optional<double> confidence;
  bool locked = false;
};

// One version as the engine needs it.
struct VersionSide {
  std::int64_t id = 0;
  std::string label;
  std::optional<std::string> emscripten_version;
  // Defined functions in index order (imports are ignored if present).
  std::vector<kb::FunctionRecord> functions;
  // Parallel to `functions`; missing entries count as unnamed.
  std::vector<Annotation> annotations;
};

struct VersionRef {
  std::int64_t id = 0;
  std::string label;
  std::optional<std::string> emscripten_version;
};

// One function's fate. Pairs have both indices, new functions only to_*, deleted only from_*.
struct Change {
  ChangeClass change = ChangeClass::kUnchanged;
  Origin origin = Origin::kApplication;
  Pass pass = Pass::kNone;
  double score = 0;                                // 0 for new and deleted
  std::optional<identity::Similarity> components;  // pairs only
  std::optional<std::uint32_t> from_index;
  std::optional<std::uint32_t> to_index;
  std::optional<std::string> from_stable_id;
  std::optional<std::string> to_stable_id;
  // The name shown: the old side's annotation, else the new side's.
  std::optional<std::string> name;
  std::optional<std::string> provenance;
  std::optional<double> confidence;
  bool locked = false;
  std::optional<std::uint32_t> from_instructions;
  std::optional<std::uint32_t> to_instructions;
  std::optional<std::string> from_type;
  std::optional<std::string> to_type;
  // Relative to `from` (a new function adds all of its own, a deleted one removes them).
  std::vector<std::string> call_outs_added;
  std::vector<std::string> call_outs_removed;
  std::vector<std::string> strings_added;
  std::vector<std::string> strings_removed;
};

struct DiffReport {
  VersionRef from;
  VersionRef to;
  // Both Emscripten versions are known and differ.
  bool toolchain_changed = false;
  // counts[class][origin].
  std::array<std::array<std::int64_t, kOriginCount>, kChangeClassCount> counts{};
  // Pairs per pass (index: Pass value; [0] stays 0).
  std::array<std::int64_t, kPassCount> pass_pairs{};
  // Pairs and new functions in `to` index order, then deleted ones in `from` index order.
  std::vector<Change> changes;
};

struct DiffOptions {
  // Rounds of the call-graph pass (§9.1: at most 8).
  int max_propagation_rounds = 8;
  // An LSH bucket holding more `from` functions than this is not used for candidates: such
  // buckets gather generic code whose members no fuzzy score tells apart. Default 64.
  std::size_t max_bucket = 64;
  // The toolchain-robust candidates for functions still unpaired after LSH and the
  // neighbourhood pass (docs/decisions/0088-warden-diff-robust-candidates.md).
  bool robust_candidates = true;
};

// Pairs and classifies the functions of `from` and `to` (see the file comment).
DiffReport ComputeDiff(const VersionSide& from, const VersionSide& to,
                       const DiffOptions& options = {});

// The report as JSON text (`warden diff --json`, MCP diff_versions). Unchanged and
// moved changes are left out unless `include_unchanged`.
std::string ReportJson(const DiffReport& report, bool include_unchanged);
// The stored report_json: ReportJson without unchanged and moved changes, plus
// "unchanged_or_moved": [[from_index, to_index, pass], ...] for them (pass 1 exact, 2
// stable_id), so that every function is in it at a fraction of the size.
std::string StoredReportJson(const DiffReport& report);

// The Markdown changelog (docs/warden.md §9.1): title "<from> → <to>", a counts table by class
// and origin, the toolchain line, then Modified, New and Deleted sections, application changes
// before runtime ones, entries by name (unnamed ones last, by index). Byte-deterministic.
std::string RenderChangelog(const DiffReport& report);

// --- The KB binding ---

// Loads the defined functions and annotations of a version. kNotFound for an unknown version.
Result<VersionSide> LoadSide(kb::Kb& kb, std::int64_t version_id);

struct DiffRun {
  DiffReport report;
  std::string changelog;
  std::int64_t diff_id = 0;  // the `diffs` row
};
// Loads both versions, computes the diff and stores it in `diffs` (replacing an older one of
// the pair). kInvalidArgument when from == to.
Result<DiffRun> RunDiff(kb::Kb& kb, std::int64_t from_version, std::int64_t to_version,
                        const DiffOptions& options = {});

struct CarryDetail {
  std::uint32_t from_index = 0;
  std::uint32_t to_index = 0;
  std::string from_stable_id;
  std::string to_stable_id;
  std::string name;
  double confidence = 0;
  Pass pass = Pass::kNone;
  bool written = false;
  std::string reason;  // the gate's
};

struct CarrySummary {
  std::int64_t pairs = 0;            // pairs in the report
  std::int64_t shared_identity = 0;  // same stable_id: the annotation is already shared
  std::int64_t unnamed_source = 0;   // the old function has no name: nothing to carry
  std::int64_t attempted = 0;        // writes sent to the gate
  std::int64_t carried = 0;          // accepted by the gate
  std::int64_t rejected = 0;         // refused by the gate
  std::vector<CarryDetail> details;  // one per attempt, in `to` index order
};

// Carries the old names of `report`'s pairs whose stable_ids differ (§9.2): the old name and
// summary go to the new stable_id through Kb::DiffCarry (provenance diff-carry, actor
// diff:<from>-><to>) with confidence min(score, old confidence). A lock is not carried (only a
// human write locks). Evidence details record the pass, the score components and the old
// stable_id. Reads the old symbols now, so run it right after RunDiff.
Result<CarrySummary> CarryAnnotations(kb::Kb& kb, const DiffReport& report);

}  // namespace trove::warden::diff

// Diff: what changed in a workspace's index between two bootstrap runs (docs/librarian.md §3.6;
// the seed's `diff_runs`), read from the runs' file manifests and the content manifests of the
// files they name (store/manifest.h). Changes are reported from run1 to run2.
//
//   * files: added, removed, modified (another SHA-256), with counts including unchanged;
//   * symbols: target ids added, removed, changed (another span hash); the module rows are
//     packs, not symbols;
//   * packs: function_context and module_context packs added, removed, changed (their target's
//     span hash, the whole file for a module, differs);
//   * stats {before, after, delta}: functions, modules (indexed files), contextPacks, and
//     avgConfidence, the mean base signal of the packs (docs/librarian.md §4.1 ladder by the
//     file's extractor family, which the language tells; per-symbol parse errors are not in the
//     manifest, so clean spans are assumed): an uncalibrated ranking signal.
//
// Lists hold at most kMaxListed entries each, sorted; counts are exact. A run given as
// "latest", a run id, or an RFC 3339 UTC timestamp (the latest run finished at or before it).
// An unknown run, or one without a manifest (pruned, or recorded before schema 4), is a domain
// outcome: `error` and `error_code` RESOURCE_NOT_FOUND, not a Status.
//
// Thread safety: uses `store` from the calling thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::librarian::store {
class Store;
struct RunRecord;
}  // namespace trove::librarian::store

namespace trove::librarian::diff {

inline constexpr std::size_t kMaxListed = 100;

struct RunInfo {
  std::string run_id;
  std::string status;  // running, succeeded, failed, cancelled
  std::string mode;    // full, incremental, noop
  std::string started_at;
  std::string finished_at;
};

struct FileChanges {
  std::vector<std::string> added, removed, modified;  // paths, at most kMaxListed each
  std::uint64_t added_count = 0, removed_count = 0, modified_count = 0, unchanged_count = 0;
};

struct SymbolChanges {
  std::vector<std::string> added, removed, changed;  // target ids, at most kMaxListed each
  std::uint64_t added_count = 0, removed_count = 0, changed_count = 0, unchanged_count = 0;
};

struct PackChanges {
  std::uint64_t added = 0, removed = 0, changed = 0, unchanged = 0;
};

struct StatDelta {
  double before = 0, after = 0, delta = 0;
};

struct RunStats {
  StatDelta functions, modules, context_packs, avg_confidence;
};

struct RunDiff {
  std::string workspace;
  RunInfo run1, run2;
  FileChanges files;
  SymbolChanges symbols;
  PackChanges packs;
  RunStats stats;
  std::string summary;
  std::optional<std::string> error;       // a domain failure (unknown run)
  std::optional<std::string> error_code;  // "RESOURCE_NOT_FOUND" with `error`
};

// Returns the run `spec` names: "latest" (the newest run), a run id, or an RFC 3339 UTC
// timestamp; nullopt when none matches. kInvalidArgument (naming `field`) for an empty spec.
Result<std::optional<store::RunRecord>> ResolveRun(store::Store& store, std::string_view spec,
                                                   std::string_view field);

// Compares run1 to run2 in `store` (the index of `workspace`, echoed in the result).
Result<RunDiff> DiffRuns(store::Store& store, std::string_view workspace, std::string_view run1,
                         std::string_view run2);

}  // namespace trove::librarian::diff

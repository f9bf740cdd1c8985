// Manifests (docs/librarian.md §6.4, §3.6; decision 0054): what each bootstrap run left in
// the store, kept so that two runs can be compared (diff_runs) and a claim's evidence can be
// found again by its pack id after re-indexing (verify_claim).
//
//   * run_files: one file manifest per run, the files table as the run's final batch left it
//     (path, SHA-256, size, language, status). Kept for the last kManifestRuns runs. A watch
//     re-index of a few paths (WriteBatch::manifest_paths) records a *delta* instead of copying
//     every row (decision 0070): its rows are the files under the changed paths, plus rows
//     with status kDeletedStatus (tombstones) for paths its base lists that are gone, plus the
//     delta rows of the run before it when that run was a delta of the same base; the `meta`
//     key kManifestBasePrefix + run id names the base, a full manifest. A run's manifest is
//     then its base's rows minus the paths the delta lists, plus the delta's non-tombstone
//     rows; the readers below resolve it, so a delta is never visible to callers. A delta
//     larger than a quarter of its base (plus kDeltaSlack rows) is written full instead, and
//     a base stays while a kept run names it. No schema change: the link lives in `meta`.
//   * content_symbols: the symbol manifest of each file content, keyed by (path, SHA-256): its
//     target ids, kinds, names, signatures, spans and span hashes, the function_context pack id
//     of its first kMaxFunctionPacksPerFile callables, plus one `module` row (target
//     `mod:<path>`, span = the whole file, span hash = the file's hash, the module_context pack
//     id). Symbols depend only on a file's path and content, so a run's symbol manifest is the
//     union of the content manifests of its file manifest, and a content unchanged across runs
//     is stored once. Kept while a kept run manifest or the current files table names it.
//
// Both are written by Store::Apply (WriteBatch::record_manifest, with a run's final record) and
// by the schema 3 -> 4 migration (content manifests only); the functions below read them.
//
// Thread safety: as Store (one thread at a time per Store).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::base {
class Database;
}

namespace trove::librarian::store {

class Store;

// Runs whose file manifests are kept (docs/librarian.md §3.6 decision: the last 20).
inline constexpr std::size_t kManifestRuns = 20;
// run_files.status of a delta's tombstone row: the path was in the base and is gone.
inline constexpr std::string_view kDeletedStatus = "deleted";
// meta key prefix naming a delta manifest's base run.
inline constexpr std::string_view kManifestBasePrefix = "manifest_base:";
// A delta may hold this many rows beyond a quarter of its base before a full one is written.
inline constexpr std::size_t kDeltaSlack = 1000;
// function_context packs per file (docs/librarian.md §6.2; index/bootstrap.cc counts the same).
inline constexpr std::size_t kMaxFunctionPacksPerFile = 100;

// "pk_" + the first 16 hex digits of SHA-256(pack_type + "\n" + target_id): the pack id of
// docs/librarian.md §1.1, the same as query::PackId (a test in verify/ checks that they agree).
std::string PackIdFor(std::string_view pack_type, std::string_view target_id);

struct ManifestFile {
  std::string path;
  std::string sha256;
  std::uint64_t size = 0;
  std::string language;
  std::string status;  // FileStatusName
};

struct ContentSymbol {
  std::string path;
  std::string sha256;     // of the file content this row describes
  std::string target_id;  // fn:..., type:..., ns:..., or mod:<path> for the module row
  std::string kind;       // SymbolKindName, or "module"
  std::string name;
  std::string qualified_name;
  std::string signature;
  std::string pack_id;  // "" when the target has no pack (types, callables past the cap)
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::uint32_t start_byte = 0;
  std::uint32_t end_byte = 0;
  std::string span_sha256;
  std::string extractor;     // of the file content (FileRecord::extractor)
  bool parse_error = false;  // the span (the file, for the module row) has parse errors
  bool end_known = true;     // false: the extractor gave no end line (ctags)
  bool current = false;      // FindPack: (path, sha256) is what the files table holds now
};

// Returns whether `run_id` has a file manifest (false: unknown, pruned, or recorded before
// schema 4).
Result<bool> HasManifest(Store& store, std::string_view run_id);
// Returns the file manifest of `run_id`, sorted by path (empty when it has none).
Result<std::vector<ManifestFile>> RunManifest(Store& store, std::string_view run_id);
// One row of a run's symbol manifest: the content manifests of its file manifest.
struct RunSymbol {
  std::string target_id;
  std::string kind;  // SymbolKindName, or "module"
  std::string span_sha256;
  std::string pack_id;   // "" when no pack
  std::string language;  // of the file
};
// Returns the symbol manifest of `run_id` (module rows included), in no particular order.
Result<std::vector<RunSymbol>> RunSymbols(Store& store, std::string_view run_id);
// Returns the content manifest of `path` at `sha256` in source order, the module row last
// (empty when it was never recorded).
Result<std::vector<ContentSymbol>> ContentSymbols(Store& store, std::string_view path,
                                                  std::string_view sha256);
// Returns the newest recorded target of `pack_id`, preferring the content the index holds now
// (`current`); nullopt when no manifest names it.
Result<std::optional<ContentSymbol>> FindPack(Store& store, std::string_view pack_id);

namespace internal {
// Records the content manifest of every indexed file whose (path, sha256) has none yet.
// REQUIRES: inside a write transaction.
Status RecordContent(base::Database& db);
// Records `run_id`'s file manifest (replacing one recorded before), then RecordContent, then
// prunes manifests beyond the last kManifestRuns runs (keeping the bases of kept deltas).
// With `paths` (workspace-relative files or directories: the only ones the run looked at),
// records a delta when the run before `run_id` has a manifest (a run killed before its final
// batch has none, and may have changed files anywhere) and the delta stays small, and limits
// the content manifests and the pruning to what those paths and the pruned runs name, so the
// cost follows the batch, not the workspace. REQUIRES: inside a write transaction.
Status RecordRunManifest(base::Database& db, std::string_view run_id,
                         const std::vector<std::string>* paths = nullptr);
// Returns the base run of `run_id`'s delta manifest, "" when its manifest is full or absent.
Result<std::string> ManifestBase(base::Database& db, std::string_view run_id);
}  // namespace internal

}  // namespace trove::librarian::store

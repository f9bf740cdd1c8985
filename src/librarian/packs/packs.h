// Stored context packs (spec §1.3; decision 0069): the pack types that describe more than one
// symbol — `pattern_context` (a group of functions sharing a shape) and `decision_context` (an
// architecture decision record, adr.h) — are built once per whole-workspace bootstrap and kept in
// the store's `packs` table with their invalidation triggers (each trigger a workspace file and
// the SHA-256 of its content when the pack was built) and outcome counters (`accessCount`,
// `successCount`, `failureCount`, `lastOutcome`, as the spec names them) in `pack_outcomes`,
// which hold for any pack id. `function_context` and `module_context` packs (decision 0077) are
// stored too, one per function or method and per indexed file, with their own file as trigger:
// by the whole-workspace rebuild and, for the changed paths, after a watch re-index
// (StoreFilePacksFor); the query still assembles the packs it returns from the index. A pack is
// valid while every trigger's stored file still has that hash; `InvalidateStale` deletes the
// others after every bootstrap and watch re-index, and `LoadValid` serves only valid ones.
//
// The same step writes the file graph (`file_edges`: name-resolved calls with weight 1/n, C/C++
// includes resolved through includes.h with compile_commands.json, other imports resolved by
// path) and the PageRank (rank/pagerank.h, damping 0.85) of files (`mod:<path>`) and of functions
// over the name-resolved call graph into `ranks`.
//
// Episodes (spec §3.2.5): a served query is appended to the evidence ledger as an `episode`
// entry (intent, type, depth, pack ids, their files) by `RecordEpisode`, which also counts each
// pack as accessed; `RecentEpisodes` reads them back for `similar_tasks` packs. No episode is
// ever made up: with none recorded, a query reports that it has none.
//
// Thread safety: functions use the given store/database from the calling thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"

namespace trove::base {
class Database;
}
namespace trove::librarian::store {
class Store;
}

namespace trove::librarian::packs {

// Bumped when the stored packs' content changes shape; stored per pack (`version`).
inline constexpr int kPackVersion = 1;
// Most members of a pattern group listed in its key facts.
inline constexpr std::size_t kMaxPatternFacts = 8;
// Most pattern groups stored (the largest first).
inline constexpr std::size_t kMaxPatterns = 2000;
// A callee name with more definitions than this links no file or function edge (as query's
// expansion and the knowledge-maps resource).
inline constexpr std::size_t kMaxDefinitionsPerName = 5;

struct Trigger {
  std::string path;
  std::string sha256;
  bool operator==(const Trigger&) const = default;
};

struct Outcome {
  std::int64_t access_count = 0;
  std::int64_t success_count = 0;
  std::int64_t failure_count = 0;
  std::string last_outcome;  // "", "served", "verified", "defeated"
  std::string updated_at;
};

struct StoredPack {
  std::string pack_id;
  // "pattern_context", "decision_context", "function_context", "module_context"
  std::string pack_type;
  std::string target_id;  // pat:<hash>, adr:<path>, fn:<path>::<name>, mod:<path>
  std::string summary;
  std::vector<std::string> key_facts;
  std::vector<std::string> related_files;  // first = primary file
  double signal = 0;                       // base ranking signal (spec §1.3), not a probability
  std::string words;  // lower-cased index words of the pack's text, space-separated
  std::vector<Trigger> triggers;
  int version = kPackVersion;
  std::string created_at;
  std::string run_id;
  Outcome outcome;
};

struct DerivedStats {
  std::size_t file_edges = 0;
  std::size_t include_edges = 0;  // of file_edges, resolved #include edges
  std::size_t ranked = 0;         // rows in `ranks`
  std::size_t patterns = 0;
  std::size_t decisions = 0;
  std::size_t file_packs = 0;  // function_context and module_context packs
  std::string include_source;  // "compile_commands.json", "build/compile_commands.json" or ""
  std::string include_note;    // why a compile database was ignored, or ""
};

// Pattern groups (spec §2.5): functions and methods with equal (kind, parameter count, leading
// name sub-word), at least 3 members in at least 2 files.
struct FunctionInfo {
  std::string target_id;
  std::string name;
  std::string kind;
  std::string signature;
  std::string path;
  std::uint32_t start_line = 0;
};
struct PatternGroup {
  std::string target_id;  // pat:<16 hex digits of SHA-256 of the key>
  std::string kind;
  int parameters = 0;
  std::string leading_word;
  std::vector<const FunctionInfo*> members;  // by path then line
  std::size_t files = 0;
};
// The parameter count of a signature: top-level commas inside its first parenthesis + 1, 0 for
// "()" and "(void)"; -1 when it has no parenthesis.
int ParameterCount(std::string_view signature);
// Groups of `fns`, largest first (ties by target id); pointers into `fns`.
std::vector<PatternGroup> MinePatterns(const std::vector<FunctionInfo>& fns);

// Deletes stored packs with a trigger whose file is gone or has another hash now; with `paths`
// (a partial re-index's workspace-relative files or directories), only packs with a trigger at
// or under one of them are checked. Returns how many were deleted.
Result<std::size_t> InvalidateStale(store::Store& store,
                                    const std::vector<std::string>* paths = nullptr);

// Builds and stores the `function_context` pack of every function and method and the
// `module_context` pack of every indexed file (status indexed, unchanged or timed out) at or
// under `paths` (every file when null), each with its own file as invalidation trigger (spec
// §1.3), replacing earlier ones of the same ids; outcome counters are kept by pack id. The
// content follows the query's packs: a function's summary, definition, signature, doc, callees
// and call sites of its name; a module's top definitions by stored PageRank, counts, language,
// imports and the files including or importing it (file_edges). REQUIRES: the caller holds a
// transaction (RebuildDerived's, or StoreFilePacksFor's). Returns how many were stored.
Result<std::size_t> StoreFilePacks(base::Database& db, const std::vector<std::string>* paths,
                                   std::string_view run_id);
// StoreFilePacks of `paths` in its own transaction (a watch re-index's changed paths).
Result<std::size_t> StoreFilePacksFor(store::Store& store, const std::vector<std::string>& paths,
                                      std::string_view run_id);

// Rebuilds, in one transaction, the file graph, the ranks and the pattern and decision packs of
// the whole workspace at `root` (canonical absolute path; ADR files are read from it).
Result<DerivedStats> RebuildDerived(store::Store& store, const std::string& root,
                                    std::string_view run_id);

// Whether the derived tables are current: RebuildDerived ran and no partial re-index (watch
// mode) changed files since (MarkDerivedDirty). A store without files counts as current.
Result<bool> HasDerived(store::Store& store);
// Records that a partial re-index changed files, so the next whole-workspace run rebuilds the
// derived tables even when it changes nothing itself (meta `packs_dirty`).
Status MarkDerivedDirty(store::Store& store);

// Valid stored packs of `pack_type` (every trigger current), by pack id, at most `limit`, with
// their outcome counters.
Result<std::vector<StoredPack>> LoadValid(store::Store& store, std::string_view pack_type,
                                          std::size_t limit = 5000);

// Outcome counters of one pack; nullopt when never counted.
Result<std::optional<Outcome>> GetOutcome(base::Database& db, std::string_view pack_id);
// Counts `pack_id` as verified (success) or defeated (failure); one statement.
Status RecordVerification(base::Database& db, std::string_view pack_id, bool verified);

struct Episode {
  std::int64_t id = 0;  // the ledger entry id
  std::string recorded_at;
  std::string intent;
  std::string intent_type;
  std::string depth;
  std::vector<std::string> pack_ids;
  std::vector<std::string> files;  // the packs' primary files, distinct, in rank order
  // The packs' target ids, in rank order (payload `targetIds`; empty for episodes recorded
  // before decision 0077): a similar_tasks pack cites their spans as its evidence.
  std::vector<std::string> target_ids;
};
// Appends `episode` to the ledger (kind `episode`, agent `agent`) and counts each of its packs
// as served, in one transaction. Returns the entry id. A query must not wait for a bootstrap:
// the write lock is waited for at most `busy_timeout_ms` (kUnavailable after), and the
// connection's busy timeout is set back to 5 s (base/sqlite.h's default) afterwards.
Result<std::int64_t> RecordEpisode(base::Database& db, const Episode& episode,
                                   std::string_view agent, int busy_timeout_ms = 5000);
// The latest `limit` episodes, newest first.
Result<std::vector<Episode>> RecentEpisodes(base::Database& db, std::size_t limit = 200);

// Reverse file-graph edges: (from_path, kind) of every edge into `path`, by from_path.
Result<std::vector<std::pair<std::string, std::string>>> Dependents(base::Database& db,
                                                                    std::string_view path);
// Stored ranks of `ids` (`mod:<path>` or function target ids); absent ids are left out.
Result<std::unordered_map<std::string, double>> Ranks(base::Database& db,
                                                      std::span<const std::string> ids);
// The ranks of `path`'s functions (target id -> rank).
Result<std::unordered_map<std::string, double>> FileFunctionRanks(base::Database& db,
                                                                  std::string_view path);

// Whether `path` looks like a test file: a directory named test, tests, testing, spec, __tests__
// or testdata, or a file name with a test/spec marker (foo_test.cc, test_foo.py, foo.test.ts,
// FooTest.java, foo_spec.rb).
bool IsTestPath(std::string_view path);

}  // namespace trove::librarian::packs

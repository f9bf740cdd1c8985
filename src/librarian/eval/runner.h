// Runner: scores retrieval systems on an EvalSet (docs/librarian.md §9.3 step 9, docs/librarian.md
// §9.4).
//
// Per repository of the set: rebuild the blanked copy of its pinned files in a work directory
// (each file's SHA-256 checked against the pin; a file that is missing or changed is left out
// with its queries, and counted), index the copy into a store of its own, then run every
// selected query through each system, serially, timing each call:
//   * baseline: BM25 over function-level chunks with the identifier sub-word and path columns
//     (store::Store::SearchChunks with the docs/librarian.md §6.8 starting weights), nothing
// structural;
//   * librarian: the query engine (query::Query) at depth L3 (20 packs), minConfidence 0 and
//     no cache, so every call retrieves; each pack is one entry.
// Each system yields two ranked lists from one call. Function level: the entries that are
// functions or methods, as "<path>#L<start>-L<end>::<qualified>"; an entry is relevant when it
// names the target (same path and qualified name) or overlaps at least 50 % of the shorter of
// the two spans (docs/librarian.md §9.3). File level: for the baseline, the distinct paths of
// all entries, in rank order; for the librarian, the engine's own ranked file list
// (QueryResponse::files, query/files.h; decision 0089). Both lists are cut at `list_depth`
// entries for every system, so ranks compare like for like.
//
// Thread safety: one thread runs an evaluation at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "librarian/eval/eval_set.h"
#include "librarian/eval/metrics.h"
#include "librarian/query/query.h"

namespace trove::librarian::eval {

// Systems this build can run.
inline constexpr std::string_view kBaseline = "baseline";
inline constexpr std::string_view kLibrarian = "librarian";
// Returns the names of the systems compiled into this build, baseline first.
std::vector<std::string> AvailableSystems();

struct RunOptions {
  // Resolves relative repo roots. Default: the current directory.
  std::string project_dir = ".";
  // Where blanked copies and stores go; empty = a fresh temporary directory, removed after.
  std::string work_dir;
  // "dev", "test" or "all".
  std::string split = "test";
  // Use query_hard instead of query.
  bool hard = false;
  // Entries kept per level and system (see the file comment). Default 20.
  std::size_t list_depth = 20;
  // Systems to run (AvailableSystems() names); empty = all available.
  std::vector<std::string> systems;
  // Only these repositories; empty = all.
  std::vector<std::string> repos;
  // At most this many queries per repository, in qid order; 0 = all (the CI-sized run).
  std::size_t max_queries_per_repo = 0;
  // Coefficients for the librarian system (rank::Weights order: lexical, symbol, path,
  // graph, scope, and optionally name_words, intent_words, owner_words, file, then coverage);
  // empty = its defaults. Tune on the dev split only.
  std::vector<double> librarian_weights;
  // The librarian's name-confidence coefficients (rank::Weights::name_confidence_low, _high,
  // name_damping, lexical_shift; decision 0095); empty = its defaults. Tune on dev only.
  std::vector<double> name_confidence;
  // Coefficients of the librarian's file aggregation (query/files.h); tune on dev only.
  query::FileWeights file_weights;
  // Each adds a system "librarian[DECAY,TERMS,MODULE,TAIL]" ("[...,LEXICAL,RRF]" when
  // LEXICAL > 0): the librarian with these file coefficients, in the same run (one index per
  // repository for all of them). Tuning only.
  std::vector<query::FileWeights> file_weight_variants;
  // Weights of the workspace-vector signal (rank::Weights::semvec, decision 0096): the first
  // sets the librarian's, each further one adds a system "librarian[semvec=W]" in the same run.
  // Empty = the default. Tuning only (dev split).
  std::vector<double> semvec_weights;
  // Extraction threads for indexing; 0 = all cores.
  std::size_t workers = 0;
  // When set, every query's ranked lists are written to this file, one line per query and
  // system: "<qid>\t<system>\tfile\t<ids...>" and "...\tfunction\t<ids...>" (tab-separated),
  // so two binaries' answers can be compared entry by entry (`diff`). The librarian adds
  // "<qid>\tlibrarian\tpacks\t<sha256>": a digest of its packs' ids, scores, signals,
  // summaries, key facts and related files, its synthesis and its hints.
  std::string rankings_path;
  // The librarian system's query depth and maxResults (decision 0070): L3 and 100 by default
  // (the largest pack budget); `--query-depth L1 --max-results 10` measures the user's
  // defaults (query.h), where fewer packs come back.
  query::Depth query_depth = query::Depth::kL3;
  std::size_t max_results = 100;
  // Harness settings (cutoff k = 10 by default).
  EvalConfig config;
  // When set, told (repositories done, repositories selected, name) as each repository starts
  // and once at the end. Not owned.
  const base::Progress* progress = nullptr;
};

struct SystemResult {
  std::string name;
  Report file_level;
  Report function_level;
};

struct RepoSummary {
  std::string name;
  std::size_t files = 0;          // pinned files
  std::size_t files_missing = 0;  // missing or changed since the set was generated
  std::size_t files_indexed = 0;  // extracted by bootstrap (present files when all is well)
  std::size_t queries = 0;        // run (in the split, file present)
  std::size_t queries_skipped = 0;
  double index_ms = 0;
};

struct EvalRun {
  std::vector<RepoSummary> repos;
  std::vector<SystemResult> systems;
  std::vector<std::string> query_ids;  // in run order
  std::vector<std::string> languages;  // per query, in run order
  std::size_t queries = 0;
};

// Runs the evaluation. kInvalidArgument for a bad split, an unknown system or repo, a
// list_depth of 0 or weights of the wrong count; kNotFound when no query is left to run.
Result<EvalRun> RunEval(const EvalSet& set, const RunOptions& options);

// Returns whether function-level entry `doc` matches relevant item `relevant`, both
// "<path>#L<start>-L<end>::<qualified>" (see the file comment). Malformed ids never match.
bool FunctionMatch(std::string_view doc, std::string_view relevant);
// Returns "<path>#L<start>-L<end>::<qualified>".
std::string FunctionId(std::string_view path, std::uint32_t start_line, std::uint32_t end_line,
                       std::string_view qualified);

// Returns the run as a text table: per system and level, the docs/librarian.md §9.3 metrics and
// latency.
std::string FormatRun(const EvalRun& run, const RunOptions& options);

}  // namespace trove::librarian::eval

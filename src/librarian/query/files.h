// The query engine's ranked file list (QueryResponse::files, issue 23, decision 0089): which files
// the intent is about, ranked from the engine's whole scored candidate pool rather than from the
// few packs it returns. At the defaults (L1, 10 packs, up to 3 per file) the packs name about
// five distinct files; the pool holds the scored functions and modules of every file the
// retrieval found, so the list can name as many as it is asked for.
//
// A file's score aggregates its candidates: the best candidate's score, plus the next-best ones
// decayed geometrically (a file with several moderately matching functions is more likely the
// file the intent is about than a file with one weakly matching function), plus a share of the
// file prior for files the retrieval found but whose candidates were cut before detailed
// scoring. Pure functions over values; no store access.
//
// Thread safety: values and pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "librarian/rank/rank.h"

namespace trove::librarian::query {

// Longest file list a request may ask for (QueryRequest::max_files).
inline constexpr std::size_t kMaxFiles = 100;
// Default length of the file list (wire `maxFiles`).
inline constexpr std::size_t kDefaultMaxFiles = 10;

// The coefficients of the aggregation. Chosen on the development split only (decision 0089);
// `librarian_eval --file-weights DECAY,TERMS,MODULE,TAIL[,LEXICAL[,RRF]]` overrides them.
struct FileWeights {
  // The k-th best candidate of a file (k = 0 the best) adds decay^k of its score.
  double decay = 0.5;
  // At most this many candidates of a file count.
  std::size_t terms = 4;
  // A module candidate's score counts with this factor (the module pack stands for the whole
  // file, and its score already carries the file's path and prior). 1.5 was at or near the best
  // file nDCG@10 of the variants tried on both sets' dev splits, standard and hard (0089).
  double module = 1.5;
  // Files among the retrieved chunks without a scored candidate rank by tail × their file prior
  // (in [0, 1]), below nearly every file with one.
  double tail = 0.1;
  // File-level lexical evidence (decision 0094): the weight of Store::SearchFiles' ranking,
  // BM25 with each whole file as one document, fused with the aggregate above. 0 leaves the
  // list as the candidate pool ranks it (and the query runs no file search). 0.3 was at or
  // near the best of 0.15-2 on both sets' dev splits, standard and hard; 1 and more lose
  // (the file search alone ranks files below BM25's chunks).
  double lexical = 0.3;
  // 0: the fused score is the aggregate / the best file's aggregate + lexical × the file's
  // file-level BM25 / the best file's. > 0: reciprocal-rank fusion with this constant,
  // 1 / (rrf + rank in the pool's list) + lexical / (rrf + rank in the file search's).
  double rrf = 0;
};

// One scored candidate of the engine's pool, as the aggregation sees it.
struct FileEvidence {
  std::string path;
  std::string target_id;  // fn:<path>::<qualified> or mod:<path>
  bool module = false;
  double score = 0;
  rank::RankSignals signals;
};

struct RankedFile {
  std::string path;
  // The aggregate the list is ordered by: a ranking signal, not a probability.
  double score = 0;
  // How many of the file's candidates (functions and its module) matched the intent.
  std::size_t matches = 0;
  // The file's best candidate's target id; empty when it entered by its file prior only.
  std::string best_target;
  // The signals that fired on the file's candidates, in a fixed order: "lexical", "name",
  // "coverage", "assoc", "path", "file_prior", "graph", "affected", "file_text".
  std::vector<std::string> why;
};

// Ranks files: the pool's candidates with a positive score (or in an affected file), then the
// `priors` files (path, file prior in [0, 1]) not already listed; with `weights.lexical` > 0
// fused with `file_text` (path, file-level BM25 score, Store::SearchFiles), whose files may
// enter the list with that evidence alone (why "file_text"). Best first; ties by path. At
// most `max_files` entries, each path once. Deterministic for the same inputs in any order.
std::vector<RankedFile> RankFiles(std::span<const FileEvidence> pool,
                                  std::span<const std::pair<std::string, double>> priors,
                                  const FileWeights& weights, std::size_t max_files,
                                  std::span<const std::pair<std::string, double>> file_text = {});

}  // namespace trove::librarian::query

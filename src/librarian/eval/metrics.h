// Retrieval metrics and the evaluation harness (docs/librarian.md §9.1, §9.2; the seed's harness:
// P@k, R@k,
// F1, nDCG, MRR, MAP, latency and throughput).
//
// For one query with ranked list r, relevant set R and cutoff k:
//   P@k = |R ∩ r[1..k]| / k, R@k = |R ∩ r[1..k]| / |R|, F1 = 2PR / (P + R) (0 when both are 0),
//   nDCG@k with binary gains (DCG = Σ rel_i / log2(i + 1), divided by the ideal DCG),
//   RR = 1 / rank of the first relevant item (0 when none is ranked), AP = (Σ over relevant
//   ranks j of P@j) / |R|. A ranked entry is relevant when it matches a relevant item not
//   matched by an earlier entry, so one target is never counted twice (function-level runs
//   often rank several overlapping chunks of one function).
// Latency percentiles are nearest-rank (docs/librarian.md §9.1 decision); throughput is queries per
// second of wall time, run serially.
//
// Thread safety: pure functions; RunBatch calls `retrieve` serially on the calling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::librarian::eval {

// Metrics of one ranked list. Every value is in [0, 1].
struct QueryMetrics {
  double precision_at_k = 0;  // P@k with the configured cutoff
  double recall_at_k = 0;     // R@k
  double f1_at_k = 0;
  double ndcg_at_10 = 0;
  double reciprocal_rank = 0;  // over the whole list (MRR@100 when lists hold 100 entries)
  double average_precision = 0;
  double recall_at_1 = 0;
  double recall_at_5 = 0;
  double precision_at_5 = 0;
  std::size_t first_relevant_rank = 0;  // 1-based; 0 when no relevant entry is ranked
};

// Returns the metrics of a ranked list given, for each rank, whether that entry is relevant
// (already deduplicated: at most `num_relevant` entries are true), the size of the relevant set
// and the cutoff k (>= 1). A query with no relevant item scores 0 everywhere.
QueryMetrics ScoreRanking(std::span<const bool> relevant_at_rank, std::size_t num_relevant,
                          std::size_t k);

// Returns the nearest-rank percentile p (0 < p <= 100) of `values`: the smallest value such
// that at least p % of the values are <= it. 0 for no values.
double NearestRankPercentile(std::vector<double> values, double p);

// Harness configuration; names follow the contract (cutoffK, minPrecision, minRecall,
// maxLatencyMs) with the original's calibration tolerance and warm-up count.
struct EvalConfig {
  std::size_t cutoff_k = 10;
  double min_precision = 0.7;
  double min_recall = 0.6;
  double max_latency_ms = 500;
  double calibration_tolerance = 0.1;
  // The first `warmup_queries` queries count for quality but not for latency statistics.
  std::size_t warmup_queries = 3;
  // Whether ranked entry `doc` matches relevant item `relevant`. Empty: string equality.
  std::function<bool(std::string_view doc, std::string_view relevant)> match;
};

struct EvalQuery {
  std::string id;
  std::string intent;
  std::vector<std::string> relevant;
};

struct Retrieved {
  std::vector<std::string> docs;  // ranked best first
  // The top result's signal in [0, 1] (e.g. a pack's confidence), when the system gives one.
  std::optional<double> top_signal;
};

// One query's retrieval as measured: what came back and how long it took.
struct RunResult {
  Retrieved retrieved;
  double latency_ms = 0;
  // CPU time of the calling thread during the call: unlike wall time, it does not grow when
  // other processes load the machine. 0 when not measured.
  double cpu_ms = 0;
  // Non-empty when the system failed on this query (the query then scores 0).
  std::string error;
};

struct LatencyStats {
  double p50_ms = 0;
  double p95_ms = 0;
  double p99_ms = 0;
  double mean_ms = 0;
  double max_ms = 0;
  double cpu_p50_ms = 0;  // the same percentiles of RunResult::cpu_ms
  double cpu_p95_ms = 0;
  std::size_t timed_queries = 0;  // after warm-up
};

struct MeanMetrics {
  double precision_at_k = 0;
  double recall_at_k = 0;
  double f1_at_k = 0;
  double ndcg_at_10 = 0;
  double mrr = 0;
  double map = 0;
  double recall_at_1 = 0;
  double recall_at_5 = 0;
  double precision_at_5 = 0;
};

struct QueryRow {
  std::string id;
  QueryMetrics metrics;
  double latency_ms = 0;
  std::string error;
};

// The contract's summary (docs/librarian.md §9.2).
struct Summary {
  std::string quality_grade;  // "A".."F"
  double quality_score = 0;   // 0..100
  bool passed = false;
  std::vector<std::string> findings;
  std::vector<std::string> recommendations;
};

struct Report {
  Summary summary;
  MeanMetrics mean;
  LatencyStats latency;
  double throughput_qps = 0;  // queries / total retrieval wall time
  double total_ms = 0;
  std::size_t queries = 0;
  std::size_t errors = 0;
  std::vector<QueryRow> rows;  // in query order
};

// Returns the quality score of docs/librarian.md §9.2: 40·min(1, P/minPrecision) + 40·min(1,
// R/minRecall)
// + 20·max(0, (maxLatencyMs − p95)/maxLatencyMs).
double QualityScore(const EvalConfig& config, double precision, double recall, double p95_ms);
// "A" >= 90, "B" >= 80, "C" >= 70, "D" >= 60, else "F".
std::string QualityGrade(double score);

// Scores already-collected runs (one per query, same order) against the queries' relevant
// sets. kInvalidArgument when the sizes differ or cutoff_k is 0.
Result<Report> ScoreRuns(const EvalConfig& config, std::span<const EvalQuery> queries,
                         std::span<const RunResult> runs);

// Returns the CPU time consumed by the calling thread so far, in milliseconds.
double ThreadCpuMs();

// Calls `retrieve` for each query serially, timing each call with a monotonic clock (and the
// thread's CPU clock), then
// scores the runs (ScoreRuns). A non-OK result of `retrieve` is recorded as that query's
// error and scores 0; it does not stop the batch.
Result<Report> RunBatch(const EvalConfig& config, std::span<const EvalQuery> queries,
                        const std::function<Result<Retrieved>(const EvalQuery&)>& retrieve);

}  // namespace trove::librarian::eval

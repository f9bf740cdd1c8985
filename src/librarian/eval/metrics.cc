#include "librarian/eval/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <memory>
#include <utility>

namespace trove::librarian::eval {
namespace {

double Ratio(double num, double den) { return den > 0 ? num / den : 0; }

// Returns, per rank, whether the entry matches a relevant item no earlier entry matched.
std::vector<bool> Judge(const EvalConfig& config, const EvalQuery& query,
                        const std::vector<std::string>& docs) {
  std::vector<bool> used(query.relevant.size(), false);
  std::vector<bool> out(docs.size(), false);
  for (std::size_t i = 0; i < docs.size(); ++i) {
    for (std::size_t j = 0; j < query.relevant.size(); ++j) {
      if (used[j]) continue;
      bool hit =
          config.match ? config.match(docs[i], query.relevant[j]) : docs[i] == query.relevant[j];
      if (hit) {
        used[j] = true;
        out[i] = true;
        break;
      }
    }
  }
  return out;
}

// Calibration of the top signal against observed top-1 hit rates, in ten equal-width buckets
// (docs/librarian.md §9.2). Returns the findings.
void Calibration(const EvalConfig& config, std::span<const RunResult> runs,
                 const std::vector<QueryRow>& rows, Summary& summary) {
  std::array<double, 10> signal_sum{};
  std::array<double, 10> hits{};
  std::array<std::size_t, 10> count{};
  std::size_t with_signal = 0;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].retrieved.top_signal) continue;
    double s = std::clamp(*runs[i].retrieved.top_signal, 0.0, 1.0);
    auto b = std::min<std::size_t>(9, static_cast<std::size_t>(s * 10));
    signal_sum[b] += s;
    hits[b] += rows[i].metrics.first_relevant_rank == 1 ? 1 : 0;
    ++count[b];
    ++with_signal;
  }
  if (with_signal == 0) {
    summary.findings.push_back("uncalibrated: the system returned no signals");
    return;
  }
  double gap = 0;
  for (std::size_t b = 0; b < 10; ++b) {
    if (count[b] == 0) continue;
    double n = static_cast<double>(count[b]);
    gap = std::max(gap, std::abs(signal_sum[b] / n - hits[b] / n));
  }
  if (gap > config.calibration_tolerance) {
    summary.findings.push_back(
        fmt::format("uncalibrated: top signal differs from the observed top-1 hit rate by up "
                    "to {:.2f} in a bucket (tolerance {:.2f})",
                    gap, config.calibration_tolerance));
  } else {
    summary.findings.push_back(fmt::format(
        "top signal within {:.2f} of the observed top-1 hit rate in every bucket on this set",
        config.calibration_tolerance));
  }
}

}  // namespace

QueryMetrics ScoreRanking(std::span<const bool> relevant_at_rank, std::size_t num_relevant,
                          std::size_t k) {
  QueryMetrics m;
  if (num_relevant == 0 || k == 0) return m;
  std::size_t hits = 0, hits_k = 0, hits_5 = 0, hits_1 = 0;
  double dcg = 0, ap_sum = 0;
  for (std::size_t i = 0; i < relevant_at_rank.size(); ++i) {
    if (!relevant_at_rank[i]) continue;
    std::size_t rank = i + 1;
    ++hits;
    if (m.first_relevant_rank == 0) m.first_relevant_rank = rank;
    if (rank <= k) ++hits_k;
    if (rank <= 5) ++hits_5;
    if (rank <= 1) ++hits_1;
    if (rank <= 10) dcg += 1.0 / std::log2(static_cast<double>(rank) + 1);
    ap_sum += static_cast<double>(hits) / static_cast<double>(rank);
  }
  double idcg = 0;
  for (std::size_t r = 1; r <= std::min<std::size_t>(num_relevant, 10); ++r) {
    idcg += 1.0 / std::log2(static_cast<double>(r) + 1);
  }
  double rel = static_cast<double>(num_relevant);
  m.precision_at_k = Ratio(static_cast<double>(hits_k), static_cast<double>(k));
  m.recall_at_k = Ratio(static_cast<double>(hits_k), rel);
  m.f1_at_k = (m.precision_at_k + m.recall_at_k) > 0
                  ? 2 * m.precision_at_k * m.recall_at_k / (m.precision_at_k + m.recall_at_k)
                  : 0;
  m.ndcg_at_10 = Ratio(dcg, idcg);
  m.reciprocal_rank = m.first_relevant_rank ? 1.0 / static_cast<double>(m.first_relevant_rank) : 0;
  m.average_precision = ap_sum / rel;
  m.recall_at_1 = static_cast<double>(hits_1) / rel;
  m.recall_at_5 = static_cast<double>(hits_5) / rel;
  m.precision_at_5 = static_cast<double>(hits_5) / 5.0;
  return m;
}

double NearestRankPercentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  double n = static_cast<double>(values.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n));
  rank = std::clamp<std::size_t>(rank, 1, values.size());
  return values[rank - 1];
}

double QualityScore(const EvalConfig& config, double precision, double recall, double p95_ms) {
  double p = config.min_precision > 0 ? std::min(1.0, precision / config.min_precision) : 1.0;
  double r = config.min_recall > 0 ? std::min(1.0, recall / config.min_recall) : 1.0;
  double l = config.max_latency_ms > 0
                 ? std::max(0.0, (config.max_latency_ms - p95_ms) / config.max_latency_ms)
                 : 0.0;
  return 40 * p + 40 * r + 20 * l;
}

std::string QualityGrade(double score) {
  if (score >= 90) return "A";
  if (score >= 80) return "B";
  if (score >= 70) return "C";
  if (score >= 60) return "D";
  return "F";
}

Result<Report> ScoreRuns(const EvalConfig& config, std::span<const EvalQuery> queries,
                         std::span<const RunResult> runs) {
  if (config.cutoff_k == 0) return Status::InvalidArgument("cutoff_k: must be at least 1");
  if (queries.size() != runs.size()) {
    return Status::InvalidArgument(
        fmt::format("runs: {} results for {} queries", runs.size(), queries.size()));
  }
  Report report;
  report.queries = queries.size();
  std::vector<double> latencies, cpu;
  for (std::size_t i = 0; i < queries.size(); ++i) {
    QueryRow row;
    row.id = queries[i].id;
    row.latency_ms = runs[i].latency_ms;
    row.error = runs[i].error;
    if (!row.error.empty()) ++report.errors;
    std::vector<bool> judged = Judge(config, queries[i], runs[i].retrieved.docs);
    std::unique_ptr<bool[]> flags(new bool[judged.size() + 1]);
    for (std::size_t j = 0; j < judged.size(); ++j) flags[j] = judged[j];
    row.metrics = ScoreRanking(std::span<const bool>(flags.get(), judged.size()),
                               queries[i].relevant.size(), config.cutoff_k);
    report.total_ms += runs[i].latency_ms;
    if (i >= config.warmup_queries) {
      latencies.push_back(runs[i].latency_ms);
      cpu.push_back(runs[i].cpu_ms);
    }
    report.rows.push_back(std::move(row));
  }
  if (!report.rows.empty()) {
    MeanMetrics& m = report.mean;
    for (const QueryRow& r : report.rows) {
      m.precision_at_k += r.metrics.precision_at_k;
      m.recall_at_k += r.metrics.recall_at_k;
      m.f1_at_k += r.metrics.f1_at_k;
      m.ndcg_at_10 += r.metrics.ndcg_at_10;
      m.mrr += r.metrics.reciprocal_rank;
      m.map += r.metrics.average_precision;
      m.recall_at_1 += r.metrics.recall_at_1;
      m.recall_at_5 += r.metrics.recall_at_5;
      m.precision_at_5 += r.metrics.precision_at_5;
    }
    double n = static_cast<double>(report.rows.size());
    for (double* v : {&m.precision_at_k, &m.recall_at_k, &m.f1_at_k, &m.ndcg_at_10, &m.mrr, &m.map,
                      &m.recall_at_1, &m.recall_at_5, &m.precision_at_5}) {
      *v /= n;
    }
  }
  LatencyStats& lat = report.latency;
  lat.timed_queries = latencies.size();
  if (!latencies.empty()) {
    lat.p50_ms = NearestRankPercentile(latencies, 50);
    lat.p95_ms = NearestRankPercentile(latencies, 95);
    lat.p99_ms = NearestRankPercentile(latencies, 99);
    lat.cpu_p50_ms = NearestRankPercentile(cpu, 50);
    lat.cpu_p95_ms = NearestRankPercentile(cpu, 95);
    double sum = 0;
    for (double v : latencies) sum += v;
    lat.mean_ms = sum / static_cast<double>(latencies.size());
    lat.max_ms = *std::max_element(latencies.begin(), latencies.end());
  }
  report.throughput_qps =
      report.total_ms > 0 ? static_cast<double>(report.queries) * 1000.0 / report.total_ms : 0;

  Summary& s = report.summary;
  s.quality_score =
      QualityScore(config, report.mean.precision_at_k, report.mean.recall_at_k, lat.p95_ms);
  s.quality_grade = QualityGrade(s.quality_score);
  s.passed = report.mean.precision_at_k >= config.min_precision &&
             report.mean.recall_at_k >= config.min_recall && lat.p95_ms <= config.max_latency_ms;
  if (report.mean.precision_at_k < config.min_precision) {
    s.findings.push_back(fmt::format("precision@{} {:.3f} is below {:.2f}", config.cutoff_k,
                                     report.mean.precision_at_k, config.min_precision));
  }
  if (report.mean.recall_at_k < config.min_recall) {
    s.findings.push_back(fmt::format("recall@{} {:.3f} is below {:.2f}", config.cutoff_k,
                                     report.mean.recall_at_k, config.min_recall));
    s.recommendations.push_back("widen the candidate set or add ranking signals");
  }
  if (lat.p95_ms > config.max_latency_ms) {
    s.findings.push_back(
        fmt::format("p95 latency {:.1f} ms exceeds {:.0f} ms", lat.p95_ms, config.max_latency_ms));
    s.recommendations.push_back("enable caching or reduce the pack budget");
  }
  if (report.errors > 0) {
    s.findings.push_back(fmt::format("{} of {} queries failed", report.errors, report.queries));
  }
  Calibration(config, runs, report.rows, s);
  return report;
}

double ThreadCpuMs() {
  timespec ts{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

Result<Report> RunBatch(const EvalConfig& config, std::span<const EvalQuery> queries,
                        const std::function<Result<Retrieved>(const EvalQuery&)>& retrieve) {
  std::vector<RunResult> runs;
  runs.reserve(queries.size());
  for (const EvalQuery& q : queries) {
    double cpu_start = ThreadCpuMs();
    auto start = std::chrono::steady_clock::now();
    Result<Retrieved> got = retrieve(q);
    auto end = std::chrono::steady_clock::now();
    RunResult run;
    run.latency_ms = std::chrono::duration<double, std::milli>(end - start).count();
    run.cpu_ms = ThreadCpuMs() - cpu_start;
    if (got.ok()) {
      run.retrieved = std::move(*got);
    } else {
      run.error = got.status().ToString();
    }
    runs.push_back(std::move(run));
  }
  return ScoreRuns(config, queries, runs);
}

}  // namespace trove::librarian::eval

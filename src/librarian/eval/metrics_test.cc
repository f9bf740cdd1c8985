#include "librarian/eval/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace trove::librarian::eval {
namespace {

QueryMetrics Score(std::vector<int> flags, std::size_t num_relevant, std::size_t k) {
  std::unique_ptr<bool[]> b(new bool[flags.size() + 1]);
  for (std::size_t i = 0; i < flags.size(); ++i) b[i] = flags[i] != 0;
  return ScoreRanking(std::span<const bool>(b.get(), flags.size()), num_relevant, k);
}

TEST(MetricsTest, TwoRelevantAtRanksOneAndThree) {
  // r = [R, n, R, n, n], |R| = 2, k = 5.
  QueryMetrics m = Score({1, 0, 1, 0, 0}, 2, 5);
  EXPECT_DOUBLE_EQ(m.precision_at_k, 2.0 / 5);
  EXPECT_DOUBLE_EQ(m.recall_at_k, 1.0);
  EXPECT_DOUBLE_EQ(m.f1_at_k, 2 * 0.4 * 1.0 / 1.4);
  // DCG = 1/log2(2) + 1/log2(4) = 1.5; IDCG = 1 + 1/log2(3).
  EXPECT_DOUBLE_EQ(m.ndcg_at_10, 1.5 / (1 + 1 / std::log2(3.0)));
  EXPECT_DOUBLE_EQ(m.reciprocal_rank, 1.0);
  // AP = (P@1 + P@3) / 2 = (1 + 2/3) / 2.
  EXPECT_DOUBLE_EQ(m.average_precision, (1 + 2.0 / 3) / 2);
  EXPECT_DOUBLE_EQ(m.recall_at_1, 0.5);
  EXPECT_DOUBLE_EQ(m.recall_at_5, 1.0);
  EXPECT_DOUBLE_EQ(m.precision_at_5, 0.4);
  EXPECT_EQ(m.first_relevant_rank, 1u);
}

TEST(MetricsTest, OneTargetAtRankFour) {
  QueryMetrics m = Score({0, 0, 0, 1}, 1, 10);
  EXPECT_DOUBLE_EQ(m.reciprocal_rank, 0.25);
  EXPECT_DOUBLE_EQ(m.average_precision, 0.25);  // one relevant item: AP = RR
  EXPECT_DOUBLE_EQ(m.ndcg_at_10, 1 / std::log2(5.0));
  EXPECT_DOUBLE_EQ(m.precision_at_k, 0.1);
  EXPECT_DOUBLE_EQ(m.recall_at_k, 1.0);
  EXPECT_DOUBLE_EQ(m.recall_at_1, 0.0);
  EXPECT_DOUBLE_EQ(m.recall_at_5, 1.0);
  EXPECT_EQ(m.first_relevant_rank, 4u);
}

TEST(MetricsTest, BeyondCutoffCountsForRankMetricsOnly) {
  // Relevant at rank 12: outside P@10, R@10 and nDCG@10, inside MRR and AP.
  std::vector<int> flags(12, 0);
  flags[11] = 1;
  QueryMetrics m = Score(flags, 1, 10);
  EXPECT_DOUBLE_EQ(m.precision_at_k, 0);
  EXPECT_DOUBLE_EQ(m.recall_at_k, 0);
  EXPECT_DOUBLE_EQ(m.f1_at_k, 0);
  EXPECT_DOUBLE_EQ(m.ndcg_at_10, 0);
  EXPECT_DOUBLE_EQ(m.reciprocal_rank, 1.0 / 12);
}

TEST(MetricsTest, MissedAndEmpty) {
  QueryMetrics none = Score({0, 0, 0}, 1, 10);
  EXPECT_DOUBLE_EQ(none.reciprocal_rank, 0);
  EXPECT_DOUBLE_EQ(none.average_precision, 0);
  EXPECT_EQ(none.first_relevant_rank, 0u);
  QueryMetrics empty = Score({}, 1, 10);
  EXPECT_DOUBLE_EQ(empty.ndcg_at_10, 0);
  QueryMetrics no_relevant = Score({1}, 0, 10);  // nothing to find scores 0, never NaN
  EXPECT_DOUBLE_EQ(no_relevant.recall_at_k, 0);
  EXPECT_DOUBLE_EQ(no_relevant.ndcg_at_10, 0);
}

TEST(MetricsTest, NearestRankPercentile) {
  std::vector<double> v = {15, 20, 35, 40, 50};
  // Nearest rank: ceil(p/100 * n).
  EXPECT_DOUBLE_EQ(NearestRankPercentile(v, 5), 15);
  EXPECT_DOUBLE_EQ(NearestRankPercentile(v, 30), 20);
  EXPECT_DOUBLE_EQ(NearestRankPercentile(v, 40), 20);
  EXPECT_DOUBLE_EQ(NearestRankPercentile(v, 50), 35);
  EXPECT_DOUBLE_EQ(NearestRankPercentile(v, 95), 50);
  EXPECT_DOUBLE_EQ(NearestRankPercentile(v, 100), 50);
  EXPECT_DOUBLE_EQ(NearestRankPercentile({3, 1, 2}, 50), 2);  // unsorted input
  EXPECT_DOUBLE_EQ(NearestRankPercentile({}, 50), 0);
}

TEST(MetricsTest, QualityScoreAndGrade) {
  EvalConfig c;  // 0.7, 0.6, 500 ms
  // P = 0.35 -> 20, R = 0.6 -> 40, p95 = 100 -> 20 * 0.8 = 16.
  EXPECT_DOUBLE_EQ(QualityScore(c, 0.35, 0.6, 100), 76);
  // Ratios are capped at 1; a p95 over the limit adds nothing.
  EXPECT_DOUBLE_EQ(QualityScore(c, 1.0, 1.0, 900), 80);
  EXPECT_EQ(QualityGrade(90), "A");
  EXPECT_EQ(QualityGrade(89.9), "B");
  EXPECT_EQ(QualityGrade(76), "C");
  EXPECT_EQ(QualityGrade(60), "D");
  EXPECT_EQ(QualityGrade(59.99), "F");
}

TEST(MetricsTest, RunBatchMeansDedupAndErrors) {
  EvalConfig c;
  c.warmup_queries = 1;
  std::vector<EvalQuery> queries = {
      {"q1", "alpha", {"a.js"}},
      {"q2", "beta", {"b.js"}},
      {"q3", "gamma", {"c.js"}},
  };
  auto retrieve = [](const EvalQuery& q) -> Result<Retrieved> {
    if (q.id == "q1") return Retrieved{{"a.js", "a.js", "x.js"}, 0.9};  // duplicate counts once
    if (q.id == "q2") return Retrieved{{"x.js", "b.js"}, std::nullopt};
    return Status::Internal("boom");
  };
  Result<Report> r = RunBatch(c, queries, retrieve);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->queries, 3u);
  EXPECT_EQ(r->errors, 1u);
  EXPECT_EQ(r->rows[2].error, "internal: boom");
  EXPECT_DOUBLE_EQ(r->mean.mrr, (1 + 0.5 + 0) / 3);
  EXPECT_DOUBLE_EQ(r->mean.map, (1 + 0.5 + 0) / 3);
  EXPECT_DOUBLE_EQ(r->mean.precision_at_k, (0.1 + 0.1 + 0) / 3);  // the duplicate adds nothing
  EXPECT_EQ(r->latency.timed_queries, 2u);
  EXPECT_EQ(r->rows[0].metrics.first_relevant_rank, 1u);
  EXPECT_FALSE(r->summary.passed);  // P@10 <= 0.1 with one target per query
  EXPECT_FALSE(r->summary.findings.empty());
}

TEST(MetricsTest, CustomMatcher) {
  EvalConfig c;
  c.match = [](std::string_view doc, std::string_view rel) {
    return doc.substr(0, doc.find('#')) == rel;
  };
  std::vector<EvalQuery> queries = {{"q", "x", {"a.js"}}};
  std::vector<RunResult> runs(1);
  runs[0].retrieved.docs = {"b.js#L1-L2", "a.js#L3-L9"};
  Result<Report> r = ScoreRuns(c, queries, runs);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->mean.mrr, 0.5);
}

TEST(MetricsTest, CalibrationFindings) {
  EvalConfig c;
  c.warmup_queries = 0;
  std::vector<EvalQuery> queries = {{"q1", "x", {"a"}}, {"q2", "y", {"b"}}};
  std::vector<RunResult> runs(2);
  runs[0].retrieved = {{"a"}, 0.95};  // hit
  runs[1].retrieved = {{"z"}, 0.95};  // miss: bucket 9 has mean signal 0.95, hit rate 0.5
  Result<Report> r = ScoreRuns(c, queries, runs);
  ASSERT_TRUE(r.ok());
  bool uncalibrated = false;
  for (const std::string& f : r->summary.findings) {
    if (f.rfind("uncalibrated", 0) == 0) uncalibrated = true;
  }
  EXPECT_TRUE(uncalibrated);
}

TEST(MetricsTest, BadInput) {
  EvalConfig c;
  std::vector<EvalQuery> queries = {{"q", "x", {"a"}}};
  EXPECT_FALSE(ScoreRuns(c, queries, {}).ok());
  c.cutoff_k = 0;
  std::vector<RunResult> runs(1);
  Result<Report> r = ScoreRuns(c, queries, runs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "cutoff_k: must be at least 1");
}

}  // namespace
}  // namespace trove::librarian::eval

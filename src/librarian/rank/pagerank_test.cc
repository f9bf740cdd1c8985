#include "librarian/rank/pagerank.h"

#include <gtest/gtest.h>

#include <numeric>

namespace trove::librarian::rank {
namespace {

double Sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

TEST(PageRankTest, EmptyGraph) { EXPECT_TRUE(PageRank(0, {}).empty()); }

TEST(PageRankTest, NoEdgesIsUniform) {
  const std::vector<double> r = PageRank(4, {});
  ASSERT_EQ(r.size(), 4u);
  for (double v : r) EXPECT_NEAR(v, 0.25, 1e-12);
}

// A cycle is symmetric: every node has rank 1/n.
TEST(PageRankTest, CycleIsUniform) {
  const std::vector<double> r = PageRank(3, {{0, 1}, {1, 2}, {2, 0}});
  for (double v : r) EXPECT_NEAR(v, 1.0 / 3, 1e-9);
}

// Two nodes, 0 -> 1 and 1 dangling. Stationary equations with d = 0.85, n = 2:
//   r0 = (0.15 + 0.85 r1) / 2,  r1 = (0.15 + 0.85 r1) / 2 + 0.85 r0,  r0 + r1 = 1.
// From the first, r0 = 0.075 + 0.425 r1; with r0 + r1 = 1: r1 = 0.925 / 1.425.
TEST(PageRankTest, KnownRanksTwoNodes) {
  const std::vector<double> r = PageRank(2, {{0, 1}});
  const double r1 = 0.925 / 1.425;
  EXPECT_NEAR(r[1], r1, 1e-9);
  EXPECT_NEAR(r[0], 1 - r1, 1e-9);
}

// Star: 1, 2, 3 all link to 0, and 0 links back to 1. Solved by hand (d = 0.85, n = 4):
//   r2 = r3 = 0.0375 (only teleport), r0 = 0.0375 + 0.85 (r1 + r2 + r3),
//   r1 = 0.0375 + 0.85 r0. Substituting: r0 = 0.0375 + 0.85 (0.0375 + 0.85 r0 + 0.075)
//   => r0 (1 - 0.7225) = 0.0375 + 0.095625 => r0 = 0.133125 / 0.2775.
TEST(PageRankTest, KnownRanksStar) {
  const std::vector<double> r = PageRank(4, {{1, 0}, {2, 0}, {3, 0}, {0, 1}});
  const double r0 = 0.133125 / 0.2775;
  EXPECT_NEAR(r[0], r0, 1e-6);
  EXPECT_NEAR(r[1], 0.0375 + 0.85 * r0, 1e-6);
  EXPECT_NEAR(r[2], 0.0375, 1e-6);
  EXPECT_NEAR(r[3], 0.0375, 1e-6);
  EXPECT_NEAR(Sum(r), 1, 1e-6);
}

TEST(PageRankTest, IgnoresSelfLoopsAndOutOfRangeEdges) {
  const std::vector<double> a = PageRank(2, {{0, 1}});
  const std::vector<double> b = PageRank(2, {{0, 1}, {1, 1}, {0, 7}, {9, 0}});
  EXPECT_EQ(a, b);
}

TEST(PageRankTest, DeterministicAndBounded) {
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  for (std::size_t i = 0; i < 50; ++i) edges.emplace_back(i, (i * 7 + 3) % 50);
  PageRankOptions few;
  few.max_iterations = 2;
  const std::vector<double> r1 = PageRank(50, edges, few);
  const std::vector<double> r2 = PageRank(50, edges, few);
  EXPECT_EQ(r1, r2);
  EXPECT_NEAR(Sum(r1), 1, 1e-9);
}

TEST(PageRankTest, PersonalizationPullsRankToward) {
  // A path 0 -> 1 -> 2; personalizing on 0 raises 0's rank over the uniform answer.
  const std::vector<std::pair<std::size_t, std::size_t>> edges = {{0, 1}, {1, 2}};
  const std::vector<double> uniform = PageRank(3, edges);
  const std::vector<double> personal = PageRank(3, edges, {}, {1, 0, 0});
  EXPECT_GT(personal[0], uniform[0]);
  EXPECT_NEAR(Sum(personal), 1, 1e-9);
}

}  // namespace
}  // namespace trove::librarian::rank

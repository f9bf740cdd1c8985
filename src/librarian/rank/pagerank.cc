#include "librarian/rank/pagerank.h"

#include <cmath>

namespace trove::librarian::rank {

std::vector<double> PageRank(std::size_t n,
                             const std::vector<std::pair<std::size_t, std::size_t>>& edges,
                             const PageRankOptions& options,
                             const std::vector<double>& personalization) {
  if (n == 0) return {};
  const double nd = static_cast<double>(n);
  // Teleport distribution: uniform, or the normalized personalization vector.
  std::vector<double> teleport(n, 1.0 / nd);
  if (personalization.size() == n) {
    double sum = 0;
    for (double v : personalization) sum += (std::isfinite(v) && v > 0) ? v : 0;
    if (sum > 0) {
      for (std::size_t i = 0; i < n; ++i) {
        const double v = personalization[i];
        teleport[i] = (std::isfinite(v) && v > 0) ? v / sum : 0;
      }
    }
  }
  std::vector<std::size_t> out_degree(n, 0);
  std::vector<std::pair<std::size_t, std::size_t>> valid;
  valid.reserve(edges.size());
  for (const auto& [a, b] : edges) {
    if (a < n && b < n && a != b) {
      valid.emplace_back(a, b);
      ++out_degree[a];
    }
  }
  const double d = options.damping;
  std::vector<double> rank = teleport;
  std::vector<double> next(n);
  const int iterations = options.max_iterations < 1 ? 1 : options.max_iterations;
  for (int it = 0; it < iterations; ++it) {
    double dangling = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (out_degree[i] == 0) dangling += rank[i];
    }
    for (std::size_t i = 0; i < n; ++i) next[i] = ((1 - d) + d * dangling) * teleport[i];
    for (const auto& [a, b] : valid) {
      next[b] += d * rank[a] / static_cast<double>(out_degree[a]);
    }
    double change = 0;
    for (std::size_t i = 0; i < n; ++i) change += std::fabs(next[i] - rank[i]);
    rank.swap(next);
    if (change < options.tolerance) break;
  }
  return rank;
}

}  // namespace trove::librarian::rank

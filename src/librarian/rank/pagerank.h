// PageRank by the power method (docs/librarian.md §6.5; spec §2.5): the file-level and
// function-level ranks behind module summaries and the module graph signal. Deterministic: the
// same graph gives the same ranks bit for bit (edges are summed in input order).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace trove::librarian::rank {

struct PageRankOptions {
  double damping = 0.85;
  // The power method stops after this many iterations or once the L1 change of an iteration
  // is below `tolerance`, whichever comes first.
  int max_iterations = 100;
  double tolerance = 1e-10;
};

// Ranks of `n` nodes over directed `edges` (from, to), summing to 1. Edges out of range and
// self-loops are ignored; parallel edges count once each (a node that calls another twice
// passes it twice the share). A node without out-edges (dangling) spreads its rank evenly over
// all nodes. `personalization`, when non-empty (size n, non-negative, not all zero), replaces
// the uniform teleport and dangling distribution (personalized PageRank). Empty for n == 0.
std::vector<double> PageRank(std::size_t n,
                             const std::vector<std::pair<std::size_t, std::size_t>>& edges,
                             const PageRankOptions& options = {},
                             const std::vector<double>& personalization = {});

}  // namespace trove::librarian::rank

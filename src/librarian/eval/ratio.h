// Ratios of a system to the baseline with 95 % confidence intervals, and the CI quality floor
// (issue 23: "95 % confidence intervals (bootstrap over queries) for every ratio"; "CI runs a
// small evaluation with a quality floor, so that a ranking regression fails the build").
//
// A ratio is mean(system) / mean(baseline) over the same queries. Its interval is the paired
// percentile bootstrap over queries: `resamples` times, draw n queries with replacement (the
// same draw for both systems), take the ratio of the two means; the 2.5th and 97.5th
// percentiles (nearest rank) of those ratios bound it. Draws whose baseline mean is 0 are
// skipped. The generator is a fixed-seed SplitMix64, so a run's figures are reproducible.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "librarian/eval/runner.h"

namespace trove::librarian::eval {

inline constexpr std::size_t kDefaultResamples = 2000;

struct RatioInterval {
  double ratio = 0;  // of the means over all queries; 0 when the baseline's mean is 0
  double low = 0;
  double high = 0;
  std::size_t n = 0;
  bool defined = false;  // the baseline's mean is above 0
};

// `system` and `baseline` are per-query values in the same query order (same size).
RatioInterval PairedRatio(const std::vector<double>& system, const std::vector<double>& baseline,
                          std::size_t resamples = kDefaultResamples, std::uint64_t seed = 1);

// The three ratios the targets name, for `system` against the baseline of `run`.
struct RatioFigures {
  std::string system;
  RatioInterval function_mrr;
  RatioInterval file_ndcg;
  RatioInterval file_mrr;
};
// One entry per non-baseline system; empty when the run has no baseline.
std::vector<RatioFigures> Ratios(const EvalRun& run);
// "ratios to the baseline (95 % paired bootstrap over N queries):\n  librarian: function MRR
// 1.41x [1.30, 1.52], ..." lines.
std::string FormatRatios(const std::vector<RatioFigures>& ratios);

// A floor: "<metric>=<min ratio>" with metric function_mrr, file_ndcg or file_mrr.
struct Floor {
  std::string metric;
  double min_ratio = 0;
};
Result<Floor> ParseFloor(std::string_view text);
// kInternal naming the metric, the ratio and the floor when any system's ratio of the
// means is below a floor (or undefined). The interval is reported, the point ratio decides.
Status CheckFloors(const std::vector<RatioFigures>& ratios, const std::vector<Floor>& floors);

}  // namespace trove::librarian::eval

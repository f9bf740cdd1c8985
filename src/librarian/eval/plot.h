// The figures of an evaluation run per repository, as JSON and as an SVG plot (issue 24:
// `librarian_eval run ... --figures FILE.json --svg FILE.svg`, `librarian_eval plot`).
//
// For every repository of the run (and "all" over every query), for each system and level:
// the mean MRR and nDCG@10 over the repository's queries with a 95 % confidence interval (the
// normal approximation, mean ± 1.96·s/√n, clamped to [0, 1]), and the ratio of each system's
// mean MRR to the baseline's. The SVG draws one panel per metric (file-level MRR, nDCG@10)
// with a bar per system and repository and the interval as a whisker, and a third panel with
// the ratio against the baseline and a line at 1. Repository and system names come from the
// evaluation set and are escaped (base/markup.h); the document is well-formed XML.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "librarian/eval/eval_set.h"
#include "librarian/eval/runner.h"

namespace trove::librarian::eval {

struct Interval {
  double mean = 0;
  double low = 0;  // 95 % interval, clamped to [0, 1]
  double high = 0;
  std::size_t n = 0;  // queries
};

struct SystemFigures {
  std::string system;
  Interval mrr;   // file level
  Interval ndcg;  // file level, nDCG@10
  Interval function_mrr;
  std::optional<double> mrr_ratio;  // mean MRR / the baseline's; none without a baseline or at 0
};

struct RepoFigures {
  std::string repo;                    // "all" for every query
  std::vector<SystemFigures> systems;  // in run order
};

// Returns the interval of `values` (each in [0, 1]).
Interval MeanInterval(const std::vector<double>& values);

// Groups the run's per-query rows by the repository of their query (from `set`).
std::vector<RepoFigures> PerRepoFigures(const EvalRun& run, const EvalSet& set);

// {"repos": [{"repo", "systems": [{"system", "mrr": {"mean","low","high","n"}, "ndcg": ...,
// "function_mrr": ..., "mrr_ratio"}]}]}, pretty-printed.
std::string FiguresJson(const std::vector<RepoFigures>& figures);
// The inverse of FiguresJson; kInvalidArgument naming the JSON path of a bad field.
Result<std::vector<RepoFigures>> ParseFiguresJson(std::string_view text);

// Returns the SVG document. `title` is shown on top.
std::string RenderSvg(const std::vector<RepoFigures>& figures, std::string_view title);

}  // namespace trove::librarian::eval

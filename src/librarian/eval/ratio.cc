#include "librarian/eval/ratio.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace trove::librarian::eval {
namespace {

std::uint64_t SplitMix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double NearestRank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

std::vector<double> Values(const Report& r) {
  std::vector<double> v;
  v.reserve(r.rows.size());
  for (const QueryRow& row : r.rows) v.push_back(row.metrics.reciprocal_rank);
  return v;
}

std::vector<double> Ndcg(const Report& r) {
  std::vector<double> v;
  v.reserve(r.rows.size());
  for (const QueryRow& row : r.rows) v.push_back(row.metrics.ndcg_at_10);
  return v;
}

}  // namespace

RatioInterval PairedRatio(const std::vector<double>& system, const std::vector<double>& baseline,
                          std::size_t resamples, std::uint64_t seed) {
  RatioInterval out;
  const std::size_t n = std::min(system.size(), baseline.size());
  out.n = n;
  if (n == 0) return out;
  double s = 0, b = 0;
  for (std::size_t i = 0; i < n; ++i) {
    s += system[i];
    b += baseline[i];
  }
  if (b <= 0) return out;
  out.defined = true;
  out.ratio = s / b;
  std::vector<double> ratios;
  ratios.reserve(resamples);
  std::uint64_t state = seed;
  for (std::size_t r = 0; r < resamples; ++r) {
    double rs = 0, rb = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t k = static_cast<std::size_t>(SplitMix64(state) % n);
      rs += system[k];
      rb += baseline[k];
    }
    if (rb > 0) ratios.push_back(rs / rb);
  }
  std::sort(ratios.begin(), ratios.end());
  out.low = NearestRank(ratios, 0.025);
  out.high = NearestRank(ratios, 0.975);
  return out;
}

std::vector<RatioFigures> Ratios(const EvalRun& run) {
  std::vector<RatioFigures> out;
  const SystemResult* base = nullptr;
  for (const SystemResult& s : run.systems) {
    if (s.name == kBaseline) base = &s;
  }
  if (base == nullptr) return out;
  for (const SystemResult& s : run.systems) {
    if (&s == base) continue;
    out.push_back(
        {.system = s.name,
         .function_mrr = PairedRatio(Values(s.function_level), Values(base->function_level)),
         .file_ndcg = PairedRatio(Ndcg(s.file_level), Ndcg(base->file_level)),
         .file_mrr = PairedRatio(Values(s.file_level), Values(base->file_level))});
  }
  return out;
}

std::string FormatRatios(const std::vector<RatioFigures>& ratios) {
  std::string out;
  for (const RatioFigures& r : ratios) {
    auto one = [](std::string_view what, const RatioInterval& i) {
      if (!i.defined) return fmt::format("{} undefined (baseline 0)", what);
      return fmt::format("{} {:.3f}x [{:.3f}, {:.3f}]", what, i.ratio, i.low, i.high);
    };
    out += fmt::format(
        "ratio to baseline, {} (95 % paired bootstrap CI over {} queries): {}; {}; {}\n", r.system,
        r.function_mrr.n, one("function MRR", r.function_mrr), one("file nDCG@10", r.file_ndcg),
        one("file MRR", r.file_mrr));
  }
  return out;
}

Result<Floor> ParseFloor(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument(fmt::format("--floor: expected METRIC=RATIO, got '{}'", text));
  }
  Floor f;
  f.metric = std::string(text.substr(0, eq));
  if (f.metric != "function_mrr" && f.metric != "file_ndcg" && f.metric != "file_mrr") {
    return Status::InvalidArgument(fmt::format(
        "--floor: metric must be function_mrr, file_ndcg or file_mrr, got '{}'", f.metric));
  }
  const std::string value(text.substr(eq + 1));
  char* end = nullptr;
  f.min_ratio = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(f.min_ratio > 0) || !std::isfinite(f.min_ratio)) {
    return Status::InvalidArgument(fmt::format("--floor: not a positive ratio: '{}'", value));
  }
  return f;
}

Status CheckFloors(const std::vector<RatioFigures>& ratios, const std::vector<Floor>& floors) {
  if (!floors.empty() && ratios.empty()) {
    return Status::Internal("quality floor: the run has no baseline to compare with");
  }
  for (const RatioFigures& r : ratios) {
    for (const Floor& f : floors) {
      const RatioInterval& i = f.metric == "function_mrr" ? r.function_mrr
                               : f.metric == "file_ndcg"  ? r.file_ndcg
                                                          : r.file_mrr;
      if (!i.defined || i.ratio < f.min_ratio) {
        return Status::Internal(fmt::format(
            "quality floor: {} {} ratio to the baseline is {:.3f} (95 % CI {:.3f}-{:.3f}), below "
            "the floor {:.3f}",
            r.system, f.metric, i.ratio, i.low, i.high, f.min_ratio));
      }
    }
  }
  return Status::Ok();
}

}  // namespace trove::librarian::eval

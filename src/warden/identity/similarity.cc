#include "warden/identity/similarity.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace trove::warden::identity {

double MinHashAgreement(const MinHash& a, const MinHash& b) {
  std::size_t equal = 0;
  for (std::size_t i = 0; i < kMinHashSize; ++i) equal += a[i] == b[i] ? 1 : 0;
  return static_cast<double>(equal) / static_cast<double>(kMinHashSize);
}

double HistogramCosine(const Histogram& a, const Histogram& b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < kOpClassCount; ++i) {
    const auto x = static_cast<double>(a[i]);
    const auto y = static_cast<double>(b[i]);
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  // Decision (docs/warden.md §5.4 is silent): two empty bodies are alike; an empty and a non-empty
  // are not.
  if (na == 0 && nb == 0) return 1;
  if (na == 0 || nb == 0) return 0;
  return dot / (std::sqrt(na) * std::sqrt(nb));
}

double SortedJaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  if (a.empty() && b.empty()) return 1;
  // std::set_intersection's walk, counting instead of copying the common strings.
  std::size_t common = 0;
  for (auto i = a.begin(), j = b.begin(); i != a.end() && j != b.end();) {
    if (*i < *j) {
      ++i;
    } else if (*j < *i) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  const std::size_t uni = a.size() + b.size() - common;
  return static_cast<double>(common) / static_cast<double>(uni);
}

Similarity Compare(const FunctionIdentity& a, const FunctionIdentity& b) {
  auto view = [](const FunctionIdentity& f) {
    return CompareView{.exact = &f.exact,
                       .base = &f.base,
                       .structural = &f.structural,
                       .type_signature = f.type_signature,
                       .instruction_count = f.instruction_count,
                       .minhash = &f.minhash,
                       .histogram = &f.histogram,
                       .call_outs = &f.call_outs};
  };
  return Compare(view(a), view(b));
}

Similarity Compare(const CompareView& a, const CompareView& b) {
  Similarity s;
  s.exact_equal = *a.exact == *b.exact;
  s.base_equal = *a.base == *b.base;
  s.signature_gate = a.type_signature == b.type_signature;
  // Decision: the ratio is taken as larger / smaller; two empty bodies pass, one empty body
  // against a non-empty one fails.
  const std::uint32_t lo = std::min(a.instruction_count, b.instruction_count);
  const std::uint32_t hi = std::max(a.instruction_count, b.instruction_count);
  s.count_gate = hi == 0 || (lo != 0 && static_cast<double>(hi) / lo <= kMaxCountRatio &&
                             static_cast<double>(lo) / hi >= kMinCountRatio);
  s.minhash = MinHashAgreement(*a.minhash, *b.minhash);
  s.histogram_cosine = HistogramCosine(*a.histogram, *b.histogram);
  s.call_out_jaccard = SortedJaccard(*a.call_outs, *b.call_outs);
  s.structural = *a.structural == *b.structural ? 1 : 0;
  if (s.exact_equal) {
    s.overall = kExactScore;
  } else if (s.base_equal) {
    s.overall = kBaseScore;
  } else if (!s.signature_gate || !s.count_gate) {
    s.overall = 0;
  } else {
    s.overall = kWeightMinHash * s.minhash + kWeightHistogram * s.histogram_cosine +
                kWeightCallOuts * s.call_out_jaccard + kWeightStructural * s.structural;
  }
  return s;
}

bool AcceptFuzzy(double overall, std::uint32_t n, MatchPurpose purpose) {
  const bool oracle = purpose == MatchPurpose::kOracle;
  if (n < 10) return false;
  if (n < 20) return !oracle && overall >= 0.90;
  if (n < 100) return overall >= (oracle ? 0.92 : 0.80);
  return overall >= (oracle ? 0.85 : 0.75);
}

}  // namespace trove::warden::identity

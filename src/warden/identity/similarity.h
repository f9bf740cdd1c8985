// Similarity of two fingerprinted functions (docs/warden.md §5.4): one function serves both
// the Oracle (target vs corpus) and the diff engine (old vs new), and every component of the
// score is exposed so that a match can be explained in evidence.
// Thread safety: pure functions; safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warden/identity/identity.h"

namespace trove::warden::identity {

// Weights of the fuzzy score (§5.4).
inline constexpr double kWeightMinHash = 0.45;
inline constexpr double kWeightHistogram = 0.25;
inline constexpr double kWeightCallOuts = 0.20;
inline constexpr double kWeightStructural = 0.10;
// Scores of the two shortcuts (§5.4).
inline constexpr double kExactScore = 1.00;
inline constexpr double kBaseScore = 0.99;
// Hard gate on the instruction-count ratio (§5.4).
inline constexpr double kMinCountRatio = 0.5;
inline constexpr double kMaxCountRatio = 2.0;

struct Similarity {
  double overall = 0;
  bool exact_equal = false;     // exact hashes equal: overall 1.00
  bool base_equal = false;      // stable_id bases equal: overall 0.99
  bool signature_gate = true;   // type signatures equal
  bool count_gate = true;       // instruction-count ratio within [0.5, 2.0]
  double minhash = 0;           // J: share of equal MinHash values
  double histogram_cosine = 0;  // C
  double call_out_jaccard = 0;  // K: 1 when both sets are empty
  double structural = 0;        // S: 1 if structural hashes are equal
};

// Returns the similarity of `a` and `b`. The components are always computed, also when a
// shortcut or a gate decides `overall`.
Similarity Compare(const FunctionIdentity& a, const FunctionIdentity& b);

// The fields Compare reads, by reference, for a caller that holds them outside a
// FunctionIdentity (the diff engine reads them from stored records and keeps no identity
// copies). Compare on two views gives exactly what Compare on the identities gives.
// REQUIRES: every pointer is non-null and outlives the call.
struct CompareView {
  const base::Sha256Digest* exact = nullptr;
  const Hash128* base = nullptr;
  const Hash128* structural = nullptr;
  std::string_view type_signature;
  std::uint32_t instruction_count = 0;
  const MinHash* minhash = nullptr;
  const Histogram* histogram = nullptr;
  const std::vector<std::string>* call_outs = nullptr;  // sorted, duplicate-free
};
Similarity Compare(const CompareView& a, const CompareView& b);

// Returns the share of positions at which the two MinHash signatures agree.
double MinHashAgreement(const MinHash& a, const MinHash& b);
// Returns the cosine of two histograms: 1 when both are empty, 0 when only one is.
double HistogramCosine(const Histogram& a, const Histogram& b);
// Returns the Jaccard index of two sorted, duplicate-free sets: 1 when both are empty.
double SortedJaccard(const std::vector<std::string>& a, const std::vector<std::string>& b);

enum class MatchPurpose : std::uint8_t { kOracle, kDiff };

// Returns whether a fuzzy match with this similarity is accepted for `purpose`, by n, the
// smaller instruction count of the pair (§5.4): n < 10 never; 10-19 never for the Oracle,
// >= 0.90 for diff; 20-99 >= 0.92 (Oracle), >= 0.80 (diff); >= 100 >= 0.85 (Oracle), >= 0.75
// (diff).
bool AcceptFuzzy(double overall, std::uint32_t n, MatchPurpose purpose);

}  // namespace trove::warden::identity

#include "warden/identity/similarity.h"

#include <gtest/gtest.h>

namespace trove::warden::identity {
namespace {

FunctionIdentity Sample() {
  FunctionIdentity f;
  f.type_signature = "(i32) -> i32";
  f.instruction_count = 40;
  f.base.fill(1);
  f.exact.fill(2);
  f.structural.fill(3);
  f.histogram[0] = 4;
  f.histogram[5] = 3;
  f.call_outs = {"env.a", "env.b"};
  for (std::size_t i = 0; i < kMinHashSize; ++i) f.minhash[i] = i;
  return f;
}

TEST(SimilarityTest, ExactAndBaseShortcuts) {
  const FunctionIdentity a = Sample();
  FunctionIdentity b = Sample();
  EXPECT_DOUBLE_EQ(Compare(a, b).overall, 1.0);
  b.exact.fill(9);
  const Similarity s = Compare(a, b);
  EXPECT_FALSE(s.exact_equal);
  EXPECT_TRUE(s.base_equal);
  EXPECT_DOUBLE_EQ(s.overall, 0.99);
}

TEST(SimilarityTest, GatesAndWeightedScore) {
  const FunctionIdentity a = Sample();
  FunctionIdentity b = Sample();
  b.exact.fill(9);
  b.base.fill(8);
  // All components equal: 0.45 + 0.25 + 0.20 + 0.10.
  EXPECT_NEAR(Compare(a, b).overall, 1.0, 1e-12);

  for (std::size_t i = 0; i < kMinHashSize / 2; ++i) b.minhash[i] = 1000 + i;  // J = 0.5
  b.call_outs = {"env.b", "env.c"};                                            // K = 1/3
  b.structural.fill(7);                                                        // S = 0
  b.histogram = {};
  b.histogram[0] = 4;  // C = 4 / 5
  const Similarity s = Compare(a, b);
  EXPECT_DOUBLE_EQ(s.minhash, 0.5);
  EXPECT_NEAR(s.call_out_jaccard, 1.0 / 3, 1e-12);
  EXPECT_NEAR(s.histogram_cosine, 0.8, 1e-12);
  EXPECT_EQ(s.structural, 0);
  EXPECT_NEAR(s.overall, 0.45 * 0.5 + 0.25 * 0.8 + 0.20 / 3, 1e-12);

  FunctionIdentity c = b;
  c.type_signature = "(i64) -> i32";
  EXPECT_FALSE(Compare(a, c).signature_gate);
  EXPECT_EQ(Compare(a, c).overall, 0);
  c = b;
  c.instruction_count = 81;  // ratio above 2
  EXPECT_FALSE(Compare(a, c).count_gate);
  EXPECT_EQ(Compare(a, c).overall, 0);
  c.instruction_count = 80;  // exactly 2 passes
  EXPECT_TRUE(Compare(a, c).count_gate);
  c.instruction_count = 20;  // exactly 0.5 passes
  EXPECT_TRUE(Compare(a, c).count_gate);
  c.instruction_count = 19;
  EXPECT_FALSE(Compare(a, c).count_gate);
}

TEST(SimilarityTest, EmptySets) {
  EXPECT_EQ(SortedJaccard({}, {}), 1);
  EXPECT_EQ(SortedJaccard({"a"}, {}), 0);
  EXPECT_EQ(HistogramCosine({}, {}), 1);
  Histogram h{};
  h[2] = 1;
  EXPECT_EQ(HistogramCosine(h, {}), 0);
}

TEST(SimilarityTest, FuzzyAcceptanceBySize) {
  using P = MatchPurpose;
  EXPECT_FALSE(AcceptFuzzy(1.0, 9, P::kDiff));
  EXPECT_FALSE(AcceptFuzzy(1.0, 9, P::kOracle));
  EXPECT_FALSE(AcceptFuzzy(1.0, 15, P::kOracle));
  EXPECT_TRUE(AcceptFuzzy(0.90, 15, P::kDiff));
  EXPECT_FALSE(AcceptFuzzy(0.89, 15, P::kDiff));
  EXPECT_TRUE(AcceptFuzzy(0.92, 20, P::kOracle));
  EXPECT_FALSE(AcceptFuzzy(0.91, 99, P::kOracle));
  EXPECT_TRUE(AcceptFuzzy(0.80, 99, P::kDiff));
  EXPECT_TRUE(AcceptFuzzy(0.85, 100, P::kOracle));
  EXPECT_FALSE(AcceptFuzzy(0.84, 100, P::kOracle));
  EXPECT_TRUE(AcceptFuzzy(0.75, 1000, P::kDiff));
  EXPECT_FALSE(AcceptFuzzy(0.74, 1000, P::kDiff));
}

}  // namespace
}  // namespace trove::warden::identity

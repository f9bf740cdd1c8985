#include "kodo/diag/near_name.h"

#include <gtest/gtest.h>

namespace trove::kodo::diag {
namespace {

TEST(NearNameTest, LevenshteinCountsEdits) {
  EXPECT_EQ(Levenshtein("", ""), 0u);
  EXPECT_EQ(Levenshtein("kitten", "sitting"), 3u);
  EXPECT_EQ(Levenshtein("abc", ""), 3u);
  EXPECT_EQ(Levenshtein("flaw", "lawn"), 2u);
}

TEST(NearNameTest, TakesTheNearestWithinTheLimitAndTheFirstOnTies) {
  EXPECT_EQ(NearName("lenght", {"length", "width"}), "length");
  // "ab" and "ba" are both at distance 1 from "aa"... the first wins.
  EXPECT_EQ(NearName("aa", {"ab", "ba"}), "ab");
  // An exact match (d = 0) is not a suggestion.
  EXPECT_EQ(NearName("same", {"same"}), std::nullopt);
  // The limit is max(len/2, 3): "x" to "abcd" is 4 edits.
  EXPECT_EQ(NearName("x", {"abcd"}), std::nullopt);
  EXPECT_EQ(NearName("x", {"abc"}), "abc");
}

}  // namespace
}  // namespace trove::kodo::diag

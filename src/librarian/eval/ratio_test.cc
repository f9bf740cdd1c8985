#include "librarian/eval/ratio.h"

#include <gtest/gtest.h>

namespace trove::librarian::eval {
namespace {

TEST(PairedRatioTest, RatioOfMeansWithAnIntervalAroundIt) {
  std::vector<double> base, sys;
  for (int i = 0; i < 200; ++i) {
    base.push_back(i % 4 == 0 ? 1.0 : 0.0);               // mean 0.25
    sys.push_back(i % 4 == 0 || i % 4 == 1 ? 1.0 : 0.0);  // mean 0.5
  }
  RatioInterval r = PairedRatio(sys, base);
  ASSERT_TRUE(r.defined);
  EXPECT_DOUBLE_EQ(r.ratio, 2.0);
  EXPECT_EQ(r.n, 200u);
  EXPECT_LT(r.low, 2.0);
  EXPECT_GT(r.high, 2.0);
  EXPECT_GT(r.low, 1.0);  // a clear difference over 200 queries
  // Deterministic: the same seed gives the same interval.
  RatioInterval again = PairedRatio(sys, base);
  EXPECT_EQ(r.low, again.low);
  EXPECT_EQ(r.high, again.high);
  // Identical systems: every resample's ratio is 1.
  RatioInterval same = PairedRatio(base, base);
  EXPECT_DOUBLE_EQ(same.low, 1.0);
  EXPECT_DOUBLE_EQ(same.high, 1.0);
}

TEST(PairedRatioTest, UndefinedWithoutABaselineSignal) {
  EXPECT_FALSE(PairedRatio({1, 1}, {0, 0}).defined);
  EXPECT_FALSE(PairedRatio({}, {}).defined);
}

TEST(FloorTest, ParsesAndChecks) {
  EXPECT_FALSE(ParseFloor("function_mrr").ok());
  EXPECT_FALSE(ParseFloor("speed=2").ok());
  EXPECT_FALSE(ParseFloor("file_ndcg=-1").ok());
  EXPECT_FALSE(ParseFloor("file_ndcg=x").ok());
  Result<Floor> f = ParseFloor("function_mrr=1.2");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->metric, "function_mrr");
  EXPECT_DOUBLE_EQ(f->min_ratio, 1.2);

  RatioFigures r;
  r.system = "librarian";
  r.function_mrr = PairedRatio({0.5, 0.5}, {0.4, 0.4});  // 1.25
  r.file_ndcg = PairedRatio({0.5, 0.5}, {0.5, 0.5});     // 1.0
  r.file_mrr = r.file_ndcg;
  EXPECT_TRUE(CheckFloors({r}, {*f}).ok());
  Status below = CheckFloors({r}, {*f, Floor{"file_ndcg", 1.05}});
  EXPECT_FALSE(below.ok());
  EXPECT_NE(below.message().find("file_ndcg"), std::string::npos);
  EXPECT_FALSE(CheckFloors({}, {*f}).ok());  // no baseline in the run
}

}  // namespace
}  // namespace trove::librarian::eval

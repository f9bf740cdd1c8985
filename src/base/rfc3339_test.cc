#include "base/rfc3339.h"

#include <gtest/gtest.h>

#include <regex>

namespace trove::base {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

TEST(Rfc3339Test, FormatsUtcWithMilliseconds) {
  EXPECT_EQ(FormatRfc3339(system_clock::time_point(milliseconds(0))), "1970-01-01T00:00:00.000Z");
  // 2026-11-26T21:12:37.123Z
  EXPECT_EQ(FormatRfc3339(system_clock::time_point(milliseconds(1795727557123))),
            "2026-11-26T21:12:37.123Z");
  // A leap day, and milliseconds with leading zeros.
  EXPECT_EQ(FormatRfc3339(system_clock::time_point(milliseconds(951782400007))),
            "2000-02-29T00:00:00.007Z");
}

TEST(Rfc3339Test, TimesBeforeTheEpochKeepPositiveMilliseconds) {
  EXPECT_EQ(FormatRfc3339(system_clock::time_point(milliseconds(-1))), "1969-12-31T23:59:59.999Z");
}

TEST(Rfc3339Test, NowHasTheShape) {
  EXPECT_TRUE(
      std::regex_match(NowRfc3339(), std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)")));
}

}  // namespace
}  // namespace trove::base

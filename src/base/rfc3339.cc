#include "base/rfc3339.h"

#include <fmt/core.h>

#include <ctime>

namespace trove::base {

std::string FormatRfc3339(std::chrono::system_clock::time_point tp) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  const auto since_epoch = duration_cast<milliseconds>(tp.time_since_epoch()).count();
  // Floor division, so a time before 1970 keeps its milliseconds in [0, 999].
  std::int64_t secs = since_epoch / 1000;
  std::int64_t millis = since_epoch % 1000;
  if (millis < 0) {
    millis += 1000;
    secs -= 1;
  }
  const std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
}

std::string NowRfc3339() { return FormatRfc3339(std::chrono::system_clock::now()); }

}  // namespace trove::base

// RFC 3339 timestamps in UTC with milliseconds ("2026-11-26T21:12:37.123Z"): the one format
// Trove writes into answers, stores and logs (run times, verification times, audit reports,
// error objects).
//
// Thread safety: pure functions (gmtime_r).
#pragma once

#include <chrono>
#include <string>

namespace trove::base {

// Formats `tp` as "YYYY-MM-DDTHH:MM:SS.mmmZ" (UTC, milliseconds truncated).
std::string FormatRfc3339(std::chrono::system_clock::time_point tp);

// FormatRfc3339 of the current time.
std::string NowRfc3339();

}  // namespace trove::base

// Logging to stderr. stdout is never written here: on stdio it carries protocol only.
//
// The level threshold is passed in by `main` (no mutable globals): a Logger is a small value
// that components hold by reference. Thread safety: Log may be called from any thread; each
// record is written with one write(2).
#pragma once

#include <fmt/core.h>

#include <atomic>
#include <string_view>

namespace trove::base {

enum class LogLevel { kDebug = 0, kInfo, kWarning, kError, kOff };

class Logger {
 public:
  explicit Logger(LogLevel level = LogLevel::kWarning, int fd = 2) : level_(level), fd_(fd) {}

  void set_level(LogLevel level) { level_.store(level, std::memory_order_relaxed); }
  LogLevel level() const { return level_.load(std::memory_order_relaxed); }
  bool enabled(LogLevel level) const { return level >= this->level(); }

  // Writes "trove: <level>: <message>\n" to the descriptor when `level` passes the threshold.
  void Log(LogLevel level, std::string_view message) const;

  template <typename... Args>
  void Logf(LogLevel level, fmt::format_string<Args...> format, Args&&... args) const {
    if (!enabled(level)) return;
    Log(level, fmt::format(format, std::forward<Args>(args)...));
  }

 private:
  std::atomic<LogLevel> level_;
  int fd_;
};

// Parses "debug", "info", "warning", "error", "off"; returns `fallback` for anything else.
LogLevel ParseLogLevel(std::string_view name, LogLevel fallback);

}  // namespace trove::base

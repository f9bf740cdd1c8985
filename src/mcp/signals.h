// Orderly shutdown on SIGTERM and SIGINT, shared by the transports.
//
// `main` calls BlockShutdownSignals() before any thread starts, so every thread inherits the
// mask; a ShutdownSignalWatcher then receives the signals with sigwait on a thread of its own
// and runs its callback there, outside any signal handler, where it may lock and wait.
// Thread safety: construct and destroy on one thread; the callback runs on the watcher's.
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace trove::mcp {

// Blocks SIGTERM, SIGINT and SIGPIPE in the calling thread (and threads created after it).
void BlockShutdownSignals();

class ShutdownSignalWatcher {
 public:
  // Starts watching when SIGTERM and SIGINT are blocked in this thread; otherwise does
  // nothing (the default dispositions stay in force). `on_signal` runs at most once.
  explicit ShutdownSignalWatcher(std::function<void()> on_signal);
  // Stops watching without running the callback (unless a signal already arrived).
  ~ShutdownSignalWatcher();
  ShutdownSignalWatcher(const ShutdownSignalWatcher&) = delete;
  ShutdownSignalWatcher& operator=(const ShutdownSignalWatcher&) = delete;

 private:
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace trove::mcp

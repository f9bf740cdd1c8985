// Cancellation: a cooperative cancellation flag shared by a caller and the work it started,
// plus Progress, a reporter an engine calls between units of work.
//
// Engines poll `requested()` at safe points and return Status::Cancelled; a binding (e.g. the
// MCP core) sets it. Callbacks registered with OnCancel run once, on the thread that cancels
// (or at once, on the registering thread, when already cancelled); use them to interrupt a
// blocking wait such as a solver.
// Thread safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace trove::base {

class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  // Sets the flag and runs the registered callbacks; later calls do nothing.
  void Cancel();
  bool requested() const { return flag_.load(std::memory_order_acquire); }

  // Registers `fn` to run on cancellation; runs it now if already cancelled.
  void OnCancel(std::function<void()> fn);

 private:
  std::atomic<bool> flag_{false};
  std::mutex mu_;
  std::vector<std::function<void()>> callbacks_;
};

// Progress: reports (done, total) from an engine. A default-constructed Progress is a no-op.
class Progress {
 public:
  using Sink = std::function<void(double done, double total, const std::string& message)>;
  Progress() = default;
  explicit Progress(Sink sink) : sink_(std::move(sink)) {}

  // total <= 0 means unknown.
  void Report(double done, double total = 0, const std::string& message = {}) const {
    if (sink_) sink_(done, total, message);
  }
  bool active() const { return static_cast<bool>(sink_); }

 private:
  Sink sink_;
};

}  // namespace trove::base

// ThreadPool: a fixed set of worker threads running submitted tasks in FIFO order.
//
// `workers == 0` runs every task inline on the submitting thread, for deterministic tests
// (clangd's ClangdServer::Options has the same switch).
// Thread safety: Submit may be called from any thread, including from inside a task.
// The destructor drains the queue and joins the workers.
//
// ParallelChunks: runs a loop body over [0, n) on a few short-lived threads, for one-off
// parallel loops that need no pool.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace trove::base {

class ThreadPool {
 public:
  explicit ThreadPool(std::size_t workers);
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool();

  // Runs `task` on a worker, or now when the pool is inline.
  void Submit(std::function<void()> task);
  // Blocks until the queue is empty and no task runs.
  void Wait();

  std::size_t workers() const { return threads_.size(); }
  bool inline_mode() const { return threads_.empty(); }

  // Returns the default worker count: hardware threads, at least 2.
  static std::size_t DefaultWorkers();

 private:
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> queue_;
  std::size_t running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

// Calls `body(begin, end)` on consecutive chunks of [0, n) of `grain` items each (the last
// may be shorter), on `threads` threads (the calling one included; at most one per chunk).
// Free threads take the next chunk in order, so a thread slowed by the rest of the machine
// holds up at most one chunk. Returns when every chunk is done. `body` must be safe to call
// concurrently on disjoint ranges. With threads <= 1 it runs inline, in order.
template <typename Body>
void ParallelChunks(std::size_t n, std::size_t threads, std::size_t grain, const Body& body) {
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t chunks = (n + grain - 1) / grain;
  threads = std::min(std::max<std::size_t>(threads, 1), std::max<std::size_t>(chunks, 1));
  std::atomic<std::size_t> next{0};
  auto run = [&] {
    for (std::size_t c = next.fetch_add(1, std::memory_order_relaxed); c < chunks;
         c = next.fetch_add(1, std::memory_order_relaxed)) {
      body(c * grain, std::min(n, (c + 1) * grain));
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(run);
  run();
  for (std::thread& w : workers) w.join();
}

}  // namespace trove::base

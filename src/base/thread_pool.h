// ThreadPool: a fixed set of worker threads running submitted tasks in FIFO order.
//
// `workers == 0` runs every task inline on the submitting thread, for deterministic tests
// (clangd's ClangdServer::Options has the same switch).
// Thread safety: Submit may be called from any thread, including from inside a task.
// The destructor drains the queue and joins the workers.
#pragma once

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

}  // namespace trove::base

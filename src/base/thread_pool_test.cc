#include "base/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace trove::base {
namespace {

TEST(ThreadPoolTest, InlineModeRunsOnTheCallingThread) {
  ThreadPool pool(0);
  EXPECT_TRUE(pool.inline_mode());
  EXPECT_EQ(pool.workers(), 0u);
  std::thread::id ran_on;
  int runs = 0;
  pool.Submit([&] {
    ran_on = std::this_thread::get_id();
    ++runs;
  });
  // Inline: done before Submit returns.
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  pool.Wait();
}

TEST(ThreadPoolTest, InlineModeRunsNestedSubmitsInOrder) {
  ThreadPool pool(0);
  std::vector<int> order;
  pool.Submit([&] {
    order.push_back(1);
    pool.Submit([&] { order.push_back(2); });
    order.push_back(3);
  });
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(ThreadPoolTest, RunsEveryTaskOnWorkers) {
  ThreadPool pool(4);
  EXPECT_FALSE(pool.inline_mode());
  EXPECT_EQ(pool.workers(), 4u);
  std::atomic<int> count{0};
  std::atomic<int> on_caller{0};
  const auto caller = std::this_thread::get_id();
  for (int i = 0; i < 1000; ++i) {
    pool.Submit([&] {
      if (std::this_thread::get_id() == caller) ++on_caller;
      ++count;
    });
  }
  pool.Wait();
  EXPECT_EQ(count.load(), 1000);
  EXPECT_EQ(on_caller.load(), 0);
}

TEST(ThreadPoolTest, OneWorkerRunsInFifoOrder) {
  ThreadPool pool(1);
  std::vector<int> order;  // only the one worker writes; read after Wait
  for (int i = 0; i < 100; ++i) pool.Submit([&order, i] { order.push_back(i); });
  pool.Wait();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(ThreadPoolTest, WaitCoversTasksSubmittedFromTasks) {
  ThreadPool pool(2);
  std::atomic<int> count{0};
  for (int i = 0; i < 10; ++i) {
    pool.Submit([&] {
      for (int j = 0; j < 10; ++j) {
        pool.Submit([&] {
          pool.Submit([&] { ++count; });
          ++count;
        });
      }
      ++count;
    });
  }
  pool.Wait();
  EXPECT_EQ(count.load(), 10 + 100 + 100);
}

TEST(ThreadPoolTest, WaitWithNothingSubmittedReturns) {
  ThreadPool pool(2);
  pool.Wait();
  pool.Wait();
}

TEST(ThreadPoolTest, UsableAgainAfterWait) {
  ThreadPool pool(2);
  std::atomic<int> count{0};
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < 50; ++i) pool.Submit([&] { ++count; });
    pool.Wait();
    EXPECT_EQ(count.load(), round * 50);
  }
}

TEST(ThreadPoolTest, DestructorDrainsTheQueue) {
  std::atomic<int> count{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  {
    ThreadPool pool(1);
    pool.Submit([&, released] {
      released.wait();
      ++count;
    });
    for (int i = 0; i < 100; ++i) pool.Submit([&] { ++count; });
    release.set_value();
  }  // the destructor runs what is still queued before joining
  EXPECT_EQ(count.load(), 101);
}

TEST(ThreadPoolTest, SubmitFromManyThreads) {
  ThreadPool pool(3);
  std::atomic<int> count{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 4; ++t) {
    submitters.emplace_back([&] {
      for (int i = 0; i < 250; ++i) pool.Submit([&] { ++count; });
    });
  }
  for (auto& t : submitters) t.join();
  pool.Wait();
  EXPECT_EQ(count.load(), 1000);
}

TEST(ThreadPoolTest, TasksRunConcurrently) {
  // Two tasks that each wait for the other can only finish on two workers at once.
  ThreadPool pool(2);
  std::promise<void> a_started;
  std::promise<void> b_started;
  std::shared_future<void> a = a_started.get_future().share();
  std::shared_future<void> b = b_started.get_future().share();
  std::atomic<int> done{0};
  pool.Submit([&, b] {
    a_started.set_value();
    b.wait();
    ++done;
  });
  pool.Submit([&, a] {
    b_started.set_value();
    a.wait();
    ++done;
  });
  pool.Wait();
  EXPECT_EQ(done.load(), 2);
}

TEST(ThreadPoolTest, DefaultWorkersIsAtLeastTwo) { EXPECT_GE(ThreadPool::DefaultWorkers(), 2u); }

TEST(ParallelChunksTest, CoversEveryIndexOnce) {
  for (std::size_t threads : {1u, 2u, 3u, 8u}) {
    for (std::size_t n : {0u, 1u, 7u, 100u, 1001u}) {
      for (std::size_t grain : {0u, 1u, 10u, 5000u}) {
        std::vector<std::atomic<int>> seen(n);
        std::atomic<std::size_t> calls{0};
        ParallelChunks(n, threads, grain, [&](std::size_t begin, std::size_t end) {
          ASSERT_LT(begin, end);
          ASSERT_LE(end, n);
          ASSERT_LE(end - begin, std::max<std::size_t>(grain, 1));
          ++calls;
          for (std::size_t i = begin; i < end; ++i) ++seen[i];
        });
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(seen[i].load(), 1)
              << "index " << i << " of " << n << ", " << threads << " threads, grain " << grain;
        }
        const std::size_t g = std::max<std::size_t>(grain, 1);
        EXPECT_EQ(calls.load(), (n + g - 1) / g);
      }
    }
  }
}

TEST(ParallelChunksTest, OneThreadRunsInOrderOnTheCaller) {
  std::vector<std::size_t> begins;
  const std::thread::id caller = std::this_thread::get_id();
  ParallelChunks(10, 1, 3, [&](std::size_t begin, std::size_t /*end*/) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    begins.push_back(begin);
  });
  EXPECT_EQ(begins, (std::vector<std::size_t>{0, 3, 6, 9}));
}

}  // namespace
}  // namespace trove::base

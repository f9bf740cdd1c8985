#include "base/cancellation.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace trove::base {
namespace {

TEST(CancellationTest, StartsNotRequested) {
  Cancellation cancel;
  EXPECT_FALSE(cancel.requested());
}

TEST(CancellationTest, CancelSetsTheFlag) {
  Cancellation cancel;
  cancel.Cancel();
  EXPECT_TRUE(cancel.requested());
  cancel.Cancel();
  EXPECT_TRUE(cancel.requested());
}

TEST(CancellationTest, CallbacksRunOnceInRegistrationOrder) {
  Cancellation cancel;
  std::vector<int> order;
  cancel.OnCancel([&] { order.push_back(1); });
  cancel.OnCancel([&] { order.push_back(2); });
  EXPECT_TRUE(order.empty());
  cancel.Cancel();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  cancel.Cancel();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(CancellationTest, CallbackRunsOnTheCancellingThread) {
  Cancellation cancel;
  std::thread::id ran_on;
  cancel.OnCancel([&] { ran_on = std::this_thread::get_id(); });
  std::thread::id canceller;
  std::thread t([&] {
    canceller = std::this_thread::get_id();
    cancel.Cancel();
  });
  t.join();
  EXPECT_EQ(ran_on, canceller);
}

TEST(CancellationTest, CallbackSeesTheFlagSet) {
  Cancellation cancel;
  bool seen = false;
  cancel.OnCancel([&] { seen = cancel.requested(); });
  cancel.Cancel();
  EXPECT_TRUE(seen);
}

TEST(CancellationTest, OnCancelAfterCancelRunsAtOnce) {
  Cancellation cancel;
  cancel.Cancel();
  int runs = 0;
  cancel.OnCancel([&] { ++runs; });
  EXPECT_EQ(runs, 1);
  cancel.Cancel();
  EXPECT_EQ(runs, 1);
}

TEST(CancellationTest, CallbackMayRegisterAndCancelAgain) {
  // Callbacks run outside the lock, so re-entering must not deadlock.
  Cancellation cancel;
  int inner_runs = 0;
  cancel.OnCancel([&] {
    cancel.Cancel();
    cancel.OnCancel([&] { ++inner_runs; });
  });
  cancel.Cancel();
  EXPECT_EQ(inner_runs, 1);
}

TEST(CancellationTest, ConcurrentCancelRunsEachCallbackOnce) {
  for (int round = 0; round < 50; ++round) {
    Cancellation cancel;
    std::atomic<int> runs{0};
    for (int i = 0; i < 8; ++i) cancel.OnCancel([&] { ++runs; });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) threads.emplace_back([&] { cancel.Cancel(); });
    for (auto& t : threads) t.join();
    EXPECT_EQ(runs.load(), 8);
  }
}

TEST(CancellationTest, RegistrationRacingCancelRunsEveryCallbackOnce) {
  for (int round = 0; round < 50; ++round) {
    Cancellation cancel;
    std::atomic<int> runs{0};
    std::thread registrar([&] {
      for (int i = 0; i < 100; ++i) cancel.OnCancel([&] { ++runs; });
    });
    std::thread canceller([&] { cancel.Cancel(); });
    registrar.join();
    canceller.join();
    EXPECT_EQ(runs.load(), 100);
  }
}

TEST(CancellationTest, PollingWorkerStops) {
  Cancellation cancel;
  std::atomic<bool> stopped{false};
  std::thread worker([&] {
    while (!cancel.requested()) std::this_thread::yield();
    stopped = true;
  });
  cancel.Cancel();
  worker.join();
  EXPECT_TRUE(stopped.load());
}

TEST(ProgressTest, DefaultIsInactiveNoOp) {
  Progress progress;
  EXPECT_FALSE(progress.active());
  progress.Report(1, 2, "ignored");
}

TEST(ProgressTest, ReportsToTheSink) {
  struct Call {
    double done;
    double total;
    std::string message;
  };
  std::vector<Call> calls;
  Progress progress([&](double done, double total, const std::string& message) {
    calls.push_back({done, total, message});
  });
  EXPECT_TRUE(progress.active());
  progress.Report(1, 10, "first");
  progress.Report(2);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].done, 1);
  EXPECT_EQ(calls[0].total, 10);
  EXPECT_EQ(calls[0].message, "first");
  EXPECT_EQ(calls[1].done, 2);
  EXPECT_EQ(calls[1].total, 0);  // unknown
  EXPECT_EQ(calls[1].message, "");
}

}  // namespace
}  // namespace trove::base

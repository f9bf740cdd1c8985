// The symbol watcher (symbol_watch.h) on the ctest fixture "pg": a write on another connection
// reaches the callback with its stable_id, a version's seeds committed at once come as a few
// coalesced batches, a restart or stop of the server is reported and followed by an
// `everything` batch, and Kb::Healthy notices a server that went away.
#include "warden/kb/pg/symbol_watch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/testing/pg_server.h"
#include "base/testing/temp_dir.h"
#include "warden/kb/kb.h"
#include "warden/kb/testing/kb_test_peer.h"

namespace trove::warden::kb {
namespace {

using base::StatusCode;
using base::testing::PgDatabase;
using base::testing::PgScratchServer;
using testing::MakeFunctions;
using testing::MakeVersion;

// A bound on waits for something that must happen; never reached when the code works.
constexpr auto kPatience = std::chrono::seconds(60);

// Everything a watcher reported, for the test thread to wait on.
class Recorder {
 public:
  SymbolChangeCallback OnChange() {
    return [this](const SymbolChanges& changes) {
      std::lock_guard<std::mutex> lock(mu_);
      batches_.push_back(changes);
      cv_.notify_all();
    };
  }
  WatchOptions Options() {
    WatchOptions options;
    options.on_connection = [this](const Status& status) {
      std::lock_guard<std::mutex> lock(mu_);
      (status.ok() ? listening_ : failures_)++;
      cv_.notify_all();
    };
    return options;
  }

  // Waits until `done` (called under the lock) holds; false after kPatience.
  bool WaitUntil(const std::function<bool()>& done) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kPatience, done);
  }
  bool WaitListening(int times) {
    return WaitUntil([&] { return listening_ >= times; });
  }
  bool WaitFailure() {
    return WaitUntil([&] { return failures_ > 0; });
  }
  // Waits until the ids reported (outside `everything` batches) include every one of `ids`.
  bool WaitIds(const std::set<std::string>& ids) {
    return WaitUntil([&] {
      std::set<std::string> seen;
      for (const SymbolChanges& b : batches_) seen.insert(b.stable_ids.begin(), b.stable_ids.end());
      for (const std::string& id : ids) {
        if (seen.count(id) == 0) return false;
      }
      return true;
    });
  }
  bool WaitEverything() {
    return WaitUntil([&] {
      for (const SymbolChanges& b : batches_) {
        if (b.everything) return true;
      }
      return false;
    });
  }

  std::vector<SymbolChanges> batches() {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  int failures() {
    std::lock_guard<std::mutex> lock(mu_);
    return failures_;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    batches_.clear();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<SymbolChanges> batches_;
  int listening_ = 0;
  int failures_ = 0;
};

class SymbolWatchTest : public ::testing::Test {
 protected:
  std::unique_ptr<Kb> Open(const std::string& url, bool create = false) {
    auto kb = Kb::Open(env_, url, KbOptions{.create_if_missing = create, .project = "proj"});
    EXPECT_TRUE(kb.ok()) << kb.status().ToString();
    return kb.ok() ? std::move(*kb) : nullptr;
  }
  // A KB at `url` holding one version with `defined` functions, seeded as given.
  std::unique_ptr<Kb> Make(const std::string& url, std::uint32_t defined,
                           const std::vector<SeedName>& seeds = {}) {
    auto kb = Open(url, /*create=*/true);
    if (kb == nullptr) return nullptr;
    auto r = kb->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, defined),
                              MakeFunctions(0, defined), seeds);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return kb;
  }

  base::PosixEnv env_;
};

TEST_F(SymbolWatchTest, AWriteOnAnotherConnectionYieldsItsStableId) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  auto writer = Make(db.url(), 3);
  ASSERT_NE(writer, nullptr);
  const auto functions = MakeFunctions(0, 3);

  Recorder rec;
  auto watcher = SymbolWatcher::Start(db.url(), rec.OnChange(), rec.Options());
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  ASSERT_TRUE(rec.WaitListening(1));

  auto d = writer->HumanSetName(HumanChannel::kLib, functions[1].stable_id, "parse_header");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE(d->accepted);
  ASSERT_TRUE(rec.WaitIds({functions[1].stable_id}));
  // A rejected write changes no row and sends nothing; a later accepted one is seen alone.
  auto rejected = writer->McpPropose(functions[1].stable_id, "other", std::nullopt, 0.9);
  ASSERT_TRUE(rejected.ok());
  EXPECT_FALSE(rejected->accepted);
  ASSERT_TRUE(writer->McpPropose(functions[2].stable_id, "helper", std::nullopt, 0.6).ok());
  ASSERT_TRUE(rec.WaitIds({functions[2].stable_id}));
  watcher.value()->Stop();
  for (const SymbolChanges& b : rec.batches()) {
    EXPECT_FALSE(b.everything);
    for (const std::string& id : b.stable_ids) {
      EXPECT_TRUE(id == functions[1].stable_id || id == functions[2].stable_id) << id;
    }
  }
  // Stopping twice is fine; the destructor stops again.
  watcher.value()->Stop();
}

TEST_F(SymbolWatchTest, ABurstComesAsFewBatches) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  auto kb = Open(db.url(), /*create=*/true);
  ASSERT_NE(kb, nullptr);

  Recorder rec;
  auto watcher = SymbolWatcher::Start(db.url(), rec.OnChange(), rec.Options());
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  ASSERT_TRUE(rec.WaitListening(1));

  // One version whose 2,000 seeds commit in one transaction: 2,000 NOTIFYs at once.
  constexpr std::uint32_t kCount = 2000;
  const auto functions = MakeFunctions(0, kCount);
  std::vector<SeedName> seeds;
  std::set<std::string> ids;
  for (const FunctionRecord& f : functions) {
    seeds.push_back({.func_index = f.func_index, .name = "f" + std::to_string(f.func_index)});
    ids.insert(f.stable_id);
  }
  auto r = kb->StoreVersion(MakeVersion("v1", std::string(64, 'b'), 0, kCount), functions, seeds);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(rec.WaitIds(ids));
  watcher.value()->Stop();

  const std::vector<SymbolChanges> batches = rec.batches();
  std::size_t reported = 0;
  for (const SymbolChanges& b : batches) {
    EXPECT_FALSE(b.everything);
    EXPECT_TRUE(std::is_sorted(b.stable_ids.begin(), b.stable_ids.end()));
    reported += b.stable_ids.size();
  }
  // Each id once, in far fewer callbacks than ids.
  EXPECT_EQ(reported, ids.size());
  EXPECT_LT(batches.size(), 20u) << "the burst was not coalesced";
}

TEST_F(SymbolWatchTest, ATooLargeBatchSaysEverything) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  auto kb = Open(db.url(), /*create=*/true);
  ASSERT_NE(kb, nullptr);
  Recorder rec;
  WatchOptions options = rec.Options();
  options.max_batch_ids = 10;
  auto watcher = SymbolWatcher::Start(db.url(), rec.OnChange(), options);
  ASSERT_TRUE(watcher.ok());
  ASSERT_TRUE(rec.WaitListening(1));
  const auto functions = MakeFunctions(0, 50);
  std::vector<SeedName> seeds;
  for (const FunctionRecord& f : functions) seeds.push_back({f.func_index, "g", {}});
  ASSERT_TRUE(
      kb->StoreVersion(MakeVersion("v1", std::string(64, 'c'), 0, 50), functions, seeds).ok());
  ASSERT_TRUE(rec.WaitEverything());
  for (const SymbolChanges& b : rec.batches()) {
    if (b.everything) {
      EXPECT_TRUE(b.stable_ids.empty());
    }
  }
}

TEST_F(SymbolWatchTest, ASqliteKbHasNoWatcher) {
  base::testing::TempDir dir("trove_kb_watch");
  Recorder rec;
  auto watcher = SymbolWatcher::Start(dir.Abs("kb.db"), rec.OnChange());
  EXPECT_EQ(watcher.status().code(), StatusCode::kUnsupported);
  base::Cancellation cancel;
  EXPECT_EQ(WatchSymbols(dir.Abs("kb.db"), rec.OnChange(), cancel).code(),
            StatusCode::kUnsupported);
}

TEST_F(SymbolWatchTest, WatchSymbolsReturnsWhenCancelled) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  Recorder rec;
  base::Cancellation cancel;
  cancel.Cancel();
  EXPECT_TRUE(WatchSymbols(db.url(), rec.OnChange(), cancel, rec.Options()).ok());
}

// A private server: stopped, then started again, then restarted.
TEST_F(SymbolWatchTest, ReconnectsAfterTheServerWentAwayAndSaysEverything) {
  PgScratchServer server;
  ASSERT_TRUE(server.ok());
  auto kb = Make(server.url(), 2);
  ASSERT_NE(kb, nullptr);
  const auto functions = MakeFunctions(0, 2);

  Recorder rec;
  auto watcher = SymbolWatcher::Start(server.url(), rec.OnChange(), rec.Options());
  ASSERT_TRUE(watcher.ok());
  ASSERT_TRUE(rec.WaitListening(1));
  EXPECT_TRUE(kb->Healthy());

  // Down: the watcher reports it and keeps trying; the KB's connection is found dead, and a new
  // one cannot be opened (at once, no retry loop: what a pool does on acquire).
  ASSERT_TRUE(server.Stop());
  ASSERT_TRUE(rec.WaitFailure());
  EXPECT_FALSE(kb->Healthy());
  EXPECT_EQ(Kb::Open(env_, server.url()).status().code(), StatusCode::kUnavailable);

  // Up again: listening again, and an `everything` batch for what was missed.
  ASSERT_TRUE(server.Restart());
  ASSERT_TRUE(rec.WaitListening(2));
  ASSERT_TRUE(rec.WaitEverything());
  auto reopened = Open(server.url());
  ASSERT_NE(reopened, nullptr);
  EXPECT_TRUE(reopened->Healthy());
  rec.Clear();
  ASSERT_TRUE(reopened->HumanSetName(HumanChannel::kLib, functions[0].stable_id, "a").ok());
  ASSERT_TRUE(rec.WaitIds({functions[0].stable_id}));

  // A restart while idle: the same, and the idle KB connection is found dead.
  rec.Clear();
  ASSERT_TRUE(server.Restart());
  ASSERT_TRUE(rec.WaitListening(3));
  ASSERT_TRUE(rec.WaitEverything());
  EXPECT_FALSE(reopened->Healthy());
  auto again = Open(server.url());
  ASSERT_NE(again, nullptr);
  ASSERT_TRUE(again->HumanSetName(HumanChannel::kLib, functions[1].stable_id, "b").ok());
  ASSERT_TRUE(rec.WaitIds({functions[1].stable_id}));
  EXPECT_GE(rec.failures(), 2);

  // Stopped while the server is down: returns at once.
  ASSERT_TRUE(server.Stop());
  ASSERT_TRUE(rec.WaitFailure());
  watcher.value()->Stop();
}

}  // namespace
}  // namespace trove::warden::kb

// Concurrency (docs/warden.md §6.5 invariant 10) and crash safety (§4.5) over real files.
//
// * 8 processes (fork) and 8 threads, each with its own Kb on one file, write at once to a
//   few stable_ids through every write path. Afterwards there is exactly one evidence row per
//   attempt, and replaying the attempts serially in evidence-id order through an independent
//   model reproduces every recorded verdict and the final symbols: the concurrent run equals
//   that serial order.
// * A child running StoreVersion of a large version is killed with SIGKILL mid-transaction; the
//   file passes integrity_check, holds no trace of the version, and a re-run completes.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include "base/env.h"
#include "base/sqlite.h"
#include "base/testing/temp_dir.h"
#include "warden/kb/kb.h"
#include "warden/kb/testing/kb_test_peer.h"

namespace trove::warden::kb {
namespace {

using base::testing::TempDir;

constexpr int kWorkers = 8;
constexpr int kWritesPerWorker = 250;
constexpr std::uint32_t kSymbols = 4;

// One worker's writes: random paths, names and confidences over kSymbols stable_ids.
// Returns the first failed Status (a lost write), or OK.
Status RunWorker(const std::string& path, int worker) {
  base::PosixEnv env;
  ASSIGN_OR_RETURN(std::unique_ptr<Kb> kb, Kb::Open(env, path));
  std::mt19937_64 rng(0xc0ffee + static_cast<std::uint64_t>(worker));
  auto pick = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
  };
  const auto functions = testing::MakeFunctions(0, kSymbols);
  static const char* kNames[] = {"alpha", "beta", "gamma"};
  static const double kConf[] = {0.1, 0.35, 0.5, 0.6, 0.9, 1.0};
  for (int i = 0; i < kWritesPerWorker; ++i) {
    const std::string& id = functions[pick(kSymbols)].stable_id;
    const std::string name = kNames[pick(3)];
    const double c = kConf[pick(std::size(kConf))];
    const std::size_t path_choice = pick(10);
    auto attempt = [&]() -> Result<Decision> {
      Result<Decision> d = Status::Internal("unset");
      switch (path_choice) {
        case 0:
          d = kb->HumanSetName(HumanChannel::kLib, id, name);
          break;
        case 1:
          d = kb->HumanClear(HumanChannel::kCli, id);
          break;
        case 2:
          d = kb->SeedExport(SeedSource::kExport, id, name);
          break;
        case 3:
        case 4:
          d = kb->OracleWrite("exact", id, {.name = name, .confidence = c});
          break;
        case 5:
          d = kb->DiffCarry("v1", "v2", id, {.name = name, .confidence = c});
          break;
        case 6:
        case 7:
          d = kb->AgentPropose("offline", id, {.name = name, .summary = "s", .confidence = c});
          break;
        default:
          d = kb->McpPropose(id, name, "", c);
          break;
      }
      return d;
    };
    // kUnavailable is "database is busy" from BEGIN IMMEDIATE after the 5 s busy timeout
    // (possible on a loaded machine, and under ASan): it comes before the gate reads E, so
    // nothing was decided or recorded, and a caller retries. Any other error is a failure.
    Result<Decision> d = attempt();
    for (int retry = 0;
         retry < 20 && !d.ok() && d.status().code() == base::StatusCode::kUnavailable; ++retry) {
      d = attempt();
    }
    RETURN_IF_ERROR(d.status().WithContext(fmt::format("worker {} write {}", worker, i)));
  }
  return Status::Ok();
}

// The §6.2 rules again, independent of Decide (see property_test.cc).
struct ModelSymbol {
  std::optional<std::string> name;
  std::optional<std::string> summary;
  std::string provenance;
  std::string actor;
  double confidence = 0;
  bool locked = false;
};

int Rank(const std::string& p) {
  return p == "human"        ? 5
         : p == "export"     ? 4
         : p == "oracle"     ? 3
         : p == "diff-carry" ? 2
         : p == "agent"      ? 1
                             : 0;
}

bool Accepts(const std::optional<ModelSymbol>& e, const std::optional<std::string>& name,
             const std::string& provenance, double confidence) {
  if (!name.has_value() && provenance != "human") return false;
  if (!(confidence >= 0.0 && confidence <= 1.0)) return false;
  if (!e.has_value() || !e->name.has_value()) return true;
  if (provenance == "human") return true;
  if (e->locked) return false;
  if (*name == *e->name && Rank(provenance) < Rank(e->provenance)) return false;
  if (Rank(provenance) > Rank(e->provenance)) return true;
  return confidence > e->confidence;
}

// Replays the evidence trail in id order and compares verdicts and the final symbols.
void CheckSerialReplay(const std::string& path, std::int64_t attempts) {
  base::PosixEnv env;
  auto kb = Kb::Open(env, path);
  ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  base::Database& db = KbTestPeer::SqliteDb(**kb);
  ASSERT_TRUE(db.IntegrityCheck().ok());
  auto stmt = db.Prepare(
      "SELECT stable_id, actor, provenance, name, summary, confidence, accepted, reason "
      "FROM evidence ORDER BY id");
  ASSERT_TRUE(stmt.ok());
  std::map<std::string, std::optional<ModelSymbol>> model;
  std::int64_t rows = 0;
  for (;;) {
    auto row = stmt->Step();
    ASSERT_TRUE(row.ok());
    if (!*row) break;
    ++rows;
    const std::string id = stmt->ColumnText(0);
    const std::string actor = stmt->ColumnText(1);
    const std::string provenance = stmt->ColumnText(2);
    std::optional<std::string> name;
    if (!stmt->ColumnIsNull(3)) name = stmt->ColumnText(3);
    std::optional<std::string> summary;
    if (!stmt->ColumnIsNull(4)) summary = stmt->ColumnText(4);
    const double confidence = stmt->ColumnIsNull(5) ? std::nan("") : stmt->ColumnDouble(5);
    const bool accepted = stmt->ColumnInt64(6) != 0;
    std::optional<ModelSymbol>& e = model[id];
    ASSERT_EQ(Accepts(e, name, provenance, confidence), accepted)
        << "evidence row " << rows << ": " << stmt->ColumnText(7);
    if (!accepted) continue;
    ModelSymbol s{.provenance = provenance, .actor = actor};
    if (name.has_value()) {
      s.name = name;
      s.confidence = confidence;
      s.locked = provenance == "human";
      s.summary = summary.has_value() && !summary->empty()
                      ? summary
                      : (e.has_value() ? e->summary : std::nullopt);
    }
    e = s;
  }
  EXPECT_EQ(rows, attempts) << "one evidence row per attempt";
  for (const auto& [id, expected] : model) {
    auto s = (*kb)->GetSymbol(id);
    ASSERT_TRUE(s.ok());
    ASSERT_EQ(s->has_value(), expected.has_value()) << id;
    if (!expected.has_value()) continue;
    EXPECT_EQ((*s)->name, expected->name) << id;
    EXPECT_EQ((*s)->summary, expected->summary) << id;
    EXPECT_EQ((*s)->provenance, expected->provenance) << id;
    EXPECT_EQ((*s)->actor, expected->actor) << id;
    EXPECT_EQ((*s)->confidence, expected->confidence) << id;
    EXPECT_EQ((*s)->locked, expected->locked) << id;
  }
}

std::string MakeKb(TempDir& dir) {
  const std::string path = dir.Abs("kb.db");
  base::PosixEnv env;
  auto kb = Kb::Open(env, path, KbOptions{.create_if_missing = true});
  EXPECT_TRUE(kb.ok()) << kb.status().ToString();
  auto r = (*kb)->StoreVersion(testing::MakeVersion("v1", std::string(64, 'a'), 0, kSymbols),
                               testing::MakeFunctions(0, kSymbols));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return path;
}

TEST(KbConcurrencyTest, EightProcesses) {
  TempDir dir("trove_kb_procs");
  const std::string path = MakeKb(dir);
  std::vector<pid_t> children;
  for (int w = 0; w < kWorkers; ++w) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const Status s = RunWorker(path, w);
      if (!s.ok()) fprintf(stderr, "%s\n", s.ToString().c_str());
      _exit(s.ok() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker failed: " << status;
  }
  CheckSerialReplay(path, kWorkers * kWritesPerWorker);
}

TEST(KbConcurrencyTest, EightThreads) {
  TempDir dir("trove_kb_threads");
  const std::string path = MakeKb(dir);
  std::vector<Status> results(kWorkers);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] { results[w] = RunWorker(path, 100 + w); });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  CheckSerialReplay(path, kWorkers * kWritesPerWorker);
}

// ---- Crash safety

constexpr std::uint32_t kLargeDefined = 20'000;

std::int64_t Count(base::Database& db, const std::string& sql) {
  auto stmt = db.Prepare(sql);
  EXPECT_TRUE(stmt.ok());
  auto row = stmt->Step();
  EXPECT_TRUE(row.ok() && *row);
  return stmt->ColumnInt64(0);
}

TEST(KbCrashTest, KilledMidStoreVersionLeavesNoTrace) {
  TempDir dir("trove_kb_crash");
  const std::string path = dir.Abs("kb.db");
  base::PosixEnv env;
  {
    auto kb = Kb::Open(env, path, KbOptions{.create_if_missing = true});
    ASSERT_TRUE(kb.ok());
  }
  const auto functions = testing::MakeFunctions(10, kLargeDefined);
  const VersionRecord version =
      testing::MakeVersion("big", std::string(64, 'c'), 10, kLargeDefined);
  const std::vector<SeedName> seeds = {{.func_index = 10, .name = "first"}};

  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(pipe_fds[0]);
    base::PosixEnv child_env;
    const int fd = pipe_fds[1];
    KbOptions options;
    // Halfway through the function rows, tell the parent and wait to be killed.
    options.store_progress_for_testing = [fd](std::size_t done) {
      if (done == kLargeDefined / 2) {
        const char byte = 'k';
        if (write(fd, &byte, 1) != 1) _exit(3);
        for (;;) pause();
      }
    };
    auto kb = Kb::Open(child_env, path, options);
    if (!kb.ok()) _exit(2);
    (void)(*kb)->StoreVersion(version, functions, seeds);
    _exit(4);  // not reached: killed inside the hook
  }
  close(pipe_fds[1]);
  char byte = 0;
  ASSERT_EQ(read(pipe_fds[0], &byte, 1), 1) << "the child did not reach the hook";
  close(pipe_fds[0]);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  // The KB held no version and no other connection, so the killed transaction was the first
  // version's, written with a rollback journal (kb.cc): a hot journal is left, which the next
  // open rolls back.
  EXPECT_TRUE(std::filesystem::exists(path + "-journal"));
  {
    // The rollback itself brings back the four indexes the store had dropped (Kb::Open would
    // create missing ones, so look before it runs).
    auto raw = base::Database::Open(path, {.create_if_missing = false});
    ASSERT_TRUE(raw.ok()) << raw.status().ToString();
    EXPECT_EQ(Count(**raw,
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND "
                    "name IN ('functions_stable_id', 'functions_norm_hash', "
                    "'functions_exact_hash', 'functions_structural_hash')"),
              4);
  }
  auto kb = Kb::Open(env, path);
  ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  base::Database& db = KbTestPeer::SqliteDb(**kb);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = 'ok'"),
            1);
  ASSERT_TRUE(db.IntegrityCheck().ok());
  for (const char* table : {"module_versions", "functions", "symbols", "evidence"}) {
    EXPECT_EQ(Count(db, std::string("SELECT count(*) FROM ") + table), 0) << table;
  }
  // A re-run completes.
  auto r = (*kb)->StoreVersion(version, functions, seeds);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->label, "big");
  EXPECT_EQ(Count(db, "SELECT count(*) FROM functions"), 10 + kLargeDefined);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM evidence"), 1);
  ASSERT_TRUE(db.IntegrityCheck().ok());
}

TEST(KbCrashTest, KilledAtRandomMomentsNeverLeavesAPartialVersion) {
  TempDir dir("trove_kb_crash_loop");
  const std::string path = dir.Abs("kb.db");
  base::PosixEnv env;
  {
    auto kb = Kb::Open(env, path, KbOptions{.create_if_missing = true});
    ASSERT_TRUE(kb.ok());
  }
  constexpr std::uint32_t kDefined = 5'000;
  std::mt19937 rng(7);
  for (int round = 0; round < 3; ++round) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      base::PosixEnv child_env;
      auto kb = Kb::Open(child_env, path);
      if (!kb.ok()) _exit(2);
      const auto functions = testing::MakeFunctions(0, kDefined);
      for (int i = 0;; ++i) {  // ingest version after version until killed
        const std::string sha = fmt::format("{:064x}", round * 100000 + i);
        (void)(*kb)->StoreVersion(testing::MakeVersion("", sha, 0, kDefined), functions,
                                  {{.func_index = 0, .name = "f"}});
      }
    }
    usleep(std::uniform_int_distribution<int>(50'000, 300'000)(rng));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    auto kb = Kb::Open(env, path);
    ASSERT_TRUE(kb.ok()) << kb.status().ToString();
    base::Database& db = KbTestPeer::SqliteDb(**kb);
    ASSERT_TRUE(db.IntegrityCheck().ok());
    // Every stored version is complete.
    EXPECT_EQ(Count(db, fmt::format("SELECT count(*) FROM module_versions v WHERE "
                                    "(SELECT count(*) FROM functions f WHERE f.version_id = v.id) "
                                    "!= {}",
                                    kDefined)),
              0);
    EXPECT_EQ(Count(db, "SELECT count(*) FROM evidence"),
              Count(db, "SELECT count(*) FROM module_versions"));
  }
}

}  // namespace
}  // namespace trove::warden::kb

// Watch mode (docs/librarian.md §7.2): the debouncer, a burst of 1,000 changes re-indexed as one
// batch, a query while changes are pending, and kill -9 in the middle of a watch re-index.
#include "librarian/watch/watcher.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "base/hash.h"
#include "base/sqlite.h"
#include "librarian/index/bootstrap.h"
#include "librarian/query/query.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"
#include "librarian/watch/status.h"

namespace trove::librarian::watch {
namespace {

using std::chrono::milliseconds;
using TimePoint = Debouncer::TimePoint;

TEST(DebouncerTest, WaitsForQuietOrMaxDelayAndKeepsTheOutermostPaths) {
  Debouncer d(milliseconds(200), milliseconds(1000));
  const TimePoint t0{};
  EXPECT_TRUE(d.empty());
  EXPECT_FALSE(d.Deadline().has_value());
  d.Add("src/a.c", t0);
  EXPECT_EQ(*d.Deadline(), t0 + milliseconds(200));
  EXPECT_FALSE(d.Due(t0 + milliseconds(199)));
  // Each change pushes the deadline out by the quiet period...
  for (int i = 1; i <= 9; ++i) d.Add(fmt::format("src/n/f{}.c", i), t0 + milliseconds(100 * i));
  EXPECT_FALSE(d.Due(t0 + milliseconds(999)));
  // ...but never past max_delay after the first change.
  EXPECT_TRUE(d.Due(t0 + milliseconds(1000)));
  d.Add("src/n", t0 + milliseconds(1000));
  d.Add("src/a.c", t0 + milliseconds(1000));
  Debouncer::Batch b = d.Take();
  EXPECT_FALSE(b.rescan);
  // src/n covers the files under it; duplicates count once.
  EXPECT_EQ(b.paths, (std::vector<std::string>{"src/a.c", "src/n"}));
  EXPECT_TRUE(d.empty());
  d.AddRescan(t0);
  EXPECT_FALSE(d.empty());
  EXPECT_TRUE(d.Take().rescan);
}

std::string CFile(int f, int functions) {
  std::string text = "#include <stdio.h>\n";
  for (int i = 0; i < functions; ++i) {
    text += fmt::format("int func_{}_{}(int x) {{\n  return helper(x) + {};\n}}\n", f, i, i);
  }
  return text;
}

index::BootstrapOptions Options(const testing::TempDir& dir) {
  index::BootstrapOptions o;
  o.workspace = dir.path();
  o.workers = 2;
  o.ctags_program = "";
  return o;
}

std::map<std::string, std::string> Files(store::Store& store) {
  std::map<std::string, std::string> out;
  auto files = store.ListFiles();
  EXPECT_TRUE(files.ok());
  if (files.ok()) {
    for (const store::FileRecord& f : *files) out[f.path] = f.sha256;
  }
  return out;
}

std::int64_t Scalar(store::Store& store, const std::string& sql) {
  auto st = store.db().Prepare(sql);
  EXPECT_TRUE(st.ok());
  if (!st.ok()) return -1;
  auto row = st->Step();
  EXPECT_TRUE(row.ok() && *row);
  return st->ColumnInt64(0);
}

TEST(WatcherTest, BurstOfAThousandChangesIsOneReindexAndQueriesSeeThePendingFiles) {
  testing::TempDir dir;
  for (int f = 0; f < 40; ++f) dir.Write(fmt::format("src/old/f{:03}.c", f), CFile(f, 2));
  base::Cancellation cancel;
  ASSERT_TRUE(index::Bootstrap(Options(dir), cancel, base::Progress()).ok());

  WatchOptions wo;
  wo.bootstrap = Options(dir);
  auto watcher = Watcher::Start(wo);
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  Watcher& w = **watcher;
  EXPECT_GE(w.inotify().watches(), 3u);  // root, src, src/old

  // The burst: 900 new files (half in a directory created meanwhile, whose watch did not exist
  // when its first files were written), 80 rewritten with three functions, 20 deleted.
  for (int f = 0; f < 450; ++f) dir.Write(fmt::format("src/old/n{:03}.c", f), CFile(1000 + f, 3));
  for (int f = 0; f < 450; ++f)
    dir.Write(fmt::format("src/new/d{}/m{:03}.c", f % 3, f), CFile(2000 + f, 3));
  for (int round = 0; round < 2; ++round) {
    for (int f = 0; f < 40; ++f) dir.Write(fmt::format("src/old/f{:03}.c", f), CFile(f, 3));
  }
  for (int f = 0; f < 20; ++f) {
    ASSERT_EQ(unlink(dir.Abs(fmt::format("src/old/n{:03}.c", f)).c_str()), 0);
  }
  ASSERT_TRUE(w.Drain(TimePoint{}).ok());
  EXPECT_FALSE(w.Due(TimePoint{} + milliseconds(100)));
  EXPECT_TRUE(w.Due(TimePoint{} + kDefaultQuiet));

  // Pending, not yet re-indexed: a query reads the old index and names the changed files.
  const WatchStatus pending = ReadLiveWatchStatus(WatchStatusPathFor(w.root()));
  EXPECT_EQ(pending.pid, getpid());
  EXPECT_FALSE(pending.reindexing);
  EXPECT_GT(pending.pending_total, 400u);
  EXPECT_NE(std::find(pending.pending.begin(), pending.pending.end(), "src/new"),
            pending.pending.end());
  {
    auto st = store::Store::Open(index::StorePathFor(w.root()));
    ASSERT_TRUE(st.ok());
    query::QueryRequest req;
    req.intent = "func_3_1 helper";
    req.depth = query::Depth::kL1;
    req.min_confidence = 0;
    auto r = query::Query(**st, query::Workspace{w.root(), "ws_test"}, req, cancel);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    bool disclosed = false;
    for (const std::string& d : r->disclosures) disclosed |= d.rfind("index_updating:", 0) == 0;
    EXPECT_TRUE(disclosed);
    const auto& stale = r->freshness.stale_files;
    EXPECT_NE(std::find(stale.begin(), stale.end(), "src/old/f003.c"), stale.end());
    bool marked = false;
    for (const query::Pack& p : r->packs) {
      if (p.primary_file == "src/old/f003.c") marked |= p.stale;
    }
    EXPECT_TRUE(marked);
  }

  Update u = w.Reindex(cancel);
  ASSERT_TRUE(u.report.ok()) << u.report.status().ToString();
  EXPECT_FALSE(u.rescan);
  const index::BootstrapStats& s = u.report->stats;
  EXPECT_EQ(s.mode, "incremental");
  EXPECT_EQ(s.files_added, 880u);  // 900 written, 20 of them deleted again
  EXPECT_EQ(s.files_modified, 40u);
  EXPECT_EQ(s.files_deleted, 0u);  // the deleted ones never reached the index
  EXPECT_TRUE(w.idle());
  EXPECT_EQ(ReadLiveWatchStatus(WatchStatusPathFor(w.root())).pending_total, 0u);

  auto st = store::Store::Open(index::StorePathFor(w.root()));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(Files(**st).size(), 920u);
  EXPECT_EQ(*(*st)->CountRows("symbols"), 920 * 3);
  // Two runs: the first bootstrap and this one re-index.
  EXPECT_EQ((*st)->ListRuns()->size(), 2u);

  // Deleting a whole directory removes its files from the index.
  std::filesystem::remove_all(dir.Abs("src/new/d1"));
  ASSERT_TRUE(w.Drain(TimePoint{}).ok());
  Update del = w.Reindex(cancel);
  ASSERT_TRUE(del.report.ok());
  EXPECT_EQ(del.report->stats.files_deleted, 150u);
  EXPECT_EQ(Files(**st).size(), 770u);
}

// What a whole-workspace manifest holds: the files table, one row per path.
std::vector<std::string> ManifestRows(const std::vector<store::ManifestFile>& files) {
  std::vector<std::string> out;
  for (const store::ManifestFile& f : files) {
    out.push_back(fmt::format("{} {} {} {} {}", f.path, f.sha256, f.size, f.language, f.status));
  }
  return out;
}

std::vector<std::string> SymbolRows(store::Store& store, const std::string& run_id) {
  auto symbols = store::RunSymbols(store, run_id);
  EXPECT_TRUE(symbols.ok());
  std::vector<std::string> out;
  if (!symbols.ok()) return out;
  for (const store::RunSymbol& s : *symbols) {
    out.push_back(
        fmt::format("{} {} {} {} {}", s.target_id, s.kind, s.span_sha256, s.pack_id, s.language));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The totals a whole-workspace count gives (bootstrap's Totals), as one comparable string.
std::string TotalsOf(const index::BootstrapStats& s) {
  return fmt::format("functions={} types={} modules={} edges={} chunks={} packs={} langs={} ex={}",
                     s.functions_indexed, s.types_indexed, s.modules_indexed, s.edges,
                     s.chunks_indexed, s.context_packs_total, s.languages.size(),
                     s.languages.empty() ? 0 : s.languages.begin()->second);
}

TEST(WatchManifestTest, DeltaManifestEqualsAFromScratchManifestAfterEditsDeletesAndRenames) {
  testing::TempDir dir;
  for (int f = 0; f < 30; ++f) dir.Write(fmt::format("src/d{}/f{:02}.c", f % 3, f), CFile(f, 2));
  base::Cancellation cancel;
  auto first = index::Bootstrap(Options(dir), cancel, base::Progress());
  ASSERT_TRUE(first.ok());

  // Each step changes the workspace and re-indexes only the paths it touched, as the watcher
  // does (an edit, a delete, a rename = old and new path, a new directory, a removed one).
  struct Step {
    std::function<void()> change;
    std::vector<std::string> paths;
  };
  std::vector<Step> steps;
  for (int round = 0; round < 6; ++round) {
    const int e = round * 4;
    steps.push_back({[&dir, e, round] {
                       dir.Write(fmt::format("src/d{}/f{:02}.c", e % 3, e), CFile(e, 3 + round));
                     },
                     {fmt::format("src/d{}/f{:02}.c", e % 3, e)}});
    const int del = e + 1;
    steps.push_back(
        {[&dir, del] { unlink(dir.Abs(fmt::format("src/d{}/f{:02}.c", del % 3, del)).c_str()); },
         {fmt::format("src/d{}/f{:02}.c", del % 3, del)}});
    const int ren = e + 2;
    const std::string from = fmt::format("src/d{}/f{:02}.c", ren % 3, ren);
    const std::string to = fmt::format("src/moved/r{:02}.c", ren);
    steps.push_back({[&dir, from, to] {
                       std::filesystem::create_directories(dir.Abs("src/moved"));
                       std::filesystem::rename(dir.Abs(from), dir.Abs(to));
                     },
                     {from, to}});
    const std::string fresh = fmt::format("src/new{}", round);
    steps.push_back({[&dir, fresh, round] {
                       for (int k = 0; k < 3; ++k) {
                         dir.Write(fmt::format("{}/n{}.c", fresh, k),
                                   CFile(100 + round * 10 + k, 1));
                       }
                     },
                     {fresh}});
    if (round > 0) {
      const std::string gone = fmt::format("src/new{}", round - 1);
      steps.push_back({[&dir, gone] { std::filesystem::remove_all(dir.Abs(gone)); }, {gone}});
    }
  }
  ASSERT_GT(steps.size(), store::kManifestRuns);  // the first (full) manifest gets pruned

  std::string last_run;
  std::size_t deltas = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    steps[i].change();
    index::BootstrapOptions o = Options(dir);
    o.only_paths = steps[i].paths;
    auto r = index::Bootstrap(o, cancel, base::Progress());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    last_run = r->run_id;
    auto st = store::Store::Open(index::StorePathFor(dir.path()));
    ASSERT_TRUE(st.ok());
    auto base = store::internal::ManifestBase((*st)->db(), r->run_id);
    ASSERT_TRUE(base.ok());
    if (!base->empty()) ++deltas;
    // The resolved manifest is the files table as the run left it.
    auto files = (*st)->ListFiles();
    ASSERT_TRUE(files.ok());
    std::vector<store::ManifestFile> expected;
    for (const store::FileRecord& f : *files) {
      expected.push_back(store::ManifestFile{f.path, f.sha256, f.size, f.language,
                                             std::string(store::FileStatusName(f.status))});
    }
    auto manifest = store::RunManifest(**st, r->run_id);
    ASSERT_TRUE(manifest.ok());
    EXPECT_EQ(ManifestRows(*manifest), ManifestRows(expected)) << "step " << i;
    // Carried totals agree with a whole-store count: the next full run recounts them.
    if (i + 1 == steps.size()) {
      const std::string carried = TotalsOf(r->stats);
      st->reset();
      auto full = index::Bootstrap(Options(dir), cancel, base::Progress());
      ASSERT_TRUE(full.ok());
      EXPECT_EQ(full->stats.mode, "noop");
      EXPECT_EQ(carried, TotalsOf(full->stats));
    }
  }
  EXPECT_GE(deltas, steps.size() - 1);

  // From scratch: a full bootstrap of the same tree into another store (outside the tree).
  testing::TempDir elsewhere;
  index::BootstrapOptions scratch = Options(dir);
  scratch.store_path = elsewhere.Abs("scratch.sqlite");
  auto fresh = index::Bootstrap(scratch, cancel, base::Progress());
  ASSERT_TRUE(fresh.ok());
  auto a = store::Store::Open(index::StorePathFor(dir.path()));
  auto b = store::Store::Open(scratch.store_path);
  ASSERT_TRUE(a.ok() && b.ok());
  auto delta = store::RunManifest(**a, last_run);
  auto full = store::RunManifest(**b, fresh->run_id);
  ASSERT_TRUE(delta.ok() && full.ok());
  ASSERT_EQ(delta->size(), full->size());
  for (std::size_t i = 0; i < full->size(); ++i) {
    // The same files and contents; status may be `unchanged` where scratch says `indexed`.
    EXPECT_EQ((*delta)[i].path, (*full)[i].path);
    EXPECT_EQ((*delta)[i].sha256, (*full)[i].sha256);
    EXPECT_EQ((*delta)[i].size, (*full)[i].size);
    EXPECT_EQ((*delta)[i].language, (*full)[i].language);
  }
  EXPECT_EQ(SymbolRows(**a, last_run), SymbolRows(**b, fresh->run_id));
  EXPECT_TRUE(store::HasManifest(**a, last_run).value_or(false));
  // Pruned to the last kManifestRuns runs plus the base the kept deltas name.
  EXPECT_LE(Scalar(**a, "SELECT count(DISTINCT run_id) FROM run_files"),
            static_cast<std::int64_t>(store::kManifestRuns) + 1);
  // No content manifest outlives every manifest and the files table.
  EXPECT_EQ(Scalar(**a,
                   "SELECT count(*) FROM content_symbols c WHERE NOT EXISTS (SELECT 1 "
                   "FROM run_files r WHERE r.path = c.path AND r.sha256 = c.sha256) AND NOT "
                   "EXISTS (SELECT 1 FROM files f WHERE f.path = c.path AND f.sha256 = "
                   "c.sha256)"),
            0);
}

TEST(WatcherTest, RunStopsOnCancellationAndReportsEachUpdate) {
  testing::TempDir dir;
  dir.Write("a.c", CFile(1, 1));
  WatchOptions wo;
  wo.bootstrap = Options(dir);
  wo.quiet = milliseconds(20);
  auto watcher = Watcher::Start(wo);
  ASSERT_TRUE(watcher.ok()) << watcher.status().ToString();
  base::Cancellation cancel;
  std::atomic<int> updates{0};
  std::atomic<std::uint64_t> added{0};
  std::thread t([&] {
    Status s = (*watcher)->Run(cancel, [&](const Update& u) {
      if (u.report.ok()) added += u.report->stats.files_added;
      ++updates;
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
  });
  // The initial bootstrap indexes a.c; then b.c arrives through inotify.
  while (updates.load() < 1) std::this_thread::sleep_for(milliseconds(5));
  dir.Write("b.c", CFile(2, 1));
  while (added.load() < 2) std::this_thread::sleep_for(milliseconds(5));
  cancel.Cancel();
  t.join();
  auto st = store::Store::Open(index::StorePathFor((*watcher)->root()));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(Files(**st).size(), 2u);
}

constexpr int kCrashFiles = 1200;

// The child: starts a watcher, says so on `ready_fd`, waits for the parent's rewrite (a byte
// on `go_fd`), then re-indexes it, writing a second byte once 300 files are done and slowing
// down from there until killed.
[[noreturn]] void WatchChild(const std::string& workspace, int ready_fd, int go_fd) {
  std::atomic<bool> signalled{false};
  WatchOptions wo;
  wo.bootstrap.workspace = workspace;
  wo.bootstrap.workers = 2;
  wo.bootstrap.ctags_program = "";
  // Once 300 files are written (three checkpoints), tell the parent and slow down.
  wo.progress = base::Progress([&](double done, double, const std::string&) {
    if (!signalled.load() && done >= 300) {
      char byte = 2;
      if (write(ready_fd, &byte, 1) != 1) _exit(5);
      signalled = true;
    }
  });
  wo.bootstrap.attempt_hook_for_testing = [&](std::string_view, std::int64_t) {
    if (signalled.load()) usleep(20000);
    return Status::Ok();
  };
  auto watcher = Watcher::Start(wo);
  if (!watcher.ok()) _exit(4);
  char byte = 1;
  if (write(ready_fd, &byte, 1) != 1) _exit(5);
  if (read(go_fd, &byte, 1) != 1) _exit(6);
  if (!(*watcher)->Drain(TimePoint{}).ok()) _exit(7);
  base::Cancellation cancel;
  Update u = (*watcher)->Reindex(cancel);
  _exit(u.report.ok() ? 0 : 3);
}

TEST(WatcherCrashTest, KillNineDuringAWatchReindexLeavesAConsistentStore) {
  testing::TempDir dir;
  std::map<std::string, std::string> old_hash, new_hash;
  for (int f = 0; f < kCrashFiles; ++f) {
    const std::string path = fmt::format("src/d{}/f{:04}.c", f % 10, f);
    dir.Write(path, CFile(f, 2));
    old_hash[path] = base::Sha256Hex(CFile(f, 2));
    new_hash[path] = base::Sha256Hex(CFile(f, 3));
  }
  base::Cancellation cancel;
  ASSERT_TRUE(index::Bootstrap(Options(dir), cancel, base::Progress()).ok());

  int ready[2];
  int go[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(go), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(ready[0]);
    close(go[1]);
    WatchChild(dir.path(), ready[1], go[0]);
  }
  close(ready[1]);
  close(go[0]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the watcher did not start";
  for (int f = 0; f < kCrashFiles; ++f) {
    dir.Write(fmt::format("src/d{}/f{:04}.c", f % 10, f), CFile(f, 3));
  }
  ASSERT_EQ(write(go[1], &byte, 1), 1);
  close(go[1]);
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "the child failed before 300 files";
  close(ready[0]);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "the child finished before the kill";

  // The dead watcher's status file is ignored.
  EXPECT_EQ(ReadLiveWatchStatus(WatchStatusPathFor(dir.path())).pending_total, 0u);
  {
    auto st = store::Store::Open(index::StorePathFor(dir.path()));
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    ASSERT_TRUE((*st)->IntegrityCheck().ok());
    // Every file is entirely old or entirely new: its hash and its symbols agree.
    std::map<std::string, std::string> files = Files(**st);
    ASSERT_EQ(files.size(), static_cast<std::size_t>(kCrashFiles));
    int updated = 0;
    for (const auto& [path, sha] : files) {
      const bool is_new = sha == new_hash[path];
      ASSERT_TRUE(is_new || sha == old_hash[path]) << path;
      updated += is_new ? 1 : 0;
      const std::int64_t symbols = Scalar(
          **st, fmt::format("SELECT count(*) FROM symbols s JOIN files f ON f.id = s.file_id "
                            "WHERE f.path = '{}'",
                            path));
      EXPECT_EQ(symbols, is_new ? 3 : 2) << path;
    }
    EXPECT_GT(updated, 0);            // checkpoints committed before the kill...
    EXPECT_LT(updated, kCrashFiles);  // ...and the kill came before the end
  }
  // The next run recovers the interrupted one and completes the rest.
  auto r = index::Bootstrap(Options(dir), cancel, base::Progress());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->success);
  EXPECT_NE(std::find(r->disclosures.begin(), r->disclosures.end(), "interrupted_run_recovered"),
            r->disclosures.end());
  auto st = store::Store::Open(index::StorePathFor(dir.path()));
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(*(*st)->CountRows("symbols"), kCrashFiles * 3);
}

}  // namespace
}  // namespace trove::librarian::watch

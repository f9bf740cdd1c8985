// Crash safety of the whole pipeline (docs/librarian.md §6.4, issue 6): a bootstrap killed with
// SIGKILL in the middle of a run leaves a store that passes PRAGMA integrity_check with every file
// complete, and the next run completes, extracting only what the killed one had not committed.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "base/sqlite.h"
#include "librarian/index/bootstrap.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::index {
namespace {

constexpr int kFiles = 1500;
constexpr int kFunctionsPerFile = 4;

void WriteWorkspace(const testing::TempDir& dir) {
  for (int f = 0; f < kFiles; ++f) {
    std::string text = "#include <stdio.h>\n";
    for (int i = 0; i < kFunctionsPerFile; ++i) {
      text += fmt::format("int func_{}_{}(int x) {{\n  return helper(x) + {};\n}}\n", f, i, i);
    }
    dir.Write(fmt::format("src/d{}/f{:04}.c", f % 10, f), text);
  }
}

// The child: bootstraps until killed, writing one byte to `ready_fd` once 200 files are done.
[[noreturn]] void Child(const std::string& workspace, int ready_fd) {
  BootstrapOptions o;
  o.workspace = workspace;
  o.workers = 2;
  bool signalled = false;
  base::Progress progress([&](double done, double, const std::string&) {
    if (!signalled && done >= 200) {
      char byte = 1;
      if (write(ready_fd, &byte, 1) != 1) _exit(5);
      signalled = true;
    }
  });
  base::Cancellation cancel;
  Result<BootstrapReport> r = Bootstrap(o, cancel, progress);
  _exit(r.ok() ? 0 : 3);
}

TEST(BootstrapCrashTest, KillNineMidRunLeavesAConsistentStoreAndTheNextRunCompletes) {
  testing::TempDir dir;
  WriteWorkspace(dir);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    Child(dir.path(), fds[1]);
  }
  close(fds[1]);
  char byte = 0;
  ASSERT_EQ(read(fds[0], &byte, 1), 1) << "the child failed before 200 files";
  close(fds[0]);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "the child finished before the kill";
  EXPECT_EQ(WTERMSIG(wstatus), SIGKILL);

  std::int64_t committed = 0;
  {
    auto store = store::Store::Open(StorePathFor(dir.path()));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Status check = (*store)->IntegrityCheck();
    ASSERT_TRUE(check.ok()) << check.ToString();
    auto files = (*store)->CountRows("files");
    ASSERT_TRUE(files.ok());
    committed = *files;
    EXPECT_LT(committed, kFiles);
    // Every committed file is complete: all its symbols, calls, imports and chunks.
    EXPECT_EQ(*(*store)->CountRows("symbols"), committed * kFunctionsPerFile);
    EXPECT_EQ(*(*store)->CountRows("calls"), committed * kFunctionsPerFile);
    EXPECT_EQ(*(*store)->CountRows("imports"), committed);
    EXPECT_EQ(*(*store)->CountRows("path_fts"), committed);
    auto runs = (*store)->ListRuns();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ((*runs)[0].state, "running");  // killed: nobody recorded an end
  }

  BootstrapOptions o;
  o.workspace = dir.path();
  base::Cancellation cancel;
  Result<BootstrapReport> r = Bootstrap(o, cancel, base::Progress());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->success);
  EXPECT_EQ(r->stats.files_discovered, static_cast<std::uint64_t>(kFiles));
  EXPECT_EQ(r->stats.files_unchanged, static_cast<std::uint64_t>(committed));
  EXPECT_EQ(r->stats.files_extracted, static_cast<std::uint64_t>(kFiles - committed));
  EXPECT_EQ(r->stats.functions_indexed, static_cast<std::uint64_t>(kFiles * kFunctionsPerFile));
  EXPECT_NE(std::find(r->disclosures.begin(), r->disclosures.end(), "interrupted_run_recovered"),
            r->disclosures.end());
  auto store = store::Store::Open(StorePathFor(dir.path()));
  ASSERT_TRUE(store.ok());
  EXPECT_TRUE((*store)->IntegrityCheck().ok());
  auto runs = (*store)->ListRuns();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  EXPECT_EQ((*runs)[0].state, "failed");  // the killed run, closed by the next one
  EXPECT_EQ((*runs)[1].state, "succeeded");
}

}  // namespace
}  // namespace trove::librarian::index

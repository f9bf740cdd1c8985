// Crash safety: a writer killed with SIGKILL in the middle of its batches leaves a database
// that passes PRAGMA integrity_check and the FTS5 checks, with every batch fully present or
// fully absent (docs/librarian.md §6.2: each file is fully indexed or untouched).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/testing/temp_dir.h"
#include "librarian/extract/chunks.h"
#include "librarian/store/store.h"

namespace trove::librarian::store {
namespace {

constexpr int kFilesPerBatch = 20;
constexpr int kSymbolsPerFile = 8;

// A synthetic file of kSymbolsPerFile functions.
std::string Content(int file) {
  std::string s;
  for (int i = 0; i < kSymbolsPerFile; ++i) {
    s +=
        fmt::format("int function_{}_{}(int x) {{\n  return helperCall(x) + {};\n}}\n", file, i, i);
  }
  return s;
}

extract::FileFacts Facts(const std::string& path, const std::string& content, int file) {
  extract::FileFacts facts;
  facts.language = "c";
  facts.extractor = "test";
  for (int i = 0; i < kSymbolsPerFile; ++i) {
    extract::Symbol s;
    s.name = fmt::format("function_{}_{}", file, i);
    s.qualified_name = s.name;
    s.start_line = static_cast<std::uint32_t>(3 * i + 1);
    s.end_line = s.start_line + 2;
    facts.symbols.push_back(s);
    facts.calls.push_back(extract::CallRef{"helperCall", s.start_line + 1, i});
  }
  facts.imports.push_back(extract::Import{"stdio.h", 1});
  extract::BuildChunks(path, content, facts);
  return facts;
}

// The child: writes batch after batch of new files until killed. Signals `ready` after its
// first commit. Never returns.
[[noreturn]] void Writer(const std::string& db_path, int ready_fd) {
  StoreOptions options;
  options.trigram = true;
  auto store = Store::Open(db_path, options);
  if (!store.ok()) _exit(2);
  auto existing = (*store)->CountRows("files");
  if (!existing.ok()) _exit(3);
  int next = static_cast<int>(*existing);
  bool signalled = false;
  for (;;) {
    std::vector<std::string> paths, contents;
    std::vector<extract::FileFacts> facts;
    for (int i = 0; i < kFilesPerBatch; ++i) {
      paths.push_back(fmt::format("src/f{}.c", next + i));
      contents.push_back(Content(next + i));
    }
    for (int i = 0; i < kFilesPerBatch; ++i)
      facts.push_back(Facts(paths[i], contents[i], next + i));
    WriteBatch batch;
    batch.run = RunRecord{
        "run_crash", "running", "full", "t",
        "",          "{}",      "{}",   fmt::format("{{\"files\":{}}}", next + kFilesPerBatch)};
    for (int i = 0; i < kFilesPerBatch; ++i) {
      FileRecord f;
      f.path = paths[i];
      f.sha256 = std::string(64, '0');
      f.language = "c";
      f.extractor = "test";
      f.run_id = "run_crash";
      batch.replace.push_back(FileReplace{f, &facts[i], contents[i]});
    }
    if (!(*store)->Apply(batch).ok()) _exit(4);
    next += kFilesPerBatch;
    if (!signalled) {
      char byte = 1;
      if (write(ready_fd, &byte, 1) != 1) _exit(5);
      signalled = true;
    }
  }
}

TEST(StoreCrashTest, KillNineMidWriteLeavesAConsistentDatabase) {
  base::testing::TempDir dir("trove_store_crash");
  const std::string db_path = dir.Abs("librarian.sqlite");
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      Writer(db_path, fds[1]);
    }
    close(fds[1]);
    char byte = 0;
    ASSERT_EQ(read(fds[0], &byte, 1), 1) << "writer failed before its first commit";
    close(fds[0]);
    // Let it get into later batches; the writer spends nearly all its time inside a
    // transaction, so the kill lands mid-write. (The delay only spreads kill points; nothing
    // is timed.)
    usleep(static_cast<useconds_t>(20000 + 15000 * round));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int wstatus = 0;
    ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "writer exited early with " << WEXITSTATUS(wstatus);
    EXPECT_EQ(WTERMSIG(wstatus), SIGKILL);

    auto store = Store::Open(db_path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Status check = (*store)->IntegrityCheck();
    ASSERT_TRUE(check.ok()) << check.ToString();
    auto files = (*store)->CountRows("files");
    ASSERT_TRUE(files.ok());
    EXPECT_GT(*files, 0);
    EXPECT_EQ(*files % kFilesPerBatch, 0) << "a batch was partly committed";
    // Every committed file is complete.
    EXPECT_EQ(*(*store)->CountRows("symbols"), *files * kSymbolsPerFile);
    EXPECT_EQ(*(*store)->CountRows("calls"), *files * kSymbolsPerFile);
    EXPECT_EQ(*(*store)->CountRows("imports"), *files);
    EXPECT_EQ(*(*store)->CountRows("chunks"), *files * kSymbolsPerFile);
    EXPECT_EQ(*(*store)->CountRows("path_fts"), *files);
    // The run checkpoint committed with the last batch.
    auto run = (*store)->GetRun("run_crash");
    ASSERT_TRUE(run.ok() && run->has_value());
    EXPECT_EQ((*run)->stats_json, fmt::format("{{\"files\":{}}}", *files));
    // The index still answers.
    auto symbols = (*store)->FindSymbols("function_0_3");
    ASSERT_TRUE(symbols.ok());
    ASSERT_EQ(symbols->size(), 1u);
    auto hits = (*store)->SearchSubstring("function_0_3(");
    ASSERT_TRUE(hits.ok());
    ASSERT_EQ(hits->size(), 1u);
    EXPECT_EQ((*hits)[0].name, "function_0_3");
  }
}

}  // namespace
}  // namespace trove::librarian::store

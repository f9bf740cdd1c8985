#include "librarian/crawl/crawler.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "base/hash.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::crawl {
namespace {

using testing::TempDir;

std::vector<std::string> Paths(const CrawlResult& result) {
  std::vector<std::string> out;
  for (const FileEntry& file : result.files) out.push_back(file.path);
  return out;
}

// "path:reason" for each skipped entry.
std::vector<std::string> Skips(const CrawlResult& result) {
  std::vector<std::string> out;
  for (const SkippedEntry& skip : result.skipped) {
    out.push_back(skip.path + ":" + std::string(SkipReasonName(skip.reason)));
  }
  return out;
}

Result<CrawlResult> CrawlDir(const TempDir& dir, const CrawlOptions& options = {},
                             const Manifest* previous = nullptr) {
  base::Cancellation cancel;
  return Crawl(dir.path(), options, previous, cancel, base::Progress());
}

Manifest ToManifest(const CrawlResult& result) {
  Manifest manifest;
  for (const FileEntry& file : result.files) {
    manifest[file.path] =
        ManifestEntry{.size = file.size, .mtime_ns = file.mtime_ns, .sha256 = file.sha256};
  }
  return manifest;
}

TEST(CrawlTest, ListsFilesInPathOrderWithSizeAndHash) {
  TempDir dir;
  dir.Write("b.txt", "bb");
  dir.Write("a/b.txt", "ab");
  dir.Write("a.txt", "a");
  dir.Write("a-z/c.txt", "c");
  Result<CrawlResult> result = CrawlDir(dir);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  // '-' < '.' < '/': "a-z/..." < "a.txt" < "a/b.txt", bytewise on full paths.
  EXPECT_EQ(Paths(*result), (std::vector<std::string>{"a-z/c.txt", "a.txt", "a/b.txt", "b.txt"}));
  EXPECT_EQ(result->root, dir.path());
  EXPECT_EQ(result->files[1].size, 1u);
  EXPECT_EQ(result->files[1].sha256, base::Sha256Hex("a"));
  EXPECT_EQ(result->files[1].change, FileChange::kAdded);
  EXPECT_GT(result->files[1].mtime_ns, 0);
  EXPECT_EQ(result->files_seen, 4u);
  EXPECT_EQ(result->files_hashed, 4u);
  EXPECT_FALSE(result->truncated);
  EXPECT_TRUE(result->skipped.empty());
}

TEST(CrawlTest, VcsDirectoriesAlwaysSkippedAndDefaultExcludes) {
  TempDir dir;
  dir.Write(".git/config", "x");
  dir.Write(".hg/x", "x");
  dir.Write(".librarian/librarian.sqlite", "x");
  dir.Write("node_modules/m/index.js", "x");
  dir.Write("app.min.js", "x");
  dir.Write("src/main.cc", "x");
  Result<CrawlResult> result = CrawlDir(dir);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(Paths(*result), std::vector<std::string>{"src/main.cc"});

  CrawlOptions no_defaults;
  no_defaults.default_excludes = false;
  result = CrawlDir(dir, no_defaults);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(Paths(*result),
            (std::vector<std::string>{"app.min.js", "node_modules/m/index.js", "src/main.cc"}));
}

TEST(CrawlTest, GitignoreSemantics) {
  TempDir dir;
  dir.Write(".gitignore",
            "# root rules\n"
            "*.log\n"
            "!keep.log\n"
            "/generated\n"
            "tmp/\n"
            "docs/**/*.gen\n"
            "secret/\n"
            "!secret/allowed.txt\n");
  dir.Write("x.log", "1");
  dir.Write("keep.log", "1");
  dir.Write("generated", "1");       // anchored: ignored at the root only
  dir.Write("sub/generated", "1");   // kept
  dir.Write("tmp/a.txt", "1");       // directory-only rule
  dir.Write("sub/tmp", "1");         // a file named tmp: kept
  dir.Write("docs/a/b/c.gen", "1");  // ** spans segments
  dir.Write("docs/c.gen", "1");      // ** matches zero segments
  dir.Write("docs/c.md", "1");
  dir.Write("secret/allowed.txt", "1");  // cannot be re-included under an ignored directory
  dir.Write("sub/.gitignore", "!x.log\n*.txt\n/only-here\n");
  dir.Write("sub/x.log", "1");             // re-included by the deeper file
  dir.Write("sub/y.txt", "1");             // ignored by the deeper file
  dir.Write("sub/deeper/z.txt", "1");      // unanchored: any depth below sub/
  dir.Write("sub/only-here", "1");         // anchored to sub/
  dir.Write("sub/deeper/only-here", "1");  // kept
  dir.Write("y.txt", "1");                 // the deeper rule does not apply at the root
  Result<CrawlResult> result = CrawlDir(dir);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(Paths(*result),
            (std::vector<std::string>{".gitignore", "docs/c.md", "keep.log", "sub/.gitignore",
                                      "sub/deeper/only-here", "sub/generated", "sub/tmp",
                                      "sub/x.log", "y.txt"}));

  CrawlOptions no_ignore;
  no_ignore.use_ignore_files = false;
  result = CrawlDir(dir, no_ignore);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->files.size(), 18u);
}

TEST(CrawlTest, LibrarianignoreAndBadLinesWarn) {
  TempDir dir;
  dir.Write(".gitignore", "*.txt\nbad[\n");
  dir.Write(".librarianignore", "!keep.txt\n");
  dir.Write("keep.txt", "1");
  dir.Write("drop.txt", "1");
  Result<CrawlResult> result = CrawlDir(dir);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(Paths(*result),
            (std::vector<std::string>{".gitignore", ".librarianignore", "keep.txt"}));
  ASSERT_EQ(result->warnings.size(), 1u);
  EXPECT_EQ(result->warnings[0],
            ".gitignore:2: glob \"bad[\": unterminated character class at offset 3");
}

TEST(CrawlTest, IncludeAndExclude) {
  TempDir dir;
  dir.Write("README.md", "1");
  dir.Write("notes.md", "1");
  dir.Write("src/a.cc", "1");
  dir.Write("src/a.h", "1");
  dir.Write("src/x/b.cc", "1");
  dir.Write("src/gen/c.cc", "1");
  dir.Write("lib/any.bin.txt", "1");
  dir.Write("lib/deep/any2", "1");
  CrawlOptions options;
  options.include = {"src/**/*.cc", "/README.md", "lib/"};
  options.exclude = {"src/gen/", "*.bin.txt"};
  Result<CrawlResult> result = CrawlDir(dir, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Paths(*result),
            (std::vector<std::string>{"README.md", "lib/deep/any2", "src/a.cc", "src/x/b.cc"}));
}

TEST(CrawlTest, BadGlobsNameTheField) {
  TempDir dir;
  CrawlOptions options;
  options.exclude = {"ok", "[a"};
  Result<CrawlResult> result = CrawlDir(dir, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(),
            "exclude[1]: glob \"[a\": unterminated character class at offset 0");

  CrawlOptions too_many;
  too_many.include.assign(kMaxGlobsPerList + 1, "*.cc");
  result = CrawlDir(dir, too_many);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "include: at most 256 patterns, got 257");

  CrawlOptions zero;
  zero.max_files = 0;
  EXPECT_EQ(CrawlDir(dir, zero).status().message(), "maxFiles: must be at least 1");
}

TEST(CrawlTest, MaxFilesTruncatesInSortedOrder) {
  TempDir dir;
  for (const char* name : {"e.txt", "d/x.txt", "c.txt", "b.txt", "a.txt"}) dir.Write(name, "1");
  CrawlOptions options;
  options.max_files = 3;
  Result<CrawlResult> result = CrawlDir(dir, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(Paths(*result), (std::vector<std::string>{"a.txt", "b.txt", "c.txt"}));
  EXPECT_TRUE(result->truncated);
  EXPECT_EQ(result->files_hashed, 3u);

  options.max_files = 5;
  result = CrawlDir(dir, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->files.size(), 5u);
  EXPECT_FALSE(result->truncated);
}

TEST(CrawlTest, SizeCapAndBinarySkip) {
  TempDir dir;
  dir.Write("big.txt", std::string(11, 'x'));
  dir.Write("fits.txt", std::string(10, 'x'));
  CrawlOptions options;
  options.max_file_bytes = 10;
  Result<CrawlResult> result = CrawlDir(dir, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(Paths(*result), std::vector<std::string>{"fits.txt"});
  EXPECT_EQ(Skips(*result), std::vector<std::string>{"big.txt:large"});

  TempDir bin;
  std::string early(200, 'a');
  early[100] = '\0';
  std::string late(9000, 'a');
  late[8500] = '\0';  // past the 8 KiB probe: kept as text
  bin.Write("early.bin", early);
  bin.Write("late.txt", late);
  bin.Write("empty", "");
  result = CrawlDir(bin);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(Paths(*result), (std::vector<std::string>{"empty", "late.txt"}));
  EXPECT_EQ(Skips(*result), std::vector<std::string>{"early.bin:binary"});
}

TEST(CrawlTest, DeferNewFilesListsThemUnreadForReadCandidate) {
  TempDir dir;
  dir.Write("known.txt", "known");
  dir.Write("new.txt", "fresh");
  std::string early(200, 'a');
  early[100] = '\0';
  dir.Write("early.bin", early);
  dir.Write("big.txt", std::string(301, 'x'));
  Manifest manifest;
  {
    Result<CrawlResult> first = CrawlDir(dir);
    ASSERT_TRUE(first.ok());
    for (const FileEntry& f : first->files) {
      if (f.path == "known.txt") manifest[f.path] = {f.size, f.mtime_ns, f.sha256};
    }
  }
  CrawlOptions options;
  options.defer_new_files = true;
  options.max_file_bytes = 300;
  Result<CrawlResult> result = CrawlDir(dir, options, &manifest);
  ASSERT_TRUE(result.ok());
  // The binary is listed (its probe is left to the reader); the size cap still applies.
  EXPECT_EQ(Paths(*result), (std::vector<std::string>{"early.bin", "known.txt", "new.txt"}));
  EXPECT_EQ(Skips(*result), std::vector<std::string>{"big.txt:large"});
  EXPECT_EQ(result->files_hashed, 0u);
  const FileEntry& bin = result->files[0];
  const FileEntry& known = result->files[1];
  const FileEntry& fresh = result->files[2];
  EXPECT_TRUE(bin.unread);
  EXPECT_FALSE(known.unread);
  EXPECT_EQ(known.change, FileChange::kUnchanged);
  EXPECT_EQ(known.sha256, base::Sha256Hex("known"));
  EXPECT_TRUE(fresh.unread);
  EXPECT_EQ(fresh.change, FileChange::kAdded);
  EXPECT_TRUE(fresh.sha256.empty());
  EXPECT_EQ(fresh.size, 5u);

  CandidateRead read = ReadCandidate(dir.Abs("new.txt"), false, 300, 8192);
  EXPECT_FALSE(read.skip.has_value());
  EXPECT_EQ(read.content, "fresh");
  EXPECT_EQ(read.mtime_ns, fresh.mtime_ns);
  read = ReadCandidate(dir.Abs("early.bin"), false, 1000, 8192);
  EXPECT_EQ(read.skip, SkipReason::kBinary);
  EXPECT_TRUE(read.content.empty());
  EXPECT_EQ(ReadCandidate(dir.Abs("big.txt"), false, 300, 8192).skip, SkipReason::kLarge);
  EXPECT_EQ(ReadCandidate(dir.Abs("missing.txt"), false, 10, 8192).skip, SkipReason::kUnreadable);
  EXPECT_EQ(ReadCandidate(dir.path(), false, 10, 8192).skip, SkipReason::kNotRegular);
}

TEST(CrawlTest, SymlinksInsideKeptOutsideAndLoopsSkipped) {
  TempDir dir;
  TempDir outside;
  outside.Write("secret.txt", "s");
  outside.Write("d/f.txt", "s");
  dir.Write("real/file.txt", "r");
  dir.Symlink("real/file.txt", "inside.txt");
  dir.Symlink(outside.Abs("secret.txt"), "outside.txt");
  dir.Symlink(outside.Abs("d"), "outside_dir");
  dir.Symlink("real", "inside_dir");
  dir.Symlink(".", "self_dir");  // a directory loop, were it followed
  dir.Symlink("loop_b", "loop_a");
  dir.Symlink("loop_a", "loop_b");
  dir.Symlink("nowhere", "dangling");
  dir.Write(".git/config", "[remote] url = secret");
  dir.Symlink(".git/config", "git_config");
  Result<CrawlResult> result = CrawlDir(dir);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(Paths(*result), (std::vector<std::string>{"inside.txt", "real/file.txt"}));
  EXPECT_TRUE(result->files[0].symlink);
  EXPECT_EQ(result->files[0].sha256, base::Sha256Hex("r"));
  EXPECT_EQ(Skips(*result), (std::vector<std::string>{
                                "dangling:symlink_broken", "git_config:symlink_hidden",
                                "inside_dir:symlink_directory", "loop_a:symlink_broken",
                                "loop_b:symlink_broken", "outside.txt:symlink_outside",
                                "outside_dir:symlink_outside", "self_dir:symlink_directory"}));
}

TEST(CrawlTest, UnreadableEntriesAreSkippedNotFatal) {
  TempDir dir;
  dir.Write("ok.txt", "1");
  dir.Write("locked.txt", "1");
  dir.Write("closed/inner.txt", "1");
  ASSERT_EQ(chmod(dir.Abs("locked.txt").c_str(), 0), 0);
  ASSERT_EQ(chmod(dir.Abs("closed").c_str(), 0), 0);
  Result<CrawlResult> result = CrawlDir(dir);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  if (geteuid() == 0) {
    // root bypasses permission bits, so chmod 000 blocks nothing; only survival is checked.
    GTEST_SKIP() << "running as root: chmod 000 does not make files unreadable";
  }
  EXPECT_EQ(Paths(*result), std::vector<std::string>{"ok.txt"});
  EXPECT_EQ(Skips(*result),
            (std::vector<std::string>{"closed:unreadable", "locked.txt:unreadable"}));
  EXPECT_EQ(result->skipped[1].detail, "Permission denied");
}

TEST(CrawlTest, IncrementalHashingSkipsUnchangedFiles) {
  TempDir dir;
  dir.Write("a.txt", "aaa");
  dir.Write("b.txt", "bbb");
  dir.Write("c.txt", "ccc");
  Result<CrawlResult> first = CrawlDir(dir);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->files_hashed, 3u);
  const Manifest manifest = ToManifest(*first);

  Result<CrawlResult> second = CrawlDir(dir, {}, &manifest);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->files_hashed, 0u);
  for (const FileEntry& file : second->files) {
    EXPECT_EQ(file.change, FileChange::kUnchanged) << file.path;
    EXPECT_EQ(file.sha256, manifest.at(file.path).sha256);
  }

  // Edit a.txt (new size), touch b.txt (same bytes, new mtime), add d.txt.
  dir.Write("a.txt", "aaaa");
  const timespec times[2] = {{.tv_sec = 1'000'000'000, .tv_nsec = 5},
                             {.tv_sec = 1'000'000'000, .tv_nsec = 5}};
  ASSERT_EQ(utimensat(AT_FDCWD, dir.Abs("b.txt").c_str(), times, 0), 0);
  dir.Write("d.txt", "ddd");
  Result<CrawlResult> third = CrawlDir(dir, {}, &manifest);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->files_hashed, 3u);
  ASSERT_EQ(Paths(*third), (std::vector<std::string>{"a.txt", "b.txt", "c.txt", "d.txt"}));
  EXPECT_EQ(third->files[0].change, FileChange::kModified);
  EXPECT_EQ(third->files[0].sha256, base::Sha256Hex("aaaa"));
  EXPECT_EQ(third->files[1].change, FileChange::kTouched);
  EXPECT_EQ(third->files[1].mtime_ns, 1'000'000'000'000'000'005);
  EXPECT_EQ(third->files[2].change, FileChange::kUnchanged);
  EXPECT_EQ(third->files[3].change, FileChange::kAdded);

  CrawlOptions force;
  force.force = true;
  Result<CrawlResult> forced = CrawlDir(dir, force, &manifest);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->files_hashed, 4u);
  EXPECT_EQ(forced->files[2].change, FileChange::kTouched);
}

TEST(CrawlTest, CancellationIsPolledPerDirectory) {
  TempDir dir;
  dir.Write("a/1.txt", "1");
  dir.Write("b/2.txt", "2");
  base::Cancellation cancel;
  cancel.Cancel();
  Result<CrawlResult> result = Crawl(dir.path(), {}, nullptr, cancel, base::Progress());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), base::StatusCode::kCancelled);

  // Cancelled mid-walk, from the progress callback of the first directory.
  base::Cancellation later;
  int reports = 0;
  base::Progress progress([&](double, double, const std::string&) {
    ++reports;
    later.Cancel();
  });
  result = Crawl(dir.path(), {}, nullptr, later, progress);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), base::StatusCode::kCancelled);
  EXPECT_EQ(reports, 1);
}

TEST(CrawlTest, ProgressReportsFilesSeen) {
  TempDir dir;
  dir.Write("a/1.txt", "1");
  dir.Write("a/2.txt", "2");
  dir.Write("b/3.txt", "3");
  base::Cancellation cancel;
  std::vector<double> done;
  base::Progress progress([&](double value, double total, const std::string&) {
    EXPECT_EQ(total, 0);
    done.push_back(value);
  });
  Result<CrawlResult> result = Crawl(dir.path(), {}, nullptr, cancel, progress);
  ASSERT_TRUE(result.ok());
  // One report per directory (root, a, b) and a final one.
  EXPECT_EQ(done, (std::vector<double>{0, 0, 2, 3}));
}

TEST(CrawlTest, DepthAndEntryBounds) {
  TempDir dir;
  dir.Write("a/b/c/deep.txt", "1");
  dir.Write("a/top.txt", "1");
  CrawlOptions options;
  options.max_depth = 2;
  Result<CrawlResult> result = CrawlDir(dir, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(Paths(*result), std::vector<std::string>{"a/top.txt"});
  EXPECT_EQ(Skips(*result), std::vector<std::string>{"a/b/c:too_deep"});

  CrawlOptions few;
  few.max_entries = 2;
  result = CrawlDir(dir, few);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), base::StatusCode::kResourceExhausted);
}

TEST(CrawlTest, BadRoot) {
  base::Cancellation cancel;
  EXPECT_EQ(Crawl("relative/root", {}, nullptr, cancel, base::Progress()).status().message(),
            "workspace: must be an absolute path");
  EXPECT_EQ(Crawl("/nonexistent/trove", {}, nullptr, cancel, base::Progress()).status().code(),
            base::StatusCode::kNotFound);
}

}  // namespace
}  // namespace trove::librarian::crawl

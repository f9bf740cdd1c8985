#include "base/env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/testing/temp_dir.h"

namespace trove::base {
namespace {

using Names = std::vector<std::string>;

// ---------------------------------------------------------------------------------------------
// The same contract, checked against both implementations, so MemEnv cannot drift from the
// real filesystem.

enum class EnvKind { kPosix, kMem };

class EnvContractTest : public ::testing::TestWithParam<EnvKind> {
 protected:
  void SetUp() override {
    if (GetParam() == EnvKind::kPosix) {
      env_ = std::make_unique<PosixEnv>();
      temp_ = std::make_unique<testing::TempDir>("trove_env_test");
      root_ = temp_->path();
    } else {
      env_ = std::make_unique<MemEnv>();
      root_ = "/tmp/trove_env_test";
      ASSERT_TRUE(env_->CreateDir(root_).ok());
    }
  }

  std::string Path(const std::string& name) const { return root_ + "/" + name; }

  std::unique_ptr<Env> env_;
  std::unique_ptr<testing::TempDir> temp_;  // PosixEnv only
  std::string root_;
};

INSTANTIATE_TEST_SUITE_P(Envs, EnvContractTest, ::testing::Values(EnvKind::kPosix, EnvKind::kMem),
                         [](const ::testing::TestParamInfo<EnvKind>& param_info) {
                           return param_info.param == EnvKind::kPosix ? "Posix" : "Mem";
                         });

TEST_P(EnvContractTest, WriteThenRead) {
  ASSERT_TRUE(env_->WriteFile(Path("f"), "hello").ok());
  Result<std::string> read = env_->ReadFile(Path("f"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, "hello");
}

TEST_P(EnvContractTest, WriteReplacesAndKeepsBinaryBytes) {
  ASSERT_TRUE(env_->WriteFile(Path("f"), "a much longer first version").ok());
  const std::string binary("\0\x01\xff\n\0z", 6);
  ASSERT_TRUE(env_->WriteFile(Path("f"), binary).ok());
  EXPECT_EQ(*env_->ReadFile(Path("f")), binary);
  EXPECT_EQ(*env_->FileSize(Path("f")), 6u);
}

TEST_P(EnvContractTest, EmptyFile) {
  ASSERT_TRUE(env_->WriteFile(Path("empty"), "").ok());
  EXPECT_TRUE(env_->FileExists(Path("empty")));
  EXPECT_EQ(*env_->ReadFile(Path("empty")), "");
  EXPECT_EQ(*env_->FileSize(Path("empty")), 0u);
}

TEST_P(EnvContractTest, LargeFile) {
  std::string big(3 * 1024 * 1024 + 17, 'x');
  for (std::size_t i = 0; i < big.size(); i += 4093) big[i] = static_cast<char>(i);
  ASSERT_TRUE(env_->WriteFile(Path("big"), big).ok());
  EXPECT_EQ(*env_->ReadFile(Path("big")), big);
  EXPECT_EQ(*env_->FileSize(Path("big")), big.size());
}

TEST_P(EnvContractTest, WriteLeavesNoTemporaryFiles) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(env_->WriteFile(Path("f"), std::to_string(i)).ok());
  EXPECT_EQ(*env_->ListDir(root_), Names{"f"});
}

TEST_P(EnvContractTest, ReadMissingIsNotFoundAndSaysWhere) {
  Result<std::string> read = env_->ReadFile(Path("missing"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(read.status().message(), "open " + Path("missing") + ": no such file or directory");
}

TEST_P(EnvContractTest, ReadDirectoryIsIo) {
  ASSERT_TRUE(env_->CreateDir(Path("d")).ok());
  Result<std::string> read = env_->ReadFile(Path("d"));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kIo);
  EXPECT_NE(read.status().message().find("is a directory"), std::string::npos)
      << read.status().message();
}

TEST_P(EnvContractTest, WriteIntoMissingDirectoryIsNotFound) {
  for (bool append : {false, true}) {
    const std::string path = Path("no/such/f");
    Status status = append ? env_->AppendFile(path, "x") : env_->WriteFile(path, "x");
    EXPECT_EQ(status.code(), StatusCode::kNotFound) << status.ToString();
    EXPECT_EQ(status.message(), "open " + path + ": no such file or directory");
    EXPECT_FALSE(env_->FileExists(path));
  }
}

TEST_P(EnvContractTest, WriteOverDirectoryFailsAndLeavesItAlone) {
  ASSERT_TRUE(env_->CreateDir(Path("d")).ok());
  Status status = env_->WriteFile(Path("d"), "x");
  EXPECT_EQ(status.code(), StatusCode::kIo) << status.ToString();
  EXPECT_NE(status.message().find(Path("d")), std::string::npos);
  EXPECT_EQ(*env_->ListDir(root_), Names{"d"});
  EXPECT_EQ(env_->AppendFile(Path("d"), "x").code(), StatusCode::kIo);
}

TEST_P(EnvContractTest, WriteBelowAFileFails) {
  ASSERT_TRUE(env_->WriteFile(Path("f"), "x").ok());
  Status status = env_->WriteFile(Path("f/g"), "y");
  EXPECT_EQ(status.code(), StatusCode::kIo) << status.ToString();
  EXPECT_EQ(status.message(), "open " + Path("f/g") + ": not a directory");
}

TEST_P(EnvContractTest, AppendCreatesThenAppends) {
  ASSERT_TRUE(env_->AppendFile(Path("log"), "one\n").ok());
  ASSERT_TRUE(env_->AppendFile(Path("log"), "").ok());
  ASSERT_TRUE(env_->AppendFile(Path("log"), "two\n").ok());
  EXPECT_EQ(*env_->ReadFile(Path("log")), "one\ntwo\n");
}

TEST_P(EnvContractTest, ConcurrentAppendsAllLand) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) ASSERT_TRUE(env_->AppendFile(Path("log"), "ab").ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(*env_->FileSize(Path("log")), 800u);
}

TEST_P(EnvContractTest, FileExists) {
  EXPECT_FALSE(env_->FileExists(Path("f")));
  ASSERT_TRUE(env_->WriteFile(Path("f"), "x").ok());
  ASSERT_TRUE(env_->CreateDir(Path("d")).ok());
  EXPECT_TRUE(env_->FileExists(Path("f")));
  EXPECT_TRUE(env_->FileExists(Path("d")));
  EXPECT_TRUE(env_->FileExists(root_));
  EXPECT_TRUE(env_->FileExists("/"));
}

TEST_P(EnvContractTest, DeleteFile) {
  ASSERT_TRUE(env_->WriteFile(Path("f"), "x").ok());
  ASSERT_TRUE(env_->DeleteFile(Path("f")).ok());
  EXPECT_FALSE(env_->FileExists(Path("f")));
  Status again = env_->DeleteFile(Path("f"));
  EXPECT_EQ(again.code(), StatusCode::kNotFound);
  EXPECT_EQ(again.message(), "unlink " + Path("f") + ": no such file or directory");
}

TEST_P(EnvContractTest, DeleteFileRefusesDirectory) {
  ASSERT_TRUE(env_->CreateDir(Path("d")).ok());
  Status status = env_->DeleteFile(Path("d"));
  EXPECT_EQ(status.code(), StatusCode::kIo) << status.ToString();
  EXPECT_TRUE(env_->FileExists(Path("d")));
}

TEST_P(EnvContractTest, CreateDirIsRecursiveAndIdempotent) {
  ASSERT_TRUE(env_->CreateDir(Path("a/b/c")).ok());
  EXPECT_TRUE(env_->FileExists(Path("a")));
  EXPECT_TRUE(env_->FileExists(Path("a/b")));
  EXPECT_TRUE(env_->FileExists(Path("a/b/c")));
  ASSERT_TRUE(env_->CreateDir(Path("a/b/c")).ok());
  ASSERT_TRUE(env_->CreateDir(Path("a/b/c/")).ok());
  ASSERT_TRUE(env_->CreateDir(Path("a")).ok());
  ASSERT_TRUE(env_->WriteFile(Path("a/b/c/f"), "x").ok());
  EXPECT_EQ(*env_->ReadFile(Path("a/b/c/f")), "x");
}

TEST_P(EnvContractTest, CreateDirThroughAFileFails) {
  ASSERT_TRUE(env_->WriteFile(Path("f"), "x").ok());
  for (const std::string& dir : {Path("f"), Path("f/sub")}) {
    Status status = env_->CreateDir(dir);
    EXPECT_EQ(status.code(), StatusCode::kIo) << status.ToString();
    EXPECT_EQ(status.message(), "mkdir " + Path("f") + ": file exists");
  }
  EXPECT_EQ(*env_->ReadFile(Path("f")), "x");
}

TEST_P(EnvContractTest, ListDirGivesSortedDirectChildren) {
  ASSERT_TRUE(env_->CreateDir(Path("sub/deeper")).ok());
  ASSERT_TRUE(env_->CreateDir(Path("empty")).ok());
  ASSERT_TRUE(env_->WriteFile(Path("b.txt"), "").ok());
  ASSERT_TRUE(env_->WriteFile(Path("a.txt"), "").ok());
  ASSERT_TRUE(env_->WriteFile(Path("sub/inner.txt"), "").ok());
  ASSERT_TRUE(env_->WriteFile(Path("sub/deeper/x"), "").ok());
  EXPECT_EQ(*env_->ListDir(root_), (Names{"a.txt", "b.txt", "empty", "sub"}));
  EXPECT_EQ(*env_->ListDir(Path("sub")), (Names{"deeper", "inner.txt"}));
  EXPECT_EQ(*env_->ListDir(Path("sub/")), (Names{"deeper", "inner.txt"}));
  EXPECT_EQ(*env_->ListDir(Path("empty")), Names{});
}

TEST_P(EnvContractTest, ListDirDoesNotConfuseSiblingPrefixes) {
  ASSERT_TRUE(env_->CreateDir(Path("ab")).ok());
  ASSERT_TRUE(env_->CreateDir(Path("a")).ok());
  ASSERT_TRUE(env_->WriteFile(Path("ab/x"), "").ok());
  ASSERT_TRUE(env_->WriteFile(Path("a.b"), "").ok());
  EXPECT_EQ(*env_->ListDir(Path("a")), Names{});
}

TEST_P(EnvContractTest, ListDirErrors) {
  Result<Names> missing = env_->ListDir(Path("missing"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "opendir " + Path("missing") + ": no such file or directory");
  ASSERT_TRUE(env_->WriteFile(Path("f"), "").ok());
  Result<Names> file = env_->ListDir(Path("f"));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kIo);
  EXPECT_EQ(file.status().message(), "opendir " + Path("f") + ": not a directory");
}

TEST_P(EnvContractTest, FileSizeErrors) {
  Result<std::uint64_t> missing = env_->FileSize(Path("missing"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "stat " + Path("missing") + ": no such file or directory");
  ASSERT_TRUE(env_->CreateDir(Path("d")).ok());
  Result<std::uint64_t> dir = env_->FileSize(Path("d"));
  EXPECT_EQ(dir.status().code(), StatusCode::kIo);
  EXPECT_EQ(dir.status().message(), "stat " + Path("d") + ": is a directory");
}

TEST_P(EnvContractTest, EquivalentSpellingsOfAPath) {
  ASSERT_TRUE(env_->CreateDir(Path("d")).ok());
  ASSERT_TRUE(env_->WriteFile(Path("d/f"), "x").ok());
  EXPECT_EQ(*env_->ReadFile(Path("d//f")), "x");
  EXPECT_EQ(*env_->ReadFile(Path("d/./f")), "x");
  EXPECT_EQ(*env_->ReadFile(Path("d/../d/f")), "x");
}

TEST_P(EnvContractTest, MonotonicClockNeverGoesBack) {
  std::int64_t last = env_->MonotonicMicros();
  for (int i = 0; i < 100; ++i) {
    std::int64_t now = env_->MonotonicMicros();
    EXPECT_GE(now, last);
    last = now;
  }
  const std::int64_t before = env_->MonotonicMicros();
  env_->SleepMicros(1000);
  EXPECT_GE(env_->MonotonicMicros() - before, 1000);
  env_->SleepMicros(0);
  env_->SleepMicros(-5);
}

TEST_P(EnvContractTest, WallClockIsAfter2020) {
  EXPECT_GT(env_->NowMicros(), std::int64_t{1'577'836'800} * 1'000'000);
}

// ---------------------------------------------------------------------------------------------
// MemEnv only

TEST(MemEnvTest, ClockStandsStillUntilAdvanced) {
  MemEnv env;
  EXPECT_EQ(env.NowMicros(), MemEnv::kDefaultStartMicros);
  EXPECT_EQ(env.MonotonicMicros(), 0);
  EXPECT_EQ(env.NowMicros(), MemEnv::kDefaultStartMicros);
  env.AdvanceMicros(1'500'000);
  EXPECT_EQ(env.NowMicros(), MemEnv::kDefaultStartMicros + 1'500'000);
  EXPECT_EQ(env.MonotonicMicros(), 1'500'000);
  env.AdvanceMicros(0);
  EXPECT_EQ(env.MonotonicMicros(), 1'500'000);
}

TEST(MemEnvTest, StartTimeIsSettable) {
  MemEnv env(42);
  EXPECT_EQ(env.NowMicros(), 42);
}

TEST(MemEnvTest, SleepAdvancesTheClockWithoutBlocking) {
  MemEnv env;
  PosixEnv real;
  const std::int64_t real_before = real.MonotonicMicros();
  env.SleepMicros(3'600'000'000);  // an hour
  EXPECT_EQ(env.MonotonicMicros(), 3'600'000'000);
  EXPECT_EQ(env.NowMicros(), MemEnv::kDefaultStartMicros + 3'600'000'000);
  EXPECT_LT(real.MonotonicMicros() - real_before, 60'000'000);
  env.SleepMicros(-10);
  EXPECT_EQ(env.MonotonicMicros(), 3'600'000'000);
}

TEST(MemEnvDeathTest, AdvanceBackwardsIsAProgrammerError) {
  MemEnv env;
  EXPECT_DEATH(env.AdvanceMicros(-1), "CHECK failed");
}

TEST(MemEnvTest, RootsAlwaysExist) {
  MemEnv env;
  EXPECT_TRUE(env.FileExists("/"));
  EXPECT_TRUE(env.FileExists(""));
  EXPECT_TRUE(env.FileExists("."));
  EXPECT_EQ(*env.ListDir("/"), Names{});
  EXPECT_TRUE(env.CreateDir("/").ok());
  EXPECT_EQ(env.WriteFile("/", "x").code(), StatusCode::kIo);
  EXPECT_EQ(env.DeleteFile("/").code(), StatusCode::kIo);
}

TEST(MemEnvTest, RelativeAndAbsoluteTreesAreSeparate) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDir("rel/dir").ok());
  ASSERT_TRUE(env.CreateDir("/abs").ok());
  ASSERT_TRUE(env.WriteFile("top.txt", "r").ok());
  EXPECT_EQ(*env.ListDir(""), (Names{"rel", "top.txt"}));
  EXPECT_EQ(*env.ListDir("."), (Names{"rel", "top.txt"}));
  EXPECT_EQ(*env.ListDir("/"), Names{"abs"});
  EXPECT_EQ(*env.ListDir("./rel"), Names{"dir"});
  EXPECT_FALSE(env.FileExists("/rel"));
  EXPECT_EQ(*env.ReadFile("./top.txt"), "r");
}

TEST(MemEnvTest, DotDotStopsAtTheRoot) {
  MemEnv env;
  ASSERT_TRUE(env.WriteFile("/../../f", "x").ok());
  EXPECT_EQ(*env.ReadFile("/f"), "x");
}

TEST(MemEnvTest, FailedCreateDirCreatesNothing) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDir("/a").ok());
  ASSERT_TRUE(env.WriteFile("/a/f", "x").ok());
  EXPECT_FALSE(env.CreateDir("/a/f/g/h").ok());
  EXPECT_EQ(*env.ListDir("/a"), Names{"f"});
}

TEST(MemEnvTest, InstancesDoNotShareState) {
  MemEnv a;
  MemEnv b;
  ASSERT_TRUE(a.WriteFile("/f", "x").ok());
  a.AdvanceMicros(10);
  EXPECT_FALSE(b.FileExists("/f"));
  EXPECT_EQ(b.MonotonicMicros(), 0);
}

TEST(MemEnvTest, ConcurrentUse) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDir("/d").ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&env, t] {
      for (int i = 0; i < 50; ++i) {
        const std::string path = "/d/" + std::to_string(t) + "_" + std::to_string(i);
        ASSERT_TRUE(env.WriteFile(path, path).ok());
        ASSERT_EQ(*env.ReadFile(path), path);
        ASSERT_TRUE(env.ListDir("/d").ok());
        env.AdvanceMicros(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(env.ListDir("/d")->size(), 200u);
  EXPECT_EQ(env.MonotonicMicros(), 200);
}

// ---------------------------------------------------------------------------------------------
// PosixEnv only

class PosixEnvTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return temp_.Abs(name); }

  PosixEnv env_;
  testing::TempDir temp_{"trove_env_test"};
  const std::string root_ = temp_.path();
};

TEST_F(PosixEnvTest, ReadersSeeOldOrNewContentsNeverAMix) {
  const std::string a(256 * 1024, 'a');
  const std::string b(128 * 1024, 'b');
  ASSERT_TRUE(env_.WriteFile(Path("f"), a).ok());
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(env_.WriteFile(Path("f"), i % 2 ? a : b).ok());
    done = true;
  });
  int reads = 0;
  while (!done.load() || reads == 0) {
    Result<std::string> read = env_.ReadFile(Path("f"));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    ASSERT_TRUE(*read == a || *read == b) << "torn read of " << read->size() << " bytes";
    ++reads;
  }
  writer.join();
}

TEST_F(PosixEnvTest, FilesAreVisibleToTheRealFilesystem) {
  ASSERT_TRUE(env_.WriteFile(Path("f"), "abc").ok());
  EXPECT_EQ(std::filesystem::file_size(Path("f")), 3u);
  EXPECT_TRUE(std::filesystem::is_regular_file(Path("f")));
}

TEST_F(PosixEnvTest, RelativePathsUseTheWorkingDirectory) {
  // A file name without a directory writes its temporary file in ".".
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(root_);
  Status status = env_.WriteFile("plain", "x");
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(*env_.ReadFile(Path("plain")), "x");
}

TEST_F(PosixEnvTest, WallClockMatchesTime) {
  const std::int64_t seconds = static_cast<std::int64_t>(std::time(nullptr));
  const std::int64_t now = env_.NowMicros() / 1'000'000;
  EXPECT_LE(std::abs(now - seconds), 5);
}

// MappedFile gives a file's bytes as they are, maps nothing for an empty file, refuses what
// is not a regular file as kUnsupported (callers then read it) and a missing one as
// kNotFound, naming the path, and moves its mapping.
TEST(MappedFileTest, MapsARegularFile) {
  testing::TempDir dir("trove_mapped_test");
  PosixEnv env;
  std::string data(3 << 20, '\0');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + (i >> 9));
  ASSERT_TRUE(env.WriteFile(dir.Abs("big.bin"), data).ok());
  Result<MappedFile> mapped = MappedFile::Open(dir.Abs("big.bin"));
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  ASSERT_EQ(mapped->bytes().size(), data.size());
  EXPECT_EQ(std::memcmp(mapped->bytes().data(), data.data(), data.size()), 0);
  MappedFile moved = std::move(*mapped);
  EXPECT_TRUE(mapped->bytes().empty());  // NOLINT(bugprone-use-after-move): defined state
  EXPECT_EQ(moved.bytes().size(), data.size());
  EXPECT_EQ(moved.bytes()[12345], static_cast<std::uint8_t>(data[12345]));

  ASSERT_TRUE(env.WriteFile(dir.Abs("empty.bin"), "").ok());
  Result<MappedFile> empty = MappedFile::Open(dir.Abs("empty.bin"));
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_TRUE(empty->bytes().empty());

  Result<MappedFile> missing = MappedFile::Open(dir.Abs("missing.bin"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing.bin"), std::string::npos);
  Result<MappedFile> directory = MappedFile::Open(dir.path());
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace trove::base

#include "librarian/crawl/file_timeout.h"

#include <gtest/gtest.h>

#include <vector>

namespace trove::librarian::crawl {
namespace {

// An attempt that times out `stalls` times, then succeeds; records the limits it was given.
struct StallingAttempt {
  int stalls;
  std::vector<std::int64_t> limits;
  Status operator()(std::int64_t limit_ms) {
    limits.push_back(limit_ms);
    if (stalls-- > 0) return Status::DeadlineExceeded("a.cc: parse exceeded the limit");
    return Status::Ok();
  }
};

FileAttempts RunWith(const FileTimeoutOptions& options, StallingAttempt& stalling,
                     bool final_pass = false) {
  return RunFileWithTimeouts(
      options, [&](std::int64_t limit) { return stalling(limit); }, final_pass);
}

TEST(FileTimeoutTest, ParsesAndValidates) {
  EXPECT_EQ(*ParseFileTimeoutPolicy("retry"), FileTimeoutPolicy::kRetry);
  EXPECT_EQ(ParseFileTimeoutPolicy("Skip").status().message(),
            "fileTimeoutPolicy: must be one of skip, retry, fail");
  EXPECT_EQ(FileTimeoutPolicyName(FileTimeoutPolicy::kFail), "fail");
  EXPECT_TRUE(ValidateFileTimeoutOptions({}).ok());
  EXPECT_TRUE(ValidateFileTimeoutOptions({.timeout_ms = 3'600'000, .retries = 10}).ok());
  EXPECT_EQ(ValidateFileTimeoutOptions({.timeout_ms = 3'600'001}).message(),
            "fileTimeoutMs: must be between 0 and 3600000, got 3600001");
  EXPECT_EQ(ValidateFileTimeoutOptions({.retries = 11}).message(),
            "fileTimeoutRetries: must be between 0 and 10, got 11");
  EXPECT_EQ(ValidateFileTimeoutOptions({.retries = -1}).code(), base::StatusCode::kInvalidArgument);
}

TEST(FileTimeoutTest, RetriesWithTheSameLimitThenSucceeds) {
  StallingAttempt stalling{.stalls = 2, .limits = {}};
  const FileAttempts out = RunWith({.timeout_ms = 100, .retries = 2}, stalling);
  EXPECT_EQ(out.verdict, FileVerdict::kDone);
  EXPECT_EQ(out.attempts, 3);
  EXPECT_EQ(out.timeouts, 2);
  EXPECT_EQ(stalling.limits, (std::vector<std::int64_t>{100, 100, 100}));
}

TEST(FileTimeoutTest, PoliciesAfterTheLastAttempt) {
  StallingAttempt skip{.stalls = 100, .limits = {}};
  EXPECT_EQ(RunWith({.timeout_ms = 50, .retries = 1}, skip).verdict, FileVerdict::kTimedOut);
  EXPECT_EQ(skip.limits.size(), 2u);

  StallingAttempt fail{.stalls = 100, .limits = {}};
  const FileAttempts failed = RunWith({.timeout_ms = 50, .policy = FileTimeoutPolicy::kFail}, fail);
  EXPECT_EQ(failed.verdict, FileVerdict::kFailRun);
  EXPECT_EQ(failed.last.message(), "a.cc: parse exceeded the limit");

  // retry: deferred, then one end-of-run attempt with twice the limit.
  StallingAttempt retry{.stalls = 1, .limits = {}};
  const FileTimeoutOptions options{.timeout_ms = 50, .policy = FileTimeoutPolicy::kRetry};
  EXPECT_EQ(RunWith(options, retry).verdict, FileVerdict::kDeferred);
  EXPECT_EQ(RunWith(options, retry, /*final_pass=*/true).verdict, FileVerdict::kDone);
  EXPECT_EQ(retry.limits, (std::vector<std::int64_t>{50, 100}));
  StallingAttempt stuck{.stalls = 100, .limits = {}};
  EXPECT_EQ(RunWith(options, stuck, /*final_pass=*/true).verdict, FileVerdict::kTimedOut);
}

TEST(FileTimeoutTest, OtherErrorsFailTheFileWithoutRetry) {
  int calls = 0;
  const FileAttempts out = RunFileWithTimeouts({.retries = 5}, [&](std::int64_t) {
    ++calls;
    return Status::Malformed("a.cc: not UTF-8");
  });
  EXPECT_EQ(out.verdict, FileVerdict::kFailed);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace trove::librarian::crawl

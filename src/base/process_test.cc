// The process runner (process.h) on real programs: /bin/sh scripts for output, exit codes and
// signals, `sleep` for the time limit, `yes` for the output cap, and PATH lookup.
#include "base/process.h"

#include <gtest/gtest.h>

namespace trove::base {
namespace {

TEST(ProcessTest, CollectsStdoutStderrAndTheExitCode) {
  auto r = RunProcess({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 3);
}

TEST(ProcessTest, StdinIsEmptyAndStderrCanBeDiscarded) {
  ProcessOptions options;
  options.capture_stderr = false;
  auto r = RunProcess({"/bin/sh", "-c", "cat; echo done; echo err >&2"}, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "done\n");
  EXPECT_EQ(r->err, "");
  EXPECT_EQ(r->exit_code, 0);
}

TEST(ProcessTest, ASignalIs128PlusItsNumber) {
  auto r = RunProcess({"/bin/sh", "-c", "kill -9 $$"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 128 + 9);
}

TEST(ProcessTest, AMissingProgramIsNotFound) {
  auto r = RunProcess({"/nonexistent/trove-no-such-program"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(RunProcess({}).status().code(), StatusCode::kInvalidArgument);
}

TEST(ProcessTest, TheTimeLimitKillsTheChild) {
  ProcessOptions options;
  options.timeout_micros = 200'000;
  auto r = RunProcess({"/bin/sh", "-c", "sleep 30"}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().message(), "/bin/sh exceeded the time limit of 200 ms");
  // A child that closes its output and keeps running is held to the limit too.
  auto quiet = RunProcess({"/bin/sh", "-c", "exec >&- 2>&-; sleep 30"}, options);
  ASSERT_FALSE(quiet.ok());
  EXPECT_EQ(quiet.status().code(), StatusCode::kDeadlineExceeded);
}

TEST(ProcessTest, TheOutputCapKillsTheChild) {
  ProcessOptions options;
  options.max_output_bytes = 100'000;
  options.search_path = true;
  auto r = RunProcess({"yes"}, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), "yes wrote more than 100000 bytes");
}

TEST(ProcessTest, SearchPathAndFindInPath) {
  ProcessOptions options;
  options.search_path = true;
  auto r = RunProcess({"sh", "-c", "echo found"}, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->out, "found\n");
  // Without the lookup a bare name is a path relative to the working directory.
  EXPECT_EQ(RunProcess({"trove-no-such-program"}).status().code(), StatusCode::kNotFound);
  auto sh = FindInPath("sh");
  ASSERT_TRUE(sh.ok()) << sh.status().ToString();
  EXPECT_EQ(sh->back(), 'h');
  EXPECT_EQ(FindInPath("trove-no-such-program").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace trove::base

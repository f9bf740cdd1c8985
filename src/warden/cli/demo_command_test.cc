// `warden demo` in process: it ends as expected on its own modules (exit 0, coverage lines, the
// changelog), and a plan that misdescribes the modules is caught as deviations (exit 1), so a
// demo that went wrong cannot print "ok". The byte-identity between runs is checked end to end
// in e2e/warden_demo.test.mjs.
#include "warden/cli/demo_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/env.h"
#include "base/testing/temp_dir.h"

namespace trove::warden::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct DemoRun {
  int code = 0;
  std::string out;
};

DemoRun RunIn(const std::string& dir, const samples::DemoPlan& plan) {
  base::PosixEnv env;
  GlobalOptions global;
  global.cwd = dir;
  ::testing::internal::CaptureStdout();
  const int code = RunDemoExpecting(env, global, {.dir = std::string("demo")}, plan);
  return {code, ::testing::internal::GetCapturedStdout()};
}

TEST(DemoCommandTest, EndsAsExpected) {
  base::testing::TempDir dir("trove_demo_test");
  const DemoRun r = RunIn(dir.path(), samples::DemoModulesPlan());
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_THAT(r.out, HasSubstr("== step 7: an offline agent pass on v2"));
  EXPECT_THAT(r.out, HasSubstr("# v1 → v2"));
  EXPECT_THAT(r.out, HasSubstr("demo: ok, all 7 steps ended as expected"));
  EXPECT_THAT(r.out, Not(HasSubstr("deviation")));
  // The directory now holds a project: a second run is refused before it writes anything.
  base::PosixEnv env;
  GlobalOptions global;
  global.cwd = dir.path();
  EXPECT_EQ(RunDemo(env, global, {.dir = std::string("demo")}), kExitUsage);
}

TEST(DemoCommandTest, DeviationsExitOne) {
  base::testing::TempDir dir("trove_demo_test");
  samples::DemoPlan wrong = samples::DemoModulesPlan();
  wrong.modified = "checksum";         // the diff will say parse_record
  wrong.exported.push_back("helper");  // v1 seeds two export names, not three
  const DemoRun r = RunIn(dir.path(), wrong);
  EXPECT_EQ(r.code, kExitCheckFailed) << r.out;
  EXPECT_THAT(r.out, HasSubstr("deviation: v1: 2 export names, not 3"));
  EXPECT_THAT(r.out, HasSubstr("deviation: parse_record -> parse_record classified modified"));
  EXPECT_THAT(r.out, HasSubstr("demo: FAILED"));
}

}  // namespace
}  // namespace trove::warden::cli

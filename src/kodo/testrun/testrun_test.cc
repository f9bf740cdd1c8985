#include "kodo/testrun/testrun.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace trove::kodo::testrun {
namespace {

std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::filesystem::path Dir() { return std::filesystem::path(TROVE_KODO_TESTDATA) / "test"; }

TestOutcome RunFile(const std::string& name, const TestOptions& options = {}) {
  return RunTests(Read(Dir() / (name + ".ko")), name + ".ko", options);
}

// Every testdata/kodo/test/NAME.ko prints NAME.out on stdout and NAME.err on stderr (empty when
// absent) and exits with NAME.code (0 when absent), with and without the MIR optimiser.
TEST(KodocTest, GoldenOutputs) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(Dir())) {
    if (entry.path().extension() != ".ko") continue;
    const std::string name = entry.path().stem().string();
    std::filesystem::path base = entry.path();
    const std::string out = Read(base.replace_extension(".out"));
    const std::string err =
        std::filesystem::exists(base.replace_extension(".err")) ? Read(base) : std::string();
    const int code =
        std::filesystem::exists(base.replace_extension(".code")) ? std::stoi(Read(base)) : 0;
    if (std::getenv("TROVE_UPDATE_GOLDEN") != nullptr) {
      // Regenerates the expected files (then read them before committing).
      TestOutcome r = RunFile(name);
      std::ofstream(base.replace_extension(".out")) << r.out;
      if (!r.err.empty()) std::ofstream(base.replace_extension(".err")) << r.err;
      if (r.exit_code != 0) std::ofstream(base.replace_extension(".code")) << r.exit_code << "\n";
      ++files;
      continue;
    }
    for (int level : {0, 1}) {
      TestOutcome r = RunFile(name, {.opt_level = level});
      EXPECT_EQ(r.out, out) << name << " -O" << level;
      EXPECT_EQ(r.err, err) << name << " -O" << level;
      EXPECT_EQ(r.exit_code, code) << name << " -O" << level;
    }
    ++files;
  }
  EXPECT_GE(files, 4);
}

TEST(KodocTest, AFailedAssertionIsReportedAndTheRunGoesOn) {
  TestOutcome r = RunFile("failing");
  // Upstream's runtime returns 0 from main whatever the tests did (docs/kodo.md §4.8).
  EXPECT_EQ(r.exit_code, 0);
  // What a test prints comes after its `... `; the statement after the failed assertion ran.
  EXPECT_NE(r.out.find("test ints differ ... still running after a failed assertion\nFAILED\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("test passes ... ok\n"), std::string::npos);
  EXPECT_NE(r.err.find("assertion failed: assert_eq\n  left:  4\n  right: 5\n"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("  left:  \"ab\"\n  right: \"abc\"\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("assertion failed: assert_ne\n  both values: 2\n"), std::string::npos);
  EXPECT_NE(r.out.find("\ntest result: FAILED. 1 passed; 5 failed; 0 skipped; 0 todo; 6 total\n"),
            std::string::npos)
      << r.out;
}

TEST(KodocTest, AnAbortStopsTheRun) {
  TestOutcome r = RunFile("aborts");
  EXPECT_EQ(r.exit_code, 136);
  EXPECT_EQ(r.out.find("never reached"), std::string::npos);
  EXPECT_NE(r.err.find("attempt to divide by zero"), std::string::npos);
}

TEST(KodocTest, FilterKeepsTestsWhoseNameContainsIt) {
  TestOutcome r = RunFile("passing", {.filter = "math >"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "test math > uses setup ... setup math\nteardown math\nok\n"
            "test math > inner > nested ... setup math\nteardown inner\nteardown math\nok\n"
            "\ntest result: ok. 2 passed; 0 failed; 0 skipped; 0 todo; 2 total\n");
  r = RunFile("passing", {.filter = "no such test"});
  EXPECT_EQ(r.out, "no tests found\n");
  r = RunFile("passing", {.filter = "no such test", .json = true});
  EXPECT_EQ(r.out,
            "{\"event\":\"summary\",\"total\":0,\"passed\":0,\"failed\":0,\"skipped\":0,\"todo\":0}"
            "\n");
}

TEST(KodocTest, ATypeErrorInATestFailsTheRun) {
  TestOutcome r = RunTests(
      "module m {\n meta { purpose: \"m\" }\n test \"bad\" { let x: Int = \"s\" }\n}\n", "m.ko");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error[E0200]"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(KodocTest, SkippedTestsAreNotCompiled) {
  TestOutcome r = RunTests(
      "module m {\n meta { purpose: \"m\" }\n @skip(\"broken\")\n test \"bad\" { let x: Int = "
      "\"s\" }\n test \"good\" { assert(true) }\n}\n",
      "m.ko");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "test bad ... skipped\ntest good ... ok\n\n"
            "test result: ok. 1 passed; 0 failed; 1 skipped; 0 todo; 2 total\n");
}

TEST(KodocTest, PropertyTestsAreReproducible) {
  const std::string text =
      "module m {\n meta { purpose: \"m\" }\n @property(iterations: 20, int_min: 0, int_max: 1000)"
      "\n test \"p\" { forall n: Int { print_int(n) } }\n}\n";
  TestOutcome a = RunTests(text, "m.ko");
  TestOutcome b = RunTests(text, "m.ko");
  EXPECT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  // 20 generated values, each in range.
  std::istringstream lines(a.out.substr(a.out.find("... ") + 4));
  int count = 0;
  for (std::string line; std::getline(lines, line) && !line.empty() && line != "ok";) {
    const long v = std::stol(line);
    EXPECT_GE(v, 0);
    EXPECT_LE(v, 1000);
    ++count;
  }
  EXPECT_EQ(count, 20);
}

}  // namespace
}  // namespace trove::kodo::testrun

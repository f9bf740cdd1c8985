#include "kodo/interp/interp.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "kodo/driver/front.h"
#include "kodo/mir/lower.h"

namespace trove::kodo::interp {
namespace {

RunResult RunText(const std::string& body, RunOptions options = {}, mir::LowerOptions lower = {}) {
  const std::string text = "module t {\n meta { purpose: \"t\" }\n" + body + "\n}\n";
  Result<driver::Compiled> c = driver::CompileSource(text, "t.ko");
  EXPECT_TRUE(c.ok());
  if (!c->ok()) {
    ADD_FAILURE() << c->diagnostics[0].message;
    return {};
  }
  Result<mir::Program> p = mir::Lower(*c->module, lower);
  if (!p.ok()) {
    ADD_FAILURE() << p.status().ToString();
    return {};
  }
  return interp::Run(*p, options);
}

TEST(FormatFloat, RustDisplay) {
  EXPECT_EQ(FormatFloat(3.0), "3");
  EXPECT_EQ(FormatFloat(5.14), "5.14");
  EXPECT_EQ(FormatFloat(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(FormatFloat(1e21), "1000000000000000000000");
  EXPECT_EQ(FormatFloat(1e-7), "0.0000001");
  EXPECT_EQ(FormatFloat(-2.5), "-2.5");
  EXPECT_EQ(FormatFloat(0.0 / 0.0 * 0 + __builtin_nan("")), "NaN");
  EXPECT_EQ(FormatFloat(__builtin_inf()), "inf");
  EXPECT_EQ(FormatFloat(-__builtin_inf()), "-inf");
}

TEST(Interp, ArithmeticWrapsAndTruncates) {
  RunResult r = RunText(
      "fn main() {\n"
      " let big = 9223372036854775807\n print_int(big + 1)\n"
      " print_int(-7 / 2)\n print_int(-7 % 2)\n print_int(7 / -2)\n}");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "-9223372036854775808\n-3\n-1\n-3\n");
}

TEST(Interp, DivisionByZeroTraps) {
  RunResult r =
      RunText("fn d(a: Int, b: Int) -> Int { return a / b }\nfn main() { print_int(d(1, 0)) }");
  EXPECT_EQ(r.exit_code, kExitDivide);
  EXPECT_EQ(r.err, "attempt to divide by zero\n");
}

TEST(Interp, IndexOutOfBounds) {
  RunResult r =
      RunText("fn main() { let xs = list_new()\n list_push(xs, 1)\n print_int(list_get(xs, 3)) }");
  EXPECT_EQ(r.exit_code, kExitAbort);
  EXPECT_EQ(r.err, "index out of bounds: the len is 1 but the index is 3\n");
}

TEST(Interp, ContractViolationExits134WithUpstreamMessage) {
  const std::string src =
      "fn positive_only(x: Int) -> Int requires { x > 0 } { return x * 2 }\n"
      "fn main() { print_int(positive_only(-1)) }";
  RunResult r = RunText(src);
  EXPECT_EQ(r.exit_code, 134);
  EXPECT_EQ(r.err,
            "contract violation: contract violation: requires clause 1 failed in function "
            "`positive_only`\n");
  mir::LowerOptions recoverable;
  recoverable.recoverable_contracts = true;
  RunResult rec = RunText(src, {}, recoverable);
  EXPECT_EQ(rec.exit_code, 0);
  EXPECT_EQ(rec.out, "-2\n");
  EXPECT_NE(rec.err.find("WARNING: contract violation (recoverable): "), std::string::npos);
}

TEST(Interp, EnsuresChecksResult) {
  RunResult r = RunText(
      "fn f(x: Int) -> Int ensures { result > 10 } { return x }\nfn main() { print_int(f(1)) }");
  EXPECT_EQ(r.exit_code, 134);
  EXPECT_NE(r.err.find("ensures clause 1 failed in function `f`"), std::string::npos);
}

TEST(Interp, DeepRecursionIsAStackOverflowNotACrash) {
  RunOptions o;
  o.max_frames = 5000;
  RunResult r =
      RunText("fn down(n: Int) -> Int { return down(n + 1) }\nfn main() { print_int(down(0)) }", o);
  EXPECT_EQ(r.exit_code, kExitAbort);
  EXPECT_NE(r.err.find("stack overflow"), std::string::npos);
  // Recursion within the limit works, with no host recursion per call.
  RunResult ok = RunText(
      "fn sum(n: Int) -> Int { if n == 0 { return 0 }\n return n + sum(n - 1) }\n"
      "fn main() { print_int(sum(50000)) }");
  EXPECT_EQ(ok.out, "1250025000\n");
}

TEST(Interp, StepLimit) {
  RunOptions o;
  o.max_steps = 1000;
  RunResult r = RunText("fn main() { let mut i = 0\n while true { i = i + 1 } }", o);
  EXPECT_EQ(r.exit_code, kExitLimit);
  EXPECT_NE(r.err.find("step limit"), std::string::npos);
}

TEST(Interp, MemoryLimit) {
  RunOptions o;
  o.max_memory_bytes = 1 << 20;
  RunResult r = RunText("fn main() { let xs = list_new()\n while true { list_push(xs, 1) } }", o);
  EXPECT_EQ(r.exit_code, kExitLimit);
  EXPECT_NE(r.err.find("memory limit"), std::string::npos);
}

TEST(Interp, ExitCode) {
  RunResult r = RunText("fn main() { println(\"a\")\n exit(3)\n println(\"b\") }");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "a\n");
}

// Right-trims every line and the whole text, as upstream's harness compares (docs/kodo.md §4.9).
std::string Trimmed(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.pop_back();
    }
    out += line + "\n";
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every program in testdata/kodo with an expected stdout (`NAME.stdout` beside `NAME.ko`) runs in
// the interpreter and prints exactly that (right-trimmed lines).
TEST(InterpCorpus, EveryExpectedStdoutMatches) {
  int checked = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(TROVE_KODO_TESTDATA)) {
    if (entry.path().extension() != ".stdout") continue;
    std::filesystem::path source = entry.path();
    source.replace_extension(".ko");
    ASSERT_TRUE(std::filesystem::exists(source)) << source;
    Result<driver::Compiled> c = driver::CompileSource(Slurp(source), source.string());
    ASSERT_TRUE(c.ok()) << source;
    ASSERT_TRUE(c->ok()) << source << ": " << c->diagnostics[0].message;
    Result<mir::Program> p = mir::Lower(*c->module);
    ASSERT_TRUE(p.ok()) << source << ": " << p.status().ToString();
    RunOptions options;
    options.max_steps = 100'000'000;
    RunResult r = interp::Run(*p, options);
    EXPECT_EQ(r.exit_code, 0) << source << ": " << r.err;
    EXPECT_EQ(Trimmed(r.out), Trimmed(Slurp(entry.path()))) << source;
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

}  // namespace
}  // namespace trove::kodo::interp

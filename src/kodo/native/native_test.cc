// Native builds (emit_c.h, build.h) against the interpreter: the expected-stdout corpus, runtime
// traps with the interpreter's messages and statuses, a differential test over generated
// programs, and the build's file handling. These tests run the system C compiler; each builds
// into a fresh temporary directory with a shared runtime cache.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "kodo/driver/front.h"
#include "kodo/interp/interp.h"
#include "kodo/mir/lower.h"
#include "kodo/native/build.h"
#include "kodo/native/emit_c.h"
#include "kodo/native/process.h"
#include "kodo/native/testing/program_gen.h"

namespace trove::kodo::native {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// x + 1, wrapping (a generated constant may be the largest Int).
std::int64_t Bumped(std::int64_t x) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) + 1u);
}

std::string Trimmed(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.pop_back();
    }
    out += line + "\n";
  }
  while (out.size() >= 2 && out.substr(out.size() - 2) == "\n\n") out.pop_back();
  return out;
}

// A scratch directory for one test, removed at the end.
class NativeTest : public ::testing::Test {
 protected:
  // One runtime cache for the suite: the runtime's C++ part (JSON, regex) takes long to
  // compile, so it is compiled once.
  static void SetUpTestSuite() {
    std::string tmpl = (fs::temp_directory_path() / "kodo-native-cache-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    suite_cache_ = new fs::path(tmpl);
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*suite_cache_, ec);
    delete suite_cache_;
    suite_cache_ = nullptr;
  }
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "kodo-native-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    options_.cache_dir = suite_cache_->string();
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  static Result<mir::Program> Lower(const std::string& text, mir::LowerOptions lower = {}) {
    Result<driver::Compiled> c = driver::CompileSource(text, "t.ko");
    if (!c.ok()) return c.status();
    if (!c->ok()) return Status::InvalidArgument(c->diagnostics[0].message);
    return mir::Lower(*c->module, lower);
  }

  static std::string Wrap(const std::string& body) {
    return "module t {\n meta { purpose: \"t\" }\n" + body + "\n}\n";
  }

  // Builds `program` and runs it; fails the test when the build fails.
  ProcessResult BuildAndRun(const mir::Program& program, const std::string& name = "prog") {
    const fs::path out = dir_ / name;
    Status s = BuildExecutable(program, out.string(), options_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return ProcessResult{.exit_code = -1};
    Result<ProcessResult> r = RunProcess({out.string()});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ProcessResult{.exit_code = -1};
  }

  static fs::path* suite_cache_;
  fs::path dir_;
  BuildOptions options_;
};
fs::path* NativeTest::suite_cache_ = nullptr;

// Returns a description of how a native run differs from the interpreter's, or nothing.
std::optional<std::string> Differences(const interp::RunResult& want, const ProcessResult& got) {
  std::string diff;
  if (want.exit_code != got.exit_code) {
    diff += fmt::format("exit code: interpreter {}, native {}\n", want.exit_code, got.exit_code);
  }
  if (want.out != got.out) {
    diff += fmt::format("stdout:\n--- interpreter\n{}--- native\n{}", want.out, got.out);
  }
  if (want.err != got.err) {
    diff += fmt::format("stderr:\n--- interpreter\n{}--- native\n{}", want.err, got.err);
  }
  if (diff.empty()) return std::nullopt;
  return diff;
}

// Adds an instruction calling `callee` (no arguments) at the start of `fn`.
void InjectCall(mir::Program& p, const std::string& fn, const std::string& callee) {
  mir::Inst inst;
  inst.kind = mir::InstKind::kCall;
  inst.callee = callee;
  auto& insts = p.functions[static_cast<std::size_t>(p.Find(fn))].blocks[0].insts;
  insts.insert(insts.begin(), inst);
}

// Every program with an expected stdout, the T5 concurrency ones included (spawn, parallel,
// async/await, channels, select, actors: docs/decisions/0075), prints it natively, and exactly
// what the interpreter prints.
TEST_F(NativeTest, EveryExpectedStdoutMatches) {
  int checked = 0, concurrent = 0;
  for (const auto& entry : fs::recursive_directory_iterator(TROVE_KODO_TESTDATA)) {
    if (entry.path().extension() != ".stdout") continue;
    fs::path source = entry.path();
    source.replace_extension(".ko");
    ASSERT_TRUE(fs::exists(source)) << source;
    Result<mir::Program> p = Lower(Slurp(source));
    ASSERT_TRUE(p.ok()) << source << ": " << p.status().ToString();
    ProcessResult r = BuildAndRun(*p, source.stem().string());
    EXPECT_EQ(r.exit_code, 0) << source << ": " << r.err;
    EXPECT_EQ(Trimmed(r.out), Trimmed(Slurp(entry.path()))) << source;
    interp::RunResult want = interp::Run(*p);
    std::optional<std::string> diff = Differences(want, r);
    EXPECT_FALSE(diff.has_value()) << source << ":\n" << *diff;
    ++checked;
    if (source.stem().string().rfind("t5_", 0) == 0) ++concurrent;
  }
  EXPECT_GE(checked, 14);
  EXPECT_GE(concurrent, 10);
}

// Runs `body` (wrapped in a module) in the interpreter and natively; both must agree.
#define EXPECT_SAME_AS_INTERPRETER(body)                      \
  do {                                                        \
    Result<mir::Program> p = Lower(Wrap(body));               \
    ASSERT_TRUE(p.ok()) << p.status().ToString();             \
    interp::RunResult want = interp::Run(*p);                 \
    ProcessResult got = BuildAndRun(*p);                      \
    std::optional<std::string> diff = Differences(want, got); \
    EXPECT_FALSE(diff.has_value()) << *diff;                  \
  } while (0)

TEST_F(NativeTest, TrapsMatchTheInterpreter) {
  EXPECT_SAME_AS_INTERPRETER(
      "fn d(a: Int, b: Int) -> Int { return a / b }\n"
      "fn main() { print_int(7)\n print_int(d(1, 0)) }");
  EXPECT_SAME_AS_INTERPRETER(
      "fn d(a: Int, b: Int) -> Int { return a % b }\nfn main() { print_int(d(1, 0)) }");
  EXPECT_SAME_AS_INTERPRETER(
      "fn main() { let xs: List<Int> = list_new()\n list_push(xs, 1)\n"
      " print_int(list_get(xs, 3)) }");
  EXPECT_SAME_AS_INTERPRETER(
      "fn positive_only(x: Int) -> Int requires { x > 0 } { return x * 2 }\n"
      "fn main() { print_int(positive_only(2))\n print_int(positive_only(-1)) }");
  EXPECT_SAME_AS_INTERPRETER("fn main() { println(\"bye\")\n exit(3) }");
}

TEST_F(NativeTest, ContractViolationIsExit134WithUpstreamMessage) {
  Result<mir::Program> p =
      Lower(Wrap("fn positive_only(x: Int) -> Int requires { x > 0 } { return x * 2 }\n"
                 "fn main() { print_int(positive_only(-1)) }"));
  ASSERT_TRUE(p.ok());
  ProcessResult r = BuildAndRun(*p);
  EXPECT_EQ(r.exit_code, 134);
  EXPECT_EQ(r.err,
            "contract violation: contract violation: requires clause 1 failed in function "
            "`positive_only`\n");
}

TEST_F(NativeTest, ValuesPrintAsInTheInterpreter) {
  EXPECT_SAME_AS_INTERPRETER(
      "fn main() {\n"
      " let big = 9223372036854775807\n print_int(big + 1)\n print_int(big * 3)\n"
      " print_int(-7 / 2)\n print_int(-7 % 2)\n"
      " let x = 0.1 + 0.2\n println(x.to_string())\n println(f\"{1.5 * 2.0} {1e21} {1e-7}\")\n"
      " print_float(3.0)\n println(\"\")\n"
      " let t = (1, \"two\", true)\n println(f\"{t.0} {t.1} {t.2}\")\n"
      " let s = \"héllo wörld\"\n print_int(s.length())\n println(s.substring(1, 4))\n"
      " println(s.to_upper())\n println(\"  pad  \".trim())\n"
      " print_int(\"-42\".parse_int())\n print_int(\"x\".parse_int())\n"
      " let parts = \"a,b,,c\".split(\",\")\n print_int(parts.length())\n"
      " println(list_join(parts, \"|\"))\n"
      " println(format_int(255, 16))\n println(format_int(-255, 2))\n"
      "}");
}

TEST_F(NativeTest, CollectionsMatchTheInterpreter) {
  EXPECT_SAME_AS_INTERPRETER(
      "struct Pt { x: Int, y: Int }\n"
      "fn main() {\n"
      " let xs: List<Int> = list_new()\n"
      " for i in 0..10 { list_push(xs, (i * 7) % 10) }\n"
      " list_sort(xs)\n for v in xs { print(f\"{v} \") }\n println(\"\")\n"
      " let ys = xs.map(|x: Int| x * x).filter(|x: Int| x > 10)\n print_int(ys.length())\n"
      " print_int(xs.fold(0, |a: Int, b: Int| a + b))\n"
      " let m: Map<String, Int> = map_new()\n map_insert(m, \"b\", 2)\n map_insert(m, \"a\", 1)\n"
      " map_insert(m, \"b\", 3)\n for k in m { println(f\"{k}={map_get(m, k)}\") }\n"
      " map_remove(m, \"b\")\n print_int(map_length(m))\n"
      " let s: Set<Int> = set_new()\n set_add(s, 3)\n set_add(s, 1)\n set_add(s, 3)\n"
      " print_int(set_length(s))\n"
      " let p = Pt { x: 1, y: 2 }\n let q = Pt { x: 1, y: 2 }\n"
      " if p.x == q.x { println(f\"{p.x} {q.y}\") }\n"
      " let sb = string_builder_new()\n string_builder_push(sb, \"ab\")\n"
      " string_builder_push_char(sb, 233)\n println(string_builder_to_string(sb))\n"
      " print_int(string_builder_len(sb))\n"
      "}");
}

TEST_F(NativeTest, DeepRecursionAndStackOverflow) {
  EXPECT_SAME_AS_INTERPRETER(
      "fn depth(n: Int) -> Int { if n == 0 { return 0 }\n return 1 + depth(n - 1) }\n"
      "fn main() { print_int(depth(50000)) }");
  EXPECT_SAME_AS_INTERPRETER(
      "fn depth(n: Int) -> Int { if n == 0 { return 0 }\n return 1 + depth(n - 1) }\n"
      "fn main() { print_int(depth(200000)) }");
}

// The scheduler's order (docs/decisions/0075) against the interpreter's, case by case.
TEST_F(NativeTest, ConcurrencyMatchesTheInterpreter) {
  // spawn runs after main, first spawned first; a spawned task spawning again.
  EXPECT_SAME_AS_INTERPRETER(
      "fn main() {\n spawn { println(\"a\")\n spawn { println(\"c\") } }\n"
      " spawn { println(\"b\") }\n println(\"main\")\n}");
  // A receive that waits lets the deferred tasks run; values queue in send order.
  EXPECT_SAME_AS_INTERPRETER(
      "fn main() {\n let ch: Channel<Int> = channel_new()\n"
      " spawn { channel_send(ch, 1)\n println(\"sent 1\")\n channel_send(ch, 2) }\n"
      " let a: Int = channel_recv(ch)\n println(f\"got {a}\")\n"
      " let b: Int = channel_recv(ch)\n println(f\"got {b}\")\n}");
  // Unknown and freed channels: receive gives 0, send does nothing.
  EXPECT_SAME_AS_INTERPRETER(
      "fn main() {\n let ch: Channel<Int> = channel_new()\n channel_send(ch, 5)\n"
      " channel_free(ch)\n channel_send(ch, 6)\n let a: Int = channel_recv(ch)\n"
      " let b: Int = channel_recv(42)\n print_int(a)\n print_int(b)\n}");
  // Async tasks start in call order while their caller waits; a future never awaited runs
  // before the program ends; awaiting a finished future twice.
  EXPECT_SAME_AS_INTERPRETER(
      "async fn f(n: Int) -> Int {\n println(f\"f {n}\")\n return n * 3\n}\n"
      "fn main() {\n let x = f(1)\n let y = f(2)\n let z = f(3)\n"
      " print_int(z.await)\n print_int(x.await)\n print_int(x.await)\n let w = f(4)\n"
      " println(\"end\")\n}");
  // A parallel group's tasks start at the join; a task deep in recursion inside a task.
  EXPECT_SAME_AS_INTERPRETER(
      "fn depth(n: Int) -> Int { if n == 0 { return 0 }\n return 1 + depth(n - 1) }\n"
      "fn main() {\n parallel {\n spawn { print_int(depth(30000)) }\n"
      " spawn { println(\"second\") }\n }\n println(\"joined\")\n}");
  // exit() inside a task stops the program at once.
  EXPECT_SAME_AS_INTERPRETER(
      "fn main() {\n spawn { println(\"bye\")\n exit(4) }\n"
      " spawn { println(\"never\") }\n println(\"main\")\n}");
  // A trap inside a task: the interpreter's message and status.
  EXPECT_SAME_AS_INTERPRETER(
      "fn d(a: Int, b: Int) -> Int { return a / b }\n"
      "fn main() {\n parallel {\n spawn { print_int(d(1, 0)) }\n }\n println(\"unreached\")\n}");
}

// Many tasks at once (each started task has a stack of its own, reused once it ends), under
// the hand-written x86-64 switch and under ucontext (the portable path).
TEST_F(NativeTest, ManyTasksUnderBothSwitches) {
  Result<mir::Program> p =
      Lower(Wrap("fn main() {\n let ch: Channel<Int> = channel_new()\n let back: Channel<Int> = "
                 "channel_new()\n let mut i = 0\n while i < 2000 {\n spawn {\n"
                 " let v: Int = channel_recv(ch)\n channel_send(back, v * 2)\n }\n i = i + 1\n }\n"
                 " let mut k = 0\n while k < 2000 {\n channel_send(ch, k)\n k = k + 1\n }\n"
                 " let mut total = 0\n let mut j = 0\n while j < 2000 {\n"
                 " let r: Int = channel_recv(back)\n total = total + r\n j = j + 1\n }\n"
                 " print_int(total)\n}"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  interp::RunResult want = interp::Run(*p);
  EXPECT_EQ(want.out, "3998000\n");
  ProcessResult fast = BuildAndRun(*p, "fast");
  std::optional<std::string> diff = Differences(want, fast);
  EXPECT_FALSE(diff.has_value()) << *diff;
  options_.cflags = {"-O2", "-DKODO_SCHED_UCONTEXT"};
  ProcessResult portable = BuildAndRun(*p, "portable");
  diff = Differences(want, portable);
  EXPECT_FALSE(diff.has_value()) << *diff;
  // The portable path runs a corpus program the same way.
  const fs::path source = fs::path(TROVE_KODO_TESTDATA) / "run" / "t5_native_pingpong.ko";
  Result<mir::Program> pp = Lower(Slurp(source));
  ASSERT_TRUE(pp.ok());
  ProcessResult r = BuildAndRun(*pp, "pingpong");
  EXPECT_EQ(r.out, Slurp(fs::path(source).replace_extension(".stdout")));
}

// Every task blocked: exit 134 and the interpreter's deadlock message, naming each task and
// the function it waits in, never a hang.
TEST_F(NativeTest, DeadlockMatchesTheInterpreter) {
  EXPECT_SAME_AS_INTERPRETER(
      "fn main() {\n let ch: Channel<Int> = channel_new()\n println(\"waiting\")\n"
      " let v: Int = channel_recv(ch)\n print_int(v)\n}");
  EXPECT_SAME_AS_INTERPRETER(
      "fn wait_on(ch: Channel<Int>) -> Int {\n let v: Int = channel_recv(ch)\n return v\n}\n"
      "fn main() {\n let a: Channel<Int> = channel_new()\n let b: Channel<Int> = channel_new()\n"
      " spawn { print_int(wait_on(a)) }\n parallel {\n spawn {\n select {\n"
      " a => |x: Int| { print_int(x) }\n b => |y: Int| { print_int(y) }\n }\n }\n }\n}");
  EXPECT_SAME_AS_INTERPRETER(
      "async fn stuck(ch: Channel<Int>) -> Int {\n let v: Int = channel_recv(ch)\n return v\n}\n"
      "fn main() {\n let ch: Channel<Int> = channel_new()\n let f = stuck(ch)\n"
      " print_int(f.await)\n}");
}

// A MIR `yield` lets the other ready tasks run first, in both.
TEST_F(NativeTest, YieldMatchesTheInterpreter) {
  Result<mir::Program> p = Lower(
      Wrap("async fn g(n: Int) -> Int {\n println(f\"g {n}\")\n return n\n}\n"
           "fn main() {\n let a = g(1)\n let b = g(2)\n println(\"main\")\n print_int(a.await)\n"
           " print_int(b.await)\n}"));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // `yield` right after the two async calls: both tasks run before "main".
  for (mir::BasicBlock& b : p->functions[static_cast<std::size_t>(p->Find("main"))].blocks) {
    for (std::size_t i = 0; i < b.insts.size(); ++i) {
      if (b.insts[i].kind == mir::InstKind::kCall && b.insts[i].callee == "println") {
        mir::Inst y;
        y.kind = mir::InstKind::kYield;
        b.insts.insert(b.insts.begin() + static_cast<std::ptrdiff_t>(i), y);
        break;
      }
    }
  }
  interp::RunResult want = interp::Run(*p);
  EXPECT_EQ(want.out, "g 1\ng 2\nmain\n1\n2\n");
  ProcessResult got = BuildAndRun(*p);
  std::optional<std::string> diff = Differences(want, got);
  EXPECT_FALSE(diff.has_value()) << *diff;
}

// Hooks the native runtime lacks still fail the build, naming the hook and the function.
TEST_F(NativeTest, UnsupportedHookIsAClearBuildError) {
  Result<mir::Program> p = Lower(Wrap("fn main() { print_int(1) }"));
  ASSERT_TRUE(p.ok());
  InjectCall(*p, "main", "channel_generic_new");
  Result<std::string> c = EmitC(*p);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), base::StatusCode::kUnsupported);
  EXPECT_EQ(c.status().message(),
            "native builds do not support concurrency (channels, runtime hook "
            "`channel_generic_new`) (in function `main`)");
  // And no executable appears.
  const fs::path out = dir_ / "generic";
  EXPECT_FALSE(BuildExecutable(*p, out.string(), options_).ok());
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(NativeTest, UnknownCalleeIsAClearBuildError) {
  Result<mir::Program> p = Lower(Wrap("fn main() { print_int(1) }"));
  ASSERT_TRUE(p.ok());
  InjectCall(*p, "main", "kodo_future_new");
  Result<std::string> c = EmitC(*p);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "native builds do not support the runtime hook `kodo_future_new` (in function "
            "`main`)");
}

TEST_F(NativeTest, FailedBuildLeavesTheOutputAloneAndNoTemporaries) {
  const fs::path out = dir_ / "bin" / "app";
  fs::create_directories(out.parent_path());
  {
    std::ofstream f(out);
    f << "old";
  }
  Result<mir::Program> bad = Lower(Wrap("fn main() {\n spawn { print_int(1) }\n}"));
  ASSERT_TRUE(bad.ok());
  InjectCall(*bad, "main", "kodo_future_new");
  EXPECT_FALSE(BuildExecutable(*bad, out.string(), options_).ok());
  EXPECT_EQ(Slurp(out), "old");
  // A compiler that fails: the output stays, no temporary file is left beside it.
  Result<mir::Program> good = Lower(Wrap("fn main() { print_int(1) }"));
  ASSERT_TRUE(good.ok());
  BuildOptions failing = options_;
  failing.cflags = {"-O2", "-DKODO_FORCE_ERROR", "-include", "/nonexistent/kodo-header.h"};
  Status s = BuildExecutable(*good, out.string(), failing);
  EXPECT_EQ(s.code(), base::StatusCode::kInternal) << s.ToString();
  EXPECT_NE(s.message().find("the C compiler"), std::string::npos) << s.message();
  EXPECT_EQ(Slurp(out), "old");
  // Success replaces it.
  ASSERT_TRUE(BuildExecutable(*good, out.string(), options_).ok());
  Result<ProcessResult> r = RunProcess({out.string()});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "1\n");
  int entries = 0;
  for (const auto& e : fs::directory_iterator(out.parent_path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
}

TEST_F(NativeTest, MissingCompilerIsNamed) {
  Result<mir::Program> p = Lower(Wrap("fn main() { print_int(1) }"));
  ASSERT_TRUE(p.ok());
  BuildOptions o = options_;
  o.cc = "kodo-no-such-cc";
  Status s = BuildExecutable(*p, (dir_ / "x").string(), o);
  EXPECT_EQ(s.code(), base::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("`kodo-no-such-cc` was not found in PATH"), std::string::npos);
}

TEST_F(NativeTest, BoxedAndUnboxedCodeAgree) {
  Result<mir::Program> p = Lower(testing::GenerateProgram(7));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ProcessResult unboxed = BuildAndRun(*p, "unboxed");
  options_.emit.unbox = false;
  ProcessResult boxed = BuildAndRun(*p, "boxed");
  EXPECT_EQ(unboxed.out, boxed.out);
  EXPECT_EQ(unboxed.exit_code, boxed.exit_code);
}

TEST(ProgramGen, IsDeterministicAndVaried) {
  EXPECT_EQ(testing::GenerateProgram(3), testing::GenerateProgram(3));
  EXPECT_NE(testing::GenerateProgram(3), testing::GenerateProgram(4));
}

// The differential test: generated programs print the same natively as in the interpreter.
TEST_F(NativeTest, GeneratedProgramsMatchTheInterpreter) {
  constexpr int kPrograms = 30;
  for (int seed = 1; seed <= kPrograms; ++seed) {
    const std::string text = testing::GenerateProgram(static_cast<std::uint64_t>(seed));
    Result<mir::Program> p = Lower(text);
    ASSERT_TRUE(p.ok()) << "seed " << seed << ": " << p.status().ToString() << "\n" << text;
    interp::RunResult want = interp::Run(*p);
    ASSERT_EQ(want.exit_code, 0) << "seed " << seed << ": " << want.err << "\n" << text;
    ProcessResult got = BuildAndRun(*p, fmt::format("gen{}", seed));
    std::optional<std::string> diff = Differences(want, got);
    EXPECT_FALSE(diff.has_value()) << "seed " << seed << ":\n" << *diff << "\n" << text;
  }
}

// JSON and regex (the runtime's C++ part, docs/decisions/0076): generated programs print the
// same natively as in the interpreter.
TEST_F(NativeTest, GeneratedJsonRegexProgramsMatchTheInterpreter) {
  constexpr int kPrograms = 12;
  for (int seed = 1; seed <= kPrograms; ++seed) {
    const std::string text = testing::GenerateJsonRegexProgram(static_cast<std::uint64_t>(seed));
    Result<mir::Program> p = Lower(text);
    ASSERT_TRUE(p.ok()) << "seed " << seed << ": " << p.status().ToString() << "\n" << text;
    interp::RunResult want = interp::Run(*p);
    ASSERT_EQ(want.exit_code, 0) << "seed " << seed << ": " << want.err << "\n" << text;
    ProcessResult got = BuildAndRun(*p, fmt::format("text{}", seed));
    std::optional<std::string> diff = Differences(want, got);
    EXPECT_FALSE(diff.has_value()) << "seed " << seed << ":\n" << *diff << "\n" << text;
  }
}

TEST_F(NativeTest, JsonAndRegexEdgesMatchTheInterpreter) {
  // A subject longer than the interpreter's inline limit (matched on a thread of its own), a
  // handle used after json_free, handles that never existed, nested objects and arrays.
  EXPECT_SAME_AS_INTERPRETER(
      "fn long() -> String { return \"ab \".repeat(2000) + \"x42\" }\n"
      "fn main() {\n"
      " println(regex_find(\"x\\\\d+\", long()).unwrap_or(\"none\"))\n"
      " print_int(regex_replace(\"a\", long(), \"\").length())\n"
      " if regex_match(\"(a|b| )+x\", long()) { println(\"long match\") }\n"
      " let d = json_parse(\"{\\\"o\\\": {\\\"items\\\": [1, [2], {\\\"k\\\": 3}]}, \\\"z\\\": "
      "1}\")\n"
      " let o = json_get_object(d, \"o\")\n"
      " for h in json_get_array(o, \"items\") { println(json_stringify(h)) }\n"
      " json_free(o)\n println(json_stringify(o))\n print_int(json_get_int(o, \"k\"))\n"
      " println(json_stringify(12345))\n print_int(json_parse(\"[1,]\"))\n"
      " println(json_stringify(d))\n"
      "}");
}

TEST_F(NativeTest, OnlyJsonAndRegexProgramsNeedTheCxxCompiler) {
  BuildOptions o = options_;
  o.cxx = "kodo-no-such-cxx";
  Result<mir::Program> plain = Lower(Wrap("fn main() { print_int(1) }"));
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(BuildExecutable(*plain, (dir_ / "plain").string(), o).ok());
  Result<mir::Program> json = Lower(Wrap("fn main() { print_int(json_new_object()) }"));
  ASSERT_TRUE(json.ok());
  Status s = BuildExecutable(*json, (dir_ / "json").string(), o);
  EXPECT_EQ(s.code(), base::StatusCode::kNotFound);
  EXPECT_NE(s.message().find("no C++ compiler"), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(dir_ / "json"));
}

// Structs whose literals all have one shape are unboxed C structs passed by value (decision
// 0076); through parameters, results, `ref`, lists, generic code, methods, closures and
// equality they behave as the interpreter's.
constexpr const char* kStructProgram =
    "struct Point { x: Int, y: Int }\n"
    "struct Box { p: Point, name: String }\n"
    "impl Point { fn sum(self) -> Int { return self.x + self.y } }\n"
    "fn add(ref a: Point, b: Point) -> Point { return Point { x: a.x + b.x, y: a.y + b.y } }\n"
    "fn id<T>(v: T) -> T { return v }\n"
    "fn pick(c: Bool, a: Point, b: Point) -> Point { if c { return a }\n return b }\n"
    "fn make(k: Int) -> Point { return Point { y: k * 2, x: k } }\n"
    "fn main() {\n"
    " let mut acc = Point { x: 0, y: 0 }\n"
    " for i in 0..1000 { acc = add(acc, Point { y: 1, x: i }) }\n"
    " print_int(acc.x)\n print_int(acc.y)\n"
    " let s = make(4)\n print_int(s.sum())\n"
    " let q = id(make(7))\n print_int(q.x - q.y)\n"
    " let r = make(7)\n if q.x == r.x { println(\"equal\") }\n"
    " let bx = Box { p: pick(false, make(1), Point { x: 5, y: 6 }), name: \"b\" }\n"
    " print_int(bx.p.y)\n println(bx.name)\n"
    " let f = |k: Int| add(make(k), Point { x: k, y: k }).x\n print_int(f(3))\n"
    " let o = Option::Some(make(9))\n"
    " match o { Option::Some(p) => { print_int(p.y) }, Option::None => { println(\"none\") } }\n"
    "}";

TEST_F(NativeTest, UnboxedStructsMatchTheInterpreter) {
  EXPECT_SAME_AS_INTERPRETER(kStructProgram);
  options_.emit.unbox = false;
  EXPECT_SAME_AS_INTERPRETER(kStructProgram);
}

TEST_F(NativeTest, StructsPassedByValueAreNotAllocated) {
  Result<mir::Program> p = Lower(Wrap(kStructProgram));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  Result<std::string> c = EmitC(*p);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // `add` takes and returns an unboxed Point; its body builds no heap struct.
  const std::size_t add = c->find("/* add */\n");
  ASSERT_NE(add, std::string::npos);
  const std::string body = c->substr(add, c->find("\n}\n", add) - add);
  EXPECT_NE(body.find("static KS_"), std::string::npos) << body;
  EXPECT_EQ(body.find("kr_struct_new"), std::string::npos) << body;
  EXPECT_EQ(body.find("kbox_"), std::string::npos) << body;
  // Without unboxing, every struct is a heap object.
  Result<std::string> boxed = EmitC(*p, EmitOptions{.unbox = false});
  ASSERT_TRUE(boxed.ok());
  EXPECT_EQ(boxed->find("KS_"), std::string::npos);
}

// The comparison above can fail: a program whose MIR was altered before the native build
// prints differently, and Differences says so.
TEST_F(NativeTest, DifferentialComparisonDetectsADifference) {
  Result<mir::Program> p = Lower(testing::GenerateProgram(1));
  ASSERT_TRUE(p.ok());
  interp::RunResult want = interp::Run(*p);
  mir::Program altered = *p;
  // main begins with print_int(CONST): change every integer constant there.
  for (mir::BasicBlock& b :
       altered.functions[static_cast<std::size_t>(altered.Find("main"))].blocks) {
    for (mir::Inst& inst : b.insts) {
      if (inst.value.kind == mir::ValueKind::kIntConst) inst.value.i = Bumped(inst.value.i);
      for (mir::Value& a : inst.args) {
        if (a.kind == mir::ValueKind::kIntConst) a.i = Bumped(a.i);
      }
    }
  }
  ProcessResult got = BuildAndRun(altered);
  std::optional<std::string> diff = Differences(want, got);
  ASSERT_TRUE(diff.has_value());
  EXPECT_NE(diff->find("stdout:"), std::string::npos) << *diff;
}

}  // namespace
}  // namespace trove::kodo::native

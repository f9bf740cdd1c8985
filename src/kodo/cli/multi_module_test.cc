// Programs of several modules (docs/kodo.md §4.3,
// docs/decisions/0074-kodo-multi-module-programs.md) through the CLI's commands on real files:
// `kodoc run` prints testdata/kodo/multi/NAME/stdout.txt, `kodoc build` gives an executable that
// prints the same, `kodoc mir` shows the module-qualified names of clashing functions and `kodoc
// test` runs the tests against imported modules. The lowering's naming and resolution rules are
// checked on small programs in a MemEnv.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/env.h"
#include "kodo/cli/commands.h"
#include "kodo/driver/front.h"
#include "kodo/interp/interp.h"
#include "kodo/mir/lower.h"
#include "kodo/native/process.h"

namespace trove::kodo::cli {
namespace {

namespace fs = std::filesystem;

const fs::path kMulti = fs::path(TROVE_KODO_TESTDATA) / "multi";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A scratch directory (executables, the runtime cache), removed at the end.
class MultiModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "kodo-multi-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    // `kodoc build` caches the compiled runtime under $XDG_CACHE_HOME: keep it in the scratch
    // directory.
    ::setenv("XDG_CACHE_HOME", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path dir_;
  base::PosixEnv env_;
};

std::vector<fs::path> Programs() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(kMulti)) {
    if (fs::exists(entry.path() / "main.ko")) out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(MultiModuleTest, RunAndBuildPrintTheExpectedStdout) {
  const std::vector<fs::path> programs = Programs();
  ASSERT_GE(programs.size(), 2u);
  for (const fs::path& program : programs) {
    const std::string main = (program / "main.ko").string();
    const std::string want = Slurp(program / "stdout.txt");
    CommandOutput run = RunRun(env_, RunArgs{.file = main});
    EXPECT_EQ(run.exit_code, 0) << main << ": " << run.err;
    EXPECT_EQ(run.out, want) << main;
    // Without the optimiser too: the names are the lowering's, not the inliner's.
    CommandOutput raw = RunRun(env_, RunArgs{.file = main, .opt_level = 0});
    EXPECT_EQ(raw.out, want) << main << ": " << raw.err;

    const fs::path exe = dir_ / program.filename();
    CommandOutput built = RunBuild(env_, BuildArgs{.file = main, .output = exe.string()});
    ASSERT_EQ(built.exit_code, 0) << main << ": " << built.err;
    Result<native::ProcessResult> ran = native::RunProcess({exe.string()});
    ASSERT_TRUE(ran.ok()) << ran.status().ToString();
    EXPECT_EQ(ran->exit_code, 0) << main << ": " << ran->err;
    EXPECT_EQ(ran->out, run.out) << main;
    EXPECT_EQ(ran->err, run.err) << main;
  }
}

TEST_F(MultiModuleTest, MirNamesClashingFunctionsByModule) {
  // Unoptimised, so that no call is inlined away.
  CommandOutput mir =
      RunMir(env_, MirArgs{.file = (kMulti / "app" / "main.ko").string(), .opt_level = 0});
  ASSERT_EQ(mir.exit_code, 0) << mir.err;
  // `label` is the main module's; util's is qualified, and so are both `version`s (two
  // imported modules declare one).
  for (const char* name : {"\"label\"", "\"util::label\"", "\"util::version\"", "\"text::version\"",
                           "\"area_of\"", "\"Rect_area\"", "\"Rect_greet\""}) {
    EXPECT_NE(mir.out.find(std::string("name: ") + name), std::string::npos) << name;
  }
  EXPECT_EQ(mir.out.find("name: \"version\""), std::string::npos);
  // util's own `label(a)` calls util's.
  EXPECT_NE(mir.out.find("callee: \"util::label\", args: [Local"), std::string::npos);
  // main's qualified calls.
  EXPECT_NE(mir.out.find("callee: \"util::label\", args: [IntConst(2)]"), std::string::npos);
  EXPECT_NE(mir.out.find("callee: \"text::version\""), std::string::npos);

  CommandOutput two = RunMir(env_, MirArgs{.file = (kMulti / "two" / "main.ko").string()});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.out.find("name: \"counter::main\""), std::string::npos);
  EXPECT_NE(two.out.find("name: \"main\""), std::string::npos);
}

TEST_F(MultiModuleTest, TestRunsAgainstImportedModules) {
  CommandOutput t = RunTest(env_, TestArgs{.file = (kMulti / "app" / "main.ko").string()});
  EXPECT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("test methods of an imported struct ... ok"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("test the clashing names resolve per module ... ok"), std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("test result: ok. 2 passed; 0 failed"), std::string::npos) << t.out;
}

// ---------------------------------------------------------------------------------------------
// In memory: resolution and naming rules, and the errors.

class MultiModuleMemTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.CreateDir("p").ok()); }
  void Put(const std::string& path, const std::string& text) {
    ASSERT_TRUE(env_.WriteFile(path, text).ok()) << path;
  }
  CommandOutput Run(const std::string& path = "p/main.ko") {
    return RunRun(env_, RunArgs{.file = path});
  }
  base::MemEnv env_;
};

std::string Module(const std::string& name, const std::string& imports, const std::string& body) {
  return "module " + name + " {\n" + imports + "\n meta { purpose: \"t\" }\n" + body + "\n}\n";
}

TEST_F(MultiModuleMemTest, PlainNamesResolveInTheirOwnModule) {
  Put("p/a.ko", Module("a", "", R"(
    pub fn name() -> String { return "a" }
    pub fn who() -> String { return name() }
  )"));
  Put("p/b.ko", Module("b", "", R"(
    pub fn name() -> String { return "b" }
    pub fn who_b() -> String { return name() }
  )"));
  Put("p/main.ko", Module("m", "import a\n import b", R"(
    fn name() -> String { return "m" }
    fn main() {
      println(name())
      println(who())
      println(who_b())
      println(a::name())
      println(b.name())
    }
  )"));
  CommandOutput r = Run();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "m\na\nb\na\nb\n");
}

TEST_F(MultiModuleMemTest, AFunctionReferenceAndAClosureCrossModules) {
  Put("p/ops.ko", Module("ops", "", R"(
    pub fn inc(n: Int) -> Int { return n + 1 }
    pub fn apply(f: (Int) -> Int, n: Int) -> Int { return f(n) }
    pub fn adder(k: Int) -> (Int) -> Int { return |x: Int| x + k }
  )"));
  Put("p/main.ko", Module("m", "import ops", R"(
    fn main() {
      print_int(apply(inc, 1))
      let add3 = adder(3)
      print_int(add3(4))
    }
  )"));
  CommandOutput r = Run();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "2\n7\n");
}

TEST_F(MultiModuleMemTest, ADiamondLoadsTheSharedModuleOnce) {
  Put("p/base.ko", Module("base", "", "pub fn one() -> Int { return 1 }"));
  Put("p/left.ko", Module("left", "import base", "pub fn l() -> Int { return one() + 10 }"));
  Put("p/right.ko", Module("right", "import base", "pub fn r() -> Int { return one() + 20 }"));
  Put("p/main.ko", Module("m", "import left\n import right", R"(
    fn main() { print_int(l() + r()) }
  )"));
  CommandOutput r = Run();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "32\n");
  CommandOutput mir = RunMir(env_, MirArgs{.file = "p/main.ko"});
  ASSERT_EQ(mir.exit_code, 0) << mir.err;
  EXPECT_NE(mir.out.find("name: \"one\""), std::string::npos);
  EXPECT_EQ(mir.out.find("base::one"), std::string::npos);
}

TEST_F(MultiModuleMemTest, AnImportedModulesInvariantGuardsItsFunctionsOnly) {
  Put("p/lim.ko", Module("lim", "", R"(
    invariant { 1 > 2 }
    pub fn guarded() -> Int { return 1 }
  )"));
  Put("p/main.ko", Module("m", "import lim", R"(
    fn main() {
      println("before")
      print_int(guarded())
    }
  )"));
  CommandOutput r = Run();
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "before\n");
  EXPECT_NE(r.err.find("contract violation"), std::string::npos) << r.err;
}

TEST_F(MultiModuleMemTest, AFailedImportStopsRunBuildAndTest) {
  Put("p/main.ko", Module("m", "import missing", "fn main() { }\n test \"t\" { assert_eq(1, 1) }"));
  CommandOutput r = Run();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("E0903"), std::string::npos) << r.err;
  CommandOutput t = RunTest(env_, TestArgs{.file = "p/main.ko"});
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find("E0903"), std::string::npos) << t.err;
  CommandOutput b = RunBuild(env_, BuildArgs{.file = "p/main.ko", .output = "p/out"});
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_FALSE(env_.FileExists("p/out"));
}

// Below the checker: LowerProgram's own errors and naming, on parsed modules.
driver::Compiled Parse(const std::string& text, const std::string& name) {
  Result<driver::Compiled> c =
      driver::CompileSource(text, name, driver::FrontOptions{.type_check = false});
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c->module.has_value());
  return std::move(c).value();
}

TEST(LowerProgram, TwoModulesDeclaringOneStructIsAnError) {
  driver::Compiled a = Parse(Module("a", "", "struct P { x: Int }"), "a.ko");
  driver::Compiled m =
      Parse(Module("m", "import a", "struct P { y: Int }\n fn main() { }"), "m.ko");
  const std::vector<mir::Import> imports = {mir::Import{&*a.module, {}}};
  Result<mir::Program> p = mir::LowerProgram(*m.module, imports);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("struct `P` is declared in module `a` and in module `m`"),
            std::string::npos)
      << p.status().ToString();
}

TEST(LowerProgram, TwoImportsOfOneNameGetDistinctNames) {
  // Two files may declare the same module name: the second clashing function is numbered.
  driver::Compiled a1 = Parse(Module("a", "", "pub fn f() -> Int { return 1 }"), "x/a.ko");
  driver::Compiled a2 = Parse(Module("a", "", "pub fn f() -> Int { return 2 }"), "y/a.ko");
  driver::Compiled m = Parse(Module("m", "", "fn main() { print_int(f()) }"), "m.ko");
  const std::vector<mir::Import> imports = {mir::Import{&*a1.module, {}},
                                            mir::Import{&*a2.module, {}}};
  Result<mir::Program> p = mir::LowerProgram(*m.module, imports);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_GE(p->Find("a::f"), 0);
  EXPECT_GE(p->Find("a::f#2"), 0);
  EXPECT_LT(p->Find("f"), 0);
  // `f` in main is the later import's, as the checker registers them.
  interp::RunResult r = interp::Run(*p);
  EXPECT_EQ(r.out, "2\n");
}

TEST(LowerProgram, ADependencyAfterItsImporterIsRefused) {
  driver::Compiled a = Parse(Module("a", "", "pub fn f() -> Int { return 1 }"), "a.ko");
  driver::Compiled m = Parse(Module("m", "", "fn main() { }"), "m.ko");
  const std::vector<mir::Import> imports = {mir::Import{&*a.module, {0}}};
  EXPECT_FALSE(mir::LowerProgram(*m.module, imports).ok());
}

}  // namespace
}  // namespace trove::kodo::cli

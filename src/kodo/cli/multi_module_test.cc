// Programs of several modules (docs/kodo.md §4.3,
// docs/decisions/0074-kodo-multi-module-programs.md) through the CLI's commands on real files:
// `kodoc run` prints testdata/kodo/multi/NAME/stdout.txt, `kodoc build` gives an executable that
// prints the same, `kodoc mir` shows the module-qualified names of clashing functions and `kodoc
// test` runs the tests against imported modules. The lowering's naming and resolution rules are
// checked on small programs in a MemEnv. Also (decision 0085): imported modules' warnings in
// `check --sarif` and on the stderr of `run`, `mir`, `build` and `test`, and qualified calls
// typed against the named module's own function (testdata/kodo/imports).
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
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
    // `run` and `build` print the imported modules' warnings (decision 0085), then `run` the
    // program's stderr, which the executable prints alone.
    EXPECT_EQ(built.err + ran->err, run.err) << main;
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

// `kodoc build` prints the imported modules' warnings as `check` does (decision 0085); the
// executable prints the program's output only.
TEST_F(MultiModuleTest, BuildPrintsImportedWarnings) {
  fs::copy(fs::path(TROVE_KODO_TESTDATA) / "imports" / "warnings", dir_ / "w");
  const std::string main = (dir_ / "w" / "main.ko").string();
  const CommandOutput check = RunCheck(env_, CheckArgs{.file = main});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  ASSERT_NE(check.err.find((dir_ / "w" / "limits.ko").string() + ":4:9"), std::string::npos)
      << check.err;
  const fs::path exe = dir_ / "prog";
  const CommandOutput built = RunBuild(env_, BuildArgs{.file = main, .output = exe.string()});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  EXPECT_EQ(built.err, check.err);
  EXPECT_EQ(built.out.find("warning"), std::string::npos) << built.out;
  Result<native::ProcessResult> ran = native::RunProcess({exe.string()});
  ASSERT_TRUE(ran.ok()) << ran.status().ToString();
  EXPECT_EQ(ran->out, "5\n");
  EXPECT_EQ(ran->err, "");
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

// ---------------------------------------------------------------------------------------------
// Decision 0085: the programs of testdata/kodo/imports, copied into a MemEnv under `p/`, so that
// paths are relative as a user types them.

class ImportsTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(env_.CreateDir("p").ok()); }
  // Copies testdata/kodo/imports/NAME/* to p/.
  void Load(const std::string& name) {
    for (const auto& entry :
         fs::directory_iterator(fs::path(TROVE_KODO_TESTDATA) / "imports" / name)) {
      const std::string to = "p/" + entry.path().filename().string();
      ASSERT_TRUE(env_.WriteFile(to, Slurp(entry.path())).ok()) << to;
    }
  }
  base::MemEnv env_;
};

// `kodoc check --sarif` lists each imported warning as a result located in its own file, the
// same ones and in the same order as the `--json-errors` warnings array, and names each file
// once in run.artifacts.
TEST_F(ImportsTest, SarifListsImportedModulesWarnings) {
  Load("warnings");
  CommandOutput sarif = RunCheck(env_, CheckArgs{.file = "p/main.ko", .sarif = true});
  ASSERT_EQ(sarif.exit_code, 0) << sarif.err;
  EXPECT_EQ(sarif.err, "");
  const nlohmann::json log = nlohmann::json::parse(sarif.out);
  const nlohmann::json& run = log["runs"][0];
  const nlohmann::json env = nlohmann::json::parse(
      RunCheck(env_, CheckArgs{.file = "p/main.ko", .json_errors = true}).out);
  const nlohmann::json& warnings = env["warnings"];
  ASSERT_EQ(warnings.size(), 2u) << env.dump(2);  // limits' contracts, tasks' concurrency
  ASSERT_EQ(run["results"].size(), warnings.size()) << sarif.out;
  std::set<std::string> files;
  for (std::size_t i = 0; i < warnings.size(); ++i) {
    SCOPED_TRACE(i);
    const nlohmann::json& r = run["results"][i];
    const nlohmann::json& w = warnings[i];
    EXPECT_EQ(r["ruleId"], w["code"]);
    EXPECT_EQ(run["tool"]["driver"]["rules"][r["ruleIndex"].get<std::size_t>()]["id"], w["code"]);
    EXPECT_EQ(run["tool"]["driver"]["rules"][r["ruleIndex"].get<std::size_t>()]
                 ["defaultConfiguration"]["level"],
              "warning");
    EXPECT_EQ(r["level"], "warning");
    EXPECT_EQ(r["message"]["text"], w["message"]);
    const nlohmann::json& loc = r["locations"][0]["physicalLocation"];
    const std::string file = w["span"]["file"].get<std::string>();
    EXPECT_NE(file, "p/main.ko");
    EXPECT_EQ(loc["artifactLocation"]["uri"], file);
    const std::size_t index = loc["artifactLocation"]["index"].get<std::size_t>();
    ASSERT_LT(index, run["artifacts"].size());
    EXPECT_GT(index, 0u);  // 0 is the checked file
    EXPECT_EQ(run["artifacts"][index]["location"]["uri"], file);
    Result<std::string> text = env_.ReadFile(file);
    ASSERT_TRUE(text.ok());
    EXPECT_EQ(run["artifacts"][index]["length"], text->size());
    EXPECT_EQ(loc["region"]["startLine"], w["span"]["line"]);
    EXPECT_EQ(loc["region"]["startColumn"], w["span"]["column"]);
    EXPECT_EQ(loc["region"]["byteOffset"], w["span"]["start"]);
    EXPECT_EQ(loc["region"]["byteLength"].get<int>(),
              w["span"]["end"].get<int>() - w["span"]["start"].get<int>());
    files.insert(file);
  }
  EXPECT_EQ(files, (std::set<std::string>{"p/limits.ko", "p/tasks.ko"}));
  EXPECT_EQ(run["artifacts"].size(), 3u);
  EXPECT_EQ(run["artifacts"][0]["location"]["uri"], "p/main.ko");
}

// The checked file's own warnings come first (artifact 0), then the imported ones; errors
// stay errors.
TEST_F(ImportsTest, SarifListsTheCheckedFilesWarningsFirst) {
  Load("warnings");
  ASSERT_TRUE(env_.WriteFile("p/own.ko", R"(module mine {
    import limits
    meta { purpose: "a warning of its own" }

    async fn later() -> Int {
        return 1
    }

    fn main() -> Int {
        return clamp(3, 2)
    }
}
)")
                  .ok());
  CommandOutput sarif = RunCheck(env_, CheckArgs{.file = "p/own.ko", .sarif = true});
  ASSERT_EQ(sarif.exit_code, 0) << sarif.err;
  const nlohmann::json run = nlohmann::json::parse(sarif.out)["runs"][0];
  ASSERT_EQ(run["results"].size(), 2u) << sarif.out;
  const nlohmann::json& own = run["results"][0]["locations"][0]["physicalLocation"];
  EXPECT_EQ(own["artifactLocation"]["uri"], "p/own.ko");
  EXPECT_EQ(own["artifactLocation"]["index"], 0);
  EXPECT_EQ(own["region"]["startLine"], 5);
  const nlohmann::json& imported = run["results"][1]["locations"][0]["physicalLocation"];
  EXPECT_EQ(imported["artifactLocation"]["uri"], "p/limits.ko");
  EXPECT_EQ(imported["artifactLocation"]["index"], 1);
  EXPECT_EQ(imported["region"]["startLine"], 4);

  // A failed check: the errors, then the warnings, as in the `--json-errors` envelope.
  ASSERT_TRUE(env_.WriteFile("p/bad.ko",
                             "module bad {\n    import limits\n    meta { purpose: "
                             "\"b\" }\n    fn main() -> Int {\n        return true\n"
                             "    }\n}\n")
                  .ok());
  CommandOutput bad = RunCheck(env_, CheckArgs{.file = "p/bad.ko", .sarif = true});
  EXPECT_EQ(bad.exit_code, 1);
  const nlohmann::json bad_run = nlohmann::json::parse(bad.out)["runs"][0];
  const nlohmann::json bad_env =
      nlohmann::json::parse(RunCheck(env_, CheckArgs{.file = "p/bad.ko", .json_errors = true}).out);
  ASSERT_EQ(bad_env["errors"].size(), 1u);
  ASSERT_EQ(bad_env["warnings"].size(), 1u);
  ASSERT_EQ(bad_run["results"].size(), 2u) << bad.out;
  EXPECT_EQ(bad_run["results"][0]["level"], "error");
  EXPECT_EQ(bad_run["results"][0]["ruleId"], bad_env["errors"][0]["code"]);
  EXPECT_EQ(bad_run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "p/bad.ko");
  EXPECT_EQ(bad_run["results"][1]["level"], "warning");
  EXPECT_EQ(bad_run["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "p/limits.ko");
}

// `run`, `mir` and `build` print the imported modules' warnings on stderr exactly as `check`
// prints them (this file has none of its own); stdout is unchanged.
TEST_F(ImportsTest, RunMirAndBuildPrintImportedWarnings) {
  Load("warnings");
  const CommandOutput check = RunCheck(env_, CheckArgs{.file = "p/main.ko"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  // Both modules' warnings, with their files' paths.
  ASSERT_NE(check.err.find("--> p/limits.ko:4:9"), std::string::npos) << check.err;
  ASSERT_NE(check.err.find("--> p/tasks.ko:5:"), std::string::npos) << check.err;
  EXPECT_EQ(check.err.find("p/main.ko"), std::string::npos) << check.err;

  const CommandOutput run = RunRun(env_, RunArgs{.file = "p/main.ko"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "5\n");  // the program's output only
  EXPECT_EQ(run.err, check.err);

  const CommandOutput mir = RunMir(env_, MirArgs{.file = "p/main.ko"});
  EXPECT_EQ(mir.exit_code, 0) << mir.err;
  EXPECT_EQ(mir.err, check.err);
  EXPECT_EQ(mir.out.find("warning"), std::string::npos);
  EXPECT_NE(mir.out.find("name: \"main\""), std::string::npos) << mir.out;

  // A runtime error's message follows the warnings.
  ASSERT_TRUE(env_.WriteFile("p/fails.ko", R"(module fails {
    import limits
    meta { purpose: "a contract violated at run time" }

    fn main() {
        println("before")
        print_int(clamp(1, 0))
    }
}
)")
                  .ok());
  const CommandOutput fails = RunRun(env_, RunArgs{.file = "p/fails.ko"});
  EXPECT_NE(fails.exit_code, 0);
  EXPECT_EQ(fails.out, "before\n");
  const std::string limits_warning = check.err.substr(0, check.err.find("warning", 1));
  EXPECT_EQ(fails.err.rfind(limits_warning, 0), 0u) << fails.err;
  EXPECT_NE(fails.err.find("contract violation", limits_warning.size()), std::string::npos)
      << fails.err;
}

// `kodoc test`: the imported module's warnings on stderr, then the runtime's; stdout unchanged.
TEST_F(ImportsTest, TestPrintsImportedWarnings) {
  Load("warnings");
  const CommandOutput t = RunTest(env_, TestArgs{.file = "p/tested.ko"});
  EXPECT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(t.out.find("warning"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("test clamps ... ok"), std::string::npos) << t.out;
  // The same text as `check` prints for the same import (tested.ko's own W0901 for its test
  // comes first there).
  const CommandOutput check = RunCheck(env_, CheckArgs{.file = "p/tested.ko"});
  const std::size_t imported = check.err.find("warning", 1);
  ASSERT_NE(imported, std::string::npos) << check.err;
  EXPECT_EQ(t.err, check.err.substr(imported)) << t.err;
  EXPECT_NE(t.err.find("--> p/limits.ko:4:9"), std::string::npos) << t.err;
}

// Without imported warnings nothing is added (a single file, and a program whose imports have
// none).
TEST_F(ImportsTest, NoImportedWarningsNoStderr) {
  Load("qualified");
  const CommandOutput run = RunRun(env_, RunArgs{.file = "p/main.ko"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  EXPECT_EQ(RunMir(env_, MirArgs{.file = "p/main.ko"}).err, "");
}

// `util::f(x)` and `util.f(x)` are typed against util's `f(String) -> String`, not this
// module's `f(Int) -> Int`, and run util's (testdata/kodo/imports/qualified).
TEST_F(ImportsTest, QualifiedCallsAreTypedAgainstTheNamedModule) {
  Load("qualified");
  const CommandOutput check = RunCheck(env_, CheckArgs{.file = "p/main.ko"});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  const CommandOutput run = RunRun(env_, RunArgs{.file = "p/main.ko"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, Slurp(fs::path(TROVE_KODO_TESTDATA) / "imports" / "qualified" / "stdout.txt"));

  // The importer's own signature no longer decides: an Int argument is an error at its line,
  // through either spelling; a String one passes.
  for (const std::string call : {"util::f", "util.f"}) {
    SCOPED_TRACE(call);
    const std::string text = fmt::format(R"(module app {{
    import util
    meta {{ purpose: "p" }}

    fn f(n: Int) -> Int {{
        return n
    }}

    fn main() {{
        println({0}("a"))
        println({0}(1))
    }}
}}
)",
                                         call);
    ASSERT_TRUE(env_.WriteFile("p/bad.ko", text).ok());
    const CommandOutput bad = RunCheck(env_, CheckArgs{.file = "p/bad.ko", .json_errors = true});
    EXPECT_EQ(bad.exit_code, 1);
    const nlohmann::json j = nlohmann::json::parse(bad.out);
    ASSERT_EQ(j["errors"].size(), 1u) << bad.out;
    EXPECT_EQ(j["errors"][0]["code"], "E0200");
    EXPECT_EQ(j["errors"][0]["span"]["line"], 11);
    EXPECT_NE(j["errors"][0]["message"].get<std::string>().find("String"), std::string::npos);
    // `run` refuses it too, before lowering.
    EXPECT_EQ(RunRun(env_, RunArgs{.file = "p/bad.ko"}).exit_code, 1);
  }
}

// A qualified call reaches only the module's public functions: `hidden::secret(x)` and
// `hidden.secret(x)` are E0270 at the call, while `hidden::shown(x)` passes.
TEST_F(ImportsTest, QualifiedCallsOfPrivateFunctionsAreE0270) {
  ASSERT_TRUE(env_.WriteFile("p/hidden.ko", R"(module hidden {
    meta { purpose: "p" }

    fn secret(x: Int) -> Int {
        return x + 1
    }

    pub fn shown(x: Int) -> Int {
        return x
    }
}
)")
                  .ok());
  for (const std::string call : {"hidden::secret", "hidden.secret", "hidden::shown"}) {
    SCOPED_TRACE(call);
    const std::string text = fmt::format(R"(module app {{
    import hidden
    meta {{ purpose: "p" }}

    fn main() {{
        print_int({0}(1))
    }}
}}
)",
                                         call);
    ASSERT_TRUE(env_.WriteFile("p/q.ko", text).ok());
    const CommandOutput check = RunCheck(env_, CheckArgs{.file = "p/q.ko", .json_errors = true});
    if (call == "hidden::shown") {
      EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
      continue;
    }
    EXPECT_EQ(check.exit_code, 1);
    const nlohmann::json j = nlohmann::json::parse(check.out);
    ASSERT_EQ(j["errors"].size(), 1u) << check.out;
    EXPECT_EQ(j["errors"][0]["code"], "E0270");
    EXPECT_EQ(j["errors"][0]["span"]["line"], 6);
    EXPECT_NE(j["errors"][0]["message"].get<std::string>().find("`secret`"), std::string::npos)
        << j["errors"][0]["message"];
  }
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

#include "warden/cli/demo_command.h"

#include <fmt/core.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/env.h"
#include "warden/cli/cli_support.h"
#include "warden/cli/diff_command.h"
#include "warden/diff/diff.h"
#include "warden/kb/kb.h"
#include "warden/samples/demo_modules.h"

namespace trove::warden::cli {

namespace {

constexpr const char* kRuntimeFile = "runtime.wasm";
constexpr const char* kV1File = "app-v1.wasm";
constexpr const char* kV2File = "app-v2.wasm";

void Say(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputs("\n", stdout);
  std::fflush(stdout);
}

// Keys of the defined functions of a module description by function index.
std::map<std::uint32_t, std::string> KeysByIndex(const samples::Module& m) {
  std::map<std::uint32_t, std::string> out;
  for (std::size_t i = 0; i < m.functions.size(); ++i) {
    out[static_cast<std::uint32_t>(m.imports.size() + i)] = m.functions[i].key;
  }
  return out;
}

// The demo's state: where it works, and the deviations found so far.
class Demo {
 public:
  Demo(base::Env& env, GlobalOptions global) : env_(env), global_(std::move(global)) {}

  // Returns the coverage of `label` (nothing when the KB or version cannot be read, recorded as
  // a deviation) after printing it in one line.
  std::optional<kb::Coverage> PrintCoverage(const std::string& label) {
    Result<std::unique_ptr<kb::Kb>> k = kb::Kb::Open(env_, *global_.db);
    Result<std::int64_t> id = k.ok() ? (*k)->ResolveVersion(label) : k.status();
    Result<kb::Coverage> c = id.ok() ? (*k)->GetCoverage(*id) : id.status();
    if (!c.ok()) {
      Deviation(fmt::format("coverage of {}: {}", label, c.status().message()));
      return std::nullopt;
    }
    Say(fmt::format(
        "coverage {}: {}/{} named ({:.1f} %): export {}, oracle {}, diff-carry {}, agent {}, "
        "human {}; placeholders (sub_<hex>) {}, real names {:.1f} %",
        label, c->named, c->defined, c->coverage_pct, c->export_named, c->oracle_named,
        c->diff_carry_named, c->agent_named, c->human_named, c->placeholder_named,
        c->real_coverage_pct));
    return *c;
  }

  void Expect(bool ok, const std::string& what) {
    if (!ok) Deviation(what);
  }
  void ExpectExit(int code, const std::string& command) {
    if (code != kExitOk) Deviation(fmt::format("{} exited {}", command, code));
  }
  void Deviation(const std::string& what) {
    deviations_.push_back(what);
    Say(fmt::format("  deviation: {}", what));
  }

  const GlobalOptions& global() const { return global_; }
  const std::vector<std::string>& deviations() const { return deviations_; }

 private:
  base::Env& env_;
  const GlobalOptions global_;
  std::vector<std::string> deviations_;
};

// Step 6's check: every function pairs with the function of the same key, the modified one is
// classified modified and every other pair unchanged or moved, the added one is new and the
// deleted one deleted.
void CheckDiff(Demo& demo, base::Env& env, const samples::DemoPlan& plan) {
  Result<std::unique_ptr<kb::Kb>> k = kb::Kb::Open(env, *demo.global().db);
  if (!k.ok()) return demo.Deviation(k.status().message());
  Result<std::optional<kb::DiffRecord>> stored = (*k)->GetDiff(1, 2);
  demo.Expect(stored.ok() && stored->has_value(), "no diff of v1 and v2 is stored");
  Result<diff::VersionSide> from = diff::LoadSide(**k, 1);
  Result<diff::VersionSide> to = from.ok() ? diff::LoadSide(**k, 2) : from;
  if (!to.ok()) return demo.Deviation(to.status().message());
  const diff::DiffReport report = diff::ComputeDiff(*from, *to);
  const std::map<std::uint32_t, std::string> v1 = KeysByIndex(samples::DemoApplication(1));
  const std::map<std::uint32_t, std::string> v2 = KeysByIndex(samples::DemoApplication(2));
  std::size_t seen = 0;
  for (const diff::Change& c : report.changes) {
    ++seen;
    const std::string from_key = c.from_index ? v1.at(*c.from_index) : "-";
    const std::string to_key = c.to_index ? v2.at(*c.to_index) : "-";
    const std::string what =
        fmt::format("{} -> {} classified {}", from_key, to_key, diff::ChangeClassName(c.change));
    switch (c.change) {
      case diff::ChangeClass::kNew:
        demo.Expect(to_key == plan.added, what);
        break;
      case diff::ChangeClass::kDeleted:
        demo.Expect(from_key == plan.deleted, what);
        break;
      case diff::ChangeClass::kModified:
        demo.Expect(from_key == plan.modified && to_key == plan.modified, what);
        break;
      default:
        demo.Expect(from_key == to_key && from_key != plan.modified, what);
        break;
    }
  }
  demo.Expect(seen == v1.size() + 1,
              fmt::format("the diff lists {} functions, not {}", seen, v1.size() + 1));
}

}  // namespace

int RunDemo(base::Env& env, const GlobalOptions& global, const DemoArgs& args) {
  return RunDemoExpecting(env, global, args, samples::DemoModulesPlan());
}

int RunDemoExpecting(base::Env& env, const GlobalOptions& global, const DemoArgs& args,
                     const samples::DemoPlan& plan) {
  // The directory: --dir (created when missing; refused when it holds a project), else a fresh
  // temporary one, named on stderr only so that stdout stays the same from run to run.
  std::string dir;
  std::string shown;
  if (args.dir) {
    dir = AbsolutePath(global.cwd, *args.dir);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) {
      Error(fmt::format("demo: cannot create {}: {}", *args.dir, ec.message()));
      return kExitUsage;
    }
    if (env.FileExists(dir + "/.warden/warden.db")) {
      Error(fmt::format("demo: {} already holds a WARDEN project (give a new or empty directory)",
                        *args.dir));
      return kExitUsage;
    }
    shown = *args.dir;
  } else {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/warden-demo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (::mkdtemp(pattern.data()) == nullptr) {
      Error(fmt::format("demo: cannot create a temporary directory from {}", pattern));
      return kExitUsage;
    }
    dir = pattern;
    shown = "a new temporary directory";
    std::fputs(fmt::format("warden demo: working in {}\n", dir).c_str(), stderr);
  }

  for (const auto& [file, module] : {std::pair{kRuntimeFile, samples::DemoRuntime()},
                                     std::pair{kV1File, samples::DemoApplication(1)},
                                     std::pair{kV2File, samples::DemoApplication(2)}}) {
    Result<std::vector<std::uint8_t>> bytes = samples::WriteModule(module);
    Status s = bytes.ok() ? env.WriteFile(fmt::format("{}/{}", dir, file),
                                          std::string(bytes->begin(), bytes->end()))
                          : bytes.status();
    if (!s.ok()) {
      Error(fmt::format("demo: cannot write {}: {}", file, s.message()));
      return kExitCheckFailed;
    }
  }

  // Every command runs as if typed in DIR, on its KB, plain text, no progress bars or colour.
  GlobalOptions g;
  g.cwd = dir;
  g.db = dir + "/.warden/warden.db";
  Demo demo(env, g);
  const auto defined_v1 = static_cast<std::int64_t>(plan.runtime.size() + plan.application.size());
  const auto runtime = static_cast<std::int64_t>(plan.runtime.size());
  const auto exported = static_cast<std::int64_t>(plan.exported.size());

  Say(
      fmt::format("warden demo: the loop of docs/warden.md §10.3, offline, on modules written by "
                  "the samples writer ({}, {}, {})",
                  kRuntimeFile, kV1File, kV2File));

  Say(fmt::format("\n== step 1: create a KB in {}", shown));
  Say("$ warden init --project demo");
  GlobalOptions init = g;
  init.db.reset();
  demo.ExpectExit(RunInit(env, init, "demo"), "warden init");
  Say("coverage: no version yet");

  Say("\n== step 2: ingest v1 (stripped; names seeded from its exports)");
  Say(fmt::format("$ warden ingest {} --label v1", kV1File));
  demo.ExpectExit(RunIngest(env, g, {.wasm = kV1File, .label = "v1"}), "warden ingest v1");
  if (std::optional<kb::Coverage> c = demo.PrintCoverage("v1")) {
    demo.Expect(c->defined == defined_v1,
                fmt::format("v1 has {} defined functions, not {}", c->defined, defined_v1));
    demo.Expect(c->named == exported && c->export_named == exported,
                fmt::format("v1: {} export names, not {}", c->export_named, exported));
  }

  Say(fmt::format("\n== step 3: the Oracle: a store from {} (named), then identify v1",
                  kRuntimeFile));
  demo.ExpectExit(DemoOracleStep(env, g,
                                 {.runtime_wasm = kRuntimeFile,
                                  .library = "demo-runtime",
                                  .version = "v1",
                                  .store = dir + "/.warden/oracle.db"}),
                  "the oracle step");
  if (std::optional<kb::Coverage> c = demo.PrintCoverage("v1")) {
    demo.Expect(
        c->oracle_named == runtime,
        fmt::format("the Oracle named {} runtime functions, not {}", c->oracle_named, runtime));
    demo.Expect(c->named == exported + runtime,
                fmt::format("v1: {} named after the Oracle, not {}", c->named, exported + runtime));
  }

  Say("\n== step 4: an offline agent pass on v1");
  Say("$ warden agent v1 --backend offline");
  demo.ExpectExit(RunAgent(env, g, {.version = "v1", .backend = "offline"}), "warden agent v1");
  if (std::optional<kb::Coverage> c = demo.PrintCoverage("v1")) {
    demo.Expect(c->named == c->defined, "v1 is not fully named after the agent pass");
    demo.Expect(c->agent_named == defined_v1 - exported - runtime,
                fmt::format("the agent named {} functions of v1, not {}", c->agent_named,
                            defined_v1 - exported - runtime));
    demo.Expect(c->real_named + c->placeholder_named == c->named, "placeholders miscounted");
  }

  Say("\n== step 5: ingest v2 (reordered, one function modified, one added, one deleted)");
  Say(fmt::format("$ warden ingest {} --label v2", kV2File));
  demo.ExpectExit(RunIngest(env, g, {.wasm = kV2File, .label = "v2"}), "warden ingest v2");
  if (std::optional<kb::Coverage> c = demo.PrintCoverage("v2")) {
    // Unchanged bodies keep their stable_id and so their names; the modified and the added
    // function are unnamed.
    demo.Expect(c->defined == defined_v1,
                fmt::format("v2 has {} defined functions, not {}", c->defined, defined_v1));
    demo.Expect(c->named == c->defined - 2,
                fmt::format("v2: {} named before the diff, not {}", c->named, c->defined - 2));
  }

  Say("\n== step 6: diff v1 v2, carrying names to changed functions; the changelog");
  Say("$ warden diff v1 v2 --carry");
  demo.ExpectExit(RunDiff(env, g, {.from = "v1", .to = "v2", .carry = true}), "warden diff");
  CheckDiff(demo, env, plan);
  if (std::optional<kb::Coverage> c = demo.PrintCoverage("v2")) {
    demo.Expect(
        c->diff_carry_named == 1,
        fmt::format("{} names carried, not 1 (the modified function's)", c->diff_carry_named));
    demo.Expect(c->named == c->defined - 1,
                fmt::format("v2: {} named after the diff, not {}", c->named, c->defined - 1));
  }

  Say("\n== step 7: an offline agent pass on v2");
  Say("$ warden agent v2 --backend offline");
  demo.ExpectExit(RunAgent(env, g, {.version = "v2", .backend = "offline"}), "warden agent v2");
  if (std::optional<kb::Coverage> c = demo.PrintCoverage("v2")) {
    demo.Expect(c->named == c->defined, "v2 is not fully named after the agent pass");
    demo.Expect(c->diff_carry_named == 1, "the carried name did not survive the agent pass");
  }

  if (demo.deviations().empty()) {
    Say("\ndemo: ok, all 7 steps ended as expected");
    return kExitOk;
  }
  Say(fmt::format("\ndemo: FAILED, {} deviation{} from what the modules imply",
                  demo.deviations().size(), demo.deviations().size() == 1 ? "" : "s"));
  return kExitCheckFailed;
}

}  // namespace trove::warden::cli

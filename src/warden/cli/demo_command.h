// `warden demo [--dir DIR]` (docs/warden.md §10.3): the whole loop offline, on the modules of
// samples/demo_modules.h, each step run through the command layer (the Run* functions a user's
// command line reaches), coverage printed after each step, then checked against what the
// module descriptions imply:
//   1 init a KB in DIR           2 ingest v1 (export seeds)     3 Oracle: build, identify v1
//   4 offline agent pass on v1   5 ingest v2                     6 diff v1 v2 --carry (changelog)
//   7 offline agent pass on v2
// stdout is byte-identical between runs (no path, time or random value in it: a temporary
// DIR is named on stderr only). Exit 0 when every step ends as expected, 1 on any deviation,
// 2 when DIR already holds a WARDEN project.
// Thread safety: runs on the calling thread; writes only in DIR.
#pragma once

#include <optional>
#include <string>

#include "warden/cli/commands.h"
#include "warden/samples/demo_modules.h"

namespace trove::warden::cli {

struct DemoArgs {
  std::optional<std::string> dir;  // default: a fresh temporary directory, kept afterwards
};

int RunDemo(base::Env& env, const GlobalOptions& global, const DemoArgs& args);
// RunDemo on the same modules, expecting what `plan` says of them instead of
// samples::DemoModulesPlan() (tests give a wrong plan to see the deviations and exit 1).
int RunDemoExpecting(base::Env& env, const GlobalOptions& global, const DemoArgs& args,
                     const samples::DemoPlan& plan);

// Step 3, the Oracle, in a file of its own (demo_oracle_step.cc) so that it is wired to the
// `warden oracle build` / `warden oracle identify` commands in one place: builds a store at
// `store` from `runtime_wasm` (library tag `library`) and identifies `version` against it,
// printing what the commands print. Returns the exit code (0: ran).
struct DemoOracleInput {
  std::string runtime_wasm;  // relative to global.cwd
  std::string library;
  std::string version;  // a label
  std::string store;    // absolute
};
int DemoOracleStep(base::Env& env, const GlobalOptions& global, const DemoOracleInput& input);

}  // namespace trove::warden::cli

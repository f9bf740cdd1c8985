// Step 3 of `warden demo`: the Oracle, through the same command layer as `warden oracle build`
// and `warden oracle identify` (docs/warden.md §2.2, §8). The demo's runtime module is the
// corpus; v1's runtime functions are matched against it and named `oracle` through the gate.
// The oracle commands print no path, so the demo's stdout stays byte-identical between runs.
#include <fmt/core.h>

#include <cstdio>

#include "warden/cli/cli_support.h"
#include "warden/cli/demo_command.h"
#include "warden/cli/oracle_command.h"

namespace trove::warden::cli {

int DemoOracleStep(base::Env& env, const GlobalOptions& global, const DemoOracleInput& input) {
  std::fputs(fmt::format("$ warden oracle build {} --library {} --store .warden/oracle.db\n",
                         input.runtime_wasm, input.library)
                 .c_str(),
             stdout);
  std::fflush(stdout);
  const int built = RunOracleBuild(
      env, global,
      {.modules = {input.runtime_wasm}, .library = input.library, .store = input.store});
  if (built != kExitOk) return built;
  std::fputs(
      fmt::format("$ warden oracle identify {} --store .warden/oracle.db\n", input.version).c_str(),
      stdout);
  std::fflush(stdout);
  return RunOracleIdentify(env, global, {.version = input.version, .store = input.store});
}

}  // namespace trove::warden::cli

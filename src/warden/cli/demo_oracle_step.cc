// Step 3 of `warden demo`: the Oracle.
//
// WIRING AT MERGE (docs/decisions/0058-warden-demo.md): this branch was written while
// `warden oracle build/identify` (src/warden/oracle, branch `oracle`) was being built, so the
// body of DemoOracleStep below is a STAND-IN. Once branch `oracle` is merged (its
// src/warden/cli/oracle_command.h declares RunOracleBuild / RunOracleIdentify), replace the
// whole body with the two command-layer calls:
//
//   #include "warden/cli/oracle_command.h"
//   ...
//   std::fputs(fmt::format("$ warden oracle build {} --library {} --store .warden/oracle.db\n",
//                          input.runtime_wasm, input.library).c_str(), stdout);
//   const int built = RunOracleBuild(env, global, {.modules = {input.runtime_wasm},
//                                                  .library = input.library,
//                                                  .store = input.store});
//   if (built != kExitOk) return built;
//   std::fputs(fmt::format("$ warden oracle identify {} --store .warden/oracle.db\n",
//                          input.version).c_str(), stdout);
//   return RunOracleIdentify(env, global, {.version = input.version, .store = input.store});
//
// and delete the stand-in (the anonymous namespace). Nothing else in the demo changes: step 3
// expects every runtime function of v1 named with provenance oracle, which the Oracle's exact
// and norm_hash passes give (the runtime functions have >= 5 instructions and unique bodies;
// demo_modules_test.cc checks both), and the oracle commands print no path, so stdout stays
// byte-identical. e2e/warden_demo.test.mjs accepts either form of step 3.
#include <fmt/core.h>

#include <cstdio>
#include <map>
#include <set>
#include <span>

#include "base/env.h"
#include "base/hash.h"
#include "warden/cli/cli_support.h"
#include "warden/cli/demo_command.h"
#include "warden/identity/identity.h"
#include "warden/kb/kb.h"

namespace trove::warden::cli {

namespace {

// The stand-in: the Oracle's two keyed passes reduced to what the demo needs, exact hash
// (confidence 0.98) then norm_hash (0.95), a key used only when it names one corpus function
// and one target function, functions under 5 instructions skipped, writes through the gate.
Result<std::string> StandInOracle(base::Env& env, const GlobalOptions& global,
                                  const DemoOracleInput& input) {
  ASSIGN_OR_RETURN(std::string bytes, env.ReadFile(AbsolutePath(global.cwd, input.runtime_wasm)));
  ASSIGN_OR_RETURN(identity::ModuleIdentity corpus,
                   identity::ComputeModuleIdentity(std::span<const std::uint8_t>(
                       reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size())));
  constexpr std::uint32_t kMinInstructions = 5;
  // key -> name, or "" when two corpus functions share the key.
  std::map<std::string, std::string> by_exact, by_norm;
  auto add = [](std::map<std::string, std::string>& map, const std::string& key,
                const std::string& name) {
    auto [it, inserted] = map.emplace(key, name);
    if (!inserted && it->second != name) it->second.clear();
  };
  for (const identity::FunctionIdentity& f : corpus.functions) {
    if (!f.raw_name || f.instruction_count < kMinInstructions) continue;
    add(by_exact, base::ToHex(f.exact), *f.raw_name);
    add(by_norm, base::ToHex(f.base), *f.raw_name);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<kb::Kb> k, kb::Kb::Open(env, *global.db));
  ASSIGN_OR_RETURN(std::int64_t version, k->ResolveVersion(input.version));
  ASSIGN_OR_RETURN(std::vector<kb::FunctionRecord> target, k->FunctionRecords(version));
  std::map<std::string, int> exact_uses, norm_uses;
  for (const kb::FunctionRecord& r : target) {
    if (r.is_import) continue;
    ++exact_uses[r.exact_hash];
    ++norm_uses[r.norm_hash];
  }
  int exact = 0, norm = 0, written = 0, rejected = 0;
  for (const kb::FunctionRecord& r : target) {
    if (r.is_import || r.instruction_count < kMinInstructions) continue;
    std::string name, pass;
    double confidence = 0;
    if (auto it = by_exact.find(r.exact_hash);
        it != by_exact.end() && !it->second.empty() && exact_uses[r.exact_hash] == 1) {
      name = it->second, pass = "exact", confidence = 0.98;
      ++exact;
    } else if (auto jt = by_norm.find(r.norm_hash);
               jt != by_norm.end() && !jt->second.empty() && norm_uses[r.norm_hash] == 1) {
      name = jt->second, pass = "norm_hash", confidence = 0.95;
      ++norm;
    } else {
      continue;
    }
    const std::string details =
        fmt::format(R"({{"version_id":{},"func_index":{},"library":"{}","stand_in":true}})",
                    version, r.func_index, input.library);
    ASSIGN_OR_RETURN(
        kb::Decision d,
        k->OracleWrite(pass, r.stable_id,
                       {.name = name, .confidence = confidence, .details_json = details}));
    ++(d.accepted ? written : rejected);
  }
  return fmt::format(
      "oracle (stand-in until `warden oracle` is merged): {} defined functions of {} matched "
      "against the {} named functions of {} ({} exact, {} norm_hash); {} written, {} rejected "
      "by the gate\n",
      exact + norm, input.version, corpus.functions.size(), input.runtime_wasm, exact, norm,
      written, rejected);
}

}  // namespace

int DemoOracleStep(base::Env& env, const GlobalOptions& global, const DemoOracleInput& input) {
  Result<std::string> out = StandInOracle(env, global, input);
  if (!out.ok()) {
    Error(fmt::format("demo: oracle step: {}", out.status().message()));
    return ExitFor(out.status());
  }
  std::fputs(out->c_str(), stdout);
  return kExitOk;
}

}  // namespace trove::warden::cli

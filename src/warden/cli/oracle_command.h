// `warden oracle build` and `warden oracle identify` (docs/warden.md §2.2, §8).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "warden/cli/commands.h"

namespace trove::warden::cli {

struct OracleBuildArgs {
  std::vector<std::string> modules;  // named .wasm corpus modules
  std::string library;
  std::string emscripten_version;
  std::string opt_level;
  std::string flags;
  std::string source_ref;
  std::optional<std::string> store;
};

struct OracleIdentifyArgs {
  std::optional<std::string> version;
  std::optional<std::string> store;
  bool dry_run = false;
};

// The Oracle store path (oracle::ResolveStorePath): --store, else `oracle.store` from the
// project config, else from the global config, else `.warden/oracle.db` of the project (that
// of the KB found per §2.1, else the current directory).
std::string OracleStorePath(base::Env& env, const GlobalOptions& global,
                            const std::optional<std::string>& flag);

// Adds every named function of the modules to the store (created when missing). Exit 4 for a
// malformed module (nothing of it is added), 3 for a store that cannot be opened.
int RunOracleBuild(base::Env& env, const GlobalOptions& global, const OracleBuildArgs& args);
// Matches a version against the store and writes the names through the gate (unless
// --dry-run). Exit 3 for the KB or a missing store, 6 for an unknown version.
int RunOracleIdentify(base::Env& env, const GlobalOptions& global, const OracleIdentifyArgs& args);

}  // namespace trove::warden::cli

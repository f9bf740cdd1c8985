// `warden diff FROM TO [--carry] [--changelog FILE] [--json]` (docs/warden.md §2.2, §9).
#pragma once

#include <optional>
#include <string>

#include "warden/cli/commands.h"

namespace trove::warden::cli {

struct DiffArgs {
  std::string from;
  std::string to;
  bool carry = false;
  std::optional<std::string> changelog;
};

// Diffs two versions, stores the report, optionally carries names, prints the changelog (or
// with --json the report) and writes it to --changelog FILE atomically. Exit 2 for from == to
// or an unwritable FILE, 3 for the KB, 6 for an unknown version.
int RunDiff(base::Env& env, const GlobalOptions& global, const DiffArgs& args);

}  // namespace trove::warden::cli

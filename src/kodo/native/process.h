// Internal to kodo/native: runs a program without a shell (posix_spawn) and collects its
// stdout, stderr and exit status; used to run the C compiler (build.cc) and, in tests, the
// built programs. stdin is /dev/null.
// Thread safety: RunProcess may be called from any thread (no shared state).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace trove::kodo::native {

struct ProcessResult {
  int exit_code = 0;  // the exit status; 128 + signal when killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0], which must be a path (FindInPath finds one), with `argv`. Errors: NotFound when
// the program cannot be started, Io for pipe or wait failures.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv);

// Returns the first executable `name` in the directories of $PATH, or NotFound.
Result<std::string> FindInPath(const std::string& name);

}  // namespace trove::kodo::native

// Internal: runs a program with a time limit and a cap on its output (for universal-ctags),
// through the project's process runner (base/process.h).
// stdin is /dev/null and stderr is discarded; stdout is collected. A child that outlives the
// limit, or writes more than the cap, is killed with SIGKILL and reaped.
// Thread safety: RunProgram may be called from any thread (posix_spawn, no shared state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace trove::librarian::extract::internal {

struct ProgramResult {
  int exit_code = 0;  // the exit status; 128 + signal when killed by a signal
  std::string out;    // everything written to stdout
};

// Runs argv[0] (looked up in PATH) with `argv`. `timeout_micros` 0 means no limit. Returns
// kNotFound when the program cannot be started, kDeadlineExceeded after the limit,
// kResourceExhausted when stdout exceeds `max_output_bytes`, kIo for pipe or wait failures.
Result<ProgramResult> RunProgram(const std::vector<std::string>& argv, std::int64_t timeout_micros,
                                 std::size_t max_output_bytes);

}  // namespace trove::librarian::extract::internal

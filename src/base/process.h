// Runs a program without a shell (posix_spawn), with stdin from /dev/null, and collects its
// output: the one process runner of the project (Kōdo's native builds run the C compiler with
// it, Librarian runs universal-ctags and graphviz's `dot`). Optional limits: a wall-clock time
// limit and a cap on the bytes collected; a child over either is killed with SIGKILL and
// reaped, so no child outlives the call.
// Thread safety: RunProcess and FindInPath may be called from any thread (no shared state).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/status.h"

namespace trove::base {

struct ProcessOptions {
  std::int64_t timeout_micros = 0;  // 0: no limit
  // Cap on stdout plus the collected stderr.
  std::size_t max_output_bytes = std::numeric_limits<std::size_t>::max();
  bool capture_stderr = true;  // false: stderr goes to /dev/null
  bool search_path = false;    // true: argv[0] is looked up in $PATH (posix_spawnp)
};

struct ProcessResult {
  int exit_code = 0;  // the exit status; 128 + signal when killed by a signal
  std::string out;
  std::string err;  // empty unless options.capture_stderr
};

// Runs argv[0] with `argv`. Errors: kInvalidArgument (empty argv), kNotFound (the program
// cannot be started), kDeadlineExceeded (over the time limit), kResourceExhausted (over the
// output cap), kIo (pipe, poll or wait failures). Messages name argv[0], never the arguments.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                 const ProcessOptions& options = {});

// Returns the first executable `name` in the directories of $PATH, or kNotFound.
Result<std::string> FindInPath(const std::string& name);

}  // namespace trove::base

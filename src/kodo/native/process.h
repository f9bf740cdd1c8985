// Internal to kodo/native: the project's process runner (base/process.h) as build.cc and the
// tests use it: runs a program without a shell, stdin /dev/null, stdout and stderr collected.
// Thread safety: RunProcess may be called from any thread (no shared state).
#pragma once

#include <string>
#include <vector>

#include "base/process.h"
#include "base/status.h"

namespace trove::kodo::native {

using base::FindInPath;
using base::ProcessResult;

// Runs argv[0], which must be a path (FindInPath finds one), with `argv`, without limits.
// Errors: NotFound when the program cannot be started, Io for pipe or wait failures.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv);

}  // namespace trove::kodo::native

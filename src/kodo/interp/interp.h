// An interpreter over Kōdo MIR (docs/kodo.md §4.9): `kodoc run FILE [-- ARGS]`.
// It runs the lowered program (mir/lower.h) with the runtime semantics of docs/kodo.md §4.9 —
// 64-bit wrapping integers, truncating division that traps on a zero divisor, Rust-`Display` float
// formatting — and the builtins of docs/kodo.md §4.6 (runtime.cc).
//
// Kōdo calls never recurse on the host stack: the interpreter keeps an explicit frame stack, so
// deep recursion in a program ends with a "stack overflow" message and exit 134 when the stack
// holds RunOptions::max_frames frames, never with a crash of the host process. A step limit and
// a live-memory limit bound what a program can make the host do (for the MCP server and fuzzing).
//
// Exit statuses (RunResult::exit_code): 0 when `main` returns; n after `exit(n)`; 134 for a
// contract or refinement violation (docs/kodo.md §4.9), an index out of bounds, a stack overflow
// and `unwrap` of None/Err (all aborts upstream); 136 for an integer division or remainder by zero
// (SIGFPE upstream); 124 when the step or memory limit is crossed.
//
// Thread safety: Run uses only its arguments; runs on different threads are independent.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kodo/mir/mir.h"

namespace trove::kodo::interp {

inline constexpr int kExitAbort = 134;
inline constexpr int kExitDivide = 136;
inline constexpr int kExitLimit = 124;
// All remaining tasks wait (a channel nobody sends to, a future or parallel block that cannot
// finish): the program stops with a "deadlock: " message naming each task, never hangs.
inline constexpr int kExitDeadlock = 134;

struct RunOptions {
  // The program's command-line arguments (`args()`); upstream includes the program path first.
  std::vector<std::string> args;
  // Receives stdout text as it is produced (flushed at each newline-ending chunk of 64 KiB and at
  // the end). Null: collected in RunResult::out.
  std::function<void(std::string_view)> write_out;
  // Receives stderr text. Null: collected in RunResult::err.
  std::function<void(std::string_view)> write_err;
  // Returns one line of stdin without its newline, or false at end of input (`readln`).
  std::function<bool(std::string&)> read_line;
  // The most MIR instructions and terminators executed; 0 = no limit.
  std::uint64_t max_steps = 0;
  // The most nested Kōdo calls before "stack overflow".
  std::uint32_t max_frames = 100000;
  // The most bytes of live runtime values (strings, collections, structs); 0 = no limit.
  std::uint64_t max_memory_bytes = 0;
  // Whether the file and environment builtins may touch the host (off for the MCP server).
  bool allow_host_io = true;
  // Run as `kodoc test`'s runtime (docs/kodo.md §4.8, test_hooks.cc): assertions print upstream's
  // test messages to stderr and mark the current test failed instead of stopping the program, and
  // the kodo_test_* / kodo_prop_* hooks are available.
  bool test_mode = false;
};

struct RunResult {
  int exit_code = 0;
  std::string out;  // stdout, unless RunOptions::write_out was set
  std::string err;  // stderr, unless RunOptions::write_err was set
  std::uint64_t steps = 0;
};

// Runs `program`'s `main`. A program without `main` exits 1 with a message on stderr.
RunResult Run(const mir::Program& program, const RunOptions& options = {});

// Returns `x` as Rust's `Display` for f64 prints it (docs/kodo.md §4.9): shortest round-trip
// digits, never an exponent, integral values without a fractional part, `NaN`, `inf`, `-inf`.
std::string FormatFloat(double x);

}  // namespace trove::kodo::interp

// MIR optimiser passes (docs/kodo.md §7.7; upstream runs the same five before code generation):
// inlining of small functions, constant folding, copy propagation,
// dead-assignment elimination and IncRef/DecRef pair elimination. Every pass rewrites a Program
// in place and keeps its data structures (mir.h) unchanged, so a later consumer (the interpreter,
// a native emitter) reads an optimised program exactly as an unoptimised one.
//
// What the passes keep: the program's stdout, stderr and exit status under the interpreter's
// semantics (docs/kodo.md §4.9). Folding never folds an operation that traps at run time (a zero
// divisor, MIN / -1, operands of mismatched types): it stays in the program and traps there.
// Integer folding wraps as the interpreter does. What they may change: the number of steps a run
// takes (RunOptions::max_steps counts fewer instructions) and the number of frames (an inlined
// call pushes none). See docs/decisions/0066-kodo-test-and-mir-opt.md.
//
// Thread safety: pure functions of their arguments.
#pragma once

#include <cstddef>

#include "kodo/mir/mir.h"

namespace trove::kodo::mir::opt {

// 0: no passes; 1 (the default of `kodoc run`/`mir`/`test`): all five.
inline constexpr int kDefaultLevel = 1;

struct Stats {
  std::size_t inlined = 0;         // calls replaced by the callee's body
  std::size_t folded = 0;          // values folded to a constant, branches to a goto
  std::size_t propagated = 0;      // uses of a copied local replaced by its source
  std::size_t dead_removed = 0;    // assignments removed because nothing reads them
  std::size_t refcount_pairs = 0;  // IncRef/DecRef pairs removed
};

struct InlineOptions {
  // A callee is inlined when its entry block ends in Return and has at most this many
  // instructions, does not call itself and reads no local before writing it.
  std::size_t max_callee_insts = 8;
  // A caller stops growing past this many instructions in one block.
  std::size_t max_block_insts = 4096;
};

// Replaces calls of small functions by their bodies. Returns the number of calls inlined.
std::size_t InlineSmallFunctions(Program& program, const InlineOptions& options = {});
// Folds operators over constants, `!`/`-` of constants and branches on constant conditions.
std::size_t FoldConstants(Program& program);
// Replaces uses of a local that holds a copy of another local or a constant by that source,
// within a block, and across blocks for a constant assigned once in the entry block.
std::size_t PropagateCopies(Program& program);
// Removes assignments to locals nothing reads, when evaluating the value cannot trap.
std::size_t EliminateDeadAssignments(Program& program);
// Removes an IncRef(x) followed in its block by DecRef(x) with no use of x between.
std::size_t EliminateRefCountPairs(Program& program);

// Runs the passes of `level` over `program`: inline, then copy propagation, folding and dead
// assignments until nothing changes (at most a few rounds), then refcount pairs.
Stats Optimize(Program& program, int level = kDefaultLevel);

}  // namespace trove::kodo::mir::opt

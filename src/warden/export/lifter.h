// The pseudo-C lifter behind `warden export --format pseudo` and `warden show --lift` (spec
// docs/warden.md §10.2): stack values fold into expressions, structured control flow becomes
// nested blocks and loops with labelled breaks, memory accesses become typed dereferences
// (the memory index shown when it is not 0), and calls use current names.
//
// The lifted code does what the wasm does. Folding a value into a later expression moves its
// evaluation, so a pending value is first stored in a temporary (`int32_t t1 = ...;`) when
// an instruction would otherwise change what it computes or reorder its side effects: a
// write of a local it reads, a store or call while it reads memory or globals, any side
// effect or trap after a pending call or trapping load, and branches and block boundaries.
// Operands whose C evaluation order is unspecified are split the same way. So every call,
// store, global and local write and trap stays in program order; lifter_diff_test.cc checks
// it against wabt's interpreter. See docs/decisions/0049-warden-lifter-effect-order.md.
//
// Every instruction is expressed: the MVP numeric, variable, memory, call and control
// instructions directly, and any other (SIMD, atomics, bulk memory, reference types, tables)
// as an intrinsic call named after its mnemonic with '.' as '_', taking its immediates and
// operands in stack order: `memory_copy(d, s, n)`, `i32x4_add(a, b)`. Block results and
// loop parameters become variables (`r3`, `r3_1`); unreachable code after a branch is left
// out. The output is deterministic.
//
// Two dialects: kPseudo is the readable form of the exports; kC is the same code as
// compilable C (C11 with -fwrapv) for a harness that defines the helpers it names:
// WASM_LOAD(type, memory, address, offset), WASM_STORE(type, memory, address, offset,
// value), the trapping integer helpers (i32_div_s, i64_shl, i32_rotl, i32_trunc_f64_s, ...),
// the intrinsics used, g<N> for globals and the called functions. Labels become gotos there.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>

#include "base/status.h"

namespace trove::warden::exporter {

// Returns the current name of a function index (used for calls), or an empty string for
// the default `wasm_func_<index>`.
using NameOf = std::function<std::string(std::uint32_t)>;

enum class Dialect : std::uint8_t {
  kPseudo,  // readable pseudo-C: labelled break/continue, typed dereferences (default)
  kC,       // compilable C over the helper macros named above
};

struct LiftOptions {
  Dialect dialect = Dialect::kPseudo;
};

// Lifts every defined function body of the module in `bytes`: function index -> the lifted
// body (local declarations, then statements, indented two spaces per level, each line ending
// in '\n').
Result<std::map<std::uint32_t, std::string>> LiftModule(std::span<const std::uint8_t> bytes,
                                                        const NameOf& name_of,
                                                        const LiftOptions& options = {});

}  // namespace trove::warden::exporter

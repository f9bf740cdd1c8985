// The pseudo-C lifter behind `warden export --format pseudo` and `warden show --lift` (spec
// warden.md §10.2): stack values fold into expressions, structured control flow becomes
// nested blocks and loops with labelled breaks, memory accesses become typed dereferences
// (the memory index shown when it is not 0), and calls use current names.
//
// It lifts the MVP numeric, variable, memory, call and control instructions exactly. Any
// other instruction (SIMD, atomics, bulk memory, reference types, exceptions) is written as a
// statement naming its mnemonic, and the values it would consume or produce are not tracked:
// an operand that is not known prints as `?`. The output is deterministic.
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

// Lifts every defined function body of the module in `bytes`: function index -> the lifted
// body (statements, indented two spaces per level, each line ending in '\n').
Result<std::map<std::uint32_t, std::string>> LiftModule(std::span<const std::uint8_t> bytes,
                                                        const NameOf& name_of);

}  // namespace trove::warden::exporter

#include "warden/wasm/instruction.h"

#include <array>
#include <cstdint>

namespace trove::warden::wasm {

namespace {

// Single-byte opcodes (prefix 0) by code, -1 where none: one load on the hot path.
constexpr std::array<std::int16_t, 256> MakeSingleByteTable() {
  std::array<std::int16_t, 256> table{};
  table.fill(-1);
  for (const OpcodeInfo& info : kOpcodeTable) {
    if (info.prefix == 0 && info.code < 256) {
      table[info.code] = static_cast<std::int16_t>(info.opcode);
    }
  }
  return table;
}
constexpr std::array<std::int16_t, 256> kSingleByte = MakeSingleByteTable();

}  // namespace

std::optional<Opcode> LookupOpcode(std::uint8_t prefix, std::uint32_t code) {
  if (prefix == 0) {
    if (code >= kSingleByte.size() || kSingleByte[code] < 0) return std::nullopt;
    return static_cast<Opcode>(kSingleByte[code]);
  }
  // The switch is generated from the table, so the compiler picks the lookup strategy and a
  // duplicate (prefix, code) pair fails the build.
  switch ((static_cast<std::uint64_t>(prefix) << 32) | code) {
#define WASM_OPCODE(name, prefix_byte, code_value, text, imm)                       \
  case (static_cast<std::uint64_t>(prefix_byte) << 32) | std::uint64_t{code_value}: \
    return Opcode::k##name;
#include "warden/wasm/instructions.def"
#undef WASM_OPCODE
    default:
      return std::nullopt;
  }
}

}  // namespace trove::warden::wasm

namespace trove::warden::wasm {
namespace {

// kOpcodeTable is indexed by Opcode, which GetOpcodeInfo relies on.
constexpr bool TableIsIndexedByOpcode() {
  for (std::size_t i = 0; i < std::size(kOpcodeTable); ++i) {
    if (static_cast<std::size_t>(kOpcodeTable[i].opcode) != i) return false;
  }
  return true;
}
static_assert(TableIsIndexedByOpcode());

}  // namespace
}  // namespace trove::warden::wasm

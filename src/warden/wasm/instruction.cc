#include "warden/wasm/instruction.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trove::warden::wasm {

std::optional<Opcode> LookupPrefixedOpcode(std::uint8_t prefix, std::uint32_t code) {
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

// The bytes of one opcode's encoding: 1 for a one-byte opcode, else the prefix and the
// LEB128 code.
std::size_t EncodedOpcodeSize(const OpcodeInfo& info) {
  if (info.prefix == 0) return 1;
  std::size_t n = 2;
  for (std::uint32_t code = info.code >> 7; code != 0; code >>= 7) ++n;
  return n;
}

}  // namespace

void AppendOpcodeStream(std::string& out, const std::vector<Opcode>& opcodes) {
  // Sized exactly first, then written in place: one allocation of the final size, where
  // byte-by-byte appends regrew (and copied) the string for every body with a prefixed opcode.
  std::size_t size = 0;
  for (Opcode op : opcodes) size += EncodedOpcodeSize(GetOpcodeInfo(op));
  const std::size_t at = out.size();
  out.resize(at + size);
  char* p = out.data() + at;
  for (Opcode op : opcodes) {
    const OpcodeInfo& info = GetOpcodeInfo(op);
    if (info.prefix == 0) {
      *p++ = static_cast<char>(info.code);
      continue;
    }
    *p++ = static_cast<char>(info.prefix);
    std::uint32_t code = info.code;
    do {
      std::uint8_t byte = code & 0x7f;
      code >>= 7;
      if (code != 0) byte |= 0x80;
      *p++ = static_cast<char>(byte);
    } while (code != 0);
  }
}

std::optional<std::vector<std::string_view>> DecodeOpcodeStream(std::string_view stream) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < stream.size()) {
    const std::uint8_t first = static_cast<std::uint8_t>(stream[i++]);
    std::optional<Opcode> op = LookupOpcode(0, first);
    if (!op) {
      std::uint32_t code = 0;
      int shift = 0;
      bool done = false;
      while (i < stream.size() && shift < 35) {
        const std::uint8_t b = static_cast<std::uint8_t>(stream[i++]);
        code |= static_cast<std::uint32_t>(b & 0x7f) << shift;
        shift += 7;
        if ((b & 0x80) == 0) {
          done = true;
          break;
        }
      }
      if (!done) return std::nullopt;
      op = LookupOpcode(first, code);
      if (!op) return std::nullopt;
    }
    out.push_back(GetOpcodeInfo(*op).text);
  }
  return out;
}

}  // namespace trove::warden::wasm

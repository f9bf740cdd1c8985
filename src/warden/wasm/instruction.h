// The instruction table (instructions.def) as C++: Opcode, ImmKind, lookups, and the decoded
// Instruction the reader reports to a ModuleVisitor.
// Thread safety: values and constexpr functions; safe from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trove::warden::wasm {

// Which immediates follow an opcode.
enum class ImmKind : std::uint8_t {
  kNone,
  kBlockType,     // block type (empty, one value type or a type index)
  kLabel,         // label index (br, br_if, rethrow, delegate)
  kBrTable,       // vec(label) and a default label
  kFunc,          // function index
  kCallIndirect,  // type index, table index
  kLocal,         // local index
  kGlobal,        // global index
  kTable,         // table index
  kMemArg,        // alignment (bit 6: a memory index follows), [memory index], offset
  kMemory,        // memory index
  kI32,           // s32 constant
  kI64,           // s64 constant
  kF32,           // 4 bytes
  kF64,           // 8 bytes
  kSelectT,       // vec(value type)
  kHeapType,      // ref.null's heap type
  kTableCopy,     // destination table, source table
  kTableInit,     // element segment, table
  kMemInit,       // data segment, memory
  kMemCopy,       // destination memory, source memory
  kData,          // data segment index
  kElem,          // element segment index
  kMemArgLane,    // memarg and a lane byte
  kLane,          // lane byte
  kV128,          // 16 bytes
  kShuffle,       // 16 lane bytes
  kTag,           // tag index
  kTryTable,      // block type, vec(catch clause)
  kZeroByte,      // a reserved 0x00 byte (atomic.fence)
};

enum class Opcode : std::uint16_t {
#define WASM_OPCODE(name, prefix, code, text, imm) k##name,
#include "warden/wasm/instructions.def"
#undef WASM_OPCODE
};

struct OpcodeInfo {
  Opcode opcode;
  std::uint8_t prefix;  // 0 for one-byte opcodes
  std::uint32_t code;
  std::string_view text;
  ImmKind imm;
};

inline constexpr OpcodeInfo kOpcodeTable[] = {
#define WASM_OPCODE(name, prefix, code, text, imm) \
  {Opcode::k##name, prefix, code, text, ImmKind::imm},
#include "warden/wasm/instructions.def"
#undef WASM_OPCODE
};

// Returns the table entry of `opcode`.
constexpr const OpcodeInfo& GetOpcodeInfo(Opcode opcode) {
  return kOpcodeTable[static_cast<std::size_t>(opcode)];
}
namespace internal {
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
inline constexpr std::array<std::int16_t, 256> kSingleByteOpcodes = MakeSingleByteTable();
}  // namespace internal

// Returns the opcode for a prefix byte (not 0) and code, or nullopt when unknown.
std::optional<Opcode> LookupPrefixedOpcode(std::uint8_t prefix, std::uint32_t code);
// Returns the opcode for a prefix byte (0 if none) and code, or nullopt when unknown.
// Inline: the reader looks up nearly every instruction with prefix 0.
inline std::optional<Opcode> LookupOpcode(std::uint8_t prefix, std::uint32_t code) {
  if (prefix != 0) return LookupPrefixedOpcode(prefix, code);
  if (code >= internal::kSingleByteOpcodes.size() || internal::kSingleByteOpcodes[code] < 0) {
    return std::nullopt;
  }
  return static_cast<Opcode>(internal::kSingleByteOpcodes[code]);
}
// Returns true when `byte` starts a multi-byte opcode (0xfc, 0xfd, 0xfe).
constexpr bool IsPrefixByte(std::uint8_t byte) {
  return byte == 0xfc || byte == 0xfd || byte == 0xfe;
}

// Value types the reader accepts (GC reference types are rejected as unsupported).
enum class ValType : std::uint8_t {
  kI32 = 0x7f,
  kI64 = 0x7e,
  kF32 = 0x7d,
  kF64 = 0x7c,
  kV128 = 0x7b,
  kFuncRef = 0x70,
  kExternRef = 0x6f,
  kExnRef = 0x69,
};

struct BlockType {
  enum class Kind : std::uint8_t { kEmpty, kValue, kTypeIndex };
  Kind kind = Kind::kEmpty;
  ValType value = ValType::kI32;  // kValue
  std::uint32_t type_index = 0;   // kTypeIndex
};

struct MemArg {
  std::uint32_t align_log2 = 0;  // without the memory-index flag (bit 6)
  std::uint32_t memory = 0;      // explicit when bit 6 was set, else 0
  std::uint64_t offset = 0;
};

// One try_table catch clause: catch (0), catch_ref (1), catch_all (2), catch_all_ref (3).
struct CatchClause {
  std::uint8_t kind = 0;
  std::uint32_t tag = 0;  // kinds 0 and 1
  std::uint32_t label = 0;
};

// One decoded instruction. Which fields are set follows GetOpcodeInfo(opcode).imm:
// index (label, function, local, global, table, memory, tag, segment, type), index2 (the
// second index of call_indirect, table.copy/init, memory.init/copy), i64 for i32/i64.const,
// bits for f32/f64.const, bytes for v128.const/i8x16.shuffle, lane, memarg, block_type,
// targets (br_table: the labels, then the default as `index`), types (select t, ref.null's
// heap type as one entry), catches (try_table).
struct Instruction {
  Opcode opcode = Opcode::kUnreachable;
  std::uint64_t offset = 0;  // absolute offset of the first opcode byte
  std::uint32_t index = 0;
  std::uint32_t index2 = 0;
  std::int64_t i64 = 0;
  std::uint64_t bits = 0;
  std::uint8_t lane = 0;
  std::array<std::uint8_t, 16> bytes{};
  MemArg memarg;
  BlockType block_type;
  std::vector<std::uint32_t> targets;
  std::vector<ValType> types;
  std::vector<CatchClause> catches;
};

// Appends each opcode in its binary encoding: one byte, or a prefix byte and the LEB128 code.
// The stream stays decodable if instructions.def is reordered (it stores no enumerators).
void AppendOpcodeStream(std::string& out, const std::vector<Opcode>& opcodes);

// Returns the text-format mnemonic of each opcode of a stream written by AppendOpcodeStream;
// nullopt when the stream is malformed.
std::optional<std::vector<std::string_view>> DecodeOpcodeStream(std::string_view stream);

}  // namespace trove::warden::wasm

#include "warden/wasm/reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "warden/wasm/byte_cursor.h"

namespace trove::warden::wasm {
namespace {

// Gives `inst` the value of a default-constructed Instruction, field by field, keeping the
// vectors' capacity. A field added to Instruction must be reset here too (the size check
// below is a reminder; ReaderTest.EachInstructionStartsFromDefaults checks the values).
void ResetInstruction(Instruction& inst) {
  static_assert(sizeof(Instruction) == 160 || sizeof(void*) != 8,
                "a field was added to Instruction: reset it in ResetInstruction");
  inst.opcode = Opcode::kUnreachable;
  inst.offset = 0;
  inst.index = 0;
  inst.index2 = 0;
  inst.i64 = 0;
  inst.bits = 0;
  inst.lane = 0;
  // Two 8-byte stores: g++ 12 made `bytes.fill(0)` a call to memset, on the hot path.
  static_assert(sizeof(inst.bytes) == 16);
  constexpr std::uint64_t kZero = 0;
  std::memcpy(inst.bytes.data(), &kZero, 8);
  std::memcpy(inst.bytes.data() + 8, &kZero, 8);
  inst.memarg = MemArg{};
  inst.block_type = BlockType{};
  inst.targets.clear();
  inst.types.clear();
  inst.catches.clear();
}

// The bytes that encode a value type (i32 i64 f32 f64 v128 funcref externref exnref).
constexpr bool IsValTypeByte(std::uint8_t byte) {
  switch (byte) {
    case 0x7f:
    case 0x7e:
    case 0x7d:
    case 0x7c:
    case 0x7b:
    case 0x70:
    case 0x6f:
    case 0x69:
      return true;
    default:
      return false;
  }
}

// --- The decoder's fast path ---
// ReadInstructionFast decodes the instructions that make up nearly all of a body -- one-byte
// opcodes whose immediates are LEB128s too short for any encoding of them to be invalid, a
// plain memarg, a one-byte block type, float bits -- from a raw pointer, without a Result
// per read. It commits nothing unless the whole instruction is on that path; anything else,
// including anything that could be an error, is read by ReadInstruction from the same byte,
// so both give the same Instruction and the same errors.

// Reads an unsigned LEB128 of at most kMaxBytes bytes, each of which carries 7 value bits:
// with kMaxBytes below the width's limit (4 for u32, 9 for u64), no such encoding is invalid.
template <int kMaxBytes>
inline bool FastVarU(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& out) {
  std::uint64_t result = 0;
  for (int i = 0; i < kMaxBytes; ++i) {
    if (p + i == end) return false;
    const std::uint8_t byte = p[i];
    result |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      p += i + 1;
      out = result;
      return true;
    }
  }
  return false;
}

// The same for a signed LEB128 (4 bytes for s32, 9 for s64), sign-extended from its last bit.
template <int kMaxBytes>
inline bool FastVarS(const std::uint8_t*& p, const std::uint8_t* end, std::int64_t& out) {
  static_assert(kMaxBytes <= 9);
  std::uint64_t result = 0;
  for (int i = 0; i < kMaxBytes; ++i) {
    if (p + i == end) return false;
    const std::uint8_t byte = p[i];
    result |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      if ((byte & 0x40) != 0) result |= ~std::uint64_t{0} << (7 * (i + 1));
      p += i + 1;
      out = static_cast<std::int64_t>(result);
      return true;
    }
  }
  return false;
}

inline std::uint64_t LoadLittleEndian(const std::uint8_t* p, int bytes) {
  std::uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) value = (value << 8) | p[i];
  return value;
}

// Decodes the instruction at `c` into `inst` (its opcode and the fields of its immediates)
// and moves `c` past it when it is on the fast path; otherwise returns false and leaves both
// alone. `memory64`: memory 0 is a memory64 (its memarg offsets are u64).
inline bool ReadInstructionFast(ByteCursor& c, Instruction& inst, bool memory64) {
  const std::span<const std::uint8_t> rest = c.rest();
  const std::uint8_t* p = rest.data();
  const std::uint8_t* const end = p + rest.size();
  if (p == end) return false;
  const std::int16_t code = internal::kSingleByteOpcodes[*p];
  if (code < 0) return false;  // a prefix, or not an opcode
  ++p;
  const OpcodeInfo& info = kOpcodeTable[static_cast<std::size_t>(code)];
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::int64_t constant = 0;
  switch (info.imm) {
    case ImmKind::kNone:
      break;
    case ImmKind::kLabel:
    case ImmKind::kFunc:
    case ImmKind::kLocal:
    case ImmKind::kGlobal:
    case ImmKind::kTable:
    case ImmKind::kMemory:
      if (!FastVarU<4>(p, end, a)) return false;
      inst.index = static_cast<std::uint32_t>(a);
      break;
    case ImmKind::kCallIndirect:
      if (!FastVarU<4>(p, end, a) || !FastVarU<4>(p, end, b)) return false;
      inst.index = static_cast<std::uint32_t>(a);
      inst.index2 = static_cast<std::uint32_t>(b);
      break;
    case ImmKind::kI32:
      if (!FastVarS<4>(p, end, constant)) return false;
      inst.i64 = constant;
      break;
    case ImmKind::kI64:
      if (!FastVarS<9>(p, end, constant)) return false;
      inst.i64 = constant;
      break;
    case ImmKind::kF32:
      if (end - p < 4) return false;
      inst.bits = LoadLittleEndian(p, 4);
      p += 4;
      break;
    case ImmKind::kF64:
      if (end - p < 8) return false;
      inst.bits = LoadLittleEndian(p, 8);
      p += 8;
      break;
    case ImmKind::kMemArg:
      // An alignment with bit 6 (a memory index follows) or past 63 is left to ReadMemArg.
      if (!FastVarU<4>(p, end, a) || a >= 64) return false;
      if (!(memory64 ? FastVarU<9>(p, end, b) : FastVarU<4>(p, end, b))) return false;
      inst.memarg.align_log2 = static_cast<std::uint32_t>(a);
      inst.memarg.offset = b;
      break;
    case ImmKind::kBlockType:
      if (p == end) return false;
      if (IsValTypeByte(*p)) {
        inst.block_type.kind = BlockType::Kind::kValue;
        inst.block_type.value = static_cast<ValType>(*p);
      } else if (*p != 0x40) {  // 0x40: the empty block type
        return false;
      }
      ++p;
      break;
    default:
      return false;
  }
  inst.opcode = static_cast<Opcode>(code);
  inst.offset = c.offset();
  c.Skip(static_cast<std::size_t>(p - rest.data()));
  return true;
}

constexpr std::uint8_t kMaxSectionId = 13;
constexpr std::uint8_t kDataCountSectionId = 12;

// Position of each section id in the required order (custom sections, id 0, go anywhere).
// Tag (13) sits between memory and global; data count (12) between element and code.
constexpr std::array<int, kMaxSectionId + 1> kSectionRank = {0, 1, 2,  3,  4,  5,  7,
                                                             8, 9, 10, 12, 13, 11, 6};

constexpr std::array<std::string_view, kMaxSectionId + 1> kSectionNames = {
    "custom section", "type section",   "import section",     "function section", "table section",
    "memory section", "global section", "export section",     "start section",    "element section",
    "code section",   "data section",   "data count section", "tag section"};

bool IsGcTypeByte(std::uint8_t byte) {
  // (ref null ht), (ref ht) and the GC abstract heap types.
  return byte == 0x63 || byte == 0x64 || (byte >= 0x6a && byte <= 0x6e) ||
         (byte >= 0x71 && byte <= 0x74);
}

Status UnsupportedGc(std::uint64_t at, std::string_view what, std::uint8_t byte) {
  return Status::Unsupported(fmt::format("{}: {}: unsupported feature: gc (byte {:#04x})",
                                         ByteCursor::Location(at), what, byte));
}

// Adds `where` ("code section", "function 17") to a reader error right after its location, so
// that the error reads as docs/warden.md §4.5 spells it: "offset 0x1a2b (6699), code section,
// function 17: function body: body ends inside a block". The innermost step is added first
// and each outer one goes in front of it. An error without a location (a visitor's) gets
// "where: " in front instead.
Status Within(Status st, std::string_view where) {
  if (st.ok()) return st;
  const std::string& message = st.message();
  if (message.starts_with("offset ")) {
    if (const std::size_t close = message.find(')'); close != std::string::npos) {
      return Status(st.code(),
                    fmt::format("{}, {}{}", std::string_view(message).substr(0, close + 1), where,
                                std::string_view(message).substr(close + 1)));
    }
  }
  return std::move(st).WithContext(where);
}

class Reader {
 public:
  Reader(ModuleVisitor& visitor, const ReadOptions& options)
      : visitor_(visitor), options_(options) {}

  Status Read(std::span<const std::uint8_t> bytes);

 private:
  Status ReadSection(std::uint8_t id, ByteCursor& c);
  Status ReadTypeSection(ByteCursor& c);
  Status ReadImportSection(ByteCursor& c);
  Status ReadFunctionSection(ByteCursor& c);
  Status ReadTableSection(ByteCursor& c);
  Status ReadMemorySection(ByteCursor& c);
  Status ReadTagSection(ByteCursor& c);
  Status ReadGlobalSection(ByteCursor& c);
  Status ReadExportSection(ByteCursor& c);
  Status ReadStartSection(ByteCursor& c);
  Status ReadElementSection(ByteCursor& c);
  Status ReadDataCountSection(ByteCursor& c);
  Status ReadCodeSection(ByteCursor& c);
  Status ReadDataSection(ByteCursor& c);
  Status ReadCustomSection(ByteCursor& c);
  Status ReadNameSection(ByteCursor& c);
  // Reads the name subsections; reports the names only when `deliver`.
  Status ReadNames(ByteCursor& c, bool deliver);
  Status ReadNameMap(ByteCursor& c, NameKind kind, bool deliver);
  Status ReadIndirectNameMap(ByteCursor& c, NameKind kind, bool deliver);
  // Reads one body; `run` (kInstructionRun instructions, reused) holds the instructions
  // decoded and not yet passed to the visitor.
  Status ReadFunctionBody(FuncIndex func, ByteCursor& body, std::vector<Instruction>& run);
  // Decodes framed bodies on options_.decode_threads threads; see ReadOptions.
  Status ReadBodiesConcurrently(std::vector<ByteCursor>& bodies);

  Result<std::uint32_t> ReadItemCount(ByteCursor& c, std::string_view what,
                                      std::uint64_t min_item_bytes);
  Result<ValType> ReadValType(ByteCursor& c, std::string_view what);
  Result<ValType> ReadRefType(ByteCursor& c, std::string_view what);
  Result<Limits> ReadLimits(ByteCursor& c, std::string_view what, bool memory);
  Result<TableType> ReadTableType(ByteCursor& c);
  Result<GlobalType> ReadGlobalType(ByteCursor& c);
  Result<BlockType> ReadBlockType(ByteCursor& c, std::string_view what);
  Status ReadMemArg(ByteCursor& c, std::string_view what, MemArg& memarg);
  // Reads one instruction and its immediates into `inst`.
  Status ReadInstruction(ByteCursor& c, Instruction& inst);
  // Reads a constant expression up to and without its `end`.
  Result<std::vector<Instruction>> ReadConstExpr(ByteCursor& c, std::string_view what);

  ModuleVisitor& visitor_;
  const ReadOptions& options_;
  std::uint32_t imported_functions_ = 0;
  std::uint32_t imported_tables_ = 0;
  std::uint32_t imported_memories_ = 0;
  std::uint32_t imported_globals_ = 0;
  std::uint32_t imported_tags_ = 0;
  std::uint32_t declared_functions_ = 0;
  std::uint32_t num_tables_ = 0;
  std::uint32_t num_globals_ = 0;
  std::uint32_t num_tags_ = 0;
  std::uint32_t bodies_read_ = 0;
  bool code_seen_ = false;
  std::vector<bool> memory64_;  // per memory index, imports first
  std::optional<std::uint32_t> data_count_;
  std::optional<std::uint32_t> data_segments_read_;
  bool name_section_seen_ = false;
};

Status Reader::Read(std::span<const std::uint8_t> bytes) {
  if (bytes.size() > options_.max_module_bytes) {
    return Status::ResourceExhausted(
        fmt::format("{}: module: size {} exceeds the limit of {} bytes", ByteCursor::Location(0),
                    bytes.size(), options_.max_module_bytes));
  }
  ByteCursor c(bytes);
  ASSIGN_OR_RETURN(std::uint32_t magic, c.ReadFixedU32("magic"));
  if (magic != 0x6d736100) {
    return ByteCursor::Malformed(0, "magic", fmt::format("expected \\0asm, got {:#010x}", magic));
  }
  ASSIGN_OR_RETURN(std::uint32_t version, c.ReadFixedU32("version"));
  if (version != 1) {
    return ByteCursor::Malformed(4, "version", fmt::format("unsupported version {}", version));
  }
  std::array<bool, kMaxSectionId + 1> seen{};
  int last_rank = 0;
  std::uint8_t last_id = 0;
  while (!c.empty()) {
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(std::uint8_t id, c.ReadU8("section id"));
    if (id > kMaxSectionId) {
      return ByteCursor::Malformed(at, "section id", fmt::format("unknown section id {}", id));
    }
    const std::string_view name = kSectionNames[id];
    ASSIGN_OR_RETURN(std::uint32_t size, c.ReadVarU32(name));
    ASSIGN_OR_RETURN(ByteCursor section, c.Take(size, name));
    if (id != 0) {
      if (seen[id]) return ByteCursor::Malformed(at, name, "duplicate section");
      if (kSectionRank[id] < last_rank) {
        return ByteCursor::Malformed(
            at, name, fmt::format("out of order: must come before the {}", kSectionNames[last_id]));
      }
      seen[id] = true;
      last_rank = kSectionRank[id];
      last_id = id;
    }
    if (Status st = ReadSection(id, section); !st.ok()) return Within(std::move(st), name);
    if (!section.empty()) {
      return ByteCursor::Malformed(
          section.offset(), name,
          fmt::format("section size mismatch: {} bytes left unread", section.remaining()));
    }
  }
  if (!code_seen_ && declared_functions_ != 0) {
    return ByteCursor::Malformed(
        c.offset(), "module",
        fmt::format("function section declares {} functions but there is no code section",
                    declared_functions_));
  }
  if (data_count_ && *data_count_ != data_segments_read_.value_or(0)) {
    return ByteCursor::Malformed(
        c.offset(), "module",
        fmt::format("data count section says {} segments but the data section has {}", *data_count_,
                    data_segments_read_.value_or(0)));
  }
  return {};
}

Status Reader::ReadSection(std::uint8_t id, ByteCursor& c) {
  switch (id) {
    case 0:
      return ReadCustomSection(c);
    case 1:
      return ReadTypeSection(c);
    case 2:
      return ReadImportSection(c);
    case 3:
      return ReadFunctionSection(c);
    case 4:
      return ReadTableSection(c);
    case 5:
      return ReadMemorySection(c);
    case 6:
      return ReadGlobalSection(c);
    case 7:
      return ReadExportSection(c);
    case 8:
      return ReadStartSection(c);
    case 9:
      return ReadElementSection(c);
    case 10:
      return ReadCodeSection(c);
    case 11:
      return ReadDataSection(c);
    case kDataCountSectionId:
      return ReadDataCountSection(c);
    case 13:
      return ReadTagSection(c);
    default:
      return Status::Internal(fmt::format("section id {} not dispatched", id));
  }
}

Result<std::uint32_t> Reader::ReadItemCount(ByteCursor& c, std::string_view what,
                                            std::uint64_t min_item_bytes) {
  const std::uint64_t at = c.offset();
  ASSIGN_OR_RETURN(std::uint32_t count, c.ReadCount(what, min_item_bytes));
  if (count > options_.max_section_items) {
    return Status::ResourceExhausted(fmt::format("{}: {}: {} items exceed the limit of {}",
                                                 ByteCursor::Location(at), what, count,
                                                 options_.max_section_items));
  }
  return count;
}

Result<ValType> Reader::ReadValType(ByteCursor& c, std::string_view what) {
  const std::uint64_t at = c.offset();
  ASSIGN_OR_RETURN(std::uint8_t byte, c.ReadU8(what));
  if (IsValTypeByte(byte)) return static_cast<ValType>(byte);
  if (IsGcTypeByte(byte)) return UnsupportedGc(at, what, byte);
  return ByteCursor::Malformed(at, what, fmt::format("invalid value type {:#04x}", byte));
}

Result<ValType> Reader::ReadRefType(ByteCursor& c, std::string_view what) {
  const std::uint64_t at = c.offset();
  ASSIGN_OR_RETURN(ValType type, ReadValType(c, what));
  if (type != ValType::kFuncRef && type != ValType::kExternRef && type != ValType::kExnRef) {
    return ByteCursor::Malformed(
        at, what, fmt::format("expected a reference type, got {:#04x}", static_cast<int>(type)));
  }
  return type;
}

Result<Limits> Reader::ReadLimits(ByteCursor& c, std::string_view what, bool memory) {
  const std::uint64_t at = c.offset();
  ASSIGN_OR_RETURN(std::uint8_t flags, c.ReadU8(what));
  const std::uint8_t allowed = memory ? 0x07 : 0x05;
  if (flags & ~allowed) {
    return ByteCursor::Malformed(at, what, fmt::format("invalid limits flags {:#04x}", flags));
  }
  Limits limits;
  limits.shared = (flags & 0x02) != 0;
  limits.is64 = (flags & 0x04) != 0;
  const bool has_max = (flags & 0x01) != 0;
  if (limits.shared && !has_max) {
    return ByteCursor::Malformed(at, what, "shared memory must have a maximum");
  }
  if (limits.is64) {
    ASSIGN_OR_RETURN(limits.min, c.ReadVarU64(what));
    if (has_max) {
      ASSIGN_OR_RETURN(limits.max, c.ReadVarU64(what));
    }
  } else {
    ASSIGN_OR_RETURN(limits.min, c.ReadVarU32(what));
    if (has_max) {
      ASSIGN_OR_RETURN(limits.max, c.ReadVarU32(what));
    }
  }
  return limits;
}

Result<TableType> Reader::ReadTableType(ByteCursor& c) {
  TableType table;
  ASSIGN_OR_RETURN(table.elem_type, ReadRefType(c, "table element type"));
  ASSIGN_OR_RETURN(table.limits, ReadLimits(c, "table limits", /*memory=*/false));
  return table;
}

Result<GlobalType> Reader::ReadGlobalType(ByteCursor& c) {
  GlobalType global;
  ASSIGN_OR_RETURN(global.type, ReadValType(c, "global type"));
  const std::uint64_t at = c.offset();
  ASSIGN_OR_RETURN(std::uint8_t mut, c.ReadU8("global mutability"));
  if (mut > 1) {
    return ByteCursor::Malformed(at, "global mutability", fmt::format("invalid flag {}", mut));
  }
  global.is_mutable = mut == 1;
  return global;
}

Status Reader::ReadTypeSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "type count", 3));
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(std::uint8_t form, c.ReadU8("type form"));
    if (form == 0x4e || form == 0x50 || form == 0x4f || form == 0x5f || form == 0x5e) {
      return UnsupportedGc(at, "type form", form);
    }
    if (form != 0x60) {
      return ByteCursor::Malformed(at, "type form",
                                   fmt::format("expected func type 0x60, got {:#04x}", form));
    }
    FuncType type;
    ASSIGN_OR_RETURN(std::uint32_t params, c.ReadCount("param count"));
    type.params.reserve(params);
    for (std::uint32_t p = 0; p < params; ++p) {
      ASSIGN_OR_RETURN(ValType t, ReadValType(c, "param type"));
      type.params.push_back(t);
    }
    ASSIGN_OR_RETURN(std::uint32_t results, c.ReadCount("result count"));
    type.results.reserve(results);
    for (std::uint32_t r = 0; r < results; ++r) {
      ASSIGN_OR_RETURN(ValType t, ReadValType(c, "result type"));
      type.results.push_back(t);
    }
    RETURN_IF_ERROR(visitor_.OnType(i, type));
  }
  return {};
}

Status Reader::ReadImportSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "import count", 4));
  for (std::uint32_t i = 0; i < count; ++i) {
    Import import;
    ASSIGN_OR_RETURN(import.module, c.ReadName("import module name"));
    ASSIGN_OR_RETURN(import.field, c.ReadName("import field name"));
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(std::uint8_t kind, c.ReadU8("import kind"));
    switch (kind) {
      case 0: {
        import.kind = ExternalKind::kFunction;
        import.index = imported_functions_++;
        ASSIGN_OR_RETURN(import.type_index, c.ReadVarU32("import function type index"));
        break;
      }
      case 1: {
        import.kind = ExternalKind::kTable;
        import.index = imported_tables_++;
        ASSIGN_OR_RETURN(import.table, ReadTableType(c));
        break;
      }
      case 2: {
        import.kind = ExternalKind::kMemory;
        import.index = imported_memories_++;
        ASSIGN_OR_RETURN(import.memory.limits, ReadLimits(c, "import memory limits", true));
        memory64_.push_back(import.memory.limits.is64);
        break;
      }
      case 3: {
        import.kind = ExternalKind::kGlobal;
        import.index = imported_globals_++;
        ASSIGN_OR_RETURN(import.global, ReadGlobalType(c));
        break;
      }
      case 4: {
        import.kind = ExternalKind::kTag;
        import.index = imported_tags_++;
        const std::uint64_t attr_at = c.offset();
        ASSIGN_OR_RETURN(std::uint8_t attribute, c.ReadU8("tag attribute"));
        if (attribute != 0) {
          return ByteCursor::Malformed(attr_at, "tag attribute",
                                       fmt::format("invalid attribute {}", attribute));
        }
        ASSIGN_OR_RETURN(import.type_index, c.ReadVarU32("import tag type index"));
        break;
      }
      default:
        return ByteCursor::Malformed(at, "import kind", fmt::format("invalid kind {}", kind));
    }
    RETURN_IF_ERROR(visitor_.OnImport(import));
  }
  num_tables_ = imported_tables_;
  num_globals_ = imported_globals_;
  num_tags_ = imported_tags_;
  return {};
}

Status Reader::ReadFunctionSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "function count", 1));
  RETURN_IF_ERROR(visitor_.OnFunctionCount(count));
  for (std::uint32_t i = 0; i < count; ++i) {
    ASSIGN_OR_RETURN(std::uint32_t type_index, c.ReadVarU32("function type index"));
    RETURN_IF_ERROR(visitor_.OnFunction(imported_functions_ + i, type_index));
  }
  declared_functions_ = count;
  return {};
}

Status Reader::ReadTableSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "table count", 2));
  for (std::uint32_t i = 0; i < count; ++i) {
    // The table with an initializer expression (0x40 0x00 prefix) from typed function
    // references is GC-era; plain table types start with a reference type byte.
    if (!c.empty() && c.rest()[0] == 0x40) return UnsupportedGc(c.offset(), "table type", 0x40);
    ASSIGN_OR_RETURN(TableType table, ReadTableType(c));
    RETURN_IF_ERROR(visitor_.OnTable(num_tables_++, table));
  }
  return {};
}

Status Reader::ReadMemorySection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "memory count", 2));
  for (std::uint32_t i = 0; i < count; ++i) {
    MemoryType memory;
    ASSIGN_OR_RETURN(memory.limits, ReadLimits(c, "memory limits", /*memory=*/true));
    const auto index = static_cast<std::uint32_t>(memory64_.size());
    memory64_.push_back(memory.limits.is64);
    RETURN_IF_ERROR(visitor_.OnMemory(index, memory));
  }
  return {};
}

Status Reader::ReadTagSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "tag count", 2));
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(std::uint8_t attribute, c.ReadU8("tag attribute"));
    if (attribute != 0) {
      return ByteCursor::Malformed(at, "tag attribute",
                                   fmt::format("invalid attribute {}", attribute));
    }
    ASSIGN_OR_RETURN(std::uint32_t type_index, c.ReadVarU32("tag type index"));
    RETURN_IF_ERROR(visitor_.OnTag(num_tags_++, type_index));
  }
  return {};
}

Status Reader::ReadGlobalSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "global count", 3));
  for (std::uint32_t i = 0; i < count; ++i) {
    Global global;
    global.index = num_globals_++;
    ASSIGN_OR_RETURN(global.type, ReadGlobalType(c));
    ASSIGN_OR_RETURN(global.init, ReadConstExpr(c, "global initializer"));
    RETURN_IF_ERROR(visitor_.OnGlobal(global));
  }
  return {};
}

Status Reader::ReadExportSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "export count", 3));
  for (std::uint32_t i = 0; i < count; ++i) {
    Export exp;
    ASSIGN_OR_RETURN(exp.name, c.ReadName("export name"));
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(std::uint8_t kind, c.ReadU8("export kind"));
    if (kind > 4) {
      return ByteCursor::Malformed(at, "export kind", fmt::format("invalid kind {}", kind));
    }
    exp.kind = static_cast<ExternalKind>(kind);
    ASSIGN_OR_RETURN(exp.index, c.ReadVarU32("export index"));
    RETURN_IF_ERROR(visitor_.OnExport(exp));
  }
  return {};
}

Status Reader::ReadStartSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t func, c.ReadVarU32("start function index"));
  return visitor_.OnStart(func);
}

Status Reader::ReadElementSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "element segment count", 2));
  for (std::uint32_t i = 0; i < count; ++i) {
    ElementSegment seg;
    seg.index = i;
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(seg.flags, c.ReadVarU32("element segment flags"));
    if (seg.flags > 7) {
      return ByteCursor::Malformed(at, "element segment flags",
                                   fmt::format("invalid flags {}", seg.flags));
    }
    // Bit 0: passive or declarative; bit 1: explicit table (active) or declarative (else);
    // bit 2: expressions instead of function indices.
    const bool passive_or_declarative = seg.flags & 1;
    const bool bit1 = seg.flags & 2;
    const bool exprs = seg.flags & 4;
    seg.mode = !passive_or_declarative ? SegmentMode::kActive
               : bit1                  ? SegmentMode::kDeclarative
                                       : SegmentMode::kPassive;
    if (seg.mode == SegmentMode::kActive) {
      if (bit1) {
        ASSIGN_OR_RETURN(seg.table, c.ReadVarU32("element segment table index"));
      }
      ASSIGN_OR_RETURN(seg.offset, ReadConstExpr(c, "element segment offset"));
    }
    // Flags 0 and 4 imply funcref; the others name the element kind or type.
    if (seg.flags != 0 && seg.flags != 4) {
      if (exprs) {
        ASSIGN_OR_RETURN(seg.elem_type, ReadRefType(c, "element segment type"));
      } else {
        const std::uint64_t kind_at = c.offset();
        ASSIGN_OR_RETURN(std::uint8_t kind, c.ReadU8("element kind"));
        if (kind != 0) {
          return ByteCursor::Malformed(kind_at, "element kind",
                                       fmt::format("invalid element kind {}", kind));
        }
      }
    }
    ASSIGN_OR_RETURN(std::uint32_t items, ReadItemCount(c, "element count", 1));
    if (exprs) {
      seg.exprs.reserve(items);
      for (std::uint32_t k = 0; k < items; ++k) {
        ASSIGN_OR_RETURN(auto expr, ReadConstExpr(c, "element expression"));
        seg.exprs.push_back(std::move(expr));
      }
    } else {
      seg.functions.reserve(items);
      for (std::uint32_t k = 0; k < items; ++k) {
        ASSIGN_OR_RETURN(std::uint32_t func, c.ReadVarU32("element function index"));
        seg.functions.push_back(func);
      }
    }
    RETURN_IF_ERROR(visitor_.OnElementSegment(seg));
  }
  return {};
}

Status Reader::ReadDataCountSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, c.ReadVarU32("data count"));
  data_count_ = count;
  return visitor_.OnDataCount(count);
}

Status Reader::ReadCodeSection(ByteCursor& c) {
  code_seen_ = true;
  const std::uint64_t at = c.offset();
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "function body count", 1));
  if (count != declared_functions_) {
    return ByteCursor::Malformed(
        at, "function body count",
        fmt::format("code section has {} bodies but the function section declares {}", count,
                    declared_functions_));
  }
  if (options_.decode_threads > 1 && options_.decode_bodies && visitor_.ConcurrentBodies() &&
      count > 1) {
    // Frame every body first. A framing error is returned only if the bodies before it decode
    // cleanly, as a one-thread read would find it only after them.
    std::vector<ByteCursor> bodies;
    bodies.reserve(count);
    Status framing;
    for (std::uint32_t i = 0; i < count; ++i) {
      Result<std::uint32_t> size = c.ReadVarU32("function body size");
      Result<ByteCursor> body =
          size.ok() ? c.Take(*size, "function body") : Result<ByteCursor>(size.status());
      if (!body.ok()) {
        framing = Within(body.status(), fmt::format("function {}", imported_functions_ + i));
        break;
      }
      bodies.push_back(*body);
    }
    RETURN_IF_ERROR(ReadBodiesConcurrently(bodies));
    return framing;
  }
  std::vector<Instruction> run(ModuleVisitor::kInstructionRun);
  for (std::uint32_t i = 0; i < count; ++i) {
    const FuncIndex func = imported_functions_ + i;
    Result<std::uint32_t> size = c.ReadVarU32("function body size");
    Result<ByteCursor> body =
        size.ok() ? c.Take(*size, "function body") : Result<ByteCursor>(size.status());
    if (!body.ok()) return Within(body.status(), fmt::format("function {}", func));
    RETURN_IF_ERROR(Within(ReadFunctionBody(func, *body, run), fmt::format("function {}", func)));
    ++bodies_read_;
  }
  return {};
}

Status Reader::ReadBodiesConcurrently(std::vector<ByteCursor>& bodies) {
  const std::size_t threads =
      std::min<std::size_t>(options_.decode_threads, std::max<std::size_t>(bodies.size(), 1));
  // Chunks of consecutive bodies of about decode_chunk_bytes each, handed out in index order
  // to whichever thread is free. Fixed ranges, one per thread, left a core idle for the last
  // 5-15 % of the section whenever one thread was slowed by the rest of the machine.
  const std::uint64_t chunk_bytes = std::max<std::uint32_t>(options_.decode_chunk_bytes, 1);
  std::vector<std::size_t> ends;  // ends[k]: one past the last body of chunk k
  std::uint64_t running = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    running += bodies[i].remaining();
    if (running >= chunk_bytes) {
      ends.push_back(i + 1);
      running = 0;
    }
  }
  if (ends.empty() || ends.back() != bodies.size()) ends.push_back(bodies.size());
  // errors[k]: the first error in chunk k. Chunks are claimed in increasing order, so every
  // chunk below a failed one is claimed and read to its end or to its own error, and the
  // first error in chunk order is the error of the lowest-indexed bad body, as with one
  // thread. Chunks above a failed one are skipped.
  std::vector<Status> errors(ends.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> failed{ends.size()};  // lowest chunk known to have failed
  auto decode = [&]() {
    std::vector<Instruction> run(ModuleVisitor::kInstructionRun);
    for (;;) {
      const std::size_t chunk = next.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= ends.size() || chunk > failed.load(std::memory_order_relaxed)) return;
      const std::size_t begin = chunk == 0 ? 0 : ends[chunk - 1];
      for (std::size_t i = begin; i < ends[chunk]; ++i) {
        const FuncIndex func = imported_functions_ + static_cast<FuncIndex>(i);
        Status st = ReadFunctionBody(func, bodies[i], run);
        if (!st.ok()) {
          errors[chunk] = Within(std::move(st), fmt::format("function {}", func));
          std::size_t seen = failed.load(std::memory_order_relaxed);
          while (chunk < seen && !failed.compare_exchange_weak(seen, chunk)) {
          }
          break;
        }
      }
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(decode);
  decode();
  for (std::thread& t : workers) t.join();
  for (Status& st : errors) RETURN_IF_ERROR(std::move(st));
  bodies_read_ += static_cast<std::uint32_t>(bodies.size());
  return {};
}

Status Reader::ReadFunctionBody(FuncIndex func, ByteCursor& body, std::vector<Instruction>& run) {
  FunctionBody info;
  info.func_index = func;
  info.offset = body.offset();
  info.size = body.remaining();
  if (!options_.decode_bodies) {
    RETURN_IF_ERROR(visitor_.OnFunctionBody(info));
    RETURN_IF_ERROR(body.ReadBytes(body.remaining(), "function body").status());
    return visitor_.OnFunctionBodyEnd(func);
  }
  ASSIGN_OR_RETURN(std::uint32_t groups, body.ReadCount("local group count", 2));
  info.locals.reserve(groups);
  std::uint64_t total = 0;
  for (std::uint32_t g = 0; g < groups; ++g) {
    const std::uint64_t at = body.offset();
    LocalDecl decl;
    ASSIGN_OR_RETURN(decl.count, body.ReadVarU32("local count"));
    total += decl.count;
    if (total > options_.max_locals) {
      return Status::ResourceExhausted(
          fmt::format("{}: local count: {} locals exceed the limit of {}", ByteCursor::Location(at),
                      total, options_.max_locals));
    }
    ASSIGN_OR_RETURN(decl.type, ReadValType(body, "local type"));
    info.locals.push_back(decl);
  }
  RETURN_IF_ERROR(visitor_.OnFunctionBody(info));
  const bool reads_instructions = visitor_.ReadsInstructions();
  std::uint32_t depth = 1;  // the function's own block
  // Instructions are decoded into `run` and passed on a run at once (OnInstructions); before
  // any error is returned the run so far is passed on, so a visitor's error on an earlier
  // instruction still comes first. The Instructions are reused, each reset before its read: a
  // fresh one per instruction had g++ zero its 160 bytes with `rep stosq`, whose start-up cost
  // made that one instruction ~6 % of an ffmpeg-core ingest's CPU
  // (docs/decisions/0029-warden-perf4.md).
  std::size_t n = 0;  // instructions in `run` not yet passed on
  auto pass_on = [&]() -> Status {
    if (n == 0) return {};
    const std::size_t count = n;
    n = 0;
    return visitor_.OnInstructions(func, std::span<const Instruction>(run.data(), count));
  };
  auto fail = [&](Status error) -> Status {
    RETURN_IF_ERROR(pass_on());
    return error;
  };
  const bool fast = options_.fast_decode;
  const bool memory64 = !memory64_.empty() && memory64_[0];
  while (!body.empty()) {
    Instruction& inst = run[n];
    ResetInstruction(inst);
    if (!fast || !ReadInstructionFast(body, inst, memory64)) {
      if (Status st = ReadInstruction(body, inst); !st.ok()) return fail(std::move(st));
    }
    switch (inst.opcode) {
      case Opcode::kBlock:
      case Opcode::kLoop:
      case Opcode::kIf:
      case Opcode::kTry:
      case Opcode::kTryTable:
        if (++depth > options_.max_nesting) {
          return fail(Status::ResourceExhausted(fmt::format(
              "{}: {}: block nesting exceeds the limit of {}", ByteCursor::Location(inst.offset),
              GetOpcodeInfo(inst.opcode).text, options_.max_nesting)));
        }
        break;
      case Opcode::kEnd:
      case Opcode::kDelegate:
        if (inst.opcode == Opcode::kDelegate && depth < 2) {
          return fail(ByteCursor::Malformed(inst.offset, "delegate", "delegate outside a block"));
        }
        --depth;
        break;
      default:
        break;
    }
    if (reads_instructions) ++n;
    if (depth == 0) {
      RETURN_IF_ERROR(pass_on());
      if (!body.empty()) {
        return ByteCursor::Malformed(
            body.offset(), "function body",
            fmt::format("{} bytes after the function's final end", body.remaining()));
      }
      return visitor_.OnFunctionBodyEnd(func);
    }
    if (n == run.size()) RETURN_IF_ERROR(pass_on());
  }
  return fail(ByteCursor::Malformed(body.offset(), "function body", "body ends inside a block"));
}

Status Reader::ReadDataSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, "data segment count", 2));
  for (std::uint32_t i = 0; i < count; ++i) {
    DataSegment seg;
    seg.index = i;
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(std::uint32_t flags, c.ReadVarU32("data segment flags"));
    if (flags > 2) {
      return ByteCursor::Malformed(at, "data segment flags",
                                   fmt::format("invalid flags {}", flags));
    }
    seg.mode = flags == 1 ? SegmentMode::kPassive : SegmentMode::kActive;
    if (flags == 2) {
      ASSIGN_OR_RETURN(seg.memory, c.ReadVarU32("data segment memory index"));
    }
    if (seg.mode == SegmentMode::kActive) {
      ASSIGN_OR_RETURN(seg.offset, ReadConstExpr(c, "data segment offset"));
    }
    ASSIGN_OR_RETURN(std::uint32_t size, c.ReadVarU32("data segment size"));
    seg.data_offset = c.offset();
    ASSIGN_OR_RETURN(seg.bytes, c.ReadBytes(size, "data segment bytes"));
    RETURN_IF_ERROR(visitor_.OnDataSegment(seg));
  }
  data_segments_read_ = count;
  return {};
}

Status Reader::ReadCustomSection(ByteCursor& c) {
  ASSIGN_OR_RETURN(std::string_view name, c.ReadName("custom section name"));
  const std::uint64_t at = c.offset();
  RETURN_IF_ERROR(visitor_.OnCustomSection(name, at, c.rest()));
  if (name == "name") return ReadNameSection(c);
  return c.ReadBytes(c.remaining(), "custom section").status();
}

// The name section is optional metadata (docs/warden.md §4.3): it is checked whole before any of
// its names is reported, and a malformed one, or a second one, is ignored (OnNameSectionIgnored)
// instead of failing the module. Checking first costs a second pass over the names, a small
// part of any module, and keeps a visitor from ever seeing half of a broken section.
Status Reader::ReadNameSection(ByteCursor& c) {
  const std::uint64_t at = c.offset();
  Status check;
  if (name_section_seen_) {
    check = ByteCursor::Malformed(at, "name section", "a second name section");
  } else {
    ByteCursor probe = c;
    check = ReadNames(probe, /*deliver=*/false);
  }
  name_section_seen_ = true;
  if (!check.ok()) {
    c.Skip(c.remaining());
    return visitor_.OnNameSectionIgnored(at, check);
  }
  return ReadNames(c, /*deliver=*/true);
}

Status Reader::ReadNames(ByteCursor& c, bool deliver) {
  int last_id = -1;
  while (!c.empty()) {
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(std::uint8_t id, c.ReadU8("name subsection id"));
    if (static_cast<int>(id) == last_id) {
      return ByteCursor::Malformed(at, "name subsection id",
                                   fmt::format("subsection {} repeated", id));
    }
    if (static_cast<int>(id) < last_id) {
      return ByteCursor::Malformed(
          at, "name subsection id",
          fmt::format("subsection {} out of order: must come before subsection {}", id, last_id));
    }
    last_id = id;
    ASSIGN_OR_RETURN(std::uint32_t size, c.ReadVarU32("name subsection size"));
    ASSIGN_OR_RETURN(ByteCursor sub, c.Take(size, "name subsection"));
    if (id > kLastNameKind) {
      sub.Skip(sub.remaining());  // a subsection this reader does not know
      continue;
    }
    const auto kind = static_cast<NameKind>(id);
    switch (kind) {
      case NameKind::kModule: {
        ASSIGN_OR_RETURN(std::string_view name, sub.ReadName("module name"));
        if (deliver) RETURN_IF_ERROR(visitor_.OnModuleName(name));
        break;
      }
      case NameKind::kLocal:
      case NameKind::kLabel:
      case NameKind::kField:
        RETURN_IF_ERROR(ReadIndirectNameMap(sub, kind, deliver));
        break;
      default:
        RETURN_IF_ERROR(ReadNameMap(sub, kind, deliver));
        break;
    }
    if (!sub.empty()) {
      return ByteCursor::Malformed(
          sub.offset(), "name subsection",
          fmt::format("subsection size mismatch: {} bytes left unread", sub.remaining()));
    }
  }
  return {};
}

// Checks that the indices of a name map rise strictly, as the spec requires of every name map.
Status CheckNameIndex(std::uint64_t at, std::string_view what, std::uint32_t index,
                      std::optional<std::uint32_t> previous) {
  if (!previous || index > *previous) return {};
  return ByteCursor::Malformed(
      at, what,
      index == *previous ? fmt::format("index {} repeated", index)
                         : fmt::format("index {} out of order after {}", index, *previous));
}

Status Reader::ReadNameMap(ByteCursor& c, NameKind kind, bool deliver) {
  const std::string_view kind_name = NameKindName(kind);
  const std::string count_what = fmt::format("{} name count", kind_name);
  const std::string index_what = fmt::format("{} name index", kind_name);
  const std::string name_what = fmt::format("{} name", kind_name);
  ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, count_what, 2));
  std::optional<std::uint32_t> previous;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(std::uint32_t index, c.ReadVarU32(index_what));
    RETURN_IF_ERROR(CheckNameIndex(at, index_what, index, previous));
    previous = index;
    ASSIGN_OR_RETURN(std::string_view name, c.ReadName(name_what));
    if (!deliver) continue;
    if (kind == NameKind::kFunction) {
      RETURN_IF_ERROR(visitor_.OnFunctionName(index, name));
    } else {
      RETURN_IF_ERROR(visitor_.OnName(kind, index, name));
    }
  }
  return {};
}

Status Reader::ReadIndirectNameMap(ByteCursor& c, NameKind kind, bool deliver) {
  // The outer index names a function (locals, labels) or a type (fields).
  const std::string_view kind_name = NameKindName(kind);
  const std::string_view outer_name = kind == NameKind::kField ? "type" : "function";
  const std::string outer_count_what = fmt::format("{} name {} count", kind_name, outer_name);
  const std::string outer_what = fmt::format("{} name {} index", kind_name, outer_name);
  const std::string count_what = fmt::format("{} name count", kind_name);
  const std::string index_what = fmt::format("{} name index", kind_name);
  const std::string name_what = fmt::format("{} name", kind_name);
  ASSIGN_OR_RETURN(std::uint32_t outers, ReadItemCount(c, outer_count_what, 2));
  std::optional<std::uint32_t> previous_outer;
  for (std::uint32_t i = 0; i < outers; ++i) {
    const std::uint64_t outer_at = c.offset();
    ASSIGN_OR_RETURN(std::uint32_t outer, c.ReadVarU32(outer_what));
    RETURN_IF_ERROR(CheckNameIndex(outer_at, outer_what, outer, previous_outer));
    previous_outer = outer;
    ASSIGN_OR_RETURN(std::uint32_t count, ReadItemCount(c, count_what, 2));
    std::optional<std::uint32_t> previous;
    for (std::uint32_t k = 0; k < count; ++k) {
      const std::uint64_t at = c.offset();
      ASSIGN_OR_RETURN(std::uint32_t index, c.ReadVarU32(index_what));
      RETURN_IF_ERROR(CheckNameIndex(at, index_what, index, previous));
      previous = index;
      ASSIGN_OR_RETURN(std::string_view name, c.ReadName(name_what));
      if (!deliver) continue;
      if (kind == NameKind::kLocal) {
        RETURN_IF_ERROR(visitor_.OnLocalName(outer, index, name));
      } else {
        RETURN_IF_ERROR(visitor_.OnIndirectName(kind, outer, index, name));
      }
    }
  }
  return {};
}

Result<BlockType> Reader::ReadBlockType(ByteCursor& c, std::string_view what) {
  BlockType type;
  if (c.empty()) return c.ReadU8(what).status();
  const std::uint8_t first = c.rest()[0];
  if (first == 0x40) {
    RETURN_IF_ERROR(c.ReadU8(what));
    return type;
  }
  if (first & 0x40) {  // a negative s33: one value type byte
    type.kind = BlockType::Kind::kValue;
    ASSIGN_OR_RETURN(type.value, ReadValType(c, what));
    return type;
  }
  const std::uint64_t at = c.offset();
  ASSIGN_OR_RETURN(std::int64_t index, c.ReadVarS33(what));
  if (index < 0 || index > 0xffffffffLL) {
    return ByteCursor::Malformed(at, what, fmt::format("invalid block type {}", index));
  }
  type.kind = BlockType::Kind::kTypeIndex;
  type.type_index = static_cast<std::uint32_t>(index);
  return type;
}

Status Reader::ReadMemArg(ByteCursor& c, std::string_view what, MemArg& memarg) {
  const std::uint64_t at = c.offset();
  ASSIGN_OR_RETURN(std::uint32_t align, c.ReadVarU32(what));
  if (align & 0x40) {  // multi-memory: an explicit memory index follows
    ASSIGN_OR_RETURN(memarg.memory, c.ReadVarU32(what));
    align &= ~std::uint32_t{0x40};
  }
  if (align >= 64) {
    return ByteCursor::Malformed(at, what, fmt::format("invalid alignment exponent {}", align));
  }
  memarg.align_log2 = align;
  if (memarg.memory < memory64_.size() && memory64_[memarg.memory]) {
    ASSIGN_OR_RETURN(memarg.offset, c.ReadVarU64(what));
  } else {
    ASSIGN_OR_RETURN(memarg.offset, c.ReadVarU32(what));
  }
  return {};
}

Status Reader::ReadInstruction(ByteCursor& c, Instruction& inst) {
  inst.offset = c.offset();
  ASSIGN_OR_RETURN(std::uint8_t byte, c.ReadU8("opcode"));
  std::optional<Opcode> opcode;
  if (IsPrefixByte(byte)) {
    ASSIGN_OR_RETURN(std::uint32_t code, c.ReadVarU32("opcode"));
    opcode = LookupOpcode(byte, code);
    if (!opcode) {
      return ByteCursor::Malformed(inst.offset, "instruction",
                                   fmt::format("unknown opcode {:#04x} {:#x}", byte, code));
    }
  } else {
    opcode = LookupOpcode(0, byte);
    if (!opcode) {
      // 0xfb (GC), call_ref, return_call_ref, ref.as_non_null, br_on_null, ref.eq,
      // br_on_non_null.
      if (byte == 0xfb || byte == 0x14 || byte == 0x15 || (byte >= 0xd3 && byte <= 0xd6)) {
        return UnsupportedGc(inst.offset, "instruction", byte);
      }
      return ByteCursor::Malformed(inst.offset, "instruction",
                                   fmt::format("unknown opcode {:#04x}", byte));
    }
  }
  inst.opcode = *opcode;
  const OpcodeInfo& info = GetOpcodeInfo(*opcode);
  const std::string_view what = info.text;
  switch (info.imm) {
    case ImmKind::kNone:
      break;
    case ImmKind::kBlockType: {
      ASSIGN_OR_RETURN(inst.block_type, ReadBlockType(c, what));
      break;
    }
    case ImmKind::kLabel:
    case ImmKind::kFunc:
    case ImmKind::kLocal:
    case ImmKind::kGlobal:
    case ImmKind::kTable:
    case ImmKind::kMemory:
    case ImmKind::kData:
    case ImmKind::kElem:
    case ImmKind::kTag: {
      ASSIGN_OR_RETURN(inst.index, c.ReadVarU32(what));
      break;
    }
    case ImmKind::kCallIndirect:
    case ImmKind::kTableCopy:
    case ImmKind::kTableInit:
    case ImmKind::kMemInit:
    case ImmKind::kMemCopy: {
      ASSIGN_OR_RETURN(inst.index, c.ReadVarU32(what));
      ASSIGN_OR_RETURN(inst.index2, c.ReadVarU32(what));
      break;
    }
    case ImmKind::kBrTable: {
      const std::uint64_t at = c.offset();
      ASSIGN_OR_RETURN(std::uint32_t count, c.ReadCount("br_table target count"));
      if (count > options_.max_br_table_targets) {
        return Status::ResourceExhausted(
            fmt::format("{}: br_table target count: {} targets exceed the limit of {}",
                        ByteCursor::Location(at), count, options_.max_br_table_targets));
      }
      inst.targets.reserve(count);
      for (std::uint32_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(std::uint32_t target, c.ReadVarU32("br_table target"));
        inst.targets.push_back(target);
      }
      ASSIGN_OR_RETURN(inst.index, c.ReadVarU32("br_table default target"));
      break;
    }
    case ImmKind::kMemArg: {
      RETURN_IF_ERROR(ReadMemArg(c, what, inst.memarg));
      break;
    }
    case ImmKind::kMemArgLane: {
      RETURN_IF_ERROR(ReadMemArg(c, what, inst.memarg));
      ASSIGN_OR_RETURN(inst.lane, c.ReadU8(what));
      break;
    }
    case ImmKind::kLane: {
      ASSIGN_OR_RETURN(inst.lane, c.ReadU8(what));
      break;
    }
    case ImmKind::kI32: {
      ASSIGN_OR_RETURN(inst.i64, c.ReadVarS32(what));
      break;
    }
    case ImmKind::kI64: {
      ASSIGN_OR_RETURN(inst.i64, c.ReadVarS64(what));
      break;
    }
    case ImmKind::kF32: {
      ASSIGN_OR_RETURN(inst.bits, c.ReadFixedU32(what));
      break;
    }
    case ImmKind::kF64: {
      ASSIGN_OR_RETURN(inst.bits, c.ReadFixedU64(what));
      break;
    }
    case ImmKind::kV128:
    case ImmKind::kShuffle: {
      ASSIGN_OR_RETURN(auto bytes, c.ReadBytes(16, what));
      for (std::size_t i = 0; i < 16; ++i) inst.bytes[i] = bytes[i];
      break;
    }
    case ImmKind::kSelectT: {
      ASSIGN_OR_RETURN(std::uint32_t count, c.ReadCount("select type count"));
      inst.types.reserve(count);
      for (std::uint32_t i = 0; i < count; ++i) {
        ASSIGN_OR_RETURN(ValType t, ReadValType(c, "select type"));
        inst.types.push_back(t);
      }
      break;
    }
    case ImmKind::kHeapType: {
      const std::uint64_t at = c.offset();
      ASSIGN_OR_RETURN(std::uint8_t heap, c.ReadU8("heap type"));
      if (heap == 0x70 || heap == 0x6f || heap == 0x69) {
        inst.types.push_back(static_cast<ValType>(heap));
      } else if (IsGcTypeByte(heap) || heap < 0x40) {  // GC abstract types, type indices
        return UnsupportedGc(at, "heap type", heap);
      } else {
        return ByteCursor::Malformed(at, "heap type",
                                     fmt::format("invalid heap type {:#04x}", heap));
      }
      break;
    }
    case ImmKind::kTryTable: {
      ASSIGN_OR_RETURN(inst.block_type, ReadBlockType(c, what));
      ASSIGN_OR_RETURN(std::uint32_t count, c.ReadCount("try_table catch count", 2));
      inst.catches.reserve(count);
      for (std::uint32_t i = 0; i < count; ++i) {
        const std::uint64_t at = c.offset();
        CatchClause clause;
        ASSIGN_OR_RETURN(clause.kind, c.ReadU8("catch kind"));
        if (clause.kind > 3) {
          return ByteCursor::Malformed(at, "catch kind",
                                       fmt::format("invalid catch kind {}", clause.kind));
        }
        if (clause.kind < 2) {
          ASSIGN_OR_RETURN(clause.tag, c.ReadVarU32("catch tag"));
        }
        ASSIGN_OR_RETURN(clause.label, c.ReadVarU32("catch label"));
        inst.catches.push_back(clause);
      }
      break;
    }
    case ImmKind::kZeroByte: {
      const std::uint64_t at = c.offset();
      ASSIGN_OR_RETURN(std::uint8_t zero, c.ReadU8(what));
      if (zero != 0) {
        return ByteCursor::Malformed(at, what, fmt::format("expected 0x00, got {:#04x}", zero));
      }
      break;
    }
  }
  return {};
}

Result<std::vector<Instruction>> Reader::ReadConstExpr(ByteCursor& c, std::string_view what) {
  std::vector<Instruction> out;
  while (true) {
    if (c.empty()) {
      return ByteCursor::Malformed(c.offset(), what, "constant expression has no end");
    }
    Instruction inst;
    RETURN_IF_ERROR(ReadInstruction(c, inst));
    if (inst.opcode == Opcode::kEnd) {
      return out;
    }
    if (inst.opcode == Opcode::kBlock || inst.opcode == Opcode::kLoop ||
        inst.opcode == Opcode::kIf || inst.opcode == Opcode::kTry ||
        inst.opcode == Opcode::kTryTable) {
      return ByteCursor::Malformed(inst.offset, what, "block instruction in a constant expression");
    }
    out.push_back(std::move(inst));
  }
}

}  // namespace

std::string_view NameKindName(NameKind kind) {
  static constexpr std::array<std::string_view, kLastNameKind + 1> kNames = {
      "module", "function", "local",           "label",        "type",  "table",
      "memory", "global",   "element segment", "data segment", "field", "tag"};
  const auto i = static_cast<std::size_t>(kind);
  return i < kNames.size() ? kNames[i] : std::string_view("unknown");
}

Status ReadModule(std::span<const std::uint8_t> bytes, ModuleVisitor& visitor,
                  const ReadOptions& options) {
  Reader reader(visitor, options);
  return reader.Read(bytes);
}

}  // namespace trove::warden::wasm

// ModuleVisitor: what ReadModule (reader.h) reports, one virtual hook per thing read, in
// module order. Every hook accepts and ignores by default (wabt's binary-reader-nop.h), so a
// consumer overrides only what it needs; returning a non-OK Status stops the read with it.
// Facts, identity and export are separate visitors over one read.
// Spans and string_views passed to a hook point into the module bytes and are valid for as
// long as those bytes are.
// Thread safety: a visitor is used by the one thread running ReadModule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "warden/wasm/instruction.h"

namespace trove::warden::wasm {

using FuncIndex = std::uint32_t;

enum class ExternalKind : std::uint8_t {
  kFunction = 0,
  kTable = 1,
  kMemory = 2,
  kGlobal = 3,
  kTag = 4,
};

struct FuncType {
  std::vector<ValType> params;
  std::vector<ValType> results;
};

struct Limits {
  std::uint64_t min = 0;
  std::optional<std::uint64_t> max;
  bool shared = false;
  bool is64 = false;  // memory64 / table64
};

struct TableType {
  ValType elem_type = ValType::kFuncRef;
  Limits limits;
};

struct MemoryType {
  Limits limits;
};

struct GlobalType {
  ValType type = ValType::kI32;
  bool is_mutable = false;
};

struct Import {
  std::string_view module;
  std::string_view field;
  ExternalKind kind = ExternalKind::kFunction;
  std::uint32_t index = 0;       // index in its kind's index space
  std::uint32_t type_index = 0;  // kFunction, kTag
  TableType table;               // kTable
  MemoryType memory;             // kMemory
  GlobalType global;             // kGlobal
};

struct Global {
  std::uint32_t index = 0;
  GlobalType type;
  std::vector<Instruction> init;  // the constant expression, without its final `end`
};

struct Export {
  std::string_view name;
  ExternalKind kind = ExternalKind::kFunction;
  std::uint32_t index = 0;
};

enum class SegmentMode : std::uint8_t { kActive, kPassive, kDeclarative };

// One element segment in any of its 8 encodings (flags 0-7).
struct ElementSegment {
  std::uint32_t index = 0;
  std::uint32_t flags = 0;
  SegmentMode mode = SegmentMode::kActive;
  std::uint32_t table = 0;
  std::vector<Instruction> offset;  // active only
  ValType elem_type = ValType::kFuncRef;
  // Flags 0-3: function indices. Flags 4-7: one constant expression per element.
  std::vector<std::uint32_t> functions;
  std::vector<std::vector<Instruction>> exprs;
};

struct DataSegment {
  std::uint32_t index = 0;
  SegmentMode mode = SegmentMode::kActive;
  std::uint32_t memory = 0;
  std::vector<Instruction> offset;  // active only
  std::uint64_t data_offset = 0;    // absolute offset of the bytes
  std::span<const std::uint8_t> bytes;
};

struct LocalDecl {
  std::uint32_t count = 0;
  ValType type = ValType::kI32;
};

struct FunctionBody {
  FuncIndex func_index = 0;
  std::uint64_t offset = 0;  // absolute offset of the body (after its size)
  std::uint64_t size = 0;
  std::vector<LocalDecl> locals;
};

// The subsections of the "name" custom section, by id: 0-2 are the core spec's, 3-11 the
// extended-name-section proposal's (labels, types, tables, memories, globals, element and data
// segments, struct fields, tags).
enum class NameKind : std::uint8_t {
  kModule = 0,
  kFunction = 1,
  kLocal = 2,
  kLabel = 3,
  kType = 4,
  kTable = 5,
  kMemory = 6,
  kGlobal = 7,
  kElemSegment = 8,
  kDataSegment = 9,
  kField = 10,
  kTag = 11,
};
inline constexpr std::uint8_t kLastNameKind = 11;

// Returns the subsection's name as errors and reports spell it ("global", "data segment").
std::string_view NameKindName(NameKind kind);

class ModuleVisitor {
 public:
  virtual ~ModuleVisitor() = default;

  // Returns whether OnFunctionBody, OnInstruction and OnFunctionBodyEnd may be called for
  // different functions at the same time, from several threads (ReadOptions::decode_threads).
  // For any one function they still come in order from one thread, and every other hook is
  // called from the thread running ReadModule, before the first body or after the last.
  virtual bool ConcurrentBodies() const { return false; }
  // Returns whether OnInstruction does anything. A visitor that returns false may not be
  // called per instruction (FanOutVisitor skips it), which matters for large modules.
  virtual bool ReadsInstructions() const { return true; }

  virtual Status OnType(std::uint32_t /*index*/, const FuncType& /*type*/) { return {}; }
  virtual Status OnImport(const Import& /*import*/) { return {}; }
  // The function section's count of defined functions, before their OnFunction calls (at
  // most the section's size in bytes), so that a visitor can size its tables once.
  virtual Status OnFunctionCount(std::uint32_t /*count*/) { return {}; }
  // One per defined function: its index (after imported functions) and type index.
  virtual Status OnFunction(FuncIndex /*func*/, std::uint32_t /*type_index*/) { return {}; }
  virtual Status OnTable(std::uint32_t /*index*/, const TableType& /*table*/) { return {}; }
  virtual Status OnMemory(std::uint32_t /*index*/, const MemoryType& /*memory*/) { return {}; }
  virtual Status OnTag(std::uint32_t /*index*/, std::uint32_t /*type_index*/) { return {}; }
  virtual Status OnGlobal(const Global& /*global*/) { return {}; }
  virtual Status OnExport(const Export& /*export_*/) { return {}; }
  virtual Status OnStart(FuncIndex /*func*/) { return {}; }
  virtual Status OnElementSegment(const ElementSegment& /*segment*/) { return {}; }
  virtual Status OnDataCount(std::uint32_t /*count*/) { return {}; }
  // Called before the body's instructions, then OnInstruction for each (the final `end`
  // included), then OnFunctionBodyEnd.
  virtual Status OnFunctionBody(const FunctionBody& /*body*/) { return {}; }
  virtual Status OnInstruction(FuncIndex /*func*/, const Instruction& /*inst*/) { return {}; }
  // How the reader delivers instructions: consecutive instructions of one body, in order, in
  // runs of up to kInstructionRun (the last run of a body ends with its final `end`). The
  // default passes each to OnInstruction and stops at the first error; a visitor with work
  // per instruction may override it to take a run at once. The reader decodes a run before
  // passing it on, but when it meets an error it first passes on the instructions before the
  // error, so the error returned is the same as with one call per instruction.
  static constexpr std::size_t kInstructionRun = 64;
  virtual Status OnInstructions(FuncIndex func, std::span<const Instruction> insts) {
    for (const Instruction& inst : insts) RETURN_IF_ERROR(OnInstruction(func, inst));
    return {};
  }
  virtual Status OnFunctionBodyEnd(FuncIndex /*func*/) { return {}; }
  virtual Status OnDataSegment(const DataSegment& /*segment*/) { return {}; }
  // The "name" custom section.
  virtual Status OnModuleName(std::string_view /*name*/) { return {}; }
  virtual Status OnFunctionName(FuncIndex /*func*/, std::string_view /*name*/) { return {}; }
  virtual Status OnLocalName(FuncIndex /*func*/, std::uint32_t /*local*/,
                             std::string_view /*name*/) {
    return {};
  }
  // A name from the extended subsections that map one index to a name: kType, kTable,
  // kMemory, kGlobal, kElemSegment, kDataSegment, kTag.
  virtual Status OnName(NameKind /*kind*/, std::uint32_t /*index*/, std::string_view /*name*/) {
    return {};
  }
  // A name from the extended subsections that map two indices to a name: kLabel (function,
  // label) and kField (type, field). Local names come to OnLocalName.
  virtual Status OnIndirectName(NameKind /*kind*/, std::uint32_t /*outer*/, std::uint32_t /*inner*/,
                                std::string_view /*name*/) {
    return {};
  }
  // The name section at `offset` (its first payload byte) is malformed and ignored (spec
  // docs/warden.md §4.3: it is optional metadata): none of its names was reported, `error` says
  // what is wrong and where, and the read goes on with the next section. A second name section is
  // ignored the same way. Name hooks are called only once the whole section has been checked.
  virtual Status OnNameSectionIgnored(std::uint64_t /*offset*/, const Status& /*error*/) {
    return {};
  }
  // Every custom section, "name" included; `offset` is that of the first payload byte.
  virtual Status OnCustomSection(std::string_view /*name*/, std::uint64_t /*offset*/,
                                 std::span<const std::uint8_t> /*payload*/) {
    return {};
  }
};

}  // namespace trove::warden::wasm

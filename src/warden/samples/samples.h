// The `samples` wasm writer (docs/warden.md §10.3): builds small, valid WebAssembly modules in
// memory, with a code section and a name section, so that tests and the demo need no toolchain.
//
// A module is described symbolically: every function and import has a key, calls name their
// callee by key, and indices are assigned only when the module is written (imports first, then
// functions in the order given). Reordering, inserting or deleting functions between two
// versions of a sample is therefore a change to a vector, and every call follows along, as it
// would in a rebuilt binary.
//
//   samples::Module m;
//   m.imports.push_back({.key = "log", .module = "env", .field = "log", .sig = {{kI32}, {}}});
//   samples::Function& f = m.functions.emplace_back();
//   f.key = "add"; f.name = "add"; f.sig = {{kI32, kI32}, {kI32}};
//   f.body.LocalGet(0).LocalGet(1).Op(0x6a);  // i32.add; the final `end` is added on write
//   Result<std::vector<std::uint8_t>> bytes = samples::WriteModule(m);
//
// Only the instructions a sample needs are here, plus Op/Raw for any other encoding.
// Thread safety: values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace trove::warden::samples {

enum class ValType : std::uint8_t { kI32 = 0x7f, kI64 = 0x7e, kF32 = 0x7d, kF64 = 0x7c };
inline constexpr ValType kI32 = ValType::kI32;
inline constexpr ValType kI64 = ValType::kI64;
inline constexpr ValType kF32 = ValType::kF32;
inline constexpr ValType kF64 = ValType::kF64;

struct Signature {
  std::vector<ValType> params;
  std::vector<ValType> results;
  friend bool operator==(const Signature&, const Signature&) = default;
};

// The instructions of one body, the final `end` excluded. Calls are symbolic (by key).
class Body {
 public:
  Body& Op(std::uint8_t opcode);  // any one-byte instruction without immediates
  Body& Raw(const std::vector<std::uint8_t>& bytes);
  Body& LocalGet(std::uint32_t index);
  Body& LocalSet(std::uint32_t index);
  Body& LocalTee(std::uint32_t index);
  Body& GlobalGet(std::uint32_t index);
  Body& I32Const(std::int32_t value);
  Body& I64Const(std::int64_t value);
  // i32.load (0x28), i32.store (0x36), i32.load8_u (0x2d), ...: opcode, align, offset.
  Body& Memory(std::uint8_t opcode, std::uint32_t align, std::uint32_t offset);
  // block/loop/if with an empty block type, or with one result.
  Body& Block(std::optional<ValType> result = std::nullopt);
  Body& Loop(std::optional<ValType> result = std::nullopt);
  Body& If(std::optional<ValType> result = std::nullopt);
  Body& Else();
  Body& End();
  Body& Br(std::uint32_t depth);
  Body& BrIf(std::uint32_t depth);
  Body& Return();
  Body& Drop();
  // A direct call of the function or import with this key.
  Body& Call(std::string key);

  // One piece of the body: raw bytes, or a call to resolve.
  struct Piece {
    std::vector<std::uint8_t> bytes;
    std::optional<std::string> callee;
  };
  const std::vector<Piece>& pieces() const { return pieces_; }

 private:
  std::vector<std::uint8_t>& Tail();
  std::vector<Piece> pieces_;
};

struct Import {
  std::string key;
  std::string module;
  std::string field;
  Signature sig;
};

struct Function {
  std::string key;
  Signature sig;
  std::vector<ValType> locals;  // declared locals after the parameters, one entry each
  Body body;
  std::optional<std::string> name;  // written to the name section when set
  std::vector<std::string> exports;
};

// An active data segment of memory 0 at a constant address.
struct Data {
  std::uint32_t address = 0;
  std::string bytes;
};

struct Module {
  std::vector<Import> imports;
  std::vector<Function> functions;
  std::uint32_t memory_pages = 1;  // 0: no memory section
  std::vector<Data> data;
  bool name_section = true;  // false: stripped, no name section even where names are set
};

// Returns the module's binary encoding. kInvalidArgument for a duplicate key, a call to an
// unknown key, or data without a memory.
Result<std::vector<std::uint8_t>> WriteModule(const Module& module);

}  // namespace trove::warden::samples

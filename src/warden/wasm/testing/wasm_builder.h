// Tiny helpers that emit wasm bytes for tests: LEB128 values, names, sections and modules,
// plus a visitor that records what ReadModule reports.
// Thread safety: plain functions and values.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "warden/wasm/module_visitor.h"

namespace trove::warden::wasm::testing {

using Bytes = std::vector<std::uint8_t>;

// Returns the unsigned LEB128 encoding of `value`.
inline Bytes U(std::uint64_t value) {
  Bytes out;
  do {
    std::uint8_t byte = value & 0x7f;
    value >>= 7;
    if (value != 0) byte |= 0x80;
    out.push_back(byte);
  } while (value != 0);
  return out;
}

// Returns the signed LEB128 encoding of `value`.
inline Bytes S(std::int64_t value) {
  Bytes out;
  while (true) {
    const auto byte = static_cast<std::uint8_t>(value & 0x7f);
    value >>= 7;
    const bool done = (value == 0 && !(byte & 0x40)) || (value == -1 && (byte & 0x40));
    out.push_back(done ? byte : static_cast<std::uint8_t>(byte | 0x80));
    if (done) return out;
  }
}

// Concatenates byte strings.
inline Bytes Cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Returns vec(byte) of `text`: its length, then its bytes.
inline Bytes Name(std::string_view text) {
  Bytes out = U(text.size());
  out.insert(out.end(), text.begin(), text.end());
  return out;
}

// Returns `payload` prefixed by its size.
inline Bytes Sized(const Bytes& payload) { return Cat({U(payload.size()), payload}); }

// Returns a section: id, size, payload.
inline Bytes Section(std::uint8_t id, const Bytes& payload) {
  return Cat({Bytes{id}, Sized(payload)});
}

// Returns the 8-byte module header.
inline Bytes Header() { return {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}; }

// Returns a module: the header, then each section as given.
inline Bytes Module(std::initializer_list<Bytes> sections) {
  Bytes out = Header();
  for (const Bytes& s : sections) out.insert(out.end(), s.begin(), s.end());
  return out;
}

// Returns a module with one type () -> (), one function, and `body` (locals and
// instructions, its final end included) as that function's body.
inline Bytes OneFunctionModule(const Bytes& body) {
  return Module({Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, {0x01, 0x00}),
                 Section(10, Cat({{0x01}, Sized(body)}))});
}

// Records the events and instructions ReadModule reports.
class RecordingVisitor : public ModuleVisitor {
 public:
  std::vector<std::string> events;
  std::vector<Instruction> instructions;
  std::vector<Import> imports;
  std::vector<Global> globals;
  std::vector<ElementSegment> elements;
  std::vector<DataSegment> data;
  std::vector<FunctionBody> bodies;
  std::vector<TableType> tables;
  std::vector<MemoryType> memories;
  std::vector<Export> exports;

  Status OnType(std::uint32_t index, const FuncType& type) override {
    events.push_back("type " + std::to_string(index) + " " + std::to_string(type.params.size()) +
                     "->" + std::to_string(type.results.size()));
    return {};
  }
  Status OnImport(const Import& import) override {
    imports.push_back(import);
    events.push_back("import " + std::string(import.module) + "." + std::string(import.field));
    return {};
  }
  Status OnFunction(FuncIndex func, std::uint32_t type_index) override {
    events.push_back("func " + std::to_string(func) + " type " + std::to_string(type_index));
    return {};
  }
  Status OnTable(std::uint32_t index, const TableType& table) override {
    tables.push_back(table);
    events.push_back("table " + std::to_string(index));
    return {};
  }
  Status OnMemory(std::uint32_t index, const MemoryType& memory) override {
    memories.push_back(memory);
    events.push_back("memory " + std::to_string(index));
    return {};
  }
  Status OnTag(std::uint32_t index, std::uint32_t type_index) override {
    events.push_back("tag " + std::to_string(index) + " type " + std::to_string(type_index));
    return {};
  }
  Status OnGlobal(const Global& global) override {
    globals.push_back(global);
    events.push_back("global " + std::to_string(global.index));
    return {};
  }
  Status OnExport(const Export& exp) override {
    exports.push_back(exp);
    events.push_back("export " + std::string(exp.name));
    return {};
  }
  Status OnStart(FuncIndex func) override {
    events.push_back("start " + std::to_string(func));
    return {};
  }
  Status OnElementSegment(const ElementSegment& segment) override {
    elements.push_back(segment);
    events.push_back("elem " + std::to_string(segment.flags));
    return {};
  }
  Status OnDataCount(std::uint32_t count) override {
    events.push_back("datacount " + std::to_string(count));
    return {};
  }
  Status OnFunctionBody(const FunctionBody& body) override {
    bodies.push_back(body);
    events.push_back("body " + std::to_string(body.func_index));
    return {};
  }
  Status OnInstruction(FuncIndex, const Instruction& inst) override {
    instructions.push_back(inst);
    return {};
  }
  Status OnFunctionBodyEnd(FuncIndex func) override {
    events.push_back("body end " + std::to_string(func));
    return {};
  }
  Status OnDataSegment(const DataSegment& segment) override {
    data.push_back(segment);
    events.push_back("data " + std::to_string(segment.index) + " mem " +
                     std::to_string(segment.memory));
    return {};
  }
  Status OnModuleName(std::string_view name) override {
    events.push_back("module name " + std::string(name));
    return {};
  }
  Status OnFunctionName(FuncIndex func, std::string_view name) override {
    events.push_back("func name " + std::to_string(func) + " " + std::string(name));
    return {};
  }
  Status OnLocalName(FuncIndex func, std::uint32_t local, std::string_view name) override {
    events.push_back("local name " + std::to_string(func) + " " + std::to_string(local) + " " +
                     std::string(name));
    return {};
  }
  Status OnName(NameKind kind, std::uint32_t index, std::string_view name) override {
    events.push_back(std::string(NameKindName(kind)) + " name " + std::to_string(index) + " " +
                     std::string(name));
    return {};
  }
  Status OnIndirectName(NameKind kind, std::uint32_t outer, std::uint32_t inner,
                        std::string_view name) override {
    events.push_back(std::string(NameKindName(kind)) + " name " + std::to_string(outer) + " " +
                     std::to_string(inner) + " " + std::string(name));
    return {};
  }
  Status OnNameSectionIgnored(std::uint64_t offset, const Status& error) override {
    events.push_back("name section ignored " + std::to_string(offset) + ": " + error.message());
    return {};
  }
  Status OnCustomSection(std::string_view name, std::uint64_t,
                         std::span<const std::uint8_t> payload) override {
    events.push_back("custom " + std::string(name) + " " + std::to_string(payload.size()));
    return {};
  }
};

}  // namespace trove::warden::wasm::testing

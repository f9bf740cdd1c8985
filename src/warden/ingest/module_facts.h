// Module-level facts for WARDEN ingest (docs/warden.md §4.1, §4.3, §10.1): memories, the
// `producers` and `target_features` custom sections, the other custom sections by name and
// size; the visitor that fans one ReadModule pass out to several visitors; and the seeded
// names of §4.3, computed from identity and (optionally) the JS glue's bindings.
//
// Thread safety: a ModuleFactsVisitor or FanOutVisitor belongs to the thread running
// ReadModule (FanOutVisitor passes body hooks on concurrently only when every visitor allows
// it). The free functions may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "warden/identity/identity.h"
#include "warden/kb/records.h"
#include "warden/wasm/module_visitor.h"

namespace trove::warden::ingest {

struct CustomSection {
  std::string name;
  std::uint64_t size = 0;
};

// What the name section says besides function names (which identity keeps as raw_name, §4.3):
// the module's name and the extended subsections. Name maps hold index -> name.
struct ModuleNames {
  std::optional<std::string> module;
  std::map<std::uint32_t, std::string> types;
  std::map<std::uint32_t, std::string> tables;
  std::map<std::uint32_t, std::string> memories;
  std::map<std::uint32_t, std::string> globals;
  std::map<std::uint32_t, std::string> elem_segments;
  std::map<std::uint32_t, std::string> data_segments;
  std::map<std::uint32_t, std::string> tags;
  // Counts of the two-level names: locals and labels (per function), fields (per type).
  std::uint64_t locals = 0;
  std::uint64_t labels = 0;
  std::uint64_t fields = 0;
};

struct ModuleFacts {
  std::uint32_t memory_count = 0;  // imported and defined
  bool shared_memory = false;      // any memory, imported or defined, is shared
  bool memory64 = false;           // any memory is a memory64
  // `target_features` entries as written: the prefix character and the name ("+simd128").
  std::vector<std::string> features;
  // `producers`: field -> (name, version) pairs, in section order.
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> producers;
  std::vector<CustomSection> custom_sections;  // every custom section, in order
  // Warnings about optional metadata that was malformed and ignored (§4.3), with offsets.
  std::vector<std::string> warnings;
  ModuleNames names;  // empty when the name section is absent or was ignored
};

// Returns the names as a JSON object text: {"module": "m" or null, "types": {"0": "t"}, ...,
// "locals": 3, "labels": 0, "fields": 0}; the name maps keyed by decimal index.
std::string NamesJson(const ModuleNames& names);

// Returns the features as a JSON array text, and the producers as a JSON object text
// ({"language": [["C99", ""]], ...}); the forms stored in module_versions (§10.1).
std::string FeaturesJson(const ModuleFacts& facts);
std::string ProducersJson(const ModuleFacts& facts);

class ModuleFactsVisitor final : public wasm::ModuleVisitor {
 public:
  bool ConcurrentBodies() const override { return true; }  // it reads no bodies
  bool ReadsInstructions() const override { return false; }
  Status OnImport(const wasm::Import& import) override;
  Status OnMemory(std::uint32_t index, const wasm::MemoryType& memory) override;
  Status OnCustomSection(std::string_view name, std::uint64_t offset,
                         std::span<const std::uint8_t> payload) override;
  Status OnModuleName(std::string_view name) override;
  Status OnLocalName(wasm::FuncIndex func, std::uint32_t local, std::string_view name) override;
  Status OnName(wasm::NameKind kind, std::uint32_t index, std::string_view name) override;
  Status OnIndirectName(wasm::NameKind kind, std::uint32_t outer, std::uint32_t inner,
                        std::string_view name) override;
  // Adds the warning "ignored the malformed name section at offset 0x.. (..): <error>".
  Status OnNameSectionIgnored(std::uint64_t offset, const Status& error) override;

  ModuleFacts& facts() { return facts_; }

 private:
  void AddMemory(const wasm::MemoryType& memory);
  ModuleFacts facts_;
};

// Passes every hook to each visitor in order, stopping at the first error. OnInstruction goes
// only to the visitors whose ReadsInstructions() is true (asked once, at construction); a run
// of instructions goes whole to the one such visitor, or one instruction at a time to each.
class FanOutVisitor final : public wasm::ModuleVisitor {
 public:
  explicit FanOutVisitor(std::vector<wasm::ModuleVisitor*> visitors);

  bool ConcurrentBodies() const override;
  bool ReadsInstructions() const override { return !instruction_visitors_.empty(); }
  Status OnType(std::uint32_t index, const wasm::FuncType& type) override;
  Status OnImport(const wasm::Import& import) override;
  Status OnFunctionCount(std::uint32_t count) override;
  Status OnFunction(wasm::FuncIndex func, std::uint32_t type_index) override;
  Status OnTable(std::uint32_t index, const wasm::TableType& table) override;
  Status OnMemory(std::uint32_t index, const wasm::MemoryType& memory) override;
  Status OnTag(std::uint32_t index, std::uint32_t type_index) override;
  Status OnGlobal(const wasm::Global& global) override;
  Status OnExport(const wasm::Export& export_) override;
  Status OnStart(wasm::FuncIndex func) override;
  Status OnElementSegment(const wasm::ElementSegment& segment) override;
  Status OnDataCount(std::uint32_t count) override;
  Status OnFunctionBody(const wasm::FunctionBody& body) override;
  Status OnInstruction(wasm::FuncIndex func, const wasm::Instruction& inst) override;
  Status OnInstructions(wasm::FuncIndex func, std::span<const wasm::Instruction> insts) override;
  Status OnFunctionBodyEnd(wasm::FuncIndex func) override;
  Status OnDataSegment(const wasm::DataSegment& segment) override;
  Status OnModuleName(std::string_view name) override;
  Status OnFunctionName(wasm::FuncIndex func, std::string_view name) override;
  Status OnLocalName(wasm::FuncIndex func, std::uint32_t local, std::string_view name) override;
  Status OnName(wasm::NameKind kind, std::uint32_t index, std::string_view name) override;
  Status OnIndirectName(wasm::NameKind kind, std::uint32_t outer, std::uint32_t inner,
                        std::string_view name) override;
  Status OnNameSectionIgnored(std::uint64_t offset, const Status& error) override;
  Status OnCustomSection(std::string_view name, std::uint64_t offset,
                         std::span<const std::uint8_t> payload) override;

 private:
  std::vector<wasm::ModuleVisitor*> visitors_;
  std::vector<wasm::ModuleVisitor*> instruction_visitors_;  // those that read instructions
};

// What the JS glue binds (§4.4), as the seeding rules need it.
struct GlueBindings {
  // wasm export name -> the JS symbol bound to it ("_malloc", or a Module["name"] key).
  std::map<std::string, std::string> exports;
  // import field -> the JS function bound to it ("_emscripten_memcpy_big").
  std::map<std::string, std::string> imports;
};

// Returns the Emscripten C name for a JS symbol: one leading '_' removed ("_malloc" ->
// "malloc"); other symbols unchanged.
std::string CSymbolName(std::string_view js_symbol);

// Returns whether a module's function exports look minified (§4.3): ≥ 80 % of them have at
// most 3 characters. A single name of at most two characters is minified on its own.
bool ExportsLookMinified(const std::vector<std::string>& function_export_names);

// Returns the names seeded by ingest (§4.3), in the order they go through the gate, so that
// for one function the name section outranks the glue, and the glue the plain export name:
// name-section names; glue-resolved export names; other export names unless minified; and
// one name per imported function (`<module>.<field>`, or its glue-bound JS name).
std::vector<kb::SeedName> PlanSeeds(const identity::ModuleIdentity& module,
                                    const GlueBindings* glue);

}  // namespace trove::warden::ingest

// Test helpers shared by fixtures_test.cc and real_modules_test.cc: read a file, and summarise
// a wasm module (imports, exports, memories, name section) with one ReadModule pass beside the
// identity of its functions.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/status.h"
#include "warden/identity/identity.h"
#include "warden/wasm/module_visitor.h"
#include "warden/wasm/reader.h"

namespace trove::warden::glue::testing {

inline std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline bool FileExists(const std::string& path) { return std::ifstream(path).good(); }

struct ModuleSummary {
  struct ImportEntry {
    std::string module;
    std::string field;
    wasm::ExternalKind kind = wasm::ExternalKind::kFunction;
  };
  std::vector<ImportEntry> imports;
  std::map<std::string, std::pair<wasm::ExternalKind, std::uint32_t>>
      exports;  // name -> kind, index
  std::uint32_t imported_functions = 0;
  std::uint32_t defined_functions = 0;
  bool shared_memory = false;
  bool has_name_section = false;
  std::map<wasm::FuncIndex, std::string> function_names;
  std::set<std::string> custom_sections;

  // Export names of kind function.
  std::set<std::string> FunctionExports() const {
    std::set<std::string> out;
    for (const auto& [name, entry] : exports) {
      if (entry.first == wasm::ExternalKind::kFunction) out.insert(name);
    }
    return out;
  }
  std::set<std::string> ImportFields() const {
    std::set<std::string> out;
    for (const ImportEntry& i : imports) out.insert(i.field);
    return out;
  }
  std::set<std::string> ImportModules() const {
    std::set<std::string> out;
    for (const ImportEntry& i : imports) out.insert(i.module);
    return out;
  }
};

class SummaryVisitor final : public wasm::ModuleVisitor {
 public:
  ModuleSummary summary;

  Status OnImport(const wasm::Import& import) override {
    summary.imports.push_back({std::string(import.module), std::string(import.field), import.kind});
    if (import.kind == wasm::ExternalKind::kFunction) ++summary.imported_functions;
    if (import.kind == wasm::ExternalKind::kMemory && import.memory.limits.shared) {
      summary.shared_memory = true;
    }
    return {};
  }
  Status OnFunction(wasm::FuncIndex, std::uint32_t) override {
    ++summary.defined_functions;
    return {};
  }
  Status OnMemory(std::uint32_t, const wasm::MemoryType& memory) override {
    if (memory.limits.shared) summary.shared_memory = true;
    return {};
  }
  Status OnExport(const wasm::Export& e) override {
    summary.exports[std::string(e.name)] = {e.kind, e.index};
    return {};
  }
  Status OnFunctionName(wasm::FuncIndex func, std::string_view name) override {
    summary.function_names.emplace(func, std::string(name));
    return {};
  }
  Status OnCustomSection(std::string_view name, std::uint64_t,
                         std::span<const std::uint8_t>) override {
    summary.custom_sections.insert(std::string(name));
    if (name == "name") summary.has_name_section = true;
    return {};
  }
};

inline std::span<const std::uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Reads `bytes` with a SummaryVisitor, without decoding bodies (identity decodes them).
inline Result<ModuleSummary> Summarise(const std::string& bytes) {
  SummaryVisitor visitor;
  wasm::ReadOptions options;
  options.decode_bodies = false;
  RETURN_IF_ERROR(wasm::ReadModule(Bytes(bytes), visitor, options));
  return std::move(visitor.summary);
}

}  // namespace trove::warden::glue::testing

#include "warden/ingest/module_facts.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "warden/wasm/byte_cursor.h"
#include "warden/wasm/custom_sections.h"

namespace trove::warden::ingest {

namespace {

using Json = nlohmann::ordered_json;

}  // namespace

std::string FeaturesJson(const ModuleFacts& facts) {
  Json out = Json::array();
  for (const std::string& f : facts.features) out.push_back(f);
  return out.dump();
}

std::string ProducersJson(const ModuleFacts& facts) {
  Json out = Json::object();
  for (const auto& [field, values] : facts.producers) {
    Json list = Json::array();
    for (const auto& [name, version] : values) list.push_back(Json::array({name, version}));
    out[field] = std::move(list);
  }
  return out.dump();
}

void ModuleFactsVisitor::AddMemory(const wasm::MemoryType& memory) {
  ++facts_.memory_count;
  facts_.shared_memory = facts_.shared_memory || memory.limits.shared;
  facts_.memory64 = facts_.memory64 || memory.limits.is64;
}

Status ModuleFactsVisitor::OnImport(const wasm::Import& import) {
  if (import.kind == wasm::ExternalKind::kMemory) AddMemory(import.memory);
  return {};
}

Status ModuleFactsVisitor::OnMemory(std::uint32_t /*index*/, const wasm::MemoryType& memory) {
  AddMemory(memory);
  return {};
}

Status ModuleFactsVisitor::OnCustomSection(std::string_view name, std::uint64_t offset,
                                           std::span<const std::uint8_t> payload) {
  facts_.custom_sections.push_back({std::string(name), payload.size()});
  if (name != "producers" && name != "target_features") return {};
  // Optional metadata: a malformed section is ignored with a warning, like the name
  // section (docs/warden.md §4.3), and never fails the ingest.
  // The parsers live in wasm/custom_sections.h (fuzzed there); the facts keep their shapes.
  Status s;
  if (name == "producers") {
    Result<wasm::Producers> p = wasm::ParseProducers(payload, offset);
    if (p.ok()) {
      facts_.producers.clear();
      for (wasm::ProducerField& field : *p) {
        std::vector<std::pair<std::string, std::string>> list;
        for (wasm::ProducerValue& v : field.values) {
          list.emplace_back(std::move(v.name), std::move(v.version));
        }
        facts_.producers.emplace_back(std::move(field.field), std::move(list));
      }
    }
    s = p.status();
  } else {
    Result<std::vector<std::string>> f = wasm::ParseTargetFeatures(payload, offset);
    if (f.ok()) facts_.features = std::move(f).value();
    s = f.status();
  }
  if (!s.ok()) {
    facts_.warnings.push_back(fmt::format("ignored malformed {} section: {}", name, s.message()));
  }
  return {};
}

Status ModuleFactsVisitor::OnModuleName(std::string_view name) {
  facts_.names.module = std::string(name);
  return {};
}

Status ModuleFactsVisitor::OnLocalName(wasm::FuncIndex /*func*/, std::uint32_t /*local*/,
                                       std::string_view /*name*/) {
  ++facts_.names.locals;
  return {};
}

Status ModuleFactsVisitor::OnName(wasm::NameKind kind, std::uint32_t index, std::string_view name) {
  ModuleNames& n = facts_.names;
  std::map<std::uint32_t, std::string>* map = nullptr;
  switch (kind) {
    case wasm::NameKind::kType:
      map = &n.types;
      break;
    case wasm::NameKind::kTable:
      map = &n.tables;
      break;
    case wasm::NameKind::kMemory:
      map = &n.memories;
      break;
    case wasm::NameKind::kGlobal:
      map = &n.globals;
      break;
    case wasm::NameKind::kElemSegment:
      map = &n.elem_segments;
      break;
    case wasm::NameKind::kDataSegment:
      map = &n.data_segments;
      break;
    case wasm::NameKind::kTag:
      map = &n.tags;
      break;
    default:
      return {};
  }
  map->insert_or_assign(index, std::string(name));
  return {};
}

Status ModuleFactsVisitor::OnIndirectName(wasm::NameKind kind, std::uint32_t /*outer*/,
                                          std::uint32_t /*inner*/, std::string_view /*name*/) {
  if (kind == wasm::NameKind::kLabel) ++facts_.names.labels;
  if (kind == wasm::NameKind::kField) ++facts_.names.fields;
  return {};
}

Status ModuleFactsVisitor::OnNameSectionIgnored(std::uint64_t offset, const Status& error) {
  facts_.warnings.push_back(fmt::format("ignored the malformed name section at {}: {}",
                                        wasm::ByteCursor::Location(offset), error.message()));
  return {};
}

std::string NamesJson(const ModuleNames& names) {
  Json out = Json::object();
  out["module"] = names.module ? Json(*names.module) : Json(nullptr);
  const auto map = [](const std::map<std::uint32_t, std::string>& m) {
    Json j = Json::object();
    for (const auto& [index, name] : m) j[std::to_string(index)] = name;
    return j;
  };
  out["types"] = map(names.types);
  out["tables"] = map(names.tables);
  out["memories"] = map(names.memories);
  out["globals"] = map(names.globals);
  out["elem_segments"] = map(names.elem_segments);
  out["data_segments"] = map(names.data_segments);
  out["tags"] = map(names.tags);
  out["locals"] = names.locals;
  out["labels"] = names.labels;
  out["fields"] = names.fields;
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

FanOutVisitor::FanOutVisitor(std::vector<wasm::ModuleVisitor*> visitors)
    : visitors_(std::move(visitors)) {
  for (wasm::ModuleVisitor* v : visitors_) {
    if (v->ReadsInstructions()) instruction_visitors_.push_back(v);
  }
}

bool FanOutVisitor::ConcurrentBodies() const {
  for (const wasm::ModuleVisitor* v : visitors_) {
    if (!v->ConcurrentBodies()) return false;
  }
  return true;
}

#define TROVE_FAN_OUT(call)                   \
  for (wasm::ModuleVisitor * v : visitors_) { \
    RETURN_IF_ERROR(v->call);                 \
  }                                           \
  return {}

Status FanOutVisitor::OnType(std::uint32_t index, const wasm::FuncType& type) {
  TROVE_FAN_OUT(OnType(index, type));
}
Status FanOutVisitor::OnImport(const wasm::Import& import) { TROVE_FAN_OUT(OnImport(import)); }
Status FanOutVisitor::OnFunctionCount(std::uint32_t count) {
  TROVE_FAN_OUT(OnFunctionCount(count));
}
Status FanOutVisitor::OnFunction(wasm::FuncIndex func, std::uint32_t type_index) {
  TROVE_FAN_OUT(OnFunction(func, type_index));
}
Status FanOutVisitor::OnTable(std::uint32_t index, const wasm::TableType& table) {
  TROVE_FAN_OUT(OnTable(index, table));
}
Status FanOutVisitor::OnMemory(std::uint32_t index, const wasm::MemoryType& memory) {
  TROVE_FAN_OUT(OnMemory(index, memory));
}
Status FanOutVisitor::OnTag(std::uint32_t index, std::uint32_t type_index) {
  TROVE_FAN_OUT(OnTag(index, type_index));
}
Status FanOutVisitor::OnGlobal(const wasm::Global& global) { TROVE_FAN_OUT(OnGlobal(global)); }
Status FanOutVisitor::OnExport(const wasm::Export& export_) { TROVE_FAN_OUT(OnExport(export_)); }
Status FanOutVisitor::OnStart(wasm::FuncIndex func) { TROVE_FAN_OUT(OnStart(func)); }
Status FanOutVisitor::OnElementSegment(const wasm::ElementSegment& segment) {
  TROVE_FAN_OUT(OnElementSegment(segment));
}
Status FanOutVisitor::OnDataCount(std::uint32_t count) { TROVE_FAN_OUT(OnDataCount(count)); }
Status FanOutVisitor::OnFunctionBody(const wasm::FunctionBody& body) {
  TROVE_FAN_OUT(OnFunctionBody(body));
}
Status FanOutVisitor::OnInstruction(wasm::FuncIndex func, const wasm::Instruction& inst) {
  for (wasm::ModuleVisitor* v : instruction_visitors_) {
    RETURN_IF_ERROR(v->OnInstruction(func, inst));
  }
  return {};
}
Status FanOutVisitor::OnInstructions(wasm::FuncIndex func,
                                     std::span<const wasm::Instruction> insts) {
  if (instruction_visitors_.size() == 1) {
    return instruction_visitors_[0]->OnInstructions(func, insts);
  }
  return ModuleVisitor::OnInstructions(func, insts);  // each instruction to every visitor
}
Status FanOutVisitor::OnFunctionBodyEnd(wasm::FuncIndex func) {
  TROVE_FAN_OUT(OnFunctionBodyEnd(func));
}
Status FanOutVisitor::OnDataSegment(const wasm::DataSegment& segment) {
  TROVE_FAN_OUT(OnDataSegment(segment));
}
Status FanOutVisitor::OnModuleName(std::string_view name) { TROVE_FAN_OUT(OnModuleName(name)); }
Status FanOutVisitor::OnFunctionName(wasm::FuncIndex func, std::string_view name) {
  TROVE_FAN_OUT(OnFunctionName(func, name));
}
Status FanOutVisitor::OnLocalName(wasm::FuncIndex func, std::uint32_t local,
                                  std::string_view name) {
  TROVE_FAN_OUT(OnLocalName(func, local, name));
}
Status FanOutVisitor::OnName(wasm::NameKind kind, std::uint32_t index, std::string_view name) {
  TROVE_FAN_OUT(OnName(kind, index, name));
}
Status FanOutVisitor::OnIndirectName(wasm::NameKind kind, std::uint32_t outer, std::uint32_t inner,
                                     std::string_view name) {
  TROVE_FAN_OUT(OnIndirectName(kind, outer, inner, name));
}
Status FanOutVisitor::OnNameSectionIgnored(std::uint64_t offset, const Status& error) {
  TROVE_FAN_OUT(OnNameSectionIgnored(offset, error));
}
Status FanOutVisitor::OnCustomSection(std::string_view name, std::uint64_t offset,
                                      std::span<const std::uint8_t> payload) {
  TROVE_FAN_OUT(OnCustomSection(name, offset, payload));
}

#undef TROVE_FAN_OUT

std::string CSymbolName(std::string_view js_symbol) {
  if (js_symbol.size() > 1 && js_symbol.front() == '_') js_symbol.remove_prefix(1);
  return std::string(js_symbol);
}

bool ExportsLookMinified(const std::vector<std::string>& function_export_names) {
  if (function_export_names.empty()) return false;
  std::size_t short_names = 0;
  for (const std::string& name : function_export_names) {
    if (name.size() <= 3) ++short_names;
  }
  return short_names * 5 >= function_export_names.size() * 4;  // ≥ 80 %
}

std::vector<kb::SeedName> PlanSeeds(const identity::ModuleIdentity& module,
                                    const GlueBindings* glue) {
  std::vector<kb::SeedName> seeds;
  // 1. The name section.
  for (const identity::FunctionIdentity& f : module.functions) {
    if (f.raw_name && !f.raw_name->empty()) {
      seeds.push_back({f.func_index, *f.raw_name, kb::SeedSource::kNameSection});
    }
  }
  // 2. Exports the glue binds to a JS symbol; 3. other exports unless minified.
  std::vector<std::string> all_exports;
  for (const identity::FunctionIdentity& f : module.functions) {
    for (const std::string& e : f.export_names) all_exports.push_back(e);
  }
  const bool minified = ExportsLookMinified(all_exports);
  for (const identity::FunctionIdentity& f : module.functions) {
    for (const std::string& e : f.export_names) {
      if (glue != nullptr) {
        if (auto it = glue->exports.find(e); it != glue->exports.end()) {
          const std::string name = CSymbolName(it->second);
          if (!name.empty()) seeds.push_back({f.func_index, name, kb::SeedSource::kGlue});
          continue;
        }
      }
      if (minified || e.size() <= 2) continue;
      seeds.push_back({f.func_index, e, kb::SeedSource::kExport});
    }
  }
  // 4. Imported functions: "<module>.<field>", or the glue-bound JS name.
  for (const identity::ImportedFunction& import : module.imports) {
    if (glue != nullptr) {
      if (auto it = glue->imports.find(import.field); it != glue->imports.end()) {
        seeds.push_back({import.func_index, it->second, kb::SeedSource::kGlue});
        continue;
      }
    }
    seeds.push_back(
        {import.func_index, import.module + "." + import.field, kb::SeedSource::kExport});
  }
  return seeds;
}

}  // namespace trove::warden::ingest

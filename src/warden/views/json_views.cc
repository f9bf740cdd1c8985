#include "warden/views/json_views.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "warden/wasm/custom_sections.h"

namespace trove::warden::views {

namespace {

template <typename T>
Json OrNull(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

// A finite double as JSON; NaN and infinities (never stored, but never trusted) as null.
Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

}  // namespace

std::string Confidence3(double value) { return fmt::format("{:.3f}", value); }

Json VersionJson(const kb::VersionInfo& v) {
  Json out{{"id", v.id},
           {"label", v.label},
           {"emscripten_version", OrNull(v.emscripten_version)},
           {"functions", v.functions},
           {"shared_memory", v.shared_memory}};
  const Json toolchain = ToolchainJson(v);  // named: items() of a temporary would dangle
  for (const auto& [key, value] : toolchain.items()) out[key] = value;
  return out;
}

namespace {

// Parses stored JSON text; null when it is not JSON of the expected kind.
Json ParseStored(const std::string& text, bool object) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || (object ? !j.is_object() : !j.is_array())) return Json(nullptr);
  return j;
}

}  // namespace

Json ToolchainJson(const kb::VersionInfo& v) {
  return Json{{"producers", ParseStored(v.producers_json, true)},
              {"target_features", ParseStored(v.features_json, false)}};
}

std::string ProducersText(const kb::VersionInfo& v) {
  const Json j = ParseStored(v.producers_json, true);
  wasm::Producers producers;
  if (j.is_object()) {
    for (const auto& [field, values] : j.items()) {
      wasm::ProducerField f{.field = field, .values = {}};
      if (!values.is_array()) continue;
      for (const Json& pair : values) {
        if (pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string()) {
          f.values.push_back({pair[0].get<std::string>(), pair[1].get<std::string>()});
        }
      }
      producers.push_back(std::move(f));
    }
  }
  const std::string text = wasm::ProducersSummary(producers);
  return text.empty() ? "-" : text;
}

std::string FeaturesText(const kb::VersionInfo& v) {
  const Json j = ParseStored(v.features_json, false);
  std::string out;
  if (j.is_array()) {
    for (const Json& f : j) {
      if (f.is_string()) out += (out.empty() ? "" : " ") + f.get<std::string>();
    }
  }
  return out.empty() ? "-" : out;
}

Json VersionsJson(const std::vector<kb::VersionInfo>& versions) {
  Json out = Json::array();
  for (const kb::VersionInfo& v : versions) out.push_back(VersionJson(v));
  return out;
}

Json CoverageJson(const kb::Coverage& c) {
  return Json{{"defined", c.defined},
              {"named", c.named},
              {"coverage_pct", Number(c.coverage_pct)},
              {"oracle_named", c.oracle_named},
              {"human_named", c.human_named},
              {"agent_named", c.agent_named},
              {"placeholder_named", c.placeholder_named},
              {"real_named", c.real_named},
              {"real_coverage_pct", Number(c.real_coverage_pct)}};
}

Json FunctionRowJson(const kb::FunctionRow& row) {
  return Json{{"index", row.index},
              {"stable_id", row.stable_id},
              {"type", OrNull(row.type)},
              {"name", OrNull(row.name)},
              {"provenance", OrNull(row.provenance)},
              {"confidence", row.confidence ? Number(*row.confidence) : Json(nullptr)}};
}

Json FunctionRowsJson(const std::vector<kb::FunctionRow>& rows) {
  Json out = Json::array();
  for (const kb::FunctionRow& r : rows) out.push_back(FunctionRowJson(r));
  return out;
}

Json FactsJson(const std::optional<kb::FunctionFacts>& facts) {
  if (!facts) return nullptr;
  return Json{{"func_index", facts->func_index},
              {"stable_id", facts->stable_id},
              {"type_signature", facts->type_signature},
              {"call_targets", facts->call_targets},
              {"referenced_strings", facts->referenced_strings},
              {"raw_name", OrNull(facts->raw_name)},
              {"instruction_mnemonics", facts->instruction_mnemonics},
              {"is_exported", facts->is_exported}};
}

Json EvidenceJson(const kb::EvidenceEntry& e) {
  Json details = Json::parse(e.details_json, nullptr, /*allow_exceptions=*/false);
  if (details.is_discarded()) details = Json::object();
  return Json{{"at", e.at},
              {"actor", e.actor},
              {"provenance", e.provenance},
              {"name", OrNull(e.name)},
              {"confidence", e.confidence ? Number(*e.confidence) : Json(nullptr)},
              {"accepted", e.accepted},
              {"reason", e.reason},
              {"details", std::move(details)}};
}

Json SymbolJson(const std::optional<kb::SymbolRecord>& symbol) {
  if (!symbol) return nullptr;
  Json evidence = Json::array();
  for (const kb::EvidenceEntry& e : symbol->evidence) evidence.push_back(EvidenceJson(e));
  return Json{
      {"stable_id", symbol->stable_id},     {"name", OrNull(symbol->name)},
      {"summary", OrNull(symbol->summary)}, {"type_signature", OrNull(symbol->type_signature)},
      {"provenance", symbol->provenance},   {"confidence", Number(symbol->confidence)},
      {"locked", symbol->locked},           {"evidence", std::move(evidence)}};
}

}  // namespace trove::warden::views

#include "warden/views/json_views.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

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
  return Json{{"id", v.id},
              {"label", v.label},
              {"emscripten_version", OrNull(v.emscripten_version)},
              {"functions", v.functions},
              {"shared_memory", v.shared_memory}};
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
              {"agent_named", c.agent_named}};
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

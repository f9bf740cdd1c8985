// Reading KB rows from a result row, the same for every back end: `Row` is base::Statement
// (SQLite) or base::pg::Statement (PostgreSQL), which share the Column* accessors. The column
// lists are the SELECT lists the readers expect. Internal to kb/.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "warden/kb/columns.h"
#include "warden/kb/records.h"

namespace trove::warden::kb::internal {

inline constexpr std::string_view kFunctionColumns =
    "func_index, is_import, import_module, import_field, type_signature, stable_id, id_tier, "
    "norm_hash, exact_hash, structural_hash, minhash, histogram, call_outs_json, callees_json, "
    "instruction_count, body_offset, body_size, raw_name, export_names_json, call_targets_json, "
    "referenced_strings_json, opcodes";

inline constexpr std::string_view kVersionColumns =
    "id, label, emscripten_version, emscripten_version_source, imported_count, defined_count, "
    "shared_memory, memory_count, memory64, sha256, size, wasm_path, glue_path, ingested_at, "
    "features_json, producers_json";

// The columns DefinedFunctionsForDiff reads: the diff's keys, fingerprints and reported facts,
// then the current symbol.
inline constexpr std::string_view kDiffColumns =
    "f.func_index, f.type_signature, f.stable_id, f.id_tier, f.norm_hash, f.exact_hash, "
    "f.structural_hash, f.minhash, f.histogram, f.call_outs_json, f.callees_json, "
    "f.instruction_count, f.body_offset, f.body_size, f.referenced_strings_json, f.opcodes, "
    "s.name, s.provenance, s.confidence, s.locked";

inline constexpr std::string_view kEvidenceColumns =
    "id, at, actor, provenance, name, summary, confidence, accepted, reason, details_json";

inline constexpr std::string_view kSymbolColumns =
    "name, summary, type_signature, provenance, actor, confidence, locked, created_at, "
    "updated_at";

template <typename Row>
std::optional<std::string> OptionalText(const Row& s, int column) {
  if (s.ColumnIsNull(column)) return std::nullopt;
  return s.ColumnText(column);
}

template <typename Row>
FunctionRecord ReadFunction(const Row& s) {
  FunctionRecord r;
  r.func_index = static_cast<std::uint32_t>(s.ColumnInt64(0));
  r.is_import = s.ColumnInt64(1) != 0;
  r.import_module = s.ColumnText(2);
  r.import_field = s.ColumnText(3);
  r.type_signature = s.ColumnText(4);
  r.stable_id = s.ColumnText(5);
  r.id_tier = static_cast<int>(s.ColumnInt64(6));
  r.norm_hash = s.ColumnText(7);
  r.exact_hash = s.ColumnText(8);
  r.structural_hash = s.ColumnText(9);
  r.minhash = UnpackLe<std::uint64_t, kMinHashValues>(s.ColumnBlobView(10));
  r.histogram = UnpackLe<std::uint32_t, kHistogramClasses>(s.ColumnBlobView(11));
  r.call_outs = StringsFromJson(s.ColumnTextView(12));
  r.defined_callees = IndicesFromJson(s.ColumnTextView(13));
  r.instruction_count = static_cast<std::uint32_t>(s.ColumnInt64(14));
  r.body_offset = static_cast<std::uint64_t>(s.ColumnInt64(15));
  r.body_size = static_cast<std::uint64_t>(s.ColumnInt64(16));
  r.raw_name = OptionalText(s, 17);
  r.export_names = StringsFromJson(s.ColumnTextView(18));
  r.call_targets = StringsFromJson(s.ColumnTextView(19));
  r.referenced_strings = StringsFromJson(s.ColumnTextView(20));
  r.opcodes = s.ColumnBlob(21);
  return r;
}

// Appends one kDiffColumns row to `out`.
template <typename Row>
void ReadDiffFunction(const Row& s, AnnotatedFunctions& out) {
  FunctionRecord& r = out.records.emplace_back();
  r.func_index = static_cast<std::uint32_t>(s.ColumnInt64(0));
  r.type_signature = s.ColumnTextView(1);
  r.stable_id = s.ColumnTextView(2);
  r.id_tier = static_cast<int>(s.ColumnInt64(3));
  r.norm_hash = s.ColumnTextView(4);
  r.exact_hash = s.ColumnTextView(5);
  r.structural_hash = s.ColumnTextView(6);
  r.minhash = UnpackLe<std::uint64_t, kMinHashValues>(s.ColumnBlobView(7));
  r.histogram = UnpackLe<std::uint32_t, kHistogramClasses>(s.ColumnBlobView(8));
  r.call_outs = StringsFromJson(s.ColumnTextView(9));
  r.defined_callees = IndicesFromJson(s.ColumnTextView(10));
  r.instruction_count = static_cast<std::uint32_t>(s.ColumnInt64(11));
  r.body_offset = static_cast<std::uint64_t>(s.ColumnInt64(12));
  r.body_size = static_cast<std::uint64_t>(s.ColumnInt64(13));
  r.referenced_strings = StringsFromJson(s.ColumnTextView(14));
  r.opcodes = s.ColumnBlobView(15);
  FunctionRow& symbol = out.symbols.emplace_back();
  symbol.index = r.func_index;
  symbol.name = OptionalText(s, 16);
  if (symbol.name.has_value()) {
    symbol.provenance = s.ColumnText(17);
    symbol.confidence = s.ColumnDouble(18);
    symbol.locked = s.ColumnInt64(19) != 0;
  }
}

template <typename Row>
VersionInfo ReadVersion(const Row& s) {
  VersionInfo v;
  v.id = s.ColumnInt64(0);
  v.label = s.ColumnText(1);
  v.emscripten_version = OptionalText(s, 2);
  v.emscripten_version_source = OptionalText(s, 3);
  v.imported = s.ColumnInt64(4);
  v.defined = s.ColumnInt64(5);
  v.functions = v.imported + v.defined;
  v.shared_memory = s.ColumnInt64(6) != 0;
  v.memory_count = s.ColumnInt64(7);
  v.memory64 = s.ColumnInt64(8) != 0;
  v.sha256 = s.ColumnText(9);
  v.size = static_cast<std::uint64_t>(s.ColumnInt64(10));
  v.wasm_path = s.ColumnText(11);
  v.glue_path = OptionalText(s, 12);
  v.ingested_at = s.ColumnText(13);
  v.features_json = s.ColumnText(14);
  v.producers_json = s.ColumnText(15);
  return v;
}

// Reads kEvidenceColumns starting at `first`.
template <typename Row>
EvidenceEntry ReadEvidence(const Row& s, int first = 0) {
  EvidenceEntry e;
  e.id = s.ColumnInt64(first + 0);
  e.at = s.ColumnText(first + 1);
  e.actor = s.ColumnText(first + 2);
  e.provenance = s.ColumnText(first + 3);
  e.name = OptionalText(s, first + 4);
  e.summary = OptionalText(s, first + 5);
  if (!s.ColumnIsNull(first + 6)) e.confidence = s.ColumnDouble(first + 6);
  e.accepted = s.ColumnInt64(first + 7) != 0;
  e.reason = s.ColumnText(first + 8);
  e.details_json = s.ColumnText(first + 9);
  return e;
}

// Reads kSymbolColumns starting at `first`; the evidence is left empty.
template <typename Row>
SymbolRecord ReadSymbol(const Row& s, std::string stable_id, int first = 0) {
  SymbolRecord r;
  r.stable_id = std::move(stable_id);
  r.name = OptionalText(s, first + 0);
  r.summary = OptionalText(s, first + 1);
  r.type_signature = OptionalText(s, first + 2);
  r.provenance = s.ColumnText(first + 3);
  r.actor = s.ColumnText(first + 4);
  r.confidence = s.ColumnDouble(first + 5);
  r.locked = s.ColumnInt64(first + 6) != 0;
  r.created_at = s.ColumnText(first + 7);
  r.updated_at = s.ColumnText(first + 8);
  return r;
}

template <typename Row>
DiffRecord ReadDiff(const Row& s, bool full) {
  DiffRecord d;
  d.id = s.ColumnInt64(0);
  d.from_version = s.ColumnInt64(1);
  d.to_version = s.ColumnInt64(2);
  d.created_at = s.ColumnText(3);
  d.params_json = s.ColumnText(4);
  if (full) {
    d.report_json = s.ColumnText(5);
    d.changelog_md = s.ColumnText(6);
  }
  return d;
}

}  // namespace trove::warden::kb::internal

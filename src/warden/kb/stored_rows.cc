#include "warden/kb/stored_rows.h"

#include <fmt/core.h>

#include <algorithm>

#include "warden/kb/stored_rows_sql.h"

namespace trove::warden::kb {

namespace {

constexpr ColumnKind kI = ColumnKind::kInteger;
constexpr ColumnKind kR = ColumnKind::kReal;
constexpr ColumnKind kT = ColumnKind::kText;
constexpr ColumnKind kB = ColumnKind::kBlob;

// The columns of docs/warden.md §10.1 (schema.cc, pg/kb_pg.cc), keys first.
constexpr ColumnSpec kMetaColumns[] = {{"key", kT}, {"value", kT}};
constexpr ColumnSpec kVersionColumns[] = {{"id", kI},
                                          {"label", kT},
                                          {"wasm_path", kT},
                                          {"sha256", kT},
                                          {"size", kI},
                                          {"imported_count", kI},
                                          {"defined_count", kI},
                                          {"emscripten_version", kT},
                                          {"emscripten_version_source", kT},
                                          {"shared_memory", kI},
                                          {"memory_count", kI},
                                          {"memory64", kI},
                                          {"features_json", kT},
                                          {"producers_json", kT},
                                          {"glue_path", kT},
                                          {"glue_json", kT},
                                          {"ingested_at", kT}};
constexpr ColumnSpec kFunctionColumns[] = {{"version_id", kI},
                                           {"func_index", kI},
                                           {"is_import", kI},
                                           {"import_module", kT},
                                           {"import_field", kT},
                                           {"type_signature", kT},
                                           {"stable_id", kT},
                                           {"id_tier", kI},
                                           {"norm_hash", kT},
                                           {"exact_hash", kT},
                                           {"structural_hash", kT},
                                           {"minhash", kB},
                                           {"histogram", kB},
                                           {"call_outs_json", kT},
                                           {"callees_json", kT},
                                           {"instruction_count", kI},
                                           {"body_offset", kI},
                                           {"body_size", kI},
                                           {"raw_name", kT},
                                           {"export_names_json", kT},
                                           {"call_targets_json", kT},
                                           {"referenced_strings_json", kT},
                                           {"opcodes", kB}};
constexpr ColumnSpec kSymbolColumns[] = {
    {"stable_id", kT},  {"name", kT},      {"summary", kT},    {"type_signature", kT},
    {"provenance", kT}, {"actor", kT},     {"confidence", kR}, {"locked", kI},
    {"created_at", kT}, {"updated_at", kT}};
constexpr ColumnSpec kEvidenceColumns[] = {{"id", kI},      {"stable_id", kT},   {"at", kT},
                                           {"actor", kT},   {"provenance", kT},  {"name", kT},
                                           {"summary", kT}, {"confidence", kR},  {"accepted", kI},
                                           {"reason", kT},  {"details_json", kT}};
constexpr ColumnSpec kDiffColumns[] = {
    {"id", kI},          {"from_version", kI}, {"to_version", kI},  {"created_at", kT},
    {"params_json", kT}, {"report_json", kT},  {"changelog_md", kT}};

const TableSpec kSpecs[] = {
    {.table = KbTable::kMeta, .name = "meta", .columns = kMetaColumns},
    {.table = KbTable::kVersions,
     .name = "module_versions",
     .columns = kVersionColumns,
     .generated_id = true},
    {.table = KbTable::kFunctions,
     .name = "functions",
     .columns = kFunctionColumns,
     .key_columns = 2},
    {.table = KbTable::kSymbols, .name = "symbols", .columns = kSymbolColumns},
    {.table = KbTable::kEvidence,
     .name = "evidence",
     .columns = kEvidenceColumns,
     .generated_id = true},
    {.table = KbTable::kDiffs, .name = "diffs", .columns = kDiffColumns, .generated_id = true},
};

std::string Joined(std::span<const ColumnSpec> columns) {
  std::string out;
  for (const ColumnSpec& c : columns) {
    if (!out.empty()) out += ", ";
    out += c.name;
  }
  return out;
}

}  // namespace

const TableSpec& SpecOf(KbTable table) { return kSpecs[static_cast<int>(table)]; }

namespace internal {

std::string ColumnList(const TableSpec& spec) { return Joined(spec.columns); }

std::string ScanSql(const TableSpec& spec, bool after) {
  const std::string keys = Joined(spec.columns.first(spec.key_columns));
  std::string where;
  if (after) {
    std::string params;
    for (std::size_t i = 0; i < spec.key_columns; ++i) {
      params += fmt::format("{}?{}", i == 0 ? "" : ", ", i + 1);
    }
    where = spec.key_columns == 1 ? fmt::format(" WHERE {} > {}", keys, params)
                                  : fmt::format(" WHERE ({}) > ({})", keys, params);
  }
  return fmt::format("SELECT {} FROM {}{} ORDER BY {} LIMIT ?{}", ColumnList(spec), spec.name,
                     where, keys, after ? spec.key_columns + 1 : 1);
}

std::string InsertSql(const TableSpec& spec, std::size_t rows) {
  const std::size_t n = spec.columns.size();
  std::string values;
  for (std::size_t r = 0; r < rows; ++r) {
    values += r == 0 ? "(" : ", (";
    for (std::size_t c = 0; c < n; ++c) {
      values += fmt::format("{}?{}", c == 0 ? "" : ", ", r * n + c + 1);
    }
    values += ")";
  }
  std::string sql =
      fmt::format("INSERT INTO {} ({}) VALUES {}", spec.name, ColumnList(spec), values);
  // A new KB holds its own meta rows (schema_version, producer, project): the copy's win.
  if (spec.table == KbTable::kMeta)
    sql += " ON CONFLICT (key) DO UPDATE SET value = excluded.value";
  return sql;
}

std::size_t RowsPerInsert(const TableSpec& spec) {
  return std::max<std::size_t>(1, kMaxParamsPerInsert / spec.columns.size());
}

std::string KeyOfRow(const TableSpec& spec, const StoredRow& row) {
  std::string out;
  for (std::size_t i = 0; i < spec.key_columns && i < row.size(); ++i) {
    if (i > 0) out += ", ";
    if (const auto* v = std::get_if<std::int64_t>(&row[i])) {
      out += std::to_string(*v);
    } else if (const auto* t = std::get_if<std::string>(&row[i])) {
      out += *t;
    }
  }
  return out;
}

Status RequireEmpty(const std::function<Result<std::int64_t>(KbTable)>& count) {
  struct Counted {
    KbTable table;
    std::string_view one;
    std::string_view many;
  };
  constexpr Counted kCounted[] = {{KbTable::kVersions, "version", "versions"},
                                  {KbTable::kFunctions, "function", "functions"},
                                  {KbTable::kSymbols, "symbol", "symbols"},
                                  {KbTable::kEvidence, "evidence row", "evidence rows"},
                                  {KbTable::kDiffs, "diff", "diffs"}};
  std::string held;
  for (const Counted& c : kCounted) {
    ASSIGN_OR_RETURN(const std::int64_t n, count(c.table));
    if (n == 0) continue;
    held += fmt::format("{}{} {}", held.empty() ? "" : ", ", n, n == 1 ? c.one : c.many);
  }
  if (held.empty()) return Status::Ok();
  return Status::AlreadyExists(
      fmt::format("the target KB is not empty (it holds {}); a KB is copied into an empty one "
                  "only",
                  held));
}

}  // namespace internal
}  // namespace trove::warden::kb

#include "warden/kb/schema.h"

#include <fmt/core.h>

#include <charconv>
#include <string>

#include "base/sqlite.h"
#include "warden/kb/kb.h"

namespace trove::warden::kb::internal {

// Booleans are INTEGER 0/1. Extra `functions` columns beyond docs/warden.md §10.1
// (call_targets_json, referenced_strings_json, opcodes) hold the FunctionFacts fields that the
// listed columns cannot give back; minhash holds 32 x u64 LE, the width identity computes
// (docs/decisions/0008-warden-kb.md).
const std::string_view kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS module_versions (
  id                        INTEGER PRIMARY KEY,
  label                     TEXT UNIQUE NOT NULL,
  wasm_path                 TEXT NOT NULL,
  sha256                    TEXT NOT NULL,
  size                      INTEGER NOT NULL,
  imported_count            INTEGER NOT NULL,
  defined_count             INTEGER NOT NULL,
  emscripten_version        TEXT,
  emscripten_version_source TEXT,
  shared_memory             INTEGER NOT NULL,
  memory_count              INTEGER NOT NULL,
  memory64                  INTEGER NOT NULL,
  features_json             TEXT NOT NULL,
  producers_json            TEXT NOT NULL,
  glue_path                 TEXT,
  glue_json                 TEXT,
  ingested_at               TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS module_versions_sha256 ON module_versions(sha256);
CREATE TABLE IF NOT EXISTS functions (
  version_id              INTEGER NOT NULL REFERENCES module_versions(id) ON DELETE CASCADE,
  func_index              INTEGER NOT NULL,
  is_import               INTEGER NOT NULL,
  import_module           TEXT,
  import_field            TEXT,
  type_signature          TEXT NOT NULL,
  stable_id               TEXT NOT NULL,
  id_tier                 INTEGER NOT NULL,
  norm_hash               TEXT,
  exact_hash              TEXT,
  structural_hash         TEXT,
  minhash                 BLOB,
  histogram               BLOB,
  call_outs_json          TEXT NOT NULL,
  callees_json            TEXT NOT NULL,
  instruction_count       INTEGER NOT NULL,
  body_offset             INTEGER NOT NULL,
  body_size               INTEGER NOT NULL,
  raw_name                TEXT,
  export_names_json       TEXT NOT NULL,
  call_targets_json       TEXT NOT NULL,
  referenced_strings_json TEXT NOT NULL,
  opcodes                 BLOB NOT NULL,
  PRIMARY KEY (version_id, func_index)
);
CREATE TABLE IF NOT EXISTS symbols (
  stable_id      TEXT PRIMARY KEY,
  name           TEXT,
  summary        TEXT,
  type_signature TEXT,
  provenance     TEXT NOT NULL
                 CHECK (provenance IN ('human', 'export', 'oracle', 'diff-carry', 'agent')),
  actor          TEXT NOT NULL,
  confidence     REAL NOT NULL CHECK (confidence >= 0.0 AND confidence <= 1.0),
  locked         INTEGER NOT NULL CHECK (locked IN (0, 1)),
  created_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS evidence (
  id           INTEGER PRIMARY KEY,
  stable_id    TEXT NOT NULL,
  at           TEXT NOT NULL,
  actor        TEXT NOT NULL,
  provenance   TEXT NOT NULL,
  name         TEXT,
  summary      TEXT,
  confidence   REAL,
  accepted     INTEGER NOT NULL,
  reason       TEXT NOT NULL,
  details_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evidence_stable_id ON evidence(stable_id, id);
CREATE TRIGGER IF NOT EXISTS evidence_no_update BEFORE UPDATE ON evidence
BEGIN
  SELECT RAISE(ABORT, 'evidence is append-only');
END;
CREATE TRIGGER IF NOT EXISTS evidence_no_delete BEFORE DELETE ON evidence
BEGIN
  SELECT RAISE(ABORT, 'evidence is append-only');
END;
-- INSERT OR REPLACE deletes the old row without firing DELETE triggers (unless
-- recursive_triggers is on), so an insert over an existing id is refused too.
CREATE TRIGGER IF NOT EXISTS evidence_no_replace BEFORE INSERT ON evidence
WHEN EXISTS (SELECT 1 FROM evidence WHERE id = NEW.id)
BEGIN
  SELECT RAISE(ABORT, 'evidence is append-only');
END;
CREATE TABLE IF NOT EXISTS diffs (
  id           INTEGER PRIMARY KEY,
  from_version INTEGER NOT NULL REFERENCES module_versions(id) ON DELETE CASCADE,
  to_version   INTEGER NOT NULL REFERENCES module_versions(id) ON DELETE CASCADE,
  created_at   TEXT NOT NULL,
  params_json  TEXT NOT NULL,
  report_json  TEXT NOT NULL,
  changelog_md TEXT NOT NULL,
  UNIQUE (from_version, to_version)
);
)sql";

namespace {

// The `functions` columns with an index of their own, named functions_<column>.
constexpr std::string_view kIndexedFunctionColumns[] = {"stable_id", "norm_hash", "exact_hash",
                                                        "structural_hash"};

// One statement per indexed column, made from `pattern` ({0}: the column).
std::string PerIndexedColumn(std::string_view pattern) {
  std::string sql;
  for (std::string_view column : kIndexedFunctionColumns) {
    sql += fmt::format(fmt::runtime(pattern), column);
  }
  return sql;
}

}  // namespace

// Each index's stored SQL is its CREATE INDEX without IF NOT EXISTS, whichever statement
// created it.
const std::string& FunctionIndexSql() {
  static const std::string sql =
      PerIndexedColumn("CREATE INDEX IF NOT EXISTS functions_{0} ON functions({0});\n");
  return sql;
}

const std::string& DropFunctionIndexSql() {
  static const std::string sql = PerIndexedColumn("DROP INDEX functions_{0};\n");
  return sql;
}

namespace {

Result<std::int64_t> CountRows(base::Database& db, std::string_view sql) {
  ASSIGN_OR_RETURN(base::Statement stmt, db.Prepare(sql));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnInt64(0) : 0;
}

Result<std::optional<std::string>> MetaValue(base::Database& db, std::string_view key) {
  ASSIGN_OR_RETURN(base::Statement stmt, db.Prepare("SELECT value FROM meta WHERE key = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, key));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(stmt.ColumnText(0));
}

Status Initialise(base::Database& db, std::string_view project) {
  ASSIGN_OR_RETURN(base::Transaction txn, db.Begin());
  RETURN_IF_ERROR(db.Exec(kSchemaSql));
  RETURN_IF_ERROR(db.Exec(FunctionIndexSql()));
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db.Prepare("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)"));
  const std::string version = std::to_string(kSchemaVersion);
  const std::pair<std::string_view, std::string_view> rows[] = {
      {"schema_version", version}, {"producer", kProducer}, {"project", project}};
  for (const auto& [key, value] : rows) {
    stmt.Reset();
    RETURN_IF_ERROR(stmt.Bind(1, key));
    RETURN_IF_ERROR(stmt.Bind(2, value));
    RETURN_IF_ERROR(stmt.Step());
  }
  return txn.Commit();
}

}  // namespace

Status PrepareDatabase(base::Database& db, bool allow_init, std::string_view project) {
  ASSIGN_OR_RETURN(std::int64_t has_meta, CountRows(db,
                                                    "SELECT count(*) FROM sqlite_schema "
                                                    "WHERE type = 'table' AND name = 'meta'"));
  if (has_meta == 0) {
    ASSIGN_OR_RETURN(std::int64_t tables,
                     CountRows(db,
                               "SELECT count(*) FROM sqlite_schema "
                               "WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"));
    if (tables != 0) {
      return Status::Malformed("not a WARDEN database (it has tables but no meta table)");
    }
    if (!allow_init) return Status::Malformed("not a WARDEN database (the database is empty)");
    // Two processes may both get here; the transaction and IF NOT EXISTS / OR IGNORE make
    // the second a no-op.
    RETURN_IF_ERROR(Initialise(db, project));
  }

  ASSIGN_OR_RETURN(std::optional<std::string> producer, MetaValue(db, "producer"));
  if (!producer.has_value()) {
    return Status::Malformed("not a WARDEN database (meta.producer is missing)");
  }
  if (*producer != kProducer) {
    return Status::Malformed(fmt::format(
        "not a WARDEN database (meta.producer is \"{}\", expected \"{}\")", *producer, kProducer));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> version_text, MetaValue(db, "schema_version"));
  if (!version_text.has_value()) {
    return Status::Malformed("not a WARDEN database (meta.schema_version is missing)");
  }
  int version = 0;
  const char* begin = version_text->data();
  const char* end = begin + version_text->size();
  auto [ptr, ec] = std::from_chars(begin, end, version);
  if (ec != std::errc() || ptr != end || version < 1) {
    return Status::Malformed(
        fmt::format("not a WARDEN database (meta.schema_version \"{}\" is not a positive integer)",
                    *version_text));
  }
  if (version > kSchemaVersion) {
    return Status::Unsupported(
        fmt::format("the database has schema_version {}, newer than this warden supports ({}); "
                    "upgrade warden",
                    version, kSchemaVersion));
  }
  // Applied on every open (docs/warden.md §10.1: no migration runner). When everything exists this
  // writes nothing.
  RETURN_IF_ERROR(db.Exec(kSchemaSql));
  RETURN_IF_ERROR(db.Exec(FunctionIndexSql()));

  ASSIGN_OR_RETURN(std::int64_t fk, CountRows(db, "PRAGMA foreign_keys"));
  if (fk != 1) return Status::Internal("foreign_keys is off after open");
  return Status::Ok();
}

}  // namespace trove::warden::kb::internal

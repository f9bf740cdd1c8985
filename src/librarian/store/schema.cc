#include "librarian/store/schema.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "librarian/store/manifest.h"
#include "librarian/store/store.h"

namespace trove::librarian::store::internal {
namespace {

// Tables. Spans are 1-based inclusive lines and [start_byte, end_byte) bytes.
// chunks holds the FTS columns under their FTS names (name, subwords, doc, body, path) so
// chunk_fts and chunk_tri can be external-content tables over it, kept in step by triggers.
constexpr const char* kCreate = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL,
  mode TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  options TEXT NOT NULL,
  tool_versions TEXT NOT NULL,
  stats TEXT NOT NULL);
CREATE TABLE files(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  sha256 TEXT NOT NULL,
  language TEXT NOT NULL,
  extractor TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  status TEXT NOT NULL,
  parse_error INTEGER NOT NULL,
  stale INTEGER NOT NULL,
  run_id TEXT NOT NULL);
CREATE TABLE symbols(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  parent_id INTEGER REFERENCES symbols(id) ON DELETE CASCADE,
  target_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  qualified_name TEXT NOT NULL,
  kind TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  start_byte INTEGER NOT NULL,
  end_byte INTEGER NOT NULL,
  signature TEXT NOT NULL,
  doc TEXT NOT NULL,
  span_sha256 TEXT NOT NULL,
  parse_error INTEGER NOT NULL,
  end_known INTEGER NOT NULL);
CREATE INDEX symbols_file ON symbols(file_id);
CREATE INDEX symbols_name ON symbols(name, file_id, start_line);
CREATE INDEX symbols_qualified ON symbols(qualified_name, file_id, start_line);
CREATE INDEX symbols_parent ON symbols(parent_id);
CREATE TABLE chunks(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  symbol_id INTEGER REFERENCES symbols(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  qualified_name TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  name TEXT NOT NULL,
  subwords TEXT NOT NULL,
  doc TEXT NOT NULL,
  body TEXT NOT NULL,
  path TEXT NOT NULL);
CREATE INDEX chunks_file ON chunks(file_id);
CREATE INDEX chunks_symbol ON chunks(symbol_id);
CREATE TABLE imports(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  module TEXT NOT NULL,
  line INTEGER NOT NULL);
CREATE INDEX imports_file ON imports(file_id);
CREATE INDEX imports_module ON imports(module);
CREATE TABLE calls(
  id INTEGER PRIMARY KEY,
  file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
  caller_id INTEGER REFERENCES symbols(id) ON DELETE CASCADE,
  callee TEXT NOT NULL,
  line INTEGER NOT NULL);
CREATE INDEX calls_file ON calls(file_id);
CREATE INDEX calls_callee ON calls(callee, file_id, line);
-- symbols_name, symbols_qualified and calls_callee carry the file and line so that picking
-- the first definitions or call sites of a name by path and line reads the index only.
-- symbols_parent, chunks_symbol and calls_caller index the child keys of the ON DELETE CASCADE
-- references to symbols(id): without them every deleted symbol scans those tables (a re-index
-- of a changed file cost O(symbols x rows)), and calls_caller also serves a symbol's callees.
CREATE INDEX calls_caller ON calls(caller_id);

CREATE VIRTUAL TABLE chunk_fts USING fts5(
  name, subwords, doc, body, path,
  content='chunks', content_rowid='id',
  tokenize='unicode61 remove_diacritics 2');
-- No triggers keep chunk_fts (and chunk_tri) in step with chunks: Store::Apply writes their
-- entries itself, one INSERT ... SELECT per batch. A trigger makes every chunk insert a
-- statement transaction, and FTS5 flushes its pending terms to a new segment at every
-- savepoint, so trigger-maintained indexes wrote one tiny segment per chunk (measured: most of
-- a bootstrap's store time).

-- Paths and their identifier sub-words; rowid = files.id, written by the store.
CREATE VIRTUAL TABLE path_fts USING fts5(path, words, tokenize='unicode61 remove_diacritics 2');
)sql";

// Schema 4 (manifest.h): run manifests and content-keyed symbol manifests. Created with a new
// store and added to a schema-3 store by MigrateTo4, which keeps every row of the old tables.
constexpr const char* kCreateManifests = R"sql(
CREATE TABLE run_files(
  run_id TEXT NOT NULL,
  path TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  size INTEGER NOT NULL,
  language TEXT NOT NULL,
  status TEXT NOT NULL,
  PRIMARY KEY(run_id, path)) WITHOUT ROWID;
CREATE INDEX run_files_content ON run_files(path, sha256);
CREATE TABLE content_symbols(
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  target_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  qualified_name TEXT NOT NULL,
  signature TEXT NOT NULL,
  pack_id TEXT NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  start_byte INTEGER NOT NULL,
  end_byte INTEGER NOT NULL,
  span_sha256 TEXT NOT NULL,
  extractor TEXT NOT NULL,
  parse_error INTEGER NOT NULL,
  end_known INTEGER NOT NULL,
  UNIQUE(path, sha256, target_id));
CREATE INDEX content_symbols_pack ON content_symbols(pack_id);
)sql";

// Schema 5 (decision 0063): the append-only evidence ledger (ledger/ledger.h) and stored audit
// reports (audit/audit.h). Created with a new store and added to a schema-3 or -4 store by
// MigrateTo5, which touches no other table. UPDATE is refused always and DELETE unless the
// retention step (ledger::Prune) set meta.ledger_pruning for its own transaction.
constexpr const char* kCreateLedger = R"sql(
CREATE TABLE ledger(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  claim_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  agent TEXT NOT NULL,
  activity TEXT NOT NULL,
  relation TEXT NOT NULL,
  parent_id INTEGER,
  payload TEXT NOT NULL);
CREATE INDEX ledger_kind ON ledger(kind, id);
CREATE INDEX ledger_claim ON ledger(claim_id, id);
CREATE INDEX ledger_time ON ledger(recorded_at, id);
CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
BEGIN SELECT RAISE(ABORT, 'ledger: entries are append-only'); END;
CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
WHEN (SELECT value FROM meta WHERE key = 'ledger_pruning') IS NOT '1'
BEGIN SELECT RAISE(ABORT, 'ledger: entries are append-only'); END;
CREATE TABLE audits(
  id INTEGER PRIMARY KEY,
  audit_type TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  report TEXT NOT NULL);
)sql";

// Schema 6 (decision 0069): stored context packs (packs/packs.h) with their invalidation
// triggers (the files and content hashes each pack was built from) and outcome counters, the
// resolved file graph and the PageRank of files and functions. Created with a new store and
// added to a schema-3, -4 or -5 store by MigrateTo6, which touches no other table.
constexpr const char* kCreatePacks = R"sql(
CREATE TABLE packs(
  pack_id TEXT PRIMARY KEY,
  pack_type TEXT NOT NULL,
  target_id TEXT NOT NULL,
  summary TEXT NOT NULL,
  key_facts TEXT NOT NULL,
  related_files TEXT NOT NULL,
  signal REAL NOT NULL,
  words TEXT NOT NULL,
  version INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  run_id TEXT NOT NULL) WITHOUT ROWID;
CREATE INDEX packs_type ON packs(pack_type);
CREATE TABLE pack_triggers(
  pack_id TEXT NOT NULL REFERENCES packs(pack_id) ON DELETE CASCADE,
  path TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  PRIMARY KEY(pack_id, path)) WITHOUT ROWID;
CREATE INDEX pack_triggers_path ON pack_triggers(path);
CREATE TABLE pack_outcomes(
  pack_id TEXT PRIMARY KEY,
  access_count INTEGER NOT NULL,
  success_count INTEGER NOT NULL,
  failure_count INTEGER NOT NULL,
  last_outcome TEXT NOT NULL,
  updated_at TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE file_edges(
  from_path TEXT NOT NULL,
  to_path TEXT NOT NULL,
  kind TEXT NOT NULL,
  weight REAL NOT NULL,
  PRIMARY KEY(from_path, to_path, kind)) WITHOUT ROWID;
CREATE INDEX file_edges_to ON file_edges(to_path, kind);
CREATE TABLE ranks(target_id TEXT PRIMARY KEY, rank REAL NOT NULL) WITHOUT ROWID;
)sql";

constexpr const char* kCreateTrigram = R"sql(
CREATE VIRTUAL TABLE chunk_tri USING fts5(
  name, path, body, content='chunks', content_rowid='id', tokenize='trigram');
)sql";

Result<bool> TableExists(base::Database& db, const char* name) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1"));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(name)));
  return st.Step();
}

Status DropAll(base::Database& db) {
  // Virtual tables first (their shadow tables go with them), then triggers, indexes, tables.
  std::vector<std::pair<std::string, std::string>> objects;
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT type, name FROM sqlite_master WHERE name NOT LIKE "
                                "'sqlite_%' ORDER BY (sql LIKE 'CREATE VIRTUAL%') DESC"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      objects.emplace_back(st.ColumnText(0), st.ColumnText(1));
    }
  }
  RETURN_IF_ERROR(db.Exec("PRAGMA foreign_keys=OFF"));
  for (const auto& [type, name] : objects) {
    if (type != "table") continue;
    // A shadow table of an already-dropped virtual table is gone; ignore that.
    ASSIGN_OR_RETURN(bool exists, TableExists(db, name.c_str()));
    if (exists) RETURN_IF_ERROR(db.Exec(fmt::format("DROP TABLE \"{}\"", name)));
  }
  return db.Exec("PRAGMA foreign_keys=ON");
}

// Schema 3 -> 4: adds the manifest tables and records the content manifest of every stored
// file, in one transaction; the old tables and their rows are untouched (decision 0054). Runs
// recorded before the migration have no file manifest (diff_runs says so).
Status MigrateTo4(base::Database& db) {
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  RETURN_IF_ERROR(db.Exec(kCreateManifests));
  RETURN_IF_ERROR(RecordContent(db));
  RETURN_IF_ERROR(db.Exec("UPDATE meta SET value = '4' WHERE key = 'schema_version'"));
  return tx.Commit();
}

// Schema 4 -> 5 (decision 0063): adds the ledger and audits tables in one transaction; no other
// table is touched, so every row of a schema-4 store stays.
Status MigrateTo5(base::Database& db) {
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  RETURN_IF_ERROR(db.Exec(kCreateLedger));
  RETURN_IF_ERROR(db.Exec("UPDATE meta SET value = '5' WHERE key = 'schema_version'"));
  return tx.Commit();
}

// Schema 5 -> 6 (decision 0069): adds the stored packs, their triggers and outcomes, the file
// graph and the ranks, in one transaction; no other table is touched. The new tables start
// empty and the next bootstrap fills them.
Status MigrateTo6(base::Database& db) {
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  RETURN_IF_ERROR(db.Exec(kCreatePacks));
  RETURN_IF_ERROR(db.Exec("UPDATE meta SET value = '6' WHERE key = 'schema_version'"));
  return tx.Commit();
}

}  // namespace

Result<SchemaState> EnsureSchema(base::Database& db, bool want_trigram) {
  SchemaState state;
  ASSIGN_OR_RETURN(bool has_meta, TableExists(db, "meta"));
  if (has_meta) {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT value FROM meta WHERE key='schema_version'"));
    ASSIGN_OR_RETURN(bool row, st.Step());
    const std::string version = row ? st.ColumnText(0) : std::string();
    st.Reset();
    // Each step is its own transaction, so kill -9 between them leaves a consistent schema-4
    // store that the next Open migrates on (likewise 4 -> 5 -> 6).
    if (version == "3") {
      RETURN_IF_ERROR(MigrateTo4(db));
      state.migrated = true;
    }
    if (version == "3" || version == "4") {
      RETURN_IF_ERROR(MigrateTo5(db));
      state.migrated = true;
    }
    if (version == "3" || version == "4" || version == "5") {
      RETURN_IF_ERROR(MigrateTo6(db));
      state.migrated = true;
    }
    if (version == "3" || version == "4" || version == "5" ||
        version == std::to_string(kSchemaVersion)) {
      ASSIGN_OR_RETURN(state.trigram, TableExists(db, "chunk_tri"));
      return state;
    }
    state.rebuilt = true;
  } else {
    ASSIGN_OR_RETURN(base::Statement st, db.Prepare("SELECT count(*) FROM sqlite_master"));
    ASSIGN_OR_RETURN(bool row, st.Step());
    state.rebuilt = row && st.ColumnInt64(0) > 0;  // foreign tables without our meta
  }
  if (state.rebuilt) RETURN_IF_ERROR(DropAll(db));
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  RETURN_IF_ERROR(db.Exec(kCreate));
  RETURN_IF_ERROR(db.Exec(kCreateManifests));
  RETURN_IF_ERROR(db.Exec(kCreateLedger));
  RETURN_IF_ERROR(db.Exec(kCreatePacks));
  if (want_trigram) RETURN_IF_ERROR(db.Exec(kCreateTrigram));
  RETURN_IF_ERROR(db.Exec(
      fmt::format("INSERT INTO meta(key, value) VALUES ('schema_version', '{}'), ('trigram', '{}')",
                  kSchemaVersion, want_trigram ? 1 : 0)));
  RETURN_IF_ERROR(tx.Commit());
  state.trigram = want_trigram;
  return state;
}

}  // namespace trove::librarian::store::internal

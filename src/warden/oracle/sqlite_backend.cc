// The SQLite backend of the Oracle store (backend.h): one file, the schema below.
#include <fmt/core.h>

#include <cstdint>

#include "base/sqlite.h"
#include "warden/oracle/backend.h"

namespace trove::warden::oracle {

namespace {

constexpr std::string_view kSchemaSql = R"sql(
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS signatures (
  id                 INTEGER PRIMARY KEY,
  name               TEXT NOT NULL,
  name_norm          TEXT NOT NULL,
  library            TEXT NOT NULL,
  emscripten_version TEXT NOT NULL,
  opt_level          TEXT NOT NULL,
  flags              TEXT NOT NULL,
  source_ref         TEXT NOT NULL,
  exact_hash         TEXT NOT NULL,
  norm_hash          TEXT NOT NULL,
  structural_hash    TEXT NOT NULL,
  minhash            BLOB NOT NULL,
  histogram          BLOB NOT NULL,
  call_targets_json  TEXT NOT NULL,
  type_signature     TEXT NOT NULL,
  instruction_count  INTEGER NOT NULL,
  callees_json       TEXT NOT NULL DEFAULT '[]',
  UNIQUE (exact_hash, name, library, emscripten_version, opt_level, flags)
);
CREATE INDEX IF NOT EXISTS signatures_exact ON signatures(exact_hash);
CREATE INDEX IF NOT EXISTS signatures_norm ON signatures(norm_hash);
CREATE INDEX IF NOT EXISTS signatures_structural ON signatures(structural_hash, type_signature);
CREATE INDEX IF NOT EXISTS signatures_name ON signatures(name_norm);
CREATE TABLE IF NOT EXISTS lsh (
  band   INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  sig_id INTEGER NOT NULL REFERENCES signatures(id) ON DELETE CASCADE,
  PRIMARY KEY (band, bucket, sig_id)
) WITHOUT ROWID;
)sql";

constexpr std::string_view kColumns =
    "id, name, name_norm, library, emscripten_version, opt_level, flags, source_ref, exact_hash, "
    "norm_hash, structural_hash, minhash, histogram, call_targets_json, type_signature, "
    "instruction_count, callees_json";

class SqliteBackend final : public OracleBackend {
 public:
  SqliteBackend(std::string path, std::unique_ptr<base::Database> db)
      : path_(std::move(path)), db_(std::move(db)) {}

  const std::string& target() const override { return path_; }

  Result<std::int64_t> Add(const std::vector<Signature>& signatures) override {
    ASSIGN_OR_RETURN(base::Transaction txn, db_->Begin());
    ASSIGN_OR_RETURN(base::Statement insert,
                     db_->Prepare("INSERT OR IGNORE INTO signatures(name, name_norm, library, "
                                  "emscripten_version, opt_level, flags, source_ref, exact_hash, "
                                  "norm_hash, structural_hash, minhash, histogram, "
                                  "call_targets_json, type_signature, instruction_count, "
                                  "callees_json) "
                                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    ASSIGN_OR_RETURN(
        base::Statement bucket,
        db_->Prepare("INSERT OR IGNORE INTO lsh(band, bucket, sig_id) VALUES (?, ?, ?)"));
    std::int64_t added = 0;
    for (const Signature& s : signatures) {
      insert.Reset();
      const std::string minhash = internal::PackMinHash(s);
      const std::string histogram = internal::PackHistogram(s);
      const std::string calls = internal::CallTargetsJson(s);
      RETURN_IF_ERROR(insert.Bind(1, std::string_view(s.name)));
      RETURN_IF_ERROR(insert.Bind(2, std::string_view(s.name_norm)));
      RETURN_IF_ERROR(insert.Bind(3, std::string_view(s.library)));
      RETURN_IF_ERROR(insert.Bind(4, std::string_view(s.emscripten_version)));
      RETURN_IF_ERROR(insert.Bind(5, std::string_view(s.opt_level)));
      RETURN_IF_ERROR(insert.Bind(6, std::string_view(s.flags)));
      RETURN_IF_ERROR(insert.Bind(7, std::string_view(s.source_ref)));
      RETURN_IF_ERROR(insert.Bind(8, std::string_view(s.exact_hash)));
      RETURN_IF_ERROR(insert.Bind(9, std::string_view(s.norm_hash)));
      RETURN_IF_ERROR(insert.Bind(10, std::string_view(s.structural_hash)));
      RETURN_IF_ERROR(insert.BindBlob(11, minhash));
      RETURN_IF_ERROR(insert.BindBlob(12, histogram));
      RETURN_IF_ERROR(insert.Bind(13, std::string_view(calls)));
      RETURN_IF_ERROR(insert.Bind(14, std::string_view(s.type_signature)));
      RETURN_IF_ERROR(insert.Bind(15, s.instruction_count));
      const std::string callees = internal::CalleesJson(s);
      RETURN_IF_ERROR(insert.Bind(16, std::string_view(callees)));
      RETURN_IF_ERROR(insert.Step().status());
      if (db_->Changes() == 0) continue;  // a duplicate
      ++added;
      if (s.instruction_count < kLshMinInstructions) continue;
      const std::int64_t id = db_->LastInsertRowId();
      for (int band = 0; band < kLshBands; ++band) {
        bucket.Reset();
        RETURN_IF_ERROR(bucket.Bind(1, band));
        RETURN_IF_ERROR(bucket.Bind(2, LshBucket(s.minhash, band)));
        RETURN_IF_ERROR(bucket.Bind(3, id));
        RETURN_IF_ERROR(bucket.Step().status());
      }
    }
    RETURN_IF_ERROR(txn.Commit());
    return added;
  }

  Result<std::vector<std::unique_ptr<Signature>>> Load(std::span<const std::int64_t> ids) override {
    std::vector<std::unique_ptr<Signature>> out;
    out.reserve(ids.size());
    if (load_ == nullptr) {
      ASSIGN_OR_RETURN(
          base::Statement stmt,
          db_->Prepare(fmt::format("SELECT {} FROM signatures WHERE id = ?", kColumns)));
      load_ = std::make_unique<base::Statement>(std::move(stmt));
    }
    base::Statement& s = *load_;
    for (const std::int64_t id : ids) {
      s.Reset();
      RETURN_IF_ERROR(s.Bind(1, id));
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) {
        s.Reset();
        return Status::NotFound(fmt::format("{}: no signature {}", path_, id));
      }
      auto sig = std::make_unique<Signature>();
      sig->id = s.ColumnInt64(0);
      sig->name = s.ColumnText(1);
      sig->name_norm = s.ColumnText(2);
      sig->library = s.ColumnText(3);
      sig->emscripten_version = s.ColumnText(4);
      sig->opt_level = s.ColumnText(5);
      sig->flags = s.ColumnText(6);
      sig->source_ref = s.ColumnText(7);
      sig->exact_hash = s.ColumnText(8);
      sig->norm_hash = s.ColumnText(9);
      sig->structural_hash = s.ColumnText(10);
      internal::UnpackMinHash(s.ColumnBlobView(11), *sig);
      internal::UnpackHistogram(s.ColumnBlobView(12), *sig);
      internal::ParseCallTargets(s.ColumnTextView(13), *sig);
      sig->type_signature = s.ColumnText(14);
      sig->instruction_count = static_cast<std::uint32_t>(s.ColumnInt64(15));
      internal::ParseCallees(s.ColumnTextView(16), *sig);
      out.push_back(std::move(sig));
    }
    s.Reset();  // no read transaction stays open between lookups
    return out;
  }

  Result<std::vector<std::int64_t>> IdsByExact(std::string_view exact_hash) override {
    return Ids("SELECT id FROM signatures WHERE exact_hash = ? ORDER BY id", {exact_hash});
  }
  Result<std::vector<std::int64_t>> IdsByNorm(std::string_view norm_hash) override {
    return Ids("SELECT id FROM signatures WHERE norm_hash = ? ORDER BY id", {norm_hash});
  }
  Result<std::vector<std::int64_t>> IdsByStructural(std::string_view structural_hash,
                                                    std::string_view type_signature) override {
    return Ids(
        "SELECT id FROM signatures WHERE structural_hash = ? AND type_signature = ? ORDER BY id",
        {structural_hash, type_signature});
  }
  Result<std::vector<std::int64_t>> IdsByName(std::string_view name_norm) override {
    return Ids("SELECT id FROM signatures WHERE name_norm = ? ORDER BY id", {name_norm});
  }

  Result<std::vector<std::int64_t>> IdsByBucket(int band, std::int64_t bucket,
                                                std::int64_t limit) override {
    std::vector<std::int64_t> ids;
    ASSIGN_OR_RETURN(base::Statement s,
                     db_->Prepare("SELECT sig_id FROM lsh WHERE band = ? AND bucket = ? "
                                  "ORDER BY sig_id LIMIT ?"));
    RETURN_IF_ERROR(s.Bind(1, band));
    RETURN_IF_ERROR(s.Bind(2, bucket));
    RETURN_IF_ERROR(s.Bind(3, limit));  // SQLite's LIMIT: a negative value means no limit
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      ids.push_back(s.ColumnInt64(0));
    }
    return ids;
  }

  Status ScanKeys(const std::function<void(const KeyRow&)>& fn) override {
    ASSIGN_OR_RETURN(base::Statement s,
                     db_->Prepare("SELECT id, exact_hash, norm_hash, structural_hash, "
                                  "type_signature, name_norm FROM signatures ORDER BY id"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      fn(KeyRow{.id = s.ColumnInt64(0),
                .exact_hash = s.ColumnTextView(1),
                .norm_hash = s.ColumnTextView(2),
                .structural_hash = s.ColumnTextView(3),
                .type_signature = s.ColumnTextView(4),
                .name_norm = s.ColumnTextView(5)});
    }
    return Status::Ok();
  }

  Status ScanLsh(const std::function<void(std::int64_t, std::int64_t, std::int64_t)>& fn) override {
    ASSIGN_OR_RETURN(base::Statement s, db_->Prepare("SELECT band, bucket, sig_id FROM lsh "
                                                     "ORDER BY band, bucket, sig_id"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      fn(s.ColumnInt64(0), s.ColumnInt64(1), s.ColumnInt64(2));
    }
    return Status::Ok();
  }

  Result<std::int64_t> Count() override {
    ASSIGN_OR_RETURN(base::Statement stmt, db_->Prepare("SELECT count(*) FROM signatures"));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    return row ? stmt.ColumnInt64(0) : 0;
  }

  Result<StoreStats> Stats() override {
    StoreStats st;
    ASSIGN_OR_RETURN(base::Statement s,
                     db_->Prepare("SELECT count(*), count(DISTINCT library) FROM signatures"));
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) {
      st.signatures = s.ColumnInt64(0);
      st.libraries = s.ColumnInt64(1);
    }
    ASSIGN_OR_RETURN(base::Statement v, db_->Prepare("SELECT DISTINCT emscripten_version FROM "
                                                     "signatures ORDER BY 1"));
    while (true) {
      ASSIGN_OR_RETURN(bool r, v.Step());
      if (!r) break;
      st.emscripten_versions.push_back(v.ColumnText(0));
    }
    return st;
  }

  Result<std::map<std::string, std::set<std::string>>> NameLibraries() override {
    std::map<std::string, std::set<std::string>> out;
    ASSIGN_OR_RETURN(base::Statement s,
                     db_->Prepare("SELECT DISTINCT name_norm, library FROM signatures"));
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      out[s.ColumnText(0)].insert(s.ColumnText(1));
    }
    return out;
  }

 private:
  Result<std::vector<std::int64_t>> Ids(std::string_view sql,
                                        const std::vector<std::string_view>& text_args) {
    std::vector<std::int64_t> ids;
    ASSIGN_OR_RETURN(base::Statement s, db_->Prepare(sql));
    for (std::size_t i = 0; i < text_args.size(); ++i) {
      RETURN_IF_ERROR(s.Bind(static_cast<int>(i + 1), text_args[i]));
    }
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      ids.push_back(s.ColumnInt64(0));
    }
    return ids;
  }

  const std::string path_;
  const std::unique_ptr<base::Database> db_;
  // Load's statement, prepared once (null until the first Load).
  std::unique_ptr<base::Statement> load_;
};

}  // namespace

Result<std::unique_ptr<OracleBackend>> OpenSqliteBackend(const std::string& path, bool create) {
  base::DatabaseOptions options;
  options.create_if_missing = create;
  Result<std::unique_ptr<base::Database>> db = base::Database::Open(path, options);
  if (!db.ok()) {
    if (!create) {
      return Status::NotFound(fmt::format(
          "no Oracle store at {} (build one with 'warden oracle build' or pass --store)", path));
    }
    return Status(db.status()).WithContext(fmt::format("oracle store {}", path));
  }
  base::Database& d = **db;
  // Refuse a file that holds other tables (e.g. a WARDEN KB given by mistake).
  {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     d.Prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND "
                               "name NOT IN ('meta', 'signatures', 'lsh')"));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row && stmt.ColumnInt64(0) != 0) {
      return Status::Malformed(fmt::format("{}: not a WARDEN Oracle store", path));
    }
  }
  {
    ASSIGN_OR_RETURN(base::Transaction txn, d.Begin());
    RETURN_IF_ERROR(d.Exec(kSchemaSql));
    ASSIGN_OR_RETURN(base::Statement stmt,
                     d.Prepare("INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)"));
    RETURN_IF_ERROR(stmt.Bind(1, std::string_view("oracle_schema_version")));
    RETURN_IF_ERROR(stmt.Bind(2, std::string_view(std::to_string(kStoreSchemaVersion))));
    RETURN_IF_ERROR(stmt.Step().status());
    RETURN_IF_ERROR(txn.Commit());
  }
  {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     d.Prepare("SELECT value FROM meta WHERE key = 'oracle_schema_version'"));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    const std::string version = row ? stmt.ColumnText(0) : std::string();
    if (version == "1") {
      // Schema 1 had no callee names: add the column (empty lists; call-graph propagation
      // finds nothing from such signatures until the store is rebuilt).
      ASSIGN_OR_RETURN(base::Transaction txn, d.Begin());
      RETURN_IF_ERROR(
          d.Exec("ALTER TABLE signatures ADD COLUMN callees_json TEXT NOT NULL DEFAULT '[]';"
                 "CREATE INDEX IF NOT EXISTS signatures_name ON signatures(name_norm);"));
      ASSIGN_OR_RETURN(base::Statement up,
                       d.Prepare("UPDATE meta SET value = ? WHERE key = 'oracle_schema_version'"));
      RETURN_IF_ERROR(up.Bind(1, std::string_view(std::to_string(kStoreSchemaVersion))));
      RETURN_IF_ERROR(up.Step().status());
      RETURN_IF_ERROR(txn.Commit());
    } else if (version != std::to_string(kStoreSchemaVersion)) {
      return Status::Unsupported(fmt::format("{}: Oracle store of another schema version", path));
    }
  }
  return std::unique_ptr<OracleBackend>(new SqliteBackend(path, std::move(db).value()));
}

}  // namespace trove::warden::oracle

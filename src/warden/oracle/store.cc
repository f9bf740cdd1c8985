#include "warden/oracle/store.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>

#include "base/sqlite.h"

namespace trove::warden::oracle {

namespace {

using Json = nlohmann::json;

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

template <typename T, std::size_t N>
std::string PackLe(const std::array<T, N>& values) {
  std::string out(N * sizeof(T), '\0');
  for (std::size_t i = 0; i < N; ++i) {
    const auto v = static_cast<std::uint64_t>(values[i]);
    for (std::size_t b = 0; b < sizeof(T); ++b) {
      out[i * sizeof(T) + b] = static_cast<char>((v >> (8 * b)) & 0xff);
    }
  }
  return out;
}

template <typename T, std::size_t N>
std::array<T, N> UnpackLe(std::string_view bytes) {
  std::array<T, N> out{};
  if (bytes.size() != N * sizeof(T)) return out;
  for (std::size_t i = 0; i < N; ++i) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < sizeof(T); ++b) {
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i * sizeof(T) + b]))
           << (8 * b);
    }
    out[i] = static_cast<T>(v);
  }
  return out;
}

std::uint64_t Mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace

std::int64_t LshBucket(const std::array<std::uint64_t, kb::kMinHashValues>& minhash, int band) {
  std::uint64_t h = Mix(0x4f5241434c450000ULL + static_cast<std::uint64_t>(band));  // "ORACLE"
  for (int r = 0; r < kLshRows; ++r) {
    h = Mix(h ^ minhash[static_cast<std::size_t>(band * kLshRows + r)]);
  }
  return static_cast<std::int64_t>(h);
}

OracleStore::OracleStore(std::string path, std::unique_ptr<base::Database> db)
    : path_(std::move(path)), db_(std::move(db)) {}

OracleStore::~OracleStore() = default;

Result<std::unique_ptr<OracleStore>> OracleStore::Open(const std::string& path, bool create) {
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
  return std::unique_ptr<OracleStore>(new OracleStore(path, std::move(db).value()));
}

Result<std::int64_t> OracleStore::Add(const std::vector<Signature>& signatures) {
  index_.reset();  // the index would miss the new rows
  ASSIGN_OR_RETURN(base::Transaction txn, db_->Begin());
  ASSIGN_OR_RETURN(
      base::Statement insert,
      db_->Prepare("INSERT OR IGNORE INTO signatures(name, name_norm, library, emscripten_version, "
                   "opt_level, flags, source_ref, exact_hash, norm_hash, structural_hash, minhash, "
                   "histogram, call_targets_json, type_signature, instruction_count, callees_json) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  ASSIGN_OR_RETURN(
      base::Statement bucket,
      db_->Prepare("INSERT OR IGNORE INTO lsh(band, bucket, sig_id) VALUES (?, ?, ?)"));
  std::int64_t added = 0;
  for (const Signature& s : signatures) {
    insert.Reset();
    const std::string minhash = PackLe(s.minhash);
    const std::string histogram = PackLe(s.histogram);
    const std::string calls = Json(s.call_targets).dump();
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
    const std::string callees =
        Json(s.callees).dump(-1, ' ', false, Json::error_handler_t::replace);
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

Result<const Signature*> OracleStore::Load(std::int64_t id) {
  if (auto it = cache_.find(id); it != cache_.end()) return it->second.get();
  if (load_ == nullptr) {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db_->Prepare(fmt::format("SELECT {} FROM signatures WHERE id = ?", kColumns)));
    load_ = std::make_unique<base::Statement>(std::move(stmt));
  }
  base::Statement& s = *load_;
  s.Reset();
  RETURN_IF_ERROR(s.Bind(1, id));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return Status::NotFound(fmt::format("{}: no signature {}", path_, id));
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
  sig->minhash = UnpackLe<std::uint64_t, kb::kMinHashValues>(s.ColumnBlobView(11));
  sig->histogram = UnpackLe<std::uint32_t, kb::kHistogramClasses>(s.ColumnBlobView(12));
  const Json calls = Json::parse(s.ColumnTextView(13), nullptr, false);
  if (calls.is_array()) {
    for (const Json& c : calls) {
      if (c.is_string()) sig->call_targets.push_back(c.get<std::string>());
    }
  }
  sig->type_signature = s.ColumnText(14);
  sig->instruction_count = static_cast<std::uint32_t>(s.ColumnInt64(15));
  const Json callees = Json::parse(s.ColumnTextView(16), nullptr, false);
  if (callees.is_array()) {
    for (const Json& c : callees) sig->callees.push_back(c.is_string() ? c.get<std::string>() : "");
  }
  s.Reset();  // no read transaction stays open between lookups
  const Signature* out = sig.get();
  cache_.emplace(id, std::move(sig));
  return out;
}

Status OracleStore::Preload() {
  auto index = std::make_unique<Index>();
  {
    ASSIGN_OR_RETURN(base::Statement s,
                     db_->Prepare("SELECT id, exact_hash, norm_hash, structural_hash, "
                                  "type_signature, name_norm FROM signatures ORDER BY id"));
    std::string key;
    for (;;) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      const std::int64_t id = s.ColumnInt64(0);
      index->exact[std::string(s.ColumnTextView(1))].push_back(id);
      index->norm[std::string(s.ColumnTextView(2))].push_back(id);
      key.assign(s.ColumnTextView(3));
      key.push_back('\0');
      key.append(s.ColumnTextView(4));
      index->structural[key].push_back(id);
      index->name[std::string(s.ColumnTextView(5))].push_back(id);
    }
  }
  {
    ASSIGN_OR_RETURN(base::Statement s, db_->Prepare("SELECT band, bucket, sig_id FROM lsh "
                                                     "ORDER BY band, bucket, sig_id"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      const std::int64_t band = s.ColumnInt64(0);
      if (band < 0 || band >= kLshBands) continue;  // the SQL path never asks for it either
      index->lsh[static_cast<std::size_t>(band)][s.ColumnInt64(1)].push_back(s.ColumnInt64(2));
    }
  }
  index_ = std::move(index);
  return Status::Ok();
}

Result<std::vector<const Signature*>> OracleStore::LoadAll(const std::vector<std::int64_t>* ids,
                                                           std::size_t limit) {
  std::vector<const Signature*> out;
  if (ids == nullptr) return out;
  const std::size_t n = std::min(ids->size(), limit);
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(const Signature* sig, Load((*ids)[i]));
    out.push_back(sig);
  }
  return out;
}

namespace {

const std::vector<std::int64_t>* Find(
    const std::unordered_map<std::string, std::vector<std::int64_t>>& map, std::string_view key) {
  auto it = map.find(std::string(key));
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace

Result<std::vector<const Signature*>> OracleStore::Query(
    std::string_view sql, const std::vector<std::string_view>& text_args) {
  std::vector<std::int64_t> ids;
  {
    ASSIGN_OR_RETURN(base::Statement s, db_->Prepare(sql));
    for (std::size_t i = 0; i < text_args.size(); ++i) {
      RETURN_IF_ERROR(s.Bind(static_cast<int>(i + 1), text_args[i]));
    }
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      ids.push_back(s.ColumnInt64(0));
    }
  }
  return LoadAll(&ids, ids.size());
}

Result<std::vector<const Signature*>> OracleStore::ByExact(std::string_view exact_hash) {
  if (index_) return LoadAll(Find(index_->exact, exact_hash), SIZE_MAX);
  return Query("SELECT id FROM signatures WHERE exact_hash = ? ORDER BY id", {exact_hash});
}

Result<std::vector<const Signature*>> OracleStore::ByNorm(std::string_view norm_hash) {
  if (index_) return LoadAll(Find(index_->norm, norm_hash), SIZE_MAX);
  return Query("SELECT id FROM signatures WHERE norm_hash = ? ORDER BY id", {norm_hash});
}

Result<std::vector<const Signature*>> OracleStore::ByStructural(std::string_view structural_hash,
                                                                std::string_view type_signature) {
  if (index_) {
    std::string key(structural_hash);
    key.push_back('\0');
    key.append(type_signature);
    return LoadAll(Find(index_->structural, key), SIZE_MAX);
  }
  return Query(
      "SELECT id FROM signatures WHERE structural_hash = ? AND type_signature = ? ORDER BY id",
      {structural_hash, type_signature});
}

Result<std::vector<const Signature*>> OracleStore::ByName(std::string_view name_norm) {
  if (index_) return LoadAll(Find(index_->name, name_norm), SIZE_MAX);
  return Query("SELECT id FROM signatures WHERE name_norm = ? ORDER BY id", {name_norm});
}

Result<std::vector<const Signature*>> OracleStore::ByBucket(int band, std::int64_t bucket,
                                                            int limit) {
  // SQLite's LIMIT: a negative value means no limit.
  const std::int64_t sql_limit = static_cast<std::int64_t>(limit) + 1;
  const std::size_t want = sql_limit < 0 ? SIZE_MAX : static_cast<std::size_t>(sql_limit);
  if (index_) {
    if (band < 0 || band >= kLshBands) return std::vector<const Signature*>();
    const auto& map = index_->lsh[static_cast<std::size_t>(band)];
    auto it = map.find(bucket);
    return LoadAll(it == map.end() ? nullptr : &it->second, want);
  }
  std::vector<std::int64_t> ids;
  {
    ASSIGN_OR_RETURN(base::Statement s,
                     db_->Prepare("SELECT sig_id FROM lsh WHERE band = ? AND bucket = ? "
                                  "ORDER BY sig_id LIMIT ?"));
    RETURN_IF_ERROR(s.Bind(1, band));
    RETURN_IF_ERROR(s.Bind(2, bucket));
    RETURN_IF_ERROR(s.Bind(3, limit + 1));
    while (true) {
      ASSIGN_OR_RETURN(bool row, s.Step());
      if (!row) break;
      ids.push_back(s.ColumnInt64(0));
    }
  }
  return LoadAll(&ids, ids.size());
}

Result<std::int64_t> OracleStore::Count() {
  ASSIGN_OR_RETURN(base::Statement stmt, db_->Prepare("SELECT count(*) FROM signatures"));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnInt64(0) : 0;
}

Result<StoreStats> OracleStore::Stats() {
  StoreStats st;
  ASSIGN_OR_RETURN(base::Statement s,
                   db_->Prepare("SELECT count(*), count(DISTINCT library) FROM signatures"));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (row) {
    st.signatures = s.ColumnInt64(0);
    st.libraries = s.ColumnInt64(1);
  }
  ASSIGN_OR_RETURN(base::Statement v,
                   db_->Prepare("SELECT DISTINCT emscripten_version FROM signatures ORDER BY 1"));
  while (true) {
    ASSIGN_OR_RETURN(bool r, v.Step());
    if (!r) break;
    st.emscripten_versions.push_back(v.ColumnText(0));
  }
  return st;
}

Result<std::map<std::string, std::set<std::string>>> OracleStore::NameLibraries() {
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

}  // namespace trove::warden::oracle

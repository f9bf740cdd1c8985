// SqliteKbStore: the SQL of a KB kept in one SQLite file (moved here from kb.cc, diffs.cc and
// oracle_meta.cc without change of behaviour; docs/decisions/0082-warden-kb-store.md).
#include "warden/kb/sqlite/kb_sqlite.h"

#include <dirent.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/env.h"
#include "base/sqlite.h"
#include "warden/kb/columns.h"
#include "warden/kb/finisher.h"
#include "warden/kb/kb.h"
#include "warden/kb/row_readers.h"
#include "warden/kb/schema.h"

namespace trove::warden::kb {

namespace {

using internal::kDiffColumns;
using internal::kFunctionColumns;
using internal::kVersionColumns;
using internal::ReadDiff;
using internal::ReadFunction;
using internal::ReadVersion;

Status BindOptional(base::Statement& stmt, int index, const std::optional<std::string>& value) {
  return value.has_value() ? stmt.Bind(index, std::string_view(*value)) : stmt.Bind(index, nullptr);
}

Status BindOptional(base::Statement& stmt, int index,
                    const std::optional<std::string_view>& value) {
  return value.has_value() ? stmt.Bind(index, *value) : stmt.Bind(index, nullptr);
}

std::optional<std::string> OptionalText(const base::Statement& stmt, int column) {
  if (stmt.ColumnIsNull(column)) return std::nullopt;
  return stmt.ColumnText(column);
}

std::string DefaultProject(const std::string& path) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  if (ec) abs = path;
  abs = abs.lexically_normal();
  std::filesystem::path dir = abs.parent_path();
  if (dir.filename() == ".warden") dir = dir.parent_path();
  std::string name = dir.filename().string();
  return name.empty() ? "warden" : name;
}

// A stored row count as a vector's reserve: only a hint, so a corrupt count cannot ask for

// The busy timeout of every Kb connection (Kb::Open).
constexpr int kBusyTimeoutMs = 5000;

// Sets the journal mode and returns the mode the database is in afterwards ("delete",
// "wal"): SQLite returns the old mode when it cannot change it.
Result<std::string> SetJournalMode(base::Database& db, std::string_view mode) {
  ASSIGN_OR_RETURN(base::Statement stmt, db.Prepare(fmt::format("PRAGMA journal_mode={}", mode)));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Status::Internal("journal_mode returned no row");
  return stmt.ColumnText(0);
}

// Returns a descriptor this process has open on the file at `path` (SQLite's, for the KB's
// database file), or -1: found by device and inode among /proc/self/fd (Linux). The caller
// must not close it.
int FindOpenDescriptor(const std::string& path) {
  struct stat want {};
  if (::stat(path.c_str(), &want) != 0) return -1;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (const dirent* entry = ::readdir(dir)) {
    int fd = -1;
    const char* name = entry->d_name;
    const auto [end, ec] = std::from_chars(name, name + std::strlen(name), fd);
    if (ec != std::errc() || *end != '\0' || fd == ::dirfd(dir)) continue;
    struct stat got {};
    if (::fstat(fd, &got) == 0 && S_ISREG(got.st_mode) && got.st_dev == want.st_dev &&
        got.st_ino == want.st_ino) {
      found = fd;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

// The first version stored into a KB that holds none is written with a rollback journal
// instead of the WAL when this connection is the only one open on the file
// (docs/decisions/0041-warden-first-version-journal.md): its pages (35 MB for ffmpeg-core)
// are then written once, into the database file, where the WAL would write them twice (the
// WAL, then the checkpoint's copy) with two more fsyncs. The switch never waits: with another
// connection open it fails at once and the version goes through the WAL. Returns whether the
// database is now in rollback mode.
Result<bool> EnterRollbackForFirstVersion(base::Database& db) {
  {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db.Prepare("SELECT EXISTS (SELECT 1 FROM module_versions)"));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row || stmt.ColumnInt64(0) != 0) return false;
  }
  RETURN_IF_ERROR(db.Exec("PRAGMA busy_timeout=0"));
  Result<std::string> mode = SetJournalMode(db, "DELETE");
  RETURN_IF_ERROR(db.Exec(fmt::format("PRAGMA busy_timeout={}", kBusyTimeoutMs)));
  // SQLITE_BUSY (another connection is open) is not an error here: the WAL path follows.
  if (!mode.ok()) return false;
  return *mode == "delete";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Open, lifecycle

SqliteKbStore::SqliteKbStore(std::string path, std::unique_ptr<base::Database> db)
    : path_(std::move(path)), db_(std::move(db)) {}

SqliteKbStore::~SqliteKbStore() {
  scan_symbols_.reset();
  scan_evidence_.reset();
  finisher_.reset();
  if (rollback_pending_) (void)SetJournalMode(*db_, "WAL");
}

Result<std::unique_ptr<SqliteKbStore>> SqliteKbStore::Open(base::Env& env, const std::string& path,
                                                           const KbOptions& options) {
  const bool memory = path == ":memory:";
  if (!memory && !env.FileExists(path) && !options.create_if_missing) {
    return Status::NotFound(fmt::format("open {}: no such file", path));
  }
  // 64 KiB pages for a new KB: a version writes tens of MB of rows whose opcode blobs span
  // many pages, and larger pages mean fewer overflow pages, WAL frames and page allocations
  // (docs/decisions/0021-warden-perf2-ingest.md). An existing KB keeps its page size.
  ASSIGN_OR_RETURN(std::unique_ptr<base::Database> db,
                   base::Database::Open(
                       path, base::DatabaseOptions{.busy_timeout_ms = kBusyTimeoutMs,
                                                   .create_if_missing = options.create_if_missing,
                                                   .page_size = 65536}));
  const std::string project = options.project.empty() ? DefaultProject(path) : options.project;
  RETURN_IF_ERROR(internal::PrepareDatabase(*db, options.create_if_missing, project)
                      .WithContext(fmt::format("open {}", path)));
  return std::unique_ptr<SqliteKbStore>(new SqliteKbStore(path, std::move(db)));
}

Result<std::string> SqliteKbStore::Project() {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT value FROM meta WHERE key = 'project'"));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnText(0) : std::string();
}

Result<bool> SqliteKbStore::PrepareToStore() {
  if (path_ == ":memory:" || path_.empty()) return false;
  ASSIGN_OR_RETURN(const bool rollback, EnterRollbackForFirstVersion(*db_));
  rollback_pending_ = rollback_pending_ || rollback;
  return rollback;
}

Result<bool> SqliteKbStore::RemoveCreated(const DatabaseFiles& before) {
  if (before.db || path_ == ":memory:" || path_.empty()) return false;
  const std::string& path = path_;
  base::Database& db = *db_;
  finisher_.reset();
  // Nothing may write to the file once it is unlinked: the destructor's switch back to WAL
  // would (it writes the header), so it runs only when the KB is kept.
  rollback_pending_ = false;
  RETURN_IF_ERROR(db.Exec("PRAGMA busy_timeout=0"));
  const auto keep = [this, &db]() -> Result<bool> {
    (void)db.Exec(fmt::format("PRAGMA busy_timeout={}", kBusyTimeoutMs));
    rollback_pending_ = true;  // the destructor sets WAL mode again
    return false;
  };
  // Leaving WAL mode needs every other connection closed (decision 0041); in rollback mode an
  // exclusive lock then needs every other connection idle, and holds off new readers. A read
  // first: the connection learns the file's mode only when it reads (another connection that
  // opened it since PrepareToStore set WAL again), and would otherwise take "DELETE" for
  // done.
  if (!db.Exec("SELECT count(*) FROM meta").ok()) return keep();
  Result<std::string> mode = SetJournalMode(db, "DELETE");
  if (!mode.ok() || *mode != "delete") return keep();
  if (!db.Exec("BEGIN EXCLUSIVE").ok()) return keep();
  // Still in rollback mode under the lock: nobody set WAL between the switch and the lock.
  Result<std::string> locked_mode = SetJournalMode(db, "DELETE");
  if (!locked_mode.ok() || *locked_mode != "delete") {
    (void)db.Exec("ROLLBACK");
    return keep();
  }
  bool empty = false;
  {
    Result<base::Statement> stored = db.Prepare(
        "SELECT (SELECT count(*) FROM module_versions) + (SELECT count(*) FROM symbols) + "
        "(SELECT count(*) FROM evidence) + (SELECT count(*) FROM diffs)");
    if (stored.ok()) {
      Result<bool> row = stored->Step();
      empty = row.ok() && *row && stored->ColumnInt64(0) == 0;
    }
  }
  if (!empty) {
    (void)db.Exec("ROLLBACK");
    return keep();
  }
  const std::pair<const char*, bool> files[] = {
      {"", before.db}, {"-wal", before.wal}, {"-shm", before.shm}, {"-journal", before.journal}};
  Status removed;
  for (const auto& [suffix, existed] : files) {
    const std::string file = path + suffix;
    if (!existed && ::unlink(file.c_str()) != 0 && errno != ENOENT && removed.ok()) {
      removed = Status::Io(fmt::format("remove {}: {}", file, std::strerror(errno)));
    }
  }
  (void)db.Exec("ROLLBACK");
  RETURN_IF_ERROR(removed);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Write transactions

class SqliteKbStore::WriteTxn final : public KbWriteTxn {
 public:
  // A gate write: one BEGIN IMMEDIATE transaction.
  static Result<std::unique_ptr<KbWriteTxn>> Begin(SqliteKbStore& store, WriteKind kind) {
    std::unique_ptr<WriteTxn> txn(new WriteTxn(store));
    if (kind == WriteKind::kStoreVersion) RETURN_IF_ERROR(txn->PrepareVersion());
    ASSIGN_OR_RETURN(base::Transaction t, store.db_->Begin());
    txn->txn_.emplace(std::move(t));
    return std::unique_ptr<KbWriteTxn>(std::move(txn));
  }

  // On every way out: the transaction rolls back unless committed; a finisher without a commit
  // stops; a KB in rollback mode goes back to WAL (on failure the next Open sets it, as Open
  // always does).
  ~WriteTxn() override {
    label_taken_.reset();
    txn_.reset();
    if (!version_) return;
    if (!committed_) store_.finisher_.reset();
    if (rollback_ || store_.rollback_pending_) (void)SetJournalMode(*store_.db_, "WAL");
    store_.rollback_pending_ = false;
  }

  Result<std::optional<std::string>> LatestTypeSignature(std::string_view stable_id) override {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db().Prepare("SELECT type_signature FROM functions WHERE stable_id = ? "
                                  "ORDER BY version_id DESC LIMIT 1"));
    RETURN_IF_ERROR(stmt.Bind(1, stable_id));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return std::optional<std::string>();
    return std::optional<std::string>(stmt.ColumnText(0));
  }

  // The transaction holds SQLite's write lock (BEGIN IMMEDIATE): E cannot change before it
  // ends.
  Result<std::optional<ExistingSymbol>> ReadSymbolForUpdate(std::string_view stable_id) override {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db().Prepare("SELECT name, summary, provenance, actor, confidence, locked "
                                  "FROM symbols WHERE stable_id = ?"));
    RETURN_IF_ERROR(stmt.Bind(1, stable_id));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return std::optional<ExistingSymbol>();
    ExistingSymbol e;
    if (!stmt.ColumnIsNull(0)) e.name = stmt.ColumnText(0);
    if (!stmt.ColumnIsNull(1)) e.summary = stmt.ColumnText(1);
    e.provenance = stmt.ColumnText(2);
    e.actor = stmt.ColumnText(3);
    e.confidence = stmt.ColumnDouble(4);
    e.locked = stmt.ColumnInt64(5) != 0;
    return std::optional<ExistingSymbol>(std::move(e));
  }

  Result<bool> WriteSymbol(std::string_view sql, const SymbolRow& row) override {
    ASSIGN_OR_RETURN(base::Statement stmt, db().Prepare(sql));
    RETURN_IF_ERROR(stmt.Bind(1, row.stable_id));
    RETURN_IF_ERROR(BindOptional(stmt, 2, row.name));
    RETURN_IF_ERROR(BindOptional(stmt, 3, row.summary));
    RETURN_IF_ERROR(BindOptional(stmt, 4, row.type_signature));
    RETURN_IF_ERROR(stmt.Bind(5, row.provenance));
    RETURN_IF_ERROR(stmt.Bind(6, row.actor));
    RETURN_IF_ERROR(stmt.Bind(7, row.confidence));
    RETURN_IF_ERROR(stmt.Bind(8, row.locked ? 1 : 0));
    RETURN_IF_ERROR(stmt.Bind(9, row.now));
    RETURN_IF_ERROR(stmt.Step());
    return db().Changes() != 0;
  }

  Status AppendEvidence(const EvidenceRow& row) override {
    ASSIGN_OR_RETURN(base::Statement ev,
                     db().Prepare("INSERT INTO evidence(stable_id, at, actor, provenance, name, "
                                  "summary, confidence, accepted, reason, details_json) "
                                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    RETURN_IF_ERROR(ev.Bind(1, row.stable_id));
    RETURN_IF_ERROR(ev.Bind(2, row.at));
    RETURN_IF_ERROR(ev.Bind(3, row.actor));
    RETURN_IF_ERROR(ev.Bind(4, row.provenance));
    RETURN_IF_ERROR(BindOptional(ev, 5, row.name));
    RETURN_IF_ERROR(BindOptional(ev, 6, row.summary));
    RETURN_IF_ERROR(row.confidence.has_value() ? ev.Bind(7, *row.confidence) : ev.Bind(7, nullptr));
    RETURN_IF_ERROR(ev.Bind(8, row.accepted ? 1 : 0));
    RETURN_IF_ERROR(ev.Bind(9, row.reason));
    RETURN_IF_ERROR(ev.Bind(10, row.details_json));
    return ev.Step().status();
  }

  Result<std::optional<std::pair<std::int64_t, std::string>>> VersionBySha(
      std::string_view sha256) override {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db().Prepare("SELECT id, label FROM module_versions WHERE sha256 = ? "
                                  "ORDER BY id LIMIT 1"));
    RETURN_IF_ERROR(stmt.Bind(1, sha256));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return std::optional<std::pair<std::int64_t, std::string>>();
    return std::optional<std::pair<std::int64_t, std::string>>(
        std::pair(stmt.ColumnInt64(0), stmt.ColumnText(1)));
  }

  Result<bool> LabelTaken(std::string_view label) override {
    if (!label_taken_.has_value()) {
      ASSIGN_OR_RETURN(base::Statement stmt,
                       db().Prepare("SELECT 1 FROM module_versions WHERE label = ?"));
      label_taken_.emplace(std::move(stmt));
    }
    label_taken_->Reset();
    RETURN_IF_ERROR(label_taken_->Bind(1, label));
    return label_taken_->Step();
  }

  Result<std::int64_t> CountVersions() override {
    ASSIGN_OR_RETURN(base::Statement count, db().Prepare("SELECT count(*) FROM module_versions"));
    ASSIGN_OR_RETURN(bool row, count.Step());
    return row ? count.ColumnInt64(0) : 0;
  }

  Result<std::int64_t> InsertVersion(const VersionRecord& version, std::string_view label,
                                     std::string_view now) override {
    ASSIGN_OR_RETURN(
        base::Statement stmt,
        db().Prepare("INSERT INTO module_versions(label, wasm_path, sha256, size, imported_count, "
                     "defined_count, emscripten_version, emscripten_version_source, "
                     "shared_memory, memory_count, memory64, features_json, producers_json, "
                     "glue_path, glue_json, ingested_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    RETURN_IF_ERROR(stmt.Bind(1, label));
    RETURN_IF_ERROR(stmt.Bind(2, std::string_view(version.wasm_path)));
    RETURN_IF_ERROR(stmt.Bind(3, std::string_view(version.sha256)));
    RETURN_IF_ERROR(stmt.Bind(4, version.size));
    RETURN_IF_ERROR(stmt.Bind(5, version.imported_count));
    RETURN_IF_ERROR(stmt.Bind(6, version.defined_count));
    RETURN_IF_ERROR(BindOptional(stmt, 7, version.emscripten_version));
    RETURN_IF_ERROR(BindOptional(stmt, 8, version.emscripten_version_source));
    RETURN_IF_ERROR(stmt.Bind(9, version.shared_memory ? 1 : 0));
    RETURN_IF_ERROR(stmt.Bind(10, version.memory_count));
    RETURN_IF_ERROR(stmt.Bind(11, version.memory64 ? 1 : 0));
    RETURN_IF_ERROR(stmt.Bind(12, std::string_view(version.features_json)));
    RETURN_IF_ERROR(stmt.Bind(13, std::string_view(version.producers_json)));
    RETURN_IF_ERROR(BindOptional(stmt, 14, version.glue_path));
    RETURN_IF_ERROR(BindOptional(stmt, 15, version.glue_json));
    RETURN_IF_ERROR(stmt.Bind(16, now));
    RETURN_IF_ERROR(stmt.Step());
    return db().LastInsertRowId();
  }

  Status InsertFunctions(std::int64_t version_id, std::span<const FunctionRecord> functions,
                         const std::function<void(std::size_t)>& on_row) override {
    // The first version into an empty KB builds the four stable_id and hash indexes after its
    // rows (CREATE INDEX sorts the keys once), instead of inserting 4 random keys per row: on
    // ffmpeg-core ~0.11 s of index inserts become ~0.05 s. The drop is part of this
    // transaction, so on any way out without the commit, or a crash, the indexes are as they
    // were. Only with the rollback journal, that is with no other connection open
    // (docs/decisions/0042-warden-index-after-rows.md).
    if (rollback_) RETURN_IF_ERROR(db().Exec(internal::DropFunctionIndexSql()));
    {
      ASSIGN_OR_RETURN(
          base::Statement stmt,
          db().Prepare(fmt::format("INSERT INTO functions(version_id, {}) VALUES (?1, ?2, ?3, "
                                   "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                                   "?17, ?18, ?19, ?20, ?21, ?22, ?23)",
                                   kFunctionColumns)));
      std::size_t done = 0;
      internal::ColumnEncoder encoder(functions);
      // The record's own strings and its encoded columns are bound without a copy: `functions`
      // outlives `stmt`; an encoder slot is refilled only after Ready has moved past its row,
      // and the next row's values are bound over it before the statement steps again (the
      // statement, finalized after the encoder is gone, reads no bound value then).
      for (const FunctionRecord& f : functions) {
        const internal::EncodedColumns& columns = encoder.Ready(done);
        stmt.Reset();
        RETURN_IF_ERROR(stmt.Bind(1, version_id));
        RETURN_IF_ERROR(stmt.Bind(2, f.func_index));
        RETURN_IF_ERROR(stmt.Bind(3, f.is_import ? 1 : 0));
        if (f.is_import) {
          RETURN_IF_ERROR(stmt.BindUncopiedText(4, f.import_module));
          RETURN_IF_ERROR(stmt.BindUncopiedText(5, f.import_field));
        } else {
          RETURN_IF_ERROR(stmt.Bind(4, nullptr));
          RETURN_IF_ERROR(stmt.Bind(5, nullptr));
        }
        RETURN_IF_ERROR(stmt.BindUncopiedText(6, f.type_signature));
        RETURN_IF_ERROR(stmt.BindUncopiedText(7, f.stable_id));
        RETURN_IF_ERROR(stmt.Bind(8, f.id_tier));
        if (f.is_import) {
          for (int i = 9; i <= 13; ++i) RETURN_IF_ERROR(stmt.Bind(i, nullptr));
        } else {
          RETURN_IF_ERROR(stmt.BindUncopiedText(9, f.norm_hash));
          RETURN_IF_ERROR(stmt.BindUncopiedText(10, f.exact_hash));
          RETURN_IF_ERROR(stmt.BindUncopiedText(11, f.structural_hash));
          RETURN_IF_ERROR(stmt.BindUncopiedBlob(12, columns.minhash));
          RETURN_IF_ERROR(stmt.BindUncopiedBlob(13, columns.histogram));
        }
        RETURN_IF_ERROR(stmt.BindUncopiedText(14, columns.call_outs));
        RETURN_IF_ERROR(stmt.BindUncopiedText(15, columns.callees));
        RETURN_IF_ERROR(stmt.Bind(16, f.instruction_count));
        RETURN_IF_ERROR(stmt.Bind(17, f.body_offset));
        RETURN_IF_ERROR(stmt.Bind(18, f.body_size));
        RETURN_IF_ERROR(f.raw_name.has_value() ? stmt.BindUncopiedText(19, *f.raw_name)
                                               : stmt.Bind(19, nullptr));
        RETURN_IF_ERROR(stmt.BindUncopiedText(20, columns.export_names));
        RETURN_IF_ERROR(stmt.BindUncopiedText(21, columns.call_targets));
        RETURN_IF_ERROR(stmt.BindUncopiedText(22, columns.referenced_strings));
        RETURN_IF_ERROR(stmt.BindUncopiedBlob(23, f.opcodes));
        // The context is formatted only on failure (not 22k times per ingest on the serial
        // path).
        if (Result<bool> stepped = stmt.Step(); !stepped.ok()) {
          return std::move(stepped).status().WithContext(
              fmt::format("store version: function {}", f.func_index));
        }
        ++done;
        if (on_row) on_row(done);
      }
    }
    // Before the seeds: the gate looks symbols' functions up by stable_id.
    if (rollback_) RETURN_IF_ERROR(db().Exec(internal::FunctionIndexSql()));
    return Status::Ok();
  }

  Status Commit() override {
    if (!txn_.has_value()) return Status::Internal("commit: no open transaction");
    RETURN_IF_ERROR(txn_->Commit());
    txn_.reset();
    committed_ = true;
    if (version_ && store_.finisher_ != nullptr) store_.finisher_->Committed();
    return Status::Ok();
  }

 private:
  explicit WriteTxn(SqliteKbStore& store) : store_(store) {}
  base::Database& db() { return *store_.db_; }

  // Before a version's transaction: the page cache, the first version's rollback journal and
  // the finisher.
  Status PrepareVersion() {
    // A version is one large transaction (37 MB for ffmpeg-core). An 8 MiB page cache lets
    // SQLite spill the table and overflow pages, which are written once and never touched
    // again, to the WAL during the inserts and reuse their buffers, while the index pages stay
    // cached: the WAL holds the same frames as with a cache that keeps the whole transaction
    // (64 MiB before), with ~6,500 fewer page faults and less CPU
    // (docs/decisions/0029-warden-perf4.md).
    RETURN_IF_ERROR(db().Exec("PRAGMA cache_size=-8192"));
    // The WAL's writeback while the rows are written, and its checkpoint once they are
    // committed, run beside the caller (finisher.h); without a commit the finisher stops.
    store_.finisher_.reset();
    const std::string& path = store_.path_;
    const bool file = path != ":memory:" && !path.empty();
    ASSIGN_OR_RETURN(rollback_, file ? EnterRollbackForFirstVersion(db()) : false);
    version_ = true;
    if (file && !rollback_) store_.finisher_ = std::make_unique<VersionFinisher>(path);
    // With the rollback journal, the pages SQLite spills into the database file during the
    // transaction are written back beside it, so that the commit's fsync has little left.
    if (const int fd = rollback_ ? FindOpenDescriptor(path) : -1; fd >= 0) {
      store_.finisher_ = std::make_unique<VersionFinisher>(path, VersionFinisher::DatabaseFile{fd});
    }
    return Status::Ok();
  }

  SqliteKbStore& store_;
  bool version_ = false;   // a StoreVersion transaction (PrepareVersion ran)
  bool rollback_ = false;  // written with the rollback journal
  bool committed_ = false;
  std::optional<base::Statement> label_taken_;
  std::optional<base::Transaction> txn_;  // last: rolled back first
};

Result<std::unique_ptr<KbWriteTxn>> SqliteKbStore::BeginWrite(WriteKind kind) {
  return WriteTxn::Begin(*this, kind);
}

// ---------------------------------------------------------------------------------------------
// Versions

Result<std::vector<VersionInfo>> SqliteKbStore::ListVersions() {
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare(fmt::format("SELECT {} FROM module_versions ORDER BY id", kVersionColumns)));
  std::vector<VersionInfo> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    out.push_back(ReadVersion(stmt));
  }
  return out;
}

Result<std::optional<VersionInfo>> SqliteKbStore::GetVersion(std::int64_t version_id) {
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare(fmt::format("SELECT {} FROM module_versions WHERE id = ?", kVersionColumns)));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<VersionInfo>();
  return std::optional<VersionInfo>(ReadVersion(stmt));
}

Result<bool> SqliteKbStore::VersionExists(std::int64_t version_id) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT 1 FROM module_versions WHERE id = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  return stmt.Step();
}

Result<std::optional<std::int64_t>> SqliteKbStore::LatestVersionId() {
  ASSIGN_OR_RETURN(base::Statement stmt, db_->Prepare("SELECT max(id) FROM module_versions"));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row || stmt.ColumnIsNull(0)) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(stmt.ColumnInt64(0));
}

Result<std::optional<std::int64_t>> SqliteKbStore::VersionIdByLabel(std::string_view label) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT id FROM module_versions WHERE label = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, label));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(stmt.ColumnInt64(0));
}

Result<std::optional<std::string>> SqliteKbStore::VersionProducersJson(std::int64_t version_id) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT producers_json FROM module_versions WHERE id = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(stmt.ColumnText(0));
}

Result<bool> SqliteKbStore::SetEmscriptenVersion(std::int64_t version_id, std::string_view version,
                                                 std::string_view source) {
  ASSIGN_OR_RETURN(base::Transaction txn, db_->Begin());
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("UPDATE module_versions SET emscripten_version = ?, "
                                "emscripten_version_source = ? WHERE id = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, version));
  RETURN_IF_ERROR(stmt.Bind(2, source));
  RETURN_IF_ERROR(stmt.Bind(3, version_id));
  RETURN_IF_ERROR(stmt.Step().status());
  if (db_->Changes() == 0) return false;
  RETURN_IF_ERROR(txn.Commit());
  return true;
}

// ---------------------------------------------------------------------------------------------
// Functions

Result<CoverageCounts> SqliteKbStore::CoverageOf(std::int64_t version_id) {
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare("SELECT count(*), count(s.name), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'human'), 0), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'export'), 0), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'oracle'), 0), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'diff-carry'), 0), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'agent'), 0), "
                   "coalesce(sum(s.locked = 1), 0), "
                   "avg(CASE WHEN s.name IS NOT NULL THEN s.confidence END), "
                   // IsPlaceholderName in SQL: "sub_" and one or more hex digits.
                   "coalesce(sum(s.name GLOB 'sub_[0-9a-fA-F]*' AND "
                   "NOT substr(s.name, 5) GLOB '*[^0-9a-fA-F]*'), 0) "
                   "FROM functions f LEFT JOIN symbols s ON s.stable_id = f.stable_id "
                   "WHERE f.version_id = ? AND f.is_import = 0"));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  CoverageCounts c;
  if (!row) return c;
  c.defined = stmt.ColumnInt64(0);
  c.named = stmt.ColumnInt64(1);
  c.human = stmt.ColumnInt64(2);
  c.export_ = stmt.ColumnInt64(3);
  c.oracle = stmt.ColumnInt64(4);
  c.diff_carry = stmt.ColumnInt64(5);
  c.agent = stmt.ColumnInt64(6);
  c.locked = stmt.ColumnInt64(7);
  if (!stmt.ColumnIsNull(8)) c.mean_confidence = stmt.ColumnDouble(8);
  c.placeholder = stmt.ColumnInt64(9);
  return c;
}

Result<std::vector<FunctionRow>> SqliteKbStore::ListFunctionRows(const FunctionFilter& filter) {
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare("SELECT f.func_index, f.stable_id, f.type_signature, s.name, s.provenance, "
                   "s.confidence, s.locked, f.is_import "
                   "FROM functions f LEFT JOIN symbols s ON s.stable_id = f.stable_id "
                   "WHERE f.version_id = ?1 AND (?2 OR f.is_import = 0) AND f.func_index > ?3 "
                   "AND (?4 = 0 OR s.name IS NULL) "
                   "AND (?5 IS NULL OR s.name IS NULL OR s.confidence < ?5) "
                   "AND (?6 IS NULL OR (s.name IS NOT NULL AND s.provenance = ?6)) "
                   "ORDER BY f.func_index LIMIT ?7"));
  RETURN_IF_ERROR(stmt.Bind(1, filter.version_id));
  RETURN_IF_ERROR(stmt.Bind(2, filter.include_imports ? 1 : 0));
  RETURN_IF_ERROR(stmt.Bind(3, filter.after));
  RETURN_IF_ERROR(stmt.Bind(4, filter.unnamed_only ? 1 : 0));
  RETURN_IF_ERROR(filter.below.has_value() ? stmt.Bind(5, *filter.below) : stmt.Bind(5, nullptr));
  RETURN_IF_ERROR(BindOptional(stmt, 6, filter.provenance));
  RETURN_IF_ERROR(stmt.Bind(7, filter.limit.has_value() ? *filter.limit : -1));
  std::vector<FunctionRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    FunctionRow r;
    r.index = static_cast<std::uint32_t>(stmt.ColumnInt64(0));
    r.stable_id = stmt.ColumnText(1);
    r.type = OptionalText(stmt, 2);
    r.name = OptionalText(stmt, 3);
    if (r.name.has_value()) {
      r.provenance = stmt.ColumnText(4);
      r.confidence = stmt.ColumnDouble(5);
      r.locked = stmt.ColumnInt64(6) != 0;
    }
    r.is_import = stmt.ColumnInt64(7) != 0;
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::optional<FunctionRecord>> SqliteKbStore::GetFunction(std::int64_t version_id,
                                                                 std::uint32_t func_index) {
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare(fmt::format("SELECT {} FROM functions WHERE version_id = ? AND func_index = ?",
                               kFunctionColumns)));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  RETURN_IF_ERROR(stmt.Bind(2, func_index));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<FunctionRecord>();
  return std::optional<FunctionRecord>(ReadFunction(stmt));
}

Result<std::vector<FunctionRecord>> SqliteKbStore::FunctionRecords(std::int64_t version_id,
                                                                   std::size_t reserve) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare(fmt::format("SELECT {} FROM functions WHERE version_id = ? "
                                            "ORDER BY func_index",
                                            kFunctionColumns)));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  std::vector<FunctionRecord> out;
  out.reserve(reserve);
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    out.push_back(ReadFunction(stmt));
  }
  return out;
}

Result<AnnotatedFunctions> SqliteKbStore::DefinedFunctionsForDiff(std::int64_t version_id,
                                                                  std::size_t reserve) {
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare(fmt::format("SELECT {} FROM functions f LEFT JOIN symbols s ON s.stable_id = "
                               "f.stable_id WHERE f.version_id = ? AND f.is_import = 0 "
                               "ORDER BY f.func_index",
                               kDiffColumns)));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  AnnotatedFunctions out;
  out.records.reserve(reserve);
  out.symbols.reserve(reserve);
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    internal::ReadDiffFunction(stmt, out);
  }
  return out;
}

Result<std::vector<std::uint32_t>> SqliteKbStore::Callers(std::int64_t version_id,
                                                          std::uint32_t func_index) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT DISTINCT f.func_index FROM functions f, "
                                "json_each(f.callees_json) j "
                                "WHERE f.version_id = ? AND j.value = ? ORDER BY f.func_index"));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  RETURN_IF_ERROR(stmt.Bind(2, func_index));
  std::vector<std::uint32_t> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    out.push_back(static_cast<std::uint32_t>(stmt.ColumnInt64(0)));
  }
  return out;
}

// Collects (index, stable_id) rows of a query with the version as ?1 and `arg` as ?2.
Result<FunctionMatches> SqliteKbStore::Matches(std::string_view sql, std::int64_t version_id,
                                               std::string_view arg) {
  ASSIGN_OR_RETURN(base::Statement stmt, db_->Prepare(sql));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  RETURN_IF_ERROR(stmt.Bind(2, arg));
  FunctionMatches out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    out.emplace_back(static_cast<std::uint32_t>(stmt.ColumnInt64(0)), stmt.ColumnText(1));
  }
  return out;
}

Result<FunctionMatches> SqliteKbStore::FunctionsByIndex(std::int64_t version_id,
                                                        std::uint32_t func_index) {
  return Matches(
      "SELECT func_index, stable_id FROM functions WHERE version_id = ?1 AND func_index = ?2",
      version_id, std::to_string(func_index));
}

Result<FunctionMatches> SqliteKbStore::FunctionsByStableIdPrefix(std::int64_t version_id,
                                                                 std::string_view hex_prefix) {
  return Matches(
      "SELECT func_index, stable_id FROM functions "
      "WHERE version_id = ?1 AND stable_id GLOB ?2 ORDER BY func_index",
      version_id, fmt::format("w1:{}*", hex_prefix));
}

Result<FunctionMatches> SqliteKbStore::FunctionsByStableId(std::int64_t version_id,
                                                           std::string_view stable_id) {
  return Matches(
      "SELECT func_index, stable_id FROM functions "
      "WHERE version_id = ?1 AND stable_id = ?2 ORDER BY func_index",
      version_id, stable_id);
}

Result<FunctionMatches> SqliteKbStore::FunctionsBySymbolName(std::int64_t version_id,
                                                             std::string_view name) {
  return Matches(
      "SELECT f.func_index, f.stable_id FROM functions f "
      "JOIN symbols s ON s.stable_id = f.stable_id "
      "WHERE f.version_id = ?1 AND s.name = ?2 ORDER BY f.func_index",
      version_id, name);
}

Result<FunctionMatches> SqliteKbStore::FunctionsByRawName(std::int64_t version_id,
                                                          std::string_view name) {
  return Matches(
      "SELECT func_index, stable_id FROM functions "
      "WHERE version_id = ?1 AND raw_name = ?2 ORDER BY func_index",
      version_id, name);
}

// ---------------------------------------------------------------------------------------------
// Symbols and evidence

Result<std::optional<SymbolRecord>> SqliteKbStore::GetSymbolRow(std::string_view stable_id) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT name, summary, type_signature, provenance, actor, "
                                "confidence, locked, created_at, updated_at "
                                "FROM symbols WHERE stable_id = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, stable_id));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<SymbolRecord>();
  SymbolRecord s;
  s.stable_id = std::string(stable_id);
  s.name = OptionalText(stmt, 0);
  s.summary = OptionalText(stmt, 1);
  s.type_signature = OptionalText(stmt, 2);
  s.provenance = stmt.ColumnText(3);
  s.actor = stmt.ColumnText(4);
  s.confidence = stmt.ColumnDouble(5);
  s.locked = stmt.ColumnInt64(6) != 0;
  s.created_at = stmt.ColumnText(7);
  s.updated_at = stmt.ColumnText(8);
  return std::optional<SymbolRecord>(std::move(s));
}

Result<std::vector<EvidenceEntry>> SqliteKbStore::Evidence(std::string_view stable_id) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT id, at, actor, provenance, name, summary, confidence, "
                                "accepted, reason, details_json FROM evidence "
                                "WHERE stable_id = ? ORDER BY id"));
  RETURN_IF_ERROR(stmt.Bind(1, stable_id));
  std::vector<EvidenceEntry> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    EvidenceEntry e;
    e.id = stmt.ColumnInt64(0);
    e.at = stmt.ColumnText(1);
    e.actor = stmt.ColumnText(2);
    e.provenance = stmt.ColumnText(3);
    e.name = OptionalText(stmt, 4);
    e.summary = OptionalText(stmt, 5);
    if (!stmt.ColumnIsNull(6)) e.confidence = stmt.ColumnDouble(6);
    e.accepted = stmt.ColumnInt64(7) != 0;
    e.reason = stmt.ColumnText(8);
    e.details_json = stmt.ColumnText(9);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<SymbolRecord>> SqliteKbStore::ScanSymbols() {
  if (scan_symbols_ == nullptr) {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db_->Prepare("SELECT stable_id, name, summary, type_signature, provenance, "
                                  "actor, confidence, locked, created_at, updated_at "
                                  "FROM symbols ORDER BY stable_id"));
    scan_symbols_ = std::make_unique<base::Statement>(std::move(stmt));
  }
  base::Statement& stmt = *scan_symbols_;
  stmt.Reset();
  std::vector<SymbolRecord> out;
  for (;;) {
    Result<bool> row = stmt.Step();
    if (!row.ok()) {
      stmt.Reset();
      return std::move(row).status();
    }
    if (!*row) break;
    SymbolRecord s;
    s.stable_id = stmt.ColumnText(0);
    s.name = OptionalText(stmt, 1);
    s.summary = OptionalText(stmt, 2);
    s.type_signature = OptionalText(stmt, 3);
    s.provenance = stmt.ColumnText(4);
    s.actor = stmt.ColumnText(5);
    s.confidence = stmt.ColumnDouble(6);
    s.locked = stmt.ColumnInt64(7) != 0;
    s.created_at = stmt.ColumnText(8);
    s.updated_at = stmt.ColumnText(9);
    out.push_back(std::move(s));
  }
  stmt.Reset();
  return out;
}

Result<std::vector<ScannedEvidence>> SqliteKbStore::ScanEvidence(std::int64_t after_id,
                                                                 std::size_t limit) {
  if (scan_evidence_ == nullptr) {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db_->Prepare("SELECT stable_id, id, at, actor, provenance, name, summary, "
                                  "confidence, accepted, reason, details_json FROM evidence "
                                  "WHERE id > ? ORDER BY id"));
    scan_evidence_ = std::make_unique<base::Statement>(std::move(stmt));
  }
  base::Statement& stmt = *scan_evidence_;
  stmt.Reset();
  RETURN_IF_ERROR(stmt.Bind(1, after_id));
  std::vector<ScannedEvidence> out;
  while (out.size() < limit) {
    Result<bool> row = stmt.Step();
    if (!row.ok()) {
      stmt.Reset();
      return std::move(row).status();
    }
    if (!*row) break;
    ScannedEvidence& e = out.emplace_back();
    e.stable_id = stmt.ColumnText(0);
    e.entry.id = stmt.ColumnInt64(1);
    e.entry.at = stmt.ColumnText(2);
    e.entry.actor = stmt.ColumnText(3);
    e.entry.provenance = stmt.ColumnText(4);
    e.entry.name = OptionalText(stmt, 5);
    e.entry.summary = OptionalText(stmt, 6);
    if (!stmt.ColumnIsNull(7)) e.entry.confidence = stmt.ColumnDouble(7);
    e.entry.accepted = stmt.ColumnInt64(8) != 0;
    e.entry.reason = stmt.ColumnText(9);
    e.entry.details_json = stmt.ColumnText(10);
  }
  stmt.Reset();
  return out;
}

// ---------------------------------------------------------------------------------------------
// Diffs

Result<std::int64_t> SqliteKbStore::StoreDiff(std::int64_t from_version, std::int64_t to_version,
                                              std::string_view created_at,
                                              std::string_view params_json,
                                              std::string_view report_json,
                                              std::string_view changelog_md) {
  ASSIGN_OR_RETURN(base::Transaction txn, db_->Begin());
  for (const std::int64_t version_id : {from_version, to_version}) {
    ASSIGN_OR_RETURN(const bool exists, VersionExists(version_id));
    if (!exists) return Status::NotFound(fmt::format("unknown version_id {}", version_id));
  }
  {
    ASSIGN_OR_RETURN(base::Statement del, db_->Prepare("DELETE FROM diffs WHERE from_version = ? "
                                                       "AND to_version = ?"));
    RETURN_IF_ERROR(del.Bind(1, from_version));
    RETURN_IF_ERROR(del.Bind(2, to_version));
    ASSIGN_OR_RETURN(bool row, del.Step());
    (void)row;
  }
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare("INSERT INTO diffs (from_version, to_version, created_at, "
                   "params_json, report_json, changelog_md) VALUES (?, ?, ?, ?, ?, ?)"));
  RETURN_IF_ERROR(stmt.Bind(1, from_version));
  RETURN_IF_ERROR(stmt.Bind(2, to_version));
  RETURN_IF_ERROR(stmt.Bind(3, created_at));
  RETURN_IF_ERROR(stmt.BindUncopiedText(4, params_json));
  RETURN_IF_ERROR(stmt.BindUncopiedText(5, report_json));
  RETURN_IF_ERROR(stmt.BindUncopiedText(6, changelog_md));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  (void)row;
  const std::int64_t id = db_->LastInsertRowId();
  RETURN_IF_ERROR(txn.Commit());
  return id;
}

Result<std::optional<DiffRecord>> SqliteKbStore::GetDiff(std::int64_t from_version,
                                                         std::int64_t to_version) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT id, from_version, to_version, created_at, params_json, "
                                "report_json, changelog_md FROM diffs WHERE from_version = ? AND "
                                "to_version = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, from_version));
  RETURN_IF_ERROR(stmt.Bind(2, to_version));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<DiffRecord>();
  return std::optional<DiffRecord>(ReadDiff(stmt, true));
}

Result<std::vector<DiffRecord>> SqliteKbStore::ListDiffs() {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT id, from_version, to_version, created_at, params_json "
                                "FROM diffs ORDER BY from_version, to_version"));
  std::vector<DiffRecord> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    out.push_back(ReadDiff(stmt, false));
  }
  return out;
}

}  // namespace trove::warden::kb

// SqliteKbStore's side of copying a KB (stored_rows.h; docs/decisions/0091-warden-kb-migrate.md):
// scans in one read transaction, a restore in one BEGIN IMMEDIATE transaction.
#include <fmt/core.h>

#include <memory>
#include <optional>

#include "base/sqlite.h"
#include "warden/kb/sqlite/kb_sqlite.h"
#include "warden/kb/stored_rows_sql.h"

namespace trove::warden::kb {

namespace {

Result<std::int64_t> Count(base::Database& db, KbTable table) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db.Prepare(fmt::format("SELECT count(*) FROM {}", SpecOf(table).name)));
  ASSIGN_OR_RETURN(const bool row, stmt.Step());
  return row ? stmt.ColumnInt64(0) : 0;
}

// A deferred transaction made a read snapshot by its first read (WAL: the readers of one
// transaction see one commit).
class SqliteSnapshot final : public KbSnapshot {
 public:
  static Result<std::unique_ptr<KbSnapshot>> Begin(base::Database& db) {
    RETURN_IF_ERROR(db.Exec("BEGIN DEFERRED"));
    std::unique_ptr<SqliteSnapshot> snapshot(new SqliteSnapshot(db));
    RETURN_IF_ERROR(db.Exec("SELECT count(*) FROM meta"));
    return std::unique_ptr<KbSnapshot>(std::move(snapshot));
  }
  ~SqliteSnapshot() override { (void)db_.Exec("ROLLBACK"); }

 private:
  explicit SqliteSnapshot(base::Database& db) : db_(db) {}
  base::Database& db_;
};

class SqliteRestoreTxn final : public KbRestoreTxn {
 public:
  SqliteRestoreTxn(base::Database& db, base::Transaction txn) : db_(db), txn_(std::move(txn)) {}

  Status RestoreRows(KbTable table, std::span<const StoredRow> rows) override {
    if (table == KbTable::kSymbols) {
      return Status::InvalidArgument("restore: symbols are written by RestoreSymbols only");
    }
    return internal::InsertStoredRows(db_, SpecOf(table), rows);
  }

  Status RestoreSymbols(std::string_view sql, std::span<const StoredRow> rows) override {
    if (rows.empty()) return Status::Ok();
    const TableSpec& spec = SpecOf(KbTable::kSymbols);
    ASSIGN_OR_RETURN(base::Statement stmt, db_.Prepare(sql));
    for (const StoredRow& row : rows) {
      stmt.Reset();
      RETURN_IF_ERROR(internal::BindStoredRow(stmt, spec, row, 1));
      if (Result<bool> done = stmt.Step(); !done.ok()) {
        return std::move(done).status().WithContext(
            fmt::format("restore symbols at {}", internal::KeyOfRow(spec, row)));
      }
    }
    return Status::Ok();
  }

  // INTEGER PRIMARY KEY hands out max(id) + 1 by itself.
  Status ResetIdentities() override { return Status::Ok(); }

  Result<std::int64_t> CountRows(KbTable table) override { return Count(db_, table); }

  Status Commit() override {
    if (!txn_.has_value()) return Status::Internal("restore: no open transaction");
    RETURN_IF_ERROR(txn_->Commit());
    txn_.reset();
    return Status::Ok();
  }

 private:
  base::Database& db_;
  std::optional<base::Transaction> txn_;
};

}  // namespace

Result<std::unique_ptr<KbSnapshot>> SqliteKbStore::BeginSnapshot() {
  return SqliteSnapshot::Begin(*db_);
}

Status SqliteKbStore::ScanRows(KbTable table, std::size_t batch, const RowBatchFn& on_batch) {
  return internal::ScanStoredRows(*db_, SpecOf(table), batch, on_batch);
}

Result<std::int64_t> SqliteKbStore::CountRows(KbTable table) { return Count(*db_, table); }

Result<std::unique_ptr<KbRestoreTxn>> SqliteKbStore::BeginRestore() {
  ASSIGN_OR_RETURN(base::Transaction txn, db_->Begin());
  RETURN_IF_ERROR(internal::RequireEmpty([this](KbTable t) { return Count(*db_, t); }));
  return std::unique_ptr<KbRestoreTxn>(new SqliteRestoreTxn(*db_, std::move(txn)));
}

}  // namespace trove::warden::kb

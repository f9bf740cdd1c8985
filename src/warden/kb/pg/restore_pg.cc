// PgKbStore's side of copying a KB (stored_rows.h; docs/decisions/0091-warden-kb-migrate.md):
// scans in one REPEATABLE READ transaction; a restore in one transaction that holds off every
// other writer of the KB's tables, then moves the identity sequences past the copied ids.
#include <fmt/core.h>

#include <memory>
#include <optional>

#include "base/pg.h"
#include "warden/kb/pg/kb_pg.h"
#include "warden/kb/stored_rows_sql.h"

namespace trove::warden::kb {

namespace {

namespace pg = base::pg;

Result<std::int64_t> Count(pg::Connection& conn, KbTable table) {
  ASSIGN_OR_RETURN(pg::Statement stmt,
                   conn.Prepare(fmt::format("SELECT count(*) FROM {}", SpecOf(table).name)));
  ASSIGN_OR_RETURN(const bool row, stmt.Step());
  return row ? stmt.ColumnInt64(0) : 0;
}

// PostgreSQL text cannot hold U+0000 (and libpq would cut a text parameter at it): a row with
// one is refused, naming where it is, rather than stored changed.
Status CheckNoNul(const TableSpec& spec, std::span<const StoredRow> rows) {
  for (const StoredRow& row : rows) {
    for (std::size_t i = 0; i < row.size() && i < spec.columns.size(); ++i) {
      if (spec.columns[i].kind != ColumnKind::kText) continue;
      const auto* text = std::get_if<std::string>(&row[i]);
      if (text != nullptr && text->find('\0') != std::string::npos) {
        return Status::InvalidArgument(
            fmt::format("{} ({}): {} holds U+0000, which PostgreSQL text cannot store", spec.name,
                        internal::KeyOfRow(spec, row), spec.columns[i].name));
      }
    }
  }
  return Status::Ok();
}

class PgSnapshot final : public KbSnapshot {
 public:
  explicit PgSnapshot(pg::Transaction txn) : txn_(std::move(txn)) {}

 private:
  pg::Transaction txn_;  // rolled back when destroyed: the snapshot only read
};

class PgRestoreTxn final : public KbRestoreTxn {
 public:
  PgRestoreTxn(pg::Connection& conn, pg::Transaction txn) : conn_(conn), txn_(std::move(txn)) {}

  Status RestoreRows(KbTable table, std::span<const StoredRow> rows) override {
    if (table == KbTable::kSymbols) {
      return Status::InvalidArgument("restore: symbols are written by RestoreSymbols only");
    }
    const TableSpec& spec = SpecOf(table);
    RETURN_IF_ERROR(CheckNoNul(spec, rows));
    return internal::InsertStoredRows(conn_, spec, rows);
  }

  Status RestoreSymbols(std::string_view sql, std::span<const StoredRow> rows) override {
    const TableSpec& spec = SpecOf(KbTable::kSymbols);
    RETURN_IF_ERROR(CheckNoNul(spec, rows));
    for (const StoredRow& row : rows) {
      ASSIGN_OR_RETURN(pg::Statement stmt, conn_.Prepare(sql));
      RETURN_IF_ERROR(internal::BindStoredRow(stmt, spec, row, 1));
      if (Result<std::int64_t> done = stmt.Run(); !done.ok()) {
        return std::move(done).status().WithContext(
            fmt::format("restore symbols at {}", internal::KeyOfRow(spec, row)));
      }
    }
    return Status::Ok();
  }

  // An identity BY DEFAULT takes explicit ids without moving its sequence: set it to the
  // largest id (the next id is max + 1), or back to 1 unused for an empty table.
  Status ResetIdentities() override {
    for (const KbTable table : kKbTables) {
      const TableSpec& spec = SpecOf(table);
      if (!spec.generated_id) continue;
      ASSIGN_OR_RETURN(
          pg::Statement stmt,
          conn_.Prepare(fmt::format("SELECT setval(pg_get_serial_sequence('{0}', 'id'), "
                                    "coalesce(max(id), 1), max(id) IS NOT NULL) FROM {0}",
                                    spec.name)));
      RETURN_IF_ERROR(stmt.Step().status().WithContext(fmt::format("reset {} ids", spec.name)));
    }
    return Status::Ok();
  }

  Result<std::int64_t> CountRows(KbTable table) override { return Count(conn_, table); }

  Status Commit() override {
    if (!txn_.has_value()) return Status::Internal("restore: no open transaction");
    RETURN_IF_ERROR(txn_->Commit());
    txn_.reset();
    return Status::Ok();
  }

 private:
  pg::Connection& conn_;
  std::optional<pg::Transaction> txn_;
};

}  // namespace

Result<std::unique_ptr<KbSnapshot>> PgKbStore::BeginSnapshot() {
  ASSIGN_OR_RETURN(pg::Transaction txn, conn_->Begin(pg::Isolation::kRepeatableRead));
  return std::unique_ptr<KbSnapshot>(new PgSnapshot(std::move(txn)));
}

Status PgKbStore::ScanRows(KbTable table, std::size_t batch, const RowBatchFn& on_batch) {
  return internal::ScanStoredRows(*conn_, SpecOf(table), batch, on_batch);
}

Result<std::int64_t> PgKbStore::CountRows(KbTable table) { return Count(*conn_, table); }

Result<std::unique_ptr<KbRestoreTxn>> PgKbStore::BeginRestore() {
  ASSIGN_OR_RETURN(pg::Transaction txn, conn_->Begin(pg::Isolation::kReadCommitted));
  // Writers of the KB wait until the copy commits (readers do not): nobody can write into the
  // KB between the emptiness check and the copy's rows.
  RETURN_IF_ERROR(
      conn_->Exec("LOCK TABLE meta, module_versions, functions, symbols, evidence, diffs "
                  "IN SHARE ROW EXCLUSIVE MODE"));
  RETURN_IF_ERROR(internal::RequireEmpty([this](KbTable t) { return Count(*conn_, t); }));
  return std::unique_ptr<KbRestoreTxn>(new PgRestoreTxn(*conn_, std::move(txn)));
}

}  // namespace trove::warden::kb

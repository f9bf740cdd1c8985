// The rows of a KB exactly as stored, table by table, for copying a KB from one back end to
// another (`warden kb migrate`, docs/decisions/0091-warden-kb-migrate.md). Each table is a
// list of columns with their storage kind, in the same order on every back end; a row is the
// values it stores (NULL, integer, real, text or bytes), so nothing is decoded and re-encoded
// on the way and ids are kept. The back-end side is in store.h: KbStore::BeginSnapshot,
// ScanRows and CountRows read, KbRestoreTxn writes.
// Thread safety: the specs are constants; the rest are values and interfaces used as KbStore.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace trove::warden::kb {

// The tables of a KB, in the order a restore writes them (foreign keys point backwards).
enum class KbTable { kMeta, kVersions, kFunctions, kSymbols, kEvidence, kDiffs };
inline constexpr KbTable kKbTables[] = {KbTable::kMeta,    KbTable::kVersions, KbTable::kFunctions,
                                        KbTable::kSymbols, KbTable::kEvidence, KbTable::kDiffs};

enum class ColumnKind { kInteger, kReal, kText, kBlob };

struct ColumnSpec {
  std::string_view name;
  ColumnKind kind;
};

struct TableSpec {
  KbTable table;
  std::string_view name;  // the SQL table name
  std::span<const ColumnSpec> columns;
  // The first key_columns columns are the primary key: scans run in its order.
  std::size_t key_columns = 1;
  // Whether `id` (the first column) is generated (PostgreSQL: an identity whose sequence a
  // restore moves past the largest id).
  bool generated_id = false;
};

// The spec of `table`. Columns not listed are not copied (PostgreSQL's evidence.attempt, which
// names a gate attempt of that server only).
const TableSpec& SpecOf(KbTable table);

// One stored value: NULL, an integer, a real, or text / bytes (the column's kind says which).
using StoredValue = std::variant<std::monostate, std::int64_t, double, std::string>;
// One row: a value per column of its TableSpec, in order.
using StoredRow = std::vector<StoredValue>;

// Receives one batch of rows of a scan; a non-OK status stops the scan and is returned by it.
// The rows may be moved from.
using RowBatchFn = std::function<Status(std::vector<StoredRow>& rows)>;

// A consistent view of a whole KB for the scans made while it lives (SQLite: one read
// transaction; PostgreSQL: one REPEATABLE READ transaction), so that a KB in use is copied as
// of one moment. Destroying it ends the transaction.
class KbSnapshot {
 public:
  virtual ~KbSnapshot() = default;
};

// The one transaction a copy is written in (KbStore::BeginRestore). Destroying it without
// Commit rolls everything back.
class KbRestoreTxn {
 public:
  virtual ~KbRestoreTxn() = default;
  // Inserts `rows` of `table` with their ids (meta rows replace the values of their keys).
  // kInvalidArgument for kSymbols, which only RestoreSymbols writes.
  virtual Status RestoreRows(KbTable table, std::span<const StoredRow> rows) = 0;
  // Inserts symbol rows with `sql`, economy.cc's internal::kRestoreSymbolSql (?1..?10 are the
  // columns of SpecOf(KbTable::kSymbols) in order): only economy.cc holds SQL that modifies
  // `symbols`.
  virtual Status RestoreSymbols(std::string_view sql, std::span<const StoredRow> rows) = 0;
  // After the rows: the next id each generated-id table hands out follows its largest id
  // (PostgreSQL: setval on the identity sequences; SQLite does so by itself).
  virtual Status ResetIdentities() = 0;
  // The rows of `table` as this transaction sees them.
  virtual Result<std::int64_t> CountRows(KbTable table) = 0;
  virtual Status Commit() = 0;
};

}  // namespace trove::warden::kb

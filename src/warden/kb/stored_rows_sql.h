// The SQL of copying stored rows (stored_rows.h), the same text for both back ends: keyset
// scans in primary-key order and multi-row INSERTs with ?N placeholders (base/pg rewrites them
// to $N). `Stmt` is base::Statement (SQLite) or base::pg::Statement (PostgreSQL), which share
// the Bind and Column* accessors used here. Internal to kb/.
// Thread safety: pure functions.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "base/status.h"
#include "warden/kb/stored_rows.h"

namespace trove::warden::kb::internal {

// Bound parameters per INSERT statement (SQLite allows 32766, PostgreSQL 65535).
inline constexpr std::size_t kMaxParamsPerInsert = 2000;

// "a, b, c": the spec's columns.
std::string ColumnList(const TableSpec& spec);
// The scan of one batch: every column, in key order, at most ?K+1 rows (K: key columns);
// `after` adds "key > ?1" (or "(k1, k2) > (?1, ?2)"), the last key of the previous batch.
std::string ScanSql(const TableSpec& spec, bool after);
// INSERT of `rows` rows (parameters ?1.. row by row); meta rows replace existing keys.
std::string InsertSql(const TableSpec& spec, std::size_t rows);
// Rows per INSERT statement for the spec (kMaxParamsPerInsert / columns, at least 1).
std::size_t RowsPerInsert(const TableSpec& spec);
// The key of a row for messages: "3, 17" or "w1:…".
std::string KeyOfRow(const TableSpec& spec, const StoredRow& row);
// OK when `count` finds no row in any table but meta; else kAlreadyExists naming what the KB
// holds (BeginRestore: a copy goes into an empty KB only).
Status RequireEmpty(const std::function<Result<std::int64_t>(KbTable)>& count);

// Reads the current row of a ScanSql statement.
template <typename Stmt>
StoredRow ReadStoredRow(const Stmt& stmt, const TableSpec& spec) {
  StoredRow row;
  row.reserve(spec.columns.size());
  for (std::size_t i = 0; i < spec.columns.size(); ++i) {
    const int c = static_cast<int>(i);
    if (stmt.ColumnIsNull(c)) {
      row.emplace_back(std::monostate());
      continue;
    }
    switch (spec.columns[i].kind) {
      case ColumnKind::kInteger:
        row.emplace_back(stmt.ColumnInt64(c));
        break;
      case ColumnKind::kReal:
        row.emplace_back(stmt.ColumnDouble(c));
        break;
      case ColumnKind::kText:
        row.emplace_back(stmt.ColumnText(c));
        break;
      case ColumnKind::kBlob:
        row.emplace_back(stmt.ColumnBlob(c));
        break;
    }
  }
  return row;
}

// Binds `row` as parameters first..first+columns-1. The row's strings must outlive the step.
template <typename Stmt>
Status BindStoredRow(Stmt& stmt, const TableSpec& spec, const StoredRow& row, int first) {
  if (row.size() != spec.columns.size()) {
    return Status::InvalidArgument(fmt::format("{} row has {} values, expected {}", spec.name,
                                               row.size(), spec.columns.size()));
  }
  for (std::size_t i = 0; i < row.size(); ++i) {
    const int index = first + static_cast<int>(i);
    const StoredValue& v = row[i];
    Status s;
    if (std::holds_alternative<std::monostate>(v)) {
      s = stmt.Bind(index, nullptr);
    } else if (const auto* n = std::get_if<std::int64_t>(&v)) {
      s = stmt.Bind(index, *n);
    } else if (const auto* d = std::get_if<double>(&v)) {
      s = stmt.Bind(index, *d);
    } else {
      const std::string& text = std::get<std::string>(v);
      s = spec.columns[i].kind == ColumnKind::kBlob ? stmt.BindUncopiedBlob(index, text)
                                                    : stmt.BindUncopiedText(index, text);
    }
    RETURN_IF_ERROR(s);
  }
  return Status::Ok();
}

// Binds the key of `row` (its first key_columns values) as ?1.. and `limit` after them, for
// ScanSql(spec, true).
template <typename Stmt>
Status BindScanAfter(Stmt& stmt, const TableSpec& spec, const StoredRow& row, std::int64_t limit) {
  for (std::size_t i = 0; i < spec.key_columns; ++i) {
    const int index = static_cast<int>(i) + 1;
    if (const auto* n = std::get_if<std::int64_t>(&row[i])) {
      RETURN_IF_ERROR(stmt.Bind(index, *n));
    } else if (const auto* t = std::get_if<std::string>(&row[i])) {
      RETURN_IF_ERROR(stmt.Bind(index, std::string_view(*t)));
    } else {
      return Status::Internal(fmt::format("{}: a key column is NULL", spec.name));
    }
  }
  return stmt.Bind(static_cast<int>(spec.key_columns) + 1, limit);
}

// Inserts `rows` of `spec` with multi-row INSERTs prepared on `conn` (base::Database or
// base::pg::Connection).
template <typename Conn>
Status InsertStoredRows(Conn& conn, const TableSpec& spec, std::span<const StoredRow> rows) {
  const std::size_t per = RowsPerInsert(spec);
  const std::size_t columns = spec.columns.size();
  for (std::size_t start = 0; start < rows.size(); start += per) {
    const std::size_t n = std::min(per, rows.size() - start);
    ASSIGN_OR_RETURN(auto stmt, conn.Prepare(InsertSql(spec, n)));
    for (std::size_t r = 0; r < n; ++r) {
      RETURN_IF_ERROR(
          BindStoredRow(stmt, spec, rows[start + r], static_cast<int>(r * columns) + 1));
    }
    if (Result<bool> done = stmt.Step(); !done.ok()) {
      return std::move(done).status().WithContext(
          fmt::format("restore {} from key ({})", spec.name, KeyOfRow(spec, rows[start])));
    }
  }
  return Status::Ok();
}

// Scans every row of `spec` in key order on `conn` in batches of `batch` rows (keyset
// pagination: each batch starts after the last key of the one before).
template <typename Conn>
Status ScanStoredRows(Conn& conn, const TableSpec& spec, std::size_t batch,
                      const RowBatchFn& on_batch) {
  if (batch == 0) return Status::InvalidArgument("scan: batch size 0");
  const std::int64_t limit = static_cast<std::int64_t>(std::min<std::size_t>(batch, 1u << 30));
  StoredRow last_key;
  for (bool first = true;; first = false) {
    std::vector<StoredRow> rows;
    {
      ASSIGN_OR_RETURN(auto stmt, conn.Prepare(ScanSql(spec, !first)));
      if (first) {
        RETURN_IF_ERROR(stmt.Bind(1, limit));
      } else {
        RETURN_IF_ERROR(BindScanAfter(stmt, spec, last_key, limit));
      }
      for (;;) {
        ASSIGN_OR_RETURN(const bool row, stmt.Step());
        if (!row) break;
        rows.push_back(ReadStoredRow(stmt, spec));
      }
    }
    if (rows.empty()) return Status::Ok();
    const bool full = rows.size() == static_cast<std::size_t>(limit);
    last_key.assign(rows.back().begin(),
                    rows.back().begin() + static_cast<std::ptrdiff_t>(spec.key_columns));
    RETURN_IF_ERROR(on_batch(rows));
    if (!full) return Status::Ok();
  }
}

}  // namespace trove::warden::kb::internal

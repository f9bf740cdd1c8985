// The `diffs` table (docs/warden.md §9.1, §10.1): one stored report per version pair. The diff
// engine (src/warden/diff/) computes reports; this file only stores and reads them. Nothing here
// touches `symbols` (economy.cc is the one file that does).
#include <fmt/core.h>

#include "base/sqlite.h"
#include "warden/kb/kb.h"

namespace trove::warden::kb {

Result<std::int64_t> Kb::StoreDiff(std::int64_t from_version, std::int64_t to_version,
                                   std::string_view params_json, std::string_view report_json,
                                   std::string_view changelog_md) {
  ASSIGN_OR_RETURN(base::Transaction txn, db_->Begin());
  RETURN_IF_ERROR(RequireVersion(from_version));
  RETURN_IF_ERROR(RequireVersion(to_version));
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
  RETURN_IF_ERROR(stmt.Bind(3, std::string_view(Now())));
  RETURN_IF_ERROR(stmt.BindUncopiedText(4, params_json));
  RETURN_IF_ERROR(stmt.BindUncopiedText(5, report_json));
  RETURN_IF_ERROR(stmt.BindUncopiedText(6, changelog_md));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  (void)row;
  const std::int64_t id = db_->LastInsertRowId();
  RETURN_IF_ERROR(txn.Commit());
  return id;
}

namespace {

DiffRecord ReadDiff(const base::Statement& s, bool full) {
  DiffRecord d;
  d.id = s.ColumnInt64(0);
  d.from_version = s.ColumnInt64(1);
  d.to_version = s.ColumnInt64(2);
  d.created_at = s.ColumnText(3);
  d.params_json = s.ColumnText(4);
  if (full) {
    d.report_json = s.ColumnText(5);
    d.changelog_md = s.ColumnText(6);
  }
  return d;
}

}  // namespace

Result<std::optional<DiffRecord>> Kb::GetDiff(std::int64_t from_version, std::int64_t to_version) {
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

Result<std::vector<DiffRecord>> Kb::ListDiffs() {
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

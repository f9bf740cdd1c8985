// Kb::CopyInto (kb.h): a whole KB copied into another, for `warden kb migrate`
// (docs/decisions/0091-warden-kb-migrate.md).
#include <fmt/core.h>

#include "warden/kb/economy.h"
#include "warden/kb/kb.h"
#include "warden/kb/store.h"

namespace trove::warden::kb {

namespace {

// Rows per scan batch: a batch of functions (opcode blobs of ~1 KB each) stays a few MB.
constexpr std::size_t kCopyBatch = 1000;

}  // namespace

Result<std::vector<TableCopy>> Kb::CopyInto(Kb& target, const CopyProgress& progress) {
  if (&target == this) return Status::InvalidArgument("copy: the source and target are one KB");
  ASSIGN_OR_RETURN(std::unique_ptr<KbSnapshot> snapshot, store_->BeginSnapshot());
  std::vector<TableCopy> tables;
  for (const KbTable table : kKbTables) {
    TableCopy& t = tables.emplace_back();
    t.table = std::string(SpecOf(table).name);
    ASSIGN_OR_RETURN(t.source, store_->CountRows(table));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<KbRestoreTxn> restore, target.store_->BeginRestore());
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const KbTable table = kKbTables[i];
    TableCopy& t = tables[i];
    const RowBatchFn write = [&](std::vector<StoredRow>& rows) -> Status {
      // Symbols only through economy.cc's statement (the one file that writes `symbols`).
      RETURN_IF_ERROR(table == KbTable::kSymbols
                          ? restore->RestoreSymbols(internal::kRestoreSymbolSql, rows)
                          : restore->RestoreRows(table, rows));
      t.copied += static_cast<std::int64_t>(rows.size());
      if (progress) progress(t.table, t.copied, t.source);
      return Status::Ok();
    };
    RETURN_IF_ERROR(store_->ScanRows(table, kCopyBatch, write));
  }
  RETURN_IF_ERROR(restore->ResetIdentities());
  snapshot.reset();
  std::string differ;
  for (std::size_t i = 0; i < tables.size(); ++i) {
    TableCopy& t = tables[i];
    ASSIGN_OR_RETURN(t.target, restore->CountRows(kKbTables[i]));
    if (t.target != t.source || t.copied != t.source) {
      differ += fmt::format("{}{}: source {}, copied {}, target {}", differ.empty() ? "" : "; ",
                            t.table, t.source, t.copied, t.target);
    }
  }
  if (!differ.empty()) {
    return Status::DataLoss(
        fmt::format("copy: row counts differ ({}); nothing was committed", differ));
  }
  RETURN_IF_ERROR(restore->Commit());
  return tables;
}

}  // namespace trove::warden::kb

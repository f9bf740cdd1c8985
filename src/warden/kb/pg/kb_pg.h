// PgKbStore: the KB in a PostgreSQL database (docs/decisions/0082-warden-kb-store.md), the
// KbStore of a "postgresql://" or "postgres://" target. Schema: pg/schema_pg.cc (the §10.1
// tables with bigint integers, C-collated text, identity ids, append-only evidence triggers and
// a NOTIFY per symbol write). The gate runs in READ COMMITTED with the symbol row locked by
// SELECT ... FOR UPDATE (store.h, economy.cc RunGate); a deadlock or a lost connection before
// COMMIT reruns the gate, and a connection lost during COMMIT is settled by looking for the
// attempt's evidence row.
// Thread safety: as Kb (one connection, one thread at a time).
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "warden/kb/store.h"

namespace trove::base::pg {
class Connection;
}  // namespace trove::base::pg

namespace trove::warden::kb {

struct KbOptions;

class PgKbStore final : public KbStore {
 public:
  // Connects to `url` and checks (or, with create_if_missing, creates) the schema.
  static Result<std::unique_ptr<PgKbStore>> Open(const std::string& url, const KbOptions& options);
  ~PgKbStore() override;

  // The connection (tests).
  base::pg::Connection& connection() { return *conn_; }

  StoreKind Kind() const override { return StoreKind::kPostgres; }
  const std::string& Target() const override { return target_; }
  Result<std::string> Project() override;
  Result<bool> PrepareToStore() override { return false; }
  Result<bool> RemoveCreated(const DatabaseFiles& before) override;
  Result<std::unique_ptr<KbWriteTxn>> BeginWrite(WriteKind kind) override;
  bool PrepareRetry(const Status& failure, int attempt) override;
  bool Healthy() override;

  Result<std::vector<VersionInfo>> ListVersions() override;
  Result<std::optional<VersionInfo>> GetVersion(std::int64_t version_id) override;
  Result<bool> VersionExists(std::int64_t version_id) override;
  Result<std::optional<std::int64_t>> LatestVersionId() override;
  Result<std::optional<std::int64_t>> VersionIdByLabel(std::string_view label) override;
  Result<std::optional<std::string>> VersionProducersJson(std::int64_t version_id) override;
  Result<bool> SetEmscriptenVersion(std::int64_t version_id, std::string_view version,
                                    std::string_view source) override;

  Result<CoverageCounts> CoverageOf(std::int64_t version_id) override;
  Result<std::vector<FunctionRow>> ListFunctionRows(const FunctionFilter& filter) override;
  Result<std::optional<FunctionRecord>> GetFunction(std::int64_t version_id,
                                                    std::uint32_t func_index) override;
  Result<std::vector<FunctionRecord>> FunctionRecords(std::int64_t version_id,
                                                      std::size_t reserve) override;
  Result<AnnotatedFunctions> DefinedFunctionsForDiff(std::int64_t version_id,
                                                     std::size_t reserve) override;
  Result<std::vector<std::uint32_t>> Callers(std::int64_t version_id,
                                             std::uint32_t func_index) override;
  Result<FunctionMatches> FunctionsByIndex(std::int64_t version_id,
                                           std::uint32_t func_index) override;
  Result<FunctionMatches> FunctionsByStableIdPrefix(std::int64_t version_id,
                                                    std::string_view hex_prefix) override;
  Result<FunctionMatches> FunctionsByStableId(std::int64_t version_id,
                                              std::string_view stable_id) override;
  Result<FunctionMatches> FunctionsBySymbolName(std::int64_t version_id,
                                                std::string_view name) override;
  Result<FunctionMatches> FunctionsByRawName(std::int64_t version_id,
                                             std::string_view name) override;

  Result<std::optional<SymbolRecord>> GetSymbolRow(std::string_view stable_id) override;
  Result<std::vector<EvidenceEntry>> Evidence(std::string_view stable_id) override;
  Result<std::vector<SymbolRecord>> ScanSymbols() override;
  Result<std::vector<ScannedEvidence>> ScanEvidence(std::int64_t after_id,
                                                    std::size_t limit) override;

  Result<std::int64_t> StoreDiff(std::int64_t from_version, std::int64_t to_version,
                                 std::string_view created_at, std::string_view params_json,
                                 std::string_view report_json,
                                 std::string_view changelog_md) override;
  Result<std::optional<DiffRecord>> GetDiff(std::int64_t from_version,
                                            std::int64_t to_version) override;
  Result<std::vector<DiffRecord>> ListDiffs() override;

  // Copying a KB (pg/restore_pg.cc).
  Result<std::unique_ptr<KbSnapshot>> BeginSnapshot() override;
  Status ScanRows(KbTable table, std::size_t batch, const RowBatchFn& on_batch) override;
  Result<std::int64_t> CountRows(KbTable table) override;
  Result<std::unique_ptr<KbRestoreTxn>> BeginRestore() override;

 private:
  class WriteTxn;
  PgKbStore(std::string target, std::unique_ptr<base::pg::Connection> conn);
  Result<FunctionMatches> Matches(std::string_view sql, std::int64_t version_id,
                                  std::string_view arg);

  const std::string target_;  // redacted
  const std::unique_ptr<base::pg::Connection> conn_;
  // The last write transaction's COMMIT was lost and found not applied (PrepareRetry).
  bool commit_not_applied_ = false;
};

}  // namespace trove::warden::kb

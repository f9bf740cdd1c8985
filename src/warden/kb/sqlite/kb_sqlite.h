// SqliteKbStore: the KB as one SQLite file in WAL mode (docs/warden.md §10.1), the KbStore of
// a path. It holds the SQLite-only mechanics: the pragmas, the first version's rollback
// journal (docs/decisions/0041-warden-first-version-journal.md), the index rebuild after a
// first version's rows (0042), the WAL finisher (finisher.h) and RemoveCreated's file removal.
// Thread safety: as Kb.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"
#include "warden/kb/store.h"

namespace trove::base {
class Database;
class Env;
class Statement;
}  // namespace trove::base

namespace trove::warden::kb {

class VersionFinisher;
struct KbOptions;

class SqliteKbStore final : public KbStore {
 public:
  // Opens the KB at `path` as Kb::Open does (kb.h).
  static Result<std::unique_ptr<SqliteKbStore>> Open(base::Env& env, const std::string& path,
                                                     const KbOptions& options);
  ~SqliteKbStore() override;

  // The connection and the last StoreVersion's finisher (tests).
  base::Database& db() { return *db_; }
  VersionFinisher* finisher() { return finisher_.get(); }

  StoreKind Kind() const override { return StoreKind::kSqlite; }
  const std::string& Target() const override { return path_; }
  Result<std::string> Project() override;
  Result<bool> PrepareToStore() override;
  Result<bool> RemoveCreated(const DatabaseFiles& before) override;
  Result<std::unique_ptr<KbWriteTxn>> BeginWrite(WriteKind kind) override;

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

  // Copying a KB (sqlite/restore_sqlite.cc).
  Result<std::unique_ptr<KbSnapshot>> BeginSnapshot() override;
  Status ScanRows(KbTable table, std::size_t batch, const RowBatchFn& on_batch) override;
  Result<std::int64_t> CountRows(KbTable table) override;
  Result<std::unique_ptr<KbRestoreTxn>> BeginRestore() override;

 private:
  class WriteTxn;
  SqliteKbStore(std::string path, std::unique_ptr<base::Database> db);
  Result<FunctionMatches> Matches(std::string_view sql, std::int64_t version_id,
                                  std::string_view arg);

  const std::string path_;
  const std::unique_ptr<base::Database> db_;
  // PrepareToStore switched to the rollback journal and no StoreVersion has switched back.
  bool rollback_pending_ = false;
  // The scans' statements, prepared once (the property test scans after every step).
  std::unique_ptr<base::Statement> scan_symbols_;
  std::unique_ptr<base::Statement> scan_evidence_;
  // The last StoreVersion's WAL writeback and checkpoint (finisher.h); declared after db_ so
  // that it is done before db_ closes.
  std::unique_ptr<VersionFinisher> finisher_;
};

}  // namespace trove::warden::kb

// KbStore: where a WARDEN KB keeps its rows (docs/decisions/0082-warden-kb-store.md). Kb (kb.h)
// is the backend-neutral facade: argument checks, labels, cursors, the parsing of function
// references, the write paths' provenance and actor, and the economy gate (economy.cc) stay
// there; every SQL statement lives behind this interface. One implementation per back end:
// SqliteKbStore (sqlite/kb_sqlite.h, one file in WAL mode) and, later, a PostgreSQL one.
//
// The gate is one function, internal::RunGate (economy.cc), written against KbWriteTxn's
// primitives. The statements that modify `symbols` are economy.cc's constants, handed to
// KbWriteTxn::WriteSymbol as text: a back end executes the text it is given and holds no such
// statement of its own (economy_test.cc's source scan keeps it so).
//
// Errors are those of Kb (kb.h). Thread safety: as Kb, one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "warden/kb/economy.h"
#include "warden/kb/records.h"
#include "warden/kb/stored_rows.h"

namespace trove::warden::kb {

struct DatabaseFiles;  // kb.h

enum class StoreKind { kSqlite, kPostgres };

// What a write transaction is for; a back end may prepare differently (SQLite: the first
// version's rollback journal, the WAL finisher, the index rebuild).
enum class WriteKind { kGate, kStoreVersion };

// The row the gate writes into `symbols` (bound as ?1..?9 of the economy.cc statement: stable_id,
// name, summary, type_signature, provenance, actor, confidence, locked, now).
struct SymbolRow {
  std::string_view stable_id;
  std::optional<std::string_view> name;
  std::optional<std::string_view> summary;
  std::optional<std::string_view> type_signature;
  std::string_view provenance;
  std::string_view actor;
  double confidence = 0.0;
  bool locked = false;
  std::string_view now;
};

// One evidence row as the gate built it (text already escaped to valid UTF-8).
struct EvidenceRow {
  std::string_view stable_id;
  std::string_view at;
  std::string_view actor;
  std::string_view provenance;
  std::optional<std::string_view> name;
  std::optional<std::string_view> summary;
  std::optional<double> confidence;  // nullopt: NaN, stored as NULL
  bool accepted = false;
  std::string_view reason;
  std::string_view details_json;
};

// A (func_index, stable_id) match of ResolveFunction's queries, in index order.
using FunctionMatches = std::vector<std::pair<std::uint32_t, std::string>>;

// The counts of GetCoverage as stored; Kb derives the percentages.
struct CoverageCounts {
  std::int64_t defined = 0;
  std::int64_t named = 0;
  std::int64_t human = 0;
  std::int64_t export_ = 0;
  std::int64_t oracle = 0;
  std::int64_t diff_carry = 0;
  std::int64_t agent = 0;
  std::int64_t locked = 0;
  std::optional<double> mean_confidence;
  std::int64_t placeholder = 0;
};

// The filters of a ListFunctions page: rows with func_index > after, at most `limit` (none:
// all).
struct FunctionFilter {
  std::int64_t version_id = 0;
  bool include_imports = false;
  std::int64_t after = -1;
  bool unnamed_only = false;
  std::optional<double> below;
  std::optional<std::string> provenance;
  std::optional<int> limit;
};

// One evidence row with its stable_id (KbStore::ScanEvidence).
struct ScannedEvidence {
  std::string stable_id;
  EvidenceEntry entry;
};

// One write transaction. Destroying it without Commit rolls everything back.
class KbWriteTxn {
 public:
  virtual ~KbWriteTxn() = default;

  // --- Gate primitives (economy.cc RunGate) ---
  // The type_signature of stable_id in the newest version holding it; nullopt when no version
  // holds it.
  virtual Result<std::optional<std::string>> LatestTypeSignature(std::string_view stable_id) = 0;
  // The existing symbol E, locked against other writers until the end of the transaction
  // (SQLite: the transaction holds the write lock already).
  virtual Result<std::optional<ExistingSymbol>> ReadSymbolForUpdate(std::string_view stable_id) = 0;
  // Runs `sql` (an economy.cc constant) with `row` bound as ?1..?9; returns whether it wrote a
  // row.
  virtual Result<bool> WriteSymbol(std::string_view sql, const SymbolRow& row) = 0;
  virtual Status AppendEvidence(const EvidenceRow& row) = 0;

  // --- Ingest (Kb::StoreVersion) ---
  // The version with this sha256 (its id and label), if any.
  virtual Result<std::optional<std::pair<std::int64_t, std::string>>> VersionBySha(
      std::string_view sha256) = 0;
  virtual Result<bool> LabelTaken(std::string_view label) = 0;
  virtual Result<std::int64_t> CountVersions() = 0;
  // Inserts the version row; returns its id.
  virtual Result<std::int64_t> InsertVersion(const VersionRecord& version, std::string_view label,
                                             std::string_view now) = 0;
  // Inserts a row per function; calls on_row(rows done) after each one.
  virtual Status InsertFunctions(std::int64_t version_id, std::span<const FunctionRecord> functions,
                                 const std::function<void(std::size_t)>& on_row) = 0;

  virtual Status Commit() = 0;
};

class KbStore {
 public:
  virtual ~KbStore() = default;

  virtual StoreKind Kind() const = 0;
  // The target as given to Open (a path, or a URL), for messages and Kb::path().
  virtual const std::string& Target() const = 0;

  // meta.project.
  virtual Result<std::string> Project() = 0;
  // Kb::PrepareToStore (SQLite: the first version's rollback journal; others: false).
  virtual Result<bool> PrepareToStore() = 0;
  // Kb::RemoveCreated's work; the caller closes the store afterwards.
  virtual Result<bool> RemoveCreated(const DatabaseFiles& before) = 0;

  virtual Result<std::unique_ptr<KbWriteTxn>> BeginWrite(WriteKind kind) = 0;
  // After a gate transaction failed with `failure` (its attempt-th try): returns true when the
  // same transaction may be run again from the start (a deadlock, a connection lost before
  // the commit, or a commit found not applied), having waited and reconnected as needed.
  // SQLite: never (its busy timeout has already waited).
  virtual bool PrepareRetry(const Status& /*failure*/, int /*attempt*/) { return false; }
  // Whether the store's connection is usable, found out without blocking: false once a command
  // found the connection lost or the server closed it (PostgreSQL). SQLite: always true.
  virtual bool Healthy() { return true; }

  // --- Versions ---
  virtual Result<std::vector<VersionInfo>> ListVersions() = 0;
  // nullopt for an unknown id.
  virtual Result<std::optional<VersionInfo>> GetVersion(std::int64_t version_id) = 0;
  virtual Result<bool> VersionExists(std::int64_t version_id) = 0;
  virtual Result<std::optional<std::int64_t>> LatestVersionId() = 0;
  virtual Result<std::optional<std::int64_t>> VersionIdByLabel(std::string_view label) = 0;
  // nullopt for an unknown id.
  virtual Result<std::optional<std::string>> VersionProducersJson(std::int64_t version_id) = 0;
  // Returns whether the version exists (and was updated).
  virtual Result<bool> SetEmscriptenVersion(std::int64_t version_id, std::string_view version,
                                            std::string_view source) = 0;

  // --- Functions ---
  virtual Result<CoverageCounts> CoverageOf(std::int64_t version_id) = 0;
  virtual Result<std::vector<FunctionRow>> ListFunctionRows(const FunctionFilter& filter) = 0;
  virtual Result<std::optional<FunctionRecord>> GetFunction(std::int64_t version_id,
                                                            std::uint32_t func_index) = 0;
  // Every function of the version in index order; `reserve` sizes the vector.
  virtual Result<std::vector<FunctionRecord>> FunctionRecords(std::int64_t version_id,
                                                              std::size_t reserve) = 0;
  virtual Result<AnnotatedFunctions> DefinedFunctionsForDiff(std::int64_t version_id,
                                                             std::size_t reserve) = 0;
  virtual Result<std::vector<std::uint32_t>> Callers(std::int64_t version_id,
                                                     std::uint32_t func_index) = 0;
  // ResolveFunction's five lookups.
  virtual Result<FunctionMatches> FunctionsByIndex(std::int64_t version_id,
                                                   std::uint32_t func_index) = 0;
  // `hex_prefix`: lower-case hex digits after "w1:".
  virtual Result<FunctionMatches> FunctionsByStableIdPrefix(std::int64_t version_id,
                                                            std::string_view hex_prefix) = 0;
  virtual Result<FunctionMatches> FunctionsByStableId(std::int64_t version_id,
                                                      std::string_view stable_id) = 0;
  virtual Result<FunctionMatches> FunctionsBySymbolName(std::int64_t version_id,
                                                        std::string_view name) = 0;
  virtual Result<FunctionMatches> FunctionsByRawName(std::int64_t version_id,
                                                     std::string_view name) = 0;

  // --- Symbols and evidence ---
  // The symbol row without its evidence; nullopt when there is none.
  virtual Result<std::optional<SymbolRecord>> GetSymbolRow(std::string_view stable_id) = 0;
  virtual Result<std::vector<EvidenceEntry>> Evidence(std::string_view stable_id) = 0;
  // Every symbol row (no evidence), in stable_id order.
  virtual Result<std::vector<SymbolRecord>> ScanSymbols() = 0;
  // The evidence rows with id > after_id, in id order, at most `limit`.
  virtual Result<std::vector<ScannedEvidence>> ScanEvidence(std::int64_t after_id,
                                                            std::size_t limit) = 0;

  // --- Diffs ---
  // Replaces the diff of the pair in one transaction; kNotFound for an unknown version.
  virtual Result<std::int64_t> StoreDiff(std::int64_t from_version, std::int64_t to_version,
                                         std::string_view created_at, std::string_view params_json,
                                         std::string_view report_json,
                                         std::string_view changelog_md) = 0;
  virtual Result<std::optional<DiffRecord>> GetDiff(std::int64_t from_version,
                                                    std::int64_t to_version) = 0;
  virtual Result<std::vector<DiffRecord>> ListDiffs() = 0;

  // --- Copying a whole KB (stored_rows.h; `warden kb migrate`) ---
  // Not implemented by default (kUnsupported): a back end opts in.
  // Starts one consistent view for the scans and counts below, until it is destroyed.
  virtual Result<std::unique_ptr<KbSnapshot>> BeginSnapshot() {
    return Status::Unsupported("this KB back end cannot be copied");
  }
  // Every row of `table` as stored, in primary-key order, in batches of at most `batch` rows.
  virtual Status ScanRows(KbTable /*table*/, std::size_t /*batch*/,
                          const RowBatchFn& /*on_batch*/) {
    return Status::Unsupported("this KB back end cannot be copied");
  }
  virtual Result<std::int64_t> CountRows(KbTable /*table*/) {
    return Status::Unsupported("this KB back end cannot be copied");
  }
  // Starts the one transaction a copy is written in, holding off other writers; kAlreadyExists
  // when the KB holds any version, function, symbol, evidence or diff row (a copy goes into an
  // empty KB only).
  virtual Result<std::unique_ptr<KbRestoreTxn>> BeginRestore() {
    return Status::Unsupported("this KB back end cannot be a copy's target");
  }
};

}  // namespace trove::warden::kb

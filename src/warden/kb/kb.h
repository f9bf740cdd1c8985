// Kb: one WARDEN knowledge base, stored as one SQLite file in WAL mode (docs/warden.md §10.1).
//
// `functions` is the per-version appearance log, `symbols` the durable annotation layer keyed
// on stable_id, `evidence` the append-only trail of every symbol write attempt. Every symbol
// write goes through the economy gate (economy.h): the write entry points below differ only in
// the path they stand for, and each path fixes its provenance and actor (§6.3), so no caller —
// least of all an MCP peer — can choose either. Each runs read E → decide → write → append
// evidence in one BEGIN IMMEDIATE transaction.
//
// Errors, for the CLI's exit codes (§2.4):
//   * Open and Init: every error means "KB missing, unreadable, not a WARDEN database or of a
//     newer schema" (exit 3): kNotFound (no file), kDataLoss (not SQLite), kMalformed (not WARDEN:
//     message contains "not a WARDEN database"), kUnsupported (newer schema_version), kIo.
//   * FindDatabase: kNotFound with exactly kNoDatabaseMessage (exit 3).
//   * StoreVersion: kAlreadyExists for a duplicate label (exit 2); kInvalidArgument for
//     inconsistent records.
//   * ResolveVersion, ResolveFunction and queries naming a version: kNotFound for an unknown
//     version, function or stable_id (exit 6); kInvalidArgument for an ambiguous or malformed
//     reference, a bad limit or a foreign cursor (exit 2).
//   * kResourceExhausted: the database stayed busy past the 5 s busy timeout.
//
// Thread safety: one thread uses a Kb at a time; open one per worker. Separate Kb objects on
// the same file, in one process or many, may be used concurrently: writes are serialised by
// SQLite's write lock, reads run beside them (WAL).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "warden/kb/economy.h"
#include "warden/kb/records.h"

namespace trove::base {
class Database;
class Env;
}  // namespace trove::base

namespace trove::warden::kb {

class KbStore;

// Which of the files of a database at one path exist: the database itself and its -wal, -shm
// and -journal files.
struct DatabaseFiles {
  bool db = false;
  bool wal = false;
  bool shm = false;
  bool journal = false;
};
// Returns which files of the database at `path` exist now.
DatabaseFiles ExistingDatabaseFiles(const std::string& path);

// The schema this code writes and reads (meta.schema_version).
inline constexpr int kSchemaVersion = 1;
inline constexpr std::string_view kProducer = "trove-warden";
// The message of FindDatabase when nothing is found (§2.1).
inline constexpr std::string_view kNoDatabaseMessage =
    "no WARDEN database found (run 'warden init' or pass --db)";

struct KbOptions {
  // Creates the file (and the schema) when it does not exist; otherwise a missing file is
  // kNotFound and no file is created. Default false. Only `init`, `demo` and `ingest --db`
  // create a database.
  bool create_if_missing = false;
  // meta.project of a newly created database; empty: the name of the directory holding the
  // file (of the project directory for `.warden/warden.db`). Ignored for an existing database.
  std::string project;
  // Test hook: StoreVersion calls it after each function row it inserts, inside the
  // transaction, with the number inserted so far. Default none.
  std::function<void(std::size_t)> store_progress_for_testing;
};

// Which human path a human write came by; picks the actor (`human:cli`, `human:lib`).
enum class HumanChannel { kCli, kLib };

// A name proposed by a non-human path. It has no provenance or actor field: the entry point
// supplies both.
struct Proposal {
  std::string name;
  std::optional<std::string> summary;
  double confidence = 0.0;
  // A JSON object recorded in the evidence row (backend, model, pass, score components...).
  // Never put secrets here.
  std::string details_json = "{}";
};

// What Kb::CopyInto copied, one entry per table in copy order (meta, module_versions,
// functions, symbols, evidence, diffs).
struct TableCopy {
  std::string table;        // the SQL table name
  std::int64_t source = 0;  // rows in the source (as of its snapshot)
  std::int64_t copied = 0;  // rows read and written
  std::int64_t target = 0;  // rows in the target after the copy, counted before its commit
};

class Kb {
 public:
  // Opens the KB at `path`; applies the schema (CREATE ... IF NOT EXISTS) and the pragmas
  // (WAL, foreign_keys, busy_timeout 5000, synchronous NORMAL) on every open. Refuses a
  // non-WARDEN database and a newer schema_version. `env` (the clock) must outlive the Kb.
  static Result<std::unique_ptr<Kb>> Open(base::Env& env, const std::string& path,
                                          const KbOptions& options = {});
  Kb(const Kb&) = delete;
  Kb& operator=(const Kb&) = delete;
  ~Kb();

  // Removes a KB that a failed command created (docs/warden.md §2.1: a failed first ingest leaves
  // nothing that was not there before) and closes `kb` in every case. `before` says which of
  // the database's files existed before the command opened it; only the others are removed,
  // and nothing is when the database file existed. The files are removed only when `kb` is the
  // one connection open on the file (leaving WAL mode, as in PrepareToStore, fails at once
  // otherwise), under an exclusive lock that keeps any other connection from reading or
  // writing until they are gone, and when the KB holds no version, symbol, evidence or diff:
  // a KB that another process opened and still holds, or wrote to, is kept. Returns whether it
  // was removed.
  static Result<bool> RemoveCreated(std::unique_ptr<Kb> kb, const DatabaseFiles& before);

  const std::string& path() const { return path_; }
  // Whether the KB's database connection is usable, checked without blocking or retrying: a KB
  // on PostgreSQL whose server closed the connection (restart, shutdown) or whose connection a
  // command found lost is not, and a pool should drop it and open a new one. A SQLite KB always
  // is.
  bool Healthy();
  // Returns meta.project.
  Result<std::string> Project();

  // --- Ingest (kb.cc) ---

  // Does ahead of time the first step of storing a first version (optional): when the KB
  // holds no version and this is the only connection open on the file, switches it to the
  // rollback journal that StoreVersion would switch to (docs/decisions/0041-warden-first-
  // version-journal.md), so that a caller can do it beside other work (the CLI: while the
  // module is decoded). StoreVersion checks again and goes back to WAL on its way out; without
  // a StoreVersion the Kb goes back to WAL when it is destroyed. Another process that opens
  // the KB meanwhile sets WAL again, and StoreVersion then writes through the WAL. Returns
  // whether the KB is now in rollback mode.
  Result<bool> PrepareToStore();

  // Stores one version in one transaction: the version row, a row per function, the seed
  // names through the gate (provenance export) and their evidence. Any failure rolls back
  // everything. When a version with the same sha256 exists, returns it with
  // already_ingested = true and writes nothing. A duplicate explicit label is kAlreadyExists.
  // Records that disagree (counts other than imported_count/defined_count, a repeated index,
  // an empty stable_id, a seed naming no function of the version) are kInvalidArgument,
  // checked before anything is written. `on_rows`, when set, is called with the function rows
  // inserted so far and their total at each whole percent of them (at most 101 calls, the
  // last with rows_done == rows_total), inside the transaction, on the calling thread.
  using RowsProgress = std::function<void(std::size_t rows_done, std::size_t rows_total)>;
  Result<StoreResult> StoreVersion(const VersionRecord& version,
                                   std::span<const FunctionRecord> functions,
                                   const std::vector<SeedName>& seeds = {},
                                   const RowsProgress& on_rows = nullptr);

  // --- Symbol writes: the only ways to change `symbols` (economy.cc) ---
  // Each returns the gate's Decision (also for rejections, which are recorded in evidence),
  // or a Status when the database failed. A stable_id in no version's functions is rejected
  // without an evidence row. details_json must be a JSON object (else kInvalidArgument,
  // nothing recorded).

  // The human write: provenance human, confidence 1.0, actor human:cli or human:lib; locked.
  Result<Decision> HumanSetName(HumanChannel channel, std::string_view stable_id, std::string name,
                                std::optional<std::string> summary = {},
                                std::string details_json = "{}");
  // The human `--clear`: empties name and summary and releases the lock, recorded as a human
  // action (provenance human).
  Result<Decision> HumanClear(HumanChannel channel, std::string_view stable_id,
                              std::string details_json = "{}");
  // Ingest seeding: provenance export, confidence 1.0, actor ingest:name-section,
  // ingest:glue or ingest:export.
  Result<Decision> SeedExport(SeedSource source, std::string_view stable_id, std::string name,
                              std::string details_json = "{}");
  // The Oracle: provenance oracle, actor oracle:<pass>.
  Result<Decision> OracleWrite(std::string_view pass, std::string_view stable_id,
                               Proposal proposal);
  // Diff carry-over: provenance diff-carry, actor diff:<from>-><to>.
  Result<Decision> DiffCarry(std::string_view from_label, std::string_view to_label,
                             std::string_view stable_id, Proposal proposal);
  // An agent pass: provenance agent, actor agent:<backend>. `backend` is a lower-case
  // selector ([a-z0-9][a-z0-9._-]*, not "mcp"); anything else is kInvalidArgument.
  Result<Decision> AgentPropose(std::string_view backend, std::string_view stable_id,
                                Proposal proposal);
  // MCP propose_symbol: provenance agent and actor agent:mcp, injected here.
  Result<Decision> McpPropose(std::string_view stable_id, std::string name,
                              std::optional<std::string> summary, double confidence);

  // --- Queries (kb.cc) ---

  // Every version, in id order.
  Result<std::vector<VersionInfo>> ListVersions();
  // The version with id `version_id`, or kNotFound.
  Result<VersionInfo> GetVersion(std::int64_t version_id);
  // Resolves a `<version>` argument: a label (an exact label match wins) or a numeric id;
  // none: the most recently ingested version. kNotFound when none matches or the KB has no
  // version.
  Result<std::int64_t> ResolveVersion(std::optional<std::string_view> spec);
  Result<Coverage> GetCoverage(std::int64_t version_id);
  // Functions in index order, a page at a time when query.limit is set.
  Result<FunctionPage> ListFunctions(const FunctionQuery& query);
  // Everything stored about func_index in version_id; nullopt when there is no such function.
  Result<std::optional<StoredFunction>> GetFunction(std::int64_t version_id,
                                                    std::uint32_t func_index);
  // Every stored function of the version, imports included, in index order (for the diff
  // engine and the Oracle, which compare whole versions).
  Result<std::vector<FunctionRecord>> FunctionRecords(std::int64_t version_id);
  // The defined functions of the version in index order, each with its current symbol, in one
  // query that reads only what the diff engine compares and reports: the records leave
  // import_module, import_field, raw_name, export_names and call_targets empty, and each
  // FunctionRow holds index, name, provenance, confidence and locked only. kNotFound for an
  // unknown version.
  Result<AnnotatedFunctions> DefinedFunctionsForDiff(std::int64_t version_id);
  // The FunctionFacts; nullopt when the function is missing or imported.
  Result<std::optional<FunctionFacts>> GetFunctionFacts(std::int64_t version_id,
                                                        std::uint32_t func_index);
  // Indices of the functions of the version that call func_index directly, ascending.
  Result<std::vector<std::uint32_t>> Callers(std::int64_t version_id, std::uint32_t func_index);
  // The symbol with its evidence trail oldest first; nullopt when no symbol row exists.
  Result<std::optional<SymbolRecord>> GetSymbol(std::string_view stable_id);
  // The evidence trail of stable_id, oldest first (also when no symbol row exists).
  Result<std::vector<EvidenceEntry>> Evidence(std::string_view stable_id);
  // --- Diffs (diffs.cc; docs/warden.md §9.1) ---

  // Stores the report of the diff from_version -> to_version in one transaction, replacing an
  // earlier one of the same pair; returns its row id. kNotFound for an unknown version.
  Result<std::int64_t> StoreDiff(std::int64_t from_version, std::int64_t to_version,
                                 std::string_view params_json, std::string_view report_json,
                                 std::string_view changelog_md);
  // The stored diff of the pair; nullopt when none is stored.
  Result<std::optional<DiffRecord>> GetDiff(std::int64_t from_version, std::int64_t to_version);
  // Every stored diff, ordered by (from_version, to_version), without report_json and
  // changelog_md.
  Result<std::vector<DiffRecord>> ListDiffs();

  // --- The Oracle's version facts (oracle_meta.cc; docs/warden.md §8.3) ---

  // The version's producers_json (a JSON object text). kNotFound for an unknown version.
  Result<std::string> VersionProducersJson(std::int64_t version_id);
  // Records the Emscripten version inferred for a version and where it came from ("glue",
  // "oracle-vote", "hint"). kNotFound for an unknown version.
  Status SetEmscriptenVersion(std::int64_t version_id, std::string_view version,
                              std::string_view source);

  // Resolves a `<func>` argument (§2.1) in a version to its index: a decimal index, func[N],
  // a stable_id or a unique prefix of >= 8 hex digits after "w1:", or a name unique in the
  // version (the current symbol name, else the name-section name).
  Result<std::uint32_t> ResolveFunction(std::int64_t version_id, std::string_view spec);

  // --- Copying a KB (migrate.cc; `warden kb migrate`, docs/decisions/0091) ---

  // Copies every row of this KB, as of one snapshot, into `target` (another back end, or the
  // same) in one transaction of the target, ids included; symbols go in through economy.cc's
  // statement. The target must hold no version, function, symbol, evidence or diff
  // (kAlreadyExists otherwise); its meta rows take this KB's values. After the rows the
  // target's id sequences follow the largest ids, and the rows of every table are counted on
  // both sides: a difference is kDataLoss and nothing is committed. `progress`, when set, is
  // called after each batch with the table, its rows copied so far and its total.
  using CopyProgress =
      std::function<void(std::string_view table, std::int64_t done, std::int64_t total)>;
  Result<std::vector<TableCopy>> CopyInto(Kb& target, const CopyProgress& progress = nullptr);

 private:
  friend class KbTestPeer;
  Kb(base::Env& env, std::unique_ptr<KbStore> store,
     std::function<void(std::size_t)> store_progress);

  // The gate (economy.cc): one write transaction around internal::RunGate.
  Result<Decision> UpsertSymbol(std::string_view stable_id, const SymbolWrite& write);
  Status RequireVersion(std::int64_t version_id);
  std::string Now();

  base::Env& env_;
  // Where the rows are (store.h); every SQL statement is behind it.
  const std::unique_ptr<KbStore> store_;
  const std::string path_;
  const std::function<void(std::size_t)> store_progress_;
};

// Finds the KB per §2.1 (discovery.cc): `db_flag` when given (returned as is); else `kb.url`
// of the project config (FindProjectDir's .warden/config.json), then of the global config
// (GlobalConfigPath); else the nearest `.warden/warden.db` in `cwd` or a parent; else
// `cwd/warden.db`; else kNotFound with exactly kNoDatabaseMessage. A config file that is not a
// JSON object, or a kb.url that is not a PostgreSQL URL, is kMalformed naming the file.
// REQUIRES: cwd is absolute.
Result<std::string> FindDatabase(base::Env& env, const std::optional<std::string>& db_flag,
                                 const std::string& cwd);
// The project directory of `cwd`: the nearest directory, `cwd` or a parent, holding a
// `.warden/` directory (`warden init` makes one; a team whose KB is on PostgreSQL may make it
// for the project config alone); empty when there is none. A KB at a URL has no directory of
// its own: its project files (config, Oracle store) are those of this directory.
std::string FindProjectDir(base::Env& env, const std::string& cwd);
// The global config file: $XDG_CONFIG_HOME/warden/config.json, else
// $HOME/.config/warden/config.json; empty when neither variable is set.
std::string GlobalConfigPath();
// `kb.url` of the config file at `path` (flat {"kb.url": U} or nested {"kb": {"url": U}});
// nullopt when the file or the key is missing. kMalformed when the file is not a JSON object
// or the value is not a postgresql:// (or postgres://) URL.
Result<std::optional<std::string>> ConfigKbUrl(base::Env& env, const std::string& path);

struct InitResult {
  std::string db_path;   // dir/.warden/warden.db
  std::string project;   // meta.project as stored
  bool created = false;  // false: it already existed (a no-op)
};
// `warden init`: creates dir/.warden/warden.db with meta.project = `project` (empty: the name
// of `dir`). Re-running is a no-op that validates the existing database.
Result<InitResult> Init(base::Env& env, const std::string& dir, const std::string& project);

// Formats microseconds since the epoch as YYYY-MM-DDTHH:MM:SS.mmmZ.
std::string FormatTimestamp(std::int64_t micros);

}  // namespace trove::warden::kb

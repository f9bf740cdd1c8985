// Store: Librarian's knowledge store, one SQLite file (`.librarian/librarian.sqlite`,
// docs/librarian.md §6.6) in WAL mode: files, symbols, function-level chunks, imports, call
// references and runs, with
// FTS5 indexes over chunks (BM25 with per-column weights, docs/librarian.md §6.8), over paths and
// their sub-words, and optionally a trigram index for substring search.
//
// Writes go through Apply: one WriteBatch is one transaction, so a crash (kill -9 included)
// leaves every file either fully at its old state or fully at its new one (docs/librarian.md §6.2),
// and a run's checkpoint commits with the batch it describes. Reads see the last committed state;
// readers in other connections run beside the one writer (WAL).
//
// Schema: see schema.cc. A schema-3, -4 or -5 database is migrated in place on Open, keeping its
// rows (decisions 0054, 0063, 0069); any other database whose `meta.schema_version` differs from
// kSchemaVersion is dropped and rebuilt on Open (docs/librarian.md §6.6: an incompatible version
// forces a full rebuild); schema_rebuilt() tells the caller to re-index everything. Run and content
// manifests (diff_runs, verify_claim): manifest.h.
//
// Thread safety: one thread uses a Store at a time (its connection has no mutex). Open one
// Store per thread; separate Stores on one file may be used concurrently.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "librarian/extract/facts.h"

namespace trove::base {
class Database;
}

namespace trove::librarian::store {
namespace internal {
class StatementCache;
}

// 2: chunk_fts and chunk_tri are written by Apply, not by triggers.
// 3: indexes on the child keys of the references to symbols(id) (schema.cc).
// 4: run_files and content_symbols (manifest.h); a schema-3 store is migrated in place.
// 5: the evidence ledger and stored audits (decision 0063); 3 and 4 are migrated in place.
// 6: stored packs, their triggers and outcomes, the file graph, ranks (decision 0069); 3-5 are
//    migrated in place.
inline constexpr int kSchemaVersion = 6;

struct StoreOptions {
  // Whether a new database gets the trigram table `chunk_tri` (substring search). Its index
  // runs to a multiple of the text and, measured on this repository's sources, roughly triples
  // the store's write time, so it is opt-in per workspace (docs/librarian.md §6.8). An existing
  // database keeps the setting it was created with. Default false.
  bool trigram = false;
  // WAL pages after which a commit checkpoints the WAL into the database file (SQLite's
  // wal_autocheckpoint); 0 keeps SQLite's default of 1000 pages. Each checkpoint copies the
  // pages and syncs the file, so a bulk writer (bootstrap) checkpoints less often with a larger
  // value, at the cost of a larger WAL file between checkpoints. Durability and crash safety
  // are the same either way. Default 0.
  int wal_autocheckpoint_pages = 0;
};

// docs/librarian.md §1.1 file statuses.
enum class FileStatus : std::uint8_t {
  kIndexed,
  kUnchanged,
  kSkippedLarge,
  kSkippedBinary,
  kTimedOut,
  kFailed,
};
// "indexed", "unchanged", "skipped_large", "skipped_binary", "timed_out", "failed".
std::string_view FileStatusName(FileStatus status);

struct FileRecord {
  std::string path;  // workspace-relative, `/`-separated
  std::string sha256;
  std::string language;   // FileFacts::language, or "" for skipped files
  std::string extractor;  // FileFacts::extractor
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  FileStatus status = FileStatus::kIndexed;
  bool parse_error = false;
  bool stale = false;  // a timed-out re-extraction kept the previous rows (docs/librarian.md §6.2)
  std::string run_id;  // the run that last changed it
};

// The text a replacement's rows carry that is derived from the facts rather than copied: each
// symbol's target id and span hash, each chunk's `subwords` column and the path's words for
// path_fts. Deriving it is pure CPU work without the database, so a caller with several
// threads (bootstrap's extraction workers) computes it with PrepareRows off the writer thread;
// Apply derives it itself when a FileReplace carries none, and the rows are the same either way.
struct PreparedRows {
  std::vector<std::string> target_ids;      // one per facts.symbols entry
  std::vector<std::string> span_sha256;     // one per facts.symbols entry ("" if out of range)
  std::vector<std::string> chunk_subwords;  // one per facts.chunks entry
  std::string path_words;                   // sub-words of the path
};

// Returns the derived row text of `path` with `facts` (which must describe `content`).
// Thread safety: a pure function; call it from any thread.
PreparedRows PrepareRows(std::string_view path, const extract::FileFacts& facts,
                         std::string_view content);

// Replace everything stored for `file.path` with `facts` (which must describe `content`).
struct FileReplace {
  FileRecord file;
  const extract::FileFacts* facts = nullptr;  // null: the file record only (e.g. skipped)
  std::string_view content;                   // for span hashes
  // PrepareRows(file.path, *facts, content), or null to let Apply compute it. Must outlive
  // the Apply call.
  const PreparedRows* prepared = nullptr;
};

// Same content, new mtime/size (docs/librarian.md §6.3 "touched").
struct FileTouch {
  std::string path;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string run_id;
};

// Status change without touching the rows (timed_out keeps the previous entry, marked stale).
struct FileMark {
  std::string path;
  FileStatus status = FileStatus::kTimedOut;
  bool stale = true;
};

struct RunRecord {
  std::string run_id;       // run_<yyyymmddThhmmssZ>_<4 hex>
  std::string state;        // running, succeeded, failed, cancelled
  std::string mode;         // full, incremental, noop
  std::string started_at;   // RFC 3339
  std::string finished_at;  // "" while running
  std::string options_json;
  std::string tool_versions_json;
  std::string stats_json;
};

// FTS5's own default 'automerge' (segments per level before a merge).
inline constexpr int kDefaultChunkAutomerge = 4;

// One transaction's worth of changes, applied in this order: chunk_automerge, run, replace,
// touch, mark, remove.
struct WriteBatch {
  // Sets FTS5's 'automerge' of the chunk indexes, first thing in the transaction: how many
  // segments of one level FTS5 lets accumulate before merging them (kDefaultChunkAutomerge
  // unless set). Persisted in the index's config. A bulk writer raises it while it writes many
  // batches, so each entry is rewritten by fewer merges, and sets the default back with its
  // last batch; the stored entries, and so every search, are the same either way, only their
  // segments differ (docs/decisions/0039-librarian-boot3.md).
  std::optional<int> chunk_automerge;
  std::optional<RunRecord> run;  // inserted or replaced (a checkpoint)
  std::vector<FileReplace> replace;
  std::vector<FileTouch> touch;
  std::vector<FileMark> mark;
  std::vector<std::string> remove;  // vanished files: the file and all its rows
  // Last, after every change above: records `run->run_id`'s file manifest and the content
  // manifest of every file not yet recorded (manifest.h), and keeps the manifests of the last
  // kManifestRuns runs. REQUIRES: `run` is set. A run's final batch sets it, so the manifest
  // commits with the run's final record.
  bool record_manifest = false;
  // With record_manifest: the workspace-relative paths the run re-indexed, when it looked at
  // only those (watch mode); the manifest is then recorded as a delta (manifest.h).
  std::optional<std::vector<std::string>> manifest_paths;
};

struct SymbolRow {
  std::int64_t id = 0;
  std::string path;
  std::string target_id;  // fn:<path>::<qualified>, type:..., ns:..., "~2" for repeats
  std::string name;
  std::string qualified_name;
  std::string kind;  // SymbolKindName
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::uint32_t start_byte = 0;
  std::uint32_t end_byte = 0;
  std::string signature;
  std::string doc;
  std::string span_sha256;
  bool parse_error = false;
  bool end_known = true;
  std::string parent_qualified_name;  // "" at top level
};

struct ImportRow {
  std::string path;  // the importing file
  std::string module;
  std::uint32_t line = 0;
};

struct CallRow {
  std::string path;    // the calling file
  std::string callee;  // called name
  std::uint32_t line = 0;
  std::string caller_target_id;  // "" outside any function
};

struct ChunkRow {
  std::int64_t id = 0;
  std::string path;
  std::string kind;  // ChunkKindName
  std::string name;
  std::string qualified_name;
  std::string target_id;  // of the chunk's symbol; "" for file and window chunks
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::string doc;
  std::string body;
};

// BM25 column weights for chunk_fts (docs/librarian.md §6.8 starting weights).
struct ColumnWeights {
  double name_weight = 10;
  double subwords_weight = 5;
  double doc_weight = 3;
  double body_weight = 1;
  double path_weight = 2;
  // In chunk_fts' column order (name, subwords, doc, body, path).
  std::array<double, 5> InColumnOrder() const {
    return {name_weight, subwords_weight, doc_weight, body_weight, path_weight};
  }
};

// Store::SearchChunks: the column weights and the result limit.
struct SearchOptions {
  ColumnWeights columns;
  std::size_t limit = 20;
};

struct ChunkHit {
  std::int64_t chunk_id = 0;
  std::string path;
  std::string kind;  // ChunkKindName
  std::string name;
  std::string qualified_name;
  std::string target_id;  // of the chunk's symbol; "" for file and window chunks
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  double score = 0;  // -bm25: higher is better; a ranking signal, not a probability
};

struct PathHit {
  std::string path;
  double score = 0;
};

// Store::SearchFiles: BM25 with each file as one document (the sum of its chunks). The column
// weights weigh a term's occurrences as SearchChunks' do; k1 and b are BM25's.
struct FileSearchOptions {
  ColumnWeights columns;
  double k1 = 1.2;
  double b = 0.75;
  std::size_t limit = 50;
};

struct FileHit {
  std::string path;
  double score = 0;       // higher is better; a ranking signal, not a probability
  std::size_t terms = 0;  // how many of the query's terms occur in the file
};

// Returns the FTS5 query for `text`: its words split as identifiers (docs/librarian.md §6.8), whole
// and pieces, lower-cased, stop words dropped, each quoted, OR-combined; "" when nothing is left.
// FTS5 operators in `text` ("NEAR", "*", ":", quotes) become plain terms or vanish.
std::string BuildMatchQuery(std::string_view text);
// Returns whether the lower-cased word `w` is on the query stop-word list (docs/librarian.md §6.8)
// that
// BuildMatchQuery drops.
bool IsStopWord(std::string_view w);

class Store {
 public:
  // Opens or creates the store at `path` (":memory:" for tests: no WAL).
  static Result<std::unique_ptr<Store>> Open(const std::string& path,
                                             const StoreOptions& options = {});
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  ~Store();

  // Applies `batch` in one transaction; on error nothing of it is kept.
  Status Apply(const WriteBatch& batch);
  // Apply with one replacement.
  Status ReplaceFile(const FileRecord& file, const extract::FileFacts& facts,
                     std::string_view content);
  // Apply with removals only.
  Status DeleteFiles(std::span<const std::string> paths);

  // ReadSnapshot: one read transaction over a series of reads, such as one query. While it
  // lives, every read through this Store sees the same state of the store, and the caches
  // below check whether the store changed once, at the first read, instead of on every call
  // (each call outside a transaction starts and ends its own read transaction: a WAL read
  // lock taken and released with system calls, and a PRAGMA data_version). Ended (COMMIT,
  // which writes nothing) when destroyed. A write through this Store while one lives fails
  // (SQLite: no transaction inside a transaction); REQUIRES: only reads while it lives.
  class ReadSnapshot {
   public:
    ReadSnapshot(ReadSnapshot&& other) noexcept : store_(std::exchange(other.store_, nullptr)) {}
    ReadSnapshot& operator=(ReadSnapshot&&) = delete;
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;
    ~ReadSnapshot();
    // False when BeginRead found a transaction already open (the reads then share that one).
    bool active() const { return store_ != nullptr; }

   private:
    friend class Store;
    explicit ReadSnapshot(Store* store) : store_(store) {}
    Store* store_;
  };
  // Begins a ReadSnapshot. When a snapshot or another transaction is already open on this
  // connection, the returned snapshot is inactive and changes nothing.
  Result<ReadSnapshot> BeginRead();

  // The file's record; kept per path until the store changes (as FindSymbolsMany's answers),
  // so the query engine reads each candidate's file once per index generation.
  Result<std::optional<FileRecord>> GetFile(std::string_view path);
  Result<std::vector<FileRecord>> ListFiles();  // sorted by path
  // The records at or under each of `paths` (workspace-relative files or directories), sorted
  // by path: an index range per path, so a watch re-index reads only its batch's records.
  Result<std::vector<FileRecord>> ListFilesUnder(std::span<const std::string> paths);
  Result<std::optional<RunRecord>> GetRun(std::string_view run_id);
  Result<std::vector<RunRecord>> ListRuns();  // in insertion order

  // Symbols whose name or qualified name equals `name`, by path then line.
  Result<std::vector<SymbolRow>> FindSymbols(std::string_view name, std::size_t limit = 100);
  Result<std::optional<SymbolRow>> GetSymbol(std::string_view target_id);
  Result<std::vector<SymbolRow>> FileSymbols(std::string_view path);
  Result<std::vector<ImportRow>> FileImports(std::string_view path);
  Result<std::vector<CallRow>> FileCalls(std::string_view path);
  Result<std::vector<CallRow>> CallsTo(std::string_view callee, std::size_t limit = 1000);
  // Files importing exactly `module` (as written in the import), by path then line.
  Result<std::vector<ImportRow>> Importers(std::string_view module, std::size_t limit = 1000);
  // Batch reads for the query engine: one statement for many keys instead of one per key.
  // The symbols whose target id is in `target_ids`, in no particular order; unknown ids are
  // left out. Kept per target id until the store changes, as FindSymbolsMany's answers.
  Result<std::vector<SymbolRow>> GetSymbols(std::span<const std::string> target_ids);
  // For each name in `names`, what FindSymbols(name, limit_per_name) returns, as
  // (name, symbol) pairs grouped by name (names in byte order). This and CallsToMany keep
  // each name's answer until the store changes (see NameCachesValid), so queries after the
  // first read only names not asked before.
  Result<std::vector<std::pair<std::string, SymbolRow>>> FindSymbolsMany(
      std::span<const std::string> names, std::size_t limit_per_name);
  // For each name in `callees`, what CallsTo(name, limit_per_name) returns, grouped by name.
  Result<std::vector<CallRow>> CallsToMany(std::span<const std::string> callees,
                                           std::size_t limit_per_name);
  // The number of symbols named (by `name`, not qualified name) each of `names` that is
  // defined at all, as (name, count) pairs sorted by name. Kept per name until the store
  // changes (as FindSymbolsMany's answers).
  Result<std::vector<std::pair<std::string, std::int64_t>>> DefinitionCounts(
      std::span<const std::string> names);
  // The number of calls to each name in `callees` that is called at all, sorted by name.
  // Kept per name until the store changes, as FindSymbolsMany's answers.
  Result<std::vector<std::pair<std::string, std::int64_t>>> CallCounts(
      std::span<const std::string> callees);
  // (caller symbol id, callee) for the calls made inside the symbols `symbol_ids`, in call
  // order (calls.id).
  Result<std::vector<std::pair<std::int64_t, std::string>>> CalleesOf(
      std::span<const std::int64_t> symbol_ids);
  // The last line of any chunk of `path`; 0 when it has none.
  Result<std::uint32_t> FileLastLine(std::string_view path);
  // The chunks of one file (symbol chunks in symbol order, then the file chunk or windows).
  Result<std::vector<ChunkRow>> FileChunks(std::string_view path);
  Result<std::optional<ChunkRow>> GetChunk(std::int64_t chunk_id);
  // (symbol id, body) of the chunks of the symbols `symbol_ids`, in chunk order; a symbol
  // without a chunk is absent. One statement for all (the query engine's body coverage).
  Result<std::vector<std::pair<std::int64_t, std::string>>> SymbolChunkBodies(
      std::span<const std::int64_t> symbol_ids);

  // BM25 over chunk_fts, best first. An empty match query gives no hits.
  Result<std::vector<ChunkHit>> SearchChunks(std::string_view query,
                                             const SearchOptions& options = {});
  // Substring search over chunk names, paths and bodies (trigram; needs >= 3 characters).
  // kUnsupported when the store has no trigram table.
  Result<std::vector<ChunkHit>> SearchSubstring(std::string_view text, std::size_t limit = 20);
  // BM25 over whole files (every chunk of a file counts as one document), best first: the
  // files whose text as a whole holds the query's words (decision 0094). An empty match query
  // gives no hits. One FTS5 scan of the query's terms, no join per matching row.
  Result<std::vector<FileHit>> SearchFiles(std::string_view query,
                                           const FileSearchOptions& options = {});
  // BM25 over paths and their sub-words, best first.
  Result<std::vector<PathHit>> SearchPaths(std::string_view query, std::size_t limit = 20);

  // Counts for tests and audits.
  Result<std::int64_t> CountRows(std::string_view table);

  // Up to `limit` symbols with id > `after_id`, in id order (keyset paging for resources).
  Result<std::vector<SymbolRow>> ListSymbols(std::int64_t after_id, std::size_t limit);
  // Returns a string that changes whenever an index write changed the store's content: the
  // last run's record and counters over files and chunks. For the query cache key
  // (docs/librarian.md §7.1).
  Result<std::string> Generation();

  bool has_trigram() const { return trigram_; }
  bool schema_rebuilt() const { return schema_rebuilt_; }
  // Runs PRAGMA integrity_check and the FTS5 integrity checks.
  Status IntegrityCheck();
  // The connection, for layers that add their own tables (packs, ledger).
  base::Database& db() { return *db_; }

 private:
  Store(std::unique_ptr<base::Database> db, bool trigram, bool rebuilt);
  // Writes `r`'s rows except its FTS5 entries, which Apply adds for the whole batch; returns
  // the file's id and sets `*added` when the file was not stored before.
  Result<std::int64_t> ReplaceLocked(const FileReplace& r, bool* added);
  Status RemoveLocked(std::string_view path);
  // Adds (or with `remove`, deletes) the chunk_fts and chunk_tri entries of every chunk of
  // `file_ids`, in one statement per index.
  Status ChunkIndexes(std::span<const std::int64_t> file_ids, bool remove);
  // BuildMatchQuery(text) without the terms to which bm25() gives no weight (search.cc).
  Result<std::string> RankedMatchQuery(std::string_view text);
  // The same terms, unquoted.
  Result<std::vector<std::string>> RankedTerms(std::string_view text);
  // Clears the caches below when this connection or another changed the store.
  Status RefreshTermCaches();

  const std::unique_ptr<base::Database> db_;
  // Declared after db_ so its statements are finalized before the connection closes.
  const std::unique_ptr<internal::StatementCache> stmts_;
  const bool trigram_;
  const bool schema_rebuilt_;
  // Document frequencies of chunk_fts terms for RankedMatchQuery, valid while neither this
  // connection (writes_ counts Apply calls) nor another one (PRAGMA data_version) changed the
  // store.
  std::int64_t writes_ = 0;
  std::int64_t df_writes_ = -1;
  std::int64_t df_data_version_ = -1;
  std::int64_t df_rows_ = 0;
  bool vocab_ = false;  // temp.chunk_vocab exists on this connection
  std::unordered_map<std::string, std::int64_t> doc_freq_;
  // Same validity: the tokens of each chunk_fts row (all columns; -1 unknown), by rowid, read
  // once from chunk_fts_docsize for the `trove_bm25` ranking function (search.cc), which
  // otherwise reads them row by row. Registered on this connection once (bm25_registered_).
  Status LoadRowTokens();
  std::vector<std::int32_t> row_tokens_;
  bool row_tokens_loaded_ = false;
  bool bm25_registered_ = false;
  // Same validity, for SearchFiles: each chunk_fts row's file id (-1 unknown), by rowid, each
  // file's tokens (the sum of its rows'), and the mean over files.
  Status LoadChunkFiles();
  std::vector<std::int64_t> chunk_file_;
  std::unordered_map<std::int64_t, double> file_tokens_;
  double file_avg_tokens_ = 0;
  bool chunk_files_loaded_ = false;
  bool freqs_registered_ = false;
  // Same validity: per term, the files holding it and its weighted occurrences in each (by
  // file id), for the column weights term_file_weights_; cleared past kMaxTermFileEntries.
  static constexpr std::size_t kMaxTermFileEntries = std::size_t{1} << 20;
  std::unordered_map<std::string, std::vector<std::pair<std::int64_t, double>>> term_files_;
  std::size_t term_file_entries_ = 0;
  std::array<double, 5> term_file_weights_ = {};
  // Per (limit, name): the rows FindSymbolsMany / CallsToMany gave, valid while neither
  // this connection nor another changed the store (as doc_freq_). Cleared when they grow
  // past kMaxCachedNames entries.
  Status RefreshNameCaches();
  // CalleesOf and SymbolChunkBodies: the rows of `sql` (the JSON array of `ids` bound to ?1;
  // rows of an id and a text), in its order.
  Result<std::vector<std::pair<std::int64_t, std::string>>> TextsOfIds(
      std::span<const std::int64_t> ids, const char* sql);
  // DefinitionCounts and CallCounts: counts per name through `cache`, the names it lacks read
  // by `sql` (their JSON array bound to ?1; rows of name and count; absent names count 0).
  Result<std::vector<std::pair<std::string, std::int64_t>>> CachedCounts(
      std::span<const std::string> names, std::unordered_map<std::string, std::int64_t>& cache,
      const char* sql);
  Result<std::vector<std::pair<std::string, SymbolRow>>> FindSymbolsUncached(
      std::span<const std::string> names, std::size_t limit_per_name);
  Result<std::vector<CallRow>> CallsToUncached(std::span<const std::string> callees,
                                               std::size_t limit_per_name);
  std::int64_t names_writes_ = -1;
  std::int64_t names_data_version_ = -1;
  // ReadSnapshot state: the snapshot open now (0: none; numbered from 1) and the snapshot
  // in which the name caches and the document frequencies were last checked.
  std::int64_t snapshot_ = 0;
  std::int64_t snapshots_begun_ = 0;
  std::int64_t names_checked_in_ = 0;
  std::int64_t df_checked_in_ = 0;
  std::map<std::pair<std::size_t, std::string>, std::vector<SymbolRow>> defs_cache_;
  std::map<std::pair<std::size_t, std::string>, std::vector<CallRow>> calls_cache_;
  // Same validity: CallCounts per name (0 = not called), DefinitionCounts per name (0 = not
  // defined), GetSymbols per target id and GetFile per path (nullopt = not in the store).
  std::unordered_map<std::string, std::int64_t> count_cache_;
  std::unordered_map<std::string, std::int64_t> def_count_cache_;
  std::unordered_map<std::string, std::optional<SymbolRow>> symbol_cache_;
  std::unordered_map<std::string, std::optional<FileRecord>> file_cache_;
};

}  // namespace trove::librarian::store

// Bootstrap: Librarian's indexing pipeline (docs/librarian.md §6, §3.3). Crawls a workspace,
// extracts the files that changed on a private pool of worker threads, and writes them into the
// knowledge store in batched transactions, recording the run.
//
// Store location (docs/librarian.md §6.6): the SQLite file lives at
// `<workspace>/.librarian/librarian.sqlite` (the original's name). Bootstrap creates `.librarian/`
// with a `.gitignore` holding `*`, so the index never shows up in the workspace's own version
// control; the crawler never enters `.librarian/`. BootstrapOptions::store_path overrides the
// location (evaluation copies, benchmarks, read-only workspaces); StorePathFor() gives the default
// so readers (query, resources) open the same file.
//
// Pipeline: Crawl (sorted walk, size/mtime then SHA-256 against the stored manifest) ->
// classify each file added / modified / touched / unchanged / deleted -> extract added and
// modified files (all with `force` or after a schema rebuild) on `workers` threads, the
// calling thread among them, one Extractor each, under the per-file timeout policy
// (crawl/file_timeout.h) -> the calling thread, which extracts only while no result waits,
// applies results in WriteBatches of at most kCheckpointFiles files (or
// kCheckpointInterval), each carrying the run record as a checkpoint (docs/librarian.md §6.4).
// Every batch is one SQLite transaction, so kill -9 at any point leaves a consistent store holding
// every file at either its old or its new state, and the next run resumes from what was committed.
//
// Outcomes:
//   * bad options or workspace (not absolute, missing, not a directory, bad glob, out-of-range
//     numbers) -> kInvalidArgument naming the field ("workspace: not a directory: /x");
//   * another bootstrap holds the store (an flock on `<store file>.lock`, so it holds across
//     processes too) -> kResourceExhausted "workspace: bootstrap already running";
//   * cancelled -> kCancelled; the run is recorded `cancelled` and files committed so far stay;
//   * a store or I/O failure -> that error; the run is recorded `failed` when possible;
//   * otherwise a BootstrapReport. `success` is false only when the timeout policy `fail`
//     stopped the run (state `failed`, `error` naming the file and the limit); skipped,
//     timed-out and failed files do not fail a run.
//
// Thread safety: Bootstrap may run concurrently for different workspaces. `cancel` may be set
// from any thread; `progress` is called on the calling thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "librarian/crawl/file_timeout.h"

namespace trove::librarian::index {

// A checkpoint (one transaction with the run record) at least every this many files...
inline constexpr std::size_t kCheckpointFiles = 100;
// ...or this often (docs/librarian.md §6.4).
inline constexpr std::chrono::minutes kCheckpointInterval{5};

struct BootstrapOptions {
  // Absolute path of the workspace root; canonicalized (symlinks resolved). Wire `workspace`.
  std::string workspace;
  // Re-extract every file, ignoring stored hashes. Wire `force`.
  bool force = false;
  // Globs (crawl/glob.h); empty include keeps every file. Wire `include`, `exclude`.
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  // Process only the first max_files files in sorted order (>= 1). Wire `maxFiles`.
  std::optional<std::uint64_t> max_files;
  // Per-file timeout, retries and policy (docs/librarian.md §6.2). Wire `fileTimeoutMs`,
  // `fileTimeoutRetries`, `fileTimeoutPolicy`.
  crawl::FileTimeoutOptions timeout;
  // `claude` or `codex`: accepted and validated, but v1 generates no LLM summaries; the report
  // then discloses `provider_unavailable`. Wire `llmProvider`.
  std::string llm_provider;

  // Not on the wire:
  // Watch mode (watch/watcher.h): re-index only these workspace-relative paths, files or
  // directories (`/`-separated, normalized). Files under them are crawled, classified and
  // extracted as in a full run, and stored files under them that are no longer discovered are
  // deleted; the rest of the index is left as it is. Not with `max_files`. Unset: the whole
  // workspace.
  std::optional<std::vector<std::string>> only_paths;
  // The SQLite file; empty = StorePathFor(canonical workspace).
  std::string store_path;
  // Extraction threads, the calling thread included (it also writes the store); 0 =
  // base::ThreadPool::DefaultWorkers() (both cores here). 1 extracts on the calling thread
  // alone, in sorted order.
  std::size_t workers = 0;
  // The universal-ctags program; empty disables ctags (text fallback).
  std::string ctags_program = "ctags";
  // Called after each ctags run with whether it succeeded (extract.h ExtractorOptions); from
  // worker threads. Empty: not called.
  std::function<void(bool ok)> on_ctags_run;
  // Files above this are skipped as large (docs/librarian.md §6.1); 0 keeps the crawler's 1 MiB
  // default.
  std::uint64_t max_file_bytes = 0;
  // Whether a new store gets the trigram table (store.h StoreOptions::trigram).
  bool trigram = false;
  // Test hook, run at the start of every extraction attempt with the attempt's limit (0 =
  // none): a non-OK status is that attempt's result (kDeadlineExceeded simulates a timeout).
  // Called on worker threads.
  std::function<Status(std::string_view path, std::int64_t limit_ms)> attempt_hook_for_testing;
};

struct BootstrapStats {
  std::string mode;                    // "full", "incremental", "noop"
  std::uint64_t files_discovered = 0;  // kept by the crawl, after filtering and max_files
  std::uint64_t files_processed = 0;   // read or confirmed unchanged
  std::uint64_t files_unchanged = 0;   // size/mtime equal, or touched with an equal hash
  std::uint64_t files_touched = 0;     // of files_unchanged: re-hashed, only mtime updated
  std::uint64_t files_added = 0;
  std::uint64_t files_modified = 0;
  std::uint64_t files_deleted = 0;
  std::uint64_t files_extracted = 0;  // re-parsed this run (added + modified, or all on force)
  std::uint64_t files_skipped_large = 0;
  std::uint64_t files_skipped_binary = 0;
  std::uint64_t files_skipped_other = 0;  // unreadable, symlinks out or broken, ...
  std::uint64_t files_timed_out = 0;
  std::uint64_t files_failed = 0;
  std::uint64_t timeout_retries = 0;  // attempts beyond the first, end-of-run retries included
  std::uint64_t bytes_extracted = 0;  // content bytes of the extracted files
  // Totals in the store after the run.
  std::uint64_t functions_indexed = 0;  // functions and methods
  std::uint64_t types_indexed = 0;      // classes, structs, interfaces, enums, type aliases
  std::uint64_t modules_indexed = 0;    // namespaces, modules, packages
  std::uint64_t edges = 0;              // import and call references
  std::uint64_t chunks_indexed = 0;
  // Context packs (docs/librarian.md §6.2): one module_context per indexed file plus one
  // function_context per function or method, at most 100 per file. Created = for the files
  // extracted this run.
  std::uint64_t context_packs_created = 0;
  std::uint64_t context_packs_total = 0;
  std::map<std::string, std::uint64_t> languages;   // indexed files per language
  std::map<std::string, std::uint64_t> extractors;  // per "tree_sitter", "ctags", "text"
  bool truncated_by_max_files = false;
  std::uint64_t checkpoints = 0;  // transactions committed carrying the run record
};

struct BootstrapReport {
  bool success = false;
  std::string workspace;   // canonical root
  std::string store_path;  // the SQLite file used
  std::string run_id;      // run_<yyyymmddThhmmssZ>_<4 hex>
  std::string state;       // "succeeded" or "failed" (a cancelled run returns kCancelled)
  std::int64_t duration_ms = 0;
  BootstrapStats stats;
  std::string error;                     // set when !success
  std::vector<std::string> disclosures;  // e.g. "provider_unavailable", "schema_rebuilt"
  std::vector<std::string> timed_out;    // paths recorded timed_out this run
  std::vector<std::string> failed;       // "path: error" for files that failed to extract
  std::vector<std::string> warnings;     // crawl warnings (bad ignore-file lines)
  // Wall milliseconds of the run's phases, in order: "index" (crawl, extraction and store
  // writes), then those that ran of "embeddings" (the optional endpoint), "packs" (the stored
  // packs, while the learned engines learn on another thread) and "learn" (the rest of their
  // learning, and writing them).
  std::vector<std::pair<std::string, std::int64_t>> phase_ms;
};

// Returns `<canonical_workspace>/.librarian/librarian.sqlite`.
std::string StorePathFor(std::string_view canonical_workspace);

// Validates `options` without touching the disk except to resolve the workspace; returns the
// canonical workspace. kInvalidArgument naming the field on bad input.
Result<std::string> ValidateBootstrapOptions(const BootstrapOptions& options);

// Indexes `options.workspace`; see the file comment. `progress` gets (files done, files
// discovered) after every file, monotonically, ending at (total, total) on success.
Result<BootstrapReport> Bootstrap(const BootstrapOptions& options, base::Cancellation& cancel,
                                  const base::Progress& progress);

// What a caller that runs many bootstraps of one workspace with the same options keeps between
// them (watch mode, decision 0078), so that re-indexing one file does not pay each run's setup
// again: the open store (its connection, schema check, prepared statements and page cache; an
// idle connection also spares the WAL checkpoint SQLite runs when a database's last connection
// closes), the extractors (creating them probes ctags, which starts two processes), and whether
// the store holds a C++ source (routing's question, otherwise a scan of every file record).
//
// Each is used only while it is still right: the store while the file at its path is the one
// it opened (same device and inode) and the last run did not fail; the C++ answer while the
// newest run in the store is the last one this session made (no other process wrote since);
// a whole-workspace run (no only_paths) probes ctags again. Reset() drops everything.
//
// Thread safety: one bootstrap at a time may use a session; it holds no transaction between
// runs, so it blocks no other reader or writer.
class BootstrapSession {
 public:
  BootstrapSession();
  ~BootstrapSession();
  BootstrapSession(const BootstrapSession&) = delete;
  BootstrapSession& operator=(const BootstrapSession&) = delete;

  // Closes the store and drops the extractors and the cached answers.
  void Reset();
  // Whether a store connection is held (tests).
  bool holds_store() const;

  struct State;  // bootstrap.cc
  State& state() { return *state_; }

 private:
  std::unique_ptr<State> state_;
};

// As Bootstrap above, reusing and refreshing what `session` holds (null: as above).
Result<BootstrapReport> Bootstrap(const BootstrapOptions& options, base::Cancellation& cancel,
                                  const base::Progress& progress, BootstrapSession* session);

}  // namespace trove::librarian::index

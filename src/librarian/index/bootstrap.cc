#include "librarian/index/bootstrap.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

#include "base/hash.h"
#include "base/rfc3339.h"
#include "base/sqlite.h"
#include "base/thread_pool.h"
#include "librarian/crawl/crawler.h"
#include "librarian/crawl/glob.h"
#include "librarian/crawl/path.h"
#include "librarian/embed/embed.h"
#include "librarian/extract/ctags.h"
#include "librarian/extract/extract.h"
#include "librarian/extract/grammars.h"
#include "librarian/extract/routing.h"
#include "librarian/packs/packs.h"
#include "librarian/query/assoc.h"
#include "librarian/semvec/semvec.h"
#include "librarian/store/store.h"

namespace trove::librarian::index {

struct BootstrapSession::State {
  // The open store, the file it opened (path, device, inode) and whether it may be reused.
  std::unique_ptr<store::Store> store;
  std::string store_path;
  dev_t dev = 0;
  ino_t ino = 0;
  // The extractors (the first made by Extractor::Create, the others its forks) and the ctags
  // program they were made for.
  std::vector<std::unique_ptr<extract::Extractor>> extractors;
  std::string ctags_program;
  // Whether the store holds a C++ source (the routing question of Run::Plan), valid while the
  // newest run in the store is `last_run_id`; nullopt: not known.
  std::optional<bool> has_cpp;
  std::string last_run_id;

  void Reset() {
    store.reset();
    store_path.clear();
    extractors.clear();
    ctags_program.clear();
    has_cpp.reset();
    last_run_id.clear();
  }
};

BootstrapSession::BootstrapSession() : state_(std::make_unique<State>()) {}
BootstrapSession::~BootstrapSession() = default;
void BootstrapSession::Reset() { state_->Reset(); }
bool BootstrapSession::holds_store() const { return state_->store != nullptr; }

namespace {

using Clock = std::chrono::steady_clock;

// Largest file the bootstrap reads (the crawler's cap is configurable up to this).
constexpr std::uint64_t kMaxReadBytes = std::uint64_t{1} << 32;
// Extraction results waiting for the writer, at most, by count and by file bytes; bounds
// memory when writes lag. The queue must hold more than a batch (kCheckpointFiles): while the
// writer applies one batch it takes nothing from the queue, and with a smaller queue the
// workers stood idle for most of every Apply (docs/decisions/0028-librarian-boot.md). One outcome
// is always admitted, whatever its size.
constexpr std::size_t kQueueCapacity = 4 * kCheckpointFiles;
constexpr std::size_t kQueueBytes = std::size_t{64} << 20;
// The bootstrap store's wal_autocheckpoint: 16,384 pages of 4 KiB (StoreOptions).
constexpr int kBootstrapWalCheckpointPages = 16384;
// FTS5 'automerge' of the chunk indexes while a bootstrap writes (store.h WriteBatch): with
// FTS5's default of 4, every entry of a /usr/include bootstrap (83 batches) was rewritten by
// about three merges; with 16, by about one and a half, for about 1.5-2 s less writer CPU and
// 11-12 segments at the end instead of 9 (docs/decisions/0039-librarian-boot3.md).
constexpr int kBootstrapChunkAutomerge = 16;
// Function-context packs per file (docs/librarian.md §6.2).
constexpr std::uint64_t kMaxFunctionPacksPerFile = 100;

std::string NewRunId() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  gmtime_r(&ts.tv_sec, &t);
  return fmt::format("run_{:04}{:02}{:02}T{:02}{:02}{:02}Z_{}", t.tm_year + 1900, t.tm_mon + 1,
                     t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, base::RandomHex(2));
}

// Reads the whole file `abs` (not following a final symlink unless `follow`).
Result<std::string> ReadFile(const std::string& abs, bool follow) {
  int flags = O_RDONLY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
  int fd = open(abs.c_str(), flags);
  if (fd < 0) return Status::Io(fmt::format("{}: cannot open: {}", abs, strerror(errno)));
  std::string out;
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_size > 0 &&
      static_cast<std::uint64_t>(st.st_size) < kMaxReadBytes)
    out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      close(fd);
      return Status::Io(fmt::format("{}: cannot read: {}", abs, strerror(e)));
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > kMaxReadBytes) {
      close(fd);
      return Status::ResourceExhausted(fmt::format("{}: file too large", abs));
    }
  }
  close(fd);
  return out;
}

// An exclusive flock held for the bootstrap's lifetime; released on close.
class LockFile {
 public:
  static Result<LockFile> Acquire(const std::string& path) {
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
      return Status::Io(fmt::format("workspace: cannot open lock {}: {}", path, strerror(errno)));
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      close(fd);
      if (e == EWOULDBLOCK)
        return Status::ResourceExhausted("workspace: bootstrap already running");
      return Status::Io(fmt::format("workspace: cannot lock {}: {}", path, strerror(e)));
    }
    return LockFile(fd);
  }
  LockFile(LockFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  LockFile& operator=(LockFile&&) = delete;
  LockFile(const LockFile&) = delete;
  ~LockFile() {
    if (fd_ >= 0) close(fd_);  // releases the flock
  }

 private:
  explicit LockFile(int fd) : fd_(fd) {}
  int fd_;
};

// Creates `<root>/.librarian/` and its `.gitignore` (docs/librarian.md §6.6).
Status PrepareStoreDir(const std::string& root) {
  std::string dir = root + "/.librarian";
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::Io(fmt::format("workspace: cannot create {}: {}", dir, strerror(errno)));
  }
  std::string ignore = dir + "/.gitignore";
  struct stat st {};
  if (lstat(ignore.c_str(), &st) == 0) return Status::Ok();
  int fd = open(ignore.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return Status::Ok();
    return Status::Io(fmt::format("workspace: cannot create {}: {}", ignore, strerror(errno)));
  }
  bool ok = write(fd, "*\n", 2) == 2;
  close(fd);
  if (!ok) return Status::Io(fmt::format("workspace: cannot write {}", ignore));
  return Status::Ok();
}

std::string ExtractorFamily(std::string_view extractor) {
  if (extractor.rfind("tree-sitter", 0) == 0) return "tree_sitter";
  if (extractor.rfind("ctags", 0) == 0) return "ctags";
  if (extractor.empty()) return "none";
  return "text";
}

nlohmann::json StatsJson(const BootstrapStats& s) {
  return nlohmann::json{
      {"mode", s.mode},
      {"filesDiscovered", s.files_discovered},
      {"filesProcessed", s.files_processed},
      {"filesUnchanged", s.files_unchanged},
      {"filesTouched", s.files_touched},
      {"filesAdded", s.files_added},
      {"filesModified", s.files_modified},
      {"filesDeleted", s.files_deleted},
      {"filesExtracted", s.files_extracted},
      {"filesSkipped",
       {{"large", s.files_skipped_large},
        {"binary", s.files_skipped_binary},
        {"other", s.files_skipped_other}}},
      {"filesTimedOut", s.files_timed_out},
      {"filesFailed", s.files_failed},
      {"timeoutRetries", s.timeout_retries},
      {"bytesExtracted", s.bytes_extracted},
      {"functionsIndexed", s.functions_indexed},
      {"typesIndexed", s.types_indexed},
      {"modulesIndexed", s.modules_indexed},
      {"edges", s.edges},
      {"chunksIndexed", s.chunks_indexed},
      {"contextPacksCreated", s.context_packs_created},
      {"contextPacksTotal", s.context_packs_total},
      {"languages", s.languages},
      {"extractors", s.extractors},
      {"truncatedByMaxFiles", s.truncated_by_max_files},
      {"checkpoints", s.checkpoints},
  };
}

std::uint64_t PacksFor(const extract::FileFacts& facts) {
  std::uint64_t callables = 0;
  for (const extract::Symbol& s : facts.symbols) callables += extract::IsCallable(s.kind) ? 1 : 0;
  return 1 + std::min(callables, kMaxFunctionPacksPerFile);
}

// One file to extract.
struct Job {
  const crawl::FileEntry* entry = nullptr;
  bool stored = false;  // the store holds a record for it
};

// One extraction's outcome, handed from a worker to the writer.
struct Outcome {
  std::size_t job = 0;
  crawl::FileAttempts attempts;
  std::string content;
  std::string sha256;  // of `content` (the file may have changed since the crawl)
  // The file's size and mtime as read: the crawl's figures, or, for a file the crawl left
  // unread, fstat's mtime and the bytes read.
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  // Set when a file the crawl left unread turned out to be one it would have skipped (binary,
  // grown too large, unreadable): Accept records it as Plan records the crawl's skips.
  std::optional<crawl::SkipReason> skip;
  extract::FileFacts facts;
  store::PreparedRows rows;  // derived row text, computed on the worker (store.h)
  bool cancelled = false;    // dropped: the run was cancelled or stopped mid-file
};

// A bounded multi-producer, single-consumer queue of outcomes.
class OutcomeQueue {
 public:
  explicit OutcomeQueue(std::size_t producers) : producers_(producers) {}
  void Push(Outcome outcome) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] {
      return queue_.empty() || (queue_.size() < kQueueCapacity && bytes_ < kQueueBytes);
    });
    bytes_ += outcome.content.size();
    queue_.push_back(std::move(outcome));
    not_empty_.notify_one();
  }
  void ProducerDone() {
    std::lock_guard lock(mu_);
    --producers_;
    not_empty_.notify_all();
  }
  // Takes the oldest outcome if there is one; never waits.
  bool TryPop(Outcome& out) {
    std::lock_guard lock(mu_);
    if (queue_.empty()) return false;
    TakeFront(out);
    return true;
  }
  // Returns false when every producer is done and the queue is empty.
  bool Pop(Outcome& out) {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !queue_.empty() || producers_ == 0; });
    if (queue_.empty()) return false;
    TakeFront(out);
    return true;
  }

 private:
  void TakeFront(Outcome& out) {
    out = std::move(queue_.front());
    queue_.pop_front();
    bytes_ -= out.content.size();
    not_full_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Outcome> queue_;
  std::size_t bytes_ = 0;  // sum of content sizes in queue_
  std::size_t producers_;
};

class Run {
 public:
  Run(const BootstrapOptions& options, std::string root, base::Cancellation& cancel,
      const base::Progress& progress, BootstrapSession::State* session)
      : options_(options),
        root_(std::move(root)),
        cancel_(cancel),
        progress_(progress),
        session_(session) {}

  Result<BootstrapReport> Execute();

 private:
  Status Open();
  // Opens the store, or takes the session's when it is still the file at the store path.
  Status OpenStore();
  // Makes the extractors, or takes the session's (watch mode, same ctags program).
  Status MakeExtractors();
  // Notes what `batch` does to the store's C++ sources (the session's cached answer).
  void NoteCppChanges(const store::WriteBatch& batch);
  // After a run that ended normally: what the session may reuse next time.
  void UpdateSession();
  // Classifies the crawl's files; reads here the unread ones the store has a record of.
  Status Plan(crawl::CrawlResult& crawl);
  // Extracts `jobs` on the workers and writes the outcomes; `final_pass` is the end-of-run
  // retry of deferred files.
  Status ExtractAll(const std::vector<std::size_t>& jobs, bool final_pass);
  // Reads and extracts the next of `jobs` with `extractor`; nullopt when none is left or the
  // run stops. Called on every extraction thread, the calling one included.
  std::optional<Outcome> ExtractNext(extract::Extractor& extractor,
                                     const std::vector<std::size_t>& jobs,
                                     std::atomic<std::size_t>& next, bool final_pass);
  Status Accept(Outcome& outcome, bool final_pass);
  // Records a file the crawl left unread and the worker found it would have skipped.
  void AcceptSkip(const Outcome& outcome);
  // Whether `f` is a C++ source (routing: C/C++ headers are C++ in such a workspace). A file
  // the crawl left unread is probed for the crawl's binary check first.
  bool CppSource(const crawl::FileEntry& f) const;
  Status Flush(bool force_checkpoint);
  Status Finish(const std::string& state);
  Status Totals();
  // Watch mode: the totals of the run just before this one when it recorded them (it finished,
  // succeeded, and nothing ran since), else nullopt; and what the files under only_paths
  // contribute to the totals now.
  Result<std::optional<BootstrapStats>> CarriedTotals();
  Result<BootstrapStats> Contribution();
  // Whether `extractor` (a stored FileFacts::extractor) names a grammar or ctags version other
  // than the one linked or installed now.
  bool OutdatedExtractor(std::string_view extractor) const;
  // Whether `path` is inside BootstrapOptions::only_paths (always true when unset).
  bool InOnlyPaths(std::string_view path) const;
  // Whether the store holds a learned association model (query/assoc.h).
  Result<bool> HasAssocModel();
  // The optional embeddings engine (embed/embed.h): embeds the functions (of only_paths, in
  // watch mode) whose vector for the model is missing or was computed from another span, and
  // stores them. Returns how many were embedded.
  Result<std::size_t> EmbedFunctions(const embed::Config& config);
  void ReportProgress() {
    progress_.Report(static_cast<double>(done_), static_cast<double>(progress_total_));
  }

  const BootstrapOptions& options_;
  const std::string root_;
  base::Cancellation& cancel_;
  const base::Progress& progress_;
  BootstrapSession::State* const session_;  // null without a session
  const Clock::time_point start_ = Clock::now();

  BootstrapReport report_;
  // The store: owned_store_, or the session's.
  std::unique_ptr<store::Store> owned_store_;
  store::Store* store_ = nullptr;
  std::map<std::string, store::FileRecord, std::less<>> previous_;
  // The extractors: own_extractors_, or the session's.
  std::vector<std::unique_ptr<extract::Extractor>> own_extractors_;
  std::vector<std::unique_ptr<extract::Extractor>>* extractors_ = &own_extractors_;
  store::RunRecord run_;
  bool workspace_has_cpp_ = false;
  // The run id newest in the store when this run opened it (session validity).
  std::string newest_run_before_;
  // The store's answer to "holds a C++ source" before this run, when it was asked (watch mode);
  // and whether this run wrote a C++ source record or removed (or re-recorded as something
  // else) one.
  std::optional<bool> store_cpp_;
  bool wrote_cpp_ = false;
  bool dropped_cpp_ = false;
  bool force_ = false;
  crawl::CrawlOptions crawl_options_;
  // Watch mode (CarriedTotals, Contribution): the previous run's totals and the batch's
  // contribution to them before this run wrote anything.
  std::optional<BootstrapStats> carried_;
  BootstrapStats before_;

  std::vector<Job> jobs_;
  std::vector<std::size_t> deferred_;
  std::atomic<bool> stop_{false};  // kFail: stop handing out files
  std::uint64_t done_ = 0;
  // Files listed by the crawl (the progress total); a file left unread that turns out to be
  // skipped counts as done without counting in stats.files_discovered.
  std::uint64_t progress_total_ = 0;

  // The batch being built and the outcomes it points into.
  store::WriteBatch batch_;
  std::deque<Outcome> pending_;
  std::size_t pending_files_ = 0;
  Clock::time_point last_checkpoint_ = Clock::now();
};

Status Run::OpenStore() {
  struct stat st {};
  const bool exists = stat(report_.store_path.c_str(), &st) == 0;
  if (session_ != nullptr && session_->store != nullptr && exists &&
      session_->store_path == report_.store_path && session_->dev == st.st_dev &&
      session_->ino == st.st_ino) {
    store_ = session_->store.get();
    return Status::Ok();
  }
  if (session_ != nullptr) session_->Reset();
  store::StoreOptions so;
  so.trigram = options_.trigram;
  // A bootstrap writes the whole store in a few minutes at most: checkpoint every 64 MiB of
  // WAL instead of every 4 MiB (fewer page copies and syncs on the writer thread,
  // docs/decisions/0028-librarian-boot.md).
  so.wal_autocheckpoint_pages = kBootstrapWalCheckpointPages;
  ASSIGN_OR_RETURN(owned_store_, store::Store::Open(report_.store_path, so));
  store_ = owned_store_.get();
  if (owned_store_->schema_rebuilt()) {
    force_ = true;
    report_.disclosures.push_back("schema_rebuilt");
  }
  if (session_ != nullptr && stat(report_.store_path.c_str(), &st) == 0) {
    session_->store = std::move(owned_store_);
    session_->store_path = report_.store_path;
    session_->dev = st.st_dev;
    session_->ino = st.st_ino;
  }
  return Status::Ok();
}

Status Run::MakeExtractors() {
  std::size_t workers =
      options_.workers == 0 ? base::ThreadPool::DefaultWorkers() : options_.workers;
  if (session_ != nullptr) {
    // A whole-workspace run probes ctags again (it may have been upgraded meanwhile).
    if (!options_.only_paths || session_->ctags_program != options_.ctags_program) {
      session_->extractors.clear();
    }
    session_->ctags_program = options_.ctags_program;
    extractors_ = &session_->extractors;
  }
  std::vector<std::unique_ptr<extract::Extractor>>& ex = *extractors_;
  if (ex.empty()) {
    extract::ExtractorOptions eo;
    eo.ctags_program = options_.ctags_program;
    eo.on_ctags_run = options_.on_ctags_run;
    eo.timeout_ms = options_.timeout.timeout_ms;
    // One ctags probe for all workers (Extractor::Fork).
    ASSIGN_OR_RETURN(std::unique_ptr<extract::Extractor> first, extract::Extractor::Create(eo));
    ex.push_back(std::move(first));
  }
  if (ex.size() > workers) ex.resize(workers);
  while (ex.size() < workers) ex.push_back(ex.front()->Fork());
  // The file time limit is set on every attempt (RunFileWithTimeouts); this is the default.
  for (auto& e : ex) e->set_timeout_ms(options_.timeout.timeout_ms);
  return Status::Ok();
}

void Run::NoteCppChanges(const store::WriteBatch& batch) {
  for (const store::FileReplace& r : batch.replace) {
    if (!extract::IsCppSourcePath(r.file.path)) continue;
    (r.file.language == "cpp" ? wrote_cpp_ : dropped_cpp_) = true;
  }
  for (const std::string& path : batch.remove) {
    if (extract::IsCppSourcePath(path)) dropped_cpp_ = true;
  }
}

void Run::UpdateSession() {
  if (session_ == nullptr) return;
  session_->last_run_id = run_.run_id;
  if (wrote_cpp_) {
    session_->has_cpp = true;
  } else if (dropped_cpp_ || !options_.only_paths) {
    session_->has_cpp.reset();
  } else {
    session_->has_cpp = store_cpp_;
  }
}

Status Run::Open() {
  report_.workspace = root_;
  report_.store_path = options_.store_path.empty() ? StorePathFor(root_) : options_.store_path;
  force_ = options_.force;
  RETURN_IF_ERROR(OpenStore());
  // A run still `running` was killed (this process holds the lock, so none is live): close it
  // as failed. Its committed files stay and this run resumes from them.
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     store_->db().Prepare("UPDATE runs SET state = 'failed', finished_at = ?1 "
                                          "WHERE state = 'running'"));
    RETURN_IF_ERROR(st.Bind(1, std::string_view(base::NowRfc3339())));
    RETURN_IF_ERROR(st.Step());
    if (store_->db().Changes() > 0) report_.disclosures.push_back("interrupted_run_recovered");
  }
  if (session_ != nullptr) {
    ASSIGN_OR_RETURN(base::Statement st,
                     store_->db().Prepare("SELECT run_id FROM runs ORDER BY id DESC LIMIT 1"));
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (row) newest_run_before_ = st.ColumnText(0);
  }
  // A watch re-index reads only the records under its paths (an index range each), and takes
  // the store's totals as the previous run left them, corrected by what the batch changes
  // (Totals): its cost follows the batch, not the workspace (decision 0070).
  std::vector<store::FileRecord> files;
  if (options_.only_paths) {
    ASSIGN_OR_RETURN(files, store_->ListFilesUnder(*options_.only_paths));
    ASSIGN_OR_RETURN(carried_, CarriedTotals());
    if (carried_) {
      ASSIGN_OR_RETURN(before_, Contribution());
    }
  } else {
    ASSIGN_OR_RETURN(files, store_->ListFiles());
  }
  for (store::FileRecord& f : files) {
    std::string path = f.path;
    previous_.emplace(std::move(path), std::move(f));
  }
  if (!options_.llm_provider.empty()) report_.disclosures.push_back("provider_unavailable");

  RETURN_IF_ERROR(MakeExtractors());

  report_.run_id = NewRunId();
  run_.run_id = report_.run_id;
  run_.state = "running";
  run_.mode = force_ ? "full" : "incremental";
  run_.started_at = base::NowRfc3339();
  nlohmann::json opts{
      {"force", options_.force},
      {"include", options_.include},
      {"exclude", options_.exclude},
      {"fileTimeoutMs", options_.timeout.timeout_ms},
      {"fileTimeoutRetries", options_.timeout.retries},
      {"fileTimeoutPolicy", crawl::FileTimeoutPolicyName(options_.timeout.policy)},
  };
  if (options_.max_files) opts["maxFiles"] = *options_.max_files;
  if (options_.only_paths) opts["watchPaths"] = options_.only_paths->size();
  if (!options_.llm_provider.empty()) opts["llmProvider"] = options_.llm_provider;
  run_.options_json = opts.dump();
  nlohmann::json tools = nlohmann::json::object();
  int count = 0;
  const extract::GrammarInfo* grammars = extract::Grammars(&count);
  for (int i = 0; i < count; ++i) {
    tools[std::string(grammars[i].npm_package)] = std::string(grammars[i].version);
  }
  if (const extract::Ctags* ctags = extractors_->front()->ctags())
    tools["ctags"] = ctags->version();
  run_.tool_versions_json = tools.dump();
  run_.stats_json = "{}";
  store::WriteBatch start;
  start.run = run_;
  // Fewer FTS5 merges while this run writes its batches; Finish restores the default.
  start.chunk_automerge = kBootstrapChunkAutomerge;
  return store_->Apply(start);
}

Result<std::size_t> Run::EmbedFunctions(const embed::Config& config) {
  base::Database& db = store_->db();
  RETURN_IF_ERROR(embed::EnsureTable(db));
  std::unordered_map<std::string, std::string> have;
  {
    ASSIGN_OR_RETURN(auto hashes, embed::StoredHashes(db, config.model));
    for (auto& [t, h] : hashes) have.emplace(std::move(t), std::move(h));
  }
  struct Pending {
    std::string target_id, path, span_sha256, text;
  };
  std::vector<Pending> pending;
  ASSIGN_OR_RETURN(
      base::Statement st,
      db.Prepare(fmt::format(
          "SELECT s.target_id, f.path, s.span_sha256, s.qualified_name, s.signature, s.doc, "
          "coalesce((SELECT substr(c.body, 1, 600) FROM chunks c WHERE c.symbol_id = s.id LIMIT "
          "1), '') FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.kind IN ('function', "
          "'method'){}",
          options_.only_paths ? " AND (f.path = ?1 OR (f.path >= ?1 || '/' AND f.path < ?1 || "
                                "'0'))"
                              : "")));
  const std::size_t rounds = options_.only_paths ? options_.only_paths->size() : 1;
  for (std::size_t i = 0; i < rounds; ++i) {
    st.Reset();
    if (options_.only_paths)
      RETURN_IF_ERROR(st.Bind(1, std::string_view((*options_.only_paths)[i])));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      std::string target = st.ColumnText(0);
      std::string span = st.ColumnText(2);
      if (auto it = have.find(target); it != have.end() && it->second == span) continue;
      pending.push_back(Pending{std::move(target), st.ColumnText(1), std::move(span),
                                embed::FunctionSummary(st.ColumnText(3), st.ColumnText(4),
                                                       st.ColumnText(5), st.ColumnText(6))});
    }
  }
  if (pending.empty()) return std::size_t{0};
  std::vector<std::string> texts;
  texts.reserve(pending.size());
  for (const Pending& p : pending) texts.push_back(p.text);
  embed::Client client(config);
  ASSIGN_OR_RETURN(std::vector<embed::Vector> vectors, client.Embed(texts, cancel_));
  std::vector<embed::Stored> rows;
  rows.reserve(pending.size());
  for (std::size_t i = 0; i < pending.size(); ++i) {
    rows.push_back(embed::Stored{std::move(pending[i].target_id), std::move(pending[i].path),
                                 std::move(pending[i].span_sha256), std::move(vectors[i])});
  }
  RETURN_IF_ERROR(embed::Save(db, config.model, rows));
  return rows.size();
}

Result<bool> Run::HasAssocModel() {
  ASSIGN_OR_RETURN(base::Statement st, store_->db().Prepare("SELECT 1 FROM meta WHERE key = ?1"));
  RETURN_IF_ERROR(st.Bind(1, query::kAssocModelIdKey));
  return st.Step();
}

bool Run::InOnlyPaths(std::string_view path) const {
  if (!options_.only_paths) return true;
  for (const std::string& p : *options_.only_paths) {
    if (path.size() >= p.size() && path.compare(0, p.size(), p) == 0 &&
        (path.size() == p.size() || path[p.size()] == '/')) {
      return true;
    }
  }
  return false;
}

bool Run::OutdatedExtractor(std::string_view extractor) const {
  if (extractor.rfind("tree-sitter:", 0) == 0) {
    std::string_view rest = extractor.substr(std::string_view("tree-sitter:").size());
    std::size_t at = rest.find('@');
    if (at == std::string_view::npos) return true;
    int count = 0;
    const extract::GrammarInfo* grammars = extract::Grammars(&count);
    for (int i = 0; i < count; ++i) {
      if (grammars[i].name == rest.substr(0, at)) return grammars[i].version != rest.substr(at + 1);
    }
    return true;  // a grammar no longer linked
  }
  if (extractor.rfind("ctags@", 0) == 0) {
    const extract::Ctags* ctags = extractors_->front()->ctags();
    return ctags == nullptr || extractor.substr(6) != ctags->version();
  }
  return false;
}

Status Run::Plan(crawl::CrawlResult& crawl) {
  BootstrapStats& s = report_.stats;
  // The crawl left unread every file without a reusable record (defer_new_files). Those the
  // store holds some record of (failed, timed out, skipped, stale) are read here, as the crawl
  // would have read them, so that a skip that did not change writes nothing; only files new to
  // the store are read on the workers.
  {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < crawl.files.size(); ++i) {
      crawl::FileEntry& f = crawl.files[i];
      if (f.unread && previous_.count(f.path) != 0) {
        crawl::CandidateRead read =
            crawl::ReadCandidate(root_ + "/" + f.path, f.symlink, crawl_options_.max_file_bytes,
                                 crawl_options_.binary_probe_bytes);
        if (read.skip) {
          crawl.skipped.push_back(crawl::SkippedEntry{
              .path = std::move(f.path), .reason = *read.skip, .detail = std::move(read.detail)});
          continue;
        }
        f.sha256 = base::Sha256Hex(read.content);
        f.size = read.content.size();
        f.mtime_ns = read.mtime_ns;
        f.unread = false;
      }
      if (kept != i) crawl.files[kept] = std::move(f);
      ++kept;
    }
    crawl.files.resize(kept);
  }
  s.files_discovered = crawl.files.size();
  progress_total_ = crawl.files.size();
  s.truncated_by_max_files = crawl.truncated;
  report_.warnings = crawl.warnings;
  for (const crawl::FileEntry& f : crawl.files) {
    if (CppSource(f)) {
      workspace_has_cpp_ = true;
      break;
    }
  }
  if (options_.only_paths && !workspace_has_cpp_) {
    // Watch mode crawled only the changed paths: the rest of the workspace is in the store.
    // The session's answer holds while no other run wrote the store since the one it noted
    // (a scan of every file record otherwise: tens of ms on 10,000 files).
    if (session_ != nullptr && session_->has_cpp && !newest_run_before_.empty() &&
        session_->last_run_id == newest_run_before_) {
      store_cpp_ = *session_->has_cpp;
    } else {
      store_cpp_ = false;
      ASSIGN_OR_RETURN(base::Statement st,
                       store_->db().Prepare("SELECT path FROM files WHERE language = 'cpp'"));
      for (;;) {
        ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        if (extract::IsCppSourcePath(st.ColumnText(0))) {
          store_cpp_ = true;
          break;
        }
      }
    }
    workspace_has_cpp_ = *store_cpp_;
  }

  std::set<std::string, std::less<>> present;
  for (const crawl::FileEntry& f : crawl.files) present.insert(f.path);
  for (const crawl::SkippedEntry& k : crawl.skipped) {
    store::FileStatus status;
    if (k.reason == crawl::SkipReason::kLarge) {
      ++s.files_skipped_large;
      status = store::FileStatus::kSkippedLarge;
    } else if (k.reason == crawl::SkipReason::kBinary) {
      ++s.files_skipped_binary;
      status = store::FileStatus::kSkippedBinary;
    } else {
      ++s.files_skipped_other;
      continue;  // unreadable or not a file we keep: dropped from the index below
    }
    present.insert(k.path);
    auto it = previous_.find(k.path);
    if (it != previous_.end() && it->second.status == status) continue;
    store::FileReplace r;
    r.file.path = k.path;
    r.file.status = status;
    r.file.run_id = run_.run_id;
    batch_.replace.push_back(std::move(r));
  }

  // Vanished files; with max_files, only those sorted before the last kept path (docs/librarian.md
  // §6.1: a truncated run deletes nothing beyond the limit).
  for (const auto& [path, record] : previous_) {
    if (present.count(path) != 0) continue;
    if (!InOnlyPaths(path)) continue;  // watch mode: outside what this run looked at
    if (crawl.truncated && (crawl.files.empty() || path > crawl.files.back().path)) continue;
    batch_.remove.push_back(path);
    ++s.files_deleted;
  }

  for (const crawl::FileEntry& f : crawl.files) {
    auto it = previous_.find(f.path);
    const bool stored = it != previous_.end();
    const bool reusable = stored && !it->second.stale &&
                          (it->second.status == store::FileStatus::kIndexed ||
                           it->second.status == store::FileStatus::kUnchanged);
    bool extract = force_;
    if (reusable && OutdatedExtractor(it->second.extractor)) {
      // docs/librarian.md §6.3: a new extractor or grammar version re-extracts that language.
      ++s.files_modified;
      extract = true;
    } else if (!reusable) {
      stored ? ++s.files_modified : ++s.files_added;
      extract = true;
    } else if (f.change == crawl::FileChange::kModified || f.sha256 != it->second.sha256) {
      ++s.files_modified;
      extract = true;
    } else {
      ++s.files_unchanged;
      if (f.change == crawl::FileChange::kTouched || f.size != it->second.size ||
          f.mtime_ns != it->second.mtime_ns) {
        ++s.files_touched;
        if (!extract) {
          batch_.touch.push_back(store::FileTouch{f.path, f.size, f.mtime_ns, run_.run_id});
        }
      }
    }
    if (extract) {
      jobs_.push_back(Job{&f, stored});
    } else {
      ++s.files_processed;
      ++done_;
    }
  }
  if (force_ || previous_.empty()) {
    s.mode = "full";
  } else if (jobs_.empty() && batch_.touch.empty() && batch_.remove.empty() &&
             batch_.replace.empty()) {
    s.mode = "noop";
  } else {
    s.mode = "incremental";
  }
  run_.mode = s.mode;
  ReportProgress();
  return Flush(/*force_checkpoint=*/true);
}

bool Run::CppSource(const crawl::FileEntry& f) const {
  if (!extract::IsCppSourcePath(f.path)) return false;
  if (!f.unread) return true;
  // The crawl would have left a binary C++ file out of the list; probe it as it would have.
  return !crawl::ReadCandidate(root_ + "/" + f.path, f.symlink, crawl_options_.max_file_bytes,
                               crawl_options_.binary_probe_bytes)
              .skip.has_value();
}

std::optional<Outcome> Run::ExtractNext(extract::Extractor& extractor,
                                        const std::vector<std::size_t>& jobs,
                                        std::atomic<std::size_t>& next, bool final_pass) {
  if (cancel_.requested() || stop_.load(std::memory_order_acquire)) return std::nullopt;
  std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
  if (i >= jobs.size()) return std::nullopt;
  const Job& job = jobs_[jobs[i]];
  Outcome out;
  out.job = jobs[i];
  const std::string& path = job.entry->path;
  if (job.entry->unread) {
    // The crawl left this new file to be read here, once, with its checks (crawler.h).
    crawl::CandidateRead read =
        crawl::ReadCandidate(root_ + "/" + path, job.entry->symlink, crawl_options_.max_file_bytes,
                             crawl_options_.binary_probe_bytes);
    if (read.skip) {
      out.skip = read.skip;
      return out;
    }
    out.content = std::move(read.content);
    out.size = out.content.size();
    out.mtime_ns = read.mtime_ns;
  } else {
    Result<std::string> content = ReadFile(root_ + "/" + path, job.entry->symlink);
    if (!content.ok()) {
      out.attempts.verdict = crawl::FileVerdict::kFailed;
      out.attempts.last = content.status();
      return out;
    }
    out.content = std::move(*content);
    out.size = job.entry->size;
    out.mtime_ns = job.entry->mtime_ns;
  }
  out.sha256 = base::Sha256Hex(out.content);
  extract::Routing routing = extractor.Route(path, workspace_has_cpp_);
  out.attempts = crawl::RunFileWithTimeouts(
      options_.timeout,
      [&](std::int64_t limit_ms) -> Status {
        if (options_.attempt_hook_for_testing) {
          RETURN_IF_ERROR(options_.attempt_hook_for_testing(path, limit_ms));
        }
        extractor.set_timeout_ms(limit_ms);
        Result<extract::FileFacts> facts = extractor.Extract(path, out.content, routing, &cancel_);
        if (!facts.ok()) return facts.status();
        out.facts = std::move(*facts);
        return Status::Ok();
      },
      final_pass);
  if (out.attempts.verdict == crawl::FileVerdict::kDone) {
    out.rows = store::PrepareRows(path, out.facts, out.content);
  }
  if (out.attempts.verdict != crawl::FileVerdict::kDone &&
      out.attempts.last.code() == base::StatusCode::kCancelled) {
    out.cancelled = true;
  }
  // kFail: hand out no further file, whatever the writer is doing.
  if (out.attempts.verdict == crawl::FileVerdict::kFailRun) {
    stop_.store(true, std::memory_order_release);
  }
  return out;
}

Status Run::ExtractAll(const std::vector<std::size_t>& jobs, bool final_pass) {
  if (jobs.empty()) return Status::Ok();
  // The calling thread is one of the extraction threads: it writes whenever an outcome is
  // waiting and extracts a file itself otherwise, so `threads` threads keep `threads` cores
  // busy (a dedicated writer beside them oversubscribed the cores and, as the slowest of the
  // three, made the others wait on a full queue: docs/decisions/0039-librarian-boot3.md).
  const std::size_t threads = std::min(extractors_->size(), jobs.size());
  const std::size_t helpers = threads - 1;
  OutcomeQueue queue(helpers);
  std::atomic<std::size_t> next{0};
  Status status;
  auto accept = [&](Outcome& outcome) {
    if (!status.ok()) return;  // drain so the helpers can finish
    status = Accept(outcome, final_pass);
    if (!status.ok()) stop_.store(true, std::memory_order_release);
  };
  {
    base::ThreadPool pool(helpers);
    for (std::size_t w = 0; w < helpers; ++w) {
      pool.Submit([&, w] {
        while (std::optional<Outcome> out =
                   ExtractNext(*(*extractors_)[w], jobs, next, final_pass)) {
          queue.Push(std::move(*out));
        }
        queue.ProducerDone();
      });
    }
    extract::Extractor& own = *(*extractors_)[helpers];
    Outcome outcome;
    bool own_jobs = true;
    for (;;) {
      if (queue.TryPop(outcome)) {
        accept(outcome);
        continue;
      }
      if (own_jobs) {
        std::optional<Outcome> out = ExtractNext(own, jobs, next, final_pass);
        if (out) {
          accept(*out);
          continue;
        }
        own_jobs = false;
      }
      if (!queue.Pop(outcome)) break;
      accept(outcome);
    }
    pool.Wait();
  }
  RETURN_IF_ERROR(status);
  return Flush(/*force_checkpoint=*/true);
}

Status Run::Accept(Outcome& outcome, bool final_pass) {
  BootstrapStats& s = report_.stats;
  const Job& job = jobs_[outcome.job];
  const std::string& path = job.entry->path;
  if (outcome.cancelled) return Status::Ok();  // untouched: the next run picks it up
  if (outcome.skip) {
    AcceptSkip(outcome);
    return Flush(/*force_checkpoint=*/false);
  }
  const crawl::FileAttempts& a = outcome.attempts;
  if (a.attempts > 1) s.timeout_retries += static_cast<std::uint64_t>(a.attempts - 1);
  if (final_pass) s.timeout_retries += 1;

  // A file whose extraction did not finish keeps its previous rows, marked stale (docs/librarian.md
  // §6.2); a new one gets a bare record with the status.
  auto keep_previous = [&](store::FileStatus status) {
    if (job.stored) {
      batch_.mark.push_back(store::FileMark{path, status, true});
      return;
    }
    store::FileReplace r;
    r.file.path = path;
    r.file.sha256 = outcome.sha256;
    r.file.size = outcome.size;
    r.file.mtime_ns = outcome.mtime_ns;
    r.file.status = status;
    r.file.run_id = run_.run_id;
    batch_.replace.push_back(std::move(r));
  };

  switch (a.verdict) {
    case crawl::FileVerdict::kDone: {
      ++s.files_extracted;
      ++s.files_processed;
      s.bytes_extracted += outcome.content.size();
      s.context_packs_created += PacksFor(outcome.facts);
      pending_.push_back(std::move(outcome));
      Outcome& o = pending_.back();
      store::FileReplace r;
      r.file.path = path;
      r.file.sha256 = o.sha256;
      r.file.language = o.facts.language;
      r.file.extractor = o.facts.extractor;
      r.file.size = o.size;
      r.file.mtime_ns = o.mtime_ns;
      r.file.status = store::FileStatus::kIndexed;
      r.file.parse_error = o.facts.parse_error;
      r.file.run_id = run_.run_id;
      r.facts = &o.facts;
      r.content = o.content;
      r.prepared = &o.rows;
      batch_.replace.push_back(std::move(r));
      break;
    }
    case crawl::FileVerdict::kDeferred:
      deferred_.push_back(outcome.job);
      return Status::Ok();  // not done yet: no progress
    case crawl::FileVerdict::kTimedOut:
      ++s.files_timed_out;
      ++s.files_processed;
      report_.timed_out.push_back(path);
      keep_previous(store::FileStatus::kTimedOut);
      break;
    case crawl::FileVerdict::kFailRun:
      ++s.files_timed_out;
      ++s.files_processed;
      report_.timed_out.push_back(path);
      keep_previous(store::FileStatus::kTimedOut);
      if (report_.error.empty()) {
        report_.error = fmt::format("{}: timed out after {} ms (fileTimeoutPolicy fail)", path,
                                    options_.timeout.timeout_ms);
      }
      stop_.store(true, std::memory_order_release);
      break;
    case crawl::FileVerdict::kFailed:
      ++s.files_failed;
      ++s.files_processed;
      report_.failed.push_back(fmt::format("{}: {}", path, a.last.message()));
      keep_previous(store::FileStatus::kFailed);
      break;
  }
  ++pending_files_;
  ++done_;
  ReportProgress();
  return Flush(/*force_checkpoint=*/false);
}

void Run::AcceptSkip(const Outcome& outcome) {
  // Undo what Plan counted for a listed file, then record the skip as Plan records the
  // crawl's own skips. Such a file is new to the store (Plan read the others itself).
  BootstrapStats& s = report_.stats;
  const std::string& path = jobs_[outcome.job].entry->path;
  --s.files_discovered;
  --s.files_added;
  ++done_;
  ReportProgress();
  store::FileStatus status;
  if (*outcome.skip == crawl::SkipReason::kLarge) {
    ++s.files_skipped_large;
    status = store::FileStatus::kSkippedLarge;
  } else if (*outcome.skip == crawl::SkipReason::kBinary) {
    ++s.files_skipped_binary;
    status = store::FileStatus::kSkippedBinary;
  } else {
    ++s.files_skipped_other;  // unreadable or no longer a regular file: not indexed
    return;
  }
  store::FileReplace r;
  r.file.path = path;
  r.file.status = status;
  r.file.run_id = run_.run_id;
  batch_.replace.push_back(std::move(r));
}

Status Run::Flush(bool force_checkpoint) {
  const bool empty = batch_.replace.empty() && batch_.touch.empty() && batch_.mark.empty() &&
                     batch_.remove.empty();
  if (empty) return Status::Ok();
  const bool due =
      pending_files_ >= kCheckpointFiles || Clock::now() - last_checkpoint_ >= kCheckpointInterval;
  if (!due && !force_checkpoint) return Status::Ok();
  ++report_.stats.checkpoints;
  run_.stats_json = StatsJson(report_.stats).dump();
  batch_.run = run_;
  NoteCppChanges(batch_);
  Status st = store_->Apply(batch_);
  batch_ = store::WriteBatch{};
  pending_.clear();
  pending_files_ = 0;
  last_checkpoint_ = Clock::now();
  return st;
}

namespace {

// Adds (sign 1) or subtracts (sign -1) `d`'s totals to `s`'s.
void AddTotals(BootstrapStats& s, const BootstrapStats& d, int sign) {
  auto add = [sign](std::uint64_t& a, std::uint64_t b) {
    a = sign > 0 ? a + b : a - std::min(a, b);
  };
  add(s.functions_indexed, d.functions_indexed);
  add(s.types_indexed, d.types_indexed);
  add(s.modules_indexed, d.modules_indexed);
  add(s.edges, d.edges);
  add(s.chunks_indexed, d.chunks_indexed);
  add(s.context_packs_total, d.context_packs_total);
  for (const auto& [k, v] : d.languages) add(s.languages[k], v);
  for (const auto& [k, v] : d.extractors) add(s.extractors[k], v);
  std::erase_if(s.languages, [](const auto& kv) { return kv.second == 0; });
  std::erase_if(s.extractors, [](const auto& kv) { return kv.second == 0; });
}

}  // namespace

Result<std::optional<BootstrapStats>> Run::CarriedTotals() {
  ASSIGN_OR_RETURN(base::Statement st,
                   store_->db().Prepare("SELECT state, stats FROM runs ORDER BY id DESC LIMIT 1"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row || st.ColumnText(0) != "succeeded") return std::optional<BootstrapStats>();
  nlohmann::json j = nlohmann::json::parse(st.ColumnText(1), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::optional<BootstrapStats>();
  BootstrapStats s;
  for (const auto& [key, field] :
       {std::pair{"functionsIndexed", &s.functions_indexed},
        std::pair{"typesIndexed", &s.types_indexed},
        std::pair{"modulesIndexed", &s.modules_indexed}, std::pair{"edges", &s.edges},
        std::pair{"chunksIndexed", &s.chunks_indexed},
        std::pair{"contextPacksTotal", &s.context_packs_total}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return std::optional<BootstrapStats>();
    *field = it->get<std::uint64_t>();
  }
  for (const auto& [key, field] :
       {std::pair{"languages", &s.languages}, std::pair{"extractors", &s.extractors}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_object()) return std::optional<BootstrapStats>();
    for (const auto& [k, v] : it->items()) {
      if (!v.is_number_unsigned()) return std::optional<BootstrapStats>();
      (*field)[k] = v.get<std::uint64_t>();
    }
  }
  return std::optional<BootstrapStats>(std::move(s));
}

Result<BootstrapStats> Run::Contribution() {
  // As Totals, restricted to the files at or under each of only_paths (an index range each).
  BootstrapStats s;
  base::Database& db = store_->db();
  constexpr const char* kUnder = "(f.path = ?1 OR (f.path >= ?1 || '/' AND f.path < ?1 || '0'))";
  ASSIGN_OR_RETURN(base::Statement files,
                   db.Prepare(fmt::format("SELECT f.id, f.language, f.extractor, f.status IN "
                                          "('indexed', 'unchanged') FROM files f WHERE {}",
                                          kUnder)));
  ASSIGN_OR_RETURN(base::Statement kinds,
                   db.Prepare("SELECT kind, count(*) FROM symbols WHERE file_id = ?1 GROUP BY "
                              "kind"));
  ASSIGN_OR_RETURN(base::Statement rows,
                   db.Prepare("SELECT (SELECT count(*) FROM imports WHERE file_id = ?1), (SELECT "
                              "count(*) FROM calls WHERE file_id = ?1), (SELECT count(*) FROM "
                              "chunks WHERE file_id = ?1)"));
  for (const std::string& p : *options_.only_paths) {
    files.Reset();
    RETURN_IF_ERROR(files.Bind(1, std::string_view(p)));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, files.Step());
      if (!row) break;
      const std::int64_t id = files.ColumnInt64(0);
      if (files.ColumnInt64(3) != 0) {
        ++s.languages[files.ColumnText(1)];
        ++s.extractors[ExtractorFamily(files.ColumnText(2))];
        ++s.context_packs_total;
      }
      kinds.Reset();
      RETURN_IF_ERROR(kinds.Bind(1, id));
      std::uint64_t callables = 0;
      for (;;) {
        ASSIGN_OR_RETURN(bool k, kinds.Step());
        if (!k) break;
        std::string kind = kinds.ColumnText(0);
        auto n = static_cast<std::uint64_t>(kinds.ColumnInt64(1));
        if (kind == "function" || kind == "method") {
          s.functions_indexed += n;
          callables += n;
        } else if (kind == "namespace") {
          s.modules_indexed += n;
        } else {
          s.types_indexed += n;
        }
      }
      s.context_packs_total += std::min(callables, kMaxFunctionPacksPerFile);
      rows.Reset();
      RETURN_IF_ERROR(rows.Bind(1, id));
      ASSIGN_OR_RETURN(bool r, rows.Step());
      if (r) {
        s.edges += static_cast<std::uint64_t>(rows.ColumnInt64(0) + rows.ColumnInt64(1));
        s.chunks_indexed += static_cast<std::uint64_t>(rows.ColumnInt64(2));
      }
    }
  }
  return s;
}

Status Run::Totals() {
  BootstrapStats& s = report_.stats;
  if (carried_) {
    // Watch mode: the previous totals, minus the batch's files as they were, plus as they are.
    ASSIGN_OR_RETURN(BootstrapStats after, Contribution());
    AddTotals(s, *carried_, 1);
    AddTotals(s, before_, -1);
    AddTotals(s, after, 1);
    return Status::Ok();
  }
  base::Database& db = store_->db();
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT kind, count(*) FROM symbols GROUP BY kind"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      std::string kind = st.ColumnText(0);
      auto n = static_cast<std::uint64_t>(st.ColumnInt64(1));
      if (kind == "function" || kind == "method") {
        s.functions_indexed += n;
      } else if (kind == "namespace") {
        s.modules_indexed += n;
      } else {
        s.types_indexed += n;
      }
    }
  }
  ASSIGN_OR_RETURN(std::int64_t imports, store_->CountRows("imports"));
  ASSIGN_OR_RETURN(std::int64_t calls, store_->CountRows("calls"));
  ASSIGN_OR_RETURN(std::int64_t chunks, store_->CountRows("chunks"));
  s.edges = static_cast<std::uint64_t>(imports + calls);
  s.chunks_indexed = static_cast<std::uint64_t>(chunks);
  {
    ASSIGN_OR_RETURN(base::Statement st, db.Prepare("SELECT language, extractor FROM files "
                                                    "WHERE status IN ('indexed', 'unchanged')"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      ++s.languages[st.ColumnText(0)];
      ++s.extractors[ExtractorFamily(st.ColumnText(1))];
      ++s.context_packs_total;  // module_context
    }
  }
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT coalesce(sum(min(n, ?1)), 0) FROM (SELECT count(*) AS n "
                                "FROM symbols WHERE kind IN ('function', 'method') "
                                "GROUP BY file_id)"));
    RETURN_IF_ERROR(st.Bind(1, static_cast<std::int64_t>(kMaxFunctionPacksPerFile)));
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (row) s.context_packs_total += static_cast<std::uint64_t>(st.ColumnInt64(0));
  }
  return Status::Ok();
}

Status Run::Finish(const std::string& state) {
  report_.state = state;
  if (state != "cancelled") RETURN_IF_ERROR(Totals());
  run_.state = state;
  run_.finished_at = base::NowRfc3339();
  ++report_.stats.checkpoints;
  run_.stats_json = StatsJson(report_.stats).dump();
  batch_.run = run_;
  batch_.chunk_automerge = store::kDefaultChunkAutomerge;
  batch_.record_manifest = true;  // the run's file manifest commits with its final record
  // Watch mode: a delta manifest of the re-indexed paths (store/manifest.h).
  if (options_.only_paths) batch_.manifest_paths = *options_.only_paths;
  NoteCppChanges(batch_);
  Status st = store_->Apply(batch_);
  batch_ = store::WriteBatch{};
  pending_.clear();
  pending_files_ = 0;
  return st;
}

// The learned engines of a whole-workspace run (Execute): learned on a thread of their own
// over a second connection to the store, so that the learning overlaps the stored packs'
// rebuild on the writer's connection. A store without a file (":memory:", the tests) has no
// second connection to offer: there Start learns on the caller's thread and connection.
class Learner {
 public:
  Learner(std::string store_path, bool learn_assoc, std::optional<semvec::Options> learn_semvec)
      : store_path_(std::move(store_path)),
        learn_assoc_(learn_assoc),
        learn_semvec_(learn_semvec) {}
  Learner(const Learner&) = delete;
  Learner& operator=(const Learner&) = delete;
  ~Learner() { Join(); }

  void Start(store::Store& writer) {
    if (store_path_ != ":memory:" && !store_path_.empty()) {
      Result<std::unique_ptr<store::Store>> reader = store::Store::Open(store_path_);
      // The learning reads each function chunk once, in order: a small page cache and no
      // memory map, so that the pages it reads do not stay in the process's memory (with the
      // store's default 256 MiB map they did, beside the writer's).
      if (reader.ok()) {
        Status tuned = (*reader)->db().Exec("PRAGMA mmap_size=0; PRAGMA cache_size=-8192");
        if (!tuned.ok()) reader = tuned;
      }
      if (reader.ok()) {
        reader_ = std::move(*reader);
        thread_ = std::thread([this] { Learn(*reader_); });
        return;
      }
    }
    Learn(writer);
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
    reader_.reset();
  }

  // Set by Learn for each engine asked for.
  std::optional<Result<query::AssocModel>> assoc_model;
  std::optional<Result<semvec::Learned>> vectors;

 private:
  void Learn(store::Store& s) {
    if (learn_assoc_) assoc_model.emplace(query::AssocModel::LearnFromStore(s));
    if (learn_semvec_) vectors.emplace(semvec::LearnFromStore(s.db(), *learn_semvec_));
  }

  const std::string store_path_;
  const bool learn_assoc_;
  const std::optional<semvec::Options> learn_semvec_;
  std::unique_ptr<store::Store> reader_;
  std::thread thread_;
};

Result<BootstrapReport> Run::Execute() {
  RETURN_IF_ERROR(Open());
  auto fail = [&](const Status& error) -> Status {
    // Record the failure when the store still takes writes; the original error wins.
    batch_ = store::WriteBatch{};
    pending_.clear();
    pending_files_ = 0;
    (void)Finish(error.code() == base::StatusCode::kCancelled ? "cancelled" : "failed");
    return error;
  };

  crawl::CrawlOptions& co = crawl_options_;
  co.include = options_.include;
  co.exclude = options_.exclude;
  co.max_files = options_.max_files;
  if (options_.max_file_bytes != 0) co.max_file_bytes = options_.max_file_bytes;
  co.force = force_;
  // New files are read once, on the workers (crawler.h, docs/decisions/0032-librarian-boot2.md).
  co.defer_new_files = true;
  crawl::Manifest manifest;
  co.only = options_.only_paths;
  for (const auto& [path, f] : previous_) {
    if (!InOnlyPaths(path)) continue;
    if (f.stale ||
        (f.status != store::FileStatus::kIndexed && f.status != store::FileStatus::kUnchanged)) {
      continue;
    }
    manifest.emplace(path, crawl::ManifestEntry{f.size, f.mtime_ns, f.sha256});
  }
  Result<crawl::CrawlResult> crawl = crawl::Crawl(root_, co, &manifest, cancel_, base::Progress());
  if (!crawl.ok()) return fail(crawl.status());

  if (Status st = Plan(*crawl); !st.ok()) return fail(st);
  std::vector<std::size_t> all(jobs_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (Status st = ExtractAll(all, /*final_pass=*/false); !st.ok()) return fail(st);
  if (!stop_.load() && !cancel_.requested() && !deferred_.empty()) {
    std::vector<std::size_t> again = std::move(deferred_);
    deferred_.clear();
    if (Status st = ExtractAll(again, /*final_pass=*/true); !st.ok()) return fail(st);
  }
  if (cancel_.requested()) {
    if (Status st = Flush(true); !st.ok()) return fail(st);
    (void)Finish("cancelled");
    return Status::Cancelled("bootstrap cancelled");
  }
  const bool failed = !report_.error.empty();
  if (Status st = Finish(failed ? "failed" : "succeeded"); !st.ok()) return st;
  Clock::time_point phase_start = start_;
  auto end_phase = [&](const char* name) {
    const Clock::time_point now = Clock::now();
    report_.phase_ms.emplace_back(
        name, std::chrono::duration_cast<std::chrono::milliseconds>(now - phase_start).count());
    phase_start = now;
  };
  end_phase("index");
  // The learned engines, over the whole workspace and not for a watch re-index of a few
  // paths: the association model (query/assoc.h) and the workspace vectors (semvec/semvec.h,
  // decision 0096), each again after a run that changed something, or when the store has none
  // (the vectors also when they were learned with other options). Learning only reads, so it
  // runs on a second connection and thread while this thread, the store's one writer, rebuilds
  // the stored packs below; the models are written after that (decision 0097). A failure is
  // disclosed; queries then use the other engines.
  bool learn_assoc = false;
  std::optional<semvec::Options> learn_semvec;
  if (!failed && !options_.only_paths) {
    learn_assoc = report_.stats.mode != "noop";
    if (!learn_assoc) {
      Result<bool> has = HasAssocModel();
      learn_assoc = !has.ok() || !*has;
    }
    if (std::optional<semvec::Options> so = semvec::OptionsFromEnv()) {
      bool learn = report_.stats.mode != "noop";
      if (!learn) {
        Result<std::string> id = semvec::StoredModelId(store_->db());
        learn = !id.ok() || !semvec::ModelIdMatches(*id, *so);
      }
      if (learn) learn_semvec = so;
    }
  }
  Learner learner(report_.store_path, learn_assoc, learn_semvec);
  if (learn_assoc || learn_semvec) learner.Start(*store_);
  // A re-index of a few paths folds their functions into the stored space (semvec::FoldIn).
  if (!failed && options_.only_paths && report_.stats.mode != "noop" && semvec::OptionsFromEnv()) {
    if (Result<std::size_t> n = semvec::FoldIn(store_->db(), *options_.only_paths, run_.run_id);
        !n.ok()) {
      report_.disclosures.push_back(
          fmt::format("workspace_vectors_unavailable: {}", n.status().message()));
    }
  }
  // The optional embeddings engine: only when the user configured an endpoint. A failure is
  // disclosed and leaves the index as it is (queries then answer with the other engines).
  if (!failed) {
    if (std::optional<embed::Config> ec = embed::ConfigFromEnv()) {
      Result<std::size_t> n = EmbedFunctions(*ec);
      if (n.ok()) {
        report_.disclosures.push_back(
            fmt::format("embeddings: {} functions embedded with model {}", *n, ec->model));
      } else {
        report_.disclosures.push_back(
            fmt::format("embeddings_unavailable: {}", n.status().message()));
      }
      end_phase("embeddings");
    }
  }
  // Stored packs (packs/packs.h, decision 0069): every run drops the packs whose trigger files
  // changed; a whole-workspace run that changed something (or a store without them) rebuilds
  // the file graph, the ranks and the pattern and decision packs.
  if (!failed) {
    const std::vector<std::string>* changed = options_.only_paths ? &*options_.only_paths : nullptr;
    if (Result<std::size_t> gone = packs::InvalidateStale(*store_, changed); !gone.ok()) {
      report_.disclosures.push_back(
          fmt::format("packs_unavailable: invalidating stored packs: {}", gone.status().message()));
    }
    if (options_.only_paths && report_.stats.mode != "noop") {
      if (Status st = packs::MarkDerivedDirty(*store_); !st.ok()) {
        report_.disclosures.push_back(fmt::format("packs_unavailable: {}", st.message()));
      }
      // The changed files' function and module packs again (decision 0077).
      if (Result<std::size_t> n =
              packs::StoreFilePacksFor(*store_, *options_.only_paths, run_.run_id);
          !n.ok()) {
        report_.disclosures.push_back(fmt::format("packs_unavailable: {}", n.status().message()));
      }
    }
    bool rebuild = !options_.only_paths && report_.stats.mode != "noop";
    if (!options_.only_paths && !rebuild) {
      Result<bool> has = packs::HasDerived(*store_);
      rebuild = !has.ok() || !*has;
    }
    if (rebuild) {
      Result<packs::DerivedStats> derived = packs::RebuildDerived(*store_, root_, run_.run_id);
      if (!derived.ok()) {
        report_.disclosures.push_back(
            fmt::format("packs_unavailable: {}", derived.status().message()));
      } else if (!derived->include_note.empty()) {
        report_.disclosures.push_back("include_resolution: " + derived->include_note);
      }
    }
    end_phase("packs");
  }
  if (learn_assoc || learn_semvec) {
    learner.Join();
    if (learner.assoc_model) {
      Status st = learner.assoc_model->status();
      if (st.ok()) st = query::AssocModel::Save(*store_, **learner.assoc_model, run_.run_id);
      if (!st.ok()) {
        report_.disclosures.push_back(fmt::format("assoc_model_unavailable: {}", st.message()));
      }
    }
    if (learner.vectors) {
      Status st = learner.vectors->status();
      if (st.ok()) {
        st = semvec::Save(store_->db(), std::move(**learner.vectors), run_.run_id, *learn_semvec)
                 .status();
      }
      if (!st.ok()) {
        report_.disclosures.push_back(
            fmt::format("workspace_vectors_unavailable: {}", st.message()));
      }
    }
    end_phase("learn");
  }
  UpdateSession();
  report_.success = !failed;
  report_.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
  return std::move(report_);
}

}  // namespace

std::string StorePathFor(std::string_view canonical_workspace) {
  return fmt::format("{}/.librarian/librarian.sqlite", canonical_workspace);
}

Result<std::string> ValidateBootstrapOptions(const BootstrapOptions& options) {
  if (options.workspace.empty()) return Status::InvalidArgument("workspace: must not be empty");
  if (options.workspace.find('\0') != std::string::npos) {
    return Status::InvalidArgument("workspace: contains a nul byte");
  }
  if (options.workspace.front() != '/') {
    return Status::InvalidArgument("workspace: must be an absolute path");
  }
  if (options.only_paths) {
    if (options.max_files) {
      return Status::InvalidArgument("maxFiles: not supported when re-indexing changed paths");
    }
    for (const std::string& p : *options.only_paths) {
      if (p.empty() || p.front() == '/' || p.back() == '/' || p.find('\0') != std::string::npos ||
          p == ".." || p.rfind("../", 0) == 0 || p.find("/../") != std::string::npos ||
          (p.size() >= 3 && p.compare(p.size() - 3, 3, "/..") == 0)) {
        return Status::InvalidArgument(fmt::format("paths: not a workspace-relative path: {}", p));
      }
    }
  }
  if (options.max_files && *options.max_files < 1) {
    return Status::InvalidArgument("maxFiles: must be at least 1");
  }
  RETURN_IF_ERROR(crawl::ValidateFileTimeoutOptions(options.timeout));
  if (!options.llm_provider.empty() && options.llm_provider != "claude" &&
      options.llm_provider != "codex") {
    return Status::InvalidArgument("llmProvider: must be one of claude, codex");
  }
  for (const auto& [field, globs] :
       {std::pair{"include", &options.include}, std::pair{"exclude", &options.exclude}}) {
    if (globs->size() > crawl::kMaxGlobsPerList) {
      return Status::InvalidArgument(
          fmt::format("{}: more than {} patterns", field, crawl::kMaxGlobsPerList));
    }
    for (std::size_t i = 0; i < globs->size(); ++i) {
      Result<crawl::Glob> g = crawl::Glob::Compile((*globs)[i]);
      if (!g.ok()) {
        return Status::InvalidArgument(fmt::format("{}[{}]: {}", field, i, g.status().message()));
      }
    }
  }
  Result<std::string> root = crawl::CanonicalWorkspaceRoot(options.workspace);
  if (!root.ok()) {
    // Missing, unreadable or not a directory: all bad input to the caller.
    return Status::InvalidArgument(std::string(root.status().message()));
  }
  return root;
}

Result<BootstrapReport> Bootstrap(const BootstrapOptions& options, base::Cancellation& cancel,
                                  const base::Progress& progress) {
  return Bootstrap(options, cancel, progress, nullptr);
}

Result<BootstrapReport> Bootstrap(const BootstrapOptions& options, base::Cancellation& cancel,
                                  const base::Progress& progress, BootstrapSession* session) {
  ASSIGN_OR_RETURN(std::string root, ValidateBootstrapOptions(options));
  if (cancel.requested()) return Status::Cancelled("bootstrap cancelled");
  std::string store_path = options.store_path.empty() ? StorePathFor(root) : options.store_path;
  if (options.store_path.empty()) RETURN_IF_ERROR(PrepareStoreDir(root));
  ASSIGN_OR_RETURN(LockFile lock, LockFile::Acquire(store_path + ".lock"));
  Result<BootstrapReport> report = Run(options, std::move(root), cancel, progress,
                                       session != nullptr ? &session->state() : nullptr)
                                       .Execute();
  // After an error the session keeps nothing: the next run opens and probes afresh.
  if (!report.ok() && session != nullptr) session->Reset();
  return report;
}

}  // namespace trove::librarian::index

#include "warden/kb/kb.h"

#include <dirent.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <thread>
#include <unordered_map>

#include "base/env.h"
#include "base/hash.h"
#include "base/sqlite.h"
#include "warden/kb/finisher.h"
#include "warden/kb/schema.h"
#include "warden/wasm/instruction.h"

namespace trove::warden::kb {

namespace {

using nlohmann::json;

constexpr int kMaxPageSize = 1000;

// True when nlohmann's dump writes `text` between the quotes unchanged: printable ASCII
// other than the quote and the backslash.
bool PlainJsonString(std::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

// The same text as json(values).dump(-1, ' ', false, replace), written directly when every
// string is plain (nearly always: 22k functions of an ingest go through here five times).
std::string ToJson(const std::vector<std::string>& values) {
  std::size_t size = 2;
  for (const std::string& v : values) {
    if (!PlainJsonString(v)) {
      return json(values).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    size += v.size() + 3;
  }
  std::string out;
  out.reserve(size);
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ',';
    out += '"';
    out += values[i];
    out += '"';
  }
  out += ']';
  return out;
}

// The same text as json(values).dump().
std::string ToJson(const std::vector<std::uint32_t>& values) {
  std::string out;
  out.reserve(2 + values.size() * 11);
  out += '[';
  char digits[16];
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ',';
    out.append(digits, std::to_chars(digits, digits + sizeof(digits), values[i]).ptr);
  }
  out += ']';
  return out;
}

// Parses a JSON array of strings written by ToJson; anything else reads as empty. The compact
// form ToJson writes for plain strings is read directly (loading a version reads five such
// columns per function); any other text goes through nlohmann's parser, with the same result.
std::vector<std::string> StringsFromJson(std::string_view text) {
  std::vector<std::string> out;
  if (text == "[]") return out;
  // The fast path: '[' "plain" (',' "plain")* ']'.
  bool fast = text.size() >= 4 && text.front() == '[' && text.back() == ']';
  for (std::size_t i = 1; fast && i + 1 < text.size();) {
    if (text[i] != '"') {
      fast = false;
      break;
    }
    const std::size_t end = text.find('"', i + 1);
    if (end == std::string_view::npos || end + 1 >= text.size() ||
        !PlainJsonString(text.substr(i + 1, end - i - 1))) {
      fast = false;
      break;
    }
    out.emplace_back(text.substr(i + 1, end - i - 1));
    i = end + 1;
    if (text[i] == ',' && i + 2 < text.size()) {
      ++i;
    } else if (i + 1 != text.size()) {
      fast = false;
    }
  }
  if (fast) return out;
  out.clear();
  const json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_array()) return out;
  for (const json& v : parsed) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// Parses a JSON array of unsigned integers (ToJson's compact form directly, anything else with
// nlohmann's parser); values that are not unsigned integers are skipped.
std::vector<std::uint32_t> IndicesFromJson(std::string_view text) {
  std::vector<std::uint32_t> out;
  if (text == "[]") return out;
  // The fast path: '[' digits (',' digits)* ']', no leading zeros, each value a uint32.
  bool fast = text.size() >= 3 && text.front() == '[' && text.back() == ']';
  for (std::size_t i = 1; fast && i + 1 < text.size();) {
    std::uint32_t value = 0;
    const char* begin = text.data() + i;
    const char* stop = text.data() + text.size() - 1;
    const auto [ptr, ec] = std::from_chars(begin, stop, value);
    if (ec != std::errc() || ptr == begin || *begin == '+' || *begin == '-' ||
        (*begin == '0' && ptr - begin > 1)) {
      fast = false;
      break;
    }
    out.push_back(value);
    i = static_cast<std::size_t>(ptr - text.data());
    if (text[i] == ',' && i + 2 < text.size()) {
      ++i;
    } else if (i + 1 != text.size()) {
      fast = false;
    }
  }
  if (fast) return out;
  out.clear();
  const json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_array()) return out;
  for (const json& v : parsed) {
    if (v.is_number_unsigned()) out.push_back(v.get<std::uint32_t>());
  }
  return out;
}

template <typename T, std::size_t N>
std::string PackLe(const std::array<T, N>& values) {
  std::string out;
  out.reserve(N * sizeof(T));
  for (T v : values) {
    for (std::size_t b = 0; b < sizeof(T); ++b) {
      out += static_cast<char>(static_cast<std::uint64_t>(v) >> (8 * b) & 0xff);
    }
  }
  return out;
}

// The columns of a function row that are built from the record rather than bound from it:
// the packed blobs and the JSON arrays.
struct EncodedColumns {
  std::string minhash;
  std::string histogram;
  std::string call_outs;
  std::string callees;
  std::string export_names;
  std::string call_targets;
  std::string referenced_strings;
};

// Encodes the columns of the rows in row order on a thread of its own while the rows are
// inserted (the inserts are the serial part of an ingest, and building these columns was
// ~15 % of it). The encoded rows live in a ring of kRing slots that the encoder refills as
// the inserts move on, so their strings are reused rather than allocated per row. Ready(i)
// waits for row i and tells the encoder that every row before i is done with.
class ColumnEncoder {
 public:
  explicit ColumnEncoder(std::span<const FunctionRecord> functions)
      : functions_(functions), ring_(kRing), thread_([this](std::stop_token stop) { Run(stop); }) {}
  ColumnEncoder(const ColumnEncoder&) = delete;
  ColumnEncoder& operator=(const ColumnEncoder&) = delete;
  ~ColumnEncoder() {
    thread_.request_stop();
    consumed_.store(kNever, std::memory_order_release);  // unblocks a full ring
    consumed_.notify_one();
  }  // thread_, declared last, joins first

  // Returns row i's columns once they are encoded. REQUIRES: i from 0 up, one at a time; the
  // columns of earlier rows are no longer read.
  const EncodedColumns& Ready(std::size_t i) {
    if (i % kBatch == 0) {
      consumed_.store(i, std::memory_order_release);
      consumed_.notify_one();
    }
    for (std::size_t n = ready_.load(std::memory_order_acquire); n <= i;
         n = ready_.load(std::memory_order_acquire)) {
      ready_.wait(n, std::memory_order_acquire);
    }
    return ring_[i % kRing];
  }

 private:
  static constexpr std::size_t kRing = 1024;
  static constexpr std::size_t kBatch = 32;  // rows per publication, either way
  static_assert(kRing % kBatch == 0 && kRing >= 2 * kBatch);
  static constexpr std::size_t kNever = ~std::size_t{0} / 2;

  void Run(const std::stop_token& stop) {
    const std::size_t n = functions_.size();
    for (std::size_t i = 0; i < n && !stop.stop_requested(); ++i) {
      // Slot i % kRing held row i - kRing, which must be done with.
      for (std::size_t c = consumed_.load(std::memory_order_acquire); i >= c + kRing;
           c = consumed_.load(std::memory_order_acquire)) {
        consumed_.wait(c, std::memory_order_acquire);
      }
      Encode(functions_[i], ring_[i % kRing]);
      if ((i + 1) % kBatch == 0 || i + 1 == n) {
        ready_.store(i + 1, std::memory_order_release);
        ready_.notify_one();
      }
    }
  }

  static void Encode(const FunctionRecord& f, EncodedColumns& c) {
    c.minhash.clear();
    c.histogram.clear();
    if (!f.is_import) {
      c.minhash = PackLe(f.minhash);
      c.histogram = PackLe(f.histogram);
    }
    c.call_outs = ToJson(f.call_outs);
    c.callees = ToJson(f.defined_callees);
    c.export_names = ToJson(f.export_names);
    c.call_targets = ToJson(f.call_targets);
    c.referenced_strings = ToJson(f.referenced_strings);
  }

  const std::span<const FunctionRecord> functions_;
  std::vector<EncodedColumns> ring_;      // kRing slots
  std::atomic<std::size_t> ready_{0};     // rows [0, ready_) are encoded
  std::atomic<std::size_t> consumed_{0};  // rows [0, consumed_) are done with
  std::jthread thread_;  // last: started after, and joined before, everything it uses
};

template <typename T, std::size_t N>
std::array<T, N> UnpackLe(std::string_view bytes) {
  std::array<T, N> out{};
  if (bytes.size() != N * sizeof(T)) return out;
  for (std::size_t i = 0; i < N; ++i) {
    std::uint64_t v = 0;
    for (std::size_t b = 0; b < sizeof(T); ++b) {
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i * sizeof(T) + b]))
           << (8 * b);
    }
    out[i] = static_cast<T>(v);
  }
  return out;
}

Status BindOptional(base::Statement& stmt, int index, const std::optional<std::string>& value) {
  return value.has_value() ? stmt.Bind(index, std::string_view(*value)) : stmt.Bind(index, nullptr);
}

std::optional<std::string> OptionalText(const base::Statement& stmt, int column) {
  if (stmt.ColumnIsNull(column)) return std::nullopt;
  return stmt.ColumnText(column);
}

bool AllDigits(std::string_view text) {
  if (text.empty() || text.size() > 10) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::optional<std::uint32_t> ParseIndex(std::string_view text) {
  if (!AllDigits(text)) return std::nullopt;
  std::uint64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  if (v > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

// The project name a new database gets by default: the directory holding it, or the project
// directory for `<dir>/.warden/warden.db`.
std::string DefaultProject(const std::string& path) {
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(path, ec);
  if (ec) abs = path;
  abs = abs.lexically_normal();
  std::filesystem::path dir = abs.parent_path();
  if (dir.filename() == ".warden") dir = dir.parent_path();
  std::string name = dir.filename().string();
  return name.empty() ? "warden" : name;
}

// ---- list_functions cursors: base64url("c1|version|imports|unnamed|below|provenance|last")

std::string FilterKey(const FunctionQuery& q) {
  std::string below =
      q.below.has_value() ? fmt::format("{:016x}", std::bit_cast<std::uint64_t>(*q.below)) : "-";
  std::string prov = q.provenance.has_value() ? base::Base64UrlEncode(*q.provenance) : "-";
  return fmt::format("{}|{}|{}|{}|{}", q.version_id, q.include_imports ? 1 : 0,
                     q.unnamed_only ? 1 : 0, below, prov);
}

std::string EncodeCursor(const FunctionQuery& q, std::uint32_t last_index) {
  return base::Base64UrlEncode(fmt::format("c1|{}|{}", FilterKey(q), last_index));
}

// Returns the last index of the previous page, or kInvalidArgument when `cursor` was not made
// for this query.
Result<std::int64_t> DecodeCursor(const FunctionQuery& q, std::string_view cursor) {
  const Status bad = Status::InvalidArgument(
      "cursor: not a next_cursor of this list_functions query (same version and filters)");
  Result<std::string> text = base::Base64UrlDecode(cursor);
  if (!text.ok()) return bad;
  const std::string prefix = fmt::format("c1|{}|", FilterKey(q));
  if (text->compare(0, prefix.size(), prefix) != 0) return bad;
  std::optional<std::uint32_t> last = ParseIndex(std::string_view(*text).substr(prefix.size()));
  if (!last.has_value()) return bad;
  return static_cast<std::int64_t>(*last);
}

constexpr std::string_view kFunctionColumns =
    "func_index, is_import, import_module, import_field, type_signature, stable_id, id_tier, "
    "norm_hash, exact_hash, structural_hash, minhash, histogram, call_outs_json, callees_json, "
    "instruction_count, body_offset, body_size, raw_name, export_names_json, call_targets_json, "
    "referenced_strings_json, opcodes";

// A stored row count as a vector's reserve: only a hint, so a corrupt count cannot ask for
// more than a million rows' worth of memory up front.
std::size_t ReserveHint(std::int64_t count) {
  return static_cast<std::size_t>(std::clamp<std::int64_t>(count, 0, 1 << 20));
}

// The columns DefinedFunctionsForDiff reads: the diff's keys, fingerprints and reported facts,
// then the current symbol.
constexpr std::string_view kDiffColumns =
    "f.func_index, f.type_signature, f.stable_id, f.id_tier, f.norm_hash, f.exact_hash, "
    "f.structural_hash, f.minhash, f.histogram, f.call_outs_json, f.callees_json, "
    "f.instruction_count, f.body_offset, f.body_size, f.referenced_strings_json, f.opcodes, "
    "s.name, s.provenance, s.confidence, s.locked";

FunctionRecord ReadFunction(const base::Statement& s) {
  FunctionRecord r;
  r.func_index = static_cast<std::uint32_t>(s.ColumnInt64(0));
  r.is_import = s.ColumnInt64(1) != 0;
  r.import_module = s.ColumnText(2);
  r.import_field = s.ColumnText(3);
  r.type_signature = s.ColumnText(4);
  r.stable_id = s.ColumnText(5);
  r.id_tier = static_cast<int>(s.ColumnInt64(6));
  r.norm_hash = s.ColumnText(7);
  r.exact_hash = s.ColumnText(8);
  r.structural_hash = s.ColumnText(9);
  r.minhash = UnpackLe<std::uint64_t, kMinHashValues>(s.ColumnBlobView(10));
  r.histogram = UnpackLe<std::uint32_t, kHistogramClasses>(s.ColumnBlobView(11));
  r.call_outs = StringsFromJson(s.ColumnTextView(12));
  r.defined_callees = IndicesFromJson(s.ColumnTextView(13));
  r.instruction_count = static_cast<std::uint32_t>(s.ColumnInt64(14));
  r.body_offset = static_cast<std::uint64_t>(s.ColumnInt64(15));
  r.body_size = static_cast<std::uint64_t>(s.ColumnInt64(16));
  r.raw_name = OptionalText(s, 17);
  r.export_names = StringsFromJson(s.ColumnTextView(18));
  r.call_targets = StringsFromJson(s.ColumnTextView(19));
  r.referenced_strings = StringsFromJson(s.ColumnTextView(20));
  r.opcodes = s.ColumnBlob(21);
  return r;
}

std::string_view SeedSourceName(SeedSource source) {
  switch (source) {
    case SeedSource::kNameSection:
      return "name-section";
    case SeedSource::kGlue:
      return "glue";
    case SeedSource::kExport:
      return "export";
  }
  return "unknown";
}

// The busy timeout of every Kb connection (Kb::Open).
constexpr int kBusyTimeoutMs = 5000;

// Sets the journal mode and returns the mode the database is in afterwards ("delete",
// "wal"): SQLite returns the old mode when it cannot change it.
Result<std::string> SetJournalMode(base::Database& db, std::string_view mode) {
  ASSIGN_OR_RETURN(base::Statement stmt, db.Prepare(fmt::format("PRAGMA journal_mode={}", mode)));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Status::Internal("journal_mode returned no row");
  return stmt.ColumnText(0);
}

// Returns a descriptor this process has open on the file at `path` (SQLite's, for the KB's
// database file), or -1: found by device and inode among /proc/self/fd (Linux). The caller
// must not close it.
int FindOpenDescriptor(const std::string& path) {
  struct stat want {};
  if (::stat(path.c_str(), &want) != 0) return -1;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (const dirent* entry = ::readdir(dir)) {
    int fd = -1;
    const char* name = entry->d_name;
    const auto [end, ec] = std::from_chars(name, name + std::strlen(name), fd);
    if (ec != std::errc() || *end != '\0' || fd == ::dirfd(dir)) continue;
    struct stat got {};
    if (::fstat(fd, &got) == 0 && S_ISREG(got.st_mode) && got.st_dev == want.st_dev &&
        got.st_ino == want.st_ino) {
      found = fd;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

// The first version stored into a KB that holds none is written with a rollback journal
// instead of the WAL when this connection is the only one open on the file
// (docs/decisions/0041-warden-first-version-journal.md): its pages (35 MB for ffmpeg-core)
// are then written once, into the database file, where the WAL would write them twice (the
// WAL, then the checkpoint's copy) with two more fsyncs. The switch never waits: with another
// connection open it fails at once and the version goes through the WAL. Returns whether the
// database is now in rollback mode.
Result<bool> EnterRollbackForFirstVersion(base::Database& db) {
  {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db.Prepare("SELECT EXISTS (SELECT 1 FROM module_versions)"));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row || stmt.ColumnInt64(0) != 0) return false;
  }
  RETURN_IF_ERROR(db.Exec("PRAGMA busy_timeout=0"));
  Result<std::string> mode = SetJournalMode(db, "DELETE");
  RETURN_IF_ERROR(db.Exec(fmt::format("PRAGMA busy_timeout={}", kBusyTimeoutMs)));
  // SQLITE_BUSY (another connection is open) is not an error here: the WAL path follows.
  if (!mode.ok()) return false;
  return *mode == "delete";
}

}  // namespace

std::string FormatTimestamp(std::int64_t micros) {
  std::int64_t seconds = micros / 1'000'000;
  std::int64_t rem = micros % 1'000'000;
  if (rem < 0) {
    rem += 1'000'000;
    --seconds;
  }
  const time_t t = static_cast<time_t>(seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rem / 1000);
}

// ---------------------------------------------------------------------------------------------
// Open

Kb::Kb(base::Env& env, std::string path, std::unique_ptr<base::Database> db,
       std::function<void(std::size_t)> store_progress)
    : env_(env),
      path_(std::move(path)),
      db_(std::move(db)),
      store_progress_(std::move(store_progress)) {}

Kb::~Kb() {
  if (rollback_pending_) (void)SetJournalMode(*db_, "WAL");
}

Result<std::unique_ptr<Kb>> Kb::Open(base::Env& env, const std::string& path,
                                     const KbOptions& options) {
  const bool memory = path == ":memory:";
  if (!memory && !env.FileExists(path) && !options.create_if_missing) {
    return Status::NotFound(fmt::format("open {}: no such file", path));
  }
  // 64 KiB pages for a new KB: a version writes tens of MB of rows whose opcode blobs span
  // many pages, and larger pages mean fewer overflow pages, WAL frames and page allocations
  // (docs/decisions/0021-warden-perf2-ingest.md). An existing KB keeps its page size.
  ASSIGN_OR_RETURN(std::unique_ptr<base::Database> db,
                   base::Database::Open(
                       path, base::DatabaseOptions{.busy_timeout_ms = kBusyTimeoutMs,
                                                   .create_if_missing = options.create_if_missing,
                                                   .page_size = 65536}));
  const std::string project = options.project.empty() ? DefaultProject(path) : options.project;
  RETURN_IF_ERROR(internal::PrepareDatabase(*db, options.create_if_missing, project)
                      .WithContext(fmt::format("open {}", path)));
  return std::unique_ptr<Kb>(new Kb(env, path, std::move(db), options.store_progress_for_testing));
}

DatabaseFiles ExistingDatabaseFiles(const std::string& path) {
  const auto exists = [](const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
  };
  return {.db = exists(path),
          .wal = exists(path + "-wal"),
          .shm = exists(path + "-shm"),
          .journal = exists(path + "-journal")};
}

Result<bool> Kb::RemoveCreated(std::unique_ptr<Kb> kb, const DatabaseFiles& before) {
  if (kb == nullptr || before.db || kb->path_ == ":memory:" || kb->path_.empty()) return false;
  const std::string path = kb->path_;
  base::Database& db = *kb->db_;
  kb->finisher_.reset();
  // Nothing may write to the file once it is unlinked: the destructor's switch back to WAL
  // would (it writes the header), so it runs only when the KB is kept.
  kb->rollback_pending_ = false;
  RETURN_IF_ERROR(db.Exec("PRAGMA busy_timeout=0"));
  const auto keep = [&kb, &db]() -> Result<bool> {
    (void)db.Exec(fmt::format("PRAGMA busy_timeout={}", kBusyTimeoutMs));
    kb->rollback_pending_ = true;  // the destructor sets WAL mode again
    return false;
  };
  // Leaving WAL mode needs every other connection closed (decision 0041); in rollback mode an
  // exclusive lock then needs every other connection idle, and holds off new readers. A read
  // first: the connection learns the file's mode only when it reads (another connection that
  // opened it since PrepareToStore set WAL again), and would otherwise take "DELETE" for
  // done.
  if (!db.Exec("SELECT count(*) FROM meta").ok()) return keep();
  Result<std::string> mode = SetJournalMode(db, "DELETE");
  if (!mode.ok() || *mode != "delete") return keep();
  if (!db.Exec("BEGIN EXCLUSIVE").ok()) return keep();
  // Still in rollback mode under the lock: nobody set WAL between the switch and the lock.
  Result<std::string> locked_mode = SetJournalMode(db, "DELETE");
  if (!locked_mode.ok() || *locked_mode != "delete") {
    (void)db.Exec("ROLLBACK");
    return keep();
  }
  bool empty = false;
  {
    Result<base::Statement> stored = db.Prepare(
        "SELECT (SELECT count(*) FROM module_versions) + (SELECT count(*) FROM symbols) + "
        "(SELECT count(*) FROM evidence) + (SELECT count(*) FROM diffs)");
    if (stored.ok()) {
      Result<bool> row = stored->Step();
      empty = row.ok() && *row && stored->ColumnInt64(0) == 0;
    }
  }
  if (!empty) {
    (void)db.Exec("ROLLBACK");
    return keep();
  }
  const std::pair<const char*, bool> files[] = {
      {"", before.db}, {"-wal", before.wal}, {"-shm", before.shm}, {"-journal", before.journal}};
  Status removed;
  for (const auto& [suffix, existed] : files) {
    const std::string file = path + suffix;
    if (!existed && ::unlink(file.c_str()) != 0 && errno != ENOENT && removed.ok()) {
      removed = Status::Io(fmt::format("remove {}: {}", file, std::strerror(errno)));
    }
  }
  (void)db.Exec("ROLLBACK");
  kb.reset();
  RETURN_IF_ERROR(removed);
  return true;
}

std::string Kb::Now() { return FormatTimestamp(env_.NowMicros()); }

Result<std::string> Kb::Project() {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT value FROM meta WHERE key = 'project'"));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnText(0) : std::string();
}

Status Kb::RequireVersion(std::int64_t version_id) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT 1 FROM module_versions WHERE id = ?"));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Status::NotFound(fmt::format("unknown version_id {}", version_id));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Ingest

Result<bool> Kb::PrepareToStore() {
  if (path_ == ":memory:" || path_.empty()) return false;
  ASSIGN_OR_RETURN(const bool rollback, EnterRollbackForFirstVersion(*db_));
  rollback_pending_ = rollback_pending_ || rollback;
  return rollback;
}

Result<StoreResult> Kb::StoreVersion(const VersionRecord& version,
                                     std::span<const FunctionRecord> functions,
                                     const std::vector<SeedName>& seeds,
                                     const RowsProgress& on_rows) {
  // Validate before taking the write lock.
  std::uint32_t imports = 0;
  std::unordered_map<std::uint32_t, const FunctionRecord*> by_index;
  by_index.reserve(functions.size());
  for (const FunctionRecord& f : functions) {
    if (f.is_import) ++imports;
    if (f.stable_id.empty()) {
      return Status::InvalidArgument(
          fmt::format("store version: function {} has no stable_id", f.func_index));
    }
    if (!by_index.emplace(f.func_index, &f).second) {
      return Status::InvalidArgument(
          fmt::format("store version: function index {} appears twice", f.func_index));
    }
  }
  if (imports != version.imported_count ||
      functions.size() - imports != static_cast<std::size_t>(version.defined_count)) {
    return Status::InvalidArgument(fmt::format(
        "store version: the version counts {} imported and {} defined functions, the records "
        "hold {} and {}",
        version.imported_count, version.defined_count, imports, functions.size() - imports));
  }
  for (const SeedName& seed : seeds) {
    if (!by_index.contains(seed.func_index)) {
      return Status::InvalidArgument(fmt::format(
          "store version: seed names function {}, which is not in the version", seed.func_index));
    }
  }

  // A version is one large transaction (37 MB for ffmpeg-core). An 8 MiB page cache lets
  // SQLite spill the table and overflow pages, which are written once and never touched
  // again, to the WAL during the inserts and reuse their buffers, while the index pages stay
  // cached: the WAL holds the same frames as with a cache that keeps the whole transaction
  // (64 MiB before), with ~6,500 fewer page faults and less CPU
  // (docs/decisions/0029-warden-perf4.md).
  RETURN_IF_ERROR(db_->Exec("PRAGMA cache_size=-8192"));
  // The WAL's writeback while the rows are written, and its checkpoint once they are
  // committed, run beside the caller (finisher.h); without a commit the finisher stops.
  finisher_.reset();
  bool committed = false;
  const bool file = path_ != ":memory:" && !path_.empty();
  ASSIGN_OR_RETURN(const bool rollback, file ? EnterRollbackForFirstVersion(*db_) : false);
  if (file && !rollback) finisher_ = std::make_unique<VersionFinisher>(path_);
  // With the rollback journal, the pages SQLite spills into the database file during the
  // transaction are written back beside it, so that the commit's fsync has little left.
  if (const int fd = rollback ? FindOpenDescriptor(path_) : -1; fd >= 0) {
    finisher_ = std::make_unique<VersionFinisher>(path_, VersionFinisher::DatabaseFile{fd});
  }
  // On every way out: a finisher without a commit stops; a KB in rollback mode goes back to
  // WAL (on failure the next Open sets it, as Open always does).
  struct Restore {
    std::unique_ptr<VersionFinisher>& finisher;
    base::Database& db;
    const bool rollback;
    const bool& committed;
    bool& pending;
    ~Restore() {
      if (!committed) finisher.reset();
      if (rollback || pending) (void)SetJournalMode(db, "WAL");
      pending = false;
    }
  } restore{finisher_, *db_, rollback, committed, rollback_pending_};
  ASSIGN_OR_RETURN(base::Transaction txn, db_->Begin());
  StoreResult result;
  // The same bytes already ingested: nothing to write.
  {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db_->Prepare("SELECT id, label FROM module_versions WHERE sha256 = ? "
                                  "ORDER BY id LIMIT 1"));
    RETURN_IF_ERROR(stmt.Bind(1, std::string_view(version.sha256)));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row) {
      result.version_id = stmt.ColumnInt64(0);
      result.label = stmt.ColumnText(1);
      result.already_ingested = true;
      return result;  // the transaction rolls back: nothing was written
    }
  }
  ASSIGN_OR_RETURN(base::Statement label_taken,
                   db_->Prepare("SELECT 1 FROM module_versions WHERE label = ?"));
  std::string label = version.label;
  if (label.empty()) {
    ASSIGN_OR_RETURN(base::Statement count, db_->Prepare("SELECT count(*) FROM module_versions"));
    ASSIGN_OR_RETURN(bool row, count.Step());
    std::int64_t n = row ? count.ColumnInt64(0) + 1 : 1;
    for (;; ++n) {
      label = fmt::format("v{}", n);
      label_taken.Reset();
      RETURN_IF_ERROR(label_taken.Bind(1, std::string_view(label)));
      ASSIGN_OR_RETURN(bool taken, label_taken.Step());
      if (!taken) break;
    }
  } else {
    RETURN_IF_ERROR(label_taken.Bind(1, std::string_view(label)));
    ASSIGN_OR_RETURN(bool taken, label_taken.Step());
    if (taken) {
      return Status::AlreadyExists(fmt::format("label \"{}\" is already used by a version", label));
    }
  }

  const std::string now = Now();
  {
    ASSIGN_OR_RETURN(
        base::Statement stmt,
        db_->Prepare("INSERT INTO module_versions(label, wasm_path, sha256, size, imported_count, "
                     "defined_count, emscripten_version, emscripten_version_source, "
                     "shared_memory, memory_count, memory64, features_json, producers_json, "
                     "glue_path, glue_json, ingested_at) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    RETURN_IF_ERROR(stmt.Bind(1, std::string_view(label)));
    RETURN_IF_ERROR(stmt.Bind(2, std::string_view(version.wasm_path)));
    RETURN_IF_ERROR(stmt.Bind(3, std::string_view(version.sha256)));
    RETURN_IF_ERROR(stmt.Bind(4, version.size));
    RETURN_IF_ERROR(stmt.Bind(5, version.imported_count));
    RETURN_IF_ERROR(stmt.Bind(6, version.defined_count));
    RETURN_IF_ERROR(BindOptional(stmt, 7, version.emscripten_version));
    RETURN_IF_ERROR(BindOptional(stmt, 8, version.emscripten_version_source));
    RETURN_IF_ERROR(stmt.Bind(9, version.shared_memory ? 1 : 0));
    RETURN_IF_ERROR(stmt.Bind(10, version.memory_count));
    RETURN_IF_ERROR(stmt.Bind(11, version.memory64 ? 1 : 0));
    RETURN_IF_ERROR(stmt.Bind(12, std::string_view(version.features_json)));
    RETURN_IF_ERROR(stmt.Bind(13, std::string_view(version.producers_json)));
    RETURN_IF_ERROR(BindOptional(stmt, 14, version.glue_path));
    RETURN_IF_ERROR(BindOptional(stmt, 15, version.glue_json));
    RETURN_IF_ERROR(stmt.Bind(16, std::string_view(now)));
    RETURN_IF_ERROR(stmt.Step());
  }
  result.version_id = db_->LastInsertRowId();
  result.label = label;

  // The first version into an empty KB builds the four stable_id and hash indexes after its
  // rows (CREATE INDEX sorts the keys once), instead of inserting 4 random keys per row: on
  // ffmpeg-core ~0.11 s of index inserts become ~0.05 s. The drop is part of this
  // transaction, so on any way out without the commit, or a crash, the indexes are as they
  // were. Only with the rollback journal, that is with no other connection open
  // (docs/decisions/0042-warden-index-after-rows.md).
  if (rollback) RETURN_IF_ERROR(db_->Exec(internal::DropFunctionIndexSql()));
  {
    ASSIGN_OR_RETURN(
        base::Statement stmt,
        db_->Prepare(fmt::format("INSERT INTO functions(version_id, {}) VALUES (?1, ?2, ?3, ?4, "
                                 "?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
                                 "?18, ?19, ?20, ?21, ?22, ?23)",
                                 kFunctionColumns)));
    std::size_t done = 0;
    ColumnEncoder encoder(functions);
    // The record's own strings and its encoded columns are bound without a copy: `functions`
    // outlives `stmt`; an encoder slot is refilled only after Ready has moved past its row,
    // and the next row's values are bound over it before the statement steps again (the
    // statement, finalized after the encoder is gone, reads no bound value then).
    for (const FunctionRecord& f : functions) {
      const EncodedColumns& columns = encoder.Ready(done);
      stmt.Reset();
      RETURN_IF_ERROR(stmt.Bind(1, result.version_id));
      RETURN_IF_ERROR(stmt.Bind(2, f.func_index));
      RETURN_IF_ERROR(stmt.Bind(3, f.is_import ? 1 : 0));
      if (f.is_import) {
        RETURN_IF_ERROR(stmt.BindUncopiedText(4, f.import_module));
        RETURN_IF_ERROR(stmt.BindUncopiedText(5, f.import_field));
      } else {
        RETURN_IF_ERROR(stmt.Bind(4, nullptr));
        RETURN_IF_ERROR(stmt.Bind(5, nullptr));
      }
      RETURN_IF_ERROR(stmt.BindUncopiedText(6, f.type_signature));
      RETURN_IF_ERROR(stmt.BindUncopiedText(7, f.stable_id));
      RETURN_IF_ERROR(stmt.Bind(8, f.id_tier));
      if (f.is_import) {
        for (int i = 9; i <= 13; ++i) RETURN_IF_ERROR(stmt.Bind(i, nullptr));
      } else {
        RETURN_IF_ERROR(stmt.BindUncopiedText(9, f.norm_hash));
        RETURN_IF_ERROR(stmt.BindUncopiedText(10, f.exact_hash));
        RETURN_IF_ERROR(stmt.BindUncopiedText(11, f.structural_hash));
        RETURN_IF_ERROR(stmt.BindUncopiedBlob(12, columns.minhash));
        RETURN_IF_ERROR(stmt.BindUncopiedBlob(13, columns.histogram));
      }
      RETURN_IF_ERROR(stmt.BindUncopiedText(14, columns.call_outs));
      RETURN_IF_ERROR(stmt.BindUncopiedText(15, columns.callees));
      RETURN_IF_ERROR(stmt.Bind(16, f.instruction_count));
      RETURN_IF_ERROR(stmt.Bind(17, f.body_offset));
      RETURN_IF_ERROR(stmt.Bind(18, f.body_size));
      RETURN_IF_ERROR(f.raw_name.has_value() ? stmt.BindUncopiedText(19, *f.raw_name)
                                             : stmt.Bind(19, nullptr));
      RETURN_IF_ERROR(stmt.BindUncopiedText(20, columns.export_names));
      RETURN_IF_ERROR(stmt.BindUncopiedText(21, columns.call_targets));
      RETURN_IF_ERROR(stmt.BindUncopiedText(22, columns.referenced_strings));
      RETURN_IF_ERROR(stmt.BindUncopiedBlob(23, f.opcodes));
      // The context is formatted only on failure (not 22k times per ingest on the serial path).
      if (Result<bool> stepped = stmt.Step(); !stepped.ok()) {
        return std::move(stepped).status().WithContext(
            fmt::format("store version: function {}", f.func_index));
      }
      ++done;
      if (store_progress_) store_progress_(done);
      // Each whole percent of the rows: at most 101 calls whatever the module's size.
      if (on_rows && done * 100 / functions.size() != (done - 1) * 100 / functions.size()) {
        on_rows(done, functions.size());
      }
    }
  }

  // Before the seeds: the gate looks symbols' functions up by stable_id.
  if (rollback) RETURN_IF_ERROR(db_->Exec(internal::FunctionIndexSql()));

  // Seeds go through the gate, inside this transaction.
  for (const SeedName& seed : seeds) {
    const FunctionRecord& f = *by_index.at(seed.func_index);
    const json details = {{"version_id", result.version_id},
                          {"label", label},
                          {"func_index", seed.func_index},
                          {"source", SeedSourceName(seed.source)}};
    ASSIGN_OR_RETURN(
        Decision decision,
        SeedInTransaction(seed.source, f.stable_id, seed.name,
                          details.dump(-1, ' ', false, json::error_handler_t::replace)));
    auto& counts = decision.accepted ? result.seeds_accepted : result.seeds_rejected;
    ++counts[static_cast<std::size_t>(seed.source)];
  }
  RETURN_IF_ERROR(txn.Commit());
  committed = true;
  if (finisher_ != nullptr) finisher_->Committed();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Queries

namespace {

constexpr std::string_view kVersionColumns =
    "id, label, emscripten_version, emscripten_version_source, imported_count, defined_count, "
    "shared_memory, memory_count, memory64, sha256, size, wasm_path, glue_path, ingested_at, "
    "features_json, producers_json";

VersionInfo ReadVersion(const base::Statement& s) {
  VersionInfo v;
  v.id = s.ColumnInt64(0);
  v.label = s.ColumnText(1);
  v.emscripten_version = OptionalText(s, 2);
  v.emscripten_version_source = OptionalText(s, 3);
  v.imported = s.ColumnInt64(4);
  v.defined = s.ColumnInt64(5);
  v.functions = v.imported + v.defined;
  v.shared_memory = s.ColumnInt64(6) != 0;
  v.memory_count = s.ColumnInt64(7);
  v.memory64 = s.ColumnInt64(8) != 0;
  v.sha256 = s.ColumnText(9);
  v.size = static_cast<std::uint64_t>(s.ColumnInt64(10));
  v.wasm_path = s.ColumnText(11);
  v.glue_path = OptionalText(s, 12);
  v.ingested_at = s.ColumnText(13);
  v.features_json = s.ColumnText(14);
  v.producers_json = s.ColumnText(15);
  return v;
}

}  // namespace

Result<std::vector<VersionInfo>> Kb::ListVersions() {
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare(fmt::format("SELECT {} FROM module_versions ORDER BY id", kVersionColumns)));
  std::vector<VersionInfo> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    out.push_back(ReadVersion(stmt));
  }
  return out;
}

Result<VersionInfo> Kb::GetVersion(std::int64_t version_id) {
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare(fmt::format("SELECT {} FROM module_versions WHERE id = ?", kVersionColumns)));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Status::NotFound(fmt::format("unknown version_id {}", version_id));
  return ReadVersion(stmt);
}

Result<std::int64_t> Kb::ResolveVersion(std::optional<std::string_view> spec) {
  if (!spec.has_value()) {
    ASSIGN_OR_RETURN(base::Statement stmt, db_->Prepare("SELECT max(id) FROM module_versions"));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row || stmt.ColumnIsNull(0)) {
      return Status::NotFound("the KB has no version yet (run 'warden ingest')");
    }
    return stmt.ColumnInt64(0);
  }
  {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db_->Prepare("SELECT id FROM module_versions WHERE label = ?"));
    RETURN_IF_ERROR(stmt.Bind(1, *spec));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row) return stmt.ColumnInt64(0);
  }
  if (AllDigits(*spec)) {
    std::int64_t id = 0;
    std::from_chars(spec->data(), spec->data() + spec->size(), id);
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db_->Prepare("SELECT id FROM module_versions WHERE id = ?"));
    RETURN_IF_ERROR(stmt.Bind(1, id));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row) return id;
  }
  return Status::NotFound(fmt::format("unknown version \"{}\"", *spec));
}

Result<Coverage> Kb::GetCoverage(std::int64_t version_id) {
  RETURN_IF_ERROR(RequireVersion(version_id));
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare("SELECT count(*), count(s.name), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'human'), 0), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'export'), 0), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'oracle'), 0), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'diff-carry'), 0), "
                   "coalesce(sum(s.name IS NOT NULL AND s.provenance = 'agent'), 0), "
                   "coalesce(sum(s.locked = 1), 0), "
                   "avg(CASE WHEN s.name IS NOT NULL THEN s.confidence END), "
                   // IsPlaceholderName in SQL: "sub_" and one or more hex digits.
                   "coalesce(sum(s.name GLOB 'sub_[0-9a-fA-F]*' AND "
                   "NOT substr(s.name, 5) GLOB '*[^0-9a-fA-F]*'), 0) "
                   "FROM functions f LEFT JOIN symbols s ON s.stable_id = f.stable_id "
                   "WHERE f.version_id = ? AND f.is_import = 0"));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  Coverage c;
  if (!row) return c;
  c.defined = stmt.ColumnInt64(0);
  c.named = stmt.ColumnInt64(1);
  c.coverage_pct =
      c.defined == 0 ? 0.0 : static_cast<double>(c.named) * 100.0 / static_cast<double>(c.defined);
  c.human_named = stmt.ColumnInt64(2);
  c.export_named = stmt.ColumnInt64(3);
  c.oracle_named = stmt.ColumnInt64(4);
  c.diff_carry_named = stmt.ColumnInt64(5);
  c.agent_named = stmt.ColumnInt64(6);
  c.locked = stmt.ColumnInt64(7);
  if (!stmt.ColumnIsNull(8)) c.mean_confidence = stmt.ColumnDouble(8);
  c.placeholder_named = stmt.ColumnInt64(9);
  c.real_named = c.named - c.placeholder_named;
  c.real_coverage_pct =
      c.defined == 0 ? 0.0
                     : static_cast<double>(c.real_named) * 100.0 / static_cast<double>(c.defined);
  return c;
}

bool IsPlaceholderName(std::string_view name) {
  constexpr std::string_view kPrefix = "sub_";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) return false;
  for (char c : name.substr(kPrefix.size())) {
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

Result<FunctionPage> Kb::ListFunctions(const FunctionQuery& query) {
  if (query.limit.has_value() && (*query.limit < 1 || *query.limit > kMaxPageSize)) {
    return Status::InvalidArgument(
        fmt::format("limit: must be between 1 and {}, got {}", kMaxPageSize, *query.limit));
  }
  if (query.provenance.has_value() && !ParseProvenance(*query.provenance).has_value()) {
    return Status::InvalidArgument(
        fmt::format("provenance: unknown provenance \"{}\"", *query.provenance));
  }
  RETURN_IF_ERROR(RequireVersion(query.version_id));
  std::int64_t after = -1;
  if (query.cursor.has_value()) {
    ASSIGN_OR_RETURN(after, DecodeCursor(query, *query.cursor));
  }
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare("SELECT f.func_index, f.stable_id, f.type_signature, s.name, s.provenance, "
                   "s.confidence, s.locked, f.is_import "
                   "FROM functions f LEFT JOIN symbols s ON s.stable_id = f.stable_id "
                   "WHERE f.version_id = ?1 AND (?2 OR f.is_import = 0) AND f.func_index > ?3 "
                   "AND (?4 = 0 OR s.name IS NULL) "
                   "AND (?5 IS NULL OR s.name IS NULL OR s.confidence < ?5) "
                   "AND (?6 IS NULL OR (s.name IS NOT NULL AND s.provenance = ?6)) "
                   "ORDER BY f.func_index LIMIT ?7"));
  RETURN_IF_ERROR(stmt.Bind(1, query.version_id));
  RETURN_IF_ERROR(stmt.Bind(2, query.include_imports ? 1 : 0));
  RETURN_IF_ERROR(stmt.Bind(3, after));
  RETURN_IF_ERROR(stmt.Bind(4, query.unnamed_only ? 1 : 0));
  RETURN_IF_ERROR(query.below.has_value() ? stmt.Bind(5, *query.below) : stmt.Bind(5, nullptr));
  RETURN_IF_ERROR(BindOptional(stmt, 6, query.provenance));
  // One row more than the page tells whether another page follows.
  RETURN_IF_ERROR(stmt.Bind(7, query.limit.has_value() ? *query.limit + 1 : -1));
  FunctionPage page;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    if (query.limit.has_value() &&
        page.functions.size() == static_cast<std::size_t>(*query.limit)) {
      page.next_cursor = EncodeCursor(query, page.functions.back().index);
      break;
    }
    FunctionRow r;
    r.index = static_cast<std::uint32_t>(stmt.ColumnInt64(0));
    r.stable_id = stmt.ColumnText(1);
    r.type = OptionalText(stmt, 2);
    r.name = OptionalText(stmt, 3);
    if (r.name.has_value()) {
      r.provenance = stmt.ColumnText(4);
      r.confidence = stmt.ColumnDouble(5);
      r.locked = stmt.ColumnInt64(6) != 0;
    }
    r.is_import = stmt.ColumnInt64(7) != 0;
    page.functions.push_back(std::move(r));
  }
  return page;
}

Result<std::optional<StoredFunction>> Kb::GetFunction(std::int64_t version_id,
                                                      std::uint32_t func_index) {
  RETURN_IF_ERROR(RequireVersion(version_id));
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare(fmt::format("SELECT {} FROM functions WHERE version_id = ? AND func_index = ?",
                               kFunctionColumns)));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  RETURN_IF_ERROR(stmt.Bind(2, func_index));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<StoredFunction>();
  return std::optional<StoredFunction>(
      StoredFunction{.version_id = version_id, .record = ReadFunction(stmt)});
}

Result<std::vector<FunctionRecord>> Kb::FunctionRecords(std::int64_t version_id) {
  ASSIGN_OR_RETURN(const VersionInfo info, GetVersion(version_id));
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare(fmt::format("SELECT {} FROM functions WHERE version_id = ? "
                                            "ORDER BY func_index",
                                            kFunctionColumns)));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  std::vector<FunctionRecord> out;
  // The stored counts size the vector once: a record is ~0.8 KB, and growing 22,000 of them by
  // doubling touched twice the memory (docs/decisions/0080-warden-diff-oracle-speed.md).
  out.reserve(ReserveHint(info.functions));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    out.push_back(ReadFunction(stmt));
  }
  return out;
}

Result<AnnotatedFunctions> Kb::DefinedFunctionsForDiff(std::int64_t version_id) {
  ASSIGN_OR_RETURN(const VersionInfo info, GetVersion(version_id));
  ASSIGN_OR_RETURN(
      base::Statement stmt,
      db_->Prepare(fmt::format("SELECT {} FROM functions f LEFT JOIN symbols s ON s.stable_id = "
                               "f.stable_id WHERE f.version_id = ? AND f.is_import = 0 "
                               "ORDER BY f.func_index",
                               kDiffColumns)));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  AnnotatedFunctions out;
  const std::size_t defined = ReserveHint(info.defined);
  out.records.reserve(defined);
  out.symbols.reserve(defined);
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    FunctionRecord& r = out.records.emplace_back();
    r.func_index = static_cast<std::uint32_t>(stmt.ColumnInt64(0));
    r.type_signature = stmt.ColumnTextView(1);
    r.stable_id = stmt.ColumnTextView(2);
    r.id_tier = static_cast<int>(stmt.ColumnInt64(3));
    r.norm_hash = stmt.ColumnTextView(4);
    r.exact_hash = stmt.ColumnTextView(5);
    r.structural_hash = stmt.ColumnTextView(6);
    r.minhash = UnpackLe<std::uint64_t, kMinHashValues>(stmt.ColumnBlobView(7));
    r.histogram = UnpackLe<std::uint32_t, kHistogramClasses>(stmt.ColumnBlobView(8));
    r.call_outs = StringsFromJson(stmt.ColumnTextView(9));
    r.defined_callees = IndicesFromJson(stmt.ColumnTextView(10));
    r.instruction_count = static_cast<std::uint32_t>(stmt.ColumnInt64(11));
    r.body_offset = static_cast<std::uint64_t>(stmt.ColumnInt64(12));
    r.body_size = static_cast<std::uint64_t>(stmt.ColumnInt64(13));
    r.referenced_strings = StringsFromJson(stmt.ColumnTextView(14));
    r.opcodes = stmt.ColumnBlobView(15);
    FunctionRow& symbol = out.symbols.emplace_back();
    symbol.index = r.func_index;
    symbol.name = OptionalText(stmt, 16);
    if (symbol.name.has_value()) {
      symbol.provenance = stmt.ColumnText(17);
      symbol.confidence = stmt.ColumnDouble(18);
      symbol.locked = stmt.ColumnInt64(19) != 0;
    }
  }
  return out;
}

Result<std::optional<FunctionFacts>> Kb::GetFunctionFacts(std::int64_t version_id,
                                                          std::uint32_t func_index) {
  ASSIGN_OR_RETURN(std::optional<StoredFunction> f, GetFunction(version_id, func_index));
  if (!f.has_value() || f->record.is_import) return std::optional<FunctionFacts>();
  FunctionRecord& r = f->record;
  std::optional<std::vector<std::string_view>> mnemonics = wasm::DecodeOpcodeStream(r.opcodes);
  if (!mnemonics) {
    return Status::Malformed(fmt::format("stored opcodes of function {} are corrupt", func_index));
  }
  return std::optional<FunctionFacts>(FunctionFacts{
      .func_index = r.func_index,
      .stable_id = std::move(r.stable_id),
      .type_signature = std::move(r.type_signature),
      .call_targets = std::move(r.call_targets),
      .referenced_strings = std::move(r.referenced_strings),
      .raw_name = std::move(r.raw_name),
      .instruction_mnemonics = std::vector<std::string>(mnemonics->begin(), mnemonics->end()),
      .is_exported = !r.export_names.empty()});
}

Result<std::vector<std::uint32_t>> Kb::Callers(std::int64_t version_id, std::uint32_t func_index) {
  RETURN_IF_ERROR(RequireVersion(version_id));
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT DISTINCT f.func_index FROM functions f, "
                                "json_each(f.callees_json) j "
                                "WHERE f.version_id = ? AND j.value = ? ORDER BY f.func_index"));
  RETURN_IF_ERROR(stmt.Bind(1, version_id));
  RETURN_IF_ERROR(stmt.Bind(2, func_index));
  std::vector<std::uint32_t> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    out.push_back(static_cast<std::uint32_t>(stmt.ColumnInt64(0)));
  }
  return out;
}

Result<std::vector<EvidenceEntry>> Kb::Evidence(std::string_view stable_id) {
  ASSIGN_OR_RETURN(base::Statement stmt,
                   db_->Prepare("SELECT id, at, actor, provenance, name, summary, confidence, "
                                "accepted, reason, details_json FROM evidence "
                                "WHERE stable_id = ? ORDER BY id"));
  RETURN_IF_ERROR(stmt.Bind(1, stable_id));
  std::vector<EvidenceEntry> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    EvidenceEntry e;
    e.id = stmt.ColumnInt64(0);
    e.at = stmt.ColumnText(1);
    e.actor = stmt.ColumnText(2);
    e.provenance = stmt.ColumnText(3);
    e.name = OptionalText(stmt, 4);
    e.summary = OptionalText(stmt, 5);
    if (!stmt.ColumnIsNull(6)) e.confidence = stmt.ColumnDouble(6);
    e.accepted = stmt.ColumnInt64(7) != 0;
    e.reason = stmt.ColumnText(8);
    e.details_json = stmt.ColumnText(9);
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::optional<SymbolRecord>> Kb::GetSymbol(std::string_view stable_id) {
  SymbolRecord s;
  {
    ASSIGN_OR_RETURN(base::Statement stmt,
                     db_->Prepare("SELECT name, summary, type_signature, provenance, actor, "
                                  "confidence, locked, created_at, updated_at "
                                  "FROM symbols WHERE stable_id = ?"));
    RETURN_IF_ERROR(stmt.Bind(1, stable_id));
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return std::optional<SymbolRecord>();
    s.stable_id = std::string(stable_id);
    s.name = OptionalText(stmt, 0);
    s.summary = OptionalText(stmt, 1);
    s.type_signature = OptionalText(stmt, 2);
    s.provenance = stmt.ColumnText(3);
    s.actor = stmt.ColumnText(4);
    s.confidence = stmt.ColumnDouble(5);
    s.locked = stmt.ColumnInt64(6) != 0;
    s.created_at = stmt.ColumnText(7);
    s.updated_at = stmt.ColumnText(8);
  }
  ASSIGN_OR_RETURN(s.evidence, Evidence(stable_id));
  return std::optional<SymbolRecord>(std::move(s));
}

Result<std::uint32_t> Kb::ResolveFunction(std::int64_t version_id, std::string_view spec) {
  RETURN_IF_ERROR(RequireVersion(version_id));
  // Collects (index, stable_id) rows of a query with the version as ?1 and `arg` as ?2.
  auto matches =
      [&](std::string_view sql,
          std::string_view arg) -> Result<std::vector<std::pair<std::uint32_t, std::string>>> {
    ASSIGN_OR_RETURN(base::Statement stmt, db_->Prepare(sql));
    RETURN_IF_ERROR(stmt.Bind(1, version_id));
    RETURN_IF_ERROR(stmt.Bind(2, arg));
    std::vector<std::pair<std::uint32_t, std::string>> out;
    for (;;) {
      ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      out.emplace_back(static_cast<std::uint32_t>(stmt.ColumnInt64(0)), stmt.ColumnText(1));
    }
    return out;
  };
  auto unique = [&](const std::vector<std::pair<std::uint32_t, std::string>>& rows,
                    std::string_view what) -> Result<std::uint32_t> {
    if (rows.empty()) {
      return Status::NotFound(fmt::format("no function {} in version_id {}", what, version_id));
    }
    if (rows.size() > 1) {
      std::string list;
      for (std::size_t i = 0; i < rows.size() && i < 5; ++i) {
        list += fmt::format("{}func[{}] {}", i == 0 ? "" : ", ", rows[i].first, rows[i].second);
      }
      if (rows.size() > 5) list += ", ...";
      return Status::InvalidArgument(
          fmt::format("{} is ambiguous in version_id {}: {} functions match ({})", what, version_id,
                      rows.size(), list));
    }
    return rows.front().first;
  };
  constexpr std::string_view kByIndex =
      "SELECT func_index, stable_id FROM functions WHERE version_id = ?1 AND func_index = ?2";

  std::string_view index_text = spec;
  if (spec.starts_with("func[") && spec.ends_with("]")) {
    index_text = spec.substr(5, spec.size() - 6);
    if (!ParseIndex(index_text).has_value()) {
      return Status::InvalidArgument(fmt::format("malformed function reference \"{}\"", spec));
    }
  }
  if (std::optional<std::uint32_t> index = ParseIndex(index_text)) {
    ASSIGN_OR_RETURN(auto rows, matches(kByIndex, std::to_string(*index)));
    return unique(rows, fmt::format("func[{}]", *index));
  }
  if (spec.starts_with("w1:")) {
    std::string hex(spec.substr(3));
    for (char& c : hex) {
      if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return Status::InvalidArgument(fmt::format("malformed stable_id \"{}\"", spec));
      }
    }
    if (hex.size() < 8) {
      return Status::InvalidArgument(fmt::format(
          "stable_id prefix \"{}\" is too short: give at least 8 hex digits after w1:", spec));
    }
    ASSIGN_OR_RETURN(auto rows,
                     matches("SELECT func_index, stable_id FROM functions "
                             "WHERE version_id = ?1 AND stable_id GLOB ?2 ORDER BY func_index",
                             "w1:" + hex + "*"));
    return unique(rows, fmt::format("with stable_id {}", spec));
  }
  if (spec.starts_with("import:")) {
    ASSIGN_OR_RETURN(auto rows,
                     matches("SELECT func_index, stable_id FROM functions "
                             "WHERE version_id = ?1 AND stable_id = ?2 ORDER BY func_index",
                             spec));
    return unique(rows, fmt::format("with stable_id {}", spec));
  }
  ASSIGN_OR_RETURN(auto by_symbol,
                   matches("SELECT f.func_index, f.stable_id FROM functions f "
                           "JOIN symbols s ON s.stable_id = f.stable_id "
                           "WHERE f.version_id = ?1 AND s.name = ?2 ORDER BY f.func_index",
                           spec));
  if (!by_symbol.empty()) return unique(by_symbol, fmt::format("named \"{}\"", spec));
  ASSIGN_OR_RETURN(auto by_raw,
                   matches("SELECT func_index, stable_id FROM functions "
                           "WHERE version_id = ?1 AND raw_name = ?2 ORDER BY func_index",
                           spec));
  return unique(by_raw, fmt::format("named \"{}\"", spec));
}

// ---------------------------------------------------------------------------------------------
// Discovery and init

Result<std::string> FindDatabase(base::Env& env, const std::optional<std::string>& db_flag,
                                 const std::string& cwd) {
  if (db_flag.has_value()) return *db_flag;
  std::string dir = cwd;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  for (;;) {
    const std::string candidate = (dir == "/" ? "" : dir) + "/.warden/warden.db";
    if (env.FileExists(candidate)) return candidate;
    if (dir == "/" || dir.empty()) break;
    const std::size_t slash = dir.rfind('/');
    if (slash == std::string::npos) break;
    dir = slash == 0 ? "/" : dir.substr(0, slash);
  }
  std::string local = cwd;
  while (local.size() > 1 && local.back() == '/') local.pop_back();
  local += local == "/" ? "warden.db" : "/warden.db";
  if (env.FileExists(local)) return local;
  return Status::NotFound(std::string(kNoDatabaseMessage));
}

Result<InitResult> Init(base::Env& env, const std::string& dir, const std::string& project) {
  std::string root = dir;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  const std::string warden_dir = root + "/.warden";
  InitResult result;
  result.db_path = warden_dir + "/warden.db";
  result.created = !env.FileExists(result.db_path);
  RETURN_IF_ERROR(env.CreateDir(warden_dir));
  std::string name = project;
  if (name.empty()) {
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(root, ec);
    name = (ec ? std::filesystem::path(root) : abs).lexically_normal().filename().string();
    if (name.empty()) name = "warden";
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<Kb> kb,
      Kb::Open(env, result.db_path, KbOptions{.create_if_missing = true, .project = name}));
  ASSIGN_OR_RETURN(result.project, kb->Project());
  return result;
}

}  // namespace trove::warden::kb

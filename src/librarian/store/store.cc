#include "librarian/store/store.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/hash.h"
#include "base/sqlite.h"
#include "librarian/extract/identifier.h"
#include "librarian/store/manifest.h"
#include "librarian/store/schema.h"
#include "librarian/store/statement_cache.h"

namespace trove::librarian::store {
namespace {

using extract::SymbolKind;

std::string_view TargetPrefix(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::kFunction:
    case SymbolKind::kMethod:
      return "fn";
    case SymbolKind::kNamespace:
      return "ns";
    default:
      return "type";
  }
}

// Words for the `subwords` column: the identifier's index words, its qualified name's pieces,
// then the pieces of compound identifiers in the body.
std::string ChunkSubwords(const extract::Chunk& chunk) {
  std::string out;
  auto add = [&out](const std::vector<std::string>& words) {
    for (const std::string& w : words) {
      if (!out.empty()) out.push_back(' ');
      out += w;
    }
  };
  if (chunk.kind == extract::ChunkKind::kSymbol) {
    add(extract::IndexWords(chunk.name));
    if (chunk.qualified_name != chunk.name) add(extract::SplitIdentifier(chunk.qualified_name));
  }
  std::string body = extract::SubwordText(chunk.text);
  if (!body.empty()) {
    if (!out.empty()) out.push_back(' ');
    out += body;
  }
  return out;
}

std::string PathWords(std::string_view path) {
  std::string out;
  for (const std::string& w : extract::SplitIdentifier(path)) {
    if (!out.empty()) out.push_back(' ');
    out += w;
  }
  return out;
}

Result<FileStatus> ParseStatus(std::string_view name) {
  for (FileStatus s : {FileStatus::kIndexed, FileStatus::kUnchanged, FileStatus::kSkippedLarge,
                       FileStatus::kSkippedBinary, FileStatus::kTimedOut, FileStatus::kFailed}) {
    if (FileStatusName(s) == name) return s;
  }
  return Status::Malformed(fmt::format("files.status: unknown value {}", name));
}

Result<FileRecord> ReadFile(base::Statement& st) {
  FileRecord f;
  f.path = st.ColumnText(0);
  f.sha256 = st.ColumnText(1);
  f.language = st.ColumnText(2);
  f.extractor = st.ColumnText(3);
  f.size = static_cast<std::uint64_t>(st.ColumnInt64(4));
  f.mtime_ns = st.ColumnInt64(5);
  ASSIGN_OR_RETURN(f.status, ParseStatus(st.ColumnText(6)));
  f.parse_error = st.ColumnInt64(7) != 0;
  f.stale = st.ColumnInt64(8) != 0;
  f.run_id = st.ColumnText(9);
  return f;
}
constexpr const char* kFileColumns =
    "path, sha256, language, extractor, size, mtime_ns, status, parse_error, stale, run_id";

RunRecord ReadRun(base::Statement& st) {
  RunRecord r;
  r.run_id = st.ColumnText(0);
  r.state = st.ColumnText(1);
  r.mode = st.ColumnText(2);
  r.started_at = st.ColumnText(3);
  r.finished_at = st.ColumnText(4);
  r.options_json = st.ColumnText(5);
  r.tool_versions_json = st.ColumnText(6);
  r.stats_json = st.ColumnText(7);
  return r;
}
constexpr const char* kRunColumns =
    "run_id, state, mode, started_at, finished_at, options, tool_versions, stats";

constexpr const char* kSymbolSelect =
    "SELECT s.id, f.path, s.target_id, s.name, s.qualified_name, s.kind, s.start_line, "
    "s.end_line, s.start_byte, s.end_byte, s.signature, s.doc, s.span_sha256, s.parse_error, "
    "s.end_known, coalesce(p.qualified_name, '') FROM symbols s JOIN files f ON f.id = s.file_id "
    "LEFT JOIN symbols p ON p.id = s.parent_id ";

// Reads the kSymbolSelect columns of a row, the first of them at column `first`.
SymbolRow ReadSymbol(base::Statement& st, int first = 0) {
  SymbolRow s;
  s.id = st.ColumnInt64(first);
  s.path = st.ColumnText(first + 1);
  s.target_id = st.ColumnText(first + 2);
  s.name = st.ColumnText(first + 3);
  s.qualified_name = st.ColumnText(first + 4);
  s.kind = st.ColumnText(first + 5);
  s.start_line = static_cast<std::uint32_t>(st.ColumnInt64(first + 6));
  s.end_line = static_cast<std::uint32_t>(st.ColumnInt64(first + 7));
  s.start_byte = static_cast<std::uint32_t>(st.ColumnInt64(first + 8));
  s.end_byte = static_cast<std::uint32_t>(st.ColumnInt64(first + 9));
  s.signature = st.ColumnText(first + 10);
  s.doc = st.ColumnText(first + 11);
  s.span_sha256 = st.ColumnText(first + 12);
  s.parse_error = st.ColumnInt64(first + 13) != 0;
  s.end_known = st.ColumnInt64(first + 14) != 0;
  s.parent_qualified_name = st.ColumnText(first + 15);
  return s;
}

Result<std::vector<SymbolRow>> ReadSymbols(base::Statement& st) {
  std::vector<SymbolRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(ReadSymbol(st));
  }
}

Result<std::optional<std::int64_t>> FileId(internal::StatementCache& stmts, std::string_view path) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts.Get("SELECT id FROM files WHERE path = ?1"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, path));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(st.ColumnInt64(0));
}

// Deletes the rows that hang off one file (not the file itself).
Status ClearFileRows(internal::StatementCache& stmts, std::int64_t file_id) {
  // Children before parents: calls and chunks point at symbols.
  for (const char* sql :
       {"DELETE FROM calls WHERE file_id = ?1", "DELETE FROM imports WHERE file_id = ?1",
        "DELETE FROM chunks WHERE file_id = ?1", "DELETE FROM symbols WHERE file_id = ?1"}) {
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped, stmts.Get(sql));
    base::Statement& st = *scoped;
    RETURN_IF_ERROR(st.Bind(1, file_id));
    RETURN_IF_ERROR(st.Step());
  }
  return Status::Ok();
}

// Per-connection page cache and memory-map sizes (Store::Open says why).
constexpr int kPageCacheKib = 32 * 1024;
constexpr std::int64_t kMmapBytes = std::int64_t{256} << 20;

}  // namespace

std::string_view FileStatusName(FileStatus status) {
  switch (status) {
    case FileStatus::kIndexed:
      return "indexed";
    case FileStatus::kUnchanged:
      return "unchanged";
    case FileStatus::kSkippedLarge:
      return "skipped_large";
    case FileStatus::kSkippedBinary:
      return "skipped_binary";
    case FileStatus::kTimedOut:
      return "timed_out";
    case FileStatus::kFailed:
      return "failed";
  }
  return "failed";
}

PreparedRows PrepareRows(std::string_view path, const extract::FileFacts& facts,
                         std::string_view content) {
  PreparedRows out;
  out.target_ids.reserve(facts.symbols.size());
  out.span_sha256.reserve(facts.symbols.size());
  std::unordered_map<std::string, int> seen;
  for (const extract::Symbol& s : facts.symbols) {
    std::string target = fmt::format("{}:{}::{}", TargetPrefix(s.kind), path, s.qualified_name);
    int n = ++seen[target];
    if (n > 1) target += fmt::format("~{}", n);  // overloads, #ifdef alternatives
    out.target_ids.push_back(std::move(target));
    std::string span_hash;
    if (s.start_byte <= s.end_byte && s.end_byte <= content.size()) {
      span_hash = base::Sha256Hex(content.substr(s.start_byte, s.end_byte - s.start_byte));
    }
    out.span_sha256.push_back(std::move(span_hash));
  }
  out.chunk_subwords.reserve(facts.chunks.size());
  for (const extract::Chunk& c : facts.chunks) out.chunk_subwords.push_back(ChunkSubwords(c));
  out.path_words = PathWords(path);
  return out;
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, const StoreOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<base::Database> db, base::Database::Open(path));
  ASSIGN_OR_RETURN(internal::SchemaState state, internal::EnsureSchema(*db, options.trigram));
  // A query reads a few MB of B-tree and FTS5 pages; SQLite's default page cache (2 MB)
  // re-read them with pread on every query. A larger cache (allocated only as pages are
  // read) and memory-mapped reads keep a long-lived connection's working set in memory
  // (docs/decisions/0023).
  RETURN_IF_ERROR(db->Exec(fmt::format("PRAGMA cache_size=-{}", kPageCacheKib)));
  RETURN_IF_ERROR(db->Exec(fmt::format("PRAGMA mmap_size={}", kMmapBytes)));
  if (options.wal_autocheckpoint_pages < 0) {
    return Status::InvalidArgument(
        fmt::format("{}: wal_autocheckpoint_pages: must not be negative", path));
  }
  if (options.wal_autocheckpoint_pages > 0) {
    RETURN_IF_ERROR(
        db->Exec(fmt::format("PRAGMA wal_autocheckpoint={}", options.wal_autocheckpoint_pages)));
  }
  return std::unique_ptr<Store>(new Store(std::move(db), state.trigram, state.rebuilt));
}

Store::Store(std::unique_ptr<base::Database> db, bool trigram, bool rebuilt)
    : db_(std::move(db)),
      stmts_(std::make_unique<internal::StatementCache>(*db_)),
      trigram_(trigram),
      schema_rebuilt_(rebuilt) {}

Store::~Store() = default;

Status Store::ReplaceFile(const FileRecord& file, const extract::FileFacts& facts,
                          std::string_view content) {
  WriteBatch batch;
  batch.replace.push_back(FileReplace{file, &facts, content});
  return Apply(batch);
}

Status Store::DeleteFiles(std::span<const std::string> paths) {
  WriteBatch batch;
  batch.remove.assign(paths.begin(), paths.end());
  return Apply(batch);
}

Status Store::Apply(const WriteBatch& batch) {
  ++writes_;  // invalidates cached document frequencies, whatever the outcome
  ASSIGN_OR_RETURN(base::Transaction tx, db_->Begin());
  if (batch.chunk_automerge) {
    if (*batch.chunk_automerge < 0 || *batch.chunk_automerge > 64) {
      return Status::InvalidArgument(
          fmt::format("chunk_automerge: {} is outside 0..64", *batch.chunk_automerge));
    }
    for (const char* table : {"chunk_fts", "chunk_tri"}) {
      if (std::string_view(table) == "chunk_tri" && !trigram_) continue;
      ASSIGN_OR_RETURN(
          internal::ScopedStatement scoped,
          stmts_->Get(fmt::format("INSERT INTO {0}({0}, rank) VALUES ('automerge', ?1)", table)));
      base::Statement& st = *scoped;
      RETURN_IF_ERROR(st.Bind(1, static_cast<std::int64_t>(*batch.chunk_automerge)));
      RETURN_IF_ERROR(st.Step());
    }
  }
  if (batch.run) {
    const RunRecord& r = *batch.run;
    ASSIGN_OR_RETURN(
        internal::ScopedStatement scoped,
        stmts_->Get("INSERT INTO runs(run_id, state, mode, started_at, finished_at, options, "
                    "tool_versions, stats) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                    "ON CONFLICT(run_id) DO UPDATE SET state = ?2, mode = ?3, started_at = ?4, "
                    "finished_at = ?5, options = ?6, tool_versions = ?7, stats = ?8"));
    base::Statement& st = *scoped;
    RETURN_IF_ERROR(st.Bind(1, std::string_view(r.run_id)));
    RETURN_IF_ERROR(st.Bind(2, std::string_view(r.state)));
    RETURN_IF_ERROR(st.Bind(3, std::string_view(r.mode)));
    RETURN_IF_ERROR(st.Bind(4, std::string_view(r.started_at)));
    RETURN_IF_ERROR(st.Bind(5, std::string_view(r.finished_at)));
    RETURN_IF_ERROR(st.Bind(6, std::string_view(r.options_json)));
    RETURN_IF_ERROR(st.Bind(7, std::string_view(r.tool_versions_json)));
    RETURN_IF_ERROR(st.Bind(8, std::string_view(r.stats_json)));
    RETURN_IF_ERROR(st.Step());
  }
  // FTS5 entries are written in bulk: first the 'delete' entries of every chunk this batch
  // clears, then, after all row changes, the entries of every chunk it wrote (schema.cc says
  // why there are no triggers).
  std::vector<std::int64_t> cleared;
  for (const FileReplace& r : batch.replace) {
    ASSIGN_OR_RETURN(std::optional<std::int64_t> id, FileId(*stmts_, r.file.path));
    if (id) cleared.push_back(*id);
  }
  for (const std::string& path : batch.remove) {
    ASSIGN_OR_RETURN(std::optional<std::int64_t> id, FileId(*stmts_, path));
    if (id) cleared.push_back(*id);
  }
  RETURN_IF_ERROR(ChunkIndexes(cleared, /*remove=*/true));

  std::vector<std::int64_t> written;
  std::vector<std::pair<std::int64_t, const FileReplace*>> added_paths;
  for (const FileReplace& r : batch.replace) {
    bool added = false;
    Result<std::int64_t> id = ReplaceLocked(r, &added);
    if (!id.ok()) return id.status().WithContext(r.file.path);
    written.push_back(*id);
    if (added) added_paths.emplace_back(*id, &r);
  }
  for (const FileTouch& t : batch.touch) {
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                     stmts_->Get("UPDATE files SET size = ?2, mtime_ns = ?3, run_id = ?4, "
                                 "status = 'unchanged' WHERE path = ?1"));
    base::Statement& st = *scoped;
    RETURN_IF_ERROR(st.Bind(1, std::string_view(t.path)));
    RETURN_IF_ERROR(st.Bind(2, t.size));
    RETURN_IF_ERROR(st.Bind(3, t.mtime_ns));
    RETURN_IF_ERROR(st.Bind(4, std::string_view(t.run_id)));
    RETURN_IF_ERROR(st.Step());
    if (db_->Changes() == 0) return Status::NotFound(fmt::format("touch {}: not stored", t.path));
  }
  for (const FileMark& m : batch.mark) {
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                     stmts_->Get("UPDATE files SET status = ?2, stale = ?3 WHERE path = ?1"));
    base::Statement& st = *scoped;
    RETURN_IF_ERROR(st.Bind(1, std::string_view(m.path)));
    RETURN_IF_ERROR(st.Bind(2, FileStatusName(m.status)));
    RETURN_IF_ERROR(st.Bind(3, m.stale ? 1 : 0));
    RETURN_IF_ERROR(st.Step());
    if (db_->Changes() == 0) return Status::NotFound(fmt::format("mark {}: not stored", m.path));
  }
  for (const std::string& path : batch.remove) {
    RETURN_IF_ERROR(RemoveLocked(path).WithContext(path));
  }

  RETURN_IF_ERROR(ChunkIndexes(written, /*remove=*/false));
  if (!added_paths.empty()) {
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                     stmts_->Get("INSERT INTO path_fts(rowid, path, words) VALUES (?1, ?2, ?3)"));
    base::Statement& st = *scoped;
    for (const auto& [id, r] : added_paths) {
      const std::string& path = r->file.path;
      // A path replaced and then removed in the same batch is gone.
      ASSIGN_OR_RETURN(std::optional<std::int64_t> still, FileId(*stmts_, path));
      if (!still || *still != id) continue;
      std::string words = r->prepared != nullptr ? std::string() : PathWords(path);
      st.Reset();
      RETURN_IF_ERROR(st.Bind(1, id));
      RETURN_IF_ERROR(st.Bind(2, std::string_view(path)));
      RETURN_IF_ERROR(
          st.Bind(3, std::string_view(r->prepared != nullptr ? r->prepared->path_words : words)));
      RETURN_IF_ERROR(st.Step());
    }
  }
  if (batch.record_manifest) {
    if (!batch.run) return Status::InvalidArgument("record_manifest: the batch has no run record");
    RETURN_IF_ERROR(internal::RecordRunManifest(
        *db_, batch.run->run_id, batch.manifest_paths ? &*batch.manifest_paths : nullptr));
  }
  return tx.Commit();
}

Status Store::ChunkIndexes(std::span<const std::int64_t> file_ids, bool remove) {
  if (file_ids.empty()) return Status::Ok();
  std::string ids = "[";
  for (std::size_t i = 0; i < file_ids.size(); ++i) {
    if (i > 0) ids += ',';
    ids += std::to_string(file_ids[i]);
  }
  ids += ']';
  // With `remove`, the FTS5 'delete' command: the hidden column named like the table.
  const char* del = remove ? "'delete', " : "";
  std::vector<std::string> sql;
  sql.push_back(fmt::format(
      "INSERT INTO chunk_fts({}rowid, name, subwords, doc, body, path) SELECT {}id, name, "
      "subwords, doc, body, path FROM chunks WHERE file_id IN (SELECT value FROM json_each(?1))",
      remove ? "chunk_fts, " : "", del));
  if (trigram_) {
    sql.push_back(fmt::format(
        "INSERT INTO chunk_tri({}rowid, name, path, body) SELECT {}id, name, path, body FROM "
        "chunks WHERE file_id IN (SELECT value FROM json_each(?1))",
        remove ? "chunk_tri, " : "", del));
  }
  for (const std::string& q : sql) {
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped, stmts_->Get(q));
    base::Statement& st = *scoped;
    RETURN_IF_ERROR(st.Bind(1, std::string_view(ids)));
    RETURN_IF_ERROR(st.Step());
  }
  return Status::Ok();
}

Status Store::RemoveLocked(std::string_view path) {
  ASSIGN_OR_RETURN(std::optional<std::int64_t> id, FileId(*stmts_, path));
  if (!id) return Status::Ok();  // already gone: removal is idempotent
  RETURN_IF_ERROR(ClearFileRows(*stmts_, *id));
  for (const char* sql :
       {"DELETE FROM path_fts WHERE rowid = ?1", "DELETE FROM files WHERE id = ?1"}) {
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped, stmts_->Get(sql));
    base::Statement& st = *scoped;
    RETURN_IF_ERROR(st.Bind(1, *id));
    RETURN_IF_ERROR(st.Step());
  }
  return Status::Ok();
}

Result<std::int64_t> Store::ReplaceLocked(const FileReplace& r, bool* added) {
  const FileRecord& f = r.file;
  if (f.path.empty()) return Status::InvalidArgument("empty path");
  ASSIGN_OR_RETURN(std::optional<std::int64_t> existing, FileId(*stmts_, f.path));
  *added = !existing;
  std::int64_t file_id = 0;
  if (existing) {
    file_id = *existing;
    RETURN_IF_ERROR(ClearFileRows(*stmts_, file_id));
  }
  {
    ASSIGN_OR_RETURN(
        internal::ScopedStatement scoped,
        stmts_->Get("INSERT INTO files(path, sha256, language, extractor, size, mtime_ns, "
                    "status, parse_error, stale, run_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                    "?9, ?10) ON CONFLICT(path) DO UPDATE SET sha256 = ?2, language = ?3, "
                    "extractor = ?4, size = ?5, mtime_ns = ?6, status = ?7, parse_error = ?8, "
                    "stale = ?9, run_id = ?10"));
    base::Statement& st = *scoped;
    RETURN_IF_ERROR(st.Bind(1, std::string_view(f.path)));
    RETURN_IF_ERROR(st.Bind(2, std::string_view(f.sha256)));
    RETURN_IF_ERROR(st.Bind(3, std::string_view(f.language)));
    RETURN_IF_ERROR(st.Bind(4, std::string_view(f.extractor)));
    RETURN_IF_ERROR(st.Bind(5, f.size));
    RETURN_IF_ERROR(st.Bind(6, f.mtime_ns));
    RETURN_IF_ERROR(st.Bind(7, FileStatusName(f.status)));
    RETURN_IF_ERROR(st.Bind(8, f.parse_error ? 1 : 0));
    RETURN_IF_ERROR(st.Bind(9, f.stale ? 1 : 0));
    RETURN_IF_ERROR(st.Bind(10, std::string_view(f.run_id)));
    RETURN_IF_ERROR(st.Step());
  }
  if (!existing) file_id = db_->LastInsertRowId();  // path_fts: written by Apply
  if (r.facts == nullptr) return file_id;
  const extract::FileFacts& facts = *r.facts;
  std::optional<PreparedRows> local;
  if (r.prepared == nullptr) local = PrepareRows(f.path, facts, r.content);
  const PreparedRows& prepared = r.prepared != nullptr ? *r.prepared : *local;
  if (prepared.target_ids.size() != facts.symbols.size() ||
      prepared.span_sha256.size() != facts.symbols.size() ||
      prepared.chunk_subwords.size() != facts.chunks.size()) {
    return Status::InvalidArgument("prepared rows do not match the facts");
  }

  // Symbols, in order (a parent precedes its children), with their target ids.
  std::vector<std::int64_t> symbol_ids(facts.symbols.size(), 0);
  {
    ASSIGN_OR_RETURN(
        internal::ScopedStatement scoped,
        stmts_->Get("INSERT INTO symbols(file_id, ordinal, parent_id, target_id, name, "
                    "qualified_name, kind, start_line, end_line, start_byte, end_byte, "
                    "signature, doc, span_sha256, parse_error, end_known) VALUES (?1, ?2, ?3, "
                    "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"));
    base::Statement& st = *scoped;
    for (std::size_t i = 0; i < facts.symbols.size(); ++i) {
      const extract::Symbol& s = facts.symbols[i];
      st.Reset();
      RETURN_IF_ERROR(st.Bind(1, file_id));
      RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(i)));
      if (s.parent >= 0 && static_cast<std::size_t>(s.parent) < i) {
        RETURN_IF_ERROR(st.Bind(3, symbol_ids[s.parent]));
      } else {
        RETURN_IF_ERROR(st.Bind(3, nullptr));
      }
      RETURN_IF_ERROR(st.Bind(4, std::string_view(prepared.target_ids[i])));
      RETURN_IF_ERROR(st.Bind(5, std::string_view(s.name)));
      RETURN_IF_ERROR(st.Bind(6, std::string_view(s.qualified_name)));
      RETURN_IF_ERROR(st.Bind(7, extract::SymbolKindName(s.kind)));
      RETURN_IF_ERROR(st.Bind(8, s.start_line));
      RETURN_IF_ERROR(st.Bind(9, s.end_line));
      RETURN_IF_ERROR(st.Bind(10, s.start_byte));
      RETURN_IF_ERROR(st.Bind(11, s.end_byte));
      RETURN_IF_ERROR(st.Bind(12, std::string_view(s.signature)));
      RETURN_IF_ERROR(st.Bind(13, std::string_view(s.doc)));
      RETURN_IF_ERROR(st.Bind(14, std::string_view(prepared.span_sha256[i])));
      RETURN_IF_ERROR(st.Bind(15, s.parse_error ? 1 : 0));
      RETURN_IF_ERROR(st.Bind(16, s.end_known ? 1 : 0));
      RETURN_IF_ERROR(st.Step());
      symbol_ids[i] = db_->LastInsertRowId();
    }
  }
  auto symbol_id = [&](std::int32_t index) -> std::optional<std::int64_t> {
    if (index < 0 || static_cast<std::size_t>(index) >= symbol_ids.size()) return std::nullopt;
    return symbol_ids[index];
  };
  {
    ASSIGN_OR_RETURN(
        internal::ScopedStatement scoped,
        stmts_->Get("INSERT INTO chunks(file_id, symbol_id, kind, qualified_name, start_line, "
                    "end_line, name, subwords, doc, body, path) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                    "?7, ?8, ?9, ?10, ?11)"));
    base::Statement& st = *scoped;
    for (std::size_t i = 0; i < facts.chunks.size(); ++i) {
      const extract::Chunk& c = facts.chunks[i];
      st.Reset();
      RETURN_IF_ERROR(st.Bind(1, file_id));
      if (auto id = symbol_id(c.symbol)) {
        RETURN_IF_ERROR(st.Bind(2, *id));
      } else {
        RETURN_IF_ERROR(st.Bind(2, nullptr));
      }
      RETURN_IF_ERROR(st.Bind(3, extract::ChunkKindName(c.kind)));
      RETURN_IF_ERROR(st.Bind(4, std::string_view(c.qualified_name)));
      RETURN_IF_ERROR(st.Bind(5, c.start_line));
      RETURN_IF_ERROR(st.Bind(6, c.end_line));
      RETURN_IF_ERROR(st.Bind(7, std::string_view(c.name)));
      RETURN_IF_ERROR(st.Bind(8, std::string_view(prepared.chunk_subwords[i])));
      RETURN_IF_ERROR(st.Bind(9, std::string_view(c.doc)));
      RETURN_IF_ERROR(st.Bind(10, std::string_view(c.text)));
      RETURN_IF_ERROR(st.Bind(11, std::string_view(f.path)));
      RETURN_IF_ERROR(st.Step());
    }
  }
  {
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                     stmts_->Get("INSERT INTO imports(file_id, module, line) VALUES (?1, ?2, ?3)"));
    base::Statement& st = *scoped;
    for (const extract::Import& i : facts.imports) {
      st.Reset();
      RETURN_IF_ERROR(st.Bind(1, file_id));
      RETURN_IF_ERROR(st.Bind(2, std::string_view(i.module)));
      RETURN_IF_ERROR(st.Bind(3, i.line));
      RETURN_IF_ERROR(st.Step());
    }
  }
  {
    ASSIGN_OR_RETURN(
        internal::ScopedStatement scoped,
        stmts_->Get("INSERT INTO calls(file_id, caller_id, callee, line) VALUES (?1, ?2, ?3, ?4)"));
    base::Statement& st = *scoped;
    for (const extract::CallRef& c : facts.calls) {
      st.Reset();
      RETURN_IF_ERROR(st.Bind(1, file_id));
      if (auto id = symbol_id(c.caller)) {
        RETURN_IF_ERROR(st.Bind(2, *id));
      } else {
        RETURN_IF_ERROR(st.Bind(2, nullptr));
      }
      RETURN_IF_ERROR(st.Bind(3, std::string_view(c.callee)));
      RETURN_IF_ERROR(st.Bind(4, c.line));
      RETURN_IF_ERROR(st.Step());
    }
  }
  return file_id;
}

Result<std::optional<FileRecord>> Store::GetFile(std::string_view path) {
  RETURN_IF_ERROR(RefreshNameCaches());
  if (auto it = file_cache_.find(std::string(path)); it != file_cache_.end()) return it->second;
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(fmt::format("SELECT {} FROM files WHERE path = ?1", kFileColumns)));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, path));
  ASSIGN_OR_RETURN(bool row, st.Step());
  std::optional<FileRecord> out;
  if (row) {
    ASSIGN_OR_RETURN(FileRecord f, ReadFile(st));
    out = std::move(f);
  }
  file_cache_.emplace(std::string(path), out);
  return out;
}

Result<std::vector<FileRecord>> Store::ListFiles() {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(fmt::format("SELECT {} FROM files ORDER BY path", kFileColumns)));
  base::Statement& st = *scoped;
  std::vector<FileRecord> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    ASSIGN_OR_RETURN(FileRecord f, ReadFile(st));
    out.push_back(std::move(f));
  }
}

Result<std::vector<FileRecord>> Store::ListFilesUnder(std::span<const std::string> paths) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(fmt::format("SELECT {} FROM files WHERE path = ?1 OR (path >= ?1 "
                                           "|| '/' AND path < ?1 || '0') ORDER BY path",
                                           kFileColumns)));
  base::Statement& st = *scoped;
  std::vector<FileRecord> out;
  for (const std::string& p : paths) {
    st.Reset();
    RETURN_IF_ERROR(st.Bind(1, std::string_view(p)));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      ASSIGN_OR_RETURN(FileRecord f, ReadFile(st));
      out.push_back(std::move(f));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const FileRecord& a, const FileRecord& b) { return a.path < b.path; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const FileRecord& a, const FileRecord& b) { return a.path == b.path; }),
            out.end());
  return out;
}

Result<std::optional<RunRecord>> Store::GetRun(std::string_view run_id) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(fmt::format("SELECT {} FROM runs WHERE run_id = ?1", kRunColumns)));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, run_id));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<RunRecord>();
  return std::optional<RunRecord>(ReadRun(st));
}

Result<std::vector<RunRecord>> Store::ListRuns() {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(fmt::format("SELECT {} FROM runs ORDER BY id", kRunColumns)));
  base::Statement& st = *scoped;
  std::vector<RunRecord> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(ReadRun(st));
  }
}

Result<std::vector<SymbolRow>> Store::FindSymbols(std::string_view name, std::size_t limit) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(std::string(kSymbolSelect) +
                               "WHERE s.id IN (SELECT id FROM symbols WHERE name = ?1 UNION "
                               "SELECT id FROM symbols WHERE qualified_name = ?1) "
                               "ORDER BY f.path, s.start_line, s.id LIMIT ?2"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, name));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit)));
  return ReadSymbols(st);
}

Result<std::optional<SymbolRow>> Store::GetSymbol(std::string_view target_id) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(std::string(kSymbolSelect) + "WHERE s.target_id = ?1"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, target_id));
  ASSIGN_OR_RETURN(std::vector<SymbolRow> rows, ReadSymbols(st));
  if (rows.empty()) return std::optional<SymbolRow>();
  return std::optional<SymbolRow>(std::move(rows.front()));
}

Result<std::vector<SymbolRow>> Store::FileSymbols(std::string_view path) {
  ASSIGN_OR_RETURN(
      internal::ScopedStatement scoped,
      stmts_->Get(std::string(kSymbolSelect) + "WHERE f.path = ?1 ORDER BY s.ordinal"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, path));
  return ReadSymbols(st);
}

Result<std::vector<ImportRow>> Store::FileImports(std::string_view path) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get("SELECT f.path, i.module, i.line FROM imports i JOIN files f ON "
                               "f.id = i.file_id WHERE f.path = ?1 ORDER BY i.id"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, path));
  std::vector<ImportRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(ImportRow{st.ColumnText(0), st.ColumnText(1),
                            static_cast<std::uint32_t>(st.ColumnInt64(2))});
  }
}

namespace {
Result<std::vector<CallRow>> ReadCalls(base::Statement& st) {
  std::vector<CallRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(CallRow{st.ColumnText(0), st.ColumnText(1),
                          static_cast<std::uint32_t>(st.ColumnInt64(2)), st.ColumnText(3)});
  }
}
constexpr const char* kCallSelect =
    "SELECT f.path, c.callee, c.line, coalesce(s.target_id, '') FROM calls c JOIN files f ON "
    "f.id = c.file_id LEFT JOIN symbols s ON s.id = c.caller_id ";
}  // namespace

Result<std::vector<CallRow>> Store::FileCalls(std::string_view path) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(std::string(kCallSelect) + "WHERE f.path = ?1 ORDER BY c.id"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, path));
  return ReadCalls(st);
}

Result<std::vector<CallRow>> Store::CallsTo(std::string_view callee, std::size_t limit) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(std::string(kCallSelect) +
                               "WHERE c.callee = ?1 ORDER BY f.path, c.line, c.id LIMIT ?2"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, callee));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit)));
  return ReadCalls(st);
}

namespace {

// A JSON array of `items` for json_each(): strings quoted with ", \ and control characters
// escaped; other bytes pass through as they are (SQLite's JSON reader keeps them).
std::string JsonArray(std::span<const std::string> items) {
  std::string out = "[";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : item) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
      } else {
        out += c;
      }
    }
    out += '"';
  }
  out += ']';
  return out;
}

std::string JsonArray(std::span<const std::int64_t> items) {
  return fmt::format("[{}]", fmt::join(items, ","));
}

// The asked keys that `cache` holds no answer for, in order; key(name) is the cache's key.
template <typename Cache, typename KeyFn>
std::vector<std::string> Uncached(const std::set<std::string>& asked, const Cache& cache,
                                  KeyFn key) {
  std::vector<std::string> missing;
  for (const std::string& name : asked) {
    if (cache.count(key(name)) == 0) missing.push_back(name);
  }
  return missing;
}

}  // namespace

Result<std::vector<SymbolRow>> Store::GetSymbols(std::span<const std::string> target_ids) {
  std::vector<SymbolRow> out;
  if (target_ids.empty()) return out;
  RETURN_IF_ERROR(RefreshNameCaches());
  const std::set<std::string> asked(target_ids.begin(), target_ids.end());
  const std::vector<std::string> missing = Uncached(
      asked, symbol_cache_, [](const std::string& id) -> const std::string& { return id; });
  if (!missing.empty()) {
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                     stmts_->Get(std::string(kSymbolSelect) +
                                 "WHERE s.target_id IN (SELECT value FROM json_each(?1))"));
    base::Statement& st = *scoped;
    const std::string ids = JsonArray(missing);
    RETURN_IF_ERROR(st.Bind(1, std::string_view(ids)));
    ASSIGN_OR_RETURN(std::vector<SymbolRow> rows, ReadSymbols(st));
    for (const std::string& id : missing) symbol_cache_[id];
    for (SymbolRow& row : rows) symbol_cache_[row.target_id] = std::move(row);
  }
  for (const std::string& id : asked) {
    if (const std::optional<SymbolRow>& row = symbol_cache_.at(id)) out.push_back(*row);
  }
  return out;
}

namespace {
// Entries kept per name cache before it is cleared (bounds a long-lived server's memory).
constexpr std::size_t kMaxCachedNames = 20000;
}  // namespace

Store::ReadSnapshot::~ReadSnapshot() {
  if (store_ == nullptr) return;
  store_->snapshot_ = 0;
  // A read-only transaction commits nothing; should COMMIT fail, ROLLBACK ends it the same.
  if (!store_->db_->Exec("COMMIT").ok()) (void)store_->db_->Exec("ROLLBACK");
}

Result<Store::ReadSnapshot> Store::BeginRead() {
  if (snapshot_ != 0) return ReadSnapshot(nullptr);
  // BEGIN (deferred) takes no lock until the first read. It fails only when a transaction is
  // already open on this connection, whose snapshot the reads then share: not an error.
  if (!db_->Exec("BEGIN").ok()) return ReadSnapshot(nullptr);
  snapshot_ = ++snapshots_begun_;
  return ReadSnapshot(this);
}

Status Store::RefreshNameCaches() {
  // Inside a snapshot nothing another connection writes becomes visible, and this one only
  // reads: one check per snapshot suffices.
  if (snapshot_ != 0 && names_checked_in_ == snapshot_ && writes_ == names_writes_) {
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(internal::ScopedStatement version, stmts_->Get("PRAGMA data_version"));
  ASSIGN_OR_RETURN(bool has_version, version->Step());
  const std::int64_t data_version = has_version ? version->ColumnInt64(0) : -1;
  names_checked_in_ = snapshot_;
  if (data_version != names_data_version_ || writes_ != names_writes_ ||
      defs_cache_.size() > kMaxCachedNames || calls_cache_.size() > kMaxCachedNames ||
      count_cache_.size() > kMaxCachedNames || def_count_cache_.size() > kMaxCachedNames ||
      symbol_cache_.size() > kMaxCachedNames || file_cache_.size() > kMaxCachedNames) {
    defs_cache_.clear();
    calls_cache_.clear();
    count_cache_.clear();
    def_count_cache_.clear();
    symbol_cache_.clear();
    file_cache_.clear();
    names_data_version_ = data_version;
    names_writes_ = writes_;
  }
  return Status::Ok();
}

Result<std::vector<std::pair<std::string, SymbolRow>>> Store::FindSymbolsMany(
    std::span<const std::string> names, std::size_t limit_per_name) {
  std::vector<std::pair<std::string, SymbolRow>> out;
  if (names.empty() || limit_per_name == 0) return out;
  RETURN_IF_ERROR(RefreshNameCaches());
  const std::set<std::string> asked(names.begin(), names.end());
  const std::vector<std::string> missing = Uncached(
      asked, defs_cache_, [&](const std::string& name) { return std::pair(limit_per_name, name); });
  if (!missing.empty()) {
    ASSIGN_OR_RETURN(auto rows, FindSymbolsUncached(missing, limit_per_name));
    for (const std::string& name : missing) defs_cache_[{limit_per_name, name}];
    for (auto& [name, row] : rows) defs_cache_[{limit_per_name, name}].push_back(std::move(row));
  }
  for (const std::string& name : asked) {
    for (const SymbolRow& row : defs_cache_.at({limit_per_name, name})) {
      out.emplace_back(name, row);
    }
  }
  return out;
}

Result<std::vector<std::pair<std::string, SymbolRow>>> Store::FindSymbolsUncached(
    std::span<const std::string> names, std::size_t limit_per_name) {
  std::vector<std::pair<std::string, SymbolRow>> out;
  // Per name, the same rows and order as FindSymbols: name or qualified name equal, by path,
  // line, id, cut at the limit (row_number over each name's matches).
  ASSIGN_OR_RETURN(
      internal::ScopedStatement scoped,
      stmts_->Get(
          "WITH q(n) AS (SELECT DISTINCT value FROM json_each(?1)), "
          "m(n, id, file_id, line) AS (SELECT q.n, s.id, s.file_id, s.start_line FROM q "
          "JOIN symbols s ON s.name = q.n UNION SELECT q.n, s.id, s.file_id, s.start_line "
          "FROM q JOIN symbols s ON s.qualified_name = q.n), "
          "r AS (SELECT m.n, m.id, row_number() OVER (PARTITION BY m.n ORDER BY f.path, "
          "m.line, m.id) AS k FROM m JOIN files f ON f.id = m.file_id) "
          "SELECT r.n, s.id, f.path, s.target_id, s.name, s.qualified_name, s.kind, "
          "s.start_line, s.end_line, s.start_byte, s.end_byte, s.signature, s.doc, "
          "s.span_sha256, s.parse_error, s.end_known, coalesce(p.qualified_name, '') FROM r "
          "JOIN symbols s ON s.id = r.id JOIN files f ON f.id = s.file_id LEFT JOIN symbols p "
          "ON p.id = s.parent_id WHERE r.k <= ?2 ORDER BY r.n, r.k"));
  base::Statement& st = *scoped;
  const std::string list = JsonArray(names);
  RETURN_IF_ERROR(st.Bind(1, std::string_view(list)));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit_per_name)));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.emplace_back(st.ColumnText(0), ReadSymbol(st, 1));
  }
}

Result<std::vector<CallRow>> Store::CallsToMany(std::span<const std::string> callees,
                                                std::size_t limit_per_name) {
  std::vector<CallRow> out;
  if (callees.empty() || limit_per_name == 0) return out;
  RETURN_IF_ERROR(RefreshNameCaches());
  const std::set<std::string> asked(callees.begin(), callees.end());
  const std::vector<std::string> missing =
      Uncached(asked, calls_cache_,
               [&](const std::string& name) { return std::pair(limit_per_name, name); });
  if (!missing.empty()) {
    ASSIGN_OR_RETURN(std::vector<CallRow> rows, CallsToUncached(missing, limit_per_name));
    for (const std::string& name : missing) calls_cache_[{limit_per_name, name}];
    for (CallRow& row : rows) calls_cache_[{limit_per_name, row.callee}].push_back(std::move(row));
  }
  for (const std::string& name : asked) {
    const std::vector<CallRow>& rows = calls_cache_.at({limit_per_name, name});
    out.insert(out.end(), rows.begin(), rows.end());
  }
  return out;
}

Result<std::vector<CallRow>> Store::CallsToUncached(std::span<const std::string> callees,
                                                    std::size_t limit_per_name) {
  ASSIGN_OR_RETURN(
      internal::ScopedStatement scoped,
      stmts_->Get("WITH q(n) AS (SELECT DISTINCT value FROM json_each(?1)), "
                  "r AS (SELECT c.id, row_number() OVER (PARTITION BY c.callee ORDER BY f.path, "
                  "c.line, c.id) AS k FROM q JOIN calls c ON c.callee = q.n JOIN files f ON "
                  "f.id = c.file_id) "
                  "SELECT f.path, c.callee, c.line, coalesce(s.target_id, '') FROM r JOIN calls "
                  "c ON c.id = r.id JOIN files f ON f.id = c.file_id LEFT JOIN symbols s ON "
                  "s.id = c.caller_id WHERE r.k <= ?2 ORDER BY c.callee, r.k"));
  base::Statement& st = *scoped;
  const std::string list = JsonArray(callees);
  RETURN_IF_ERROR(st.Bind(1, std::string_view(list)));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit_per_name)));
  return ReadCalls(st);
}

Result<std::vector<std::pair<std::string, std::int64_t>>> Store::CachedCounts(
    std::span<const std::string> names, std::unordered_map<std::string, std::int64_t>& cache,
    const char* sql) {
  std::vector<std::pair<std::string, std::int64_t>> out;
  if (names.empty()) return out;
  RETURN_IF_ERROR(RefreshNameCaches());
  // Sorted as SQL's ORDER BY name (BINARY: bytes), each name once.
  const std::set<std::string> asked(names.begin(), names.end());
  const std::vector<std::string> missing =
      Uncached(asked, cache, [](const std::string& name) -> const std::string& { return name; });
  if (!missing.empty()) {
    ASSIGN_OR_RETURN(internal::ScopedStatement scoped, stmts_->Get(sql));
    base::Statement& st = *scoped;
    const std::string list = JsonArray(missing);
    RETURN_IF_ERROR(st.Bind(1, std::string_view(list)));
    for (const std::string& name : missing) cache[name] = 0;
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      cache[st.ColumnText(0)] = st.ColumnInt64(1);
    }
  }
  for (const std::string& name : asked) {
    if (const std::int64_t n = cache.at(name); n > 0) out.emplace_back(name, n);
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::int64_t>>> Store::DefinitionCounts(
    std::span<const std::string> names) {
  // Counted on the symbols_name index (name, file_id, start_line): no table rows are read.
  return CachedCounts(names, def_count_cache_,
                      "SELECT name, count(*) FROM symbols WHERE name IN (SELECT value FROM "
                      "json_each(?1)) GROUP BY name");
}

Result<std::vector<std::pair<std::string, std::int64_t>>> Store::CallCounts(
    std::span<const std::string> callees) {
  return CachedCounts(callees, count_cache_,
                      "SELECT callee, count(*) FROM calls WHERE callee IN (SELECT value FROM "
                      "json_each(?1)) GROUP BY callee");
}

Result<std::vector<std::pair<std::int64_t, std::string>>> Store::TextsOfIds(
    std::span<const std::int64_t> ids, const char* sql) {
  std::vector<std::pair<std::int64_t, std::string>> out;
  if (ids.empty()) return out;
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped, stmts_->Get(sql));
  base::Statement& st = *scoped;
  const std::string list = JsonArray(ids);
  RETURN_IF_ERROR(st.Bind(1, std::string_view(list)));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.emplace_back(st.ColumnInt64(0), st.ColumnText(1));
  }
}

Result<std::vector<std::pair<std::int64_t, std::string>>> Store::CalleesOf(
    std::span<const std::int64_t> symbol_ids) {
  return TextsOfIds(symbol_ids,
                    "SELECT caller_id, callee FROM calls WHERE caller_id IN (SELECT value FROM "
                    "json_each(?1)) ORDER BY id");
}

Result<std::uint32_t> Store::FileLastLine(std::string_view path) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get("SELECT coalesce(max(c.end_line), 0) FROM chunks c JOIN files f "
                               "ON f.id = c.file_id WHERE f.path = ?1"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, path));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::uint32_t{0};
  return static_cast<std::uint32_t>(st.ColumnInt64(0));
}

Result<std::vector<ImportRow>> Store::Importers(std::string_view module, std::size_t limit) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get("SELECT f.path, i.module, i.line FROM imports i JOIN files f ON "
                               "f.id = i.file_id WHERE i.module = ?1 ORDER BY f.path, i.line "
                               "LIMIT ?2"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, module));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit)));
  std::vector<ImportRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(ImportRow{st.ColumnText(0), st.ColumnText(1),
                            static_cast<std::uint32_t>(st.ColumnInt64(2))});
  }
}

namespace {
constexpr const char* kChunkSelect =
    "SELECT c.id, f.path, c.kind, c.name, c.qualified_name, coalesce(s.target_id, ''), "
    "c.start_line, c.end_line, c.doc, c.body FROM chunks c JOIN files f ON f.id = c.file_id "
    "LEFT JOIN symbols s ON s.id = c.symbol_id ";
Result<std::vector<ChunkRow>> ReadChunks(base::Statement& st) {
  std::vector<ChunkRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    ChunkRow c;
    c.id = st.ColumnInt64(0);
    c.path = st.ColumnText(1);
    c.kind = st.ColumnText(2);
    c.name = st.ColumnText(3);
    c.qualified_name = st.ColumnText(4);
    c.target_id = st.ColumnText(5);
    c.start_line = static_cast<std::uint32_t>(st.ColumnInt64(6));
    c.end_line = static_cast<std::uint32_t>(st.ColumnInt64(7));
    c.doc = st.ColumnText(8);
    c.body = st.ColumnText(9);
    out.push_back(std::move(c));
  }
}
}  // namespace

Result<std::vector<ChunkRow>> Store::FileChunks(std::string_view path) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(std::string(kChunkSelect) + "WHERE f.path = ?1 ORDER BY c.id"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, path));
  return ReadChunks(st);
}

Result<std::optional<ChunkRow>> Store::GetChunk(std::int64_t chunk_id) {
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(std::string(kChunkSelect) + "WHERE c.id = ?1"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, chunk_id));
  ASSIGN_OR_RETURN(std::vector<ChunkRow> rows, ReadChunks(st));
  if (rows.empty()) return std::optional<ChunkRow>();
  return std::optional<ChunkRow>(std::move(rows.front()));
}

Result<std::vector<std::pair<std::int64_t, std::string>>> Store::SymbolChunkBodies(
    std::span<const std::int64_t> symbol_ids) {
  return TextsOfIds(symbol_ids,
                    "SELECT symbol_id, body FROM chunks WHERE symbol_id IN (SELECT value FROM "
                    "json_each(?1)) ORDER BY id");
}

Result<std::int64_t> Store::CountRows(std::string_view table) {
  static constexpr std::string_view kTables[] = {"files",    "symbols",   "chunks",
                                                 "imports",  "calls",     "runs",
                                                 "path_fts", "chunk_fts", "chunk_tri"};
  bool known = false;
  for (std::string_view t : kTables) known = known || t == table;
  if (!known) return Status::InvalidArgument(fmt::format("count: unknown table {}", table));
  ASSIGN_OR_RETURN(internal::ScopedStatement scoped,
                   stmts_->Get(fmt::format("SELECT count(*) FROM {}", table)));
  base::Statement& st = *scoped;
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Status::Internal("count returned no row");
  return st.ColumnInt64(0);
}

Result<std::vector<SymbolRow>> Store::ListSymbols(std::int64_t after_id, std::size_t limit) {
  ASSIGN_OR_RETURN(
      internal::ScopedStatement scoped,
      stmts_->Get(std::string(kSymbolSelect) + "WHERE s.id > ?1 ORDER BY s.id LIMIT ?2"));
  base::Statement& st = *scoped;
  RETURN_IF_ERROR(st.Bind(1, after_id));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit)));
  return ReadSymbols(st);
}

Result<std::string> Store::Generation() {
  // Every write path changes one of these: a run checkpoint (runs row), a replaced file (its
  // sha256/mtime/size, and fresh chunk ids), a touch (mtime), a mark (status), a removal
  // (counts).
  ASSIGN_OR_RETURN(
      internal::ScopedStatement scoped,
      stmts_->Get("SELECT (SELECT count(*) FROM runs), "
                  "(SELECT coalesce(max(run_id || ':' || state || ':' || finished_at || ':' || "
                  "stats), '') FROM runs WHERE id = (SELECT max(id) FROM runs)), "
                  "(SELECT count(*) || ':' || total(mtime_ns) || ':' || total(size) || ':' || "
                  "total(stale) || ':' || total(status = 'indexed') FROM files), "
                  "(SELECT coalesce(max(id), 0) || ':' || count(*) FROM chunks)"));
  base::Statement& st = *scoped;
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Status::Internal("generation returned no row");
  return base::Sha256Hex(fmt::format("{}|{}|{}|{}", st.ColumnText(0), st.ColumnText(1),
                                     st.ColumnText(2), st.ColumnText(3)));
}

Status Store::IntegrityCheck() {
  RETURN_IF_ERROR(db_->IntegrityCheck());
  RETURN_IF_ERROR(db_->Exec("INSERT INTO chunk_fts(chunk_fts) VALUES ('integrity-check')"));
  RETURN_IF_ERROR(db_->Exec("INSERT INTO path_fts(path_fts) VALUES ('integrity-check')"));
  if (trigram_) {
    RETURN_IF_ERROR(db_->Exec("INSERT INTO chunk_tri(chunk_tri) VALUES ('integrity-check')"));
  }
  return Status::Ok();
}

}  // namespace trove::librarian::store

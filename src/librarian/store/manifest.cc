#include "librarian/store/manifest.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "base/hash.h"
#include "base/sqlite.h"
#include "librarian/store/store.h"

namespace trove::librarian::store {
namespace {

constexpr const char* kContentColumns =
    "path, sha256, target_id, kind, name, qualified_name, signature, pack_id, start_line, "
    "end_line, start_byte, end_byte, span_sha256, extractor, parse_error, end_known";

ContentSymbol ReadContent(base::Statement& st) {
  ContentSymbol c;
  c.path = st.ColumnText(0);
  c.sha256 = st.ColumnText(1);
  c.target_id = st.ColumnText(2);
  c.kind = st.ColumnText(3);
  c.name = st.ColumnText(4);
  c.qualified_name = st.ColumnText(5);
  c.signature = st.ColumnText(6);
  c.pack_id = st.ColumnText(7);
  c.start_line = static_cast<std::uint32_t>(st.ColumnInt64(8));
  c.end_line = static_cast<std::uint32_t>(st.ColumnInt64(9));
  c.start_byte = static_cast<std::uint32_t>(st.ColumnInt64(10));
  c.end_byte = static_cast<std::uint32_t>(st.ColumnInt64(11));
  c.span_sha256 = st.ColumnText(12);
  c.extractor = st.ColumnText(13);
  c.parse_error = st.ColumnInt64(14) != 0;
  c.end_known = st.ColumnInt64(15) != 0;
  return c;
}

Status Insert(base::Statement& ins, const ContentSymbol& c) {
  ins.Reset();
  RETURN_IF_ERROR(ins.Bind(1, std::string_view(c.path)));
  RETURN_IF_ERROR(ins.Bind(2, std::string_view(c.sha256)));
  RETURN_IF_ERROR(ins.Bind(3, std::string_view(c.target_id)));
  RETURN_IF_ERROR(ins.Bind(4, std::string_view(c.kind)));
  RETURN_IF_ERROR(ins.Bind(5, std::string_view(c.name)));
  RETURN_IF_ERROR(ins.Bind(6, std::string_view(c.qualified_name)));
  RETURN_IF_ERROR(ins.Bind(7, std::string_view(c.signature)));
  RETURN_IF_ERROR(ins.Bind(8, std::string_view(c.pack_id)));
  RETURN_IF_ERROR(ins.Bind(9, c.start_line));
  RETURN_IF_ERROR(ins.Bind(10, c.end_line));
  RETURN_IF_ERROR(ins.Bind(11, c.start_byte));
  RETURN_IF_ERROR(ins.Bind(12, c.end_byte));
  RETURN_IF_ERROR(ins.Bind(13, std::string_view(c.span_sha256)));
  RETURN_IF_ERROR(ins.Bind(14, std::string_view(c.extractor)));
  RETURN_IF_ERROR(ins.Bind(15, c.parse_error ? 1 : 0));
  RETURN_IF_ERROR(ins.Bind(16, c.end_known ? 1 : 0));
  return ins.Step().status();
}

}  // namespace

std::string PackIdFor(std::string_view pack_type, std::string_view target_id) {
  std::string text;
  text.reserve(pack_type.size() + 1 + target_id.size());
  text.append(pack_type);
  text.push_back('\n');
  text.append(target_id);
  return "pk_" + base::Sha256Hex(text).substr(0, 16);
}

namespace internal {

Status RecordContentUnder(base::Database& db, const std::vector<std::string>* paths) {
  // The files whose content has no module row yet: every content recorded has one.
  struct Pending {
    std::int64_t id;
    std::string path;
    std::string sha256;
    std::uint64_t size;
    std::uint32_t last_line;
    std::string extractor;
    bool parse_error;
  };
  std::vector<Pending> pending;
  // The files whose content has no module row yet (every content recorded has one): all of
  // them, or those at or under each of `paths` (a range over the files(path) index).
  const std::string sql = fmt::format(
      "SELECT f.id, f.path, f.sha256, f.size, (SELECT coalesce(max(end_line), 0) FROM chunks "
      "WHERE file_id = f.id), f.extractor, f.parse_error FROM files f WHERE f.status IN "
      "('indexed', 'unchanged') AND NOT EXISTS (SELECT 1 FROM content_symbols c WHERE c.path = "
      "f.path AND c.sha256 = f.sha256 AND c.target_id = 'mod:' || f.path){}",
      paths != nullptr ? " AND (f.path = ?1 OR (f.path >= ?1 || '/' AND f.path < ?1 || '0'))" : "");
  ASSIGN_OR_RETURN(base::Statement st, db.Prepare(sql));
  const std::size_t rounds = paths != nullptr ? paths->size() : 1;
  for (std::size_t i = 0; i < rounds; ++i) {
    st.Reset();
    if (paths != nullptr) RETURN_IF_ERROR(st.Bind(1, std::string_view((*paths)[i])));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      pending.push_back(Pending{st.ColumnInt64(0), st.ColumnText(1), st.ColumnText(2),
                                static_cast<std::uint64_t>(st.ColumnInt64(3)),
                                static_cast<std::uint32_t>(st.ColumnInt64(4)), st.ColumnText(5),
                                st.ColumnInt64(6) != 0});
    }
  }
  if (pending.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(base::Statement syms,
                   db.Prepare("SELECT target_id, kind, name, qualified_name, signature, "
                              "start_line, end_line, start_byte, end_byte, span_sha256, "
                              "parse_error, end_known FROM symbols WHERE file_id = ?1 ORDER BY "
                              "ordinal"));
  ASSIGN_OR_RETURN(
      base::Statement ins,
      db.Prepare(fmt::format("INSERT OR REPLACE INTO content_symbols({}) VALUES "
                             "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
                             "?14, ?15, ?16)",
                             kContentColumns)));
  for (const Pending& f : pending) {
    syms.Reset();
    RETURN_IF_ERROR(syms.Bind(1, f.id));
    std::size_t callables = 0;
    std::vector<ContentSymbol> rows;
    for (;;) {
      ASSIGN_OR_RETURN(bool row, syms.Step());
      if (!row) break;
      ContentSymbol c;
      c.path = f.path;
      c.sha256 = f.sha256;
      c.target_id = syms.ColumnText(0);
      c.kind = syms.ColumnText(1);
      c.name = syms.ColumnText(2);
      c.qualified_name = syms.ColumnText(3);
      c.signature = syms.ColumnText(4);
      c.start_line = static_cast<std::uint32_t>(syms.ColumnInt64(5));
      c.end_line = static_cast<std::uint32_t>(syms.ColumnInt64(6));
      c.start_byte = static_cast<std::uint32_t>(syms.ColumnInt64(7));
      c.end_byte = static_cast<std::uint32_t>(syms.ColumnInt64(8));
      c.span_sha256 = syms.ColumnText(9);
      c.extractor = f.extractor;
      c.parse_error = syms.ColumnInt64(10) != 0;
      c.end_known = syms.ColumnInt64(11) != 0;
      // As bootstrap counts and the query engine builds them: the first 100 callables.
      if ((c.kind == "function" || c.kind == "method") && ++callables <= kMaxFunctionPacksPerFile) {
        c.pack_id = PackIdFor("function_context", c.target_id);
      }
      rows.push_back(std::move(c));
    }
    ContentSymbol m;
    m.path = f.path;
    m.sha256 = f.sha256;
    m.target_id = "mod:" + f.path;
    m.kind = "module";
    const std::size_t slash = f.path.rfind('/');
    m.name = slash == std::string::npos ? f.path : f.path.substr(slash + 1);
    m.qualified_name = f.path;
    m.pack_id = PackIdFor("module_context", m.target_id);
    m.start_line = f.last_line == 0 ? 0 : 1;
    m.end_line = f.last_line;
    m.start_byte = 0;
    m.end_byte = static_cast<std::uint32_t>(f.size);
    m.span_sha256 = f.sha256;
    m.extractor = f.extractor;
    m.parse_error = f.parse_error;
    rows.push_back(std::move(m));
    for (const ContentSymbol& c : rows) RETURN_IF_ERROR(Insert(ins, c));
  }
  return Status::Ok();
}

Status RecordContent(base::Database& db) { return RecordContentUnder(db, nullptr); }

Result<std::string> ManifestBase(base::Database& db, std::string_view run_id) {
  ASSIGN_OR_RETURN(base::Statement st, db.Prepare("SELECT value FROM meta WHERE key = ?1"));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(fmt::format("{}{}", kManifestBasePrefix, run_id))));
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnText(0) : std::string();
}

namespace {

// Whether `run_id` has manifest rows (an index probe, where counting a full manifest walks
// all of its rows).
Result<bool> HasManifestRows(base::Database& db, std::string_view run_id) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT 1 FROM run_files WHERE run_id = ?1 LIMIT 1"));
  RETURN_IF_ERROR(st.Bind(1, run_id));
  return st.Step();
}

Result<std::int64_t> CountManifestRows(base::Database& db, std::string_view run_id) {
  ASSIGN_OR_RETURN(base::Statement st, db.Prepare("SELECT count(*) FROM run_files WHERE run_id = "
                                                  "?1"));
  RETURN_IF_ERROR(st.Bind(1, run_id));
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt64(0) : 0;
}

Status ExecBound(base::Database& db, std::string_view sql,
                 std::initializer_list<std::string_view> args) {
  ASSIGN_OR_RETURN(base::Statement st, db.Prepare(sql));
  int i = 0;
  for (std::string_view a : args) RETURN_IF_ERROR(st.Bind(++i, a));
  return st.Step().status();
}

Status SetBase(base::Database& db, std::string_view run_id, std::string_view base) {
  const std::string key = fmt::format("{}{}", kManifestBasePrefix, run_id);
  if (base.empty()) return ExecBound(db, "DELETE FROM meta WHERE key = ?1", {key});
  return ExecBound(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)", {key, base});
}

// Writes `run_id`'s manifest as a delta; false (nothing written) when it should be full.
Result<bool> RecordDelta(base::Database& db, std::string_view run_id,
                         const std::vector<std::string>& paths) {
  // The run recorded just before this one, if it completed with a manifest.
  std::string prev;
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT run_id FROM runs WHERE id < (SELECT id FROM runs WHERE "
                                "run_id = ?1) ORDER BY id DESC LIMIT 1"));
    RETURN_IF_ERROR(st.Bind(1, run_id));
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return false;
    prev = st.ColumnText(0);
  }
  ASSIGN_OR_RETURN(std::string prev_base, ManifestBase(db, prev));
  if (prev_base.empty()) {
    ASSIGN_OR_RETURN(bool prev_rows, HasManifestRows(db, prev));
    if (!prev_rows) return false;  // killed, or before schema 4
  }
  const std::string base = prev_base.empty() ? prev : prev_base;
  ASSIGN_OR_RETURN(bool base_rows, HasManifestRows(db, base));
  if (!base_rows) return false;
  if (!prev_base.empty()) {
    // Carry the previous delta of the same base: this one must stand for every change since.
    RETURN_IF_ERROR(ExecBound(db,
                              "INSERT INTO run_files(run_id, path, sha256, size, language, "
                              "status) SELECT ?1, path, sha256, size, language, status FROM "
                              "run_files WHERE run_id = ?2",
                              {run_id, prev}));
  }
  // The paths at or under ?2. Over run_files' key (run_id, path) the range comes first: with
  // only the OR, SQLite searched by run_id alone and read the whole base manifest per path.
  constexpr const char* kUnder =
      "path >= ?2 AND path < ?2 || '0' AND (path = ?2 OR path >= ?2 || '/')";
  ASSIGN_OR_RETURN(
      base::Statement drop,
      db.Prepare(fmt::format("DELETE FROM run_files WHERE run_id = ?1 AND {}", kUnder)));
  ASSIGN_OR_RETURN(base::Statement add,
                   db.Prepare(fmt::format("INSERT INTO run_files(run_id, path, sha256, size, "
                                          "language, status) SELECT ?1, path, sha256, size, "
                                          "language, status FROM files WHERE {}",
                                          kUnder)));
  ASSIGN_OR_RETURN(
      base::Statement gone,
      db.Prepare(fmt::format("INSERT OR IGNORE INTO run_files(run_id, path, sha256, size, "
                             "language, status) SELECT ?1, b.path, '', 0, '', ?3 FROM run_files "
                             "b WHERE b.run_id = ?4 AND b.path >= ?2 AND b.path < ?2 || '0' AND "
                             "(b.path = ?2 OR b.path >= ?2 || '/') AND NOT EXISTS (SELECT 1 FROM "
                             "files f WHERE f.path = b.path)")));
  for (const std::string& p : paths) {
    for (base::Statement* st : {&drop, &add}) {
      st->Reset();
      RETURN_IF_ERROR(st->Bind(1, run_id));
      RETURN_IF_ERROR(st->Bind(2, std::string_view(p)));
      RETURN_IF_ERROR(st->Step().status());
    }
    gone.Reset();
    RETURN_IF_ERROR(gone.Bind(1, run_id));
    RETURN_IF_ERROR(gone.Bind(2, std::string_view(p)));
    RETURN_IF_ERROR(gone.Bind(3, kDeletedStatus));
    RETURN_IF_ERROR(gone.Bind(4, std::string_view(base)));
    RETURN_IF_ERROR(gone.Step().status());
  }
  // The base is counted only when the delta outgrew the slack: a full manifest's count walks
  // every one of its rows (about 10 ms on 10,000 files, per re-index).
  ASSIGN_OR_RETURN(std::int64_t rows, CountManifestRows(db, run_id));
  if (static_cast<std::size_t>(rows) > kDeltaSlack) {
    ASSIGN_OR_RETURN(std::int64_t base_count, CountManifestRows(db, base));
    if (static_cast<std::size_t>(rows) > static_cast<std::size_t>(base_count) / 4 + kDeltaSlack) {
      RETURN_IF_ERROR(ExecBound(db, "DELETE FROM run_files WHERE run_id = ?1", {run_id}));
      return false;
    }
  }
  RETURN_IF_ERROR(SetBase(db, run_id, base));
  return true;
}

// Drops the manifests of runs older than the last kManifestRuns, except the bases of kept
// deltas. With `targeted`, content manifests are dropped only among the contents the dropped
// rows named (the cost follows what was pruned); otherwise every content no manifest and no
// current file names is dropped (a whole-table pass, as a full run always did).
Status Prune(base::Database& db, bool targeted) {
  std::int64_t min_kept = 0;
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1"));
    RETURN_IF_ERROR(st.Bind(1, static_cast<std::int64_t>(kManifestRuns - 1)));
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return Status::Ok();
    min_kept = st.ColumnInt64(0);
  }
  std::vector<std::string> drop;
  {
    ASSIGN_OR_RETURN(
        base::Statement st,
        db.Prepare("SELECT r.run_id FROM runs r WHERE r.id < ?1 AND (EXISTS (SELECT 1 FROM "
                   "run_files f WHERE f.run_id = r.run_id) OR EXISTS (SELECT 1 FROM meta m WHERE "
                   "m.key = ?2 || r.run_id)) AND r.run_id NOT IN (SELECT m.value FROM runs k "
                   "JOIN meta m ON m.key = ?2 || k.run_id WHERE k.id >= ?1)"));
    RETURN_IF_ERROR(st.Bind(1, min_kept));
    RETURN_IF_ERROR(st.Bind(2, kManifestBasePrefix));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      drop.push_back(st.ColumnText(0));
    }
  }
  if (drop.empty()) return Status::Ok();
  std::vector<std::pair<std::string, std::string>> contents;
  for (const std::string& run : drop) {
    if (targeted) {
      ASSIGN_OR_RETURN(base::Statement st, db.Prepare("SELECT path, sha256 FROM run_files WHERE "
                                                      "run_id = ?1 AND status != ?2"));
      RETURN_IF_ERROR(st.Bind(1, std::string_view(run)));
      RETURN_IF_ERROR(st.Bind(2, kDeletedStatus));
      for (;;) {
        ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        contents.emplace_back(st.ColumnText(0), st.ColumnText(1));
      }
    }
    RETURN_IF_ERROR(ExecBound(db, "DELETE FROM run_files WHERE run_id = ?1", {run}));
    RETURN_IF_ERROR(SetBase(db, run, ""));
  }
  if (!targeted) {
    // Contents no kept manifest and no current file names any more.
    return db.Exec(
        "DELETE FROM content_symbols WHERE (path, sha256) NOT IN (SELECT path, sha256 FROM "
        "run_files UNION SELECT path, sha256 FROM files)");
  }
  ASSIGN_OR_RETURN(
      base::Statement del,
      db.Prepare("DELETE FROM content_symbols WHERE path = ?1 AND sha256 = ?2 AND NOT EXISTS "
                 "(SELECT 1 FROM run_files WHERE path = ?1 AND sha256 = ?2) AND NOT EXISTS "
                 "(SELECT 1 FROM files WHERE path = ?1 AND sha256 = ?2)"));
  for (const auto& [path, sha] : contents) {
    del.Reset();
    RETURN_IF_ERROR(del.Bind(1, std::string_view(path)));
    RETURN_IF_ERROR(del.Bind(2, std::string_view(sha)));
    RETURN_IF_ERROR(del.Step().status());
  }
  return Status::Ok();
}

}  // namespace

Status RecordRunManifest(base::Database& db, std::string_view run_id,
                         const std::vector<std::string>* paths) {
  RETURN_IF_ERROR(ExecBound(db, "DELETE FROM run_files WHERE run_id = ?1", {run_id}));
  bool delta = false;
  if (paths != nullptr) {
    ASSIGN_OR_RETURN(delta, RecordDelta(db, run_id, *paths));
  }
  if (!delta) {
    RETURN_IF_ERROR(SetBase(db, run_id, ""));
    RETURN_IF_ERROR(ExecBound(db,
                              "INSERT INTO run_files(run_id, path, sha256, size, language, "
                              "status) SELECT ?1, path, sha256, size, language, status FROM files",
                              {run_id}));
  }
  RETURN_IF_ERROR(RecordContentUnder(db, paths));
  return Prune(db, /*targeted=*/paths != nullptr);
}

}  // namespace internal

namespace {

// The resolved file manifest of run ?1 whose base is ?2 ("" for a full manifest), as a CTE.
constexpr const char* kResolved =
    "WITH m(path, sha256, size, language, status) AS (SELECT path, sha256, size, language, "
    "status FROM run_files WHERE run_id = ?2 AND path NOT IN (SELECT path FROM run_files WHERE "
    "run_id = ?1) UNION ALL SELECT path, sha256, size, language, status FROM run_files WHERE "
    "run_id = ?1 AND status != ?3) ";

Result<base::Statement> PrepareResolved(Store& store, std::string_view run_id,
                                        std::string_view select) {
  ASSIGN_OR_RETURN(std::string base, internal::ManifestBase(store.db(), run_id));
  ASSIGN_OR_RETURN(base::Statement st, store.db().Prepare(fmt::format("{}{}", kResolved, select)));
  RETURN_IF_ERROR(st.Bind(1, run_id));
  RETURN_IF_ERROR(st.Bind(2, std::string_view(base)));
  RETURN_IF_ERROR(st.Bind(3, kDeletedStatus));
  return st;
}

}  // namespace

Result<bool> HasManifest(Store& store, std::string_view run_id) {
  ASSIGN_OR_RETURN(std::string base, internal::ManifestBase(store.db(), run_id));
  if (!base.empty()) return true;
  ASSIGN_OR_RETURN(base::Statement st,
                   store.db().Prepare("SELECT 1 FROM run_files WHERE run_id = ?1 LIMIT 1"));
  RETURN_IF_ERROR(st.Bind(1, run_id));
  return st.Step();
}

Result<std::vector<ManifestFile>> RunManifest(Store& store, std::string_view run_id) {
  ASSIGN_OR_RETURN(base::Statement st,
                   PrepareResolved(store, run_id,
                                   "SELECT path, sha256, size, language, status FROM m ORDER BY "
                                   "path"));
  std::vector<ManifestFile> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(ManifestFile{st.ColumnText(0), st.ColumnText(1),
                               static_cast<std::uint64_t>(st.ColumnInt64(2)), st.ColumnText(3),
                               st.ColumnText(4)});
  }
}

Result<std::vector<RunSymbol>> RunSymbols(Store& store, std::string_view run_id) {
  ASSIGN_OR_RETURN(base::Statement st,
                   PrepareResolved(store, run_id,
                                   "SELECT c.target_id, c.kind, c.span_sha256, c.pack_id, "
                                   "r.language FROM m r JOIN content_symbols c ON c.path = "
                                   "r.path AND c.sha256 = r.sha256"));
  std::vector<RunSymbol> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(RunSymbol{st.ColumnText(0), st.ColumnText(1), st.ColumnText(2), st.ColumnText(3),
                            st.ColumnText(4)});
  }
}

Result<std::vector<ContentSymbol>> ContentSymbols(Store& store, std::string_view path,
                                                  std::string_view sha256) {
  ASSIGN_OR_RETURN(base::Statement st,
                   store.db().Prepare(fmt::format("SELECT {} FROM content_symbols WHERE path = ?1 "
                                                  "AND sha256 = ?2 ORDER BY id",
                                                  kContentColumns)));
  RETURN_IF_ERROR(st.Bind(1, path));
  RETURN_IF_ERROR(st.Bind(2, sha256));
  std::vector<ContentSymbol> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    out.push_back(ReadContent(st));
  }
}

Result<std::optional<ContentSymbol>> FindPack(Store& store, std::string_view pack_id) {
  ASSIGN_OR_RETURN(
      base::Statement st,
      store.db().Prepare(fmt::format(
          "SELECT {}, EXISTS (SELECT 1 FROM files f WHERE f.path = c.path AND f.sha256 = "
          "c.sha256) AS cur FROM content_symbols c WHERE c.pack_id = ?1 ORDER BY cur DESC, "
          "c.id DESC LIMIT 1",
          kContentColumns)));
  RETURN_IF_ERROR(st.Bind(1, pack_id));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<ContentSymbol>();
  ContentSymbol c = ReadContent(st);
  c.current = st.ColumnInt64(16) != 0;
  return std::optional<ContentSymbol>(std::move(c));
}

}  // namespace trove::librarian::store

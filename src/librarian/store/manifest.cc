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

Status RecordContent(base::Database& db) {
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
  {
    ASSIGN_OR_RETURN(
        base::Statement st,
        db.Prepare("SELECT f.id, f.path, f.sha256, f.size, (SELECT coalesce(max(end_line), 0) "
                   "FROM chunks WHERE file_id = f.id), f.extractor, f.parse_error FROM files f "
                   "WHERE f.status IN "
                   "('indexed', 'unchanged') AND NOT EXISTS (SELECT 1 FROM content_symbols c "
                   "WHERE c.path = f.path AND c.sha256 = f.sha256 AND c.target_id = 'mod:' || "
                   "f.path)"));
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

Status RecordRunManifest(base::Database& db, std::string_view run_id) {
  {
    ASSIGN_OR_RETURN(base::Statement del, db.Prepare("DELETE FROM run_files WHERE run_id = ?1"));
    RETURN_IF_ERROR(del.Bind(1, run_id));
    RETURN_IF_ERROR(del.Step().status());
    ASSIGN_OR_RETURN(base::Statement ins,
                     db.Prepare("INSERT INTO run_files(run_id, path, sha256, size, language, "
                                "status) SELECT ?1, path, sha256, size, language, status FROM "
                                "files"));
    RETURN_IF_ERROR(ins.Bind(1, run_id));
    RETURN_IF_ERROR(ins.Step().status());
  }
  RETURN_IF_ERROR(RecordContent(db));
  ASSIGN_OR_RETURN(base::Statement prune,
                   db.Prepare("DELETE FROM run_files WHERE run_id NOT IN (SELECT run_id FROM "
                              "runs ORDER BY id DESC LIMIT ?1)"));
  RETURN_IF_ERROR(prune.Bind(1, static_cast<std::int64_t>(kManifestRuns)));
  RETURN_IF_ERROR(prune.Step().status());
  if (db.Changes() == 0) return Status::Ok();
  // Contents no kept manifest and no current file names any more.
  return db.Exec(
      "DELETE FROM content_symbols WHERE (path, sha256) NOT IN (SELECT path, sha256 FROM "
      "run_files UNION SELECT path, sha256 FROM files)");
}

}  // namespace internal

Result<bool> HasManifest(Store& store, std::string_view run_id) {
  ASSIGN_OR_RETURN(base::Statement st,
                   store.db().Prepare("SELECT 1 FROM run_files WHERE run_id = ?1 LIMIT 1"));
  RETURN_IF_ERROR(st.Bind(1, run_id));
  return st.Step();
}

Result<std::vector<ManifestFile>> RunManifest(Store& store, std::string_view run_id) {
  ASSIGN_OR_RETURN(base::Statement st,
                   store.db().Prepare("SELECT path, sha256, size, language, status FROM "
                                      "run_files WHERE run_id = ?1 ORDER BY path"));
  RETURN_IF_ERROR(st.Bind(1, run_id));
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
                   store.db().Prepare("SELECT c.target_id, c.kind, c.span_sha256, c.pack_id, "
                                      "r.language FROM run_files r JOIN content_symbols c ON "
                                      "c.path = r.path AND c.sha256 = r.sha256 WHERE r.run_id = "
                                      "?1"));
  RETURN_IF_ERROR(st.Bind(1, run_id));
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

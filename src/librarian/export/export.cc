#include "librarian/export/export.h"

#include <fmt/format.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/sqlite.h"
#include "librarian/crawl/path.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"

namespace trove::librarian::exports {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kSummaryChars = 240;
// A pack's snippets are cut to this many bytes each (a whole file chunk can be large).
constexpr std::size_t kMaxSnippetBytes = 16 * 1024;

std::string_view Extension(Format f) {
  switch (f) {
    case Format::kJson:
      return "json";
    case Format::kSqlite:
      return "sqlite";
    case Format::kMarkdown:
      return "md";
  }
  return "json";
}

// Cut at a word boundary to kSummaryChars bytes with "…" (docs/librarian.md §4.1), never inside
// a UTF-8 sequence.
std::string CutAtWord(std::string text) {
  if (text.size() <= kSummaryChars) return text;
  std::size_t cut = kSummaryChars - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  const std::size_t space = text.rfind(' ', cut);
  if (space != std::string::npos && space > kSummaryChars / 2) cut = space;
  text.resize(cut);
  return text + "…";
}

std::string BaseName(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string DirName(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash));
}

double BaseSignal(bool module, const store::FileRecord& f, const store::SymbolRow* s) {
  const bool tree_sitter = f.extractor.rfind("tree-sitter", 0) == 0;
  const bool ctags = f.extractor.rfind("ctags", 0) == 0;
  if (!module) {
    if (tree_sitter) return (s != nullptr && s->parse_error) ? 0.7 : 0.9;
    if (ctags) return (s != nullptr && !s->end_known) ? 0.5 : 0.6;
    return 0.5;
  }
  if (tree_sitter) return f.parse_error ? 0.6 : 0.8;
  if (ctags) return 0.6;
  return 0.5;
}

std::string Snip(std::string text) {
  if (text.size() <= kMaxSnippetBytes) return text;
  std::size_t cut = kMaxSnippetBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

bool IsAdr(std::string_view path) {
  if (path.size() < 3 || path.substr(path.size() - 3) != ".md") return false;
  for (std::string_view dir : {"docs/adr/", "doc/adr/", "adr/", "docs/decisions/"}) {
    if (path.rfind(dir, 0) == 0 || path.find("/" + std::string(dir)) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

Json ParseOr(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? Json(text) : j;
}

struct Edge {
  std::string kind;  // imports, calls
  std::string from;  // mod:<path> or the calling function's target id
  std::string to;    // the module or callee as written
  std::string file;
  std::uint32_t line = 0;
};

// Everything the three formats draw on, read in one read snapshot.
struct Pack {
  std::string pack_id;
  std::string pack_type;
  std::string target_id;
  std::string summary;
  std::vector<std::string> key_facts;
  std::string file;
  std::uint32_t start_line = 0, end_line = 0;
  std::string content_hash;
  double signal = 0;
  std::vector<Json> snippets;
};

struct Snapshot {
  std::vector<store::RunRecord> runs;
  std::vector<store::FileRecord> files;
  std::map<std::string, std::vector<store::SymbolRow>> symbols_by_file;  // in file order
  std::vector<Edge> edges;
  std::vector<Pack> packs;
  std::uint64_t symbol_count = 0;
};

Result<Snapshot> Read(store::Store& store) {
  Snapshot s;
  ASSIGN_OR_RETURN(store::Store::ReadSnapshot snapshot, store.BeginRead());
  ASSIGN_OR_RETURN(s.runs, store.ListRuns());
  ASSIGN_OR_RETURN(s.files, store.ListFiles());
  for (const store::FileRecord& f : s.files) {
    ASSIGN_OR_RETURN(std::vector<store::SymbolRow> syms, store.FileSymbols(f.path));
    s.symbol_count += syms.size();
    ASSIGN_OR_RETURN(std::vector<store::ImportRow> imports, store.FileImports(f.path));
    for (const store::ImportRow& i : imports) {
      s.edges.push_back(Edge{"imports", "mod:" + f.path, i.module, f.path, i.line});
    }
    ASSIGN_OR_RETURN(std::vector<store::CallRow> calls, store.FileCalls(f.path));
    for (const store::CallRow& c : calls) {
      s.edges.push_back(Edge{"calls",
                             c.caller_target_id.empty() ? "mod:" + f.path : c.caller_target_id,
                             c.callee, f.path, c.line});
    }
    if (f.status != store::FileStatus::kIndexed && f.status != store::FileStatus::kUnchanged) {
      s.symbols_by_file.emplace(f.path, std::move(syms));
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<store::ChunkRow> chunks, store.FileChunks(f.path));
    std::map<std::string, const store::ChunkRow*> chunk_of;
    const store::ChunkRow* file_chunk = nullptr;
    std::uint32_t last_line = 0;
    for (const store::ChunkRow& c : chunks) {
      if (!c.target_id.empty()) chunk_of.emplace(c.target_id, &c);
      if (c.target_id.empty() && file_chunk == nullptr) file_chunk = &c;
      last_line = std::max(last_line, c.end_line);
    }
    // function_context packs: the first kMaxFunctionPacksPerFile callables, as the query
    // engine and the manifests number them.
    std::size_t callables = 0;
    std::size_t functions = 0, types = 0;
    std::vector<std::string> top;
    for (const store::SymbolRow& sym : syms) {
      if (sym.target_id.rfind("fn:", 0) == 0) ++functions;
      if (sym.target_id.rfind("type:", 0) == 0) ++types;
      if (sym.parent_qualified_name.empty() && sym.kind != "namespace" && top.size() < 8) {
        top.push_back(sym.name);
      }
      if ((sym.kind != "function" && sym.kind != "method") ||
          ++callables > store::kMaxFunctionPacksPerFile) {
        continue;
      }
      Pack p;
      p.pack_type = "function_context";
      p.target_id = sym.target_id;
      p.pack_id = store::PackIdFor(p.pack_type, p.target_id);
      p.summary = CutAtWord(
          !sym.doc.empty()
              ? sym.doc
              : fmt::format("{} {} in {}{}", sym.kind, sym.qualified_name, sym.path,
                            sym.signature.empty() ? std::string() : ": " + sym.signature));
      p.key_facts.push_back(fmt::format("{} `{}` is defined in {} lines {}-{}", sym.kind,
                                        sym.qualified_name, sym.path, sym.start_line,
                                        sym.end_line));
      if (!sym.signature.empty()) p.key_facts.push_back("signature: " + sym.signature);
      if (!sym.doc.empty()) p.key_facts.push_back("documented as: " + sym.doc);
      if (sym.parse_error) p.key_facts.push_back("the definition's span has parse errors");
      p.file = f.path;
      p.start_line = sym.start_line;
      p.end_line = sym.end_line;
      p.content_hash = sym.span_sha256;
      p.signal = BaseSignal(false, f, &sym);
      if (auto it = chunk_of.find(sym.target_id); it != chunk_of.end()) {
        p.snippets.push_back(Json{{"file", f.path},
                                  {"startLine", it->second->start_line},
                                  {"endLine", it->second->end_line},
                                  {"content", Snip(it->second->body)}});
      }
      s.packs.push_back(std::move(p));
    }
    Pack m;
    m.pack_type = "module_context";
    m.target_id = "mod:" + f.path;
    m.pack_id = store::PackIdFor(m.pack_type, m.target_id);
    m.summary =
        CutAtWord(top.empty() ? fmt::format("module {}", f.path)
                              : fmt::format("module {}: defines {}", f.path, fmt::join(top, ", ")));
    m.key_facts.push_back(
        fmt::format("{} defines {} functions or methods and {} types", f.path, functions, types));
    m.key_facts.push_back(fmt::format("{} file extracted by {}",
                                      f.language.empty() ? "unknown" : f.language,
                                      f.extractor.empty() ? "nothing" : f.extractor));
    if (!imports.empty()) {
      std::vector<std::string> mods;
      for (const store::ImportRow& i : imports) {
        if (mods.size() < 8) mods.push_back(i.module);
      }
      m.key_facts.push_back(fmt::format("imports: {}{}", fmt::join(mods, ", "),
                                        imports.size() > mods.size() ? ", …" : ""));
    }
    m.file = f.path;
    m.start_line = last_line == 0 ? 0 : 1;
    m.end_line = last_line;
    m.content_hash = f.sha256;
    m.signal = BaseSignal(true, f, nullptr);
    if (file_chunk != nullptr) {
      m.snippets.push_back(Json{{"file", f.path},
                                {"startLine", file_chunk->start_line},
                                {"endLine", file_chunk->end_line},
                                {"content", Snip(file_chunk->body)}});
    }
    s.packs.push_back(std::move(m));
    s.symbols_by_file.emplace(f.path, std::move(syms));
  }
  std::sort(s.packs.begin(), s.packs.end(),
            [](const Pack& a, const Pack& b) { return a.pack_id < b.pack_id; });
  std::sort(s.runs.begin(), s.runs.end(), [](const store::RunRecord& a, const store::RunRecord& b) {
    return a.run_id < b.run_id;
  });
  std::sort(s.edges.begin(), s.edges.end(), [](const Edge& a, const Edge& b) {
    return std::tie(a.kind, a.from, a.to, a.file, a.line) <
           std::tie(b.kind, b.from, b.to, b.file, b.line);
  });
  return s;
}

// The newest run (insertion order), for the default name, exportedAt and the last-run section.
std::optional<store::RunRecord> LastRun(store::Store& store) {
  Result<std::vector<store::RunRecord>> runs = store.ListRuns();
  if (!runs.ok() || runs->empty()) return std::nullopt;
  return runs->back();
}

Json Identity(const ExportRequest& r) {
  return Json{{"workspaceId", r.workspace_id},
              {"name", BaseName(r.root)},
              {"schemaVersion", store::kSchemaVersion},
              {"server", {{"name", "librarian"}}},
              {"confidenceSemantics", "ranking_signal_uncalibrated"}};
}

std::string JsonExport(const Snapshot& s, const ExportRequest& r,
                       const std::optional<store::RunRecord>& last) {
  Json runs = Json::array();
  for (const store::RunRecord& run : s.runs) {
    runs.push_back(Json{{"runId", run.run_id},
                        {"status", run.state},
                        {"mode", run.mode},
                        {"startedAt", run.started_at},
                        {"finishedAt", run.finished_at},
                        {"options", ParseOr(run.options_json)},
                        {"toolVersions", ParseOr(run.tool_versions_json)},
                        {"stats", ParseOr(run.stats_json)}});
  }
  Json files = Json::array();
  std::vector<const store::SymbolRow*> symbols;
  for (const store::FileRecord& f : s.files) {
    files.push_back(Json{{"path", f.path},
                         {"sha256", f.sha256},
                         {"language", f.language},
                         {"extractor", f.extractor},
                         {"size", f.size},
                         {"mtimeNs", f.mtime_ns},
                         {"status", store::FileStatusName(f.status)},
                         {"parseError", f.parse_error},
                         {"stale", f.stale},
                         {"runId", f.run_id}});
    auto it = s.symbols_by_file.find(f.path);
    if (it != s.symbols_by_file.end()) {
      for (const store::SymbolRow& sym : it->second) symbols.push_back(&sym);
    }
  }
  std::sort(symbols.begin(), symbols.end(),
            [](const store::SymbolRow* a, const store::SymbolRow* b) {
              return a->target_id < b->target_id;
            });
  Json syms = Json::array();
  for (const store::SymbolRow* sym : symbols) {
    syms.push_back(Json{{"id", sym->target_id},
                        {"name", sym->name},
                        {"qualifiedName", sym->qualified_name},
                        {"kind", sym->kind},
                        {"file", sym->path},
                        {"startLine", sym->start_line},
                        {"endLine", sym->end_line},
                        {"signature", sym->signature},
                        {"doc", sym->doc},
                        {"spanSha256", sym->span_sha256},
                        {"parseError", sym->parse_error}});
  }
  Json edges = Json::array();
  for (const Edge& e : s.edges) {
    edges.push_back(
        Json{{"kind", e.kind}, {"from", e.from}, {"to", e.to}, {"file", e.file}, {"line", e.line}});
  }
  std::map<std::string, const store::FileRecord*> file_of;
  for (const store::FileRecord& f : s.files) file_of.emplace(f.path, &f);
  Json packs = Json::array();
  Json claims = Json::array();
  for (const Pack& p : s.packs) {
    packs.push_back(Json{{"packId", p.pack_id},
                         {"packType", p.pack_type},
                         {"targetId", p.target_id},
                         {"summary", p.summary},
                         {"keyFacts", p.key_facts},
                         {"relatedFiles", Json::array({p.file})},
                         {"confidence", p.signal},
                         {"codeSnippets", p.snippets},
                         {"invalidationTriggers", Json::array({p.file})}});
    const store::FileRecord* f = file_of.at(p.file);
    claims.push_back(
        Json{{"claimId", p.pack_id},
             {"statement", p.key_facts.front()},
             {"knowledgeSource", "syntactic"},
             {"confidence",
              {{"type", "deterministic"},
               {"value", 1.0},
               {"reason", fmt::format("extracted by {} in run {}", f->extractor, f->run_id)}}},
             {"evidence", Json::array({Json{{"file", p.file},
                                            {"startLine", p.start_line},
                                            {"endLine", p.end_line},
                                            {"contentHash", p.content_hash},
                                            {"extractor", f->extractor},
                                            {"runId", f->run_id}}})},
             {"defeaters", Json::array({"code_change", "file_deleted", "symbol_removed",
                                        "symbol_moved", "contradiction", "test_failure"})}});
  }
  Json out{{"schemaVersion", store::kSchemaVersion},
           {"exportedAt", last ? last->finished_at : std::string()},
           {"identity", Identity(r)},
           {"runs", std::move(runs)},
           {"files", std::move(files)},
           {"symbols", std::move(syms)},
           {"edges", std::move(edges)},
           {"packs", std::move(packs)},
           {"claims", std::move(claims)}};
  return out.dump(1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string MarkdownExport(const Snapshot& s, const ExportRequest& r,
                           const std::optional<store::RunRecord>& last) {
  std::string md = fmt::format("# Librarian index: {}\n\n", BaseName(r.root));
  md += "## Identity\n\n";
  md += fmt::format(
      "- workspace id: `{}`\n- schema version: {}\n- files: {}\n- symbols: {}\n- packs: {}\n"
      "- confidence values are uncalibrated ranking signals, not probabilities\n\n",
      r.workspace_id, store::kSchemaVersion, s.files.size(), s.symbol_count, s.packs.size());
  md += "## Last run\n\n";
  if (last) {
    md += fmt::format("- run: `{}` ({}, {})\n- started: {}\n- finished: {}\n\n", last->run_id,
                      last->state, last->mode, last->started_at, last->finished_at);
  } else {
    md += "No run recorded.\n\n";
  }
  md += "## Modules\n";
  std::map<std::string, const Pack*> module_pack;
  for (const Pack& p : s.packs) {
    if (p.pack_type == "module_context") module_pack.emplace(p.file, &p);
  }
  std::string dir = "\x01";  // none yet
  for (const store::FileRecord& f : s.files) {
    auto mp = module_pack.find(f.path);
    if (mp == module_pack.end()) continue;
    const std::string d = DirName(f.path);
    if (d != dir) {
      dir = d;
      md += fmt::format("\n### {}\n", d.empty() ? "(root)" : d + "/");
    }
    md += fmt::format("\n#### `{}`\n\n{}\n\n", f.path, mp->second->summary);
    for (const std::string& fact : mp->second->key_facts) md += fmt::format("- {}\n", fact);
    auto syms = s.symbols_by_file.find(f.path);
    if (syms != s.symbols_by_file.end() && !syms->second.empty()) {
      md += "\nDefinitions:\n\n";
      for (const store::SymbolRow& sym : syms->second) {
        if (sym.kind == "namespace") continue;
        md += fmt::format("- {} `{}` (lines {}-{}){}\n", sym.kind, sym.qualified_name,
                          sym.start_line, sym.end_line, sym.doc.empty() ? "" : ": " + sym.doc);
      }
    }
  }
  md += "\n## Decisions\n\n";
  bool any_adr = false;
  for (const store::FileRecord& f : s.files) {
    if (!IsAdr(f.path)) continue;
    any_adr = true;
    md += fmt::format("- `{}`\n", f.path);
  }
  if (!any_adr) md += "No architecture decision records are indexed.\n";
  md += "\n## Latest audit\n\nNo audit has been stored for this workspace.\n";
  return md;
}

std::string TempSibling(const std::string& abs) {
  std::random_device rd;
  return fmt::format("{}.tmp-{}-{:08x}", abs, static_cast<long>(::getpid()), rd());
}

}  // namespace

std::string_view FormatName(Format format) {
  switch (format) {
    case Format::kJson:
      return "json";
    case Format::kSqlite:
      return "sqlite";
    case Format::kMarkdown:
      return "markdown";
  }
  return "json";
}

std::optional<Format> ParseFormat(std::string_view name) {
  for (Format f : {Format::kJson, Format::kSqlite, Format::kMarkdown}) {
    if (FormatName(f) == name) return f;
  }
  return std::nullopt;
}

Result<std::string> OutputPathFor(store::Store& store, const ExportRequest& request) {
  if (request.output_path.empty()) {
    std::optional<store::RunRecord> last = LastRun(store);
    return fmt::format("{}/index-{}.{}", kExportDir, last ? last->run_id : "none",
                       Extension(request.format));
  }
  ASSIGN_OR_RETURN(std::string rel,
                   crawl::ResolveInWorkspace(request.root, request.output_path,
                                             {.field = "outputPath", .allow_absolute = false}));
  if (rel == ".") return Status::InvalidArgument("outputPath: names the workspace root");
  return rel;
}

Result<ExportResult> ExportIndex(base::Env& env, store::Store& store,
                                 const ExportRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::string rel, OutputPathFor(store, request));
  const std::string abs = fmt::format("{}/{}", request.root, rel);
  const bool in_exports = rel.rfind(std::string(kExportDir) + "/", 0) == 0;
  if (env.FileExists(abs)) {
    Result<std::uint64_t> size = env.FileSize(abs);
    if (!size.ok()) {
      return Status::InvalidArgument(fmt::format("outputPath: {} is not a regular file", rel));
    }
    if (!in_exports) {
      return Status::AlreadyExists(fmt::format(
          "outputPath: {} exists; only files under {}/ are overwritten", rel, kExportDir));
    }
  }
  const std::string parent = DirName(abs);
  RETURN_IF_ERROR(env.CreateDir(parent));
  if (in_exports) {
    // The directory Bootstrap marks ignored; an export made before any bootstrap wrote it
    // gets the same marker.
    const std::string ignore = fmt::format("{}/.librarian/.gitignore", request.root);
    if (!env.FileExists(ignore)) RETURN_IF_ERROR(env.WriteFile(ignore, "*\n"));
  }

  ExportResult out;
  out.workspace = request.root;
  out.format = std::string(FormatName(request.format));
  out.output_path = rel;
  ASSIGN_OR_RETURN(Snapshot snap, Read(store));
  out.counts.files = snap.files.size();
  out.counts.symbols = snap.symbol_count;
  out.counts.packs = snap.packs.size();
  out.counts.claims = snap.packs.size();  // v1: one claim per pack (docs/librarian.md §5.2)
  const std::optional<store::RunRecord> last = LastRun(store);
  switch (request.format) {
    case Format::kJson:
      RETURN_IF_ERROR(env.WriteFile(abs, JsonExport(snap, request, last)));
      break;
    case Format::kMarkdown:
      RETURN_IF_ERROR(env.WriteFile(abs, MarkdownExport(snap, request, last)));
      break;
    case Format::kSqlite: {
      // VACUUM INTO writes a consistent snapshot to a new file; it refuses an existing one,
      // hence the temporary name, renamed over the target once complete.
      const std::string tmp = TempSibling(abs);
      ASSIGN_OR_RETURN(base::Statement st, store.db().Prepare("VACUUM INTO ?1"));
      RETURN_IF_ERROR(st.Bind(1, std::string_view(tmp)));
      Result<bool> done = st.Step();
      if (!done.ok()) {
        ::unlink(tmp.c_str());
        return done.status().WithContext("outputPath");
      }
      if (::rename(tmp.c_str(), abs.c_str()) != 0) {
        ::unlink(tmp.c_str());
        return Status::Io(fmt::format("outputPath: cannot rename the export into {}", rel));
      }
      break;
    }
  }
  ASSIGN_OR_RETURN(out.bytes, env.FileSize(abs));
  out.success = true;
  out.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
  return out;
}

}  // namespace trove::librarian::exports

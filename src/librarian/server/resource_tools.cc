#include "librarian/server/resource_tools.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include "base/hash.h"
#include "base/rfc3339.h"
#include "base/sqlite.h"
#include "librarian/audit/audit.h"
#include "librarian/extract/subprocess.h"
#include "librarian/ledger/ledger.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"
#include "mcp/context.h"
#include "mcp/policy/rate_limit.h"

#ifndef TROVE_VERSION
#define TROVE_VERSION "0.1.0"  // as mcp_main.cc
#endif

namespace trove::librarian::server {
namespace {

using mcp::Json;

// `dot` gets this long and this much output (decision 0052's pattern for a dependency).
constexpr std::int64_t kDotTimeoutMicros = 10'000'000;
constexpr std::size_t kDotMaxOutput = 16u << 20;
// Graph sizes kept in the maps.
constexpr std::size_t kTopN = 20;
constexpr std::size_t kMaxDirEdges = 200;
// A callee name with more definitions than this links no edge (as query's expansion).
constexpr int kMaxDefinitionsPerName = 5;

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string Dir(const std::string& path) {
  const std::size_t s = path.rfind('/');
  return s == std::string::npos ? "." : path.substr(0, s);
}

// PageRank (damping 0.85, 30 iterations, dangling mass spread evenly) over `n` nodes.
std::vector<double> PageRank(std::size_t n,
                             const std::vector<std::pair<std::size_t, std::size_t>>& edges) {
  if (n == 0) return {};
  std::vector<std::vector<std::size_t>> out(n);
  for (const auto& [a, b] : edges) {
    if (a < n && b < n && a != b) out[a].push_back(b);
  }
  std::vector<double> rank(n, 1.0 / static_cast<double>(n)), next(n);
  for (int it = 0; it < 30; ++it) {
    double dangling = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (out[i].empty()) dangling += rank[i];
    }
    std::fill(next.begin(), next.end(), (0.15 + 0.85 * dangling) / static_cast<double>(n));
    for (std::size_t i = 0; i < n; ++i) {
      if (out[i].empty()) continue;
      const double share = 0.85 * rank[i] / static_cast<double>(out[i].size());
      for (std::size_t j : out[i]) next[j] += share;
    }
    rank.swap(next);
  }
  return rank;
}

Result<std::int64_t> Scalar(base::Database& db, const char* sql) {
  ASSIGN_OR_RETURN(base::Statement st, db.Prepare(sql));
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt64(0) : 0;
}

// Name-resolved call edges between functions: (caller symbol id, callee symbol id).
Result<std::vector<std::pair<std::int64_t, std::int64_t>>> CallEdges(base::Database& db) {
  ASSIGN_OR_RETURN(
      base::Statement st,
      db.Prepare(fmt::format(
          "SELECT c.caller_id, s.id FROM calls c JOIN symbols s ON s.name = c.callee WHERE "
          "c.caller_id IS NOT NULL AND s.kind IN ('function', 'method') AND c.callee IN (SELECT "
          "name FROM symbols WHERE kind IN ('function', 'method') GROUP BY name HAVING count(*) "
          "<= {})",
          kMaxDefinitionsPerName)));
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.emplace_back(st.ColumnInt64(0), st.ColumnInt64(1));
  }
  return out;
}

struct FnRow {
  std::int64_t id;
  std::string target_id, name, qualified_name, kind, path, signature, doc, extractor;
  std::uint32_t start_line, end_line;
  bool parse_error, end_known;
};

Result<std::vector<FnRow>> Functions(base::Database& db) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT s.id, s.target_id, s.name, s.qualified_name, s.kind, "
                              "f.path, s.signature, s.doc, f.extractor, s.start_line, s.end_line, "
                              "s.parse_error, s.end_known FROM symbols s JOIN files f ON f.id = "
                              "s.file_id WHERE s.kind IN ('function', 'method') ORDER BY s.id"));
  std::vector<FnRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(FnRow{st.ColumnInt64(0), st.ColumnText(1), st.ColumnText(2), st.ColumnText(3),
                        st.ColumnText(4), st.ColumnText(5), st.ColumnText(6), st.ColumnText(7),
                        st.ColumnText(8), static_cast<std::uint32_t>(st.ColumnInt64(9)),
                        static_cast<std::uint32_t>(st.ColumnInt64(10)), st.ColumnInt64(11) != 0,
                        st.ColumnInt64(12) != 0});
  }
  return out;
}

// Functions with their PageRank over the call graph, best first (ties by target id).
struct RankedFns {
  std::vector<FnRow> fns;
  std::vector<double> rank;  // parallel to fns
  std::vector<std::pair<std::size_t, std::size_t>> edges;
};
Result<RankedFns> RankFunctions(base::Database& db) {
  RankedFns r;
  ASSIGN_OR_RETURN(r.fns, Functions(db));
  std::map<std::int64_t, std::size_t> index;
  for (std::size_t i = 0; i < r.fns.size(); ++i) index[r.fns[i].id] = i;
  ASSIGN_OR_RETURN(auto calls, CallEdges(db));
  for (const auto& [a, b] : calls) {
    auto ia = index.find(a), ib = index.find(b);
    if (ia != index.end() && ib != index.end()) r.edges.emplace_back(ia->second, ib->second);
  }
  std::vector<double> rank = PageRank(r.fns.size(), r.edges);
  std::vector<std::size_t> order(r.fns.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (rank[a] != rank[b]) return rank[a] > rank[b];
    return r.fns[a].target_id < r.fns[b].target_id;
  });
  RankedFns sorted;
  std::vector<std::size_t> where(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    sorted.fns.push_back(std::move(r.fns[order[k]]));
    sorted.rank.push_back(rank[order[k]]);
    where[order[k]] = k;
  }
  for (const auto& [a, b] : r.edges) sorted.edges.emplace_back(where[a], where[b]);
  return sorted;
}

// docs/librarian.md §4.1 base signal of a function pack.
double BaseSignal(const FnRow& f) {
  if (f.extractor.rfind("tree-sitter", 0) == 0) return f.parse_error ? 0.7 : 0.9;
  if (f.extractor.rfind("ctags", 0) == 0) return f.end_known ? 0.6 : 0.5;
  return 0.5;
}

std::string Cursor(std::string_view kind, std::int64_t value) {
  return base::Base64UrlEncode(fmt::format("{}:{}", kind, value));
}

void Page(Json& out, const ExtraResourceRequest& req, std::size_t end, std::size_t total) {
  if (end >= total) return;
  out["nextCursor"] = Cursor(req.kind, static_cast<std::int64_t>(end));
  out["nextUri"] = fmt::format("{}?cursor={}&limit={}", req.base_uri,
                               out["nextCursor"].get<std::string>(), req.limit);
}

Result<Json> MethodPacks(store::Store& st, const ExtraResourceRequest& req) {
  ASSIGN_OR_RETURN(RankedFns r, RankFunctions(st.db()));
  const std::size_t begin =
      std::min<std::size_t>(static_cast<std::size_t>(req.offset), r.fns.size());
  const std::size_t end = std::min(r.fns.size(), begin + req.limit);
  Json packs = Json::array();
  for (std::size_t i = begin; i < end; ++i) {
    const FnRow& f = r.fns[i];
    std::string summary =
        f.doc.empty() ? fmt::format("{} {}{} in {}", f.kind, f.qualified_name, f.signature, f.path)
                      : f.doc;
    if (summary.size() > 240) summary = summary.substr(0, 237) + "...";
    Json facts = Json::array();
    facts.push_back(fmt::format("{} is defined in {} lines {}-{}", f.qualified_name, f.path,
                                f.start_line, f.end_line));
    if (!f.signature.empty()) facts.push_back(fmt::format("signature: {}{}", f.name, f.signature));
    packs.push_back({{"packId", store::PackIdFor("function_context", f.target_id)},
                     {"packType", "function_context"},
                     {"targetId", f.target_id},
                     {"summary", summary},
                     {"keyFacts", std::move(facts)},
                     {"relatedFiles", Json::array({f.path})},
                     {"confidence", BaseSignal(f)}});
  }
  Json out = {{"workspaceId", req.workspace_id},
              {"order", "pagerank"},
              {"counts", {{"packs", r.fns.size()}, {"page", end - begin}}},
              {"packs", std::move(packs)},
              {"confidenceSemantics", "ranking_signal_uncalibrated"}};
  Page(out, req, end, r.fns.size());
  return out;
}

struct Maps {
  Json json;
  std::string dot;
};

Result<Maps> KnowledgeMaps(store::Store& st, const ExtraResourceRequest& req) {
  base::Database& db = st.db();
  ASSIGN_OR_RETURN(RankedFns r, RankFunctions(db));
  ASSIGN_OR_RETURN(std::vector<store::FileRecord> files, st.ListFiles());
  std::map<std::string, std::int64_t> languages;
  std::map<std::string, std::size_t> file_index;
  std::vector<std::string> paths;
  double signal_sum = 0;
  for (const FnRow& f : r.fns) signal_sum += BaseSignal(f);
  std::int64_t modules = 0;
  for (const store::FileRecord& f : files) {
    if (f.status != store::FileStatus::kIndexed && f.status != store::FileStatus::kUnchanged) {
      continue;
    }
    ++modules;
    ++languages[f.language.empty() ? "unknown" : f.language];
    file_index[f.path] = paths.size();
    paths.push_back(f.path);
  }
  // Module packs: the §4.1 ladder by extractor family.
  for (const store::FileRecord& f : files) {
    if (!file_index.count(f.path)) continue;
    signal_sum += f.extractor.rfind("tree-sitter", 0) == 0 ? (f.parse_error ? 0.6 : 0.8)
                  : f.extractor.rfind("ctags", 0) == 0     ? 0.6
                                                           : 0.5;
  }
  // File graph from the function call graph.
  std::vector<std::pair<std::size_t, std::size_t>> file_edges;
  std::map<std::pair<std::string, std::string>, std::int64_t> dir_edges;
  for (const auto& [a, b] : r.edges) {
    const std::string& pa = r.fns[a].path;
    const std::string& pb = r.fns[b].path;
    if (pa == pb) continue;
    auto ia = file_index.find(pa), ib = file_index.find(pb);
    if (ia != file_index.end() && ib != file_index.end()) {
      file_edges.emplace_back(ia->second, ib->second);
    }
    if (Dir(pa) != Dir(pb)) ++dir_edges[{Dir(pa), Dir(pb)}];
  }
  std::vector<double> file_rank = PageRank(paths.size(), file_edges);
  std::vector<std::size_t> order(paths.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (file_rank[a] != file_rank[b]) return file_rank[a] > file_rank[b];
    return paths[a] < paths[b];
  });
  Json top_files = Json::array();
  for (std::size_t k = 0; k < order.size() && k < kTopN; ++k) {
    top_files.push_back({{"path", paths[order[k]]}, {"pagerank", file_rank[order[k]]}});
  }
  Json top_symbols = Json::array();
  for (std::size_t k = 0; k < r.fns.size() && k < kTopN; ++k) {
    top_symbols.push_back(
        {{"id", r.fns[k].target_id}, {"file", r.fns[k].path}, {"pagerank", r.rank[k]}});
  }
  std::vector<std::pair<std::pair<std::string, std::string>, std::int64_t>> dirs(dir_edges.begin(),
                                                                                 dir_edges.end());
  std::stable_sort(dirs.begin(), dirs.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (dirs.size() > kMaxDirEdges) dirs.resize(kMaxDirEdges);
  Json dir_json = Json::array();
  std::string dot =
      "digraph librarian {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  std::set<std::string> nodes;
  for (const auto& [e, n] : dirs) {
    dir_json.push_back({{"from", e.first}, {"to", e.second}, {"count", n}});
    nodes.insert(e.first);
    nodes.insert(e.second);
  }
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\';
      if (c == '\n') continue;
      q += c;
    }
    return q + "\"";
  };
  for (const std::string& n : nodes) dot += fmt::format("  {};\n", quote(n));
  for (const auto& [e, n] : dirs) {
    dot += fmt::format("  {} -> {} [label=\"{}\"];\n", quote(e.first), quote(e.second), n);
  }
  dot += "}\n";
  // ADRs: markdown files under an adr/, adrs/ or decisions/ directory.
  Json adrs = Json::array();
  for (const std::string& p : paths) {
    const bool md = p.size() > 3 && p.compare(p.size() - 3, 3, ".md") == 0;
    if (md && (p.find("decisions/") != std::string::npos || p.find("adr/") != std::string::npos ||
               p.find("adrs/") != std::string::npos)) {
      adrs.push_back({{"id", "adr:" + p}, {"path", p}});
    }
  }
  const std::int64_t packs = static_cast<std::int64_t>(r.fns.size()) + modules;
  Maps m;
  m.json = {{"workspaceId", req.workspace_id},
            {"generatedAt", base::NowRfc3339()},
            {"totals",
             {{"functions", r.fns.size()},
              {"modules", modules},
              {"packs", packs},
              {"meanPackSignal", packs ? signal_sum / static_cast<double>(packs) : 0.0}}},
            {"languages", languages},
            {"directoryEdges", std::move(dir_json)},
            {"topFiles", std::move(top_files)},
            {"topSymbols", std::move(top_symbols)},
            {"patterns", Json::array()},
            {"adrs", std::move(adrs)},
            {"edgeResolution", fmt::format("calls resolved by name; names with more than {} "
                                           "definitions link nothing",
                                           kMaxDefinitionsPerName)},
            {"confidenceSemantics", "ranking_signal_uncalibrated"}};
  m.dot = std::move(dot);
  return m;
}

// Renders `dot` to SVG with Graphviz behind the "graphviz" circuit breaker; "" (and `why`) when
// it is unavailable.
std::string RenderSvg(const std::string& dot, mcp::CallContext& ctx, std::string* why) {
  mcp::policy::CircuitBreaker& breaker = ctx.breaker("graphviz");
  const mcp::policy::Admission admission = breaker.Admit();
  if (!admission.allowed) {
    *why =
        fmt::format("graphviz circuit breaker open; retry after {} ms", admission.retry_after_ms);
    return "";
  }
  char path[] = "/tmp/librarian-map-XXXXXX";
  const int fd = ::mkstemp(path);
  if (fd < 0) {
    breaker.Report(mcp::policy::CallOutcome::kIgnored);
    *why = "cannot create a temporary file";
    return "";
  }
  const bool written = ::write(fd, dot.data(), dot.size()) == static_cast<ssize_t>(dot.size());
  ::close(fd);
  Result<extract::internal::ProgramResult> r =
      written
          ? extract::internal::RunProgram({"dot", "-Tsvg", path}, kDotTimeoutMicros, kDotMaxOutput)
          : Result<extract::internal::ProgramResult>(Status::Io("write failed"));
  ::unlink(path);
  if (!r.ok() || r->exit_code != 0) {
    breaker.Report(mcp::policy::CallOutcome::kFailure);
    *why = r.ok() ? fmt::format("dot exited with {}", r->exit_code)
                  : std::string(r.status().message());
    return "";
  }
  breaker.Report(mcp::policy::CallOutcome::kSuccess);
  return r->out;
}

Result<Json> Provenance(store::Store& st, const ExtraResourceRequest& req) {
  ASSIGN_OR_RETURN(std::vector<store::RunRecord> runs, st.ListRuns());
  std::reverse(runs.begin(), runs.end());  // newest first
  const std::size_t begin =
      std::min<std::size_t>(static_cast<std::size_t>(req.offset), runs.size());
  const std::size_t end = std::min(runs.size(), begin + req.limit);
  auto parse = [](const std::string& s) {
    Json j = Json::parse(s, nullptr, false);
    return j.is_discarded() ? Json::object() : j;
  };
  Json runs_json = Json::array();
  for (std::size_t i = begin; i < end; ++i) {
    const store::RunRecord& r = runs[i];
    runs_json.push_back({{"runId", r.run_id},
                         {"status", r.state},
                         {"mode", r.mode},
                         {"startedAt", r.started_at},
                         {"finishedAt", r.finished_at},
                         {"options", parse(r.options_json)},
                         {"stats", parse(r.stats_json)}});
  }
  Json tools = runs.empty() ? Json::object() : parse(runs.front().tool_versions_json);
  tools["librarian"] = TROVE_VERSION;
  ASSIGN_OR_RETURN(base::Statement v, st.db().Prepare("SELECT sqlite_version()"));
  ASSIGN_OR_RETURN(bool row, v.Step());
  if (row) tools["sqlite"] = v.ColumnText(0);
  ASSIGN_OR_RETURN(std::vector<audit::StoredAudit> audits, audit::ListAudits(st, 20));
  Json audits_json = Json::array();
  for (const audit::StoredAudit& a : audits) {
    audits_json.push_back({{"id", a.id},
                           {"auditType", a.audit_type},
                           {"timestamp", a.timestamp},
                           {"summary",
                            {{"total_findings", a.summary.total_findings},
                             {"critical", a.summary.critical},
                             {"warnings", a.summary.warnings},
                             {"info", a.summary.info}}}});
  }
  ASSIGN_OR_RETURN(auto counts, ledger::CountByKind(st.db()));
  Json out = {{"workspaceId", req.workspace_id},
              {"counts", {{"runs", runs.size()}, {"page", end - begin}}},
              {"runs", std::move(runs_json)},
              {"toolVersions", std::move(tools)},
              {"audits", std::move(audits_json)},
              {"ledger", counts}};
  Page(out, req, end, runs.size());
  return out;
}

// Reads a small file under `root`; "" when absent.
std::string ReadSmall(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return "";
  char buf[4096];
  const std::size_t n = std::fread(buf, 1, sizeof buf, f);
  std::fclose(f);
  std::string s(buf, n);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

Result<Json> Identity(store::Store& st, const ExtraResourceRequest& req) {
  ASSIGN_OR_RETURN(std::vector<store::RunRecord> runs, st.ListRuns());
  ASSIGN_OR_RETURN(std::vector<store::FileRecord> files, st.ListFiles());
  std::map<std::string, std::int64_t> languages;
  for (const store::FileRecord& f : files) {
    if (!f.language.empty()) ++languages[f.language];
  }
  ASSIGN_OR_RETURN(std::int64_t functions,
                   Scalar(st.db(),
                          "SELECT count(*) FROM symbols WHERE kind IN ('function', "
                          "'method')"));
  ASSIGN_OR_RETURN(std::int64_t modules,
                   Scalar(st.db(),
                          "SELECT count(*) FROM files WHERE status IN ('indexed', "
                          "'unchanged')"));
  std::string state = "unknown";
  Json defaults = {{"include", Json::array()}, {"exclude", Json::array()}};
  if (!runs.empty()) {
    const std::string& s = runs.back().state;
    state = s == "succeeded" ? "ready" : s == "running" ? "indexing" : "failed";
    Json o = Json::parse(runs.back().options_json, nullptr, false);
    if (!o.is_discarded()) {
      if (o.contains("include")) defaults["include"] = o["include"];
      if (o.contains("exclude")) defaults["exclude"] = o["exclude"];
    }
  }
  const std::size_t slash = req.root.rfind('/');
  Json out = {
      {"workspaceId", req.workspace_id},
      {"name", slash == std::string::npos ? req.root : req.root.substr(slash + 1)},
      {"state", state},
      {"schemaVersion", store::kSchemaVersion},
      {"server", {{"name", "librarian"}, {"version", TROVE_VERSION}}},
      {"languages", languages},
      {"defaults", std::move(defaults)},
      {"confidenceSemantics", "ranking_signal_uncalibrated"},
      {"counts",
       {{"files", files.size()}, {"functions", functions}, {"packs", functions + modules}}}};
  // VCS: read from .git without running git (HEAD, its ref); `dirty` is not computed.
  const std::string head = ReadSmall(req.root + "/.git/HEAD");
  if (!head.empty()) {
    Json vcs = {{"type", "git"}};
    if (head.rfind("ref: ", 0) == 0) {
      const std::string ref = head.substr(5);
      vcs["branch"] = ref.rfind("refs/heads/", 0) == 0 ? ref.substr(11) : ref;
      const std::string sha = ReadSmall(req.root + "/.git/" + ref);
      if (!sha.empty()) vcs["head"] = sha;
    } else {
      vcs["head"] = head;
    }
    out["vcs"] = std::move(vcs);
  }
  return out;
}

}  // namespace

bool IsExtraResourceKind(std::string_view kind) {
  return std::find(std::begin(kExtraResourceKinds), std::end(kExtraResourceKinds), kind) !=
         std::end(kExtraResourceKinds);
}

std::string ExtraResourceTitle(std::string_view kind) {
  if (kind == "knowledge-maps") return "Workspace knowledge maps";
  if (kind == "method-packs") return "Method-level context packs";
  if (kind == "provenance") return "Index provenance";
  return "Workspace identity";
}

std::string ExtraResourceDescription(std::string_view kind) {
  if (kind == "knowledge-maps") {
    return "Aggregated views of the default workspace: totals, languages, directory dependency "
           "edges, top files and functions by PageRank, ADRs; also the directory graph as DOT "
           "and (with Graphviz) SVG, as further contents of the same read.";
  }
  if (kind == "method-packs") {
    return "function_context packs in PageRank order (confidence: an uncalibrated ranking "
           "signal). Paged: append ?cursor=<nextCursor>&limit=<n> (default 1000, max 10000).";
  }
  if (kind == "provenance") {
    return "Index runs newest first with options and stats, tool versions, stored audits and "
           "evidence-ledger counts by kind. Paged over runs: ?cursor=&limit=.";
  }
  return "What the workspace is and how it is configured: id, name, git branch and head, "
         "state, schema version, server, languages, default globs, counts.";
}

Result<std::vector<mcp::ResourceContents>> ReadExtraResource(store::Store& st,
                                                             const ExtraResourceRequest& req,
                                                             mcp::CallContext& ctx) {
  std::vector<mcp::ResourceContents> out;
  if (req.kind == "knowledge-maps") {
    ASSIGN_OR_RETURN(Maps m, KnowledgeMaps(st, req));
    std::string why;
    std::string svg = RenderSvg(m.dot, ctx, &why);
    if (svg.empty()) m.json["svgUnavailable"] = why;
    out.push_back({req.uri, "application/json", Dump(m.json), std::nullopt});
    out.push_back({req.uri, "text/vnd.graphviz", m.dot, std::nullopt});
    if (!svg.empty()) out.push_back({req.uri, "image/svg+xml", std::move(svg), std::nullopt});
    return out;
  }
  Json body;
  if (req.kind == "method-packs") {
    ASSIGN_OR_RETURN(body, MethodPacks(st, req));
  } else if (req.kind == "provenance") {
    ASSIGN_OR_RETURN(body, Provenance(st, req));
  } else if (req.kind == "identity") {
    ASSIGN_OR_RETURN(body, Identity(st, req));
  } else {
    return Status::NotFound(fmt::format("{}: unknown resource kind", req.uri));
  }
  out.push_back({req.uri, "application/json", Dump(body), std::nullopt});
  return out;
}

}  // namespace trove::librarian::server

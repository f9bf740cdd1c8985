#include "librarian/packs/packs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "base/hash.h"
#include "base/rfc3339.h"
#include "base/sqlite.h"
#include "librarian/extract/identifier.h"
#include "librarian/ledger/ledger.h"
#include "librarian/packs/adr.h"
#include "librarian/packs/includes.h"
#include "librarian/rank/pagerank.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"

namespace trove::librarian::packs {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxAdrBytes = 1u << 20;
constexpr std::size_t kMaxSummaryChars = 240;

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Cuts `text` at a word boundary to at most `max` bytes, appending "…" (as query's summaries).
std::string CutAtWord(std::string text, std::size_t max = kMaxSummaryChars) {
  if (text.size() <= max) return text;
  std::size_t cut = max - 3;  // room for "…" (3 bytes)
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  const std::size_t space = text.rfind(' ', cut);
  if (space != std::string::npos && space > max / 2) cut = space;
  text.resize(cut);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text + "…";
}

std::optional<std::string> ReadWorkspaceFile(const std::string& root, const std::string& rel) {
  if (rel.empty() || rel.front() == '/' || rel.find("..") != std::string::npos) return std::nullopt;
  const std::string abs = root + "/" + rel;
  const int fd = ::open(abs.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
    if (out.size() > kMaxAdrBytes) break;
  }
  ::close(fd);
  if (out.size() > kMaxAdrBytes) out.resize(kMaxAdrBytes);
  return out;
}

std::string Dir(std::string_view path) {
  const std::size_t s = path.rfind('/');
  return s == std::string_view::npos ? std::string() : std::string(path.substr(0, s));
}

// Resolves a non-C import `spelled` from `includer` to an indexed file: as a path relative to the
// importer or the root, with the importer's extension or a common one, and dotted module names
// (Python `a.b`, Java `a.b.C`) as directories.
std::optional<std::string> ResolveImport(std::string_view includer, std::string_view spelled,
                                         const std::set<std::string>& files) {
  if (spelled.empty() || spelled.size() > 512) return std::nullopt;
  static constexpr std::string_view kExts[] = {
      "",    ".py", ".js",   ".ts",       ".tsx",      ".jsx",        ".mjs",
      ".go", ".rs", ".java", "/index.js", "/index.ts", "/__init__.py"};
  std::vector<std::string> bases;
  std::string s(spelled);
  if (s.front() == '.' && s.find('/') != std::string::npos) {
    std::optional<std::string> p = NormalizeLexically(Dir(includer) + "/" + s);
    if (p) bases.push_back(*p);
  } else {
    std::string dotted = s;
    if (dotted.find('/') == std::string::npos) std::replace(dotted.begin(), dotted.end(), '.', '/');
    bases.push_back(dotted);
    const std::string dir = Dir(includer);
    if (!dir.empty()) bases.push_back(dir + "/" + dotted);
  }
  for (const std::string& b : bases) {
    for (std::string_view ext : kExts) {
      std::optional<std::string> p = NormalizeLexically(b + std::string(ext));
      if (p && !p->empty() && *p != includer && files.count(*p) != 0) return p;
    }
  }
  return std::nullopt;
}

bool IsCLike(std::string_view language) { return language == "c" || language == "cpp"; }

// Writes stored packs and their triggers with three statements prepared once (a bootstrap
// stores one pack per function and file).
class PackWriter {
 public:
  static Result<PackWriter> Create(base::Database& db) {
    ASSIGN_OR_RETURN(base::Statement ins,
                     db.Prepare("INSERT OR REPLACE INTO packs(pack_id, pack_type, target_id, "
                                "summary, key_facts, related_files, signal, words, version, "
                                "created_at, run_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
                                "?10, ?11)"));
    ASSIGN_OR_RETURN(base::Statement del,
                     db.Prepare("DELETE FROM pack_triggers WHERE pack_id = ?1"));
    ASSIGN_OR_RETURN(base::Statement trig,
                     db.Prepare("INSERT OR REPLACE INTO pack_triggers(pack_id, path, sha256) "
                                "VALUES (?1, ?2, ?3)"));
    return PackWriter(std::move(ins), std::move(del), std::move(trig));
  }

  Status Write(const StoredPack& p) {
    ins_.Reset();
    RETURN_IF_ERROR(ins_.Bind(1, std::string_view(p.pack_id)));
    RETURN_IF_ERROR(ins_.Bind(2, std::string_view(p.pack_type)));
    RETURN_IF_ERROR(ins_.Bind(3, std::string_view(p.target_id)));
    RETURN_IF_ERROR(ins_.Bind(4, std::string_view(p.summary)));
    const std::string facts = Dump(Json(p.key_facts));
    const std::string related = Dump(Json(p.related_files));
    RETURN_IF_ERROR(ins_.Bind(5, std::string_view(facts)));
    RETURN_IF_ERROR(ins_.Bind(6, std::string_view(related)));
    RETURN_IF_ERROR(ins_.Bind(7, p.signal));
    RETURN_IF_ERROR(ins_.Bind(8, std::string_view(p.words)));
    RETURN_IF_ERROR(ins_.Bind(9, p.version));
    RETURN_IF_ERROR(ins_.Bind(10, std::string_view(p.created_at)));
    RETURN_IF_ERROR(ins_.Bind(11, std::string_view(p.run_id)));
    ASSIGN_OR_RETURN(bool row, ins_.Step());
    del_.Reset();
    RETURN_IF_ERROR(del_.Bind(1, std::string_view(p.pack_id)));
    ASSIGN_OR_RETURN(row, del_.Step());
    for (const Trigger& t : p.triggers) {
      trig_.Reset();
      RETURN_IF_ERROR(trig_.Bind(1, std::string_view(p.pack_id)));
      RETURN_IF_ERROR(trig_.Bind(2, std::string_view(t.path)));
      RETURN_IF_ERROR(trig_.Bind(3, std::string_view(t.sha256)));
      ASSIGN_OR_RETURN(row, trig_.Step());
    }
    (void)row;
    return Status::Ok();
  }

 private:
  PackWriter(base::Statement ins, base::Statement del, base::Statement trig)
      : ins_(std::move(ins)), del_(std::move(del)), trig_(std::move(trig)) {}
  base::Statement ins_, del_, trig_;
};

}  // namespace

Result<std::int64_t> RecordEpisodeLocked(base::Database& db, const Episode& episode,
                                         std::string_view agent);

int ParameterCount(std::string_view signature) {
  const std::size_t open = signature.find('(');
  if (open == std::string_view::npos) return -1;
  int depth = 0;
  int commas = 0;
  bool content = false;
  std::string inner;
  for (std::size_t i = open; i < signature.size(); ++i) {
    const char c = signature[i];
    if (c == '(' || c == '<' || c == '[' || c == '{') {
      if (++depth == 1) continue;
    } else if (c == ')' || c == '>' || c == ']' || c == '}') {
      if (--depth == 0) break;
    } else if (c == ',' && depth == 1) {
      ++commas;
      continue;
    }
    if (depth >= 1 && !std::isspace(static_cast<unsigned char>(c))) {
      content = true;
      if (depth == 1) inner.push_back(c);
    }
  }
  if (!content || (commas == 0 && inner == "void")) return 0;
  return commas + 1;
}

std::vector<PatternGroup> MinePatterns(const std::vector<FunctionInfo>& fns) {
  std::map<std::tuple<std::string, int, std::string>, std::vector<const FunctionInfo*>> groups;
  for (const FunctionInfo& f : fns) {
    const int params = ParameterCount(f.signature);
    if (params < 0) continue;
    const std::vector<std::string> words = extract::SplitIdentifier(f.name);
    if (words.empty()) continue;
    groups[{f.kind, params, words.front()}].push_back(&f);
  }
  std::vector<PatternGroup> out;
  for (auto& [key, members] : groups) {
    if (members.size() < 3) continue;
    std::set<std::string> files;
    for (const FunctionInfo* f : members) files.insert(f->path);
    if (files.size() < 2) continue;
    PatternGroup g;
    g.kind = std::get<0>(key);
    g.parameters = std::get<1>(key);
    g.leading_word = std::get<2>(key);
    g.target_id =
        "pat:" + base::Sha256Hex(fmt::format("{}\n{}\n{}", g.kind, g.parameters, g.leading_word))
                     .substr(0, 16);
    std::sort(members.begin(), members.end(), [](const FunctionInfo* a, const FunctionInfo* b) {
      return std::tie(a->path, a->start_line, a->target_id) <
             std::tie(b->path, b->start_line, b->target_id);
    });
    g.members = members;
    g.files = files.size();
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](const PatternGroup& a, const PatternGroup& b) {
    if (a.members.size() != b.members.size()) return a.members.size() > b.members.size();
    return a.target_id < b.target_id;
  });
  return out;
}

bool IsTestPath(std::string_view path) {
  std::string lower(path);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t slash = lower.rfind('/');
  const std::string name = slash == std::string::npos ? lower : lower.substr(slash + 1);
  std::size_t i = 0;
  while (slash != std::string::npos && i < slash) {
    const std::size_t j = std::min(lower.find('/', i), slash);
    const std::string seg = lower.substr(i, j - i);
    if (seg == "test" || seg == "tests" || seg == "testing" || seg == "spec" ||
        seg == "__tests__" || seg == "testdata") {
      return true;
    }
    i = j + 1;
  }
  const std::size_t dot = name.find('.');
  const std::string stem = name.substr(0, dot);
  const std::string original_name(
      path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1));
  return stem.rfind("test_", 0) == 0 || (stem.size() > 5 && stem.ends_with("_test")) ||
         (stem.size() > 6 && stem.ends_with("_tests")) ||
         (stem.size() > 5 && stem.ends_with("_spec")) || name.find(".test.") != std::string::npos ||
         name.find(".spec.") != std::string::npos ||
         original_name.find("Test.") != std::string::npos ||
         original_name.find("Tests.") != std::string::npos;
}

Result<std::size_t> InvalidateStale(store::Store& store, const std::vector<std::string>* paths) {
  base::Database& db = store.db();
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  RETURN_IF_ERROR(
      db.Exec("CREATE TEMP TABLE IF NOT EXISTS stale_packs(pack_id TEXT PRIMARY KEY); "
              "DELETE FROM stale_packs"));
  if (paths == nullptr) {
    RETURN_IF_ERROR(
        db.Exec("INSERT OR IGNORE INTO stale_packs SELECT t.pack_id FROM pack_triggers t LEFT "
                "JOIN files f ON f.path = t.path WHERE f.sha256 IS NULL OR f.sha256 != t.sha256"));
  } else {
    // An index range of pack_triggers_path per path: a watch re-index reads its batch only.
    ASSIGN_OR_RETURN(
        base::Statement st,
        db.Prepare("INSERT OR IGNORE INTO stale_packs SELECT t.pack_id FROM pack_triggers t "
                   "LEFT JOIN files f ON f.path = t.path WHERE (t.path = ?1 OR (t.path >= ?1 || "
                   "'/' AND t.path < ?1 || '0')) AND (f.sha256 IS NULL OR f.sha256 != t.sha256)"));
    for (const std::string& p : *paths) {
      st.Reset();
      RETURN_IF_ERROR(st.Bind(1, std::string_view(p)));
      ASSIGN_OR_RETURN(bool row, st.Step());
      (void)row;
    }
  }
  RETURN_IF_ERROR(
      db.Exec("DELETE FROM pack_triggers WHERE pack_id IN (SELECT pack_id FROM stale_packs)"));
  ASSIGN_OR_RETURN(base::Statement del,
                   db.Prepare("DELETE FROM packs WHERE pack_id IN (SELECT pack_id FROM "
                              "stale_packs)"));
  ASSIGN_OR_RETURN(bool row, del.Step());
  (void)row;
  const std::size_t n = static_cast<std::size_t>(db.Changes());
  RETURN_IF_ERROR(db.Exec("DELETE FROM stale_packs"));
  RETURN_IF_ERROR(tx.Commit());
  return n;
}

Result<bool> HasDerived(store::Store& store) {
  ASSIGN_OR_RETURN(base::Statement st,
                   store.db().Prepare(
                       "SELECT (EXISTS(SELECT 1 FROM ranks) OR EXISTS(SELECT 1 FROM packs) OR NOT "
                       "EXISTS(SELECT 1 FROM files)) AND (SELECT value FROM meta WHERE key = "
                       "'packs_dirty') IS NOT '1'"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row && st.ColumnInt64(0) != 0;
}

Status MarkDerivedDirty(store::Store& store) {
  return store.db().Exec("INSERT OR REPLACE INTO meta(key, value) VALUES ('packs_dirty', '1')");
}

Result<DerivedStats> RebuildDerived(store::Store& store, const std::string& root,
                                    std::string_view run_id) {
  base::Database& db = store.db();
  DerivedStats stats;
  const std::string now = base::NowRfc3339();

  // Files and their hashes.
  std::map<std::string, std::string> sha;  // path -> sha256
  std::map<std::string, std::string> language;
  std::set<std::string> paths;
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT path, sha256, language FROM files ORDER BY path"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      std::string path = st.ColumnText(0);
      sha[path] = st.ColumnText(1);
      language[path] = st.ColumnText(2);
      paths.insert(std::move(path));
    }
  }
  // Functions.
  std::vector<FunctionInfo> fns;
  std::map<std::int64_t, std::size_t> fn_index;  // symbol id -> index in fns
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT s.id, s.target_id, s.name, s.kind, s.signature, f.path, "
                                "s.start_line FROM symbols s JOIN files f ON f.id = s.file_id "
                                "WHERE s.kind IN ('function', 'method') ORDER BY s.id"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      fn_index[st.ColumnInt64(0)] = fns.size();
      fns.push_back(FunctionInfo{st.ColumnText(1), st.ColumnText(2), st.ColumnText(3),
                                 st.ColumnText(4), st.ColumnText(5),
                                 static_cast<std::uint32_t>(st.ColumnInt64(6))});
    }
  }
  // Function call edges (caller symbol, callee symbol, definitions of the name) and file edges.
  std::vector<std::pair<std::size_t, std::size_t>> fn_edges;
  std::map<std::pair<std::string, std::string>, std::pair<std::string, double>> file_edges;
  auto add_file_edge = [&](const std::string& from, const std::string& to, const char* kind,
                           double w) {
    if (from == to) return;
    auto [it, inserted] = file_edges.try_emplace({from, to}, kind, 0.0);
    // One edge per file pair: includes/imports outrank calls as the recorded kind.
    if (!inserted && it->second.first == "calls" && std::string_view(kind) != "calls") {
      it->second.first = kind;
    }
    it->second.second += w;
  };
  {
    ASSIGN_OR_RETURN(
        base::Statement st,
        db.Prepare(fmt::format(
            "WITH defs AS (SELECT name, count(*) AS n FROM symbols WHERE kind IN ('function', "
            "'method') GROUP BY name HAVING count(*) <= {}) "
            "SELECT c.caller_id, s.id, d.n FROM calls c JOIN defs d ON d.name = c.callee "
            "JOIN symbols s ON s.name = c.callee AND s.kind IN ('function', 'method') "
            "WHERE c.caller_id IS NOT NULL ORDER BY c.id, s.id",
            kMaxDefinitionsPerName)));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      auto a = fn_index.find(st.ColumnInt64(0));
      auto b = fn_index.find(st.ColumnInt64(1));
      if (a == fn_index.end() || b == fn_index.end()) continue;
      fn_edges.emplace_back(a->second, b->second);
      add_file_edge(fns[a->second].path, fns[b->second].path, "calls",
                    1.0 / static_cast<double>(std::max<std::int64_t>(1, st.ColumnInt64(2))));
    }
  }
  // Includes and imports.
  const IncludeResolver resolver = IncludeResolver::Load(root);
  stats.include_source = resolver.source();
  stats.include_note = resolver.note();
  {
    ASSIGN_OR_RETURN(base::Statement st,
                     db.Prepare("SELECT f.path, i.module FROM imports i JOIN files f ON f.id = "
                                "i.file_id ORDER BY i.id"));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      const std::string from = st.ColumnText(0);
      const std::string module = st.ColumnText(1);
      if (IsCLike(language[from])) {
        if (std::optional<std::string> to = resolver.Resolve(from, module, paths)) {
          add_file_edge(from, *to, "includes", 1);
        }
      } else if (std::optional<std::string> to = ResolveImport(from, module, paths)) {
        add_file_edge(from, *to, "imports", 1);
      }
    }
  }
  // PageRank of files and functions.
  std::vector<std::string> file_list(paths.begin(), paths.end());
  std::map<std::string, std::size_t> file_pos;
  for (std::size_t i = 0; i < file_list.size(); ++i) file_pos[file_list[i]] = i;
  std::vector<std::pair<std::size_t, std::size_t>> fe;
  for (const auto& [key, v] : file_edges) {
    auto a = file_pos.find(key.first), b = file_pos.find(key.second);
    if (a != file_pos.end() && b != file_pos.end()) fe.emplace_back(a->second, b->second);
  }
  const std::vector<double> file_rank = rank::PageRank(file_list.size(), fe);
  const std::vector<double> fn_rank = rank::PageRank(fns.size(), fn_edges);

  // Pattern packs.
  std::vector<StoredPack> packs;
  std::vector<PatternGroup> groups = MinePatterns(fns);
  if (groups.size() > kMaxPatterns) groups.resize(kMaxPatterns);
  for (const PatternGroup& g : groups) {
    StoredPack p;
    p.pack_type = "pattern_context";
    p.target_id = g.target_id;
    p.pack_id = store::PackIdFor(p.pack_type, p.target_id);
    p.summary = CutAtWord(
        fmt::format("{} {}s in {} files share this shape: names starting with `{}`, {} parameter{}",
                    g.members.size(), g.kind, g.files, g.leading_word, g.parameters,
                    g.parameters == 1 ? "" : "s"));
    std::string words_text = g.leading_word + " pattern " + g.kind;
    std::set<std::string> member_files;
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      const FunctionInfo* f = g.members[i];
      words_text += " " + f->name;
      if (i < kMaxPatternFacts) {
        p.key_facts.push_back(fmt::format("`{}` in {} line {}: {}{}", f->name, f->path,
                                          f->start_line, f->name, f->signature));
      }
      if (member_files.insert(f->path).second) {
        if (p.related_files.size() < 6) p.related_files.push_back(f->path);
        p.triggers.push_back(Trigger{f->path, sha[f->path]});
      }
    }
    if (g.members.size() > kMaxPatternFacts) {
      p.key_facts.push_back(fmt::format("and {} more", g.members.size() - kMaxPatternFacts));
    }
    p.signal = 0.6;
    p.words = extract::AllWordsText(words_text, 4096);
    p.created_at = now;
    p.run_id = std::string(run_id);
    packs.push_back(std::move(p));
  }
  stats.patterns = groups.size();
  // Decision packs.
  for (const std::string& path : paths) {
    if (!IsAdrPath(path)) continue;
    std::optional<std::string> text = ReadWorkspaceFile(root, path);
    if (!text) continue;
    const Adr adr = ParseAdr(path, *text, paths);
    StoredPack p;
    p.pack_type = "decision_context";
    p.target_id = "adr:" + path;
    p.pack_id = store::PackIdFor(p.pack_type, p.target_id);
    p.summary = CutAtWord(adr.decision.empty() ? adr.title : adr.title + ": " + adr.decision);
    p.key_facts.push_back(fmt::format("decision record {}: {}", path, adr.title));
    if (!adr.status.empty()) p.key_facts.push_back("status: " + adr.status);
    if (!adr.date.empty()) p.key_facts.push_back("date: " + adr.date);
    if (!adr.decision.empty()) p.key_facts.push_back("decision: " + adr.decision);
    if (!adr.files.empty()) {
      std::vector<std::string> shown(
          adr.files.begin(), adr.files.begin() + std::min<std::size_t>(8, adr.files.size()));
      p.key_facts.push_back(fmt::format("names files: {}{}", fmt::join(shown, ", "),
                                        adr.files.size() > shown.size() ? ", …" : ""));
    }
    p.related_files.push_back(path);
    p.triggers.push_back(Trigger{path, sha[path]});
    for (const std::string& f : adr.files) {
      if (p.related_files.size() < 6) p.related_files.push_back(f);
      p.triggers.push_back(Trigger{f, sha[f]});
    }
    p.signal = adr.status.rfind("accepted", 0) == 0 ? 0.7 : 0.5;
    p.words = extract::AllWordsText(fmt::format("decision adr {} {} {} {}", adr.title, adr.decision,
                                                adr.status, fmt::join(adr.files, " ")),
                                    4096);
    p.created_at = now;
    p.run_id = std::string(run_id);
    packs.push_back(std::move(p));
    ++stats.decisions;
  }

  // Write everything in one transaction.
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  RETURN_IF_ERROR(db.Exec(
      "DELETE FROM meta WHERE key = 'packs_dirty'; DELETE FROM file_edges; DELETE FROM ranks; "
      "DELETE FROM pack_triggers WHERE pack_id IN (SELECT pack_id FROM packs WHERE pack_type IN "
      "('pattern_context', 'decision_context', 'function_context', 'module_context')); "
      "DELETE FROM packs WHERE pack_type IN ('pattern_context', 'decision_context', "
      "'function_context', 'module_context')"));
  {
    ASSIGN_OR_RETURN(base::Statement ins,
                     db.Prepare("INSERT INTO file_edges(from_path, to_path, kind, weight) VALUES "
                                "(?1, ?2, ?3, ?4)"));
    for (const auto& [key, v] : file_edges) {
      ins.Reset();
      RETURN_IF_ERROR(ins.Bind(1, std::string_view(key.first)));
      RETURN_IF_ERROR(ins.Bind(2, std::string_view(key.second)));
      RETURN_IF_ERROR(ins.Bind(3, std::string_view(v.first)));
      RETURN_IF_ERROR(ins.Bind(4, v.second));
      ASSIGN_OR_RETURN(bool row, ins.Step());
      (void)row;
      ++stats.file_edges;
      if (v.first == "includes") ++stats.include_edges;
    }
  }
  {
    ASSIGN_OR_RETURN(base::Statement ins,
                     db.Prepare("INSERT OR REPLACE INTO ranks(target_id, rank) VALUES (?1, ?2)"));
    auto put = [&](const std::string& id, double r) -> Status {
      ins.Reset();
      RETURN_IF_ERROR(ins.Bind(1, std::string_view(id)));
      RETURN_IF_ERROR(ins.Bind(2, r));
      ASSIGN_OR_RETURN(bool row, ins.Step());
      (void)row;
      ++stats.ranked;
      return Status::Ok();
    };
    for (std::size_t i = 0; i < file_list.size(); ++i) {
      RETURN_IF_ERROR(put("mod:" + file_list[i], file_rank[i]));
    }
    for (std::size_t i = 0; i < fns.size(); ++i) RETURN_IF_ERROR(put(fns[i].target_id, fn_rank[i]));
  }
  {
    ASSIGN_OR_RETURN(PackWriter writer, PackWriter::Create(db));
    for (const StoredPack& p : packs) RETURN_IF_ERROR(writer.Write(p));
  }
  // Function and module packs after the ranks, which order a module's definitions.
  ASSIGN_OR_RETURN(stats.file_packs, StoreFilePacks(db, nullptr, run_id));
  RETURN_IF_ERROR(tx.Commit());
  return stats;
}

Result<std::size_t> StoreFilePacksFor(store::Store& store, const std::vector<std::string>& paths,
                                      std::string_view run_id) {
  base::Database& db = store.db();
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  ASSIGN_OR_RETURN(std::size_t n, StoreFilePacks(db, &paths, run_id));
  RETURN_IF_ERROR(tx.Commit());
  return n;
}

Result<std::size_t> StoreFilePacks(base::Database& db, const std::vector<std::string>* paths,
                                   std::string_view run_id) {
  const std::string now = base::NowRfc3339();
  ASSIGN_OR_RETURN(PackWriter writer, PackWriter::Create(db));
  struct FileRow {
    std::int64_t id = 0;
    std::string path, sha256, language, extractor;
    bool parse_error = false;
  };
  std::vector<FileRow> files;
  {
    const std::string sql = fmt::format(
        "SELECT id, path, sha256, language, extractor, parse_error FROM files WHERE status IN "
        "('indexed', 'unchanged', 'timed_out'){} ORDER BY path",
        paths != nullptr ? " AND (path = ?1 OR (path >= ?1 || '/' AND path < ?1 || '0'))" : "");
    ASSIGN_OR_RETURN(base::Statement st, db.Prepare(sql));
    const std::size_t rounds = paths != nullptr ? paths->size() : 1;
    for (std::size_t i = 0; i < rounds; ++i) {
      st.Reset();
      if (paths != nullptr) RETURN_IF_ERROR(st.Bind(1, std::string_view((*paths)[i])));
      for (;;) {
        ASSIGN_OR_RETURN(bool row, st.Step());
        if (!row) break;
        files.push_back(FileRow{st.ColumnInt64(0), st.ColumnText(1), st.ColumnText(2),
                                st.ColumnText(3), st.ColumnText(4), st.ColumnInt64(5) != 0});
      }
    }
  }
  ASSIGN_OR_RETURN(base::Statement syms_st,
                   db.Prepare("SELECT s.id, s.target_id, s.name, s.qualified_name, s.kind, "
                              "s.start_line, s.end_line, s.signature, s.doc, s.parse_error, "
                              "s.end_known, coalesce(p.kind, ''), coalesce(r.rank, 0) FROM "
                              "symbols s LEFT JOIN symbols p ON p.id = s.parent_id LEFT JOIN "
                              "ranks r ON r.target_id = s.target_id WHERE s.file_id = ?1 ORDER "
                              "BY s.ordinal"));
  ASSIGN_OR_RETURN(base::Statement calls_st,
                   db.Prepare("SELECT caller_id, callee FROM calls WHERE file_id = ?1 AND "
                              "caller_id IS NOT NULL ORDER BY id"));
  ASSIGN_OR_RETURN(base::Statement sites_st,
                   db.Prepare("SELECT f.path FROM calls c JOIN files f ON f.id = c.file_id WHERE "
                              "c.callee = ?1 LIMIT 200"));
  ASSIGN_OR_RETURN(base::Statement defs_st,
                   db.Prepare("SELECT f.path FROM symbols s JOIN files f ON f.id = s.file_id "
                              "WHERE s.name = ?1 ORDER BY f.path, s.start_line LIMIT 3"));
  ASSIGN_OR_RETURN(base::Statement imports_st,
                   db.Prepare("SELECT module FROM imports WHERE file_id = ?1 ORDER BY id"));
  ASSIGN_OR_RETURN(base::Statement importers_st,
                   db.Prepare("SELECT from_path FROM file_edges WHERE to_path = ?1 AND kind IN "
                              "('includes', 'imports') ORDER BY from_path"));
  // Call sites (files, at most 200 sites) and definition files of a name, read once per name.
  std::unordered_map<std::string, std::vector<std::string>> sites_of, defs_of;
  auto read_paths = [](base::Statement& st, auto key, std::vector<std::string>& out) -> Status {
    st.Reset();
    RETURN_IF_ERROR(st.Bind(1, key));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      out.push_back(st.ColumnText(0));
    }
    return Status::Ok();
  };
  std::size_t stored = 0;
  for (const FileRow& file : files) {
    const bool tree_sitter = file.extractor.rfind("tree-sitter", 0) == 0;
    const bool ctags = file.extractor.rfind("ctags", 0) == 0;
    struct Sym {
      std::int64_t id = 0;
      std::string target_id, name, qualified_name, kind, signature, doc, parent_kind;
      std::uint32_t start_line = 0, end_line = 0;
      bool parse_error = false, end_known = true;
      double rank = 0;
    };
    std::vector<Sym> syms;
    syms_st.Reset();
    RETURN_IF_ERROR(syms_st.Bind(1, file.id));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, syms_st.Step());
      if (!row) break;
      Sym s;
      s.id = syms_st.ColumnInt64(0);
      s.target_id = syms_st.ColumnText(1);
      s.name = syms_st.ColumnText(2);
      s.qualified_name = syms_st.ColumnText(3);
      s.kind = syms_st.ColumnText(4);
      s.start_line = static_cast<std::uint32_t>(syms_st.ColumnInt64(5));
      s.end_line = static_cast<std::uint32_t>(syms_st.ColumnInt64(6));
      s.signature = syms_st.ColumnText(7);
      s.doc = syms_st.ColumnText(8);
      s.parse_error = syms_st.ColumnInt64(9) != 0;
      s.end_known = syms_st.ColumnInt64(10) != 0;
      s.parent_kind = syms_st.ColumnText(11);
      s.rank = syms_st.ColumnDouble(12);
      syms.push_back(std::move(s));
    }
    std::unordered_map<std::int64_t, std::vector<std::string>> callees;
    calls_st.Reset();
    RETURN_IF_ERROR(calls_st.Bind(1, file.id));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, calls_st.Step());
      if (!row) break;
      std::vector<std::string>& v = callees[calls_st.ColumnInt64(0)];
      std::string callee = calls_st.ColumnText(1);
      if (std::find(v.begin(), v.end(), callee) == v.end()) v.push_back(std::move(callee));
    }
    const std::vector<Trigger> triggers = {Trigger{file.path, file.sha256}};
    auto add_related = [](std::vector<std::string>& related, const std::string& path) {
      if (related.size() < 6 && std::find(related.begin(), related.end(), path) == related.end()) {
        related.push_back(path);
      }
    };
    std::size_t functions = 0;
    std::size_t types = 0;
    for (const Sym& s : syms) {
      if (s.target_id.rfind("type:", 0) == 0) ++types;
      if (s.target_id.rfind("fn:", 0) != 0) continue;
      // As the query's direct packs and the manifest: the first kMaxFunctionPacksPerFile.
      if (++functions > store::kMaxFunctionPacksPerFile) continue;
      StoredPack p;
      p.pack_type = "function_context";
      p.target_id = s.target_id;
      p.pack_id = store::PackIdFor(p.pack_type, p.target_id);
      p.summary = CutAtWord(
          !s.doc.empty() ? s.doc
                         : fmt::format("{} {} in {}{}", s.kind, s.qualified_name, file.path,
                                       s.signature.empty() ? std::string() : ": " + s.signature));
      p.key_facts.push_back(fmt::format("{} `{}` is defined in {} lines {}-{}", s.kind,
                                        s.qualified_name, file.path, s.start_line, s.end_line));
      if (!s.signature.empty()) p.key_facts.push_back("signature: " + s.signature);
      if (!s.doc.empty()) p.key_facts.push_back("documented as: " + s.doc);
      p.related_files.push_back(file.path);
      if (auto c = callees.find(s.id); c != callees.end() && !c->second.empty()) {
        std::vector<std::string> shown(
            c->second.begin(), c->second.begin() + std::min<std::size_t>(8, c->second.size()));
        p.key_facts.push_back(fmt::format("calls: {}{}", fmt::join(shown, ", "),
                                          c->second.size() > shown.size() ? ", …" : ""));
        for (const std::string& callee : shown) {
          auto [it, fresh] = defs_of.try_emplace(callee);
          if (fresh) RETURN_IF_ERROR(read_paths(defs_st, std::string_view(callee), it->second));
          for (const std::string& path : it->second) add_related(p.related_files, path);
        }
      }
      auto [sites, fresh] = sites_of.try_emplace(s.name);
      if (fresh) RETURN_IF_ERROR(read_paths(sites_st, std::string_view(s.name), sites->second));
      if (!sites->second.empty()) {
        const std::set<std::string> caller_files(sites->second.begin(), sites->second.end());
        for (const std::string& path : caller_files) add_related(p.related_files, path);
        p.key_facts.push_back(fmt::format(
            "name `{}` is called at {}{} sites in {} files (matched by name, not resolved)", s.name,
            sites->second.size() >= 200 ? "at least " : "", sites->second.size(),
            caller_files.size()));
      }
      if (s.parse_error) p.key_facts.push_back("the definition's span has parse errors");
      p.signal = tree_sitter ? (s.parse_error ? 0.7 : 0.9)
                 : ctags     ? (s.end_known ? 0.6 : 0.5)
                             : 0.5;
      p.words = extract::AllWordsText(
          fmt::format("{} {} {} {} {}", s.qualified_name, s.signature, s.doc, file.path, s.kind),
          4096);
      p.triggers = triggers;
      p.created_at = now;
      p.run_id = std::string(run_id);
      RETURN_IF_ERROR(writer.Write(p));
      ++stored;
    }
    // The module pack: top definitions (file level or directly in a namespace) by PageRank.
    std::vector<const Sym*> by_rank;
    for (const Sym& s : syms) {
      if (s.kind != "namespace" && (s.parent_kind.empty() || s.parent_kind == "namespace")) {
        by_rank.push_back(&s);
      }
    }
    std::stable_sort(by_rank.begin(), by_rank.end(),
                     [](const Sym* a, const Sym* b) { return a->rank > b->rank; });
    std::vector<std::string> top;
    for (const Sym* s : by_rank) {
      if (top.size() < 8 && std::find(top.begin(), top.end(), s->name) == top.end()) {
        top.push_back(s->name);
      }
    }
    StoredPack m;
    m.pack_type = "module_context";
    m.target_id = "mod:" + file.path;
    m.pack_id = store::PackIdFor(m.pack_type, m.target_id);
    m.summary = CutAtWord(
        top.empty() ? fmt::format("module {}", file.path)
                    : fmt::format("module {}: defines {}", file.path, fmt::join(top, ", ")));
    m.key_facts.push_back(fmt::format("{} defines {} functions or methods and {} types", file.path,
                                      functions, types));
    m.key_facts.push_back(fmt::format("{} file extracted by {}",
                                      file.language.empty() ? "unknown" : file.language,
                                      file.extractor.empty() ? "nothing" : file.extractor));
    std::vector<std::string> imports;
    RETURN_IF_ERROR(read_paths(imports_st, file.id, imports));
    if (!imports.empty()) {
      std::vector<std::string> shown(imports.begin(),
                                     imports.begin() + std::min<std::size_t>(8, imports.size()));
      m.key_facts.push_back(fmt::format("imports: {}{}", fmt::join(shown, ", "),
                                        imports.size() > shown.size() ? ", …" : ""));
    }
    m.related_files.push_back(file.path);
    std::vector<std::string> importers;
    RETURN_IF_ERROR(read_paths(importers_st, std::string_view(file.path), importers));
    for (const std::string& path : importers) add_related(m.related_files, path);
    if (!importers.empty()) {
      m.key_facts.push_back(fmt::format("included or imported by {} files", importers.size()));
    }
    m.signal = tree_sitter ? (file.parse_error ? 0.6 : 0.8) : ctags ? 0.6 : 0.5;
    std::string names;
    for (const Sym& s : syms) names += " " + s.name;
    m.words = extract::AllWordsText(file.path + names, 4096);
    m.triggers = triggers;
    m.created_at = now;
    m.run_id = std::string(run_id);
    RETURN_IF_ERROR(writer.Write(m));
    ++stored;
  }
  return stored;
}

Result<std::vector<StoredPack>> LoadValid(store::Store& store, std::string_view pack_type,
                                          std::size_t limit) {
  ASSIGN_OR_RETURN(
      base::Statement st,
      store.db().Prepare(
          "SELECT p.pack_id, p.pack_type, p.target_id, p.summary, p.key_facts, p.related_files, "
          "p.signal, p.words, p.version, p.created_at, p.run_id, "
          "coalesce(o.access_count, 0), coalesce(o.success_count, 0), "
          "coalesce(o.failure_count, 0), coalesce(o.last_outcome, ''), "
          "coalesce(o.updated_at, '') FROM packs p LEFT JOIN pack_outcomes o ON o.pack_id = "
          "p.pack_id WHERE p.pack_type = ?1 AND NOT EXISTS (SELECT 1 FROM pack_triggers t "
          "LEFT JOIN files f ON f.path = t.path WHERE t.pack_id = p.pack_id AND (f.sha256 IS "
          "NULL OR f.sha256 != t.sha256)) ORDER BY p.pack_id LIMIT ?2"));
  RETURN_IF_ERROR(st.Bind(1, pack_type));
  RETURN_IF_ERROR(st.Bind(2, static_cast<std::int64_t>(limit)));
  std::vector<StoredPack> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    StoredPack p;
    p.pack_id = st.ColumnText(0);
    p.pack_type = st.ColumnText(1);
    p.target_id = st.ColumnText(2);
    p.summary = st.ColumnText(3);
    Json facts = Json::parse(st.ColumnText(4), nullptr, false);
    Json related = Json::parse(st.ColumnText(5), nullptr, false);
    if (facts.is_array()) {
      for (const Json& f : facts) {
        if (f.is_string()) p.key_facts.push_back(f.get<std::string>());
      }
    }
    if (related.is_array()) {
      for (const Json& f : related) {
        if (f.is_string()) p.related_files.push_back(f.get<std::string>());
      }
    }
    p.signal = st.ColumnDouble(6);
    p.words = st.ColumnText(7);
    p.version = static_cast<int>(st.ColumnInt64(8));
    p.created_at = st.ColumnText(9);
    p.run_id = st.ColumnText(10);
    p.outcome = Outcome{st.ColumnInt64(11), st.ColumnInt64(12), st.ColumnInt64(13),
                        st.ColumnText(14), st.ColumnText(15)};
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::optional<Outcome>> GetOutcome(base::Database& db, std::string_view pack_id) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT access_count, success_count, failure_count, last_outcome, "
                              "updated_at FROM pack_outcomes WHERE pack_id = ?1"));
  RETURN_IF_ERROR(st.Bind(1, pack_id));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<Outcome>();
  return std::optional<Outcome>(Outcome{st.ColumnInt64(0), st.ColumnInt64(1), st.ColumnInt64(2),
                                        st.ColumnText(3), st.ColumnText(4)});
}

Status RecordVerification(base::Database& db, std::string_view pack_id, bool verified) {
  ASSIGN_OR_RETURN(
      base::Statement st,
      db.Prepare("INSERT INTO pack_outcomes(pack_id, access_count, success_count, failure_count, "
                 "last_outcome, updated_at) VALUES (?1, 0, ?2, ?3, ?4, ?5) ON CONFLICT(pack_id) "
                 "DO UPDATE SET success_count = success_count + ?2, failure_count = "
                 "failure_count + ?3, last_outcome = ?4, updated_at = ?5"));
  RETURN_IF_ERROR(st.Bind(1, pack_id));
  RETURN_IF_ERROR(st.Bind(2, verified ? 1 : 0));
  RETURN_IF_ERROR(st.Bind(3, verified ? 0 : 1));
  RETURN_IF_ERROR(st.Bind(4, std::string_view(verified ? "verified" : "defeated")));
  const std::string now = base::NowRfc3339();
  RETURN_IF_ERROR(st.Bind(5, std::string_view(now)));
  ASSIGN_OR_RETURN(bool row, st.Step());
  (void)row;
  return Status::Ok();
}

Result<std::int64_t> RecordEpisode(base::Database& db, const Episode& episode,
                                   std::string_view agent, int busy_timeout_ms) {
  const bool short_wait = busy_timeout_ms != 5000;
  if (short_wait) {
    RETURN_IF_ERROR(db.Exec(fmt::format("PRAGMA busy_timeout = {}", std::max(0, busy_timeout_ms))));
  }
  Result<std::int64_t> id = RecordEpisodeLocked(db, episode, agent);
  if (short_wait) RETURN_IF_ERROR(db.Exec("PRAGMA busy_timeout = 5000"));
  return id;
}

Result<std::int64_t> RecordEpisodeLocked(base::Database& db, const Episode& episode,
                                         std::string_view agent) {
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  ledger::Entry e;
  e.kind = ledger::EntryKind::kEpisode;
  e.agent = std::string(agent);
  e.activity = "query";
  e.payload = Json{{"intent", episode.intent}, {"intentType", episode.intent_type},
                   {"depth", episode.depth},   {"packIds", episode.pack_ids},
                   {"files", episode.files},   {"targetIds", episode.target_ids}};
  ASSIGN_OR_RETURN(std::int64_t id, ledger::Append(db, e));
  const std::string now = base::NowRfc3339();
  ASSIGN_OR_RETURN(
      base::Statement st,
      db.Prepare("INSERT INTO pack_outcomes(pack_id, access_count, success_count, failure_count, "
                 "last_outcome, updated_at) VALUES (?1, 1, 0, 0, '', ?2) ON CONFLICT(pack_id) DO "
                 "UPDATE SET access_count = access_count + 1, updated_at = ?2"));
  for (const std::string& pack_id : episode.pack_ids) {
    st.Reset();
    RETURN_IF_ERROR(st.Bind(1, std::string_view(pack_id)));
    RETURN_IF_ERROR(st.Bind(2, std::string_view(now)));
    ASSIGN_OR_RETURN(bool row, st.Step());
    (void)row;
  }
  RETURN_IF_ERROR(tx.Commit());
  return id;
}

Result<std::vector<Episode>> RecentEpisodes(base::Database& db, std::size_t limit) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT id, recorded_at, payload FROM ledger WHERE kind = "
                              "'episode' ORDER BY id DESC LIMIT ?1"));
  RETURN_IF_ERROR(st.Bind(1, static_cast<std::int64_t>(limit)));
  std::vector<Episode> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    Json j = Json::parse(st.ColumnText(2), nullptr, false);
    if (!j.is_object()) continue;
    Episode e;
    e.id = st.ColumnInt64(0);
    e.recorded_at = st.ColumnText(1);
    auto text = [&](const char* key) {
      return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
    };
    auto list = [&](const char* key) {
      std::vector<std::string> v;
      if (j.contains(key) && j[key].is_array()) {
        for (const Json& s : j[key]) {
          if (s.is_string()) v.push_back(s.get<std::string>());
        }
      }
      return v;
    };
    e.intent = text("intent");
    e.intent_type = text("intentType");
    e.depth = text("depth");
    e.pack_ids = list("packIds");
    e.files = list("files");
    e.target_ids = list("targetIds");
    if (!e.intent.empty()) out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> Dependents(base::Database& db,
                                                                    std::string_view path) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT from_path, kind FROM file_edges WHERE to_path = ?1 ORDER "
                              "BY from_path LIMIT 1000"));
  RETURN_IF_ERROR(st.Bind(1, path));
  std::vector<std::pair<std::string, std::string>> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.emplace_back(st.ColumnText(0), st.ColumnText(1));
  }
  return out;
}

Result<std::unordered_map<std::string, double>> Ranks(base::Database& db,
                                                      std::span<const std::string> ids) {
  std::unordered_map<std::string, double> out;
  if (ids.empty()) return out;
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT target_id, rank FROM ranks WHERE target_id IN (SELECT "
                              "value FROM json_each(?1))"));
  const std::string arr = Dump(Json(std::vector<std::string>(ids.begin(), ids.end())));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(arr)));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out[st.ColumnText(0)] = st.ColumnDouble(1);
  }
  return out;
}

Result<std::unordered_map<std::string, double>> FileFunctionRanks(base::Database& db,
                                                                  std::string_view path) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT r.target_id, r.rank FROM symbols s JOIN files f ON f.id = "
                              "s.file_id JOIN ranks r ON r.target_id = s.target_id WHERE f.path "
                              "= ?1"));
  RETURN_IF_ERROR(st.Bind(1, path));
  std::unordered_map<std::string, double> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out[st.ColumnText(0)] = st.ColumnDouble(1);
  }
  return out;
}

}  // namespace trove::librarian::packs

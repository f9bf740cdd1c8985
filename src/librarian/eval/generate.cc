#include "librarian/eval/generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/hash.h"
#include "librarian/crawl/crawler.h"
#include "librarian/crawl/glob.h"
#include "librarian/extract/extract.h"

namespace trove::librarian::eval {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr std::uint64_t kMaxFileBytes = 1 << 20;  // the crawler's default size cap

bool IsSpaceOrTab(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; }

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && IsSpaceOrTab(s.front())) s.remove_prefix(1);
  return s;
}
std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && IsSpaceOrTab(s.back())) s.remove_suffix(1);
  return s;
}

// Line starts of `content` (0-based index i -> byte offset of line i + 1).
std::vector<std::uint32_t> LineStarts(std::string_view content) {
  std::vector<std::uint32_t> starts = {0};
  for (std::size_t i = 0; i < content.size(); ++i) {
    if (content[i] == '\n' && i + 1 < content.size()) {
      starts.push_back(static_cast<std::uint32_t>(i + 1));
    }
  }
  return starts;
}

// Skips a Python string literal starting at `i` (at its quote); returns the index after it,
// or npos when unterminated.
std::size_t SkipPyString(std::string_view s, std::size_t i) {
  char q = s[i];
  bool triple = i + 2 < s.size() && s[i + 1] == q && s[i + 2] == q;
  std::size_t j = i + (triple ? 3 : 1);
  while (j < s.size()) {
    char c = s[j];
    if (c == '\\') {
      j += 2;
      continue;
    }
    if (triple) {
      if (c == q && j + 2 < s.size() + 0 && s[j + 1] == q && s[j + 2] == q) return j + 3;
    } else {
      if (c == q) return j + 1;
      if (c == '\n') return std::string_view::npos;
    }
    ++j;
  }
  return std::string_view::npos;
}

bool IsPyStringPrefix(char c) {
  return c == 'r' || c == 'R' || c == 'u' || c == 'U' || c == 'b' || c == 'B' || c == 'f' ||
         c == 'F';
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> PythonDocstring(std::string_view s,
                                                                       std::size_t i) {
  // The header runs to the first ':' outside brackets and strings.
  int depth = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '"' || c == '\'') {
      std::size_t e = SkipPyString(s, i);
      if (e == std::string_view::npos) return std::nullopt;
      i = e - 1;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ':' && depth == 0) break;
  }
  if (i >= s.size()) return std::nullopt;
  ++i;
  // Skip whitespace, newlines and comment lines.
  for (;;) {
    while (i < s.size() && (IsSpaceOrTab(s[i]) || s[i] == '\n')) ++i;
    if (i < s.size() && s[i] == '#') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    break;
  }
  std::size_t begin = i;
  while (i < s.size() && i - begin < 2 && IsPyStringPrefix(s[i])) ++i;
  if (i >= s.size() || (s[i] != '"' && s[i] != '\'')) return std::nullopt;
  std::size_t end = SkipPyString(s, i);
  if (end == std::string_view::npos) return std::nullopt;
  return std::make_pair(static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end));
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> CommentAbove(std::string_view s,
                                                                    std::uint32_t start_line) {
  std::vector<std::uint32_t> starts = LineStarts(s);
  auto line_text = [&](std::size_t line) {  // 1-based, without the newline
    std::size_t b = starts[line - 1];
    std::size_t e = line < starts.size() ? starts[line] : s.size();
    std::string_view t = s.substr(b, e - b);
    if (!t.empty() && t.back() == '\n') t.remove_suffix(1);
    return t;
  };
  if (start_line < 2 || start_line > starts.size()) return std::nullopt;
  std::size_t line = start_line - 1;
  // Attribute, decorator and template lines sit between a doc comment and its definition.
  while (line >= 1) {
    std::string_view t = TrimLeft(line_text(line));
    if (t.rfind("#[", 0) == 0 || t.rfind("@", 0) == 0 || t.rfind("template", 0) == 0) {
      --line;
      continue;
    }
    break;
  }
  std::optional<std::uint32_t> begin, end;
  while (line >= 1) {
    std::string_view raw = line_text(line);
    std::string_view t = TrimRight(TrimLeft(raw));
    std::uint32_t line_start = starts[line - 1];
    if (t.size() >= 2 && t.substr(t.size() - 2) == "*/") {
      if (!end) end = line_start + static_cast<std::uint32_t>(TrimRight(raw).size());
      // Up to the line holding the opening "/*".
      std::size_t l = line;
      std::size_t open = std::string_view::npos;
      for (;;) {
        std::string_view lt = line_text(l);
        // On the closing line itself, "/*" must come before its "*/".
        std::size_t limit = l == line ? TrimRight(lt).size() - 2 : lt.size();
        open = lt.substr(0, limit).rfind("/*");
        if (open != std::string_view::npos) break;
        if (l == 1) return std::nullopt;
        --l;
      }
      begin = starts[l - 1] + static_cast<std::uint32_t>(open);
      line = l - 1;
      if (TrimLeft(line_text(l)).rfind("/*", 0) != 0) break;  // code before the comment
      continue;
    }
    if (t.rfind("//", 0) == 0) {
      if (!end) end = line_start + static_cast<std::uint32_t>(TrimRight(raw).size());
      begin = line_start + static_cast<std::uint32_t>(raw.size() - TrimLeft(raw).size());
      --line;
      continue;
    }
    break;
  }
  if (!begin || !end || *end <= *begin) return std::nullopt;
  return std::make_pair(*begin, *end);
}

Result<std::string> ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Io(fmt::format("{}: cannot open", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::Io(fmt::format("{}: read failed", path.string()));
  return ss.str();
}

Result<std::vector<crawl::Glob>> CompileGlobs(const std::vector<std::string>& patterns,
                                              std::string_view where) {
  std::vector<crawl::Glob> out;
  for (const std::string& p : patterns) {
    Result<crawl::Glob> g = crawl::Glob::Compile(p);
    if (!g.ok()) return std::move(g).status().WithContext(where);
    out.push_back(std::move(*g));
  }
  return out;
}

// The repo's kept files, sorted.
Result<std::vector<std::string>> ListRepoFiles(const fs::path& root, const SourceRepo& repo) {
  ASSIGN_OR_RETURN(std::vector<crawl::Glob> include,
                   CompileGlobs(repo.include, fmt::format("repos.{}.include", repo.name)));
  // The crawler's default excludes (dist/, build/, *.min.js, ...) too: bootstrap would never
  // index those files, so they can be neither targets nor distractors.
  std::vector<std::string> excludes = repo.exclude;
  for (std::string_view d : crawl::DefaultExcludes()) {
    std::string pattern(d);
    if (!pattern.empty() && pattern.back() == '/') pattern = "**/" + pattern + "**";
    excludes.push_back(std::move(pattern));
  }
  ASSIGN_OR_RETURN(std::vector<crawl::Glob> exclude,
                   CompileGlobs(excludes, fmt::format("repos.{}.exclude", repo.name)));
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return Status::Io(fmt::format("{}: {}", root.string(), ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Status::Io(fmt::format("{}: {}", root.string(), ec.message()));
    const fs::directory_entry& e = *it;
    std::string name = e.path().filename().string();
    if (e.is_directory(ec) && !e.is_symlink(ec)) {
      if (name == "node_modules" || name == ".git" || name == "__pycache__") {
        it.disable_recursion_pending();
      }
      continue;
    }
    if (e.is_symlink(ec) || !e.is_regular_file(ec)) continue;
    std::string rel = fs::relative(e.path(), root, ec).generic_string();
    if (ec || rel.empty()) continue;
    bool keep = include.empty();
    for (const crawl::Glob& g : include) keep = keep || g.Matches(rel, false);
    for (const crawl::Glob& g : exclude) keep = keep && !g.Matches(rel, false);
    if (!keep) continue;
    if (e.file_size(ec) > kMaxFileBytes || ec) continue;
    out.push_back(std::move(rel));
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Candidate {
  EvalTarget target;
  std::pair<std::uint32_t, std::uint32_t> doc_range;
  std::uint64_t order = 0;  // sampling key
};

}  // namespace

std::optional<std::pair<std::uint32_t, std::uint32_t>> DocCommentRange(std::string_view content,
                                                                       std::string_view language,
                                                                       std::uint32_t start_byte,
                                                                       std::uint32_t start_line) {
  if (start_byte >= content.size()) return std::nullopt;
  if (language == "python") return PythonDocstring(content, start_byte);
  return CommentAbove(content, start_line);
}

Result<std::vector<SourceRepo>> ParseSources(std::string_view json) {
  Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Malformed("sources: not a JSON object");
  auto repos = j.find("repos");
  if (repos == j.end() || !repos->is_array()) {
    return Status::Malformed("sources.repos: must be an array");
  }
  std::vector<SourceRepo> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < repos->size(); ++i) {
    const Json& r = (*repos)[i];
    std::string where = fmt::format("sources.repos[{}]", i);
    if (!r.is_object()) return Status::Malformed(where + ": must be an object");
    SourceRepo s;
    for (auto [field, dest] : {std::pair<const char*, std::string*>{"name", &s.name},
                               {"root", &s.root},
                               {"language", &s.language}}) {
      auto it = r.find(field);
      if (it == r.end() || !it->is_string() || it->get<std::string>().empty()) {
        return Status::Malformed(fmt::format("{}.{}: must be a non-empty string", where, field));
      }
      *dest = it->get<std::string>();
    }
    for (auto [field, dest] :
         {std::pair<const char*, std::vector<std::string>*>{"include", &s.include},
          {"exclude", &s.exclude}}) {
      auto it = r.find(field);
      if (it == r.end()) continue;
      if (!it->is_array())
        return Status::Malformed(fmt::format("{}.{}: must be an array", where, field));
      for (const Json& g : *it) {
        if (!g.is_string()) {
          return Status::Malformed(fmt::format("{}.{}: must hold strings", where, field));
        }
        dest->push_back(g.get<std::string>());
      }
    }
    if (auto it = r.find("cap"); it != r.end()) {
      if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0) {
        return Status::Malformed(where + ".cap: must be a positive integer");
      }
      s.cap = it->get<std::size_t>();
    }
    if (!names.insert(s.name).second) {
      return Status::Malformed(fmt::format("{}.name: '{}' used twice", where, s.name));
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<EvalSet> GenerateEvalSet(const std::vector<SourceRepo>& repos,
                                const std::string& project_dir, std::string_view sources_name,
                                GenerateStats* stats) {
  GenerateStats local;
  GenerateStats& st = stats ? *stats : local;
  EvalSet set;
  set.generator = "librarian_eval generate";
  set.sources = std::string(sources_name);
  extract::ExtractorOptions xopts;
  xopts.ctags_program = "";  // the nine tree-sitter languages only: no tool-dependent output
  xopts.timeout_ms = 0;
  ASSIGN_OR_RETURN(std::unique_ptr<extract::Extractor> extractor,
                   extract::Extractor::Create(xopts));

  for (const SourceRepo& repo : repos) {
    fs::path root =
        fs::path(repo.root).is_absolute() ? fs::path(repo.root) : fs::path(project_dir) / repo.root;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      return Status::NotFound(
          fmt::format("repos.{}.root: not a directory: {}", repo.name, root.string()));
    }
    ASSIGN_OR_RETURN(std::vector<std::string> paths, ListRepoFiles(root, repo));
    set.repos.push_back(EvalRepo{repo.name, repo.root, repo.language});
    bool has_cpp = repo.language == "cpp";

    std::vector<std::string> contents;
    std::vector<Candidate> candidates;
    std::size_t first_file = set.files.size();
    for (const std::string& rel : paths) {
      ASSIGN_OR_RETURN(std::string content, ReadAll(root / rel));
      EvalFile f;
      f.repo = repo.name;
      f.path = rel;
      f.sha256 = base::Sha256Hex(content);
      f.bytes = content.size();
      set.files.push_back(std::move(f));
      ++st.files;
      if (!IsExcludedFromTargets(rel)) {
        extract::Routing routing = extractor->Route(rel, has_cpp);
        Result<extract::FileFacts> facts = extractor->Extract(rel, content, routing);
        if (facts.ok()) {
          for (const extract::Symbol& s : facts->symbols) {
            if (!extract::IsCallable(s.kind) || s.doc.empty()) continue;
            ++st.documented_functions;
            auto range = DocCommentRange(content, facts->language, s.start_byte, s.start_line);
            if (!range) continue;
            std::string want = NormalizeWords(s.doc);
            if (want.empty() || NormalizeWords(std::string_view(content).substr(
                                                   range->first, range->second - range->first))
                                        .find(want) == std::string::npos) {
              continue;
            }
            ++st.located;
            Candidate c;
            c.doc_range = *range;
            EvalTarget& t = c.target;
            t.repo = repo.name;
            t.path = rel;
            t.name = s.name;
            t.qualified = s.qualified_name;
            t.start_line = s.start_line;
            t.end_line = s.end_line;
            t.language = facts->language;
            t.split = SplitOf(repo.name, rel);
            t.doc = s.doc;
            t.query = StripIdentifiers(s.doc, s.name);
            t.query_hard = DropNameWords(t.query, s.name);
            if (CountWords(t.query) < 3 || CountWords(t.query_hard) < 1) {
              ++st.too_short;
              continue;
            }
            c.order = base::XxHash64(
                fmt::format("{}/{}::{}@{}", repo.name, rel, s.qualified_name, s.start_line), 7);
            candidates.push_back(std::move(c));
          }
        }
      }
      contents.push_back(std::move(content));
    }

    // Queries shared by several candidates name no single target.
    std::map<std::string, int> query_count;
    for (const Candidate& c : candidates) ++query_count[NormalizeWords(c.target.query)];
    std::vector<Candidate> unique;
    for (Candidate& c : candidates) {
      if (query_count[NormalizeWords(c.target.query)] > 1) {
        ++st.shared;
        continue;
      }
      unique.push_back(std::move(c));
    }
    // Deterministic sampling up to the cap.
    std::sort(unique.begin(), unique.end(), [](const Candidate& a, const Candidate& b) {
      return a.order != b.order ? a.order < b.order : a.target.qualified < b.target.qualified;
    });
    if (unique.size() > repo.cap) {
      st.sampled_out += unique.size() - repo.cap;
      unique.resize(repo.cap);
    }
    // Blank the chosen targets' doc comments.
    std::map<std::string, std::size_t> file_index;
    for (std::size_t i = first_file; i < set.files.size(); ++i) file_index[set.files[i].path] = i;
    for (const Candidate& c : unique) {
      set.files[file_index[c.target.path]].blank.push_back(c.doc_range);
    }
    std::string corpus;
    for (std::size_t i = first_file; i < set.files.size(); ++i) {
      EvalFile& f = set.files[i];
      std::sort(f.blank.begin(), f.blank.end());
      // Overlapping ranges (two definitions sharing one comment) merge.
      std::vector<std::pair<std::uint32_t, std::uint32_t>> merged;
      for (const auto& r : f.blank) {
        if (!merged.empty() && r.first <= merged.back().second) {
          merged.back().second = std::max(merged.back().second, r.second);
        } else {
          merged.push_back(r);
        }
      }
      f.blank = std::move(merged);
      corpus += NormalizeWords(BlankRanges(contents[i - first_file], f.blank));
      corpus += " | ";
    }
    // Leakage: the doc sentence must not survive anywhere in the blanked repository.
    std::vector<EvalTarget> kept;
    for (Candidate& c : unique) {
      if (corpus.find(" " + NormalizeWords(c.target.doc) + " ") != std::string::npos ||
          corpus.rfind(NormalizeWords(c.target.doc) + " ", 0) == 0) {
        ++st.leaked;
        continue;
      }
      kept.push_back(std::move(c.target));
    }
    std::sort(kept.begin(), kept.end(), [](const EvalTarget& a, const EvalTarget& b) {
      return a.path != b.path ? a.path < b.path : a.start_line < b.start_line;
    });
    for (std::size_t i = 0; i < kept.size(); ++i) {
      kept[i].qid = fmt::format("{}:{:04}", repo.name, i + 1);
      set.targets.push_back(std::move(kept[i]));
    }
  }
  st.targets = set.targets.size();
  return set;
}

}  // namespace trove::librarian::eval

#include "librarian/eval/eval_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <type_traits>

#include "base/hash.h"
#include "librarian/extract/identifier.h"

namespace trove::librarian::eval {
namespace {

using Json = nlohmann::ordered_json;

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
char Lower(char c) { return IsUpper(c) ? static_cast<char>(c - 'A' + 'a') : c; }

std::string LowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Reads a required field of a given JSON type.
template <typename T>
Status Get(const Json& j, const char* field, std::size_t line, T& out) {
  auto it = j.find(field);
  if (it == j.end())
    return Status::Malformed(fmt::format("line {}: missing field '{}'", line, field));
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) {
      return Status::Malformed(fmt::format("line {}: field '{}' must be a string", line, field));
    }
    out = it->template get<std::string>();
  } else {
    if (!it->is_number_unsigned()) {
      return Status::Malformed(
          fmt::format("line {}: field '{}' must be a non-negative integer", line, field));
    }
    auto v = it->template get<std::uint64_t>();
    if (v > std::numeric_limits<T>::max()) {
      return Status::Malformed(fmt::format("line {}: field '{}' is too large", line, field));
    }
    out = static_cast<T>(v);
  }
  return Status::Ok();
}

}  // namespace

std::string SerializeEvalSet(const EvalSet& set) {
  std::string out;
  Json head;
  head["kind"] = "set";
  head["version"] = kEvalSetVersion;
  head["generator"] = set.generator;
  head["sources"] = set.sources;
  out += Dump(head) + "\n";
  for (const EvalRepo& r : set.repos) {
    Json j;
    j["kind"] = "repo";
    j["name"] = r.name;
    j["root"] = r.root;
    j["language"] = r.language;
    out += Dump(j) + "\n";
  }
  for (const EvalFile& f : set.files) {
    Json j;
    j["kind"] = "file";
    j["repo"] = f.repo;
    j["path"] = f.path;
    j["sha256"] = f.sha256;
    j["bytes"] = f.bytes;
    Json blank = Json::array();
    for (const auto& [b, e] : f.blank) blank.push_back(Json::array({b, e}));
    j["blank"] = std::move(blank);
    out += Dump(j) + "\n";
  }
  for (const EvalTarget& t : set.targets) {
    Json j;
    j["kind"] = "query";
    j["qid"] = t.qid;
    j["repo"] = t.repo;
    j["path"] = t.path;
    j["name"] = t.name;
    j["qualified"] = t.qualified;
    j["start_line"] = t.start_line;
    j["end_line"] = t.end_line;
    j["language"] = t.language;
    j["split"] = t.split;
    j["doc"] = t.doc;
    j["query"] = t.query;
    j["query_hard"] = t.query_hard;
    out += Dump(j) + "\n";
  }
  return out;
}

Result<EvalSet> ParseEvalSet(std::string_view text) {
  EvalSet set;
  std::set<std::string> repos;
  std::map<std::pair<std::string, std::string>, std::uint64_t> files;  // -> bytes
  std::set<std::string> qids;
  bool have_head = false;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (line.empty()) continue;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return Status::Malformed(fmt::format("line {}: not a JSON object", line_no));
    }
    std::string kind;
    RETURN_IF_ERROR(Get(j, "kind", line_no, kind));
    if (!have_head && kind != "set") {
      return Status::Malformed(
          fmt::format("line {}: the first line must be of kind 'set'", line_no));
    }
    if (kind == "set") {
      if (have_head) return Status::Malformed(fmt::format("line {}: a second 'set' line", line_no));
      std::uint32_t version = 0;
      RETURN_IF_ERROR(Get(j, "version", line_no, version));
      if (version != kEvalSetVersion) {
        return Status::Malformed(fmt::format("line {}: version {} (this build reads {})", line_no,
                                             version, kEvalSetVersion));
      }
      RETURN_IF_ERROR(Get(j, "generator", line_no, set.generator));
      RETURN_IF_ERROR(Get(j, "sources", line_no, set.sources));
      have_head = true;
    } else if (kind == "repo") {
      EvalRepo r;
      RETURN_IF_ERROR(Get(j, "name", line_no, r.name));
      RETURN_IF_ERROR(Get(j, "root", line_no, r.root));
      RETURN_IF_ERROR(Get(j, "language", line_no, r.language));
      if (r.name.empty() || r.root.empty()) {
        return Status::Malformed(
            fmt::format("line {}: repo name and root must not be empty", line_no));
      }
      if (!repos.insert(r.name).second) {
        return Status::Malformed(fmt::format("line {}: repo '{}' declared twice", line_no, r.name));
      }
      set.repos.push_back(std::move(r));
    } else if (kind == "file") {
      EvalFile f;
      RETURN_IF_ERROR(Get(j, "repo", line_no, f.repo));
      RETURN_IF_ERROR(Get(j, "path", line_no, f.path));
      RETURN_IF_ERROR(Get(j, "sha256", line_no, f.sha256));
      RETURN_IF_ERROR(Get(j, "bytes", line_no, f.bytes));
      if (!repos.count(f.repo)) {
        return Status::Malformed(
            fmt::format("line {}: file of undeclared repo '{}'", line_no, f.repo));
      }
      if (f.path.empty() || f.path.front() == '/' || f.path.find("..") != std::string::npos) {
        return Status::Malformed(fmt::format(
            "line {}: file path '{}' must be relative and stay inside the repo", line_no, f.path));
      }
      auto it = j.find("blank");
      if (it == j.end() || !it->is_array()) {
        return Status::Malformed(fmt::format("line {}: field 'blank' must be an array", line_no));
      }
      std::uint64_t last_end = 0;
      for (const Json& range : *it) {
        if (!range.is_array() || range.size() != 2 || !range[0].is_number_unsigned() ||
            !range[1].is_number_unsigned()) {
          return Status::Malformed(
              fmt::format("line {}: a blank range must be [begin, end] byte offsets", line_no));
        }
        auto b = range[0].get<std::uint64_t>(), e = range[1].get<std::uint64_t>();
        if (b < last_end || e < b || e > f.bytes) {
          return Status::Malformed(
              fmt::format("line {}: blank range [{}, {}] out of order or past the file's {} bytes",
                          line_no, b, e, f.bytes));
        }
        last_end = e;
        f.blank.emplace_back(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(e));
      }
      if (!files.emplace(std::make_pair(f.repo, f.path), f.bytes).second) {
        return Status::Malformed(
            fmt::format("line {}: file '{}/{}' listed twice", line_no, f.repo, f.path));
      }
      set.files.push_back(std::move(f));
    } else if (kind == "query") {
      EvalTarget t;
      RETURN_IF_ERROR(Get(j, "qid", line_no, t.qid));
      RETURN_IF_ERROR(Get(j, "repo", line_no, t.repo));
      RETURN_IF_ERROR(Get(j, "path", line_no, t.path));
      RETURN_IF_ERROR(Get(j, "name", line_no, t.name));
      RETURN_IF_ERROR(Get(j, "qualified", line_no, t.qualified));
      RETURN_IF_ERROR(Get(j, "start_line", line_no, t.start_line));
      RETURN_IF_ERROR(Get(j, "end_line", line_no, t.end_line));
      RETURN_IF_ERROR(Get(j, "language", line_no, t.language));
      RETURN_IF_ERROR(Get(j, "split", line_no, t.split));
      RETURN_IF_ERROR(Get(j, "doc", line_no, t.doc));
      RETURN_IF_ERROR(Get(j, "query", line_no, t.query));
      RETURN_IF_ERROR(Get(j, "query_hard", line_no, t.query_hard));
      if (!files.count({t.repo, t.path})) {
        return Status::Malformed(fmt::format("line {}: query '{}' targets unlisted file '{}/{}'",
                                             line_no, t.qid, t.repo, t.path));
      }
      if (t.split != "dev" && t.split != "test") {
        return Status::Malformed(
            fmt::format("line {}: split must be 'dev' or 'test', not '{}'", line_no, t.split));
      }
      if (t.start_line == 0 || t.end_line < t.start_line) {
        return Status::Malformed(
            fmt::format("line {}: bad line range {}-{}", line_no, t.start_line, t.end_line));
      }
      if (!qids.insert(t.qid).second) {
        return Status::Malformed(fmt::format("line {}: qid '{}' used twice", line_no, t.qid));
      }
      set.targets.push_back(std::move(t));
    } else {
      return Status::Malformed(fmt::format("line {}: unknown kind '{}'", line_no, kind));
    }
  }
  if (!have_head) return Status::Malformed("empty evaluation set");
  return set;
}

std::string BlankRanges(std::string_view content,
                        const std::vector<std::pair<std::uint32_t, std::uint32_t>>& ranges) {
  std::string out(content);
  for (const auto& [b, e] : ranges) {
    std::size_t end = std::min<std::size_t>(e, out.size());
    for (std::size_t i = b; i < end; ++i) {
      if (IsAlnum(out[i])) out[i] = ' ';
    }
  }
  return out;
}

namespace {

// Removes `open`...`close` spans (inclusive); an unclosed span runs to the end.
std::string RemoveSpans(std::string_view text, std::string_view open, std::string_view close) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t b = text.find(open, pos);
    if (b == std::string_view::npos) {
      out += text.substr(pos);
      break;
    }
    out += text.substr(pos, b - pos);
    out.push_back(' ');
    std::size_t e = text.find(close, b + open.size());
    if (e == std::string_view::npos) break;
    pos = e + close.size();
  }
  return out;
}

bool LooksLikeIdentifier(std::string_view tok) {
  bool has_lower = false, has_upper = false, has_digit = false;
  for (std::size_t i = 0; i < tok.size(); ++i) {
    char c = tok[i];
    has_lower |= IsLower(c);
    has_upper |= IsUpper(c);
    has_digit |= IsDigit(c);
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == '<' || c == '>' || c == '=' ||
        c == '{' || c == '}' || c == '$' || c == '\\') {
      return true;  // calls, indexing, generics, code
    }
    bool inner = i > 0 && i + 1 < tok.size() && IsAlnum(tok[i - 1]) && IsAlnum(tok[i + 1]);
    if (inner && (c == '_' || c == '/' || c == '.' || c == ':' || c == '#')) return true;
    if (i > 0 && IsLower(tok[i - 1]) && IsUpper(c)) return true;  // camelCase
  }
  if (!tok.empty() && tok.front() == '_') return true;
  // ALL-CAPS macros: upper case with a digit or an underscore (acronyms such as URL stay).
  if (has_upper && !has_lower && (has_digit || tok.find('_') != std::string_view::npos)) {
    return true;
  }
  return false;
}

// Strips punctuation around a word, keeping inner characters.
std::string_view TrimPunct(std::string_view w) {
  while (!w.empty() && !IsAlnum(w.front()) && static_cast<unsigned char>(w.front()) < 0x80) {
    w.remove_prefix(1);
  }
  while (!w.empty() && !IsAlnum(w.back()) && static_cast<unsigned char>(w.back()) < 0x80) {
    w.remove_suffix(1);
  }
  return w;
}

std::vector<std::string_view> SplitSpace(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    std::size_t b = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    if (i > b) out.push_back(text.substr(b, i - b));
  }
  return out;
}

}  // namespace

std::string StripIdentifiers(std::string_view sentence, std::string_view name) {
  std::string text(sentence);
  // Everything from the first block tag on is parameter documentation, not the summary.
  for (std::string_view tag : {" @", ":param", ":return", ":raises", ":type", ":rtype"}) {
    std::size_t at = text.find(tag);
    if (at != std::string::npos) text.resize(at);
  }
  if (text.rfind("@", 0) == 0) text.clear();
  text = RemoveSpans(text, "{@", "}");
  text = RemoveSpans(text, "`", "`");
  std::string lower_name = LowerAscii(name);
  std::string out;
  for (std::string_view raw : SplitSpace(text)) {
    // Punctuation around a word is not part of it ("(see foo_bar)," -> "see foo_bar").
    std::string_view tok = TrimPunct(raw);
    if (tok.empty()) continue;
    if (LooksLikeIdentifier(tok)) continue;
    if (!lower_name.empty() && LowerAscii(tok) == lower_name) continue;
    if (!out.empty()) out.push_back(' ');
    out += tok;
  }
  return out;
}

std::string DropNameWords(std::string_view query, std::string_view name) {
  std::vector<std::string> parts = extract::SplitIdentifier(name);
  std::set<std::string> drop(parts.begin(), parts.end());
  drop.insert(LowerAscii(name));
  std::string out;
  for (std::string_view w : SplitSpace(query)) {
    std::string lw = LowerAscii(TrimPunct(w));
    if (drop.count(lw)) continue;
    // "parses" or "parsed" for "parse": a plural or inflection of a name word goes too.
    bool inflected = false;
    for (const std::string& d : drop) {
      if (d.size() >= 3 && lw.size() > d.size() && lw.compare(0, d.size(), d) == 0 &&
          lw.size() - d.size() <= 2) {
        inflected = true;
      }
    }
    if (inflected) continue;
    if (!out.empty()) out.push_back(' ');
    out += w;
  }
  return out;
}

std::size_t CountWords(std::string_view text) {
  std::size_t n = 0;
  for (std::string_view w : SplitSpace(text)) {
    for (char c : w) {
      if (IsUpper(c) || IsLower(c)) {
        ++n;
        break;
      }
    }
  }
  return n;
}

std::string SplitOf(std::string_view repo, std::string_view path) {
  std::string key = fmt::format("{}/{}", repo, path);
  return base::XxHash64(key, 0x5eed) % 100 < 30 ? "dev" : "test";
}

bool IsExcludedFromTargets(std::string_view path) {
  std::string p = "/" + LowerAscii(path);
  for (std::string_view dir : {"/test/",        "/tests/",
                               "/__tests__/",   "/testing/",
                               "/spec/",        "/specs/",
                               "/bench/",       "/benchmark/",
                               "/benchmarks/",  "/vendor/",
                               "/vendored/",    "/_vendor/",
                               "/third_party/", "/thirdparty/",
                               "/docs/",        "/doc/",
                               "/examples/",    "/example/",
                               "/samples/",     "/node_modules/",
                               "/fixtures/",    "/idlelib/idle_test/"}) {
    if (p.find(dir) != std::string::npos) return true;
  }
  std::size_t slash = p.rfind('/');
  std::string_view base = std::string_view(p).substr(slash + 1);
  if (base.rfind("test_", 0) == 0 || base.rfind("bench_", 0) == 0) return true;
  for (std::string_view marker : {".test.", ".spec.", "_test.", "_tests.", ".bench.", "_bench.",
                                  "_unittest.", "-test.", "-spec."}) {
    if (base.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

std::string NormalizeWords(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !IsAlnum(text[i])) ++i;
    std::size_t b = i;
    while (i < text.size() && IsAlnum(text[i])) ++i;
    if (i == b) continue;
    if (!out.empty()) out.push_back(' ');
    for (std::size_t k = b; k < i; ++k) out.push_back(Lower(text[k]));
  }
  return out;
}

}  // namespace trove::librarian::eval

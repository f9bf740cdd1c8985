#include "librarian/packs/adr.h"

#include <algorithm>
#include <cctype>

#include "librarian/packs/includes.h"

namespace trove::librarian::packs {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// "Status: Accepted", "* Status: Accepted", "**Status:** Accepted", "- **Date**: 2024-01-02":
// the value when `line` is such a field named `field` (lower-case), else "".
std::string FieldValue(std::string_view line, std::string_view field) {
  std::string_view s = Trim(line);
  while (!s.empty() && (s.front() == '*' || s.front() == '-' || s.front() == '_' ||
                        s.front() == ' ' || s.front() == '>')) {
    s.remove_prefix(1);
  }
  if (s.size() <= field.size() || Lower(s.substr(0, field.size())) != field) return {};
  s.remove_prefix(field.size());
  while (!s.empty() && (s.front() == '*' || s.front() == '_')) s.remove_prefix(1);
  if (s.empty() || s.front() != ':') return {};
  s.remove_prefix(1);
  while (!s.empty() && (s.front() == '*' || s.front() == '_' || s.front() == ' ')) {
    s.remove_prefix(1);
  }
  return std::string(Trim(s));
}

// The first sentence of `para`: up to the first ". " (or end), at most 300 bytes.
std::string FirstSentence(std::string_view para) {
  std::string s(Trim(para));
  std::size_t end = std::string::npos;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if ((s[i] == '.' || s[i] == '!' || s[i] == '?') && (s[i + 1] == ' ' || s[i + 1] == '\n')) {
      end = i + 1;
      break;
    }
  }
  if (end != std::string::npos) s.resize(end);
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  if (s.size() > 300) {
    s.resize(297);
    s += "...";
  }
  return s;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    std::string_view line = text.substr(i, j - i);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    i = j + 1;
  }
  return out;
}

// The heading text when `line` is a Markdown heading ("## Decision" -> "decision"), else "".
std::string Heading(std::string_view line, int* level) {
  std::string_view s = Trim(line);
  int n = 0;
  while (n < static_cast<int>(s.size()) && s[static_cast<std::size_t>(n)] == '#') ++n;
  if (n == 0 || n > 6 || static_cast<std::size_t>(n) >= s.size() ||
      s[static_cast<std::size_t>(n)] != ' ') {
    return {};
  }
  *level = n;
  return std::string(Trim(s.substr(static_cast<std::size_t>(n))));
}

// The paragraph starting at the first non-blank line from `i` (list markers stripped), stopping
// at a blank line or a heading.
std::string ParagraphFrom(const std::vector<std::string_view>& lines, std::size_t i) {
  while (i < lines.size() && Trim(lines[i]).empty()) ++i;
  std::string out;
  int level = 0;
  for (; i < lines.size(); ++i) {
    std::string_view l = Trim(lines[i]);
    if (l.empty() || !Heading(l, &level).empty()) {
      if (out.empty() && l.empty()) continue;  // blank lines after skipped field lines
      break;
    }
    if (!FieldValue(l, "status").empty() || !FieldValue(l, "date").empty()) continue;
    if (l.size() > 2 && (l[0] == '-' || l[0] == '*') && l[1] == ' ') l.remove_prefix(2);
    if (!out.empty()) out.push_back(' ');
    out.append(l);
  }
  return out;
}

}  // namespace

bool IsAdrPath(std::string_view path) {
  const std::string lower = Lower(path);
  if (!EndsWith(lower, ".md") && !EndsWith(lower, ".markdown")) return false;
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const std::string lname = Lower(name);
  if (lname.rfind("readme", 0) == 0 || lname.rfind("index.", 0) == 0 ||
      lname.rfind("template", 0) == 0) {
    return false;
  }
  if (name.find("ADR") != std::string_view::npos || lname.rfind("adr-", 0) == 0 ||
      lname.rfind("adr_", 0) == 0) {
    return true;
  }
  static constexpr std::string_view kDirs[] = {"adr", "adrs", "decisions", "decision-records",
                                               "architecture-decisions"};
  std::size_t i = 0;
  while (slash != std::string_view::npos && i < slash) {
    std::size_t j = std::min(lower.find('/', i), slash);
    const std::string_view seg = std::string_view(lower).substr(i, j - i);
    for (std::string_view d : kDirs) {
      if (seg == d) return true;
    }
    i = j + 1;
  }
  return false;
}

Adr ParseAdr(std::string_view path, std::string_view text, const std::set<std::string>& files) {
  Adr adr;
  adr.path = std::string(path);
  const std::vector<std::string_view> lines = Lines(text);
  std::size_t title_line = 0;
  bool have_title = false;
  std::string decision_section;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    int level = 0;
    const std::string h = Heading(lines[i], &level);
    if (!h.empty()) {
      if (!have_title) {
        adr.title = h;
        title_line = i;
        have_title = true;
        continue;
      }
      const std::string lh = Lower(h);
      if (adr.status.empty() && lh == "status")
        adr.status = Lower(FirstSentence(ParagraphFrom(lines, i + 1)));
      if (adr.date.empty() && lh == "date") adr.date = FirstSentence(ParagraphFrom(lines, i + 1));
      if (decision_section.empty() &&
          (lh == "decision" || lh.rfind("decision ", 0) == 0 || lh == "decision outcome")) {
        decision_section = ParagraphFrom(lines, i + 1);
      }
      continue;
    }
    if (adr.status.empty()) {
      if (std::string v = FieldValue(lines[i], "status"); !v.empty()) adr.status = Lower(v);
    }
    if (adr.date.empty()) {
      if (std::string v = FieldValue(lines[i], "date"); !v.empty()) adr.date = v;
    }
    // "Decision: ..." as a field line also counts.
    if (decision_section.empty()) {
      if (std::string v = FieldValue(lines[i], "decision"); !v.empty()) decision_section = v;
    }
  }
  if (!have_title) {
    const std::size_t slash = path.rfind('/');
    adr.title = std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
  }
  // A trailing period in a status ("Accepted.") is not part of it.
  while (!adr.status.empty() && (adr.status.back() == '.' || adr.status.back() == ' ')) {
    adr.status.pop_back();
  }
  adr.decision = FirstSentence(!decision_section.empty()
                                   ? decision_section
                                   : ParagraphFrom(lines, have_title ? title_line + 1 : 0));
  // Files named: tokens between back quotes, and bare whitespace-separated tokens, that are
  // indexed paths.
  auto consider = [&](std::string_view tok) {
    while (!tok.empty() &&
           std::string_view("([{<\"'`*").find(tok.front()) != std::string_view::npos) {
      tok.remove_prefix(1);
    }
    while (!tok.empty() &&
           std::string_view(")]}>\"'`*,.;:").find(tok.back()) != std::string_view::npos) {
      tok.remove_suffix(1);
    }
    if (tok.empty() ||
        (tok.find('/') == std::string_view::npos && tok.find('.') == std::string_view::npos)) {
      return;
    }
    std::string t(tok);
    if (files.count(t) == 0) {
      // A path relative to the record's own directory (Markdown links: ../../src/x.cc).
      const std::size_t slash = path.rfind('/');
      const std::string dir(slash == std::string_view::npos ? std::string_view()
                                                            : path.substr(0, slash));
      std::optional<std::string> joined = NormalizeLexically(dir.empty() ? t : dir + "/" + t);
      if (joined) t = *joined;
    }
    if (t != adr.path && files.count(t) != 0 &&
        std::find(adr.files.begin(), adr.files.end(), t) == adr.files.end() &&
        adr.files.size() < 20) {
      adr.files.push_back(t);
    }
  };
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i) {
      std::string_view tok = text.substr(i, j - i);
      // Markdown links: [label](path)
      if (std::size_t p = tok.find("]("); p != std::string_view::npos) tok = tok.substr(p + 2);
      consider(tok);
    }
    i = j;
  }
  return adr;
}

}  // namespace trove::librarian::packs

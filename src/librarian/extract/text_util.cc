#include "librarian/extract/text_util.h"

#include <string>
#include <string_view>

namespace trove::librarian::extract::internal {
namespace {
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
}  // namespace

std::string CollapseSpace(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (char c : text) {
    if (IsSpace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

std::string RemoveSpace(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (!IsSpace(c)) out.push_back(c);
  }
  return out;
}

std::string TruncateUtf8(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  // Back up over continuation bytes so no sequence is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

std::string StripQuotes(std::string text) {
  if (text.size() >= 2) {
    char a = text.front(), b = text.back();
    if ((a == '"' && b == '"') || (a == '\'' && b == '\'') || (a == '`' && b == '`') ||
        (a == '<' && b == '>')) {
      return text.substr(1, text.size() - 2);
    }
  }
  return text;
}

std::size_t LastScopeSeparator(std::string_view name) {
  int depth = 0;
  std::size_t found = std::string_view::npos;
  for (std::size_t i = 0; i + 1 < name.size(); ++i) {
    char c = name[i];
    if (c == '<') ++depth;
    if (c == '>' && depth > 0) --depth;
    if (depth == 0 && c == ':' && name[i + 1] == ':') {
      found = i;
      ++i;
    }
  }
  return found;
}

std::string StripTemplateArgs(std::string_view name) {
  // `operator<` and `operator<<` are names, not template arguments.
  if (name.substr(0, 8) == "operator") return std::string(name);
  std::size_t lt = name.find('<');
  return std::string(lt == std::string_view::npos ? name : name.substr(0, lt));
}

std::string StripComment(std::string_view c) {
  std::string out;
  std::size_t pos = 0;
  bool block = c.substr(0, 2) == "/*";
  if (block) {
    c.remove_prefix(2);
    while (!c.empty() && (c.front() == '*' || c.front() == '!')) c.remove_prefix(1);
    if (c.size() >= 2 && c.substr(c.size() - 2) == "*/") c.remove_suffix(2);
  }
  while (pos <= c.size()) {
    std::size_t eol = c.find('\n', pos);
    if (eol == std::string_view::npos) eol = c.size();
    std::string_view line = c.substr(pos, eol - pos);
    while (!line.empty() && IsSpace(line.front())) line.remove_prefix(1);
    if (block) {
      while (!line.empty() && line.front() == '*') line.remove_prefix(1);
    } else if (line.substr(0, 2) == "//") {
      line.remove_prefix(2);
      while (!line.empty() && (line.front() == '/' || line.front() == '!')) line.remove_prefix(1);
    } else {
      while (!line.empty() && line.front() == '#') line.remove_prefix(1);
      if (line.substr(0, 2) == "--") line.remove_prefix(2);  // Lua, SQL, Haskell
    }
    out.append(line);
    out.push_back(' ');
    pos = eol + 1;
  }
  return CollapseSpace(out);
}

std::string StripDocstring(std::string_view s) {
  while (!s.empty() && std::string_view("rRuUbBfF").find(s.front()) != std::string_view::npos) {
    s.remove_prefix(1);
  }
  for (std::string_view q : {std::string_view("\"\"\""), std::string_view("'''"),
                             std::string_view("\""), std::string_view("'")}) {
    if (s.size() >= 2 * q.size() && s.substr(0, q.size()) == q &&
        s.substr(s.size() - q.size()) == q) {
      s = s.substr(q.size(), s.size() - 2 * q.size());
      break;
    }
  }
  return CollapseSpace(s);
}

std::string FirstSentence(std::string_view text) {
  std::string t = CollapseSpace(text);
  for (std::size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if ((c == '.' || c == '!' || c == '?') && (i + 1 == t.size() || t[i + 1] == ' ')) {
      t.resize(i + 1);
      break;
    }
  }
  return TruncateUtf8(std::move(t), 240);
}

LineIndex::LineIndex(std::string_view text) : text_(text) {
  if (text.empty()) return;
  starts_.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && i + 1 < text.size())
      starts_.push_back(static_cast<std::uint32_t>(i + 1));
  }
  count_ = static_cast<std::uint32_t>(starts_.size());
}

std::uint32_t LineIndex::End(std::uint32_t line) const {
  return line < count_ ? starts_[line] : static_cast<std::uint32_t>(text_.size());
}

std::string_view LineIndex::Lines(std::uint32_t first, std::uint32_t last) const {
  if (count_ == 0) return {};
  if (first < 1) first = 1;
  if (last > count_) last = count_;
  if (first > last) return {};
  return text_.substr(Start(first), End(last) - Start(first));
}

std::string_view LineIndex::LineText(std::uint32_t line) const {
  std::string_view s = Lines(line, line);
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

}  // namespace trove::librarian::extract::internal

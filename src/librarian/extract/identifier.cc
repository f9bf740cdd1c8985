#include "librarian/extract/identifier.h"

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace trove::librarian::extract {
namespace {

bool IsLower(unsigned char c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
// Non-ASCII bytes (UTF-8 sequences) behave as lower-case letters: never a split point inside.
bool IsLetter(unsigned char c) { return IsLower(c) || IsUpper(c) || c >= 0x80; }
bool IsAlnum(unsigned char c) { return IsLetter(c) || IsDigit(c); }
bool IsIdentChar(unsigned char c) { return IsAlnum(c) || c == '_'; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (IsUpper(static_cast<unsigned char>(c))) c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

void Emit(std::string_view piece, std::vector<std::string>& out) {
  if (piece.size() >= 2) out.push_back(Lower(piece));
}

// Splits one alphanumeric run.
void SplitPart(std::string_view part, std::vector<std::string>& out) {
  std::size_t start = 0;
  for (std::size_t i = 1; i < part.size(); ++i) {
    auto prev = static_cast<unsigned char>(part[i - 1]);
    auto cur = static_cast<unsigned char>(part[i]);
    bool split = false;
    if ((IsLower(prev) || prev >= 0x80) && IsUpper(cur)) {
      split = true;  // parseHttp
    } else if (IsUpper(prev) && IsUpper(cur) && i + 1 < part.size() &&
               (IsLower(static_cast<unsigned char>(part[i + 1])) ||
                static_cast<unsigned char>(part[i + 1]) >= 0x80)) {
      split = true;  // HTTPServer: before the last capital of the run
    } else if (IsLetter(prev) != IsLetter(cur)) {
      split = true;  // utf8Decode: letters <-> digits
    }
    if (split) {
      Emit(part.substr(start, i - start), out);
      start = i;
    }
  }
  Emit(part.substr(start), out);
}

}  // namespace

std::vector<std::string> SplitIdentifier(std::string_view identifier) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < identifier.size()) {
    while (i < identifier.size() && !IsAlnum(static_cast<unsigned char>(identifier[i]))) ++i;
    std::size_t start = i;
    while (i < identifier.size() && IsAlnum(static_cast<unsigned char>(identifier[i]))) ++i;
    if (i > start) SplitPart(identifier.substr(start, i - start), out);
  }
  return out;
}

std::vector<std::string> IndexWords(std::string_view identifier) {
  std::vector<std::string> out;
  std::vector<std::string> pieces = SplitIdentifier(identifier);
  // The whole identifier as FTS5's unicode61 tokenizer would see it is the alphanumeric
  // run; a name with separators ("parse_http") is already covered by its pieces.
  bool single_run = !identifier.empty();
  for (unsigned char c : identifier) single_run = single_run && IsAlnum(c);
  std::string whole = Lower(identifier);
  if (single_run && whole.size() >= 2) out.push_back(whole);
  if (pieces.size() > 1 || out.empty()) {
    for (std::string& p : pieces) {
      if (out.empty() || p != out.front()) out.push_back(std::move(p));
    }
  }
  return out;
}

std::string SubwordText(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::unordered_set<std::string_view> seen;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !IsIdentChar(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t start = i;
    while (i < text.size() && IsIdentChar(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) break;
    std::string_view ident = text.substr(start, i - start);
    if (IsDigit(static_cast<unsigned char>(ident.front())) || !seen.insert(ident).second) continue;
    std::vector<std::string> pieces = SplitIdentifier(ident);
    if (pieces.size() < 2) continue;  // the body column already holds single-word identifiers
    for (const std::string& p : pieces) {
      if (out.size() + p.size() + 1 > max_bytes) return out;
      if (!out.empty()) out.push_back(' ');
      out += p;
    }
  }
  return out;
}

}  // namespace trove::librarian::extract

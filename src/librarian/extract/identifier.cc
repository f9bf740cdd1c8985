#include "librarian/extract/identifier.h"

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trove::librarian::extract {
namespace {

constexpr bool IsLower(unsigned char c) { return c >= 'a' && c <= 'z'; }
constexpr bool IsUpper(unsigned char c) { return c >= 'A' && c <= 'Z'; }
constexpr bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
// Non-ASCII bytes (UTF-8 sequences) behave as lower-case letters: never a split point inside.
constexpr bool IsLetter(unsigned char c) { return IsLower(c) || IsUpper(c) || c >= 0x80; }
constexpr bool IsAlnum(unsigned char c) { return IsLetter(c) || IsDigit(c); }

// Byte classes for SubwordText's scan: 0 for bytes outside identifiers.
enum : std::uint8_t { kLowerClass = 1, kUpperClass = 2, kDigitClass = 4, kUnderscoreClass = 8 };
constexpr std::array<std::uint8_t, 256> kClasses = [] {
  std::array<std::uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if (IsUpper(static_cast<unsigned char>(c))) {
      t[c] = kUpperClass;
    } else if (IsDigit(static_cast<unsigned char>(c))) {
      t[c] = kDigitClass;
    } else if (c == '_') {
      t[c] = kUnderscoreClass;
    } else if (IsLetter(static_cast<unsigned char>(c))) {
      t[c] = kLowerClass;  // lower case and non-ASCII: never a split point between two
    }
  }
  return t;
}();

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (IsUpper(static_cast<unsigned char>(c))) c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Calls emit(begin, end) for every piece of one alphanumeric run, one-character pieces
// included, in order.
template <typename Emit>
void ForEachPiece(std::string_view part, Emit&& emit) {
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
      emit(start, i);
      start = i;
    }
  }
  emit(start, part.size());
}

// Calls emit(begin, end) for every piece of at least two characters of `identifier`: the
// pieces of its alphanumeric runs, in order.
template <typename Emit>
void ForEachWord(std::string_view identifier, Emit&& emit) {
  std::size_t i = 0;
  while (i < identifier.size()) {
    while (i < identifier.size() && !IsAlnum(static_cast<unsigned char>(identifier[i]))) ++i;
    std::size_t start = i;
    while (i < identifier.size() && IsAlnum(static_cast<unsigned char>(identifier[i]))) ++i;
    if (i > start) {
      ForEachPiece(identifier.substr(start, i - start), [&](std::size_t b, std::size_t e) {
        if (e - b >= 2) emit(start + b, start + e);
      });
    }
  }
}

// A set of identifiers (views into one text), open addressing; for SubwordText, which used a
// std::unordered_set and spent most of its time allocating its nodes.
class ViewSet {
 public:
  // Inserts `key` (not empty); false if it was present.
  bool Insert(std::string_view key) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      std::string_view& slot = slots_[i];
      if (slot.empty()) {
        slot = key;
        ++size_;
        return true;
      }
      if (slot == key) return false;
    }
  }

 private:
  static std::size_t Hash(std::string_view key) {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
    for (char c : key) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
  void Grow() {
    std::vector<std::string_view> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, std::string_view());
    size_ = 0;
    for (std::string_view key : old) {
      if (!key.empty()) Insert(key);
    }
  }

  std::vector<std::string_view> slots_;
  std::size_t size_ = 0;
};

}  // namespace

std::vector<std::string> SplitIdentifier(std::string_view identifier) {
  std::vector<std::string> out;
  ForEachWord(identifier, [&](std::size_t b, std::size_t e) {
    out.push_back(Lower(identifier.substr(b, e - b)));
  });
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

std::string AllWordsText(std::string_view text, std::size_t max_bytes) {
  std::string out;
  std::set<std::string> seen;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && kClasses[static_cast<unsigned char>(text[i])] == 0) ++i;
    const std::size_t start = i;
    while (i < text.size() && kClasses[static_cast<unsigned char>(text[i])] != 0) ++i;
    if (i == start) break;
    for (std::string& w : IndexWords(text.substr(start, i - start))) {
      if (seen.count(w) != 0) continue;
      if (out.size() + w.size() + (out.empty() ? 0 : 1) > max_bytes) return out;
      seen.insert(w);
      if (!out.empty()) out += ' ';
      out += w;
    }
  }
  return out;
}

std::string SubwordText(std::string_view text, std::size_t max_bytes) {
  std::string out;
  ViewSet seen;
  std::vector<std::pair<std::size_t, std::size_t>> words;  // of the current identifier
  std::size_t i = 0;
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  while (i < text.size()) {
    while (i < text.size() && kClasses[bytes[i]] == 0) ++i;
    std::size_t start = i;
    unsigned classes = 0;
    for (; i < text.size(); ++i) {
      unsigned c = kClasses[bytes[i]];
      if (c == 0) break;
      classes |= c;
    }
    if (i == start) break;
    std::string_view ident = text.substr(start, i - start);
    if (IsDigit(static_cast<unsigned char>(ident.front()))) continue;
    // Lower-case letters and non-ASCII bytes alone are one word at most.
    if ((classes & (kUpperClass | kDigitClass | kUnderscoreClass)) == 0) continue;
    words.clear();
    ForEachWord(ident, [&](std::size_t b, std::size_t e) { words.emplace_back(b, e); });
    // The body column already holds single-word identifiers. Only identifiers with words here
    // need remembering: a repeat of any other one yields nothing again.
    if (words.size() < 2 || !seen.Insert(ident)) continue;
    for (const auto& [b, e] : words) {
      if (out.size() + (e - b) + 1 > max_bytes) return out;
      if (!out.empty()) out.push_back(' ');
      for (std::size_t k = b; k < e; ++k) {
        char c = ident[k];
        out.push_back(IsUpper(static_cast<unsigned char>(c)) ? static_cast<char>(c - 'A' + 'a')
                                                             : c);
      }
    }
  }
  return out;
}

}  // namespace trove::librarian::extract

// Internal text helpers shared by the extractors: whitespace, quotes, comments, UTF-8-safe
// truncation and a line index.
// Thread safety: pure functions; a LineIndex is immutable once built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trove::librarian::extract::internal {

// Runs of whitespace become one space; leading and trailing whitespace goes.
std::string CollapseSpace(std::string_view text);
// Removes all whitespace ("ns :: Widget" -> "ns::Widget").
std::string RemoveSpace(std::string_view text);
// Cuts `text` to at most `max_bytes` without splitting a UTF-8 sequence.
std::string TruncateUtf8(std::string text, std::size_t max_bytes);
// Strips one pair of matching quotes ('', "", ``) or angle brackets (<stdio.h>).
std::string StripQuotes(std::string text);
// Returns the position of the last "::" outside <...>, or npos.
std::size_t LastScopeSeparator(std::string_view name);
// "vector<int>" -> "vector".
std::string StripTemplateArgs(std::string_view name);
// Returns comment text without markers (//, ///, //!, /* */, /** */, leading * and #),
// whitespace collapsed.
std::string StripComment(std::string_view comment);
// Returns a Python string literal's contents (prefixes and triple quotes removed),
// whitespace collapsed.
std::string StripDocstring(std::string_view literal);
// Returns the first sentence of `text` (up to and including the first '.', '!' or '?' that is
// followed by whitespace or the end), at most 240 bytes.
std::string FirstSentence(std::string_view text);

// Byte offsets of line starts; lines are 1-based.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  // Number of lines; a final line without a newline counts, an empty text has 0.
  std::uint32_t count() const { return count_; }
  // Byte offset where `line` starts. REQUIRES: 1 <= line <= count().
  std::uint32_t Start(std::uint32_t line) const { return starts_[line - 1]; }
  // Byte offset just past `line` (its newline included). REQUIRES: 1 <= line <= count().
  std::uint32_t End(std::uint32_t line) const;
  // Returns the text of lines first..last (inclusive, clamped), newlines included.
  std::string_view Lines(std::uint32_t first, std::uint32_t last) const;
  // Returns line `line` without its newline.
  std::string_view LineText(std::uint32_t line) const;

 private:
  std::string_view text_;
  std::vector<std::uint32_t> starts_;
  std::uint32_t count_ = 0;
};

}  // namespace trove::librarian::extract::internal

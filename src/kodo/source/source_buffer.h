// SourceBuffer: the text and name of one Kōdo source file, plus the byte-offset locations
// (SourceRange) that every later phase uses. Line and column are computed only on demand, from
// a line-start table built once when the buffer is created (docs/kodo.md §4.1, §6.2).
// Thread safety: a SourceBuffer is immutable after Create; any number of threads may read it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::kodo {

// Identifies one SourceBuffer among those a compilation uses; assigned by the caller.
using FileId = std::uint32_t;

// A half-open byte range [begin, end) in one file. Offsets are 32-bit, as upstream's spans are
// (docs/kodo.md §4.1), so a file is at most 4 GiB - 1 bytes long (SourceBuffer::Create enforces
// it).
struct SourceRange {
  FileId file = 0;
  std::uint32_t begin = 0;
  std::uint32_t end = 0;

  std::uint32_t size() const { return end - begin; }
  bool empty() const { return begin == end; }
  friend bool operator==(const SourceRange&, const SourceRange&) = default;
};

// A 1-based line and column. The column counts Unicode scalar values from the start of the line
// (docs/kodo.md §4.1: "the column counts Unicode scalar values"; §6.2: "column in characters"), not
// bytes. Decision for invalid UTF-8: each byte that is not a UTF-8 continuation byte (10xxxxxx)
// counts as one column, which equals the scalar-value count for valid text and needs no decoder.
struct LineColumn {
  std::uint32_t line = 1;
  std::uint32_t column = 1;
  friend bool operator==(const LineColumn&, const LineColumn&) = default;
};

class SourceBuffer {
 public:
  // The largest text a SourceBuffer can hold: offsets, including the one-past-the-end offset,
  // must fit in uint32.
  static constexpr std::size_t kMaxBytes = 0xFFFFFFFEu;

  // Returns a buffer holding `text` under `name` (a path as given, for messages).
  // Fails with kResourceExhausted when `text` is longer than `max_bytes` (capped at kMaxBytes).
  static Result<SourceBuffer> Create(FileId id, std::string name, std::string text,
                                     std::size_t max_bytes = kMaxBytes);

  FileId id() const { return id_; }
  const std::string& name() const { return name_; }
  std::string_view text() const { return text_; }
  std::uint32_t size() const { return static_cast<std::uint32_t>(text_.size()); }

  // Returns the text covered by `range`. REQUIRES: range.file == id(), range within the text.
  std::string_view Text(SourceRange range) const;

  // Returns the range [begin, end) in this file. REQUIRES: begin <= end <= size().
  SourceRange Range(std::uint32_t begin, std::uint32_t end) const;

  // Returns the 1-based line and column of byte `offset`. Lines end at '\n' (a "\r\n" ending
  // leaves '\r' as the line's last character). An offset inside a multi-byte character maps to
  // that character's column. REQUIRES: offset <= size().
  LineColumn Locate(std::uint32_t offset) const;

  // Returns the number of lines (a final line without '\n' counts; an empty file has one).
  std::uint32_t line_count() const { return static_cast<std::uint32_t>(line_starts_.size()); }

 private:
  SourceBuffer(FileId id, std::string name, std::string text);

  FileId id_;
  std::string name_;
  std::string text_;
  std::vector<std::uint32_t> line_starts_;  // byte offset of each line's first byte; [0] == 0
};

}  // namespace trove::kodo

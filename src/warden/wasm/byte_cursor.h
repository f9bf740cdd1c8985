// ByteCursor: a bounded reader over one span of a wasm module. Every read names what it reads,
// so an error says where (the absolute byte offset, in hex and decimal) and what: "offset
// 0x1f4 (500): function body: size 4096 exceeds the 1200 bytes left in the code section". LEB128
// reads never pass the end and reject encodings longer than their width allows or with unused bits
// set (after wabt's src/leb128.cc). Take() returns a sub-cursor bounded to a section or body, so
// section code cannot overrun its section by construction. Thread safety: a value type; one thread
// uses a cursor at a time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace trove::warden::wasm {

class ByteCursor {
 public:
  // `bytes` must outlive the cursor and every cursor taken from it. `base_offset` is the
  // absolute offset of bytes[0] in the module; `name` names the span in errors ("module").
  explicit ByteCursor(std::span<const std::uint8_t> bytes, std::uint64_t base_offset = 0,
                      std::string_view name = "module");

  // Each read returns kMalformed, with the offset and `what`, when the bytes run out or the
  // encoding is invalid. ReadU8, ReadVarU32 and ReadVarS32 take the common case (a byte
  // present; a one-byte LEB128) inline: the reader calls them for nearly every instruction.
  Result<std::uint8_t> ReadU8(std::string_view what) {
    if (pos_ < bytes_.size()) return bytes_[pos_++];
    return ReadU8Slow(what);
  }
  Result<std::uint32_t> ReadFixedU32(std::string_view what);  // little-endian, 4 bytes
  Result<std::uint64_t> ReadFixedU64(std::string_view what);  // little-endian, 8 bytes
  Result<std::uint32_t> ReadVarU32(std::string_view what) {
    if (pos_ < bytes_.size() && bytes_[pos_] < 0x80) return bytes_[pos_++];
    return ReadVarU32Slow(what);
  }
  Result<std::uint64_t> ReadVarU64(std::string_view what);
  Result<std::int32_t> ReadVarS32(std::string_view what) {
    if (pos_ < bytes_.size() && bytes_[pos_] < 0x80) {
      const std::uint8_t byte = bytes_[pos_++];
      return (byte & 0x40) ? static_cast<std::int32_t>(byte) - 0x80 : byte;  // sign bit 6
    }
    return ReadVarS32Slow(what);
  }
  Result<std::int64_t> ReadVarS33(std::string_view what);  // block types
  Result<std::int64_t> ReadVarS64(std::string_view what);
  // Returns the next `size` bytes.
  Result<std::span<const std::uint8_t>> ReadBytes(std::uint64_t size, std::string_view what);
  // Reads a vec(byte) that must be valid UTF-8.
  Result<std::string_view> ReadName(std::string_view what);
  // Reads a vector count and checks it against the bytes left (each item takes at least
  // `min_item_bytes`), so a caller may reserve that many items without trusting the input.
  Result<std::uint32_t> ReadCount(std::string_view what, std::uint64_t min_item_bytes = 1);
  // Returns a cursor over the next `size` bytes, named `what`, and skips them here.
  Result<ByteCursor> Take(std::uint64_t size, std::string_view what);

  // Returns kMalformed "offset 0x<at> (<at>): <what>: <detail>".
  static Status Malformed(std::uint64_t at, std::string_view what, std::string_view detail);
  // Returns "offset 0x<at> (<at>)", the hex and decimal offset every reader error begins with
  // (docs/warden.md §4.5).
  static std::string Location(std::uint64_t at);

  // Absolute offset of the next byte.
  std::uint64_t offset() const { return base_offset_ + pos_; }
  std::uint64_t remaining() const { return bytes_.size() - pos_; }
  bool empty() const { return pos_ == bytes_.size(); }
  std::string_view name() const { return name_; }
  // Bytes not yet read.
  std::span<const std::uint8_t> rest() const { return bytes_.subspan(pos_); }
  // Moves past `n` bytes of rest(), for a caller that decoded them itself (n is clamped to
  // what is left, so the cursor stays bounded).
  void Skip(std::size_t n) { pos_ += std::min(n, bytes_.size() - pos_); }

 private:
  Result<std::uint8_t> ReadU8Slow(std::string_view what);
  Result<std::uint32_t> ReadVarU32Slow(std::string_view what);
  Result<std::int32_t> ReadVarS32Slow(std::string_view what);
  Result<std::uint64_t> ReadLeb(std::string_view what, int bits, bool is_signed);

  std::span<const std::uint8_t> bytes_;
  std::uint64_t base_offset_;
  std::string_view name_;
  std::size_t pos_ = 0;
};

// Returns true when `text` is valid UTF-8 (no overlongs, surrogates or values past U+10FFFF).
bool IsValidUtf8(std::string_view text);

}  // namespace trove::warden::wasm

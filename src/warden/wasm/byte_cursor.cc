#include "warden/wasm/byte_cursor.h"

#include <fmt/format.h>

#include <string>

namespace trove::warden::wasm {

ByteCursor::ByteCursor(std::span<const std::uint8_t> bytes, std::uint64_t base_offset,
                       std::string_view name)
    : bytes_(bytes), base_offset_(base_offset), name_(name) {}

Status ByteCursor::Malformed(std::uint64_t at, std::string_view what, std::string_view detail) {
  return Status::Malformed(fmt::format("{}: {}: {}", Location(at), what, detail));
}

std::string ByteCursor::Location(std::uint64_t at) {
  return fmt::format("offset {:#x} ({})", at, at);
}

Result<std::uint8_t> ByteCursor::ReadU8Slow(std::string_view what) {
  if (empty()) return Malformed(offset(), what, fmt::format("unexpected end of {}", name_));
  return bytes_[pos_++];
}

Result<std::uint32_t> ByteCursor::ReadFixedU32(std::string_view what) {
  ASSIGN_OR_RETURN(auto bytes, ReadBytes(4, what));
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | bytes[static_cast<std::size_t>(i)];
  return value;
}

Result<std::uint64_t> ByteCursor::ReadFixedU64(std::string_view what) {
  ASSIGN_OR_RETURN(auto bytes, ReadBytes(8, what));
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | bytes[static_cast<std::size_t>(i)];
  return value;
}

// An N-bit LEB128 takes at most ceil(N/7) bytes. In the last byte only the low N - 7*(max-1)
// bits carry value: for an unsigned value the rest must be zero, for a signed one they must
// all equal the sign bit (the wasm spec's "unused bits" rule).
Result<std::uint64_t> ByteCursor::ReadLeb(std::string_view what, int bits, bool is_signed) {
  const std::uint64_t start = offset();
  const int max_bytes = (bits + 6) / 7;
  const int last_bits = bits - 7 * (max_bytes - 1);
  std::uint64_t result = 0;
  int shift = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (empty()) {
      return Malformed(start, what, fmt::format("LEB128 runs past the end of the {}", name_));
    }
    const std::uint8_t byte = bytes_[pos_++];
    const std::uint64_t payload = byte & 0x7f;
    if (i == max_bytes - 1) {
      if (byte & 0x80) {
        return Malformed(start, what, fmt::format("LEB128 longer than {} bytes", max_bytes));
      }
      if (is_signed) {
        const std::uint8_t mask = static_cast<std::uint8_t>((0x7f << (last_bits - 1)) & 0x7f);
        if ((byte & mask) != 0 && (byte & mask) != mask) {
          return Malformed(start, what, fmt::format("signed LEB128 overflows {} bits", bits));
        }
      } else if ((payload >> last_bits) != 0) {
        return Malformed(start, what, fmt::format("LEB128 overflows {} bits", bits));
      }
    }
    result |= payload << shift;
    shift += 7;
    if (!(byte & 0x80)) {
      if (is_signed && shift < 64 && (byte & 0x40)) result |= ~std::uint64_t{0} << shift;
      break;
    }
  }
  return result;
}

Result<std::uint32_t> ByteCursor::ReadVarU32Slow(std::string_view what) {
  ASSIGN_OR_RETURN(std::uint64_t v, ReadLeb(what, 32, false));
  return static_cast<std::uint32_t>(v);
}

Result<std::uint64_t> ByteCursor::ReadVarU64(std::string_view what) {
  return ReadLeb(what, 64, false);
}

Result<std::int32_t> ByteCursor::ReadVarS32Slow(std::string_view what) {
  ASSIGN_OR_RETURN(std::uint64_t v, ReadLeb(what, 32, true));
  return static_cast<std::int32_t>(static_cast<std::int64_t>(v));
}

Result<std::int64_t> ByteCursor::ReadVarS33(std::string_view what) {
  ASSIGN_OR_RETURN(std::uint64_t v, ReadLeb(what, 33, true));
  return static_cast<std::int64_t>(v);
}

Result<std::int64_t> ByteCursor::ReadVarS64(std::string_view what) {
  ASSIGN_OR_RETURN(std::uint64_t v, ReadLeb(what, 64, true));
  return static_cast<std::int64_t>(v);
}

Result<std::span<const std::uint8_t>> ByteCursor::ReadBytes(std::uint64_t size,
                                                            std::string_view what) {
  if (size > remaining()) {
    return Malformed(
        offset(), what,
        fmt::format("size {} exceeds the {} bytes left in the {}", size, remaining(), name_));
  }
  auto out = bytes_.subspan(pos_, static_cast<std::size_t>(size));
  pos_ += static_cast<std::size_t>(size);
  return out;
}

Result<std::string_view> ByteCursor::ReadName(std::string_view what) {
  ASSIGN_OR_RETURN(std::uint32_t size, ReadVarU32(what));
  const std::uint64_t at = offset();
  ASSIGN_OR_RETURN(auto bytes, ReadBytes(size, what));
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (!IsValidUtf8(text)) return Malformed(at, what, "name is not valid UTF-8");
  return text;
}

Result<std::uint32_t> ByteCursor::ReadCount(std::string_view what, std::uint64_t min_item_bytes) {
  const std::uint64_t at = offset();
  ASSIGN_OR_RETURN(std::uint32_t count, ReadVarU32(what));
  if (min_item_bytes > 0 && count > remaining() / min_item_bytes) {
    return Malformed(at, what,
                     fmt::format("count {} exceeds what the {} bytes left in the {} can hold",
                                 count, remaining(), name_));
  }
  return count;
}

Result<ByteCursor> ByteCursor::Take(std::uint64_t size, std::string_view what) {
  const std::uint64_t at = offset();
  ASSIGN_OR_RETURN(auto bytes, ReadBytes(size, what));
  return ByteCursor(bytes, at, what);
}

bool IsValidUtf8(std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int len = 0;
    std::uint32_t cp = 0;
    if ((c & 0xe0) == 0xc0) {
      len = 2;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (n - i < static_cast<std::size_t>(len)) return false;
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += static_cast<std::size_t>(len);
  }
  return true;
}

}  // namespace trove::warden::wasm

// Hex and Base64 (declared in hash.h). Kept apart from hash.cc so that a binary using only
// these does not load libcrypto (about 1.4 MiB of resident memory).
#include <fmt/core.h>

#include <array>
#include <cstdint>

#include "base/hash.h"

namespace trove::base {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";
constexpr char kStdAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kUrlAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

using DecodeTable = std::array<std::int8_t, 256>;

// Returns the table from a byte to its 6-bit value, -1 for bytes outside `alphabet`.
constexpr DecodeTable MakeDecodeTable(const char* alphabet) {
  DecodeTable table{};
  for (auto& entry : table) entry = -1;
  for (int i = 0; i < 64; ++i)
    table[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  return table;
}

constexpr DecodeTable kStdDecode = MakeDecodeTable(kStdAlphabet);
constexpr DecodeTable kUrlDecode = MakeDecodeTable(kUrlAlphabet);

std::string Base64EncodeWith(std::string_view data, const char* alphabet, bool pad) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(data[i])) << 16 |
                      static_cast<std::uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8 |
                      static_cast<unsigned char>(data[i + 2]);
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    out += alphabet[v >> 6 & 63];
    out += alphabet[v & 63];
  }
  const std::size_t rest = data.size() - i;
  if (rest > 0) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(data[i])) << 16;
    if (rest == 2) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(data[i + 1])) << 8;
    out += alphabet[v >> 18 & 63];
    out += alphabet[v >> 12 & 63];
    if (rest == 2) out += alphabet[v >> 6 & 63];
    if (pad) out.append(3 - rest, '=');
  }
  return out;
}

// Returns 'c' for a printable character, else its code in hex ("0x0a").
std::string DescribeChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("0x{:02x}", u);
}

Result<std::string> Base64DecodeWith(std::string_view text, const DecodeTable& table, bool padded,
                                     std::string_view name) {
  std::size_t data_len = text.size();
  if (padded) {
    if (text.size() % 4 != 0) {
      return Status::Malformed(
          fmt::format("{}: length {} is not a multiple of 4", name, text.size()));
    }
    if (data_len > 0 && text[data_len - 1] == '=') --data_len;
    if (data_len > 0 && text[data_len - 1] == '=') --data_len;
  } else if (text.size() % 4 == 1) {
    return Status::Malformed(
        fmt::format("{}: length {} cannot be unpadded base64", name, text.size()));
  }
  std::string out;
  out.reserve(data_len / 4 * 3 + 2);
  std::uint32_t buffer = 0;
  int bits = 0;
  for (std::size_t i = 0; i < data_len; ++i) {
    const std::int8_t v = table[static_cast<unsigned char>(text[i])];
    if (v < 0) {
      return Status::Malformed(
          fmt::format("{}: offset {}: invalid character {}", name, i, DescribeChar(text[i])));
    }
    buffer = (buffer << 6 | static_cast<std::uint32_t>(v)) & 0xfff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>(buffer >> bits & 0xff);
    }
  }
  if ((buffer & ((1u << bits) - 1)) != 0) {
    return Status::Malformed(fmt::format(
        "{}: offset {}: non-zero unused bits in the last character", name, data_len - 1));
  }
  return out;
}

}  // namespace

std::string ToHex(std::span<const std::uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::uint8_t b : bytes) {
    out += kHexDigits[b >> 4];
    out += kHexDigits[b & 0xf];
  }
  return out;
}

std::string ToHex(std::string_view bytes) {
  return ToHex(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

std::string Base64Encode(std::string_view data) {
  return Base64EncodeWith(data, kStdAlphabet, /*pad=*/true);
}

Result<std::string> Base64Decode(std::string_view text) {
  return Base64DecodeWith(text, kStdDecode, /*padded=*/true, "base64");
}

std::string Base64UrlEncode(std::string_view data) {
  return Base64EncodeWith(data, kUrlAlphabet, /*pad=*/false);
}

Result<std::string> Base64UrlDecode(std::string_view text) {
  return Base64DecodeWith(text, kUrlDecode, /*padded=*/false, "base64url");
}

}  // namespace trove::base

#include "warden/kb/columns.h"

#include <charconv>
#include <nlohmann/json.hpp>

namespace trove::warden::kb::internal {

namespace {

using nlohmann::json;

// True when nlohmann's dump writes `text` between the quotes unchanged: printable ASCII
// other than the quote and the backslash.
bool PlainJsonString(std::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  }
  return true;
}

// The same text as json(values).dump(-1, ' ', false, replace), written directly when every
}  // namespace

// string is plain (nearly always: 22k functions of an ingest go through here five times).
std::string ToJson(const std::vector<std::string>& values) {
  std::size_t size = 2;
  for (const std::string& v : values) {
    if (!PlainJsonString(v)) {
      return json(values).dump(-1, ' ', false, json::error_handler_t::replace);
    }
    size += v.size() + 3;
  }
  std::string out;
  out.reserve(size);
  out += '[';
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ',';
    out += '"';
    out += values[i];
    out += '"';
  }
  out += ']';
  return out;
}

// The same text as json(values).dump().
std::string ToJson(const std::vector<std::uint32_t>& values) {
  std::string out;
  out.reserve(2 + values.size() * 11);
  out += '[';
  char digits[16];
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out += ',';
    out.append(digits, std::to_chars(digits, digits + sizeof(digits), values[i]).ptr);
  }
  out += ']';
  return out;
}

// Parses a JSON array of strings written by ToJson; anything else reads as empty. The compact
// form ToJson writes for plain strings is read directly (loading a version reads five such
// columns per function); any other text goes through nlohmann's parser, with the same result.
std::vector<std::string> StringsFromJson(std::string_view text) {
  std::vector<std::string> out;
  if (text == "[]") return out;
  // The fast path: '[' "plain" (',' "plain")* ']'.
  bool fast = text.size() >= 4 && text.front() == '[' && text.back() == ']';
  for (std::size_t i = 1; fast && i + 1 < text.size();) {
    if (text[i] != '"') {
      fast = false;
      break;
    }
    const std::size_t end = text.find('"', i + 1);
    if (end == std::string_view::npos || end + 1 >= text.size() ||
        !PlainJsonString(text.substr(i + 1, end - i - 1))) {
      fast = false;
      break;
    }
    out.emplace_back(text.substr(i + 1, end - i - 1));
    i = end + 1;
    if (text[i] == ',' && i + 2 < text.size()) {
      ++i;
    } else if (i + 1 != text.size()) {
      fast = false;
    }
  }
  if (fast) return out;
  out.clear();
  const json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_array()) return out;
  for (const json& v : parsed) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// Parses a JSON array of unsigned integers (ToJson's compact form directly, anything else with
// nlohmann's parser); values that are not unsigned integers are skipped.
std::vector<std::uint32_t> IndicesFromJson(std::string_view text) {
  std::vector<std::uint32_t> out;
  if (text == "[]") return out;
  // The fast path: '[' digits (',' digits)* ']', no leading zeros, each value a uint32.
  bool fast = text.size() >= 3 && text.front() == '[' && text.back() == ']';
  for (std::size_t i = 1; fast && i + 1 < text.size();) {
    std::uint32_t value = 0;
    const char* begin = text.data() + i;
    const char* stop = text.data() + text.size() - 1;
    const auto [ptr, ec] = std::from_chars(begin, stop, value);
    if (ec != std::errc() || ptr == begin || *begin == '+' || *begin == '-' ||
        (*begin == '0' && ptr - begin > 1)) {
      fast = false;
      break;
    }
    out.push_back(value);
    i = static_cast<std::size_t>(ptr - text.data());
    if (text[i] == ',' && i + 2 < text.size()) {
      ++i;
    } else if (i + 1 != text.size()) {
      fast = false;
    }
  }
  if (fast) return out;
  out.clear();
  const json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_array()) return out;
  for (const json& v : parsed) {
    if (v.is_number_unsigned()) out.push_back(v.get<std::uint32_t>());
  }
  return out;
}

}  // namespace trove::warden::kb::internal

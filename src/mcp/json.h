// JSON for the MCP core: nlohmann::json, parsed without exceptions and written with invalid
// UTF-8 replaced (wasm names and file contents are not always valid UTF-8).
// Thread safety: free functions; values are not shared.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace trove::mcp {

// ordered_json keeps key order, so schemas are served verbatim (docs/mcp.md §4.2).
using Json = nlohmann::ordered_json;

// Returns the compact serialization; invalid UTF-8 in strings becomes U+FFFD.
inline std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Returns the nesting depth of the JSON text (objects and arrays), scanning outside strings.
// Stops counting and returns `limit + 1` as soon as the depth exceeds `limit`.
int JsonNestingDepth(std::string_view text, int limit);

// Parses `text`; returns a discarded value (is_discarded()) on any syntax or UTF-8 error.
inline Json ParseJson(std::string_view text) {
  return Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

// Appends `text` as a JSON string literal (quoted, escaped). REQUIRES: valid UTF-8, as Dump
// produces. Faster than wrapping the text in a Json value to dump it.
void AppendJsonString(std::string& out, std::string_view text);

// Quotes a value for an error message, cut at 80 bytes ("\"L9\"", "12", "{...}").
std::string QuoteForMessage(const Json& value);

}  // namespace trove::mcp

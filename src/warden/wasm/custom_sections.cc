#include "warden/wasm/custom_sections.h"

#include <fmt/core.h>

#include <set>

#include "warden/wasm/byte_cursor.h"

namespace trove::warden::wasm {

Result<Producers> ParseProducers(std::span<const std::uint8_t> payload, std::uint64_t offset) {
  ByteCursor c(payload, offset);
  Producers producers;
  // Each field takes at least 2 bytes (an empty name, an empty vector), each value 2.
  ASSIGN_OR_RETURN(std::uint32_t fields, c.ReadCount("producers field count", 2));
  for (std::uint32_t f = 0; f < fields; ++f) {
    ProducerField field;
    ASSIGN_OR_RETURN(std::string_view name, c.ReadName("producers field name"));
    field.field = std::string(name);
    ASSIGN_OR_RETURN(std::uint32_t values, c.ReadCount("producers value count", 2));
    for (std::uint32_t v = 0; v < values; ++v) {
      ASSIGN_OR_RETURN(std::string_view value, c.ReadName("producers value name"));
      ASSIGN_OR_RETURN(std::string_view version, c.ReadName("producers value version"));
      field.values.push_back({std::string(value), std::string(version)});
    }
    producers.push_back(std::move(field));
  }
  if (!c.empty())
    return ByteCursor::Malformed(c.offset(), "producers", "bytes after the last field");
  return producers;
}

Result<std::vector<std::string>> ParseTargetFeatures(std::span<const std::uint8_t> payload,
                                                     std::uint64_t offset) {
  ByteCursor c(payload, offset);
  std::vector<std::string> features;
  ASSIGN_OR_RETURN(std::uint32_t count, c.ReadCount("target feature count", 2));
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::uint64_t at = c.offset();
    ASSIGN_OR_RETURN(std::uint8_t prefix, c.ReadU8("target feature prefix"));
    if (prefix != '+' && prefix != '-' && prefix != '=') {
      return ByteCursor::Malformed(at, "target feature prefix",
                                   fmt::format("unknown prefix {:#04x}", prefix));
    }
    ASSIGN_OR_RETURN(std::string_view name, c.ReadName("target feature name"));
    features.push_back(std::string(1, static_cast<char>(prefix)) + std::string(name));
  }
  if (!c.empty()) {
    return ByteCursor::Malformed(c.offset(), "target_features", "bytes after the last feature");
  }
  return features;
}

std::string ProducersSummary(const Producers& producers) {
  std::string out;
  std::set<std::string> seen;
  for (const ProducerField& field : producers) {
    for (const ProducerValue& v : field.values) {
      std::string item = v.version.empty() ? v.name : v.name + " " + v.version;
      if (item.empty() || !seen.insert(item).second) continue;
      out += (out.empty() ? "" : ", ") + item;
    }
  }
  return out;
}

}  // namespace trove::warden::wasm

#include "mcp/policy/scopes.h"

#include <fmt/format.h>

namespace trove::mcp::policy {

Scopes Missing(Scopes required, Scopes granted) {
  if (Allowed(required, granted)) return Scopes::None();
  return Scopes::FromBits(required.bits() & ~granted.bits());
}

Result<Scopes> ParseScopes(std::string_view text, UnknownScopes unknown) {
  Scopes out;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && text[end] != ',' && text[end] != ' ' && text[end] != '\t' &&
           text[end] != '\n' && text[end] != '\r') {
      ++end;
    }
    const std::string_view name = text.substr(i, end - i);
    bool found = false;
    for (std::size_t k = 0; k < std::size(kScopeNames); ++k) {
      if (name == kScopeNames[k]) {
        out |= Scopes::FromBits(static_cast<std::uint8_t>(1u << k));
        found = true;
        break;
      }
    }
    if (!found && unknown == UnknownScopes::kReject) {
      std::string shown(name.substr(0, 40));
      return Status::InvalidArgument(fmt::format(
          "unknown scope `{}` (expected read, write, execute, network or admin)", shown));
    }
    i = end;
  }
  return out;
}

std::string FormatScopes(Scopes scopes, std::string_view separator) {
  std::string out;
  for (std::size_t k = 0; k < std::size(kScopeNames); ++k) {
    if ((scopes.bits() & (1u << k)) == 0) continue;
    if (!out.empty()) out += separator;
    out += kScopeNames[k];
  }
  return out;
}

std::vector<std::string> ScopeNames(Scopes scopes) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < std::size(kScopeNames); ++k) {
    if ((scopes.bits() & (1u << k)) != 0) out.emplace_back(kScopeNames[k]);
  }
  return out;
}

Principal LocalPrincipal() { return Principal{.name = "local", .scopes = Scopes::All()}; }

}  // namespace trove::mcp::policy

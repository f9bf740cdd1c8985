// The one file that calls toml++ (Debian's libtomlplusplus-dev): its parse errors, which it
// throws, become Status values here (docs/conventions.md §5, one adapter per foreign error
// model).
#include "kodo/trust/config.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <utility>

namespace trove::kodo::trust {
namespace {

Result<std::vector<std::string>> StringArray(const toml::table& trust, std::string_view key,
                                             std::string_view path) {
  std::vector<std::string> out;
  const toml::node* node = trust.get(key);
  if (node == nullptr) return out;
  const toml::array* array = node->as_array();
  if (array == nullptr) {
    return Status::Malformed(fmt::format("{}: trust.{}: must be an array of strings", path, key));
  }
  for (std::size_t i = 0; i < array->size(); ++i) {
    const std::optional<std::string_view> s = (*array)[i].value<std::string_view>();
    if (!(*array)[i].is_string() || !s) {
      return Status::Malformed(fmt::format("{}: trust.{}[{}]: must be a string", path, key, i));
    }
    out.emplace_back(*s);
  }
  return out;
}

}  // namespace

Result<TrustConfig> ParseTrustConfig(std::string_view toml_text, std::string_view path) {
  toml::table root;
  try {
    root = toml::parse(toml_text, path);
  } catch (const toml::parse_error& e) {
    const toml::source_position at = e.source().begin;
    // toml++ capitalizes its messages ("Error while parsing ..."); Trove's are lower-case.
    std::string reason(e.description());
    if (!reason.empty() && reason[0] >= 'A' && reason[0] <= 'Z') {
      reason[0] = static_cast<char>(reason[0] - 'A' + 'a');
    }
    return Status::Malformed(fmt::format("{}:{}:{}: {}", path, at.line, at.column, reason));
  }
  TrustConfig config;
  const toml::node* trust_node = root.get("trust");
  if (trust_node == nullptr) return config;
  const toml::table* trust = trust_node->as_table();
  if (trust == nullptr) return Status::Malformed(fmt::format("{}: trust: must be a table", path));
  ASSIGN_OR_RETURN(config.known_agents, StringArray(*trust, "known_agents", path));
  ASSIGN_OR_RETURN(config.human_reviewers, StringArray(*trust, "human_reviewers", path));
  return config;
}

std::string TrustConfigPathFor(std::string_view source_path) {
  const std::size_t slash = source_path.rfind('/');
  if (slash == std::string_view::npos) return "kodo.toml";
  return fmt::format("{}/kodo.toml", source_path.substr(0, slash));
}

Result<std::optional<TrustConfig>> LoadTrustConfigBeside(base::Env& env,
                                                         std::string_view source_path) {
  const std::string path = TrustConfigPathFor(source_path);
  if (!env.FileExists(path)) return std::optional<TrustConfig>();
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) {
    return Status::Io(fmt::format("{}: could not read: {}", path, text.status().message()));
  }
  ASSIGN_OR_RETURN(TrustConfig config, ParseTrustConfig(*text, path));
  return std::optional<TrustConfig>(std::move(config));
}

}  // namespace trove::kodo::trust

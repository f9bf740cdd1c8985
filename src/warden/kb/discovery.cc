// Finding the KB (docs/warden.md §2.1): --db, then the project's kb.url, then the project's
// file, then the global kb.url.
#include <fmt/core.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/env.h"
#include "base/pg.h"
#include "warden/kb/kb.h"

namespace trove::warden::kb {

namespace {

std::string WithoutTrailingSlashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

// `dir`/`name` without doubling the root's slash.
std::string Join(const std::string& dir, std::string_view name) {
  return fmt::format("{}/{}", dir == "/" ? "" : dir, name);
}

// The parent of an absolute directory; empty for "/" or a relative name.
std::string Parent(const std::string& dir) {
  if (dir == "/" || dir.empty()) return {};
  const std::size_t slash = dir.rfind('/');
  if (slash == std::string::npos) return {};
  return slash == 0 ? "/" : dir.substr(0, slash);
}

}  // namespace

std::string FindProjectDir(base::Env& env, const std::string& cwd) {
  for (std::string dir = WithoutTrailingSlashes(cwd); !dir.empty(); dir = Parent(dir)) {
    if (env.FileExists(Join(dir, ".warden"))) return dir;
  }
  return {};
}

std::string GlobalConfigPath() {
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/warden/config.json";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.config/warden/config.json";
  }
  return {};
}

Result<std::optional<std::string>> ConfigKbUrl(base::Env& env, const std::string& path) {
  if (path.empty() || !env.FileExists(path)) return std::optional<std::string>();
  ASSIGN_OR_RETURN(const std::string text, env.ReadFile(path));
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return Status::Malformed(fmt::format("{}: not a JSON object", path));
  const nlohmann::json* value = nullptr;
  if (auto it = j.find("kb.url"); it != j.end()) {
    value = &*it;
  } else if (auto kb = j.find("kb"); kb != j.end() && kb->is_object()) {
    if (auto url = kb->find("url"); url != kb->end()) value = &*url;
  }
  if (value == nullptr) return std::optional<std::string>();
  if (!value->is_string() || !base::pg::IsPostgresUrl(value->get<std::string>())) {
    return Status::Malformed(
        fmt::format("{}: kb.url is not a postgresql:// or postgres:// URL", path));
  }
  return std::optional<std::string>(value->get<std::string>());
}

Result<std::string> FindDatabase(base::Env& env, const std::optional<std::string>& db_flag,
                                 const std::string& cwd) {
  if (db_flag.has_value()) return *db_flag;
  // What is local wins over what is global, as with git's config: the project's kb.url, then
  // the project's own file (or a warden.db here), and only then the global kb.url.
  const std::string project = FindProjectDir(env, cwd);
  if (!project.empty()) {
    ASSIGN_OR_RETURN(std::optional<std::string> url,
                     ConfigKbUrl(env, Join(project, ".warden/config.json")));
    if (url.has_value()) return std::move(*url);
  }
  const std::string here = WithoutTrailingSlashes(cwd);
  for (std::string dir = here; !dir.empty(); dir = Parent(dir)) {
    const std::string candidate = Join(dir, ".warden/warden.db");
    if (env.FileExists(candidate)) return candidate;
  }
  const std::string local = Join(here, "warden.db");
  if (env.FileExists(local)) return local;
  ASSIGN_OR_RETURN(std::optional<std::string> global, ConfigKbUrl(env, GlobalConfigPath()));
  if (global.has_value()) return std::move(*global);
  return Status::NotFound(std::string(kNoDatabaseMessage));
}

}  // namespace trove::warden::kb

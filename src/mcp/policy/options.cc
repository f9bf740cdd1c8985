#include "mcp/policy/options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace trove::mcp::policy {
namespace {

using Json = nlohmann::json;

std::string JoinPath(std::string_view base_dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) return path;
  std::string out(base_dir);
  if (out.back() != '/') out += '/';
  return out + path;
}

std::string DirName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Result<AuthMode> ParseAuthMode(std::string_view text) {
  if (text == "none") return AuthMode::kNone;
  if (text == "static") return AuthMode::kStatic;
  if (text == "oauth") return AuthMode::kOauth;
  return Status::InvalidArgument(
      fmt::format("unknown auth mode `{}` (expected none, static or oauth)", text.substr(0, 40)));
}

Status GetString(const Json& value, std::string_view key, std::string& out) {
  if (!value.is_string()) return Status::InvalidArgument(fmt::format("{}: must be a string", key));
  out = value.get<std::string>();
  return Status::Ok();
}

}  // namespace

std::string_view AuthModeName(AuthMode mode) {
  switch (mode) {
    case AuthMode::kNone:
      return "none";
    case AuthMode::kStatic:
      return "static";
    case AuthMode::kOauth:
      return "oauth";
  }
  return "none";
}

Result<Rate> ParseRate(std::string_view text) {
  std::string_view number = text;
  double per_minute_factor = 1;
  if (const std::size_t slash = text.find('/'); slash != std::string_view::npos) {
    number = text.substr(0, slash);
    const std::string_view unit = text.substr(slash + 1);
    if (unit == "min" || unit == "m") {
      per_minute_factor = 1;
    } else if (unit == "s" || unit == "sec") {
      per_minute_factor = 60;
    } else if (unit == "h" || unit == "hour") {
      per_minute_factor = 1.0 / 60;
    } else {
      return Status::InvalidArgument(
          fmt::format("rate `{}`: unknown unit (expected N/s, N/min or N/h)", text.substr(0, 40)));
    }
  }
  double value = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || ptr != number.data() + number.size() || !std::isfinite(value) ||
      value <= 0) {
    return Status::InvalidArgument(
        fmt::format("rate `{}`: expected a positive number such as 100/min", text.substr(0, 40)));
  }
  return Rate{.tokens_per_minute = value * per_minute_factor};
}

std::string FormatRate(Rate rate) { return fmt::format("{}/min", rate.tokens_per_minute); }

void AddPolicyFlags(CLI::App& app, PolicyFlags& flags) {
  const std::string group = "Policy";
  app.add_option("--host", flags.host, "HTTP bind address (default 127.0.0.1)")->group(group);
  app.add_option("--auth", flags.auth, "Authentication: none (loopback only), static or oauth")
      ->check(CLI::IsMember({"none", "static", "oauth"}))
      ->group(group);
  app.add_option("--token-file", flags.token_file,
                 "auth static: lines `principal scope[,scope...] sha256:<hex>|<token>`")
      ->group(group);
  app.add_option("--jwks-file", flags.jwks_file, "auth oauth: JSON Web Key Set to verify tokens")
      ->group(group);
  app.add_option("--issuer", flags.issuer, "auth oauth: the expected token issuer (iss)")
      ->group(group);
  app.add_option("--resource", flags.resource,
                 "auth oauth: this server's canonical URI (the expected aud)")
      ->group(group);
  app.add_option("--allow-root", flags.allow_roots, "A directory client paths may use (repeatable)")
      ->group(group);
  app.add_option("--audit-log", flags.audit_log, "Append a hash-chained JSON Lines audit log")
      ->group(group);
  app.add_option("--rate-limit", flags.rate_limit, "Requests per principal, e.g. 100/min")
      ->group(group);
  app.add_option("--burst", flags.burst, "Requests allowed at once (default 20)")->group(group);
  app.add_option(
         "--consent", flags.consent,
         "Pre-approve a high-risk tool (repeatable; * for all) instead of asking the client")
      ->group(group);
  app.add_option("--policy", flags.policy_file, "JSON file with these settings; flags override it")
      ->group(group);
}

Status ApplyPolicyJson(std::string_view json_text, std::string_view base_dir, PolicyOptions& into) {
  const Json doc = Json::parse(json_text.begin(), json_text.end(), nullptr,
                               /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Status::Malformed("not valid JSON");
  if (!doc.is_object()) return Status::Malformed("must be a JSON object");
  for (const auto& [key, value] : doc.items()) {
    if (key == "host") {
      RETURN_IF_ERROR(GetString(value, key, into.host));
    } else if (key == "auth") {
      std::string mode;
      RETURN_IF_ERROR(GetString(value, key, mode));
      Result<AuthMode> parsed = ParseAuthMode(mode);
      if (!parsed.ok()) return parsed.status().WithContext(key);
      into.auth = *parsed;
    } else if (key == "tokenFile" || key == "jwksFile" || key == "auditLog") {
      std::string path;
      RETURN_IF_ERROR(GetString(value, key, path));
      path = JoinPath(base_dir, path);
      if (key == "tokenFile") into.token_file = std::move(path);
      if (key == "jwksFile") into.jwks_file = std::move(path);
      if (key == "auditLog") into.audit_log = std::move(path);
    } else if (key == "issuer") {
      RETURN_IF_ERROR(GetString(value, key, into.issuer));
    } else if (key == "resource") {
      RETURN_IF_ERROR(GetString(value, key, into.resource));
    } else if (key == "allowRoots") {
      if (!value.is_array()) return Status::InvalidArgument("allowRoots: must be an array");
      std::vector<std::string> roots;
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string()) {
          return Status::InvalidArgument(fmt::format("allowRoots[{}]: must be a string", i));
        }
        roots.push_back(JoinPath(base_dir, value[i].get<std::string>()));
      }
      into.allow_roots = std::move(roots);
    } else if (key == "rateLimit") {
      if (value.is_null()) {
        into.rate_limit.reset();
      } else {
        std::string text;
        RETURN_IF_ERROR(GetString(value, key, text));
        Result<Rate> rate = ParseRate(text);
        if (!rate.ok()) return rate.status().WithContext(key);
        into.rate_limit = *rate;
      }
    } else if (key == "burst") {
      if (!value.is_number_integer()) {
        return Status::InvalidArgument("burst: must be an integer");
      }
      into.burst = value.get<std::int64_t>();
    } else if (key == "consent") {
      if (!value.is_array()) return Status::InvalidArgument("consent: must be an array");
      std::vector<std::string> names;
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string()) {
          return Status::InvalidArgument(fmt::format("consent[{}]: must be a string", i));
        }
        names.push_back(value[i].get<std::string>());
      }
      into.consent = std::move(names);
    } else {
      std::string shown = key.substr(0, 40);
      return Status::InvalidArgument(fmt::format("unknown key `{}`", shown));
    }
  }
  return Status::Ok();
}

Result<PolicyOptions> ResolvePolicyOptions(const PolicyFlags& flags, PolicyOptions defaults,
                                           base::Env& env) {
  PolicyOptions out = std::move(defaults);
  if (flags.policy_file) {
    const std::string& path = *flags.policy_file;
    Result<std::string> text = env.ReadFile(path);
    if (!text.ok()) return text.status().WithContext("--policy");
    RETURN_IF_ERROR(ApplyPolicyJson(*text, DirName(path), out).WithContext(path));
  }
  if (flags.host) out.host = *flags.host;
  if (flags.auth) {
    Result<AuthMode> mode = ParseAuthMode(*flags.auth);
    if (!mode.ok()) return mode.status().WithContext("--auth");
    out.auth = *mode;
  }
  if (flags.token_file) out.token_file = *flags.token_file;
  if (flags.jwks_file) out.jwks_file = *flags.jwks_file;
  if (flags.issuer) out.issuer = *flags.issuer;
  if (flags.resource) out.resource = *flags.resource;
  if (!flags.allow_roots.empty()) out.allow_roots = flags.allow_roots;
  if (flags.audit_log) out.audit_log = *flags.audit_log;
  if (flags.rate_limit) {
    Result<Rate> rate = ParseRate(*flags.rate_limit);
    if (!rate.ok()) return rate.status().WithContext("--rate-limit");
    out.rate_limit = *rate;
  }
  if (flags.burst) out.burst = *flags.burst;
  if (!flags.consent.empty()) out.consent = flags.consent;
  RETURN_IF_ERROR(Validate(out));
  return out;
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  // 127.0.0.0/8 in dotted-quad form, each part a decimal byte.
  if (host.substr(0, 4) != "127.") return false;
  int parts = 0;
  std::size_t i = 0;
  while (i <= host.size()) {
    std::size_t end = host.find('.', i);
    if (end == std::string_view::npos) end = host.size();
    const std::string_view part = host.substr(i, end - i);
    unsigned value = 0;
    const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (part.empty() || part.size() > 3 || ec != std::errc() || ptr != part.data() + part.size() ||
        value > 255) {
      return false;
    }
    ++parts;
    i = end + 1;
  }
  return parts == 4;
}

Status Validate(const PolicyOptions& options) {
  if (options.host.empty()) return Status::InvalidArgument("--host: must not be empty");
  switch (options.auth) {
    case AuthMode::kNone:
      if (!IsLoopbackHost(options.host)) {
        return Status::InvalidArgument(fmt::format(
            "--host {}: auth none serves loopback only; use --auth static or --auth oauth",
            options.host));
      }
      if (!options.token_file.empty()) {
        return Status::InvalidArgument("--token-file: needs --auth static");
      }
      if (!options.jwks_file.empty()) {
        return Status::InvalidArgument("--jwks-file: needs --auth oauth");
      }
      break;
    case AuthMode::kStatic:
      if (options.token_file.empty()) {
        return Status::InvalidArgument("--auth static: needs --token-file");
      }
      if (!options.jwks_file.empty()) {
        return Status::InvalidArgument("--jwks-file: needs --auth oauth");
      }
      break;
    case AuthMode::kOauth: {
      if (options.jwks_file.empty()) {
        return Status::InvalidArgument("--auth oauth: needs --jwks-file");
      }
      if (options.issuer.empty()) return Status::InvalidArgument("--auth oauth: needs --issuer");
      if (options.resource.empty()) {
        return Status::InvalidArgument("--auth oauth: needs --resource");
      }
      if (!options.token_file.empty()) {
        return Status::InvalidArgument("--token-file: needs --auth static");
      }
      const std::string_view r = options.resource;
      const bool scheme = r.substr(0, 8) == "https://" || r.substr(0, 7) == "http://";
      const std::size_t host_start = r.find("://") + 3;
      if (!scheme || host_start >= r.size() || r[host_start] == '/' ||
          r.find('#') != std::string_view::npos) {
        return Status::InvalidArgument(fmt::format(
            "--resource {}: must be an absolute http(s) URI without a fragment", r.substr(0, 80)));
      }
      break;
    }
  }
  if (options.burst < 1) {
    return Status::InvalidArgument(fmt::format("--burst {}: must be at least 1", options.burst));
  }
  if (options.rate_limit && !(options.rate_limit->tokens_per_minute > 0)) {
    return Status::InvalidArgument("--rate-limit: must be positive");
  }
  for (const std::string& root : options.allow_roots) {
    if (root.empty()) return Status::InvalidArgument("--allow-root: must not be empty");
  }
  for (const std::string& name : options.consent) {
    // A tool name (1-128 of A-Z a-z 0-9 _ - .) or "*".
    const bool valid =
        name == "*" ||
        (!name.empty() && name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-' || c == '.';
        }));
    if (!valid) {
      return Status::InvalidArgument(
          fmt::format("--consent {}: must be a tool name or *", name.substr(0, 40)));
    }
  }
  return Status::Ok();
}

}  // namespace trove::mcp::policy

#include "mcp/policy/auth.h"

#include <fmt/format.h>
#include <openssl/crypto.h>

#include <cstdlib>

#include "mcp/policy/jwt.h"

namespace trove::mcp::policy {
namespace {

constexpr std::size_t kMinPlainTokenBytes = 16;

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = (a[i] >= 'A' && a[i] <= 'Z') ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    const char y = (b[i] >= 'A' && b[i] <= 'Z') ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (x != y) return false;
  }
  return true;
}

// Appends `value` as an HTTP quoted-string body: `"` and `\` escaped, controls dropped.
void AppendQuoted(std::string& out, std::string_view value) {
  out += '"';
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) continue;
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// Splits `line` at blanks into at most 4 fields (a fourth means too many).
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size() && out.size() < 4) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i >= line.size()) break;
    std::size_t end = i;
    while (end < line.size() && !IsBlank(line[end])) ++end;
    out.push_back(line.substr(i, end - i));
    i = end;
  }
  return out;
}

AuthDenial Unauthenticated(std::string error, std::string message) {
  Challenge challenge{.realm = "trove", .error = std::move(error)};
  return AuthDenial{.http_status = 401,
                    .www_authenticate = BuildWwwAuthenticate(challenge),
                    .message = std::move(message)};
}

}  // namespace

std::string BuildWwwAuthenticate(const Challenge& challenge) {
  std::string out = "Bearer";
  bool first = true;
  auto add = [&](std::string_view key, const std::string& value) {
    if (value.empty()) return;
    out += first ? " " : ", ";
    first = false;
    out += key;
    out += '=';
    AppendQuoted(out, value);
  };
  add("realm", challenge.realm);
  add("error", challenge.error);
  add("error_description", challenge.error_description);
  add("scope", challenge.scope);
  add("resource_metadata", challenge.resource_metadata);
  return out;
}

AuthDenial Authenticator::InsufficientScope(Scopes needed) const {
  return AuthDenial{
      .http_status = 403,
      .www_authenticate = "",
      .message = fmt::format("permission denied: needs scope {}", FormatScopes(needed, " "))};
}

Result<std::string_view> ExtractBearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer";
  std::size_t space = 0;
  while (space < authorization.size() && !IsBlank(authorization[space])) ++space;
  if (!EqualsIgnoreCase(authorization.substr(0, space), kScheme)) {
    return Status::Unsupported("authorization: only the Bearer scheme is accepted");
  }
  std::size_t start = space;
  while (start < authorization.size() && authorization[start] == ' ') ++start;
  std::string_view token = authorization.substr(start);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty()) return Status::InvalidArgument("authorization: empty bearer token");
  if (token.size() > kMaxBearerTokenBytes) {
    return Status::InvalidArgument(
        fmt::format("authorization: bearer token longer than {} bytes", kMaxBearerTokenBytes));
  }
  for (const char c : token) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) {
      return Status::InvalidArgument("authorization: bearer token holds a blank or control byte");
    }
  }
  return token;
}

AuthOutcome NoAuth::Authenticate(std::optional<std::string_view> /*authorization*/) const {
  return AuthOutcome{.principal = Principal{.name = "anonymous-loopback", .scopes = Scopes::All()}};
}

bool ValidPrincipalName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '@' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string TokenId(const base::Sha256Digest& digest) { return base::ToHex(digest).substr(0, 12); }

Result<std::unique_ptr<StaticTokenAuth>> StaticTokenAuth::Parse(std::string_view text,
                                                                std::string_view where) {
  std::vector<Entry> entries;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::size_t first = 0;
    while (first < line.size() && IsBlank(line[first])) ++first;
    if (first == line.size() || line[first] == '#') continue;
    const auto at = [&](std::string_view what) {
      return Status::InvalidArgument(fmt::format("{}:{}: {}", where, line_no, what));
    };
    const std::vector<std::string_view> fields = Fields(line);
    if (fields.size() != 3) {
      return at("expected three fields: principal scopes sha256:<hex>|<token>");
    }
    Entry entry;
    if (!ValidPrincipalName(fields[0])) {
      return at("principal name must be 1 to 64 characters of A-Z a-z 0-9 . _ @ : -");
    }
    entry.name = std::string(fields[0]);
    Result<Scopes> scopes = ParseScopes(fields[1]);
    if (!scopes.ok()) return at(scopes.status().message());
    if (scopes->empty()) return at("no scopes");
    entry.scopes = *scopes;
    const std::string_view secret = fields[2];
    constexpr std::string_view kDigestPrefix = "sha256:";
    if (secret.substr(0, kDigestPrefix.size()) == kDigestPrefix) {
      const std::string_view hex = secret.substr(kDigestPrefix.size());
      if (hex.size() != 64) return at("sha256: must be followed by 64 hex digits");
      for (std::size_t i = 0; i < 32; ++i) {
        if (!IsHex(hex[2 * i]) || !IsHex(hex[2 * i + 1])) {
          return at("sha256: must be followed by 64 hex digits");
        }
        entry.digest[i] =
            static_cast<std::uint8_t>(HexValue(hex[2 * i]) * 16 + HexValue(hex[2 * i + 1]));
      }
    } else {
      if (secret.size() < kMinPlainTokenBytes) {
        return at(fmt::format("token shorter than {} characters", kMinPlainTokenBytes));
      }
      entry.digest = base::Sha256(secret);
    }
    for (const Entry& other : entries) {
      if (other.digest == entry.digest) return at("the same token appears twice");
    }
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) {
    return Status::InvalidArgument(fmt::format("{}: no tokens", where));
  }
  return std::unique_ptr<StaticTokenAuth>(new StaticTokenAuth(std::move(entries)));
}

Result<std::unique_ptr<StaticTokenAuth>> StaticTokenAuth::Load(base::Env& env,
                                                               const std::string& path) {
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) return text.status().WithContext("--token-file");
  auto parsed = Parse(*text, path);
  // The file may hold plain tokens; do not leave them in freed memory.
  OPENSSL_cleanse(text->data(), text->size());
  return parsed;
}

const StaticTokenAuth::Entry* StaticTokenAuth::Match(std::string_view token) const {
  const base::Sha256Digest digest = base::Sha256(token);
  const Entry* found = nullptr;
  // Every digest is compared, whatever matched before: the time taken does not depend on
  // which entry (if any) matches, nor on how much of the digest does.
  for (const Entry& entry : entries_) {
    const bool equal = base::ConstantTimeEqual(digest, entry.digest);
    found = equal ? &entry : found;
  }
  return found;
}

AuthOutcome StaticTokenAuth::Authenticate(std::optional<std::string_view> authorization) const {
  if (!authorization) {
    return AuthOutcome{.denial =
                           Unauthenticated("", "authentication required: send a bearer token")};
  }
  Result<std::string_view> token = ExtractBearerToken(*authorization);
  if (!token.ok()) {
    if (token.status().code() == base::StatusCode::kUnsupported) {
      return AuthOutcome{.denial = Unauthenticated("", token.status().message())};
    }
    AuthDenial denial = Unauthenticated("invalid_request", token.status().message());
    denial.http_status = 400;
    return AuthOutcome{.denial = std::move(denial)};
  }
  const Entry* entry = Match(*token);
  if (entry == nullptr) {
    return AuthOutcome{.denial = Unauthenticated("invalid_token",
                                                 "authentication required: invalid bearer token")};
  }
  return AuthOutcome{.principal = Principal{.name = entry->name,
                                            .scopes = entry->scopes,
                                            .token_id = TokenId(entry->digest)}};
}

Result<std::unique_ptr<Authenticator>> MakeAuthenticator(const PolicyOptions& options,
                                                         base::Env& env) {
  switch (options.auth) {
    case AuthMode::kNone:
      return std::unique_ptr<Authenticator>(std::make_unique<NoAuth>());
    case AuthMode::kStatic: {
      ASSIGN_OR_RETURN(std::unique_ptr<StaticTokenAuth> auth,
                       StaticTokenAuth::Load(env, options.token_file));
      return std::unique_ptr<Authenticator>(std::move(auth));
    }
    case AuthMode::kOauth: {
      JwtOptions jwt{.issuer = options.issuer, .audience = options.resource};
      ASSIGN_OR_RETURN(std::unique_ptr<JwtAuthenticator> auth,
                       JwtAuthenticator::Load(env, options.jwks_file, std::move(jwt)));
      return std::unique_ptr<Authenticator>(std::move(auth));
    }
  }
  return Status::Internal("unknown auth mode");
}

Result<Principal> StdioPrincipal(const char* name_value, const char* scopes_value,
                                 Scopes default_scopes) {
  Principal principal{.name = "local", .scopes = default_scopes};
  if (name_value != nullptr && name_value[0] != '\0') {
    if (!ValidPrincipalName(name_value)) {
      return Status::InvalidArgument(
          fmt::format("{}: principal name must be 1 to 64 characters of A-Z a-z 0-9 . _ @ : -",
                      kPrincipalEnvVar));
    }
    principal.name = name_value;
  }
  if (scopes_value != nullptr) {
    Result<Scopes> scopes = ParseScopes(scopes_value);
    if (!scopes.ok()) return scopes.status().WithContext(kScopesEnvVar);
    principal.scopes = *scopes;
  }
  return principal;
}

Result<Principal> StdioPrincipalFromEnvironment(Scopes default_scopes) {
  // Read once at startup, before threads exist (getenv is not synchronized with setenv).
  return StdioPrincipal(std::getenv(kPrincipalEnvVar),  // NOLINT(concurrency-mt-unsafe)
                        std::getenv(kScopesEnvVar),     // NOLINT(concurrency-mt-unsafe)
                        default_scopes);
}

}  // namespace trove::mcp::policy

// Authentication of HTTP requests and the stdio principal (docs/mcp.md §2.6, §5.6).
//
// An Authenticator turns the value of a request's Authorization header into a Principal, or
// into an AuthDenial: the HTTP status (400, 401 or 403), the WWW-Authenticate value and a
// message safe to send. Three implementations, chosen by MakeAuthenticator from the
// PolicyOptions: mode none (every request is the anonymous loopback principal), mode static
// (StaticTokenAuth, below) and mode oauth (JwtAuthenticator, jwt.h).
//
// Static tokens are kept only as SHA-256 digests. The presented token is hashed and compared
// with every stored digest in constant time over the fixed 32 bytes, without early exit
// (base::ConstantTimeEqual, i.e. OpenSSL CRYPTO_memcmp). Tokens never appear in a message, a
// log or the Principal; Principal::token_id holds at most 12 hex digits of the digest.
//
// Token file (--token-file): one token per line, three fields separated by blanks:
//   # comments and blank lines are ignored
//   alice    read,write   sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//   ci-bot   read         a-plain-token-of-at-least-16-chars
// The principal name ([A-Za-z0-9._@:-], 1 to 64 bytes), its scopes (comma-separated, no
// blanks) and either `sha256:` plus 64 hex digits (the digest of the token) or the token itself
// (at least 16 bytes, hashed at load; the plain text is not kept). A name may have several
// tokens (rotation); the same token twice is an error.
//
// Thread safety: an Authenticator is immutable after construction; Authenticate may be called
// from any number of threads at once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/hash.h"
#include "base/status.h"
#include "mcp/policy/options.h"
#include "mcp/policy/scopes.h"

namespace trove::mcp::policy {

// The parameters of a `WWW-Authenticate: Bearer ...` challenge (RFC 6750 §6, RFC 9728 §5.1).
// Empty fields are left out.
struct Challenge {
  std::string realm;
  std::string error;              // "invalid_request", "invalid_token", "insufficient_scope"
  std::string error_description;  // safe text, no token
  std::string scope;              // space-separated scope names
  std::string resource_metadata;  // the Protected Resource Metadata URL (oauth)
};

// Returns `Bearer k="v", ...` in the order realm, error, error_description, scope,
// resource_metadata; `"` and `\` in values are escaped as quoted-string requires, and control
// characters are dropped.
std::string BuildWwwAuthenticate(const Challenge& challenge);

// Why a request was refused, ready for the HTTP layer.
struct AuthDenial {
  int http_status = 401;         // 400 malformed, 401 unauthenticated, 403 insufficient scope
  std::string www_authenticate;  // the header value; empty: send none
  std::string message;           // lower-case, safe to send, never contains the token
};

// A Principal, or why there is none.
struct AuthOutcome {
  std::optional<Principal> principal;
  AuthDenial denial;  // meaningful only when !principal
  bool ok() const { return principal.has_value(); }
};

class Authenticator {
 public:
  virtual ~Authenticator() = default;

  virtual AuthMode mode() const = 0;

  // Returns the caller of a request whose Authorization header is `authorization` (nullopt
  // when the header is absent).
  virtual AuthOutcome Authenticate(std::optional<std::string_view> authorization) const = 0;

  // Returns the denial for an authenticated caller that lacks `needed`: 403; in oauth mode with
  // an insufficient_scope challenge naming the scopes (step-up, SEP-835); otherwise without a
  // challenge (the core reports PERMISSION_DENIED).
  virtual AuthDenial InsufficientScope(Scopes needed) const;
};

// Returns the token of an `Authorization: Bearer <token>` value (scheme case-insensitive, one
// or more spaces). Another scheme is kUnsupported (answered 401 without an error code); an
// empty token, one longer than kMaxBearerTokenBytes or with blanks or control characters is
// kInvalidArgument (answered 400 invalid_request). The view points into `authorization`.
inline constexpr std::size_t kMaxBearerTokenBytes = 4096;
Result<std::string_view> ExtractBearerToken(std::string_view authorization);

// Mode none: every request is Principal{"anonymous-loopback", Scopes::All()}.
class NoAuth final : public Authenticator {
 public:
  AuthMode mode() const override { return AuthMode::kNone; }
  AuthOutcome Authenticate(std::optional<std::string_view> authorization) const override;
};

// Mode static: bearer tokens from a token file.
class StaticTokenAuth final : public Authenticator {
 public:
  struct Entry {
    std::string name;
    Scopes scopes;
    base::Sha256Digest digest;
  };

  // Parses token-file text; errors name `where:line`. The text may hold plain tokens: the
  // caller should wipe its copy (Load does).
  static Result<std::unique_ptr<StaticTokenAuth>> Parse(std::string_view text,
                                                        std::string_view where);
  // Reads and parses the token file at `path`, then wipes the text read.
  static Result<std::unique_ptr<StaticTokenAuth>> Load(base::Env& env, const std::string& path);

  AuthMode mode() const override { return AuthMode::kStatic; }
  AuthOutcome Authenticate(std::optional<std::string_view> authorization) const override;

  // Returns the entry whose digest equals SHA-256(`token`), comparing with every entry in
  // constant time; nullptr when none.
  const Entry* Match(std::string_view token) const;

  const std::vector<Entry>& entries() const { return entries_; }

 private:
  explicit StaticTokenAuth(std::vector<Entry> entries) : entries_(std::move(entries)) {}
  const std::vector<Entry> entries_;
};

// Returns the Authenticator for `options.auth`: NoAuth, StaticTokenAuth::Load(token_file) or
// JwtAuthenticator::Load(jwks_file, ...) (jwt.h). `env` reads the files and, in oauth mode,
// gives the clock for exp and nbf; it must outlive the result.
Result<std::unique_ptr<Authenticator>> MakeAuthenticator(const PolicyOptions& options,
                                                         base::Env& env);

// The stdio principal (one per process): named by `name_value` (the TROVE_PRINCIPAL variable;
// null or empty: "local") with the scopes `scopes_value` lists (TROVE_SCOPES, comma- or
// space-separated; null: `default_scopes`). A bad name or an unknown scope is an error naming
// the variable.
inline constexpr const char* kPrincipalEnvVar = "TROVE_PRINCIPAL";
inline constexpr const char* kScopesEnvVar = "TROVE_SCOPES";
Result<Principal> StdioPrincipal(const char* name_value, const char* scopes_value,
                                 Scopes default_scopes = Scopes::All());
// StdioPrincipal with the values of TROVE_PRINCIPAL and TROVE_SCOPES from the process
// environment. Reads the environment; call it from main before starting threads.
Result<Principal> StdioPrincipalFromEnvironment(Scopes default_scopes = Scopes::All());

// Returns whether `name` is a valid principal name: 1 to 64 bytes of [A-Za-z0-9._@:-].
bool ValidPrincipalName(std::string_view name);

// Returns the first 12 hex digits of `digest` (the token id audit records carry).
std::string TokenId(const base::Sha256Digest& digest);

}  // namespace trove::mcp::policy

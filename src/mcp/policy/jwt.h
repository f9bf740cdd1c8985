// OAuth mode: JWT access tokens verified against a JSON Web Key Set, and the documents an
// OAuth 2.1 resource server publishes (docs/mcp.md §2.6, RFC 7515/7517/7519, RFC 9068,
// RFC 8707, RFC 9728).
//
// VerifyJwt checks a compact JWS signed with RS256 (RSA >= 2048 bits, PKCS #1 v1.5) or ES256
// (P-256; the raw r||s signature is converted to DER for OpenSSL), with OpenSSL 3
// EVP_DigestVerify. Any other `alg` (none, HS256, ...) and any `crit` header are refused, so a
// public key is never used as an HMAC secret. Claims: `iss` equal to the configured issuer,
// `aud` (a string or an array) containing the canonical resource URI exactly (audience
// binding, RFC 8707), `exp` required and `nbf` optional, both with a small leeway; `scope`
// (space-separated; unknown names ignored) gives the Principal's scopes, `sub` its name.
// JwtAuthenticator answers 401 with `WWW-Authenticate: Bearer resource_metadata=...,
// scope=...` (error="invalid_token" when a token was presented) and 403 with
// error="insufficient_scope" for step-up (SEP-835).
//
// Thread safety: Jwks and JwtAuthenticator are immutable after construction and may be used
// from any number of threads at once (OpenSSL 3 EVP_PKEY verification is thread-safe).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "mcp/policy/auth.h"
#include "mcp/policy/scopes.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace trove::mcp::policy {

// A JSON Web Key Set holding the usable verification keys: RSA (n, e; at least 2048 bits) and
// EC P-256 (x, y). Keys of other types, of `use` other than "sig" or of an `alg` other than
// RS256/ES256 are skipped; a set with no usable key is an error. At most 64 keys are read.
class Jwks {
 public:
  enum class KeyType { kRsa, kEcP256 };
  struct Key {
    std::string kid;  // may be empty
    KeyType type;
    std::shared_ptr<EVP_PKEY> pkey;
  };

  static Result<Jwks> Parse(std::string_view json_text);
  static Result<Jwks> Load(base::Env& env, const std::string& path);

  const std::vector<Key>& keys() const { return keys_; }

 private:
  Jwks() = default;
  std::vector<Key> keys_;
};

struct JwtOptions {
  std::string issuer;    // the exact expected `iss`
  std::string audience;  // the canonical resource URI, expected in `aud`
  // Clock skew tolerated for exp and nbf (default 60 s).
  std::int64_t leeway_seconds = 60;
  // Longer tokens are refused before decoding (default 8 KiB).
  std::size_t max_token_bytes = 8192;
  // The authorization servers named in the Protected Resource Metadata; empty: {issuer}.
  std::vector<std::string> authorization_servers;
  // scopes_supported of the metadata (default every scope) and the scope= of a plain 401
  // challenge (default read: least privilege first, step-up later).
  Scopes scopes_supported = Scopes::All();
  Scopes challenge_scopes = Scope::kRead;
};

// The claims a verified token grants.
struct JwtClaims {
  std::string subject;          // `sub`, or `client_id`, or "" when neither
  std::string client_id;        // `client_id` (RFC 9068), may be empty
  Scopes scopes;                // from `scope` (or an `scp` array), unknown names ignored
  std::int64_t expires_at = 0;  // `exp`, seconds since the Unix epoch
};

// Verifies `token` (compact JWS) with `keys` at `now_seconds` (Unix time). Errors are
// kPermissionDenied with a lower-case reason that never contains the token ("token expired",
// "audience mismatch", "bad signature", "unsupported alg `none`", ...); a token that is not
// a well-formed JWS is kMalformed.
Result<JwtClaims> VerifyJwt(std::string_view token, const Jwks& keys, const JwtOptions& options,
                            std::int64_t now_seconds);

// Returns the metadata URL for `resource` (RFC 9728 §6.1): the well-known path
// `/.well-known/oauth-protected-resource` inserted between the authority and the path, so
// "https://h.example/mcp" gives "https://h.example/.well-known/oauth-protected-resource/mcp".
std::string ResourceMetadataUrl(std::string_view resource);

// Returns the Protected Resource Metadata document (RFC 9728 §2) as JSON text: `resource`,
// `authorization_servers`, `scopes_supported` and `bearer_methods_supported: ["header"]`.
std::string ProtectedResourceMetadataJson(std::string_view resource,
                                          const std::vector<std::string>& authorization_servers,
                                          Scopes scopes_supported);

class JwtAuthenticator final : public Authenticator {
 public:
  // `clock` gives the time (NowMicros) for exp and nbf; it must outlive the authenticator.
  JwtAuthenticator(Jwks keys, JwtOptions options, base::Env& clock);
  // Reads the JWKS at `jwks_path` through `env`, which is also the clock.
  static Result<std::unique_ptr<JwtAuthenticator>> Load(base::Env& env,
                                                        const std::string& jwks_path,
                                                        JwtOptions options);

  AuthMode mode() const override { return AuthMode::kOauth; }
  AuthOutcome Authenticate(std::optional<std::string_view> authorization) const override;
  AuthDenial InsufficientScope(Scopes needed) const override;

  // The metadata URL and document to serve at /.well-known/oauth-protected-resource/<path>
  // and at the root variant.
  const std::string& metadata_url() const { return metadata_url_; }
  std::string MetadataJson() const;

 private:
  const Jwks keys_;
  const JwtOptions options_;
  base::Env& clock_;
  const std::string metadata_url_;
};

}  // namespace trove::mcp::policy

// The policy flags every Trove server shares (`warden mcp`, `kodo-mcp`, `librarian mcp`, the
// fixture server) and the JSON policy file they can also come from (docs/mcp.md §2.5,
// §2.6, §5.6; docs/decisions/0048-mcp-policy-layer.md).
//
// Use: a main declares a PolicyFlags, calls AddPolicyFlags(app, flags) before parsing, then
// ResolvePolicyOptions(flags, defaults, env) once parsing succeeded. Resolution reads the
// --policy file (when given), lets every flag given on the command line override the file,
// and validates the result (e.g. auth none refuses a non-loopback host). A server passes its
// own defaults (Librarian: 100 requests/min, burst 20) as `defaults`.
//
// Thread safety: values and free functions; AddPolicyFlags stores pointers into `flags`,
// which must outlive the parse.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace CLI {
class App;
}  // namespace CLI

namespace trove::mcp::policy {

enum class AuthMode {
  kNone,    // no authentication; loopback hosts only (the default)
  kStatic,  // bearer tokens from --token-file, stored as SHA-256 digests
  kOauth,   // JWT access tokens (RS256, ES256) verified with --jwks-file
};

std::string_view AuthModeName(AuthMode mode);  // "none", "static", "oauth"

// A sustained rate: `tokens_per_minute` requests per minute.
struct Rate {
  double tokens_per_minute = 0;
  friend bool operator==(const Rate&, const Rate&) = default;
};

// Parses "N/min", "N/s", "N/h" or a bare "N" (per minute); N is a positive decimal number.
Result<Rate> ParseRate(std::string_view text);
// Returns the rate as "N/min".
std::string FormatRate(Rate rate);

// The resolved settings.
struct PolicyOptions {
  // The HTTP bind address (default 127.0.0.1). A non-loopback host needs auth static or oauth.
  std::string host = "127.0.0.1";
  AuthMode auth = AuthMode::kNone;
  // auth static: the token file (format in auth.h). Required in static mode, refused otherwise.
  std::string token_file;
  // auth oauth: the JWKS file, the expected `iss` and the canonical resource URI (the expected
  // `aud`, also the `resource` of the Protected Resource Metadata). All three required in
  // oauth mode, refused otherwise.
  std::string jwks_file;
  std::string issuer;
  std::string resource;
  // Directories client-sent paths must stay within (confine.h); empty: the server's own
  // default (usually its workspace).
  std::vector<std::string> allow_roots;
  // The audit log (JSON Lines, audit.h); empty: no audit log.
  std::string audit_log;
  // The per-principal rate limit; nullopt: no rate limiting (default).
  std::optional<Rate> rate_limit;
  // The token bucket's capacity: how many requests may come at once (default 20).
  std::int64_t burst = 20;
  // Tools (or consent-gated operations) pre-approved by configuration, so they run without
  // asking the client; "*" approves every one. Empty (default): consent is asked for by
  // elicitation, or refused.
  std::vector<std::string> consent;

  friend bool operator==(const PolicyOptions&, const PolicyOptions&) = default;
};

// The raw values of the flags, each set only when given on the command line.
struct PolicyFlags {
  std::optional<std::string> host;
  std::optional<std::string> auth;
  std::optional<std::string> token_file;
  std::optional<std::string> jwks_file;
  std::optional<std::string> issuer;
  std::optional<std::string> resource;
  std::vector<std::string> allow_roots;  // repeatable; when given, replaces the file's list
  std::optional<std::string> audit_log;
  std::optional<std::string> rate_limit;
  std::optional<std::int64_t> burst;
  std::vector<std::string> consent;  // repeatable; when given, replaces the file's list
  std::optional<std::string> policy_file;
};

// Adds --host, --auth, --token-file, --jwks-file, --issuer, --resource, --allow-root
// (repeatable), --audit-log, --rate-limit, --burst, --consent (repeatable) and --policy to
// `app`, in an option group "Policy". The values land in `flags`.
void AddPolicyFlags(CLI::App& app, PolicyFlags& flags);

// Parses a policy file's JSON text (format in the decision record and below) into `into`,
// keeping the fields the file does not name. Relative paths in the file are taken relative to
// `base_dir` (the file's directory). Unknown keys are errors, so a typo cannot weaken policy.
//   {"host": "127.0.0.1", "auth": "static", "tokenFile": "tokens.txt",
//    "jwksFile": "jwks.json", "issuer": "https://as.example", "resource":
//    "https://mcp.example/mcp", "allowRoots": ["/srv/repo"], "auditLog": "audit.jsonl",
//    "rateLimit": "100/min", "burst": 20, "consent": ["bootstrap"]}
Status ApplyPolicyJson(std::string_view json_text, std::string_view base_dir, PolicyOptions& into);

// Returns `defaults`, overlaid by the --policy file (read through `env`) and then by each flag
// given, after Validate.
Result<PolicyOptions> ResolvePolicyOptions(const PolicyFlags& flags, PolicyOptions defaults,
                                           base::Env& env);

// Checks the combination: none only on a loopback host and without token or JWKS settings;
// static needs a token file; oauth needs a JWKS file, an issuer and an absolute http(s)
// resource URI without a fragment; burst >= 1; a rate > 0; consent names are tool names or
// "*". Errors name the flag.
Status Validate(const PolicyOptions& options);

// Returns whether `host` is a loopback address or name: localhost, 127.0.0.0/8, ::1, [::1].
bool IsLoopbackHost(std::string_view host);

}  // namespace trove::mcp::policy

#include "mcp/policy/jwt.h"

#include <fmt/format.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/hash.h"

namespace trove::mcp::policy {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxKeys = 64;

struct BnFree {
  void operator()(BIGNUM* p) const { BN_free(p); }
};
struct ParamBldFree {
  void operator()(OSSL_PARAM_BLD* p) const { OSSL_PARAM_BLD_free(p); }
};
struct ParamFree {
  void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* p) const { EVP_PKEY_CTX_free(p); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); }
};
struct EcdsaSigFree {
  void operator()(ECDSA_SIG* p) const { ECDSA_SIG_free(p); }
};

Json ParseObject(std::string_view text) {
  return Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

Result<std::string> DecodeMember(const Json& jwk, const char* name, std::size_t index) {
  const auto it = jwk.find(name);
  if (it == jwk.end() || !it->is_string()) {
    return Status::Malformed(fmt::format("keys[{}].{}: missing or not a string", index, name));
  }
  Result<std::string> bytes = base::Base64UrlDecode(it->get<std::string>());
  if (!bytes.ok()) return bytes.status().WithContext(fmt::format("keys[{}].{}", index, name));
  return bytes;
}

// Builds a public key from OpenSSL parameters; `type` is "RSA" or "EC".
Result<std::shared_ptr<EVP_PKEY>> FromData(const char* type, OSSL_PARAM* params,
                                           std::size_t index) {
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(
      EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* raw = nullptr;
  if (!ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &raw, EVP_PKEY_PUBLIC_KEY, params) != 1 || raw == nullptr) {
    return Status::Malformed(fmt::format("keys[{}]: not a valid {} public key", index, type));
  }
  std::shared_ptr<EVP_PKEY> pkey(raw, EVP_PKEY_free);
  std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> check(
      EVP_PKEY_CTX_new_from_pkey(nullptr, pkey.get(), nullptr));
  if (!check || EVP_PKEY_public_check(check.get()) != 1) {
    return Status::Malformed(fmt::format("keys[{}]: {} public key fails its check", index, type));
  }
  return pkey;
}

Result<std::shared_ptr<EVP_PKEY>> RsaKey(const Json& jwk, std::size_t index) {
  ASSIGN_OR_RETURN(std::string n, DecodeMember(jwk, "n", index));
  ASSIGN_OR_RETURN(std::string e, DecodeMember(jwk, "e", index));
  std::size_t lead = 0;
  while (lead < n.size() && n[lead] == '\0') ++lead;
  if ((n.size() - lead) * 8 < 2048) {
    return Status::Malformed(fmt::format("keys[{}]: RSA modulus shorter than 2048 bits", index));
  }
  if (e.empty() || e.size() > 8) {
    return Status::Malformed(fmt::format("keys[{}].e: not a valid exponent", index));
  }
  std::unique_ptr<BIGNUM, BnFree> bn_n(BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()),
                                                 static_cast<int>(n.size()), nullptr));
  std::unique_ptr<BIGNUM, BnFree> bn_e(BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()),
                                                 static_cast<int>(e.size()), nullptr));
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> bld(OSSL_PARAM_BLD_new());
  if (!bn_n || !bn_e || !bld ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
    return Status::Internal("openssl: cannot build RSA key parameters");
  }
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(bld.get()));
  if (!params) return Status::Internal("openssl: cannot build RSA key parameters");
  return FromData("RSA", params.get(), index);
}

Result<std::shared_ptr<EVP_PKEY>> EcKey(const Json& jwk, std::size_t index) {
  const auto crv = jwk.find("crv");
  if (crv == jwk.end() || !crv->is_string() || crv->get<std::string>() != "P-256") {
    return Status::Unsupported(fmt::format("keys[{}].crv: only P-256 is supported", index));
  }
  ASSIGN_OR_RETURN(std::string x, DecodeMember(jwk, "x", index));
  ASSIGN_OR_RETURN(std::string y, DecodeMember(jwk, "y", index));
  if (x.size() != 32 || y.size() != 32) {
    return Status::Malformed(fmt::format("keys[{}]: P-256 x and y must be 32 bytes each", index));
  }
  std::string point = "\x04" + x + y;  // SEC 1 uncompressed point
  std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> bld(OSSL_PARAM_BLD_new());
  if (!bld ||
      OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) !=
          1 ||
      OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) != 1) {
    return Status::Internal("openssl: cannot build EC key parameters");
  }
  std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(bld.get()));
  if (!params) return Status::Internal("openssl: cannot build EC key parameters");
  return FromData("EC", params.get(), index);
}

// Converts a JOSE ES256 signature (r||s, 32 bytes each) to the DER form OpenSSL verifies.
Result<std::string> RawEcdsaToDer(std::string_view raw) {
  if (raw.size() != 64) return Status::PermissionDenied("bad signature: ES256 needs 64 bytes");
  std::unique_ptr<ECDSA_SIG, EcdsaSigFree> sig(ECDSA_SIG_new());
  BIGNUM* r = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()), 32, nullptr);
  BIGNUM* s = BN_bin2bn(reinterpret_cast<const unsigned char*>(raw.data()) + 32, 32, nullptr);
  if (!sig || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
    BN_free(r);
    BN_free(s);
    return Status::Internal("openssl: cannot build ECDSA signature");
  }
  const int len = i2d_ECDSA_SIG(sig.get(), nullptr);
  if (len <= 0) return Status::Internal("openssl: cannot encode ECDSA signature");
  std::string der(static_cast<std::size_t>(len), '\0');
  auto* p = reinterpret_cast<unsigned char*>(der.data());
  i2d_ECDSA_SIG(sig.get(), &p);
  return der;
}

bool VerifySignature(EVP_PKEY* pkey, std::string_view signed_part, std::string_view signature) {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> md(EVP_MD_CTX_new());
  if (!md || EVP_DigestVerifyInit(md.get(), nullptr, EVP_sha256(), nullptr, pkey) != 1) {
    return false;
  }
  return EVP_DigestVerify(
             md.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
             reinterpret_cast<const unsigned char*>(signed_part.data()), signed_part.size()) == 1;
}

Result<std::int64_t> NumericDate(const Json& payload, const char* name, bool required) {
  const auto it = payload.find(name);
  if (it == payload.end()) {
    if (required) return Status::PermissionDenied(fmt::format("token has no `{}` claim", name));
    return std::int64_t{-1};
  }
  if (!it->is_number()) {
    return Status::PermissionDenied(fmt::format("token claim `{}` is not a number", name));
  }
  const double value = it->get<double>();
  if (!std::isfinite(value) || value < 0 || value > 1e15) {
    return Status::PermissionDenied(fmt::format("token claim `{}` is out of range", name));
  }
  return static_cast<std::int64_t>(value);
}

bool PrintableName(std::string_view name) {
  if (name.empty() || name.size() > 256) return false;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return false;
  }
  return true;
}

}  // namespace

Result<Jwks> Jwks::Parse(std::string_view json_text) {
  const Json doc = ParseObject(json_text);
  if (doc.is_discarded() || !doc.is_object()) return Status::Malformed("not a JSON object");
  const auto keys = doc.find("keys");
  if (keys == doc.end() || !keys->is_array()) return Status::Malformed("keys: missing array");
  if (keys->size() > kMaxKeys) {
    return Status::ResourceExhausted(fmt::format("keys: more than {} keys", kMaxKeys));
  }
  Jwks out;
  for (std::size_t i = 0; i < keys->size(); ++i) {
    const Json& jwk = (*keys)[i];
    if (!jwk.is_object()) return Status::Malformed(fmt::format("keys[{}]: not an object", i));
    const auto str = [&](const char* name) -> std::string {
      const auto it = jwk.find(name);
      return it != jwk.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string kty = str("kty");
    const std::string use = str("use");
    const std::string alg = str("alg");
    if (!use.empty() && use != "sig") continue;
    Key key{.kid = str("kid"), .type = KeyType::kRsa, .pkey = nullptr};
    if (kty == "RSA") {
      if (!alg.empty() && alg != "RS256") continue;
      ASSIGN_OR_RETURN(key.pkey, RsaKey(jwk, i));
    } else if (kty == "EC") {
      if (!alg.empty() && alg != "ES256") continue;
      key.type = KeyType::kEcP256;
      ASSIGN_OR_RETURN(key.pkey, EcKey(jwk, i));
    } else {
      continue;  // "oct" and others: never used to verify
    }
    out.keys_.push_back(std::move(key));
  }
  if (out.keys_.empty()) return Status::InvalidArgument("keys: no RS256 or ES256 signing key");
  return out;
}

Result<Jwks> Jwks::Load(base::Env& env, const std::string& path) {
  Result<std::string> text = env.ReadFile(path);
  if (!text.ok()) return text.status().WithContext("--jwks-file");
  Result<Jwks> keys = Parse(*text);
  if (!keys.ok()) return keys.status().WithContext(path);
  return keys;
}

Result<JwtClaims> VerifyJwt(std::string_view token, const Jwks& keys, const JwtOptions& options,
                            std::int64_t now_seconds) {
  if (token.size() > options.max_token_bytes) {
    return Status::Malformed(fmt::format("token longer than {} bytes", options.max_token_bytes));
  }
  const std::size_t dot1 = token.find('.');
  const std::size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos) {
    return Status::Malformed("token is not a compact JWS (three dot-separated parts)");
  }
  Result<std::string> header_text = base::Base64UrlDecode(token.substr(0, dot1));
  Result<std::string> payload_text = base::Base64UrlDecode(token.substr(dot1 + 1, dot2 - dot1 - 1));
  Result<std::string> signature = base::Base64UrlDecode(token.substr(dot2 + 1));
  if (!header_text.ok() || !payload_text.ok() || !signature.ok()) {
    return Status::Malformed("token part is not base64url");
  }
  const Json header = ParseObject(*header_text);
  if (header.is_discarded() || !header.is_object()) {
    return Status::Malformed("token header is not a JSON object");
  }
  const auto alg_it = header.find("alg");
  if (alg_it == header.end() || !alg_it->is_string()) {
    return Status::PermissionDenied("token header has no alg");
  }
  const std::string alg = alg_it->get<std::string>();
  Jwks::KeyType type;
  if (alg == "RS256") {
    type = Jwks::KeyType::kRsa;
  } else if (alg == "ES256") {
    type = Jwks::KeyType::kEcP256;
  } else {
    return Status::PermissionDenied(
        fmt::format("unsupported alg `{}` (RS256 or ES256)", alg.substr(0, 16)));
  }
  if (header.contains("crit")) return Status::PermissionDenied("unsupported crit header");
  std::string kid;
  if (const auto it = header.find("kid"); it != header.end()) {
    if (!it->is_string()) return Status::PermissionDenied("token header kid is not a string");
    kid = it->get<std::string>();
  }

  std::string sig_bytes = std::move(*signature);
  if (type == Jwks::KeyType::kEcP256) {
    ASSIGN_OR_RETURN(sig_bytes, RawEcdsaToDer(sig_bytes));
  }
  const std::string_view signed_part = token.substr(0, dot2);
  bool any_key = false;
  bool verified = false;
  for (const Jwks::Key& key : keys.keys()) {
    if (key.type != type || (!kid.empty() && key.kid != kid)) continue;
    any_key = true;
    if (VerifySignature(key.pkey.get(), signed_part, sig_bytes)) {
      verified = true;
      break;
    }
  }
  if (!any_key) return Status::PermissionDenied("no key for the token's kid and alg");
  if (!verified) return Status::PermissionDenied("bad signature");

  // Only a verified payload is interpreted.
  const Json payload = ParseObject(*payload_text);
  if (payload.is_discarded() || !payload.is_object()) {
    return Status::Malformed("token payload is not a JSON object");
  }
  const auto iss = payload.find("iss");
  if (iss == payload.end() || !iss->is_string() || iss->get<std::string>() != options.issuer) {
    return Status::PermissionDenied("issuer mismatch");
  }
  bool audience_ok = false;
  if (const auto aud = payload.find("aud"); aud != payload.end()) {
    if (aud->is_string()) {
      audience_ok = aud->get<std::string>() == options.audience;
    } else if (aud->is_array()) {
      for (const Json& item : *aud) {
        if (item.is_string() && item.get<std::string>() == options.audience) audience_ok = true;
      }
    }
  }
  if (!audience_ok) return Status::PermissionDenied("audience mismatch");
  ASSIGN_OR_RETURN(const std::int64_t exp, NumericDate(payload, "exp", /*required=*/true));
  ASSIGN_OR_RETURN(const std::int64_t nbf, NumericDate(payload, "nbf", /*required=*/false));
  if (now_seconds >= exp + options.leeway_seconds) return Status::PermissionDenied("token expired");
  if (nbf >= 0 && now_seconds + options.leeway_seconds < nbf) {
    return Status::PermissionDenied("token not yet valid");
  }

  JwtClaims claims;
  claims.expires_at = exp;
  if (const auto it = payload.find("client_id"); it != payload.end() && it->is_string()) {
    claims.client_id = it->get<std::string>();
  }
  if (const auto it = payload.find("sub"); it != payload.end() && it->is_string()) {
    claims.subject = it->get<std::string>();
  }
  if (claims.subject.empty()) claims.subject = claims.client_id;
  if (const auto it = payload.find("scope"); it != payload.end()) {
    if (!it->is_string()) return Status::PermissionDenied("token claim `scope` is not a string");
    ASSIGN_OR_RETURN(claims.scopes, ParseScopes(it->get<std::string>(), UnknownScopes::kIgnore));
  } else if (const auto scp = payload.find("scp"); scp != payload.end() && scp->is_array()) {
    for (const Json& item : *scp) {
      if (!item.is_string()) continue;
      ASSIGN_OR_RETURN(Scopes one, ParseScopes(item.get<std::string>(), UnknownScopes::kIgnore));
      claims.scopes |= one;
    }
  }
  return claims;
}

std::string ResourceMetadataUrl(std::string_view resource) {
  constexpr std::string_view kWellKnown = "/.well-known/oauth-protected-resource";
  const std::size_t scheme = resource.find("://");
  const std::size_t authority_start = scheme == std::string_view::npos ? 0 : scheme + 3;
  std::size_t path_start = resource.find_first_of("/?", authority_start);
  if (path_start == std::string_view::npos) path_start = resource.size();
  std::string_view rest = resource.substr(path_start);
  if (rest == "/") rest = {};
  std::string out(resource.substr(0, path_start));
  out += kWellKnown;
  out += rest;
  return out;
}

std::string ProtectedResourceMetadataJson(std::string_view resource,
                                          const std::vector<std::string>& authorization_servers,
                                          Scopes scopes_supported) {
  nlohmann::ordered_json doc;
  doc["resource"] = std::string(resource);
  doc["authorization_servers"] = authorization_servers;
  doc["scopes_supported"] = ScopeNames(scopes_supported);
  doc["bearer_methods_supported"] = {"header"};
  return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

JwtAuthenticator::JwtAuthenticator(Jwks keys, JwtOptions options, base::Env& clock)
    : keys_(std::move(keys)),
      options_(std::move(options)),
      clock_(clock),
      metadata_url_(ResourceMetadataUrl(options_.audience)) {}

Result<std::unique_ptr<JwtAuthenticator>> JwtAuthenticator::Load(base::Env& env,
                                                                 const std::string& jwks_path,
                                                                 JwtOptions options) {
  ASSIGN_OR_RETURN(Jwks keys, Jwks::Load(env, jwks_path));
  return std::make_unique<JwtAuthenticator>(std::move(keys), std::move(options), env);
}

AuthOutcome JwtAuthenticator::Authenticate(std::optional<std::string_view> authorization) const {
  Challenge challenge{.scope = FormatScopes(options_.challenge_scopes, " "),
                      .resource_metadata = metadata_url_};
  const auto deny = [&](int http_status, std::string message) {
    return AuthOutcome{.denial = AuthDenial{.http_status = http_status,
                                            .www_authenticate = BuildWwwAuthenticate(challenge),
                                            .message = std::move(message)}};
  };
  if (!authorization) return deny(401, "authentication required: send a bearer token");
  Result<std::string_view> token = ExtractBearerToken(*authorization);
  if (!token.ok()) {
    if (token.status().code() == base::StatusCode::kUnsupported) {
      return deny(401, token.status().message());
    }
    challenge.error = "invalid_request";
    return deny(400, token.status().message());
  }
  Result<JwtClaims> claims = VerifyJwt(*token, keys_, options_, clock_.NowMicros() / 1'000'000);
  if (!claims.ok()) {
    challenge.error = "invalid_token";
    challenge.error_description = claims.status().message();
    return deny(401, "authentication required: " + claims.status().message());
  }
  const base::Sha256Digest digest = base::Sha256(*token);
  Principal principal{.scopes = claims->scopes, .token_id = TokenId(digest)};
  // A subject that could garble a log line is replaced by a digest of itself.
  principal.name = PrintableName(claims->subject)
                       ? claims->subject
                       : "sub:" + base::Sha256Hex(claims->subject).substr(0, 12);
  return AuthOutcome{.principal = std::move(principal)};
}

AuthDenial JwtAuthenticator::InsufficientScope(Scopes needed) const {
  Challenge challenge{.error = "insufficient_scope",
                      .scope = FormatScopes(needed, " "),
                      .resource_metadata = metadata_url_};
  return AuthDenial{
      .http_status = 403,
      .www_authenticate = BuildWwwAuthenticate(challenge),
      .message = fmt::format("permission denied: needs scope {}", FormatScopes(needed, " "))};
}

std::string JwtAuthenticator::MetadataJson() const {
  std::vector<std::string> servers = options_.authorization_servers;
  if (servers.empty()) servers.push_back(options_.issuer);
  return ProtectedResourceMetadataJson(options_.audience, servers, options_.scopes_supported);
}

}  // namespace trove::mcp::policy

// Fuzzes the policy layer's entry points that take peer or file input (docs/conventions.md §11):
// PathConfiner::Resolve (root /usr, read-only lstat/realpath, no writes), bearer extraction
// and static-token authentication, JWT verification against a fixed EC key set, scope lists,
// token files and policy JSON. No input may reach a CHECK, and:
// - a resolved path is canonical-looking and inside the root;
// - no token is ever accepted by VerifyJwt (the fuzzer holds no signing key for the set);
// - a token file that parses has at least one entry and names that are valid.
#include <openssl/ec.h>
#include <openssl/evp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/hash.h"
#include "base/status.h"
#include "mcp/policy/auth.h"
#include "mcp/policy/confine.h"
#include "mcp/policy/jwt.h"
#include "mcp/policy/options.h"
#include "mcp/policy/scopes.h"

namespace {

using namespace trove::mcp::policy;  // NOLINT(google-build-using-namespace): fuzzer only

// A JWKS with one freshly generated P-256 key, whose private half is dropped at once.
const Jwks& Keys() {
  static const Jwks* keys = [] {
    EVP_PKEY* key = EVP_EC_gen("P-256");
    TROVE_CHECK(key != nullptr);
    unsigned char point[65];
    std::size_t len = 0;
    TROVE_CHECK(
        EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", point, sizeof(point), &len) == 1);
    EVP_PKEY_free(key);
    const std::string raw(reinterpret_cast<char*>(point), len);
    const std::string jwks = R"({"keys":[{"kty":"EC","crv":"P-256","kid":"k","x":")" +
                             trove::base::Base64UrlEncode(raw.substr(1, 32)) + R"(","y":")" +
                             trove::base::Base64UrlEncode(raw.substr(33, 32)) + R"("}]})";
    auto parsed = Jwks::Parse(jwks);
    TROVE_CHECK(parsed.ok());
    return new Jwks(std::move(parsed).value());
  }();
  return *keys;
}

const PathConfiner& Confiner() {
  static const PathConfiner* confiner = [] {
    auto made = PathConfiner::Make({"/usr"});
    TROVE_CHECK(made.ok());
    return new PathConfiner(std::move(made).value());
  }();
  return *confiner;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string_view first = input.substr(0, newline);

  trove::Result<std::string> resolved = Confiner().Resolve(first);
  if (resolved.ok()) {
    TROVE_CHECK(Confiner().InsideRoots(*resolved));
    TROVE_CHECK(resolved->find("/../") == std::string::npos);
    TROVE_CHECK(resolved->find('\0') == std::string::npos);
  }

  (void)ExtractBearerToken(first);
  JwtOptions options{.issuer = "https://as.example", .audience = "https://mcp.example/mcp"};
  TROVE_CHECK(!VerifyJwt(first, Keys(), options, 1'800'000'000).ok());

  (void)ParseScopes(first);
  (void)ParseScopes(first, UnknownScopes::kIgnore);
  (void)ParseRate(first);

  auto tokens = StaticTokenAuth::Parse(input, "fuzz");
  if (tokens.ok()) {
    TROVE_CHECK(!(*tokens)->entries().empty());
    for (const auto& entry : (*tokens)->entries()) TROVE_CHECK(ValidPrincipalName(entry.name));
    (void)(*tokens)->Authenticate(first);
  }

  PolicyOptions policy;
  if (ApplyPolicyJson(input, "/etc", policy).ok()) (void)Validate(policy);
  (void)ResourceMetadataUrl(first);
  return 0;
}

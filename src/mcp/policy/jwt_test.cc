#include "mcp/policy/jwt.h"

#include <gtest/gtest.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <nlohmann/json.hpp>

#include "base/hash.h"

namespace trove::mcp::policy {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kIssuer = "https://as.example";
constexpr std::string_view kResource = "https://mcp.example/mcp";
constexpr std::int64_t kNow = 1'800'000'000;

std::string B64(std::string_view s) { return base::Base64UrlEncode(s); }

std::string BnBytes(EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  EXPECT_EQ(EVP_PKEY_get_bn_param(key, name, &bn), 1);
  std::string out(static_cast<std::size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

Json RsaJwk(EVP_PKEY* key, std::string kid) {
  return Json{{"kty", "RSA"},
              {"kid", kid},
              {"use", "sig"},
              {"alg", "RS256"},
              {"n", B64(BnBytes(key, OSSL_PKEY_PARAM_RSA_N))},
              {"e", B64(BnBytes(key, OSSL_PKEY_PARAM_RSA_E))}};
}

Json EcJwk(EVP_PKEY* key, std::string kid) {
  unsigned char point[65];
  std::size_t len = 0;
  EXPECT_EQ(EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point,
                                            sizeof(point), &len),
            1);
  EXPECT_EQ(len, 65u);
  const std::string raw(reinterpret_cast<char*>(point), len);
  return Json{{"kty", "EC"},
              {"kid", kid},
              {"crv", "P-256"},
              {"x", B64(raw.substr(1, 32))},
              {"y", B64(raw.substr(33, 32))}};
}

std::string SignRaw(EVP_PKEY* key, std::string_view data) {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  EXPECT_EQ(EVP_DigestSignInit(md, nullptr, EVP_sha256(), nullptr, key), 1);
  std::size_t len = 0;
  EXPECT_EQ(EVP_DigestSign(md, nullptr, &len, reinterpret_cast<const unsigned char*>(data.data()),
                           data.size()),
            1);
  std::string sig(len, '\0');
  EXPECT_EQ(EVP_DigestSign(md, reinterpret_cast<unsigned char*>(sig.data()), &len,
                           reinterpret_cast<const unsigned char*>(data.data()), data.size()),
            1);
  sig.resize(len);
  EVP_MD_CTX_free(md);
  return sig;
}

// DER ECDSA signature -> JOSE r||s.
std::string DerToRaw(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size()));
  EXPECT_NE(sig, nullptr);
  std::string raw(64, '\0');
  BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(raw.data()), 32);
  BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
  ECDSA_SIG_free(sig);
  return raw;
}

class JwtTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    rsa_ = EVP_RSA_gen(2048);
    other_rsa_ = EVP_RSA_gen(2048);
    ec_ = EVP_EC_gen("P-256");
    ASSERT_NE(rsa_, nullptr);
    ASSERT_NE(other_rsa_, nullptr);
    ASSERT_NE(ec_, nullptr);
  }
  static void TearDownTestSuite() {
    EVP_PKEY_free(rsa_);
    EVP_PKEY_free(other_rsa_);
    EVP_PKEY_free(ec_);
  }

  static Json GoodClaims() {
    return Json{{"iss", kIssuer},
                {"aud", kResource},
                {"sub", "alice"},
                {"exp", kNow + 3600},
                {"nbf", kNow - 10},
                {"iat", kNow - 10},
                {"scope", "read write openid"},
                {"client_id", "cli-1"}};
  }

  // Signs `claims` with `key` as `alg` (RS256 or ES256) under `kid`.
  static std::string Sign(const Json& claims, EVP_PKEY* key, std::string alg,
                          std::string kid = "k1") {
    Json header{{"alg", alg}, {"typ", "at+jwt"}};
    if (!kid.empty()) header["kid"] = kid;
    const std::string signing = B64(header.dump()) + "." + B64(claims.dump());
    std::string sig = SignRaw(key, signing);
    if (alg == "ES256") sig = DerToRaw(sig);
    return signing + "." + B64(sig);
  }

  static Jwks Keys() {
    Json jwks{{"keys", Json::array({RsaJwk(rsa_, "k1"), EcJwk(ec_, "k2"),
                                    Json{{"kty", "oct"}, {"k", "c2VjcmV0"}}})}};
    Result<Jwks> keys = Jwks::Parse(jwks.dump());
    EXPECT_TRUE(keys.ok()) << keys.status().ToString();
    return std::move(keys).value();
  }

  static JwtOptions Options() {
    return JwtOptions{.issuer = std::string(kIssuer), .audience = std::string(kResource)};
  }

  static Result<JwtClaims> Verify(const std::string& token, std::int64_t now = kNow) {
    return VerifyJwt(token, Keys(), Options(), now);
  }

  static EVP_PKEY* rsa_;
  static EVP_PKEY* other_rsa_;
  static EVP_PKEY* ec_;
};

EVP_PKEY* JwtTest::rsa_ = nullptr;
EVP_PKEY* JwtTest::other_rsa_ = nullptr;
EVP_PKEY* JwtTest::ec_ = nullptr;

TEST_F(JwtTest, JwksKeepsUsableKeys) {
  const Jwks keys = Keys();
  ASSERT_EQ(keys.keys().size(), 2u);  // the oct key is skipped
  EXPECT_EQ(keys.keys()[0].type, Jwks::KeyType::kRsa);
  EXPECT_EQ(keys.keys()[1].type, Jwks::KeyType::kEcP256);
}

TEST_F(JwtTest, Rs256GoodToken) {
  Result<JwtClaims> claims = Verify(Sign(GoodClaims(), rsa_, "RS256"));
  ASSERT_TRUE(claims.ok()) << claims.status().ToString();
  EXPECT_EQ(claims->subject, "alice");
  EXPECT_EQ(claims->client_id, "cli-1");
  EXPECT_EQ(claims->scopes, Scope::kRead | Scope::kWrite);  // openid ignored
  EXPECT_EQ(claims->expires_at, kNow + 3600);
}

TEST_F(JwtTest, Es256GoodTokenWithAndWithoutKid) {
  EXPECT_TRUE(Verify(Sign(GoodClaims(), ec_, "ES256", "k2")).ok());
  EXPECT_TRUE(Verify(Sign(GoodClaims(), ec_, "ES256", "")).ok());
  EXPECT_TRUE(Verify(Sign(GoodClaims(), rsa_, "RS256", "")).ok());
}

TEST_F(JwtTest, AudienceArray) {
  Json claims = GoodClaims();
  claims["aud"] = Json::array({"https://other.example", kResource});
  EXPECT_TRUE(Verify(Sign(claims, rsa_, "RS256")).ok());
  claims["aud"] = Json::array({"https://other.example"});
  EXPECT_EQ(Verify(Sign(claims, rsa_, "RS256")).status().message(), "audience mismatch");
}

TEST_F(JwtTest, RefusesBadClaims) {
  struct Case {
    const char* what;
    std::function<void(Json&)> edit;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"expired", [](Json& c) { c["exp"] = kNow - 61; }, "token expired"},
      {"no exp", [](Json& c) { c.erase("exp"); }, "token has no `exp` claim"},
      {"exp string", [](Json& c) { c["exp"] = "soon"; }, "token claim `exp` is not a number"},
      {"not yet valid", [](Json& c) { c["nbf"] = kNow + 61; }, "token not yet valid"},
      {"wrong aud", [](Json& c) { c["aud"] = "https://mcp.example/other"; }, "audience mismatch"},
      {"aud with slash", [](Json& c) { c["aud"] = std::string(kResource) + "/"; },
       "audience mismatch"},
      {"no aud", [](Json& c) { c.erase("aud"); }, "audience mismatch"},
      {"wrong iss", [](Json& c) { c["iss"] = "https://evil.example"; }, "issuer mismatch"},
      {"no iss", [](Json& c) { c.erase("iss"); }, "issuer mismatch"},
  };
  for (const Case& c : cases) {
    Json claims = GoodClaims();
    c.edit(claims);
    Result<JwtClaims> r = Verify(Sign(claims, rsa_, "RS256"));
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_EQ(r.status().message(), c.expect) << c.what;
    EXPECT_EQ(r.status().code(), base::StatusCode::kPermissionDenied) << c.what;
  }
}

TEST_F(JwtTest, LeewayAppliesAtTheEdges) {
  Json claims = GoodClaims();
  claims["exp"] = kNow - 59;  // expired 59 s ago, within the 60 s leeway
  EXPECT_TRUE(Verify(Sign(claims, rsa_, "RS256")).ok());
  claims["exp"] = kNow - 60;
  EXPECT_FALSE(Verify(Sign(claims, rsa_, "RS256")).ok());
  claims = GoodClaims();
  claims["nbf"] = kNow + 60;
  EXPECT_TRUE(Verify(Sign(claims, rsa_, "RS256")).ok());
}

TEST_F(JwtTest, RefusesBadSignatures) {
  // Signed by a key not in the set, under a kid that is.
  EXPECT_EQ(Verify(Sign(GoodClaims(), other_rsa_, "RS256", "k1")).status().message(),
            "bad signature");
  // Payload swapped after signing.
  const std::string good = Sign(GoodClaims(), rsa_, "RS256");
  Json elevated = GoodClaims();
  elevated["scope"] = "admin";
  const std::size_t d1 = good.find('.');
  const std::size_t d2 = good.find('.', d1 + 1);
  const std::string swapped = good.substr(0, d1 + 1) + B64(elevated.dump()) + good.substr(d2);
  EXPECT_EQ(Verify(swapped).status().message(), "bad signature");
  // ES256 with a flipped signature bit, and with a DER signature instead of r||s.
  std::string es = Sign(GoodClaims(), ec_, "ES256", "k2");
  const std::size_t last = es.rfind('.');
  std::string sig = *base::Base64UrlDecode(es.substr(last + 1));
  sig[5] ^= 1;
  EXPECT_FALSE(Verify(es.substr(0, last + 1) + B64(sig)).ok());
  Json header{{"alg", "ES256"}, {"kid", "k2"}};
  const std::string signing = B64(header.dump()) + "." + B64(GoodClaims().dump());
  EXPECT_FALSE(Verify(signing + "." + B64(SignRaw(ec_, signing))).ok());
  // An RS256 header on an EC-signed token: the EC key is never tried as RSA.
  EXPECT_FALSE(Verify(Sign(GoodClaims(), ec_, "RS256", "k2")).ok());
  // Unknown kid.
  EXPECT_EQ(Verify(Sign(GoodClaims(), rsa_, "RS256", "k9")).status().message(),
            "no key for the token's kid and alg");
}

TEST_F(JwtTest, RefusesAlgNoneHs256AndCrit) {
  const std::string payload = B64(GoodClaims().dump());
  const std::string none = B64(R"({"alg":"none"})") + "." + payload + ".";
  EXPECT_EQ(Verify(none).status().message(), "unsupported alg `none` (RS256 or ES256)");
  const std::string hs = B64(R"({"alg":"HS256","kid":"k1"})") + "." + payload + "." + B64("x");
  EXPECT_EQ(Verify(hs).status().code(), base::StatusCode::kPermissionDenied);
  Json header{{"alg", "RS256"}, {"kid", "k1"}, {"crit", {"exp"}}};
  const std::string signing = B64(header.dump()) + "." + payload;
  EXPECT_EQ(Verify(signing + "." + B64(SignRaw(rsa_, signing))).status().message(),
            "unsupported crit header");
}

TEST_F(JwtTest, RefusesMalformedTokens) {
  for (const std::string& t :
       {std::string(""), std::string("abc"), std::string("a.b"), std::string("a.b.c.d"),
        std::string("!!.??.xx"), B64("[1]") + "." + B64("{}") + ".", std::string(9000, 'a')}) {
    Result<JwtClaims> r = Verify(t);
    EXPECT_FALSE(r.ok()) << t.substr(0, 40);
  }
}

TEST_F(JwtTest, JwksErrors) {
  EXPECT_FALSE(Jwks::Parse("{").ok());
  EXPECT_FALSE(Jwks::Parse(R"({"keys": []})").ok());
  EXPECT_FALSE(Jwks::Parse(R"({"keys": [{"kty": "oct", "k": "AA"}]})").ok());
  // A 1024-bit RSA key is refused.
  EVP_PKEY* small = EVP_RSA_gen(1024);
  Json jwks{{"keys", Json::array({RsaJwk(small, "s")})}};
  EVP_PKEY_free(small);
  Result<Jwks> r = Jwks::Parse(jwks.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("2048"), std::string::npos);
  // An EC point not on the curve.
  Json bad = EcJwk(ec_, "k");
  std::string y = *base::Base64UrlDecode(bad["y"].get<std::string>());
  y[31] ^= 1;
  bad["y"] = B64(y);
  EXPECT_FALSE(Jwks::Parse(Json{{"keys", Json::array({bad})}}.dump()).ok());
}

TEST_F(JwtTest, AuthenticatorChallengesAndPrincipal) {
  base::MemEnv clock(kNow * 1'000'000);
  JwtAuthenticator auth(Keys(), Options(), clock);
  EXPECT_EQ(auth.metadata_url(), "https://mcp.example/.well-known/oauth-protected-resource/mcp");

  AuthOutcome missing = auth.Authenticate(std::nullopt);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.denial.http_status, 401);
  EXPECT_EQ(missing.denial.www_authenticate,
            "Bearer scope=\"read\", resource_metadata=\"https://mcp.example/.well-known/"
            "oauth-protected-resource/mcp\"");

  const std::string token = Sign(GoodClaims(), rsa_, "RS256");
  AuthOutcome ok = auth.Authenticate("Bearer " + token);
  ASSERT_TRUE(ok.ok()) << ok.denial.message;
  EXPECT_EQ(ok.principal->name, "alice");
  EXPECT_EQ(ok.principal->scopes, Scope::kRead | Scope::kWrite);
  EXPECT_EQ(ok.principal->token_id, base::Sha256Hex(token).substr(0, 12));

  clock.AdvanceMicros(2 * 3600 * 1'000'000LL);
  AuthOutcome expired = auth.Authenticate("Bearer " + token);
  ASSERT_FALSE(expired.ok());
  EXPECT_EQ(expired.denial.http_status, 401);
  EXPECT_NE(expired.denial.www_authenticate.find("error=\"invalid_token\""), std::string::npos);
  EXPECT_NE(expired.denial.www_authenticate.find("resource_metadata="), std::string::npos);
  EXPECT_EQ(expired.denial.message.find(token), std::string::npos);

  AuthDenial step_up = auth.InsufficientScope(Scope::kExecute | Scope::kWrite);
  EXPECT_EQ(step_up.http_status, 403);
  EXPECT_EQ(step_up.www_authenticate,
            "Bearer error=\"insufficient_scope\", scope=\"write execute\", "
            "resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\"");
}

TEST_F(JwtTest, OddSubjectIsReplacedByItsDigest) {
  base::MemEnv clock(kNow * 1'000'000);
  JwtAuthenticator auth(Keys(), Options(), clock);
  Json claims = GoodClaims();
  claims["sub"] = "evil\n{\"forged\":1}";
  AuthOutcome ok = auth.Authenticate("Bearer " + Sign(claims, rsa_, "RS256"));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.principal->name.rfind("sub:", 0), 0u);
  EXPECT_EQ(ok.principal->name.size(), 16u);
}

TEST(ResourceMetadataTest, UrlAndDocument) {
  EXPECT_EQ(ResourceMetadataUrl("https://h.example/mcp"),
            "https://h.example/.well-known/oauth-protected-resource/mcp");
  EXPECT_EQ(ResourceMetadataUrl("https://h.example"),
            "https://h.example/.well-known/oauth-protected-resource");
  EXPECT_EQ(ResourceMetadataUrl("https://h.example/"),
            "https://h.example/.well-known/oauth-protected-resource");
  EXPECT_EQ(ResourceMetadataUrl("http://127.0.0.1:8080/a/b"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a/b");
  const Json doc = Json::parse(ProtectedResourceMetadataJson(
      "https://h.example/mcp", {"https://as.example"}, Scope::kRead | Scope::kAdmin));
  EXPECT_EQ(doc["resource"], "https://h.example/mcp");
  EXPECT_EQ(doc["authorization_servers"], Json::array({"https://as.example"}));
  EXPECT_EQ(doc["scopes_supported"], Json::array({"read", "admin"}));
  EXPECT_EQ(doc["bearer_methods_supported"], Json::array({"header"}));
}

}  // namespace
}  // namespace trove::mcp::policy

#include "mcp/policy/auth.h"

#include <gtest/gtest.h>

#include "base/hash.h"

namespace trove::mcp::policy {
namespace {

constexpr std::string_view kAliceToken = "alice-secret-token-0123456789";
constexpr std::string_view kBotToken = "bot-plain-token-abcdefgh";

std::string TokenFile() {
  return "# principal scopes secret\n"
         "\n"
         "alice  read,write  sha256:" +
         base::Sha256Hex(kAliceToken) +
         "\n"
         "   # indented comment\n"
         "ci-bot\tread\t" +
         std::string(kBotToken) + "\r\n";
}

TEST(StaticTokenAuthTest, ParsesDigestsAndPlainTokens) {
  Result<std::unique_ptr<StaticTokenAuth>> auth = StaticTokenAuth::Parse(TokenFile(), "tokens");
  ASSERT_TRUE(auth.ok()) << auth.status().ToString();
  ASSERT_EQ((*auth)->entries().size(), 2u);
  EXPECT_EQ((*auth)->entries()[0].name, "alice");
  EXPECT_EQ((*auth)->entries()[0].scopes, Scope::kRead | Scope::kWrite);
  EXPECT_EQ((*auth)->entries()[1].name, "ci-bot");
  // A plain token is kept only as its digest.
  EXPECT_EQ((*auth)->entries()[1].digest, base::Sha256(kBotToken));
}

TEST(StaticTokenAuthTest, AuthenticatesEachTokenAsItsPrincipal) {
  auto auth = std::move(StaticTokenAuth::Parse(TokenFile(), "tokens").value());
  AuthOutcome a = auth->Authenticate("Bearer " + std::string(kAliceToken));
  ASSERT_TRUE(a.ok()) << a.denial.message;
  EXPECT_EQ(a.principal->name, "alice");
  EXPECT_EQ(a.principal->scopes, Scope::kRead | Scope::kWrite);
  EXPECT_EQ(a.principal->token_id, base::Sha256Hex(kAliceToken).substr(0, 12));
  AuthOutcome b = auth->Authenticate("bearer   " + std::string(kBotToken));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.principal->name, "ci-bot");
  EXPECT_EQ(b.principal->scopes, Scopes(Scope::kRead));
}

TEST(StaticTokenAuthTest, RefusalsCarryTheRightStatusAndChallenge) {
  auto auth = std::move(StaticTokenAuth::Parse(TokenFile(), "tokens").value());
  AuthOutcome missing = auth->Authenticate(std::nullopt);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.denial.http_status, 401);
  EXPECT_EQ(missing.denial.www_authenticate, "Bearer realm=\"trove\"");

  AuthOutcome wrong = auth->Authenticate("Bearer not-a-known-token-at-all");
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.denial.http_status, 401);
  EXPECT_EQ(wrong.denial.www_authenticate, "Bearer realm=\"trove\", error=\"invalid_token\"");
  EXPECT_EQ(wrong.denial.message.find("not-a-known"), std::string::npos);

  AuthOutcome basic = auth->Authenticate("Basic YWxpY2U6cGFzcw==");
  ASSERT_FALSE(basic.ok());
  EXPECT_EQ(basic.denial.http_status, 401);

  AuthOutcome empty = auth->Authenticate("Bearer ");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.denial.http_status, 400);
  EXPECT_NE(empty.denial.www_authenticate.find("invalid_request"), std::string::npos);

  // A token prefix, a token with a suffix and a different case are all wrong tokens.
  for (std::string t : {std::string(kAliceToken.substr(0, 10)), std::string(kAliceToken) + "x",
                        std::string("ALICE-SECRET-TOKEN-0123456789")}) {
    EXPECT_FALSE(auth->Authenticate("Bearer " + t).ok()) << t;
  }
  EXPECT_FALSE(auth->Authenticate("Bearer " + std::string(kAliceToken) + " extra").ok());
  EXPECT_FALSE(auth->Authenticate("Bearer " + std::string(5000, 'a')).ok());
}

TEST(StaticTokenAuthTest, InsufficientScopeIsA403WithoutChallenge) {
  auto auth = std::move(StaticTokenAuth::Parse(TokenFile(), "tokens").value());
  AuthDenial d = auth->InsufficientScope(Scope::kExecute);
  EXPECT_EQ(d.http_status, 403);
  EXPECT_TRUE(d.www_authenticate.empty());
  EXPECT_NE(d.message.find("execute"), std::string::npos);
}

TEST(StaticTokenAuthTest, FileErrorsNameTheLine) {
  struct Case {
    std::string text;
    std::string expect;
  };
  const std::string digest = "sha256:" + base::Sha256Hex("x");
  const std::vector<Case> cases = {
      {"alice read\n", "tokens:1: expected three fields"},
      {"# c\nalice read sha256:abcd\n", "tokens:2: sha256: must be followed by 64 hex"},
      {"alice reed " + digest + "\n", "tokens:1: unknown scope `reed`"},
      {"alice , " + digest + "\n", "tokens:1: no scopes"},
      {"al/ice read " + digest + "\n", "tokens:1: principal name"},
      {"alice read short\n", "tokens:1: token shorter than 16"},
      {"a read " + digest + "\nb write " + digest + "\n", "tokens:2: the same token appears twice"},
      {"alice read " + digest + " extra\n", "tokens:1: expected three fields"},
      {"# nothing\n", "tokens: no tokens"},
  };
  for (const Case& c : cases) {
    Result<std::unique_ptr<StaticTokenAuth>> auth = StaticTokenAuth::Parse(c.text, "tokens");
    ASSERT_FALSE(auth.ok()) << c.text;
    EXPECT_EQ(auth.status().message().rfind(c.expect, 0), 0u)
        << auth.status().message() << " / expected " << c.expect;
  }
  // A plain token that failed to parse is not echoed.
  Result<std::unique_ptr<StaticTokenAuth>> bad =
      StaticTokenAuth::Parse("x! read tok-en-secret-value-1234\n", "t");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("secret"), std::string::npos);
}

TEST(StaticTokenAuthTest, MatchComparesEveryDigest) {
  // The same principal may have several tokens (rotation); each matches its own entry.
  std::string text;
  std::vector<std::string> tokens;
  for (int i = 0; i < 20; ++i) {
    tokens.push_back("rotation-token-number-" + std::to_string(i));
    text += "alice read " + tokens.back() + "\n";
  }
  auto auth = std::move(StaticTokenAuth::Parse(text, "t").value());
  for (int i = 0; i < 20; ++i) {
    const StaticTokenAuth::Entry* e = auth->Match(tokens[i]);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e, &auth->entries()[i]);
  }
  EXPECT_EQ(auth->Match("rotation-token-number-20"), nullptr);
}

TEST(StaticTokenAuthTest, LoadReadsThroughEnv) {
  base::MemEnv env;
  ASSERT_TRUE(env.WriteFile("/tokens", TokenFile()).ok());
  Result<std::unique_ptr<StaticTokenAuth>> auth = StaticTokenAuth::Load(env, "/tokens");
  ASSERT_TRUE(auth.ok());
  EXPECT_EQ((*auth)->entries().size(), 2u);
  EXPECT_FALSE(StaticTokenAuth::Load(env, "/missing").ok());
}

TEST(AuthTest, BuildWwwAuthenticateOrdersAndEscapes) {
  EXPECT_EQ(BuildWwwAuthenticate({}), "Bearer");
  EXPECT_EQ(BuildWwwAuthenticate({.error = "insufficient_scope",
                                  .scope = "read write",
                                  .resource_metadata = "https://h/.well-known/x"}),
            "Bearer error=\"insufficient_scope\", scope=\"read write\", "
            "resource_metadata=\"https://h/.well-known/x\"");
  EXPECT_EQ(BuildWwwAuthenticate({.realm = "a\"b\\c\nd"}), "Bearer realm=\"a\\\"b\\\\cd\"");
}

TEST(AuthTest, ExtractBearerToken) {
  EXPECT_EQ(*ExtractBearerToken("Bearer abc"), "abc");
  EXPECT_EQ(*ExtractBearerToken("BEARER abc "), "abc");
  EXPECT_EQ(ExtractBearerToken("Bearerabc").status().code(), base::StatusCode::kUnsupported);
  EXPECT_EQ(ExtractBearerToken("Basic abc").status().code(), base::StatusCode::kUnsupported);
  EXPECT_EQ(ExtractBearerToken("Bearer a\tb").status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(ExtractBearerToken("Bearer").status().code(), base::StatusCode::kInvalidArgument);
}

TEST(AuthTest, MakeAuthenticatorPerMode) {
  base::MemEnv env;
  ASSERT_TRUE(env.WriteFile("/tokens", TokenFile()).ok());
  Result<std::unique_ptr<Authenticator>> none = MakeAuthenticator(PolicyOptions{}, env);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->mode(), AuthMode::kNone);
  AuthOutcome anon = (*none)->Authenticate(std::nullopt);
  ASSERT_TRUE(anon.ok());
  EXPECT_EQ(anon.principal->name, "anonymous-loopback");

  Result<std::unique_ptr<Authenticator>> fixed =
      MakeAuthenticator(PolicyOptions{.auth = AuthMode::kStatic, .token_file = "/tokens"}, env);
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ((*fixed)->mode(), AuthMode::kStatic);
  EXPECT_TRUE((*fixed)->Authenticate("Bearer " + std::string(kAliceToken)).ok());

  EXPECT_FALSE(
      MakeAuthenticator(PolicyOptions{.auth = AuthMode::kStatic, .token_file = "/nope"}, env).ok());
}

TEST(AuthTest, StdioPrincipalFromVariables) {
  Result<Principal> d = StdioPrincipal(nullptr, nullptr);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->name, "local");
  EXPECT_EQ(d->scopes, Scopes::All());

  const Scopes librarian = Scope::kRead | Scope::kWrite | Scope::kExecute;
  Result<Principal> lib = StdioPrincipal("", nullptr, librarian);
  ASSERT_TRUE(lib.ok());
  EXPECT_EQ(lib->scopes, librarian);

  Result<Principal> set = StdioPrincipal("ci@host", "read network", librarian);
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->name, "ci@host");
  EXPECT_EQ(set->scopes, Scope::kRead | Scope::kNetwork);

  Result<Principal> bad_scope = StdioPrincipal("x", "read,root");
  ASSERT_FALSE(bad_scope.ok());
  EXPECT_NE(bad_scope.status().message().find("TROVE_SCOPES"), std::string::npos);
  Result<Principal> bad_name = StdioPrincipal("a b", nullptr);
  ASSERT_FALSE(bad_name.ok());
  EXPECT_NE(bad_name.status().message().find("TROVE_PRINCIPAL"), std::string::npos);
}

}  // namespace
}  // namespace trove::mcp::policy

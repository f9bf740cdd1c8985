#include "mcp/policy/scopes.h"

#include <gtest/gtest.h>

namespace trove::mcp::policy {
namespace {

TEST(ScopesTest, ParseAndFormatRoundTrip) {
  Result<Scopes> s = ParseScopes("write, read  execute");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->Has(Scope::kRead));
  EXPECT_TRUE(s->Has(Scope::kWrite));
  EXPECT_TRUE(s->Has(Scope::kExecute));
  EXPECT_FALSE(s->Has(Scope::kNetwork));
  EXPECT_EQ(FormatScopes(*s), "read,write,execute");
  EXPECT_EQ(FormatScopes(*s, " "), "read write execute");
  EXPECT_EQ(*ParseScopes(FormatScopes(Scopes::All())), Scopes::All());
  EXPECT_EQ(ScopeNames(Scope::kNetwork | Scope::kAdmin),
            (std::vector<std::string>{"network", "admin"}));
}

TEST(ScopesTest, EmptyAndDuplicates) {
  EXPECT_EQ(*ParseScopes(""), Scopes::None());
  EXPECT_EQ(*ParseScopes(" , ,"), Scopes::None());
  EXPECT_EQ(*ParseScopes("read,read"), Scopes(Scope::kRead));
  EXPECT_EQ(FormatScopes(Scopes::None()), "");
}

TEST(ScopesTest, UnknownScopeRejectedOrIgnored) {
  Result<Scopes> bad = ParseScopes("read,wirte");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("wirte"), std::string::npos);
  Result<Scopes> lenient = ParseScopes("openid read profile", UnknownScopes::kIgnore);
  ASSERT_TRUE(lenient.ok());
  EXPECT_EQ(*lenient, Scopes(Scope::kRead));
  // Case matters: scope names are exact.
  EXPECT_FALSE(ParseScopes("READ").ok());
}

TEST(ScopesTest, AllowedNeedsEveryScopeUnlessAdmin) {
  const Scopes rw = Scope::kRead | Scope::kWrite;
  EXPECT_TRUE(Allowed(Scope::kRead, rw));
  EXPECT_TRUE(Allowed(rw, rw));
  EXPECT_FALSE(Allowed(Scope::kExecute, rw));
  EXPECT_FALSE(Allowed(Scope::kRead | Scope::kExecute, rw));
  EXPECT_TRUE(Allowed(Scopes::None(), Scopes::None()));
  EXPECT_FALSE(Allowed(Scope::kRead, Scopes::None()));
  // admin implies every other scope.
  EXPECT_TRUE(Allowed(Scope::kNetwork | Scope::kExecute, Scope::kAdmin));
  EXPECT_TRUE(Allowed(Scope::kAdmin, Scope::kAdmin));
  EXPECT_FALSE(Allowed(Scope::kAdmin, Scopes::All() & Scopes::FromBits(0x0f)));
}

TEST(ScopesTest, MissingNamesWhatIsLacking) {
  EXPECT_EQ(Missing(Scope::kRead | Scope::kExecute, Scope::kRead), Scopes(Scope::kExecute));
  EXPECT_EQ(Missing(Scope::kRead, Scope::kRead), Scopes::None());
  EXPECT_EQ(Missing(Scopes::All(), Scope::kAdmin), Scopes::None());
}

TEST(ScopesTest, LocalPrincipalHasEveryScope) {
  const Principal p = LocalPrincipal();
  EXPECT_EQ(p.name, "local");
  EXPECT_EQ(p.scopes, Scopes::All());
  EXPECT_TRUE(p.token_id.empty());
}

}  // namespace
}  // namespace trove::mcp::policy

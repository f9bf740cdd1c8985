#include "mcp/policy/options.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

namespace trove::mcp::policy {
namespace {

// Parses `args` (without the program name) with the policy flags added.
Result<PolicyOptions> ParseArgs(std::vector<std::string> args, base::Env& env,
                                PolicyOptions defaults = {}) {
  CLI::App app{"test"};
  PolicyFlags flags;
  AddPolicyFlags(app, flags);
  std::vector<const char*> argv = {"test"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    return Status::InvalidArgument(std::string("cli: ") + e.what());
  }
  return ResolvePolicyOptions(flags, std::move(defaults), env);
}

TEST(PolicyOptionsTest, DefaultsAreLoopbackWithoutAuth) {
  base::MemEnv env;
  Result<PolicyOptions> o = ParseArgs({}, env);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->host, "127.0.0.1");
  EXPECT_EQ(o->auth, AuthMode::kNone);
  EXPECT_FALSE(o->rate_limit.has_value());
  EXPECT_EQ(o->burst, 20);
}

TEST(PolicyOptionsTest, EveryFlagLands) {
  base::MemEnv env;
  Result<PolicyOptions> o = ParseArgs(
      {"--host", "0.0.0.0", "--auth", "static", "--token-file", "/etc/t", "--allow-root", "/a",
       "--allow-root", "/b", "--audit-log", "/var/a.jsonl", "--rate-limit", "2/s", "--burst", "5"},
      env);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->host, "0.0.0.0");
  EXPECT_EQ(o->auth, AuthMode::kStatic);
  EXPECT_EQ(o->token_file, "/etc/t");
  EXPECT_EQ(o->allow_roots, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(o->audit_log, "/var/a.jsonl");
  ASSERT_TRUE(o->rate_limit.has_value());
  EXPECT_DOUBLE_EQ(o->rate_limit->tokens_per_minute, 120);
  EXPECT_EQ(o->burst, 5);
}

TEST(PolicyOptionsTest, OauthFlags) {
  base::MemEnv env;
  Result<PolicyOptions> o =
      ParseArgs({"--auth", "oauth", "--jwks-file", "j.json", "--issuer", "https://as.example",
                 "--resource", "https://mcp.example/mcp"},
                env);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->auth, AuthMode::kOauth);
  EXPECT_EQ(o->issuer, "https://as.example");
  EXPECT_EQ(o->resource, "https://mcp.example/mcp");
}

TEST(PolicyOptionsTest, NoneRefusesANonLoopbackHost) {
  base::MemEnv env;
  for (const char* host : {"0.0.0.0", "192.168.1.2", "example.com", "127.0.0.1.evil.com", "::"}) {
    Result<PolicyOptions> o = ParseArgs({"--host", host}, env);
    ASSERT_FALSE(o.ok()) << host;
    EXPECT_NE(o.status().message().find("loopback"), std::string::npos);
  }
  for (const char* host : {"127.0.0.1", "127.1.2.3", "localhost", "::1", "[::1]"}) {
    EXPECT_TRUE(ParseArgs({"--host", host}, env).ok()) << host;
  }
}

TEST(PolicyOptionsTest, ModeRequirements) {
  base::MemEnv env;
  EXPECT_FALSE(ParseArgs({"--auth", "static"}, env).ok());
  EXPECT_FALSE(ParseArgs({"--token-file", "t"}, env).ok());  // static needed
  EXPECT_FALSE(ParseArgs({"--auth", "oauth", "--jwks-file", "j"}, env).ok());
  EXPECT_FALSE(ParseArgs({"--auth", "oauth", "--jwks-file", "j", "--issuer", "i", "--resource",
                          "mcp.example/mcp"},
                         env)
                   .ok());
  EXPECT_FALSE(ParseArgs({"--auth", "oauth", "--jwks-file", "j", "--issuer", "i", "--resource",
                          "https://mcp.example/mcp#frag"},
                         env)
                   .ok());
  EXPECT_FALSE(ParseArgs({"--burst", "0"}, env).ok());
  EXPECT_FALSE(ParseArgs({"--rate-limit", "fast"}, env).ok());
  EXPECT_FALSE(ParseArgs({"--rate-limit", "-3/min"}, env).ok());
  EXPECT_FALSE(ParseArgs({"--auth", "magic"}, env).ok());
}

TEST(PolicyOptionsTest, ParseRateUnits) {
  EXPECT_DOUBLE_EQ(ParseRate("100/min")->tokens_per_minute, 100);
  EXPECT_DOUBLE_EQ(ParseRate("100")->tokens_per_minute, 100);
  EXPECT_DOUBLE_EQ(ParseRate("2/s")->tokens_per_minute, 120);
  EXPECT_DOUBLE_EQ(ParseRate("600/h")->tokens_per_minute, 10);
  EXPECT_DOUBLE_EQ(ParseRate("0.5/min")->tokens_per_minute, 0.5);
  EXPECT_FALSE(ParseRate("10/day").ok());
  EXPECT_FALSE(ParseRate("0/min").ok());
  EXPECT_FALSE(ParseRate("").ok());
  EXPECT_FALSE(ParseRate("1e999").ok());
}

TEST(PolicyOptionsTest, PolicyFileWithFlagsOverriding) {
  base::MemEnv env;
  ASSERT_TRUE(env.CreateDir("/etc/trove").ok());
  ASSERT_TRUE(env.WriteFile("/etc/trove/policy.json", R"({
      "host": "10.0.0.5", "auth": "static", "tokenFile": "tokens.txt",
      "allowRoots": ["/srv/repo", "rel"], "auditLog": "/var/log/a.jsonl",
      "rateLimit": "60/min", "burst": 7})")
                  .ok());
  Result<PolicyOptions> file_only = ParseArgs({"--policy", "/etc/trove/policy.json"}, env);
  ASSERT_TRUE(file_only.ok()) << file_only.status().ToString();
  EXPECT_EQ(file_only->host, "10.0.0.5");
  EXPECT_EQ(file_only->auth, AuthMode::kStatic);
  EXPECT_EQ(file_only->token_file, "/etc/trove/tokens.txt");  // relative to the file
  EXPECT_EQ(file_only->allow_roots, (std::vector<std::string>{"/srv/repo", "/etc/trove/rel"}));
  EXPECT_EQ(file_only->audit_log, "/var/log/a.jsonl");
  EXPECT_DOUBLE_EQ(file_only->rate_limit->tokens_per_minute, 60);
  EXPECT_EQ(file_only->burst, 7);

  Result<PolicyOptions> overridden =
      ParseArgs({"--policy", "/etc/trove/policy.json", "--burst", "3", "--allow-root", "/x",
                 "--token-file", "/run/t"},
                env);
  ASSERT_TRUE(overridden.ok()) << overridden.status().ToString();
  EXPECT_EQ(overridden->burst, 3);
  EXPECT_EQ(overridden->allow_roots, (std::vector<std::string>{"/x"}));
  EXPECT_EQ(overridden->token_file, "/run/t");
  EXPECT_EQ(overridden->host, "10.0.0.5");
}

TEST(PolicyOptionsTest, ServerDefaultsApplyUnderTheFileAndFlags) {
  base::MemEnv env;
  PolicyOptions librarian;
  librarian.rate_limit = Rate{.tokens_per_minute = 100};
  Result<PolicyOptions> o = ParseArgs({}, env, librarian);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->rate_limit, librarian.rate_limit);
  o = ParseArgs({"--rate-limit", "10/min"}, env, librarian);
  ASSERT_TRUE(o.ok());
  EXPECT_DOUBLE_EQ(o->rate_limit->tokens_per_minute, 10);
}

TEST(PolicyOptionsTest, PolicyFileErrorsNameTheFileAndKey) {
  base::MemEnv env;
  ASSERT_TRUE(env.WriteFile("/p.json", R"({"auth": "static", "tokenfile": "t"})").ok());
  Result<PolicyOptions> o = ParseArgs({"--policy", "/p.json"}, env);
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("/p.json"), std::string::npos);
  EXPECT_NE(o.status().message().find("tokenfile"), std::string::npos);

  ASSERT_TRUE(env.WriteFile("/bad.json", "{not json").ok());
  EXPECT_EQ(ParseArgs({"--policy", "/bad.json"}, env).status().code(),
            base::StatusCode::kMalformed);
  ASSERT_TRUE(env.WriteFile("/types.json", R"({"burst": "20"})").ok());
  EXPECT_FALSE(ParseArgs({"--policy", "/types.json"}, env).ok());
  EXPECT_FALSE(ParseArgs({"--policy", "/missing.json"}, env).ok());
}

TEST(PolicyOptionsTest, ConsentFromTheFileAndRepeatedFlags) {
  base::MemEnv env;
  Result<PolicyOptions> none = ParseArgs({}, env);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->consent.empty());  // nothing is pre-approved by default

  ASSERT_TRUE(env.WriteFile("/c.json", R"({"consent": ["bootstrap", "run_agent_pass"]})").ok());
  Result<PolicyOptions> file = ParseArgs({"--policy", "/c.json"}, env);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->consent, (std::vector<std::string>{"bootstrap", "run_agent_pass"}));

  Result<PolicyOptions> flags =
      ParseArgs({"--policy", "/c.json", "--consent", "export_index", "--consent", "*"}, env);
  ASSERT_TRUE(flags.ok()) << flags.status().ToString();
  EXPECT_EQ(flags->consent, (std::vector<std::string>{"export_index", "*"}));  // replaces the file

  Result<PolicyOptions> bad = ParseArgs({"--consent", "boot strap"}, env);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--consent"), std::string::npos);
  ASSERT_TRUE(env.WriteFile("/c2.json", R"({"consent": "bootstrap"})").ok());
  EXPECT_FALSE(ParseArgs({"--policy", "/c2.json"}, env).ok());
  ASSERT_TRUE(env.WriteFile("/c3.json", R"({"consent": [1]})").ok());
  EXPECT_FALSE(ParseArgs({"--policy", "/c3.json"}, env).ok());
}

TEST(PolicyOptionsTest, CliRejectsAnUnknownMode) {
  CLI::App app{"test"};
  PolicyFlags flags;
  AddPolicyFlags(app, flags);
  const char* argv[] = {"test", "--auth", "magic"};
  EXPECT_THROW(app.parse(3, argv), CLI::ValidationError);
}

}  // namespace
}  // namespace trove::mcp::policy

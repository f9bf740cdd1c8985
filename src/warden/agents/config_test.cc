#include "warden/agents/config.h"

#include <gtest/gtest.h>

#include "warden/agents/backend.h"

namespace trove::warden::agents {
namespace {

ConfigSources Sources(std::map<std::string, std::string> env,
                      std::map<std::string, std::string> project = {},
                      std::map<std::string, std::string> global = {}) {
  ConfigSources s;
  s.getenv = [env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  s.project = std::move(project);
  s.global = std::move(global);
  return s;
}

TEST(ResolveAgentConfigTest, Defaults) {
  AgentConfig c = ResolveAgentConfig(Sources({}));
  EXPECT_EQ(c.backend, "");
  EXPECT_EQ(c.openai.api_key, "");
  EXPECT_EQ(c.openai.model, "gpt-5.3-codex");
  EXPECT_EQ(c.openai.base_url, "https://api.openai.com");
  EXPECT_EQ(c.anthropic.model, "claude-sonnet-4-5");
  EXPECT_EQ(c.anthropic.base_url, "https://api.anthropic.com");
}

TEST(ResolveAgentConfigTest, EnvironmentOverProjectOverGlobal) {
  AgentConfig c = ResolveAgentConfig(
      Sources({{"OPENAI_API_KEY", "env-key"}, {"ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"}},
              {{"openai.api_key", "project-key"},
               {"openai.model", "project-model"},
               {"anthropic.api_key", "project-anthropic"}},
              {{"openai.model", "global-model"},
               {"anthropic.api_key", "global-anthropic"},
               {"anthropic.base_url", "http://global"},
               {"agent.backend", "anthropic"}}));
  EXPECT_EQ(c.openai.api_key, "env-key");
  EXPECT_EQ(c.openai.model, "project-model");
  EXPECT_EQ(c.anthropic.api_key, "project-anthropic");
  EXPECT_EQ(c.anthropic.base_url, "http://127.0.0.1:9");  // trailing '/' dropped
  EXPECT_EQ(c.backend, "anthropic");
}

TEST(ResolveAgentConfigTest, EmptyEnvironmentValueCountsAsUnset) {
  AgentConfig c =
      ResolveAgentConfig(Sources({{"OPENAI_API_KEY", ""}}, {}, {{"openai.api_key", "global-key"}}));
  EXPECT_EQ(c.openai.api_key, "global-key");
}

TEST(ParseConfigJsonTest, FlatAndNested) {
  auto flat = ParseConfigJson(R"({"openai.api_key": "k1", "agent.backend": "offline"})");
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(flat->at("openai.api_key"), "k1");
  auto nested = ParseConfigJson(R"({"anthropic": {"model": "m", "api_key": "k2"}})");
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(nested->at("anthropic.model"), "m");
  EXPECT_EQ(nested->at("anthropic.api_key"), "k2");
}

TEST(ParseConfigJsonTest, MalformedNeverQuotesTheFile) {
  auto bad = ParseConfigJson(R"({"openai.api_key": "sk-secret-value)");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), base::StatusCode::kMalformed);
  EXPECT_EQ(bad.status().message().find("sk-secret"), std::string::npos);
  EXPECT_FALSE(ParseConfigJson("[1, 2]").ok());
}

TEST(BackendRegistryTest, CanonicalNames) {
  EXPECT_EQ(*CanonicalBackendName("codex"), "openai");
  EXPECT_EQ(*CanonicalBackendName("oai"), "openai");
  EXPECT_EQ(*CanonicalBackendName("openai"), "openai");
  EXPECT_EQ(*CanonicalBackendName("anthropic"), "anthropic");
  EXPECT_EQ(*CanonicalBackendName("offline"), "offline");
  EXPECT_EQ(*CanonicalBackendName("auto"), "auto");
  Result<std::string> bad = CanonicalBackendName("claude");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), base::StatusCode::kInvalidArgument);
}

TEST(BackendRegistryTest, ListShowsAvailabilityRequirementsAndModels) {
  ASSERT_TRUE(HttpsSupported());
  AgentConfig c = ResolveAgentConfig(Sources({{"ANTHROPIC_API_KEY", "sk-ant-secret"}}));
  std::vector<BackendInfo> list = ListBackends(c);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].name, "offline");
  EXPECT_TRUE(list[0].available);
  EXPECT_TRUE(list[0].requirements.empty());
  EXPECT_FALSE(list[0].default_model.has_value());
  EXPECT_EQ(list[1].name, "openai");
  EXPECT_EQ(list[1].aliases, (std::vector<std::string>{"codex", "oai"}));
  EXPECT_FALSE(list[1].available);
  EXPECT_EQ(list[1].requirements, std::vector<std::string>{"OPENAI_API_KEY"});
  EXPECT_EQ(list[1].default_model, "gpt-5.3-codex");
  EXPECT_EQ(list[2].name, "anthropic");
  EXPECT_TRUE(list[2].available);
  EXPECT_EQ(list[2].default_model, "claude-sonnet-4-5");

  std::string json = BackendsToJson(list);
  EXPECT_EQ(json.find("sk-ant-secret"), std::string::npos);
  EXPECT_NE(json.find(R"("requires":["OPENAI_API_KEY"])"), std::string::npos) << json;
  EXPECT_NE(json.find(R"({"name":"offline","backend":"offline","aliases":[],"available":true,)"
                      R"("requires":[],"default_model":null})"),
            std::string::npos)
      << json;
}

TEST(BackendRegistryTest, AutoPrefersConfiguredThenOpenAiThenAnthropicThenOffline) {
  EXPECT_EQ(*ResolveAutoBackend(ResolveAgentConfig(Sources({}))), "offline");
  EXPECT_EQ(*ResolveAutoBackend(ResolveAgentConfig(Sources({{"ANTHROPIC_API_KEY", "a"}}))),
            "anthropic");
  EXPECT_EQ(*ResolveAutoBackend(
                ResolveAgentConfig(Sources({{"ANTHROPIC_API_KEY", "a"}, {"OPENAI_API_KEY", "o"}}))),
            "openai");
  EXPECT_EQ(*ResolveAutoBackend(
                ResolveAgentConfig(Sources({{"ANTHROPIC_API_KEY", "a"}, {"OPENAI_API_KEY", "o"}},
                                           {{"agent.backend", "anthropic"}}))),
            "anthropic");
  // A configured backend that is unavailable falls through the order.
  EXPECT_EQ(*ResolveAutoBackend(ResolveAgentConfig(
                Sources({{"ANTHROPIC_API_KEY", "a"}}, {{"agent.backend", "codex"}}))),
            "anthropic");
  EXPECT_EQ(*ResolveAutoBackend(ResolveAgentConfig(
                Sources({{"OPENAI_API_KEY", "o"}}, {{"agent.backend", "offline"}}))),
            "offline");
  EXPECT_FALSE(
      ResolveAutoBackend(ResolveAgentConfig(Sources({}, {{"agent.backend", "gpt"}}))).ok());
}

TEST(BackendRegistryTest, MakeBackendNamesModelsAndRefusesMissingKeys) {
  AgentConfig c = ResolveAgentConfig(Sources({{"OPENAI_API_KEY", "sk-secret"}}));
  auto codex = MakeBackend("codex", std::nullopt, c);
  ASSERT_TRUE(codex.ok()) << codex.status().ToString();
  EXPECT_EQ((*codex)->name(), "openai");
  EXPECT_EQ((*codex)->model(), "gpt-5.3-codex");
  auto flagged = MakeBackend("oai", std::string("gpt-test"), c);
  ASSERT_TRUE(flagged.ok());
  EXPECT_EQ((*flagged)->model(), "gpt-test");
  auto automatic = MakeBackend("auto", std::nullopt, c);
  ASSERT_TRUE(automatic.ok());
  EXPECT_EQ((*automatic)->name(), "openai");
  auto offline = MakeBackend("offline", std::nullopt, c);
  ASSERT_TRUE(offline.ok());
  EXPECT_EQ((*offline)->name(), "offline");
  EXPECT_EQ((*offline)->model(), std::nullopt);

  auto missing = MakeBackend("anthropic", std::nullopt, c);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), base::StatusCode::kUnsupported);
  EXPECT_NE(missing.status().message().find("ANTHROPIC_API_KEY is not set"), std::string::npos)
      << missing.status().message();
  EXPECT_EQ(MakeBackend("bogus", std::nullopt, c).status().code(),
            base::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace trove::warden::agents

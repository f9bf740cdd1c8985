// get_context_pack_bundle on a fixture workspace: profiles, snippets, the token budget.
#include "librarian/bundle/bundle.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "librarian/index/bootstrap.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::bundle {
namespace {

using ::testing::HasSubstr;

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("parser.py",
               "def parse_config(text):\n    \"\"\"Parses the config text.\"\"\"\n"
               "    return dict(line.split('=') for line in text.splitlines())\n\n\n"
               "def load_config(path):\n    \"\"\"Loads a config file.\"\"\"\n"
               "    return parse_config(open(path).read())\n");
    dir_.Write("server.py", "def serve(port):\n    return port + 1\n");
    index::BootstrapOptions o;
    o.workspace = dir_.path();
    o.ctags_program = "";
    o.workers = 1;
    base::Cancellation cancel;
    auto r = index::Bootstrap(o, cancel, base::Progress());
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ws_ = query::Workspace{r->workspace, "ws_test"};
    auto st = store::Store::Open(index::StorePathFor(ws_.root));
    ASSERT_TRUE(st.ok());
    store_ = std::move(st).value();
  }

  Result<Bundle> Build(std::string topic, std::string type, std::optional<std::size_t> tokens) {
    base::Cancellation cancel;
    return BuildBundle(*store_, ws_, BundleRequest{std::move(topic), std::move(type), tokens},
                       cancel);
  }

  testing::TempDir dir_;
  query::Workspace ws_;
  std::unique_ptr<store::Store> store_;
};

TEST_F(BundleTest, ProfilesFollowTheTable) {
  EXPECT_EQ(ProfileFor("task")->depth, query::Depth::kL1);
  EXPECT_EQ(ProfileFor("review")->intent_type, query::IntentType::kRefactor);
  EXPECT_EQ(ProfileFor("debug")->default_tokens, 30'000u);
  EXPECT_EQ(ProfileFor("comprehensive")->pack_types.size(), 6u);
  EXPECT_FALSE(ProfileFor("quick"));
}

TEST_F(BundleTest, PacksCarrySnippets) {
  auto b = Build("parse config", "task", std::nullopt);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_FALSE(b->packs.empty());
  EXPECT_FALSE(b->truncated);
  EXPECT_EQ(b->omitted_count, 0u);
  EXPECT_THAT(b->bundle_id, ::testing::StartsWith("bd_"));
  const BundlePack& top = b->packs[0];
  ASSERT_FALSE(top.code_snippets.empty());
  EXPECT_EQ(top.code_snippets[0].file, "parser.py");
  bool found = false;
  for (const BundlePack& p : b->packs) {
    if (p.target_id == "fn:parser.py::parse_config") {
      found = true;
      ASSERT_EQ(p.code_snippets.size(), 1u);
      EXPECT_THAT(p.code_snippets[0].content, HasSubstr("def parse_config"));
      EXPECT_EQ(p.code_snippets[0].start_line, 1u);
    }
  }
  EXPECT_TRUE(found);
  std::size_t sum = 0;
  for (const BundlePack& p : b->packs) sum += PackTokens(p);
  EXPECT_EQ(b->estimated_tokens, sum);
  EXPECT_THAT(b->disclosures,
              ::testing::Contains(::testing::StartsWith("confidence_uncalibrated")));
  // Same index, same request: same id.
  EXPECT_EQ(Build("parse config", "task", std::nullopt)->bundle_id, b->bundle_id);
}

TEST_F(BundleTest, BudgetTruncates) {
  auto full = Build("parse config", "comprehensive", std::nullopt);
  ASSERT_TRUE(full.ok());
  ASSERT_GE(full->packs.size(), 2u);
  const std::size_t first = PackTokens(full->packs[0]);
  auto small = Build("parse config", "comprehensive", std::max<std::size_t>(kMinTokens, first));
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE(small->truncated);
  EXPECT_GT(small->omitted_count, 0u);
  EXPECT_LE(small->estimated_tokens, std::max<std::size_t>(kMinTokens, first));
  EXPECT_EQ(small->packs.size() + small->omitted_count, full->packs.size());
}

TEST_F(BundleTest, BadInputsNameTheField) {
  EXPECT_THAT(std::string(Build("x", "quick", std::nullopt).status().message()),
              HasSubstr("bundleType"));
  EXPECT_THAT(std::string(Build("parse", "task", 50).status().message()), HasSubstr("maxTokens"));
  EXPECT_THAT(std::string(Build("", "task", std::nullopt).status().message()), HasSubstr("topic"));
}

}  // namespace
}  // namespace trove::librarian::bundle

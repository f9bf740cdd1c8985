// Coverage keeps placeholder names honest (docs/decisions/0058-warden-demo.md): `sub_<hex>`
// names count in `named` but apart from real names, so 100 % cannot hide them.
#include <gtest/gtest.h>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "warden/kb/kb.h"
#include "warden/kb/testing/kb_test_peer.h"

namespace trove::warden::kb {
namespace {

using base::testing::TempDir;
using testing::MakeFunctions;
using testing::MakeVersion;

TEST(PlaceholderNameTest, OnlySubAndHexDigits) {
  for (const char* name : {"sub_3f9c2a", "sub_0", "sub_DEADbeef", "sub_401000"}) {
    EXPECT_TRUE(IsPlaceholderName(name)) << name;
  }
  for (const char* name : {"sub_", "sub", "", "sub_3f9c2g", "sub_3f9c2a_x", "Sub_3f9c2a",
                           "get_3f9c2a", "str_hello_3f9c2a", "subtract", "sub_x1", "xsub_12"}) {
    EXPECT_FALSE(IsPlaceholderName(name)) << name;
  }
}

TEST(PlaceholderCoverageTest, PlaceholdersAreCountedApartFromRealNames) {
  TempDir dir("trove_kb_placeholder_test");
  base::PosixEnv env;
  auto opened = Kb::Open(env, dir.Abs("kb.db"), KbOptions{.create_if_missing = true});
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Kb& kb = **opened;
  const auto functions = MakeFunctions(2, 4);  // 2 imports, 4 defined (indices 2..5)
  ASSERT_TRUE(kb.StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), functions).ok());

  auto c = kb.GetCoverage(1);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->placeholder_named, 0);
  EXPECT_EQ(c->real_named, 0);
  EXPECT_DOUBLE_EQ(c->real_coverage_pct, 0.0);

  // Every defined function named: two placeholders (one lower-, one upper-case hex), one
  // shape name of the offline backend (not a placeholder) and one human name.
  ASSERT_TRUE(
      kb.AgentPropose("offline", functions[2].stable_id, {.name = "sub_3f9c2a", .confidence = 0.2})
          .ok());
  ASSERT_TRUE(kb.McpPropose(functions[3].stable_id, "sub_ABC123", "", 0.2).ok());
  ASSERT_TRUE(
      kb.AgentPropose("offline", functions[4].stable_id, {.name = "get_3f9c2a", .confidence = 0.2})
          .ok());
  ASSERT_TRUE(kb.HumanSetName(HumanChannel::kCli, functions[5].stable_id, "parse_header").ok());
  c = kb.GetCoverage(1);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->named, 4);
  EXPECT_DOUBLE_EQ(c->coverage_pct, 100.0);
  EXPECT_EQ(c->placeholder_named, 2);
  EXPECT_EQ(c->real_named, 2);
  EXPECT_DOUBLE_EQ(c->real_coverage_pct, 50.0);

  // A human replaces a placeholder with a real name: one placeholder fewer.
  ASSERT_TRUE(kb.HumanSetName(HumanChannel::kCli, functions[2].stable_id, "checksum").ok());
  c = kb.GetCoverage(1);
  EXPECT_EQ(c->placeholder_named, 1);
  EXPECT_EQ(c->real_named, 3);
  EXPECT_DOUBLE_EQ(c->real_coverage_pct, 75.0);
}

}  // namespace
}  // namespace trove::warden::kb

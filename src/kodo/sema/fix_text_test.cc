#include "kodo/sema/fix_text.h"

#include <gtest/gtest.h>

#include <string>

namespace trove::kodo::sema::fixtext {
namespace {

std::string Apply(const std::string& text, const Insertion& at) {
  std::string out = text;
  out.insert(at.offset, at.text);
  return out;
}

TEST(FixTextTest, AfterOpenBraceSkipsComments) {
  const std::string text = "meta // {not this\n  { a }";
  EXPECT_EQ(AfterOpenBrace(text, 0), text.find("{ a") + 1);
  EXPECT_EQ(AfterOpenBrace("no brace", 0), std::nullopt);
}

TEST(FixTextTest, LastInBracesOnOneLineAddsACommaWhenNeeded) {
  const std::string text = "P { x: 1 }";
  std::optional<Insertion> at =
      LastInBraces(text, static_cast<std::uint32_t>(text.size()), {"y: TODO"});
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(Apply(text, *at), "P { x: 1, y: TODO }");
  const std::string trailing = "P { x: 1, }";
  at = LastInBraces(trailing, static_cast<std::uint32_t>(trailing.size()), {"y: TODO"});
  EXPECT_EQ(Apply(trailing, *at), "P { x: 1, y: TODO }");
  EXPECT_EQ(LastInBraces("P ( x )", 7, {"y"}), std::nullopt);
}

TEST(FixTextTest, LastInBracesOnItsOwnLineIndentsEachElement) {
  const std::string text = "    match c {\n        A => 1\n    }";
  std::optional<Insertion> at =
      LastInBraces(text, static_cast<std::uint32_t>(text.size()), {"B => 2", "C(_) => 3"});
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(Apply(text, *at),
            "    match c {\n        A => 1\n        B => 2,\n        C(_) => 3,\n    }");
}

TEST(FixTextTest, LastModuleItemGoesBeforeTheModulesBrace) {
  const std::string text = "module m {\n    fn f() {}\n}\n";
  std::optional<Insertion> at = LastModuleItem(text, 0, static_cast<std::uint32_t>(text.size() - 1),
                                               "struct S {\n    x: TODO,\n}");
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(Apply(text, *at),
            "module m {\n    fn f() {}\n\n    struct S {\n        x: TODO,\n    }\n}\n");
}

TEST(FixTextTest, OverTrailingCommaAndLines) {
  const std::string text = "a: 1, b: 2";
  EXPECT_EQ(OverTrailingComma(text, 4), 6u);
  EXPECT_EQ(OverTrailingComma(text, 10), 10u);
  EXPECT_EQ(LineIndent("x\n    let y", 8), "    ");
  EXPECT_EQ(LineContentStart("x\n    let y", 9), 6u);
}

TEST(FixTextTest, OpenParenOfTrailingArgsMatchesNesting) {
  const std::string text = "f(g(1), (2))";
  EXPECT_EQ(OpenParenOfTrailingArgs(text, 0, static_cast<std::uint32_t>(text.size())), 1u);
  EXPECT_EQ(OpenParenOfTrailingArgs("match x {}", 0, 10), std::nullopt);
}

}  // namespace
}  // namespace trove::kodo::sema::fixtext

#include "librarian/crawl/glob.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trove::librarian::crawl {
namespace {

struct Case {
  const char* pattern;
  const char* path;
  bool is_dir;
  bool matches;
};

TEST(GlobTest, MatchTable) {
  const Case cases[] = {
      // No slash: basename at any depth.
      {"*.cc", "main.cc", false, true},
      {"*.cc", "src/deep/main.cc", false, true},
      {"*.cc", "main.cch", false, false},
      {"main.?c", "a/main.cc", false, true},
      {"main.?c", "main.c", false, false},
      // `*` and `?` never cross `/`.
      {"src/*.cc", "src/a.cc", false, true},
      {"src/*.cc", "src/x/a.cc", false, false},
      {"src?a", "src/a", false, false},
      // Anchoring: a leading or inner slash anchors at the base.
      {"/foo", "foo", false, true},
      {"/foo", "a/foo", false, false},
      {"a/foo", "a/foo", false, true},
      {"a/foo", "b/a/foo", false, false},
      // `**` as whole segments.
      {"**/foo", "foo", false, true},
      {"**/foo", "a/b/foo", false, true},
      {"a/**/b", "a/b", false, true},
      {"a/**/b", "a/x/y/b", false, true},
      {"a/**/b", "ab", false, false},
      {"a/**", "a/x/y", false, true},
      {"a/**", "a", true, false},
      {"**", "anything/at/all", false, true},
      {"src/**/*.cc", "src/a.cc", false, true},
      {"src/**/*.cc", "src/x/y/a.cc", false, true},
      {"src/**/*.cc", "lib/a.cc", false, false},
      // `**` inside a segment is `*`.
      {"a**b", "axxb", false, true},
      {"a**b", "ax/xb", false, false},
      // Classes.
      {"[abc].txt", "b.txt", false, true},
      {"[abc].txt", "d.txt", false, false},
      {"[a-c]x", "bx", false, true},
      {"[!a-c]x", "bx", false, false},
      {"[^a-c]x", "dx", false, true},
      {"[]]", "]", false, true},
      {"x[/]y", "x/y", false, false},
      // Escapes.
      {"\\*", "*", false, true},
      {"\\*", "a", false, false},
      {"\\#x", "#x", false, true},
      // Directory-only.
      {"tmp/", "tmp", true, true},
      {"tmp/", "tmp", false, false},
      {"tmp/", "a/tmp", true, true},
      // Case-sensitive.
      {"README", "readme", false, false},
  };
  for (const Case& c : cases) {
    Result<Glob> glob = Glob::Compile(c.pattern);
    ASSERT_TRUE(glob.ok()) << c.pattern << ": " << glob.status().ToString();
    EXPECT_EQ(glob->Matches(c.path, c.is_dir), c.matches)
        << "pattern " << c.pattern << " path " << c.path << " dir " << c.is_dir;
  }
}

TEST(GlobTest, SyntaxErrorsNameTheGlob) {
  struct Bad {
    std::string pattern;
    std::string message;
  };
  const Bad bad[] = {
      {"", "glob \"\": is empty"},
      {"src/[ab", "glob \"src/[ab\": unterminated character class at offset 4"},
      {"x\\", "glob \"x\\\": ends with a lone backslash"},
      {"[[:alpha:]]", "glob \"[[:alpha:]]\": named character class at offset 1 is not supported"},
      {"/", "glob \"/\": matches nothing"},
      {std::string("a\0b", 3), "glob \"a?b\": contains a NUL byte"},
      {std::string(kMaxGlobChars + 1, 'a'), "longer than 1024 characters"},
  };
  for (const Bad& b : bad) {
    Result<Glob> glob = Glob::Compile(b.pattern);
    ASSERT_FALSE(glob.ok()) << b.pattern;
    EXPECT_EQ(glob.status().code(), base::StatusCode::kInvalidArgument);
    EXPECT_NE(glob.status().message().find(b.message), std::string::npos)
        << glob.status().message();
  }
}

TEST(GlobTest, HostilePatternStaysLinear) {
  // Classic backtracking bomb: many stars against a long non-matching path.
  std::string pattern;
  for (int i = 0; i < 100; ++i) pattern += "*a";
  pattern += "b";
  Result<Glob> glob = Glob::Compile(pattern);
  ASSERT_TRUE(glob.ok());
  EXPECT_FALSE(glob->Matches(std::string(4000, 'a'), false));
}

TEST(IgnoreRulesTest, ParsesGitignoreSyntax) {
  std::vector<std::string> warnings;
  const IgnoreRules rules = IgnoreRules::Parse(
      "# comment\n"
      "\n"
      "*.log\n"
      "!keep.log\n"
      "trailing   \n"
      "space\\ \n"
      "\\!bang\n"
      "\\#hash\n"
      "bad[\n"
      "/anchored\r\n",
      "sub/.gitignore", &warnings);
  using V = IgnoreRules::Verdict;
  EXPECT_EQ(rules.Evaluate("x.log", false), V::kIgnore);
  EXPECT_EQ(rules.Evaluate("d/keep.log", false), V::kInclude);
  EXPECT_EQ(rules.Evaluate("trailing", false), V::kIgnore);
  EXPECT_EQ(rules.Evaluate("space ", false), V::kIgnore);
  EXPECT_EQ(rules.Evaluate("space", false), V::kNone);
  EXPECT_EQ(rules.Evaluate("!bang", false), V::kIgnore);
  EXPECT_EQ(rules.Evaluate("#hash", false), V::kIgnore);
  EXPECT_EQ(rules.Evaluate("anchored", false), V::kIgnore);
  EXPECT_EQ(rules.Evaluate("d/anchored", false), V::kNone);
  EXPECT_EQ(rules.Evaluate("other.txt", false), V::kNone);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "sub/.gitignore:9: glob \"bad[\": unterminated character class at offset 3");
}

}  // namespace
}  // namespace trove::librarian::crawl

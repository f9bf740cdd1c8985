// Every linked grammar has an ABI inside the core's range and loads into a parser
// (docs/librarian.md §10.2
// "grammars"): the build refuses an out-of-range grammar (CMakeLists.txt), this checks the
// objects actually linked.
#include "librarian/extract/grammars.h"

#include <gtest/gtest.h>
#include <tree_sitter/api.h>

#include <set>
#include <string>

namespace trove::librarian::extract {
namespace {

TEST(GrammarsTest, AllNineLoadWithinTheCoreAbiRange) {
  int count = 0;
  const GrammarInfo* grammars = Grammars(&count);
  ASSERT_EQ(count, 9);
  std::set<std::string> names;
  TSParser* parser = ts_parser_new();
  for (int i = 0; i < count; ++i) {
    const GrammarInfo& g = grammars[i];
    names.insert(std::string(g.name));
    const TSLanguage* lang = g.load();
    ASSERT_NE(lang, nullptr) << g.name;
    std::uint32_t abi = ts_language_version(lang);
    EXPECT_EQ(static_cast<int>(abi), g.abi) << g.name;
    EXPECT_GE(static_cast<int>(abi), CoreMinAbi()) << g.name;
    EXPECT_LE(static_cast<int>(abi), CoreMaxAbi()) << g.name;
    EXPECT_TRUE(ts_parser_set_language(parser, lang)) << g.name;
    EXPECT_EQ(FindGrammar(g.language), &g);
    EXPECT_FALSE(g.version.empty());
  }
  ts_parser_delete(parser);
  EXPECT_EQ(names, (std::set<std::string>{"c", "cpp", "python", "javascript", "typescript", "tsx",
                                          "go", "rust", "java"}));
  EXPECT_EQ(CoreMinAbi(), 13);
  EXPECT_EQ(CoreMaxAbi(), 14);
  EXPECT_EQ(FindGrammar(Language::kCtags), nullptr);
  EXPECT_EQ(FindGrammar(Language::kText), nullptr);
}

TEST(GrammarsTest, VersionsAreThePins) {
  // docs/librarian.md §6.7's table; package.json pins the same versions and CMake checks
  // node_modules.
  EXPECT_EQ(FindGrammar(Language::kC)->version, "0.23.6");
  EXPECT_EQ(FindGrammar(Language::kCpp)->version, "0.23.4");
  EXPECT_EQ(FindGrammar(Language::kPython)->version, "0.23.6");
  EXPECT_EQ(FindGrammar(Language::kJavaScript)->version, "0.23.1");
  EXPECT_EQ(FindGrammar(Language::kTypeScript)->version, "0.23.2");
  EXPECT_EQ(FindGrammar(Language::kTsx)->version, "0.23.2");
  EXPECT_EQ(FindGrammar(Language::kGo)->version, "0.23.4");
  EXPECT_EQ(FindGrammar(Language::kRust)->version, "0.23.3");
  EXPECT_EQ(FindGrammar(Language::kJava)->version, "0.23.5");
}

}  // namespace
}  // namespace trove::librarian::extract

// docs/librarian.md §6.7/§10.2 "grammars": a grammar the core rejects (here the linked C++ grammar
// relabelled
// ABI 15, as tree-sitter CLI >= 0.25 generates) is routed to ctags at run time, and the
// fallback is recorded.
// The generated-parser header of the C++ grammar: the full TSLanguage layout, so the test can
// make a copy with another version. First: it declares TSStateId only when api.h has not been
// included yet (0.20.7's api.h does not declare it).
#include <tree_sitter/parser.h>
// clang-format off
#include <tree_sitter/api.h>
// clang-format on

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "librarian/extract/ctags.h"
#include "librarian/extract/extract.h"

extern "C" const TSLanguage* tree_sitter_cpp();

namespace trove::librarian::extract {
namespace {

TEST(RejectedGrammarTest, Abi15GoesToCtags) {
  auto made = Extractor::Create({});
  ASSERT_TRUE(made.ok());
  std::unique_ptr<Extractor> extractor = std::move(made).value();
  TSLanguage abi15 = *tree_sitter_cpp();
  abi15.version = 15;
  TSParser* parser = ts_parser_new();
  EXPECT_FALSE(ts_parser_set_language(parser, &abi15));  // what the core does with ABI 15
  ts_parser_delete(parser);

  extractor->OverrideGrammarForTesting(Language::kCpp, &abi15);
  const std::string src = "int add(int a, int b) {\n  return a + b;\n}\n";
  auto facts = extractor->Extract("m.cc", src, {Language::kCpp, {}});
  ASSERT_TRUE(facts.ok()) << facts.status().ToString();
  ASSERT_FALSE(facts->notes.empty());
  EXPECT_THAT(facts->notes[0], ::testing::HasSubstr("has ABI 15, outside the core's 13..14"));
  if (extractor->ctags() != nullptr) {
    EXPECT_EQ(facts->extractor, "ctags@" + extractor->ctags()->version());
    ASSERT_EQ(facts->symbols.size(), 1u);
    EXPECT_EQ(facts->symbols[0].name, "add");
    EXPECT_EQ(facts->symbols[0].start_line, 1u);
    EXPECT_EQ(facts->symbols[0].end_line, 3u);  // ctags gives C++ an end
  } else {
    EXPECT_EQ(facts->extractor, "text");
  }

  extractor->OverrideGrammarForTesting(Language::kCpp, nullptr);
  facts = extractor->Extract("m.cc", src, {Language::kCpp, {}});
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->extractor, "tree-sitter:cpp@0.23.4");
  EXPECT_TRUE(facts->notes.empty());
}

}  // namespace
}  // namespace trove::librarian::extract

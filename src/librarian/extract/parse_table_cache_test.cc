// The dense parse-action table answers exactly what the core's own ts_language_table_entry
// answers, for every state and token of every linked grammar, and the core's calls reach it.
#include "librarian/extract/parse_table_cache.h"

#include <gtest/gtest.h>
#include <tree_sitter/api.h>

#include <cstdint>

#include "librarian/extract/extract.h"
#include "librarian/extract/grammars.h"

namespace trove::librarian::extract::internal {
namespace {

TEST(ParseTableCacheTest, InterposedWhereBuilt) {
  if (!ParseTableInterpositionBuilt())
    GTEST_SKIP() << "libtree-sitter is not the 0.20.7 it mirrors";
  EXPECT_TRUE(ParseTableInterposed());
}

TEST(ParseTableCacheTest, DenseTableAnswersAsTheCoreForEveryStateAndToken) {
  if (!ParseTableInterposed()) GTEST_SKIP() << "the core's lookup is not interposed here";
  int count = 0;
  const GrammarInfo* grammars = Grammars(&count);
  ASSERT_EQ(count, 9);
  for (int i = 0; i < count; ++i) {
    const TSLanguage* lang = grammars[i].load();
    PrepareParseTable(lang);
    PrepareParseTable(lang);  // a second call keeps the first table
    ASSERT_TRUE(HasParseTableForTesting(lang)) << grammars[i].name;
    std::uint32_t states = 0, tokens = 0;
    ParseTableShapeForTesting(lang, &states, &tokens);
    // Every token, then the two error symbols (0xffff, 0xfffe), which go to the core.
    std::uint64_t differ = 0, checked = 0;
    for (std::uint32_t state = 0; state < states; ++state) {
      for (std::uint32_t symbol = 0; symbol < tokens + 2; ++symbol) {
        const auto s = static_cast<std::uint16_t>(state);
        const auto t =
            static_cast<std::uint16_t>(symbol < tokens ? symbol : 0xffff - (symbol - tokens));
        TableEntryForTesting want, got;
        ASSERT_TRUE(LibraryTableEntryForTesting(lang, s, t, &want));
        TableEntryForTestingLookup(lang, s, t, &got);
        ++checked;
        if (want.actions != got.actions || want.action_count != got.action_count ||
            want.is_reusable != got.is_reusable) {
          ++differ;
        }
      }
    }
    EXPECT_EQ(differ, 0u) << grammars[i].name << ": " << checked << " pairs checked";
    EXPECT_GT(checked, 1000u) << grammars[i].name;
  }
}

// A parse that goes through error recovery (where the core asks about every token) gives the
// same facts as before: the C++ grammar on a C header full of macros it cannot see through.
TEST(ParseTableCacheTest, ErrorRecoveryParsesStillExtract) {
  auto extractor = Extractor::Create({});
  ASSERT_TRUE(extractor.ok());
  const char* src =
      "__BEGIN_DECLS\n"
      "extern int open (const char *__file, int __oflag, ...) __nonnull ((1));\n"
      "struct stat64 { int a; } __attribute_deprecated__;\n"
      "static inline int helper (int x) __THROW { return open (\"x\", x); }\n"
      "__END_DECLS\n";
  Routing routing = (*extractor)->Route("api.h", /*workspace_has_cpp=*/true);
  Result<FileFacts> facts = (*extractor)->Extract("api.h", src, routing, nullptr);
  ASSERT_TRUE(facts.ok()) << facts.status().ToString();
  EXPECT_EQ(facts->language, "cpp");
  EXPECT_TRUE(facts->parse_error);
  bool stat64 = false;
  for (const Symbol& s : facts->symbols) stat64 = stat64 || s.name == "stat64";
  EXPECT_TRUE(stat64);
}

}  // namespace
}  // namespace trove::librarian::extract::internal

#include "librarian/extract/routing.h"

#include <gtest/gtest.h>

namespace trove::librarian::extract {
namespace {

TEST(RoutingTest, ExtensionTable) {
  struct Case {
    const char* path;
    Language want;
  } cases[] = {
      {"a.c", Language::kC},
      {"a.cc", Language::kCpp},
      {"a.cpp", Language::kCpp},
      {"a.cxx", Language::kCpp},
      {"a.c++", Language::kCpp},
      {"a.hpp", Language::kCpp},
      {"a.hh", Language::kCpp},
      {"a.hxx", Language::kCpp},
      {"a.ipp", Language::kCpp},
      {"a.inl", Language::kCpp},
      {"a.tpp", Language::kCpp},
      {"a.py", Language::kPython},
      {"a.pyi", Language::kPython},
      {"a.js", Language::kJavaScript},
      {"a.mjs", Language::kJavaScript},
      {"a.cjs", Language::kJavaScript},
      {"a.jsx", Language::kJavaScript},
      {"a.ts", Language::kTypeScript},
      {"a.mts", Language::kTypeScript},
      {"a.cts", Language::kTypeScript},
      {"dir.x/a.tsx", Language::kTsx},
      {"a.go", Language::kGo},
      {"a.rs", Language::kRust},
      {"a.java", Language::kJava},
      {"README", Language::kText},
      {".bashrc", Language::kText},
      {"a.rb", Language::kText},
      {"a.C", Language::kText},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Route(c.path, false, nullptr).language, c.want) << c.path;
  }
  EXPECT_EQ(Route("x/y.h", false, nullptr).language, Language::kC);
  EXPECT_EQ(Route("x/y.h", true, nullptr).language, Language::kCpp);
}

TEST(RoutingTest, CppSourcePaths) {
  EXPECT_TRUE(IsCppSourcePath("src/a.cc"));
  EXPECT_TRUE(IsCppSourcePath("a.hpp"));
  EXPECT_FALSE(IsCppSourcePath("a.h"));
  EXPECT_FALSE(IsCppSourcePath("a.c"));
  EXPECT_FALSE(IsCppSourcePath("a.py"));
}

TEST(RoutingTest, CtagsMaps) {
  CtagsLanguages langs = CtagsLanguages::Parse(
      "#LANGUAGE      FILE-NAME-PATTERNS\n"
      "Unknown \n"
      "Lua      *.lua\n"
      "Make     [Mm]akefile GNUmakefile *.mak *.mk\n"
      "Ruby     *.rb *.ruby\n"
      "Other    *.rb\n");
  EXPECT_EQ(langs.Find("lib/a.rb"), "Ruby");  // the first mapping wins
  EXPECT_EQ(langs.Find("a.lua"), "Lua");
  EXPECT_EQ(langs.Find("sub/GNUmakefile"), "Make");
  EXPECT_EQ(langs.Find("a.txt"), "");
  Routing r = Route("scripts/x.lua", false, &langs);
  EXPECT_EQ(r.language, Language::kCtags);
  EXPECT_EQ(r.ctags_language, "Lua");
  // Grammar languages never go to ctags, even when ctags knows them.
  EXPECT_EQ(Route("a.cc", false, &langs).language, Language::kCpp);
  EXPECT_EQ(Route("notes.txt", false, &langs).language, Language::kText);
}

}  // namespace
}  // namespace trove::librarian::extract

#include "librarian/packs/includes.h"

#include <gtest/gtest.h>

#include "librarian/testing/temp_dir.h"

namespace trove::librarian::packs {
namespace {

TEST(IncludesTest, NormalizeLexically) {
  EXPECT_EQ(NormalizeLexically("a/./b/../c.h"), "a/c.h");
  EXPECT_EQ(NormalizeLexically("/w/x/../y"), "/w/y");
  EXPECT_EQ(NormalizeLexically("../x.h"), std::nullopt);
  EXPECT_EQ(NormalizeLexically("a/../../x.h"), std::nullopt);
}

TEST(IncludesTest, SplitCommandAndFlags) {
  const std::vector<std::string> args = IncludeResolver::SplitCommand(
      R"(g++ -Iinc -I "sp ace" -isystem third/x -iquote q '-Idir with' -DX=1 -c a.cc)");
  EXPECT_EQ(IncludeResolver::IncludeFlags(args),
            (std::vector<std::string>{"inc", "sp ace", "third/x", "q", "dir with"}));
}

TEST(IncludesTest, RelativeToIncluderFirst) {
  IncludeResolver r;
  const std::set<std::string> files = {"src/a.cc", "src/a.h", "include/a.h"};
  EXPECT_EQ(r.Resolve("src/a.cc", "a.h", files), "src/a.h");
  EXPECT_EQ(r.Resolve("src/a.cc", "../include/a.h", files), "include/a.h");
  EXPECT_EQ(r.Resolve("src/a.cc", "missing.h", files), std::nullopt);
  EXPECT_EQ(r.Resolve("src/a.cc", "/usr/include/stdio.h", files), std::nullopt);
}

// A compile database at build/: -I and -isystem per file, directories relative to the entry's
// `directory`, and flags leaving the workspace ignored.
TEST(IncludesTest, CompileCommandsFixture) {
  testing::TempDir dir;
  const std::string root = dir.path();
  dir.Write("build/compile_commands.json", R"([
    {"directory": ")" + root + R"(/build",
     "command": "c++ -I../include -isystem ../third_party/lib -I/usr/include -I../../outside -c ../src/main.cc",
     "file": "../src/main.cc"},
    {"directory": ")" + root + R"(",
     "arguments": ["c++", "-I", "other", "-c", "tools/t.cc"],
     "file": "tools/t.cc"}
  ])");
  const IncludeResolver r = IncludeResolver::Load(root);
  EXPECT_EQ(r.source(), "build/compile_commands.json");
  EXPECT_EQ(r.note(), "");
  EXPECT_EQ(r.entries(), 2u);
  EXPECT_EQ(r.DirsFor("src/main.cc"), (std::vector<std::string>{"include", "third_party/lib"}));
  EXPECT_EQ(r.DirsFor("tools/t.cc"), (std::vector<std::string>{"other"}));
  const std::set<std::string> files = {"src/main.cc", "include/config.h", "third_party/lib/z.h",
                                       "other/config.h", "tools/t.cc"};
  EXPECT_EQ(r.Resolve("src/main.cc", "config.h", files), "include/config.h");
  EXPECT_EQ(r.Resolve("src/main.cc", "z.h", files), "third_party/lib/z.h");
  EXPECT_EQ(r.Resolve("tools/t.cc", "config.h", files), "other/config.h");
  // A header not in the database uses every entry's directories, in first-seen order.
  EXPECT_EQ(r.Resolve("include/x.h", "z.h", files), "third_party/lib/z.h");
}

TEST(IncludesTest, RootDatabaseWinsAndMalformedIsIgnored) {
  testing::TempDir dir;
  dir.Write("compile_commands.json", "{not json");
  dir.Write("build/compile_commands.json", "[]");
  const IncludeResolver r = IncludeResolver::Load(dir.path());
  EXPECT_EQ(r.source(), "");
  EXPECT_NE(r.note().find("not a JSON array"), std::string::npos);
  testing::TempDir none;
  EXPECT_EQ(IncludeResolver::Load(none.path()).source(), "");
  EXPECT_EQ(IncludeResolver::Load(none.path()).note(), "");
}

}  // namespace
}  // namespace trove::librarian::packs

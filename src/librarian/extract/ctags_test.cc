// The universal-ctags fallback on languages without a grammar (docs/librarian.md §6.7).
#include "librarian/extract/ctags.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "librarian/extract/extract.h"

namespace trove::librarian::extract {
namespace {

using ::testing::ElementsAre;

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(TROVE_LIBRARIAN_TESTDATA) + "/extract/" + name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Describe(const FileFacts& facts) {
  std::vector<std::string> out;
  for (const Symbol& s : facts.symbols) {
    out.push_back(fmt::format("{} {} {} {}{}", SymbolKindName(s.kind), s.qualified_name,
                              s.start_line, s.end_line, s.end_known ? "" : "?"));
  }
  return out;
}

TEST(CtagsTest, ParsesTagLinesOnly) {
  CtagsTag tag;
  EXPECT_TRUE(ParseCtagsLine(
      R"({"_type": "tag", "name": "greet", "path": "a.rb", "pattern": "/^x$/", "language": "Ruby", "line": 9, "kind": "method", "scope": "Greeting.Greeter", "scopeKind": "class", "end": 11})",
      tag));
  EXPECT_EQ(tag.name, "greet");
  EXPECT_EQ(tag.line, 9u);
  EXPECT_EQ(tag.end, 11u);
  EXPECT_EQ(tag.scope, "Greeting.Greeter");
  EXPECT_FALSE(ParseCtagsLine(R"({"_type": "ptag", "name": "JSON_OUTPUT_VERSION"})", tag));
  EXPECT_FALSE(ParseCtagsLine("ctags: Warning: something", tag));
  EXPECT_FALSE(ParseCtagsLine(R"({"_type": "tag", "name": "x"})", tag));  // no line
}

TEST(CtagsTest, EndlessTagsRunToTheNextTag) {
  std::vector<CtagsTag> tags(2);
  tags[0].name = "a";
  tags[0].kind = "function";
  tags[0].line = 2;
  tags[1].name = "b";
  tags[1].kind = "function";
  tags[1].line = 5;
  tags.push_back(tags[1]);
  tags[2].name = "v";
  tags[2].kind = "variable";  // not a symbol kind
  tags[2].line = 3;
  FileFacts facts;
  SymbolsFromTags(tags, "x\nfunction a\n y\n z\nfunction b\n w\n", facts);
  EXPECT_THAT(Describe(facts), ElementsAre("function a 2 4?", "function b 5 6?"));
  EXPECT_EQ(facts.symbols[1].start_byte, 19u);  // "x\n" + "function a\n" + " y\n" + " z\n"
  EXPECT_EQ(facts.symbols[1].end_byte, 33u);
  EXPECT_EQ(facts.symbols[0].signature, "function a");
}

class CtagsExtractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = Extractor::Create({});
    ASSERT_TRUE(made.ok());
    extractor_ = std::move(made).value();
    if (extractor_->ctags() == nullptr) GTEST_SKIP() << "universal-ctags is not installed";
  }
  std::unique_ptr<Extractor> extractor_;
};

TEST_F(CtagsExtractTest, RubyWithoutAGrammar) {
  EXPECT_EQ(extractor_->ctags()->version(), "5.9");
  std::string src = ReadFixture("greeter.rb");
  Routing routing = extractor_->Route("lib/greeter.rb", false);
  ASSERT_EQ(routing.language, Language::kCtags);
  EXPECT_EQ(routing.ctags_language, "Ruby");
  auto facts = extractor_->Extract("lib/greeter.rb", src, routing);
  ASSERT_TRUE(facts.ok()) << facts.status().ToString();
  EXPECT_EQ(facts->language, "ruby");
  EXPECT_EQ(facts->extractor, "ctags@5.9");
  // ctags 5.9 gives Ruby tags an `end`.
  EXPECT_THAT(Describe(*facts),
              ElementsAre("namespace Greeting 3 13", "class Greeting.Greeter 4 12",
                          "method Greeting.Greeter.initialize 5 7",
                          "method Greeting.Greeter.greet 9 11", "method top_level_helper 15 17"));
  EXPECT_EQ(facts->symbols[2].signature, "def initialize(name)");
  EXPECT_EQ(facts->symbols[2].parent, 1);
  EXPECT_EQ(facts->symbols[1].parent, 0);
  // Chunks: one per non-namespace symbol, then the remaining top-level lines (a namespace's
  // own lines are not in any symbol chunk).
  ASSERT_EQ(facts->chunks.size(), 5u);
  EXPECT_EQ(facts->chunks.back().kind, ChunkKind::kFile);
  EXPECT_EQ(facts->chunks.back().text, "require \"json\"\nmodule Greeting\nend\n");
}

TEST_F(CtagsExtractTest, LuaWithoutAGrammar) {
  std::string src =
      "local M = {}\n"
      "\n"
      "function M.add(a, b)\n"
      "  return a + b\n"
      "end\n"
      "\n"
      "local function helper()\n"
      "  return 1\n"
      "end\n"
      "\n"
      "return M\n";
  auto facts = extractor_->Extract("m.lua", src, extractor_->Route("m.lua", false));
  ASSERT_TRUE(facts.ok()) << facts.status().ToString();
  EXPECT_EQ(facts->language, "lua");
  // Lua tags have no `end` in ctags 5.9: each runs to the line before the next tag, the last
  // to the end of the file.
  EXPECT_THAT(Describe(*facts), ElementsAre("function M.add 3 6?", "function helper 7 11?"));
}

TEST_F(CtagsExtractTest, NoSymbolsFallsBackToText) {
  auto facts =
      extractor_->Extract("x.rb", "# just a comment\nputs 1\n", extractor_->Route("x.rb", false));
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->extractor, "text");
  ASSERT_EQ(facts->chunks.size(), 1u);
  EXPECT_EQ(facts->chunks[0].kind, ChunkKind::kWindow);
  EXPECT_THAT(facts->notes, ElementsAre("ctags: no symbols: plain text"));
}

TEST(CtagsBatchTest, BatchesAndRetriesFileByFile) {
  auto ctags = Ctags::Create();
  if (!ctags.ok()) GTEST_SKIP() << "universal-ctags is not installed";
  char dir[] = "/tmp/trove_ctags_batch_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::vector<std::string> paths;
  for (int i = 0; i < 3; ++i) {
    paths.push_back(fmt::format("{}/f{}.rb", dir, i));
    std::ofstream(paths.back()) << fmt::format("def m{}\nend\n", i);
  }
  auto results = (*ctags)->TagFilesBatched(paths, 0);
  ASSERT_EQ(results.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(results[i].status.ok());
    ASSERT_EQ(results[i].tags.size(), 1u);
    EXPECT_EQ(results[i].tags[0].name, fmt::format("m{}", i));
  }
  // A path with a newline fails its batch; the retry isolates it.
  paths.insert(paths.begin() + 1, std::string(dir) + "/bad\nname.rb");
  results = (*ctags)->TagFilesBatched(paths, 0);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[1].status.code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(results[0].tags.size(), 1u);
  EXPECT_EQ(results[3].tags.size(), 1u);
  EXPECT_EQ(results[3].tags[0].name, "m2");
  for (int i = 0; i < 3; ++i) std::remove(fmt::format("{}/f{}.rb", dir, i).c_str());
  rmdir(dir);
}

TEST(CtagsMissingTest, MissingProgramMeansText) {
  ExtractorOptions options;
  options.ctags_program = "/nonexistent/trove-no-ctags";
  auto made = Extractor::Create(options);
  ASSERT_TRUE(made.ok());
  EXPECT_EQ((*made)->ctags(), nullptr);
  Routing routing = (*made)->Route("a.rb", false);
  EXPECT_EQ(routing.language, Language::kText);
  auto facts = (*made)->Extract("a.rb", "def f\nend\n", routing);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->extractor, "text");
  EXPECT_FALSE(Ctags::Create("/nonexistent/trove-no-ctags").ok());
}

TEST(CtagsTimeoutTest, SlowProgramIsKilled) {
  // ~900 KB of Ruby cannot be tagged in 1 ms: the run is killed and reported, not waited for.
  auto ctags = Ctags::Create();
  if (!ctags.ok()) GTEST_SKIP() << "universal-ctags is not installed";
  std::string big;
  for (int i = 0; i < 50000; ++i) big += fmt::format("def f{}\n  {}\nend\n", i, i);
  char dir[] = "/tmp/trove_ctags_test_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string file = std::string(dir) + "/big.rb";
  { std::ofstream(file) << big; }
  auto tags = (*ctags)->TagFiles({file}, 1000, "Ruby");  // 1 ms
  std::remove(file.c_str());
  rmdir(dir);
  ASSERT_FALSE(tags.ok());
  EXPECT_EQ(tags.status().code(), base::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace trove::librarian::extract

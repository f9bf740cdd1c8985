// Plain-text fallback and chunk building.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "librarian/extract/chunks.h"
#include "librarian/extract/extract.h"

namespace trove::librarian::extract {
namespace {

std::string NumberedLines(int n) {
  std::string s;
  for (int i = 1; i <= n; ++i) s += fmt::format("line {}\n", i);
  return s;
}

TEST(TextTest, WindowsOfSixtyOverlappingByTen) {
  FileFacts facts;
  BuildWindows("docs/notes.txt", NumberedLines(130), facts);
  ASSERT_EQ(facts.chunks.size(), 3u);
  EXPECT_EQ(facts.line_count, 130u);
  EXPECT_EQ(facts.chunks[0].start_line, 1u);
  EXPECT_EQ(facts.chunks[0].end_line, 60u);
  EXPECT_EQ(facts.chunks[1].start_line, 51u);
  EXPECT_EQ(facts.chunks[1].end_line, 110u);
  EXPECT_EQ(facts.chunks[2].start_line, 101u);
  EXPECT_EQ(facts.chunks[2].end_line, 130u);
  EXPECT_EQ(facts.chunks[0].name, "notes.txt");
  EXPECT_TRUE(facts.chunks[1].text.starts_with("line 51\n"));
  EXPECT_TRUE(facts.chunks[1].text.ends_with("line 110\n"));
}

TEST(TextTest, EdgeSizes) {
  FileFacts empty;
  BuildWindows("e", "", empty);
  EXPECT_TRUE(empty.chunks.empty());
  FileFacts exact;
  BuildWindows("x", NumberedLines(60), exact);
  ASSERT_EQ(exact.chunks.size(), 1u);
  FileFacts one_more;
  BuildWindows("x", NumberedLines(61), one_more);
  ASSERT_EQ(one_more.chunks.size(), 2u);
  EXPECT_EQ(one_more.chunks[1].start_line, 51u);
  EXPECT_EQ(one_more.chunks[1].end_line, 61u);
  FileFacts no_newline;
  BuildWindows("x", "a\nb", no_newline);
  ASSERT_EQ(no_newline.chunks.size(), 1u);
  EXPECT_EQ(no_newline.chunks[0].end_line, 2u);
  EXPECT_EQ(no_newline.chunks[0].text, "a\nb");
}

TEST(TextTest, UnknownFilesAreText) {
  auto made = Extractor::Create({});
  ASSERT_TRUE(made.ok());
  std::ifstream in(std::string(TROVE_LIBRARIAN_TESTDATA) + "/extract/notes.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  Routing routing = (*made)->Route("notes.txt", false);
  EXPECT_EQ(routing.language, Language::kText);
  auto facts = (*made)->Extract("notes.txt", ss.str(), routing);
  ASSERT_TRUE(facts.ok());
  EXPECT_EQ(facts->language, "text");
  EXPECT_EQ(facts->extractor, "text");
  EXPECT_TRUE(facts->symbols.empty());
  ASSERT_EQ(facts->chunks.size(), 1u);
  EXPECT_EQ(facts->chunks[0].start_line, 1u);
  EXPECT_EQ(facts->chunks[0].end_line, 2u);
  EXPECT_EQ(facts->chunks[0].text, ss.str());
}

TEST(ChunksTest, FileChunkHoldsOnlyUncoveredLines) {
  FileFacts facts;
  Symbol s;
  s.name = "f";
  s.qualified_name = "f";
  s.start_line = 2;
  s.end_line = 3;
  facts.symbols.push_back(s);
  BuildChunks("a.c", "#include <x>\nint f() {\n}\n\nint g;\n", facts);
  ASSERT_EQ(facts.chunks.size(), 2u);
  EXPECT_EQ(facts.chunks[0].text, "int f() {\n}\n");
  EXPECT_EQ(facts.chunks[1].kind, ChunkKind::kFile);
  EXPECT_EQ(facts.chunks[1].text, "#include <x>\nint g;\n");
  EXPECT_EQ(facts.chunks[1].start_line, 1u);
  EXPECT_EQ(facts.chunks[1].end_line, 5u);
}

}  // namespace
}  // namespace trove::librarian::extract

#include "kodo/source/source_buffer.h"

#include <gtest/gtest.h>

namespace trove::kodo {
namespace {

SourceBuffer Make(std::string text) {
  Result<SourceBuffer> buffer = SourceBuffer::Create(7, "t.ko", std::move(text));
  EXPECT_TRUE(buffer.ok());
  return std::move(buffer).value();
}

TEST(SourceBufferTest, HoldsNameTextAndId) {
  SourceBuffer b = Make("abc");
  EXPECT_EQ(b.id(), 7u);
  EXPECT_EQ(b.name(), "t.ko");
  EXPECT_EQ(b.text(), "abc");
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(b.Text(b.Range(1, 3)), "bc");
  EXPECT_EQ(b.Range(1, 3), (SourceRange{.file = 7, .begin = 1, .end = 3}));
}

TEST(SourceBufferTest, EmptyFileHasOneLine) {
  SourceBuffer b = Make("");
  EXPECT_EQ(b.line_count(), 1u);
  EXPECT_EQ(b.Locate(0), (LineColumn{1, 1}));
}

TEST(SourceBufferTest, LinesAndColumnsAreOneBased) {
  SourceBuffer b = Make("ab\ncd\n\nx");
  EXPECT_EQ(b.line_count(), 4u);
  EXPECT_EQ(b.Locate(0), (LineColumn{1, 1}));
  EXPECT_EQ(b.Locate(1), (LineColumn{1, 2}));
  EXPECT_EQ(b.Locate(2), (LineColumn{1, 3}));  // the '\n' itself ends line 1
  EXPECT_EQ(b.Locate(3), (LineColumn{2, 1}));
  EXPECT_EQ(b.Locate(6), (LineColumn{3, 1}));
  EXPECT_EQ(b.Locate(7), (LineColumn{4, 1}));
  EXPECT_EQ(b.Locate(8), (LineColumn{4, 2}));  // end of text
}

TEST(SourceBufferTest, ColumnsCountCharactersNotBytes) {
  // "é" is 2 bytes, "€" 3, "😀" 4 (docs/kodo.md §4.1: columns count Unicode scalar values).
  SourceBuffer b = Make("é€😀x\n  ü=1");
  EXPECT_EQ(b.Locate(0), (LineColumn{1, 1}));
  EXPECT_EQ(b.Locate(2), (LineColumn{1, 2}));   // €
  EXPECT_EQ(b.Locate(5), (LineColumn{1, 3}));   // 😀
  EXPECT_EQ(b.Locate(9), (LineColumn{1, 4}));   // x
  EXPECT_EQ(b.Locate(13), (LineColumn{2, 3}));  // ü
  EXPECT_EQ(b.Locate(15), (LineColumn{2, 4}));  // =
  // An offset inside a character maps to that character.
  EXPECT_EQ(b.Locate(6), (LineColumn{1, 3}));
  EXPECT_EQ(b.Locate(8), (LineColumn{1, 3}));
}

TEST(SourceBufferTest, CrlfLineEndings) {
  SourceBuffer b = Make("a\r\nbc\r\nd");
  EXPECT_EQ(b.line_count(), 3u);
  EXPECT_EQ(b.Locate(1), (LineColumn{1, 2}));  // '\r' is the last character of line 1
  EXPECT_EQ(b.Locate(3), (LineColumn{2, 1}));
  EXPECT_EQ(b.Locate(4), (LineColumn{2, 2}));
  EXPECT_EQ(b.Locate(7), (LineColumn{3, 1}));
}

TEST(SourceBufferTest, LoneCarriageReturnIsNotALineBreak) {
  SourceBuffer b = Make("a\rb");
  EXPECT_EQ(b.line_count(), 1u);
  EXPECT_EQ(b.Locate(2), (LineColumn{1, 3}));
}

TEST(SourceBufferTest, InvalidUtf8CountsOneColumnPerLeadingByte) {
  SourceBuffer b = Make(
      "\xff\xfe"
      "a");
  EXPECT_EQ(b.Locate(2), (LineColumn{1, 3}));
}

TEST(SourceBufferTest, SizeLimitIsEnforced) {
  EXPECT_TRUE(SourceBuffer::Create(0, "ok.ko", "12345", 5).ok());
  Result<SourceBuffer> big = SourceBuffer::Create(0, "big.ko", "123456", 5);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), base::StatusCode::kResourceExhausted);
  EXPECT_EQ(big.status().message(), "big.ko: source is 6 bytes, more than the 5 allowed");
}

}  // namespace
}  // namespace trove::kodo

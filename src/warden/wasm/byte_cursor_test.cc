#include "warden/wasm/byte_cursor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

namespace trove::warden::wasm {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<std::uint8_t>;

TEST(ByteCursorTest, ReadsUnsignedLeb) {
  Bytes b = {0x00, 0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f};
  ByteCursor c(b);
  EXPECT_EQ(*c.ReadVarU32("a"), 0u);
  EXPECT_EQ(*c.ReadVarU32("b"), 127u);
  EXPECT_EQ(*c.ReadVarU32("c"), 128u);
  EXPECT_EQ(*c.ReadVarU32("d"), 0xffffffffu);
  EXPECT_TRUE(c.empty());
}

TEST(ByteCursorTest, AcceptsPaddedLebWithinMaxLength) {
  Bytes b = {0x80, 0x80, 0x80, 0x80, 0x00};
  ByteCursor c(b);
  EXPECT_EQ(*c.ReadVarU32("x"), 0u);
}

TEST(ByteCursorTest, RejectsOverlongU32) {
  Bytes b = {0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  ByteCursor c(b, 0x10);
  auto r = c.ReadVarU32("section size");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::StatusCode::kMalformed);
  EXPECT_EQ(r.status().message(), "offset 0x10 (16): section size: LEB128 longer than 5 bytes");
}

TEST(ByteCursorTest, RejectsU32UnusedBits) {
  Bytes b = {0xff, 0xff, 0xff, 0xff, 0x1f};
  ByteCursor c(b);
  auto r = c.ReadVarU32("x");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("overflows 32 bits"));
}

TEST(ByteCursorTest, RejectsTruncatedLeb) {
  Bytes b = {0x80, 0x80};
  ByteCursor c(b, 0x20, "code section");
  auto r = c.ReadVarU32("function body size");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "offset 0x20 (32): function body size: LEB128 runs past the end of the code section");
}

TEST(ByteCursorTest, ReadsSignedLeb) {
  Bytes b = {0x7f, 0x80, 0x7f, 0x80, 0x80, 0x80, 0x80, 0x78, 0xff, 0xff, 0xff, 0xff, 0x07};
  ByteCursor c(b);
  EXPECT_EQ(*c.ReadVarS32("a"), -1);
  EXPECT_EQ(*c.ReadVarS32("b"), -128);
  EXPECT_EQ(*c.ReadVarS32("c"), INT32_MIN);
  EXPECT_EQ(*c.ReadVarS32("d"), INT32_MAX);
}

TEST(ByteCursorTest, RejectsS32OutOfRange) {
  // 0x08 in the fifth byte sets bit 31 without sign-extending the unused bits.
  Bytes b = {0x80, 0x80, 0x80, 0x80, 0x08};
  ByteCursor c(b);
  auto r = c.ReadVarS32("i32.const");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("signed LEB128 overflows 32 bits"));
}

TEST(ByteCursorTest, ReadsS64Extremes) {
  Bytes b = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f,
             0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00};
  ByteCursor c(b);
  EXPECT_EQ(*c.ReadVarS64("a"), INT64_MIN);
  EXPECT_EQ(*c.ReadVarS64("b"), INT64_MAX);
}

TEST(ByteCursorTest, RejectsS64AndU64Overflow) {
  Bytes s = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
  ByteCursor c(s);
  EXPECT_FALSE(c.ReadVarS64("a").ok());
  Bytes u = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  ByteCursor d(u);
  EXPECT_FALSE(d.ReadVarU64("b").ok());
  Bytes ok = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  ByteCursor e(ok);
  EXPECT_EQ(*e.ReadVarU64("c"), UINT64_MAX);
}

TEST(ByteCursorTest, ReadsS33) {
  Bytes b = {0x40, 0xff, 0xff, 0xff, 0xff, 0x0f};
  ByteCursor c(b);
  EXPECT_EQ(*c.ReadVarS33("a"), -64);
  EXPECT_EQ(*c.ReadVarS33("b"), 0xffffffffLL);
}

TEST(ByteCursorTest, TakeIsBoundedAndNamesTheContainer) {
  Bytes b = {1, 2, 3, 4, 5};
  ByteCursor c(b, 0x100, "code section");
  auto sub = c.Take(2, "function body");
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->offset(), 0x100u);
  EXPECT_EQ(sub->remaining(), 2u);
  EXPECT_EQ(c.offset(), 0x102u);
  ASSERT_TRUE(sub->ReadU8("a").ok());
  ASSERT_TRUE(sub->ReadU8("b").ok());
  auto past = sub->ReadU8("c");
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().message(), "offset 0x102 (258): c: unexpected end of function body");
  auto big = c.Take(4096, "function body");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(
      big.status().message(),
      "offset 0x102 (258): function body: size 4096 exceeds the 3 bytes left in the code section");
}

TEST(ByteCursorTest, ReadsFixedWidth) {
  Bytes b = {0x01, 0x02, 0x03, 0x04, 1, 0, 0, 0, 0, 0, 0, 0x80};
  ByteCursor c(b);
  EXPECT_EQ(*c.ReadFixedU32("a"), 0x04030201u);
  EXPECT_EQ(*c.ReadFixedU64("b"), 0x8000000000000001ull);
}

TEST(ByteCursorTest, NamesMustBeUtf8) {
  Bytes good = {0x03, 'a', 0xc3, 0xa9};
  ByteCursor c(good);
  EXPECT_EQ(*c.ReadName("n"), "a\xc3\xa9");
  Bytes bad = {0x02, 0xc0, 0x80};  // overlong NUL
  ByteCursor d(bad);
  auto r = d.ReadName("export name");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "offset 0x1 (1): export name: name is not valid UTF-8");
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
  EXPECT_TRUE(IsValidUtf8("\xf0\x9f\x98\x80"));
}

TEST(ByteCursorTest, CountIsCheckedAgainstBytesLeft) {
  Bytes b = {0x05, 0x00, 0x00};
  ByteCursor c(b);
  auto r = c.ReadCount("import count", 2);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("offset 0x0 (0): import count: count 5 exceeds"));
  ByteCursor d(b);
  EXPECT_FALSE(d.ReadCount("x", 1).ok());
  Bytes ok = {0x02, 0x00, 0x00};
  ByteCursor e(ok);
  EXPECT_EQ(*e.ReadCount("x", 1), 2u);
}

}  // namespace
}  // namespace trove::warden::wasm

#include "base/hash.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace trove::base {
namespace {

// FIPS 180-2 appendix B and the empty message.
TEST(Sha256Test, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, DigestMatchesHex) {
  const Sha256Digest digest = Sha256("abc");
  EXPECT_EQ(digest[0], 0xba);
  EXPECT_EQ(digest[31], 0xad);
  EXPECT_EQ(ToHex(digest), Sha256Hex("abc"));
}

TEST(Sha256Test, HashesEmbeddedNulBytes) {
  const std::string with_nul("a\0b", 3);
  EXPECT_NE(Sha256Hex(with_nul), Sha256Hex("a"));
  EXPECT_NE(Sha256Hex(with_nul), Sha256Hex(std::string("a\0c", 3)));
}

// Values from xxHash's sanity checks and python-xxhash's README.
TEST(XxHashTest, KnownVectors) {
  EXPECT_EQ(XxHash64(""), 0xef46db3751d8e999u);
  EXPECT_EQ(XxHash64("xxhash"), 0x32dd38952c4bc720u);
  EXPECT_EQ(XxHash64("xxhash", 20141025), 0xb559b98d844e0635u);
  EXPECT_EQ(XxHash64("I want an unsigned 64-bit seed!", 1), 0xce5087f12470d961u);
  EXPECT_EQ(XxHash3_64(""), 0x2d06800538d394c2u);
}

TEST(XxHashTest, StableAndSensitive) {
  const std::string text = "The quick brown fox jumps over the lazy dog";
  EXPECT_EQ(XxHash64(text), XxHash64(std::string(text)));
  EXPECT_EQ(XxHash3_64(text), XxHash3_64(std::string(text)));
  EXPECT_NE(XxHash64(text), XxHash64(text, 1));
  EXPECT_NE(XxHash3_64(text), XxHash3_64(text + "."));
  EXPECT_NE(XxHash3_64(text), XxHash64(text));
  // A view into the middle of a buffer hashes only its own bytes.
  EXPECT_EQ(XxHash3_64(std::string_view(text).substr(4, 5)), XxHash3_64("quick"));
}

TEST(HexTest, LowerCaseTwoDigitsPerByte) {
  const std::vector<std::uint8_t> bytes = {0x00, 0x01, 0x7f, 0x80, 0xab, 0xff};
  EXPECT_EQ(ToHex(bytes), "00017f80abff");
  EXPECT_EQ(ToHex(std::span<const std::uint8_t>()), "");
  EXPECT_EQ(ToHex(std::string_view("\x00\xfe", 2)), "00fe");
  EXPECT_EQ(ToHex(std::string_view("")), "");
}

TEST(ConstantTimeEqualTest, Bytes) {
  const std::vector<std::uint8_t> a = {1, 2, 3, 4};
  const std::vector<std::uint8_t> same = {1, 2, 3, 4};
  const std::vector<std::uint8_t> last_differs = {1, 2, 3, 5};
  const std::vector<std::uint8_t> first_differs = {0, 2, 3, 4};
  const std::vector<std::uint8_t> shorter = {1, 2, 3};
  EXPECT_TRUE(ConstantTimeEqual(a, same));
  EXPECT_FALSE(ConstantTimeEqual(a, last_differs));
  EXPECT_FALSE(ConstantTimeEqual(a, first_differs));
  EXPECT_FALSE(ConstantTimeEqual(a, shorter));
  EXPECT_FALSE(ConstantTimeEqual(shorter, a));
  EXPECT_TRUE(ConstantTimeEqual(std::span<const std::uint8_t>(), std::span<const std::uint8_t>()));
  EXPECT_FALSE(ConstantTimeEqual(std::span<const std::uint8_t>(), a));
}

TEST(ConstantTimeEqualTest, Strings) {
  EXPECT_TRUE(ConstantTimeEqual("secret-token", "secret-token"));
  EXPECT_FALSE(ConstantTimeEqual("secret-token", "secret-tokex"));
  EXPECT_FALSE(ConstantTimeEqual("secret-token", "secret-toke"));
  EXPECT_FALSE(ConstantTimeEqual("secret-token", ""));
  EXPECT_TRUE(ConstantTimeEqual(std::string_view(), std::string_view("")));
  EXPECT_FALSE(ConstantTimeEqual(std::string("a\0b", 3), std::string("a\0c", 3)));
}

TEST(ConstantTimeEqualTest, Digests) {
  EXPECT_TRUE(ConstantTimeEqual(Sha256("x"), Sha256("x")));
  EXPECT_FALSE(ConstantTimeEqual(Sha256("x"), Sha256("y")));
}

TEST(RandomHexTest, LengthAlphabetAndUniqueness) {
  EXPECT_EQ(RandomHex(0), "");
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string token = RandomHex(16);
    ASSERT_EQ(token.size(), 32u);
    for (char c : token) {
      EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f')) << c;
    }
    seen.insert(token);
  }
  EXPECT_EQ(seen.size(), 100u);  // 128-bit collisions do not happen
  EXPECT_EQ(RandomHex(1000).size(), 2000u);
}

// RFC 4648 section 10.
TEST(Base64Test, Rfc4648Vectors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : cases) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    Result<std::string> decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded.ok()) << encoded << ": " << decoded.status().ToString();
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(Base64Test, UrlVectorsHaveNoPadding) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", ""},           {"f", "Zg"},          {"fo", "Zm8"},          {"foo", "Zm9v"},
      {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : cases) {
    EXPECT_EQ(Base64UrlEncode(plain), encoded);
    Result<std::string> decoded = Base64UrlDecode(encoded);
    ASSERT_TRUE(decoded.ok()) << encoded << ": " << decoded.status().ToString();
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(Base64Test, AlphabetsDifferOnlyInTheLastTwoCharacters) {
  const std::string bytes("\xfb\xff\xbf", 3);
  EXPECT_EQ(Base64Encode(bytes), "+/+/");
  EXPECT_EQ(Base64UrlEncode(bytes), "-_-_");
  EXPECT_EQ(*Base64Decode("+/+/"), bytes);
  EXPECT_EQ(*Base64UrlDecode("-_-_"), bytes);
  EXPECT_FALSE(Base64Decode("-_-_").ok());
  EXPECT_FALSE(Base64UrlDecode("+/+/").ok());
}

TEST(Base64Test, RoundTripsEveryByteAndLength) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (std::size_t len = 0; len <= all.size(); len += 7) {
    const std::string plain = all.substr(0, len);
    EXPECT_EQ(*Base64Decode(Base64Encode(plain)), plain);
    EXPECT_EQ(*Base64UrlDecode(Base64UrlEncode(plain)), plain);
  }
}

TEST(Base64Test, DecodeRejectsBadInputAndSaysWhere) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Zg=", "base64: length 3 is not a multiple of 4"},
      {"Zm9", "base64: length 3 is not a multiple of 4"},
      {"Zm9v\n", "base64: length 5 is not a multiple of 4"},
      {"Zm 9", "base64: offset 2: invalid character ' '"},
      {"Zm\n9", "base64: offset 2: invalid character 0x0a"},
      {"Zm9*", "base64: offset 3: invalid character '*'"},
      {"Z===", "base64: offset 1: invalid character '='"},
      {"====", "base64: offset 0: invalid character '='"},
      {"Zg=A", "base64: offset 2: invalid character '='"},
      {"Zg==Zg==", "base64: offset 2: invalid character '='"},
      {"Zh==", "base64: offset 1: non-zero unused bits in the last character"},
      {"Zm9=", "base64: offset 2: non-zero unused bits in the last character"},
  };
  for (const auto& [text, message] : cases) {
    Result<std::string> decoded = Base64Decode(text);
    ASSERT_FALSE(decoded.ok()) << text;
    EXPECT_EQ(decoded.status().code(), StatusCode::kMalformed);
    EXPECT_EQ(decoded.status().message(), message);
  }
}

TEST(Base64Test, UrlDecodeRejectsPaddingAndBadLengths) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"Zg==", "base64url: offset 2: invalid character '='"},
      {"Z", "base64url: length 1 cannot be unpadded base64"},
      {"Zm9vY", "base64url: length 5 cannot be unpadded base64"},
      {"Zh", "base64url: offset 1: non-zero unused bits in the last character"},
      {"a+b", "base64url: offset 1: invalid character '+'"},
  };
  for (const auto& [text, message] : cases) {
    Result<std::string> decoded = Base64UrlDecode(text);
    ASSERT_FALSE(decoded.ok()) << text;
    EXPECT_EQ(decoded.status().code(), StatusCode::kMalformed);
    EXPECT_EQ(decoded.status().message(), message);
  }
}

}  // namespace
}  // namespace trove::base

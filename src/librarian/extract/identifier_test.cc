#include "librarian/extract/identifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace trove::librarian::extract {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(AllWordsTextTest, KeepsWordsThatDoNotSplitUnlikeSubwordText) {
  EXPECT_EQ(AllWordsText("Decision: the Settings header, read_option"),
            "decision the settings header read option");
  EXPECT_EQ(SubwordText("Decision: the Settings header"), "");
  EXPECT_EQ(AllWordsText("read read_port read"), "read port");
  EXPECT_EQ(AllWordsText("alpha beta", 5), "alpha");
}

TEST(SplitIdentifierTest, SpecCases) {
  EXPECT_THAT(SplitIdentifier("parseHttp"), ElementsAre("parse", "http"));
  EXPECT_THAT(SplitIdentifier("HTTPServer"), ElementsAre("http", "server"));
  EXPECT_THAT(SplitIdentifier("utf8Decode"), ElementsAre("utf", "decode"));  // "8" dropped
  EXPECT_THAT(SplitIdentifier("parse_http_request"), ElementsAre("parse", "http", "request"));
}

TEST(SplitIdentifierTest, Separators) {
  EXPECT_THAT(SplitIdentifier("ns::Widget::~Widget"), ElementsAre("ns", "widget", "widget"));
  EXPECT_THAT(SplitIdentifier("src/net/HttpClient.cc"),
              ElementsAre("src", "net", "http", "client", "cc"));
  EXPECT_THAT(SplitIdentifier("kebab-case-name"), ElementsAre("kebab", "case", "name"));
  EXPECT_THAT(SplitIdentifier("a.b.cde"), ElementsAre("cde"));
}

TEST(SplitIdentifierTest, AcronymsAndDigits) {
  EXPECT_THAT(SplitIdentifier("getHTTPResponseCode"),
              ElementsAre("get", "http", "response", "code"));
  EXPECT_THAT(SplitIdentifier("XMLHttpRequest"), ElementsAre("xml", "http", "request"));
  EXPECT_THAT(SplitIdentifier("IOError"), ElementsAre("io", "error"));
  EXPECT_THAT(SplitIdentifier("sha256Hex"), ElementsAre("sha", "256", "hex"));
  EXPECT_THAT(SplitIdentifier("base64UrlEncode"), ElementsAre("base", "64", "url", "encode"));
  EXPECT_THAT(SplitIdentifier("ALL_CAPS_42"), ElementsAre("all", "caps", "42"));
  EXPECT_THAT(SplitIdentifier("kMaxFiles"), ElementsAre("max", "files"));  // "k" dropped
}

TEST(SplitIdentifierTest, DegenerateInputs) {
  EXPECT_THAT(SplitIdentifier(""), IsEmpty());
  EXPECT_THAT(SplitIdentifier("___"), IsEmpty());
  EXPECT_THAT(SplitIdentifier("x"), IsEmpty());
  EXPECT_THAT(SplitIdentifier("a_b_c"), IsEmpty());
  // Non-ASCII letters are kept whole and never split inside.
  EXPECT_THAT(SplitIdentifier("größeBerechnen"), ElementsAre("größe", "berechnen"));
}

TEST(IndexWordsTest, WholeThenPieces) {
  EXPECT_THAT(IndexWords("parseHttp"), ElementsAre("parsehttp", "parse", "http"));
  EXPECT_THAT(IndexWords("parse"), ElementsAre("parse"));
  EXPECT_THAT(IndexWords("parse_http"), ElementsAre("parse", "http"));
  EXPECT_THAT(IndexWords("x"), IsEmpty());
}

TEST(SubwordTextTest, PiecesOfCompoundIdentifiersOnce) {
  EXPECT_EQ(SubwordText("int parseHttpRequest(x); parseHttpRequest(y); plain;"),
            "parse http request");
  EXPECT_EQ(SubwordText("a = load_config(); b = LoadConfig();"), "load config load config");
  EXPECT_EQ(SubwordText("nothing here"), "");
  EXPECT_EQ(SubwordText("fooBar bazQux", 7), "foo bar");
}

// SubwordText's definition as first written (a set of every identifier seen, SplitIdentifier
// per identifier), kept as the reference the faster implementation must match.
std::string ReferenceSubwordText(std::string_view text, std::size_t max_bytes) {
  auto ident_char = [](unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c >= 0x80 || c == '_';
  };
  std::string out;
  std::unordered_set<std::string_view> seen;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && !ident_char(static_cast<unsigned char>(text[i]))) ++i;
    std::size_t start = i;
    while (i < text.size() && ident_char(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) break;
    std::string_view ident = text.substr(start, i - start);
    if ((ident.front() >= '0' && ident.front() <= '9') || !seen.insert(ident).second) continue;
    std::vector<std::string> pieces = SplitIdentifier(ident);
    if (pieces.size() < 2) continue;
    for (const std::string& p : pieces) {
      if (out.size() + p.size() + 1 > max_bytes) return out;
      if (!out.empty()) out.push_back(' ');
      out += p;
    }
  }
  return out;
}

TEST(SubwordTextTest, MatchesTheReferenceOnRandomText) {
  // Letters of both cases, digits, separators and the bytes of a UTF-8 letter, so every split
  // rule, repeats (a small alphabet) and the byte limit all occur.
  const std::string alphabet = "aBcDxY09_ .:(\n\xc3\xa9";
  std::mt19937 rng(20261124);
  for (int round = 0; round < 20000; ++round) {
    std::string text(rng() % 80, ' ');
    for (char& c : text) c = alphabet[rng() % alphabet.size()];
    std::size_t max_bytes = round % 3 == 0 ? 1 + rng() % 40 : std::size_t{1} << 16;
    ASSERT_EQ(SubwordText(text, max_bytes), ReferenceSubwordText(text, max_bytes))
        << "text: " << text << " max_bytes: " << max_bytes;
  }
}

TEST(SubwordTextTest, ManyDistinctIdentifiersOnceEach) {
  // Enough distinct compound identifiers to grow the set of seen ones several times.
  std::string text;
  for (int i = 0; i < 3000; ++i)
    text += "fooBar" + std::string(1, 'a' + i % 26) + "Baz" + std::to_string(i) + "qux; ";
  text += text;  // every identifier twice
  std::string once = ReferenceSubwordText(text, std::size_t{1} << 20);
  EXPECT_EQ(SubwordText(text, std::size_t{1} << 20), once);
  EXPECT_EQ(SubwordText(text), ReferenceSubwordText(text, std::size_t{1} << 16));
}

}  // namespace
}  // namespace trove::librarian::extract

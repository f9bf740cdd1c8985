#include "librarian/extract/identifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trove::librarian::extract {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

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

}  // namespace
}  // namespace trove::librarian::extract

#include "warden/glue/js_lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trove::warden::glue {
namespace {

// Returns "kind:text" for every token up to kEnd; kinds are I S T N R P C.
std::vector<std::string> Lex(std::string_view js) {
  static constexpr char kKinds[] = "ISTNRPCE";
  std::vector<std::string> out;
  JsLexer lexer(js);
  for (Token t = lexer.Next(); t.kind != TokenKind::kEnd; t = lexer.Next()) {
    out.push_back(std::string(1, kKinds[static_cast<int>(t.kind)]) + ":" + std::string(t.text));
  }
  return out;
}

using V = std::vector<std::string>;

TEST(JsLexerTest, IdentifiersNumbersPunctuators) {
  EXPECT_EQ(Lex("var $a_1 = b.c>>>=0x1F;"),
            (V{"I:var", "I:$a_1", "P:=", "I:b", "P:.", "I:c", "P:>>>=", "N:0x1F", "P:;"}));
  EXPECT_EQ(Lex("a=>b===c!==d?.e??f"), (V{"I:a", "P:=>", "I:b", "P:===", "I:c", "P:!==", "I:d",
                                          "P:?.", "I:e", "P:??", "I:f"}));
  EXPECT_EQ(Lex("x?.5:1e-5"), (V{"I:x", "P:?", "N:.5", "P::", "N:1e-5"}));
  EXPECT_EQ(Lex("0x1e-5"), (V{"N:0x1e", "P:-", "N:5"}));
}

TEST(JsLexerTest, StringsKeepTheirContents) {
  EXPECT_EQ(Lex(R"(a["x y"]+'it\'s')"), (V{"I:a", "P:[", "S:x y", "P:]", "P:+", R"(S:it\'s)"}));
  // A string ends at a line break even without its quote.
  EXPECT_EQ(Lex("'abc\nd"), (V{"S:abc", "I:d"}));
}

TEST(JsLexerTest, CommentsAreTokens) {
  EXPECT_EQ(Lex("a // one\n/* two */ b"), (V{"I:a", "C: one", "C: two ", "I:b"}));
  EXPECT_EQ(Lex("a /* open"), (V{"I:a", "C: open"}));
}

TEST(JsLexerTest, RegexOrDivision) {
  EXPECT_EQ(Lex("a / b / c"), (V{"I:a", "P:/", "I:b", "P:/", "I:c"}));
  EXPECT_EQ(Lex("x = /\"[/]\\//g; y"), (V{"I:x", "P:=", "R:/\"[/]\\//g", "P:;", "I:y"}));
  EXPECT_EQ(Lex("return /'/.test(s)"),
            (V{"I:return", "R:/'/", "P:.", "I:test", "P:(", "I:s", "P:)"}));
  EXPECT_EQ(Lex("(a)/2"), (V{"P:(", "I:a", "P:)", "P:/", "N:2"}));
}

TEST(JsLexerTest, TemplatesNest) {
  EXPECT_EQ(Lex("`a${b + `c${d}`}e` + f"),
            (V{"T:`a${", "I:b", "P:+", "T:`c${", "I:d", "T:}`", "T:}e`", "P:+", "I:f"}));
  // Braces inside a substitution do not close it.
  EXPECT_EQ(Lex("`${ {x: 1} }`"), (V{"T:`${", "P:{", "I:x", "P::", "N:1", "P:}", "T:}`"}));
  // Unterminated: the rest of the input is one piece.
  EXPECT_EQ(Lex("`abc"), (V{"T:`abc"}));
}

TEST(JsLexerTest, ArbitraryBytesNeverStall) {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  bytes += bytes;
  JsLexer lexer(bytes);
  std::size_t tokens = 0;
  for (Token t = lexer.Next(); t.kind != TokenKind::kEnd; t = lexer.Next()) {
    ASSERT_LE(t.offset, bytes.size());
    ASSERT_LT(++tokens, bytes.size() + 1);
  }
  // Deep template nesting is capped, not a crash.
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "`${";
  JsLexer deep_lexer(deep);
  while (deep_lexer.Next().kind != TokenKind::kEnd) {
  }
}

}  // namespace
}  // namespace trove::warden::glue

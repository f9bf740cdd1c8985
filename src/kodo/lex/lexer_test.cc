#include "kodo/lex/lexer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kodo/lex/token.h"

namespace trove::kodo::lex {
namespace {

using K = TokenKind;

// A source with ranges marked as `[[...]]` (docs/conventions.md §11); the markers are removed.
// Kōdo never uses `[[` or `]]` outside intent values, which these tests do not write.
struct Marked {
  std::string code;
  std::vector<SourceRange> ranges;
};

Marked Mark(std::string_view marked) {
  Marked out;
  std::vector<std::uint32_t> open;
  for (std::size_t i = 0; i < marked.size(); ++i) {
    if (marked.substr(i, 2) == "[[") {
      open.push_back(static_cast<std::uint32_t>(out.code.size()));
      ++i;
    } else if (marked.substr(i, 2) == "]]") {
      EXPECT_FALSE(open.empty());
      out.ranges.push_back(SourceRange{
          .file = 1, .begin = open.back(), .end = static_cast<std::uint32_t>(out.code.size())});
      open.pop_back();
      ++i;
    } else {
      out.code.push_back(marked[i]);
    }
  }
  return out;
}

SourceBuffer Buffer(std::string text) {
  Result<SourceBuffer> b = SourceBuffer::Create(1, "t.ko", std::move(text));
  EXPECT_TRUE(b.ok());
  return std::move(b).value();
}

LexResult LexOk(const SourceBuffer& source, const LexOptions& options = {}) {
  Result<LexResult> r = Lex(source, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : LexResult{};
}

// Lexes `text` and returns the kinds of its tokens, Eof excluded; expects no error.
std::vector<K> Kinds(std::string text) {
  SourceBuffer b = Buffer(std::move(text));
  LexResult r = LexOk(b);
  EXPECT_TRUE(r.errors.empty()) << b.text() << ": " << r.errors[0].message;
  std::vector<K> kinds;
  for (const Token& t : r.tokens) {
    if (t.kind != K::kEof) kinds.push_back(t.kind);
  }
  return kinds;
}

// Lexes `text`, which must give exactly one token before Eof and no error, and returns it.
Token One(std::string text) {
  SourceBuffer b = Buffer(text);
  LexResult r = LexOk(b);
  EXPECT_TRUE(r.errors.empty()) << text;
  EXPECT_EQ(r.tokens.size(), 2u) << text;
  if (r.tokens.size() != 2) return Token{};
  EXPECT_EQ(r.tokens[0].range, b.Range(0, b.size())) << text;
  return r.tokens[0];
}

std::string Message(std::uint32_t begin, std::uint32_t end) {
  return "lexer error: unexpected character at Span { start: " + std::to_string(begin) +
         ", end: " + std::to_string(end) + " }";
}

// Expects `marked` (one marked range) to stop with exactly one E0001 over that range.
void ExpectE0001(std::string_view marked, LexError::Reason reason) {
  Marked m = Mark(marked);
  ASSERT_EQ(m.ranges.size(), 1u);
  SourceBuffer b = Buffer(m.code);
  LexResult r = LexOk(b);
  ASSERT_EQ(r.errors.size(), 1u) << marked;
  const LexError& e = r.errors[0];
  EXPECT_EQ(e.code, "E0001");
  EXPECT_EQ(e.message, Message(m.ranges[0].begin, m.ranges[0].end)) << marked;
  EXPECT_EQ(e.range, m.ranges[0]) << marked;
  EXPECT_EQ(e.suggestion, "check for invalid characters in the source");
  EXPECT_EQ(e.reason, reason) << marked;
  ASSERT_FALSE(r.tokens.empty());
  EXPECT_EQ(r.tokens.back().kind, K::kEof);
  EXPECT_EQ(r.tokens.back().range, b.Range(b.size(), b.size()));
  // Lexing stopped at the error: no token starts at or after it, besides Eof.
  for (std::size_t i = 0; i + 1 < r.tokens.size(); ++i) {
    EXPECT_LE(r.tokens[i].range.end, e.range.begin) << marked;
  }
}

// Concatenates the texts of all tokens (trivia included).
std::string Concat(const SourceBuffer& b, const LexResult& r) {
  std::string out;
  for (const Token& t : r.tokens) out.append(b.Text(t.range));
  return out;
}

// ---- token kinds table ----

TEST(TokenKindsTest, DebugNamesAndSpellingsComeFromTheTable) {
  EXPECT_EQ(DebugName(K::kSelfValue), "SelfValue");
  EXPECT_EQ(Spelling(K::kSelfValue), "self");
  EXPECT_EQ(DebugName(K::kFatArrow), "FatArrow");
  EXPECT_EQ(Spelling(K::kFatArrow), "=>");
  EXPECT_EQ(DebugName(K::kIntLit), "IntLit");
  EXPECT_EQ(DebugName(K::kEof), "Eof");
  EXPECT_TRUE(IsContextualKeyword(K::kForall));
  EXPECT_FALSE(IsContextualKeyword(K::kFn));
  EXPECT_TRUE(IsKeyword(K::kTest));
  EXPECT_TRUE(IsPunct(K::kAt));
  EXPECT_TRUE(IsTrivia(K::kComment));
  EXPECT_FALSE(IsTrivia(K::kIdent));
}

TEST(TokenKindsTest, DebugNamesAreUnique) {
  std::set<std::string_view> names;
  for (int i = 0; i < kTokenKindCount; ++i) {
    EXPECT_TRUE(names.insert(DebugName(static_cast<K>(i))).second) << i;
  }
}

TEST(TokenKindsTest, EveryKeywordLexesAsItself) {
  int keywords = 0;
  for (int i = 0; i < kTokenKindCount; ++i) {
    const K kind = static_cast<K>(i);
    if (!IsKeyword(kind)) continue;
    ++keywords;
    EXPECT_EQ(One(std::string(Spelling(kind))).kind, kind) << Spelling(kind);
    EXPECT_EQ(LookupKeyword(Spelling(kind)), kind);
    // A longer word is an identifier.
    EXPECT_EQ(One(std::string(Spelling(kind)) + "_x").kind, K::kIdent);
  }
  EXPECT_EQ(keywords, 42);
}

TEST(TokenKindsTest, EveryPunctuationLexesAsItself) {
  int puncts = 0;
  for (int i = 0; i < kTokenKindCount; ++i) {
    const K kind = static_cast<K>(i);
    if (!IsPunct(kind)) continue;
    ++puncts;
    EXPECT_EQ(One(std::string(Spelling(kind))).kind, kind) << Spelling(kind);
  }
  EXPECT_EQ(puncts, 35);
}

// Every kind in the table is produced by some input (the table has no dead entries).
TEST(TokenKindsTest, EveryKindIsProduced) {
  SourceBuffer b = Buffer(
      "module meta fn let mut if else return true false requires ensures invariant intent "
      "struct enum match import from while for trait impl self own ref is async await spawn "
      "parallel select actor type pub break continue test describe setup teardown forall "
      "1 1.5 \"s\" f\"{x}\" x // c\n"
      "+ - * / % = == != < > <= >= && || | ! ?. ?? ? -> :: => ( ) { } [ ] , : ; ..= .. . @ ~");
  LexOptions options;
  options.keep_trivia = true;
  options.recover = true;
  LexResult r = LexOk(b, options);
  std::set<K> seen;
  for (const Token& t : r.tokens) seen.insert(t.kind);
  for (int i = 0; i < kTokenKindCount; ++i) {
    EXPECT_TRUE(seen.count(static_cast<K>(i))) << DebugName(static_cast<K>(i));
  }
}

// ---- identifiers and keywords ----

TEST(LexerTest, Identifiers) {
  for (const char* name :
       {"x", "_", "_x1", "Self", "in", "dyn", "result", "fx", "F", "abc_DEF_9"}) {
    EXPECT_EQ(One(name).kind, K::kIdent) << name;
  }
  EXPECT_EQ(Kinds("a1 1a"), (std::vector<K>{K::kIdent, K::kIntLit, K::kIdent}));
}

TEST(LexerTest, BooleansCarryTheirValue) {
  EXPECT_TRUE(One("true").bool_value());
  EXPECT_FALSE(One("false").bool_value());
}

TEST(LexerTest, NonAsciiIdentifierIsE0001) {
  ExpectE0001("let [[é]] = 1", LexError::Reason::kUnexpectedCharacter);
  ExpectE0001("ab[[😀]]", LexError::Reason::kUnexpectedCharacter);
}

// ---- integers ----

TEST(LexerTest, IntegerLiterals) {
  EXPECT_EQ(One("0").int_value(), 0);
  EXPECT_EQ(One("42").int_value(), 42);
  EXPECT_EQ(One("007").int_value(), 7);
  EXPECT_EQ(One("1_000_000").int_value(), 1000000);
  EXPECT_EQ(One("1__").int_value(), 1);
  EXPECT_EQ(Kinds("_1"), (std::vector<K>{K::kIdent}));
  // No sign: negation is the unary operator.
  EXPECT_EQ(Kinds("-5"), (std::vector<K>{K::kMinus, K::kIntLit}));
  // No hex or suffixes: `0x1F` is 0 then the identifier x1F.
  EXPECT_EQ(Kinds("0x1F"), (std::vector<K>{K::kIntLit, K::kIdent}));
}

TEST(LexerTest, IntegerOverflowAtTheExactBoundary) {
  EXPECT_EQ(One("9223372036854775807").int_value(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(One("9_223_372_036_854_775_807").int_value(), std::numeric_limits<std::int64_t>::max());
  ExpectE0001("x = [[9223372036854775808]]", LexError::Reason::kIntegerOverflow);
  ExpectE0001("[[9_223_372_036_854_775_808_]] + 1", LexError::Reason::kIntegerOverflow);
  ExpectE0001("[[99999999999999999999999999]]", LexError::Reason::kIntegerOverflow);
}

// ---- floats ----

TEST(LexerTest, FloatLiterals) {
  EXPECT_EQ(One("1.5").float_value(), 1.5);
  EXPECT_EQ(One("0.0").float_value(), 0.0);
  EXPECT_EQ(One("1_0.2_5").float_value(), 10.25);
  EXPECT_EQ(One("3.14159").float_value(), 3.14159);
  EXPECT_EQ(One("1.0_").float_value(), 1.0);
  EXPECT_EQ(One("9223372036854775808.0").float_value(), 9223372036854775808.0);
}

TEST(LexerTest, FloatFormsThatAreNotFloats) {
  // Digits are required on both sides of the dot; there is no exponent.
  EXPECT_EQ(Kinds("1."), (std::vector<K>{K::kIntLit, K::kDot}));
  EXPECT_EQ(Kinds(".5"), (std::vector<K>{K::kDot, K::kIntLit}));
  EXPECT_EQ(Kinds("x.0"), (std::vector<K>{K::kIdent, K::kDot, K::kIntLit}));
  EXPECT_EQ(Kinds("t.0.1"), (std::vector<K>{K::kIdent, K::kDot, K::kFloatLit}));
  EXPECT_EQ(Kinds("1..2"), (std::vector<K>{K::kIntLit, K::kDotDot, K::kIntLit}));
  EXPECT_EQ(Kinds("1..=2"), (std::vector<K>{K::kIntLit, K::kDotDotEq, K::kIntLit}));
  EXPECT_EQ(Kinds("1e5"), (std::vector<K>{K::kIntLit, K::kIdent}));
  EXPECT_EQ(Kinds("1.5e3"), (std::vector<K>{K::kFloatLit, K::kIdent}));
  EXPECT_EQ(Kinds("1._5"), (std::vector<K>{K::kIntLit, K::kDot, K::kIdent}));
  EXPECT_EQ(Kinds("1.2.3"), (std::vector<K>{K::kFloatLit, K::kDot, K::kIntLit}));
}

TEST(LexerTest, FloatsOutOfDoubleRange) {
  EXPECT_TRUE(std::isinf(One(std::string(400, '9') + ".0").float_value()));
  EXPECT_EQ(One("0." + std::string(400, '0') + "1").float_value(), 0.0);
}

// ---- strings ----

TEST(LexerTest, PlainStrings) {
  EXPECT_EQ(One("\"\"").string_value(), "");
  EXPECT_EQ(One("\"hello world\"").string_value(), "hello world");
  EXPECT_EQ(One("\"{x}\"").string_value(), "{x}");    // a plain string never interpolates
  EXPECT_EQ(One("\"a\nb\"").string_value(), "a\nb");  // raw newlines are allowed
  EXPECT_EQ(One("\"日本 é\"").string_value(), "日本 é");
  EXPECT_EQ(One("\"// not a comment\"").string_value(), "// not a comment");
}

TEST(LexerTest, EveryEscape) {
  EXPECT_EQ(One(R"("\"")").string_value(), "\"");
  EXPECT_EQ(One(R"("\\")").string_value(), "\\");
  EXPECT_EQ(One(R"("\n")").string_value(), "\n");
  EXPECT_EQ(One(R"("\t")").string_value(), "\t");
  EXPECT_EQ(One(R"("\r")").string_value(), "\r");
  EXPECT_EQ(One(R"("\0")").string_value(), std::string(1, '\0'));
  EXPECT_EQ(One(R"("a\tb\\n\"c")").string_value(), "a\tb\\n\"c");
}

TEST(LexerTest, UnknownEscapesKeepTheBackslash) {
  EXPECT_EQ(One(R"("\q")").string_value(), "\\q");
  EXPECT_EQ(One(R"("\u{41}")").string_value(), "\\u{41}");
  EXPECT_EQ(One(R"("\{")").string_value(), "\\{");
  EXPECT_EQ(One("\"\\é\"").string_value(), "\\é");
  EXPECT_EQ(One("\"\\\n\"").string_value(), "\\\n");
}

TEST(LexerTest, UnterminatedStringAtEofIsE0001) {
  ExpectE0001("let s = [[\"abc]]", LexError::Reason::kUnterminatedString);
  ExpectE0001("[[\"abc\ndef\n]]", LexError::Reason::kUnterminatedString);
  ExpectE0001("[[\"abc\\\"]]", LexError::Reason::kUnterminatedString);  // escaped quote
  ExpectE0001("[[\"abc\\]]", LexError::Reason::kUnterminatedString);    // backslash at EOF
  ExpectE0001("x [[f\"{a}]]", LexError::Reason::kUnterminatedString);
  ExpectE0001("[[\"]]", LexError::Reason::kUnterminatedString);
}

// ---- f-strings ----

FStringPart Text(std::string text, std::uint32_t begin, std::uint32_t end) {
  return FStringPart{.kind = FStringPart::Kind::kText,
                     .text = std::move(text),
                     .range = {.file = 1, .begin = begin, .end = end}};
}
FStringPart Expr(std::string text, SourceRange range) {
  return FStringPart{.kind = FStringPart::Kind::kExpr, .text = std::move(text), .range = range};
}

TEST(LexerTest, FStringParts) {
  Marked m = Mark("f\"[[a = ]]{[[x]]}[[!]]\"");
  Token t = One(m.code);
  EXPECT_EQ(t.kind, K::kFStringLit);
  const FStringValue& v = t.fstring_value();
  EXPECT_FALSE(v.unclosed_brace.has_value());
  ASSERT_EQ(v.parts.size(), 3u);
  EXPECT_EQ(v.parts[0], Text("a = ", m.ranges[0].begin, m.ranges[0].end));
  EXPECT_EQ(v.parts[1], Expr("x", m.ranges[1]));
  EXPECT_EQ(v.parts[2], Text("!", m.ranges[2].begin, m.ranges[2].end));
}

TEST(LexerTest, FStringNestedBraces) {
  Marked m = Mark("f\"{[[ { a } + {b} ]]}[[ end]]\"");
  const FStringValue v = One(m.code).fstring_value();
  ASSERT_EQ(v.parts.size(), 2u);
  EXPECT_EQ(v.parts[0], Expr(" { a } + {b} ", m.ranges[0]));
  EXPECT_EQ(v.parts[1].text, " end");
}

TEST(LexerTest, FStringAdjacentInterpolationsAndLoneCloseBrace) {
  const FStringValue v = One("f\"{x}{y}}\"").fstring_value();
  ASSERT_EQ(v.parts.size(), 3u);
  EXPECT_EQ(v.parts[0].kind, FStringPart::Kind::kExpr);
  EXPECT_EQ(v.parts[1].kind, FStringPart::Kind::kExpr);
  EXPECT_EQ(v.parts[2].text, "}");  // a lone `}` is text
}

TEST(LexerTest, FStringEscapesAreProcessedBeforeSplitting) {
  // Escaped quotes let an interpolated expression hold a string.
  Marked m = Mark(R"(f"[[\t]]{[[g(\"}\")]]}")");
  const FStringValue v = One(m.code).fstring_value();
  ASSERT_EQ(v.parts.size(), 3u);
  EXPECT_EQ(v.parts[0], Text("\t", m.ranges[0].begin, m.ranges[0].end));
  // Braces are counted in the decoded text, without regard to strings: the `}` inside the
  // inner string closes the interpolation, as upstream does.
  EXPECT_EQ(v.parts[1].text, "g(\"");
  EXPECT_EQ(v.parts[2].text, "\")}");
}

TEST(LexerTest, FStringPartRangesSpanMultiByteText) {
  Marked m = Mark("f\"[[é日]]{[[naïve]]}\"");
  const FStringValue v = One(m.code).fstring_value();
  ASSERT_EQ(v.parts.size(), 2u);
  EXPECT_EQ(v.parts[0], Text("é日", m.ranges[0].begin, m.ranges[0].end));
  EXPECT_EQ(v.parts[1], Expr("naïve", m.ranges[1]));
}

TEST(LexerTest, EmptyFStringIsOneEmptyTextPart) {
  const FStringValue v = One("f\"\"").fstring_value();
  ASSERT_EQ(v.parts.size(), 1u);
  EXPECT_EQ(v.parts[0], Text("", 2, 2));
}

TEST(LexerTest, FStringUnclosedBraceIsLeftToTheParser) {
  Marked m = Mark("f\"ab[[{]]x {y}\"");
  SourceBuffer b = Buffer(m.code);
  LexResult r = LexOk(b);
  EXPECT_TRUE(r.errors.empty());
  const FStringValue& v = r.tokens[0].fstring_value();
  ASSERT_TRUE(v.unclosed_brace.has_value());
  EXPECT_EQ(*v.unclosed_brace, m.ranges[0]);
  ASSERT_EQ(v.parts.size(), 1u);
  EXPECT_EQ(v.parts[0].text, "ab");
}

TEST(LexerTest, FOnlyStartsAnFStringWhenTheQuoteFollows) {
  EXPECT_EQ(Kinds("f \"x\""), (std::vector<K>{K::kIdent, K::kStringLit}));
  EXPECT_EQ(Kinds("ff\"x\""), (std::vector<K>{K::kIdent, K::kStringLit}));
  EXPECT_EQ(Kinds("F\"x\""), (std::vector<K>{K::kIdent, K::kStringLit}));
  EXPECT_EQ(Kinds("f\"x\""), (std::vector<K>{K::kFStringLit}));
}

// ---- trivia ----

TEST(LexerTest, WhitespaceAndCommentsAreSkipped) {
  EXPECT_EQ(Kinds(" \t\r\n"), (std::vector<K>{}));
  EXPECT_EQ(Kinds("a // comment { \"\n b"), (std::vector<K>{K::kIdent, K::kIdent}));
  EXPECT_EQ(Kinds("//@ error-code: E0200\n//~ ERROR x\nfn"), (std::vector<K>{K::kFn}));
  EXPECT_EQ(Kinds("x // comment at EOF"), (std::vector<K>{K::kIdent}));
  EXPECT_EQ(Kinds("// é 日本 😀"), (std::vector<K>{}));
  EXPECT_EQ(Kinds("a / / b"), (std::vector<K>{K::kIdent, K::kSlash, K::kSlash, K::kIdent}));
  // No block comments: `/* */` is four operators.
  EXPECT_EQ(Kinds("/* */"), (std::vector<K>{K::kSlash, K::kStar, K::kStar, K::kSlash}));
  // Newlines are insignificant: `a` newline `-b` is `a - b`.
  EXPECT_EQ(Kinds("a\n-b"), (std::vector<K>{K::kIdent, K::kMinus, K::kIdent}));
}

TEST(LexerTest, KeepTriviaGivesWhitespaceAndCommentTokens) {
  SourceBuffer b = Buffer("a  // c\r\n\tb");
  LexOptions options;
  options.keep_trivia = true;
  LexResult r = LexOk(b, options);
  std::vector<K> kinds;
  for (const Token& t : r.tokens) kinds.push_back(t.kind);
  EXPECT_EQ(kinds, (std::vector<K>{K::kIdent, K::kWhitespace, K::kComment, K::kWhitespace,
                                   K::kIdent, K::kEof}));
  EXPECT_EQ(b.Text(r.tokens[2].range), "// c\r");
}

// ---- operators: longest match ----

TEST(LexerTest, LongestMatch) {
  EXPECT_EQ(Kinds("a->b"), (std::vector<K>{K::kIdent, K::kArrow, K::kIdent}));
  EXPECT_EQ(Kinds("=>="), (std::vector<K>{K::kFatArrow, K::kEq}));
  EXPECT_EQ(Kinds("==="), (std::vector<K>{K::kEqEq, K::kEq}));
  EXPECT_EQ(Kinds("..=."), (std::vector<K>{K::kDotDotEq, K::kDot}));
  EXPECT_EQ(Kinds("..."), (std::vector<K>{K::kDotDot, K::kDot}));
  EXPECT_EQ(Kinds("?.??"), (std::vector<K>{K::kQuestionDot, K::kQuestionQuestion}));
  EXPECT_EQ(Kinds("???"), (std::vector<K>{K::kQuestionQuestion, K::kQuestionMark}));
  EXPECT_EQ(Kinds(":::"), (std::vector<K>{K::kColonColon, K::kColon}));
  EXPECT_EQ(Kinds("|||"), (std::vector<K>{K::kPipePipe, K::kPipe}));
  EXPECT_EQ(Kinds("!=!"), (std::vector<K>{K::kBangEq, K::kBang}));
  EXPECT_EQ(Kinds("<=<"), (std::vector<K>{K::kLtEq, K::kLt}));
  // No `>>` token: nested generics close with two `>`.
  EXPECT_EQ(Kinds("List<List<Int>>"),
            (std::vector<K>{K::kIdent, K::kLt, K::kIdent, K::kLt, K::kIdent, K::kGt, K::kGt}));
  EXPECT_EQ(Kinds(">>="), (std::vector<K>{K::kGt, K::kGtEq}));
  // No compound assignment.
  EXPECT_EQ(Kinds("x+=1"), (std::vector<K>{K::kIdent, K::kPlus, K::kEq, K::kIntLit}));
}

// ---- E0001: every way to reach it ----

TEST(LexerTest, UnexpectedCharacters) {
  for (const char* c : {"~", "#", "$", "^", "`", "\\", "'", "\f", "\v", "\x01", "\x7f"}) {
    ExpectE0001(std::string("a [[") + c + "]] b", LexError::Reason::kUnexpectedCharacter);
  }
  ExpectE0001("a [[&]] b", LexError::Reason::kUnexpectedCharacter);  // `&` alone
  ExpectE0001("&&[[&]]", LexError::Reason::kUnexpectedCharacter);
  ExpectE0001("[[€]]", LexError::Reason::kUnexpectedCharacter);
  ExpectE0001("x\r\n[[\xC2\xA0]]y", LexError::Reason::kUnexpectedCharacter);  // no-break space
}

TEST(LexerTest, InvalidUtf8IsE0001) {
  ExpectE0001("a [[\xff]]", LexError::Reason::kInvalidUtf8);
  ExpectE0001("[[\xC0]]\xAF", LexError::Reason::kInvalidUtf8);          // overlong
  ExpectE0001("[[\xED]]\xA0\x80", LexError::Reason::kInvalidUtf8);      // surrogate
  ExpectE0001("[[\xF4]]\x90\x80\x80", LexError::Reason::kInvalidUtf8);  // above U+10FFFF
  ExpectE0001("[[\xE2]]\x82", LexError::Reason::kInvalidUtf8);          // truncated at EOF
  ExpectE0001("\"ab[[\x80]]\"", LexError::Reason::kInvalidUtf8);        // inside a string
  ExpectE0001("// ab[[\xfe]]\nfn", LexError::Reason::kInvalidUtf8);     // inside a comment
}

TEST(LexerTest, StopsAtTheFirstErrorByDefault) {
  SourceBuffer b = Buffer("fn ~ # x");
  LexResult r = LexOk(b);
  ASSERT_EQ(r.errors.size(), 1u);
  ASSERT_EQ(r.tokens.size(), 2u);
  EXPECT_EQ(r.tokens[0].kind, K::kFn);
  EXPECT_EQ(r.tokens[1].kind, K::kEof);
  EXPECT_EQ(r.tokens[1].range, b.Range(8, 8));
}

TEST(LexerTest, RecoveryContinuesAfterEachError) {
  Marked m = Mark("fn [[~]] x [[99999999999999999999]] [[\xff]] \"[[\x80]]\" y [[\"open]]");
  SourceBuffer b = Buffer(m.code);
  LexOptions options;
  options.recover = true;
  LexResult r = LexOk(b, options);
  ASSERT_EQ(r.errors.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.errors[i].range, m.ranges[i]) << i;
    EXPECT_EQ(r.errors[i].message, Message(m.ranges[i].begin, m.ranges[i].end)) << i;
  }
  EXPECT_EQ(r.errors[1].reason, LexError::Reason::kIntegerOverflow);
  EXPECT_EQ(r.errors[4].reason, LexError::Reason::kUnterminatedString);
  std::vector<K> kinds;
  for (const Token& t : r.tokens) kinds.push_back(t.kind);
  EXPECT_EQ(kinds, (std::vector<K>{K::kFn, K::kError, K::kIdent, K::kError, K::kError,
                                   K::kStringLit, K::kIdent, K::kError, K::kEof}));
  // Invalid UTF-8 inside a string becomes U+FFFD in the decoded value.
  EXPECT_EQ(r.tokens[5].string_value(), "\xEF\xBF\xBD");
}

// ---- locations ----

TEST(LexerTest, TokenRangesMapToLinesAndCharacterColumns) {
  Marked m = Mark("module [[m]] {\r\n  let s = \"é日\" [[+]] 1\r\n  [[x]]\n}");
  SourceBuffer b = Buffer(m.code);
  LexResult r = LexOk(b);
  ASSERT_TRUE(r.errors.empty());
  std::vector<LineColumn> found;
  for (const Token& t : r.tokens) {
    for (const SourceRange& range : m.ranges) {
      if (t.range == range) found.push_back(b.Locate(t.range.begin));
    }
  }
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0], (LineColumn{1, 8}));
  EXPECT_EQ(found[1], (LineColumn{2, 16}));  // é and 日 are one column each
  EXPECT_EQ(found[2], (LineColumn{3, 3}));
}

// ---- round trip ----

TEST(LexerTest, TokenTextsPlusTriviaReproduceTheSource) {
  LexOptions options;
  options.keep_trivia = true;
  options.recover = true;
  for (const char* text :
       {"", " ", "module m {\n  meta { purpose: \"x\" }\n  fn main() -> Int { return 1 }\n}\n",
        "let s = f\"a{b}c\" // tail", "a\r\n\t// c\r\n\"multi\nline\"", "~ # é \xff 1.5 1..2",
        "x = 99999999999999999999 + \"unterminated", "// only a comment", "f\"{\" \\q \""}) {
    SourceBuffer b = Buffer(text);
    LexResult r = LexOk(b, options);
    EXPECT_EQ(Concat(b, r), text);
    // Tokens are contiguous and in order.
    std::uint32_t at = 0;
    for (const Token& t : r.tokens) {
      EXPECT_EQ(t.range.begin, at) << text;
      at = t.range.end;
    }
    EXPECT_EQ(at, b.size());
  }
}

// ---- bounds ----

TEST(LexerTest, MaxSourceBytes) {
  SourceBuffer b = Buffer("fn main");
  LexOptions options;
  options.max_source_bytes = 7;
  EXPECT_TRUE(Lex(b, options).ok());
  options.max_source_bytes = 6;
  Result<LexResult> r = Lex(b, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), "t.ko: source is 7 bytes, more than the 6 allowed");
}

TEST(LexerTest, MaxTokens) {
  SourceBuffer b = Buffer("a b c");  // three tokens and Eof
  LexOptions options;
  options.max_tokens = 4;
  EXPECT_TRUE(Lex(b, options).ok());
  options.max_tokens = 3;
  Result<LexResult> r = Lex(b, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), base::StatusCode::kResourceExhausted);
  EXPECT_EQ(r.status().message(), "t.ko: 5: more than the 3 tokens allowed");
  // Trivia counts when kept.
  options.max_tokens = 4;
  options.keep_trivia = true;
  r = Lex(b, options);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "t.ko: 4: more than the 4 tokens allowed");
}

TEST(LexerTest, EofTokenIsAlwaysLast) {
  SourceBuffer b = Buffer("");
  LexResult r = LexOk(b);
  ASSERT_EQ(r.tokens.size(), 1u);
  EXPECT_EQ(r.tokens[0].kind, K::kEof);
  EXPECT_EQ(r.tokens[0].range, b.Range(0, 0));
}

}  // namespace
}  // namespace trove::kodo::lex

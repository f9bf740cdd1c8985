// JsLexer: a forgiving, single-pass JavaScript tokenizer for the glue parser (glue.h). It never
// fails and never backtracks: every byte is looked at a bounded number of times, so a scan is
// linear in the input. It knows just enough JavaScript to keep string, template, regular
// expression and comment contents from being read as code: strings and regular expressions end
// at an unescaped line break (so a stray quote loses at most one line), templates nest through
// `${ ... }` up to kMaxTemplateDepth, an unterminated comment or template runs to the end.
// Bytes >= 0x80 (UTF-8 or not) are identifier characters; other unknown bytes are one-byte
// punctuators. Whether `/` starts a regular expression is decided from the previous token, as
// tokenizers without a parser do (after `)`, `]`, `}`, an identifier, a number or a string it
// is division, except after keywords such as `return` and `typeof`).
// Thread safety: a value type; one thread uses a lexer at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace trove::warden::glue {

enum class TokenKind : std::uint8_t {
  kIdentifier,  // also keywords
  kString,      // text: the contents between the quotes, escapes left as written
  kTemplate,    // one piece of a template literal; text: its raw bytes
  kNumber,
  kRegex,
  kPunct,    // text: the punctuator (longest match: "===", "=>", "?.", ...)
  kComment,  // text: the comment without its delimiters
  kEnd,      // end of input
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  std::size_t offset = 0;  // of the token's first byte in the input
};

class JsLexer {
 public:
  // Template literals nested deeper than this are scanned as if flat.
  static constexpr std::size_t kMaxTemplateDepth = 256;

  // `input` must outlive the lexer and every token it returns.
  explicit JsLexer(std::string_view input) : input_(input) {}

  // Returns the next token, comments included; kEnd at and after the end of the input.
  Token Next();

 private:
  Token LexTemplatePiece(std::size_t start);
  Token LexRegex(std::size_t start);
  Token LexPunct(std::size_t start);
  bool RegexAllowed() const;

  std::string_view input_;
  std::size_t pos_ = 0;
  // The last token other than a comment: its kind and text decide the meaning of `/`.
  TokenKind last_kind_ = TokenKind::kPunct;
  std::string_view last_text_ = "(";
  // Open braces, counting each `${` of a template as one.
  std::size_t brace_depth_ = 0;
  // For each template whose `${` is open, the brace depth just inside that `${`.
  std::vector<std::size_t> template_stack_;
};

// Returns true for the bytes of an identifier after its first: letters, digits, `_`, `$` and
// every byte >= 0x80.
inline bool IsIdentByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c >= 0x80;
}
inline bool IsIdentStart(unsigned char c) { return IsIdentByte(c) && !(c >= '0' && c <= '9'); }

}  // namespace trove::warden::glue

// Kōdo tokens: the TokenKind enum generated from token_kinds.def, and Token, one lexed token
// with its byte range and, for literals, its decoded value (docs/kodo.md §4.1).
// Thread safety: plain values; the functions here are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kodo/source/source_buffer.h"

namespace trove::kodo::lex {

enum class TokenKind : std::uint8_t {
#define KODO_TOKEN(Name, Spelling) k##Name,
#include "kodo/lex/token_kinds.def"
};

inline constexpr int kTokenKindCount = 0
#define KODO_TOKEN(Name, Spelling) +1
#include "kodo/lex/token_kinds.def"
    ;

// Returns upstream's Debug name without payload ("Fn", "SelfValue", "IntLit", "FatArrow"),
// the spelling parse errors use (docs/kodo.md §4.1, §6.4).
std::string_view DebugName(TokenKind kind);

// Returns the source spelling of a keyword or punctuation ("fn", "=>"), else a description
// ("integer literal", "end of file").
std::string_view Spelling(TokenKind kind);

bool IsKeyword(TokenKind kind);  // includes the contextual keywords
// `test describe setup teardown forall`: accepted by the parser wherever a NAME is asked for.
bool IsContextualKeyword(TokenKind kind);
bool IsPunct(TokenKind kind);
// Whitespace and comments: produced only with LexOptions::keep_trivia.
bool IsTrivia(TokenKind kind);

// Every keyword is 2 to kMaxKeywordLength lower-case ASCII letters (checked where the keyword
// table is built), so a lexer can rule most identifiers out without a lookup.
inline constexpr std::size_t kMaxKeywordLength = 9;

// Returns the keyword spelled `text`, if any. `Self`, `in`, `dyn`, `_` and `result` are
// identifiers (docs/kodo.md §4.1).
std::optional<TokenKind> LookupKeyword(std::string_view text);

// One part of an f-string body, after escapes are processed (docs/kodo.md §4.1).
struct FStringPart {
  enum class Kind : std::uint8_t { kText, kExpr };
  Kind kind = Kind::kText;
  // kText: the literal text. kExpr: the expression's source text, without the braces, to be
  // re-lexed and parsed as a full expression.
  std::string text;
  // Where the part came from in the file. Upstream makes sub-expression spans relative to the
  // f-string body [I]; Trove keeps file offsets, mapping decoded text back through escapes.
  SourceRange range;
  friend bool operator==(const FStringPart&, const FStringPart&) = default;
};

// The decoded value of an FStringLit token.
struct FStringValue {
  // Text parts are never empty, except that an empty f-string is one empty text part.
  std::vector<FStringPart> parts;
  // Set when a `{` has no matching `}`: the range of that `{`. The lexer does not report it; the
  // parser does, as E0101 "closing `}` in f-string interpolation" (docs/kodo.md §4.1, §6.1).
  std::optional<SourceRange> unclosed_brace;
  friend bool operator==(const FStringValue&, const FStringValue&) = default;
};

// The decoded value of a token: int64 for IntLit, double for FloatLit, bool for True/False,
// the unescaped text for StringLit (and the full unescaped body for FStringLit's `text`),
// FStringValue for FStringLit, nothing otherwise (an Ident's name is its source text).
// A heap-held value with value semantics (copies clone). Tokens keep their rare large values
// (strings, f-strings) behind one of these, so a Token is 32 bytes instead of 64: a large file's
// token vector is half the memory to fault in and copy.
template <typename T>
class Boxed {
 public:
  Boxed(T value) : ptr_(std::make_unique<T>(std::move(value))) {}  // NOLINT: implicit by design
  Boxed(const Boxed& other) : ptr_(std::make_unique<T>(*other.ptr_)) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) ptr_ = std::make_unique<T>(*other.ptr_);
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  const T& operator*() const { return *ptr_; }
  friend bool operator==(const Boxed& a, const Boxed& b) { return *a.ptr_ == *b.ptr_; }

 private:
  std::unique_ptr<T> ptr_;
};

using TokenValue = std::variant<std::monostate, std::int64_t, double, bool, Boxed<std::string>,
                                Boxed<FStringValue>>;

struct Token {
  TokenKind kind = TokenKind::kEof;
  SourceRange range;
  TokenValue value;

  std::int64_t int_value() const { return std::get<std::int64_t>(value); }
  double float_value() const { return std::get<double>(value); }
  bool bool_value() const { return std::get<bool>(value); }
  const std::string& string_value() const { return *std::get<Boxed<std::string>>(value); }
  const FStringValue& fstring_value() const { return *std::get<Boxed<FStringValue>>(value); }
};

}  // namespace trove::kodo::lex

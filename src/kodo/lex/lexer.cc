#include "kodo/lex/lexer.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <utility>

namespace trove::kodo::lex {
namespace {

constexpr std::string_view kE0001Suggestion = "check for invalid characters in the source";
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsIdentContinue(char c) { return IsIdentStart(c) || IsDigit(c); }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Returns the length of the valid UTF-8 sequence starting at text[pos], or 0 when the bytes
// there are not one (overlong forms, surrogates and values above U+10FFFF are invalid).
std::size_t Utf8SequenceLength(std::string_view text, std::size_t pos) {
  auto byte = [&](std::size_t i) -> unsigned {
    return pos + i < text.size() ? static_cast<unsigned char>(text[pos + i]) : 0x100u;
  };
  auto in = [](unsigned b, unsigned lo, unsigned hi) { return b >= lo && b <= hi; };
  const unsigned b0 = byte(0);
  if (b0 < 0x80) return 1;
  if (in(b0, 0xC2, 0xDF)) return in(byte(1), 0x80, 0xBF) ? 2 : 0;
  if (in(b0, 0xE0, 0xEF)) {
    const unsigned lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned hi = b0 == 0xED ? 0x9F : 0xBF;
    return in(byte(1), lo, hi) && in(byte(2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in(b0, 0xF0, 0xF4)) {
    const unsigned lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return in(byte(1), lo, hi) && in(byte(2), 0x80, 0xBF) && in(byte(3), 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

// The decoded body of a string literal, with the file offset each decoded byte came from.
struct DecodedString {
  std::string text;
  std::vector<std::uint32_t> source_offsets;  // one per byte of `text`
  std::uint32_t body_end = 0;                 // offset of the closing quote
};

class Lexer {
 public:
  Lexer(const SourceBuffer& source, const LexOptions& options)
      : source_(source), options_(options), text_(source.text()) {}

  Result<LexResult> Run() {
    if (text_.size() > options_.max_source_bytes) {
      return Status::ResourceExhausted(
          fmt::format("{}: source is {} bytes, more than the {} allowed", source_.name(),
                      text_.size(), options_.max_source_bytes));
    }
    // Real programs average one token per 4-6 bytes; reserving that many saves the repeated
    // reallocation (and page faults) of a growing vector on large files.
    result_.tokens.reserve(std::min(options_.max_tokens, text_.size() / 4 + 16));
    while (pos_ < text_.size() && !stopped_) RETURN_IF_ERROR(LexOne());
    RETURN_IF_ERROR(Push(TokenKind::kEof, End(), End()));
    return std::move(result_);
  }

 private:
  std::uint32_t End() const { return static_cast<std::uint32_t>(text_.size()); }
  std::uint32_t Pos() const { return static_cast<std::uint32_t>(pos_); }
  char Peek(std::size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }

  Status Push(TokenKind kind, std::uint32_t begin, std::uint32_t end, TokenValue value = {}) {
    if (result_.tokens.size() >= options_.max_tokens) {
      return Status::ResourceExhausted(fmt::format("{}: {}: more than the {} tokens allowed",
                                                   source_.name(), begin, options_.max_tokens));
    }
    result_.tokens.push_back(Token{kind, source_.Range(begin, end), std::move(value)});
    return Status::Ok();
  }

  // Records E0001 over [begin, end). Without recovery, lexing stops here.
  void Report(LexError::Reason reason, std::uint32_t begin, std::uint32_t end) {
    result_.errors.push_back(LexError{
        .code = "E0001",
        .message = fmt::format("lexer error: unexpected character at Span {{ start: {}, end: {} }}",
                               begin, end),
        .range = source_.Range(begin, end),
        .suggestion = std::string(kE0001Suggestion),
        .reason = reason,
    });
    if (!options_.recover) stopped_ = true;
  }

  // Reports E0001 over [begin, end) and, when recovering, covers that text with an Error token.
  Status ReportAndSkip(LexError::Reason reason, std::uint32_t begin, std::uint32_t end) {
    Report(reason, begin, end);
    pos_ = end;
    if (stopped_) return Status::Ok();
    return Push(TokenKind::kError, begin, end);
  }

  Status LexOne() {
    const std::uint32_t begin = Pos();
    const char c = Peek();
    if (IsSpace(c)) {
      while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
      return options_.keep_trivia ? Push(TokenKind::kWhitespace, begin, Pos()) : Status::Ok();
    }
    if (c == '/' && Peek(1) == '/') return LexComment();
    if (IsDigit(c)) return LexNumber();
    if (c == 'f' && Peek(1) == '"') return LexString(/*is_fstring=*/true);
    if (IsIdentStart(c)) return LexIdentifier();
    if (c == '"') return LexString(/*is_fstring=*/false);
    return LexPunct();
  }

  // `//` up to, not including, the end of the line. Test directives `//@` and `//~` are
  // ordinary comments (kodo.md §2).
  Status LexComment() {
    const std::uint32_t begin = Pos();
    while (pos_ < text_.size() && text_[pos_] != '\n') {
      const std::size_t length = Utf8SequenceLength(text_, pos_);
      if (length == 0) {
        Report(LexError::Reason::kInvalidUtf8, Pos(), Pos() + 1);
        if (stopped_) return Status::Ok();
        ++pos_;  // recovering: the bad byte stays part of the comment
        continue;
      }
      pos_ += length;
    }
    return options_.keep_trivia ? Push(TokenKind::kComment, begin, Pos()) : Status::Ok();
  }

  Status LexIdentifier() {
    const std::uint32_t begin = Pos();
    while (pos_ < text_.size() && IsIdentContinue(text_[pos_])) ++pos_;
    const std::string_view word = text_.substr(begin, pos_ - begin);
    if (std::optional<TokenKind> keyword = LookupKeyword(word)) {
      if (*keyword == TokenKind::kTrue) return Push(*keyword, begin, Pos(), true);
      if (*keyword == TokenKind::kFalse) return Push(*keyword, begin, Pos(), false);
      return Push(*keyword, begin, Pos());
    }
    return Push(TokenKind::kIdent, begin, Pos());
  }

  // Integer `[0-9][0-9_]*` (must fit int64) or float `[0-9][0-9_]*\.[0-9][0-9_]*` (kodo.md §2).
  Status LexNumber() {
    const std::uint32_t begin = Pos();
    auto scan_digits = [&] {
      while (pos_ < text_.size() && (IsDigit(text_[pos_]) || text_[pos_] == '_')) ++pos_;
    };
    scan_digits();
    if (Peek() == '.' && IsDigit(Peek(1))) {
      ++pos_;
      scan_digits();
      return Push(TokenKind::kFloatLit, begin, Pos(), ParseFloat(begin, Pos()));
    }
    std::uint64_t value = 0;
    constexpr std::uint64_t kMax = std::numeric_limits<std::int64_t>::max();
    for (char digit : text_.substr(begin, pos_ - begin)) {
      if (digit == '_') continue;
      const std::uint64_t d = static_cast<std::uint64_t>(digit - '0');
      if (value > (kMax - d) / 10) {
        return ReportAndSkip(LexError::Reason::kIntegerOverflow, begin, Pos());
      }
      value = value * 10 + d;
    }
    return Push(TokenKind::kIntLit, begin, Pos(), static_cast<std::int64_t>(value));
  }

  // Parses the float in [begin, end), underscores ignored. A literal too large for a double is
  // +infinity and one too small is 0, as Rust's f64 parsing gives; no literal is an error.
  double ParseFloat(std::uint32_t begin, std::uint32_t end) const {
    std::string digits;
    digits.reserve(end - begin);
    for (char c : text_.substr(begin, end - begin)) {
      if (c == '_') continue;
      digits.push_back(c);
    }
    double value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    (void)ptr;
    if (ec == std::errc::result_out_of_range) {
      // Out of range in either direction: decide by the integer part.
      const std::size_t dot = digits.find('.');
      const bool big = digits.substr(0, dot).find_first_not_of('0') != std::string::npos;
      return big ? std::numeric_limits<double>::infinity() : 0.0;
    }
    return value;
  }

  // Decodes a string body starting after its opening quote; pos_ ends after the closing quote.
  // Returns false (and has reported) when the string is unterminated or lexing stopped.
  bool DecodeString(std::uint32_t token_begin, DecodedString& out) {
    auto append = [&](std::string_view bytes, std::uint32_t from) {
      out.text.append(bytes);
      out.source_offsets.insert(out.source_offsets.end(), bytes.size(), from);
    };
    while (true) {
      if (pos_ >= text_.size()) {
        Report(LexError::Reason::kUnterminatedString, token_begin, End());
        return false;
      }
      const char c = text_[pos_];
      const std::uint32_t at = Pos();
      if (c == '"') {
        out.body_end = at;
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (pos_ + 1 >= text_.size()) {
          Report(LexError::Reason::kUnterminatedString, token_begin, End());
          return false;
        }
        char decoded = 0;
        switch (text_[pos_ + 1]) {
          case '"':
            decoded = '"';
            break;
          case '\\':
            decoded = '\\';
            break;
          case 'n':
            decoded = '\n';
            break;
          case 't':
            decoded = '\t';
            break;
          case 'r':
            decoded = '\r';
            break;
          case '0':
            decoded = '\0';
            break;
          default:
            // Any other `\c` is kept as the backslash and c; c is read on the next turn.
            append("\\", at);
            ++pos_;
            continue;
        }
        append(std::string_view(&decoded, 1), at);
        pos_ += 2;
        continue;
      }
      const std::size_t length = Utf8SequenceLength(text_, pos_);
      if (length == 0) {
        Report(LexError::Reason::kInvalidUtf8, at, at + 1);
        if (stopped_) return false;
        append(kReplacementCharacter, at);
        ++pos_;
        continue;
      }
      for (std::size_t i = 0; i < length; ++i) {
        append(text_.substr(pos_ + i, 1), static_cast<std::uint32_t>(pos_ + i));
      }
      pos_ += length;
    }
  }

  // `"..."` or `f"..."` (kodo.md §2). Raw newlines are allowed inside.
  Status LexString(bool is_fstring) {
    const std::uint32_t begin = Pos();
    pos_ += is_fstring ? 2 : 1;
    const std::uint32_t body_begin = Pos();
    DecodedString decoded;
    if (!DecodeString(begin, decoded)) {
      if (stopped_) return Status::Ok();
      // Recovering from an unterminated string: it ran to the end of the text.
      pos_ = text_.size();
      return Push(TokenKind::kError, begin, End());
    }
    if (!is_fstring) return Push(TokenKind::kStringLit, begin, Pos(), std::move(decoded.text));
    return Push(TokenKind::kFStringLit, begin, Pos(), SplitFString(decoded, body_begin));
  }

  // Splits a decoded f-string body at `{`...`}` pairs, counting nested braces. There is no
  // brace escape; a lone `}` is text (kodo.md §2).
  FStringValue SplitFString(const DecodedString& decoded, std::uint32_t body_begin) const {
    const std::string& d = decoded.text;
    auto source_at = [&](std::size_t i) {
      return i < d.size() ? decoded.source_offsets[i] : decoded.body_end;
    };
    FStringValue value;
    auto add = [&](FStringPart::Kind kind, std::size_t from, std::size_t to) {
      value.parts.push_back(FStringPart{.kind = kind,
                                        .text = d.substr(from, to - from),
                                        .range = source_.Range(source_at(from), source_at(to))});
    };
    std::size_t text_begin = 0;
    std::size_t i = 0;
    while (i < d.size()) {
      if (d[i] != '{') {
        ++i;
        continue;
      }
      if (i > text_begin) add(FStringPart::Kind::kText, text_begin, i);
      std::size_t depth = 1;
      std::size_t j = i + 1;
      while (j < d.size() && depth > 0) {
        if (d[j] == '{') ++depth;
        if (d[j] == '}') --depth;
        ++j;
      }
      if (depth > 0) {
        value.unclosed_brace = source_.Range(source_at(i), source_at(i) + 1);
        return value;
      }
      add(FStringPart::Kind::kExpr, i + 1, j - 1);
      i = j;
      text_begin = j;
    }
    if (d.size() > text_begin) add(FStringPart::Kind::kText, text_begin, d.size());
    if (value.parts.empty()) {
      value.parts.push_back(FStringPart{.kind = FStringPart::Kind::kText,
                                        .text = {},
                                        .range = source_.Range(body_begin, body_begin)});
    }
    return value;
  }

  // Operators and punctuation, longest match first (kodo.md §2).
  Status LexPunct() {
    const std::uint32_t begin = Pos();
    const char c = Peek();
    const char next = Peek(1);
    TokenKind kind;
    std::size_t length = 1;
    auto two = [&](TokenKind k) {
      kind = k;
      length = 2;
    };
    switch (c) {
      case '+':
        kind = TokenKind::kPlus;
        break;
      case '-':
        if (next == '>')
          two(TokenKind::kArrow);
        else
          kind = TokenKind::kMinus;
        break;
      case '*':
        kind = TokenKind::kStar;
        break;
      case '/':
        kind = TokenKind::kSlash;
        break;
      case '%':
        kind = TokenKind::kPercent;
        break;
      case '=':
        if (next == '=')
          two(TokenKind::kEqEq);
        else if (next == '>')
          two(TokenKind::kFatArrow);
        else
          kind = TokenKind::kEq;
        break;
      case '!':
        if (next == '=')
          two(TokenKind::kBangEq);
        else
          kind = TokenKind::kBang;
        break;
      case '<':
        if (next == '=')
          two(TokenKind::kLtEq);
        else
          kind = TokenKind::kLt;
        break;
      case '>':
        if (next == '=')
          two(TokenKind::kGtEq);
        else
          kind = TokenKind::kGt;
        break;
      case '&':
        if (next != '&') return UnexpectedCharacter();
        two(TokenKind::kAmpAmp);
        break;
      case '|':
        if (next == '|')
          two(TokenKind::kPipePipe);
        else
          kind = TokenKind::kPipe;
        break;
      case '?':
        if (next == '.')
          two(TokenKind::kQuestionDot);
        else if (next == '?')
          two(TokenKind::kQuestionQuestion);
        else
          kind = TokenKind::kQuestionMark;
        break;
      case ':':
        if (next == ':')
          two(TokenKind::kColonColon);
        else
          kind = TokenKind::kColon;
        break;
      case '.':
        if (next == '.' && Peek(2) == '=') {
          kind = TokenKind::kDotDotEq;
          length = 3;
        } else if (next == '.') {
          two(TokenKind::kDotDot);
        } else {
          kind = TokenKind::kDot;
        }
        break;
      case '(':
        kind = TokenKind::kLParen;
        break;
      case ')':
        kind = TokenKind::kRParen;
        break;
      case '{':
        kind = TokenKind::kLBrace;
        break;
      case '}':
        kind = TokenKind::kRBrace;
        break;
      case '[':
        kind = TokenKind::kLBracket;
        break;
      case ']':
        kind = TokenKind::kRBracket;
        break;
      case ',':
        kind = TokenKind::kComma;
        break;
      case ';':
        kind = TokenKind::kSemicolon;
        break;
      case '@':
        kind = TokenKind::kAt;
        break;
      default:
        return UnexpectedCharacter();
    }
    pos_ += length;
    return Push(kind, begin, Pos());
  }

  // A character no token starts with: one whole UTF-8 character, or one byte of invalid UTF-8.
  Status UnexpectedCharacter() {
    const std::uint32_t begin = Pos();
    const std::size_t length = Utf8SequenceLength(text_, pos_);
    if (length == 0) return ReportAndSkip(LexError::Reason::kInvalidUtf8, begin, begin + 1);
    return ReportAndSkip(LexError::Reason::kUnexpectedCharacter, begin,
                         static_cast<std::uint32_t>(begin + length));
  }

  const SourceBuffer& source_;
  const LexOptions& options_;
  const std::string_view text_;
  std::size_t pos_ = 0;
  bool stopped_ = false;
  LexResult result_;
};

}  // namespace

Result<LexResult> Lex(const SourceBuffer& source, const LexOptions& options) {
  return Lexer(source, options).Run();
}

}  // namespace trove::kodo::lex

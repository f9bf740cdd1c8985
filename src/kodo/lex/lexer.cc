#include "kodo/lex/lexer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <limits>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace trove::kodo::lex {
namespace {

constexpr std::string_view kE0001Suggestion = "check for invalid characters in the source";
constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// Character classes, one table lookup per byte: the main loop dispatches on a byte's class and
// the identifier, digit and whitespace loops test it.
enum CharClass : std::uint8_t {
  kOther,       // no token starts here: E0001 (includes every byte >= 0x80 and '\0')
  kSpace,       // ' ' '\t' '\r' '\n'
  kDigit,       // 0-9
  kIdentStart,  // a-z A-Z _
  kQuote,       // "
  kSlash,       // / (a comment or the operator)
  kPunct,       // the other characters that start an operator or punctuation
};

constexpr std::array<CharClass, 256> MakeCharClasses() {
  std::array<CharClass, 256> classes{};  // kOther
  for (char c : std::string_view(" \t\r\n")) classes[static_cast<unsigned char>(c)] = kSpace;
  for (int c = '0'; c <= '9'; ++c) classes[c] = kDigit;
  for (int c = 'a'; c <= 'z'; ++c) classes[c] = kIdentStart;
  for (int c = 'A'; c <= 'Z'; ++c) classes[c] = kIdentStart;
  classes['_'] = kIdentStart;
  classes['"'] = kQuote;
  classes['/'] = kSlash;
  for (char c : std::string_view("+-*%=!<>&|?:.(){}[],;@")) {
    classes[static_cast<unsigned char>(c)] = kPunct;
  }
  return classes;
}
constexpr std::array<CharClass, 256> kCharClasses = MakeCharClasses();

CharClass ClassOf(char c) { return kCharClasses[static_cast<unsigned char>(c)]; }
bool IsDigit(char c) { return ClassOf(c) == kDigit; }
bool IsIdentContinue(char c) {
  const CharClass k = ClassOf(c);
  return k == kIdentStart || k == kDigit;
}
bool IsSpace(char c) { return ClassOf(c) == kSpace; }
// A string body byte that decodes to itself: ASCII, not the closing quote or an escape.
bool IsPlainStringByte(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b < 0x80 && b != '"' && b != '\\';
}

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

// Asks Linux to back the interior of a large, freshly reserved buffer with transparent huge
// pages. A 12 MiB source gives an 80 MB token array; in 4 KiB pages that is 20 000 page faults,
// which cost more than the lexing itself (on the 2-core VM, 1.2 s versus 50 ms for the same
// 82 MB touched with huge pages: docs/performance.md). The same advice glibc gives its mmapped
// chunks under the glibc.malloc.hugetlb=1 tunable; it is only advice, so a failure (no THP, an
// older kernel) changes nothing, and the contents are untouched. No-op elsewhere.
void AdviseHugePages(const void* data, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
  if (bytes < 2 * kHugePage) return;
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (start + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (start + bytes) & ~(kHugePage - 1);
  if (end > begin) {
    (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#else
  (void)data;
  (void)bytes;
#endif
}

// The decoded body of a string literal, with the file offset each decoded byte came from.
struct DecodedString {
  std::string text;
  // One per byte of `text`, recorded only when asked for (f-strings) and the body is not a
  // plain copy of the source.
  std::vector<std::uint32_t> source_offsets;
  // Set when `text` is an unchanged copy of the body (no escape, all ASCII): byte i then came
  // from body_begin + i and source_offsets stays empty.
  bool copied = false;
  std::uint32_t body_begin = 0;  // offset after the opening quote
  std::uint32_t body_end = 0;    // offset of the closing quote

  // The file offset decoded byte `i` came from; body_end for i == text.size().
  std::uint32_t SourceAt(std::size_t i) const {
    if (i >= text.size()) return body_end;
    return copied ? body_begin + static_cast<std::uint32_t>(i) : source_offsets[i];
  }
};

// The hot loop keeps lexing cheap per byte: one class-table lookup dispatches each token, the
// identifier/number/whitespace loops need no bounds check (the text is followed by a '\0'
// sentinel, see Run), tokens are appended without a Status each (crossing max_tokens is recorded
// once and stops the loop), and strings and comments take a plain-ASCII fast path, falling back
// to the full decoder only when they hold an escape or a non-ASCII byte.
class Lexer {
 public:
  Lexer(const SourceBuffer& source, const LexOptions& options)
      : source_(source),
        options_(options),
        text_(source.text()),
        data_(text_.data()),
        size_(text_.size()),
        file_(source.id()) {}

  Result<LexResult> Run() {
    if (text_.size() > options_.max_source_bytes) {
      return Status::ResourceExhausted(
          fmt::format("{}: source is {} bytes, more than the {} allowed", source_.name(),
                      text_.size(), options_.max_source_bytes));
    }
    // SourceBuffer keeps its text in a std::string, so data_[size_] is a readable '\0'. No token
    // continues over a '\0' (its class is kOther), so the scanning loops stop there without
    // comparing against the end.
    TROVE_CHECK(data_[size_] == '\0');
    // Real programs average one token per 3-6 bytes (the check bench's dense program: 3.4).
    // Reserving one per 2 bytes saves the reallocation of a growing vector on large files,
    // whose new buffer would have no huge-page advice and whose copy costs as much as lexing;
    // reserved but untouched pages cost only address space. GrowTokens still grows (and
    // advises) past it for denser text.
    result_.tokens.reserve(std::min(options_.max_tokens, text_.size() / 2 + 16));
    AdviseHugePages(result_.tokens.data(), result_.tokens.capacity() * sizeof(Token));
    const bool skip_spaces = !options_.keep_trivia;
    while (!stopped_) {
      // Most tokens follow whitespace: skipping it here saves a trip through the dispatch.
      if (skip_spaces) {
        while (IsSpace(data_[pos_])) ++pos_;  // stops at the '\0' sentinel
      }
      if (pos_ >= size_) break;
      LexOne();
    }
    if (!limit_error_.ok()) return limit_error_;
    Push(TokenKind::kEof, End(), End());
    result_.tokens.resize(count_);  // drops the unused default tokens of the last block
    if (!limit_error_.ok()) return limit_error_;
    return std::move(result_);
  }

 private:
  std::uint32_t End() const { return static_cast<std::uint32_t>(size_); }
  std::uint32_t Pos() const { return static_cast<std::uint32_t>(pos_); }

  // Tokens are written into result_.tokens by index: the vector is grown ahead in blocks of
  // default tokens and cut to count_ at the end (Run). Growing in blocks is cheap (the defaults
  // are written into the cache lines that the tokens overwrite next), whereas a per-token
  // emplace_back was not inlined by g++ at -O2 and cost about 25 instructions a token.
  static constexpr std::size_t kTokenBlock = 4096;

  // Returns the slot for the next token, or nullptr when options_.max_tokens is crossed (rare:
  // the error is recorded, lexing stops and Run returns it). Forced inline: it runs once per
  // token, and as a call its prologue and epilogue would cost as much as its body.
  [[gnu::always_inline]] Token* NextSlot(std::uint32_t begin) {
    if (count_ == result_.tokens.size()) [[unlikely]] {
      if (!GrowTokens(begin)) return nullptr;
    }
    return &result_.tokens[count_++];
  }

  bool GrowTokens(std::uint32_t begin) {
    if (count_ >= options_.max_tokens) {
      TooManyTokens(begin);
      return false;
    }
    // Blocks start small and double up to kTokenBlock, so that a small source (the parser
    // re-lexes each f-string expression on its own) does not fill a full block of defaults.
    const std::size_t grown =
        count_ + std::min({kTokenBlock, count_ + 16, options_.max_tokens - count_});
    if (grown > result_.tokens.capacity()) {
      // Past the reservation: double it here, so that the new buffer is advised too.
      result_.tokens.reserve(std::max(grown, 2 * result_.tokens.capacity()));
      AdviseHugePages(result_.tokens.data(), result_.tokens.capacity() * sizeof(Token));
    }
    result_.tokens.resize(grown);
    return true;
  }

  // Appends a token without a value.
  [[gnu::always_inline]] void Push(TokenKind kind, std::uint32_t begin, std::uint32_t end) {
    Token* token = NextSlot(begin);
    if (token == nullptr) return;
    token->kind = kind;
    token->range = SourceRange{.file = file_, .begin = begin, .end = end};
  }

  // Appends a token with a value.
  void Push(TokenKind kind, std::uint32_t begin, std::uint32_t end, TokenValue value) {
    Token* token = NextSlot(begin);
    if (token == nullptr) return;
    token->kind = kind;
    token->range = SourceRange{.file = file_, .begin = begin, .end = end};
    token->value = std::move(value);
  }

  void TooManyTokens(std::uint32_t begin) {
    limit_error_ = Status::ResourceExhausted(fmt::format(
        "{}: {}: more than the {} tokens allowed", source_.name(), begin, options_.max_tokens));
    stopped_ = true;
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
  void ReportAndSkip(LexError::Reason reason, std::uint32_t begin, std::uint32_t end) {
    Report(reason, begin, end);
    pos_ = end;
    if (stopped_) return;
    Push(TokenKind::kError, begin, end);
  }

  // Lexes one token (or one run of trivia). Identifiers, keywords and operators, most of the
  // tokens, share the one Push at the end, so the hot path appends in a single place.
  void LexOne() {
    const std::uint32_t begin = Pos();
    const char c = data_[pos_];
    TokenKind kind = TokenKind::kIdent;  // set below on every path that reaches the Push
    switch (ClassOf(c)) {
      case kSpace:  // reached only with keep_trivia; otherwise Run skips whitespace
        ++pos_;
        while (IsSpace(data_[pos_])) ++pos_;  // stops at the '\0' sentinel
        if (options_.keep_trivia) Push(TokenKind::kWhitespace, begin, Pos());
        return;
      case kIdentStart:
        if (c == 'f' && data_[pos_ + 1] == '"') return LexString(/*is_fstring=*/true);
        kind = ScanIdentifier();
        if (kind == TokenKind::kTrue || kind == TokenKind::kFalse) {
          return Push(kind, begin, Pos(), kind == TokenKind::kTrue);
        }
        break;
      case kDigit:
        return LexNumber();
      case kQuote:
        return LexString(/*is_fstring=*/false);
      case kSlash:
        if (data_[pos_ + 1] == '/') return LexComment();
        [[fallthrough]];
      case kPunct:
        if (!ScanPunct(kind)) return;
        break;
      case kOther:
        return UnexpectedCharacter();
    }
    Push(kind, begin, Pos());
  }

  // `//` up to, not including, the end of the line. Test directives `//@` and `//~` are
  // ordinary comments (docs/kodo.md §4.1).
  void LexComment() {
    const std::uint32_t begin = Pos();
    const void* newline = std::memchr(data_ + pos_, '\n', size_ - pos_);
    const std::size_t line_end =
        newline != nullptr ? static_cast<std::size_t>(static_cast<const char*>(newline) - data_)
                           : size_;
    // Fast path: an all-ASCII comment is valid UTF-8 as it stands.
    unsigned char high_bits = 0;
    for (std::size_t i = pos_; i < line_end; ++i) high_bits |= static_cast<unsigned char>(data_[i]);
    if (high_bits < 0x80) {
      pos_ = line_end;
    } else {
      while (pos_ < line_end) {
        const std::size_t length = Utf8SequenceLength(text_, pos_);
        if (length == 0) {
          Report(LexError::Reason::kInvalidUtf8, Pos(), Pos() + 1);
          if (stopped_) return;
          ++pos_;  // recovering: the bad byte stays part of the comment
          continue;
        }
        pos_ += length;
      }
    }
    if (options_.keep_trivia) Push(TokenKind::kComment, begin, Pos());
  }

  // Scans an identifier or keyword and returns its kind.
  TokenKind ScanIdentifier() {
    const std::size_t begin = pos_;
    ++pos_;
    while (IsIdentContinue(data_[pos_])) ++pos_;  // stops at the '\0' sentinel
    // Keywords are 2 to kMaxKeywordLength lower-case letters: type names, long names and
    // one-letter names need no lookup.
    const std::size_t length = pos_ - begin;
    const char first = data_[begin];
    if (length < 2 || length > kMaxKeywordLength || first < 'a' || first > 'z') {
      return TokenKind::kIdent;
    }
    return LookupKeyword(std::string_view(data_ + begin, pos_ - begin)).value_or(TokenKind::kIdent);
  }

  // Integer `[0-9][0-9_]*` (must fit int64) or float `[0-9][0-9_]*\.[0-9][0-9_]*` (docs/kodo.md
  // §4.1).
  void LexNumber() {
    const std::uint32_t begin = Pos();
    // Stops at the '\0' sentinel.
    auto scan_digits = [&] {
      while (IsDigit(data_[pos_]) || data_[pos_] == '_') ++pos_;
    };
    scan_digits();
    if (data_[pos_] == '.' && IsDigit(data_[pos_ + 1])) {  // '\0' at the end
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
    Push(TokenKind::kIntLit, begin, Pos(), static_cast<std::int64_t>(value));
  }

  // Parses the float in [begin, end), underscores ignored. A literal too large for a double is
  // +infinity and one too small is 0, as Rust's f64 parsing gives; no literal is an error.
  double ParseFloat(std::uint32_t begin, std::uint32_t end) const {
    std::string_view digits = text_.substr(begin, end - begin);
    std::string without_underscores;  // used only when the literal has an underscore
    if (digits.find('_') != std::string_view::npos) {
      without_underscores.reserve(digits.size());
      for (char c : digits) {
        if (c != '_') without_underscores.push_back(c);
      }
      digits = without_underscores;
    }
    double value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    (void)ptr;
    if (ec == std::errc::result_out_of_range) {
      // Out of range in either direction: decide by the integer part.
      const std::size_t dot = digits.find('.');
      const bool big = digits.substr(0, dot).find_first_not_of('0') != std::string_view::npos;
      return big ? std::numeric_limits<double>::infinity() : 0.0;
    }
    return value;
  }

  // Decodes a string body starting after its opening quote; pos_ ends after the closing quote.
  // Returns false (and has reported) when the string is unterminated or lexing stopped.
  // `want_offsets`: record out.source_offsets (f-strings need them to place their parts).
  bool DecodeString(std::uint32_t token_begin, bool want_offsets, DecodedString& out) {
    out.body_begin = Pos();
    // Fast path: a body of plain ASCII without escapes is copied as it stands.
    std::size_t i = pos_;
    while (i < size_ && IsPlainStringByte(data_[i])) ++i;
    if (i < size_ && data_[i] == '"') {
      out.text.assign(data_ + pos_, i - pos_);
      out.copied = true;
      out.body_end = static_cast<std::uint32_t>(i);
      pos_ = i + 1;
      return true;
    }
    // The full decoder, from the start of the body.
    auto append = [&](std::string_view bytes, std::uint32_t from) {
      out.text.append(bytes);
      if (want_offsets) out.source_offsets.insert(out.source_offsets.end(), bytes.size(), from);
    };
    while (true) {
      if (pos_ >= size_) {
        Report(LexError::Reason::kUnterminatedString, token_begin, End());
        return false;
      }
      const char c = data_[pos_];
      const std::uint32_t at = Pos();
      if (c == '"') {
        out.body_end = at;
        ++pos_;
        return true;
      }
      if (c == '\\') {
        if (pos_ + 1 >= size_) {
          Report(LexError::Reason::kUnterminatedString, token_begin, End());
          return false;
        }
        char decoded = 0;
        switch (data_[pos_ + 1]) {
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
      if (IsPlainStringByte(c)) {
        // A run of plain ASCII bytes is copied at once.
        std::size_t run_end = pos_ + 1;
        while (run_end < size_ && IsPlainStringByte(data_[run_end])) ++run_end;
        out.text.append(data_ + pos_, run_end - pos_);
        if (want_offsets) {
          for (std::size_t k = pos_; k < run_end; ++k) {
            out.source_offsets.push_back(static_cast<std::uint32_t>(k));
          }
        }
        pos_ = run_end;
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
      for (std::size_t k = 0; k < length; ++k) {
        append(text_.substr(pos_ + k, 1), static_cast<std::uint32_t>(pos_ + k));
      }
      pos_ += length;
    }
  }

  // `"..."` or `f"..."` (docs/kodo.md §4.1). Raw newlines are allowed inside.
  void LexString(bool is_fstring) {
    const std::uint32_t begin = Pos();
    pos_ += is_fstring ? 2 : 1;
    DecodedString decoded;
    if (!DecodeString(begin, /*want_offsets=*/is_fstring, decoded)) {
      if (stopped_) return;
      // Recovering from an unterminated string: it ran to the end of the text.
      pos_ = size_;
      return Push(TokenKind::kError, begin, End());
    }
    if (!is_fstring) return Push(TokenKind::kStringLit, begin, Pos(), std::move(decoded.text));
    Push(TokenKind::kFStringLit, begin, Pos(), SplitFString(decoded));
  }

  // Splits a decoded f-string body at `{`...`}` pairs, counting nested braces. There is no
  // brace escape; a lone `}` is text (docs/kodo.md §4.1).
  FStringValue SplitFString(const DecodedString& decoded) const {
    const std::string& d = decoded.text;
    auto source_at = [&](std::size_t i) { return decoded.SourceAt(i); };
    FStringValue value;
    // At most one text part before each `{`, one expression part per `{`, and one text part
    // after the last: reserving that avoids regrowing (and moving strings) while adding.
    value.parts.reserve(2 * static_cast<std::size_t>(std::count(d.begin(), d.end(), '{')) + 1);
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
      value.parts.push_back(
          FStringPart{.kind = FStringPart::Kind::kText,
                      .text = {},
                      .range = source_.Range(decoded.body_begin, decoded.body_begin)});
    }
    return value;
  }

  // Operators and punctuation, longest match first (docs/kodo.md §4.1).
  // Scans an operator or punctuation into `kind`. Returns false when no token starts here (then
  // it has reported E0001 and skipped, or stopped).
  bool ScanPunct(TokenKind& kind) {
    // pos_ < size_, so `next` is at most the '\0' sentinel; data_[pos_ + 2] is read only when
    // `next` is a real character.
    const char c = data_[pos_];
    const char next = data_[pos_ + 1];
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
        if (next != '&') {
          UnexpectedCharacter();
          return false;
        }
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
        if (next == '.' && data_[pos_ + 2] == '=') {
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
        UnexpectedCharacter();
        return false;
    }
    pos_ += length;
    return true;
  }

  // A character no token starts with: one whole UTF-8 character, or one byte of invalid UTF-8.
  void UnexpectedCharacter() {
    const std::uint32_t begin = Pos();
    const std::size_t length = Utf8SequenceLength(text_, pos_);
    if (length == 0) return ReportAndSkip(LexError::Reason::kInvalidUtf8, begin, begin + 1);
    return ReportAndSkip(LexError::Reason::kUnexpectedCharacter, begin,
                         static_cast<std::uint32_t>(begin + length));
  }

  const SourceBuffer& source_;
  const LexOptions& options_;
  const std::string_view text_;
  const char* const data_;  // text_.data(), followed by a '\0'
  const std::size_t size_;  // text_.size()
  const FileId file_;
  std::size_t pos_ = 0;
  std::size_t count_ = 0;              // tokens written into result_.tokens (the rest are defaults)
  Status limit_error_ = Status::Ok();  // set when max_tokens was crossed
  bool stopped_ = false;
  LexResult result_;
};

}  // namespace

Result<LexResult> Lex(const SourceBuffer& source, const LexOptions& options) {
  return Lexer(source, options).Run();
}

}  // namespace trove::kodo::lex

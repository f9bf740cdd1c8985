#include "warden/glue/js_lexer.h"

#include <array>

namespace trove::warden::glue {
namespace {

bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }

bool IsLineBreak(unsigned char c) { return c == '\n' || c == '\r'; }

// Multi-byte punctuators, longest first within each first byte (ECMAScript's list).
constexpr std::array<std::string_view, 33> kPuncts = {
    ">>>=", "...", "===", "!==", "**=", "<<=", ">>=", ">>>", "&&=", "||=", "?\?=",
    "=>",   "==",  "!=",  "<=",  ">=",  "&&",  "||",  "??",  "?.",  "++",  "--",
    "+=",   "-=",  "*=",  "/=",  "%=",  "&=",  "|=",  "^=",  "**",  "<<",  ">>"};

// Keywords after which `/` starts a regular expression.
constexpr std::array<std::string_view, 14> kRegexKeywords = {
    "return", "typeof", "instanceof", "in", "of",   "new",   "delete",
    "void",   "throw",  "case",       "do", "else", "yield", "await"};

}  // namespace

bool JsLexer::RegexAllowed() const {
  switch (last_kind_) {
    case TokenKind::kIdentifier:
      for (std::string_view k : kRegexKeywords) {
        if (last_text_ == k) return true;
      }
      return false;
    case TokenKind::kNumber:
    case TokenKind::kString:
    case TokenKind::kRegex:
      return false;
    case TokenKind::kTemplate:
      // After a template's closing piece a `/` divides; after an opening `${` piece it is an
      // operand position.
      return !last_text_.empty() && last_text_.back() == '{';
    case TokenKind::kPunct:
      return !(last_text_ == ")" || last_text_ == "]" || last_text_ == "}");
    case TokenKind::kComment:
    case TokenKind::kEnd:
      return true;
  }
  return true;
}

Token JsLexer::Next() {
  const std::size_t n = input_.size();
  // Whitespace, control bytes and the BOM-free rest: anything <= ' ' is a separator.
  while (pos_ < n && static_cast<unsigned char>(input_[pos_]) <= ' ') ++pos_;
  if (pos_ >= n) return Token{TokenKind::kEnd, {}, n};
  const std::size_t start = pos_;
  const unsigned char c = static_cast<unsigned char>(input_[pos_]);
  Token token;
  if (c == '/' && pos_ + 1 < n && (input_[pos_ + 1] == '/' || input_[pos_ + 1] == '*')) {
    if (input_[pos_ + 1] == '/') {
      pos_ += 2;
      while (pos_ < n && !IsLineBreak(static_cast<unsigned char>(input_[pos_]))) ++pos_;
      return Token{TokenKind::kComment, input_.substr(start + 2, pos_ - start - 2), start};
    }
    const std::size_t end = input_.find("*/", pos_ + 2);
    if (end == std::string_view::npos) {
      pos_ = n;
      return Token{TokenKind::kComment, input_.substr(start + 2), start};
    }
    pos_ = end + 2;
    return Token{TokenKind::kComment, input_.substr(start + 2, end - start - 2), start};
  }
  if (IsIdentStart(c) || c == '\\') {
    // `\` starts a \uXXXX escape; it is kept as part of the identifier's bytes.
    ++pos_;
    while (pos_ < n &&
           (IsIdentByte(static_cast<unsigned char>(input_[pos_])) || input_[pos_] == '\\')) {
      ++pos_;
    }
    token = Token{TokenKind::kIdentifier, input_.substr(start, pos_ - start), start};
  } else if (IsDigit(c) ||
             (c == '.' && pos_ + 1 < n && IsDigit(static_cast<unsigned char>(input_[pos_ + 1])))) {
    ++pos_;
    while (pos_ < n) {
      const unsigned char d = static_cast<unsigned char>(input_[pos_]);
      if (IsIdentByte(d) || d == '.') {
        ++pos_;
      } else if ((d == '+' || d == '-') && (input_[pos_ - 1] == 'e' || input_[pos_ - 1] == 'E') &&
                 !(pos_ - start >= 2 && input_[start] == '0' &&
                   (input_[start + 1] == 'x' || input_[start + 1] == 'X'))) {
        ++pos_;
      } else {
        break;
      }
    }
    token = Token{TokenKind::kNumber, input_.substr(start, pos_ - start), start};
  } else if (c == '"' || c == '\'') {
    ++pos_;
    while (pos_ < n) {
      const unsigned char d = static_cast<unsigned char>(input_[pos_]);
      if (d == c || IsLineBreak(d)) break;
      if (d == '\\' && pos_ + 1 < n) ++pos_;  // an escaped byte, line continuations included
      ++pos_;
    }
    const std::size_t end = pos_;
    if (pos_ < n && static_cast<unsigned char>(input_[pos_]) == c) ++pos_;
    token = Token{TokenKind::kString, input_.substr(start + 1, end - start - 1), start};
  } else if (c == '`') {
    ++pos_;
    token = LexTemplatePiece(start);
  } else if (c == '}' && !template_stack_.empty() && template_stack_.back() == brace_depth_) {
    // The `}` closing a template's `${`: the template resumes.
    template_stack_.pop_back();
    --brace_depth_;
    ++pos_;
    token = LexTemplatePiece(start);
  } else if (c == '/' && RegexAllowed()) {
    token = LexRegex(start);
  } else {
    token = LexPunct(start);
    if (token.text == "{") {
      ++brace_depth_;
    } else if (token.text == "}" && brace_depth_ > 0) {
      --brace_depth_;
    }
  }
  last_kind_ = token.kind;
  last_text_ = token.text;
  return token;
}

// Scans template characters from pos_ to the closing backquote (the token ends after it) or to
// a `${` (the token ends after it and the template waits on the stack).
Token JsLexer::LexTemplatePiece(std::size_t start) {
  const std::size_t n = input_.size();
  while (pos_ < n) {
    const char d = input_[pos_];
    if (d == '\\' && pos_ + 1 < n) {
      pos_ += 2;
    } else if (d == '`') {
      ++pos_;
      break;
    } else if (d == '$' && pos_ + 1 < n && input_[pos_ + 1] == '{') {
      pos_ += 2;
      ++brace_depth_;
      if (template_stack_.size() < kMaxTemplateDepth) template_stack_.push_back(brace_depth_);
      break;
    } else {
      ++pos_;
    }
  }
  return Token{TokenKind::kTemplate, input_.substr(start, pos_ - start), start};
}

Token JsLexer::LexRegex(std::size_t start) {
  const std::size_t n = input_.size();
  ++pos_;  // the opening '/'
  bool in_class = false;
  while (pos_ < n) {
    const unsigned char d = static_cast<unsigned char>(input_[pos_]);
    if (IsLineBreak(d)) break;
    if (d == '\\' && pos_ + 1 < n && !IsLineBreak(static_cast<unsigned char>(input_[pos_ + 1]))) {
      pos_ += 2;
      continue;
    }
    ++pos_;
    if (d == '[') {
      in_class = true;
    } else if (d == ']') {
      in_class = false;
    } else if (d == '/' && !in_class) {
      while (pos_ < n && IsIdentByte(static_cast<unsigned char>(input_[pos_]))) ++pos_;  // flags
      break;
    }
  }
  return Token{TokenKind::kRegex, input_.substr(start, pos_ - start), start};
}

Token JsLexer::LexPunct(std::size_t start) {
  const std::string_view rest = input_.substr(start);
  // Every multi-byte punctuator starts with one of these and continues with one of those.
  constexpr std::string_view kFirst = "=!<>&|?.+-*/%^";
  constexpr std::string_view kSecond = "=>&|?.+-*<";
  if (rest.size() < 2 || kFirst.find(rest[0]) == std::string_view::npos ||
      kSecond.find(rest[1]) == std::string_view::npos) {
    ++pos_;
    return Token{TokenKind::kPunct, rest.substr(0, 1), start};
  }
  for (std::string_view p : kPuncts) {
    if (p[0] == rest[0] && p[1] == rest[1] && rest.substr(0, p.size()) == p) {
      // "?." followed by a digit is "?" then a number (`a?.5:b`).
      if (p == "?." && rest.size() > 2 && IsDigit(static_cast<unsigned char>(rest[2]))) break;
      pos_ += p.size();
      return Token{TokenKind::kPunct, rest.substr(0, p.size()), start};
    }
  }
  ++pos_;
  return Token{TokenKind::kPunct, rest.substr(0, 1), start};
}

}  // namespace trove::warden::glue

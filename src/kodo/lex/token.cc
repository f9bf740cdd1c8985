#include "kodo/lex/token.h"

#include <array>

namespace trove::kodo::lex {
namespace {

enum class Category : std::uint8_t { kKeyword, kContextual, kPunct, kLiteral, kSpecial };

struct KindInfo {
  std::string_view debug_name;
  std::string_view spelling;
  Category category;
};

constexpr std::array<KindInfo, kTokenKindCount> kKindInfo = {{
#define KODO_KEYWORD(Name, Spelling) {#Name, Spelling, Category::kKeyword},
#define KODO_CONTEXTUAL(Name, Spelling) {#Name, Spelling, Category::kContextual},
#define KODO_PUNCT(Name, Spelling) {#Name, Spelling, Category::kPunct},
#define KODO_LITERAL(Name, Spelling) {#Name, Spelling, Category::kLiteral},
#define KODO_SPECIAL(Name, Spelling) {#Name, Spelling, Category::kSpecial},
#include "kodo/lex/token_kinds.def"
}};

const KindInfo& Info(TokenKind kind) { return kKindInfo[static_cast<std::size_t>(kind)]; }

}  // namespace

std::string_view DebugName(TokenKind kind) { return Info(kind).debug_name; }
std::string_view Spelling(TokenKind kind) { return Info(kind).spelling; }

bool IsKeyword(TokenKind kind) {
  const Category c = Info(kind).category;
  return c == Category::kKeyword || c == Category::kContextual;
}
bool IsContextualKeyword(TokenKind kind) { return Info(kind).category == Category::kContextual; }
bool IsPunct(TokenKind kind) { return Info(kind).category == Category::kPunct; }
bool IsTrivia(TokenKind kind) {
  return kind == TokenKind::kWhitespace || kind == TokenKind::kComment;
}

std::optional<TokenKind> LookupKeyword(std::string_view text) {
  // 42 keywords; a linear scan over the table is fast enough for identifiers of this length and
  // keeps the table the single source. Check the first byte before comparing.
  if (text.empty() || text.size() > 9) return std::nullopt;
  for (std::size_t i = 0; i < kKindInfo.size(); ++i) {
    const KindInfo& info = kKindInfo[i];
    if ((info.category == Category::kKeyword || info.category == Category::kContextual) &&
        info.spelling[0] == text[0] && info.spelling == text) {
      return static_cast<TokenKind>(i);
    }
  }
  return std::nullopt;
}

}  // namespace trove::kodo::lex

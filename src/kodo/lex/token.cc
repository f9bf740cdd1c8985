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

namespace {

// Keywords bucketed by their first letter, built at compile time from the one table: a lookup
// compares against the few keywords sharing the identifier's first letter (at most 6), not
// against every token kind. Identifiers are the most common token, so this is hot.
constexpr int kMaxPerLetter = 8;
struct KeywordBuckets {
  std::array<std::array<std::uint8_t, kMaxPerLetter>, 26> kinds{};
  std::array<std::uint8_t, 26> counts{};
};

constexpr KeywordBuckets MakeKeywordBuckets() {
  KeywordBuckets b;
  for (std::size_t i = 0; i < kKindInfo.size(); ++i) {
    const KindInfo& info = kKindInfo[i];
    if (info.category != Category::kKeyword && info.category != Category::kContextual) continue;
    const int letter = info.spelling[0] - 'a';
    b.kinds[letter][b.counts[letter]++] = static_cast<std::uint8_t>(i);
  }
  return b;
}

constexpr KeywordBuckets kKeywordBuckets = MakeKeywordBuckets();
static_assert(kTokenKindCount < 256);

}  // namespace

std::optional<TokenKind> LookupKeyword(std::string_view text) {
  if (text.empty() || text.size() > 9 || text[0] < 'a' || text[0] > 'z') return std::nullopt;
  const int letter = text[0] - 'a';
  for (int j = 0; j < kKeywordBuckets.counts[letter]; ++j) {
    const std::uint8_t kind = kKeywordBuckets.kinds[letter][j];
    if (kKindInfo[kind].spelling == text) return static_cast<TokenKind>(kind);
  }
  return std::nullopt;
}

}  // namespace trove::kodo::lex

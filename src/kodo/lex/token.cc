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

// Keywords in a perfect hash table built at compile time from the one kinds table. An
// identifier's slot comes from its first two letters and its length; one comparison with the
// keyword in that slot (if any) decides. Identifiers are the most common token, so this is hot.
// The multipliers were chosen so that the 42 keywords land in distinct slots; the static_assert
// below fails the build if a new keyword collides (then pick new multipliers).
constexpr std::size_t kKeywordSlots = 128;
constexpr std::uint8_t kNoKeyword = 0xFF;

constexpr std::size_t KeywordSlot(char c0, char c1, std::size_t length) {
  return (static_cast<unsigned char>(c0) * 4u + static_cast<unsigned char>(c1) * 20u +
          length * 7u) %
         kKeywordSlots;
}

struct KeywordTable {
  std::array<std::uint8_t, kKeywordSlots> kinds{};
  bool collision = false;
};

constexpr KeywordTable MakeKeywordTable() {
  KeywordTable t;
  for (auto& k : t.kinds) k = kNoKeyword;
  for (std::size_t i = 0; i < kKindInfo.size(); ++i) {
    const KindInfo& info = kKindInfo[i];
    if (info.category != Category::kKeyword && info.category != Category::kContextual) continue;
    // The promise of kMaxKeywordLength (token.h): 2 to 9 lower-case letters.
    if (info.spelling.size() < 2 || info.spelling.size() > kMaxKeywordLength) t.collision = true;
    for (char c : info.spelling) {
      if (c < 'a' || c > 'z') t.collision = true;
    }
    const std::size_t slot = KeywordSlot(info.spelling[0], info.spelling[1], info.spelling.size());
    if (t.kinds[slot] != kNoKeyword) t.collision = true;
    t.kinds[slot] = static_cast<std::uint8_t>(i);
  }
  return t;
}

constexpr KeywordTable kKeywordTable = MakeKeywordTable();
static_assert(!kKeywordTable.collision,
              "keyword perfect hash collides (change KeywordSlot) or a keyword breaks the "
              "kMaxKeywordLength promise");
static_assert(kTokenKindCount < kNoKeyword);

}  // namespace

std::optional<TokenKind> LookupKeyword(std::string_view text) {
  // Every keyword has 2 to 9 letters.
  if (text.size() < 2 || text.size() > kMaxKeywordLength) return std::nullopt;
  const std::uint8_t kind = kKeywordTable.kinds[KeywordSlot(text[0], text[1], text.size())];
  if (kind == kNoKeyword) return std::nullopt;
  // Compared by hand: the words are short, and std::string_view's == calls memcmp.
  const std::string_view spelling = kKindInfo[kind].spelling;
  if (spelling.size() != text.size()) return std::nullopt;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (spelling[i] != text[i]) return std::nullopt;
  }
  return static_cast<TokenKind>(kind);
}

}  // namespace trove::kodo::lex

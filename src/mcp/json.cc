#include "mcp/json.h"

namespace trove::mcp {

int JsonNestingDepth(std::string_view text, int limit) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  bool escape = false;
  for (char c : text) {
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '{':
      case '[':
        if (++depth > max_depth) {
          max_depth = depth;
          if (max_depth > limit) return limit + 1;
        }
        break;
      case '}':
      case ']': --depth; break;
      default: break;
    }
  }
  return max_depth;
}

std::string QuoteForMessage(const Json& value) {
  std::string s = Dump(value);
  constexpr std::size_t kMax = 80;
  if (s.size() > kMax) {
    std::size_t cut = kMax;
    // Do not split a UTF-8 sequence.
    while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
    s.resize(cut);
    s += "...";
  }
  return s;
}

}  // namespace trove::mcp

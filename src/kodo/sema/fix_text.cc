#include "kodo/sema/fix_text.h"

namespace trove::kodo::sema::fixtext {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::uint32_t LineStart(std::string_view text, std::uint32_t offset) {
  if (offset > text.size()) offset = static_cast<std::uint32_t>(text.size());
  while (offset > 0 && text[offset - 1] != '\n') --offset;
  return offset;
}

}  // namespace

std::optional<std::uint32_t> AfterOpenBrace(std::string_view text, std::uint32_t from) {
  for (std::size_t i = from; i < text.size(); ++i) {
    if (text[i] == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      const std::size_t nl = text.find('\n', i);
      if (nl == std::string_view::npos) return std::nullopt;
      i = nl;
      continue;
    }
    if (text[i] == '{') return static_cast<std::uint32_t>(i + 1);
  }
  return std::nullopt;
}

std::string LineIndent(std::string_view text, std::uint32_t offset) {
  std::uint32_t i = LineStart(text, offset);
  const std::uint32_t begin = i;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  return std::string(text.substr(begin, i - begin));
}

std::uint32_t LineContentStart(std::string_view text, std::uint32_t offset) {
  std::uint32_t i = LineStart(text, offset);
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  return i;
}

std::optional<Insertion> LastInBraces(std::string_view text, std::uint32_t end,
                                      const std::vector<std::string>& elements) {
  if (end == 0 || end > text.size() || text[end - 1] != '}' || elements.empty()) {
    return std::nullopt;
  }
  const std::uint32_t brace = end - 1;
  std::uint32_t i = brace;
  while (i > 0 && IsBlank(text[i - 1])) --i;
  Insertion out;
  if (i == 0 || text[i - 1] == '\n') {  // the `}` starts its line
    const std::string indent = LineIndent(text, brace) + "    ";
    out.offset = i;
    for (const std::string& e : elements) out.text += indent + e + ",\n";
    return out;
  }
  while (i > 0 && (IsBlank(text[i - 1]) || text[i - 1] == '\n')) --i;
  const bool needs_comma = i > 0 && text[i - 1] != '{' && text[i - 1] != ',';
  out.offset = i;
  for (std::size_t k = 0; k < elements.size(); ++k) {
    out.text += (k == 0 && !needs_comma ? " " : ", ") + elements[k];
  }
  return out;
}

std::optional<Insertion> LastModuleItem(std::string_view text, std::uint32_t module_start,
                                        std::uint32_t module_end, std::string_view item) {
  if (module_end == 0 || module_end > text.size() || text[module_end - 1] != '}') {
    return std::nullopt;
  }
  const std::string indent = LineIndent(text, module_start) + "    ";
  std::string lines;
  std::size_t pos = 0;
  while (pos <= item.size()) {
    std::size_t nl = item.find('\n', pos);
    if (nl == std::string_view::npos) nl = item.size();
    lines += indent;
    lines += item.substr(pos, nl - pos);
    lines += '\n';
    pos = nl + 1;
  }
  const std::uint32_t brace = module_end - 1;
  std::uint32_t i = brace;
  while (i > 0 && IsBlank(text[i - 1])) --i;
  Insertion out;
  if (i == 0 || text[i - 1] == '\n') {  // the `}` starts its line
    out.offset = i;
    out.text = "\n" + lines;
  } else {
    out.offset = brace;
    out.text = "\n" + lines;
  }
  return out;
}

std::uint32_t OverTrailingComma(std::string_view text, std::uint32_t end) {
  std::uint32_t i = end;
  while (i < text.size() && IsBlank(text[i])) ++i;
  if (i < text.size() && text[i] == ',') {
    ++i;
    while (i < text.size() && IsBlank(text[i])) ++i;
    return i;
  }
  return end;
}

std::optional<std::uint32_t> OpenParenOfTrailingArgs(std::string_view text, std::uint32_t start,
                                                     std::uint32_t end) {
  if (end == 0 || end > text.size() || end <= start || text[end - 1] != ')') return std::nullopt;
  int depth = 0;
  for (std::uint32_t i = end; i > start; --i) {
    const char c = text[i - 1];
    if (c == ')') ++depth;
    if (c == '(' && --depth == 0) return i - 1;
  }
  return std::nullopt;
}

}  // namespace trove::kodo::sema::fixtext

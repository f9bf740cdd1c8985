#include "librarian/extract/chunks.h"

#include <string>
#include <string_view>
#include <vector>

#include "librarian/extract/text_util.h"

namespace trove::librarian::extract {
namespace {

std::string BaseName(std::string_view path) {
  std::size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

bool Blank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v') return false;
  }
  return true;
}

}  // namespace

std::string_view SymbolKindName(SymbolKind kind) {
  switch (kind) {
    case SymbolKind::kFunction:
      return "function";
    case SymbolKind::kMethod:
      return "method";
    case SymbolKind::kClass:
      return "class";
    case SymbolKind::kStruct:
      return "struct";
    case SymbolKind::kInterface:
      return "interface";
    case SymbolKind::kEnum:
      return "enum";
    case SymbolKind::kNamespace:
      return "namespace";
    case SymbolKind::kTypeAlias:
      return "type_alias";
  }
  return "function";
}

std::string_view ChunkKindName(ChunkKind kind) {
  switch (kind) {
    case ChunkKind::kSymbol:
      return "symbol";
    case ChunkKind::kFile:
      return "file";
    case ChunkKind::kWindow:
      return "window";
  }
  return "symbol";
}

void BuildChunks(std::string_view path, std::string_view content, FileFacts& facts) {
  internal::LineIndex lines(content);
  facts.line_count = lines.count();
  std::vector<bool> covered(lines.count() + 1, false);
  for (std::size_t i = 0; i < facts.symbols.size(); ++i) {
    const Symbol& s = facts.symbols[i];
    if (s.kind == SymbolKind::kNamespace || s.start_line == 0 || s.end_line < s.start_line ||
        s.end_line > lines.count()) {
      continue;
    }
    Chunk c;
    c.kind = ChunkKind::kSymbol;
    c.symbol = static_cast<std::int32_t>(i);
    c.name = s.name;
    c.qualified_name = s.qualified_name;
    c.start_line = s.start_line;
    c.end_line = s.end_line;
    c.doc = s.doc;
    c.text = std::string(lines.Lines(s.start_line, s.end_line));
    for (std::uint32_t l = s.start_line; l <= s.end_line; ++l) covered[l] = true;
    facts.chunks.push_back(std::move(c));
  }
  Chunk file;
  file.kind = ChunkKind::kFile;
  file.name = BaseName(path);
  file.qualified_name = file.name;
  bool any = false;
  for (std::uint32_t l = 1; l <= lines.count(); ++l) {
    if (covered[l]) continue;
    std::string_view text = lines.Lines(l, l);
    if (Blank(text)) continue;
    if (!any) file.start_line = l;
    file.end_line = l;
    any = true;
    file.text += text;
    if (file.text.empty() || file.text.back() != '\n') file.text.push_back('\n');
  }
  if (any) facts.chunks.push_back(std::move(file));
}

void BuildWindows(std::string_view path, std::string_view content, FileFacts& facts) {
  internal::LineIndex lines(content);
  facts.line_count = lines.count();
  std::string name = BaseName(path);
  for (std::uint32_t start = 1; start <= lines.count(); start += kWindowLines - kWindowOverlap) {
    std::uint32_t end = std::min<std::uint32_t>(start + kWindowLines - 1, lines.count());
    Chunk c;
    c.kind = ChunkKind::kWindow;
    c.name = name;
    c.qualified_name = name;
    c.start_line = start;
    c.end_line = end;
    c.text = std::string(lines.Lines(start, end));
    facts.chunks.push_back(std::move(c));
    if (end == lines.count()) break;
  }
}

}  // namespace trove::librarian::extract

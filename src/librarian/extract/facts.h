// FileFacts: what extraction learns about one source file (docs/librarian.md §1.1, §6.2): its
// symbols with exact spans, its imports, the call references inside it and its function-level
// chunks.
// Plain values with no parser types, so the store and later layers can include this header
// without pulling in tree-sitter.
// Thread safety: values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trove::librarian::extract {

// Symbol kinds (docs/librarian.md §1.1). Ruby/Rust modules, Go and Java packages map to kNamespace.
enum class SymbolKind : std::uint8_t {
  kFunction,
  kMethod,
  kClass,
  kStruct,
  kInterface,
  kEnum,
  kNamespace,
  kTypeAlias,
};

// Returns "function", "method", "class", "struct", "interface", "enum", "namespace",
// "type_alias".
std::string_view SymbolKindName(SymbolKind kind);
// Returns whether `kind` names a callable (function or method).
inline bool IsCallable(SymbolKind kind) {
  return kind == SymbolKind::kFunction || kind == SymbolKind::kMethod;
}

struct Symbol {
  std::string name;            // e.g. "~Widget"
  std::string qualified_name;  // e.g. "ns::Widget::~Widget", "Server.handle"
  SymbolKind kind = SymbolKind::kFunction;
  // 1-based, inclusive lines of the definition (body included).
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  // Byte range [start_byte, end_byte) of the definition in the file.
  std::uint32_t start_byte = 0;
  std::uint32_t end_byte = 0;
  // The definition's head up to its body, whitespace collapsed, at most 240 bytes:
  // "int Widget::size() const", "def parse(self, text: str) -> Node".
  std::string signature;
  // The first sentence of the doc comment or docstring; empty when there is none.
  std::string doc;
  // Index of the enclosing symbol in FileFacts::symbols, -1 at top level.
  std::int32_t parent = -1;
  // The span holds ERROR or MISSING nodes (tree-sitter only).
  bool parse_error = false;
  // False when the extractor gave no end (ctags for some languages); end_line then runs to
  // the line before the next tag, or to the end of the file.
  bool end_known = true;
};

struct Import {
  std::string module;  // as written, quotes stripped: "stdio.h", "os.path", "./util"
  std::uint32_t line = 0;
};

struct CallRef {
  std::string callee;  // the called name, without receiver or scope: "push_back", "parse"
  std::uint32_t line = 0;
  // Index of the innermost enclosing callable in FileFacts::symbols, -1 outside any.
  std::int32_t caller = -1;
};

enum class ChunkKind : std::uint8_t {
  kSymbol,  // the body of one function, method or type
  kFile,    // the file's remaining top-level code (lines outside every symbol chunk)
  kWindow,  // a plain-text window (60 lines, overlapping by 10)
};
std::string_view ChunkKindName(ChunkKind kind);

struct Chunk {
  ChunkKind kind = ChunkKind::kSymbol;
  std::int32_t symbol = -1;  // index into FileFacts::symbols for kSymbol, else -1
  std::string name;          // symbol name; the file's base name for kFile and kWindow
  std::string qualified_name;
  std::uint32_t start_line = 0;  // 1-based, inclusive
  std::uint32_t end_line = 0;
  std::string doc;
  std::string text;  // the lines start_line..end_line (for kFile: the uncovered lines only)
};

struct FileFacts {
  std::string language;      // "cpp", "python", ... for tree-sitter; ctags' name lower-cased
                             // ("ruby"); "text"
  std::string extractor;     // "tree-sitter:cpp@0.23.4", "ctags@5.9", "text"
  bool parse_error = false;  // the tree held ERROR or MISSING nodes somewhere
  std::uint32_t line_count = 0;
  std::vector<Symbol> symbols;  // in source order of their start
  std::vector<Import> imports;  // in source order
  std::vector<CallRef> calls;   // in source order
  std::vector<Chunk> chunks;    // symbol chunks in symbol order, then the file chunk
  // Notes on fallbacks taken ("tree-sitter: grammar rejected, used ctags"); for provenance.
  std::vector<std::string> notes;
};

}  // namespace trove::librarian::extract

// Function-level chunks (docs/librarian.md §6.8): one per function, method or type body, plus one
// per file for the remaining top-level code; plain text is cut into 60-line windows overlapping by
// 10.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "librarian/extract/facts.h"

namespace trove::librarian::extract {

inline constexpr std::uint32_t kWindowLines = 60;
inline constexpr std::uint32_t kWindowOverlap = 10;

// Fills facts.chunks from facts.symbols: a kSymbol chunk per symbol except namespaces (whose
// bodies are other symbols), then one kFile chunk holding the lines no symbol chunk covers,
// when any of them is not blank. `path` names the file chunk (its base name).
void BuildChunks(std::string_view path, std::string_view content, FileFacts& facts);

// Fills facts.chunks with kWindow chunks: lines 1-60, 51-110, ...; the last window ends at the
// last line; an empty file has none.
void BuildWindows(std::string_view path, std::string_view content, FileFacts& facts);

}  // namespace trove::librarian::extract

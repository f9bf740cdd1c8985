// Internal: a dense parse-action index for the tree-sitter core's action lookups.
//
// Debian's libtree-sitter 0.20.7 stores most of a large grammar's parse states in a compressed
// "small" table that ts_language_table_entry searches linearly. Error recovery asks it about
// every token in a state, so on C and C++ headers (macros the grammar cannot see through) that
// search was 12 % of a whole bootstrap's CPU and 45 % of its instructions. This file defines
// ts_language_table_entry itself, which interposes on the library's: the core calls it through
// its PLT, and a definition in the executable wins. For a grammar prepared with
// PrepareParseTable it answers from a dense [state][token] table of action indexes (one 16-bit
// entry per pair, 3.8 MB for C++), built once per process from the library's own answers, so
// both agree by construction; for anything else it calls the library's function (found with
// dlsym(RTLD_NEXT)). docs/decisions/0032-librarian-boot2.md.
//
// Thread safety: PrepareParseTable may be called from any thread; tables are built once under
// a lock and published with release stores, and the lookup reads them without a lock.
#pragma once

#include <cstdint>

struct TSLanguage;

namespace trove::librarian::extract::internal {

// Whether the interposition is compiled in (libtree-sitter is the shared 0.20.7 it was written
// against).
bool ParseTableInterpositionBuilt();
// Whether it is compiled in and reached: the core's calls land in this file's definition.
bool ParseTableInterposed();

// Builds the dense table for `language` unless it exists or cannot be built (then the
// library's lookup keeps answering). Cheap after the first call for a language.
void PrepareParseTable(const TSLanguage* language);

// The library's own ts_language_table_entry answer for (state, symbol): action count,
// reusability and the actions' address; for tests comparing both paths. Returns false when
// the library's function was not found.
struct TableEntryForTesting {
  const void* actions = nullptr;
  std::uint32_t action_count = 0;
  bool is_reusable = false;
};
bool LibraryTableEntryForTesting(const TSLanguage* language, std::uint16_t state,
                                 std::uint16_t symbol, TableEntryForTesting* out);
// The answer of the interposed function (dense table when prepared).
void TableEntryForTestingLookup(const TSLanguage* language, std::uint16_t state,
                                std::uint16_t symbol, TableEntryForTesting* out);
// The grammar's parse-state and token counts.
void ParseTableShapeForTesting(const TSLanguage* language, std::uint32_t* states,
                               std::uint32_t* tokens);
// Whether `language` has a dense table.
bool HasParseTableForTesting(const TSLanguage* language);

}  // namespace trove::librarian::extract::internal

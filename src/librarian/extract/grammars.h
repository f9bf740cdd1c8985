// The nine tree-sitter grammars linked into Librarian (docs/librarian.md §6.7), their npm versions
// and
// ABI. Only files in librarian/extract/ see tree-sitter types; this header forward-declares.
// Thread safety: immutable tables; TSLanguage objects are static and shareable.
#pragma once

#include <string_view>

#include "librarian/extract/routing.h"

struct TSLanguage;

namespace trove::librarian::extract {

struct GrammarInfo {
  Language language;
  std::string_view name;         // "cpp"
  std::string_view npm_package;  // "tree-sitter-cpp"
  std::string_view version;      // npm version compiled in, "0.23.4"
  int abi;                       // LANGUAGE_VERSION of its parser.c at build time
  const TSLanguage* (*load)();
};

// Returns the grammar for `language`, or null for kCtags and kText.
const GrammarInfo* FindGrammar(Language language);

// Returns every grammar, in Language order.
const GrammarInfo* Grammars(int* count);

// The ABI range the linked tree-sitter core accepts (TREE_SITTER_MIN_COMPATIBLE_LANGUAGE_VERSION
// .. TREE_SITTER_LANGUAGE_VERSION of the api.h it was built against).
int CoreMinAbi();
int CoreMaxAbi();

}  // namespace trove::librarian::extract

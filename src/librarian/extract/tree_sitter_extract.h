// Internal: extraction from a tree-sitter parse (docs/librarian.md §6.7). Walks each grammar's
// definition nodes; C/C++ qualified names come from the declarator chain and the enclosing
// namespaces and classes; doc comments are the comment block directly above a definition (no blank
// line between), or a Python docstring; identifiers in call expressions become call references.
// Thread safety: one thread uses a TreeSitterExtractor at a time.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/cancellation.h"
#include "base/status.h"
#include "librarian/extract/facts.h"
#include "librarian/extract/routing.h"

struct TSParser;
struct TSLanguage;

namespace trove::librarian::extract::internal {

class TreeSitterExtractor {
 public:
  TreeSitterExtractor();
  TreeSitterExtractor(const TreeSitterExtractor&) = delete;
  TreeSitterExtractor& operator=(const TreeSitterExtractor&) = delete;
  ~TreeSitterExtractor();

  // Parses `content` as `language` (kC .. kJava) and fills symbols, imports, calls,
  // language, extractor and parse_error; chunks are left to BuildChunks. `timeout_micros`
  // bounds parsing and the walk together (0: no limit). Returns kUnsupported when the core
  // rejects the grammar (ts_parser_set_language fails), kDeadlineExceeded past the time
  // limit, kCancelled when `cancel` (may be null) is set.
  Result<FileFacts> Extract(std::string_view content, Language language,
                            std::int64_t timeout_micros, const base::Cancellation* cancel);

  // Makes `language` parse with `grammar` instead of the linked one (null restores it); for
  // tests of the rejected-grammar path. `grammar` must outlive its use.
  void OverrideGrammarForTesting(Language language, const TSLanguage* grammar);

 private:
  TSParser* parser_;  // owned
  const TSLanguage* overrides_[kTreeSitterLanguageCount] = {};
};

}  // namespace trove::librarian::extract::internal

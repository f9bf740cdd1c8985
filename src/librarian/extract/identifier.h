// Identifier splitting for lexical retrieval (docs/librarian.md §6.8). Splits on non-alphanumerics
// (`_`, `-`, `.`, `::`, `/`, ...); inside a part breaks lower->upper (parseHttp -> parse, Http),
// before the last capital of a run followed by lower case (HTTPServer -> HTTP, Server) and
// between letters and digits (utf8Decode -> utf, 8, decode); lower-cases; drops one-character
// pieces. Non-ASCII bytes count as letters (kept, never split inside), so UTF-8 survives.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trove::librarian::extract {

// Returns the lower-cased sub-words of `identifier` in order, one-character pieces dropped:
// "parseHTTPRequest_v2" -> {"parse", "http", "request"} ("v" and "2" are one character each).
std::vector<std::string> SplitIdentifier(std::string_view identifier);

// Returns the words to index for `identifier`: the whole identifier lower-cased (when it has
// at least two characters), then its sub-words when there is more than one. Duplicates of the
// whole are not repeated: "parseHttp" -> {"parsehttp", "parse", "http"}; "parse" -> {"parse"}.
std::vector<std::string> IndexWords(std::string_view identifier);

// Returns IndexWords of every identifier-like run (letters, digits, `_`, non-ASCII) in `text`,
// space-separated, each distinct identifier once, in first-occurrence order; at most
// `max_bytes` of output. For the FTS `subwords` column.
std::string SubwordText(std::string_view text, std::size_t max_bytes = 1 << 16);

// Returns IndexWords of every identifier-like run in `text`, split or not (SubwordText leaves
// out identifiers that do not split), space-separated, each word once, in first-occurrence
// order; at most `max_bytes` of output. For matching an intent's words against stored text.
std::string AllWordsText(std::string_view text, std::size_t max_bytes = 1 << 16);

}  // namespace trove::librarian::extract

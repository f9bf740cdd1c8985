// EvalSet: the leakage-free evaluation set of docs/librarian.md §9.3 (documentation -> defining
// function, repository-scoped), its on-disk form and the text rules that build it.
//
// On disk, one JSON object per line (JSONL, deterministic field order):
//   {"kind":"set","version":1,"generator":"...","sources":"..."}
//   {"kind":"repo","name":"zod","root":"node_modules/zod","language":"typescript"}
//   {"kind":"file","repo":"zod","path":"src/v4/core/util.ts","sha256":"...","bytes":1234,
//    "blank":[[120,260],...]}                    byte ranges whose letters and digits are blanked
//   {"kind":"query","qid":"zod:0007","repo":"zod","path":"...","name":"...","qualified":"...",
//    "start_line":10,"end_line":42,"language":"typescript","split":"test",
//    "doc":"...","query":"...","query_hard":"..."}
// Third-party code is never copied into the set: a file line pins a source file by SHA-256,
// and the runner rebuilds the blanked copy from the pinned original at run time.
//
// Thread safety: values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace trove::librarian::eval {

inline constexpr int kEvalSetVersion = 1;

struct EvalRepo {
  std::string name;
  std::string root;  // absolute, or relative to the project directory
  std::string language;
};

struct EvalFile {
  std::string repo;
  std::string path;  // relative to the repo root, `/`-separated
  std::string sha256;
  std::uint64_t bytes = 0;
  // [begin, end) byte ranges to blank: the doc comments of this file's targets.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> blank;
};

struct EvalTarget {
  std::string qid;
  std::string repo;
  std::string path;
  std::string name;
  std::string qualified;
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::string language;
  std::string split;       // "dev" or "test"
  std::string doc;         // the doc comment's first sentence, as extracted
  std::string query;       // identifiers stripped
  std::string query_hard;  // also without sub-words of the function's name
};

struct EvalSet {
  std::string generator;  // what built it ("librarian_eval generate")
  std::string sources;    // the sources file it was built from
  std::vector<EvalRepo> repos;
  std::vector<EvalFile> files;  // by repo, then path
  std::vector<EvalTarget> targets;
};

// Serializes `set` as JSONL (see the file comment). Byte-identical for equal sets.
std::string SerializeEvalSet(const EvalSet& set);
// Parses SerializeEvalSet's output. kMalformed naming the line on bad input: unknown kinds or
// fields of the wrong type, a version other than kEvalSetVersion, files or queries of an
// undeclared repo, queries whose file is not listed, blank ranges out of order or past the
// file's size, a split other than dev/test.
Result<EvalSet> ParseEvalSet(std::string_view text);

// Returns `content` with every ASCII letter and digit inside `ranges` replaced by a space
// (docs/librarian.md §9.3 step 3): delimiters, line breaks and other bytes stay, so lines and
// parsing hold.
// Ranges past the end are clipped.
std::string BlankRanges(std::string_view content,
                        const std::vector<std::pair<std::uint32_t, std::uint32_t>>& ranges);

// Returns the query for a doc sentence (docs/librarian.md §9.3 step 4): inline code (`...`), JSDoc
// inline tags ({@link ...}) and everything from the first block tag (@param, :param) on are cut;
// tokens that look like identifiers are dropped: snake_case (an inner '_'), camelCase (lower
// then upper), calls (a '('), paths and member accesses (an inner '/', '.', ':', '#'), ALL-CAPS
// words with a digit or '_' (macros), and `name` itself. Punctuation around words goes;
// remaining words are joined by single spaces.
std::string StripIdentifiers(std::string_view sentence, std::string_view name);
// Returns `query` without the words that are sub-words of `name` (docs/librarian.md §9.3 step 5),
// compared lower-case: "parse the http request" with name "parseHttp" -> "the request".
std::string DropNameWords(std::string_view query, std::string_view name);
// Returns the number of words in `text` that hold at least one letter.
std::size_t CountWords(std::string_view text);

// Returns "dev" for about 30 % of target files and "test" otherwise, from a stable hash of
// "<repo>/<path>" (docs/librarian.md §9.3 step 8: split by target file).
std::string SplitOf(std::string_view repo, std::string_view path);

// Returns whether `path` (repo-relative) is a test, spec, benchmark, vendored, docs or
// examples file, which is never a target but stays as a distractor (docs/librarian.md §9.3 step 1).
bool IsExcludedFromTargets(std::string_view path);

// Returns the words of `text` lower-cased (ASCII letters and digits runs), joined by single
// spaces: the normal form used to compare doc text with source text.
std::string NormalizeWords(std::string_view text);

}  // namespace trove::librarian::eval

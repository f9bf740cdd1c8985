// Generate: builds an EvalSet (eval_set.h) from real source trees by the method of
// docs/librarian.md §9.3, deterministically: the same sources file over the same bytes gives a
// byte-identical set.
//
// Sources file (JSON, committed beside the set):
//   {"repos": [{"name": "zod", "root": "node_modules/zod", "language": "typescript",
//               "include": ["src/v4/**/*.ts"], "exclude": ["**/*.d.ts"], "cap": 120}, ...]}
// `root` is absolute or relative to the project directory; `include` (any match keeps a file;
// empty keeps every file) and `exclude` use crawl/glob.h syntax over repo-relative paths; `cap`
// bounds the queries of one repository (docs/librarian.md §9.3 step 7). Every kept file is indexed
// (targets and distractors); files above 1 MiB are left out, as the crawler skips them.
//
// Per repository: extract every kept file (tree-sitter via extract::Extractor); candidates are
// functions and methods with a doc comment in files that IsExcludedFromTargets does not reject,
// whose doc comment can be located exactly (DocCommentRange) and whose query keeps at least
// three words (and a hard variant of at least one word); queries shared by several candidates are
// dropped; the candidates are sampled by a stable hash up to `cap`; their doc comments are blanked;
// then queries whose doc sentence still occurs in the blanked repository (words compared
// lower-case) are dropped.
//
// Thread safety: one thread uses a generator call at a time (it owns an Extractor).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "librarian/eval/eval_set.h"

namespace trove::librarian::eval {

struct SourceRepo {
  std::string name;
  std::string root;
  std::string language;
  std::vector<std::string> include;
  std::vector<std::string> exclude;
  std::size_t cap = 100;
};

// Parses a sources file. kMalformed naming the field on bad input.
Result<std::vector<SourceRepo>> ParseSources(std::string_view json);

struct GenerateStats {
  std::size_t files = 0;
  std::size_t documented_functions = 0;  // callables with a doc comment, in target files
  std::size_t located = 0;               // ... whose doc comment was located exactly
  std::size_t too_short = 0;    // query under three words, or query_hard empty, after stripping
  std::size_t shared = 0;       // dropped: query shared by several targets
  std::size_t sampled_out = 0;  // over the cap
  std::size_t leaked = 0;       // dropped: sentence still in the blanked corpus
  std::size_t targets = 0;
};

// Returns the set built from `repos`; `project_dir` resolves relative roots; `sources_name`
// is recorded in the set. `stats` (optional) receives per-set counts. kNotFound for a missing
// root; extraction failures of single files leave those files out of the targets.
Result<EvalSet> GenerateEvalSet(const std::vector<SourceRepo>& repos,
                                const std::string& project_dir, std::string_view sources_name,
                                GenerateStats* stats = nullptr);

// Returns the [begin, end) byte range of the doc comment of the definition whose span starts
// at `start_byte` on `start_line` (1-based) in `content`: for Python the docstring (the first
// statement of the body, a string literal); otherwise the comments directly above the
// definition's line (`//` lines and `/* */` blocks, skipping attribute, decorator and template
// lines), as the extractor reads them. nullopt when there is none.
std::optional<std::pair<std::uint32_t, std::uint32_t>> DocCommentRange(std::string_view content,
                                                                       std::string_view language,
                                                                       std::uint32_t start_byte,
                                                                       std::uint32_t start_line);

}  // namespace trove::librarian::eval

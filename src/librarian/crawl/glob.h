// Glob and IgnoreRules: the path patterns of Librarian's discovery (docs/librarian.md §6.1): the
// `include`/`exclude` globs of `bootstrap` and the lines of `.gitignore`/`.librarianignore`.
//
// Syntax (one dialect for both, git's wildmatch subset): paths are relative to a base
// directory, `/`-separated and case-sensitive. `*` matches any run of characters without `/`;
// `?` one character except `/`; `[...]` a class (`[abc]`, `[a-z]`, `[!x]` or `[^x]` negated;
// `]` first is literal; `\` escapes); `**` as a whole segment (`**/x`, `x/**/y`, `x/**`)
// matches zero or more whole segments, elsewhere it is `*`; `\c` is the literal `c`. A pattern
// with no `/` except a trailing one matches the basename at any depth; one with a leading or
// inner `/` is anchored at the base. A trailing `/` matches directories only. Named classes
// (`[[:alpha:]]`) are not supported and are rejected.
//
// Matching costs O(pattern tokens x path length) time and O(path length) memory, with no
// backtracking, so a hostile pattern cannot blow up; patterns are capped at kMaxGlobChars.
// Thread safety: a compiled Glob or IgnoreRules is immutable; const members may be called from
// any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::librarian::crawl {

// Longest accepted pattern, in bytes.
inline constexpr std::size_t kMaxGlobChars = 1024;

class Glob {
 public:
  // Compiles `pattern`. Returns kInvalidArgument naming the pattern for an empty pattern, one
  // longer than kMaxGlobChars, a NUL byte, an unterminated class, a named class or a trailing
  // lone `\`: `glob "src/[a": unterminated character class at offset 4`.
  static Result<Glob> Compile(std::string_view pattern);

  // Returns whether `path` (relative to the pattern's base, `/`-separated, no leading or
  // trailing `/`) matches. `is_dir` says whether `path` names a directory (for trailing-`/`
  // patterns).
  bool Matches(std::string_view path, bool is_dir) const;

  const std::string& pattern() const { return pattern_; }
  bool dir_only() const { return dir_only_; }
  bool anchored() const { return anchored_; }

 private:
  enum class Op : std::uint8_t {
    kLiteral,        // arg: the byte
    kAnyChar,        // `?`
    kStar,           // `*`: any run without `/`
    kAnyRun,         // trailing `**`: any run, `/` included
    kSegmentsSlash,  // `**/`: empty, or any run ending in `/`
    kClass,          // arg: index into classes_
  };
  struct Token {
    Op op;
    std::uint32_t arg = 0;
  };
  struct CharClass {
    bool negated = false;
    std::vector<std::pair<unsigned char, unsigned char>> ranges;  // inclusive
    bool Contains(unsigned char c) const;
  };

  Glob() = default;
  bool MatchTokens(std::string_view text) const;

  std::string pattern_;
  bool dir_only_ = false;
  bool anchored_ = false;
  std::vector<Token> tokens_;
  std::vector<CharClass> classes_;
};

// IgnoreRules: the rules of one ignore file (gitignore syntax), relative to the directory that
// holds it. Blank lines and `#` comments are skipped, `\#` and `\!` escape, unescaped trailing
// spaces are dropped, and a leading `!` re-includes what an earlier rule excluded.
class IgnoreRules {
 public:
  // The outcome of the rules for one path.
  enum class Verdict : std::uint8_t { kNone, kIgnore, kInclude };

  // Parses `text`. A line that is not a valid pattern is left out (git does the same) and
  // described in `warnings` as "<source>:<line>: <error>", when `warnings` is non-null.
  static IgnoreRules Parse(std::string_view text, std::string_view source,
                           std::vector<std::string>* warnings);

  // Returns the verdict of the last rule matching `path` (relative to this file's directory),
  // kNone when no rule matches.
  Verdict Evaluate(std::string_view path, bool is_dir) const;

  bool empty() const { return rules_.empty(); }
  std::size_t size() const { return rules_.size(); }

 private:
  struct Rule {
    Glob glob;
    bool negated;
  };
  std::vector<Rule> rules_;
};

}  // namespace trove::librarian::crawl

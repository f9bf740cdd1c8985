// Include resolution for C and C++ (spec §2.5; decision 0069): `#include "x"` resolves relative to
// the including file, then to the include directories that a compile_commands.json gives for
// that file (-I, -isystem, -iquote, -idirafter; the first of `<root>/compile_commands.json`
// and `<root>/build/compile_commands.json` that exists), then to the directories of every entry
// when the file has none of its own (headers are rarely compiled themselves). Only directories
// inside the workspace count: a flag naming /usr/include or ../other is ignored, so resolution
// never leaves the workspace. Protocol-free and pure apart from reading the database file.
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::librarian::packs {

// The largest compile_commands.json read (bytes); a larger one is ignored with a reason.
inline constexpr std::size_t kMaxCompileCommandsBytes = 64u << 20;

class IncludeResolver {
 public:
  // An empty resolver: relative-to-includer resolution only.
  IncludeResolver() = default;

  // Reads the compile database of `root` (canonical absolute path) when one exists. Never
  // fails for a missing database; a malformed one gives a resolver without directories and a
  // `note()` saying why.
  static IncludeResolver Load(const std::string& root);
  // From the database's text (tests); `root` as in Load.
  static IncludeResolver FromJson(const std::string& root, std::string_view json);

  // The workspace-relative file `spelled` names when included from `includer` (workspace
  // relative), among `files` (every indexed workspace-relative path); nullopt when none.
  std::optional<std::string> Resolve(std::string_view includer, std::string_view spelled,
                                     const std::set<std::string>& files) const;

  // Workspace-relative include directories for `file` ("" is the root), in flag order.
  const std::vector<std::string>& DirsFor(std::string_view file) const;
  // Where the database came from ("compile_commands.json", "build/compile_commands.json") or
  // "" when none was used.
  const std::string& source() const { return source_; }
  const std::string& note() const { return note_; }
  std::size_t entries() const { return per_file_.size(); }

  // The -I/-isystem/-iquote/-idirafter directories of one command line, in order (absolute or
  // relative to `directory`, lexically normalized, not yet confined). Splits `command` on
  // whitespace with '…' / "…" quoting and backslash escapes.
  static std::vector<std::string> IncludeFlags(const std::vector<std::string>& args);
  static std::vector<std::string> SplitCommand(std::string_view command);

 private:
  std::string source_;
  std::string note_;
  std::map<std::string, std::vector<std::string>, std::less<>> per_file_;
  std::vector<std::string> all_dirs_;  // union over entries, first-seen order
};

// `path` with "." and ".." segments removed lexically; nullopt when ".." climbs above the start
// of a relative path. Absolute paths stay absolute.
std::optional<std::string> NormalizeLexically(std::string_view path);

}  // namespace trove::librarian::packs

// Workspace path safety (docs/librarian.md §8.6): turns a user-supplied path (`affectedFiles`,
// `outputPath`, a resource path) into a normalized workspace-relative path, refusing anything that
// could reach outside the workspace.
// Thread safety: free functions; they only read the filesystem (lstat, realpath).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace trove::librarian::crawl {

// Longest accepted user path, in bytes (docs/librarian.md §8.6).
inline constexpr std::size_t kMaxUserPathChars = 4096;

struct PathPolicy {
  // The argument's wire name, which starts every error message ("affectedFiles[2]: ...").
  std::string_view field = "path";
  // Whether an absolute path inside the workspace is accepted. Default false, as the spec's
  // `allowAbsolute: false`; when true an absolute path must still lie under the root.
  bool allow_absolute = false;
};

// Returns `user_path` normalized against nothing but itself: `.` segments and empty segments
// dropped, `..` applied; "." for the root itself. Refuses (kInvalidArgument, messages start
// with `policy.field`): an empty path, a NUL byte, a backslash (spec decision), more than
// kMaxUserPathChars bytes, an absolute path, and a `..` that climbs above the start
// ("path: escapes the workspace"). Touches no filesystem.
Result<std::string> NormalizeRelativePath(std::string_view user_path,
                                          const PathPolicy& policy = {});

// Returns `user_path` as a normalized workspace-relative path ("." for the root), after the
// checks of NormalizeRelativePath and a filesystem check: every existing prefix of the path is
// resolved with realpath and must stay inside the canonical root, so a symlink cannot lead
// out ("path: a symlink leads out of the workspace"), and a symlink that cannot be resolved
// (dangling or looping) is refused too, since writing through it could land anywhere. Parts of
// the path that do not exist yet are accepted. `root` must be an absolute path to an existing
// directory ("workspace: ..." errors otherwise). An absolute `user_path` is accepted only with
// policy.allow_absolute and when it lies under `root` (lexically, or under its realpath).
// Note: the check is a snapshot; a concurrent writer inside the workspace can still swap a
// component for a symlink afterwards, so callers that open the result should use O_NOFOLLOW.
Result<std::string> ResolveInWorkspace(std::string_view root, std::string_view user_path,
                                       const PathPolicy& policy = {});

// Returns the canonical (realpath) form of `root`, which must be absolute and name an existing
// directory. Errors start with "workspace: ".
Result<std::string> CanonicalWorkspaceRoot(std::string_view root);

// Returns whether `path` equals `root` or lies under it (both canonical, no trailing `/`).
bool IsUnder(std::string_view root, std::string_view path);

}  // namespace trove::librarian::crawl

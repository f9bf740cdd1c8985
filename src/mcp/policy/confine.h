// Confinement of client-sent paths to allowed roots (docs/mcp.md §5.6 sanitization,
// docs/librarian.md §8.6).
//
// PathConfiner::Resolve takes a path a client sent and returns the canonical absolute path it
// names, or an error:
//   - INVALID_INPUT (kInvalidArgument): empty, longer than max_path_bytes, a NUL byte, or (by
//     default) a backslash;
//   - PERMISSION_DENIED (kPermissionDenied): an absolute path when allow_absolute is off, a
//     path that leaves every root after lexical normalization (`..`), or whose existing part
//     resolves (realpath on the longest existing prefix) outside every root (a symlink
//     escape), or that passes through a dangling or unreadable symlink.
// A relative path is taken relative to the first root. Percent-encoding is not decoded:
// "%2e%2e" is a literal file name. A transport that decodes (a resource URI) must decode
// exactly once, before calling Resolve, and use the returned path as is; decoding the result
// again could turn a literal name into a traversal.
// The canonical roots are computed once, at Make; the check and a later open are separate
// steps, so a symlink swapped in between is not caught (use O_NOFOLLOW or openat2
// RESOLVE_BENEATH where that matters).
//
// Thread safety: immutable after Make; Resolve may be called from any thread at once.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::mcp::policy {

struct ConfineOptions {
  std::size_t max_path_bytes = 4096;
  // Absolute paths are accepted when inside a root (default); Librarian turns this off.
  bool allow_absolute = true;
  // Backslashes are refused (default): on other systems they separate components.
  bool reject_backslash = true;
};

class PathConfiner {
 public:
  // Canonicalizes `roots` (each must exist and be a directory). REQUIRES: roots non-empty.
  static Result<PathConfiner> Make(const std::vector<std::string>& roots,
                                   ConfineOptions options = {});

  // Returns the canonical absolute path `client_path` names, inside a root, or the error.
  Result<std::string> Resolve(std::string_view client_path) const;

  // Returns whether the canonical absolute `path` is one of the roots or inside one.
  bool InsideRoots(std::string_view path) const;

  const std::vector<std::string>& roots() const { return roots_; }

 private:
  PathConfiner(std::vector<std::string> roots, ConfineOptions options)
      : roots_(std::move(roots)), options_(options) {}
  std::vector<std::string> roots_;  // canonical
  ConfineOptions options_;
};

}  // namespace trove::mcp::policy

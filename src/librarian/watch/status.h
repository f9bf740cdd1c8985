// Watch status: what a running `librarian watch` (watcher.h) has seen change but not yet
// re-indexed, shared with readers through `<workspace>/.librarian/watch.json` so that a query
// in any process can say which files are stale (docs/librarian.md §7.2). The file is advisory:
// written with a temporary file and a rename (no fsync: after a crash it is simply absent or
// old), and ignored when the process that wrote it is gone.
//
// Thread safety: free functions without shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::librarian::watch {

// At most this many pending paths are written; `pending_total` counts them all.
inline constexpr std::size_t kMaxListedPending = 1000;

struct WatchStatus {
  std::int64_t pid = 0;              // the watcher's process
  bool reindexing = false;           // a re-index of `pending` is running now
  std::vector<std::string> pending;  // workspace-relative paths changed, not yet re-indexed
  std::uint64_t pending_total = 0;   // all of them (pending is capped)
  std::string updated_at;            // RFC 3339 UTC of the last write
};

// `<canonical_workspace>/.librarian/watch.json`.
std::string WatchStatusPathFor(std::string_view canonical_workspace);

// Writes `status` to `path` atomically (temp file + rename). kIo naming the path on failure.
Status WriteWatchStatus(const std::string& path, const WatchStatus& status);

// Removes the file; a missing file is fine.
void RemoveWatchStatus(const std::string& path);

// Reads the status of a live watcher. Returns an empty status (pid 0, nothing pending) when the
// file is absent, unreadable, malformed, or written by a process that no longer runs. Costs
// one failed open() when no watcher runs.
WatchStatus ReadLiveWatchStatus(const std::string& path);

}  // namespace trove::librarian::watch

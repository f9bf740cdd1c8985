// Watch mode (docs/librarian.md §7.2): keeps a workspace's index current while files change.
//
// Inotify watches every directory of the workspace through the Linux API directly (no library:
// inotify_init1 / inotify_add_watch / read), except those the crawler never enters (.git/,
// .hg/, .svn/, .librarian/) and the names of the default excludes (node_modules/, build/, ...:
// crawl::DefaultExcludes()). A new directory is watched as it appears and reported whole, so
// files written into it before its watch existed are not missed. A queue overflow
// (IN_Q_OVERFLOW) turns the next re-index into a full incremental bootstrap.
//
// Changed paths go to a Debouncer: a batch is due once no change arrived for `quiet` (200 ms,
// the original's value) or `max_delay` after its first change, whichever is first, so a burst
// of changes becomes one re-index. A re-index is an incremental Bootstrap restricted to the
// batch (BootstrapOptions::only_paths): the changed files are re-read, hashed and re-extracted,
// vanished ones deleted, in the store's ordinary transactions (with one BootstrapSession kept
// across re-indexes, so a batch does not reopen the store or probe ctags again), so a reader sees
// either the old or the new state of each file, and kill -9 at any point leaves a consistent store.
//
// While a batch waits or is being re-indexed, `.librarian/watch.json` (status.h) lists its
// paths; Query() reports them as stale (freshness.staleFiles and an `index_updating`
// disclosure).
//
// Thread safety: a Watcher is used by one thread; Run's `cancel` may be set from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "librarian/index/bootstrap.h"

namespace trove::librarian::watch {

inline constexpr std::chrono::milliseconds kDefaultQuiet{200};
inline constexpr std::chrono::milliseconds kDefaultMaxDelay{2000};
// Most directories watched; beyond it the watcher fails to start (narrow the workspace).
inline constexpr std::size_t kMaxWatches = 100000;

// Collects changed paths and says when a batch is due. Pure: the caller passes the time.
class Debouncer {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  Debouncer(std::chrono::milliseconds quiet, std::chrono::milliseconds max_delay)
      : quiet_(quiet), max_delay_(max_delay) {}

  void Add(const std::string& path, TimePoint now);
  // The whole workspace must be re-crawled (an overflow, or a change at the root itself).
  void AddRescan(TimePoint now);
  bool empty() const { return paths_.empty() && !rescan_; }
  // When the current batch is due; nullopt when empty.
  std::optional<TimePoint> Deadline() const;
  bool Due(TimePoint now) const;

  struct Batch {
    std::vector<std::string> paths;  // sorted, minimal: none lies under another
    bool rescan = false;
  };
  // Returns and clears the current batch.
  Batch Take();
  // The paths collected so far, sorted.
  std::vector<std::string> Pending() const { return {paths_.begin(), paths_.end()}; }

 private:
  const std::chrono::milliseconds quiet_;
  const std::chrono::milliseconds max_delay_;
  std::set<std::string> paths_;
  bool rescan_ = false;
  TimePoint first_{};
  TimePoint last_{};
};

// A recursive inotify watch over a workspace.
class Inotify {
 public:
  // Watches `root` (canonical, absolute) and every directory under it that the crawler would
  // enter. kIo when inotify is unavailable or its watch limit is reached.
  static Result<std::unique_ptr<Inotify>> Open(const std::string& root);
  ~Inotify();
  Inotify(const Inotify&) = delete;
  Inotify& operator=(const Inotify&) = delete;

  int fd() const { return fd_; }
  std::size_t watches() const { return dirs_.size(); }
  // Reads every queued event without blocking. `changed` gets each changed workspace-relative
  // path (a new or removed directory is one path); `overflow` is set when events were lost.
  Status Drain(const std::function<void(const std::string&)>& changed, bool* overflow);

 private:
  Inotify(int fd, std::string root) : fd_(fd), root_(std::move(root)) {}
  // Watches the directory `rel` and, iteratively, the directories under it.
  Status AddTree(const std::string& rel);

  int fd_ = -1;
  std::string root_;
  std::unordered_map<int, std::string> dirs_;  // watch descriptor -> relative directory
};

struct WatchOptions {
  // The bootstrap each re-index runs (workspace, include/exclude, ctags, store_path, ...);
  // `only_paths` and `max_files` are set per batch.
  index::BootstrapOptions bootstrap;
  std::chrono::milliseconds quiet = kDefaultQuiet;
  std::chrono::milliseconds max_delay = kDefaultMaxDelay;
  // Whether Run starts with an incremental bootstrap of the whole workspace (catching changes
  // made while nothing watched). Default true.
  bool initial_bootstrap = true;
  // Passed to each re-index's Bootstrap (files done, files discovered).
  base::Progress progress;
};

struct Update {
  std::size_t paths = 0;  // changed paths in the batch
  bool rescan = false;    // the whole workspace was re-crawled
  double ms = 0;          // wall time of the re-index
  // The bootstrap's report, or its error (e.g. another bootstrap held the store); kNotFound
  // "nothing to re-index" when the batch was empty.
  Result<index::BootstrapReport> report = Status::NotFound("nothing to re-index");
};

class Watcher {
 public:
  // Validates the options and starts watching. The status file is written from here on.
  static Result<std::unique_ptr<Watcher>> Start(WatchOptions options);
  ~Watcher();

  const std::string& root() const { return root_; }
  const Inotify& inotify() const { return *inotify_; }

  // Reads queued events into the debouncer at time `now`, and rewrites the status file when the
  // pending set grew.
  Status Drain(Debouncer::TimePoint now);
  bool Due(Debouncer::TimePoint now) const { return debouncer_.Due(now); }
  bool idle() const { return debouncer_.empty(); }
  // Run starts without its initial bootstrap (the caller just ran one).
  void SkipInitialBootstrap() { options_.initial_bootstrap = false; }
  // Re-indexes the current batch now (nothing pending: an Update with paths 0 whose report is
  // kNotFound).
  Update Reindex(base::Cancellation& cancel);
  // Watches until `cancel` is set: drains, waits for the debounce deadline, re-indexes; calls
  // `on_update` after every re-index (errors included: a failed re-index is retried with the
  // next batch). Returns the first fatal error (inotify failed), else Ok after cancellation.
  Status Run(base::Cancellation& cancel, const std::function<void(const Update&)>& on_update);

 private:
  Watcher(WatchOptions options, std::string root, std::unique_ptr<Inotify> inotify);
  void WriteStatus(bool reindexing, const std::vector<std::string>& pending);

  WatchOptions options_;
  std::string root_;
  std::string status_path_;
  std::unique_ptr<Inotify> inotify_;
  Debouncer debouncer_;
  std::size_t listed_ = 0;  // pending paths in the status file
  // What the re-indexes reuse (index::BootstrapSession, decision 0078): the open store, the
  // extractors with their ctags probe, and whether the store holds a C++ source. The held
  // store connection is also idle between re-indexes, so SQLite's checkpoint and sync when a
  // database's last connection closes no longer follow every re-index (decision 0070); the
  // writer's autocheckpoint does that work instead. It holds no transaction, so it blocks no
  // reader or writer.
  index::BootstrapSession session_;
};

}  // namespace trove::librarian::watch

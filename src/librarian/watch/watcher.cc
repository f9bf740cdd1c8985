#include "librarian/watch/watcher.h"

#include <dirent.h>
#include <errno.h>
#include <fmt/format.h>
#include <poll.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "librarian/crawl/crawler.h"
#include "librarian/watch/status.h"

namespace trove::librarian::watch {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kEvents = IN_CLOSE_WRITE | IN_MODIFY | IN_CREATE | IN_DELETE |
                                  IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF |
                                  IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK;

// Directories the crawler never enters, and the directory names among the default excludes.
bool Unwatched(std::string_view name) {
  if (name == ".git" || name == ".hg" || name == ".svn" || name == ".librarian") return true;
  for (std::string_view pattern : crawl::DefaultExcludes()) {
    if (pattern.size() < 2 || pattern.back() != '/') continue;
    std::string_view dir = pattern.substr(0, pattern.size() - 1);
    if (!dir.empty() && dir.back() == '*') {
      dir.remove_suffix(1);
      if (name.substr(0, dir.size()) == dir) return true;
    } else if (name == dir) {
      return true;
    }
  }
  return false;
}

std::string Join(const std::string& dir, std::string_view name) {
  return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
}

bool SameOrUnder(std::string_view a, std::string_view b) {
  return a.size() >= b.size() && a.compare(0, b.size(), b) == 0 &&
         (a.size() == b.size() || a[b.size()] == '/');
}

constexpr int kCancelPollMs = 100;

double MsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Debouncer

void Debouncer::Add(const std::string& path, TimePoint now) {
  if (empty()) first_ = now;
  last_ = now;
  paths_.insert(path);
}

void Debouncer::AddRescan(TimePoint now) {
  if (empty()) first_ = now;
  last_ = now;
  rescan_ = true;
}

std::optional<Debouncer::TimePoint> Debouncer::Deadline() const {
  if (empty()) return std::nullopt;
  return std::min(last_ + quiet_, first_ + max_delay_);
}

bool Debouncer::Due(TimePoint now) const {
  std::optional<TimePoint> d = Deadline();
  return d && now >= *d;
}

Debouncer::Batch Debouncer::Take() {
  Batch b;
  b.rescan = rescan_;
  // Sorted, so a directory comes right before the paths under it.
  for (const std::string& p : paths_) {
    if (!b.paths.empty() && SameOrUnder(p, b.paths.back())) continue;
    b.paths.push_back(p);
  }
  paths_.clear();
  rescan_ = false;
  return b;
}

// ---------------------------------------------------------------------------------------------
// Inotify

Result<std::unique_ptr<Inotify>> Inotify::Open(const std::string& root) {
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return Status::Io(fmt::format("watch: inotify_init1: {}", strerror(errno)));
  std::unique_ptr<Inotify> in(new Inotify(fd, root));
  RETURN_IF_ERROR(in->AddTree(""));
  return in;
}

Inotify::~Inotify() {
  if (fd_ >= 0) close(fd_);
}

Status Inotify::AddTree(const std::string& start) {
  std::vector<std::string> stack{start};  // iterative: no recursion over the user's tree
  while (!stack.empty()) {
    std::string rel = std::move(stack.back());
    stack.pop_back();
    const std::string abs = rel.empty() ? root_ : root_ + "/" + rel;
    if (dirs_.size() >= kMaxWatches) {
      return Status::ResourceExhausted(
          fmt::format("watch: more than {} directories under {}", kMaxWatches, root_));
    }
    int wd = inotify_add_watch(fd_, abs.c_str(), kEvents | IN_DONT_FOLLOW);
    if (wd < 0) {
      if (errno == ENOSPC) {
        return Status::ResourceExhausted(
            fmt::format("watch: inotify watch limit reached at {} (raise "
                        "fs.inotify.max_user_watches)",
                        abs));
      }
      if (rel.empty()) return Status::Io(fmt::format("watch: {}: {}", abs, strerror(errno)));
      continue;  // vanished or unreadable meanwhile: the crawl reports it
    }
    dirs_[wd] = rel;
    DIR* dir = opendir(abs.c_str());
    if (dir == nullptr) continue;
    while (const dirent* ent = readdir(dir)) {
      std::string_view name = ent->d_name;
      if (name == "." || name == ".." || Unwatched(name)) continue;
      bool is_dir = ent->d_type == DT_DIR;
      if (ent->d_type == DT_UNKNOWN) {
        struct stat st;
        is_dir = lstat((abs + "/" + std::string(name)).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
      }
      if (is_dir) stack.push_back(Join(rel, name));
    }
    closedir(dir);
  }
  return Status::Ok();
}

Status Inotify::Drain(const std::function<void(const std::string&)>& changed, bool* overflow) {
  alignas(inotify_event) std::array<char, 64 * 1024> buf;
  for (;;) {
    ssize_t n = read(fd_, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return Status::Ok();
      return Status::Io(fmt::format("watch: reading inotify events: {}", strerror(errno)));
    }
    if (n == 0) return Status::Ok();
    for (ssize_t off = 0; off < n;) {
      const auto* ev = reinterpret_cast<const inotify_event*>(buf.data() + off);
      off += static_cast<ssize_t>(sizeof(inotify_event) + ev->len);
      if ((ev->mask & IN_Q_OVERFLOW) != 0) {
        *overflow = true;
        continue;
      }
      auto it = dirs_.find(ev->wd);
      if (it == dirs_.end()) continue;
      const std::string dir = it->second;
      if ((ev->mask & IN_IGNORED) != 0) {
        dirs_.erase(it);
        continue;
      }
      if ((ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) != 0) {
        if (dir.empty()) {
          *overflow = true;  // the root itself went away or moved
        } else {
          changed(dir);
        }
        continue;
      }
      if (ev->len == 0) continue;
      std::string_view name(ev->name);  // NUL-padded
      if (name.empty()) continue;
      if ((ev->mask & IN_ISDIR) != 0 && Unwatched(name)) continue;
      const std::string rel = Join(dir, name);
      if ((ev->mask & IN_ISDIR) != 0 && (ev->mask & (IN_CREATE | IN_MOVED_TO)) != 0) {
        Status st = AddTree(rel);
        if (!st.ok()) return st;
      }
      changed(rel);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Watcher

Watcher::Watcher(WatchOptions options, std::string root, std::unique_ptr<Inotify> inotify)
    : options_(std::move(options)),
      root_(std::move(root)),
      status_path_(WatchStatusPathFor(root_)),
      inotify_(std::move(inotify)),
      debouncer_(options_.quiet, options_.max_delay) {}

Watcher::~Watcher() { RemoveWatchStatus(status_path_); }

Result<std::unique_ptr<Watcher>> Watcher::Start(WatchOptions options) {
  if (options.bootstrap.max_files) {
    return Status::InvalidArgument("maxFiles: not supported in watch mode");
  }
  options.bootstrap.only_paths.reset();
  ASSIGN_OR_RETURN(std::string root, index::ValidateBootstrapOptions(options.bootstrap));
  options.bootstrap.workspace = root;
  ASSIGN_OR_RETURN(std::unique_ptr<Inotify> inotify, Inotify::Open(root));
  return std::unique_ptr<Watcher>(new Watcher(std::move(options), root, std::move(inotify)));
}

void Watcher::WriteStatus(bool reindexing, const std::vector<std::string>& pending) {
  WatchStatus s;
  s.pid = getpid();
  s.reindexing = reindexing;
  s.pending_total = pending.size();
  s.pending.assign(pending.begin(), pending.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                          pending.size(), kMaxListedPending)));
  // Advisory: a workspace without .librarian/ yet, or a read-only one, just has no status.
  (void)WriteWatchStatus(status_path_, s);
  listed_ = pending.size();
}

Status Watcher::Drain(Debouncer::TimePoint now) {
  bool overflow = false;
  RETURN_IF_ERROR(
      inotify_->Drain([&](const std::string& p) { debouncer_.Add(p, now); }, &overflow));
  if (overflow) debouncer_.AddRescan(now);
  std::vector<std::string> pending = debouncer_.Pending();
  if (pending.size() != listed_ && listed_ < kMaxListedPending) WriteStatus(false, pending);
  return Status::Ok();
}

Update Watcher::Reindex(base::Cancellation& cancel) {
  Update u;
  if (debouncer_.empty()) return u;
  Debouncer::Batch batch = debouncer_.Take();
  u.paths = batch.paths.size();
  u.rescan = batch.rescan;
  WriteStatus(true, batch.paths);
  index::BootstrapOptions o = options_.bootstrap;
  if (!batch.rescan) o.only_paths = batch.paths;
  const auto start = Clock::now();
  u.report = index::Bootstrap(o, cancel, options_.progress, &session_);
  u.ms = MsSince(start);
  if (!u.report.ok() && u.report.status().code() == base::StatusCode::kResourceExhausted) {
    // Another bootstrap holds the store: keep the batch for the next round.
    const auto now = Clock::now();
    for (const std::string& p : batch.paths) debouncer_.Add(p, now);
    if (batch.rescan) debouncer_.AddRescan(now);
  }
  WriteStatus(false, debouncer_.Pending());
  return u;
}

Status Watcher::Run(base::Cancellation& cancel,
                    const std::function<void(const Update&)>& on_update) {
  Status result = Status::Ok();
  if (options_.initial_bootstrap && !cancel.requested()) {
    debouncer_.AddRescan(Clock::now());
    Update u = Reindex(cancel);
    if (on_update) on_update(u);
  }
  while (!cancel.requested()) {
    // Cancellation is polled at least every kCancelPollMs.
    int timeout = kCancelPollMs;
    if (std::optional<Debouncer::TimePoint> d = debouncer_.Deadline()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*d - Clock::now());
      timeout = static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, kCancelPollMs));
    }
    pollfd fds[1] = {{inotify_->fd(), POLLIN, 0}};
    int n = poll(fds, 1, timeout);
    if (n < 0 && errno != EINTR) {
      result = Status::Io(fmt::format("watch: poll: {}", strerror(errno)));
      break;
    }
    if (cancel.requested()) break;
    if (Status st = Drain(Clock::now()); !st.ok()) {
      result = st;
      break;
    }
    if (Due(Clock::now())) {
      Update u = Reindex(cancel);
      if (on_update) on_update(u);
    }
  }
  return result;
}

}  // namespace trove::librarian::watch

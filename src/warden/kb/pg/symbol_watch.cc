#include "warden/kb/pg/symbol_watch.h"

#include <fmt/core.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>

#include "base/pg.h"

namespace trove::warden::kb {

namespace {

namespace pg = base::pg;
using Clock = std::chrono::steady_clock;

// An eventfd that becomes readable when a Cancellation is requested. Shared with the
// Cancellation's callback, which may outlive the watch (callbacks cannot be unregistered), so
// the fd is closed only when both are done with it.
class CancelFd {
 public:
  CancelFd() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  CancelFd(const CancelFd&) = delete;
  CancelFd& operator=(const CancelFd&) = delete;
  ~CancelFd() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }
  void Signal() const {
    if (fd_ < 0) return;
    const std::uint64_t one = 1;
    ssize_t n = write(fd_, &one, sizeof one);
    (void)n;  // a full counter is still readable
  }

 private:
  const int fd_;
};

// Waits up to `ms` for the cancel fd; returns whether it became readable.
bool WaitCancelled(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  while (true) {
    int rc = poll(&p, 1, ms);
    if (rc < 0 && errno == EINTR) continue;
    return rc > 0;
  }
}

// True for the trigger's payload of an over-long stable_id: 1000 characters, '#', 32 hex
// digits. It cannot be mapped back to the id.
bool IsHashedPayload(std::string_view payload) {
  if (payload.size() < 1000 + 33 || payload[payload.size() - 33] != '#') return false;
  return std::all_of(payload.end() - 32, payload.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// The batch being gathered.
class Batch {
 public:
  explicit Batch(std::size_t max_ids) : max_ids_(max_ids) {}

  bool empty() const { return !everything_ && ids_.empty(); }
  void Everything(Clock::time_point now) {
    Start(now);
    everything_ = true;
    ids_.clear();
  }
  void Add(std::string_view stable_id, Clock::time_point now) {
    Start(now);
    if (everything_) return;
    if (stable_id.empty() || IsHashedPayload(stable_id)) {
      Everything(now);
      return;
    }
    ids_.emplace(stable_id);
    if (ids_.size() > max_ids_) Everything(now);
  }
  std::optional<Clock::time_point> started() const { return started_; }
  SymbolChanges Take() {
    SymbolChanges out;
    out.everything = everything_;
    if (!everything_) out.stable_ids.assign(ids_.begin(), ids_.end());
    ids_.clear();
    everything_ = false;
    started_.reset();
    return out;
  }

 private:
  void Start(Clock::time_point now) {
    if (!started_) started_ = now;
  }

  const std::size_t max_ids_;
  std::set<std::string> ids_;
  bool everything_ = false;
  std::optional<Clock::time_point> started_;
};

}  // namespace

Status WatchSymbols(const std::string& target, const SymbolChangeCallback& on_change,
                    base::Cancellation& cancel, const WatchOptions& options) {
  if (!pg::IsPostgresUrl(target)) {
    return Status::Unsupported(fmt::format(
        "{}: live symbol notifications need a KB on PostgreSQL (postgresql://...)", target));
  }
  auto cancel_fd = std::make_shared<CancelFd>();
  if (cancel_fd->fd() < 0) return Status::Io("watch symbols: eventfd failed");
  cancel.OnCancel([cancel_fd] { cancel_fd->Signal(); });

  // One attempt per connect: the backoff below waits instead, so Stop is never held up by a
  // retry loop inside libpq calls.
  const pg::ConnectOptions connect{.url = target,
                                   .connect_timeout_s = 5,
                                   .retry_budget_ms = 0,
                                   .application_name = "warden-watch"};
  const int window_ms = static_cast<int>(std::max<std::int64_t>(0, options.batch_window.count()));
  auto report = [&options](const Status& status) {
    if (options.on_connection) options.on_connection(status);
  };

  std::unique_ptr<pg::Connection> conn;
  std::uint64_t generation = 0;  // of `conn` when last seen healthy
  bool ever_connected = false;
  int backoff_ms = 100;
  Batch batch(std::max<std::size_t>(1, options.max_batch_ids));

  bool reported_failure = false;  // in an outage, already reported
  auto outage = [&](const Status& status) {
    if (!reported_failure) report(status);
    reported_failure = true;
    if (WaitCancelled(cancel_fd->fd(), backoff_ms)) return;
    backoff_ms = std::min(backoff_ms * 2, 2000);
  };

  while (!cancel.requested()) {
    if (conn == nullptr) {
      Result<std::unique_ptr<pg::Connection>> opened = pg::Connection::Open(connect);
      Status status = opened.status();
      if (opened.ok()) {
        status = (*opened)->Listen(kSymbolsChannel);
        if (status.ok()) conn = std::move(opened).value();
      }
      if (!status.ok()) {
        outage(status.WithContext("watch symbols"));
        continue;
      }
      generation = conn->generation();
      // Everything written while no one listened was missed (a first connect that had to be
      // retried included: readers may have seen the KB meanwhile).
      if (ever_connected || reported_failure) batch.Everything(Clock::now());
      ever_connected = true;
      reported_failure = false;
      backoff_ms = 100;
      report(Status::Ok());
    }

    int timeout_ms = -1;
    if (std::optional<Clock::time_point> started = batch.started()) {
      const auto due = *started + std::chrono::milliseconds(window_ms);
      timeout_ms = static_cast<int>(std::max<std::int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now()).count()));
    }
    Result<std::vector<pg::Notification>> got =
        conn->WaitNotifications(timeout_ms, cancel_fd->fd());
    if (cancel.requested()) break;
    if (!got.ok()) {
      // Start over with a new connection (made above, so that the reconnection is seen at once
      // and reported as `everything` without waiting for the next notification).
      conn.reset();
      outage(got.status().WithContext("watch symbols"));
      continue;
    }
    const Clock::time_point now = Clock::now();
    if (conn->generation() != generation) {
      // The wrapper reconnected on its own: notifications may have been missed.
      generation = conn->generation();
      batch.Everything(now);
    }
    for (const pg::Notification& n : *got) {
      if (n.channel == kSymbolsChannel) batch.Add(n.payload, now);
    }
    if (std::optional<Clock::time_point> started = batch.started();
        started && Clock::now() >= *started + std::chrono::milliseconds(window_ms)) {
      on_change(batch.Take());
    }
  }
  return Status::Ok();
}

Result<std::unique_ptr<SymbolWatcher>> SymbolWatcher::Start(std::string target,
                                                            SymbolChangeCallback on_change,
                                                            WatchOptions options) {
  if (!pg::IsPostgresUrl(target)) {
    return Status::Unsupported(fmt::format(
        "{}: live symbol notifications need a KB on PostgreSQL (postgresql://...)", target));
  }
  std::unique_ptr<SymbolWatcher> watcher(new SymbolWatcher());
  SymbolWatcher* w = watcher.get();
  w->thread_ = std::thread([w, target = std::move(target), on_change = std::move(on_change),
                            options = std::move(options)] {
    (void)WatchSymbols(target, on_change, w->cancel_, options);
  });
  return watcher;
}

SymbolWatcher::~SymbolWatcher() { Stop(); }

void SymbolWatcher::Stop() {
  cancel_.Cancel();
  if (thread_.joinable()) thread_.join();
}

}  // namespace trove::warden::kb

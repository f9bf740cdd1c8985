#include "warden/kb/finisher.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <utility>

#include "base/sqlite.h"

namespace trove::warden::kb {

namespace {

// How often the WAL's writeback is started while the transaction writes. The inserts spill
// a 64 KiB page every ~0.5 ms (ffmpeg-core), so each call finds a few hundred KiB new.
constexpr auto kWritebackPeriod = std::chrono::milliseconds(8);

// The checkpoint waits at most this long for another connection's readers or writer; then it
// copies what it can without them (SQLite's PASSIVE) and the close does the rest.
constexpr int kCheckpointBusyMs = 100;

// Starts writing back the file's dirty pages without waiting for them (Linux); elsewhere
// nothing. Errors are ignored: this only hints at work the fsync does anyway.
void StartWriteback(int fd) {
#ifdef __linux__
  if (fd >= 0) ::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
#endif
}

}  // namespace

VersionFinisher::VersionFinisher(std::string db_path)
    : db_path_(std::move(db_path)), thread_([this] { Run(); }) {}

VersionFinisher::VersionFinisher(std::string db_path, DatabaseFile file)
    : db_path_(std::move(db_path)), database_fd_(file.fd), thread_([this] { Run(); }) {}

VersionFinisher::~VersionFinisher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kWriting) state_ = State::kStopped;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void VersionFinisher::Committed() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kWriting) state_ = State::kCommitted;
  }
  cv_.notify_one();
}

Status VersionFinisher::Wait() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (state_ == State::kWriting) state_ = State::kStopped;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  return outcome_;
}

void VersionFinisher::Run() {
  const bool wal_mode = database_fd_ < 0;
  int followed = database_fd_;
  // The checkpoint's connection is opened while the transaction writes (a reader does not
  // wait for the writer in WAL mode), so that the commit is followed by the copy at once.
  Result<std::unique_ptr<base::Database>> db = Status::Cancelled("no checkpoint");
  if (wal_mode) {
    db = base::Database::Open(db_path_, base::DatabaseOptions{.busy_timeout_ms = kCheckpointBusyMs,
                                                              .create_if_missing = false});
  }
  State state = State::kWriting;
  {
    std::unique_lock<std::mutex> lock(mu_);
    while (state_ == State::kWriting) {
      cv_.wait_for(lock, kWritebackPeriod);
      if (state_ != State::kWriting) break;
      lock.unlock();
      if (followed < 0) followed = ::open((db_path_ + "-wal").c_str(), O_RDONLY | O_CLOEXEC);
      StartWriteback(followed);
      lock.lock();
    }
    state = state_;
  }
  if (state == State::kCommitted) {
    if (wal_mode) {
      StartWriteback(followed);  // the commit's last frames
      outcome_ = db.ok() ? Checkpoint(**db) : db.status();
    } else {
      outcome_ = Status::Ok();  // SQLite's commit synced the file
    }
  } else {
    outcome_ = Status::Cancelled("version finisher: stopped before a commit");
  }
  if (wal_mode && followed >= 0) ::close(followed);  // the WAL's: SQLite locks no WAL byte
}

Status VersionFinisher::Checkpoint(base::Database& db) {
  ASSIGN_OR_RETURN(base::Statement stmt, db.Prepare("PRAGMA wal_checkpoint(TRUNCATE)"));
  ASSIGN_OR_RETURN(bool row, stmt.Step());
  // One row: busy (1 when the checkpoint could not finish), WAL frames, frames copied.
  if (!row || stmt.ColumnInt64(0) != 0) {
    return Status::ResourceExhausted(fmt::format("checkpoint {}: database is busy", db_path_));
  }
  return Status::Ok();
}

}  // namespace trove::warden::kb

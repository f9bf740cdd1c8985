// VersionFinisher: finishes a version that Kb::StoreVersion writes, beside the caller.
//
// While the version's transaction writes, it asks the kernel every few milliseconds to start
// writing the WAL back (sync_file_range, Linux only), so that the fsync of the WAL at the
// checkpoint finds most of its 35 MB (ffmpeg-core) already on disk. Once the transaction
// has committed, it copies the WAL into the database file on a connection of its own (a
// TRUNCATE checkpoint: fsync of the WAL, copy, fsync of the database, WAL truncated to
// nothing) while the caller goes on (frees its records, prints its report), instead of in the
// close at the end, where it was serial. The owner waits for it before closing its own
// connection (Kb's destructor), so a process still ends with the version in the database
// file; a busy database makes the checkpoint do what it can (PASSIVE) and the close does the
// rest, as it always did. docs/decisions/0037-warden-perf6.md.
//
// The WAL is opened read-only by name (<db>-wal). SQLite takes no POSIX lock on the WAL
// file (its locks are on the database file and <db>-shm), so closing this descriptor cannot
// drop a lock of the process's connections.
//
// Thread safety: Committed and Wait are called from the owner's thread.
#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"

namespace trove::base {
class Database;
}

namespace trove::warden::kb {

class VersionFinisher {
 public:
  // The database file itself, for a version written with a rollback journal (kb.cc, 0041):
  // `fd` is one of SQLite's own descriptors of the file, found by its device and inode and
  // never closed here (closing any descriptor of the file would drop the process's POSIX
  // locks on it, SQLite's included). Its writeback is started while the transaction spills
  // pages into the file, so that the commit's fsync finds most of them on disk; there is
  // nothing to checkpoint after the commit (docs/decisions/0044-warden-store-tail.md).
  struct DatabaseFile {
    int fd = -1;
  };

  // Starts following the WAL of the database at `db_path`.
  explicit VersionFinisher(std::string db_path);
  // Starts following the database file `file` of the database at `db_path`.
  VersionFinisher(std::string db_path, DatabaseFile file);
  VersionFinisher(const VersionFinisher&) = delete;
  VersionFinisher& operator=(const VersionFinisher&) = delete;
  // Stops (without a checkpoint unless Committed was called) and waits for the thread.
  ~VersionFinisher();

  // The version's transaction has committed: checkpoint it now.
  void Committed();
  // Waits until the thread is done and returns the checkpoint's outcome: OK when the WAL was
  // copied and truncated (following the database file: when the transaction committed), else
  // why not (not committed, busy, an I/O error). Idempotent.
  Status Wait();

 private:
  enum class State { kWriting, kCommitted, kStopped };
  void Run();
  Status Checkpoint(base::Database& db);

  const std::string db_path_;
  const int database_fd_ = -1;  // >= 0: follows the database file (DatabaseFile), not the WAL
  std::mutex mu_;
  std::condition_variable cv_;
  State state_ = State::kWriting;  // guarded by mu_
  Status outcome_;                 // written by the thread, read after the join
  std::thread thread_;
};

}  // namespace trove::warden::kb

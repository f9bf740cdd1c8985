// Env: the filesystem and the clocks, behind one interface so that tests can swap the real ones
// for an in-memory file tree and a fake clock (LevelDB's include/leveldb/env.h and
// helpers/memenv/memenv.h are the model).
//
// `main` builds one PosixEnv and passes it down by reference; tests build a MemEnv. Paths are
// plain strings; errors are Status values whose message names the operation and the path
// ("open /x/y: no such file or directory"). A missing file or directory gives kNotFound, any
// other failure kIo.
// Thread safety: every method of every Env may be called from any thread at the same time.
// PosixEnv holds no state; MemEnv guards its state with a mutex.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::base {

class Env {
 public:
  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  virtual ~Env() = default;

  // Returns the whole contents of the file at `path`.
  virtual Result<std::string> ReadFile(const std::string& path) = 0;

  // Replaces the file at `path` with `data` atomically: a reader sees the old contents or the
  // new, never a mix, and after a crash the file holds one of the two. The parent directory
  // must exist.
  virtual Status WriteFile(const std::string& path, std::string_view data) = 0;

  // Appends `data` to the file at `path`, creating it when missing. Not synced to disk.
  // The parent directory must exist.
  virtual Status AppendFile(const std::string& path, std::string_view data) = 0;

  // Returns true when a file or a directory exists at `path`.
  virtual bool FileExists(const std::string& path) = 0;

  // Deletes the file at `path`. A directory is not deleted (kIo).
  virtual Status DeleteFile(const std::string& path) = 0;

  // Creates the directory `path` and any missing parents; OK when it already exists.
  virtual Status CreateDir(const std::string& path) = 0;

  // Returns the names (not paths) of the entries directly inside the directory `path`, files
  // and directories alike, sorted, without "." and "..".
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) = 0;

  // Returns the size in bytes of the file at `path`. A directory gives kIo.
  virtual Result<std::uint64_t> FileSize(const std::string& path) = 0;

  // Returns the wall-clock time in microseconds since the Unix epoch. It may jump.
  virtual std::int64_t NowMicros() = 0;

  // Returns a time in microseconds that never decreases, from an unspecified origin; use it
  // for durations and deadlines.
  virtual std::int64_t MonotonicMicros() = 0;

  // Blocks the calling thread for at least `micros` microseconds (no-op when <= 0).
  virtual void SleepMicros(std::int64_t micros) = 0;

  // Returns the path of the existing file or directory `path` with every symbolic link, `.` and
  // `..` resolved (realpath(3); absolute for PosixEnv), so that a caller can tell whether it
  // lies inside a directory. A missing path gives kNotFound. The default, for file trees without
  // links (MemEnv), returns `path` unchanged.
  virtual Result<std::string> RealPath(const std::string& path) {
    if (!FileExists(path)) return Status::NotFound("realpath " + path + ": no such file");
    return path;
  }
};

// PosixEnv: the real filesystem and clocks. WriteFile writes a temporary file beside the
// target, fsyncs it, renames it over the target and fsyncs the directory.
class PosixEnv final : public Env {
 public:
  PosixEnv() = default;

  Result<std::string> ReadFile(const std::string& path) override;
  Status WriteFile(const std::string& path, std::string_view data) override;
  Status AppendFile(const std::string& path, std::string_view data) override;
  bool FileExists(const std::string& path) override;
  Status DeleteFile(const std::string& path) override;
  Status CreateDir(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& path) override;
  Result<std::uint64_t> FileSize(const std::string& path) override;
  std::int64_t NowMicros() override;
  std::int64_t MonotonicMicros() override;
  void SleepMicros(std::int64_t micros) override;
  Result<std::string> RealPath(const std::string& path) override;
};

// MemEnv: an in-memory file tree and a fake clock, for tests.
//
// It behaves like PosixEnv where a test could tell: a file's parent directory must exist,
// directories and files are distinct, and errors carry the same codes and message shapes.
// Paths are compared after lexical normalization ("a//b/./c" is "a/b/c"; ".." drops the
// previous component). The roots "/" and "" (for relative paths) always exist.
// The clock stands still until AdvanceMicros or SleepMicros moves it; SleepMicros returns at
// once after advancing it, so tests of timeouts run without waiting.
class MemEnv final : public Env {
 public:
  // The wall clock starts at `start_micros` (default 2024-01-01T00:00:00Z); the monotonic
  // clock starts at 0.
  static constexpr std::int64_t kDefaultStartMicros = 1'704'067'200'000'000;
  explicit MemEnv(std::int64_t start_micros = kDefaultStartMicros);

  Result<std::string> ReadFile(const std::string& path) override;
  Status WriteFile(const std::string& path, std::string_view data) override;
  Status AppendFile(const std::string& path, std::string_view data) override;
  bool FileExists(const std::string& path) override;
  Status DeleteFile(const std::string& path) override;
  Status CreateDir(const std::string& path) override;
  Result<std::vector<std::string>> ListDir(const std::string& path) override;
  Result<std::uint64_t> FileSize(const std::string& path) override;
  std::int64_t NowMicros() override;
  std::int64_t MonotonicMicros() override;
  // Advances both clocks by `micros` and returns without blocking.
  void SleepMicros(std::int64_t micros) override;

  // Advances both clocks by `micros`.
  // REQUIRES: micros >= 0.
  void AdvanceMicros(std::int64_t micros);

 private:
  // Returns the status for writing the file `path` (already normalized): OK, or the error
  // for a missing parent or a directory in the way. `op` names the operation.
  Status CheckWritableLocked(std::string_view op, const std::string& path) const;

  std::mutex mu_;
  std::map<std::string, std::string> files_;  // guarded by mu_; key: normalized path
  std::set<std::string> dirs_;                // guarded by mu_; normalized, roots excluded
  std::int64_t now_micros_;                   // guarded by mu_
  std::int64_t monotonic_micros_ = 0;         // guarded by mu_
};

// A read-only, private mapping of a whole file, its pages read in up front (MAP_POPULATE):
// the bytes of a large file without copying them into fresh memory, which the kernel must
// first zero (docs/decisions/0046-warden-mapped-module.md). Not part of Env: it reads the
// real file system. If the file shrinks while it is mapped, reading a page past its new end
// raises SIGBUS; a caller that maps a file others may change must handle that signal.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  ~MappedFile();

  // Maps the file at `path`; errors as PosixEnv::ReadFile's (kNotFound, kIo), and
  // kUnsupported for what is not a regular file (a directory, a pipe). An empty file gives
  // no bytes and maps nothing.
  static Result<MappedFile> Open(const std::string& path);

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace trove::base

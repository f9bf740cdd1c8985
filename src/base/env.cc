#include "base/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include "base/memory.h"

namespace trove::base {

namespace {

// strerror_r has two signatures (XSI returns int, GNU returns char*); these overloads accept
// either, so the code builds whichever one the C library declares.
[[maybe_unused]] const char* StrerrorResult(const char* result, const char* /*buf*/) {
  return result;
}
[[maybe_unused]] const char* StrerrorResult(int result, const char* buf) {
  return result == 0 ? buf : "unknown error";
}

// Returns strerror(err) with its first letter lower-cased ("no such file or directory").
std::string ErrnoText(int err) {
  char buf[256] = {};
  std::string text = StrerrorResult(strerror_r(err, buf, sizeof(buf)), buf);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

// Returns "op path: strerror": kNotFound for ENOENT, else kIo.
Status PosixError(std::string_view op, std::string_view path, int err) {
  std::string message = fmt::format("{} {}: {}", op, path, ErrnoText(err));
  if (err == ENOENT) return Status::NotFound(std::move(message));
  return Status::Io(std::move(message));
}

// Closes a descriptor on scope exit unless released. For writes, close explicitly and check.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  int Release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// Writes all of `data` to `fd`; errors name `path`.
Status WriteAll(int fd, std::string_view data, const std::string& path) {
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return PosixError("write", path, errno);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

// Closes `fd` and reports a failure (NFS and some filesystems report write errors here).
Status CloseChecked(int fd, const std::string& path) {
  if (::close(fd) != 0) return PosixError("close", path, errno);
  return Status::Ok();
}

// Returns the directory part of `path`: "." when it has no slash, "/" for "/name".
std::string DirName(const std::string& path) {
  std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Returns 16 random hex digits for a temporary file name.
std::string TempSuffix() {
  std::uint64_t bits = 0;
  if (getrandom(&bits, sizeof(bits), 0) != static_cast<ssize_t>(sizeof(bits))) {
    // Uniqueness, not secrecy, is needed; O_EXCL catches a collision.
    bits = static_cast<std::uint64_t>(::getpid()) << 40 ^
           static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  return fmt::format("{:016x}", bits);
}

// Makes a completed rename durable.
Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return PosixError("open", dir, errno);
  FdCloser closer(fd);
  if (::fsync(fd) != 0) return PosixError("fsync", dir, errno);
  return Status::Ok();
}

// --- MemEnv path helpers ---

// Returns `path` with empty and "." components dropped and ".." applied lexically. An
// absolute path keeps its leading '/'; the roots normalize to "/" and "".
std::string NormalizePath(std::string_view path) {
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out = absolute ? "/" : "";
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  return out;
}

bool IsRoot(const std::string& norm) { return norm.empty() || norm == "/"; }

// Returns the normalized parent of a normalized, non-root path.
std::string ParentOf(const std::string& norm) {
  std::size_t slash = norm.find_last_of('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return norm.substr(0, slash);
}

// Returns the prefix that children of the normalized directory `dir` start with.
std::string ChildPrefix(const std::string& dir) {
  if (dir.empty()) return "";
  if (dir == "/") return "/";
  return dir + "/";
}

// When `key` is a direct child of the directory with ChildPrefix `prefix`, adds its name.
void AddIfChild(const std::string& key, const std::string& prefix, bool relative_root,
                std::set<std::string>& names) {
  if (key.size() <= prefix.size() || key.compare(0, prefix.size(), prefix) != 0) return;
  if (relative_root && key.front() == '/') return;
  std::string_view rest = std::string_view(key).substr(prefix.size());
  if (rest.find('/') == std::string_view::npos) names.emplace(rest);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// PosixEnv

Result<std::string> PosixEnv::ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PosixError("open", path, errno);
  FdCloser closer(fd);
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    // A regular file is read straight into its final buffer, which for a large file is first
    // advised to use huge pages: a 32 MB module otherwise costs ~8,000 page faults and a copy
    // through `buf` (docs/decisions/0025-warden-perf3.md). The size is only a hint: a file
    // that shrinks or grows meanwhile is read to its end all the same.
    const auto size = static_cast<std::size_t>(st.st_size);
    out.reserve(size);
    if (size >= kHugePageAdviceMinBytes) AdviseHugePages(out.data(), out.capacity());
    out.resize(size);
    std::size_t have = 0;
    while (have < size) {
      ssize_t n = ::read(fd, out.data() + have, size - have);
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError("read", path, errno);
      }
      if (n == 0) break;
      have += static_cast<std::size_t>(n);
    }
    out.resize(have);
    if (have < size) return out;  // end of file came early
  }
  char buf[64 * 1024];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      return PosixError("read", path, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

Status PosixEnv::WriteFile(const std::string& path, std::string_view data) {
  // The temporary file sits beside the target, so that the rename stays within one
  // filesystem and is atomic.
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0; ++attempt) {
    tmp = path + ".tmp." + TempSuffix();
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt >= 8)) return PosixError("open", path, errno);
  }
  Status status = WriteAll(fd, data, path);
  if (status.ok() && ::fsync(fd) != 0) status = PosixError("fsync", path, errno);
  Status closed = CloseChecked(fd, path);
  if (status.ok()) status = std::move(closed);
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = PosixError("rename", path, errno);
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  return SyncDir(DirName(path));
}

Status PosixEnv::AppendFile(const std::string& path, std::string_view data) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return PosixError("open", path, errno);
  Status status = WriteAll(fd, data, path);
  Status closed = CloseChecked(fd, path);
  return status.ok() ? closed : status;
}

bool PosixEnv::FileExists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Result<std::string> PosixEnv::RealPath(const std::string& path) {
  char* resolved = ::realpath(path.empty() ? "." : path.c_str(), nullptr);
  if (resolved == nullptr) return PosixError("realpath", path, errno);
  std::string out(resolved);
  std::free(resolved);
  return out;
}

Status PosixEnv::DeleteFile(const std::string& path) {
  if (::unlink(path.c_str()) != 0) return PosixError("unlink", path, errno);
  return Status::Ok();
}

Status PosixEnv::CreateDir(const std::string& path) {
  // Creates each prefix in turn. An existing directory is skipped before mkdir is tried, so
  // that an unwritable existing ancestor (such as "/home") does not fail with EACCES.
  for (std::size_t end = 1; end <= path.size(); ++end) {
    if (end < path.size() && path[end] != '/') continue;
    std::string prefix = path.substr(0, end);
    if (prefix.back() == '/') continue;  // "a//b"
    struct stat st {};
    if (::stat(prefix.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    if (::mkdir(prefix.c_str(), 0777) == 0) continue;
    int err = errno;
    if (err == EEXIST && ::stat(prefix.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    return PosixError("mkdir", prefix, err);
  }
  return Status::Ok();
}

Result<std::vector<std::string>> PosixEnv::ListDir(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return PosixError("opendir", path, errno);
  std::vector<std::string> names;
  for (;;) {
    errno = 0;
    struct dirent* entry = ::readdir(dir);
    if (entry == nullptr) {
      int err = errno;
      ::closedir(dir);
      if (err != 0) return PosixError("readdir", path, err);
      break;
    }
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::uint64_t> PosixEnv::FileSize(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return PosixError("stat", path, errno);
  if (S_ISDIR(st.st_mode)) return PosixError("stat", path, EISDIR);
  return static_cast<std::uint64_t>(st.st_size);
}

std::int64_t PosixEnv::NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t PosixEnv::MonotonicMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void PosixEnv::SleepMicros(std::int64_t micros) {
  if (micros > 0) std::this_thread::sleep_for(std::chrono::microseconds(micros));
}

// ---------------------------------------------------------------------------------------------
// MemEnv

MemEnv::MemEnv(std::int64_t start_micros) : now_micros_(start_micros) {}

Status MemEnv::CheckWritableLocked(std::string_view op, const std::string& path) const {
  const std::string norm = NormalizePath(path);
  if (IsRoot(norm) || dirs_.count(norm) > 0) return PosixError(op, path, EISDIR);
  const std::string parent = ParentOf(norm);
  if (IsRoot(parent) || dirs_.count(parent) > 0) return Status::Ok();
  // A missing ancestor gives ENOENT, a file in the way ENOTDIR, as open(2) reports them.
  for (std::string dir = parent; !IsRoot(dir); dir = ParentOf(dir)) {
    if (files_.count(dir) > 0) return PosixError(op, path, ENOTDIR);
  }
  return PosixError(op, path, ENOENT);
}

Result<std::string> MemEnv::ReadFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string norm = NormalizePath(path);
  if (auto it = files_.find(norm); it != files_.end()) return it->second;
  if (IsRoot(norm) || dirs_.count(norm) > 0) return PosixError("read", path, EISDIR);
  return PosixError("open", path, ENOENT);
}

Status MemEnv::WriteFile(const std::string& path, std::string_view data) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(CheckWritableLocked("open", path));
  files_[NormalizePath(path)] = std::string(data);
  return Status::Ok();
}

Status MemEnv::AppendFile(const std::string& path, std::string_view data) {
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(CheckWritableLocked("open", path));
  files_[NormalizePath(path)].append(data);
  return Status::Ok();
}

bool MemEnv::FileExists(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string norm = NormalizePath(path);
  return IsRoot(norm) || files_.count(norm) > 0 || dirs_.count(norm) > 0;
}

Status MemEnv::DeleteFile(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string norm = NormalizePath(path);
  if (files_.erase(norm) > 0) return Status::Ok();
  if (IsRoot(norm) || dirs_.count(norm) > 0) return PosixError("unlink", path, EISDIR);
  return PosixError("unlink", path, ENOENT);
}

Status MemEnv::CreateDir(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string norm = NormalizePath(path);
  std::vector<std::string> missing;  // deepest first
  for (std::string dir = norm; !IsRoot(dir) && dirs_.count(dir) == 0; dir = ParentOf(dir)) {
    missing.push_back(dir);
  }
  // Check the whole chain before creating any of it, so a failure leaves nothing behind.
  for (const std::string& dir : missing) {
    if (files_.count(dir) > 0) return PosixError("mkdir", dir, EEXIST);
  }
  dirs_.insert(missing.begin(), missing.end());
  return Status::Ok();
}

Result<std::vector<std::string>> MemEnv::ListDir(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string norm = NormalizePath(path);
  if (files_.count(norm) > 0) return PosixError("opendir", path, ENOTDIR);
  if (!IsRoot(norm) && dirs_.count(norm) == 0) return PosixError("opendir", path, ENOENT);
  const std::string prefix = ChildPrefix(norm);
  const bool relative_root = norm.empty();
  std::set<std::string> names;
  for (auto it = files_.lower_bound(prefix);
       it != files_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    AddIfChild(it->first, prefix, relative_root, names);
  }
  for (auto it = dirs_.lower_bound(prefix);
       it != dirs_.end() && it->compare(0, prefix.size(), prefix) == 0; ++it) {
    AddIfChild(*it, prefix, relative_root, names);
  }
  return std::vector<std::string>(names.begin(), names.end());
}

Result<std::uint64_t> MemEnv::FileSize(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string norm = NormalizePath(path);
  if (auto it = files_.find(norm); it != files_.end())
    return static_cast<std::uint64_t>(it->second.size());
  if (IsRoot(norm) || dirs_.count(norm) > 0) return PosixError("stat", path, EISDIR);
  return PosixError("stat", path, ENOENT);
}

std::int64_t MemEnv::NowMicros() {
  std::lock_guard<std::mutex> lock(mu_);
  return now_micros_;
}

std::int64_t MemEnv::MonotonicMicros() {
  std::lock_guard<std::mutex> lock(mu_);
  return monotonic_micros_;
}

void MemEnv::SleepMicros(std::int64_t micros) {
  if (micros > 0) AdvanceMicros(micros);
}

void MemEnv::AdvanceMicros(std::int64_t micros) {
  TROVE_CHECK(micros >= 0);
  std::lock_guard<std::mutex> lock(mu_);
  now_micros_ += micros;
  monotonic_micros_ += micros;
}

// ---------------------------------------------------------------------------------------------
// MappedFile

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
}

Result<MappedFile> MappedFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PosixError("open", path, errno);
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return PosixError("stat", path, errno);
  if (!S_ISREG(st.st_mode)) {
    return Status::Unsupported(fmt::format("map {}: not a regular file", path));
  }
  MappedFile out;
  if (st.st_size == 0) return out;
  const auto size = static_cast<std::size_t>(st.st_size);
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  if (data == MAP_FAILED) return PosixError("mmap", path, errno);
  out.data_ = static_cast<const std::uint8_t*>(data);
  out.size_ = size;
  return out;
}

}  // namespace trove::base

#include "librarian/crawl/crawler.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

#include "base/hash.h"
#include "librarian/crawl/glob.h"
#include "librarian/crawl/path.h"

namespace trove::librarian::crawl {
namespace {

constexpr std::string_view kDefaultExcludes[] = {
    "node_modules/", "build/", "cmake-build-*/", "dist/",   "out/",     "target/",
    ".venv/",        "venv/",  "__pycache__/",   ".cache/", "*.min.js", "*.map",
};

// Directories never entered, whatever the rules say (docs/librarian.md §6.1).
constexpr std::string_view kAlwaysSkippedDirs[] = {".git", ".hg", ".svn", ".librarian"};

// Ignore files read in every directory; a later one's rules win over an earlier one's.
constexpr std::string_view kIgnoreFiles[] = {".gitignore", ".librarianignore"};

// Ignore files above this size are not read (with a warning).
constexpr std::size_t kMaxIgnoreFileBytes = 1 << 20;

bool IsAlwaysSkippedDir(std::string_view name) {
  return std::find(std::begin(kAlwaysSkippedDirs), std::end(kAlwaysSkippedDirs), name) !=
         std::end(kAlwaysSkippedDirs);
}

// Returns whether `target` (canonical, under the canonical `root`) passes through a directory
// the walk never enters, such as .git/: a symlink must not smuggle those contents in.
bool InsideAlwaysSkippedDir(std::string_view root, std::string_view target) {
  std::string_view rel = target.substr(std::min(target.size(), root == "/" ? 1 : root.size() + 1));
  while (!rel.empty()) {
    const std::size_t slash = rel.find('/');
    if (IsAlwaysSkippedDir(rel.substr(0, slash))) return true;
    if (slash == std::string_view::npos) break;
    rel.remove_prefix(slash + 1);
  }
  return false;
}

std::string ErrnoText(int err) { return std::strerror(err); }

std::int64_t MtimeNs(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
         static_cast<std::int64_t>(st.st_mtim.tv_nsec);
}

Result<std::vector<Glob>> CompileList(const std::vector<std::string>& list,
                                      std::string_view field) {
  if (list.size() > kMaxGlobsPerList) {
    return Status::InvalidArgument(
        fmt::format("{}: at most {} patterns, got {}", field, kMaxGlobsPerList, list.size()));
  }
  std::vector<Glob> globs;
  globs.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    Result<Glob> glob = Glob::Compile(list[i]);
    if (!glob.ok()) return glob.status().WithContext(fmt::format("{}[{}]", field, i));
    globs.push_back(std::move(glob).value());
  }
  return globs;
}

bool AnyMatches(const std::vector<Glob>& globs, std::string_view path, bool is_dir) {
  return std::any_of(globs.begin(), globs.end(),
                     [&](const Glob& glob) { return glob.Matches(path, is_dir); });
}

// Reads at most `limit` + 1 bytes from `fd` into `out`, starting with room for `expect` + 1
// bytes (the size fstat reported) so a file that did not change is read with one allocation.
// Returns the errno on failure, else 0.
int ReadUpTo(int fd, std::size_t limit, std::size_t expect, std::string& out) {
  out.clear();
  std::size_t want = limit + 1;
  out.resize(std::min<std::size_t>(want, std::max<std::size_t>(expect + 1, 1 << 12)));
  std::size_t have = 0;
  while (have < want) {
    if (have == out.size()) out.resize(std::min(want, out.size() * 2));
    const ssize_t n = read(fd, out.data() + have, out.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  out.resize(have);
  return 0;
}

struct DirCloser {
  void operator()(DIR* dir) const { closedir(dir); }
};
struct FreeDeleter {
  void operator()(char* p) const { free(p); }
};

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// One directory's ignore rules, with its workspace-relative path ("" for the root).
struct IgnoreLayer {
  std::string dir;
  IgnoreRules rules;
};

class Walker {
 public:
  Walker(std::string root, const CrawlOptions& options, const Manifest* previous,
         base::Cancellation& cancel, const base::Progress& progress, std::vector<Glob> include,
         std::vector<Glob> exclude, std::vector<Glob> defaults, CrawlResult& result)
      : root_(std::move(root)),
        options_(options),
        previous_(previous),
        cancel_(cancel),
        progress_(progress),
        include_(std::move(include)),
        exclude_(std::move(exclude)),
        defaults_(std::move(defaults)),
        result_(result) {}

  // Walks the directory `rel` (workspace-relative, "" for the root).
  Status Walk(const std::string& rel, std::size_t depth, bool included_by_ancestor);

 private:
  struct Entry {
    std::string name;
    std::string key;  // name, plus "/" for a directory, so that walk order is path order
    struct stat st;
  };

  std::string Absolute(std::string_view rel) const {
    if (rel.empty()) return root_;
    return root_ == "/" ? "/" + std::string(rel) : root_ + "/" + std::string(rel);
  }
  static std::string Join(const std::string& dir, std::string_view name) {
    return dir.empty() ? std::string(name) : dir + "/" + std::string(name);
  }

  // Returns whether default excludes, ignore files or `exclude` drop `rel`.
  bool Dropped(const std::string& rel, bool is_dir) const;
  void LoadIgnoreFiles(const std::string& rel);
  // Handles one candidate file; `open_path` is the absolute path to read (a symlink's target).
  void ProcessFile(const std::string& rel, const std::string& open_path, const struct stat& st,
                   bool symlink);
  void Skip(std::string rel, SkipReason reason, std::string detail) {
    result_.skipped.push_back(
        SkippedEntry{.path = std::move(rel), .reason = reason, .detail = std::move(detail)});
  }
  // With CrawlOptions::only: whether the directory `rel` is on the way to, equal to or under
  // one of the paths, and whether the file `rel` is equal to or under one.
  bool OnlyEnters(const std::string& rel) const;
  bool OnlyKeeps(const std::string& rel) const;
  // Applies include and max_files to a file that passed Dropped. Returns false when the file
  // is not kept; sets truncated when max_files is reached.
  bool Admit(const std::string& rel, bool included_by_ancestor);

  const std::string root_;
  const CrawlOptions& options_;
  const Manifest* const previous_;
  base::Cancellation& cancel_;
  const base::Progress& progress_;
  const std::vector<Glob> include_;
  const std::vector<Glob> exclude_;
  const std::vector<Glob> defaults_;
  CrawlResult& result_;
  std::vector<IgnoreLayer> layers_;
  std::uint64_t entries_ = 0;
  std::string buffer_;
};

bool Walker::Dropped(const std::string& rel, bool is_dir) const {
  if (AnyMatches(exclude_, rel, is_dir)) return true;
  bool ignored = AnyMatches(defaults_, rel, is_dir);
  for (const IgnoreLayer& layer : layers_) {
    std::string_view sub = rel;
    if (!layer.dir.empty()) sub.remove_prefix(layer.dir.size() + 1);
    const IgnoreRules::Verdict verdict = layer.rules.Evaluate(sub, is_dir);
    if (verdict != IgnoreRules::Verdict::kNone) {
      ignored = verdict == IgnoreRules::Verdict::kIgnore;
    }
  }
  return ignored;
}

// `a` is `b` or lies under the directory `b`.
bool SameOrUnder(std::string_view a, std::string_view b) {
  return a.size() >= b.size() && a.compare(0, b.size(), b) == 0 &&
         (a.size() == b.size() || a[b.size()] == '/');
}

bool Walker::OnlyEnters(const std::string& rel) const {
  if (!options_.only) return true;
  for (const std::string& p : *options_.only) {
    if (SameOrUnder(rel, p) || SameOrUnder(p, rel)) return true;
  }
  return false;
}

bool Walker::OnlyKeeps(const std::string& rel) const {
  if (!options_.only) return true;
  for (const std::string& p : *options_.only) {
    if (SameOrUnder(rel, p)) return true;
  }
  return false;
}

bool Walker::Admit(const std::string& rel, bool included_by_ancestor) {
  if (!include_.empty() && !included_by_ancestor && !AnyMatches(include_, rel, false)) {
    return false;
  }
  if (options_.max_files.has_value() && result_.files_seen >= *options_.max_files) {
    result_.truncated = true;
    return false;
  }
  ++result_.files_seen;
  return true;
}

void Walker::LoadIgnoreFiles(const std::string& rel) {
  IgnoreLayer layer{.dir = rel, .rules = {}};
  std::vector<std::string> warnings;
  for (std::string_view name : kIgnoreFiles) {
    const std::string file_rel = Join(rel, name);
    Fd fd(open(Absolute(file_rel).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    if (fd.get() < 0) {
      if (errno != ENOENT) {
        result_.warnings.push_back(
            fmt::format("{}: not read: {}", file_rel,
                        errno == ELOOP ? std::string("is a symlink") : ErrnoText(errno)));
      }
      continue;
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
      result_.warnings.push_back(fmt::format("{}: not read: not a regular file", file_rel));
      continue;
    }
    if (const int err = ReadUpTo(fd.get(), kMaxIgnoreFileBytes, 0, buffer_); err != 0) {
      result_.warnings.push_back(fmt::format("{}: not read: {}", file_rel, ErrnoText(err)));
      continue;
    }
    if (buffer_.size() > kMaxIgnoreFileBytes) {
      result_.warnings.push_back(
          fmt::format("{}: not read: larger than {} bytes", file_rel, kMaxIgnoreFileBytes));
      continue;
    }
    IgnoreRules rules = IgnoreRules::Parse(buffer_, file_rel, &result_.warnings);
    if (rules.empty()) continue;
    if (layer.rules.empty()) {
      layer.rules = std::move(rules);
    } else {
      // Both files in one directory: .librarianignore's rules come after .gitignore's.
      layers_.push_back(std::move(layer));
      layer = IgnoreLayer{.dir = rel, .rules = std::move(rules)};
    }
  }
  if (!layer.rules.empty()) layers_.push_back(std::move(layer));
}

void Walker::ProcessFile(const std::string& rel, const std::string& open_path,
                         const struct stat& st, bool symlink) {
  std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  std::int64_t mtime_ns = MtimeNs(st);
  if (size > options_.max_file_bytes) {
    Skip(rel, SkipReason::kLarge, fmt::format("{} bytes, limit {}", size, options_.max_file_bytes));
    return;
  }
  const ManifestEntry* before = nullptr;
  if (previous_ != nullptr) {
    auto it = previous_->find(rel);
    if (it != previous_->end()) before = &it->second;
  }
  if (before != nullptr && !options_.force && before->size == size &&
      before->mtime_ns == mtime_ns) {
    result_.files.push_back(FileEntry{.path = rel,
                                      .size = size,
                                      .mtime_ns = mtime_ns,
                                      .sha256 = before->sha256,
                                      .change = FileChange::kUnchanged,
                                      .symlink = symlink});
    return;
  }
  if (before == nullptr && options_.defer_new_files) {
    result_.files.push_back(FileEntry{.path = rel,
                                      .size = size,
                                      .mtime_ns = mtime_ns,
                                      .sha256 = {},
                                      .change = FileChange::kAdded,
                                      .symlink = symlink,
                                      .unread = true});
    return;
  }
  // For a symlink, `open_path` is its canonical target: its final component must still be
  // what stat saw, so it is not followed either.
  CandidateRead read = ReadCandidate(open_path, /*follow=*/false, options_.max_file_bytes,
                                     options_.binary_probe_bytes);
  if (read.skip) {
    Skip(rel, *read.skip, std::move(read.detail));
    return;
  }
  std::string sha256 = base::Sha256Hex(read.content);
  ++result_.files_hashed;
  FileChange change = FileChange::kAdded;
  if (before != nullptr) {
    change = before->sha256 == sha256 ? FileChange::kTouched : FileChange::kModified;
  }
  result_.files.push_back(FileEntry{.path = rel,
                                    .size = static_cast<std::uint64_t>(read.content.size()),
                                    .mtime_ns = read.mtime_ns,
                                    .sha256 = std::move(sha256),
                                    .change = change,
                                    .symlink = symlink});
}

Status Walker::Walk(const std::string& rel, std::size_t depth, bool included_by_ancestor) {
  if (cancel_.requested()) return Status::Cancelled("crawl cancelled");
  progress_.Report(static_cast<double>(result_.files_seen), 0, "crawling");
  const std::string dir_path = Absolute(rel);

  std::vector<Entry> entries;
  {
    std::unique_ptr<DIR, DirCloser> dir(opendir(dir_path.c_str()));
    if (dir == nullptr) {
      if (rel.empty()) {
        return Status::Io(fmt::format("workspace: cannot be read: {}", ErrnoText(errno)));
      }
      Skip(rel, SkipReason::kUnreadable, ErrnoText(errno));
      return Status::Ok();
    }
    while (true) {
      errno = 0;
      const dirent* ent = readdir(dir.get());
      if (ent == nullptr) {
        if (errno != 0) Skip(rel.empty() ? "." : rel, SkipReason::kUnreadable, ErrnoText(errno));
        break;
      }
      const std::string_view name = ent->d_name;
      if (name == "." || name == "..") continue;
      if (++entries_ > options_.max_entries) {
        return Status::ResourceExhausted(
            fmt::format("crawl: more than {} directory entries; narrow include or exclude",
                        options_.max_entries));
      }
      Entry entry{.name = std::string(name), .key = std::string(name), .st = {}};
      const std::string path = dir_path == "/" ? "/" + entry.name : dir_path + "/" + entry.name;
      if (lstat(path.c_str(), &entry.st) != 0) {
        Skip(Join(rel, name), SkipReason::kUnreadable, ErrnoText(errno));
        continue;
      }
      if (S_ISDIR(entry.st.st_mode)) entry.key.push_back('/');
      entries.push_back(std::move(entry));
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.key < b.key; });

  const std::size_t layers_before = layers_.size();
  if (options_.use_ignore_files) LoadIgnoreFiles(rel);

  Status status;
  for (const Entry& entry : entries) {
    const std::string child = Join(rel, entry.name);
    const mode_t mode = entry.st.st_mode;
    if (S_ISDIR(mode) ? !OnlyEnters(child) : !OnlyKeeps(child)) continue;
    if (S_ISDIR(mode)) {
      if (IsAlwaysSkippedDir(entry.name)) continue;
      if (Dropped(child, true)) continue;
      if (depth + 1 > options_.max_depth) {
        Skip(child, SkipReason::kTooDeep, fmt::format("deeper than {}", options_.max_depth));
        continue;
      }
      const bool included =
          included_by_ancestor || (!include_.empty() && AnyMatches(include_, child, true));
      status = Walk(child, depth + 1, included);
      if (!status.ok() || result_.truncated) break;
    } else if (S_ISLNK(mode)) {
      const std::string link_path = Absolute(child);
      std::unique_ptr<char, FreeDeleter> target(realpath(link_path.c_str(), nullptr));
      struct stat target_st;
      if (target == nullptr || stat(target.get(), &target_st) != 0) {
        const std::string error = ErrnoText(errno);
        if (Dropped(child, false)) continue;
        Skip(child, SkipReason::kSymlinkBroken, error);
        continue;
      }
      const bool is_dir = S_ISDIR(target_st.st_mode);
      if (Dropped(child, is_dir)) continue;
      if (!IsUnder(root_, target.get())) {
        Skip(child, SkipReason::kSymlinkOutside, "target outside the workspace");
      } else if (InsideAlwaysSkippedDir(root_, target.get())) {
        Skip(child, SkipReason::kSymlinkHidden, "target inside a directory never indexed");
      } else if (is_dir) {
        Skip(child, SkipReason::kSymlinkDirectory, "symlinked directories are not followed");
      } else if (!S_ISREG(target_st.st_mode)) {
        Skip(child, SkipReason::kNotRegular, "symlink to a special file");
      } else if (Admit(child, included_by_ancestor)) {
        ProcessFile(child, target.get(), target_st, /*symlink=*/true);
      }
    } else {
      if (Dropped(child, false)) continue;
      if (!S_ISREG(mode)) {
        Skip(child, SkipReason::kNotRegular, "not a regular file");
      } else if (Admit(child, included_by_ancestor)) {
        ProcessFile(child, Absolute(child), entry.st, /*symlink=*/false);
      }
    }
    if (result_.truncated) break;
  }
  layers_.resize(layers_before);
  return status;
}

}  // namespace

std::span<const std::string_view> DefaultExcludes() { return kDefaultExcludes; }

CandidateRead ReadCandidate(const std::string& abs, bool follow, std::uint64_t max_file_bytes,
                            std::size_t binary_probe_bytes) {
  CandidateRead out;
  auto skip = [&out](SkipReason reason, std::string detail) {
    out.skip = reason;
    out.detail = std::move(detail);
    out.content.clear();
    return std::move(out);
  };
  // O_NOFOLLOW (unless `follow`): the final component must still be what lstat saw;
  // O_NONBLOCK: a file swapped for a fifo cannot block the reader.
  Fd fd(
      open(abs.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (follow ? 0 : O_NOFOLLOW)));
  if (fd.get() < 0) return skip(SkipReason::kUnreadable, ErrnoText(errno));
  struct stat now;
  if (fstat(fd.get(), &now) != 0) return skip(SkipReason::kUnreadable, ErrnoText(errno));
  if (!S_ISREG(now.st_mode)) return skip(SkipReason::kNotRegular, "changed while crawling");
  out.mtime_ns = MtimeNs(now);
  const auto limit =
      static_cast<std::size_t>(std::min<std::uint64_t>(max_file_bytes, SIZE_MAX - 1));
  const auto expect = static_cast<std::size_t>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(std::max<off_t>(now.st_size, 0)), limit));
  if (const int err = ReadUpTo(fd.get(), limit, expect, out.content); err != 0) {
    return skip(SkipReason::kUnreadable, ErrnoText(err));
  }
  if (out.content.size() > max_file_bytes) {
    return skip(SkipReason::kLarge, fmt::format("grew above the limit {}", max_file_bytes));
  }
  const std::size_t probe = std::min(out.content.size(), binary_probe_bytes);
  if (probe > 0 && std::memchr(out.content.data(), 0, probe) != nullptr) {
    return skip(SkipReason::kBinary, "NUL byte in the first bytes");
  }
  return out;
}

std::string_view SkipReasonName(SkipReason reason) {
  switch (reason) {
    case SkipReason::kLarge:
      return "large";
    case SkipReason::kBinary:
      return "binary";
    case SkipReason::kUnreadable:
      return "unreadable";
    case SkipReason::kSymlinkOutside:
      return "symlink_outside";
    case SkipReason::kSymlinkBroken:
      return "symlink_broken";
    case SkipReason::kSymlinkDirectory:
      return "symlink_directory";
    case SkipReason::kNotRegular:
      return "not_regular";
    case SkipReason::kTooDeep:
      return "too_deep";
    case SkipReason::kSymlinkHidden:
      return "symlink_hidden";
  }
  return "unknown";
}

Result<CrawlResult> Crawl(std::string_view root, const CrawlOptions& options,
                          const Manifest* previous, base::Cancellation& cancel,
                          const base::Progress& progress) {
  if (options.max_files.has_value() && *options.max_files < 1) {
    return Status::InvalidArgument("maxFiles: must be at least 1");
  }
  ASSIGN_OR_RETURN(std::vector<Glob> include, CompileList(options.include, "include"));
  ASSIGN_OR_RETURN(std::vector<Glob> exclude, CompileList(options.exclude, "exclude"));
  std::vector<Glob> defaults;
  if (options.default_excludes) {
    for (std::string_view pattern : kDefaultExcludes) {
      Result<Glob> glob = Glob::Compile(pattern);
      TROVE_CHECK(glob.ok());
      defaults.push_back(std::move(glob).value());
    }
  }
  ASSIGN_OR_RETURN(std::string canonical, CanonicalWorkspaceRoot(root));
  CrawlResult result;
  result.root = canonical;
  Walker walker(std::move(canonical), options, previous, cancel, progress, std::move(include),
                std::move(exclude), std::move(defaults), result);
  RETURN_IF_ERROR(walker.Walk("", 0, false));
  // The walk already visits paths in bytewise order; sorting again keeps that a guarantee.
  std::sort(result.files.begin(), result.files.end(),
            [](const FileEntry& a, const FileEntry& b) { return a.path < b.path; });
  progress.Report(static_cast<double>(result.files_seen), 0, "crawled");
  return result;
}

}  // namespace trove::librarian::crawl

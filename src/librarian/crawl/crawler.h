// Crawl: Librarian's workspace discovery (docs/librarian.md §6.1) and the incremental half of
// docs/librarian.md §6.3. Walks a workspace and returns the files a bootstrap should index, each
// with size, mtime and SHA-256, plus every entry it left out and why.
//
// What is walked: the tree under the canonical root in bytewise-sorted order of full paths (a
// directory sorts as "name/"), so the file list, and which files `max_files` keeps, is
// deterministic. `.git/`, `.hg/`, `.svn/` and `.librarian/` are never entered. Then, in order,
// later winning: the default excludes (DefaultExcludes(), when `default_excludes`), the rules
// of every `.gitignore` and `.librarianignore` from the root down to the entry's directory
// (git semantics: a later or deeper rule wins, `!` re-includes, and nothing under an ignored
// directory can be re-included, as the directory is not entered), then `exclude` (always
// wins) and `include` (when non-empty, a file must match one, itself or through an ancestor
// directory). Glob syntax: glob.h.
//
// What is kept: regular files, and symlinks to regular files whose realpath lies inside the
// root. Symlinked directories are never followed (docs/librarian.md §6.1), so a symlink loop cannot
// trap the walk; symlinks that leave the workspace, dangle, loop or point into .git/ (or another
// directory never entered) are recorded as skipped. Files above `max_file_bytes` are skipped
// as large without being read; a file whose first `binary_probe_bytes` hold a NUL byte is
// skipped as binary. Unreadable files and directories are recorded as skipped, never fatal.
// A symlink's target is checked against the hard-wired directories only, not against ignore
// rules or excludes: those apply to the link's own path.
//
// Hashing: SHA-256 (base::Sha256Hex), not XXH3, because the spec names SHA-256 as the content
// hash of files and evidence references, and a workspace's contents are peer-controlled, so
// collisions must not be forceable. With a `previous` manifest and without `force`, a file
// whose (size, mtime_ns) equals its manifest entry is not read at all and keeps the stored
// hash (docs/librarian.md §6.3); any other file is read once, probed for NUL bytes and hashed,
// unless `defer_new_files` leaves the files without a manifest entry to the caller (ReadCandidate).
//
// Thread safety: Crawl is a free function with no shared state; `cancel` may be set from any
// thread, and `progress` is called on the crawling thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"

namespace trove::librarian::crawl {

// Most patterns accepted in `include` or in `exclude` (docs/librarian.md §8.6).
inline constexpr std::size_t kMaxGlobsPerList = 256;

struct CrawlOptions {
  // Globs a file must match (itself or an ancestor directory) to be kept; empty keeps all.
  // Wire name `include`. Each entry is reported as "include[i]" in errors.
  std::vector<std::string> include;
  // Globs that drop a file, or a whole directory, whatever else says. Wire name `exclude`.
  std::vector<std::string> exclude;
  // Keep at most this many candidate files (after all filtering, counting those then skipped
  // as large, binary or unreadable), in sorted order; more sets `truncated`. Unset: no limit.
  // Wire name `maxFiles` (>= 1).
  std::optional<std::uint64_t> max_files;
  // Files larger than this are skipped as large, unread. Default 1 MiB (docs/librarian.md §6.1).
  std::uint64_t max_file_bytes = std::uint64_t{1} << 20;
  // A NUL byte within this many leading bytes marks a file binary. Default 8 KiB; 0 disables.
  std::size_t binary_probe_bytes = 8192;
  // Whether `.gitignore` and `.librarianignore` files are honoured. Default true.
  bool use_ignore_files = true;
  // Whether DefaultExcludes() apply. Default true.
  bool default_excludes = true;
  // Hash every file even when its size and mtime match `previous`. Default false.
  bool force = false;
  // Files with no `previous` entry are listed unread (FileEntry::unread: lstat's size and
  // mtime, no hash, no binary probe) for the caller to read once with ReadCandidate, which
  // applies the same checks; files above max_file_bytes by lstat are still skipped as large.
  // A bootstrap reads every file anyway, so this saves a second read and hash of each new
  // file and keeps the serial walk short (docs/decisions/0032-librarian-boot2.md). Default
  // false.
  bool defer_new_files = false;
  // Directories nested deeper than this are recorded as skipped, not entered. Default 256.
  std::size_t max_depth = 256;
  // Directory entries examined before the crawl stops with kResourceExhausted. Bounds a walk
  // over a hostile or huge tree independently of `max_files`. Default 2,000,000.
  std::uint64_t max_entries = 2'000'000;
  // When set, the walk is restricted to these workspace-relative paths (files or directories,
  // `/`-separated, normalized): it enters only directories on the way to one of them or under
  // one, and keeps only files equal to or under one; every other rule applies as in a full
  // walk. Watch mode (watch/watcher.h) re-crawls just what inotify reported this way. Unset:
  // the whole tree.
  std::optional<std::vector<std::string>> only;
};

// What a previous run stored for one file.
struct ManifestEntry {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string sha256;  // 64 lower-case hex digits
};
// Workspace-relative path -> entry.
using Manifest = std::map<std::string, ManifestEntry, std::less<>>;

enum class FileChange : std::uint8_t {
  kAdded,      // not in the manifest; read and hashed
  kModified,   // size or mtime differ and the hash differs
  kTouched,    // size or mtime differ but the hash is the same (only mtime to update)
  kUnchanged,  // size and mtime equal the manifest: not read, hash copied
};

struct FileEntry {
  std::string path;  // workspace-relative, `/`-separated
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::string sha256;  // 64 lower-case hex digits
  FileChange change = FileChange::kAdded;
  bool symlink = false;  // reached through a symlink whose target is inside the workspace
  // Not read (CrawlOptions::defer_new_files): `sha256` is empty and `size`/`mtime_ns` are
  // lstat's (the target's for a symlink); the binary probe has not been done.
  bool unread = false;
};

enum class SkipReason : std::uint8_t {
  kLarge,             // above max_file_bytes (spec status `skipped_large`)
  kBinary,            // NUL byte in the probe (spec status `skipped_binary`)
  kUnreadable,        // open/read/opendir failed (detail holds the error)
  kSymlinkOutside,    // symlink whose target lies outside the workspace
  kSymlinkBroken,     // dangling or looping symlink
  kSymlinkDirectory,  // symlink to a directory: not followed
  kNotRegular,        // fifo, socket, device
  kTooDeep,           // directory deeper than max_depth
  kSymlinkHidden,     // symlink into .git/, .hg/, .svn/ or .librarian/, never indexed
};

// Returns "large", "binary", "unreadable", "symlink_outside", ...
std::string_view SkipReasonName(SkipReason reason);

struct SkippedEntry {
  std::string path;  // workspace-relative
  SkipReason reason;
  std::string detail;  // e.g. "permission denied"; may be empty
};

struct CrawlResult {
  std::string root;                   // canonical workspace root
  std::vector<FileEntry> files;       // sorted by path, bytewise
  std::vector<SkippedEntry> skipped;  // in walk order
  std::vector<std::string> warnings;  // ignore-file lines that did not parse
  bool truncated = false;             // max_files stopped the walk with files left
  std::uint64_t files_seen = 0;       // candidate files after filtering
  std::uint64_t files_hashed = 0;     // files read and hashed this run
};

// What reading one candidate file found (ReadCandidate).
struct CandidateRead {
  // Set when the file must be skipped: kLarge (grew above the limit), kBinary, kUnreadable or
  // kNotRegular (swapped for a special file); `detail` says why. Else `content` holds it all.
  std::optional<SkipReason> skip;
  std::string detail;
  std::string content;
  std::int64_t mtime_ns = 0;  // from fstat of the opened file
};

// Reads the candidate file at the absolute path `abs` as the crawl does: opened without
// blocking on a special file and, unless `follow`, without following a final symlink; a
// regular file only; at most `max_file_bytes` (more is kLarge); a NUL byte in the first
// `binary_probe_bytes` is kBinary. Thread-safe.
CandidateRead ReadCandidate(const std::string& abs, bool follow, std::uint64_t max_file_bytes,
                            std::size_t binary_probe_bytes);

// Returns the spec's default excludes: node_modules/, build/, cmake-build-*/, dist/, out/,
// target/, .venv/, venv/, __pycache__/, .cache/, *.min.js, *.map.
std::span<const std::string_view> DefaultExcludes();

// Crawls `root` (absolute; canonicalized with realpath). `previous` may be null (every file is
// hashed). Returns kInvalidArgument for a bad root, option or glob (naming it:
// `exclude[1]: glob "[a": unterminated character class at offset 0`), kCancelled when `cancel`
// is set (polled once per directory), kResourceExhausted past max_entries. Problems with
// single files or directories never fail the crawl; they land in `skipped`. `progress` gets
// (files seen, 0 = total unknown) once per directory.
Result<CrawlResult> Crawl(std::string_view root, const CrawlOptions& options,
                          const Manifest* previous, base::Cancellation& cancel,
                          const base::Progress& progress);

}  // namespace trove::librarian::crawl

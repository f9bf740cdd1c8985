#include "librarian/crawl/path.h"

#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace trove::librarian::crawl {
namespace {

struct FreeDeleter {
  void operator()(char* p) const { free(p); }
};

// Returns realpath(path), or the errno on failure.
Result<std::string> RealPath(const std::string& path) {
  std::unique_ptr<char, FreeDeleter> resolved(realpath(path.c_str(), nullptr));
  if (resolved == nullptr) {
    const int err = errno;
    return Status(
        err == ENOENT || err == ENOTDIR ? base::StatusCode::kNotFound : base::StatusCode::kIo,
        std::strerror(err));
  }
  return std::string(resolved.get());
}

std::vector<std::string_view> SplitSegments(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    std::string_view segment = path.substr(0, slash);
    if (!segment.empty()) out.push_back(segment);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

Status Refuse(const PathPolicy& policy, std::string_view what) {
  return Status::InvalidArgument(fmt::format("{}: {}", policy.field, what));
}

}  // namespace

bool IsUnder(std::string_view root, std::string_view path) {
  if (root == "/") return !path.empty() && path.front() == '/';
  if (path.size() < root.size() || path.substr(0, root.size()) != root) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

Result<std::string> CanonicalWorkspaceRoot(std::string_view root) {
  if (root.empty() || root.front() != '/') {
    return Status::InvalidArgument("workspace: must be an absolute path");
  }
  if (root.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("workspace: contains a NUL byte");
  }
  if (root.size() > PATH_MAX) return Status::InvalidArgument("workspace: path is too long");
  Result<std::string> canonical = RealPath(std::string(root));
  if (!canonical.ok()) {
    return Status(canonical.status().code() == base::StatusCode::kNotFound
                      ? base::StatusCode::kNotFound
                      : base::StatusCode::kIo,
                  "workspace: " + canonical.status().message());
  }
  struct stat st;
  if (stat(canonical->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("workspace: not a directory");
  }
  return canonical;
}

Result<std::string> NormalizeRelativePath(std::string_view user_path, const PathPolicy& policy) {
  if (user_path.empty()) return Refuse(policy, "is empty");
  if (user_path.find('\0') != std::string_view::npos) return Refuse(policy, "contains a NUL byte");
  if (user_path.size() > kMaxUserPathChars) {
    return Refuse(policy, fmt::format("longer than {} characters", kMaxUserPathChars));
  }
  if (user_path.find('\\') != std::string_view::npos) {
    return Refuse(policy, "contains a backslash; use `/` as the separator");
  }
  if (user_path.front() == '/') return Refuse(policy, "must be relative to the workspace");
  std::vector<std::string_view> kept;
  for (std::string_view segment : SplitSegments(user_path)) {
    if (segment == ".") continue;
    if (segment == "..") {
      if (kept.empty()) return Refuse(policy, "escapes the workspace");
      kept.pop_back();
      continue;
    }
    kept.push_back(segment);
  }
  if (kept.empty()) return std::string(".");
  std::string out;
  for (std::string_view segment : kept) {
    if (!out.empty()) out.push_back('/');
    out.append(segment);
  }
  return out;
}

Result<std::string> ResolveInWorkspace(std::string_view root, std::string_view user_path,
                                       const PathPolicy& policy) {
  ASSIGN_OR_RETURN(const std::string canonical_root, CanonicalWorkspaceRoot(root));
  std::string_view relative = user_path;
  std::string stripped;
  if (!user_path.empty() && user_path.front() == '/') {
    if (!policy.allow_absolute) return Refuse(policy, "must be relative to the workspace");
    if (user_path.find('\0') != std::string_view::npos) {
      return Refuse(policy, "contains a NUL byte");
    }
    // Lexically normalize the absolute path first, so "/root/../etc" cannot pass as "under".
    std::vector<std::string_view> kept;
    for (std::string_view segment : SplitSegments(user_path)) {
      if (segment == ".") continue;
      if (segment == "..") {
        if (!kept.empty()) kept.pop_back();
        continue;
      }
      kept.push_back(segment);
    }
    std::string absolute;
    for (std::string_view segment : kept) absolute += "/" + std::string(segment);
    if (absolute.empty()) absolute = "/";
    std::string lexical_root(root);
    while (lexical_root.size() > 1 && lexical_root.back() == '/') lexical_root.pop_back();
    bool under = false;
    for (const std::string& base : {lexical_root, canonical_root}) {
      if (!IsUnder(base, absolute)) continue;
      under = true;
      const std::size_t skip = base == "/" ? 1 : base.size() + 1;
      stripped = skip < absolute.size() ? absolute.substr(skip) : std::string();
      break;
    }
    if (!under) return Refuse(policy, "escapes the workspace");
    if (stripped.empty()) stripped = ".";
    relative = stripped;
  }
  ASSIGN_OR_RETURN(std::string normalized, NormalizeRelativePath(relative, policy));
  if (normalized == ".") return normalized;

  // Resolve each existing prefix; stop at the first one that does not exist.
  std::string prefix = canonical_root == "/" ? std::string() : canonical_root;
  for (std::string_view segment : SplitSegments(normalized)) {
    prefix += "/";
    prefix += segment;
    struct stat st;
    if (lstat(prefix.c_str(), &st) != 0) {
      if (errno == ENOENT || errno == ENOTDIR) break;
      return Refuse(policy, fmt::format("cannot be checked: {}", std::strerror(errno)));
    }
    Result<std::string> real = RealPath(prefix);
    if (!real.ok()) {
      if (S_ISLNK(st.st_mode)) return Refuse(policy, "a symlink on the path cannot be resolved");
      return Refuse(policy, fmt::format("cannot be checked: {}", real.status().message()));
    }
    if (!IsUnder(canonical_root, *real))
      return Refuse(policy, "a symlink leads out of the workspace");
  }
  return normalized;
}

}  // namespace trove::librarian::crawl

#include "mcp/policy/confine.h"

#include <errno.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

namespace trove::mcp::policy {
namespace {

struct FreeDeleter {
  void operator()(char* p) const { free(p); }
};

// Returns realpath(path), or nullopt with errno set.
std::optional<std::string> RealPath(const std::string& path) {
  std::unique_ptr<char, FreeDeleter> real(realpath(path.c_str(), nullptr));
  if (!real) return std::nullopt;
  return std::string(real.get());
}

// Splits `path` into components and applies "." and ".."; returns false when ".." would go
// above the root.
bool Normalize(std::string_view path, std::vector<std::string>& out) {
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t end = path.find('/', i);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(i, end - i);
    if (part.empty() || part == ".") {
      // nothing
    } else if (part == "..") {
      if (out.empty()) return false;
      out.pop_back();
    } else {
      out.emplace_back(part);
    }
    i = end + 1;
  }
  return true;
}

std::string Join(const std::vector<std::string>& parts, std::size_t count) {
  if (count == 0) return "/";
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    out += '/';
    out += parts[i];
  }
  return out;
}

// For messages: the client's path, cut and with control characters shown as '?'.
std::string Shown(std::string_view path) {
  std::string out(path.substr(0, 120));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

}  // namespace

Result<PathConfiner> PathConfiner::Make(const std::vector<std::string>& roots,
                                        ConfineOptions options) {
  if (roots.empty()) return Status::InvalidArgument("allowed roots: none given");
  std::vector<std::string> canonical;
  for (const std::string& root : roots) {
    std::optional<std::string> real = RealPath(root);
    struct stat st {};
    if (!real || ::stat(real->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return Status::InvalidArgument(
          fmt::format("--allow-root {}: not an existing directory", root));
    }
    canonical.push_back(std::move(*real));
  }
  return PathConfiner(std::move(canonical), options);
}

bool PathConfiner::InsideRoots(std::string_view path) const {
  for (const std::string& root : roots_) {
    if (root == "/") return !path.empty() && path.front() == '/';
    if (path.size() >= root.size() && path.substr(0, root.size()) == root &&
        (path.size() == root.size() || path[root.size()] == '/')) {
      return true;
    }
  }
  return false;
}

Result<std::string> PathConfiner::Resolve(std::string_view client_path) const {
  if (client_path.empty()) return Status::InvalidArgument("path: empty");
  if (client_path.size() > options_.max_path_bytes) {
    return Status::InvalidArgument(
        fmt::format("path: longer than {} bytes", options_.max_path_bytes));
  }
  if (client_path.find('\0') != std::string_view::npos) {
    return Status::InvalidArgument("path: contains a NUL byte");
  }
  if (options_.reject_backslash && client_path.find('\\') != std::string_view::npos) {
    return Status::InvalidArgument(
        fmt::format("path {}: contains a backslash", Shown(client_path)));
  }
  const bool absolute = client_path.front() == '/';
  if (absolute && !options_.allow_absolute) {
    return Status::PermissionDenied(
        fmt::format("path {}: absolute paths are not allowed", Shown(client_path)));
  }
  const std::string joined =
      absolute ? std::string(client_path) : roots_.front() + "/" + std::string(client_path);
  std::vector<std::string> parts;
  if (!Normalize(joined, parts) || !InsideRoots(Join(parts, parts.size()))) {
    return Status::PermissionDenied(
        fmt::format("path {}: outside the allowed roots", Shown(client_path)));
  }
  // Walk the path in the kernel's order, from a canonical start: an existing component is
  // resolved (realpath follows its symlinks) before a later ".." applies to it, so
  // "link/../x" means what the kernel would open. Components past the first missing one
  // cannot be symlinks and are appended as they are.
  std::string result = absolute ? std::string("/") : roots_.front();
  std::size_t missing = 0;  // components appended past the last existing one
  const auto parent = [](std::string& path) {
    const std::size_t slash = path.rfind('/');
    path.resize(slash == 0 ? 1 : slash);
  };
  std::size_t i = 0;
  while (i <= client_path.size()) {
    std::size_t end = client_path.find('/', i);
    if (end == std::string_view::npos) end = client_path.size();
    const std::string_view part = client_path.substr(i, end - i);
    i = end + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (result != "/") parent(result);
      if (missing > 0) --missing;
      continue;
    }
    std::string next = result;
    if (next != "/") next += '/';
    next += part;
    if (missing > 0) {
      result = std::move(next);
      ++missing;
      continue;
    }
    struct stat st {};
    if (::lstat(next.c_str(), &st) != 0) {
      if (errno == ENOENT) {
        result = std::move(next);
        missing = 1;
        continue;
      }
      if (errno == ENOTDIR) {
        return Status::InvalidArgument(
            fmt::format("path {}: a parent is not a directory", Shown(client_path)));
      }
      return Status::PermissionDenied(
          fmt::format("path {}: cannot be checked ({})", Shown(client_path), std::strerror(errno)));
    }
    if (S_ISLNK(st.st_mode)) {
      std::optional<std::string> real = RealPath(next);
      if (!real) {
        // A dangling symlink or a loop: creating a file through it would follow it wherever
        // it points.
        return Status::PermissionDenied(fmt::format(
            "path {}: passes through a symlink that does not resolve", Shown(client_path)));
      }
      result = std::move(*real);
    } else {
      result = std::move(next);
    }
  }
  if (!InsideRoots(result)) {
    return Status::PermissionDenied(
        fmt::format("path {}: resolves outside the allowed roots", Shown(client_path)));
  }
  return result;
}

}  // namespace trove::mcp::policy

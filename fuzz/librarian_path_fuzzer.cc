// Fuzzes Librarian's path sanitizer and glob engine (docs/conventions.md §11), the entry points
// that take workspace paths and patterns from a peer. The input is split at its first newline into
// a glob and a path. No input may reach a CHECK, and:
// - NormalizeRelativePath's result is ".", or `/`-separated segments none of which is empty,
//   "." or "..", with no NUL or backslash;
// - ResolveInWorkspace (root "/usr", read-only lstat/realpath only, no writes) returns a
//   normalized path whenever it succeeds, and never succeeds where normalization fails;
// - a glob that compiles matches without crashing, and a literal glob built from escaping
//   every byte of a valid single-segment path matches that path.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "librarian/crawl/glob.h"
#include "librarian/crawl/path.h"

namespace {

using trove::librarian::crawl::Glob;
using trove::librarian::crawl::IgnoreRules;
using trove::librarian::crawl::NormalizeRelativePath;
using trove::librarian::crawl::ResolveInWorkspace;

void CheckNormalized(std::string_view path) {
  if (path == ".") return;
  TROVE_CHECK(!path.empty() && path.front() != '/' && path.back() != '/');
  TROVE_CHECK(path.find('\0') == std::string_view::npos);
  TROVE_CHECK(path.find('\\') == std::string_view::npos);
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, slash - start);
    TROVE_CHECK(!segment.empty() && segment != "." && segment != "..");
    start = slash + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t newline = input.find('\n');
  const std::string_view pattern = input.substr(0, newline);
  const std::string_view path =
      newline == std::string_view::npos ? input : input.substr(newline + 1);

  trove::Result<std::string> normalized = NormalizeRelativePath(path);
  if (normalized.ok()) CheckNormalized(*normalized);
  trove::Result<std::string> resolved = ResolveInWorkspace("/usr", path);
  if (resolved.ok()) {
    TROVE_CHECK(normalized.ok());
    TROVE_CHECK(*resolved == *normalized);
  }

  trove::Result<Glob> glob = Glob::Compile(pattern);
  if (glob.ok()) {
    (void)glob->Matches(path, false);
    (void)glob->Matches(path, true);
    if (normalized.ok()) (void)glob->Matches(*normalized, false);
  }
  (void)IgnoreRules::Parse(input, "fuzz/.gitignore", nullptr)
      .Evaluate(normalized.ok() ? std::string_view(*normalized) : path, false);

  // Escaping every byte gives a literal glob; it must match the same single segment.
  if (!path.empty() && path.size() <= 200 && path.find('/') == std::string_view::npos &&
      path.find('\0') == std::string_view::npos) {
    std::string literal;
    for (char c : path) {
      literal.push_back('\\');
      literal.push_back(c);
    }
    trove::Result<Glob> exact = Glob::Compile(literal);
    TROVE_CHECK(exact.ok());
    TROVE_CHECK(exact->Matches(path, false));
  }
  return 0;
}

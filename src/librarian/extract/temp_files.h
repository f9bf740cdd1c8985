// Internal: a private scratch directory (mkdtemp under $TMPDIR or /tmp), removed with its
// contents when the object dies, and a whole-file writer. For handing content to ctags.
// Thread safety: one thread uses a ScratchDir.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "base/status.h"

namespace trove::librarian::extract::internal {

class ScratchDir {
 public:
  static Result<ScratchDir> Create(std::string_view prefix);
  ScratchDir(ScratchDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir();
  const std::string& path() const { return path_; }

 private:
  explicit ScratchDir(std::string path) : path_(std::move(path)) {}
  std::string path_;  // empty once moved from
};

// Creates or truncates `path` and writes `data` (no fsync: scratch files only).
Status WriteWholeFile(const std::string& path, std::string_view data);

}  // namespace trove::librarian::extract::internal

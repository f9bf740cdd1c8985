// TempDir: a real temporary directory for tests that must touch the filesystem (the SQLite
// wrapper, PosixEnv, crash-consistency and crawl tests), made with mkdtemp and removed with
// everything in it when the object dies. Test-only; failures are reported through GoogleTest.
// Thread safety: one thread uses a TempDir.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace trove::base::testing {

class TempDir {
 public:
  // `prefix` names the directory (e.g. "trove_sqlite_test") so a leftover one can be traced.
  explicit TempDir(std::string_view prefix = "trove_test") {
    std::error_code ec;
    std::string base = std::filesystem::temp_directory_path(ec).string();
    if (ec || base.empty()) base = "/tmp";
    std::string pattern = base + "/" + std::string(prefix) + "_XXXXXX";
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed for " << pattern;
    // The canonical form, so tests can compare with paths the code under test resolves.
    char* real = realpath(pattern.c_str(), nullptr);
    path_ = real != nullptr ? std::string(real) : pattern;
    free(real);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    // Restore permissions a test removed, or remove_all cannot descend.
    for (auto it = std::filesystem::recursive_directory_iterator(
             path_, std::filesystem::directory_options::skip_permission_denied, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (!it->is_symlink()) chmod(it->path().c_str(), it->is_directory() ? 0700 : 0600);
    }
    ec.clear();
    std::filesystem::remove_all(path_, ec);
  }

  const std::string& path() const { return path_; }
  // Returns `path()/rel`.
  std::string Abs(std::string_view rel) const { return path_ + "/" + std::string(rel); }

 private:
  std::string path_;
};

}  // namespace trove::base::testing

// TempDir: a real temporary directory for the crawl tests (mkdtemp), removed with everything
// in it when the object dies. Test-only; failures are reported through GoogleTest.
// Thread safety: one thread uses a TempDir.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>

namespace trove::librarian::testing {

class TempDir {
 public:
  TempDir() {
    std::error_code ec;
    std::string base = std::filesystem::temp_directory_path(ec).string();
    if (ec || base.empty()) base = "/tmp";
    std::string pattern = base + "/trove_librarian_XXXXXX";
    char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed";
    // The canonical form, so tests can compare with what the crawler reports.
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
      if (!it->is_symlink()) {
        chmod(it->path().c_str(), it->is_directory() ? 0700 : 0600);
      }
    }
    ec.clear();
    std::filesystem::remove_all(path_, ec);
  }

  const std::string& path() const { return path_; }
  std::string Abs(std::string_view rel) const { return path_ + "/" + std::string(rel); }

  // Writes `content` to `rel`, creating parent directories.
  void Write(std::string_view rel, std::string_view content) const {
    std::filesystem::path file(Abs(rel));
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    ASSERT_FALSE(ec) << ec.message();
    FILE* f = fopen(file.c_str(), "wb");
    ASSERT_NE(f, nullptr) << rel;
    ASSERT_EQ(fwrite(content.data(), 1, content.size(), f), content.size());
    fclose(f);
  }
  void MkDir(std::string_view rel) const {
    std::error_code ec;
    std::filesystem::create_directories(Abs(rel), ec);
    ASSERT_FALSE(ec) << ec.message();
  }
  // Creates the symlink `rel` pointing at `target` (verbatim).
  void Symlink(std::string_view target, std::string_view rel) const {
    ASSERT_EQ(symlink(std::string(target).c_str(), Abs(rel).c_str()), 0) << rel;
  }

 private:
  std::string path_;
};

}  // namespace trove::librarian::testing

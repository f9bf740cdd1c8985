// TempDir for the crawl tests: base::testing::TempDir plus Write, MkDir and Symlink.
// Test-only; failures are reported through GoogleTest.
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

#include "base/testing/temp_dir.h"

namespace trove::librarian::testing {

// The base TempDir plus helpers that lay out a workspace.
class TempDir : public base::testing::TempDir {
 public:
  TempDir() : base::testing::TempDir("trove_librarian") {}

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
};

}  // namespace trove::librarian::testing

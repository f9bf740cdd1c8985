#include "librarian/extract/temp_files.h"

#include <errno.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <string.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

namespace trove::librarian::extract::internal {

Result<ScratchDir> ScratchDir::Create(std::string_view prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern =
      fmt::format("{}/{}_XXXXXX", tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", prefix);
  if (mkdtemp(pattern.data()) == nullptr) {
    return Status::Io(fmt::format("mkdtemp {}: {}", pattern, strerror(errno)));
  }
  return ScratchDir(std::move(pattern));
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Status WriteWholeFile(const std::string& path, std::string_view data) {
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) return Status::Io(fmt::format("open {}: {}", path, strerror(errno)));
  bool ok = fwrite(data.data(), 1, data.size(), f) == data.size();
  ok = (fclose(f) == 0) && ok;
  if (!ok) return Status::Io(fmt::format("write {}: {}", path, strerror(errno)));
  return Status::Ok();
}

}  // namespace trove::librarian::extract::internal

#include "base/memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace trove::base {
namespace {

constexpr std::size_t kHuge = std::size_t{2} << 20;

// Returns the VmFlags line of the /proc/self/smaps mapping holding `address`, or "".
std::string VmFlagsAt(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 &&
        line.find(' ') != std::string::npos && line.find('-') < line.find(' ')) {
      inside = at >= lo && at < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

class AdviseHugePagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // 8 MiB at a 2 MiB boundary + 4 KiB: whole huge pages lie strictly inside.
    region_ = ::mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(region_, MAP_FAILED);
  }
  void TearDown() override { ::munmap(region_, kSize); }
  static constexpr std::size_t kSize = std::size_t{12} << 20;
  void* region_ = nullptr;
};

TEST_F(AdviseHugePagesTest, RangeWithoutAWholeHugePageIsNotAdvised) {
  EXPECT_FALSE(AdviseHugePages(nullptr, std::size_t{8} << 20));
  EXPECT_FALSE(AdviseHugePages(region_, kHuge - 1));
  // Straddles one 2 MiB boundary but holds no whole huge page.
  const auto start = reinterpret_cast<std::uintptr_t>(region_);
  const std::uintptr_t boundary = (start + kHuge - 1) & ~(kHuge - 1);
  EXPECT_FALSE(AdviseHugePages(reinterpret_cast<void*>(boundary + kHuge / 2), kHuge));
}

TEST_F(AdviseHugePagesTest, AdvisesOnlyTheWholeHugePagesInside) {
  auto* bytes = static_cast<unsigned char*>(region_);
  const auto start = reinterpret_cast<std::uintptr_t>(region_);
  const std::uintptr_t first = (start + kHuge - 1) & ~(kHuge - 1);
  // Begin 4 KiB after a boundary: the partial huge page at the front is not advised.
  unsigned char* begin = bytes + (first - start) + 4096;
  const std::size_t length = std::size_t{6} << 20;
  if (!AdviseHugePages(begin, length)) GTEST_SKIP() << "kernel without transparent huge pages";
  const std::string inside = VmFlagsAt(reinterpret_cast<void*>(first + kHuge));
  const std::string before = VmFlagsAt(reinterpret_cast<void*>(first));
  EXPECT_NE(inside.find(" hg"), std::string::npos) << inside;
  EXPECT_EQ(before.find(" hg"), std::string::npos) << before;
  // Advice changes no contents.
  for (std::size_t i = 0; i < length; i += 4096) begin[i] = static_cast<unsigned char>(i >> 12);
  for (std::size_t i = 0; i < length; i += 4096) {
    ASSERT_EQ(begin[i], static_cast<unsigned char>(i >> 12));
  }
}

}  // namespace
}  // namespace trove::base

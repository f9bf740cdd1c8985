#include "kodo/source/pages.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace trove::kodo {
namespace {

TEST(PagesTest, BlockSizesArePowersOfTwoFrom64KiB) {
  EXPECT_EQ(PageBlockSize(1), std::size_t{64} << 10);
  EXPECT_EQ(PageBlockSize(std::size_t{64} << 10), std::size_t{64} << 10);
  EXPECT_EQ(PageBlockSize((std::size_t{64} << 10) + 1), std::size_t{128} << 10);
  EXPECT_EQ(PageBlockSize(std::size_t{5} << 20), std::size_t{8} << 20);
}

TEST(PagesTest, BlocksAreWritableAndFreedBlocksAreReused) {
  const std::size_t bytes = std::size_t{6} << 20;  // a huge-page block
  char* block = static_cast<char*>(AllocatePages(bytes));
  std::memset(block, 0x5a, bytes);
  EXPECT_EQ(block[bytes - 1], 0x5a);
  FreePages(block, bytes);
#if defined(__linux__)
  // The most recently freed block of that size comes back.
  void* again = AllocatePages(PageBlockSize(bytes));
  EXPECT_EQ(again, block);
  FreePages(again, bytes);
#endif
}

TEST(PagesTest, PageAllocatorServesSmallAndLargeVectors) {
  std::vector<int, PageAllocator<int>> small(10, 7);
  std::vector<int, PageAllocator<int>> large(std::size_t{1} << 20, 3);  // 4 MiB: paged
  large.push_back(4);  // grows into a new block, frees the old one
  EXPECT_EQ(small[9], 7);
  EXPECT_EQ(large[12345], 3);
  EXPECT_EQ(large.back(), 4);
}

}  // namespace
}  // namespace trove::kodo

#include "kodo/source/pages.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kodo/source/page_pool.h"

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

#if defined(__linux__)
TEST(PagesTest, PoolKeepsWhatTheProcessHadLiveAtOnce) {
  // 1.5 GiB of address space, never touched (no memory is used), past the 1 GiB floor.
  constexpr std::size_t kBlock = std::size_t{256} << 20;
  constexpr int kCount = 6;
  std::vector<void*> blocks;
  for (int i = 0; i < kCount; ++i) blocks.push_back(AllocatePages(kBlock));
  const PagePoolStats held = GetPagePoolStats();
  EXPECT_GE(held.live_bytes, kCount * kBlock);
  EXPECT_GE(held.peak_live_bytes, held.live_bytes);
  EXPECT_EQ(held.limit_bytes, std::min(held.peak_live_bytes, std::size_t{4} << 30));
  for (void* block : blocks) FreePages(block, kBlock);
  const PagePoolStats freed = GetPagePoolStats();
  EXPECT_EQ(freed.live_bytes, held.live_bytes - kCount * kBlock);
  // A fixed 1 GiB limit would have unmapped at least two of them.
  EXPECT_GT(freed.pooled_bytes - held.pooled_bytes, std::size_t{1} << 30);
  EXPECT_LE(freed.pooled_bytes, freed.limit_bytes);
  // They come back rather than fresh mappings.
  std::vector<void*> again;
  for (int i = 0; i < kCount - 1; ++i) again.push_back(AllocatePages(kBlock));
  for (void* block : again) {
    EXPECT_NE(std::find(blocks.begin(), blocks.end(), block), blocks.end());
    FreePages(block, kBlock);
  }
}
#endif

}  // namespace
}  // namespace trove::kodo

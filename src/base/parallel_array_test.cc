#include "base/parallel_array.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

namespace trove::base {
namespace {

// Counts constructions and destructions, and remembers which element each one is.
struct Counted {
  static inline std::atomic<int> alive{0};
  explicit Counted(std::size_t i) : index(i), text(std::string(40, 'a') + std::to_string(i)) {
    alive.fetch_add(1);
  }
  Counted(Counted&& other) noexcept : index(other.index), text(std::move(other.text)) {
    alive.fetch_add(1);
  }
  ~Counted() { alive.fetch_sub(1); }
  std::size_t index;
  std::string text;  // a heap allocation per element: leaks and double frees show under ASan
};

TEST(ParallelArrayTest, BuildsEachElementOnceInPlace) {
  for (std::size_t threads : {1u, 2u, 4u}) {
    for (std::size_t n : {0u, 1u, 7u, 1000u, 100000u}) {
      {
        auto a =
            ParallelArray<Counted>::Build(n, threads, 64, [](std::size_t i) { return Counted(i); });
        ASSERT_EQ(a.size(), n);
        EXPECT_EQ(a.empty(), n == 0);
        EXPECT_EQ(Counted::alive.load(), static_cast<int>(n));
        std::size_t i = 0;
        for (const Counted& c : a) {
          ASSERT_EQ(c.index, i) << threads << " threads, n " << n;
          ASSERT_EQ(c.text, std::string(40, 'a') + std::to_string(i));
          ++i;
        }
        EXPECT_EQ(i, n);
      }
      EXPECT_EQ(Counted::alive.load(), 0);
    }
  }
}

TEST(ParallelArrayTest, MovesOwnership) {
  auto a = ParallelArray<Counted>::Build(10, 2, 3, [](std::size_t i) { return Counted(i); });
  ParallelArray<Counted> b = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is defined
  ASSERT_EQ(b.size(), 10u);
  EXPECT_EQ(b[9].index, 9u);
  b = ParallelArray<Counted>::Build(3, 2, 1, [](std::size_t i) { return Counted(i + 100); });
  EXPECT_EQ(Counted::alive.load(), 3);
  EXPECT_EQ(b.span()[2].index, 102u);
  b = ParallelArray<Counted>();
  EXPECT_EQ(Counted::alive.load(), 0);
}

}  // namespace
}  // namespace trove::base

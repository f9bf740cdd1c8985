#include "kodo/ast/arena.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "kodo/ast/ast.h"
#include "kodo/parse/parser.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::ast {
namespace {

TEST(ArenaTest, WithoutAScopeNodesUseTheHeap) {
  ASSERT_EQ(CurrentArena(), nullptr);
  Vec<Expr> exprs(3);
  exprs[1].operands.resize(2);  // a heap vector inside a heap vector
  Box<Expr> boxed = MakeBox<Expr>();
  boxed->operands.resize(2);
  EXPECT_EQ(exprs[1].operands.size(), 2u);
  EXPECT_EQ(boxed->operands.size(), 2u);
}

TEST(ArenaTest, StoreCopiesTextIntoTheArena) {
  Arena arena;
  std::string text = "compute_total";
  const std::string_view stored = arena.Store(text);
  text.assign("overwritten!!");  // the copy does not depend on the original
  EXPECT_EQ(stored, "compute_total");
  EXPECT_NE(stored.data(), text.data());
  EXPECT_GE(arena.used_bytes(), stored.size());
  EXPECT_TRUE(arena.Store("").empty());
}

TEST(ArenaTest, ScopedAllocationsComeFromTheArenaAndScopesNest) {
  Arena outer;
  Arena inner;
  {
    ArenaScope a(&outer);
    EXPECT_EQ(CurrentArena(), &outer);
    {
      ArenaScope b(&inner);
      EXPECT_EQ(CurrentArena(), &inner);
      Vec<int> v(1000);
      EXPECT_GE(inner.used_bytes(), 4000u);
    }
    EXPECT_EQ(CurrentArena(), &outer);
    EXPECT_EQ(outer.used_bytes(), 0u);
  }
  EXPECT_EQ(CurrentArena(), nullptr);
}

TEST(ArenaTest, FreedBlocksAreReusedWhileTheArenaIsCurrent) {
  Arena arena;
  ArenaScope scope(&arena);
  const int* first;
  {
    Vec<int> v(10);
    first = v.data();
  }
  Vec<int> again(10);
  EXPECT_EQ(again.data(), first);
  Vec<int> other(11);  // another size class: fresh memory
  EXPECT_NE(other.data(), first);
}

TEST(ArenaTest, BlocksFreedOutsideTheirArenaAreLeftToIt) {
  Arena arena;
  std::unique_ptr<Vec<int>> v;
  {
    ArenaScope scope(&arena);
    v = std::make_unique<Vec<int>>(10);
  }
  const int* data = v->data();
  const std::size_t used = arena.used_bytes();
  v.reset();  // no arena is current: nothing is recycled or deleted
  ArenaScope scope(&arena);
  Vec<int> again(10);
  EXPECT_NE(again.data(), data);
  EXPECT_GT(arena.used_bytes(), used);
}

TEST(ArenaTest, LargeRequestsGetTheirOwnChunk) {
  Arena arena;
  ArenaScope scope(&arena);
  Vec<char> big(std::size_t{40} << 20);
  big.back() = 1;
  EXPECT_GE(arena.reserved_bytes(), std::size_t{40} << 20);
}

TEST(ArenaOwnerTest, AssigningKeepsTheOldArenaAliveUntilTheNewOwnerDies) {
  auto first = std::make_shared<Arena>();
  auto second = std::make_shared<Arena>();
  std::weak_ptr<Arena> first_alive = first;
  std::weak_ptr<Arena> second_alive = second;
  auto owner = std::make_unique<ArenaOwner>(std::move(first));
  {
    ArenaOwner incoming(std::move(second));
    *owner = std::move(incoming);
  }
  EXPECT_FALSE(first_alive.expired());  // the old tree may still be destroyed after assignment
  EXPECT_EQ(owner->get(), second_alive.lock().get());
  ArenaOwner empty;
  *owner = std::move(empty);  // nothing comes in: the owner keeps its arena
  EXPECT_FALSE(second_alive.expired());
  owner.reset();
  EXPECT_TRUE(first_alive.expired());
  EXPECT_TRUE(second_alive.expired());
}

TEST(ArenaOwnerTest, ParsedModulesOwnTheirArenaAndSurviveMoves) {
  auto source = SourceBuffer::Create(
      0, "m.ko", "module m { fn f(a: Int) -> Int { let s = f\"{a + 1}\"\n return a * 2 } }");
  ASSERT_TRUE(source.ok());
  auto parsed = parse::ParseModule(*source);
  ASSERT_TRUE(parsed.ok());
  ASSERT_TRUE(parsed->ok());
  EXPECT_NE(parsed->module->arena.get(), nullptr);
  EXPECT_EQ(CurrentArena(), nullptr);  // the parser's scope ended
  std::optional<Module> moved = std::move(parsed->module);
  parsed->module.reset();
  ASSERT_EQ(moved->functions.size(), 1u);
  EXPECT_EQ(moved->functions[0].body.stmts.size(), 2u);
  EXPECT_EQ(moved->functions[0].params[0].name, "a");
}

}  // namespace
}  // namespace trove::kodo::ast

#include "warden/agents/schedule.h"

#include <gtest/gtest.h>

namespace trove::warden::agents {
namespace {

FunctionFacts F(std::uint32_t index, std::vector<std::uint32_t> callees,
                std::size_t call_targets = 0) {
  FunctionFacts f;
  f.func_index = index;
  f.stable_id = "w1:" + std::to_string(index);
  f.defined_callees = std::move(callees);
  for (std::size_t i = 0; i < call_targets; ++i)
    f.call_targets.push_back("env.f" + std::to_string(i));
  return f;
}

std::vector<std::uint32_t> Indices(const std::vector<FunctionFacts>& fs,
                                   const std::vector<std::size_t>& order) {
  std::vector<std::uint32_t> out;
  for (std::size_t p : order) out.push_back(fs[p].func_index);
  return out;
}

TEST(ScheduleTest, ChainRunsCalleesFirst) {
  // 10 -> 11 -> 12
  std::vector<FunctionFacts> fs = {F(10, {11}), F(11, {12}), F(12, {})};
  EXPECT_EQ(CallGraphLayers(fs), (std::vector<std::size_t>{2, 1, 0}));
  EXPECT_EQ(Indices(fs, ScheduleOrder(fs)), (std::vector<std::uint32_t>{12, 11, 10}));
}

TEST(ScheduleTest, CycleIsOneLayer) {
  // 1 <-> 2 form a component calling leaf 4; 3 calls the component.
  std::vector<FunctionFacts> fs = {F(1, {2, 4}), F(2, {1}), F(3, {1}), F(4, {})};
  std::vector<std::size_t> layers = CallGraphLayers(fs);
  EXPECT_EQ(layers[0], layers[1]);
  EXPECT_EQ(layers[3], 0u);
  EXPECT_EQ(layers[0], 1u);
  EXPECT_EQ(layers[2], 2u);
  EXPECT_EQ(Indices(fs, ScheduleOrder(fs)), (std::vector<std::uint32_t>{4, 1, 2, 3}));
}

TEST(ScheduleTest, TiesByCallTargetsThenIndex) {
  // All leaves: one layer, ordered by number of call targets, then index.
  std::vector<FunctionFacts> fs = {F(5, {}, 2), F(3, {}, 1), F(9, {}, 0), F(4, {}, 1), F(1, {}, 2)};
  EXPECT_EQ(Indices(fs, ScheduleOrder(fs)), (std::vector<std::uint32_t>{9, 3, 4, 1, 5}));
}

TEST(ScheduleTest, LayerBeatsCallTargets) {
  // 7 has no call targets but calls 8, which has three: 8 still comes first.
  std::vector<FunctionFacts> fs = {F(7, {8}, 0), F(8, {}, 3)};
  EXPECT_EQ(Indices(fs, ScheduleOrder(fs)), (std::vector<std::uint32_t>{8, 7}));
}

TEST(ScheduleTest, LongestPathDecidesTheLayer) {
  // 1 calls 2 (a leaf) and 3 -> 4: 1 sits above 3, not just above 2.
  std::vector<FunctionFacts> fs = {F(1, {2, 3}), F(2, {}), F(3, {4}), F(4, {})};
  std::vector<std::size_t> layers = CallGraphLayers(fs);
  EXPECT_EQ(layers, (std::vector<std::size_t>{2, 0, 1, 0}));
}

TEST(ScheduleTest, SelfCallsAndUnknownCalleesAreIgnored) {
  std::vector<FunctionFacts> fs = {F(1, {1, 99}), F(2, {1})};
  EXPECT_EQ(CallGraphLayers(fs), (std::vector<std::size_t>{0, 1}));
}

TEST(ScheduleTest, EveryFunctionOnceAndCalleesNeverAfterCallersOutsideCycles) {
  // A graph with a big cycle and branches; every edge u -> v with v not in u's component must
  // put v first.
  std::vector<FunctionFacts> fs;
  for (std::uint32_t i = 0; i < 60; ++i) {
    std::vector<std::uint32_t> callees;
    if (i % 3 == 0 && i + 1 < 60) callees.push_back(i + 1);
    if (i % 5 == 0 && i >= 10) callees.push_back(i - 10);
    if (i >= 20 && i < 25) callees.push_back(i == 24 ? 20 : i + 1);  // cycle 20..24
    fs.push_back(F(i, callees, i % 4));
  }
  std::vector<std::size_t> order = ScheduleOrder(fs);
  ASSERT_EQ(order.size(), fs.size());
  std::vector<std::size_t> rank(fs.size());
  for (std::size_t r = 0; r < order.size(); ++r) rank[order[r]] = r;
  std::vector<std::size_t> layers = CallGraphLayers(fs);
  for (std::size_t u = 0; u < fs.size(); ++u) {
    for (std::uint32_t v : fs[u].defined_callees) {
      if (v == u) continue;
      EXPECT_LE(layers[v], layers[u]) << u << " -> " << v;
      if (layers[v] != layers[u]) {
        EXPECT_LT(rank[v], rank[u]) << u << " -> " << v;
      }
    }
  }
  for (std::uint32_t i = 20; i < 25; ++i) EXPECT_EQ(layers[i], layers[20]);
}

TEST(ScheduleTest, DeepChainNeedsNoRecursion) {
  constexpr std::uint32_t kDepth = 200'000;
  std::vector<FunctionFacts> fs(kDepth);
  for (std::uint32_t i = 0; i < kDepth; ++i) {
    fs[i].func_index = i;
    if (i + 1 < kDepth) fs[i].defined_callees = {i + 1};
  }
  std::vector<std::size_t> order = ScheduleOrder(fs);
  ASSERT_EQ(order.size(), kDepth);
  EXPECT_EQ(order.front(), kDepth - 1);
  EXPECT_EQ(order.back(), 0u);
}

}  // namespace
}  // namespace trove::warden::agents

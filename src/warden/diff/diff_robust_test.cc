// The toolchain-robust candidates of the fuzzy pass (docs/decisions/0088): functions whose
// MinHash shares no LSH band with their old self are paired when signature, call-outs, paired
// callees, strings and instruction mix agree and each is the other's clear best; ambiguous or
// disagreeing candidates stay unpaired. Pure: hand-made records, no KB.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "warden/diff/diff.h"

namespace trove::warden::diff {
namespace {

// A defined function whose MinHash values all derive from `seed` (two different seeds share no
// value, hence no LSH band) and whose structural and exact hashes are distinct per seed.
kb::FunctionRecord Fn(std::uint32_t index, std::uint64_t seed, std::uint32_t instructions,
                      std::array<std::uint32_t, kb::kHistogramClasses> histogram) {
  kb::FunctionRecord r;
  r.func_index = index;
  r.type_signature = "(i32) -> i32";
  r.stable_id = "sid-" + std::to_string(seed);
  r.norm_hash = fmt::format("{:032x}", seed);
  r.exact_hash = fmt::format("{:064x}", seed);
  r.structural_hash = r.norm_hash;
  for (std::size_t i = 0; i < r.minhash.size(); ++i) r.minhash[i] = seed * 1000 + i;
  r.histogram = histogram;
  r.instruction_count = instructions;
  r.opcodes = std::string(instructions, static_cast<char>(seed));
  r.call_outs = {"env.log"};  // the anchor the rule requires (see NeedsAnAnchor)
  return r;
}

VersionSide SideOf(std::int64_t id, std::vector<kb::FunctionRecord> functions) {
  VersionSide s;
  s.id = id;
  s.label = "v" + std::to_string(id);
  s.functions = std::move(functions);
  return s;
}

// Histograms: A and B far apart (cosine well below the margin), A2 close to A.
constexpr std::array<std::uint32_t, kb::kHistogramClasses> kA = {40, 10, 5, 0, 3, 0, 0, 2};
constexpr std::array<std::uint32_t, kb::kHistogramClasses> kA2 = {42, 10, 6, 0, 3, 0, 0, 1};
constexpr std::array<std::uint32_t, kb::kHistogramClasses> kB = {2, 3, 40, 30, 0, 9, 1, 0};

std::optional<Pass> PassOf(const DiffReport& r, std::uint32_t from, std::uint32_t to) {
  for (const Change& c : r.changes) {
    if (c.from_index && c.to_index && *c.from_index == from && *c.to_index == to) return c.pass;
  }
  return std::nullopt;
}

std::int64_t Paired(const DiffReport& r) {
  std::int64_t n = 0;
  for (std::int64_t p : r.pass_pairs) n += p;
  return n;
}

TEST(DiffRobust, PairsClearMutualBestWithoutSharedBand) {
  const VersionSide from = SideOf(1, {Fn(0, 1, 60, kA), Fn(1, 2, 80, kB)});
  const VersionSide to = SideOf(2, {Fn(0, 11, 70, kA2), Fn(1, 12, 90, kB)});
  const DiffReport with = ComputeDiff(from, to);
  EXPECT_EQ(PassOf(with, 0, 0), Pass::kFuzzy);
  EXPECT_EQ(PassOf(with, 1, 1), Pass::kFuzzy);
  DiffOptions off;
  off.robust_candidates = false;
  EXPECT_EQ(Paired(ComputeDiff(from, to, off)), 0);
}

TEST(DiffRobust, RefusesWithoutMargin) {
  // Two old functions with the same instruction mix: the new one's best is not clear.
  const VersionSide from = SideOf(1, {Fn(0, 1, 60, kA), Fn(1, 2, 60, kA)});
  const VersionSide to = SideOf(2, {Fn(0, 11, 60, kA2)});
  EXPECT_EQ(Paired(ComputeDiff(from, to)), 0);
}

TEST(DiffRobust, RefusesDisagreeingCallOutsStringsOrSize) {
  kb::FunctionRecord a = Fn(0, 1, 60, kA);
  kb::FunctionRecord b = Fn(0, 11, 60, kA2);
  a.referenced_strings = {"alpha", "beta"};
  b.referenced_strings = {"gamma"};
  EXPECT_EQ(Paired(ComputeDiff(SideOf(1, {a}), SideOf(2, {b}))), 0) << "strings";
  b.referenced_strings = a.referenced_strings;
  EXPECT_EQ(Paired(ComputeDiff(SideOf(1, {a}), SideOf(2, {b}))), 1) << "agreeing";
  kb::FunctionRecord c = b;
  c.call_outs = {"env.other"};
  EXPECT_EQ(Paired(ComputeDiff(SideOf(1, {a}), SideOf(2, {c}))), 0) << "call-outs";
  kb::FunctionRecord small_a = Fn(0, 1, 12, kA);
  kb::FunctionRecord small_b = Fn(0, 11, 12, kA2);
  EXPECT_EQ(Paired(ComputeDiff(SideOf(1, {small_a}), SideOf(2, {small_b}))), 0) << "size";
  kb::FunctionRecord other = Fn(0, 11, 60, kB);
  EXPECT_EQ(Paired(ComputeDiff(SideOf(1, {Fn(0, 1, 60, kA)}), SideOf(2, {other}))), 0)
      << "histogram";
}

TEST(DiffRobust, NeedsAnAnchor) {
  // Same mix and size, but no import, paired callee or string in common: two unrelated
  // functions of one compiler look like this (a deleted and an added function).
  kb::FunctionRecord a = Fn(0, 1, 60, kA);
  kb::FunctionRecord b = Fn(0, 11, 60, kA2);
  a.call_outs.clear();
  b.call_outs.clear();
  EXPECT_EQ(Paired(ComputeDiff(SideOf(1, {a}), SideOf(2, {b}))), 0);
  a.referenced_strings = {"same"};
  b.referenced_strings = {"same"};
  EXPECT_EQ(Paired(ComputeDiff(SideOf(1, {a}), SideOf(2, {b}))), 1);
}

TEST(DiffRobust, PairsThroughASharedPairedCallee) {
  // Both call a function paired by the exact pass; nothing else is shared.
  kb::FunctionRecord callee_a = Fn(0, 50, 30, kB);
  kb::FunctionRecord callee_b = callee_a;
  kb::FunctionRecord a = Fn(1, 1, 60, kA);
  kb::FunctionRecord b = Fn(1, 11, 60, kA2);
  a.call_outs.clear();
  b.call_outs.clear();
  a.defined_callees = {0};
  b.defined_callees = {0};
  const DiffReport r = ComputeDiff(SideOf(1, {callee_a, a}), SideOf(2, {callee_b, b}));
  EXPECT_EQ(PassOf(r, 0, 0), Pass::kExact);
  EXPECT_EQ(PassOf(r, 1, 1), Pass::kFuzzy);
}

}  // namespace
}  // namespace trove::warden::diff

#include "librarian/confidence/confidence.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace trove::librarian::confidence {
namespace {

Confidence Det(bool holds) { return Confidence::Deterministic(holds, holds ? "holds" : "fails"); }
Confidence Der(double v) { return Confidence::Derived(v, "test", {}); }

TEST(Confidence, EffectiveValueIsConservative) {
  EXPECT_EQ(EffectiveValue(Confidence::Absent()), 0);
  EXPECT_EQ(EffectiveValue(Confidence::Bounded(0.3, 0.9, BoundedBasis::kLiterature, "x")), 0.3);
  EXPECT_EQ(EffectiveValue(Det(true)), 1);
  EXPECT_EQ(EffectiveValue(Der(0.4)), 0.4);
  // Bounded orders and clamps its ends.
  Confidence b = Confidence::Bounded(1.5, 0.2, BoundedBasis::kTheoretical, "");
  EXPECT_EQ(b.low, 0.2);
  EXPECT_EQ(b.high, 1.0);
}

TEST(Confidence, AndIsMinimumAndAbsentWins) {
  std::vector<Confidence> in = {Der(0.7), Der(0.4), Det(true)};
  Confidence a = And(in);
  EXPECT_EQ(a.kind, Kind::kDerived);
  EXPECT_DOUBLE_EQ(a.value, 0.4);
  EXPECT_EQ(a.formula, "and");
  EXPECT_EQ(a.inputs.size(), 3u);

  in.push_back(Confidence::Absent(AbsentReason::kNotApplicable));
  Confidence b = And(in);
  EXPECT_TRUE(b.absent());
  EXPECT_EQ(b.absent_reason, AbsentReason::kNotApplicable);
  EXPECT_TRUE(And(std::span<const Confidence>()).absent());
}

TEST(Confidence, DeterministicConjunctionStaysDeterministic) {
  std::vector<Confidence> both = {Det(true), Det(true)};
  EXPECT_EQ(And(both).kind, Kind::kDeterministic);
  EXPECT_EQ(And(both).value, 1);
  std::vector<Confidence> one = {Det(true), Det(false)};
  EXPECT_EQ(And(one).value, 0);
  EXPECT_EQ(Or(one).kind, Kind::kDeterministic);
  EXPECT_EQ(Or(one).value, 1);
}

TEST(Confidence, OrIsMaximumIgnoringAbsent) {
  std::vector<Confidence> in = {Confidence::Absent(), Der(0.2), Der(0.6)};
  Confidence o = Or(in);
  EXPECT_EQ(o.kind, Kind::kDerived);
  EXPECT_DOUBLE_EQ(o.value, 0.6);
  EXPECT_EQ(o.inputs.size(), 2u);  // the absent input is ignored
  std::vector<Confidence> none = {Confidence::Absent(AbsentReason::kInsufficientData),
                                  Confidence::Absent()};
  EXPECT_TRUE(Or(none).absent());
  EXPECT_EQ(Or(none).absent_reason, AbsentReason::kInsufficientData);
  // A bounded input counts by its low end.
  std::vector<Confidence> b = {Confidence::Bounded(0.5, 0.95, BoundedBasis::kFormalAnalysis, ""),
                               Der(0.3)};
  EXPECT_DOUBLE_EQ(Or(b).value, 0.5);
}

TEST(Confidence, WeightedMeanOfPresentInputs) {
  std::vector<std::pair<Confidence, double>> in = {
      {Der(1.0), 3}, {Der(0.0), 1}, {Confidence::Absent(), 100}, {Der(0.5), 0}};
  Confidence w = Weighted(in);
  EXPECT_EQ(w.kind, Kind::kDerived);
  EXPECT_DOUBLE_EQ(w.value, 0.75);
  EXPECT_EQ(w.inputs.size(), 2u);
  EXPECT_EQ(w.formula, "weighted(3,1)");
  std::vector<std::pair<Confidence, double>> absent = {{Confidence::Absent(), 1}};
  EXPECT_TRUE(Weighted(absent).absent());
  EXPECT_EQ(Weighted(absent).absent_reason, AbsentReason::kInsufficientData);
  EXPECT_TRUE(Weighted(std::span<const std::pair<Confidence, double>>()).absent());
}

TEST(Confidence, DecayHalvesPerHalfLife) {
  Confidence d = Decay(Der(0.8), 200, 100);
  EXPECT_EQ(d.kind, Kind::kDerived);
  EXPECT_NEAR(d.value, 0.2, 1e-12);
  ASSERT_EQ(d.inputs.size(), 1u);
  EXPECT_DOUBLE_EQ(d.inputs[0].value, 0.8);
  EXPECT_TRUE(Decay(Confidence::Absent(), 100, 10).absent());
  EXPECT_EQ(Decay(Det(true), 0, 10).kind, Kind::kDeterministic);  // no age: unchanged
  EXPECT_EQ(Decay(Det(true), 10, 0).kind, Kind::kDeterministic);  // no half-life: unchanged
}

TEST(Confidence, DerivedNestingIsBounded) {
  Confidence c = Der(0.9);
  for (int i = 0; i < 100; ++i) c = Decay(c, 1, 1000);
  int depth = 0;
  for (const Confidence* p = &c; !p->inputs.empty(); p = &p->inputs[0]) ++depth;
  EXPECT_LE(depth, kMaxDerivedDepth);
  EXPECT_GT(c.value, 0.8);  // the value is kept even where the inputs are cut
}

TEST(Confidence, JsonCarriesEachTypesFields) {
  nlohmann::json m = ToJson(Confidence::Measured(0.8, "eval-1", 50, 0.78, 0.7, 0.86, "t"));
  EXPECT_EQ(m["type"], "measured");
  EXPECT_EQ(m["sampleSize"], 50);
  EXPECT_EQ(m["confidenceInterval"][1], 0.86);
  nlohmann::json a = ToJson(Confidence::Absent(AbsentReason::kNotApplicable));
  EXPECT_EQ(a["type"], "absent");
  EXPECT_EQ(a["reason"], "not_applicable");
  EXPECT_FALSE(a.contains("value"));
  std::vector<Confidence> in = {Der(0.5), Der(0.6)};
  nlohmann::json d = ToJson(And(in));
  EXPECT_EQ(d["inputs"].size(), 2u);
  EXPECT_EQ(ToJson(Confidence::Bounded(0.1, 0.2, BoundedBasis::kFormalAnalysis, "c"))["basis"],
            "formal_analysis");
}

Defeater D(Severity s, bool active, DefeaterClass c = DefeaterClass::kUndermining) {
  return Defeater{"code_change", active, s, c, "r"};
}

TEST(Defeaters, AdjustmentsSumAndFloor) {
  std::vector<Defeater> ds = {D(Severity::kPartial, true), D(Severity::kWarning, true),
                              D(Severity::kFull, false)};
  EXPECT_DOUBLE_EQ(SummedAdjustment(ds), -0.25);
  EXPECT_TRUE(KnowledgeValid(ds));
  EXPECT_DOUBLE_EQ(AdjustSignal(0.9, ds), 0.65);
  std::vector<Defeater> heavy = {D(Severity::kFull, true), D(Severity::kFull, true),
                                 D(Severity::kPartial, true)};
  EXPECT_DOUBLE_EQ(SummedAdjustment(heavy), kAdjustmentFloor);
  EXPECT_FALSE(KnowledgeValid(heavy));
  EXPECT_DOUBLE_EQ(AdjustSignal(0.9, heavy), 0.9 + kAdjustmentFloor);
  EXPECT_EQ(AdjustSignal(0.3, heavy), 0);  // clamped
}

TEST(Defeaters, NamesRoundTrip) {
  for (Severity s : {Severity::kFull, Severity::kPartial, Severity::kWarning}) {
    EXPECT_EQ(ParseSeverity(SeverityName(s)), s);
  }
  for (DefeaterClass c :
       {DefeaterClass::kRebutting, DefeaterClass::kUndercutting, DefeaterClass::kUndermining}) {
    EXPECT_EQ(ParseDefeaterClass(DefeaterClassName(c)), c);
  }
  EXPECT_FALSE(ParseSeverity("fatal"));
  EXPECT_FALSE(ParseDefeaterClass("undermine"));
}

TEST(Defeaters, ApplyToTypedConfidence) {
  const Confidence base = Det(true);
  EXPECT_EQ(ApplyDefeaters(base, {}).kind, Kind::kDeterministic);
  std::vector<Defeater> cut = {D(Severity::kFull, true, DefeaterClass::kUndercutting)};
  Confidence c = ApplyDefeaters(base, cut);
  EXPECT_EQ(c.kind, Kind::kDeterministic);
  EXPECT_EQ(c.value, 0);
  EXPECT_NE(c.reason.find("undercutting"), std::string::npos);
  std::vector<Defeater> weak = {D(Severity::kWarning, true), D(Severity::kPartial, false)};
  Confidence w = ApplyDefeaters(base, weak);
  EXPECT_EQ(w.kind, Kind::kDerived);
  EXPECT_DOUBLE_EQ(w.value, 0.95);
  EXPECT_EQ(w.formula, "defeated(code_change)");
  EXPECT_TRUE(ApplyDefeaters(Confidence::Absent(), cut).absent());
}

}  // namespace
}  // namespace trove::librarian::confidence

// RankSignals: neutral defaults, Merge rules, the one evaluation function.
#include "librarian/rank/rank.h"

#include <gtest/gtest.h>

namespace trove::librarian::rank {
namespace {

TEST(RankSignalsTest, DefaultIsNeutralAndScoresZero) {
  RankSignals s;
  EXPECT_EQ(s.Relevance(), 0);
  EXPECT_EQ(s.Evaluate(), 0);
  EXPECT_EQ(s.Scope(), 0);
  // Merging a neutral source changes nothing.
  RankSignals t;
  t.lexical = 0.4;
  t.symbol = 1;
  const double before = t.Evaluate();
  t.Merge(RankSignals{});
  EXPECT_DOUBLE_EQ(t.Evaluate(), before);
}

TEST(RankSignalsTest, MergeTakesMaxOfEvidenceAndMinOfHops) {
  RankSignals a;
  a.lexical = 0.3;
  a.graph_hops = 2;
  RankSignals b;
  b.lexical = 0.8;
  b.symbol = 0.6;
  b.graph_hops = 1;
  b.pack_type_weight = 1.2;
  b.base_signal = 0.9;
  a.Merge(b);
  EXPECT_DOUBLE_EQ(a.lexical, 0.8);
  EXPECT_DOUBLE_EQ(a.symbol, 0.6);
  EXPECT_EQ(a.graph_hops, 1);
  EXPECT_DOUBLE_EQ(a.pack_type_weight, 1.2);
  EXPECT_DOUBLE_EQ(a.base_signal, 0.9);
  EXPECT_DOUBLE_EQ(a.Scope(), 0.5);
}

TEST(RankSignalsTest, EvaluateFollowsTheSpecFormula) {
  RankSignals s;
  s.lexical = 1;
  s.symbol = 1;
  s.path = 0.5;
  s.graph = 0.25;
  s.graph_hops = 0;
  s.pack_type_weight = 1.2;
  s.base_signal = 0.9;
  // The spec's starting coefficients, given explicitly.
  const Weights spec{0.55, 0.15, 0.10, 0.10, 0.10};
  const double rel = 0.55 + 0.15 + 0.10 * 0.5 + 0.10 * 0.25 + 0.10 * 1;
  EXPECT_DOUBLE_EQ(s.Relevance(spec), rel);
  EXPECT_DOUBLE_EQ(s.Evaluate(spec), rel * 1.2 * (0.5 + 0.5 * 0.9));
  // The defaults tuned on the dev split (decision 0023).
  const double tuned = 0.55 + 0.20 + 0.20 * 0.5 + 0 * 0.25 + 0.10 * 1;
  EXPECT_DOUBLE_EQ(s.Relevance(), tuned);
  // Custom weights (eval/ tuning) go through the same function.
  Weights w;
  w.lexical = 0;
  w.symbol = 1;
  w.path = 0;
  w.graph = 0;
  w.scope = 0;
  EXPECT_DOUBLE_EQ(s.Relevance(w), 1);
  // Inherited relevance (graph expansion) is a floor.
  RankSignals n;
  n.inherited = 0.3;
  EXPECT_DOUBLE_EQ(n.Relevance(), 0.3);
  EXPECT_NE(s.Debug().find("sym=1"), std::string::npos);
}

TEST(RankSignalsTest, DefinitionMatchOutranksABodyMention) {
  // The named function: 80 % of the best BM25 and an exact symbol match.
  RankSignals definition;
  definition.lexical = 0.8;
  definition.symbol = 1;
  // A caller: the best BM25 (it mentions the name many times) but no symbol match.
  RankSignals mention;
  mention.lexical = 1;
  EXPECT_GT(definition.Evaluate(), mention.Evaluate());
}

}  // namespace
}  // namespace trove::librarian::rank

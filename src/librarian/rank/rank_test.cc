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
  // (The later fields, the name-word, file, identifier and coverage weights, default to their
  // tuned values: 0 here.)
  const Weights spec{0.55, 0.15, 0.10, 0.10, 0.10, 0, 0, 0, 0, 0, 0};
  const double rel = 0.55 + 0.15 + 0.10 * 0.5 + 0.10 * 0.25 + 0.10 * 1;
  EXPECT_DOUBLE_EQ(s.Relevance(spec), rel);
  EXPECT_DOUBLE_EQ(s.Evaluate(spec), rel * 1.2 * (0.5 + 0.5 * 0.9));
  // The defaults tuned on the dev split (decisions 0023, 0027): sym and graph weigh 0.
  s.name_words = 1;
  s.intent_words = 0.5;
  s.owner_words = 0.25;
  s.file = 0.8;
  const double tuned = 0.40 * 1 + 0 * 1 + 0.40 * 1 + 0.60 * 0.5 + 0.30 * 0.25 + 1.0 * 0.8 +
                       0.20 * 0.5 + 0 * 0.25 + 0.10 * 1;
  EXPECT_DOUBLE_EQ(s.Relevance(), tuned);
  EXPECT_DOUBLE_EQ(s.Relevance(spec), rel);  // the new signals weigh 0 in the spec's formula
  // Body coverage (decision 0036) adds 0.5 x its share at the default weights.
  s.coverage = 0.6;
  EXPECT_DOUBLE_EQ(s.Relevance(), tuned + 0.5 * 0.6);
  EXPECT_DOUBLE_EQ(s.Relevance(spec), rel);
  EXPECT_NE(s.Debug().find("file=0.8 cover=0.6 assoc=0 path=0.5"), std::string::npos);
  s.coverage = 0;
  // Custom weights (eval/ tuning) go through the same function.
  Weights w;
  w.lexical = 0;
  w.symbol = 1;
  w.path = 0;
  w.graph = 0;
  w.scope = 0;
  w.name_words = 0;
  w.intent_words = 0;
  w.owner_words = 0;
  w.file = 0;
  w.identifier = 0;
  EXPECT_DOUBLE_EQ(s.Relevance(w), 1);
  // Inherited relevance (graph expansion) is a floor.
  RankSignals n;
  n.inherited = 0.3;
  EXPECT_DOUBLE_EQ(n.Relevance(), 0.3);
  EXPECT_NE(s.Debug().find("sym=1"), std::string::npos);
  EXPECT_NE(s.Debug().find("namew=1 intentw=0.5 ownerw=0.25 file=0.8"), std::string::npos);
  // A typed identifier adds 2.0 at the default weights.
  RankSignals named = s;
  named.identifier = 1;
  EXPECT_DOUBLE_EQ(named.Relevance() - s.Relevance(), 2.0);
  EXPECT_NE(named.Debug().find("ident=1"), std::string::npos);
}

TEST(RankSignalsTest, MergeTakesMaxOfNameWordsAndFile) {
  RankSignals a;
  a.name_words = 0.5;
  a.file = 0.9;
  RankSignals b;
  b.name_words = 1;
  b.intent_words = 0.4;
  b.owner_words = 0.2;
  b.file = 0.3;
  a.coverage = 0.25;
  b.coverage = 0.75;
  a.Merge(b);
  EXPECT_DOUBLE_EQ(a.coverage, 0.75);
  EXPECT_DOUBLE_EQ(a.name_words, 1);
  EXPECT_DOUBLE_EQ(a.intent_words, 0.4);
  EXPECT_DOUBLE_EQ(a.owner_words, 0.2);
  EXPECT_DOUBLE_EQ(a.file, 0.9);
}

TEST(RankSignalsTest, FilePriorBreaksEqualFunctionEvidence) {
  // Two functions with the same lexical and name evidence; the first's file matches the
  // intent as a whole (its best chunk is the best candidate's), the second's barely.
  RankSignals in_matching_file;
  in_matching_file.lexical = 0.6;
  in_matching_file.name_words = 0.5;
  in_matching_file.file = 1;
  RankSignals elsewhere = in_matching_file;
  elsewhere.file = 0.2;
  EXPECT_GT(in_matching_file.Evaluate(), elsewhere.Evaluate());
  // 0.4 x 0.6 + 0.4 x 0.5 + 1.0 x 1 against 1.0 x 0.2 for the file term: 0.8 apart.
  EXPECT_DOUBLE_EQ(in_matching_file.Relevance() - elsewhere.Relevance(), 0.8);
}

TEST(RankSignalsTest, DefinitionMatchOutranksABodyMention) {
  // The named function: 80 % of the best BM25 and an exact name match (every name word in
  // the intent, every intent word in the name).
  RankSignals definition;
  definition.lexical = 0.8;
  definition.symbol = 1;
  definition.name_words = 1;
  definition.intent_words = 1;
  // A caller: the best BM25 (it mentions the name many times) but no symbol match.
  RankSignals mention;
  mention.lexical = 1;
  EXPECT_GT(definition.Evaluate(), mention.Evaluate());
}

TEST(RankSignalsTest, NameConfidenceLowersOnlyTheFunctionsOwnNameWords) {
  const Weights w;
  // Confident (the best candidate is named and lexically strong): the weights are unchanged.
  for (double confident : {w.name_confidence_high, 1.0}) {
    const Weights same = ForNameConfidence(w, confident);
    EXPECT_DOUBLE_EQ(same.name_words, w.name_words);
    EXPECT_DOUBLE_EQ(same.intent_words, w.intent_words);
    EXPECT_DOUBLE_EQ(same.lexical, w.lexical);
  }
  // No confidence: the function's own name words scaled by the damping, lexical raised by the
  // shift; the owner's name words, coverage and the file prior keep their weights.
  for (double unsure : {0.0, w.name_confidence_low}) {
    const Weights low = ForNameConfidence(w, unsure);
    EXPECT_DOUBLE_EQ(low.name_words, w.name_words * w.name_damping);
    EXPECT_DOUBLE_EQ(low.intent_words, w.intent_words * w.name_damping);
    EXPECT_DOUBLE_EQ(low.lexical, w.lexical + w.lexical_shift);
    EXPECT_DOUBLE_EQ(low.owner_words, w.owner_words);
    EXPECT_DOUBLE_EQ(low.coverage, w.coverage);
    EXPECT_DOUBLE_EQ(low.file, w.file);
  }
  // Linear in between.
  const double mid = (w.name_confidence_low + w.name_confidence_high) / 2;
  const Weights half = ForNameConfidence(w, mid);
  EXPECT_DOUBLE_EQ(half.name_words, w.name_words * (1 + w.name_damping) / 2);
  EXPECT_DOUBLE_EQ(half.lexical, w.lexical + w.lexical_shift / 2);
  // Damping 1 and shift 0 turn it off; an empty range is a step at `high`.
  Weights off = w;
  off.name_damping = 1;
  off.lexical_shift = 0;
  EXPECT_DOUBLE_EQ(ForNameConfidence(off, 0).name_words, w.name_words);
  EXPECT_DOUBLE_EQ(ForNameConfidence(off, 0).lexical, w.lexical);
  Weights step = w;
  step.name_confidence_low = step.name_confidence_high = 0.5;
  EXPECT_DOUBLE_EQ(ForNameConfidence(step, 0.49).name_words, w.name_words * w.name_damping);
  EXPECT_DOUBLE_EQ(ForNameConfidence(step, 0.5).name_words, w.name_words);
}

TEST(RankSignalsTest, WithoutNameConfidenceBodyEvidenceOutranksASharedNameWord) {
  // A function whose name shares one of the intent's words (half its name, a fifth of the
  // intent) but whose code matches little of it, against one whose name shares none but whose
  // code matches the intent best (lexical 1, most of the intent's words in its body).
  RankSignals shared_name;
  shared_name.lexical = 0.55;
  shared_name.name_words = 0.5;
  shared_name.intent_words = 0.2;
  shared_name.coverage = 0.4;
  shared_name.file = 0.7;
  RankSignals body;
  body.lexical = 1;
  body.coverage = 0.6;
  body.file = 0.7;
  // When the query's best-named candidate is confidently named, the name match wins (the
  // standard case, where names carry the engine's lead over plain BM25) ...
  const Weights w;
  EXPECT_GT(shared_name.Evaluate(ForNameConfidence(w, 1)), body.Evaluate(ForNameConfidence(w, 1)));
  // ... and when no candidate is (the best name_words x lexical is the shared name's own
  // 0.275), the body's evidence wins.
  const double confidence = shared_name.name_words * shared_name.lexical;
  const Weights unsure = ForNameConfidence(w, confidence);
  EXPECT_GT(body.Evaluate(unsure), shared_name.Evaluate(unsure));
}

}  // namespace
}  // namespace trove::librarian::rank

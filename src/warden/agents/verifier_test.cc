#include "warden/agents/verifier.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace trove::warden::agents {
namespace {

FunctionFacts Facts() {
  FunctionFacts f;
  f.func_index = 12;
  f.stable_id = "w1:00112233445566778899aabbccddeeff";
  f.type_signature = "(i32, i32) -> i32";
  f.referenced_strings = {"out of memory", "sqlite3_open: %s"};
  return f;
}

Proposal Good() {
  return Proposal{.name = "sqlite3_open_v2",
                  .summary = "Opens a database; reports \"sqlite3_open\" failures.",
                  .confidence = 0.7,
                  .cited_strings = {"sqlite3_open: %s"}};
}

TEST(IsIdentifierTest, Table) {
  struct Case {
    const char* name;
    bool ok;
  };
  const Case cases[] = {
      {"a", true},       {"_", true},      {"abc_123", true}, {"std::sort", true},
      {"a::b::c", true}, {"A_b9", true},   {"", false},       {"9abc", false},
      {"a-b", false},    {"a::", false},   {"::a", false},    {"a:::b", false},
      {"a:b", false},    {"a::9b", false}, {"a b", false},    {"caf\xc3\xa9", false},
  };
  for (const Case& c : cases) EXPECT_EQ(IsIdentifier(c.name), c.ok) << c.name;
}

TEST(VerifyProposalTest, AcceptsAGroundedProposal) {
  Verdict v = VerifyProposal(Facts(), Good());
  EXPECT_TRUE(v.ok) << v.Reason();
  EXPECT_TRUE(v.messages.empty());
}

TEST(VerifyProposalTest, NameRules) {
  struct Case {
    std::string name;
    bool ok;
  };
  const Case cases[] = {
      {"ab", true},
      {"a", false},                    // shorter than 2
      {std::string(128, 'a'), true},   // exactly the limit
      {std::string(129, 'a'), false},  // over it
      {"bad name", false},
      {"ns::fn", true},
      {"1st", false},
  };
  for (const Case& c : cases) {
    Proposal p = Good();
    p.name = c.name;
    EXPECT_EQ(VerifyProposal(Facts(), p).ok, c.ok) << c.name;
  }
}

TEST(VerifyProposalTest, ConfidenceRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const std::pair<double, bool> cases[] = {{0.0, true},    {1.0, true},   {0.5, true},
                                           {-0.01, false}, {1.01, false}, {nan, false},
                                           {inf, false},   {-inf, false}};
  for (auto [confidence, ok] : cases) {
    Proposal p = Good();
    p.confidence = confidence;
    Verdict v = VerifyProposal(Facts(), p);
    EXPECT_EQ(v.ok, ok) << confidence;
    EXPECT_EQ(CheckProposedSymbol("fine_name", confidence).ok, ok) << confidence;
  }
}

TEST(VerifyProposalTest, CitedStringsMustBeReferenced) {
  Proposal p = Good();
  p.cited_strings = {"out of memory"};
  EXPECT_TRUE(VerifyProposal(Facts(), p).ok);
  p.cited_strings = {"out of mem"};  // a substring is not a citation
  Verdict v = VerifyProposal(Facts(), p);
  EXPECT_FALSE(v.ok);
  ASSERT_EQ(v.messages.size(), 1u);
  EXPECT_NE(v.messages[0].find("cited string"), std::string::npos);
  p.cited_strings = {"invented error text"};
  EXPECT_FALSE(VerifyProposal(Facts(), p).ok);
}

TEST(VerifyProposalTest, QuotedLiteralsInTheSummary) {
  struct Case {
    std::string summary;
    bool ok;
  };
  const Case cases[] = {
      {"Reports \"out of memory\".", true},
      {"Reports \"memory\".", true},               // a substring suffices
      {"Reports \"disk full\".", false},           // not referenced
      {"Short \"abc\" literals are free.", true},  // under 4 characters
      {"Two: \"out of\" and \"open: %s\".", true},
      {"Two: \"out of\" and \"closed\".", false},
      {"An unpaired \" quote is ignored", true},
      {"No quotes at all", true},
      {"\"\"", true},
  };
  for (const Case& c : cases) {
    Proposal p = Good();
    p.summary = c.summary;
    EXPECT_EQ(VerifyProposal(Facts(), p).ok, c.ok) << c.summary;
  }
}

TEST(VerifyProposalTest, SummaryLengthAndEncoding) {
  Proposal p = Good();
  p.summary = std::string(4000, 'x');
  EXPECT_TRUE(VerifyProposal(Facts(), p).ok);
  p.summary = std::string(4001, 'x');
  EXPECT_FALSE(VerifyProposal(Facts(), p).ok);
  // Characters, not bytes: 4,000 two-byte characters pass.
  p.summary.clear();
  for (int i = 0; i < 4000; ++i) p.summary += "\xc3\xa9";
  EXPECT_TRUE(VerifyProposal(Facts(), p).ok);
  p.summary = "bad \xff byte";
  EXPECT_FALSE(VerifyProposal(Facts(), p).ok);
}

TEST(VerifyProposalTest, TypeSignatureRefinement) {
  struct Case {
    std::string signature;
    bool ok;
  };
  const Case cases[] = {
      {"(i32, i32) -> i32", true},
      {"(const char* path, int flags) -> int", true},
      {"(i32 a, i32 b) -> (i32)", true},
      {"(i32) -> i32", false},      // parameter count
      {"(i32, i32) -> ()", false},  // result count
      {"(i32, i32) -> (i32, i32)", false},
      {"(i32, i32)", false},         // no arrow
      {"i32, i32 -> i32", false},    // no parentheses
      {"(i32, ) -> i32", false},     // empty entry
      {"(i32; i32) -> i32", false},  // bad character
      {"", false},
  };
  for (const Case& c : cases) {
    Proposal p = Good();
    p.type_signature = c.signature;
    EXPECT_EQ(VerifyProposal(Facts(), p).ok, c.ok) << c.signature;
  }
}

TEST(ParseSignatureArityTest, Shapes) {
  auto arity = [](std::string_view s) { return ParseSignatureArity(s); };
  ASSERT_TRUE(arity("() -> ()").ok());
  EXPECT_EQ(*arity("() -> ()"), (SignatureArity{0, 0}));
  EXPECT_EQ(*arity("(i32, i64) -> f32"), (SignatureArity{2, 1}));
  EXPECT_EQ(*arity("(v128) -> (i32, i64)"), (SignatureArity{1, 2}));
  EXPECT_FALSE(arity("(i32) ->").ok());
}

TEST(VerifyProposalTest, ReportsEveryFailure) {
  Proposal p{.name = "x",
             .summary = "says \"nonexistent\"",
             .confidence = 2,
             .type_signature = "() -> ()",
             .cited_strings = {"nope"}};
  Verdict v = VerifyProposal(Facts(), p);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.messages.size(), 5u) << v.Reason();
}

TEST(CheckProposedSymbolTest, OnlyIdentifierLengthAndConfidence) {
  EXPECT_TRUE(CheckProposedSymbol("sqlite3_strglob", 0.5).ok);
  EXPECT_FALSE(CheckProposedSymbol("x", 0.5).ok);
  EXPECT_FALSE(CheckProposedSymbol("has space", 0.5).ok);
  EXPECT_FALSE(CheckProposedSymbol(std::string(129, 'a'), 0.5).ok);
}

}  // namespace
}  // namespace trove::warden::agents

// Table tests of the pure gate Decide() (docs/warden.md §6.2), one block per rule and
// boundary, and the source scan that keeps every statement modifying `symbols` in economy.cc.
#include "warden/kb/economy.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <sstream>

namespace trove::warden::kb {
namespace {

SymbolWrite W(std::string provenance, std::optional<std::string> name, double confidence,
              std::string actor = "test:actor") {
  return SymbolWrite{.name = std::move(name),
                     .summary = std::nullopt,
                     .provenance = std::move(provenance),
                     .actor = std::move(actor),
                     .confidence = confidence};
}

std::optional<ExistingSymbol> E(std::string provenance, std::optional<std::string> name,
                                double confidence, bool locked = false,
                                std::string actor = "some:actor") {
  return ExistingSymbol{.name = std::move(name),
                        .summary = std::nullopt,
                        .provenance = std::move(provenance),
                        .actor = std::move(actor),
                        .confidence = confidence,
                        .locked = locked};
}

void ExpectDecision(const Decision& d, bool accepted, int rule, std::string_view reason_prefix) {
  EXPECT_EQ(d.accepted, accepted) << d.reason;
  EXPECT_EQ(d.rule, rule) << d.reason;
  EXPECT_TRUE(d.reason.starts_with(reason_prefix)) << d.reason;
  EXPECT_TRUE(d.reason.starts_with(accepted ? "accepted: " : "rejected: ")) << d.reason;
}

TEST(ProvenanceTest, NamesAndRanks) {
  EXPECT_EQ(ProvenanceRank("human"), 5);
  EXPECT_EQ(ProvenanceRank("export"), 4);
  EXPECT_EQ(ProvenanceRank("oracle"), 3);
  EXPECT_EQ(ProvenanceRank("diff-carry"), 2);
  EXPECT_EQ(ProvenanceRank("agent"), 1);
  EXPECT_EQ(ProvenanceRank("Human"), 0);
  EXPECT_EQ(ProvenanceRank(""), 0);
  for (Provenance p : {Provenance::kAgent, Provenance::kDiffCarry, Provenance::kOracle,
                       Provenance::kExport, Provenance::kHuman}) {
    EXPECT_EQ(ParseProvenance(ProvenanceName(p)), p);
  }
}

TEST(Utf8Test, Validates) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("sqlite3_open"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\x80"));
  EXPECT_FALSE(IsValidUtf8("\xc0\x80"));          // overlong NUL
  EXPECT_FALSE(IsValidUtf8("\xe0\x80\xaf"));      // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));          // truncated
  EXPECT_FALSE(IsValidUtf8("a\xc3"));
}

// ---- Rule 1: invalid writes, rejected whatever E is (even an absent slot, even a human).

TEST(DecideTest, Rule1UnknownProvenance) {
  ExpectDecision(Decide(std::nullopt, W("wizard", "f", 0.5)), false, 1,
                 "rejected: invalid write: unknown provenance \"wizard\"");
  ExpectDecision(Decide(std::nullopt, W("", "f", 0.5)), false, 1, "rejected: invalid write");
  ExpectDecision(Decide(std::nullopt, W("Human", "f", 1.0)), false, 1, "rejected: invalid write");
}

TEST(DecideTest, Rule1Confidence) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double c : {nan, inf, -inf, -0.0001, 1.0000001, 1.5, -1.0}) {
    ExpectDecision(Decide(std::nullopt, W("agent", "f", c)), false, 1,
                   "rejected: invalid write: confidence");
    // Not even a human write, and not over an unnamed slot.
    ExpectDecision(Decide(E("agent", std::nullopt, 0.0), W("human", "f", c)), false, 1,
                   "rejected: invalid write: confidence");
  }
  // The closed interval's ends are valid.
  ExpectDecision(Decide(std::nullopt, W("agent", "f", 0.0)), true, 2, "accepted: slot was unnamed");
  ExpectDecision(Decide(std::nullopt, W("agent", "f", 1.0)), true, 2, "accepted: slot was unnamed");
  ExpectDecision(Decide(std::nullopt, W("agent", "f", -0.0)), true, 2, "accepted:");
}

TEST(DecideTest, Rule1Names) {
  for (const char* p : {"agent", "diff-carry", "oracle", "export"}) {
    ExpectDecision(Decide(std::nullopt, W(p, std::nullopt, 0.5)), false, 1,
                   "rejected: invalid write: missing name on a non-human write");
  }
  ExpectDecision(Decide(std::nullopt, W("agent", "", 0.5)), false, 1,
                 "rejected: invalid write: name is empty");
  ExpectDecision(Decide(std::nullopt, W("human", "", 1.0)), false, 1,
                 "rejected: invalid write: name is empty");
  ExpectDecision(Decide(std::nullopt, W("agent", std::string(512, 'a'), 0.5)), true, 2,
                 "accepted:");
  ExpectDecision(Decide(std::nullopt, W("agent", std::string(513, 'a'), 0.5)), false, 1,
                 "rejected: invalid write: name is 513 bytes, over the 512-byte limit");
  ExpectDecision(Decide(std::nullopt, W("human", std::string(513, 'a'), 1.0)), false, 1,
                 "rejected: invalid write: name is 513 bytes");
  // 512 bytes of multi-byte characters is fine; the limit is in bytes.
  std::string euros;
  for (int i = 0; i < 170; ++i) euros += "\xe2\x82\xac";  // 510 bytes
  ExpectDecision(Decide(std::nullopt, W("agent", euros + "ab", 0.5)), true, 2, "accepted:");
  ExpectDecision(Decide(std::nullopt, W("agent", euros + "\xe2\x82\xac", 0.5)), false, 1,
                 "rejected: invalid write: name is 513 bytes");
  for (const char* bad : {"\xff", "name\xc0\x80", "\xed\xa0\x80x", "ab\xe2\x82"}) {
    ExpectDecision(Decide(std::nullopt, W("agent", bad, 0.5)), false, 1,
                   "rejected: invalid write: name is not valid UTF-8");
    ExpectDecision(Decide(E("oracle", "x", 0.1), W("human", bad, 1.0)), false, 1,
                   "rejected: invalid write: name is not valid UTF-8");
  }
  SymbolWrite bad_summary = W("agent", "f", 0.5);
  bad_summary.summary = "sum\xff";
  ExpectDecision(Decide(std::nullopt, bad_summary), false, 1,
                 "rejected: invalid write: summary is not valid UTF-8");
}

// PostgreSQL text cannot hold U+0000, so no back end stores it: a name or summary with one is
// invalid (rule 1) for every provenance, over any E (docs/warden.md §6.2).
TEST(DecideTest, Rule1NulInNameOrSummary) {
  using namespace std::string_literals;
  for (const std::string& name : {"a\0b"s, "\0"s, "main\0"s, "caf\xc3\xa9\0"s}) {
    ASSERT_TRUE(IsValidUtf8(name));  // U+0000 is well-formed UTF-8: the rule is its own
    for (const char* p : {"agent", "diff-carry", "oracle", "export"}) {
      ExpectDecision(Decide(std::nullopt, W(p, name, 0.5)), false, 1,
                     "rejected: invalid write: name contains U+0000");
    }
    ExpectDecision(Decide(E("agent", "x", 0.1), W("human", name, 1.0)), false, 1,
                   "rejected: invalid write: name contains U+0000");
  }
  SymbolWrite summary = W("human", "f", 1.0);
  summary.summary = "does\0things"s;
  ExpectDecision(Decide(std::nullopt, summary), false, 1,
                 "rejected: invalid write: summary contains U+0000");
  // The same text without the NUL is accepted.
  summary.summary = "does things";
  ExpectDecision(Decide(std::nullopt, summary), true, 2, "accepted:");
}

TEST(DecideTest, Rule1ComesBeforeEverything) {
  // Even a human over a locked slot is rejected when invalid.
  ExpectDecision(
      Decide(E("human", "x", 1.0, true, "human:cli"), W("human", std::string(513, 'h'), 1.0)),
      false, 1, "rejected: invalid write");
}

// ---- Rule 2: absent or unnamed slots take any valid write.

TEST(DecideTest, Rule2AbsentOrUnnamed) {
  for (const char* p : {"agent", "diff-carry", "oracle", "export", "human"}) {
    ExpectDecision(Decide(std::nullopt, W(p, "f", 0.0)), true, 2, "accepted: slot was unnamed");
    // An unnamed row (after a human clear) with a higher rank and confidence still accepts.
    ExpectDecision(Decide(E("human", std::nullopt, 1.0), W(p, "f", 0.0)), true, 2,
                   "accepted: slot was unnamed");
  }
  const Decision clear = Decide(std::nullopt, W("human", std::nullopt, 1.0));
  ExpectDecision(clear, true, 2, "accepted: human clear");
  EXPECT_TRUE(clear.clears);
}

// ---- Rule 3: human writes win and lock.

TEST(DecideTest, Rule3Human) {
  ExpectDecision(Decide(E("agent", "a", 0.1), W("human", "h", 1.0)), true, 3,
                 "accepted: human write (locked)");
  ExpectDecision(Decide(E("export", "a", 1.0), W("human", "h", 1.0)), true, 3, "accepted: human");
  ExpectDecision(Decide(E("human", "a", 1.0, true, "human:cli"), W("human", "h", 1.0)), true, 3,
                 "accepted: human");
  // Same name as a locked human name: still accepted (re-affirmation).
  ExpectDecision(Decide(E("human", "h", 1.0, true), W("human", "h", 1.0)), true, 3,
                 "accepted: human");
  const Decision clear =
      Decide(E("human", "h", 1.0, true, "human:cli"), W("human", std::nullopt, 1.0));
  ExpectDecision(clear, true, 3, "accepted: human clear");
  EXPECT_TRUE(clear.clears);
  EXPECT_NE(clear.reason.find("lock released"), std::string::npos) << clear.reason;
}

// ---- Rule 4: locked symbols refuse every non-human write.

TEST(DecideTest, Rule4Locked) {
  for (const char* p : {"agent", "diff-carry", "oracle", "export"}) {
    for (double c : {0.0, 0.5, 1.0}) {
      ExpectDecision(Decide(E("human", "h", 1.0, true, "human:cli"), W(p, "other", c)), false, 4,
                     "rejected: locked by a human (human:cli)");
      // Same name too: the lock rule comes before corroboration.
      ExpectDecision(Decide(E("human", "h", 1.0, true, "human:lib"), W(p, "h", c)), false, 4,
                     "rejected: locked by a human (human:lib)");
    }
  }
  EXPECT_EQ(Decide(E("human", "h", 1.0, true, "human:cli"), W("agent", "x", 1.0)).reason,
            "rejected: locked by a human (human:cli)");
}

// ---- Rule 5: the same name from a lower rank corroborates and is rejected.

TEST(DecideTest, Rule5Corroboration) {
  ExpectDecision(Decide(E("oracle", "memcpy", 0.6), W("agent", "memcpy", 0.99)), false, 5,
                 "rejected: corroborates the existing oracle annotation with the same name");
  ExpectDecision(Decide(E("export", "f", 1.0), W("oracle", "f", 1.0)), false, 5, "rejected:");
  ExpectDecision(Decide(E("oracle", "f", 0.2), W("diff-carry", "f", 0.9)), false, 5, "rejected:");
  // Equal rank, same name: rule 7 decides.
  ExpectDecision(Decide(E("oracle", "f", 0.6), W("oracle", "f", 0.7)), true, 7, "accepted:");
  ExpectDecision(Decide(E("oracle", "f", 0.6), W("oracle", "f", 0.6)), false, 7, "rejected:");
  // Higher rank, same name: an upgrade (rule 6).
  ExpectDecision(Decide(E("agent", "f", 0.9), W("oracle", "f", 0.1)), true, 6, "accepted:");
  // Names are compared byte for byte.
  ExpectDecision(Decide(E("oracle", "Memcpy", 0.6), W("agent", "memcpy", 0.99)), true, 7,
                 "accepted:");
}

// ---- Rule 6: higher rank wins whatever the confidence.

TEST(DecideTest, Rule6HigherRank) {
  ExpectDecision(Decide(E("agent", "a", 0.99), W("diff-carry", "b", 0.01)), true, 6,
                 "accepted: diff-carry outranks the existing agent annotation");
  ExpectDecision(Decide(E("diff-carry", "a", 1.0), W("oracle", "b", 0.0)), true, 6, "accepted:");
  ExpectDecision(Decide(E("oracle", "a", 1.0), W("export", "b", 1.0)), true, 6, "accepted:");
}

// ---- Rule 7: equal or lower rank needs strictly higher confidence.

TEST(DecideTest, Rule7Confidence) {
  EXPECT_EQ(Decide(E("oracle", "a", 0.95), W("agent", "b", 0.6)).reason,
            "rejected: existing oracle annotation has confidence 0.950 >= 0.600");
  // The documented rule: an agent displaces an Oracle name only with a higher confidence.
  ExpectDecision(Decide(E("oracle", "a", 0.6), W("agent", "b", 0.95)), true, 7,
                 "accepted: confidence 0.950 > existing oracle annotation's 0.600");
  // Equal confidence is not enough.
  ExpectDecision(Decide(E("oracle", "a", 0.6), W("agent", "b", 0.6)), false, 7,
                 "rejected: existing oracle annotation has confidence 0.600 >= 0.600");
  ExpectDecision(Decide(E("agent", "a", 0.5), W("agent", "b", 0.5)), false, 7, "rejected:");
  ExpectDecision(Decide(E("agent", "a", 0.5), W("agent", "b", std::nextafter(0.5, 1.0))), true, 7,
                 "accepted:");
  // An export at 1.0 can never be displaced by anything but a human.
  ExpectDecision(Decide(E("export", "a", 1.0), W("agent", "b", 1.0)), false, 7, "rejected:");
  ExpectDecision(Decide(E("export", "a", 1.0), W("export", "b", 1.0)), false, 7, "rejected:");
  ExpectDecision(Decide(E("oracle", "a", 0.8), W("diff-carry", "b", 0.9)), true, 7, "accepted:");
}

TEST(DecideTest, UnknownExistingProvenanceRanksLowest) {
  ExpectDecision(Decide(E("legacy", "a", 0.9), W("agent", "b", 0.1)), true, 6, "accepted:");
}

TEST(DecideTest, DependsNeitherOnWriteActorNorDetails) {
  const std::optional<ExistingSymbol> e = E("oracle", "a", 0.6, false, "oracle:exact");
  SymbolWrite one = W("agent", "b", 0.7, "agent:offline");
  SymbolWrite two = W("agent", "b", 0.7, "agent:mcp");
  two.details_json = R"({"model":"x"})";
  const Decision d1 = Decide(e, one);
  const Decision d2 = Decide(e, two);
  EXPECT_EQ(d1.accepted, d2.accepted);
  EXPECT_EQ(d1.reason, d2.reason);
}

// ---- Source scan: only economy.cc modifies `symbols` (§6.5).

std::regex SymbolsWriteRegex() {
  // "sym" "bols" so that this file does not match its own pattern.
  const std::string table = std::string("sym") + "bols";
  return std::regex(
      "\\b(insert(\\s+or\\s+[a-z]+)?\\s+into|replace\\s+into|update(\\s+or\\s+[a-z]+)?|"
      "delete\\s+from)\\s+[\"'`\\[]?" +
          table + "\\b",
      std::regex::icase | std::regex::ECMAScript);
}

TEST(SourceScanTest, PatternMatchesEveryModifyingForm) {
  const std::regex re = SymbolsWriteRegex();
  const std::string t = std::string("sym") + "bols";
  for (const std::string& sql :
       {"INSERT INTO " + t + "(a) VALUES (1)", "insert or replace into " + t + " values",
        "REPLACE INTO " + t, "UPDATE " + t + " SET name = 1", "update or ignore " + t + " set",
        "DELETE FROM " + t, "delete   from\n  \"" + t + "\""}) {
    EXPECT_TRUE(std::regex_search(sql, re)) << sql;
  }
  for (const std::string& sql :
       {"SELECT name FROM " + t, "CREATE TABLE IF NOT EXISTS " + t,
        std::string("INSERT INTO evidence"), "UPDATE " + t + "_shadow SET"}) {
    EXPECT_FALSE(std::regex_search(sql, re)) << sql;
  }
}

TEST(SourceScanTest, OnlyEconomyModifiesSymbols) {
  namespace fs = std::filesystem;
  // WARDEN's sources: other engines (Librarian's store) have symbols tables of their own.
  const fs::path root = fs::path(TROVE_SOURCE_DIR) / "src" / "warden";
  ASSERT_TRUE(fs::is_directory(root)) << root;
  const std::regex re = SymbolsWriteRegex();
  const fs::path gate = root / "kb" / "economy.cc";
  int files = 0;
  int gate_hits = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h" && ext != ".inc" && ext != ".def" && ext != ".sql" &&
        ext != ".cpp" && ext != ".hpp") {
      continue;
    }
    ++files;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    // std::regex is slow; only files naming the table at all need it (case-insensitively).
    std::string lower = text;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find(std::string("sym") + "bols") == std::string::npos) continue;
    const auto begin = std::sregex_iterator(text.begin(), text.end(), re);
    const auto count = std::distance(begin, std::sregex_iterator());
    if (entry.path() == gate) {
      gate_hits += static_cast<int>(count);
    } else {
      EXPECT_EQ(count, 0) << entry.path() << " modifies the symbols table; only "
                          << "src/warden/kb/economy.cc may (docs/warden.md §6.3)";
    }
  }
  EXPECT_GT(files, 10);
  EXPECT_GE(gate_hits, 1) << "the scan no longer finds the gate's own write";
}

}  // namespace
}  // namespace trove::warden::kb

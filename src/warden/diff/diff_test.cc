// The diff engine on sample modules with planted edits (docs/warden.md §9.3): exact
// classifications and passes per function, the carried names and what the gate made of them,
// the stored report, and the changelog's bytes.
#include "warden/diff/diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "warden/diff/testing/planted.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"
#include "warden/samples/demo_modules.h"

namespace trove::warden::diff {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// The key of each defined function of a sample, by function index.
std::map<std::uint32_t, std::string> KeysByIndex(const samples::Module& m) {
  std::map<std::uint32_t, std::string> out;
  for (std::size_t i = 0; i < m.functions.size(); ++i) {
    out[static_cast<std::uint32_t>(m.imports.size() + i)] = m.functions[i].key;
  }
  return out;
}

class DiffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb::KbOptions options;
    options.create_if_missing = true;
    auto opened = kb::Kb::Open(env_, dir_.path() + "/w.db", options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    kb_ = std::move(opened).value();
    v1_ = Ingest(testing::PlantedV1(), "v1");
    v2_ = Ingest(testing::PlantedV2(), "v2");
  }

  std::int64_t Ingest(const samples::Module& m, const std::string& label) {
    Result<std::vector<std::uint8_t>> bytes = samples::WriteModule(m);
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    const std::string path = dir_.path() + "/" + label + ".wasm";
    EXPECT_TRUE(env_.WriteFile(path, std::string(bytes->begin(), bytes->end())).ok());
    ingest::IngestOptions options;
    options.label = label;
    auto r = ingest::IngestFile(env_, *kb_, path, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->store.version_id : 0;
  }

  std::string StableId(std::int64_t version, std::uint32_t index) {
    auto f = kb_->GetFunction(version, index);
    EXPECT_TRUE(f.ok() && f->has_value());
    return (*f)->record.stable_id;
  }

  // Per key: "class/pass" (deleted and new: the class alone).
  std::map<std::string, std::string> Outcomes(const DiffReport& r) {
    const auto from_keys = KeysByIndex(testing::PlantedV1());
    const auto to_keys = KeysByIndex(testing::PlantedV2());
    std::map<std::string, std::string> out;
    for (const Change& c : r.changes) {
      std::string key;
      if (c.to_index) {
        key = to_keys.at(*c.to_index);
        if (c.from_index) {
          EXPECT_EQ(from_keys.at(*c.from_index), key) << "mispaired";
        }
      } else {
        key = from_keys.at(*c.from_index);
      }
      std::string what(ChangeClassName(c.change));
      if (c.pass != Pass::kNone) what += "/" + std::string(PassName(c.pass));
      EXPECT_TRUE(out.emplace(key, what).second) << key << " twice";
    }
    return out;
  }

  base::PosixEnv env_;
  base::testing::TempDir dir_{"trove_diff_test"};
  std::unique_ptr<kb::Kb> kb_;
  std::int64_t v1_ = 0;
  std::int64_t v2_ = 0;
};

// The demo's application pair (warden demo, step 6): the inserted and the deleted function
// stay new and deleted, the modified one pairs with itself, everything else with itself; the
// call-graph neighbourhood pass must not pair the inserted function with the deleted one.
TEST_F(DiffTest, DemoApplicationPairKeepsItsPlannedClasses) {
  const samples::DemoPlan plan = samples::DemoModulesPlan();
  const std::int64_t a = Ingest(samples::DemoApplication(1), "demo1");
  const std::int64_t b = Ingest(samples::DemoApplication(2), "demo2");
  Result<VersionSide> from = LoadSide(*kb_, a);
  Result<VersionSide> to = LoadSide(*kb_, b);
  ASSERT_TRUE(from.ok() && to.ok());
  const DiffReport r = ComputeDiff(*from, *to);
  const auto v1 = KeysByIndex(samples::DemoApplication(1));
  const auto v2 = KeysByIndex(samples::DemoApplication(2));
  for (const Change& c : r.changes) {
    const std::string f = c.from_index ? v1.at(*c.from_index) : "-";
    const std::string t = c.to_index ? v2.at(*c.to_index) : "-";
    if (c.change == ChangeClass::kNew) {
      EXPECT_EQ(t, plan.added);
    } else if (c.change == ChangeClass::kDeleted) {
      EXPECT_EQ(f, plan.deleted);
    } else {
      EXPECT_EQ(f, t);
    }
  }
}

TEST_F(DiffTest, EveryPlantedEditIsClassifiedByItsPass) {
  Result<VersionSide> from = LoadSide(*kb_, v1_);
  Result<VersionSide> to = LoadSide(*kb_, v2_);
  ASSERT_TRUE(from.ok() && to.ok());
  const DiffReport r = ComputeDiff(*from, *to);
  const std::map<std::string, std::string> expected = {
      {"f0", "unchanged/exact"},
      {"f1", "moved/exact"},
      {"f2", "moved/stable_id"},
      {"f3", "modified/fuzzy"},
      {"f4", "deleted"},
      {"f5", "moved/exact"},
      {"f6", "moved/exact"},
      {"f7", "moved/exact"},
      {"f8", "moved/exact"},
      {"f9", "unchanged/exact"},
      {"logger", "moved/exact"},
      {"A", "modified/normalised"},
      {"B", "modified/normalised"},
      {"w_a", "modified/call_graph"},
      {"w_b", "modified/call_graph"},
      {"ww_a", "modified/call_graph"},
      {"ww_b", "modified/call_graph"},
      {"g", "new"},
  };
  EXPECT_EQ(Outcomes(r), expected);
  EXPECT_EQ(r.pass_pairs[static_cast<int>(Pass::kExact)], 8);
  EXPECT_EQ(r.pass_pairs[static_cast<int>(Pass::kStableId)], 1);
  EXPECT_EQ(r.pass_pairs[static_cast<int>(Pass::kNormalised)], 2);
  EXPECT_EQ(r.pass_pairs[static_cast<int>(Pass::kCallGraph)], 4);
  EXPECT_EQ(r.pass_pairs[static_cast<int>(Pass::kFuzzy)], 1);
  EXPECT_FALSE(r.toolchain_changed);
  for (const Change& c : r.changes) {
    if (c.pass == Pass::kExact) {
      EXPECT_EQ(c.score, 1.0);
    }
    if (c.pass == Pass::kStableId) {
      EXPECT_EQ(c.score, 0.99);
    }
    if (c.pass == Pass::kFuzzy) {
      EXPECT_TRUE(
          identity::AcceptFuzzy(c.score, *c.from_instructions, identity::MatchPurpose::kDiff));
      EXPECT_EQ(*c.to_instructions - *c.from_instructions, 3u);  // the planted store snippet
    }
    if (c.change == ChangeClass::kUnchanged || c.change == ChangeClass::kMoved) {
      EXPECT_EQ(c.from_stable_id, c.to_stable_id);
    }
  }
}

TEST_F(DiffTest, ReportAndChangelogAreDeterministic) {
  Result<VersionSide> from = LoadSide(*kb_, v1_);
  Result<VersionSide> to = LoadSide(*kb_, v2_);
  ASSERT_TRUE(from.ok() && to.ok());
  const std::string a = ReportJson(ComputeDiff(*from, *to), true);
  EXPECT_EQ(a, ReportJson(ComputeDiff(*from, *to), true));
  EXPECT_EQ(RenderChangelog(ComputeDiff(*from, *to)), RenderChangelog(ComputeDiff(*from, *to)));
}

TEST_F(DiffTest, ToolchainChangeAndRuntimeOrigin) {
  Result<VersionSide> from = LoadSide(*kb_, v1_);
  Result<VersionSide> to = LoadSide(*kb_, v2_);
  ASSERT_TRUE(from.ok() && to.ok());
  from->emscripten_version = "3.1.20";
  to->emscripten_version = "7.0.0";
  // f5 carries an Oracle name in v1: runtime churn.
  for (std::size_t i = 0; i < from->functions.size(); ++i) {
    if (from->functions[i].func_index == 6) {
      from->annotations[i] = {.name = "memcpy", .provenance = "oracle", .confidence = 0.95};
    }
  }
  const DiffReport r = ComputeDiff(*from, *to);
  EXPECT_TRUE(r.toolchain_changed);
  EXPECT_EQ(r.counts[static_cast<int>(ChangeClass::kMoved)][static_cast<int>(Origin::kRuntime)], 1);
  EXPECT_EQ(r.counts[static_cast<int>(ChangeClass::kMoved)][static_cast<int>(Origin::kApplication)],
            6);
  const std::string md = RenderChangelog(r);
  EXPECT_THAT(md, HasSubstr("Toolchain changed: Emscripten 3.1.20 → 7.0.0.\n"));
  EXPECT_THAT(md, HasSubstr("| moved | 6 | 1 | 7 |\n"));
  to->emscripten_version.reset();
  EXPECT_FALSE(ComputeDiff(*from, *to).toolchain_changed);
}

TEST_F(DiffTest, ChangelogLayout) {
  Result<DiffRun> run = RunDiff(*kb_, v1_, v2_);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  const std::string& md = run->changelog;
  EXPECT_THAT(md, StartsWith("# v1 → v2\n\n| class | application | runtime | total |\n"
                             "|---|---:|---:|---:|\n| unchanged | 2 | 0 | 2 |\n"
                             "| moved | 7 | 0 | 7 |\n| modified | 7 | 0 | 7 |\n"
                             "| new | 1 | 0 | 1 |\n| deleted | 1 | 0 | 1 |\n"
                             "| total | 18 | 0 | 18 |\n\n"
                             "Toolchain: Emscripten unknown in both.\n"
                             "Pairs by pass: exact 8, stable_id 1, normalised 2, call_graph 4, "
                             "fuzzy 1.\n\n## Modified\n\n### Application (7)\n\n- `A` — func[11] → "
                             "func[8], score "));
  // Entries by name: A, B, w_a, w_b, ww_a, ww_b, then the unnamed f3 by index.
  const std::size_t a = md.find("- `A` —"), b = md.find("- `B` —"), w = md.find("- `w_a` —"),
                    ww = md.find("- `ww_b` —"), f3 = md.find("- func[15] — func[4] → func[15]");
  ASSERT_NE(f3, std::string::npos) << md;
  EXPECT_LT(a, b);
  EXPECT_LT(b, w);
  EXPECT_LT(w, ww);
  EXPECT_LT(ww, f3);
  EXPECT_THAT(md, HasSubstr("score 0.916 (fuzzy); instructions 62 → 65 (+3)\n"));
  EXPECT_THAT(
      md, HasSubstr("\n## New\n\n### Application (1)\n\n- func[6] — func[6]; 72 instructions; type "
                    "`(i32, i32) -> i32`\n"));
  EXPECT_THAT(
      md, HasSubstr("\n## Deleted\n\n### Application (1)\n\n- `f4` — func[5]; 82 instructions"));
  // Stored: one row for the pair, replaced by a rerun; the changelog bytes are the same.
  Result<std::optional<kb::DiffRecord>> stored = kb_->GetDiff(v1_, v2_);
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->changelog_md, md);
  const nlohmann::json report = nlohmann::json::parse((*stored)->report_json);
  EXPECT_EQ(report["changes"].size(), 9u);  // modified, new, deleted
  EXPECT_EQ(report["unchanged_or_moved"].size(), 9u);
  EXPECT_EQ(report["unchanged_or_moved"][0], nlohmann::json::array({1, 1, 1}));  // f0, exact
  EXPECT_EQ(report["counts"]["modified"]["total"], 7);
  EXPECT_EQ(report["passes"]["call_graph"], 4);
  Result<DiffRun> again = RunDiff(*kb_, v1_, v2_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->changelog, md);
  Result<std::vector<kb::DiffRecord>> all = kb_->ListDiffs();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].id, again->diff_id);
  EXPECT_EQ(RunDiff(*kb_, v1_, v1_).status().code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(RunDiff(*kb_, v1_, 99).status().code(), base::StatusCode::kNotFound);
}

TEST_F(DiffTest, CarryWritesOldNamesThroughTheGate) {
  // f3 has an agent name at 0.42 in v1: the carry keeps that cap. A is human-verified (locked).
  const std::string f3_old = StableId(v1_, 4);
  ASSERT_TRUE(kb_->AgentPropose("offline", f3_old, {.name = "mix3", .confidence = 0.42}).ok());
  const std::string a_old = StableId(v1_, 11);
  ASSERT_TRUE(kb_->HumanSetName(kb::HumanChannel::kCli, a_old, "alpha", "counts down").ok());

  Result<DiffRun> run = RunDiff(*kb_, v1_, v2_);
  ASSERT_TRUE(run.ok());
  Result<CarrySummary> carry = CarryAnnotations(*kb_, run->report);
  ASSERT_TRUE(carry.ok()) << carry.status().ToString();
  EXPECT_EQ(carry->pairs, 16);
  EXPECT_EQ(carry->shared_identity, 9);
  EXPECT_EQ(carry->unnamed_source, 0);
  EXPECT_EQ(carry->attempted, 7);
  EXPECT_EQ(carry->carried, 6);
  EXPECT_EQ(carry->rejected, 1);  // B: v2's own name section says B_v2 (export outranks)

  // Every function of v2 now has the name the key gives it (f5 stayed unnamed in both).
  const auto to_keys = KeysByIndex(testing::PlantedV2());
  std::map<std::string, const Change*> by_key;
  for (const Change& c : run->report.changes) {
    if (c.to_index) by_key[to_keys.at(*c.to_index)] = &c;
  }
  for (const auto& [index, key] : to_keys) {
    Result<std::optional<kb::SymbolRecord>> s = kb_->GetSymbol(StableId(v2_, index));
    ASSERT_TRUE(s.ok());
    if (key == "g" || key == "f5") {
      EXPECT_FALSE(s->has_value() && (*s)->name) << key;
      continue;
    }
    ASSERT_TRUE(s->has_value()) << key;
    const kb::SymbolRecord& sym = **s;
    const Change& c = *by_key.at(key);
    if (key == "B") {
      EXPECT_EQ(sym.name, "B_v2");
      EXPECT_EQ(sym.provenance, "export");
    } else if (key == "A") {
      EXPECT_EQ(sym.name, "alpha");
      EXPECT_EQ(sym.summary, "counts down");
      EXPECT_EQ(sym.provenance, "diff-carry");
      EXPECT_FALSE(sym.locked);  // locks never carry
      EXPECT_EQ(sym.actor, "diff:v1->v2");
      EXPECT_DOUBLE_EQ(sym.confidence, c.score);
    } else if (key == "f3") {
      EXPECT_EQ(sym.name, "mix3");
      EXPECT_EQ(sym.provenance, "diff-carry");
      EXPECT_DOUBLE_EQ(sym.confidence, 0.42);  // capped at the source's confidence
      EXPECT_GT(c.score, 0.42);
    } else if (c.from_stable_id == c.to_stable_id) {
      EXPECT_EQ(sym.name, key);  // shared identity: the same symbol, no write
      EXPECT_EQ(sym.provenance, "export");
    } else {
      EXPECT_EQ(sym.name, key);
      EXPECT_EQ(sym.provenance, "diff-carry");
      EXPECT_DOUBLE_EQ(sym.confidence, c.score);
      EXPECT_LT(sym.confidence, 1.0);
    }
  }
  // The evidence of a carry records pass, components and the old stable_id.
  const std::string a_new = StableId(v2_, 8);
  Result<std::vector<kb::EvidenceEntry>> ev = kb_->Evidence(a_new);
  ASSERT_TRUE(ev.ok());
  ASSERT_FALSE(ev->empty());
  const nlohmann::json details = nlohmann::json::parse(ev->back().details_json);
  EXPECT_EQ(details["pass"], "normalised");
  EXPECT_EQ(details["old_stable_id"], a_old);
  EXPECT_EQ(details["old_locked"], true);
  EXPECT_TRUE(details["components"].contains("minhash"));
  EXPECT_THAT(ev->back().reason, StartsWith("accepted:"));
  for (const CarryDetail& d : carry->details) {
    if (d.to_index == 5) {
      EXPECT_THAT(d.reason, StartsWith("rejected:"));
    }
  }

  // A second carry changes nothing: the same names at the same confidence are refused.
  Result<CarrySummary> again = CarryAnnotations(*kb_, run->report);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->carried, 0);
}

}  // namespace
}  // namespace trove::warden::diff

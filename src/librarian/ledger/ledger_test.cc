#include "librarian/ledger/ledger.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "base/sqlite.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::ledger {
namespace {

class LedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::Store::Open(":memory:");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    store_ = std::move(*s);
  }
  base::Database& db() { return store_->db(); }

  std::int64_t Add(EntryKind kind, std::string claim, std::string at = "",
                   std::optional<std::int64_t> parent = std::nullopt, std::string relation = "",
                   nlohmann::json payload = nlohmann::json::object()) {
    Entry e;
    e.kind = kind;
    e.claim_id = std::move(claim);
    e.recorded_at = std::move(at);
    e.agent = "test";
    e.activity = "unit";
    e.parent_id = parent;
    e.relation = std::move(relation);
    e.payload = std::move(payload);
    auto id = Append(db(), e);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : -1;
  }

  std::unique_ptr<store::Store> store_;
};

TEST_F(LedgerTest, KindsRoundTrip) {
  for (EntryKind k : kAllKinds) EXPECT_EQ(ParseKind(KindName(k)), k);
  EXPECT_FALSE(ParseKind("verify"));
  EXPECT_TRUE(IsRelation("undercuts"));
  EXPECT_TRUE(IsRelation(""));
  EXPECT_FALSE(IsRelation("likes"));
}

TEST_F(LedgerTest, AppendOnlyRefusesUpdateAndDelete) {
  const std::int64_t id = Add(EntryKind::kClaim, "pk_a");
  EXPECT_GT(id, 0);
  EXPECT_FALSE(db().Exec("UPDATE ledger SET kind = 'outcome'").ok());
  EXPECT_FALSE(db().Exec("DELETE FROM ledger").ok());
  auto all = Query(db(), Filter{});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].kind, EntryKind::kClaim);
  EXPECT_FALSE((*all)[0].recorded_at.empty());  // filled by Append
}

TEST_F(LedgerTest, AppendValidatesRelationParentAndSize) {
  Entry e;
  e.relation = "likes";
  EXPECT_EQ(Append(db(), e).status().code(), base::StatusCode::kInvalidArgument);
  e.relation = "";
  e.parent_id = 42;
  EXPECT_EQ(Append(db(), e).status().code(), base::StatusCode::kInvalidArgument);
  e.parent_id.reset();
  e.payload = {{"big", std::string(kMaxPayloadBytes, 'x')}};
  EXPECT_EQ(Append(db(), e).status().code(), base::StatusCode::kResourceExhausted);
  EXPECT_TRUE(Query(db(), Filter{})->empty());
}

TEST_F(LedgerTest, FilteredQueries) {
  Add(EntryKind::kVerification, "pk_a", "2026-01-01T00:00:00.000Z");
  Add(EntryKind::kVerification, "pk_b", "2026-01-02T00:00:00.000Z");
  Add(EntryKind::kToolCall, "", "2026-01-03T00:00:00.000Z");
  Add(EntryKind::kVerification, "pk_a", "2026-01-04T00:00:00.000Z");
  Filter f;
  f.kind = EntryKind::kVerification;
  EXPECT_EQ(Query(db(), f)->size(), 3u);
  f.claim_id = "pk_a";
  EXPECT_EQ(Query(db(), f)->size(), 2u);
  f.since = "2026-01-03T00:00:00.000Z";
  ASSERT_EQ(Query(db(), f)->size(), 1u);
  EXPECT_EQ((*Query(db(), f))[0].recorded_at, "2026-01-04T00:00:00.000Z");
  Filter t;
  t.until = "2026-01-02T00:00:00.000Z";
  EXPECT_EQ(Query(db(), t)->size(), 2u);
  Filter page;
  page.limit = 2;
  auto first = Query(db(), page);
  ASSERT_EQ(first->size(), 2u);
  page.after_id = first->back().id;
  EXPECT_EQ(Query(db(), page)->size(), 2u);
}

TEST_F(LedgerTest, ReplayFoldsClaimStates) {
  const std::int64_t a =
      Add(EntryKind::kVerification, "pk_a", "", std::nullopt, "", {{"verified", true}});
  Add(EntryKind::kOutcome, "pk_a", "", std::nullopt, "", {{"success", false}});
  const std::int64_t c =
      Add(EntryKind::kVerification, "pk_a", "", std::nullopt, "", {{"verified", false}});
  Add(EntryKind::kContradiction, "pk_a", "", c, "rebuts");
  Add(EntryKind::kVerification, "pk_b", "", std::nullopt, "", {{"verified", true}});
  auto all = ReplayFrom(db(), a);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->entries.size(), 5u);
  EXPECT_FALSE(all->next_id);
  const ClaimState& s = all->claims.at("pk_a");
  EXPECT_EQ(s.verifications, 2);
  EXPECT_EQ(s.verified, false);
  EXPECT_EQ(s.contradictions, 1);
  EXPECT_EQ(s.outcomes_failure, 1);
  EXPECT_EQ(s.last_kind, "contradiction");
  // From the third entry on, the first verification is not replayed.
  auto tail = ReplayFrom(db(), c);
  EXPECT_EQ(tail->claims.at("pk_a").verifications, 1);
  auto paged = ReplayFrom(db(), a, 2);
  EXPECT_EQ(paged->entries.size(), 2u);
  ASSERT_TRUE(paged->next_id);
  EXPECT_EQ(*paged->next_id, c);
}

TEST_F(LedgerTest, EvidenceChainFollowsParents) {
  const std::int64_t extraction =
      Add(EntryKind::kExtraction, "", "", std::nullopt, "", {{"run", "r1"}});
  const std::int64_t claim = Add(EntryKind::kClaim, "pk_a", "", extraction, "depends_on");
  Add(EntryKind::kClaim, "pk_other", "");
  const std::int64_t verification = Add(EntryKind::kVerification, "pk_a", "", claim, "supports");
  auto chain = EvidenceChain(db(), "pk_a");
  ASSERT_TRUE(chain.ok());
  ASSERT_EQ(chain->size(), 3u);
  EXPECT_EQ((*chain)[0].id, extraction);  // reached through the parent link only
  EXPECT_EQ((*chain)[1].id, claim);
  EXPECT_EQ((*chain)[2].id, verification);
  EXPECT_TRUE(EvidenceChain(db(), "pk_none")->empty());
}

TEST_F(LedgerTest, PruneKeepsTheNewest) {
  for (int i = 0; i < 5; ++i) Add(EntryKind::kToolCall, "");
  auto deleted = Prune(db(), 2);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(*deleted, 3);
  EXPECT_EQ(Query(db(), Filter{})->size(), 2u);
  // The retention step re-arms the append-only guard.
  EXPECT_FALSE(db().Exec("DELETE FROM ledger").ok());
  EXPECT_EQ(CountByKind(db())->at("tool_call"), 2);
}

TEST_F(LedgerTest, ProvJsonShape) {
  nlohmann::json payload = {
      {"verified", true},
      {"evidence", {{"file", "a.py"}, {"contentHash", "abcdef0123456789ff"}, {"startLine", 1}}}};
  const std::int64_t v =
      Add(EntryKind::kVerification, "pk_a", "2026-01-01T00:00:00.000Z", std::nullopt, "", payload);
  Add(EntryKind::kContradiction, "pk_a", "2026-01-01T00:00:01.000Z", v, "rebuts");
  auto entries = Query(db(), Filter{});
  nlohmann::json prov = ToProvJson(*entries, "ws_1");
  EXPECT_EQ(prov["prefix"]["prov"], "http://www.w3.org/ns/prov#");
  EXPECT_TRUE(prov["entity"].contains("lib:claim/pk_a"));
  EXPECT_TRUE(prov["entity"].contains("lib:evidence/a.py@abcdef0123456789"));
  EXPECT_EQ(prov["activity"][fmt::format("lib:entry/{}", v)]["prov:type"], "verification");
  EXPECT_EQ(prov["wasGeneratedBy"].size(), 2u);
  EXPECT_EQ(prov["used"].size(), 1u);
  ASSERT_EQ(prov["wasInformedBy"].size(), 1u);
  EXPECT_EQ(prov["wasInformedBy"].begin().value()["lib:relation"], "rebuts");
  EXPECT_TRUE(prov["agent"].contains("lib:agent/test"));
}

// A schema-4 store (no ledger) migrates to 5 in place and keeps its rows.
TEST(LedgerMigration, SchemaFourStoreGainsTheLedger) {
  testing::TempDir dir;
  const std::string path = dir.Abs("librarian.sqlite");
  {
    auto s = store::Store::Open(path);
    ASSERT_TRUE(s.ok());
    store::RunRecord run{"run_1", "succeeded", "full", "t0", "t1", "{}", "{}", "{}"};
    store::WriteBatch batch;
    batch.run = run;
    ASSERT_TRUE((*s)->Apply(batch).ok());
  }
  {
    auto db = base::Database::Open(path);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        (*db)
            ->Exec("DROP TABLE ledger; DROP TABLE audits; DROP TABLE pack_triggers; DROP TABLE "
                   "packs; DROP TABLE pack_outcomes; DROP TABLE file_edges; DROP TABLE "
                   "ranks; UPDATE meta SET value = '4' "
                   "WHERE key = 'schema_version'")
            .ok());
  }
  auto s = store::Store::Open(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE((*s)->schema_rebuilt());
  EXPECT_EQ((*s)->ListRuns()->size(), 1u);
  Entry e;
  e.kind = EntryKind::kCalibration;
  EXPECT_TRUE(Append((*s)->db(), e).ok());
  EXPECT_TRUE((*s)->IntegrityCheck().ok());
}

}  // namespace
}  // namespace trove::librarian::ledger

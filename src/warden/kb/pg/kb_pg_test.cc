// The KB API over both back ends (SQLite file, PostgreSQL scratch database), the PostgreSQL
// schema's append-only evidence, and the gate under several processes writing one PostgreSQL
// KB at once (serial replay of the evidence trail = the final symbols; one evidence row per
// attempt). Runs on the ctest fixture "pg" (cmake/trove.cmake trove_pg_test).
#include "warden/kb/pg/kb_pg.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/pg.h"
#include "base/testing/pg_server.h"
#include "base/testing/temp_dir.h"
#include "warden/kb/kb.h"
#include "warden/kb/testing/kb_test_peer.h"

namespace trove::warden::kb {
namespace {

using base::StatusCode;
using base::testing::PgDatabase;
using base::testing::TempDir;
using testing::MakeFunctions;
using testing::MakeVersion;

std::string KindName(const ::testing::TestParamInfo<StoreKind>& info) {
  return info.param == StoreKind::kSqlite ? "Sqlite" : "Postgres";
}

// One scratch KB target per test: a file in a TempDir, or a fresh PostgreSQL database.
class Scratch {
 public:
  explicit Scratch(StoreKind kind) {
    if (kind == StoreKind::kPostgres) {
      db_ = std::make_unique<PgDatabase>();
      if (db_->ok()) target_ = db_->url();
    } else {
      dir_ = std::make_unique<TempDir>("trove_kb_backend");
      target_ = dir_->Abs("kb.db");
    }
  }
  const std::string& target() const { return target_; }

 private:
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<PgDatabase> db_;
  std::string target_;
};

class KbBackendTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override { ASSERT_FALSE(scratch_.target().empty()); }
  std::unique_ptr<Kb> Open(bool create = true) {
    auto kb = Kb::Open(env_, scratch_.target(),
                       KbOptions{.create_if_missing = create, .project = "proj"});
    EXPECT_TRUE(kb.ok()) << kb.status().ToString();
    return kb.ok() ? std::move(*kb) : nullptr;
  }
  StoreResult StoreV1(Kb& kb, std::vector<SeedName> seeds = {}) {
    auto r =
        kb.StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), MakeFunctions(2, 4), seeds);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : StoreResult{};
  }

  base::PosixEnv env_;
  Scratch scratch_{GetParam()};
};

TEST_P(KbBackendTest, OpenChecksTheSchema) {
  if (GetParam() == StoreKind::kSqlite) {
    auto missing = Kb::Open(env_, scratch_.target());
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  } else {
    // An empty database is not a WARDEN KB unless asked to create one.
    auto empty = Kb::Open(env_, scratch_.target());
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.status().message().find("not a WARDEN database"), std::string::npos)
        << empty.status().ToString();
  }
  auto kb = Open();
  ASSERT_NE(kb, nullptr);
  EXPECT_EQ(*kb->Project(), "proj");
  EXPECT_EQ(KbTestPeer::Store(*kb).Kind(), GetParam());
  kb.reset();
  // Reopened without create: the same KB.
  auto again = Open(false);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(*again->Project(), "proj");
}

TEST_P(KbBackendTest, StoreVersionAndQueries) {
  auto kb = Open();
  ASSERT_NE(kb, nullptr);
  const auto functions = MakeFunctions(2, 4);
  const StoreResult r =
      StoreV1(*kb, {{.func_index = 2, .name = "main"},
                    {.func_index = 3, .name = "helper", .source = SeedSource::kGlue}});
  EXPECT_FALSE(r.already_ingested);
  EXPECT_EQ(r.label, "v1");
  EXPECT_EQ(r.seeds_accepted[static_cast<std::size_t>(SeedSource::kNameSection)], 1);
  EXPECT_EQ(r.seeds_accepted[static_cast<std::size_t>(SeedSource::kGlue)], 1);
  // The same bytes again: nothing written.
  auto same = kb->StoreVersion(MakeVersion("", std::string(64, 'a'), 2, 4), functions);
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_TRUE(same->already_ingested);
  EXPECT_EQ(same->version_id, r.version_id);
  // A duplicate label.
  auto dup = kb->StoreVersion(MakeVersion("v1", std::string(64, 'b'), 2, 4), functions);
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  // An automatic label.
  auto v2 = kb->StoreVersion(MakeVersion("", std::string(64, 'c'), 2, 4), functions);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->label, "v2");

  auto versions = kb->ListVersions();
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ((*versions)[0].label, "v1");
  EXPECT_EQ((*versions)[0].functions, 6);
  EXPECT_EQ((*versions)[0].size, 1234u);
  EXPECT_EQ(*kb->ResolveVersion(std::nullopt), v2->version_id);
  EXPECT_EQ(*kb->ResolveVersion("v1"), r.version_id);
  EXPECT_EQ(*kb->ResolveVersion(std::to_string(v2->version_id)), v2->version_id);
  EXPECT_EQ(kb->ResolveVersion("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(kb->GetVersion(999).status().code(), StatusCode::kNotFound);

  // Every stored record comes back as it went in (u32/u64 columns, blobs, JSON arrays).
  auto records = kb->FunctionRecords(r.version_id);
  ASSERT_TRUE(records.ok()) << records.status().ToString();
  ASSERT_EQ(records->size(), functions.size());
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const FunctionRecord& a = functions[i];
    const FunctionRecord& b = (*records)[i];
    EXPECT_EQ(a.func_index, b.func_index);
    EXPECT_EQ(a.is_import, b.is_import);
    EXPECT_EQ(a.stable_id, b.stable_id);
    EXPECT_EQ(a.type_signature, b.type_signature);
    EXPECT_EQ(a.import_field, b.import_field);
    EXPECT_EQ(a.call_outs, b.call_outs);
    EXPECT_EQ(a.defined_callees, b.defined_callees);
    EXPECT_EQ(a.body_offset, b.body_offset);
    EXPECT_EQ(a.referenced_strings, b.referenced_strings);
    EXPECT_EQ(a.opcodes, b.opcodes);
    if (!a.is_import) {
      EXPECT_EQ(a.minhash, b.minhash);
      EXPECT_EQ(a.histogram, b.histogram);
      EXPECT_EQ(a.norm_hash, b.norm_hash);
    }
  }
  auto facts = kb->GetFunctionFacts(r.version_id, 3);
  ASSERT_TRUE(facts.ok() && facts->has_value());
  EXPECT_EQ((*facts)->instruction_mnemonics.size(), 6u);

  // Callers: function d calls d-1 (twice).
  auto callers = kb->Callers(r.version_id, 3);
  ASSERT_TRUE(callers.ok()) << callers.status().ToString();
  EXPECT_EQ(*callers, std::vector<std::uint32_t>({4}));

  // Coverage and the placeholder count.
  ASSERT_TRUE(kb->HumanSetName(HumanChannel::kCli, functions[4].stable_id, "sub_1f").ok());
  auto coverage = kb->GetCoverage(r.version_id);
  ASSERT_TRUE(coverage.ok()) << coverage.status().ToString();
  EXPECT_EQ(coverage->defined, 4);
  EXPECT_EQ(coverage->named, 3);
  EXPECT_EQ(coverage->export_named, 2);
  EXPECT_EQ(coverage->human_named, 1);
  EXPECT_EQ(coverage->locked, 1);
  EXPECT_EQ(coverage->placeholder_named, 1);
  EXPECT_EQ(coverage->real_named, 2);
  ASSERT_TRUE(coverage->mean_confidence.has_value());
  EXPECT_DOUBLE_EQ(*coverage->mean_confidence, 1.0);

  // ListFunctions: paging, filters.
  FunctionQuery q{.version_id = r.version_id, .include_imports = true, .limit = 4};
  auto page1 = kb->ListFunctions(q);
  ASSERT_TRUE(page1.ok()) << page1.status().ToString();
  ASSERT_EQ(page1->functions.size(), 4u);
  ASSERT_TRUE(page1->next_cursor.has_value());
  q.cursor = page1->next_cursor;
  auto page2 = kb->ListFunctions(q);
  ASSERT_TRUE(page2.ok());
  ASSERT_EQ(page2->functions.size(), 2u);
  EXPECT_FALSE(page2->next_cursor.has_value());
  EXPECT_EQ(page2->functions[0].index, 4u);
  auto unnamed = kb->ListFunctions({.version_id = r.version_id, .unnamed_only = true});
  ASSERT_TRUE(unnamed.ok());
  ASSERT_EQ(unnamed->functions.size(), 1u);
  EXPECT_EQ(unnamed->functions[0].index, 5u);
  auto human = kb->ListFunctions({.version_id = r.version_id, .provenance = "human"});
  ASSERT_TRUE(human.ok());
  ASSERT_EQ(human->functions.size(), 1u);
  EXPECT_TRUE(human->functions[0].locked);
  auto below = kb->ListFunctions({.version_id = r.version_id, .below = 0.5});
  ASSERT_TRUE(below.ok());
  EXPECT_EQ(below->functions.size(), 1u);

  // ResolveFunction's forms.
  EXPECT_EQ(*kb->ResolveFunction(r.version_id, "3"), 3u);
  EXPECT_EQ(*kb->ResolveFunction(r.version_id, "func[5]"), 5u);
  EXPECT_EQ(*kb->ResolveFunction(r.version_id, functions[3].stable_id.substr(0, 13)), 3u);
  EXPECT_EQ(*kb->ResolveFunction(r.version_id, "import:env.imp1"), 1u);
  EXPECT_EQ(*kb->ResolveFunction(r.version_id, "main"), 2u);
  EXPECT_EQ(kb->ResolveFunction(r.version_id, "w1:1000").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(*kb->ResolveFunction(r.version_id, "w1:10000000"), 2u);
  EXPECT_EQ(kb->ResolveFunction(r.version_id, "w1:1000000g").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(kb->ResolveFunction(r.version_id, "nothing").status().code(), StatusCode::kNotFound);

  // The Oracle's version facts.
  EXPECT_EQ(*kb->VersionProducersJson(r.version_id), "{}");
  ASSERT_TRUE(kb->SetEmscriptenVersion(r.version_id, "3.1.50", "glue").ok());
  EXPECT_EQ(kb->SetEmscriptenVersion(999, "3.1.50", "glue").code(), StatusCode::kNotFound);
  EXPECT_EQ(kb->GetVersion(r.version_id)->emscripten_version, "3.1.50");
}

TEST_P(KbBackendTest, GateAndEvidence) {
  auto kb = Open();
  ASSERT_NE(kb, nullptr);
  const auto functions = MakeFunctions(2, 4);
  StoreV1(*kb);
  const std::string& id = functions[2].stable_id;
  auto a = kb->AgentPropose("offline", id, {.name = "guess", .summary = "s1", .confidence = 0.4});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->accepted);
  auto lower = kb->McpPropose(id, "other", std::nullopt, 0.3);
  ASSERT_TRUE(lower.ok());
  EXPECT_FALSE(lower->accepted);
  EXPECT_EQ(lower->rule, 7);
  auto oracle = kb->OracleWrite("fuzzy", id, {.name = "better", .confidence = 0.2});
  ASSERT_TRUE(oracle.ok());
  EXPECT_TRUE(oracle->accepted);
  EXPECT_EQ(oracle->rule, 6);
  auto human = kb->HumanSetName(HumanChannel::kLib, id, "final");
  ASSERT_TRUE(human.ok());
  EXPECT_TRUE(human->accepted);
  auto locked = kb->DiffCarry("v1", "v2", id, {.name = "carried", .confidence = 1.0});
  ASSERT_TRUE(locked.ok());
  EXPECT_FALSE(locked->accepted);
  EXPECT_EQ(locked->rule, 4);
  auto unknown = kb->McpPropose("w1:ffffffffffffffffffffffffffffffff", "x", std::nullopt, 0.5);
  ASSERT_TRUE(unknown.ok());
  EXPECT_FALSE(unknown->accepted);
  // NaN and infinity as the gate records them.
  ASSERT_TRUE(kb->McpPropose(id, "n", std::nullopt, std::nan("")).ok());
  ASSERT_TRUE(kb->McpPropose(id, "i", std::nullopt, INFINITY).ok());

  auto symbol = kb->GetSymbol(id);
  ASSERT_TRUE(symbol.ok() && symbol->has_value()) << symbol.status().ToString();
  const SymbolRecord& s = **symbol;
  EXPECT_EQ(s.name, "final");
  EXPECT_EQ(s.summary, "s1");  // kept from the first write
  EXPECT_EQ(s.provenance, "human");
  EXPECT_EQ(s.actor, "human:lib");
  EXPECT_TRUE(s.locked);
  ASSERT_EQ(s.evidence.size(), 7u);
  EXPECT_EQ(s.evidence[0].actor, "agent:offline");
  EXPECT_EQ(s.evidence[1].actor, "agent:mcp");
  EXPECT_FALSE(s.evidence[1].accepted);
  EXPECT_FALSE(s.evidence[5].confidence.has_value());
  ASSERT_TRUE(s.evidence[6].confidence.has_value());
  EXPECT_TRUE(std::isinf(*s.evidence[6].confidence));
  for (std::size_t i = 1; i < s.evidence.size(); ++i) {
    EXPECT_LT(s.evidence[i - 1].id, s.evidence[i].id);
  }
  EXPECT_TRUE(kb->Evidence("w1:ffffffffffffffffffffffffffffffff")->empty());

  // Clear.
  auto clear = kb->HumanClear(HumanChannel::kCli, id);
  ASSERT_TRUE(clear.ok());
  EXPECT_TRUE(clear->clears);
  auto cleared = kb->GetSymbol(id);
  EXPECT_FALSE((*cleared)->name.has_value());
  EXPECT_FALSE((*cleared)->locked);

  // The scans.
  auto symbols = KbTestPeer::Store(*kb).ScanSymbols();
  ASSERT_TRUE(symbols.ok());
  ASSERT_EQ(symbols->size(), 1u);
  auto evidence = KbTestPeer::Store(*kb).ScanEvidence(0, 100);
  ASSERT_TRUE(evidence.ok());
  EXPECT_EQ(evidence->size(), 8u);
  auto tail = KbTestPeer::Store(*kb).ScanEvidence((*evidence)[5].entry.id, 1);
  ASSERT_TRUE(tail.ok());
  ASSERT_EQ(tail->size(), 1u);
  EXPECT_EQ((*tail)[0].entry.id, (*evidence)[6].entry.id);
}

TEST_P(KbBackendTest, Diffs) {
  auto kb = Open();
  ASSERT_NE(kb, nullptr);
  const StoreResult v1 = StoreV1(*kb);
  auto v2 = kb->StoreVersion(MakeVersion("v2", std::string(64, 'b'), 2, 4), MakeFunctions(2, 4));
  ASSERT_TRUE(v2.ok());
  auto id = kb->StoreDiff(v1.version_id, v2->version_id, "{}", R"({"r":1})", "# one");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto again = kb->StoreDiff(v1.version_id, v2->version_id, "{}", R"({"r":2})", "# two");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(kb->StoreDiff(v1.version_id, 999, "{}", "{}", "").status().code(),
            StatusCode::kNotFound);
  auto diff = kb->GetDiff(v1.version_id, v2->version_id);
  ASSERT_TRUE(diff.ok() && diff->has_value());
  EXPECT_EQ((*diff)->report_json, R"({"r":2})");
  EXPECT_EQ((*diff)->changelog_md, "# two");
  auto list = kb->ListDiffs();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_TRUE((*list)[0].report_json.empty());
  EXPECT_FALSE(kb->GetDiff(v2->version_id, v1.version_id)->has_value());
}

INSTANTIATE_TEST_SUITE_P(Backends, KbBackendTest,
                         ::testing::Values(StoreKind::kSqlite, StoreKind::kPostgres), KindName);

// ---- PostgreSQL only

TEST(KbPgTest, EvidenceIsAppendOnly) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  base::PosixEnv env;
  auto kb = Kb::Open(env, db.url(), KbOptions{.create_if_missing = true});
  ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  ASSERT_TRUE((*kb)
                  ->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), MakeFunctions(2, 4),
                                 {{.func_index = 2, .name = "main"}})
                  .ok());
  auto conn = db.Connect();
  ASSERT_NE(conn, nullptr);
  for (const char* sql :
       {"UPDATE evidence SET accepted = 0", "DELETE FROM evidence", "TRUNCATE evidence",
        "INSERT INTO evidence(id, stable_id, at, actor, provenance, accepted, reason, "
        "details_json) SELECT id, 'x', at, actor, provenance, accepted, reason, details_json "
        "FROM evidence ON CONFLICT (id) DO UPDATE SET stable_id = excluded.stable_id"}) {
    Status status = conn->Exec(sql);
    EXPECT_FALSE(status.ok()) << sql;
    EXPECT_NE(status.message().find("evidence is append-only"), std::string::npos)
        << sql << ": " << status.ToString();
  }
  auto evidence = (*kb)->Evidence(MakeFunctions(2, 4)[2].stable_id);
  ASSERT_TRUE(evidence.ok());
  ASSERT_EQ(evidence->size(), 1u);
  EXPECT_EQ((*evidence)[0].name, "main");
  EXPECT_TRUE((*evidence)[0].accepted);
  // A plain duplicate id is refused by the primary key.
  EXPECT_FALSE(conn->Exec("INSERT INTO evidence(id, stable_id, at, actor, provenance, accepted, "
                          "reason, details_json) SELECT id, 'x', at, actor, provenance, "
                          "accepted, reason, details_json FROM evidence")
                   .ok());
}

TEST(KbPgTest, RefusesAForeignDatabase) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  auto conn = db.Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Exec("CREATE TABLE other (x int)").ok());
  base::PosixEnv env;
  auto kb = Kb::Open(env, db.url(), KbOptions{.create_if_missing = true});
  ASSERT_FALSE(kb.ok());
  EXPECT_EQ(kb.status().code(), StatusCode::kMalformed);
  EXPECT_NE(kb.status().message().find("not a WARDEN database (it has tables but no meta table)"),
            std::string::npos)
      << kb.status().ToString();
}

TEST(KbPgTest, NewerSchemaIsRefused) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  base::PosixEnv env;
  ASSERT_TRUE(Kb::Open(env, db.url(), KbOptions{.create_if_missing = true}).ok());
  auto conn = db.Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Exec("UPDATE meta SET value = '2' WHERE key = 'schema_version'").ok());
  auto kb = Kb::Open(env, db.url());
  ASSERT_FALSE(kb.ok());
  EXPECT_EQ(kb.status().code(), StatusCode::kUnsupported);
}

// Several processes write the same few symbols through every path at once. Afterwards the
// evidence trail, replayed in id order through the §6.2 rule, reproduces every verdict and
// the final symbols, and every successful call has its evidence row.
TEST(KbPgConcurrencyTest, ProcessesWritingOneKb) {
  PgDatabase db;
  ASSERT_TRUE(db.ok());
  base::PosixEnv env;
  const auto functions = MakeFunctions(0, 4);
  {
    auto kb = Kb::Open(env, db.url(), KbOptions{.create_if_missing = true});
    ASSERT_TRUE(kb.ok()) << kb.status().ToString();
    ASSERT_TRUE((*kb)->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 0, 4), functions).ok());
  }
  constexpr int kProcesses = 4;
  const char* steps_env = std::getenv("WARDEN_PG_CONCURRENCY_STEPS");
  const int steps = steps_env != nullptr ? std::atoi(steps_env) : 150;
  int pipes[kProcesses][2];
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    ASSERT_EQ(pipe(pipes[p]), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(pipes[p][0]);
      base::PosixEnv child_env;
      auto kb = Kb::Open(child_env, db.url());
      if (!kb.ok()) _exit(2);
      std::mt19937 rng(1000 + p);
      int ok = 0;
      for (int i = 0; i < steps; ++i) {
        const std::string& id = functions[rng() % functions.size()].stable_id;
        const double c = static_cast<double>(rng() % 1000) / 1000.0;
        const std::string name = fmt::format("n{}", rng() % 5);
        Result<Decision> d = Status::Internal("unset");
        switch (rng() % 5) {
          case 0:
            d = (*kb)->HumanSetName(HumanChannel::kLib, id, name);
            break;
          case 1:
            d = (*kb)->HumanClear(HumanChannel::kCli, id);
            break;
          case 2:
            d = (*kb)->OracleWrite("fuzzy", id, {.name = name, .confidence = c});
            break;
          case 3:
            d = (*kb)->AgentPropose("offline", id, {.name = name, .confidence = c});
            break;
          default:
            d = (*kb)->McpPropose(id, name, std::nullopt, c);
            break;
        }
        if (!d.ok()) _exit(3);
        ++ok;
      }
      const std::string count = std::to_string(ok);
      if (write(pipes[p][1], count.data(), count.size()) < 0) _exit(4);
      _exit(0);
    }
    close(pipes[p][1]);
    children.push_back(pid);
  }
  std::int64_t successes = 0;
  for (int p = 0; p < kProcesses; ++p) {
    int status = 0;
    ASSERT_EQ(waitpid(children[p], &status, 0), children[p]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker " << p << " " << status;
    char buf[32] = {};
    const ssize_t n = read(pipes[p][0], buf, sizeof(buf) - 1);
    close(pipes[p][0]);
    if (n > 0) successes += std::atoll(buf);
  }
  EXPECT_EQ(successes, static_cast<std::int64_t>(kProcesses) * steps);

  auto kb = Kb::Open(env, db.url());
  ASSERT_TRUE(kb.ok());
  auto evidence = KbTestPeer::Store(**kb).ScanEvidence(0, SIZE_MAX);
  ASSERT_TRUE(evidence.ok()) << evidence.status().ToString();
  EXPECT_EQ(static_cast<std::int64_t>(evidence->size()), successes)
      << "one evidence row per successful write, none lost, none duplicated";
  // Serial replay through the pure rule.
  std::map<std::string, std::optional<ExistingSymbol>> model;
  for (const ScannedEvidence& e : *evidence) {
    std::optional<ExistingSymbol>& slot = model[e.stable_id];
    SymbolWrite w{.name = e.entry.name,
                  .summary = e.entry.summary,
                  .provenance = e.entry.provenance,
                  .actor = e.entry.actor,
                  .confidence = e.entry.confidence.value_or(std::nan(""))};
    const Decision d = Decide(slot, w);
    ASSERT_EQ(d.accepted, e.entry.accepted)
        << "evidence id " << e.entry.id << ": " << e.entry.reason;
    ASSERT_EQ(d.reason, e.entry.reason) << "evidence id " << e.entry.id;
    if (!d.accepted) continue;
    ExistingSymbol next{.name = w.name,
                        .summary = slot.has_value() ? slot->summary : std::nullopt,
                        .provenance = w.provenance,
                        .actor = w.actor,
                        .confidence = d.clears ? 0.0 : w.confidence,
                        .locked = !d.clears && w.provenance == "human"};
    if (d.clears) next.summary = std::nullopt;
    slot = next;
  }
  for (const auto& [id, expected] : model) {
    auto s = (*kb)->GetSymbol(id);
    ASSERT_TRUE(s.ok() && s->has_value()) << id;
    EXPECT_EQ((*s)->name, expected->name) << id;
    EXPECT_EQ((*s)->provenance, expected->provenance) << id;
    EXPECT_EQ((*s)->actor, expected->actor) << id;
    EXPECT_EQ((*s)->confidence, expected->confidence) << id;
    EXPECT_EQ((*s)->locked, expected->locked) << id;
  }
}

}  // namespace
}  // namespace trove::warden::kb

// Copying a KB between back ends (Kb::CopyInto, stored_rows.h; `warden kb migrate`,
// docs/decisions/0091-warden-kb-migrate.md): every pair of SQLite and PostgreSQL, rows and
// ids identical afterwards, identity sequences moved past the copied ids, a non-empty target
// refused without change, batched scans in key order, and the U+0000 rule (a name or summary
// with U+0000 rejected by the gate on both back ends, its evidence escaped; a stored text with
// one refused by a PostgreSQL target instead of being cut). Runs on the ctest fixture "pg".
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "base/env.h"
#include "base/testing/pg_server.h"
#include "base/testing/temp_dir.h"
#include "warden/kb/economy.h"
#include "warden/kb/kb.h"
#include "warden/kb/stored_rows_sql.h"
#include "warden/kb/testing/kb_test_peer.h"

namespace trove::warden::kb {
namespace {

using base::StatusCode;
using base::testing::PgDatabase;
using base::testing::TempDir;
using testing::MakeFunctions;
using testing::MakeVersion;
using namespace std::string_literals;

const char* KindName(StoreKind kind) { return kind == StoreKind::kSqlite ? "Sqlite" : "Postgres"; }

// One scratch KB target: a file in a TempDir, or a fresh PostgreSQL database.
class Scratch {
 public:
  Scratch(StoreKind kind, const std::string& file) {
    if (kind == StoreKind::kPostgres) {
      db_ = std::make_unique<PgDatabase>();
      if (db_->ok()) target_ = db_->url();
    } else {
      dir_ = std::make_unique<TempDir>("trove_kb_copy");
      target_ = dir_->Abs(file);
    }
  }
  const std::string& target() const { return target_; }

 private:
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<PgDatabase> db_;
  std::string target_;
};

std::unique_ptr<Kb> OpenKb(base::Env& env, const std::string& target, std::string project) {
  auto kb = Kb::Open(env, target, KbOptions{.create_if_missing = true, .project = project});
  EXPECT_TRUE(kb.ok()) << kb.status().ToString();
  return kb.ok() ? std::move(*kb) : nullptr;
}

// Every row of every table, read back through ScanRows.
std::map<KbTable, std::vector<StoredRow>> AllRows(Kb& kb, std::size_t batch = 1000) {
  std::map<KbTable, std::vector<StoredRow>> out;
  for (const KbTable table : kKbTables) {
    std::vector<StoredRow>& rows = out[table];
    Status s =
        KbTestPeer::Store(kb).ScanRows(table, batch, [&](std::vector<StoredRow>& batch_rows) {
          EXPECT_LE(batch_rows.size(), batch);
          for (StoredRow& r : batch_rows) rows.push_back(std::move(r));
          return Status::Ok();
        });
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  return out;
}

// A KB with something in every table: two versions (glue, Emscripten version), seeds, every
// write path, rejected writes, NaN and infinite confidences in evidence, a clear, a diff.
void Fill(Kb& kb) {
  const auto f1 = MakeFunctions(2, 6);
  VersionRecord v1 = MakeVersion("v1", std::string(64, 'a'), 2, 6);
  v1.glue_path = "/tmp/m.js";
  v1.glue_json = R"({"exports":["main"]})";
  v1.emscripten_version = "3.1.6";
  v1.emscripten_version_source = "glue";
  v1.features_json = R"(["+simd128"])";
  auto r1 = kb.StoreVersion(v1, f1, {{.func_index = 2, .name = "main"}});
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  auto f2 = MakeFunctions(2, 7);
  f2[3].raw_name = "caf\xc3\xa9";
  auto r2 = kb.StoreVersion(MakeVersion("v2", std::string(64, 'b'), 2, 7), f2,
                            {{.func_index = 4, .name = "glued", .source = SeedSource::kGlue}});
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  const std::string& id = f1[3].stable_id;
  ASSERT_TRUE(
      kb.AgentPropose("offline", id, {.name = "guess", .summary = "s", .confidence = 0.4}).ok());
  ASSERT_TRUE(kb.McpPropose(id, "lower", std::nullopt, 0.3).ok());
  ASSERT_TRUE(kb.OracleWrite("fuzzy", id, {.name = "better", .confidence = 0.2}).ok());
  ASSERT_TRUE(kb.HumanSetName(HumanChannel::kCli, id, "final", "the \xe2\x82\xac part").ok());
  ASSERT_TRUE(kb.DiffCarry("v1", "v2", id, {.name = "carried", .confidence = 1.0}).ok());
  ASSERT_TRUE(kb.McpPropose(f1[4].stable_id, "n", std::nullopt, std::nan("")).ok());
  ASSERT_TRUE(kb.McpPropose(f1[4].stable_id, "i", std::nullopt, INFINITY).ok());
  ASSERT_TRUE(kb.McpPropose(f1[5].stable_id, "a\xff", std::nullopt, 0.5).ok());
  ASSERT_TRUE(kb.HumanSetName(HumanChannel::kLib, f1[6].stable_id, "tmp").ok());
  ASSERT_TRUE(kb.HumanClear(HumanChannel::kLib, f1[6].stable_id).ok());
  ASSERT_TRUE(kb.SetEmscriptenVersion(r2->version_id, "3.1.7", "oracle-vote").ok());
  // Stored twice: the second replaces the first (SQLite may reuse the id, PostgreSQL not).
  ASSERT_TRUE(kb.StoreDiff(r1->version_id, r2->version_id, "{}", "{\"a\":1}", "# old").ok());
  ASSERT_TRUE(kb.StoreDiff(r1->version_id, r2->version_id, "{\"p\":2}", "{\"a\":2}", "# v1").ok());
}

class KbCopyTest : public ::testing::TestWithParam<std::tuple<StoreKind, StoreKind>> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(from_.target().empty());
    ASSERT_FALSE(to_.target().empty());
  }
  base::PosixEnv env_;
  Scratch from_{std::get<0>(GetParam()), "from.db"};
  Scratch to_{std::get<1>(GetParam()), "to.db"};
};

TEST_P(KbCopyTest, CopiesEveryRowWithItsIds) {
  auto source = OpenKb(env_, from_.target(), "proj");
  ASSERT_NE(source, nullptr);
  ASSERT_NO_FATAL_FAILURE(Fill(*source));
  auto target = OpenKb(env_, to_.target(), "other");
  ASSERT_NE(target, nullptr);

  std::vector<std::string> progress;
  auto copied =
      source->CopyInto(*target, [&](std::string_view table, std::int64_t done, std::int64_t total) {
        progress.push_back(fmt::format("{} {}/{}", table, done, total));
      });
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  ASSERT_EQ(copied->size(), std::size(kKbTables));
  for (const TableCopy& t : *copied) {
    EXPECT_EQ(t.source, t.copied) << t.table;
    EXPECT_EQ(t.source, t.target) << t.table;
  }
  EXPECT_EQ((*copied)[0].table, "meta");
  EXPECT_EQ((*copied)[2].table, "functions");
  EXPECT_EQ((*copied)[2].source, 8 + 9);
  EXPECT_FALSE(progress.empty());

  // Every row, byte for byte, ids included; the target's project is the source's.
  const auto want = AllRows(*source);
  const auto got = AllRows(*target);
  for (const KbTable table : kKbTables) {
    EXPECT_EQ(got.at(table), want.at(table)) << SpecOf(table).name;
  }
  EXPECT_EQ(*target->Project(), "proj");
  // And through the API.
  EXPECT_EQ(target->ListVersions()->size(), 2u);
  auto versions = source->ListVersions();
  ASSERT_TRUE(versions.ok());
  for (const VersionInfo& v : *versions) {
    auto w = target->GetVersion(v.id);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w->label, v.label);
    EXPECT_EQ(w->ingested_at, v.ingested_at);
    EXPECT_EQ(w->emscripten_version, v.emscripten_version);
  }
  auto sym = target->GetSymbol(MakeFunctions(2, 6)[3].stable_id);
  ASSERT_TRUE(sym.ok() && sym->has_value());
  EXPECT_EQ((*sym)->name, "final");
  EXPECT_TRUE((*sym)->locked);
  EXPECT_EQ((*sym)->evidence.size(), 5u);

  // New rows continue after the copied ids.
  std::int64_t max_evidence = 0;
  for (const StoredRow& row : want.at(KbTable::kEvidence)) {
    max_evidence = std::max(max_evidence, std::get<std::int64_t>(row[0]));
  }
  const std::string id = MakeFunctions(2, 6)[5].stable_id;
  ASSERT_TRUE(target->McpPropose(id, "after", std::nullopt, 0.9).ok());
  auto trail = target->Evidence(id);
  ASSERT_TRUE(trail.ok());
  ASSERT_FALSE(trail->empty());
  EXPECT_EQ(trail->back().id, max_evidence + 1);
  auto v3 =
      target->StoreVersion(MakeVersion("v3", std::string(64, 'c'), 2, 3), MakeFunctions(2, 3));
  ASSERT_TRUE(v3.ok()) << v3.status().ToString();
  EXPECT_EQ(v3->version_id, 3);
  auto diff = target->StoreDiff(1, 3, "{}", "{}", "");
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  EXPECT_GT(*diff, std::get<std::int64_t>(want.at(KbTable::kDiffs).back()[0]));
}

TEST_P(KbCopyTest, RefusesATargetThatIsNotEmpty) {
  auto source = OpenKb(env_, from_.target(), "proj");
  ASSERT_NE(source, nullptr);
  ASSERT_NO_FATAL_FAILURE(Fill(*source));
  auto target = OpenKb(env_, to_.target(), "other");
  ASSERT_NE(target, nullptr);
  auto v = target->StoreVersion(MakeVersion("mine", std::string(64, 'f'), 2, 3),
                                MakeFunctions(2, 3), {{.func_index = 2, .name = "kept"}});
  ASSERT_TRUE(v.ok());
  const auto before = AllRows(*target);
  auto copied = source->CopyInto(*target);
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(copied.status().message().find("not empty (it holds 1 version, 5 functions, 1 symbol, "
                                           "1 evidence row)"),
            std::string::npos)
      << copied.status().ToString();
  // Unchanged, and still writable.
  const auto after = AllRows(*target);
  for (const KbTable table : kKbTables) EXPECT_EQ(after.at(table), before.at(table));
  EXPECT_EQ(*target->Project(), "other");
  EXPECT_TRUE(target->McpPropose(MakeFunctions(2, 3)[3].stable_id, "x", std::nullopt, 0.5).ok());
}

INSTANTIATE_TEST_SUITE_P(
    Backends, KbCopyTest,
    ::testing::Combine(::testing::Values(StoreKind::kSqlite, StoreKind::kPostgres),
                       ::testing::Values(StoreKind::kSqlite, StoreKind::kPostgres)),
    [](const ::testing::TestParamInfo<std::tuple<StoreKind, StoreKind>>& p) {
      return fmt::format("{}To{}", KindName(std::get<0>(p.param)), KindName(std::get<1>(p.param)));
    });

class KbScanTest : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override { ASSERT_FALSE(scratch_.target().empty()); }
  base::PosixEnv env_;
  Scratch scratch_{GetParam(), "kb.db"};
};

// Keyset batches (one key column, or version_id + func_index) give every row once, in key
// order, whatever the batch size.
TEST_P(KbScanTest, BatchesGiveEveryRowInKeyOrder) {
  auto kb = OpenKb(env_, scratch_.target(), "proj");
  ASSERT_NE(kb, nullptr);
  ASSERT_NO_FATAL_FAILURE(Fill(*kb));
  const auto whole = AllRows(*kb);
  EXPECT_EQ(whole.at(KbTable::kFunctions).size(), 17u);
  EXPECT_EQ(whole.at(KbTable::kMeta).size(), 3u);
  for (const std::size_t batch : {1u, 2u, 3u, 16u}) {
    const auto batched = AllRows(*kb, batch);
    for (const KbTable table : kKbTables) {
      EXPECT_EQ(batched.at(table), whole.at(table)) << SpecOf(table).name << " batch " << batch;
    }
  }
  // Key order: functions by (version_id, func_index), symbols by stable_id, bytewise.
  const auto& functions = whole.at(KbTable::kFunctions);
  for (std::size_t i = 1; i < functions.size(); ++i) {
    const auto key = [](const StoredRow& r) {
      return std::pair(std::get<std::int64_t>(r[0]), std::get<std::int64_t>(r[1]));
    };
    EXPECT_LT(key(functions[i - 1]), key(functions[i]));
  }
  const auto& symbols = whole.at(KbTable::kSymbols);
  for (std::size_t i = 1; i < symbols.size(); ++i) {
    EXPECT_LT(std::get<std::string>(symbols[i - 1][0]), std::get<std::string>(symbols[i][0]));
  }
  // A failing batch stops the scan with its status.
  int calls = 0;
  Status stopped = KbTestPeer::Store(*kb).ScanRows(KbTable::kFunctions, 2, [&](auto&) {
    ++calls;
    return Status::Cancelled("enough");
  });
  EXPECT_EQ(stopped.code(), StatusCode::kCancelled);
  EXPECT_EQ(calls, 1);
  // Symbols go in only through economy.cc's statement.
  auto restore = KbTestPeer::Store(*kb).BeginRestore();
  EXPECT_EQ(restore.status().code(), StatusCode::kAlreadyExists);
}

TEST_P(KbScanTest, RestoreWritesSymbolsOnlyThroughTheEconomyStatement) {
  auto kb = OpenKb(env_, scratch_.target(), "proj");
  ASSERT_NE(kb, nullptr);
  auto restore = KbTestPeer::Store(*kb).BeginRestore();
  ASSERT_TRUE(restore.ok()) << restore.status().ToString();
  const StoredRow row = {"w1:00"s,
                         "n"s,
                         std::monostate(),
                         std::monostate(),
                         "human"s,
                         "human:cli"s,
                         1.0,
                         std::int64_t{1},
                         "2024-01-01T00:00:00.000Z"s,
                         "2024-01-01T00:00:00.000Z"s};
  EXPECT_EQ((*restore)->RestoreRows(KbTable::kSymbols, {&row, 1}).code(),
            StatusCode::kInvalidArgument);
  // The economy's statement names the columns of the symbols spec, in order.
  EXPECT_NE(internal::kRestoreSymbolSql.find(
                fmt::format("({})", internal::ColumnList(SpecOf(KbTable::kSymbols)))),
            std::string_view::npos)
      << internal::kRestoreSymbolSql;
  ASSERT_TRUE((*restore)->RestoreSymbols(internal::kRestoreSymbolSql, {&row, 1}).ok());
  ASSERT_TRUE((*restore)->Commit().ok());
  auto symbols = KbTestPeer::Store(*kb).ScanSymbols();
  ASSERT_TRUE(symbols.ok());
  ASSERT_EQ(symbols->size(), 1u);
  EXPECT_EQ((*symbols)[0].name, "n");
  EXPECT_TRUE((*symbols)[0].locked);
}

// docs/warden.md §6.2 rule 1: PostgreSQL text cannot hold U+0000, so no back end takes a name
// or summary with one; the attempt's evidence records it escaped.
TEST_P(KbScanTest, NulInNameOrSummaryIsRejectedAndEscapedInEvidence) {
  auto kb = OpenKb(env_, scratch_.target(), "proj");
  ASSERT_NE(kb, nullptr);
  const auto functions = MakeFunctions(2, 4);
  ASSERT_TRUE(kb->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), functions).ok());
  const std::string& id = functions[2].stable_id;
  auto named = kb->McpPropose(id, "a\0b"s, std::nullopt, 0.5);
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_FALSE(named->accepted);
  EXPECT_EQ(named->rule, 1);
  EXPECT_EQ(named->reason, "rejected: invalid write: name contains U+0000");
  auto summary = kb->HumanSetName(HumanChannel::kLib, id, "ok", "sum\0mary"s);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_FALSE(summary->accepted);
  EXPECT_EQ(summary->reason, "rejected: invalid write: summary contains U+0000");
  auto trail = kb->Evidence(id);
  ASSERT_TRUE(trail.ok());
  ASSERT_EQ(trail->size(), 2u);
  EXPECT_EQ((*trail)[0].name, "a\\x00b");
  EXPECT_EQ((*trail)[1].name, "ok");
  EXPECT_EQ((*trail)[1].summary, "sum\\x00mary");
  auto symbol = kb->GetSymbol(id);
  ASSERT_TRUE(symbol.ok());
  EXPECT_FALSE(symbol->has_value());
  // A seed with U+0000 is rejected the same way (the version is stored, the name is not).
  const auto more = MakeFunctions(2, 5);
  auto stored = kb->StoreVersion(MakeVersion("v2", std::string(64, 'b'), 2, 5), more,
                                 {{.func_index = 6, .name = "x\0y"s}});
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->seeds_rejected[0], 1);
}

INSTANTIATE_TEST_SUITE_P(Backends, KbScanTest,
                         ::testing::Values(StoreKind::kSqlite, StoreKind::kPostgres),
                         [](const ::testing::TestParamInfo<StoreKind>& p) {
                           return std::string(KindName(p.param));
                         });

// A SQLite KB can hold U+0000 in text the gate never saw (a name-section name): PostgreSQL
// would cut it at the NUL, so the copy is refused, naming the row, and nothing is committed.
TEST(KbCopyNulTest, PostgresTargetRefusesTextWithNul) {
  base::PosixEnv env;
  Scratch from(StoreKind::kSqlite, "from.db");
  Scratch to(StoreKind::kPostgres, "");
  ASSERT_FALSE(to.target().empty());
  auto source = OpenKb(env, from.target(), "proj");
  ASSERT_NE(source, nullptr);
  auto functions = MakeFunctions(2, 4);
  functions[3].raw_name = "bad\0name"s;
  ASSERT_TRUE(source->StoreVersion(MakeVersion("v1", std::string(64, 'a'), 2, 4), functions).ok());
  auto target = OpenKb(env, to.target(), "other");
  ASSERT_NE(target, nullptr);
  auto copied = source->CopyInto(*target);
  ASSERT_FALSE(copied.ok());
  EXPECT_EQ(copied.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(copied.status().message().find("functions (1, 3): raw_name holds U+0000"),
            std::string::npos)
      << copied.status().ToString();
  EXPECT_TRUE(target->ListVersions()->empty());
  EXPECT_EQ(*target->Project(), "other");
}

}  // namespace
}  // namespace trove::warden::kb

// The Oracle store on PostgreSQL (pg_backend.cc, docs/decisions/0083), beyond the backend suite
// of store_test.cc: the LSH bucket lookup is an index scan of oracle_lsh's primary key; a store
// built from the same corpus in SQLite and in PostgreSQL gives the same matches and the same
// identify report; a server that is down is kUnavailable and no message carries the password.
#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "base/env.h"
#include "base/pg.h"
#include "base/testing/pg_server.h"
#include "base/testing/temp_dir.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"
#include "warden/oracle/oracle.h"
#include "warden/oracle/store.h"
#include "warden/oracle/target.h"

namespace trove::warden::oracle {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFixtures = std::string(TROVE_SOURCE_DIR) + "/testdata/warden/fixtures/";

// Every field of a match result, as text: two results are equal when their texts are.
std::string Describe(const MatchResult& r) {
  std::string out = fmt::format("defined {}; per pass", r.defined);
  for (std::int64_t n : r.per_pass) out += fmt::format(" {}", n);
  const Refusals& f = r.refusals;
  out += fmt::format("; refused {} {} {} {} {} {} {} {}\n", f.imports, f.too_small,
                     f.ambiguous_target, f.ambiguous_name, f.name_taken, f.fuzzy_below,
                     f.fuzzy_not_mutual, f.inconsistent);
  for (const auto& [version, weight] : r.vote) out += fmt::format("vote {} {}\n", version, weight);
  for (const Match& m : r.matches) {
    out += fmt::format("{} {} {} {} {} {} {} {} {} {} {} {}", m.func_index, m.stable_id,
                       PassName(m.pass), m.score, m.confidence, m.name, m.name_norm, m.library,
                       m.emscripten_version, m.opt_level, m.signature_id, m.candidates);
    if (m.components) out += fmt::format(" {}", m.components->overall);
    out += "\n";
  }
  return out;
}

Status Build(base::Env& env, OracleStore& store, const std::string& module,
             const std::string& library, const std::string& opt) {
  ASSIGN_OR_RETURN(std::string bytes, env.ReadFile(kFixtures + module));
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  BuildOptions o{.library = library, .emscripten_version = "3.1.6", .opt_level = opt};
  BuildCounts counts;
  return AddModule(store, std::span<const std::uint8_t>(data, bytes.size()), kFixtures + module, o,
                   counts);
}

TEST(OraclePgTest, BucketLookupIsAnIndexScanOfTheLshKey) {
  base::testing::PgDatabase db;
  ASSERT_TRUE(db.ok());
  auto store = OracleStore::Open(db.url(), true);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto conn = db.Connect();
  ASSERT_NE(conn, nullptr);
  // The planner prefers a sequential scan on a tiny table; ask it what it would do with an index.
  ASSERT_TRUE(conn->Exec("SET enable_seqscan = off").ok());
  auto plan = conn->Prepare(
      "EXPLAIN SELECT sig_id FROM oracle_lsh WHERE band = 3 AND bucket = 12345 ORDER BY sig_id "
      "LIMIT 65");
  ASSERT_TRUE(plan.ok());
  std::string text;
  for (;;) {
    auto row = plan->Step();
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    if (!*row) break;
    text += plan->ColumnText(0) + "\n";
  }
  EXPECT_THAT(text, HasSubstr("oracle_lsh_pkey")) << text;
  EXPECT_THAT(text, Not(HasSubstr("Sort"))) << text;  // the key's order is sig_id's
  // Ids and counts are bigint; text sorts in byte order.
  auto types = conn->Prepare(
      "SELECT column_name, data_type, coalesce(collation_name, '') FROM "
      "information_schema.columns WHERE table_name = 'oracle_signatures' AND column_name IN "
      "('id', 'instruction_count', 'name') ORDER BY column_name");
  ASSERT_TRUE(types.ok());
  std::string columns;
  for (;;) {
    auto row = types->Step();
    ASSERT_TRUE(row.ok());
    if (!*row) break;
    columns += types->ColumnText(0) + " " + types->ColumnText(1) + " " + types->ColumnText(2) + ";";
  }
  EXPECT_EQ(columns, "id bigint ;instruction_count bigint ;name text C;");
}

TEST(OraclePgTest, SameCorpusGivesTheSameMatchesAsSqlite) {
  base::PosixEnv env;
  base::testing::TempDir dir("trove_oracle_pg");
  base::testing::PgDatabase db;
  ASSERT_TRUE(db.ok());
  auto sqlite = OracleStore::Open(dir.path() + "/oracle.db", true);
  auto pg = OracleStore::Open(db.url(), true);
  ASSERT_TRUE(sqlite.ok()) << sqlite.status().ToString();
  ASSERT_TRUE(pg.ok()) << pg.status().ToString();
  for (OracleStore* store : {sqlite->get(), pg->get()}) {
    // Two builds of the same program: many duplicates across modules and within the corpus.
    ASSERT_TRUE(Build(env, *store, "app-O0-named.wasm", "app", "O0").ok());
    ASSERT_TRUE(Build(env, *store, "app-O2-named.wasm", "app", "O2").ok());
    ASSERT_TRUE(Build(env, *store, "app-O2-named.wasm", "app", "O2").ok());  // all duplicates
    ASSERT_TRUE(Build(env, *store, "threads-Oz-named.wasm", "threads", "Oz").ok());
  }
  auto stats_sqlite = (*sqlite)->Stats();
  auto stats_pg = (*pg)->Stats();
  ASSERT_TRUE(stats_sqlite.ok() && stats_pg.ok());
  EXPECT_GT(stats_sqlite->signatures, 0);
  EXPECT_EQ(stats_sqlite->signatures, stats_pg->signatures);
  EXPECT_EQ(stats_sqlite->libraries, stats_pg->libraries);
  EXPECT_EQ(stats_sqlite->emscripten_versions, stats_pg->emscripten_versions);
  EXPECT_EQ(*(*sqlite)->NameLibraries(), *(*pg)->NameLibraries());

  kb::KbOptions options;
  options.create_if_missing = true;
  auto kb = kb::Kb::Open(env, dir.path() + "/w.db", options);
  ASSERT_TRUE(kb.ok()) << kb.status().ToString();
  for (const std::string target : {"app-O2.wasm", "threads-O2.wasm", "app-Oz.wasm"}) {
    SCOPED_TRACE(target);
    ingest::IngestOptions io;
    io.label = target;
    auto ingested = ingest::IngestFile(env, **kb, kFixtures + target, io);
    ASSERT_TRUE(ingested.ok()) << ingested.status().ToString();
    const std::int64_t v = ingested->store.version_id;
    auto records = (*kb)->FunctionRecords(v);
    ASSERT_TRUE(records.ok());
    for (bool preload : {false, true}) {
      MatchOptions mo;
      mo.preload = preload;
      auto a = MatchFunctions(*records, **sqlite, mo);
      auto b = MatchFunctions(*records, **pg, mo);
      ASSERT_TRUE(a.ok()) << a.status().ToString();
      ASSERT_TRUE(b.ok()) << b.status().ToString();
      EXPECT_FALSE(a->matches.empty());
      // Signature ids included: PostgreSQL numbers the rows as SQLite does.
      EXPECT_EQ(Describe(*a), Describe(*b)) << (preload ? "preloaded" : "queries");
    }
    IdentifyOptions dry;
    dry.dry_run = true;
    auto ra = Identify(**kb, v, **sqlite, dry);
    auto rb = Identify(**kb, v, **pg, dry);
    ASSERT_TRUE(ra.ok()) << ra.status().ToString();
    ASSERT_TRUE(rb.ok()) << rb.status().ToString();
    EXPECT_EQ(rb->store_path, db.url());  // no password in this URL: shown as given
    ra->store_path = rb->store_path = "";
    EXPECT_EQ(ReportJson(*ra), ReportJson(*rb));
  }
}

TEST(OraclePgTest, ServerDownIsUnavailableAndThePasswordIsNeverShown) {
  // Nothing listens on port 1 of the loopback.
  const std::string url =
      "postgresql://trove:s3cr3t-pw@127.0.0.1:1/oracle?connect_timeout=2&gssencmode=disable";
  auto store = OracleStore::Open(url, true);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), base::StatusCode::kUnavailable) << store.status().ToString();
  EXPECT_THAT(store.status().ToString(), Not(HasSubstr("s3cr3t-pw")));
  EXPECT_THAT(store.status().ToString(), HasSubstr("127.0.0.1"));
  EXPECT_EQ(StoreDisplayName(url).find("s3cr3t-pw"), std::string::npos);
  EXPECT_EQ(StoreDisplayName("/tmp/oracle.db"), "/tmp/oracle.db");
}

TEST(OraclePgTest, PasswordUrlOverTcpWorksAndIsRedactedInReports) {
  base::testing::PgDatabase db;
  ASSERT_TRUE(db.ok());
  const std::string url = db.tcp_url_with_password();
  ASSERT_FALSE(db.server().password.empty());
  auto store = OracleStore::Open(url, true);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_THAT((*store)->path(), Not(HasSubstr(db.server().password)));
  EXPECT_THAT((*store)->path(), HasSubstr("127.0.0.1"));
  // A second client of the same database sees the first one's signatures.
  Signature s;
  s.name = s.name_norm = "shared";
  s.library = "musl";
  s.exact_hash = std::string(64, 'a');
  s.norm_hash = s.structural_hash = std::string(32, 'b');
  s.instruction_count = 25;
  ASSERT_TRUE((*store)->Add({s}).ok());
  auto other = OracleStore::Open(db.url(), false);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto found = (*other)->ByExact(s.exact_hash);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ(found->front()->name, "shared");
}

TEST(OraclePgTest, KbAndStoreShareOneDatabase) {
  // The store's tables are prefixed, so a database that already holds other tables (a team's
  // KB) takes the store beside them.
  base::testing::PgDatabase db;
  ASSERT_TRUE(db.ok());
  auto conn = db.Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Exec("CREATE TABLE meta (key text PRIMARY KEY, value text)").ok());
  auto store = OracleStore::Open(db.url(), true);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto count = (*store)->Count();
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, 0);
}

}  // namespace
}  // namespace trove::warden::oracle

// Stored packs through a real bootstrap of a fixture workspace (no mocks): pattern and decision
// packs, the include graph through compile_commands.json, ranks, invalidation on re-index, the
// schema 5 -> 6 migration, outcome counters and episodes.
#include "librarian/packs/packs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "base/cancellation.h"
#include "base/sqlite.h"
#include "librarian/index/bootstrap.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::packs {
namespace {

TEST(PacksTest, ParameterCount) {
  EXPECT_EQ(ParameterCount("(int a, int b)"), 2);
  EXPECT_EQ(ParameterCount("()"), 0);
  EXPECT_EQ(ParameterCount("(void)"), 0);
  EXPECT_EQ(ParameterCount("(std::map<int, int> m)"), 1);
  EXPECT_EQ(ParameterCount("(f(int, int) cb, x)"), 2);
  EXPECT_EQ(ParameterCount("int"), -1);
}

TEST(PacksTest, MinePatternsNeedsThreeMembersInTwoFiles) {
  const std::vector<FunctionInfo> fns = {
      {"fn:a.cc::get_x", "get_x", "function", "(int a)", "a.cc", 1},
      {"fn:a.cc::get_y", "get_y", "function", "(int b)", "a.cc", 5},
      {"fn:b.cc::getZ", "getZ", "function", "(long c)", "b.cc", 1},
      {"fn:b.cc::get_w", "get_w", "function", "(int a, int b)", "b.cc", 9},
      {"fn:c.cc::set_a", "set_a", "function", "(int a)", "c.cc", 1},
      {"fn:c.cc::set_b", "set_b", "function", "(int a)", "c.cc", 2},
      {"fn:c.cc::set_c", "set_c", "function", "(int a)", "c.cc", 3},
  };
  const std::vector<PatternGroup> groups = MinePatterns(fns);
  ASSERT_EQ(groups.size(), 1u);  // set_* is in one file only; get_w has two parameters
  EXPECT_EQ(groups[0].leading_word, "get");
  EXPECT_EQ(groups[0].parameters, 1);
  EXPECT_EQ(groups[0].members.size(), 3u);
  EXPECT_EQ(groups[0].files, 2u);
  EXPECT_TRUE(groups[0].target_id.starts_with("pat:"));
}

TEST(PacksTest, IsTestPath) {
  EXPECT_TRUE(IsTestPath("src/foo_test.cc"));
  EXPECT_TRUE(IsTestPath("tests/test_foo.py"));
  EXPECT_TRUE(IsTestPath("web/foo.test.ts"));
  EXPECT_TRUE(IsTestPath("src/FooTest.java"));
  EXPECT_FALSE(IsTestPath("src/contest.cc"));
  EXPECT_FALSE(IsTestPath("src/latest_value.cc"));
}

// Stored pattern and decision packs (function and module packs are stored too, decision 0077).
std::int64_t PackCount(store::Store& st) {
  auto q = st.db().Prepare(
      "SELECT count(*) FROM packs WHERE pack_type IN ('pattern_context', 'decision_context')");
  if (!q.ok() || !*q->Step()) return -1;
  return q->ColumnInt64(0);
}

class StoredPacksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.Write("compile_commands.json",
               R"([{"directory": ")" + dir_.path() +
                   R"(", "command": "c++ -Iinclude -c src/a.cc", "file": "src/a.cc"}])");
    dir_.Write("include/config.h", "int get_config(int key);\n");
    dir_.Write("src/a.cc", "#include \"config.h\"\nint get_alpha(int v) { return v; }\n");
    dir_.Write("src/b.cc", "int get_beta(int v) { return get_alpha(v); }\n");
    dir_.Write("src/c.cc", "int get_gamma(int v) { return get_alpha(v) + 1; }\n");
    dir_.Write("tests/a_test.cc", "int check() { return get_alpha(2); }\n");
    dir_.Write("docs/decisions/0001-config.md",
               "# Keep configuration in one header\n\nStatus: Accepted\n\n## Decision\n\nAll "
               "settings live in `include/config.h`. Nothing else.\n");
  }

  index::BootstrapReport Bootstrap(std::optional<std::vector<std::string>> only = std::nullopt) {
    index::BootstrapOptions o;
    o.workspace = dir_.path();
    o.workers = 1;
    o.only_paths = std::move(only);
    base::Cancellation cancel;
    Result<index::BootstrapReport> r = index::Bootstrap(o, cancel, base::Progress());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : index::BootstrapReport{};
  }

  std::unique_ptr<store::Store> Open() {
    auto s = store::Store::Open(dir_.Abs(".librarian/librarian.sqlite"));
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(s).value() : nullptr;
  }

  testing::TempDir dir_;
};

TEST_F(StoredPacksTest, BootstrapStoresPacksGraphAndRanks) {
  const index::BootstrapReport report = Bootstrap();
  ASSERT_TRUE(report.success);
  auto st = Open();
  ASSERT_NE(st, nullptr);
  auto patterns = LoadValid(*st, "pattern_context");
  ASSERT_TRUE(patterns.ok()) << patterns.status().ToString();
  ASSERT_EQ(patterns->size(), 1u);
  const StoredPack& pat = patterns->front();
  EXPECT_EQ(pat.pack_id, store::PackIdFor("pattern_context", pat.target_id));
  EXPECT_NE(pat.summary.find("share this shape"), std::string::npos) << pat.summary;
  EXPECT_DOUBLE_EQ(pat.signal, 0.6);

  auto decisions = LoadValid(*st, "decision_context");
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 1u);
  const StoredPack& adr = decisions->front();
  EXPECT_EQ(adr.target_id, "adr:docs/decisions/0001-config.md");
  EXPECT_DOUBLE_EQ(adr.signal, 0.7);  // accepted
  EXPECT_EQ(adr.related_files,
            (std::vector<std::string>{"docs/decisions/0001-config.md", "include/config.h"}));
  EXPECT_NE(std::find(adr.key_facts.begin(), adr.key_facts.end(),
                      "decision: All settings live in `include/config.h`."),
            adr.key_facts.end());

  // The include resolved through compile_commands.json (not beside src/a.cc), and call edges.
  auto deps = Dependents(st->db(), "include/config.h");
  ASSERT_TRUE(deps.ok());
  EXPECT_EQ(*deps, (std::vector<std::pair<std::string, std::string>>{{"src/a.cc", "includes"}}));
  auto callers = Dependents(st->db(), "src/a.cc");
  ASSERT_TRUE(callers.ok());
  EXPECT_EQ(callers->size(), 3u);  // b.cc, c.cc, tests/a_test.cc

  // src/a.cc is called from three files: it outranks a file nothing points to.
  const std::vector<std::string> ids = {"mod:src/a.cc", "mod:src/b.cc"};
  auto ranks = Ranks(st->db(), ids);
  ASSERT_TRUE(ranks.ok());
  ASSERT_EQ(ranks->size(), 2u);
  EXPECT_GT(ranks->at("mod:src/a.cc"), ranks->at("mod:src/b.cc"));
  auto fn_ranks = FileFunctionRanks(st->db(), "src/a.cc");
  ASSERT_TRUE(fn_ranks.ok());
  EXPECT_EQ(fn_ranks->count("fn:src/a.cc::get_alpha"), 1u);
}

TEST_F(StoredPacksTest, ChangedTriggerInvalidatesOnWatchReindex) {
  ASSERT_TRUE(Bootstrap().success);
  dir_.Write("src/b.cc", "int get_beta(int v) { return v * 2; }\n");
  ASSERT_TRUE(Bootstrap(std::vector<std::string>{"src/b.cc"}).success);
  auto st = Open();
  ASSERT_NE(st, nullptr);
  // The pattern names src/b.cc: gone. The decision does not: kept.
  EXPECT_TRUE(LoadValid(*st, "pattern_context")->empty());
  EXPECT_EQ(LoadValid(*st, "decision_context")->size(), 1u);
  EXPECT_EQ(PackCount(*st), 1);
  // A whole-workspace run rebuilds it.
  ASSERT_TRUE(Bootstrap().success);
  EXPECT_EQ(LoadValid(*st, "pattern_context")->size(), 1u);
}

TEST_F(StoredPacksTest, StaleStoredPackIsNotServedBeforeReindex) {
  ASSERT_TRUE(Bootstrap().success);
  auto st = Open();
  ASSERT_NE(st, nullptr);
  // The store's own record of the file changes (as a re-index of another process would).
  ASSERT_TRUE(
      st->db().Exec("UPDATE files SET sha256 = 'different' WHERE path = 'include/config.h'").ok());
  EXPECT_TRUE(LoadValid(*st, "decision_context")->empty());
  auto gone = InvalidateStale(*st);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(*gone, 2u);  // the decision naming the header and the header's module pack
  EXPECT_TRUE(LoadValid(*st, "module_context")->size() > 0);
}

TEST_F(StoredPacksTest, OutcomesAndEpisodes) {
  ASSERT_TRUE(Bootstrap().success);
  auto st = Open();
  ASSERT_NE(st, nullptr);
  auto none = RecentEpisodes(st->db());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  const std::string pid = LoadValid(*st, "decision_context")->front().pack_id;
  Episode e;
  e.intent = "where is configuration kept";
  e.intent_type = "navigate";
  e.depth = "L1";
  e.pack_ids = {pid, "pk_0000000000000000"};
  e.files = {"docs/decisions/0001-config.md"};
  auto id = RecordEpisode(st->db(), e, "test");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_TRUE(RecordEpisode(st->db(), e, "test").ok());
  ASSERT_TRUE(RecordVerification(st->db(), pid, true).ok());
  ASSERT_TRUE(RecordVerification(st->db(), pid, false).ok());
  auto o = GetOutcome(st->db(), pid);
  ASSERT_TRUE(o.ok());
  ASSERT_TRUE(o->has_value());
  EXPECT_EQ((*o)->access_count, 2);
  EXPECT_EQ((*o)->success_count, 1);
  EXPECT_EQ((*o)->failure_count, 1);
  EXPECT_EQ((*o)->last_outcome, "defeated");
  EXPECT_EQ(LoadValid(*st, "decision_context")->front().outcome.access_count, 2);
  auto episodes = RecentEpisodes(st->db());
  ASSERT_TRUE(episodes.ok());
  ASSERT_EQ(episodes->size(), 2u);
  EXPECT_GT(episodes->at(0).id, episodes->at(1).id);  // newest first
  EXPECT_EQ(episodes->at(0).intent, e.intent);
  EXPECT_EQ(episodes->at(0).pack_ids, e.pack_ids);
}

std::vector<Trigger> TriggersOf(store::Store& st, const std::string& pack_id) {
  std::vector<Trigger> out;
  auto q =
      st.db().Prepare("SELECT path, sha256 FROM pack_triggers WHERE pack_id = ?1 ORDER BY path");
  if (!q.ok() || !q->Bind(1, std::string_view(pack_id)).ok()) return out;
  while (*q->Step()) out.push_back(Trigger{q->ColumnText(0), q->ColumnText(1)});
  return out;
}

const StoredPack* Find(const std::vector<StoredPack>& packs, const std::string& target) {
  for (const StoredPack& p : packs) {
    if (p.target_id == target) return &p;
  }
  return nullptr;
}

std::string FileSha(store::Store& st, const std::string& path) {
  auto f = st.GetFile(path);
  return f.ok() && f->has_value() ? (*f)->sha256 : std::string();
}

// Decision 0077: function and module packs are stored by the bootstrap, each with its own file
// as invalidation trigger, and carry the facts the query's packs carry.
TEST_F(StoredPacksTest, FunctionAndModulePacksAreStoredWithTheirFileAsTrigger) {
  ASSERT_TRUE(Bootstrap().success);
  auto st = Open();
  ASSERT_NE(st, nullptr);
  auto fns = LoadValid(*st, "function_context");
  ASSERT_TRUE(fns.ok()) << fns.status().ToString();
  EXPECT_GE(fns->size(), 4u);  // get_alpha, get_beta, get_gamma, check
  const StoredPack* alpha = Find(*fns, "fn:src/a.cc::get_alpha");
  ASSERT_NE(alpha, nullptr);
  EXPECT_EQ(alpha->pack_id, store::PackIdFor("function_context", alpha->target_id));
  EXPECT_DOUBLE_EQ(alpha->signal, 0.9);  // a clean tree-sitter span
  EXPECT_EQ(alpha->related_files.front(), "src/a.cc");
  EXPECT_NE(std::find(alpha->key_facts.begin(), alpha->key_facts.end(),
                      "name `get_alpha` is called at 3 sites in 3 files (matched by name, not "
                      "resolved)"),
            alpha->key_facts.end());
  EXPECT_EQ(TriggersOf(*st, alpha->pack_id),
            (std::vector<Trigger>{{"src/a.cc", FileSha(*st, "src/a.cc")}}));
  const StoredPack* beta = Find(*fns, "fn:src/b.cc::get_beta");
  ASSERT_NE(beta, nullptr);
  EXPECT_NE(std::find(beta->key_facts.begin(), beta->key_facts.end(), "calls: get_alpha"),
            beta->key_facts.end());
  EXPECT_NE(std::find(beta->related_files.begin(), beta->related_files.end(), "src/a.cc"),
            beta->related_files.end());

  auto mods = LoadValid(*st, "module_context");
  ASSERT_TRUE(mods.ok());
  const StoredPack* header = Find(*mods, "mod:include/config.h");
  ASSERT_NE(header, nullptr);
  EXPECT_EQ(header->related_files, (std::vector<std::string>{"include/config.h", "src/a.cc"}));
  EXPECT_NE(std::find(header->key_facts.begin(), header->key_facts.end(),
                      "included or imported by 1 files"),
            header->key_facts.end());
  const StoredPack* a = Find(*mods, "mod:src/a.cc");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->summary, "module src/a.cc: defines get_alpha");
  EXPECT_EQ(TriggersOf(*st, a->pack_id),
            (std::vector<Trigger>{{"src/a.cc", FileSha(*st, "src/a.cc")}}));
}

// Decision 0077: an edit of a stored function or module pack's trigger file invalidates it;
// the watch re-index of that file stores its new packs, leaves the other files' packs as they
// were, and the outcome counters stay with the pack id.
TEST_F(StoredPacksTest, EditOfTheTriggerFileInvalidatesStoredFunctionAndModulePacks) {
  const index::BootstrapReport first = Bootstrap();
  ASSERT_TRUE(first.success);
  std::string module_id;
  {
    auto st = Open();
    ASSERT_NE(st, nullptr);
    ASSERT_NE(Find(*LoadValid(*st, "function_context"), "fn:src/b.cc::get_beta"), nullptr);
    module_id = store::PackIdFor("module_context", "mod:src/b.cc");
    Episode e;
    e.intent = "beta";
    e.pack_ids = {module_id};
    ASSERT_TRUE(RecordEpisode(st->db(), e, "test").ok());
    // The store's record of the file changes (another process re-indexed it): not served.
    ASSERT_TRUE(
        st->db().Exec("UPDATE files SET sha256 = 'different' WHERE path = 'src/b.cc'").ok());
    EXPECT_EQ(Find(*LoadValid(*st, "function_context"), "fn:src/b.cc::get_beta"), nullptr);
    EXPECT_EQ(Find(*LoadValid(*st, "module_context"), "mod:src/b.cc"), nullptr);
    EXPECT_NE(Find(*LoadValid(*st, "function_context"), "fn:src/a.cc::get_alpha"), nullptr);
  }
  dir_.Write("src/b.cc", "int get_delta(int v) { return v * 2; }\n");
  const index::BootstrapReport second = Bootstrap(std::vector<std::string>{"src/b.cc"});
  ASSERT_TRUE(second.success);
  auto st = Open();
  ASSERT_NE(st, nullptr);
  auto fns = LoadValid(*st, "function_context");
  ASSERT_TRUE(fns.ok());
  EXPECT_EQ(Find(*fns, "fn:src/b.cc::get_beta"), nullptr);
  const StoredPack* delta = Find(*fns, "fn:src/b.cc::get_delta");
  ASSERT_NE(delta, nullptr);
  EXPECT_EQ(delta->run_id, second.run_id);
  EXPECT_EQ(TriggersOf(*st, delta->pack_id),
            (std::vector<Trigger>{{"src/b.cc", FileSha(*st, "src/b.cc")}}));
  const StoredPack* alpha = Find(*fns, "fn:src/a.cc::get_alpha");
  ASSERT_NE(alpha, nullptr);
  EXPECT_EQ(alpha->run_id, first.run_id);  // not rebuilt
  auto mods = LoadValid(*st, "module_context");
  ASSERT_TRUE(mods.ok());
  const StoredPack* b = Find(*mods, "mod:src/b.cc");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->summary, "module src/b.cc: defines get_delta");
  EXPECT_EQ(b->run_id, second.run_id);
  EXPECT_EQ(b->outcome.access_count, 1);  // counted before the edit, kept by pack id
  // A deleted file's packs go with it.
  ASSERT_EQ(std::remove(dir_.Abs("src/c.cc").c_str()), 0);
  ASSERT_TRUE(Bootstrap(std::vector<std::string>{"src/c.cc"}).success);
  EXPECT_EQ(Find(*LoadValid(*st, "module_context"), "mod:src/c.cc"), nullptr);
  EXPECT_EQ(Find(*LoadValid(*st, "function_context"), "fn:src/c.cc::get_gamma"), nullptr);
  auto n = st->db().Prepare("SELECT count(*) FROM packs WHERE target_id LIKE '%src/c.cc%'");
  ASSERT_TRUE(n.ok() && *n->Step());
  EXPECT_EQ(n->ColumnInt64(0), 0);
}

// A schema-5 store (no pack tables) migrates to 6 in place, keeping its rows; the next
// bootstrap fills the new tables.
TEST_F(StoredPacksTest, SchemaFiveStoreMigrates) {
  ASSERT_TRUE(Bootstrap().success);
  std::int64_t files = 0;
  {
    auto st = Open();
    ASSERT_NE(st, nullptr);
    files = *st->CountRows("files");
  }
  {
    auto db = base::Database::Open(dir_.Abs(".librarian/librarian.sqlite"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("DROP TABLE pack_triggers; DROP TABLE packs; DROP TABLE pack_outcomes; "
                           "DROP TABLE file_edges; DROP TABLE ranks; UPDATE meta SET value = '5' "
                           "WHERE key = 'schema_version'")
                    .ok());
  }
  {
    auto st = Open();
    ASSERT_NE(st, nullptr);
    EXPECT_FALSE(st->schema_rebuilt());
    EXPECT_EQ(*st->CountRows("files"), files);
    EXPECT_EQ(PackCount(*st), 0);
    auto has = HasDerived(*st);
    ASSERT_TRUE(has.ok());
    EXPECT_FALSE(*has);
    EXPECT_TRUE(st->IntegrityCheck().ok());
  }
  // A no-op bootstrap still fills the derived tables of a migrated store.
  ASSERT_TRUE(Bootstrap().success);
  auto st = Open();
  EXPECT_EQ(LoadValid(*st, "decision_context")->size(), 1u);
}

}  // namespace
}  // namespace trove::librarian::packs

// Run and content manifests (manifest.h): recorded with a run's final batch, pruned past
// kManifestRuns, and added to a schema-3 store by the migration without losing its rows.
#include "librarian/store/manifest.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/hash.h"
#include "base/sqlite.h"
#include "base/testing/temp_dir.h"
#include "librarian/extract/extract.h"
#include "librarian/store/store.h"

namespace trove::librarian::store {
namespace {

using ::testing::ElementsAre;

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto made = extract::Extractor::Create({.ctags_program = ""});
    ASSERT_TRUE(made.ok());
    extractor_ = std::move(made).value();
    Open();
  }
  void Open() {
    store_.reset();
    auto opened = Store::Open(dir_.Abs("librarian.sqlite"));
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }

  // Stores `content` as `path` in a batch of its own.
  void Put(const std::string& path, const std::string& content) {
    auto facts = extractor_->Extract(path, content, extractor_->Route(path, true));
    ASSERT_TRUE(facts.ok()) << facts.status().ToString();
    FileRecord file{.path = path,
                    .sha256 = base::Sha256Hex(content),
                    .language = facts->language,
                    .extractor = facts->extractor,
                    .size = content.size(),
                    .mtime_ns = 1,
                    .run_id = "r"};
    ASSERT_TRUE(store_->ReplaceFile(file, *facts, content).ok());
  }
  // A run's final batch, recording its manifest.
  void FinishRun(const std::string& run_id, std::vector<std::string> remove = {}) {
    WriteBatch batch;
    batch.run = RunRecord{.run_id = run_id,
                          .state = "succeeded",
                          .mode = "incremental",
                          .started_at = "2026-01-01T00:00:00.000Z",
                          .finished_at = "2026-01-01T00:00:01.000Z",
                          .options_json = "{}",
                          .tool_versions_json = "{}",
                          .stats_json = "{}"};
    batch.remove = std::move(remove);
    batch.record_manifest = true;
    Status s = store_->Apply(batch);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  std::vector<std::string> Paths(const std::string& run_id) {
    auto m = RunManifest(*store_, run_id);
    EXPECT_TRUE(m.ok());
    std::vector<std::string> out;
    for (const ManifestFile& f : *m) out.push_back(f.path);
    return out;
  }

  base::testing::TempDir dir_{"trove_manifest"};
  std::unique_ptr<extract::Extractor> extractor_;
  std::unique_ptr<Store> store_;
};

TEST_F(ManifestTest, RecordsFilesAndContentSymbolsPerRun) {
  const std::string a = "def alpha():\n    return 1\n\n\nclass Box:\n    pass\n";
  Put("a.py", a);
  Put("b.py", "def beta():\n    return 2\n");
  FinishRun("run_1");
  Put("a.py", a + "\ndef gamma():\n    return 3\n");
  FinishRun("run_2", {"b.py"});

  EXPECT_THAT(Paths("run_1"), ElementsAre("a.py", "b.py"));
  EXPECT_THAT(Paths("run_2"), ElementsAre("a.py"));
  auto has = HasManifest(*store_, "run_1");
  ASSERT_TRUE(has.ok());
  EXPECT_TRUE(*has);
  has = HasManifest(*store_, "run_0");
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);

  // run_1's a.py content is still there, with its two symbols and the module row last.
  auto old = ContentSymbols(*store_, "a.py", base::Sha256Hex(a));
  ASSERT_TRUE(old.ok());
  std::vector<std::string> targets;
  for (const ContentSymbol& c : *old) targets.push_back(c.target_id);
  EXPECT_THAT(targets, ElementsAre("fn:a.py::alpha", "type:a.py::Box", "mod:a.py"));
  EXPECT_EQ((*old)[0].pack_id, PackIdFor("function_context", "fn:a.py::alpha"));
  EXPECT_EQ((*old)[1].pack_id, "");  // types have no pack
  EXPECT_EQ((*old)[2].pack_id, PackIdFor("module_context", "mod:a.py"));
  EXPECT_EQ((*old)[2].span_sha256, base::Sha256Hex(a));
  EXPECT_EQ((*old)[0].start_line, 1u);
  EXPECT_EQ((*old)[0].end_line, 2u);

  // A pack id finds its newest target, the current content first.
  auto found = FindPack(*store_, PackIdFor("function_context", "fn:a.py::alpha"));
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_TRUE((*found)->current);
  EXPECT_NE((*found)->sha256, base::Sha256Hex(a));
  // b.py was removed: its pack is found in run_1's content, not current.
  found = FindPack(*store_, PackIdFor("function_context", "fn:b.py::beta"));
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_FALSE((*found)->current);
  found = FindPack(*store_, "pk_0000000000000000");
  ASSERT_TRUE(found.ok());
  EXPECT_FALSE(found->has_value());
}

TEST_F(ManifestTest, KeepsTheLastRunsOnly) {
  for (std::size_t i = 0; i < kManifestRuns + 3; ++i) {
    Put("a.py", fmt::format("def f{}():\n    return {}\n", i, i));
    FinishRun(fmt::format("run_{:02}", i));
  }
  for (std::size_t i = 0; i < 3; ++i) {
    auto has = HasManifest(*store_, fmt::format("run_{:02}", i));
    ASSERT_TRUE(has.ok());
    EXPECT_FALSE(*has) << i;
  }
  auto has = HasManifest(*store_, fmt::format("run_{:02}", 3));
  ASSERT_TRUE(has.ok());
  EXPECT_TRUE(*has);
  // The contents only pruned runs named are gone; kept ones remain.
  auto gone = ContentSymbols(*store_, "a.py", base::Sha256Hex("def f0():\n    return 0\n"));
  ASSERT_TRUE(gone.ok());
  EXPECT_TRUE(gone->empty());
  auto kept = ContentSymbols(*store_, "a.py", base::Sha256Hex("def f3():\n    return 3\n"));
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(kept->empty());
}

// A store written with schema 3 (no manifest tables) opens as schema 4 with every row kept
// and the content manifests of its files recorded.
TEST_F(ManifestTest, SchemaThreeStoreMigratesWithoutDataLoss) {
  Put("a.py", "def alpha():\n    return 1\n");
  Put("b.py", "def beta():\n    return 2\n");
  auto files_before = store_->CountRows("files");
  auto symbols_before = store_->CountRows("symbols");
  auto chunks_before = store_->CountRows("chunks");
  ASSERT_TRUE(files_before.ok() && symbols_before.ok() && chunks_before.ok());
  store_.reset();
  {
    auto db = base::Database::Open(dir_.Abs("librarian.sqlite"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        (*db)
            ->Exec("DROP TABLE run_files; DROP TABLE content_symbols; DROP TABLE ledger; "
                   "DROP TABLE audits; DROP TABLE pack_triggers; DROP TABLE packs; DROP TABLE "
                   "pack_outcomes; DROP TABLE file_edges; DROP TABLE ranks; UPDATE meta SET "
                   "value = '3' WHERE key = 'schema_version'")
            .ok());
  }
  Open();
  EXPECT_FALSE(store_->schema_rebuilt());
  EXPECT_EQ(*store_->CountRows("files"), *files_before);
  EXPECT_EQ(*store_->CountRows("symbols"), *symbols_before);
  EXPECT_EQ(*store_->CountRows("chunks"), *chunks_before);
  auto hits = store_->SearchChunks("beta");
  ASSERT_TRUE(hits.ok());
  EXPECT_FALSE(hits->empty());
  auto found = FindPack(*store_, PackIdFor("function_context", "fn:b.py::beta"));
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_TRUE((*found)->current);
  EXPECT_TRUE(store_->IntegrityCheck().ok());
  auto db = base::Database::Open(dir_.Abs("librarian.sqlite"));
  ASSERT_TRUE(db.ok());
  auto st = (*db)->Prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(*st->Step());
  EXPECT_EQ(st->ColumnText(0), std::to_string(kSchemaVersion));
}

TEST_F(ManifestTest, RecordManifestNeedsARun) {
  WriteBatch batch;
  batch.record_manifest = true;
  EXPECT_EQ(store_->Apply(batch).code(), base::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace trove::librarian::store

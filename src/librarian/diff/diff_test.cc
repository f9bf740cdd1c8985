// diff_runs across two bootstraps of a fixture workspace with planted changes: a file added, a
// file removed, a function changed, a function added, files left alone.
#include "librarian/diff/diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "librarian/index/bootstrap.h"
#include "librarian/store/manifest.h"
#include "librarian/store/store.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::diff {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class DiffTest : public ::testing::Test {
 protected:
  std::string Bootstrap() {
    index::BootstrapOptions o;
    o.workspace = dir_.path();
    o.ctags_program = "";
    o.workers = 1;
    base::Cancellation cancel;
    auto r = index::Bootstrap(o, cancel, base::Progress());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    root_ = r->workspace;
    return r->run_id;
  }
  std::unique_ptr<store::Store> Open() {
    auto st = store::Store::Open(index::StorePathFor(root_));
    EXPECT_TRUE(st.ok());
    return std::move(st).value();
  }

  testing::TempDir dir_;
  std::string root_;
};

TEST_F(DiffTest, ReportsPlantedChangesBetweenTwoBootstraps) {
  dir_.Write("keep.py", "def same():\n    return 0\n");
  dir_.Write("gone.py", "def old_one():\n    return 1\n");
  dir_.Write("edit.py", "def changed():\n    return 2\n\n\ndef stays():\n    return 3\n");
  const std::string run1 = Bootstrap();
  std::filesystem::remove(dir_.Abs("gone.py"));
  dir_.Write("new.py", "def fresh():\n    return 4\n");
  dir_.Write("edit.py",
             "def changed():\n    return 22\n\n\ndef stays():\n    return 3\n\n\n"
             "def added():\n    return 5\n");
  const std::string run2 = Bootstrap();
  ASSERT_NE(run1, run2);

  auto store = Open();
  auto d = DiffRuns(*store, root_, run1, run2);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->error.has_value());
  EXPECT_EQ(d->run1.run_id, run1);
  EXPECT_EQ(d->run2.run_id, run2);
  EXPECT_EQ(d->run2.status, "succeeded");
  EXPECT_THAT(d->files.added, ElementsAre("new.py"));
  EXPECT_THAT(d->files.removed, ElementsAre("gone.py"));
  EXPECT_THAT(d->files.modified, ElementsAre("edit.py"));
  EXPECT_EQ(d->files.unchanged_count, 1u);
  EXPECT_THAT(d->symbols.added, ElementsAre("fn:edit.py::added", "fn:new.py::fresh"));
  EXPECT_THAT(d->symbols.removed, ElementsAre("fn:gone.py::old_one"));
  EXPECT_THAT(d->symbols.changed, ElementsAre("fn:edit.py::changed"));
  EXPECT_EQ(d->symbols.unchanged_count, 2u);  // same, stays
  // Packs: function packs as symbols, plus module packs: new.py added, gone.py removed,
  // edit.py changed, keep.py unchanged.
  EXPECT_EQ(d->packs.added, 3u);
  EXPECT_EQ(d->packs.removed, 2u);
  EXPECT_EQ(d->packs.changed, 2u);
  EXPECT_EQ(d->packs.unchanged, 3u);
  EXPECT_EQ(d->stats.functions.before, 4);
  EXPECT_EQ(d->stats.functions.after, 5);
  EXPECT_EQ(d->stats.functions.delta, 1);
  EXPECT_EQ(d->stats.modules.before, 3);
  EXPECT_EQ(d->stats.modules.after, 3);
  EXPECT_EQ(d->stats.context_packs.after, 8);
  EXPECT_DOUBLE_EQ(d->stats.avg_confidence.after, (5 * 0.9 + 3 * 0.8) / 8);
  EXPECT_THAT(d->summary, HasSubstr("files +1 -1 ~1 (1 unchanged)"));

  // Reversed, the same changes the other way round.
  auto r = DiffRuns(*store, root_, run2, run1);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(r->files.added, ElementsAre("gone.py"));
  EXPECT_THAT(r->symbols.removed, ElementsAre("fn:edit.py::added", "fn:new.py::fresh"));

  // "latest" and a timestamp at or after run2's end resolve to run2.
  auto latest = DiffRuns(*store, root_, run1, "latest");
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->run2.run_id, run2);
  auto at = DiffRuns(*store, root_, run1, "2999-01-01T00:00:00Z");
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(at->run2.run_id, run2);
  EXPECT_FALSE(at->error.has_value());
}

TEST_F(DiffTest, UnknownRunIsResourceNotFound) {
  dir_.Write("a.py", "def a():\n    return 0\n");
  const std::string run1 = Bootstrap();
  auto store = Open();
  auto d = DiffRuns(*store, root_, run1, "run_19990101T000000Z_abcd");
  ASSERT_TRUE(d.ok());
  ASSERT_TRUE(d->error.has_value());
  EXPECT_EQ(d->error_code, "RESOURCE_NOT_FOUND");
  EXPECT_THAT(*d->error, HasSubstr("run2: no run run_19990101T000000Z_abcd"));
  // A timestamp before every run names none.
  auto early = DiffRuns(*store, root_, "1999-01-01T00:00:00.5Z", "latest");
  ASSERT_TRUE(early.ok());
  EXPECT_EQ(early->error_code, "RESOURCE_NOT_FOUND");
  EXPECT_EQ(DiffRuns(*store, root_, "", "latest").status().code(),
            base::StatusCode::kInvalidArgument);
}

// An unchanged rerun (noop) has an equal manifest: nothing added, removed or changed.
TEST_F(DiffTest, NoopRunDiffsEmpty) {
  dir_.Write("a.py", "def a():\n    return 0\n");
  const std::string run1 = Bootstrap();
  const std::string run2 = Bootstrap();
  auto store = Open();
  auto d = DiffRuns(*store, root_, run1, run2);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->error.has_value());
  EXPECT_THAT(d->files.added, IsEmpty());
  EXPECT_THAT(d->files.modified, IsEmpty());
  EXPECT_EQ(d->files.unchanged_count, 1u);
  EXPECT_EQ(d->symbols.unchanged_count, 1u);
  EXPECT_EQ(d->packs.unchanged, 2u);
  EXPECT_EQ(d->run2.mode, "noop");
}

}  // namespace
}  // namespace trove::librarian::diff

// VersionFinisher over real SQLite files: a committed transaction reaches the database file
// while the writing connection is still open; without a commit, or with a reader in the way,
// the checkpoint is left to the close.
#include "warden/kb/finisher.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/sqlite.h"
#include "base/testing/temp_dir.h"

namespace trove::warden::kb {
namespace {

using base::StatusCode;
using base::testing::TempDir;

// Writes `rows` rows of 1 KiB into table t in one transaction on `db`.
void WriteRows(base::Database& db, int rows) {
  ASSERT_TRUE(db.Exec("CREATE TABLE IF NOT EXISTS t(x BLOB)").ok());
  auto txn = db.Begin();
  ASSERT_TRUE(txn.ok());
  auto stmt = db.Prepare("INSERT INTO t VALUES (zeroblob(1024))");
  ASSERT_TRUE(stmt.ok());
  for (int i = 0; i < rows; ++i) {
    stmt->Reset();
    ASSERT_TRUE(stmt->Step().ok());
  }
  ASSERT_TRUE(txn->Commit().ok());
}

// Rows of t in a copy of the database file alone (what a backup without the -wal holds);
// -1 when the copy has no table t.
std::int64_t RowsInFileAlone(const TempDir& dir, const std::string& name) {
  const std::string copy = dir.Abs("copy-" + name);
  std::filesystem::copy_file(dir.Abs(name), copy,
                             std::filesystem::copy_options::overwrite_existing);
  auto db = base::Database::Open(copy, {.create_if_missing = false});
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  auto has = (*db)->Prepare("SELECT count(*) FROM sqlite_master WHERE name = 't'");
  EXPECT_TRUE(has.ok() && has->Step().value_or(false));
  if (has->ColumnInt64(0) == 0) return -1;
  auto count = (*db)->Prepare("SELECT count(*) FROM t");
  EXPECT_TRUE(count.ok() && count->Step().value_or(false));
  return count->ColumnInt64(0);
}

TEST(VersionFinisherTest, CommittedTransactionReachesTheDatabaseFile) {
  TempDir dir("trove_finisher_test");
  auto db = base::Database::Open(dir.Abs("a.db"));
  ASSERT_TRUE(db.ok());
  VersionFinisher finisher(dir.Abs("a.db"));
  WriteRows(**db, 3000);
  finisher.Committed();
  EXPECT_TRUE(finisher.Wait().ok());
  EXPECT_TRUE(finisher.Wait().ok());  // idempotent
  // The writing connection is still open: the checkpoint was the finisher's, not a close's.
  EXPECT_EQ(std::filesystem::file_size(dir.Abs("a.db-wal")), 0u);
  EXPECT_EQ(RowsInFileAlone(dir, "a.db"), 3000);
}

TEST(VersionFinisherTest, NoCheckpointWithoutCommitted) {
  TempDir dir("trove_finisher_test");
  auto db = base::Database::Open(dir.Abs("b.db"));
  ASSERT_TRUE(db.ok());
  {
    VersionFinisher finisher(dir.Abs("b.db"));
    WriteRows(**db, 100);
    EXPECT_EQ(finisher.Wait().code(), StatusCode::kCancelled);
  }
  EXPECT_GT(std::filesystem::file_size(dir.Abs("b.db-wal")), 0u);
  EXPECT_EQ(RowsInFileAlone(dir, "b.db"), -1);
  // The close still checkpoints, as it always did.
  db->reset();
  EXPECT_EQ(RowsInFileAlone(dir, "b.db"), 100);
}

TEST(VersionFinisherTest, ReaderInTheWayLeavesTheRestToTheClose) {
  TempDir dir("trove_finisher_test");
  auto db = base::Database::Open(dir.Abs("c.db"));
  ASSERT_TRUE(db.ok());
  WriteRows(**db, 10);
  // Another connection reads from a snapshot taken before the next commit, and keeps it.
  auto reader = base::Database::Open(dir.Abs("c.db"));
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE((*reader)->Exec("BEGIN").ok());
  {
    auto read = (*reader)->Prepare("SELECT count(*) FROM t");
    ASSERT_TRUE(read.ok() && read->Step().value_or(false));
    EXPECT_EQ(read->ColumnInt64(0), 10);
    VersionFinisher finisher(dir.Abs("c.db"));
    WriteRows(**db, 200);
    finisher.Committed();
    EXPECT_EQ(finisher.Wait().code(), StatusCode::kResourceExhausted);
  }  // the read statement is finalized here
  ASSERT_TRUE((*reader)->Exec("COMMIT").ok());
  reader->reset();
  db->reset();  // the last close checkpoints the rest
  EXPECT_EQ(RowsInFileAlone(dir, "c.db"), 210);
}

// Following the database file (rollback journal): the finisher starts its writeback through
// the given descriptor and never closes it; after the commit it reports OK with no checkpoint,
// and stopped before a commit, Cancelled.
TEST(VersionFinisherTest, FollowingTheDatabaseFileLeavesItsDescriptorOpen) {
  TempDir dir("trove_finisher_test");
  const std::string path = dir.Abs("r.db");
  auto db = base::Database::Open(path);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("PRAGMA journal_mode=DELETE").ok());
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  {
    VersionFinisher finisher(path, VersionFinisher::DatabaseFile{fd});
    WriteRows(**db, 3000);
    finisher.Committed();
    EXPECT_TRUE(finisher.Wait().ok());
  }
  {
    VersionFinisher stopped(path, VersionFinisher::DatabaseFile{fd});
    EXPECT_EQ(stopped.Wait().code(), StatusCode::kCancelled);
  }
  EXPECT_NE(::fcntl(fd, F_GETFD), -1) << "the finisher closed the descriptor it was given";
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
  EXPECT_EQ(RowsInFileAlone(dir, "r.db"), 3000);
  ::close(fd);
}

}  // namespace
}  // namespace trove::warden::kb

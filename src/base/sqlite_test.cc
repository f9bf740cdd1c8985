#include "base/sqlite.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/testing/temp_dir.h"

namespace trove::base {
namespace {

// Real files in a fresh temporary directory: WAL and locking need a real filesystem.
class SqliteTest : public ::testing::Test {
 protected:
  void SetUp() override { path_ = dir_.Abs("test.db"); }

  std::unique_ptr<Database> OpenOrDie(const DatabaseOptions& options = {}) {
    Result<std::unique_ptr<Database>> db = Database::Open(path_, options);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(db).value() : nullptr;
  }

  // Returns the first column of the first row of `sql` as text.
  static std::string QueryText(Database& db, std::string_view sql) {
    Result<Statement> stmt = db.Prepare(sql);
    if (!stmt.ok()) return "error: " + stmt.status().ToString();
    Result<bool> row = stmt->Step();
    if (!row.ok()) return "error: " + row.status().ToString();
    return *row ? stmt->ColumnText(0) : "no row";
  }

  static std::int64_t Count(Database& db, std::string_view table) {
    Result<Statement> stmt = db.Prepare("SELECT count(*) FROM " + std::string(table));
    EXPECT_TRUE(stmt.ok()) << stmt.status().ToString();
    if (!stmt.ok()) return -1;
    Result<bool> row = stmt->Step();
    EXPECT_TRUE(row.ok() && *row);
    return stmt->ColumnInt64(0);
  }

  testing::TempDir dir_{"trove_sqlite_test"};
  std::string path_;
};

TEST_F(SqliteTest, OpenAppliesSettings) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(QueryText(*db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryText(*db, "PRAGMA foreign_keys"), "1");
  EXPECT_EQ(QueryText(*db, "PRAGMA synchronous"), "1");  // NORMAL
  EXPECT_EQ(QueryText(*db, "PRAGMA busy_timeout"), "5000");
  ASSERT_TRUE(db->Exec("CREATE TABLE t(x)").ok());
  EXPECT_TRUE(std::filesystem::exists(path_));
  EXPECT_TRUE(std::filesystem::exists(path_ + "-wal"));
}

TEST_F(SqliteTest, WalPersistsAcrossConnections) {
  { ASSERT_NE(OpenOrDie(), nullptr); }
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(QueryText(*db, "PRAGMA journal_mode"), "wal");
}

TEST_F(SqliteTest, BusyTimeoutOption) {
  auto db = OpenOrDie({.busy_timeout_ms = 123});
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(QueryText(*db, "PRAGMA busy_timeout"), "123");
}

TEST_F(SqliteTest, PageSizeAppliesToNewDatabasesOnly) {
  {
    auto db = OpenOrDie({.page_size = 65536});
    ASSERT_NE(db, nullptr);
    EXPECT_EQ(QueryText(*db, "PRAGMA journal_mode"), "wal");
    ASSERT_TRUE(db->Exec("CREATE TABLE t(x); INSERT INTO t VALUES (randomblob(200000))").ok());
    EXPECT_EQ(QueryText(*db, "PRAGMA page_size"), "65536");
  }
  {
    // Reopened with another size (or none), the database keeps the size it was made with.
    auto db = OpenOrDie({.page_size = 1024});
    ASSERT_NE(db, nullptr);
    EXPECT_EQ(QueryText(*db, "PRAGMA page_size"), "65536");
    EXPECT_EQ(Count(*db, "t"), 1);
  }
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(QueryText(*db, "PRAGMA page_size"), "65536");
  EXPECT_EQ(QueryText(*db, "PRAGMA integrity_check"), "ok");
}

TEST_F(SqliteTest, DefaultPageSizeIsSqlites) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(x)").ok());
  EXPECT_EQ(QueryText(*db, "PRAGMA page_size"), "4096");
}

TEST_F(SqliteTest, InvalidPageSizeIsRejected) {
  for (int size : {-1, 256, 1000, 131072}) {
    Result<std::unique_ptr<Database>> db = Database::Open(path_, {.page_size = size});
    ASSERT_FALSE(db.ok()) << size;
    EXPECT_EQ(db.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(
        db.status().message(),
        fmt::format("open {}: page size {} is not a power of two from 512 to 65536", path_, size));
  }
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(SqliteTest, PageSizeOnANonDatabaseIsStillDataLoss) {
  {
    std::ofstream out(path_, std::ios::binary);
    out << std::string(8192, 'x');
  }
  Result<std::unique_ptr<Database>> db = Database::Open(path_, {.page_size = 65536});
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kDataLoss);
}

TEST_F(SqliteTest, OpenMissingWithoutCreateFails) {
  Result<std::unique_ptr<Database>> db = Database::Open(path_, {.create_if_missing = false});
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kIo);
  EXPECT_EQ(db.status().message().rfind("open " + path_ + ": ", 0), 0u) << db.status().message();
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(SqliteTest, OpenInMissingDirectoryFails) {
  Result<std::unique_ptr<Database>> db = Database::Open(dir_.Abs("no/such/dir/x.db"));
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kIo);
  EXPECT_NE(db.status().message().find("unable to open database file"), std::string::npos)
      << db.status().message();
}

TEST_F(SqliteTest, InMemoryDatabase) {
  Result<std::unique_ptr<Database>> db = Database::Open(":memory:");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)").ok());
  EXPECT_EQ(Count(**db, "t"), 1);
}

TEST_F(SqliteTest, InsertAndSelectEveryType) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, i, d, s, b, n)").ok());
  Result<Statement> insert = db->Prepare("INSERT INTO t(i, d, s, b, n) VALUES (?, ?, ?, ?, ?)");
  ASSERT_TRUE(insert.ok()) << insert.status().ToString();
  const std::string text_with_nul("a\0b", 3);
  const std::vector<std::uint8_t> blob = {0, 1, 2, 0xff};
  ASSERT_TRUE(insert->Bind(1, std::numeric_limits<std::int64_t>::min()).ok());
  ASSERT_TRUE(insert->Bind(2, 2.5).ok());
  ASSERT_TRUE(insert->Bind(3, std::string_view(text_with_nul)).ok());
  ASSERT_TRUE(insert->Bind(4, std::span<const std::uint8_t>(blob)).ok());
  ASSERT_TRUE(insert->Bind(5, nullptr).ok());
  Result<bool> step = insert->Step();
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_FALSE(*step);
  EXPECT_EQ(db->LastInsertRowId(), 1);
  EXPECT_EQ(db->Changes(), 1);

  Result<Statement> select = db->Prepare("SELECT i, d, s, b, n, typeof(b) FROM t WHERE id = ?");
  ASSERT_TRUE(select.ok()) << select.status().ToString();
  ASSERT_TRUE(select->Bind(1, 1).ok());
  Result<bool> row = select->Step();
  ASSERT_TRUE(row.ok() && *row);
  EXPECT_EQ(select->ColumnCount(), 6);
  EXPECT_EQ(select->ColumnInt64(0), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(select->ColumnDouble(1), 2.5);
  EXPECT_EQ(select->ColumnText(2), text_with_nul);
  EXPECT_EQ(select->ColumnBlob(3), std::string("\0\1\2\xff", 4));
  EXPECT_TRUE(select->ColumnIsNull(4));
  EXPECT_FALSE(select->ColumnIsNull(3));
  EXPECT_EQ(select->ColumnText(4), "");
  EXPECT_EQ(select->ColumnText(5), "blob");
  // The views give the same bytes without a copy.
  EXPECT_EQ(select->ColumnTextView(2), text_with_nul);
  EXPECT_EQ(select->ColumnBlobView(3), std::string_view("\0\1\2\xff", 4));
  EXPECT_EQ(select->ColumnTextView(4), "");
  EXPECT_EQ(select->ColumnBlobView(4), "");
  row = select->Step();
  ASSERT_TRUE(row.ok());
  EXPECT_FALSE(*row);
}

TEST_F(SqliteTest, EmptyTextAndBlobAreNotNull) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  Result<Statement> stmt = db->Prepare("SELECT ? IS NULL, typeof(?), ? IS NULL, typeof(?)");
  ASSERT_TRUE(stmt.ok());
  ASSERT_TRUE(stmt->Bind(1, std::string_view()).ok());
  ASSERT_TRUE(stmt->Bind(2, std::string_view()).ok());
  ASSERT_TRUE(stmt->Bind(3, std::span<const std::uint8_t>()).ok());
  ASSERT_TRUE(stmt->BindBlob(4, std::string_view()).ok());
  ASSERT_TRUE(*stmt->Step());
  EXPECT_EQ(stmt->ColumnInt64(0), 0);
  EXPECT_EQ(stmt->ColumnText(1), "text");
  EXPECT_EQ(stmt->ColumnInt64(2), 0);
  EXPECT_EQ(stmt->ColumnText(3), "blob");
}

TEST_F(SqliteTest, UncopiedBindsStoreTheSameValues) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(a, b)").ok());
  Result<Statement> insert = db->Prepare("INSERT INTO t(a, b) VALUES (?, ?)");
  ASSERT_TRUE(insert.ok());
  const std::string text = "uncopied text";
  const std::string blob("\x00\x01\xff bytes", 9);
  ASSERT_TRUE(insert->BindUncopiedText(1, text).ok());
  ASSERT_TRUE(insert->BindUncopiedBlob(2, blob).ok());
  ASSERT_TRUE(insert->Step().ok());
  insert->Reset();
  ASSERT_TRUE(insert->BindUncopiedText(1, std::string_view()).ok());
  ASSERT_TRUE(insert->BindUncopiedBlob(2, std::string_view()).ok());
  ASSERT_TRUE(insert->Step().ok());
  Result<Statement> select = db->Prepare("SELECT a, typeof(a), b, typeof(b) FROM t ORDER BY rowid");
  ASSERT_TRUE(select.ok());
  ASSERT_TRUE(*select->Step());
  EXPECT_EQ(select->ColumnText(0), text);
  EXPECT_EQ(select->ColumnText(1), "text");
  EXPECT_EQ(select->ColumnBlob(2), blob);
  EXPECT_EQ(select->ColumnText(3), "blob");
  ASSERT_TRUE(*select->Step());  // empty values are empty, not NULL
  EXPECT_EQ(select->ColumnText(1), "text");
  EXPECT_EQ(select->ColumnText(3), "blob");
  EXPECT_FALSE(*select->Step());
  EXPECT_FALSE(insert->BindUncopiedText(3, text).ok());  // out of range
}

TEST_F(SqliteTest, IntegerBindsOfEveryWidth) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  Result<Statement> stmt = db->Prepare("SELECT ?, ?, ?, ?");
  ASSERT_TRUE(stmt.ok());
  ASSERT_TRUE(stmt->Bind(1, 7).ok());
  ASSERT_TRUE(stmt->Bind(2, std::uint32_t{4'000'000'000}).ok());
  ASSERT_TRUE(stmt->Bind(3, std::size_t{12}).ok());
  ASSERT_TRUE(stmt->Bind(4, true).ok());
  ASSERT_TRUE(*stmt->Step());
  EXPECT_EQ(stmt->ColumnInt64(0), 7);
  EXPECT_EQ(stmt->ColumnInt64(1), 4'000'000'000);
  EXPECT_EQ(stmt->ColumnInt64(2), 12);
  EXPECT_EQ(stmt->ColumnInt64(3), 1);
}

TEST_F(SqliteTest, NamedBinds) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  Result<Statement> stmt = db->Prepare("SELECT :id, @name, $blob");
  ASSERT_TRUE(stmt.ok());
  EXPECT_EQ(*stmt->ParameterIndex(":id"), 1);
  ASSERT_TRUE(stmt->Bind(":id", 42).ok());
  ASSERT_TRUE(stmt->Bind("@name", "alice").ok());
  ASSERT_TRUE(stmt->Bind("$blob", nullptr).ok());
  Status missing = stmt->Bind(":nope", 1);
  EXPECT_EQ(missing.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(missing.message(), "bind `SELECT :id, @name, $blob`: no parameter named :nope");
  ASSERT_TRUE(*stmt->Step());
  EXPECT_EQ(stmt->ColumnInt64(0), 42);
  EXPECT_EQ(stmt->ColumnText(1), "alice");
  EXPECT_TRUE(stmt->ColumnIsNull(2));
}

TEST_F(SqliteTest, BindOutOfRangeIsAnError) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  Result<Statement> stmt = db->Prepare("SELECT ?");
  ASSERT_TRUE(stmt.ok());
  Status status = stmt->Bind(2, 1);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "bind parameter 2 of `SELECT ?`: column index out of range");
}

TEST_F(SqliteTest, ResetRerunsWithTheSameBindings) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(x)").ok());
  Result<Statement> insert = db->Prepare("INSERT INTO t VALUES (?)");
  ASSERT_TRUE(insert.ok());
  ASSERT_TRUE(insert->Bind(1, "v").ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(insert->Step().ok());
    insert->Reset();
  }
  EXPECT_EQ(Count(*db, "t"), 3);
  EXPECT_EQ(QueryText(*db, "SELECT group_concat(x, '') FROM t"), "vvv");
}

TEST_F(SqliteTest, StatementMoves) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  Result<Statement> a = db->Prepare("SELECT 1");
  Result<Statement> b = db->Prepare("SELECT 2");
  ASSERT_TRUE(a.ok() && b.ok());
  Statement moved(std::move(*a));
  *b = std::move(moved);  // finalizes "SELECT 2"
  ASSERT_TRUE(*b->Step());
  EXPECT_EQ(b->ColumnInt64(0), 1);
}

TEST_F(SqliteTest, BadSqlGivesAClearStatus) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  Result<Statement> stmt = db->Prepare("SELEC 1");
  ASSERT_FALSE(stmt.ok());
  EXPECT_EQ(stmt.status().code(), StatusCode::kIo);
  EXPECT_EQ(stmt.status().message(), "prepare `SELEC 1`: near \"SELEC\": syntax error");

  Status exec = db->Exec("INSERT INTO nope VALUES (1)");
  EXPECT_EQ(exec.code(), StatusCode::kIo);
  EXPECT_EQ(exec.message(), "exec `INSERT INTO nope VALUES (1)`: no such table: nope");
}

TEST_F(SqliteTest, LongSqlIsAbbreviatedInMessages) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  std::string sql = "SELECT\n  nope";
  for (int i = 0; i < 50; ++i) sql += ",\n  " + std::to_string(i);
  Result<Statement> stmt = db->Prepare(sql);
  ASSERT_FALSE(stmt.ok());
  const std::string& message = stmt.status().message();
  EXPECT_EQ(message.rfind("prepare `SELECT nope, 0, 1,", 0), 0u) << message;
  EXPECT_NE(message.find("...`: no such column: nope"), std::string::npos) << message;
  EXPECT_LT(message.size(), 150u);
}

TEST_F(SqliteTest, PrepareTakesExactlyOneStatement) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  Result<Statement> two = db->Prepare("SELECT 1; SELECT 2");
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(two.status().message(),
            "prepare `SELECT 1; SELECT 2`: more than one statement; use Exec");
  EXPECT_TRUE(db->Prepare("SELECT 1;").ok());
  EXPECT_TRUE(db->Prepare("SELECT 1; -- trailing comment\n ;").ok());
  Result<Statement> empty = db->Prepare("  -- nothing");
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(db->Prepare("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(db->Prepare("SELECT 1; SELEC 2").ok());
}

TEST_F(SqliteTest, ConstraintViolationOnStep) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(k TEXT PRIMARY KEY)").ok());
  Result<Statement> insert = db->Prepare("INSERT INTO t VALUES ('a')");
  ASSERT_TRUE(insert.ok());
  ASSERT_TRUE(insert->Step().ok());
  insert->Reset();
  Result<bool> again = insert->Step();
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kIo);
  EXPECT_EQ(again.status().message(),
            "step `INSERT INTO t VALUES ('a')`: UNIQUE constraint failed: t.k");
}

TEST_F(SqliteTest, ForeignKeysAreEnforced) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE parent(id INTEGER PRIMARY KEY);"
                       "CREATE TABLE child(p INTEGER REFERENCES parent(id))")
                  .ok());
  Status status = db->Exec("INSERT INTO child VALUES (7)");
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("FOREIGN KEY constraint failed"), std::string::npos)
      << status.message();
}

TEST_F(SqliteTest, TransactionCommits) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(x)").ok());
  {
    Result<Transaction> txn = db->Begin();
    ASSERT_TRUE(txn.ok()) << txn.status().ToString();
    ASSERT_TRUE(db->Exec("INSERT INTO t VALUES (1), (2)").ok());
    ASSERT_TRUE(txn->Commit().ok());
    Status twice = txn->Commit();
    EXPECT_EQ(twice.code(), StatusCode::kInternal);
  }
  EXPECT_EQ(Count(*db, "t"), 2);
  auto other = OpenOrDie();
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(Count(*other, "t"), 2);
}

TEST_F(SqliteTest, TransactionRollsBackOnDestruction) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(x); INSERT INTO t VALUES (0)").ok());
  {
    Result<Transaction> txn = db->Begin();
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(db->Exec("INSERT INTO t VALUES (1)").ok());
    ASSERT_TRUE(db->Exec("DELETE FROM t WHERE x = 0").ok());
    EXPECT_EQ(QueryText(*db, "SELECT group_concat(x) FROM t"), "1");
  }
  EXPECT_EQ(QueryText(*db, "SELECT group_concat(x) FROM t"), "0");
  // The connection is usable for a new transaction afterwards.
  Result<Transaction> next = db->Begin();
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(next->Commit().ok());
}

TEST_F(SqliteTest, MovedTransactionRollsBackOnce) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(x)").ok());
  {
    Result<Transaction> txn = db->Begin();
    ASSERT_TRUE(txn.ok());
    Transaction moved(std::move(*txn));
    ASSERT_TRUE(db->Exec("INSERT INTO t VALUES (1)").ok());
    EXPECT_EQ(txn->Commit().code(), StatusCode::kInternal);  // the moved-from shell
  }
  EXPECT_EQ(Count(*db, "t"), 0);
}

TEST_F(SqliteTest, NestedBeginFails) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  Result<Transaction> outer = db->Begin();
  ASSERT_TRUE(outer.ok());
  Result<Transaction> inner = db->Begin();
  ASSERT_FALSE(inner.ok());
  EXPECT_EQ(inner.status().message(),
            "exec `BEGIN IMMEDIATE`: cannot start a transaction within a transaction");
  EXPECT_TRUE(outer->Commit().ok());
}

TEST_F(SqliteTest, SecondWriterIsBusyWhileReadersProceed) {
  auto writer = OpenOrDie({.busy_timeout_ms = 50});
  auto other = OpenOrDie({.busy_timeout_ms = 50});
  ASSERT_TRUE(writer != nullptr && other != nullptr);
  ASSERT_TRUE(writer->Exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)").ok());

  Result<Transaction> txn = writer->Begin();
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE(writer->Exec("INSERT INTO t VALUES (2)").ok());

  Result<Transaction> blocked = other->Begin();
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(blocked.status().message(),
            "exec `BEGIN IMMEDIATE`: database is busy: database is locked");
  Status write = other->Exec("INSERT INTO t VALUES (3)");
  EXPECT_EQ(write.code(), StatusCode::kUnavailable) << write.ToString();

  // WAL: a reader sees the last committed state while the write is open.
  EXPECT_EQ(Count(*other, "t"), 1);

  ASSERT_TRUE(txn->Commit().ok());
  Result<Transaction> now = other->Begin();
  ASSERT_TRUE(now.ok()) << now.status().ToString();
  EXPECT_EQ(Count(*other, "t"), 2);
  ASSERT_TRUE(now->Commit().ok());
}

TEST_F(SqliteTest, BusyTimeoutWaitsForTheOtherWriter) {
  auto first = OpenOrDie();
  auto second = OpenOrDie({.busy_timeout_ms = 10'000});
  ASSERT_TRUE(first != nullptr && second != nullptr);
  ASSERT_TRUE(first->Exec("CREATE TABLE t(x)").ok());

  std::promise<void> began;
  std::future<void> began_future = began.get_future();
  // `first` belongs to this thread from here on; connections are single-threaded.
  std::thread holder([&first, &began] {
    Result<Transaction> txn = first->Begin();
    const bool wrote = txn.ok() && first->Exec("INSERT INTO t VALUES (1)").ok();
    began.set_value();  // even on failure, so the test cannot hang
    ASSERT_TRUE(wrote);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_TRUE(txn->Commit().ok());
  });
  began_future.wait();
  Result<Transaction> txn = second->Begin();  // waits for the holder's commit
  holder.join();
  ASSERT_TRUE(txn.ok()) << txn.status().ToString();
  ASSERT_TRUE(second->Exec("INSERT INTO t VALUES (2)").ok());
  ASSERT_TRUE(txn->Commit().ok());
  EXPECT_EQ(Count(*second, "t"), 2);
}

TEST_F(SqliteTest, IntegrityCheckPassesOnAHealthyFile) {
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(
      db->Exec("CREATE TABLE t(x); CREATE INDEX tx ON t(x); INSERT INTO t VALUES (1)").ok());
  EXPECT_TRUE(db->IntegrityCheck().ok());
}

TEST_F(SqliteTest, NotADatabaseIsDataLoss) {
  {
    std::ofstream out(path_, std::ios::binary);
    out << std::string(8192, 'x');
  }
  Result<std::unique_ptr<Database>> db = Database::Open(path_);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(db.status().message().rfind("open " + path_ + ": ", 0), 0u) << db.status().message();
  EXPECT_NE(db.status().message().find("file is not a database"), std::string::npos)
      << db.status().message();
}

TEST_F(SqliteTest, CorruptPagesAreDataLoss) {
  {
    auto db = OpenOrDie();
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->Exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);"
                         "CREATE INDEX tv ON t(v)")
                    .ok());
    Result<Transaction> txn = db->Begin();
    ASSERT_TRUE(txn.ok());
    Result<Statement> insert = db->Prepare("INSERT INTO t(v) VALUES (?)");
    ASSERT_TRUE(insert.ok());
    for (int i = 0; i < 2000; ++i) {
      ASSERT_TRUE(insert->Bind(1, "value number " + std::to_string(i)).ok());
      ASSERT_TRUE(insert->Step().ok());
      insert->Reset();
    }
    ASSERT_TRUE(txn->Commit().ok());
    ASSERT_TRUE(db->Exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
  }
  // Overwrite the middle of the file (past the header and the schema page) with garbage.
  const auto size = std::filesystem::file_size(path_);
  ASSERT_GT(size, 8u * 4096u);
  {
    std::fstream file(path_, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 2));
    const std::string garbage(3 * 4096, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  auto db = OpenOrDie();
  ASSERT_NE(db, nullptr);
  Status status = db->IntegrityCheck();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kDataLoss) << status.ToString();
  EXPECT_EQ(status.message().rfind("integrity check: ", 0), 0u) << status.message();
}

}  // namespace
}  // namespace trove::base

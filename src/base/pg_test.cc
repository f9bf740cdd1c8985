#include "base/pg.h"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/testing/pg_server.h"

namespace trove::base::pg {
namespace {

using testing::PgDatabase;
using testing::PgScratchServer;

template <typename... Args>
std::string One(Connection& conn, std::string_view sql, const Args&... args) {
  return testing::QueryOne(conn, sql, args...);
}

// ---------------------------------------------------------------------------------------------
// Pure functions

TEST(PgUrlTest, RedactUrlHidesPasswords) {
  EXPECT_EQ(RedactUrl("postgresql://u:s3cret@db.example:5432/kb?sslmode=require"),
            "postgresql://u:***@db.example:5432/kb?sslmode=require");
  EXPECT_EQ(RedactUrl("postgres://u@h/kb?password=s3cret&sslmode=verify-full"),
            "postgres://u@h/kb?sslmode=verify-full");
  EXPECT_EQ(RedactUrl("postgresql://u@h/kb?sslmode=require&password=s3cret"),
            "postgresql://u@h/kb?sslmode=require");
  EXPECT_EQ(RedactUrl("postgresql://u@h/kb?password=s3cret"), "postgresql://u@h/kb");
  EXPECT_EQ(RedactUrl("postgresql://u:p%40ss@h/kb"), "postgresql://u:***@h/kb");
  // '@' inside a percent-encoded password and a user without password stay intact.
  EXPECT_EQ(RedactUrl("postgresql://trove@/kb?host=/tmp/x&port=5"),
            "postgresql://trove@/kb?host=/tmp/x&port=5");
  EXPECT_EQ(RedactUrl("postgresql://u:pw@h"), "postgresql://u:***@h");
  EXPECT_EQ(RedactUrl("host=h user=u password=s3cret dbname=kb"), "host=h user=u dbname=kb");
  EXPECT_EQ(RedactUrl("/home/me/kb.sqlite"), "/home/me/kb.sqlite");
  EXPECT_TRUE(IsPostgresUrl("postgresql://h/db"));
  EXPECT_TRUE(IsPostgresUrl("postgres://h/db"));
  EXPECT_FALSE(IsPostgresUrl("kb.sqlite"));
  EXPECT_FALSE(IsPostgresUrl("postgresql:/x"));
}

TEST(PgUrlTest, RewritesPlaceholdersOutsideQuotes) {
  EXPECT_EQ(RewritePlaceholders("SELECT ?, ?"), "SELECT $1, $2");
  EXPECT_EQ(RewritePlaceholders("SELECT ?2, ?1, ?"), "SELECT $2, $1, $3");
  EXPECT_EQ(RewritePlaceholders("SELECT '?', \"a?\", ? -- ?\n, ? /* ? */"),
            "SELECT '?', \"a?\", $1 -- ?\n, $2 /* ? */");
  EXPECT_EQ(RewritePlaceholders("SELECT 'it''s ?', ?"), "SELECT 'it''s ?', $1");
  EXPECT_EQ(RewritePlaceholders("SELECT $1, $2::int"), "SELECT $1, $2::int");
  EXPECT_EQ(RewritePlaceholders("DO $$ BEGIN PERFORM '?'; END $$; SELECT ?"),
            "DO $$ BEGIN PERFORM '?'; END $$; SELECT $1");
  EXPECT_EQ(RewritePlaceholders("SELECT $tag$ ? $tag$, ?"), "SELECT $tag$ ? $tag$, $1");
  EXPECT_EQ(QuoteIdentifier("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(QuoteLiteral("it's"), "'it''s'");
}

TEST(PgUrlTest, StatusClassifiers) {
  EXPECT_TRUE(IsRetryable(Status::Unavailable("exec `x`: deadlock detected (sqlstate 40P01)")));
  EXPECT_TRUE(IsRetryable(
      Status::Unavailable("x: could not serialize (sqlstate 40001)").WithContext("outer")));
  EXPECT_FALSE(IsRetryable(Status::Io("x: syntax error (sqlstate 42601)")));
  EXPECT_EQ(SqlStateOf(Status::Io("x: syntax error (sqlstate 42601)")), "42601");
  EXPECT_EQ(SqlStateOf(Status::Io("no state")), "");
  EXPECT_TRUE(IsConnectionLost(Status::Unavailable("exec `x`: connection lost to y: z")));
  EXPECT_FALSE(IsConnectionLost(Status::Io("connection lost")));
}

// ---------------------------------------------------------------------------------------------
// One database per test on the shared scratch server

class PgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.ok());
    conn_ = db_.Connect();
    ASSERT_NE(conn_, nullptr);
  }

  PgDatabase db_;
  std::unique_ptr<Connection> conn_;
};

TEST_F(PgTest, ConnectsOverSocketAndTcp) {
  EXPECT_TRUE(conn_->Healthy());
  EXPECT_GE(conn_->server_version(), 150000);
  EXPECT_GT(conn_->backend_pid(), 0);
  EXPECT_GE(conn_->socket(), 0);
  EXPECT_EQ(One(*conn_, "SELECT current_database()"), db_.name());
  EXPECT_EQ(One(*conn_, "SELECT current_setting('application_name')"), "trove-test");

  // TCP with scram-sha-256: the password in the URL, or in a pgpass file named by the URL.
  auto tcp = Connection::Open({.url = db_.tcp_url_with_password()});
  ASSERT_TRUE(tcp.ok()) << tcp.status().ToString();
  EXPECT_EQ(One(**tcp, "SELECT current_database()"), db_.name());
  EXPECT_EQ((*tcp)->target().find(db_.server().password), std::string::npos);
  auto passfile = Connection::Open({.url = db_.tcp_url() + "&passfile=" + db_.server().pgpassfile});
  ASSERT_TRUE(passfile.ok()) << passfile.status().ToString();
  // The URL's own application_name wins over ConnectOptions'.
  auto named = Connection::Open({.url = db_.url() + "&application_name=mine"});
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(One(**named, "SELECT current_setting('application_name')"), "mine");
}

TEST_F(PgTest, ParametersRoundTrip) {
  for (std::int64_t v :
       {std::int64_t{0}, std::int64_t{-1}, std::numeric_limits<std::int64_t>::min(),
        std::numeric_limits<std::int64_t>::max(), std::int64_t{4294967295}}) {
    auto stmt = conn_->Query("SELECT ?::bigint, ?::text", v, "x");
    ASSERT_TRUE(stmt.ok());
    ASSERT_TRUE(*stmt->Step());
    EXPECT_EQ(stmt->ColumnInt64(0), v);
    EXPECT_EQ(stmt->ColumnText(0), std::to_string(v));
  }
  // Doubles travel as shortest round-trip text and come back in binary: bit-exact.
  const double values[] = {0.1,
                           0.1 + 0.2,
                           -0.0,
                           5e-324,
                           std::numeric_limits<double>::max(),
                           -std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           1.0 / 3.0};
  for (double v : values) {
    auto stmt = conn_->Query("SELECT ?::float8", v);
    ASSERT_TRUE(stmt.ok());
    auto row = stmt->Step();
    ASSERT_TRUE(row.ok()) << v << ": " << row.status().ToString();
    ASSERT_TRUE(*row);
    EXPECT_EQ(std::bit_cast<std::uint64_t>(stmt->ColumnDouble(0)), std::bit_cast<std::uint64_t>(v))
        << v;
  }
  // NaN binds NULL, as base::Statement does.
  auto nan = conn_->Query("SELECT ?::float8 IS NULL", std::nan(""));
  ASSERT_TRUE(nan.ok());
  ASSERT_TRUE(*nan->Step());
  EXPECT_EQ(nan->ColumnInt64(0), 1);

  // Text: UTF-8 and quotes pass untouched; NULL reads as "" and IsNull.
  std::string text = "Grüße 'quoted' \"dq\" \\ 日本";
  auto t = conn_->Query("SELECT ?::text, ?::text", text, nullptr);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(*t->Step());
  EXPECT_EQ(t->ColumnText(0), text);
  EXPECT_FALSE(t->ColumnIsNull(0));
  EXPECT_TRUE(t->ColumnIsNull(1));
  EXPECT_EQ(t->ColumnText(1), "");
  EXPECT_EQ(t->ColumnInt64(1), 0);

  // Out-of-range parameter indexes are refused before anything runs.
  auto stmt = conn_->Prepare("SELECT ?::int");
  ASSERT_TRUE(stmt.ok());
  EXPECT_EQ(stmt->Bind(2, 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(stmt->Bind(0, 1).code(), StatusCode::kInvalidArgument);
}

TEST_F(PgTest, BinaryResultsDecodeByType) {
  auto stmt = conn_->Query(
      "SELECT 7::int2, -70000::int4, -9007199254740993::int8, true, false, 2.5::float4,"
      " 12345.678900::numeric, -0.00012::numeric, 10000000000000000000000::numeric,"
      " '{\"a\": [1, 2]}'::jsonb, '{\"b\":1}'::json, 'n'::name, 'x'::varchar(3), 42::oid,"
      " 'NaN'::float8");
  ASSERT_TRUE(stmt.ok());
  auto row = stmt->Step();
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  ASSERT_TRUE(*row);
  ASSERT_EQ(stmt->ColumnCount(), 15);
  EXPECT_EQ(stmt->ColumnInt64(0), 7);
  EXPECT_EQ(stmt->ColumnInt64(1), -70000);
  EXPECT_EQ(stmt->ColumnInt64(2), -9007199254740993);
  EXPECT_EQ(stmt->ColumnText(2), "-9007199254740993");
  EXPECT_EQ(stmt->ColumnInt64(3), 1);
  EXPECT_EQ(stmt->ColumnInt64(4), 0);
  EXPECT_EQ(stmt->ColumnDouble(5), 2.5);
  EXPECT_EQ(stmt->ColumnText(6), "12345.678900");
  EXPECT_DOUBLE_EQ(stmt->ColumnDouble(6), 12345.6789);
  EXPECT_EQ(stmt->ColumnText(7), "-0.00012");
  EXPECT_EQ(stmt->ColumnText(8), "10000000000000000000000");
  EXPECT_EQ(stmt->ColumnText(9), "{\"a\": [1, 2]}");
  EXPECT_EQ(stmt->ColumnText(10), "{\"b\":1}");
  EXPECT_EQ(stmt->ColumnText(11), "n");
  EXPECT_EQ(stmt->ColumnText(12), "x");
  EXPECT_EQ(stmt->ColumnInt64(13), 42);
  EXPECT_TRUE(std::isnan(stmt->ColumnDouble(14)));
  EXPECT_EQ(stmt->ColumnName(0), "int2");
  auto done = stmt->Step();
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(*done);
}

TEST_F(PgTest, TableRowsRoundTripIncludingBlobsWithNul) {
  ASSERT_TRUE(conn_
                  ->Exec("CREATE TABLE t (id bigint PRIMARY KEY, name text COLLATE \"C\", "
                         "score double precision, body bytea, flag integer)")
                  .ok());
  std::string blob("a\0b\xff\x00z", 6);
  auto insert = conn_->Prepare("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)");
  ASSERT_TRUE(insert.ok());
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(insert->Bind(1, i).ok());
    ASSERT_TRUE(insert->Bind(2, "n" + std::to_string(i)).ok());
    ASSERT_TRUE(insert->Bind(3, i == 7 ? -std::numeric_limits<double>::infinity() : i * 0.5).ok());
    ASSERT_TRUE(insert->BindBlob(4, blob + std::to_string(i)).ok());
    ASSERT_TRUE(insert->Bind(5, i % 2 == 0).ok());
    auto changed = insert->Run();
    ASSERT_TRUE(changed.ok()) << changed.status().ToString();
    EXPECT_EQ(*changed, 1);
  }
  auto dup = conn_->Query("INSERT INTO t (id) VALUES (?)", 3);
  ASSERT_TRUE(dup.ok());
  Status status = dup->Run().status();
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists) << status.ToString();
  EXPECT_EQ(SqlStateOf(status), "23505");

  auto select =
      conn_->Prepare("SELECT id, name, score, body, flag FROM t WHERE id >= ? ORDER BY id");
  ASSERT_TRUE(select.ok());
  ASSERT_TRUE(select->Bind(1, 5).ok());
  int rows = 0;
  while (true) {
    auto row = select->Step();
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    if (!*row) break;
    std::int64_t id = select->ColumnInt64(0);
    EXPECT_EQ(id, 5 + rows);
    EXPECT_EQ(select->ColumnTextView(1), "n" + std::to_string(id));
    EXPECT_EQ(select->ColumnDouble(2),
              id == 7 ? -std::numeric_limits<double>::infinity() : id * 0.5);
    EXPECT_EQ(select->ColumnBlobView(3), blob + std::to_string(id));
    EXPECT_EQ(select->ColumnBlob(3).size(), 6 + std::to_string(id).size());
    EXPECT_EQ(select->ColumnInt64(4), id % 2 == 0 ? 1 : 0);
    ++rows;
  }
  EXPECT_EQ(rows, 45);
  // Reset runs it again with the same bindings; a new binding runs it with the new value.
  select->Reset();
  ASSERT_TRUE(*select->Step());
  EXPECT_EQ(select->ColumnInt64(0), 5);
  ASSERT_TRUE(select->Bind(1, 49).ok());
  ASSERT_TRUE(*select->Step());
  EXPECT_EQ(select->ColumnInt64(0), 49);
  EXPECT_FALSE(*select->Step());

  // Streaming returns the same rows one at a time; the connection is usable afterwards.
  auto stream = conn_->Prepare("SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g");
  ASSERT_TRUE(stream.ok());
  stream->set_streaming(true);
  std::int64_t sum = 0;
  int count = 0;
  while (true) {
    auto row = stream->Step();
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    if (!*row) break;
    sum += stream->ColumnInt64(0);
    ++count;
  }
  EXPECT_EQ(count, 20000);
  EXPECT_EQ(sum, std::int64_t{20000} * 20001 / 2);
  // Abandoned halfway, a streamed statement drains itself.
  stream->Reset();
  ASSERT_TRUE(*stream->Step());
  stream->Reset();
  EXPECT_EQ(One(*conn_, "SELECT count(*) FROM t"), "50");
}

TEST_F(PgTest, ErrorsBecomeStatusWithSqlAndState) {
  Status syntax = conn_->Exec("SELEC 1");
  EXPECT_EQ(syntax.code(), StatusCode::kIo);
  EXPECT_NE(syntax.message().find("exec `SELEC 1`"), std::string::npos) << syntax.message();
  EXPECT_EQ(SqlStateOf(syntax), "42601");
  auto prepared = conn_->Prepare("SELECT nope FROM nowhere");
  ASSERT_TRUE(prepared.ok());  // preparation happens on first use
  auto step = prepared->Step();
  ASSERT_FALSE(step.ok());
  EXPECT_NE(step.status().message().find("prepare `SELECT nope FROM nowhere`"), std::string::npos)
      << step.status().message();
  EXPECT_EQ(SqlStateOf(step.status()), "42P01");

  // A trigger's RAISE EXCEPTION (P0001) is an invalid argument carrying its message.
  ASSERT_TRUE(conn_
                  ->Exec("CREATE TABLE e (id bigint);"
                         "CREATE FUNCTION no_update() RETURNS trigger LANGUAGE plpgsql AS $$ "
                         "BEGIN RAISE EXCEPTION 'evidence is append-only'; END $$;"
                         "CREATE TRIGGER e_ro BEFORE UPDATE ON e FOR EACH ROW "
                         "EXECUTE FUNCTION no_update();"
                         "INSERT INTO e VALUES (1)")
                  .ok());
  Status raised = conn_->Exec("UPDATE e SET id = 2");
  EXPECT_EQ(raised.code(), StatusCode::kInvalidArgument) << raised.ToString();
  EXPECT_NE(raised.message().find("evidence is append-only"), std::string::npos);

  // Statement timeout: cancelled.
  Status timeout = conn_->Exec("SET statement_timeout = 50; SELECT pg_sleep(5)");
  EXPECT_EQ(timeout.code(), StatusCode::kCancelled) << timeout.ToString();
  ASSERT_TRUE(conn_->Exec("SET statement_timeout = 0").ok());

  // A missing database is kNotFound.
  auto missing = Connection::Open({.url = db_.server().UrlFor("no_such_db_here")});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);
  // Not a URL at all.
  auto not_url = Connection::Open({.url = "/tmp/kb.sqlite"});
  EXPECT_EQ(not_url.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(PgTest, TransactionsCommitRollBackAndReportAbortedCommits) {
  ASSERT_TRUE(conn_->Exec("CREATE TABLE t (id bigint PRIMARY KEY)").ok());
  {
    auto txn = conn_->Begin();
    ASSERT_TRUE(txn.ok());
    EXPECT_TRUE(conn_->in_transaction());
    ASSERT_TRUE(conn_->Exec("INSERT INTO t VALUES (1)").ok());
  }  // rolled back
  EXPECT_FALSE(conn_->in_transaction());
  EXPECT_EQ(One(*conn_, "SELECT count(*) FROM t"), "0");
  {
    auto txn = conn_->Begin(Isolation::kSerializable);
    ASSERT_TRUE(txn.ok());
    EXPECT_EQ(One(*conn_, "SELECT current_setting('transaction_isolation')"), "serializable");
    ASSERT_TRUE(conn_->Exec("INSERT INTO t VALUES (1)").ok());
    ASSERT_TRUE(txn->Commit().ok());
    EXPECT_EQ(txn->Commit().code(), StatusCode::kInternal);  // already ended
  }
  EXPECT_EQ(One(*conn_, "SELECT count(*) FROM t"), "1");
  {
    // COMMIT after a failed statement answers ROLLBACK: Commit reports it.
    auto txn = conn_->Begin();
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(conn_->Exec("INSERT INTO t VALUES (2)").ok());
    EXPECT_FALSE(conn_->Exec("INSERT INTO t VALUES (1)").ok());
    Status commit = txn->Commit();
    EXPECT_FALSE(commit.ok());
    EXPECT_NE(commit.message().find("rolled back"), std::string::npos) << commit.message();
  }
  EXPECT_EQ(One(*conn_, "SELECT count(*) FROM t"), "1");
  EXPECT_EQ(conn_->Begin().ok(), true);  // the connection is idle again (and rolls back)
}

TEST_F(PgTest, CopyBinaryLoadsManyRowsExactly) {
  ASSERT_TRUE(conn_
                  ->Exec("CREATE TABLE f (id bigint, name text, score double precision, "
                         "body bytea, n integer, s smallint, b boolean, maybe text)")
                  .ok());
  constexpr int kRows = 100000;
  auto copy =
      conn_->CopyIn("COPY f (id, name, score, body, n, s, b, maybe) FROM STDIN (FORMAT binary)");
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  for (int i = 0; i < kRows; ++i) {
    copy->StartRow(8);
    copy->AddInt64(std::int64_t{1} << 40 | i);
    copy->AddText("fn_" + std::to_string(i));
    copy->AddDouble(i == 5 ? std::numeric_limits<double>::infinity() : i / 3.0);
    std::string body(static_cast<std::size_t>(i % 17), '\0');
    body += static_cast<char>(i & 0xff);
    copy->AddBytes(body);
    copy->AddInt32(-i);
    copy->AddInt16(static_cast<std::int16_t>(i % 1000));
    copy->AddBool(i % 3 == 0);
    if (i % 10 == 0) {
      copy->AddNull();
    } else {
      copy->AddText("m");
    }
    ASSERT_TRUE(copy->EndRow().ok());
  }
  auto stored = copy->Finish();
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(*stored, kRows);
  EXPECT_EQ(One(*conn_, "SELECT count(*) FROM f"), std::to_string(kRows));
  EXPECT_EQ(One(*conn_, "SELECT sum(n) FROM f"),
            std::to_string(-std::int64_t{kRows} * (kRows - 1) / 2));
  EXPECT_EQ(One(*conn_, "SELECT count(*) FROM f WHERE maybe IS NULL"), std::to_string(kRows / 10));
  EXPECT_EQ(One(*conn_, "SELECT count(*) FROM f WHERE b"), std::to_string((kRows + 2) / 3));
  auto row = conn_->Query("SELECT id, name, score, body, s FROM f WHERE id = ?",
                          std::int64_t{1} << 40 | 12345);
  ASSERT_TRUE(row.ok());
  ASSERT_TRUE(*row->Step());
  EXPECT_EQ(row->ColumnText(1), "fn_12345");
  EXPECT_EQ(row->ColumnDouble(2), 12345 / 3.0);
  std::string body(12345 % 17, '\0');
  body += static_cast<char>(12345 & 0xff);
  EXPECT_EQ(row->ColumnBlob(3), body);
  EXPECT_EQ(row->ColumnInt64(4), 345);
  EXPECT_EQ(One(*conn_, "SELECT score FROM f WHERE n = -5"), "inf");

  // A row with the wrong field count is refused; abandoning the COPY stores nothing.
  {
    auto bad = conn_->CopyIn("COPY f (id) FROM STDIN (FORMAT binary)");
    ASSERT_TRUE(bad.ok());
    bad->StartRow(1);
    bad->AddInt64(1);
    ASSERT_TRUE(bad->EndRow().ok());
    bad->StartRow(1);
    EXPECT_EQ(bad->EndRow().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(One(*conn_, "SELECT count(*) FROM f"), std::to_string(kRows));
  // A type mismatch (int4 into bigint) is the server's error, reported by Finish.
  auto mismatch = conn_->CopyIn("COPY f (id) FROM STDIN (FORMAT binary)");
  ASSERT_TRUE(mismatch.ok());
  mismatch->StartRow(1);
  mismatch->AddInt32(1);
  ASSERT_TRUE(mismatch->EndRow().ok());
  auto failed = mismatch->Finish();
  EXPECT_FALSE(failed.ok());
  EXPECT_EQ(One(*conn_, "SELECT count(*) FROM f"), std::to_string(kRows));
  // Not a COPY.
  EXPECT_FALSE(conn_->CopyIn("SELECT 1").ok());
  EXPECT_EQ(One(*conn_, "SELECT 1"), "1");
}

TEST_F(PgTest, ListenReceivesNotificationsAndWaitsCanBeCancelled) {
  auto other = db_.Connect();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(conn_->Listen("warden_symbols").ok());
  auto none = conn_->WaitNotifications(0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  // Notifications are delivered at commit, in order.
  {
    auto txn = other->Begin();
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(other->Notify("warden_symbols", "id-1").ok());
    ASSERT_TRUE(other->Notify("warden_symbols", "id-2").ok());
    ASSERT_TRUE(other->Notify("elsewhere", "x").ok());
    ASSERT_TRUE(txn->Commit().ok());
  }
  std::vector<Notification> got;
  while (got.size() < 2) {
    auto batch = conn_->WaitNotifications(30000);
    ASSERT_TRUE(batch.ok()) << batch.status().ToString();
    ASSERT_FALSE(batch->empty());
    got.insert(got.end(), batch->begin(), batch->end());
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].channel, "warden_symbols");
  EXPECT_EQ(got[0].payload, "id-1");
  EXPECT_EQ(got[1].payload, "id-2");
  EXPECT_EQ(got[0].backend_pid, other->backend_pid());

  // A readable cancel fd ends the wait early with nothing.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  auto cancelled = conn_->WaitNotifications(-1, fds[0]);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_TRUE(cancelled->empty());
  close(fds[0]);
  close(fds[1]);

  ASSERT_TRUE(conn_->Unlisten("warden_symbols").ok());
  ASSERT_TRUE(other->Notify("warden_symbols", "after").ok());
  EXPECT_EQ(One(*conn_, "SELECT 1"), "1");
  auto after = conn_->WaitNotifications(0);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->empty());
}

TEST_F(PgTest, SerializationFailureIsRetryableAndRetried) {
  ASSERT_TRUE(conn_
                  ->Exec("CREATE TABLE c (id bigint PRIMARY KEY, v bigint);"
                         "INSERT INTO c VALUES (1, 0)")
                  .ok());
  auto other = db_.Connect();
  ASSERT_NE(other, nullptr);
  // REPEATABLE READ: the snapshot is taken, another connection commits an update of the row,
  // and updating it now fails with 40001.
  int attempts = 0;
  Status status = RunTransaction(
      *conn_,
      [&]() -> Status {
        ++attempts;
        auto read = conn_->Query("SELECT v FROM c WHERE id = 1");
        RETURN_IF_ERROR(read.status());
        RETURN_IF_ERROR(read->Step().status());
        if (attempts == 1) RETURN_IF_ERROR(other->Exec("UPDATE c SET v = v + 100 WHERE id = 1"));
        auto write = conn_->Query("UPDATE c SET v = v + 1 WHERE id = 1");
        RETURN_IF_ERROR(write.status());
        Result<std::int64_t> changed = write->Run();
        if (attempts == 1) {
          EXPECT_FALSE(changed.ok());
          EXPECT_TRUE(IsRetryable(changed.status())) << changed.status().ToString();
          EXPECT_EQ(SqlStateOf(changed.status()), "40001");
        }
        return changed.status();
      },
      Isolation::kRepeatableRead);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(One(*conn_, "SELECT v FROM c WHERE id = 1"), "101");

  // A failure that is not retryable is returned at once.
  attempts = 0;
  status = RunTransaction(*conn_, [&]() -> Status {
    ++attempts;
    return conn_->Exec("INSERT INTO c VALUES (1, 0)");
  });
  EXPECT_EQ(status.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(attempts, 1);
  // max_attempts bounds the reruns.
  attempts = 0;
  status = RunTransaction(
      *conn_,
      [&]() -> Status {
        ++attempts;
        return Status::Unavailable("x: deadlock detected (sqlstate 40P01)");
      },
      Isolation::kReadCommitted, 3);
  EXPECT_TRUE(IsRetryable(status));
  EXPECT_EQ(attempts, 3);
}

TEST_F(PgTest, DeadlockBetweenTwoTransactionsIsRetried) {
  ASSERT_TRUE(conn_
                  ->Exec("CREATE TABLE d (id bigint PRIMARY KEY, v bigint);"
                         "INSERT INTO d VALUES (1, 0), (2, 0)")
                  .ok());
  auto second = db_.Connect();
  ASSERT_NE(second, nullptr);
  // Detect the deadlock quickly (role trove is a superuser of the scratch server).
  ASSERT_TRUE(conn_->Exec("SET deadlock_timeout = '50ms'").ok());
  ASSERT_TRUE(second->Exec("SET deadlock_timeout = '50ms'").ok());

  // Each worker locks its first row, waits until the other holds its own first row (first
  // attempt only), then locks the other row: one of them gets 40P01 and reruns.
  std::atomic<int> locked{0};
  std::atomic<int> attempts{0};
  std::atomic<int> deadlocks{0};
  auto worker = [&](Connection& conn, int first, int then, Status* out) {
    bool first_attempt = true;
    *out = RunTransaction(conn, [&]() -> Status {
      attempts.fetch_add(1);
      RETURN_IF_ERROR(conn.Exec(fmt::format("UPDATE d SET v = v + 1 WHERE id = {}", first)));
      if (first_attempt) {
        first_attempt = false;
        locked.fetch_add(1);
        while (locked.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      Status status = conn.Exec(fmt::format("UPDATE d SET v = v + 10 WHERE id = {}", then));
      if (IsRetryable(status) && SqlStateOf(status) == "40P01") deadlocks.fetch_add(1);
      return status;
    });
  };
  Status a, b;
  std::thread ta(worker, std::ref(*conn_), 1, 2, &a);
  std::thread tb(worker, std::ref(*second), 2, 1, &b);
  ta.join();
  tb.join();
  ASSERT_TRUE(a.ok()) << a.ToString();
  ASSERT_TRUE(b.ok()) << b.ToString();
  EXPECT_EQ(deadlocks.load(), 1);
  EXPECT_EQ(attempts.load(), 3);
  // Both committed exactly once: each row got +1 and +10.
  EXPECT_EQ(One(*conn_, "SELECT string_agg(v::text, ',' ORDER BY id) FROM d"), "11,11");
}

TEST_F(PgTest, ConnectionLostDuringCommitIsReportedAsOutcomeUnknown) {
  // A deferred constraint trigger sleeps at COMMIT; the backend is terminated while COMMIT is in
  // flight. RunTransaction must not rerun the function: the client cannot know the outcome.
  ASSERT_TRUE(conn_
                  ->Exec("CREATE TABLE a (id bigint);"
                         "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$ "
                         "BEGIN PERFORM pg_sleep(60); RETURN NULL; END $$;"
                         "CREATE CONSTRAINT TRIGGER slow AFTER INSERT ON a DEFERRABLE INITIALLY "
                         "DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit()")
                  .ok());
  auto worker = db_.Connect();
  ASSERT_NE(worker, nullptr);
  const int pid = worker->backend_pid();
  std::thread killer([&] {
    for (int i = 0; i < 6000; ++i) {
      std::string sleeping = One(*conn_,
                                 "SELECT count(*) FROM pg_stat_activity WHERE pid = ? AND "
                                 "query = 'COMMIT' AND wait_event = 'PgSleep'",
                                 pid);
      if (sleeping == "1") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(One(*conn_, "SELECT pg_terminate_backend(?, 30000)", pid), "1");
  });
  int attempts = 0;
  Status status = RunTransaction(*worker, [&]() -> Status {
    ++attempts;
    return worker->Exec("INSERT INTO a VALUES (1)");
  });
  killer.join();
  EXPECT_TRUE(IsCommitOutcomeUnknown(status)) << status.ToString();
  EXPECT_TRUE(IsConnectionLost(status)) << status.ToString();
  EXPECT_FALSE(IsRetryable(status));
  EXPECT_EQ(attempts, 1);
  // Here it did not commit (the backend died before finishing COMMIT); the connection reopens.
  EXPECT_EQ(One(*worker, "SELECT count(*) FROM a"), "0");
}

TEST_F(PgTest, PoolHandsOutHealthyConnectionsUpToItsSize) {
  Pool pool({.url = db_.url()}, 2);
  auto a = pool.Acquire();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = pool.Acquire();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(pool.size(), 2);
  EXPECT_NE((*a)->backend_pid(), (*b)->backend_pid());
  auto c = pool.Acquire(50);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(c.status().message().find("pool exhausted"), std::string::npos);

  int pid_b = (*b)->backend_pid();
  { auto drop = std::move(*b); }  // returned
  auto again = pool.Acquire(50);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->backend_pid(), pid_b);  // reused

  // A connection whose backend died is dropped when it comes back; the pool opens a new one.
  ASSERT_EQ(One(*conn_, "SELECT pg_terminate_backend(?, 30000)", pid_b), "1");
  Status lost = (*again)->Exec("SELECT 1");
  EXPECT_TRUE(IsConnectionLost(lost)) << lost.ToString();
  { auto drop = std::move(*again); }
  EXPECT_EQ(pool.size(), 1);
  auto fresh = pool.Acquire(50);
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE((*fresh)->backend_pid(), pid_b);
  EXPECT_EQ(One(**fresh, "SELECT 2"), "2");

  // Threads share it.
  { auto drop = std::move(*fresh); }
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 10; ++j) {
        auto lease = pool.Acquire();
        if (!lease.ok()) continue;
        if ((*lease)->Exec("SELECT 1").ok()) ok.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 60);
  EXPECT_LE(pool.size(), 2);
}

TEST_F(PgTest, PasswordNeverAppearsInStatus) {
  const std::string& password = db_.server().password;
  ASSERT_FALSE(password.empty());
  const std::string port = db_.server().port;
  std::vector<std::string> urls = {
      // the right password, then a statement error and a lost connection on that connection
      db_.tcp_url_with_password(),
      // wrong passwords, in the userinfo and as a parameter
      "postgresql://trove:" + password + "x@127.0.0.1:" + port + "/" + db_.name() +
          "?gssencmode=disable",
      "postgresql://trove@127.0.0.1:" + port + "/" + db_.name() +
          "?gssencmode=disable&password=" + password + "x",
      // a malformed URL that libpq quotes back
      "postgresql://trove:" + password + "%zz@127.0.0.1:" + port + "/x?gssencmode=disable",
      "postgresql://trove:" + password + "@127.0.0.1:" + port + "/x?gssencmode=disable&bogus=1",
      // nothing listening
      "postgresql://trove:" + password + "@127.0.0.1:1/x?gssencmode=disable&connect_timeout=2",
      "postgresql://trove:" + password + "@127.0.0.1:" + port + "/x?sslmode=require",
  };
  std::vector<Status> statuses;
  for (const std::string& url : urls) {
    auto conn = Connection::Open({.url = url, .retry_budget_ms = 200});
    if (!conn.ok()) {
      statuses.push_back(conn.status());
      continue;
    }
    EXPECT_EQ((*conn)->target().find(password), std::string::npos);
    statuses.push_back((*conn)->Exec("SELEC 1"));
    ASSERT_EQ(One(*conn_, "SELECT pg_terminate_backend(?, 30000)", (*conn)->backend_pid()), "1");
    statuses.push_back((*conn)->Exec("SELECT 1"));
    auto reopened = (*conn)->Exec("SELECT 1");  // reconnects
    EXPECT_TRUE(reopened.ok()) << reopened.ToString();
  }
  ASSERT_EQ(statuses.size(), urls.size() + 1);
  EXPECT_EQ(statuses[2].code(), StatusCode::kPermissionDenied) << statuses[2].ToString();
  EXPECT_NE(statuses[2].message().find("authentication failed"), std::string::npos);
  EXPECT_EQ(statuses[3].code(), StatusCode::kPermissionDenied) << statuses[3].ToString();
  for (const Status& status : statuses) {
    EXPECT_FALSE(status.ok());
    EXPECT_EQ(status.ToString().find(password), std::string::npos) << status.ToString();
  }
}

TEST_F(PgTest, SslRequiredAgainstServerWithoutSslIsAClearError) {
  auto conn = Connection::Open({.url = db_.tcp_url_with_password() + "&sslmode=require"});
  ASSERT_FALSE(conn.ok());
  EXPECT_EQ(conn.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(conn.status().message().find("server does not support SSL, but SSL was required"),
            std::string::npos)
      << conn.status().message();
  EXPECT_NE(conn.status().message().find("cannot connect to postgresql://trove:***@127.0.0.1"),
            std::string::npos)
      << conn.status().message();
}

// ---------------------------------------------------------------------------------------------
// A private server: restart, crash, down

class PgLifecycleTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new PgScratchServer(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(server_->ok()); }

  std::unique_ptr<Connection> Connect(int retry_budget_ms = 30000) {
    auto conn = Connection::Open({.url = server_->url(), .retry_budget_ms = retry_budget_ms});
    EXPECT_TRUE(conn.ok()) << conn.status().ToString();
    return conn.ok() ? std::move(*conn) : nullptr;
  }

  static PgScratchServer* server_;
};

PgScratchServer* PgLifecycleTest::server_ = nullptr;

TEST_F(PgLifecycleTest, ReconnectsAfterRestartAndKeepsStatementsAndListens) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Exec("CREATE TABLE IF NOT EXISTS r (id bigint)").ok());
  auto stmt = conn->Prepare("SELECT count(*) + ? FROM r");
  ASSERT_TRUE(stmt.ok());
  ASSERT_TRUE(stmt->Bind(1, 5).ok());
  ASSERT_TRUE(*stmt->Step());
  EXPECT_EQ(stmt->ColumnInt64(0), 5);
  ASSERT_TRUE(conn->Listen("chan").ok());
  int old_pid = conn->backend_pid();
  std::uint64_t old_generation = conn->generation();

  ASSERT_TRUE(server_->Restart());
  // The first command finds the connection gone; the next one reconnects.
  Status first = conn->Exec("SELECT 1");
  if (!first.ok()) {
    EXPECT_TRUE(IsConnectionLost(first)) << first.ToString();
    EXPECT_FALSE(conn->Healthy());
  }
  stmt->Reset();
  auto row = stmt->Step();
  ASSERT_TRUE(row.ok()) << row.status().ToString();
  ASSERT_TRUE(*row);
  EXPECT_EQ(stmt->ColumnInt64(0), 5);  // prepared again on the new connection
  EXPECT_TRUE(conn->Healthy());
  EXPECT_NE(conn->backend_pid(), old_pid);
  EXPECT_EQ(conn->generation(), old_generation + 1);

  // LISTEN was renewed.
  auto other = Connect();
  ASSERT_NE(other, nullptr);
  ASSERT_TRUE(other->Notify("chan", "back").ok());
  auto got = conn->WaitNotifications(30000);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].payload, "back");
}

TEST_F(PgLifecycleTest, RunTransactionSurvivesARestartBeforeCommit) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Exec("DROP TABLE IF EXISTS once; CREATE TABLE once (id bigint)").ok());
  int attempts = 0;
  Status status = RunTransaction(*conn, [&]() -> Status {
    ++attempts;
    RETURN_IF_ERROR(conn->Exec("INSERT INTO once VALUES (1)"));
    if (attempts == 1) {
      EXPECT_TRUE(server_->Restart());
    }
    return conn->Exec("INSERT INTO once VALUES (2)");
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(One(*conn, "SELECT string_agg(id::text, ',' ORDER BY id) FROM once"), "1,2");

  // Inside a transaction a lost connection is not silently replaced.
  auto txn = conn->Begin();
  ASSERT_TRUE(txn.ok());
  ASSERT_TRUE(server_->Restart());
  Status in_txn = conn->Exec("SELECT 1");
  EXPECT_TRUE(IsConnectionLost(in_txn)) << in_txn.ToString();
  Status again = conn->Exec("SELECT 1");
  EXPECT_TRUE(IsConnectionLost(again)) << again.ToString();
  EXPECT_FALSE(txn->Commit().ok());
  EXPECT_TRUE(conn->Exec("SELECT 1").ok());  // the transaction is over: reconnects
}

TEST_F(PgLifecycleTest, ServerDownIsUnavailableWithinTheBudgetAndRecovers) {
  auto conn = Connect(/*retry_budget_ms=*/1000);
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(server_->Stop());

  auto start = std::chrono::steady_clock::now();
  Status down = conn->Exec("SELECT 1");
  if (down.ok() || !IsConnectionLost(down)) {
    ADD_FAILURE() << "expected a lost connection: " << down.ToString();
  }
  Status reset = conn->Exec("SELECT 1");  // tries to reconnect for the budget, then gives up
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(reset.code(), StatusCode::kUnavailable) << reset.ToString();
  EXPECT_NE(reset.message().find("cannot connect"), std::string::npos) << reset.message();
  // It tried for (most of) the budget and then returned, rather than hanging.
  EXPECT_GE(elapsed, std::chrono::milliseconds(500));
  EXPECT_LT(elapsed, std::chrono::seconds(120));

  auto fresh = Connection::Open({.url = server_->url(), .retry_budget_ms = 1000});
  ASSERT_FALSE(fresh.ok());
  EXPECT_EQ(fresh.status().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(IsConnectionLost(fresh.status()));
  Status txn = RunTransaction(*conn, [] { return Status::Ok(); });
  EXPECT_TRUE(IsConnectionLost(txn)) << txn.ToString();

  ASSERT_TRUE(server_->Restart());  // starts it again
  EXPECT_TRUE(conn->Exec("SELECT 1").ok());
}

TEST_F(PgLifecycleTest, RecoversAfterTheServerIsKilled) {
  auto conn = Connect();
  ASSERT_NE(conn, nullptr);
  // The scratch server runs with synchronous_commit=off (tests only): a commit's WAL may still
  // be in the server's memory when it is killed. This session waits for its WAL to be written.
  ASSERT_TRUE(conn->Exec("SET synchronous_commit = on; DROP TABLE IF EXISTS k; "
                         "CREATE TABLE k (id bigint); INSERT INTO k VALUES (1)")
                  .ok());
  ASSERT_TRUE(server_->Kill());
  ASSERT_TRUE(server_->Restart());  // crash recovery
  // The old backend is gone: the first command may report the lost connection, the next one
  // reconnects.
  Status first = conn->Exec("SELECT 1");
  if (!first.ok()) {
    EXPECT_TRUE(IsConnectionLost(first)) << first.ToString();
  }
  EXPECT_EQ(One(*conn, "SELECT count(*) FROM k"), "1");
}

}  // namespace
}  // namespace trove::base::pg

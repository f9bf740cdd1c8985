// A thin libpq wrapper in the shape of base/sqlite.h: Connection (one PGconn), Statement (one
// prepared statement with the Bind/Step/Column surface of base::Statement), Transaction (BEGIN
// ... COMMIT, rolled back unless committed), CopyWriter (binary COPY FROM STDIN), LISTEN/NOTIFY,
// RunTransaction (retries serialization failures, deadlocks and lost connections) and a small
// Pool.
//
// This file is the one place where libpq results become Status:
//   - connection lost (SQLSTATE class 08, 57P01/57P02/57P03, CONNECTION_BAD): kUnavailable,
//     message contains "connection lost" (IsConnectionLost);
//   - 40001 (serialization failure) and 40P01 (deadlock): kUnavailable, IsRetryable;
//   - 23505 (unique violation): kAlreadyExists;
//   - 28P01/28000 (authentication): kPermissionDenied "authentication failed for user X";
//   - 3D000 (no such database): kNotFound "database does not exist";
//   - P0001 (RAISE EXCEPTION in a trigger): kInvalidArgument with the raised message;
//   - 57014 (statement cancelled): kCancelled;
//   - a URL libpq cannot parse, or an option value it rejects: kInvalidArgument;
//   - a server that cannot be reached: kUnavailable "cannot connect to <redacted url>: ...";
//   - everything else: kIo "exec `<first SQL characters>`: <server message>".
// Every message carries "(sqlstate XXXXX)" when the server sent one (SqlStateOf reads it back).
// Messages name the target only through RedactUrl: a password never appears in a Status.
// Messages are for the operator (they quote SQL), as with base/sqlite.h.
//
// SQL text may use SQLite-style placeholders: `?` and `?N` outside quotes, identifiers and
// comments are rewritten to `$N` (RewritePlaceholders), so one statement text can serve both
// backends. `$N` is left alone. (So PostgreSQL's jsonb `?` operator cannot be written bare; use
// jsonb_exists().)
//
// Values: parameters go as text (integers in decimal, doubles in shortest round-trip form,
// NaN as NULL as SQLite does) except blobs, which go in binary (no escaping). Results are
// requested in binary and decoded by column type: int2/int4/int8/oid/bool, float4/float8
// (exact, including ±Infinity), numeric (as its decimal text), text/varchar/name/bpchar/json/
// unknown (the bytes), jsonb (the text), bytea (the bytes, 0x00 included). Other types read as
// their raw binary bytes. Column accessors convert like SQLite: ColumnInt64 on text parses it,
// ColumnText on an integer formats it, a bool reads as 1/0 (ColumnText "1"/"0").
//
// Thread safety: one thread at a time uses a Connection and the Statements, Transactions and
// CopyWriters made from it. Open one Connection per worker, or share them through a Pool
// (thread-safe).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"

struct pg_conn;
struct pg_result;

namespace trove::base::pg {

// True when `target` names a PostgreSQL server ("postgresql://..." or "postgres://...").
bool IsPostgresUrl(std::string_view target);

// Returns `url` fit for messages and logs: a password in the userinfo becomes "***" and
// `password=` query parameters are dropped. Anything that is not a URL is returned as is,
// except that a libpq keyword string's "password=..." is dropped too.
std::string RedactUrl(std::string_view url);

// True for a failure the same transaction may succeed at when rerun from the start: a
// serialization failure (40001) or a deadlock (40P01).
bool IsRetryable(const Status& status);
// True when the connection was lost (the server went away, restarted or refused us as it
// started up or shut down). A later call reconnects (Connection::Reset).
bool IsConnectionLost(const Status& status);
// True when the connection was lost after COMMIT was sent and before its answer arrived: the
// transaction may or may not have committed (RunTransaction returns such a status as is).
bool IsCommitOutcomeUnknown(const Status& status);
// Returns the SQLSTATE a Status from this file carries ("40001"), or "" when none.
std::string_view SqlStateOf(const Status& status);

// Returns `sql` with `?` / `?N` placeholders rewritten to `$N` (see the file comment). A bare
// `?` takes the largest index seen so far plus one, as in SQLite.
std::string RewritePlaceholders(std::string_view sql);
// Returns `name` quoted as an SQL identifier ("a""b").
std::string QuoteIdentifier(std::string_view name);
// Returns `text` quoted as an SQL string literal ('it''s'), for statements that take no
// parameters (CREATE DATABASE ... , LISTEN is done by Connection::Listen).
std::string QuoteLiteral(std::string_view text);

struct ConnectOptions {
  // A libpq connection URI ("postgresql://user@host:port/db?sslmode=require"). Passed to libpq
  // as dbname with expand_dbname, so every URI parameter (sslmode, sslrootcert, host=/socket,
  // passfile, gssencmode...) works as documented by libpq. Never logged; see RedactUrl.
  std::string url;
  // Seconds libpq waits for one connection attempt (its connect_timeout), unless the URL sets
  // connect_timeout itself. Default 5.
  int connect_timeout_s = 5;
  // How long Reset keeps trying to reconnect (backoff 100 ms doubling to 2 s), and the total
  // time RunTransaction spends reconnecting. Default 15000.
  int retry_budget_ms = 15000;
  // Shown in pg_stat_activity, unless the URL sets application_name. Default "warden".
  std::string application_name = "warden";
};

enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };

// One NOTIFY received by a listening connection.
struct Notification {
  std::string channel;
  std::string payload;
  int backend_pid = 0;  // the notifying backend
};

class Connection;

// Statement: one prepared statement. Move-only. Parameter indexes start at 1 and column indexes
// at 0, as in base::Statement. Bound values are copied. The statement is prepared on the server
// once per connection (Connection caches it by text) and prepared again, lazily, after the
// connection was reset.
//
// Step runs the statement on its first call after construction, Reset or a Bind, and returns
// the buffered rows one by one. With set_streaming(true) rows are fetched from the server one
// at a time (libpq single-row mode) instead of buffered, for large scans.
// REQUIRES: the Connection it came from outlives it.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binds parameter `index` (from 1). Integers are sent as 64-bit decimal (a uint64_t above
  // INT64_MAX wraps, as in base::Statement); bool as 0/1. A span of bytes binds a blob (bytea);
  // a string_view binds text. NaN binds NULL.
  template <typename T>
  requires std::is_integral_v<T> Status Bind(int index, T value) {
    return BindInt64(index, static_cast<std::int64_t>(value));
  }
  Status Bind(int index, double value);
  Status Bind(int index, std::string_view text);
  Status Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Status Bind(int index, const std::string& text) { return Bind(index, std::string_view(text)); }
  Status Bind(int index, std::span<const std::uint8_t> blob);
  Status Bind(int index, std::nullptr_t);
  // Binds bytes held in a string as a blob (Bind with a string_view binds text).
  Status BindBlob(int index, std::string_view bytes);
  // The same as Bind(index, text) and BindBlob (libpq copies the bytes when it sends them; the
  // names exist so code written against base::Statement compiles unchanged).
  Status BindUncopiedText(int index, std::string_view text) { return Bind(index, text); }
  Status BindUncopiedBlob(int index, std::string_view bytes) { return BindBlob(index, bytes); }

  // Runs the statement (if not yet run) and moves to its next row. Returns true when a row is
  // ready to read, false when there are no more.
  Result<bool> Step();
  // Runs a statement that returns no rows (or whose rows are not wanted); returns the number
  // of rows it inserted, updated or deleted (0 for other statements).
  Result<std::int64_t> Run();

  // Makes the statement ready to run again. Bindings are kept. In streaming mode, drains the
  // rows not read.
  void Reset();

  // Fetch rows one at a time from the server instead of buffering the whole result.
  // REQUIRES: in streaming mode, no other command runs on the connection between the first Step
  // and the Step that returns false (or Reset).
  void set_streaming(bool on) { streaming_ = on; }

  // Accessors for the current row, valid after Step returned true.
  // REQUIRES: 0 <= column < ColumnCount().
  int ColumnCount() const;
  std::string ColumnName(int column) const;
  std::int64_t ColumnInt64(int column) const;  // NULL reads as 0
  double ColumnDouble(int column) const;       // NULL reads as 0
  std::string ColumnText(int column) const;    // NULL reads as ""
  std::string ColumnBlob(int column) const;    // the bytes; NULL reads as ""
  // The same bytes without a copy (for a column that is not text-like or bytea, a view of a
  // converted copy held by the statement).
  // REQUIRES: used before the next Step, Reset, Column*View call on another column, or
  // destruction of the statement.
  std::string_view ColumnTextView(int column) const;
  std::string_view ColumnBlobView(int column) const;
  bool ColumnIsNull(int column) const;

  // The SQL as sent to the server (placeholders rewritten).
  const std::string& sql() const { return sql_; }

 private:
  friend class Connection;
  Statement(Connection* conn, std::string sql, int param_count);

  Status BindInt64(int index, std::int64_t value);
  Status SetParam(int index, std::string value, bool binary, bool null);
  Status Execute();
  void Clear();
  // Raw bytes of `column` in the current row.
  std::string_view Raw(int column) const;
  unsigned ColumnType(int column) const;

  Connection* conn_ = nullptr;
  std::string sql_;
  std::vector<std::string> values_;
  std::vector<int> formats_;  // 0 text, 1 binary
  std::vector<char> nulls_;
  pg_result* result_ = nullptr;  // owned
  int row_ = -1;
  int rows_ = 0;
  bool executed_ = false;
  bool done_ = false;
  bool streaming_ = false;
  bool stream_active_ = false;
  mutable std::string scratch_;
};

// Transaction: BEGIN on creation (Connection::Begin), COMMIT on Commit(), ROLLBACK on
// destruction unless committed. When the connection was lost (and reset) meanwhile, the
// transaction is gone: Commit returns kUnavailable and the destructor sends nothing.
// REQUIRES: the Connection outlives it.
class Transaction {
 public:
  Transaction(Transaction&& other) noexcept
      : conn_(std::exchange(other.conn_, nullptr)), generation_(other.generation_) {}
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  // Commits. A connection lost while COMMIT was in flight gives a status for which
  // IsCommitOutcomeUnknown is true.
  Status Commit();
  // Rolls back now (the destructor does it otherwise).
  Status Rollback();

 private:
  friend class Connection;
  Transaction(Connection* conn, std::uint64_t generation) : conn_(conn), generation_(generation) {}

  Connection* conn_;  // null once committed, rolled back or moved from
  std::uint64_t generation_;
};

// CopyWriter: COPY ... FROM STDIN (FORMAT binary), fed row by row.
//   ASSIGN_OR_RETURN(auto copy, conn.CopyIn("COPY t (id, name, body) FROM STDIN (FORMAT binary)"));
//   copy.StartRow(3); copy.AddInt64(1); copy.AddText("a"); copy.AddBytes(blob);
//   RETURN_IF_ERROR(copy.EndRow());
//   ASSIGN_OR_RETURN(std::int64_t rows, copy.Finish());
// Each Add must match its column's type exactly (binary COPY does no conversion): AddInt64 for
// bigint, AddInt32 for integer, AddInt16 for smallint, AddDouble for double precision, AddBool
// for boolean, AddText for text/varchar, AddBytes for bytea. Rows are buffered and sent in
// chunks of about 1 MiB. Destroyed without Finish, the COPY is aborted (nothing is written).
// REQUIRES: the Connection outlives it, and runs nothing else until Finish or destruction.
class CopyWriter {
 public:
  CopyWriter(CopyWriter&& other) noexcept;
  CopyWriter& operator=(CopyWriter&&) = delete;
  CopyWriter(const CopyWriter&) = delete;
  CopyWriter& operator=(const CopyWriter&) = delete;
  ~CopyWriter();

  void StartRow(int field_count);
  void AddNull();
  void AddInt64(std::int64_t value);
  void AddInt32(std::int32_t value);
  void AddInt16(std::int16_t value);
  void AddBool(bool value);
  void AddDouble(double value);  // NaN is stored as NaN (float8 has it); bind NULL yourself
  void AddText(std::string_view text);
  void AddBytes(std::string_view bytes);
  void AddBytes(std::span<const std::uint8_t> bytes);
  // Ends the row; sends the buffer when it is full. Fails (kInvalidArgument) when the row had
  // a different number of fields than StartRow said.
  Status EndRow();

  // Sends the rest and the end marker; returns the number of rows the server stored.
  Result<std::int64_t> Finish();

 private:
  friend class Connection;
  explicit CopyWriter(Connection* conn);
  Status Flush();
  void PutInt32(std::int32_t value);

  Connection* conn_;  // null once finished or moved from
  std::string buffer_;
  int expected_fields_ = 0;
  int fields_ = 0;
  std::int64_t rows_ = 0;
};

// Connection: one libpq connection.
class Connection {
 public:
  // Connects to `options.url`. A server that is starting up or shutting down is retried within
  // retry_budget_ms; a server that refuses or cannot be reached fails at once with
  // kUnavailable "cannot connect to <redacted url>: ...". Authentication failures are
  // kPermissionDenied, a missing database kNotFound.
  static Result<std::unique_ptr<Connection>> Open(const ConnectOptions& options);
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Runs one or more `;`-separated statements (simple query protocol, no parameters).
  Status Exec(std::string_view sql);

  // Prepares one statement (extended protocol; the server prepares it on first use).
  Result<Statement> Prepare(std::string_view sql);

  // Prepares `sql` and binds `args` to $1.. in order (anything Statement::Bind takes).
  // The statement has not run yet: call Step or Run.
  template <typename... Args>
  Result<Statement> Query(std::string_view sql, const Args&... args) {
    ASSIGN_OR_RETURN(Statement stmt, Prepare(sql));
    int index = 0;
    Status status;
    ((status.ok() ? (void)(status = stmt.Bind(++index, args)) : (void)0), ...);
    RETURN_IF_ERROR(status);
    return stmt;
  }

  // BEGIN with the given isolation level.
  Result<Transaction> Begin(Isolation isolation = Isolation::kReadCommitted);

  // Starts `sql`, which must be a COPY ... FROM STDIN (FORMAT binary).
  Result<CopyWriter> CopyIn(std::string_view sql);

  // LISTEN / UNLISTEN `channel` (quoted as an identifier). Channels listened to are listened
  // to again after Reset.
  Status Listen(std::string_view channel);
  Status Unlisten(std::string_view channel);
  // pg_notify(channel, payload).
  Status Notify(std::string_view channel, std::string_view payload);
  // Returns the notifications that arrived, waiting up to `timeout_ms` (0: do not wait, -1:
  // without limit) for the first one. Returns early, possibly with none, when `cancel_fd` (a
  // pipe or eventfd; -1 for none) becomes readable. A lost connection is kUnavailable.
  Result<std::vector<Notification>> WaitNotifications(int timeout_ms, int cancel_fd = -1);

  // The connection's socket, for an event loop (-1 when not connected).
  int socket() const;
  // False once a command found the connection lost (or it is not connected).
  bool Healthy() const;
  // Reconnects, retrying with backoff for up to retry_budget_ms; clears the prepared
  // statement cache and listens again. A lost connection is also reset by the next command
  // run outside a transaction.
  Status Reset();

  // The target, redacted (for messages).
  const std::string& target() const { return target_; }
  // The server's version as an integer (150018 for 15.18).
  int server_version() const;
  // The process id of the server backend serving this connection.
  int backend_pid() const;
  // Counts successful connects: 1 after Open, +1 per reconnect. A listener compares it across
  // WaitNotifications calls to learn that notifications may have been missed meanwhile.
  std::uint64_t generation() const { return generation_; }
  // True while a Transaction of this connection is open.
  bool in_transaction() const { return txn_open_; }
  // The libpq connection, for calls this wrapper does not cover. Owned by this Connection;
  // replaced by Reset.
  pg_conn* handle() const { return conn_; }

 private:
  friend class Statement;
  friend class Transaction;
  friend class CopyWriter;
  explicit Connection(ConnectOptions options);

  // Connects once (no retry).
  Status ConnectOnce();
  // Before a command: reconnects a lost connection when no transaction is open.
  Status EnsureReady();
  // Returns the name of the server-side statement for `sql`, preparing it when needed.
  Result<std::string> PreparedName(const std::string& sql, int param_count);
  // Turns a failed result (or a null one) into a Status; marks the connection lost when it is.
  // `op` names the operation ("exec `SELECT ...`").
  Status ResultError(pg_result* result, std::string_view op);
  // As ResultError, for a failure with no result (PQsend*, PQputCopyData...).
  Status ConnError(std::string_view op);
  // Runs a command in the simple protocol, returning its error as Status.
  Status SimpleCommand(std::string_view sql, bool allow_reset);

  ConnectOptions options_;
  std::string target_;  // RedactUrl(options_.url)
  pg_conn* conn_ = nullptr;
  bool lost_ = false;
  bool txn_open_ = false;
  std::uint64_t generation_ = 0;  // incremented by each successful (re)connect
  std::unordered_map<std::string, std::string> prepared_;  // sql -> statement name
  int next_statement_ = 0;
  std::vector<std::string> channels_;
};

// Runs `fn` inside BEGIN ... COMMIT on `conn`. When `fn` or COMMIT fails with a retryable
// error (IsRetryable) or the connection is lost before COMMIT was sent, rolls back, reconnects
// if needed, waits 10·2^k ms plus jitter and runs `fn` again, up to `max_attempts` times in
// all. Any other failure of `fn` is returned after ROLLBACK. A connection lost during COMMIT is
// returned as is (IsCommitOutcomeUnknown): the caller decides.
// REQUIRES: `fn` has no effect outside the database that a rerun would repeat wrongly, and runs
// its statements on `conn`.
Status RunTransaction(Connection& conn, const std::function<Status()>& fn,
                      Isolation isolation = Isolation::kReadCommitted, int max_attempts = 5);

// Pool: up to `max_size` connections to one URL, shared between threads. Acquire hands out an
// idle healthy connection (dropping dead ones), opens a new one when below max_size, or waits
// for one to be returned. A Lease returns its connection on destruction (dropping it if it is
// unhealthy or inside a transaction).
// Thread safety: Acquire may be called from any thread; each Lease is used by one thread.
// REQUIRES: the Pool outlives its Leases.
class Pool {
 public:
  class Lease {
   public:
    Lease(Lease&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)), conn_(std::move(other.conn_)) {}
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    Connection& operator*() const { return *conn_; }
    Connection* operator->() const { return conn_.get(); }
    Connection* get() const { return conn_.get(); }

   private:
    friend class Pool;
    Lease(Pool* pool, std::unique_ptr<Connection> conn) : pool_(pool), conn_(std::move(conn)) {}

    Pool* pool_;
    std::unique_ptr<Connection> conn_;
  };

  explicit Pool(ConnectOptions options, int max_size = 8);
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool();

  // Returns a connection, waiting up to `wait_ms` for one to be free (then kUnavailable
  // "connection pool exhausted").
  Result<Lease> Acquire(int wait_ms = 30000);

  const ConnectOptions& options() const { return options_; }
  // Connections open now (idle and leased).
  int size() const;

 private:
  void Return(std::unique_ptr<Connection> conn);

  const ConnectOptions options_;
  const int max_size_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Connection>> idle_;
  int open_ = 0;
};

}  // namespace trove::base::pg

// A thin SQLite wrapper: Database (one connection), Statement (one prepared statement) and
// Transaction (BEGIN IMMEDIATE ... COMMIT, rolled back unless committed).
//
// Every database is opened in WAL mode with foreign_keys=ON, synchronous=NORMAL and a busy
// timeout. This file is the one place where SQLite result codes become Status: SQLITE_BUSY and
// SQLITE_LOCKED are kUnavailable ("database is busy", "database table is locked": retry after
// a delay), SQLITE_CORRUPT and SQLITE_NOTADB are kDataLoss, and every other failure is kIo.
// Messages name the operation and carry sqlite3_errmsg, e.g. "prepare `SELEC 1`: near
// \"SELEC\": syntax error". They are for the operator: they name paths and quote SQL, so an
// MCP server logs them and shows a client only a reference (mcp::ToolErrorFromStatus).
//
// Thread safety: connections are opened with SQLITE_OPEN_NOMUTEX, so SQLite takes no lock of
// its own: one thread at a time may use a Database and the Statements and Transactions made
// from it. Open one Database per worker. Separate Database objects on the same file may be
// used concurrently from different threads; WAL lets readers run beside one writer, and a
// second writer waits up to the busy timeout and then gets kUnavailable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "base/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace trove::base {

struct DatabaseOptions {
  // How long, in milliseconds, a statement waits for another connection's lock before it
  // fails with kUnavailable. Default 5000.
  int busy_timeout_ms = 5000;
  // Creates the file when it does not exist; when false, a missing file is an error.
  // Default true.
  bool create_if_missing = true;
  // The page size in bytes of a database created by this Open: a power of two from 512 to
  // 65536, or 0 for SQLite's default (4096). SQLite fixes the page size when the first page
  // is written and a WAL database cannot change it, so an existing database keeps its own.
  // Default 0.
  int page_size = 0;
};

// Statement: one prepared statement. Move-only; finalized on destruction.
// Parameter indexes start at 1 and column indexes at 0, as in SQLite. Bound values are copied.
// REQUIRES: the Database it came from outlives it.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binds parameter `index` (from 1). Integers are stored as 64-bit; a uint64_t above
  // INT64_MAX wraps. A span of bytes binds a blob; a string_view binds text.
  template <typename T>
  requires std::is_integral_v<T> Status Bind(int index, T value) {
    return BindInt64(index, static_cast<std::int64_t>(value));
  }
  Status Bind(int index, double value);
  Status Bind(int index, std::string_view text);
  Status Bind(int index, std::span<const std::uint8_t> blob);
  Status Bind(int index, std::nullptr_t);
  // Binds bytes held in a string as a blob (Bind with a string_view binds text).
  Status BindBlob(int index, std::string_view bytes);
  // The same as Bind(index, text) and BindBlob(index, bytes) without SQLite's copy of the
  // bytes (SQLITE_STATIC), for large rows written in bulk.
  // REQUIRES: the bytes stay valid and unchanged until the parameter is bound again or the
  // statement is destroyed.
  Status BindUncopiedText(int index, std::string_view text);
  Status BindUncopiedBlob(int index, std::string_view bytes);

  // Binds the parameter named `name`, spelled with its prefix (":id", "@id", "$id").
  template <typename T>
  Status Bind(std::string_view name, T&& value) {
    ASSIGN_OR_RETURN(int index, ParameterIndex(name));
    return Bind(index, std::forward<T>(value));
  }
  // Returns the index of the parameter named `name`, or kInvalidArgument.
  Result<int> ParameterIndex(std::string_view name) const;

  // Runs the statement to its next row. Returns true when a row is ready to read, false when
  // the statement is done.
  Result<bool> Step();

  // Makes the statement ready to run again. Bindings are kept.
  // Returns nothing: sqlite3_reset repeats the error of the last Step, which Step already
  // reported.
  void Reset();

  // Accessors for the current row, valid after Step returned true.
  // REQUIRES: 0 <= column < ColumnCount().
  int ColumnCount() const;
  std::int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;  // NULL reads as ""
  std::string ColumnBlob(int column) const;  // the bytes; NULL reads as ""
  // The same bytes without a copy, for rows read in bulk.
  // REQUIRES: used before the next Step, Reset or destruction of the statement.
  std::string_view ColumnTextView(int column) const;
  std::string_view ColumnBlobView(int column) const;
  bool ColumnIsNull(int column) const;

 private:
  friend class Database;
  explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}

  Status BindInt64(int index, std::int64_t value);
  // Returns OK for SQLITE_OK, else the error for binding parameter `index`.
  Status BindResult(int rc, int index) const;

  sqlite3_stmt* stmt_;  // owned; null after a move
};

class Database;

// Transaction: BEGIN IMMEDIATE on creation (Database::Begin), COMMIT on Commit(), ROLLBACK on
// destruction unless committed. IMMEDIATE takes the write lock at once, so a conflict shows
// as kUnavailable from Begin rather than midway through the work.
// REQUIRES: the Database outlives it.
class Transaction {
 public:
  Transaction(Transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  // Commits. On failure the transaction is still open (after SQLITE_BUSY) or already rolled
  // back by SQLite; either way the destructor leaves no transaction behind.
  Status Commit();

 private:
  friend class Database;
  explicit Transaction(Database* db) : db_(db) {}

  Database* db_;  // null once committed or moved from
};

// Database: one SQLite connection.
class Database {
 public:
  // Opens (or creates) the database at `path` and applies the settings above. ":memory:"
  // opens a private in-memory database, which cannot use WAL.
  static Result<std::unique_ptr<Database>> Open(const std::string& path,
                                                const DatabaseOptions& options = {});
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  // Runs one or more `;`-separated statements that return no rows worth reading.
  Status Exec(std::string_view sql);

  // Prepares exactly one statement; more than one in `sql` is kInvalidArgument.
  Result<Statement> Prepare(std::string_view sql);

  // Begins a write transaction (BEGIN IMMEDIATE), waiting up to the busy timeout.
  Result<Transaction> Begin();

  // Runs PRAGMA integrity_check; returns kDataLoss with SQLite's findings when it fails.
  Status IntegrityCheck();

  // Returns the rowid of the last successful INSERT on this connection.
  std::int64_t LastInsertRowId() const;
  // Returns the rows changed by the last INSERT, UPDATE or DELETE on this connection.
  std::int64_t Changes() const;

  // The connection, for SQLite APIs this wrapper does not cover (e.g. registering an FTS5
  // auxiliary function). Owned by this Database; valid while it lives.
  sqlite3* handle() const { return db_; }

 private:
  friend class Transaction;
  explicit Database(sqlite3* db) : db_(db) {}

  sqlite3* const db_;  // owned
};

}  // namespace trove::base

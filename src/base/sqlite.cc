#include "base/sqlite.h"

#include <fmt/core.h>
#include <sqlite3.h>

#include <cctype>
#include <climits>
#include <vector>

namespace trove::base {

namespace {

constexpr std::size_t kMaxSqlInMessage = 80;
constexpr int kMaxIntegrityProblems = 10;

// Returns `sql` with whitespace runs collapsed, cut to kMaxSqlInMessage characters, for a
// message.
std::string AbbreviateSql(std::string_view sql) {
  std::string out;
  bool space = false;
  for (char c : sql) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    if (out.size() >= kMaxSqlInMessage) {
      out += "...";
      break;
    }
  }
  return out;
}

// Translates a failed SQLite result code: the one place where SQLite errors become Status.
// `op` names the operation; `detail` is sqlite3_errmsg or the like.
Status SqliteError(int rc, std::string_view op, std::string_view detail) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
      return Status::Unavailable(fmt::format("{}: database is busy: {}", op, detail));
    case SQLITE_LOCKED:
      return Status::Unavailable(fmt::format("{}: database table is locked: {}", op, detail));
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::DataLoss(fmt::format("{}: {}", op, detail));
    default:
      return Status::Io(fmt::format("{}: {}", op, detail));
  }
}

// As SqliteError, with the connection's last error message.
Status DbError(sqlite3* db, int rc, std::string_view op) {
  return SqliteError(rc, op, db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

// Passing "" rather than a null data(): sqlite3_bind_text64 and sqlite3_bind_blob64 bind
// NULL for a null pointer, even with size 0, and an empty value is not NULL.
const char* NonNull(std::string_view data) { return data.empty() ? "" : data.data(); }

// True for an in-memory database, which reports journal_mode "memory" instead of "wal".
bool IsInMemory(const std::string& path) {
  return path.empty() || path == ":memory:" || path.find("mode=memory") != std::string::npos;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Statement

Statement::Statement(Statement&& other) noexcept : stmt_(std::exchange(other.stmt_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Status Statement::BindResult(int rc, int index) const {
  if (rc == SQLITE_OK) return Status::Ok();
  return DbError(
      sqlite3_db_handle(stmt_), rc,
      fmt::format("bind parameter {} of `{}`", index, AbbreviateSql(sqlite3_sql(stmt_))));
}

Status Statement::BindInt64(int index, std::int64_t value) {
  return BindResult(sqlite3_bind_int64(stmt_, index, value), index);
}

Status Statement::Bind(int index, double value) {
  return BindResult(sqlite3_bind_double(stmt_, index, value), index);
}

Status Statement::Bind(int index, std::string_view text) {
  return BindResult(
      sqlite3_bind_text64(stmt_, index, NonNull(text), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
}

Status Statement::Bind(int index, std::span<const std::uint8_t> blob) {
  return BindBlob(index, std::string_view(reinterpret_cast<const char*>(blob.data()), blob.size()));
}

Status Statement::BindBlob(int index, std::string_view bytes) {
  return BindResult(
      sqlite3_bind_blob64(stmt_, index, NonNull(bytes), bytes.size(), SQLITE_TRANSIENT), index);
}

Status Statement::BindUncopiedText(int index, std::string_view text) {
  return BindResult(
      sqlite3_bind_text64(stmt_, index, NonNull(text), text.size(), SQLITE_STATIC, SQLITE_UTF8),
      index);
}

Status Statement::BindUncopiedBlob(int index, std::string_view bytes) {
  return BindResult(sqlite3_bind_blob64(stmt_, index, NonNull(bytes), bytes.size(), SQLITE_STATIC),
                    index);
}

Status Statement::Bind(int index, std::nullptr_t) {
  return BindResult(sqlite3_bind_null(stmt_, index), index);
}

Result<int> Statement::ParameterIndex(std::string_view name) const {
  const std::string key(name);
  const int index = sqlite3_bind_parameter_index(stmt_, key.c_str());
  if (index == 0) {
    return Status::InvalidArgument(
        fmt::format("bind `{}`: no parameter named {}", AbbreviateSql(sqlite3_sql(stmt_)), name));
  }
  return index;
}

Result<bool> Statement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return DbError(sqlite3_db_handle(stmt_), rc,
                 fmt::format("step `{}`", AbbreviateSql(sqlite3_sql(stmt_))));
}

void Statement::Reset() { sqlite3_reset(stmt_); }

int Statement::ColumnCount() const { return sqlite3_column_count(stmt_); }

std::int64_t Statement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::ColumnDouble(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  // sqlite3_column_bytes after sqlite3_column_text gives the size of the UTF-8 form.
  const int size = sqlite3_column_bytes(stmt_, column);
  return std::string(reinterpret_cast<const char*>(text), static_cast<std::size_t>(size));
}

std::string Statement::ColumnBlob(int column) const {
  const void* blob = sqlite3_column_blob(stmt_, column);
  if (blob == nullptr) return {};
  const int size = sqlite3_column_bytes(stmt_, column);
  return std::string(static_cast<const char*>(blob), static_cast<std::size_t>(size));
}

std::string_view Statement::ColumnTextView(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  const int size = sqlite3_column_bytes(stmt_, column);
  return {reinterpret_cast<const char*>(text), static_cast<std::size_t>(size)};
}

std::string_view Statement::ColumnBlobView(int column) const {
  const void* blob = sqlite3_column_blob(stmt_, column);
  if (blob == nullptr) return {};
  const int size = sqlite3_column_bytes(stmt_, column);
  return {static_cast<const char*>(blob), static_cast<std::size_t>(size)};
}

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

// ---------------------------------------------------------------------------------------------
// Transaction

Transaction::~Transaction() {
  // After a failed COMMIT SQLite may already have rolled back; autocommit says so.
  if (db_ != nullptr && sqlite3_get_autocommit(db_->db_) == 0) {
    sqlite3_exec(db_->db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

Status Transaction::Commit() {
  if (db_ == nullptr) return Status::Internal("commit: the transaction is already finished");
  RETURN_IF_ERROR(db_->Exec("COMMIT"));
  db_ = nullptr;
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Database

Result<std::unique_ptr<Database>> Database::Open(const std::string& path,
                                                 const DatabaseOptions& options) {
  const std::string where = fmt::format("open {}", path);
  const int page_size = options.page_size;
  if (page_size != 0 && (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)))) {
    return Status::InvalidArgument(
        fmt::format("{}: page size {} is not a power of two from 512 to 65536", where, page_size));
  }
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (options.create_if_missing) flags |= SQLITE_OPEN_CREATE;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  if (raw == nullptr) return Status::Internal(where + ": out of memory");
  // The private constructor rules out make_unique; ownership is taken at once.
  std::unique_ptr<Database> db(new Database(raw));
  if (rc != SQLITE_OK) return DbError(raw, rc, where);
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);

  // The page size must be set before journal_mode=WAL writes the first page of a new file.
  // It reads nothing: on an existing database (or a file that is not one) it does nothing.
  if (page_size != 0) {
    RETURN_IF_ERROR(db->Exec(fmt::format("PRAGMA page_size={}", page_size)).WithContext(where));
  }
  // journal_mode comes next: it reads the file header, so a file that is not a database
  // fails here (kDataLoss). The mode is stored in the file; the other two are per
  // connection.
  std::string mode;
  {
    Result<Statement> stmt = db->Prepare("PRAGMA journal_mode=WAL");
    if (!stmt.ok()) return stmt.status().WithContext(where);
    Result<bool> row = stmt->Step();
    if (!row.ok()) return row.status().WithContext(where);
    if (*row) mode = stmt->ColumnText(0);
  }
  if (mode != "wal" && !IsInMemory(path)) {
    return Status::Unsupported(fmt::format(
        "{}: journal_mode is \"{}\": this filesystem does not support wal", where, mode));
  }
  RETURN_IF_ERROR(db->Exec("PRAGMA synchronous=NORMAL").WithContext(where));
  RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON").WithContext(where));
  return db;
}

Database::~Database() {
  // close_v2 defers the close until any Statement still alive is finalized.
  sqlite3_close_v2(db_);
}

Status Database::Exec(std::string_view sql) {
  const std::string text(sql);
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  Status status = SqliteError(rc, fmt::format("exec `{}`", AbbreviateSql(sql)),
                              error != nullptr ? error : sqlite3_errmsg(db_));
  sqlite3_free(error);
  return status;
}

Result<Statement> Database::Prepare(std::string_view sql) {
  const std::string where = fmt::format("prepare `{}`", AbbreviateSql(sql));
  if (sql.size() > static_cast<std::size_t>(INT_MAX)) {
    return Status::InvalidArgument(where + ": sql too long");
  }
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db_, NonNull(sql), static_cast<int>(sql.size()), &raw, &tail);
  if (rc != SQLITE_OK) return DbError(db_, rc, where);
  if (raw == nullptr) return Status::InvalidArgument(where + ": no statement in the sql");
  Statement stmt(raw);

  // A second statement would be silently ignored by sqlite3_prepare_v2; refuse it. Preparing
  // the tail (rather than scanning it) treats trailing comments and ';' correctly.
  const char* end = NonNull(sql) + sql.size();
  if (tail != nullptr && tail < end) {
    sqlite3_stmt* extra = nullptr;
    rc = sqlite3_prepare_v2(db_, tail, static_cast<int>(end - tail), &extra, nullptr);
    sqlite3_finalize(extra);
    if (rc != SQLITE_OK) return DbError(db_, rc, where);
    if (extra != nullptr) {
      return Status::InvalidArgument(where + ": more than one statement; use Exec");
    }
  }
  return stmt;
}

Result<Transaction> Database::Begin() {
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  return Transaction(this);
}

Status Database::IntegrityCheck() {
  constexpr std::string_view kWhere = "integrity check";
  auto checked = [&]() -> Status {
    ASSIGN_OR_RETURN(Statement stmt,
                     Prepare(fmt::format("PRAGMA integrity_check({})", kMaxIntegrityProblems)));
    std::string problems;
    for (;;) {
      ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      std::string line = stmt.ColumnText(0);
      if (line == "ok") continue;
      if (!problems.empty()) problems += "; ";
      problems += line;
    }
    if (problems.empty()) return Status::Ok();
    return Status::DataLoss(std::move(problems));
  };
  return checked().WithContext(kWhere);
}

std::int64_t Database::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

std::int64_t Database::Changes() const { return sqlite3_changes64(db_); }

}  // namespace trove::base

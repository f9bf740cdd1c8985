// Test access to a scratch PostgreSQL server (scripts/pg_scratch, the ctest fixture "pg" of
// cmake/trove.cmake).
//
//   PgDatabase db;                 // a fresh, empty database for this test; dropped at the end
//   ASSERT_TRUE(db.ok());
//   auto conn = base::pg::Connection::Open({.url = db.url()});
//
// The server is found through TROVE_PG_ENV (the env file pg_scratch writes; trove_pg_test sets
// it) or, outside ctest, TROVE_PG_URL. When neither is set the test FAILS (ADD_FAILURE): a test
// declared as needing PostgreSQL never passes by skipping.
//
// PgScratchServer starts a private server (scripts/pg_scratch in a temporary directory, found
// through TROVE_PG_SCRATCH) for tests that restart, kill or stop the server, so they never
// disturb tests running beside them on the shared one.
// Test-only; failures are reported through GoogleTest. Thread safety: one thread uses an object.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "base/pg.h"
#include "base/testing/temp_dir.h"

namespace trove::base::testing {

// What pg_scratch's env file says about one server.
struct PgServerInfo {
  std::string url;         // TROVE_PG_URL: the database "trove" over the unix socket (trust)
  std::string tcp_url;     // TROVE_PG_TCP_URL: the same over TCP (scram-sha-256)
  std::string password;    // TROVE_PG_PASSWORD: role trove's password
  std::string pgpassfile;  // TROVE_PG_PGPASSFILE
  std::string host;        // TROVE_PG_HOST: the socket directory
  std::string port;        // TROVE_PG_PORT
  std::string dir;         // TROVE_PG_DIR: the pg_scratch DIR
  std::string env_file;    // the env file read ("" when from TROVE_PG_URL)

  // The unix-socket URL of database `db` on this server.
  std::string UrlFor(std::string_view db) const {
    if (host.empty()) {
      // Only TROVE_PG_URL is known: replace its path.
      std::size_t scheme = url.find("://");
      std::size_t path = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
      if (path == std::string::npos) return url + "/" + std::string(db);
      std::size_t end = url.find_first_of("?#", path);
      return url.substr(0, path + 1) + std::string(db) +
             (end == std::string::npos ? "" : url.substr(end));
    }
    return "postgresql://trove@/" + std::string(db) + "?host=" + host + "&port=" + port +
           "&gssencmode=disable";
  }
  // The TCP URL of database `db` (needs the password or the pgpass file).
  std::string TcpUrlFor(std::string_view db) const {
    return "postgresql://trove@127.0.0.1:" + port + "/" + std::string(db) + "?gssencmode=disable";
  }
};

// Runs `sql` with `args` and returns the first column of the first row as text (ADD_FAILURE and
// "" on failure): the one-value query of the PostgreSQL tests.
template <typename... Args>
std::string QueryOne(pg::Connection& conn, std::string_view sql, const Args&... args) {
  auto stmt = conn.Query(sql, args...);
  if (!stmt.ok()) {
    ADD_FAILURE() << sql << ": " << stmt.status().ToString();
    return "";
  }
  auto row = stmt->Step();
  if (!row.ok() || !*row) {
    ADD_FAILURE() << sql << ": " << (row.ok() ? "no row" : row.status().ToString());
    return "";
  }
  return stmt->ColumnText(0);
}

// Reads a pg_scratch env file (KEY='value' lines). Returns false when it cannot be read.
inline bool ReadPgEnvFile(const std::string& path, PgServerInfo* info) {
  std::ifstream in(path);
  if (!in) return false;
  std::map<std::string, std::string> vars;
  std::string line;
  while (std::getline(in, line)) {
    std::size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string value = line.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
      value = value.substr(1, value.size() - 2);
    }
    vars[line.substr(0, eq)] = value;
  }
  info->url = vars["TROVE_PG_URL"];
  info->tcp_url = vars["TROVE_PG_TCP_URL"];
  info->password = vars["TROVE_PG_PASSWORD"];
  info->pgpassfile = vars["TROVE_PG_PGPASSFILE"];
  info->host = vars["TROVE_PG_HOST"];
  info->port = vars["TROVE_PG_PORT"];
  info->dir = vars["TROVE_PG_DIR"];
  info->env_file = path;
  return !info->url.empty();
}

// Finds the configured server; ADD_FAILURE and false when there is none.
inline bool FindPgServer(PgServerInfo* info) {
  if (const char* env = std::getenv("TROVE_PG_ENV"); env != nullptr && *env != '\0') {
    if (ReadPgEnvFile(env, info)) return true;
    ADD_FAILURE() << "TROVE_PG_ENV=" << env
                  << ": cannot read the scratch server's env file (did the ctest fixture "
                     "pg_start fail? see scripts/pg_scratch)";
    return false;
  }
  if (const char* url = std::getenv("TROVE_PG_URL"); url != nullptr && *url != '\0') {
    info->url = url;
    return true;
  }
  ADD_FAILURE() << "no PostgreSQL server configured: run under ctest (fixture pg) or set "
                   "TROVE_PG_ENV to a `scripts/pg_scratch start DIR`'s DIR/env, or TROVE_PG_URL";
  return false;
}

// PgDatabase: a new empty database (CREATE DATABASE t_<pid>_<n> TEMPLATE template0) on the
// configured server, dropped (WITH (FORCE)) when the object dies.
class PgDatabase {
 public:
  PgDatabase() {
    if (!FindPgServer(&server_)) return;
    static std::atomic<int> counter{0};
    name_ = "t_" + std::to_string(getpid()) + "_" + std::to_string(++counter);
    auto admin = Admin();
    if (admin == nullptr) return;
    std::string quoted = pg::QuoteIdentifier(name_);
    Status status = admin->Exec("DROP DATABASE IF EXISTS " + quoted + " WITH (FORCE)");
    if (status.ok()) status = admin->Exec("CREATE DATABASE " + quoted + " TEMPLATE template0");
    if (!status.ok()) {
      ADD_FAILURE() << "create database " << name_ << ": " << status.ToString();
      return;
    }
    url_ = server_.UrlFor(name_);
    ok_ = true;
  }
  PgDatabase(const PgDatabase&) = delete;
  PgDatabase& operator=(const PgDatabase&) = delete;
  ~PgDatabase() {
    if (!ok_) return;
    auto admin = Admin();
    if (admin == nullptr) return;
    Status status =
        admin->Exec("DROP DATABASE IF EXISTS " + pg::QuoteIdentifier(name_) + " WITH (FORCE)");
    EXPECT_TRUE(status.ok()) << "drop database " << name_ << ": " << status.ToString();
  }

  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  // The database's URL over the unix socket (trust authentication, no password).
  const std::string& url() const { return url_; }
  // The database's URL over TCP, without and with the password.
  std::string tcp_url() const { return server_.TcpUrlFor(name_); }
  std::string tcp_url_with_password() const {
    return "postgresql://trove:" + server_.password + "@127.0.0.1:" + server_.port + "/" + name_ +
           "?gssencmode=disable";
  }
  const PgServerInfo& server() const { return server_; }

  // Opens a connection to this database; ADD_FAILURE and null on failure.
  std::unique_ptr<pg::Connection> Connect() const {
    auto conn = pg::Connection::Open({.url = url_, .application_name = "trove-test"});
    if (!conn.ok()) {
      ADD_FAILURE() << "connect to " << name_ << ": " << conn.status().ToString();
      return nullptr;
    }
    return std::move(*conn);
  }

 private:
  // A connection to the server's own database "trove", for CREATE/DROP DATABASE.
  std::unique_ptr<pg::Connection> Admin() const {
    auto conn =
        pg::Connection::Open({.url = server_.UrlFor("trove"), .application_name = "trove-test"});
    if (!conn.ok()) {
      ADD_FAILURE() << "connect to the scratch server: " << conn.status().ToString();
      return nullptr;
    }
    return std::move(*conn);
  }

  PgServerInfo server_;
  std::string name_;
  std::string url_;
  bool ok_ = false;
};

// PgScratchServer: a private server of this test's own (scripts/pg_scratch start in a temporary
// directory), stopped and removed when the object dies. Starting one takes seconds (initdb):
// use it only for tests that restart, kill or stop the server.
class PgScratchServer {
 public:
  PgScratchServer() : dir_("trove_pg_scratch") {
    const char* script = std::getenv("TROVE_PG_SCRATCH");
    if (script == nullptr || *script == '\0') {
      ADD_FAILURE() << "TROVE_PG_SCRATCH is not set (the path of scripts/pg_scratch; "
                       "trove_pg_test sets it)";
      return;
    }
    script_ = script;
    if (!Run("start") || !ReadPgEnvFile(dir_.path() + "/env", &info_)) {
      ADD_FAILURE() << "pg_scratch start " << dir_.path() << " failed";
      return;
    }
    ok_ = true;
  }
  PgScratchServer(const PgScratchServer&) = delete;
  PgScratchServer& operator=(const PgScratchServer&) = delete;
  ~PgScratchServer() {
    if (!script_.empty()) Run("stop");
  }

  bool ok() const { return ok_; }
  const PgServerInfo& info() const { return info_; }
  // The URL of the database "trove" over the unix socket.
  const std::string& url() const { return info_.url; }

  // pg_scratch restart / kill.
  bool Restart() { return Run("restart"); }
  bool Kill() { return Run("kill"); }
  // Stops the server but keeps its files: Restart starts it again on the same port.
  bool Stop() { return Run("halt"); }

 private:
  bool Run(const std::string& verb) {
    std::string command = "'" + script_ + "' " + verb + " '" + dir_.path() + "' >/dev/null";
    return std::system(command.c_str()) == 0;
  }

  TempDir dir_;
  std::string script_;
  PgServerInfo info_;
  bool ok_ = false;
};

}  // namespace trove::base::testing

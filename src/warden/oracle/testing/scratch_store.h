// ScratchStore: a fresh, empty Oracle store target for tests parametrised over the backends:
// a file in a temporary directory (SQLite), or a database of its own on the scratch PostgreSQL
// server of the test fixture (base/testing/pg_server.h), dropped when the object dies.
// Test-only. Thread safety: one thread uses a ScratchStore.
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "base/testing/temp_dir.h"

namespace trove::warden::oracle::testing {

enum class Backend { kSqlite, kPostgres };

inline std::string BackendName(Backend b) { return b == Backend::kSqlite ? "Sqlite" : "Postgres"; }
inline std::ostream& operator<<(std::ostream& os, Backend b) { return os << BackendName(b); }

class ScratchStore {
 public:
  explicit ScratchStore(Backend backend);
  ScratchStore(const ScratchStore&) = delete;
  ScratchStore& operator=(const ScratchStore&) = delete;
  ~ScratchStore();

  // The target to pass to OracleStore::Open: a path, or a URL (with no password).
  const std::string& target() const { return target_; }
  Backend backend() const { return backend_; }

 private:
  struct Pg;
  Backend backend_;
  base::testing::TempDir dir_{"trove_oracle_store"};
  std::string target_;
  std::unique_ptr<Pg> pg_;
};

}  // namespace trove::warden::oracle::testing

// StatementCache: the store's prepared statements, prepared once per connection and reused.
// Preparing a statement parses and plans its SQL; the query engine and bootstrap run the same
// few dozen statements thousands of times, so they keep them (docs/decisions/0023).
//
// A statement is borrowed through a ScopedStatement, which resets it when the borrow ends:
// an active (un-reset) statement keeps its read transaction open, which would pin the WAL
// snapshot and block checkpoints. Bindings stay until rebound, so every user binds all
// parameters.
//
// Thread safety: as the Database it belongs to (one thread at a time). A statement must not
// be borrowed twice at once: no caller runs one statement while iterating the same one.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/sqlite.h"
#include "base/status.h"

namespace trove::librarian::store::internal {

// Resets the borrowed statement on destruction.
class ScopedStatement {
 public:
  explicit ScopedStatement(base::Statement* st) : st_(st) {}
  ScopedStatement(ScopedStatement&& other) noexcept : st_(other.st_) { other.st_ = nullptr; }
  ScopedStatement& operator=(ScopedStatement&&) = delete;
  ScopedStatement(const ScopedStatement&) = delete;
  ScopedStatement& operator=(const ScopedStatement&) = delete;
  ~ScopedStatement() {
    if (st_ != nullptr) st_->Reset();
  }
  base::Statement& operator*() const { return *st_; }
  base::Statement* operator->() const { return st_; }

 private:
  base::Statement* st_;
};

class StatementCache {
 public:
  // REQUIRES: `db` outlives this cache.
  explicit StatementCache(base::Database& db) : db_(db) {}

  // Returns the statement for `sql`, prepared on first use, reset and ready to bind.
  Result<ScopedStatement> Get(std::string_view sql) {
    auto it = statements_.find(std::string(sql));
    if (it == statements_.end()) {
      ASSIGN_OR_RETURN(base::Statement st, db_.Prepare(sql));
      it = statements_.emplace(std::string(sql), std::make_unique<base::Statement>(std::move(st)))
               .first;
    }
    it->second->Reset();  // a previous borrower may have failed mid-step
    return ScopedStatement(it->second.get());
  }

 private:
  base::Database& db_;
  std::unordered_map<std::string, std::unique_ptr<base::Statement>> statements_;
};

}  // namespace trove::librarian::store::internal

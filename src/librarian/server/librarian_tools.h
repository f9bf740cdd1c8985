// The Librarian MCP binding (docs/librarian.md §3.1, §3.3-3.4, §4.2-4.6, §3.5): the `bootstrap` and
// `query` tools and the `file-tree` and `symbols` resources over the workspaces this server has
// indexed. Inputs and outputs follow the seed's contract; wire names are camelCase, written once in
// each mcp::Field. Bad input (paths outside the workspace, a missing workspace or one that is a
// file, empty or huge intents, invalid globs) is an isError result naming the field.
//
// Thread safety: tools and resources may run concurrently. Workspaces is internally locked;
// each call opens its own store connection (a Store belongs to one thread).
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "librarian/index/bootstrap.h"
#include "librarian/query/query.h"
#include "librarian/store/store.h"
#include "mcp/server.h"

namespace trove::librarian::server {

// ws_ + the first 16 hex digits of SHA-256 of the canonical root (docs/librarian.md §6.6).
std::string WorkspaceId(const std::string& canonical_root);

// Open read connections to one workspace's store, reused across calls: a Store belongs to one
// thread at a time, so each call leases one (opening a connection per query costs the schema
// check and a cold page cache). Readers see the last committed state (WAL).
class StorePool {
 public:
  explicit StorePool(std::string path) : path_(std::move(path)) {}
  class Lease {
   public:
    Lease(StorePool* pool, std::unique_ptr<store::Store> s) : pool_(pool), store_(std::move(s)) {}
    Lease(Lease&&) = default;
    ~Lease();
    store::Store& operator*() { return *store_; }

   private:
    StorePool* pool_;
    std::unique_ptr<store::Store> store_;
  };
  // Returns an idle connection or opens one. REQUIRES: the store file exists.
  Result<Lease> Acquire();

 private:
  const std::string path_;
  std::mutex mu_;
  std::vector<std::unique_ptr<store::Store>> idle_;  // GUARDED_BY(mu_); at most kMaxIdle
};

// The workspaces this server knows, in registration order, each with its query cache.
class Workspaces {
 public:
  struct Entry {
    std::string root;  // canonical
    std::string id;
    std::shared_ptr<query::QueryCache> cache;
    std::shared_ptr<StorePool> stores;
  };

  // Registers `canonical_root` (again: keeps its place) and drops its cached answers.
  Entry Register(const std::string& canonical_root);
  // Returns the entry for a canonical root, a workspace id, or (empty `key`) the first
  // registered; nullopt when none.
  std::optional<Entry> Find(const std::string& key) const;
  // Every registered workspace, in registration order.
  std::vector<Entry> All() const;

 private:
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // GUARDED_BY(mu_)
};

struct ServiceOptions {
  std::string ctags_program = "ctags";  // for bootstrap; empty disables ctags
  std::size_t bootstrap_workers = 0;    // 0: both cores
  std::size_t max_results = 10;         // docs/librarian.md §4.3 `maxResults`, 1-100
};

// The compact JSON the `query` and `bootstrap` tools return, for `librarian ... --json`.
std::string QueryResponseJson(const query::QueryResponse& response, bool include_evidence);
std::string BootstrapReportJson(const index::BootstrapReport& report);

// Registers the tools and resources on `server`. `workspaces` must outlive it.
Status RegisterLibrarianTools(mcp::Server& server, Workspaces& workspaces,
                              const ServiceOptions& options);

}  // namespace trove::librarian::server

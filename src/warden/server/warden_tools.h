// The WARDEN MCP binding (docs/warden.md §3): the tools of §3.2 over a KB, registered on an
// MCP server. Inputs and outputs are the seed's; array and null results are wrapped in one
// named field (§3.1). The write tool injects provenance `agent` and actor `agent:mcp` and goes
// through the KB's one gate.
//
// Thread safety: every tool may run concurrently; each call leases its own KB connection.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "mcp/server.h"
#include "warden/agents/backend.h"
#include "warden/agents/config.h"
#include "warden/kb/kb.h"

namespace trove::base {
class Env;
}

namespace trove::warden::server {

// A pool of KB connections: WAL lets readers run beside the one writer, and a connection is
// used by one thread at a time (kb.h). A KB on PostgreSQL whose connection died (the server
// restarted or went away: Kb::Healthy) is dropped on Acquire and a new one opened in its place,
// so a server that is down fails the call at once (kUnavailable, no retry loop) and one that is
// back serves the next call.
class KbPool {
 public:
  KbPool(base::Env& env, std::string path, std::size_t max_connections);
  KbPool(const KbPool&) = delete;
  KbPool& operator=(const KbPool&) = delete;

  class Lease {
   public:
    Lease(KbPool* pool, std::unique_ptr<kb::Kb> kb) : pool_(pool), kb_(std::move(kb)) {}
    Lease(Lease&&) = default;
    ~Lease();
    kb::Kb& operator*() { return *kb_; }
    kb::Kb* operator->() { return kb_.get(); }

   private:
    KbPool* pool_;
    std::unique_ptr<kb::Kb> kb_;
  };

  // Returns a free healthy connection, opening one when none is free and fewer than
  // max_connections exist, else waiting for one to come back. Never creates the database file.
  Result<Lease> Acquire();
  const std::string& path() const { return path_; }

 private:
  void Release(std::unique_ptr<kb::Kb> kb);

  base::Env& env_;
  const std::string path_;
  const std::size_t max_connections_;
  std::mutex mu_;
  std::condition_variable returned_;
  std::vector<std::unique_ptr<kb::Kb>> free_;  // GUARDED_BY(mu_)
  std::size_t open_ = 0;                       // GUARDED_BY(mu_)
};

class SymbolFeed;  // symbol_notifier.h

struct WardenToolOptions {
  // How many run_agent_pass calls may run at once; beyond it the call is a tool error
  // (resource exhausted) rather than a wait. A pass holds a worker thread and a KB connection
  // for its whole run (up to its 2 h deadline), so passes up to the worker count would stall
  // every other tool. Registration rejects a value that leaves no worker for the other tools
  // (>= the server pool's worker count, unless the pool runs inline). Default 2.
  std::size_t max_concurrent_passes = 2;
  // Timeouts and retries of the agent providers run_agent_pass calls (tests shorten them).
  agents::ProviderOptions provider;
  // The Oracle store identify_runtime reads (oracle::ResolveStorePath); empty: .warden/oracle.db
  // of the KB's project.
  std::string oracle_store;
  // When set (a KB on PostgreSQL, docs/warden.md §3.3): registers the subscribable resource
  // `warden://symbols` (this feed's recent changes) and the template
  // `warden://symbols/{stable_id}` (one symbol with its evidence). Must outlive the server.
  SymbolFeed* symbol_feed = nullptr;
};

// Registers the WARDEN tools on `server`. `pool` and `agent_config` must outlive it.
Status RegisterWardenTools(mcp::Server& server, KbPool& pool,
                           const agents::AgentConfig& agent_config,
                           const WardenToolOptions& options = {});

}  // namespace trove::warden::server

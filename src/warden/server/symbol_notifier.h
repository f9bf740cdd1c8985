// Live symbol resources of `warden mcp` on a PostgreSQL KB (docs/warden.md §3.3,
// docs/decisions/0092-warden-pg-live-symbols.md).
//
// SymbolNotifier runs a kb::SymbolWatcher on the KB and turns each coalesced batch of changed
// stable_ids into notifications/resources/updated for the sessions subscribed to
// `warden://symbols/<stable_id>` (SymbolUri) and to `warden://symbols`; a batch that says
// "anything may have changed" (the watcher reconnected) notifies every subscribed symbol URI.
// SymbolFeed keeps the recent batches, numbered, for reading `warden://symbols`.
//
// Thread safety: SymbolFeed is thread-safe. SymbolNotifier calls the Server from its watcher
// thread; destroy it before the Server.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/logging.h"
#include "base/status.h"
#include "mcp/json.h"
#include "mcp/server.h"
#include "warden/kb/pg/symbol_watch.h"

namespace trove::warden::server {

inline constexpr std::string_view kSymbolsUri = "warden://symbols";
// The prefix of one symbol's URI; the template is kSymbolsUri + "/{stable_id}".
inline constexpr std::string_view kSymbolUriPrefix = "warden://symbols/";

// The URI of one symbol: kSymbolUriPrefix + the stable_id with every byte outside
// [A-Za-z0-9-._~:] percent-encoded (so "w1:<hex>" stays as it is and a tier suffix's '/' is
// %2F). Notifications name exactly this form; subscribe to it.
std::string SymbolUri(std::string_view stable_id);
// The stable_id of a symbol URI's variable (percent escapes decoded); kInvalidArgument for a
// malformed escape.
Result<std::string> DecodeStableId(std::string_view encoded);

// The recent batches of one server's watcher (the body of `warden://symbols`).
class SymbolFeed {
 public:
  // Keeps up to `max_changes` changed ids (the oldest go first).
  explicit SymbolFeed(std::size_t max_changes = 1000) : max_changes_(max_changes) {}
  SymbolFeed(const SymbolFeed&) = delete;
  SymbolFeed& operator=(const SymbolFeed&) = delete;

  // Records a batch; returns its sequence number (1, 2, ...).
  std::uint64_t Record(const kb::SymbolChanges& changes);
  // Whether the watcher is listening now.
  void SetListening(bool listening);

  // {"listening", "sequence" (of the last batch, 0 before any), "reset_sequence" (of the last
  // "anything may have changed" batch, or null), "changes": [{"sequence", "stable_id", "uri"}]
  // oldest first}.
  mcp::Json Snapshot() const;

 private:
  struct Change {
    std::uint64_t sequence;
    std::string stable_id;
  };
  const std::size_t max_changes_;
  mutable std::mutex mu_;
  std::uint64_t sequence_ = 0;                   // GUARDED_BY(mu_)
  std::optional<std::uint64_t> reset_sequence_;  // GUARDED_BY(mu_)
  std::deque<Change> changes_;                   // GUARDED_BY(mu_)
  bool listening_ = false;                       // GUARDED_BY(mu_)
};

// Records `changes` in `feed` and sends the notifications for them on `server`.
void DeliverSymbolChanges(mcp::Server& server, SymbolFeed& feed, const kb::SymbolChanges& changes);

class SymbolNotifier {
 public:
  // Watches the KB at `target` (a PostgreSQL URL; else kUnsupported) and delivers every batch
  // to `server` and `feed` (DeliverSymbolChanges). Connection losses and recoveries are logged
  // (the target redacted). `server`, `feed` and `logger` must outlive the notifier.
  static Result<std::unique_ptr<SymbolNotifier>> Start(mcp::Server& server, SymbolFeed& feed,
                                                       const std::string& target,
                                                       const base::Logger& logger,
                                                       kb::WatchOptions options = {});
  SymbolNotifier(const SymbolNotifier&) = delete;
  SymbolNotifier& operator=(const SymbolNotifier&) = delete;
  ~SymbolNotifier() = default;  // stops the watcher

 private:
  explicit SymbolNotifier(std::unique_ptr<kb::SymbolWatcher> watcher)
      : watcher_(std::move(watcher)) {}
  std::unique_ptr<kb::SymbolWatcher> watcher_;
};

}  // namespace trove::warden::server

// Live symbol changes of a KB on PostgreSQL (docs/decisions/0092-warden-pg-live-symbols.md).
//
// The PostgreSQL schema (kb_pg.cc) has a trigger on `symbols` that sends
// NOTIFY warden_symbols, '<stable_id>' for every row written (the gate, ingest seeds), whichever
// process or machine wrote it. A watcher holds a connection of its own that LISTENs on that
// channel and hands the changed stable_ids to a callback, coalesced: the ids that arrive within
// `batch_window` of the first one go out as one batch, sorted and without repeats, so a version
// whose 22,000 seeds commit at once costs a handful of callbacks, not 22,000.
//
// Notifications sent while the watcher has no connection are lost (PostgreSQL queues them only
// for listening sessions). So whenever the watcher (re)connects after having been connected, or
// could not keep up (more than max_batch_ids ids in one batch, or a notification naming a
// stable_id too long to be sent whole), the batch says `everything`: anything may have changed.
// A server that is down is retried forever with backoff (100 ms doubling to 2 s) until the
// watcher is stopped.
//
// A SQLite KB has no watcher: WatchSymbols and SymbolWatcher::Start return kUnsupported.
//
// Thread safety: WatchSymbols runs on the calling thread and calls back on it. SymbolWatcher
// runs one thread of its own, which makes every callback; Stop and the destructor may be called
// from any other thread (not from inside a callback).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"

namespace trove::warden::kb {

// The channel the `symbols` trigger notifies (kb_pg.cc): the payload is the stable_id, or, for
// one of 7000 bytes or more, its first 1000 characters, '#' and the md5 of the whole id.
inline constexpr std::string_view kSymbolsChannel = "warden_symbols";

struct SymbolChanges {
  // The stable_ids written since the last batch, sorted, without repeats; empty when
  // `everything` is set.
  std::vector<std::string> stable_ids;
  // Anything may have changed (see the file comment): reread whatever you show.
  bool everything = false;
};

struct WatchOptions {
  // How long after the first notification of a batch the batch is delivered. Default 100 ms.
  std::chrono::milliseconds batch_window{100};
  // A batch naming more ids than this is delivered as `everything`. Default 50,000.
  std::size_t max_batch_ids = 50'000;
  // Called on the watching thread with OK once the watcher listens (the first time, and again
  // after every outage) and with the failure when the connection is lost or cannot be made
  // (once per outage). For logs and tests; messages name the target redacted. Default none.
  std::function<void(const Status&)> on_connection;
};

using SymbolChangeCallback = std::function<void(const SymbolChanges&)>;

// LISTENs on the KB at `target` and calls `on_change` with every batch until `cancel` is
// requested; then returns OK. A target that is not a PostgreSQL URL is kUnsupported. A server
// that cannot be reached is retried (reported through options.on_connection), not returned.
Status WatchSymbols(const std::string& target, const SymbolChangeCallback& on_change,
                    base::Cancellation& cancel, const WatchOptions& options = {});

// WatchSymbols on a thread of its own.
class SymbolWatcher {
 public:
  // Starts watching `target`. kUnsupported for a target that is not a PostgreSQL URL; the
  // connection itself is made on the watcher's thread (and retried there).
  static Result<std::unique_ptr<SymbolWatcher>> Start(std::string target,
                                                      SymbolChangeCallback on_change,
                                                      WatchOptions options = {});
  SymbolWatcher(const SymbolWatcher&) = delete;
  SymbolWatcher& operator=(const SymbolWatcher&) = delete;
  // Stops the watcher (Stop).
  ~SymbolWatcher();

  // Stops watching and waits for the thread; no callback runs after it returns. Idempotent.
  void Stop();

 private:
  SymbolWatcher() = default;

  base::Cancellation cancel_;
  std::thread thread_;
};

}  // namespace trove::warden::kb

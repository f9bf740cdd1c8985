#include "warden/server/symbol_notifier.h"

#include <fmt/core.h>

#include <functional>
#include <utility>

namespace trove::warden::server {

namespace {

bool Unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == ':';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string SymbolUri(std::string_view stable_id) {
  std::string out(kSymbolUriPrefix);
  for (char ch : stable_id) {
    const auto c = static_cast<unsigned char>(ch);
    if (Unreserved(c)) {
      out.push_back(ch);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

Result<std::string> DecodeStableId(std::string_view encoded) {
  std::string out;
  out.reserve(encoded.size());
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    if (encoded[i] != '%') {
      out.push_back(encoded[i]);
      continue;
    }
    const int hi = i + 2 < encoded.size() ? HexValue(encoded[i + 1]) : -1;
    const int lo = i + 2 < encoded.size() ? HexValue(encoded[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return Status::InvalidArgument(fmt::format("{}{}: malformed percent escape at byte {}",
                                                 kSymbolUriPrefix, encoded.substr(0, 80), i));
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

std::uint64_t SymbolFeed::Record(const kb::SymbolChanges& changes) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t sequence = ++sequence_;
  if (changes.everything) reset_sequence_ = sequence;
  for (const std::string& id : changes.stable_ids) {
    changes_.push_back({sequence, id});
    if (changes_.size() > max_changes_) changes_.pop_front();
  }
  return sequence;
}

void SymbolFeed::SetListening(bool listening) {
  std::lock_guard<std::mutex> lock(mu_);
  listening_ = listening;
}

mcp::Json SymbolFeed::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  mcp::Json changes = mcp::Json::array();
  for (const Change& c : changes_) {
    changes.push_back(
        {{"sequence", c.sequence}, {"stable_id", c.stable_id}, {"uri", SymbolUri(c.stable_id)}});
  }
  return {{"listening", listening_},
          {"sequence", sequence_},
          {"reset_sequence", reset_sequence_ ? mcp::Json(*reset_sequence_) : mcp::Json(nullptr)},
          {"changes", std::move(changes)}};
}

void DeliverSymbolChanges(mcp::Server& server, SymbolFeed& feed, const kb::SymbolChanges& changes) {
  feed.Record(changes);
  if (changes.everything) {
    server.NotifyResourcesUpdatedUnder(kSymbolUriPrefix);
  } else {
    for (const std::string& id : changes.stable_ids) server.NotifyResourceUpdated(SymbolUri(id));
  }
  server.NotifyResourceUpdated(std::string(kSymbolsUri));
}

Result<std::unique_ptr<SymbolNotifier>> SymbolNotifier::Start(mcp::Server& server, SymbolFeed& feed,
                                                              const std::string& target,
                                                              const base::Logger& logger,
                                                              kb::WatchOptions options) {
  std::function<void(const Status&)> also = std::move(options.on_connection);
  options.on_connection = [&feed, &logger, also = std::move(also)](const Status& status) {
    feed.SetListening(status.ok());
    if (status.ok()) {
      logger.Logf(base::LogLevel::kInfo, "symbol notifications: listening");
    } else {
      logger.Logf(base::LogLevel::kWarning,
                  "symbol notifications paused, retrying until the database is back: {}",
                  status.ToString());
    }
    if (also) also(status);
  };
  ASSIGN_OR_RETURN(std::unique_ptr<kb::SymbolWatcher> watcher,
                   kb::SymbolWatcher::Start(
                       target,
                       [&server, &feed](const kb::SymbolChanges& changes) {
                         DeliverSymbolChanges(server, feed, changes);
                       },
                       std::move(options)));
  return std::unique_ptr<SymbolNotifier>(new SymbolNotifier(std::move(watcher)));
}

}  // namespace trove::warden::server

// QueryCache (docs/librarian.md §7.1): TTL, LRU and trigger-file checks.
#include <sys/stat.h>

#include <utility>

#include "librarian/query/query.h"

namespace trove::librarian::query {

QueryCache::QueryCache(std::chrono::milliseconds ttl, std::size_t capacity, Clock now)
    : ttl_(ttl),
      capacity_(capacity == 0 ? 1 : capacity),
      now_(now ? std::move(now) : Clock([] { return std::chrono::steady_clock::now(); })) {}

QueryCache::Trigger QueryCache::Stat(const std::string& abs_path) {
  Trigger t;
  t.abs_path = abs_path;
  struct stat st {};
  if (::lstat(abs_path.c_str(), &st) != 0) return t;
  t.size = static_cast<std::int64_t>(st.st_size);
  t.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return t;
}

std::optional<QueryResponse> QueryCache::Get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  bool fresh = now_() - it->second.stored < ttl_;
  for (const Trigger& t : it->second.triggers) {
    if (!fresh) break;
    const Trigger now = Stat(t.abs_path);
    fresh = now.size == t.size && now.mtime_ns == t.mtime_ns;
  }
  if (!fresh) {
    lru_.erase(it->second.lru);
    entries_.erase(it);
    return std::nullopt;
  }
  lru_.splice(lru_.begin(), lru_, it->second.lru);
  return it->second.response;
}

void QueryCache::Put(const std::string& key, const QueryResponse& response,
                     std::vector<Trigger> triggers) {
  if (response.error || response.partial) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    lru_.erase(it->second.lru);
    entries_.erase(it);
  }
  while (entries_.size() >= capacity_ && !lru_.empty()) {
    entries_.erase(lru_.back());
    lru_.pop_back();
  }
  lru_.push_front(key);
  entries_.emplace(key, Entry{response, std::move(triggers), now_(), lru_.begin()});
}

void QueryCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  lru_.clear();
}

std::size_t QueryCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace trove::librarian::query

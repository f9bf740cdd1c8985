#include "librarian/watch/status.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/rfc3339.h"

namespace trove::librarian::watch {
namespace {

// Largest status file read back (1,000 paths of up to 4 KiB plus framing).
constexpr std::size_t kMaxStatusBytes = 8u << 20;

}  // namespace

std::string WatchStatusPathFor(std::string_view canonical_workspace) {
  return fmt::format("{}/.librarian/watch.json", canonical_workspace);
}

Status WriteWatchStatus(const std::string& path, const WatchStatus& status) {
  nlohmann::json j{
      {"pid", status.pid},
      {"reindexing", status.reindexing},
      {"pendingTotal", status.pending_total},
      {"updatedAt", status.updated_at.empty() ? base::NowRfc3339() : status.updated_at}};
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < status.pending.size() && i < kMaxListedPending; ++i) {
    list.push_back(status.pending[i]);
  }
  j["pending"] = std::move(list);
  const std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const std::string tmp = fmt::format("{}.tmp{}", path, getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Io(fmt::format("watch status {}: {}", tmp, strerror(errno)));
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      close(fd);
      unlink(tmp.c_str());
      return Status::Io(fmt::format("watch status {}: {}", tmp, strerror(e)));
    }
    done += static_cast<std::size_t>(n);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    return Status::Io(fmt::format("watch status {}: {}", path, strerror(e)));
  }
  return Status::Ok();
}

void RemoveWatchStatus(const std::string& path) { unlink(path.c_str()); }

WatchStatus ReadLiveWatchStatus(const std::string& path) {
  WatchStatus out;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return out;
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxStatusBytes) {
      close(fd);
      return out;
    }
  }
  close(fd);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return out;
  auto pid = j.find("pid");
  if (pid == j.end() || !pid->is_number_integer()) return out;
  const std::int64_t p = pid->get<std::int64_t>();
  // A watcher that died (kill -9, crash) left the file: its list means nothing now.
  if (p <= 0 || (kill(static_cast<pid_t>(p), 0) != 0 && errno == ESRCH)) return out;
  out.pid = p;
  if (auto r = j.find("reindexing"); r != j.end() && r->is_boolean())
    out.reindexing = r->get<bool>();
  if (auto t = j.find("updatedAt"); t != j.end() && t->is_string())
    out.updated_at = t->get<std::string>();
  if (auto l = j.find("pending"); l != j.end() && l->is_array()) {
    for (const nlohmann::json& e : *l) {
      if (e.is_string() && out.pending.size() < kMaxListedPending) {
        out.pending.push_back(e.get<std::string>());
      }
    }
  }
  out.pending_total = out.pending.size();
  if (auto n = j.find("pendingTotal"); n != j.end() && n->is_number_unsigned()) {
    out.pending_total = std::max<std::uint64_t>(out.pending_total, n->get<std::uint64_t>());
  }
  return out;
}

}  // namespace trove::librarian::watch

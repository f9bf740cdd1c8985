#include "mcp/stdio.h"

#include <fmt/core.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

namespace trove::mcp {

namespace {

class FdChannel final : public Channel {
 public:
  explicit FdChannel(int fd) : fd_(fd) {}

  bool Send(const std::string& message, bool /*final*/) override {
    static const char kNewline = '\n';
    std::lock_guard<std::mutex> lock(mu_);
    if (gone_) return false;
    if (held_ && std::this_thread::get_id() == holder_) {
      // The reader is working through one read's worth of requests: its replies go out together.
      pending_.append(message);
      pending_.push_back(kNewline);
      return pending_.size() < kMaxPending || FlushLocked();
    }
    if (!pending_.empty()) {
      // Another thread's message keeps its place behind the replies already held.
      pending_.append(message);
      pending_.push_back(kNewline);
      return FlushLocked();
    }
    iovec iov[2] = {{const_cast<char*>(message.data()), message.size()},
                    {const_cast<char*>(&kNewline), 1}};
    return WriteLocked(iov, 2);
  }

  // Until Release, messages sent by the calling thread are collected and written by one
  // writev (or when they pass kMaxPending). Messages from other threads are never delayed.
  void Hold() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = true;
    holder_ = std::this_thread::get_id();
  }

  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    held_ = false;
    if (!pending_.empty() && !gone_) FlushLocked();
  }

  bool gone() {
    std::lock_guard<std::mutex> lock(mu_);
    return gone_;
  }

 private:
  static constexpr std::size_t kMaxPending = 64 * 1024;

  bool FlushLocked() {
    iovec iov[1] = {{pending_.data(), pending_.size()}};
    bool ok = WriteLocked(iov, 1);
    pending_.clear();
    return ok;
  }

  // Writes every byte of `iov[0..count)`, resuming after partial writes.
  bool WriteLocked(iovec* iov, int count) {
    std::size_t total = 0;
    for (int i = 0; i < count; ++i) total += iov[i].iov_len;
    std::size_t written = 0;
    while (written < total) {
      // Skip what was already written across the buffers.
      iovec part[2];
      int n = 0;
      std::size_t skip = written;
      for (int i = 0; i < count; ++i) {
        if (skip >= iov[i].iov_len) {
          skip -= iov[i].iov_len;
          continue;
        }
        part[n].iov_base = static_cast<char*>(iov[i].iov_base) + skip;
        part[n].iov_len = iov[i].iov_len - skip;
        skip = 0;
        ++n;
      }
      ssize_t w = ::writev(fd_, part, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        gone_ = true;  // EPIPE or another fatal error: the client is gone
        return false;
      }
      written += static_cast<std::size_t>(w);
    }
    return true;
  }

  const int fd_;
  std::mutex mu_;
  bool gone_ = false;       // GUARDED_BY(mu_)
  bool held_ = false;       // GUARDED_BY(mu_)
  std::thread::id holder_;  // GUARDED_BY(mu_)
  std::string pending_;     // GUARDED_BY(mu_)
};

// Releases the final replies of a connection's requests in the order the requests arrived
// (ServerOptions::ordered_replies). Each request gets a Slot; its reply waits there until every
// earlier request's reply has left. A slot with no reply (a cancelled request, a request
// dropped at shutdown) is resolved when closed or destroyed, so it never holds up the queue.
// Messages that are not final replies (progress, logs, requests to the client) pass at once.
class ReplyOrder final : public std::enable_shared_from_this<ReplyOrder> {
 public:
  // `max_waiting` bounds the slots not yet written: Next blocks at the bound, so the replies
  // held back stay bounded however fast a client writes.
  ReplyOrder(std::shared_ptr<Channel> out, std::size_t max_waiting)
      : out_(std::move(out)), max_waiting_(std::max<std::size_t>(max_waiting, 1)) {}

  // Returns the channel for the next request's messages; waits while max_waiting slots are
  // open. Called by the reader thread only.
  std::shared_ptr<Channel> Next() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return slots_.size() < max_waiting_; });
    const std::uint64_t seq = next_seq_++;
    slots_.emplace(seq, std::nullopt);
    return std::make_shared<Slot>(shared_from_this(), seq);
  }

 private:
  class Slot final : public Channel {
   public:
    Slot(std::shared_ptr<ReplyOrder> order, std::uint64_t seq)
        : order_(std::move(order)), seq_(seq) {}
    ~Slot() override { Resolve(std::string()); }

    bool Send(const std::string& message, bool final) override {
      if (!final) return order_->out_->Send(message, false);
      Resolve(message);
      return true;
    }
    void Close() override { Resolve(std::string()); }

   private:
    void Resolve(const std::string& message) {
      if (!resolved_.exchange(true)) order_->Resolve(seq_, message);
    }
    const std::shared_ptr<ReplyOrder> order_;
    const std::uint64_t seq_;
    std::atomic<bool> resolved_{false};
  };

  // Records the reply of `seq` (empty: none) and writes every reply now at the head of the
  // queue. Writing under mu_ keeps the order when several threads resolve at once.
  void Resolve(std::uint64_t seq, const std::string& message) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = slots_.find(seq);
    if (it == slots_.end()) return;
    it->second = message;
    while (!slots_.empty() && slots_.begin()->second.has_value()) {
      if (!slots_.begin()->second->empty()) out_->Send(*slots_.begin()->second, true);
      slots_.erase(slots_.begin());
    }
    cv_.notify_all();
  }

  const std::shared_ptr<Channel> out_;
  const std::size_t max_waiting_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t next_seq_ = 0;                                 // GUARDED_BY(mu_)
  std::map<std::uint64_t, std::optional<std::string>> slots_;  // GUARDED_BY(mu_)
};

}  // namespace

std::shared_ptr<Channel> MakeFdChannel(int fd) { return std::make_shared<FdChannel>(fd); }

Status ServeStdio(Server& server, const StdioOptions& options) {
  int out_fd = options.out_fd;
  if (options.out_fd == 1 && options.redirect_stdout_to_stderr) {
    out_fd = ::dup(1);
    if (out_fd < 0) return Status::Io(fmt::format("dup stdout: {}", std::strerror(errno)));
    ::dup2(2, 1);
  }
  auto channel = std::make_shared<FdChannel>(out_fd);
  std::shared_ptr<internal::Session> session = server.NewSession("");
  session->set_principal(options.principal);
  session->set_session_channel(channel);

  // SIGTERM/SIGINT (see signals.h) cancel in-flight work, allow it up to 1 s, and exit 0.
  // The reader stays in a plain blocking read, with no poll per message.
  ShutdownSignalWatcher signals([session, channel] {
    session->Close();
    session->WaitIdle(std::chrono::milliseconds(1000));
    channel->Release();  // replies the reader still holds go out before the exit
    std::_Exit(0);
  });

  // With ordered_replies, each request's reply travels through a slot of `order`.
  std::shared_ptr<ReplyOrder> order;
  if (server.options().ordered_replies) {
    order = std::make_shared<ReplyOrder>(channel, server.options().max_in_flight);
  }
  auto reply_channel = [&]() -> std::shared_ptr<Channel> {
    if (order) return order->Next();
    return channel;
  };

  const ParseLimits& limits = server.options().parse;
  MessageParser parser;  // reused for every line: its buffers stay allocated
  std::string buffer;
  std::string line;
  bool discarding = false;  // inside an over-long line
  char chunk[65536];
  auto handle_line = [&](std::string_view text) {
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) return;  // blank line
    ParsedMessage parsed = parser.Parse(text, limits);
    if (!parsed.message) {
      reply_channel()->Send(SerializeError(parsed.error_id, parsed.error), true);
      return;
    }
    const bool request = parsed.message->kind == MessageKind::kRequest;
    session->Handle(std::move(*parsed.message), request ? reply_channel() : channel);
  };
  auto oversize = [&] {
    reply_channel()->Send(
        SerializeError(nullptr, ProtocolError{error_code::kInvalidRequest,
                                              fmt::format("message exceeds the limit of {} bytes",
                                                          limits.max_message_bytes),
                                              nullptr}),
        true);
  };

  for (;;) {
    if (channel->gone()) break;
    ssize_t n = ::read(options.in_fd, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd fd = {options.in_fd, POLLIN, 0};
        ::poll(&fd, 1, -1);
        continue;
      }
      break;
    }
    if (n == 0) break;  // EOF
    std::string_view data(chunk, static_cast<std::size_t>(n));
    // Replies made on this thread for the requests of this read leave in one write (released
    // below), which spares a write and a client wake-up per message when requests are pipelined.
    channel->Hold();
    while (!data.empty()) {
      std::size_t nl = data.find('\n');
      std::string_view piece = data.substr(0, nl);
      if (discarding) {
        if (nl == std::string_view::npos) break;
        discarding = false;
        data.remove_prefix(nl + 1);
        continue;
      }
      if (nl == std::string_view::npos) {
        buffer.append(piece);
        if (buffer.size() > limits.max_message_bytes + 1) {
          buffer.clear();
          discarding = true;
          oversize();
        }
        break;
      }
      if (buffer.empty()) {
        if (piece.size() > limits.max_message_bytes + 1) {
          oversize();
        } else {
          handle_line(piece);
        }
      } else {
        buffer.append(piece);
        line.swap(buffer);
        buffer.clear();
        if (line.size() > limits.max_message_bytes + 1) {
          oversize();
        } else {
          handle_line(line);
        }
      }
      data.remove_prefix(nl + 1);
    }
    channel->Release();
  }
  if (!buffer.empty() && !discarding) handle_line(buffer);

  // EOF: requests already read get 300 ms to finish and answer (a client that pipes a batch of
  // requests and closes stdin still gets its answers); whatever still runs then is cancelled,
  // its reply suppressed, and given up to 500 ms more, so the exit comes within 1 s (docs/mcp.md
  // §2.8).
  session->WaitIdle(std::chrono::milliseconds(300));
  session->Close();
  session->WaitIdle(std::chrono::milliseconds(500));
  return Status::Ok();
}

}  // namespace trove::mcp

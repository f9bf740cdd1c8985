// In-process test client for the MCP core: a recording in-memory Channel, a TestServer that
// owns the worker pool, logger and Server, and a TestClient that drives one real Session the
// way a transport does (ParseMessage, then Session::Handle, or the parse error on the
// channel). No part of the core is mocked (docs/conventions.md §11).
//
//   TestServer ts;                       // inline pool: deterministic
//   ASSERT_TRUE(ts.server().tools().AddRaw(...).ok());
//   TestClient client(ts.server());
//   client.Initialize();
//   Json response = client.Request("tools/list");
//
// Thread safety: RecordingChannel may be written from any thread; a TestClient is driven
// from the test thread only.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/logging.h"
#include "base/thread_pool.h"
#include "mcp/json.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"

namespace trove::mcp::testing {

// How long a test waits for something that should happen promptly. Only a bound on failure:
// no test asserts a duration.
inline constexpr std::chrono::milliseconds kWait{3000};

// A Channel that records every message in the order written, and each Close.
class RecordingChannel final : public Channel {
 public:
  bool Send(const std::string& message, bool final) override {
    std::lock_guard<std::mutex> lock(mu_);
    texts_.push_back(message);
    messages_.push_back(ParseJson(message));
    finals_.push_back(final);
    cv_.notify_all();
    return true;
  }

  void Close() override {
    std::lock_guard<std::mutex> lock(mu_);
    ++closes_;
    cv_.notify_all();
  }

  void SetStatusHint(const StatusHint& hint) override {
    std::lock_guard<std::mutex> lock(mu_);
    hints_.push_back(hint);
  }

  // The status hints given with final messages so far (what HTTP would answer with).
  std::vector<StatusHint> Hints() const {
    std::lock_guard<std::mutex> lock(mu_);
    return hints_;
  }

  // The messages written so far, parsed (a message that is not JSON is a discarded value).
  std::vector<Json> Messages() const {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_;
  }
  // The messages written so far, as written.
  std::vector<std::string> Texts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return texts_;
  }
  std::vector<bool> Finals() const {
    std::lock_guard<std::mutex> lock(mu_);
    return finals_;
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return messages_.size();
  }
  int closes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return closes_;
  }

  // Waits until `pred(messages)` holds or `timeout` passes; returns whether it holds.
  bool WaitUntil(const std::function<bool(const std::vector<Json>&)>& pred,
                 std::chrono::milliseconds timeout = kWait) const {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return pred(messages_); });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<std::string> texts_;  // GUARDED_BY(mu_)
  std::vector<Json> messages_;      // GUARDED_BY(mu_)
  std::vector<bool> finals_;        // GUARDED_BY(mu_)
  int closes_ = 0;                  // GUARDED_BY(mu_)
  std::vector<StatusHint> hints_;   // GUARDED_BY(mu_)
};

// True for a response (result or error) to a request: it has an id and no method.
inline bool IsResponse(const Json& m) {
  return m.is_object() && m.contains("id") && !m.contains("method") &&
         (m.contains("result") || m.contains("error"));
}

// True for the id of `m` being `id` with the same JSON type and value (5 and "5" differ).
inline bool HasId(const Json& m, const Json& id) {
  auto it = m.find("id");
  return it != m.end() && IdKey(*it) == IdKey(id);
}

inline bool IsNotification(const Json& m, std::string_view method) {
  return m.is_object() && !m.contains("id") && m.value("method", std::string()) == method;
}

// The responses to `id` among `messages`, in order.
inline std::vector<Json> ResponsesFor(const std::vector<Json>& messages, const Json& id) {
  std::vector<Json> out;
  for (const auto& m : messages) {
    if (IsResponse(m) && HasId(m, id)) out.push_back(m);
  }
  return out;
}

// The notifications named `method` among `messages`, in order.
inline std::vector<Json> NotificationsNamed(const std::vector<Json>& messages,
                                            std::string_view method) {
  std::vector<Json> out;
  for (const auto& m : messages) {
    if (IsNotification(m, method)) out.push_back(m);
  }
  return out;
}

// Owns what a Server needs: the worker pool (0 workers: inline) and a logger. Its destructor
// closes every live session and drains the pool before the Server goes, so no handler outlives
// the Server it references.
class TestServer {
 public:
  explicit TestServer(std::size_t workers = 0, ServerOptions options = {},
                      ServerInfo info = DefaultInfo(), int log_fd = -1)
      : pool_(workers),
        logger_(log_fd < 0 ? base::LogLevel::kOff : base::LogLevel::kDebug,
                log_fd < 0 ? 2 : log_fd),
        server_(std::move(info), options, pool_, logger_) {}

  ~TestServer() {
    for (auto& session : server_.LiveSessions()) {
      session->Close();
      session->WaitIdle(kWait);
    }
    pool_.Wait();
  }

  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  Server& server() { return server_; }
  base::ThreadPool& pool() { return pool_; }

  static ServerInfo DefaultInfo() {
    return {.name = "trove-test",
            .version = "1.2.3",
            .title = "Trove Test",
            .instructions = "Call list_things first."};
  }

 private:
  base::ThreadPool pool_;
  base::Logger logger_;
  Server server_;
};

// One session of `server`, driven as a transport drives it, with every outbound message of the
// session (replies, notifications, session-level pushes) recorded on one channel, as on stdio.
class TestClient {
 public:
  explicit TestClient(Server& server, std::string session_id = "test-session")
      : server_(server),
        session_(server.NewSession(std::move(session_id))),
        channel_(std::make_shared<RecordingChannel>()) {
    session_->set_session_channel(channel_);
  }

  // Cancels what still runs (no replies follow) and waits for it to finish.
  ~TestClient() {
    session_->Close();
    session_->WaitIdle(kWait);
  }

  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  // Frames `text` like a transport: a parse error is answered on the channel, a message is
  // handed to the session.
  void SendRaw(std::string_view text) {
    ParsedMessage parsed = ParseMessage(text, server_.options().parse);
    if (!parsed.message) {
      channel_->Send(SerializeError(parsed.error_id, parsed.error), true);
      return;
    }
    session_->Handle(std::move(*parsed.message), channel_);
  }
  void Send(const Json& message) { SendRaw(Dump(message)); }

  // Sends a request without waiting for its response.
  void SendRequest(const Json& id, std::string_view method, const Json& params = nullptr) {
    Json m = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) m["params"] = params;
    Send(m);
  }
  void Notify(std::string_view method, const Json& params = nullptr) {
    Json m = {{"jsonrpc", "2.0"}, {"method", method}};
    if (!params.is_null()) m["params"] = params;
    Send(m);
  }

  // Returns a fresh integer request id.
  Json NextId() { return Json(next_id_++); }

  // Waits for the first response to `id`; returns null when none came within `timeout`.
  Json WaitResponse(const Json& id, std::chrono::milliseconds timeout = kWait) const {
    Json found;
    channel_->WaitUntil(
        [&](const std::vector<Json>& messages) {
          for (const auto& m : messages) {
            if (IsResponse(m) && HasId(m, id)) {
              found = m;
              return true;
            }
          }
          return false;
        },
        timeout);
    return found;
  }

  // Sends a request with a fresh id and returns its whole response message (null on timeout).
  Json Request(std::string_view method, const Json& params = nullptr,
               std::chrono::milliseconds timeout = kWait) {
    Json id = NextId();
    SendRequest(id, method, params);
    return WaitResponse(id, timeout);
  }

  // initialize, then notifications/initialized; returns the initialize response.
  Json Initialize(std::string_view version = kLatestProtocolVersion,
                  const Json& capabilities = Json::object()) {
    Json response =
        Request("initialize", {{"protocolVersion", version},
                               {"capabilities", capabilities},
                               {"clientInfo", {{"name", "test-client"}, {"version", "0.0.1"}}}});
    Notify("notifications/initialized");
    return response;
  }

  // tools/call; returns the whole response message.
  Json CallTool(std::string_view name, const Json& arguments, const Json& meta = nullptr) {
    Json params = {{"name", name}, {"arguments", arguments}};
    if (!meta.is_null()) params["_meta"] = meta;
    return Request("tools/call", params);
  }

  std::vector<Json> Messages() const { return channel_->Messages(); }
  std::vector<Json> ResponsesFor(const Json& id) const {
    return testing::ResponsesFor(channel_->Messages(), id);
  }

  RecordingChannel& channel() { return *channel_; }
  const std::shared_ptr<RecordingChannel>& channel_ptr() { return channel_; }
  internal::Session& session() { return *session_; }

 private:
  Server& server_;
  std::shared_ptr<internal::Session> session_;
  std::shared_ptr<RecordingChannel> channel_;
  std::int64_t next_id_ = 1;
};

// A gate a test-controlled handler blocks on until released or cancelled. It records what
// the handler saw. Declare it before the TestServer so that it outlives every handler.
class Gate {
 public:
  // Called by the handler: waits until Release() or `cancelled()` (polled) or `limit` passes.
  // Returns true when released, false when cancelled or timed out.
  bool Wait(const std::function<bool()>& cancelled,
            std::chrono::milliseconds limit = std::chrono::milliseconds(4000)) {
    std::unique_lock<std::mutex> lock(mu_);
    ++started_;
    cv_.notify_all();
    auto until = std::chrono::steady_clock::now() + limit;
    while (!released_) {
      if (cancelled()) return false;
      if (std::chrono::steady_clock::now() >= until) return false;
      cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
    return true;
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  void MarkCancelled() {
    std::lock_guard<std::mutex> lock(mu_);
    ++cancelled_;
    cv_.notify_all();
  }
  void MarkFinished() {
    std::lock_guard<std::mutex> lock(mu_);
    ++finished_;
    cv_.notify_all();
  }
  // Waits until at least `n` handlers started (or finished); returns whether they did.
  bool WaitStarted(int n, std::chrono::milliseconds timeout = kWait) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return started_ >= n; });
  }
  bool WaitFinished(int n, std::chrono::milliseconds timeout = kWait) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return finished_ >= n; });
  }
  int started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  int cancelled() {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }
  int finished() {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;  // GUARDED_BY(mu_)
  int started_ = 0;        // GUARDED_BY(mu_)
  int cancelled_ = 0;      // GUARDED_BY(mu_)
  int finished_ = 0;       // GUARDED_BY(mu_)
};

}  // namespace trove::mcp::testing

#include "mcp/http.h"

#include <fmt/core.h>
#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "base/hash.h"
#include "mcp/policy/auth.h"
#include "mcp/policy/jwt.h"
#include "mcp/signals.h"

namespace trove::mcp {

namespace {

using Clock = std::chrono::steady_clock;

// cpp-httplib runs each connection on a task queue thread, and SSE streams hold theirs for as
// long as they are open, so a fixed pool of 8 would starve. This queue grows a thread per
// connection up to `max`, reuses idle ones, and queues beyond the cap.
class ElasticTaskQueue final : public httplib::TaskQueue {
 public:
  explicit ElasticTaskQueue(std::size_t max) : max_(max) {}
  ~ElasticTaskQueue() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(fn));
    // A thread that was notified but has not woken yet still counts as idle, so compare with
    // the queued tasks, not with zero: otherwise two connections arriving together (an SSE GET
    // and a POST) wake one thread, the GET keeps it, and the POST waits for the next
    // connection.
    if (queue_.size() > idle_ && threads_.size() < max_) {
      threads_.emplace_back([this] { Loop(); });
    } else {
      cv_.notify_one();
    }
  }

  void shutdown() override {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      threads.swap(threads_);
    }
    cv_.notify_all();
    for (auto& t : threads) t.join();
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      ++idle_;
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      --idle_;
      if (queue_.empty()) return;
      auto fn = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  const std::size_t max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  bool stop_ = false;
};

// One SSE stream: the messages of one POST's request, or a session's standalone GET stream.
// Events are kept (up to a bound) so a client can resume with Last-Event-ID; a connection
// reads them from a position, waiting for more until the stream finishes.
class HttpStream final : public Channel {
 public:
  HttpStream(std::string id, std::size_t keep) : id_(std::move(id)), keep_(keep) {}

  bool Send(const std::string& message, bool final) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return false;
    events_.push_back({++last_seq_, message, final});
    if (final) finished_ = true;
    while (events_.size() > keep_) events_.pop_front();
    cv_.notify_all();
    return true;
  }

  void Close() override {
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
    cv_.notify_all();
  }

  void SetStatusHint(const StatusHint& hint) override {
    std::lock_guard<std::mutex> lock(mu_);
    hint_ = hint;
  }

  void Disconnect(std::chrono::milliseconds retry) override {
    std::lock_guard<std::mutex> lock(mu_);
    disconnect_retry_ms_ = retry.count();
    ++disconnect_generation_;
    cv_.notify_all();
  }

  const std::string& id() const { return id_; }

  // Waits for the first event or the end; returns true when the stream holds exactly one
  // event, its final response (the answer can be plain JSON), with its status hint.
  bool WaitFirst(std::string* only_message, StatusHint* hint) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !events_.empty() || finished_ || disconnect_generation_ > 0; });
    if (events_.size() == 1 && events_.front().final && disconnect_generation_ == 0) {
      *only_message = events_.front().data;
      *hint = hint_;
      return true;
    }
    return false;
  }

  bool finished() {
    std::lock_guard<std::mutex> lock(mu_);
    return finished_;
  }

  // Writes events after `after_seq` to `sink` until the stream finishes, the client goes away
  // or a Disconnect is requested. Sends a priming event first when `prime`.
  void Pump(httplib::DataSink& sink, std::uint64_t after_seq, bool prime) {
    std::unique_lock<std::mutex> lock(mu_);
    const std::uint64_t generation = disconnect_generation_;
    std::string out;
    if (prime) out = fmt::format("id: {}.0\ndata: \n\n", id_);
    std::uint64_t next = after_seq;
    for (;;) {
      for (const Event& e : events_) {
        if (e.seq <= next) continue;
        out += fmt::format("id: {}.{}\ndata: {}\n\n", id_, e.seq, e.data);
        next = e.seq;
      }
      if (disconnect_generation_ != generation || (disconnect_generation_ > 0 && prime)) {
        out += fmt::format("retry: {}\n\n", disconnect_retry_ms_);
      }
      if (!out.empty()) {
        lock.unlock();
        bool ok = sink.write(out.data(), out.size());
        lock.lock();
        out.clear();
        if (!ok) return;
      }
      if (disconnect_generation_ != generation || (disconnect_generation_ > 0 && prime)) return;
      const bool done = finished_ && (events_.empty() || events_.back().seq <= next);
      if (done) return;
      cv_.wait_for(lock, std::chrono::seconds(1));
      if (!sink.is_writable()) return;
      // An idle stream sends a comment now and then so a vanished client is noticed.
      if (events_.empty() || events_.back().seq <= next) {
        if (++idle_ticks_ % 15 == 0) out = ": keep-alive\n\n";
      }
    }
  }

 private:
  struct Event {
    std::uint64_t seq;
    std::string data;
    bool final;
  };
  const std::string id_;
  const std::size_t keep_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> events_;
  std::uint64_t last_seq_ = 0;
  bool finished_ = false;
  std::int64_t disconnect_retry_ms_ = 0;
  std::uint64_t disconnect_generation_ = 0;
  std::uint64_t idle_ticks_ = 0;
  StatusHint hint_;  // of the final response; used only when it is answered as plain JSON
};

struct SessionEntry {
  std::shared_ptr<internal::Session> session;
  // SHA-256 of the bearer token that created the session; all zero when authentication is
  // off. Another token's requests for this session get 404, as for an unknown one (docs/mcp.md
  // §2.4).
  std::array<std::uint8_t, 32> owner{};
  Clock::time_point last_used;
  int active = 0;  // POSTs and GETs being served
  bool get_stream_open = false;
  std::uint64_t next_stream = 0;
  std::map<std::string, std::shared_ptr<HttpStream>> streams;  // for resumption
};

std::string JsonRpcErrorBody(int code, std::string_view message) {
  return SerializeError(nullptr, ProtocolError{code, std::string(message), nullptr});
}

bool HeaderListHas(const std::string& value, std::string_view token) {
  // Accept: application/json, text/event-stream;q=0.9
  std::size_t pos = 0;
  while (pos <= value.size()) {
    std::size_t comma = value.find(',', pos);
    std::string_view item(value.data() + pos,
                          (comma == std::string::npos ? value.size() : comma) - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    std::size_t semi = item.find(';');
    if (semi != std::string_view::npos) item = item.substr(0, semi);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item == token || item == "*/*") return true;
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return false;
}

std::string StripPort(const std::string& host) {
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    return close == std::string::npos ? host : host.substr(0, close + 1);
  }
  auto colon = host.rfind(':');
  if (colon != std::string::npos && host.find(':') == colon) return host.substr(0, colon);
  return host;
}

}  // namespace

class HttpTransport {
 public:
  HttpTransport(Server& server, const HttpOptions& options) : server_(server), options_(options) {
    auth_ = options_.authenticator;
    if (auth_ == nullptr && !options_.bearer_tokens.empty()) {
      // Plain tokens become an in-memory StaticTokenAuth of digests with every scope, each
      // principal named by its token id.
      std::string text;
      for (const auto& t : options_.bearer_tokens) {
        const std::string hex = base::ToHex(base::Sha256(t));
        text += fmt::format("token:{} admin sha256:{}\n", hex.substr(0, 12), hex);
      }
      auto parsed = policy::StaticTokenAuth::Parse(text, "--auth-token");
      TROVE_CHECK(parsed.ok());
      auth_ = std::move(parsed).value();
    }
    options_.bearer_tokens.clear();  // only digests are kept
    if (auth_ != nullptr && auth_->mode() == policy::AuthMode::kNone) auth_ = nullptr;
    if (auth_ != nullptr && auth_->mode() == policy::AuthMode::kOauth) {
      if (const auto* jwt = dynamic_cast<const policy::JwtAuthenticator*>(auth_.get())) {
        metadata_json_ = jwt->MetadataJson();
      }
    }
  }

  Status Run() {
    http_.new_task_queue = [this] { return new ElasticTaskQueue(options_.max_connections); };
    http_.set_payload_max_length(server_.options().parse.max_message_bytes);
    http_.set_read_timeout(options_.read_timeout.count(), 0);
    http_.set_keep_alive_max_count(1000);
    http_.set_keep_alive_timeout(5);
    http_.set_tcp_nodelay(true);
    http_.set_pre_routing_handler(
        [this](const httplib::Request& req, httplib::Response& res) { return PreRoute(req, res); });
    http_.Post(options_.path, [this](const httplib::Request& req, httplib::Response& res) {
      HandlePost(req, res);
    });
    http_.Get(options_.path,
              [this](const httplib::Request& req, httplib::Response& res) { HandleGet(req, res); });
    http_.Delete(options_.path, [this](const httplib::Request& req, httplib::Response& res) {
      HandleDelete(req, res);
    });
    http_.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) {
        const char* text = res.status == 413 ? "message exceeds the size limit" : "not found";
        if (res.status == 404) text = "not found";
        res.set_content(JsonRpcErrorBody(error_code::kServerBusy, text), "application/json");
      }
    });

    int port = options_.port;
    if (port == 0) {
      port = http_.bind_to_any_port(options_.host);
      if (port < 0) return Status::Io(fmt::format("bind {}: failed", options_.host));
    } else if (!http_.bind_to_port(options_.host, port)) {
      return Status::Io(fmt::format("bind {}:{}: failed (address in use?)", options_.host, port));
    }
    port_ = port;
    if (options_.allowed_hosts.empty())
      options_.allowed_hosts = {"127.0.0.1", "localhost", "[::1]"};
    if (options_.allowed_origins.empty()) {
      for (const char* h : {"127.0.0.1", "localhost", "[::1]"}) {
        options_.allowed_origins.push_back(fmt::format("http://{}:{}", h, port));
      }
    }
    if (options_.on_listening) options_.on_listening(port);
    if (options_.on_stoppable) {
      options_.on_stoppable([this] {
        CloseAll();
        http_.stop();
      });
    }

    ShutdownSignalWatcher signals([this] {
      CloseAll();
      http_.stop();
    });
    http_.listen_after_bind();
    CloseAll();
    return Status::Ok();
  }

 private:
  void Fail(httplib::Response& res, int status, int code, std::string_view message) {
    res.status = status;
    res.set_content(JsonRpcErrorBody(code, message), "application/json");
  }

  httplib::Server::HandlerResponse PreRoute(const httplib::Request& req, httplib::Response& res) {
    using HR = httplib::Server::HandlerResponse;
    const std::string host = StripPort(req.get_header_value("Host"));
    if (std::find(options_.allowed_hosts.begin(), options_.allowed_hosts.end(), host) ==
        options_.allowed_hosts.end()) {
      Fail(res, 403, error_code::kServerBusy, "forbidden: Host is not allowed");
      return HR::Handled;
    }
    if (req.has_header("Origin")) {
      const std::string origin = req.get_header_value("Origin");
      if (std::find(options_.allowed_origins.begin(), options_.allowed_origins.end(), origin) ==
          options_.allowed_origins.end()) {
        Fail(res, 403, error_code::kServerBusy, "forbidden: Origin is not allowed");
        return HR::Handled;
      }
    }
    // The Protected Resource Metadata (RFC 9728, docs/mcp.md §2.6), oauth mode only.
    if (!metadata_json_.empty() && req.method == "GET" &&
        (req.path == "/.well-known/oauth-protected-resource" ||
         req.path == "/.well-known/oauth-protected-resource" + options_.path)) {
      res.status = 200;
      res.set_content(metadata_json_, "application/json");
      return HR::Handled;
    }
    if (req.path != options_.path) {
      Fail(res, 404, error_code::kServerBusy, "not found");
      return HR::Handled;
    }
    if (auth_ != nullptr) {
      if (req.has_param("access_token") || req.has_param("token")) {
        Fail(res, 400, error_code::kServerBusy,
             "bad request: tokens are accepted only in the Authorization header");
        return HR::Handled;
      }
      policy::AuthOutcome outcome = Authenticate(req);
      if (!outcome.ok()) {
        if (!outcome.denial.www_authenticate.empty()) {
          res.set_header("WWW-Authenticate", outcome.denial.www_authenticate);
        }
        const int code = outcome.denial.http_status == 401 ? error_code::kAuthenticationRequired
                                                           : error_code::kServerBusy;
        Fail(res, outcome.denial.http_status, code, outcome.denial.message);
        return HR::Handled;
      }
    }
    return HR::Unhandled;
  }

  policy::AuthOutcome Authenticate(const httplib::Request& req) const {
    std::optional<std::string_view> header;
    std::string value;
    if (req.has_header("Authorization")) {
      value = req.get_header_value("Authorization");
      header = value;
    }
    return auth_->Authenticate(header);
  }

  // Returns the SHA-256 of the request's bearer token; all zero when authentication is off.
  // REQUIRES: PreRoute authenticated the request.
  std::array<std::uint8_t, 32> TokenDigestOf(const httplib::Request& req) {
    if (auth_ == nullptr) return {};
    const std::string header = req.get_header_value("Authorization");
    Result<std::string_view> token = policy::ExtractBearerToken(header);
    if (!token.ok()) return {};
    return base::Sha256(*token);
  }

  // Returns the principal of an authenticated request: the token's (its digest, never the
  // token, names it), or the anonymous loopback principal when authentication is off.
  Principal PrincipalOf(const httplib::Request& req) {
    if (auth_ == nullptr) return Principal{"anonymous-loopback", {"admin"}, ""};
    policy::AuthOutcome outcome = Authenticate(req);
    if (!outcome.ok()) return Principal{"unauthenticated", {}, ""};  // not reached: PreRoute
    return ToCorePrincipal(*outcome.principal);
  }

  // Looks up the session named by the request; answers 400/404 itself when it fails. A
  // session belongs to the token that created it: for any other token it does not exist.
  std::shared_ptr<internal::Session> FindSession(const httplib::Request& req,
                                                 httplib::Response& res) {
    if (!req.has_header("Mcp-Session-Id")) {
      Fail(res, 400, error_code::kServerBusy, "bad request: missing Mcp-Session-Id header");
      return nullptr;
    }
    const std::string id = req.get_header_value("Mcp-Session-Id");
    const std::array<std::uint8_t, 32> caller = TokenDigestOf(req);
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || !base::ConstantTimeEqual(caller, it->second.owner)) {
      if (it != sessions_.end()) {
        server_.logger().Logf(base::LogLevel::kWarning,
                              "http: a request for a session of another principal got 404");
      }
      Fail(res, 404, error_code::kServerBusy, "session not found");
      return nullptr;
    }
    if (Clock::now() - it->second.last_used > options_.session_idle_expiry &&
        it->second.active == 0 && it->second.session->in_flight() == 0) {
      it->second.session->Close();
      sessions_.erase(it);
      Fail(res, 404, error_code::kServerBusy, "session expired");
      return nullptr;
    }
    it->second.last_used = Clock::now();
    return it->second.session;
  }

  // RAII count of the requests a session is serving (busy sessions are never evicted).
  class ActiveGuard {
   public:
    ActiveGuard(HttpTransport& t, std::string id) : t_(t), id_(std::move(id)) {
      std::lock_guard<std::mutex> lock(t_.mu_);
      auto it = t_.sessions_.find(id_);
      if (it != t_.sessions_.end()) ++it->second.active;
    }
    ~ActiveGuard() {
      std::lock_guard<std::mutex> lock(t_.mu_);
      auto it = t_.sessions_.find(id_);
      if (it != t_.sessions_.end()) {
        --it->second.active;
        it->second.last_used = Clock::now();
      }
    }

   private:
    HttpTransport& t_;
    std::string id_;
  };

  bool CheckProtocolVersionHeader(const httplib::Request& req, httplib::Response& res,
                                  const internal::Session& session) {
    if (!req.has_header("MCP-Protocol-Version")) return true;
    const std::string v = req.get_header_value("MCP-Protocol-Version");
    // Only an unsupported revision is refused. docs/mcp.md §2.3 also refuses one that differs
    // from the negotiated revision, but the official conformance suite (0.1.16) sends
    // "2025-03-26" on sessions it negotiated as 2025-11-25; see
    // docs/decisions/0002-protocol-version-header.md.
    (void)session;
    if (!IsSupportedProtocolVersion(v)) {
      Fail(res, 400, error_code::kServerBusy,
           fmt::format("bad request: unsupported MCP-Protocol-Version {}", v));
      return false;
    }
    return true;
  }

  // Creates a session, evicting the least recently used idle one at the cap. Returns null
  // (after answering 503) when every session is busy.
  std::shared_ptr<internal::Session> CreateSession(httplib::Response& res,
                                                   const httplib::Request& req,
                                                   std::string* id_out) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = Clock::now();
    for (auto it = sessions_.begin(); it != sessions_.end();) {
      const bool idle = it->second.active == 0 && !it->second.get_stream_open &&
                        it->second.session->in_flight() == 0;
      if (idle && now - it->second.last_used > options_.session_idle_expiry) {
        it->second.session->Close();
        it = sessions_.erase(it);
      } else {
        ++it;
      }
    }
    if (sessions_.size() >= options_.max_sessions) {
      auto victim = sessions_.end();
      for (auto it = sessions_.begin(); it != sessions_.end(); ++it) {
        const bool idle = it->second.active == 0 && !it->second.get_stream_open &&
                          it->second.session->in_flight() == 0;
        if (idle &&
            (victim == sessions_.end() || it->second.last_used < victim->second.last_used)) {
          victim = it;
        }
      }
      if (victim == sessions_.end()) {
        res.set_header("Retry-After", "1");
        Fail(res, 503, error_code::kServerBusy, "server busy: every session is in use");
        return nullptr;
      }
      victim->second.session->Close();
      sessions_.erase(victim);
    }
    std::string id = base::RandomHex(16);
    auto session = server_.NewSession(id);
    session->set_principal(PrincipalOf(req));
    SessionEntry entry;
    entry.session = session;
    entry.owner = TokenDigestOf(req);
    entry.last_used = now;
    sessions_.emplace(id, std::move(entry));
    *id_out = std::move(id);
    return session;
  }

  std::shared_ptr<HttpStream> NewStream(const std::string& session_id) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(session_id);
    std::string stream_id = fmt::format("{}", it == sessions_.end() ? 0 : ++it->second.next_stream);
    auto stream = std::make_shared<HttpStream>(stream_id, options_.replay_events);
    if (it != sessions_.end()) {
      auto& streams = it->second.streams;
      // Keep a bounded number of streams for resumption, dropping finished ones first.
      while (streams.size() >= 64) {
        auto drop = std::find_if(streams.begin(), streams.end(),
                                 [](const auto& kv) { return kv.second->finished(); });
        if (drop == streams.end()) drop = streams.begin();
        streams.erase(drop);
      }
      streams.emplace(stream_id, stream);
    }
    return stream;
  }

  void StreamResponse(httplib::Response& res, std::shared_ptr<HttpStream> stream,
                      std::uint64_t after_seq, bool prime, std::function<void()> on_end) {
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [stream, after_seq, prime](std::size_t, httplib::DataSink& sink) {
          stream->Pump(sink, after_seq, prime);
          sink.done();
          return true;
        },
        [on_end = std::move(on_end)](bool) {
          if (on_end) on_end();
        });
  }

  void HandlePost(const httplib::Request& req, httplib::Response& res) {
    const std::string content_type = req.get_header_value("Content-Type");
    if (content_type.rfind("application/json", 0) != 0) {
      return Fail(res, 415, error_code::kServerBusy,
                  "unsupported media type: Content-Type must be application/json");
    }
    const std::string accept = req.get_header_value("Accept");
    if (!HeaderListHas(accept, "application/json") || !HeaderListHas(accept, "text/event-stream")) {
      return Fail(res, 406, error_code::kServerBusy,
                  "not acceptable: Accept must list application/json and text/event-stream");
    }
    ParsedMessage parsed = ParseMessage(req.body, server_.options().parse);
    if (!parsed.message) {
      res.status = parsed.error.code == error_code::kParseError ? 400 : 400;
      res.set_content(SerializeError(parsed.error_id, parsed.error), "application/json");
      return;
    }
    Message& msg = *parsed.message;
    std::shared_ptr<internal::Session> session;
    std::string session_id;
    const bool is_initialize = msg.kind == MessageKind::kRequest && msg.method == "initialize";
    if (is_initialize) {
      if (req.has_header("Mcp-Session-Id")) {
        return Fail(res, 400, error_code::kServerBusy,
                    "bad request: initialize must not carry an Mcp-Session-Id");
      }
      session = CreateSession(res, req, &session_id);
      if (!session) return;
    } else {
      session = FindSession(req, res);
      if (!session) return;
      session_id = session->id();
      if (!CheckProtocolVersionHeader(req, res, *session)) return;
    }
    ActiveGuard guard(*this, session_id);

    if (msg.kind != MessageKind::kRequest) {
      session->Handle(std::move(msg), nullptr);
      res.status = 202;
      return;
    }
    auto stream = NewStream(session_id);
    session->Handle(std::move(msg), stream);
    std::string only;
    StatusHint hint;
    if (stream->WaitFirst(&only, &hint)) {
      res.status = 200;
      ApplyStatusHint(hint, res);
      if (is_initialize) res.set_header("Mcp-Session-Id", session_id);
      res.set_content(only, "application/json");
      return;
    }
    // An SSE answer already went out as 200; its final message keeps the JSON-RPC outcome only.
    if (is_initialize) res.set_header("Mcp-Session-Id", session_id);
    StreamResponse(res, stream, 0, /*prime=*/true, nullptr);
  }

  // A policy refusal's status (docs/mcp.md §2.6, §5.6): in oauth mode a scope refusal is 403
  // with the insufficient_scope challenge (step-up); without it (static tokens, no auth) the
  // refusal stays the tool's PERMISSION_DENIED result at 200, as docs/mcp.md §2.6 says. 429 with
  // Retry-After.
  void ApplyStatusHint(const StatusHint& hint, httplib::Response& res) const {
    if (hint.http_status == 403) {
      if (auth_ == nullptr) return;
      policy::Scopes needed;
      for (const auto& name : hint.scopes) {
        Result<policy::Scopes> one = policy::ParseScopes(name);
        if (one.ok()) needed |= *one;
      }
      policy::AuthDenial denial = auth_->InsufficientScope(needed);
      if (denial.www_authenticate.empty()) return;
      res.status = 403;
      res.set_header("WWW-Authenticate", denial.www_authenticate);
    } else if (hint.http_status == 429) {
      res.status = 429;
      res.set_header("Retry-After",
                     fmt::format("{}", std::max<std::int64_t>(1, hint.retry_after_seconds)));
    }
  }

  void HandleGet(const httplib::Request& req, httplib::Response& res) {
    if (!HeaderListHas(req.get_header_value("Accept"), "text/event-stream")) {
      return Fail(res, 406, error_code::kServerBusy,
                  "not acceptable: Accept must list text/event-stream");
    }
    std::shared_ptr<internal::Session> session = FindSession(req, res);
    if (!session) return;
    const std::string session_id = session->id();

    // Resumption: Last-Event-ID "<stream>.<seq>" replays that stream's later events.
    if (req.has_header("Last-Event-ID")) {
      const std::string last = req.get_header_value("Last-Event-ID");
      const auto dot = last.find('.');
      std::shared_ptr<HttpStream> stream;
      std::uint64_t seq = 0;
      if (dot != std::string::npos) {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = sessions_.find(session_id);
        if (it != sessions_.end()) {
          auto s = it->second.streams.find(last.substr(0, dot));
          if (s != it->second.streams.end()) stream = s->second;
        }
        seq = std::strtoull(last.c_str() + dot + 1, nullptr, 10);
      }
      if (stream && stream->id() != "g") {
        StreamResponse(res, stream, seq, /*prime=*/false, nullptr);
        return;
      }
    }

    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sessions_.find(session_id);
      if (it == sessions_.end())
        return Fail(res, 404, error_code::kServerBusy, "session not found");
      if (it->second.get_stream_open) {
        return Fail(res, 409, error_code::kServerBusy,
                    "conflict: the session already has an open GET stream");
      }
      it->second.get_stream_open = true;
      ++it->second.active;
    }
    auto stream = std::make_shared<HttpStream>("g", options_.replay_events);
    session->set_session_channel(stream);
    StreamResponse(res, stream, 0, /*prime=*/true, [this, session, session_id, stream] {
      if (session->session_channel() == stream) session->set_session_channel(nullptr);
      std::lock_guard<std::mutex> lock(mu_);
      auto it = sessions_.find(session_id);
      if (it != sessions_.end()) {
        it->second.get_stream_open = false;
        --it->second.active;
        it->second.last_used = Clock::now();
      }
    });
  }

  void HandleDelete(const httplib::Request& req, httplib::Response& res) {
    std::shared_ptr<internal::Session> session = FindSession(req, res);
    if (!session) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      sessions_.erase(session->id());
    }
    session->Close();
    res.status = 200;
  }

  void CloseAll() {
    std::map<std::string, SessionEntry> all;
    {
      std::lock_guard<std::mutex> lock(mu_);
      all.swap(sessions_);
    }
    for (auto& [id, entry] : all) {
      entry.session->Close();
      for (auto& [sid, stream] : entry.streams) stream->Close();
    }
  }

  Server& server_;
  HttpOptions options_;
  httplib::Server http_;
  int port_ = 0;
  std::shared_ptr<const policy::Authenticator> auth_;  // null: authentication off
  std::string metadata_json_;                          // oauth: Protected Resource Metadata
  std::mutex mu_;
  std::map<std::string, SessionEntry> sessions_;  // GUARDED_BY(mu_)
};

Status ServeHttp(Server& server, const HttpOptions& options) {
  HttpTransport transport(server, options);
  return transport.Run();
}

Status ServeHttpAnnounced(Server& server, HttpOptions options, std::string_view program) {
  options.on_listening = [then = std::move(options.on_listening), host = options.host,
                          program = std::string(program)](int port) {
    std::fputs(fmt::format("{}: listening on http://{}:{}/mcp\n", program, host, port).c_str(),
               stderr);
    std::fflush(stderr);
    if (then) then(port);
  };
  return ServeHttp(server, options);
}

}  // namespace trove::mcp

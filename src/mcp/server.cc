#include "mcp/server.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <exception>

#include "base/hash.h"
#include "base/rfc3339.h"
#include "mcp/policy/audit.h"
#include "mcp/policy/confine.h"
#include "mcp/policy/rate_limit.h"
#include "mcp/policy/scopes.h"
#include "mcp/schema.h"

namespace trove::mcp {

namespace {

constexpr std::string_view kSupportedVersions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

ToolResult ToolErrorResult(const ErrorObject& error, std::string text = {}) {
  ToolResult r = ToolResult::Text(text.empty() ? fmt::format("{}: {}", error.code, error.message)
                                               : std::move(text));
  r.is_error = true;
  r.meta = {{"trove/error", error.ToJson()}};
  return r;
}

// A short reference that ties a sanitized client message to the detailed log line.
std::string NewErrorRef() { return base::RandomHex(6); }

// The error object of a failure whose detail stays in the log: a fresh reference, logged with
// `detail` ("<where> failed (ref <id>): <detail>") and named in the client's message.
ErrorObject InternalError(const base::Logger& logger, std::string_view where,
                          std::string_view detail, bool retryable = false) {
  ErrorObject e{.code = "INTERNAL_ERROR",
                .category = "internal",
                .severity = "high",
                .status_code = 500,
                .error_id = NewErrorRef()};
  logger.Logf(base::LogLevel::kError, "{} failed (ref {}): {}", where, e.error_id, detail);
  if (retryable) {
    e.retryable = true;
    e.retry_delay_ms = kRetryDelayMs;
    e.message =
        fmt::format("temporarily unavailable; retry in {} ms (ref {})", kRetryDelayMs, e.error_id);
  } else {
    e.message = fmt::format("internal error (ref {})", e.error_id);
  }
  return e;
}

}  // namespace

bool IsSupportedProtocolVersion(std::string_view version) {
  return std::find(std::begin(kSupportedVersions), std::end(kSupportedVersions), version) !=
         std::end(kSupportedVersions);
}

std::string NowRfc3339() { return base::NowRfc3339(); }

Json ErrorObject::ToJson() const {
  Json e = {{"code", code},         {"message", message},        {"category", category},
            {"severity", severity}, {"statusCode", status_code}, {"retryable", retryable}};
  if (retryable) e["retryDelayMs"] = retry_delay_ms;
  e["timestamp"] = NowRfc3339();
  if (!error_id.empty()) e["errorId"] = error_id;
  if (!details.is_null()) e["details"] = details;
  return e;
}

ErrorObject ErrorObjectFromStatus(const Status& status, const base::Logger& logger,
                                  std::string_view where) {
  // Only codes whose message is addressed to the caller pass it on (base/status.h); the
  // server-side ones carry SQL, paths and library text (base/sqlite.cc), which stay in the log.
  switch (status.code()) {
    case base::StatusCode::kInvalidArgument:
    case base::StatusCode::kMalformed:
    case base::StatusCode::kUnsupported:
    case base::StatusCode::kResourceExhausted:
    case base::StatusCode::kAlreadyExists:
      return {.code = "INVALID_INPUT",
              .message = status.message(),
              .category = "validation",
              .severity = "low",
              .status_code = 400};
    case base::StatusCode::kNotFound:
      return {.code = "RESOURCE_NOT_FOUND",
              .message = status.message(),
              .category = "resource_not_found",
              .severity = "low",
              .status_code = 404};
    case base::StatusCode::kPermissionDenied:
      return {.code = "PERMISSION_DENIED",
              .message = status.message(),
              .category = "authorization",
              .severity = "medium",
              .status_code = 403};
    case base::StatusCode::kDeadlineExceeded:
      // The core's own "timed out after N s" (docs/mcp.md §3.2): transient, and says nothing
      // internal.
      return {.code = "INTERNAL_ERROR",
              .message = status.message(),
              .category = "internal",
              .severity = "high",
              .status_code = 500,
              .retryable = true,
              .retry_delay_ms = kRetryDelayMs};
    case base::StatusCode::kUnavailable:
      return InternalError(logger, where, status.ToString(), /*retryable=*/true);
    default:
      return InternalError(logger, where, status.ToString());
  }
}

ToolResult ToolErrorFromStatus(const Status& status, const base::Logger& logger,
                               std::string_view where) {
  return ToolErrorResult(ErrorObjectFromStatus(status, logger, where));
}

// ---------------------------------------------------------------------------------------------
// CallContext

std::string_view LogSeverityName(LogSeverity level) {
  static constexpr std::string_view kNames[] = {"debug", "info",     "notice", "warning",
                                                "error", "critical", "alert",  "emergency"};
  return kNames[static_cast<int>(level)];
}

std::optional<LogSeverity> ParseLogSeverity(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(LogSeverity::kEmergency); ++i) {
    auto level = static_cast<LogSeverity>(i);
    if (LogSeverityName(level) == name) return level;
  }
  return std::nullopt;
}

CallContext::CallContext(internal::Session& session, internal::InFlight& request)
    : session_(session), request_(request) {}

const Json& CallContext::request_id() const { return request_.id; }
const std::string& CallContext::method() const { return request_.method; }

const Json& CallContext::meta() const {
  static const Json* const kNull = new Json(nullptr);
  if (request_.params.is_object()) {
    auto it = request_.params.find("_meta");
    if (it != request_.params.end()) return *it;
  }
  return *kNull;
}

base::Cancellation& CallContext::cancellation() { return request_.cancel; }
bool CallContext::cancelled() const { return request_.cancel.requested(); }
bool CallContext::has_progress_token() const { return !request_.progress_token.is_null(); }

void CallContext::ReportProgress(double progress, std::optional<double> total,
                                 std::string_view message) {
  if (request_.progress_token.is_null() || !std::isfinite(progress)) return;
  Json params = {{"progressToken", request_.progress_token}, {"progress", progress}};
  if (total.has_value() && std::isfinite(total.value())) params["total"] = total.value();
  if (!message.empty()) params["message"] = message;
  std::string msg = SerializeNotification("notifications/progress", params);
  std::lock_guard<std::mutex> lock(request_.mu);
  if (request_.done || request_.suppressed || progress <= request_.last_progress) return;
  request_.last_progress = progress;
  request_.channel->Send(msg, false);
}

base::Progress CallContext::MakeProgress() {
  if (!has_progress_token()) return base::Progress();
  return base::Progress([this](double done, double total, const std::string& message) {
    ReportProgress(done, total > 0 ? std::optional<double>(total) : std::nullopt, message);
  });
}

void CallContext::Log(LogSeverity level, std::string_view logger, const Json& data) {
  if (level < session_.log_level()) return;
  Json params = {{"level", LogSeverityName(level)}, {"data", data}};
  if (!logger.empty()) params["logger"] = logger;
  session_.SendForRequest(request_, SerializeNotification("notifications/message", params));
}

void CallContext::DisconnectStream(std::chrono::milliseconds retry) {
  std::lock_guard<std::mutex> lock(request_.mu);
  if (!request_.done && !request_.suppressed) request_.channel->Disconnect(retry);
}

const std::string& CallContext::session_id() const { return session_.id(); }
const std::string& CallContext::protocol_version() const { return session_.negotiated_version(); }
const Json& CallContext::client_capabilities() const { return session_.client_capabilities(); }
const Json& CallContext::client_info() const { return session_.client_info(); }
const Principal& CallContext::principal() const { return session_.principal(); }

bool CallContext::HasScope(std::string_view scope) const {
  return PrincipalAllows(session_.principal(), {std::string(scope)});
}

Principal ToCorePrincipal(const policy::Principal& principal) {
  return Principal{principal.name, policy::ScopeNames(principal.scopes), principal.token_id};
}

namespace {

// The scopes of a list of names; an unknown name gives nullopt.
std::optional<policy::Scopes> ScopesOf(const std::vector<std::string>& names) {
  policy::Scopes scopes;
  for (const auto& n : names) {
    Result<policy::Scopes> one = policy::ParseScopes(n);
    if (!one.ok()) return std::nullopt;
    scopes |= *one;
  }
  return scopes;
}

// The JSON-RPC id as text for the audit log ("12", "abc").
std::string RequestIdText(const Json& id) {
  if (id.is_string()) return id.get<std::string>();
  return id.is_null() ? std::string() : Dump(id);
}

// The error code a tool result carries ("" on success).
std::string ErrorCodeOf(const ToolResult& r) {
  if (!r.is_error || !r.meta.is_object()) return {};
  auto e = r.meta.find("trove/error");
  if (e == r.meta.end() || !e->is_object()) return {};
  auto c = e->find("code");
  return c != e->end() && c->is_string() ? c->get<std::string>() : std::string();
}

}  // namespace

bool PrincipalAllows(const Principal& principal, const std::vector<std::string>& required) {
  std::optional<policy::Scopes> needed = ScopesOf(required);
  if (!needed) return false;
  policy::Scopes granted;
  for (const auto& n : principal.scopes) {
    Result<policy::Scopes> one = policy::ParseScopes(n, policy::UnknownScopes::kIgnore);
    if (one.ok()) granted |= *one;
  }
  return policy::Allowed(*needed, granted);
}

Result<std::string> CallContext::ResolvePath(std::string_view client_path) const {
  const auto& confiner = session_.server().options().confiner;
  if (confiner == nullptr) {
    return Status::PermissionDenied(
        "no allowed roots are configured for client paths (start the server with --allow-root)");
  }
  return confiner->Resolve(client_path);
}

policy::CircuitBreaker& CallContext::breaker(std::string_view dependency) const {
  return session_.server().options().breakers->For(dependency);
}

ToolResult BreakerRefusal(std::string_view dependency, const policy::Admission& admission) {
  ErrorObject open{.code = "RATE_LIMIT_EXCEEDED",
                   .message = fmt::format("{} is failing; the circuit breaker is open", dependency),
                   .category = "rate_limit",
                   .severity = "low",
                   .status_code = 429,
                   .retryable = true,
                   .retry_delay_ms = std::max<std::int64_t>(1, admission.retry_after_ms)};
  return ToolErrorResult(open);
}

Result<Json> CallContext::SendClientRequest(std::string_view method, const Json& params,
                                            std::chrono::milliseconds timeout) {
  return session_.ClientRequest(request_, method, params, timeout);
}

Status CallContext::RequireConsent(std::string_view operation) {
  Status s = session_.EnsureConsent(request_, operation);
  if (!s.ok() && request_.consent_refused.empty())
    request_.consent_refused = std::string(operation);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Session

namespace internal {

Session::Session(Server& server, std::string id) : server_(server), id_(std::move(id)) {}
Session::~Session() = default;

std::string Session::protocol_version() const { return version_; }

std::size_t Session::in_flight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_.size();
}

bool Session::subscribed(const std::string& uri) const {
  std::lock_guard<std::mutex> lock(mu_);
  return subscriptions_.count(uri) > 0;
}

std::vector<std::string> Session::SubscriptionsUnder(std::string_view prefix) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (auto it = subscriptions_.lower_bound(std::string(prefix));
       it != subscriptions_.end() && it->starts_with(prefix); ++it) {
    out.push_back(*it);
  }
  return out;
}

void Session::set_session_channel(std::shared_ptr<Channel> channel) {
  std::lock_guard<std::mutex> lock(mu_);
  session_channel_ = std::move(channel);
}

std::shared_ptr<Channel> Session::session_channel() {
  std::lock_guard<std::mutex> lock(mu_);
  return session_channel_;
}

bool Session::SendToSession(const std::string& message) {
  std::shared_ptr<Channel> channel = session_channel();
  return channel && channel->Send(message, false);
}

bool Session::AtLeast(std::string_view revision) const { return version_ >= revision; }

void Session::Reply(const std::shared_ptr<Channel>& channel, const Json& id, const Json& result) {
  channel->Send(SerializeResult(id, result), true);
}

void Session::ReplyError(const std::shared_ptr<Channel>& channel, const Json& id, int code,
                         std::string message, Json data) {
  channel->Send(SerializeError(id, ProtocolError{code, std::move(message), std::move(data)}), true);
}

void Session::Handle(Message msg, const std::shared_ptr<Channel>& channel) {
  switch (msg.kind) {
    case MessageKind::kRequest:
      HandleRequest(std::move(msg), channel);
      break;
    case MessageKind::kNotification:
      HandleNotification(msg);
      break;
    case MessageKind::kResponse:
      HandleResponse(msg);
      break;
  }
}

void Session::HandleNotification(const Message& msg) {
  if (msg.method == "notifications/cancelled") {
    if (!msg.params.is_object()) return;
    auto rid = msg.params.find("requestId");
    if (rid == msg.params.end()) return;
    std::shared_ptr<InFlight> target;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = in_flight_.find(IdKey(*rid));
      if (it != in_flight_.end()) target = it->second;
    }
    if (!target) return;  // unknown or finished: ignored
    {
      std::lock_guard<std::mutex> lock(target->mu);
      if (target->done) return;
      target->suppressed = true;
    }
    target->cancel.Cancel();
    return;
  }
  // notifications/initialized and unknown notifications are consumed silently.
}

void Session::HandleResponse(const Message& msg) {
  std::shared_ptr<PendingClientRequest> pending;
  if (msg.id.is_number_integer() || msg.id.is_number_unsigned()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = pending_.find(msg.id.get<std::int64_t>());
    if (it != pending_.end()) pending = it->second;
  }
  if (!pending) {
    server_.logger().Logf(base::LogLevel::kDebug, "dropped a response with unknown id {}",
                          Dump(msg.id));
    return;
  }
  std::lock_guard<std::mutex> lock(pending->mu);
  pending->answered = true;
  pending->result = msg.result;
  pending->error = msg.error;
  pending->cv.notify_all();
}

Json Session::Initialize(const Json& params) {
  std::string requested;
  if (params.is_object()) {
    auto v = params.find("protocolVersion");
    if (v != params.end() && v->is_string()) requested = v->get<std::string>();
    auto caps = params.find("capabilities");
    if (caps != params.end() && caps->is_object()) client_capabilities_ = *caps;
    auto info = params.find("clientInfo");
    if (info != params.end() && info->is_object()) client_info_ = *info;
  }
  version_ =
      IsSupportedProtocolVersion(requested) ? requested : std::string(kLatestProtocolVersion);

  const ServerInfo& info = server_.info();
  Json caps = Json::object();
  if (!server_.tools().empty()) caps["tools"] = Json::object();
  if (!server_.resources().empty()) {
    Json r = Json::object();
    if (server_.resources().any_subscribable()) r["subscribe"] = true;
    if (server_.options().resources_list_changed) r["listChanged"] = true;
    caps["resources"] = std::move(r);
  }
  if (!server_.prompts().empty()) caps["prompts"] = Json::object();
  caps["logging"] = Json::object();
  caps["completions"] = Json::object();

  Json server_info = {{"name", info.name}, {"version", info.version}};
  if (!info.title.empty() && AtLeast("2025-06-18")) server_info["title"] = info.title;
  Json result = {{"protocolVersion", version_},
                 {"capabilities", std::move(caps)},
                 {"serverInfo", std::move(server_info)}};
  if (!info.instructions.empty()) result["instructions"] = info.instructions;
  return result;
}

void Session::HandleRequest(Message msg, const std::shared_ptr<Channel>& channel) {
  {
    // Control requests are answered inline, so check the in-flight table for their id here;
    // other requests are checked when they enter it.
    std::lock_guard<std::mutex> lock(mu_);
    if (!in_flight_.empty() && in_flight_.count(IdKey(msg.id))) {
      return ReplyError(channel, msg.id, error_code::kInvalidRequest,
                        "invalid request: a request with this id is already in flight");
    }
  }
  if (msg.method == "ping") return Reply(channel, msg.id, Json::object());
  if (msg.method == "initialize") {
    {
      std::lock_guard<std::mutex> lock(init_mu_);
      if (initialize_started_) {
        return ReplyError(channel, msg.id, error_code::kInvalidRequest,
                          "invalid request: the session is already initialized");
      }
      initialize_started_ = true;
    }
    Json result = Initialize(msg.params);
    initialize_done_.store(true);
    return Reply(channel, msg.id, result);
  }
  if (!initialize_done_.load()) {
    return ReplyError(channel, msg.id, error_code::kInvalidRequest,
                      "invalid request: server not initialized");
  }
  if (msg.method == "logging/setLevel") {
    std::optional<LogSeverity> level;
    if (msg.params.is_object()) {
      auto l = msg.params.find("level");
      if (l != msg.params.end() && l->is_string()) level = ParseLogSeverity(l->get<std::string>());
    }
    if (!level) {
      return ReplyError(channel, msg.id, error_code::kInvalidParams,
                        "invalid params: params.level must be one of debug, info, notice, "
                        "warning, error, critical, alert, emergency");
    }
    log_level_.store(*level);
    return Reply(channel, msg.id, Json::object());
  }

  auto request = std::make_shared<InFlight>();
  request->id = std::move(msg.id);
  request->key = IdKey(request->id);
  request->method = std::move(msg.method);
  request->params = std::move(msg.params);
  request->channel = channel;
  if (request->params.is_object()) {
    auto meta = request->params.find("_meta");
    if (meta != request->params.end() && meta->is_object()) {
      auto token = meta->find("progressToken");
      if (token != meta->end() &&
          (token->is_string() || token->is_number_integer() || token->is_number_unsigned())) {
        request->progress_token = *token;
      }
    }
  }

  const Tool* tool = nullptr;
  if (request->method == "tools/call") {
    request->is_tool_call = true;
    if (request->params.is_object()) {
      auto name = request->params.find("name");
      if (name != request->params.end() && name->is_string()) {
        tool = server_.tools().Find(name->get_ref<const std::string&>());
      }
    }
  }
  request->deadline_length = (tool && tool->spec.deadline.count() > 0)
                                 ? tool->spec.deadline
                                 : server_.options().handler_deadline;
  request->deadline = request->deadline_length.count() > 0
                          ? std::chrono::steady_clock::now() + request->deadline_length
                          : std::chrono::steady_clock::time_point::max();

  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_.load()) return;
    if (in_flight_.count(request->key)) {
      return ReplyError(channel, request->id, error_code::kInvalidRequest,
                        "invalid request: a request with this id is already in flight");
    }
    if (in_flight_.size() >= server_.options().max_in_flight) {
      return ReplyError(channel, request->id, error_code::kServerBusy,
                        "too many requests in flight",
                        Json{{"retryable", true}, {"limit", server_.options().max_in_flight}});
    }
    in_flight_.emplace(request->key, request);
  }

  // A tool that may have to ask the client for consent never runs on the reader thread, which
  // must stay free to read the answer.
  if (server_.pool().inline_mode() ||
      (tool && tool->spec.run_inline && !tool->spec.needs_consent)) {
    Run(request);
  } else {
    std::weak_ptr<Session> weak = weak_from_this();
    server_.pool().Submit([weak, request] {
      if (auto self = weak.lock()) self->Run(request);
    });
  }
}

void Session::Run(const std::shared_ptr<InFlight>& request) {
  std::optional<ProtocolError> error;
  Json result;
  if (request->cancel.requested()) {
    Finish(*request, std::string());
    return;
  }
  std::string raw;  // a result serialized by its method handler
  try {
    if (request->method == "tools/call" && !server_.tools().empty()) {
      raw = CallTool(*request, error);
    } else {
      result = Dispatch(*request, error);
    }
  } catch (const std::exception& e) {
    ErrorObject internal =
        InternalError(server_.logger(), request->method, fmt::format("exception: {}", e.what()));
    error = ProtocolError{error_code::kInternalError, internal.message, internal.ToJson()};
  } catch (...) {
    ErrorObject internal = InternalError(server_.logger(), request->method, "unknown exception");
    error = ProtocolError{error_code::kInternalError, internal.message, internal.ToJson()};
  }
  if (error) {
    Finish(*request, SerializeError(request->id, *error));
  } else if (!raw.empty()) {
    Finish(*request, SerializeRawResult(request->id, raw));
  } else {
    Finish(*request, SerializeResult(request->id, result));
  }
}

void Session::Finish(InFlight& request, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(request.mu);
    if (!request.done) {
      request.done = true;
      if (request.suppressed || message.empty()) {
        request.channel->Close();
      } else {
        if (request.status_hint.http_status != 0)
          request.channel->SetStatusHint(request.status_hint);
        request.channel->Send(message, true);
      }
    }
  }
  Remove(request);
}

void Session::Remove(const InFlight& request) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = in_flight_.find(request.key);
  if (it != in_flight_.end() && it->second.get() == &request) in_flight_.erase(it);
  if (in_flight_.empty()) idle_cv_.notify_all();
}

bool Session::SendForRequest(InFlight& request, const std::string& message) {
  std::lock_guard<std::mutex> lock(request.mu);
  if (request.done || request.suppressed) return false;
  return request.channel->Send(message, false);
}

void Session::ExpireDeadlines(std::chrono::steady_clock::time_point now) {
  std::vector<std::shared_ptr<InFlight>> expired;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, request] : in_flight_) {
      if (request->deadline <= now) expired.push_back(request);
    }
  }
  for (auto& request : expired) {
    auto secs = std::chrono::duration<double>(request->deadline_length).count();
    std::string text = fmt::format("timed out after {:g} s", secs);
    std::string message;
    if (request->is_tool_call) {
      ToolResult r =
          ToolErrorFromStatus(Status::DeadlineExceeded(text), server_.logger(), request->method);
      Json out = {{"content", r.content}, {"isError", true}, {"_meta", r.meta}};
      message = SerializeResult(request->id, out);
    } else {
      ErrorObject timeout = ErrorObjectFromStatus(Status::DeadlineExceeded("request " + text),
                                                  server_.logger(), request->method);
      message = SerializeError(request->id, ProtocolError{error_code::kRequestTimeout,
                                                          timeout.message, timeout.ToJson()});
    }
    Finish(*request, message);
    request->cancel.Cancel();
  }
}

void Session::Close() {
  closed_.store(true);
  std::vector<std::shared_ptr<InFlight>> all;
  std::shared_ptr<Channel> session_channel;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [key, request] : in_flight_) all.push_back(request);
    session_channel = std::move(session_channel_);
  }
  for (auto& request : all) {
    {
      std::lock_guard<std::mutex> lock(request->mu);
      request->suppressed = true;
    }
    request->cancel.Cancel();
  }
  if (session_channel) session_channel->Close();
}

bool Session::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_for(lock, timeout, [this] { return in_flight_.empty(); });
}

Result<Json> Session::ClientRequest(InFlight& request, std::string_view method, const Json& params,
                                    std::chrono::milliseconds timeout) {
  if (server_.pool().inline_mode()) {
    return Status::Unsupported("requests to the client are unavailable in inline mode");
  }
  std::string_view capability = method.substr(0, method.find('/'));
  if (!client_capabilities_.contains(std::string(capability))) {
    return Status::Unsupported(
        fmt::format("the client did not declare the {} capability", capability));
  }
  if (timeout.count() <= 0) timeout = server_.options().client_request_timeout;
  auto pending = std::make_shared<PendingClientRequest>();
  std::int64_t id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = ++next_client_request_id_;
    pending_.emplace(id, pending);
  }
  auto forget = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    pending_.erase(id);
  };
  if (!SendForRequest(request, SerializeRequest(id, method, params))) {
    forget();
    return Status::Cancelled("the request finished before the client could be asked");
  }
  request.cancel.OnCancel([pending] {
    std::lock_guard<std::mutex> lock(pending->mu);
    pending->cv.notify_all();
  });
  bool answered;
  {
    std::unique_lock<std::mutex> lock(pending->mu);
    answered = pending->cv.wait_for(lock, timeout, [&] {
      return pending->answered || request.cancel.requested();
    }) && pending->answered;
  }
  forget();
  if (!answered) {
    if (request.cancel.requested())
      return Status::Cancelled("cancelled while waiting for the client");
    SendForRequest(request, SerializeNotification("notifications/cancelled",
                                                  {{"requestId", id}, {"reason", "timed out"}}));
    return Status::DeadlineExceeded(
        fmt::format("the client did not answer {} within {} s", method, timeout.count() / 1000));
  }
  if (!pending->error.is_null()) {
    return Status::Unsupported(fmt::format("the client answered {} with error {}: {}", method,
                                           pending->error.value("code", 0),
                                           pending->error.value("message", std::string())));
  }
  return pending->result;
}

Status Session::EnsureConsent(InFlight& request, std::string_view operation) {
  if (server_.ConsentConfigured(operation)) return Status::Ok();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (consents_.count(std::string(operation))) return Status::Ok();
  }
  auto refuse = [&](std::string_view why) {
    return Status::PermissionDenied(
        fmt::format("consent required for '{}': {}", operation.substr(0, 128), why));
  };
  // Form mode: an empty elicitation object means form (2025-06-18); from 2025-11-25 a client
  // may declare only {"url": {}}.
  auto cap = client_capabilities_.find("elicitation");
  const bool can_ask = cap != client_capabilities_.end() && cap->is_object() &&
                       (cap->empty() || cap->contains("form"));
  if (!can_ask || server_.pool().inline_mode()) {
    return refuse(fmt::format(
        "the client cannot be asked (no elicitation capability); an operator can pre-approve it "
        "with --consent {}",
        operation.substr(0, 128)));
  }
  Json schema = {{"type", "object"},
                 {"properties",
                  {{"confirm",
                    {{"type", "boolean"},
                     {"title", fmt::format("Allow '{}' for this session", operation)},
                     {"description", "Consent lasts until the session ends."},
                     {"default", false}}}}},
                 {"required", Json::array({"confirm"})}};
  Json params = {{"message", fmt::format("{} asks to run the high-risk operation '{}'. Allow it "
                                         "for this session?",
                                         server_.info().name, operation)},
                 {"requestedSchema", std::move(schema)}};
  if (AtLeast("2025-11-25")) params["mode"] = "form";
  Result<Json> answer = ClientRequest(request, "elicitation/create", params, {});
  if (!answer.ok()) {
    return refuse(answer.status().code() == base::StatusCode::kDeadlineExceeded
                      ? "the client did not answer the consent request in time"
                      : "the consent request failed");
  }
  std::string action;
  if (answer->is_object()) {
    auto a = answer->find("action");
    if (a != answer->end() && a->is_string()) action = a->get<std::string>();
  }
  if (action == "decline") return refuse("the user declined");
  if (action == "cancel") return refuse("the user cancelled");
  if (action != "accept") return refuse("the client's answer is not accept, decline or cancel");
  auto content = answer->find("content");
  if (content != answer->end() && content->is_object()) {
    auto confirm = content->find("confirm");
    if (confirm != content->end() && !(confirm->is_boolean() && confirm->get<bool>())) {
      return refuse("the user did not confirm");
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  consents_.insert(std::string(operation));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Methods

Json Session::Dispatch(InFlight& request, std::optional<ProtocolError>& error) {
  const std::string& m = request.method;
  auto not_found = [&] {
    error = ProtocolError{error_code::kMethodNotFound, "method not found: " + m, nullptr};
    return Json();
  };
  if (m == "tools/call") return not_found();  // Run calls CallTool when tools exist
  if (m == "tools/list") {
    if (server_.tools().empty()) return not_found();
    return ListPage(m, request.params, error);
  }
  if (m == "resources/list" || m == "resources/templates/list") {
    if (server_.resources().empty()) return not_found();
    return ListPage(m, request.params, error);
  }
  if (m == "resources/read") {
    if (server_.resources().empty()) return not_found();
    return ReadResource(request, error);
  }
  if (m == "resources/subscribe" || m == "resources/unsubscribe") {
    if (!server_.resources().any_subscribable()) return not_found();
    return Subscribe(request, m == "resources/subscribe", error);
  }
  if (m == "prompts/list") {
    if (server_.prompts().empty()) return not_found();
    return ListPage(m, request.params, error);
  }
  if (m == "prompts/get") {
    if (server_.prompts().empty()) return not_found();
    return GetPrompt(request, error);
  }
  if (m == "completion/complete") return Complete(request, error);
  return not_found();
}

std::string Session::CallTool(InFlight& request, std::optional<ProtocolError>& error) {
  const Json& params = request.params;
  auto name_it = params.is_object() ? params.find("name") : params.end();
  if (!params.is_object() || name_it == params.end() || !name_it->is_string()) {
    error = ProtocolError{error_code::kInvalidParams,
                          "invalid params: params.name must be a string", nullptr};
    return {};
  }
  const std::string& name = name_it->get_ref<const std::string&>();
  const Tool* tool = server_.tools().Find(name);
  if (tool == nullptr) {
    error = ProtocolError{error_code::kInvalidParams, "Unknown tool: " + name, nullptr};
    return {};
  }
  static const Json* const kEmpty = new Json(Json::object());
  const Json* args = kEmpty;
  auto args_it = params.find("arguments");
  if (args_it != params.end() && !args_it->is_null()) {
    if (!args_it->is_object()) {
      error = ProtocolError{error_code::kInvalidParams,
                            "invalid params: params.arguments must be an object", nullptr};
      return {};
    }
    args = &*args_it;
  }

  const auto started = std::chrono::steady_clock::now();
  ToolResult r;
  std::vector<ValidationError> failures;
  // The policy chain of docs/mcp.md §5.6: audit health → scopes → consent → rate limit; the
  // circuit breakers are the handlers' (CallContext::breaker). `denied` holds a refusal in r.
  bool denied = false;
  bool scope_denied = false;
  bool audit_broken = false;
  const ServerOptions& options = server_.options();
  if (options.audit_log != nullptr) {
    if (std::optional<ErrorObject> refusal = server_.AuditRefusal()) {
      denied = audit_broken = true;
      r = ToolErrorResult(*refusal);
    }
  }
  if (!denied && !PrincipalAllows(principal_, tool->spec.scopes)) {
    denied = scope_denied = true;
    std::string needed;
    for (const auto& sc : tool->spec.scopes) needed += (needed.empty() ? "" : ",") + sc;
    r = ToolErrorFromStatus(
        Status::PermissionDenied(fmt::format("tool '{}' needs scopes {}", name, needed)),
        server_.logger(), "tool " + name);
  }
  if (!denied && tool->spec.needs_consent) {
    if (Status consent = EnsureConsent(request, name); !consent.ok()) {
      denied = true;
      ErrorObject e = ErrorObjectFromStatus(consent, server_.logger(), "tool " + name);
      e.details = {{"consentRequired", name}};
      r = ToolErrorResult(e);
    }
  }
  if (!denied && options.rate_limiter != nullptr) {
    policy::Admission admission = options.rate_limiter->Acquire(principal_.name);
    if (!admission.allowed) {
      denied = true;
      ErrorObject limited{.code = "RATE_LIMIT_EXCEEDED",
                          .message = "rate limit exceeded: retry later",
                          .category = "rate_limit",
                          .severity = "low",
                          .status_code = 429,
                          .retryable = true,
                          .retry_delay_ms = std::max<std::int64_t>(1, admission.retry_after_ms)};
      r = ToolErrorResult(limited);
    }
  }
  if (!denied) failures = ValidateAgainstSchema(tool->input_schema, *args);
  if (denied) {
    // r holds the refusal.
  } else if (!failures.empty()) {
    std::string text =
        fmt::format("invalid arguments for tool '{}':\n{}", name, FormatValidationErrors(failures));
    ErrorObject invalid{.code = "INVALID_INPUT",
                        .message = fmt::format("invalid arguments for tool '{}'", name),
                        .category = "validation",
                        .severity = "low",
                        .status_code = 400};
    r = ToolErrorResult(invalid, std::move(text));
    Json list = Json::array();
    for (const auto& f : failures) list.push_back({{"path", f.path}, {"message", f.message}});
    r.meta["trove/error"]["errors"] = std::move(list);
  } else {
    CallContext ctx(*this, request);
    try {
      Result<ToolResult> out = tool->handler(*args, ctx);
      if (out.ok()) {
        r = std::move(out).value();
      } else {
        r = ToolErrorFromStatus(out.status(), server_.logger(), "tool " + name);
      }
    } catch (const std::exception& e) {
      r = ToolErrorResult(
          InternalError(server_.logger(), "tool " + name, fmt::format("exception: {}", e.what())));
    } catch (...) {
      r = ToolErrorResult(InternalError(server_.logger(), "tool " + name, "unknown exception"));
    }
  }
  const std::string error_code = ErrorCodeOf(r);
  if (!request.consent_refused.empty() && error_code == "PERMISSION_DENIED") {
    // CallContext::RequireConsent refused and the handler passed the refusal on.
    denied = true;
    r.meta["trove/error"]["details"] = {{"consentRequired", request.consent_refused}};
  }
  // The status an HTTP answer carries (docs/mcp.md §2.6): 403 for scopes, 429 for the rate
  // limiter and open circuit breakers (BreakerRefusal), whoever produced it.
  if (scope_denied) {
    std::lock_guard<std::mutex> lock(request.mu);  // a deadline's Finish may read it
    request.status_hint = StatusHint{.http_status = 403, .scopes = tool->spec.scopes};
  } else if (error_code == "RATE_LIMIT_EXCEEDED") {
    std::int64_t delay_ms = kRetryDelayMs;
    const Json& e = r.meta["trove/error"];
    if (auto d = e.find("retryDelayMs"); d != e.end() && d->is_number_integer()) {
      delay_ms = d->get<std::int64_t>();
    }
    std::lock_guard<std::mutex> lock(request.mu);
    request.status_hint =
        StatusHint{.http_status = 429,
                   .retry_after_seconds = std::max<std::int64_t>(1, (delay_ms + 999) / 1000)};
  }

  if (!r.is_error && !tool->output_schema.is_null()) {
    if (!r.structured || !r.structured->is_object()) {
      server_.logger().Logf(base::LogLevel::kError,
                            "tool {} declares outputSchema but returned no structured object",
                            name);
      TROVE_CHECK(!server_.options().validate_output);
    } else if (server_.options().validate_output) {
      auto out_errors =
          ValidateAgainstSchema(tool->output_schema, *r.structured, "structuredContent");
      if (!out_errors.empty()) {
        server_.logger().Logf(base::LogLevel::kError,
                              "tool {} output does not match outputSchema: {}", name,
                              FormatValidationErrors(out_errors));
        TROVE_CHECK(out_errors.empty());
      }
    }
  }

  if (options.audit_log != nullptr && !audit_broken) {
    policy::AuditEvent event;
    event.type = policy::AuditType::kToolCall;
    event.status = !r.is_error ? policy::AuditStatus::kSuccess
                   : denied    ? policy::AuditStatus::kDenied
                               : policy::AuditStatus::kFailure;
    event.session_id = id_;
    event.principal = principal_.name;
    event.token_id = principal_.token_id;
    event.request_id = RequestIdText(request.id);
    event.operation = name;
    event.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
    event.error_code = error_code;
    event.arguments = policy::DigestArguments(Dump(*args));
    options.audit_log->Record(std::move(event));
  }

  // {"content":[...],"structuredContent":{...},"isError":true,"_meta":{...}}
  std::string out = R"({"content":[)";
  std::string structured;
  if (r.structured && !r.is_error) structured = Dump(*r.structured);
  bool first = true;
  if (r.mirror_structured && r.structured) {
    out += R"({"type":"text","text":)";
    AppendJsonString(out, r.is_error ? Dump(*r.structured) : structured);
    out += '}';
    first = false;
  }
  for (const Json& item : r.content) {
    if (!first) out += ',';
    out += Dump(item);
    first = false;
  }
  out += ']';
  if (!structured.empty() && AtLeast("2025-06-18")) {
    out += R"(,"structuredContent":)";
    out += structured;
  }
  if (r.is_error) out += R"(,"isError":true)";
  if (!r.meta.is_null()) {
    out += R"(,"_meta":)";
    out += Dump(r.meta);
  }
  out += '}';
  return out;
}

namespace {

constexpr std::string_view kCursorGeneration = "1";

std::string EncodeCursor(std::size_t offset) {
  return base::Base64UrlEncode(fmt::format("{}:{}", kCursorGeneration, offset));
}

std::optional<std::size_t> DecodeCursor(const std::string& cursor) {
  Result<std::string> raw = base::Base64UrlDecode(cursor);
  if (!raw.ok()) return std::nullopt;
  const std::string& s = *raw;
  auto colon = s.find(':');
  if (colon == std::string::npos || s.substr(0, colon) != kCursorGeneration) return std::nullopt;
  std::string digits = s.substr(colon + 1);
  if (digits.empty() || digits.size() > 12 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(std::stoull(digits));
}

void PutIfNotEmpty(Json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

}  // namespace

Json Session::ListPage(std::string_view method, const Json& params,
                       std::optional<ProtocolError>& error) {
  std::size_t offset = 0;
  if (params.is_object()) {
    auto c = params.find("cursor");
    if (c != params.end() && !c->is_null()) {
      std::optional<std::size_t> decoded;
      if (c->is_string()) decoded = DecodeCursor(c->get<std::string>());
      if (!decoded) {
        error =
            ProtocolError{error_code::kInvalidParams, "invalid params: invalid cursor", nullptr};
        return Json();
      }
      offset = *decoded;
    }
  }
  const bool modern = AtLeast("2025-06-18");
  Json items = Json::array();
  std::size_t total = 0;
  const std::size_t page = std::max<std::size_t>(1, server_.options().page_size);
  // Appends the page's items of `all`, each rendered by `render`.
  auto add_page = [&](const auto& all, auto render) {
    total = all.size();
    for (std::size_t i = offset; i < all.size() && i < offset + page; ++i) {
      items.push_back(render(all[i]));
    }
  };
  // The fields resources and templates share after their identifying ones.
  auto describe = [&](Json j, const auto& spec) {
    if (modern) PutIfNotEmpty(j, "title", spec.title);
    PutIfNotEmpty(j, "description", spec.description);
    PutIfNotEmpty(j, "mimeType", spec.mime_type);
    return j;
  };
  const char* key = "tools";
  if (method == "tools/list") {
    std::vector<const Tool*> visible;
    for (const auto& tool : server_.tools().all()) {
      if (PrincipalAllows(principal_, tool->spec.scopes)) visible.push_back(tool.get());
    }
    add_page(visible, [&](const Tool* tool) {
      const Tool& t = *tool;
      Json j = {{"name", t.spec.name}};
      if (modern) PutIfNotEmpty(j, "title", t.spec.title);
      j["description"] = t.spec.description;
      j["inputSchema"] = t.input_schema;
      if (modern && !t.output_schema.is_null()) j["outputSchema"] = t.output_schema;
      const ToolAnnotations& a = t.spec.annotations;
      Json ann = Json::object();
      PutIfNotEmpty(ann, "title", a.title);
      ann["readOnlyHint"] = a.read_only;
      ann["destructiveHint"] = !a.read_only && a.destructive;
      ann["idempotentHint"] = a.idempotent;
      ann["openWorldHint"] = a.open_world;
      j["annotations"] = std::move(ann);
      return j;
    });
  } else if (method == "resources/list") {
    key = "resources";
    const std::vector<ResourceSpec> listed = server_.resources().Listed();
    std::vector<const ResourceSpec*> visible;
    for (const auto& r : server_.resources().resources()) {
      if (PrincipalAllows(principal_, r.spec.scopes)) visible.push_back(&r.spec);
    }
    for (const ResourceSpec& r : listed) {
      if (PrincipalAllows(principal_, r.scopes)) visible.push_back(&r);
    }
    add_page(visible, [&](const ResourceSpec* r) {
      return describe(Json{{"uri", r->uri}, {"name", r->name}}, *r);
    });
  } else if (method == "resources/templates/list") {
    key = "resourceTemplates";
    std::vector<const ResourceTemplate*> visible;
    for (const auto& t : server_.resources().templates()) {
      if (PrincipalAllows(principal_, t.spec.scopes)) visible.push_back(&t);
    }
    add_page(visible, [&](const ResourceTemplate* t) {
      return describe(Json{{"uriTemplate", t->spec.uri_template}, {"name", t->spec.name}}, t->spec);
    });
  } else {
    key = "prompts";
    add_page(server_.prompts().all(), [&](const Prompt& p) {
      const PromptSpec& s = p.spec;
      Json j = {{"name", s.name}};
      if (modern) PutIfNotEmpty(j, "title", s.title);
      j["description"] = s.description;
      if (!s.arguments.empty()) {
        Json args = Json::array();
        for (const auto& a : s.arguments) {
          Json aj = {{"name", a.name}};
          PutIfNotEmpty(aj, "description", a.description);
          aj["required"] = a.required;
          args.push_back(std::move(aj));
        }
        j["arguments"] = std::move(args);
      }
      return j;
    });
  }
  if (offset > total) {
    error = ProtocolError{error_code::kInvalidParams, "invalid params: invalid cursor", nullptr};
    return Json();
  }
  Json result = {{key, std::move(items)}};
  if (offset + page < total) result["nextCursor"] = EncodeCursor(offset + page);
  return result;
}

namespace {

// Maps a handler's Status for a non-tool method to a protocol error; internal details stay in
// the log.
ProtocolError ProtocolErrorFromStatus(const Status& status, const base::Logger& logger,
                                      std::string_view method) {
  ErrorObject e = ErrorObjectFromStatus(status, logger, method);
  switch (status.code()) {
    case base::StatusCode::kInvalidArgument:
    case base::StatusCode::kMalformed:
    case base::StatusCode::kUnsupported:
      return {error_code::kInvalidParams, "invalid params: " + e.message, e.ToJson()};
    case base::StatusCode::kPermissionDenied:
      return {error_code::kPermissionDenied, e.message, e.ToJson()};
    case base::StatusCode::kDeadlineExceeded:
      return {error_code::kRequestTimeout, e.message, e.ToJson()};
    default:
      if (e.error_id.empty()) {
        // A caller-facing code with no JSON-RPC counterpart here (not found, already exists,
        // a limit): kept out of the client's view as before, and logged.
        e = InternalError(logger, method, status.ToString());
      }
      return {error_code::kInternalError, e.message, e.ToJson()};
  }
}

// -32002 with data.uri (the TS SDK answers -32602, the 2026-07-28 code; docs/mcp.md §4.4).
ProtocolError ResourceNotFound(const std::string& uri) {
  return {error_code::kResourceNotFound, "resource not found: " + uri, Json{{"uri", uri}}};
}

const std::string* StringParam(const Json& params, const char* key) {
  if (!params.is_object()) return nullptr;
  auto it = params.find(key);
  if (it == params.end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

}  // namespace

Json Session::ReadResource(InFlight& request, std::optional<ProtocolError>& error) {
  const std::string* uri = StringParam(request.params, "uri");
  if (uri == nullptr) {
    error = ProtocolError{error_code::kInvalidParams, "invalid params: params.uri must be a string",
                          nullptr};
    return Json();
  }
  const ResourceReader* reader = nullptr;
  const std::vector<std::string>* scopes = nullptr;
  ResourceVars vars;
  if (!server_.resources().Resolve(*uri, &reader, vars, nullptr, &scopes)) {
    error = ResourceNotFound(*uri);
    return Json();
  }
  const ServerOptions& options = server_.options();
  if (options.audit_log != nullptr) {
    if (std::optional<ErrorObject> refusal = server_.AuditRefusal()) {
      error = ProtocolError{error_code::kInternalError, refusal->message, refusal->ToJson()};
      return Json();
    }
  }
  const auto started = std::chrono::steady_clock::now();
  Result<std::vector<ResourceContents>> contents = std::vector<ResourceContents>();
  const bool allowed = PrincipalAllows(principal_, *scopes);
  // A read costs one token of the principal's bucket, as a tool call does (docs/mcp.md §5.6).
  std::optional<ErrorObject> limited;
  if (allowed && options.rate_limiter != nullptr) {
    policy::Admission admission = options.rate_limiter->Acquire(principal_.name);
    if (!admission.allowed) {
      limited = ErrorObject{.code = "RATE_LIMIT_EXCEEDED",
                            .message = "rate limit exceeded: retry later",
                            .category = "rate_limit",
                            .severity = "low",
                            .status_code = 429,
                            .retryable = true,
                            .retry_delay_ms = std::max<std::int64_t>(1, admission.retry_after_ms)};
      contents = Status::ResourceExhausted(limited->message);
      std::lock_guard<std::mutex> lock(request.mu);
      request.status_hint = StatusHint{
          .http_status = 429, .retry_after_seconds = (limited->retry_delay_ms + 999) / 1000};
    }
  }
  if (allowed && !limited) {
    CallContext ctx(*this, request);
    contents = (*reader)(*uri, vars, ctx);
  } else if (!allowed) {
    std::string needed;
    for (const auto& sc : *scopes) needed += (needed.empty() ? "" : ",") + sc;
    contents = Status::PermissionDenied(fmt::format("resource needs scopes {}", needed));
    std::lock_guard<std::mutex> lock(request.mu);
    request.status_hint = StatusHint{.http_status = 403, .scopes = *scopes};
  }
  if (options.audit_log != nullptr) {
    policy::AuditEvent event;
    event.type = policy::AuditType::kResourceRead;
    event.status = contents.ok()         ? policy::AuditStatus::kSuccess
                   : allowed && !limited ? policy::AuditStatus::kFailure
                                         : policy::AuditStatus::kDenied;
    event.session_id = id_;
    event.principal = principal_.name;
    event.token_id = principal_.token_id;
    event.request_id = RequestIdText(request.id);
    event.operation = *uri;
    event.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started)
                            .count();
    if (!contents.ok()) {
      // The classified code (without logging a second error reference).
      switch (contents.status().code()) {
        case base::StatusCode::kNotFound:
          event.error_code = "RESOURCE_NOT_FOUND";
          break;
        case base::StatusCode::kPermissionDenied:
          event.error_code = "PERMISSION_DENIED";
          break;
        case base::StatusCode::kInvalidArgument:
          event.error_code = "INVALID_INPUT";
          break;
        case base::StatusCode::kResourceExhausted:
          event.error_code = limited ? "RATE_LIMIT_EXCEEDED" : "INVALID_INPUT";
          break;
        default:
          event.error_code = "INTERNAL_ERROR";
          break;
      }
    }
    options.audit_log->Record(std::move(event));
  }
  if (limited) {
    error = ProtocolError{error_code::kRateLimitExceeded, limited->message, limited->ToJson()};
    return Json();
  }
  if (!contents.ok()) {
    if (contents.status().code() == base::StatusCode::kNotFound) {
      error = ResourceNotFound(*uri);
    } else {
      error = ProtocolErrorFromStatus(contents.status(), server_.logger(), request.method);
    }
    return Json();
  }
  Json list = Json::array();
  for (auto& c : *contents) {
    Json j = {{"uri", c.uri}};
    if (!c.mime_type.empty()) j["mimeType"] = c.mime_type;
    if (c.text) j["text"] = *c.text;
    if (c.blob) j["blob"] = *c.blob;
    list.push_back(std::move(j));
  }
  return {{"contents", std::move(list)}};
}

Json Session::Subscribe(InFlight& request, bool subscribe, std::optional<ProtocolError>& error) {
  const std::string* uri = StringParam(request.params, "uri");
  if (uri == nullptr) {
    error = ProtocolError{error_code::kInvalidParams, "invalid params: params.uri must be a string",
                          nullptr};
    return Json();
  }
  if (!subscribe) {
    std::lock_guard<std::mutex> lock(mu_);
    subscriptions_.erase(*uri);
    return Json::object();
  }
  const ResourceReader* reader = nullptr;
  ResourceVars vars;
  if (!server_.resources().Resolve(*uri, &reader, vars, nullptr)) {
    error = ResourceNotFound(*uri);
    return Json();
  }
  std::lock_guard<std::mutex> lock(mu_);
  subscriptions_.insert(*uri);
  return Json::object();
}

Json Session::GetPrompt(InFlight& request, std::optional<ProtocolError>& error) {
  const std::string* name = StringParam(request.params, "name");
  if (name == nullptr) {
    error = ProtocolError{error_code::kInvalidParams,
                          "invalid params: params.name must be a string", nullptr};
    return Json();
  }
  const Prompt* prompt = server_.prompts().Find(*name);
  if (prompt == nullptr) {
    error = ProtocolError{error_code::kInvalidParams, "Unknown prompt: " + *name, nullptr};
    return Json();
  }
  std::map<std::string, std::string> args;
  auto a = request.params.find("arguments");
  if (a != request.params.end() && !a->is_null()) {
    if (!a->is_object()) {
      error = ProtocolError{error_code::kInvalidParams,
                            "invalid params: params.arguments must be an object", nullptr};
      return Json();
    }
    for (auto it = a->begin(); it != a->end(); ++it) {
      if (!it.value().is_string()) {
        error = ProtocolError{
            error_code::kInvalidParams,
            fmt::format("invalid params: params.arguments.{} must be a string", it.key()), nullptr};
        return Json();
      }
      args[it.key()] = it.value().get<std::string>();
    }
  }
  for (const auto& arg : prompt->spec.arguments) {
    if (arg.required && !args.count(arg.name)) {
      error = ProtocolError{
          error_code::kInvalidParams,
          fmt::format("invalid params: missing required argument '{}' for prompt '{}'", arg.name,
                      *name),
          nullptr};
      return Json();
    }
  }
  CallContext ctx(*this, request);
  Result<Json> result = prompt->handler(args, ctx);
  if (!result.ok()) {
    error = ProtocolErrorFromStatus(result.status(), server_.logger(), request.method);
    return Json();
  }
  return std::move(result).value();
}

Json Session::Complete(InFlight& request, std::optional<ProtocolError>& error) {
  const Json& params = request.params;
  auto invalid = [&](std::string message) {
    error =
        ProtocolError{error_code::kInvalidParams, "invalid params: " + std::move(message), nullptr};
    return Json();
  };
  if (!params.is_object()) return invalid("params must be an object");
  auto ref = params.find("ref");
  auto argument = params.find("argument");
  if (ref == params.end() || !ref->is_object()) return invalid("params.ref must be an object");
  if (argument == params.end() || !argument->is_object()) {
    return invalid("params.argument must be an object");
  }
  const std::string* arg_name = StringParam(*argument, "name");
  const std::string* arg_value = StringParam(*argument, "value");
  if (arg_name == nullptr || arg_value == nullptr) {
    return invalid("params.argument needs string name and value");
  }
  Json context_args = Json::object();
  auto ctx_it = params.find("context");
  if (ctx_it != params.end() && ctx_it->is_object()) {
    auto ca = ctx_it->find("arguments");
    if (ca != ctx_it->end() && ca->is_object()) context_args = *ca;
  }
  const std::string* type = StringParam(*ref, "type");
  const Completer* completer = nullptr;
  if (type && *type == "ref/prompt") {
    const std::string* name = StringParam(*ref, "name");
    const Prompt* prompt = name ? server_.prompts().Find(*name) : nullptr;
    if (prompt == nullptr) return invalid("unknown prompt in params.ref");
    completer = &prompt->completer;
  } else if (type && *type == "ref/resource") {
    const std::string* uri = StringParam(*ref, "uri");
    const ResourceTemplate* t = uri ? server_.resources().FindTemplate(*uri) : nullptr;
    if (t == nullptr) return invalid("unknown resource template in params.ref");
    completer = &t->completer;
  } else {
    return invalid("params.ref.type must be \"ref/prompt\" or \"ref/resource\"");
  }
  std::vector<std::string> values;
  if (*completer) values = (*completer)(*arg_name, *arg_value, context_args);
  const std::size_t total = values.size();
  if (values.size() > 100) values.resize(100);
  Json completion = {{"values", values}, {"total", total}, {"hasMore", total > values.size()}};
  return {{"completion", std::move(completion)}};
}

}  // namespace internal

// ---------------------------------------------------------------------------------------------
// Server

namespace {

ServerOptions WithDefaultBreakers(ServerOptions options) {
  if (options.breakers == nullptr) {
    static base::PosixEnv* const clock = new base::PosixEnv();  // never destroyed
    options.breakers =
        std::make_shared<policy::CircuitBreakers>(policy::CircuitBreakerOptions{}, *clock);
  }
  return options;
}

}  // namespace

Server::Server(ServerInfo info, ServerOptions options, base::ThreadPool& pool,
               const base::Logger& logger)
    : info_(std::move(info)),
      options_(WithDefaultBreakers(std::move(options))),
      pool_(pool),
      logger_(logger) {
  timer_thread_ = std::thread([this] { TimerLoop(); });
}

Server::~Server() {
  {
    std::lock_guard<std::mutex> lock(timer_mu_);
    timer_stop_ = true;
  }
  timer_cv_.notify_all();
  timer_thread_.join();
}

std::shared_ptr<internal::Session> Server::NewSession(std::string id) {
  auto session = std::make_shared<internal::Session>(*this, std::move(id));
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(
      std::remove_if(sessions_.begin(), sessions_.end(), [](const auto& w) { return w.expired(); }),
      sessions_.end());
  sessions_.push_back(session);
  return session;
}

std::vector<std::shared_ptr<internal::Session>> Server::LiveSessions() {
  std::vector<std::shared_ptr<internal::Session>> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& w : sessions_) {
    if (auto s = w.lock()) out.push_back(std::move(s));
  }
  return out;
}

bool Server::ConsentConfigured(std::string_view operation) const {
  for (const auto& name : options_.consent) {
    if (name == "*" || name == operation) return true;
  }
  return false;
}

std::optional<ErrorObject> Server::AuditRefusal() const {
  Status health = options_.audit_log->health();
  if (health.ok()) return std::nullopt;
  std::string ref;
  {
    std::lock_guard<std::mutex> lock(audit_mu_);
    if (audit_failure_ref_.empty()) {
      audit_failure_ref_ = NewErrorRef();
      logger_.Logf(base::LogLevel::kError,
                   "audit log failed (ref {}): {}; every tools/call and resources/read is refused "
                   "until the server is restarted with a writable audit log",
                   audit_failure_ref_, health.ToString());
    }
    ref = audit_failure_ref_;
  }
  return ErrorObject{.code = "INTERNAL_ERROR",
                     .message = fmt::format("the audit log cannot be written (ref {})", ref),
                     .category = "internal",
                     .severity = "high",
                     .status_code = 500,
                     .error_id = std::move(ref)};
}

void Server::NotifyResourceUpdated(const std::string& uri) {
  std::string message = SerializeNotification("notifications/resources/updated", {{"uri", uri}});
  for (auto& session : LiveSessions()) {
    if (session->subscribed(uri)) session->SendToSession(message);
  }
}

void Server::NotifyResourcesUpdatedUnder(std::string_view prefix) {
  for (auto& session : LiveSessions()) {
    for (const std::string& uri : session->SubscriptionsUnder(prefix)) {
      session->SendToSession(
          SerializeNotification("notifications/resources/updated", {{"uri", uri}}));
    }
  }
}

void Server::TimerLoop() {
  std::unique_lock<std::mutex> lock(timer_mu_);
  while (!timer_stop_) {
    timer_cv_.wait_for(lock, std::chrono::milliseconds(250));
    if (timer_stop_) break;
    lock.unlock();
    auto now = std::chrono::steady_clock::now();
    for (auto& session : LiveSessions()) session->ExpireDeadlines(now);
    lock.lock();
  }
}

}  // namespace trove::mcp

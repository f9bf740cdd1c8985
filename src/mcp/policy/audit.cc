#include "mcp/policy/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "base/hash.h"

namespace trove::mcp::policy {
namespace {

using Json = nlohmann::ordered_json;

// Longer lines are not audit records this writer makes; readers stop or skip there.
constexpr std::size_t kMaxLineBytes = 1 << 20;
constexpr std::size_t kTailBytes = 2 * kMaxLineBytes;

std::string Cut(std::string_view text, std::size_t limit = kMaxAuditFieldBytes) {
  return std::string(text.substr(0, limit));
}

std::string Errno(std::string_view what, const std::string& path) {
  return fmt::format("{}: {}: {}", path, what, std::strerror(errno));
}

Json ParseLine(std::string_view line) {
  return Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
}

std::string SerializeEvent(const AuditEvent& event, std::uint64_t id, std::int64_t now_micros,
                           const std::string& prev) {
  Json j;
  j["id"] = id;
  j["timestamp"] =
      FormatRfc3339Millis(event.timestamp_micros != 0 ? event.timestamp_micros : now_micros);
  j["type"] = std::string(AuditTypeName(event.type));
  if (!event.session_id.empty()) j["sessionId"] = Cut(event.session_id);
  if (!event.principal.empty()) j["principal"] = Cut(event.principal);
  if (!event.token_id.empty()) j["tokenId"] = Cut(event.token_id, 12);
  if (!event.request_id.empty()) j["requestId"] = Cut(event.request_id);
  if (!event.operation.empty()) j["operation"] = Cut(event.operation);
  j["status"] = std::string(AuditStatusName(event.status));
  if (event.duration_ms) j["durationMs"] = *event.duration_ms;
  if (!event.error_code.empty()) j["errorCode"] = Cut(event.error_code);
  if (event.arguments) {
    j["arguments"] = {{"size", event.arguments->size},
                      {"sha256", Cut(event.arguments->sha256, 64)}};
  }
  if (!event.details.empty()) {
    Json details = Json::object();
    for (std::size_t i = 0; i < event.details.size() && i < kMaxAuditDetails; ++i) {
      details[Cut(event.details[i].first, 64)] = Cut(event.details[i].second);
    }
    j["details"] = std::move(details);
  }
  j["prev"] = prev;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Reads a file line by line with bounded memory.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  ~LineReader() { ::close(fd_); }
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Sets `line` to the next line (without its newline); `terminated` says whether a newline
  // ended it and `too_long` whether it was cut at kMaxLineBytes. Returns false at the end, or
  // with `error` set when a read failed.
  bool Next(std::string& line, bool& terminated, bool& too_long, Status& error) {
    line.clear();
    terminated = false;
    too_long = false;
    for (;;) {
      if (pos_ == len_) {
        const ssize_t n = ::read(fd_, buf_, sizeof(buf_));
        if (n < 0) {
          if (errno == EINTR) continue;
          error = Status::Io(fmt::format("read: {}", std::strerror(errno)));
          return false;
        }
        if (n == 0) return !line.empty() || too_long;
        pos_ = 0;
        len_ = static_cast<std::size_t>(n);
      }
      const char* start = buf_ + pos_;
      const void* nl = std::memchr(start, '\n', len_ - pos_);
      const std::size_t take =
          nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - start) : len_ - pos_;
      if (line.size() + take > kMaxLineBytes) {
        too_long = true;
        line.append(start, kMaxLineBytes - std::min(line.size(), kMaxLineBytes));
      } else if (!too_long) {
        line.append(start, take);
      }
      pos_ += take;
      if (nl) {
        ++pos_;
        terminated = true;
        return true;
      }
    }
  }

 private:
  int fd_;
  char buf_[1 << 16];
  std::size_t pos_ = 0;
  std::size_t len_ = 0;
};

Result<std::unique_ptr<LineReader>> OpenForReading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::Io(Errno("open", path));
  return std::make_unique<LineReader>(fd);
}

bool IsHex64(const std::string& text) {
  if (text.size() != 64) return false;
  for (const char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// Checks "YYYY-MM-DDTHH:MM:SS[.fff]Z" loosely: shape and digits.
bool LooksRfc3339(const std::string& t) {
  if (t.size() < 20 || t.back() != 'Z') return false;
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd";
  for (std::size_t i = 0; i < kShape.size(); ++i) {
    if (kShape[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != kShape[i]) return false;
  }
  return true;
}

bool KnownType(const std::string& name) {
  for (AuditType t : {AuditType::kToolCall, AuditType::kResourceRead, AuditType::kAuthorization,
                      AuditType::kSession, AuditType::kError, AuditType::kSystem}) {
    if (name == AuditTypeName(t)) return true;
  }
  return false;
}

bool KnownStatus(const std::string& name) {
  return name == "success" || name == "failure" || name == "denied";
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Io(fmt::format("write: {}", std::strerror(errno)));
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::Ok();
}

std::optional<std::uint64_t> IdOf(std::string_view line) {
  const Json j = ParseLine(line);
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find("id");
  if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<std::uint64_t>();
}

}  // namespace

std::string_view AuditTypeName(AuditType type) {
  switch (type) {
    case AuditType::kToolCall:
      return "tool_call";
    case AuditType::kResourceRead:
      return "resource_read";
    case AuditType::kAuthorization:
      return "authorization";
    case AuditType::kSession:
      return "session";
    case AuditType::kError:
      return "error";
    case AuditType::kSystem:
      return "system";
  }
  return "system";
}

std::string_view AuditStatusName(AuditStatus status) {
  switch (status) {
    case AuditStatus::kSuccess:
      return "success";
    case AuditStatus::kFailure:
      return "failure";
    case AuditStatus::kDenied:
      return "denied";
  }
  return "failure";
}

ArgumentDigest DigestArguments(std::string_view serialized_arguments) {
  return ArgumentDigest{.size = serialized_arguments.size(),
                        .sha256 = base::Sha256Hex(serialized_arguments)};
}

std::string FormatRfc3339Millis(std::int64_t micros) {
  std::int64_t seconds = micros / 1'000'000;
  std::int64_t rem = micros % 1'000'000;
  if (rem < 0) {
    rem += 1'000'000;
    --seconds;
  }
  const time_t t = static_cast<time_t>(seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rem / 1000);
}

// ---- AuditLog ----

Result<std::unique_ptr<AuditLog>> AuditLog::Open(const std::string& path, base::Env& clock,
                                                 AuditLogOptions options) {
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Io(Errno("open", path));
  auto fail = [&](Status status) {
    ::close(fd);
    return status;
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail(Status::Io(Errno("stat", path)));
  std::uint64_t size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  std::string prev(kAuditGenesis);
  std::uint64_t next_id = 1;
  bool recovered_partial = false;
  if (size > 0) {
    const std::uint64_t from = size > kTailBytes ? size - kTailBytes : 0;
    std::string tail(size - from, '\0');
    std::size_t got = 0;
    while (got < tail.size()) {
      const ssize_t n =
          ::pread(fd, tail.data() + got, tail.size() - got, static_cast<off_t>(from + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return fail(Status::Io(Errno("read", path)));
      got += static_cast<std::size_t>(n);
    }
    std::string_view view = tail;
    if (view.back() != '\n') {
      // A crash cut the last record short: end its line so that new records stay whole.
      if (Status s = WriteAll(fd, "\n"); !s.ok()) return fail(s.WithContext(path));
      ++size;
      recovered_partial = true;
    } else {
      view.remove_suffix(1);
    }
    const std::size_t nl = view.rfind('\n');
    if (nl == std::string_view::npos && from != 0) {
      return fail(Status::Malformed(
          fmt::format("{}: last record longer than {} bytes", path, kMaxLineBytes)));
    }
    const std::string_view last = nl == std::string_view::npos ? view : view.substr(nl + 1);
    prev = base::Sha256Hex(last);
    if (std::optional<std::uint64_t> id = IdOf(last)) {
      next_id = *id + 1;
    } else if (!recovered_partial) {
      return fail(Status::Malformed(
          fmt::format("{}: the last record has no id; run `audit verify`", path)));
    } else if (nl == std::string_view::npos) {
      next_id = 2;  // the only line was a cut first record
    } else {
      // The cut record was presumably the one after the line before it.
      const std::string_view before = view.substr(0, nl);
      const std::size_t nl2 = before.rfind('\n');
      const std::string_view line2 =
          nl2 == std::string_view::npos ? before : before.substr(nl2 + 1);
      const std::optional<std::uint64_t> id2 = IdOf(line2);
      if (!id2) {
        return fail(Status::Malformed(
            fmt::format("{}: the last records have no id; run `audit verify`", path)));
      }
      next_id = *id2 + 2;
    }
  }
  std::unique_ptr<AuditLog> log(
      new AuditLog(path, fd, clock, std::move(options), next_id, std::move(prev), size));
  if (recovered_partial) {
    log->Record(
        AuditEvent{.type = AuditType::kSystem,
                   .status = AuditStatus::kFailure,
                   .operation = "audit_log_open",
                   .details = {{"reason", "the last record was cut short; ended its line"}}});
  }
  return log;
}

AuditLog::AuditLog(std::string path, int fd, base::Env& clock, AuditLogOptions options,
                   std::uint64_t next_id, std::string prev, std::uint64_t size)
    : path_(std::move(path)),
      fd_(fd),
      clock_(clock),
      options_(std::move(options)),
      head_(prev),
      next_id_(next_id),
      prev_(std::move(prev)),
      size_(size) {
  writer_ = std::thread([this] { WriterLoop(); });
}

AuditLog::~AuditLog() { (void)Close(); }

void AuditLog::Record(AuditEvent event) {
  std::unique_lock lock(mu_);
  if (stop_) {
    if (error_.ok()) error_ = Status::Internal(fmt::format("{}: record after close", path_));
    return;
  }
  if (event.timestamp_micros == 0) event.timestamp_micros = clock_.NowMicros();
  const std::size_t max_queue = std::max<std::size_t>(1, options_.max_queue);
  done_cv_.wait(lock, [&] { return queue_.size() < max_queue || stop_; });
  queue_.push_back(std::move(event));
  ++enqueued_;
  work_cv_.notify_one();
}

Status AuditLog::Flush() {
  std::unique_lock lock(mu_);
  const std::uint64_t target = enqueued_;
  done_cv_.wait(lock, [&] { return processed_ >= target || closed_; });
  return error_;
}

Status AuditLog::Close() {
  {
    std::unique_lock lock(mu_);
    if (closed_) return error_;
    stop_ = true;
    work_cv_.notify_one();
  }
  if (writer_.joinable()) writer_.join();
  std::unique_lock lock(mu_);
  if (::close(fd_) != 0 && error_.ok()) error_ = Status::Io(Errno("close", path_));
  closed_ = true;
  done_cv_.notify_all();
  return error_;
}

Status AuditLog::health() const {
  std::lock_guard lock(mu_);
  return error_;
}

std::string AuditLog::head() const {
  std::lock_guard lock(mu_);
  return head_;
}

void AuditLog::SetError(Status status) {
  {
    std::lock_guard lock(mu_);
    if (error_.ok()) error_ = status;
  }
  if (options_.on_error) options_.on_error(status);
}

void AuditLog::WriterLoop() {
  std::deque<AuditEvent> batch;
  for (;;) {
    {
      std::unique_lock lock(mu_);
      work_cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
      if (queue_.empty() && stop_) return;
      batch.swap(queue_);
      done_cv_.notify_all();  // room in the queue again
    }
    std::string data;
    std::string prev = prev_;
    std::uint64_t id = next_id_;
    for (const AuditEvent& event : batch) {
      std::string line = SerializeEvent(event, id++, event.timestamp_micros, prev);
      prev = base::Sha256Hex(line);
      data += line;
      data += '\n';
    }
    Status status = WriteAll(fd_, data);
    if (status.ok() && options_.sync && ::fdatasync(fd_) != 0) {
      status = Status::Io(fmt::format("fdatasync: {}", std::strerror(errno)));
    }
    if (status.ok()) {
      size_ += data.size();
      prev_ = prev;
    } else {
      // Keep the file to whole lines: drop whatever part of the batch reached it. The ids of
      // the lost records stay used, so VerifyAuditLog shows the gap.
      if (::ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
        status = status.WithContext("and truncating the partial write failed too");
      }
      SetError(status.WithContext(fmt::format("{}: {} audit records lost", path_, batch.size())));
    }
    next_id_ = id;
    {
      std::lock_guard lock(mu_);
      processed_ += batch.size();
      head_ = prev_;
      done_cv_.notify_all();
    }
    batch.clear();
  }
}

// ---- Reading ----

Result<AuditVerifyReport> VerifyAuditLog(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, OpenForReading(path));
  AuditVerifyReport report;
  report.head = std::string(kAuditGenesis);
  std::string expected_prev(kAuditGenesis);
  std::optional<std::uint64_t> last_id;
  std::string line;
  bool terminated = false;
  bool too_long = false;
  Status error;
  std::uint64_t line_no = 0;
  auto broken = [&](std::string reason) {
    report.first_break = AuditBreak{.line = line_no, .reason = std::move(reason)};
    return report;
  };
  while (reader->Next(line, terminated, too_long, error)) {
    ++line_no;
    if (too_long) return broken(fmt::format("record longer than {} bytes", kMaxLineBytes));
    if (!terminated) return broken("partial record: no newline at the end of the file");
    const Json j = ParseLine(line);
    if (!j.is_object()) return broken("not a JSON object");
    const auto prev = j.find("prev");
    if (prev == j.end() || !prev->is_string() || !IsHex64(prev->get<std::string>())) {
      return broken("prev is missing or not 64 hex digits");
    }
    if (prev->get<std::string>() != expected_prev) {
      return broken(line_no == 1
                        ? "prev of the first record is not the genesis value (records removed "
                          "from the start?)"
                        : "prev does not match the previous record (a record was edited, removed, "
                          "inserted or reordered)");
    }
    const auto id = j.find("id");
    if (id == j.end() || !id->is_number_unsigned() || id->get<std::uint64_t>() == 0) {
      return broken("id is missing or not a positive integer");
    }
    const std::uint64_t this_id = id->get<std::uint64_t>();
    if (last_id && this_id != *last_id + 1) {
      return broken(fmt::format("missing record: expected id {}, found {}", *last_id + 1, this_id));
    }
    if (!last_id && this_id != 1) {
      return broken(fmt::format("missing record: the first id is {}, not 1", this_id));
    }
    const auto ts = j.find("timestamp");
    if (ts == j.end() || !ts->is_string() || !LooksRfc3339(ts->get<std::string>())) {
      return broken("timestamp is missing or not RFC 3339 UTC");
    }
    const auto type = j.find("type");
    if (type == j.end() || !type->is_string() || !KnownType(type->get<std::string>())) {
      return broken("type is missing or unknown");
    }
    const auto status = j.find("status");
    if (status == j.end() || !status->is_string() || !KnownStatus(status->get<std::string>())) {
      return broken("status is missing or unknown");
    }
    last_id = this_id;
    expected_prev = base::Sha256Hex(line);
    report.head = expected_prev;
    ++report.records;
  }
  if (!error.ok()) return error.WithContext(path);
  return report;
}

Result<AuditStatsReport> AuditStats(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, OpenForReading(path));
  AuditStatsReport report;
  std::set<std::string> sessions;
  std::uint64_t failures = 0;
  double duration_sum = 0;
  std::uint64_t duration_count = 0;
  std::string line;
  bool terminated = false;
  bool too_long = false;
  Status error;
  while (reader->Next(line, terminated, too_long, error)) {
    const Json j = too_long ? Json() : ParseLine(line);
    if (!j.is_object()) {
      ++report.unreadable_lines;
      continue;
    }
    ++report.total_events;
    const auto str = [&](const char* key) -> std::string {
      const auto it = j.find(key);
      return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const std::string type = str("type");
    const std::string status = str("status");
    ++report.by_type[type.empty() ? "unknown" : type];
    ++report.by_status[status.empty() ? "unknown" : status];
    if (status == "failure") ++failures;
    if (const std::string session = str("sessionId"); !session.empty()) sessions.insert(session);
    if (type == "tool_call") {
      const auto d = j.find("durationMs");
      if (d != j.end() && d->is_number()) {
        duration_sum += d->get<double>();
        ++duration_count;
      }
    }
  }
  if (!error.ok()) return error.WithContext(path);
  report.unique_sessions = sessions.size();
  if (duration_count > 0) report.avg_tool_duration_ms = duration_sum / duration_count;
  if (report.total_events > 0) {
    report.error_rate =
        std::round(1000.0 * static_cast<double>(failures) / report.total_events) / 10.0;
  }
  return report;
}

Result<std::vector<std::string>> QueryAuditLog(const std::string& path, const AuditQuery& query) {
  ASSIGN_OR_RETURN(std::unique_ptr<LineReader> reader, OpenForReading(path));
  const std::size_t limit = std::min(query.limit, kMaxAuditQueryLimit);
  // Timestamps are written in one fixed-width form, so they compare as strings.
  const std::string since =
      query.since_micros ? FormatRfc3339Millis(*query.since_micros) : std::string();
  const std::string until =
      query.until_micros ? FormatRfc3339Millis(*query.until_micros) : std::string();
  std::deque<std::string> newest;  // the last `limit` matches, oldest first
  std::string line;
  bool terminated = false;
  bool too_long = false;
  Status error;
  while (reader->Next(line, terminated, too_long, error)) {
    if (too_long || limit == 0) continue;
    const Json j = ParseLine(line);
    if (!j.is_object()) continue;
    const auto str = [&](const char* key) -> std::string {
      const auto it = j.find(key);
      return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    if (query.type && str("type") != AuditTypeName(*query.type)) continue;
    if (query.status && str("status") != AuditStatusName(*query.status)) continue;
    if (!query.session_id.empty() && str("sessionId") != query.session_id) continue;
    if (!query.principal.empty() && str("principal") != query.principal) continue;
    if (!query.operation.empty() && str("operation") != query.operation) continue;
    const std::string ts = str("timestamp");
    if (!since.empty() && ts < since) continue;
    if (!until.empty() && ts >= until) continue;
    newest.push_back(line);
    if (newest.size() > limit) newest.pop_front();
  }
  if (!error.ok()) return error.WithContext(path);
  return std::vector<std::string>(newest.rbegin(), newest.rend());
}

std::string AuditStatsJson(const AuditStatsReport& report) {
  Json j;
  j["totalEvents"] = report.total_events;
  j["byType"] = Json::object();
  for (const auto& [k, v] : report.by_type) j["byType"][k] = v;
  j["byStatus"] = Json::object();
  for (const auto& [k, v] : report.by_status) j["byStatus"][k] = v;
  j["uniqueSessions"] = report.unique_sessions;
  j["avgToolDurationMs"] = report.avg_tool_duration_ms;
  j["errorRate"] = report.error_rate;
  j["unreadableLines"] = report.unreadable_lines;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace trove::mcp::policy

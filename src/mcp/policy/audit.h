// The audit log of the policy layer (docs/mcp.md §5.6, docs/librarian.md §8.4): one JSON object
// per line (JSON Lines), appended by a background writer thread, each line chained to the one
// before by `prev`, the SHA-256 of the previous line's bytes (without its newline). The first
// line's `prev` is kAuditGenesis. An edited, removed, inserted or reordered record breaks the
// chain at the next line; VerifyAuditLog finds the first break. (Cutting records off the end
// leaves a valid chain: compare head() with a copy kept elsewhere to catch that.)
//
// A record: {"id":7,"timestamp":"2026-03-02T08:15:42.250Z","type":"tool_call",
//   "sessionId":"...","principal":"alice","tokenId":"9f86d081884c","requestId":"12",
//   "operation":"query","status":"success","durationMs":4,"errorCode":"...",
//   "arguments":{"size":57,"sha256":"..."},"details":{"k":"v"},"prev":"<64 hex>"}
// Empty fields are left out. Argument values appear only as their size and SHA-256
// (DigestArguments); tokens never appear (tokenId is at most 12 hex digits of a digest).
//
// Failures are never silent: a record that could not be written makes health() non-OK (the
// first error is kept), Flush and Close return it, and AuditLogOptions::on_error is called
// from the writer thread. A failed batch is truncated away, so the file keeps whole lines and
// the lost ids show as a gap in VerifyAuditLog.
//
// Thread safety: Record, Flush, health and head may be called from any thread at once. Close
// (and the destructor) must not race with Record. VerifyAuditLog and AuditStats read a file
// and may run anywhere, also while a writer appends (they see a prefix).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/env.h"
#include "base/status.h"

namespace trove::mcp::policy {

enum class AuditType { kToolCall, kResourceRead, kAuthorization, kSession, kError, kSystem };
enum class AuditStatus { kSuccess, kFailure, kDenied };

std::string_view AuditTypeName(AuditType type);        // "tool_call", "resource_read", ...
std::string_view AuditStatusName(AuditStatus status);  // "success", "failure", "denied"

// 64 zeros: the `prev` of the first record of a log.
inline constexpr std::string_view kAuditGenesis =
    "0000000000000000000000000000000000000000000000000000000000000000";

// Strings longer than this are cut (operation, ids, detail values); at most kMaxAuditDetails
// details are kept. A peer controls several of them.
inline constexpr std::size_t kMaxAuditFieldBytes = 1024;
inline constexpr std::size_t kMaxAuditDetails = 16;

struct ArgumentDigest {
  std::uint64_t size = 0;
  std::string sha256;  // 64 lower-case hex digits
};
// Returns the size and SHA-256 of a call's serialized arguments.
ArgumentDigest DigestArguments(std::string_view serialized_arguments);

struct AuditEvent {
  AuditType type = AuditType::kSystem;
  AuditStatus status = AuditStatus::kSuccess;
  std::string session_id;
  std::string principal;
  std::string token_id;    // at most 12 hex digits of the token's SHA-256; longer is cut
  std::string request_id;  // the JSON-RPC id as text ("12", "abc")
  std::string operation;   // tool name or resource URI
  std::optional<std::int64_t> duration_ms;
  std::string error_code;  // "PERMISSION_DENIED", ...
  std::optional<ArgumentDigest> arguments;
  std::vector<std::pair<std::string, std::string>> details;  // safe values only
  // Wall-clock time in microseconds since the epoch; 0: the log's clock at Record.
  std::int64_t timestamp_micros = 0;
};

struct AuditLogOptions {
  // Record blocks while this many records wait for the writer (default 10000), so memory stays
  // bounded and no record is dropped. 0 counts as 1.
  std::size_t max_queue = 10000;
  // fdatasync after each batch (default off: the OS writes back).
  bool sync = false;
  // Called on the writer thread with each write failure (e.g. to log it or flip a health flag).
  std::function<void(const Status&)> on_error;
};

class AuditLog {
 public:
  // Opens (creating, mode 0600) the log at `path` for appending and starts the writer. An
  // existing log continues its chain and ids; a last line without a newline (a crash while
  // writing) is ended with one and a `system` record says so (VerifyAuditLog still reports
  // it). `clock` gives timestamps and must outlive the log.
  static Result<std::unique_ptr<AuditLog>> Open(const std::string& path, base::Env& clock,
                                                AuditLogOptions options = {});
  ~AuditLog();  // Close()
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // Queues `event` for the writer; blocks only while the queue is full. After Close the event
  // is not written and health() becomes non-OK.
  void Record(AuditEvent event);

  // Waits until every record queued before the call was written (or failed); returns health().
  Status Flush();

  // Flushes, stops the writer and closes the file; returns health(). Idempotent.
  Status Close();

  // OK, or the first failure to write a record.
  Status health() const;

  // The SHA-256 (hex) of the last line written, kAuditGenesis for an empty log: an anchor to
  // keep elsewhere.
  std::string head() const;

  const std::string& path() const { return path_; }

 private:
  AuditLog(std::string path, int fd, base::Env& clock, AuditLogOptions options,
           std::uint64_t next_id, std::string prev, std::uint64_t size);
  void WriterLoop();
  void SetError(Status status);

  const std::string path_;
  const int fd_;
  base::Env& clock_;
  const AuditLogOptions options_;

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // the writer waits for records or stop
  std::condition_variable done_cv_;  // Flush and a full Record wait for progress
  std::deque<AuditEvent> queue_;     // guarded by mu_
  std::uint64_t enqueued_ = 0;       // guarded by mu_: records ever queued
  std::uint64_t processed_ = 0;      // guarded by mu_: records written or failed
  bool stop_ = false;                // guarded by mu_
  bool closed_ = false;              // guarded by mu_
  Status error_;                     // guarded by mu_: the first failure
  std::string head_;                 // guarded by mu_

  // Writer-thread state.
  std::uint64_t next_id_;
  std::string prev_;
  std::uint64_t size_;
  std::thread writer_;
};

// The first problem VerifyAuditLog found.
struct AuditBreak {
  std::uint64_t line = 0;  // 1-based
  std::string reason;
};

struct AuditVerifyReport {
  std::uint64_t records = 0;  // lines checked and found valid before the first break
  std::optional<AuditBreak> first_break;
  std::string head;  // SHA-256 of the last valid line (or kAuditGenesis)
  bool ok() const { return !first_break; }
};

// Checks the whole log at `path`: every line ends with a newline and is a JSON object with a
// known type and status, an RFC 3339 timestamp, `id` one more than the line before (the first
// may be any id >= 1 only if its prev is the genesis) and `prev` equal to the SHA-256 of the
// line before. Returns the report; an error only when the file cannot be read.
Result<AuditVerifyReport> VerifyAuditLog(const std::string& path);

// Statistics over a log (docs/librarian.md §8.4 getStats).
struct AuditStatsReport {
  std::uint64_t total_events = 0;
  std::map<std::string, std::uint64_t> by_type;
  std::map<std::string, std::uint64_t> by_status;
  std::uint64_t unique_sessions = 0;
  double avg_tool_duration_ms = 0;     // mean durationMs over tool_call events that carry one
  double error_rate = 0;               // 100 * failures / total, rounded to one decimal
  std::uint64_t unreadable_lines = 0;  // lines that are not JSON objects (not counted above)
};

// Reads every record of the log at `path`; an error only when the file cannot be read.
Result<AuditStatsReport> AuditStats(const std::string& path);

// Returns the report as JSON text with the wire names of docs/librarian.md §8.4: totalEvents,
// byType, byStatus, uniqueSessions, avgToolDurationMs, errorRate, unreadableLines.
std::string AuditStatsJson(const AuditStatsReport& report);

// A filter over a log's records (docs/librarian.md §8.4 query); empty fields match everything.
struct AuditQuery {
  std::optional<AuditType> type;
  std::string session_id;
  std::string principal;
  std::string operation;
  std::optional<AuditStatus> status;
  std::optional<std::int64_t> since_micros;  // timestamp >= since
  std::optional<std::int64_t> until_micros;  // timestamp < until
  std::size_t limit = 100;                   // at most kMaxAuditQueryLimit
};
inline constexpr std::size_t kMaxAuditQueryLimit = 1000;

// Returns the lines of the matching records, newest first, at most min(limit, 1000). Lines
// that are not JSON objects are skipped. An error only when the file cannot be read.
Result<std::vector<std::string>> QueryAuditLog(const std::string& path, const AuditQuery& query);

// Returns the RFC 3339 UTC form of `micros` with milliseconds ("2026-03-02T08:15:42.250Z").
std::string FormatRfc3339Millis(std::int64_t micros);

}  // namespace trove::mcp::policy

// Rate limiting and circuit breaking of the policy layer (docs/mcp.md §5.6, docs/librarian.md
// docs/mcp.md §5.5).
//
// RateLimiter: a token bucket per principal (optionally per principal and tool). A bucket
// holds at most `burst` tokens, starts full and refills at `per_minute` tokens per minute; a
// call takes its cost (default 1). A refusal says when enough tokens will be there
// (retry_after_ms, the `retryDelayMs` of RATE_LIMIT_EXCEEDED).
//
// CircuitBreaker: one per tool or external dependency. Closed, it counts failures (only
// INTERNAL_ERROR-class ones; the caller decides) and opens after `failure_threshold` of them
// within `failure_window_ms`. Open, every call fails fast with retry_after_ms = the remaining
// open time. After `open_ms` it is half-open and admits one call at a time; a failure reopens
// it, `half_open_successes` successes close it. CircuitBreakers keeps one per name.
//
// Both read the time from a base::Env (MonotonicMicros), so tests drive a MemEnv clock.
// Thread safety: every method may be called from any thread at once (one internal mutex).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/env.h"

namespace trove::mcp::policy {

// Whether a call may proceed, and if not, after how long to retry.
struct Admission {
  bool allowed = true;
  std::int64_t retry_after_ms = 0;  // > 0 when !allowed
};

struct RateLimitOptions {
  double per_minute = 100;  // sustained rate (Librarian default)
  double burst = 20;        // bucket capacity
  bool per_tool = false;    // one bucket per (principal, tool) instead of per principal
  // At most this many buckets are kept (default 10000); beyond, full (idle) buckets are
  // forgotten first, which loses nothing since a new bucket starts full. If none is full the
  // oldest-refilled buckets go.
  std::size_t max_buckets = 10000;
};

class RateLimiter {
 public:
  // `clock` must outlive the limiter. REQUIRES: per_minute > 0, burst >= 1.
  RateLimiter(RateLimitOptions options, base::Env& clock);

  // Takes `cost` tokens from the bucket of `principal` (and `tool` when per_tool) when it
  // holds them; otherwise takes nothing and returns the wait until it will. A cost above the
  // burst is charged as the burst (the whole bucket).
  Admission Acquire(std::string_view principal, std::string_view tool = {}, double cost = 1);

  // The tokens in a bucket now (for tests and diagnostics).
  double Available(std::string_view principal, std::string_view tool = {});

  const RateLimitOptions& options() const { return options_; }
  std::size_t bucket_count();

 private:
  struct Bucket {
    double tokens;
    std::int64_t updated_micros;
  };
  std::string Key(std::string_view principal, std::string_view tool) const;
  Bucket& Refill(const std::string& key, std::int64_t now);  // REQUIRES: mu_ held
  void Evict(std::int64_t now);                              // REQUIRES: mu_ held

  const RateLimitOptions options_;
  base::Env& clock_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;  // guarded by mu_
};

struct CircuitBreakerOptions {
  int failure_threshold = 5;
  std::int64_t failure_window_ms = 60'000;
  std::int64_t open_ms = 30'000;
  int half_open_successes = 3;
  // What a caller turned away in half-open (another probe in flight) is told to wait.
  std::int64_t half_open_retry_ms = 1'000;
};

enum class CircuitState { kClosed, kOpen, kHalfOpen };
std::string_view CircuitStateName(CircuitState state);  // "closed", "open", "half_open"

// How an admitted call ended, as far as the breaker cares.
enum class CallOutcome {
  kSuccess,
  kFailure,  // INTERNAL_ERROR-class: counts towards opening
  kIgnored,  // validation, permission, not found...: neither success nor failure
};

class CircuitBreaker {
 public:
  // `clock` must outlive the breaker.
  CircuitBreaker(CircuitBreakerOptions options, base::Env& clock);

  // Asks to make a call. Every allowed call must be followed by one Report.
  Admission Admit();
  // Reports how an admitted call ended.
  void Report(CallOutcome outcome);

  CircuitState state();

 private:
  void UpdateLocked(std::int64_t now_ms);

  const CircuitBreakerOptions options_;
  base::Env& clock_;
  std::mutex mu_;
  CircuitState state_ = CircuitState::kClosed;  // guarded by mu_
  std::deque<std::int64_t> failures_ms_;        // guarded by mu_: recent failures, closed
  std::int64_t opened_at_ms_ = 0;               // guarded by mu_
  int successes_ = 0;                           // guarded by mu_: in half-open
  bool probe_in_flight_ = false;                // guarded by mu_: in half-open
};

// One CircuitBreaker per dependency name, made on first use.
class CircuitBreakers {
 public:
  CircuitBreakers(CircuitBreakerOptions options, base::Env& clock);
  // Returns the breaker for `name`; the reference stays valid for the lifetime of this object.
  CircuitBreaker& For(std::string_view name);

 private:
  const CircuitBreakerOptions options_;
  base::Env& clock_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<CircuitBreaker>, std::less<>> breakers_;  // guarded
};

}  // namespace trove::mcp::policy

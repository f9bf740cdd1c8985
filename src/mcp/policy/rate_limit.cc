#include "mcp/policy/rate_limit.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace trove::mcp::policy {

RateLimiter::RateLimiter(RateLimitOptions options, base::Env& clock)
    : options_(options), clock_(clock) {}

std::string RateLimiter::Key(std::string_view principal, std::string_view tool) const {
  std::string key(principal);
  if (options_.per_tool) {
    key += '\0';
    key += tool;
  }
  return key;
}

RateLimiter::Bucket& RateLimiter::Refill(const std::string& key, std::int64_t now) {
  auto [it, inserted] = buckets_.try_emplace(key, Bucket{options_.burst, now});
  Bucket& bucket = it->second;
  if (!inserted && now > bucket.updated_micros) {
    const double elapsed_minutes = static_cast<double>(now - bucket.updated_micros) / 60e6;
    bucket.tokens = std::min(options_.burst, bucket.tokens + elapsed_minutes * options_.per_minute);
    bucket.updated_micros = now;
  }
  return bucket;
}

void RateLimiter::Evict(std::int64_t now) {
  // First every bucket that has refilled to full: forgetting it changes nothing.
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    const double elapsed_minutes = static_cast<double>(now - it->second.updated_micros) / 60e6;
    if (it->second.tokens + elapsed_minutes * options_.per_minute >= options_.burst) {
      it = buckets_.erase(it);
    } else {
      ++it;
    }
  }
  if (buckets_.size() < options_.max_buckets) return;
  // Then the least recently used half.
  std::vector<std::int64_t> times;
  times.reserve(buckets_.size());
  for (const auto& [key, bucket] : buckets_) times.push_back(bucket.updated_micros);
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  const std::int64_t cutoff = times[times.size() / 2];
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    it = it->second.updated_micros <= cutoff ? buckets_.erase(it) : std::next(it);
  }
}

Admission RateLimiter::Acquire(std::string_view principal, std::string_view tool, double cost) {
  cost = std::clamp(cost, 0.0, options_.burst);
  const std::int64_t now = clock_.MonotonicMicros();
  std::lock_guard lock(mu_);
  const std::string key = Key(principal, tool);
  if (buckets_.size() >= options_.max_buckets && !buckets_.contains(key)) Evict(now);
  Bucket& bucket = Refill(key, now);
  if (bucket.tokens >= cost) {
    bucket.tokens -= cost;
    return Admission{};
  }
  const double missing = cost - bucket.tokens;
  const double wait_ms = missing / options_.per_minute * 60'000.0;
  return Admission{
      .allowed = false,
      .retry_after_ms = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(wait_ms)))};
}

double RateLimiter::Available(std::string_view principal, std::string_view tool) {
  const std::int64_t now = clock_.MonotonicMicros();
  std::lock_guard lock(mu_);
  return Refill(Key(principal, tool), now).tokens;
}

std::size_t RateLimiter::bucket_count() {
  std::lock_guard lock(mu_);
  return buckets_.size();
}

std::string_view CircuitStateName(CircuitState state) {
  switch (state) {
    case CircuitState::kClosed:
      return "closed";
    case CircuitState::kOpen:
      return "open";
    case CircuitState::kHalfOpen:
      return "half_open";
  }
  return "closed";
}

CircuitBreaker::CircuitBreaker(CircuitBreakerOptions options, base::Env& clock)
    : options_(options), clock_(clock) {}

void CircuitBreaker::UpdateLocked(std::int64_t now_ms) {
  if (state_ == CircuitState::kOpen && now_ms - opened_at_ms_ >= options_.open_ms) {
    state_ = CircuitState::kHalfOpen;
    successes_ = 0;
    probe_in_flight_ = false;
  }
  while (!failures_ms_.empty() && now_ms - failures_ms_.front() >= options_.failure_window_ms) {
    failures_ms_.pop_front();
  }
}

Admission CircuitBreaker::Admit() {
  const std::int64_t now_ms = clock_.MonotonicMicros() / 1000;
  std::lock_guard lock(mu_);
  UpdateLocked(now_ms);
  switch (state_) {
    case CircuitState::kClosed:
      return Admission{};
    case CircuitState::kOpen:
      return Admission{
          .allowed = false,
          .retry_after_ms = std::max<std::int64_t>(1, options_.open_ms - (now_ms - opened_at_ms_))};
    case CircuitState::kHalfOpen:
      if (probe_in_flight_) {
        return Admission{.allowed = false, .retry_after_ms = options_.half_open_retry_ms};
      }
      probe_in_flight_ = true;
      return Admission{};
  }
  return Admission{};
}

void CircuitBreaker::Report(CallOutcome outcome) {
  const std::int64_t now_ms = clock_.MonotonicMicros() / 1000;
  std::lock_guard lock(mu_);
  if (state_ == CircuitState::kHalfOpen) {
    probe_in_flight_ = false;
    if (outcome == CallOutcome::kFailure) {
      state_ = CircuitState::kOpen;
      opened_at_ms_ = now_ms;
    } else if (outcome == CallOutcome::kSuccess && ++successes_ >= options_.half_open_successes) {
      state_ = CircuitState::kClosed;
      failures_ms_.clear();
    }
    return;
  }
  UpdateLocked(now_ms);
  if (state_ != CircuitState::kClosed || outcome != CallOutcome::kFailure) return;
  failures_ms_.push_back(now_ms);
  if (static_cast<int>(failures_ms_.size()) >= options_.failure_threshold) {
    state_ = CircuitState::kOpen;
    opened_at_ms_ = now_ms;
    failures_ms_.clear();
  }
}

CircuitState CircuitBreaker::state() {
  const std::int64_t now_ms = clock_.MonotonicMicros() / 1000;
  std::lock_guard lock(mu_);
  UpdateLocked(now_ms);
  return state_;
}

CircuitBreakers::CircuitBreakers(CircuitBreakerOptions options, base::Env& clock)
    : options_(options), clock_(clock) {}

CircuitBreaker& CircuitBreakers::For(std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = breakers_.find(name);
  if (it == breakers_.end()) {
    it = breakers_.emplace(std::string(name), std::make_unique<CircuitBreaker>(options_, clock_))
             .first;
  }
  return *it->second;
}

}  // namespace trove::mcp::policy

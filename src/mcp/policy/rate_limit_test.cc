#include "mcp/policy/rate_limit.h"

#include <gtest/gtest.h>

namespace trove::mcp::policy {
namespace {

constexpr std::int64_t kMs = 1000;  // microseconds

TEST(RateLimiterTest, BurstThenRefillAtTheRate) {
  base::MemEnv clock;
  RateLimiter limiter({.per_minute = 60, .burst = 3}, clock);  // one token per second
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Acquire("alice").allowed) << i;
  Admission denied = limiter.Acquire("alice");
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.retry_after_ms, 1000);
  clock.AdvanceMicros(400 * kMs);
  denied = limiter.Acquire("alice");
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.retry_after_ms, 600);
  clock.AdvanceMicros(600 * kMs);
  EXPECT_TRUE(limiter.Acquire("alice").allowed);
  EXPECT_FALSE(limiter.Acquire("alice").allowed);
  // Refill stops at the burst.
  clock.AdvanceMicros(3600 * 1000 * kMs);
  EXPECT_DOUBLE_EQ(limiter.Available("alice"), 3);
}

TEST(RateLimiterTest, LibrarianDefaults) {
  base::MemEnv clock;
  RateLimiter limiter({}, clock);  // 100/min, burst 20
  int allowed = 0;
  for (int i = 0; i < 25; ++i) allowed += limiter.Acquire("p").allowed ? 1 : 0;
  EXPECT_EQ(allowed, 20);
  const Admission a = limiter.Acquire("p");
  EXPECT_FALSE(a.allowed);
  EXPECT_EQ(a.retry_after_ms, 600);  // 60000 / 100
}

TEST(RateLimiterTest, PrincipalsAreIndependent) {
  base::MemEnv clock;
  RateLimiter limiter({.per_minute = 60, .burst = 1}, clock);
  EXPECT_TRUE(limiter.Acquire("alice").allowed);
  EXPECT_FALSE(limiter.Acquire("alice").allowed);
  EXPECT_TRUE(limiter.Acquire("bob").allowed);
}

TEST(RateLimiterTest, PerToolBucketsAndCosts) {
  base::MemEnv clock;
  RateLimiter limiter({.per_minute = 60, .burst = 10, .per_tool = true}, clock);
  EXPECT_TRUE(limiter.Acquire("alice", "bootstrap", 10).allowed);
  const Admission a = limiter.Acquire("alice", "bootstrap", 5);
  EXPECT_FALSE(a.allowed);
  EXPECT_EQ(a.retry_after_ms, 5000);
  EXPECT_TRUE(limiter.Acquire("alice", "query", 1).allowed);  // another bucket
  // A refused call takes nothing.
  clock.AdvanceMicros(2000 * kMs);
  EXPECT_DOUBLE_EQ(limiter.Available("alice", "bootstrap"), 2);
  // A cost above the burst is charged as the whole bucket.
  clock.AdvanceMicros(8000 * kMs);
  EXPECT_TRUE(limiter.Acquire("alice", "bootstrap", 50).allowed);
  EXPECT_DOUBLE_EQ(limiter.Available("alice", "bootstrap"), 0);
}

TEST(RateLimiterTest, BucketCountIsBoundedWithoutForgivingDebt) {
  base::MemEnv clock;
  RateLimiter limiter({.per_minute = 60, .burst = 1, .max_buckets = 4}, clock);
  for (const char* p : {"a", "b", "c"}) EXPECT_TRUE(limiter.Acquire(p).allowed);
  clock.AdvanceMicros(1000 * kMs);  // a, b and c are full again
  EXPECT_TRUE(limiter.Acquire("victim").allowed);
  EXPECT_TRUE(limiter.Acquire("d").allowed);  // the table is full: the full buckets go
  EXPECT_EQ(limiter.bucket_count(), 2u);
  EXPECT_FALSE(limiter.Acquire("victim").allowed);  // its empty bucket was kept
  for (int i = 0; i < 100; ++i) limiter.Acquire("p" + std::to_string(i));
  EXPECT_LE(limiter.bucket_count(), 4u);
}

TEST(CircuitBreakerTest, OpensAfterThresholdWithinWindow) {
  base::MemEnv clock;
  CircuitBreaker breaker({}, clock);  // 5 in 60 s, open 30 s, 3 successes
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(breaker.Admit().allowed);
    breaker.Report(CallOutcome::kFailure);
  }
  EXPECT_EQ(breaker.state(), CircuitState::kClosed);
  // Ignored outcomes (validation and such) do not count.
  ASSERT_TRUE(breaker.Admit().allowed);
  breaker.Report(CallOutcome::kIgnored);
  EXPECT_EQ(breaker.state(), CircuitState::kClosed);
  ASSERT_TRUE(breaker.Admit().allowed);
  breaker.Report(CallOutcome::kFailure);
  EXPECT_EQ(breaker.state(), CircuitState::kOpen);
  Admission a = breaker.Admit();
  EXPECT_FALSE(a.allowed);
  EXPECT_EQ(a.retry_after_ms, 30000);
  clock.AdvanceMicros(12000 * kMs);
  a = breaker.Admit();
  EXPECT_FALSE(a.allowed);
  EXPECT_EQ(a.retry_after_ms, 18000);
}

TEST(CircuitBreakerTest, OldFailuresLeaveTheWindow) {
  base::MemEnv clock;
  CircuitBreaker breaker({}, clock);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(breaker.Admit().allowed);
    breaker.Report(CallOutcome::kFailure);
  }
  clock.AdvanceMicros(60000 * kMs);
  ASSERT_TRUE(breaker.Admit().allowed);
  breaker.Report(CallOutcome::kFailure);
  EXPECT_EQ(breaker.state(), CircuitState::kClosed);
}

TEST(CircuitBreakerTest, HalfOpenAdmitsOneProbeAndClosesAfterSuccesses) {
  base::MemEnv clock;
  CircuitBreaker breaker({.failure_threshold = 1}, clock);
  ASSERT_TRUE(breaker.Admit().allowed);
  breaker.Report(CallOutcome::kFailure);
  ASSERT_EQ(breaker.state(), CircuitState::kOpen);
  clock.AdvanceMicros(30000 * kMs);
  EXPECT_EQ(breaker.state(), CircuitState::kHalfOpen);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(breaker.Admit().allowed) << i;
    const Admission second = breaker.Admit();  // one probe at a time
    EXPECT_FALSE(second.allowed);
    EXPECT_EQ(second.retry_after_ms, 1000);
    EXPECT_EQ(breaker.state(), CircuitState::kHalfOpen);
    breaker.Report(CallOutcome::kSuccess);
  }
  EXPECT_EQ(breaker.state(), CircuitState::kClosed);
  EXPECT_TRUE(breaker.Admit().allowed);
  EXPECT_TRUE(breaker.Admit().allowed);
}

TEST(CircuitBreakerTest, HalfOpenFailureReopens) {
  base::MemEnv clock;
  CircuitBreaker breaker({.failure_threshold = 1}, clock);
  ASSERT_TRUE(breaker.Admit().allowed);
  breaker.Report(CallOutcome::kFailure);
  clock.AdvanceMicros(30000 * kMs);
  ASSERT_TRUE(breaker.Admit().allowed);
  breaker.Report(CallOutcome::kSuccess);
  ASSERT_TRUE(breaker.Admit().allowed);
  breaker.Report(CallOutcome::kFailure);
  EXPECT_EQ(breaker.state(), CircuitState::kOpen);
  EXPECT_EQ(breaker.Admit().retry_after_ms, 30000);
  // An ignored probe frees the slot without counting.
  clock.AdvanceMicros(30000 * kMs);
  ASSERT_TRUE(breaker.Admit().allowed);
  breaker.Report(CallOutcome::kIgnored);
  EXPECT_EQ(breaker.state(), CircuitState::kHalfOpen);
  EXPECT_TRUE(breaker.Admit().allowed);
}

TEST(CircuitBreakerTest, OnePerDependency) {
  base::MemEnv clock;
  CircuitBreakers breakers({.failure_threshold = 1}, clock);
  CircuitBreaker& a = breakers.For("llm");
  EXPECT_EQ(&a, &breakers.For("llm"));
  ASSERT_TRUE(a.Admit().allowed);
  a.Report(CallOutcome::kFailure);
  EXPECT_FALSE(breakers.For("llm").Admit().allowed);
  EXPECT_TRUE(breakers.For("sqlite").Admit().allowed);
  EXPECT_EQ(CircuitStateName(a.state()), "open");
}

}  // namespace
}  // namespace trove::mcp::policy

// mcp_policy_bench: the cost of one tools/call through a Session (parse, dispatch, policy,
// handler, serialized reply) with every policy off, against the same call with everything on
// (docs/mcp.md §5.6): a static principal with scopes, consent granted by configuration, a rate
// limiter with a huge burst, an audit log on a temp file, and a circuit breaker the handler
// admits and reports through. Both run in the same process, interleaved (Google Benchmark's
// random interleaving), and the ratio of the medians is printed last with "off" as the peer.
//   mcp_policy_bench [google benchmark flags]
// Inline pool (no worker threads), so a call is measured without thread handoffs; the audit
// writer thread runs beside it, as in a server.
#include <benchmark/benchmark.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/logging.h"
#include "base/thread_pool.h"
#include "mcp/jsonrpc.h"
#include "mcp/policy/audit.h"
#include "mcp/policy/rate_limit.h"
#include "mcp/server.h"

namespace trove::mcp {
namespace {

// Counts the messages a session writes, without looking at them.
class NullChannel final : public Channel {
 public:
  bool Send(const std::string& message, bool /*final*/) override {
    bytes_ += message.size();
    return true;
  }
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_ = 0;
};

constexpr char kCall[] = R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo",)"
                         R"("arguments":{"text":"hello, policy layer","count":3}}})";

// One server and one initialized session, with or without every policy.
class Fixture {
 public:
  explicit Fixture(bool policies_on)
      : pool_(0), logger_(base::LogLevel::kOff, 2), channel_(std::make_shared<NullChannel>()) {
    ServerOptions options;
    ToolSpec spec{.name = "echo", .description = "Echoes its text", .scopes = {"read"}};
    if (policies_on) {
      audit_path_ = fmt::format("/tmp/mcp_policy_bench_{}.jsonl", ::getpid());
      std::remove(audit_path_.c_str());
      auto log = policy::AuditLog::Open(audit_path_, env_);
      if (!log.ok()) {
        std::fprintf(stderr, "mcp_policy_bench: %s\n", log.status().ToString().c_str());
        std::exit(1);
      }
      options.audit_log = std::move(log).value();
      options.rate_limiter = std::make_shared<policy::RateLimiter>(
          policy::RateLimitOptions{.per_minute = 1e12, .burst = 1e12}, env_);
      options.consent = {"echo"};
      spec.needs_consent = true;
    }
    server_ = std::make_unique<Server>(ServerInfo{.name = "bench", .version = "1"}, options, pool_,
                                       logger_);
    Json schema = {{"type", "object"},
                   {"properties",
                    {{"text", {{"type", "string"}, {"description", "text"}}},
                     {"count", {{"type", "integer"}, {"description", "count"}}}}},
                   {"required", {"text"}}};
    Status added = server_->tools().AddRaw(
        spec, schema, nullptr,
        [policies_on](const Json& args, CallContext& ctx) -> Result<ToolResult> {
          if (policies_on) {
            policy::CircuitBreaker& breaker = ctx.breaker("dependency");
            policy::Admission admission = breaker.Admit();
            if (!admission.allowed) return BreakerRefusal("dependency", admission);
            breaker.Report(policy::CallOutcome::kSuccess);
          }
          return ToolResult::Text(args["text"].get<std::string>());
        });
    if (!added.ok()) std::exit(1);
    session_ = server_->NewSession("bench-session");
    if (policies_on) session_->set_principal(Principal{"bench", {"read", "write"}, "0123456789ab"});
    Handle(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":)"
           R"("2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})");
    Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  }

  ~Fixture() {
    session_->Close();
    if (server_->options().audit_log) (void)server_->options().audit_log->Close();
    server_.reset();
    if (!audit_path_.empty()) std::remove(audit_path_.c_str());
  }

  // Parses and handles one message as a transport does.
  void Handle(std::string_view text) {
    ParsedMessage parsed = ParseMessage(text, server_->options().parse);
    session_->Handle(std::move(*parsed.message), channel_);
  }

  std::size_t bytes() const { return channel_->bytes(); }

 private:
  base::PosixEnv env_;
  base::ThreadPool pool_;
  base::Logger logger_;
  std::shared_ptr<NullChannel> channel_;
  std::string audit_path_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<internal::Session> session_;
};

void RunCalls(benchmark::State& state, bool policies_on) {
  Fixture fixture(policies_on);
  for (auto _ : state) fixture.Handle(kCall);
  benchmark::DoNotOptimize(fixture.bytes());
  state.SetItemsProcessed(state.iterations());
}

void BM_ToolCallPoliciesOff(benchmark::State& state) { RunCalls(state, false); }
void BM_ToolCallPoliciesOn(benchmark::State& state) { RunCalls(state, true); }

BENCHMARK(BM_ToolCallPoliciesOff)->Repetitions(9)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ToolCallPoliciesOn)->Repetitions(9)->Unit(benchmark::kMicrosecond);

// Keeps the medians while the console shows everything.
class MedianReporter final : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        medians_[run.run_name.function_name] = run.GetAdjustedRealTime();
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const std::map<std::string, double>& medians() const { return medians_; }

 private:
  std::map<std::string, double> medians_;
};

}  // namespace
}  // namespace trove::mcp

int main(int argc, char** argv) {
  // Interleave the repetitions of both so that a noisy moment hits both alike.
  std::vector<char*> args(argv, argv + argc);
  std::string interleave = "--benchmark_enable_random_interleaving=true";
  args.push_back(interleave.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  trove::mcp::MedianReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  const auto& m = reporter.medians();
  auto off = m.find("BM_ToolCallPoliciesOff");
  auto on = m.find("BM_ToolCallPoliciesOn");
  if (off != m.end() && on != m.end() && off->second > 0) {
    fmt::print(
        "tools/call median: policies off (peer) {:.2f} us, all on {:.2f} us: on/off = {:.2f}x\n",
        off->second, on->second, on->second / off->second);
  }
  return 0;
}

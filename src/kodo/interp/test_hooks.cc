// The assertion builtins and the runtime hooks of `kodoc test` (docs/kodo.md §4.8): what
// upstream's runtime (kodo_runtime test_ops/prop_ops) does for a test binary. The test runner
// (kodo/testrun) lowers each test to a function and calls these from a synthetic `main`.
//
// Assertions behave in two ways. Under `kodoc run` a failed assertion stops the program (exit
// 134) with the messages the interpreter always printed. Under `kodoc test`
// (RunOptions::test_mode) it prints upstream's test message to stderr, marks the current test
// failed and goes on, as upstream's runtime does.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "kodo/interp/value.h"

namespace trove::kodo::interp {
namespace {

using Args = std::vector<RValue>;

#define HOOK(name) bool name(Ctx& ctx, Args& a, RValue& out)

bool Need(Ctx& ctx, const Args& a, std::size_t n, const char* name) {
  if (a.size() >= n) return true;
  return ctx.Trap(kExitAbort, fmt::format("builtin `{}` called with too few arguments", name));
}

// A value as upstream's test messages print it: strings quoted, floats as Rust's Display.
std::string Shown(const RValue& v) {
  if (v.tag == Tag::kStr) return "\"" + v.str() + "\"";
  return ToText(v);
}

// A failed assertion: under `kodoc test` a message and the failure flag, else a trap.
bool Failed(Ctx& ctx, const std::string& test_message, const std::string& run_message) {
  if (!ctx.options.test_mode) return ctx.Trap(kExitAbort, run_message);
  ctx.FlushOut();
  ctx.Err(test_message + "\n");
  ctx.test_failed = true;
  return true;
}

HOOK(HAssert) {
  (void)out;
  if (!Need(ctx, a, 1, "assert")) return false;
  if (a[0].Truthy()) return true;
  return Failed(ctx, "assertion failed", "assertion failed");
}
HOOK(HAssertTrue) {
  (void)out;
  if (!Need(ctx, a, 1, "assert_true")) return false;
  if (a[0].Truthy()) return true;
  return Failed(ctx, "assertion failed: expected true, got false", "assertion failed");
}
HOOK(HAssertFalse) {
  (void)out;
  if (!Need(ctx, a, 1, "assert_false")) return false;
  if (!a[0].Truthy()) return true;
  return Failed(ctx, "assertion failed: expected false, got true",
                "assertion failed: assert_false");
}
HOOK(HAssertEq) {
  (void)out;
  if (!Need(ctx, a, 2, "assert_eq")) return false;
  if (Equal(a[0], a[1])) return true;
  return Failed(ctx,
                fmt::format("assertion failed: assert_eq\n  left:  {}\n  right: {}", Shown(a[0]),
                            Shown(a[1])),
                fmt::format("assertion failed: assert_eq\n  left: {}\n right: {}", ToText(a[0]),
                            ToText(a[1])));
}
HOOK(HAssertNe) {
  (void)out;
  if (!Need(ctx, a, 2, "assert_ne")) return false;
  if (!Equal(a[0], a[1])) return true;
  return Failed(ctx, fmt::format("assertion failed: assert_ne\n  both values: {}", Shown(a[0])),
                fmt::format("assertion failed: assert_ne\n  left: {}\n right: {}", ToText(a[0]),
                            ToText(a[1])));
}

// ---- the test harness -----------------------------------------------------------------------

HOOK(HTestStart) {
  (void)out;
  if (!Need(ctx, a, 1, "kodo_test_start")) return false;
  ctx.test_failed = false;
  ctx.Out("test " + ToText(a[0]) + " ... ");
  return true;
}
HOOK(HTestEnd) {
  (void)a;
  ctx.Out(ctx.test_failed ? "FAILED\n" : "ok\n");
  out = RValue::Int(ctx.test_failed ? 1 : 0);
  return true;
}
HOOK(HTestSkip) {
  (void)a;
  (void)out;
  ctx.Out("skipped\n");
  return true;
}
HOOK(HTestSummary) {
  (void)out;
  if (!Need(ctx, a, 5, "kodo_test_summary")) return false;
  const std::int64_t total = a[0].i, passed = a[1].i, failed = a[2].i, skipped = a[3].i,
                     todo = a[4].i;
  ctx.Out(fmt::format("\ntest result: {}. {} passed; {} failed; {} skipped; {} todo; {} total\n",
                      failed > 0 ? "FAILED" : "ok", passed, failed, skipped, todo, total));
  return true;
}
// `@timeout` and isolation: accepted; the interpreter's step limit is what bounds a run.
HOOK(HNoOp) {
  (void)ctx;
  (void)a;
  (void)out;
  return true;
}

// ---- property tests -------------------------------------------------------------------------
// splitmix64 over Ctx::prop_rng. Upstream seeds from entropy when the seed is 0; here seed 0 is
// a fixed seed, so a run is reproducible.
constexpr std::uint64_t kDefaultSeed = 0x4b6f646f54657374ULL;  // "KodoTest"

std::uint64_t Next(Ctx& ctx) {
  std::uint64_t z = (ctx.prop_rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A uniform integer in [lo, hi] (lo <= hi).
std::int64_t Between(Ctx& ctx, std::int64_t lo, std::int64_t hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  const std::uint64_t r = Next(ctx);
  const std::uint64_t off = span == UINT64_MAX ? r : r % (span + 1);
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + off);
}

HOOK(HPropStart) {
  (void)out;
  if (!Need(ctx, a, 2, "kodo_prop_start")) return false;
  ctx.prop_rng = a[1].i == 0 ? kDefaultSeed : static_cast<std::uint64_t>(a[1].i);
  return true;
}
HOOK(HPropGenInt) {
  if (!Need(ctx, a, 2, "kodo_prop_gen_int")) return false;
  std::int64_t lo = a[0].i, hi = a[1].i;
  if (lo > hi) std::swap(lo, hi);
  out = RValue::Int(Between(ctx, lo, hi));
  return true;
}
HOOK(HPropGenBool) {
  (void)a;
  out = RValue::Bool((Next(ctx) >> 63) != 0);
  return true;
}
HOOK(HPropGenFloat) {
  if (!Need(ctx, a, 2, "kodo_prop_gen_float")) return false;
  double lo = a[0].f, hi = a[1].f;
  if (lo > hi) std::swap(lo, hi);
  const double u = static_cast<double>(Next(ctx) >> 11) / static_cast<double>(1ULL << 53);
  out = RValue::Float(lo + (hi - lo) * u);
  return true;
}
HOOK(HPropGenString) {
  if (!Need(ctx, a, 1, "kodo_prop_gen_string")) return false;
  const std::int64_t cap = a[0].i <= 0 ? 0 : (a[0].i > 4096 ? 4096 : a[0].i);
  const std::int64_t len = cap == 0 ? 0 : Between(ctx, 0, cap);
  std::string s;
  for (std::int64_t i = 0; i < len; ++i) s += static_cast<char>(Between(ctx, 0x20, 0x7e));
  out = ctx.Str(std::move(s));
  return true;
}

#undef HOOK

}  // namespace

Builtin FindTestBuiltin(const std::string& name) {
  static const auto* table = new std::unordered_map<std::string, Builtin>{
      {"assert", HAssert},
      {"assert_true", HAssertTrue},
      {"assert_false", HAssertFalse},
      {"assert_eq", HAssertEq},
      {"assert_ne", HAssertNe},
      {"kodo_test_start", HTestStart},
      {"kodo_test_end", HTestEnd},
      {"kodo_test_skip", HTestSkip},
      {"kodo_test_summary", HTestSummary},
      {"kodo_test_set_timeout", HNoOp},
      {"kodo_test_clear_timeout", HNoOp},
      {"kodo_test_isolate_start", HNoOp},
      {"kodo_test_isolate_end", HNoOp},
      {"kodo_prop_start", HPropStart},
      {"kodo_prop_gen_int", HPropGenInt},
      {"kodo_prop_gen_bool", HPropGenBool},
      {"kodo_prop_gen_float", HPropGenFloat},
      {"kodo_prop_gen_string", HPropGenString},
  };
  auto it = table->find(name);
  return it == table->end() ? nullptr : it->second;
}

}  // namespace trove::kodo::interp

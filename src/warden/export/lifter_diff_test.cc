// Differential test of the lifter: random small wasm functions over i32/i64 locals and
// globals, arithmetic, loads and stores, calls, bulk memory and structured control flow are
// run in wabt's reference interpreter (`wasm-interp`) and, lifted to the C dialect, compiled
// with the system C compiler; the results (or traps) and a hash of memory and globals after
// each run must agree. The generator is seeded, so a failure names a reproducible seed.
//
// It shells out to wat2wasm, wasm-interp (Debian's wabt, installed by scripts/setup) and cc,
// in a temporary directory, and is skipped when one of them is missing. The number of
// functions is 300 (6 modules of 50); TROVE_LIFTER_DIFF_FUNCTIONS=N runs more, and
// TROVE_LIFTER_DIFF_KEEP=1 keeps the files (.wat, .wasm, .c) of a passing run.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "warden/export/lifter.h"

namespace trove::warden::exporter {
namespace {

namespace fs = std::filesystem;

enum class T { kI32, kI64 };

std::string_view Wat(T t) { return t == T::kI32 ? "i32" : "i64"; }
std::string_view CT(T t) { return t == T::kI32 ? "int32_t" : "int64_t"; }

// Generates one function body in the flat text format. Locals: p0 i32, p1 i64, l2 l3 i32,
// l4 l5 i64, l6 l7 i32 loop counters (written only by the loops they count).
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  std::string Body(T result) {
    out_.clear();
    labels_.clear();
    const int statements = 2 + static_cast<int>(R(5));
    for (int i = 0; i < statements; ++i) Stmt(3);
    Expr(result, 3);
    return out_;
  }
  std::uint64_t Arg64() { return Const64(); }

 private:
  enum class Label { kBlock, kLoop, kValued };

  std::uint64_t R(std::uint64_t n) { return rng_() % n; }
  bool Chance(int percent) { return R(100) < static_cast<std::uint64_t>(percent); }
  void E(std::string_view s) {
    out_.append("    ");
    out_.append(s);
    out_.push_back('\n');
  }
  std::uint64_t Const64() {
    static constexpr std::uint64_t kInteresting[] = {0,
                                                     1,
                                                     2,
                                                     3,
                                                     7,
                                                     31,
                                                     32,
                                                     63,
                                                     64,
                                                     255,
                                                     0xffffffffffffffffULL,
                                                     0xfffffffffffffffeULL,
                                                     0x7fffffff,
                                                     0x80000000,
                                                     0xffffffff,
                                                     0x8000000000000000ULL,
                                                     0x7fffffffffffffffULL};
    if (Chance(12)) return 0;  // divisors of zero: traps
    if (Chance(60)) return kInteresting[R(std::size(kInteresting))];
    return Chance(50) ? R(2000) : rng_();
  }
  void Const(T t) {
    const std::uint64_t v = Const64();
    if (t == T::kI32) {
      E(fmt::format("i32.const {}", static_cast<std::int32_t>(static_cast<std::uint32_t>(v))));
    } else {
      E(fmt::format("i64.const {}", static_cast<std::int64_t>(v)));
    }
  }
  std::uint32_t Local(T t, bool writable) {
    (void)writable;
    static constexpr std::uint32_t kI32[] = {0, 2, 3};
    static constexpr std::uint32_t kI64[] = {1, 4, 5};
    return t == T::kI32 ? kI32[R(3)] : kI64[R(3)];
  }
  void Addr(int depth) {
    if (Chance(5)) {
      E("i32.const 65533");  // out of bounds for wider accesses: a trap
      return;
    }
    // Mostly a small region, so that loads, stores and calls often touch the same bytes.
    Expr(T::kI32, depth - 1);
    E(Chance(75) ? "i32.const 31" : "i32.const 1023");
    E("i32.and");
  }
  // A branch depth to an enclosing block without results, or -1.
  int BlockTarget() {
    std::vector<int> depths;
    for (std::size_t i = 0; i < labels_.size(); ++i) {
      if (labels_[labels_.size() - 1 - i] == Label::kBlock) depths.push_back(static_cast<int>(i));
    }
    return depths.empty() ? -1 : depths[R(depths.size())];
  }

  void Leaf(T t) {
    if (t == T::kI32 && Chance(5)) {
      E("memory.size");
      return;
    }
    switch (R(3)) {
      case 0:
        Const(t);
        return;
      case 1:
        E(fmt::format("local.get {}", Local(t, false)));
        return;
      default:
        E(fmt::format("global.get {}", t == T::kI32 ? 0 : 1));
        return;
    }
  }

  void Expr(T t, int depth) {
    if (depth <= 0 || Chance(20)) {
      Leaf(t);
      return;
    }
    const std::string_view w = Wat(t);
    switch (R(15)) {
      case 0:
      case 1: {  // binary operator, maybe with a statement between its operands
        static constexpr const char* kOps[] = {"add",  "sub",   "mul",   "and",   "or",
                                               "xor",  "shl",   "shr_s", "shr_u", "rotl",
                                               "rotr", "div_s", "div_u", "rem_s", "rem_u"};
        Expr(t, depth - 1);
        if (Chance(40)) Stmt(depth - 1);
        Expr(t, depth - 1);
        E(std::string(w) + "." + kOps[R(std::size(kOps))]);
        return;
      }
      case 2: {  // comparison or eqz (i32 result)
        if (t == T::kI64) {
          E("i64.const 0");
          Expr(T::kI32, depth - 1);
          E("i64.extend_i32_u");
          E("i64.add");
          return;
        }
        static constexpr const char* kOps[] = {"eq",   "ne",   "lt_s", "lt_u", "gt_s",
                                               "gt_u", "le_s", "le_u", "ge_s", "ge_u"};
        const T o = Chance(50) ? T::kI32 : T::kI64;
        if (Chance(25)) {
          Expr(o, depth - 1);
          E(std::string(Wat(o)) + ".eqz");
          return;
        }
        Expr(o, depth - 1);
        if (Chance(20)) Stmt(depth - 1);
        Expr(o, depth - 1);
        E(std::string(Wat(o)) + "." + kOps[R(std::size(kOps))]);
        return;
      }
      case 3: {  // unary and conversions
        if (Chance(40)) {
          static constexpr const char* kOps[] = {"clz", "ctz", "popcnt", "extend8_s", "extend16_s"};
          Expr(t, depth - 1);
          E(std::string(w) + "." + kOps[R(std::size(kOps))]);
        } else if (t == T::kI32) {
          Expr(T::kI64, depth - 1);
          E("i32.wrap_i64");
        } else {
          Expr(T::kI32, depth - 1);
          E(Chance(50) ? "i64.extend_i32_s" : "i64.extend_i32_u");
        }
        return;
      }
      case 4:
      case 5: {  // load
        static constexpr const char* k32[] = {"i32.load", "i32.load8_s", "i32.load8_u",
                                              "i32.load16_s", "i32.load16_u"};
        static constexpr const char* k64[] = {"i64.load",     "i64.load8_s",  "i64.load8_u",
                                              "i64.load16_s", "i64.load16_u", "i64.load32_s",
                                              "i64.load32_u"};
        Addr(depth);
        const std::string op = t == T::kI32 ? k32[R(std::size(k32))] : k64[R(std::size(k64))];
        E(op + fmt::format(" offset={}", R(17)));
        return;
      }
      case 6:
      case 7:  // call
        if (t == T::kI32) {
          Expr(T::kI32, depth - 1);
          Expr(T::kI32, depth - 1);
          E("call $h0");
        } else {
          Expr(T::kI64, depth - 1);
          E("call $h1");
        }
        return;
      case 8:  // local.tee
        Expr(t, depth - 1);
        E(fmt::format("local.tee {}", Local(t, true)));
        return;
      case 9:  // select
        Expr(t, depth - 1);
        Expr(t, depth - 1);
        Expr(T::kI32, depth - 1);
        E("select");
        return;
      case 10: {  // block with a result and a conditional branch carrying it
        E(std::string("block (result ") + std::string(w) + ")");
        labels_.push_back(Label::kValued);
        if (Chance(50)) Stmt(depth - 1);
        Expr(t, depth - 1);
        Expr(T::kI32, depth - 1);
        E("br_if 0");
        if (Chance(50)) {
          E("drop");
          Expr(t, depth - 1);
        } else if (Chance(30)) {
          E("br 0");
          E("i32.const 5");  // dead code
          E("drop");
        }
        labels_.pop_back();
        E("end");
        return;
      }
      case 11: {  // if with a result
        Expr(T::kI32, depth - 1);
        E(std::string("if (result ") + std::string(w) + ")");
        labels_.push_back(Label::kValued);
        if (Chance(40)) Stmt(depth - 1);
        Expr(t, depth - 1);
        E("else");
        if (Chance(40)) Stmt(depth - 1);
        Expr(t, depth - 1);
        labels_.pop_back();
        E("end");
        return;
      }
      case 12:
      case 13:  // a value pending across a statement
        Expr(t, depth - 1);
        Stmt(depth - 1);
        return;
      default:
        Leaf(t);
        return;
    }
  }

  void Stmt(int depth) {
    if (depth <= 0) {
      E(fmt::format("local.set {}", Local(T::kI32, true)).insert(0, "i32.const 1\n    "));
      return;
    }
    const T t = Chance(50) ? T::kI32 : T::kI64;
    switch (R(15)) {
      case 0:
      case 1:
        Expr(t, depth - 1);
        E(fmt::format("local.set {}", Local(t, true)));
        return;
      case 2:
        Expr(t, depth - 1);
        E(fmt::format("global.set {}", t == T::kI32 ? 0 : 1));
        return;
      case 3:
      case 4: {
        static constexpr const char* k32[] = {"i32.store", "i32.store8", "i32.store16"};
        static constexpr const char* k64[] = {"i64.store", "i64.store8", "i64.store16",
                                              "i64.store32"};
        Addr(depth);
        Expr(t, depth - 1);
        const std::string op = t == T::kI32 ? k32[R(std::size(k32))] : k64[R(std::size(k64))];
        E(op + fmt::format(" offset={}", R(17)));
        return;
      }
      case 5:
        Expr(T::kI32, depth - 1);
        E("call $h2");
        return;
      case 6:
        Expr(t, depth - 1);
        E("drop");
        return;
      case 7: {
        Expr(T::kI32, depth - 1);
        E("if");
        labels_.push_back(Label::kBlock);
        Stmt(depth - 1);
        if (Chance(30)) {
          const int target = BlockTarget();
          if (target >= 0) {
            E(fmt::format("br {}", target));
            E("i32.const 9");  // dead code
            E("drop");
          }
        }
        if (Chance(50)) {
          E("else");
          Stmt(depth - 1);
        }
        labels_.pop_back();
        E("end");
        return;
      }
      case 8: {
        E("block");
        labels_.push_back(Label::kBlock);
        Stmt(depth - 1);
        Expr(T::kI32, depth - 1);
        const int target = BlockTarget();
        E(fmt::format("br_if {}", target < 0 ? 0 : target));
        Stmt(depth - 1);
        labels_.pop_back();
        E("end");
        return;
      }
      case 9: {  // a counted loop
        if (loops_ >= 2) {
          Stmt(depth - 1);
          return;
        }
        const std::uint32_t counter = 6 + loops_;
        ++loops_;
        E(fmt::format("i32.const {}", 1 + R(4)));
        E(fmt::format("local.set {}", counter));
        E("loop");
        labels_.push_back(Label::kLoop);
        Stmt(depth - 1);
        Stmt(depth - 1);
        E(fmt::format("local.get {}", counter));
        E("i32.const 1");
        E("i32.sub");
        E(fmt::format("local.tee {}", counter));
        E("br_if 0");
        labels_.pop_back();
        E("end");
        --loops_;
        return;
      }
      case 10:  // an early return
        Expr(T::kI32, depth - 1);
        E("if");
        labels_.push_back(Label::kBlock);
        Expr(result_, depth - 1);
        E("return");
        labels_.pop_back();
        E("end");
        return;
      case 11: {  // bulk memory
        const bool fill = Chance(50);
        Addr(depth);
        if (fill) {
          Expr(T::kI32, depth - 1);
        } else {
          Addr(depth);
        }
        if (Chance(5)) {
          E("i32.const 70000");  // out of bounds: a trap
        } else {
          Expr(T::kI32, depth - 1);
          E("i32.const 63");
          E("i32.and");
        }
        E(fill ? "memory.fill" : "memory.copy");
        return;
      }
      case 13: {  // a br_table over three nested blocks and any enclosing one
        E("block");
        E("block");
        E("block");
        labels_.insert(labels_.end(), 3, Label::kBlock);
        Expr(T::kI32, depth - 1);
        std::string line = "br_table";
        for (std::uint64_t i = 0, n = 1 + R(3); i <= n; ++i) {
          line += fmt::format(" {}", BlockTarget());  // the last one is the default
        }
        E(line);
        labels_.pop_back();
        E("end");
        Stmt(depth - 1);
        labels_.pop_back();
        E("end");
        Stmt(depth - 1);
        labels_.pop_back();
        E("end");
        return;
      }
      case 12:  // a value pending across a statement, then stored in a local
        Expr(t, depth - 1);
        Stmt(depth - 1);
        E(fmt::format("local.set {}", Local(t, true)));
        return;
      default:
        Expr(T::kI32, depth - 1);
        E("call $h2");
        return;
    }
  }

 public:
  T result_ = T::kI32;

 private:
  std::mt19937_64 rng_;
  std::string out_;
  std::vector<Label> labels_;
  std::uint32_t loops_ = 0;
};

// Helpers every module has (function indices 0-4): calls with side effects on memory and
// globals, the reset run before each function, and the hash of memory and globals. The
// module is left open for the generated functions.
constexpr const char* kModuleHead = R"((module
  (memory 1)
  (global (mut i32) (i32.const 0))
  (global (mut i64) (i64.const 0))
  (func $h0 (param i32 i32) (result i32)
    (global.set 0 (i32.add (global.get 0) (local.get 0)))
    (i32.store8 (i32.and (local.get 0) (i32.const 255)) (local.get 1))
    (i32.xor (i32.add (i32.mul (local.get 0) (i32.const 3)) (local.get 1)) (global.get 0)))
  (func $h1 (param i64) (result i64)
    (global.set 1 (i64.add (i64.mul (global.get 1) (i64.const 31)) (local.get 0)))
    (i64.xor (global.get 1) (i64.load offset=16 (i32.const 0))))
  (func $h2 (param i32)
    (i32.store (i32.and (local.get 0) (i32.const 1020)) (i32.add (local.get 0) (i32.const 1)))
    (global.set 0 (i32.xor (global.get 0) (local.get 0))))
  (func $reset (local i32)
    (global.set 0 (i32.const 12345))
    (global.set 1 (i64.const 987654321))
    (loop
      (i32.store8 (local.get 0) (i32.add (i32.mul (local.get 0) (i32.const 7)) (i32.const 3)))
      (local.set 0 (i32.add (local.get 0) (i32.const 1)))
      (br_if 0 (i32.lt_u (local.get 0) (i32.const 2048)))))
  (func $hash (result i64) (local i32 i64)
    (local.set 1 (i64.const 1469598103934665603))
    (loop
      (local.set 1 (i64.mul (i64.xor (local.get 1) (i64.load8_u (local.get 0)))
                            (i64.const 1099511628211)))
      (local.set 0 (i32.add (local.get 0) (i32.const 1)))
      (br_if 0 (i32.lt_u (local.get 0) (i32.const 2048))))
    (local.set 1 (i64.mul (i64.xor (local.get 1) (i64.extend_i32_u (global.get 0)))
                          (i64.const 1099511628211)))
    (i64.mul (i64.xor (local.get 1) (global.get 1)) (i64.const 1099511628211))))";
constexpr std::uint32_t kFirstGenerated = 5;

constexpr const char* kPrelude = R"(#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
static uint8_t wasm_mem[65536];
static jmp_buf wasm_jmp;
static void wasm_trap(void) { longjmp(wasm_jmp, 1); }
static void unreachable(void) { wasm_trap(); }
static uint8_t* wasm_at(uint64_t a, uint64_t off, uint64_t n) {
  uint64_t e = a + off;
  if (e > sizeof wasm_mem || n > sizeof wasm_mem - e) wasm_trap();
  return wasm_mem + e;
}
#define WASM_DEF(T) \
  static T wasm_load_##T(uint64_t a, uint64_t off) { T v; memcpy(&v, wasm_at(a, off, sizeof(T)), sizeof(T)); return v; } \
  static void wasm_store_##T(uint64_t a, uint64_t off, T v) { memcpy(wasm_at(a, off, sizeof(T)), &v, sizeof(T)); }
WASM_DEF(int8_t) WASM_DEF(uint8_t) WASM_DEF(int16_t) WASM_DEF(uint16_t) WASM_DEF(int32_t)
WASM_DEF(uint32_t) WASM_DEF(int64_t) WASM_DEF(uint64_t)
#define WASM_LOAD(T, m, a, off) wasm_load_##T((uint32_t)(a), (off))
#define WASM_STORE(T, m, a, off, v) wasm_store_##T((uint32_t)(a), (off), (T)(v))
static int32_t memory_size(void) { return 1; }
static void memory_fill(int32_t d, int32_t v, int32_t n) {
  memset(wasm_at((uint32_t)d, 0, (uint32_t)n), v, (uint32_t)n);
}
static void memory_copy(int32_t d, int32_t s, int32_t n) {
  uint8_t* from = wasm_at((uint32_t)s, 0, (uint32_t)n);
  memmove(wasm_at((uint32_t)d, 0, (uint32_t)n), from, (uint32_t)n);
}
#define WASM_INT(N, S, U) \
  static S i##N##_div_s(S a, S b) { if (b == 0 || (a == INT##N##_MIN && b == -1)) wasm_trap(); return a / b; } \
  static S i##N##_div_u(S a, S b) { if (b == 0) wasm_trap(); return (S)((U)a / (U)b); } \
  static S i##N##_rem_s(S a, S b) { if (b == 0) wasm_trap(); return b == -1 ? 0 : a % b; } \
  static S i##N##_rem_u(S a, S b) { if (b == 0) wasm_trap(); return (S)((U)a % (U)b); } \
  static S i##N##_shl(S a, S b) { return (S)((U)a << (b & (N - 1))); } \
  static S i##N##_shr_s(S a, S b) { return a >> (b & (N - 1)); } \
  static S i##N##_shr_u(S a, S b) { return (S)((U)a >> (b & (N - 1))); } \
  static S i##N##_rotl(S a, S b) { unsigned k = b & (N - 1); return (S)(((U)a << k) | ((U)a >> ((N - k) & (N - 1)))); } \
  static S i##N##_rotr(S a, S b) { unsigned k = b & (N - 1); return (S)(((U)a >> k) | ((U)a << ((N - k) & (N - 1)))); } \
  static S i##N##_popcnt(S a) { S c = 0; for (U x = (U)a; x; x &= x - 1) ++c; return c; } \
  static S i##N##_clz(S a) { S c = 0; for (U x = (U)a; c < N && !(x >> (N - 1)); x <<= 1) ++c; return c; } \
  static S i##N##_ctz(S a) { S c = 0; for (U x = (U)a; c < N && !(x & 1); x >>= 1) ++c; return c; }
WASM_INT(32, int32_t, uint32_t)
WASM_INT(64, int64_t, uint64_t)
int32_t g0;
int64_t g1;
)";

bool HaveTool(const char* name) {
  return std::system((std::string("command -v ") + name + " >/dev/null 2>&1").c_str()) == 0;
}

// Runs `command` (stderr merged) and returns its output.
std::string Shell(const std::string& command, int* status) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) {
    *status = -1;
    return out;
  }
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const std::size_t error = line.find("=> error");
    if (error != std::string::npos) line.resize(error + 8);  // the trap message differs
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

struct Batch {
  std::string wat;
  std::vector<T> results;
  std::vector<std::string> bodies;  // wat text of each generated function
  std::vector<std::pair<std::int32_t, std::int64_t>> args;
};

Batch Generate(std::uint64_t seed, int count) {
  Batch b;
  Generator gen(seed);
  std::string funcs;
  std::string wrappers;
  std::string exports;
  for (int k = 0; k < count; ++k) {
    const T result = (k % 3 == 2) ? T::kI64 : T::kI32;
    gen.result_ = result;
    const std::string body = gen.Body(result);
    const auto a0 = static_cast<std::int32_t>(static_cast<std::uint32_t>(gen.Arg64()));
    const auto a1 = static_cast<std::int64_t>(gen.Arg64());
    b.results.push_back(result);
    b.bodies.push_back(body);
    b.args.emplace_back(a0, a1);
    funcs += "  (func $f" + std::to_string(k) + " (param i32 i64) (result " +
             std::string(Wat(result)) + ") (local i32 i32 i64 i64 i32 i32)\n" + body + "  )\n";
    wrappers += "  (func $run" + std::to_string(k) + " (result " + std::string(Wat(result)) +
                ") call $reset i32.const " + std::to_string(a0) + " i64.const " +
                std::to_string(a1) + " call $f" + std::to_string(k) + ")\n";
    exports += "  (export \"run" + std::to_string(k) + "\" (func $run" + std::to_string(k) +
               "))\n  (export \"hash" + std::to_string(k) + "\" (func $hash))\n";
  }
  b.wat = std::string(kModuleHead) + funcs + wrappers + exports + ")\n";
  return b;
}

std::string NameOfIndex(std::uint32_t f) { return "fn" + std::to_string(f); }

// The C program: prelude, prototypes, the lifted module, and a main that prints what
// wasm-interp prints for the exports run0, hash0, run1, ...
Result<std::string> CProgram(const Batch& b, const std::vector<std::uint8_t>& wasm) {
  const auto count = static_cast<std::uint32_t>(b.results.size());
  ASSIGN_OR_RETURN(auto lifted, LiftModule(wasm, NameOfIndex, LiftOptions{.dialect = Dialect::kC}));
  std::vector<std::string> protos = {"int32_t fn0(int32_t p0, int32_t p1)",
                                     "int64_t fn1(int64_t p0)", "void fn2(int32_t p0)",
                                     "void fn3(void)", "int64_t fn4(void)"};
  for (std::uint32_t k = 0; k < count; ++k) {
    protos.push_back(std::string(CT(b.results[k])) + " fn" + std::to_string(kFirstGenerated + k) +
                     "(int32_t p0, int64_t p1)");
  }
  for (std::uint32_t k = 0; k < count; ++k) {
    protos.push_back(std::string(CT(b.results[k])) + " fn" +
                     std::to_string(kFirstGenerated + count + k) + "(void)");
  }
  std::string c = kPrelude;
  for (const std::string& p : protos) c += p + ";\n";
  for (std::uint32_t i = 0; i < protos.size(); ++i) {
    auto it = lifted.find(i);
    if (it == lifted.end()) return Status::Internal("function not lifted");
    c += protos[i] + " {\n" + it->second + "}\n";
  }
  c += "int main(void) {\n";
  for (std::uint32_t k = 0; k < count; ++k) {
    const std::string f = "fn" + std::to_string(kFirstGenerated + k);
    const std::string call = f + "((int32_t)" + std::to_string(b.args[k].first) + ", (int64_t)" +
                             std::to_string(b.args[k].second) + "LL)";
    c += "  fn3();\n  if (setjmp(wasm_jmp) == 0) {\n";
    if (b.results[k] == T::kI32) {
      c += "    printf(\"run" + std::to_string(k) + "() => i32:%u\\n\", (unsigned)(uint32_t)" +
           call + ");\n";
    } else {
      c += "    printf(\"run" + std::to_string(k) +
           "() => i64:%llu\\n\", (unsigned long long)(uint64_t)" + call + ");\n";
    }
    c += "  } else {\n    printf(\"run" + std::to_string(k) + "() => error\\n\");\n  }\n";
    c += "  printf(\"hash" + std::to_string(k) +
         "() => i64:%llu\\n\", (unsigned long long)(uint64_t)fn4());\n";
  }
  c += "  return 0;\n}\n";
  return c;
}

TEST(LifterDiffTest, LiftedCMatchesTheReferenceInterpreter) {
  if (!HaveTool("wat2wasm") || !HaveTool("wasm-interp") || !HaveTool("cc")) {
    GTEST_SKIP() << "wat2wasm, wasm-interp or cc not installed (scripts/setup installs wabt)";
  }
  int total = 300;
  if (const char* env = std::getenv("TROVE_LIFTER_DIFF_FUNCTIONS")) total = std::atoi(env);
  constexpr int kPerModule = 50;
  std::string tmpl = (fs::temp_directory_path() / "trove-lifter-diff-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  bool all_passed = true;
  for (int start = 0, batch = 0; start < total; start += kPerModule, ++batch) {
    const std::uint64_t seed = 0x7121f7ULL + static_cast<std::uint64_t>(batch);
    const Batch b = Generate(seed, std::min(kPerModule, total - start));
    const fs::path wat = dir / ("m" + std::to_string(batch) + ".wat");
    const fs::path wasm = dir / ("m" + std::to_string(batch) + ".wasm");
    const fs::path c = dir / ("m" + std::to_string(batch) + ".c");
    const fs::path exe = dir / ("m" + std::to_string(batch));
    std::ofstream(wat) << b.wat;
    int status = 0;
    std::string out = Shell("wat2wasm " + wat.string() + " -o " + wasm.string(), &status);
    ASSERT_EQ(status, 0) << "seed " << seed << ": wat2wasm: " << out << " in " << wat;
    std::ifstream in(wasm, std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                          std::istreambuf_iterator<char>());
    const std::string expected = Shell("wasm-interp --run-all-exports " + wasm.string(), &status);
    ASSERT_EQ(status, 0) << "seed " << seed << ": wasm-interp: " << expected;
    Result<std::string> program = CProgram(b, bytes);
    ASSERT_TRUE(program.ok()) << "seed " << seed << ": " << program.status().ToString();
    std::ofstream(c) << *program;
    out = Shell("cc -std=c11 -O1 -fwrapv -w -o " + exe.string() + " " + c.string(), &status);
    ASSERT_EQ(status, 0) << "seed " << seed << ": cc: " << out.substr(0, 4000) << " in " << c;
    const std::string actual = Shell(exe.string(), &status);
    ASSERT_EQ(status, 0) << "seed " << seed << ": " << actual;
    const std::vector<std::string> want = Lines(expected);
    const std::vector<std::string> got = Lines(actual);
    ASSERT_EQ(want.size(), got.size()) << "seed " << seed << "\n" << expected << "\n" << actual;
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (want[i] == got[i]) continue;
      all_passed = false;
      const std::size_t k = i / 2;
      ADD_FAILURE() << "seed " << seed << " function f" << k << " (fn" << kFirstGenerated + k
                    << "): wasm-interp says `" << want[i] << "`, the lifted C says `" << got[i]
                    << "`\nwat:\n"
                    << b.bodies[k] << "files in " << dir;
      break;  // later hashes follow from the same run
    }
  }
  if (all_passed && std::getenv("TROVE_LIFTER_DIFF_KEEP") == nullptr) fs::remove_all(dir);
}

}  // namespace
}  // namespace trove::warden::exporter

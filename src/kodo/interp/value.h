// Runtime values of the MIR interpreter and the builtin table (runtime.cc). Internal to
// kodo/interp: a value is a tag plus an integer, a double or a shared heap object; lists, maps,
// sets, string builders and iterators are shared handles, as upstream's runtime makes them
// (docs/kodo.md §4.9: copying a variable aliases the same collection).
//
// Thread safety: one Ctx per run; values are not shared between runs.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kodo/interp/interp.h"

namespace trove::kodo::interp {

enum class Tag : std::uint8_t {
  kUnit,
  kInt,
  kFloat,
  kBool,
  kStr,
  kList,
  kMap,
  kSet,
  kStruct,
  kEnum,
  kTuple,
  kClosure,
  kFunc,
  kIter,
  kBuilder,
  kFuture,
};

// Live bytes of runtime objects, for RunOptions::max_memory_bytes.
struct MemCounter {
  std::uint64_t live = 0;
};

struct HeapObj {
  explicit HeapObj(std::shared_ptr<MemCounter> m, std::uint64_t bytes = 64)
      : mem(std::move(m)), accounted(bytes) {
    mem->live += accounted;
  }
  virtual ~HeapObj() { mem->live -= accounted; }
  void Account(std::uint64_t more) {
    accounted += more;
    mem->live += more;
  }
  std::shared_ptr<MemCounter> mem;
  std::uint64_t accounted;
};

struct RValue;

// Releases the heap objects `items` refer to without recursion on the host stack: a destructor
// that would free a child moves it to a per-thread queue, and the outermost release drains that
// queue one object at a time. So a list nested a million levels deep, or a long linked chain of
// structs and enums, is destroyed iteratively (runtime.cc).
void ReleaseChildren(std::vector<RValue>& items);
void ReleaseChild(std::shared_ptr<HeapObj>& child);

struct RValue {
  Tag tag = Tag::kUnit;
  std::int64_t i = 0;
  double f = 0;
  std::shared_ptr<HeapObj> o;

  static RValue Int(std::int64_t v) {
    RValue r;
    r.tag = Tag::kInt;
    r.i = v;
    return r;
  }
  static RValue Float(double v) {
    RValue r;
    r.tag = Tag::kFloat;
    r.f = v;
    return r;
  }
  static RValue Bool(bool v) {
    RValue r;
    r.tag = Tag::kBool;
    r.i = v ? 1 : 0;
    return r;
  }
  static RValue Func(int fn) {
    RValue r;
    r.tag = Tag::kFunc;
    r.i = fn;
    return r;
  }
  static RValue Obj(Tag t, std::shared_ptr<HeapObj> obj) {
    RValue r;
    r.tag = t;
    r.o = std::move(obj);
    return r;
  }
  bool Truthy() const { return tag == Tag::kBool || tag == Tag::kInt ? i != 0 : false; }
  const std::string& str() const;
};

struct StrObj : HeapObj {
  StrObj(std::shared_ptr<MemCounter> m, std::string v)
      : HeapObj(std::move(m), 32 + v.size()), s(std::move(v)) {}
  std::string s;
};

struct ListObj : HeapObj {
  explicit ListObj(std::shared_ptr<MemCounter> m) : HeapObj(std::move(m)) {}
  ~ListObj() override { ReleaseChildren(items); }
  void Push(RValue v) {
    items.push_back(std::move(v));
    Account(sizeof(RValue));
  }
  std::vector<RValue> items;
};

// Map and Set: insertion-ordered, keyed by Int or String (docs/decisions/0062).
struct MapObj : HeapObj {
  explicit MapObj(std::shared_ptr<MemCounter> m) : HeapObj(std::move(m)) {}
  ~MapObj() override {
    ReleaseChildren(keys);
    ReleaseChildren(vals);
  }
  std::vector<RValue> keys;
  std::vector<RValue> vals;
  std::unordered_map<std::string, std::size_t> index;
};

struct StructObj : HeapObj {
  explicit StructObj(std::shared_ptr<MemCounter> m) : HeapObj(std::move(m)) {}
  ~StructObj() override { ReleaseChildren(fields); }
  std::string name;
  const std::vector<std::string>* field_names = nullptr;  // in the MIR program
  std::vector<RValue> fields;
};

struct EnumObj : HeapObj {
  explicit EnumObj(std::shared_ptr<MemCounter> m) : HeapObj(std::move(m)) {}
  ~EnumObj() override { ReleaseChildren(payload); }
  std::string enum_name;
  std::string variant;
  std::int64_t disc = 0;
  std::vector<RValue> payload;
};

struct ClosureObj : HeapObj {
  explicit ClosureObj(std::shared_ptr<MemCounter> m) : HeapObj(std::move(m)) {}
  ~ClosureObj() override { ReleaseChildren(captures); }
  int fn = 0;
  std::vector<RValue> captures;
};

struct IterObj : HeapObj {
  explicit IterObj(std::shared_ptr<MemCounter> m) : HeapObj(std::move(m)) {}
  ~IterObj() override;
  std::shared_ptr<HeapObj> source;  // a ListObj, or a snapshot list
  std::size_t next = 0;
  RValue current;
};

struct BuilderObj : HeapObj {
  explicit BuilderObj(std::shared_ptr<MemCounter> m) : HeapObj(std::move(m)) {}
  std::string s;
};

// The future of an `async fn` call: done once its task returned.
struct FutureObj : HeapObj {
  explicit FutureObj(std::shared_ptr<MemCounter> m) : HeapObj(std::move(m)) {}
  ~FutureObj() override;
  bool done = false;
  RValue value;
};

inline IterObj::~IterObj() {
  ReleaseChild(source);
  ReleaseChild(current.o);
}
inline FutureObj::~FutureObj() { ReleaseChild(value.o); }

// A channel (docs/kodo.md §4.9): unbounded like upstream's `mpsc::channel`, a handle is an Int
// (upstream's counter, from 0), `channel_free` closes it.
struct Channel {
  std::deque<RValue> queue;
  bool freed = false;
};

inline const std::string& RValue::str() const {
  static const std::string kEmpty;
  return tag == Tag::kStr ? static_cast<StrObj*>(o.get())->s : kEmpty;
}

// What builtins reach: output, limits, the trap state.
struct Ctx {
  explicit Ctx(const RunOptions& o) : options(o), mem(std::make_shared<MemCounter>()) {}
  const RunOptions& options;
  std::shared_ptr<MemCounter> mem;
  std::string out;
  std::string err;
  bool stopped = false;
  int exit_code = 0;
  std::uint64_t rng = 0x2545F4914F6CDD1DULL;
  // `kodoc test` (test_hooks.cc): whether an assertion of the current test failed, and the
  // property-test generator's state.
  bool test_failed = false;
  std::uint64_t prop_rng = 0;
  std::vector<Channel> channels;
  // JSON handles (runtime.cc owns the type; handle n is slot n - 1, 0 means "no value").
  std::shared_ptr<void> json;

  RValue Str(std::string s) { return RValue::Obj(Tag::kStr, std::make_shared<StrObj>(mem, s)); }
  void Out(std::string_view s) {
    out.append(s);
    if (options.write_out && out.size() >= (64u << 10)) FlushOut();
  }
  void Err(std::string_view s) {
    err.append(s);
    if (options.write_err) {
      options.write_err(err);
      err.clear();
    }
  }
  void FlushOut() {
    if (options.write_out && !out.empty()) {
      options.write_out(out);
      out.clear();
    }
  }
  void Flush() {
    FlushOut();
    if (options.write_err && !err.empty()) {
      options.write_err(err);
      err.clear();
    }
  }
  // Stops the program with `code`, printing `message` (when not empty) to stderr. Returns false
  // so that callers can `return ctx.Trap(...)`.
  bool Trap(int code, std::string_view message) {
    if (stopped) return false;
    FlushOut();
    if (!message.empty()) {
      Err(message);
      Err("\n");
    }
    stopped = true;
    exit_code = code;
    return false;
  }
  // `exit(n)`.
  bool Exit(int code) {
    stopped = true;
    exit_code = code;
    return false;
  }
};

using Builtin = bool (*)(Ctx&, std::vector<RValue>&, RValue&);

// Returns the builtin named `name` (docs/kodo.md §4.6 names, their method aliases, runtime hooks),
// or null.
Builtin FindBuiltin(const std::string& name);
// The assertions and the `kodoc test` hooks (test_hooks.cc), or null; FindBuiltin asks it first.
Builtin FindTestBuiltin(const std::string& name);

// Deep equality of two values (structs, enums, tuples, lists by content).
bool Equal(const RValue& a, const RValue& b);

// The text `kodo_to_string` gives a value (f-strings): Int decimal, Float64 per FormatFloat,
// Bool `true`/`false`, a String itself.
std::string ToText(const RValue& v);

}  // namespace trove::kodo::interp

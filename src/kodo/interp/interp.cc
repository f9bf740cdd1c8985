#include "kodo/interp/interp.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <utility>

#include "kodo/interp/value.h"

namespace trove::kodo::interp {

std::string FormatFloat(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  if (x == 0) return std::signbit(x) ? "-0" : "0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci = [-]D[.DDD]e[+-]XX
  bool neg = false;
  std::size_t pos = 0;
  if (sci[0] == '-') {
    neg = true;
    pos = 1;
  }
  const std::size_t e = sci.find('e');
  std::string digits;
  for (std::size_t i = pos; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exp = std::atoi(sci.c_str() + e + 1);
  // value = 0.d1d2d3... * 10^(exp+1)
  const int point = exp + 1;  // digits before the decimal point
  std::string out;
  if (point <= 0) {
    out = "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
  } else if (static_cast<std::size_t>(point) >= digits.size()) {
    out = digits + std::string(static_cast<std::size_t>(point) - digits.size(), '0');
  } else {
    out = digits.substr(0, static_cast<std::size_t>(point)) + "." +
          digits.substr(static_cast<std::size_t>(point));
  }
  return neg ? "-" + out : out;
}

namespace {

using mir::InstKind;
using mir::TermKind;
using mir::ValueKind;

// How a Call instruction's callee was resolved when the program was loaded.
enum class CallKind : std::uint8_t {
  kUser,
  kBuiltin,
  kMethod,         // __method.NAME: resolved from the receiver's runtime type
  kClosureNew,     // kodo_closure_new
  kSpawn,          // kodo_spawn(closure): a deferred task
  kParallelBegin,  // kodo_parallel_begin() -> group
  kParallelSpawn,  // kodo_parallel_spawn(group, closure)
  kParallelJoin,   // kodo_parallel_join(group): waits for the group's tasks
  kAwait,          // kodo_await(future): waits for it
  kRecv,           // channel_recv*(ch): waits for a value
  kSelect,         // channel_select_2/3(ch...): waits for a channel with a value
  kYieldNow,       // kodo_yield(): lets the other ready tasks run
  kUnknown,
};

struct Resolved {
  CallKind kind = CallKind::kUnknown;
  int fn = -1;
  Builtin builtin = nullptr;
  std::string method;
};

struct Frame {
  int fn = 0;
  std::vector<RValue> locals;
  std::uint32_t block = 0;
  std::uint32_t ip = 0;
  mir::LocalId dest = mir::kNoLocal;  // in the caller
};

// What a blocked task waits for. A blocked task retries its instruction when it resumes, and it
// resumes only once the condition holds, so nothing spins.
enum class Wait : std::uint8_t { kNone, kChannel, kSelect, kFuture, kGroup };

// A task of the cooperative scheduler (docs/decisions/0067): its own frame stack; it runs until
// it blocks or ends.
struct Task {
  std::uint32_t id = 0;
  std::string origin;  // "main", "spawn", "parallel", "async `f`", "message `A_h`"
  std::vector<Frame> frames;
  std::shared_ptr<FutureObj> future;  // completed when the task ends (async calls)
  std::int64_t group = -1;            // its `parallel` group
  Wait wait = Wait::kNone;
  std::vector<std::int64_t> wait_ids;  // channels, or the group
  std::shared_ptr<FutureObj> wait_future;
};

struct Group {
  std::vector<std::uint32_t> queued;  // spawned, not started until the join
  std::size_t pending = 0;            // tasks not yet finished
};

inline constexpr std::uint64_t kTaskBytes = 256;

class Machine {
 public:
  Machine(const mir::Program& program, const RunOptions& options) : p_(program), ctx_(options) {}

  RunResult Run();

 private:
  bool Load();
  bool Eval(const mir::Value& v, const Frame& f, RValue& out);
  bool Binary(ast::BinOp op, const RValue& a, const RValue& b, RValue& out);
  bool Push(Task& t, int fn, std::vector<RValue> args, mir::LocalId dest);
  // Calls user function `fn`: pushes a frame, or starts a task for an `async fn` (the result is
  // its future) or queues a message for an actor handler.
  bool Invoke(int fn, std::vector<RValue> args, mir::LocalId dest, Frame& f);
  bool CallResolved(const Resolved& r, const mir::Inst& inst, Frame& f, std::vector<RValue>& args);
  bool CallValue(const RValue& callee, std::vector<RValue>& args, mir::LocalId dest, Frame& f);
  std::string TypeName(const RValue& v) const;

  // Scheduler.
  Task* NewTask(std::string origin);
  // Starts `callee` (a closure or function value) with no arguments in a new task.
  Task* StartTask(const RValue& callee, std::string origin);
  void SetResult(Frame& f, mir::LocalId dest, RValue v) {
    if (dest != mir::kNoLocal) f.locals[dest] = std::move(v);
  }
  // Blocks the current task on `wait`; the instruction runs again when the task resumes.
  bool Block(Frame& f, Wait wait, std::vector<std::int64_t> ids,
             std::shared_ptr<FutureObj> future = nullptr);
  bool Ready(const Task& t) const;
  void Finish(RValue result);
  // Picks the next task: the first blocked task that can go on, else the first ready task, else
  // the first deferred one. Returns false when none is left (or on a deadlock, which traps).
  bool Schedule();
  std::string Describe(const Task& t) const;

  const mir::Program& p_;
  Ctx ctx_;
  std::vector<std::vector<std::vector<Resolved>>> resolved_;  // [fn][block][inst]
  std::vector<std::unique_ptr<Task>> tasks_;                  // by id; null once finished
  Task* cur_ = nullptr;
  bool switch_ = false;  // the current task blocked or yielded
  bool yielded_ = false;
  std::deque<std::uint32_t> ready_;     // started async calls, joined groups, yielded tasks
  std::deque<std::uint32_t> deferred_;  // `spawn` and actor messages: run when nothing else can
  std::vector<std::uint32_t> blocked_;  // in the order they blocked
  std::vector<Group> groups_;
};

Task* Machine::NewTask(std::string origin) {
  auto t = std::make_unique<Task>();
  t->id = static_cast<std::uint32_t>(tasks_.size());
  t->origin = std::move(origin);
  ctx_.mem->live += kTaskBytes;
  tasks_.push_back(std::move(t));
  return tasks_.back().get();
}

Task* Machine::StartTask(const RValue& callee, std::string origin) {
  Task* t = NewTask(std::move(origin));
  if (callee.tag == Tag::kFunc) {
    if (!Push(*t, static_cast<int>(callee.i), {}, mir::kNoLocal)) return nullptr;
  } else if (callee.tag == Tag::kClosure) {
    auto* c = static_cast<ClosureObj*>(callee.o.get());
    if (!Push(*t, c->fn, c->captures, mir::kNoLocal)) return nullptr;
  } else {
    ctx_.Trap(kExitAbort, "spawn of a value that is not a function");
    return nullptr;
  }
  return t;
}

bool Machine::Block(Frame& f, Wait wait, std::vector<std::int64_t> ids,
                    std::shared_ptr<FutureObj> future) {
  --f.ip;  // run the instruction again on resumption
  cur_->wait = wait;
  cur_->wait_ids = std::move(ids);
  cur_->wait_future = std::move(future);
  switch_ = true;
  return true;
}

bool Machine::Ready(const Task& t) const {
  auto valid = [&](std::int64_t ch) {
    return ch >= 0 && static_cast<std::uint64_t>(ch) < ctx_.channels.size() &&
           !ctx_.channels[static_cast<std::size_t>(ch)].freed;
  };
  auto has_value = [&](std::int64_t ch) {
    return valid(ch) && !ctx_.channels[static_cast<std::size_t>(ch)].queue.empty();
  };
  switch (t.wait) {
    case Wait::kNone:
      return true;
    case Wait::kChannel:
      // A receive from a channel freed meanwhile gives 0, as upstream's.
      return !valid(t.wait_ids.at(0)) || has_value(t.wait_ids.at(0));
    case Wait::kSelect:
      for (std::int64_t ch : t.wait_ids) {
        if (has_value(ch)) return true;
      }
      return false;
    case Wait::kFuture:
      return t.wait_future == nullptr || t.wait_future->done;
    case Wait::kGroup:
      return groups_[static_cast<std::size_t>(t.wait_ids.at(0))].pending == 0;
  }
  return true;
}

std::string Machine::Describe(const Task& t) const {
  std::string what;
  switch (t.wait) {
    case Wait::kChannel:
      what = fmt::format("receiving from channel {}", t.wait_ids.at(0));
      break;
    case Wait::kSelect: {
      what = "in a select over channels";
      for (std::size_t i = 0; i < t.wait_ids.size(); ++i) {
        what += fmt::format("{}{}", i == 0 ? " " : ", ", t.wait_ids[i]);
      }
      break;
    }
    case Wait::kFuture:
      what = "awaiting a future";
      break;
    case Wait::kGroup:
      what = "joining a parallel block";
      break;
    case Wait::kNone:
      what = "running";
      break;
  }
  const mir::Function& fn = p_.functions[static_cast<std::size_t>(t.frames.back().fn)];
  return fmt::format("task {} ({}) {} in function `{}`", t.id, t.origin, what, fn.name);
}

void Machine::Finish(RValue result) {
  Task* t = cur_;
  if (t->future) {
    t->future->done = true;
    t->future->value = std::move(result);
  }
  if (t->group >= 0) --groups_[static_cast<std::size_t>(t->group)].pending;
  ctx_.mem->live -= kTaskBytes;
  cur_ = nullptr;
  tasks_[t->id].reset();
}

bool Machine::Schedule() {
  for (std::size_t i = 0; i < blocked_.size(); ++i) {
    Task* t = tasks_[blocked_[i]].get();
    if (Ready(*t)) {
      blocked_.erase(blocked_.begin() + static_cast<std::ptrdiff_t>(i));
      t->wait = Wait::kNone;
      t->wait_future.reset();
      cur_ = t;
      return true;
    }
  }
  for (std::deque<std::uint32_t>* q : {&ready_, &deferred_}) {
    if (!q->empty()) {
      cur_ = tasks_[q->front()].get();
      q->pop_front();
      return true;
    }
  }
  if (blocked_.empty()) return false;
  std::string msg = fmt::format("deadlock: all {} remaining tasks are blocked", blocked_.size());
  for (std::uint32_t id : blocked_) msg += "\n  " + Describe(*tasks_[id]);
  ctx_.Trap(kExitDeadlock, msg);
  return false;
}

std::string Machine::TypeName(const RValue& v) const {
  switch (v.tag) {
    case Tag::kInt:
      return "Int";
    case Tag::kFloat:
      return "Float64";
    case Tag::kBool:
      return "Bool";
    case Tag::kStr:
      return "String";
    case Tag::kList:
      return "List";
    case Tag::kMap:
      return "Map";
    case Tag::kSet:
      return "Set";
    case Tag::kStruct:
      return static_cast<StructObj*>(v.o.get())->name;
    case Tag::kEnum:
      return static_cast<EnumObj*>(v.o.get())->enum_name;
    case Tag::kTuple:
      return "Tuple";
    default:
      return "?";
  }
}

bool Machine::Load() {
  resolved_.resize(p_.functions.size());
  for (std::size_t fi = 0; fi < p_.functions.size(); ++fi) {
    const mir::Function& fn = p_.functions[fi];
    resolved_[fi].resize(fn.blocks.size());
    for (std::size_t bi = 0; bi < fn.blocks.size(); ++bi) {
      for (const mir::Inst& inst : fn.blocks[bi].insts) {
        Resolved r;
        if (inst.kind == InstKind::kCall) {
          const std::string& c = inst.callee;
          if (int idx = p_.Find(c); idx >= 0) {
            r.kind = CallKind::kUser;
            r.fn = idx;
          } else if (c.rfind("__method.", 0) == 0) {
            r.kind = CallKind::kMethod;
            r.method = c.substr(9);
          } else if (c == "kodo_closure_new") {
            r.kind = CallKind::kClosureNew;
          } else if (c == "kodo_spawn") {
            r.kind = CallKind::kSpawn;
          } else if (c == "kodo_parallel_begin") {
            r.kind = CallKind::kParallelBegin;
          } else if (c == "kodo_parallel_spawn") {
            r.kind = CallKind::kParallelSpawn;
          } else if (c == "kodo_parallel_join") {
            r.kind = CallKind::kParallelJoin;
          } else if (c == "kodo_await") {
            r.kind = CallKind::kAwait;
          } else if (c == "channel_recv" || c == "channel_recv_bool" ||
                     c == "channel_recv_string") {
            r.kind = CallKind::kRecv;
          } else if (c == "channel_select_2" || c == "channel_select_3") {
            r.kind = CallKind::kSelect;
          } else if (c == "kodo_yield") {
            r.kind = CallKind::kYieldNow;
          } else if (Builtin b = FindBuiltin(c)) {
            r.kind = CallKind::kBuiltin;
            r.builtin = b;
          } else {
            r.kind = CallKind::kUnknown;
            r.method = c;
          }
        }
        resolved_[fi][bi].push_back(std::move(r));
      }
    }
  }
  return true;
}

bool Machine::Binary(ast::BinOp op, const RValue& a, const RValue& b, RValue& out) {
  using ast::BinOp;
  if (a.tag == Tag::kInt && b.tag == Tag::kInt) {
    const auto ua = static_cast<std::uint64_t>(a.i);
    const auto ub = static_cast<std::uint64_t>(b.i);
    switch (op) {
      case BinOp::kAdd:
        out = RValue::Int(static_cast<std::int64_t>(ua + ub));
        return true;
      case BinOp::kSub:
        out = RValue::Int(static_cast<std::int64_t>(ua - ub));
        return true;
      case BinOp::kMul:
        out = RValue::Int(static_cast<std::int64_t>(ua * ub));
        return true;
      case BinOp::kDiv:
      case BinOp::kMod:
        if (b.i == 0) {
          return ctx_.Trap(kExitDivide, op == BinOp::kDiv
                                            ? "attempt to divide by zero"
                                            : "attempt to calculate the remainder with a divisor "
                                              "of zero");
        }
        if (b.i == -1 && a.i == INT64_MIN) {
          return ctx_.Trap(kExitDivide, op == BinOp::kDiv ? "attempt to divide with overflow"
                                                          : "attempt to calculate the remainder "
                                                            "with overflow");
        }
        out = RValue::Int(op == BinOp::kDiv ? a.i / b.i : a.i % b.i);
        return true;
      case BinOp::kEq:
        out = RValue::Bool(a.i == b.i);
        return true;
      case BinOp::kNe:
        out = RValue::Bool(a.i != b.i);
        return true;
      case BinOp::kLt:
        out = RValue::Bool(a.i < b.i);
        return true;
      case BinOp::kGt:
        out = RValue::Bool(a.i > b.i);
        return true;
      case BinOp::kLe:
        out = RValue::Bool(a.i <= b.i);
        return true;
      case BinOp::kGe:
        out = RValue::Bool(a.i >= b.i);
        return true;
      default:
        break;
    }
  }
  if (a.tag == Tag::kFloat && b.tag == Tag::kFloat) {
    switch (op) {
      case BinOp::kAdd:
        out = RValue::Float(a.f + b.f);
        return true;
      case BinOp::kSub:
        out = RValue::Float(a.f - b.f);
        return true;
      case BinOp::kMul:
        out = RValue::Float(a.f * b.f);
        return true;
      case BinOp::kDiv:
        out = RValue::Float(a.f / b.f);
        return true;
      case BinOp::kMod:
        out = RValue::Float(std::fmod(a.f, b.f));
        return true;
      case BinOp::kEq:
        out = RValue::Bool(a.f == b.f);
        return true;
      case BinOp::kNe:
        out = RValue::Bool(a.f != b.f);
        return true;
      case BinOp::kLt:
        out = RValue::Bool(a.f < b.f);
        return true;
      case BinOp::kGt:
        out = RValue::Bool(a.f > b.f);
        return true;
      case BinOp::kLe:
        out = RValue::Bool(a.f <= b.f);
        return true;
      case BinOp::kGe:
        out = RValue::Bool(a.f >= b.f);
        return true;
      default:
        break;
    }
  }
  if (a.tag == Tag::kStr && b.tag == Tag::kStr) {
    const std::string& x = a.str();
    const std::string& y = b.str();
    switch (op) {
      case BinOp::kAdd:
        out = ctx_.Str(x + y);
        return true;
      case BinOp::kEq:
        out = RValue::Bool(x == y);
        return true;
      case BinOp::kNe:
        out = RValue::Bool(x != y);
        return true;
      case BinOp::kLt:
        out = RValue::Bool(x < y);
        return true;
      case BinOp::kGt:
        out = RValue::Bool(x > y);
        return true;
      case BinOp::kLe:
        out = RValue::Bool(x <= y);
        return true;
      case BinOp::kGe:
        out = RValue::Bool(x >= y);
        return true;
      default:
        break;
    }
  }
  switch (op) {
    case BinOp::kAnd:
      out = RValue::Bool(a.Truthy() && b.Truthy());
      return true;
    case BinOp::kOr:
      out = RValue::Bool(a.Truthy() || b.Truthy());
      return true;
    case BinOp::kEq:
      out = RValue::Bool(Equal(a, b));
      return true;
    case BinOp::kNe:
      out = RValue::Bool(!Equal(a, b));
      return true;
    default:
      break;
  }
  return ctx_.Trap(kExitAbort, fmt::format("unsupported operands for a binary operator: {} and {}",
                                           TypeName(a), TypeName(b)));
}

bool Machine::Eval(const mir::Value& v, const Frame& f, RValue& out) {
  switch (v.kind) {
    case ValueKind::kIntConst:
      out = RValue::Int(v.i);
      return true;
    case ValueKind::kFloatConst:
      out = RValue::Float(v.f);
      return true;
    case ValueKind::kBoolConst:
      out = RValue::Bool(v.i != 0);
      return true;
    case ValueKind::kStringConst:
      out = ctx_.Str(v.s);
      return true;
    case ValueKind::kLocal:
      out = f.locals[v.local];
      return true;
    case ValueKind::kUnit:
      out = RValue();
      return true;
    case ValueKind::kBinOp: {
      RValue a, b;
      if (!Eval(v.operands[0], f, a) || !Eval(v.operands[1], f, b)) return false;
      return Binary(v.op, a, b, out);
    }
    case ValueKind::kNot: {
      RValue a;
      if (!Eval(v.operands[0], f, a)) return false;
      out = RValue::Bool(!a.Truthy());
      return true;
    }
    case ValueKind::kNeg: {
      RValue a;
      if (!Eval(v.operands[0], f, a)) return false;
      if (a.tag == Tag::kFloat) {
        out = RValue::Float(-a.f);
      } else {
        out = RValue::Int(static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(a.i)));
      }
      return true;
    }
    case ValueKind::kStructLit: {
      auto obj = std::make_shared<StructObj>(ctx_.mem);
      obj->name = v.s;
      obj->field_names = &v.names;
      for (const mir::Value& fv : v.operands) {
        RValue x;
        if (!Eval(fv, f, x)) return false;
        obj->fields.push_back(std::move(x));
      }
      out = RValue::Obj(Tag::kStruct, std::move(obj));
      return true;
    }
    case ValueKind::kFieldGet: {
      RValue o;
      if (!Eval(v.operands[0], f, o)) return false;
      if (o.tag != Tag::kStruct) {
        return ctx_.Trap(kExitAbort, fmt::format("field `{}` of a non-struct value", v.s));
      }
      auto* s = static_cast<StructObj*>(o.o.get());
      for (std::size_t i = 0; i < s->field_names->size(); ++i) {
        if ((*s->field_names)[i] == v.s) {
          out = s->fields[i];
          return true;
        }
      }
      return ctx_.Trap(kExitAbort, fmt::format("struct `{}` has no field `{}`", s->name, v.s));
    }
    case ValueKind::kEnumVariant: {
      auto obj = std::make_shared<EnumObj>(ctx_.mem);
      obj->enum_name = v.s;
      obj->variant = v.s2;
      obj->disc = v.i;
      for (const mir::Value& a : v.operands) {
        RValue x;
        if (!Eval(a, f, x)) return false;
        obj->payload.push_back(std::move(x));
      }
      out = RValue::Obj(Tag::kEnum, std::move(obj));
      return true;
    }
    case ValueKind::kEnumDiscriminant: {
      RValue o;
      if (!Eval(v.operands[0], f, o)) return false;
      if (o.tag != Tag::kEnum) return ctx_.Trap(kExitAbort, "discriminant of a non-enum value");
      out = RValue::Int(static_cast<EnumObj*>(o.o.get())->disc);
      return true;
    }
    case ValueKind::kEnumPayload: {
      RValue o;
      if (!Eval(v.operands[0], f, o)) return false;
      if (o.tag != Tag::kEnum) return ctx_.Trap(kExitAbort, "payload of a non-enum value");
      auto* e = static_cast<EnumObj*>(o.o.get());
      if (static_cast<std::size_t>(v.i) >= e->payload.size()) {
        return ctx_.Trap(kExitAbort,
                         fmt::format("variant `{}` has no payload {}", e->variant, v.i));
      }
      out = e->payload[static_cast<std::size_t>(v.i)];
      return true;
    }
    case ValueKind::kFuncRef: {
      const int idx = p_.Find(v.s);
      if (idx < 0) return ctx_.Trap(kExitAbort, fmt::format("function `{}` as a value", v.s));
      out = RValue::Func(idx);
      return true;
    }
    case ValueKind::kTupleLit: {
      auto obj = std::make_shared<ListObj>(ctx_.mem);
      for (const mir::Value& a : v.operands) {
        RValue x;
        if (!Eval(a, f, x)) return false;
        obj->Push(std::move(x));
      }
      out = RValue::Obj(Tag::kTuple, std::move(obj));
      return true;
    }
    case ValueKind::kTupleGet: {
      RValue o;
      if (!Eval(v.operands[0], f, o)) return false;
      if (o.tag != Tag::kTuple) return ctx_.Trap(kExitAbort, "tuple index of a non-tuple value");
      auto* t = static_cast<ListObj*>(o.o.get());
      if (static_cast<std::size_t>(v.i) >= t->items.size()) {
        return ctx_.Trap(kExitAbort, "tuple index out of range");
      }
      out = t->items[static_cast<std::size_t>(v.i)];
      return true;
    }
  }
  return ctx_.Trap(kExitAbort, "unknown value");
}

bool Machine::Push(Task& t, int fn, std::vector<RValue> args, mir::LocalId dest) {
  const mir::Function& target = p_.functions[static_cast<std::size_t>(fn)];
  if (t.frames.size() >= ctx_.options.max_frames) {
    return ctx_.Trap(kExitAbort,
                     fmt::format("stack overflow: more than {} nested calls (in function `{}`)",
                                 ctx_.options.max_frames, target.name));
  }
  Frame f;
  f.fn = fn;
  f.dest = dest;
  f.locals.resize(target.locals.size());
  const std::size_t n = std::min<std::size_t>(args.size(), target.locals.size());
  for (std::size_t i = 0; i < n; ++i) f.locals[i] = std::move(args[i]);
  t.frames.push_back(std::move(f));
  return true;
}

bool Machine::Invoke(int fn, std::vector<RValue> args, mir::LocalId dest, Frame& f) {
  const mir::Function& target = p_.functions[static_cast<std::size_t>(fn)];
  if (target.is_async || target.actor_handler) {
    Task* t = NewTask(fmt::format("{} `{}`", target.is_async ? "async" : "message", target.name));
    if (!Push(*t, fn, std::move(args), mir::kNoLocal)) return false;
    if (target.is_async) {
      // An async call starts a task and gives its future (docs/kodo.md §4.9).
      t->future = std::make_shared<FutureObj>(ctx_.mem);
      ready_.push_back(t->id);
      SetResult(f, dest, RValue::Obj(Tag::kFuture, t->future));
    } else {
      // An actor handler call queues a message; messages run when nothing else can (after
      // `main` in upstream's runtime).
      deferred_.push_back(t->id);
      SetResult(f, dest, RValue());
    }
    return true;
  }
  return Push(*cur_, fn, std::move(args), dest);
}

bool Machine::CallValue(const RValue& callee, std::vector<RValue>& args, mir::LocalId dest,
                        Frame& f) {
  if (callee.tag == Tag::kFunc) return Invoke(static_cast<int>(callee.i), std::move(args), dest, f);
  if (callee.tag == Tag::kClosure) {
    auto* c = static_cast<ClosureObj*>(callee.o.get());
    std::vector<RValue> all = c->captures;
    for (RValue& a : args) all.push_back(std::move(a));
    return Invoke(c->fn, std::move(all), dest, f);
  }
  return ctx_.Trap(kExitAbort, "call of a value that is not a function");
}

bool Machine::CallResolved(const Resolved& r, const mir::Inst& inst, Frame& f,
                           std::vector<RValue>& args) {
  switch (r.kind) {
    case CallKind::kUser:
      return Invoke(r.fn, std::move(args), inst.dest, f);
    case CallKind::kBuiltin: {
      RValue out;
      if (!r.builtin(ctx_, args, out)) return false;
      if (inst.dest != mir::kNoLocal) f.locals[inst.dest] = std::move(out);
      return true;
    }
    case CallKind::kMethod: {
      if (args.empty()) return ctx_.Trap(kExitAbort, "method call without a receiver");
      const std::string type = TypeName(args[0]);
      std::string name = type + "_" + r.method;
      if (int idx = p_.Find(name); idx >= 0) return Invoke(idx, std::move(args), inst.dest, f);
      if (Builtin b = FindBuiltin(name)) {
        RValue out;
        if (!b(ctx_, args, out)) return false;
        if (inst.dest != mir::kNoLocal) f.locals[inst.dest] = std::move(out);
        return true;
      }
      return ctx_.Trap(kExitAbort, fmt::format("no method `{}` on type `{}`", r.method, type));
    }
    case CallKind::kClosureNew: {
      auto c = std::make_shared<ClosureObj>(ctx_.mem);
      c->fn = static_cast<int>(args.at(0).i);
      for (std::size_t i = 1; i < args.size(); ++i) c->captures.push_back(std::move(args[i]));
      if (inst.dest != mir::kNoLocal) f.locals[inst.dest] = RValue::Obj(Tag::kClosure, c);
      return true;
    }
    case CallKind::kSpawn: {
      if (args.empty()) return ctx_.Trap(kExitAbort, "`kodo_spawn` without a task");
      Task* t = StartTask(args[0], "spawn");
      if (t == nullptr) return false;
      deferred_.push_back(t->id);
      return true;
    }
    case CallKind::kParallelBegin:
      SetResult(f, inst.dest, RValue::Int(static_cast<std::int64_t>(groups_.size())));
      groups_.emplace_back();
      return true;
    case CallKind::kParallelSpawn: {
      if (args.size() < 2 || args[0].tag != Tag::kInt || args[0].i < 0 ||
          static_cast<std::uint64_t>(args[0].i) >= groups_.size()) {
        return ctx_.Trap(kExitAbort, "`kodo_parallel_spawn` without a parallel group");
      }
      Task* t = StartTask(args[1], "parallel");
      if (t == nullptr) return false;
      t->group = args[0].i;
      Group& g = groups_[static_cast<std::size_t>(args[0].i)];
      g.queued.push_back(t->id);
      ++g.pending;
      return true;
    }
    case CallKind::kParallelJoin: {
      if (args.empty() || args[0].tag != Tag::kInt || args[0].i < 0 ||
          static_cast<std::uint64_t>(args[0].i) >= groups_.size()) {
        return ctx_.Trap(kExitAbort, "`kodo_parallel_join` without a parallel group");
      }
      Group& g = groups_[static_cast<std::size_t>(args[0].i)];
      // The group's tasks start at the join, in spawn order, before any deferred task.
      for (std::uint32_t id : g.queued) ready_.push_back(id);
      g.queued.clear();
      if (g.pending == 0) return true;
      return Block(f, Wait::kGroup, {args[0].i});
    }
    case CallKind::kAwait: {
      if (args.empty()) return ctx_.Trap(kExitAbort, "`kodo_await` without a future");
      if (args[0].tag != Tag::kFuture) {
        SetResult(f, inst.dest, std::move(args[0]));
        return true;
      }
      auto fut = std::static_pointer_cast<FutureObj>(args[0].o);
      if (!fut->done) return Block(f, Wait::kFuture, {}, fut);
      SetResult(f, inst.dest, fut->value);
      return true;
    }
    case CallKind::kRecv: {
      if (args.empty()) return ctx_.Trap(kExitAbort, "`channel_recv` without a channel");
      const std::int64_t h = args[0].tag == Tag::kInt ? args[0].i : -1;
      if (h < 0 || static_cast<std::uint64_t>(h) >= ctx_.channels.size() ||
          ctx_.channels[static_cast<std::size_t>(h)].freed) {
        SetResult(f, inst.dest, RValue::Int(0));  // upstream: 0 from an unknown channel
        return true;
      }
      Channel& c = ctx_.channels[static_cast<std::size_t>(h)];
      if (c.queue.empty()) return Block(f, Wait::kChannel, {h});
      RValue v = std::move(c.queue.front());
      c.queue.pop_front();
      ctx_.mem->live -= sizeof(RValue);
      SetResult(f, inst.dest, std::move(v));
      return true;
    }
    case CallKind::kSelect: {
      std::vector<std::int64_t> ids;
      for (std::size_t i = 0; i < args.size(); ++i) {
        const std::int64_t h = args[i].tag == Tag::kInt ? args[i].i : -1;
        ids.push_back(h);
        if (h >= 0 && static_cast<std::uint64_t>(h) < ctx_.channels.size() &&
            !ctx_.channels[static_cast<std::size_t>(h)].queue.empty()) {
          SetResult(f, inst.dest, RValue::Int(static_cast<std::int64_t>(i)));
          return true;
        }
      }
      return Block(f, Wait::kSelect, std::move(ids));
    }
    case CallKind::kYieldNow:
      ready_.push_back(cur_->id);
      yielded_ = true;
      switch_ = true;
      return true;
    case CallKind::kUnknown:
      return ctx_.Trap(kExitAbort, fmt::format("call of unknown function `{}`", r.method));
  }
  return false;
}

RunResult Machine::Run() {
  RunResult result;
  Load();
  // Upstream's runtime calls `kodo_main`: the user's `main`, or what a `console_app` intent
  // generated under that name when there is no `main`.
  int main_fn = p_.Find("main");
  if (main_fn < 0) main_fn = p_.Find("kodo_main");
  if (main_fn < 0) {
    ctx_.Err("error: the program has no `main` function\n");
    ctx_.Flush();
    result.exit_code = 1;
    result.out = std::move(ctx_.out);
    result.err = std::move(ctx_.err);
    return result;
  }
  std::uint64_t steps = 0;
  const std::uint64_t max_steps = ctx_.options.max_steps;
  const std::uint64_t max_mem = ctx_.options.max_memory_bytes;
  cur_ = NewTask("main");
  Push(*cur_, main_fn, {}, mir::kNoLocal);
  std::vector<RValue> args;
  while (!ctx_.stopped) {
    if (switch_) {
      // The current task blocked (or yielded): it waits until its condition holds.
      switch_ = false;
      if (!yielded_) blocked_.push_back(cur_->id);
      yielded_ = false;
      cur_ = nullptr;
    }
    if (cur_ == nullptr && !Schedule()) break;
    Frame& f = cur_->frames.back();
    const mir::Function& fn = p_.functions[static_cast<std::size_t>(f.fn)];
    const mir::BasicBlock& block = fn.blocks[f.block];
    if (++steps > max_steps && max_steps != 0) {
      ctx_.Trap(kExitLimit, fmt::format("step limit of {} exceeded", max_steps));
      break;
    }
    if (max_mem != 0 && (steps & 1023) == 0 && ctx_.mem->live > max_mem) {
      ctx_.Trap(kExitLimit, fmt::format("memory limit of {} bytes exceeded", max_mem));
      break;
    }
    if (f.ip < block.insts.size()) {
      const mir::Inst& inst = block.insts[f.ip];
      const Resolved& r = resolved_[static_cast<std::size_t>(f.fn)][f.block][f.ip];
      ++f.ip;
      switch (inst.kind) {
        case InstKind::kAssign: {
          RValue v;
          if (!Eval(inst.value, f, v)) break;
          f.locals[inst.dest] = std::move(v);
          break;
        }
        case InstKind::kCall: {
          args.clear();
          bool ok = true;
          for (const mir::Value& a : inst.args) {
            RValue v;
            if (!Eval(a, f, v)) {
              ok = false;
              break;
            }
            args.push_back(std::move(v));
          }
          if (!ok) break;
          // `f` may dangle after a push: CallResolved takes it only to write builtin results.
          CallResolved(r, inst, f, args);
          break;
        }
        case InstKind::kIndirectCall: {
          RValue callee;
          if (!Eval(inst.value, f, callee)) break;
          args.clear();
          bool ok = true;
          for (const mir::Value& a : inst.args) {
            RValue v;
            if (!Eval(a, f, v)) {
              ok = false;
              break;
            }
            args.push_back(std::move(v));
          }
          if (!ok) break;
          CallValue(callee, args, inst.dest, f);
          break;
        }
        case InstKind::kYield:
          ready_.push_back(cur_->id);
          yielded_ = true;
          switch_ = true;
          break;
        default:
          break;
      }
      continue;
    }
    const mir::Terminator& t = block.term;
    switch (t.kind) {
      case TermKind::kGoto:
        f.block = t.target;
        f.ip = 0;
        break;
      case TermKind::kBranch: {
        RValue c;
        if (!Eval(t.value, f, c)) break;
        f.block = c.Truthy() ? t.target : t.otherwise;
        f.ip = 0;
        break;
      }
      case TermKind::kReturn: {
        RValue v;
        if (!Eval(t.value, f, v)) break;
        const mir::LocalId dest = f.dest;
        std::vector<Frame>& frames = cur_->frames;
        frames.pop_back();
        if (frames.empty()) {
          Finish(std::move(v));  // the task ended; the scheduler picks the next one
        } else if (dest != mir::kNoLocal) {
          frames.back().locals[dest] = std::move(v);
        }
        break;
      }
      case TermKind::kUnreachable:
        ctx_.Trap(kExitAbort, fmt::format("entered unreachable code in function `{}`", fn.name));
        break;
    }
  }
  cur_ = nullptr;
  ready_.clear();
  deferred_.clear();
  blocked_.clear();
  tasks_.clear();
  ctx_.Flush();
  result.exit_code = ctx_.exit_code;
  result.steps = steps;
  result.out = std::move(ctx_.out);
  result.err = std::move(ctx_.err);
  return result;
}

}  // namespace

RunResult Run(const mir::Program& program, const RunOptions& options) {
  Machine m(program, options);
  return m.Run();
}

}  // namespace trove::kodo::interp

#include "kodo/mir/opt/opt.h"

#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace trove::kodo::mir::opt {
namespace {

// ---- walking values -------------------------------------------------------------------------
// Values are small trees (mir.h); the walks keep their own stack, so no value's shape can make
// them recurse.

template <typename F>
void ForEachLocalLeaf(Value& root, F&& fn) {
  std::vector<Value*> stack{&root};
  while (!stack.empty()) {
    Value* v = stack.back();
    stack.pop_back();
    if (v->kind == ValueKind::kLocal) fn(*v);
    for (Value& o : v->operands) stack.push_back(&o);
  }
}

template <typename F>
void ForEachLocalLeaf(const Value& root, F&& fn) {
  std::vector<const Value*> stack{&root};
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (v->kind == ValueKind::kLocal) fn(*v);
    for (const Value& o : v->operands) stack.push_back(&o);
  }
}

// Calls `fn` on every value an instruction reads (not IncRef/DecRef's operand, which is a
// local id, not a value).
template <typename V, typename F>
void ForEachReadValue(V& inst, F&& fn) {
  if (inst.kind == InstKind::kAssign || inst.kind == InstKind::kIndirectCall) fn(inst.value);
  for (auto& a : inst.args) fn(a);
}

// The local an instruction writes, or kNoLocal.
LocalId Def(const Inst& inst) {
  switch (inst.kind) {
    case InstKind::kAssign:
    case InstKind::kCall:
    case InstKind::kIndirectCall:
      return inst.dest;
    default:
      return kNoLocal;
  }
}

bool IsConst(const Value& v) {
  switch (v.kind) {
    case ValueKind::kIntConst:
    case ValueKind::kFloatConst:
    case ValueKind::kBoolConst:
    case ValueKind::kStringConst:
      return true;
    default:
      return false;
  }
}

// Counts the reads of every local of `fn` (IncRef/DecRef operands count as reads).
std::vector<std::uint32_t> CountUses(const Function& fn) {
  std::vector<std::uint32_t> uses(fn.locals.size(), 0);
  auto count = [&uses](const Value& leaf) {
    if (leaf.local < uses.size()) ++uses[leaf.local];
  };
  for (const BasicBlock& b : fn.blocks) {
    for (const Inst& inst : b.insts) {
      ForEachReadValue(inst, [&](const Value& v) { ForEachLocalLeaf(v, count); });
      if ((inst.kind == InstKind::kIncRef || inst.kind == InstKind::kDecRef) &&
          inst.dest < uses.size()) {
        ++uses[inst.dest];
      }
    }
    ForEachLocalLeaf(b.term.value, count);
  }
  return uses;
}

// ---- constant folding -----------------------------------------------------------------------

// Folds `v` itself when its operands are constants; returns whether it changed. Mirrors the
// interpreter's Binary (interp.cc): only operand pairs of one type, and never an operation that
// traps there.
bool FoldNode(Value& v) {
  if (v.kind == ValueKind::kNot && v.operands.size() == 1 &&
      v.operands[0].kind == ValueKind::kBoolConst) {
    v = Value::Bool(v.operands[0].i == 0);
    return true;
  }
  if (v.kind == ValueKind::kNeg && v.operands.size() == 1) {
    const Value& a = v.operands[0];
    if (a.kind == ValueKind::kIntConst) {
      v = Value::Int(static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(a.i)));
      return true;
    }
    if (a.kind == ValueKind::kFloatConst) {
      v = Value::Float(-a.f);
      return true;
    }
    return false;
  }
  if (v.kind != ValueKind::kBinOp || v.operands.size() != 2) return false;
  const Value& a = v.operands[0];
  const Value& b = v.operands[1];
  if (a.kind != b.kind) return false;
  using ast::BinOp;
  switch (a.kind) {
    case ValueKind::kIntConst: {
      const auto ua = static_cast<std::uint64_t>(a.i);
      const auto ub = static_cast<std::uint64_t>(b.i);
      switch (v.op) {
        case BinOp::kAdd:
          v = Value::Int(static_cast<std::int64_t>(ua + ub));
          return true;
        case BinOp::kSub:
          v = Value::Int(static_cast<std::int64_t>(ua - ub));
          return true;
        case BinOp::kMul:
          v = Value::Int(static_cast<std::int64_t>(ua * ub));
          return true;
        case BinOp::kDiv:
        case BinOp::kMod:
          // A zero divisor and MIN / -1 trap at run time: left for the interpreter.
          if (b.i == 0 || (b.i == -1 && a.i == std::numeric_limits<std::int64_t>::min())) {
            return false;
          }
          v = Value::Int(v.op == BinOp::kDiv ? a.i / b.i : a.i % b.i);
          return true;
        case BinOp::kEq:
          v = Value::Bool(a.i == b.i);
          return true;
        case BinOp::kNe:
          v = Value::Bool(a.i != b.i);
          return true;
        case BinOp::kLt:
          v = Value::Bool(a.i < b.i);
          return true;
        case BinOp::kGt:
          v = Value::Bool(a.i > b.i);
          return true;
        case BinOp::kLe:
          v = Value::Bool(a.i <= b.i);
          return true;
        case BinOp::kGe:
          v = Value::Bool(a.i >= b.i);
          return true;
        default:
          // `&&`/`||` over two Ints: the interpreter's truthiness; rare, left alone.
          return false;
      }
    }
    case ValueKind::kFloatConst: {
      const double x = a.f;
      const double y = b.f;
      switch (v.op) {
        case BinOp::kAdd:
          v = Value::Float(x + y);
          return true;
        case BinOp::kSub:
          v = Value::Float(x - y);
          return true;
        case BinOp::kMul:
          v = Value::Float(x * y);
          return true;
        case BinOp::kDiv:
          v = Value::Float(x / y);  // IEEE: no trap for floats
          return true;
        case BinOp::kEq:
          v = Value::Bool(x == y);
          return true;
        case BinOp::kNe:
          v = Value::Bool(x != y);
          return true;
        case BinOp::kLt:
          v = Value::Bool(x < y);
          return true;
        case BinOp::kGt:
          v = Value::Bool(x > y);
          return true;
        case BinOp::kLe:
          v = Value::Bool(x <= y);
          return true;
        case BinOp::kGe:
          v = Value::Bool(x >= y);
          return true;
        default:
          return false;  // fmod is left to the runtime's libm
      }
    }
    case ValueKind::kBoolConst: {
      const bool x = a.i != 0;
      const bool y = b.i != 0;
      switch (v.op) {
        case BinOp::kAnd:
          v = Value::Bool(x && y);
          return true;
        case BinOp::kOr:
          v = Value::Bool(x || y);
          return true;
        case BinOp::kEq:
          v = Value::Bool(x == y);
          return true;
        case BinOp::kNe:
          v = Value::Bool(x != y);
          return true;
        default:
          return false;  // `+` of Bools traps at run time
      }
    }
    case ValueKind::kStringConst: {
      switch (v.op) {
        case BinOp::kAdd: {
          std::string s = a.s + b.s;
          v = Value::Str(std::move(s));
          return true;
        }
        case BinOp::kEq:
          v = Value::Bool(a.s == b.s);
          return true;
        case BinOp::kNe:
          v = Value::Bool(a.s != b.s);
          return true;
        case BinOp::kLt:
          v = Value::Bool(a.s < b.s);
          return true;
        case BinOp::kGt:
          v = Value::Bool(a.s > b.s);
          return true;
        case BinOp::kLe:
          v = Value::Bool(a.s <= b.s);
          return true;
        case BinOp::kGe:
          v = Value::Bool(a.s >= b.s);
          return true;
        default:
          return false;
      }
    }
    default:
      return false;
  }
}

// Folds a value tree bottom-up (post-order with an explicit stack).
std::size_t FoldTree(Value& root) {
  std::size_t n = 0;
  std::vector<std::pair<Value*, bool>> stack{{&root, false}};
  while (!stack.empty()) {
    auto [v, expanded] = stack.back();
    stack.pop_back();
    if (!expanded) {
      stack.push_back({v, true});
      for (Value& o : v->operands) stack.push_back({&o, false});
    } else if (FoldNode(*v)) {
      ++n;
    }
  }
  return n;
}

// ---- inlining -------------------------------------------------------------------------------

// A function as an inliner sees it: the instructions of the chain of blocks that runs from the
// entry block through Gotos to a Return (the lowering ends every body with `Goto(exit)` and an
// exit block `Return(result)`), and the returned value.
struct Inlinee {
  bool ok = false;
  std::vector<Inst> insts;
  Value ret;
};

Inlinee Straight(const Function& callee, const InlineOptions& options) {
  Inlinee out;
  if (callee.blocks.empty() || callee.name == "main") return out;
  // A call of an async function starts a task and a call of an actor handler queues a message
  // (the interpreter's scheduler, docs/kodo.md §4.7): inlining would run them at once.
  if (callee.is_async || callee.actor_handler) return out;
  std::vector<bool> seen(callee.blocks.size(), false);
  BlockId b = 0;
  while (true) {
    if (b >= callee.blocks.size() || seen[b]) return out;
    seen[b] = true;
    const BasicBlock& block = callee.blocks[b];
    for (const Inst& inst : block.insts) {
      if (out.insts.size() >= options.max_callee_insts) return out;
      out.insts.push_back(inst);
    }
    if (block.term.kind == TermKind::kGoto) {
      b = block.term.target;
      continue;
    }
    if (block.term.kind != TermKind::kReturn) return out;
    out.ret = block.term.value;
    break;
  }
  // Every local it reads must be a parameter or written earlier: an inlined body runs with the
  // caller's locals, which (unlike a fresh frame's) need not start as unit.
  std::vector<bool> written(callee.locals.size(), false);
  for (std::uint32_t i = 0; i < callee.param_count && i < written.size(); ++i) written[i] = true;
  bool ok = true;
  auto check = [&](const Value& leaf) {
    if (leaf.local >= written.size() || !written[leaf.local]) ok = false;
  };
  for (const Inst& inst : out.insts) {
    if (inst.kind == InstKind::kCall && inst.callee == callee.name) return out;
    if (inst.kind == InstKind::kYield) return out;
    ForEachReadValue(inst, [&](const Value& v) { ForEachLocalLeaf(v, check); });
    if ((inst.kind == InstKind::kIncRef || inst.kind == InstKind::kDecRef) &&
        (inst.dest >= written.size() || !written[inst.dest])) {
      ok = false;
    }
    const LocalId d = Def(inst);
    if (d != kNoLocal) {
      if (d >= written.size()) return out;
      written[d] = true;
    }
  }
  ForEachLocalLeaf(out.ret, check);
  out.ok = ok;
  return out;
}

void Remap(Value& v, LocalId base) {
  ForEachLocalLeaf(v, [base](Value& leaf) { leaf.local += base; });
}

}  // namespace

std::size_t InlineSmallFunctions(Program& program, const InlineOptions& options) {
  program.Reindex();
  // Decide once, on the unchanged program, what to inline; bodies are copied from these
  // snapshots, so inlining into a callee never feeds back into itself.
  std::vector<Inlinee> inlinees;
  inlinees.reserve(program.functions.size());
  for (const Function& fn : program.functions) inlinees.push_back(Straight(fn, options));
  std::vector<std::uint32_t> params;
  std::vector<std::vector<LocalDecl>> locals;
  std::vector<std::string> names, return_types;
  for (std::size_t i = 0; i < program.functions.size(); ++i) {
    const Function& fn = program.functions[i];
    params.push_back(fn.param_count);
    locals.push_back(inlinees[i].ok ? fn.locals : std::vector<LocalDecl>{});
    names.push_back(fn.name);
    return_types.push_back(fn.return_type);
  }
  std::size_t count = 0;
  for (Function& caller : program.functions) {
    for (BasicBlock& block : caller.blocks) {
      std::vector<Inst> out;
      out.reserve(block.insts.size());
      for (Inst& inst : block.insts) {
        const int found = inst.kind == InstKind::kCall ? program.Find(inst.callee) : -1;
        const auto idx = static_cast<std::size_t>(found);
        if (found < 0 || !inlinees[idx].ok || names[idx] == caller.name ||
            inst.args.size() != params[idx] ||
            out.size() + inlinees[idx].insts.size() + params[idx] + 1 > options.max_block_insts) {
          out.push_back(std::move(inst));
          continue;
        }
        const Inlinee& callee = inlinees[idx];
        const auto base = static_cast<LocalId>(caller.locals.size());
        for (const LocalDecl& l : locals[idx]) caller.locals.push_back(l);
        for (std::uint32_t p = 0; p < params[idx]; ++p) {
          Inst a;
          a.kind = InstKind::kAssign;
          a.dest = base + p;
          a.value = std::move(inst.args[p]);
          out.push_back(std::move(a));
        }
        for (const Inst& ci : callee.insts) {
          Inst c = ci;
          ForEachReadValue(c, [base](Value& v) { Remap(v, base); });
          if (c.dest != kNoLocal) c.dest += base;
          out.push_back(std::move(c));
        }
        // The return value is evaluated even when the call's result is unused (it may trap);
        // dead-assignment elimination drops it when it cannot.
        Inst ret;
        ret.kind = InstKind::kAssign;
        ret.value = callee.ret;
        Remap(ret.value, base);
        if (inst.dest != kNoLocal) {
          ret.dest = inst.dest;
        } else {
          ret.dest = static_cast<LocalId>(caller.locals.size());
          caller.locals.push_back(LocalDecl{return_types[idx], "", false});
        }
        out.push_back(std::move(ret));
        ++count;
      }
      // Every instruction was moved to `out`, inlined or not.
      block.insts = std::move(out);
    }
  }
  return count;
}

std::size_t FoldConstants(Program& program) {
  std::size_t n = 0;
  for (Function& fn : program.functions) {
    for (BasicBlock& b : fn.blocks) {
      for (Inst& inst : b.insts) ForEachReadValue(inst, [&n](Value& v) { n += FoldTree(v); });
      n += FoldTree(b.term.value);
      if (b.term.kind == TermKind::kBranch && (b.term.value.kind == ValueKind::kBoolConst ||
                                               b.term.value.kind == ValueKind::kIntConst)) {
        const BlockId to = b.term.value.i != 0 ? b.term.target : b.term.otherwise;
        b.term.kind = TermKind::kGoto;
        b.term.target = to;
        b.term.otherwise = 0;
        b.term.value = Value::Unit();
        ++n;
      }
    }
  }
  return n;
}

std::size_t PropagateCopies(Program& program) {
  std::size_t n = 0;
  for (Function& fn : program.functions) {
    if (fn.blocks.empty()) continue;
    // Across blocks: a non-parameter local written exactly once, by `_x = CONST` in the entry
    // block, when no block jumps back to the entry: every other block runs after that write.
    std::vector<std::uint32_t> defs(fn.locals.size(), 0);
    for (const BasicBlock& b : fn.blocks) {
      for (const Inst& inst : b.insts) {
        const LocalId d = Def(inst);
        if (d < defs.size()) ++defs[d];
      }
    }
    bool entry_targeted = false;
    for (const BasicBlock& b : fn.blocks) {
      if ((b.term.kind == TermKind::kGoto || b.term.kind == TermKind::kBranch) &&
          b.term.target == 0) {
        entry_targeted = true;
      }
      if (b.term.kind == TermKind::kBranch && b.term.otherwise == 0) entry_targeted = true;
    }
    std::unordered_map<LocalId, Value> global;
    if (!entry_targeted) {
      for (const Inst& inst : fn.blocks[0].insts) {
        if (inst.kind == InstKind::kAssign && inst.dest < defs.size() &&
            inst.dest >= fn.param_count && defs[inst.dest] == 1 && IsConst(inst.value)) {
          global.emplace(inst.dest, inst.value);
        }
      }
    }
    for (std::size_t bi = 0; bi < fn.blocks.size(); ++bi) {
      BasicBlock& b = fn.blocks[bi];
      // Within the block: local -> the value it currently copies (a local or a constant).
      std::unordered_map<LocalId, Value> avail;
      if (bi != 0) avail = global;
      auto substitute = [&](Value& v) {
        ForEachLocalLeaf(v, [&](Value& leaf) {
          auto it = avail.find(leaf.local);
          if (it == avail.end()) return;
          leaf = it->second;
          ++n;
        });
      };
      for (Inst& inst : b.insts) {
        ForEachReadValue(inst, substitute);
        const LocalId d = Def(inst);
        if (d == kNoLocal) continue;
        avail.erase(d);
        for (auto it = avail.begin(); it != avail.end();) {
          if (it->second.kind == ValueKind::kLocal && it->second.local == d) {
            it = avail.erase(it);
          } else {
            ++it;
          }
        }
        if (inst.kind == InstKind::kAssign &&
            ((inst.value.kind == ValueKind::kLocal && inst.value.local != d) ||
             IsConst(inst.value))) {
          avail.emplace(d, inst.value);
        }
      }
      substitute(b.term.value);
    }
  }
  return n;
}

namespace {

// Whether evaluating `v` can never trap or have an effect (interp.cc Eval): constants, locals,
// `!`, unary `-`, and `==`/`!=`/`&&`/`||`, which take operands of any type.
bool PureValue(const Value& root) {
  std::vector<const Value*> stack{&root};
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    switch (v->kind) {
      case ValueKind::kIntConst:
      case ValueKind::kFloatConst:
      case ValueKind::kBoolConst:
      case ValueKind::kStringConst:
      case ValueKind::kLocal:
      case ValueKind::kUnit:
      case ValueKind::kNot:
      case ValueKind::kNeg:
        break;
      case ValueKind::kBinOp:
        if (v->op != ast::BinOp::kEq && v->op != ast::BinOp::kNe && v->op != ast::BinOp::kAnd &&
            v->op != ast::BinOp::kOr) {
          return false;
        }
        break;
      default:
        return false;
    }
    for (const Value& o : v->operands) stack.push_back(&o);
  }
  return true;
}

}  // namespace

std::size_t EliminateDeadAssignments(Program& program) {
  std::size_t n = 0;
  for (Function& fn : program.functions) {
    for (int round = 0; round < 16; ++round) {
      const std::vector<std::uint32_t> uses = CountUses(fn);
      std::size_t removed = 0;
      for (BasicBlock& b : fn.blocks) {
        std::vector<Inst> keep;
        keep.reserve(b.insts.size());
        for (Inst& inst : b.insts) {
          const bool self_copy = inst.kind == InstKind::kAssign &&
                                 inst.value.kind == ValueKind::kLocal &&
                                 inst.value.local == inst.dest;
          const bool dead = inst.kind == InstKind::kAssign && inst.dest < uses.size() &&
                            uses[inst.dest] == 0 && PureValue(inst.value);
          if (self_copy || dead) {
            ++removed;
            continue;
          }
          keep.push_back(std::move(inst));
        }
        b.insts = std::move(keep);
      }
      n += removed;
      if (removed == 0) break;
    }
  }
  return n;
}

std::size_t EliminateRefCountPairs(Program& program) {
  std::size_t n = 0;
  for (Function& fn : program.functions) {
    for (BasicBlock& b : fn.blocks) {
      std::vector<bool> drop(b.insts.size(), false);
      std::size_t pairs = 0;
      for (std::size_t i = 0; i < b.insts.size(); ++i) {
        if (drop[i] || b.insts[i].kind != InstKind::kIncRef) continue;
        const LocalId x = b.insts[i].dest;
        for (std::size_t j = i + 1; j < b.insts.size(); ++j) {
          const Inst& k = b.insts[j];
          if (drop[j]) continue;
          if (k.kind == InstKind::kDecRef && k.dest == x) {
            drop[i] = drop[j] = true;
            ++pairs;
            break;
          }
          bool mentions = Def(k) == x || k.dest == x;
          ForEachReadValue(k, [&](const Value& v) {
            ForEachLocalLeaf(v, [&](const Value& leaf) { mentions |= leaf.local == x; });
          });
          if (mentions || k.kind == InstKind::kCall || k.kind == InstKind::kIndirectCall) break;
        }
      }
      if (pairs == 0) continue;
      n += pairs;
      std::vector<Inst> keep;
      for (std::size_t i = 0; i < b.insts.size(); ++i) {
        if (!drop[i]) keep.push_back(std::move(b.insts[i]));
      }
      b.insts = std::move(keep);
    }
  }
  return n;
}

Stats Optimize(Program& program, int level) {
  Stats s;
  if (level <= 0) return s;
  s.inlined = InlineSmallFunctions(program);
  for (int round = 0; round < 4; ++round) {
    const std::size_t p = PropagateCopies(program);
    const std::size_t f = FoldConstants(program);
    const std::size_t d = EliminateDeadAssignments(program);
    s.propagated += p;
    s.folded += f;
    s.dead_removed += d;
    if (f == 0 && d == 0) break;
  }
  s.refcount_pairs = EliminateRefCountPairs(program);
  return s;
}

}  // namespace trove::kodo::mir::opt

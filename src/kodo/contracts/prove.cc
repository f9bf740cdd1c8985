#include "kodo/contracts/prove.h"

#include <fmt/core.h>

#include <limits>
#include <set>

namespace trove::kodo::contracts {
namespace {

using ast::BinOp;
using ast::Expr;
using ast::ExprKind;
using ast::Stmt;
using ast::StmtKind;

constexpr std::size_t kMaxPaths = 256;       // forks of the symbolic execution
constexpr std::uint32_t kMaxCallDepth = 64;  // the concrete evaluator's call depth

// Why a function or clause is outside the fragment.
struct OutsideFragment {
  std::string reason;
};

enum class Sort : std::uint8_t { kInt, kBool, kOther };

// Resolves a parameter or return type through aliases: Int, Bool or anything else, collecting
// the refinement constraints met on the way.
Sort SortOf(const ast::Module& module, const ast::TypeExpr& t,
            std::vector<const ast::TypeAlias*>* refinements) {
  const ast::TypeExpr* cur = &t;
  for (int hops = 0; hops < 64; ++hops) {
    if (cur->kind != ast::TypeKind::kNamed) return Sort::kOther;
    if (cur->name == "Int") return Sort::kInt;
    if (cur->name == "Bool") return Sort::kBool;
    const ast::TypeAlias* alias = nullptr;
    for (const ast::TypeAlias& a : module.type_aliases) {
      if (a.name == cur->name) alias = &a;
    }
    if (alias == nullptr) return Sort::kOther;
    if (alias->constraint && refinements != nullptr) refinements->push_back(alias);
    cur = &alias->base_type;
  }
  return Sort::kOther;
}

const ast::Function* FindFunction(const ast::Module& module, std::string_view name) {
  for (const ast::Function& f : module.functions) {
    if (f.name == name && f.generic_params.empty()) return &f;
  }
  return nullptr;
}

bool IsPrintBuiltin(std::string_view name) {
  return name == "println" || name == "print" || name == "print_int" || name == "print_float" ||
         name == "println_float";
}

std::string BvLiteral(std::int64_t v) {
  return fmt::format("(_ bv{} 64)", static_cast<std::uint64_t>(v));
}

const std::string kMin = BvLiteral(std::numeric_limits<std::int64_t>::min());
const std::string kMinusOne = BvLiteral(-1);
const std::string kZero = BvLiteral(0);

struct Term {
  Sort sort = Sort::kInt;
  std::string text;
};

using Env = std::vector<std::pair<std::string, Term>>;

const Term* Lookup(const Env& env, std::string_view name) {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (it->first == name) return &it->second;
  }
  return nullptr;
}

std::string And(const std::vector<std::string>& parts) {
  if (parts.empty()) return "true";
  if (parts.size() == 1) return parts[0];
  std::string s = "(and";
  for (const std::string& p : parts) s += " " + p;
  return s + ")";
}

// Builds the SMT encoding of one function. Throws OutsideFragment for what it cannot encode.
class Encoder {
 public:
  Encoder(const ast::Module& module) : module_(module) {}

  // Declares a fresh constant of `sort` named after `hint`.
  Term Fresh(Sort sort, std::string_view hint) {
    std::string name = fmt::format("|{}!{}|", hint, fresh_++);
    decls_ += fmt::format("(declare-const {} {})\n", name, SortName(sort));
    return Term{sort, name};
  }
  Term Declare(const std::string& name, Sort sort) {
    decls_ += fmt::format("(declare-const |{}| {})\n", name, SortName(sort));
    return Term{sort, "|" + name + "|"};
  }
  static const char* SortName(Sort s) { return s == Sort::kBool ? "Bool" : "(_ BitVec 64)"; }

  // Encodes `e` under `guard` (the conditions under which it is evaluated). Conditions that
  // must hold for the evaluation not to trap go to `defined`, each guarded.
  Term Eval(const Expr& e, const Env& env, const std::string& guard,
            std::vector<std::string>& defined, std::uint32_t depth) {
    if (depth > ast::kMaxTreeDepth) throw OutsideFragment{"expression nests too deeply"};
    switch (e.kind) {
      case ExprKind::kIntLit:
        return Term{Sort::kInt, BvLiteral(e.int_value)};
      case ExprKind::kBoolLit:
        return Term{Sort::kBool, e.flag ? "true" : "false"};
      case ExprKind::kIdent: {
        const Term* t = Lookup(env, e.text);
        if (t == nullptr)
          throw OutsideFragment{fmt::format("`{}` is not an Int or Bool local", e.text)};
        return *t;
      }
      case ExprKind::kUnaryOp: {
        Term t = Eval(e.operand(), env, guard, defined, depth + 1);
        if (e.unary_op == ast::UnaryOp::kNot) {
          Need(t, Sort::kBool);
          return Term{Sort::kBool, "(not " + t.text + ")"};
        }
        Need(t, Sort::kInt);
        return Term{Sort::kInt, "(bvneg " + t.text + ")"};
      }
      case ExprKind::kBinaryOp:
        return Binary(e, env, guard, defined, depth);
      case ExprKind::kIf: {
        Term c = Eval(e.operand(), env, guard, defined, depth + 1);
        Need(c, Sort::kBool);
        if (!e.extra || !e.extra->block || !e.extra->else_block) {
          throw OutsideFragment{"an `if` used as a value needs an `else`"};
        }
        Term a = BlockValue(*e.extra->block, env, Conj(guard, c.text), defined, depth + 1);
        Term b = BlockValue(*e.extra->else_block, env, Conj(guard, "(not " + c.text + ")"), defined,
                            depth + 1);
        if (a.sort != b.sort) throw OutsideFragment{"`if` branches of different types"};
        return Term{a.sort, fmt::format("(ite {} {} {})", c.text, a.text, b.text)};
      }
      case ExprKind::kCall:
        return Call(e, env, guard, defined, depth);
      case ExprKind::kBlock:
        if (e.extra && e.extra->block) {
          return BlockValue(*e.extra->block, env, guard, defined, depth + 1);
        }
        break;
      default:
        break;
    }
    throw OutsideFragment{"a construct outside the integer fragment"};
  }

  // A block used as a value: `let`s, then a final expression statement.
  Term BlockValue(const ast::Block& block, const Env& outer, const std::string& guard,
                  std::vector<std::string>& defined, std::uint32_t depth) {
    if (block.stmts.empty() || block.stmts.back().kind != StmtKind::kExpr) {
      throw OutsideFragment{"a block used as a value must end with an expression"};
    }
    Env env = outer;
    for (std::size_t i = 0; i + 1 < block.stmts.size(); ++i) {
      const Stmt& s = block.stmts[i];
      if (s.kind != StmtKind::kLet) throw OutsideFragment{"only `let` inside a value block"};
      env.emplace_back(std::string(s.name), Eval(s.value, env, guard, defined, depth + 1));
    }
    return Eval(block.stmts.back().value, env, guard, defined, depth + 1);
  }

  // Translates a contract clause of `callee` (or of the function itself) with `env` binding its
  // parameters (and `result`).
  Term Clause(const Expr& e, const Env& env, const std::string& guard,
              std::vector<std::string>& defined) {
    Term t = Eval(e, env, guard, defined, 0);
    Need(t, Sort::kBool);
    return t;
  }

  std::string Conj(const std::string& a, const std::string& b) {
    if (a == "true") return b;
    return fmt::format("(and {} {})", a, b);
  }

  void Need(const Term& t, Sort s) {
    if (t.sort != s) throw OutsideFragment{"an Int where a Bool is needed, or the reverse"};
  }

  const std::string& decls() const { return decls_; }
  std::vector<std::string>& axioms() { return axioms_; }

 private:
  Term Binary(const Expr& e, const Env& env, const std::string& guard,
              std::vector<std::string>& defined, std::uint32_t depth) {
    Term l = Eval(e.left(), env, guard, defined, depth + 1);
    if (e.bin_op == BinOp::kAnd || e.bin_op == BinOp::kOr) {
      Need(l, Sort::kBool);
      // The right operand runs only when the left did not decide (short circuit).
      const std::string when = e.bin_op == BinOp::kAnd ? l.text : "(not " + l.text + ")";
      Term r = Eval(e.right(), env, Conj(guard, when), defined, depth + 1);
      Need(r, Sort::kBool);
      return Term{Sort::kBool, fmt::format("({} {} {})", e.bin_op == BinOp::kAnd ? "and" : "or",
                                           l.text, r.text)};
    }
    Term r = Eval(e.right(), env, guard, defined, depth + 1);
    if (e.bin_op == BinOp::kEq || e.bin_op == BinOp::kNe) {
      if (l.sort != r.sort) throw OutsideFragment{"`==` between an Int and a Bool"};
      return Term{Sort::kBool, fmt::format("({} {} {})", e.bin_op == BinOp::kEq ? "=" : "distinct",
                                           l.text, r.text)};
    }
    Need(l, Sort::kInt);
    Need(r, Sort::kInt);
    const char* op = "";
    Sort sort = Sort::kInt;
    switch (e.bin_op) {
      case BinOp::kAdd:
        op = "bvadd";
        break;
      case BinOp::kSub:
        op = "bvsub";
        break;
      case BinOp::kMul:
        op = "bvmul";
        break;
      case BinOp::kDiv:
        op = "bvsdiv";
        break;
      case BinOp::kMod:
        op = "bvsrem";
        break;
      case BinOp::kLt:
        op = "bvslt";
        sort = Sort::kBool;
        break;
      case BinOp::kGt:
        op = "bvsgt";
        sort = Sort::kBool;
        break;
      case BinOp::kLe:
        op = "bvsle";
        sort = Sort::kBool;
        break;
      case BinOp::kGe:
        op = "bvsge";
        sort = Sort::kBool;
        break;
      default:
        break;
    }
    if (e.bin_op == BinOp::kDiv || e.bin_op == BinOp::kMod) {
      // sdiv/srem trap on a zero divisor and on MIN / -1 (docs/kodo-contracts.md §4).
      defined.push_back(
          fmt::format("(=> {} (and (distinct {} {}) (not (and (= {} {}) (= {} {})))))", guard,
                      r.text, kZero, l.text, kMin, r.text, kMinusOne));
    }
    return Term{sort, fmt::format("({} {} {})", op, l.text, r.text)};
  }

  Term Call(const Expr& e, const Env& env, const std::string& guard,
            std::vector<std::string>& defined, std::uint32_t depth) {
    const Expr& callee_expr = e.operands[0];
    if (callee_expr.kind != ExprKind::kIdent) throw OutsideFragment{"a method call"};
    const ast::Function* callee = FindFunction(module_, callee_expr.text);
    if (callee == nullptr) {
      throw OutsideFragment{
          fmt::format("a call to `{}`, not a function of the module", callee_expr.text)};
    }
    if (callee->params.size() + 1 != e.operands.size()) throw OutsideFragment{"arity"};
    Env callee_env;
    for (std::size_t i = 0; i < callee->params.size(); ++i) {
      const ast::Param& p = callee->params[i];
      if (p.ownership == ast::Ownership::kMut) throw OutsideFragment{"a `mut` argument"};
      std::vector<const ast::TypeAlias*> refinements;
      Sort s = SortOf(module_, p.ty, &refinements);
      Term arg = Eval(e.operands[i + 1], env, guard, defined, depth + 1);
      if (s == Sort::kOther || arg.sort != s) throw OutsideFragment{"a non-Int argument"};
      callee_env.emplace_back(std::string(p.name), arg);
    }
    Sort rs = SortOf(module_, callee->return_type, nullptr);
    if (rs == Sort::kOther) throw OutsideFragment{"a call returning neither Int nor Bool"};
    Term result = Fresh(rs, callee->name);
    callee_env.emplace_back("result", result);
    // The callee's requires passed (they are checked on entry) and its ensures hold of what it
    // returned (checked on every return): both are run-time facts once the call returns.
    std::vector<std::string> facts;
    std::vector<std::string> inner_defined;
    try {
      for (const ast::InvariantDecl& inv : module_.invariants) {
        facts.push_back(Clause(inv.condition, callee_env, guard, inner_defined).text);
      }
      for (const Expr& r : callee->requires_) {
        facts.push_back(Clause(r, callee_env, guard, inner_defined).text);
      }
      for (const Expr& r : callee->ensures) {
        facts.push_back(Clause(r, callee_env, guard, inner_defined).text);
      }
    } catch (const OutsideFragment&) {
      facts.clear();  // a clause we cannot read is simply not assumed (weaker, still sound)
      inner_defined.clear();
    }
    for (std::string& d : inner_defined) facts.push_back(std::move(d));
    if (!facts.empty()) axioms_.push_back(fmt::format("(=> {} {})", guard, And(facts)));
    return result;
  }

  const ast::Module& module_;
  std::string decls_;
  std::vector<std::string> axioms_;
  int fresh_ = 0;
};

struct State {
  Env env;
  std::vector<std::string> pc;
};

struct ReturnPoint {
  std::string pc;
  Term value;
};

// Symbolic execution of a function body over the fragment.
class Executor {
 public:
  Executor(Encoder& enc, Sort result_sort) : enc_(enc), result_sort_(result_sort) {}

  // Runs `block` from each state; returns the states that fall through.
  std::vector<State> Block(const ast::Block& block, std::vector<State> states,
                           std::uint32_t depth) {
    if (depth > ast::kMaxTreeDepth) throw OutsideFragment{"statements nest too deeply"};
    for (const Stmt& s : block.stmts) {
      std::vector<State> next;
      for (State& st : states) {
        for (State& out : Step(s, std::move(st), depth)) next.push_back(std::move(out));
      }
      states = std::move(next);
      if (states.size() > kMaxPaths) throw OutsideFragment{"too many paths"};
      if (states.empty()) break;
    }
    return states;
  }

  std::vector<ReturnPoint>& returns() { return returns_; }
  std::vector<std::string>& defined() { return defined_; }

 private:
  std::vector<State> Step(const Stmt& s, State st, std::uint32_t depth) {
    const std::string guard = And(st.pc);
    switch (s.kind) {
      case StmtKind::kLet: {
        Term v = enc_.Eval(s.value, st.env, guard, defined_, depth + 1);
        st.env.emplace_back(std::string(s.name), v);
        if (s.ty) {
          std::vector<const ast::TypeAlias*> refinements;
          SortOf(module(), *s.ty, &refinements);
          // `let v: Alias = e` checks the refinement at run time (docs/kodo-contracts.md §6): past
          // it, it holds.
          for (const ast::TypeAlias* a : refinements) {
            Env self_env = st.env;
            self_env.emplace_back("self", v);
            std::vector<std::string> d;
            try {
              Term c = enc_.Clause(*a->constraint, self_env, guard, d);
              st.pc.push_back(c.text);
            } catch (const OutsideFragment&) {
            }
          }
        }
        return {std::move(st)};
      }
      case StmtKind::kAssign: {
        Term v = enc_.Eval(s.value, st.env, guard, defined_, depth + 1);
        for (auto it = st.env.rbegin(); it != st.env.rend(); ++it) {
          if (it->first == s.name) {
            if (it->second.sort != v.sort) throw OutsideFragment{"assignment of another type"};
            it->second = v;
            return {std::move(st)};
          }
        }
        throw OutsideFragment{fmt::format("assignment to `{}`, not a local", s.name)};
      }
      case StmtKind::kReturn: {
        Term v = s.has_value ? enc_.Eval(s.value, st.env, guard, defined_, depth + 1)
                             : enc_.Fresh(result_sort_, "unit");
        if (v.sort != result_sort_) throw OutsideFragment{"a return of another type"};
        returns_.push_back({guard, v});
        return {};
      }
      case StmtKind::kExpr: {
        const Expr& e = s.value;
        if (e.kind == ExprKind::kIf && e.extra && e.extra->block) {
          Term c = enc_.Eval(e.operand(), st.env, guard, defined_, depth + 1);
          enc_.Need(c, Sort::kBool);
          const std::size_t scope = st.env.size();
          State yes = st;
          yes.pc.push_back(c.text);
          State no = std::move(st);
          no.pc.push_back("(not " + c.text + ")");
          std::vector<State> out = Block(*e.extra->block, {std::move(yes)}, depth + 1);
          std::vector<State> other = e.extra->else_block
                                         ? Block(*e.extra->else_block, {std::move(no)}, depth + 1)
                                         : std::vector<State>{std::move(no)};
          for (State& o : other) out.push_back(std::move(o));
          for (State& o : out) o.env.resize(scope);  // the branches' lets go out of scope
          return out;
        }
        if (e.kind == ExprKind::kCall && e.operands[0].kind == ExprKind::kIdent &&
            IsPrintBuiltin(e.operands[0].text)) {
          return {std::move(st)};  // output only: no Int or Bool local changes
        }
        enc_.Eval(e, st.env, guard, defined_, depth + 1);
        return {std::move(st)};
      }
      default:
        throw OutsideFragment{"a loop or statement outside the loop-free fragment"};
    }
  }

  const ast::Module& module() const { return *module_; }

 public:
  const ast::Module* module_ = nullptr;

 private:
  Encoder& enc_;
  Sort result_sort_;
  std::vector<ReturnPoint> returns_;
  std::vector<std::string> defined_;
};

// Reads "name -> #x00000000000000ff" / "name -> true" lines of a model.
std::map<std::string, std::string> ModelValues(const std::string& model) {
  std::map<std::string, std::string> out;
  std::size_t pos = 0;
  while (pos < model.size()) {
    std::size_t end = model.find('\n', pos);
    if (end == std::string::npos) end = model.size();
    const std::string line = model.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t arrow = line.find(" -> ");
    if (arrow == std::string::npos) continue;
    std::string name = line.substr(0, arrow);
    if (name.size() >= 2 && name.front() == '|' && name.back() == '|') {
      name = name.substr(1, name.size() - 2);
    }
    std::string value = line.substr(arrow + 4);
    if (value.rfind("#x", 0) == 0) {
      const std::uint64_t u = std::stoull(value.substr(2), nullptr, 16);
      value = std::to_string(static_cast<std::int64_t>(u));
    } else if (value.rfind("#b", 0) == 0) {
      const std::uint64_t u = std::stoull(value.substr(2), nullptr, 2);
      value = std::to_string(static_cast<std::int64_t>(u));
    }
    out[name] = value;
  }
  return out;
}

}  // namespace

std::vector<Proof> ProveEnsures(const ast::Module& module, const ast::Function& fn,
                                const std::vector<const ast::Expr*>& goals, SmtCache& cache) {
  std::vector<Proof> proofs(goals.size());
  Encoder enc(module);
  std::string prefix;  // everything but the goal
  Term result_term;
  try {
    const Sort result_sort = SortOf(module, fn.return_type, nullptr);
    if (result_sort == Sort::kOther) throw OutsideFragment{"the result is neither Int nor Bool"};
    if (!fn.generic_params.empty()) throw OutsideFragment{"a generic function"};
    State start;
    std::vector<std::string> hyps;
    for (const ast::Param& p : fn.params) {
      std::vector<const ast::TypeAlias*> refinements;
      const Sort s = SortOf(module, p.ty, &refinements);
      if (s == Sort::kOther) continue;  // not in scope: a use is outside the fragment
      Term t = enc.Declare(std::string(p.name), s);
      start.env.emplace_back(std::string(p.name), t);
      for (const ast::TypeAlias* a : refinements) {
        Env self_env = start.env;
        self_env.emplace_back("self", t);
        std::vector<std::string> d;
        try {
          hyps.push_back(enc.Clause(*a->constraint, self_env, "true", d).text);
          for (std::string& x : d) hyps.push_back(std::move(x));
        } catch (const OutsideFragment&) {
        }
      }
    }
    // Requires (invariants first): checked on entry, so assumed; one we cannot read is dropped.
    auto assume = [&](const Expr& e) {
      std::vector<std::string> d;
      try {
        hyps.push_back(enc.Clause(e, start.env, "true", d).text);
        for (std::string& x : d) hyps.push_back(std::move(x));
      } catch (const OutsideFragment&) {
      }
    };
    for (const ast::InvariantDecl& inv : module.invariants) assume(inv.condition);
    for (const Expr& e : fn.requires_) assume(e);

    Executor exec(enc, result_sort);
    exec.module_ = &module;
    std::vector<State> ends = exec.Block(fn.body, {start}, 0);
    // Falling off the end returns no value we know: any value (sound for every ensures).
    for (State& st : ends) exec.returns().push_back({And(st.pc), enc.Fresh(result_sort, "end")});
    result_term = enc.Declare("result", result_sort);
    std::vector<std::string> paths;
    for (const ReturnPoint& r : exec.returns()) {
      paths.push_back(fmt::format("(and {} (= {} {}))", r.pc, result_term.text, r.value.text));
    }
    prefix = enc.decls();
    for (const std::string& h : hyps) prefix += fmt::format("(assert {})\n", h);
    for (const std::string& a : enc.axioms()) prefix += fmt::format("(assert {})\n", a);
    for (const std::string& d : exec.defined()) prefix += fmt::format("(assert {})\n", d);
    prefix += fmt::format("(assert {})\n",
                          paths.empty() ? "false" : (paths.size() == 1 ? paths[0] : "(or " + [&] {
                            std::string s;
                            for (auto& p : paths) s += p + " ";
                            return s;
                          }() + ")"));
    for (std::size_t g = 0; g < goals.size(); ++g) {
      Env env = start.env;
      env.emplace_back("result", result_term);
      std::vector<std::string> goal_defined;
      std::string goal;
      try {
        // The clause is evaluated after the body: its decls are added after the prefix's.
        const std::size_t decl_mark = enc.decls().size();
        goal = enc.Clause(*goals[g], env, "true", goal_defined).text;
        std::string script = prefix + enc.decls().substr(decl_mark);
        // A clause that would trap when checked fails too: it must be defined and true.
        std::vector<std::string> all = goal_defined;
        all.push_back(goal);
        script += fmt::format("(assert (not {}))\n", And(all));
        const SmtAnswer& answer = cache.Solve(script);
        Proof& p = proofs[g];
        p.outcome = answer.outcome;
        p.reason = answer.reason;
        if (answer.outcome == SmtOutcome::kRefuted) {
          p.model = answer.model;
          std::map<std::string, std::string> values = ModelValues(answer.model);
          for (const ast::Param& prm : fn.params) {
            auto it = values.find(std::string(prm.name));
            const Sort s = SortOf(module, prm.ty, nullptr);
            std::string v = it != values.end() ? it->second : (s == Sort::kBool ? "false" : "0");
            p.values.emplace_back(std::string(prm.name), v);
          }
        }
      } catch (const OutsideFragment& o) {
        proofs[g].reason = "outside the prove fragment: " + o.reason;
      }
    }
  } catch (const OutsideFragment& o) {
    for (Proof& p : proofs) p.reason = "outside the prove fragment: " + o.reason;
  }
  return proofs;
}

// ---------------------------------------------------------------------------------------------
// The concrete evaluator.

namespace {

struct Trap {};  // a trap, a failed requires, or a construct outside the fragment

using VEnv = std::vector<std::pair<std::string, Value>>;

class Interp {
 public:
  explicit Interp(const ast::Module* module) : module_(module) {}

  Value Eval(const Expr& e, const VEnv& env, std::uint32_t depth) {
    if (depth > ast::kMaxTreeDepth) throw Trap{};
    switch (e.kind) {
      case ExprKind::kIntLit:
        return Value{false, e.int_value, false};
      case ExprKind::kBoolLit:
        return Value{true, 0, e.flag};
      case ExprKind::kIdent:
        for (auto it = env.rbegin(); it != env.rend(); ++it) {
          if (it->first == e.text) return it->second;
        }
        throw Trap{};
      case ExprKind::kUnaryOp: {
        Value v = Eval(e.operand(), env, depth + 1);
        if (e.unary_op == ast::UnaryOp::kNot) return Value{true, 0, !v.b};
        return Value{false, static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(v.i)), false};
      }
      case ExprKind::kBinaryOp: {
        Value l = Eval(e.left(), env, depth + 1);
        if (e.bin_op == BinOp::kAnd) return l.b ? Eval(e.right(), env, depth + 1) : l;
        if (e.bin_op == BinOp::kOr) return l.b ? l : Eval(e.right(), env, depth + 1);
        Value r = Eval(e.right(), env, depth + 1);
        const auto ul = static_cast<std::uint64_t>(l.i), ur = static_cast<std::uint64_t>(r.i);
        auto I = [](std::uint64_t u) { return Value{false, static_cast<std::int64_t>(u), false}; };
        auto B = [](bool b) { return Value{true, 0, b}; };
        switch (e.bin_op) {
          case BinOp::kAdd:
            return I(ul + ur);
          case BinOp::kSub:
            return I(ul - ur);
          case BinOp::kMul:
            return I(ul * ur);
          case BinOp::kDiv:
          case BinOp::kMod:
            if (r.i == 0 || (l.i == std::numeric_limits<std::int64_t>::min() && r.i == -1)) {
              throw Trap{};
            }
            return I(static_cast<std::uint64_t>(e.bin_op == BinOp::kDiv ? l.i / r.i : l.i % r.i));
          case BinOp::kEq:
            return B(l == r);
          case BinOp::kNe:
            return B(!(l == r));
          case BinOp::kLt:
            return B(l.i < r.i);
          case BinOp::kGt:
            return B(l.i > r.i);
          case BinOp::kLe:
            return B(l.i <= r.i);
          case BinOp::kGe:
            return B(l.i >= r.i);
          default:
            throw Trap{};
        }
      }
      case ExprKind::kIf: {
        Value c = Eval(e.operand(), env, depth + 1);
        if (!e.extra || !e.extra->block || !e.extra->else_block) throw Trap{};
        return BlockValue(c.b ? *e.extra->block : *e.extra->else_block, env, depth + 1);
      }
      case ExprKind::kCall: {
        if (module_ == nullptr || e.operands[0].kind != ExprKind::kIdent) throw Trap{};
        const ast::Function* f = FindFunction(*module_, e.operands[0].text);
        if (f == nullptr) throw Trap{};
        std::vector<Value> args;
        for (std::size_t i = 1; i < e.operands.size(); ++i) {
          args.push_back(Eval(e.operands[i], env, depth + 1));
        }
        return Call(*f, args);
      }
      default:
        throw Trap{};
    }
  }

  Value BlockValue(const ast::Block& block, VEnv env, std::uint32_t depth) {
    if (block.stmts.empty()) throw Trap{};
    for (std::size_t i = 0; i + 1 < block.stmts.size(); ++i) {
      const Stmt& s = block.stmts[i];
      if (s.kind != StmtKind::kLet) throw Trap{};
      env.emplace_back(std::string(s.name), Eval(s.value, env, depth + 1));
    }
    return Eval(block.stmts.back().value, env, depth + 1);
  }

  Value Call(const ast::Function& f, const std::vector<Value>& args) {
    if (++calls_ > 100000 || call_depth_ >= kMaxCallDepth) throw Trap{};
    if (args.size() != f.params.size()) throw Trap{};
    VEnv env;
    for (std::size_t i = 0; i < args.size(); ++i) {
      env.emplace_back(std::string(f.params[i].name), args[i]);
    }
    for (const ast::InvariantDecl& inv : module_->invariants) {
      if (!Eval(inv.condition, env, 0).b) throw Trap{};
    }
    for (const Expr& r : f.requires_) {
      if (!Eval(r, env, 0).b) throw Trap{};  // requires failed: the program aborts
    }
    ++call_depth_;
    std::optional<Value> ret = Run(f.body, env, 0);
    --call_depth_;
    if (!ret) throw Trap{};  // fell off the end
    return *ret;
  }

  // Runs statements; returns the returned value, or nothing when the block falls through.
  std::optional<Value> Run(const ast::Block& block, VEnv& env, std::uint32_t depth) {
    if (depth > ast::kMaxTreeDepth) throw Trap{};
    const std::size_t scope = env.size();
    for (const Stmt& s : block.stmts) {
      switch (s.kind) {
        case StmtKind::kLet:
          env.emplace_back(std::string(s.name), Eval(s.value, env, depth + 1));
          break;
        case StmtKind::kAssign: {
          Value v = Eval(s.value, env, depth + 1);
          bool found = false;
          for (auto it = env.rbegin(); it != env.rend() && !found; ++it) {
            if (it->first == s.name) {
              it->second = v;
              found = true;
            }
          }
          if (!found) throw Trap{};
          break;
        }
        case StmtKind::kReturn:
          if (!s.has_value) throw Trap{};
          return Eval(s.value, env, depth + 1);
        case StmtKind::kExpr: {
          const Expr& e = s.value;
          if (e.kind == ExprKind::kIf && e.extra && e.extra->block) {
            const bool c = Eval(e.operand(), env, depth + 1).b;
            const ast::Block* b =
                c ? &*e.extra->block : (e.extra->else_block ? &*e.extra->else_block : nullptr);
            if (b != nullptr) {
              if (std::optional<Value> r = Run(*b, env, depth + 1)) return r;
            }
            break;
          }
          if (e.kind == ExprKind::kCall && e.operands[0].kind == ExprKind::kIdent &&
              IsPrintBuiltin(e.operands[0].text)) {
            break;
          }
          Eval(e, env, depth + 1);
          break;
        }
        default:
          throw Trap{};
      }
    }
    env.resize(scope);
    return std::nullopt;
  }

 private:
  const ast::Module* module_;
  std::uint32_t call_depth_ = 0;
  std::uint64_t calls_ = 0;
};

}  // namespace

std::optional<Value> RunFunction(const ast::Module& module, const ast::Function& fn,
                                 const std::vector<Value>& args) {
  try {
    Interp interp(&module);
    return interp.Call(fn, args);
  } catch (const Trap&) {
    return std::nullopt;
  }
}

std::optional<Value> EvalContract(const ast::Expr& expr, const std::map<std::string, Value>& env) {
  VEnv venv(env.begin(), env.end());
  try {
    Interp interp(nullptr);
    return interp.Eval(expr, venv, 0);
  } catch (const Trap&) {
    return std::nullopt;
  }
}

std::optional<Value> ParseValue(const std::string& text) {
  if (text == "true") return Value{true, 0, true};
  if (text == "false") return Value{true, 0, false};
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used != text.size()) return std::nullopt;
    return Value{false, static_cast<std::int64_t>(v), false};
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace trove::kodo::contracts

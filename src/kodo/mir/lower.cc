#include "kodo/mir/lower.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kodo/mir/prelude.h"
#include "kodo/parse/parser.h"
#include "kodo/sema/builtins.h"
#include "kodo/source/source_buffer.h"

namespace trove::kodo::mir {
namespace {

using ast::BinOp;
using ast::ExprKind;
using ast::StmtKind;

// An operand and what the lowering knows of its type: the base name (`Int`, `String`, `List`,
// `Option`, a struct or enum name), or empty when unknown.
struct Operand {
  Value v;
  std::string ty;
};

struct EnumInfo {
  std::vector<std::string> variants;
};

struct FnInfo {
  std::string ret;  // base type name of the result, empty when unknown
};

std::string BaseOfResultText(std::string_view t) {
  if (t.empty() || t == "()") return t == "()" ? "()" : "";
  if (t.size() == 1) return "";  // a type variable
  if (t.find("__") != std::string_view::npos) return std::string(t.substr(0, t.find("__")));
  if (t.find('<') != std::string_view::npos) return std::string(t.substr(0, t.find('<')));
  if (t[0] == '(' || t[0] == '?') return "";
  return std::string(t);
}

class ModuleLowerer;

class FnBuilder {
 public:
  FnBuilder(ModuleLowerer& m, std::string name) : m_(m) { fn_.name = std::move(name); }

  Function& fn() { return fn_; }
  Function Take() { return std::move(fn_); }

  LocalId NewLocal(std::string ty, std::string name = "", bool mut = false) {
    fn_.locals.push_back(LocalDecl{ty.empty() ? "?" : std::move(ty), std::move(name), mut});
    return static_cast<LocalId>(fn_.locals.size() - 1);
  }
  BlockId NewBlock() {
    fn_.blocks.emplace_back();
    return static_cast<BlockId>(fn_.blocks.size() - 1);
  }
  void SetBlock(BlockId b) { cur_ = b; }
  BlockId cur() const { return cur_; }

  void Emit(Inst inst) { fn_.blocks[cur_].insts.push_back(std::move(inst)); }
  void Assign(LocalId dest, Value v) {
    Inst inst;
    inst.kind = InstKind::kAssign;
    inst.dest = dest;
    inst.value = std::move(v);
    Emit(std::move(inst));
  }
  void Call(LocalId dest, std::string callee, std::vector<Value> args) {
    Inst inst;
    inst.kind = InstKind::kCall;
    inst.dest = dest;
    inst.callee = std::move(callee);
    inst.args = std::move(args);
    Emit(std::move(inst));
  }
  // Ends the current block; later code goes to a fresh (unreachable) block.
  void Terminate(Terminator t) {
    fn_.blocks[cur_].term = std::move(t);
    cur_ = NewBlock();
  }
  void Goto(BlockId b) {
    Terminator t;
    t.kind = TermKind::kGoto;
    t.target = b;
    fn_.blocks[cur_].term = std::move(t);
  }
  void Branch(Value cond, BlockId yes, BlockId no) {
    Terminator t;
    t.kind = TermKind::kBranch;
    t.value = std::move(cond);
    t.target = yes;
    t.otherwise = no;
    fn_.blocks[cur_].term = std::move(t);
  }
  Value Temp(Value v, const std::string& ty = "") {
    const LocalId id = NewLocal(ty);
    Assign(id, std::move(v));
    return Value::Local(id);
  }

  // Scopes.
  void Push() { scopes_.emplace_back(); }
  void Pop() { scopes_.pop_back(); }
  void Bind(const std::string& name, LocalId id) { scopes_.back()[name] = id; }
  std::optional<LocalId> Lookup(const std::string& name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end()) return f->second;
    }
    return std::nullopt;
  }
  std::string TypeOfLocal(LocalId id) const {
    return fn_.locals[id].ty == "?" ? "" : fn_.locals[id].ty;
  }

  // Lowers a whole function body given its AST (free function, lifted method or closure).
  Status LowerFunction(const ast::Function& f, const std::string& self_type,
                       const std::vector<const ast::Expr*>& invariants);
  Status LowerClosureBody(const ast::Expr& closure, const std::vector<std::string>& captures,
                          const std::vector<std::string>& capture_types, FnBuilder& outer);
  Status LowerTaskBody(const ast::Block& body, const std::vector<std::string>& captures,
                       const std::vector<std::string>& capture_types);

 private:
  friend class ModuleLowerer;

  Status Err(std::string what) const {
    return Status::Unsupported(fmt::format("function `{}`: {}", fn_.name, what));
  }

  Result<Operand> Expr(const ast::Expr& e, int depth);
  Result<Operand> Block(const ast::Block& b, int depth);
  Status Stmt(const ast::Stmt& s, int depth);
  Result<Operand> CallExpr(const ast::Expr& e, int depth);
  Result<Operand> Match(const ast::Expr& e, int depth);
  Result<Operand> Closure(const ast::Expr& e);
  Result<Operand> Interp(const ast::Expr& e, int depth);
  Status ForIn(const ast::Stmt& s, int depth);
  Status Select(const ast::Stmt& s, int depth);
  Status For(const ast::Stmt& s, int depth);
  // Emits the tests of `p` against `subject`; falls through in a new current block on a match,
  // branches to `fail` otherwise. Binds the pattern's names in the current scope.
  Status TestPattern(const ast::Pattern& p, Value subject, const std::string& subject_ty,
                     BlockId fail, int depth);
  void ReturnValue(Value v);
  Status ContractChecks(const std::vector<const ast::Expr*>& clauses, const char* kind, int depth);
  void FailContract(const std::string& message, BlockId ok);
  Status RefinementCheck(const std::string& alias, LocalId v, const std::string& var_name,
                         int depth);

  ModuleLowerer& m_;
  Function fn_;
  BlockId cur_ = 0;
  std::vector<std::unordered_map<std::string, LocalId>> scopes_;
  struct Loop {
    BlockId cont;
    BlockId brk;
  };
  std::vector<Loop> loops_;
  LocalId ret_ = kNoLocal;
  BlockId exit_ = 0;
  bool returns_result_ = false;
  std::string ret_base_;
  LocalId parallel_group_ = kNoLocal;  // the enclosing `parallel` statement's group
};

// One module of the program (LowerProgram) and how names resolve in it.
struct Unit {
  const ast::Module* module = nullptr;
  std::vector<std::size_t> deps;  // the units it sees, ascending (the main unit: all others)
  // Its own free functions (and, for the main unit, those its intents generate): source name ->
  // MIR name.
  std::unordered_map<std::string, std::string> own;
};

class ModuleLowerer {
 public:
  ModuleLowerer(const ast::Module& module, std::span<const Import> imports,
                const LowerOptions& options)
      : module_(module), imports_(imports), options_(options) {}

  Result<Program> Run();

  // The MIR name of the function `n` names in the module being lowered (`n` itself when it is
  // not one of the program's free functions: a builtin, a method, an injected function).
  // As the checker registers names: the module's own shadow its imports', and a later import's
  // an earlier one's. At most kMaxImportedModules lookups (driver/front.h) per name.
  const std::string& ResolveFn(const std::string& n) const {
    if (unit_ == nullptr) return n;
    if (auto it = unit_->own.find(n); it != unit_->own.end()) return it->second;
    for (auto d = unit_->deps.rbegin(); d != unit_->deps.rend(); ++d) {
      const Unit& dep = units_[*d];
      if (auto it = dep.own.find(n); it != dep.own.end()) return it->second;
    }
    return n;
  }
  // `module::f` / `module.f` in the module being lowered: the MIR name of `f` of the imported
  // module declared `module`, or nullopt when no visible module is named so. A function the
  // named module does not declare itself resolves as a plain name, as the checker types it.
  std::optional<std::string> ResolveQualified(const std::string& module,
                                              const std::string& f) const {
    if (unit_ == nullptr) return std::nullopt;
    for (auto d = unit_->deps.rbegin(); d != unit_->deps.rend(); ++d) {
      const Unit& target = units_[*d];
      if (target.module->name != module) continue;
      if (auto it = target.own.find(f); it != target.own.end()) return it->second;
      return ResolveFn(f);
    }
    return std::nullopt;
  }

  // Module facts the function builders consult.
  const LowerOptions& options() const { return options_; }
  bool IsStruct(const std::string& n) const { return structs_.count(n) > 0; }
  const std::vector<std::string>* StructFields(const std::string& n) const {
    auto it = structs_.find(n);
    return it == structs_.end() ? nullptr : &it->second;
  }
  bool IsEnum(const std::string& n) const { return enums_.count(n) > 0; }
  int Discriminant(const std::string& enum_name, const std::string& variant) const {
    auto it = enums_.find(enum_name);
    if (it == enums_.end()) return -1;
    for (std::size_t i = 0; i < it->second.variants.size(); ++i) {
      if (it->second.variants[i] == variant) return static_cast<int>(i);
    }
    return -1;
  }
  // Finds the enum declaring `variant`, preferring `hint`.
  std::string EnumOfVariant(const std::string& variant, const std::string& hint) const {
    if (!hint.empty() && Discriminant(hint, variant) >= 0) return hint;
    for (const auto& name : enum_order_) {
      if (Discriminant(name, variant) >= 0) return name;
    }
    return "";
  }
  bool IsTypeName(const std::string& n) const {
    return IsStruct(n) || IsEnum(n) || impl_types_.count(n) > 0 || aliases_.count(n) > 0;
  }
  const FnInfo* FindFn(const std::string& n) const {
    auto it = fns_.find(n);
    return it == fns_.end() ? nullptr : &it->second;
  }
  const sema::BuiltinSignature* FindBuiltin(const std::string& n) const {
    auto it = builtins_.find(n);
    return it == builtins_.end() ? nullptr : it->second;
  }
  // Whether `n` names an imported module in the module being lowered.
  bool IsModule(const std::string& n) const {
    if (unit_ == nullptr) return false;
    for (std::size_t d : unit_->deps) {
      if (units_[d].module->name == n) return true;
    }
    return false;
  }
  bool IsCallable(const std::string& n) const {
    // assert_eq/assert_ne are checked specially, not builtins of the table (docs/kodo.md §4.8).
    return FindFn(n) != nullptr || FindBuiltin(n) != nullptr || IsRuntimeHook(n) ||
           n == "assert_eq" || n == "assert_ne";
  }
  static bool IsRuntimeHook(const std::string& n) { return n.rfind("kodo_", 0) == 0; }
  const ast::TypeAlias* FindAlias(const std::string& n) const {
    auto it = aliases_.find(n);
    return it == aliases_.end() ? nullptr : it->second;
  }
  std::string BaseOf(const ast::TypeExpr& t) const {
    switch (t.kind) {
      case ast::TypeKind::kNamed: {
        std::string n(t.name);
        int guard = 0;
        while (const ast::TypeAlias* a = FindAlias(n)) {
          if (++guard > 64 || a->base_type.kind != ast::TypeKind::kNamed) {
            return a->base_type.kind == ast::TypeKind::kGeneric ? std::string(a->base_type.name)
                                                                : "";
          }
          n = std::string(a->base_type.name);
        }
        if (n.size() == 1) return "";  // a type parameter
        return n;
      }
      case ast::TypeKind::kGeneric:
        return std::string(t.name);
      case ast::TypeKind::kOptional:
        return "Option";
      case ast::TypeKind::kUnit:
        return "()";
      case ast::TypeKind::kFunction:
        return "Fn";
      case ast::TypeKind::kTuple:
        return "Tuple";
      case ast::TypeKind::kDynTrait:
        return "";
    }
    return "";
  }
  std::string NewClosureName() { return fmt::format("__closure_{}", closure_counter_++); }
  void AddFunction(Function fn) { generated_.push_back(std::move(fn)); }

 private:
  Status LowerOne(const ast::Function& f, const std::string& name, const std::string& self_type,
                  bool injected);
  Status Collect(const ast::Module& m, std::size_t unit);
  Status CollectMethods(const ast::Module& m, std::size_t unit);
  Status NameFunctions(const ast::Module* intents);
  Status LowerUnit(std::size_t unit, const ast::Module* intents);
  Status LowerDefaultMethod(const ast::ImplBlock& impl, const ast::TraitMethod& tm);

  const ast::Module& module_;
  std::span<const Import> imports_;
  LowerOptions options_;
  std::vector<Unit> units_;     // the imports in order, then the main module
  const Unit* unit_ = nullptr;  // the unit being lowered; null for the injected builtins
  // Which unit declared a type or a method (`Type_m`): two modules may not declare one.
  std::unordered_map<std::string, std::size_t> type_owner_;
  std::unordered_map<std::string, std::size_t> method_owner_;
  std::unordered_map<std::string, const ast::TraitDecl*> traits_;
  std::unordered_map<std::string, std::vector<std::string>> structs_;
  std::vector<std::string> struct_order_;
  std::unordered_map<std::string, EnumInfo> enums_;
  std::vector<std::string> enum_order_;
  std::unordered_map<std::string, const ast::TypeAlias*> aliases_;
  std::unordered_set<std::string> impl_types_;
  std::unordered_map<std::string, FnInfo> fns_;
  std::unordered_map<std::string, const sema::BuiltinSignature*> builtins_;
  std::vector<const ast::Expr*> invariants_;
  std::vector<Function> generated_;
  int closure_counter_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Free names of a closure body (for capture), collected by a bounded recursive walk: the parser
// bounds a tree's depth (ast::kMaxTreeDepth), and the walk stops past it.

void CollectNames(const ast::Expr& e, std::set<std::string>& out, std::uint32_t depth);
void CollectNamesBlock(const ast::Block& b, std::set<std::string>& out, std::uint32_t depth);

void CollectNamesStmt(const ast::Stmt& s, std::set<std::string>& out, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  if (s.kind == StmtKind::kAssign) out.insert(std::string(s.name));
  CollectNames(s.value, out, depth + 1);
  CollectNamesBlock(s.body, out, depth + 1);
  if (s.extra) {
    CollectNames(s.extra->value2, out, depth + 1);
    if (s.extra->else_body) CollectNamesBlock(*s.extra->else_body, out, depth + 1);
    for (const auto& arm : s.extra->select_arms) {
      CollectNames(arm.channel, out, depth + 1);
      CollectNamesBlock(arm.body, out, depth + 1);
    }
  }
}

void CollectNamesBlock(const ast::Block& b, std::set<std::string>& out, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  for (const ast::Stmt& s : b.stmts) CollectNamesStmt(s, out, depth + 1);
}

void CollectNames(const ast::Expr& e, std::set<std::string>& out, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  if (e.kind == ExprKind::kIdent) out.insert(std::string(e.text));
  for (const ast::Expr& o : e.operands) CollectNames(o, out, depth + 1);
  if (!e.extra) return;
  if (e.extra->block) CollectNamesBlock(*e.extra->block, out, depth + 1);
  if (e.extra->else_block) CollectNamesBlock(*e.extra->else_block, out, depth + 1);
  for (const auto& f : e.extra->fields) CollectNames(f.value, out, depth + 1);
  for (const auto& arm : e.extra->arms) CollectNames(arm.body, out, depth + 1);
  for (const auto& part : e.extra->parts) {
    if (part.is_expr && part.expr) CollectNames(*part.expr, out, depth + 1);
  }
}

// ---------------------------------------------------------------------------------------------

void FnBuilder::ReturnValue(Value v) {
  Assign(ret_, std::move(v));
  Goto(exit_);
  cur_ = NewBlock();
}

void FnBuilder::FailContract(const std::string& message, BlockId ok) {
  if (returns_result_) {
    Value err;
    err.kind = ValueKind::kEnumVariant;
    err.s = "Result";
    err.s2 = "Err";
    err.i = 1;
    err.operands.push_back(Value::Str(message));
    Terminator t;
    t.kind = TermKind::kReturn;
    t.value = std::move(err);
    fn_.blocks[cur_].term = std::move(t);
    return;
  }
  if (m_.options().recoverable_contracts) {
    Call(kNoLocal, "kodo_contract_fail_recoverable", {Value::Str(message)});
    Goto(ok);
    return;
  }
  Call(kNoLocal, "kodo_contract_fail", {Value::Str(message)});
  Terminator t;
  t.kind = TermKind::kUnreachable;
  fn_.blocks[cur_].term = std::move(t);
}

Status FnBuilder::ContractChecks(const std::vector<const ast::Expr*>& clauses, const char* kind,
                                 int depth) {
  for (std::size_t i = 0; i < clauses.size(); ++i) {
    ASSIGN_OR_RETURN(Operand cond, Expr(*clauses[i], depth));
    const BlockId ok = NewBlock();
    const BlockId fail = NewBlock();
    Branch(cond.v, ok, fail);
    SetBlock(fail);
    FailContract(fmt::format("contract violation: {} clause {} failed in function `{}`", kind,
                             i + 1, fn_.name),
                 ok);
    SetBlock(ok);
  }
  return Status::Ok();
}

Status FnBuilder::RefinementCheck(const std::string& alias, LocalId v, const std::string& var_name,
                                  int depth) {
  const ast::TypeAlias* a = m_.FindAlias(alias);
  if (a == nullptr || !a->constraint) return Status::Ok();
  Push();
  Bind("self", v);
  ASSIGN_OR_RETURN(Operand cond, Expr(*a->constraint, depth));
  Pop();
  const BlockId ok = NewBlock();
  const BlockId fail = NewBlock();
  Branch(cond.v, ok, fail);
  SetBlock(fail);
  const std::string message =
      fmt::format("refinement constraint failed: `{}` does not satisfy type `{}`", var_name, alias);
  if (m_.options().recoverable_contracts) {
    Call(kNoLocal, "kodo_contract_fail_recoverable", {Value::Str(message)});
    Goto(ok);
  } else {
    Call(kNoLocal, "kodo_contract_fail", {Value::Str(message)});
    Terminator t;
    t.kind = TermKind::kUnreachable;
    fn_.blocks[cur_].term = std::move(t);
  }
  SetBlock(ok);
  return Status::Ok();
}

Status FnBuilder::LowerFunction(const ast::Function& f, const std::string& self_type,
                                const std::vector<const ast::Expr*>& invariants) {
  fn_.return_type = m_.BaseOf(f.return_type);
  if (fn_.return_type.empty()) fn_.return_type = "?";
  ret_base_ = m_.BaseOf(f.return_type);
  returns_result_ = ret_base_ == "Result";
  Push();
  for (const ast::Param& p : f.params) {
    std::string ty = p.name == "self" && !self_type.empty() ? self_type : m_.BaseOf(p.ty);
    const LocalId id = NewLocal(ty, std::string(p.name));
    Bind(std::string(p.name), id);
  }
  fn_.param_count = static_cast<std::uint32_t>(f.params.size());
  ret_ = NewLocal(ret_base_, "result", true);
  cur_ = NewBlock();
  const BlockId body_end_sentinel = 0;
  (void)body_end_sentinel;
  exit_ = NewBlock();
  SetBlock(0);
  std::vector<const ast::Expr*> requires_clauses = invariants;
  for (const ast::Expr& r : f.requires_) requires_clauses.push_back(&r);
  RETURN_IF_ERROR(ContractChecks(requires_clauses, "requires", 0));
  Assign(ret_, Value::Unit());
  ASSIGN_OR_RETURN(Operand tail, Block(f.body, 0));
  if (ret_base_ != "()" && tail.v.kind != ValueKind::kUnit) Assign(ret_, tail.v);
  Goto(exit_);
  SetBlock(exit_);
  std::vector<const ast::Expr*> ensures;
  for (const ast::Expr& e : f.ensures) ensures.push_back(&e);
  Push();
  Bind("result", ret_);
  RETURN_IF_ERROR(ContractChecks(ensures, "ensures", 0));
  Pop();
  Terminator t;
  t.kind = TermKind::kReturn;
  t.value = Value::Local(ret_);
  fn_.blocks[cur_].term = std::move(t);
  Pop();
  return Status::Ok();
}

Status FnBuilder::LowerClosureBody(const ast::Expr& closure,
                                   const std::vector<std::string>& captures,
                                   const std::vector<std::string>& capture_types, FnBuilder&) {
  Push();
  for (std::size_t i = 0; i < captures.size(); ++i) {
    Bind(captures[i], NewLocal(capture_types[i], captures[i]));
  }
  for (const ast::ClosureParam& p : closure.extra->params) {
    std::string ty = p.ty ? m_.BaseOf(*p.ty) : "";
    Bind(std::string(p.name), NewLocal(ty, std::string(p.name)));
  }
  fn_.param_count = static_cast<std::uint32_t>(captures.size() + closure.extra->params.size());
  ret_base_ = closure.extra->return_type ? m_.BaseOf(*closure.extra->return_type) : "";
  fn_.return_type = ret_base_.empty() ? "?" : ret_base_;
  returns_result_ = false;
  ret_ = NewLocal(ret_base_, "result", true);
  cur_ = NewBlock();
  exit_ = NewBlock();
  SetBlock(0);
  Assign(ret_, Value::Unit());
  ASSIGN_OR_RETURN(Operand body, Expr(closure.operands[0], 0));
  Assign(ret_, body.v);
  Goto(exit_);
  SetBlock(exit_);
  Terminator t;
  t.kind = TermKind::kReturn;
  t.value = Value::Local(ret_);
  fn_.blocks[cur_].term = std::move(t);
  Pop();
  return Status::Ok();
}

Status FnBuilder::LowerTaskBody(const ast::Block& body, const std::vector<std::string>& captures,
                                const std::vector<std::string>& capture_types) {
  Push();
  for (std::size_t i = 0; i < captures.size(); ++i) {
    Bind(captures[i], NewLocal(capture_types[i], captures[i]));
  }
  fn_.param_count = static_cast<std::uint32_t>(captures.size());
  fn_.return_type = "()";
  ret_base_ = "()";
  ret_ = NewLocal("()", "result", true);
  cur_ = NewBlock();
  exit_ = NewBlock();
  SetBlock(0);
  Assign(ret_, Value::Unit());
  ASSIGN_OR_RETURN(Operand tail, Block(body, 0));
  (void)tail;
  Goto(exit_);
  SetBlock(exit_);
  Terminator t;
  t.kind = TermKind::kReturn;
  t.value = Value::Local(ret_);
  fn_.blocks[cur_].term = std::move(t);
  Pop();
  return Status::Ok();
}

Result<Operand> FnBuilder::Block(const ast::Block& b, int depth) {
  Push();
  Operand last{Value::Unit(), "()"};
  for (std::size_t i = 0; i < b.stmts.size(); ++i) {
    const ast::Stmt& s = b.stmts[i];
    if (i + 1 == b.stmts.size() && s.kind == StmtKind::kExpr) {
      ASSIGN_OR_RETURN(last, Expr(s.value, depth + 1));
      // A value that lives in a local of an inner scope stays valid: locals are per function.
    } else {
      RETURN_IF_ERROR(Stmt(s, depth + 1));
    }
  }
  Pop();
  return last;
}

Status FnBuilder::For(const ast::Stmt& s, int depth) {
  ASSIGN_OR_RETURN(Operand start, Expr(s.value, depth));
  ASSIGN_OR_RETURN(Operand end, Expr(s.extra->value2, depth));
  const LocalId i = NewLocal("Int", std::string(s.name), true);
  Assign(i, start.v);
  const LocalId limit = NewLocal("Int");
  Assign(limit, end.v);
  const BlockId header = NewBlock();
  const BlockId body = NewBlock();
  const BlockId step = NewBlock();
  const BlockId exit = NewBlock();
  Goto(header);
  SetBlock(header);
  Branch(Value::Bin(s.inclusive ? BinOp::kLe : BinOp::kLt, Value::Local(i), Value::Local(limit)),
         body, exit);
  SetBlock(body);
  loops_.push_back({step, exit});
  Push();
  Bind(std::string(s.name), i);
  ASSIGN_OR_RETURN(Operand ignored, Block(s.body, depth));
  (void)ignored;
  Pop();
  loops_.pop_back();
  Goto(step);
  SetBlock(step);
  Assign(i, Value::Bin(BinOp::kAdd, Value::Local(i), Value::Int(1)));
  Goto(header);
  SetBlock(exit);
  return Status::Ok();
}

Status FnBuilder::ForIn(const ast::Stmt& s, int depth) {
  const ast::Expr* iterable = &s.value;
  // `for y in xs.iter()` iterates xs.
  if (iterable->kind == ExprKind::kCall && iterable->operands.size() == 1 &&
      iterable->operands[0].kind == ExprKind::kFieldAccess &&
      iterable->operands[0].text == "iter") {
    iterable = &iterable->operands[0].operands[0];
  }
  ASSIGN_OR_RETURN(Operand coll, Expr(*iterable, depth));
  const char* make = "kodo_iter";
  const char* advance = "kodo_iter_advance";
  const char* value = "kodo_iter_value";
  const char* free_fn = "kodo_iter_free";
  if (coll.ty == "List") {
    make = "list_iter";
    advance = "list_iterator_advance";
    value = "list_iterator_value";
    free_fn = "list_iterator_free";
  } else if (coll.ty == "Map") {
    make = "Map_keys";
    advance = "map_keys_advance";
    value = "map_keys_value";
    free_fn = "map_keys_free";
  } else if (coll.ty == "Set") {
    const LocalId as_list = NewLocal("List");
    Call(as_list, "set_to_list", {coll.v});
    coll.v = Value::Local(as_list);
    make = "list_iter";
    advance = "list_iterator_advance";
    value = "list_iterator_value";
    free_fn = "list_iterator_free";
  }
  const LocalId it = NewLocal("Int", fmt::format("__iter_{}", s.name));
  Call(it, make, {coll.v});
  const BlockId header = NewBlock();
  const BlockId body = NewBlock();
  const BlockId exit = NewBlock();
  Goto(header);
  SetBlock(header);
  const LocalId more = NewLocal("Int");
  Call(more, advance, {Value::Local(it)});
  Branch(Value::Bin(BinOp::kGt, Value::Local(more), Value::Int(0)), body, exit);
  SetBlock(body);
  const LocalId x = NewLocal("", std::string(s.name));
  Call(x, value, {Value::Local(it)});
  loops_.push_back({header, exit});
  Push();
  Bind(std::string(s.name), x);
  ASSIGN_OR_RETURN(Operand ignored, Block(s.body, depth));
  (void)ignored;
  Pop();
  loops_.pop_back();
  Goto(header);
  SetBlock(exit);
  Call(kNoLocal, free_fn, {Value::Local(it)});
  return Status::Ok();
}

Status FnBuilder::Stmt(const ast::Stmt& s, int depth) {
  if (depth > static_cast<int>(ast::kMaxTreeDepth)) return Err("program nested too deeply");
  switch (s.kind) {
    case StmtKind::kLet: {
      ASSIGN_OR_RETURN(Operand v, Expr(s.value, depth + 1));
      std::string ty = s.ty ? m_.BaseOf(*s.ty) : v.ty;
      const LocalId id = NewLocal(ty, std::string(s.name), s.mutable_);
      Assign(id, v.v);
      Bind(std::string(s.name), id);
      if (s.ty && s.ty->kind == ast::TypeKind::kNamed) {
        RETURN_IF_ERROR(
            RefinementCheck(std::string(s.ty->name), id, std::string(s.name), depth + 1));
      }
      return Status::Ok();
    }
    case StmtKind::kLetPattern: {
      ASSIGN_OR_RETURN(Operand v, Expr(s.value, depth + 1));
      const Value subject = Temp(v.v, v.ty);
      const BlockId fail = NewBlock();
      RETURN_IF_ERROR(TestPattern(*s.pattern, subject, v.ty, fail, depth + 1));
      const BlockId cont = cur_;
      SetBlock(fail);
      Terminator t;
      t.kind = TermKind::kUnreachable;
      fn_.blocks[fail].term = t;
      SetBlock(cont);
      return Status::Ok();
    }
    case StmtKind::kExpr: {
      ASSIGN_OR_RETURN(Operand v, Expr(s.value, depth + 1));
      (void)v;
      return Status::Ok();
    }
    case StmtKind::kReturn: {
      Value v = Value::Unit();
      if (s.has_value) {
        ASSIGN_OR_RETURN(Operand o, Expr(s.value, depth + 1));
        v = o.v;
      }
      ReturnValue(std::move(v));
      return Status::Ok();
    }
    case StmtKind::kWhile: {
      const BlockId header = NewBlock();
      const BlockId body = NewBlock();
      const BlockId exit = NewBlock();
      Goto(header);
      SetBlock(header);
      ASSIGN_OR_RETURN(Operand cond, Expr(s.value, depth + 1));
      Branch(cond.v, body, exit);
      SetBlock(body);
      loops_.push_back({header, exit});
      ASSIGN_OR_RETURN(Operand ignored, Block(s.body, depth + 1));
      (void)ignored;
      loops_.pop_back();
      Goto(header);
      SetBlock(exit);
      return Status::Ok();
    }
    case StmtKind::kFor:
      return For(s, depth + 1);
    case StmtKind::kForIn:
      return ForIn(s, depth + 1);
    case StmtKind::kAssign: {
      ASSIGN_OR_RETURN(Operand v, Expr(s.value, depth + 1));
      std::optional<LocalId> id = Lookup(std::string(s.name));
      if (!id) return Err(fmt::format("assignment to unknown name `{}`", s.name));
      Assign(*id, v.v);
      return Status::Ok();
    }
    case StmtKind::kIfLet: {
      ASSIGN_OR_RETURN(Operand v, Expr(s.value, depth + 1));
      const Value subject = Temp(v.v, v.ty);
      const BlockId els = NewBlock();
      const BlockId join = NewBlock();
      Push();
      RETURN_IF_ERROR(TestPattern(*s.pattern, subject, v.ty, els, depth + 1));
      ASSIGN_OR_RETURN(Operand ignored, Block(s.body, depth + 1));
      (void)ignored;
      Pop();
      Goto(join);
      SetBlock(els);
      if (s.extra && s.extra->else_body) {
        ASSIGN_OR_RETURN(Operand e2, Block(*s.extra->else_body, depth + 1));
        (void)e2;
      }
      Goto(join);
      SetBlock(join);
      return Status::Ok();
    }
    case StmtKind::kBreak:
    case StmtKind::kContinue: {
      if (loops_.empty()) return Err("`break` or `continue` outside a loop");
      Goto(s.kind == StmtKind::kBreak ? loops_.back().brk : loops_.back().cont);
      cur_ = NewBlock();
      return Status::Ok();
    }
    case StmtKind::kSpawn: {
      std::set<std::string> names;
      CollectNamesBlock(s.body, names, 0);
      std::vector<std::string> caps, cap_types;
      std::vector<Value> args;
      const std::string name = m_.NewClosureName();
      args.push_back(Value::Func(name));
      for (const std::string& n : names) {
        if (std::optional<LocalId> id = Lookup(n)) {
          caps.push_back(n);
          cap_types.push_back(TypeOfLocal(*id));
          args.push_back(Value::Local(*id));
        }
      }
      FnBuilder task(m_, name);
      RETURN_IF_ERROR(task.LowerTaskBody(s.body, caps, cap_types));
      m_.AddFunction(task.Take());
      const LocalId handle = NewLocal("Fn");
      Call(handle, "kodo_closure_new", std::move(args));
      // Inside `parallel` the task joins the statement's group (upstream's runtime hooks).
      if (parallel_group_ != kNoLocal) {
        Call(kNoLocal, "kodo_parallel_spawn",
             {Value::Local(parallel_group_), Value::Local(handle)});
      } else {
        Call(kNoLocal, "kodo_spawn", {Value::Local(handle)});
      }
      return Status::Ok();
    }
    case StmtKind::kParallel: {
      const LocalId group = NewLocal("Int");
      Call(group, "kodo_parallel_begin", {});
      const LocalId saved = parallel_group_;
      parallel_group_ = group;
      Push();
      for (const ast::Stmt& inner : s.body.stmts) {
        Status st = Stmt(inner, depth + 1);
        if (!st.ok()) {
          parallel_group_ = saved;
          return st;
        }
      }
      Pop();
      parallel_group_ = saved;
      Call(kNoLocal, "kodo_parallel_join", {Value::Local(group)});
      return Status::Ok();
    }
    case StmtKind::kSelect:
      return Select(s, depth);
    case StmtKind::kForall:
      return Err("`forall` outside a test is not supported");
  }
  return Status::Ok();
}

// `select { ch => |v: T| { ... } ... }` over 2 or 3 channels: upstream's
// `channel_select_2`/`channel_select_3` give the index of the first channel (in arm order) that
// holds a value, waiting until one does; the chosen arm then receives from its channel.
Status FnBuilder::Select(const ast::Stmt& s, int depth) {
  const auto& arms = s.extra->select_arms;
  if (arms.size() < 2 || arms.size() > 3) {
    return Err(fmt::format("`select` over {} channels (2 or 3 are supported)", arms.size()));
  }
  std::vector<Value> channels;
  for (const ast::SelectArm& arm : arms) {
    ASSIGN_OR_RETURN(Operand c, Expr(arm.channel, depth + 1));
    channels.push_back(Temp(c.v, c.ty));
  }
  const LocalId index = NewLocal("Int");
  Call(index, arms.size() == 2 ? "channel_select_2" : "channel_select_3", channels);
  const BlockId join = NewBlock();
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const ast::SelectArm& arm = arms[i];
    const BlockId body = NewBlock();
    const BlockId next = NewBlock();
    Branch(
        Temp(Value::Bin(BinOp::kEq, Value::Local(index), Value::Int(static_cast<std::int64_t>(i))),
             "Bool"),
        body, next);
    SetBlock(body);
    Push();
    const std::string ty = m_.BaseOf(arm.ty);
    const LocalId v = NewLocal(ty, arm.binding);
    Call(v,
         ty == "String" ? "channel_recv_string"
         : ty == "Bool" ? "channel_recv_bool"
                        : "channel_recv",
         {channels[i]});
    Bind(arm.binding, v);
    ASSIGN_OR_RETURN(Operand ignored, Block(arm.body, depth + 1));
    (void)ignored;
    Pop();
    Goto(join);
    SetBlock(next);
  }
  Goto(join);
  SetBlock(join);
  return Status::Ok();
}

Status FnBuilder::TestPattern(const ast::Pattern& p, Value subject, const std::string& subject_ty,
                              BlockId fail, int depth) {
  if (depth > static_cast<int>(ast::kMaxTreeDepth)) return Err("pattern nested too deeply");
  switch (p.kind) {
    case ast::PatternKind::kWildcard:
      return Status::Ok();
    case ast::PatternKind::kBinding: {
      const LocalId id = NewLocal("", std::string(p.name));
      Assign(id, subject);
      Bind(std::string(p.name), id);
      return Status::Ok();
    }
    case ast::PatternKind::kLiteral: {
      ASSIGN_OR_RETURN(Operand lit, Expr(*p.literal, depth + 1));
      const BlockId ok = NewBlock();
      Branch(Temp(Value::Bin(BinOp::kEq, subject, lit.v), "Bool"), ok, fail);
      SetBlock(ok);
      return Status::Ok();
    }
    case ast::PatternKind::kTuple: {
      for (std::size_t i = 0; i < p.subs.size(); ++i) {
        Value get;
        get.kind = ValueKind::kTupleGet;
        get.i = static_cast<std::int64_t>(i);
        get.operands.push_back(subject);
        const Value elem = Temp(std::move(get));
        RETURN_IF_ERROR(TestPattern(p.subs[i], elem, "", fail, depth + 1));
      }
      return Status::Ok();
    }
    case ast::PatternKind::kVariant: {
      const std::string variant(p.name);
      std::string enum_name =
          p.has_enum_name ? std::string(p.enum_name) : m_.EnumOfVariant(variant, subject_ty);
      if (!p.has_enum_name && p.subs.empty() && enum_name.empty()) {
        // A plain name at the top of an arm binds the whole value.
        const LocalId id = NewLocal(subject_ty, variant);
        Assign(id, subject);
        Bind(variant, id);
        return Status::Ok();
      }
      const int disc = m_.Discriminant(enum_name, variant);
      if (disc < 0) return Err(fmt::format("unknown variant `{}` in a pattern", variant));
      Value d;
      d.kind = ValueKind::kEnumDiscriminant;
      d.operands.push_back(subject);
      const Value dv = Temp(std::move(d), "Int");
      const BlockId ok = NewBlock();
      Branch(Temp(Value::Bin(BinOp::kEq, dv, Value::Int(disc)), "Bool"), ok, fail);
      SetBlock(ok);
      for (std::size_t i = 0; i < p.subs.size(); ++i) {
        if (p.subs[i].kind == ast::PatternKind::kWildcard) continue;
        Value payload;
        payload.kind = ValueKind::kEnumPayload;
        payload.i = static_cast<std::int64_t>(i);
        payload.operands.push_back(subject);
        const Value pv = Temp(std::move(payload));
        RETURN_IF_ERROR(TestPattern(p.subs[i], pv, "", fail, depth + 1));
      }
      return Status::Ok();
    }
  }
  return Status::Ok();
}

Result<Operand> FnBuilder::Match(const ast::Expr& e, int depth) {
  ASSIGN_OR_RETURN(Operand scrut, Expr(e.operands[0], depth + 1));
  const Value subject = Temp(scrut.v, scrut.ty);
  const LocalId result = NewLocal("");
  const BlockId join = NewBlock();
  std::string result_ty;
  for (const ast::MatchArm& arm : e.extra->arms) {
    const BlockId next = NewBlock();
    Push();
    RETURN_IF_ERROR(TestPattern(arm.pattern, subject, scrut.ty, next, depth + 1));
    ASSIGN_OR_RETURN(Operand body, Expr(arm.body, depth + 1));
    if (result_ty.empty()) result_ty = body.ty;
    Pop();
    Assign(result, body.v);
    Goto(join);
    SetBlock(next);
  }
  Terminator t;
  t.kind = TermKind::kUnreachable;
  fn_.blocks[cur_].term = t;
  SetBlock(join);
  fn_.locals[result].ty = result_ty.empty() ? "?" : result_ty;
  return Operand{Value::Local(result), result_ty};
}

Result<Operand> FnBuilder::Closure(const ast::Expr& e) {
  std::set<std::string> names;
  CollectNames(e.operands[0], names, 0);
  for (const ast::ClosureParam& p : e.extra->params) names.erase(std::string(p.name));
  std::vector<std::string> caps, cap_types;
  const std::string name = m_.NewClosureName();
  std::vector<Value> args{Value::Func(name)};
  for (const std::string& n : names) {
    if (std::optional<LocalId> id = Lookup(n)) {
      caps.push_back(n);
      cap_types.push_back(TypeOfLocal(*id));
      args.push_back(Value::Local(*id));
    }
  }
  FnBuilder inner(m_, name);
  RETURN_IF_ERROR(inner.LowerClosureBody(e, caps, cap_types, *this));
  m_.AddFunction(inner.Take());
  const LocalId handle = NewLocal("Fn");
  Call(handle, "kodo_closure_new", std::move(args));
  return Operand{Value::Local(handle), "Fn"};
}

Result<Operand> FnBuilder::Interp(const ast::Expr& e, int depth) {
  Value acc = Value::Str("");
  bool first = true;
  for (const ast::StringPart& part : e.extra->parts) {
    Value piece;
    if (part.is_expr) {
      ASSIGN_OR_RETURN(Operand v, Expr(*part.expr, depth + 1));
      const LocalId s = NewLocal("String");
      Call(s, "kodo_to_string", {v.v});
      piece = Value::Local(s);
    } else {
      piece = Value::Str(part.literal);
    }
    if (first) {
      acc = piece.kind == ValueKind::kLocal ? piece : Temp(piece, "String");
      first = false;
    } else {
      acc = Temp(Value::Bin(BinOp::kAdd, acc, piece), "String");
    }
  }
  return Operand{acc, "String"};
}

Result<Operand> FnBuilder::CallExpr(const ast::Expr& e, int depth) {
  const ast::Expr& callee = e.operands[0];
  std::vector<Value> args;
  std::string first_ty;
  auto lower_args = [&](std::size_t from) -> Status {
    for (std::size_t i = from; i < e.operands.size(); ++i) {
      ASSIGN_OR_RETURN(Operand a, Expr(e.operands[i], depth + 1));
      if (i == from) first_ty = a.ty;
      args.push_back(a.v);
    }
    return Status::Ok();
  };
  auto call = [&](const std::string& name, std::string ty) -> Operand {
    const LocalId dest = NewLocal(ty);
    Call(dest, name, std::move(args));
    return Operand{Value::Local(dest), ty};
  };
  auto builtin_result = [&](const std::string& name) -> std::string {
    if (const FnInfo* f = m_.FindFn(name)) return f->ret;
    if (const sema::BuiltinSignature* b = m_.FindBuiltin(name)) {
      return BaseOfResultText(b->result);
    }
    return "";
  };
  if (callee.kind == ExprKind::kIdent) {
    const std::string name(callee.text);
    if (std::optional<LocalId> id = Lookup(name)) {
      RETURN_IF_ERROR(lower_args(1));
      const LocalId dest = NewLocal("");
      Inst inst;
      inst.kind = InstKind::kIndirectCall;
      inst.dest = dest;
      inst.value = Value::Local(*id);
      inst.args = std::move(args);
      Emit(std::move(inst));
      return Operand{Value::Local(dest), ""};
    }
    if (name == "Some" || name == "Ok" || name == "Err") {
      RETURN_IF_ERROR(lower_args(1));
      Value v;
      v.kind = ValueKind::kEnumVariant;
      v.s = name == "Some" ? "Option" : "Result";
      v.s2 = name;
      v.i = name == "Err" ? 1 : 0;
      v.operands = std::move(args);
      const std::string ty = v.s;
      return Operand{Temp(std::move(v), ty), ty};
    }
    // A function of this module or of one it imports (a clash makes it `MOD::f`).
    const std::string target = m_.ResolveFn(name);
    if (m_.IsCallable(target)) {
      RETURN_IF_ERROR(lower_args(1));
      return call(target, builtin_result(target));
    }
    return Err(fmt::format("call of unknown function `{}`", name));
  }
  if (callee.kind == ExprKind::kFieldAccess) {
    const std::string method(callee.text);
    const ast::Expr& object = callee.operands[0];
    // `mod.f(a)`: `f` of the imported module `mod`, when no value is named so (as the checker
    // decides, docs/kodo.md §4.3) and `mod` is not a type with a method `f`.
    if (object.kind == ExprKind::kIdent && !Lookup(std::string(object.text))) {
      const std::string mod(object.text);
      if (m_.IsModule(mod) && !m_.IsCallable(m_.ResolveFn(mod)) &&
          !(m_.IsTypeName(mod) && m_.IsCallable(fmt::format("{}_{}", mod, method)))) {
        if (std::optional<std::string> target = m_.ResolveQualified(mod, method)) {
          RETURN_IF_ERROR(lower_args(1));
          if (!m_.IsCallable(*target)) {
            return Err(fmt::format("call of unknown function `{}.{}`", mod, method));
          }
          return call(*target, builtin_result(*target));
        }
      }
    }
    if (object.kind == ExprKind::kIdent && !Lookup(std::string(object.text)) &&
        m_.IsTypeName(std::string(object.text))) {
      // `Type.m(a)` → `Type_m(a)`.
      const std::string name = fmt::format("{}_{}", object.text, method);
      RETURN_IF_ERROR(lower_args(1));
      if (!m_.IsCallable(name)) return Err(fmt::format("call of unknown function `{}`", name));
      return call(name, builtin_result(name));
    }
    ASSIGN_OR_RETURN(Operand recv, Expr(object, depth + 1));
    args.push_back(recv.v);
    RETURN_IF_ERROR(lower_args(1));
    if (!recv.ty.empty()) {
      const std::string name = fmt::format("{}_{}", recv.ty, method);
      if (m_.IsCallable(name)) return call(name, builtin_result(name));
    }
    // The receiver's type is unknown here: the interpreter resolves `Type_m` at run time.
    return call(fmt::format("__method.{}", method), "");
  }
  // Any other callee: a function value.
  ASSIGN_OR_RETURN(Operand f, Expr(callee, depth + 1));
  RETURN_IF_ERROR(lower_args(1));
  const LocalId dest = NewLocal("");
  Inst inst;
  inst.kind = InstKind::kIndirectCall;
  inst.dest = dest;
  inst.value = f.v;
  inst.args = std::move(args);
  Emit(std::move(inst));
  return Operand{Value::Local(dest), ""};
}

Result<Operand> FnBuilder::Expr(const ast::Expr& e, int depth) {
  if (depth > static_cast<int>(ast::kMaxTreeDepth)) return Err("program nested too deeply");
  switch (e.kind) {
    case ExprKind::kIntLit:
      return Operand{Value::Int(e.int_value), "Int"};
    case ExprKind::kFloatLit:
      return Operand{Value::Float(e.float_value), "Float64"};
    case ExprKind::kStringLit:
      return Operand{Value::Str(std::string(e.text)), "String"};
    case ExprKind::kBoolLit:
      return Operand{Value::Bool(e.flag), "Bool"};
    case ExprKind::kIdent: {
      const std::string name(e.text);
      if (std::optional<LocalId> id = Lookup(name)) {
        return Operand{Value::Local(*id), TypeOfLocal(*id)};
      }
      if (name == "None") {
        Value v;
        v.kind = ValueKind::kEnumVariant;
        v.s = "Option";
        v.s2 = "None";
        v.i = 1;
        return Operand{Temp(std::move(v), "Option"), "Option"};
      }
      const std::string target = m_.ResolveFn(name);
      if (m_.IsCallable(target)) return Operand{Value::Func(target), "Fn"};
      return Err(fmt::format("unknown name `{}`", name));
    }
    case ExprKind::kBinaryOp: {
      if (e.bin_op == BinOp::kAnd || e.bin_op == BinOp::kOr) {
        const LocalId result = NewLocal("Bool");
        ASSIGN_OR_RETURN(Operand l, Expr(e.left(), depth + 1));
        Assign(result, l.v);
        const BlockId rhs = NewBlock();
        const BlockId join = NewBlock();
        if (e.bin_op == BinOp::kAnd) {
          Branch(Value::Local(result), rhs, join);
        } else {
          Branch(Value::Local(result), join, rhs);
        }
        SetBlock(rhs);
        ASSIGN_OR_RETURN(Operand r, Expr(e.right(), depth + 1));
        Assign(result, r.v);
        Goto(join);
        SetBlock(join);
        return Operand{Value::Local(result), "Bool"};
      }
      ASSIGN_OR_RETURN(Operand l, Expr(e.left(), depth + 1));
      ASSIGN_OR_RETURN(Operand r, Expr(e.right(), depth + 1));
      std::string ty = l.ty;
      switch (e.bin_op) {
        case BinOp::kEq:
        case BinOp::kNe:
        case BinOp::kLt:
        case BinOp::kGt:
        case BinOp::kLe:
        case BinOp::kGe:
          ty = "Bool";
          break;
        default:
          break;
      }
      return Operand{Temp(Value::Bin(e.bin_op, l.v, r.v), ty), ty};
    }
    case ExprKind::kUnaryOp: {
      ASSIGN_OR_RETURN(Operand o, Expr(e.operand(), depth + 1));
      Value v;
      v.kind = e.unary_op == ast::UnaryOp::kNot ? ValueKind::kNot : ValueKind::kNeg;
      v.operands.push_back(o.v);
      return Operand{Temp(std::move(v), o.ty), o.ty};
    }
    case ExprKind::kCall:
      return CallExpr(e, depth);
    case ExprKind::kIf: {
      ASSIGN_OR_RETURN(Operand cond, Expr(e.operands[0], depth + 1));
      const LocalId result = NewLocal("");
      Assign(result, Value::Unit());
      const BlockId then = NewBlock();
      const BlockId els = NewBlock();
      const BlockId join = NewBlock();
      Branch(cond.v, then, els);
      SetBlock(then);
      ASSIGN_OR_RETURN(Operand a, Block(*e.extra->block, depth + 1));
      Assign(result, a.v);
      Goto(join);
      SetBlock(els);
      std::string ty = a.ty;
      if (e.extra->else_block) {
        ASSIGN_OR_RETURN(Operand b, Block(*e.extra->else_block, depth + 1));
        Assign(result, b.v);
        if (ty.empty()) ty = b.ty;
      }
      Goto(join);
      SetBlock(join);
      fn_.locals[result].ty = ty.empty() ? "?" : ty;
      return Operand{Value::Local(result), ty};
    }
    case ExprKind::kFieldAccess: {
      ASSIGN_OR_RETURN(Operand o, Expr(e.operands[0], depth + 1));
      Value v;
      v.kind = ValueKind::kFieldGet;
      v.s = std::string(e.text);
      v.s2 = m_.IsStruct(o.ty) ? o.ty : "";
      v.operands.push_back(o.v);
      return Operand{Temp(std::move(v)), ""};
    }
    case ExprKind::kStructLit: {
      const std::string name(e.text);
      const std::vector<std::string>* fields = m_.StructFields(name);
      Value v;
      v.kind = ValueKind::kStructLit;
      v.s = name;
      if (fields == nullptr) return Err(fmt::format("unknown struct `{}`", name));
      std::vector<std::optional<Value>> slots(fields->size());
      for (const ast::FieldInit& f : e.extra->fields) {
        ASSIGN_OR_RETURN(Operand fv, Expr(f.value, depth + 1));
        for (std::size_t i = 0; i < fields->size(); ++i) {
          if ((*fields)[i] == f.name) slots[i] = fv.v;
        }
      }
      for (std::size_t i = 0; i < fields->size(); ++i) {
        v.names.push_back((*fields)[i]);
        v.operands.push_back(slots[i] ? *slots[i] : Value::Unit());
      }
      return Operand{Temp(std::move(v), name), name};
    }
    case ExprKind::kEnumVariantExpr: {
      const std::string enum_name(e.text);
      const std::string variant(e.extra->variant);
      // `mod::f(a)`: `f` of the imported module `mod`, when no enum is named so (§4.3).
      if (!m_.IsEnum(enum_name) && m_.IsModule(enum_name)) {
        if (std::optional<std::string> target = m_.ResolveQualified(enum_name, variant)) {
          if (!m_.IsCallable(*target)) {
            return Err(fmt::format("call of unknown function `{}::{}`", enum_name, variant));
          }
          std::vector<Value> args;
          for (const ast::Expr& a : e.operands) {
            ASSIGN_OR_RETURN(Operand av, Expr(a, depth + 1));
            args.push_back(av.v);
          }
          const FnInfo* info = m_.FindFn(*target);
          const std::string ty = info != nullptr ? info->ret : "";
          const LocalId dest = NewLocal(ty);
          Call(dest, *target, std::move(args));
          return Operand{Value::Local(dest), ty};
        }
      }
      const int disc = m_.Discriminant(enum_name, variant);
      if (disc < 0) {
        // `Type::f(...)` of an impl or an associated function written with `::`.
        const std::string name = fmt::format("{}_{}", enum_name, variant);
        if (m_.IsCallable(name)) {
          std::vector<Value> args;
          for (const ast::Expr& a : e.operands) {
            ASSIGN_OR_RETURN(Operand av, Expr(a, depth + 1));
            args.push_back(av.v);
          }
          const LocalId dest = NewLocal("");
          Call(dest, name, std::move(args));
          return Operand{Value::Local(dest), ""};
        }
        return Err(fmt::format("unknown variant `{}::{}`", enum_name, variant));
      }
      Value v;
      v.kind = ValueKind::kEnumVariant;
      v.s = enum_name;
      v.s2 = variant;
      v.i = disc;
      for (const ast::Expr& a : e.operands) {
        ASSIGN_OR_RETURN(Operand av, Expr(a, depth + 1));
        v.operands.push_back(av.v);
      }
      return Operand{Temp(std::move(v), enum_name), enum_name};
    }
    case ExprKind::kMatch:
      return Match(e, depth);
    case ExprKind::kTry:
    case ExprKind::kNullCoalesce:
    case ExprKind::kOptionalChain: {
      ASSIGN_OR_RETURN(Operand o, Expr(e.operands[0], depth + 1));
      const Value subject = Temp(o.v, o.ty);
      Value d;
      d.kind = ValueKind::kEnumDiscriminant;
      d.operands.push_back(subject);
      const Value is_first =
          Temp(Value::Bin(BinOp::kEq, Temp(std::move(d), "Int"), Value::Int(0)), "Bool");
      const LocalId result = NewLocal("");
      const BlockId yes = NewBlock();
      const BlockId no = NewBlock();
      const BlockId join = NewBlock();
      Branch(is_first, yes, no);
      SetBlock(yes);
      Value payload;
      payload.kind = ValueKind::kEnumPayload;
      payload.operands.push_back(subject);
      if (e.kind == ExprKind::kOptionalChain) {
        Value field;
        field.kind = ValueKind::kFieldGet;
        field.s = std::string(e.text);
        field.operands.push_back(Temp(std::move(payload)));
        Value some;
        some.kind = ValueKind::kEnumVariant;
        some.s = "Option";
        some.s2 = "Some";
        some.operands.push_back(Temp(std::move(field)));
        Assign(result, std::move(some));
      } else {
        Assign(result, std::move(payload));
      }
      Goto(join);
      SetBlock(no);
      if (e.kind == ExprKind::kTry) {
        ReturnValue(subject);
      } else if (e.kind == ExprKind::kNullCoalesce) {
        ASSIGN_OR_RETURN(Operand r, Expr(e.operands[1], depth + 1));
        Assign(result, r.v);
        Goto(join);
      } else {
        Value none;
        none.kind = ValueKind::kEnumVariant;
        none.s = "Option";
        none.s2 = "None";
        none.i = 1;
        Assign(result, std::move(none));
        Goto(join);
      }
      SetBlock(join);
      const std::string ty = e.kind == ExprKind::kOptionalChain ? "Option" : "";
      return Operand{Value::Local(result), ty};
    }
    case ExprKind::kRange:
      return Operand{Value::Unit(), "()"};
    case ExprKind::kClosure:
      return Closure(e);
    case ExprKind::kIs: {
      ASSIGN_OR_RETURN(Operand o, Expr(e.operands[0], depth + 1));
      const std::string variant(e.text);
      const std::string enum_name = m_.EnumOfVariant(variant, o.ty);
      const int disc = m_.Discriminant(enum_name, variant);
      if (disc < 0) return Err(fmt::format("unknown variant `{}` after `is`", variant));
      Value d;
      d.kind = ValueKind::kEnumDiscriminant;
      d.operands.push_back(o.v);
      return Operand{
          Temp(Value::Bin(BinOp::kEq, Temp(std::move(d), "Int"), Value::Int(disc)), "Bool"),
          "Bool"};
    }
    case ExprKind::kAwait: {
      // A call of an `async fn` gives a future (the interpreter starts a task for it);
      // `kodo_await` waits for it and gives its value (any other value passes through).
      ASSIGN_OR_RETURN(Operand f, Expr(e.operands[0], depth + 1));
      const LocalId v = NewLocal("");
      Call(v, "kodo_await", {f.v});
      return Operand{Value::Local(v), ""};
    }
    case ExprKind::kStringInterp:
      return Interp(e, depth);
    case ExprKind::kTupleLit: {
      Value v;
      v.kind = ValueKind::kTupleLit;
      for (const ast::Expr& a : e.operands) {
        ASSIGN_OR_RETURN(Operand av, Expr(a, depth + 1));
        v.operands.push_back(av.v);
      }
      return Operand{Temp(std::move(v), "Tuple"), "Tuple"};
    }
    case ExprKind::kTupleIndex: {
      ASSIGN_OR_RETURN(Operand o, Expr(e.operands[0], depth + 1));
      Value v;
      v.kind = ValueKind::kTupleGet;
      v.i = e.int_value;
      v.operands.push_back(o.v);
      return Operand{Temp(std::move(v)), ""};
    }
    case ExprKind::kBlock:
      return Block(*e.extra->block, depth + 1);
  }
  return Err("unknown expression");
}

// ---------------------------------------------------------------------------------------------

Status ModuleLowerer::Collect(const ast::Module& m, std::size_t unit) {
  // Types, traits and methods share one namespace across modules (docs/kodo.md §4.3).
  const auto own_type = [&](const std::string& name, const char* what) -> Status {
    auto [it, fresh] = type_owner_.emplace(name, unit);
    if (fresh || it->second == unit) return Status::Ok();
    return Status::InvalidArgument(fmt::format(
        "{} `{}` is declared in module `{}` and in module `{}`; the types of all modules share "
        "one namespace, so a program of several modules needs distinct names",
        what, name, units_[it->second].module->name, m.name));
  };
  for (const ast::TypeDecl& t : m.type_decls) {
    RETURN_IF_ERROR(own_type(t.name, "struct"));
    std::vector<std::string> fields;
    for (const ast::FieldDef& f : t.fields) fields.emplace_back(f.name);
    if (structs_.emplace(t.name, fields).second) struct_order_.push_back(t.name);
  }
  for (const ast::ActorDecl& a : m.actor_decls) {
    RETURN_IF_ERROR(own_type(a.name, "actor"));
    std::vector<std::string> fields;
    for (const ast::FieldDef& f : a.fields) fields.emplace_back(f.name);
    if (structs_.emplace(a.name, fields).second) struct_order_.push_back(a.name);
  }
  for (const ast::EnumDecl& en : m.enum_decls) {
    RETURN_IF_ERROR(own_type(en.name, "enum"));
    EnumInfo info;
    for (const ast::EnumVariant& v : en.variants) info.variants.emplace_back(v.name);
    if (enums_.emplace(en.name, info).second) enum_order_.push_back(en.name);
  }
  for (const ast::TypeAlias& a : m.type_aliases) aliases_[a.name] = &a;
  for (const ast::TraitDecl& t : m.trait_decls) {
    RETURN_IF_ERROR(own_type(t.name, "trait"));
    traits_[t.name] = &t;
  }
  return Status::Ok();
}

// Registers the methods of every unit (after Collect saw every trait, wherever declared).
Status ModuleLowerer::CollectMethods(const ast::Module& m, std::size_t unit) {
  const auto add_method = [&](const std::string& name, const ast::TypeExpr& ret,
                              bool replace) -> Status {
    auto [it, fresh] = method_owner_.emplace(name, unit);
    if (!fresh && it->second != unit) {
      return Status::InvalidArgument(fmt::format(
          "method `{}` is declared in module `{}` and in module `{}`; methods of all modules "
          "share one namespace, so a program of several modules needs distinct names",
          name, units_[it->second].module->name, m.name));
    }
    if (replace) {
      fns_[name] = FnInfo{BaseOf(ret)};
    } else {
      fns_.emplace(name, FnInfo{BaseOf(ret)});
    }
    return Status::Ok();
  };
  for (const ast::ActorDecl& a : m.actor_decls) {
    for (const ast::Function& h : a.handlers) {
      RETURN_IF_ERROR(add_method(fmt::format("{}_{}", a.name, h.name), h.return_type, true));
    }
  }
  for (const ast::ImplBlock& impl : m.impl_blocks) {
    impl_types_.insert(impl.type_name);
    for (const ast::Function& f : impl.methods) {
      RETURN_IF_ERROR(
          add_method(fmt::format("{}_{}", impl.type_name, f.name), f.return_type, true));
    }
    if (!impl.trait_name) continue;
    auto t = traits_.find(*impl.trait_name);
    if (t == traits_.end()) continue;
    for (const ast::TraitMethod& tm : t->second->methods) {
      if (!tm.body) continue;
      bool defined = false;
      for (const ast::Function& f : impl.methods) defined = defined || f.name == tm.name;
      if (defined) continue;
      RETURN_IF_ERROR(
          add_method(fmt::format("{}_{}", impl.type_name, tm.name), tm.return_type, false));
    }
  }
  return Status::Ok();
}

Status ModuleLowerer::LowerOne(const ast::Function& f, const std::string& name,
                               const std::string& self_type, bool injected) {
  FnBuilder b(*this, name);
  RETURN_IF_ERROR(b.LowerFunction(f, self_type, invariants_));
  Function fn = b.Take();
  fn.injected = injected;
  fn.is_async = f.is_async;
  generated_.push_back(std::move(fn));
  if (!f.requires_.empty() || !invariants_.empty()) {
    if (injected || f.requires_.empty()) return Status::Ok();
    // validate_F(params) -> Bool: the conjunction of the requires clauses (docs/kodo.md §7.6).
    FnBuilder v(*this, "validate_" + name);
    Function& vf = v.fn();
    vf.return_type = "Bool";
    v.Push();
    for (const ast::Param& p : f.params) {
      v.Bind(std::string(p.name), v.NewLocal(BaseOf(p.ty), std::string(p.name)));
    }
    vf.param_count = static_cast<std::uint32_t>(f.params.size());
    const LocalId acc = v.NewLocal("Bool", "", true);
    v.cur_ = v.NewBlock();
    v.ret_ = acc;
    v.exit_ = v.NewBlock();
    v.SetBlock(0);
    v.Assign(acc, Value::Bool(true));
    for (const ast::Expr& r : f.requires_) {
      ASSIGN_OR_RETURN(Operand c, v.Expr(r, 0));
      v.Assign(acc, Value::Bin(BinOp::kAnd, Value::Local(acc), c.v));
    }
    v.Goto(v.exit_);
    v.SetBlock(v.exit_);
    Terminator t;
    t.kind = TermKind::kReturn;
    t.value = Value::Local(acc);
    v.fn().blocks[v.cur()].term = std::move(t);
    generated_.push_back(v.Take());
  }
  return Status::Ok();
}

// Intents (docs/kodo.md §4.7), as upstream's `build` resolves them: each intent names a strategy
// whose keys are fixed; `console_app` and `math_module` generate functions (written here as Kōdo
// source and lowered like the user's), the other strategies generate nothing in this build.
struct IntentStrategy {
  const char* name;
  std::vector<const char*> keys;
};

const std::vector<IntentStrategy>& IntentStrategies() {
  static const auto* strategies = new std::vector<IntentStrategy>{
      {"console_app", {"greeting", "entry_point"}},
      {"math_module", {"functions"}},
      {"serve_http", {"port", "routes"}},
      {"database", {"driver", "tables", "queries"}},
      {"json_api", {"routes", "models", "port", "base_path", "endpoints"}},
      {"cache", {"strategy", "max_size"}},
      {"queue", {"backend", "topics"}},
      {"cli", {"name", "version", "commands"}},
      {"http_server", {"port", "routes", "not_found"}},
      {"file_processor", {"input", "output", "transform"}},
      {"worker", {"task", "max_iterations", "on_error"}},
  };
  return *strategies;
}

std::string KodoStringLiteral(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Returns the Kōdo source of the functions `module`'s intents generate (empty when none), or
// upstream's resolver error (E0400 unknown intent, E0402 unknown key).
Result<std::string> IntentSource(const ast::Module& module) {
  std::string fns;
  std::set<std::string> generated;
  auto exists = [&](const std::string& name) {
    if (generated.count(name) > 0) return true;
    for (const ast::Function& f : module.functions) {
      if (f.name == name) return true;
    }
    return false;
  };
  for (const ast::IntentDecl& intent : module.intent_decls) {
    const IntentStrategy* strategy = nullptr;
    for (const IntentStrategy& s : IntentStrategies()) {
      if (intent.name == s.name) strategy = &s;
    }
    if (strategy == nullptr) {
      return Status::InvalidArgument(
          fmt::format("resolver error: no resolver found for intent `{}` (E0400)", intent.name));
    }
    for (const ast::IntentConfigEntry& e : intent.config) {
      bool known = false;
      for (const char* k : strategy->keys) known = known || e.key == k;
      if (!known) {
        return Status::InvalidArgument(
            fmt::format("resolver error: unknown configuration key `{}` for intent `{}` (E0402)",
                        e.key, intent.name));
      }
    }
    auto string_key = [&](const char* key, const char* fallback) {
      for (const ast::IntentConfigEntry& e : intent.config) {
        if (e.key == key && e.value.kind == ast::IntentValueKind::kStringLit) return e.value.text;
      }
      return std::string(fallback);
    };
    if (intent.name == "console_app") {
      const std::string entry = string_key("entry_point", "kodo_main");
      if (exists(entry)) continue;
      generated.insert(entry);
      fns += fmt::format("fn {}() {{\n println({})\n}}\n", entry,
                         KodoStringLiteral(string_key("greeting", "Hello from Kōdo!")));
    } else if (intent.name == "math_module") {
      for (const ast::IntentConfigEntry& e : intent.config) {
        if (e.key != "functions" || e.value.kind != ast::IntentValueKind::kList) continue;
        for (const ast::IntentConfigValue& item : e.value.list) {
          if (item.kind != ast::IntentValueKind::kFnRef) continue;
          const std::string& n = item.text;
          const char* op = n == "add"        ? "+"
                           : n == "sub"      ? "-"
                           : n == "mul"      ? "*"
                           : n == "safe_div" ? "/"
                                             : nullptr;
          if (op == nullptr || exists(n)) continue;
          generated.insert(n);
          fns += fmt::format("fn {}(a: Int, b: Int) -> Int{} {{\n return a {} b\n}}\n", n,
                             n == "safe_div" ? " requires { b != 0 }" : "", op);
        }
      }
    }
  }
  if (fns.empty()) return std::string();
  return "module __intents {\n meta { purpose: \"functions generated by intents\" }\n" + fns +
         "}\n";
}

Status ModuleLowerer::NameFunctions(const ast::Module* intents) {
  const std::size_t main = units_.size() - 1;
  const auto each = [&](std::size_t u, const auto& visit) {
    for (const ast::Function& f : units_[u].module->functions) visit(f);
    if (u == main && intents != nullptr) {
      for (const ast::Function& f : intents->functions) visit(f);
    }
  };
  // How many modules declare each free function name.
  std::unordered_map<std::string, int> declared;
  for (std::size_t u = 0; u < units_.size(); ++u) {
    std::unordered_set<std::string> seen;
    each(u, [&](const ast::Function& f) {
      if (seen.insert(f.name).second) ++declared[f.name];
    });
  }
  // The main module keeps its names; an imported module's clashing name is qualified.
  std::unordered_set<std::string> taken;
  for (std::size_t k = 0; k < units_.size(); ++k) {
    const std::size_t u = k == 0 ? main : k - 1;
    Unit& unit = units_[u];
    each(u, [&](const ast::Function& f) {
      if (unit.own.count(f.name) > 0) return;
      std::string name = f.name;
      if (u != main && declared[f.name] > 1) {
        name = fmt::format("{}::{}", unit.module->name, f.name);
        for (int n = 2; taken.count(name) > 0; ++n) {
          name = fmt::format("{}::{}#{}", unit.module->name, f.name, n);
        }
      }
      taken.insert(name);
      fns_[name] = FnInfo{BaseOf(f.return_type)};
      unit.own.emplace(f.name, std::move(name));
    });
  }
  return Status::Ok();
}

Status ModuleLowerer::LowerDefaultMethod(const ast::ImplBlock& impl, const ast::TraitMethod& tm) {
  FnBuilder b(*this, fmt::format("{}_{}", impl.type_name, tm.name));
  // The body is borrowed, not copied: lower it through a function shell that points at it.
  b.fn().return_type = BaseOf(tm.return_type);
  b.ret_base_ = b.fn().return_type;
  b.returns_result_ = b.ret_base_ == "Result";
  b.Push();
  for (const ast::Param& p : tm.params) {
    std::string ty = p.name == "self" ? impl.type_name : BaseOf(p.ty);
    b.Bind(std::string(p.name), b.NewLocal(ty, std::string(p.name)));
  }
  b.fn().param_count = static_cast<std::uint32_t>(tm.params.size());
  b.ret_ = b.NewLocal(b.ret_base_, "result", true);
  b.cur_ = b.NewBlock();
  b.exit_ = b.NewBlock();
  b.SetBlock(0);
  b.Assign(b.ret_, Value::Unit());
  ASSIGN_OR_RETURN(Operand tail, b.Block(*tm.body, 0));
  if (b.ret_base_ != "()" && tail.v.kind != ValueKind::kUnit) b.Assign(b.ret_, tail.v);
  b.Goto(b.exit_);
  b.SetBlock(b.exit_);
  Terminator term;
  term.kind = TermKind::kReturn;
  term.value = Value::Local(b.ret_);
  b.fn().blocks[b.cur()].term = std::move(term);
  b.Pop();
  if (b.fn().return_type.empty()) b.fn().return_type = "?";
  generated_.push_back(b.Take());
  return Status::Ok();
}

Status ModuleLowerer::LowerUnit(std::size_t u, const ast::Module* intents) {
  unit_ = &units_[u];
  const ast::Module& m = *unit_->module;
  // A module's invariants guard its own functions (docs/kodo.md §7.6).
  invariants_.clear();
  for (const ast::InvariantDecl& inv : m.invariants) invariants_.push_back(&inv.condition);
  for (const ast::Function& f : m.functions) {
    RETURN_IF_ERROR(LowerOne(f, unit_->own.at(f.name), "", false));
  }
  if (intents != nullptr) {
    for (const ast::Function& f : intents->functions) {
      RETURN_IF_ERROR(LowerOne(f, unit_->own.at(f.name), "", false));
    }
  }
  for (const ast::ImplBlock& impl : m.impl_blocks) {
    std::set<std::string> defined;
    for (const ast::Function& f : impl.methods) {
      defined.insert(f.name);
      RETURN_IF_ERROR(
          LowerOne(f, fmt::format("{}_{}", impl.type_name, f.name), impl.type_name, false));
    }
    if (!impl.trait_name) continue;
    // The trait may be declared in any module (one namespace).
    auto t = traits_.find(*impl.trait_name);
    if (t == traits_.end()) continue;
    for (const ast::TraitMethod& tm : t->second->methods) {
      if (!tm.body || defined.count(tm.name) > 0) continue;
      // A copy of the default method for this type (docs/kodo.md §7.6).
      RETURN_IF_ERROR(LowerDefaultMethod(impl, tm));
    }
  }
  for (const ast::ActorDecl& a : m.actor_decls) {
    for (const ast::Function& h : a.handlers) {
      const std::size_t at = generated_.size();
      RETURN_IF_ERROR(LowerOne(h, fmt::format("{}_{}", a.name, h.name), a.name, false));
      generated_[at].actor_handler = true;
    }
  }
  unit_ = nullptr;
  return Status::Ok();
}

Result<Program> ModuleLowerer::Run() {
  for (const sema::BuiltinSignature& b : sema::Builtins()) builtins_[std::string(b.name)] = &b;
  enums_["Option"] = EnumInfo{{"Some", "None"}};
  enums_["Result"] = EnumInfo{{"Ok", "Err"}};
  enum_order_ = {"Option", "Result"};

  // The units: the imports in load order, then the main module, which sees them all.
  for (std::size_t i = 0; i < imports_.size(); ++i) {
    const Import& imp = imports_[i];
    if (imp.module == nullptr) return Status::InvalidArgument("an import without a module");
    for (std::size_t d : imp.deps) {
      if (d >= i) {
        return Status::InvalidArgument(
            fmt::format("module `{}` depends on a module loaded after it", imp.module->name));
      }
    }
    units_.push_back(Unit{imp.module, imp.deps, {}});
  }
  Unit main_unit{&module_, {}, {}};
  for (std::size_t i = 0; i < imports_.size(); ++i) main_unit.deps.push_back(i);
  units_.push_back(std::move(main_unit));
  const std::size_t main = units_.size() - 1;
  for (std::size_t u = 0; u < units_.size(); ++u) {
    RETURN_IF_ERROR(Collect(*units_[u].module, u));
  }
  for (std::size_t u = 0; u < units_.size(); ++u) {
    RETURN_IF_ERROR(CollectMethods(*units_[u].module, u));
  }

  // Functions generated by intents (docs/kodo.md §4.7), lowered as the main module's own.
  std::optional<SourceBuffer> intent_source;
  std::optional<parse::ParseResult> intents;
  if (options_.resolve_intents && !module_.intent_decls.empty()) {
    ASSIGN_OR_RETURN(std::string text, IntentSource(module_));
    if (!text.empty()) {
      ASSIGN_OR_RETURN(SourceBuffer src, SourceBuffer::Create(0, "<intents>", std::move(text)));
      intent_source.emplace(std::move(src));
      ASSIGN_OR_RETURN(parse::ParseResult parsed, parse::ParseModule(*intent_source));
      if (!parsed.ok()) return Status::Internal("the functions generated by intents do not parse");
      intents.emplace(std::move(parsed));
    }
  }
  const ast::Module* intent_module = intents ? &*intents->module : nullptr;
  RETURN_IF_ERROR(NameFunctions(intent_module));

  // The builtin methods written in Kōdo (docs/kodo.md §7.6).
  std::optional<SourceBuffer> prelude_source;
  std::optional<parse::ParseResult> prelude;
  if (options_.inject_builtins) {
    ASSIGN_OR_RETURN(SourceBuffer src,
                     SourceBuffer::Create(0, "<prelude>", std::string(PreludeSource())));
    prelude_source.emplace(std::move(src));
    ASSIGN_OR_RETURN(parse::ParseResult parsed, parse::ParseModule(*prelude_source));
    if (!parsed.ok()) return Status::Internal("the injected builtin methods do not parse");
    prelude.emplace(std::move(parsed));
    for (const ast::Function& f : prelude->module->functions) {
      if (fns_.count(f.name) == 0) fns_[f.name] = FnInfo{BaseOf(f.return_type)};
    }
  }

  Program program;
  program.module = module_.name;
  for (std::size_t u = 0; u < units_.size(); ++u) {
    RETURN_IF_ERROR(LowerUnit(u, u == main ? intent_module : nullptr));
  }
  if (prelude) {
    invariants_.clear();
    for (const ast::Function& f : prelude->module->functions) {
      RETURN_IF_ERROR(LowerOne(f, f.name, "", true));
      generated_.back().injected = true;
    }
  }
  // Closures lowered while inside an injected function are injected too: they follow it.
  program.functions = std::move(generated_);
  bool in_prelude = false;
  for (Function& fn : program.functions) {
    if (fn.injected) in_prelude = true;
    if (in_prelude && fn.name.rfind("__closure_", 0) == 0) fn.injected = true;
  }
  for (const std::string& s : struct_order_) program.structs.push_back({s, structs_[s]});
  for (const std::string& e : enum_order_) program.enums.push_back({e, enums_[e].variants});
  program.Reindex();
  return program;
}

}  // namespace

Result<Program> Lower(const ast::Module& module, const LowerOptions& options) {
  ModuleLowerer lowerer(module, {}, options);
  return lowerer.Run();
}

Result<Program> LowerProgram(const ast::Module& main, std::span<const Import> imports,
                             const LowerOptions& options) {
  ModuleLowerer lowerer(main, imports, options);
  return lowerer.Run();
}

}  // namespace trove::kodo::mir

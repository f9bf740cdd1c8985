#include "kodo/testrun/testrun.h"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "kodo/diag/diagnostic.h"
#include "kodo/driver/front.h"
#include "kodo/interp/interp.h"
#include "kodo/mir/lower.h"
#include "kodo/mir/opt/opt.h"
#include "kodo/sema/check.h"
#include "kodo/testrun/clone.h"

namespace trove::kodo::testrun {
namespace {

// ---- annotations (upstream's @skip, @todo, @timeout, @property) ---------------------------

const ast::Annotation* FindAnnotation(const std::vector<const ast::Annotation*>& anns,
                                      std::string_view name) {
  for (const ast::Annotation* a : anns) {
    if (a->name == name) return a;
  }
  return nullptr;
}

// An integer literal, or `-` applied to one (the parser's `-10`).
std::optional<std::int64_t> IntOf(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::kIntLit) return e.int_value;
  if (e.kind == ast::ExprKind::kUnaryOp && e.unary_op == ast::UnaryOp::kNeg &&
      e.operands.size() == 1 && e.operands[0].kind == ast::ExprKind::kIntLit) {
    return static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(e.operands[0].int_value));
  }
  return std::nullopt;
}

std::optional<double> FloatOf(const ast::Expr& e) {
  if (e.kind == ast::ExprKind::kFloatLit) return e.float_value;
  if (e.kind == ast::ExprKind::kIntLit) return static_cast<double>(e.int_value);
  if (e.kind == ast::ExprKind::kUnaryOp && e.unary_op == ast::UnaryOp::kNeg &&
      e.operands.size() == 1) {
    if (std::optional<double> v = FloatOf(e.operands[0])) return -*v;
  }
  return std::nullopt;
}

// `@property(...)` parameters with upstream's defaults.
struct PropertyParams {
  std::int64_t iterations = 100;
  std::int64_t int_min = -1'000'000;
  std::int64_t int_max = 1'000'000;
  double float_min = -1'000'000.0;
  double float_max = 1'000'000.0;
  std::int64_t max_string_len = 100;
  std::int64_t seed = 0;  // 0: the runtime's fixed default seed (test_hooks.cc)
};

PropertyParams PropertyOf(const ast::Annotation* ann) {
  PropertyParams p;
  if (ann == nullptr) return p;
  for (const ast::AnnotationArg& arg : ann->args) {
    if (!arg.named) continue;
    const std::optional<std::int64_t> i = IntOf(arg.value);
    const std::optional<double> f = FloatOf(arg.value);
    if (arg.key == "iterations" && i) p.iterations = *i;
    if (arg.key == "int_min" && i) p.int_min = *i;
    if (arg.key == "int_max" && i) p.int_max = *i;
    if (arg.key == "float_min" && f) p.float_min = *f;
    if (arg.key == "float_max" && f) p.float_max = *f;
    if (arg.key == "max_string_len" && i) p.max_string_len = *i;
    if (arg.key == "seed" && i) p.seed = *i;
  }
  return p;
}

// ---- building AST nodes -----------------------------------------------------------------------

ast::Expr Ident(std::string_view name, ast::Span span) {
  ast::Expr e;
  e.kind = ast::ExprKind::kIdent;
  e.text = name;
  e.span = span;
  return e;
}

ast::Expr IntLit(std::int64_t v, ast::Span span) {
  ast::Expr e;
  e.kind = ast::ExprKind::kIntLit;
  e.int_value = v;
  e.span = span;
  return e;
}

ast::Expr FloatLit(double v, ast::Span span) {
  ast::Expr e;
  e.kind = ast::ExprKind::kFloatLit;
  e.float_value = v;
  e.span = span;
  return e;
}

ast::Expr Call(std::string_view callee, std::vector<ast::Expr> args, ast::Span span) {
  ast::Expr e;
  e.kind = ast::ExprKind::kCall;
  e.span = span;
  e.operands.push_back(Ident(callee, span));
  for (ast::Expr& a : args) e.operands.push_back(std::move(a));
  return e;
}

ast::Expr Binary(ast::BinOp op, ast::Expr l, ast::Expr r, ast::Span span) {
  ast::Expr e;
  e.kind = ast::ExprKind::kBinaryOp;
  e.bin_op = op;
  e.span = span;
  e.operands.push_back(std::move(l));
  e.operands.push_back(std::move(r));
  return e;
}

ast::Stmt ExprStmt(ast::Expr e) {
  ast::Stmt s;
  s.kind = ast::StmtKind::kExpr;
  s.span = e.span;
  s.value = std::move(e);
  return s;
}

ast::Stmt Let(std::string_view name, bool mut, std::optional<ast::TypeExpr> ty, ast::Expr value,
              ast::Span span) {
  ast::Stmt s;
  s.kind = ast::StmtKind::kLet;
  s.mutable_ = mut;
  s.name = name;
  s.span = span;
  if (ty) s.ty = ast::MakeBox<ast::TypeExpr>(std::move(*ty));
  s.value = std::move(value);
  return s;
}

// The generator call for a `forall` binding of type `ty` (upstream: Int, Bool, Float64, String;
// any other type an Int in [0, 100]).
ast::Expr Generator(const ast::TypeExpr& ty, const PropertyParams& p, ast::Span span) {
  const std::string_view name = ty.kind == ast::TypeKind::kNamed ? ty.name : std::string_view();
  std::vector<ast::Expr> args;
  if (name == "Int") {
    args.push_back(IntLit(p.int_min, span));
    args.push_back(IntLit(p.int_max, span));
    return Call("kodo_prop_gen_int", std::move(args), span);
  }
  if (name == "Bool") return Call("kodo_prop_gen_bool", {}, span);
  if (name == "Float64") {
    args.push_back(FloatLit(p.float_min, span));
    args.push_back(FloatLit(p.float_max, span));
    return Call("kodo_prop_gen_float", std::move(args), span);
  }
  if (name == "String") {
    args.push_back(IntLit(p.max_string_len, span));
    return Call("kodo_prop_gen_string", std::move(args), span);
  }
  args.push_back(IntLit(0, span));
  args.push_back(IntLit(100, span));
  return Call("kodo_prop_gen_int", std::move(args), span);
}

// Stores `text` in the module's arena (names in the tree are views).
std::string_view Keep(ast::Module& module, std::string_view text) {
  if (module.arena.get() == nullptr) module.arena = ast::ArenaOwner(std::make_shared<ast::Arena>());
  return module.arena.get()->Store(text);
}

// `forall a: T, ... { body }` becomes
//   kodo_prop_start(iterations, seed)
//   let mut __prop_iter_K: Int = 0
//   while __prop_iter_K < iterations { let a: T = GEN ...; body; __prop_iter_K = __prop_iter_K + 1
//   }
void ExpandForall(ast::Module& module, ast::Stmt& forall, const PropertyParams& p, int k,
                  std::vector<ast::Stmt>& out) {
  const ast::Span span = forall.span;
  const std::string_view iter = Keep(module, fmt::format("__prop_iter_{}", k));
  std::vector<ast::Expr> start;
  start.push_back(IntLit(p.iterations, span));
  start.push_back(IntLit(p.seed, span));
  out.push_back(ExprStmt(Call("kodo_prop_start", std::move(start), span)));
  out.push_back(Let(iter, true, ast::TypeExpr::Named("Int"), IntLit(0, span), span));
  ast::Stmt loop;
  loop.kind = ast::StmtKind::kWhile;
  loop.span = span;
  loop.value = Binary(ast::BinOp::kLt, Ident(iter, span), IntLit(p.iterations, span), span);
  loop.body.span = forall.body.span;
  if (forall.extra) {
    for (const ast::ForallBinding& b : forall.extra->forall_bindings) {
      loop.body.stmts.push_back(
          Let(Keep(module, b.name), false, b.ty, Generator(b.ty, p, b.span), b.span));
    }
  }
  for (ast::Stmt& s : forall.body.stmts) loop.body.stmts.push_back(std::move(s));
  ast::Stmt inc;
  inc.kind = ast::StmtKind::kAssign;
  inc.span = span;
  inc.name = iter;
  inc.value = Binary(ast::BinOp::kAdd, Ident(iter, span), IntLit(1, span), span);
  loop.body.stmts.push_back(std::move(inc));
  out.push_back(std::move(loop));
}

// One test before it becomes a function.
struct Pending {
  std::string name;
  std::vector<const ast::Annotation*> annotations;  // suites' first, then the test's
  std::vector<const ast::Stmt*> setup;              // outer suites first
  ast::Block* body = nullptr;
  std::vector<const ast::Stmt*> teardown;  // inner suites first
};

void Flatten(ast::DescribeDecl& d, const std::string& prefix,
             const std::vector<const ast::Annotation*>& parent_anns,
             const std::vector<const ast::Stmt*>& parent_setup,
             const std::vector<const ast::Stmt*>& parent_teardown, std::vector<Pending>& out,
             int depth) {
  const std::string group = prefix.empty() ? d.name : prefix + " > " + d.name;
  std::vector<const ast::Annotation*> anns = parent_anns;
  for (const ast::Annotation& a : d.annotations) anns.push_back(&a);
  std::vector<const ast::Stmt*> setup = parent_setup;
  if (d.setup) {
    for (const ast::Stmt& s : d.setup->stmts) setup.push_back(&s);
  }
  std::vector<const ast::Stmt*> teardown;
  if (d.teardown) {
    for (const ast::Stmt& s : d.teardown->stmts) teardown.push_back(&s);
  }
  teardown.insert(teardown.end(), parent_teardown.begin(), parent_teardown.end());
  for (ast::TestDecl& t : d.tests) {
    Pending p;
    p.name = group + " > " + t.name;
    p.annotations = anns;
    for (const ast::Annotation& a : t.annotations) p.annotations.push_back(&a);
    p.setup = setup;
    p.body = &t.body;
    p.teardown = teardown;
    out.push_back(std::move(p));
  }
  // Describes nest as deep as the parser allows (bounded, ast.h).
  if (depth >= static_cast<int>(ast::kMaxNestingDepth)) return;
  for (ast::DescribeDecl& inner : d.describes) {
    Flatten(inner, group, anns, setup, teardown, out, depth + 1);
  }
}

}  // namespace

Result<std::vector<PlannedTest>> RewriteForTests(ast::Module& module, const TestOptions& options) {
  std::vector<Pending> pending;
  for (ast::TestDecl& t : module.test_decls) {
    Pending p;
    p.name = t.name;
    for (const ast::Annotation& a : t.annotations) p.annotations.push_back(&a);
    p.body = &t.body;
    pending.push_back(std::move(p));
  }
  for (ast::DescribeDecl& d : module.describe_decls) Flatten(d, "", {}, {}, {}, pending, 0);

  std::vector<PlannedTest> plan;
  std::vector<ast::Function> functions;
  int foralls = 0;
  for (Pending& p : pending) {
    if (!options.filter.empty() && p.name.find(options.filter) == std::string::npos) continue;
    PlannedTest planned;
    planned.name = p.name;
    if (FindAnnotation(p.annotations, "skip") != nullptr) {
      planned.runs = false;
    } else if (FindAnnotation(p.annotations, "todo") != nullptr) {
      planned.runs = false;
      planned.todo = true;
    }
    plan.push_back(planned);
    if (!planned.runs) continue;

    const ast::Annotation* property = FindAnnotation(p.annotations, "property");
    const PropertyParams params = PropertyOf(property);
    ast::Function fn;
    fn.span = p.body->span;
    fn.name = fmt::format("__test_{}", functions.size());
    fn.return_type = ast::TypeExpr::Unit();
    fn.body.span = p.body->span;
    std::vector<ast::Stmt> stmts;
    bool timed = false;
    if (const ast::Annotation* t = FindAnnotation(p.annotations, "timeout")) {
      if (!t->args.empty() && !t->args[0].named) {
        if (std::optional<std::int64_t> ms = IntOf(t->args[0].value)) {
          std::vector<ast::Expr> args;
          args.push_back(IntLit(*ms, p.body->span));
          stmts.push_back(ExprStmt(Call("kodo_test_set_timeout", std::move(args), p.body->span)));
          timed = true;
        }
      }
    }
    for (const ast::Stmt* s : p.setup) {
      ASSIGN_OR_RETURN(ast::Stmt copy, CloneStmt(*s));
      stmts.push_back(std::move(copy));
    }
    for (ast::Stmt& s : p.body->stmts) {
      // Upstream expands `forall` only under @property; a bare `forall` (which upstream cannot
      // lower) runs with the default parameters here.
      if (s.kind == ast::StmtKind::kForall) {
        ExpandForall(module, s, params, foralls++, stmts);
      } else {
        stmts.push_back(std::move(s));
      }
    }
    for (const ast::Stmt* s : p.teardown) {
      ASSIGN_OR_RETURN(ast::Stmt copy, CloneStmt(*s));
      stmts.push_back(std::move(copy));
    }
    if (timed) {
      stmts.push_back(ExprStmt(Call("kodo_test_clear_timeout", {}, p.body->span)));
    }
    for (ast::Stmt& s : stmts) fn.body.stmts.push_back(std::move(s));
    functions.push_back(std::move(fn));
  }

  // The user's `main` is not used in test mode; tests and describes are gone; the test
  // functions join the module's functions (and its item order, which the checker follows).
  int main_index = -1;
  for (std::size_t i = 0; i < module.functions.size(); ++i) {
    if (module.functions[i].name == "main") main_index = static_cast<int>(i);
  }
  ast::Vec<ast::ItemRef> order;
  for (const ast::ItemRef& r : module.order) {
    if (r.kind == ast::ItemKind::kTest || r.kind == ast::ItemKind::kDescribe) continue;
    if (r.kind == ast::ItemKind::kFunction && main_index >= 0) {
      if (static_cast<int>(r.index) == main_index) continue;
      if (static_cast<int>(r.index) > main_index) {
        order.push_back(ast::ItemRef{r.kind, r.index - 1});
        continue;
      }
    }
    order.push_back(r);
  }
  if (main_index >= 0) module.functions.erase(module.functions.begin() + main_index);
  for (ast::Function& fn : functions) {
    order.push_back(ast::ItemRef{ast::ItemKind::kFunction,
                                 static_cast<std::uint32_t>(module.functions.size())});
    module.functions.push_back(std::move(fn));
  }
  module.order = std::move(order);
  module.test_decls.clear();
  module.describe_decls.clear();
  return plan;
}

void AddTestMain(mir::Program& program, const std::vector<PlannedTest>& plan) {
  using mir::Inst;
  using mir::InstKind;
  using mir::Value;
  mir::Function main;
  main.name = "main";
  main.return_type = "()";
  main.locals = {{"Int", "__passed", true},
                 {"Int", "__failed", true},
                 {"Int", "__result", false},
                 {"Int", "__ok", false}};
  mir::BasicBlock b;
  auto assign = [&b](mir::LocalId dest, Value v) {
    Inst i;
    i.kind = InstKind::kAssign;
    i.dest = dest;
    i.value = std::move(v);
    b.insts.push_back(std::move(i));
  };
  auto call = [&b](std::string callee, std::vector<Value> args, mir::LocalId dest) {
    Inst i;
    i.kind = InstKind::kCall;
    i.callee = std::move(callee);
    i.args = std::move(args);
    i.dest = dest;
    b.insts.push_back(std::move(i));
  };
  assign(0, Value::Int(0));
  assign(1, Value::Int(0));
  std::int64_t skipped = 0, todo = 0, runnable = 0;
  for (const PlannedTest& t : plan) {
    call("kodo_test_start", {Value::Str(t.name)}, mir::kNoLocal);
    if (!t.runs) {
      call("kodo_test_skip", {}, mir::kNoLocal);
      (t.todo ? todo : skipped) += 1;
      continue;
    }
    call(fmt::format("__test_{}", runnable++), {}, mir::kNoLocal);
    call("kodo_test_end", {}, 2);
    // __passed += 1 - __result; __failed += __result
    assign(3, Value::Bin(ast::BinOp::kSub, Value::Int(1), Value::Local(2)));
    assign(0, Value::Bin(ast::BinOp::kAdd, Value::Local(0), Value::Local(3)));
    assign(1, Value::Bin(ast::BinOp::kAdd, Value::Local(1), Value::Local(2)));
  }
  call("kodo_test_summary",
       {Value::Int(static_cast<std::int64_t>(plan.size())), Value::Local(0), Value::Local(1),
        Value::Int(skipped), Value::Int(todo)},
       mir::kNoLocal);
  b.term.kind = mir::TermKind::kReturn;
  b.term.value = Value::Unit();
  main.blocks.push_back(std::move(b));
  program.functions.push_back(std::move(main));
  program.Reindex();
}

TestOutcome RunTests(std::string text, const std::string& path, const TestOptions& options) {
  TestOutcome out;
  driver::FrontOptions front;
  front.type_check = false;
  front.import_env = options.import_env;
  Result<driver::Compiled> compiled = driver::CompileSource(std::move(text), path, front);
  if (!compiled.ok()) {
    out.err = fmt::format("error: {}: {}\n", path, compiled.status().message());
    out.exit_code = 1;
    return out;
  }
  driver::Compiled& c = *compiled;
  if (!c.ok() || !c.module) {
    for (const diag::Diagnostic& d : c.diagnostics) out.err += diag::RenderText(c.source, path, d);
    out.exit_code = 1;
    return out;
  }
  ast::Module& module = *c.module;
  Result<std::vector<PlannedTest>> plan = RewriteForTests(module, options);
  if (!plan.ok()) {
    out.err = fmt::format("error: {}: {}\n", path, plan.status().message());
    out.exit_code = 1;
    return out;
  }
  if (plan->empty()) {
    out.out = options.json ? "{\"event\":\"summary\",\"total\":0,\"passed\":0,\"failed\":0,"
                             "\"skipped\":0,\"todo\":0}\n"
                           : "no tests found\n";
    return out;
  }
  // The imported modules, loaded and checked by the front half (docs/kodo.md §4.3).
  std::vector<const ast::Module*> imported;
  std::vector<mir::Import> imports;
  for (const auto& m : c.imports) {
    imported.push_back(&m->module);
    imports.push_back(mir::Import{&m->module, m->deps});
  }
  sema::CheckResult checked =
      sema::Check(c.source, module, sema::CheckOptions{.imports = imported});
  if (!checked.ok()) {
    for (const diag::Diagnostic& d : checked.diagnostics) {
      out.err += diag::RenderText(c.source, path, d);
    }
    out.exit_code = 1;
    return out;
  }
  // The imported modules' warnings, as `kodoc check` prints them (docs/kodo.md §4.3).
  out.err = driver::RenderImportedWarnings(c);
  mir::LowerOptions lower;
  lower.recoverable_contracts = options.contracts == "recoverable";
  Result<mir::Program> program = mir::LowerProgram(module, imports, lower);
  if (!program.ok()) {
    out.err += fmt::format("error: {}: {}\n", path, program.status().message());
    out.exit_code = 1;
    return out;
  }
  AddTestMain(*program, *plan);
  mir::opt::Optimize(*program, options.opt_level);
  interp::RunOptions run;
  run.args.push_back(path);
  run.max_steps = options.max_steps;
  run.test_mode = true;
  interp::RunResult r = interp::Run(*program, run);
  out.exit_code = r.exit_code;
  out.out = std::move(r.out);
  out.err += r.err;
  return out;
}

}  // namespace trove::kodo::testrun

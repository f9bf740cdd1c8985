#include "kodo/contracts/contracts.h"

#include <fmt/core.h>

#include <cctype>
#include <set>
#include <utility>

#include "kodo/contracts/prove.h"

namespace trove::kodo::contracts {
namespace {

using ast::Expr;
using ast::ExprKind;

std::string SpanDebug(ast::Span span) {
  return fmt::format("Span {{ start: {}, end: {} }}", span.start, span.end);
}

bool IsLengthCall(const Expr& e) {
  return e.kind == ExprKind::kCall && e.operands.size() == 1 &&
         e.operands[0].kind == ExprKind::kFieldAccess && e.operands[0].text == "length";
}

std::optional<InvalidContract> Invalid(const Expr& e, std::string_view reason) {
  return InvalidContract{ast::ExprSpan(e), std::string(reason)};
}

std::optional<InvalidContract> Validate(const Expr& e, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return std::nullopt;  // unreachable for parsed trees
  switch (e.kind) {
    case ExprKind::kIntLit:
    case ExprKind::kFloatLit:
    case ExprKind::kBoolLit:
    case ExprKind::kIdent:
      return std::nullopt;
    case ExprKind::kBinaryOp:
      if (auto bad = Validate(e.left(), depth + 1)) return bad;
      return Validate(e.right(), depth + 1);
    case ExprKind::kUnaryOp:
    case ExprKind::kFieldAccess:
      return Validate(e.operand(), depth + 1);
    case ExprKind::kStringLit:
      return Invalid(e, "string literals are not valid in contract expressions");
    case ExprKind::kCall:
      if (IsLengthCall(e)) return Validate(e.operands[0].operand(), depth + 1);
      return Invalid(e,
                     "function calls are not allowed in contract expressions (only .length() is "
                     "permitted)");
    case ExprKind::kIf:
      return Invalid(e, "if expressions are not allowed in contract expressions");
    case ExprKind::kBlock:
      return Invalid(e, "block expressions are not allowed in contract expressions");
    case ExprKind::kStructLit:
      return Invalid(e, "struct literals are not allowed in contract expressions");
    case ExprKind::kEnumVariantExpr:
      return Invalid(e, "enum variants are not allowed in contract expressions");
    case ExprKind::kMatch:
      return Invalid(e, "match expressions are not allowed in contract expressions");
    case ExprKind::kRange:
      return Invalid(e, "range expressions are not allowed in contract expressions");
    case ExprKind::kTry:
      return Invalid(e, "try operator `?` is not allowed in contract expressions");
    case ExprKind::kOptionalChain:
      return Invalid(e, "optional chaining `?.` is not allowed in contract expressions");
    case ExprKind::kNullCoalesce:
      return Invalid(e, "null coalescing `??` is not allowed in contract expressions");
    case ExprKind::kClosure:
      return Invalid(e, "closures are not allowed in contract expressions");
    case ExprKind::kIs:
      return Invalid(e, "type test `is` is not allowed in contract expressions");
    case ExprKind::kAwait:
      return Invalid(e, "await is not allowed in contract expressions");
    case ExprKind::kStringInterp:
      return Invalid(e, "string interpolation is not allowed in contract expressions");
    case ExprKind::kTupleLit:
      return Invalid(e, "tuple literals are not allowed in contract expressions");
    case ExprKind::kTupleIndex:
      return Invalid(e, "tuple index is not allowed in contract expressions");
  }
  return std::nullopt;
}

// The translation of docs/kodo-contracts.md §3: a term of sort Int or Bool in SMT-LIB text.
struct Term {
  bool is_bool = false;
  std::string text;
};

// Returns the name of a field chain `a.b.c` ("a.b.c"), or nothing if the base is no identifier.
std::optional<std::string> ChainName(const Expr& e, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return std::nullopt;
  if (e.kind == ExprKind::kIdent) return std::string(e.text);
  if (e.kind != ExprKind::kFieldAccess) return std::nullopt;
  std::optional<std::string> base = ChainName(e.operand(), depth + 1);
  if (!base) return std::nullopt;
  return *base + "." + std::string(e.text);
}

class IntTranslator {
 public:
  std::optional<Term> Translate(const Expr& e, std::uint32_t depth) {
    if (depth > ast::kMaxTreeDepth) return std::nullopt;
    switch (e.kind) {
      case ExprKind::kIntLit:
        return Term{false, IntLiteral(e.int_value)};
      case ExprKind::kBoolLit:
        return Term{true, e.flag ? "true" : "false"};
      case ExprKind::kIdent:
      case ExprKind::kFieldAccess: {
        std::optional<std::string> name = ChainName(e, depth);
        if (!name) return std::nullopt;
        return Const(*name);
      }
      case ExprKind::kCall: {
        if (!IsLengthCall(e)) return std::nullopt;
        std::optional<std::string> name = ChainName(e.operands[0].operand(), depth + 1);
        if (!name) return std::nullopt;
        return Const(*name + ".length");
      }
      case ExprKind::kUnaryOp: {
        std::optional<Term> inner = Translate(e.operand(), depth + 1);
        if (!inner) return std::nullopt;
        if (e.unary_op == ast::UnaryOp::kNot) {
          if (!inner->is_bool) return std::nullopt;
          return Term{true, "(not " + inner->text + ")"};
        }
        if (inner->is_bool) return std::nullopt;
        return Term{false, "(- " + inner->text + ")"};
      }
      case ExprKind::kBinaryOp:
        return Binary(e, depth);
      default:
        return std::nullopt;  // floats and everything outside docs/kodo-contracts.md §3
    }
  }

  const std::set<std::string>& names() const { return names_; }

 private:
  static std::string IntLiteral(std::int64_t v) {
    if (v >= 0) return std::to_string(v);
    return "(- " + std::to_string(0 - static_cast<std::uint64_t>(v)) + ")";
  }

  Term Const(const std::string& name) {
    names_.insert(name);
    return Term{false, "|" + name + "|"};
  }

  std::optional<Term> Binary(const Expr& e, std::uint32_t depth) {
    std::optional<Term> l = Translate(e.left(), depth + 1);
    if (!l) return std::nullopt;
    std::optional<Term> r = Translate(e.right(), depth + 1);
    if (!r) return std::nullopt;
    const char* op = nullptr;
    bool ints_to_bool = false;
    switch (e.bin_op) {
      case ast::BinOp::kAdd:
        op = "+";
        break;
      case ast::BinOp::kSub:
        op = "-";
        break;
      case ast::BinOp::kMul:
        op = "*";
        break;
      case ast::BinOp::kDiv:
        op = "div";
        break;
      case ast::BinOp::kMod:
        op = "mod";
        break;
      case ast::BinOp::kEq:
        op = "=";
        ints_to_bool = true;
        break;
      case ast::BinOp::kNe:
        op = "distinct";
        ints_to_bool = true;
        break;
      case ast::BinOp::kLt:
        op = "<";
        ints_to_bool = true;
        break;
      case ast::BinOp::kGt:
        op = ">";
        ints_to_bool = true;
        break;
      case ast::BinOp::kLe:
        op = "<=";
        ints_to_bool = true;
        break;
      case ast::BinOp::kGe:
        op = ">=";
        ints_to_bool = true;
        break;
      case ast::BinOp::kAnd:
      case ast::BinOp::kOr:
        if (!l->is_bool || !r->is_bool) return std::nullopt;
        return Term{true, fmt::format("({} {} {})", e.bin_op == ast::BinOp::kAnd ? "and" : "or",
                                      l->text, r->text)};
    }
    if (l->is_bool || r->is_bool) return std::nullopt;
    return Term{ints_to_bool, fmt::format("({} {} {})", op, l->text, r->text)};
  }

  std::set<std::string> names_;
};

// The clauses of `fn` as upstream's desugaring leaves them: invariants first, then requires,
// then ensures.
struct Clause {
  const Expr* expr;
  ClauseKind kind;
  std::size_t number;
  bool from_invariant;
};

std::vector<Clause> ClausesOf(const ast::Module& module, const ast::Function& fn) {
  std::vector<Clause> out;
  std::size_t n = 0;
  for (const ast::InvariantDecl& inv : module.invariants) {
    out.push_back({&inv.condition, ClauseKind::kRequires, ++n, true});
  }
  for (const Expr& e : fn.requires_) out.push_back({&e, ClauseKind::kRequires, ++n, false});
  n = 0;
  for (const Expr& e : fn.ensures) out.push_back({&e, ClauseKind::kEnsures, ++n, false});
  return out;
}

FunctionContracts VerifyFunction(const ast::Module& module, const ast::Function& fn,
                                 std::string name, const VerifyOptions& options, SmtCache& cache) {
  FunctionContracts out{.name = std::move(name), .span = fn.span, .clauses = {}};
  const std::vector<Clause> clauses = ClausesOf(module, fn);
  std::vector<std::size_t> to_prove;  // prove mode: the valid ensures clauses
  for (const Clause& c : clauses) {
    ClauseResult r{.kind = c.kind,
                   .number = c.number,
                   .from_invariant = c.from_invariant,
                   .span = ast::ExprSpan(*c.expr)};
    if (options.mode == ContractMode::kNone) {
      r.verdict = ClauseVerdict::kIgnored;
      out.clauses.push_back(std::move(r));
      continue;
    }
    if (std::optional<InvalidContract> bad = ValidateContractExpr(*c.expr)) {
      r.verdict = ClauseVerdict::kInvalid;
      r.span = bad->span;
      r.reason = std::move(bad->reason);
      r.failure = true;
      out.clauses.push_back(std::move(r));
      continue;
    }
    const bool isolated =
        options.mode == ContractMode::kStatic || options.mode == ContractMode::kBoth;
    if (!isolated || !options.use_smt) {
      r.verdict = ClauseVerdict::kRuntimeCheck;
      r.reason = options.use_smt ? "" : "z3 not used";
      if (options.mode == ContractMode::kProve && options.use_smt &&
          c.kind == ClauseKind::kEnsures) {
        to_prove.push_back(out.clauses.size());
      }
      out.clauses.push_back(std::move(r));
      continue;
    }
    std::optional<std::string> formula = NegatedFormula(*c.expr);
    if (!formula) {
      r.verdict = ClauseVerdict::kRuntimeCheck;
      r.reason = "untranslatable";
      out.clauses.push_back(std::move(r));
      continue;
    }
    const SmtAnswer& answer = cache.Solve(*formula);
    switch (answer.outcome) {
      case SmtOutcome::kProved:
        r.verdict = ClauseVerdict::kVerified;
        break;
      case SmtOutcome::kRefuted:
        r.verdict = ClauseVerdict::kRefuted;
        r.model = answer.model;
        r.failure = options.mode == ContractMode::kStatic;
        break;
      case SmtOutcome::kUnknown:
        r.verdict = ClauseVerdict::kRuntimeCheck;
        r.reason = answer.reason;
        break;
    }
    out.clauses.push_back(std::move(r));
  }
  if (!to_prove.empty()) {
    std::vector<const Expr*> goals;
    for (std::size_t i : to_prove) goals.push_back(&fn.ensures[out.clauses[i].number - 1]);
    std::vector<Proof> proofs = ProveEnsures(module, fn, goals, cache);
    for (std::size_t k = 0; k < to_prove.size(); ++k) {
      ClauseResult& r = out.clauses[to_prove[k]];
      Proof& p = proofs[k];
      switch (p.outcome) {
        case SmtOutcome::kProved:
          r.verdict = ClauseVerdict::kVerified;
          break;
        case SmtOutcome::kRefuted:
          r.verdict = ClauseVerdict::kRefuted;
          r.model = std::move(p.model);
          r.values = std::move(p.values);
          r.failure = true;
          break;
        case SmtOutcome::kUnknown:
          r.verdict = ClauseVerdict::kRuntimeCheck;
          r.reason = std::move(p.reason);
          break;
      }
    }
  }
  return out;
}

}  // namespace

ParsedMode ParseContractMode(std::string_view text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "static") return {ContractMode::kStatic, std::nullopt};
  if (lower == "runtime") return {ContractMode::kRuntime, std::nullopt};
  if (lower == "both") return {ContractMode::kBoth, std::nullopt};
  if (lower == "none") return {ContractMode::kNone, std::nullopt};
  if (lower == "recoverable") return {ContractMode::kRecoverable, std::nullopt};
  if (lower == "prove") return {ContractMode::kProve, std::nullopt};
  return {ContractMode::kRuntime,
          fmt::format("warning: unknown contract mode `{}`, falling back to `runtime`", text)};
}

std::string_view ModeName(ContractMode mode) {
  switch (mode) {
    case ContractMode::kRuntime:
      return "runtime";
    case ContractMode::kStatic:
      return "static";
    case ContractMode::kBoth:
      return "both";
    case ContractMode::kNone:
      return "none";
    case ContractMode::kRecoverable:
      return "recoverable";
    case ContractMode::kProve:
      return "prove";
  }
  return "runtime";
}

std::optional<InvalidContract> ValidateContractExpr(const ast::Expr& expr) {
  return Validate(expr, 0);
}

std::optional<std::string> NegatedFormula(const ast::Expr& expr) {
  IntTranslator t;
  std::optional<Term> term = t.Translate(expr, 0);
  if (!term || !term->is_bool) return std::nullopt;
  std::string out;
  for (const std::string& name : t.names()) out += fmt::format("(declare-const |{}| Int)\n", name);
  out += fmt::format("(assert (not {}))\n", term->text);
  return out;
}

const SmtAnswer& SmtCache::Solve(const std::string& smtlib2) {
  auto it = answers_.find(smtlib2);
  if (it != answers_.end()) {
    ++hits_;
    return it->second;
  }
  ++solved_;
  return answers_.emplace(smtlib2, CheckSat(smtlib2, timeout_ms_)).first->second;
}

bool FunctionContracts::failed() const {
  for (const ClauseResult& c : clauses) {
    if (c.failure) return true;
  }
  return false;
}

const FunctionContracts* ContractReport::FirstFailure() const {
  for (const FunctionContracts& f : functions) {
    if (f.failed()) return &f;
  }
  return nullptr;
}

ContractReport VerifyModule(const ast::Module& module, const VerifyOptions& options,
                            SmtCache& cache) {
  ContractReport report;
  report.mode = options.mode;
  auto add = [&](const ast::Function& fn, std::string name) {
    if (report.FirstFailure() != nullptr) return;  // upstream stops at the first failing function
    FunctionContracts f = VerifyFunction(module, fn, std::move(name), options, cache);
    for (const ClauseResult& c : f.clauses) {
      if (c.verdict == ClauseVerdict::kVerified) ++report.static_verified;
      if (c.verdict == ClauseVerdict::kRuntimeCheck ||
          (c.verdict == ClauseVerdict::kRefuted && !c.failure)) {
        ++report.runtime_checks;
      }
    }
    report.functions.push_back(std::move(f));
  };
  for (const ast::Function& fn : module.functions) add(fn, fn.name);
  for (const ast::ImplBlock& impl : module.impl_blocks) {
    for (const ast::Function& fn : impl.methods) add(fn, impl.type_name + "_" + fn.name);
  }
  return report;
}

std::string FailureLines(const FunctionContracts& function) {
  std::string out;
  for (const ClauseResult& c : function.clauses) {
    if (!c.failure) continue;
    if (c.verdict == ClauseVerdict::kInvalid) {
      out += fmt::format("contract error: invalid contract expression at {}: {}\n",
                         SpanDebug(c.span), c.reason);
    } else if (!c.values.empty() || c.model.find("#x") != std::string::npos) {
      // prove mode: the clause, the values as Kōdo reads them, then Z3's model on one line.
      std::string values;
      for (const auto& [name, value] : c.values) {
        values += fmt::format("{}{} = {}", values.empty() ? "" : ", ", name, value);
      }
      std::string model = c.model;
      while (!model.empty() && model.back() == '\n') model.pop_back();
      for (char& ch : model) ch = ch == '\n' ? ';' : ch;
      out += fmt::format(
          "contract error: ensures clause {} of `{}` refuted at {}: counter-example: {} (z3 "
          "model: {})\n",
          c.number, function.name, SpanDebug(c.span), values, model);
    } else {
      out += fmt::format("contract error: contract refuted at {}: counter-example: {}\n",
                         SpanDebug(c.span), c.model);
    }
  }
  return out;
}

std::string ProveLines(const ContractReport& report) {
  if (report.mode != ContractMode::kProve) return "";
  std::string out;
  for (const FunctionContracts& f : report.functions) {
    for (const ClauseResult& c : f.clauses) {
      if (c.kind != ClauseKind::kEnsures) continue;
      if (c.verdict == ClauseVerdict::kVerified) {
        out += fmt::format("  proved: ensures clause {} of `{}` at {}\n", c.number, f.name,
                           SpanDebug(c.span));
      } else if (c.verdict == ClauseVerdict::kRuntimeCheck) {
        out += fmt::format("  runtime check: ensures clause {} of `{}` at {}: {}\n", c.number,
                           f.name, SpanDebug(c.span), c.reason.empty() ? "not proved" : c.reason);
      }
    }
  }
  return out;
}

std::string SummaryLine(const ContractReport& report) {
  if (report.static_verified == 0 && report.runtime_checks == 0) return "";
  return fmt::format("  contracts: {} statically verified, {} runtime checks\n",
                     report.static_verified, report.runtime_checks);
}

namespace {

void PlanStmts(const ast::Module& module, const ast::Block& block, const std::string& fn,
               std::vector<RuntimeCheck>& out, std::uint32_t depth);

void PlanExpr(const ast::Module& module, const Expr& e, const std::string& fn,
              std::vector<RuntimeCheck>& out, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  for (const Expr& op : e.operands) PlanExpr(module, op, fn, out, depth + 1);
  if (e.extra) {
    if (e.extra->block) PlanStmts(module, *e.extra->block, fn, out, depth + 1);
    if (e.extra->else_block) PlanStmts(module, *e.extra->else_block, fn, out, depth + 1);
    for (const ast::MatchArm& arm : e.extra->arms) PlanExpr(module, arm.body, fn, out, depth + 1);
  }
}

void PlanStmts(const ast::Module& module, const ast::Block& block, const std::string& fn,
               std::vector<RuntimeCheck>& out, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  for (const ast::Stmt& s : block.stmts) {
    PlanExpr(module, s.value, fn, out, depth + 1);
    if (s.kind == ast::StmtKind::kLet && s.ty && s.ty->kind == ast::TypeKind::kNamed) {
      for (const ast::TypeAlias& alias : module.type_aliases) {
        if (alias.name != s.ty->name || !alias.constraint) continue;
        out.push_back(
            {.kind = RuntimeCheck::Kind::kRefinement,
             .function = fn,
             .expr = &*alias.constraint,
             .variable = std::string(s.name),
             .alias = alias.name,
             .span = s.span,
             .message = fmt::format("refinement constraint failed: `{}` does not satisfy type `{}`",
                                    s.name, alias.name)});
        break;
      }
    }
    PlanStmts(module, s.body, fn, out, depth + 1);
    if (s.extra && s.extra->else_body) PlanStmts(module, *s.extra->else_body, fn, out, depth + 1);
  }
}

}  // namespace

std::vector<RuntimeCheck> PlanRuntimeChecks(const ast::Module& module) {
  std::vector<RuntimeCheck> out;
  auto plan = [&](const ast::Function& fn, const std::string& name) {
    for (const Clause& c : ClausesOf(module, fn)) {
      const bool req = c.kind == ClauseKind::kRequires;
      out.push_back({.kind = req ? RuntimeCheck::Kind::kRequires : RuntimeCheck::Kind::kEnsures,
                     .function = name,
                     .expr = c.expr,
                     .variable = {},
                     .alias = {},
                     .span = ast::ExprSpan(*c.expr),
                     .message = fmt::format("{} clause {} failed in function `{}`",
                                            req ? "requires" : "ensures", c.number, name)});
    }
    PlanStmts(module, fn.body, name, out, 0);
  };
  for (const ast::Function& fn : module.functions) plan(fn, fn.name);
  for (const ast::ImplBlock& impl : module.impl_blocks) {
    for (const ast::Function& fn : impl.methods) plan(fn, impl.type_name + "_" + fn.name);
  }
  for (const ast::ActorDecl& actor : module.actor_decls) {
    for (const ast::Function& fn : actor.handlers) plan(fn, actor.name + "_" + fn.name);
  }
  return out;
}

}  // namespace trove::kodo::contracts

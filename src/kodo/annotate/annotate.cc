#include "kodo/annotate/annotate.h"

#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

#include "kodo/ast/describe.h"

namespace trove::kodo::annotate {
namespace {

using ExprVisitor = std::function<void(const ast::Expr&)>;

// Pre-order walk over every expression of a function body, in the order upstream's visitors
// use (docs/kodo.md §3.4). Enum variant arguments are not entered (upstream treats the variant
// expression as a leaf); `select` arms are entered only by the MCP walk.
// The walk stops descending past ast::kMaxTreeDepth nodes, which no parsed tree reaches
// (ast.h), so that a tree built by hand cannot overflow the stack.
struct Walker {
  const ExprVisitor& visit;
  bool enter_select;
  std::uint32_t depth = 0;

  // Counts one node on the current path for its scope.
  struct Level {
    explicit Level(Walker& w) : walker(w) { ++walker.depth; }
    ~Level() { --walker.depth; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;
    bool too_deep() const { return walker.depth > ast::kMaxTreeDepth; }
    Walker& walker;
  };

  void Block(const ast::Block& block) {
    const Level level(*this);
    if (level.too_deep()) return;
    for (const ast::Stmt& stmt : block.stmts) Stmt(stmt);
  }

  void Stmt(const ast::Stmt& stmt) {
    const Level level(*this);
    if (level.too_deep()) return;
    using K = ast::StmtKind;
    switch (stmt.kind) {
      case K::kLet:
      case K::kLetPattern:
      case K::kExpr:
      case K::kAssign:
        Expr(stmt.value);
        break;
      case K::kReturn:
        if (stmt.has_value) Expr(stmt.value);
        break;
      case K::kWhile:
        Expr(stmt.value);
        Block(stmt.body);
        break;
      case K::kFor:
        Expr(stmt.value);
        if (stmt.extra) Expr(stmt.extra->value2);
        Block(stmt.body);
        break;
      case K::kForIn:
        Expr(stmt.value);
        Block(stmt.body);
        break;
      case K::kIfLet:
        Expr(stmt.value);
        Block(stmt.body);
        if (stmt.extra && stmt.extra->else_body) Block(*stmt.extra->else_body);
        break;
      case K::kSpawn:
      case K::kForall:
      case K::kParallel:
        Block(stmt.body);
        break;
      case K::kSelect:
        if (enter_select && stmt.extra) {
          for (const ast::SelectArm& arm : stmt.extra->select_arms) {
            Expr(arm.channel);
            Block(arm.body);
          }
        }
        break;
      case K::kBreak:
      case K::kContinue:
        break;
    }
  }

  void Expr(const ast::Expr& expr) {
    const Level level(*this);
    if (level.too_deep()) return;
    visit(expr);
    using K = ast::ExprKind;
    switch (expr.kind) {
      case K::kEnumVariantExpr:  // a leaf for these walks
        return;
      case K::kIf:
        Expr(expr.operands[0]);
        if (expr.extra && expr.extra->block) Block(*expr.extra->block);
        if (expr.extra && expr.extra->else_block) Block(*expr.extra->else_block);
        return;
      case K::kMatch:
        Expr(expr.operands[0]);
        if (expr.extra) {
          for (const ast::MatchArm& arm : expr.extra->arms) Expr(arm.body);
        }
        return;
      case K::kBlock:
        if (expr.extra && expr.extra->block) Block(*expr.extra->block);
        return;
      case K::kStructLit:
        if (expr.extra) {
          for (const ast::FieldInit& field : expr.extra->fields) Expr(field.value);
        }
        return;
      case K::kStringInterp:
        if (expr.extra) {
          for (const ast::StringPart& part : expr.extra->parts) {
            if (part.is_expr && part.expr) Expr(*part.expr);
          }
        }
        return;
      default:
        // Every other kind keeps its children in `operands`, in upstream's field order
        // (left/right, callee then arguments, object, operand, closure body, elements).
        for (const ast::Expr& child : expr.operands) Expr(child);
        return;
    }
  }
};

void WalkBody(const ast::Function& function, bool enter_select, const ExprVisitor& visit) {
  Walker{visit, enter_select}.Block(function.body);
}

bool IsParam(const ast::Function& function, std::string_view name) {
  return std::any_of(function.params.begin(), function.params.end(),
                     [&](const ast::Param& p) { return p.name == name; });
}

bool IsIdent(const ast::Expr& expr) { return expr.kind == ast::ExprKind::kIdent; }

// The parameter used as the divisor of `expr` (`a / b`, `a % b`), or empty.
std::string_view DivisorParam(const ast::Function& function, const ast::Expr& expr) {
  if (expr.kind != ast::ExprKind::kBinaryOp) return {};
  if (expr.bin_op != ast::BinOp::kDiv && expr.bin_op != ast::BinOp::kMod) return {};
  const ast::Expr& right = expr.right();
  if (!IsIdent(right) || !IsParam(function, right.text)) return {};
  return right.text;
}

// The parameter passed as the index of list_get/list_set/list_remove in `expr`, or empty.
std::string_view ListIndexParam(const ast::Function& function, const ast::Expr& expr) {
  if (expr.kind != ast::ExprKind::kCall || expr.operands.size() < 3) return {};
  const ast::Expr& callee = expr.operands[0];
  if (!IsIdent(callee)) return {};
  if (callee.text != "list_get" && callee.text != "list_set" && callee.text != "list_remove") {
    return {};
  }
  const ast::Expr& index = expr.operands[2];  // the second argument
  if (!IsIdent(index) || !IsParam(function, index.text)) return {};
  return index.text;
}

bool HasContract(const ast::Function& function) {
  return !function.requires_.empty() || !function.ensures.empty();
}

// A rough rendering of an existing contract, only for "is it already covered" checks (as
// upstream's): operators, names, integers and booleans; anything else renders empty.
// Past ast::kMaxTreeDepth levels (never for a parsed tree) the rest renders empty.
std::string RoughText(const ast::Expr& expr, std::uint32_t depth = 0) {
  if (depth > ast::kMaxTreeDepth) return {};
  switch (expr.kind) {
    case ast::ExprKind::kBinaryOp:
      return fmt::format("{} {} {}", RoughText(expr.left(), depth + 1),
                         ast::BinOpSymbol(expr.bin_op), RoughText(expr.right(), depth + 1));
    case ast::ExprKind::kIdent:
      return std::string(expr.text);
    case ast::ExprKind::kIntLit:
      return std::to_string(expr.int_value);
    case ast::ExprKind::kBoolLit:
      return expr.flag ? "true" : "false";
    default:
      return {};
  }
}

bool IsIntLit(const ast::Expr& expr, std::optional<std::int64_t> value = std::nullopt) {
  return expr.kind == ast::ExprKind::kIntLit && (!value || expr.int_value == *value);
}

// `if param <= K`, `param < K` or `param == K` with an integer literal K.
bool GuardsParam(const ast::Expr& condition, std::string_view param) {
  if (condition.kind != ast::ExprKind::kBinaryOp) return false;
  if (condition.bin_op != ast::BinOp::kLe && condition.bin_op != ast::BinOp::kLt &&
      condition.bin_op != ast::BinOp::kEq) {
    return false;
  }
  return IsIdent(condition.left()) && condition.left().text == param && IsIntLit(condition.right());
}

// A base-case guard among the body's top-level statements: an `if` statement, or a `let`
// whose value is an `if`, whose condition guards `param`.
bool HasBaseCaseGuard(const ast::Block& body, std::string_view param) {
  for (const ast::Stmt& stmt : body.stmts) {
    const bool if_value = stmt.value.kind == ast::ExprKind::kIf;
    if ((stmt.kind == ast::StmtKind::kExpr || stmt.kind == ast::StmtKind::kLet) && if_value &&
        GuardsParam(stmt.value.operands[0], param)) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::uint32_t LineOf(std::string_view source, std::uint32_t offset) {
  const std::size_t end = std::min<std::size_t>(offset, source.size());
  return 1 + static_cast<std::uint32_t>(std::count(source.begin(), source.begin() + end, '\n'));
}

AgentAnnotation AnnotateForAgent(const ast::Module& module, std::string_view source) {
  AgentAnnotation out;
  std::set<std::string> covered;
  for (const ast::Function& function : module.functions) {
    if (function.name == "main") continue;
    ++out.total_functions;
    if (HasContract(function)) {
      ++out.already_annotated;
      covered.insert(function.name);
      continue;
    }
    const std::uint32_t line = LineOf(source, function.span.start);
    std::set<std::string> seen;  // each expression once per function
    bool any = false;
    WalkBody(function, /*enter_select=*/true, [&](const ast::Expr& expr) {
      if (std::string_view d = DivisorParam(function, expr); !d.empty()) {
        std::string e = fmt::format("{} != 0", d);
        if (seen.insert(e).second) {
          out.suggestions.push_back({function.name, line, std::move(e),
                                     fmt::format("parameter `{}` used as divisor", d)});
          any = true;
        }
      }
      if (std::string_view i = ListIndexParam(function, expr); !i.empty()) {
        std::string e = fmt::format("{} >= 0", i);
        if (seen.insert(e).second) {
          out.suggestions.push_back({function.name, line, std::move(e),
                                     fmt::format("parameter `{}` used as list index", i)});
          any = true;
        }
      }
    });
    if (any) covered.insert(function.name);
  }
  // Upstream keys coverage by name, so a second function of a covered name is not listed.
  for (const ast::Function& function : module.functions) {
    if (function.name == "main" || covered.count(function.name)) continue;
    UncoveredFunction u;
    u.name = function.name;
    u.line = LineOf(source, function.span.start);
    for (const ast::Param& p : function.params) {
      u.params.push_back({std::string(p.name), ast::DescribeType(p.ty)});
    }
    u.return_type = ast::DescribeType(function.return_type);
    const std::size_t begin = std::min<std::size_t>(function.span.start, source.size());
    const std::size_t end = std::clamp<std::size_t>(function.span.end, begin, source.size());
    u.source = std::string(source.substr(begin, end - begin));
    out.uncovered.push_back(std::move(u));
  }
  return out;
}

std::vector<CliSuggestion> SuggestContracts(const ast::Module& module, std::string_view source) {
  std::vector<CliSuggestion> out;
  for (const ast::Function& function : module.functions) {
    if (function.name == "main") continue;
    const std::uint32_t line = LineOf(source, function.span.start);
    std::vector<std::string> existing;
    for (const ast::Expr& r : function.requires_) existing.push_back(RoughText(r));
    auto existing_any = [&](const std::function<bool(const std::string&)>& pred) {
      return std::any_of(existing.begin(), existing.end(), pred);
    };
    auto add = [&](ContractKind kind, std::string expression, std::string reason) {
      out.push_back({function.name, line, kind, std::move(expression), std::move(reason)});
    };

    // Collect each heuristic's hits in walk order, each once.
    std::vector<std::string> divisors;
    std::vector<std::string> indices;
    std::vector<std::pair<std::string, std::string>> zero_guards;
    bool recursive = false;
    WalkBody(function, /*enter_select=*/false, [&](const ast::Expr& expr) {
      if (std::string_view d = DivisorParam(function, expr); !d.empty()) {
        if (std::find(divisors.begin(), divisors.end(), d) == divisors.end()) {
          divisors.emplace_back(d);
        }
      }
      if (std::string_view i = ListIndexParam(function, expr); !i.empty()) {
        if (std::find(indices.begin(), indices.end(), i) == indices.end()) indices.emplace_back(i);
      }
      if (expr.kind == ast::ExprKind::kBinaryOp &&
          (expr.bin_op == ast::BinOp::kGt || expr.bin_op == ast::BinOp::kGe ||
           expr.bin_op == ast::BinOp::kLt || expr.bin_op == ast::BinOp::kLe) &&
          IsIdent(expr.left()) && IsParam(function, expr.left().text) &&
          IsIntLit(expr.right(), 0)) {
        std::pair<std::string, std::string> key{expr.left().text,
                                                std::string(ast::BinOpSymbol(expr.bin_op))};
        if (std::find(zero_guards.begin(), zero_guards.end(), key) == zero_guards.end()) {
          zero_guards.push_back(std::move(key));
        }
      }
      if (expr.kind == ast::ExprKind::kCall && IsIdent(expr.operands[0]) &&
          expr.operands[0].text == function.name) {
        recursive = true;
      }
    });

    // 1. A parameter used as a divisor.
    for (const std::string& d : divisors) {
      const bool covered =
          existing_any([&](const std::string& e) {
            return e.find(d) != std::string::npos && e.find("!= 0") != std::string::npos;
          }) ||
          std::any_of(function.requires_.begin(), function.requires_.end(),
                      [&](const ast::Expr& r) {
                        return r.kind == ast::ExprKind::kBinaryOp && r.bin_op == ast::BinOp::kNe &&
                               IsIdent(r.left()) && r.left().text == d && IsIntLit(r.right(), 0);
                      });
      if (!covered) {
        add(ContractKind::kRequires, fmt::format("{} != 0", d),
            fmt::format("parameter `{}` used as divisor", d));
      }
    }
    // 2. A parameter used as a list index.
    for (const std::string& i : indices) {
      std::string e = fmt::format("{} >= 0", i);
      if (!existing_any([&](const std::string& x) { return x.find(e) != std::string::npos; })) {
        add(ContractKind::kRequires, std::move(e),
            fmt::format("parameter `{}` used as list index", i));
      }
    }
    // 3. A parameter compared with 0 in the body.
    for (const auto& [param, op] : zero_guards) {
      const std::string& p = param;
      if (!existing_any([&](const std::string& x) {
            return x.find(p) != std::string::npos && x.find('0') != std::string::npos;
          })) {
        add(ContractKind::kRequires, fmt::format("{} {} 0", param, op),
            fmt::format("body checks `{} {} 0` \u2014 likely a precondition", param, op));
      }
    }
    // 4. A recursive function with a base-case guard on a parameter.
    if (recursive) {
      for (const ast::Param& p : function.params) {
        if (!HasBaseCaseGuard(function.body, p.name)) continue;
        if (existing_any(
                [&](const std::string& x) { return x.find(p.name) != std::string::npos; })) {
          continue;
        }
        add(ContractKind::kRequires, fmt::format("{} >= 0", p.name),
            fmt::format("recursive function with base case guard on `{}`", p.name));
      }
    }
    // 5. The first top-level `return PARAM`.
    for (const ast::Stmt& stmt : function.body.stmts) {
      if (stmt.kind != ast::StmtKind::kReturn || !stmt.has_value || !IsIdent(stmt.value) ||
          !IsParam(function, stmt.value.text)) {
        continue;
      }
      if (function.ensures.empty()) {
        add(ContractKind::kEnsures, fmt::format("result == {}", stmt.value.text),
            fmt::format("function returns `{}` unchanged", stmt.value.text));
      }
      break;
    }
  }
  return out;
}

}  // namespace trove::kodo::annotate

#include "kodo/testrun/clone.h"

#include <utility>

namespace trove::kodo::testrun {
namespace {

// Recursion is bounded by `depth` (parsed trees are at most ast::kMaxTreeDepth deep, ast.h).
class Cloner {
 public:
  bool ok() const { return ok_; }

  ast::Expr Expr(const ast::Expr& e, std::uint32_t depth) {
    ast::Expr c;
    if (!Enter(depth)) return c;
    c.kind = e.kind;
    c.bin_op = e.bin_op;
    c.unary_op = e.unary_op;
    c.flag = e.flag;
    c.span = e.span;
    c.int_value = e.int_value;
    c.float_value = e.float_value;
    c.text = e.text;
    for (const ast::Expr& o : e.operands) c.operands.push_back(Expr(o, depth + 1));
    if (e.extra) {
      const ast::ExprExtra& x = *e.extra;
      c.extra = ast::MakeBox<ast::ExprExtra>();
      ast::ExprExtra& y = *c.extra;
      if (x.block) y.block = Block(*x.block, depth + 1);
      if (x.else_block) y.else_block = Block(*x.else_block, depth + 1);
      for (const ast::FieldInit& f : x.fields) {
        y.fields.push_back(ast::FieldInit{f.name, Expr(f.value, depth + 1), f.span});
      }
      for (const ast::MatchArm& a : x.arms) {
        y.arms.push_back(
            ast::MatchArm{Pattern(a.pattern, depth + 1), Expr(a.body, depth + 1), a.span});
      }
      for (const ast::ClosureParam& p : x.params) y.params.push_back(p);
      y.return_type = x.return_type;
      for (const ast::StringPart& p : x.parts) {
        ast::StringPart q;
        q.is_expr = p.is_expr;
        q.literal = p.literal;
        q.base = p.base;
        if (p.expr) q.expr = ast::MakeBox<ast::Expr>(Expr(*p.expr, depth + 1));
        y.parts.push_back(std::move(q));
      }
      y.variant = x.variant;
    }
    return c;
  }

  ast::Pattern Pattern(const ast::Pattern& p, std::uint32_t depth) {
    ast::Pattern c;
    if (!Enter(depth)) return c;
    c.kind = p.kind;
    c.has_enum_name = p.has_enum_name;
    c.enum_name = p.enum_name;
    c.name = p.name;
    c.span = p.span;
    for (const ast::Pattern& s : p.subs) c.subs.push_back(Pattern(s, depth + 1));
    if (p.literal) c.literal = ast::MakeBox<ast::Expr>(Expr(*p.literal, depth + 1));
    return c;
  }

  ast::Block Block(const ast::Block& b, std::uint32_t depth) {
    ast::Block c;
    c.span = b.span;
    if (!Enter(depth)) return c;
    for (const ast::Stmt& s : b.stmts) c.stmts.push_back(Stmt(s, depth + 1));
    return c;
  }

  ast::Stmt Stmt(const ast::Stmt& s, std::uint32_t depth) {
    ast::Stmt c;
    if (!Enter(depth)) return c;
    c.kind = s.kind;
    c.mutable_ = s.mutable_;
    c.inclusive = s.inclusive;
    c.has_value = s.has_value;
    c.span = s.span;
    c.name = s.name;
    if (s.ty) c.ty = ast::MakeBox<ast::TypeExpr>(*s.ty);
    if (s.pattern) c.pattern = ast::MakeBox<ast::Pattern>(Pattern(*s.pattern, depth + 1));
    c.value = Expr(s.value, depth + 1);
    c.body = Block(s.body, depth + 1);
    if (s.extra) {
      const ast::StmtExtra& x = *s.extra;
      ast::StmtExtra& y = c.Extra();
      y.value2 = Expr(x.value2, depth + 1);
      if (x.else_body) y.else_body = Block(*x.else_body, depth + 1);
      for (const ast::SelectArm& a : x.select_arms) {
        ast::SelectArm b;
        b.channel = Expr(a.channel, depth + 1);
        b.binding = a.binding;
        b.ty = a.ty;
        b.body = Block(a.body, depth + 1);
        b.span = a.span;
        y.select_arms.push_back(std::move(b));
      }
      for (const ast::ForallBinding& f : x.forall_bindings) y.forall_bindings.push_back(f);
    }
    return c;
  }

 private:
  bool Enter(std::uint32_t depth) {
    if (depth > ast::kMaxTreeDepth) ok_ = false;
    return ok_;
  }
  bool ok_ = true;
};

}  // namespace

Result<ast::Stmt> CloneStmt(const ast::Stmt& stmt) {
  Cloner c;
  ast::Stmt out = c.Stmt(stmt, 0);
  if (!c.ok()) {
    return Status(base::StatusCode::kResourceExhausted, "statement nested too deeply to copy");
  }
  return out;
}

}  // namespace trove::kodo::testrun

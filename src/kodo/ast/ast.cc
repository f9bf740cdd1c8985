#include "kodo/ast/ast.h"

namespace trove::kodo::ast {

Expr::Expr() = default;
Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;
Expr::~Expr() = default;

Stmt::Stmt() = default;
Stmt::Stmt(Stmt&&) noexcept = default;
Stmt& Stmt::operator=(Stmt&&) noexcept = default;
Stmt::~Stmt() = default;
StmtExtra& Stmt::Extra() {
  if (!extra) extra = MakeBox<StmtExtra>();
  return *extra;
}

Span ExprSpan(const Expr& expr) {
  if (expr.kind == ExprKind::kBlock && expr.extra && expr.extra->block)
    return expr.extra->block->span;
  return expr.span;
}

}  // namespace trove::kodo::ast

#include "kodo/ast/ast.h"

namespace trove::kodo::ast {

Expr::Expr() = default;
Expr::Expr(Expr&&) noexcept = default;
Expr& Expr::operator=(Expr&&) noexcept = default;
Expr::~Expr() = default;

Span ExprSpan(const Expr& expr) {
  if (expr.kind == ExprKind::kBlock && expr.extra && expr.extra->block) return expr.extra->block->span;
  return expr.span;
}

}  // namespace trove::kodo::ast

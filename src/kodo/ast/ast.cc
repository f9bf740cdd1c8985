#include "kodo/ast/ast.h"

#include <algorithm>
#include <vector>

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

namespace {

// TreeDepth's walk: an explicit stack of the nodes still to visit, each with its depth.
class DepthWalk {
 public:
  void Push(const Expr& e, std::uint32_t depth) { stack_.push_back({Kind::kExpr, &e, depth}); }
  void Push(const Stmt& s, std::uint32_t depth) { stack_.push_back({Kind::kStmt, &s, depth}); }
  void Push(const Block& b, std::uint32_t depth) { stack_.push_back({Kind::kBlock, &b, depth}); }
  void Push(const Pattern& p, std::uint32_t depth) {
    stack_.push_back({Kind::kPattern, &p, depth});
  }
  void Push(const TypeExpr& t, std::uint32_t depth) { stack_.push_back({Kind::kType, &t, depth}); }
  void Push(const Function& f) {
    for (const Param& p : f.params) Push(p.ty, 1);
    Push(f.return_type, 1);
    for (const Expr& e : f.requires_) Push(e, 1);
    for (const Expr& e : f.ensures) Push(e, 1);
    for (const Annotation& a : f.annotations) Push(a);
    Push(f.body, 1);
  }
  void Push(const Annotation& a) {
    for (const AnnotationArg& arg : a.args) Push(arg.value, 1);
  }

  std::uint32_t Run() {
    std::uint32_t deepest = 0;
    while (!stack_.empty()) {
      const Item item = stack_.back();
      stack_.pop_back();
      deepest = std::max(deepest, item.depth);
      const std::uint32_t d = item.depth + 1;
      switch (item.kind) {
        case Kind::kExpr:
          Children(*static_cast<const Expr*>(item.node), d);
          break;
        case Kind::kStmt:
          Children(*static_cast<const Stmt*>(item.node), d);
          break;
        case Kind::kBlock:
          for (const Stmt& s : static_cast<const Block*>(item.node)->stmts) Push(s, d);
          break;
        case Kind::kPattern: {
          const auto& p = *static_cast<const Pattern*>(item.node);
          for (const Pattern& sub : p.subs) Push(sub, d);
          if (p.literal) Push(*p.literal, d);
          break;
        }
        case Kind::kType:
          for (const TypeExpr& a : static_cast<const TypeExpr*>(item.node)->args) Push(a, d);
          break;
      }
    }
    return deepest;
  }

 private:
  enum class Kind : std::uint8_t { kExpr, kStmt, kBlock, kPattern, kType };
  struct Item {
    Kind kind;
    const void* node;
    std::uint32_t depth;
  };

  void Children(const Expr& e, std::uint32_t d) {
    for (const Expr& op : e.operands) Push(op, d);
    if (!e.extra) return;
    const ExprExtra& x = *e.extra;
    if (x.block) Push(*x.block, d);
    if (x.else_block) Push(*x.else_block, d);
    for (const FieldInit& f : x.fields) Push(f.value, d);
    for (const MatchArm& arm : x.arms) {
      Push(arm.pattern, d);
      Push(arm.body, d);
    }
    for (const ClosureParam& p : x.params) {
      if (p.ty) Push(*p.ty, d);
    }
    if (x.return_type) Push(*x.return_type, d);
    for (const StringPart& part : x.parts) {
      if (part.expr) Push(*part.expr, d);
    }
  }
  void Children(const Stmt& s, std::uint32_t d) {
    if (s.ty) Push(*s.ty, d);
    if (s.pattern) Push(*s.pattern, d);
    Push(s.value, d);
    Push(s.body, d);
    if (!s.extra) return;
    const StmtExtra& x = *s.extra;
    Push(x.value2, d);
    if (x.else_body) Push(*x.else_body, d);
    for (const SelectArm& arm : x.select_arms) {
      Push(arm.channel, d);
      Push(arm.ty, d);
      Push(arm.body, d);
    }
    for (const ForallBinding& b : x.forall_bindings) Push(b.ty, d);
  }

  std::vector<Item> stack_;
};

}  // namespace

std::uint32_t TreeDepth(const Module& module) {
  DepthWalk walk;
  for (const TypeAlias& a : module.type_aliases) {
    walk.Push(a.base_type, 1);
    if (a.constraint) walk.Push(*a.constraint, 1);
  }
  for (const TypeDecl& t : module.type_decls) {
    for (const FieldDef& f : t.fields) walk.Push(f.ty, 1);
  }
  for (const EnumDecl& e : module.enum_decls) {
    for (const EnumVariant& v : e.variants) {
      for (const TypeExpr& t : v.fields) walk.Push(t, 1);
    }
  }
  for (const TraitDecl& t : module.trait_decls) {
    for (const TraitMethod& m : t.methods) {
      for (const Param& p : m.params) walk.Push(p.ty, 1);
      walk.Push(m.return_type, 1);
      if (m.body) walk.Push(*m.body, 1);
    }
  }
  for (const ImplBlock& impl : module.impl_blocks) {
    for (const TypeBinding& b : impl.type_bindings) walk.Push(b.ty, 1);
    for (const Function& f : impl.methods) walk.Push(f);
  }
  for (const ActorDecl& actor : module.actor_decls) {
    for (const FieldDef& f : actor.fields) walk.Push(f.ty, 1);
    for (const Function& f : actor.handlers) walk.Push(f);
  }
  for (const InvariantDecl& inv : module.invariants) walk.Push(inv.condition, 1);
  for (const Function& f : module.functions) walk.Push(f);
  for (const TestDecl& t : module.test_decls) {
    for (const Annotation& a : t.annotations) walk.Push(a);
    walk.Push(t.body, 1);
  }
  // Describe suites nest (each one is a level of the parser's count), but their tests and
  // hooks are roots here: walks enter them one suite at a time.
  std::vector<const DescribeDecl*> suites;
  for (const DescribeDecl& d : module.describe_decls) suites.push_back(&d);
  while (!suites.empty()) {
    const DescribeDecl& d = *suites.back();
    suites.pop_back();
    for (const Annotation& a : d.annotations) walk.Push(a);
    if (d.setup) walk.Push(*d.setup, 1);
    if (d.teardown) walk.Push(*d.teardown, 1);
    for (const TestDecl& t : d.tests) walk.Push(t.body, 1);
    for (const DescribeDecl& inner : d.describes) suites.push_back(&inner);
  }
  return walk.Run();
}

}  // namespace trove::kodo::ast

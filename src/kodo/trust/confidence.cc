#include "kodo/trust/confidence.h"

#include <algorithm>
#include <utility>

#include "kodo/trust/annotations.h"

namespace trove::kodo::trust {
namespace {

// Callees that are constructors, not functions (docs/kodo.md §7.5).
bool IsConstructor(std::string_view name) {
  return name == "Ok" || name == "Err" || name == "Some" || name == "None";
}

// Collects the plain-identifier callees of one body with an explicit stack of nodes.
class CalleeWalk {
 public:
  explicit CalleeWalk(std::set<std::string>& out) : out_(out) {}

  void Run(const ast::Block& body) {
    PushBlock(body);
    while (!stack_.empty()) {
      const Item item = stack_.back();
      stack_.pop_back();
      if (item.expr != nullptr) {
        VisitExpr(*item.expr);
      } else if (item.stmt != nullptr) {
        VisitStmt(*item.stmt);
      }
    }
  }

 private:
  struct Item {
    const ast::Expr* expr = nullptr;
    const ast::Stmt* stmt = nullptr;
  };

  void Push(const ast::Expr& e) { stack_.push_back(Item{&e, nullptr}); }
  void PushBlock(const ast::Block& b) {
    for (const ast::Stmt& s : b.stmts) stack_.push_back(Item{nullptr, &s});
  }

  void VisitExpr(const ast::Expr& e) {
    if (e.kind == ast::ExprKind::kCall && !e.operands.empty() &&
        e.operands[0].kind == ast::ExprKind::kIdent && !IsConstructor(e.operands[0].text)) {
      out_.insert(std::string(e.operands[0].text));
    }
    for (const ast::Expr& op : e.operands) Push(op);
    if (!e.extra) return;
    const ast::ExprExtra& x = *e.extra;
    if (x.block) PushBlock(*x.block);
    if (x.else_block) PushBlock(*x.else_block);
    for (const ast::FieldInit& f : x.fields) Push(f.value);
    for (const ast::MatchArm& arm : x.arms) Push(arm.body);
    for (const ast::StringPart& part : x.parts) {
      if (part.is_expr && part.expr) Push(*part.expr);
    }
  }

  void VisitStmt(const ast::Stmt& s) {
    Push(s.value);
    PushBlock(s.body);
    if (!s.extra) return;
    const ast::StmtExtra& x = *s.extra;
    Push(x.value2);
    if (x.else_body) PushBlock(*x.else_body);
    for (const ast::SelectArm& arm : x.select_arms) {
      Push(arm.channel);
      PushBlock(arm.body);
    }
  }

  std::set<std::string>& out_;
  std::vector<Item> stack_;
};

}  // namespace

CallGraph CallGraph::Build(const ast::Module& module) {
  CallGraph graph;
  for (const ast::Function& fn : module.functions) {
    // Generic bodies are never type-checked upstream, so they record neither a declared value
    // nor edges (docs/kodo.md §7.5).
    if (!fn.generic_params.empty()) continue;
    if (std::optional<double> value = DeclaredConfidence(fn)) graph.declared_[fn.name] = *value;
    CalleeWalk(graph.edges_[fn.name]).Run(fn.body);
  }
  return graph;
}

double CallGraph::Declared(std::string_view name) const {
  const auto it = declared_.find(name);
  return it == declared_.end() ? 1.0 : it->second;
}

double CallGraph::Computed(std::string_view name) const {
  double min = Declared(name);
  std::set<std::string_view> seen{name};
  std::vector<std::string_view> work{name};
  while (!work.empty()) {
    const std::string_view at = work.back();
    work.pop_back();
    const auto it = edges_.find(at);
    if (it == edges_.end()) continue;
    for (const std::string& callee : it->second) {
      if (!seen.insert(callee).second) continue;
      min = std::min(min, Declared(callee));
      work.push_back(callee);
    }
  }
  return min;
}

WeakestLink CallGraph::Weakest(std::string_view name) const {
  // Preorder depth-first from `name`, callees in name order: push them reversed.
  WeakestLink best{std::string(name), Declared(name)};
  std::set<std::string_view> seen;
  std::vector<std::string_view> stack{name};
  while (!stack.empty()) {
    const std::string_view at = stack.back();
    stack.pop_back();
    if (!seen.insert(at).second) continue;
    const double value = Declared(at);
    if (value < best.declared) best = WeakestLink{std::string(at), value};
    const auto it = edges_.find(at);
    if (it == edges_.end()) continue;
    for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) {
      if (seen.count(*c) == 0) stack.push_back(*c);
    }
  }
  return best;
}

std::vector<std::string> CallGraph::Callees(std::string_view name) const {
  const auto it = edges_.find(name);
  if (it == edges_.end()) return {};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

double CallGraph::Overall(const ast::Module& module) const {
  double overall = 1.0;
  for (const ast::Function& fn : module.functions) overall = std::min(overall, Computed(fn.name));
  return overall;
}

}  // namespace trove::kodo::trust

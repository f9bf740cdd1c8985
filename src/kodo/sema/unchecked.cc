#include "kodo/sema/unchecked.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

namespace trove::kodo::sema {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Span;
using ast::Stmt;
using ast::StmtKind;

// The first use of each feature, by offset.
struct Found {
  std::array<std::optional<Span>, 4> first;
  void Add(Feature f, Span span) {
    std::optional<Span>& slot = first[static_cast<std::size_t>(f)];
    if (!slot || span.start < slot->start) slot = span;
  }
};

void WalkExpr(const Expr& e, Found& found, std::uint32_t depth);

void WalkBlock(const ast::Block& b, Found& found, std::uint32_t depth);

void WalkStmt(const Stmt& s, Found& found, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  switch (s.kind) {
    case StmtKind::kSpawn:
    case StmtKind::kParallel:
    case StmtKind::kSelect:
      found.Add(Feature::kConcurrency, s.span);
      break;
    case StmtKind::kForall:
      found.Add(Feature::kTests, s.span);
      break;
    default:
      break;
  }
  WalkExpr(s.value, found, depth + 1);
  WalkBlock(s.body, found, depth + 1);
  if (s.extra) {
    WalkExpr(s.extra->value2, found, depth + 1);
    if (s.extra->else_body) WalkBlock(*s.extra->else_body, found, depth + 1);
    for (const ast::SelectArm& arm : s.extra->select_arms) {
      WalkExpr(arm.channel, found, depth + 1);
      WalkBlock(arm.body, found, depth + 1);
    }
  }
}

void WalkBlock(const ast::Block& b, Found& found, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  for (const Stmt& s : b.stmts) WalkStmt(s, found, depth + 1);
}

void WalkExpr(const Expr& e, Found& found, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  if (e.kind == ExprKind::kAwait) found.Add(Feature::kConcurrency, e.span);
  if (e.kind == ExprKind::kCall && !e.operands.empty() && e.operands[0].kind == ExprKind::kIdent &&
      e.operands[0].text.rfind("channel_", 0) == 0) {
    found.Add(Feature::kConcurrency, e.span);
  }
  for (const Expr& op : e.operands) WalkExpr(op, found, depth + 1);
  if (!e.extra) return;
  if (e.extra->block) WalkBlock(*e.extra->block, found, depth + 1);
  if (e.extra->else_block) WalkBlock(*e.extra->else_block, found, depth + 1);
  for (const ast::FieldInit& f : e.extra->fields) WalkExpr(f.value, found, depth + 1);
  for (const ast::MatchArm& arm : e.extra->arms) WalkExpr(arm.body, found, depth + 1);
  for (const ast::StringPart& part : e.extra->parts) {
    if (part.is_expr && part.expr) WalkExpr(*part.expr, found, depth + 1);
  }
}

// `bodies`: whether the body can hold anything the walk looks for (ast::Module::body_features);
// when the parser saw none, a second walk over every body would find nothing.
void WalkFunction(const ast::Function& fn, Found& found, bool bodies) {
  if (!fn.requires_.empty() || !fn.ensures.empty()) found.Add(Feature::kContracts, fn.span);
  for (const ast::Annotation& a : fn.annotations) found.Add(Feature::kTrustPolicies, a.span);
  if (fn.is_async) found.Add(Feature::kConcurrency, fn.span);
  if (bodies) WalkBlock(fn.body, found, 1);
}

}  // namespace

namespace {

constexpr std::array<FeatureInfo, 4> kFeatures = {{
    {Feature::kContracts, "contracts",
     "`requires`/`ensures` clauses, refinement types and module invariants are not verified "
     "(contract expressions are not type-checked, docs/kodo.md §7.4)",
     false},
    {Feature::kTrustPolicies, "trust policies",
     "annotations (`@confidence`, `@reviewed_by`, `@security_sensitive`, ...), `trust_policy` "
     "and `min_confidence` are not checked (E0260-E0264, E0350)",
     true},  // checked inside the check since kodo/trust (decision 0060)
    {Feature::kTests, "tests",
     "`test`, `describe` and `forall` bodies are not type-checked by `check` (docs/kodo.md §5.3)",
     false},
    {Feature::kConcurrency, "concurrency",
     "`spawn`, `parallel`, `select`, actors, `async`/`.await`, channels and intents are typed "
     "(and E0280 applied) but not run, so their behaviour is not checked",
     false},
}};

}  // namespace

std::span<const FeatureInfo> Features() { return kFeatures; }

std::vector<diag::Diagnostic> UncheckedFeatures(const SourceBuffer& source,
                                                const ast::Module& module) {
  Found found;
  if (module.meta) {
    for (const ast::MetaEntry& entry : module.meta->entries) {
      if (entry.key == "trust_policy" || entry.key == "min_confidence") {
        found.Add(Feature::kTrustPolicies, entry.span);
      }
    }
  }
  for (const ast::TypeAlias& alias : module.type_aliases) {
    if (alias.constraint) found.Add(Feature::kContracts, alias.span);
  }
  for (const ast::InvariantDecl& inv : module.invariants) found.Add(Feature::kContracts, inv.span);
  const bool bodies = module.body_features;
  for (const ast::Function& fn : module.functions) WalkFunction(fn, found, bodies);
  for (const ast::ImplBlock& impl : module.impl_blocks) {
    for (const ast::Function& fn : impl.methods) WalkFunction(fn, found, bodies);
  }
  for (const ast::ActorDecl& actor : module.actor_decls) {
    found.Add(Feature::kConcurrency, actor.span);
    for (const ast::Function& fn : actor.handlers) WalkFunction(fn, found, bodies);
  }
  for (const ast::IntentDecl& intent : module.intent_decls) {
    found.Add(Feature::kConcurrency, intent.span);
  }
  for (const ast::TestDecl& t : module.test_decls) found.Add(Feature::kTests, t.span);
  for (const ast::DescribeDecl& d : module.describe_decls) found.Add(Feature::kTests, d.span);

  std::vector<diag::Diagnostic> out;
  for (const FeatureInfo& info : Features()) {
    const std::optional<Span>& at = found.first[static_cast<std::size_t>(info.feature)];
    if (info.checked || !at) continue;
    const SourceRange range{source.id(), at->start, at->end};
    diag::Diagnostic d =
        diag::Make(diag::Kind::kW0901, range, fmt::format("{}: {}", info.name, info.what));
    d.suggestion = fmt::format(
        "the program passed every check this checker has; review the {} "
        "by hand or with a tool that checks them",
        info.name);
    out.push_back(std::move(d));
  }
  return out;
}

std::optional<Feature> FeatureOf(const diag::Diagnostic& d) {
  if (d.kind != diag::Kind::kW0901) return std::nullopt;
  for (const FeatureInfo& info : Features()) {
    if (d.message.rfind(fmt::format("not checked: {}: ", info.name), 0) == 0) return info.feature;
  }
  return std::nullopt;
}

void MarkChecked(std::vector<diag::Diagnostic>& warnings, Feature feature) {
  warnings.erase(std::remove_if(warnings.begin(), warnings.end(),
                                [&](const diag::Diagnostic& d) { return FeatureOf(d) == feature; }),
                 warnings.end());
}

}  // namespace trove::kodo::sema

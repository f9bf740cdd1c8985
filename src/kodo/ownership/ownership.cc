#include "kodo/ownership/ownership.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace trove::kodo::ownership {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Span;
using ast::Stmt;
using ast::StmtKind;
using diag::Diagnostic;
using diag::Kind;

bool Contains(const std::vector<std::string_view>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

void Tracker::BeginFunction() {
  states_.clear();
  index_.clear();
  indexed_ = 0;
  moved_ = 0;
  undo_.clear();
  scopes_.clear();
  shared_.clear();
  mut_.clear();
}

void Tracker::DeclareParam(std::string_view name, ast::Ownership qualifier) {
  Entry entry;
  entry.state = qualifier == ast::Ownership::kRef   ? State::kBorrowed
                : qualifier == ast::Ownership::kMut ? State::kMutBorrowed
                                                    : State::kOwned;
  Set(name, entry);
}

std::size_t Tracker::IndexOf(std::string_view name) const {
  if (states_.size() <= kLinearNames) {
    // Newest first: the names a body uses most are the ones it bound last.
    for (std::size_t i = states_.size(); i-- > 0;) {
      if (states_[i].first == name) return i;
    }
    return kNotTracked;
  }
  // A body with many names: hashed, so that a long run of `let`s stays linear.
  for (; indexed_ < states_.size(); ++indexed_) index_[states_[indexed_].first] = indexed_;
  auto it = index_.find(name);
  return it == index_.end() ? kNotTracked : it->second;
}

void Tracker::EraseAt(std::size_t at) {
  if (at + 1 == states_.size()) {
    if (indexed_ == states_.size()) {
      index_.erase(states_[at].first);
      --indexed_;
    }
    states_.pop_back();
    return;
  }
  states_.erase(states_.begin() + static_cast<std::ptrdiff_t>(at));
  index_.clear();  // the later indices moved
  indexed_ = 0;
}

void Tracker::Set(std::string_view name, Entry entry) {
  const std::size_t at = IndexOf(name);
  if (!scopes_.empty()) {
    undo_.push_back(
        Undo{name, at == kNotTracked ? std::nullopt : std::optional<Entry>(states_[at].second)});
  }
  if (at == kNotTracked) {
    states_.emplace_back(name, entry);
  } else {
    if (states_[at].second.state == State::kMoved) --moved_;
    states_[at].second = entry;
  }
  if (entry.state == State::kMoved) ++moved_;
}

const Tracker::Entry* Tracker::Find(std::string_view name) const {
  const std::size_t at = IndexOf(name);
  return at == kNotTracked ? nullptr : &states_[at].second;
}

std::optional<State> Tracker::StateOf(std::string_view name) const {
  const Entry* e = Find(name);
  return e == nullptr ? std::nullopt : std::optional<State>(e->state);
}

std::size_t Tracker::EnterBlock() {
  scopes_.push_back(Scope{undo_.size(), shared_, mut_});
  return scopes_.size() - 1;
}

void Tracker::ExitBlock(std::size_t mark) {
  if (mark >= scopes_.size()) return;
  const std::size_t undo_mark = scopes_[mark].undo_mark;
  while (undo_.size() > undo_mark) {
    const Undo& u = undo_.back();
    const std::size_t at = IndexOf(u.name);
    if (at != kNotTracked && states_[at].second.state == State::kMoved) --moved_;
    if (u.previous) {
      if (at != kNotTracked) {
        states_[at].second = *u.previous;
      } else {
        states_.emplace_back(u.name, *u.previous);
      }
      if (u.previous->state == State::kMoved) ++moved_;
    } else if (at != kNotTracked) {
      EraseAt(at);  // undone newest first, so normally the last entry
    }
    undo_.pop_back();
  }
  shared_ = std::move(scopes_[mark].shared);
  mut_ = std::move(scopes_[mark].mut);
  scopes_.resize(mark);
}

std::optional<Diagnostic> Tracker::Use(std::string_view name, Span span) const {
  if (moved_ == 0) return std::nullopt;  // the common case: nothing is moved
  const Entry* e = Find(name);
  if (e == nullptr || e->state != State::kMoved) return std::nullopt;
  Diagnostic d = diag::Make(Kind::kE0240, R(span), name, e->moved_at);
  d.suggestion =
      fmt::format("use `ref` instead of `own` to borrow `{}` without transferring ownership", name);
  return d;
}

std::optional<Diagnostic> Tracker::Let(std::string_view name,
                                       std::optional<std::string_view> source, bool copy,
                                       Span stmt) {
  // Upstream's order: the binding is tracked first, so `let s = s` leaves `s` moved.
  Set(name, Entry{});
  if (!source || copy) return std::nullopt;
  const Entry* src = Find(*source);
  if (src == nullptr || src->state != State::kOwned) return std::nullopt;
  if (Contains(shared_, *source) || Contains(mut_, *source)) {
    Diagnostic d = diag::Make(Kind::kE0242, R(stmt), *source);
    d.suggestion = fmt::format("drop the borrow of `{}` before moving it", *source);
    return d;
  }
  Set(*source, Entry{State::kMoved, stmt.start});
  return std::nullopt;
}

std::optional<Diagnostic> Tracker::Argument(std::string_view name, ast::Ownership qualifier,
                                            bool copy, Span span) {
  switch (qualifier) {
    case ast::Ownership::kOwned: {
      if (copy) return std::nullopt;
      const Entry* e = Find(name);
      if (e == nullptr || e->state != State::kOwned) return std::nullopt;
      if (Contains(shared_, name) || Contains(mut_, name)) {
        Diagnostic d = diag::Make(Kind::kE0242, R(span), name);
        d.suggestion = fmt::format("drop the borrow of `{}` before moving it", name);
        return d;
      }
      Set(name, Entry{State::kMoved, span.start});
      return std::nullopt;
    }
    case ast::Ownership::kRef:
      if (Contains(mut_, name)) {
        Diagnostic d = diag::Make(Kind::kE0246, R(span), name);
        d.suggestion = fmt::format(
            "cannot borrow `{}` as immutable while it is mutably borrowed — drop the `mut` "
            "borrow first",
            name);
        return d;
      }
      shared_.push_back(name);
      return std::nullopt;
    case ast::Ownership::kMut:
      if (Contains(shared_, name)) {
        Diagnostic d = diag::Make(Kind::kE0245, R(span), name);
        d.suggestion = fmt::format(
            "cannot borrow `{}` as mutable while it has active immutable references — drop the "
            "`ref` borrows first",
            name);
        return d;
      }
      if (Contains(mut_, name)) {
        Diagnostic d = diag::Make(Kind::kE0247, R(span), name);
        d.suggestion = fmt::format(
            "only one mutable borrow of `{}` is allowed at a time — use `ref` for read-only "
            "access",
            name);
        return d;
      }
      mut_.push_back(name);
      return std::nullopt;
  }
  return std::nullopt;
}

void Tracker::EndCall(const CallFrame& frame) {
  if (shared_.size() > frame.shared_mark) shared_.resize(frame.shared_mark);
  if (mut_.size() > frame.mut_mark) mut_.resize(frame.mut_mark);
}

std::optional<Diagnostic> Tracker::Assign(std::string_view name, Span stmt) const {
  const Entry* e = Find(name);
  if (e == nullptr) return std::nullopt;
  if (e->state == State::kBorrowed) {
    Diagnostic d = diag::Make(Kind::kE0248, R(stmt), name);
    d.suggestion = fmt::format(
        "cannot assign to `{}` because it is borrowed as immutable — use `mut` instead of `ref`",
        name);
    return d;
  }
  return Use(name, stmt);
}

std::optional<Diagnostic> Tracker::Return(std::string_view name, Span stmt) const {
  const Entry* e = Find(name);
  if (e == nullptr || (e->state != State::kBorrowed && e->state != State::kMutBorrowed)) {
    return std::nullopt;
  }
  Diagnostic d = diag::Make(Kind::kE0241, R(stmt), name);
  d.suggestion = fmt::format("return an owned value instead of a reference to `{}`", name);
  return d;
}

std::optional<Diagnostic> Tracker::Capture(std::string_view name, Span closure) const {
  const Entry* e = Find(name);
  if (e == nullptr || e->state != State::kMoved) return std::nullopt;
  Diagnostic d = diag::Make(Kind::kE0281, R(closure), name, e->moved_at);
  d.suggestion = fmt::format(
      "variable `{}` was already moved — use `ref` to borrow it, or restructure to avoid the "
      "move before the closure",
      name);
  return d;
}

void Tracker::MoveCaptures(const std::vector<std::string_view>& names, Span closure) {
  // Upstream records a capture's move "line" as the closure's offset divided by 80.
  for (std::string_view name : names) Set(name, Entry{State::kMoved, closure.start / 80});
}

std::optional<Diagnostic> Tracker::Spawn(const ast::Block& body, Span spawn) const {
  for (const Stmt& s : body.stmts) {
    if (auto d = SpawnStmt(s, spawn, 1)) return d;
  }
  return std::nullopt;
}

std::optional<Diagnostic> Tracker::SpawnStmt(const Stmt& s, Span spawn, std::uint32_t depth) const {
  if (depth > ast::kMaxTreeDepth) return std::nullopt;
  switch (s.kind) {
    case StmtKind::kExpr:
    case StmtKind::kLet:
    case StmtKind::kAssign:
      return SpawnExpr(s.value, spawn, depth + 1);
    case StmtKind::kReturn:
      if (s.has_value) return SpawnExpr(s.value, spawn, depth + 1);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<Diagnostic> Tracker::SpawnExpr(const Expr& e, Span spawn, std::uint32_t depth) const {
  if (depth > ast::kMaxTreeDepth) return std::nullopt;
  switch (e.kind) {
    case ExprKind::kIdent: {
      const Entry* entry = Find(e.text);
      if (entry == nullptr || entry->state != State::kBorrowed) return std::nullopt;
      Diagnostic d = diag::Make(Kind::kE0280, R(spawn), e.text);
      d.suggestion =
          "use owned values (own) instead of references when sending data to spawned tasks";
      return d;
    }
    case ExprKind::kCall:
    case ExprKind::kBinaryOp:
    case ExprKind::kUnaryOp:
    case ExprKind::kFieldAccess:
      for (const Expr& op : e.operands) {
        if (auto d = SpawnExpr(op, spawn, depth + 1)) return d;
      }
      return std::nullopt;
    case ExprKind::kIf: {
      if (auto d = SpawnExpr(e.operands[0], spawn, depth + 1)) return d;
      for (const Stmt& s : e.extra->block->stmts) {
        if (auto d = SpawnStmt(s, spawn, depth + 1)) return d;
      }
      if (e.extra->else_block) {
        for (const Stmt& s : e.extra->else_block->stmts) {
          if (auto d = SpawnStmt(s, spawn, depth + 1)) return d;
        }
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// =============================================================================================
// Free variables of a closure body.

namespace {

class FreeVarWalker {
 public:
  explicit FreeVarWalker(const std::vector<std::string_view>& params) : bound_(params) {}

  void WalkExpr(const Expr& e, std::uint32_t depth);
  std::vector<std::pair<std::string_view, Span>> Take() { return std::move(out_); }

 private:
  void WalkBlock(const ast::Block& b, std::uint32_t depth) {
    const std::size_t mark = bound_.size();
    for (const Stmt& s : b.stmts) WalkStmt(s, depth + 1);
    bound_.resize(mark);
  }
  void WalkStmt(const Stmt& s, std::uint32_t depth);
  void BindPattern(const ast::Pattern& p, std::uint32_t depth) {
    if (depth > ast::kMaxTreeDepth) return;
    if (p.kind == ast::PatternKind::kBinding ||
        (p.kind == ast::PatternKind::kVariant && !p.has_enum_name && p.subs.empty())) {
      bound_.push_back(p.name);
    }
    for (const ast::Pattern& sub : p.subs) BindPattern(sub, depth + 1);
  }
  void Free(std::string_view name, Span span) {
    if (Contains(bound_, name)) return;
    for (const auto& [n, s] : out_) {
      if (n == name) return;
    }
    out_.push_back({name, span});
  }

  std::vector<std::string_view> bound_;
  std::vector<std::pair<std::string_view, Span>> out_;
};

void FreeVarWalker::WalkStmt(const Stmt& s, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  switch (s.kind) {
    case StmtKind::kLet:
      WalkExpr(s.value, depth + 1);
      bound_.push_back(s.name);
      return;
    case StmtKind::kLetPattern:
      WalkExpr(s.value, depth + 1);
      if (s.pattern) BindPattern(*s.pattern, depth + 1);
      return;
    case StmtKind::kExpr:
    case StmtKind::kReturn:
      if (s.kind == StmtKind::kExpr || s.has_value) WalkExpr(s.value, depth + 1);
      return;
    case StmtKind::kAssign:
      Free(s.name, s.span);
      WalkExpr(s.value, depth + 1);
      return;
    case StmtKind::kWhile:
      WalkExpr(s.value, depth + 1);
      WalkBlock(s.body, depth);
      return;
    case StmtKind::kFor:
    case StmtKind::kForIn: {
      WalkExpr(s.value, depth + 1);
      if (s.kind == StmtKind::kFor && s.extra) WalkExpr(s.extra->value2, depth + 1);
      const std::size_t mark = bound_.size();
      bound_.push_back(s.name);
      WalkBlock(s.body, depth);
      bound_.resize(mark);
      return;
    }
    case StmtKind::kIfLet: {
      WalkExpr(s.value, depth + 1);
      const std::size_t mark = bound_.size();
      if (s.pattern) BindPattern(*s.pattern, depth + 1);
      WalkBlock(s.body, depth);
      bound_.resize(mark);
      if (s.extra && s.extra->else_body) WalkBlock(*s.extra->else_body, depth);
      return;
    }
    case StmtKind::kSpawn:
    case StmtKind::kParallel:
    case StmtKind::kForall:
      WalkBlock(s.body, depth);
      return;
    case StmtKind::kSelect:
      if (s.extra) {
        for (const ast::SelectArm& arm : s.extra->select_arms) {
          WalkExpr(arm.channel, depth + 1);
          WalkBlock(arm.body, depth);
        }
      }
      return;
    case StmtKind::kBreak:
    case StmtKind::kContinue:
      return;
  }
}

void FreeVarWalker::WalkExpr(const Expr& e, std::uint32_t depth) {
  if (depth > ast::kMaxTreeDepth) return;
  switch (e.kind) {
    case ExprKind::kIdent:
      Free(e.text, e.span);
      return;
    case ExprKind::kClosure: {
      const std::size_t mark = bound_.size();
      for (const ast::ClosureParam& p : e.extra->params) bound_.push_back(p.name);
      WalkExpr(e.operands[0], depth + 1);
      bound_.resize(mark);
      return;
    }
    case ExprKind::kMatch:
      WalkExpr(e.operands[0], depth + 1);
      for (const ast::MatchArm& arm : e.extra->arms) {
        const std::size_t mark = bound_.size();
        BindPattern(arm.pattern, depth + 1);
        WalkExpr(arm.body, depth + 1);
        bound_.resize(mark);
      }
      return;
    default:
      break;
  }
  for (const Expr& op : e.operands) WalkExpr(op, depth + 1);
  if (!e.extra) return;
  if (e.extra->block) WalkBlock(*e.extra->block, depth);
  if (e.extra->else_block) WalkBlock(*e.extra->else_block, depth);
  for (const ast::FieldInit& f : e.extra->fields) WalkExpr(f.value, depth + 1);
  for (const ast::StringPart& part : e.extra->parts) {
    if (part.is_expr && part.expr) WalkExpr(*part.expr, depth + 1);
  }
}

}  // namespace

std::vector<std::pair<std::string_view, Span>> FreeVariables(
    const Expr& body, const std::vector<std::string_view>& params) {
  FreeVarWalker walker(params);
  walker.WalkExpr(body, 1);
  return walker.Take();
}

}  // namespace trove::kodo::ownership

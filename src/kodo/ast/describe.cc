#include "kodo/ast/describe.h"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace trove::kodo::ast {
namespace {

// Appends Debug renderings to one string. `shift_` is subtracted from every span printed: it is
// non-zero inside an f-string interpolation, whose spans upstream reports relative to the
// interpolated text (a fresh sub-parser over that text).
class Printer {
 public:
  std::string Take() { return std::move(out_); }

  void Str(std::string_view s) { out_ += RustDebugString(s); }
  void Raw(std::string_view s) { out_ += s; }
  void Bool(bool b) { out_ += b ? "true" : "false"; }
  void SpanOf(Span span) {
    out_ += fmt::format("Span {{ start: {}, end: {} }}", Shift(span.start), Shift(span.end));
  }

  template <typename Items, typename F>
  void List(const Items& items, F each) {
    out_ += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out_ += ", ";
      each(items[i]);
    }
    out_ += ']';
  }
  void Strings(const std::vector<std::string>& items) {
    List(items, [&](const std::string& s) { Str(s); });
  }

  void Type(const TypeExpr& t) {
    const Level level(*this);
    if (level.too_deep()) {
      Raw("..");
      return;
    }
    switch (t.kind) {
      case TypeKind::kNamed:
        Raw("Named(");
        Str(t.name);
        Raw(")");
        return;
      case TypeKind::kGeneric:
        Raw("Generic(");
        Str(t.name);
        Raw(", ");
        Types(t.args);
        Raw(")");
        return;
      case TypeKind::kFunction: {
        Raw("Function([");
        for (std::size_t i = 0; i + 1 < t.args.size(); ++i) {
          if (i > 0) Raw(", ");
          Type(t.args[i]);
        }
        Raw("], ");
        if (t.args.empty()) {
          Raw("Unit");
        } else {
          Type(t.args.back());
        }
        Raw(")");
        return;
      }
      case TypeKind::kUnit:
        Raw("Unit");
        return;
      case TypeKind::kOptional:
        Raw("Optional(");
        if (t.args.empty()) {
          Raw("Unit");
        } else {
          Type(t.args[0]);
        }
        Raw(")");
        return;
      case TypeKind::kTuple:
        Raw("Tuple(");
        Types(t.args);
        Raw(")");
        return;
      case TypeKind::kDynTrait:
        Raw("DynTrait(");
        Str(t.name);
        Raw(")");
        return;
    }
  }
  void Types(const ast::Vec<TypeExpr>& ts) {
    List(ts, [&](const TypeExpr& t) { Type(t); });
  }
  // `t` is a std::optional<TypeExpr> or an ast::Box<TypeExpr> (absent: null).
  template <typename OptionalType>
  void OptType(const OptionalType& t) {
    if (!t) {
      Raw("None");
      return;
    }
    Raw("Some(");
    Type(*t);
    Raw(")");
  }

  void BlockOf(const Block& b) {
    const Level level(*this);
    if (level.too_deep()) {
      Raw("..");
      return;
    }
    Raw("Block { span: ");
    SpanOf(b.span);
    Raw(", stmts: ");
    List(b.stmts, [&](const Stmt& s) { StmtOf(s); });
    Raw(" }");
  }
  void OptBlock(const std::optional<Block>& b) {
    if (!b) {
      Raw("None");
      return;
    }
    Raw("Some(");
    BlockOf(*b);
    Raw(")");
  }

  // `Name { a: ..., span: ... }` helpers.
  void Field(std::string_view name) {
    out_ += name;
    out_ += ": ";
  }
  void Sep() { out_ += ", "; }

  void ExprOf(const Expr& e) {
    const Level level(*this);
    if (level.too_deep()) {
      Raw("..");
      return;
    }
    switch (e.kind) {
      case ExprKind::kIntLit:
        out_ += fmt::format("IntLit({}, ", e.int_value);
        SpanOf(e.span);
        Raw(")");
        return;
      case ExprKind::kFloatLit:
        out_ += "FloatLit(" + RustDebugFloat(e.float_value) + ", ";
        SpanOf(e.span);
        Raw(")");
        return;
      case ExprKind::kStringLit:
        Raw("StringLit(");
        Str(e.text);
        Sep();
        SpanOf(e.span);
        Raw(")");
        return;
      case ExprKind::kBoolLit:
        Raw("BoolLit(");
        Bool(e.flag);
        Sep();
        SpanOf(e.span);
        Raw(")");
        return;
      case ExprKind::kIdent:
        Raw("Ident(");
        Str(e.text);
        Sep();
        SpanOf(e.span);
        Raw(")");
        return;
      case ExprKind::kBinaryOp:
        Raw("BinaryOp { left: ");
        ExprOf(e.operands[0]);
        Raw(", op: ");
        Raw(BinOpName(e.bin_op));
        Raw(", right: ");
        ExprOf(e.operands[1]);
        EndSpan(e);
        return;
      case ExprKind::kUnaryOp:
        Raw("UnaryOp { op: ");
        Raw(e.unary_op == UnaryOp::kNot ? "Not" : "Neg");
        Raw(", operand: ");
        ExprOf(e.operands[0]);
        EndSpan(e);
        return;
      case ExprKind::kCall:
        Raw("Call { callee: ");
        ExprOf(e.operands[0]);
        Raw(", args: [");
        for (std::size_t i = 1; i < e.operands.size(); ++i) {
          if (i > 1) Sep();
          ExprOf(e.operands[i]);
        }
        Raw("]");
        EndSpan(e);
        return;
      case ExprKind::kIf:
        Raw("If { condition: ");
        ExprOf(e.operands[0]);
        Raw(", then_branch: ");
        BlockOf(*e.extra->block);
        Raw(", else_branch: ");
        OptBlock(e.extra->else_block);
        EndSpan(e);
        return;
      case ExprKind::kFieldAccess:
      case ExprKind::kOptionalChain:
        Raw(e.kind == ExprKind::kFieldAccess ? "FieldAccess { object: "
                                             : "OptionalChain { object: ");
        ExprOf(e.operands[0]);
        Raw(", field: ");
        Str(e.text);
        EndSpan(e);
        return;
      case ExprKind::kStructLit:
        Raw("StructLit { name: ");
        Str(e.text);
        Raw(", fields: ");
        List(e.extra->fields, [&](const FieldInit& f) {
          Raw("FieldInit { name: ");
          Str(f.name);
          Raw(", value: ");
          ExprOf(f.value);
          Raw(", span: ");
          SpanOf(f.span);
          Raw(" }");
        });
        EndSpan(e);
        return;
      case ExprKind::kEnumVariantExpr:
        Raw("EnumVariantExpr { enum_name: ");
        Str(e.text);
        Raw(", variant: ");
        Str(e.extra->variant);
        Raw(", args: ");
        Exprs(e.operands);
        EndSpan(e);
        return;
      case ExprKind::kMatch:
        Raw("Match { expr: ");
        ExprOf(e.operands[0]);
        Raw(", arms: ");
        List(e.extra->arms, [&](const MatchArm& arm) {
          Raw("MatchArm { pattern: ");
          PatternOf(arm.pattern);
          Raw(", body: ");
          ExprOf(arm.body);
          Raw(", span: ");
          SpanOf(arm.span);
          Raw(" }");
        });
        EndSpan(e);
        return;
      case ExprKind::kTry:
      case ExprKind::kAwait:
        Raw(e.kind == ExprKind::kTry ? "Try { operand: " : "Await { operand: ");
        ExprOf(e.operands[0]);
        EndSpan(e);
        return;
      case ExprKind::kNullCoalesce:
        Raw("NullCoalesce { left: ");
        ExprOf(e.operands[0]);
        Raw(", right: ");
        ExprOf(e.operands[1]);
        EndSpan(e);
        return;
      case ExprKind::kRange:
        Raw("Range { start: ");
        ExprOf(e.operands[0]);
        Raw(", end: ");
        ExprOf(e.operands[1]);
        Raw(", inclusive: ");
        Bool(e.flag);
        EndSpan(e);
        return;
      case ExprKind::kClosure:
        Raw("Closure { params: ");
        List(e.extra->params, [&](const ClosureParam& p) {
          Raw("ClosureParam { name: ");
          Str(p.name);
          Raw(", ty: ");
          OptType(p.ty);
          Raw(", span: ");
          SpanOf(p.span);
          Raw(" }");
        });
        Raw(", return_type: ");
        OptType(e.extra->return_type);
        Raw(", body: ");
        ExprOf(e.operands[0]);
        EndSpan(e);
        return;
      case ExprKind::kIs:
        Raw("Is { operand: ");
        ExprOf(e.operands[0]);
        Raw(", type_name: ");
        Str(e.text);
        EndSpan(e);
        return;
      case ExprKind::kStringInterp:
        Raw("StringInterp { parts: ");
        List(e.extra->parts, [&](const StringPart& part) {
          if (!part.is_expr) {
            Raw("Literal(");
            Str(part.literal);
            Raw(")");
            return;
          }
          Raw("Expr(");
          const std::uint32_t saved = shift_;
          shift_ = part.base;
          ExprOf(*part.expr);
          shift_ = saved;
          Raw(")");
        });
        EndSpan(e);
        return;
      case ExprKind::kTupleLit:
        Raw("TupleLit(");
        Exprs(e.operands);
        Sep();
        SpanOf(e.span);
        Raw(")");
        return;
      case ExprKind::kTupleIndex:
        Raw("TupleIndex { tuple: ");
        ExprOf(e.operands[0]);
        out_ += fmt::format(", index: {}", e.int_value);
        EndSpan(e);
        return;
      case ExprKind::kBlock:
        Raw("Block(");
        BlockOf(*e.extra->block);
        Raw(")");
        return;
    }
  }
  void Exprs(const ast::Vec<Expr>& es) {
    List(es, [&](const Expr& x) { ExprOf(x); });
  }
  void EndSpan(const Expr& e) {
    Raw(", span: ");
    SpanOf(e.span);
    Raw(" }");
  }

  void PatternOf(const Pattern& p) {
    const Level level(*this);
    if (level.too_deep()) {
      Raw("..");
      return;
    }
    switch (p.kind) {
      case PatternKind::kVariant:
        Raw("Variant { enum_name: ");
        if (p.has_enum_name) {
          Raw("Some(");
          Str(p.enum_name);
          Raw(")");
        } else {
          Raw("None");
        }
        Raw(", variant: ");
        Str(p.name);
        Raw(", bindings: ");
        // Sub-patterns print as patterns: `Binding("v", SPAN)`, `Wildcard(SPAN)`, `Variant {..}`.
        List(p.subs, [&](const Pattern& sub) { PatternOf(sub); });
        Raw(", span: ");
        SpanOf(p.span);
        Raw(" }");
        return;
      case PatternKind::kWildcard:
        Raw("Wildcard(");
        SpanOf(p.span);
        Raw(")");
        return;
      case PatternKind::kLiteral:
        Raw("Literal(");
        ExprOf(*p.literal);
        Raw(")");
        return;
      case PatternKind::kTuple:
        Raw("Tuple(");
        List(p.subs, [&](const Pattern& sub) { PatternOf(sub); });
        Sep();
        SpanOf(p.span);
        Raw(")");
        return;
      case PatternKind::kBinding:
        Raw("Binding(");
        Str(p.name);
        Sep();
        SpanOf(p.span);
        Raw(")");
        return;
    }
  }

  void StmtOf(const Stmt& s) {
    const Level level(*this);
    if (level.too_deep()) {
      Raw("..");
      return;
    }
    static const Vec<SelectArm> kNoArms;
    static const Vec<ForallBinding> kNoBindings;
    switch (s.kind) {
      case StmtKind::kLet:
      case StmtKind::kLetPattern:
        Raw(s.kind == StmtKind::kLet ? "Let { span: " : "LetPattern { span: ");
        SpanOf(s.span);
        Raw(", mutable: ");
        Bool(s.mutable_);
        if (s.kind == StmtKind::kLet) {
          Raw(", name: ");
          Str(s.name);
        } else {
          Raw(", pattern: ");
          PatternOf(*s.pattern);
        }
        Raw(", ty: ");
        OptType(s.ty);
        Raw(", value: ");
        ExprOf(s.value);
        Raw(" }");
        return;
      case StmtKind::kExpr:
        Raw("Expr(");
        ExprOf(s.value);
        Raw(")");
        return;
      case StmtKind::kReturn:
        Raw("Return { span: ");
        SpanOf(s.span);
        Raw(", value: ");
        if (s.has_value) {
          Raw("Some(");
          ExprOf(s.value);
          Raw(")");
        } else {
          Raw("None");
        }
        Raw(" }");
        return;
      case StmtKind::kWhile:
        Raw("While { span: ");
        SpanOf(s.span);
        Raw(", condition: ");
        ExprOf(s.value);
        Raw(", body: ");
        BlockOf(s.body);
        Raw(" }");
        return;
      case StmtKind::kFor:
        Raw("For { span: ");
        SpanOf(s.span);
        Raw(", name: ");
        Str(s.name);
        Raw(", start: ");
        ExprOf(s.value);
        Raw(", end: ");
        ExprOf(s.extra->value2);
        Raw(", inclusive: ");
        Bool(s.inclusive);
        Raw(", body: ");
        BlockOf(s.body);
        Raw(" }");
        return;
      case StmtKind::kForIn:
        Raw("ForIn { span: ");
        SpanOf(s.span);
        Raw(", name: ");
        Str(s.name);
        Raw(", iterable: ");
        ExprOf(s.value);
        Raw(", body: ");
        BlockOf(s.body);
        Raw(" }");
        return;
      case StmtKind::kAssign:
        Raw("Assign { span: ");
        SpanOf(s.span);
        Raw(", name: ");
        Str(s.name);
        Raw(", value: ");
        ExprOf(s.value);
        Raw(" }");
        return;
      case StmtKind::kIfLet:
        Raw("IfLet { span: ");
        SpanOf(s.span);
        Raw(", pattern: ");
        PatternOf(*s.pattern);
        Raw(", value: ");
        ExprOf(s.value);
        Raw(", body: ");
        BlockOf(s.body);
        Raw(", else_body: ");
        if (s.extra) {
          OptBlock(s.extra->else_body);
        } else {
          Raw("None");
        }
        Raw(" }");
        return;
      case StmtKind::kBreak:
      case StmtKind::kContinue:
        Raw(s.kind == StmtKind::kBreak ? "Break { span: " : "Continue { span: ");
        SpanOf(s.span);
        Raw(" }");
        return;
      case StmtKind::kSpawn:
        Raw("Spawn { span: ");
        SpanOf(s.span);
        Raw(", body: ");
        BlockOf(s.body);
        Raw(" }");
        return;
      case StmtKind::kParallel:
        Raw("Parallel { span: ");
        SpanOf(s.span);
        Raw(", body: ");
        List(s.body.stmts, [&](const Stmt& x) { StmtOf(x); });
        Raw(" }");
        return;
      case StmtKind::kSelect:
        Raw("Select { span: ");
        SpanOf(s.span);
        Raw(", arms: ");
        List(s.extra ? s.extra->select_arms : kNoArms, [&](const SelectArm& arm) {
          Raw("SelectArm { channel: ");
          ExprOf(arm.channel);
          Raw(", binding: ");
          Str(arm.binding);
          Raw(", binding_type: ");
          Type(arm.ty);
          Raw(", body: ");
          BlockOf(arm.body);
          Raw(", span: ");
          SpanOf(arm.span);
          Raw(" }");
        });
        Raw(" }");
        return;
      case StmtKind::kForall:
        Raw("Forall { span: ");
        SpanOf(s.span);
        Raw(", bindings: ");
        List(s.extra ? s.extra->forall_bindings : kNoBindings, [&](const ForallBinding& b) {
          Raw("(");
          Str(b.name);
          Sep();
          Type(b.ty);
          Raw(")");
        });
        Raw(", body: ");
        BlockOf(s.body);
        Raw(" }");
        return;
    }
  }

  void AnnotationArgOf(const AnnotationArg& a) {
    if (a.named) {
      Raw("Named(");
      Str(a.key);
      Sep();
    } else {
      Raw("Positional(");
    }
    ExprOf(a.value);
    Raw(")");
  }
  void AnnotationOf(const Annotation& a) {
    Raw("Annotation { name: ");
    Str(a.name);
    Raw(", args: ");
    List(a.args, [&](const AnnotationArg& x) { AnnotationArgOf(x); });
    Raw(", span: ");
    SpanOf(a.span);
    Raw(" }");
  }
  void Annotations(const Vec<Annotation>& as) {
    List(as, [&](const Annotation& a) { AnnotationOf(a); });
  }
  void Id(std::uint32_t id) { out_ += fmt::format("NodeId({})", id); }
  void Generics(const Vec<GenericParam>& gs) {
    List(gs, [&](const GenericParam& g) {
      Raw("GenericParam { name: ");
      Str(g.name);
      Raw(", bounds: ");
      Strings(g.bounds);
      Raw(", span: ");
      SpanOf(g.span);
      Raw(" }");
    });
  }
  void ParamOf(const Param& p) {
    Raw("Param { name: ");
    Str(p.name);
    Raw(", ty: ");
    Type(p.ty);
    Raw(", span: ");
    SpanOf(p.span);
    Raw(", ownership: ");
    Raw(p.ownership == Ownership::kOwned ? "Owned"
        : p.ownership == Ownership::kRef ? "Ref"
                                         : "Mut");
    Raw(" }");
  }
  void FunctionOf(const Function& f) {
    Raw("Function { id: ");
    Id(f.id);
    Raw(", span: ");
    SpanOf(f.span);
    Raw(", name: ");
    Str(f.name);
    Raw(", visibility: ");
    Raw(f.visibility == Visibility::kPublic ? "Public" : "Private");
    Raw(", is_async: ");
    Bool(f.is_async);
    Raw(", generic_params: ");
    Generics(f.generic_params);
    Raw(", annotations: ");
    Annotations(f.annotations);
    Raw(", params: ");
    List(f.params, [&](const Param& p) { ParamOf(p); });
    Raw(", return_type: ");
    Type(f.return_type);
    Raw(", requires: ");
    Exprs(f.requires_);
    Raw(", ensures: ");
    Exprs(f.ensures);
    Raw(", body: ");
    BlockOf(f.body);
    Raw(" }");
  }
  void Fields(const Vec<FieldDef>& fs) {
    List(fs, [&](const FieldDef& f) {
      Raw("FieldDef { name: ");
      Str(f.name);
      Raw(", ty: ");
      Type(f.ty);
      Raw(", span: ");
      SpanOf(f.span);
      Raw(" }");
    });
  }
  void IntentValue(const IntentConfigValue& v) {
    switch (v.kind) {
      case IntentValueKind::kStringLit:
        Raw("StringLit(");
        Str(v.text);
        break;
      case IntentValueKind::kIntLit:
        out_ += fmt::format("IntLit({}", v.int_value);
        break;
      case IntentValueKind::kBoolLit:
        Raw("BoolLit(");
        Bool(v.bool_value);
        break;
      case IntentValueKind::kFloatLit:
        out_ += "FloatLit(" + RustDebugFloat(v.float_value);
        break;
      case IntentValueKind::kFnRef:
        Raw("FnRef(");
        Str(v.text);
        break;
      case IntentValueKind::kList:
        Raw("List(");
        List(v.list, [&](const IntentConfigValue& x) { IntentValue(x); });
        break;
    }
    Sep();
    SpanOf(v.span);
    Raw(")");
  }
  void TestOf(const TestDecl& t) {
    Raw("TestDecl { id: ");
    Id(t.id);
    Raw(", span: ");
    SpanOf(t.span);
    Raw(", name: ");
    Str(t.name);
    Raw(", annotations: ");
    Annotations(t.annotations);
    Raw(", body: ");
    BlockOf(t.body);
    Raw(" }");
  }
  void DescribeOf(const DescribeDecl& d) {
    Raw("DescribeDecl { id: ");
    Id(d.id);
    Raw(", span: ");
    SpanOf(d.span);
    Raw(", name: ");
    Str(d.name);
    Raw(", annotations: ");
    Annotations(d.annotations);
    Raw(", setup: ");
    OptBlock(d.setup);
    Raw(", teardown: ");
    OptBlock(d.teardown);
    Raw(", tests: ");
    List(d.tests, [&](const TestDecl& t) { TestOf(t); });
    Raw(", describes: ");
    List(d.describes, [&](const DescribeDecl& x) { DescribeOf(x); });
    Raw(" }");
  }

  void ModuleOf(const Module& m) {
    Raw("Module { id: ");
    Id(m.id);
    Raw(", span: ");
    SpanOf(m.span);
    Raw(", name: ");
    Str(m.name);
    Raw(", imports: ");
    List(m.imports, [&](const ImportDecl& i) {
      Raw("ImportDecl { path: ");
      Strings(i.path);
      Raw(", names: ");
      if (i.names.empty()) {
        Raw("None");
      } else {
        Raw("Some(");
        Strings(i.names);
        Raw(")");
      }
      Raw(", span: ");
      SpanOf(i.span);
      Raw(" }");
    });
    Raw(", meta: ");
    if (m.meta) {
      Raw("Some(Meta { id: ");
      Id(m.meta->id);
      Raw(", span: ");
      SpanOf(m.meta->span);
      Raw(", entries: ");
      List(m.meta->entries, [&](const MetaEntry& e) {
        Raw("MetaEntry { key: ");
        Str(e.key);
        Raw(", value: ");
        Str(e.value);
        Raw(", span: ");
        SpanOf(e.span);
        Raw(" }");
      });
      Raw(" })");
    } else {
      Raw("None");
    }
    Raw(", type_aliases: ");
    List(m.type_aliases, [&](const TypeAlias& a) {
      Raw("TypeAlias { id: ");
      Id(a.id);
      Raw(", span: ");
      SpanOf(a.span);
      Raw(", name: ");
      Str(a.name);
      Raw(", base_type: ");
      Type(a.base_type);
      Raw(", constraint: ");
      if (a.constraint) {
        Raw("Some(");
        ExprOf(*a.constraint);
        Raw(")");
      } else {
        Raw("None");
      }
      Raw(" }");
    });
    Raw(", type_decls: ");
    List(m.type_decls, [&](const TypeDecl& t) {
      Raw("TypeDecl { id: ");
      Id(t.id);
      Raw(", span: ");
      SpanOf(t.span);
      Raw(", name: ");
      Str(t.name);
      Raw(", visibility: ");
      Raw(t.visibility == Visibility::kPublic ? "Public" : "Private");
      Raw(", generic_params: ");
      Generics(t.generic_params);
      Raw(", fields: ");
      Fields(t.fields);
      Raw(" }");
    });
    Raw(", enum_decls: ");
    List(m.enum_decls, [&](const EnumDecl& e) {
      Raw("EnumDecl { id: ");
      Id(e.id);
      Raw(", span: ");
      SpanOf(e.span);
      Raw(", name: ");
      Str(e.name);
      Raw(", generic_params: ");
      Generics(e.generic_params);
      Raw(", variants: ");
      List(e.variants, [&](const EnumVariant& v) {
        Raw("EnumVariant { name: ");
        Str(v.name);
        Raw(", fields: ");
        Types(v.fields);
        Raw(", span: ");
        SpanOf(v.span);
        Raw(" }");
      });
      Raw(" }");
    });
    Raw(", trait_decls: ");
    List(m.trait_decls, [&](const TraitDecl& t) {
      Raw("TraitDecl { id: ");
      Id(t.id);
      Raw(", span: ");
      SpanOf(t.span);
      Raw(", name: ");
      Str(t.name);
      Raw(", associated_types: ");
      List(t.associated_types, [&](const AssociatedType& a) {
        Raw("AssociatedType { name: ");
        Str(a.name);
        Raw(", bounds: ");
        Strings(a.bounds);
        Raw(", span: ");
        SpanOf(a.span);
        Raw(" }");
      });
      Raw(", methods: ");
      List(t.methods, [&](const TraitMethod& tm) {
        Raw("TraitMethod { name: ");
        Str(tm.name);
        Raw(", params: ");
        List(tm.params, [&](const Param& p) { ParamOf(p); });
        Raw(", return_type: ");
        Type(tm.return_type);
        Raw(", has_self: ");
        Bool(tm.has_self);
        Raw(", body: ");
        OptBlock(tm.body);
        Raw(", span: ");
        SpanOf(tm.span);
        Raw(" }");
      });
      Raw(" }");
    });
    Raw(", impl_blocks: ");
    List(m.impl_blocks, [&](const ImplBlock& b) {
      Raw("ImplBlock { id: ");
      Id(b.id);
      Raw(", span: ");
      SpanOf(b.span);
      Raw(", trait_name: ");
      if (b.trait_name) {
        Raw("Some(");
        Str(*b.trait_name);
        Raw(")");
      } else {
        Raw("None");
      }
      Raw(", type_name: ");
      Str(b.type_name);
      Raw(", type_bindings: ");
      List(b.type_bindings, [&](const TypeBinding& tb) {
        Raw("(");
        Str(tb.name);
        Sep();
        Type(tb.ty);
        Raw(")");
      });
      Raw(", methods: ");
      List(b.methods, [&](const Function& f) { FunctionOf(f); });
      Raw(" }");
    });
    Raw(", actor_decls: ");
    List(m.actor_decls, [&](const ActorDecl& a) {
      Raw("ActorDecl { id: ");
      Id(a.id);
      Raw(", span: ");
      SpanOf(a.span);
      Raw(", name: ");
      Str(a.name);
      Raw(", fields: ");
      Fields(a.fields);
      Raw(", handlers: ");
      List(a.handlers, [&](const Function& f) { FunctionOf(f); });
      Raw(" }");
    });
    Raw(", intent_decls: ");
    List(m.intent_decls, [&](const IntentDecl& d) {
      Raw("IntentDecl { id: ");
      Id(d.id);
      Raw(", span: ");
      SpanOf(d.span);
      Raw(", name: ");
      Str(d.name);
      Raw(", config: ");
      List(d.config, [&](const IntentConfigEntry& c) {
        Raw("IntentConfigEntry { key: ");
        Str(c.key);
        Raw(", value: ");
        IntentValue(c.value);
        Raw(", span: ");
        SpanOf(c.span);
        Raw(" }");
      });
      Raw(" }");
    });
    Raw(", invariants: ");
    List(m.invariants, [&](const InvariantDecl& inv) {
      Raw("InvariantDecl { span: ");
      SpanOf(inv.span);
      Raw(", condition: ");
      ExprOf(inv.condition);
      Raw(" }");
    });
    Raw(", functions: ");
    List(m.functions, [&](const Function& f) { FunctionOf(f); });
    Raw(", test_decls: ");
    List(m.test_decls, [&](const TestDecl& t) { TestOf(t); });
    Raw(", describe_decls: ");
    List(m.describe_decls, [&](const DescribeDecl& d) { DescribeOf(d); });
    Raw(" }");
  }

 private:
  // Counts the nodes on the path being printed. Past ast::kMaxTreeDepth, which no parsed tree
  // reaches (ast.h), a node prints as `..` instead of being entered, so that a tree built by
  // hand cannot make the printer overflow its stack.
  class Level {
   public:
    explicit Level(Printer& p) : p_(p) { ++p_.depth_; }
    ~Level() { --p_.depth_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;
    bool too_deep() const { return p_.depth_ > kMaxTreeDepth; }

   private:
    Printer& p_;
  };

  std::uint32_t Shift(std::uint32_t offset) const { return offset >= shift_ ? offset - shift_ : 0; }

  std::string out_;
  std::uint32_t shift_ = 0;
  std::uint32_t depth_ = 0;
};

}  // namespace

std::string_view BinOpName(BinOp op) {
  switch (op) {
    case BinOp::kAdd:
      return "Add";
    case BinOp::kSub:
      return "Sub";
    case BinOp::kMul:
      return "Mul";
    case BinOp::kDiv:
      return "Div";
    case BinOp::kMod:
      return "Mod";
    case BinOp::kEq:
      return "Eq";
    case BinOp::kNe:
      return "Ne";
    case BinOp::kLt:
      return "Lt";
    case BinOp::kGt:
      return "Gt";
    case BinOp::kLe:
      return "Le";
    case BinOp::kGe:
      return "Ge";
    case BinOp::kAnd:
      return "And";
    case BinOp::kOr:
      return "Or";
  }
  return "?";
}

std::string_view BinOpSymbol(BinOp op) {
  switch (op) {
    case BinOp::kAdd:
      return "+";
    case BinOp::kSub:
      return "-";
    case BinOp::kMul:
      return "*";
    case BinOp::kDiv:
      return "/";
    case BinOp::kMod:
      return "%";
    case BinOp::kEq:
      return "==";
    case BinOp::kNe:
      return "!=";
    case BinOp::kLt:
      return "<";
    case BinOp::kGt:
      return ">";
    case BinOp::kLe:
      return "<=";
    case BinOp::kGe:
      return ">=";
    case BinOp::kAnd:
      return "&&";
    case BinOp::kOr:
      return "||";
  }
  return "?";
}

std::string RustDebugString(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\u{{{:x}}}", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string RustDebugFloat(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // Shortest round-trip digits and decimal exponent, from the scientific form "d.ddde[+-]x".
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  const std::size_t e = sci.find('e');
  std::string digits;
  for (std::size_t i = 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exp10 = std::atoi(sci.c_str() + e + 1);
  const double magnitude = std::fabs(value);
  std::string out = negative ? "-" : "";
  if (magnitude >= 1e16 || magnitude < 1e-4) {
    // Rust: `1e16`, `1.5e-7` (no `+`, no padding).
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out.append(digits, 1, std::string::npos);
    }
    out += 'e';
    out += std::to_string(exp10);
    return out;
  }
  const int point = exp10 + 1;  // digits before the decimal point
  if (point <= 0) {
    out += "0.";
    out.append(static_cast<std::size_t>(-point), '0');
    out += digits;
  } else if (static_cast<std::size_t>(point) >= digits.size()) {
    out += digits;
    out.append(static_cast<std::size_t>(point) - digits.size(), '0');
    out += ".0";
  } else {
    out.append(digits, 0, static_cast<std::size_t>(point));
    out += '.';
    out.append(digits, static_cast<std::size_t>(point), std::string::npos);
  }
  return out;
}

std::string DescribeSpan(Span span) {
  return fmt::format("Span {{ start: {}, end: {} }}", span.start, span.end);
}

std::string DescribeType(const TypeExpr& type) {
  Printer p;
  p.Type(type);
  return p.Take();
}
std::string DescribeExpr(const Expr& expr) {
  Printer p;
  p.ExprOf(expr);
  return p.Take();
}
std::string DescribeStmt(const Stmt& stmt) {
  Printer p;
  p.StmtOf(stmt);
  return p.Take();
}
std::string DescribeBlock(const Block& block) {
  Printer p;
  p.BlockOf(block);
  return p.Take();
}
std::string DescribePattern(const Pattern& pattern) {
  Printer p;
  p.PatternOf(pattern);
  return p.Take();
}
std::string DescribeAnnotationArg(const AnnotationArg& arg) {
  Printer p;
  p.AnnotationArgOf(arg);
  return p.Take();
}
std::string DescribeAnnotation(const Annotation& annotation) {
  Printer p;
  p.AnnotationOf(annotation);
  return p.Take();
}
std::string DescribeFunction(const Function& function) {
  Printer p;
  p.FunctionOf(function);
  return p.Take();
}
std::string DescribeModule(const Module& module) {
  Printer p;
  p.ModuleOf(module);
  return p.Take();
}

}  // namespace trove::kodo::ast

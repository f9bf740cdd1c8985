// The collecting checker (docs/kodo.md §5). One Checker per Check() call; it registers the module's
// declarations (§5.3 steps 1-6), then checks each body, stopping a body at its first error
// (step 7), then the module invariants (step 8). Tier T0-T1 rules are implemented as the spec
// states them; later-tier constructs are typed leniently (kAny) where they are not implemented,
// see docs/decisions/0014-kodo-diagnostics-and-checker.md.
//
// A body stops at its first error: the error is thrown as a private BodyError and caught where
// upstream would continue (per function, per invariant, per signature). It never leaves this
// file, as the parser's ParseAbort (decision 0012 point 4).
#include "kodo/sema/checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kodo/diag/near_name.h"
#include "kodo/ownership/ownership.h"
#include "kodo/sema/builtins.h"
#include "kodo/sema/fix_text.h"
#include "kodo/sema/name_table.h"
#include "kodo/sema/types.h"
#include "kodo/trust/policy.h"

namespace trove::kodo::sema::internal {
namespace {

using ast::Expr;
using ast::ExprKind;
using ast::Pattern;
using ast::PatternKind;
using ast::Span;
using ast::Stmt;
using ast::StmtKind;
using ast::TypeExpr;
using ast::TypeKind;
using diag::Diagnostic;
using diag::FixPatch;
using diag::Kind;
using diag::RepairStep;

struct BodyError {
  Diagnostic diagnostic;
};

constexpr std::string_view kTodoPurpose = "TODO: describe this module";

using diag::NearName;

// docs/kodo.md §5.1: numeric types, Bool, Byte, unit, function types and every Generic (collections
// are handles) are Copy; String, structs, enums, tuples, dyn and Future are not, nor is `?`. Our
// lenient kAny is Copy, so that it never causes a false move (decision 0061).
bool IsCopy(Type t) {
  switch (t.tag()) {
    case TypeTag::kPrim:
      return t != Type::String();  // primitives are constants: one node each
    case TypeTag::kUnit:
    case TypeTag::kFunction:
    case TypeTag::kGeneric:
    case TypeTag::kAny:
      return true;
    default:
      return false;
  }
}

// `type` is the declaration's own type, kept here so that a use found by name needs no second
// lookup in the TypeTable (set by StructEntry/EnumEntry).
// Field and variant names are views of the tree's arena text or of string literals, which
// outlive the check (docs/decisions/0033-kodo-perf5.md).
struct StructInfo {
  Type type;
  std::vector<std::pair<std::string_view, Type>> fields;
};

struct EnumInfo {
  Type type;
  std::vector<std::pair<std::string_view, std::vector<Type>>> variants;
};

// A generic enum or struct declaration, instantiated on use (§5.2).
struct Template {
  std::vector<std::string> params;
  // Enum: variant name and payload types; struct: field name and its one type.
  std::vector<std::pair<std::string_view, ast::Vec<TypeExpr>>> members;
  bool is_enum = false;
};

// `name` points into the module's tree, a string literal or Checker::owned_names_, all of which
// outlive the check: binding a name copies no string (docs/decisions/0031-kodo-perf4.md).
struct Binding {
  std::string_view name;
  Type type;
};

// A builtin of the §13 table as this check types it (RegisterBuiltins). `pattern` is its
// signature with the table's variables (builtins.h) as the structs `$T`, `$K`, ...; `bound` is
// the type its name is bound to (the variables at their defaults: upstream's registered type).
// `typed_call`: its calls by name are typed by CheckBuiltinCall (see RegisterBuiltins).
struct BuiltinEntry {
  const BuiltinSignature* sig = nullptr;
  Type pattern;
  Type bound;
  bool typed_call = false;
};

// Variables of the builtin table, by slot: element variables (bound from the collection a call
// works on) first, then result variables (bound from the first argument that mentions them).
constexpr std::string_view kBuiltinVars = "TKVEUA";
constexpr std::size_t kFirstResultVar = 4;
using VarBindings = std::array<std::optional<Type>, kBuiltinVars.size()>;

struct FnContext {
  Type return_type = Type::Unit();
  int loop_depth = 0;
};

class Checker {
 public:
  Checker(const SourceBuffer& source, const ast::Module& module, const CheckOptions& options)
      : source_(source), module_(module), options_(options), own_(source.id()) {}

  CheckResult Run();

 private:
  // ---- diagnostics
  SourceRange R(Span span) const { return SourceRange{source_.id(), span.start, span.end}; }
  FixPatch Patch(std::string description, std::uint32_t start, std::uint32_t end,
                 std::string replacement) const {
    return FixPatch{std::move(description), start, end, std::move(replacement)};
  }
  [[noreturn]] void Fail(Diagnostic d) { throw BodyError{std::move(d)}; }
  // E0200 at `span`; `value` is the mismatching value when it is narrower (a `return` or
  // `let` statement's expression), used by the repair plan.
  [[noreturn]] void Mismatch(const Type& expected, const Type& found, Span span,
                             std::optional<Span> value = std::nullopt) {
    MismatchText(Display(expected), Display(found), span, value);
  }
  [[noreturn]] void MismatchText(const std::string& expected, const std::string& found, Span span,
                                 std::optional<Span> value = std::nullopt);
  [[noreturn]] void Undefined(std::string_view name, Span span);
  [[noreturn]] void Arity(std::size_t expected, std::size_t found, Span span);
  // `value`: the callee's value, which replaces the call in the patch.
  [[noreturn]] void NotCallable(const Type& type, Span span, Span value);
  // Sets `d`'s patch to add `item` (unindented lines) as the module's last item.
  void AddItem(Diagnostic& d, std::string description, std::string_view item) const;
  void Report(Diagnostic d) {
    if (!importing_) diags_.push_back(std::move(d));
  }
  // W0902 (issue 20: nothing hides behind kAny): `what` at `span` was typed leniently because
  // this checker does not type it; said once per place.
  void NotUnderstood(std::string what, Span span) {
    for (const Diagnostic& w : warnings_) {
      if (w.span && w.span->begin == span.start && w.span->end == span.end) return;
    }
    Diagnostic d = diag::Make(Kind::kW0902, R(span), what);
    d.suggestion = "this use was not type-checked; review it by hand";
    warnings_.push_back(std::move(d));
  }
  bool Stopped() const { return options_.fail_fast && !diags_.empty(); }

  // ---- phases
  bool CheckMeta();
  // Each registers the declarations of `mod`: an imported module (docs/kodo.md §4.3; its
  // errors were reported when it was checked on its own, so `importing_` drops them here) or
  // the checked one.
  void RegisterTypes(const ast::Module& mod);
  void RegisterImpls(const ast::Module& mod);
  void RegisterFunctions(const ast::Module& mod);
  void RegisterBuiltins();
  void RegisterBuiltinEnums();
  void CheckFunction(const ast::Function& fn);
  void CheckInvariant(const ast::InvariantDecl& inv);

  // ---- types
  Type Resolve(const TypeExpr& te, Span where, bool mono = true,
               const std::map<std::string, Type, std::less<>>* subst = nullptr);
  Type Instantiate(std::string_view name, const Template& tmpl, const std::vector<Type>& args);
  bool Assignable(const Type& expected, const Type& found) const;
  // Declarations by name: one table for aliases, enums, templates and structs, so that a use
  // resolving a name costs one lookup instead of up to four (docs/decisions/0031-kodo-perf4.md).
  const EnumInfo* FindEnum(std::string_view name) const {
    const TypeNames* names = type_names_.Find(name);
    return names == nullptr ? nullptr : names->enum_info;
  }
  const StructInfo* FindStruct(std::string_view name) const {
    const TypeNames* names = type_names_.Find(name);
    return names == nullptr ? nullptr : names->struct_info;
  }
  const Template* FindTemplate(std::string_view name) const {
    const TypeNames* names = type_names_.Find(name);
    return names == nullptr ? nullptr : names->tmpl;
  }
  // Returns the entry named `name`, made (with its type) if there was none.
  StructInfo& StructEntry(const std::string& name) {
    TypeNames& names = *type_names_.TryEmplace(name).first;
    if (names.struct_info == nullptr) {
      names.struct_info = &struct_infos_.emplace_back();
      names.struct_info->type = types_.Struct(name);
    }
    return *names.struct_info;
  }
  EnumInfo& EnumEntry(const std::string& name) {
    TypeNames& names = *type_names_.TryEmplace(name).first;
    if (names.enum_info == nullptr) {
      names.enum_info = &enum_infos_.emplace_back();
      names.enum_info->type = types_.Enum(name);
    }
    return *names.enum_info;
  }
  // Sets (or replaces) the template named `name`.
  void SetTemplate(const std::string& name, Template tmpl) {
    TypeNames& names = *type_names_.TryEmplace(name).first;
    if (names.tmpl == nullptr) {
      names.tmpl = &templates_.emplace_back(std::move(tmpl));
    } else {
      *names.tmpl = std::move(tmpl);
    }
  }
  void SetAlias(const std::string& name, Type type) {
    type_names_.TryEmplace(name).first->alias = type;
  }
  // The same by type, remembered by type id: a name lookup in tables of tens of thousands of
  // declarations is a cache miss or two per use. Only hits are remembered (entries are never
  // removed, and infos live in deques, so their addresses are stable).
  const EnumInfo* FindEnum(Type t) {
    return FindById(t, enum_by_id_, [this](std::string_view name) { return FindEnum(name); });
  }
  const StructInfo* FindStruct(Type t) {
    return FindById(t, struct_by_id_, [this](std::string_view name) { return FindStruct(name); });
  }
  template <typename Info, typename ByName>
  static const Info* FindById(Type t, std::vector<const Info*>& by_id, ByName by_name) {
    const std::uint32_t id = t.id();
    if (id < by_id.size() && by_id[id] != nullptr) return by_id[id];
    const Info* info = by_name(t.name());
    if (info == nullptr || id == 0) return info;
    if (by_id.size() <= id) by_id.resize(id + 1, nullptr);
    by_id[id] = info;
    return info;
  }

  // ---- environment
  void Bind(std::string_view name, Type type) { env_.push_back(Binding{name, type}); }
  // Keeps a made name (`Type_method`) for as long as the checker, for Bind.
  std::string_view Own(std::string name) { return owned_names_.emplace_back(std::move(name)); }
  // Locals are scanned innermost first; the module-level bindings below them are found through
  // an index built once registration is over (a scan of every function's binding per name use
  // made checking quadratic in the number of functions).
  // Returns the type bound to `name`, or nullptr.
  const Type* Lookup(std::string_view name) const {
    if (const Type* local = LookupLocal(name)) return local;
    const Global* global = FindGlobal(name);
    return global == nullptr ? nullptr : &global->type;
  }
  // The innermost local named `name` (before FreezeGlobals: any binding), or nullptr.
  const Type* LookupLocal(std::string_view name) const {
    for (std::size_t i = env_.size(); i > globals_end_; --i) {
      if (env_[i - 1].name == name) return &env_[i - 1].type;
    }
    return nullptr;
  }
  // The module-level binding of `name` once frozen, or nullptr.
  struct Global {
    Type type;
    // builtins_ index + 1 when the name is a builtin that no module-level name shadows, else 0.
    std::uint32_t builtin = 0;
  };
  const Global* FindGlobal(std::string_view name) const {
    return globals_end_ == 0 ? nullptr : globals_.Find(name);
  }
  // Returns the type bound to `name`, and in `*builtin` the builtin whose calls are typed by
  // CheckBuiltinCall when the name is one and no local or module name shadows it.
  const Type* LookupCallee(std::string_view name, const BuiltinEntry** builtin) const {
    *builtin = nullptr;
    if (const Type* local = LookupLocal(name)) return local;
    const Global* global = FindGlobal(name);
    if (global == nullptr) return nullptr;
    if (global->builtin != 0 && builtins_[global->builtin - 1].typed_call) {
      *builtin = &builtins_[global->builtin - 1];
    }
    return &global->type;
  }
  // Freezes the bindings made so far as the module level. REQUIRES: called once, after the
  // last module-level Bind and before any scope is opened.
  void FreezeGlobals() {
    globals_end_ = env_.size();
    globals_.Reserve(globals_end_);
    // Later bindings of a name shadow earlier ones, as in the scan: a module function or method
    // named like a builtin makes its calls ordinary ones. The builtins are env_[0, builtins_end_)
    // in builtins_ order.
    for (std::size_t i = 0; i < globals_end_; ++i) {
      Global& global = *globals_.TryEmplace(env_[i].name).first;
      global.type = env_[i].type;
      global.builtin = i < builtins_end_ ? static_cast<std::uint32_t>(i + 1) : 0;
    }
  }
  std::vector<std::string_view> BoundNames() const {
    std::vector<std::string_view> names;
    names.reserve(env_.size());
    for (const Binding& b : env_) names.push_back(b.name);
    return names;
  }

  // ---- bodies
  Type CheckBlock(const ast::Block& block);
  Type CheckStmts(const ast::Block& block);
  void CheckStmt(const Stmt& stmt, Type* last);
  Type Infer(const Expr& e);
  Type InferBinary(const Expr& e);
  Type InferCall(const Expr& e);
  // A call of trait method `m` on a `dyn Trait` receiver of type `recv` (§5.8).
  Type InferDynCall(const Expr& e, const ast::TraitDecl& trait, const ast::TraitMethod& m,
                    const Type& recv);
  // `mod.f(args)` / `mod::f(args)` (§4.3): the call of function `name` of the imported module
  // declared `mod`, typed against that module's own `name` (decision 0085), else against the
  // name in the one namespace; its arguments call.operands[first_arg...]; `where` is the
  // name's span for E0201.
  Type InferQualifiedCall(const Expr& call, std::string_view mod, std::string_view name, Span where,
                          std::size_t first_arg);
  // E0270 (§4.3): `name`, private in the imported module `owner`, called at `span`.
  [[noreturn]] void PrivateAccess(std::string_view name, const std::string& owner, Span span);
  Type InferMethodCall(const Expr& e, const Expr& object, std::string_view method);
  // Checks the arguments call.operands[first_arg...] against `params`; returns `result`.
  // `direct`: a direct call (§7.3: its bare-identifier arguments move or borrow by the callee's
  // qualifiers, `callee` when it is a module function, else all `own`); method calls do not.
  Type CheckCallArgs(std::span<const Type> params, Type result, const Expr& call,
                     std::size_t first_arg, bool direct = false,
                     const ast::Function* callee = nullptr);
  // Ownership (ownership.h): the effect of argument `arg` of type `t` passed to a parameter with
  // `qualifier` of a direct call; throws the error.
  void OwnArgument(const Expr& arg, Type t, ast::Ownership qualifier) {
    if (!options_.ownership || arg.kind != ExprKind::kIdent) return;
    if (auto d = own_.Argument(arg.text, qualifier, IsCopy(t), arg.span)) Fail(std::move(*d));
  }
  void OwnFail(std::optional<Diagnostic> d) {
    if (d) Fail(std::move(*d));
  }
  // Builtins (§13): the table's types, and calls whose types depend on the collection.
  Type ParseBuiltinType(std::string_view& text);
  // Returns the variable slot of `t` (a `$X` struct of a pattern), or npos.
  static std::size_t VarSlot(const Type& t);
  Type Substitute(const Type& pattern, const VarBindings& vars, bool in_param);
  // Binds the variables of `pattern` found at the same place in `actual` (`element`: the element
  // variables, from a collection; else the result variables), first binding wins.
  void Unify(const Type& pattern, const Type& actual, VarBindings& vars, bool element);
  // Checks the call `call` of builtin `b` whose arguments are call.operands[first_arg...];
  // `receiver` is the receiver's type for a method call (the builtin's first parameter).
  Type CheckBuiltinCall(const BuiltinEntry& b, const Expr& call, std::size_t first_arg,
                        std::optional<Type> receiver);
  Type InferFieldAccess(const Expr& e);
  Type InferStructLit(const Expr& e);
  Type InferVariant(const Expr& e, std::string_view enum_name, std::string_view variant,
                    std::size_t first_arg);
  Type InferMatch(const Expr& e);
  // A call of the generic function `fn`, its arguments e.operands[first_arg...].
  Type InferGenericCall(const Expr& e, const ast::Function& fn, std::size_t first_arg = 1);
  Type InferIf(const Expr& e);
  void BindPattern(const Pattern& p, const Type& type, std::vector<std::string_view>* covered,
                   bool top_level_binding_ok);
  void ExpectType(const Type& expected, const Expr& e);

  const SourceBuffer& source_;
  const ast::Module& module_;
  const CheckOptions options_;
  std::vector<Diagnostic> diags_;
  std::vector<Diagnostic> warnings_;  // W0902, see NotUnderstood

  // Looked up by name per use, never iterated. The infos live in deques (stable addresses),
  // pointed to from the one table of declaration names.
  struct TypeNames {
    std::optional<Type> alias;
    StructInfo* struct_info = nullptr;
    EnumInfo* enum_info = nullptr;
    Template* tmpl = nullptr;
  };
  NameTable<TypeNames> type_names_;
  std::deque<StructInfo> struct_infos_;
  std::deque<EnumInfo> enum_infos_;
  std::deque<Template> templates_;
  std::vector<const EnumInfo*> enum_by_id_;      // by Type::id(), see FindEnum(Type)
  std::vector<const StructInfo*> struct_by_id_;  // by Type::id(), see FindStruct(Type)
  std::set<std::string> traits_;
  std::map<std::string, std::vector<const ast::TraitMethod*>> trait_methods_;
  std::map<std::string, const ast::TraitDecl*, std::less<>> trait_decls_;
  // Imports (docs/kodo.md §4.3): while set, Report drops diagnostics (see RegisterTypes). The
  // declared names of the imported modules, for `mod.f(x)` / `mod::f(x)`, and the private
  // functions they declare, by name, with the first declaring module (E0270).
  bool importing_ = false;
  // The associated types of the impl block whose signatures or bodies are being resolved
  // (`type Item = Int` makes `Item` resolve to Int there), or null; per block of the checked
  // module, by address.
  const std::map<std::string, Type, std::less<>>* assoc_ = nullptr;
  std::map<const ast::ImplBlock*, std::map<std::string, Type, std::less<>>> impl_assoc_;
  std::set<std::string, std::less<>> imported_modules_;
  // The free functions of each imported module, by its declared name, then by function name:
  // their signatures, resolved when registered, for `mod::f(x)` / `mod.f(x)` (decision 0085).
  // A later module of the same declared name replaces an earlier one, as the MIR lowering
  // resolves such a call (mir::LowerProgram: the latest-loaded module of that name). Empty
  // without imports.
  struct ModuleFn {
    Type type;  // Any for a generic function (decl holds its template)
    const ast::Function* decl = nullptr;
  };
  std::map<std::string, std::map<std::string_view, ModuleFn, std::less<>>, std::less<>> module_fns_;
  NameTable<std::string> private_fns_;
  std::map<std::string, const ast::Function*, std::less<>> generic_fns_;
  std::set<std::pair<std::string, std::string>> trait_impls_;  // (trait, type name)
  // Functions whose signature failed to resolve: the error is reported once, at registration,
  // and their bodies are not checked.
  std::set<const ast::Function*> bad_signatures_;
  std::vector<BuiltinEntry> builtins_;  // in Builtins() order
  std::size_t builtins_end_ = 0;        // env_[0, builtins_end_) are the builtins
  std::vector<Binding> env_;
  std::deque<std::string> owned_names_;  // made binding names (see Own); a deque: they never move
  // env_[0, globals_end_) are the module-level bindings, whose types are also indexed by name
  // in globals_ (frozen: not changed after FreezeGlobals, so pointers into it stay valid).
  std::size_t globals_end_ = 0;
  NameTable<Global> globals_;
  FnContext fn_;
  // §7.3: the ownership state of the body being checked, and the module functions by name (their
  // parameter qualifiers apply to direct calls by that name).
  ownership::Tracker own_;
  NameTable<const ast::Function*> fn_decls_;
  int instantiation_depth_ = 0;
  // The nodes on the path being checked (Infer, CheckBlock, CheckStmt, BindPattern, Resolve).
  // Past ast::kMaxTreeDepth, which no parsed tree reaches (the parser bounds nesting, ast.h), a
  // node is not entered (an expression is typed Any), so that a tree built by hand cannot make
  // the recursion overflow the stack.
  std::uint32_t tree_depth_ = 0;
  struct Level {
    explicit Level(Checker& c) : checker(c) { ++checker.tree_depth_; }
    ~Level() { --checker.tree_depth_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;
    bool too_deep() const { return checker.tree_depth_ > ast::kMaxTreeDepth; }
    Checker& checker;
  };
  // Owns the non-constant types that the members above hold.
  TypeTable types_;
};

constexpr int kMaxInstantiationDepth = 32;
constexpr std::size_t kMaxInstanceNameBytes = 1024;

// =============================================================================================
// Diagnostics with their suggestions and patches (§6.1).

// Upstream also attaches a patch replacing the span with the expected type's name (`true` ->
// `Int`), which never removes the error; it is left out (decision 0014), so E0200 is `assisted`.
// The repair plan wraps the value in `Result::Ok(...)` when a Result is expected; upstream
// wraps the found type's name instead, which cannot compile either.
void Checker::MismatchText(const std::string& expected, const std::string& found, Span span,
                           std::optional<Span> value) {
  Diagnostic d = diag::Make(Kind::kE0200, R(span), expected, found);
  d.suggestion = fmt::format("ensure the expression produces a value of type `{}`", expected);
  if (value && expected.find("Result") != std::string::npos &&
      found.find("Result") == std::string::npos) {
    const std::string text(source_.text().substr(value->start, value->end - value->start));
    d.repair_plan.push_back(RepairStep{"wrap the value in `Result::Ok`",
                                       {Patch("wrap in Result::Ok", value->start, value->end,
                                              fmt::format("Result::Ok({})", text))}});
    d.repair_plan.push_back(RepairStep{"re-check the module", {}});
  }
  Fail(std::move(d));
}

void Checker::Undefined(std::string_view name, Span span) {
  Diagnostic d = diag::Make(Kind::kE0201, R(span), name);
  // The declaration goes before the statement, taken to start its line (upstream inserts it
  // at the name, inside the expression; decision 0047).
  const std::string_view text = source_.text();
  const std::uint32_t line = fixtext::LineContentStart(text, span.start);
  const FixPatch declare =
      Patch(fmt::format("declare `{}`", name), line, line,
            fmt::format("let {}: TODO = TODO\n{}", name, fixtext::LineIndent(text, line)));
  if (std::optional<std::string> near = NearName(name, BoundNames())) {
    d.suggestion =
        fmt::format("did you mean `{}`? (check for typos or declare `{}` before use)", *near, name);
    // An assignment's span is the statement: only its target is renamed.
    d.fix_patch = Patch(fmt::format("rename to `{}`", *near), span.start,
                        span.start + static_cast<std::uint32_t>(name.size()), *near);
  } else {
    d.suggestion = fmt::format("check for typos or declare `{}` before use", name);
    d.fix_patch = declare;
  }
  d.repair_plan.push_back(RepairStep{fmt::format("declare `{}` before its use", name), {declare}});
  Fail(std::move(d));
}

void Checker::Arity(std::size_t expected, std::size_t found, Span span) {
  Diagnostic d = diag::Make(Kind::kE0202, R(span), expected, found);
  d.suggestion =
      fmt::format("the function expects {} argument(s), but {} were provided", expected, found);
  std::string args;
  for (std::size_t i = 0; i < expected; ++i) args += i == 0 ? "TODO" : ", TODO";
  // The argument list only (upstream replaces the whole call; decision 0047). An empty match
  // has no argument list: no patch.
  if (std::optional<std::uint32_t> open =
          fixtext::OpenParenOfTrailingArgs(source_.text(), span.start, span.end)) {
    d.fix_patch = Patch(fmt::format("use {} argument(s)", expected), *open, span.end,
                        fmt::format("({})", args));
  }
  Fail(std::move(d));
}

void Checker::AddItem(Diagnostic& d, std::string description, std::string_view item) const {
  if (std::optional<fixtext::Insertion> at =
          fixtext::LastModuleItem(source_.text(), module_.span.start, module_.span.end, item)) {
    d.fix_patch = Patch(std::move(description), at->offset, at->offset, std::move(at->text));
  }
}

void Checker::NotCallable(const Type& type, Span span, Span value) {
  const std::string shown = Display(type);
  Diagnostic d = diag::Make(Kind::kE0203, R(span), shown);
  d.suggestion = fmt::format("type `{}` is not a function and cannot be called", shown);
  // The call becomes the value it called (upstream deletes it, leaving e.g. `let x =`).
  d.fix_patch = Patch("remove the call", span.start, span.end,
                      std::string(source_.text().substr(value.start, value.end - value.start)));
  Fail(std::move(d));
}

// =============================================================================================
// Phases.

CheckResult Checker::Run() {
  if (!CheckMeta()) return CheckResult{std::move(diags_), std::move(warnings_)};
  if (Stopped()) return CheckResult{std::move(diags_), std::move(warnings_)};
  // One type per declaration and function signature, plus a few hundred for builtins and
  // uses: reserved up front so that the index does not rehash as a large module registers.
  types_.Reserve(256 + module_.functions.size() + module_.type_decls.size() +
                 module_.enum_decls.size() + module_.actor_decls.size());
  fn_decls_.Reserve(module_.functions.size());
  type_names_.Reserve(16 + module_.type_aliases.size() + module_.type_decls.size() +
                      module_.enum_decls.size() + module_.actor_decls.size());
  RegisterBuiltins();
  // Imported modules first (docs/kodo.md §4.3): one namespace, the importer's names last, so
  // that they shadow the imported ones.
  importing_ = true;
  for (const ast::Module* imported : options_.imports) RegisterTypes(*imported);
  importing_ = false;
  RegisterTypes(module_);
  RegisterBuiltinEnums();
  if (Stopped()) return CheckResult{std::move(diags_), std::move(warnings_)};
  importing_ = true;
  for (const ast::Module* imported : options_.imports) RegisterImpls(*imported);
  importing_ = false;
  RegisterImpls(module_);
  if (Stopped()) return CheckResult{std::move(diags_), std::move(warnings_)};
  importing_ = true;
  for (const ast::Module* imported : options_.imports) {
    RegisterFunctions(*imported);
    imported_modules_.insert(imported->name);
    for (const ast::Function& fn : imported->functions) {
      if (fn.visibility == ast::Visibility::kPublic) continue;
      if (auto [entry, fresh] = private_fns_.TryEmplace(fn.name); fresh) *entry = imported->name;
    }
  }
  importing_ = false;
  RegisterFunctions(module_);
  if (Stopped()) return CheckResult{std::move(diags_), std::move(warnings_)};
  FreezeGlobals();
  for (const ast::Function& fn : module_.functions) {
    if (!fn.generic_params.empty()) continue;  // templates are never checked (§5.6)
    CheckFunction(fn);
    if (Stopped()) return CheckResult{std::move(diags_), std::move(warnings_)};
  }
  for (const ast::ImplBlock& impl : module_.impl_blocks) {
    auto bound = impl_assoc_.find(&impl);
    assoc_ = bound == impl_assoc_.end() ? nullptr : &bound->second;
    for (const ast::Function& fn : impl.methods) {
      CheckFunction(fn);
      if (Stopped()) return CheckResult{std::move(diags_), std::move(warnings_)};
    }
    assoc_ = nullptr;
  }
  for (const ast::ActorDecl& actor : module_.actor_decls) {
    for (const ast::Function& fn : actor.handlers) {
      CheckFunction(fn);
      if (Stopped()) return CheckResult{std::move(diags_), std::move(warnings_)};
    }
  }
  for (const ast::InvariantDecl& inv : module_.invariants) {
    CheckInvariant(inv);
    if (Stopped()) return CheckResult{std::move(diags_), std::move(warnings_)};
  }
  // The last step (§5.3): the trust policies, after every body (kodo/trust/policy.h).
  for (Diagnostic& d : trust::CheckPolicies(source_, module_, options_.trust_config)) {
    Report(std::move(d));
  }
  return CheckResult{std::move(diags_), std::move(warnings_)};
}

bool Checker::CheckMeta() {
  if (!module_.meta) {
    Diagnostic d = diag::Make(Kind::kE0210, std::nullopt);
    d.suggestion = "add a `meta {{ purpose: \"...\" }}` block to your module";
    // After the imports, or else after the module's `{` (meta follows imports, §4.2); upstream
    // inserts at offset 0, before `module`, where it cannot parse (decision 0047).
    const std::string_view text = source_.text();
    std::optional<std::uint32_t> at = module_.imports.empty()
                                          ? fixtext::AfterOpenBrace(text, module_.span.start)
                                          : std::optional(module_.imports.back().span.end);
    if (at) {
      d.fix_patch = Patch("add a meta block", *at, *at,
                          fmt::format("\n{}    meta {{ purpose: \"{}\" }}",
                                      fixtext::LineIndent(text, module_.span.start), kTodoPurpose));
    }
    Report(std::move(d));
    return false;
  }
  const ast::Meta& meta = *module_.meta;
  const ast::MetaEntry* purpose = nullptr;
  for (const ast::MetaEntry& entry : meta.entries) {
    if (entry.key == "purpose") {
      purpose = &entry;
      break;
    }
  }
  if (purpose == nullptr) {
    Diagnostic d = diag::Make(Kind::kE0212, R(meta.span));
    d.suggestion = "add `purpose: \"description\"` to the meta block";
    // Inside the block, after its `{` (upstream inserts after the `}`; decision 0047).
    if (std::optional<std::uint32_t> at =
            fixtext::AfterOpenBrace(source_.text(), meta.span.start)) {
      d.fix_patch =
          Patch("add a purpose field", *at, *at, fmt::format(" purpose: \"{}\",", kTodoPurpose));
    }
    Report(std::move(d));
  } else if (purpose->value.find_first_not_of(" \t\r\n") == std::string::npos) {
    Diagnostic d = diag::Make(Kind::kE0211, R(purpose->span));
    d.suggestion = "provide a non-empty purpose string";
    // The string literal only: the entry's span starts at the `meta` keyword (§4.3), which
    // upstream's replacement swallows (decision 0047).
    const std::string_view text = source_.text();
    const std::uint32_t end = purpose->span.end;
    const std::size_t open =
        end >= 2 && text[end - 1] == '"' ? text.rfind('"', end - 2) : std::string_view::npos;
    if (open != std::string_view::npos && open >= purpose->span.start) {
      d.fix_patch = Patch("fill in the purpose", static_cast<std::uint32_t>(open), end,
                          fmt::format("\"{}\"", kTodoPurpose));
    }
    Report(std::move(d));
  }
  return true;
}

// The §13 table (builtins.h), bound first so that module functions shadow it. A builtin with
// variables is bound to its Int-element instance, upstream's registered type; its calls are
// typed element-aware (CheckBuiltinCall).
void Checker::RegisterBuiltins() {
  const std::span<const BuiltinSignature> table = Builtins();
  builtins_.reserve(table.size());
  VarBindings defaults;
  for (std::size_t i = 0; i < kBuiltinVars.size(); ++i) {
    defaults[i] = kBuiltinVars[i] == 'E' ? Type::String() : Type::Int();
  }
  std::vector<Type> params;
  for (const BuiltinSignature& sig : table) {
    params.clear();
    std::string_view text = sig.params;
    while (!text.empty()) {
      params.push_back(ParseBuiltinType(text));
      while (!text.empty() && (text.front() == ',' || text.front() == ' ')) text.remove_prefix(1);
    }
    std::string_view result_text = sig.result;
    const Type pattern = types_.Function(params, ParseBuiltinType(result_text));
    BuiltinEntry entry{&sig, pattern, pattern, false};
    entry.bound = Substitute(pattern, defaults, false);
    // Calls by name go through CheckBuiltinCall when the types depend on the arguments, or when
    // the first parameter is a bare `Option`/`Result` (any instance is accepted there).
    entry.typed_call =
        !(entry.bound == pattern) ||
        (!params.empty() && params[0].tag() == TypeTag::kEnum && !sig.receiver.empty());
    // Table names are string literals: no owned copy.
    Bind(sig.name, entry.bound);
    builtins_.push_back(entry);
  }
  builtins_end_ = env_.size();
}

// The monomorphised enums that builtins return by name (file_read's `Result__String_String`,
// file_write's `Result__Unit_String`, regex_find's `Option__String`), registered so that
// matches on their results see the variants. `Unit` is upstream's spelling of `()` there.
void Checker::RegisterBuiltinEnums() {
  if (const Template* result = FindTemplate("Result")) {
    Instantiate("Result", *result, {Type::String(), Type::String()});
  }
  if (const Template* option = FindTemplate("Option")) {
    Instantiate("Option", *option, {Type::String()});
  }
  EnumInfo& unit_result = EnumEntry("Result__Unit_String");
  if (unit_result.variants.empty()) {
    unit_result.variants.push_back({"Ok", {Type::Unit()}});
    unit_result.variants.push_back({"Err", {Type::String()}});
  }
}

// Parses one type of the table's notation (builtins.h) at the front of `text`, consuming it.
// The table is ours and well formed; anything else parses as Unknown.
Type Checker::ParseBuiltinType(std::string_view& text) {
  const auto skip = [&text] {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  };
  skip();
  if (text.empty()) return Type::Unknown();
  if (text.front() == '?') {
    text.remove_prefix(1);
    return Type::Unknown();
  }
  if (text.front() == '(') {
    text.remove_prefix(1);
    std::vector<Type> elems;
    skip();
    while (!text.empty() && text.front() != ')') {
      elems.push_back(ParseBuiltinType(text));
      skip();
      if (!text.empty() && text.front() == ',') text.remove_prefix(1);
      skip();
    }
    if (!text.empty()) text.remove_prefix(1);  // ')'
    skip();
    if (text.substr(0, 2) == "->") {
      text.remove_prefix(2);
      const Type result = ParseBuiltinType(text);
      return types_.Function(elems, result);
    }
    return elems.empty() ? Type::Unit() : types_.Tuple(elems);
  }
  std::size_t n = 0;
  while (n < text.size() && (std::isalnum(static_cast<unsigned char>(text[n])) || text[n] == '_')) {
    ++n;
  }
  const std::string_view name = text.substr(0, n);
  text.remove_prefix(n);
  if (!text.empty() && text.front() == '<') {
    text.remove_prefix(1);
    std::vector<Type> args;
    skip();
    while (!text.empty() && text.front() != '>') {
      args.push_back(ParseBuiltinType(text));
      skip();
      if (!text.empty() && text.front() == ',') text.remove_prefix(1);
      skip();
    }
    if (!text.empty()) text.remove_prefix(1);  // '>'
    return types_.Generic(name, args);
  }
  if (name.size() == 1 && kBuiltinVars.find(name[0]) != std::string_view::npos) {
    return types_.Struct(std::string("$").append(name));
  }
  if (std::optional<Type> prim = PrimitiveType(name)) return *prim;
  return types_.Enum(name);  // Option, Result, Result__String_String, ...
}

std::size_t Checker::VarSlot(const Type& t) {
  if (t.tag() != TypeTag::kStruct || t.name().size() != 2 || t.name()[0] != '$') {
    return std::string_view::npos;
  }
  return kBuiltinVars.find(t.name()[1]);
}

// Replaces the variables of `pattern`. An unbound variable is Int (String for E), upstream's
// instance. In a parameter (`in_param`), an element type that is unknown (`?`, as in `None` or
// `Channel<?>`) accepts anything, as Channel<?> does upstream (§7.5); in a result it stays `?`.
Type Checker::Substitute(const Type& pattern, const VarBindings& vars, bool in_param) {
  if (const std::size_t slot = VarSlot(pattern); slot != std::string_view::npos) {
    if (!vars[slot]) return kBuiltinVars[slot] == 'E' ? Type::String() : Type::Int();
    if (in_param && vars[slot]->tag() == TypeTag::kUnknown) return Type::Any();
    return *vars[slot];
  }
  switch (pattern.tag()) {
    case TypeTag::kGeneric:
    case TypeTag::kTuple:
    case TypeTag::kFunction: {
      std::array<Type, 8> inline_args;
      std::vector<Type> many;
      std::span<Type> args(inline_args.data(), pattern.args().size());
      if (pattern.args().size() > inline_args.size()) {
        many.resize(pattern.args().size());
        args = many;
      }
      bool changed = false;
      for (std::size_t i = 0; i < args.size(); ++i) {
        args[i] = Substitute(pattern.args()[i], vars, in_param);
        changed = changed || !(args[i] == pattern.args()[i]);
      }
      if (pattern.tag() == TypeTag::kFunction) {
        const Type result = Substitute(pattern.result(), vars, in_param);
        if (!changed && result == pattern.result()) return pattern;
        return types_.Function(args, result);
      }
      if (!changed) return pattern;
      return pattern.tag() == TypeTag::kTuple ? types_.Tuple(args)
                                              : types_.Generic(pattern.name(), args);
    }
    default:
      return pattern;
  }
}

void Checker::Unify(const Type& pattern, const Type& actual, VarBindings& vars, bool element) {
  if (const std::size_t slot = VarSlot(pattern); slot != std::string_view::npos) {
    if ((slot < kFirstResultVar) == element && !vars[slot]) vars[slot] = actual;
    return;
  }
  if (actual.tag() == TypeTag::kAny) {
    // A value of a construct typed leniently: every variable under it accepts anything.
    for (const Type& arg : pattern.args()) Unify(arg, actual, vars, element);
    if (pattern.tag() == TypeTag::kFunction) Unify(pattern.result(), actual, vars, element);
    return;
  }
  switch (pattern.tag()) {
    case TypeTag::kEnum: {
      // `Option`/`Result` (a method's receiver): T is the Some/Ok payload, E the Err payload.
      if (!element || actual.tag() != TypeTag::kEnum || BaseName(actual.name()) != pattern.name()) {
        return;
      }
      const EnumInfo* info = FindEnum(actual);
      if (info == nullptr) return;
      for (const auto& [variant, payload] : info->variants) {
        if (payload.empty()) continue;
        const std::size_t slot = variant == "Err" ? kBuiltinVars.find('E') : kBuiltinVars.find('T');
        if (!vars[slot]) vars[slot] = payload[0];
      }
      return;
    }
    case TypeTag::kGeneric:
    case TypeTag::kTuple:
      if (actual.tag() != pattern.tag() || actual.name() != pattern.name() ||
          actual.args().size() != pattern.args().size()) {
        return;
      }
      for (std::size_t i = 0; i < pattern.args().size(); ++i) {
        Unify(pattern.args()[i], actual.args()[i], vars, element);
      }
      return;
    case TypeTag::kFunction:
      if (actual.tag() != TypeTag::kFunction || actual.args().size() != pattern.args().size()) {
        return;
      }
      for (std::size_t i = 0; i < pattern.args().size(); ++i) {
        Unify(pattern.args()[i], actual.args()[i], vars, element);
      }
      Unify(pattern.result(), actual.result(), vars, element);
      return;
    default:
      return;
  }
}

// Element-aware typing of a builtin call (§7.5 step 8, §13): the element variables are bound
// from the collection (the receiver, else the first argument), the result variables from the
// first argument that mentions them, and every argument must equal its parameter with the
// variables replaced. With a List<Int> (Map<Int, Int>, Set<Int>) the types are upstream's.
Type Checker::CheckBuiltinCall(const BuiltinEntry& b, const Expr& call, std::size_t first_arg,
                               std::optional<Type> receiver) {
  const std::span<const Type> params = b.pattern.args();
  VarBindings vars;
  std::size_t first_param = 0;
  if (receiver) {
    if (!params.empty()) Unify(params[0], *receiver, vars, true);
    first_param = 1;
  }
  const std::size_t given = call.operands.size() - first_arg;
  const std::size_t expected = params.size() - first_param;
  if (expected != given) Arity(expected, given, call.span);
  const ownership::Tracker::CallFrame frame = own_.BeginCall();
  for (std::size_t i = 0; i < given; ++i) {
    const Expr& arg = call.operands[first_arg + i];
    const Type& param = params[first_param + i];
    const Type t = Infer(arg);
    // §7.3: a builtin called by name takes every argument as `own` (a method call moves nothing).
    const bool moves = !receiver;
    if (first_param + i == 0) {
      Unify(param, t, vars, true);
      // Option_unwrap(o) called by name: any instance of the enum is its receiver.
      if (param.tag() == TypeTag::kEnum && t.tag() == TypeTag::kEnum &&
          BaseName(t.name()) == param.name()) {
        if (moves) OwnArgument(arg, t, ast::Ownership::kOwned);
        continue;
      }
    }
    Unify(param, t, vars, false);
    const Type want = Substitute(param, vars, true);
    if (!TypesEqual(want, t)) Mismatch(Substitute(param, vars, false), t, ast::ExprSpan(arg));
    if (moves) OwnArgument(arg, t, ast::Ownership::kOwned);
  }
  own_.EndCall(frame);
  return Substitute(b.pattern.result(), vars, false);
}

void Checker::RegisterTypes(const ast::Module& mod) {
  // The Option/Result prelude (§4.4): generic enums, before the first module's declarations.
  if (FindTemplate("Option") == nullptr)
    SetTemplate(
        "Option",
        Template{{"T"}, {{"Some", {TypeExpr::Named("T")}}, {"None", {}}}, /*is_enum=*/true});
  if (FindTemplate("Result") == nullptr)
    SetTemplate(
        "Result",
        Template{
            {"T", "E"}, {{"Ok", {TypeExpr::Named("T")}}, {"Err", {TypeExpr::Named("E")}}}, true});
  // Names first, so that declarations may refer to each other in any order. The entries are
  // kept per declaration for the second pass (an entry's info never changes address), which
  // saves a second lookup of every name.
  std::vector<EnumInfo*> enum_of_decl(mod.enum_decls.size(), nullptr);
  std::vector<StructInfo*> struct_of_decl(mod.type_decls.size(), nullptr);
  std::vector<StructInfo*> struct_of_actor(mod.actor_decls.size(), nullptr);
  for (std::size_t i = 0; i < mod.enum_decls.size(); ++i) {
    const ast::EnumDecl& e = mod.enum_decls[i];
    if (!e.generic_params.empty()) {
      Template t;
      t.is_enum = true;
      for (const ast::GenericParam& p : e.generic_params) t.params.push_back(p.name);
      for (const ast::EnumVariant& v : e.variants) t.members.push_back({v.name, v.fields});
      SetTemplate(e.name, std::move(t));
    } else {
      enum_of_decl[i] = &EnumEntry(e.name);
    }
  }
  for (std::size_t i = 0; i < mod.type_decls.size(); ++i) {
    const ast::TypeDecl& s = mod.type_decls[i];
    if (!s.generic_params.empty()) {
      Template t;
      for (const ast::GenericParam& p : s.generic_params) t.params.push_back(p.name);
      for (const ast::FieldDef& fd : s.fields) t.members.push_back({fd.name, {fd.ty}});
      SetTemplate(s.name, std::move(t));
    } else {
      struct_of_decl[i] = &StructEntry(s.name);
    }
  }
  for (std::size_t i = 0; i < mod.actor_decls.size(); ++i) {
    struct_of_actor[i] = &StructEntry(mod.actor_decls[i].name);
  }
  for (const ast::TypeAlias& alias : mod.type_aliases) {
    try {
      SetAlias(alias.name, Resolve(alias.base_type, alias.span));
    } catch (BodyError& error) {
      SetAlias(alias.name, Type::Any());
      Report(std::move(error.diagnostic));
    }
  }
  // Field and payload types of non-generic declarations: no monomorphisation (§5.2 [I]).
  for (std::size_t i = 0; i < mod.enum_decls.size(); ++i) {
    const ast::EnumDecl& e = mod.enum_decls[i];
    if (!e.generic_params.empty()) continue;
    EnumInfo& info = *enum_of_decl[i];
    info.variants.reserve(info.variants.size() + e.variants.size());
    for (const ast::EnumVariant& v : e.variants) {
      std::vector<Type> payload;
      for (const TypeExpr& t : v.fields) payload.push_back(Resolve(t, v.span, false));
      info.variants.push_back({v.name, std::move(payload)});
    }
  }
  for (std::size_t i = 0; i < mod.type_decls.size(); ++i) {
    const ast::TypeDecl& s = mod.type_decls[i];
    if (!s.generic_params.empty()) continue;
    StructInfo& info = *struct_of_decl[i];
    info.fields.reserve(info.fields.size() + s.fields.size());
    for (const ast::FieldDef& fd : s.fields) {
      info.fields.push_back({fd.name, Resolve(fd.ty, fd.span, false)});
    }
  }
  for (std::size_t i = 0; i < mod.actor_decls.size(); ++i) {
    const ast::ActorDecl& a = mod.actor_decls[i];
    StructInfo& info = *struct_of_actor[i];
    for (const ast::FieldDef& fd : a.fields) {
      info.fields.push_back({fd.name, Resolve(fd.ty, fd.span, false)});
    }
  }
  for (const ast::TraitDecl& t : mod.trait_decls) {
    traits_.insert(t.name);
    trait_decls_[t.name] = &t;
    for (const ast::TraitMethod& m : t.methods) trait_methods_[t.name].push_back(&m);
  }
}

void Checker::RegisterImpls(const ast::Module& mod) {
  const auto signature = [this](const ast::Function& fn) {
    std::vector<Type> params;
    for (const ast::Param& p : fn.params) params.push_back(Resolve(p.ty, p.span));
    return types_.Function(std::move(params), Resolve(fn.return_type, fn.span));
  };
  for (const ast::ImplBlock& impl : mod.impl_blocks) {
    const Span span = impl.span;
    // §5.3 step 4: trait conformance. Any error skips registering the block's methods (their
    // bodies are still checked; calls to them become E0235).
    const ast::TraitDecl* trait = nullptr;
    if (impl.trait_name) {
      if (auto it = trait_decls_.find(*impl.trait_name); it != trait_decls_.end()) {
        trait = it->second;
      }
      if (trait == nullptr) {
        const std::string& name = *impl.trait_name;
        Diagnostic d = diag::Make(Kind::kE0230, R(span), name);
        d.suggestion = fmt::format("define `trait {} {{ ... }}` or check for typos", name);
        d.fix_patch =
            Patch(fmt::format("define trait `{}`", name), span.start, span.start,
                  fmt::format("trait {} {{\n        fn TODO() -> TODO\n    }}\n\n    ", name));
        Report(std::move(d));
        continue;
      }
      bool conforms = true;
      for (const ast::TraitMethod& m : trait->methods) {
        if (m.body) continue;
        const bool provided = std::any_of(impl.methods.begin(), impl.methods.end(),
                                          [&](const ast::Function& f) { return f.name == m.name; });
        if (provided) continue;
        conforms = false;
        Diagnostic d = diag::Make(Kind::kE0231, R(span), m.name, trait->name);
        d.suggestion =
            fmt::format("add method `{}` to the impl block for trait `{}`", m.name, trait->name);
        // Before the block's `}`: upstream inserts after it, where the stub parses as a free
        // function and the error stays (decision 0014).
        const std::uint32_t inside = span.end > span.start ? span.end - 1 : span.end;
        const FixPatch add = Patch(fmt::format("add method `{}`", m.name), inside, inside,
                                   fmt::format("\n    fn {}() {{\n        TODO\n    }}\n", m.name));
        d.fix_patch = add;
        d.repair_plan.push_back(RepairStep{fmt::format("add a stub for `{}`", m.name), {add}});
        d.repair_plan.push_back(RepairStep{"fill in the method's signature and body", {}});
        Report(std::move(d));
      }
      for (const ast::TypeBinding& b : impl.type_bindings) {
        const bool declared =
            std::any_of(trait->associated_types.begin(), trait->associated_types.end(),
                        [&](const ast::AssociatedType& a) { return a.name == b.name; });
        if (declared) continue;
        conforms = false;
        Diagnostic d = diag::Make(Kind::kE0234, R(span), b.name, trait->name);
        d.suggestion = fmt::format("trait `{}` does not declare associated type `{}` — remove it",
                                   trait->name, b.name);
        // The binding only (upstream deletes the whole impl block; decision 0047).
        d.fix_patch =
            Patch(fmt::format("remove associated type `{}`", b.name), b.span.start, b.span.end, "");
        Report(std::move(d));
      }
      for (const ast::AssociatedType& a : trait->associated_types) {
        const bool bound = std::any_of(impl.type_bindings.begin(), impl.type_bindings.end(),
                                       [&](const ast::TypeBinding& b) { return b.name == a.name; });
        if (bound) continue;
        conforms = false;
        Diagnostic d = diag::Make(Kind::kE0233, R(span), a.name, trait->name);
        d.suggestion = fmt::format("add `type {} = ConcreteType` to the impl block for trait `{}`",
                                   a.name, trait->name);
        const std::uint32_t inside = span.end > span.start ? span.end - 1 : span.end;
        d.fix_patch = Patch(fmt::format("add associated type `{}`", a.name), inside, inside,
                            fmt::format("\n    type {} = TODO\n", a.name));
        Report(std::move(d));
      }
      if (!conforms) continue;
      trait_impls_.insert({trait->name, impl.type_name});
    }
    assoc_ = nullptr;
    if (!impl.type_bindings.empty()) {
      std::map<std::string, Type, std::less<>>& bound = impl_assoc_[&impl];
      for (const ast::TypeBinding& b : impl.type_bindings) {
        try {
          bound[b.name] = Resolve(b.ty, b.span);
        } catch (BodyError& error) {
          bound[b.name] = Type::Any();
          Report(std::move(error.diagnostic));
        }
      }
      assoc_ = &bound;
    }
    for (const ast::Function& fn : impl.methods) {
      try {
        Bind(Own(impl.type_name + "_" + fn.name), signature(fn));
      } catch (BodyError& error) {
        Bind(Own(impl.type_name + "_" + fn.name), Type::Any());
        bad_signatures_.insert(&fn);
        Report(std::move(error.diagnostic));
      }
    }
    if (trait != nullptr) {
      // Default methods the block does not override are registered for the type too (their
      // bodies are never checked, §5.3). `self` is the implementing type.
      for (const ast::TraitMethod& m : trait->methods) {
        if (!m.body) continue;
        const bool overridden =
            std::any_of(impl.methods.begin(), impl.methods.end(),
                        [&](const ast::Function& f) { return f.name == m.name; });
        if (overridden) continue;
        try {
          std::vector<Type> params;
          for (const ast::Param& p : m.params) {
            params.push_back(p.name == "self" ? Resolve(TypeExpr::Named(impl.type_name), p.span)
                                              : Resolve(p.ty, p.span));
          }
          Bind(Own(impl.type_name + "_" + m.name),
               types_.Function(std::move(params), Resolve(m.return_type, m.span)));
        } catch (BodyError& error) {
          Bind(Own(impl.type_name + "_" + m.name), Type::Any());
          Report(std::move(error.diagnostic));
        }
      }
    }
    assoc_ = nullptr;
  }
  for (const ast::ActorDecl& actor : mod.actor_decls) {
    for (const ast::Function& fn : actor.handlers) {
      try {
        Bind(Own(actor.name + "_" + fn.name), signature(fn));
      } catch (BodyError& error) {
        Bind(Own(actor.name + "_" + fn.name), Type::Any());
        bad_signatures_.insert(&fn);
        Report(std::move(error.diagnostic));
      }
    }
  }
}

void Checker::RegisterFunctions(const ast::Module& mod) {
  // An imported module's functions are also kept under its declared name (module_fns_).
  std::map<std::string_view, ModuleFn, std::less<>>* own = nullptr;
  if (importing_) {
    own = &module_fns_[mod.name];
    own->clear();
  }
  for (const ast::Function& fn : mod.functions) {
    if (!fn.generic_params.empty()) {
      // Generic functions are templates (§5.6); calls to them are typed leniently (T2).
      generic_fns_[fn.name] = &fn;
      Bind(fn.name, Type::Any());
      if (own != nullptr) (*own)[fn.name] = ModuleFn{Type::Any(), &fn};
      continue;
    }
    *fn_decls_.TryEmplace(fn.name).first = &fn;
    try {
      // The parameter types on the stack for the usual few parameters (the table copies them).
      constexpr std::size_t kInline = 8;
      std::array<Type, kInline> inline_params;
      std::vector<Type> many_params;
      std::span<Type> params(inline_params.data(), fn.params.size());
      if (fn.params.size() > kInline) {
        many_params.resize(fn.params.size());
        params = many_params;
      }
      for (std::size_t i = 0; i < fn.params.size(); ++i) {
        params[i] = Resolve(fn.params[i].ty, fn.params[i].span);
      }
      Type ret = Resolve(fn.return_type, fn.span);
      if (fn.is_async) ret = types_.Future(ret);
      const Type ft = types_.Function(params, ret);
      Bind(fn.name, ft);
      if (own != nullptr) (*own)[fn.name] = ModuleFn{ft, &fn};
    } catch (BodyError& error) {
      Bind(fn.name, Type::Any());
      if (own != nullptr) (*own)[fn.name] = ModuleFn{Type::Any(), &fn};
      bad_signatures_.insert(&fn);
      Report(std::move(error.diagnostic));
    }
  }
}

void Checker::CheckFunction(const ast::Function& fn) {
  if (bad_signatures_.count(&fn) > 0) return;
  const std::size_t mark = env_.size();
  fn_ = FnContext{};
  own_.BeginFunction();
  try {
    for (const ast::Param& p : fn.params) {
      Bind(p.name, Resolve(p.ty, p.span));
      own_.DeclareParam(p.name, p.ownership);
    }
    fn_.return_type = Resolve(fn.return_type, fn.span);
    CheckBlock(fn.body);
  } catch (BodyError& error) {
    Report(std::move(error.diagnostic));
  }
  env_.resize(mark);
}

void Checker::CheckInvariant(const ast::InvariantDecl& inv) {
  const std::size_t mark = env_.size();
  fn_ = FnContext{};
  own_.BeginFunction();
  try {
    const Type t = Infer(inv.condition);
    if (!TypesEqual(Type::Bool(), t)) {
      Diagnostic d = diag::Make(Kind::kE0310, R(inv.span), Display(t));
      d.suggestion = "invariant conditions must evaluate to `Bool`";
      // The condition only (upstream replaces the whole declaration; decision 0047).
      const Span cond = ast::ExprSpan(inv.condition);
      d.fix_patch =
          Patch("compare the condition with `true`", cond.start, cond.end, "TODO == true");
      Fail(std::move(d));
    }
  } catch (BodyError& error) {
    Report(std::move(error.diagnostic));
  }
  env_.resize(mark);
}

// =============================================================================================
// Types.

Type Checker::Instantiate(std::string_view name, const Template& tmpl,
                          const std::vector<Type>& args) {
  std::string mangled = std::string(name) + "__";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i > 0) mangled += "_";
    mangled += Display(args[i]);
  }
  const bool known = tmpl.is_enum ? FindEnum(mangled) != nullptr : FindStruct(mangled) != nullptr;
  // A declaration may instantiate itself with ever larger arguments (`enum T<A> { X(T<(A, A)>)
  // }`), which would never end. Past these bounds an instance is registered without members,
  // so its literals and variants fail to check instead of the checker running away.
  if (!known &&
      (instantiation_depth_ >= kMaxInstantiationDepth || mangled.size() > kMaxInstanceNameBytes)) {
    if (tmpl.is_enum) {
      EnumEntry(mangled);
    } else {
      StructEntry(mangled);
    }
  } else if (!known) {
    ++instantiation_depth_;
    struct DepthGuard {
      int& depth;
      ~DepthGuard() { --depth; }
    } guard{instantiation_depth_};
    std::map<std::string, Type, std::less<>> subst;
    for (std::size_t i = 0; i < tmpl.params.size() && i < args.size(); ++i) {
      subst[tmpl.params[i]] = args[i];
    }
    if (tmpl.is_enum) {
      EnumEntry(mangled);  // registered first: a recursive payload refers to it
      EnumInfo info;
      for (const auto& [variant, payload] : tmpl.members) {
        std::vector<Type> types;
        for (const TypeExpr& t : payload) types.push_back(Resolve(t, Span{}, true, &subst));
        info.variants.push_back({variant, std::move(types)});
      }
      EnumInfo& slot = EnumEntry(mangled);
      info.type = slot.type;
      slot = std::move(info);
    } else {
      StructEntry(mangled);
      StructInfo info;
      for (const auto& [field, types] : tmpl.members) {
        info.fields.push_back({field, Resolve(types[0], Span{}, true, &subst)});
      }
      StructInfo& slot = StructEntry(mangled);
      info.type = slot.type;
      slot = std::move(info);
    }
  }
  return tmpl.is_enum ? EnumEntry(mangled).type : StructEntry(mangled).type;
}

Type Checker::Resolve(const TypeExpr& te, Span where, bool mono,
                      const std::map<std::string, Type, std::less<>>* subst) {
  const Level level(*this);
  if (level.too_deep()) return Type::Any();
  switch (te.kind) {
    case TypeKind::kNamed: {
      if (subst != nullptr) {
        auto it = subst->find(te.name);
        if (it != subst->end()) return it->second;
      }
      // Inside `impl Trait for T`, an associated type's name is the impl's binding (§5.2).
      if (assoc_ != nullptr) {
        auto it = assoc_->find(te.name);
        if (it != assoc_->end()) return it->second;
      }
      if (std::optional<Type> prim = PrimitiveType(te.name)) return *prim;
      // One lookup for every kind of declaration, tried in upstream's order: alias, enum,
      // template, struct.
      const TypeNames* names = type_names_.Find(te.name);
      if (names == nullptr) return types_.Struct(te.name);
      if (names->alias) return *names->alias;
      if (names->enum_info != nullptr) return names->enum_info->type;
      if (names->tmpl != nullptr) {
        if (mono) {
          Diagnostic d = diag::Make(Kind::kE0223, R(where), te.name);
          d.suggestion = fmt::format("specify type arguments, e.g. `{}<Int>`", te.name);
          d.fix_patch =
              Patch("add type arguments", where.start, where.end, fmt::format("{}<TODO>", te.name));
          Fail(std::move(d));
        }
        return names->tmpl->is_enum ? types_.Enum(te.name) : types_.Struct(te.name);
      }
      if (names->struct_info != nullptr) return names->struct_info->type;
      return types_.Struct(te.name);
    }
    case TypeKind::kGeneric: {
      std::vector<Type> args;
      for (const TypeExpr& a : te.args) args.push_back(Resolve(a, where, mono, subst));
      if (te.name == "Future" && args.size() == 1) return types_.Future(args[0]);
      if (const Template* tmpl = FindTemplate(te.name)) {
        if (args.size() != tmpl->params.size()) {
          Diagnostic d =
              diag::Make(Kind::kE0221, R(where), tmpl->params.size(), te.name, args.size());
          d.suggestion = fmt::format("`{}` requires exactly {} type argument(s)", te.name,
                                     tmpl->params.size());
          std::string todo;
          for (std::size_t i = 0; i < tmpl->params.size(); ++i) {
            todo += i == 0 ? "TODO" : ", TODO";
          }
          d.fix_patch = Patch("fix the type arguments", where.start, where.end,
                              fmt::format("{}<{}>", te.name, todo));
          Fail(std::move(d));
        }
        if (mono) return Instantiate(te.name, *tmpl, args);
      }
      return types_.Generic(te.name, std::move(args));
    }
    case TypeKind::kFunction: {
      std::vector<Type> params;
      for (std::size_t i = 0; i + 1 < te.args.size(); ++i) {
        params.push_back(Resolve(te.args[i], where, mono, subst));
      }
      Type ret = te.args.empty() ? Type::Unit() : Resolve(te.args.back(), where, mono, subst);
      return types_.Function(std::move(params), std::move(ret));
    }
    case TypeKind::kUnit:
      return Type::Unit();
    case TypeKind::kOptional: {
      TypeExpr option;
      option.kind = TypeKind::kGeneric;
      option.name = "Option";
      option.args = te.args;
      return Resolve(option, where, mono, subst);
    }
    case TypeKind::kTuple: {
      std::vector<Type> elems;
      for (const TypeExpr& a : te.args) elems.push_back(Resolve(a, where, mono, subst));
      return types_.Tuple(std::move(elems));
    }
    case TypeKind::kDynTrait:
      return types_.Dyn(te.name);
  }
  return Type::Unknown();
}

bool Checker::Assignable(const Type& expected, const Type& found) const {
  if (TypesEqual(expected, found)) return true;
  // §5.10: `Ok(1)` (Result__Int_?) where Result<Int, String> is expected, `None` (Option__?).
  if (expected.tag() == TypeTag::kEnum && found.tag() == TypeTag::kEnum &&
      BaseName(expected.name()) == BaseName(found.name()) &&
      found.name().find('?') != std::string::npos) {
    return true;
  }
  // Any List/Map/Set value where List/Map/Set<Int|String...> is annotated.
  if (expected.tag() == TypeTag::kGeneric && found.tag() == TypeTag::kGeneric &&
      expected.name() == found.name() &&
      (expected.name() == "List" || expected.name() == "Map" || expected.name() == "Set")) {
    return std::all_of(expected.args().begin(), expected.args().end(),
                       [](const Type& t) { return t.IsPrim("Int") || t.IsPrim("String"); });
  }
  return false;
}

// =============================================================================================
// Statements.

Type Checker::CheckBlock(const ast::Block& block) {
  const Level level(*this);
  if (level.too_deep()) return Type::Any();
  const std::size_t mark = env_.size();
  // §7.3: the ownership state is saved here and restored when the block ends.
  const std::size_t own_mark = own_.EnterBlock();
  const Type t = CheckStmts(block);
  own_.ExitBlock(own_mark);
  env_.resize(mark);
  return t;
}

// The type of a block is the type of its last statement when that is an expression statement,
// else unit (§5.5).
Type Checker::CheckStmts(const ast::Block& block) {
  Type last = Type::Unit();
  for (const Stmt& stmt : block.stmts) {
    last = Type::Unit();
    CheckStmt(stmt, &last);
  }
  return last;
}

void Checker::CheckStmt(const Stmt& stmt, Type* last) {
  const Level level(*this);
  if (level.too_deep()) return;
  switch (stmt.kind) {
    case StmtKind::kLet: {
      const Type value = Infer(stmt.value);
      if (stmt.ty) {
        const Type declared = Resolve(*stmt.ty, stmt.span);
        if (!Assignable(declared, value)) {
          Mismatch(declared, value, stmt.span, ast::ExprSpan(stmt.value));
        }
        Bind(stmt.name, declared);
      } else {
        Bind(stmt.name, value);
      }
      if (options_.ownership) {
        const std::optional<std::string_view> source =
            stmt.value.kind == ExprKind::kIdent ? std::optional(stmt.value.text) : std::nullopt;
        OwnFail(own_.Let(stmt.name, source, IsCopy(env_.back().type), stmt.span));
      }
      return;
    }
    case StmtKind::kLetPattern: {
      Type value = Infer(stmt.value);
      if (stmt.ty) {
        const Type declared = Resolve(*stmt.ty, stmt.span);
        if (!Assignable(declared, value)) Mismatch(declared, value, stmt.span);
        value = declared;
      }
      BindPattern(*stmt.pattern, value, nullptr, true);
      return;
    }
    case StmtKind::kExpr:
      *last = Infer(stmt.value);
      return;
    case StmtKind::kReturn: {
      const Type value = stmt.has_value ? Infer(stmt.value) : Type::Unit();
      if (!Assignable(fn_.return_type, value)) {
        Mismatch(fn_.return_type, value, stmt.span,
                 stmt.has_value ? std::optional<Span>(ast::ExprSpan(stmt.value)) : std::nullopt);
      }
      if (options_.ownership && stmt.has_value && stmt.value.kind == ExprKind::kIdent) {
        OwnFail(own_.Return(stmt.value.text, stmt.span));
      }
      return;
    }
    case StmtKind::kWhile: {
      ExpectType(Type::Bool(), stmt.value);
      ++fn_.loop_depth;
      CheckBlock(stmt.body);
      --fn_.loop_depth;
      return;
    }
    case StmtKind::kFor: {
      ExpectType(Type::Int(), stmt.value);
      ExpectType(Type::Int(), stmt.extra->value2);
      const std::size_t mark = env_.size();
      Bind(stmt.name, Type::Int());
      ++fn_.loop_depth;
      CheckBlock(stmt.body);
      --fn_.loop_depth;
      env_.resize(mark);
      return;
    }
    case StmtKind::kForIn: {
      const Type coll = Infer(stmt.value);
      Type elem = Type::Any();
      if (coll.tag() == TypeTag::kGeneric && !coll.args().empty() &&
          (coll.name() == "List" || coll.name() == "Map" || coll.name() == "Set")) {
        elem = coll.args()[0];
      } else if (coll.tag() != TypeTag::kAny) {
        MismatchText("List<T>, Map<K, V>, or Set<T>", Display(coll), ast::ExprSpan(stmt.value));
      }
      const std::size_t mark = env_.size();
      Bind(stmt.name, elem);
      ++fn_.loop_depth;
      CheckBlock(stmt.body);
      --fn_.loop_depth;
      env_.resize(mark);
      return;
    }
    case StmtKind::kAssign: {
      const Type* target = Lookup(stmt.name);
      if (target == nullptr) Undefined(stmt.name, stmt.span);
      const Type expected = *target;
      const Type value = Infer(stmt.value);
      if (options_.ownership) OwnFail(own_.Assign(stmt.name, stmt.span));
      if (!TypesEqual(expected, value)) Mismatch(expected, value, stmt.span);
      return;
    }
    case StmtKind::kIfLet: {
      const Type value = Infer(stmt.value);
      const std::size_t mark = env_.size();
      BindPattern(*stmt.pattern, value, nullptr, true);
      CheckBlock(stmt.body);
      env_.resize(mark);
      if (stmt.extra && stmt.extra->else_body) CheckBlock(*stmt.extra->else_body);
      return;
    }
    case StmtKind::kBreak:
    case StmtKind::kContinue: {
      if (fn_.loop_depth > 0) return;
      const bool is_break = stmt.kind == StmtKind::kBreak;
      const std::string_view word = is_break ? "break" : "continue";
      Diagnostic d = diag::Make(is_break ? Kind::kE0243 : Kind::kE0244, R(stmt.span));
      d.suggestion =
          fmt::format("`{}` can only be used inside `while`, `for`, or `for-in` loops", word);
      d.fix_patch = Patch(fmt::format("remove `{}`", word), stmt.span.start, stmt.span.end, "");
      Fail(std::move(d));
    }
    case StmtKind::kSpawn:
      if (options_.ownership) OwnFail(own_.Spawn(stmt.body, stmt.span));
      CheckBlock(stmt.body);
      return;
    case StmtKind::kParallel: {
      // Upstream checks a `parallel` body's statements in the enclosing ownership scope.
      const std::size_t mark = env_.size();
      CheckStmts(stmt.body);
      env_.resize(mark);
      return;
    }
    case StmtKind::kSelect:
      for (const ast::SelectArm& arm : stmt.extra->select_arms) {
        Infer(arm.channel);
        const std::size_t mark = env_.size();
        Bind(arm.binding, Resolve(arm.ty, arm.span));
        CheckBlock(arm.body);
        env_.resize(mark);
      }
      return;
    case StmtKind::kForall: {
      const std::size_t mark = env_.size();
      for (const ast::ForallBinding& fb : stmt.extra->forall_bindings) {
        Bind(fb.name, Resolve(fb.ty, fb.span));
      }
      CheckBlock(stmt.body);
      env_.resize(mark);
      return;
    }
  }
}

void Checker::ExpectType(const Type& expected, const Expr& e) {
  const Type t = Infer(e);
  if (!TypesEqual(expected, t)) Mismatch(expected, t, ast::ExprSpan(e));
}

// Binds the names of pattern `p` matched against a value of `type` (§5.7). `covered` collects
// the enum variants a match arm covers. A bare name binds the whole value when the type is not
// an enum and `top_level_binding_ok` (let and if-let patterns).
void Checker::BindPattern(const Pattern& p, const Type& type,
                          std::vector<std::string_view>* covered, bool top_level_binding_ok) {
  const Level level(*this);
  if (level.too_deep()) return;
  switch (p.kind) {
    case PatternKind::kWildcard:
      return;
    case PatternKind::kLiteral:
      Infer(*p.literal);
      return;
    case PatternKind::kBinding:
      Bind(p.name, type);
      return;
    case PatternKind::kTuple: {
      for (std::size_t i = 0; i < p.subs.size(); ++i) {
        const Type elem = type.tag() == TypeTag::kTuple && i < type.args().size() ? type.args()[i]
                          : type.tag() == TypeTag::kAny                           ? Type::Any()
                                                                                  : Type::Unknown();
        BindPattern(p.subs[i], elem, nullptr, true);
      }
      return;
    }
    case PatternKind::kVariant: {
      // The scrutinee's enum when it is a known one, else the pattern's own enum name.
      const EnumInfo* info = type.tag() == TypeTag::kEnum ? FindEnum(type) : nullptr;
      if (info == nullptr && p.has_enum_name) info = FindEnum(p.enum_name);
      if (!p.has_enum_name && p.subs.empty() && top_level_binding_ok &&
          type.tag() != TypeTag::kEnum) {
        Bind(p.name, type);
        return;
      }
      if (info == nullptr) return;
      for (const auto& [variant, payload] : info->variants) {
        if (variant != p.name) continue;
        for (std::size_t i = 0; i < p.subs.size(); ++i) {
          const Type elem = i < payload.size() ? payload[i] : Type::Unknown();
          BindPattern(p.subs[i], elem, nullptr, false);
        }
        if (covered != nullptr) covered->push_back(variant);  // names in an EnumInfo: stable
        return;
      }
      return;
    }
  }
}

// =============================================================================================
// Expressions.

Type Checker::Infer(const Expr& e) {
  const Level level(*this);
  if (level.too_deep()) return Type::Any();
  switch (e.kind) {
    case ExprKind::kIntLit:
      return Type::Int();
    case ExprKind::kFloatLit:
      return Type::Float64();
    case ExprKind::kStringLit:
      return Type::String();
    case ExprKind::kBoolLit:
      return Type::Bool();
    case ExprKind::kStringInterp:
      for (const ast::StringPart& part : e.extra->parts) {
        if (part.is_expr && part.expr) Infer(*part.expr);
      }
      return Type::String();
    case ExprKind::kIdent: {
      if (options_.ownership) OwnFail(own_.Use(e.text, e.span));
      if (e.text == "None" && Lookup("None") == nullptr) {
        return Instantiate("Option", *FindTemplate("Option"), {Type::Unknown()});
      }
      const Type* b = Lookup(e.text);
      if (b == nullptr) Undefined(e.text, e.span);
      if (b->tag() == TypeTag::kAny && generic_fns_.count(e.text) > 0 &&
          LookupLocal(e.text) == nullptr) {
        NotUnderstood(fmt::format("the generic function `{}` used as a value", e.text), e.span);
      }
      return *b;
    }
    case ExprKind::kBinaryOp:
      return InferBinary(e);
    case ExprKind::kUnaryOp: {
      const Type t = Infer(e.operand());
      if (e.unary_op == ast::UnaryOp::kNot) {
        if (!TypesEqual(Type::Bool(), t)) Mismatch(Type::Bool(), t, ast::ExprSpan(e.operand()));
        return Type::Bool();
      }
      if (!IsNumeric(t)) MismatchText("numeric type", Display(t), ast::ExprSpan(e.operand()));
      return t;
    }
    case ExprKind::kCall:
      return InferCall(e);
    case ExprKind::kIf:
      return InferIf(e);
    case ExprKind::kFieldAccess:
      return InferFieldAccess(e);
    case ExprKind::kStructLit:
      return InferStructLit(e);
    case ExprKind::kEnumVariantExpr:
      // `mod::f(x)`: a function of the imported module `mod` (§4.3), when no enum is named so.
      if (!imported_modules_.empty() && imported_modules_.count(e.text) > 0 &&
          FindEnum(e.text) == nullptr && FindTemplate(e.text) == nullptr) {
        return InferQualifiedCall(e, e.text, e.extra->variant, e.span, 0);
      }
      return InferVariant(e, e.text, e.extra->variant, 0);
    case ExprKind::kMatch:
      return InferMatch(e);
    case ExprKind::kTupleLit: {
      // Most tuples are small: their element types stay on the stack (no allocation per tuple).
      constexpr std::size_t kInline = 8;
      if (e.operands.size() <= kInline) {
        std::array<Type, kInline> elems;
        for (std::size_t i = 0; i < e.operands.size(); ++i) elems[i] = Infer(e.operands[i]);
        return types_.Tuple(std::span<const Type>(elems.data(), e.operands.size()));
      }
      std::vector<Type> elems;
      for (const Expr& op : e.operands) elems.push_back(Infer(op));
      return types_.Tuple(elems);
    }
    case ExprKind::kTupleIndex: {
      const Type t = Infer(e.operand());
      if (t.tag() != TypeTag::kTuple) return t.tag() == TypeTag::kAny ? t : Type::Unknown();
      if (e.int_value < 0 || static_cast<std::uint64_t>(e.int_value) >= t.args().size()) {
        const std::size_t len = t.args().size();
        Diagnostic d = diag::Make(Kind::kE0253, R(e.span), e.int_value, len);
        const std::string last = len == 0 ? "0" : fmt::format("{}", len - 1);
        d.suggestion = fmt::format("valid indices for this tuple are 0..{}", last);
        // The index only (upstream replaces `t.N` with `.M`; decision 0047).
        const std::string_view text =
            source_.text().substr(e.span.start, e.span.end - e.span.start);
        const std::size_t dot = text.rfind('.');
        if (len > 0 && dot != std::string_view::npos) {
          d.fix_patch = Patch(fmt::format("use index {}", last),
                              e.span.start + static_cast<std::uint32_t>(dot + 1), e.span.end, last);
        }
        Fail(std::move(d));
      }
      return t.args()[static_cast<std::size_t>(e.int_value)];
    }
    case ExprKind::kBlock:
      return CheckBlock(*e.extra->block);
    case ExprKind::kRange:
      ExpectType(Type::Int(), e.operands[0]);
      ExpectType(Type::Int(), e.operands[1]);
      return Type::Unit();
    case ExprKind::kIs:
      Infer(e.operand());
      return Type::Bool();
    case ExprKind::kAwait: {
      const Type t = Infer(e.operand());
      return t.tag() == TypeTag::kFuture ? t.args()[0] : t;
    }
    case ExprKind::kTry: {
      const Span span = e.span;
      if (!(fn_.return_type.tag() == TypeTag::kEnum &&
            BaseName(fn_.return_type.name()) == "Result") &&
          fn_.return_type.tag() != TypeTag::kAny) {
        Diagnostic d = diag::Make(Kind::kE0224, R(span));
        d.suggestion = "the `?` operator can only be used in functions that return `Result<T, E>`";
        d.fix_patch = Patch("return a Result", span.start, span.end, "-> Result<TODO, String>");
        Fail(std::move(d));
      }
      const Type t = Infer(e.operand());
      if (t.tag() == TypeTag::kAny) return t;
      if (!(t.tag() == TypeTag::kEnum && BaseName(t.name()) == "Result")) {
        MismatchText("Result<T, E>", Display(t), ast::ExprSpan(e.operand()));
      }
      const EnumInfo* info = FindEnum(t);
      if (info != nullptr && !info->variants.empty() && !info->variants[0].second.empty()) {
        return info->variants[0].second[0];
      }
      return Type::Unknown();
    }
    case ExprKind::kOptionalChain:
    case ExprKind::kNullCoalesce: {
      const bool chain = e.kind == ExprKind::kOptionalChain;
      const Type t = Infer(e.operands[0]);
      const bool option = (t.tag() == TypeTag::kEnum && BaseName(t.name()) == "Option") ||
                          t.tag() == TypeTag::kUnknown || t.tag() == TypeTag::kAny;
      if (!option) {
        const std::string shown = Display(t);
        Diagnostic d = diag::Make(chain ? Kind::kE0225 : Kind::kE0226, R(e.span), shown);
        d.suggestion = chain ? "optional chaining `?.` can only be used on `Option<T>` values"
                             : "the left-hand side of `??` must be an `Option<T>` value";
        d.fix_patch =
            Patch("use an Option", e.span.start, e.span.end, fmt::format("Option<{}>", shown));
        Fail(std::move(d));
      }
      if (chain) return Type::Unknown();
      return Infer(e.right());
    }
    case ExprKind::kClosure: {
      // §5.9: typed parameters, the body typed with them in scope.
      const std::size_t mark = env_.size();
      std::vector<Type> params;
      for (const ast::ClosureParam& p : e.extra->params) {
        if (!p.ty) {
          Diagnostic d = diag::Make(Kind::kE0227, R(p.span), p.name);
          d.suggestion = fmt::format("add a type annotation: `{}: Type`", p.name);
          d.fix_patch = Patch("annotate the parameter", p.span.start, p.span.end,
                              fmt::format("{}: TODO", p.name));
          Fail(std::move(d));
        }
        params.push_back(Resolve(*p.ty, p.span));
        Bind(p.name, params.back());
      }
      // §5.9: captures of moved variables are E0281; non-Copy captures move once the body is
      // checked (which sees them as they were).
      std::vector<std::string_view> moved_captures;
      if (options_.ownership) {
        std::vector<std::string_view> names;
        for (const ast::ClosureParam& p : e.extra->params) names.push_back(p.name);
        for (const auto& [name, span] : ownership::FreeVariables(e.operands[0], names)) {
          const Type* captured = Lookup(name);
          if (captured == nullptr) continue;  // E0201 when the body is typed
          OwnFail(own_.Capture(name, e.span));
          if (!IsCopy(*captured)) moved_captures.push_back(name);
        }
      }
      const Type saved_return = fn_.return_type;
      std::optional<Type> declared;
      if (e.extra->return_type) {
        declared = Resolve(*e.extra->return_type, e.span);
        fn_.return_type = *declared;
      }
      const std::size_t own_mark = own_.EnterBlock();
      const Type body = Infer(e.operands[0]);
      own_.ExitBlock(own_mark);
      if (options_.ownership) own_.MoveCaptures(moved_captures, e.span);
      fn_.return_type = saved_return;
      env_.resize(mark);
      if (declared && body.tag() != TypeTag::kUnit && !TypesEqual(*declared, body)) {
        Mismatch(*declared, body, ast::ExprSpan(e.operands[0]));
      }
      return types_.Function(std::move(params), declared.value_or(body));
    }
  }
  return Type::Unknown();
}

Type Checker::InferBinary(const Expr& e) {
  const Type l = Infer(e.left());
  const Type r = Infer(e.right());
  using ast::BinOp;
  switch (e.bin_op) {
    case BinOp::kAnd:
    case BinOp::kOr:
      if (!TypesEqual(Type::Bool(), l)) Mismatch(Type::Bool(), l, ast::ExprSpan(e.left()));
      if (!TypesEqual(Type::Bool(), r)) Mismatch(Type::Bool(), r, ast::ExprSpan(e.right()));
      return Type::Bool();
    case BinOp::kAdd:
    case BinOp::kEq:
    case BinOp::kNe:
      if (l.IsPrim("String") && r.IsPrim("String")) {
        return e.bin_op == BinOp::kAdd ? Type::String() : Type::Bool();
      }
      break;
    default:
      break;
  }
  if (!IsNumeric(l)) MismatchText("numeric type", Display(l), ast::ExprSpan(e.left()));
  if (!TypesEqual(l, r)) Mismatch(l, r, e.span);
  switch (e.bin_op) {
    case BinOp::kAdd:
    case BinOp::kSub:
    case BinOp::kMul:
    case BinOp::kDiv:
    case BinOp::kMod:
      return l.tag() == TypeTag::kAny ? r : l;
    default:
      return Type::Bool();
  }
}

Type Checker::InferIf(const Expr& e) {
  ExpectType(Type::Bool(), e.operands[0]);
  const Type then_t = CheckBlock(*e.extra->block);
  if (!e.extra->else_block) return Type::Unit();
  const Type else_t = CheckBlock(*e.extra->else_block);
  if (!TypesEqual(then_t, else_t)) Mismatch(then_t, else_t, e.span);
  return then_t;
}

Type Checker::CheckCallArgs(std::span<const Type> params, Type result, const Expr& call,
                            std::size_t first_arg, bool direct, const ast::Function* callee) {
  const std::size_t given = call.operands.size() - first_arg;
  if (params.size() != given) Arity(params.size(), given, call.span);
  const ownership::Tracker::CallFrame frame = own_.BeginCall();
  for (std::size_t i = 0; i < given; ++i) {
    const Expr& arg = call.operands[first_arg + i];
    const Type t = Infer(arg);
    if (!TypesEqual(params[i], t)) Mismatch(params[i], t, ast::ExprSpan(arg));
    if (direct) {
      OwnArgument(arg, t,
                  callee != nullptr && i < callee->params.size() ? callee->params[i].ownership
                                                                 : ast::Ownership::kOwned);
    }
  }
  own_.EndCall(frame);
  return result;
}

Type Checker::InferCall(const Expr& e) {
  const Expr& callee = e.operands[0];
  if (callee.kind == ExprKind::kFieldAccess) {
    const Expr& object = callee.operand();
    // `T.f(...)`: a static method when `T` names a type (not a value) and T_f's first
    // parameter is not a T (§5.5 call step 2).
    const auto names_a_type = [this](std::string_view name) {
      const TypeNames* names = type_names_.Find(name);
      return names != nullptr && (names->struct_info != nullptr || names->enum_info != nullptr ||
                                  names->tmpl != nullptr);
    };
    if (object.kind == ExprKind::kIdent && Lookup(object.text) == nullptr &&
        names_a_type(object.text)) {
      if (const Type* m = Lookup(fmt::format("{}_{}", object.text, callee.text))) {
        const Type& ft = *m;
        if (ft.tag() == TypeTag::kAny) {
          for (std::size_t i = 1; i < e.operands.size(); ++i) Infer(e.operands[i]);
          return Type::Any();
        }
        const bool first_is_self =
            ft.tag() == TypeTag::kFunction && !ft.args().empty() &&
            (ft.args()[0].tag() == TypeTag::kStruct || ft.args()[0].tag() == TypeTag::kEnum) &&
            BaseName(ft.args()[0].name()) == object.text;
        if (ft.tag() == TypeTag::kFunction && !first_is_self)
          return CheckCallArgs(ft.args(), ft.result(), e, 1);
      }
    }
    // `mod.f(x)`: a function of the imported module `mod` (§4.3), when no value is named so.
    if (object.kind == ExprKind::kIdent && !imported_modules_.empty() &&
        imported_modules_.count(object.text) > 0 && Lookup(object.text) == nullptr) {
      return InferQualifiedCall(e, object.text, callee.text, callee.span, 1);
    }
    return InferMethodCall(e, object, callee.text);
  }
  if (callee.kind == ExprKind::kIdent) {
    const std::string_view name = callee.text;
    // §4.3: a private function of an imported module called by name, whatever else the name
    // is bound to (upstream checks the name only).
    if (!imported_modules_.empty()) {
      if (const std::string* owner = private_fns_.Find(name)) {
        PrivateAccess(name, *owner, callee.span);
      }
    }
    if ((name == "assert_eq" || name == "assert_ne") && Lookup(name) == nullptr) {
      if (e.operands.size() != 3) Arity(2, e.operands.size() - 1, e.span);
      const Type a = Infer(e.operands[1]);
      const Type b = Infer(e.operands[2]);
      if (!TypesEqual(a, b)) Mismatch(a, b, ast::ExprSpan(e.operands[2]));
      if (!(a.IsPrim("Int") || a.IsPrim("String") || a.IsPrim("Bool") || a.IsPrim("Float64") ||
            a.tag() == TypeTag::kAny)) {
        MismatchText("Int, String, Bool, or Float64", Display(a), ast::ExprSpan(e.operands[1]));
      }
      return Type::Unit();
    }
    if ((name == "Some" || name == "None") && Lookup(name) == nullptr) {
      return InferVariant(e, "Option", name, 1);
    }
    if ((name == "Ok" || name == "Err") && Lookup(name) == nullptr) {
      return InferVariant(e, "Result", name, 1);
    }
    if (auto it = generic_fns_.find(name); it != generic_fns_.end()) {
      const Type* b = Lookup(name);
      if (b != nullptr && b->tag() == TypeTag::kAny) return InferGenericCall(e, *it->second);
    }
  }
  // An identifier callee is looked up once, here; a builtin whose types depend on its
  // arguments is typed by CheckBuiltinCall. An unbound name goes to Infer, for E0201.
  std::optional<Type> callee_type;
  if (callee.kind == ExprKind::kIdent) {
    const BuiltinEntry* builtin = nullptr;
    if (const Type* bound = LookupCallee(callee.text, &builtin)) {
      if (builtin != nullptr) return CheckBuiltinCall(*builtin, e, 1, std::nullopt);
      callee_type = *bound;
    }
  }
  const Type ft = callee_type ? *callee_type : Infer(callee);
  if (ft.tag() == TypeTag::kAny) {
    for (std::size_t i = 1; i < e.operands.size(); ++i) Infer(e.operands[i]);
    return Type::Any();
  }
  if (ft.tag() != TypeTag::kFunction) NotCallable(ft, e.span, ast::ExprSpan(callee));
  // §7.3: a direct call; the qualifiers are those of the module function of that name, if any.
  const ast::Function* decl = nullptr;
  if (callee.kind == ExprKind::kIdent) {
    if (const ast::Function* const* found = fn_decls_.Find(callee.text)) decl = *found;
  }
  return CheckCallArgs(ft.args(), ft.result(), e, 1, /*direct=*/true, decl);
}

Type Checker::InferQualifiedCall(const Expr& call, std::string_view mod, std::string_view name,
                                 Span where, std::size_t first_arg) {
  // The module's own `name` first: the namespace may hold another module's (decision 0085).
  if (auto m = module_fns_.find(mod); m != module_fns_.end()) {
    if (auto f = m->second.find(name); f != m->second.end()) {
      const ModuleFn& fn = f->second;
      // §4.3: a qualified call reaches only what the module makes public.
      if (fn.decl->visibility != ast::Visibility::kPublic) {
        PrivateAccess(name, m->first, where);
      }
      if (!fn.decl->generic_params.empty()) return InferGenericCall(call, *fn.decl, first_arg);
      if (fn.type.tag() != TypeTag::kFunction) {
        for (std::size_t i = first_arg; i < call.operands.size(); ++i) Infer(call.operands[i]);
        return Type::Any();
      }
      return CheckCallArgs(fn.type.args(), fn.type.result(), call, first_arg, /*direct=*/true,
                           fn.decl);
    }
  }
  // A name the module does not declare itself resolves as a plain name (as MIR lowers it).
  const Global* global = FindGlobal(name);
  if (global == nullptr) Undefined(name, where);
  const Type ft = global->type;
  if (ft.tag() == TypeTag::kAny) {
    for (std::size_t i = first_arg; i < call.operands.size(); ++i) Infer(call.operands[i]);
    return Type::Any();
  }
  if (ft.tag() != TypeTag::kFunction) NotCallable(ft, call.span, where);
  const ast::Function* decl = nullptr;
  if (const ast::Function* const* found = fn_decls_.Find(name)) decl = *found;
  return CheckCallArgs(ft.args(), ft.result(), call, first_arg, /*direct=*/true, decl);
}

// Upstream's suggestion; no patch: the fix is a `pub` in the other file (upstream inserts
// `pub ` at the call, which does not parse).
void Checker::PrivateAccess(std::string_view name, const std::string& owner, Span span) {
  Diagnostic d = diag::Make(Kind::kE0270, R(span), name, owner);
  d.suggestion =
      fmt::format("`{}` is private in module `{}` — add `pub` to make it public", name, owner);
  Fail(std::move(d));
}

// The builtin method names of `receiver` (a base name), for E0235's similar-name hint.
std::vector<std::string_view> BuiltinMethodNames(std::string_view receiver) {
  std::vector<std::string_view> names;
  for (const BuiltinSignature& b : Builtins()) {
    if (b.receiver == receiver) names.push_back(b.method);
  }
  return names;
}

Type Checker::InferMethodCall(const Expr& e, const Expr& object, std::string_view method) {
  const Type recv = Infer(object);
  std::string type_name;
  switch (recv.tag()) {
    case TypeTag::kStruct:
    case TypeTag::kEnum:
    case TypeTag::kGeneric:
    case TypeTag::kDyn:
      type_name = recv.name();
      break;
    case TypeTag::kPrim:
      if (recv.name() == "String" || recv.name() == "Int" || recv.name() == "Float64") {
        type_name = recv.name();
      }
      break;
    case TypeTag::kAny:
      for (std::size_t i = 1; i < e.operands.size(); ++i) Infer(e.operands[i]);
      return Type::Any();
    default:
      break;
  }
  // Other receivers: `e.m` is a field access of a non-struct, typed `?`, and calling it is
  // E0203 (§5.8).
  if (type_name.empty()) NotCallable(Type::Unknown(), e.span, ast::ExprSpan(object));
  const std::string base(BaseName(type_name));
  // A user method (`impl T`) first; the builtin methods are bound by name too (`String_length`,
  // `List_map`), but are typed below unless a module function shadows the name.
  const auto user_method = [this](const std::string& name) -> const Type* {
    if (const Type* local = LookupLocal(name)) return local;
    const Global* global = FindGlobal(name);
    return global == nullptr || global->builtin != 0 ? nullptr : &global->type;
  };
  const Type* user = user_method((type_name + "_").append(method));
  if (user == nullptr && base != type_name) user = user_method((base + "_").append(method));
  if (user != nullptr) {
    const Type& ft = *user;
    if (ft.tag() != TypeTag::kFunction || ft.args().empty()) {
      for (std::size_t i = 1; i < e.operands.size(); ++i) Infer(e.operands[i]);
      return Type::Any();
    }
    return CheckCallArgs(ft.args().subspan(1), ft.result(), e, 1);
  }
  // Builtin methods (§7.8, §13) of String, Int, Float64, Option, Result, List, Map and Set,
  // typed for the receiver's element types.
  if (const BuiltinSignature* sig = FindBuiltinMethod(base, method)) {
    const BuiltinEntry& entry = builtins_[static_cast<std::size_t>(sig - Builtins().data())];
    return CheckBuiltinCall(entry, e, 1, recv);
  }
  // `dyn Trait` receivers (§5.8): typed by the trait's signature of the method (virtual
  // dispatch), default methods included; a method the trait lacks is E0235 below.
  std::vector<std::string> owned;
  if (recv.tag() == TypeTag::kDyn) {
    if (auto trait = trait_decls_.find(type_name); trait != trait_decls_.end()) {
      for (const ast::TraitMethod& m : trait->second->methods) {
        if (m.name == method) return InferDynCall(e, *trait->second, m, recv);
        owned.push_back(m.name);
      }
    }
  }
  // E0235: no such method (§5.8), with a near name among the type's methods.
  const std::string prefix = type_name + "_";
  for (const Binding& b : env_) {
    if (b.name.size() > prefix.size() && b.name.rfind(prefix, 0) == 0) {
      owned.emplace_back(b.name.substr(prefix.size()));
    }
  }
  std::vector<std::string_view> candidates(owned.begin(), owned.end());
  for (std::string_view m : BuiltinMethodNames(base)) candidates.push_back(m);
  Diagnostic d = diag::Make(Kind::kE0235, R(e.span), method, type_name);
  if (std::optional<std::string> near = NearName(method, candidates)) {
    d.suggestion =
        fmt::format("did you mean `{}`? (type `{}` has no method `{}`)", *near, type_name, method);
    // The method's name only (upstream replaces the whole call; decision 0047).
    const std::uint32_t name_end = ast::ExprSpan(e.operands[0]).end;
    d.fix_patch = Patch(fmt::format("rename to `{}`", *near),
                        name_end - static_cast<std::uint32_t>(method.size()), name_end, *near);
  } else {
    d.suggestion = fmt::format("type `{}` does not have a method named `{}`", type_name, method);
    const Span kept = ast::ExprSpan(object);
    d.fix_patch = Patch("remove the call", e.span.start, e.span.end,
                        std::string(source_.text().substr(kept.start, kept.end - kept.start)));
  }
  Fail(std::move(d));
}

// The trait's signature, without `self`. `Self` is the trait object itself. An associated type
// has no binding behind a trait object: a signature that mentions one is typed leniently and
// said so (W0902), as is one whose types do not resolve.
Type Checker::InferDynCall(const Expr& e, const ast::TraitDecl& trait, const ast::TraitMethod& m,
                           const Type& recv) {
  std::map<std::string, Type, std::less<>> self{{"Self", recv}};
  bool lenient = false;
  const auto mentions_assoc = [&](const TypeExpr& t, const auto& self_ref) -> bool {
    if (t.kind == TypeKind::kNamed || t.kind == TypeKind::kGeneric) {
      for (const ast::AssociatedType& a : trait.associated_types) {
        if (a.name == t.name) return true;
      }
    }
    for (const TypeExpr& a : t.args) {
      if (self_ref(a, self_ref)) return true;
    }
    return false;
  };
  std::vector<Type> params;
  const std::size_t first = m.has_self && !m.params.empty() ? 1 : 0;
  for (std::size_t i = first; i < m.params.size(); ++i) {
    lenient = lenient || mentions_assoc(m.params[i].ty, mentions_assoc);
  }
  lenient = lenient || mentions_assoc(m.return_type, mentions_assoc);
  if (!lenient) {
    std::optional<Type> ret;
    try {
      for (std::size_t i = first; i < m.params.size(); ++i) {
        params.push_back(Resolve(m.params[i].ty, m.params[i].span, true, &self));
      }
      ret = Resolve(m.return_type, m.span, true, &self);
    } catch (BodyError&) {
      // A signature error belongs to the trait's declaration, not to this call.
    }
    if (ret) return CheckCallArgs(params, *ret, e, 1);
  }
  NotUnderstood(fmt::format("the method call `.{}` on `{}` (its signature uses an associated "
                            "type of `{}`)",
                            m.name, Display(recv), trait.name),
                e.span);
  for (std::size_t i = 1; i < e.operands.size(); ++i) Infer(e.operands[i]);
  return Type::Any();
}

Type Checker::InferFieldAccess(const Expr& e) {
  const Type t = Infer(e.operand());
  if (t.tag() != TypeTag::kStruct) return t.tag() == TypeTag::kAny ? t : Type::Unknown();
  const StructInfo* info = FindStruct(t);
  if (info == nullptr) {
    Diagnostic d = diag::Make(Kind::kE0213, R(e.span), t.name());
    d.suggestion = fmt::format("define `struct {} {{ ... }}` or check for typos", t.name());
    AddItem(d, fmt::format("define struct `{}`", t.name()),
            fmt::format("struct {} {{\n    {}: TODO,\n}}", t.name(), e.text));
    Fail(std::move(d));
  }
  for (const auto& [name, type] : info->fields) {
    if (name == e.text) return type;
  }
  // Not found: the names for the suggestion are gathered only now (no vector per access).
  std::vector<std::string_view> names;
  names.reserve(info->fields.size());
  for (const auto& field : info->fields) names.push_back(field.first);
  Diagnostic d = diag::Make(Kind::kE0217, R(e.span), e.text, t.name());
  if (std::optional<std::string> near = NearName(e.text, names)) {
    d.suggestion =
        fmt::format("did you mean `{}`? (type `{}` has no field `{}`)", *near, t.name(), e.text);
    // The field's name only (upstream replaces the whole access; decision 0047).
    d.fix_patch = Patch(fmt::format("rename to `{}`", *near),
                        e.span.end - static_cast<std::uint32_t>(e.text.size()), e.span.end, *near);
  } else {
    d.suggestion = fmt::format("type `{}` does not have a field named `{}`", t.name(), e.text);
    const Span kept = ast::ExprSpan(e.operand());
    d.fix_patch = Patch("remove the field access", e.span.start, e.span.end,
                        std::string(source_.text().substr(kept.start, kept.end - kept.start)));
  }
  Fail(std::move(d));
}

Type Checker::InferStructLit(const Expr& e) {
  const std::string_view name = e.text;
  const ast::Vec<ast::FieldInit>& inits = e.extra->fields;
  Type result;
  const StructInfo* info = FindStruct(name);
  if (info != nullptr) {
    result = info->type;
  } else if (const Template* generic = FindTemplate(name);
             generic != nullptr && !generic->is_enum) {
    // A generic struct: parameters inferred from fields declared as a bare type parameter.
    const Template& tmpl = *generic;
    std::vector<Type> args;
    for (const std::string& param : tmpl.params) {
      std::optional<Type> bound;
      for (const auto& [field, types] : tmpl.members) {
        if (types[0].kind != TypeKind::kNamed || types[0].name != param) continue;
        for (const ast::FieldInit& init : inits) {
          if (init.name == field) {
            bound = Infer(init.value);
            break;
          }
        }
        if (bound) break;
      }
      args.push_back(bound.value_or(Type::Unknown()));
    }
    result = Instantiate(name, tmpl, args);
    info = FindStruct(result);
  }
  if (info == nullptr) {
    Diagnostic d = diag::Make(Kind::kE0213, R(e.span), name);
    d.suggestion = fmt::format("define `struct {} {{ ... }}` or check for typos", name);
    std::string fields;
    for (const ast::FieldInit& init : inits) fields += fmt::format("\n    {}: TODO,", init.name);
    AddItem(d, fmt::format("define struct `{}`", name),
            fmt::format("struct {} {{{}\n}}", name, fields.empty() ? "\n    TODO: TODO," : fields));
    Fail(std::move(d));
  }
  const std::string_view shown = name;
  // E0216 duplicates, E0215 unknown fields, E0214 missing fields, then the values (§5.5).
  // Linear scans, not a set and a vector of names: a literal has a few fields, and these ran
  // (and allocated) for every struct literal (docs/decisions/0031-kodo-perf4.md).
  const auto initialized = [&](std::string_view field, std::size_t before) {
    for (std::size_t j = 0; j < before; ++j) {
      if (inits[j].name == field) return true;
    }
    return false;
  };
  const auto is_declared = [&](std::string_view field) {
    for (const auto& [declared_field, type] : info->fields) {
      if (declared_field == field) return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < inits.size(); ++i) {
    const ast::FieldInit& init = inits[i];
    if (!initialized(init.name, i)) continue;
    Diagnostic d = diag::Make(Kind::kE0216, R(init.span), init.name, shown);
    d.suggestion = fmt::format("remove the duplicate `{}` field", init.name);
    // With its separating comma (upstream leaves it, which can leave `, ,`; decision 0047).
    d.fix_patch = Patch(fmt::format("remove the duplicate field `{}`", init.name), init.span.start,
                        fixtext::OverTrailingComma(source_.text(), init.span.end), "");
    Fail(std::move(d));
  }
  for (const ast::FieldInit& init : inits) {
    if (is_declared(init.name)) continue;
    std::vector<std::string_view> declared;
    for (const auto& [field, type] : info->fields) declared.push_back(field);
    Diagnostic d = diag::Make(Kind::kE0215, R(init.span), init.name, shown);
    if (std::optional<std::string> near = NearName(init.name, declared)) {
      d.suggestion = fmt::format("did you mean `{}`? (unknown field `{}`)", *near, init.name);
      d.fix_patch = Patch(fmt::format("rename field to `{}`", *near), init.span.start,
                          init.span.start + static_cast<std::uint32_t>(init.name.size()), *near);
    } else {
      d.suggestion = fmt::format("remove field `{}` from the struct literal", init.name);
      d.fix_patch = Patch(fmt::format("remove field `{}`", init.name), init.span.start,
                          fixtext::OverTrailingComma(source_.text(), init.span.end), "");
    }
    Fail(std::move(d));
  }
  for (const auto& [field, type] : info->fields) {
    if (initialized(field, inits.size())) continue;
    Diagnostic d = diag::Make(Kind::kE0214, R(e.span), field, shown);
    d.suggestion = fmt::format("add `{}: <value>` to the struct literal", field);
    // Before the literal's `}` (upstream inserts after it; decision 0047).
    if (std::optional<fixtext::Insertion> at =
            fixtext::LastInBraces(source_.text(), e.span.end, {fmt::format("{}: TODO", field)})) {
      d.fix_patch =
          Patch(fmt::format("add missing field `{}`", field), at->offset, at->offset, at->text);
    }
    Fail(std::move(d));
  }
  for (const ast::FieldInit& init : inits) {
    const Type t = Infer(init.value);
    for (const auto& [field, type] : info->fields) {
      if (field == init.name && !TypesEqual(type, t)) Mismatch(type, t, init.span);
    }
  }
  return result;
}

Type Checker::InferVariant(const Expr& e, std::string_view enum_name, std::string_view variant,
                           std::size_t first_arg) {
  const std::size_t given = e.operands.size() - first_arg;
  const auto unknown_variant = [&](std::string_view shown, const EnumInfo& info) {
    std::vector<std::string_view> names;
    for (const auto& [v, payload] : info.variants) names.push_back(v);
    Diagnostic d = diag::Make(Kind::kE0219, R(e.span), variant, shown);
    if (std::optional<std::string> near = NearName(variant, names)) {
      d.suggestion =
          fmt::format("did you mean `{}`? (enum `{}` has no variant `{}`)", *near, shown, variant);
      // The variant's name only (upstream replaces `E::V(...)` whole; decision 0047).
      const std::string_view text = source_.text().substr(e.span.start, e.span.end - e.span.start);
      const std::size_t colons = text.find("::");
      const std::size_t at = colons == std::string_view::npos ? 0 : text.find(variant, colons);
      if (at != std::string_view::npos) {
        const auto start = e.span.start + static_cast<std::uint32_t>(at);
        d.fix_patch = Patch(fmt::format("rename to `{}`", *near), start,
                            start + static_cast<std::uint32_t>(variant.size()), *near);
      }
    } else {
      d.suggestion = fmt::format("check the variants of `{}` — `{}` is not one", shown, variant);
      d.fix_patch = Patch("replace the variant", e.span.start, e.span.end, "TODO");
    }
    Fail(std::move(d));
  };
  if (const EnumInfo* info = FindEnum(enum_name); info != nullptr) {
    for (const auto& [v, payload] : info->variants) {
      if (v != variant) continue;
      if (payload.size() != given) Arity(payload.size(), given, e.span);
      for (std::size_t i = 0; i < given; ++i) {
        const Expr& arg = e.operands[first_arg + i];
        const Type t = Infer(arg);
        if (!TypesEqual(payload[i], t)) Mismatch(payload[i], t, ast::ExprSpan(arg));
      }
      return info->type;
    }
    unknown_variant(enum_name, *info);
  }
  if (const Template* generic = FindTemplate(enum_name); generic != nullptr && generic->is_enum) {
    const Template& tmpl = *generic;
    const ast::Vec<TypeExpr>* payload = nullptr;
    for (const auto& [v, types] : tmpl.members) {
      if (v == variant) payload = &types;
    }
    if (payload == nullptr) {
      EnumInfo names;
      for (const auto& [v, types] : tmpl.members) names.variants.push_back({v, {}});
      unknown_variant(enum_name, names);
    }
    if (payload->size() != given) Arity(payload->size(), given, e.span);
    std::vector<Type> arg_types;
    for (std::size_t i = 0; i < given; ++i) arg_types.push_back(Infer(e.operands[first_arg + i]));
    std::vector<Type> args;
    for (const std::string& param : tmpl.params) {
      std::optional<Type> bound;
      for (std::size_t i = 0; i < given && !bound; ++i) {
        const TypeExpr& declared = (*payload)[i];
        if (declared.kind == TypeKind::kNamed && declared.name == param) bound = arg_types[i];
      }
      args.push_back(bound.value_or(Type::Unknown()));
    }
    const Type instance = Instantiate(enum_name, tmpl, args);
    const EnumInfo* info = FindEnum(instance);
    for (const auto& [v, types] : info->variants) {
      if (v != variant) continue;
      for (std::size_t i = 0; i < given && i < types.size(); ++i) {
        if (!TypesEqual(types[i], arg_types[i])) {
          Mismatch(types[i], arg_types[i], ast::ExprSpan(e.operands[first_arg + i]));
        }
      }
    }
    return instance;
  }
  Diagnostic d = diag::Make(Kind::kE0218, R(e.span), enum_name);
  d.suggestion = fmt::format("define `enum {} {{ ... }}` or check for typos", enum_name);
  std::string payload;
  for (std::size_t i = 0; i < given; ++i) payload += i == 0 ? "(TODO" : ", TODO";
  if (given > 0) payload += ")";
  AddItem(d, fmt::format("define enum `{}`", enum_name),
          fmt::format("enum {} {{\n    {}{},\n}}", enum_name, variant, payload));
  Fail(std::move(d));
}

// A call of a generic function (§5.6): type arguments inferred left to right from parameters
// declared as a bare type parameter (first binding wins, unresolved ones are `?`); each
// argument must equal its substituted parameter type (span = the call); each bound `T: A`
// needs `impl A for X` for the concrete type X; the result is the substituted return type,
// not monomorphised.
Type Checker::InferGenericCall(const Expr& e, const ast::Function& fn, std::size_t first_arg) {
  const std::size_t given = e.operands.size() - first_arg;
  if (fn.params.size() != given) Arity(fn.params.size(), given, e.span);
  std::vector<Type> args;
  for (std::size_t i = 0; i < given; ++i) args.push_back(Infer(e.operands[i + first_arg]));
  std::map<std::string, Type, std::less<>> subst;
  for (const ast::GenericParam& gp : fn.generic_params) {
    for (std::size_t i = 0; i < given; ++i) {
      const TypeExpr& declared = fn.params[i].ty;
      if (declared.kind == TypeKind::kNamed && declared.name == gp.name) {
        subst.emplace(gp.name, args[i]);
        break;
      }
    }
    subst.emplace(gp.name, Type::Unknown());
  }
  for (std::size_t i = 0; i < given; ++i) {
    const Type expected = Resolve(fn.params[i].ty, e.span, false, &subst);
    if (!TypesEqual(expected, args[i])) Mismatch(expected, args[i], e.span);
  }
  for (const ast::GenericParam& gp : fn.generic_params) {
    const std::string concrete = Display(subst.at(gp.name));
    for (const std::string& bound : gp.bounds) {
      if (trait_impls_.count({bound, concrete}) > 0) continue;
      Diagnostic d = diag::Make(Kind::kE0232, R(e.span), concrete, bound, gp.name);
      d.suggestion = fmt::format(
          "implement trait `{}` for type `{}`, or use a type that already implements it", bound,
          concrete);
      // A module item (upstream inserts it where the call starts, inside a function body).
      // With a stub for each required method, or the block would not conform (E0231) and
      // this error would stay.
      std::string stubs;
      for (const ast::TraitDecl& t : module_.trait_decls) {
        if (t.name != bound) continue;
        for (const ast::TraitMethod& m : t.methods) {
          if (!m.body) stubs += fmt::format("    fn {}() {{\n        TODO\n    }}\n", m.name);
        }
      }
      AddItem(d, fmt::format("implement `{}` for `{}`", bound, concrete),
              fmt::format("impl {} for {} {{\n{}}}", bound, concrete, stubs));
      if (d.fix_patch) d.repair_plan.push_back(RepairStep{"add an impl block", {*d.fix_patch}});
      d.repair_plan.push_back(RepairStep{"write the trait's methods in it", {}});
      Fail(std::move(d));
    }
  }
  return Resolve(fn.return_type, e.span, false, &subst);
}

Type Checker::InferMatch(const Expr& e) {
  const Type scrutinee = Infer(e.operands[0]);
  const ast::Vec<ast::MatchArm>& arms = e.extra->arms;
  if (arms.empty()) Arity(1, 0, e.span);
  // A vector, not a set: a match has a handful of arms, and a set allocated a node per arm.
  std::vector<std::string_view> covered;
  bool wildcard = false;
  Type match_type;
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const ast::MatchArm& arm = arms[i];
    if (arm.pattern.kind == PatternKind::kWildcard) wildcard = true;
    const std::size_t mark = env_.size();
    BindPattern(arm.pattern, scrutinee, &covered, false);
    const Type body = Infer(arm.body);
    env_.resize(mark);
    if (i == 0) {
      match_type = body;
    } else if (!TypesEqual(match_type, body)) {
      Mismatch(match_type, body, arm.span);
    }
  }
  if (scrutinee.tag() == TypeTag::kEnum && !wildcard) {
    const EnumInfo* info = FindEnum(scrutinee);
    std::vector<std::string_view> missing;
    if (info != nullptr) {
      for (const auto& [v, payload] : info->variants) {
        if (std::find(covered.begin(), covered.end(), v) == covered.end()) missing.push_back(v);
      }
    }
    if (!missing.empty()) {
      std::string quoted, plain;
      std::vector<std::string> arms_text;
      for (std::size_t i = 0; i < missing.size(); ++i) {
        quoted += fmt::format("{}\"{}\"", i == 0 ? "" : ", ", missing[i]);
        plain += fmt::format("{}{}", i == 0 ? "" : ", ", missing[i]);
        // A variant with a payload is matched as `V(_, ...)`.
        std::string pattern(missing[i]);
        for (const auto& [v, payload] : info->variants) {
          if (v != missing[i] || payload.empty()) continue;
          for (std::size_t k = 0; k < payload.size(); ++k) pattern += k == 0 ? "(_" : ", _";
          pattern += ")";
        }
        arms_text.push_back(fmt::format("{} => {{ TODO }}", pattern));
      }
      Diagnostic d =
          diag::Make(Kind::kE0220, R(e.span), scrutinee.name(), fmt::format("[{}]", quoted));
      d.suggestion = fmt::format("add match arms for: {}", plain);
      // Before the match's `}` (upstream inserts after it; decision 0047).
      if (std::optional<fixtext::Insertion> at =
              fixtext::LastInBraces(source_.text(), e.span.end, arms_text)) {
        const FixPatch insert =
            Patch("add the missing match arms", at->offset, at->offset, at->text);
        d.fix_patch = insert;
        d.repair_plan.push_back(RepairStep{"add an arm for each missing variant", {insert}});
      }
      d.repair_plan.push_back(RepairStep{"replace each TODO with the arm's value", {}});
      Fail(std::move(d));
    }
  }
  return match_type;
}

}  // namespace

CheckResult RunChecker(const SourceBuffer& source, const ast::Module& module,
                       const CheckOptions& options) {
  Checker checker(source, module, options);
  CheckResult result = checker.Run();
  // A registration phase can report several errors before Run() looks at fail_fast.
  if (options.fail_fast && result.diagnostics.size() > 1) result.diagnostics.resize(1);
  return result;
}

}  // namespace trove::kodo::sema::internal

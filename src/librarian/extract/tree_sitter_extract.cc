#include "librarian/extract/tree_sitter_extract.h"

#include <fmt/format.h>
#include <tree_sitter/api.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "librarian/extract/grammars.h"
#include "librarian/extract/parse_table_cache.h"
#include "librarian/extract/text_util.h"

namespace trove::librarian::extract::internal {
namespace {

// How many nodes are visited between deadline and cancellation checks.
constexpr std::uint32_t kCheckEvery = 4096;

std::int64_t NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What the enclosing definition is, for method/function decisions and name prefixes.
enum class Container : std::uint8_t { kNone, kNamespace, kClass, kImpl, kTrait, kCallable };

struct Ctx {
  std::string prefix;  // qualified name of the enclosing scope ("" at top level)
  std::int32_t parent = -1;
  std::int32_t callable = -1;
  Container container = Container::kNone;
};

// A definition recognized at a node.
struct Def {
  SymbolKind kind;
  std::string name;
  std::string qualified;  // full qualified name
  TSNode span;            // node whose range is the symbol's span
  TSNode body;            // may be null: the signature then ends at the first line's end
  Container inner;        // container kind for the children
};

bool Is(TSNode n, std::string_view type) { return !ts_node_is_null(n) && ts_node_type(n) == type; }
std::string_view Type(TSNode n) { return ts_node_type(n); }

TSNode Field(TSNode n, std::string_view name) {
  return ts_node_child_by_field_name(n, name.data(), static_cast<std::uint32_t>(name.size()));
}

class Walker {
 public:
  Walker(std::string_view src, Language lang, FileFacts& facts, std::int64_t deadline,
         const base::Cancellation* cancel)
      : src_(src), lang_(lang), facts_(facts), deadline_(deadline), cancel_(cancel) {}

  // Walks the tree depth-first with one cursor, without recursion, so no nesting depth can
  // exhaust the stack, and each step is O(1) (ts_node_named_child(node, i) is O(i)).
  Status Run(TSNode root) {
    ctxs_.assign(1, Ctx{});  // 0: top level
    TSTreeCursor cursor = ts_tree_cursor_new(root);
    // stack[d]: the index in ctxs_ of the scope that the children of the node at depth d see.
    std::vector<std::uint32_t> stack;
    for (;;) {
      std::uint32_t scope = stack.empty() ? 0 : stack.back();
      std::uint32_t inner = Enter(ts_tree_cursor_current_node(&cursor), scope);
      if (!status_.ok()) break;
      TSNode current = ts_tree_cursor_current_node(&cursor);
      if (ts_tree_cursor_goto_first_child(&cursor)) {
        stack.push_back(inner);
        path_.push_back(current);
        continue;
      }
      bool done = false;
      while (!ts_tree_cursor_goto_next_sibling(&cursor)) {
        if (!ts_tree_cursor_goto_parent(&cursor)) {
          done = true;
          break;
        }
        stack.pop_back();
        path_.pop_back();
      }
      if (done) break;
    }
    ts_tree_cursor_delete(&cursor);
    return status_;
  }

 private:
  // Returns the parent of `n`, which must be the node being entered or one of its ancestors
  // (ts_node_parent searches down from the root on every call).
  TSNode ParentOf(TSNode n) const {
    for (std::size_t i = path_.size(); i-- > 0;) {
      if (ts_node_eq(path_[i], n)) return i > 0 ? path_[i - 1] : TSNode{};
    }
    return path_.empty() ? TSNode{} : path_.back();
  }

  bool IsC() const { return lang_ == Language::kC || lang_ == Language::kCpp; }
  bool IsJs() const {
    return lang_ == Language::kJavaScript || lang_ == Language::kTypeScript ||
           lang_ == Language::kTsx;
  }
  std::string_view Sep() const {
    return (IsC() || lang_ == Language::kRust) ? std::string_view("::") : std::string_view(".");
  }
  std::string Join(const std::string& prefix, std::string_view name) const {
    if (prefix.empty()) return std::string(name);
    return prefix + std::string(Sep()) + std::string(name);
  }

  std::string_view Text(TSNode n) const {
    std::uint32_t b = ts_node_start_byte(n), e = ts_node_end_byte(n);
    if (b > src_.size() || e > src_.size() || e < b) return {};
    return src_.substr(b, e - b);
  }
  static std::uint32_t Line(TSPoint p) { return p.row + 1; }
  static std::uint32_t EndLine(TSNode n) {
    TSPoint s = ts_node_start_point(n), e = ts_node_end_point(n);
    // A node ending at column 0 ends on the previous line (its last byte is a newline).
    if (e.column == 0 && e.row > s.row) return e.row;
    return e.row + 1;
  }

  bool CheckBudget() {
    if (!status_.ok()) return false;
    if (++visited_ % kCheckEvery != 0) return true;
    if (cancel_ != nullptr && cancel_->requested()) {
      status_ = Status::Cancelled("extraction cancelled");
      return false;
    }
    if (deadline_ != 0 && NowMicros() > deadline_) {
      status_ = Status::DeadlineExceeded("extraction exceeded the file time limit");
      return false;
    }
    return true;
  }

  // Handles one node seen in scope ctxs_[scope]; returns the scope its children see.
  std::uint32_t Enter(TSNode node, std::uint32_t scope) {
    if (!CheckBudget() || !ts_node_is_named(node)) return scope;
    std::optional<Def> def = Classify(node, ctxs_[scope]);
    if (def) {
      std::int32_t index = AddSymbol(*def, ctxs_[scope]);
      Ctx inner;
      inner.prefix = def->qualified;
      inner.parent = index;
      inner.container = def->inner;
      inner.callable = IsCallable(def->kind) ? index : ctxs_[scope].callable;
      ctxs_.push_back(std::move(inner));
      return static_cast<std::uint32_t>(ctxs_.size() - 1);
    }
    References(node, ctxs_[scope]);
    // Scopes that are not symbols but name their children.
    if (lang_ == Language::kRust && Is(node, "impl_item")) {
      Ctx inner = ctxs_[scope];
      std::string type = RustTypeName(Field(node, "type"));
      if (!type.empty()) inner.prefix = Join(inner.prefix, type);
      inner.container = Container::kImpl;
      ctxs_.push_back(std::move(inner));
      return static_cast<std::uint32_t>(ctxs_.size() - 1);
    }
    return scope;
  }

  std::int32_t AddSymbol(const Def& def, const Ctx& ctx) {
    Symbol s;
    s.name = def.name;
    s.qualified_name = def.qualified;
    s.kind = def.kind;
    s.start_line = Line(ts_node_start_point(def.span));
    s.end_line = EndLine(def.span);
    s.start_byte = ts_node_start_byte(def.span);
    s.end_byte = ts_node_end_byte(def.span);
    s.signature = Signature(def);
    s.doc = Doc(def);
    s.parent = ctx.parent;
    s.parse_error = ts_node_has_error(def.span);
    facts_.symbols.push_back(std::move(s));
    return static_cast<std::int32_t>(facts_.symbols.size() - 1);
  }

  std::string Signature(const Def& def) const {
    std::uint32_t start = ts_node_start_byte(def.span);
    std::uint32_t end = ts_node_end_byte(def.span);
    if (!ts_node_is_null(def.body) && ts_node_start_byte(def.body) >= start) {
      end = ts_node_start_byte(def.body);
    } else {
      std::size_t eol = src_.find('\n', start);
      if (eol != std::string_view::npos && eol < end) end = static_cast<std::uint32_t>(eol);
    }
    std::string sig = CollapseSpace(src_.substr(start, end - start));
    while (!sig.empty() && (sig.back() == '{' || sig.back() == ':' || sig.back() == ' ')) {
      sig.pop_back();
    }
    return TruncateUtf8(std::move(sig), 240);
  }

  // ---- doc comments --------------------------------------------------------------------

  static bool IsComment(TSNode n) {
    std::string_view t = Type(n);
    return t == "comment" || t == "line_comment" || t == "block_comment";
  }

  std::string Doc(const Def& def) const {
    if (lang_ == Language::kPython && !ts_node_is_null(def.body)) {
      TSNode first = ts_node_named_child(def.body, 0);
      if (Is(first, "expression_statement")) {
        TSNode str = ts_node_named_child(first, 0);
        if (Is(str, "string")) return FirstSentence(StripDocstring(Text(str)));
      }
    }
    // Climb wrappers that carry no text of their own above the definition.
    TSNode anchor = def.span;
    for (;;) {
      TSNode parent = ParentOf(anchor);
      if (ts_node_is_null(parent)) break;
      std::string_view t = Type(parent);
      if (t == "template_declaration" || t == "decorated_definition" || t == "export_statement" ||
          t == "lexical_declaration" || t == "variable_declaration" ||
          (t == "type_declaration" && lang_ == Language::kGo)) {
        anchor = parent;
      } else {
        break;
      }
    }
    std::vector<TSNode> comments;
    std::uint32_t row = ts_node_start_point(anchor).row;
    for (TSNode prev = ts_node_prev_named_sibling(anchor); !ts_node_is_null(prev);
         prev = ts_node_prev_named_sibling(prev)) {
      if (Is(prev, "attribute_item")) {  // Rust #[...] between the doc and the item
        row = ts_node_start_point(prev).row;
        continue;
      }
      // EndLine: some grammars (Rust) end a line comment after its newline.
      if (!IsComment(prev) || EndLine(prev) != row) break;
      comments.push_back(prev);
      row = ts_node_start_point(prev).row;
    }
    if (comments.empty()) return {};
    std::string text;
    for (auto it = comments.rbegin(); it != comments.rend(); ++it) {
      if (!text.empty()) text.push_back(' ');
      text += StripComment(Text(*it));
    }
    return FirstSentence(text);
  }

  // ---- references ----------------------------------------------------------------------

  void AddCall(std::string_view name, TSNode at, const Ctx& ctx) {
    if (name.empty()) return;
    // C++ casts parse as calls of a template function; they call nothing.
    if (IsC() && (name == "static_cast" || name == "dynamic_cast" || name == "const_cast" ||
                  name == "reinterpret_cast")) {
      return;
    }
    facts_.calls.push_back(CallRef{std::string(name), Line(ts_node_start_point(at)), ctx.callable});
  }
  void AddImport(std::string_view module, TSNode at) {
    std::string m = StripQuotes(CollapseSpace(module));
    if (m.empty()) return;
    facts_.imports.push_back(Import{std::move(m), Line(ts_node_start_point(at))});
  }

  // The last simple name of a callee expression.
  std::string_view CalleeName(TSNode fn) const {
    if (ts_node_is_null(fn)) return {};
    std::string_view t = Type(fn);
    if (t == "identifier" || t == "field_identifier" || t == "property_identifier" ||
        t == "type_identifier" || t == "private_property_identifier") {
      return Text(fn);
    }
    if (t == "field_expression") return CalleeName(Field(fn, "field"));  // C, C++, Rust
    if (t == "member_expression") return CalleeName(Field(fn, "property"));
    if (t == "selector_expression") return CalleeName(Field(fn, "field"));
    if (t == "attribute") return CalleeName(Field(fn, "attribute"));
    if (t == "qualified_identifier" || t == "scoped_identifier") {
      return CalleeName(Field(fn, "name"));
    }
    if (t == "template_function" || t == "template_method") return CalleeName(Field(fn, "name"));
    if (t == "generic_function") return CalleeName(Field(fn, "function"));
    if (t == "generic_type") return CalleeName(ts_node_named_child(fn, 0));
    if (t == "scoped_type_identifier") return CalleeName(Field(fn, "name"));
    return {};
  }

  void References(TSNode node, const Ctx& ctx) {
    std::string_view t = Type(node);
    switch (lang_) {
      case Language::kC:
      case Language::kCpp:
        if (t == "call_expression") {
          AddCall(CalleeName(Field(node, "function")), node, ctx);
        } else if (t == "preproc_include") {
          AddImport(Text(Field(node, "path")), node);
        }
        break;
      case Language::kPython:
        if (t == "call") {
          AddCall(CalleeName(Field(node, "function")), node, ctx);
        } else if (t == "import_statement") {
          std::uint32_t n = ts_node_named_child_count(node);
          for (std::uint32_t i = 0; i < n; ++i) {
            TSNode c = ts_node_named_child(node, i);
            if (Is(c, "aliased_import")) c = Field(c, "name");
            AddImport(Text(c), node);
          }
        } else if (t == "import_from_statement") {
          AddImport(Text(Field(node, "module_name")), node);
        }
        break;
      case Language::kJavaScript:
      case Language::kTypeScript:
      case Language::kTsx:
        if (t == "call_expression") {
          TSNode fn = Field(node, "function");
          if (Is(fn, "identifier") && Text(fn) == "require") {
            TSNode arg = ts_node_named_child(Field(node, "arguments"), 0);
            if (Is(arg, "string")) AddImport(Text(arg), node);
          }
          AddCall(CalleeName(fn), node, ctx);
        } else if (t == "new_expression") {
          AddCall(CalleeName(Field(node, "constructor")), node, ctx);
        } else if (t == "import_statement" || t == "export_statement") {
          TSNode source = Field(node, "source");
          if (!ts_node_is_null(source)) AddImport(Text(source), node);
        }
        break;
      case Language::kGo:
        if (t == "call_expression") {
          AddCall(CalleeName(Field(node, "function")), node, ctx);
        } else if (t == "import_spec") {
          AddImport(Text(Field(node, "path")), node);
        }
        break;
      case Language::kRust:
        if (t == "call_expression") {
          AddCall(CalleeName(Field(node, "function")), node, ctx);
        } else if (t == "use_declaration") {
          AddImport(Text(Field(node, "argument")), node);
        } else if (t == "extern_crate_declaration") {
          AddImport(Text(Field(node, "name")), node);
        }
        break;
      case Language::kJava:
        if (t == "method_invocation") {
          AddCall(CalleeName(Field(node, "name")), node, ctx);
        } else if (t == "object_creation_expression") {
          AddCall(CalleeName(Field(node, "type")), node, ctx);
        } else if (t == "import_declaration") {
          std::string_view text = Text(node);
          auto strip = [&text](std::string_view word) {
            while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
              text.remove_prefix(1);
            }
            if (text.substr(0, word.size()) == word) text.remove_prefix(word.size());
          };
          strip("import");
          strip(" ");
          strip("static");
          while (!text.empty() && (text.back() == ';' || text.back() == ' ')) text.remove_suffix(1);
          AddImport(text, node);
        }
        break;
      case Language::kCtags:
      case Language::kText:
        break;
    }
  }

  // ---- definitions ---------------------------------------------------------------------

  std::optional<Def> Classify(TSNode node, const Ctx& ctx) {
    switch (lang_) {
      case Language::kC:
      case Language::kCpp:
        return ClassifyC(node, ctx);
      case Language::kPython:
        return ClassifyPython(node, ctx);
      case Language::kJavaScript:
      case Language::kTypeScript:
      case Language::kTsx:
        return ClassifyJs(node, ctx);
      case Language::kGo:
        return ClassifyGo(node, ctx);
      case Language::kRust:
        return ClassifyRust(node, ctx);
      case Language::kJava:
        return ClassifyJava(node, ctx);
      case Language::kCtags:
      case Language::kText:
        break;
    }
    return std::nullopt;
  }

  Def Make(SymbolKind kind, std::string_view name, const Ctx& ctx, TSNode span, TSNode body,
           Container inner) const {
    return Def{kind, std::string(name), Join(ctx.prefix, name), span, body, inner};
  }

  // C and C++.
  std::optional<Def> ClassifyC(TSNode node, const Ctx& ctx) {
    std::string_view t = Type(node);
    if (t == "function_definition") {
      // Follow the declarator chain to the function_declarator, then to its name.
      TSNode d = Field(node, "declarator");
      int guard = 0;
      while (!ts_node_is_null(d) && !Is(d, "function_declarator") && ++guard < 64) {
        d = Field(d, "declarator");
      }
      if (ts_node_is_null(d)) return std::nullopt;
      TSNode name_node = Field(d, "declarator");
      if (ts_node_is_null(name_node)) return std::nullopt;
      std::string full = RemoveSpace(Text(name_node));
      if (Is(name_node, "template_function")) {
        full = RemoveSpace(Text(Field(name_node, "name")));
      }
      if (full.empty()) return std::nullopt;
      // `scope::name`: split at the last `::` outside template arguments.
      std::string scope, name = full;
      if (Is(name_node, "qualified_identifier")) {
        std::size_t cut = LastScopeSeparator(full);
        if (cut != std::string::npos) {
          scope = full.substr(0, cut);
          name = full.substr(cut + 2);
        }
      }
      name = StripTemplateArgs(name);
      SymbolKind kind = SymbolKind::kFunction;
      if (ctx.container == Container::kClass) {
        kind = SymbolKind::kMethod;
      } else if (!scope.empty()) {
        std::string last = StripTemplateArgs(scope.substr(
            LastScopeSeparator(scope) == std::string::npos ? 0 : LastScopeSeparator(scope) + 2));
        // Out-of-line members: `Widget::size`, `ns::Widget::~Widget`. A scope this file
        // declares as a namespace makes it a free function.
        kind = namespaces_.count(last) != 0 && last != name ? SymbolKind::kFunction
                                                            : SymbolKind::kMethod;
      }
      std::string qualified = Join(ctx.prefix, scope.empty() ? name : scope + "::" + name);
      return Def{kind, name, qualified, node, Field(node, "body"), Container::kCallable};
    }
    if (t == "class_specifier" || t == "struct_specifier" || t == "union_specifier" ||
        t == "enum_specifier") {
      TSNode body = Field(node, "body");
      TSNode name = Field(node, "name");
      if (ts_node_is_null(body) || ts_node_is_null(name)) return std::nullopt;
      SymbolKind kind = t == "class_specifier"  ? SymbolKind::kClass
                        : t == "enum_specifier" ? SymbolKind::kEnum
                                                : SymbolKind::kStruct;
      std::string n = StripTemplateArgs(RemoveSpace(Text(name)));
      return Make(kind, n, ctx, node, body, Container::kClass);
    }
    if (t == "namespace_definition") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;  // anonymous: children stay in scope
      std::string n = RemoveSpace(Text(name));
      std::size_t cut = LastScopeSeparator(n);
      namespaces_.insert(cut == std::string::npos ? n : n.substr(cut + 2));
      return Make(SymbolKind::kNamespace, n, ctx, node, Field(node, "body"), Container::kNamespace);
    }
    if (t == "type_definition") {
      // typedef ... Name; the last declarator names the alias (pointer chains unwrapped).
      TSNode d = Field(node, "declarator");
      int guard = 0;
      while (!ts_node_is_null(d) && !Is(d, "type_identifier") && ++guard < 64) {
        TSNode next = Field(d, "declarator");
        // parenthesized_declarator, as in `typedef int (*visit_fn)(int);`, has no field.
        if (ts_node_is_null(next)) next = ts_node_named_child(d, 0);
        if (ts_node_is_null(next)) break;
        d = next;
      }
      if (!Is(d, "type_identifier")) return std::nullopt;
      // The anonymous struct of `typedef struct {...} Name;` is visited as a child.
      return Make(SymbolKind::kTypeAlias, Text(d), ctx, node, TSNode{}, ctx.container);
    }
    if (t == "alias_declaration") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      return Make(SymbolKind::kTypeAlias, Text(name), ctx, node, TSNode{}, ctx.container);
    }
    return std::nullopt;
  }

  std::optional<Def> ClassifyPython(TSNode node, const Ctx& ctx) {
    std::string_view t = Type(node);
    if (t == "function_definition") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      SymbolKind kind =
          ctx.container == Container::kClass ? SymbolKind::kMethod : SymbolKind::kFunction;
      return Make(kind, Text(name), ctx, node, Field(node, "body"), Container::kCallable);
    }
    if (t == "class_definition") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      return Make(SymbolKind::kClass, Text(name), ctx, node, Field(node, "body"),
                  Container::kClass);
    }
    return std::nullopt;
  }

  std::optional<Def> ClassifyJs(TSNode node, const Ctx& ctx) {
    std::string_view t = Type(node);
    if (t == "function_declaration" || t == "generator_function_declaration") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      SymbolKind kind =
          ctx.container == Container::kClass ? SymbolKind::kMethod : SymbolKind::kFunction;
      return Make(kind, Text(name), ctx, node, Field(node, "body"), Container::kCallable);
    }
    if (t == "method_definition") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      return Make(SymbolKind::kMethod, Text(name), ctx, node, Field(node, "body"),
                  Container::kCallable);
    }
    if (t == "class_declaration" || t == "abstract_class_declaration" || t == "class") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      return Make(SymbolKind::kClass, Text(name), ctx, node, Field(node, "body"),
                  Container::kClass);
    }
    if (t == "variable_declarator" || t == "field_definition" || t == "public_field_definition") {
      TSNode value = Field(node, "value");
      if (!Is(value, "arrow_function") && !Is(value, "function_expression") &&
          !Is(value, "function") && !Is(value, "generator_function")) {
        return std::nullopt;
      }
      TSNode name = t == "field_definition" ? Field(node, "property") : Field(node, "name");
      if (!Is(name, "identifier") && !Is(name, "property_identifier") &&
          !Is(name, "private_property_identifier")) {
        return std::nullopt;
      }
      SymbolKind kind = t == "variable_declarator" ? SymbolKind::kFunction : SymbolKind::kMethod;
      return Make(kind, Text(name), ctx, node, Field(value, "body"), Container::kCallable);
    }
    if (t == "interface_declaration") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      return Make(SymbolKind::kInterface, Text(name), ctx, node, Field(node, "body"),
                  Container::kTrait);
    }
    if (t == "type_alias_declaration") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      return Make(SymbolKind::kTypeAlias, Text(name), ctx, node, TSNode{}, ctx.container);
    }
    if (t == "enum_declaration") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      return Make(SymbolKind::kEnum, Text(name), ctx, node, Field(node, "body"), Container::kClass);
    }
    if (t == "internal_module" || t == "module") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      return Make(SymbolKind::kNamespace, StripQuotes(std::string(Text(name))), ctx, node,
                  Field(node, "body"), Container::kNamespace);
    }
    return std::nullopt;
  }

  std::optional<Def> ClassifyGo(TSNode node, const Ctx& ctx) {
    std::string_view t = Type(node);
    if (t == "function_declaration") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      return Make(SymbolKind::kFunction, Text(name), ctx, node, Field(node, "body"),
                  Container::kCallable);
    }
    if (t == "method_declaration") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      std::string recv = GoReceiverType(Field(node, "receiver"));
      Def def = Make(SymbolKind::kMethod, Text(name), ctx, node, Field(node, "body"),
                     Container::kCallable);
      if (!recv.empty()) def.qualified = Join(Join(ctx.prefix, recv), Text(name));
      return def;
    }
    if (t == "type_spec" || t == "type_alias") {
      TSNode name = Field(node, "name");
      if (ts_node_is_null(name)) return std::nullopt;
      TSNode type = Field(node, "type");
      SymbolKind kind = t == "type_alias"            ? SymbolKind::kTypeAlias
                        : Is(type, "struct_type")    ? SymbolKind::kStruct
                        : Is(type, "interface_type") ? SymbolKind::kInterface
                                                     : SymbolKind::kTypeAlias;
      // `type X struct {...}` alone: the span starts at `type`.
      TSNode span = node;
      TSNode parent = ParentOf(node);
      if (Is(parent, "type_declaration") && ts_node_named_child_count(parent) == 1) span = parent;
      return Make(kind, Text(name), ctx, span, type, Container::kClass);
    }
    return std::nullopt;
  }

  std::string GoReceiverType(TSNode params) const {
    TSNode param = ts_node_named_child(params, 0);
    if (!Is(param, "parameter_declaration")) return {};
    TSNode type = Field(param, "type");
    if (Is(type, "pointer_type")) type = ts_node_named_child(type, 0);
    if (Is(type, "generic_type")) type = Field(type, "type");
    if (!Is(type, "type_identifier")) return {};
    return std::string(Text(type));
  }

  std::string RustTypeName(TSNode type) const {
    if (ts_node_is_null(type)) return {};
    if (Is(type, "generic_type")) return RustTypeName(Field(type, "type"));
    if (Is(type, "scoped_type_identifier")) return RustTypeName(Field(type, "name"));
    if (Is(type, "reference_type")) return RustTypeName(Field(type, "type"));
    if (Is(type, "type_identifier") || Is(type, "primitive_type")) return std::string(Text(type));
    return RemoveSpace(Text(type));
  }

  std::optional<Def> ClassifyRust(TSNode node, const Ctx& ctx) {
    std::string_view t = Type(node);
    TSNode name = Field(node, "name");
    if (t == "function_item") {
      if (ts_node_is_null(name)) return std::nullopt;
      SymbolKind kind = ctx.container == Container::kImpl || ctx.container == Container::kTrait
                            ? SymbolKind::kMethod
                            : SymbolKind::kFunction;
      return Make(kind, Text(name), ctx, node, Field(node, "body"), Container::kCallable);
    }
    if (ts_node_is_null(name)) return std::nullopt;
    if (t == "struct_item" || t == "union_item") {
      return Make(SymbolKind::kStruct, Text(name), ctx, node, Field(node, "body"),
                  Container::kClass);
    }
    if (t == "enum_item") {
      return Make(SymbolKind::kEnum, Text(name), ctx, node, Field(node, "body"), Container::kClass);
    }
    if (t == "trait_item") {
      return Make(SymbolKind::kInterface, Text(name), ctx, node, Field(node, "body"),
                  Container::kTrait);
    }
    if (t == "type_item") {
      return Make(SymbolKind::kTypeAlias, Text(name), ctx, node, TSNode{}, ctx.container);
    }
    if (t == "mod_item" && !ts_node_is_null(Field(node, "body"))) {
      return Make(SymbolKind::kNamespace, Text(name), ctx, node, Field(node, "body"),
                  Container::kNamespace);
    }
    return std::nullopt;
  }

  std::optional<Def> ClassifyJava(TSNode node, const Ctx& ctx) {
    std::string_view t = Type(node);
    TSNode name = Field(node, "name");
    if (ts_node_is_null(name)) return std::nullopt;
    if (t == "class_declaration" || t == "record_declaration") {
      return Make(SymbolKind::kClass, Text(name), ctx, node, Field(node, "body"),
                  Container::kClass);
    }
    if (t == "interface_declaration" || t == "annotation_type_declaration") {
      return Make(SymbolKind::kInterface, Text(name), ctx, node, Field(node, "body"),
                  Container::kTrait);
    }
    if (t == "enum_declaration") {
      return Make(SymbolKind::kEnum, Text(name), ctx, node, Field(node, "body"), Container::kClass);
    }
    if (t == "method_declaration" || t == "constructor_declaration" ||
        t == "compact_constructor_declaration") {
      // Interface methods without a body are declarations, not definitions.
      if (ts_node_is_null(Field(node, "body"))) return std::nullopt;
      return Make(SymbolKind::kMethod, Text(name), ctx, node, Field(node, "body"),
                  Container::kCallable);
    }
    return std::nullopt;
  }

  // ---- state ---------------------------------------------------------------------------

  std::string_view src_;
  Language lang_;
  FileFacts& facts_;
  std::int64_t deadline_;
  const base::Cancellation* cancel_;
  Status status_;
  std::uint32_t visited_ = 0;
  std::vector<Ctx> ctxs_;                       // scopes; children refer to them by index
  std::vector<TSNode> path_;                    // ancestors of the node being entered, root first
  std::unordered_set<std::string> namespaces_;  // C++ namespace names seen in this file
};

}  // namespace

TreeSitterExtractor::TreeSitterExtractor() : parser_(ts_parser_new()) {}
TreeSitterExtractor::~TreeSitterExtractor() { ts_parser_delete(parser_); }

void TreeSitterExtractor::OverrideGrammarForTesting(Language language, const TSLanguage* grammar) {
  if (FindGrammar(language) != nullptr) overrides_[static_cast<int>(language)] = grammar;
}

Result<FileFacts> TreeSitterExtractor::Extract(std::string_view content, Language language,
                                               std::int64_t timeout_micros,
                                               const base::Cancellation* cancel) {
  const GrammarInfo* grammar = FindGrammar(language);
  if (grammar == nullptr) {
    return Status::InvalidArgument(
        fmt::format("no tree-sitter grammar for {}", LanguageName(language)));
  }
  const TSLanguage* ts_language = grammar->load();
  if (const TSLanguage* o = overrides_[static_cast<int>(language)]) ts_language = o;
  if (!ts_parser_set_language(parser_, ts_language)) {
    return Status::Unsupported(fmt::format(
        "tree-sitter: grammar {}@{} has ABI {}, outside the core's {}..{}", grammar->name,
        grammar->version, ts_language_version(ts_language), CoreMinAbi(), CoreMaxAbi()));
  }
  if (content.size() > UINT32_MAX) return Status::ResourceExhausted("file too large to parse");
  PrepareParseTable(ts_language);  // dense action lookups (parse_table_cache.h)
  std::int64_t start = NowMicros();
  ts_parser_reset(parser_);
  ts_parser_set_timeout_micros(parser_,
                               timeout_micros > 0 ? static_cast<std::uint64_t>(timeout_micros) : 0);
  TSTree* tree = ts_parser_parse_string(parser_, nullptr, content.data(),
                                        static_cast<std::uint32_t>(content.size()));
  if (tree == nullptr) {
    ts_parser_reset(parser_);
    return Status::DeadlineExceeded(fmt::format(
        "tree-sitter: parse exceeded the file time limit of {} ms", timeout_micros / 1000));
  }
  FileFacts facts;
  facts.language = std::string(grammar->name);
  facts.extractor = fmt::format("tree-sitter:{}@{}", grammar->name, grammar->version);
  TSNode root = ts_tree_root_node(tree);
  facts.parse_error = ts_node_has_error(root);
  Walker walker(content, language, facts, timeout_micros > 0 ? start + timeout_micros : 0, cancel);
  Status status = walker.Run(root);
  ts_tree_delete(tree);
  if (!status.ok()) return status;
  return facts;
}

}  // namespace trove::librarian::extract::internal

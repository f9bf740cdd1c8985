#include "warden/glue/glue.h"

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "warden/glue/js_lexer.h"

namespace trove::warden::glue {
namespace {

// Recent tokens the matchers look back over. The longest pattern (a chain of assignments
// ending in an export reference) needs about 5 tokens per link.
constexpr std::size_t kWindow = 64;
// Exports objects tracked at once (innermost last); older ones are forgotten.
constexpr std::size_t kMaxAliases = 64;

bool IsPunct(const Token& t, std::string_view p) {
  // Compares the first byte inline: most tokens differ there, and memcmp calls dominated.
  return t.kind == TokenKind::kPunct && t.text.size() == p.size() && t.text[0] == p[0] &&
         (p.size() == 1 || t.text == p);
}
bool IsIdent(const Token& t) { return t.kind == TokenKind::kIdentifier; }
bool IsIdent(const Token& t, std::string_view name) {
  return t.kind == TokenKind::kIdentifier && t.text == name;
}
bool IsMemberDot(const Token& t) { return IsPunct(t, ".") || IsPunct(t, "?."); }

// Reserved words that cannot be assignment targets or function names.
bool IsKeyword(std::string_view s) {
  static constexpr std::array<std::string_view, 36> kKeywords = {
      "break",    "case",  "catch",  "class",  "const",      "continue", "debugger", "default",
      "delete",   "do",    "else",   "export", "extends",    "false",    "finally",  "for",
      "function", "if",    "import", "in",     "instanceof", "let",      "new",      "null",
      "return",   "super", "switch", "this",   "throw",      "true",     "try",      "typeof",
      "var",      "void",  "while",  "with"};
  return std::find(kKeywords.begin(), kKeywords.end(), s) != kKeywords.end();
}

// A ring of the last kWindow tokens; Back(0) is the newest. Reads beyond the window give a
// kEnd token, which matches no pattern.
class Window {
 public:
  void Push(const Token& t) {
    ring_[next_] = t;
    next_ = (next_ + 1) % kWindow;
    if (count_ < kWindow) ++count_;
  }
  const Token& Back(std::size_t i) const {
    if (i >= count_) return end_;
    return ring_[(next_ + kWindow - 1 - i) % kWindow];
  }

 private:
  std::array<Token, kWindow> ring_{};
  std::size_t next_ = 0;
  std::size_t count_ = 0;
  Token end_{};
};

// Collects the properties of one object literal, token by token, from just after its `{`.
class ObjectCollector {
 public:
  struct Literal {
    std::string name;  // the variable it is assigned to
    std::size_t offset = 0;
    std::vector<ImportBinding> properties;
  };

  bool active() const { return active_; }

  void Start(std::string_view name, std::size_t offset) {
    active_ = true;
    literal_ = Literal{std::string(name), offset, {}};
    state_ = State::kKey;
    nest_ = 0;
  }

  // Feeds the next token; returns true when the literal ended (then Take() it).
  bool Feed(const Token& t) {
    if (t.kind == TokenKind::kEnd) return Finish();
    switch (state_) {
      case State::kKey:
        if (IsPunct(t, "}")) return Finish();
        if (IsPunct(t, ",")) return false;
        if (t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kString ||
            t.kind == TokenKind::kNumber) {
          key_ = t;
          key_valid_ = true;
          state_ = State::kColon;
          return false;
        }
        key_valid_ = false;  // computed key, spread, ...
        state_ = State::kValue;
        value_tokens_ = 0;
        return FeedValue(t);
      case State::kColon:
        if (IsPunct(t, ":")) {
          state_ = State::kValue;
          value_tokens_ = 0;
          return false;
        }
        if (IsPunct(t, ",") || IsPunct(t, "}")) {  // shorthand `{a, b}`
          if (key_.kind == TokenKind::kIdentifier) Add(key_.text);
          if (IsPunct(t, "}")) return Finish();
          state_ = State::kKey;
          return false;
        }
        key_valid_ = false;  // a method or accessor
        state_ = State::kValue;
        value_tokens_ = 0;
        return FeedValue(t);
      case State::kValue:
        return FeedValue(t);
    }
    return false;
  }

  Literal Take() { return std::move(literal_); }

 private:
  enum class State : std::uint8_t { kKey, kColon, kValue };

  bool FeedValue(const Token& t) {
    if (nest_ == 0 && (IsPunct(t, ",") || IsPunct(t, "}"))) {
      if (key_valid_) {
        Add(value_tokens_ == 1 && first_value_.kind == TokenKind::kIdentifier ? first_value_.text
                                                                              : "");
      }
      if (IsPunct(t, "}")) return Finish();
      state_ = State::kKey;
      return false;
    }
    if (++value_tokens_ == 1) first_value_ = t;
    if (IsPunct(t, "(") || IsPunct(t, "[") || IsPunct(t, "{")) {
      ++nest_;
    } else if ((IsPunct(t, ")") || IsPunct(t, "]") || IsPunct(t, "}")) && nest_ > 0) {
      --nest_;
    }
    return false;
  }

  void Add(std::string_view js_name) {
    literal_.properties.push_back(
        ImportBinding{std::string(key_.text), std::string(js_name), key_.offset});
  }

  bool Finish() {
    active_ = false;
    return true;
  }

  bool active_ = false;
  Literal literal_;
  State state_ = State::kKey;
  std::size_t nest_ = 0;
  Token key_;
  bool key_valid_ = false;
  Token first_value_;
  std::size_t value_tokens_ = 0;
};

// What the first pass learns for the second.
struct Names {
  // Import-object names with strong evidence (passed as "env" or "wasi_snapshot_preview1", or
  // a well-known name) and weak evidence (`{a: X}`).
  std::set<std::string, std::less<>> strong_import_objects = {"wasmImports", "asmLibraryArg"};
  std::set<std::string, std::less<>> weak_import_objects;
  std::map<std::string, std::set<std::string>, std::less<>> modules_by_object;
  // Functions called with an exports object as their only argument.
  std::set<std::string, std::less<>> assign_functions = {"assignWasmExports"};
};

bool IsDynCallSignature(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == 'v' || c == 'i' || c == 'j' || c == 'f' || c == 'd' || c == 'p' || c == 'e';
  });
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool StartsWithNoCase(std::string_view s, std::size_t at, std::string_view prefix) {
  if (s.size() - at < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (Lower(s[at + i]) != prefix[i]) return false;
  }
  return true;
}

// One scanning pass.
class Scanner {
 public:
  Scanner(std::string_view js, Names& names, bool final_pass)
      : js_(js), names_(names), final_(final_pass) {}

  void Run() {
    JsLexer lexer(js_);
    for (;;) {
      const Token t = lexer.Next();
      if (t.kind == TokenKind::kComment) {
        if (final_) ScanVersions(t.text, t.offset + 2, "comment");  // after "//" or "/*"
        continue;
      }
      OnToken(t);
      if (t.kind == TokenKind::kEnd) break;
      window_.Push(t);
    }
  }

  GlueFacts Finish() &&;

 private:
  const Token& Back(std::size_t i) const { return window_.Back(i); }

  void OnToken(const Token& t);
  void CollectMarkers(const Token& t);
  void MatchExportBinding(const Token& t);
  void MatchExportsAlias(const Token& t);
  void MatchAssignFunctionCall(const Token& t);
  void MatchFunctionStart(const Token& t);
  void MatchImportObject(const Token& t);
  void ScanVersions(std::string_view text, std::size_t offset, std::string_view source);
  bool IsAlias(std::string_view name) const;
  void AddAlias(std::string_view name, std::size_t depth);
  void AddMarker(std::string_view marker) { markers_.insert(std::string(marker)); }

  std::string_view js_;
  Names& names_;
  const bool final_;
  Window window_;
  std::size_t depth_ = 0;
  std::vector<std::pair<std::string_view, std::size_t>> aliases_;  // name, brace depth
  std::vector<std::size_t> batch_depths_;  // bodies of export-assigning functions
  ObjectCollector collector_;
  std::vector<ObjectCollector::Literal> literals_;
  std::map<std::string, ExportBinding> exports_;
  std::set<std::string> dyncalls_;
  std::set<std::string> markers_;
  std::optional<std::uint32_t> pool_size_;
  std::vector<VersionHint> hints_;
};

void Scanner::OnToken(const Token& t) {
  if (final_ && collector_.active() && collector_.Feed(t)) literals_.push_back(collector_.Take());
  if (final_) {
    CollectMarkers(t);
    MatchExportBinding(t);
  }
  MatchExportsAlias(t);
  MatchAssignFunctionCall(t);
  MatchFunctionStart(t);
  MatchImportObject(t);
  if (IsPunct(t, "{")) {
    ++depth_;
  } else if (IsPunct(t, "}") && depth_ > 0) {
    --depth_;
    while (!aliases_.empty() && aliases_.back().second > depth_) aliases_.pop_back();
    while (!batch_depths_.empty() && batch_depths_.back() > depth_) batch_depths_.pop_back();
  }
}

void Scanner::CollectMarkers(const Token& t) {
  static constexpr std::array<std::string_view, 6> kNamed = {
      "PThread",           "ENVIRONMENT_IS_PTHREAD", "PROXY_TO_PTHREAD",
      "PTHREAD_POOL_SIZE", "SharedArrayBuffer",      "pthreadPoolSize"};
  if ((t.kind == TokenKind::kIdentifier || t.kind == TokenKind::kString) && !t.text.empty()) {
    const char first = t.text[0];
    if (first == 'P' || first == 'E' || first == 'S' || first == 'p') {
      for (std::string_view m : kNamed) {
        if (t.text == m) AddMarker(m);
      }
    }
    constexpr std::string_view kDynCall = "dynCall_";
    if (first == 'd' && t.text.substr(0, kDynCall.size()) == kDynCall &&
        IsDynCallSignature(t.text.substr(kDynCall.size()))) {
      dyncalls_.insert(std::string(t.text.substr(kDynCall.size())));
    }
  }
  if (t.kind == TokenKind::kString && t.text.find("mscripten") != std::string_view::npos) {
    ScanVersions(t.text, t.offset + 1, "string");
  }
  if (IsIdent(t, "Worker") && IsIdent(Back(0), "new")) AddMarker("new Worker");
  // `shared: true` / `shared: !0` / `"shared": true` in a memory descriptor.
  const bool is_true = IsIdent(t, "true") ||
                       (t.kind == TokenKind::kNumber && t.text == "0" && IsPunct(Back(0), "!"));
  if (is_true) {
    const std::size_t colon = IsIdent(t, "true") ? 0 : 1;
    const Token& key = Back(colon + 1);
    if (IsPunct(Back(colon), ":") &&
        (key.kind == TokenKind::kIdentifier || key.kind == TokenKind::kString) &&
        key.text == "shared") {
      AddMarker("shared: true");
    }
  }
  // Pool size: `pthreadPoolSize = N`, `PTHREAD_POOL_SIZE = N`, `Module["PTHREAD_POOL_SIZE"] = N`.
  if (t.kind == TokenKind::kNumber && IsPunct(Back(0), "=") && !pool_size_) {
    const Token& name = IsPunct(Back(1), "]") ? Back(2) : Back(1);
    if ((name.kind == TokenKind::kIdentifier || name.kind == TokenKind::kString) &&
        (name.text == "pthreadPoolSize" || name.text == "PTHREAD_POOL_SIZE") &&
        t.text.size() <= 9 && std::all_of(t.text.begin(), t.text.end(), IsDigit)) {
      std::uint32_t v = 0;
      for (char c : t.text) v = v * 10 + static_cast<std::uint32_t>(c - '0');
      pool_size_ = v;
    }
  }
}

bool Scanner::IsAlias(std::string_view name) const {
  for (const auto& [alias, depth] : aliases_) {
    if (alias == name) return true;
  }
  return false;
}

void Scanner::AddAlias(std::string_view name, std::size_t depth) {
  if (aliases_.size() == kMaxAliases) aliases_.erase(aliases_.begin());
  aliases_.emplace_back(name, depth);
}

// An export reference `REF` just ended (at Back(0)) and `t` shows it is read, not called or
// indexed further, or `t` is the name in `createExportWrapper("name"`; when assignments
// `A = B = ... = REF` precede it, each target is a binding.
void Scanner::MatchExportBinding(const Token& t) {
  const Token* key = nullptr;
  std::size_t i = 0;  // Back(i) is the token just before REF
  ExportShape shape = ExportShape::kModuleAsm;
  // `asm` or `wasmExports` standing alone, or an exports object, at Back(at).
  auto bare = [&](std::size_t at, std::string_view name) {
    return IsIdent(Back(at), name) && !IsMemberDot(Back(at + 1));
  };
  if (t.kind == TokenKind::kString && IsPunct(Back(0), "(") &&
      IsIdent(Back(1), "createExportWrapper")) {
    // createExportWrapper("k"), ("k", n), ("k", wasmExports["k"], n): decided at the name.
    key = &t;
    i = 2;
    shape = ExportShape::kExportWrapper;
  } else if (IsPunct(t, "(") || IsMemberDot(t) || IsPunct(t, "[") || IsPunct(t, "=") ||
             t.kind == TokenKind::kTemplate) {
    return;
  } else if (IsPunct(Back(0), "]") && Back(1).kind == TokenKind::kString && IsPunct(Back(2), "[")) {
    key = &Back(1);
    if (IsPunct(Back(3), "]") && Back(4).kind == TokenKind::kString && Back(4).text == "asm" &&
        IsPunct(Back(5), "[") && IsIdent(Back(6))) {
      i = 7;  // Module["asm"]["k"]
    } else if (IsIdent(Back(3), "asm") && IsMemberDot(Back(4)) && IsIdent(Back(5))) {
      i = 6;  // Module.asm["k"]
    } else if (bare(3, "asm")) {
      i = 4;  // asm["k"]
    } else if (bare(3, "wasmExports")) {
      i = 4;
      shape = ExportShape::kWasmExports;
    } else if (IsIdent(Back(3)) && !IsMemberDot(Back(4)) && IsAlias(Back(3).text)) {
      i = 4;
      shape = ExportShape::kBatchAssign;
    } else {
      return;
    }
  } else if (IsIdent(Back(0)) && IsMemberDot(Back(1))) {
    key = &Back(0);
    if (IsIdent(Back(2), "asm") && IsMemberDot(Back(3)) && IsIdent(Back(4))) {
      i = 5;  // Module.asm.k
    } else if (IsPunct(Back(2), "]") && Back(3).kind == TokenKind::kString &&
               Back(3).text == "asm" && IsPunct(Back(4), "[") && IsIdent(Back(5))) {
      i = 6;  // Module["asm"].k
    } else if (bare(2, "asm")) {
      i = 3;
    } else if (bare(2, "wasmExports")) {
      i = 3;
      shape = ExportShape::kWasmExports;
    } else if (IsIdent(Back(2)) && !IsMemberDot(Back(3)) && IsAlias(Back(2).text) &&
               Back(0).text != "exports") {
      i = 3;
      shape = ExportShape::kBatchAssign;
    } else {
      return;
    }
  } else {
    return;
  }
  if (key->text.empty()) return;

  // The assignment chain before REF, nearest target first.
  std::vector<std::string_view> js_names;
  std::vector<std::string_view> module_keys;
  while (IsPunct(Back(i), "=")) {
    const std::size_t j = i + 1;
    if (IsIdent(Back(j)) && !IsMemberDot(Back(j + 1)) && !IsKeyword(Back(j).text)) {
      js_names.push_back(Back(j).text);
      i = j + 1;
    } else if (IsIdent(Back(j)) && IsMemberDot(Back(j + 1)) && IsIdent(Back(j + 2)) &&
               !IsMemberDot(Back(j + 3))) {
      module_keys.push_back(Back(j).text);
      i = j + 3;
    } else if (IsPunct(Back(j), "]") && Back(j + 1).kind == TokenKind::kString &&
               IsPunct(Back(j + 2), "[") && IsIdent(Back(j + 3)) && !IsMemberDot(Back(j + 4))) {
      module_keys.push_back(Back(j + 1).text);
      i = j + 4;
    } else {
      break;
    }
  }
  if (js_names.empty() && module_keys.empty()) return;
  if (shape != ExportShape::kExportWrapper) {
    if (IsPunct(Back(i), "(") && (IsIdent(Back(i + 1), "return") || IsPunct(Back(i + 1), "=>"))) {
      shape = ExportShape::kLazyWrapper;
    } else if (!batch_depths_.empty()) {
      shape = ExportShape::kBatchAssign;
    }
  }

  auto [it, inserted] = exports_.try_emplace(std::string(key->text));
  ExportBinding& binding = it->second;
  if (inserted) {
    binding.export_name = std::string(key->text);
    binding.offset = key->offset;
  }
  auto add_all = [](std::vector<std::string>& to, const std::vector<std::string_view>& from) {
    for (auto name = from.rbegin(); name != from.rend(); ++name) {
      if (std::find(to.begin(), to.end(), *name) == to.end()) to.emplace_back(*name);
    }
  };
  add_all(binding.js_names, js_names);
  add_all(binding.module_keys, module_keys);
  if (std::find(binding.shapes.begin(), binding.shapes.end(), shape) == binding.shapes.end()) {
    binding.shapes.push_back(shape);
    std::sort(binding.shapes.begin(), binding.shapes.end());
  }
}

// `A = B = X.exports` makes A and B exports objects until their block closes.
void Scanner::MatchExportsAlias(const Token& t) {
  if (IsPunct(t, "(") || IsMemberDot(t) || IsPunct(t, "[") || IsPunct(t, "=") ||
      t.kind == TokenKind::kTemplate) {
    return;
  }
  if (!IsIdent(Back(0), "exports") || !IsPunct(Back(1), ".")) return;
  // Skip the object expression: an identifier, or a parenthesised or indexed one.
  std::size_t i = 2;
  if (IsIdent(Back(i))) {
    ++i;
  } else {
    return;
  }
  while (IsPunct(Back(i), "=") && IsIdent(Back(i + 1)) && !IsMemberDot(Back(i + 2)) &&
         !IsKeyword(Back(i + 1).text)) {
    AddAlias(Back(i + 1).text, depth_);
    i += 2;
  }
}

// `F(e)` or `F(x.exports)` with `e` an exports object marks F as export-assigning.
void Scanner::MatchAssignFunctionCall(const Token& t) {
  if (!IsPunct(t, ")")) return;
  std::size_t f = 0;
  if (IsIdent(Back(0)) && IsPunct(Back(1), "(") &&
      (Back(0).text == "wasmExports" || IsAlias(Back(0).text))) {
    f = 2;
  } else if (IsIdent(Back(0), "exports") && IsPunct(Back(1), ".") && IsIdent(Back(2)) &&
             IsPunct(Back(3), "(")) {
    f = 4;
  } else {
    return;
  }
  if (IsIdent(Back(f)) && !IsKeyword(Back(f).text) && !IsMemberDot(Back(f + 1)) &&
      names_.assign_functions.size() < 1024) {
    names_.assign_functions.emplace(Back(f).text);
  }
}

// `function F(P) {` or `F = function(P) {` with F export-assigning: P is an exports object in
// the body, and bindings there are batch assignments.
void Scanner::MatchFunctionStart(const Token& t) {
  if (!IsPunct(t, "{") || !IsPunct(Back(0), ")") || !IsIdent(Back(1)) || !IsPunct(Back(2), "(")) {
    return;
  }
  std::string_view name;
  if (IsIdent(Back(3)) && IsIdent(Back(4), "function")) {
    name = Back(3).text;
  } else if (IsIdent(Back(3), "function") && IsPunct(Back(4), "=") && IsIdent(Back(5))) {
    name = Back(5).text;
  } else {
    return;
  }
  if (names_.assign_functions.find(name) == names_.assign_functions.end()) return;
  AddAlias(Back(1).text, depth_ + 1);
  batch_depths_.push_back(depth_ + 1);
}

void Scanner::MatchImportObject(const Token& t) {
  // Evidence: `{..., env: X}`, `"wasi_snapshot_preview1": X`, or the sole module `{a: X}`.
  if ((IsPunct(t, "}") || IsPunct(t, ",")) && IsIdent(Back(0)) && IsPunct(Back(1), ":") &&
      (IsPunct(Back(3), "{") || IsPunct(Back(3), ",")) &&
      (Back(2).kind == TokenKind::kIdentifier || Back(2).kind == TokenKind::kString)) {
    const std::string_view module = Back(2).text;
    const std::string_view object = Back(0).text;
    const bool strong = module == "env" || module == "wasi_snapshot_preview1";
    const bool weak = module == "a" && IsPunct(Back(3), "{") && IsPunct(t, "}");
    if ((strong || weak) && !IsKeyword(object) && names_.modules_by_object.size() < 1024) {
      (strong ? names_.strong_import_objects : names_.weak_import_objects).emplace(object);
      names_.modules_by_object[std::string(object)].emplace(module);
    }
  }
  // The literal itself: `X = {`.
  if (final_ && IsPunct(t, "{") && !collector_.active() && IsPunct(Back(0), "=") &&
      IsIdent(Back(1)) && !IsMemberDot(Back(2))) {
    const std::string_view name = Back(1).text;
    if (names_.strong_import_objects.count(name) != 0 ||
        names_.weak_import_objects.count(name) != 0) {
      collector_.Start(name, t.offset);
    }
  }
}

// Finds "Emscripten SDK version 3.1.30", "Emscripten SDK: 5.0.5", "emscripten 3.1.6",
// "Emscripten v3.1.6" (any case) in `text`.
void Scanner::ScanVersions(std::string_view text, std::size_t offset, std::string_view source) {
  for (std::size_t at = text.find("mscripten"); at != std::string_view::npos;
       at = text.find("mscripten", at + 1)) {
    if (hints_.size() >= GlueFacts::kMaxVersionHints) return;
    if (at == 0 || Lower(text[at - 1]) != 'e') continue;
    const std::size_t begin = at - 1;
    std::size_t p = at + 9;
    if (StartsWithNoCase(text, p, " sdk")) p += 4;
    if (StartsWithNoCase(text, p, " version")) p += 8;
    if (p < text.size() && text[p] == ':') ++p;
    while (p < text.size() && text[p] == ' ') ++p;
    if (p < text.size() && Lower(text[p]) == 'v') ++p;
    // digits (. digits){2,3}
    const std::size_t version_begin = p;
    int parts = 0;
    while (parts < 4) {
      const std::size_t digits = p;
      while (p < text.size() && IsDigit(text[p]) && p - digits < 6) ++p;
      if (p == digits) break;
      ++parts;
      if (parts < 4 && p + 1 < text.size() && text[p] == '.' && IsDigit(text[p + 1])) {
        ++p;
      } else {
        break;
      }
    }
    if (parts < 3) continue;
    hints_.push_back(VersionHint{std::string(text.substr(version_begin, p - version_begin)),
                                 std::string(text.substr(begin, p - begin)), std::string(source),
                                 offset + begin});
  }
}

GlueFacts Scanner::Finish() && {
  GlueFacts facts;
  facts.size = js_.size();
  facts.exports.reserve(exports_.size());
  for (auto& [name, binding] : exports_) facts.exports.push_back(std::move(binding));

  // The import object: among literals assigned to names with strong evidence, the one with
  // the most properties; else among the weak ones.
  const ObjectCollector::Literal* best = nullptr;
  for (int strength = 1; strength >= 0 && best == nullptr; --strength) {
    for (const ObjectCollector::Literal& literal : literals_) {
      const bool strong = names_.strong_import_objects.count(literal.name) != 0;
      if (strong != (strength == 1) || literal.properties.empty()) continue;
      if (best == nullptr || literal.properties.size() > best->properties.size()) best = &literal;
    }
  }
  if (best != nullptr) {
    facts.import_object = best->name;
    if (auto it = names_.modules_by_object.find(best->name); it != names_.modules_by_object.end()) {
      facts.import_modules.assign(it->second.begin(), it->second.end());
    }
    std::map<std::string, ImportBinding> by_field;
    for (const ImportBinding& binding : best->properties)
      by_field.try_emplace(binding.field, binding);
    for (auto& [field, binding] : by_field) facts.imports.push_back(std::move(binding));
  }

  facts.dyncall_signatures.assign(dyncalls_.begin(), dyncalls_.end());
  facts.pthread.markers.assign(markers_.begin(), markers_.end());
  facts.pthread.pool_size = pool_size_;
  facts.pthread.threads = pool_size_.has_value() || markers_.count("PThread") != 0 ||
                          markers_.count("ENVIRONMENT_IS_PTHREAD") != 0 ||
                          markers_.count("PROXY_TO_PTHREAD") != 0 ||
                          markers_.count("shared: true") != 0;
  facts.version_hints = std::move(hints_);
  return facts;
}

}  // namespace

std::string_view ExportShapeName(ExportShape shape) {
  switch (shape) {
    case ExportShape::kExportWrapper:
      return "export-wrapper";
    case ExportShape::kLazyWrapper:
      return "lazy-wrapper";
    case ExportShape::kBatchAssign:
      return "batch-assign";
    case ExportShape::kModuleAsm:
      return "module-asm";
    case ExportShape::kWasmExports:
      return "wasm-exports";
  }
  return "unknown";
}

std::string_view ExportBinding::PreferredName() const {
  if (!module_keys.empty()) return module_keys.front();
  if (!js_names.empty()) return js_names.front();
  return {};
}

const ExportBinding* GlueFacts::FindExport(std::string_view export_name) const {
  auto it = std::lower_bound(
      exports.begin(), exports.end(), export_name,
      [](const ExportBinding& b, std::string_view name) { return b.export_name < name; });
  return it != exports.end() && it->export_name == export_name ? &*it : nullptr;
}

const ImportBinding* GlueFacts::FindImport(std::string_view field) const {
  auto it = std::lower_bound(
      imports.begin(), imports.end(), field,
      [](const ImportBinding& b, std::string_view name) { return b.field < name; });
  return it != imports.end() && it->field == field ? &*it : nullptr;
}

std::optional<std::string> GlueFacts::EmscriptenVersion() const {
  if (version_hints.empty()) return std::nullopt;
  return version_hints.front().version;
}

Result<GlueFacts> ParseGlue(std::string_view js) {
  if (js.size() > kMaxGlueBytes) {
    return Status::ResourceExhausted("glue is " + std::to_string(js.size()) +
                                     " bytes; the limit is " + std::to_string(kMaxGlueBytes));
  }
  Names names;
  Scanner(js, names, /*final_pass=*/false).Run();
  Scanner scanner(js, names, /*final_pass=*/true);
  scanner.Run();
  return std::move(scanner).Finish();
}

std::string GlueFactsToJson(const GlueFacts& facts) {
  using Json = nlohmann::ordered_json;
  Json j = Json::object();
  j["format"] = "warden-glue-1";
  j["bytes"] = facts.size;
  const std::optional<std::string> version = facts.EmscriptenVersion();
  j["emscripten_version"] = version ? Json(*version) : Json(nullptr);
  Json exports = Json::array();
  for (const ExportBinding& b : facts.exports) {
    Json e = Json::object();
    e["export"] = b.export_name;
    e["name"] = std::string(b.PreferredName());
    e["js"] = b.js_names;
    e["module_keys"] = b.module_keys;
    Json shapes = Json::array();
    for (ExportShape s : b.shapes) shapes.push_back(std::string(ExportShapeName(s)));
    e["shapes"] = std::move(shapes);
    e["offset"] = b.offset;
    exports.push_back(std::move(e));
  }
  j["exports"] = std::move(exports);
  j["import_object"] = facts.import_object.empty() ? Json(nullptr) : Json(facts.import_object);
  j["import_modules"] = facts.import_modules;
  Json imports = Json::array();
  for (const ImportBinding& b : facts.imports) {
    Json i = Json::object();
    i["field"] = b.field;
    i["js"] = b.js_name.empty() ? Json(nullptr) : Json(b.js_name);
    i["offset"] = b.offset;
    imports.push_back(std::move(i));
  }
  j["imports"] = std::move(imports);
  j["dyncall_signatures"] = facts.dyncall_signatures;
  Json pthread = Json::object();
  pthread["threads"] = facts.pthread.threads;
  pthread["markers"] = facts.pthread.markers;
  pthread["pool_size"] = facts.pthread.pool_size ? Json(*facts.pthread.pool_size) : Json(nullptr);
  j["pthread"] = std::move(pthread);
  Json hints = Json::array();
  for (const VersionHint& h : facts.version_hints) {
    Json o = Json::object();
    o["version"] = h.version;
    o["text"] = h.text;
    o["source"] = h.source;
    o["offset"] = h.offset;
    hints.push_back(std::move(o));
  }
  j["version_hints"] = std::move(hints);
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace trove::warden::glue

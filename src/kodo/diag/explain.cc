#include "kodo/diag/explain.h"

#include <fmt/format.h>

#include <array>

#include "kodo/diag/diagnostic.h"

namespace trove::kodo::diag {
namespace {

// Our own texts (never upstream's): what the code means, then a program that triggers it and
// one that does not. The title comes from kinds.def.
struct ExplainRow {
  std::string_view code;
  std::string_view explanation;
  std::string_view bad;
  std::string_view good;
};

constexpr std::array kRows = {
    ExplainRow{"E0001",
               "The lexer met a character that starts no token: a symbol outside the language "
               "(such as `#`, `$`, `~` or a lone `&`), a non-ASCII character outside a string, "
               "an integer literal too large for 64 bits, or an unterminated string.",
               "let tag = #red", "let tag = \"red\""},
    ExplainRow{"E0002",
               "A string literal was opened with `\"` but never closed. kodoc 1.14.1 reports "
               "this as E0001; the code is kept for compatibility.",
               "let s = \"unfinished", "let s = \"finished\""},
    ExplainRow{"E0100",
               "The parser expected one token (such as a closing brace, a colon or an "
               "identifier) and found another. The message names both.",
               "fn add(a: Int b: Int) -> Int { return a + b }",
               "fn add(a: Int, b: Int) -> Int { return a + b }"},
    ExplainRow{"E0101",
               "The file ended while the parser still expected something, usually a closing "
               "`}` of a block, function or module.",
               "module m {\n    meta { purpose: \"x\" }\n    fn main() {\n",
               "module m {\n    meta { purpose: \"x\" }\n    fn main() {\n    }\n}"},
    ExplainRow{"E0102",
               "A Kōdo file holds one module: `module NAME { ... }`. Nothing else may appear "
               "at the top level. kodoc 1.14.1 reports this situation as E0100.",
               "fn main() {}", "module app {\n    meta { purpose: \"demo\" }\n    fn main() {}\n}"},
    ExplainRow{"E0103",
               "Every module needs a `meta` block. kodoc 1.14.1 parses a module without one "
               "and reports E0210 from the checker instead of this code.",
               "module app {\n    fn main() {}\n}",
               "module app {\n    meta { purpose: \"demo\" }\n    fn main() {}\n}"},
    ExplainRow{"E0104",
               "The expression inside a `requires { ... }` or `ensures { ... }` clause could "
               "not be parsed. Only the recovering parser (kodoc parse, the LSP) reports it.",
               "fn f(x: Int) -> Int\n    requires { x > }\n{ return x }",
               "fn f(x: Int) -> Int\n    requires { x > 0 }\n{ return x }"},
    ExplainRow{"E0200",
               "An expression has a different type from the one its context requires. Kōdo has "
               "no implicit conversions: an Int literal is not an Int8 or a Float64, and `==` "
               "compares only numbers and strings.",
               "let x: Int = \"hello\"", "let x: String = \"hello\""},
    ExplainRow{"E0201",
               "A name (variable, function or assignment target) is used but not declared in "
               "scope. The message says `type` for every kind of name. A close name is "
               "suggested when one exists.",
               "let total = cuont + 1", "let count = 1\nlet total = count + 1"},
    ExplainRow{"E0202",
               "A call, method call or enum variant got a different number of arguments from "
               "what it declares.",
               "fn add(a: Int, b: Int) -> Int { return a + b }\nlet x = add(1)",
               "fn add(a: Int, b: Int) -> Int { return a + b }\nlet x = add(1, 2)"},
    ExplainRow{"E0203",
               "Something that is not a function was called, or a method was called on a type "
               "that has no methods (such as Bool or a tuple).",
               "let n = 5\nlet m = n(1)", "let n = 5\nlet m = n + 1"},
    ExplainRow{"E0204",
               "The bounds of a `for i in a..b` loop must be Int. kodoc 1.14.1 reports a wrong "
               "bound as E0200 with expected `Int`; this code is never emitted.",
               "for i in 0..2.5 { }", "for i in 0..3 { }"},
    ExplainRow{"E0205",
               "Both ends of a range `a..b` must be Int. kodoc 1.14.1 reports a wrong end as "
               "E0200; this code is never emitted.",
               "let r = \"a\"..\"z\"", "let r = 0..26"},
    ExplainRow{"E0210",
               "Every module must have a `meta` block with at least a `purpose`. Without it "
               "nothing else in the module is checked.",
               "module app {\n    fn main() {}\n}",
               "module app {\n    meta { purpose: \"print a greeting\" }\n    fn main() {}\n}"},
    ExplainRow{"E0211", "The `purpose` entry of the meta block is empty or only whitespace.",
               "meta { purpose: \"\" }", "meta { purpose: \"parse configuration files\" }"},
    ExplainRow{"E0212", "The meta block has no `purpose` entry.", "meta { version: \"1.0\" }",
               "meta { purpose: \"parse configuration files\", version: \"1.0\" }"},
    ExplainRow{"E0213", "A struct literal or field access names a struct that is not declared.",
               "let p = Pont { x: 1, y: 2 }",
               "struct Point { x: Int, y: Int }\nlet p = Point { x: 1, y: 2 }"},
    ExplainRow{"E0214", "A struct literal must give every field of the struct.",
               "struct Point { x: Int, y: Int }\nlet p = Point { x: 1 }",
               "struct Point { x: Int, y: Int }\nlet p = Point { x: 1, y: 2 }"},
    ExplainRow{"E0215", "A struct literal names a field that the struct does not declare.",
               "struct Point { x: Int, y: Int }\nlet p = Point { x: 1, y: 2, z: 3 }",
               "struct Point { x: Int, y: Int }\nlet p = Point { x: 1, y: 2 }"},
    ExplainRow{"E0216", "A struct literal gives the same field twice.",
               "struct Point { x: Int, y: Int }\nlet p = Point { x: 1, x: 2, y: 3 }",
               "struct Point { x: Int, y: Int }\nlet p = Point { x: 1, y: 3 }"},
    ExplainRow{"E0217", "A field access `e.f` names a field the struct does not have.",
               "struct Point { x: Int, y: Int }\nlet n = p.z",
               "struct Point { x: Int, y: Int }\nlet n = p.y"},
    ExplainRow{"E0218", "An enum variant expression `E::V` names an enum that is not declared.",
               "let c = Colour::Red", "enum Colour { Red, Green }\nlet c = Colour::Red"},
    ExplainRow{"E0219", "An enum variant expression names a variant the enum does not declare.",
               "enum Colour { Red, Green }\nlet c = Colour::Blue",
               "enum Colour { Red, Green, Blue }\nlet c = Colour::Blue"},
    ExplainRow{"E0220",
               "A `match` on an enum value must cover every variant, or end with a `_` arm.",
               "match c {\n    Colour::Red => 1,\n}",
               "match c {\n    Colour::Red => 1,\n    Colour::Green => 2,\n}"},
    ExplainRow{"E0221", "A generic type was given the wrong number of type arguments.",
               "let x: Option<Int, String> = None", "let x: Option<Int> = None"},
    ExplainRow{"E0222",
               "A type parameter is used that the declaration does not introduce. kodoc "
               "1.14.1 never emits this code: unknown names resolve to struct types.",
               "fn first(x: T) -> T { return x }", "fn first<T>(x: T) -> T { return x }"},
    ExplainRow{"E0223", "A generic type such as `Option` or `Result` was used without arguments.",
               "fn f(x: Option) {}", "fn f(x: Option<Int>) {}"},
    ExplainRow{"E0224", "The `?` operator is used in a function that does not return a Result.",
               "fn f() -> Int {\n    let v = parse()?\n    return v\n}",
               "fn f() -> Result<Int, String> {\n    let v = parse()?\n    return Ok(v)\n}"},
    ExplainRow{"E0225", "Optional chaining `a?.f` needs `a` to be an Option.",
               "let n = 5\nlet m = n?.value", "let p: Option<Point> = find()\nlet m = p?.x"},
    ExplainRow{"E0226", "The left side of `a ?? b` must be an Option.", "let n = 5 ?? 0",
               "let n: Option<Int> = Some(5)\nlet m = n ?? 0"},
    ExplainRow{"E0227", "Every closure parameter needs a type annotation.",
               "let double = |x| x * 2", "let double = |x: Int| x * 2"},
    ExplainRow{"E0230", "An `impl Trait for T` block names a trait that is not declared.",
               "impl Shw for Point { }",
               "trait Show { fn show(self) -> String }\nimpl Show for Point {\n    fn show(self) "
               "-> String { return \"p\" }\n}"},
    ExplainRow{"E0231", "An impl block does not define a method its trait requires.",
               "trait Show { fn show(self) -> String }\nimpl Show for Point { }",
               "trait Show { fn show(self) -> String }\nimpl Show for Point {\n    fn show(self) "
               "-> String { return \"p\" }\n}"},
    ExplainRow{"E0232",
               "A generic function was called with a type that does not implement a trait its "
               "type parameter requires.",
               "fn show_all<T: Show>(x: T) {}\nshow_all(5)",
               "impl Show for Int { fn show(self) -> String { return \"n\" } }\nshow_all(5)"},
    ExplainRow{"E0233", "An impl block does not bind an associated type its trait declares.",
               "trait Bag { type Item }\nimpl Bag for Box { }",
               "trait Bag { type Item }\nimpl Bag for Box { type Item = Int }"},
    ExplainRow{"E0234", "An impl block binds an associated type its trait does not declare.",
               "trait Bag { }\nimpl Bag for Box { type Item = Int }",
               "trait Bag { }\nimpl Bag for Box { }"},
    ExplainRow{"E0235", "A method call names a method the receiver's type does not have.",
               "let n = \"abc\".lenght()", "let n = \"abc\".length()"},
    ExplainRow{"E0240", "A variable is used after its value was moved elsewhere.",
               "fn take(own s: String) {}\nlet s = \"a\"\ntake(s)\nprintln(s)",
               "fn take(ref s: String) {}\nlet s = \"a\"\ntake(s)\nprintln(s)"},
    ExplainRow{"E0241",
               "A function returns a `ref` or `mut` parameter, a borrow that would "
               "outlive the call.",
               "fn keep(ref s: String) -> String { return s }",
               "fn keep(ref s: String) -> String { return s.clone() }"},
    ExplainRow{"E0242", "A value is moved while a borrow of it is still active in the same call.",
               "both(ref_of(s), s)", "both(ref_of(s), s.clone())"},
    ExplainRow{"E0243", "`break` appears outside any `while`, `for` or `for-in` loop.",
               "fn f() {\n    break\n}", "fn f() {\n    while true {\n        break\n    }\n}"},
    ExplainRow{"E0244", "`continue` appears outside any `while`, `for` or `for-in` loop.",
               "fn f() {\n    continue\n}",
               "fn f() {\n    for i in 0..3 {\n        continue\n    }\n}"},
    ExplainRow{"E0245", "A variable is borrowed as `mut` while a `ref` borrow of it is active.",
               "update(ref v, mut v)", "update(ref v, ref v)"},
    ExplainRow{"E0246", "A variable is borrowed as `ref` while a `mut` borrow of it is active.",
               "update(mut v, ref v)", "update(mut v, ref w)"},
    ExplainRow{"E0247", "A variable is borrowed as `mut` twice at the same time.",
               "swap(mut v, mut v)", "swap(mut v, mut w)"},
    ExplainRow{"E0248", "A `ref` parameter is assigned to; `ref` borrows are read-only.",
               "fn reset(ref n: Int) {\n    n = 0\n}", "fn reset(mut n: Int) {\n    n = 0\n}"},
    ExplainRow{"E0250",
               "`.await` is meant for async functions. kodoc 1.14.1 allows it everywhere and "
               "never emits this code.",
               "fn f() {\n    let x = fetch().await\n}",
               "async fn f() {\n    let x = fetch().await\n}"},
    ExplainRow{"E0251",
               "A spawned task would capture a mutable reference. kodoc 1.14.1 never emits "
               "this code (see E0280).",
               "spawn {\n    push(mut items)\n}", "spawn {\n    push(ref items)\n}"},
    ExplainRow{"E0252",
               "Actor state is meant to be reached through handlers. kodoc 1.14.1 allows "
               "direct field reads and never emits this code.",
               "let n = counter.count", "let n = counter.get_count()"},
    ExplainRow{"E0253", "A tuple index `t.N` is not smaller than the tuple's length.",
               "let t = (1, 2)\nlet z = t.2", "let t = (1, 2)\nlet z = t.1"},
    ExplainRow{"E0260",
               "A function declares `@confidence` below 0.8 and has no human review "
               "annotation `@reviewed_by(human: \"...\")`.",
               "@confidence(0.5)\nfn risky() {}",
               "@confidence(0.5)\n@reviewed_by(human: \"alice\")\nfn risky() {}"},
    ExplainRow{"E0261",
               "The computed confidence of a function (the minimum over everything it calls) "
               "is below the module's `min_confidence`.",
               "meta { purpose: \"x\", min_confidence: \"0.9\" }\n@confidence(0.5)\nfn f() {}",
               "meta { purpose: \"x\", min_confidence: \"0.9\" }\n@confidence(0.95)\nfn f() {}"},
    ExplainRow{"E0262",
               "A function marked `@security_sensitive` must have a `requires` or `ensures` "
               "contract.",
               "@security_sensitive\nfn pay(amount: Int) {}",
               "@security_sensitive\nfn pay(amount: Int)\n    requires { amount > 0 }\n{}"},
    ExplainRow{
        "E0263", "A reviewer listed in kodo.toml's `[trust].known_agents` claims human review.",
        "@reviewed_by(human: \"claude\")\nfn f() {}", "@reviewed_by(agent: \"claude\")\nfn f() {}"},
    ExplainRow{
        "E0264", "A human reviewer is not in kodo.toml's `[trust].human_reviewers` allowlist.",
        "@reviewed_by(human: \"mallory\")\nfn f() {}", "@reviewed_by(human: \"alice\")\nfn f() {}"},
    ExplainRow{"E0270", "A private function of an imported module is called.",
               "import util\nlet x = helper()", "import util\nlet x = public_helper()"},
    ExplainRow{"E0280", "A `spawn` block uses a `ref` parameter, which cannot cross threads.",
               "fn f(ref s: String) {\n    spawn {\n        println(s)\n    }\n}",
               "fn f(own s: String) {\n    spawn {\n        println(s)\n    }\n}"},
    ExplainRow{"E0281", "A closure captures a variable whose value was already moved.",
               "take(s)\nlet show = || { println(s) }", "let show = || { println(s) }\ntake(s)"},
    ExplainRow{"E0282",
               "A closure moves a captured variable out. kodoc 1.14.1 reports E0240 instead "
               "and never emits this code.",
               "let f = || { take(s) }\nprintln(s)", "let f = || { take(s.clone()) }\nprintln(s)"},
    ExplainRow{"E0283",
               "Two closures capture the same non-Copy variable. kodoc 1.14.1 reports E0281 "
               "instead and never emits this code.",
               "let f = || { println(s) }\nlet g = || { println(s) }",
               "let f = || { println(s) }\nlet g = || { println(t) }"},
    ExplainRow{"E0310", "A module `invariant { ... }` condition must have type Bool.",
               "invariant { 1 + 1 }", "invariant { 1 + 1 == 2 }"},
    ExplainRow{"E0350",
               "The module's meta sets `trust_policy: \"high_security\"` and a function breaks "
               "it: every function needs `@authored_by` and `@confidence`, and a confidence "
               "below 0.85 needs a human `@reviewed_by`.",
               "meta { purpose: \"x\", trust_policy: \"high_security\" }\nfn f() {}",
               "meta { purpose: \"x\", trust_policy: \"high_security\" }\n"
               "@authored_by(agent: \"claude\")\n@confidence(0.95)\nfn f() {}"},
    ExplainRow{"E0300",
               "A `requires` clause could not be proved at a call site. kodoc 1.14.1 prints "
               "contract failures as text without this code.",
               "fn div(a: Int, b: Int) -> Int\n    requires { b != 0 }\n{ return a / b }\n"
               "let x = div(1, 0)",
               "let x = div(1, 2)"},
    ExplainRow{"E0301",
               "An `ensures` clause could not be proved. kodoc 1.14.1 prints contract "
               "failures as text without this code.",
               "fn abs(x: Int) -> Int\n    ensures { result > 0 }\n{ return x }",
               "fn abs(x: Int) -> Int\n    ensures { result >= 0 }\n{ if x < 0 { return -x } "
               "return x }"},
    ExplainRow{"E0302",
               "A contract failed at run time; the program stops with `contract violation`.",
               "let x = div(1, 0)", "let x = div(1, 1)"},
    ExplainRow{"E0303",
               "The solver proved that a contract can never hold. kodoc 1.14.1 prints this as "
               "text without a code.",
               "fn f(x: Int)\n    requires { x > 0 && x < 0 }\n{}",
               "fn f(x: Int)\n    requires { x > 0 }\n{}"},
    ExplainRow{"E0400", "No resolver exists for an intent's name (kodoc build only).",
               "intent teleport { target: \"mars\" }",
               "intent console_app { greeting: \"hello\" }"},
    ExplainRow{"E0401",
               "Code generated for an intent would break the intent's contract. Never emitted "
               "by kodoc 1.14.1.",
               "intent serve_http { port: -1 }", "intent serve_http { port: 8080 }"},
    ExplainRow{"E0402",
               "An intent block uses a configuration key its resolver does not know (kodoc "
               "build only).",
               "intent console_app { greting: \"hi\" }", "intent console_app { greeting: \"hi\" }"},
    ExplainRow{"E0403",
               "An intent configuration value has the wrong type. Never emitted by kodoc 1.14.1.",
               "intent serve_http { port: \"eighty\" }", "intent serve_http { port: 80 }"},
    ExplainRow{"E0500",
               "Lowering the checked program to MIR failed; this usually points at a compiler "
               "limitation rather than a program error.",
               "let f = make()(1)", "let g = make()\nlet f = g(1)"},
    ExplainRow{"E0600",
               "Native code generation or linking failed; this points at the compiler or the "
               "toolchain rather than the program.",
               "fn main() { }", "fn main() { }"},
    ExplainRow{"E0700", "An `assert` in a test failed at run time.", "test \"t\" { assert(1 > 2) }",
               "test \"t\" { assert(2 > 1) }"},
    ExplainRow{"E0701", "An `assert_eq` in a test compared two different values.",
               "test \"t\" { assert_eq(1 + 1, 3) }", "test \"t\" { assert_eq(1 + 1, 2) }"},
    ExplainRow{"E0702", "A test ran longer than its `@timeout`.",
               "@timeout(1)\ntest \"slow\" { sleep(100) }",
               "@timeout(1000)\ntest \"slow\" { sleep(100) }"},
    ExplainRow{"E0703", "A test stopped with a runtime error instead of finishing.",
               "test \"t\" { let x = 1 / 0 }", "test \"t\" { let x = 1 / 1 }"},
    ExplainRow{"E0704", "A property test found an input for which its body fails.",
               "test \"p\" { forall x: Int { assert(x > 0) } }",
               "test \"p\" { forall x: Int { assert(x * x >= 0) } }"},
    ExplainRow{"E0903",
               "An `import` names a module file that does not exist (ours; upstream prints "
               "`error: unresolved import` without a code). `import a::b` is the file `a/b.ko` "
               "beside the importing file, else `a/b/lib.ko`; only `std::option` and "
               "`std::result` are built in. A file that a symbolic link leads outside the "
               "directory of the checked file is refused with this code too.",
               "import utills", "import utils"},
    ExplainRow{"E0904",
               "Imported modules import each other in a cycle (ours; upstream's `build` prints "
               "`error: import cycle detected` without a code).",
               "// a.ko\nimport b\n// b.ko\nimport a",
               "// a.ko\nimport b\n// b.ko: no import of a"},
    ExplainRow{"E0905",
               "An imported module does not parse or type-check (ours; upstream prints `type "
               "error in imported module` without a code). The message gives its first error "
               "and where it is.",
               "// util.ko\npub fn f() -> Int { return \"x\" }",
               "// util.ko\npub fn f() -> Int { return 1 }"},
    ExplainRow{"W0901",
               "A warning, not an error (ours, not upstream's): the program uses a feature "
               "whose rules this checker does not apply yet (contracts, trust policies, tests, "
               "concurrency), so `check` passing says nothing about that part.",
               "fn f(x: Int) -> Int\n    requires { x > 0 }\n{ return x }",
               "fn f(x: Int) -> Int { return x }"},
    ExplainRow{"W0902",
               "A warning, not an error (ours, not upstream's): the checker met a construct it "
               "does not type, such as a generic function used as a value, and accepted it "
               "without checking how it is used.",
               "fn id<T>(x: T) -> T { return x }\nlet f = id", "let y = id(1)"},
};

const ExplainRow* FindRow(std::string_view code) {
  for (const ExplainRow& row : kRows) {
    if (row.code == code) return &row;
  }
  return nullptr;
}

}  // namespace

Result<Explanation> Explain(std::string_view code) {
  std::optional<Kind> kind = FindKind(code);
  const ExplainRow* row = FindRow(code);
  if (!kind || row == nullptr) {
    return Status::NotFound(fmt::format("unknown error code `{}`", code));
  }
  return Explanation{.code = std::string(code),
                     .title = std::string(Info(*kind).title),
                     .explanation = std::string(row->explanation),
                     .bad_example = std::string(row->bad),
                     .good_example = std::string(row->good)};
}

std::string RenderExplainText(const Explanation& e) {
  return fmt::format(
      "Error {}: {}\n\n{}\n\nErroneous code example:\n\n```kodo\n{}\n```\n\nCorrected "
      "code:\n\n```kodo\n{}\n```\n",
      e.code, e.title, e.explanation, e.bad_example, e.good_example);
}

nlohmann::json ExplainJson(const Explanation& e) {
  return nlohmann::json{{"bad_example", e.bad_example},
                        {"code", e.code},
                        {"explanation", e.explanation},
                        {"good_example", e.good_example},
                        {"title", e.title}};
}

nlohmann::json UnknownCodeJson(std::string_view code) {
  return nlohmann::json{{"error", fmt::format("unknown error code `{}`", code)},
                        {"hint", "error codes range from E0001 to E0699"}};
}

nlohmann::json ExplainMcp(std::string_view code) {
  struct Category {
    std::string_view prefix, title, explanation;
  };
  static constexpr std::array kCategories = {
      Category{"E00", "Lexer Error",
               "This error occurred during tokenization. Check for invalid characters, "
               "unterminated strings, or malformed number literals."},
      Category{"E01", "Parser Error",
               "This error occurred during parsing. Check for syntax errors such as missing "
               "braces, invalid expressions, or unexpected tokens."},
      Category{"E02", "Type Error",
               "This error occurred during type checking. Check for type mismatches, undefined "
               "variables, missing return statements, or invalid operations."},
      Category{"E03", "Contract Error",
               "This error is related to contract verification (requires/ensures). Check that "
               "preconditions and postconditions are satisfiable."},
      Category{"E04", "Resolver Error",
               "This error occurred during intent resolution. Check that intent blocks have "
               "valid configurations."},
      Category{"E05", "MIR Error",
               "This error occurred during MIR lowering. This may indicate an internal compiler "
               "issue."},
      Category{"E06", "Codegen Error",
               "This error occurred during code generation. This may indicate an internal "
               "compiler issue."},
  };
  std::string_view title = "Unknown Error Code";
  std::string_view explanation =
      "The specified error code is not recognized. Valid error codes range from E0001 to "
      "E0699. Use `kodoc explain <code>` for detailed explanations.";
  for (const Category& c : kCategories) {
    if (code.substr(0, 3) == c.prefix) {
      title = c.title;
      explanation = c.explanation;
      break;
    }
  }
  return nlohmann::json{
      {"code", code},
      {"explanation", explanation},
      {"hint", "Use `kodoc explain <code>` for detailed examples and fix suggestions."},
      {"title", title}};
}

}  // namespace trove::kodo::diag

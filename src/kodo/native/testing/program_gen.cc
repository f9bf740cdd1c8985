#include "kodo/native/testing/program_gen.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace trove::kodo::native::testing {
namespace {

class Gen {
 public:
  explicit Gen(std::uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL) {
    for (int i = 0; i < 4; ++i) Next();
  }
  std::string Program();

 private:
  std::uint64_t Next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  int Pick(int n) { return static_cast<int>(Next() % static_cast<std::uint64_t>(n)); }
  bool Chance(int percent) { return Pick(100) < percent; }

  std::string IntExpr(int depth);
  std::string BoolExpr(int depth);
  std::string Const();
  void Block(int depth, int statements, std::string& out, const std::string& indent);
  void Statement(int depth, std::string& out, const std::string& indent);
  std::string Var() {
    return vars_[static_cast<std::size_t>(Pick(static_cast<int>(vars_.size())))];
  }

  std::uint64_t state_;
  std::vector<std::string> vars_;          // Int variables in scope
  std::vector<std::string> mutable_vars_;  // the assignable ones
  int fn_index_ = 0;                       // functions f0..f{fn_index_-1} may be called
  int next_name_ = 0;
};

std::string Gen::Const() {
  switch (Pick(6)) {
    case 0:
      return "9223372036854775807";
    case 1:
      return fmt::format("{}", Pick(2000000) + 1000000);
    default:
      return fmt::format("{}", Pick(20));
  }
}

std::string Gen::IntExpr(int depth) {
  const int choice = depth <= 0 ? Pick(2) : Pick(11);
  switch (choice) {
    case 0:
      return Const();
    case 1:
      return vars_.empty() ? Const() : Var();
    case 2:
    case 3:
      return fmt::format("({} + {})", IntExpr(depth - 1), IntExpr(depth - 1));
    case 4:
      return fmt::format("({} - {})", IntExpr(depth - 1), IntExpr(depth - 1));
    case 5:
      return fmt::format("({} * {})", IntExpr(depth - 1), IntExpr(depth - 1));
    case 6:
      // The divisor is in 2..14: never zero.
      return fmt::format("({} {} ({} % 7 + 8))", IntExpr(depth - 1), Chance(50) ? "/" : "%",
                         IntExpr(depth - 1));
    case 7:
      if (fn_index_ > 0) {
        return fmt::format("f{}({}, {})", Pick(fn_index_), IntExpr(depth - 1), IntExpr(depth - 1));
      }
      return Const();
    case 8:
      return fmt::format("ev(E::B({}, {}))", IntExpr(depth - 1), IntExpr(depth - 1));
    case 9:
      return fmt::format("-{}", vars_.empty() ? Const() : Var());
    default:
      return fmt::format("twice(|x: Int| x * {} + {}, {})", Pick(5), IntExpr(0),
                         IntExpr(depth - 1));
  }
}

std::string Gen::BoolExpr(int depth) {
  static const char* const kCmp[] = {"<", ">", "<=", ">=", "==", "!="};
  switch (depth <= 0 ? 0 : Pick(5)) {
    case 0:
    case 1:
      return fmt::format("{} {} {}", IntExpr(1), kCmp[Pick(6)], IntExpr(1));
    case 2:
      return fmt::format("!({})", BoolExpr(depth - 1));
    case 3:
      return fmt::format("({}) && ({})", BoolExpr(depth - 1), BoolExpr(depth - 1));
    default:
      return fmt::format("({}) || ({})", BoolExpr(depth - 1), BoolExpr(depth - 1));
  }
}

void Gen::Block(int depth, int statements, std::string& out, const std::string& indent) {
  const std::size_t vars = vars_.size();
  const std::size_t muts = mutable_vars_.size();
  for (int i = 0; i < statements; ++i) Statement(depth, out, indent);
  vars_.resize(vars);
  mutable_vars_.resize(muts);
}

void Gen::Statement(int depth, std::string& out, const std::string& in) {
  const std::string name = fmt::format("v{}", next_name_++);
  switch (Pick(depth > 0 ? 15 : 9)) {
    case 0:
    case 1:
      out += fmt::format("{}let mut {} = {}\n", in, name, IntExpr(2));
      vars_.push_back(name);
      mutable_vars_.push_back(name);
      return;
    case 2:
      if (!mutable_vars_.empty()) {
        const std::string& v =
            mutable_vars_[static_cast<std::size_t>(Pick(static_cast<int>(mutable_vars_.size())))];
        out += fmt::format("{}{} = {}\n", in, v, IntExpr(2));
        return;
      }
      [[fallthrough]];
    case 3:
      out += fmt::format("{}print_int({})\n", in, IntExpr(2));
      return;
    case 4:
      out += fmt::format("{}let {} = P {{ a: {}, b: {} }}\n{}print_int({}.a - {}.b)\n", in, name,
                         IntExpr(1), IntExpr(1), in, name, name);
      return;
    case 5: {
      const int k = Pick(6);
      out += fmt::format(
          "{}list_push(xs, {})\n{}if list_length(xs) > {} {{\n{}    print_int(list_get(xs, "
          "{}))\n{}}}\n",
          in, IntExpr(1), in, k, in, k, in);
      return;
    }
    case 6:
      out += fmt::format(
          "{}map_insert(m, {} % 5, {})\n{}print_int(map_get(m, {} % 5) + map_length(m))\n", in,
          IntExpr(1), IntExpr(1), in, IntExpr(0));
      return;
    case 7:
      out += fmt::format("{}println(f\"{} = {{{}}}\")\n", in, name, IntExpr(0));
      return;
    case 8: {
      const char* variant[] = {"E::A({})", "E::B({}, 3)", "E::C"};
      const int k = Pick(3);
      std::string e = k == 2 ? "E::C" : fmt::format(fmt::runtime(variant[k]), IntExpr(1));
      out += fmt::format("{}print_int(ev({}))\n", in, e);
      return;
    }
    case 9:
    case 10: {
      out += fmt::format("{}if {} {{\n", in, BoolExpr(2));
      Block(depth - 1, 1 + Pick(3), out, in + "    ");
      out += fmt::format("{}}} else {{\n", in);
      Block(depth - 1, 1 + Pick(2), out, in + "    ");
      out += fmt::format("{}}}\n", in);
      return;
    }
    case 11: {
      out += fmt::format("{}for {} in 0..{} {{\n", in, name, Pick(5));
      vars_.push_back(name);
      Block(depth - 1, 1 + Pick(3), out, in + "    ");
      vars_.pop_back();
      out += fmt::format("{}}}\n", in);
      return;
    }
    case 12: {
      out += fmt::format("{}let mut {} = 0\n{}while {} < {} {{\n{}    {} = {} + 1\n", in, name, in,
                         name, 1 + Pick(4), in, name, name);
      vars_.push_back(name);
      Block(depth - 1, 1 + Pick(2), out, in + "    ");
      vars_.pop_back();
      out += fmt::format("{}}}\n", in);
      return;
    }
    case 13: {
      const std::string cap = vars_.empty() ? "1" : Var();
      out += fmt::format("{}let {} = |x: Int| x * {} - {}\n{}print_int({}({}))\n", in, name,
                         Pick(9), cap, in, name, IntExpr(1));
      return;
    }
    default: {
      out += fmt::format("{}let {} = {} < {}\n{}if {} {{\n{}    println(\"yes\")\n{}}}\n", in, name,
                         IntExpr(1), IntExpr(1), in, name, in, in);
      return;
    }
  }
}

std::string Gen::Program() {
  std::string out =
      "module gen {\n"
      "    meta { purpose: \"generated for the native differential test\" }\n\n"
      "    struct P { a: Int, b: Int }\n\n"
      "    enum E {\n        A(Int),\n        B(Int, Int),\n        C\n    }\n\n"
      "    fn ev(e: E) -> Int {\n"
      "        match e {\n"
      "            E::A(x) => { return x * 2 },\n"
      "            E::B(x, y) => { return x - y },\n"
      "            E::C => { return 7 }\n"
      "        }\n"
      "        return 0\n"
      "    }\n\n"
      "    fn twice(f: (Int) -> Int, x: Int) -> Int {\n"
      "        return f(f(x))\n"
      "    }\n\n";
  const int functions = 1 + Pick(3);
  for (int k = 0; k < functions; ++k) {
    fn_index_ = k;
    vars_ = {"a", "b"};
    mutable_vars_.clear();
    out += fmt::format("    fn f{}(a: Int, b: Int) -> Int {{\n", k);
    out += "        let xs = list_new()\n        let m = map_new()\n";
    Block(2, 2 + Pick(4), out, "        ");
    out += fmt::format("        return {}\n    }}\n\n", IntExpr(2));
  }
  fn_index_ = functions;
  vars_.clear();
  mutable_vars_.clear();
  out += "    fn main() {\n        let xs = list_new()\n        let m = map_new()\n";
  out += fmt::format("        print_int({})\n", Const());
  Block(3, 6 + Pick(8), out, "        ");
  out += "        print_int(list_length(xs))\n        println(\"done\")\n    }\n}\n";
  return out;
}

// JSON and regex programs (docs/decisions/0076): random JSON documents, parsed and built, and
// random patterns from a fixed set of ECMAScript constructs over random subjects.
class TextGen {
 public:
  explicit TextGen(std::uint64_t seed)
      : state_(seed * 0xD1B54A32D192ED03ULL + 0x9E3779B97F4A7C15ULL) {
    for (int i = 0; i < 4; ++i) Next();
  }
  std::string Program();

 private:
  std::uint64_t Next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  int Pick(int n) { return static_cast<int>(Next() % static_cast<std::uint64_t>(n)); }
  // A JSON value as text (valid JSON; the caller may break it).
  std::string Json(int depth);
  std::string Key() {
    static const char* const kKeys[] = {"name", "age", "ok", "score", "items", "o", "k"};
    return kKeys[Pick(7)];
  }
  // `text` as a Kōdo string literal.
  static std::string Lit(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  }
  std::string Subject() {
    static const char* const kParts[] = {"ab",  "a",  "b", "12", "7",   " ",  "-",
                                         "x_y", "AB", "é", "c",  "aab", "\t", "99-100"};
    std::string s;
    const int n = Pick(7);
    for (int i = 0; i < n; ++i) s += kParts[Pick(14)];
    return s;
  }

  std::uint64_t state_;
};

std::string TextGen::Json(int depth) {
  static const char* const kScalars[] = {"0",
                                         "-7",
                                         "42",
                                         "9223372036854775807",
                                         "18446744073709551615",
                                         "1.5",
                                         "-0.0",
                                         "1e3",
                                         "3.14159",
                                         "2.5e-8",
                                         "1e300",
                                         "0.1",
                                         "true",
                                         "false",
                                         "null",
                                         "\"x\"",
                                         "\"h\\u00e9llo\"",
                                         "\"a\\nb\\\"c\\\\\"",
                                         "\"\\ud83d\\ude00\"",
                                         "\"\"",
                                         "123456789012345678901234567890"};
  const int choice = depth <= 0 ? 0 : Pick(4);
  if (choice <= 1) return kScalars[Pick(21)];
  if (choice == 2) {
    std::string out = "[";
    const int n = Pick(4);
    for (int i = 0; i < n; ++i) out += (i ? ", " : "") + Json(depth - 1);
    return out + "]";
  }
  std::string out = "{";
  const int n = Pick(5);
  for (int i = 0; i < n; ++i)
    out += fmt::format("{}\"{}\": {}", i ? "," : "", Key(), Json(depth - 1));
  return out + "}";
}

std::string TextGen::Program() {
  std::string out =
      "module gen {\n"
      "    meta { purpose: \"generated JSON and regex for the native differential test\" }\n\n"
      "    fn show(doc: Int) {\n"
      "        println(json_stringify(doc))\n"
      "        println(json_get_string(doc, \"name\"))\n"
      "        print_int(json_get_int(doc, \"age\"))\n"
      "        print_int(json_get_bool(doc, \"ok\"))\n"
      "        println_float(json_get_float(doc, \"score\"))\n"
      "        print_int(json_get_object(doc, \"o\"))\n"
      "        for h in json_get_array(doc, \"items\") {\n"
      "            println(json_stringify(h))\n"
      "        }\n"
      "    }\n\n"
      "    fn main() {\n";
  const int docs = 2 + Pick(4);
  for (int i = 0; i < docs; ++i) {
    std::string text = Json(3);
    if (Pick(8) == 0) text += Pick(2) ? "," : "}";  // invalid: json_parse gives 0
    out +=
        fmt::format("        let d{} = json_parse({})\n        print_int(d{})\n", i, Lit(text), i);
    out += fmt::format("        show(d{})\n", i);
    if (Pick(3) == 0) {
      out += fmt::format(
          "        json_set_string(d{0}, \"name\", {1})\n"
          "        json_set_int(d{0}, \"age\", {2})\n"
          "        json_set_bool(d{0}, \"ok\", {3})\n"
          "        json_set_float(d{0}, \"score\", {4})\n"
          "        show(d{0})\n",
          i, Lit(Subject()), Pick(1000) - 500, Pick(2) ? "true" : "false",
          Pick(2) ? "0.25" : "12345.678");
    }
    if (Pick(4) == 0) out += fmt::format("        json_free(d{0})\n        show(d{0})\n", i);
  }
  out += "        let b = json_new_object()\n";
  out += fmt::format("        json_set_string(b, {}, {})\n", Lit(Key()), Lit(Subject()));
  out += fmt::format("        json_set_int(b, {}, {})\n", Lit(Key()), Pick(100));
  out += "        show(b)\n";
  static const char* const kPatterns[] = {
      "[a-z]+",         "\\d{2,}", "(ab|a)c?", "^\\w+", "x*?",      "(\\d+)-(\\d+)",
      "[^ ]+$",         "(a)\\1",  "a(?=b)",   "\\s",   "\\bab\\b", "[A-Z]{1,2}",
      "(a|ab)(c|bcd)?", ".+?",     "(",        "[z-a]", "a{2}",     "é+",
      "(?:ab)+",        "\\.",     "^$",       "b*"};
  static const char* const kReplacements[] = {"$1", "<$&>", "$$", "[$2]", "", "-", "$`|$'"};
  const int checks = 6 + Pick(8);
  for (int i = 0; i < checks; ++i) {
    const std::string pat = Lit(kPatterns[Pick(22)]);
    const std::string subject = Lit(Subject());
    switch (Pick(3)) {
      case 0:
        out += fmt::format(
            "        if regex_match({}, {}) {{\n            println(\"match\")\n        }} else "
            "{{\n            println(\"no match\")\n        }}\n",
            pat, subject);
        break;
      case 1:
        out += fmt::format("        println(regex_find({}, {}).unwrap_or(\"<none>\"))\n", pat,
                           subject);
        break;
      default:
        out += fmt::format("        println(regex_replace({}, {}, {}))\n", pat, subject,
                           Lit(kReplacements[Pick(7)]));
        break;
    }
  }
  out += "        println(\"done\")\n    }\n}\n";
  return out;
}

}  // namespace

std::string GenerateProgram(std::uint64_t seed) {
  Gen g(seed);
  return g.Program();
}

std::string GenerateJsonRegexProgram(std::uint64_t seed) {
  TextGen g(seed);
  return g.Program();
}

}  // namespace trove::kodo::native::testing

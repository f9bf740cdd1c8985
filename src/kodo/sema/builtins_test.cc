// The builtin table (builtins.h) and element-aware typing of collection builtins and methods
// (issue 20, T2; docs/decisions/0055-kodo-builtins-and-collections.md).
#include "kodo/sema/builtins.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kodo/sema/check.h"

namespace trove::kodo::sema {
namespace {

std::vector<diag::Diagnostic> Diags(std::string text) {
  Result<SourceBuffer> source = SourceBuffer::Create(0, "t.ko", std::move(text));
  EXPECT_TRUE(source.ok());
  Result<SourceCheck> check = CheckSource(*source);
  EXPECT_TRUE(check.ok());
  return check->diagnostics;
}

std::string Module(const std::string& body) {
  return "module m {\n    meta { purpose: \"test\" }\n" + body + "\n}\n";
}

std::string Message(const diag::Diagnostic& d) {
  return d.message.substr(0, d.message.find(" at Span {"));
}

// The names docs/kodo.md §4.6 lists, group by group (assert_eq/assert_ne are not values: they
// are typed at their calls, §5.5).
const char* const kSection13Names[] = {
    // I/O, math
    "println", "print", "print_int", "print_float", "println_float", "readln", "args", "exit",
    "abs", "min", "max", "clamp", "sqrt", "pow", "sin", "cos", "log", "floor", "ceil", "round",
    "rand_int",
    // chars / builder
    "char_at", "char_from_code", "is_alpha", "is_digit", "is_alphanumeric", "is_whitespace",
    "string_builder_new", "string_builder_push", "string_builder_push_char",
    "string_builder_to_string", "string_builder_len", "format_int",
    // List
    "list_new", "list_push", "list_get", "list_set", "list_length", "list_is_empty",
    "list_contains", "list_pop", "list_remove", "list_reverse", "list_slice", "list_sort",
    "list_join",
    // Map
    "map_new", "map_insert", "map_get", "map_contains_key", "map_remove", "map_length",
    "map_is_empty", "map_merge", "map_filter",
    // Set
    "set_new", "set_add", "set_contains", "set_remove", "set_length", "set_is_empty", "set_union",
    "set_intersection", "set_difference", "set_to_list",
    // files / env / time
    "file_read", "file_write", "file_append", "file_exists", "file_delete", "dir_exists",
    "dir_list", "env_get", "env_set", "time_now", "time_now_ms", "timestamp", "time_format",
    "time_elapsed_ms", "sleep",
    // JSON
    "json_parse", "json_get_string", "json_get_int", "json_get_bool", "json_get_float",
    "json_get_array", "json_get_object", "json_stringify", "json_free", "json_new_object",
    "json_set_string", "json_set_int", "json_set_bool", "json_set_float",
    // HTTP
    "http_get", "http_post", "http_server_new", "http_server_recv", "http_request_method",
    "http_request_path", "http_request_body", "http_respond", "http_server_free",
    // DB
    "db_open", "db_execute", "db_query", "db_row_next", "db_row_get_string", "db_row_get_int",
    "db_row_advance", "db_result_free", "db_close",
    // regex
    "regex_match", "regex_find", "regex_replace",
    // channels (§4.7)
    "channel_new", "channel_send", "channel_recv", "channel_free",
    // tests
    "assert", "assert_true", "assert_false"};

// The names upstream's checker binds besides those (§5.4: "≈200 functions"): methods by their
// mangled names, the iterator protocol, typed channels, and runtime hooks. Issue 20 names some
// of them (`map_keys_advance`, `String_length`).
const char* const kUpstreamOnlyNames[] = {"String_length",
                                          "String_byte_length",
                                          "String_char_count",
                                          "String_contains",
                                          "String_starts_with",
                                          "String_ends_with",
                                          "String_trim",
                                          "String_to_upper",
                                          "String_to_lower",
                                          "String_substring",
                                          "String_split",
                                          "String_lines",
                                          "String_parse_int",
                                          "String_char_at",
                                          "String_repeat",
                                          "String_chars",
                                          "Int_to_string",
                                          "Int_to_float64",
                                          "Float64_to_string",
                                          "Float64_to_int",
                                          "Bool_to_string",
                                          "Option_is_some",
                                          "Option_is_none",
                                          "Option_unwrap",
                                          "Option_unwrap_or",
                                          "Result_is_ok",
                                          "Result_is_err",
                                          "Result_unwrap",
                                          "Result_unwrap_err",
                                          "Result_unwrap_or",
                                          "List_sort_by",
                                          "List_map",
                                          "List_filter",
                                          "List_fold",
                                          "List_reduce",
                                          "List_count",
                                          "List_any",
                                          "List_all",
                                          "list_iter",
                                          "list_iterator_next",
                                          "list_iterator_advance",
                                          "list_iterator_value",
                                          "list_iterator_free",
                                          "string_chars_advance",
                                          "string_chars_value",
                                          "string_chars_free",
                                          "Map_keys",
                                          "map_keys_advance",
                                          "map_keys_value",
                                          "map_keys_free",
                                          "Map_values",
                                          "map_values_advance",
                                          "map_values_value",
                                          "map_values_free",
                                          "channel_new_bool",
                                          "channel_new_string",
                                          "channel_send_bool",
                                          "channel_recv_bool",
                                          "channel_send_string",
                                          "channel_recv_string",
                                          "channel_select_2",
                                          "channel_select_3",
                                          "channel_generic_new",
                                          "channel_generic_send",
                                          "channel_generic_recv",
                                          "channel_generic_free",
                                          "kodo_future_new",
                                          "kodo_future_complete",
                                          "kodo_future_await",
                                          "kodo_future_complete_bytes",
                                          "kodo_future_await_bytes",
                                          "kodo_test_start",
                                          "kodo_test_end",
                                          "kodo_test_skip",
                                          "kodo_test_summary",
                                          "kodo_prop_start",
                                          "kodo_prop_gen_int",
                                          "kodo_prop_gen_bool",
                                          "kodo_prop_gen_float",
                                          "kodo_prop_gen_string",
                                          "kodo_test_set_timeout",
                                          "kodo_test_clear_timeout",
                                          "kodo_test_isolate_start",
                                          "kodo_test_isolate_end"};

TEST(BuiltinsTest, TheTableHoldsExactlyTheSection13AndUpstreamNames) {
  std::set<std::string> expected(std::begin(kSection13Names), std::end(kSection13Names));
  expected.insert(std::begin(kUpstreamOnlyNames), std::end(kUpstreamOnlyNames));
  std::set<std::string> table;
  for (const BuiltinSignature& b : Builtins()) {
    EXPECT_TRUE(table.insert(std::string(b.name)).second) << "duplicate " << b.name;
    EXPECT_FALSE(FamilyName(b.family).empty()) << b.name;
  }
  for (const std::string& name : expected) EXPECT_TRUE(table.count(name) > 0) << name;
  for (const std::string& name : table) EXPECT_TRUE(expected.count(name) > 0) << name;
}

// Every name resolves as a value (no E0201) in a program, one function per name.
TEST(BuiltinsTest, EveryBuiltinNameResolves) {
  std::string body;
  std::vector<std::string> names(std::begin(kSection13Names), std::end(kSection13Names));
  names.insert(names.end(), std::begin(kUpstreamOnlyNames), std::end(kUpstreamOnlyNames));
  for (std::size_t i = 0; i < names.size(); ++i) {
    body += "    fn use_" + std::to_string(i) + "() {\n        let f = " + names[i] + "\n    }\n";
  }
  const std::vector<diag::Diagnostic> diags = Diags(Module(body));
  for (const diag::Diagnostic& d : diags) ADD_FAILURE() << d.message;
  EXPECT_GE(names.size(), 200u);
}

// The bound type of a name is upstream's registered signature (the Int-element instance),
// shown by the E0200 of assigning it to an Int.
TEST(BuiltinsTest, BoundTypesAreUpstreamSignatures) {
  const struct {
    const char* name;
    const char* display;
  } cases[] = {
      {"list_push", "(List<Int>, Int) -> ()"},
      {"list_get", "(List<Int>, Int) -> Int"},
      {"List_map", "(List<Int>, (Int) -> Int) -> List<Int>"},
      {"List_fold", "(List<Int>, Int, (Int, Int) -> Int) -> Int"},
      {"List_sort_by", "(List<Int>, (Int, Int) -> Int) -> ()"},
      {"map_insert", "(Map<Int, Int>, Int, Int) -> ()"},
      {"map_filter", "(Map<Int, Int>, (Int, Int) -> Bool) -> Map<Int, Int>"},
      {"Map_keys", "(Map<Int, Int>) -> Int"},
      {"map_keys_advance", "(Int) -> Int"},
      {"set_union", "(Set<Int>, Set<Int>) -> Set<Int>"},
      {"set_to_list", "(Set<Int>) -> List<Int>"},
      {"String_length", "(String) -> Int"},
      {"String_chars", "(String) -> Int"},
      {"Option_unwrap_or", "(Option, Int) -> Int"},
      {"Result_unwrap_err", "(Result) -> String"},
      {"file_read", "(String) -> Result__String_String"},
      {"file_write", "(String, String) -> Result__Unit_String"},
      {"regex_find", "(String, String) -> Option__String"},
      {"channel_new", "() -> Channel<?>"},
      {"channel_send", "(Channel<Int>, Int) -> ()"},
      {"json_get_array", "(Int, String) -> List<Int>"},
      {"kodo_test_summary", "(Int, Int, Int, Int, Int) -> ()"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::vector<diag::Diagnostic> diags =
        Diags(Module(std::string("    fn f() {\n        let g: Int = ") + c.name + "\n    }"));
    ASSERT_EQ(diags.size(), 1u);
    EXPECT_EQ(Message(diags[0]),
              std::string("type mismatch: expected `Int`, found `") + c.display + "`");
  }
}

// Issue 20: `list_push(xs, "a")` on a List<Int> is E0200 at the argument, with upstream's
// message; `xs.map(...)` has type List<Int>.
TEST(BuiltinsTest, PushingAStringOntoAListOfIntIsAMismatchAtTheArgument) {
  const std::string text = Module(
      "    fn f() {\n"
      "        let xs: List<Int> = list_new()\n"
      "        list_push(xs, \"a\")\n"
      "    }");
  const std::vector<diag::Diagnostic> diags = Diags(text);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].code(), "E0200");
  EXPECT_EQ(Message(diags[0]), "type mismatch: expected `Int`, found `String`");
  ASSERT_TRUE(diags[0].span.has_value());
  EXPECT_EQ(text.substr(diags[0].span->begin, diags[0].span->end - diags[0].span->begin), "\"a\"");
}

TEST(BuiltinsTest, MapOverAListOfIntIsAListOfInt) {
  const std::string ok = Module(
      "    fn f(xs: List<Int>) -> List<Int> {\n"
      "        return xs.map(|x: Int| x + 1)\n"
      "    }");
  EXPECT_TRUE(Diags(ok).empty());
  const std::vector<diag::Diagnostic> diags =
      Diags(Module("    fn f(xs: List<Int>) -> Bool {\n"
                   "        return xs.map(|x: Int| x + 1)\n"
                   "    }"));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(Message(diags[0]), "type mismatch: expected `Bool`, found `List<Int>`");
}

// The other element types: what upstream types for Int only is typed for the collection's own
// element types, by the free functions and by the methods.
TEST(BuiltinsTest, CollectionsOfOtherElementTypesAreTypedByTheirElements) {
  const std::string ok = Module(
      "    fn f(names: List<String>, ages: Map<String, Int>, tags: Set<String>) -> Int {\n"
      "        list_push(names, \"ann\")\n"
      "        names.push(\"bob\")\n"
      "        let first: String = list_get(names, 0)\n"
      "        let last: String = names.pop()\n"
      "        let lengths: List<Int> = names.map(|s: String| s.length())\n"
      "        let long: List<String> = names.filter(|s: String| s.length() > 3)\n"
      "        let joined: String = names.fold(\"\", |acc: String, s: String| acc + s)\n"
      "        map_insert(ages, \"ann\", 31)\n"
      "        let age: Int = map_get(ages, \"ann\")\n"
      "        let known: Bool = map_contains_key(ages, first) && ages.remove(last)\n"
      "        let adults: Map<String, Int> = ages.filter(|k: String, v: Int| v >= 18)\n"
      "        set_add(tags, \"x\")\n"
      "        let both: Set<String> = tags.union(tags)\n"
      "        let listed: List<String> = set_to_list(both)\n"
      "        if known && tags.contains(joined) {\n"
      "            return age + lengths.length() + long.length() + listed.length()\n"
      "        }\n"
      "        if adults.is_empty() {\n"
      "            return 0\n"
      "        }\n"
      "        return 1\n"
      "    }");
  for (const diag::Diagnostic& d : Diags(ok)) ADD_FAILURE() << d.message;
}

TEST(BuiltinsTest, ElementMismatchesNameTheElementType) {
  const struct {
    const char* body;
    const char* message;
  } cases[] = {
      {"fn f(names: List<String>) { list_push(names, 1) }",
       "type mismatch: expected `String`, found `Int`"},
      {"fn f(names: List<String>) { names.push(1) }",
       "type mismatch: expected `String`, found `Int`"},
      {"fn f(names: List<String>) -> Int { return list_get(names, 0) }",
       "type mismatch: expected `Int`, found `String`"},
      {"fn f(m: Map<String, Int>) { map_insert(m, 1, 2) }",
       "type mismatch: expected `String`, found `Int`"},
      {"fn f(m: Map<String, Int>) { map_insert(m, \"k\", \"v\") }",
       "type mismatch: expected `Int`, found `String`"},
      {"fn f(s: Set<String>) -> Bool { return s.contains(1) }",
       "type mismatch: expected `String`, found `Int`"},
      {"fn f(xs: List<Int>) -> List<Int> { return xs.map(|s: String| s.length()) }",
       "type mismatch: expected `(Int) -> Int`, found `(String) -> Int`"},
      {"fn f(xs: List<Int>) -> Int { return xs.fold(0, |a: Int, x: String| a) }",
       "type mismatch: expected `(Int, Int) -> Int`, found `(Int, String) -> Int`"},
      {"fn f(x: Int) { list_push(x, 1) }", "type mismatch: expected `List<Int>`, found `Int`"},
      {"fn f(xs: List<Int>) -> String { return list_join(xs, \",\") }",
       "type mismatch: expected `List<String>`, found `List<Int>`"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    const std::vector<diag::Diagnostic> diags = Diags(Module(std::string("    ") + c.body));
    ASSERT_EQ(diags.size(), 1u);
    EXPECT_EQ(diags[0].code(), "E0200");
    EXPECT_EQ(Message(diags[0]), c.message);
  }
}

// Typed methods of Option and Result: the payload types, and E0235 for an unknown method
// instead of an untyped value.
TEST(BuiltinsTest, OptionAndResultMethodsAreTyped) {
  const std::string ok = Module(
      "    fn f(o: Option<String>, r: Result<Int, String>) -> String {\n"
      "        let s: String = o.unwrap_or(\"none\")\n"
      "        let n: Int = r.unwrap() + r.unwrap_or(0)\n"
      "        let e: String = r.unwrap_err()\n"
      "        if o.is_some() && r.is_ok() && !o.is_none() && !r.is_err() {\n"
      "            return s + e + n.to_string()\n"
      "        }\n"
      "        return o.unwrap()\n"
      "    }");
  for (const diag::Diagnostic& d : Diags(ok)) ADD_FAILURE() << d.message;

  const struct {
    const char* body;
    const char* code;
    const char* message;
  } cases[] = {
      {"fn f(o: Option<Int>) -> Int { return o.frobnicate() }", "E0235",
       "no method `frobnicate` on type `Option__Int`"},
      {"fn f(o: Option<Int>) -> Int { return o.unwrp() }", "E0235",
       "no method `unwrp` on type `Option__Int`"},
      {"fn f(r: Result<Int, String>) -> Int { return r.get() }", "E0235",
       "no method `get` on type `Result__Int_String`"},
      {"fn f(xs: List<Int>) -> Int { return xs.size() }", "E0235",
       "no method `size` on type `List`"},
      {"fn f(m: Map<Int, Int>) -> Int { return m.length() }", "E0235",
       "no method `length` on type `Map`"},
      {"fn f(o: Option<String>) -> Int { return o.unwrap() }", "E0200",
       "type mismatch: expected `Int`, found `String`"},
      {"fn f(o: Option<String>) -> String { return o.unwrap_or(1) }", "E0200",
       "type mismatch: expected `String`, found `Int`"},
      {"fn f(r: Result<Int, Bool>) -> String { return r.unwrap_err() }", "E0200",
       "type mismatch: expected `String`, found `Bool`"},
      {"fn f(o: Option<Int>) -> Bool { return o.is_some(1) }", "E0202",
       "expected 0 arguments, found 1"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body);
    const std::vector<diag::Diagnostic> diags = Diags(Module(std::string("    ") + c.body));
    ASSERT_EQ(diags.size(), 1u);
    EXPECT_EQ(diags[0].code(), c.code);
    EXPECT_EQ(Message(diags[0]), c.message);
  }
}

// A module function or a local named like a builtin shadows it (§5.4).
TEST(BuiltinsTest, UserNamesShadowBuiltins) {
  const std::string text = Module(
      "    fn list_push(a: Int, b: String) -> Int {\n"
      "        return a\n"
      "    }\n"
      "    fn f() -> Int {\n"
      "        let map_get = |x: Int| x * 2\n"
      "        return list_push(1, \"s\") + map_get(2)\n"
      "    }");
  for (const diag::Diagnostic& d : Diags(text)) ADD_FAILURE() << d.message;
}

// Every builtin is called, by name or as a method, in the family goldens
// (testdata/kodo/check/ok_builtins_*.ko), which must check clean (golden_test.cc).
TEST(BuiltinsTest, EveryBuiltinIsUsedInAFamilyGolden) {
  const std::string dir = std::string(TROVE_KODO_TESTDATA) + "/check";
  std::string all;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* entry = readdir(d)) {
      const std::string name = entry->d_name;
      if (name.rfind("ok_builtins_", 0) != 0 || name.size() < 3 ||
          name.substr(name.size() - 3) != ".ko") {
        continue;
      }
      std::ifstream in(dir + "/" + name, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      all += ss.str();
    }
    closedir(d);
  }
  ASSERT_FALSE(all.empty());
  for (const BuiltinSignature& b : Builtins()) {
    const bool called = all.find(std::string(b.name) + "(") != std::string::npos;
    const bool as_method =
        !b.method.empty() && all.find("." + std::string(b.method) + "(") != std::string::npos;
    EXPECT_TRUE(called || as_method) << b.name << " (" << FamilyName(b.family) << ")";
  }
}

}  // namespace
}  // namespace trove::kodo::sema

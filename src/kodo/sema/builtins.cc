// The builtin table (builtins.h). Names, parameter and result types are upstream's
// (crates/kodo_types/src/builtins.rs, the version docs/kodo.md §4.6 describes); where upstream
// registers a collection function for the Int-element instance only, the element positions are
// written as variables (T, K, V) so that the checker can type the other instances
// (docs/decisions/0055-kodo-builtins-and-collections.md).
#include "kodo/sema/builtins.h"

#include <algorithm>
#include <vector>

namespace trove::kodo::sema {
namespace {

using F = BuiltinFamily;

// {name, family, params, result, receiver, method}
constexpr BuiltinSignature kBuiltins[] = {
    // I/O and math (register_io_and_math_builtins).
    {"println", F::kIo, "String", "()", "", ""},
    {"print", F::kIo, "String", "()", "", ""},
    {"print_int", F::kIo, "Int", "()", "", ""},
    {"print_float", F::kIo, "Float64", "()", "", ""},
    {"println_float", F::kIo, "Float64", "()", "", ""},
    {"abs", F::kMath, "Int", "Int", "", ""},
    {"min", F::kMath, "Int, Int", "Int", "", ""},
    {"max", F::kMath, "Int, Int", "Int", "", ""},
    {"clamp", F::kMath, "Int, Int, Int", "Int", "", ""},
    {"file_exists", F::kSystem, "String", "Bool", "", ""},
    {"file_read", F::kSystem, "String", "Result__String_String", "", ""},
    {"file_write", F::kSystem, "String, String", "Result__Unit_String", "", ""},
    // String methods.
    {"String_length", F::kString, "String", "Int", "String", "length"},
    {"String_byte_length", F::kString, "String", "Int", "String", "byte_length"},
    {"String_char_count", F::kString, "String", "Int", "String", "char_count"},
    {"String_contains", F::kString, "String, String", "Bool", "String", "contains"},
    {"String_starts_with", F::kString, "String, String", "Bool", "String", "starts_with"},
    {"String_ends_with", F::kString, "String, String", "Bool", "String", "ends_with"},
    {"String_trim", F::kString, "String", "String", "String", "trim"},
    {"String_to_upper", F::kString, "String", "String", "String", "to_upper"},
    {"String_to_lower", F::kString, "String", "String", "String", "to_lower"},
    {"String_substring", F::kString, "String, Int, Int", "String", "String", "substring"},
    {"String_split", F::kString, "String, String", "List<String>", "String", "split"},
    {"String_lines", F::kString, "String", "List<String>", "String", "lines"},
    {"String_parse_int", F::kString, "String", "Int", "String", "parse_int"},
    {"String_char_at", F::kString, "String, Int", "Int", "String", "char_at"},
    {"String_repeat", F::kString, "String, Int", "String", "String", "repeat"},
    // Int, Float64 and Bool methods.
    {"Int_to_string", F::kConversion, "Int", "String", "Int", "to_string"},
    {"Int_to_float64", F::kConversion, "Int", "Float64", "Int", "to_float64"},
    {"Float64_to_string", F::kConversion, "Float64", "String", "Float64", "to_string"},
    {"Float64_to_int", F::kConversion, "Float64", "Int", "Float64", "to_int"},
    {"Bool_to_string", F::kConversion, "Bool", "String", "Bool", "to_string"},
    // Option and Result methods: T is the Some/Ok payload, E the Err payload.
    {"Option_is_some", F::kOptionResult, "Option", "Bool", "Option", "is_some"},
    {"Option_is_none", F::kOptionResult, "Option", "Bool", "Option", "is_none"},
    {"Option_unwrap", F::kOptionResult, "Option", "T", "Option", "unwrap"},
    {"Option_unwrap_or", F::kOptionResult, "Option, T", "T", "Option", "unwrap_or"},
    {"Result_is_ok", F::kOptionResult, "Result", "Bool", "Result", "is_ok"},
    {"Result_is_err", F::kOptionResult, "Result", "Bool", "Result", "is_err"},
    {"Result_unwrap", F::kOptionResult, "Result", "T", "Result", "unwrap"},
    {"Result_unwrap_err", F::kOptionResult, "Result", "E", "Result", "unwrap_err"},
    {"Result_unwrap_or", F::kOptionResult, "Result, T", "T", "Result", "unwrap_or"},
    // List: functions, and the methods that call them.
    {"list_new", F::kList, "", "List<Int>", "", ""},
    {"list_push", F::kList, "List<T>, T", "()", "List", "push"},
    {"list_get", F::kList, "List<T>, Int", "T", "List", "get"},
    {"list_length", F::kList, "List<T>", "Int", "List", "length"},
    {"list_contains", F::kList, "List<T>, T", "Bool", "List", "contains"},
    {"list_pop", F::kList, "List<T>", "T", "List", "pop"},
    {"list_remove", F::kList, "List<T>, Int", "Bool", "List", "remove"},
    {"list_set", F::kList, "List<T>, Int, T", "Bool", "List", "set"},
    {"list_is_empty", F::kList, "List<T>", "Bool", "List", "is_empty"},
    {"list_reverse", F::kList, "List<T>", "()", "List", "reverse"},
    {"list_slice", F::kList, "List<T>, Int, Int", "List<T>", "List", "slice"},
    {"list_sort", F::kList, "List<T>", "()", "List", "sort"},
    {"List_sort_by", F::kList, "List<T>, (T, T) -> Int", "()", "List", "sort_by"},
    {"list_join", F::kList, "List<String>, String", "String", "List", "join"},
    // Iterator protocol (register_iterator_functions): opaque Int handles.
    {"list_iter", F::kIterator, "List<T>", "Int", "List", "iter"},
    {"list_iterator_next", F::kIterator, "Int", "Int", "", ""},
    {"list_iterator_advance", F::kIterator, "Int", "Int", "", ""},
    {"list_iterator_value", F::kIterator, "Int", "Int", "", ""},
    {"list_iterator_free", F::kIterator, "Int", "()", "", ""},
    {"String_chars", F::kIterator, "String", "Int", "String", "chars"},
    {"string_chars_advance", F::kIterator, "Int", "Int", "", ""},
    {"string_chars_value", F::kIterator, "Int", "Int", "", ""},
    {"string_chars_free", F::kIterator, "Int", "()", "", ""},
    {"Map_keys", F::kIterator, "Map<K, V>", "Int", "Map", "keys"},
    {"map_keys_advance", F::kIterator, "Int", "Int", "", ""},
    {"map_keys_value", F::kIterator, "Int", "Int", "", ""},
    {"map_keys_free", F::kIterator, "Int", "()", "", ""},
    {"Map_values", F::kIterator, "Map<K, V>", "Int", "Map", "values"},
    {"map_values_advance", F::kIterator, "Int", "Int", "", ""},
    {"map_values_value", F::kIterator, "Int", "Int", "", ""},
    {"map_values_free", F::kIterator, "Int", "()", "", ""},
    // Functional methods of List (register_combinator_methods). U: the mapped element type, A:
    // the accumulator type; both Int for List<Int>, as upstream registers them.
    {"List_map", F::kList, "List<T>, (T) -> U", "List<U>", "List", "map"},
    {"List_filter", F::kList, "List<T>, (T) -> Bool", "List<T>", "List", "filter"},
    {"List_fold", F::kList, "List<T>, A, (A, T) -> A", "A", "List", "fold"},
    {"List_reduce", F::kList, "List<T>, A, (A, T) -> A", "A", "List", "reduce"},
    {"List_count", F::kList, "List<T>, (T) -> Bool", "Int", "List", "count"},
    {"List_any", F::kList, "List<T>, (T) -> Bool", "Bool", "List", "any"},
    {"List_all", F::kList, "List<T>, (T) -> Bool", "Bool", "List", "all"},
    // Map.
    {"map_new", F::kMap, "", "Map<Int, Int>", "", ""},
    {"map_insert", F::kMap, "Map<K, V>, K, V", "()", "", ""},
    {"map_get", F::kMap, "Map<K, V>, K", "V", "", ""},
    {"map_contains_key", F::kMap, "Map<K, V>, K", "Bool", "", ""},
    {"map_length", F::kMap, "Map<K, V>", "Int", "", ""},
    {"map_remove", F::kMap, "Map<K, V>, K", "Bool", "Map", "remove"},
    {"map_is_empty", F::kMap, "Map<K, V>", "Bool", "Map", "is_empty"},
    {"map_merge", F::kMap, "Map<K, V>, Map<K, V>", "Map<K, V>", "Map", "merge"},
    {"map_filter", F::kMap, "Map<K, V>, (K, V) -> Bool", "Map<K, V>", "Map", "filter"},
    // Set.
    {"set_new", F::kSet, "", "Set<Int>", "", ""},
    {"set_add", F::kSet, "Set<T>, T", "()", "Set", "add"},
    {"set_contains", F::kSet, "Set<T>, T", "Bool", "Set", "contains"},
    {"set_remove", F::kSet, "Set<T>, T", "Bool", "Set", "remove"},
    {"set_length", F::kSet, "Set<T>", "Int", "Set", "length"},
    {"set_is_empty", F::kSet, "Set<T>", "Bool", "Set", "is_empty"},
    {"set_union", F::kSet, "Set<T>, Set<T>", "Set<T>", "Set", "union"},
    {"set_intersection", F::kSet, "Set<T>, Set<T>", "Set<T>", "Set", "intersection"},
    {"set_difference", F::kSet, "Set<T>, Set<T>", "Set<T>", "Set", "difference"},
    {"set_to_list", F::kSet, "Set<T>", "List<T>", "", ""},
    // HTTP client, JSON, time, env.
    {"http_get", F::kHttp, "String", "Result__String_String", "", ""},
    {"http_post", F::kHttp, "String, String", "Result__String_String", "", ""},
    {"json_parse", F::kJson, "String", "Int", "", ""},
    {"json_get_string", F::kJson, "Int, String", "String", "", ""},
    {"json_get_int", F::kJson, "Int, String", "Int", "", ""},
    {"json_free", F::kJson, "Int", "()", "", ""},
    {"json_stringify", F::kJson, "Int", "String", "", ""},
    {"json_get_bool", F::kJson, "Int, String", "Int", "", ""},
    {"json_get_float", F::kJson, "Int, String", "Float64", "", ""},
    {"json_get_array", F::kJson, "Int, String", "List<Int>", "", ""},
    {"json_get_object", F::kJson, "Int, String", "Int", "", ""},
    {"time_now", F::kSystem, "", "Int", "", ""},
    {"time_now_ms", F::kSystem, "", "Int", "", ""},
    {"time_format", F::kSystem, "Int", "String", "", ""},
    {"time_elapsed_ms", F::kSystem, "Int", "Int", "", ""},
    {"env_get", F::kSystem, "String", "String", "", ""},
    {"env_set", F::kSystem, "String, String", "()", "", ""},
    // Channels (T: the element type of a typed Channel; Channel<?> accepts anything, §5.5).
    {"channel_new", F::kChannel, "", "Channel<?>", "", ""},
    {"channel_new_bool", F::kChannel, "", "Channel<Bool>", "", ""},
    {"channel_new_string", F::kChannel, "", "Channel<String>", "", ""},
    {"channel_send", F::kChannel, "Channel<T>, T", "()", "", ""},
    {"channel_recv", F::kChannel, "Channel<T>", "T", "", ""},
    {"channel_send_bool", F::kChannel, "Channel<Bool>, Bool", "()", "", ""},
    {"channel_recv_bool", F::kChannel, "Channel<Bool>", "Bool", "", ""},
    {"channel_send_string", F::kChannel, "Channel<String>, String", "()", "", ""},
    {"channel_recv_string", F::kChannel, "Channel<String>", "String", "", ""},
    {"channel_free", F::kChannel, "Int", "()", "", ""},
    {"channel_select_2", F::kChannel, "Channel<Int>, Channel<Int>", "Int", "", ""},
    {"channel_select_3", F::kChannel, "Channel<Int>, Channel<Int>, Channel<Int>", "Int", "", ""},
    {"channel_generic_new", F::kChannel, "", "Int", "", ""},
    {"channel_generic_send", F::kChannel, "Int, Int, Int", "()", "", ""},
    {"channel_generic_recv", F::kChannel, "Int, Int, Int", "Int", "", ""},
    {"channel_generic_free", F::kChannel, "Int", "()", "", ""},
    // CLI, more files, JSON builder, more math.
    {"args", F::kSystem, "", "List<String>", "", ""},
    {"readln", F::kIo, "", "String", "", ""},
    {"exit", F::kSystem, "Int", "()", "", ""},
    {"file_append", F::kSystem, "String, String", "Result__Unit_String", "", ""},
    {"file_delete", F::kSystem, "String", "Bool", "", ""},
    {"dir_list", F::kSystem, "String", "List<String>", "", ""},
    {"dir_exists", F::kSystem, "String", "Bool", "", ""},
    {"json_new_object", F::kJson, "", "Int", "", ""},
    {"json_set_string", F::kJson, "Int, String, String", "()", "", ""},
    {"json_set_int", F::kJson, "Int, String, Int", "()", "", ""},
    {"json_set_bool", F::kJson, "Int, String, Bool", "()", "", ""},
    {"json_set_float", F::kJson, "Int, String, Float64", "()", "", ""},
    {"sqrt", F::kMath, "Float64", "Float64", "", ""},
    {"pow", F::kMath, "Float64, Float64", "Float64", "", ""},
    {"sin", F::kMath, "Float64", "Float64", "", ""},
    {"cos", F::kMath, "Float64", "Float64", "", ""},
    {"log", F::kMath, "Float64", "Float64", "", ""},
    {"floor", F::kMath, "Float64", "Float64", "", ""},
    {"ceil", F::kMath, "Float64", "Float64", "", ""},
    {"round", F::kMath, "Float64", "Float64", "", ""},
    {"rand_int", F::kMath, "Int, Int", "Int", "", ""},
    // HTTP server, SQLite.
    {"http_server_new", F::kHttp, "Int", "Int", "", ""},
    {"http_server_recv", F::kHttp, "Int", "Int", "", ""},
    {"http_request_method", F::kHttp, "Int", "String", "", ""},
    {"http_request_path", F::kHttp, "Int", "String", "", ""},
    {"http_request_body", F::kHttp, "Int", "String", "", ""},
    {"http_respond", F::kHttp, "Int, Int, String", "()", "", ""},
    {"http_server_free", F::kHttp, "Int", "()", "", ""},
    {"db_open", F::kDb, "String", "Int", "", ""},
    {"db_execute", F::kDb, "Int, String", "Int", "", ""},
    {"db_query", F::kDb, "Int, String", "Int", "", ""},
    {"db_row_next", F::kDb, "Int", "Int", "", ""},
    {"db_row_get_string", F::kDb, "Int, Int", "String", "", ""},
    {"db_row_get_int", F::kDb, "Int, Int", "Int", "", ""},
    {"db_row_advance", F::kDb, "Int", "Int", "", ""},
    {"db_result_free", F::kDb, "Int", "()", "", ""},
    {"db_close", F::kDb, "Int", "()", "", ""},
    // Characters, string builder, format/timestamp/sleep, regex.
    {"char_at", F::kChars, "String, Int", "Int", "", ""},
    {"char_from_code", F::kChars, "Int", "String", "", ""},
    {"is_alpha", F::kChars, "Int", "Bool", "", ""},
    {"is_digit", F::kChars, "Int", "Bool", "", ""},
    {"is_alphanumeric", F::kChars, "Int", "Bool", "", ""},
    {"is_whitespace", F::kChars, "Int", "Bool", "", ""},
    {"string_builder_new", F::kChars, "", "Int", "", ""},
    {"string_builder_push", F::kChars, "Int, String", "()", "", ""},
    {"string_builder_push_char", F::kChars, "Int, Int", "()", "", ""},
    {"string_builder_to_string", F::kChars, "Int", "String", "", ""},
    {"string_builder_len", F::kChars, "Int", "Int", "", ""},
    {"format_int", F::kChars, "Int, Int", "String", "", ""},
    {"timestamp", F::kSystem, "", "Int", "", ""},
    {"sleep", F::kSystem, "Int", "()", "", ""},
    {"regex_match", F::kRegex, "String, String", "Bool", "", ""},
    {"regex_find", F::kRegex, "String, String", "Option__String", "", ""},
    {"regex_replace", F::kRegex, "String, String, String", "String", "", ""},
    // Futures (async lowering) and tests (assertions, harness, property testing).
    {"kodo_future_new", F::kRuntime, "", "Int", "", ""},
    {"kodo_future_complete", F::kRuntime, "Int, Int", "()", "", ""},
    {"kodo_future_await", F::kRuntime, "Int", "Int", "", ""},
    {"kodo_future_complete_bytes", F::kRuntime, "Int, Int, Int", "()", "", ""},
    {"kodo_future_await_bytes", F::kRuntime, "Int, Int, Int", "()", "", ""},
    {"assert", F::kTest, "Bool", "()", "", ""},
    {"assert_true", F::kTest, "Bool", "()", "", ""},
    {"assert_false", F::kTest, "Bool", "()", "", ""},
    {"kodo_test_start", F::kTest, "String", "()", "", ""},
    {"kodo_test_end", F::kTest, "", "Int", "", ""},
    {"kodo_test_skip", F::kTest, "", "()", "", ""},
    {"kodo_test_summary", F::kTest, "Int, Int, Int, Int, Int", "()", "", ""},
    {"kodo_prop_start", F::kTest, "Int, Int", "()", "", ""},
    {"kodo_prop_gen_int", F::kTest, "Int, Int", "Int", "", ""},
    {"kodo_prop_gen_bool", F::kTest, "", "Bool", "", ""},
    {"kodo_prop_gen_float", F::kTest, "Float64, Float64", "Float64", "", ""},
    {"kodo_prop_gen_string", F::kTest, "Int", "String", "", ""},
    {"kodo_test_set_timeout", F::kTest, "Int", "()", "", ""},
    {"kodo_test_clear_timeout", F::kTest, "", "()", "", ""},
    {"kodo_test_isolate_start", F::kTest, "", "()", "", ""},
    {"kodo_test_isolate_end", F::kTest, "", "()", "", ""},
};

}  // namespace

std::span<const BuiltinSignature> Builtins() { return kBuiltins; }

const BuiltinSignature* FindBuiltinMethod(std::string_view receiver, std::string_view method) {
  // The rows of each receiver, collected once (a method call is frequent: a scan of every row
  // per call would show in checking throughput).
  struct Receiver {
    std::string_view name;
    std::vector<const BuiltinSignature*> rows;
  };
  static const std::vector<Receiver> kByReceiver = [] {
    std::vector<Receiver> out;
    for (const BuiltinSignature& b : kBuiltins) {
      if (b.receiver.empty()) continue;
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const Receiver& r) { return r.name == b.receiver; });
      if (it == out.end()) it = out.insert(out.end(), Receiver{b.receiver, {}});
      it->rows.push_back(&b);
    }
    return out;
  }();
  for (const Receiver& r : kByReceiver) {
    if (r.name != receiver) continue;
    for (const BuiltinSignature* b : r.rows) {
      if (b->method == method) return b;
    }
    return nullptr;
  }
  return nullptr;
}

std::string_view FamilyName(BuiltinFamily family) {
  switch (family) {
    case F::kIo:
      return "i/o";
    case F::kMath:
      return "math";
    case F::kConversion:
      return "conversions";
    case F::kString:
      return "string methods";
    case F::kChars:
      return "chars / builder";
    case F::kList:
      return "list";
    case F::kIterator:
      return "iterators";
    case F::kMap:
      return "map";
    case F::kSet:
      return "set";
    case F::kOptionResult:
      return "option / result";
    case F::kSystem:
      return "files / env / time";
    case F::kJson:
      return "json";
    case F::kHttp:
      return "http";
    case F::kDb:
      return "db";
    case F::kRegex:
      return "regex";
    case F::kChannel:
      return "channels";
    case F::kTest:
      return "tests";
    case F::kRuntime:
      return "runtime";
  }
  return "";
}

}  // namespace trove::kodo::sema

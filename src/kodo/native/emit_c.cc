#include "kodo/native/emit_c.h"

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kodo/ast/describe.h"
#include "kodo/native/ext_builtins.h"

namespace trove::kodo::native {
namespace {

using mir::InstKind;
using mir::TermKind;
using mir::ValueKind;

struct BuiltinSpec {
  const char* cfn;
  int arity;
};

// The interpreter's builtin table (kodo/interp/runtime.cc Table), name by name, mapped to the
// runtime's functions. Keep the two in step; native_test checks that every builtin the corpus
// and the generator use is here.
const std::unordered_map<std::string, BuiltinSpec>& Builtins() {
  static const auto* table = new std::unordered_map<std::string, BuiltinSpec>{
      {"println", {"kb_println", 1}},
      {"print", {"kb_print", 1}},
      {"print_int", {"kb_print_int", 1}},
      {"print_float", {"kb_print_float", 1}},
      {"println_float", {"kb_println_float", 1}},
      {"kodo_to_string", {"kb_to_string", 1}},
      {"abs", {"kb_abs", 1}},
      {"min", {"kb_min", 2}},
      {"max", {"kb_max", 2}},
      {"clamp", {"kb_clamp", 3}},
      {"sqrt", {"kb_sqrt", 1}},
      {"pow", {"kb_pow", 2}},
      {"sin", {"kb_sin", 1}},
      {"cos", {"kb_cos", 1}},
      {"log", {"kb_log", 1}},
      {"floor", {"kb_floor", 1}},
      {"ceil", {"kb_ceil", 1}},
      {"round", {"kb_round", 1}},
      {"rand_int", {"kb_rand_int", 2}},
      {"String_length", {"kb_str_length", 1}},
      {"String_char_count", {"kb_str_length", 1}},
      {"String_byte_length", {"kb_str_byte_length", 1}},
      {"String_contains", {"kb_str_contains", 2}},
      {"String_starts_with", {"kb_str_starts_with", 2}},
      {"String_ends_with", {"kb_str_ends_with", 2}},
      {"String_trim", {"kb_str_trim", 1}},
      {"String_to_upper", {"kb_str_upper", 1}},
      {"String_to_lower", {"kb_str_lower", 1}},
      {"String_substring", {"kb_str_substring", 3}},
      {"String_split", {"kb_str_split", 2}},
      {"String_lines", {"kb_str_lines", 1}},
      {"String_parse_int", {"kb_str_parse_int", 1}},
      {"String_char_at", {"kb_str_char_at", 2}},
      {"String_repeat", {"kb_str_repeat", 2}},
      {"String_chars", {"kb_str_chars", 1}},
      {"String_to_string", {"kb_to_string", 1}},
      {"Int_to_string", {"kb_to_string", 1}},
      {"Int_to_float64", {"kb_int_to_float", 1}},
      {"Float64_to_string", {"kb_to_string", 1}},
      {"Float64_to_int", {"kb_float_to_int", 1}},
      {"Bool_to_string", {"kb_to_string", 1}},
      {"Option_is_some", {"kb_is_first", 1}},
      {"Option_is_none", {"kb_is_second", 1}},
      {"Option_unwrap", {"kb_option_unwrap", 1}},
      {"Option_unwrap_or", {"kb_unwrap_or", 2}},
      {"Result_is_ok", {"kb_is_first", 1}},
      {"Result_is_err", {"kb_is_second", 1}},
      {"Result_unwrap", {"kb_result_unwrap", 1}},
      {"Result_unwrap_err", {"kb_result_unwrap_err", 1}},
      {"Result_unwrap_or", {"kb_unwrap_or", 2}},
      {"list_new", {"kb_list_new", 0}},
      {"list_push", {"kb_list_push", 2}},
      {"list_get", {"kb_list_get", 2}},
      {"list_set", {"kb_list_set", 3}},
      {"list_length", {"kb_list_length", 1}},
      {"list_is_empty", {"kb_list_is_empty", 1}},
      {"list_contains", {"kb_list_contains", 2}},
      {"list_pop", {"kb_list_pop", 1}},
      {"list_remove", {"kb_list_remove", 2}},
      {"list_reverse", {"kb_list_reverse", 1}},
      {"list_slice", {"kb_list_slice", 3}},
      {"list_sort", {"kb_list_sort", 1}},
      {"list_join", {"kb_list_join", 2}},
      {"List_push", {"kb_list_push", 2}},
      {"List_get", {"kb_list_get", 2}},
      {"List_set", {"kb_list_set", 3}},
      {"List_length", {"kb_list_length", 1}},
      {"List_len", {"kb_list_length", 1}},
      {"List_is_empty", {"kb_list_is_empty", 1}},
      {"List_contains", {"kb_list_contains", 2}},
      {"List_pop", {"kb_list_pop", 1}},
      {"List_remove", {"kb_list_remove", 2}},
      {"List_reverse", {"kb_list_reverse", 1}},
      {"List_slice", {"kb_list_slice", 3}},
      {"List_sort", {"kb_list_sort", 1}},
      {"List_join", {"kb_list_join", 2}},
      {"List_iter", {"kb_iter", 1}},
      {"list_iter", {"kb_iter", 1}},
      {"kodo_iter", {"kb_iter", 1}},
      {"list_iterator_advance", {"kb_iter_advance", 1}},
      {"list_iterator_value", {"kb_iter_value", 1}},
      {"list_iterator_next", {"kb_iter_next", 1}},
      {"list_iterator_free", {"kb_noop", 1}},
      {"string_chars_advance", {"kb_iter_advance", 1}},
      {"string_chars_value", {"kb_iter_value", 1}},
      {"string_chars_free", {"kb_noop", 1}},
      {"Map_keys", {"kb_iter", 1}},
      {"Map_values", {"kb_map_values", 1}},
      {"map_keys_advance", {"kb_iter_advance", 1}},
      {"map_keys_value", {"kb_iter_value", 1}},
      {"map_keys_free", {"kb_noop", 1}},
      {"map_values_advance", {"kb_iter_advance", 1}},
      {"map_values_value", {"kb_iter_value", 1}},
      {"map_values_free", {"kb_noop", 1}},
      {"kodo_iter_advance", {"kb_iter_advance", 1}},
      {"kodo_iter_value", {"kb_iter_value", 1}},
      {"kodo_iter_free", {"kb_noop", 1}},
      {"map_new", {"kb_map_new", 0}},
      {"map_insert", {"kb_map_insert", 3}},
      {"map_get", {"kb_map_get", 2}},
      {"map_contains_key", {"kb_map_contains", 2}},
      {"map_remove", {"kb_map_remove", 2}},
      {"map_length", {"kb_map_length", 1}},
      {"map_is_empty", {"kb_map_is_empty", 1}},
      {"map_merge", {"kb_map_merge", 2}},
      {"Map_insert", {"kb_map_insert", 3}},
      {"Map_get", {"kb_map_get", 2}},
      {"Map_contains_key", {"kb_map_contains", 2}},
      {"Map_remove", {"kb_map_remove", 2}},
      {"Map_length", {"kb_map_length", 1}},
      {"Map_len", {"kb_map_length", 1}},
      {"Map_is_empty", {"kb_map_is_empty", 1}},
      {"Map_merge", {"kb_map_merge", 2}},
      {"set_new", {"kb_set_new", 0}},
      {"set_add", {"kb_set_add", 2}},
      {"set_contains", {"kb_map_contains", 2}},
      {"set_remove", {"kb_map_remove", 2}},
      {"set_length", {"kb_map_length", 1}},
      {"set_is_empty", {"kb_map_is_empty", 1}},
      {"set_union", {"kb_set_union", 2}},
      {"set_intersection", {"kb_set_intersection", 2}},
      {"set_difference", {"kb_set_difference", 2}},
      {"set_to_list", {"kb_set_to_list", 1}},
      {"Set_add", {"kb_set_add", 2}},
      {"Set_contains", {"kb_map_contains", 2}},
      {"Set_remove", {"kb_map_remove", 2}},
      {"Set_length", {"kb_map_length", 1}},
      {"Set_len", {"kb_map_length", 1}},
      {"Set_is_empty", {"kb_map_is_empty", 1}},
      {"Set_union", {"kb_set_union", 2}},
      {"Set_intersection", {"kb_set_intersection", 2}},
      {"Set_difference", {"kb_set_difference", 2}},
      {"Set_to_list", {"kb_set_to_list", 1}},
      {"char_at", {"kb_str_char_at", 2}},
      {"char_from_code", {"kb_char_from_code", 1}},
      {"is_alpha", {"kb_is_alpha", 1}},
      {"is_digit", {"kb_is_digit", 1}},
      {"is_alphanumeric", {"kb_is_alnum", 1}},
      {"is_whitespace", {"kb_is_space", 1}},
      {"string_builder_new", {"kb_builder_new", 0}},
      {"string_builder_push", {"kb_builder_push", 2}},
      {"string_builder_push_char", {"kb_builder_push_char", 2}},
      {"string_builder_to_string", {"kb_builder_to_string", 1}},
      {"string_builder_len", {"kb_builder_len", 1}},
      {"format_int", {"kb_format_int", 2}},
      {"args", {"kb_args", 0}},
      {"readln", {"kb_readln", 0}},
      {"exit", {"kb_exit", 1}},
      {"file_read", {"kb_file_read", 1}},
      {"file_write", {"kb_file_write", 2}},
      {"file_append", {"kb_file_append", 2}},
      {"file_exists", {"kb_file_exists", 1}},
      {"file_delete", {"kb_file_delete", 1}},
      {"dir_exists", {"kb_dir_exists", 1}},
      {"dir_list", {"kb_dir_list", 1}},
      {"env_get", {"kb_env_get", 1}},
      {"env_set", {"kb_env_set", 2}},
      {"time_now", {"kb_time_now", 0}},
      {"timestamp", {"kb_time_now", 0}},
      {"time_now_ms", {"kb_time_now_ms", 0}},
      {"time_elapsed_ms", {"kb_time_elapsed", 1}},
      {"time_format", {"kb_time_format", 1}},
      {"sleep", {"kb_sleep", 0}},
      {"http_get", {"kb_http_not_available", 0}},
      {"http_post", {"kb_http_not_available", 0}},
      {"assert", {"kb_assert", 1}},
      {"assert_true", {"kb_assert", 1}},
      {"assert_false", {"kb_assert_false", 1}},
      {"assert_eq", {"kb_assert_eq", 2}},
      {"assert_ne", {"kb_assert_ne", 2}},
      {"kodo_contract_fail", {"kb_contract_fail", 1}},
      {"kodo_contract_fail_recoverable", {"kb_contract_fail_recoverable", 1}},
  };
  return *table;
}

// The concurrency hooks of the lowering (docs/decisions/0067), run by the scheduler in
// runtime/kodo_sched.c (docs/decisions/0075).
const std::unordered_map<std::string, BuiltinSpec>& ConcurrencyBuiltins() {
  static const auto* table = new std::unordered_map<std::string, BuiltinSpec>{
      {"kodo_spawn", {"kb_spawn", 1}},
      {"kodo_parallel_begin", {"kb_parallel_begin", 0}},
      {"kodo_parallel_spawn", {"kb_parallel_spawn", 2}},
      {"kodo_parallel_join", {"kb_parallel_join", 1}},
      {"kodo_await", {"kb_await", 1}},
      {"kodo_yield", {"kb_yield", 0}},
      {"channel_new", {"kb_channel_new", 0}},
      {"channel_new_bool", {"kb_channel_new", 0}},
      {"channel_new_string", {"kb_channel_new", 0}},
      {"channel_send", {"kb_channel_send", 2}},
      {"channel_send_bool", {"kb_channel_send", 2}},
      {"channel_send_string", {"kb_channel_send", 2}},
      {"channel_free", {"kb_channel_free", 1}},
      {"channel_recv", {"kb_channel_recv", 1}},
      {"channel_recv_bool", {"kb_channel_recv", 1}},
      {"channel_recv_string", {"kb_channel_recv", 1}},
      {"channel_select_2", {"kb_channel_select_2", 2}},
      {"channel_select_3", {"kb_channel_select_3", 3}},
  };
  return *table;
}

// Hooks that may block the calling task: the generated code records the function it is in
// first, for the deadlock message (the interpreter names the blocked frame's function).
bool MayBlock(const std::string& name) {
  return name == "kodo_parallel_join" || name == "kodo_await" ||
         name.rfind("channel_recv", 0) == 0 || name.rfind("channel_select_", 0) == 0;
}

// Functions whose calls go through the scheduler: an `async fn` call starts a task and gives
// a future, an actor handler call queues a message (the interpreter's Machine::Invoke).
bool Scheduled(const mir::Function& fn) { return fn.is_async || fn.actor_handler; }

// Returns the runtime function for `name`, or null. HTTP servers, databases and JSON trap at
// run time with the interpreter's message (its FindBuiltin does the same).
const BuiltinSpec* FindBuiltinSpec(const std::string& name) {
  static const BuiltinSpec kNotAvailable = {"kb_not_available", 0};
  const auto& t = Builtins();
  if (auto it = t.find(name); it != t.end()) return &it->second;
  const auto& conc = ConcurrencyBuiltins();
  if (auto it = conc.find(name); it != conc.end()) return &it->second;
  // JSON and regex: the runtime's C++ part (ext_builtins.h).
  static const auto* ext = [] {
    auto* m = new std::unordered_map<std::string, BuiltinSpec>();
    for (const ExtBuiltin& e : ExtBuiltins()) m->emplace(e.name, BuiltinSpec{e.cfn, e.arity});
    return m;
  }();
  if (auto it = ext->find(name); it != ext->end()) return &it->second;
  if (name.rfind("http_", 0) == 0 || name.rfind("db_", 0) == 0 || name.rfind("json_", 0) == 0) {
    return &kNotAvailable;
  }
  return nullptr;
}

// What a construct the runtime does not have is, for the error message.
std::string Unsupported(const std::string& callee) {
  if (callee == "kodo_spawn" || callee.rfind("kodo_parallel_", 0) == 0) {
    return fmt::format("concurrency (`spawn`/`parallel`, runtime hook `{}`)", callee);
  }
  if (callee == "kodo_await") return "concurrency (`async`/`await`, runtime hook `kodo_await`)";
  if (callee.rfind("channel", 0) == 0) {
    return fmt::format("concurrency (channels, runtime hook `{}`)", callee);
  }
  if (callee.rfind("regex_", 0) == 0) return fmt::format("regular expressions (`{}`)", callee);
  if (callee.rfind("kodo_", 0) == 0 || callee.rfind("channel", 0) == 0 ||
      callee.rfind("actor", 0) == 0) {
    return fmt::format("the runtime hook `{}`", callee);
  }
  return fmt::format("the function `{}`", callee);
}

enum class CType : std::uint8_t { kKV, kI64, kF64, kBool };

// An unboxed struct (docs/decisions/0076): a C struct of tagged fields, passed by value, for a
// struct type whose every literal names the same fields in the same order. Its CType is
// kStructBase plus its index in Emitter::flat_.
constexpr int kStructBase = 16;
constexpr std::size_t kMaxFlatStructs = 200;
constexpr std::size_t kMaxFlatFields = 16;
bool IsStruct(CType t) { return static_cast<int>(t) >= kStructBase; }
std::size_t StructIndex(CType t) {
  return static_cast<std::size_t>(static_cast<int>(t) - kStructBase);
}
CType StructCType(std::size_t i) { return static_cast<CType>(kStructBase + static_cast<int>(i)); }

struct Expr {
  std::string code;
  CType type = CType::kKV;
};

// C string literal for arbitrary bytes (octal escapes for anything but plain printable ASCII).
std::string CString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f && c != '?') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\{:03o}", c);
    }
  }
  return out + "\"";
}

const char* OpConst(ast::BinOp op) {
  switch (op) {
    case ast::BinOp::kAdd:
      return "0";
    case ast::BinOp::kSub:
      return "1";
    case ast::BinOp::kMul:
      return "2";
    case ast::BinOp::kDiv:
      return "3";
    case ast::BinOp::kMod:
      return "4";
    case ast::BinOp::kEq:
      return "5";
    case ast::BinOp::kNe:
      return "6";
    case ast::BinOp::kLt:
      return "7";
    case ast::BinOp::kGt:
      return "8";
    case ast::BinOp::kLe:
      return "9";
    case ast::BinOp::kGe:
      return "10";
    case ast::BinOp::kAnd:
      return "11";
    case ast::BinOp::kOr:
      return "12";
  }
  return "0";
}

// A call returning a KV whose tag is known to be `t`: the payload, read directly (a function
// returning an unboxed struct returns it as it is).
Expr Typed(std::string call, CType t) {
  if (IsStruct(t)) return Expr{std::move(call), t};
  switch (t) {
    case CType::kI64:
    case CType::kBool:
      return Expr{fmt::format("{}.u.i", call), t};
    case CType::kF64:
      return Expr{fmt::format("{}.u.f", call), t};
    case CType::kKV:
      break;
  }
  return Expr{std::move(call), CType::kKV};
}

std::string IntLiteral(std::int64_t v) {
  if (v == INT64_MIN) return "(-INT64_C(9223372036854775807) - 1)";
  return fmt::format("INT64_C({})", v);
}

class Emitter {
 public:
  Emitter(const mir::Program& p, const EmitOptions& o) : p_(p), o_(o) {}
  Result<std::string> Run();

 private:
  Status Scan();
  void ScanValue(const mir::Value& v);
  Status EmitFunction(std::size_t index);
  Result<Expr> Eval(const mir::Value& v);
  Result<Expr> Binary(const mir::Value& v);
  std::string Coerce(const Expr& e, CType to) const;
  std::string AsKV(const Expr& e) const { return Coerce(e, CType::kKV); }
  Result<std::string> ArgList(const std::vector<mir::Value>& args, std::size_t want);
  Result<std::string> ArgArray(const std::vector<mir::Value>& args);
  CType Declared(const mir::Function& fn, const std::string& ty) const;
  Status Infer();
  Result<bool> InferFunction(std::size_t index);
  CType CallResultType(const mir::Inst& inst) const;
  std::string FnName(const mir::Function& fn) const { return CString(fn.name); }
  // Unboxed structs: which types are, and the C types of a function's parameters and result
  // (tagged, except unboxed structs).
  void PickFlatStructs();
  std::string CTypeName(CType t) const;
  CType SigParam(std::size_t fn, std::size_t i) const {
    return IsStruct(param_types_[fn][i]) ? param_types_[fn][i] : CType::kKV;
  }
  CType SigRet(std::size_t fn) const {
    return IsStruct(ret_types_[fn]) ? ret_types_[fn] : CType::kKV;
  }
  // A call of program function `fn` with tagged arguments `args` (C expressions), as a KV.
  std::string BoxedCall(std::size_t fn, const std::vector<std::string>& args) const;
  Result<std::string> CallArgs(std::size_t fn, const std::vector<mir::Value>& args);
  Status Fail(const std::string& what) const {
    return Status::Unsupported(fmt::format("native builds do not support {} (in function `{}`)",
                                           what, cur_ ? cur_->name : "?"));
  }

  const mir::Program& p_;
  const EmitOptions& o_;
  const mir::Function* cur_ = nullptr;
  std::vector<CType> local_types_;  // of the function being emitted or inferred
  // Inferred C types (Infer): per function its locals, its parameters and its result. A scalar
  // is used only where every value that can reach it has that C type.
  std::vector<std::vector<CType>> fn_locals_;
  std::vector<std::vector<CType>> param_types_;
  std::vector<CType> ret_types_;
  std::string body_;

  std::map<std::string, int> strings_;
  std::map<std::string, int> field_ids_;
  std::map<std::pair<std::string, std::vector<std::string>>, int> struct_descs_;
  std::map<std::pair<std::string, std::string>, int> enum_descs_;
  std::map<std::string, int> methods_;  // __method.NAME -> dispatcher index
  struct FlatStruct {
    std::string name;
    std::vector<std::string> fields;
    int desc = 0;  // its KStructDesc (struct_descs_)
  };
  std::vector<FlatStruct> flat_;
  std::map<std::string, std::size_t> flat_by_name_;
};

void Emitter::PickFlatStructs() {
  if (!o_.unbox) return;
  std::map<std::string, int> literal_shapes;
  for (const auto& [key, id] : struct_descs_) ++literal_shapes[key.first];
  for (const auto& [key, id] : struct_descs_) {
    const auto& [name, fields] = key;
    if (literal_shapes[name] != 1 || fields.empty() || fields.size() > kMaxFlatFields ||
        flat_.size() >= kMaxFlatStructs) {
      continue;
    }
    flat_by_name_[name] = flat_.size();
    flat_.push_back(FlatStruct{name, fields, id});
  }
}

std::string Emitter::CTypeName(CType t) const {
  if (IsStruct(t)) return fmt::format("KS_{}", StructIndex(t));
  switch (t) {
    case CType::kI64:
      return "int64_t";
    case CType::kF64:
      return "double";
    case CType::kBool:
      return "int";
    case CType::kKV:
      break;
  }
  return "KV";
}

std::string Emitter::BoxedCall(std::size_t fn, const std::vector<std::string>& args) const {
  std::string list;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (k > 0) list += ", ";
    const CType t = SigParam(fn, k);
    list += IsStruct(t) ? fmt::format("kunbox_{}({})", StructIndex(t), args[k]) : args[k];
  }
  const std::string call = fmt::format("kf_{}({})", fn, list);
  const CType r = SigRet(fn);
  return IsStruct(r) ? fmt::format("kbox_{}({})", StructIndex(r), call) : call;
}

Result<std::string> Emitter::CallArgs(std::size_t fn, const std::vector<mir::Value>& args) {
  std::string out;
  for (std::size_t i = 0; i < param_types_[fn].size(); ++i) {
    if (i > 0) out += ", ";
    const CType t = SigParam(fn, i);
    if (i < args.size()) {
      ASSIGN_OR_RETURN(Expr e, Eval(args[i]));
      out += Coerce(e, t);
    } else {
      out += IsStruct(t) ? fmt::format("kunbox_{}(kv_unit())", StructIndex(t)) : "kv_unit()";
    }
  }
  return out;
}

CType Emitter::Declared(const mir::Function& fn, const std::string& ty) const {
  if (!o_.unbox || fn.injected) return CType::kKV;
  if (ty == "Int") return CType::kI64;
  if (ty == "Float64") return CType::kF64;
  if (ty == "Bool") return CType::kBool;
  if (auto it = flat_by_name_.find(ty); it != flat_by_name_.end()) return StructCType(it->second);
  return CType::kKV;
}

// Builtins whose result always has one tag (runtime/kodo_rt.c).
CType BuiltinResult(const std::string& name) {
  static const std::set<std::string> kInt = {"list_length",
                                             "List_length",
                                             "List_len",
                                             "map_length",
                                             "Map_length",
                                             "Map_len",
                                             "set_length",
                                             "Set_length",
                                             "Set_len",
                                             "String_length",
                                             "String_char_count",
                                             "String_byte_length",
                                             "string_builder_len",
                                             "abs",
                                             "min",
                                             "max",
                                             "clamp",
                                             "String_parse_int",
                                             "String_char_at",
                                             "char_at",
                                             "Float64_to_int",
                                             "rand_int",
                                             "list_iterator_advance",
                                             "string_chars_advance",
                                             "map_keys_advance",
                                             "map_values_advance",
                                             "kodo_iter_advance"};
  static const std::set<std::string> kBool = {
      "list_contains",    "List_contains",      "list_is_empty",    "List_is_empty",
      "map_contains_key", "Map_contains_key",   "map_is_empty",     "Map_is_empty",
      "set_contains",     "Set_contains",       "set_is_empty",     "Set_is_empty",
      "String_contains",  "String_starts_with", "String_ends_with", "is_alpha",
      "is_digit",         "is_alphanumeric",    "is_whitespace",    "Option_is_some",
      "Option_is_none",   "Result_is_ok",       "Result_is_err"};
  static const std::set<std::string> kFloat = {"sqrt",  "pow",  "sin",   "cos",           "log",
                                               "floor", "ceil", "round", "Int_to_float64"};
  if (kInt.count(name) != 0) return CType::kI64;
  if (kBool.count(name) != 0) return CType::kBool;
  if (kFloat.count(name) != 0) return CType::kF64;
  if (const ExtBuiltin* e = FindExtBuiltin(name)) {
    return e->result == 'i'   ? CType::kI64
           : e->result == 'f' ? CType::kF64
           : e->result == 'b' ? CType::kBool
                              : CType::kKV;
  }
  return CType::kKV;
}

CType Emitter::CallResultType(const mir::Inst& inst) const {
  if (inst.kind != InstKind::kCall) return CType::kKV;
  if (int idx = p_.Find(inst.callee); idx >= 0) return ret_types_[static_cast<std::size_t>(idx)];
  if (inst.callee.rfind("__method.", 0) == 0 || inst.callee == "kodo_closure_new") {
    return CType::kKV;
  }
  const BuiltinSpec* spec = FindBuiltinSpec(inst.callee);
  if (spec == nullptr || inst.args.size() < static_cast<std::size_t>(spec->arity)) {
    return CType::kKV;
  }
  return o_.unbox ? BuiltinResult(inst.callee) : CType::kKV;
}

// One pass over function `index` with the current parameter and result types: demotes its
// locals to fixpoint, then returns whether it demoted a result or a callee's parameter.
Result<bool> Emitter::InferFunction(std::size_t index) {
  const mir::Function& fn = p_.functions[index];
  cur_ = &fn;
  local_types_.clear();
  for (std::size_t i = 0; i < fn.locals.size(); ++i) {
    local_types_.push_back(i < fn.param_count ? param_types_[index][i]
                                              : Declared(fn, fn.locals[i].ty));
  }
  auto demote = [&](mir::LocalId dest, CType t) {
    if (dest >= local_types_.size() || local_types_[dest] == CType::kKV) return false;
    if (local_types_[dest] == t) return false;
    local_types_[dest] = CType::kKV;
    return true;
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (const mir::BasicBlock& b : fn.blocks) {
      for (const mir::Inst& inst : b.insts) {
        if (inst.dest == mir::kNoLocal) continue;
        CType t = CType::kKV;
        if (inst.kind == InstKind::kAssign) {
          // `result = ()` before a struct result is assigned: the struct stays unboxed.
          if (inst.value.kind == ValueKind::kUnit && inst.dest < local_types_.size() &&
              IsStruct(local_types_[inst.dest])) {
            continue;
          }
          ASSIGN_OR_RETURN(Expr e, Eval(inst.value));
          t = e.type;
        } else if (inst.kind == InstKind::kCall) {
          t = CallResultType(inst);
        } else if (inst.kind != InstKind::kIndirectCall) {
          continue;
        }
        changed |= demote(inst.dest, t);
      }
    }
  }
  bool global = false;
  for (const mir::BasicBlock& b : fn.blocks) {
    if (b.term.kind == TermKind::kReturn && ret_types_[index] != CType::kKV) {
      ASSIGN_OR_RETURN(Expr e, Eval(b.term.value));
      if (e.type != ret_types_[index]) {
        ret_types_[index] = CType::kKV;
        global = true;
      }
    }
    for (const mir::Inst& inst : b.insts) {
      if (inst.kind != InstKind::kCall) continue;
      const int callee = p_.Find(inst.callee);
      if (callee < 0) continue;
      std::vector<CType>& params = param_types_[static_cast<std::size_t>(callee)];
      for (std::size_t i = 0; i < params.size(); ++i) {
        if (params[i] == CType::kKV) continue;
        CType t = CType::kKV;
        if (i < inst.args.size()) {
          ASSIGN_OR_RETURN(Expr e, Eval(inst.args[i]));
          t = e.type;
        }
        if (t != params[i]) {
          params[i] = CType::kKV;
          global = true;
        }
      }
    }
  }
  fn_locals_[index] = local_types_;
  cur_ = nullptr;
  return global;
}

Status Emitter::Infer() {
  const std::size_t n = p_.functions.size();
  // Functions reached other than by a direct call (function values, closures, method
  // dispatch, main) take tagged parameters.
  std::set<std::string> indirect = {"main"};
  std::set<std::string> methods;
  for (const auto& [name, id] : methods_) methods.insert(name);
  std::vector<const mir::Value*> stack;
  for (const mir::Function& fn : p_.functions) {
    for (const mir::BasicBlock& b : fn.blocks) {
      for (const mir::Inst& inst : b.insts) {
        stack.push_back(&inst.value);
        for (const mir::Value& a : inst.args) stack.push_back(&a);
      }
      stack.push_back(&b.term.value);
    }
  }
  while (!stack.empty()) {
    const mir::Value* v = stack.back();
    stack.pop_back();
    if (v->kind == ValueKind::kFuncRef) indirect.insert(v->s);
    for (const mir::Value& o : v->operands) stack.push_back(&o);
  }
  fn_locals_.assign(n, {});
  param_types_.assign(n, {});
  ret_types_.assign(n, CType::kKV);
  for (std::size_t i = 0; i < n; ++i) {
    const mir::Function& fn = p_.functions[i];
    bool direct_only = indirect.count(fn.name) == 0 && !Scheduled(fn);
    for (const std::string& m : methods) {
      const std::string suffix = "_" + m;
      if (fn.name.size() > suffix.size() &&
          fn.name.compare(fn.name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        direct_only = false;
      }
    }
    for (std::uint32_t k = 0; k < fn.param_count; ++k) {
      param_types_[i].push_back(direct_only && k < fn.locals.size() ? Declared(fn, fn.locals[k].ty)
                                                                    : CType::kKV);
    }
    // A scheduled call gives a future or unit, whatever the declared result.
    ret_types_[i] = Scheduled(fn) ? CType::kKV : Declared(fn, fn.return_type);
  }
  bool changed = true;
  while (changed) {
    changed = false;
    for (std::size_t i = 0; i < n; ++i) {
      ASSIGN_OR_RETURN(bool c, InferFunction(i));
      changed |= c;
    }
  }
  // Locals may have been inferred before a callee's result was demoted: one more pass.
  for (std::size_t i = 0; i < n; ++i) RETURN_IF_ERROR(InferFunction(i).status());
  return Status::Ok();
}

std::string Emitter::Coerce(const Expr& e, CType to) const {
  if (e.type == to) return e.code;
  if (IsStruct(e.type)) {
    const std::string kv = fmt::format("kbox_{}({})", StructIndex(e.type), e.code);
    return to == CType::kKV ? kv : Coerce(Expr{kv, CType::kKV}, to);
  }
  if (IsStruct(to)) return fmt::format("kunbox_{}({})", StructIndex(to), AsKV(e));
  if (to == CType::kKV) {
    switch (e.type) {
      case CType::kI64:
        return fmt::format("kv_int({})", e.code);
      case CType::kF64:
        return fmt::format("kv_float({})", e.code);
      case CType::kBool:
        return fmt::format("kv_bool({})", e.code);
      case CType::kKV:
        return e.code;
    }
  }
  const std::string kv = AsKV(e);
  switch (to) {
    case CType::kI64:
      return fmt::format("kv_as_int({})", kv);
    case CType::kF64:
      return fmt::format("kv_as_float({})", kv);
    case CType::kBool:
      return fmt::format("kv_as_bool({})", kv);
    case CType::kKV:
      break;
  }
  return kv;
}

void Emitter::ScanValue(const mir::Value& v) {
  switch (v.kind) {
    case ValueKind::kStringConst:
      strings_.emplace(v.s, static_cast<int>(strings_.size()));
      break;
    case ValueKind::kStructLit: {
      for (const std::string& n : v.names)
        field_ids_.emplace(n, static_cast<int>(field_ids_.size()));
      struct_descs_.emplace(std::make_pair(v.s, v.names), static_cast<int>(struct_descs_.size()));
      break;
    }
    case ValueKind::kFieldGet:
      field_ids_.emplace(v.s, static_cast<int>(field_ids_.size()));
      break;
    case ValueKind::kEnumVariant:
      enum_descs_.emplace(std::make_pair(v.s, v.s2), static_cast<int>(enum_descs_.size()));
      break;
    default:
      break;
  }
  for (const mir::Value& o : v.operands) ScanValue(o);
}

Status Emitter::Scan() {
  for (const mir::Function& fn : p_.functions) {
    cur_ = &fn;
    for (const mir::BasicBlock& b : fn.blocks) {
      for (const mir::Inst& inst : b.insts) {
        ScanValue(inst.value);
        for (const mir::Value& a : inst.args) ScanValue(a);
        if (inst.kind == InstKind::kCall) {
          const std::string& c = inst.callee;
          if (p_.Find(c) >= 0 || c == "kodo_closure_new" || FindBuiltinSpec(c) != nullptr) continue;
          if (c.rfind("__method.", 0) == 0) {
            methods_.emplace(c.substr(9), static_cast<int>(methods_.size()));
            continue;
          }
          return Fail(Unsupported(c));
        }
      }
      ScanValue(b.term.value);
    }
  }
  cur_ = nullptr;
  return Status::Ok();
}

Result<std::string> Emitter::ArgList(const std::vector<mir::Value>& args, std::size_t want) {
  std::string out;
  for (std::size_t i = 0; i < want; ++i) {
    if (i > 0) out += ", ";
    if (i < args.size()) {
      ASSIGN_OR_RETURN(Expr e, Eval(args[i]));
      out += AsKV(e);
    } else {
      out += "kv_unit()";
    }
  }
  return out;
}

Result<std::string> Emitter::ArgArray(const std::vector<mir::Value>& args) {
  if (args.empty()) return std::string("(KV*)0");
  ASSIGN_OR_RETURN(std::string list, ArgList(args, args.size()));
  return fmt::format("(KV[]){{{}}}", list);
}

Result<Expr> Emitter::Binary(const mir::Value& v) {
  using ast::BinOp;
  ASSIGN_OR_RETURN(Expr a, Eval(v.operands[0]));
  ASSIGN_OR_RETURN(Expr b, Eval(v.operands[1]));
  const BinOp op = v.op;
  if (a.type == CType::kI64 && b.type == CType::kI64) {
    switch (op) {
      case BinOp::kAdd:
        return Expr{fmt::format("kr_wadd({}, {})", a.code, b.code), CType::kI64};
      case BinOp::kSub:
        return Expr{fmt::format("kr_wsub({}, {})", a.code, b.code), CType::kI64};
      case BinOp::kMul:
        return Expr{fmt::format("kr_wmul({}, {})", a.code, b.code), CType::kI64};
      case BinOp::kDiv:
        return Expr{fmt::format("kr_div({}, {})", a.code, b.code), CType::kI64};
      case BinOp::kMod:
        return Expr{fmt::format("kr_mod({}, {})", a.code, b.code), CType::kI64};
      case BinOp::kAnd:
        return Expr{fmt::format("(({}) != 0 && ({}) != 0)", a.code, b.code), CType::kBool};
      case BinOp::kOr:
        return Expr{fmt::format("(({}) != 0 || ({}) != 0)", a.code, b.code), CType::kBool};
      default:
        return Expr{fmt::format("(({}) {} ({}))", a.code, ast::BinOpSymbol(op), b.code),
                    CType::kBool};
    }
  }
  if (a.type == CType::kF64 && b.type == CType::kF64) {
    switch (op) {
      case BinOp::kAdd:
        return Expr{fmt::format("(({}) + ({}))", a.code, b.code), CType::kF64};
      case BinOp::kSub:
        return Expr{fmt::format("(({}) - ({}))", a.code, b.code), CType::kF64};
      case BinOp::kMul:
        return Expr{fmt::format("(({}) * ({}))", a.code, b.code), CType::kF64};
      case BinOp::kDiv:
        return Expr{fmt::format("(({}) / ({}))", a.code, b.code), CType::kF64};
      case BinOp::kMod:
        return Expr{fmt::format("fmod({}, {})", a.code, b.code), CType::kF64};
      case BinOp::kAnd:
      case BinOp::kOr:
        break;
      default:
        return Expr{fmt::format("(({}) {} ({}))", a.code, ast::BinOpSymbol(op), b.code),
                    CType::kBool};
    }
  }
  if (a.type == CType::kBool && b.type == CType::kBool) {
    switch (op) {
      case BinOp::kAnd:
        return Expr{fmt::format("(({}) && ({}))", a.code, b.code), CType::kBool};
      case BinOp::kOr:
        return Expr{fmt::format("(({}) || ({}))", a.code, b.code), CType::kBool};
      case BinOp::kEq:
        return Expr{fmt::format("(({}) == ({}))", a.code, b.code), CType::kBool};
      case BinOp::kNe:
        return Expr{fmt::format("(({}) != ({}))", a.code, b.code), CType::kBool};
      default:
        break;
    }
  }
  return Expr{fmt::format("kr_binop_inl({}, {}, {})", OpConst(op), AsKV(a), AsKV(b)), CType::kKV};
}

Result<Expr> Emitter::Eval(const mir::Value& v) {
  switch (v.kind) {
    case ValueKind::kIntConst:
      return Expr{IntLiteral(v.i), CType::kI64};
    case ValueKind::kFloatConst: {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &v.f, sizeof bits);
      return Expr{fmt::format("kr_bits2f(UINT64_C({:#x}))", bits), CType::kF64};
    }
    case ValueKind::kBoolConst:
      return Expr{v.i ? "1" : "0", CType::kBool};
    case ValueKind::kStringConst:
      return Expr{fmt::format("kv_obj(KT_STR, (void*)&ks_{})", strings_.at(v.s)), CType::kKV};
    case ValueKind::kLocal:
      if (v.local >= local_types_.size()) return Fail(fmt::format("local _{}", v.local));
      return Expr{fmt::format("l{}", v.local), local_types_[v.local]};
    case ValueKind::kUnit:
      return Expr{"kv_unit()", CType::kKV};
    case ValueKind::kBinOp:
      return Binary(v);
    case ValueKind::kNot: {
      ASSIGN_OR_RETURN(Expr a, Eval(v.operands[0]));
      if (IsStruct(a.type)) a = Expr{AsKV(a), CType::kKV};
      switch (a.type) {
        case CType::kBool:
          return Expr{fmt::format("(!({}))", a.code), CType::kBool};
        case CType::kI64:
          return Expr{fmt::format("(({}) == 0)", a.code), CType::kBool};
        case CType::kF64:
          return Expr{"1", CType::kBool};
        case CType::kKV:
          return Expr{fmt::format("(!kv_truthy({}))", a.code), CType::kBool};
      }
      break;
    }
    case ValueKind::kNeg: {
      ASSIGN_OR_RETURN(Expr a, Eval(v.operands[0]));
      if (IsStruct(a.type)) a = Expr{AsKV(a), CType::kKV};
      switch (a.type) {
        case CType::kI64:
        case CType::kBool:
          return Expr{fmt::format("kr_wneg({})", a.code), CType::kI64};
        case CType::kF64:
          return Expr{fmt::format("(-({}))", a.code), CType::kF64};
        case CType::kKV:
          return Expr{fmt::format("kr_neg({})", a.code), CType::kKV};
      }
      break;
    }
    case ValueKind::kStructLit: {
      if (auto it = flat_by_name_.find(v.s); it != flat_by_name_.end() && !v.operands.empty()) {
        ASSIGN_OR_RETURN(std::string fields, ArgList(v.operands, v.operands.size()));
        return Expr{fmt::format("((KS_{}){{{{{}}}}})", it->second, fields),
                    StructCType(it->second)};
      }
      const int d = struct_descs_.at({v.s, v.names});
      if (v.operands.empty()) return Expr{fmt::format("kr_struct_new(&kd_{}, 0, (KV*)0)", d)};
      ASSIGN_OR_RETURN(std::string fields, ArgArray(v.operands));
      return Expr{fmt::format("kr_struct_new(&kd_{}, {}, {})", d, v.operands.size(), fields)};
    }
    case ValueKind::kFieldGet: {
      ASSIGN_OR_RETURN(Expr o, Eval(v.operands[0]));
      if (IsStruct(o.type)) {
        const std::vector<std::string>& fields = flat_[StructIndex(o.type)].fields;
        for (std::size_t k = 0; k < fields.size(); ++k) {
          if (fields[k] == v.s) return Expr{fmt::format("({}).f[{}]", o.code, k)};
        }
      }
      return Expr{fmt::format("kr_field({}, {}, {})", AsKV(o), field_ids_.at(v.s), CString(v.s))};
    }
    case ValueKind::kEnumVariant: {
      const int d = enum_descs_.at({v.s, v.s2});
      ASSIGN_OR_RETURN(std::string payload, ArgArray(v.operands));
      return Expr{fmt::format("kr_enum_new(&ke_{}, {}, {}, {})", d, IntLiteral(v.i),
                              v.operands.size(), payload)};
    }
    case ValueKind::kEnumDiscriminant: {
      ASSIGN_OR_RETURN(Expr o, Eval(v.operands[0]));
      return Expr{fmt::format("kr_enum_disc({})", AsKV(o)), CType::kI64};
    }
    case ValueKind::kEnumPayload: {
      ASSIGN_OR_RETURN(Expr o, Eval(v.operands[0]));
      return Expr{fmt::format("kr_enum_payload({}, {})", AsKV(o), IntLiteral(v.i))};
    }
    case ValueKind::kFuncRef: {
      const int idx = p_.Find(v.s);
      if (idx < 0) {
        return Expr{fmt::format("(kr_no_function_value({}), kv_unit())", CString(v.s))};
      }
      return Expr{fmt::format("kv_func({})", idx)};
    }
    case ValueKind::kTupleLit: {
      ASSIGN_OR_RETURN(std::string items, ArgArray(v.operands));
      return Expr{fmt::format("kr_tuple_new({}, {})", v.operands.size(), items)};
    }
    case ValueKind::kTupleGet: {
      ASSIGN_OR_RETURN(Expr o, Eval(v.operands[0]));
      return Expr{fmt::format("kr_tuple_get({}, {})", AsKV(o), IntLiteral(v.i))};
    }
  }
  return Fail("a MIR value of an unknown kind");
}

Status Emitter::EmitFunction(std::size_t index) {
  const mir::Function& fn = p_.functions[index];
  cur_ = &fn;
  local_types_ = fn_locals_[index];
  std::string& o = body_;
  // An async function or actor handler: kf_N hands its arguments to the scheduler, which runs
  // the body, kfb_N, in a task (through the trampoline kab_N).
  const bool scheduled = Scheduled(fn);
  if (scheduled) {
    std::string params, args;
    for (std::uint32_t i = 0; i < fn.param_count; ++i) {
      params += fmt::format("{}KV a{}", i ? ", " : "", i);
      args += fmt::format("{}a{}", i ? ", " : "", i);
    }
    o += fmt::format("/* {} (scheduled) */\nstatic KV kf_{}({}) {{\n", fn.name, index,
                     params.empty() ? "void" : params);
    if (fn.param_count == 0) {
      o += fmt::format("  return kr_sched_call(kab_{}, {}, {}, 0, (KV*)0);\n}}\n", index,
                       FnName(fn), fn.is_async ? 1 : 0);
    } else {
      o +=
          fmt::format("  KV a[{}] = {{{}}};\n  return kr_sched_call(kab_{}, {}, {}, {}, a);\n}}\n",
                      fn.param_count, args, index, FnName(fn), fn.is_async ? 1 : 0, fn.param_count);
    }
  }
  o += fmt::format("/* {} */\nstatic {} {}_{}(", fn.name, CTypeName(SigRet(index)),
                   scheduled ? "kfb" : "kf", index);
  for (std::uint32_t i = 0; i < fn.param_count; ++i) {
    o += fmt::format("{}{} a{}", i ? ", " : "", CTypeName(SigParam(index, i)), i);
  }
  if (fn.param_count == 0) o += "void";
  o += ") {\n";
  for (std::size_t i = 0; i < fn.locals.size(); ++i) {
    switch (local_types_[i]) {
      case CType::kI64:
        o += fmt::format("  int64_t l{} = 0;\n", i);
        break;
      case CType::kF64:
        o += fmt::format("  double l{} = 0;\n", i);
        break;
      case CType::kBool:
        o += fmt::format("  int l{} = 0;\n", i);
        break;
      case CType::kKV:
        o += fmt::format("  KV l{} = kv_unit();\n", i);
        break;
    }
    if (IsStruct(local_types_[i]))
      o += fmt::format("  KS_{} l{} = {{0}};\n", StructIndex(local_types_[i]), i);
  }
  o += fmt::format(
      "  if (__builtin_expect(kr_depth >= KR_MAX_FRAMES, 0)) kr_stack_overflow({});\n  "
      "++kr_depth;\n",
      FnName(fn));
  for (std::uint32_t i = 0; i < fn.param_count && i < fn.locals.size(); ++i) {
    o += fmt::format("  l{} = {};\n", i,
                     Coerce(Expr{fmt::format("a{}", i), SigParam(index, i)}, local_types_[i]));
  }
  auto assign = [&](mir::LocalId dest, const Expr& e) -> Status {
    if (dest == mir::kNoLocal) {
      o += fmt::format("  (void)({});\n", e.code);
      return Status::Ok();
    }
    if (dest >= local_types_.size()) return Fail(fmt::format("local _{}", dest));
    o += fmt::format("  l{} = {};\n", dest, Coerce(e, local_types_[dest]));
    return Status::Ok();
  };
  for (std::size_t b = 0; b < fn.blocks.size(); ++b) {
    const mir::BasicBlock& block = fn.blocks[b];
    o += fmt::format(" bb{}:;\n", b);
    for (const mir::Inst& inst : block.insts) {
      switch (inst.kind) {
        case InstKind::kAssign: {
          if (inst.value.kind == ValueKind::kUnit && inst.dest < local_types_.size() &&
              IsStruct(local_types_[inst.dest])) {
            o += fmt::format("  memset(&l{}, 0, sizeof l{});\n", inst.dest, inst.dest);
            break;
          }
          ASSIGN_OR_RETURN(Expr e, Eval(inst.value));
          RETURN_IF_ERROR(assign(inst.dest, e));
          break;
        }
        case InstKind::kCall: {
          const std::string& c = inst.callee;
          if (int idx = p_.Find(c); idx >= 0) {
            ASSIGN_OR_RETURN(std::string args, CallArgs(static_cast<std::size_t>(idx), inst.args));
            // Arguments past the parameters are evaluated (they are locals or constants) and
            // dropped, as the interpreter drops them.
            RETURN_IF_ERROR(assign(inst.dest, Typed(fmt::format("kf_{}({})", idx, args),
                                                    ret_types_[static_cast<std::size_t>(idx)])));
          } else if (c == "kodo_closure_new") {
            if (inst.args.empty()) return Fail("a closure without a function");
            ASSIGN_OR_RETURN(Expr f, Eval(inst.args[0]));
            std::vector<mir::Value> caps(inst.args.begin() + 1, inst.args.end());
            ASSIGN_OR_RETURN(std::string arr, ArgArray(caps));
            RETURN_IF_ERROR(assign(inst.dest, Expr{fmt::format("kr_closure_new({}, {}, {})",
                                                               AsKV(f), caps.size(), arr)}));
          } else if (c.rfind("__method.", 0) == 0) {
            if (inst.args.empty()) {
              o += "  kr_trap(134, \"method call without a receiver\");\n";
              break;
            }
            ASSIGN_OR_RETURN(std::string arr, ArgArray(inst.args));
            RETURN_IF_ERROR(
                assign(inst.dest, Expr{fmt::format("km_{}({}, {})", methods_.at(c.substr(9)), arr,
                                                   inst.args.size())}));
          } else if (const BuiltinSpec* spec = FindBuiltinSpec(c)) {
            if (MayBlock(c)) o += fmt::format("  kr_where = {};\n", FnName(fn));
            if (inst.args.size() < static_cast<std::size_t>(spec->arity)) {
              o += fmt::format("  kr_few_args({});\n", CString(c));
              break;
            }
            ASSIGN_OR_RETURN(std::string args,
                             ArgList(inst.args, static_cast<std::size_t>(spec->arity)));
            RETURN_IF_ERROR(assign(
                inst.dest, Typed(fmt::format("{}({})", spec->cfn, args), CallResultType(inst))));
          } else {
            return Fail(Unsupported(c));
          }
          break;
        }
        case InstKind::kIndirectCall: {
          ASSIGN_OR_RETURN(Expr callee, Eval(inst.value));
          ASSIGN_OR_RETURN(std::string arr, ArgArray(inst.args));
          RETURN_IF_ERROR(assign(
              inst.dest,
              Expr{fmt::format("kr_call_value({}, {}, {})", AsKV(callee), inst.args.size(), arr)}));
          break;
        }
        case InstKind::kIncRef:
        case InstKind::kDecRef:
          break;  // no-ops in the interpreter too
        case InstKind::kYield:
          o += "  kr_sched_yield();\n";
          break;
      }
    }
    const mir::Terminator& t = block.term;
    switch (t.kind) {
      case TermKind::kReturn: {
        ASSIGN_OR_RETURN(Expr e, Eval(t.value));
        o += fmt::format("  --kr_depth;\n  return {};\n", Coerce(e, SigRet(index)));
        break;
      }
      case TermKind::kGoto:
        if (t.target >= fn.blocks.size()) return Fail(fmt::format("a jump to bb{}", t.target));
        o += fmt::format("  goto bb{};\n", t.target);
        break;
      case TermKind::kBranch: {
        if (t.target >= fn.blocks.size() || t.otherwise >= fn.blocks.size()) {
          return Fail("a branch to a missing block");
        }
        ASSIGN_OR_RETURN(Expr c, Eval(t.value));
        if (IsStruct(c.type)) c = Expr{AsKV(c), CType::kKV};
        std::string cond;
        switch (c.type) {
          case CType::kBool:
            cond = c.code;
            break;
          case CType::kI64:
            cond = fmt::format("({}) != 0", c.code);
            break;
          case CType::kF64:
            cond = "0";
            break;
          case CType::kKV:
            cond = fmt::format("kv_truthy({})", c.code);
            break;
        }
        o += fmt::format("  if ({}) goto bb{}; else goto bb{};\n", cond, t.target, t.otherwise);
        break;
      }
      case TermKind::kUnreachable:
        o += fmt::format("  kr_unreachable({});\n", FnName(fn));
        break;
    }
  }
  o += "}\n\n";
  cur_ = nullptr;
  return Status::Ok();
}

Result<std::string> Emitter::Run() {
  const int main_fn = p_.Find("main");
  if (main_fn < 0) return Status::InvalidArgument("the program has no `main` function");
  RETURN_IF_ERROR(Scan());
  PickFlatStructs();
  RETURN_IF_ERROR(Infer());
  std::string out;
  out += "/* Generated by kodoc build from module `" + p_.module + "`; do not edit. */\n";
  out += "#include <math.h>\n#include \"kodo_rt.h\"\n\n";
  if (UsesExtBuiltins(p_)) out += "#include \"kodo_rt_ext.h\"\n\n";
  // Constants.
  for (const auto& [s, id] : strings_) {
    out += fmt::format("static struct {{ int64_t len; char data[{}]; }} ks_{} = {{ {}, {} }};\n",
                       s.size() + 1, id, s.size(), CString(s));
  }
  std::vector<std::string> field_names(field_ids_.size());
  for (const auto& [name, id] : field_ids_) field_names[static_cast<std::size_t>(id)] = name;
  for (const auto& [key, id] : struct_descs_) {
    const auto& [name, fields] = key;
    std::string names, slots;
    for (const std::string& f : fields) names += CString(f) + ", ";
    for (const std::string& f : field_names) {
      int slot = -1;
      for (std::size_t i = 0; i < fields.size(); ++i) {
        if (fields[i] == f) {
          slot = static_cast<int>(i);
          break;
        }
      }
      slots += fmt::format("{}, ", slot);
    }
    out += fmt::format("static const char* const kdf_{}[] = {{ {}0 }};\n", id, names);
    out += fmt::format("static const int16_t kds_{}[] = {{ {}0 }};\n", id, slots);
    out += fmt::format("static const KStructDesc kd_{} = {{ {}, {}, kdf_{}, kds_{} }};\n", id,
                       CString(name), fields.size(), id, id);
  }
  for (const auto& [key, id] : enum_descs_) {
    out += fmt::format("static const KEnumDesc ke_{} = {{ {}, {} }};\n", id, CString(key.first),
                       CString(key.second));
  }
  // Unboxed structs: the C type, boxing and unboxing.
  for (std::size_t i = 0; i < flat_.size(); ++i) {
    const FlatStruct& f = flat_[i];
    out += fmt::format("typedef struct {{ KV f[{}]; }} KS_{};\n", f.fields.size(), i);
    out += fmt::format(
        "static inline KV kbox_{0}(KS_{0} s) {{ return kr_struct_new(&kd_{1}, {2}, s.f); }}\n", i,
        f.desc, f.fields.size());
    out += fmt::format(
        "static inline KS_{0} kunbox_{0}(KV v) {{\n  KS_{0} s;\n"
        "  if (v.t != KT_STRUCT || ((KStruct*)v.u.p)->d->nfields != {1} ||\n"
        "      strcmp(((KStruct*)v.u.p)->d->name, {2}) != 0) kr_type_mismatch({2}, v);\n"
        "  memcpy(s.f, ((KStruct*)v.u.p)->fields, sizeof s.f);\n  return s;\n}}\n",
        i, f.fields.size(), CString(f.name));
  }
  // Declarations.
  for (std::size_t i = 0; i < p_.functions.size(); ++i) {
    const mir::Function& fn = p_.functions[i];
    std::string params;
    for (std::uint32_t k = 0; k < fn.param_count; ++k) {
      params += fmt::format("{}{}", k ? ", " : "", CTypeName(SigParam(i, k)));
    }
    out += fmt::format("static {} kf_{}({});\n", CTypeName(SigRet(i)), i,
                       params.empty() ? "void" : params);
    // A scheduled function's signature is all tagged (Infer): kfb_N matches kf_N.
    if (Scheduled(fn)) {
      out += fmt::format("static KV kfb_{}({});\n", i, params.empty() ? "void" : params);
      out += fmt::format("static KV kab_{}(KV* a, int n);\n", i);
    }
  }
  for (const auto& [name, id] : methods_) {
    out += fmt::format("static KV km_{}(KV* a, int n);\n", id);
  }
  out += "\n";
  for (std::size_t i = 0; i < p_.functions.size(); ++i) RETURN_IF_ERROR(EmitFunction(i));
  out += body_;
  // Trampolines for function values and closures.
  for (std::size_t i = 0; i < p_.functions.size(); ++i) {
    const mir::Function& fn = p_.functions[i];
    std::vector<std::string> args;
    for (std::uint32_t k = 0; k < fn.param_count; ++k) {
      args.push_back(fmt::format("n > {} ? a[{}] : kv_unit()", k, k));
    }
    out += fmt::format("static KV kt_{}(KV* a, int n) {{ (void)a; (void)n; return {}; }}\n", i,
                       BoxedCall(i, args));
  }
  for (std::size_t i = 0; i < p_.functions.size(); ++i) {
    const mir::Function& fn = p_.functions[i];
    if (!Scheduled(fn)) continue;
    std::string args;
    for (std::uint32_t k = 0; k < fn.param_count; ++k) {
      args += fmt::format("{}n > {} ? a[{}] : kv_unit()", k ? ", " : "", k, k);
    }
    out += fmt::format(
        "static KV kab_{}(KV* a, int n) {{ (void)a; (void)n; return kfb_{}({}); }}\n", i, i, args);
  }
  out += "KTramp kr_funcs[] = {";
  for (std::size_t i = 0; i < p_.functions.size(); ++i)
    out += fmt::format("{}kt_{}", i ? ", " : "", i);
  out += "};\n";
  out += fmt::format("int kr_func_count = {};\n\n", p_.functions.size());
  // Method dispatchers: the receiver's runtime type names `Type_NAME`, a function of the
  // program first, then a builtin (the interpreter's order).
  for (const auto& [name, id] : methods_) {
    out += fmt::format("static KV km_{}(KV* a, int n) {{\n  const char* t = kr_type_name(a[0]);\n",
                       id);
    const std::string suffix = "_" + name;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < p_.functions.size(); ++i) {
      const std::string& fname = p_.functions[i].name;
      if (fname.size() <= suffix.size() ||
          fname.compare(fname.size() - suffix.size(), suffix.size(), suffix) != 0) {
        continue;
      }
      const std::string type = fname.substr(0, fname.size() - suffix.size());
      if (!seen.insert(type).second) continue;
      std::vector<std::string> args;
      for (std::uint32_t k = 0; k < p_.functions[i].param_count; ++k) {
        args.push_back(fmt::format("n > {} ? a[{}] : kv_unit()", k, k));
      }
      out +=
          fmt::format("  if (strcmp(t, {}) == 0) return {};\n", CString(type), BoxedCall(i, args));
    }
    static const char* const kBuiltinTypes[] = {"Int", "Float64", "Bool",   "String", "List",
                                                "Map", "Set",     "Option", "Result", "Tuple"};
    for (const char* type : kBuiltinTypes) {
      if (seen.count(type) != 0) continue;
      const BuiltinSpec* spec = FindBuiltinSpec(std::string(type) + suffix);
      if (spec == nullptr) continue;
      std::string args;
      for (int k = 0; k < spec->arity; ++k) args += fmt::format("{}a[{}]", k ? ", " : "", k);
      out += fmt::format(
          "  if (strcmp(t, {}) == 0) {{ if (n < {}) kr_few_args({}); return {}({}); }}\n",
          CString(type), spec->arity, CString(std::string(type) + suffix), spec->cfn, args);
    }
    out += fmt::format("  (void)n;\n  kr_no_method({}, a[0]);\n}}\n", CString(name));
  }
  const mir::Function& main = p_.functions[static_cast<std::size_t>(main_fn)];
  std::vector<std::string> main_args(main.param_count, "kv_unit()");
  // `main` runs as task 0 even when it is `async` (the interpreter pushes its frame directly);
  // the tasks still queued when it returns run afterwards.
  const std::string main_call = Scheduled(main)
                                    ? fmt::format("kfb_{}({})", main_fn, fmt::join(main_args, ", "))
                                    : BoxedCall(static_cast<std::size_t>(main_fn), main_args);
  out += fmt::format(
      "\nstatic KV kr_entry_main(void) {{\n  KV r = {};\n  kr_sched_main_done();\n  "
      "return r;\n}}\n",
      main_call);
  out += "int main(int argc, char** argv) { return kr_main(argc, argv, kr_entry_main); }\n";
  return out;
}

}  // namespace

Result<std::string> EmitC(const mir::Program& program, const EmitOptions& options) {
  Emitter e(program, options);
  return e.Run();
}

bool IsNativeBuiltin(const std::string& name) { return FindBuiltinSpec(name) != nullptr; }

}  // namespace trove::kodo::native

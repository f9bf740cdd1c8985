// The builtin table of the standard library (docs/kodo.md §4.6): every global function and builtin
// method upstream's checker registers (crates/kodo_types/src/builtins.rs), with its signature,
// in upstream's registration order. See docs/decisions/0055-kodo-builtins-and-collections.md.
//
// Signatures are written in Kōdo's type syntax, with these additions:
//   T K V E     element variables: bound from the collection (or Option/Result) a call works on
//               (the receiver of a method, else the first argument); unbound they are Int, and
//               E is String, which gives upstream's registered (Int-element) type.
//   U A         result variables: bound from the first argument whose parameter mentions them
//               (a closure's result, a fold's initial value); unbound they are Int.
//   Option Result   the bare enum names upstream uses as the receiver of Option/Result methods;
//               any instance (`Option__Int`) matches them.
//   X__Y        a monomorphised enum name upstream writes directly (`Result__String_String`).
//   ?           Unknown.
// The table is data only; the checker turns it into types (checker.cc RegisterBuiltins).
//
// Thread safety: immutable.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace trove::kodo::sema {

// The groups of §4.6 (plus upstream's runtime hooks, which §4.6 leaves out but which resolve).
enum class BuiltinFamily : std::uint8_t {
  kIo,
  kMath,
  kConversion,    // Int_to_string ... Bool_to_string (methods of Int, Float64, Bool)
  kString,        // String_length ... (methods of String)
  kChars,         // char_at, is_alpha, string builder, format_int
  kList,          // list_* and List_* (methods of List)
  kIterator,      // list_iter, list_iterator_*, String_chars, string_chars_*, Map_keys/values, ...
  kMap,           // map_* (methods of Map)
  kSet,           // set_* (methods of Set)
  kOptionResult,  // Option_* and Result_* (methods of Option and Result)
  kSystem,        // files, env, time, sleep, args/readln/exit
  kJson,
  kHttp,
  kDb,
  kRegex,
  kChannel,
  kTest,     // assert*, kodo_test_*, kodo_prop_*
  kRuntime,  // kodo_future_* (used by async lowering upstream)
};

struct BuiltinSignature {
  std::string_view name;  // the global name (always bound)
  BuiltinFamily family;
  std::string_view params;  // comma-separated parameter types ("" for none)
  std::string_view result;
  // A builtin method: `receiver.method(...)` calls this builtin with the receiver as its first
  // argument. Empty for plain functions.
  std::string_view receiver;  // String, Int, Float64, Bool, Option, Result, List, Map, Set
  std::string_view method;
};

// Every builtin, in upstream's registration order. Names are unique.
std::span<const BuiltinSignature> Builtins();

// Returns the builtin method `method` of `receiver` (a base name: `Option`, `List`, ...), or
// nullptr.
const BuiltinSignature* FindBuiltinMethod(std::string_view receiver, std::string_view method);

// Returns the family's name as docs/kodo.md §4.6 groups it ("list", "option/result", ...).
std::string_view FamilyName(BuiltinFamily family);

}  // namespace trove::kodo::sema

// The checker's internal types (kodo.md §7.1): primitives, unit, structs and enums by name
// (monomorphised instances have names like `Option__Int`), Generic (List, Map, Set, Channel and
// any other non-enum, non-struct generic name), functions, tuples, `dyn Trait`, Future, and
// Unknown (`?`). Display strings are upstream's, because they appear in messages and patches.
//
// kAny is ours: the type of a construct from a tier this checker does not type yet (see
// docs/decisions/0014-kodo-diagnostics-and-checker.md). It equals every type, so such constructs
// never cause a false error; upstream has no such type. It displays as `?`. Thread safety: plain
// values.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trove::kodo::sema {

enum class TypeTag : std::uint8_t {
  kPrim,      // name: Int, Int8 ... Float64, Bool, String, Byte
  kUnit,      // ()
  kStruct,    // name
  kEnum,      // name
  kGeneric,   // name<args>
  kFunction,  // args = params, ret = result (args.back() is NOT the result)
  kTuple,     // args
  kDyn,       // name
  kFuture,    // args[0]
  kUnknown,   // ?
  kAny,       // equals everything (not upstream)
};

struct Type {
  TypeTag tag = TypeTag::kUnknown;
  std::string name;
  std::vector<Type> args;
  std::vector<Type> ret;  // kFunction: exactly one element

  static Type Prim(std::string_view n) { return Type{TypeTag::kPrim, std::string(n), {}, {}}; }
  static Type Int() { return Prim("Int"); }
  static Type Bool() { return Prim("Bool"); }
  static Type String() { return Prim("String"); }
  static Type Float64() { return Prim("Float64"); }
  static Type Unit() { return Type{TypeTag::kUnit, {}, {}, {}}; }
  static Type Unknown() { return Type{}; }
  static Type Any() { return Type{TypeTag::kAny, {}, {}, {}}; }
  static Type Struct(std::string n) { return Type{TypeTag::kStruct, std::move(n), {}, {}}; }
  static Type Enum(std::string n) { return Type{TypeTag::kEnum, std::move(n), {}, {}}; }
  static Type Generic(std::string n, std::vector<Type> a) {
    return Type{TypeTag::kGeneric, std::move(n), std::move(a), {}};
  }
  static Type Function(std::vector<Type> params, Type result) {
    return Type{TypeTag::kFunction, {}, std::move(params), {std::move(result)}};
  }
  static Type Tuple(std::vector<Type> elems) {
    return Type{TypeTag::kTuple, {}, std::move(elems), {}};
  }

  bool Is(TypeTag t) const { return tag == t; }
  bool IsPrim(std::string_view n) const { return tag == TypeTag::kPrim && name == n; }
  const Type& result() const { return ret[0]; }

  friend bool operator==(const Type&, const Type&) = default;
};

// Returns true for the primitive names of §7.1.
bool IsPrimitiveName(std::string_view name);
// Returns true for Int, Int8..Int64, Uint..Uint64, Float32, Float64 (and kAny).
bool IsNumeric(const Type& type);
// Returns upstream's display: `Int`, `()`, `Point`, `List<Int>`, `(Int, Int) -> Bool`,
// `(Int, String)`, `dyn Show`, `Future<Int>`, `?`.
std::string Display(const Type& type);
// Type equality as the checker uses it everywhere (§7.11): structural, except that Channel<...>
// and Int are interchangeable, Channel<?> matches any Channel, an expected `dyn T` accepts
// anything, and kAny matches everything.
bool TypesEqual(const Type& expected, const Type& found);
// Returns the base name of a monomorphised name (`Option__Int` -> `Option`).
std::string_view BaseName(std::string_view name);

}  // namespace trove::kodo::sema

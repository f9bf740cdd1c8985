// The checker's internal types (docs/kodo.md §5.1): primitives, unit, structs and enums by name
// (monomorphised instances have names like `Option__Int`), Generic (List, Map, Set, Channel and
// any other non-enum, non-struct generic name), functions, tuples, `dyn Trait`, Future, and
// Unknown (`?`). Display strings are upstream's, because they appear in messages and patches.
//
// kAny is ours: the type of a construct from a tier this checker does not type yet (see
// docs/decisions/0014-kodo-diagnostics-and-checker.md). It equals every type, so such constructs
// never cause a false error; upstream has no such type. It displays as `?`.
//
// Types are interned (docs/decisions/0026-kodo-perf3.md): a `Type` is a pointer-sized handle to
// an immutable node, and structurally identical types share one node, so copying a type costs a
// pointer and identical types compare equal by address. Unit, Unknown, Any and the primitives
// are process-wide constants; every other type is made by a `TypeTable`, which owns its nodes.
//
// Thread safety: a Type is an immutable value; a TypeTable is used by one thread at a time.
// Lifetime: a Type made by a TypeTable is valid while that table lives.
#pragma once

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace trove::kodo::sema {

enum class TypeTag : std::uint8_t {
  kPrim,      // name: Int, Int8 ... Float64, Bool, String, Byte
  kUnit,      // ()
  kStruct,    // name
  kEnum,      // name
  kGeneric,   // name<args>
  kFunction,  // args = params, result() = result (args.back() is NOT the result)
  kTuple,     // args
  kDyn,       // name
  kFuture,    // args[0]
  kUnknown,   // ?
  kAny,       // equals everything (not upstream)
};

struct TypeNode;
class Type;
std::optional<Type> PrimitiveType(std::string_view name);

class Type {
 public:
  // Unknown (`?`).
  Type();

  // The process-wide constants. Prim REQUIRES: IsPrimitiveName(n).
  static Type Prim(std::string_view n);
  static Type Int();
  static Type Bool();
  static Type String();
  static Type Float64();
  static Type Unit();
  static Type Unknown() { return Type(); }
  static Type Any();

  TypeTag tag() const;
  // The name of a kPrim, kStruct, kEnum, kGeneric or kDyn type; empty for the others.
  const std::string& name() const;
  // Parameters of a kFunction, arguments of a kGeneric, elements of a kTuple, the value type of
  // a kFuture; empty for the others.
  std::span<const Type> args() const;
  // REQUIRES: tag() == kFunction.
  Type result() const;
  // 0 for the constants; 1, 2, ... in the order a TypeTable made its types. Dense, so that a
  // checker can keep facts about types in vectors indexed by id instead of maps keyed by name.
  std::uint32_t id() const;

  bool Is(TypeTag t) const { return tag() == t; }
  bool IsPrim(std::string_view n) const { return tag() == TypeTag::kPrim && name() == n; }

  // Identity of interned nodes, which is structural equality (not the checker's TypesEqual).
  friend bool operator==(Type a, Type b) { return a.node_ == b.node_; }

 private:
  friend class TypeTable;
  friend std::optional<Type> PrimitiveType(std::string_view name);
  explicit Type(const TypeNode* node) : node_(node) {}
  const TypeNode* node_;
};

// The arguments live in their table's argument storage and the result inline, not in vectors
// of their own: a function type's parameters and result are then one cache miss away from its
// node instead of two more, and making a type allocates nothing of its own
// (docs/decisions/0031-kodo-perf4.md).
struct TypeNode {
  TypeTag tag = TypeTag::kUnknown;
  std::uint32_t id = 0;
  std::string name;
  std::span<const Type> args;
  Type ret;  // kFunction: the result; Unknown for the others
};

inline TypeTag Type::tag() const { return node_->tag; }
inline const std::string& Type::name() const { return node_->name; }
inline std::span<const Type> Type::args() const { return node_->args; }
inline Type Type::result() const { return node_->ret; }
inline std::uint32_t Type::id() const { return node_->id; }

// Makes and owns the non-constant types of one checker run, one node per distinct type.
class TypeTable {
 public:
  TypeTable() = default;
  TypeTable(const TypeTable&) = delete;
  TypeTable& operator=(const TypeTable&) = delete;

  Type Struct(std::string_view name) { return Intern(TypeTag::kStruct, name, {}, nullptr); }
  Type Enum(std::string_view name) { return Intern(TypeTag::kEnum, name, {}, nullptr); }
  Type Dyn(std::string_view name) { return Intern(TypeTag::kDyn, name, {}, nullptr); }
  Type Generic(std::string_view name, std::span<const Type> args) {
    return Intern(TypeTag::kGeneric, name, args, nullptr);
  }
  Type Generic(std::string_view name, std::initializer_list<Type> args) {
    return Generic(name, std::span<const Type>(args.begin(), args.size()));
  }
  Type Function(std::span<const Type> params, Type result) {
    return Intern(TypeTag::kFunction, {}, params, &result);
  }
  Type Function(std::initializer_list<Type> params, Type result) {
    return Function(std::span<const Type>(params.begin(), params.size()), result);
  }
  Type Tuple(std::span<const Type> elems) { return Intern(TypeTag::kTuple, {}, elems, nullptr); }
  Type Future(Type value) { return Intern(TypeTag::kFuture, {}, {&value, 1}, nullptr); }

  // Returns the number of distinct non-constant types made so far.
  std::size_t size() const { return nodes_.size(); }

  // Makes room for `types` distinct types without growing the index (an optimisation only).
  void Reserve(std::size_t types);

 private:
  struct Slot {
    std::uint64_t hash = 0;  // 0: empty
    const TypeNode* node = nullptr;
  };
  Type Intern(TypeTag tag, std::string_view name, std::span<const Type> args, const Type* ret);
  static std::uint64_t Hash(TypeTag tag, std::string_view name, std::span<const Type> args,
                            const Type* ret);
  void Grow(std::size_t capacity);
  std::span<const Type> StoreArgs(std::span<const Type> args);

  std::deque<TypeNode> nodes_;  // a deque: nodes never move
  // Open addressing with linear probing over a power-of-two array, at most half full. A slot
  // holds the hash and the node, and a probe compares the node's fields, so no key is stored.
  std::vector<Slot> slots_;
  // The args of every node, in chunks that never move.
  std::vector<std::unique_ptr<Type[]>> arg_chunks_;
  Type* arg_next_ = nullptr;
  std::size_t arg_left_ = 0;
};

// Returns true for the primitive names of §5.1.
bool IsPrimitiveName(std::string_view name);
// Returns the primitive type named `name`, or nullopt when `name` is not a primitive name.
std::optional<Type> PrimitiveType(std::string_view name);
// Returns true for Int, Int8..Int64, Uint..Uint64, Float32, Float64 (and kAny).
bool IsNumeric(Type type);
// Returns upstream's display: `Int`, `()`, `Point`, `List<Int>`, `(Int, Int) -> Bool`,
// `(Int, String)`, `dyn Show`, `Future<Int>`, `?`.
// Returns upstream's display string of `type`. A display longer than kMaxDisplayBytes is cut
// there and ends in "..." (aliases can make a type's display exponential in the source's size).
inline constexpr std::size_t kMaxDisplayBytes = 4096;
std::string Display(Type type);
// Type equality as the checker uses it everywhere (§5.11): structural, except that Channel<...>
// and Int are interchangeable, Channel<?> matches any Channel, an expected `dyn T` accepts
// anything, and kAny matches everything.
bool TypesEqual(Type expected, Type found);
// Returns the base name of a monomorphised name (`Option__Int` -> `Option`).
std::string_view BaseName(std::string_view name);

}  // namespace trove::kodo::sema

#include "kodo/sema/types.h"

#include <array>
#include <cstring>

#include "base/status.h"

namespace trove::kodo::sema {

namespace {

constexpr std::array<std::string_view, 15> kPrimNames = {
    "Int",    "Int8",   "Int16",   "Int32",   "Int64", "Uint",   "Uint8", "Uint16",
    "Uint32", "Uint64", "Float32", "Float64", "Bool",  "String", "Byte"};
constexpr std::size_t kIntIndex = 0, kFloat64Index = 11, kBoolIndex = 12, kStringIndex = 13;

// The process-wide constant types. Nothing reads them during static initialization.
const std::array<TypeNode, kPrimNames.size()> kPrimNodes = [] {
  std::array<TypeNode, kPrimNames.size()> nodes;
  for (std::size_t i = 0; i < kPrimNames.size(); ++i) {
    nodes[i].tag = TypeTag::kPrim;
    nodes[i].name = std::string(kPrimNames[i]);
  }
  return nodes;
}();
const TypeNode kUnitNode{TypeTag::kUnit, 0, {}, {}, {}};
const TypeNode kUnknownNode{TypeTag::kUnknown, 0, {}, {}, {}};
const TypeNode kAnyNode{TypeTag::kAny, 0, {}, {}, {}};

}  // namespace

Type::Type() : node_(&kUnknownNode) {}
Type Type::Int() { return Type(&kPrimNodes[kIntIndex]); }
Type Type::Bool() { return Type(&kPrimNodes[kBoolIndex]); }
Type Type::String() { return Type(&kPrimNodes[kStringIndex]); }
Type Type::Float64() { return Type(&kPrimNodes[kFloat64Index]); }
Type Type::Unit() { return Type(&kUnitNode); }
Type Type::Any() { return Type(&kAnyNode); }

Type Type::Prim(std::string_view n) {
  std::optional<Type> t = PrimitiveType(n);
  TROVE_CHECK(t.has_value());
  return *t;
}

std::optional<Type> PrimitiveType(std::string_view name) {
  // Every primitive name starts with one of these; most struct and enum names do not.
  if (name.empty() || std::string_view("IUFBS").find(name[0]) == std::string_view::npos) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < kPrimNames.size(); ++i) {
    if (kPrimNames[i] == name) return Type(&kPrimNodes[i]);
  }
  return std::nullopt;
}

Type TypeTable::Intern(TypeTag tag, std::string_view name, std::span<const Type> args,
                       const Type* ret) {
  key_.clear();
  key_.push_back(static_cast<char>(tag));
  key_.append(name);
  key_.push_back('\0');
  const auto append_node = [this](Type t) {
    char bytes[sizeof(const TypeNode*)];
    std::memcpy(bytes, &t.node_, sizeof bytes);
    key_.append(bytes, sizeof bytes);
  };
  for (Type a : args) append_node(a);
  if (ret != nullptr) append_node(*ret);
  if (auto it = index_.find(std::string_view(key_)); it != index_.end()) return Type(it->second);
  TypeNode& node = nodes_.emplace_back();
  node.tag = tag;
  node.id = static_cast<std::uint32_t>(nodes_.size());  // 1-based: 0 is the constants'
  node.name = std::string(name);
  node.args.assign(args.begin(), args.end());
  if (ret != nullptr) node.ret.push_back(*ret);
  index_.emplace(key_, &node);
  return Type(&node);
}

bool IsPrimitiveName(std::string_view name) { return PrimitiveType(name).has_value(); }

bool IsNumeric(Type type) {
  if (type.tag() == TypeTag::kAny) return true;
  if (type.tag() != TypeTag::kPrim) return false;
  // Primitives are constants, so they compare by address.
  return type != Type::Bool() && type != Type::String() && type.name() != "Byte";
}

namespace {

std::string JoinDisplay(std::span<const Type> types) {
  std::string out;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (i > 0) out += ", ";
    out += Display(types[i]);
  }
  return out;
}

}  // namespace

std::string Display(Type type) {
  switch (type.tag()) {
    case TypeTag::kPrim:
    case TypeTag::kStruct:
    case TypeTag::kEnum:
      return type.name();
    case TypeTag::kUnit:
      return "()";
    case TypeTag::kGeneric:
      return type.name() + "<" + JoinDisplay(type.args()) + ">";
    case TypeTag::kFunction:
      return "(" + JoinDisplay(type.args()) + ") -> " + Display(type.result());
    case TypeTag::kTuple:
      return "(" + JoinDisplay(type.args()) + ")";
    case TypeTag::kDyn:
      return "dyn " + type.name();
    case TypeTag::kFuture:
      return "Future<" + Display(type.args()[0]) + ">";
    case TypeTag::kUnknown:
    case TypeTag::kAny:
      return "?";
  }
  return "?";
}

bool TypesEqual(Type expected, Type found) {
  // Interned: one node per structure, and the rules below are reflexive.
  if (expected == found) return true;
  if (expected.tag() == TypeTag::kAny || found.tag() == TypeTag::kAny) return true;
  if (expected.tag() == TypeTag::kDyn) return true;
  const bool exp_chan = expected.tag() == TypeTag::kGeneric && expected.name() == "Channel";
  const bool found_chan = found.tag() == TypeTag::kGeneric && found.name() == "Channel";
  if ((exp_chan && found.IsPrim("Int")) || (found_chan && expected.IsPrim("Int"))) return true;
  if (exp_chan && found_chan) {
    const auto unknown_arg = [](Type t) {
      return t.args().size() == 1 && t.args()[0].tag() == TypeTag::kUnknown;
    };
    if (unknown_arg(expected) || unknown_arg(found)) return true;
  }
  if (expected.tag() != found.tag() || expected.name() != found.name() ||
      expected.args().size() != found.args().size()) {
    return false;
  }
  for (std::size_t i = 0; i < expected.args().size(); ++i) {
    if (!TypesEqual(expected.args()[i], found.args()[i])) return false;
  }
  if (expected.tag() == TypeTag::kFunction && !TypesEqual(expected.result(), found.result())) {
    return false;
  }
  return true;
}

std::string_view BaseName(std::string_view name) {
  const std::size_t pos = name.find("__");
  return pos == std::string_view::npos ? name : name.substr(0, pos);
}

}  // namespace trove::kodo::sema

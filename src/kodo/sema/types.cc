#include "kodo/sema/types.h"

#include <array>

namespace trove::kodo::sema {

bool IsPrimitiveName(std::string_view name) {
  static constexpr std::array<std::string_view, 15> kNames = {
      "Int",    "Int8",   "Int16",   "Int32",   "Int64", "Uint",   "Uint8", "Uint16",
      "Uint32", "Uint64", "Float32", "Float64", "Bool",  "String", "Byte"};
  for (std::string_view n : kNames) {
    if (n == name) return true;
  }
  return false;
}

bool IsNumeric(const Type& type) {
  if (type.tag == TypeTag::kAny) return true;
  if (type.tag != TypeTag::kPrim) return false;
  return type.name != "Bool" && type.name != "String" && type.name != "Byte";
}

namespace {

std::string JoinDisplay(const std::vector<Type>& types) {
  std::string out;
  for (std::size_t i = 0; i < types.size(); ++i) {
    if (i > 0) out += ", ";
    out += Display(types[i]);
  }
  return out;
}

}  // namespace

std::string Display(const Type& type) {
  switch (type.tag) {
    case TypeTag::kPrim:
    case TypeTag::kStruct:
    case TypeTag::kEnum:
      return type.name;
    case TypeTag::kUnit:
      return "()";
    case TypeTag::kGeneric:
      return type.name + "<" + JoinDisplay(type.args) + ">";
    case TypeTag::kFunction:
      return "(" + JoinDisplay(type.args) + ") -> " + Display(type.result());
    case TypeTag::kTuple:
      return "(" + JoinDisplay(type.args) + ")";
    case TypeTag::kDyn:
      return "dyn " + type.name;
    case TypeTag::kFuture:
      return "Future<" + Display(type.args[0]) + ">";
    case TypeTag::kUnknown:
    case TypeTag::kAny:
      return "?";
  }
  return "?";
}

bool TypesEqual(const Type& expected, const Type& found) {
  if (expected.tag == TypeTag::kAny || found.tag == TypeTag::kAny) return true;
  if (expected.tag == TypeTag::kDyn) return true;
  const bool exp_chan = expected.tag == TypeTag::kGeneric && expected.name == "Channel";
  const bool found_chan = found.tag == TypeTag::kGeneric && found.name == "Channel";
  if ((exp_chan && found.IsPrim("Int")) || (found_chan && expected.IsPrim("Int"))) return true;
  if (exp_chan && found_chan) {
    const auto unknown_arg = [](const Type& t) {
      return t.args.size() == 1 && t.args[0].tag == TypeTag::kUnknown;
    };
    if (unknown_arg(expected) || unknown_arg(found)) return true;
  }
  if (expected.tag != found.tag || expected.name != found.name ||
      expected.args.size() != found.args.size() || expected.ret.size() != found.ret.size()) {
    return false;
  }
  for (std::size_t i = 0; i < expected.args.size(); ++i) {
    if (!TypesEqual(expected.args[i], found.args[i])) return false;
  }
  for (std::size_t i = 0; i < expected.ret.size(); ++i) {
    if (!TypesEqual(expected.ret[i], found.ret[i])) return false;
  }
  return true;
}

std::string_view BaseName(std::string_view name) {
  const std::size_t pos = name.find("__");
  return pos == std::string_view::npos ? name : name.substr(0, pos);
}

}  // namespace trove::kodo::sema

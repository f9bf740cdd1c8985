#include "kodo/sema/types.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "base/status.h"

namespace trove::kodo::sema {

namespace {

constexpr std::array<std::string_view, 15> kPrimNames = {
    "Int",    "Int8",   "Int16",   "Int32",   "Int64", "Uint",   "Uint8", "Uint16",
    "Uint32", "Uint64", "Float32", "Float64", "Bool",  "String", "Byte"};
constexpr std::size_t kIntIndex = 0, kFloat64Index = 11, kBoolIndex = 12, kStringIndex = 13,
                      kByteIndex = 14;

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
  // Every primitive name is 3 to 7 bytes long; compare only names of the same length.
  if (name.size() < 3 || name.size() > 7) return std::nullopt;
  // Byte by byte: names this short cost more through a memcmp call than compared inline.
  const auto same = [name](std::string_view prim) {
    if (prim.size() != name.size()) return false;
    for (std::size_t i = 0; i < prim.size(); ++i) {
      if (prim[i] != name[i]) return false;
    }
    return true;
  };
  for (std::size_t i = 0; i < kPrimNames.size(); ++i) {
    if (same(kPrimNames[i])) return Type(&kPrimNodes[i]);
  }
  return std::nullopt;
}

std::uint64_t TypeTable::Hash(TypeTag tag, std::string_view name, std::span<const Type> args,
                              const Type* ret) {
  // FNV-1a over the tag and the name, then the argument and result node addresses mixed in.
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(tag);
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  const auto mix = [&h](const TypeNode* node) {
    h ^= reinterpret_cast<std::uintptr_t>(node) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  mix(nullptr);  // separates the name from the arguments
  for (const Type a : args) mix(a.node_);
  if (ret != nullptr) mix(ret->node_);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return h | 1;  // never 0, which marks an empty slot
}

void TypeTable::Reserve(std::size_t types) {
  std::size_t capacity = 64;
  while (capacity < 2 * types) capacity *= 2;
  if (capacity > slots_.size()) Grow(capacity);
}

void TypeTable::Grow(std::size_t capacity) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(capacity, Slot{});
  const std::size_t mask = capacity - 1;
  for (const Slot& slot : old) {
    if (slot.hash == 0) continue;
    std::size_t i = slot.hash & mask;
    while (slots_[i].hash != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

std::span<const Type> TypeTable::StoreArgs(std::span<const Type> args) {
  if (args.empty()) return {};
  if (arg_left_ < args.size()) {
    const std::size_t chunk = std::max<std::size_t>(4096, args.size());
    arg_chunks_.push_back(std::make_unique<Type[]>(chunk));
    arg_next_ = arg_chunks_.back().get();
    arg_left_ = chunk;
  }
  Type* stored = arg_next_;
  std::copy(args.begin(), args.end(), stored);
  arg_next_ += args.size();
  arg_left_ -= args.size();
  return {stored, args.size()};
}

Type TypeTable::Intern(TypeTag tag, std::string_view name, std::span<const Type> args,
                       const Type* ret) {
  if (2 * (nodes_.size() + 1) > slots_.size()) Grow(slots_.empty() ? 64 : 2 * slots_.size());
  const std::uint64_t hash = Hash(tag, name, args, ret);
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  for (; slots_[i].hash != 0; i = (i + 1) & mask) {
    if (slots_[i].hash != hash) continue;
    const TypeNode& n = *slots_[i].node;
    // The tag decides whether there is a result: only kFunction has one.
    if (n.tag != tag || n.name != name || n.args.size() != args.size()) continue;
    if (ret != nullptr && n.ret != *ret) continue;
    if (!std::equal(args.begin(), args.end(), n.args.begin())) continue;
    return Type(&n);
  }
  TypeNode& node = nodes_.emplace_back();
  node.tag = tag;
  node.id = static_cast<std::uint32_t>(nodes_.size());  // 1-based: 0 is the constants'
  node.name = std::string(name);
  node.args = StoreArgs(args);
  if (ret != nullptr) node.ret = *ret;
  slots_[i] = Slot{hash, &node};
  return Type(&node);
}

bool IsPrimitiveName(std::string_view name) { return PrimitiveType(name).has_value(); }

bool IsNumeric(Type type) {
  if (type.tag() == TypeTag::kAny) return true;
  if (type.tag() != TypeTag::kPrim) return false;
  // Primitives are constants, so they compare by address.
  return type != Type::Bool() && type != Type::String() &&
         &type.name() != &kPrimNodes[kByteIndex].name;
}

namespace {

// Appends `type`'s display string to `out`, stopping once `out` passes kMaxDisplayBytes: types
// built from aliases can double in size at every level (`type A1 = (A0, A0)`), so an unbounded
// display is exponential in the source's size. The recursion depth is bounded by the budget,
// since every level appends at least one byte before descending.
void AppendDisplay(Type type, std::string& out);

void AppendJoined(std::span<const Type> types, std::string& out) {
  for (std::size_t i = 0; i < types.size() && out.size() <= kMaxDisplayBytes; ++i) {
    if (i > 0) out += ", ";
    AppendDisplay(types[i], out);
  }
}

void AppendDisplay(Type type, std::string& out) {
  if (out.size() > kMaxDisplayBytes) return;
  switch (type.tag()) {
    case TypeTag::kPrim:
    case TypeTag::kStruct:
    case TypeTag::kEnum:
      out += type.name();
      return;
    case TypeTag::kUnit:
      out += "()";
      return;
    case TypeTag::kGeneric:
      out += type.name();
      out += '<';
      AppendJoined(type.args(), out);
      out += '>';
      return;
    case TypeTag::kFunction:
      out += '(';
      AppendJoined(type.args(), out);
      out += ") -> ";
      AppendDisplay(type.result(), out);
      return;
    case TypeTag::kTuple:
      out += '(';
      AppendJoined(type.args(), out);
      out += ')';
      return;
    case TypeTag::kDyn:
      out += "dyn ";
      out += type.name();
      return;
    case TypeTag::kFuture:
      out += "Future<";
      AppendDisplay(type.args()[0], out);
      out += '>';
      return;
    case TypeTag::kUnknown:
    case TypeTag::kAny:
      out += '?';
      return;
  }
  out += '?';
}

}  // namespace

std::string Display(Type type) {
  std::string out;
  AppendDisplay(type, out);
  if (out.size() > kMaxDisplayBytes) {
    std::size_t cut = kMaxDisplayBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
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

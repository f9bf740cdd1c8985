#include "warden/export/lifter.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "warden/wasm/module_visitor.h"
#include "warden/wasm/reader.h"

namespace trove::warden::exporter {

namespace {

using wasm::FuncIndex;
using wasm::Instruction;
using wasm::Opcode;
using wasm::ValType;

// Variable ids: locals are their index; block results and loop parameters count from here.
constexpr std::uint32_t kBlockVarBase = 0x80000000u;
// At most this many pending values that read or change state stay folded; older ones go to
// temporaries, so that each statement checks a bounded window of the stack.
constexpr std::size_t kMaxPending = 64;
// An operand longer than this goes to a temporary before it is folded into another
// expression: it keeps lines readable and the work linear in the body size.
constexpr std::size_t kMaxExprChars = 200;
// Indentation stops growing at this depth (the reader allows 10,000 nested blocks).
constexpr std::size_t kMaxIndent = 40;

// What evaluating a value or running a statement reads and changes.
struct Effects {
  bool reads_mem = false;
  bool writes_mem = false;
  bool reads_global = false;
  bool writes_global = false;
  bool traps = false;            // may trap
  bool control = false;          // transfers control (branch, return, block boundary)
  bool writes_all_vars = false;  // a block boundary: any local may change
  std::vector<std::uint32_t> reads_vars;
  std::vector<std::uint32_t> writes_vars;

  bool Writes() const { return writes_mem || writes_global; }
  // True when evaluating it twice, late or not at all changes nothing but its value.
  bool Inert() const { return !Writes() && !traps; }
  bool Clean() const {
    return Inert() && !reads_mem && !reads_global && reads_vars.empty() && !control;
  }
  void Merge(const Effects& o) {
    reads_mem |= o.reads_mem;
    writes_mem |= o.writes_mem;
    reads_global |= o.reads_global;
    writes_global |= o.writes_global;
    traps |= o.traps;
    control |= o.control;
    writes_all_vars |= o.writes_all_vars;
    for (std::uint32_t v : o.reads_vars) AddVar(reads_vars, v);
    for (std::uint32_t v : o.writes_vars) AddVar(writes_vars, v);
  }
  static void AddVar(std::vector<std::uint32_t>& vars, std::uint32_t v) {
    if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
  }
};

Effects CallEffects() {
  Effects fx;
  fx.reads_mem = fx.writes_mem = fx.reads_global = fx.writes_global = fx.traps = true;
  return fx;
}

bool Intersects(const std::vector<std::uint32_t>& a, const std::vector<std::uint32_t>& b) {
  for (std::uint32_t x : a) {
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  }
  return false;
}

// Returns whether `a`, evaluated first in program order, must still be evaluated before `b`:
// they touch the same state and one of them changes it, or one may trap and the other has a
// visible effect, or `b` transfers control while `a` has an effect.
bool MustPrecede(const Effects& a, const Effects& b) {
  if (a.writes_mem && (b.reads_mem || b.writes_mem)) return true;
  if (b.writes_mem && a.reads_mem) return true;
  if (a.writes_global && (b.reads_global || b.writes_global)) return true;
  if (b.writes_global && a.reads_global) return true;
  if ((a.traps && b.Writes()) || (b.traps && a.Writes())) return true;
  if (b.control && !a.Inert()) return true;
  if (a.control && !b.Inert()) return true;
  if (b.writes_all_vars && !a.reads_vars.empty()) return true;
  if (a.writes_all_vars && !b.reads_vars.empty()) return true;
  return Intersects(a.reads_vars, b.writes_vars) || Intersects(a.writes_vars, b.reads_vars) ||
         Intersects(a.writes_vars, b.writes_vars);
}

std::string_view CType(ValType t) {
  switch (t) {
    case ValType::kI32:
      return "int32_t";
    case ValType::kI64:
      return "int64_t";
    case ValType::kF32:
      return "float";
    case ValType::kF64:
      return "double";
    case ValType::kV128:
      return "v128_t";
    default:
      return "void*";
  }
}

std::string_view ZeroOf(ValType t) { return t == ValType::kV128 ? "{0}" : "0"; }

std::optional<ValType> ScalarOfPrefix(std::string_view prefix) {
  if (prefix == "i32") return ValType::kI32;
  if (prefix == "i64") return ValType::kI64;
  if (prefix == "f32") return ValType::kF32;
  if (prefix == "f64") return ValType::kF64;
  return std::nullopt;
}

std::string_view CTypeOfPrefix(std::string_view prefix, bool is_unsigned) {
  if (prefix == "i32") return is_unsigned ? "uint32_t" : "int32_t";
  if (prefix == "i64") return is_unsigned ? "uint64_t" : "int64_t";
  if (prefix == "f32") return "float";
  return "double";
}

// Binary numeric operators written infix, by the part of the mnemonic after the type prefix.
std::optional<std::string_view> InfixOperator(std::string_view op) {
  static constexpr std::pair<std::string_view, std::string_view> kOps[] = {
      {"add", "+"},   {"sub", "-"},   {"mul", "*"},    {"div_s", "/"},  {"div_u", "/"},
      {"div", "/"},   {"rem_s", "%"}, {"rem_u", "%"},  {"and", "&"},    {"or", "|"},
      {"xor", "^"},   {"shl", "<<"},  {"shr_s", ">>"}, {"shr_u", ">>"}, {"eq", "=="},
      {"ne", "!="},   {"lt_s", "<"},  {"lt_u", "<"},   {"lt", "<"},     {"gt_s", ">"},
      {"gt_u", ">"},  {"gt", ">"},    {"le_s", "<="},  {"le_u", "<="},  {"le", "<="},
      {"ge_s", ">="}, {"ge_u", ">="}, {"ge", ">="}};
  for (const auto& [name, sym] : kOps) {
    if (op == name) return sym;
  }
  return std::nullopt;
}

bool IsComparison(std::string_view op) {
  return op == "eq" || op == "ne" || op.starts_with("lt") || op.starts_with("gt") ||
         op.starts_with("le") || op.starts_with("ge");
}

// Integer operators whose C form is undefined or implementation-defined for some operands
// (division by zero, INT_MIN / -1, shift counts >= width): helpers in the C dialect.
bool IsCheckedIntegerOp(std::string_view op) {
  return op == "div_s" || op == "div_u" || op == "rem_s" || op == "rem_u" || op == "shl" ||
         op == "shr_s" || op == "shr_u";
}

bool IsBinaryCall(std::string_view op) {
  return op == "rotl" || op == "rotr" || op == "min" || op == "max" || op == "copysign";
}

bool IsUnaryCall(std::string_view op) {
  return op == "clz" || op == "ctz" || op == "popcnt" || op == "abs" || op == "sqrt" ||
         op == "ceil" || op == "floor" || op == "trunc" || op == "nearest";
}

// The C type a load or store mnemonic accesses: "i32.load8_u" -> uint8_t.
std::string_view AccessType(std::string_view prefix, std::string_view op) {
  if (op.ends_with("8_s")) return "int8_t";
  if (op.ends_with("8_u") || op == "store8") return "uint8_t";
  if (op.ends_with("16_s")) return "int16_t";
  if (op.ends_with("16_u") || op == "store16") return "uint16_t";
  if (op.ends_with("32_s")) return "int32_t";
  if (op.ends_with("32_u") || op == "store32") return "uint32_t";
  return CTypeOfPrefix(prefix, false);
}

// The operand type of a conversion, from the type named in its mnemonic: "extend_i32_u" ->
// i32; the result type when none is named ("extend8_s").
ValType ConversionSource(std::string_view op, ValType result) {
  for (const auto& [name, type] :
       {std::pair{"_i32", ValType::kI32}, std::pair{"_i64", ValType::kI64},
        std::pair{"_f32", ValType::kF32}, std::pair{"_f64", ValType::kF64}}) {
    if (op.find(name) != std::string_view::npos) return type;
  }
  return result;
}

bool IsConversion(std::string_view op) {
  return op == "wrap_i64" || op == "demote_f64" || op == "promote_f32" ||
         op.starts_with("extend") || op.starts_with("trunc_") || op.starts_with("convert_") ||
         op.starts_with("reinterpret_");
}

std::string FloatLiteral(double v, bool is_f32) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
  std::string s = is_f32 ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return is_f32 ? s + "f" : s;
}

// "i32x4.add" -> "i32x4_add": an intrinsic's name.
std::string IntrinsicName(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '.' || c == ' ') c = '_';
  }
  return out;
}

// What the module declares that bodies refer to.
struct ModuleInfo {
  std::vector<wasm::FuncType> types;
  std::vector<std::uint32_t> func_types;  // type index per function (imports first)
  std::vector<ValType> globals;
  std::vector<bool> memory64;
  std::vector<ValType> tables;
  std::vector<std::uint32_t> tag_types;
  std::uint32_t imported_functions = 0;

  const wasm::FuncType* Type(std::uint32_t index) const {
    return index < types.size() ? &types[index] : nullptr;
  }
  const wasm::FuncType* FuncType(std::uint32_t func) const {
    return func < func_types.size() ? Type(func_types[func]) : nullptr;
  }
  ValType Address(std::uint32_t memory) const {
    return memory < memory64.size() && memory64[memory] ? ValType::kI64 : ValType::kI32;
  }
  ValType TableElem(std::uint32_t table) const {
    return table < tables.size() ? tables[table] : ValType::kFuncRef;
  }
};

// The stack signature and effects of an instruction written as an intrinsic call.
struct IntrinsicSig {
  std::vector<ValType> params;
  std::vector<ValType> results;
  Effects fx;
  std::vector<std::string> leading;   // immediates written before the operands
  std::vector<std::string> trailing;  // immediates written after them (lanes)
};

ValType SimdLaneScalar(std::string_view shape) {
  if (shape == "i64x2") return ValType::kI64;
  if (shape == "f32x4") return ValType::kF32;
  if (shape == "f64x2") return ValType::kF64;
  return ValType::kI32;
}

bool IsSimdUnary(std::string_view op) {
  static constexpr std::string_view kUnary[] = {"not",  "abs",   "neg",   "popcnt", "sqrt",
                                                "ceil", "floor", "trunc", "nearest"};
  for (std::string_view u : kUnary) {
    if (op == u) return true;
  }
  return op.starts_with("extend_") || op.starts_with("convert_") || op.starts_with("trunc_sat_") ||
         op.starts_with("demote_") || op.starts_with("promote_") ||
         op.starts_with("extadd_pairwise") || op.starts_with("relaxed_trunc");
}

// Returns the signature of every instruction the lifter writes as an intrinsic: SIMD,
// atomics, bulk memory, tables and references. nullopt for instructions it lifts itself.
std::optional<IntrinsicSig> GetIntrinsicSig(const Instruction& inst, const ModuleInfo& m) {
  const wasm::OpcodeInfo& info = wasm::GetOpcodeInfo(inst.opcode);
  const std::string_view text = info.text;
  IntrinsicSig s;
  const ValType a0 = m.Address(inst.memarg.memory);
  auto mem_name = [](std::uint32_t memory) { return fmt::format("mem{}", memory); };
  switch (inst.opcode) {
    case Opcode::kMemoryInit: {
      const ValType a = m.Address(inst.index2);
      s.params = {a, ValType::kI32, ValType::kI32};
      s.fx.writes_mem = s.fx.traps = true;
      s.leading.push_back(fmt::format("data{}", inst.index));
      if (inst.index2 != 0) s.leading.push_back(mem_name(inst.index2));
      return s;
    }
    case Opcode::kDataDrop:
      s.fx.writes_mem = true;
      s.leading.push_back(fmt::format("data{}", inst.index));
      return s;
    case Opcode::kMemoryCopy: {
      const ValType a = m.Address(inst.index);
      s.params = {a, m.Address(inst.index2), a};
      s.fx.reads_mem = s.fx.writes_mem = s.fx.traps = true;
      if (inst.index != 0 || inst.index2 != 0) {
        s.leading = {mem_name(inst.index), mem_name(inst.index2)};
      }
      return s;
    }
    case Opcode::kMemoryFill: {
      const ValType a = m.Address(inst.index);
      s.params = {a, ValType::kI32, a};
      s.fx.writes_mem = s.fx.traps = true;
      if (inst.index != 0) s.leading.push_back(mem_name(inst.index));
      return s;
    }
    case Opcode::kTableInit:
      s.params = {ValType::kI32, ValType::kI32, ValType::kI32};
      s.fx = CallEffects();
      s.leading = {fmt::format("elem{}", inst.index), fmt::format("table{}", inst.index2)};
      return s;
    case Opcode::kElemDrop:
      s.fx = CallEffects();
      s.leading.push_back(fmt::format("elem{}", inst.index));
      return s;
    case Opcode::kTableCopy:
      s.params = {ValType::kI32, ValType::kI32, ValType::kI32};
      s.fx = CallEffects();
      s.leading = {fmt::format("table{}", inst.index), fmt::format("table{}", inst.index2)};
      return s;
    case Opcode::kTableGrow:
      s.params = {m.TableElem(inst.index), ValType::kI32};
      s.results = {ValType::kI32};
      s.fx = CallEffects();
      s.leading.push_back(fmt::format("table{}", inst.index));
      return s;
    case Opcode::kTableSize:
      s.results = {ValType::kI32};
      s.fx.reads_global = true;
      s.leading.push_back(fmt::format("table{}", inst.index));
      return s;
    case Opcode::kTableFill:
      s.params = {ValType::kI32, m.TableElem(inst.index), ValType::kI32};
      s.fx = CallEffects();
      s.leading.push_back(fmt::format("table{}", inst.index));
      return s;
    case Opcode::kTableGet:
      s.params = {ValType::kI32};
      s.results = {m.TableElem(inst.index)};
      s.fx.reads_global = s.fx.traps = true;
      s.leading.push_back(fmt::format("table{}", inst.index));
      return s;
    case Opcode::kTableSet:
      s.params = {ValType::kI32, m.TableElem(inst.index)};
      s.fx = CallEffects();
      s.leading.push_back(fmt::format("table{}", inst.index));
      return s;
    case Opcode::kRefNull:
      s.results = {!inst.types.empty() ? inst.types[0] : ValType::kFuncRef};
      return s;
    case Opcode::kRefIsNull:
      s.params = {ValType::kFuncRef};
      s.results = {ValType::kI32};
      return s;
    case Opcode::kRefFunc:
      s.results = {ValType::kFuncRef};
      s.leading.push_back(fmt::format("{}", inst.index));
      return s;
    case Opcode::kAtomicFence:
      s.fx = CallEffects();
      return s;
    case Opcode::kMemoryAtomicNotify:
      s.params = {a0, ValType::kI32};
      s.results = {ValType::kI32};
      s.fx = CallEffects();
      return s;
    case Opcode::kMemoryAtomicWait32:
    case Opcode::kMemoryAtomicWait64:
      s.params = {a0, inst.opcode == Opcode::kMemoryAtomicWait32 ? ValType::kI32 : ValType::kI64,
                  ValType::kI64};
      s.results = {ValType::kI32};
      s.fx = CallEffects();
      return s;
    case Opcode::kV128Const: {
      std::string hex = "0x";
      for (std::size_t i = 16; i-- > 0;) hex += fmt::format("{:02x}", inst.bytes[i]);
      s.results = {ValType::kV128};
      s.leading.push_back(hex);
      return s;
    }
    case Opcode::kI8x16Shuffle:
      s.params = {ValType::kV128, ValType::kV128};
      s.results = {ValType::kV128};
      for (std::uint8_t b : inst.bytes) s.trailing.push_back(fmt::format("{}", b));
      return s;
    default:
      break;
  }
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view prefix = text.substr(0, dot);
  const std::string_view op = text.substr(dot + 1);
  if (op.starts_with("atomic.")) {  // i32.atomic.load8_u, i64.atomic.rmw16.cmpxchg_u, ...
    const ValType t = prefix == "i64" ? ValType::kI64 : ValType::kI32;
    s.fx.traps = true;
    if (op.starts_with("atomic.load")) {
      s.params = {a0};
      s.results = {t};
      s.fx.reads_mem = true;
    } else if (op.starts_with("atomic.store")) {
      s.params = {a0, t};
      s.fx.writes_mem = true;
    } else if (op.ends_with("cmpxchg") || op.ends_with("cmpxchg_u")) {
      s.params = {a0, t, t};
      s.results = {t};
      s.fx.reads_mem = s.fx.writes_mem = true;
    } else {
      s.params = {a0, t};
      s.results = {t};
      s.fx.reads_mem = s.fx.writes_mem = true;
    }
    return s;
  }
  const bool simd = prefix == "v128" || prefix == "i8x16" || prefix == "i16x8" ||
                    prefix == "i32x4" || prefix == "i64x2" || prefix == "f32x4" ||
                    prefix == "f64x2";
  if (!simd) return std::nullopt;
  const ValType v = ValType::kV128;
  if (info.imm == wasm::ImmKind::kMemArg || info.imm == wasm::ImmKind::kMemArgLane) {
    const bool lane = info.imm == wasm::ImmKind::kMemArgLane;
    if (lane) s.trailing.push_back(fmt::format("{}", inst.lane));
    s.fx.traps = true;
    if (op.starts_with("store")) {
      s.params = {a0, v};
      s.fx.writes_mem = true;
    } else {
      s.params = lane ? std::vector<ValType>{a0, v} : std::vector<ValType>{a0};
      s.results = {v};
      s.fx.reads_mem = true;
    }
    return s;
  }
  if (info.imm == wasm::ImmKind::kLane) {
    s.trailing.push_back(fmt::format("{}", inst.lane));
    if (op.starts_with("extract_lane")) {
      s.params = {v};
      s.results = {SimdLaneScalar(prefix)};
    } else {
      s.params = {v, SimdLaneScalar(prefix)};
      s.results = {v};
    }
    return s;
  }
  s.results = {v};
  if (op == "splat") {
    s.params = {SimdLaneScalar(prefix)};
  } else if (op == "shl" || op == "shr_s" || op == "shr_u") {
    s.params = {v, ValType::kI32};
  } else if (op == "all_true" || op == "bitmask" || op == "any_true") {
    s.params = {v};
    s.results = {ValType::kI32};
  } else if (op == "bitselect" || op.starts_with("relaxed_madd") ||
             op.starts_with("relaxed_nmadd") || op == "relaxed_laneselect" ||
             op == "relaxed_dot_i8x16_i7x16_add_s") {
    s.params = {v, v, v};
  } else if (IsSimdUnary(op)) {
    s.params = {v};
  } else {
    s.params = {v, v};
  }
  return s;
}

struct Value {
  std::string text;
  ValType type = ValType::kI32;
  Effects fx;
};

struct Frame {
  enum Kind { kFunction, kBlock, kLoop, kIf, kTry, kTryTable } kind = kFunction;
  int label = 0;
  std::vector<ValType> params;
  std::vector<ValType> results;
  std::vector<std::string> vars;  // what a branch assigns: the results (loops: parameters)
  std::vector<std::uint32_t> var_ids;
  std::vector<std::string> result_vars;  // what the fallthrough assigns
  std::vector<std::uint32_t> result_ids;
  std::size_t base = 0;             // stack height below the parameters
  std::vector<Value> param_values;  // what `else` starts from
  bool unreachable = false;         // the rest of this frame's current arm is dead code
  bool branched = false;            // some branch targets the end of this frame
  bool has_else = false;

  // The values a branch to this frame carries.
  const std::vector<ValType>& BranchTypes() const { return kind == kLoop ? params : results; }
};

// Lifts one body.
class BodyLifter {
 public:
  BodyLifter(const ModuleInfo& module, const NameOf& name_of, Dialect dialect,
             const wasm::FuncType& type, const std::vector<wasm::LocalDecl>& locals)
      : m_(module), name_of_(name_of), dialect_(dialect) {
    local_types_ = type.params;
    params_ = type.params.size();
    for (const wasm::LocalDecl& d : locals) {
      if (d.count == 0) continue;
      std::string line = fmt::format("{} ", CType(d.type));
      for (std::uint32_t k = 0; k < d.count; ++k) {
        line += fmt::format("{}l{} = {}", k ? ", " : "", local_types_.size(), ZeroOf(d.type));
        local_types_.push_back(d.type);
      }
      Emit(line + ";");
    }
    Frame f;
    f.kind = Frame::kFunction;
    f.results = type.results;
    frames_.push_back(std::move(f));
  }

  void Add(const Instruction& inst);
  std::string Take() { return std::move(out_); }

 private:
  bool C() const { return dialect_ == Dialect::kC; }
  Frame& Top() { return frames_.back(); }
  std::size_t Base() const { return frames_.empty() ? 0 : frames_.back().base; }

  // Emits a line indented for the current frame, or `outdent` frames further out.
  void Emit(std::string_view line, std::size_t outdent = 0) {
    std::size_t level = frames_.size() > outdent ? frames_.size() - outdent : 1;
    out_.append(2 * std::clamp<std::size_t>(level, 1, kMaxIndent), ' ');
    out_.append(line);
    out_.push_back('\n');
  }
  std::string Local(std::uint32_t i) const {
    return i < params_ ? fmt::format("p{}", i) : fmt::format("l{}", i);
  }
  ValType LocalType(std::uint32_t i) const {
    return i < local_types_.size() ? local_types_[i] : ValType::kI32;
  }
  std::string FuncName(std::uint32_t f) const {
    std::string n = name_of_ ? name_of_(f) : std::string();
    return n.empty() ? fmt::format("wasm_func_{}", f) : n;
  }
  std::string NewTemp() { return fmt::format("t{}", next_temp_++); }

  // --- the operand stack ---

  void Push(Value v) { stack_.push_back(std::move(v)); }
  // Pops `n` operands (first pushed first), so that folding them into one C expression,
  // whose operands C evaluates in unspecified order, keeps their wasm order: an operand
  // that must precede a later one goes to a temporary. Missing operands (invalid code)
  // print as `?`.
  std::vector<Value> PopOperands(std::size_t n) {
    const std::size_t base = Base();
    const std::size_t have = stack_.size() > base ? stack_.size() - base : 0;
    const std::size_t take = std::min(n, have);
    const std::size_t first = stack_.size() - take;
    for (std::size_t i = first; i < stack_.size(); ++i) {
      if (stack_[i].text.size() > kMaxExprChars) Materialize(i, /*force=*/true);
    }
    Effects later;
    for (std::size_t i = stack_.size(); i-- > first;) {
      if (i + 1 < stack_.size() && MustPrecede(stack_[i].fx, later)) Materialize(i);
      later.Merge(stack_[i].fx);
    }
    std::vector<Value> out(n - take, Value{"?", ValType::kI32, {}});
    for (std::size_t i = first; i < stack_.size(); ++i) out.push_back(std::move(stack_[i]));
    stack_.resize(first);
    ClampDirty();
    return out;
  }
  Value PopOne() { return std::move(PopOperands(1)[0]); }

  void ClampDirty() { dirty_begin_ = std::min(dirty_begin_, stack_.size()); }

  // Writes the pending value at `index` to a temporary, first flushing what must precede it.
  // `force`: also a value without effects (a long expression).
  void Materialize(std::size_t index, bool force = false) {
    FlushFor(stack_[index].fx, index);
    MaterializeNow(index, force);
  }
  void MaterializeNow(std::size_t index, bool force = false) {
    Value& v = stack_[index];
    if (v.fx.Clean() && !force) return;
    const std::string t = NewTemp();
    Emit(fmt::format("{} {} = {};", CType(v.type), t, v.text));
    v.text = t;
    v.fx = Effects{};
  }
  // Materializes every pending value below `below` that must be evaluated before something
  // with effects `fx` (oldest first), then advances the clean watermark.
  void FlushFor(const Effects& fx, std::size_t below) {
    below = std::min(below, stack_.size());
    std::vector<std::size_t> marked;
    Effects acc = fx;
    for (std::size_t j = below; j-- > dirty_begin_;) {
      if (MustPrecede(stack_[j].fx, acc)) {
        marked.push_back(j);
        acc.Merge(stack_[j].fx);
      }
    }
    for (auto it = marked.rbegin(); it != marked.rend(); ++it) MaterializeNow(*it);
    while (dirty_begin_ < stack_.size() && stack_[dirty_begin_].fx.Clean()) ++dirty_begin_;
  }
  // Emits a statement with effects `fx` after what the pending values must do before it.
  void Statement(std::string_view line, const Effects& fx) {
    FlushFor(fx, stack_.size());
    Emit(line);
  }
  void PushPending(Value v) {
    Push(std::move(v));
    if (stack_.size() - dirty_begin_ > kMaxPending) {
      FlushFor(Effects{}, 0);  // advance the watermark
      while (stack_.size() - dirty_begin_ > kMaxPending) {
        MaterializeNow(dirty_begin_);
        ++dirty_begin_;
      }
    }
  }
  // Materializes everything that is not a constant: the state before a block boundary.
  void Barrier() {
    Effects all;
    all.control = all.writes_mem = all.writes_global = all.writes_all_vars = true;
    FlushFor(all, stack_.size());
  }
  // A value a branch carries stays on the stack too (br_if): keep one evaluation.
  void MaterializeTop(std::size_t n) {
    const std::size_t have = stack_.size() - std::min(stack_.size(), Base());
    for (std::size_t i = stack_.size() - std::min(n, have); i < stack_.size(); ++i) {
      if (!stack_[i].fx.Clean()) Materialize(i);
    }
  }

  // --- control flow ---

  Frame* Target(std::uint32_t depth) {
    return depth < frames_.size() ? &frames_[frames_.size() - 1 - depth] : nullptr;
  }
  std::string Jump(const Frame& f) const {
    if (C()) return fmt::format("goto L{}{};", f.label, f.kind == Frame::kLoop ? "" : "_end");
    return fmt::format("{} L{};", f.kind == Frame::kLoop ? "continue" : "break", f.label);
  }
  std::string ReturnOf(const std::vector<Value>& values) const {
    if (values.empty()) return "return;";
    if (values.size() == 1) return fmt::format("return {};", values[0].text);
    std::string list;
    for (std::size_t i = 0; i < values.size(); ++i) list += (i ? ", " : "") + values[i].text;
    return fmt::format("return {{{}}};", list);
  }
  // The statements of a branch to `depth` carrying `values`: assignments, then the jump.
  std::string BranchTo(std::uint32_t depth, const std::vector<Value>& values) {
    Frame* f = Target(depth);
    if (f == nullptr) return "/* bad label */";
    if (f->kind == Frame::kFunction) return ReturnOf(values);
    if (f->kind != Frame::kLoop) f->branched = true;
    std::string s;
    for (std::size_t i = 0; i < values.size() && i < f->vars.size(); ++i) {
      s += fmt::format("{} = {}; ", f->vars[i], values[i].text);
    }
    return s + Jump(*f);
  }
  std::size_t BranchArity(std::uint32_t depth) {
    Frame* f = Target(depth);
    if (f == nullptr) return 0;
    return f->BranchTypes().size();
  }
  // Pops the values a branch to `depth` carries, each materialized when there are several
  // (they are assigned one after another).
  std::vector<Value> BranchValues(std::uint32_t depth, bool keep) {
    const std::size_t n = BranchArity(depth);
    if (keep || n > 1) MaterializeTop(n);
    std::vector<Value> values = PopOperands(n);
    if (keep) {
      for (const Value& v : values) Push(v);
    }
    return values;
  }
  Effects BranchEffects(const std::vector<Value>& values, std::uint32_t depth) {
    Effects fx;
    fx.control = true;
    for (const Value& v : values) fx.Merge(v.fx);
    if (Frame* f = Target(depth)) {
      for (std::uint32_t id : f->var_ids) Effects::AddVar(fx.writes_vars, id);
    }
    return fx;
  }
  void MarkUnreachable() {
    Top().unreachable = true;
    stack_.resize(std::min(stack_.size(), Base()));
    ClampDirty();
  }

  std::pair<std::vector<ValType>, std::vector<ValType>> BlockSig(const wasm::BlockType& bt) {
    using K = wasm::BlockType::Kind;
    if (bt.kind == K::kValue) return {{}, {bt.value}};
    if (bt.kind == K::kTypeIndex) {
      if (const wasm::FuncType* t = m_.Type(bt.type_index)) return {t->params, t->results};
    }
    return {};
  }
  // Opens a block, loop, if or try; `opener` is its first line without the label.
  void Open(Frame::Kind kind, const wasm::BlockType& bt, std::string_view opener) {
    Frame f;
    f.kind = kind;
    f.label = next_label_++;
    std::tie(f.params, f.results) = BlockSig(bt);
    auto names = [&](char letter, const std::vector<ValType>& types, std::vector<std::string>& vars,
                     std::vector<std::uint32_t>& ids) {
      for (std::size_t i = 0; i < types.size(); ++i) {
        vars.push_back(types.size() == 1 ? fmt::format("{}{}", letter, f.label)
                                         : fmt::format("{}{}_{}", letter, f.label, i));
        ids.push_back(kBlockVarBase + next_var_++);
      }
    };
    names('r', f.results, f.result_vars, f.result_ids);
    for (std::size_t i = 0; i < f.result_vars.size(); ++i) {
      Emit(fmt::format("{} {};", CType(f.results[i]), f.result_vars[i]));
    }
    const std::size_t have = stack_.size() - std::min(stack_.size(), Base());
    const std::size_t np = std::min(f.params.size(), have);
    f.base = stack_.size() - np;
    if (kind == Frame::kLoop) {
      // Loop parameters are variables that a backward branch assigns.
      names('a', f.params, f.vars, f.var_ids);
      for (std::size_t i = 0; i < f.vars.size(); ++i) {
        const std::size_t at = f.base + i - (f.params.size() - np);
        const bool known = i >= f.params.size() - np;
        Emit(fmt::format("{} {} = {};", CType(f.params[i]), f.vars[i],
                         known ? stack_[at].text : std::string("?")));
      }
      stack_.resize(f.base);
      for (std::size_t i = 0; i < f.vars.size(); ++i) {
        Value v{f.vars[i], f.params[i], {}};
        v.fx.reads_vars.push_back(f.var_ids[i]);
        stack_.push_back(std::move(v));
      }
    } else {
      f.vars = f.result_vars;
      f.var_ids = f.result_ids;
      for (std::size_t i = f.base; i < stack_.size(); ++i) f.param_values.push_back(stack_[i]);
    }
    ClampDirty();
    Emit(fmt::format("L{}: {}{{", f.label, opener));
    frames_.push_back(std::move(f));
  }
  // Assigns the fallthrough values of the current arm to the frame's result variables.
  void FallthroughResults() {
    Frame& f = Top();
    if (f.unreachable) return;
    const std::size_t n = f.results.size();
    if (n > 1) MaterializeTop(n);
    std::vector<Value> values = PopOperands(n);
    for (std::size_t i = 0; i < values.size() && i < f.result_vars.size(); ++i) {
      Effects fx = values[i].fx;
      Effects::AddVar(fx.writes_vars, f.result_ids[i]);
      Statement(fmt::format("{} = {};", f.result_vars[i], values[i].text), fx);
    }
  }
  void Close(const Instruction& inst);
  void Else();
  void Catch(const Instruction& inst);

  bool AddNumeric(std::string_view text);
  void AddMemory(std::string_view prefix, std::string_view op, const wasm::MemArg& m);
  void AddIntrinsic(const Instruction& inst, const IntrinsicSig& sig);
  void AddCall(const Instruction& inst);

  const ModuleInfo& m_;
  const NameOf& name_of_;
  const Dialect dialect_;
  std::vector<ValType> local_types_;
  std::size_t params_ = 0;
  std::vector<Value> stack_;
  std::size_t dirty_begin_ = 0;  // every value below is clean (constants, temporaries)
  std::vector<Frame> frames_;
  std::size_t dead_depth_ = 0;  // blocks opened inside unreachable code
  int next_label_ = 1;
  int next_temp_ = 1;
  std::uint32_t next_var_ = 0;
  std::string out_;
};

void BodyLifter::Else() {
  Frame& f = Top();
  FallthroughResults();
  if (!f.unreachable) f.branched = true;  // the then-arm reaches the end
  stack_.resize(std::min(stack_.size(), f.base));
  for (const Value& v : f.param_values) stack_.push_back(v);
  ClampDirty();
  f.unreachable = false;
  f.has_else = true;
  Emit("} else {", 1);
}

void BodyLifter::Catch(const Instruction& inst) {
  Frame& f = Top();
  FallthroughResults();
  if (!f.unreachable) f.branched = true;
  stack_.resize(std::min(stack_.size(), f.base));
  ClampDirty();
  f.unreachable = false;
  if (inst.opcode == Opcode::kCatchAll) {
    Emit("} catch (...) {", 1);
    return;
  }
  Emit(fmt::format("}} catch (tag{}) {{", inst.index), 1);
  const wasm::FuncType* t =
      inst.index < m_.tag_types.size() ? m_.Type(m_.tag_types[inst.index]) : nullptr;
  if (t == nullptr) return;
  for (std::size_t i = 0; i < t->params.size(); ++i) {
    const std::string temp = NewTemp();
    Emit(fmt::format("{} {} = exception_arg({});", CType(t->params[i]), temp, i));
    Push({temp, t->params[i], {}});
  }
}

void BodyLifter::Close(const Instruction& inst) {
  Frame& f = Top();
  if (f.kind == Frame::kFunction) {
    if (!f.unreachable && !f.results.empty()) {
      std::vector<Value> values = PopOperands(f.results.size());
      Effects fx;
      fx.control = true;
      for (const Value& v : values) fx.Merge(v.fx);
      Statement(ReturnOf(values), fx);
    }
    frames_.pop_back();
    stack_.clear();
    dirty_begin_ = 0;
    return;
  }
  bool reachable_after = f.branched;
  if (f.kind == Frame::kIf && !f.has_else) {
    // An if without else passes its parameters through when the condition is false.
    FallthroughResults();
    if (!f.result_vars.empty()) {
      stack_.resize(std::min(stack_.size(), f.base));
      for (const Value& v : f.param_values) stack_.push_back(v);
      ClampDirty();
      f.unreachable = false;
      Emit("} else {", 1);
      FallthroughResults();
    }
    reachable_after = true;
  } else {
    FallthroughResults();
    reachable_after = reachable_after || !f.unreachable;
  }
  if (f.kind == Frame::kLoop) reachable_after = !f.unreachable;
  Frame closed = std::move(f);
  frames_.pop_back();
  stack_.resize(std::min(stack_.size(), closed.base));
  ClampDirty();
  if (inst.opcode == Opcode::kDelegate) {
    const std::size_t depth = inst.index;
    const Frame* target = depth < frames_.size() ? &frames_[frames_.size() - 1 - depth] : nullptr;
    Emit(target != nullptr ? fmt::format("}} delegate L{};", target->label) : "} delegate;");
    reachable_after = true;
  } else if (C() && closed.kind != Frame::kLoop) {
    Emit(fmt::format("}} L{}_end:;", closed.label));
  } else {
    Emit("}");
  }
  // Nothing writes a result variable after its block ends (a loop around the block
  // discards pending values when it branches back), so reading it is clean.
  for (std::size_t i = 0; i < closed.result_vars.size(); ++i) {
    Push({closed.result_vars[i], closed.results[i], {}});
  }
  if (!reachable_after && !frames_.empty()) MarkUnreachable();
}

bool BodyLifter::AddNumeric(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return false;
  const std::string_view prefix = text.substr(0, dot);
  const std::string_view op = text.substr(dot + 1);
  const std::optional<ValType> type = ScalarOfPrefix(prefix);
  if (!type) return false;
  const bool integer = *type == ValType::kI32 || *type == ValType::kI64;
  auto merged = [](const std::vector<Value>& ops) {
    Effects fx;
    for (const Value& v : ops) fx.Merge(v.fx);
    return fx;
  };
  if (std::optional<std::string_view> sym = InfixOperator(op)) {
    std::vector<Value> ops = PopOperands(2);
    Effects fx = merged(ops);
    if (integer && (op.starts_with("div") || op.starts_with("rem"))) fx.traps = true;
    const ValType result = IsComparison(op) ? ValType::kI32 : *type;
    if (C() && integer && IsCheckedIntegerOp(op)) {
      PushPending({fmt::format("{}({}, {})", IntrinsicName(text), ops[0].text, ops[1].text), result,
                   std::move(fx)});
      return true;
    }
    std::string a = std::move(ops[0].text);
    std::string b = std::move(ops[1].text);
    if (op.ends_with("_u")) {
      const std::string_view cast = CTypeOfPrefix(prefix, true);
      a = fmt::format("({}){}", cast, a);
      b = fmt::format("({}){}", cast, b);
    }
    PushPending({fmt::format("({} {} {})", a, *sym, b), result, std::move(fx)});
    return true;
  }
  if (IsBinaryCall(op)) {
    std::vector<Value> ops = PopOperands(2);
    Effects fx = merged(ops);
    PushPending({fmt::format("{}({}, {})", IntrinsicName(text), ops[0].text, ops[1].text), *type,
                 std::move(fx)});
    return true;
  }
  if (op == "eqz" || op == "neg" || IsUnaryCall(op) || IsConversion(op)) {
    Value a = PopOne();
    std::string out;
    ValType result = *type;
    if (op == "eqz") {
      out = fmt::format("!{}", a.text);
      result = ValType::kI32;
    } else if (op == "neg") {
      out = a.text.starts_with("-") ? fmt::format("-({})", a.text) : fmt::format("-{}", a.text);
    } else if (IsUnaryCall(op)) {
      out = fmt::format("{}({})", IntrinsicName(text), a.text);
    } else {
      const std::string_view to = CTypeOfPrefix(prefix, false);
      if (op.starts_with("trunc_") && !op.starts_with("trunc_sat_")) a.fx.traps = true;
      if (op.starts_with("reinterpret_") || (C() && op.starts_with("trunc_"))) {
        out = fmt::format("{}({})", IntrinsicName(text), a.text);
      } else if (op == "extend_i32_u") {
        out = fmt::format("({})(uint32_t){}", to, a.text);
      } else if (op == "extend8_s" || op == "extend16_s" || op == "extend32_s") {
        const std::string_view narrow =
            op == "extend8_s" ? "int8_t" : (op == "extend16_s" ? "int16_t" : "int32_t");
        out = fmt::format("({})({}){}", to, narrow, a.text);
      } else if (op.starts_with("convert_") && op.ends_with("_u")) {
        out = fmt::format("({})({}){}", to,
                          ConversionSource(op, *type) == ValType::kI64 ? "uint64_t" : "uint32_t",
                          a.text);
      } else if (op.starts_with("trunc_")) {
        out = fmt::format("({}){}", CTypeOfPrefix(prefix, op.ends_with("_u")), a.text);
      } else {
        out = fmt::format("({}){}", to, a.text);
      }
    }
    PushPending({std::move(out), result, std::move(a.fx)});
    return true;
  }
  return false;
}

void BodyLifter::AddMemory(std::string_view prefix, std::string_view op, const wasm::MemArg& m) {
  const ValType type = ScalarOfPrefix(prefix).value_or(ValType::kI32);
  const std::string_view access = AccessType(prefix, op);
  auto address = [&](const std::string& addr) {
    std::string inner = m.offset == 0 ? addr : fmt::format("{} + {}", addr, m.offset);
    return m.memory == 0 ? fmt::format("({})", inner)
                         : fmt::format("(mem{} + {})", m.memory, inner);
  };
  if (op.starts_with("load")) {
    Value a = PopOne();
    a.fx.reads_mem = a.fx.traps = true;
    std::string text;
    if (C()) {
      text = fmt::format("WASM_LOAD({}, {}, {}, {})", access, m.memory, a.text, m.offset);
      if (access != CType(type)) text = fmt::format("(({}){})", CType(type), text);
    } else {
      text = fmt::format("*({}*){}", access, address(a.text));
    }
    PushPending({std::move(text), type, std::move(a.fx)});
    return;
  }
  std::vector<Value> ops = PopOperands(2);
  Effects fx = ops[0].fx;
  fx.Merge(ops[1].fx);
  fx.writes_mem = fx.traps = true;
  if (C()) {
    Statement(fmt::format("WASM_STORE({}, {}, {}, {}, {});", access, m.memory, ops[0].text,
                          m.offset, ops[1].text),
              fx);
  } else {
    Statement(fmt::format("*({}*){} = {};", access, address(ops[0].text), ops[1].text), fx);
  }
}

void BodyLifter::AddIntrinsic(const Instruction& inst, const IntrinsicSig& sig) {
  std::vector<Value> ops = PopOperands(sig.params.size());
  Effects fx = sig.fx;
  for (const Value& v : ops) fx.Merge(v.fx);
  const wasm::ImmKind imm = wasm::GetOpcodeInfo(inst.opcode).imm;
  const bool memarg = imm == wasm::ImmKind::kMemArg || imm == wasm::ImmKind::kMemArgLane;
  std::vector<std::string> args = sig.leading;
  if (memarg && inst.memarg.memory != 0) args.push_back(fmt::format("mem{}", inst.memarg.memory));
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (i == 0 && memarg && inst.memarg.offset != 0) {
      args.push_back(fmt::format("{} + {}", ops[i].text, inst.memarg.offset));
    } else {
      args.push_back(std::move(ops[i].text));
    }
  }
  args.insert(args.end(), sig.trailing.begin(), sig.trailing.end());
  std::string text = IntrinsicName(wasm::GetOpcodeInfo(inst.opcode).text) + "(";
  for (std::size_t i = 0; i < args.size(); ++i) text += (i ? ", " : "") + args[i];
  text += ")";
  if (sig.results.empty()) {
    Statement(text + ";", fx);
  } else if (sig.results.size() == 1) {
    PushPending({std::move(text), sig.results[0], std::move(fx)});
  }
}

void BodyLifter::AddCall(const Instruction& inst) {
  const bool indirect =
      inst.opcode == Opcode::kCallIndirect || inst.opcode == Opcode::kReturnCallIndirect;
  const bool tail =
      inst.opcode == Opcode::kReturnCall || inst.opcode == Opcode::kReturnCallIndirect;
  const wasm::FuncType* type = indirect ? m_.Type(inst.index) : m_.FuncType(inst.index);
  const std::size_t n = type != nullptr ? type->params.size() : 0;
  std::vector<Value> ops = PopOperands(n + (indirect ? 1 : 0));
  Effects fx = CallEffects();
  for (const Value& v : ops) fx.Merge(v.fx);
  std::string text = indirect ? fmt::format("table{}[{}](", inst.index2, ops.back().text)
                              : FuncName(inst.index) + "(";
  for (std::size_t i = 0; i < n; ++i) text += (i ? ", " : "") + ops[i].text;
  text += ")";
  const std::size_t results = type != nullptr ? type->results.size() : 0;
  if (tail) {
    fx.control = true;
    if (results == 0) {
      Statement(text + ";", fx);
      Emit("return;");
    } else {
      Statement(fmt::format("return {};", text), fx);
    }
    MarkUnreachable();
    return;
  }
  if (results == 0) {
    Statement(text + ";", fx);
  } else if (results == 1) {
    PushPending({std::move(text), type->results[0], std::move(fx)});
  } else {
    // Several results: one temporary each, assigned together.
    std::string list;
    std::vector<Value> temps;
    for (ValType t : type->results) {
      const std::string temp = NewTemp();
      Emit(fmt::format("{} {};", CType(t), temp));
      list += (list.empty() ? "" : ", ") + temp;
      temps.push_back({temp, t, {}});
    }
    Statement(fmt::format("({}) = {};", list, text), fx);
    for (Value& v : temps) Push(std::move(v));
  }
}

void BodyLifter::Add(const Instruction& inst) {
  if (frames_.empty()) return;  // after the final end
  const Opcode opcode = inst.opcode;
  const bool opener = opcode == Opcode::kBlock || opcode == Opcode::kLoop ||
                      opcode == Opcode::kIf || opcode == Opcode::kTry ||
                      opcode == Opcode::kTryTable;
  if (Top().unreachable) {
    // Dead code after a branch: skipped up to the end (or else, catch) of its frame.
    if (dead_depth_ > 0) {
      if (opener) ++dead_depth_;
      if (opcode == Opcode::kEnd || opcode == Opcode::kDelegate) --dead_depth_;
      return;
    }
    if (opener) {
      ++dead_depth_;
      return;
    }
    if (opcode != Opcode::kEnd && opcode != Opcode::kElse && opcode != Opcode::kCatch &&
        opcode != Opcode::kCatchAll && opcode != Opcode::kDelegate) {
      return;
    }
  }
  const std::string_view text = wasm::GetOpcodeInfo(opcode).text;
  Effects control;
  control.control = true;
  switch (opcode) {
    case Opcode::kNop:
      return;
    case Opcode::kUnreachable: {
      Effects fx = control;
      fx.traps = true;
      Statement("unreachable();", fx);
      MarkUnreachable();
      return;
    }
    case Opcode::kBlock:
      Barrier();
      Open(Frame::kBlock, inst.block_type, "");
      return;
    case Opcode::kLoop:
      Barrier();
      Open(Frame::kLoop, inst.block_type, C() ? "" : "loop ");
      return;
    case Opcode::kIf: {
      const Value c = PopOne();
      Barrier();
      Open(Frame::kIf, inst.block_type, fmt::format("if ({}) ", c.text));
      return;
    }
    case Opcode::kTry:
      Barrier();
      Open(Frame::kTry, inst.block_type, "try ");
      return;
    case Opcode::kTryTable: {
      Barrier();
      std::string clauses;
      for (const wasm::CatchClause& c : inst.catches) {
        Frame* target = Target(c.label);
        if (target != nullptr && target->kind != Frame::kLoop) target->branched = true;
        const std::string to = target != nullptr ? fmt::format("L{}", target->label) : "?";
        static constexpr std::string_view kKinds[] = {"catch", "catch_ref", "catch_all",
                                                      "catch_all_ref"};
        const std::string_view kind = kKinds[c.kind & 3];
        clauses += clauses.empty() ? "" : ", ";
        clauses += c.kind < 2 ? fmt::format("{} tag{} {}", kind, c.tag, to)
                              : fmt::format("{} {}", kind, to);
      }
      Open(Frame::kTryTable, inst.block_type, fmt::format("try_table ({}) ", clauses));
      return;
    }
    case Opcode::kElse:
      if (frames_.size() > 1 && Top().kind == Frame::kIf) Else();
      return;
    case Opcode::kCatch:
    case Opcode::kCatchAll:
      if (frames_.size() > 1 && Top().kind == Frame::kTry) Catch(inst);
      return;
    case Opcode::kDelegate:
    case Opcode::kEnd:
      Close(inst);
      return;
    case Opcode::kBr: {
      std::vector<Value> values = BranchValues(inst.index, false);
      const Effects fx = BranchEffects(values, inst.index);
      Statement(BranchTo(inst.index, values), fx);
      MarkUnreachable();
      return;
    }
    case Opcode::kBrIf: {
      const Value c = PopOne();
      std::vector<Value> values = BranchValues(inst.index, true);
      Effects fx = BranchEffects(values, inst.index);
      fx.Merge(c.fx);
      const std::string branch = BranchTo(inst.index, values);
      const bool simple = branch.find(';') + 1 == branch.size();
      Statement(simple ? fmt::format("if ({}) {}", c.text, branch)
                       : fmt::format("if ({}) {{ {} }}", c.text, branch),
                fx);
      return;
    }
    case Opcode::kBrTable: {
      const Value index = PopOne();
      const std::size_t n = BranchArity(inst.index);
      MaterializeTop(n);
      std::vector<Value> values = BranchValues(inst.index, false);
      Effects fx = BranchEffects(values, inst.index);
      fx.Merge(index.fx);
      std::string line = fmt::format("switch ({}) {{", index.text);
      for (std::size_t i = 0; i < inst.targets.size(); ++i) {
        fx.Merge(BranchEffects(values, inst.targets[i]));
        line += fmt::format(" case {}: {}", i, BranchTo(inst.targets[i], values));
      }
      line += fmt::format(" default: {} }}", BranchTo(inst.index, values));
      Statement(line, fx);
      MarkUnreachable();
      return;
    }
    case Opcode::kReturn: {
      std::vector<Value> values = PopOperands(frames_.front().results.size());
      Effects fx = control;
      for (const Value& v : values) fx.Merge(v.fx);
      Statement(ReturnOf(values), fx);
      MarkUnreachable();
      return;
    }
    case Opcode::kCall:
    case Opcode::kReturnCall:
    case Opcode::kCallIndirect:
    case Opcode::kReturnCallIndirect:
      AddCall(inst);
      return;
    case Opcode::kThrow: {
      const wasm::FuncType* t =
          inst.index < m_.tag_types.size() ? m_.Type(m_.tag_types[inst.index]) : nullptr;
      std::vector<Value> ops = PopOperands(t != nullptr ? t->params.size() : 0);
      Effects fx = CallEffects();
      fx.control = true;
      std::string line = fmt::format("throw(tag{}", inst.index);
      for (Value& v : ops) {
        fx.Merge(v.fx);
        line += ", " + v.text;
      }
      Statement(line + ");", fx);
      MarkUnreachable();
      return;
    }
    case Opcode::kRethrow: {
      const Frame* target = Target(inst.index);
      Effects fx = CallEffects();
      fx.control = true;
      Statement(target != nullptr ? fmt::format("rethrow(L{});", target->label) : "rethrow();", fx);
      MarkUnreachable();
      return;
    }
    case Opcode::kThrowRef: {
      Value v = PopOne();
      Effects fx = CallEffects();
      fx.control = true;
      fx.Merge(v.fx);
      Statement(fmt::format("throw_ref({});", v.text), fx);
      MarkUnreachable();
      return;
    }
    case Opcode::kDrop: {
      Value v = PopOne();
      if (!v.fx.Inert()) Statement(v.text + ";", v.fx);
      return;
    }
    case Opcode::kSelect:
    case Opcode::kSelectT: {
      // C evaluates one arm of `?:`; wasm evaluates both.
      const std::size_t have = stack_.size() - std::min(stack_.size(), Base());
      for (std::size_t k = 3; k >= 2; --k) {
        if (have >= k && !stack_[stack_.size() - k].fx.Inert()) Materialize(stack_.size() - k);
      }
      std::vector<Value> ops = PopOperands(3);
      Effects fx;
      for (const Value& v : ops) fx.Merge(v.fx);
      PushPending({fmt::format("({} ? {} : {})", ops[2].text, ops[0].text, ops[1].text),
                   ops[0].type, std::move(fx)});
      return;
    }
    case Opcode::kLocalGet: {
      Value v{Local(inst.index), LocalType(inst.index), {}};
      v.fx.reads_vars.push_back(inst.index);
      PushPending(std::move(v));
      return;
    }
    case Opcode::kLocalSet:
    case Opcode::kLocalTee: {
      Value v = PopOne();
      Effects fx = v.fx;
      Effects::AddVar(fx.writes_vars, inst.index);
      Statement(fmt::format("{} = {};", Local(inst.index), v.text), fx);
      if (opcode == Opcode::kLocalTee) {
        Value read{Local(inst.index), LocalType(inst.index), {}};
        read.fx.reads_vars.push_back(inst.index);
        PushPending(std::move(read));
      }
      return;
    }
    case Opcode::kGlobalGet: {
      Value v{fmt::format("g{}", inst.index),
              inst.index < m_.globals.size() ? m_.globals[inst.index] : ValType::kI32,
              {}};
      v.fx.reads_global = true;
      PushPending(std::move(v));
      return;
    }
    case Opcode::kGlobalSet: {
      Value v = PopOne();
      Effects fx = v.fx;
      fx.writes_global = true;
      Statement(fmt::format("g{} = {};", inst.index, v.text), fx);
      return;
    }
    case Opcode::kI32Const: {
      const auto v = static_cast<std::int32_t>(inst.i64);
      Push({v == INT32_MIN ? std::string("INT32_MIN") : fmt::format("{}", v), ValType::kI32, {}});
      return;
    }
    case Opcode::kI64Const:
      Push({inst.i64 == INT64_MIN ? std::string("INT64_MIN") : fmt::format("{}LL", inst.i64),
            ValType::kI64,
            {}});
      return;
    case Opcode::kF32Const:
      Push({FloatLiteral(std::bit_cast<float>(static_cast<std::uint32_t>(inst.bits)), true),
            ValType::kF32,
            {}});
      return;
    case Opcode::kF64Const:
      Push({FloatLiteral(std::bit_cast<double>(inst.bits), false), ValType::kF64, {}});
      return;
    case Opcode::kMemorySize: {
      Value v{inst.index == 0 ? "memory_size()" : fmt::format("memory_size({})", inst.index),
              m_.Address(inst.index),
              {}};
      v.fx.reads_mem = true;
      PushPending(std::move(v));
      return;
    }
    case Opcode::kMemoryGrow: {
      Value a = PopOne();
      Effects fx = a.fx;
      fx.reads_mem = fx.writes_mem = true;
      PushPending({inst.index == 0 ? fmt::format("memory_grow({})", a.text)
                                   : fmt::format("memory_grow({}, {})", inst.index, a.text),
                   m_.Address(inst.index), std::move(fx)});
      return;
    }
    default:
      break;
  }
  const std::size_t dot = text.find('.');
  const std::string_view prefix = dot == std::string_view::npos ? text : text.substr(0, dot);
  const std::string_view op = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  if (ScalarOfPrefix(prefix) && (op.starts_with("load") || op.starts_with("store")) &&
      wasm::GetOpcodeInfo(opcode).imm == wasm::ImmKind::kMemArg) {
    AddMemory(prefix, op, inst.memarg);
    return;
  }
  if (std::optional<IntrinsicSig> sig = GetIntrinsicSig(inst, m_)) {
    AddIntrinsic(inst, *sig);
    return;
  }
  if (AddNumeric(text)) return;
  // Not in any table (cannot happen for a decoded opcode): an intrinsic with no operands,
  // after everything pending, as if it were a call.
  Statement(IntrinsicName(text) + "();", CallEffects());
}

class Lifter final : public wasm::ModuleVisitor {
 public:
  Lifter(const NameOf& name_of, const LiftOptions& options)
      : name_of_(name_of), options_(options) {}

  bool ConcurrentBodies() const override { return true; }
  Status OnType(std::uint32_t /*index*/, const wasm::FuncType& type) override {
    m_.types.push_back(type);
    return {};
  }
  Status OnImport(const wasm::Import& import) override {
    switch (import.kind) {
      case wasm::ExternalKind::kFunction:
        m_.func_types.push_back(import.type_index);
        ++m_.imported_functions;
        break;
      case wasm::ExternalKind::kTable:
        m_.tables.push_back(import.table.elem_type);
        break;
      case wasm::ExternalKind::kMemory:
        m_.memory64.push_back(import.memory.limits.is64);
        break;
      case wasm::ExternalKind::kGlobal:
        m_.globals.push_back(import.global.type);
        break;
      case wasm::ExternalKind::kTag:
        m_.tag_types.push_back(import.type_index);
        break;
    }
    return {};
  }
  Status OnFunction(FuncIndex /*func*/, std::uint32_t type_index) override {
    m_.func_types.push_back(type_index);
    bodies_.emplace_back();
    lifted_.emplace_back();
    return {};
  }
  Status OnTable(std::uint32_t /*index*/, const wasm::TableType& table) override {
    m_.tables.push_back(table.elem_type);
    return {};
  }
  Status OnMemory(std::uint32_t /*index*/, const wasm::MemoryType& memory) override {
    m_.memory64.push_back(memory.limits.is64);
    return {};
  }
  Status OnTag(std::uint32_t /*index*/, std::uint32_t type_index) override {
    m_.tag_types.push_back(type_index);
    return {};
  }
  Status OnGlobal(const wasm::Global& global) override {
    m_.globals.push_back(global.type.type);
    return {};
  }
  Status OnFunctionBody(const wasm::FunctionBody& body) override {
    const std::size_t slot = body.func_index - m_.imported_functions;
    if (body.func_index < m_.imported_functions || slot >= bodies_.size()) {
      return Status::Internal("lifter: body of an unknown function");
    }
    static const wasm::FuncType kNoType;
    const wasm::FuncType* type = m_.FuncType(body.func_index);
    bodies_[slot] = std::make_unique<BodyLifter>(m_, name_of_, options_.dialect,
                                                 type != nullptr ? *type : kNoType, body.locals);
    return {};
  }
  Status OnInstruction(FuncIndex func, const Instruction& inst) override {
    if (BodyLifter* b = At(func)) b->Add(inst);
    return {};
  }
  Status OnFunctionBodyEnd(FuncIndex func) override {
    if (BodyLifter* b = At(func)) {
      lifted_[func - m_.imported_functions] = b->Take();
      bodies_[func - m_.imported_functions].reset();
    }
    return {};
  }

  std::map<std::uint32_t, std::string> Finish() {
    std::map<std::uint32_t, std::string> out;
    for (std::size_t i = 0; i < lifted_.size(); ++i) {
      out.emplace(static_cast<std::uint32_t>(i + m_.imported_functions), std::move(lifted_[i]));
    }
    return out;
  }

 private:
  BodyLifter* At(FuncIndex func) {
    if (func < m_.imported_functions) return nullptr;
    const std::size_t slot = func - m_.imported_functions;
    return slot < bodies_.size() ? bodies_[slot].get() : nullptr;
  }

  const NameOf& name_of_;
  const LiftOptions options_;
  ModuleInfo m_;
  std::vector<std::unique_ptr<BodyLifter>> bodies_;
  std::vector<std::string> lifted_;
};

}  // namespace

Result<std::map<std::uint32_t, std::string>> LiftModule(std::span<const std::uint8_t> bytes,
                                                        const NameOf& name_of,
                                                        const LiftOptions& options) {
  Lifter lifter(name_of, options);
  RETURN_IF_ERROR(wasm::ReadModule(bytes, lifter, {}));
  return lifter.Finish();
}

}  // namespace trove::warden::exporter

#include "warden/export/lifter.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "warden/wasm/module_visitor.h"
#include "warden/wasm/reader.h"

namespace trove::warden::exporter {

namespace {

using wasm::FuncIndex;
using wasm::Instruction;
using wasm::Opcode;

struct Arity {
  std::size_t params = 0;
  std::size_t results = 0;
};

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

// Binary operators written as calls.
bool IsBinaryCall(std::string_view op) {
  return op == "rotl" || op == "rotr" || op == "min" || op == "max" || op == "copysign";
}

bool IsUnaryCall(std::string_view op) {
  return op == "clz" || op == "ctz" || op == "popcnt" || op == "abs" || op == "sqrt" ||
         op == "ceil" || op == "floor" || op == "trunc" || op == "nearest";
}

std::string_view CTypeOfPrefix(std::string_view prefix, bool is_unsigned) {
  if (prefix == "i32") return is_unsigned ? "uint32_t" : "int32_t";
  if (prefix == "i64") return is_unsigned ? "uint64_t" : "int64_t";
  if (prefix == "f32") return "float";
  return "double";
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

// A conversion "i64.extend_i32_u" as a C cast of `a`.
std::optional<std::string> Conversion(std::string_view prefix, std::string_view op,
                                      const std::string& a) {
  const std::string_view to = CTypeOfPrefix(prefix, false);
  if (op == "wrap_i64" || op == "demote_f64" || op == "promote_f32") {
    return fmt::format("({}){}", to, a);
  }
  if (op.starts_with("extend") && op.size() > 6) {
    if (op == "extend_i32_s") return fmt::format("({}){}", to, a);
    if (op == "extend_i32_u") return fmt::format("({})(uint32_t){}", to, a);
    if (op == "extend8_s") return fmt::format("({})(int8_t){}", to, a);
    if (op == "extend16_s") return fmt::format("({})(int16_t){}", to, a);
    if (op == "extend32_s") return fmt::format("({})(int32_t){}", to, a);
  }
  if (op.starts_with("trunc_sat_") || (op.starts_with("trunc_") && op.size() > 6)) {
    const bool is_unsigned = op.ends_with("_u");
    return fmt::format("({}){}", CTypeOfPrefix(prefix, is_unsigned), a);
  }
  if (op.starts_with("convert_")) {
    if (op.ends_with("_u")) {
      return fmt::format("({})({}){}", to,
                         op.find("i64") != std::string_view::npos ? "uint64_t" : "uint32_t", a);
    }
    return fmt::format("({}){}", to, a);
  }
  if (op.starts_with("reinterpret_")) return fmt::format("reinterpret_{}({})", prefix, a);
  return std::nullopt;
}

std::string FloatLiteral(double v, bool is_f32) {
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v < 0 ? "-INFINITY" : "INFINITY";
  std::string s = is_f32 ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return is_f32 ? s + "f" : s;
}

struct Frame {
  enum Kind { kFunction, kBlock, kLoop, kIf } kind;
  int label = 0;
};

// Lifts one body.
class BodyLifter {
 public:
  BodyLifter(const std::vector<Arity>& func_arity, const std::vector<Arity>& type_arity,
             const NameOf& name_of, std::size_t params, std::size_t results)
      : func_arity_(func_arity),
        type_arity_(type_arity),
        name_of_(name_of),
        params_(params),
        results_(results) {
    frames_.push_back({Frame::kFunction, 0});
  }

  void Add(const Instruction& inst);
  std::string Take() { return std::move(out_); }

 private:
  std::string Pop() {
    if (stack_.empty()) return "?";
    std::string e = std::move(stack_.back());
    stack_.pop_back();
    return e;
  }
  void Push(std::string e) { stack_.push_back(std::move(e)); }
  void Emit(std::string_view line) {
    out_.append(2 * frames_.size(), ' ');
    out_.append(line);
    out_.push_back('\n');
  }
  std::string Local(std::uint32_t i) const {
    return i < params_ ? fmt::format("p{}", i) : fmt::format("l{}", i);
  }
  std::string FuncName(std::uint32_t f) const {
    std::string n = name_of_ ? name_of_(f) : std::string();
    return n.empty() ? fmt::format("wasm_func_{}", f) : n;
  }
  std::string Args(std::size_t n) {
    std::vector<std::string> args(n);
    for (std::size_t i = n; i-- > 0;) args[i] = Pop();
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += (i ? ", " : "") + args[i];
    return s;
  }
  std::string Address(const wasm::MemArg& m) {
    const std::string addr = Pop();
    std::string inner = m.offset == 0 ? addr : fmt::format("{} + {}", addr, m.offset);
    return m.memory == 0 ? fmt::format("({})", inner)
                         : fmt::format("(mem{} + {})", m.memory, inner);
  }
  std::string BranchTo(std::uint32_t depth) {
    if (depth >= frames_.size()) return "/* bad label */";
    const Frame& f = frames_[frames_.size() - 1 - depth];
    if (f.kind == Frame::kFunction) return ReturnStatement();
    return fmt::format("{} L{};", f.kind == Frame::kLoop ? "continue" : "break", f.label);
  }
  std::string ReturnStatement() {
    if (results_ == 1) return fmt::format("return {};", Pop());
    return "return;";
  }
  bool AddNumeric(std::string_view text);

  const std::vector<Arity>& func_arity_;
  const std::vector<Arity>& type_arity_;
  const NameOf& name_of_;
  const std::size_t params_;
  const std::size_t results_;
  std::vector<std::string> stack_;
  std::vector<Frame> frames_;
  int next_label_ = 1;
  std::string out_;
};

bool BodyLifter::AddNumeric(std::string_view text) {
  const std::size_t dot = text.find('.');
  if (dot == std::string_view::npos) return false;
  const std::string_view prefix = text.substr(0, dot);
  const std::string_view op = text.substr(dot + 1);
  if (prefix != "i32" && prefix != "i64" && prefix != "f32" && prefix != "f64") return false;
  if (std::optional<std::string_view> sym = InfixOperator(op)) {
    std::string b = Pop();
    std::string a = Pop();
    if (op.ends_with("_u")) {
      const std::string_view cast = CTypeOfPrefix(prefix, true);
      a = fmt::format("({}){}", cast, a);
      b = fmt::format("({}){}", cast, b);
    }
    Push(fmt::format("({} {} {})", a, *sym, b));
    return true;
  }
  if (IsBinaryCall(op)) {
    const std::string b = Pop();
    const std::string a = Pop();
    Push(fmt::format("{}_{}({}, {})", op, prefix, a, b));
    return true;
  }
  if (op == "eqz") {
    Push(fmt::format("!{}", Pop()));
    return true;
  }
  if (op == "neg") {
    Push(fmt::format("-{}", Pop()));
    return true;
  }
  if (IsUnaryCall(op)) {
    Push(fmt::format("{}_{}({})", op, prefix, Pop()));
    return true;
  }
  if (op.starts_with("load") && op.find("atomic") == std::string_view::npos) return false;
  const std::string a = stack_.empty() ? "?" : stack_.back();
  if (std::optional<std::string> c = Conversion(prefix, op, a)) {
    Pop();
    Push(std::move(*c));
    return true;
  }
  return false;
}

void BodyLifter::Add(const Instruction& inst) {
  const std::string_view text = wasm::GetOpcodeInfo(inst.opcode).text;
  switch (inst.opcode) {
    case Opcode::kNop:
      return;
    case Opcode::kUnreachable:
      Emit("unreachable();");
      return;
    case Opcode::kBlock:
    case Opcode::kLoop: {
      const bool loop = inst.opcode == Opcode::kLoop;
      const int label = next_label_++;
      Emit(fmt::format("L{}: {}{{", label, loop ? "loop " : ""));
      frames_.push_back({loop ? Frame::kLoop : Frame::kBlock, label});
      return;
    }
    case Opcode::kIf: {
      const int label = next_label_++;
      Emit(fmt::format("L{}: if ({}) {{", label, Pop()));
      frames_.push_back({Frame::kIf, label});
      return;
    }
    case Opcode::kElse:
      if (frames_.size() > 1) {
        frames_.pop_back();
        Emit("} else {");
        frames_.push_back({Frame::kIf, next_label_ - 1});
      }
      return;
    case Opcode::kEnd:
      if (frames_.size() == 1) {
        if (results_ == 1 && !stack_.empty()) Emit(ReturnStatement());
        frames_.pop_back();
        return;
      }
      frames_.pop_back();
      Emit("}");
      return;
    case Opcode::kBr:
      Emit(BranchTo(inst.index));
      return;
    case Opcode::kBrIf: {
      const std::string c = Pop();
      Emit(fmt::format("if ({}) {}", c, BranchTo(inst.index)));
      return;
    }
    case Opcode::kBrTable: {
      const std::string x = Pop();
      std::string line = fmt::format("switch ({}) {{", x);
      for (std::size_t i = 0; i < inst.targets.size(); ++i) {
        line += fmt::format(" case {}: {}", i, BranchTo(inst.targets[i]));
      }
      line += fmt::format(" default: {} }}", BranchTo(inst.index));
      Emit(line);
      return;
    }
    case Opcode::kReturn:
      Emit(ReturnStatement());
      return;
    case Opcode::kCall:
    case Opcode::kReturnCall: {
      const Arity a = inst.index < func_arity_.size() ? func_arity_[inst.index] : Arity{};
      const std::string call = fmt::format("{}({})", FuncName(inst.index), Args(a.params));
      if (inst.opcode == Opcode::kReturnCall) {
        Emit(fmt::format("return {};", call));
      } else if (a.results == 0) {
        Emit(call + ";");
      } else {
        Push(call);
        for (std::size_t i = 1; i < a.results; ++i) Push("?");
      }
      return;
    }
    case Opcode::kCallIndirect:
    case Opcode::kReturnCallIndirect: {
      const Arity a = inst.index < type_arity_.size() ? type_arity_[inst.index] : Arity{};
      const std::string slot = Pop();
      const std::string call = fmt::format("table{}[{}]({})", inst.index2, slot, Args(a.params));
      if (inst.opcode == Opcode::kReturnCallIndirect) {
        Emit(fmt::format("return {};", call));
      } else if (a.results == 0) {
        Emit(call + ";");
      } else {
        Push(call);
        for (std::size_t i = 1; i < a.results; ++i) Push("?");
      }
      return;
    }
    case Opcode::kDrop:
      Emit(Pop() + ";");
      return;
    case Opcode::kSelect:
    case Opcode::kSelectT: {
      const std::string c = Pop();
      const std::string b = Pop();
      const std::string a = Pop();
      Push(fmt::format("({} ? {} : {})", c, a, b));
      return;
    }
    case Opcode::kLocalGet:
      Push(Local(inst.index));
      return;
    case Opcode::kLocalSet:
      Emit(fmt::format("{} = {};", Local(inst.index), Pop()));
      return;
    case Opcode::kLocalTee:
      Emit(fmt::format("{} = {};", Local(inst.index), Pop()));
      Push(Local(inst.index));
      return;
    case Opcode::kGlobalGet:
      Push(fmt::format("g{}", inst.index));
      return;
    case Opcode::kGlobalSet:
      Emit(fmt::format("g{} = {};", inst.index, Pop()));
      return;
    case Opcode::kI32Const:
      Push(fmt::format("{}", static_cast<std::int32_t>(inst.i64)));
      return;
    case Opcode::kI64Const:
      Push(fmt::format("{}LL", inst.i64));
      return;
    case Opcode::kF32Const:
      Push(FloatLiteral(std::bit_cast<float>(static_cast<std::uint32_t>(inst.bits)), true));
      return;
    case Opcode::kF64Const:
      Push(FloatLiteral(std::bit_cast<double>(inst.bits), false));
      return;
    case Opcode::kMemorySize:
      Push(inst.index == 0 ? "memory_size()" : fmt::format("memory_size({})", inst.index));
      return;
    case Opcode::kMemoryGrow:
      Push(inst.index == 0 ? fmt::format("memory_grow({})", Pop())
                           : fmt::format("memory_grow({}, {})", inst.index, Pop()));
      return;
    default:
      break;
  }
  const std::size_t dot = text.find('.');
  const std::string_view prefix = dot == std::string_view::npos ? text : text.substr(0, dot);
  const std::string_view op = dot == std::string_view::npos ? "" : text.substr(dot + 1);
  const bool scalar = prefix == "i32" || prefix == "i64" || prefix == "f32" || prefix == "f64";
  if (scalar && op.starts_with("load") &&
      wasm::GetOpcodeInfo(inst.opcode).imm == wasm::ImmKind::kMemArg) {
    Push(fmt::format("*({}*){}", AccessType(prefix, op), Address(inst.memarg)));
    return;
  }
  if (scalar && op.starts_with("store") &&
      wasm::GetOpcodeInfo(inst.opcode).imm == wasm::ImmKind::kMemArg) {
    const std::string value = Pop();
    Emit(fmt::format("*({}*){} = {};", AccessType(prefix, op), Address(inst.memarg), value));
    return;
  }
  if (AddNumeric(text)) return;
  // Not modelled: name the instruction; the operand stack is no longer known.
  Emit(fmt::format("/* {} */", text));
  stack_.clear();
}

class Lifter final : public wasm::ModuleVisitor {
 public:
  explicit Lifter(const NameOf& name_of) : name_of_(name_of) {}

  bool ConcurrentBodies() const override { return true; }
  Status OnType(std::uint32_t /*index*/, const wasm::FuncType& type) override {
    type_arity_.push_back({type.params.size(), type.results.size()});
    return {};
  }
  Status OnImport(const wasm::Import& import) override {
    if (import.kind == wasm::ExternalKind::kFunction) {
      func_arity_.push_back(TypeArity(import.type_index));
      ++imported_;
    }
    return {};
  }
  Status OnFunction(FuncIndex /*func*/, std::uint32_t type_index) override {
    func_arity_.push_back(TypeArity(type_index));
    bodies_.emplace_back();
    lifted_.emplace_back();
    return {};
  }
  Status OnFunctionBody(const wasm::FunctionBody& body) override {
    const std::size_t slot = body.func_index - imported_;
    if (body.func_index < imported_ || slot >= bodies_.size()) {
      return Status::Internal("lifter: body of an unknown function");
    }
    const Arity a = func_arity_[body.func_index];
    bodies_[slot] =
        std::make_unique<BodyLifter>(func_arity_, type_arity_, name_of_, a.params, a.results);
    return {};
  }
  Status OnInstruction(FuncIndex func, const Instruction& inst) override {
    if (BodyLifter* b = At(func)) b->Add(inst);
    return {};
  }
  Status OnFunctionBodyEnd(FuncIndex func) override {
    if (BodyLifter* b = At(func)) {
      lifted_[func - imported_] = b->Take();
      bodies_[func - imported_].reset();
    }
    return {};
  }

  std::map<std::uint32_t, std::string> Finish() {
    std::map<std::uint32_t, std::string> out;
    for (std::size_t i = 0; i < lifted_.size(); ++i) {
      out.emplace(static_cast<std::uint32_t>(i + imported_), std::move(lifted_[i]));
    }
    return out;
  }

 private:
  Arity TypeArity(std::uint32_t type_index) const {
    return type_index < type_arity_.size() ? type_arity_[type_index] : Arity{};
  }
  BodyLifter* At(FuncIndex func) {
    if (func < imported_) return nullptr;
    const std::size_t slot = func - imported_;
    return slot < bodies_.size() ? bodies_[slot].get() : nullptr;
  }

  const NameOf& name_of_;
  std::vector<Arity> type_arity_;
  std::vector<Arity> func_arity_;
  std::uint32_t imported_ = 0;
  std::vector<std::unique_ptr<BodyLifter>> bodies_;
  std::vector<std::string> lifted_;
};

}  // namespace

Result<std::map<std::uint32_t, std::string>> LiftModule(std::span<const std::uint8_t> bytes,
                                                        const NameOf& name_of) {
  Lifter lifter(name_of);
  RETURN_IF_ERROR(wasm::ReadModule(bytes, lifter, {}));
  return lifter.Finish();
}

}  // namespace trove::warden::exporter

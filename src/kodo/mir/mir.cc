#include "kodo/mir/mir.h"

#include <fmt/format.h>

#include <utility>

#include "kodo/ast/describe.h"

namespace trove::kodo::mir {

Value Value::Int(std::int64_t v) {
  Value out;
  out.kind = ValueKind::kIntConst;
  out.i = v;
  return out;
}
Value Value::Float(double v) {
  Value out;
  out.kind = ValueKind::kFloatConst;
  out.f = v;
  return out;
}
Value Value::Bool(bool v) {
  Value out;
  out.kind = ValueKind::kBoolConst;
  out.i = v ? 1 : 0;
  return out;
}
Value Value::Str(std::string v) {
  Value out;
  out.kind = ValueKind::kStringConst;
  out.s = std::move(v);
  return out;
}
Value Value::Local(LocalId id) {
  Value out;
  out.kind = ValueKind::kLocal;
  out.local = id;
  return out;
}
Value Value::Func(std::string name) {
  Value out;
  out.kind = ValueKind::kFuncRef;
  out.s = std::move(name);
  return out;
}
Value Value::Bin(ast::BinOp op, Value a, Value b) {
  Value out;
  out.kind = ValueKind::kBinOp;
  out.op = op;
  out.operands.push_back(std::move(a));
  out.operands.push_back(std::move(b));
  return out;
}

int Program::Find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

void Program::Reindex() {
  index_.clear();
  for (std::size_t i = 0; i < functions.size(); ++i) {
    index_.emplace(functions[i].name, static_cast<int>(i));
  }
}

std::size_t Program::UserFunctionCount() const {
  std::size_t n = 0;
  for (const Function& fn : functions) n += fn.injected ? 0 : 1;
  return n;
}

namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string Render(const Value& v);

std::string RenderList(const std::vector<Value>& values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += Render(values[i]);
  }
  return out;
}

// Values printed by the lowering are at most two levels deep (mir.h), so this recursion is
// shallow.
std::string Render(const Value& v) {
  switch (v.kind) {
    case ValueKind::kIntConst:
      return fmt::format("IntConst({})", v.i);
    case ValueKind::kFloatConst:
      return fmt::format("FloatConst({})", v.f);
    case ValueKind::kBoolConst:
      return v.i ? "BoolConst(true)" : "BoolConst(false)";
    case ValueKind::kStringConst:
      return fmt::format("StringConst({})", Quote(v.s));
    case ValueKind::kLocal:
      return fmt::format("Local(_{})", v.local);
    case ValueKind::kBinOp:
      return fmt::format("BinOp({}, {}, {})", ast::BinOpName(v.op), Render(v.operands[0]),
                         Render(v.operands[1]));
    case ValueKind::kNot:
      return fmt::format("Not({})", Render(v.operands[0]));
    case ValueKind::kNeg:
      return fmt::format("Neg({})", Render(v.operands[0]));
    case ValueKind::kStructLit: {
      std::string fields;
      for (std::size_t i = 0; i < v.operands.size(); ++i) {
        if (i > 0) fields += ", ";
        fields += fmt::format("({}, {})", Quote(v.names[i]), Render(v.operands[i]));
      }
      return fmt::format("StructLit {{ name: {}, fields: [{}] }}", Quote(v.s), fields);
    }
    case ValueKind::kFieldGet:
      return fmt::format("FieldGet {{ object: {}, field: {}, struct_name: {} }}",
                         Render(v.operands[0]), Quote(v.s), Quote(v.s2));
    case ValueKind::kEnumVariant:
      return fmt::format(
          "EnumVariant {{ enum_name: {}, variant: {}, discriminant: {}, args: [{}] }}", Quote(v.s),
          Quote(v.s2), v.i, RenderList(v.operands));
    case ValueKind::kEnumDiscriminant:
      return fmt::format("EnumDiscriminant({})", Render(v.operands[0]));
    case ValueKind::kEnumPayload:
      return fmt::format("EnumPayload {{ value: {}, field_index: {} }}", Render(v.operands[0]),
                         v.i);
    case ValueKind::kUnit:
      return "Unit";
    case ValueKind::kFuncRef:
      return fmt::format("FuncRef({})", Quote(v.s));
    case ValueKind::kTupleLit:
      return fmt::format("TupleLit([{}])", RenderList(v.operands));
    case ValueKind::kTupleGet:
      return fmt::format("TupleGet({}, {})", Render(v.operands[0]), v.i);
  }
  return "?";
}

std::string Dest(LocalId id) { return id == kNoLocal ? "None" : fmt::format("Some(_{})", id); }

}  // namespace

std::string PrintFunction(const Function& fn) {
  std::string out = "MirFunction {\n";
  out += fmt::format("    name: {},\n    return_type: {},\n    param_count: {},\n    locals: [\n",
                     Quote(fn.name), fn.return_type, fn.param_count);
  for (std::size_t i = 0; i < fn.locals.size(); ++i) {
    const LocalDecl& l = fn.locals[i];
    out += fmt::format("        Local {{ id: _{}, ty: {}, mutable: {}{} }},\n", i, l.ty,
                       l.mutable_ ? "true" : "false",
                       l.name.empty() ? "" : fmt::format(", name: {}", Quote(l.name)));
  }
  out += "    ],\n    blocks: [\n";
  for (std::size_t b = 0; b < fn.blocks.size(); ++b) {
    const BasicBlock& block = fn.blocks[b];
    out += fmt::format("        bb{}: {{\n", b);
    for (const Inst& inst : block.insts) {
      out += "            ";
      switch (inst.kind) {
        case InstKind::kAssign:
          out += fmt::format("Assign(_{}, {})", inst.dest, Render(inst.value));
          break;
        case InstKind::kCall:
          out += fmt::format("Call {{ dest: {}, callee: {}, args: [{}] }}", Dest(inst.dest),
                             Quote(inst.callee), RenderList(inst.args));
          break;
        case InstKind::kIndirectCall:
          out += fmt::format("IndirectCall {{ dest: {}, callee: {}, args: [{}] }}", Dest(inst.dest),
                             Render(inst.value), RenderList(inst.args));
          break;
        case InstKind::kIncRef:
          out += fmt::format("IncRef(_{})", inst.dest);
          break;
        case InstKind::kDecRef:
          out += fmt::format("DecRef(_{})", inst.dest);
          break;
        case InstKind::kYield:
          out += "Yield";
          break;
      }
      out += ",\n";
    }
    const Terminator& t = block.term;
    out += "            ";
    switch (t.kind) {
      case TermKind::kReturn:
        out += fmt::format("Return({})", Render(t.value));
        break;
      case TermKind::kGoto:
        out += fmt::format("Goto(bb{})", t.target);
        break;
      case TermKind::kBranch:
        out += fmt::format("Branch {{ condition: {}, true_block: bb{}, false_block: bb{} }}",
                           Render(t.value), t.target, t.otherwise);
        break;
      case TermKind::kUnreachable:
        out += "Unreachable";
        break;
    }
    out += "\n        },\n";
  }
  out += "    ],\n    entry: bb0,\n}\n";
  return out;
}

std::string Print(const Program& program) {
  std::string out;
  for (const Function& fn : program.functions) {
    if (fn.injected) continue;
    out += PrintFunction(fn);
  }
  return out;
}

}  // namespace trove::kodo::mir

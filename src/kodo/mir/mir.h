// Kōdo's mid-level IR (docs/kodo.md §7.6): per function a name, a return type, a
// parameter count, typed locals `_0, _1, ...` (parameters first) and basic blocks `bb0, bb1, ...`
// (entry bb0), each a list of instructions and one terminator. Values are small trees whose
// leaves are constants and locals; the lowering (lower.h) gives every sub-expression a local of
// its own, so a value is at most two levels deep and nothing walks a deep tree.
//
// Differences from upstream's MIR, kept deliberately (docs/decisions/0062-kodo-mir-interp.md):
// locals carry the type's display string (the interpreter is dynamically typed), a value may
// also be a tuple literal or a tuple field, and a method call whose receiver type the lowering
// cannot see is a Call to `__method.NAME`, which the interpreter resolves from the receiver's
// runtime type.
//
// Thread safety: plain values; a const Program may be read from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "kodo/ast/ast.h"

namespace trove::kodo::mir {

using LocalId = std::uint32_t;
using BlockId = std::uint32_t;
inline constexpr LocalId kNoLocal = 0xffffffffu;

enum class ValueKind : std::uint8_t {
  kIntConst,          // i
  kFloatConst,        // f
  kBoolConst,         // i (0 or 1)
  kStringConst,       // s
  kLocal,             // local
  kBinOp,             // op; operands = {a, b}
  kNot,               // operands = {a}
  kNeg,               // operands = {a}
  kStructLit,         // s = struct name; operands = field values; names = field names
  kFieldGet,          // operands = {object}; s = field; s2 = struct name (may be empty)
  kEnumVariant,       // s = enum name; s2 = variant; i = discriminant; operands = payload
  kEnumDiscriminant,  // operands = {v}
  kEnumPayload,       // operands = {v}; i = field index
  kUnit,
  kFuncRef,   // s = function name
  kTupleLit,  // operands = elements
  kTupleGet,  // operands = {tuple}; i = index
};

struct Value {
  ValueKind kind = ValueKind::kUnit;
  ast::BinOp op = ast::BinOp::kAdd;
  LocalId local = kNoLocal;
  std::int64_t i = 0;
  double f = 0;
  std::string s;
  std::string s2;
  std::vector<std::string> names;
  std::vector<Value> operands;

  static Value Int(std::int64_t v);
  static Value Float(double v);
  static Value Bool(bool v);
  static Value Str(std::string v);
  static Value Local(LocalId id);
  static Value Unit() { return Value{}; }
  static Value Func(std::string name);
  static Value Bin(ast::BinOp op, Value a, Value b);
};

enum class InstKind : std::uint8_t {
  kAssign,        // dest = value
  kCall,          // dest = callee(args); dest may be kNoLocal
  kIndirectCall,  // dest = value(args) (a closure handle or a function value)
  kIncRef,        // dest
  kDecRef,        // dest
  kYield,
};

struct Inst {
  InstKind kind = InstKind::kAssign;
  LocalId dest = kNoLocal;
  std::string callee;  // kCall
  Value value;         // kAssign: the value; kIndirectCall: the callee
  std::vector<Value> args;
};

enum class TermKind : std::uint8_t { kReturn, kGoto, kBranch, kUnreachable };

struct Terminator {
  TermKind kind = TermKind::kUnreachable;
  Value value;            // kReturn: the value; kBranch: the condition
  BlockId target = 0;     // kGoto; kBranch: the true block
  BlockId otherwise = 0;  // kBranch: the false block
};

struct BasicBlock {
  std::vector<Inst> insts;
  Terminator term;
};

struct LocalDecl {
  std::string ty;    // the type's display, `?` when the lowering does not know it
  std::string name;  // the source name, empty for a temporary
  bool mutable_ = false;
};

struct Function {
  std::string name;
  std::string return_type;
  std::uint32_t param_count = 0;
  std::vector<LocalDecl> locals;
  std::vector<BasicBlock> blocks;
  bool injected = false;  // a builtin method written in Kōdo (docs/kodo.md §7.6)
  // An `async fn`: a call starts a task and gives a future, which `kodo_await` waits for
  // (docs/kodo.md §7.6, docs/decisions/0067).
  bool is_async = false;
  // An actor's handler (`Actor_handler`): a call queues a message, run by the scheduler.
  bool actor_handler = false;
};

struct StructLayout {
  std::string name;
  std::vector<std::string> fields;
};

struct EnumLayout {
  std::string name;
  std::vector<std::string> variants;  // discriminant = index
};

struct Program {
  std::string module;
  std::vector<Function> functions;
  std::vector<StructLayout> structs;
  std::vector<EnumLayout> enums;

  // Returns the index of the function named `name`, or -1.
  int Find(const std::string& name) const;
  // Rebuilds the name index (after functions were added or renamed).
  void Reindex();
  // Returns the number of functions that are not injected builtins.
  std::size_t UserFunctionCount() const;

 private:
  std::unordered_map<std::string, int> index_;
};

// Prints `program` in the shape of upstream's pretty debug output (`kodoc mir`), one function
// after another.
std::string Print(const Program& program);
std::string PrintFunction(const Function& fn);

}  // namespace trove::kodo::mir

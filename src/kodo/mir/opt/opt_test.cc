#include "kodo/mir/opt/opt.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "kodo/driver/front.h"
#include "kodo/interp/interp.h"
#include "kodo/mir/lower.h"

namespace trove::kodo::mir::opt {
namespace {

Program LowerSource(const std::string& text) {
  Result<driver::Compiled> c = driver::CompileSource(text, "t.ko");
  EXPECT_TRUE(c.ok());
  EXPECT_TRUE(c->ok()) << (c->diagnostics.empty() ? "" : c->diagnostics[0].message);
  Result<Program> p = Lower(*c->module);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(p).value();
}

Program LowerText(const std::string& body) {
  return LowerSource("module t {\n meta { purpose: \"t\" }\n" + body + "\n}\n");
}

const Function& Fn(const Program& p, const std::string& name) {
  const int idx = p.Find(name);
  EXPECT_GE(idx, 0) << name;
  return p.functions[static_cast<std::size_t>(idx < 0 ? 0 : idx)];
}

std::size_t CountInsts(const Function& fn, const std::function<bool(const Inst&)>& pred) {
  std::size_t n = 0;
  for (const BasicBlock& b : fn.blocks) {
    for (const Inst& i : b.insts) n += pred(i) ? 1 : 0;
  }
  return n;
}

// Whether some value of `fn` is an operator whose operands are all constants.
bool HasFoldableOperator(const Function& fn) {
  auto konst = [](const Value& v) {
    return v.kind == ValueKind::kIntConst || v.kind == ValueKind::kBoolConst ||
           v.kind == ValueKind::kFloatConst;
  };
  auto check = [&](const Value& v) {
    return v.kind == ValueKind::kBinOp && v.operands.size() == 2 && konst(v.operands[0]) &&
           konst(v.operands[1]) && v.op != ast::BinOp::kDiv && v.op != ast::BinOp::kMod;
  };
  for (const BasicBlock& b : fn.blocks) {
    for (const Inst& i : b.insts) {
      if (check(i.value)) return true;
      for (const Value& a : i.args) {
        if (check(a)) return true;
      }
    }
  }
  return false;
}

constexpr const char* kSmall =
    "fn sq(x: Int) -> Int { return x * x }\n"
    "fn main() {\n"
    "  let a = 2 + 3\n"
    "  let b = a\n"
    "  let unused = 40 + 2\n"
    "  let c = sq(b)\n"
    "  print_int(c)\n"
    "}";

TEST(MirOpt, InliningReplacesTheCallOfASmallFunction) {
  Program p = LowerText(kSmall);
  auto calls_sq = [](const Inst& i) { return i.kind == InstKind::kCall && i.callee == "sq"; };
  ASSERT_EQ(CountInsts(Fn(p, "main"), calls_sq), 1u);
  EXPECT_EQ(InlineSmallFunctions(p), 1u);
  EXPECT_EQ(CountInsts(Fn(p, "main"), calls_sq), 0u);
  EXPECT_GE(p.Find("sq"), 0);  // the callee stays (it may be called elsewhere or as a value)
  EXPECT_EQ(interp::Run(p).out, "25\n");
}

TEST(MirOpt, RecursiveFunctionsAreNotInlined) {
  Program p = LowerText("fn f(n: Int) -> Int { return f(n) }\nfn main() { print_int(1) }");
  EXPECT_EQ(InlineSmallFunctions(p), 0u);
}

TEST(MirOpt, ConstantFoldingFoldsOperatorsOverConstants) {
  Program p = LowerText(kSmall);
  ASSERT_TRUE(HasFoldableOperator(Fn(p, "main")));
  EXPECT_GT(FoldConstants(p), 0u);
  EXPECT_FALSE(HasFoldableOperator(Fn(p, "main")));
  EXPECT_EQ(interp::Run(p).out, "25\n");
}

// Folding wraps as the interpreter does and leaves every operation that traps in place.
TEST(MirOpt, ConstantFoldingKeepsTrapsAndWraps) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  Program p;
  Function fn;
  fn.name = "main";
  fn.locals.assign(5, LocalDecl{"Int", "", false});
  BasicBlock b;
  auto assign = [&b](LocalId d, Value v) {
    Inst i;
    i.kind = InstKind::kAssign;
    i.dest = d;
    i.value = std::move(v);
    b.insts.push_back(std::move(i));
  };
  assign(0, Value::Bin(ast::BinOp::kAdd, Value::Int(kMax), Value::Int(1)));
  assign(1, Value::Bin(ast::BinOp::kDiv, Value::Int(10), Value::Int(0)));
  assign(2, Value::Bin(ast::BinOp::kDiv, Value::Int(kMin), Value::Int(-1)));
  assign(3, Value::Bin(ast::BinOp::kMod, Value::Int(-7), Value::Int(2)));
  assign(4, Value::Bin(ast::BinOp::kAdd, Value::Bool(true), Value::Bool(false)));
  b.term.kind = TermKind::kReturn;
  fn.blocks.push_back(std::move(b));
  p.functions.push_back(std::move(fn));
  p.Reindex();
  EXPECT_EQ(FoldConstants(p), 2u);
  const auto& insts = p.functions[0].blocks[0].insts;
  EXPECT_EQ(insts[0].value.kind, ValueKind::kIntConst);
  EXPECT_EQ(insts[0].value.i, kMin);                  // wrapped
  EXPECT_EQ(insts[1].value.kind, ValueKind::kBinOp);  // zero divisor: traps at run time
  EXPECT_EQ(insts[2].value.kind, ValueKind::kBinOp);  // MIN / -1: traps at run time
  EXPECT_EQ(insts[3].value.i, -1);                    // truncating remainder
  EXPECT_EQ(insts[4].value.kind, ValueKind::kBinOp);  // Bool + Bool: a runtime error
}

TEST(MirOpt, ABranchOnAConstantBecomesAGoto) {
  Program p = LowerText("fn main() {\n if 1 < 2 { println(\"yes\") } else { println(\"no\") }\n}");
  auto branches = [&p] {
    std::size_t n = 0;
    for (const BasicBlock& b : Fn(p, "main").blocks) n += b.term.kind == TermKind::kBranch;
    return n;
  };
  const std::size_t before = branches();
  ASSERT_GT(before, 0u);
  for (int round = 0; round < 2; ++round) {  // the condition is a local holding `1 < 2`
    PropagateCopies(p);
    FoldConstants(p);
  }
  EXPECT_LT(branches(), before);
  EXPECT_EQ(interp::Run(p).out, "yes\n");
}

TEST(MirOpt, CopyPropagationReplacesUsesOfCopies) {
  Program p = LowerText(kSmall);
  const std::string before = PrintFunction(Fn(p, "main"));
  EXPECT_GT(PropagateCopies(p), 0u);
  EXPECT_NE(PrintFunction(Fn(p, "main")), before);
  EXPECT_EQ(interp::Run(p).out, "25\n");
}

TEST(MirOpt, DeadAssignmentsAreRemoved) {
  Program p = LowerText(kSmall);
  auto assigns = [](const Inst& i) { return i.kind == InstKind::kAssign; };
  const std::size_t before = CountInsts(Fn(p, "main"), assigns);
  FoldConstants(p);  // `40 + 2` becomes a constant, which nothing reads
  EXPECT_GT(EliminateDeadAssignments(p), 0u);
  EXPECT_LT(CountInsts(Fn(p, "main"), assigns), before);
  EXPECT_EQ(interp::Run(p).out, "25\n");
}

TEST(MirOpt, DeadAssignmentsThatMayTrapStay) {
  Program p = LowerText("fn main() {\n let z = 0\n let q = 10 / z\n println(\"after\")\n}");
  Optimize(p);
  interp::RunResult r = interp::Run(p);
  EXPECT_EQ(r.exit_code, interp::kExitDivide);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("attempt to divide by zero"), std::string::npos);
}

TEST(MirOpt, RefCountPairsAreRemoved) {
  // The lowering emits no IncRef/DecRef (the interpreter counts references itself), so the
  // program is built by hand.
  Program p;
  Function fn;
  fn.name = "main";
  fn.locals.assign(2, LocalDecl{"List<Int>", "", false});
  BasicBlock b;
  auto rc = [&b](InstKind k, LocalId x) {
    Inst i;
    i.kind = k;
    i.dest = x;
    b.insts.push_back(std::move(i));
  };
  rc(InstKind::kIncRef, 0);
  rc(InstKind::kIncRef, 1);
  rc(InstKind::kDecRef, 0);  // pairs with the first: nothing between reads _0
  Inst use;
  use.kind = InstKind::kAssign;
  use.dest = 0;
  use.value = Value::Local(1);
  b.insts.push_back(std::move(use));
  rc(InstKind::kDecRef, 1);  // not a pair: _1 is read in between
  b.term.kind = TermKind::kReturn;
  fn.blocks.push_back(std::move(b));
  p.functions.push_back(std::move(fn));
  p.Reindex();
  EXPECT_EQ(EliminateRefCountPairs(p), 1u);
  const auto& insts = p.functions[0].blocks[0].insts;
  ASSERT_EQ(insts.size(), 3u);
  EXPECT_EQ(insts[0].kind, InstKind::kIncRef);
  EXPECT_EQ(insts[0].dest, 1u);
}

TEST(MirOpt, LevelZeroChangesNothing) {
  Program p = LowerText(kSmall);
  const std::string before = Print(p);
  Stats s = Optimize(p, 0);
  EXPECT_EQ(s.inlined + s.folded + s.propagated + s.dead_removed, 0u);
  EXPECT_EQ(Print(p), before);
  Optimize(p);
  EXPECT_NE(Print(p), before);
}

// Every program of testdata/kodo/run (NAME.ko with NAME.stdout) prints the same stdout and
// stderr and exits the same way with and without each pass, and with all of them.
TEST(MirOptCorpus, EveryPassPreservesOutput) {
  const std::filesystem::path dir = std::filesystem::path(TROVE_KODO_TESTDATA) / "run";
  const std::vector<std::pair<std::string, std::function<void(Program&)>>> passes = {
      {"inline", [](Program& p) { InlineSmallFunctions(p); }},
      {"fold", [](Program& p) { FoldConstants(p); }},
      {"copies", [](Program& p) { PropagateCopies(p); }},
      {"dead", [](Program& p) { EliminateDeadAssignments(p); }},
      {"refcount", [](Program& p) { EliminateRefCountPairs(p); }},
      {"all", [](Program& p) { Optimize(p); }},
  };
  int programs = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".ko") continue;
    std::filesystem::path expected = entry.path();
    expected.replace_extension(".stdout");
    if (!std::filesystem::exists(expected)) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    Result<driver::Compiled> c = driver::CompileSource(text.str(), entry.path().string());
    ASSERT_TRUE(c.ok() && c->ok()) << entry.path();
    Result<Program> lowered = Lower(*c->module);
    ASSERT_TRUE(lowered.ok()) << entry.path() << ": " << lowered.status().ToString();
    const interp::RunResult base = interp::Run(*lowered);
    bool changed_by_all = false;
    for (const auto& [name, pass] : passes) {
      Program p = *lowered;
      pass(p);
      if (name == "all") changed_by_all = Print(p) != Print(*lowered);
      const interp::RunResult r = interp::Run(p);
      EXPECT_EQ(r.out, base.out) << entry.path() << " pass " << name;
      EXPECT_EQ(r.err, base.err) << entry.path() << " pass " << name;
      EXPECT_EQ(r.exit_code, base.exit_code) << entry.path() << " pass " << name;
    }
    EXPECT_TRUE(changed_by_all) << entry.path() << ": the passes changed nothing";
    ++programs;
  }
  EXPECT_GE(programs, 4);
}

}  // namespace
}  // namespace trove::kodo::mir::opt

#include "warden/export/lifter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::exporter {
namespace {

using wasm::testing::Bytes;
using wasm::testing::Cat;
using wasm::testing::Module;
using wasm::testing::Section;
using wasm::testing::Sized;
using wasm::testing::U;

// Types: 0 = (i32, i32) -> i32, 1 = () -> (). Function 0 has type 0, function 1 type 1,
// function 2 type 0, each with the given body (locals included).
Bytes ThreeFunctions(const Bytes& f0, const Bytes& f1, const Bytes& f2) {
  const Bytes types = Cat({U(2), {0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f}, {0x60, 0x00, 0x00}});
  const Bytes functions = Cat({U(3), U(0), U(1), U(0)});
  const Bytes memory = {0x01, 0x00, 0x01};
  const Bytes code = Cat({U(3), Sized(f0), Sized(f1), Sized(f2)});
  return Module({Section(1, types), Section(3, functions), Section(5, memory), Section(10, code)});
}

std::map<std::uint32_t, std::string> Lift(const Bytes& module) {
  Result<std::map<std::uint32_t, std::string>> r =
      LiftModule(module, [](std::uint32_t f) { return f == 1 ? std::string("tick") : ""; });
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::map<std::uint32_t, std::string>{};
}

TEST(LifterTest, FoldsExpressionsAndMemory) {
  // (p0 + p1) * load(4 + 8)
  const Bytes f0 = {0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, 0x41, 0x04, 0x28, 0x02, 0x08, 0x6c, 0x0b};
  // store8(p0, 255); call 1; drop (call 2 (1, p1)); i32.const 0 (result)
  const Bytes f2 = {0x01, 0x01, 0x7f,                                // one local (index 2)
                    0x20, 0x00, 0x41, 0xff, 0x01, 0x3a, 0x00, 0x00,  // i32.store8
                    0x10, 0x01,                                      // call tick
                    0x41, 0x01, 0x20, 0x01, 0x10, 0x02, 0x1a,        // drop(call 2(1, p1))
                    0x41, 0x00, 0x21, 0x02,                          // l2 = 0
                    0x20, 0x02, 0x0b};
  const auto out = Lift(ThreeFunctions(f0, {0x00, 0x0b}, f2));
  EXPECT_EQ(out.at(0), "  return ((p0 + p1) * *(int32_t*)(4 + 8));\n");
  EXPECT_EQ(out.at(1), "");
  EXPECT_EQ(out.at(2),
            "  int32_t l2 = 0;\n"
            "  *(uint8_t*)(p0) = 255;\n"
            "  tick();\n"
            "  wasm_func_2(1, p1);\n"
            "  l2 = 0;\n"
            "  return l2;\n");
}

TEST(LifterTest, StructuredControlFlow) {
  // loop { if (p0 == 0) break outer; p0 = p0 - 1; continue } inside a block; return p1
  const Bytes f0 = {0x00, 0x02, 0x40,                          // block L1
                    0x03, 0x40,                                // loop L2
                    0x20, 0x00, 0x45, 0x0d, 0x01,              // br_if 1 (p0 == 0) -> break L1
                    0x20, 0x00, 0x41, 0x01, 0x6b, 0x21, 0x00,  // p0 = p0 - 1
                    0x0c, 0x00,                                // br 0 -> continue L2
                    0x0b, 0x0b,                                // end loop, end block
                    0x20, 0x01, 0x0b};
  const auto out = Lift(ThreeFunctions(f0, {0x00, 0x0b}, {0x00, 0x41, 0x00, 0x0b}));
  EXPECT_EQ(out.at(0),
            "  L1: {\n"
            "    L2: loop {\n"
            "      if (!p0) break L1;\n"
            "      p0 = (p0 - 1);\n"
            "      continue L2;\n"
            "    }\n"
            "  }\n"
            "  return p1;\n");
}

TEST(LifterTest, UnmodelledInstructionsBecomeIntrinsicsWithTheirOperands) {
  // memory.fill(0, 0, 16) is bulk memory: an intrinsic call that keeps its operands.
  const Bytes f1 = {0x00, 0x41, 0x00, 0x41, 0x00, 0x41, 0x10, 0xfc, 0x0b, 0x00, 0x0b};
  // i32x4.splat(p0) then i32x4.extract_lane 2, returned.
  const Bytes f2 = {0x00, 0x20, 0x00, 0xfd, 0x11, 0xfd, 0x1b, 0x02, 0x0b};
  const auto out = Lift(ThreeFunctions({0x00, 0x41, 0x00, 0x0b}, f1, f2));
  EXPECT_EQ(out.at(1), "  memory_fill(0, 0, 16);\n");
  EXPECT_EQ(out.at(2), "  return i32x4_extract_lane(i32x4_splat(p0), 2);\n");
}

// Reproducer (issue 17, item 5): a pending read of a local was folded past a write of it,
// so `local.get 0; i32.const 1; local.set 0` returned the new value.
TEST(LifterTest, PendingLocalReadIsKeptBeforeTheLocalIsWritten) {
  const Bytes f0 = {0x00, 0x20, 0x00, 0x41, 0x01, 0x21, 0x00, 0x0b};
  const auto out = Lift(ThreeFunctions(f0, {0x00, 0x0b}, {0x00, 0x41, 0x00, 0x0b}));
  EXPECT_EQ(out.at(0),
            "  int32_t t1 = p0;\n"
            "  p0 = 1;\n"
            "  return t1;\n");
}

// Reproducer: a call whose result was used after a later store moved after the store.
TEST(LifterTest, CallStaysBeforeALaterStore) {
  const Bytes f0 = {0x00, 0x41, 0x01, 0x20, 0x01, 0x10, 0x02,  // wasm_func_2(1, p1)
                    0x41, 0x00, 0x41, 0x05, 0x36, 0x02, 0x00,  // *(int32_t*)(0) = 5
                    0x0b};
  const auto out = Lift(ThreeFunctions(f0, {0x00, 0x0b}, {0x00, 0x41, 0x00, 0x0b}));
  EXPECT_EQ(out.at(0),
            "  int32_t t1 = wasm_func_2(1, p1);\n"
            "  *(int32_t*)(0) = 5;\n"
            "  return t1;\n");
}

// Reproducer: an instruction the lifter did not model cleared the pending values, so the
// calls computing memory.copy's operands vanished.
TEST(LifterTest, CallsFeedingAnIntrinsicKeepTheirOrder) {
  const Bytes f0 = {0x00, 0x41, 0x01, 0x20, 0x01, 0x10, 0x02,  // wasm_func_2(1, p1)
                    0x41, 0x02, 0x20, 0x00, 0x10, 0x02,        // wasm_func_2(2, p0)
                    0x41, 0x10,                                // 16
                    0xfc, 0x0a, 0x00, 0x00,                    // memory.copy
                    0x41, 0x00, 0x0b};
  const auto out = Lift(ThreeFunctions(f0, {0x00, 0x0b}, {0x00, 0x41, 0x00, 0x0b}));
  EXPECT_EQ(out.at(0),
            "  int32_t t1 = wasm_func_2(1, p1);\n"
            "  memory_copy(t1, wasm_func_2(2, p0), 16);\n"
            "  return 0;\n");
}

TEST(LifterTest, LoadIsKeptBeforeAStoreAndGlobalBeforeACall) {
  // a = load(p0); store(p0, 7); b = g0 (none: no globals, so use a second load); tick();
  // return a + load(p0)
  const Bytes f0 = {0x00, 0x20, 0x00, 0x28, 0x02, 0x00,        // load(p0)
                    0x20, 0x00, 0x41, 0x07, 0x36, 0x02, 0x00,  // store(p0, 7)
                    0x20, 0x00, 0x28, 0x02, 0x00,              // load(p0)
                    0x10, 0x01,                                // tick()
                    0x6a, 0x0b};
  const auto out = Lift(ThreeFunctions(f0, {0x00, 0x0b}, {0x00, 0x41, 0x00, 0x0b}));
  EXPECT_EQ(out.at(0),
            "  int32_t t1 = *(int32_t*)(p0);\n"
            "  *(int32_t*)(p0) = 7;\n"
            "  int32_t t2 = *(int32_t*)(p0);\n"
            "  tick();\n"
            "  return (t1 + t2);\n");
}

TEST(LifterTest, OperandsWithEffectsAreEvaluatedInOrder) {
  // wasm_func_2(1, 2) - wasm_func_2(3, 4): C leaves the order of `-`'s operands open.
  const Bytes f0 = {0x00, 0x41, 0x01, 0x41, 0x02, 0x10, 0x02, 0x41,
                    0x03, 0x41, 0x04, 0x10, 0x02, 0x6b, 0x0b};
  const auto out = Lift(ThreeFunctions(f0, {0x00, 0x0b}, {0x00, 0x41, 0x00, 0x0b}));
  EXPECT_EQ(out.at(0),
            "  int32_t t1 = wasm_func_2(1, 2);\n"
            "  return (t1 - wasm_func_2(3, 4));\n");
}

TEST(LifterTest, BlockResultsAndDeadCode) {
  // block (result i32) 7 (br_if 0 p0) drop; br 0 with 9; dead: i32.const 1 drop; end
  const Bytes f0 = {0x00, 0x02, 0x7f,        // block (result i32) L1
                    0x41, 0x07, 0x20, 0x00,  // 7, p0
                    0x0d, 0x00, 0x1a,        // br_if 0; drop
                    0x41, 0x09, 0x0c, 0x00,  // 9; br 0
                    0x41, 0x01, 0x1a,        // dead code
                    0x0b, 0x0b};
  const auto out = Lift(ThreeFunctions(f0, {0x00, 0x0b}, {0x00, 0x41, 0x00, 0x0b}));
  EXPECT_EQ(out.at(0),
            "  int32_t r1;\n"
            "  L1: {\n"
            "    if (p0) { r1 = 7; break L1; }\n"
            "    r1 = 9; break L1;\n"
            "  }\n"
            "  return r1;\n");
}

TEST(LifterTest, CDialectUsesGotosAndHelpers) {
  // loop { p0 = p0 / p1 (div_s); br_if 0 (p0) }; return p0 << 1
  const Bytes f0 = {0x00, 0x03, 0x40,                          // loop L1
                    0x20, 0x00, 0x20, 0x01, 0x6d, 0x21, 0x00,  // p0 = p0 / p1
                    0x20, 0x00, 0x0d, 0x00,                    // br_if 0 (p0)
                    0x0b,                                      // end
                    0x20, 0x00, 0x41, 0x01, 0x74, 0x0b};
  Result<std::map<std::uint32_t, std::string>> r =
      LiftModule(ThreeFunctions(f0, {0x00, 0x0b}, {0x00, 0x41, 0x00, 0x0b}), nullptr,
                 LiftOptions{.dialect = Dialect::kC});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->at(0),
            "  L1: {\n"
            "    p0 = i32_div_s(p0, p1);\n"
            "    if (p0) goto L1;\n"
            "  }\n"
            "  return i32_shl(p0, 1);\n");
}

TEST(LifterTest, MalformedModuleIsAnError) {
  Bytes m = ThreeFunctions({0x00, 0x0b}, {0x00, 0x0b}, {0x00, 0x0b});
  m.resize(m.size() - 2);
  EXPECT_FALSE(LiftModule(m, nullptr).ok());
}

}  // namespace
}  // namespace trove::warden::exporter

// Coverage of instructions.def: every opcode in the table decodes from a byte sequence built
// for its immediate kind, and a few instructions' immediates are checked in detail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "warden/wasm/instruction.h"
#include "warden/wasm/reader.h"
#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::wasm {
namespace {

using testing::Bytes;
using testing::Cat;
using ::testing::HasSubstr;
using testing::OneFunctionModule;
using testing::RecordingVisitor;
using testing::U;

Bytes ImmediatesFor(ImmKind kind) {
  switch (kind) {
    case ImmKind::kNone:
      return {};
    case ImmKind::kBlockType:
      return {0x40};
    case ImmKind::kLabel:
    case ImmKind::kFunc:
    case ImmKind::kLocal:
    case ImmKind::kGlobal:
    case ImmKind::kTable:
    case ImmKind::kMemory:
    case ImmKind::kData:
    case ImmKind::kElem:
    case ImmKind::kTag:
    case ImmKind::kZeroByte:
      return {0x00};
    case ImmKind::kCallIndirect:
    case ImmKind::kTableCopy:
    case ImmKind::kTableInit:
    case ImmKind::kMemInit:
    case ImmKind::kMemCopy:
      return {0x00, 0x00};
    case ImmKind::kBrTable:
      return {0x01, 0x00, 0x00};
    case ImmKind::kMemArg:
      return {0x02, 0x00};
    case ImmKind::kMemArgLane:
      return {0x00, 0x00, 0x01};
    case ImmKind::kLane:
      return {0x01};
    case ImmKind::kI32:
    case ImmKind::kI64:
      return {0x7f};
    case ImmKind::kF32:
      return Bytes(4, 0);
    case ImmKind::kF64:
      return Bytes(8, 0);
    case ImmKind::kSelectT:
      return {0x01, 0x7f};
    case ImmKind::kHeapType:
      return {0x70};
    case ImmKind::kV128:
    case ImmKind::kShuffle:
      return Bytes(16, 0);
    case ImmKind::kTryTable:
      return {0x40, 0x00};
  }
  return {};
}

Bytes OpcodeBytes(const OpcodeInfo& info) {
  if (info.prefix == 0) return {static_cast<std::uint8_t>(info.code)};
  return Cat({{info.prefix}, U(info.code)});
}

TEST(InstructionsTest, EveryOpcodeInTheTableDecodes) {
  std::set<std::pair<int, std::uint32_t>> seen;
  for (const OpcodeInfo& info : kOpcodeTable) {
    SCOPED_TRACE(std::string(info.text));
    EXPECT_TRUE(seen.insert({info.prefix, info.code}).second) << "duplicate opcode";
    EXPECT_EQ(GetOpcodeInfo(info.opcode).text, info.text);
    EXPECT_EQ(LookupOpcode(info.prefix, info.code), info.opcode);
    const bool opens = info.imm == ImmKind::kBlockType || info.imm == ImmKind::kTryTable;
    Bytes code;
    if (info.opcode == Opcode::kDelegate) {
      code = Cat({{0x06, 0x40}, OpcodeBytes(info), ImmediatesFor(info.imm), {0x0b}});
    } else {
      code = Cat({OpcodeBytes(info), ImmediatesFor(info.imm), opens ? Bytes{0x0b} : Bytes{},
                  info.opcode == Opcode::kEnd ? Bytes{} : Bytes{0x0b}});
    }
    Bytes module = OneFunctionModule(Cat({{0x00}, code}));
    RecordingVisitor v;
    Status s = ReadModule(module, v);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const std::size_t index = info.opcode == Opcode::kDelegate ? 1 : 0;
    ASSERT_GT(v.instructions.size(), index);
    EXPECT_EQ(v.instructions[index].opcode, info.opcode);
  }
  EXPECT_GT(seen.size(), 500u);
}

TEST(InstructionsTest, DecodesImmediates) {
  Bytes code = Cat({
      {0x00},  // no locals
      {0x41},
      testing::S(-5),  // i32.const -5
      {0x42},
      testing::S(INT64_MIN),                             // i64.const
      {0x43, 0x00, 0x00, 0x80, 0x3f},                    // f32.const 1.0
      {0x0e, 0x02, 0x00, 0x01, 0x02},                    // br_table 0 1 default 2
      {0x28, 0x42, 0x01, 0x08},                          // i32.load align=2 mem 1 offset 8
      {0xfc, 0x08, 0x03, 0x01},                          // memory.init data 3 mem 1
      {0x1c, 0x01, 0x7e},                                // select (result i64)
      {0x11, 0x04, 0x02},                                // call_indirect type 4 table 2
      {0x1f, 0x7f, 0x02, 0x00, 0x05, 0x00, 0x03, 0x01},  // try_table (catch 5 0) (catch_all_ref 1)
      {0x0b},                                            // end try_table
      {0xfd, 0x0d},
      Bytes(16, 7),                    // i8x16.shuffle
      {0xfd, 0x54, 0x00, 0x10, 0x03},  // v128.load8_lane offset 16 lane 3
      {0xfe, 0x48, 0x02, 0x04},        // i32.atomic.rmw.cmpxchg
      {0xd0, 0x6f},                    // ref.null extern
      {0x02, 0x05},                    // block (type 5)
      {0x0b, 0x0b},
  });
  RecordingVisitor v;
  Status s = ReadModule(OneFunctionModule(code), v);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(v.instructions.size(), 17u);
  const auto& in = v.instructions;
  EXPECT_EQ(in[0].opcode, Opcode::kI32Const);
  EXPECT_EQ(in[0].i64, -5);
  EXPECT_EQ(in[1].i64, INT64_MIN);
  EXPECT_EQ(in[2].bits, 0x3f800000u);
  EXPECT_EQ(in[3].opcode, Opcode::kBrTable);
  EXPECT_THAT(in[3].targets, ::testing::ElementsAre(0u, 1u));
  EXPECT_EQ(in[3].index, 2u);
  EXPECT_EQ(in[4].memarg.align_log2, 2u);
  EXPECT_EQ(in[4].memarg.memory, 1u);
  EXPECT_EQ(in[4].memarg.offset, 8u);
  EXPECT_EQ(in[5].opcode, Opcode::kMemoryInit);
  EXPECT_EQ(in[5].index, 3u);
  EXPECT_EQ(in[5].index2, 1u);
  EXPECT_THAT(in[6].types, ::testing::ElementsAre(ValType::kI64));
  EXPECT_EQ(in[7].index, 4u);
  EXPECT_EQ(in[7].index2, 2u);
  EXPECT_EQ(in[8].block_type.kind, BlockType::Kind::kValue);
  ASSERT_EQ(in[8].catches.size(), 2u);
  EXPECT_EQ(in[8].catches[0].tag, 5u);
  EXPECT_EQ(in[8].catches[1].kind, 3);
  EXPECT_EQ(in[8].catches[1].label, 1u);
  EXPECT_EQ(in[10].opcode, Opcode::kI8x16Shuffle);
  EXPECT_EQ(in[10].bytes[15], 7);
  EXPECT_EQ(in[11].memarg.offset, 16u);
  EXPECT_EQ(in[11].lane, 3);
  EXPECT_EQ(in[12].opcode, Opcode::kI32AtomicRmwCmpxchg);
  EXPECT_EQ(in[13].types[0], ValType::kExternRef);
  EXPECT_EQ(in[14].block_type.kind, BlockType::Kind::kTypeIndex);
  EXPECT_EQ(in[14].block_type.type_index, 5u);
  // Offsets are absolute: the body starts after header(8) + type(6) + function(4) +
  // code section id, size, count, body size.
  EXPECT_EQ(in[0].offset, 8u + 6 + 4 + 1 + 1 + 1 + 1 + 1);
}

TEST(InstructionsTest, UnknownOpcodesNameTheirBytes) {
  RecordingVisitor v;
  Status s = ReadModule(OneFunctionModule({0x00, 0x27, 0x0b}), v);
  EXPECT_EQ(s.code(), base::StatusCode::kMalformed);
  EXPECT_THAT(s.message(), HasSubstr("instruction: unknown opcode 0x27"));
  s = ReadModule(OneFunctionModule({0x00, 0xfd, 0xff, 0x03, 0x0b}), v);
  EXPECT_EQ(s.code(), base::StatusCode::kMalformed);
  EXPECT_THAT(s.message(), HasSubstr("unknown opcode 0xfd 0x1ff"));
  s = ReadModule(OneFunctionModule({0x00, 0xfc, 0x12, 0x0b}), v);
  EXPECT_THAT(s.message(), HasSubstr("unknown opcode 0xfc 0x12"));
}

TEST(InstructionsTest, GcInstructionsAreUnsupported) {
  RecordingVisitor v;
  Status s = ReadModule(OneFunctionModule({0x00, 0xfb, 0x00, 0x0b}), v);
  EXPECT_EQ(s.code(), base::StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("unsupported feature: gc"));
  s = ReadModule(OneFunctionModule({0x00, 0x14, 0x00, 0x0b}), v);
  EXPECT_EQ(s.code(), base::StatusCode::kUnsupported);
}

TEST(InstructionsTest, AtomicFenceNeedsZeroByte) {
  RecordingVisitor v;
  Status s = ReadModule(OneFunctionModule({0x00, 0xfe, 0x03, 0x01, 0x0b}), v);
  EXPECT_EQ(s.code(), base::StatusCode::kMalformed);
  EXPECT_THAT(s.message(), HasSubstr("atomic.fence: expected 0x00"));
}

}  // namespace
}  // namespace trove::warden::wasm

namespace trove::warden::wasm {
namespace {

TEST(OpcodeStreamTest, EveryOpcodeRoundTrips) {
  std::vector<Opcode> all;
  for (const OpcodeInfo& info : kOpcodeTable) all.push_back(info.opcode);
  std::string stream;
  AppendOpcodeStream(stream, all);
  std::optional<std::vector<std::string_view>> back = DecodeOpcodeStream(stream);
  ASSERT_TRUE(back.has_value());
  ASSERT_EQ(back->size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ((*back)[i], GetOpcodeInfo(all[i]).text);
  }
  // One byte for a one-byte opcode, a prefix and LEB128 for the others.
  std::string small;
  AppendOpcodeStream(small, {Opcode::kNop, Opcode::kI32x4Add});
  EXPECT_EQ(small, std::string("\x01\xfd\xae\x01", 4));
}

TEST(OpcodeStreamTest, MalformedStreamsAreRejected) {
  EXPECT_FALSE(DecodeOpcodeStream(std::string("\xfd", 1)).has_value());          // cut
  EXPECT_FALSE(DecodeOpcodeStream(std::string("\xfd\xae", 2)).has_value());      // cut LEB
  EXPECT_FALSE(DecodeOpcodeStream(std::string("\xfd\xff\x7f", 3)).has_value());  // no such
  EXPECT_FALSE(DecodeOpcodeStream(std::string("\x27", 1)).has_value());          // unassigned
  EXPECT_TRUE(DecodeOpcodeStream("").has_value());
}

}  // namespace
}  // namespace trove::warden::wasm

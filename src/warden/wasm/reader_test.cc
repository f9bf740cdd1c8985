#include "warden/wasm/reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::wasm {
namespace {

using base::StatusCode;
using testing::Bytes;
using testing::Cat;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::Module;
using testing::Name;
using testing::OneFunctionModule;
using testing::RecordingVisitor;
using testing::S;
using testing::Section;
using testing::Sized;
using testing::U;

// The sections of a module with every standard section, a name section and another custom
// section, each with its id and size.
std::vector<Bytes> FullModuleSections() {
  Bytes types = Cat({{0x02, 0x60, 0x00, 0x00, 0x60, 0x02, 0x7f, 0x7e, 0x01, 0x7f}});
  Bytes imports = Cat({{0x05},
                       Name("env"),
                       Name("f"),
                       {0x00, 0x01},  // func type 1
                       Name("env"),
                       Name("t"),
                       {0x01, 0x70, 0x00, 0x01},  // table
                       Name("env"),
                       Name("m"),
                       {0x02, 0x03, 0x01, 0x02},  // shared mem
                       Name("env"),
                       Name("g"),
                       {0x03, 0x7f, 0x00},  // global
                       Name("env"),
                       Name("e"),
                       {0x04, 0x00, 0x01}});  // tag
  Bytes functions = {0x02, 0x00, 0x01};
  Bytes tables = {0x02, 0x70, 0x01, 0x01, 0x02, 0x6f, 0x04, 0x03};  // funcref; table64
  Bytes memories = {0x02, 0x00, 0x01, 0x05, 0x02, 0x03};            // plain; memory64 with max
  Bytes tags = {0x01, 0x00, 0x00};
  Bytes globals = Cat({{0x02, 0x7f, 0x01, 0x41},
                       S(42),
                       {0x0b},
                       {0x7e, 0x00, 0x23, 0x00, 0x42, 0x01, 0x7c, 0x0b}});  // extended const
  Bytes exports = Cat({{0x02}, Name("main"), {0x00, 0x01}, Name("mem"), {0x02, 0x01}});
  Bytes start = {0x01};
  Bytes elements = Cat({{0x08},
                        {0x00, 0x41, 0x00, 0x0b, 0x01, 0x01},              // 0: active, funcs
                        {0x01, 0x00, 0x02, 0x01, 0x02},                    // 1: passive
                        {0x02, 0x01, 0x41, 0x01, 0x0b, 0x00, 0x01, 0x01},  // 2: table 1
                        {0x03, 0x00, 0x01, 0x02},                          // 3: declarative
                        {0x04, 0x41, 0x00, 0x0b, 0x01, 0xd2, 0x01, 0x0b},  // 4: exprs
                        {0x05, 0x70, 0x01, 0xd0, 0x70, 0x0b},              // 5: passive exprs
                        {0x06, 0x02, 0x41, 0x00, 0x0b, 0x6f, 0x01, 0xd0, 0x6f, 0x0b},  // 6
                        {0x07, 0x70, 0x01, 0xd2, 0x02, 0x0b}});  // 7: declarative
  Bytes datacount = {0x03};
  Bytes body1 = {0x01, 0x02, 0x7f, 0x01, 0x0b};  // two i32 locals; nop; end
  Bytes body2 = Cat({{0x00, 0x20, 0x00, 0x28, 0x42, 0x01, 0x04, 0x1a, 0x0b}});
  Bytes code = Cat({{0x02}, Sized(body1), Sized(body2)});
  Bytes data = Cat({{0x03},
                    {0x00, 0x41, 0x10, 0x0b},
                    Name("hi"),  // active, memory 0
                    {0x01},
                    Name("xyz"),  // passive
                    {0x02, 0x01, 0x42, 0x00, 0x0b},
                    Name("m1")});  // memory 1 (64-bit)
  Bytes names = Cat({Name("name"),
                     {0x00},
                     Sized(Name("mod")),
                     {0x01},
                     Sized(Cat({{0x02, 0x01}, Name("main"), {0x02}, Name("two")})),
                     {0x02},
                     Sized(Cat({{0x01, 0x01, 0x01, 0x00}, Name("x")}))});
  Bytes producers = Cat({Name("producers"), {0x00}});
  return {Section(0, producers), Section(1, types),    Section(2, imports),  Section(3, functions),
          Section(4, tables),    Section(5, memories), Section(13, tags),    Section(6, globals),
          Section(7, exports),   Section(8, start),    Section(9, elements), Section(12, datacount),
          Section(10, code),     Section(11, data),    Section(0, names)};
}

Bytes FullModule() {
  Bytes out = testing::Header();
  for (const Bytes& section : FullModuleSections())
    out.insert(out.end(), section.begin(), section.end());
  return out;
}

TEST(ReaderTest, EmptyModule) {
  RecordingVisitor v;
  EXPECT_TRUE(ReadModule(Module({}), v).ok());
  EXPECT_TRUE(v.events.empty());
}

TEST(ReaderTest, ReadsEverySection) {
  RecordingVisitor v;
  Bytes module = FullModule();
  Status s = ReadModule(module, v);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_THAT(
      v.events,
      ElementsAre("custom producers 1", "type 0 0->0", "type 1 2->1", "import env.f",
                  "import env.t", "import env.m", "import env.g", "import env.e", "func 1 type 0",
                  "func 2 type 1", "table 1", "table 2", "memory 1", "memory 2", "tag 1 type 0",
                  "global 1", "global 2", "export main", "export mem", "start 1", "elem 0",
                  "elem 1", "elem 2", "elem 3", "elem 4", "elem 5", "elem 6", "elem 7",
                  "datacount 3", "body 1", "body end 1", "body 2", "body end 2", "data 0 mem 0",
                  "data 1 mem 0", "data 2 mem 1", "custom name 28", "module name mod",
                  "func name 1 main", "func name 2 two", "local name 1 0 x"));
  ASSERT_EQ(v.imports.size(), 5u);
  EXPECT_TRUE(v.imports[2].memory.limits.shared);
  EXPECT_EQ(v.imports[2].memory.limits.max, 2u);
  ASSERT_EQ(v.tables.size(), 2u);
  EXPECT_TRUE(v.tables[1].limits.is64);
  EXPECT_EQ(v.tables[1].elem_type, ValType::kExternRef);
  ASSERT_EQ(v.memories.size(), 2u);
  EXPECT_TRUE(v.memories[1].limits.is64);
  EXPECT_EQ(v.memories[1].limits.max, 3u);
  ASSERT_EQ(v.globals.size(), 2u);
  EXPECT_TRUE(v.globals[0].type.is_mutable);
  ASSERT_EQ(v.globals[0].init.size(), 1u);
  EXPECT_EQ(v.globals[0].init[0].i64, 42);
  EXPECT_EQ(v.globals[1].init.size(), 3u);
  ASSERT_EQ(v.elements.size(), 8u);
  EXPECT_EQ(v.elements[0].mode, SegmentMode::kActive);
  EXPECT_THAT(v.elements[0].functions, ElementsAre(1u));
  EXPECT_EQ(v.elements[1].mode, SegmentMode::kPassive);
  EXPECT_EQ(v.elements[2].table, 1u);
  EXPECT_EQ(v.elements[3].mode, SegmentMode::kDeclarative);
  ASSERT_EQ(v.elements[4].exprs.size(), 1u);
  EXPECT_EQ(v.elements[4].exprs[0][0].opcode, Opcode::kRefFunc);
  EXPECT_EQ(v.elements[6].elem_type, ValType::kExternRef);
  EXPECT_EQ(v.elements[7].mode, SegmentMode::kDeclarative);
  ASSERT_EQ(v.bodies.size(), 2u);
  ASSERT_EQ(v.bodies[0].locals.size(), 1u);
  EXPECT_EQ(v.bodies[0].locals[0].count, 2u);
  ASSERT_EQ(v.data.size(), 3u);
  EXPECT_EQ(v.data[1].mode, SegmentMode::kPassive);
  EXPECT_EQ(std::string(v.data[2].bytes.begin(), v.data[2].bytes.end()), "m1");
  // body2's i32.load names memory 1, which is 64-bit: its offset is a u64.
  ASSERT_GE(v.instructions.size(), 4u);
  EXPECT_EQ(v.instructions[3].memarg.memory, 1u);
  EXPECT_EQ(v.instructions[3].memarg.offset, 4u);
}

TEST(ReaderTest, EveryTruncationFailsCleanly) {
  // A prefix that ends between sections is itself a module; it is valid only before the
  // function section (after it, the code section is missing) or after the data section
  // (before it, the data count does not match). Every other prefix is malformed.
  const std::vector<Bytes> sections = FullModuleSections();
  std::set<std::size_t> valid = {8};
  std::size_t end = 8;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    end += sections[i].size();
    if (i < 3 || i == sections.size() - 2) valid.insert(end);
  }
  const Bytes module = FullModule();
  ASSERT_EQ(end, module.size());
  for (std::size_t n = 0; n < module.size(); ++n) {
    SCOPED_TRACE(n);
    RecordingVisitor v;
    Bytes prefix(module.begin(), module.begin() + static_cast<std::ptrdiff_t>(n));
    Status s = ReadModule(prefix, v);
    if (valid.count(n)) {
      EXPECT_TRUE(s.ok()) << s.ToString();
    } else {
      EXPECT_EQ(s.code(), StatusCode::kMalformed) << s.ToString();
      EXPECT_THAT(s.message(), HasSubstr("0x"));
    }
  }
}

TEST(ReaderTest, TruncatedSingleFunctionModulesAllFail) {
  const Bytes module = OneFunctionModule({0x00, 0x41, 0x7f, 0x1a, 0x0b});
  for (std::size_t n = 9; n < module.size(); ++n) {
    RecordingVisitor v;
    Bytes prefix(module.begin(), module.begin() + static_cast<std::ptrdiff_t>(n));
    Status s = ReadModule(prefix, v);
    if (n == 14) continue;  // ends after the type section
    EXPECT_EQ(s.code(), StatusCode::kMalformed) << n << ": " << s.ToString();
  }
}

TEST(ReaderTest, BadHeader) {
  RecordingVisitor v;
  Status s = ReadModule(Bytes{0x00, 0x61, 0x73}, v);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_THAT(s.message(), HasSubstr("offset 0x0 (0): magic"));
  s = ReadModule(Bytes{0x00, 0x61, 0x73, 0x6e, 1, 0, 0, 0}, v);
  EXPECT_THAT(s.message(), HasSubstr("offset 0x0 (0): magic: expected \\0asm"));
  s = ReadModule(Bytes{0x00, 0x61, 0x73, 0x6d, 2, 0, 0, 0}, v);
  EXPECT_EQ(s.message(), "offset 0x4 (4): version: unsupported version 2");
}

TEST(ReaderTest, SectionFramingErrors) {
  RecordingVisitor v;
  // Out of order: function before type.
  Status s = ReadModule(Module({Section(3, {0x00}), Section(1, {0x00})}), v);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_EQ(s.message(),
            "offset 0xb (11): type section: out of order: must come before the function section");
  // Duplicate.
  s = ReadModule(Module({Section(1, {0x00}), Section(1, {0x00})}), v);
  EXPECT_EQ(s.message(), "offset 0xb (11): type section: duplicate section");
  // Unknown id.
  s = ReadModule(Module({Section(14, {})}), v);
  EXPECT_EQ(s.message(), "offset 0x8 (8): section id: unknown section id 14");
  // Size larger than the module.
  s = ReadModule(Cat({testing::Header(), {0x01, 0x05, 0x00}}), v);
  EXPECT_EQ(s.message(),
            "offset 0xa (10): type section: size 5 exceeds the 1 bytes left in the module");
  // Size larger than the content.
  s = ReadModule(Module({Section(1, {0x00, 0x00})}), v);
  EXPECT_EQ(s.message(),
            "offset 0xb (11): type section: section size mismatch: 1 bytes left unread");
  // Tag after global is out of order; data count before code is fine.
  s = ReadModule(Module({Section(6, {0x00}), Section(13, {0x00})}), v);
  EXPECT_THAT(s.message(), HasSubstr("tag section: out of order"));
  s = ReadModule(Module({Section(12, {0x00}), Section(10, {0x00})}), v);
  EXPECT_TRUE(s.ok()) << s.ToString();
  // Custom sections may go anywhere.
  s = ReadModule(Module({Section(1, {0x00}), Section(0, Name("x")), Section(3, {0x00})}), v);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(ReaderTest, OverlongLebInSectionSize) {
  RecordingVisitor v;
  Status s = ReadModule(Cat({testing::Header(), {0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}}), v);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_EQ(s.message(), "offset 0x9 (9): type section: LEB128 longer than 5 bytes");
  s = ReadModule(OneFunctionModule({0x00, 0x41, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x0b}), v);
  EXPECT_THAT(s.message(), HasSubstr("i32.const: LEB128 longer than 5 bytes"));
}

TEST(ReaderTest, FunctionAndCodeCountsMustMatch) {
  RecordingVisitor v;
  Status s =
      ReadModule(Module({Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, {0x01, 0x00})}), v);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_THAT(s.message(), HasSubstr("no code section"));
  s = ReadModule(
      Module({Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, {0x01, 0x00}), Section(10, {0x00})}),
      v);
  EXPECT_THAT(s.message(), HasSubstr("code section has 0 bodies but the function section"));
}

TEST(ReaderTest, DataCountMustMatch) {
  RecordingVisitor v;
  Status s =
      ReadModule(Module({Section(12, {0x02}), Section(11, Cat({{0x01, 0x01}, Name("")}))}), v);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_THAT(s.message(), HasSubstr("data count section says 2"));
}

TEST(ReaderTest, FunctionBodySizeExceedsSection) {
  RecordingVisitor v;
  Bytes module = Module({Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, {0x01, 0x00}),
                         Section(10, Cat({{0x01}, U(4096), {0x00, 0x0b}}))});
  Status s = ReadModule(module, v);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_EQ(s.message(),
            "offset 0x17 (23), code section, function 0: function body: size 4096 exceeds the 2 "
            "bytes left in the code section");
}

TEST(ReaderTest, BodyStructureErrors) {
  RecordingVisitor v;
  Status s = ReadModule(OneFunctionModule({0x00, 0x02, 0x40, 0x0b}), v);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_THAT(s.message(), HasSubstr("function body: body ends inside a block"));
  s = ReadModule(OneFunctionModule({0x00, 0x0b, 0x01}), v);
  EXPECT_THAT(s.message(), HasSubstr("1 bytes after the function's final end"));
  s = ReadModule(OneFunctionModule({0x00, 0x18, 0x00, 0x0b}), v);
  EXPECT_THAT(s.message(), HasSubstr("delegate outside a block"));
}

TEST(ReaderTest, GcTypesAreUnsupported) {
  RecordingVisitor v;
  Status s = ReadModule(Module({Section(1, {0x01, 0x4e, 0x00, 0x00})}), v);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_EQ(s.message(),
            "offset 0xb (11), type section: type form: unsupported feature: gc (byte 0x4e)");
  s = ReadModule(Module({Section(1, {0x01, 0x60, 0x01, 0x64, 0x00, 0x00})}), v);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

TEST(ReaderTest, InvalidUtf8NamesAreMalformed) {
  RecordingVisitor v;
  Bytes exports = Cat({{0x01, 0x01, 0xff, 0x00, 0x00}});
  Status s = ReadModule(Module({Section(7, exports)}), v);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_EQ(s.message(), "offset 0xc (12), export section: export name: name is not valid UTF-8");
}

TEST(ReaderTest, LimitOnSectionItems) {
  ReadOptions options;
  options.max_section_items = 2;
  RecordingVisitor v;
  Bytes module =
      Module({Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, {0x03, 0x00, 0x00, 0x00})});
  Status s = ReadModule(module, v, options);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(),
            "offset 0x10 (16), function section: function count: 3 items exceed the limit of 2");
  options.max_section_items = 3;
  s = ReadModule(module, v, options);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);  // no code section, but the limit passed
  EXPECT_EQ(ReadOptions{}.max_section_items, 1'000'000u);
}

TEST(ReaderTest, LimitOnLocals) {
  ReadOptions options;
  options.max_locals = 10;
  RecordingVisitor v;
  Bytes at_limit = OneFunctionModule({0x02, 0x05, 0x7f, 0x05, 0x7e, 0x0b});
  EXPECT_TRUE(ReadModule(at_limit, v, options).ok());
  Bytes over = OneFunctionModule({0x02, 0x05, 0x7f, 0x06, 0x7e, 0x0b});
  Status s = ReadModule(over, v, options);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("local count: 11 locals exceed the limit of 10"));
  // Default 50,000: two groups of 30,000 cross it.
  Bytes big = OneFunctionModule(Cat({{0x02}, U(30000), {0x7f}, U(30000), {0x7f}, {0x0b}}));
  EXPECT_EQ(ReadModule(big, v).code(), StatusCode::kResourceExhausted);
}

TEST(ReaderTest, LimitOnBrTableTargets) {
  ReadOptions options;
  options.max_br_table_targets = 2;
  RecordingVisitor v;
  EXPECT_TRUE(
      ReadModule(OneFunctionModule({0x00, 0x0e, 0x02, 0x00, 0x00, 0x00, 0x0b}), v, options).ok());
  Status s =
      ReadModule(OneFunctionModule({0x00, 0x0e, 0x03, 0x00, 0x00, 0x00, 0x00, 0x0b}), v, options);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("br_table target count: 3 targets exceed the limit of 2"));
}

TEST(ReaderTest, LimitOnNesting) {
  ReadOptions options;
  options.max_nesting = 3;
  RecordingVisitor v;
  EXPECT_TRUE(
      ReadModule(OneFunctionModule({0x00, 0x02, 0x40, 0x03, 0x40, 0x0b, 0x0b, 0x0b}), v, options)
          .ok());
  Status s = ReadModule(
      OneFunctionModule({0x00, 0x02, 0x40, 0x03, 0x40, 0x04, 0x40, 0x0b, 0x0b, 0x0b, 0x0b}), v,
      options);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("if: block nesting exceeds the limit of 3"));
  // The default, 10,000, is crossed by 10,000 nested blocks inside the function's own.
  Bytes deep = {0x00};
  for (int i = 0; i < 10000; ++i) deep.insert(deep.end(), {0x02, 0x40});
  for (int i = 0; i < 10001; ++i) deep.push_back(0x0b);
  EXPECT_EQ(ReadModule(OneFunctionModule(deep), v).code(), StatusCode::kResourceExhausted);
}

TEST(ReaderTest, LimitOnModuleSize) {
  ReadOptions options;
  options.max_module_bytes = 8;
  RecordingVisitor v;
  EXPECT_TRUE(ReadModule(Module({}), v, options).ok());
  Status s = ReadModule(Module({Section(1, {0x00})}), v, options);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "offset 0x0 (0): module: size 11 exceeds the limit of 8 bytes");
}

TEST(ReaderTest, HookErrorsStopTheRead) {
  struct Stop : RecordingVisitor {
    Status OnFunction(FuncIndex, std::uint32_t) override { return Status::Cancelled("stop"); }
  } v;
  Status s = ReadModule(OneFunctionModule({0x00, 0x0b}), v);
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
}

// Instructions come in runs of at most kInstructionRun, in body order, the final `end` last
// and before OnFunctionBodyEnd; the default OnInstructions passes each to OnInstruction.
TEST(ReaderTest, InstructionsArriveInRunsInOrder) {
  struct Runs : RecordingVisitor {
    Status OnInstructions(FuncIndex func, std::span<const Instruction> insts) override {
      run_sizes.push_back(insts.size());
      events.push_back("run " + std::to_string(insts.size()));
      return ModuleVisitor::OnInstructions(func, insts);
    }
    std::vector<std::size_t> run_sizes;
  };
  for (std::size_t nops : {0u, 1u, 62u, 63u, 64u, 200u}) {
    SCOPED_TRACE(nops);
    Bytes body = {0x00};
    for (std::size_t k = 0; k < nops; ++k) body.push_back(0x01);
    body = Cat({body, {0x41}, S(-5), {0x1a, 0x0b}});  // i32.const -5; drop; end
    Runs v;
    ASSERT_TRUE(ReadModule(OneFunctionModule(body), v).ok());
    const std::size_t total = nops + 3;
    ASSERT_EQ(v.instructions.size(), total);
    std::size_t sum = 0;
    for (std::size_t size : v.run_sizes) {
      EXPECT_GE(size, 1u);
      EXPECT_LE(size, ModuleVisitor::kInstructionRun);
      sum += size;
    }
    EXPECT_EQ(sum, total);
    EXPECT_EQ(v.run_sizes.size(),
              (total + ModuleVisitor::kInstructionRun - 1) / ModuleVisitor::kInstructionRun);
    for (std::size_t k = 0; k < nops; ++k) EXPECT_EQ(v.instructions[k].opcode, Opcode::kNop);
    EXPECT_EQ(v.instructions[nops].opcode, Opcode::kI32Const);
    EXPECT_EQ(v.instructions[nops].i64, -5);
    EXPECT_EQ(v.instructions.back().opcode, Opcode::kEnd);
    for (std::size_t k = 1; k < total; ++k) {
      EXPECT_GT(v.instructions[k].offset, v.instructions[k - 1].offset);
    }
    ASSERT_GE(v.events.size(), 2u);
    EXPECT_EQ(v.events.back(), "body end 0");
    EXPECT_EQ(v.events[v.events.size() - 2], "run " + std::to_string(v.run_sizes.back()));
  }
}

// The reader decodes a run before passing it on, yet errors come in instruction order: a
// visitor's error on an instruction comes before the reader's error on a later one in the
// same run, and when the visitor accepts, it has seen every instruction before the bad one.
TEST(ReaderTest, InstructionErrorsKeepTheirOrderWithinARun) {
  struct FailAt : RecordingVisitor {
    explicit FailAt(std::size_t stop) : at(stop) {}
    Status OnInstruction(FuncIndex func, const Instruction& inst) override {
      if (instructions.size() == at) return Status::Cancelled("visitor stops");
      return RecordingVisitor::OnInstruction(func, inst);
    }
    std::size_t at;
  };
  // Ten nops, then an unknown opcode, then more nops: all inside the first run.
  Bytes body = {0x00};
  for (int k = 0; k < 10; ++k) body.push_back(0x01);
  body = Cat({body, {0xff, 0x01, 0x01, 0x0b}});
  const Bytes module = OneFunctionModule(body);

  FailAt early(3);
  Status s = ReadModule(module, early);
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  EXPECT_EQ(early.instructions.size(), 3u);

  FailAt never(SIZE_MAX);
  s = ReadModule(module, never);
  EXPECT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_THAT(s.message(), HasSubstr("unknown opcode 0xff"));
  EXPECT_EQ(never.instructions.size(), 10u);

  // The same for the reader's own limits, checked after an instruction is decoded.
  ReadOptions options;
  options.max_nesting = 2;
  const Bytes nested = OneFunctionModule({0x00, 0x01, 0x02, 0x40, 0x02, 0x40, 0x0b, 0x0b, 0x0b});
  FailAt first(0);
  EXPECT_EQ(ReadModule(nested, first, options).code(), StatusCode::kCancelled);
  FailAt none(SIZE_MAX);
  EXPECT_EQ(ReadModule(nested, none, options).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(none.instructions.size(), 2u);  // nop, the first block
}

// Every field of an instruction, for comparing two reads.
std::string Describe(const Instruction& i) {
  std::string out = fmt::format(
      "{} @{} index {} index2 {} i64 {} bits {} lane {} bytes {} memarg {} {} {} block {} {} {}",
      GetOpcodeInfo(i.opcode).text, i.offset, i.index, i.index2, i.i64, i.bits, i.lane,
      fmt::join(i.bytes, ","), i.memarg.align_log2, i.memarg.memory, i.memarg.offset,
      static_cast<int>(i.block_type.kind), static_cast<int>(i.block_type.value),
      i.block_type.type_index);
  out += fmt::format(" targets {} types {} catches", fmt::join(i.targets, ","), i.types.size());
  for (const CatchClause& c : i.catches) out += fmt::format(" {}/{}/{}", c.kind, c.tag, c.label);
  return out;
}

// The status, every event and every instruction of a read of `module`.
std::string Transcript(const Bytes& module, bool fast) {
  ReadOptions options;
  options.fast_decode = fast;
  RecordingVisitor v;
  const Status s = ReadModule(module, v, options);
  std::string out = s.ToString() + "\n";
  for (const std::string& e : v.events) out += e + "\n";
  for (const Instruction& i : v.instructions) out += Describe(i) + "\n";
  return out;
}

// The fast path (ReadOptions::fast_decode) must read exactly what the general decoder reads:
// every immediate kind it takes, at every LEB128 length up to and past its limit, non-minimal
// and invalid encodings, the kinds it leaves to the general decoder, and every truncation.
TEST(ReaderTest, FastPathReadsWhatTheGeneralDecoderReads) {
  std::vector<Bytes> immediates_u32 = {
      U(0),
      U(5),
      U(127),
      U(128),
      U(200),
      U(16383),
      U(16384),
      U((1u << 21) - 1),
      U(1u << 21),
      U((1u << 28) - 1),
      U(1u << 28),
      U(0xffffffffu),
      {0x85, 0x80, 0x80, 0x00},               // non-minimal
      {0xff, 0xff, 0xff, 0xff, 0x7f},         // overflows 32 bits
      {0x80, 0x80, 0x80, 0x80, 0x80, 0x00}};  // longer than 5 bytes
  std::vector<Bytes> immediates_s32 = {S(0),
                                       S(-1),
                                       S(63),
                                       S(64),
                                       S(-64),
                                       S(-65),
                                       S(8191),
                                       S(-8192),
                                       S(1 << 20),
                                       S(-(1 << 27)),
                                       S((1 << 27) - 1),
                                       S(1 << 27),
                                       S(2147483647),
                                       S(-2147483647 - 1),
                                       {0xff, 0x7f},
                                       {0x80, 0x80, 0x80, 0x80, 0x70},   // sign bits that disagree
                                       {0xff, 0xff, 0xff, 0xff, 0x0f}};  // the same
  std::vector<Bytes> immediates_s64;
  for (int bits = 0; bits < 64; bits += 3) {
    immediates_s64.push_back(S(std::int64_t{1} << bits));
    // Negated in unsigned arithmetic: -(1 << 63) does not fit an int64_t.
    immediates_s64.push_back(S(static_cast<std::int64_t>(0 - (std::uint64_t{1} << bits))));
  }
  immediates_s64.push_back(S(INT64_MAX));
  immediates_s64.push_back(S(INT64_MIN));
  immediates_s64.push_back({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02});
  std::vector<Bytes> instructions;
  for (std::uint8_t op :
       {0x0c, 0x0d, 0x10, 0x12, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x3f, 0x40, 0xd2}) {
    for (const Bytes& imm : immediates_u32) instructions.push_back(Cat({{op}, imm}));
  }
  for (const Bytes& imm : immediates_u32) {  // call_indirect: type, then table
    instructions.push_back(Cat({{0x11}, imm, {0x00}}));
    instructions.push_back(Cat({{0x11, 0x01}, imm}));
  }
  for (const Bytes& imm : immediates_s32) instructions.push_back(Cat({{0x41}, imm}));
  for (const Bytes& imm : immediates_s64) instructions.push_back(Cat({{0x42}, imm}));
  instructions.push_back({0x43, 0x00, 0x00, 0x80, 0x3f});
  instructions.push_back({0x44, 0x18, 0x2d, 0x44, 0x54, 0xfb, 0x21, 0x09, 0x40});
  for (std::uint8_t op : {0x28, 0x29, 0x2d, 0x36, 0x3b}) {  // loads and stores
    for (const Bytes& align : {U(0), U(2), U(3), U(63), U(64), U(0x40), U(0x42), U(200)}) {
      for (const Bytes& offset : immediates_u32) {
        instructions.push_back(Cat({{op}, align, offset}));
        instructions.push_back(Cat({{op}, align, {0x01}, offset}));  // after a memory index
      }
    }
  }
  for (std::uint8_t type : {0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f, 0x69, 0x63, 0x64, 0x60,
                            0x5f, 0x00, 0x01, 0x3f}) {
    for (std::uint8_t op : {0x02, 0x03, 0x04}) instructions.push_back({op, type});
  }
  instructions.push_back({0x02, 0x80, 0x01});  // block type index 128
  instructions.push_back({0x02, 0xff, 0x7f});  // a two-byte negative s33
  // Left to the general decoder: prefixes, br_table, select t, ref.null, try_table, unknown.
  instructions.push_back({0x0e, 0x02, 0x00, 0x01, 0x00});
  instructions.push_back({0x1c, 0x01, 0x7f});
  instructions.push_back({0xd0, 0x70});
  instructions.push_back({0xfc, 0x08, 0x00, 0x00});
  instructions.push_back({0xfd, 0x0c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
  instructions.push_back({0xfe, 0x10, 0x02, 0x08});
  instructions.push_back({0xff});
  instructions.push_back({0x14});

  auto module = [](const Bytes& body, bool memory64) {
    return Module({Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, {0x01, 0x00}),
                   Section(5, {0x01, static_cast<std::uint8_t>(memory64 ? 0x04 : 0x00), 0x01}),
                   Section(10, Cat({{0x01}, Sized(body)}))});
  };
  std::size_t checked = 0;
  for (const Bytes& inst : instructions) {
    for (bool memory64 : {false, true}) {
      // The instruction in a body, with more after it; then the body cut inside it.
      const Bytes body = Cat({{0x00, 0x01}, inst, {0x01, 0x0b}});
      std::vector<Bytes> bodies = {body};
      for (std::size_t cut = 2; cut < 2 + inst.size(); ++cut) {
        bodies.emplace_back(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(cut));
      }
      for (const Bytes& b : bodies) {
        const Bytes m = module(b, memory64);
        ASSERT_EQ(Transcript(m, true), Transcript(m, false))
            << "body " << fmt::format("{:02x}", fmt::join(b, " "));
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 2000u);
}

TEST(ReaderTest, SkippingBodies) {
  ReadOptions options;
  options.decode_bodies = false;
  RecordingVisitor v;
  EXPECT_TRUE(ReadModule(OneFunctionModule({0x00, 0xff, 0xff}), v, options).ok());
  EXPECT_TRUE(v.instructions.empty());
  EXPECT_EQ(v.bodies.size(), 1u);
}

TEST(ReaderTest, BadFlagsAndKinds) {
  RecordingVisitor v;
  EXPECT_THAT(ReadModule(Module({Section(5, {0x01, 0x08, 0x00})}), v).message(),
              HasSubstr("memory limits: invalid limits flags 0x08"));
  EXPECT_THAT(ReadModule(Module({Section(5, {0x01, 0x02, 0x00})}), v).message(),
              HasSubstr("shared memory must have a maximum"));
  EXPECT_THAT(ReadModule(Module({Section(9, {0x01, 0x08, 0x00})}), v).message(),
              HasSubstr("element segment flags: invalid flags 8"));
  EXPECT_THAT(ReadModule(Module({Section(11, {0x01, 0x03, 0x00})}), v).message(),
              HasSubstr("data segment flags: invalid flags 3"));
  EXPECT_THAT(ReadModule(Module({Section(7, Cat({{0x01}, Name("x"), {0x05, 0x00}}))}), v).message(),
              HasSubstr("export kind: invalid kind 5"));
  EXPECT_THAT(
      ReadModule(Module({Section(2, Cat({{0x01}, Name("a"), Name("b"), {0x07}}))}), v).message(),
      HasSubstr("import kind: invalid kind 7"));
  EXPECT_THAT(ReadModule(Module({Section(6, {0x01, 0x7f, 0x02, 0x41, 0x00, 0x0b})}), v).message(),
              HasSubstr("global mutability: invalid flag 2"));
  EXPECT_THAT(ReadModule(Module({Section(6, {0x01, 0x7f, 0x00, 0x41, 0x00})}), v).message(),
              HasSubstr("global initializer: constant expression has no end"));
  EXPECT_THAT(ReadModule(Module({Section(1, {0x01, 0x60, 0x01, 0x55, 0x00})}), v).message(),
              HasSubstr("param type: invalid value type 0x55"));
}

// A module with one function whose body is `nop; end`, then a name section with `payload`
// after the "name" string. Returns the module; *payload_at is the offset of the name
// section's first payload byte (OnNameSectionIgnored's offset).
Bytes WithNameSection(const Bytes& payload, std::size_t* payload_at = nullptr) {
  const Bytes code = OneFunctionModule({0x00, 0x01, 0x0b});
  const Bytes custom = Cat({Name("name"), payload});
  if (payload_at != nullptr) *payload_at = code.size() + 1 + U(custom.size()).size() + 5;
  return Cat({code, Section(0, custom)});
}

std::vector<std::string> NameEvents(const std::vector<std::string>& events) {
  std::vector<std::string> out;
  for (const std::string& e : events) {
    if (e.starts_with("custom ")) continue;
    if (e.find(" name ") != std::string::npos || e.starts_with("name section")) out.push_back(e);
  }
  return out;
}

TEST(ReaderTest, DecodesEveryNameSubsection) {
  const Bytes map_a = Cat({{0x02, 0x00}, Name("a0"), {0x03}, Name("a3")});  // 0 -> a0, 3 -> a3
  const Bytes indirect = Cat({{0x01, 0x00, 0x02, 0x00}, Name("p"), {0x01}, Name("q")});
  const Bytes payload = Cat({{0x00}, Sized(Name("mod")),
                             {0x01}, Sized(Cat({{0x01, 0x00}, Name("main")})),
                             {0x02}, Sized(indirect),
                             {0x03}, Sized(indirect),
                             {0x04}, Sized(map_a),
                             {0x05}, Sized(map_a),
                             {0x06}, Sized(map_a),
                             {0x07}, Sized(Cat({{0x01, 0x00}, Name("__stack_pointer")})),
                             {0x08}, Sized(map_a),
                             {0x09}, Sized(Cat({{0x01, 0x00}, Name(".rodata")})),
                             {0x0a}, Sized(indirect),
                             {0x0b}, Sized(map_a),
                             {0x0c}, Sized({0x01, 0x02, 0x03})});  // unknown: skipped
  RecordingVisitor v;
  const Status s = ReadModule(WithNameSection(payload), v);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_THAT(
      NameEvents(v.events),
      ElementsAre("module name mod", "func name 0 main", "local name 0 0 p", "local name 0 1 q",
                  "label name 0 0 p", "label name 0 1 q", "type name 0 a0", "type name 3 a3",
                  "table name 0 a0", "table name 3 a3", "memory name 0 a0", "memory name 3 a3",
                  "global name 0 __stack_pointer", "element segment name 0 a0",
                  "element segment name 3 a3", "data segment name 0 .rodata", "field name 0 0 p",
                  "field name 0 1 q", "tag name 0 a0", "tag name 3 a3"));
}

// A malformed name section is optional metadata (docs/warden.md §4.3): it is ignored with its
// offset and what is wrong, no name of it is reported, and the code is read as without it.
TEST(ReaderTest, MalformedNameSectionsAreIgnoredAndTheCodeIsRead) {
  const Bytes good_functions = Sized(Cat({{0x01, 0x00}, Name("main")}));
  struct Case {
    std::string what;
    Bytes payload;
    std::string error;  // expected in the ignored event
  };
  const std::vector<Case> cases = {
      {"subsection size past the section", Cat({{0x01, 0x7f}, {0x01, 0x00}, Name("main")}),
       "name subsection: size 127 exceeds the 7 bytes left in the custom section"},
      {"subsection size shorter than its names",
       Cat({{0x00}, Sized(Name("m")), {0x01, 0x03, 0x01, 0x00, 0x04}, Name("main")}),
       "function name: size 4 exceeds the 0 bytes left in the name subsection"},
      {"subsection size longer than its names",
       Cat({{0x01}, Sized(Cat({{0x01, 0x00}, Name("main"), {0x00}}))}),
       "name subsection: subsection size mismatch: 1 bytes left unread"},
      {"overlong LEB128 index",
       Cat({{0x01}, Sized(Cat({{0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, Name("main")}))}),
       "function name index: LEB128 longer than 5 bytes"},
      {"LEB128 count past the subsection", Cat({{0x01}, Sized({0x80, 0x80})}),
       "function name count: LEB128 runs past the end of the name subsection"},
      {"subsections out of order", Cat({{0x01}, good_functions, {0x00}, Sized(Name("m"))}),
       "subsection 0 out of order: must come before subsection 1"},
      {"subsection repeated", Cat({{0x01}, good_functions, {0x01}, good_functions}),
       "name subsection id: subsection 1 repeated"},
      {"function index repeated",
       Cat({{0x01}, Sized(Cat({{0x02, 0x00}, Name("a"), {0x00}, Name("b")}))}),
       "function name index: index 0 repeated"},
      {"function indices out of order",
       Cat({{0x01}, Sized(Cat({{0x02, 0x05}, Name("a"), {0x02}, Name("b")}))}),
       "function name index: index 2 out of order after 5"},
      {"local indices out of order",
       Cat({{0x02}, Sized(Cat({{0x01, 0x00, 0x02, 0x01}, Name("a"), {0x00}, Name("b")}))}),
       "local name index: index 0 out of order after 1"},
      {"truncated: fewer names than counted",
       Cat({{0x01}, Sized(Cat({{0x02, 0x00}, Name("main")}))}),
       "function name index: LEB128 runs past the end of the name subsection"},
      {"truncated: the section ends inside a subsection header", Bytes{0x01},
       "name subsection size: LEB128 runs past the end of the custom section"},
      {"name not UTF-8", Cat({{0x00}, Sized({0x01, 0xfe})}),
       "module name: name is not valid UTF-8"},
      {"too many names", Cat({{0x01}, Sized(Cat({U(3), {0x00}, Name("a")}))}),
       "function name count"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::size_t at = 0;
    const Bytes module = WithNameSection(c.payload, &at);
    RecordingVisitor v;
    ReadOptions options;
    options.max_section_items = 2;
    const Status s = ReadModule(module, v, options);
    ASSERT_TRUE(s.ok()) << s.ToString();
    const std::vector<std::string> names = NameEvents(v.events);
    ASSERT_EQ(names.size(), 1u) << fmt::format("{}", fmt::join(names, " | "));
    EXPECT_THAT(names[0], HasSubstr(fmt::format("name section ignored {}: offset 0x", at)));
    EXPECT_THAT(names[0], HasSubstr(c.error));
    // The code is read as without a name section.
    EXPECT_THAT(v.events, ::testing::Contains("body end 0"));
    ASSERT_EQ(v.instructions.size(), 2u);
    EXPECT_EQ(v.instructions[0].opcode, Opcode::kNop);
  }
}

TEST(ReaderTest, ASecondNameSectionIsIgnored) {
  const Bytes names = Cat({Name("name"), {0x01}, Sized(Cat({{0x01, 0x00}, Name("main")}))});
  const Bytes first = WithNameSection(Cat({{0x01}, Sized(Cat({{0x01, 0x00}, Name("main")}))}));
  const Bytes module = Cat({first, Section(0, names)});
  RecordingVisitor v;
  ASSERT_TRUE(ReadModule(module, v).ok());
  const std::vector<std::string> events = NameEvents(v.events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0], "func name 0 main");
  EXPECT_THAT(events[1], HasSubstr("name section: a second name section"));
}

// docs/warden.md §4.5: "offset <hex> (<decimal>)", the section, and in the code section the
// function.
TEST(ReaderTest, ErrorsNameOffsetSectionAndFunction) {
  RecordingVisitor v;
  // Three functions; the third body (function 2) ends inside a block.
  const Bytes body = Sized({0x00, 0x01, 0x0b});
  const Bytes bad = Sized({0x00, 0x02, 0x40, 0x0b});
  const Bytes module =
      Module({Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, {0x03, 0x00, 0x00, 0x00}),
              Section(10, Cat({{0x03}, body, body, bad}))});
  const std::size_t end_offset = module.size();  // the error is at the end of the body
  const Status s = ReadModule(module, v);
  ASSERT_EQ(s.code(), StatusCode::kMalformed);
  EXPECT_EQ(s.message(), fmt::format("offset {:#x} ({}), code section, function 2: function "
                                     "body: body ends inside a block",
                                     end_offset, end_offset));
  // Imported functions count: with one import, the same body is function 3.
  const Bytes imported =
      Module({Section(1, {0x01, 0x60, 0x00, 0x00}),
              Section(2, Cat({{0x01}, Name("env"), Name("f"), {0x00, 0x00}})),
              Section(3, {0x03, 0x00, 0x00, 0x00}), Section(10, Cat({{0x03}, body, body, bad}))});
  EXPECT_THAT(ReadModule(imported, v).message(), HasSubstr("), code section, function 3: "));
  // Outside the code section: the section only.
  EXPECT_EQ(ReadModule(Module({Section(5, {0x01, 0x08, 0x00})}), v).message(),
            "offset 0xb (11), memory section: memory limits: invalid limits flags 0x08");
  // A visitor's error keeps its text, with the place in front.
  struct Refuse : RecordingVisitor {
    Status OnFunctionBody(const FunctionBody&) override { return Status::Internal("refused"); }
  } refuse;
  EXPECT_EQ(ReadModule(OneFunctionModule({0x00, 0x0b}), refuse).message(),
            "code section: function 0: refused");
}

}  // namespace
}  // namespace trove::warden::wasm

namespace trove::warden::wasm {
namespace {

// A memarg offset is a u64 only when the memory it names is 64-bit.
TEST(ReaderMemoryTest, Memory64OffsetsAreU64) {
  const Bytes offset = testing::U(std::uint64_t{1} << 33);
  auto module_with = [&](std::uint8_t memory_flags) {
    Bytes body = Cat({{0x00, 0x42, 0x00, 0x29, 0x03}, offset, {0x1a, 0x0b}});
    return testing::Module({testing::Section(1, {0x01, 0x60, 0x00, 0x00}),
                            testing::Section(3, {0x01, 0x00}),
                            testing::Section(5, {0x01, memory_flags, 0x01}),
                            testing::Section(10, Cat({{0x01}, testing::Sized(body)}))});
  };
  RecordingVisitor v;
  Status s = ReadModule(module_with(0x04), v);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_GE(v.instructions.size(), 2u);
  EXPECT_EQ(v.instructions[1].opcode, Opcode::kI64Load);
  EXPECT_EQ(v.instructions[1].memarg.offset, std::uint64_t{1} << 33);
  s = ReadModule(module_with(0x00), v);
  EXPECT_EQ(s.code(), base::StatusCode::kMalformed);
  EXPECT_THAT(s.message(), HasSubstr("i64.load: LEB128"));
}

TEST(ReaderTest, EachInstructionStartsFromDefaults) {
  // The reader reuses one Instruction per body; an immediate of one instruction must not show
  // in the next. Each instruction with immediates is followed by a nop.
  const Bytes body = {0x00,                    // no locals
                      0x41, 0x05, 0x01,        // i32.const 5; nop
                      0x28, 0x02, 0x08, 0x01,  // i32.load align=2 offset=8; nop
                      0x44, 0,    0,    0,    0,    0,  0,  0xf0, 0x3f, 0x01,  // f64.const 1.0; nop
                      0x02, 0x7f, 0x01, 0x0b, 0x01,  // block (result i32) nop end; nop
                      0x0e, 0x01, 0x00, 0x00, 0x01,  // br_table [0] 0; nop
                      0x1c, 0x01, 0x7f, 0x01,        // select (result i32); nop
                      0xfd, 0x0c, 1,    2,    3,    4,  5,  6,    7,    8,
                      9,    10,   11,   12,   13,   14, 15, 16,
                      0x01,  // v128.const; nop
                      0x0b};
  const Bytes module = testing::Module(
      {testing::Section(1, {0x01, 0x60, 0x00, 0x00}), testing::Section(3, {0x01, 0x00}),
       testing::Section(5, {0x01, 0x00, 0x01}), testing::Section(10, Cat({{0x01}, Sized(body)}))});
  RecordingVisitor v;
  Status s = ReadModule(module, v);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int nops = 0;
  for (std::size_t i = 0; i < v.instructions.size(); ++i) {
    const Instruction& inst = v.instructions[i];
    if (inst.opcode != Opcode::kNop) continue;
    ++nops;
    SCOPED_TRACE(i);
    const Instruction fresh;
    EXPECT_EQ(inst.index, fresh.index);
    EXPECT_EQ(inst.index2, fresh.index2);
    EXPECT_EQ(inst.i64, fresh.i64);
    EXPECT_EQ(inst.bits, fresh.bits);
    EXPECT_EQ(inst.lane, fresh.lane);
    EXPECT_EQ(inst.bytes, fresh.bytes);
    EXPECT_EQ(inst.memarg.align_log2, fresh.memarg.align_log2);
    EXPECT_EQ(inst.memarg.memory, fresh.memarg.memory);
    EXPECT_EQ(inst.memarg.offset, fresh.memarg.offset);
    EXPECT_EQ(inst.block_type.kind, fresh.block_type.kind);
    EXPECT_EQ(inst.block_type.value, fresh.block_type.value);
    EXPECT_EQ(inst.block_type.type_index, fresh.block_type.type_index);
    EXPECT_TRUE(inst.targets.empty());
    EXPECT_TRUE(inst.types.empty());
    EXPECT_TRUE(inst.catches.empty());
  }
  EXPECT_EQ(nops, 8);
  // The immediates themselves were read.
  ASSERT_EQ(v.instructions.size(), 17u);
  EXPECT_EQ(v.instructions[0].i64, 5);
  EXPECT_EQ(v.instructions[2].memarg.offset, 8u);
  EXPECT_NE(v.instructions[4].bits, 0u);
  EXPECT_EQ(v.instructions[6].block_type.kind, BlockType::Kind::kValue);
  EXPECT_EQ(v.instructions[10].targets.size(), 1u);
  EXPECT_EQ(v.instructions[12].types.size(), 1u);
  EXPECT_EQ(v.instructions[14].bytes[15], 16);
}

TEST(ReaderMemoryTest, RefNullWithTypeIndexIsUnsupported) {
  RecordingVisitor v;
  Status s = ReadModule(OneFunctionModule({0x00, 0xd0, 0x00, 0x1a, 0x0b}), v);
  EXPECT_EQ(s.code(), base::StatusCode::kUnsupported);
  EXPECT_THAT(s.message(), HasSubstr("heap type: unsupported feature: gc"));
}

}  // namespace
}  // namespace trove::warden::wasm

namespace trove::warden::wasm {
namespace {

// Records each body's instructions in its own slot, so bodies may be read concurrently.
class PerFunctionVisitor final : public ModuleVisitor {
 public:
  explicit PerFunctionVisitor(bool concurrent) : concurrent_(concurrent) {}
  bool ConcurrentBodies() const override { return concurrent_; }
  Status OnFunction(FuncIndex /*func*/, std::uint32_t /*type_index*/) override {
    bodies.emplace_back();
    return {};
  }
  Status OnFunctionBody(const FunctionBody& body) override {
    bodies.at(body.func_index).push_back("body@" + std::to_string(body.offset));
    return {};
  }
  Status OnInstruction(FuncIndex func, const Instruction& inst) override {
    bodies.at(func).push_back(std::string(GetOpcodeInfo(inst.opcode).text) + "@" +
                              std::to_string(inst.offset));
    return {};
  }
  Status OnFunctionBodyEnd(FuncIndex func) override {
    bodies.at(func).push_back("end");
    return {};
  }
  std::vector<std::vector<std::string>> bodies;

 private:
  const bool concurrent_;
};

// A module of `count` functions of type () -> (); body i is `bodies(i)`. Only the first
// `present` bodies are in the code section (which still says `count`).
Bytes ManyFunctions(std::size_t count, const std::function<Bytes(std::size_t)>& bodies,
                    std::size_t present = SIZE_MAX) {
  Bytes functions = U(count);
  Bytes code = U(count);
  for (std::size_t i = 0; i < count; ++i) {
    functions.push_back(0x00);
    if (i < present) code = Cat({code, Sized(bodies(i))});
  }
  return Module({Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, functions), Section(10, code)});
}

Bytes NopBody(std::size_t i) {
  Bytes body = {0x00};
  for (std::size_t k = 0; k < i % 7; ++k) body.push_back(0x01);  // nop
  body = Cat({body, {0x41}, S(static_cast<std::int32_t>(i)), {0x1a, 0x0b}});
  return body;
}

TEST(ReaderConcurrencyTest, ThreadsGiveTheSameBodies) {
  const Bytes module = ManyFunctions(300, NopBody);
  PerFunctionVisitor one(false);
  ASSERT_TRUE(ReadModule(module, one).ok());
  for (std::uint32_t threads : {2u, 3u, 8u}) {
    for (std::uint32_t chunk_bytes : {1u, 40u, 256u * 1024}) {
      PerFunctionVisitor many(true);
      ReadOptions options;
      options.decode_threads = threads;
      options.decode_chunk_bytes = chunk_bytes;
      ASSERT_TRUE(ReadModule(module, many, options).ok());
      EXPECT_EQ(many.bodies, one.bodies) << threads << " threads, chunks of " << chunk_bytes;
    }
  }
}

TEST(ReaderConcurrencyTest, ThreadsReportTheLowestBadBody) {
  // Bodies 120 and 250 end inside a block; the error names function 120 either way.
  const auto bodies = [](std::size_t i) {
    return i == 120 || i == 250 ? Bytes{0x00, 0x02, 0x40, 0x0b} : NopBody(i);
  };
  const Bytes module = ManyFunctions(300, bodies);
  PerFunctionVisitor one(false);
  const Status expected = ReadModule(module, one);
  ASSERT_EQ(expected.code(), StatusCode::kMalformed);
  EXPECT_THAT(expected.message(), HasSubstr("function 120"));
  for (std::uint32_t threads : {2u, 4u}) {
    // Both bad bodies in one chunk, in chunks of their own, and in neighbouring chunks.
    for (std::uint32_t chunk_bytes : {1u, 12u, 64u, 256u * 1024}) {
      PerFunctionVisitor many(true);
      ReadOptions options;
      options.decode_threads = threads;
      options.decode_chunk_bytes = chunk_bytes;
      EXPECT_EQ(ReadModule(module, many, options).ToString(), expected.ToString())
          << threads << " threads, chunks of " << chunk_bytes;
    }
  }
}

TEST(ReaderConcurrencyTest, FramingErrorComesAfterEarlierBodyErrors) {
  // Body 10 is bad and the code section ends after body 199 of 300: the one-thread read
  // reports body 10; with body 10 fixed it reports the missing body 200. Threads must agree.
  for (bool bad_body : {true, false}) {
    SCOPED_TRACE(bad_body);
    const auto bodies = [&](std::size_t i) {
      return bad_body && i == 10 ? Bytes{0x00, 0x02, 0x40, 0x0b} : NopBody(i);
    };
    const Bytes module = ManyFunctions(300, bodies, 200);
    PerFunctionVisitor one(false);
    const Status expected = ReadModule(module, one);
    ASSERT_FALSE(expected.ok());
    EXPECT_THAT(expected.message(), HasSubstr(bad_body ? "function 10" : "function body size"));
    for (std::uint32_t chunk_bytes : {1u, 50u, 256u * 1024}) {
      PerFunctionVisitor many(true);
      ReadOptions options;
      options.decode_threads = 2;
      options.decode_chunk_bytes = chunk_bytes;
      EXPECT_EQ(ReadModule(module, many, options).ToString(), expected.ToString()) << chunk_bytes;
    }
  }
}

}  // namespace
}  // namespace trove::warden::wasm

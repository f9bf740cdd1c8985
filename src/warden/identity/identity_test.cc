#include "warden/identity/identity.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/env.h"
#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::identity {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using wasm::testing::Bytes;
using wasm::testing::Cat;
using wasm::testing::Module;
using wasm::testing::Name;
using wasm::testing::S;
using wasm::testing::Section;
using wasm::testing::Sized;
using wasm::testing::U;

constexpr std::uint8_t kEnd = 0x0b;
const Bytes kVoidType = {0x60, 0x00, 0x00};               // () -> ()
const Bytes kUnaryType = {0x60, 0x01, 0x7f, 0x01, 0x7f};  // (i32) -> i32
const Bytes kBinaryType = {0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f};

Bytes Types(std::initializer_list<Bytes> types) {
  Bytes out = U(types.size());
  for (const Bytes& t : types) out.insert(out.end(), t.begin(), t.end());
  return Section(1, out);
}
// One function import "env.<field>" of `type`, per entry.
Bytes Imports(std::initializer_list<std::pair<std::string, std::uint32_t>> imports) {
  Bytes out = U(imports.size());
  for (const auto& [field, type] : imports)
    out = Cat({out, Name("env"), Name(field), {0x00}, U(type)});
  return Section(2, out);
}
Bytes Functions(std::span<const std::uint32_t> types) {
  Bytes out = U(types.size());
  for (std::uint32_t t : types) out = Cat({out, U(t)});
  return Section(3, out);
}
Bytes Functions(std::initializer_list<std::uint32_t> types) {
  return Functions(std::span<const std::uint32_t>(types.begin(), types.size()));
}
Bytes Code(std::span<const Bytes> bodies) {
  Bytes out = U(bodies.size());
  for (const Bytes& b : bodies) out = Cat({out, Sized(b)});
  return Section(10, out);
}
Bytes Code(std::initializer_list<Bytes> bodies) {
  Bytes out = U(bodies.size());
  for (const Bytes& b : bodies) out = Cat({out, Sized(b)});
  return Section(10, out);
}
Bytes Memory() { return Section(5, {0x01, 0x00, 0x01}); }
Bytes ExportFunc(std::string_view name, std::uint32_t func) {
  return Section(7, Cat({U(1), Name(name), {0x00}, U(func)}));
}
Bytes ActiveData(std::int32_t address, std::string_view text) {
  Bytes bytes(text.begin(), text.end());
  return Section(11, Cat({U(1), {0x00, 0x41}, S(address), {kEnd}, Sized(bytes)}));
}
// One data section with several active segments of memory 0, written in order.
Bytes ActiveDataSegments(const std::vector<std::pair<std::int32_t, std::string_view>>& segments) {
  Bytes out = U(segments.size());
  for (const auto& [address, text] : segments) {
    Bytes bytes(text.begin(), text.end());
    out = Cat({out, {0x00, 0x41}, S(address), {kEnd}, Sized(bytes)});
  }
  return Section(11, out);
}
Bytes FunctionNames(std::uint32_t func, std::string_view name) {
  return Section(0, Cat({Name("name"), {0x01}, Sized(Cat({U(1), U(func), Name(name)}))}));
}

ModuleIdentity Compute(const Bytes& bytes) {
  Result<ModuleIdentity> result = ComputeModuleIdentity(bytes);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : ModuleIdentity{};
}

// The function under test: (i32) -> i32 with one i32 local; calls the import `log`, then a
// defined function, with constants throughout.
Bytes Worker(std::uint32_t log_index, std::uint32_t callee, std::int32_t k1, std::int32_t k2,
             std::int32_t k3) {
  return Cat({U(1),
              U(1),
              {0x7f},        // locals: 1 x i32
              {0x20, 0x00},  // local.get 0
              {0x41},
              S(k1),  // i32.const k1
              {0x10},
              U(log_index),  // call log
              {0x41},
              S(k2),
              {0x6a},  // i32.const k2; i32.add
              {0x41},
              S(k3),  // i32.const k3
              {0x10},
              U(callee),       // call the defined helper
              {0x1a, kEnd}});  // drop; end
}
const Bytes kAddBody = {0x00, 0x20, 0x00, 0x20, 0x01, 0x6a, kEnd};

// Module A: import log = 0; worker = 1 (type 1), add = 2 (type 2).
Bytes ModuleA() {
  return Module({Types({kVoidType, kUnaryType, kBinaryType}), Imports({{"log", 1}}),
                 Functions({1, 2}), Memory(), ExportFunc("run", 1),
                 Code({Worker(0, 2, 1024, 5, 7), kAddBody}),
                 ActiveData(1024, std::string_view("hello world\0", 12))});
}
// Module B: the same worker, rebuilt: types reordered, an extra import before log, the
// helper placed before the worker, other constants.
Bytes ModuleB() {
  return Module({Types({kBinaryType, kUnaryType, kVoidType}), Imports({{"abort", 2}, {"log", 1}}),
                 Functions({0, 1}), Code({kAddBody, Worker(1, 2, 2048, 9, 11)})});
}

TEST(IdentityTest, SameBytesGiveSameIdentity) {
  const Bytes bytes = ModuleA();
  const ModuleIdentity first = Compute(bytes);
  const ModuleIdentity second = Compute(bytes);
  ASSERT_EQ(first.functions.size(), 2u);
  ASSERT_EQ(second.functions.size(), 2u);
  for (std::size_t i = 0; i < first.functions.size(); ++i) {
    const FunctionIdentity& a = first.functions[i];
    const FunctionIdentity& b = second.functions[i];
    EXPECT_EQ(a.stable_id, b.stable_id);
    EXPECT_EQ(a.base, b.base);
    EXPECT_EQ(a.token_count, b.token_count);
    EXPECT_EQ(a.minhash, b.minhash);
    EXPECT_EQ(a.structural, b.structural);
    EXPECT_EQ(a.semantic, b.semantic);
    EXPECT_EQ(a.histogram, b.histogram);
    EXPECT_EQ(a.minhash, b.minhash);
    EXPECT_EQ(a.exact, b.exact);
    EXPECT_EQ(a.referenced_strings, b.referenced_strings);
  }
  // Separate builders over copies of the bytes agree too.
  const Bytes copy = bytes;
  EXPECT_EQ(Compute(copy).functions[0].stable_id, first.functions[0].stable_id);
}

TEST(IdentityTest, StableIdSurvivesIndexCallTargetAndConstantChanges) {
  const ModuleIdentity a = Compute(ModuleA());
  const ModuleIdentity b = Compute(ModuleB());
  ASSERT_EQ(a.functions.size(), 2u);
  ASSERT_EQ(b.functions.size(), 2u);
  const FunctionIdentity& worker_a = a.functions[0];
  const FunctionIdentity& worker_b = b.functions[1];
  EXPECT_EQ(worker_a.func_index, 1u);
  EXPECT_EQ(worker_b.func_index, 3u);
  EXPECT_EQ(worker_a.stable_id, worker_b.stable_id);
  EXPECT_EQ(worker_a.id_tier, 0);
  EXPECT_THAT(worker_a.stable_id, StartsWith("w1:"));
  EXPECT_EQ(worker_a.stable_id.size(), 3u + 32u);
  EXPECT_NE(worker_a.exact, worker_b.exact);
  EXPECT_EQ(worker_a.structural, worker_b.structural);
  EXPECT_EQ(worker_a.semantic, worker_b.semantic);
  EXPECT_EQ(worker_a.minhash, worker_b.minhash);
  // The helper too, although its type index changed.
  EXPECT_EQ(a.functions[1].stable_id, b.functions[0].stable_id);
  EXPECT_EQ(a.functions[1].exact, b.functions[0].exact);
}

TEST(IdentityTest, ImportNamesAreNotMasked) {
  // The same worker calling `abort` (same signature as log here) instead of `log`.
  const Bytes log = Module({Types({kUnaryType}), Imports({{"log", 0}, {"warn", 0}}), Functions({0}),
                            Code({Worker(0, 2, 1, 2, 3)})});
  const Bytes warn = Module({Types({kUnaryType}), Imports({{"log", 0}, {"warn", 0}}),
                             Functions({0}), Code({Worker(1, 2, 1, 2, 3)})});
  const ModuleIdentity a = Compute(log);
  const ModuleIdentity b = Compute(warn);
  EXPECT_NE(a.functions[0].stable_id, b.functions[0].stable_id);
  EXPECT_THAT(a.functions[0].call_outs, ElementsAre("env.log"));
  EXPECT_THAT(b.functions[0].call_outs, ElementsAre("env.warn"));
  ASSERT_EQ(a.imports.size(), 2u);
  EXPECT_EQ(a.imports[0].stable_id, "import:env.log");
  EXPECT_EQ(a.imports[1].func_index, 1u);
  EXPECT_EQ(a.imports[1].type_signature, "(i32) -> i32");
}

TEST(IdentityTest, LocalsSignatureAndKeptOperandsChangeTheBase) {
  const Bytes body = {0x00, 0x20, 0x00, 0x1a, kEnd};                    // local.get 0; drop
  const Bytes other_local = {0x00, 0x20, 0x01, 0x1a, kEnd};             // local.get 1; drop
  const Bytes with_local = {0x01, 0x01, 0x7e, 0x20, 0x00, 0x1a, kEnd};  // 1 x i64 declared
  const auto id = [](const Bytes& type, const Bytes& b) {
    return Compute(Module({Types({type}), Functions({0}), Code({b})})).functions.at(0);
  };
  const FunctionIdentity base = id(kUnaryType, body);
  EXPECT_NE(base.stable_id, id(kUnaryType, other_local).stable_id);
  EXPECT_EQ(base.structural, id(kUnaryType, other_local).structural);
  EXPECT_NE(base.stable_id, id(kUnaryType, with_local).stable_id);
  EXPECT_NE(base.stable_id, id(kBinaryType, body).stable_id);
  EXPECT_NE(base.semantic, id(kBinaryType, body).semantic);
}

TEST(IdentityTest, BlockTypeIndexIsReplacedBySignature) {
  // block (type t) ... end where t is (i32) -> i32 at a different index in each module.
  const Bytes body = {0x00, 0x41, 0x01, 0x02, 0x01, 0x1a, 0x41, 0x02, kEnd, 0x1a, kEnd};
  const Bytes body2 = {0x00, 0x41, 0x01, 0x02, 0x00, 0x1a, 0x41, 0x02, kEnd, 0x1a, kEnd};
  const ModuleIdentity a =
      Compute(Module({Types({kVoidType, kUnaryType}), Functions({0}), Code({body})}));
  const ModuleIdentity b =
      Compute(Module({Types({kUnaryType, kVoidType}), Functions({1}), Code({body2})}));
  EXPECT_EQ(a.functions[0].stable_id, b.functions[0].stable_id);
  EXPECT_NE(a.functions[0].exact, b.functions[0].exact);
}

TEST(IdentityTest, FactsFromTheModule) {
  const Bytes bytes =
      Module({Types({kVoidType, kUnaryType, kBinaryType}), Imports({{"log", 1}}), Functions({1, 2}),
              Memory(), ExportFunc("run", 1), Code({Worker(0, 2, 1024, 5, 7), kAddBody}),
              ActiveData(1024, std::string_view("hello world\0", 12)), FunctionNames(1, "worker")});
  const ModuleIdentity m = Compute(bytes);
  ASSERT_EQ(m.functions.size(), 2u);
  const FunctionIdentity& worker = m.functions[0];
  EXPECT_EQ(worker.func_index, 1u);
  EXPECT_EQ(worker.type_signature, "(i32) -> i32");
  EXPECT_EQ(worker.raw_name, "worker");
  EXPECT_TRUE(worker.is_exported);
  EXPECT_THAT(worker.export_names, ElementsAre("run"));
  EXPECT_THAT(worker.call_targets, ElementsAre("env.log"));
  EXPECT_THAT(worker.defined_callees, ElementsAre(2u));
  EXPECT_THAT(worker.referenced_strings, ElementsAre("hello world"));
  EXPECT_EQ(worker.instruction_count, 8u);  // the final end excluded
  EXPECT_THAT(worker.InstructionMnemonics(),
              ElementsAre("local.get", "i32.const", "call", "i32.const", "i32.add", "i32.const",
                          "call", "drop"));
  EXPECT_EQ(worker.token_count, 9u);  // the final end is a token
  EXPECT_EQ(worker.histogram[static_cast<std::size_t>(OpClass::kConst)], 3u);
  EXPECT_EQ(worker.histogram[static_cast<std::size_t>(OpClass::kCall)], 2u);
  EXPECT_EQ(worker.histogram[static_cast<std::size_t>(OpClass::kIntArith)], 1u);
  EXPECT_EQ(worker.histogram[static_cast<std::size_t>(OpClass::kLocal)], 1u);
  EXPECT_EQ(worker.histogram[static_cast<std::size_t>(OpClass::kParametric)], 1u);
  EXPECT_EQ(worker.histogram[static_cast<std::size_t>(OpClass::kControl)], 0u);
  const FunctionIdentity& add = m.functions[1];
  EXPECT_EQ(add.type_signature, "(i32, i32) -> i32");
  EXPECT_FALSE(add.raw_name.has_value());
  EXPECT_FALSE(add.is_exported);
  EXPECT_TRUE(add.call_targets.empty());
  EXPECT_EQ(add.instruction_count, 3u);
}

TEST(IdentityTest, CallTargetsAreDeduplicatedInFirstOccurrenceOrder) {
  // call warn; call_indirect (type 0); call log; call warn; call_indirect; end
  const Bytes body = Cat({{0x00},
                          {0x10, 0x01},
                          {0x11, 0x00, 0x00},
                          {0x10, 0x00},
                          {0x10, 0x01},
                          {0x11, 0x00, 0x00},
                          {kEnd}});
  const ModuleIdentity m =
      Compute(Module({Types({kVoidType}), Imports({{"log", 0}, {"warn", 0}}), Functions({0}),
                      Section(4, {0x01, 0x70, 0x00, 0x00}), Code({body})}));
  const FunctionIdentity& f = m.functions.at(0);
  EXPECT_THAT(f.call_targets, ElementsAre("env.warn", "<indirect>", "env.log"));
  EXPECT_THAT(f.call_outs, ElementsAre("env.log", "env.warn"));
}

TEST(IdentityTest, ReferencedStringRules) {
  // "hi" is too short, "\x01bad" has a control character, "abcd" follows a NUL, "bcd" is
  // inside a string.
  const std::string data = std::string(
      "hi\0abcd\0\x01"
      "bad\0",
      14);
  const auto strings_for = [&](std::initializer_list<std::int32_t> addresses) {
    Bytes body = {0x00};
    for (std::int32_t a : addresses) body = Cat({body, {0x41}, S(a), {0x1a}});
    body.push_back(kEnd);
    return Compute(Module({Types({kVoidType}), Functions({0}), Memory(), Code({body}),
                           ActiveData(100, data)}))
        .functions.at(0)
        .referenced_strings;
  };
  EXPECT_TRUE(strings_for({100}).empty());
  EXPECT_THAT(strings_for({103, 104, 103, 99, 5000}), ElementsAre("abcd"));
  EXPECT_TRUE(strings_for({108}).empty());
  // No NUL before the segment ends: not a string.
  const Bytes unterminated =
      Module({Types({kVoidType}), Functions({0}), Memory(), Code({{0x00, 0x41, 0x00, 0x1a, kEnd}}),
              ActiveData(0, "abcdef")});
  EXPECT_TRUE(Compute(unterminated).functions.at(0).referenced_strings.empty());
  // Long strings are cut at 200 characters.
  const std::string long_text = std::string(300, 'x') + std::string(1, '\0');
  const Bytes long_module =
      Module({Types({kVoidType}), Functions({0}), Memory(), Code({{0x00, 0x41, 0x00, 0x1a, kEnd}}),
              ActiveData(0, long_text)});
  EXPECT_THAT(Compute(long_module).functions.at(0).referenced_strings,
              ElementsAre(std::string(200, 'x')));
}

// Constants of every size resolve: identity keeps them in LEB128 until Finish, so addresses
// at each encoding length's edges (1 to 5 bytes, and 2^32 - 16 from a negative i32.const)
// must come back exactly, in first-occurrence order.
TEST(IdentityTest, ConstantsOfEverySizeResolve) {
  const std::vector<std::int64_t> addresses = {100,        128,     16000,     16384,
                                               2097000,    2097152, 268435000, 268435456,
                                               0x7ffffff0, -16};  // the last: 0xfffffff0
  Bytes data = U(addresses.size());
  Bytes body = {0x00};
  std::vector<std::string> expected;
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    const std::string text = fmt::format("str{:03}", i);
    Bytes bytes(text.begin(), text.end());
    bytes.push_back(0);
    data = Cat({data, {0x00, 0x41}, S(addresses[i]), {kEnd}, Sized(bytes)});
    expected.push_back(text);
  }
  // Used in reverse, then again forward with a constant in front: the strings come in order
  // of first use, once each.
  for (std::size_t i = addresses.size(); i-- > 0;)
    body = Cat({body, {0x41}, S(addresses[i]), {0x1a}});
  for (std::int64_t a : addresses) body = Cat({body, {0x41}, S(a), {0x1a}});
  body.push_back(kEnd);
  std::reverse(expected.begin(), expected.end());
  const ModuleIdentity ids = Compute(
      Module({Types({kVoidType}), Functions({0}), Memory(), Code({body}), Section(11, data)}));
  EXPECT_EQ(ids.functions.at(0).referenced_strings, expected);
}

TEST(IdentityTest, OverlappingSegmentsResolveToTheLastWritten) {
  using namespace std::string_view_literals;
  const auto strings_for =
      [](std::int32_t address,
         std::initializer_list<std::pair<std::int32_t, std::string_view>> segments) {
        const Bytes body = Cat({{0x00, 0x41}, S(address), {0x1a, kEnd}});
        return Compute(Module({Types({kVoidType}), Functions({0}), Memory(), Code({body}),
                               ActiveDataSegments(segments)}))
            .functions.at(0)
            .referenced_strings;
      };
  // A: 100..120 "first-segment-text\0", B over its middle at 106: "BBBB\0".
  const auto a = std::pair<std::int32_t, std::string_view>(100, "first\0segment\0text\0"sv);
  const auto b = std::pair<std::int32_t, std::string_view>(106, "\0BBBB\0"sv);
  EXPECT_THAT(strings_for(107, {a, b}), ElementsAre("BBBB"));   // inside B
  EXPECT_THAT(strings_for(100, {a, b}), ElementsAre("first"));  // A before B
  EXPECT_THAT(strings_for(114, {a, b}), ElementsAre("text"));   // A after B
  // Written the other way round, A covers B entirely: A wins everywhere.
  EXPECT_THAT(strings_for(106, {b, a}), ElementsAre("segment"));
  // Disjoint segments out of address order; an address in a gap finds nothing.
  const auto c = std::pair<std::int32_t, std::string_view>(300, "cccc\0"sv);
  EXPECT_THAT(strings_for(300, {c, a}), ElementsAre("cccc"));
  EXPECT_TRUE(strings_for(200, {c, a}).empty());
}

// Three ways to find a constant's segment give the same strings: segments in address order
// without overlap (used as they are, looked up through the page table), the same with one more
// segment far away (the table would be sparse: binary search), and the same written in
// reverse order (painted). Addresses probe every segment's edges, the gaps and page edges.
TEST(IdentityTest, SegmentLookupsAgreeOnEveryLayout) {
  std::mt19937 rng(7);
  std::vector<std::string> texts;
  std::vector<std::pair<std::int32_t, std::string_view>> segments;
  std::int32_t address = 1024;
  for (int i = 0; i < 400; ++i) {
    std::string text;
    const int pieces = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < pieces; ++k) {
      const int len = static_cast<int>(rng() % 12);
      for (int c = 0; c < len; ++c) text.push_back(static_cast<char>('a' + rng() % 26));
      if (rng() % 5 != 0) text.push_back('\0');
    }
    if (text.empty()) text = "q";
    texts.push_back(std::move(text));
    address += static_cast<std::int32_t>(rng() % 3 == 0 ? 0 : rng() % 600);
    segments.emplace_back(address, std::string_view());
    address += static_cast<std::int32_t>(texts.back().size());
  }
  for (std::size_t i = 0; i < segments.size(); ++i) segments[i].second = texts[i];
  std::vector<std::int32_t> probes;
  for (const auto& [start, text] : segments) {
    const auto size = static_cast<std::int32_t>(text.size());
    for (std::int32_t a : {start - 1, start, start + 1, start + size / 2, start + size - 1,
                           start + size, start + size + 1}) {
      probes.push_back(a);
    }
  }
  for (std::int32_t a = 0; a < address + 512; a += 256) probes.push_back(a);
  Bytes body = {0x00};
  for (std::int32_t a : probes) body = Cat({body, {0x41}, S(a), {0x1a}});
  body.push_back(kEnd);
  const auto strings = [&](const std::vector<std::pair<std::int32_t, std::string_view>>& data) {
    return Compute(Module({Types({kVoidType}), Functions({0}), Memory(), Code({body}),
                           ActiveDataSegments(data)}))
        .functions.at(0)
        .referenced_strings;
  };
  const std::vector<std::string> ordered = strings(segments);
  EXPECT_GT(ordered.size(), 100u);
  auto sparse = segments;
  sparse.emplace_back(0x7fff0000, std::string_view("far\0", 4));
  EXPECT_EQ(strings(sparse), ordered);
  auto reversed = segments;
  std::reverse(reversed.begin(), reversed.end());
  EXPECT_EQ(strings(reversed), ordered);
}

TEST(IdentityTest, ConcurrentBodiesGiveTheSameIdentity) {
  // 200 functions: each references one of three strings and calls the previous one; some are
  // duplicates, so the uniqueness tiers are exercised too.
  std::vector<std::uint32_t> types;
  std::vector<Bytes> bodies;
  for (std::uint32_t i = 0; i < 200; ++i) {
    types.push_back(0);
    Bytes body = Cat({{0x00, 0x41}, S(static_cast<std::int32_t>(100 + (i % 3) * 6)), {0x1a}});
    if (i > 0 && i % 4 != 0) body = Cat({body, {0x10}, U(i - 1)});
    body.push_back(kEnd);
    bodies.push_back(body);
  }
  const Bytes module = Module({Types({kVoidType}), Functions(types), Memory(), Code(bodies),
                               ActiveData(100, std::string_view("alpha\0bravo\0charl\0", 18))});
  const ModuleIdentity one = Compute(module);
  wasm::ReadOptions options;
  options.decode_threads = 2;
  Result<ModuleIdentity> two = ComputeModuleIdentity(module, options);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  ASSERT_EQ(two->functions.size(), one.functions.size());
  for (std::size_t i = 0; i < one.functions.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(two->functions[i].stable_id, one.functions[i].stable_id);
    EXPECT_EQ(two->functions[i].minhash, one.functions[i].minhash);
    EXPECT_EQ(two->functions[i].structural, one.functions[i].structural);
    EXPECT_EQ(two->functions[i].referenced_strings, one.functions[i].referenced_strings);
    EXPECT_EQ(two->functions[i].opcode_stream, one.functions[i].opcode_stream);
  }
  EXPECT_THAT(one.functions[1].referenced_strings, ElementsAre("bravo"));
}

TEST(IdentityTest, UniquenessTiers) {
  const Bytes nop1 = {0x00, 0x01, kEnd};
  const Bytes nop2 = {0x00, 0x01, 0x01, kEnd};
  const Bytes call0 = {0x00, 0x10, 0x00, kEnd};         // calls nop1 (index 0)
  const Bytes call1 = {0x00, 0x10, 0x01, kEnd};         // calls nop2 (index 1)
  const Bytes const1 = {0x00, 0x41, 0x01, 0x1a, kEnd};  // i32.const 1; drop
  const Bytes const2 = {0x00, 0x41, 0x02, 0x1a, kEnd};  // i32.const 2; drop
  const ModuleIdentity m =
      Compute(Module({Types({kVoidType}), Functions({0, 0, 0, 0, 0, 0, 0}),
                      Code({nop1, nop2, call0, call1, const1, const2, const1})}));
  ASSERT_EQ(m.functions.size(), 7u);
  const auto& f = m.functions;
  EXPECT_EQ(f[0].id_tier, 0);
  EXPECT_EQ(f[1].id_tier, 0);
  EXPECT_EQ(f[2].id_tier, 1);
  EXPECT_EQ(f[3].id_tier, 1);
  EXPECT_EQ(f[4].id_tier, 3);
  EXPECT_EQ(f[5].id_tier, 2);
  EXPECT_EQ(f[6].id_tier, 3);
  std::set<std::string> ids;
  for (const FunctionIdentity& fn : f) {
    ids.insert(fn.stable_id);
    EXPECT_THAT(fn.stable_id, StartsWith(fn.BaseId()));
  }
  EXPECT_EQ(ids.size(), f.size());
  EXPECT_EQ(f[4].BaseId(), f[5].BaseId());
  EXPECT_THAT(f[4].stable_id, HasSubstr("/t3:"));
  // Reading again gives the same extended ids.
  const ModuleIdentity again =
      Compute(Module({Types({kVoidType}), Functions({0, 0, 0, 0, 0, 0, 0}),
                      Code({nop1, nop2, call0, call1, const1, const2, const1})}));
  for (std::size_t i = 0; i < f.size(); ++i)
    EXPECT_EQ(again.functions[i].stable_id, f[i].stable_id);
}

TEST(IdentityTest, StructuralHashDropsImmediatesButKeepsShape) {
  const auto structural = [](const Bytes& body) {
    return Compute(Module({Types({kVoidType}), Functions({0}), Code({body})}))
        .functions.at(0)
        .structural;
  };
  const Bytes a = {0x00, 0x02, 0x40, 0x0c, 0x00, kEnd, kEnd};                    // block; br 0; end
  const Bytes b = {0x00, 0x02, 0x40, 0x41, 0x07, 0x1a, 0x0c, 0x00, kEnd, kEnd};  // + const
  const Bytes c = {0x00, 0x03, 0x40, 0x0c, 0x00, kEnd, kEnd};                    // loop instead
  EXPECT_EQ(structural(a), structural(b));
  EXPECT_NE(structural(a), structural(c));
}

TEST(IdentityTest, MinHashBasics) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  const auto seeds = MinHashSeeds();
  EXPECT_EQ(std::set<std::uint64_t>(seeds.begin(), seeds.end()).size(), kMinHashSize);
  EXPECT_EQ(MinHashSeeds(), seeds);
  const std::vector<std::string> tokens = {"a", "b", "c", "d", "e", "f"};
  const std::vector<std::string> reversed = {"f", "e", "d", "c", "b", "a"};
  EXPECT_EQ(ComputeMinHash(tokens), ComputeMinHash(tokens));
  EXPECT_NE(ComputeMinHash(tokens), ComputeMinHash(reversed));
  // Fewer than four tokens form one gram, so every value comes from that gram.
  const MinHash short_hash = ComputeMinHash(std::vector<std::string>{"a", "b"});
  EXPECT_NE(short_hash[0], ~std::uint64_t{0});
  EXPECT_NE(ComputeMinHash(std::vector<std::string>{}), short_hash);
}

// The MinHash of docs/warden.md §5.3 written out as its definition (scalar splitmix64 finaliser,
// every gram folded into every seed), against the builder's vectorised version on stream lengths
// around the 8-gram steps of the AVX-512 path.
TEST(IdentityTest, MinHashMatchesItsDefinition) {
  auto mix = [](std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  const auto seeds = MinHashSeeds();
  std::uint64_t state = 12345;
  for (std::size_t n : {0u, 1u, 3u, 4u, 5u, 10u, 11u, 12u, 19u, 100u, 1003u}) {
    std::vector<std::uint64_t> hashes;
    for (std::size_t i = 0; i < n; ++i)
      hashes.push_back(state = mix(state + 0x9e3779b97f4a7c15ULL));
    std::vector<std::uint64_t> grams;
    if (n < kGramSize) {
      std::uint64_t g = 0x9e3779b97f4a7c15ULL;
      for (std::uint64_t h : hashes) g = mix(g ^ h);
      grams.push_back(g);
    } else {
      for (std::size_t i = 0; i + kGramSize <= n; ++i) {
        std::uint64_t g = 0x9e3779b97f4a7c15ULL;
        for (std::size_t k = 0; k < kGramSize; ++k) g = mix(g ^ hashes[i + k]);
        grams.push_back(g);
      }
    }
    MinHash expected;
    expected.fill(~std::uint64_t{0});
    for (std::uint64_t g : grams) {
      for (std::size_t j = 0; j < kMinHashSize; ++j) {
        expected[j] = std::min(expected[j], mix(g ^ seeds[j]));
      }
    }
    EXPECT_EQ(ComputeMinHashOfTokenHashes(hashes), expected) << n << " tokens";
    for (std::string_view fold : internal::MinHashFolds()) {
      EXPECT_EQ(internal::ComputeMinHashWithFold(fold, hashes), expected)
          << n << " tokens, fold " << fold;
    }
  }
  EXPECT_EQ(internal::MinHashFolds().front(), "generic");
  EXPECT_EQ(internal::ComputeMinHashWithFold("none", {}), std::nullopt);
}

TEST(IdentityTest, Classification) {
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kBrTable), OpClass::kControl);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kI64Load32U), OpClass::kLoad);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kI64Store32), OpClass::kStore);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kMemoryGrow), OpClass::kMemoryOther);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kI32Popcnt), OpClass::kBitwise);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kI64RemU), OpClass::kIntArith);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kI64Rotr), OpClass::kBitwise);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kF64Ge), OpClass::kFloatCompare);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kF64Copysign), OpClass::kFloatArith);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kI64Extend32S), OpClass::kConversion);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kI32TruncSatF32S), OpClass::kConversion);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kMemoryCopy), OpClass::kBulk);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kElemDrop), OpClass::kBulk);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kTableFill), OpClass::kTable);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kTableGet), OpClass::kTable);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kRefFunc), OpClass::kReference);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kTryTable), OpClass::kException);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kV128Const), OpClass::kSimd);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kAtomicFence), OpClass::kAtomic);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kSelectT), OpClass::kParametric);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kGlobalSet), OpClass::kGlobal);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kF32Const), OpClass::kConst);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kI64GeU), OpClass::kIntCompare);
  EXPECT_EQ(ClassifyOpcode(wasm::Opcode::kReturnCallIndirect), OpClass::kCall);
}

TEST(IdentityTest, SignatureText) {
  EXPECT_EQ(SignatureText({}), "() -> ()");
  EXPECT_EQ(SignatureText({.params = {wasm::ValType::kI32, wasm::ValType::kI32},
                           .results = {wasm::ValType::kI32}}),
            "(i32, i32) -> i32");
  EXPECT_EQ(SignatureText({.params = {wasm::ValType::kF64},
                           .results = {wasm::ValType::kI32, wasm::ValType::kExternRef}}),
            "(f64) -> (i32, externref)");
}

TEST(IdentityTest, BadTypeIndexInCallIndirectIsMalformed) {
  const Bytes body = {0x00, 0x11, 0x05, 0x00, kEnd};  // call_indirect (type 5)
  Result<ModuleIdentity> result = ComputeModuleIdentity(Module(
      {Types({kVoidType}), Functions({0}), Section(4, {0x01, 0x70, 0x00, 0x00}), Code({body})}));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), base::StatusCode::kMalformed);
  EXPECT_THAT(result.status().ToString(), HasSubstr("type index 5 out of range"));
}

TEST(IdentityTest, MalformedModuleFails) {
  Bytes bytes = ModuleA();
  bytes.resize(bytes.size() - 3);
  EXPECT_FALSE(ComputeModuleIdentity(bytes).ok());
}

TEST(IdentityTest, ImportedTagsAreNamedDefinedTagsKept) {
  // Imported tags, then `throw <tag>; end` in a () -> () function.
  const auto id = [](std::initializer_list<std::string> tags, std::uint32_t thrown) {
    Bytes imports = U(tags.size());
    for (const std::string& t : tags)
      imports = Cat({imports, Name("env"), Name(t), {0x04, 0x00, 0x00}});
    return Compute(Module({Types({kVoidType}), Section(2, imports), Functions({0}),
                           Code({Cat({{0x00, 0x08}, U(thrown), {kEnd}})})}))
        .functions.at(0)
        .stable_id;
  };
  EXPECT_EQ(id({"exn"}, 0), id({"other", "exn"}, 1));
  EXPECT_NE(id({"exn"}, 0), id({"exn2"}, 0));
}

TEST(IdentityTest, PassiveSegmentCopiedByStartFunctionHasAnAddress) {
  // f0 (start): memory.init copies bytes 2..8 ("hello\0") of passive segment 0 to 500.
  const Bytes init =
      Cat({{0x00}, {0x41}, S(500), {0x41}, S(2), {0x41}, S(6), {0xfc}, U(8), {0x00, 0x00}, {kEnd}});
  const Bytes user = Cat({{0x00}, {0x41}, S(500), {0x1a}, {0x41}, S(502), {0x1a}, {kEnd}});
  const Bytes passive =
      Section(11, Cat({U(1), {0x01}, Sized(Bytes{'x', 'x', 'h', 'e', 'l', 'l', 'o', 0x00})}));
  const auto strings = [&](bool with_start) {
    const Bytes bytes =
        with_start ? Module({Types({kVoidType}), Functions({0, 0}), Memory(), Section(8, U(0)),
                             Section(12, U(1)), Code({init, user}), passive})
                   : Module({Types({kVoidType}), Functions({0, 0}), Memory(), Section(12, U(1)),
                             Code({init, user}), passive});
    return Compute(bytes).functions.at(1).referenced_strings;
  };
  EXPECT_THAT(strings(true), ElementsAre("hello"));
  EXPECT_TRUE(strings(false).empty());
}

// Golden ids (docs/warden.md §5.5): an accidental change to normalisation, encoding or hashing
// fails here.
// A deliberate change is a new scheme (a new prefix), never an edit of these values. The nop
// values were also computed independently (a short Python script following the encoding in
// identity.cc), not only copied from a run.
TEST(IdentityTest, GoldenIds) {
  const ModuleIdentity nop = Compute(wasm::testing::OneFunctionModule({0x00, 0x01, kEnd}));
  const ModuleIdentity a = Compute(ModuleA());
  EXPECT_EQ(nop.functions.at(0).stable_id, "w1:2dbc4f3ab40397dc6b3787919cd21b51");
  EXPECT_EQ(a.functions.at(0).stable_id, "w1:b300ba8c393dd065f2dbcedf3a391c0c");
  EXPECT_EQ(base::ToHex(std::span<const std::uint8_t>(a.functions.at(0).structural)),
            "2e2c92d3073e086b173779dd8d45ffb5");
  EXPECT_EQ(nop.functions.at(0).minhash[0], 3110790877770408708u);
}

// Passes every hook identity uses to an IdentityBuilder, but instructions one at a time
// (OnInstruction) instead of in the reader's runs (OnInstructions).
class OneAtATime final : public wasm::ModuleVisitor {
 public:
  explicit OneAtATime(IdentityBuilder& b) : b_(b) {}
  Status OnType(std::uint32_t i, const wasm::FuncType& t) override { return b_.OnType(i, t); }
  Status OnImport(const wasm::Import& i) override { return b_.OnImport(i); }
  Status OnFunctionCount(std::uint32_t n) override { return b_.OnFunctionCount(n); }
  Status OnFunction(wasm::FuncIndex f, std::uint32_t t) override { return b_.OnFunction(f, t); }
  Status OnExport(const wasm::Export& e) override { return b_.OnExport(e); }
  Status OnStart(wasm::FuncIndex f) override { return b_.OnStart(f); }
  Status OnFunctionBody(const wasm::FunctionBody& body) override { return b_.OnFunctionBody(body); }
  Status OnInstructions(wasm::FuncIndex f, std::span<const wasm::Instruction> insts) override {
    for (const wasm::Instruction& inst : insts) RETURN_IF_ERROR(b_.OnInstruction(f, inst));
    return {};
  }
  Status OnFunctionBodyEnd(wasm::FuncIndex f) override { return b_.OnFunctionBodyEnd(f); }
  Status OnDataSegment(const wasm::DataSegment& s) override { return b_.OnDataSegment(s); }
  Status OnFunctionName(wasm::FuncIndex f, std::string_view n) override {
    return b_.OnFunctionName(f, n);
  }

 private:
  IdentityBuilder& b_;
};

// Every output of one function, for comparing two identities.
std::string Describe(const FunctionIdentity& f) {
  std::string out = fmt::format(
      "{} {} {} tier {} base {} structural {} semantic {} exact {} count {} tokens {} "
      "stream {} exported {}",
      f.func_index, f.stable_id, f.type_signature, f.id_tier,
      base::ToHex(std::span<const std::uint8_t>(f.base)),
      base::ToHex(std::span<const std::uint8_t>(f.structural)),
      base::ToHex(std::span<const std::uint8_t>(f.semantic)),
      base::ToHex(std::span<const std::uint8_t>(f.exact)), f.instruction_count, f.token_count,
      base::ToHex(std::span<const std::uint8_t>(
          reinterpret_cast<const std::uint8_t*>(f.opcode_stream.data()), f.opcode_stream.size())),
      f.is_exported);
  out += fmt::format(" histogram {} minhash {}", fmt::join(f.histogram, ","),
                     fmt::join(f.minhash, ","));
  out += fmt::format(" targets {} strings {} callees {} outs {} exports {} name {}",
                     fmt::join(f.call_targets, ","), fmt::join(f.referenced_strings, ","),
                     fmt::join(f.defined_callees, ","), fmt::join(f.call_outs, ","),
                     fmt::join(f.export_names, ","), f.raw_name.value_or("-"));
  return out;
}

// The reader passes instructions in runs; identity must give what it gives for one instruction
// at a time, on the committed Emscripten fixtures (threads, -O0 to -Oz, named) and the reader
// fuzzer's seed modules (SIMD, atomics, exception handling, tables).
TEST(IdentityTest, RunsGiveWhatSingleInstructionsGive) {
  const std::string root = TROVE_SOURCE_DIR;
  std::vector<std::string> paths;
  for (const char* name : {"app-O0", "app-O2", "app-Oz", "app-O0-named", "threads-O0", "threads-O2",
                           "threads-Oz", "threads-Oz-named"}) {
    paths.push_back(root + "/testdata/warden/fixtures/" + name + ".wasm");
  }
  for (const char* name : {"eh_tables", "memory_simd_atomics", "add_with_names"}) {
    paths.push_back(root + "/fuzz/corpus/wasm_reader_fuzzer/" + name + ".wasm");
  }
  base::PosixEnv env;
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    Result<std::string> data = env.ReadFile(path);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(data->data()),
                                              data->size());
    Result<ModuleIdentity> runs = ComputeModuleIdentity(bytes);
    ASSERT_TRUE(runs.ok()) << runs.status().ToString();
    IdentityBuilder builder(bytes);
    OneAtATime single(builder);
    ASSERT_TRUE(wasm::ReadModule(bytes, single).ok());
    const ModuleIdentity one = std::move(builder).Finish();
    ASSERT_EQ(runs->functions.size(), one.functions.size());
    EXPECT_GT(one.functions.size(), 0u);
    for (std::size_t i = 0; i < one.functions.size(); ++i) {
      EXPECT_EQ(Describe(runs->functions[i]), Describe(one.functions[i]));
    }
  }
}

// The token encoding (scheme w1) of every fixed-size operand kind, written out here from the
// scheme's rules rather than taken from identity.cc: the builder encodes such tokens on a
// fast path of its own, which must give exactly these bytes, token hashes and base.
TEST(IdentityTest, FixedSizeTokensAreEncodedAsW1) {
  struct Case {
    Bytes wire;   // the instruction in the body
    Bytes token;  // its w1 token: prefix u8, code u32 (little-endian), normalised operands
  };
  auto op = [](std::uint8_t prefix, std::uint32_t code) {
    return Bytes{prefix, static_cast<std::uint8_t>(code), static_cast<std::uint8_t>(code >> 8),
                 static_cast<std::uint8_t>(code >> 16), static_cast<std::uint8_t>(code >> 24)};
  };
  auto u32 = [](std::uint32_t v) {
    return Bytes{static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(v >> 8),
                 static_cast<std::uint8_t>(v >> 16), static_cast<std::uint8_t>(v >> 24)};
  };
  auto u64 = [](std::uint64_t v) {
    Bytes out;
    for (int k = 0; k < 8; ++k) out.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
    return out;
  };
  const Bytes lanes(16, 0x01);
  const std::vector<Case> cases = {
      {{0x02, 0x40}, Cat({op(0, 0x02), {0x00}})},          // block (empty)
      {{0x02, 0x7e}, Cat({op(0, 0x02), {0x01, 0x7e}})},    // block (result i64)
      {{0x03, 0x40}, Cat({op(0, 0x03), {0x00}})},          // loop
      {{0x0c, 0x02}, Cat({op(0, 0x0c), u32(2)})},          // br 2
      {{0x20, 0x85, 0x01}, Cat({op(0, 0x20), u32(133)})},  // local.get 133
      {{0x23, 0x03}, Cat({op(0, 0x23), u32(3)})},          // global.get 3
      {{0x25, 0x00}, Cat({op(0, 0x25), u32(0)})},          // table.get 0
      {{0x28, 0x02, 0x90, 0x03}, Cat({op(0, 0x28), u32(2), u32(0), u64(400)})},  // i32.load
      {{0x3f, 0x00}, Cat({op(0, 0x3f), u32(0)})},                                // memory.size 0
      {{0x41, 0xe5, 0x00}, op(0, 0x41)},                                  // i32.const 101: masked
      {Cat({{0x44}, u64(0x400921fb54442d18)}), op(0, 0x44)},              // f64.const: masked
      {{0x10, 0x00}, Cat({op(0, 0x10), {0x00}})},                         // call (defined): masked
      {{0xd2, 0x00}, Cat({op(0, 0xd2), {0x00}})},                         // ref.func: masked
      {{0xfc, 0x08, 0x01, 0x00}, Cat({op(0xfc, 0x08), u32(0)})},          // memory.init 1 0
      {{0xfc, 0x09, 0x01}, op(0xfc, 0x09)},                               // data.drop 1
      {{0xfc, 0x0a, 0x00, 0x00}, Cat({op(0xfc, 0x0a), u32(0), u32(0)})},  // memory.copy
      {{0xfc, 0x0c, 0x01, 0x00}, Cat({op(0xfc, 0x0c), u32(0)})},          // table.init 1 0
      {{0xfc, 0x0d, 0x01}, op(0xfc, 0x0d)},                               // elem.drop 1
      {{0xfc, 0x0e, 0x00, 0x00}, Cat({op(0xfc, 0x0e), u32(0), u32(0)})},  // table.copy
      {{0xfd, 0x54, 0x00, 0x08, 0x03},
       Cat({op(0xfd, 0x54), u32(0), u32(0), u64(8), {0x03}})},     // v128.load8_lane
      {{0xfd, 0x15, 0x02}, Cat({op(0xfd, 0x15), {0x02}})},         // i8x16.extract_lane_s
      {Cat({{0xfd, 0x0d}, lanes}), Cat({op(0xfd, 0x0d), lanes})},  // i8x16.shuffle
      {{0xfe, 0x03, 0x00}, op(0xfe, 0x03)},                        // atomic.fence
      {{0x1a}, op(0, 0x1a)},                                       // drop
      {{0x0b}, op(0, 0x0b)},                                       // end (loop)
      {{0x0b}, op(0, 0x0b)},                                       // end (block)
      {{0x0b}, op(0, 0x0b)},                                       // end (block)
      {{0x0b}, op(0, 0x0b)},                                       // the body's end
  };
  Bytes body = {0x00};  // no locals
  std::string expected;
  auto put32 = [&](std::uint32_t v) {
    for (std::uint8_t b : u32(v)) expected.push_back(static_cast<char>(b));
  };
  const std::string signature = "() -> ()";
  put32(static_cast<std::uint32_t>(signature.size()));
  expected += signature;
  put32(0);  // local groups
  put32(static_cast<std::uint32_t>(cases.size()));
  std::vector<std::uint64_t> token_hashes;
  for (const Case& c : cases) {
    body = Cat({body, c.wire});
    const std::string token(c.token.begin(), c.token.end());
    put32(static_cast<std::uint32_t>(token.size()));
    expected += token;
    token_hashes.push_back(Fnv1a64(token));
  }
  const Bytes module = wasm::testing::Module(
      {Section(1, {0x01, 0x60, 0x00, 0x00}), Section(3, {0x01, 0x00}),
       Section(4, {0x01, 0x70, 0x00, 0x01}),  // table 0: funcref, min 1
       Section(5, {0x01, 0x00, 0x01}),        // memory 0
       Section(6, {0x02, 0x7f, 0x00, 0x41, 0x00, kEnd, 0x7f, 0x00, 0x41, 0x00, kEnd}),
       Section(12, {0x02}),  // data count
       Section(10, Cat({{0x01}, Sized(body)})),
       Section(11, {0x02, 0x01, 0x00, 0x01, 0x00})});  // two passive data segments
  Result<ModuleIdentity> ids = ComputeModuleIdentity(module);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  const FunctionIdentity& f = ids->functions.at(0);
  EXPECT_EQ(f.token_count, cases.size());
  EXPECT_EQ(base::ToHex(std::span<const std::uint8_t>(f.base)),
            base::ToHex(std::span<const std::uint8_t>(Sha256Prefix(expected))));
  EXPECT_EQ(f.minhash, ComputeMinHashOfTokenHashes(token_hashes));
}

}  // namespace
}  // namespace trove::warden::identity

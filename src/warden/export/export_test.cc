#include "warden/export/export.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace trove::warden::exporter {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ExportInput Sample() {
  ExportInput in;
  in.label = "v1-rc.2";
  in.emscripten_version = "3.1.6";
  in.functions.push_back({.index = 3,
                          .stable_id = "w1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                          .type_signature = "(i32, i64) -> f32",
                          .name = "sqlite3_open",
                          .provenance = "human",
                          .confidence = 1.0,
                          .locked = true,
                          .body_offset = 100});
  in.functions.push_back({.index = 4,
                          .stable_id = "w1:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                          .type_signature = "() -> ()",
                          .body_offset = 140});
  in.functions.push_back({.index = 5,
                          .stable_id = "w1:cccccccccccccccccccccccccccccccc",
                          .type_signature = "(v128) -> (i32, i32)",
                          .name = "std::vector<int>::push_back */",
                          .provenance = "agent",
                          .confidence = 0.35,
                          .body_offset = 180});
  in.functions.push_back({.index = 6,
                          .stable_id = "w1:dddddddddddddddddddddddddddddddd",
                          .type_signature = "(f64) -> f64",
                          .name = "sqlite3_open",  // a duplicate name
                          .provenance = "oracle",
                          .confidence = 0.9,
                          .body_offset = 220});
  return in;
}

TEST(ExportTest, Headers) {
  const std::string h = ExportHeaders(Sample());
  EXPECT_THAT(h, HasSubstr("#ifndef WARDEN_V1_RC_2_H\n#define WARDEN_V1_RC_2_H\n"));
  EXPECT_THAT(h, HasSubstr("(Emscripten 3.1.6)"));
  EXPECT_THAT(h, HasSubstr("/* func[3] (i32, i64) -> f32 human 1.000 */\n"
                           "float sqlite3_open(int32_t p0, int64_t p1);\n"));
  EXPECT_THAT(h, HasSubstr("void wasm_func_4(void);\n"));
  // Sanitised, the original kept in the comment without closing it; two results -> void.
  EXPECT_THAT(h, HasSubstr("name \"std::vector<int>::push_back * /\" results (i32, i32) */\n"
                           "void std__vector_int___push_back___(v128_t p0);\n"));
  EXPECT_THAT(h, HasSubstr("double sqlite3_open_6(double p0);\n"));
  EXPECT_EQ(h.back(), '\n');
  EXPECT_EQ(h, ExportHeaders(Sample()));  // deterministic
}

TEST(ExportTest, KbText) {
  EXPECT_EQ(
      ExportKbText(Sample()),
      "# warden kb-text 1 v1-rc.2\n"
      "3\tw1:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\tL\thuman\t1.000\tsqlite3_open\n"
      "4\tw1:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\t-\t-\t-\t-\n"
      "5\tw1:cccccccccccccccccccccccccccccccc\t-\tagent\t0.350\tstd::vector<int>::push_back */\n"
      "6\tw1:dddddddddddddddddddddddddddddddd\t-\toracle\t0.900\tsqlite3_open\n");
}

TEST(ExportTest, Ghidra) {
  const std::string g = ExportGhidra(Sample());
  EXPECT_THAT(g, HasSubstr("    (3, 100, \"sqlite3_open\"),\n"));
  EXPECT_THAT(g, Not(HasSubstr("(4, 140")));  // unnamed functions are not renamed
  EXPECT_THAT(g, HasSubstr("print(\"WARDEN: applied %d names, missed %d\""));
  EXPECT_EQ(g, ExportGhidra(Sample()));
}

TEST(ExportTest, FormatsAndIdentifiers) {
  EXPECT_TRUE(ParseFormat("kb-text").ok());
  EXPECT_FALSE(ParseFormat("json").ok());
  EXPECT_EQ(CIdentifier(std::nullopt, 7), "wasm_func_7");
  EXPECT_EQ(CIdentifier(std::string("9lives"), 7), "_9lives");
  EXPECT_EQ(CIdentifier(std::string("a.b-c"), 7), "a_b_c");
}

}  // namespace
}  // namespace trove::warden::exporter

namespace trove::warden::exporter {
namespace {

TEST(ExportPseudoTest, LiftedAndNotLifted) {
  ExportInput in;
  in.label = "v2";
  in.functions.push_back({.index = 1,
                          .stable_id = "w1:aa",
                          .type_signature = "(i32) -> i32",
                          .name = "inc",
                          .summary = "adds one",
                          .provenance = "agent",
                          .confidence = 0.4,
                          .instruction_count = 3});
  const std::map<std::uint32_t, std::string> lifted = {{1, "  return (p0 + 1);\n"}};
  EXPECT_EQ(ExportPseudo(in, &lifted, ""),
            "/* WARDEN pseudo-C of version v2 (Emscripten unknown). */\n"
            "\n/* func[1] (i32) -> i32 agent 0.400\n * adds one */\n"
            "int32_t inc(int32_t p0) {\n  return (p0 + 1);\n}\n");
  EXPECT_THAT(ExportPseudo(in, nullptr, "module not found at /x.wasm"),
              HasSubstr("  /* not lifted: module not found at /x.wasm; 3 instructions */\n"));
}

}  // namespace
}  // namespace trove::warden::exporter

#include "warden/ingest/module_facts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "warden/wasm/reader.h"
#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::ingest {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using wasm::testing::Bytes;
using wasm::testing::Cat;
using wasm::testing::Module;
using wasm::testing::Name;
using wasm::testing::Section;
using wasm::testing::U;

ModuleFacts FactsOf(const Bytes& module) {
  ModuleFactsVisitor v;
  EXPECT_TRUE(wasm::ReadModule(module, v).ok());
  return std::move(v.facts());
}

TEST(ModuleFactsTest, MemoriesImportedAndDefined) {
  // An imported shared memory (flags 3: max + shared) and a defined memory64 (flags 4).
  const Bytes imports = Cat({U(1), Name("env"), Name("memory"), {0x02, 0x03, 0x01, 0x10}});
  const Bytes memories = {0x01, 0x04, 0x01};
  const ModuleFacts f = FactsOf(Module({Section(2, imports), Section(5, memories)}));
  EXPECT_EQ(f.memory_count, 2u);
  EXPECT_TRUE(f.shared_memory);
  EXPECT_TRUE(f.memory64);
  const ModuleFacts none = FactsOf(Module({}));
  EXPECT_EQ(none.memory_count, 0u);
  EXPECT_FALSE(none.shared_memory);
}

TEST(ModuleFactsTest, ProducersAndTargetFeatures) {
  const Bytes producers =
      Cat({Name("producers"), U(2), Name("language"), U(1), Name("C99"), Name(""),
           Name("processed-by"), U(2), Name("clang"), Name("15.0"), Name("walrus"), Name("0.20")});
  const Bytes features =
      Cat({Name("target_features"), U(2), {'+'}, Name("simd128"), {'-'}, Name("atomics")});
  const ModuleFacts f = FactsOf(Module({Section(0, producers), Section(0, features)}));
  EXPECT_THAT(f.features, ElementsAre("+simd128", "-atomics"));
  EXPECT_EQ(FeaturesJson(f), R"(["+simd128","-atomics"])");
  EXPECT_EQ(ProducersJson(f),
            R"({"language":[["C99",""]],"processed-by":[["clang","15.0"],["walrus","0.20"]]})");
  ASSERT_EQ(f.custom_sections.size(), 2u);
  EXPECT_EQ(f.custom_sections[0].name, "producers");
  EXPECT_TRUE(f.warnings.empty());
}

TEST(ModuleFactsTest, MalformedOptionalSectionsAreIgnoredWithAWarning) {
  const Bytes bad_features = Cat({Name("target_features"), U(1), {'?'}, Name("simd128")});
  const Bytes bad_producers = Cat({Name("producers"), U(3), Name("language")});
  const ModuleFacts f = FactsOf(Module({Section(0, bad_features), Section(0, bad_producers)}));
  EXPECT_TRUE(f.features.empty());
  EXPECT_TRUE(f.producers.empty());
  ASSERT_EQ(f.warnings.size(), 2u);
  EXPECT_THAT(f.warnings[0], HasSubstr("target_features"));
  EXPECT_THAT(f.warnings[0], HasSubstr("0x"));
  EXPECT_THAT(f.warnings[1], HasSubstr("producers"));
}

TEST(ModuleFactsTest, CSymbolNameAndMinifiedExports) {
  EXPECT_EQ(CSymbolName("_malloc"), "malloc");
  EXPECT_EQ(CSymbolName("__errno_location"), "_errno_location");
  EXPECT_EQ(CSymbolName("main"), "main");
  EXPECT_EQ(CSymbolName("_"), "_");
  EXPECT_FALSE(ExportsLookMinified({}));
  EXPECT_TRUE(ExportsLookMinified({"a", "b", "c", "d", "sqlite3_open"}));  // 80 %
  EXPECT_FALSE(ExportsLookMinified({"a", "b", "c", "sqlite3_open"}));      // 75 %
}

identity::FunctionIdentity Fn(std::uint32_t index, std::vector<std::string> exports,
                              std::optional<std::string> raw_name = {}) {
  identity::FunctionIdentity f;
  f.func_index = index;
  f.export_names = std::move(exports);
  f.raw_name = std::move(raw_name);
  return f;
}

TEST(ModuleFactsTest, SeedsInGateOrder) {
  identity::ModuleIdentity m;
  m.imports.push_back(
      {.func_index = 0, .module = "env", .field = "a", .stable_id = "import:env.a"});
  m.imports.push_back(
      {.func_index = 1, .module = "env", .field = "b", .stable_id = "import:env.b"});
  m.functions.push_back(Fn(2, {"c"}, "named_in_section"));
  m.functions.push_back(Fn(3, {"sqlite3_open"}));
  m.functions.push_back(Fn(4, {"zz"}));  // two characters: minified on its own
  GlueBindings glue;
  glue.exports["c"] = "_helper";
  glue.imports["a"] = "_emscripten_memcpy_big";

  auto text = [](const std::vector<kb::SeedName>& seeds) {
    std::vector<std::string> out;
    for (const kb::SeedName& s : seeds) {
      out.push_back(std::to_string(s.func_index) + ":" + s.name + ":" +
                    std::to_string(static_cast<int>(s.source)));
    }
    return out;
  };
  EXPECT_THAT(text(PlanSeeds(m, &glue)),
              ElementsAre("2:named_in_section:0", "2:helper:1", "3:sqlite3_open:2",
                          "0:_emscripten_memcpy_big:1", "1:env.b:2"));
  // Without glue, "c" is a one-letter export: minified, not seeded.
  EXPECT_THAT(text(PlanSeeds(m, nullptr)),
              ElementsAre("2:named_in_section:0", "3:sqlite3_open:2", "0:env.a:2", "1:env.b:2"));
}

}  // namespace
}  // namespace trove::warden::ingest

#include "warden/agents/facts.h"

#include <gtest/gtest.h>

#include "warden/agents/offline_backend.h"
#include "warden/identity/identity.h"
#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::agents {
namespace {

using wasm::testing::Bytes;
using wasm::testing::Cat;
using wasm::testing::Module;
using wasm::testing::Name;
using wasm::testing::S;
using wasm::testing::Section;
using wasm::testing::Sized;
using wasm::testing::U;

// Import env.log (i32) -> i32; func 1 "entry" calls func 2 twice and the import; func 2
// ("helper" in the name section) returns the address of "hello world".
Bytes TestModule() {
  const Bytes unary = {0x60, 0x01, 0x7f, 0x01, 0x7f};
  Bytes types = Section(1, Cat({U(1), unary}));
  Bytes imports = Section(2, Cat({U(1), Name("env"), Name("log"), {0x00}, U(0)}));
  Bytes functions = Section(3, Cat({U(2), U(0), U(0)}));
  Bytes memory = Section(5, {0x01, 0x00, 0x01});
  Bytes exports = Section(7, Cat({U(1), Name("entry"), {0x00}, U(1)}));
  Bytes entry = {0x00, 0x20, 0x00, 0x10, 0x02, 0x10, 0x02, 0x10, 0x00, 0x0b};
  Bytes helper = Cat({{0x00, 0x41}, S(16), {0x0b}});
  Bytes code = Section(10, Cat({U(2), Sized(entry), Sized(helper)}));
  std::string text("hello world\0", 12);
  Bytes data =
      Section(11, Cat({U(1), {0x00, 0x41}, S(16), {0x0b}, Sized(Bytes(text.begin(), text.end()))}));
  Bytes names = Section(0, Cat({Name("name"), {0x01}, Sized(Cat({U(1), U(2), Name("helper")}))}));
  return Module({types, imports, functions, memory, exports, code, data, names});
}

TEST(FactsFromIdentityTest, CarriesEverySection81Field) {
  Bytes bytes = TestModule();
  Result<identity::ModuleIdentity> module = identity::ComputeModuleIdentity(bytes);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ASSERT_EQ(module->functions.size(), 2u);

  FunctionFacts entry = FactsFromIdentity(module->functions[0]);
  EXPECT_EQ(entry.func_index, 1u);
  EXPECT_EQ(entry.stable_id, module->functions[0].stable_id);
  EXPECT_EQ(entry.stable_id.rfind("w1:", 0), 0u);
  EXPECT_EQ(entry.type_signature, "(i32) -> i32");
  EXPECT_EQ(entry.call_targets, std::vector<std::string>{"env.log"});
  EXPECT_EQ(entry.instruction_mnemonics,
            (std::vector<std::string>{"local.get", "call", "call", "call"}));
  EXPECT_TRUE(entry.is_exported);
  EXPECT_EQ(entry.export_names, std::vector<std::string>{"entry"});
  EXPECT_FALSE(entry.raw_name.has_value());
  EXPECT_EQ(entry.defined_callees, std::vector<std::uint32_t>{2});  // deduplicated

  FunctionFacts helper = FactsFromIdentity(module->functions[1]);
  EXPECT_EQ(helper.func_index, 2u);
  EXPECT_EQ(helper.referenced_strings, std::vector<std::string>{"hello world"});
  EXPECT_EQ(helper.raw_name, "helper");
  EXPECT_FALSE(helper.is_exported);
  EXPECT_TRUE(helper.defined_callees.empty());

  // The offline name ends with the first 6 hex digits of the base.
  Proposal p = OfflineProposal(helper, {});
  std::string base_hex = module->functions[1].BaseId().substr(3, 6);
  EXPECT_EQ(p.name, "str_hello_world_" + base_hex);
}

TEST(FunctionFactsToJsonTest, ExactlyTheEightFieldsInOrder) {
  FunctionFacts f;
  f.func_index = 3;
  f.stable_id = "w1:ab";
  f.type_signature = "() -> ()";
  f.call_targets = {"env.log", "<indirect>"};
  f.referenced_strings = {"say \"hi\""};
  f.instruction_mnemonics = {"nop"};
  f.export_names = {"not_in_the_object"};
  f.defined_callees = {4};
  EXPECT_EQ(FunctionFactsToJson(f),
            R"j({"func_index":3,"stable_id":"w1:ab","type_signature":"() -> ()",)j"
            R"j("call_targets":["env.log","<indirect>"],"referenced_strings":["say \"hi\""],)j"
            R"j("raw_name":null,"instruction_mnemonics":["nop"],"is_exported":false})j");
  f.raw_name = "named";
  EXPECT_NE(FunctionFactsToJson(f).find(R"("raw_name":"named")"), std::string::npos);
}

}  // namespace
}  // namespace trove::warden::agents

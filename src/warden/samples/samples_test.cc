// The samples writer: its modules read back as written (indices, calls, names, exports, data),
// wabt's wasm-validate accepts them when it is installed (scripts/setup installs wabt), and
// malformed descriptions are refused.
#include "warden/samples/samples.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "base/testing/temp_dir.h"
#include "warden/identity/identity.h"

namespace trove::warden::samples {
namespace {

Module SmallModule() {
  Module m;
  m.imports.push_back({.key = "log", .module = "env", .field = "log", .sig = {{kI32}, {}}});
  Function& add = m.functions.emplace_back();
  add.key = "add";
  add.name = "add";
  add.sig = {{kI32, kI32}, {kI32}};
  add.body.LocalGet(0).LocalGet(1).Op(0x6a);
  Function& greet = m.functions.emplace_back();
  greet.key = "greet";
  greet.name = "greet";
  greet.exports = {"greet"};
  greet.sig = {{}, {kI32}};
  greet.locals = {kI32, kI32, kI64};
  greet.body.I32Const(16).Call("log").I32Const(2).I32Const(3).Call("add").LocalSet(0);
  greet.body.Block().Loop().LocalGet(0).I32Const(1).Op(0x6b).LocalTee(0).BrIf(0).End().End();
  greet.body.I32Const(0).Memory(0x28, 2, 4).LocalGet(0).Op(0x6a);
  Function& unnamed = m.functions.emplace_back();
  unnamed.key = "unnamed";
  unnamed.sig = {{}, {}};
  unnamed.body.Call("greet").Drop();
  m.data.push_back({.address = 16, .bytes = std::string("hello samples\0", 14)});
  return m;
}

TEST(SamplesTest, ModuleReadsBackAsWritten) {
  Result<std::vector<std::uint8_t>> bytes = WriteModule(SmallModule());
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  Result<identity::ModuleIdentity> id = identity::ComputeModuleIdentity(*bytes);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  ASSERT_EQ(id->imports.size(), 1u);
  EXPECT_EQ(id->imports[0].stable_id, "import:env.log");
  ASSERT_EQ(id->functions.size(), 3u);
  const identity::FunctionIdentity& add = id->functions[0];
  const identity::FunctionIdentity& greet = id->functions[1];
  const identity::FunctionIdentity& unnamed = id->functions[2];
  EXPECT_EQ(add.func_index, 1u);
  EXPECT_EQ(add.raw_name, "add");
  EXPECT_EQ(add.type_signature, "(i32, i32) -> i32");
  EXPECT_EQ(add.instruction_count, 3u);
  EXPECT_EQ(greet.raw_name, "greet");
  EXPECT_EQ(greet.export_names, std::vector<std::string>{"greet"});
  EXPECT_EQ(greet.call_outs, std::vector<std::string>{"env.log"});
  EXPECT_EQ(greet.defined_callees, std::vector<std::uint32_t>{1});
  EXPECT_EQ(greet.referenced_strings, std::vector<std::string>{"hello samples"});
  EXPECT_FALSE(unnamed.raw_name.has_value());
  EXPECT_EQ(unnamed.defined_callees, std::vector<std::uint32_t>{2});
}

TEST(SamplesTest, ReorderingMovesCallsAlong) {
  Module m = SmallModule();
  std::swap(m.functions[0], m.functions[2]);  // unnamed, greet, add
  Result<std::vector<std::uint8_t>> bytes = WriteModule(m);
  ASSERT_TRUE(bytes.ok());
  Result<identity::ModuleIdentity> id = identity::ComputeModuleIdentity(*bytes);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(id->functions[0].defined_callees, std::vector<std::uint32_t>{2});  // greet
  EXPECT_EQ(id->functions[1].defined_callees, std::vector<std::uint32_t>{3});  // add
  EXPECT_EQ(id->functions[2].raw_name, "add");
}

TEST(SamplesTest, StrippedModuleHasNoNames) {
  Module m = SmallModule();
  m.name_section = false;
  Result<std::vector<std::uint8_t>> bytes = WriteModule(m);
  ASSERT_TRUE(bytes.ok());
  Result<identity::ModuleIdentity> id = identity::ComputeModuleIdentity(*bytes);
  ASSERT_TRUE(id.ok());
  for (const identity::FunctionIdentity& f : id->functions) EXPECT_FALSE(f.raw_name.has_value());
}

TEST(SamplesTest, RefusesBadDescriptions) {
  Module dup = SmallModule();
  dup.functions[1].key = "add";
  EXPECT_EQ(WriteModule(dup).status().message(), "sample module: duplicate key 'add'");
  Module unknown = SmallModule();
  unknown.functions[2].body.Call("nowhere");
  EXPECT_EQ(WriteModule(unknown).status().message(),
            "sample module: function 'unnamed' calls unknown key 'nowhere'");
  Module no_memory = SmallModule();
  no_memory.memory_pages = 0;
  EXPECT_FALSE(WriteModule(no_memory).ok());
}

// wabt's validator is the independent judge of "valid wasm"; scripts/setup installs it.
TEST(SamplesTest, WabtValidates) {
  if (std::system("command -v wasm-validate >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "wasm-validate (Debian wabt) is not installed";
  }
  base::testing::TempDir dir("trove_samples_test");
  Module stripped = SmallModule();
  stripped.name_section = false;
  int n = 0;
  for (const Module& m : {SmallModule(), stripped}) {
    Result<std::vector<std::uint8_t>> bytes = WriteModule(m);
    ASSERT_TRUE(bytes.ok());
    const std::string path = dir.path() + "/m" + std::to_string(n++) + ".wasm";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()),
               static_cast<std::streamsize>(bytes->size()));
    EXPECT_EQ(std::system(("wasm-validate '" + path + "'").c_str()), 0) << path;
  }
}

}  // namespace
}  // namespace trove::warden::samples

// The demo's modules (demo_modules.h): they read back, the runtime is named, the application is
// stripped, the runtime inside the application keeps the runtime's stable_ids, and v1 -> v2
// changes exactly the planted functions; wasm-validate accepts all three when installed.
#include "warden/samples/demo_modules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "base/testing/temp_dir.h"
#include "warden/identity/identity.h"

namespace trove::warden::samples {
namespace {

identity::ModuleIdentity Identity(const Module& m) {
  Result<std::vector<std::uint8_t>> bytes = WriteModule(m);
  EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
  Result<identity::ModuleIdentity> id = identity::ComputeModuleIdentity(*bytes);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  return id.ok() ? *id : identity::ModuleIdentity{};
}

// key -> base stable_id, by position (functions are in the description's order).
std::map<std::string, std::string> BaseIds(const Module& m) {
  const identity::ModuleIdentity id = Identity(m);
  std::map<std::string, std::string> out;
  EXPECT_EQ(id.functions.size(), m.functions.size());
  for (std::size_t i = 0; i < id.functions.size() && i < m.functions.size(); ++i) {
    out[m.functions[i].key] = id.functions[i].BaseId();
  }
  return out;
}

TEST(DemoModulesTest, RuntimeIsNamedAndApplicationStripped) {
  const DemoPlan plan = DemoModulesPlan();
  const identity::ModuleIdentity runtime = Identity(DemoRuntime());
  ASSERT_EQ(runtime.functions.size(), plan.runtime.size());
  for (std::size_t i = 0; i < plan.runtime.size(); ++i) {
    EXPECT_EQ(runtime.functions[i].raw_name, plan.runtime[i]);
    // Big enough for the Oracle's keyed passes (>= 5 instructions).
    EXPECT_GE(runtime.functions[i].instruction_count, 5u) << plan.runtime[i];
  }
  for (int version : {1, 2}) {
    const identity::ModuleIdentity app = Identity(DemoApplication(version));
    ASSERT_EQ(app.imports.size(), 1u);
    EXPECT_EQ(app.functions.size(), plan.runtime.size() + plan.application.size());
    std::set<std::string> exports;
    for (const identity::FunctionIdentity& f : app.functions) {
      EXPECT_FALSE(f.raw_name.has_value());
      for (const std::string& e : f.export_names) exports.insert(e);
    }
    EXPECT_EQ(exports, std::set<std::string>(plan.exported.begin(), plan.exported.end()));
  }
}

TEST(DemoModulesTest, PlantedEditsAreTheOnlyChanges) {
  const DemoPlan plan = DemoModulesPlan();
  const std::map<std::string, std::string> runtime = BaseIds(DemoRuntime());
  const std::map<std::string, std::string> v1 = BaseIds(DemoApplication(1));
  const std::map<std::string, std::string> v2 = BaseIds(DemoApplication(2));
  // The runtime linked into the application fingerprints as the corpus module does.
  for (const std::string& key : plan.runtime) EXPECT_EQ(v1.at(key), runtime.at(key)) << key;
  EXPECT_TRUE(v1.contains(plan.deleted));
  EXPECT_FALSE(v2.contains(plan.deleted));
  EXPECT_FALSE(v1.contains(plan.added));
  EXPECT_TRUE(v2.contains(plan.added));
  EXPECT_NE(v1.at(plan.modified), v2.at(plan.modified));
  for (const auto& [key, id] : v1) {
    if (key == plan.deleted || key == plan.modified) continue;
    EXPECT_EQ(v2.at(key), id) << key;
  }
  // Every stable_id is unique within a version, so the diff's keyed passes can pair them.
  for (const auto* ids : {&v1, &v2}) {
    std::set<std::string> seen;
    for (const auto& [key, id] : *ids) EXPECT_TRUE(seen.insert(id).second) << key;
  }
  // Reordered: no application function keeps its index from v1 to v2.
  const Module m1 = DemoApplication(1);
  const Module m2 = DemoApplication(2);
  for (std::size_t i = 0; i < std::min(m1.functions.size(), m2.functions.size()); ++i) {
    EXPECT_NE(m1.functions[i].key, m2.functions[i].key) << i;
  }
}

TEST(DemoModulesTest, WabtValidates) {
  if (std::system("command -v wasm-validate >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "wasm-validate (Debian wabt) is not installed";
  }
  base::testing::TempDir dir("trove_demo_modules_test");
  int n = 0;
  for (const Module& m : {DemoRuntime(), DemoApplication(1), DemoApplication(2)}) {
    Result<std::vector<std::uint8_t>> bytes = WriteModule(m);
    ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
    const std::string path = dir.path() + "/m" + std::to_string(n++) + ".wasm";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()),
               static_cast<std::streamsize>(bytes->size()));
    EXPECT_EQ(std::system(("wasm-validate '" + path + "'").c_str()), 0) << path;
  }
}

}  // namespace
}  // namespace trove::warden::samples

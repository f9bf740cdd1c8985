// Opt-in (built into warden_real_modules_test): the two non-Emscripten modules of
// docs/warden.md §10.4, the Rust @resvg/resvg-wasm 2.6.2 and the Go esbuild-wasm 0.28.2,
// ingested without glue into a real KB; their `producers` (and, where present,
// `target_features`) sections are stored and shown as `versions`, `show` and `coverage --json`
// show them. Each case skips when its module is absent from node_modules/ (or from
// $TROVE_REAL_MODULES_DIR, e.g. a directory where `npm pack` output was unpacked).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"
#include "warden/views/json_views.h"

namespace trove::warden::cli {
namespace {

std::string ModulesDir() {
  const char* dir = std::getenv("TROVE_REAL_MODULES_DIR");
  return dir != nullptr && *dir != '\0' ? std::string(dir) + "/"
                                        : std::string(TROVE_SOURCE_DIR) + "/node_modules/";
}

struct ToolchainModule {
  std::string wasm;        // under the modules directory
  std::uint32_t imported;  // §10.4's table
  std::uint32_t defined;
  std::vector<std::string> producers;  // items ProducersText must contain (§10.4)
};

const std::vector<ToolchainModule> kModules = {
    {"@resvg/resvg-wasm/index_bg.wasm",
     18,
     1'433,
     {"rustc 1.76.0-nightly", "walrus 0.20.3", "wasm-bindgen 0.2.92"}},
    {"esbuild-wasm/esbuild.wasm", 22, 5'307, {"Go go1.26.5"}},
};

class RealModulesToolchainTest : public ::testing::TestWithParam<ToolchainModule> {};

TEST_P(RealModulesToolchainTest, IngestsAndShowsItsProducers) {
  const ToolchainModule& m = GetParam();
  const std::string path = ModulesDir() + m.wasm;
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << path << " is absent; npm pack it (docs/warden.md §10.4) and set "
                 << "TROVE_REAL_MODULES_DIR, or install it under node_modules/";
  }
  base::PosixEnv env;
  base::testing::TempDir dir("warden_real_toolchain");
  kb::KbOptions kb_options;
  kb_options.create_if_missing = true;
  auto opened = kb::Kb::Open(env, dir.path() + "/real.db", kb_options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  kb::Kb& k = **opened;

  Result<ingest::IngestReport> r = ingest::IngestFile(env, k, path, {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->imported, m.imported);
  EXPECT_EQ(r->defined, m.defined);
  EXPECT_FALSE(r->emscripten_version.has_value());  // not Emscripten: nothing to infer from
  EXPECT_TRUE(r->module.warnings.empty()) << r->module.warnings.front();
  EXPECT_FALSE(r->module.producers.empty());

  Result<kb::VersionInfo> v = k.GetVersion(r->store.version_id);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  const std::string text = views::ProducersText(*v);
  for (const std::string& item : m.producers) {
    EXPECT_NE(text.find(item), std::string::npos) << text << " lacks " << item;
  }
  const views::Json toolchain = views::ToolchainJson(*v);
  ASSERT_TRUE(toolchain["producers"].is_object()) << toolchain.dump();
  EXPECT_TRUE(toolchain["producers"].contains("processed-by") ||
              toolchain["producers"].contains("language"))
      << toolchain.dump();
  ASSERT_TRUE(toolchain["target_features"].is_array());
  EXPECT_EQ(toolchain["target_features"].size(), r->module.features.size());
  // The listing shows the same.
  Result<std::vector<kb::VersionInfo>> all = k.ListVersions();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(views::ProducersText(all->front()), text);
  EXPECT_EQ(views::VersionJson(all->front())["producers"], toolchain["producers"]);
}

INSTANTIATE_TEST_SUITE_P(Npm, RealModulesToolchainTest, ::testing::ValuesIn(kModules),
                         [](const ::testing::TestParamInfo<ToolchainModule>& param_info) {
                           std::string name;
                           for (char c : param_info.param.wasm) {
                             name += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
                           }
                           return name;
                         });

}  // namespace
}  // namespace trove::warden::cli

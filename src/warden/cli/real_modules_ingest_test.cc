// Opt-in (built into warden_real_modules_test): the real npm modules of docs/warden.md §10.4
// ingested into a real KB with their glue, as `warden ingest --glue` does. Each case skips
// when node_modules/ lacks its files.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "warden/cli/glue_input.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"

namespace trove::warden::cli {
namespace {

const std::string kModules = std::string(TROVE_SOURCE_DIR) + "/node_modules/";

struct RealModule {
  std::string wasm;  // under node_modules/
  std::string glue;
  std::uint32_t imported;  // §10.4's table
  std::uint32_t defined;
};

// Both sql.js releases (1.8.0 under its npm alias) and ffmpeg-core.
const std::vector<RealModule> kIngested = {
    {"sql.js/dist/sql-wasm.wasm", "sql.js/dist/sql-wasm.js", 40, 1'968},
    {"sql.js-1.8.0/dist/sql-wasm.wasm", "sql.js-1.8.0/dist/sql-wasm.js", 34, 1'937},
    {"@ffmpeg/core/dist/esm/ffmpeg-core.wasm", "@ffmpeg/core/dist/esm/ffmpeg-core.js", 71, 22'209},
};

class RealModulesIngestTest : public ::testing::TestWithParam<RealModule> {};

TEST_P(RealModulesIngestTest, IngestsWithItsGlue) {
  const RealModule& m = GetParam();
  if (!std::filesystem::exists(kModules + m.wasm)) {
    GTEST_SKIP() << kModules << m.wasm << " is absent; run npm ci to fetch the real modules";
  }
  base::PosixEnv env;
  base::testing::TempDir dir("warden_real_ingest");
  kb::KbOptions kb_options;
  kb_options.create_if_missing = true;
  auto opened = kb::Kb::Open(env, dir.path() + "/real.db", kb_options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  kb::Kb& k = **opened;

  Result<GlueInput> glue = ReadGlue(env, kModules + m.glue);
  ASSERT_TRUE(glue.ok()) << glue.status().ToString();
  ingest::IngestOptions options;
  options.glue_path = kModules + m.glue;
  options.glue_json = glue->json;
  options.glue = &glue->bindings;
  Result<ingest::IngestReport> r = ingest::IngestFile(env, k, kModules + m.wasm, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->imported, m.imported);
  EXPECT_EQ(r->defined, m.defined);
  EXPECT_FALSE(r->store.already_ingested);
  EXPECT_EQ(r->store.seeds_accepted[0], 0);  // §10.4: no name section
  EXPECT_GT(r->store.seeds_accepted[1] + r->store.seeds_accepted[2], 0);

  Result<kb::Coverage> cov = k.GetCoverage(r->store.version_id);
  ASSERT_TRUE(cov.ok());
  EXPECT_EQ(cov->defined, m.defined);
  kb::FunctionQuery q;
  q.version_id = r->store.version_id;
  q.include_imports = true;
  Result<kb::FunctionPage> page = k.ListFunctions(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->functions.size(), m.imported + m.defined);
  for (std::uint32_t i = 0; i < page->functions.size(); ++i) {
    EXPECT_EQ(page->functions[i].index, i);
  }

  Result<ingest::IngestReport> again = ingest::IngestFile(env, k, kModules + m.wasm, options);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->store.already_ingested);
}

INSTANTIATE_TEST_SUITE_P(Npm, RealModulesIngestTest, ::testing::ValuesIn(kIngested),
                         [](const ::testing::TestParamInfo<RealModule>& param_info) {
                           std::string name;
                           for (char c : param_info.param.wasm) {
                             name += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
                           }
                           return name;
                         });

}  // namespace
}  // namespace trove::warden::cli

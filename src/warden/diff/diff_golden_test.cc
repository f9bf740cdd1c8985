// The diff's full report on real module pairs, compared byte for byte with golden files
// (testdata/warden/diff/*.report.json): every function's class, pass, score and components.
// The goldens were written by the engine before its speed-up (docs/decisions/0072), so this test
// asserts that the faster passes classify exactly as the slower ones did.
// To regenerate after an intended change: `warden_diff_test --gtest_filter='DiffGolden*'
// --update`, then review the diff of testdata/warden/diff/.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "warden/diff/diff.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"

namespace trove::warden::diff {

bool g_update = false;

namespace {

const std::string kFixtures = std::string(TROVE_SOURCE_DIR) + "/testdata/warden/fixtures/";
const std::string kGoldens = std::string(TROVE_SOURCE_DIR) + "/testdata/warden/diff/";

struct GoldenPair {
  std::string from;  // fixture file names
  std::string to;
  std::string golden;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class DiffGoldenTest : public ::testing::TestWithParam<GoldenPair> {};

TEST_P(DiffGoldenTest, ReportEqualsTheGolden) {
  const GoldenPair& p = GetParam();
  base::PosixEnv env;
  base::testing::TempDir dir("warden_diff_golden");
  kb::KbOptions options;
  options.create_if_missing = true;
  auto opened = kb::Kb::Open(env, dir.path() + "/g.db", options);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  kb::Kb& k = **opened;
  std::int64_t ids[2] = {0, 0};
  const std::string files[2] = {p.from, p.to};
  for (int i = 0; i < 2; ++i) {
    ingest::IngestOptions o;
    o.label = i == 0 ? "from" : "to";
    auto r = ingest::IngestFile(env, k, kFixtures + files[i], o);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ids[i] = r->store.version_id;
  }
  auto from = LoadSide(k, ids[0]);
  auto to = LoadSide(k, ids[1]);
  ASSERT_TRUE(from.ok() && to.ok());
  const DiffReport report = ComputeDiff(*from, *to);
  // The full report, and the form stored in `diffs` (its own serialiser).
  const std::string got[2] = {ReportJson(report, /*include_unchanged=*/true) + "\n",
                              StoredReportJson(report) + "\n"};
  const std::string stem = p.golden.substr(0, p.golden.find('.'));
  const std::string paths[2] = {kGoldens + p.golden, kGoldens + stem + ".stored.json"};
  for (int i = 0; i < 2; ++i) {
    if (g_update) {
      std::ofstream(paths[i], std::ios::binary) << got[i];
      continue;
    }
    const std::string want = ReadFile(paths[i]);
    ASSERT_FALSE(want.empty()) << paths[i] << " is missing: run warden_diff_test --update";
    EXPECT_TRUE(got[i] == want) << "the report of " << p.from << " -> " << p.to << " differs from "
                                << paths[i]
                                << "; run warden_diff_test --update and review the diff";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, DiffGoldenTest,
    ::testing::Values(GoldenPair{"app-O2.wasm", "app-Oz.wasm", "app-O2-Oz.report.json"},
                      GoldenPair{"app-O0.wasm", "app-O2.wasm", "app-O0-O2.report.json"},
                      GoldenPair{"threads-O2.wasm", "threads-Oz.wasm", "threads-O2-Oz.report.json"},
                      GoldenPair{"app-O2.wasm", "threads-O2.wasm", "app-threads-O2.report.json"}),
    [](const ::testing::TestParamInfo<GoldenPair>& param_info) {
      std::string name;
      for (char c : param_info.param.golden.substr(0, param_info.param.golden.find('.'))) {
        name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      }
      return name;
    });

}  // namespace
}  // namespace trove::warden::diff

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--update") trove::warden::diff::g_update = true;
  }
  return RUN_ALL_TESTS();
}

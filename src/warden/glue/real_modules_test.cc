// Opt-in tests on the real-world modules of docs/warden.md §10.4, pinned as devDependencies in
// the root package.json (`npm ci` fetches them). Each test skips when its files are absent.
// Every module must read and fingerprint, with the imported / defined counts of §10.4's table,
// and the packages' glue must parse and agree with the module beside it.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "warden/glue/glue.h"
#include "warden/glue/module_summary_testing.h"
#include "warden/identity/identity.h"

namespace trove::warden::glue {
namespace {

using testing::FileExists;
using testing::ModuleSummary;
using testing::ReadFileOrEmpty;

const std::string kModules = std::string(TROVE_SOURCE_DIR) + "/node_modules/";

struct RealModule {
  std::string wasm;  // under node_modules/
  std::string glue;  // its JS glue
  std::size_t bytes;
  std::uint32_t imported;
  std::uint32_t defined;
  // Function exports the glue does not bind (runtime internals it never reads by key).
  std::size_t max_unbound_function_exports;
};

// docs/warden.md §10.4. `sql.js-1.8.0` is the npm alias of sql.js@1.8.0. ffmpeg-core's umd build
// ships the same .wasm as its esm build (FfmpegCoreShapes checks), so it is read once.
const std::vector<RealModule> kRealModules = {
    {"sql.js/dist/sql-wasm.wasm", "sql.js/dist/sql-wasm.js", 688'197, 40, 1'968, 1},
    {"sql.js/dist/sql-wasm-debug.wasm", "sql.js/dist/sql-wasm-debug.js", 770'495, 39, 2'216, 1},
    {"sql.js-1.8.0/dist/sql-wasm.wasm", "sql.js-1.8.0/dist/sql-wasm.js", 613'426, 34, 1'937, 0},
    {"sql.js-1.8.0/dist/sql-wasm-debug.wasm", "sql.js-1.8.0/dist/sql-wasm-debug.js", 678'984, 36,
     2'808, 0},
    {"@ffmpeg/core/dist/esm/ffmpeg-core.wasm", "@ffmpeg/core/dist/esm/ffmpeg-core.js", 32'232'419,
     71, 22'209, 0},
};

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class RealModulesTest : public ::testing::TestWithParam<RealModule> {};

TEST_P(RealModulesTest, ReadsFingerprintsAndMatchesItsGlue) {
  const RealModule& r = GetParam();
  if (!FileExists(kModules + r.wasm)) {
    GTEST_SKIP() << kModules << r.wasm << " is absent; run npm ci to fetch the real modules";
  }
  const std::string bytes = ReadFileOrEmpty(kModules + r.wasm);
  EXPECT_EQ(bytes.size(), r.bytes);

  Result<ModuleSummary> summary = testing::Summarise(bytes);
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();
  EXPECT_EQ(summary->imported_functions, r.imported);
  EXPECT_EQ(summary->defined_functions, r.defined);
  EXPECT_FALSE(summary->has_name_section);  // §10.4: none of them keeps names

  const auto start = std::chrono::steady_clock::now();
  Result<identity::ModuleIdentity> id = identity::ComputeModuleIdentity(testing::Bytes(bytes));
  const double seconds = SecondsSince(start);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  RecordProperty("identity_seconds", std::to_string(seconds));
  std::printf("  %s: identity of %zu functions in %.3f s\n", r.wasm.c_str(), id->functions.size(),
              seconds);
  EXPECT_EQ(id->imports.size(), r.imported);
  EXPECT_EQ(id->functions.size(), r.defined);
  std::set<std::string> ids;
  for (const identity::FunctionIdentity& fn : id->functions) ids.insert(fn.stable_id);
  EXPECT_EQ(ids.size(), id->functions.size());  // the tiers make every stable_id unique

  // The glue beside it.
  const std::string js = ReadFileOrEmpty(kModules + r.glue);
  ASSERT_FALSE(js.empty()) << r.glue;
  Result<GlueFacts> glue = ParseGlue(js);
  ASSERT_TRUE(glue.ok()) << glue.status().ToString();
  EXPECT_TRUE(glue->version_hints.empty());  // §4.4: sql.js and ffmpeg-core glue state none
  EXPECT_FALSE(glue->pthread.threads);
  for (const ExportBinding& b : glue->exports) {
    EXPECT_EQ(summary->exports.count(b.export_name), 1u) << b.export_name;
    EXPECT_FALSE(b.PreferredName().empty()) << b.export_name;
  }
  std::size_t unbound = 0;
  for (const std::string& name : summary->FunctionExports()) {
    if (glue->FindExport(name) == nullptr) ++unbound;
  }
  EXPECT_LE(unbound, r.max_unbound_function_exports);
  // The import object binds exactly the module's import fields, under its import modules.
  std::set<std::string> fields;
  for (const ImportBinding& b : glue->imports) fields.insert(b.field);
  EXPECT_EQ(fields, summary->ImportFields());
  const std::set<std::string> modules(glue->import_modules.begin(), glue->import_modules.end());
  EXPECT_EQ(modules, summary->ImportModules());
}

INSTANTIATE_TEST_SUITE_P(Npm, RealModulesTest, ::testing::ValuesIn(kRealModules),
                         [](const ::testing::TestParamInfo<RealModule>& param_info) {
                           std::string name;
                           for (char c : param_info.param.wasm) {
                             name += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
                           }
                           return name;
                         });

// Export key -> Module keys, and the import fields, of one glue file (JS identifiers are left
// out: minifiers pick them per build).
struct Bindings {
  std::map<std::string, std::vector<std::string>> exports;
  std::set<std::string> import_fields;
  bool operator==(const Bindings&) const = default;
};

std::optional<Bindings> BindingsOf(const std::string& path) {
  const std::string js = ReadFileOrEmpty(kModules + path);
  if (js.empty()) return std::nullopt;
  Result<GlueFacts> facts = ParseGlue(js);
  if (!facts.ok()) return std::nullopt;
  Bindings out;
  for (const ExportBinding& b : facts->exports) out.exports[b.export_name] = b.module_keys;
  for (const ImportBinding& b : facts->imports) out.import_fields.insert(b.field);
  return out;
}

// The packages' other builds of the same module (browser and worker variants; docs/warden.md §10.4:
// the
// -browser .wasm equals the Node one) bind the same exports and imports.
TEST(RealGlueTest, ShippedVariantsAgree) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"sql.js/dist/sql-wasm-browser.js", "sql.js/dist/sql-wasm.js"},
      {"sql.js/dist/sql-wasm-browser-debug.js", "sql.js/dist/sql-wasm-debug.js"},
      {"sql.js/dist/worker.sql-wasm.js", "sql.js/dist/sql-wasm.js"},
      {"sql.js/dist/worker.sql-wasm-debug.js", "sql.js/dist/sql-wasm-debug.js"},
      {"sql.js-1.8.0/dist/worker.sql-wasm.js", "sql.js-1.8.0/dist/sql-wasm.js"},
      {"sql.js-1.8.0/dist/worker.sql-wasm-debug.js", "sql.js-1.8.0/dist/sql-wasm-debug.js"}};
  std::size_t compared = 0;
  for (const auto& [variant, reference] : pairs) {
    const std::optional<Bindings> a = BindingsOf(variant);
    const std::optional<Bindings> b = BindingsOf(reference);
    if (!a || !b) continue;
    EXPECT_GT(a->exports.size(), 50u) << variant;
    EXPECT_TRUE(*a == *b) << variant << " vs " << reference;
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "the npm packages are absent; run npm ci";
}

// The asm.js and inline-wasm builds (several MB of JS) use the same glue shapes.
TEST(RealGlueTest, AsmJsAndInlineBuildsBindTheApi) {
  std::size_t parsed = 0;
  for (std::string path : {"sql.js/dist/sql-asm.js", "sql.js/dist/sql-asm-debug.js",
                           "sql.js/dist/sql-wasm-inline.js", "sql.js-1.8.0/dist/sql-asm.js"}) {
    const std::optional<Bindings> b = BindingsOf(path);
    if (!b) continue;
    std::size_t api = 0;
    for (const auto& [key, module_keys] : b->exports) {
      for (const std::string& k : module_keys) {
        if (k == "_sqlite3_free" || k == "_sqlite3_prepare_v2" || k == "_malloc") ++api;
      }
    }
    EXPECT_EQ(api, 3u) << path;
    ++parsed;
  }
  if (parsed == 0) GTEST_SKIP() << "the npm packages are absent; run npm ci";
}

// The minified sql.js 1.16.0 glue binds exports through the exports object of its
// receiveInstance (`k._sqlite3_free=c.R`) and imports as inline functions.
TEST(RealGlueTest, SqlJsMinifiedShapes) {
  const std::string js = ReadFileOrEmpty(kModules + "sql.js/dist/sql-wasm.js");
  if (js.empty()) GTEST_SKIP() << "sql.js is absent; run npm ci";
  Result<GlueFacts> glue = ParseGlue(js);
  ASSERT_TRUE(glue.ok());
  bool found = false;
  for (const ExportBinding& b : glue->exports) {
    if (b.PreferredName() == "_sqlite3_free") {
      found = true;
      EXPECT_EQ(b.shapes, std::vector<ExportShape>{ExportShape::kBatchAssign});
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(glue->import_modules, std::vector<std::string>{"a"});
}

// sql.js 1.8.0's minified glue uses lazy wrappers over `e.asm.K`; its debug glue uses
// createExportWrapper and lists dynCall signatures.
TEST(RealGlueTest, SqlJs180Shapes) {
  const std::string js = ReadFileOrEmpty(kModules + "sql.js-1.8.0/dist/sql-wasm.js");
  const std::string debug = ReadFileOrEmpty(kModules + "sql.js-1.8.0/dist/sql-wasm-debug.js");
  if (js.empty() || debug.empty()) GTEST_SKIP() << "sql.js 1.8.0 is absent; run npm ci";
  Result<GlueFacts> glue = ParseGlue(js);
  ASSERT_TRUE(glue.ok());
  std::size_t lazy = 0;
  for (const ExportBinding& b : glue->exports) {
    lazy += std::count(b.shapes.begin(), b.shapes.end(), ExportShape::kLazyWrapper);
  }
  EXPECT_GT(lazy, 40u);
  Result<GlueFacts> dbg = ParseGlue(debug);
  ASSERT_TRUE(dbg.ok());
  const ExportBinding* free_binding = dbg->FindExport("sqlite3_free");
  ASSERT_NE(free_binding, nullptr);
  EXPECT_EQ(free_binding->PreferredName(), "_sqlite3_free");
  EXPECT_EQ(dbg->import_object, "asmLibraryArg");
  EXPECT_EQ(dbg->dyncall_signatures,
            (std::vector<std::string>{"iiiiiij", "iiiij", "iij", "iiji", "iijii", "jiji", "viji"}));
}

// ffmpeg-core binds `_ffmpeg` through a lazy wrapper over Module["asm"]["ya"].
TEST(RealGlueTest, FfmpegCoreShapes) {
  const std::string js = ReadFileOrEmpty(kModules + "@ffmpeg/core/dist/esm/ffmpeg-core.js");
  if (js.empty()) GTEST_SKIP() << "@ffmpeg/core is absent; run npm ci";
  Result<GlueFacts> glue = ParseGlue(js);
  ASSERT_TRUE(glue.ok());
  const ExportBinding* ffmpeg = glue->FindExport("ya");
  ASSERT_NE(ffmpeg, nullptr);
  EXPECT_EQ(ffmpeg->PreferredName(), "_ffmpeg");
  EXPECT_EQ(ffmpeg->shapes, std::vector<ExportShape>{ExportShape::kLazyWrapper});
  EXPECT_EQ(glue->import_object, "wasmImports");
  const ImportBinding* b = glue->FindImport("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->js_name, "___assert_fail");

  // The umd build: the same .wasm, and glue that differs only in its module wrapper.
  const std::string umd_js = ReadFileOrEmpty(kModules + "@ffmpeg/core/dist/umd/ffmpeg-core.js");
  if (umd_js.empty()) return;
  EXPECT_TRUE(ReadFileOrEmpty(kModules + "@ffmpeg/core/dist/umd/ffmpeg-core.wasm") ==
              ReadFileOrEmpty(kModules + "@ffmpeg/core/dist/esm/ffmpeg-core.wasm"));
  Result<GlueFacts> umd = ParseGlue(umd_js);
  ASSERT_TRUE(umd.ok());
  ASSERT_EQ(umd->exports.size(), glue->exports.size());
  for (std::size_t i = 0; i < umd->exports.size(); ++i) {
    EXPECT_EQ(umd->exports[i].export_name, glue->exports[i].export_name);
    EXPECT_EQ(umd->exports[i].PreferredName(), glue->exports[i].PreferredName());
  }
  ASSERT_EQ(umd->imports.size(), glue->imports.size());
  for (std::size_t i = 0; i < umd->imports.size(); ++i) {
    EXPECT_EQ(umd->imports[i].field, glue->imports[i].field);
    EXPECT_EQ(umd->imports[i].js_name, glue->imports[i].js_name);
  }
}

}  // namespace
}  // namespace trove::warden::glue

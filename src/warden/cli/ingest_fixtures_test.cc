// Ingest into a real KB, as `warden ingest [--glue FILE]` does: every committed Emscripten
// fixture (testdata/warden/fixtures/) with the glue beside it where the build kept one, and
// the command's own input checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "warden/cli/commands.h"
#include "warden/cli/glue_input.h"
#include "warden/identity/identity.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"

namespace trove::warden::cli {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(TROVE_SOURCE_DIR) + "/testdata/warden/fixtures/";

struct Fixture {
  std::string wasm;                 // file name under kFixtures
  std::optional<std::string> glue;  // its glue, when one was kept
};

// Every .wasm fixture, with `<stem>.js` as its glue, else the glue of the same build without
// --profiling-funcs (the MANIFEST: "-named.js equals <stem>.js but for the file names").
std::vector<Fixture> AllFixtures() {
  std::vector<Fixture> out;
  for (const fs::directory_entry& e : fs::directory_iterator(kFixtures)) {
    if (e.path().extension() != ".wasm") continue;
    Fixture f{e.path().filename().string(), std::nullopt};
    std::string stem = e.path().stem().string();
    if (fs::exists(kFixtures + stem + ".js")) {
      f.glue = stem + ".js";
    } else if (stem.ends_with("-named")) {
      stem.resize(stem.size() - 6);
      if (fs::exists(kFixtures + stem + ".js")) f.glue = stem + ".js";
    }
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(),
            [](const Fixture& a, const Fixture& b) { return a.wasm < b.wasm; });
  return out;
}

class IngestFixturesTest : public ::testing::Test {
 protected:
  std::unique_ptr<kb::Kb> OpenNew(const std::string& name) {
    kb::KbOptions options;
    options.create_if_missing = true;
    auto opened = kb::Kb::Open(env_, dir_.path() + "/" + name, options);
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }

  base::testing::TempDir dir_{"warden_ingest_fixtures"};
  base::PosixEnv env_;
};

TEST_F(IngestFixturesTest, EveryFixtureIngestsWithItsGlue) {
  const std::vector<Fixture> fixtures = AllFixtures();
  ASSERT_EQ(fixtures.size(), 12u);  // {app,threads} x {O0,O2,Oz} x {stripped,named}
  // All in one KB (builds share functions, so later seeds meet earlier names), and each alone
  // in a KB of its own (every seed lands on an empty slot).
  std::unique_ptr<kb::Kb> all = OpenNew("all.db");
  ASSERT_NE(all, nullptr);
  std::int64_t versions = 0;
  for (const Fixture& f : fixtures) {
    SCOPED_TRACE(f.wasm);
    std::unique_ptr<kb::Kb> own = OpenNew(f.wasm + ".db");
    ASSERT_NE(own, nullptr);
    const std::string path = kFixtures + f.wasm;
    ingest::IngestOptions options;
    std::optional<GlueInput> glue;
    if (f.glue) {
      Result<GlueInput> parsed = ReadGlue(env_, kFixtures + *f.glue);
      ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
      glue = std::move(parsed).value();
      options.glue_path = kFixtures + *f.glue;
      options.glue_json = glue->json;
      options.glue = &glue->bindings;
      options.emscripten_version = glue->emscripten_version;
      options.emscripten_version_source = glue->emscripten_version_source;
    }
    Result<ingest::IngestReport> shared = ingest::IngestFile(env_, *all, path, options);
    ASSERT_TRUE(shared.ok()) << shared.status().ToString();
    EXPECT_FALSE(shared->store.already_ingested);
    ++versions;
    Result<ingest::IngestReport> r = ingest::IngestFile(env_, *own, path, options);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->store.already_ingested);
    kb::Kb* k = own.get();

    // The counts agree with the identity computed straight from the bytes.
    Result<std::string> bytes = env_.ReadFile(path);
    ASSERT_TRUE(bytes.ok());
    Result<identity::ModuleIdentity> id = identity::ComputeModuleIdentity(
        std::span(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()));
    ASSERT_TRUE(id.ok()) << id.status().ToString();
    EXPECT_EQ(r->imported, id->imports.size());
    EXPECT_EQ(r->defined, id->functions.size());
    EXPECT_EQ(r->size, bytes->size());
    EXPECT_EQ(r->module.shared_memory, f.wasm.starts_with("threads-"));

    // One row per function, the stable_ids those of the identity, in index order.
    kb::FunctionQuery q;
    q.version_id = r->store.version_id;
    Result<kb::FunctionPage> page = k->ListFunctions(q);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ASSERT_EQ(page->functions.size(), id->functions.size());
    for (std::size_t i = 0; i < id->functions.size(); ++i) {
      EXPECT_EQ(page->functions[i].stable_id, id->functions[i].stable_id) << i;
    }
    Result<kb::Coverage> cov = k->GetCoverage(r->store.version_id);
    ASSERT_TRUE(cov.ok());
    EXPECT_EQ(cov->defined, static_cast<std::int64_t>(r->defined));

    // Seeds, into the empty KB: only the -named builds have a name section; every build has
    // exports the glue or the export section names.
    const auto& seeded = r->store.seeds_accepted;
    if (f.wasm.find("-named") != std::string::npos) {
      EXPECT_GT(seeded[0], 0) << "name-section seeds";
    } else {
      EXPECT_EQ(seeded[0], 0);
    }
    EXPECT_GT(cov->named, 0);
    EXPECT_LE(cov->named, seeded[0] + seeded[1] + seeded[2]);  // imports take seeds too

    // The same bytes again write nothing.
    Result<ingest::IngestReport> again = ingest::IngestFile(env_, *all, path, options);
    ASSERT_TRUE(again.ok()) << again.status().ToString();
    EXPECT_TRUE(again->store.already_ingested);
    EXPECT_EQ(again->store.version_id, shared->store.version_id);
  }
  Result<std::vector<kb::VersionInfo>> listed = all->ListVersions();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(static_cast<std::int64_t>(listed->size()), versions);
}

// `ingest --db new.db missing.wasm` fails before creating the database (docs/warden.md §2.1: a
// failed command leaves nothing behind).
TEST_F(IngestFixturesTest, MissingInputCreatesNoDatabase) {
  GlobalOptions global;
  global.cwd = dir_.path();
  global.db = dir_.path() + "/new.db";
  IngestArgs args;
  args.wasm = dir_.path() + "/missing.wasm";
  EXPECT_EQ(RunIngest(env_, global, args), kExitUsage);
  EXPECT_FALSE(fs::exists(*global.db));

  args.wasm = kFixtures + "app-Oz.wasm";
  args.glue = dir_.path() + "/missing.js";
  EXPECT_EQ(RunIngest(env_, global, args), kExitUsage);
  EXPECT_FALSE(fs::exists(*global.db));

  args.glue.reset();
  EXPECT_EQ(RunIngest(env_, global, args), kExitOk);
  EXPECT_TRUE(fs::exists(*global.db));
}

// A relative module path is recorded absolute and canonical, so lifting works from anywhere.
TEST_F(IngestFixturesTest, RelativePathsAreRecordedAbsolute) {
  GlobalOptions global;
  global.cwd = kFixtures + "../fixtures/.";
  global.db = dir_.path() + "/rel.db";
  IngestArgs args;
  args.wasm = "./app-Oz.wasm";
  args.glue = "app-Oz.js";
  ASSERT_EQ(RunIngest(env_, global, args), kExitOk);
  auto k = kb::Kb::Open(env_, *global.db);
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  Result<std::vector<kb::VersionInfo>> versions = (*k)->ListVersions();
  ASSERT_TRUE(versions.ok());
  ASSERT_EQ(versions->size(), 1u);
  Result<kb::VersionInfo> v = (*k)->GetVersion(versions->front().id);
  ASSERT_TRUE(v.ok());
  const std::string expected = fs::canonical(kFixtures + "app-Oz.wasm").string();
  EXPECT_EQ(v->wasm_path, expected);
  EXPECT_EQ(v->glue_path, fs::canonical(kFixtures + "app-Oz.js").string());
}

}  // namespace
}  // namespace trove::warden::cli

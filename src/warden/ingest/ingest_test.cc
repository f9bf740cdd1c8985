#include "warden/ingest/ingest.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "base/env.h"
#include "base/testing/temp_dir.h"
#include "warden/kb/kb.h"
#include "warden/wasm/testing/wasm_builder.h"

namespace trove::warden::ingest {
namespace {

using base::StatusCode;
using base::testing::TempDir;
using ::testing::HasSubstr;
using wasm::testing::Bytes;
using wasm::testing::Cat;
using wasm::testing::Module;
using wasm::testing::Name;
using wasm::testing::Section;
using wasm::testing::Sized;
using wasm::testing::U;

// Imports env.log (func 0); defines func 1 (exported "sqlite3_open", named "open_db" in the
// name section) and func 2 (calls the import), over a shared memory.
Bytes SampleModule() {
  const Bytes types = Cat({U(1), {0x60, 0x00, 0x00}});
  const Bytes imports = Cat({U(2),
                             Name("env"),
                             Name("log"),
                             {0x00, 0x00},
                             Name("env"),
                             Name("memory"),
                             {0x02, 0x03, 0x01, 0x02}});
  const Bytes functions = Cat({U(2), U(0), U(0)});
  const Bytes exports = Cat({U(1), Name("sqlite3_open"), {0x00}, U(1)});
  const Bytes code = Cat({U(2), Sized({0x00, 0x01, 0x0b}), Sized({0x00, 0x10, 0x00, 0x0b})});
  const Bytes names = Cat({Name("name"), {0x01}, Sized(Cat({U(1), U(1), Name("open_db")}))});
  return Module({Section(1, types), Section(2, imports), Section(3, functions), Section(7, exports),
                 Section(10, code), Section(0, names)});
}

std::string AsString(const Bytes& b) { return std::string(b.begin(), b.end()); }

class IngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb::KbOptions options;
    options.create_if_missing = true;
    Result<std::unique_ptr<kb::Kb>> opened = kb::Kb::Open(env_, dir_.path() + "/w.db", options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    kb_ = std::move(opened).value();
  }
  std::string Write(const std::string& name, const Bytes& bytes) {
    const std::string path = dir_.path() + "/" + name;
    EXPECT_TRUE(env_.WriteFile(path, AsString(bytes)).ok());
    return path;
  }

  TempDir dir_;
  base::PosixEnv env_;
  std::unique_ptr<kb::Kb> kb_;
};

TEST_F(IngestTest, PrepareBuildsEveryRecord) {
  const Bytes bytes = SampleModule();
  Result<PreparedVersion> p = PrepareVersion(bytes, "/x/a.wasm", IngestOptions{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->version.imported_count, 1u);
  EXPECT_EQ(p->version.defined_count, 2u);
  EXPECT_TRUE(p->version.shared_memory);
  EXPECT_EQ(p->version.memory_count, 1u);
  EXPECT_EQ(p->version.sha256.size(), 64u);
  ASSERT_EQ(p->functions.size(), 3u);
  EXPECT_TRUE(p->functions[0].is_import);
  EXPECT_EQ(p->functions[0].stable_id, "import:env.log");
  EXPECT_EQ(p->functions[1].raw_name, "open_db");
  EXPECT_EQ(p->functions[1].instruction_count, 1u);
  EXPECT_EQ(p->functions[1].opcodes, "\x01");  // nop
  EXPECT_EQ(p->functions[2].call_targets, std::vector<std::string>{"env.log"});
  // Body locations point at the bodies in the bytes: func 2's body is its last 4 bytes
  // before the name section.
  EXPECT_EQ(p->functions[2].body_size, 4u);
  EXPECT_EQ(bytes[p->functions[2].body_offset + 1], 0x10);  // call
  // Seeds: the name section, then the export, then the import.
  ASSERT_EQ(p->seeds.size(), 3u);
  EXPECT_EQ(p->seeds[0].name, "open_db");
  EXPECT_EQ(p->seeds[1].name, "sqlite3_open");
  EXPECT_EQ(p->seeds[2].name, "env.log");
  // Threads give the same records.
  IngestOptions two;
  two.threads = 2;
  Result<PreparedVersion> q = PrepareVersion(bytes, "/x/a.wasm", two);
  ASSERT_TRUE(q.ok());
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(q->functions[i].stable_id, p->functions[i].stable_id);
    EXPECT_EQ(q->functions[i].body_offset, p->functions[i].body_offset);
  }
}

TEST_F(IngestTest, StoresOnceAndSeedsThroughTheGate) {
  const std::string path = Write("a.wasm", SampleModule());
  Result<IngestReport> r = IngestFile(env_, *kb_, path, IngestOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->store.already_ingested);
  EXPECT_EQ(r->store.label, "v1");
  // The name-section name wins the slot; the export name is then rejected (same rank, same
  // confidence); the import seed is accepted.
  EXPECT_EQ(r->store.seeds_accepted[0], 1);
  EXPECT_EQ(r->store.seeds_rejected[2], 1);
  Result<std::uint32_t> index = kb_->ResolveFunction(r->store.version_id, "open_db");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(*index, 1u);

  // The same bytes again: nothing written.
  Result<IngestReport> again = IngestFile(env_, *kb_, path, IngestOptions{});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->store.already_ingested);
  EXPECT_EQ(again->store.version_id, r->store.version_id);
  Result<std::vector<kb::VersionInfo>> versions = kb_->ListVersions();
  ASSERT_TRUE(versions.ok());
  EXPECT_EQ(versions->size(), 1u);
}

TEST_F(IngestTest, MalformedModuleWritesNothing) {
  Bytes bad = SampleModule();
  bad.resize(bad.size() - 30);  // cut inside the code section
  const std::string path = Write("bad.wasm", bad);
  Result<IngestReport> r = IngestFile(env_, *kb_, path, IngestOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kMalformed);
  EXPECT_THAT(r.status().message(), HasSubstr("0x"));
  Result<std::vector<kb::VersionInfo>> versions = kb_->ListVersions();
  ASSERT_TRUE(versions.ok());
  EXPECT_TRUE(versions->empty());
}

// docs/warden.md §4.3: a malformed name section is ignored with a warning giving its offset; the
// code is ingested as without it, and only the name-section seeds are missing.
TEST_F(IngestTest, MalformedNameSectionIsIgnoredWithAWarning) {
  const Bytes good = SampleModule();
  // The same module with the function-name map's index repeated (1, 1).
  const Bytes broken_names =
      Cat({Name("name"), {0x01}, Sized(Cat({U(2), U(1), Name("open_db"), U(1), Name("again")}))});
  Bytes bad = good;
  const Bytes good_names =
      Section(0, Cat({Name("name"), {0x01}, Sized(Cat({U(1), U(1), Name("open_db")}))}));
  ASSERT_TRUE(std::equal(good_names.begin(), good_names.end(), bad.end() - good_names.size()));
  bad.resize(bad.size() - good_names.size());
  const std::size_t name_payload_at = bad.size() + 2 + 5;  // id, size, "name"
  const Bytes broken = Section(0, broken_names);
  bad.insert(bad.end(), broken.begin(), broken.end());

  const std::string path = Write("broken-names.wasm", bad);
  Result<IngestReport> r = IngestFile(env_, *kb_, path, IngestOptions{});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->module.warnings.size(), 1u);
  EXPECT_THAT(r->module.warnings[0],
              HasSubstr(fmt::format("ignored the malformed name section at offset {:#x} ({})",
                                    name_payload_at, name_payload_at)));
  EXPECT_THAT(r->module.warnings[0], HasSubstr("function name index: index 1 repeated"));
  EXPECT_EQ(r->defined, 2u);
  EXPECT_EQ(r->store.seeds_accepted[0], 0);  // no name-section seed
  // The functions are those of the intact module: the same stable_ids, no raw name.
  Result<PreparedVersion> intact = PrepareVersion(good, "/x/good.wasm", IngestOptions{});
  ASSERT_TRUE(intact.ok());
  Result<std::optional<kb::StoredFunction>> f1 = kb_->GetFunction(r->store.version_id, 1);
  ASSERT_TRUE(f1.ok() && f1->has_value());
  EXPECT_EQ((*f1)->record.stable_id, intact->functions[1].stable_id);
  EXPECT_FALSE((*f1)->record.raw_name.has_value());
  // The export name still seeds func 1.
  Result<std::uint32_t> index = kb_->ResolveFunction(r->store.version_id, "sqlite3_open");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ(*index, 1u);
}

// The extended subsections reach the module facts (ModuleNames).
TEST_F(IngestTest, ExtendedNamesReachTheModuleFacts) {
  Bytes module = SampleModule();
  const Bytes extra =
      Section(0, Cat({Name("name"),
                      {0x00},
                      Sized(Name("sample")),
                      {0x01},
                      Sized(Cat({U(1), U(1), Name("open_db")})),
                      {0x06},
                      Sized(Cat({U(1), U(0), Name("heap")})),
                      {0x07},
                      Sized(Cat({U(1), U(0), Name("__stack_pointer")})),
                      {0x09},
                      Sized(Cat({U(2), U(0), Name(".rodata"), U(1), Name(".data")}))}));
  const Bytes good_names =
      Section(0, Cat({Name("name"), {0x01}, Sized(Cat({U(1), U(1), Name("open_db")}))}));
  module.resize(module.size() - good_names.size());
  module.insert(module.end(), extra.begin(), extra.end());
  Result<PreparedVersion> p = PrepareVersion(module, "/x/names.wasm", IngestOptions{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const ModuleNames& n = p->module.names;
  EXPECT_EQ(n.module, "sample");
  EXPECT_EQ(n.memories.at(0), "heap");
  EXPECT_EQ(n.globals.at(0), "__stack_pointer");
  EXPECT_EQ(n.data_segments.at(1), ".data");
  EXPECT_TRUE(p->module.warnings.empty());
  EXPECT_EQ(p->functions[1].raw_name, "open_db");
  EXPECT_THAT(NamesJson(n), HasSubstr(R"("globals":{"0":"__stack_pointer"})"));
}

// The committed -named Emscripten fixtures carry global (7) and data segment (9) names.
TEST_F(IngestTest, EmscriptenFixtureGlobalAndDataNames) {
  const std::string path =
      std::string(TROVE_SOURCE_DIR) + "/testdata/warden/fixtures/app-O2-named.wasm";
  Result<std::string> bytes = env_.ReadFile(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  Result<PreparedVersion> p =
      PrepareVersion(std::span(reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()),
                     path, IngestOptions{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  const ModuleNames& n = p->module.names;
  ASSERT_FALSE(n.globals.empty());
  EXPECT_EQ(n.globals.begin()->second, "__stack_pointer");
  ASSERT_FALSE(n.data_segments.empty());
  EXPECT_TRUE(p->module.warnings.empty());
}

TEST_F(IngestTest, NoSeedWritesNoSymbols) {
  const std::string path = Write("a.wasm", SampleModule());
  IngestOptions options;
  options.seed = false;
  Result<IngestReport> r = IngestFile(env_, *kb_, path, options);
  ASSERT_TRUE(r.ok());
  Result<kb::Coverage> c = kb_->GetCoverage(r->store.version_id);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->named, 0);
  EXPECT_EQ(c->defined, 2);
}

struct ProgressReport {
  double done;
  double total;
  std::string message;
};

// The counts named by the messages "<phase> <k>/<n> <unit>", in order, with the n of each.
std::vector<std::pair<std::uint64_t, std::uint64_t>> Counts(
    const std::vector<ProgressReport>& reports, const std::string& phase, const std::string& unit) {
  const std::regex re("^" + phase + " ([0-9]+)/([0-9]+) " + unit + "$");
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const ProgressReport& r : reports) {
    std::smatch m;
    if (std::regex_match(r.message, m, re)) {
      out.emplace_back(std::stoull(m[1].str()), std::stoull(m[2].str()));
    }
  }
  return out;
}

// A real Emscripten module (testdata/warden/fixtures/, built by scripts/build_wasm_fixtures).
const std::string kFixture =
    std::string(TROVE_SOURCE_DIR) + "/testdata/warden/fixtures/threads-O0.wasm";

class IngestProgressTest : public IngestTest,
                           public ::testing::WithParamInterface<std::uint32_t> {};

TEST_P(IngestProgressTest, ReportsFunctionsAndRowsMonotonicallyToTheEnd) {
  std::vector<ProgressReport> reports;
  const base::Progress sink([&reports](double done, double total, const std::string& message) {
    reports.push_back({done, total, message});
  });
  IngestOptions options;
  options.threads = GetParam();
  options.progress = &sink;
  Result<IngestReport> r = IngestFile(env_, *kb_, kFixture, options);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_GT(r->defined, 3u);
  ASSERT_FALSE(r->store.already_ingested);

  ASSERT_GT(reports.size(), 3u);
  for (std::size_t i = 0; i < reports.size(); ++i) {
    EXPECT_EQ(reports[i].total, 3) << i << " " << reports[i].message;
    if (i > 0) {
      EXPECT_GE(reports[i].done, reports[i - 1].done) << i << " " << reports[i].message;
    }
  }
  EXPECT_EQ(reports.front().done, 0);
  EXPECT_EQ(reports.back().done, reports.back().total);
  EXPECT_EQ(reports.back().message, "done");

  // A report at each whole percent of the functions decoded, strictly increasing, the last
  // being all of them; with one thread, exactly one per percent reached.
  const auto functions = Counts(reports, "fingerprint", "functions");
  ASSERT_FALSE(functions.empty());
  for (std::size_t i = 0; i < functions.size(); ++i) {
    EXPECT_EQ(functions[i].second, r->defined);
    if (i > 0) {
      EXPECT_GT(functions[i].first, functions[i - 1].first);
    }
  }
  EXPECT_EQ(functions.back().first, r->defined);
  const std::size_t percents = std::min<std::size_t>(r->defined, 100);
  if (GetParam() == 1) {
    EXPECT_EQ(functions.size(), percents);
  } else {
    EXPECT_LE(functions.size(), percents);
  }

  // The same for the function rows written, on the calling thread whatever the threads.
  const std::uint64_t rows = r->imported + r->defined;
  const auto written = Counts(reports, "store", "rows");
  ASSERT_EQ(written.size(), std::min<std::size_t>(rows, 100));
  for (std::size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(written[i].second, rows);
    if (i > 0) {
      EXPECT_GT(written[i].first, written[i - 1].first);
    }
  }
  EXPECT_EQ(written.back().first, rows);
}

INSTANTIATE_TEST_SUITE_P(Threads, IngestProgressTest, ::testing::Values(1u, 4u),
                         [](const ::testing::TestParamInfo<std::uint32_t>& param) {
                           return fmt::format("Threads{}", param.param);
                         });

}  // namespace
}  // namespace trove::warden::ingest

// The committed fixtures of testdata/warden/fixtures/ (built from testdata/warden/src/ by
// scripts/build_wasm_fixtures with Emscripten 3.1.6): every file matches its MANIFEST entry,
// every module reads and fingerprints, and the facts agree with what the C sources imply and
// with the glue beside each module.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/hash.h"
#include "warden/glue/glue.h"
#include "warden/glue/module_summary_testing.h"
#include "warden/identity/identity.h"

namespace trove::warden::glue {
namespace {

using testing::FileExists;
using testing::ModuleSummary;
using testing::ReadFileOrEmpty;

const std::string kDir = std::string(TROVE_SOURCE_DIR) + "/testdata/warden/fixtures/";

// The functions app.c and app_threads.c export (EMSCRIPTEN_KEEPALIVE), by C name.
const std::vector<std::string> kAppExports = {
    "app_strlen",   "app_reverse",  "app_count_char", "app_upper_dup", "app_vec_new",
    "app_vec_push", "app_vec_free", "app_free",       "app_apply",     "app_fold",
    "app_checksum", "app_mean",     "app_dot"};
const std::vector<std::string> kThreadsExports = {"app_parallel_sum", "app_scale"};

struct ManifestEntry {
  std::string file;
  std::string sha256;
  std::size_t bytes = 0;
  std::string source;
  std::string flags;
};

std::vector<ManifestEntry> ReadManifest() {
  std::vector<ManifestEntry> entries;
  std::istringstream in(ReadFileOrEmpty(kDir + "MANIFEST"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cols;
    std::size_t start = 0;
    for (std::size_t tab; (tab = line.find('\t', start)) != std::string::npos; start = tab + 1) {
      cols.push_back(line.substr(start, tab - start));
    }
    cols.push_back(line.substr(start));
    if (cols.size() != 5) {
      ADD_FAILURE() << "bad MANIFEST line: " << line;
      continue;
    }
    entries.push_back({cols[0], cols[1], std::stoul(cols[2]), cols[3], cols[4]});
  }
  return entries;
}

// One build of the matrix: "app-O2", "threads-Oz-named", ...
struct Fixture {
  std::string name;
  bool threads = false;
  bool named = false;
  std::string plain;  // the twin without names
};

std::vector<Fixture> AllFixtures() {
  std::vector<Fixture> out;
  for (std::string base : {"app", "threads"}) {
    for (std::string opt : {"O0", "O2", "Oz"}) {
      const std::string plain = base + "-" + opt;
      out.push_back({plain, base == "threads", false, plain});
      out.push_back({plain + "-named", base == "threads", true, plain});
    }
  }
  return out;
}

// The glue of a fixture: its own, or its plain twin's when the build script left the named
// one out as equal but for file names.
std::string GluePath(const Fixture& f) {
  const std::string own = kDir + f.name + ".js";
  return FileExists(own) ? own : kDir + f.plain + ".js";
}

struct Loaded {
  ModuleSummary summary;
  identity::ModuleIdentity identity;
  GlueFacts glue;
};

Loaded LoadUncached(const Fixture& f) {
  Loaded out;
  const std::string bytes = ReadFileOrEmpty(kDir + f.name + ".wasm");
  EXPECT_FALSE(bytes.empty()) << f.name;
  Result<ModuleSummary> summary = testing::Summarise(bytes);
  EXPECT_TRUE(summary.ok()) << f.name << ": " << summary.status().ToString();
  if (summary.ok()) out.summary = std::move(summary).value();
  Result<identity::ModuleIdentity> id = identity::ComputeModuleIdentity(testing::Bytes(bytes));
  EXPECT_TRUE(id.ok()) << f.name << ": " << id.status().ToString();
  if (id.ok()) out.identity = std::move(id).value();
  Result<GlueFacts> glue = ParseGlue(ReadFileOrEmpty(GluePath(f)));
  EXPECT_TRUE(glue.ok()) << f.name;
  if (glue.ok()) out.glue = std::move(glue).value();
  return out;
}

// Each fixture is read once per test binary.
const Loaded& Load(const Fixture& f) {
  static std::map<std::string, Loaded>* cache = new std::map<std::string, Loaded>();
  auto it = cache->find(f.name);
  if (it == cache->end()) it = cache->emplace(f.name, LoadUncached(f)).first;
  return it->second;
}

// The export key the glue binds to Module["_" + c_name].
std::string ExportKeyOf(const GlueFacts& glue, const std::string& c_name) {
  for (const ExportBinding& b : glue.exports) {
    for (const std::string& key : b.module_keys) {
      if (key == "_" + c_name) return b.export_name;
    }
  }
  return {};
}

TEST(FixturesTest, ManifestMatchesFiles) {
  const std::vector<ManifestEntry> entries = ReadManifest();
  ASSERT_FALSE(entries.empty()) << "missing " << kDir << "MANIFEST";
  std::set<std::string> listed;
  std::size_t total = 0;
  for (const ManifestEntry& e : entries) {
    SCOPED_TRACE(e.file);
    listed.insert(e.file);
    const std::string bytes = ReadFileOrEmpty(kDir + e.file);
    EXPECT_EQ(bytes.size(), e.bytes);
    EXPECT_EQ(base::Sha256Hex(bytes), e.sha256);
    EXPECT_TRUE(e.source == "app.c" || e.source == "app_threads.c");
    EXPECT_EQ(e.flags.find("-pthread") != std::string::npos, e.source == "app_threads.c");
    EXPECT_EQ(e.flags.find("--profiling-funcs") != std::string::npos,
              e.file.find("-named") != std::string::npos);
    total += bytes.size();
  }
  for (const Fixture& f : AllFixtures()) {
    EXPECT_EQ(listed.count(f.name + ".wasm"), 1u) << f.name;
    if (!f.named) {
      EXPECT_EQ(listed.count(f.name + ".js"), 1u) << f.name;
    }
    if (!f.named && f.threads) {
      EXPECT_EQ(listed.count(f.name + ".worker.js"), 1u) << f.name;
    }
  }
  // The fixtures are committed: keep them small.
  EXPECT_LT(total, 1024u * 1024u);
}

TEST(FixturesTest, EveryModuleReadsAndMatchesItsSource) {
  for (const Fixture& f : AllFixtures()) {
    SCOPED_TRACE(f.name);
    const Loaded& m = Load(f);
    const ModuleSummary& s = m.summary;
    EXPECT_EQ(s.imported_functions, m.identity.imports.size());
    EXPECT_EQ(s.defined_functions, m.identity.functions.size());
    EXPECT_GT(s.defined_functions, 10u);
    // Names only in the --profiling-funcs twin.
    EXPECT_EQ(s.has_name_section, f.named);
    EXPECT_EQ(s.function_names.empty(), !f.named);
    // pthread builds import a shared memory; the others define an unshared one.
    EXPECT_EQ(s.shared_memory, f.threads);
    EXPECT_EQ(m.glue.pthread.threads, f.threads);
    if (f.threads) {
      EXPECT_EQ(m.glue.pthread.pool_size, std::optional<std::uint32_t>(2));
    }

    std::size_t indirect = 0, atomics = 0, floats = 0;
    for (const identity::FunctionIdentity& fn : m.identity.functions) {
      EXPECT_EQ(fn.stable_id.rfind(identity::kSchemePrefix, 0), 0u) << fn.stable_id;
      if (std::find(fn.call_targets.begin(), fn.call_targets.end(), identity::kIndirectTarget) !=
          fn.call_targets.end()) {
        ++indirect;
      }
      atomics += fn.histogram[static_cast<std::size_t>(identity::OpClass::kAtomic)];
      floats += fn.histogram[static_cast<std::size_t>(identity::OpClass::kFloatArith)];
    }
    // kOps[op](a, b) and printf's internals use call_indirect at every level; the float
    // helpers use float arithmetic; app_threads.c's atomics and the pthread runtime use atomics.
    EXPECT_GT(indirect, 0u);
    EXPECT_GT(floats, 0u);
    EXPECT_EQ(atomics > 0, f.threads);

    // Every C export is bound in the glue to an export of the module, and in the named twin
    // the name section names that function after it.
    const std::vector<std::string>& c_exports = f.threads ? kThreadsExports : kAppExports;
    for (const std::string& c_name : c_exports) {
      const std::string key = ExportKeyOf(m.glue, c_name);
      ASSERT_FALSE(key.empty()) << c_name << " is not bound in the glue";
      auto it = s.exports.find(key);
      ASSERT_NE(it, s.exports.end()) << c_name << " -> " << key;
      ASSERT_EQ(it->second.first, wasm::ExternalKind::kFunction);
      if (f.named) {
        auto name = s.function_names.find(it->second.second);
        ASSERT_NE(name, s.function_names.end()) << c_name;
        EXPECT_EQ(name->second, c_name);
      }
      // The exported function's facts say so.
      const std::uint32_t index = it->second.second;
      ASSERT_GE(index, s.imported_functions);
      const identity::FunctionIdentity& fn = m.identity.functions[index - s.imported_functions];
      EXPECT_TRUE(fn.is_exported);
      EXPECT_EQ(fn.raw_name.has_value(), f.named);
    }

    // The glue and the module agree: every bound export exists, every function export but the
    // runtime's data-only ones is bound, and the import object holds exactly the imports.
    for (const ExportBinding& b : m.glue.exports) {
      EXPECT_EQ(s.exports.count(b.export_name), 1u) << b.export_name;
    }
    for (const std::string& name : s.FunctionExports()) {
      EXPECT_NE(m.glue.FindExport(name), nullptr) << name;
    }
    // The import object may hold more than the module imports (threads-O2's glue also binds
    // __clock_gettime, which the linker dropped), never less.
    std::set<std::string> glue_fields;
    for (const ImportBinding& b : m.glue.imports) {
      glue_fields.insert(b.field);
      EXPECT_FALSE(b.js_name.empty()) << b.field;  // 3.1.6 binds named functions
    }
    for (const std::string& field : s.ImportFields())
      EXPECT_EQ(glue_fields.count(field), 1u) << field;
    EXPECT_LE(glue_fields.size(), s.imports.size() + 2);
    const std::set<std::string> modules(m.glue.import_modules.begin(), m.glue.import_modules.end());
    EXPECT_EQ(modules.size() >= s.ImportModules().size(), true);
    for (const std::string& module : s.ImportModules()) EXPECT_EQ(modules.count(module), 1u);
    EXPECT_TRUE(m.glue.version_hints.empty());  // 3.1.6 states no version in its glue
  }
}

TEST(FixturesTest, NamedTwinsHaveTheSameFunctionsAndStableIds) {
  for (const Fixture& f : AllFixtures()) {
    if (!f.named) continue;
    SCOPED_TRACE(f.name);
    const Loaded& named = Load(f);
    const Loaded& plain = Load(Fixture{f.plain, f.threads, false, f.plain});
    EXPECT_EQ(named.summary.imported_functions, plain.summary.imported_functions);
    EXPECT_EQ(named.summary.defined_functions, plain.summary.defined_functions);
    ASSERT_EQ(named.identity.functions.size(), plain.identity.functions.size());
    // The same bodies, though not always in the same order (-Oz may order them differently),
    // so compare as multisets.
    std::multiset<std::string> named_exact, plain_exact, named_ids, plain_ids;
    for (const identity::FunctionIdentity& fn : named.identity.functions) {
      named_exact.insert(base::ToHex(fn.exact));
      named_ids.insert(fn.stable_id);
    }
    for (const identity::FunctionIdentity& fn : plain.identity.functions) {
      plain_exact.insert(base::ToHex(fn.exact));
      plain_ids.insert(fn.stable_id);
    }
    // Each imported function as "<stable_id> <the JS function the glue binds to it>".
    auto resolved = [](const Loaded& m) {
      std::vector<std::string> out;
      for (const identity::ImportedFunction& i : m.identity.imports) {
        const ImportBinding* b = m.glue.FindImport(i.field);
        out.push_back(i.stable_id + " " + (b ? b->js_name : "?"));
      }
      return out;
    };
    if (resolved(named) == resolved(plain)) {
      EXPECT_EQ(named_ids, plain_ids);
      // Bodies differ only where -Oz reordered functions (call indices); stable_ids abstract
      // over that.
      if (f.name.find("-Oz") == std::string::npos) {
        EXPECT_EQ(named_exact, plain_exact);
      }
    } else {
      // threads-Oz: Emscripten assigned the minified import fields to other JS functions in
      // the two links (compare the import objects of threads-Oz.js and threads-Oz-named.js),
      // and a call to an import is part of the caller's identity ("import:a.h"), so callers of
      // imports differ. Every function that calls no import keeps its stable_id.
      std::multiset<std::string> named_pure, plain_pure;
      for (const identity::FunctionIdentity& fn : named.identity.functions) {
        if (fn.call_outs.empty() && fn.id_tier == 0) named_pure.insert(fn.stable_id);
      }
      for (const identity::FunctionIdentity& fn : plain.identity.functions) {
        if (fn.call_outs.empty() && fn.id_tier == 0) plain_pure.insert(fn.stable_id);
      }
      EXPECT_EQ(named_pure, plain_pure);
      EXPECT_NE(named_ids, plain_ids);
      EXPECT_EQ(f.name, "threads-Oz-named");
    }
  }
}

TEST(FixturesTest, GlueJsonIsDeterministic) {
  for (const Fixture& f : AllFixtures()) {
    if (f.named) continue;
    const std::string js = ReadFileOrEmpty(GluePath(f));
    Result<GlueFacts> a = ParseGlue(js);
    Result<GlueFacts> b = ParseGlue(std::string(js));
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(GlueFactsToJson(*a), GlueFactsToJson(*b));
  }
}

TEST(FixturesTest, WorkerGlueIsThreaded) {
  for (std::string opt : {"O0", "O2", "Oz"}) {
    Result<GlueFacts> glue = ParseGlue(ReadFileOrEmpty(kDir + "threads-" + opt + ".worker.js"));
    ASSERT_TRUE(glue.ok());
    EXPECT_TRUE(glue->pthread.threads) << opt;
    EXPECT_TRUE(glue->exports.empty());
  }
}

}  // namespace
}  // namespace trove::warden::glue

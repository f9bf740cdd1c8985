// The Emscripten Oracle on sample modules (docs/warden.md §8): a store built from named
// `samples` modules, then a stripped target with one function planted for each pass and for
// each precision rule (sizes, ambiguous keys on either side, imports, name normalisation,
// human and export names kept by the gate), dry runs, version inference and the foreign-module
// path.
#include "warden/oracle/oracle.h"

#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "base/env.h"
#include "base/sqlite.h"
#include "base/testing/temp_dir.h"
#include "warden/diff/testing/planted.h"
#include "warden/ingest/ingest.h"
#include "warden/kb/kb.h"

namespace trove::warden::oracle {
namespace {

using diff::testing::Generated;
using diff::testing::Leaf;
using ::testing::HasSubstr;

samples::Function Renamed(samples::Function f, std::string name) {
  f.name = std::move(name);
  return f;
}

samples::Function Tiny(const std::string& key) {
  samples::Function f;
  f.key = key;
  f.name = key;
  f.sig = {{samples::kI32, samples::kI32}, {samples::kI32}};
  f.body.LocalGet(0).LocalGet(1).Op(0x6a);  // 3 instructions
  return f;
}

// A body with one more block at its end: the skeleton changes, so only fuzzy can match it.
samples::Function WithExtraBlock(samples::Function f) {
  f.body.Block().End();
  return f;
}

samples::Module CorpusModule() {
  samples::Module m;
  m.imports.push_back(
      {.key = "log", .module = "env", .field = "log", .sig = {{samples::kI32}, {}}});
  m.functions.push_back(Generated("c_exact", 1, 8));
  m.functions.push_back(Generated("c_norm", 2, 8));
  m.functions.push_back(Leaf("c_struct", 0, 7, 2));
  m.functions.push_back(Generated("c_fuzzy", 3, 30));
  m.functions.push_back(Renamed(Generated("dup_a", 5, 6), "dup_a"));
  m.functions.push_back(Renamed(Generated("dup_b", 5, 6), "dup_b"));
  m.functions.push_back(Renamed(Generated("tmpl", 6, 6), "foo<int, char>[abi:ne190106]"));
  m.functions.push_back(Generated("c_twice", 7, 6));
  m.functions.push_back(Generated("c_human", 8, 6));
  m.functions.push_back(Generated("c_export", 9, 6));
  m.functions.push_back(Tiny("tiny_add"));
  samples::Function unnamed = Generated("unnamed", 10, 6);
  unnamed.name.reset();
  m.functions.push_back(std::move(unnamed));
  return m;
}

// A second corpus module whose one function spells the template name differently.
samples::Module CorpusModule2() {
  samples::Module m;
  m.functions.push_back(Renamed(Generated("tmpl", 6, 6), "foo<int,char>"));
  return m;
}

// The stripped target, with the import that marks an Emscripten module unless `foreign`.
samples::Module TargetModule(bool foreign = false) {
  samples::Module m;
  m.imports.push_back(
      {.key = "log", .module = "env", .field = "log", .sig = {{samples::kI32}, {}}});
  if (!foreign) {
    m.imports.push_back({.key = "heap",
                         .module = "env",
                         .field = "emscripten_resize_heap",
                         .sig = {{samples::kI32}, {samples::kI32}}});
  }
  m.name_section = false;
  m.functions.push_back(Generated("c_exact", 1, 8));
  m.functions.push_back(Generated("c_norm", 2, 8, -1, 5));  // constants shifted
  m.functions.push_back(Leaf("c_struct", 1, 7, 2));         // another local: same skeleton
  m.functions.push_back(WithExtraBlock(Generated("c_fuzzy", 3, 30)));
  m.functions.push_back(Generated("dup", 5, 6));
  m.functions.push_back(Generated("tmpl", 6, 6));
  m.functions.push_back(Generated("twice1", 7, 6));
  m.functions.push_back(Generated("twice2", 7, 6));
  m.functions.push_back(Generated("c_human", 8, 6));
  samples::Function exported = Generated("c_export", 9, 6);
  exported.exports = {"exported_fn"};
  m.functions.push_back(std::move(exported));
  m.functions.push_back(Tiny("tiny_add"));
  return m;
}

class OracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kb::KbOptions options;
    options.create_if_missing = true;
    auto opened = kb::Kb::Open(env_, dir_.path() + "/w.db", options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    kb_ = std::move(opened).value();
    auto store = OracleStore::Open(dir_.path() + "/oracle.db", true);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  std::vector<std::uint8_t> Bytes(const samples::Module& m) {
    Result<std::vector<std::uint8_t>> bytes = samples::WriteModule(m);
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    return bytes.ok() ? *bytes : std::vector<std::uint8_t>();
  }

  BuildCounts Build(const samples::Module& m, const std::string& name) {
    BuildOptions o;
    o.library = "musl";
    o.emscripten_version = "3.1.6";
    o.opt_level = "O2";
    BuildCounts counts;
    const std::vector<std::uint8_t> bytes = Bytes(m);
    Status s = AddModule(*store_, bytes, dir_.path() + "/" + name, o, counts);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return counts;
  }

  std::int64_t Ingest(const samples::Module& m, const std::string& label,
                      std::optional<std::string> glue_version = std::nullopt) {
    const std::vector<std::uint8_t> bytes = Bytes(m);
    const std::string path = dir_.path() + "/" + label + ".wasm";
    EXPECT_TRUE(env_.WriteFile(path, std::string(bytes.begin(), bytes.end())).ok());
    ingest::IngestOptions options;
    options.label = label;
    if (glue_version) {
      options.emscripten_version = glue_version;
      options.emscripten_version_source = "glue";
    }
    auto r = ingest::IngestFile(env_, *kb_, path, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->store.version_id : 0;
  }

  // The target's function index of each key.
  static std::map<std::string, std::uint32_t> Indices(const samples::Module& m) {
    std::map<std::string, std::uint32_t> out;
    for (std::size_t i = 0; i < m.functions.size(); ++i) {
      out[m.functions[i].key] = static_cast<std::uint32_t>(m.imports.size() + i);
    }
    return out;
  }

  // key -> "pass name" for every match.
  static std::map<std::string, std::string> Outcomes(const samples::Module& target,
                                                     const MatchResult& r) {
    std::map<std::uint32_t, std::string> keys;
    for (const auto& [k, i] : Indices(target)) keys[i] = k;
    std::map<std::string, std::string> out;
    for (const Match& m : r.matches) {
      out[keys.at(m.func_index)] = std::string(PassName(m.pass)) + " " + m.name_norm;
    }
    return out;
  }

  std::string StableId(std::int64_t version, std::uint32_t index) {
    auto f = kb_->GetFunction(version, index);
    EXPECT_TRUE(f.ok() && f->has_value());
    return (f.ok() && f->has_value()) ? (*f)->record.stable_id : std::string();
  }

  void BuildCorpus() {
    const BuildCounts c1 = Build(CorpusModule(), "corpus1.wasm");
    EXPECT_EQ(c1.functions, 12);
    EXPECT_EQ(c1.unnamed, 1);
    EXPECT_EQ(c1.too_small, 1);
    EXPECT_EQ(c1.added, 10);
    Build(CorpusModule2(), "corpus2.wasm");
  }

  base::PosixEnv env_;
  base::testing::TempDir dir_{"trove_oracle_test"};
  std::unique_ptr<kb::Kb> kb_;
  std::unique_ptr<OracleStore> store_;
};

TEST(NormaliseNameTest, AbiTagsWhitespaceAndAliases) {
  EXPECT_EQ(NormaliseName("foo<int, char>[abi:ne190106]"), "foo<int,char>");
  EXPECT_EQ(NormaliseName("std::__2::basic_string<char, std::__2::char_traits<char> >::size() "
                          "const"),
            "std::__2::basic_string<char,std::__2::char_traits<char>>::size()const");
  EXPECT_EQ(NormaliseName("unsigned  long"), "unsigned long");
  EXPECT_EQ(NormaliseName("stackSave"), "emscripten_stack_get_current");
  EXPECT_EQ(NormaliseName("dlmalloc"), "malloc");
  EXPECT_EQ(NormaliseName("memcpy"), "memcpy");
  EXPECT_EQ(NormaliseName("[abi:"), "[abi:");  // an unclosed tag is kept
  // LLVM's uniquing suffix of a static function is dropped; other dots are kept.
  EXPECT_EQ(NormaliseName("pad.3"), "pad");
  EXPECT_EQ(NormaliseName("legalstub$dynCall_jiji"), "legalstub$dynCall_jiji");
  EXPECT_EQ(NormaliseName("a.b"), "a.b");
  EXPECT_EQ(NormaliseName(".12"), ".12");
  EXPECT_EQ(NormaliseName("f.1.2"), "f.1");
}

TEST_F(OracleTest, BuildCountsAndDuplicates) {
  const BuildCounts first = Build(CorpusModule(), "corpus1.wasm");
  EXPECT_EQ(first.modules, 1);
  EXPECT_EQ(first.functions, 12);
  EXPECT_EQ(first.unnamed, 1);
  EXPECT_EQ(first.too_small, 1);
  EXPECT_EQ(first.added, 10);
  EXPECT_EQ(first.duplicates, 0);
  // The same module again adds nothing: a rebuild is idempotent.
  const BuildCounts again = Build(CorpusModule(), "corpus1.wasm");
  EXPECT_EQ(again.added, 0);
  EXPECT_EQ(again.duplicates, 10);
  Result<StoreStats> stats = store_->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->signatures, 10);
  EXPECT_EQ(stats->emscripten_versions, std::vector<std::string>{"3.1.6"});
  // The store refuses a file of another kind.
  Result<std::unique_ptr<OracleStore>> kb_as_store = OracleStore::Open(kb_->path(), false);
  ASSERT_FALSE(kb_as_store.ok());
  EXPECT_THAT(kb_as_store.status().message(), HasSubstr("not a WARDEN Oracle store"));
  Result<std::unique_ptr<OracleStore>> missing = OracleStore::Open(dir_.path() + "/none.db", false);
  EXPECT_EQ(missing.status().code(), base::StatusCode::kNotFound);
}

TEST_F(OracleTest, EachPassAndEachPrecisionRule) {
  BuildCorpus();
  const samples::Module target = TargetModule();
  const std::int64_t v = Ingest(target, "t1");
  auto records = kb_->FunctionRecords(v);
  ASSERT_TRUE(records.ok());
  Result<MatchResult> r = MatchFunctions(*records, *store_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::map<std::string, std::string> got = Outcomes(target, *r);
  const std::map<std::string, std::string> want = {
      {"c_exact", "exact c_exact"},        {"c_norm", "norm c_norm"},
      {"c_struct", "structural c_struct"}, {"c_fuzzy", "fuzzy c_fuzzy"},
      {"tmpl", "exact foo<int,char>"},  // two spellings, one normalised name
      {"c_human", "exact c_human"},        {"c_export", "exact c_export"},
  };
  EXPECT_EQ(got, want);
  // Not matched: dup (corpus names disagree), twice1/twice2 (one key, two targets), tiny_add
  // (under 5 instructions), and the two imports.
  EXPECT_EQ(r->refusals.imports, 2);
  EXPECT_EQ(r->refusals.too_small, 1);
  EXPECT_GE(r->refusals.ambiguous_name, 1);
  EXPECT_GE(r->refusals.ambiguous_target + r->refusals.fuzzy_not_mutual, 2);
  EXPECT_EQ(r->per_pass[0], 4);
  EXPECT_EQ(r->per_pass[3], 1);
  for (const Match& m : r->matches) {
    EXPECT_GE(m.func_index, 2u) << "an import was matched";
    if (m.pass == Pass::kExact) {
      EXPECT_DOUBLE_EQ(m.confidence, 0.98);
    }
    if (m.pass == Pass::kNorm) {
      EXPECT_DOUBLE_EQ(m.confidence, 0.95);
    }
    if (m.pass == Pass::kStructural) {
      EXPECT_DOUBLE_EQ(m.confidence, 0.90);
    }
    if (m.pass == Pass::kFuzzy) {
      EXPECT_LE(m.confidence, 0.90);
      EXPECT_GE(m.score, 0.85);
      ASSERT_TRUE(m.components.has_value());
      EXPECT_LT(m.components->structural, 1.0);
    }
  }
}

TEST_F(OracleTest, SmallFunctionsNeverMatchEvenWhenStored) {
  // A signature under the minimum, put into the store directly (build would skip it).
  const samples::Module target = TargetModule();
  const std::int64_t v = Ingest(target, "t1");
  auto records = kb_->FunctionRecords(v);
  ASSERT_TRUE(records.ok());
  const kb::FunctionRecord& tiny = records->at(Indices(target).at("tiny_add"));
  Signature s;
  s.name = s.name_norm = "tiny_add";
  s.library = "musl";
  s.emscripten_version = "3.1.6";
  s.exact_hash = tiny.exact_hash;
  s.norm_hash = tiny.norm_hash;
  s.structural_hash = tiny.structural_hash;
  s.type_signature = tiny.type_signature;
  s.instruction_count = tiny.instruction_count;
  ASSERT_TRUE(store_->Add({s}).ok());
  Result<MatchResult> r = MatchFunctions(*records, *store_);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->matches.empty());
  // The naive baseline has no size minimum and takes it.
  Result<MatchResult> naive = MatchNaive(*records, *store_);
  ASSERT_TRUE(naive.ok());
  ASSERT_EQ(naive->matches.size(), 1u);
  EXPECT_EQ(naive->matches[0].name, "tiny_add");
}

TEST_F(OracleTest, IdentifyWritesThroughTheGateAndDryRunWritesNothing) {
  BuildCorpus();
  const samples::Module target = TargetModule();
  const std::int64_t v = Ingest(target, "t1");
  const auto idx = Indices(target);
  const std::string human_id = StableId(v, idx.at("c_human"));
  ASSERT_TRUE(kb_->HumanSetName(kb::HumanChannel::kLib, human_id, "my_name").ok());

  IdentifyOptions dry;
  dry.dry_run = true;
  Result<IdentifyReport> d = Identify(*kb_, v, *store_, dry);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->result.matches.size(), 7u);
  EXPECT_EQ(d->written, 0);
  EXPECT_FALSE(d->version_stored);
  auto cov = kb_->GetCoverage(v);
  ASSERT_TRUE(cov.ok());
  EXPECT_EQ(cov->oracle_named, 0);
  auto ev = kb_->Evidence(StableId(v, idx.at("c_exact")));
  ASSERT_TRUE(ev.ok());
  EXPECT_TRUE(ev->empty()) << "a dry run recorded evidence";
  auto info = kb_->GetVersion(v);
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info->emscripten_version.has_value());

  Result<IdentifyReport> w = Identify(*kb_, v, *store_, IdentifyOptions{});
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(w->toolchain.emscripten) << w->toolchain.reason;
  EXPECT_EQ(w->written, 5);
  EXPECT_EQ(w->rejected, 2);  // the human name and the export name stay
  cov = kb_->GetCoverage(v);
  ASSERT_TRUE(cov.ok());
  EXPECT_EQ(cov->oracle_named, 5);
  auto human = kb_->GetSymbol(human_id);
  ASSERT_TRUE(human.ok() && human->has_value());
  EXPECT_EQ((*human)->name, "my_name");
  EXPECT_EQ((*human)->provenance, "human");
  auto exported = kb_->GetSymbol(StableId(v, idx.at("c_export")));
  ASSERT_TRUE(exported.ok() && exported->has_value());
  EXPECT_EQ((*exported)->name, "exported_fn");
  EXPECT_EQ((*exported)->provenance, "export");
  auto fuzzy = kb_->GetSymbol(StableId(v, idx.at("c_fuzzy")));
  ASSERT_TRUE(fuzzy.ok() && fuzzy->has_value());
  EXPECT_EQ((*fuzzy)->name, "c_fuzzy");
  EXPECT_EQ((*fuzzy)->provenance, "oracle");
  EXPECT_EQ((*fuzzy)->actor, "oracle:fuzzy");
  EXPECT_LE((*fuzzy)->confidence, 0.90);
  const nlohmann::json details =
      nlohmann::json::parse((*fuzzy)->evidence.back().details_json, nullptr, false);
  EXPECT_EQ(details.value("pass", ""), "fuzzy");
  EXPECT_EQ(details.value("library", ""), "musl");
  EXPECT_TRUE(details.contains("components"));

  // Version inference: no glue, so the vote over exact/norm hits of >= 20 instructions.
  EXPECT_EQ(w->version.version, "3.1.6");
  EXPECT_EQ(w->version.source, "oracle-vote");
  ASSERT_TRUE(w->version.share.has_value());
  EXPECT_DOUBLE_EQ(*w->version.share, 1.0);
  EXPECT_TRUE(w->version_stored);
  info = kb_->GetVersion(v);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->emscripten_version, "3.1.6");
  EXPECT_EQ(info->emscripten_version_source, "oracle-vote");

  // Again: the Oracle's own names are unchanged, nothing new is attempted for them.
  Result<IdentifyReport> again = Identify(*kb_, v, *store_, IdentifyOptions{});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->written, 0);
  EXPECT_EQ(again->unchanged, 5);

  const nlohmann::json j = nlohmann::json::parse(ReportJson(*w), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["per_pass"]["fuzzy"], 1);
  EXPECT_EQ(j["emscripten_version"]["source"], "oracle-vote");
  EXPECT_THAT(ReportText(*w), HasSubstr("written 5, rejected by the gate 2"));
}

// Generated(seed) followed by a call of `callee` whose result is added.
samples::Function CallerOf(const std::string& key, std::uint64_t seed,
                           const std::vector<std::string>& callees) {
  samples::Function f = Generated(key, seed, 8);
  for (const std::string& c : callees) f.body.LocalGet(0).LocalGet(1).Call(c).Op(0x6a);
  return f;
}

samples::Function OneArg(samples::Function f) {
  f.sig = {{samples::kI32}, {samples::kI32}};
  f.locals = {samples::kI32, samples::kI32, samples::kI32};
  return f;
}

TEST_F(OracleTest, CallGraphPropagationNamesCalleesOfAnchors) {
  samples::Module corpus;
  corpus.functions.push_back(CallerOf("cg_caller", 11, {"cg_callee", "cg_typed"}));
  corpus.functions.push_back(Generated("cg_callee", 12, 6));
  corpus.functions.push_back(Generated("cg_typed", 14, 6));
  Build(corpus, "cg.wasm");

  samples::Module target;
  target.imports.push_back({.key = "heap",
                            .module = "env",
                            .field = "emscripten_resize_heap",
                            .sig = {{samples::kI32}, {samples::kI32}}});
  target.name_section = false;
  target.functions.push_back(CallerOf("cg_caller", 11, {"cg_callee", "cg_typed"}));
  // Another body (another seed): no keyed pass can name it, its caller's call site does.
  target.functions.push_back(Generated("cg_callee", 13, 6));
  // Another type than the corpus's cg_typed: the call site's name is refused.
  target.functions.push_back(OneArg(Generated("cg_typed", 15, 6)));
  const std::int64_t v = Ingest(target, "cg");
  auto records = kb_->FunctionRecords(v);
  ASSERT_TRUE(records.ok());
  Result<MatchResult> r = MatchFunctions(*records, *store_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::map<std::string, std::string> got = Outcomes(target, *r);
  ASSERT_TRUE(got.contains("cg_caller"));
  EXPECT_THAT(got.at("cg_caller"), HasSubstr("cg_caller"));
  EXPECT_EQ(got.count("cg_callee") ? got.at("cg_callee") : "", "callgraph cg_callee");
  EXPECT_FALSE(got.contains("cg_typed")) << got.at("cg_typed");
  EXPECT_EQ(r->per_pass[static_cast<std::size_t>(Pass::kCallGraph)], 1);
  EXPECT_GE(r->refusals.inconsistent, 1);
  for (const Match& m : r->matches) {
    if (m.pass == Pass::kCallGraph) {
      EXPECT_DOUBLE_EQ(m.confidence, kCallGraphConfidence);
    }
  }
  // The naive baseline has no call-graph pass.
  Result<MatchResult> naive = MatchNaive(*records, *store_);
  ASSERT_TRUE(naive.ok());
  EXPECT_EQ(naive->per_pass[static_cast<std::size_t>(Pass::kCallGraph)], 0);
}

TEST_F(OracleTest, StructuralMatchContradictedByAnAnchorIsRefused) {
  samples::Module corpus;
  corpus.functions.push_back(CallerOf("a_caller", 21, {"s_right"}));
  // The caller's callee in the corpus is far larger than the target's: propagation refuses it.
  corpus.functions.push_back(Leaf("s_right", 0, 9, 40));
  corpus.functions.push_back(Leaf("s_wrong", 0, 7, 2));
  Build(corpus, "st.wasm");

  samples::Module target;
  target.imports.push_back({.key = "heap",
                            .module = "env",
                            .field = "emscripten_resize_heap",
                            .sig = {{samples::kI32}, {samples::kI32}}});
  target.name_section = false;
  target.functions.push_back(CallerOf("a_caller", 21, {"x"}));
  target.functions.push_back(Leaf("x", 1, 7, 2));  // s_wrong's skeleton, called as s_right
  const std::int64_t v = Ingest(target, "st");
  auto records = kb_->FunctionRecords(v);
  ASSERT_TRUE(records.ok());
  Result<MatchResult> r = MatchFunctions(*records, *store_);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::map<std::string, std::string> got = Outcomes(target, *r);
  EXPECT_TRUE(got.contains("a_caller"));
  EXPECT_FALSE(got.contains("x")) << got.at("x");
  EXPECT_GE(r->refusals.inconsistent, 1);
}

// Every field of a match result, as text: two results are equal when their texts are.
std::string Describe(const MatchResult& r) {
  std::string out = fmt::format("defined {}; per pass", r.defined);
  for (std::int64_t n : r.per_pass) out += fmt::format(" {}", n);
  const Refusals& f = r.refusals;
  out += fmt::format("; refused {} {} {} {} {} {} {} {}\n", f.imports, f.too_small,
                     f.ambiguous_target, f.ambiguous_name, f.name_taken, f.fuzzy_below,
                     f.fuzzy_not_mutual, f.inconsistent);
  for (const auto& [version, weight] : r.vote) out += fmt::format("vote {} {}\n", version, weight);
  for (const Match& m : r.matches) {
    out += fmt::format("{} {} {} {} {} {} {} {} {} {} {} {}", m.func_index, m.stable_id,
                       PassName(m.pass), m.score, m.confidence, m.name, m.name_norm, m.library,
                       m.emscripten_version, m.opt_level, m.signature_id, m.candidates);
    if (m.components) out += fmt::format(" {}", m.components->overall);
    out += "\n";
  }
  return out;
}

// The index read into memory (OracleStore::Preload) answers every lookup as the SQL queries
// do: the same matches, refusals and vote with and without it, for the targets of the tests
// above, and for the naive baseline.
TEST_F(OracleTest, PreloadedIndexGivesTheSameMatches) {
  BuildCorpus();
  samples::Module cg;
  cg.functions.push_back(CallerOf("cg_caller", 11, {"cg_callee", "cg_typed"}));
  cg.functions.push_back(Generated("cg_callee", 12, 6));
  cg.functions.push_back(Generated("cg_typed", 14, 6));
  Build(cg, "cg.wasm");
  samples::Module cg_target;
  cg_target.name_section = false;
  cg_target.functions.push_back(CallerOf("cg_caller", 11, {"cg_callee", "cg_typed"}));
  cg_target.functions.push_back(Generated("cg_callee", 13, 6));
  cg_target.functions.push_back(OneArg(Generated("cg_typed", 15, 6)));
  for (const auto& [target, label] : std::vector<std::pair<samples::Module, std::string>>{
           {TargetModule(), "t1"}, {cg_target, "cg"}}) {
    const std::int64_t v = Ingest(target, label);
    auto records = kb_->FunctionRecords(v);
    ASSERT_TRUE(records.ok());
    auto by_sql = OracleStore::Open(dir_.path() + "/oracle.db", false);
    auto in_memory = OracleStore::Open(dir_.path() + "/oracle.db", false);
    ASSERT_TRUE(by_sql.ok() && in_memory.ok());
    MatchOptions sql_options, memory_options;
    sql_options.preload = false;
    memory_options.preload = true;
    Result<MatchResult> a = MatchFunctions(*records, **by_sql, sql_options);
    Result<MatchResult> b = MatchFunctions(*records, **in_memory, memory_options);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_FALSE((*by_sql)->preloaded());
    EXPECT_TRUE((*in_memory)->preloaded());
    EXPECT_FALSE(a->matches.empty()) << label;
    EXPECT_EQ(Describe(*a), Describe(*b)) << label;
    // The small target makes the default preload too (a few signatures per function).
    auto by_default = OracleStore::Open(dir_.path() + "/oracle.db", false);
    ASSERT_TRUE(by_default.ok());
    Result<MatchResult> c = MatchFunctions(*records, **by_default);
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE((*by_default)->preloaded());
    EXPECT_EQ(Describe(*a), Describe(*c)) << label;
    Result<MatchResult> naive_sql = MatchNaive(*records, **by_sql);
    ASSERT_TRUE(naive_sql.ok());
    EXPECT_EQ(Describe(*naive_sql), Describe(*MatchNaive(*records, **in_memory))) << label;
  }
  // Add drops an index that would miss the new rows.
  auto store = OracleStore::Open(dir_.path() + "/oracle.db", false);
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Preload().ok());
  Signature s;
  s.name = s.name_norm = "added_later";
  s.library = "musl";
  s.emscripten_version = "3.1.6";
  s.exact_hash = std::string(64, '7');
  s.norm_hash = s.structural_hash = std::string(32, '7');
  s.type_signature = "() -> ()";
  s.instruction_count = 30;
  ASSERT_TRUE((*store)->Add({s}).ok());
  EXPECT_FALSE((*store)->preloaded());
  ASSERT_TRUE((*store)->Preload().ok());
  auto found = (*store)->ByExact(std::string(64, '7'));
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0]->name, "added_later");
  auto bucket = (*store)->ByBucket(0, LshBucket(s.minhash, 0), 64);
  ASSERT_TRUE(bucket.ok());
  EXPECT_EQ(bucket->size(), 1u);
}

TEST_F(OracleTest, SchemaOneStoreIsUpgradedOnOpen) {
  BuildCorpus();
  const std::string path = store_->path();
  store_.reset();
  {
    auto db = base::Database::Open(path, base::DatabaseOptions{});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)
                    ->Exec("DROP INDEX signatures_name;"
                           "ALTER TABLE signatures DROP COLUMN callees_json;"
                           "UPDATE meta SET value = '1' WHERE key = 'oracle_schema_version';")
                    .ok());
  }
  auto reopened = OracleStore::Open(path, false);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  auto sigs = (*reopened)->ByName("c_exact");
  ASSERT_TRUE(sigs.ok()) << sigs.status().ToString();
  ASSERT_EQ(sigs->size(), 1u);
  EXPECT_TRUE(sigs->front()->callees.empty());
}

TEST_F(OracleTest, GlueVersionWins) {
  BuildCorpus();
  const std::int64_t v = Ingest(TargetModule(), "t1", "3.1.30");
  Result<IdentifyReport> w = Identify(*kb_, v, *store_, IdentifyOptions{});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->version.version, "3.1.30");
  EXPECT_EQ(w->version.source, "glue");
  EXPECT_FALSE(w->version_stored);
  auto info = kb_->GetVersion(v);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->emscripten_version_source, "glue");
}

TEST_F(OracleTest, ForeignModuleIsSaidPlainly) {
  BuildCorpus();
  const std::int64_t v = Ingest(TargetModule(/*foreign=*/true), "rusty");
  Result<IdentifyReport> w = Identify(*kb_, v, *store_, IdentifyOptions{});
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(w->toolchain.emscripten);
  EXPECT_THAT(w->note, HasSubstr("is not an Emscripten module"));
  EXPECT_THAT(w->note, HasSubstr("Still tried"));
  EXPECT_FALSE(w->version.version.has_value());
  for (const Match& m : w->result.matches) EXPECT_LE(m.confidence, kForeignCap);
  EXPECT_THAT(ReportText(*w), HasSubstr("not an Emscripten module"));
}

TEST(DetectToolchainTest, ProducersDecide) {
  const std::vector<kb::FunctionRecord> none;
  Toolchain rust = DetectToolchain(
      R"({"language":[["Rust",""]],"processed-by":[["rustc","1.79.0"],["wasm-bindgen","0.2"]]})",
      std::nullopt, none);
  EXPECT_FALSE(rust.emscripten);
  EXPECT_THAT(rust.reason, HasSubstr("Rust"));
  Toolchain go = DetectToolchain(R"({"language":[["Go","1.22"]]})", std::nullopt, none);
  EXPECT_FALSE(go.emscripten);
  Toolchain ems = DetectToolchain(R"j({"processed-by":[["clang","17 (emscripten 3.1.50)"]]})j",
                                  std::nullopt, none);
  EXPECT_TRUE(ems.emscripten);
  Toolchain glue = DetectToolchain("{}", std::string("3.1.6"), none);
  EXPECT_TRUE(glue.emscripten);
  Toolchain nothing = DetectToolchain("{}", std::nullopt, none);
  EXPECT_FALSE(nothing.emscripten);
}

TEST(HintTest, LibcxxAbiTag) {
  std::vector<kb::FunctionRecord> records(2);
  records[0].raw_name = "plain";
  records[1].raw_name = "std::__2::basic_string<char>::append[abi:ne190106](char const*)";
  VersionGuess g = HintFromNames(records);
  EXPECT_EQ(g.version, "4.0.x");
  EXPECT_EQ(g.source, "hint");
  EXPECT_THAT(g.detail, HasSubstr("LLVM 19.1.6"));
  records[1].raw_name = "no tag here";
  EXPECT_FALSE(HintFromNames(records).version.has_value());
}

TEST(LshTest, BucketsAreDeterministicAndBandLocal) {
  std::array<std::uint64_t, kb::kMinHashValues> a{};
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = i * 7919;
  std::array<std::uint64_t, kb::kMinHashValues> b = a;
  b[31] ^= 1;  // only band 7 differs
  for (int band = 0; band < 7; ++band) EXPECT_EQ(LshBucket(a, band), LshBucket(b, band));
  EXPECT_NE(LshBucket(a, 7), LshBucket(b, 7));
  EXPECT_NE(LshBucket(a, 0), LshBucket(a, 1));
}

// A PostgreSQL URL is a store target as given: never taken against a directory (§8.1).
TEST(ResolveStorePathTest, UrlsPassThroughUntouched) {
  base::PosixEnv env;
  base::testing::TempDir dir("trove_oracle_resolve");
  const std::string url = "postgresql://team@db.example:5432/oracle?sslmode=require";
  EXPECT_EQ(ResolveStorePath(env, url, dir.path(), dir.path()), url);
  EXPECT_EQ(ResolveStorePath(env, std::string("postgres://h/o"), dir.path(), "/elsewhere"),
            "postgres://h/o");
  EXPECT_EQ(ResolveStorePath(env, std::string("sub/o.db"), dir.path(), "/cwd"), "/cwd/sub/o.db");
  // From the project config too.
  std::filesystem::create_directories(dir.path() + "/.warden");
  ASSERT_TRUE(
      env.WriteFile(dir.path() + "/.warden/config.json", R"({"oracle.store": ")" + url + R"("})")
          .ok());
  EXPECT_EQ(ResolveStorePath(env, std::nullopt, dir.path(), "/cwd"), url);
  EXPECT_TRUE(IsStoreUrl(url));
  EXPECT_FALSE(IsStoreUrl("/tmp/postgresql://x"));
}

// A KB at a URL has no project directory (never one named after the URL); with an empty
// project directory the store is found from the working directory.
TEST(ProjectDirOfKbTest, UrlHasNone) {
  EXPECT_EQ(ProjectDirOfKb("/p/.warden/warden.db"), "/p");
  EXPECT_EQ(ProjectDirOfKb("/p/kb.db"), "/p");
  EXPECT_EQ(ProjectDirOfKb("postgresql://team:pw@db.example:5432/warden?sslmode=require"), "");
  EXPECT_EQ(ProjectDirOfKb("postgres://h/x?host=/p/.warden/warden.db"), "");
  base::PosixEnv env;
  base::testing::TempDir dir("trove_oracle_kb_url");
  EXPECT_EQ(ResolveStorePath(env, std::nullopt, ProjectDirOfKb("postgresql://h/kb"), dir.path()),
            dir.path() + "/.warden/oracle.db");
}

}  // namespace
}  // namespace trove::warden::oracle

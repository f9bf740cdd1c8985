#include "librarian/eval/eval_set.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "librarian/eval/generate.h"
#include "librarian/eval/runner.h"
#include "librarian/testing/temp_dir.h"

namespace trove::librarian::eval {
namespace {

std::string Slice(std::string_view s, std::pair<std::uint32_t, std::uint32_t> r) {
  return std::string(s.substr(r.first, r.second - r.first));
}

TEST(EvalSetTest, BlankKeepsLinesAndDelimiters) {
  std::string src = "/** Parse 2 items. */\nfunction f() {}\n";
  std::string out = BlankRanges(src, {{0, 21}});
  EXPECT_EQ(out, "/**" + std::string(14, ' ') + ". */\nfunction f() {}\n");
  EXPECT_EQ(out.size(), src.size());
  EXPECT_EQ(BlankRanges("abc", {{1, 99}}), "a  ");  // clipped
}

TEST(EvalSetTest, StripIdentifiers) {
  EXPECT_EQ(StripIdentifiers("Returns the parsed value of `x.y` using parse_value().", "f"),
            "Returns the parsed value of using");
  EXPECT_EQ(StripIdentifiers("Creates a new HttpClient for the given URL.", "create"),
            "Creates a new for the given URL");
  EXPECT_EQ(StripIdentifiers("Checks MAX_SIZE and os.path then foo/bar.", "g"), "Checks and then");
  EXPECT_EQ(StripIdentifiers("Merge two trees {@link Tree} quickly @param a the first", "h"),
            "Merge two trees quickly");
  EXPECT_EQ(StripIdentifiers("Compile the pattern :param p: the pattern", "compile"),
            "the pattern");
  EXPECT_EQ(StripIdentifiers("Resolve a path against the root", "resolve"),
            "a path against the root");  // the function's own name goes
}

TEST(EvalSetTest, DropNameWords) {
  EXPECT_EQ(DropNameWords("Parse the http request body", "parseHttpBody"), "the request");
  EXPECT_EQ(DropNameWords("Parses headers into a map", "parse_headers"), "into a map");
  EXPECT_EQ(CountWords("a b 12 c"), 3u);
}

TEST(EvalSetTest, SplitIsStableAndAboutThirtyPercent) {
  EXPECT_EQ(SplitOf("zod", "src/a.ts"), SplitOf("zod", "src/a.ts"));
  int dev = 0;
  for (int i = 0; i < 2000; ++i) dev += SplitOf("r", "f" + std::to_string(i)) == "dev";
  EXPECT_GT(dev, 500);
  EXPECT_LT(dev, 700);
}

TEST(EvalSetTest, ExcludedTargets) {
  EXPECT_TRUE(IsExcludedFromTargets("test/util.js"));
  EXPECT_TRUE(IsExcludedFromTargets("src/__tests__/a.ts"));
  EXPECT_TRUE(IsExcludedFromTargets("lib/a.test.js"));
  EXPECT_TRUE(IsExcludedFromTargets("pip/_vendor/rich/console.py"));  // pip's vendored tree
  EXPECT_FALSE(IsExcludedFromTargets("pip/_internal/vendor_check.py"));
  EXPECT_TRUE(IsExcludedFromTargets("test_os.py"));
  EXPECT_TRUE(IsExcludedFromTargets("docs/conf.py"));
  EXPECT_TRUE(IsExcludedFromTargets("examples/x.go"));
  EXPECT_FALSE(IsExcludedFromTargets("src/testable.ts"));
  EXPECT_FALSE(IsExcludedFromTargets("lib/protest/a.js"));
}

TEST(EvalSetTest, DocCommentRangeJsDocAndLineComments) {
  std::string js =
      "const x = 1;\n"
      "/**\n"
      " * Adds two numbers.\n"
      " * @param {number} a\n"
      " */\n"
      "export function add(a, b) { return a + b; }\n";
  std::uint32_t start_byte = static_cast<std::uint32_t>(js.find("function"));
  auto r = DocCommentRange(js, "javascript", start_byte, 6);
  ASSERT_TRUE(r);
  EXPECT_EQ(Slice(js, *r), "/**\n * Adds two numbers.\n * @param {number} a\n */");

  std::string go = "package p\n\n// Sum adds.\n// More text.\nfunc Sum() {}\n";
  r = DocCommentRange(go, "go", static_cast<std::uint32_t>(go.find("func")), 5);
  ASSERT_TRUE(r);
  EXPECT_EQ(Slice(go, *r), "// Sum adds.\n// More text.");

  std::string cpp = "/// Frees it.\ntemplate <typename T>\nvoid Free(T* p) {}\n";
  r = DocCommentRange(cpp, "cpp", static_cast<std::uint32_t>(cpp.find("void")), 3);
  ASSERT_TRUE(r);
  EXPECT_EQ(Slice(cpp, *r), "/// Frees it.");

  std::string none = "int a;\n\nint f() {}\n";
  EXPECT_FALSE(DocCommentRange(none, "c", static_cast<std::uint32_t>(none.find("int f")), 3));
  // A glob inside the comment looks like an opening: the range found misses the summary, so
  // the generator's check (the doc sentence must lie inside the range) rejects the target.
  std::string glob = "/**\n * Match src/**/*.ts files.\n */\nfunction m() {}\n";
  r = DocCommentRange(glob, "javascript", static_cast<std::uint32_t>(glob.find("function")), 4);
  ASSERT_TRUE(r);
  EXPECT_EQ(NormalizeWords(Slice(glob, *r)).find("match"), std::string::npos);
}

TEST(EvalSetTest, DocCommentRangePythonDocstring) {
  std::string py =
      "def f(a: dict = {'k': 1},\n"
      "      b=lambda x: x) -> 'A:B':\n"
      "    # comment\n"
      "    r\"\"\"Return the thing.\n"
      "\n"
      "    More.\"\"\"\n"
      "    return a\n";
  auto r = DocCommentRange(py, "python", 0, 1);
  ASSERT_TRUE(r);
  EXPECT_EQ(Slice(py, *r), "r\"\"\"Return the thing.\n\n    More.\"\"\"");
  std::string nodoc = "def g():\n    return 1\n";
  EXPECT_FALSE(DocCommentRange(nodoc, "python", 0, 1));
}

TEST(EvalSetTest, FunctionMatch) {
  std::string t = FunctionId("a.py", 10, 20, "C.f");
  EXPECT_TRUE(FunctionMatch(FunctionId("a.py", 10, 20, "C.f"), t));
  EXPECT_TRUE(FunctionMatch(FunctionId("a.py", 1, 99, "other"), t));  // covers all of it
  EXPECT_TRUE(FunctionMatch(FunctionId("a.py", 15, 40, "g"), t));     // 6 of 11 lines
  EXPECT_FALSE(FunctionMatch(FunctionId("a.py", 17, 40, "g"), t));    // 4 of 11 lines
  EXPECT_FALSE(FunctionMatch(FunctionId("b.py", 10, 20, "C.f"), t));  // other file
  EXPECT_TRUE(FunctionMatch(FunctionId("a.py", 50, 60, "C.f"), t));   // names the symbol
  EXPECT_FALSE(FunctionMatch("a.py", t));                             // no span
  EXPECT_TRUE(
      FunctionMatch(FunctionId("x.cc", 3, 4, "ns::A::f"), FunctionId("x.cc", 3, 4, "ns::A::f")));
}

TEST(EvalSetTest, SerializeParseRoundTripAndErrors) {
  EvalSet set;
  set.generator = "g";
  set.sources = "s.json";
  set.repos.push_back({"r", "node_modules/r", "javascript"});
  set.files.push_back({"r", "lib/a.js", "abc", 100, {{0, 10}, {20, 30}}});
  EvalTarget t;
  t.qid = "r:0001";
  t.repo = "r";
  t.path = "lib/a.js";
  t.name = "f";
  t.qualified = "f";
  t.start_line = 3;
  t.end_line = 9;
  t.language = "javascript";
  t.split = "test";
  t.doc = "Does a thing.";
  t.query = "Does a thing";
  t.query_hard = "Does a thing";
  set.targets.push_back(t);
  std::string text = SerializeEvalSet(set);
  Result<EvalSet> back = ParseEvalSet(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(SerializeEvalSet(*back), text);
  EXPECT_EQ(back->files[0].blank.size(), 2u);

  auto err = [](std::string_view s) { return ParseEvalSet(s).status().message(); };
  EXPECT_EQ(err(""), "empty evaluation set");
  EXPECT_EQ(err("nope\n"), "line 1: not a JSON object");
  EXPECT_EQ(err(R"({"kind":"repo","name":"r","root":"x","language":"c"})"),
            "line 1: the first line must be of kind 'set'");
  std::string head = R"({"kind":"set","version":1,"generator":"g","sources":"s"})"
                     "\n";
  EXPECT_EQ(err(R"({"kind":"set","version":2,"generator":"g","sources":"s"})"),
            "line 1: version 2 (this build reads 1)");
  EXPECT_EQ(
      err(head + R"({"kind":"file","repo":"zz","path":"a","sha256":"x","bytes":1,"blank":[]})"),
      "line 2: file of undeclared repo 'zz'");
  std::string repo = R"({"kind":"repo","name":"r","root":"x","language":"c"})"
                     "\n";
  EXPECT_EQ(err(head + repo +
                R"({"kind":"file","repo":"r","path":"../a","sha256":"x","bytes":1,"blank":[]})"),
            "line 3: file path '../a' must be relative and stay inside the repo");
  EXPECT_EQ(err(head + repo +
                R"({"kind":"file","repo":"r","path":"a","sha256":"x","bytes":5,"blank":[[3,9]]})"),
            "line 3: blank range [3, 9] out of order or past the file's 5 bytes");
  EXPECT_EQ(err(head + repo + R"({"kind":"query","qid":"q","repo":"r","path":"a"})"),
            "line 3: missing field 'name'");
  EXPECT_EQ(err(head + R"({"kind":"bogus"})"), "line 2: unknown kind 'bogus'");
}

TEST(EvalSetTest, GenerateBlanksTargetsAndDropsLeaks) {
  testing::TempDir dir;
  dir.Write("repo/lib/math.js",
            "/**\n * Adds two numbers together quickly.\n */\nfunction add(a, b) {\n"
            "  return a + b;\n}\n\n"
            "/** Computes the total weight of all parcels. */\nfunction weigh(ps) {\n"
            "  return ps.length;\n}\n");
  // A distractor quoting the second sentence verbatim: that query leaks and is dropped.
  dir.Write("repo/test/math.test.js", "// Computes the total weight of all parcels.\nweigh([]);\n");
  dir.Write("repo/lib/skip.md", "# not included\n");
  dir.Write("repo/dist/bundle.js", "/** Never indexed by bootstrap. */\nfunction b() {}\n");
  std::string sources = R"({"repos":[{"name":"m","root":"repo","language":"javascript",
      "include":["**/*.js"],"cap":10}]})";
  Result<std::vector<SourceRepo>> repos = ParseSources(sources);
  ASSERT_TRUE(repos.ok()) << repos.status().ToString();
  GenerateStats stats;
  Result<EvalSet> set = GenerateEvalSet(*repos, dir.path(), "sources.json", &stats);
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->files.size(), 2u);  // the .md is not included; dist/ is a crawler default exclude
  EXPECT_EQ(set->files[0].path, "lib/math.js");
  ASSERT_EQ(set->targets.size(), 1u);
  const EvalTarget& t = set->targets[0];
  EXPECT_EQ(t.qid, "m:0001");
  EXPECT_EQ(t.name, "add");
  EXPECT_EQ(t.start_line, 4u);
  EXPECT_EQ(t.query, "Adds two numbers together quickly");
  EXPECT_EQ(t.query_hard, "two numbers together quickly");
  EXPECT_EQ(stats.leaked, 1u);
  // Deterministic: a second run is byte-identical.
  Result<EvalSet> again = GenerateEvalSet(*repos, dir.path(), "sources.json");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(SerializeEvalSet(*again), SerializeEvalSet(*set));

  // The runner rebuilds the blanked copy and the baseline finds the target by its body words.
  RunOptions o;
  o.project_dir = dir.path();
  o.split = "all";
  o.config.warmup_queries = 0;
  o.rankings_path = dir.path() + "/out/rankings.tsv";
  Result<EvalRun> run = RunEval(*set, o);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->systems.size(), AvailableSystems().size());
  EXPECT_EQ(run->queries, 1u);
  EXPECT_EQ(run->repos[0].files_missing, 0u);
  EXPECT_EQ(run->repos[0].files_indexed, 2u);
  // The rankings file: one file-level and one function-level line per system.
  std::ifstream rankings(o.rankings_path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(rankings, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 2 * AvailableSystems().size() + 1);
  // Systems in AvailableSystems() order; the baseline ranks nothing (no query word occurs in
  // the blanked copy), the librarian finds `add` through the inflection "Adds" -> "add".
  EXPECT_EQ(lines[0], "m:0001\tbaseline\tfile\t");
  EXPECT_EQ(lines[1], "m:0001\tbaseline\tfunction\t");
  EXPECT_EQ(lines[2], "m:0001\tlibrarian\tfile\tlib/math.js");
  EXPECT_EQ(lines[3], "m:0001\tlibrarian\tfunction\tlib/math.js#L4-L6::add");
  EXPECT_EQ(lines[4].rfind("m:0001\tlibrarian\tpacks\t", 0), 0u) << lines[4];
  EXPECT_EQ(lines[4].size(), std::string("m:0001\tlibrarian\tpacks\t").size() + 64);

  // A changed file is left out with its queries.
  dir.Write("repo/lib/math.js", "changed\n");
  Result<EvalRun> changed = RunEval(*set, o);
  EXPECT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), base::StatusCode::kNotFound);

  o.split = "nope";
  EXPECT_EQ(RunEval(*set, o).status().message(), "split: must be dev, test or all, not 'nope'");
}

TEST(EvalSetTest, ParseSourcesErrors) {
  EXPECT_EQ(ParseSources("[]").status().message(), "sources: not a JSON object");
  EXPECT_EQ(ParseSources(R"({"repos":[{"name":"a","root":"r"}]})").status().message(),
            "sources.repos[0].language: must be a non-empty string");
  EXPECT_EQ(ParseSources(R"({"repos":[{"name":"a","root":"r","language":"c","cap":0}]})")
                .status()
                .message(),
            "sources.repos[0].cap: must be a positive integer");
}

}  // namespace
}  // namespace trove::librarian::eval

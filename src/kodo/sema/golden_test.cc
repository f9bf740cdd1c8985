// Golden diagnostics (docs/conventions.md §11): every testdata/kodo/check/*.ko program is checked
// as `kodoc check FILE --json-errors` would, and the envelope (code, message, span with line and
// column, suggestion, fixability, fix_patch, repair_plan, see_also) must equal FILE.json.
// Programs named ok_*.ko must check clean.
//
// Locations are marked, not counted: a golden program puts a caret comment under each expected
// error, e.g.
//     let p = Point { x: 1 }
//     //      ^^^^^^^^^^^^^^ E0214
// and the test requires a diagnostic with that code starting at the first caret; when the span
// ends on the same line it must end after the last caret. Diagnostics without a span (E0210,
// E0101) are marked `//~ CODE` anywhere in the file. Every diagnostic must be marked.
//
// Upstream's annotation style (upstream's kotest harness) works too:
//     println(s) //~ ERROR E0240: cannot use `s` after move
// matches a diagnostic with that code whose span starts on that line (a comment-only line
// annotates the code line above it; a diagnostic without a span matches any line) and whose
// message contains the text, case-insensitively. Both directions are required, as with carets.
//
// Also here: the coverage test (every code the T0-T1 checker can emit has a golden), and the
// fix-patch test (applying each golden's fix_patch gives a file that parses and no longer has
// that error).
//
// To regenerate after an intended change: `kodo_sema_test --update`, then review the diff of
// testdata/kodo/check/ and commit it with the change that caused it.
#include <dirent.h>
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/env.h"
#include "kodo/diag/diagnostic.h"
#include "kodo/driver/front.h"
#include "kodo/sema/check.h"

namespace trove::kodo::sema {
namespace {

bool g_update = false;  // set once by main, before any test runs

const std::string kDir = std::string(TROVE_KODO_TESTDATA) + "/check";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Single-file programs `NAME.ko`, and multi-file ones: a directory `NAME/` whose `main.ko`
// imports the others (docs/kodo.md §4.3), named `NAME/main` and checked as `kodoc check` does.
std::vector<std::string> Programs() {
  std::vector<std::string> names;
  if (DIR* dir = opendir(kDir.c_str())) {
    while (dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name.size() > 3 && name.substr(name.size() - 3) == ".ko") {
        names.push_back(name.substr(0, name.size() - 3));
      } else if (name[0] != '.' && std::ifstream(kDir + "/" + name + "/main.ko").good()) {
        names.push_back(name + "/main");
      }
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

struct Checked {
  SourceBuffer source;
  SourceCheck check;
  // A multi-file program's imported modules, whose warnings the envelope lists as `kodoc check`
  // does (after the checked file's, with their own paths).
  std::vector<std::unique_ptr<driver::ImportedModule>> imports;
};

Checked CheckText(const std::string& name, std::string text) {
  if (name.find('/') != std::string::npos) {  // a multi-file program: the CLI's front end
    base::PosixEnv env;
    Result<driver::Compiled> c = driver::CompileSource(std::move(text), kDir + "/" + name + ".ko",
                                                       driver::FrontOptions{.import_env = &env});
    EXPECT_TRUE(c.ok());
    SourceCheck check;
    check.phase = c->outcome == driver::Outcome::kParseFailed ? Phase::kParse : Phase::kTypes;
    check.module = std::move(c->module);
    check.diagnostics = std::move(c->diagnostics);
    check.warnings = std::move(c->warnings);
    return Checked{std::move(c->source), std::move(check), std::move(c->imports)};
  }
  Result<SourceBuffer> source = SourceBuffer::Create(0, name + ".ko", std::move(text));
  EXPECT_TRUE(source.ok());
  Result<SourceCheck> check = CheckSource(*source);
  EXPECT_TRUE(check.ok());
  return Checked{std::move(*source), std::move(*check), {}};
}

std::string Envelope(const Checked& c, const std::string& name) {
  diag::ModuleSummary summary;
  if (c.check.module) summary = Summarize(*c.check.module);
  // Imported files by their path below the golden directory, as the checked file's.
  std::vector<diag::FileDiagnostic> imported;
  for (const auto& m : c.imports) {
    const std::string_view path = std::string_view(m->source.name()).substr(kDir.size() + 1);
    for (const diag::Diagnostic& w : m->warnings) imported.push_back({&m->source, path, &w});
  }
  return diag::RenderCheckJson(c.source, name + ".ko", c.check.diagnostics, summary,
                               c.check.warnings, imported) +
         "\n";
}

// A caret marker: code expected at [start, end) (end unknown when the span continues). An
// `//~ ERROR` annotation sets `line` (1-based) and `text` instead.
struct Marker {
  std::string code;
  std::optional<std::uint32_t> start;
  std::optional<std::uint32_t> end;
  std::optional<std::uint32_t> line;
  std::string text;
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::vector<Marker> Markers(std::string_view text) {
  std::vector<Marker> out;
  std::vector<std::pair<std::size_t, std::string_view>> lines;  // start offset, text
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back({pos, text.substr(pos, nl - pos)});
    pos = nl + 1;
  }
  std::size_t code_line = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i].second;
    const std::size_t slash = line.find("//");
    const std::size_t first_nonspace = line.find_first_not_of(" \t");
    const bool comment_only = first_nonspace != std::string_view::npos && slash == first_nonspace;
    if (const std::size_t ann = line.find("//~ ERROR "); ann != std::string_view::npos) {
      Marker m;
      m.code = std::string(line.substr(ann + 10, 5));
      std::string_view rest = line.substr(std::min(line.size(), ann + 15));
      if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);
      while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
      while (!rest.empty() && rest.back() == ' ') rest.remove_suffix(1);
      m.text = Lower(rest);
      m.line = static_cast<std::uint32_t>((comment_only ? code_line : i) + 1);
      out.push_back(std::move(m));
      if (!comment_only) code_line = i;
      continue;
    }
    if (comment_only && line.find("//~ ", slash) == slash) {
      std::string code(line.substr(slash + 4, 5));
      out.push_back(Marker{code, std::nullopt, std::nullopt});
      continue;
    }
    const std::size_t caret = line.find('^');
    if (comment_only && caret != std::string_view::npos &&
        line.find_first_not_of(' ', slash + 2) == caret) {
      const std::size_t last = line.find_first_not_of('^', caret);
      const std::size_t count = (last == std::string_view::npos ? line.size() : last) - caret;
      const std::size_t code_at = line.find('E', caret + count);
      Marker m;
      m.code = std::string(line.substr(code_at, 5));
      m.start = static_cast<std::uint32_t>(lines[code_line].first + caret);
      m.end = static_cast<std::uint32_t>(*m.start + count);
      out.push_back(std::move(m));
      continue;
    }
    if (!comment_only) code_line = i;
  }
  return out;
}

TEST(CheckGoldenTest, EveryProgramMatchesItsGolden) {
  const std::vector<std::string> names = Programs();
  ASSERT_GE(names.size(), 20u) << kDir;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string text = ReadFile(kDir + "/" + name + ".ko");
    const Checked c = CheckText(name, text);
    const std::string got = Envelope(c, name);
    const std::string golden_path = kDir + "/" + name + ".json";
    if (g_update) {
      std::ofstream(golden_path, std::ios::binary) << got;
    } else {
      EXPECT_EQ(got, ReadFile(golden_path)) << "run kodo_sema_test --update and review the diff";
    }
    if (name.rfind("ok_", 0) == 0) {  // also `ok_*/main`
      EXPECT_TRUE(c.check.diagnostics.empty()) << got;
      continue;
    }
    EXPECT_FALSE(c.check.diagnostics.empty());
    // Every diagnostic is marked in the source, and every marker is matched.
    const std::vector<Marker> markers = Markers(text);
    std::vector<bool> used(markers.size(), false);
    for (const diag::Diagnostic& d : c.check.diagnostics) {
      bool found = false;
      for (std::size_t i = 0; i < markers.size() && !found; ++i) {
        const Marker& m = markers[i];
        if (used[i] || m.code != d.code()) continue;
        if (m.line) {
          const bool line_ok = !d.span || c.source.Locate(d.span->begin).line == *m.line;
          found = line_ok && Lower(d.message).find(m.text) != std::string::npos;
        } else if (!m.start) {
          found = !d.span || !d.span_in_json;
        } else if (d.span && d.span->begin == *m.start) {
          const std::string_view rest = c.source.text().substr(*m.start);
          const std::size_t nl = rest.find('\n');
          const bool one_line = nl == std::string_view::npos || d.span->end <= *m.start + nl;
          found = !one_line || d.span->end == *m.end;
        }
        if (found) used[i] = true;
      }
      EXPECT_TRUE(found) << "no marker for " << d.message;
    }
    for (std::size_t i = 0; i < markers.size(); ++i) {
      EXPECT_TRUE(used[i]) << "marker " << markers[i].code << " at " << markers[i].start.value_or(0)
                           << " matched no diagnostic";
    }
  }
}

// The codes the T0-T1 checker can emit (kinds.def: emitted by check, tier <= 1), plus those of
// later tiers it already emits. Each needs a golden case.
TEST(CheckGoldenTest, EveryEmittableCodeHasAGolden) {
  std::set<std::string> covered;
  for (const std::string& name : Programs()) {
    const nlohmann::json j = nlohmann::json::parse(ReadFile(kDir + "/" + name + ".json"));
    for (const nlohmann::json& e : j["errors"]) covered.insert(e["code"].get<std::string>());
  }
  // Later-tier codes this checker already emits (they have goldens too).
  const std::set<std::string> implemented_later = {
      "E0221", "E0223", "E0224", "E0225", "E0226", "E0227", "E0230",
      "E0231", "E0233", "E0234", "E0235", "E0310", "E0240", "E0241",
      "E0242", "E0245", "E0246", "E0247", "E0248", "E0280", "E0281"};
  // The trust policies (kodo/trust/policy.h), tier T3.
  const std::set<std::string> trust_policies = {"E0260", "E0261", "E0262", "E0350"};
  // Imports and visibility (docs/kodo.md §4.3), CLI only: multi-file goldens (`NAME/main.ko`).
  const std::set<std::string> imports = {"E0270", "E0903", "E0904", "E0905"};
  // Codes of the kinds table that are NOT required here, with why:
  //   E0104             recovering parser only (LSP, `kodoc parse`), never in check output
  //   E0222             never emitted upstream
  //   E0263,E0264       need a kodo.toml [trust] table (CLI only): kodo/trust/trust_test.cc
  //   kNever/kBuild     never produced by `check` (docs/kodo.md §6.1)
  for (const diag::KindInfo& info : diag::AllKinds()) {
    const std::string code(info.code);
    const bool required = (info.emitted == diag::Emitted::kAll && info.tier <= 1) ||
                          implemented_later.count(code) > 0 || trust_policies.count(code) > 0 ||
                          imports.count(code) > 0;
    if (required) {
      EXPECT_TRUE(covered.count(code) > 0) << code << " has no golden case";
    }
  }
}

// Issue 20, "nothing hides behind any": a program that uses a construct of a later tier (T5:
// concurrency, intents, actors; T3: contracts) or one the checker types leniently (a generic
// function as a value, a trait-object call through an associated type) never checks with a
// plain ok: it has an error or a W0901/W0902 warning naming what was not checked.
TEST(CheckGoldenTest, UncheckedConstructsAreNeverSilent) {
  const std::string head = "module m {\n  meta { purpose: \"p\" }\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"spawn", "  fn main() { spawn { println(\"x\") } }\n"},
      {"parallel", "  fn main() { parallel { spawn { println(\"x\") } } }\n"},
      {"async", "  async fn f() -> Int { return 1 }\n  fn main() -> Int { return f().await }\n"},
      {"actor", "  actor C { n: Int  fn get(self) -> Int { return self.n } }\n"},
      {"intent", "  intent serve { port: 8080 }\n"},
      {"contract", "  fn f(x: Int) -> Int requires { x > 0 } { return x }\n"},
      {"generic value", "  fn id<T>(x: T) -> T { return x }\n  fn main() { let f = id }\n"},
      {"dyn associated type",
       "  trait C { type Item\n fn next(self) -> Item }\n"
       "  fn f(c: dyn C) { let x = c.next() }\n"},
  };
  for (const auto& [what, body] : cases) {
    SCOPED_TRACE(what);
    const Checked c = CheckText("t5", head + body + "}\n");
    ASSERT_EQ(c.check.phase, Phase::kTypes)
        << (c.check.diagnostics.empty() ? std::string() : c.check.diagnostics[0].message);
    if (!c.check.diagnostics.empty()) continue;  // an error is not silent either
    ASSERT_FALSE(c.check.warnings.empty()) << "checked clean without saying what it skipped";
    for (const diag::Diagnostic& w : c.check.warnings) {
      EXPECT_TRUE(w.code() == "W0901" || w.code() == "W0902") << w.code();
    }
  }
}

// Import loading is bounded (docs/kodo.md §4.3): a chain of imports longer than
// driver::kMaxImportDepth ends in one E0903 at the checked file's import, a file importing
// itself is an import cycle (E0904), and without an Env (the MCP tools) imports are ignored.
TEST(CheckGoldenTest, ImportLoadingIsBounded) {
  base::MemEnv env;
  ASSERT_TRUE(env.CreateDir("p").ok());
  const std::size_t n = driver::kMaxImportDepth + 8;
  for (std::size_t i = 1; i <= n; ++i) {
    const std::string next = i < n ? fmt::format("    import m{}\n", i + 1) : "";
    ASSERT_TRUE(env.WriteFile(fmt::format("p/m{}.ko", i),
                              fmt::format("module m{} {{\n{}    meta {{ purpose: \"p\" }}\n"
                                          "    pub fn f{}() -> Int {{ return 1 }}\n}}\n",
                                          i, next, i))
                    .ok());
  }
  const std::string main =
      "module app {\n    import m1\n    meta { purpose: \"p\" }\n"
      "    fn main() -> Int { return f1() }\n}\n";
  Result<driver::Compiled> deep =
      driver::CompileSource(main, "p/main.ko", driver::FrontOptions{.import_env = &env});
  ASSERT_TRUE(deep.ok());
  ASSERT_EQ(deep->diagnostics.size(), 1u);
  EXPECT_EQ(deep->diagnostics[0].code(), "E0903");
  EXPECT_NE(deep->diagnostics[0].suggestion->find("limited"), std::string::npos);

  const std::string self = "module app {\n    import main\n    meta { purpose: \"p\" }\n}\n";
  Result<driver::Compiled> cycle =
      driver::CompileSource(self, "p/main.ko", driver::FrontOptions{.import_env = &env});
  ASSERT_TRUE(cycle.ok());
  ASSERT_EQ(cycle->diagnostics.size(), 1u);
  EXPECT_EQ(cycle->diagnostics[0].code(), "E0904");

  // A short chain loads, and the MCP front half (no Env) reports the imported name as E0201.
  const std::string near = "module app {\n    import m" + std::to_string(n - 2) +
                           "\n    meta { purpose: \"p\" }\n"
                           "    fn main() -> Int { return f" +
                           std::to_string(n - 1) + "() }\n}\n";
  Result<driver::Compiled> ok =
      driver::CompileSource(near, "p/main.ko", driver::FrontOptions{.import_env = &env});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->diagnostics.empty()) << ok->diagnostics[0].message;
  EXPECT_EQ(ok->imports.size(), 3u);
  Result<driver::Compiled> mcp = driver::CompileSource(near, "p/main.ko", driver::FrontOptions{});
  ASSERT_TRUE(mcp.ok());
  ASSERT_EQ(mcp->diagnostics.size(), 1u);
  EXPECT_EQ(mcp->diagnostics[0].code(), "E0201");
}

// Issue 17: for every golden program, applying each `auto` patch (fix_patch) gives a file that
// parses, and the patched error is gone: fewer diagnostics with the same code and message (span
// suffix aside) than before. No code is exempt. A patch that fails either was withheld by
// verification (verify_fixes.h) and appears as a `manual` repair plan whose first step carries
// it and says why.
TEST(CheckGoldenTest, FixPatchesParseAndRemoveTheirError) {
  // The codes whose patch verification may withhold here, each with why; any other withheld
  // patch means a generator placed its edit wrongly (decision 0047).
  const std::set<std::string> may_withhold = {
      "E0221", "E0223",  // type expressions carry no span: the enclosing `let` or parameter
                         // would be replaced by a type
      "E0224",           // the fix is the function's return type, elsewhere
      "E0225", "E0226",  // the suggested replacement is a type, not a value
  };
  std::size_t applied = 0;
  std::size_t withheld = 0;
  for (const std::string& name : Programs()) {
    const std::string text = ReadFile(kDir + "/" + name + ".ko");
    const Checked c = CheckText(name, text);
    const bool parse_error = c.check.phase == Phase::kParse;
    for (const diag::Diagnostic& d : c.check.diagnostics) {
      SCOPED_TRACE(name + ": " + d.message);
      if (d.fix_withheld) {
        ++withheld;
        EXPECT_TRUE(may_withhold.count(std::string(d.code())) > 0)
            << "patch withheld: " << d.repair_plan.front().description;
        EXPECT_FALSE(d.fix_patch.has_value());
        EXPECT_EQ(d.fixability(), diag::Fixability::kManual);
        ASSERT_FALSE(d.repair_plan.empty());
        EXPECT_EQ(d.repair_plan.front().patches.size(), 1u);
        EXPECT_NE(d.repair_plan.front().description.find("not offered as an automatic fix"),
                  std::string::npos);
      }
      if (!d.fix_patch) continue;
      EXPECT_EQ(d.fixability(), diag::Fixability::kAuto);
      Result<std::string> patched = diag::ApplyPatches(text, {*d.fix_patch});
      ASSERT_TRUE(patched.ok()) << patched.status().message();
      const Checked again = CheckText(name, *patched);
      ++applied;
      ASSERT_EQ(again.check.phase, Phase::kTypes)
          << "patched program does not parse: " << again.check.diagnostics[0].message << "\n"
          << *patched;
      if (parse_error) continue;  // it parses now, so the parse error is gone
      const auto strip = [](const std::string& m) { return m.substr(0, m.find(" at Span {")); };
      const auto count = [&](const std::vector<diag::Diagnostic>& diags) {
        return std::count_if(diags.begin(), diags.end(), [&](const diag::Diagnostic& x) {
          return x.code() == d.code() && strip(x.message) == strip(d.message);
        });
      };
      // Another function may report the same message; the patched one must be gone.
      EXPECT_LT(count(again.check.diagnostics), count(c.check.diagnostics))
          << "still reported after the patch:\n"
          << *patched;
    }
  }
  EXPECT_GE(applied, 20u);
  // Printed so that a reviewer sees how many patches verification turned into plans.
  std::printf("fix patches: %zu auto (verified), %zu withheld as manual plans\n", applied,
              withheld);
}

}  // namespace
}  // namespace trove::kodo::sema

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--update") trove::kodo::sema::g_update = true;
  }
  return RUN_ALL_TESTS();
}

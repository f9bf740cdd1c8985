#include "librarian/eval/plot.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace trove::librarian::eval {
namespace {

// A strict checker for the XML subset a hand-written SVG uses: a declaration, elements with
// quoted attributes (no duplicates, no '<' in values), text, comments and the predefined and
// numeric character references. Returns "" when well-formed, else what is wrong and where.
std::string XmlProblem(const std::string& x) {
  std::vector<std::string> stack;
  int roots = 0;
  std::size_t i = 0;
  auto name_at = [&x](std::size_t& p) {
    const std::size_t start = p;
    while (p < x.size() && (std::isalnum(static_cast<unsigned char>(x[p])) || x[p] == '_' ||
                            x[p] == ':' || x[p] == '-' || x[p] == '.')) {
      ++p;
    }
    return x.substr(start, p - start);
  };
  auto entity_ok = [&x](std::size_t p, std::size_t end) {
    const std::size_t semi = x.find(';', p);
    if (semi == std::string::npos || semi > end) return false;
    const std::string e = x.substr(p + 1, semi - p - 1);
    static const std::set<std::string> kNamed = {"amp", "lt", "gt", "quot", "apos"};
    if (kNamed.contains(e)) return true;
    if (e.size() > 1 && e[0] == '#') {
      const bool hex = e[1] == 'x';
      for (std::size_t k = hex ? 2 : 1; k < e.size(); ++k) {
        if (!(hex ? std::isxdigit(static_cast<unsigned char>(e[k]))
                  : std::isdigit(static_cast<unsigned char>(e[k])))) {
          return false;
        }
      }
      return e.size() > (hex ? 2u : 1u);
    }
    return false;
  };
  auto text_ok = [&](std::size_t from, std::size_t to) {
    for (std::size_t p = from; p < to; ++p) {
      if (x[p] == '&' && !entity_ok(p, to)) return false;
      if (x[p] == '<') return false;
    }
    return true;
  };
  if (x.starts_with("<?xml")) i = x.find("?>") + 2;
  while (i < x.size()) {
    if (x[i] != '<') {
      const std::size_t next = std::min(x.find('<', i), x.size());
      if (!text_ok(i, next)) return "bad text at " + std::to_string(i);
      if (stack.empty() && x.find_first_not_of(" \n\r\t", i) < next) {
        return "text outside the root at " + std::to_string(i);
      }
      i = next;
      continue;
    }
    if (x.compare(i, 4, "<!--") == 0) {
      const std::size_t end = x.find("-->", i);
      if (end == std::string::npos) return "unclosed comment";
      i = end + 3;
      continue;
    }
    if (x.compare(i, 2, "</") == 0) {
      std::size_t p = i + 2;
      const std::string name = name_at(p);
      if (p >= x.size() || x[p] != '>') return "bad end tag at " + std::to_string(i);
      if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
      stack.pop_back();
      i = p + 1;
      continue;
    }
    std::size_t p = i + 1;
    const std::string name = name_at(p);
    if (name.empty()) return "bad tag at " + std::to_string(i);
    std::set<std::string> attrs;
    for (;;) {
      while (p < x.size() && std::isspace(static_cast<unsigned char>(x[p]))) ++p;
      if (p >= x.size()) return "unclosed tag " + name;
      if (x[p] == '>' || x.compare(p, 2, "/>") == 0) break;
      const std::string attr = name_at(p);
      if (attr.empty() || p >= x.size() || x[p] != '=') return "bad attribute in " + name;
      if (!attrs.insert(attr).second) return "duplicate attribute " + attr;
      ++p;
      if (p >= x.size() || (x[p] != '"' && x[p] != '\'')) return "unquoted " + attr;
      const char quote = x[p];
      const std::size_t end = x.find(quote, p + 1);
      if (end == std::string::npos || !text_ok(p + 1, end)) return "bad value of " + attr;
      p = end + 1;
    }
    if (stack.empty() && ++roots > 1) return "two roots";
    if (x[p] == '>') {
      stack.push_back(name);
      i = p + 1;
    } else {
      i = p + 2;
    }
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  return roots == 1 ? "" : "no root";
}

TEST(PlotTest, TheCheckerCatchesIllFormedXml) {
  EXPECT_EQ(XmlProblem("<a x=\"1\"><b/>t &amp; u</a>"), "");
  EXPECT_NE(XmlProblem("<a><b></a>"), "");
  EXPECT_NE(XmlProblem("<a x=\"<\"/>"), "");
  EXPECT_NE(XmlProblem("<a>&nope;</a>"), "");
  EXPECT_NE(XmlProblem("<a>x & y</a>"), "");
  EXPECT_NE(XmlProblem("<a x=\"1\" x=\"2\"/>"), "");
  EXPECT_NE(XmlProblem("<a/><b/>"), "");
}

TEST(PlotTest, MeanIntervalIsTheNormalApproximation) {
  const Interval i = MeanInterval({0.4, 0.6, 0.4, 0.6});
  EXPECT_DOUBLE_EQ(i.mean, 0.5);
  EXPECT_EQ(i.n, 4u);
  // s = sqrt(0.04 / 3) (the sample standard deviation), half-width 1.96 * s / sqrt(4).
  EXPECT_NEAR(i.high - i.mean, 1.96 * std::sqrt(0.04 / 3.0) / 2, 1e-12);
  EXPECT_NEAR(i.mean - i.low, i.high - i.mean, 1e-12);
  const Interval one = MeanInterval({0.25});
  EXPECT_EQ(one.low, 0.25);
  EXPECT_EQ(one.high, 0.25);
  const Interval clamped = MeanInterval({0, 1, 0, 1});  // half-width 0.566: clamped to [0, 1]
  EXPECT_EQ(clamped.low, 0.0);
  EXPECT_EQ(clamped.high, 1.0);
  EXPECT_EQ(MeanInterval({}).n, 0u);
}

EvalRun SampleRun() {
  EvalRun run;
  run.repos = {{.name = "ws", .queries = 2}, {.name = "<evil & \"repo\">", .queries = 2}};
  auto row = [](std::string id, double rr, double ndcg) {
    QueryRow r;
    r.id = std::move(id);
    r.metrics.reciprocal_rank = rr;
    r.metrics.ndcg_at_10 = ndcg;
    return r;
  };
  SystemResult baseline{.name = std::string(kBaseline)};
  baseline.file_level.rows = {row("q1", 0.5, 0.5), row("q2", 0.5, 0.6), row("q3", 0.25, 0.3),
                              row("q4", 0.25, 0.3)};
  baseline.function_level.rows = baseline.file_level.rows;
  SystemResult librarian{.name = std::string(kLibrarian)};
  librarian.file_level.rows = {row("q1", 1, 1), row("q2", 1, 1), row("q3", 0.5, 0.6),
                               row("q4", 0, 0)};
  librarian.function_level.rows = librarian.file_level.rows;
  run.systems = {baseline, librarian};
  return run;
}

EvalSet SampleSet() {
  EvalSet set;
  for (const auto& [qid, repo] : std::vector<std::pair<std::string, std::string>>{
           {"q1", "ws"}, {"q2", "ws"}, {"q3", "<evil & \"repo\">"}, {"q4", "<evil & \"repo\">"}}) {
    EvalTarget t;
    t.qid = qid;
    t.repo = repo;
    set.targets.push_back(t);
  }
  return set;
}

TEST(PlotTest, FiguresPerRepositoryAndRatioToTheBaseline) {
  const std::vector<RepoFigures> f = PerRepoFigures(SampleRun(), SampleSet());
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].repo, "ws");
  EXPECT_EQ(f[2].repo, "all");
  ASSERT_EQ(f[0].systems.size(), 2u);
  EXPECT_DOUBLE_EQ(f[0].systems[0].mrr.mean, 0.5);
  EXPECT_DOUBLE_EQ(f[0].systems[1].mrr.mean, 1.0);
  EXPECT_DOUBLE_EQ(*f[0].systems[1].mrr_ratio, 2.0);
  EXPECT_DOUBLE_EQ(*f[0].systems[0].mrr_ratio, 1.0);
  EXPECT_DOUBLE_EQ(f[1].systems[1].mrr.mean, 0.25);
  EXPECT_DOUBLE_EQ(*f[1].systems[1].mrr_ratio, 1.0);
  EXPECT_DOUBLE_EQ(f[2].systems[0].mrr.mean, 0.375);
  EXPECT_EQ(f[2].systems[0].mrr.n, 4u);
  EXPECT_DOUBLE_EQ(f[0].systems[1].ndcg.mean, 1.0);

  // The JSON round-trips.
  Result<std::vector<RepoFigures>> back = ParseFiguresJson(FiguresJson(f));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(FiguresJson(*back), FiguresJson(f));
  EXPECT_FALSE(ParseFiguresJson("{\"repos\": [{\"repo\": 1}]}").ok());
  EXPECT_EQ(ParseFiguresJson("{\"repos\": [{\"repo\": \"x\", \"systems\": [{\"system\": \"b\"}]}]}")
                .status()
                .message(),
            "repos[0].systems[0].mrr: must be an object");
}

TEST(PlotTest, SvgIsWellFormedAndCarriesTheFigures) {
  const std::vector<RepoFigures> f = PerRepoFigures(SampleRun(), SampleSet());
  const std::string svg = RenderSvg(f, "eval <run> & \"title\"");
  EXPECT_EQ(XmlProblem(svg), "") << svg;
  EXPECT_EQ(svg.find("<evil"), std::string::npos);
  EXPECT_NE(svg.find("data-repo=\"&lt;evil &amp; &quot;repo&quot;&gt;\""), std::string::npos);
  EXPECT_NE(svg.find("<title>eval &lt;run&gt; &amp; &quot;title&quot;</title>"), std::string::npos);
  // Three panels; per panel a bar per system and repository (3 x 2), whiskers on the two
  // metric panels, and the parity line on the ratio panel.
  EXPECT_NE(svg.find("<g id=\"panel-mrr\">"), std::string::npos);
  EXPECT_NE(svg.find("<g id=\"panel-ndcg\">"), std::string::npos);
  EXPECT_NE(svg.find("<g id=\"panel-ratio\">"), std::string::npos);
  std::size_t bars = 0, whiskers = 0;
  for (std::size_t p = svg.find("class=\"bar\""); p != std::string::npos;
       p = svg.find("class=\"bar\"", p + 1)) {
    ++bars;
  }
  for (std::size_t p = svg.find("class=\"whisker\""); p != std::string::npos;
       p = svg.find("class=\"whisker\"", p + 1)) {
    ++whiskers;
  }
  EXPECT_EQ(bars, 18u);
  EXPECT_EQ(whiskers, 12u);
  EXPECT_NE(svg.find("class=\"parity\""), std::string::npos);
  EXPECT_NE(svg.find("data-system=\"librarian\" data-value=\"2.0000\""), std::string::npos);
  EXPECT_NE(svg.find("data-system=\"baseline\" data-value=\"0.3750\""), std::string::npos);
}

}  // namespace
}  // namespace trove::librarian::eval

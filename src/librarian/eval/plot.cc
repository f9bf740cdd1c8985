#include "librarian/eval/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "base/markup.h"

namespace trove::librarian::eval {
namespace {

using base::EscapeMarkup;
using nlohmann::ordered_json;

constexpr std::array<std::string_view, 6> kColours = {"#2b6cb0", "#dd6b20", "#2f855a",
                                                      "#805ad5", "#c53030", "#718096"};

ordered_json IntervalJson(const Interval& i) {
  ordered_json j;
  j["mean"] = i.mean;
  j["low"] = i.low;
  j["high"] = i.high;
  j["n"] = i.n;
  return j;
}

Result<Interval> ParseInterval(const nlohmann::json& j, const std::string& path) {
  if (!j.is_object()) return Status::InvalidArgument(fmt::format("{}: must be an object", path));
  Interval i;
  for (auto [key, field] :
       {std::pair<const char*, double*>{"mean", &i.mean}, {"low", &i.low}, {"high", &i.high}}) {
    if (!j.contains(key) || !j[key].is_number()) {
      return Status::InvalidArgument(fmt::format("{}.{}: must be a number", path, key));
    }
    *field = j[key].get<double>();
    if (!std::isfinite(*field)) {
      return Status::InvalidArgument(fmt::format("{}.{}: must be finite", path, key));
    }
  }
  if (!j.contains("n") || !j["n"].is_number_unsigned()) {
    return Status::InvalidArgument(fmt::format("{}.n: must be a count", path));
  }
  i.n = j["n"].get<std::size_t>();
  return i;
}

// One panel: grouped bars (one group per repository, one bar per system) with whiskers, or,
// with `ratio`, the ratio against the baseline and a reference line at 1.
struct Panel {
  std::string_view id;
  std::string_view title;
  const Interval* (*pick)(const SystemFigures&);
  bool ratio = false;
};

const Interval* PickMrr(const SystemFigures& s) { return &s.mrr; }
const Interval* PickNdcg(const SystemFigures& s) { return &s.ndcg; }

}  // namespace

Interval MeanInterval(const std::vector<double>& values) {
  Interval i;
  i.n = values.size();
  if (values.empty()) return i;
  double sum = 0;
  for (double v : values) sum += v;
  i.mean = sum / static_cast<double>(values.size());
  double sq = 0;
  for (double v : values) sq += (v - i.mean) * (v - i.mean);
  const double sd = values.size() > 1 ? std::sqrt(sq / static_cast<double>(values.size() - 1)) : 0;
  const double half = 1.96 * sd / std::sqrt(static_cast<double>(values.size()));
  i.low = std::clamp(i.mean - half, 0.0, 1.0);
  i.high = std::clamp(i.mean + half, 0.0, 1.0);
  return i;
}

std::vector<RepoFigures> PerRepoFigures(const EvalRun& run, const EvalSet& set) {
  std::map<std::string, std::string> repo_of;
  for (const EvalTarget& t : set.targets) repo_of[t.qid] = t.repo;
  std::vector<std::string> repos;
  for (const RepoSummary& r : run.repos) {
    if (r.queries > 0) repos.push_back(r.name);
  }
  repos.push_back("all");
  std::vector<RepoFigures> out;
  for (const std::string& repo : repos) {
    RepoFigures f;
    f.repo = repo;
    for (const SystemResult& s : run.systems) {
      std::vector<double> mrr, ndcg, fmrr;
      for (const QueryRow& row : s.file_level.rows) {
        if (repo != "all" && repo_of[row.id] != repo) continue;
        mrr.push_back(row.metrics.reciprocal_rank);
        ndcg.push_back(row.metrics.ndcg_at_10);
      }
      for (const QueryRow& row : s.function_level.rows) {
        if (repo != "all" && repo_of[row.id] != repo) continue;
        fmrr.push_back(row.metrics.reciprocal_rank);
      }
      f.systems.push_back({.system = s.name,
                           .mrr = MeanInterval(mrr),
                           .ndcg = MeanInterval(ndcg),
                           .function_mrr = MeanInterval(fmrr)});
    }
    const auto baseline =
        std::find_if(f.systems.begin(), f.systems.end(),
                     [](const SystemFigures& s) { return s.system == kBaseline; });
    if (baseline != f.systems.end() && baseline->mrr.mean > 0) {
      const double base = baseline->mrr.mean;
      for (SystemFigures& s : f.systems) s.mrr_ratio = s.mrr.mean / base;
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string FiguresJson(const std::vector<RepoFigures>& figures) {
  ordered_json repos = ordered_json::array();
  for (const RepoFigures& f : figures) {
    ordered_json systems = ordered_json::array();
    for (const SystemFigures& s : f.systems) {
      ordered_json j;
      j["system"] = s.system;
      j["mrr"] = IntervalJson(s.mrr);
      j["ndcg"] = IntervalJson(s.ndcg);
      j["function_mrr"] = IntervalJson(s.function_mrr);
      j["mrr_ratio"] = s.mrr_ratio ? ordered_json(*s.mrr_ratio) : ordered_json(nullptr);
      systems.push_back(std::move(j));
    }
    ordered_json r;
    r["repo"] = f.repo;
    r["systems"] = std::move(systems);
    repos.push_back(std::move(r));
  }
  ordered_json out;
  out["repos"] = std::move(repos);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

Result<std::vector<RepoFigures>> ParseFiguresJson(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Status::InvalidArgument("not JSON");
  if (!j.is_object() || !j.contains("repos") || !j["repos"].is_array()) {
    return Status::InvalidArgument("repos: must be an array");
  }
  std::vector<RepoFigures> out;
  for (std::size_t i = 0; i < j["repos"].size(); ++i) {
    const nlohmann::json& r = j["repos"][i];
    const std::string path = fmt::format("repos[{}]", i);
    if (!r.is_object() || !r.contains("repo") || !r["repo"].is_string()) {
      return Status::InvalidArgument(path + ".repo: must be a string");
    }
    if (!r.contains("systems") || !r["systems"].is_array()) {
      return Status::InvalidArgument(path + ".systems: must be an array");
    }
    RepoFigures f;
    f.repo = r["repo"].get<std::string>();
    for (std::size_t k = 0; k < r["systems"].size(); ++k) {
      const nlohmann::json& s = r["systems"][k];
      const std::string spath = fmt::format("{}.systems[{}]", path, k);
      if (!s.is_object() || !s.contains("system") || !s["system"].is_string()) {
        return Status::InvalidArgument(spath + ".system: must be a string");
      }
      SystemFigures sf;
      sf.system = s["system"].get<std::string>();
      ASSIGN_OR_RETURN(sf.mrr, ParseInterval(s.value("mrr", nlohmann::json()), spath + ".mrr"));
      ASSIGN_OR_RETURN(sf.ndcg, ParseInterval(s.value("ndcg", nlohmann::json()), spath + ".ndcg"));
      ASSIGN_OR_RETURN(sf.function_mrr, ParseInterval(s.value("function_mrr", nlohmann::json()),
                                                      spath + ".function_mrr"));
      if (s.contains("mrr_ratio") && !s["mrr_ratio"].is_null()) {
        if (!s["mrr_ratio"].is_number() || !std::isfinite(s["mrr_ratio"].get<double>())) {
          return Status::InvalidArgument(spath + ".mrr_ratio: must be a number or null");
        }
        sf.mrr_ratio = s["mrr_ratio"].get<double>();
      }
      f.systems.push_back(std::move(sf));
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::string RenderSvg(const std::vector<RepoFigures>& figures, std::string_view title) {
  // The systems, in order of first appearance; each keeps one colour in every panel.
  std::vector<std::string> systems;
  for (const RepoFigures& f : figures) {
    for (const SystemFigures& s : f.systems) {
      if (std::find(systems.begin(), systems.end(), s.system) == systems.end()) {
        systems.push_back(s.system);
      }
    }
  }
  const auto colour = [&systems](const std::string& system) {
    const std::size_t i = static_cast<std::size_t>(
        std::find(systems.begin(), systems.end(), system) - systems.begin());
    return kColours[i % kColours.size()];
  };
  double max_ratio = 1.0;
  for (const RepoFigures& f : figures) {
    for (const SystemFigures& s : f.systems) {
      if (s.mrr_ratio) max_ratio = std::max(max_ratio, *s.mrr_ratio);
    }
  }
  // The axis ends at a multiple of 0.5, at most 4: a larger ratio (a baseline near 0) is drawn
  // to the top of the panel, its value in the bar's title and data-value.
  max_ratio = std::min(std::ceil(max_ratio * 2) / 2, 4.0);

  constexpr int kBar = 14, kGroupGap = 16, kLeft = 56, kPanelHeight = 160, kPanelGap = 70,
                kTop = 50;
  const int n_systems = static_cast<int>(std::max<std::size_t>(systems.size(), 1));
  const int group_width = n_systems * kBar + kGroupGap;
  const int n_groups = static_cast<int>(figures.size());
  const int width = std::max(kLeft + n_groups * group_width + kGroupGap, 360);
  const std::array<Panel, 3> panels = {{{"panel-mrr", "file-level MRR (95 % CI)", PickMrr},
                                        {"panel-ndcg", "file-level nDCG@10 (95 % CI)", PickNdcg},
                                        {"panel-ratio", "MRR / baseline MRR", nullptr, true}}};
  const int height = kTop + static_cast<int>(panels.size()) * (kPanelHeight + kPanelGap) + 10;

  std::string out;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      width, height);
  out += fmt::format("<title>{}</title>\n", EscapeMarkup(title));
  out += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}</text>\n",
                     kLeft, EscapeMarkup(title));
  // Legend.
  int lx = kLeft;
  for (const std::string& s : systems) {
    out += fmt::format(
        "<rect x=\"{}\" y=\"28\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" "
        "y=\"37\">{}</text>\n",
        lx, colour(s), lx + 14, EscapeMarkup(s));
    lx += 24 + static_cast<int>(s.size()) * 7;
  }

  for (std::size_t p = 0; p < panels.size(); ++p) {
    const Panel& panel = panels[p];
    const int top = kTop + static_cast<int>(p) * (kPanelHeight + kPanelGap) + 20;
    const int bottom = top + kPanelHeight;
    const double axis_max = panel.ratio ? max_ratio : 1.0;
    const auto y_of = [&](double v) {
      return bottom - kPanelHeight * std::clamp(v / axis_max, 0.0, 1.0);
    };
    out += fmt::format("<g id=\"{}\">\n<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n",
                       panel.id, kLeft, top - 6, EscapeMarkup(panel.title));
    // Ticks every 0.25: the metric axes end at 1, the ratio axis at a multiple of 0.5.
    const int ticks = static_cast<int>(std::lround(axis_max / 0.25));
    for (int t = 0; t <= ticks; ++t) {
      const double v = 0.25 * t;
      out += fmt::format(
          "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e2e8f0\"/><text "
          "x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:.2f}</text>\n",
          kLeft, y_of(v), width, y_of(v), kLeft - 4, y_of(v) + 4, v);
    }
    if (panel.ratio) {
      out += fmt::format(
          "<line class=\"parity\" x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" "
          "stroke=\"#1a202c\" stroke-dasharray=\"4 3\"/>\n",
          kLeft, y_of(1.0), width, y_of(1.0));
    }
    for (int g = 0; g < n_groups; ++g) {
      const RepoFigures& f = figures[static_cast<std::size_t>(g)];
      const int gx = kLeft + kGroupGap + g * group_width;
      out += fmt::format("<g class=\"repo\" data-repo=\"{}\">", EscapeMarkup(f.repo));
      for (const SystemFigures& s : f.systems) {
        const int i =
            static_cast<int>(std::find(systems.begin(), systems.end(), s.system) - systems.begin());
        const int x = gx + i * kBar;
        if (panel.ratio) {
          if (!s.mrr_ratio) continue;
          const double y = y_of(*s.mrr_ratio);
          out += fmt::format(
              "<rect class=\"bar\" data-system=\"{}\" data-value=\"{:.4f}\" x=\"{}\" "
              "y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"{}\"><title>{} {}: {:.3f}× "
              "the baseline</title></rect>",
              EscapeMarkup(s.system), *s.mrr_ratio, x, y, kBar - 2, bottom - y, colour(s.system),
              EscapeMarkup(f.repo), EscapeMarkup(s.system), *s.mrr_ratio);
          continue;
        }
        const Interval& v = *panel.pick(s);
        const double y = y_of(v.mean);
        const double cx = x + (kBar - 2) / 2.0;
        out += fmt::format(
            "<rect class=\"bar\" data-system=\"{}\" data-value=\"{:.4f}\" x=\"{}\" y=\"{:.1f}\" "
            "width=\"{}\" height=\"{:.1f}\" fill=\"{}\"><title>{} {}: {:.4f} [{:.4f}, {:.4f}], n = "
            "{}</title></rect><line class=\"whisker\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" "
            "y2=\"{:.1f}\" stroke=\"#1a202c\"/>",
            EscapeMarkup(s.system), v.mean, x, y, kBar - 2, bottom - y, colour(s.system),
            EscapeMarkup(f.repo), EscapeMarkup(s.system), v.mean, v.low, v.high, v.n, cx,
            y_of(v.low), cx, y_of(v.high));
      }
      out += fmt::format(
          "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"end\" transform=\"rotate(-35 {:.1f} {})\">"
          "{}</text></g>\n",
          gx + n_systems * kBar / 2.0, bottom + 14, gx + n_systems * kBar / 2.0, bottom + 14,
          EscapeMarkup(f.repo));
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace trove::librarian::eval

#include "warden/report/report.h"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string_view>

#include "base/hash.h"
#include "base/markup.h"

namespace trove::warden::report {
namespace {

using base::EscapeMarkup;

// The provenances in the order the chart stacks them (docs/warden.md §6.1: strongest first),
// with their colours; "unnamed" tops each bar.
struct Band {
  std::string_view provenance;
  std::string_view colour;
};
constexpr std::array<Band, 6> kBands = {{{"human", "#1b7f3b"},
                                         {"export", "#2b6cb0"},
                                         {"oracle", "#805ad5"},
                                         {"diff-carry", "#d69e2e"},
                                         {"agent", "#dd6b20"},
                                         {"unnamed", "#cbd5e0"}}};

std::int64_t BandCount(const kb::Coverage& c, std::string_view provenance) {
  if (provenance == "human") return c.human_named;
  if (provenance == "export") return c.export_named;
  if (provenance == "oracle") return c.oracle_named;
  if (provenance == "diff-carry") return c.diff_carry_named;
  if (provenance == "agent") return c.agent_named;
  return std::max<std::int64_t>(0, c.defined - c.named);
}

std::string Conf(const std::optional<double>& c) {
  return c ? fmt::format("{:.3f}", *c) : std::string("-");
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + EscapeMarkup(s);
  return out.empty() ? "-" : out;
}

std::string JoinIndices(const std::vector<std::uint32_t>& items) {
  std::string out;
  for (std::uint32_t i : items) out += fmt::format("{}{}", out.empty() ? "" : ", ", i);
  return out.empty() ? "-" : out;
}

// The filters' script. It reads the rows' data-* attributes and never embeds report data, so
// nothing from the module reaches it; its hash goes into the Content-Security-Policy.
constexpr std::string_view kScript = R"JS(
(function () {
  'use strict';
  var rows = Array.prototype.slice.call(document.querySelectorAll('#functions-table tbody tr.fn'));
  var text = document.getElementById('filter-text');
  var prov = document.getElementById('filter-provenance');
  var locked = document.getElementById('filter-locked');
  var shown = document.getElementById('shown-count');
  function apply() {
    var needle = text.value.toLowerCase();
    var want = prov.value;
    var n = 0;
    rows.forEach(function (row) {
      var hay = (row.getAttribute('data-name') + ' ' + row.getAttribute('data-stable-id') + ' ' +
                 row.getAttribute('data-index')).toLowerCase();
      var ok = (needle === '' || hay.indexOf(needle) >= 0) &&
               (want === '' || row.getAttribute('data-provenance') === want) &&
               (!locked.checked || row.getAttribute('data-locked') === 'true');
      row.hidden = !ok;
      var facts = row.nextElementSibling;
      if (facts && facts.classList.contains('facts')) facts.hidden = !ok;
      if (ok) n += 1;
    });
    shown.textContent = String(n);
  }
  text.addEventListener('input', apply);
  prov.addEventListener('change', apply);
  locked.addEventListener('change', apply);
  apply();
  document.body.setAttribute('data-ready', 'true');
})();
)JS";

constexpr std::string_view kStyle = R"CSS(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1a202c; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.5em; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; vertical-align: top; }
tr.fn:nth-child(4n+1) { background: #f7fafc; }
th { border-bottom: 1px solid #a0aec0; }
code, .mono { font-family: ui-monospace, monospace; font-size: 0.92em; }
.num { text-align: right; } .legend span { display: inline-block; margin-right: 1em; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; margin-right: 0.3em; vertical-align: middle; }
details { margin: 0 0 0.5em 1.5em; } dl { display: grid; grid-template-columns: max-content auto; gap: 0 1em; margin: 0.3em 0; }
dt { color: #4a5568; } dd { margin: 0; word-break: break-all; }
.rejected { color: #9b2c2c; } .filters { margin: 0.5em 0; } .filters > * { margin-right: 1em; }
)CSS";

void AppendChart(const ReportData& data, std::string& out) {
  // One bar per version, each band's height its share of the version's defined functions.
  constexpr int kBarWidth = 36, kGap = 18, kHeight = 200, kLeft = 44, kTop = 10, kBottom = 40;
  const int n = static_cast<int>(data.versions.size());
  const int width = kLeft + n * (kBarWidth + kGap) + kGap;
  out += fmt::format(
      "<svg id=\"coverage-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" "
      "height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-labelledby=\"coverage-chart-title\">"
      "<title id=\"coverage-chart-title\">Named functions by provenance, per version "
      "(share of defined functions)</title>\n",
      width, kTop + kHeight + kBottom, width, kTop + kHeight + kBottom);
  for (int pct = 0; pct <= 100; pct += 25) {
    const double y = kTop + kHeight - kHeight * pct / 100.0;
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#e2e8f0\"/>"
        "<text x=\"{}\" y=\"{:.1f}\" font-size=\"10\" text-anchor=\"end\">{}%</text>\n",
        kLeft, y, width, y, kLeft - 4, y + 3, pct);
  }
  for (int i = 0; i < n; ++i) {
    const VersionCoverage& v = data.versions[static_cast<std::size_t>(i)];
    const double defined = static_cast<double>(std::max<std::int64_t>(v.coverage.defined, 1));
    const int x = kLeft + kGap + i * (kBarWidth + kGap);
    double y = kTop + kHeight;
    out +=
        fmt::format("<g class=\"bar\" data-version=\"{}\"{}>", EscapeMarkup(v.version.label),
                    static_cast<std::size_t>(i) == data.selected ? " data-selected=\"true\"" : "");
    for (const Band& band : kBands) {
      const std::int64_t count = BandCount(v.coverage, band.provenance);
      if (count == 0) continue;
      const double h = kHeight * static_cast<double>(count) / defined;
      y -= h;
      out += fmt::format(
          "<rect class=\"seg\" data-provenance=\"{}\" data-count=\"{}\" x=\"{}\" y=\"{:.2f}\" "
          "width=\"{}\" height=\"{:.2f}\" fill=\"{}\"><title>{}: {} {} of {}</title></rect>",
          band.provenance, count, x, y, kBarWidth, h, band.colour, EscapeMarkup(v.version.label),
          count, band.provenance, v.coverage.defined);
    }
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\"{}>{}</text></g>\n",
        x + kBarWidth / 2, kTop + kHeight + 14,
        static_cast<std::size_t>(i) == data.selected ? " font-weight=\"bold\"" : "",
        EscapeMarkup(v.version.label));
  }
  out += "</svg>\n<p class=\"legend\">";
  for (const Band& band : kBands) {
    out += fmt::format("<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>",
                       band.colour, band.provenance);
  }
  out += "</p>\n";
}

void AppendCoverage(const kb::Coverage& c, std::string& out) {
  out += "<table id=\"coverage-table\">\n";
  auto row = [&out](std::string_view id, std::string_view label, std::int64_t value) {
    out +=
        fmt::format("<tr><th>{}</th><td class=\"num\" id=\"{}\" data-value=\"{}\">{}</td></tr>\n",
                    label, id, value, value);
  };
  row("cov-defined", "defined", c.defined);
  row("cov-named", "named", c.named);
  out += fmt::format(
      "<tr><th>coverage</th><td class=\"num\" id=\"cov-pct\" data-value=\"{:.1f}\">{:.1f} %</td>"
      "</tr>\n",
      c.coverage_pct, c.coverage_pct);
  row("cov-human", "human", c.human_named);
  row("cov-export", "export", c.export_named);
  row("cov-oracle", "oracle", c.oracle_named);
  row("cov-diff-carry", "diff-carry", c.diff_carry_named);
  row("cov-agent", "agent", c.agent_named);
  row("cov-locked", "locked", c.locked);
  out += fmt::format("<tr><th>mean confidence</th><td class=\"num\" id=\"cov-mean\">{}</td></tr>\n",
                     Conf(c.mean_confidence));
  out += "</table>\n";
}

void AppendFacts(const FunctionEntry& f, std::string& out) {
  const kb::FunctionRecord& r = f.record;
  out += "<dl>";
  auto item = [&out](std::string_view term, const std::string& html) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>", term, html);
  };
  item("stable_id", "<code>" + EscapeMarkup(r.stable_id) + "</code>");
  item("type", "<code>" + EscapeMarkup(r.type_signature) + "</code>");
  if (r.is_import) {
    item("import", "<code>" + EscapeMarkup(r.import_module + "." + r.import_field) + "</code>");
  } else {
    item("body", fmt::format("offset {:#x}, {} bytes, {} instructions", r.body_offset, r.body_size,
                             r.instruction_count));
    item("fingerprints",
         fmt::format("<span class=\"mono\">structural {}<br>norm {} (tier {})<br>exact {}</span>",
                     EscapeMarkup(r.structural_hash), EscapeMarkup(r.norm_hash), r.id_tier,
                     EscapeMarkup(r.exact_hash)));
  }
  item("call targets", Join(r.call_targets));
  item("callees", JoinIndices(r.defined_callees));
  item("callers", JoinIndices(f.callers));
  item("strings", Join(r.referenced_strings));
  item("raw name", r.raw_name ? EscapeMarkup(*r.raw_name) : std::string("-"));
  item("exports", Join(r.export_names));
  if (f.symbol && f.symbol->summary) item("summary", EscapeMarkup(*f.symbol->summary));
  out += "</dl>";
  if (!f.symbol || f.symbol->evidence.empty()) {
    out += "<p>no evidence recorded</p>";
    return;
  }
  out +=
      "<table class=\"evidence\"><thead><tr><th>at</th><th>actor</th><th>provenance</th>"
      "<th>name</th><th>confidence</th><th>decision</th><th>reason</th></tr></thead><tbody>";
  for (const kb::EvidenceEntry& e : f.symbol->evidence) {
    out += fmt::format(
        "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td>"
        "<td>{}</td></tr>",
        e.accepted ? "" : " class=\"rejected\"", EscapeMarkup(e.at), EscapeMarkup(e.actor),
        EscapeMarkup(e.provenance), e.name ? EscapeMarkup(*e.name) : std::string("-"),
        Conf(e.confidence), e.accepted ? "accepted" : "rejected", EscapeMarkup(e.reason));
  }
  out += "</tbody></table>";
}

void AppendFunctions(const ReportData& data, std::string& out) {
  std::set<std::string> provenances;
  for (const FunctionEntry& f : data.functions) {
    if (!f.record.is_import) {
      provenances.insert(f.symbol && f.symbol->name ? f.symbol->provenance : "unnamed");
    }
  }
  out +=
      "<div class=\"filters\"><label>filter <input id=\"filter-text\" type=\"search\" "
      "placeholder=\"name, stable_id or index\"></label><label>provenance <select "
      "id=\"filter-provenance\"><option value=\"\">all</option>";
  for (const std::string& p : provenances) {
    out += fmt::format("<option value=\"{0}\">{0}</option>", EscapeMarkup(p));
  }
  out +=
      "</select></label><label><input id=\"filter-locked\" type=\"checkbox\"> locked only"
      "</label><span><span id=\"shown-count\"></span> shown</span></div>\n";
  out +=
      "<table id=\"functions-table\"><thead><tr><th>index</th><th>stable_id</th><th>name</th>"
      "<th>provenance</th><th>confidence</th><th>locked</th><th>type</th></tr></thead><tbody>\n";
  for (const FunctionEntry& f : data.functions) {
    if (f.record.is_import) continue;
    const kb::FunctionRecord& r = f.record;
    const bool named = f.symbol && f.symbol->name;
    const std::string name = named ? *f.symbol->name : std::string();
    const std::string provenance = named ? f.symbol->provenance : std::string("unnamed");
    const std::optional<double> confidence =
        named ? std::optional<double>(f.symbol->confidence) : std::nullopt;
    const bool locked = f.symbol && f.symbol->locked;
    out += fmt::format(
        "<tr class=\"fn\" id=\"fn-{0}\" data-index=\"{0}\" data-stable-id=\"{1}\" "
        "data-name=\"{2}\" "
        "data-provenance=\"{3}\" data-locked=\"{4}\"><td class=\"num\">{0}</td><td><code>{5}</code>"
        "</td><td class=\"name\">{2}</td><td>{3}</td><td class=\"num\">{6}</td><td>{7}</td>"
        "<td><code>{8}</code></td></tr>\n",
        r.func_index, EscapeMarkup(r.stable_id), EscapeMarkup(name), EscapeMarkup(provenance),
        locked ? "true" : "false", EscapeMarkup(r.stable_id.substr(0, 15)), Conf(confidence),
        locked ? "yes" : "", EscapeMarkup(r.type_signature));
    out += "<tr class=\"facts\"><td colspan=\"7\"><details><summary>facts and evidence</summary>";
    AppendFacts(f, out);
    out += "</details></td></tr>\n";
  }
  out += "</tbody></table>\n";
}

void AppendImportsExports(const ReportData& data, std::string& out) {
  std::size_t imports = 0;
  std::string rows;
  for (const FunctionEntry& f : data.functions) {
    if (!f.record.is_import) continue;
    ++imports;
    rows += fmt::format(
        "<tr><td class=\"num\">{}</td><td><code>{}</code></td><td><code>{}</code>"
        "</td></tr>\n",
        f.record.func_index, EscapeMarkup(f.record.import_module + "." + f.record.import_field),
        EscapeMarkup(f.record.type_signature));
  }
  out += fmt::format("<h2>Imports (<span id=\"import-count\">{}</span>)</h2>\n", imports);
  out +=
      "<table id=\"imports-table\"><thead><tr><th>index</th><th>import</th><th>type</th></tr>"
      "</thead><tbody>\n" +
      rows + "</tbody></table>\n";
  std::size_t exports = 0;
  rows.clear();
  for (const FunctionEntry& f : data.functions) {
    for (const std::string& e : f.record.export_names) {
      ++exports;
      rows += fmt::format(
          "<tr><td><code>{}</code></td><td class=\"num\"><a href=\"#fn-{}\">func[{}]</a></td>"
          "</tr>\n",
          EscapeMarkup(e), f.record.func_index, f.record.func_index);
    }
  }
  out += fmt::format("<h2>Exports (<span id=\"export-count\">{}</span>)</h2>\n", exports);
  out +=
      "<table id=\"exports-table\"><thead><tr><th>export</th><th>function</th></tr></thead>"
      "<tbody>\n" +
      rows + "</tbody></table>\n";
}

}  // namespace

Result<ReportData> CollectReport(kb::Kb& k, std::int64_t version_id,
                                 const base::Cancellation& cancel, const base::Progress& progress) {
  ReportData data;
  Result<std::string> project = k.Project();
  data.project = project.ok() ? *project : std::string();
  ASSIGN_OR_RETURN(std::vector<kb::VersionInfo> versions, k.ListVersions());
  std::sort(versions.begin(), versions.end(),
            [](const kb::VersionInfo& a, const kb::VersionInfo& b) { return a.id < b.id; });
  bool found = false;
  for (kb::VersionInfo& v : versions) {
    ASSIGN_OR_RETURN(kb::Coverage c, k.GetCoverage(v.id));
    if (v.id == version_id) {
      data.selected = data.versions.size();
      found = true;
    }
    data.versions.push_back({std::move(v), c});
  }
  if (!found) return Status::NotFound(fmt::format("no version with id {}", version_id));
  ASSIGN_OR_RETURN(std::vector<kb::DiffRecord> diffs, k.ListDiffs());
  std::optional<std::int64_t> from;
  for (const kb::DiffRecord& d : diffs) {
    if (d.to_version == version_id && d.from_version < version_id &&
        (!from || d.from_version > *from)) {
      from = d.from_version;
    }
  }
  if (from) {
    ASSIGN_OR_RETURN(data.changelog, k.GetDiff(*from, version_id));
  }
  ASSIGN_OR_RETURN(std::vector<kb::FunctionRecord> records, k.FunctionRecords(version_id));
  // Callers are the inverse of each body's direct callees: one pass instead of a query each.
  std::map<std::uint32_t, std::set<std::uint32_t>> callers;
  for (const kb::FunctionRecord& r : records) {
    for (std::uint32_t callee : r.defined_callees) callers[callee].insert(r.func_index);
  }
  const double total = static_cast<double>(records.size());
  data.functions.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (cancel.requested()) return Status::Cancelled("report cancelled");
    progress.Report(static_cast<double>(i + 1), total, "report");
    FunctionEntry f;
    f.record = std::move(records[i]);
    if (!f.record.is_import) {
      ASSIGN_OR_RETURN(f.symbol, k.GetSymbol(f.record.stable_id));
    }
    if (auto it = callers.find(f.record.func_index); it != callers.end()) {
      f.callers.assign(it->second.begin(), it->second.end());
    }
    data.functions.push_back(std::move(f));
  }
  std::stable_sort(data.functions.begin(), data.functions.end(),
                   [](const FunctionEntry& a, const FunctionEntry& b) {
                     return a.record.func_index < b.record.func_index;
                   });
  return data;
}

std::string RenderHtml(const ReportData& data) {
  const VersionCoverage& selected = data.versions.at(data.selected);
  const kb::VersionInfo& v = selected.version;
  const base::Sha256Digest digest = base::Sha256(kScript);
  const std::string script_hash = base::Base64Encode(
      std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
  std::string out;
  out.reserve(4096 + data.functions.size() * 1500);
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // Nothing may load from elsewhere, and only the one script below may run.
  out += fmt::format(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'sha256-{}'\">\n",
      script_hash);
  out += fmt::format("<title>WARDEN report: {} {}</title>\n", EscapeMarkup(data.project),
                     EscapeMarkup(v.label));
  out += fmt::format("<style>{}</style>\n</head>\n<body>\n", kStyle);
  out += fmt::format(
      "<h1>WARDEN report: <span id=\"project\">{}</span> <span id=\"version-label\">"
      "{}</span></h1>\n",
      EscapeMarkup(data.project), EscapeMarkup(v.label));
  out += "<table id=\"version-table\">\n";
  auto row = [&out](std::string_view label, const std::string& html) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", label, html);
  };
  row("version id", std::to_string(v.id));
  row("sha256", "<code>" + EscapeMarkup(v.sha256) + "</code>");
  row("size", fmt::format("{} bytes", v.size));
  row("functions",
      fmt::format("<span id=\"fn-total\">{}</span> (<span id=\"fn-imported\">{}</span> "
                  "imported, <span id=\"fn-defined\">{}</span> defined)",
                  v.functions, v.imported, v.defined));
  row("Emscripten", v.emscripten_version ? EscapeMarkup(*v.emscripten_version) : "unknown");
  row("shared memory", v.shared_memory ? "yes" : "no");
  row("ingested at", EscapeMarkup(v.ingested_at));
  row("generated by", EscapeMarkup(data.generator));
  out += "</table>\n";

  out += "<section id=\"coverage\">\n<h2>Coverage by provenance over versions</h2>\n";
  AppendChart(data, out);
  out += fmt::format("<h3>Coverage of {}</h3>\n", EscapeMarkup(v.label));
  AppendCoverage(selected.coverage, out);
  out += "</section>\n<section id=\"interface\">\n";
  AppendImportsExports(data, out);
  out += "</section>\n<section id=\"functions\">\n";
  out += fmt::format("<h2>Functions (<span id=\"function-count\">{}</span> defined)</h2>\n",
                     v.defined);
  AppendFunctions(data, out);
  out += "</section>\n<section id=\"changelog\">\n<h2>Changelog</h2>\n";
  if (data.changelog) {
    std::string from_label = fmt::format("version {}", data.changelog->from_version);
    for (const VersionCoverage& vc : data.versions) {
      if (vc.version.id == data.changelog->from_version) from_label = vc.version.label;
    }
    out += fmt::format(
        "<p>From {} to {}, as <code>warden diff</code> stored it on {}.</p>\n<pre "
        "id=\"changelog-text\">{}</pre>\n</section>\n",
        EscapeMarkup(from_label), EscapeMarkup(v.label), EscapeMarkup(data.changelog->created_at),
        EscapeMarkup(data.changelog->changelog_md));
  } else {
    out +=
        "<p>No diff into this version is stored: run <code>warden diff FROM TO</code> to pair "
        "it with an earlier version and keep its changelog.</p>\n</section>\n";
  }
  out += fmt::format("<script>{}</script>\n</body>\n</html>\n", kScript);
  return out;
}

}  // namespace trove::warden::report

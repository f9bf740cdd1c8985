#include "kodo/diag/sarif.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

namespace trove::kodo::diag {
namespace {

using OrderedJson = nlohmann::ordered_json;

constexpr std::string_view kSchema = "https://json.schemastore.org/sarif-2.1.0.json";

bool KeepInUri(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("-._~!$&'()*+,;=:@/").find(static_cast<char>(c)) !=
         std::string_view::npos;
}

OrderedJson Text(std::string_view text) {
  OrderedJson j;
  j["text"] = std::string(text);
  return j;
}

OrderedJson ArtifactLocation(std::string_view path, std::size_t index) {
  OrderedJson j;
  j["uri"] = PathToUriReference(path);
  j["index"] = index;
  return j;
}

std::string_view Level(const Diagnostic& d) {
  return d.severity() == Severity::kWarning ? "warning" : "error";
}

// The region of bytes [begin, end), clamped to the source.
OrderedJson Region(const SourceBuffer& source, std::uint32_t begin, std::uint32_t end) {
  begin = std::min(begin, source.size());
  end = std::min(std::max(end, begin), source.size());
  const LineColumn start = source.Locate(begin);
  const LineColumn stop = source.Locate(end);
  OrderedJson r;
  r["startLine"] = start.line;
  r["startColumn"] = start.column;
  r["endLine"] = stop.line;
  r["endColumn"] = stop.column;
  r["byteOffset"] = begin;
  r["byteLength"] = end - begin;
  return r;
}

OrderedJson Fix(std::string_view path, std::size_t index, const FixPatch& patch) {
  OrderedJson deleted;
  deleted["byteOffset"] = patch.start_offset;
  deleted["byteLength"] =
      patch.end_offset >= patch.start_offset ? patch.end_offset - patch.start_offset : 0;
  OrderedJson replacement;
  replacement["deletedRegion"] = std::move(deleted);
  replacement["insertedContent"] = Text(patch.replacement);
  OrderedJson change;
  change["artifactLocation"] = ArtifactLocation(path, index);
  change["replacements"] = OrderedJson::array({std::move(replacement)});
  OrderedJson fix;
  fix["description"] = Text(patch.description);
  fix["artifactChanges"] = OrderedJson::array({std::move(change)});
  return fix;
}

OrderedJson PatchProperty(const FixPatch& p) {
  OrderedJson j;
  j["description"] = p.description;
  j["startOffset"] = p.start_offset;
  j["endOffset"] = p.end_offset;
  j["replacement"] = p.replacement;
  return j;
}

}  // namespace

std::string PathToUriReference(std::string_view path) {
  std::string out;
  for (unsigned char c : path) {
    if (KeepInUri(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  // A relative reference whose first segment holds ':' would read as a scheme ("c:x.ko").
  const std::size_t colon = out.find(':');
  if (colon != std::string::npos && out.find('/') > colon) out.replace(colon, 1, "%3A");
  return out;
}

std::string RenderSarif(const SourceBuffer& source, std::string_view path,
                        std::span<const Diagnostic> diagnostics, const SarifTool& tool,
                        std::span<const Diagnostic> warnings,
                        std::span<const FileDiagnostic> other_warnings) {
  // Every result with its file: errors, the file's warnings, then other files' warnings. The
  // files are the artifacts, the checked one first, the others in order of first use.
  struct Entry {
    const SourceBuffer* source;
    std::string_view path;
    const Diagnostic* d;
    std::size_t artifact;
  };
  std::vector<FileDiagnostic> artifacts{FileDiagnostic{&source, path, nullptr}};
  std::vector<Entry> entries;
  for (const Diagnostic& d : diagnostics) entries.push_back(Entry{&source, path, &d, 0});
  for (const Diagnostic& d : warnings) entries.push_back(Entry{&source, path, &d, 0});
  for (const FileDiagnostic& w : other_warnings) {
    std::size_t index = 0;
    while (index < artifacts.size() && artifacts[index].path != w.path) ++index;
    if (index == artifacts.size()) artifacts.push_back(FileDiagnostic{w.source, w.path, nullptr});
    entries.push_back(Entry{w.source, w.path, w.diagnostic, index});
  }

  // Rules: one per code used, in order of first use.
  std::map<std::string_view, std::size_t> rule_index;
  OrderedJson rules = OrderedJson::array();
  for (const Entry& entry : entries) {
    const Diagnostic& d = *entry.d;
    if (rule_index.contains(d.code())) continue;
    const KindInfo& info = Info(d.kind);
    rule_index.emplace(d.code(), rules.size());
    OrderedJson rule;
    rule["id"] = std::string(info.code);
    rule["name"] = std::string(info.name);
    rule["shortDescription"] = Text(info.title.empty() ? info.name : info.title);
    OrderedJson config;
    config["level"] = std::string(Level(d));
    rule["defaultConfiguration"] = std::move(config);
    OrderedJson props;
    props["seeAlso"] = d.see_also();
    rule["properties"] = std::move(props);
    rules.push_back(std::move(rule));
  }

  OrderedJson results = OrderedJson::array();
  for (const Entry& entry : entries) {
    const Diagnostic& d = *entry.d;
    OrderedJson result;
    result["ruleId"] = std::string(d.code());
    result["ruleIndex"] = rule_index.at(d.code());
    result["level"] = std::string(Level(d));
    result["message"] = Text(d.message);
    OrderedJson physical;
    physical["artifactLocation"] = ArtifactLocation(entry.path, entry.artifact);
    if (d.span) physical["region"] = Region(*entry.source, d.span->begin, d.span->end);
    OrderedJson location;
    location["physicalLocation"] = std::move(physical);
    result["locations"] = OrderedJson::array({std::move(location)});
    if (d.fix_patch) {
      result["fixes"] = OrderedJson::array({Fix(entry.path, entry.artifact, *d.fix_patch)});
    }
    OrderedJson props;
    props["fixability"] = std::string(FixabilityName(d.fixability()));
    if (d.suggestion) props["suggestion"] = *d.suggestion;
    props["seeAlso"] = d.see_also();
    if (!d.repair_plan.empty()) {
      OrderedJson plan = OrderedJson::array();
      for (const RepairStep& step : d.repair_plan) {
        OrderedJson s;
        s["description"] = step.description;
        OrderedJson patches = OrderedJson::array();
        for (const FixPatch& p : step.patches) patches.push_back(PatchProperty(p));
        s["patches"] = std::move(patches);
        plan.push_back(std::move(s));
      }
      props["repairPlan"] = std::move(plan);
    }
    result["properties"] = std::move(props);
    results.push_back(std::move(result));
  }

  OrderedJson driver;
  driver["name"] = tool.name;
  if (!tool.full_name.empty()) driver["fullName"] = tool.full_name;
  if (!tool.version.empty()) driver["version"] = tool.version;
  driver["informationUri"] = "https://github.com/rfunix/kodo";
  driver["rules"] = std::move(rules);
  OrderedJson tool_json;
  tool_json["driver"] = std::move(driver);

  OrderedJson artifact_list = OrderedJson::array();
  for (const FileDiagnostic& file : artifacts) {
    OrderedJson artifact;
    OrderedJson artifact_location;
    artifact_location["uri"] = PathToUriReference(file.path);
    artifact["location"] = std::move(artifact_location);
    artifact["length"] = file.source->size();
    artifact["sourceLanguage"] = "kodo";
    artifact_list.push_back(std::move(artifact));
  }

  OrderedJson invocation;
  invocation["executionSuccessful"] = true;

  OrderedJson run;
  run["tool"] = std::move(tool_json);
  run["invocations"] = OrderedJson::array({std::move(invocation)});
  run["artifacts"] = std::move(artifact_list);
  run["columnKind"] = "unicodeCodePoints";
  run["results"] = std::move(results);

  OrderedJson log;
  log["$schema"] = std::string(kSchema);
  log["version"] = "2.1.0";
  log["runs"] = OrderedJson::array({std::move(run)});
  return log.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace trove::kodo::diag

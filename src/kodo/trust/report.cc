#include "kodo/trust/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>

#include "base/hash.h"
#include "kodo/trust/annotations.h"

namespace trove::kodo::trust {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// The upstream release whose certificate this writes (`compiler_version`).
constexpr std::string_view kCompilerVersion = "1.14.1";

std::string Repeat(char c, std::size_t n) { return std::string(n, c); }

json LiteralJson(const ast::Expr& e) {
  switch (e.kind) {
    case ast::ExprKind::kIntLit:
      return e.int_value;
    case ast::ExprKind::kFloatLit:
      return e.float_value;
    case ast::ExprKind::kStringLit:
      return std::string(e.text);
    case ast::ExprKind::kBoolLit:
      return e.flag;
    default:
      return nullptr;
  }
}

std::string MetaValue(const ast::Module& module, std::string_view key) {
  if (!module.meta) return "";
  for (const ast::MetaEntry& e : module.meta->entries) {
    if (e.key == key) return e.value;
  }
  return "";
}

// ISO 8601 UTC, seconds precision: the civil date from days since 1970-01-01 (the
// days-from-civil inverse of H. Hinnant's date algorithms).
std::string Iso8601(std::int64_t micros) {
  const std::int64_t secs = micros / 1000000;
  std::int64_t days = secs / 86400;
  std::int64_t tod = secs % 86400;
  if (tod < 0) {
    tod += 86400;
    --days;
  }
  const std::int64_t z = days + 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const std::int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", y, m, d, tod / 3600, (tod % 3600) / 60,
                     tod % 60);
}

}  // namespace

std::vector<FunctionConfidence> ConfidenceRows(const ast::Module& module, const CallGraph& graph) {
  std::vector<FunctionConfidence> rows;
  rows.reserve(module.functions.size());
  for (const ast::Function& fn : module.functions) {
    rows.push_back(FunctionConfidence{.name = fn.name,
                                      .declared = graph.Declared(fn.name),
                                      .computed = graph.Computed(fn.name),
                                      .callees = graph.Callees(fn.name),
                                      .has_authored_by = HasAnnotation(fn, "authored_by")});
  }
  return rows;
}

json McpConfidenceReport(const ast::Module& module, const CallGraph& graph) {
  json functions = json::array();
  for (const FunctionConfidence& r : ConfidenceRows(module, graph)) {
    functions.push_back(json{{"callees", r.callees},
                             {"computed_confidence", r.computed},
                             {"declared_confidence", r.declared},
                             {"name", r.name}});
  }
  return json{{"functions", std::move(functions)},
              {"overall_confidence", graph.Overall(module)},
              {"status", "ok"}};
}

json CliConfidenceReport(const ast::Module& module, const CallGraph& graph, double threshold) {
  const std::vector<FunctionConfidence> rows = ConfidenceRows(module, graph);
  json functions = json::array();
  json missing = json::array();
  json below = json::array();
  double sum = 0;
  for (const FunctionConfidence& r : rows) {
    functions.push_back(json{{"callees", r.callees},
                             {"computed_confidence", r.computed},
                             {"declared_confidence", r.declared},
                             {"has_authored_by", r.has_authored_by},
                             {"name", r.name}});
    if (!r.has_authored_by) missing.push_back(r.name);
    if (r.computed < threshold) {
      below.push_back(json{{"computed_confidence", r.computed}, {"name", r.name}});
    }
    sum += r.computed;
  }
  const double average = rows.empty() ? 1.0 : sum / static_cast<double>(rows.size());
  return json{{"below_threshold", std::move(below)},
              {"functions", std::move(functions)},
              {"missing_authored_by", std::move(missing)},
              {"module", module.name},
              {"module_average_confidence", average},
              {"overall_confidence", graph.Overall(module)},
              {"threshold", threshold}};
}

std::string CliConfidenceText(const ast::Module& module, const CallGraph& graph, double threshold) {
  const std::vector<FunctionConfidence> rows = ConfidenceRows(module, graph);
  double sum = 0;
  for (const FunctionConfidence& r : rows) sum += r.computed;
  const double average = rows.empty() ? 1.0 : sum / static_cast<double>(rows.size());
  std::string out =
      fmt::format("Confidence Report for module `{}`\n{}\n", module.name, Repeat('=', 60));
  out += fmt::format("Overall confidence: {:.2f}\n", graph.Overall(module));
  out += fmt::format("Module average:     {:.2f}\n", average);
  out += fmt::format("Threshold:          {:.2f}\n\n", threshold);
  out += fmt::format("{:<30} {:>10} {:>10}  Flags\n{}\n", "Function", "Declared", "Computed",
                     Repeat('-', 70));
  std::vector<std::string> missing;
  std::vector<const FunctionConfidence*> below;
  for (const FunctionConfidence& r : rows) {
    std::vector<std::string> flags;
    if (!r.has_authored_by) {
      flags.push_back("no @authored_by");
      missing.push_back(r.name);
    }
    if (r.computed < threshold) {
      flags.push_back("below threshold");
      below.push_back(&r);
    }
    out += fmt::format("{:<30} {:>10.2f} {:>10.2f}  {}\n", r.name, r.declared, r.computed,
                       fmt::join(flags, ", "));
  }
  if (!missing.empty()) {
    out += "\nFunctions missing @authored_by:\n";
    for (const std::string& name : missing) out += fmt::format("  - {}\n", name);
  }
  if (!below.empty()) {
    out += fmt::format("\nFunctions below threshold ({:.2f}):\n", threshold);
    for (const FunctionConfidence* r : below) {
      out += fmt::format("  - {} ({:.2f})\n", r->name, r->computed);
    }
  }
  return out;
}

json AnnotationJson(const ast::Annotation& annotation) {
  if (annotation.args.empty()) return true;
  if (annotation.args.size() == 1 && !annotation.args[0].named) {
    return LiteralJson(annotation.args[0].value);
  }
  json out = json::object();
  for (std::size_t i = 0; i < annotation.args.size(); ++i) {
    const ast::AnnotationArg& arg = annotation.args[i];
    out[arg.named ? arg.key : fmt::format("_{}", i)] = LiteralJson(arg.value);
  }
  return out;
}

namespace {

// The annotations of `fn` by name (a later one of the same name wins, as upstream's map
// insert); keys sorted (upstream: hash-map order [I]).
json AnnotationMap(const ast::Function& fn) {
  json out = json::object();
  for (const ast::Annotation& a : fn.annotations) out[a.name] = AnnotationJson(a);
  return out;
}

}  // namespace

ordered_json AuditReport(const ast::Module& module, const CallGraph& graph,
                         const ContractCounts& contracts) {
  std::size_t requires_total = 0;
  std::size_t ensures_total = 0;
  ordered_json functions = ordered_json::array();
  double min_confidence = 1.0;
  for (const ast::Function& fn : module.functions) {
    requires_total += fn.requires_.size();
    ensures_total += fn.ensures.size();
    const double effective = graph.Computed(fn.name);
    min_confidence = std::min(min_confidence, effective);
    functions.push_back(ordered_json{{"name", fn.name},
                                     {"confidence_declared", graph.Declared(fn.name)},
                                     {"confidence_effective", effective},
                                     {"annotations", AnnotationMap(fn)},
                                     {"requires_count", fn.requires_.size()},
                                     {"ensures_count", fn.ensures.size()}});
  }
  const bool deployable = min_confidence > 0.9 && contracts.failed == 0;
  return ordered_json{{"module", module.name},
                      {"summary",
                       {{"total_functions", module.functions.size()},
                        {"min_confidence", min_confidence},
                        {"contracts_total", requires_total + ensures_total},
                        {"contracts_static_verified", contracts.static_verified},
                        {"contracts_runtime", contracts.runtime},
                        {"contracts_failed", contracts.failed},
                        {"deployable", deployable}}},
                      {"functions", std::move(functions)}};
}

Result<std::vector<PolicyCriterion>> ParseAuditPolicy(std::string_view policy) {
  using K = PolicyCriterion::Kind;
  const auto trim = [](std::string_view s) {
    const std::size_t b = s.find_first_not_of(" \t\r\n");
    if (b == std::string_view::npos) return std::string_view();
    const std::size_t e = s.find_last_not_of(" \t\r\n");
    return s.substr(b, e - b + 1);
  };
  std::vector<PolicyCriterion> out;
  std::size_t pos = 0;
  while (pos <= policy.size()) {
    std::size_t comma = policy.find(',', pos);
    if (comma == std::string_view::npos) comma = policy.size();
    const std::string_view part = trim(policy.substr(pos, comma - pos));
    pos = comma + 1;
    if (part.empty()) continue;
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument(
          fmt::format("invalid policy fragment: `{}` (expected key=value)", part));
    }
    const std::string_view key = trim(part.substr(0, eq));
    const std::string_view value = trim(part.substr(eq + 1));
    if (key == "min_confidence") {
      const std::optional<double> t = ParseRustFloat(value);
      if (!t) {
        return Status::InvalidArgument(
            fmt::format("invalid min_confidence value: `{}` (expected a float)", value));
      }
      out.push_back({K::kMinConfidence, *t});
    } else if (key == "contracts") {
      if (value == "all_verified") {
        out.push_back({K::kContractsAllVerified, 0});
      } else if (value == "all_present") {
        out.push_back({K::kContractsAllPresent, 0});
      } else {
        return Status::InvalidArgument(fmt::format(
            "unknown contracts policy value: `{}` (expected `all_verified` or `all_present`)",
            value));
      }
    } else if (key == "reviewed") {
      if (value != "all") {
        return Status::InvalidArgument(
            fmt::format("unknown reviewed policy value: `{}` (expected `all`)", value));
      }
      out.push_back({K::kReviewedAll, 0});
    } else {
      return Status::InvalidArgument(fmt::format("unknown policy key: `{}`", key));
    }
  }
  if (out.empty()) return Status::InvalidArgument("empty policy string");
  return out;
}

ordered_json CheckAuditPolicy(const ordered_json& report,
                              const std::vector<PolicyCriterion>& criteria) {
  using K = PolicyCriterion::Kind;
  ordered_json violations = ordered_json::array();
  const auto add = [&](std::string criterion, std::string function, std::string expected,
                       std::string actual) {
    violations.push_back(ordered_json{{"criterion", std::move(criterion)},
                                      {"function", std::move(function)},
                                      {"expected", std::move(expected)},
                                      {"actual", std::move(actual)}});
  };
  const ordered_json& summary = report["summary"];
  for (const PolicyCriterion& c : criteria) {
    switch (c.kind) {
      case K::kMinConfidence:
        for (const ordered_json& f : report["functions"]) {
          const double effective = f["confidence_effective"].get<double>();
          if (effective < c.threshold) {
            add("min_confidence", f["name"].get<std::string>(),
                fmt::format(">= {}", RustDisplay(c.threshold)), fmt::format("{:.4f}", effective));
          }
        }
        break;
      case K::kContractsAllVerified: {
        const std::size_t runtime = summary["contracts_runtime"].get<std::size_t>();
        const std::size_t failed = summary["contracts_failed"].get<std::size_t>();
        if (runtime > 0) {
          add("contracts=all_verified", "", "0 runtime-only contracts",
              fmt::format("{} runtime-only contracts", runtime));
        }
        if (failed > 0) {
          add("contracts=all_verified", "", "0 failed contracts",
              fmt::format("{} failed contracts", failed));
        }
        break;
      }
      case K::kContractsAllPresent:
        for (const ordered_json& f : report["functions"]) {
          if (f["requires_count"].get<std::size_t>() == 0 &&
              f["ensures_count"].get<std::size_t>() == 0) {
            add("contracts=all_present", f["name"].get<std::string>(), "at least 1 contract clause",
                "0 contract clauses");
          }
        }
        break;
      case K::kReviewedAll:
        for (const ordered_json& f : report["functions"]) {
          if (!f["annotations"].contains("reviewed_by")) {
            add("reviewed=all", f["name"].get<std::string>(), "@reviewed_by annotation",
                "no @reviewed_by annotation");
          }
        }
        break;
    }
  }
  const bool passed = violations.empty();
  return ordered_json{{"passed", passed}, {"violations", std::move(violations)}};
}

std::string AuditText(const ordered_json& report, const ordered_json* policy) {
  const ordered_json& s = report["summary"];
  std::string out = fmt::format("Audit Report for module `{}`\n{}\n",
                                report["module"].get<std::string>(), Repeat('=', 60));
  out += fmt::format("Functions:       {}\n", s["total_functions"].get<std::size_t>());
  out += fmt::format("Min confidence:  {:.2f}\n", s["min_confidence"].get<double>());
  out += fmt::format(
      "Contracts:       {} total ({} static, {} runtime, {} failed)\n",
      s["contracts_total"].get<std::size_t>(), s["contracts_static_verified"].get<std::size_t>(),
      s["contracts_runtime"].get<std::size_t>(), s["contracts_failed"].get<std::size_t>());
  out += fmt::format("Deployable:      {}\n\n", s["deployable"].get<bool>() ? "yes" : "no");
  out += fmt::format("{:<30} {:>10} {:>10} {:>8} {:>8}\n{}\n", "Function", "Declared", "Effective",
                     "Req", "Ens", Repeat('-', 76));
  for (const ordered_json& f : report["functions"]) {
    out +=
        fmt::format("{:<30} {:>10.2f} {:>10.2f} {:>8} {:>8}\n", f["name"].get<std::string>(),
                    f["confidence_declared"].get<double>(), f["confidence_effective"].get<double>(),
                    f["requires_count"].get<std::size_t>(), f["ensures_count"].get<std::size_t>());
  }
  if (policy != nullptr) {
    out += fmt::format("\n{}\n", Repeat('=', 60));
    if ((*policy)["passed"].get<bool>()) {
      out += "Policy: PASSED\n";
    } else {
      out += "Policy: FAILED\n\n";
      for (const ordered_json& v : (*policy)["violations"]) {
        const std::string function = v["function"].get<std::string>();
        if (function.empty()) {
          out += fmt::format("  [{}] expected: {}, actual: {}\n", v["criterion"].get<std::string>(),
                             v["expected"].get<std::string>(), v["actual"].get<std::string>());
        } else {
          out += fmt::format("  [{}] function `{}`: expected: {}, actual: {}\n",
                             v["criterion"].get<std::string>(), function,
                             v["expected"].get<std::string>(), v["actual"].get<std::string>());
        }
      }
    }
  }
  return out;
}

ordered_json Certificate(const ast::Module& module, std::string_view source,
                         std::string_view contract_mode, std::int64_t now_micros,
                         const std::optional<std::string>& parent) {
  std::size_t requires_count = 0;
  std::size_t ensures_count = 0;
  std::vector<std::string> functions;
  ordered_json details = ordered_json::array();
  std::vector<std::string> validators;
  for (const ast::Function& fn : module.functions) {
    functions.push_back(fn.name);
    requires_count += fn.requires_.size();
    ensures_count += fn.ensures.size();
    if (!fn.requires_.empty()) validators.push_back("validate_" + fn.name);
    if (!fn.annotations.empty()) {
      details.push_back(ordered_json{{"name", fn.name}, {"annotations", AnnotationMap(fn)}});
    }
  }
  const std::string source_hash = "sha256:" + base::Sha256Hex(source);

  // The parent: the previous certificate, when it reads as one (upstream ignores a file that
  // does not deserialize).
  std::optional<ordered_json> previous;
  if (parent) {
    ordered_json p = ordered_json::parse(*parent, nullptr, /*allow_exceptions=*/false);
    if (!p.is_discarded() && p.is_object() && p.contains("functions") &&
        p["functions"].is_array() && p.contains("contracts") && p["contracts"].is_object() &&
        p.contains("source_hash") && p["source_hash"].is_string()) {
      previous = std::move(p);
    }
  }

  ordered_json cert{{"module", module.name},
                    {"purpose", MetaValue(module, "purpose")},
                    {"version", MetaValue(module, "version")},
                    {"compiled_at", Iso8601(now_micros)},
                    {"compiler_version", kCompilerVersion},
                    {"contracts",
                     {{"requires_count", requires_count},
                      {"ensures_count", ensures_count},
                      {"mode", contract_mode}}},
                    {"functions", functions}};
  if (!details.empty()) cert["function_details"] = std::move(details);
  if (!validators.empty()) cert["validators"] = validators;
  cert["type_check"] = "passed";
  cert["source_hash"] = source_hash;
  cert["binary_hash"] = "";
  cert["certificate_hash"] = "";
  if (previous) {
    std::set<std::string> old_names;
    for (const ordered_json& f : (*previous)["functions"]) {
      if (f.is_string()) old_names.insert(f.get<std::string>());
    }
    const std::set<std::string> new_names(functions.begin(), functions.end());
    std::vector<std::string> added, removed;
    for (const std::string& f : functions) {
      if (old_names.count(f) == 0) added.push_back(f);
    }
    for (const ordered_json& f : (*previous)["functions"]) {
      if (f.is_string() && new_names.count(f.get<std::string>()) == 0) {
        removed.push_back(f.get<std::string>());
      }
    }
    const ordered_json& old_contracts = (*previous)["contracts"];
    const auto count = [&](const char* key) -> std::optional<std::size_t> {
      if (!old_contracts.contains(key) || !old_contracts[key].is_number_unsigned()) {
        return std::nullopt;
      }
      return old_contracts[key].get<std::size_t>();
    };
    const bool contracts_changed =
        count("requires_count") != requires_count || count("ensures_count") != ensures_count;
    const std::string parent_hash =
        previous->contains("certificate_hash") && (*previous)["certificate_hash"].is_string()
            ? (*previous)["certificate_hash"].get<std::string>()
            : "";
    cert["parent_certificate"] = parent_hash;
    cert["diff_from_parent"] = ordered_json{
        {"functions_added", added},
        {"functions_removed", removed},
        {"contracts_changed", contracts_changed},
        {"source_hash_changed", (*previous)["source_hash"].get<std::string>() != source_hash}};
  }
  cert["certificate_hash"] =
      "sha256:" +
      base::Sha256Hex(cert.dump(-1, ' ', false, ordered_json::error_handler_t::replace));
  return cert;
}

}  // namespace trove::kodo::trust

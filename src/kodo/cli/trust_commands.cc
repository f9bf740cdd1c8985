// `kodoc confidence-report`, `kodoc audit` and the trust pieces of `kodoc check` (kodo.toml,
// --emit-cert). See commands.h and trust_commands.h.
#include "kodo/cli/trust_commands.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "kodo/contracts/contracts.h"
#include "kodo/trust/confidence.h"
#include "kodo/trust/report.h"

namespace trove::kodo::cli {
namespace internal {

bool LoadTrust(base::Env& env, const std::string& file, std::optional<trust::TrustConfig>& config,
               CommandOutput& out) {
  Result<std::optional<trust::TrustConfig>> loaded = trust::LoadTrustConfigBeside(env, file);
  if (!loaded.ok()) {
    out.err += fmt::format("error: {}\n", loaded.status().message());
    out.exit_code = kExitFailure;
    return false;
  }
  config = std::move(loaded).value();
  return true;
}

std::string CertificatePath(const std::string& file) {
  const std::size_t slash = file.rfind('/');
  const std::size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = file.rfind('.');
  // A leading dot starts a hidden name, not an extension (Rust's Path::extension).
  const bool has_ext = dot != std::string::npos && dot > name_at;
  return (has_ext ? file.substr(0, dot) : file) + ".ko.cert.json";
}

void EmitCertificate(base::Env& env, const std::string& file, const driver::Compiled& c,
                     contracts::ContractMode contract_mode, bool json_errors, CommandOutput& out) {
  const std::string path = CertificatePath(file);
  std::optional<std::string> parent;
  if (env.FileExists(path)) {
    Result<std::string> previous = env.ReadFile(path);
    if (previous.ok()) parent = std::move(previous).value();
  }
  // The certificate records the contract mode `check` ran in.
  const nlohmann::ordered_json cert = trust::Certificate(
      *c.module, c.source.text(), contracts::ModeName(contract_mode), env.NowMicros(), parent);
  const std::string text =
      cert.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  // Env::WriteFile writes a temporary file and renames it over `path`.
  const Status written = env.WriteFile(path, text);
  std::string& stream = json_errors ? out.err : out.out;
  if (!written.ok()) {
    out.err += fmt::format("warning: could not write certificate: {}\n", written.message());
    return;
  }
  stream += fmt::format("Certificate written to {}\n", path);
}

}  // namespace internal

namespace {

// Reads and checks `file` fail-fast, without kodo.toml, as upstream's confidence-report and
// audit do; on failure writes upstream's line and exit 1.
std::optional<driver::Compiled> CheckFailFast(base::Env& env, const std::string& file,
                                              CommandOutput& out) {
  Result<std::string> text = env.ReadFile(file);
  if (!text.ok()) {
    out.err += fmt::format("error: could not read file `{}`: {}\n", file, text.status().message());
    out.exit_code = kExitFailure;
    return std::nullopt;
  }
  Result<driver::Compiled> c =
      driver::CompileSource(std::move(text).value(), file, driver::FrontOptions{.fail_fast = true});
  if (!c.ok()) {
    out.err += fmt::format("error: {}: {}\n", file, c.status().message());
    out.exit_code = kExitFailure;
    return std::nullopt;
  }
  if (c->outcome == driver::Outcome::kParseFailed) {
    out.err += fmt::format("parse error: {}\n", c->diagnostics.front().message);
    out.exit_code = kExitFailure;
    return std::nullopt;
  }
  if (c->outcome == driver::Outcome::kTypeErrors) {
    out.err += fmt::format("type error: {}\n", c->diagnostics.front().message);
    out.exit_code = kExitFailure;
    return std::nullopt;
  }
  return std::move(c).value();
}

template <typename J>
std::string Pretty(const J& value) {
  return value.dump(2, ' ', false, J::error_handler_t::replace) + "\n";
}

// The contract mode `given` names (kodo/contracts: case-insensitive; an unknown name warns on
// stderr and falls back to runtime, as upstream's parse_contract_mode).
contracts::ContractMode ContractMode(const std::string& given, CommandOutput& out) {
  const contracts::ParsedMode parsed = contracts::ParseContractMode(given);
  if (parsed.warning) out.err += *parsed.warning + "\n";
  return parsed.mode;
}

}  // namespace

CommandOutput RunConfidenceReport(base::Env& env, const ConfidenceReportArgs& args) {
  CommandOutput out;
  std::optional<driver::Compiled> c = CheckFailFast(env, args.file, out);
  if (!c) return out;
  const trust::CallGraph graph = trust::CallGraph::Build(*c->module);
  out.out += args.json ? Pretty(trust::CliConfidenceReport(*c->module, graph, args.threshold))
                       : trust::CliConfidenceText(*c->module, graph, args.threshold);
  return out;
}

CommandOutput RunAudit(base::Env& env, const AuditArgs& args) {
  CommandOutput out;
  const contracts::ContractMode mode = ContractMode(args.contracts, out);
  std::optional<driver::Compiled> c = CheckFailFast(env, args.file, out);
  if (!c) return out;
  const ast::Module& module = *c->module;
  // The contracts phase's own counts in `mode` (kodo/contracts; Z3 in static, both and prove).
  trust::ContractCounts counts;
  contracts::SmtCache cache;
  const contracts::ContractReport verified = contracts::VerifyModule(module, {.mode = mode}, cache);
  counts.static_verified = verified.static_verified;
  counts.runtime = verified.runtime_checks;
  for (const contracts::FunctionContracts& fn : verified.functions) {
    for (const contracts::ClauseResult& clause : fn.clauses) counts.failed += clause.failure;
  }
  const nlohmann::ordered_json report =
      trust::AuditReport(module, trust::CallGraph::Build(module), counts);
  std::optional<nlohmann::ordered_json> policy;
  if (args.policy) {
    Result<std::vector<trust::PolicyCriterion>> criteria = trust::ParseAuditPolicy(*args.policy);
    if (criteria.ok()) {
      policy = trust::CheckAuditPolicy(report, *criteria);
    } else {
      out.err += fmt::format("policy parse error: {}\n", criteria.status().message());
      policy = nlohmann::ordered_json{
          {"passed", false},
          {"violations", nlohmann::ordered_json::array(
                             {nlohmann::ordered_json{{"criterion", "parse"},
                                                     {"function", ""},
                                                     {"expected", "valid policy string"},
                                                     {"actual", criteria.status().message()}}})}};
    }
  }
  if (args.json) {
    // With a policy, upstream wraps both in an ad-hoc object: keys sorted.
    out.out += policy ? Pretty(nlohmann::ordered_json{{"policy", *policy}, {"report", report}})
                      : Pretty(report);
  } else {
    out.out += trust::AuditText(report, policy ? &*policy : nullptr);
  }
  if (policy && !(*policy)["passed"].get<bool>()) out.exit_code = kExitFailure;
  return out;
}

}  // namespace trove::kodo::cli

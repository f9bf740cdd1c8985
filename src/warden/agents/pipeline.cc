#include "warden/agents/pipeline.h"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "base/hash.h"
#include "warden/agents/schedule.h"
#include "warden/agents/verifier.h"

namespace trove::warden::agents {

namespace {

using Json = nlohmann::ordered_json;

bool EndsPass(const Status& status) {
  return status.code() == base::StatusCode::kPermissionDenied ||
         status.code() == base::StatusCode::kUnsupported ||
         status.code() == base::StatusCode::kCancelled;
}

bool ShouldSkip(const std::optional<SymbolState>& symbol, bool only_unconfident) {
  if (!symbol) return false;
  if (symbol->locked) return true;
  return only_unconfident && symbol->name.has_value() && symbol->confidence >= kSkipConfidence;
}

std::string EvidenceDetails(const PassOptions& options, const std::string& pass_id,
                            const Backend& backend, const FunctionFacts& facts,
                            const Proposal& proposal, const BackendReply& reply) {
  Json details;
  details["version_id"] = options.version_id;
  details["func_index"] = facts.func_index;
  details["backend"] = std::string(backend.name());
  details["model"] = backend.model() ? Json(*backend.model()) : Json(nullptr);
  details["pass_id"] = pass_id;
  details["channel"] = options.channel;
  if (reply.retries > 0) details["retries"] = reply.retries;
  if (!proposal.cited_strings.empty()) details["cited_strings"] = proposal.cited_strings;
  // A refined signature is kept in evidence only (docs/warden.md §7.4).
  if (proposal.type_signature) details["type_signature"] = *proposal.type_signature;
  details["verifier"] = "passed";
  return details.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

std::string_view OutcomeName(DetailOutcome outcome) {
  switch (outcome) {
    case DetailOutcome::kWritten:
      return "written";
    case DetailOutcome::kVerifierReject:
      return "verifier_reject";
    case DetailOutcome::kEconomyReject:
      return "economy_reject";
    case DetailOutcome::kError:
      return "error";
  }
  return "error";
}

std::string RunSummaryToJson(const RunSummary& summary) {
  Json doc;
  doc["backend"] = summary.backend;
  doc["considered"] = summary.considered;
  doc["proposed"] = summary.proposed;
  doc["written"] = summary.written;
  doc["rejected_by_verifier"] = summary.rejected_by_verifier;
  doc["rejected_by_economy"] = summary.rejected_by_economy;
  doc["skipped_existing"] = summary.skipped_existing;
  Json details = Json::array();
  for (const RunDetail& d : summary.details) {
    Json entry;
    entry["func_index"] = d.func_index;
    entry["stable_id"] = d.stable_id;
    entry["outcome"] = std::string(OutcomeName(d.outcome));
    entry["name"] = d.name ? Json(*d.name) : Json(nullptr);
    entry["confidence"] =
        d.confidence && std::isfinite(*d.confidence) ? Json(*d.confidence) : Json(nullptr);
    entry["reason"] = d.reason;
    details.push_back(std::move(entry));
  }
  doc["details"] = std::move(details);
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<RunSummary> RunAgentPass(AgentStore& store, Backend& backend, const PassOptions& options,
                                base::Cancellation& cancel, const base::Progress& progress) {
  RunSummary summary;
  summary.backend = std::string(backend.name());
  const std::string pass_id = options.pass_id.empty() ? base::RandomHex(8) : options.pass_id;

  ASSIGN_OR_RETURN(std::vector<FunctionFacts> functions, store.Functions(options.version_id));
  std::unordered_map<std::uint32_t, std::size_t> by_index;
  for (std::size_t i = 0; i < functions.size(); ++i) by_index.emplace(functions[i].func_index, i);
  const std::vector<std::size_t> order = ScheduleOrder(functions);
  const double total = static_cast<double>(functions.size());
  std::int64_t backend_calls = 0;
  const std::string actor = fmt::format("agent:{}", backend.name());

  for (std::size_t position : order) {
    if (cancel.requested()) return Status::Cancelled("agent pass cancelled");
    const FunctionFacts& facts = functions[position];

    ASSIGN_OR_RETURN(std::optional<SymbolState> symbol, store.Symbol(facts.stable_id));
    if (ShouldSkip(symbol, options.only_unconfident)) {
      ++summary.considered;
      ++summary.skipped_existing;
      progress.Report(static_cast<double>(summary.considered), total);
      continue;
    }
    if (options.limit && backend_calls >= *options.limit) break;
    ++summary.considered;
    progress.Report(static_cast<double>(summary.considered), total);

    // The current names of the direct defined callees (docs/warden.md §7.2): bottom-up order makes
    // them the names this pass just wrote.
    std::vector<CalleeName> callees;
    for (std::uint32_t callee : facts.defined_callees) {
      auto it = by_index.find(callee);
      if (it == by_index.end() || it->second == position) continue;
      ASSIGN_OR_RETURN(std::optional<SymbolState> callee_symbol,
                       store.Symbol(functions[it->second].stable_id));
      if (callee_symbol && callee_symbol->name) {
        callees.push_back(CalleeName{.func_index = callee, .name = *callee_symbol->name});
      }
    }

    ++backend_calls;
    Result<BackendReply> reply = backend.Propose(facts, callees, cancel);
    if (!reply.ok()) {
      if (EndsPass(reply.status())) return reply.status();
      summary.details.push_back(RunDetail{.func_index = facts.func_index,
                                          .stable_id = facts.stable_id,
                                          .outcome = DetailOutcome::kError,
                                          .reason = reply.status().message()});
      continue;
    }
    if (!reply->proposal) {
      if (!reply->note.empty()) {
        summary.details.push_back(RunDetail{.func_index = facts.func_index,
                                            .stable_id = facts.stable_id,
                                            .outcome = DetailOutcome::kError,
                                            .reason = "abstained: " + reply->note});
      }
      continue;
    }
    const Proposal& proposal = *reply->proposal;
    ++summary.proposed;
    RunDetail detail{.func_index = facts.func_index,
                     .stable_id = facts.stable_id,
                     .name = proposal.name,
                     .confidence = proposal.confidence};

    Verdict verdict = VerifyProposal(facts, proposal);
    if (!verdict.ok) {
      ++summary.rejected_by_verifier;
      detail.outcome = DetailOutcome::kVerifierReject;
      detail.reason = "rejected by verifier: " + verdict.Reason();
      summary.details.push_back(std::move(detail));
      continue;
    }

    AgentWrite write{
        .stable_id = facts.stable_id,
        .name = proposal.name,
        .summary = proposal.summary,
        .confidence = proposal.confidence,
        .actor = actor,
        .details_json = EvidenceDetails(options, pass_id, backend, facts, proposal, *reply)};
    ASSIGN_OR_RETURN(WriteOutcome outcome, options.dry_run ? store.PreviewAgentProposal(write)
                                                           : store.WriteAgentProposal(write));
    detail.reason =
        options.dry_run ? "dry run, nothing written: " + outcome.reason : outcome.reason;
    if (outcome.accepted) {
      ++summary.written;
      detail.outcome = DetailOutcome::kWritten;
    } else {
      ++summary.rejected_by_economy;
      detail.outcome = DetailOutcome::kEconomyReject;
    }
    summary.details.push_back(std::move(detail));
  }
  return summary;
}

}  // namespace trove::warden::agents

// The diff engine bound to a KB: load two versions, store the report in `diffs`, carry names
// through the gate (docs/warden.md §9.1, §9.2). Symbol writes go through Kb::DiffCarry only.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "warden/diff/diff.h"
#include "warden/kb/kb.h"

namespace trove::warden::diff {

Result<VersionSide> LoadSide(kb::Kb& kb, std::int64_t version_id) {
  ASSIGN_OR_RETURN(kb::VersionInfo info, kb.GetVersion(version_id));
  VersionSide side;
  side.id = info.id;
  side.label = info.label;
  side.emscripten_version = info.emscripten_version;
  // One query for the defined functions and their symbols, reading only what the diff uses
  // (docs/decisions/0080-warden-diff-oracle-speed.md).
  ASSIGN_OR_RETURN(kb::AnnotatedFunctions loaded, kb.DefinedFunctionsForDiff(version_id));
  side.functions = std::move(loaded.records);
  side.annotations.reserve(loaded.symbols.size());
  for (kb::FunctionRow& row : loaded.symbols) {
    Annotation& a = side.annotations.emplace_back();
    a.name = std::move(row.name);
    a.provenance = std::move(row.provenance);
    a.confidence = row.confidence;
    a.locked = row.locked;
  }
  return side;
}

Result<DiffRun> RunDiff(kb::Kb& kb, std::int64_t from_version, std::int64_t to_version,
                        const DiffOptions& options) {
  if (from_version == to_version) {
    return Status::InvalidArgument(
        fmt::format("diff: from and to are the same version ({})", from_version));
  }
  ASSIGN_OR_RETURN(VersionSide from, LoadSide(kb, from_version));
  ASSIGN_OR_RETURN(VersionSide to, LoadSide(kb, to_version));
  DiffRun run;
  run.report = ComputeDiff(from, to, options);
  run.changelog = RenderChangelog(run.report);
  const std::string params = nlohmann::json{
      {"max_propagation_rounds", options.max_propagation_rounds},
      {"max_bucket",
       options.max_bucket}}.dump();
  ASSIGN_OR_RETURN(run.diff_id, kb.StoreDiff(from_version, to_version, params,
                                             StoredReportJson(run.report), run.changelog));
  return run;
}

namespace {

// An actor part of Kb::DiffCarry: the label when it has no space or control character, else
// the numeric id (diff:<from>-><to>, docs/warden.md §6.3).
std::string ActorPart(const VersionRef& v) {
  bool ok = !v.label.empty() && v.label.size() <= 64;
  for (char c : v.label) ok = ok && c > ' ' && c <= '~';
  return ok ? v.label : std::to_string(v.id);
}

}  // namespace

Result<CarrySummary> CarryAnnotations(kb::Kb& kb, const DiffReport& report) {
  CarrySummary summary;
  const std::string from_actor = ActorPart(report.from);
  const std::string to_actor = ActorPart(report.to);
  for (const Change& c : report.changes) {
    if (!c.from_stable_id || !c.to_stable_id) continue;
    ++summary.pairs;
    if (*c.from_stable_id == *c.to_stable_id) {
      ++summary.shared_identity;
      continue;
    }
    ASSIGN_OR_RETURN(std::optional<kb::SymbolRecord> old, kb.GetSymbol(*c.from_stable_id));
    if (!old || !old->name) {
      ++summary.unnamed_source;
      continue;
    }
    // A carried name is never surer than the pair's score nor than the name it came from.
    const double confidence = std::min(c.score, old->confidence);
    nlohmann::json components = nlohmann::json::object();
    if (c.components) {
      const identity::Similarity& s = *c.components;
      components = {{"overall", s.overall},
                    {"exact_equal", s.exact_equal},
                    {"base_equal", s.base_equal},
                    {"minhash", s.minhash},
                    {"histogram_cosine", s.histogram_cosine},
                    {"call_out_jaccard", s.call_out_jaccard},
                    {"structural", s.structural}};
    }
    const nlohmann::json details = {
        {"diff", {{"from_version", report.from.id}, {"to_version", report.to.id}}},
        {"pass", PassName(c.pass)},
        {"class", ChangeClassName(c.change)},
        {"score", c.score},
        {"components", components},
        {"old_stable_id", *c.from_stable_id},
        {"old_provenance", old->provenance},
        {"old_confidence", old->confidence},
        {"old_locked", old->locked},
        {"from_index", c.from_index.value_or(0)},
        {"to_index", c.to_index.value_or(0)}};
    kb::Proposal proposal;
    proposal.name = *old->name;
    proposal.summary = old->summary;
    proposal.confidence = confidence;
    proposal.details_json = details.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    ASSIGN_OR_RETURN(kb::Decision d,
                     kb.DiffCarry(from_actor, to_actor, *c.to_stable_id, std::move(proposal)));
    ++summary.attempted;
    ++(d.accepted ? summary.carried : summary.rejected);
    summary.details.push_back({c.from_index.value_or(0), c.to_index.value_or(0), *c.from_stable_id,
                               *c.to_stable_id, *old->name, confidence, c.pass, d.accepted,
                               d.reason});
  }
  return summary;
}

}  // namespace trove::warden::diff

#include "librarian/ledger/ledger.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <set>
#include <utility>

#include "base/rfc3339.h"
#include "base/sqlite.h"

namespace trove::librarian::ledger {
namespace {

constexpr std::string_view kRelations[] = {"supports",   "opposes",   "assumes",    "defeats",
                                           "rebuts",     "undercuts", "undermines", "supersedes",
                                           "depends_on", "co_occurs"};

constexpr const char* kColumns =
    "id, kind, recorded_at, claim_id, run_id, agent, activity, relation, parent_id, payload";

Entry ReadEntry(const base::Statement& st) {
  Entry e;
  e.id = st.ColumnInt64(0);
  e.kind = ParseKind(st.ColumnText(1)).value_or(EntryKind::kToolCall);
  e.recorded_at = st.ColumnText(2);
  e.claim_id = st.ColumnText(3);
  e.run_id = st.ColumnText(4);
  e.agent = st.ColumnText(5);
  e.activity = st.ColumnText(6);
  e.relation = st.ColumnText(7);
  if (!st.ColumnIsNull(8)) e.parent_id = st.ColumnInt64(8);
  nlohmann::json payload = nlohmann::json::parse(st.ColumnText(9), nullptr, false);
  e.payload = payload.is_discarded() ? nlohmann::json::object() : std::move(payload);
  return e;
}

Result<std::vector<Entry>> ReadAll(base::Statement& st) {
  std::vector<Entry> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(ReadEntry(st));
  }
  return out;
}

Result<std::optional<Entry>> GetEntry(base::Database& db, std::int64_t id) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare(fmt::format("SELECT {} FROM ledger WHERE id = ?1", kColumns)));
  RETURN_IF_ERROR(st.Bind(1, id));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<Entry>();
  return std::optional<Entry>(ReadEntry(st));
}

std::string Dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string_view KindName(EntryKind kind) {
  switch (kind) {
    case EntryKind::kExtraction:
      return "extraction";
    case EntryKind::kRetrieval:
      return "retrieval";
    case EntryKind::kSynthesis:
      return "synthesis";
    case EntryKind::kClaim:
      return "claim";
    case EntryKind::kVerification:
      return "verification";
    case EntryKind::kContradiction:
      return "contradiction";
    case EntryKind::kFeedback:
      return "feedback";
    case EntryKind::kOutcome:
      return "outcome";
    case EntryKind::kToolCall:
      return "tool_call";
    case EntryKind::kEpisode:
      return "episode";
    case EntryKind::kCalibration:
      return "calibration";
  }
  return "tool_call";
}

std::optional<EntryKind> ParseKind(std::string_view name) {
  for (EntryKind k : kAllKinds) {
    if (KindName(k) == name) return k;
  }
  return std::nullopt;
}

bool IsRelation(std::string_view relation) {
  return relation.empty() ||
         std::find(std::begin(kRelations), std::end(kRelations), relation) != std::end(kRelations);
}

Result<std::int64_t> Append(base::Database& db, const Entry& entry) {
  if (!IsRelation(entry.relation)) {
    return Status::InvalidArgument(
        fmt::format("ledger entry: relation: unknown edge `{}`", entry.relation));
  }
  const std::string payload = Dump(entry.payload);
  if (payload.size() > kMaxPayloadBytes) {
    return Status::ResourceExhausted(
        fmt::format("ledger entry: payload: {} bytes exceeds the {} byte limit", payload.size(),
                    kMaxPayloadBytes));
  }
  // One statement: the parent check and the insert are atomic, and so is the entry.
  ASSIGN_OR_RETURN(
      base::Statement st,
      db.Prepare("INSERT INTO ledger(kind, recorded_at, claim_id, run_id, agent, activity, "
                 "relation, parent_id, payload) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 "
                 "WHERE ?8 IS NULL OR EXISTS (SELECT 1 FROM ledger WHERE id = ?8)"));
  const std::string recorded_at =
      entry.recorded_at.empty() ? base::NowRfc3339() : entry.recorded_at;
  RETURN_IF_ERROR(st.Bind(1, KindName(entry.kind)));
  RETURN_IF_ERROR(st.Bind(2, std::string_view(recorded_at)));
  RETURN_IF_ERROR(st.Bind(3, std::string_view(entry.claim_id)));
  RETURN_IF_ERROR(st.Bind(4, std::string_view(entry.run_id)));
  RETURN_IF_ERROR(st.Bind(5, std::string_view(entry.agent)));
  RETURN_IF_ERROR(st.Bind(6, std::string_view(entry.activity)));
  RETURN_IF_ERROR(st.Bind(7, std::string_view(entry.relation)));
  if (entry.parent_id) {
    RETURN_IF_ERROR(st.Bind(8, *entry.parent_id));
  } else {
    RETURN_IF_ERROR(st.Bind(8, nullptr));
  }
  RETURN_IF_ERROR(st.Bind(9, std::string_view(payload)));
  ASSIGN_OR_RETURN(bool row, st.Step());
  (void)row;
  if (db.Changes() != 1) {
    return Status::InvalidArgument(
        fmt::format("ledger entry: parentId: no entry {}", entry.parent_id.value_or(0)));
  }
  return db.LastInsertRowId();
}

Result<std::vector<Entry>> Query(base::Database& db, const Filter& filter) {
  ASSIGN_OR_RETURN(
      base::Statement st,
      db.Prepare(fmt::format(
          "SELECT {} FROM ledger WHERE id > ?1 AND (?2 = '' OR kind = ?2) AND (?3 = '' OR "
          "claim_id = ?3) AND (?4 = '' OR recorded_at >= ?4) AND (?5 = '' OR recorded_at <= ?5) "
          "ORDER BY id LIMIT ?6",
          kColumns)));
  RETURN_IF_ERROR(st.Bind(1, filter.after_id));
  RETURN_IF_ERROR(st.Bind(2, filter.kind ? KindName(*filter.kind) : std::string_view()));
  RETURN_IF_ERROR(st.Bind(3, std::string_view(filter.claim_id)));
  RETURN_IF_ERROR(st.Bind(4, std::string_view(filter.since)));
  RETURN_IF_ERROR(st.Bind(5, std::string_view(filter.until)));
  RETURN_IF_ERROR(st.Bind(6, static_cast<std::int64_t>(std::min(filter.limit, kMaxReadEntries))));
  return ReadAll(st);
}

Result<Replay> ReplayFrom(base::Database& db, std::int64_t from_id, std::size_t limit) {
  limit = std::clamp<std::size_t>(limit, 1, kMaxReadEntries);
  Filter f;
  f.after_id = from_id - 1;
  f.limit = limit + 1;
  Replay r;
  ASSIGN_OR_RETURN(r.entries, Query(db, f));
  if (r.entries.size() > limit) {
    r.next_id = r.entries[limit].id;
    r.entries.resize(limit);
  }
  for (const Entry& e : r.entries) {
    if (e.claim_id.empty()) continue;
    ClaimState& s = r.claims[e.claim_id];
    s.claim_id = e.claim_id;
    s.last_entry_id = e.id;
    s.last_kind = KindName(e.kind);
    switch (e.kind) {
      case EntryKind::kVerification:
        ++s.verifications;
        if (e.payload.contains("verified") && e.payload["verified"].is_boolean()) {
          s.verified = e.payload["verified"].get<bool>();
        }
        break;
      case EntryKind::kContradiction:
        ++s.contradictions;
        break;
      case EntryKind::kOutcome:
        if (e.payload.value("success", false)) {
          ++s.outcomes_success;
        } else {
          ++s.outcomes_failure;
        }
        break;
      default:
        break;
    }
  }
  return r;
}

Result<std::vector<Entry>> EvidenceChain(base::Database& db, std::string_view claim_id,
                                         std::size_t limit) {
  Filter f;
  f.claim_id = std::string(claim_id);
  f.limit = limit;
  if (claim_id.empty()) return std::vector<Entry>();
  ASSIGN_OR_RETURN(std::vector<Entry> own, Query(db, f));
  std::map<std::int64_t, Entry> chain;
  for (Entry& e : own) chain.emplace(e.id, std::move(e));
  std::vector<std::int64_t> frontier;
  for (const auto& [id, e] : chain) {
    if (e.parent_id) frontier.push_back(*e.parent_id);
  }
  // Breadth-first over parent links, iterative and bounded in depth and size.
  for (std::size_t depth = 0; depth < kMaxChainDepth && !frontier.empty(); ++depth) {
    std::vector<std::int64_t> next;
    for (std::int64_t id : frontier) {
      if (chain.count(id) || chain.size() >= kMaxReadEntries) continue;
      ASSIGN_OR_RETURN(std::optional<Entry> parent, GetEntry(db, id));
      if (!parent) continue;  // pruned
      if (parent->parent_id) next.push_back(*parent->parent_id);
      chain.emplace(id, std::move(*parent));
    }
    frontier = std::move(next);
  }
  std::vector<Entry> out;
  out.reserve(chain.size());
  for (auto& [id, e] : chain) out.push_back(std::move(e));
  return out;
}

Result<std::map<std::string, std::int64_t>> CountByKind(base::Database& db) {
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("SELECT kind, count(*) FROM ledger GROUP BY kind ORDER BY kind"));
  std::map<std::string, std::int64_t> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out[st.ColumnText(0)] = st.ColumnInt64(1);
  }
  return out;
}

Result<std::int64_t> Prune(base::Database& db, std::int64_t keep) {
  if (keep < 0) return Status::InvalidArgument("ledger retention: keep: must be at least 0");
  ASSIGN_OR_RETURN(base::Transaction tx, db.Begin());
  RETURN_IF_ERROR(
      db.Exec("INSERT OR REPLACE INTO meta(key, value) VALUES ('ledger_pruning', '1')"));
  ASSIGN_OR_RETURN(base::Statement st,
                   db.Prepare("DELETE FROM ledger WHERE id NOT IN (SELECT id FROM ledger ORDER "
                              "BY id DESC LIMIT ?1)"));
  RETURN_IF_ERROR(st.Bind(1, keep));
  ASSIGN_OR_RETURN(bool row, st.Step());
  (void)row;
  const std::int64_t deleted = db.Changes();
  RETURN_IF_ERROR(db.Exec("DELETE FROM meta WHERE key = 'ledger_pruning'"));
  RETURN_IF_ERROR(tx.Commit());
  return deleted;
}

nlohmann::json ToProvJson(std::span<const Entry> entries, std::string_view workspace_id) {
  using nlohmann::json;
  json doc;
  doc["prefix"] = {{"lib", "urn:librarian:"},
                   {"prov", "http://www.w3.org/ns/prov#"},
                   {"xsd", "http://www.w3.org/2001/XMLSchema#"}};
  json entity = json::object(), activity = json::object(), agent = json::object();
  json generated = json::object(), used = json::object(), associated = json::object();
  json informed = json::object();
  const std::string bundle = fmt::format("lib:workspace/{}", workspace_id);
  entity[bundle] = {{"prov:type", "prov:Bundle"}, {"prov:label", std::string(workspace_id)}};
  for (const Entry& e : entries) {
    const std::string act = fmt::format("lib:entry/{}", e.id);
    json a = {{"prov:startTime", e.recorded_at}, {"prov:type", std::string(KindName(e.kind))}};
    if (!e.activity.empty()) a["prov:label"] = e.activity;
    if (!e.run_id.empty()) a["lib:runId"] = e.run_id;
    activity[act] = std::move(a);
    const std::string ag = fmt::format("lib:agent/{}", e.agent.empty() ? "librarian" : e.agent);
    agent[ag] = {{"prov:type", "prov:SoftwareAgent"}};
    associated[fmt::format("_:assoc{}", e.id)] = {{"prov:activity", act}, {"prov:agent", ag}};
    if (!e.claim_id.empty()) {
      const std::string claim = fmt::format("lib:claim/{}", e.claim_id);
      entity[claim] = {{"prov:type", "lib:Claim"}};
      if (e.kind == EntryKind::kClaim || e.kind == EntryKind::kVerification ||
          e.kind == EntryKind::kContradiction) {
        json g = {{"prov:entity", claim}, {"prov:activity", act}, {"prov:time", e.recorded_at}};
        generated[fmt::format("_:gen{}", e.id)] = std::move(g);
      }
    }
    if (e.payload.is_object() && e.payload.contains("evidence") &&
        e.payload["evidence"].is_object()) {
      const json& ev = e.payload["evidence"];
      const std::string file = ev.value("file", std::string());
      const std::string hash = ev.value("contentHash", std::string());
      if (!file.empty()) {
        const std::string id = fmt::format("lib:evidence/{}@{}", file, hash.substr(0, 16));
        entity[id] = {{"prov:type", "lib:EvidenceReference"},
                      {"lib:file", file},
                      {"lib:contentHash", hash},
                      {"lib:startLine", ev.value("startLine", 0)},
                      {"lib:endLine", ev.value("endLine", 0)}};
        used[fmt::format("_:use{}", e.id)] = {{"prov:activity", act}, {"prov:entity", id}};
      }
    }
    if (e.parent_id) {
      json w = {{"prov:informed", act},
                {"prov:informant", fmt::format("lib:entry/{}", *e.parent_id)}};
      if (!e.relation.empty()) w["lib:relation"] = e.relation;
      informed[fmt::format("_:inf{}", e.id)] = std::move(w);
    }
  }
  doc["entity"] = std::move(entity);
  doc["activity"] = std::move(activity);
  doc["agent"] = std::move(agent);
  if (!generated.empty()) doc["wasGeneratedBy"] = std::move(generated);
  if (!used.empty()) doc["used"] = std::move(used);
  if (!associated.empty()) doc["wasAssociatedWith"] = std::move(associated);
  if (!informed.empty()) doc["wasInformedBy"] = std::move(informed);
  return doc;
}

}  // namespace trove::librarian::ledger

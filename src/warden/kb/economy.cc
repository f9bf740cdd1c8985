// The economy gate (docs/warden.md §6). This file is the only one that holds SQL modifying
// `symbols`; economy_test.cc scans the sources to keep it so.
#include "warden/kb/economy.h"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "warden/kb/kb.h"
#include "warden/kb/store.h"

namespace trove::warden::kb {

namespace {

constexpr std::string_view kProvenanceNames[] = {"agent", "diff-carry", "oracle", "export",
                                                 "human"};

std::string Conf(double c) { return fmt::format("{:.3f}", c); }

// Returns the rule-1 problem with `write`, or an empty string for a valid write.
std::string InvalidWrite(const SymbolWrite& write) {
  const std::optional<Provenance> provenance = ParseProvenance(write.provenance);
  if (!provenance.has_value()) return fmt::format("unknown provenance \"{}\"", write.provenance);
  if (!std::isfinite(write.confidence)) {
    return fmt::format("confidence {} is not a finite number", write.confidence);
  }
  if (write.confidence < 0.0 || write.confidence > 1.0) {
    return fmt::format("confidence {} is outside [0, 1]", write.confidence);
  }
  if (!write.name.has_value()) {
    if (*provenance != Provenance::kHuman) return "missing name on a non-human write";
  } else {
    if (write.name->empty()) return "name is empty";
    if (write.name->size() > kMaxNameBytes) {
      return fmt::format("name is {} bytes, over the {}-byte limit", write.name->size(),
                         kMaxNameBytes);
    }
    if (!IsValidUtf8(*write.name)) return "name is not valid UTF-8";
    // PostgreSQL text cannot hold U+0000: one rule for both back ends.
    if (write.name->find('\0') != std::string::npos) return "name contains U+0000";
  }
  if (write.summary.has_value()) {
    if (!IsValidUtf8(*write.summary)) return "summary is not valid UTF-8";
    if (write.summary->find('\0') != std::string::npos) return "summary contains U+0000";
  }
  return {};
}

}  // namespace

std::string_view ProvenanceName(Provenance p) { return kProvenanceNames[static_cast<int>(p) - 1]; }

std::optional<Provenance> ParseProvenance(std::string_view label) {
  for (int i = 0; i < 5; ++i) {
    if (kProvenanceNames[i] == label) return static_cast<Provenance>(i + 1);
  }
  return std::nullopt;
}

int ProvenanceRank(std::string_view label) {
  const std::optional<Provenance> p = ParseProvenance(label);
  return p.has_value() ? static_cast<int>(*p) : 0;
}

bool IsValidUtf8(std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;  // continuation byte, overlong lead (c0, c1) or above f4
    }
    if (i + len > n) return false;
    for (std::size_t k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = cp << 6 | (cc & 0x3f);
    }
    if (len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) return false;
    if (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) return false;
    i += len;
  }
  return true;
}

Decision Decide(const std::optional<ExistingSymbol>& existing, const SymbolWrite& write) {
  // 1. Invalid write.
  if (std::string problem = InvalidWrite(write); !problem.empty()) {
    return {.accepted = false, .reason = "rejected: invalid write: " + problem, .rule = 1};
  }
  const bool human = write.provenance == ProvenanceName(Provenance::kHuman);
  const bool clears = human && !write.name.has_value();
  // 2. Absent or unnamed slot.
  if (!existing.has_value() || !existing->name.has_value()) {
    return {.accepted = true,
            .reason =
                clears ? "accepted: human clear of an unnamed slot" : "accepted: slot was unnamed",
            .rule = 2,
            .clears = clears};
  }
  const ExistingSymbol& e = *existing;
  // 3. Human writes always win.
  if (human) {
    if (clears) {
      return {.accepted = true,
              .reason = fmt::format("accepted: human clear of {} annotation \"{}\" (slot emptied, "
                                    "lock released)",
                                    e.provenance, *e.name),
              .rule = 3,
              .clears = true};
    }
    return {.accepted = true, .reason = "accepted: human write (locked)", .rule = 3};
  }
  // 4. Locked by a human.
  if (e.locked) {
    return {.accepted = false,
            .reason = fmt::format("rejected: locked by a human ({})", e.actor),
            .rule = 4};
  }
  const int write_rank = ProvenanceRank(write.provenance);
  const int existing_rank = ProvenanceRank(e.provenance);
  // 5. Corroboration: never downgrade the provenance of an identical name.
  if (*write.name == *e.name && write_rank < existing_rank) {
    return {.accepted = false,
            .reason = fmt::format("rejected: corroborates the existing {} annotation with the same "
                                  "name; provenance is not downgraded to {}",
                                  e.provenance, write.provenance),
            .rule = 5};
  }
  // 6. Higher authority.
  if (write_rank > existing_rank) {
    return {.accepted = true,
            .reason = fmt::format("accepted: {} outranks the existing {} annotation",
                                  write.provenance, e.provenance),
            .rule = 6};
  }
  // 7. Equal or lower authority: strictly higher confidence.
  if (write.confidence > e.confidence) {
    return {.accepted = true,
            .reason = fmt::format("accepted: confidence {} > existing {} annotation's {}",
                                  Conf(write.confidence), e.provenance, Conf(e.confidence)),
            .rule = 7};
  }
  return {.accepted = false,
          .reason = fmt::format("rejected: existing {} annotation has confidence {} >= {}",
                                e.provenance, Conf(e.confidence), Conf(write.confidence)),
          .rule = 7};
}

// ---------------------------------------------------------------------------------------------
// Kb write paths. Each fixes provenance and actor (§6.3) and funnels into UpsertSymbol.

namespace {

std::string_view HumanActor(HumanChannel channel) {
  return channel == HumanChannel::kCli ? "human:cli" : "human:lib";
}

std::string_view SeedActor(SeedSource source) {
  switch (source) {
    case SeedSource::kNameSection:
      return "ingest:name-section";
    case SeedSource::kGlue:
      return "ingest:glue";
    case SeedSource::kExport:
      return "ingest:export";
  }
  return "ingest:unknown";
}

// A backend, pass or label that becomes part of an actor: printable ASCII without spaces.
bool IsActorPart(std::string_view part) {
  if (part.empty() || part.size() > 64) return false;
  for (char c : part) {
    if (c <= ' ' || c > '~') return false;
  }
  return true;
}

bool IsBackendName(std::string_view backend) {
  if (backend.empty() || backend.size() > 64 || backend == "mcp") return false;
  for (std::size_t i = 0; i < backend.size(); ++i) {
    const char c = backend[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    (i > 0 && (c == '.' || c == '_' || c == '-'));
    if (!ok) return false;
  }
  return true;
}

SymbolWrite FromProposal(Provenance provenance, std::string actor, Proposal proposal) {
  return SymbolWrite{.name = std::move(proposal.name),
                     .summary = std::move(proposal.summary),
                     .provenance = std::string(ProvenanceName(provenance)),
                     .actor = std::move(actor),
                     .confidence = proposal.confidence,
                     .details_json = std::move(proposal.details_json)};
}

}  // namespace

Result<Decision> Kb::HumanSetName(HumanChannel channel, std::string_view stable_id,
                                  std::string name, std::optional<std::string> summary,
                                  std::string details_json) {
  return UpsertSymbol(stable_id, SymbolWrite{.name = std::move(name),
                                             .summary = std::move(summary),
                                             .provenance = "human",
                                             .actor = std::string(HumanActor(channel)),
                                             .confidence = 1.0,
                                             .details_json = std::move(details_json)});
}

Result<Decision> Kb::HumanClear(HumanChannel channel, std::string_view stable_id,
                                std::string details_json) {
  return UpsertSymbol(stable_id, SymbolWrite{.name = std::nullopt,
                                             .summary = std::nullopt,
                                             .provenance = "human",
                                             .actor = std::string(HumanActor(channel)),
                                             .confidence = 1.0,
                                             .details_json = std::move(details_json)});
}

Result<Decision> Kb::SeedExport(SeedSource source, std::string_view stable_id, std::string name,
                                std::string details_json) {
  return UpsertSymbol(stable_id,
                      internal::SeedWrite(source, std::move(name), std::move(details_json)));
}

Result<Decision> Kb::OracleWrite(std::string_view pass, std::string_view stable_id,
                                 Proposal proposal) {
  if (!IsActorPart(pass)) {
    return Status::InvalidArgument(fmt::format("oracle pass \"{}\" is not a valid name", pass));
  }
  return UpsertSymbol(stable_id, FromProposal(Provenance::kOracle, fmt::format("oracle:{}", pass),
                                              std::move(proposal)));
}

Result<Decision> Kb::DiffCarry(std::string_view from_label, std::string_view to_label,
                               std::string_view stable_id, Proposal proposal) {
  if (!IsActorPart(from_label) || !IsActorPart(to_label)) {
    return Status::InvalidArgument(
        fmt::format("diff labels \"{}\" and \"{}\" must be non-empty and without spaces",
                    from_label, to_label));
  }
  return UpsertSymbol(stable_id, FromProposal(Provenance::kDiffCarry,
                                              fmt::format("diff:{}->{}", from_label, to_label),
                                              std::move(proposal)));
}

Result<Decision> Kb::AgentPropose(std::string_view backend, std::string_view stable_id,
                                  Proposal proposal) {
  if (!IsBackendName(backend)) {
    return Status::InvalidArgument(fmt::format(
        "agent backend \"{}\" is not a lower-case backend name (and \"mcp\" is reserved for "
        "McpPropose)",
        backend));
  }
  return UpsertSymbol(stable_id, FromProposal(Provenance::kAgent, fmt::format("agent:{}", backend),
                                              std::move(proposal)));
}

Result<Decision> Kb::McpPropose(std::string_view stable_id, std::string name,
                                std::optional<std::string> summary, double confidence) {
  return UpsertSymbol(stable_id, SymbolWrite{.name = std::move(name),
                                             .summary = std::move(summary),
                                             .provenance = "agent",
                                             .actor = "agent:mcp",
                                             .confidence = confidence,
                                             .details_json = R"({"channel":"mcp"})"});
}

// ---------------------------------------------------------------------------------------------
// The gate

Result<Decision> Kb::UpsertSymbol(std::string_view stable_id, const SymbolWrite& write) {
  // Tries of one write when the back end says a rerun is safe (store.h PrepareRetry: a
  // deadlock or a connection lost before the commit on PostgreSQL; never on SQLite).
  constexpr int kMaxAttempts = 5;
  for (int attempt = 1;; ++attempt) {
    Result<Decision> decision = [&]() -> Result<Decision> {
      ASSIGN_OR_RETURN(std::unique_ptr<KbWriteTxn> txn, store_->BeginWrite(WriteKind::kGate));
      ASSIGN_OR_RETURN(Decision d, internal::RunGate(*txn, stable_id, write, Now()));
      RETURN_IF_ERROR(txn->Commit());
      return d;
    }();
    if (decision.ok() || attempt == kMaxAttempts ||
        !store_->PrepareRetry(decision.status(), attempt)) {
      return decision;
    }
  }
}

namespace internal {

// The statements that modify `symbols`, in the dialect SQLite (>= 3.24) and PostgreSQL share;
// a back end runs the text it is given (store.h). ?1..?9 are SymbolRow's fields.
const std::string_view kUpsertSymbolSql =
    "INSERT INTO symbols(stable_id, name, summary, type_signature, provenance, "
    "actor, confidence, locked, created_at, updated_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) "
    "ON CONFLICT(stable_id) DO UPDATE SET name = excluded.name, "
    "summary = excluded.summary, type_signature = excluded.type_signature, "
    "provenance = excluded.provenance, actor = excluded.actor, "
    "confidence = excluded.confidence, locked = excluded.locked, "
    "updated_at = excluded.updated_at";
// The first write of a stable_id. With E absent there is no row to lock: on PostgreSQL a
// concurrent first write may commit between the read and this insert, which then inserts
// nothing (it waits for that commit), and RunGate reads E again.
const std::string_view kInsertSymbolIfAbsentSql =
    "INSERT INTO symbols(stable_id, name, summary, type_signature, provenance, "
    "actor, confidence, locked, created_at, updated_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) "
    "ON CONFLICT(stable_id) DO NOTHING";

// A copied row, written as it was stored into a KB that holds no symbol yet (Kb::CopyInto
// checks); the gate already decided it where it came from.
const std::string_view kRestoreSymbolSql =
    "INSERT INTO symbols(stable_id, name, summary, type_signature, provenance, "
    "actor, confidence, locked, created_at, updated_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

SymbolWrite SeedWrite(SeedSource source, std::string name, std::string details_json) {
  return SymbolWrite{.name = std::move(name),
                     .summary = std::nullopt,
                     .provenance = "export",
                     .actor = std::string(SeedActor(source)),
                     .confidence = 1.0,
                     .details_json = std::move(details_json)};
}

Result<Decision> RunGate(KbWriteTxn& txn, std::string_view stable_id, const SymbolWrite& write,
                         std::string_view now) {
  {
    const nlohmann::json details = nlohmann::json::parse(write.details_json, nullptr, false);
    if (details.is_discarded() || !details.is_object()) {
      return Status::InvalidArgument("symbol write: details_json is not a JSON object");
    }
  }
  // The stable_id must be known to some version; else nothing is recorded.
  ASSIGN_OR_RETURN(const std::optional<std::string> type_signature,
                   txn.LatestTypeSignature(stable_id));
  if (!type_signature.has_value()) {
    return Decision{.accepted = false,
                    .reason = fmt::format("rejected: unknown stable_id {}", stable_id),
                    .rule = 0};
  }

  // Read E, locked against every other writer until the commit; decide; write. A lost race
  // for the first write of the slot (the insert wrote nothing) reads E again: at most once,
  // as symbol rows are never deleted.
  std::optional<ExistingSymbol> existing;
  Decision decision;
  for (int round = 0;; ++round) {
    ASSIGN_OR_RETURN(existing, txn.ReadSymbolForUpdate(stable_id));
    decision = Decide(existing, write);
    if (!decision.accepted) break;
    std::optional<std::string_view> name;
    if (write.name.has_value()) name = *write.name;
    std::optional<std::string_view> summary;
    double confidence = write.confidence;
    bool locked = false;
    if (decision.clears) {
      // The emptied slot: unnamed, unlocked, confidence 0 (docs/decisions/0008-warden-kb.md).
      confidence = 0.0;
    } else {
      locked = write.provenance == ProvenanceName(Provenance::kHuman);
      if (write.summary.has_value() && !write.summary->empty()) {
        summary = *write.summary;
      } else if (existing.has_value() && existing->summary.has_value()) {
        summary = *existing->summary;  // a write without a summary keeps the existing one
      }
    }
    ASSIGN_OR_RETURN(
        const bool wrote,
        txn.WriteSymbol(existing.has_value() ? kUpsertSymbolSql : kInsertSymbolIfAbsentSql,
                        SymbolRow{.stable_id = stable_id,
                                  .name = name,
                                  .summary = summary,
                                  .type_signature = *type_signature,
                                  .provenance = write.provenance,
                                  .actor = write.actor,
                                  .confidence = confidence,
                                  .locked = locked,
                                  .now = now}));
    if (wrote) break;
    if (round > 0) return Status::Internal(fmt::format("symbol write: {} lost twice", stable_id));
  }

  // One evidence row per attempt, accepted or not. Evidence text must stay valid UTF-8 text
  // without U+0000 (which PostgreSQL text cannot hold): such a name or summary is recorded as
  // a blob-free escaped form, so the trail can be stored, printed and exported anywhere.
  auto printable = [](const std::optional<std::string>& text) -> std::optional<std::string> {
    if (!text.has_value() || (IsValidUtf8(*text) && text->find('\0') == std::string::npos)) {
      return text;
    }
    std::string escaped;
    for (unsigned char c : *text) {
      if (c < 0x80 && c >= 0x20) {
        escaped += static_cast<char>(c);
      } else {
        escaped += fmt::format("\\x{:02x}", c);
      }
    }
    return escaped;
  };
  const std::optional<std::string> name = printable(write.name);
  const std::optional<std::string> summary = printable(write.summary);
  RETURN_IF_ERROR(txn.AppendEvidence(EvidenceRow{
      .stable_id = stable_id,
      .at = now,
      .actor = write.actor,
      .provenance = write.provenance,
      .name = name.has_value() ? std::optional<std::string_view>(*name) : std::nullopt,
      .summary = summary.has_value() ? std::optional<std::string_view>(*summary) : std::nullopt,
      // NaN is stored as NULL; infinities are stored as they came.
      .confidence =
          std::isnan(write.confidence) ? std::nullopt : std::optional<double>(write.confidence),
      .accepted = decision.accepted,
      .reason = decision.reason,
      .details_json = write.details_json}));
  return decision;
}

}  // namespace internal
}  // namespace trove::warden::kb

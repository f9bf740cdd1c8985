#include "warden/kb/kb.h"

#include <fmt/core.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "base/env.h"
#include "base/hash.h"
#include "base/pg.h"
#include "warden/kb/pg/kb_pg.h"
#include "warden/kb/sqlite/kb_sqlite.h"
#include "warden/kb/store.h"
#include "warden/wasm/instruction.h"

namespace trove::warden::kb {

namespace {

using nlohmann::json;

constexpr int kMaxPageSize = 1000;

bool AllDigits(std::string_view text) {
  if (text.empty() || text.size() > 10) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::optional<std::uint32_t> ParseIndex(std::string_view text) {
  if (!AllDigits(text)) return std::nullopt;
  std::uint64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  if (v > UINT32_MAX) return std::nullopt;
  return static_cast<std::uint32_t>(v);
}

// The project name a new database gets by default: the directory holding it, or the project

// ---- list_functions cursors: base64url("c1|version|imports|unnamed|below|provenance|last")

std::string FilterKey(const FunctionQuery& q) {
  std::string below =
      q.below.has_value() ? fmt::format("{:016x}", std::bit_cast<std::uint64_t>(*q.below)) : "-";
  std::string prov = q.provenance.has_value() ? base::Base64UrlEncode(*q.provenance) : "-";
  return fmt::format("{}|{}|{}|{}|{}", q.version_id, q.include_imports ? 1 : 0,
                     q.unnamed_only ? 1 : 0, below, prov);
}

std::string EncodeCursor(const FunctionQuery& q, std::uint32_t last_index) {
  return base::Base64UrlEncode(fmt::format("c1|{}|{}", FilterKey(q), last_index));
}

// Returns the last index of the previous page, or kInvalidArgument when `cursor` was not made
// for this query.
Result<std::int64_t> DecodeCursor(const FunctionQuery& q, std::string_view cursor) {
  const Status bad = Status::InvalidArgument(
      "cursor: not a next_cursor of this list_functions query (same version and filters)");
  Result<std::string> text = base::Base64UrlDecode(cursor);
  if (!text.ok()) return bad;
  const std::string prefix = fmt::format("c1|{}|", FilterKey(q));
  if (text->compare(0, prefix.size(), prefix) != 0) return bad;
  std::optional<std::uint32_t> last = ParseIndex(std::string_view(*text).substr(prefix.size()));
  if (!last.has_value()) return bad;
  return static_cast<std::int64_t>(*last);
}

// more than a million rows' worth of memory up front.
std::size_t ReserveHint(std::int64_t count) {
  return static_cast<std::size_t>(std::clamp<std::int64_t>(count, 0, 1 << 20));
}

std::string_view SeedSourceName(SeedSource source) {
  switch (source) {
    case SeedSource::kNameSection:
      return "name-section";
    case SeedSource::kGlue:
      return "glue";
    case SeedSource::kExport:
      return "export";
  }
  return "unknown";
}

}  // namespace

std::string FormatTimestamp(std::int64_t micros) {
  std::int64_t seconds = micros / 1'000'000;
  std::int64_t rem = micros % 1'000'000;
  if (rem < 0) {
    rem += 1'000'000;
    --seconds;
  }
  const time_t t = static_cast<time_t>(seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, rem / 1000);
}

// ---------------------------------------------------------------------------------------------
// Open

Kb::Kb(base::Env& env, std::unique_ptr<KbStore> store,
       std::function<void(std::size_t)> store_progress)
    : env_(env),
      store_(std::move(store)),
      path_(store_->Target()),
      store_progress_(std::move(store_progress)) {}

Kb::~Kb() = default;

Result<std::unique_ptr<Kb>> Kb::Open(base::Env& env, const std::string& path,
                                     const KbOptions& options) {
  // A "postgresql://" or "postgres://" URL names a PostgreSQL KB; anything else a file.
  std::unique_ptr<KbStore> store;
  if (base::pg::IsPostgresUrl(path)) {
    ASSIGN_OR_RETURN(store, PgKbStore::Open(path, options));
  } else {
    ASSIGN_OR_RETURN(store, SqliteKbStore::Open(env, path, options));
  }
  return std::unique_ptr<Kb>(new Kb(env, std::move(store), options.store_progress_for_testing));
}

DatabaseFiles ExistingDatabaseFiles(const std::string& path) {
  const auto exists = [](const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
  };
  return {.db = exists(path),
          .wal = exists(path + "-wal"),
          .shm = exists(path + "-shm"),
          .journal = exists(path + "-journal")};
}

Result<bool> Kb::RemoveCreated(std::unique_ptr<Kb> kb, const DatabaseFiles& before) {
  if (kb == nullptr) return false;
  Result<bool> removed = kb->store_->RemoveCreated(before);
  kb.reset();
  return removed;
}

std::string Kb::Now() { return FormatTimestamp(env_.NowMicros()); }

Result<std::string> Kb::Project() { return store_->Project(); }

bool Kb::Healthy() { return store_->Healthy(); }

Status Kb::RequireVersion(std::int64_t version_id) {
  ASSIGN_OR_RETURN(const bool exists, store_->VersionExists(version_id));
  if (!exists) return Status::NotFound(fmt::format("unknown version_id {}", version_id));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Ingest

Result<bool> Kb::PrepareToStore() { return store_->PrepareToStore(); }

Result<StoreResult> Kb::StoreVersion(const VersionRecord& version,
                                     std::span<const FunctionRecord> functions,
                                     const std::vector<SeedName>& seeds,
                                     const RowsProgress& on_rows) {
  // Validate before taking the write lock.
  std::uint32_t imports = 0;
  std::unordered_map<std::uint32_t, const FunctionRecord*> by_index;
  by_index.reserve(functions.size());
  for (const FunctionRecord& f : functions) {
    if (f.is_import) ++imports;
    if (f.stable_id.empty()) {
      return Status::InvalidArgument(
          fmt::format("store version: function {} has no stable_id", f.func_index));
    }
    if (!by_index.emplace(f.func_index, &f).second) {
      return Status::InvalidArgument(
          fmt::format("store version: function index {} appears twice", f.func_index));
    }
  }
  if (imports != version.imported_count ||
      functions.size() - imports != static_cast<std::size_t>(version.defined_count)) {
    return Status::InvalidArgument(fmt::format(
        "store version: the version counts {} imported and {} defined functions, the records "
        "hold {} and {}",
        version.imported_count, version.defined_count, imports, functions.size() - imports));
  }
  for (const SeedName& seed : seeds) {
    if (!by_index.contains(seed.func_index)) {
      return Status::InvalidArgument(fmt::format(
          "store version: seed names function {}, which is not in the version", seed.func_index));
    }
  }

  // Seeds are gated in stable_id order (stable: a stable_id seeded twice keeps the version's
  // order), so every StoreVersion locks symbol rows in one order and two concurrent ingests
  // seeding the same ids cannot deadlock (docs/decisions/0093-warden-pg-faults-soak.md).
  std::vector<const SeedName*> ordered_seeds;
  ordered_seeds.reserve(seeds.size());
  for (const SeedName& seed : seeds) ordered_seeds.push_back(&seed);
  std::stable_sort(
      ordered_seeds.begin(), ordered_seeds.end(), [&](const SeedName* a, const SeedName* b) {
        return by_index.at(a->func_index)->stable_id < by_index.at(b->func_index)->stable_id;
      });

  // One try of the transaction.
  const auto store_once = [&]() -> Result<StoreResult> {
    ASSIGN_OR_RETURN(std::unique_ptr<KbWriteTxn> txn, store_->BeginWrite(WriteKind::kStoreVersion));
    StoreResult result;
    // The same bytes already ingested: nothing to write.
    {
      ASSIGN_OR_RETURN(auto existing, txn->VersionBySha(version.sha256));
      if (existing.has_value()) {
        result.version_id = existing->first;
        result.label = std::move(existing->second);
        result.already_ingested = true;
        return result;  // the transaction rolls back: nothing was written
      }
    }
    std::string label = version.label;
    if (label.empty()) {
      ASSIGN_OR_RETURN(const std::int64_t count, txn->CountVersions());
      for (std::int64_t n = count + 1;; ++n) {
        label = fmt::format("v{}", n);
        ASSIGN_OR_RETURN(const bool taken, txn->LabelTaken(label));
        if (!taken) break;
      }
    } else {
      ASSIGN_OR_RETURN(const bool taken, txn->LabelTaken(label));
      if (taken) {
        return Status::AlreadyExists(
            fmt::format("label \"{}\" is already used by a version", label));
      }
    }

    const std::string now = Now();
    ASSIGN_OR_RETURN(result.version_id, txn->InsertVersion(version, label, now));
    result.label = label;
    RETURN_IF_ERROR(txn->InsertFunctions(result.version_id, functions, [&](std::size_t done) {
      if (store_progress_) store_progress_(done);
      // Each whole percent of the rows: at most 101 calls whatever the module's size.
      if (on_rows && done * 100 / functions.size() != (done - 1) * 100 / functions.size()) {
        on_rows(done, functions.size());
      }
    }));

    // Seeds go through the gate, inside this transaction.
    for (const SeedName* seed_ptr : ordered_seeds) {
      const SeedName& seed = *seed_ptr;
      const FunctionRecord& f = *by_index.at(seed.func_index);
      const json details = {{"version_id", result.version_id},
                            {"label", label},
                            {"func_index", seed.func_index},
                            {"source", SeedSourceName(seed.source)}};
      ASSIGN_OR_RETURN(
          Decision decision,
          internal::RunGate(
              *txn, f.stable_id,
              internal::SeedWrite(seed.source, seed.name,
                                  details.dump(-1, ' ', false, json::error_handler_t::replace)),
              Now()));
      auto& counts = decision.accepted ? result.seeds_accepted : result.seeds_rejected;
      ++counts[static_cast<std::size_t>(seed.source)];
    }
    RETURN_IF_ERROR(txn->Commit());
    return result;
  };

  // The whole transaction is rerun when the back end says it is safe (store.h PrepareRetry: a
  // deadlock, a serialization failure or a connection lost before the commit on PostgreSQL;
  // never on SQLite).
  constexpr int kMaxAttempts = 5;
  for (int attempt = 1;; ++attempt) {
    Result<StoreResult> stored = store_once();
    if (stored.ok() || attempt == kMaxAttempts || !store_->PrepareRetry(stored.status(), attempt)) {
      return stored;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Queries

Result<std::vector<VersionInfo>> Kb::ListVersions() { return store_->ListVersions(); }

Result<VersionInfo> Kb::GetVersion(std::int64_t version_id) {
  ASSIGN_OR_RETURN(std::optional<VersionInfo> info, store_->GetVersion(version_id));
  if (!info.has_value()) return Status::NotFound(fmt::format("unknown version_id {}", version_id));
  return std::move(*info);
}

Result<std::int64_t> Kb::ResolveVersion(std::optional<std::string_view> spec) {
  if (!spec.has_value()) {
    ASSIGN_OR_RETURN(const std::optional<std::int64_t> latest, store_->LatestVersionId());
    if (!latest.has_value()) {
      return Status::NotFound("the KB has no version yet (run 'warden ingest')");
    }
    return *latest;
  }
  {
    ASSIGN_OR_RETURN(const std::optional<std::int64_t> id, store_->VersionIdByLabel(*spec));
    if (id.has_value()) return *id;
  }
  if (AllDigits(*spec)) {
    std::int64_t id = 0;
    std::from_chars(spec->data(), spec->data() + spec->size(), id);
    ASSIGN_OR_RETURN(const bool exists, store_->VersionExists(id));
    if (exists) return id;
  }
  return Status::NotFound(fmt::format("unknown version \"{}\"", *spec));
}

Result<Coverage> Kb::GetCoverage(std::int64_t version_id) {
  RETURN_IF_ERROR(RequireVersion(version_id));
  ASSIGN_OR_RETURN(const CoverageCounts counts, store_->CoverageOf(version_id));
  Coverage c;
  c.defined = counts.defined;
  c.named = counts.named;
  c.coverage_pct =
      c.defined == 0 ? 0.0 : static_cast<double>(c.named) * 100.0 / static_cast<double>(c.defined);
  c.human_named = counts.human;
  c.export_named = counts.export_;
  c.oracle_named = counts.oracle;
  c.diff_carry_named = counts.diff_carry;
  c.agent_named = counts.agent;
  c.locked = counts.locked;
  c.mean_confidence = counts.mean_confidence;
  c.placeholder_named = counts.placeholder;
  c.real_named = c.named - c.placeholder_named;
  c.real_coverage_pct =
      c.defined == 0 ? 0.0
                     : static_cast<double>(c.real_named) * 100.0 / static_cast<double>(c.defined);
  return c;
}

bool IsPlaceholderName(std::string_view name) {
  constexpr std::string_view kPrefix = "sub_";
  if (name.size() <= kPrefix.size() || name.substr(0, kPrefix.size()) != kPrefix) return false;
  for (char c : name.substr(kPrefix.size())) {
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (!hex) return false;
  }
  return true;
}

Result<FunctionPage> Kb::ListFunctions(const FunctionQuery& query) {
  if (query.limit.has_value() && (*query.limit < 1 || *query.limit > kMaxPageSize)) {
    return Status::InvalidArgument(
        fmt::format("limit: must be between 1 and {}, got {}", kMaxPageSize, *query.limit));
  }
  if (query.provenance.has_value() && !ParseProvenance(*query.provenance).has_value()) {
    return Status::InvalidArgument(
        fmt::format("provenance: unknown provenance \"{}\"", *query.provenance));
  }
  RETURN_IF_ERROR(RequireVersion(query.version_id));
  std::int64_t after = -1;
  if (query.cursor.has_value()) {
    ASSIGN_OR_RETURN(after, DecodeCursor(query, *query.cursor));
  }
  // One row more than the page tells whether another page follows.
  ASSIGN_OR_RETURN(
      std::vector<FunctionRow> rows,
      store_->ListFunctionRows(FunctionFilter{
          .version_id = query.version_id,
          .include_imports = query.include_imports,
          .after = after,
          .unnamed_only = query.unnamed_only,
          .below = query.below,
          .provenance = query.provenance,
          .limit = query.limit.has_value() ? std::optional<int>(*query.limit + 1) : std::nullopt}));
  FunctionPage page;
  if (query.limit.has_value() && rows.size() > static_cast<std::size_t>(*query.limit)) {
    rows.resize(static_cast<std::size_t>(*query.limit));
    page.next_cursor = EncodeCursor(query, rows.back().index);
  }
  page.functions = std::move(rows);
  return page;
}

Result<std::optional<StoredFunction>> Kb::GetFunction(std::int64_t version_id,
                                                      std::uint32_t func_index) {
  RETURN_IF_ERROR(RequireVersion(version_id));
  ASSIGN_OR_RETURN(std::optional<FunctionRecord> record,
                   store_->GetFunction(version_id, func_index));
  if (!record.has_value()) return std::optional<StoredFunction>();
  return std::optional<StoredFunction>(
      StoredFunction{.version_id = version_id, .record = std::move(*record)});
}

Result<std::vector<FunctionRecord>> Kb::FunctionRecords(std::int64_t version_id) {
  ASSIGN_OR_RETURN(const VersionInfo info, GetVersion(version_id));
  // The stored counts size the vector once: a record is ~0.8 KB, and growing 22,000 of them by
  // doubling touched twice the memory (docs/decisions/0080-warden-diff-oracle-speed.md).
  return store_->FunctionRecords(version_id, ReserveHint(info.functions));
}

Result<AnnotatedFunctions> Kb::DefinedFunctionsForDiff(std::int64_t version_id) {
  ASSIGN_OR_RETURN(const VersionInfo info, GetVersion(version_id));
  return store_->DefinedFunctionsForDiff(version_id, ReserveHint(info.defined));
}

Result<std::optional<FunctionFacts>> Kb::GetFunctionFacts(std::int64_t version_id,
                                                          std::uint32_t func_index) {
  ASSIGN_OR_RETURN(std::optional<StoredFunction> f, GetFunction(version_id, func_index));
  if (!f.has_value() || f->record.is_import) return std::optional<FunctionFacts>();
  FunctionRecord& r = f->record;
  std::optional<std::vector<std::string_view>> mnemonics = wasm::DecodeOpcodeStream(r.opcodes);
  if (!mnemonics) {
    return Status::Malformed(fmt::format("stored opcodes of function {} are corrupt", func_index));
  }
  return std::optional<FunctionFacts>(FunctionFacts{
      .func_index = r.func_index,
      .stable_id = std::move(r.stable_id),
      .type_signature = std::move(r.type_signature),
      .call_targets = std::move(r.call_targets),
      .referenced_strings = std::move(r.referenced_strings),
      .raw_name = std::move(r.raw_name),
      .instruction_mnemonics = std::vector<std::string>(mnemonics->begin(), mnemonics->end()),
      .is_exported = !r.export_names.empty()});
}

Result<std::vector<std::uint32_t>> Kb::Callers(std::int64_t version_id, std::uint32_t func_index) {
  RETURN_IF_ERROR(RequireVersion(version_id));
  return store_->Callers(version_id, func_index);
}

Result<std::vector<EvidenceEntry>> Kb::Evidence(std::string_view stable_id) {
  return store_->Evidence(stable_id);
}

Result<std::optional<SymbolRecord>> Kb::GetSymbol(std::string_view stable_id) {
  ASSIGN_OR_RETURN(std::optional<SymbolRecord> s, store_->GetSymbolRow(stable_id));
  if (!s.has_value()) return s;
  ASSIGN_OR_RETURN(s->evidence, Evidence(stable_id));
  return s;
}

Result<std::uint32_t> Kb::ResolveFunction(std::int64_t version_id, std::string_view spec) {
  RETURN_IF_ERROR(RequireVersion(version_id));
  auto unique = [&](const FunctionMatches& rows, std::string_view what) -> Result<std::uint32_t> {
    if (rows.empty()) {
      return Status::NotFound(fmt::format("no function {} in version_id {}", what, version_id));
    }
    if (rows.size() > 1) {
      std::string list;
      for (std::size_t i = 0; i < rows.size() && i < 5; ++i) {
        list += fmt::format("{}func[{}] {}", i == 0 ? "" : ", ", rows[i].first, rows[i].second);
      }
      if (rows.size() > 5) list += ", ...";
      return Status::InvalidArgument(
          fmt::format("{} is ambiguous in version_id {}: {} functions match ({})", what, version_id,
                      rows.size(), list));
    }
    return rows.front().first;
  };

  std::string_view index_text = spec;
  if (spec.starts_with("func[") && spec.ends_with("]")) {
    index_text = spec.substr(5, spec.size() - 6);
    if (!ParseIndex(index_text).has_value()) {
      return Status::InvalidArgument(fmt::format("malformed function reference \"{}\"", spec));
    }
  }
  if (std::optional<std::uint32_t> index = ParseIndex(index_text)) {
    ASSIGN_OR_RETURN(auto rows, store_->FunctionsByIndex(version_id, *index));
    return unique(rows, fmt::format("func[{}]", *index));
  }
  if (spec.starts_with("w1:")) {
    std::string hex(spec.substr(3));
    for (char& c : hex) {
      if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        return Status::InvalidArgument(fmt::format("malformed stable_id \"{}\"", spec));
      }
    }
    if (hex.size() < 8) {
      return Status::InvalidArgument(fmt::format(
          "stable_id prefix \"{}\" is too short: give at least 8 hex digits after w1:", spec));
    }
    ASSIGN_OR_RETURN(auto rows, store_->FunctionsByStableIdPrefix(version_id, hex));
    return unique(rows, fmt::format("with stable_id {}", spec));
  }
  if (spec.starts_with("import:")) {
    ASSIGN_OR_RETURN(auto rows, store_->FunctionsByStableId(version_id, spec));
    return unique(rows, fmt::format("with stable_id {}", spec));
  }
  ASSIGN_OR_RETURN(auto by_symbol, store_->FunctionsBySymbolName(version_id, spec));
  if (!by_symbol.empty()) return unique(by_symbol, fmt::format("named \"{}\"", spec));
  ASSIGN_OR_RETURN(auto by_raw, store_->FunctionsByRawName(version_id, spec));
  return unique(by_raw, fmt::format("named \"{}\"", spec));
}

// ---------------------------------------------------------------------------------------------
// Diffs (docs/warden.md §9.1) and the Oracle's version facts (§8.3)

Result<std::int64_t> Kb::StoreDiff(std::int64_t from_version, std::int64_t to_version,
                                   std::string_view params_json, std::string_view report_json,
                                   std::string_view changelog_md) {
  return store_->StoreDiff(from_version, to_version, Now(), params_json, report_json, changelog_md);
}

Result<std::optional<DiffRecord>> Kb::GetDiff(std::int64_t from_version, std::int64_t to_version) {
  return store_->GetDiff(from_version, to_version);
}

Result<std::vector<DiffRecord>> Kb::ListDiffs() { return store_->ListDiffs(); }

Result<std::string> Kb::VersionProducersJson(std::int64_t version_id) {
  ASSIGN_OR_RETURN(std::optional<std::string> producers, store_->VersionProducersJson(version_id));
  if (!producers.has_value()) {
    return Status::NotFound(fmt::format("unknown version_id {}", version_id));
  }
  return std::move(*producers);
}

Status Kb::SetEmscriptenVersion(std::int64_t version_id, std::string_view version,
                                std::string_view source) {
  ASSIGN_OR_RETURN(const bool updated, store_->SetEmscriptenVersion(version_id, version, source));
  if (!updated) return Status::NotFound(fmt::format("unknown version_id {}", version_id));
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------
// Discovery and init

Result<InitResult> Init(base::Env& env, const std::string& dir, const std::string& project) {
  std::string root = dir;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  const std::string warden_dir = root + "/.warden";
  InitResult result;
  result.db_path = warden_dir + "/warden.db";
  result.created = !env.FileExists(result.db_path);
  RETURN_IF_ERROR(env.CreateDir(warden_dir));
  std::string name = project;
  if (name.empty()) {
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(root, ec);
    name = (ec ? std::filesystem::path(root) : abs).lexically_normal().filename().string();
    if (name.empty()) name = "warden";
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<Kb> kb,
      Kb::Open(env, result.db_path, KbOptions{.create_if_missing = true, .project = name}));
  ASSIGN_OR_RETURN(result.project, kb->Project());
  return result;
}

}  // namespace trove::warden::kb

#include "warden/server/warden_tools.h"

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/env.h"
#include "mcp/describe.h"
#include "mcp/policy/rate_limit.h"
#include "mcp/registry.h"
#include "warden/agents/backend.h"
#include "warden/agents/pipeline.h"
#include "warden/oracle/oracle.h"
#include "warden/pass/kb_agent_store.h"
#include "warden/server/diff_tools.h"
#include "warden/server/oracle_tools.h"
#include "warden/server/symbol_notifier.h"

namespace trove::warden::server {

// --- KbPool ---

KbPool::KbPool(base::Env& env, std::string path, std::size_t max_connections)
    : env_(env),
      path_(std::move(path)),
      max_connections_(std::max<std::size_t>(1, max_connections)) {}

KbPool::Lease::~Lease() {
  if (pool_ != nullptr && kb_) pool_->Release(std::move(kb_));
}

Result<KbPool::Lease> KbPool::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  returned_.wait(lock, [this] { return !free_.empty() || open_ < max_connections_; });
  if (!free_.empty()) {
    std::unique_ptr<kb::Kb> kb = std::move(free_.back());
    free_.pop_back();
    lock.unlock();
    if (kb->Healthy()) return Lease(this, std::move(kb));
    // Dead (a PostgreSQL server that restarted or went away): open a new one in its slot
    // rather than let the old one retry its connection for seconds.
    kb.reset();
  } else {
    ++open_;
    lock.unlock();
  }
  Result<std::unique_ptr<kb::Kb>> opened = kb::Kb::Open(env_, path_);
  if (!opened.ok()) {
    std::lock_guard<std::mutex> relock(mu_);
    --open_;
    returned_.notify_one();
    return std::move(opened).status();
  }
  return Lease(this, std::move(opened).value());
}

void KbPool::Release(std::unique_ptr<kb::Kb> kb) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(std::move(kb));
  returned_.notify_one();
}

// --- Tool types (docs/warden.md §3.2) ---

namespace {

using mcp::EmitNull;
using mcp::Field;
using mcp::Fields;
using mcp::Tag;

// A stable_id: "w1:" and 32 hex digits, optionally a tier suffix; or "import:<module>.<field>".
constexpr std::string_view kStableIdPattern =
    "^(w1:[0-9a-f]{32}(/t[1-3]:[0-9a-f]{16})?|import:.+)$";

struct VersionArgs {
  std::int64_t version_id = 0;
};
inline auto DescribeFields(Tag<VersionArgs>) {
  return Fields(Field("version_id", &VersionArgs::version_id,
                      "Internal version id, from list_versions", mcp::AtLeast(1)));
}

struct VersionView {
  std::int64_t id = 0;
  std::string label;
  std::optional<std::string> emscripten_version;
  std::int64_t functions = 0;
  bool shared_memory = false;
  mcp::Json producers;        // object, or null
  mcp::Json target_features;  // array of strings, or null
};
// The module's toolchain sections as `warden versions --json` shows them (docs/warden.md §3.1).
constexpr std::string_view kProducersDescription =
    "The producers custom section (non-Emscripten toolchains keep one): an object from field "
    "(language, processed-by, sdk) to [name, version] pairs; {} when absent";
constexpr std::string_view kFeaturesDescription =
    "The target_features custom section: prefixed features such as \"+simd128\"; [] when absent";
inline auto DescribeFields(Tag<VersionView>) {
  return Fields(
      Field("id", &VersionView::id, "Internal version id, passed to the other tools"),
      Field("label", &VersionView::label, "Human label, e.g. v1"),
      Field("emscripten_version", &VersionView::emscripten_version,
            "Inferred Emscripten version, if detected", EmitNull()),
      Field("functions", &VersionView::functions, "Total functions, imported + defined"),
      Field("shared_memory", &VersionView::shared_memory, "Whether shared memory was detected"),
      Field("producers", &VersionView::producers, kProducersDescription),
      Field("target_features", &VersionView::target_features, kFeaturesDescription));
}
struct VersionsOut {
  std::vector<VersionView> versions;
};
inline auto DescribeFields(Tag<VersionsOut>) {
  return Fields(Field("versions", &VersionsOut::versions, "Every ingested version"));
}

struct CoverageOut {
  std::int64_t defined = 0;
  std::int64_t named = 0;
  double coverage_pct = 0;
  std::int64_t oracle_named = 0;
  std::int64_t human_named = 0;
  std::int64_t agent_named = 0;
  std::int64_t placeholder_named = 0;
  std::int64_t real_named = 0;
  double real_coverage_pct = 0;
  mcp::Json producers;        // as VersionView
  mcp::Json target_features;  // as VersionView
};
inline auto DescribeFields(Tag<CoverageOut>) {
  return Fields(
      Field("defined", &CoverageOut::defined, "Defined (non-imported) functions"),
      Field("named", &CoverageOut::named, "Defined functions with a name"),
      Field("coverage_pct", &CoverageOut::coverage_pct, "named / defined * 100"),
      Field("oracle_named", &CoverageOut::oracle_named, "Names from the Oracle"),
      Field("human_named", &CoverageOut::human_named, "Names set by a human"),
      Field("agent_named", &CoverageOut::agent_named, "Names proposed by an agent, MCP included"),
      Field("placeholder_named", &CoverageOut::placeholder_named,
            "Named functions whose name is a placeholder, sub_<hex> (counted in named)"),
      Field("real_named", &CoverageOut::real_named, "named - placeholder_named"),
      Field("real_coverage_pct", &CoverageOut::real_coverage_pct, "real_named / defined * 100"),
      Field("producers", &CoverageOut::producers, kProducersDescription),
      Field("target_features", &CoverageOut::target_features, kFeaturesDescription));
}

struct ListFunctionsArgs {
  std::int64_t version_id = 0;
  bool include_imports = false;
  std::optional<std::int32_t> limit;
  std::optional<std::string> cursor;
};
inline auto DescribeFields(Tag<ListFunctionsArgs>) {
  using A = ListFunctionsArgs;
  return Fields(
      Field("version_id", &A::version_id, "Internal version id, from list_versions",
            mcp::AtLeast(1)),
      Field("include_imports", &A::include_imports, "Also list imported functions",
            mcp::NotRequired()),
      Field("limit", &A::limit, "Page size; without it every row comes at once",
            mcp::InRange(1, 1000)),
      Field("cursor", &A::cursor, "next_cursor of the previous page", mcp::MaxLength(1024)));
}

struct FunctionView {
  std::uint32_t index = 0;
  std::string stable_id;
  std::optional<std::string> type;
  std::optional<std::string> name;
  std::optional<std::string> provenance;
  std::optional<double> confidence;
};
inline auto DescribeFields(Tag<FunctionView>) {
  using F = FunctionView;
  return Fields(
      Field("index", &F::index, "Wasm function index"),
      Field("stable_id", &F::stable_id, "Stable content identity"),
      Field("type", &F::type, "Wasm type signature", EmitNull()),
      Field("name", &F::name, "Current name, null if unnamed", EmitNull()),
      Field("provenance", &F::provenance, "oracle, human, agent, export or diff-carry", EmitNull()),
      Field("confidence", &F::confidence, "0.0-1.0, null if unnamed", EmitNull()));
}
struct FunctionsOut {
  std::vector<FunctionView> functions;
  std::optional<std::string> next_cursor;
};
inline auto DescribeFields(Tag<FunctionsOut>) {
  return Fields(Field("functions", &FunctionsOut::functions, "Functions in index order"),
                Field("next_cursor", &FunctionsOut::next_cursor,
                      "Pass back as cursor for the next page; null on the last", EmitNull()));
}

struct FactsArgs {
  std::int64_t version_id = 0;
  std::uint32_t func_index = 0;
};
inline auto DescribeFields(Tag<FactsArgs>) {
  return Fields(Field("version_id", &FactsArgs::version_id, "Internal version id", mcp::AtLeast(1)),
                Field("func_index", &FactsArgs::func_index, "Wasm function index"));
}

// The Oracle match behind a function's current name (docs/warden.md §8.3).
struct OracleFactView {
  std::string name;
  std::string pass;
  double score = 0;
  double confidence = 0;
  std::string library;
  std::string emscripten_version;
};
inline auto DescribeFields(Tag<OracleFactView>) {
  using O = OracleFactView;
  return Fields(Field("name", &O::name, "The Oracle name"),
                Field("pass", &O::pass, "exact, norm, structural or fuzzy"),
                Field("score", &O::score, "The match score"),
                Field("confidence", &O::confidence, "The confidence written"),
                Field("library", &O::library, "Library tag of the corpus signature"),
                Field("emscripten_version", &O::emscripten_version,
                      "Emscripten version of the corpus signature"));
}

struct FactsView {
  std::uint32_t func_index = 0;
  std::string stable_id;
  std::string type_signature;
  std::vector<std::string> call_targets;
  std::vector<std::string> referenced_strings;
  std::optional<std::string> raw_name;
  std::vector<std::string> instruction_mnemonics;
  bool is_exported = false;
  std::optional<OracleFactView> oracle;
};
inline auto DescribeFields(Tag<FactsView>) {
  using F = FactsView;
  return Fields(
      Field("func_index", &F::func_index, "Wasm function index"),
      Field("stable_id", &F::stable_id, "Stable function identity"),
      Field("type_signature", &F::type_signature, "Wasm type signature"),
      Field("call_targets", &F::call_targets,
            "Direct import call targets (module.field) and <indirect> sites"),
      Field("referenced_strings", &F::referenced_strings,
            "Strings referenced through decoded constants"),
      Field("raw_name", &F::raw_name, "Name-section hint, if present", EmitNull()),
      Field("instruction_mnemonics", &F::instruction_mnemonics, "Decoded opcodes, in order"),
      Field("is_exported", &F::is_exported, "Whether the function is exported"),
      Field("oracle", &F::oracle,
            "The Oracle match behind the current name (pass, score, library); null when the "
            "name is not from the Oracle",
            EmitNull()));
}
struct FactsOut {
  std::optional<FactsView> facts;
};
inline auto DescribeFields(Tag<FactsOut>) {
  return Fields(Field("facts", &FactsOut::facts,
                      "The FunctionFacts; null if the function is missing or imported",
                      EmitNull()));
}

struct SymbolArgs {
  std::string stable_id;
};
inline auto DescribeFields(Tag<SymbolArgs>) {
  return Fields(Field("stable_id", &SymbolArgs::stable_id, "A stable_id from list_functions",
                      mcp::Pattern(kStableIdPattern), mcp::MaxLength(256)));
}

struct EvidenceView {
  std::string at;
  std::string actor;
  std::string provenance;
  std::optional<std::string> name;
  std::optional<double> confidence;
  bool accepted = false;
  std::string reason;
  mcp::Json details;
};
inline auto DescribeFields(Tag<EvidenceView>) {
  using E = EvidenceView;
  return Fields(Field("at", &E::at, "When (UTC)"), Field("actor", &E::actor, "Who wrote"),
                Field("provenance", &E::provenance, "The write's provenance"),
                Field("name", &E::name, "Proposed name", EmitNull()),
                Field("confidence", &E::confidence, "Proposed confidence", EmitNull()),
                Field("accepted", &E::accepted, "Whether the gate accepted it"),
                Field("reason", &E::reason, "The gate's reason"),
                Field("details", &E::details, "What the write carried (JSON object)"));
}
struct SymbolView {
  std::string stable_id;
  std::optional<std::string> name;
  std::optional<std::string> summary;
  std::optional<std::string> type_signature;
  std::string provenance;
  double confidence = 0;
  bool locked = false;
  std::vector<EvidenceView> evidence;
};
inline auto DescribeFields(Tag<SymbolView>) {
  using S = SymbolView;
  return Fields(Field("stable_id", &S::stable_id, "Echo of the input key"),
                Field("name", &S::name, "Current name", EmitNull()),
                Field("summary", &S::summary, "Purpose, parameters, behaviour", EmitNull()),
                Field("type_signature", &S::type_signature, "Wasm type signature", EmitNull()),
                Field("provenance", &S::provenance, "oracle, human, agent, export or diff-carry"),
                Field("confidence", &S::confidence, "0.0-1.0"),
                Field("locked", &S::locked, "If true, only a human can overwrite it"),
                Field("evidence", &S::evidence, "The evidence trail, oldest first"));
}
struct SymbolOut {
  std::optional<SymbolView> symbol;
};
inline auto DescribeFields(Tag<SymbolOut>) {
  return Fields(Field("symbol", &SymbolOut::symbol,
                      "The annotation record; null if none exists yet", EmitNull()));
}

struct ProposeArgs {
  std::string stable_id;
  std::string name;
  std::string summary;
  double confidence = 0.5;
};
inline auto DescribeFields(Tag<ProposeArgs>) {
  using P = ProposeArgs;
  return Fields(Field("stable_id", &P::stable_id, "The function's stable_id",
                      mcp::Pattern(kStableIdPattern), mcp::MaxLength(256)),
                Field("name", &P::name, "Proposed identifier", mcp::LengthRange(2, 128)),
                Field("summary", &P::summary, "What the function does", mcp::NotRequired(),
                      mcp::MaxLength(4000)),
                Field("confidence", &P::confidence, "How sure, 0.0-1.0", mcp::NotRequired(),
                      mcp::InRange(0, 1)));
}
struct ProposeOut {
  bool written = false;
  std::string reason;
};
inline auto DescribeFields(Tag<ProposeOut>) {
  return Fields(Field("written", &ProposeOut::written, "Whether the KB took the name"),
                Field("reason", &ProposeOut::reason, "Why, in the gate's words"));
}

struct BackendView {
  std::string name;
  std::string backend;
  std::vector<std::string> aliases;
  bool available = false;
  std::vector<std::string> requirements;
  std::optional<std::string> default_model;
};
inline auto DescribeFields(Tag<BackendView>) {
  using B = BackendView;
  return Fields(
      Field("name", &B::name, "Selector: offline, openai or anthropic"),
      Field("backend", &B::backend, "Internal backend name written into evidence"),
      Field("aliases", &B::aliases, "Alternate selectors, such as codex and oai"),
      Field("available", &B::available,
            "Whether the requirements and key are present in the server environment"),
      Field("requires", &B::requirements, "Required components and environment variables"),
      Field("default_model", &B::default_model, "Default model", EmitNull()));
}
struct BackendsOut {
  std::vector<BackendView> backends;
};
inline auto DescribeFields(Tag<BackendsOut>) {
  return Fields(Field("backends", &BackendsOut::backends, "One object per backend"));
}

constexpr std::string_view kBackendSelectors[] = {"auto",  "offline", "openai",
                                                  "codex", "oai",     "anthropic"};
struct RunPassArgs {
  std::int64_t version_id = 0;
  std::string backend = "auto";
  bool only_unconfident = true;
};
inline auto DescribeFields(Tag<RunPassArgs>) {
  using R = RunPassArgs;
  return Fields(
      Field("version_id", &R::version_id, "Internal version id, from list_versions",
            mcp::AtLeast(1)),
      Field("backend", &R::backend, "Backend selector (agent_backends lists them)",
            mcp::NotRequired(), mcp::OneOf{kBackendSelectors}),
      Field("only_unconfident", &R::only_unconfident,
            "Skip symbols that are locked or already at confidence >= 0.5", mcp::NotRequired()));
}
struct DetailView {
  std::uint32_t func_index = 0;
  std::string stable_id;
  std::string outcome;
  std::optional<std::string> name;
  std::optional<double> confidence;
  std::string reason;
};
inline auto DescribeFields(Tag<DetailView>) {
  using D = DetailView;
  return Fields(Field("func_index", &D::func_index, "Wasm function index"),
                Field("stable_id", &D::stable_id, "Stable function identity"),
                Field("outcome", &D::outcome, "written, verifier_reject, economy_reject or error"),
                Field("name", &D::name, "The proposed name", EmitNull()),
                Field("confidence", &D::confidence, "Its confidence", EmitNull()),
                Field("reason", &D::reason, "Why"));
}
struct SummaryOut {
  std::string backend;
  std::int64_t considered = 0;
  std::int64_t proposed = 0;
  std::int64_t written = 0;
  std::int64_t rejected_by_verifier = 0;
  std::int64_t rejected_by_economy = 0;
  std::int64_t skipped_existing = 0;
  std::vector<DetailView> details;
};
inline auto DescribeFields(Tag<SummaryOut>) {
  using S = SummaryOut;
  return Fields(
      Field("backend", &S::backend, "Backend that actually ran"),
      Field("considered", &S::considered, "Functions visited"),
      Field("proposed", &S::proposed, "Proposals returned by the backend"),
      Field("written", &S::written, "Proposals written to the KB"),
      Field("rejected_by_verifier", &S::rejected_by_verifier, "Proposals blocked by the verifier"),
      Field("rejected_by_economy", &S::rejected_by_economy,
            "Proposals blocked by the economy gate"),
      Field("skipped_existing", &S::skipped_existing,
            "Locked or already-confident functions skipped before the backend"),
      Field("details", &S::details, "Per-function outcomes"));
}

// docs/warden.md §7.4's identifier rule: [A-Za-z_][A-Za-z0-9_]* segments joined by "::".
bool IsIdentifier(std::string_view s) {
  if (s.empty()) return false;
  std::size_t i = 0;
  while (true) {
    const std::size_t start = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
    if (i == start || std::isdigit(static_cast<unsigned char>(s[start]))) return false;
    if (i == s.size()) return true;
    if (s.substr(i, 2) != "::") return false;
    i += 2;
  }
}

// A stored toolchain section (kb::VersionInfo's producers_json, features_json); null when the
// stored text is not JSON of the expected kind.
mcp::Json StoredSection(const std::string& text, bool object) {
  mcp::Json j = mcp::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || (object ? !j.is_object() : !j.is_array())) return nullptr;
  return j;
}

VersionView ToView(const kb::VersionInfo& v) {
  return {v.id,
          v.label,
          v.emscripten_version,
          v.functions,
          v.shared_memory,
          StoredSection(v.producers_json, true),
          StoredSection(v.features_json, false)};
}

FunctionView ToView(const kb::FunctionRow& r) {
  return {r.index, r.stable_id, r.type, r.name, r.provenance, r.confidence};
}

SymbolView ToView(const kb::SymbolRecord& s) {
  SymbolView out{s.stable_id,  s.name,       s.summary, s.type_signature,
                 s.provenance, s.confidence, s.locked,  {}};
  for (const kb::EvidenceEntry& e : s.evidence) {
    mcp::Json details = mcp::Json::parse(e.details_json, nullptr, false);
    if (details.is_discarded() || !details.is_object()) details = mcp::Json::object();
    std::optional<double> c = e.confidence;
    if (c && !std::isfinite(*c)) c.reset();
    out.evidence.push_back(
        {e.at, e.actor, e.provenance, e.name, c, e.accepted, e.reason, std::move(details)});
  }
  return out;
}

// The version must exist: an unknown id is a tool error naming it (docs/warden.md §3.1).
Status RequireVersion(kb::Kb& k, std::int64_t version_id) {
  Result<kb::VersionInfo> v = k.GetVersion(version_id);
  if (v.ok()) return {};
  if (v.status().code() == base::StatusCode::kNotFound) {
    return Status::NotFound(
        fmt::format("unknown version_id {}; call list_versions for the valid ids", version_id));
  }
  return v.status();
}

// Counts the agent passes running at once (WardenToolOptions::max_concurrent_passes).
class PassSlots {
 public:
  explicit PassSlots(std::size_t max) : max_(max) {}

  // Holds one slot until destroyed.
  class Slot {
   public:
    explicit Slot(PassSlots* owner) : owner_(owner) {}
    Slot(Slot&& other) noexcept : owner_(std::exchange(other.owner_, nullptr)) {}
    Slot& operator=(Slot&&) = delete;
    ~Slot() {
      if (owner_ != nullptr) owner_->running_.fetch_sub(1);
    }

   private:
    PassSlots* owner_;
  };

  // Returns a slot, or resource exhausted when `max` passes already run.
  Result<Slot> TryTake() {
    std::size_t running = running_.load();
    do {
      if (running >= max_) {
        return Status::ResourceExhausted(fmt::format(
            "run_agent_pass: {} agent passes are already running on this server (the limit); "
            "retry when one has finished",
            running));
      }
    } while (!running_.compare_exchange_weak(running, running + 1));
    return Slot(this);
  }

 private:
  const std::size_t max_;
  std::atomic<std::size_t> running_{0};
};

// An agent provider behind its circuit breaker "agent:<provider>" (docs/decisions/0052-breakers-
// around-dependencies.md): each backend call is admitted by the breaker and its outcome
// reported. A refused call ends the pass (kUnsupported ends RunAgentPass) and is remembered,
// so the tool answers mcp::BreakerRefusal, a retryable RATE_LIMIT_EXCEEDED.
class BreakerBackend final : public agents::Backend {
 public:
  BreakerBackend(agents::Backend& inner, mcp::policy::CircuitBreaker& breaker)
      : inner_(inner), breaker_(breaker) {}

  std::string_view name() const override { return inner_.name(); }
  std::optional<std::string> model() const override { return inner_.model(); }

  Result<agents::BackendReply> Propose(const agents::FunctionFacts& facts,
                                       std::span<const agents::CalleeName> callees,
                                       base::Cancellation& cancel) override {
    const mcp::policy::Admission admission = breaker_.Admit();
    if (!admission.allowed) {
      refusal_ = admission;
      return Status::Unsupported(fmt::format("agent:{} circuit breaker is open", inner_.name()));
    }
    Result<agents::BackendReply> reply = inner_.Propose(facts, callees, cancel);
    breaker_.Report(Outcome(reply.status()));
    return reply;
  }

  // The refusal that ended the pass, if the breaker refused a call.
  const std::optional<mcp::policy::Admission>& refusal() const { return refusal_; }

 private:
  // A provider error (transport, timeout, 5xx or 429 after the retries, an unusable answer)
  // counts towards opening; cancellation and the caller's own configuration (a refused key, an
  // unavailable backend) do not.
  static mcp::policy::CallOutcome Outcome(const Status& status) {
    if (status.ok()) return mcp::policy::CallOutcome::kSuccess;
    switch (status.code()) {
      case base::StatusCode::kCancelled:
      case base::StatusCode::kPermissionDenied:
      case base::StatusCode::kUnsupported:
        return mcp::policy::CallOutcome::kIgnored;
      default:
        return mcp::policy::CallOutcome::kFailure;
    }
  }

  agents::Backend& inner_;
  mcp::policy::CircuitBreaker& breaker_;
  std::optional<mcp::policy::Admission> refusal_;  // one pass runs on one thread
};

// The live symbol resources of a KB on PostgreSQL (docs/warden.md §3.3; symbol_notifier.h).
Status RegisterSymbolResources(mcp::Server& server, KbPool& pool, SymbolFeed& feed) {
  mcp::ResourceRegistry& resources = server.resources();
  Status added = resources.Add(
      {.uri = std::string(kSymbolsUri),
       .name = "symbols",
       .title = "Symbol changes",
       .description =
           "The symbols named recently by anyone writing this KB (other servers, the CLI, "
           "agents), as this server heard them: each change with its sequence number and the "
           "URI of the symbol. Subscribe to be told of each batch; reset_sequence marks a batch "
           "after which anything may have changed.",
       .mime_type = "application/json",
       .subscribable = true},
      [&feed](const std::string& uri, const mcp::ResourceVars&,
              mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
        return std::vector<mcp::ResourceContents>{mcp::ResourceContents{
            uri, "application/json",
            feed.Snapshot().dump(-1, ' ', false, mcp::Json::error_handler_t::replace),
            std::nullopt}};
      });
  if (!added.ok()) return added;
  return resources.AddTemplate(
      {.uri_template = std::string(kSymbolsUri) + "/{stable_id}",
       .name = "symbol",
       .title = "Symbol",
       .description =
           "One symbol as get_symbol returns it: name, summary, provenance, confidence, lock and "
           "the evidence trail; null while unnamed. Subscribable: notified whenever anyone "
           "writes it. Characters outside [A-Za-z0-9-._~:] of the stable_id are "
           "percent-encoded (a tier suffix's '/' is %2F).",
       .mime_type = "application/json"},
      [&pool](const std::string& uri, const mcp::ResourceVars& vars,
              mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
        ASSIGN_OR_RETURN(std::string stable_id, DecodeStableId(vars.at("stable_id")));
        if (stable_id.size() > 4096) {
          return Status::InvalidArgument(
              fmt::format("{}: stable_id longer than 4096 bytes", uri.substr(0, 80)));
        }
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        ASSIGN_OR_RETURN(std::optional<kb::SymbolRecord> s, k->GetSymbol(stable_id));
        SymbolOut out;
        if (s) out.symbol = ToView(*s);
        return std::vector<mcp::ResourceContents>{mcp::ResourceContents{
            uri, "application/json",
            mcp::ToJson(out).dump(-1, ' ', false, mcp::Json::error_handler_t::replace),
            std::nullopt}};
      });
}

}  // namespace

Status RegisterWardenTools(mcp::Server& server, KbPool& pool,
                           const agents::AgentConfig& agent_config,
                           const WardenToolOptions& tool_options) {
  const std::size_t workers = server.pool().workers();
  const std::size_t max_passes = tool_options.max_concurrent_passes;
  if (max_passes == 0 || (workers > 0 && max_passes >= workers)) {
    return Status::InvalidArgument(
        fmt::format("warden tools: max_concurrent_passes {} must be at least 1 and below the "
                    "{} worker threads, or passes would stall every other tool",
                    max_passes, workers));
  }
  mcp::ToolRegistry& tools = server.tools();
  // Not RETURN_IF_ERROR around each Add: the handlers use it too, and the macros would nest.
  Status added;
  const mcp::ToolAnnotations read_only = {
      .read_only = true, .idempotent = true, .open_world = false};

  added = tools.Add<mcp::NoArgs, VersionsOut>(
      {.name = "list_versions",
       .description = "Every ingested version of the module. Call it first to learn the "
                      "version_id values the other tools need.",
       .annotations = read_only,
       .scopes = {"read"}},
      [&pool](const mcp::NoArgs&, mcp::CallContext&) -> Result<VersionsOut> {
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        ASSIGN_OR_RETURN(std::vector<kb::VersionInfo> versions, k->ListVersions());
        VersionsOut out;
        for (const kb::VersionInfo& v : versions) out.versions.push_back(ToView(v));
        return out;
      });
  if (!added.ok()) return added;

  added = tools.Add<VersionArgs, CoverageOut>(
      {.name = "coverage",
       .description = "Symbol coverage of one version: how many defined functions are named, "
                      "and by whom.",
       .annotations = read_only,
       .scopes = {"read"}},
      [&pool](const VersionArgs& args, mcp::CallContext&) -> Result<CoverageOut> {
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        RETURN_IF_ERROR(RequireVersion(*k, args.version_id));
        ASSIGN_OR_RETURN(kb::Coverage c, k->GetCoverage(args.version_id));
        ASSIGN_OR_RETURN(kb::VersionInfo v, k->GetVersion(args.version_id));
        return CoverageOut{c.defined,
                           c.named,
                           c.coverage_pct,
                           c.oracle_named,
                           c.human_named,
                           c.agent_named,
                           c.placeholder_named,
                           c.real_named,
                           c.real_coverage_pct,
                           StoredSection(v.producers_json, true),
                           StoredSection(v.features_json, false)};
      });
  if (!added.ok()) return added;

  added = tools.Add<ListFunctionsArgs, FunctionsOut>(
      {.name = "list_functions",
       .description = "Every function of a version with its annotation state, in index order. "
                      "Remaining work is name == null or a low confidence. Optional limit and "
                      "cursor page through large modules.",
       .annotations = read_only,
       .scopes = {"read"}},
      [&pool](const ListFunctionsArgs& args, mcp::CallContext&) -> Result<FunctionsOut> {
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        RETURN_IF_ERROR(RequireVersion(*k, args.version_id));
        kb::FunctionQuery q;
        q.version_id = args.version_id;
        q.include_imports = args.include_imports;
        q.limit = args.limit;
        q.cursor = args.cursor;
        ASSIGN_OR_RETURN(kb::FunctionPage page, k->ListFunctions(q));
        FunctionsOut out;
        out.functions.reserve(page.functions.size());
        for (const kb::FunctionRow& r : page.functions) out.functions.push_back(ToView(r));
        out.next_cursor = page.next_cursor;
        return out;
      });
  if (!added.ok()) return added;

  added = tools.Add<FactsArgs, FactsOut>(
      {.name = "get_function_facts",
       .description = "The grounded FunctionFacts of one defined function (call targets, "
                      "referenced strings, mnemonics...), for a proposal from evidence.",
       .annotations = read_only,
       .scopes = {"read"}},
      [&pool](const FactsArgs& args, mcp::CallContext&) -> Result<FactsOut> {
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        RETURN_IF_ERROR(RequireVersion(*k, args.version_id));
        ASSIGN_OR_RETURN(std::optional<kb::FunctionFacts> f,
                         k->GetFunctionFacts(args.version_id, args.func_index));
        FactsOut out;
        if (f) {
          out.facts = FactsView{
              f->func_index,         f->stable_id, f->type_signature,        f->call_targets,
              f->referenced_strings, f->raw_name,  f->instruction_mnemonics, f->is_exported};
          ASSIGN_OR_RETURN(std::optional<oracle::OracleFact> o,
                           oracle::CurrentOracleFact(*k, f->stable_id));
          if (o) {
            out.facts->oracle = OracleFactView{o->name,       o->pass,    o->score,
                                               o->confidence, o->library, o->emscripten_version};
          }
        }
        return out;
      });
  if (!added.ok()) return added;

  added = tools.Add<SymbolArgs, SymbolOut>(
      {.name = "get_symbol",
       .description = "The complete annotation record of one function: name, summary, "
                      "provenance, confidence, lock and the evidence trail.",
       .annotations = read_only,
       .scopes = {"read"}},
      [&pool](const SymbolArgs& args, mcp::CallContext&) -> Result<SymbolOut> {
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        ASSIGN_OR_RETURN(std::optional<kb::SymbolRecord> s, k->GetSymbol(args.stable_id));
        SymbolOut out;
        if (s) out.symbol = ToView(*s);
        return out;
      });
  if (!added.ok()) return added;

  added = tools.Add<ProposeArgs, ProposeOut>(
      {.name = "propose_symbol",
       .description = "Propose a name for a function. Recorded as provenance agent, actor "
                      "agent:mcp, through the same gate as every write: it never overwrites a "
                      "human name, and beats an Oracle name only with a higher confidence.",
       .annotations =
           {.read_only = false, .destructive = false, .idempotent = false, .open_world = false},
       .scopes = {"write"}},
      [&pool](const ProposeArgs& args, mcp::CallContext&) -> Result<ProposeOut> {
        if (!IsIdentifier(args.name)) {
          return Status::InvalidArgument(fmt::format(
              "name '{}' is not an identifier ([A-Za-z_][A-Za-z0-9_]*, '::' between parts)",
              args.name));
        }
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        std::optional<std::string> summary;
        if (!args.summary.empty()) summary = args.summary;
        ASSIGN_OR_RETURN(kb::Decision d,
                         k->McpPropose(args.stable_id, args.name, summary, args.confidence));
        if (!d.accepted && d.rule == 0) {
          return Status::NotFound(
              fmt::format("unknown stable_id {}: no version has it; call "
                          "list_functions for valid ids",
                          args.stable_id));
        }
        return ProposeOut{d.accepted, d.reason};
      });
  if (!added.ok()) return added;

  added = tools.Add<mcp::NoArgs, BackendsOut>(
      {.name = "agent_backends",
       .description = "The agent backends, their aliases, required credentials and default "
                      "models. Call it before run_agent_pass with backend \"auto\".",
       .annotations = read_only,
       .scopes = {"read"}},
      [&agent_config](const mcp::NoArgs&, mcp::CallContext&) -> Result<BackendsOut> {
        BackendsOut out;
        for (const agents::BackendInfo& b : agents::ListBackends(agent_config)) {
          out.backends.push_back(
              {b.name, b.backend, b.aliases, b.available, b.requirements, b.default_model});
        }
        return out;
      });
  if (!added.ok()) return added;

  added = tools.AddRaw(
      {.name = "run_agent_pass",
       .description = "Runs the propose -> verify -> write-back pass of `warden agent` over a "
                      "version, callees before callers. Every proposal passes the verifier and "
                      "the economy gate. Reports progress when given a progress token; can be "
                      "cancelled.",
       .annotations =
           {.read_only = false, .destructive = false, .idempotent = false, .open_world = true},
       // Runs a pass (execute) that writes names back (write); its backend may call out to a
       // network service (network). Scopes are static, so the offline backend needs them too.
       .scopes = {"execute", "network", "write"},
       .deadline = std::chrono::hours(2)},
      mcp::SchemaFor<RunPassArgs>(), mcp::SchemaFor<SummaryOut>(),
      [&pool, &agent_config, provider = tool_options.provider,
       slots = std::make_shared<PassSlots>(max_passes)](
          const mcp::Json& arguments, mcp::CallContext& ctx) -> Result<mcp::ToolResult> {
        ASSIGN_OR_RETURN(RunPassArgs args, mcp::FromJson<RunPassArgs>(arguments));
        ASSIGN_OR_RETURN(std::unique_ptr<agents::Backend> backend,
                         agents::MakeBackend(args.backend, std::nullopt, agent_config, provider));
        // A provider backend sends function facts to a network service: consent first (§5.6).
        if (backend->name() != "offline") RETURN_IF_ERROR(ctx.RequireConsent("run_agent_pass"));
        ASSIGN_OR_RETURN(PassSlots::Slot slot, slots->TryTake());
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        RETURN_IF_ERROR(RequireVersion(*k, args.version_id));
        pass::KbAgentStore store(*k);
        agents::PassOptions options;
        options.version_id = args.version_id;
        options.only_unconfident = args.only_unconfident;
        options.channel = "mcp";
        const base::Progress progress = ctx.MakeProgress();
        // A provider (not the offline backend) is an external dependency with its breaker.
        const std::string dependency = fmt::format("agent:{}", backend->name());
        std::optional<BreakerBackend> guarded;
        if (backend->name() != "offline") guarded.emplace(*backend, ctx.breaker(dependency));
        agents::Backend& used = guarded ? static_cast<agents::Backend&>(*guarded) : *backend;
        Result<agents::RunSummary> run =
            agents::RunAgentPass(store, used, options, ctx.cancellation(), progress);
        if (guarded && guarded->refusal()) {
          return mcp::BreakerRefusal(dependency, *guarded->refusal());
        }
        ASSIGN_OR_RETURN(agents::RunSummary r, std::move(run));
        SummaryOut out{r.backend,
                       r.considered,
                       r.proposed,
                       r.written,
                       r.rejected_by_verifier,
                       r.rejected_by_economy,
                       r.skipped_existing,
                       {}};
        for (const agents::RunDetail& d : r.details) {
          out.details.push_back({d.func_index, d.stable_id,
                                 std::string(agents::OutcomeName(d.outcome)), d.name, d.confidence,
                                 d.reason});
        }
        return mcp::ToolResult::Structured(mcp::ToJson(out));
      });
  if (!added.ok()) return added;
  std::string oracle_store = tool_options.oracle_store;
  if (oracle_store.empty()) {
    // A KB at a URL has no project directory: the working directory's store then.
    const std::string project = oracle::ProjectDirOfKb(pool.path());
    oracle_store = (project.empty() ? std::string(".") : project) + "/.warden/oracle.db";
  }
  added = RegisterOracleTools(server, pool, std::move(oracle_store));
  if (!added.ok()) return added;
  added = RegisterDiffTools(server, pool);
  if (!added.ok() || tool_options.symbol_feed == nullptr) return added;
  return RegisterSymbolResources(server, pool, *tool_options.symbol_feed);
}

}  // namespace trove::warden::server

// The Emscripten Oracle (docs/warden.md §8): builds a store of labelled runtime functions from
// named corpus modules, and names the stripped functions of a target version by matching them
// against it.
//
// Matching (§8.3) runs five passes over the target's unmatched defined functions, each with
// the confidence it writes:
//   exact       exact hash (SHA-256 of the body)                       0.98
//   norm        norm_hash (the stable_id base)                         0.95
//   callgraph   names the callees of exact/norm/callgraph matches by
//               call site from the corpus signature's callee list      0.90
//   structural  structural hash + type signature + call-out set, sizes
//               within 1.5x, histogram cosine >= 0.95                  0.90
//   fuzzy       LSH candidates, the §5.4 gates and Oracle thresholds,
//               mutual best                                            min(0.90, overall)
// Order: exact, norm, callgraph, structural, fuzzy, callgraph again.
// Precision rules: the keyed and callgraph passes need >= 5 instructions, fuzzy >= 20; a key
// must select exactly one unmatched target function and every corpus signature with that key
// must agree on one normalised name (fuzzy: the best candidates must agree, and the target
// must be the best one for that name); a structural or fuzzy name contradicted by a call-graph
// neighbour named this run is refused, and a structural match under 20 instructions needs a
// neighbour that agrees (decision 0071); imports are never matched; a name is given to at
// most one function per run; and every write goes through the KB's gate (Kb::OracleWrite), so
// export and human names are never replaced.
//
// Version inference (§8.3): a version the glue gave at ingest, else a vote over the
// emscripten_version of exact and norm hits of >= 20 instructions weighted by size, else a
// libc++ ABI tag hint in the module's names; stored with its source.
//
// Thread safety: the pure functions may run on any thread; the KB and store functions use
// their objects from the calling thread only.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "warden/identity/similarity.h"
#include "warden/kb/records.h"
#include "warden/oracle/store.h"

namespace trove::base {
class Env;
}
namespace trove::warden::kb {
class Kb;
}

namespace trove::warden::oracle {

// Minimum sizes (§8.3).
inline constexpr std::uint32_t kMinKeyedInstructions = 5;
inline constexpr std::uint32_t kMinFuzzyInstructions = 20;
inline constexpr std::uint32_t kMinVoteInstructions = 20;
// Confidences of the passes (§8.3).
inline constexpr double kExactConfidence = 0.98;
inline constexpr double kNormConfidence = 0.95;
inline constexpr double kStructuralConfidence = 0.90;
inline constexpr double kFuzzyCap = 0.90;
inline constexpr double kCallGraphConfidence = 0.90;
// The structural pass's tighter gates (decision 0071): instruction counts within this ratio,
// op-class histograms with at least this cosine, and below kStructuralAnchorBelow
// instructions at least one call-graph neighbour named this run that agrees.
inline constexpr double kStructuralMaxRatio = 1.5;
inline constexpr double kStructuralMinCosine = 0.95;
inline constexpr std::uint32_t kStructuralAnchorBelow = 20;
// Call-graph propagation rounds (each from the previous round's new matches).
inline constexpr int kCallGraphRounds = 8;
// The confidence cap on a module that is not Emscripten (§8.3: out of scope, low confidence).
inline constexpr double kForeignCap = 0.50;

enum class Pass : std::uint8_t {
  kExact = 0,
  kNorm = 1,
  kStructural = 2,
  kFuzzy = 3,
  kCallGraph = 4
};
inline constexpr std::size_t kPassCount = 5;
// "exact", "norm", "structural", "fuzzy", "callgraph".
std::string_view PassName(Pass p);

// Returns `name` normalised for comparison and voting: libc++ ABI tags ("[abi:ne190106]")
// removed, whitespace removed except one space between two identifier characters, and known
// aliases folded (stackSave and emscripten_stack_get_current, dlmalloc and malloc, ...).
std::string NormaliseName(std::string_view name);

// --- Where the store is (§2.1, §8.1) ---

// Returns the directory whose .warden/ holds a KB's project files: the project directory of
// `<dir>/.warden/warden.db`, else the KB file's own directory; empty for a KB at a PostgreSQL
// URL, which has none (callers use the working directory's project, kb::FindProjectDir).
std::string ProjectDirOfKb(const std::string& kb_path);
// Returns the store path, by precedence: `flag` (relative to `cwd`); else `oracle.store` in
// <project_dir>/.warden/config.json, then in the global config ($XDG_CONFIG_HOME/warden/
// config.json, else ~/.config/warden/config.json), relative to project_dir; else
// <project_dir>/.warden/oracle.db. A config value is a flat {"oracle.store": P} or nested
// {"oracle": {"store": P}}; an unreadable or malformed config file is skipped.
std::string ResolveStorePath(base::Env& env, const std::optional<std::string>& flag,
                             const std::string& project_dir, const std::string& cwd);

// --- Building a store (`warden oracle build`) ---

struct BuildOptions {
  std::string library;             // --library: the library tag (default "unknown")
  std::string emscripten_version;  // --emscripten-version (default "unknown")
  std::string opt_level;           // --opt-level
  std::string flags;               // --flags
  std::string source_ref;          // --source-ref (default: the module's file name)
};

struct BuildCounts {
  std::int64_t modules = 0;
  std::int64_t functions = 0;  // defined functions read
  std::int64_t added = 0;
  std::int64_t unnamed = 0;     // no name-section name and no export name
  std::int64_t too_small = 0;   // below kMinKeyedInstructions
  std::int64_t duplicates = 0;  // already in the store (or twice in the input)
};

// Returns the signatures of the named defined functions of `functions` (a PrepareVersion's
// records) and counts the others into `counts`.
std::vector<Signature> ExtractSignatures(std::span<const kb::FunctionRecord> functions,
                                         const BuildOptions& options, BuildCounts& counts);

// Reads, fingerprints and adds one named module (the bytes of the file at `path`).
// Errors are the reader's (kMalformed, with the offset) or the store's.
Status AddModule(OracleStore& store, std::span<const std::uint8_t> bytes, const std::string& path,
                 const BuildOptions& options, BuildCounts& counts);

// --- Matching ---

// The current annotation of a target function (a list_functions row's symbol part).
struct TargetName {
  std::optional<std::string> name;
  std::optional<std::string> provenance;
};

struct Match {
  std::uint32_t func_index = 0;
  std::string stable_id;
  std::uint32_t instruction_count = 0;
  Pass pass = Pass::kExact;
  double score = 0;       // the pass's confidence (fuzzy: the overall similarity)
  double confidence = 0;  // what is written: the pass's, capped for a foreign module
  std::string name;       // the corpus name as written
  std::string name_norm;
  std::string library;
  std::string emscripten_version;
  std::string opt_level;
  std::int64_t signature_id = 0;
  std::int64_t candidates = 0;  // corpus signatures with the key (fuzzy: scored candidates)
  std::optional<identity::Similarity> components;  // fuzzy only
};

// Why a candidate was refused (counts for the report).
struct Refusals {
  std::int64_t imports = 0;           // imported functions, never matched
  std::int64_t too_small = 0;         // defined, below the keyed minimum
  std::int64_t ambiguous_target = 0;  // a key selecting several unmatched targets
  std::int64_t ambiguous_name = 0;    // corpus signatures of a key disagreeing on the name
  std::int64_t name_taken = 0;        // a name already given to another function this run
  std::int64_t fuzzy_below = 0;       // best fuzzy candidate under the threshold
  std::int64_t fuzzy_not_mutual = 0;  // another target is the better one for the name
  std::int64_t inconsistent = 0;      // contradicted by call-graph neighbours named this run
};

struct VersionGuess {
  std::optional<std::string> version;
  std::optional<std::string> source;  // "glue", "oracle-vote", "hint", or the stored source
  std::optional<double> share;        // oracle-vote: the winner's share of the vote weight
  std::string detail;                 // how it was found, one line
};

struct MatchOptions {
  // An LSH bucket holding more signatures than this gives no candidates. Default 64.
  int max_bucket = 64;
  // Caps every confidence (kForeignCap for a module that is not Emscripten). Default 1.
  double confidence_cap = 1.0;
  // Whether to read the store's index into memory first (OracleStore::Preload): the matches
  // are the same either way, only the time differs. Default (nullopt): when the target has at
  // least one defined function per kPreloadSignaturesPerFunction signatures of the store, i.e.
  // when its ~11 lookups per function would cost more than reading the index.
  std::optional<bool> preload;
};
inline constexpr std::int64_t kPreloadSignaturesPerFunction = 32;

struct MatchResult {
  std::vector<Match> matches;  // in func_index order
  std::array<std::int64_t, kPassCount> per_pass{};
  Refusals refusals;
  std::int64_t defined = 0;
  // The vote of §8.3 (2): weight per emscripten_version over exact and norm hits of >= 20
  // instructions.
  std::vector<std::pair<std::string, double>> vote;
};

// Matches the defined functions of `functions` (one version's records; imports are counted
// and skipped) against `store`.
Result<MatchResult> MatchFunctions(std::span<const kb::FunctionRecord> functions,
                                   OracleStore& store, const MatchOptions& options = {});

// The naive baseline of §8.4: unique exact and norm keys only (one unmatched target per key,
// one normalised name per key), no size minimum, no other rule.
Result<MatchResult> MatchNaive(std::span<const kb::FunctionRecord> functions, OracleStore& store);

// Returns the libc++ ABI-tag hint (§8.3 (3)) from the functions' name-section names: the
// Emscripten era of the LLVM version in a tag like "[abi:ne190106]" or "B8ne190106".
VersionGuess HintFromNames(std::span<const kb::FunctionRecord> functions);

// Whether a version looks built by Emscripten, and if not, what built it.
struct Toolchain {
  bool emscripten = true;
  std::string producers;  // the producers section in one line ("" when absent)
  std::string reason;     // why it is or is not taken for Emscripten
};
// Decides from the producers section (JSON object text, as the KB stores it), a glue version
// and the functions' import, export and name-section names.
Toolchain DetectToolchain(std::string_view producers_json,
                          const std::optional<std::string>& glue_version,
                          std::span<const kb::FunctionRecord> functions);

// --- Identify (`warden oracle identify`, MCP identify_runtime) ---

struct IdentifyOptions {
  bool dry_run = false;
  MatchOptions match;
};

struct WriteOutcome {
  std::uint32_t func_index = 0;
  bool attempted = false;  // false: dry run, or already named so by the Oracle
  bool written = false;
  std::string reason;  // the gate's; "dry run" or "unchanged" when not attempted
};

struct IdentifyReport {
  std::int64_t version_id = 0;
  std::string label;
  std::string store_path;
  StoreStats store;
  Toolchain toolchain;
  bool dry_run = false;
  MatchResult result;
  std::vector<WriteOutcome> writes;  // parallel to result.matches
  std::int64_t written = 0;
  std::int64_t rejected = 0;
  std::int64_t unchanged = 0;
  VersionGuess version;
  bool version_stored = false;
  std::string note;  // for a module that is not Emscripten: what was still tried
};

// Runs the Oracle on one version: matches, infers the Emscripten version, and unless dry_run
// writes each match through Kb::OracleWrite (actor oracle:<pass>) and stores the version.
Result<IdentifyReport> Identify(kb::Kb& kb, std::int64_t version_id, OracleStore& store,
                                const IdentifyOptions& options);

// The Oracle match behind a function's current name (get_function_facts, `warden show`).
struct OracleFact {
  std::string name;
  std::string pass;
  double score = 0;
  double confidence = 0;
  std::string library;
  std::string emscripten_version;
  std::int64_t signature_id = 0;
};
// Returns the Oracle match of the symbol `stable_id` when its current name is an Oracle name
// (from the accepted oracle evidence row that wrote it), else nullopt.
Result<std::optional<OracleFact>> CurrentOracleFact(kb::Kb& kb, std::string_view stable_id);

// The report as JSON text (`--json`, MCP identify_runtime).
std::string ReportJson(const IdentifyReport& report);
// The report as aligned text for the terminal.
std::string ReportText(const IdentifyReport& report);

}  // namespace trove::warden::oracle

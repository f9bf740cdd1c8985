// Plain records the KB stores and returns (docs/warden.md §10.1, §3.2, §7.1).
//
// The ingest glue fills VersionRecord and FunctionRecord from the reader and from
// identity::ModuleIdentity; the query side returns the other structs, each holding exactly what
// one CLI command or MCP tool prints. Nothing here depends on SQLite, JSON or identity, so any
// layer may include it.
// Thread safety: values.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trove::warden::kb {

// MinHash values per function (§5.3) and opcode classes of the histogram (§5.3).
inline constexpr std::size_t kMinHashValues = 32;
inline constexpr std::size_t kHistogramClasses = 21;

// ---------------------------------------------------------------------------------------------
// Ingest input

// One `module_versions` row, as the ingest glue knows it. The KB adds `id` and `ingested_at`.
struct VersionRecord {
  // Empty: the KB picks "v<N>", N = existing versions + 1 (the next free N).
  std::string label;
  std::string wasm_path;
  std::string sha256;  // 64 lower-case hex digits of the module bytes
  std::uint64_t size = 0;
  std::uint32_t imported_count = 0;  // imported functions
  std::uint32_t defined_count = 0;   // defined functions
  std::optional<std::string> emscripten_version;
  std::optional<std::string> emscripten_version_source;
  bool shared_memory = false;
  std::uint32_t memory_count = 0;
  bool memory64 = false;
  std::string features_json = "[]";
  std::string producers_json = "{}";
  std::optional<std::string> glue_path;
  std::optional<std::string> glue_json;
};

// One `functions` row: an imported or a defined function of one version.
// For an import only func_index, is_import, import_module, import_field, type_signature and
// stable_id ("import:<module>.<field>") matter; the rest stays empty.
struct FunctionRecord {
  std::uint32_t func_index = 0;
  bool is_import = false;
  std::string import_module;
  std::string import_field;
  std::string type_signature;  // "(i32, i32) -> i32"
  std::string stable_id;       // identity::FunctionIdentity::stable_id
  int id_tier = 0;
  std::string norm_hash;        // hex of FunctionIdentity::base (32 digits)
  std::string exact_hash;       // hex of FunctionIdentity::exact (64 digits)
  std::string structural_hash;  // hex of FunctionIdentity::structural (32 digits)
  std::array<std::uint64_t, kMinHashValues> minhash{};
  std::array<std::uint32_t, kHistogramClasses> histogram{};
  std::vector<std::string> call_outs;          // sorted set of imports called, "module.field"
  std::vector<std::uint32_t> defined_callees;  // direct defined callees, call order, repeats kept
  std::uint32_t instruction_count = 0;
  std::uint64_t body_offset = 0;
  std::uint64_t body_size = 0;
  std::optional<std::string> raw_name;  // name-section name
  std::vector<std::string> export_names;
  // FunctionFacts fields (§7.1) that the §10.1 columns do not hold; stored in extra columns
  // (docs/decisions/0008-warden-kb.md).
  std::vector<std::string> call_targets;
  std::vector<std::string> referenced_strings;
  // The body's opcodes, final `end` excluded, in their binary encoding (wasm::
  // AppendOpcodeStream): about a byte per instruction, where the mnemonics as text would be
  // ten. GetFunctionFacts gives the mnemonics.
  std::string opcodes;
};

// Where a seeded name was read from (§4.3); it picks the actor of the export write (§6.3).
enum class SeedSource { kNameSection, kGlue, kExport };
inline constexpr std::size_t kSeedSourceCount = 3;

// A name recovered from the artefact, written through the gate as provenance `export`,
// confidence 1.0, actor `ingest:name-section`, `ingest:glue` or `ingest:export`.
struct SeedName {
  std::uint32_t func_index = 0;  // a function of the version being stored
  std::string name;
  SeedSource source = SeedSource::kNameSection;
};

// What StoreVersion did.
struct StoreResult {
  std::int64_t version_id = 0;
  std::string label;
  // True when a version with the same sha256 already existed: version_id and label are that
  // version's, and nothing was written.
  bool already_ingested = false;
  // Seed writes per SeedSource (indexed by its value) that the gate accepted and rejected.
  std::array<int, kSeedSourceCount> seeds_accepted{};
  std::array<int, kSeedSourceCount> seeds_rejected{};
};

// ---------------------------------------------------------------------------------------------
// Query results

// One version, for `list_versions` and `warden versions`.
struct VersionInfo {
  std::int64_t id = 0;
  std::string label;
  std::optional<std::string> emscripten_version;
  std::optional<std::string> emscripten_version_source;
  std::int64_t functions = 0;  // imported + defined
  std::int64_t imported = 0;
  std::int64_t defined = 0;
  bool shared_memory = false;
  std::int64_t memory_count = 0;
  bool memory64 = false;
  std::string sha256;
  std::uint64_t size = 0;
  std::string wasm_path;
  std::optional<std::string> glue_path;
  std::string ingested_at;  // YYYY-MM-DDTHH:MM:SS.mmmZ
  // The `target_features` and `producers` custom sections as stored (VersionRecord's forms):
  // a JSON array of "+name" strings, a JSON object of field -> [[name, version], ...].
  std::string features_json = "[]";
  std::string producers_json = "{}";
};

// Symbol coverage of one version (`coverage`, `warden coverage`). Only defined functions
// count; a function is named when its symbol has a name.
struct Coverage {
  std::int64_t defined = 0;
  std::int64_t named = 0;
  double coverage_pct = 0.0;  // named / defined * 100; 0.0 when nothing is defined
  std::int64_t human_named = 0;
  std::int64_t export_named = 0;
  std::int64_t oracle_named = 0;
  std::int64_t diff_carry_named = 0;
  std::int64_t agent_named = 0;
  std::int64_t locked = 0;
  std::optional<double> mean_confidence;  // over named functions; null when none is named
  // Named functions whose name is a placeholder, `sub_<hex>` (IsPlaceholderName): the offline
  // backend's last resort, counted in `named` but apart from real names, so that a coverage of
  // 100 % cannot hide them (docs/decisions/0058-warden-demo.md).
  std::int64_t placeholder_named = 0;
  std::int64_t real_named = 0;     // named - placeholder_named
  double real_coverage_pct = 0.0;  // real_named / defined * 100; 0.0 when nothing is defined
};

// Whether `name` is a placeholder name: "sub_" followed by one or more hex digits (the
// offline backend's sub_<hex6>, and the IDA/Ghidra convention sub_<address>).
bool IsPlaceholderName(std::string_view name);

// A `list_functions` query. Filters beyond the MCP ones serve `warden funcs`.
struct FunctionQuery {
  std::int64_t version_id = 0;
  bool include_imports = false;
  // Keep only functions without a name.
  bool unnamed_only = false;
  // Keep unnamed functions and those whose confidence is below this value (`--below C`).
  std::optional<double> below;
  // Keep only functions whose current provenance is this label.
  std::optional<std::string> provenance;
  // Page size, 1..1000; none returns every row and a null next_cursor.
  std::optional<int> limit;
  // The next_cursor of the previous page of the same query.
  std::optional<std::string> cursor;
};

// One `list_functions` row. provenance, confidence and locked are null/false when unnamed.
struct FunctionRow {
  std::uint32_t index = 0;
  std::string stable_id;
  std::optional<std::string> type;
  std::optional<std::string> name;
  std::optional<std::string> provenance;
  std::optional<double> confidence;
  bool locked = false;
  bool is_import = false;
};

// Kb::DefinedFunctionsForDiff: defined functions and their symbols, parallel vectors.
struct AnnotatedFunctions {
  std::vector<FunctionRecord> records;
  std::vector<FunctionRow> symbols;
};

struct FunctionPage {
  std::vector<FunctionRow> functions;
  std::optional<std::string> next_cursor;  // opaque; null on the last page
};

// The FunctionFacts of §7.1, exactly the `get_function_facts` fields.
struct FunctionFacts {
  std::uint32_t func_index = 0;
  std::string stable_id;
  std::string type_signature;
  std::vector<std::string> call_targets;
  std::vector<std::string> referenced_strings;
  std::optional<std::string> raw_name;
  std::vector<std::string> instruction_mnemonics;
  bool is_exported = false;
};

// Everything stored about one function of one version (`warden show`).
struct StoredFunction {
  std::int64_t version_id = 0;
  FunctionRecord record;
};

// One evidence row (§6.4), as `get_symbol.evidence` lists it.
struct EvidenceEntry {
  std::int64_t id = 0;
  std::string at;
  std::string actor;
  std::string provenance;
  std::optional<std::string> name;
  std::optional<std::string> summary;
  std::optional<double> confidence;  // null when the attempt's confidence was NaN
  bool accepted = false;
  std::string reason;
  std::string details_json;  // a JSON object
};

// The `get_symbol` object plus the bookkeeping columns.
struct SymbolRecord {
  std::string stable_id;
  std::optional<std::string> name;
  std::optional<std::string> summary;
  std::optional<std::string> type_signature;
  std::string provenance;
  std::string actor;
  double confidence = 0.0;
  bool locked = false;
  std::string created_at;
  std::string updated_at;
  std::vector<EvidenceEntry> evidence;  // oldest first
};

// One `diffs` row (docs/warden.md §9.1): the report of the diff of one version pair, as JSON,
// and its Markdown changelog. A newer diff of the same pair replaces the older.
struct DiffRecord {
  std::int64_t id = 0;
  std::int64_t from_version = 0;
  std::int64_t to_version = 0;
  std::string created_at;  // YYYY-MM-DDTHH:MM:SS.mmmZ
  std::string params_json;
  std::string report_json;   // empty in Kb::ListDiffs
  std::string changelog_md;  // empty in Kb::ListDiffs
};

}  // namespace trove::warden::kb

// The JSON objects WARDEN shows to machines (docs/warden.md §3.2, §7.1): the objects of the
// MCP tools, which `warden <command> --json` prints too, so the CLI and MCP cannot drift.
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "warden/kb/records.h"

namespace trove::warden::views {

using Json = nlohmann::ordered_json;

// list_versions: one object per version.
Json VersionJson(const kb::VersionInfo& v);
Json VersionsJson(const std::vector<kb::VersionInfo>& versions);
// coverage.
Json CoverageJson(const kb::Coverage& c);
// list_functions: one row.
Json FunctionRowJson(const kb::FunctionRow& row);
Json FunctionRowsJson(const std::vector<kb::FunctionRow>& rows);
// get_function_facts: the FunctionFacts object, or null.
Json FactsJson(const std::optional<kb::FunctionFacts>& facts);
// get_symbol: the symbol with its evidence trail, or null.
Json SymbolJson(const std::optional<kb::SymbolRecord>& symbol);
Json EvidenceJson(const kb::EvidenceEntry& e);

// The module's toolchain metadata from its custom sections (wasm/custom_sections.h), as
// `versions`, `show` and `coverage` show them: {"producers": {"processed-by": [["rustc",
// "1.76.0"], ...], ...}, "target_features": ["+simd128", ...]}; a stored text that does not
// parse shows as null.
Json ToolchainJson(const kb::VersionInfo& v);
// One line each for text output: "Rust, rustc 1.76.0-nightly, walrus 0.20.3" and
// "+simd128 +atomics"; "-" when the module has none.
std::string ProducersText(const kb::VersionInfo& v);
std::string FeaturesText(const kb::VersionInfo& v);

// Formats a confidence with exactly three decimals ("0.350"), as text output and exports do.
std::string Confidence3(double value);

}  // namespace trove::warden::views

// WARDEN exports (docs/warden.md §10.2): byte-deterministic text for a version's current
// annotations. UTF-8, LF line endings, a final newline, no timestamps or absolute paths,
// function-index order, confidences with exactly three decimals.
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trove::warden::exporter {

// One defined function as the exports see it.
struct ExportFunction {
  std::uint32_t index = 0;
  std::string stable_id;
  std::string type_signature;  // "(i32, i32) -> i32"
  std::optional<std::string> name;
  std::optional<std::string> summary;
  std::optional<std::string> provenance;
  std::optional<double> confidence;
  bool locked = false;
  std::uint64_t body_offset = 0;
  std::uint32_t instruction_count = 0;
};

struct ExportInput {
  std::string label;
  std::optional<std::string> emscripten_version;
  std::vector<ExportFunction> functions;  // defined functions, in index order
};

enum class Format { kHeaders, kPseudo, kKbText, kGhidra };

// Parses a --format value: headers, pseudo, kb-text, ghidra.
Result<Format> ParseFormat(std::string_view text);

// A C header declaring every defined function with wasm-level types.
std::string ExportHeaders(const ExportInput& input);
// Pseudo-C per function: name, type signature, summary, provenance/confidence and the lifted
// body from `lifted` (LiftModule). When `lifted` is null each body is a note with `why` and
// the instruction count.
std::string ExportPseudo(const ExportInput& input,
                         const std::map<std::uint32_t, std::string>* lifted, std::string_view why);
// The stable columnar dump: "# warden kb-text 1 <label>", then tab-separated rows.
std::string ExportKbText(const ExportInput& input);
// A Python script for Ghidra's console that renames functions by index or body offset.
std::string ExportGhidra(const ExportInput& input);

// Returns a C identifier for `name`: characters outside [A-Za-z0-9_] become '_', a leading
// digit gets a '_' prefix. Empty or null names give wasm_func_<index>.
std::string CIdentifier(const std::optional<std::string>& name, std::uint32_t index);

}  // namespace trove::warden::exporter

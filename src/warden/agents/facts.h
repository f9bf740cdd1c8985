// FunctionFacts (docs/warden.md §7.1): the grounded, mechanically derived facts about one
// defined function that an agent backend may use, and nothing else (the original's
// "hallucination constraint"). The first eight fields are exactly those `get_function_facts`
// returns; the rest feed the scheduler (§7.2) and prompts.
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trove::warden::identity {
struct FunctionIdentity;
}  // namespace trove::warden::identity

namespace trove::warden::agents {

// Prompts keep the first this many mnemonics (§7.1); MCP returns them all.
inline constexpr std::size_t kPromptMnemonics = 2000;

struct FunctionFacts {
  // --- §7.1, exactly as get_function_facts returns them ---
  std::uint32_t func_index = 0;
  std::string stable_id;
  std::string type_signature;                   // "(i32, i32) -> i32"
  std::vector<std::string> call_targets;        // "module.field" imports and "<indirect>"
  std::vector<std::string> referenced_strings;  // first-occurrence order, deduplicated
  std::optional<std::string> raw_name;          // name-section hint
  std::vector<std::string> instruction_mnemonics;
  bool is_exported = false;

  // --- beyond §7.1 ---
  std::vector<std::string> export_names;  // in export-section order
  // Direct calls to defined functions (call, return_call), deduplicated in first-occurrence
  // order: the edges of the call graph the pass is scheduled over.
  std::vector<std::uint32_t> defined_callees;
};

// The current name of one direct defined callee, carried in prompts beside the facts (§7.2).
struct CalleeName {
  std::uint32_t func_index = 0;
  std::string name;
};

// Returns the facts of `function` (defined_callees deduplicated, first occurrence kept).
FunctionFacts FactsFromIdentity(const identity::FunctionIdentity& function);

// Returns the §7.1 object as compact JSON: exactly the eight fields of get_function_facts, in
// table order, with all mnemonics (MCP returns them complete).
std::string FunctionFactsToJson(const FunctionFacts& facts);

// Returns the first 6 hex digits of the stable_id base (the digits after "w1:"), or, for an id
// without them, 6 hex digits of its SHA-256 so that the result is still deterministic.
std::string StableIdHex6(const std::string& stable_id);

}  // namespace trove::warden::agents

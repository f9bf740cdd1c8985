// Contract suggestions: the AST heuristics behind `kodo.annotate` (docs/kodo.md §3.4) and
// `kodoc annotate` (§2.1). Both look only at the parsed module (no type check) and skip `main`.
//
// The two entry points differ as upstream's do:
//  * AnnotateForAgent (MCP): two heuristics (a parameter used as the right operand of `/` or
//    `%`, a parameter passed as the index of list_get/list_set/list_remove); functions that
//    already have a contract count as annotated; functions with neither a contract nor a
//    suggestion are listed with their exact source text for the agent to review.
//  * SuggestContracts (CLI): five heuristics (the two above, a parameter compared with 0, a
//    recursive function with a base-case guard, a parameter returned unchanged), run on every
//    function except main, skipping suggestions an existing `requires` already covers.
//
// Lines are 1-based, counted as upstream counts them: the number of '\n' bytes before the
// function's `fn` keyword, plus one.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kodo/ast/ast.h"

namespace trove::kodo::annotate {

// A `requires` suggestion of the MCP tool. kind is always "requires" there.
struct AgentSuggestion {
  std::string function;
  std::uint32_t line = 0;
  std::string expression;  // "b != 0", "i >= 0"
  std::string reason;      // "parameter `b` used as divisor"
};

struct AgentParam {
  std::string name;
  std::string type;  // the Rust Debug of the type expression: `Named("Int")`
};

// A function without contracts for which no heuristic fired.
struct UncoveredFunction {
  std::string name;
  std::uint32_t line = 0;
  std::vector<AgentParam> params;
  std::string return_type;  // Rust Debug: `Named("Int")`, `Unit`
  std::string source;       // the exact text of the function's span (`fn` to `}`)
};

struct AgentAnnotation {
  std::vector<AgentSuggestion> suggestions;
  std::vector<UncoveredFunction> uncovered;
  std::uint32_t total_functions = 0;    // free functions except main
  std::uint32_t already_annotated = 0;  // of those, with a requires or ensures clause
};

// Runs the MCP heuristics over the free functions of `module`, in source order. `source` is
// the text `module` was parsed from (for lines and function sources).
AgentAnnotation AnnotateForAgent(const ast::Module& module, std::string_view source);

enum class ContractKind : std::uint8_t { kRequires, kEnsures };

// A suggestion of `kodoc annotate`.
struct CliSuggestion {
  std::string function;
  std::uint32_t line = 0;
  ContractKind kind = ContractKind::kRequires;
  std::string expression;
  std::string reason;
  // Whether a solver confirmed the suggestion. Always false here: upstream prints true without
  // checking anything; Trove verifies contracts only from the contracts phase on (Z3), and says
  // so rather than claim it (docs/decisions/0015-kodo-tools-cli-mcp.md).
  bool verified = false;
};

// Runs the five CLI heuristics over the free functions of `module` except main.
std::vector<CliSuggestion> SuggestContracts(const ast::Module& module, std::string_view source);

// Returns the 1-based line of byte `offset` in `source` (offsets past the end are clamped).
std::uint32_t LineOf(std::string_view source, std::uint32_t offset);

}  // namespace trove::kodo::annotate

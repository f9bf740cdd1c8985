// The fixed tables of docs/librarian.md §4.2-4.3: depths, intent types, pack-type weights, pack
// ids.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "base/hash.h"
#include "librarian/query/query.h"

namespace trove::librarian::query {
namespace {

struct IntentRow {
  IntentType type;
  std::string_view name;
  // Words or phrases (space-separated words) that select the type when inferred.
  std::vector<std::string_view> cues;
  // × function_context, module_context (docs/librarian.md §4.2; pattern, decision, change_impact
  // and similar_tasks packs are not built in this version).
  double function_weight;
  double module_weight;
};

const std::vector<IntentRow>& IntentRows() {
  // In the spec's order: inference takes the first row with a cue in the intent.
  static const std::vector<IntentRow> kRows = {
      {IntentType::kDebug,
       "debug",
       {"bug", "fix", "error", "crash", "fail", "exception", "stack trace", "segfault", "leak"},
       1.3,
       0.9},
      {IntentType::kImpact,
       "impact",
       {"impact", "affect", "break", "depends on", "dependents", "who calls", "callers"},
       1.0,
       1.0},
      {IntentType::kRefactor,
       "refactor",
       {"refactor", "rename", "extract", "move", "clean up", "split", "deduplicate"},
       1.1,
       1.0},
      {IntentType::kSecurity,
       "security",
       {"security", "auth", "vulnerability", "injection", "secret", "token", "permission",
        "sanitize"},
       1.2,
       1.0},
      {IntentType::kTest,
       "test",
       {"test", "tests", "coverage", "assert", "mock", "fixture"},
       1.2,
       0.9},
      {IntentType::kDocument,
       "document",
       {"document", "docs", "docstring", "readme", "comment"},
       1.0,
       1.3},
      {IntentType::kNavigate,
       "navigate",
       {"where is", "find", "locate", "defined", "definition of"},
       1.3,
       1.2},
      {IntentType::kUnderstand,
       "understand",
       {"how does", "what is", "why", "explain", "overview"},
       1.1,
       1.2},
      {IntentType::kGeneral, "general", {}, 1.0, 1.0},
  };
  return kRows;
}

const IntentRow& RowFor(IntentType type) {
  for (const IntentRow& row : IntentRows()) {
    if (row.type == type) return row;
  }
  return IntentRows().back();
}

// " word word ... " of the intent's lower-cased alphanumeric runs, for whole-word matching.
std::string NormalizedWords(std::string_view text) {
  std::string out = " ";
  bool in_word = false;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || u >= 0x80) {
      out.push_back(static_cast<char>(std::tolower(u)));
      in_word = true;
    } else if (in_word) {
      out.push_back(' ');
      in_word = false;
    }
  }
  if (in_word) out.push_back(' ');
  return out;
}

}  // namespace

std::string_view DepthName(Depth depth) {
  switch (depth) {
    case Depth::kL0:
      return "L0";
    case Depth::kL1:
      return "L1";
    case Depth::kL2:
      return "L2";
    case Depth::kL3:
      return "L3";
  }
  return "L1";
}

std::optional<Depth> ParseDepth(std::string_view name) {
  for (Depth d : {Depth::kL0, Depth::kL1, Depth::kL2, Depth::kL3}) {
    if (DepthName(d) == name) return d;
  }
  return std::nullopt;
}

DepthBudget BudgetFor(Depth depth) {
  switch (depth) {
    case Depth::kL0:
      return {2000, 4};
    case Depth::kL1:
      return {10000, 8};
    case Depth::kL2:
      return {30000, 12};
    case Depth::kL3:
      return {80000, 20};
  }
  return {10000, 8};
}

std::string_view IntentTypeName(IntentType type) { return RowFor(type).name; }

std::optional<IntentType> ParseIntentType(std::string_view name) {
  for (const IntentRow& row : IntentRows()) {
    if (row.name == name) return row.type;
  }
  return std::nullopt;
}

IntentType InferIntentType(std::string_view intent) {
  const std::string words = NormalizedWords(intent);
  for (const IntentRow& row : IntentRows()) {
    for (std::string_view cue : row.cues) {
      if (words.find(" " + std::string(cue) + " ") != std::string::npos) return row.type;
    }
  }
  return IntentType::kGeneral;
}

std::string_view PackTypeName(PackType type) {
  return type == PackType::kFunctionContext ? "function_context" : "module_context";
}

double PackTypeWeight(PackType type, Depth depth, IntentType intent) {
  // docs/librarian.md §4.3 (function_context, module_context rows).
  static constexpr std::array<double, 4> kFunctionByDepth = {1.2, 1.0, 1.0, 0.9};
  static constexpr std::array<double, 4> kModuleByDepth = {0.8, 1.0, 1.0, 1.0};
  const auto d = static_cast<std::size_t>(depth);
  const IntentRow& row = RowFor(intent);
  return type == PackType::kFunctionContext ? kFunctionByDepth[d] * row.function_weight
                                            : kModuleByDepth[d] * row.module_weight;
}

std::string PackId(PackType type, std::string_view target_id) {
  std::string text(PackTypeName(type));
  text.push_back('\n');
  text.append(target_id);
  return "pk_" + base::Sha256Hex(text).substr(0, 16);
}

std::size_t EstimateTokens(std::string_view text) { return (text.size() + 3) / 4; }

std::string_view StageStatusName(StageStatus status) {
  switch (status) {
    case StageStatus::kRan:
      return "ran";
    case StageStatus::kSkipped:
      return "skipped";
    case StageStatus::kDegraded:
      return "degraded";
  }
  return "ran";
}

}  // namespace trove::librarian::query

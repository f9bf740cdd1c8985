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
  // × function_context, module_context (docs/librarian.md §4.2; the other four pack types'
  // weights are in PackTypeWeight).
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
  switch (type) {
    case PackType::kFunctionContext:
      return "function_context";
    case PackType::kModuleContext:
      return "module_context";
    case PackType::kPatternContext:
      return "pattern_context";
    case PackType::kDecisionContext:
      return "decision_context";
    case PackType::kChangeImpact:
      return "change_impact";
    case PackType::kSimilarTasks:
      return "similar_tasks";
  }
  return "function_context";
}

std::optional<PackType> ParsePackType(std::string_view name) {
  for (PackType t : kAllPackTypes) {
    if (PackTypeName(t) == name) return t;
  }
  return std::nullopt;
}

double PackTypeWeight(PackType type, Depth depth, IntentType intent) {
  // docs/librarian.md §4.3 / spec §3.2.2: pack-type weight by depth.
  static constexpr std::array<std::array<double, 4>, 6> kByDepth = {{
      {1.2, 1.0, 1.0, 0.9},  // function_context
      {0.8, 1.0, 1.0, 1.0},  // module_context
      {0.5, 0.8, 1.0, 1.1},  // pattern_context
      {0.4, 0.7, 1.0, 1.2},  // decision_context
      {0.3, 0.7, 1.0, 1.3},  // change_impact
      {0.3, 0.6, 0.9, 1.1},  // similar_tasks
  }};
  // Spec §3.2.1: intent weights of the four deeper pack types (pattern, decision,
  // change_impact, similar_tasks); function and module weights are in IntentRows.
  struct Deep {
    IntentType type;
    std::array<double, 4> w;
  };
  static constexpr std::array<Deep, 9> kDeep = {{
      {IntentType::kDebug, {0.8, 0.6, 1.0, 1.2}},
      {IntentType::kImpact, {0.7, 0.9, 1.5, 0.8}},
      {IntentType::kRefactor, {1.2, 1.0, 1.3, 0.9}},
      {IntentType::kSecurity, {1.1, 1.0, 1.0, 0.8}},
      {IntentType::kTest, {1.0, 0.6, 1.1, 1.0}},
      {IntentType::kDocument, {1.0, 1.2, 0.6, 0.6}},
      {IntentType::kNavigate, {0.5, 0.5, 0.5, 0.5}},
      {IntentType::kUnderstand, {1.0, 1.0, 0.7, 0.8}},
      {IntentType::kGeneral, {1.0, 1.0, 1.0, 1.0}},
  }};
  const auto d = static_cast<std::size_t>(depth);
  const auto t = static_cast<std::size_t>(type);
  const IntentRow& row = RowFor(intent);
  double w = 1;
  if (type == PackType::kFunctionContext) {
    w = row.function_weight;
  } else if (type == PackType::kModuleContext) {
    w = row.module_weight;
  } else {
    for (const Deep& deep : kDeep) {
      if (deep.type == intent) w = deep.w[t - 2];
    }
  }
  return kByDepth[t][d] * w;
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

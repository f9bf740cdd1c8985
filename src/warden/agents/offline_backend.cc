#include "warden/agents/offline_backend.h"

#include <fmt/core.h>

#include <set>

namespace trove::warden::agents {

namespace {

constexpr std::size_t kSlugWords = 4;
constexpr std::size_t kSlugChars = 32;
constexpr std::size_t kFieldChars = 48;
constexpr std::size_t kSummaryListItems = 8;

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Returns `text` with every run of characters outside [A-Za-z0-9] replaced by one '_', no '_'
// at either end, cut to `max_chars` (and again trimmed of a trailing '_').
std::string IdentifierPiece(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (char c : text) {
    if (IsAsciiAlnum(c)) {
      out.push_back(c);
    } else if (!out.empty() && out.back() != '_') {
      out.push_back('_');
    }
    if (out.size() >= max_chars) break;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

bool IsCall(std::string_view m) { return StartsWith(m, "call") || StartsWith(m, "return_call"); }
bool IsLoad(std::string_view m) { return Contains(m, ".load"); }
bool IsStore(std::string_view m) { return Contains(m, ".store"); }
bool IsConst(std::string_view m) { return m.size() > 6 && m.substr(m.size() - 6) == ".const"; }

struct Shape {
  bool leaf = true;
  int loads = 0;
  int stores = 0;
  bool only_constants = true;  // const, return, nop, end
  int constants = 0;
};

Shape ShapeOf(const FunctionFacts& facts) {
  Shape shape;
  shape.leaf = facts.call_targets.empty() && facts.defined_callees.empty();
  for (const std::string& m : facts.instruction_mnemonics) {
    if (IsCall(m)) shape.leaf = false;
    if (IsLoad(m)) ++shape.loads;
    if (IsStore(m)) ++shape.stores;
    if (IsConst(m)) {
      ++shape.constants;
    } else if (m != "return" && m != "nop" && m != "end") {
      shape.only_constants = false;
    }
  }
  return shape;
}

// The one import a function forwards to: exactly one distinct import target and no indirect
// call. Returns its "module.field", or empty.
std::string SingleImport(const FunctionFacts& facts) {
  std::string found;
  for (const std::string& target : facts.call_targets) {
    if (target == "<indirect>") return {};
    if (!found.empty() && found != target) return {};
    found = target;
  }
  return found;
}

std::string FieldOf(const std::string& target) {
  std::size_t dot = target.find('.');
  return dot == std::string::npos ? target : target.substr(dot + 1);
}

std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < kSummaryListItems; ++i) {
    if (i > 0) out += ", ";
    out += items[i];
  }
  if (items.size() > kSummaryListItems) {
    out += fmt::format(" and {} more", items.size() - kSummaryListItems);
  }
  return out;
}

// The deterministic summary: the evidence behind the name, then the call context. It quotes
// nothing, so the verifier's literal check has nothing to doubt.
std::string Summary(const FunctionFacts& facts, std::span<const CalleeName> callees,
                    std::string_view evidence) {
  std::string out = fmt::format("Offline heuristic name from {}. Signature {}; {} instructions",
                                evidence, facts.type_signature, facts.instruction_mnemonics.size());
  if (!facts.referenced_strings.empty()) {
    out += fmt::format("; references {} string{}", facts.referenced_strings.size(),
                       facts.referenced_strings.size() == 1 ? "" : "s");
  }
  if (!facts.call_targets.empty()) out += "; calls imports " + JoinList(facts.call_targets);
  if (!callees.empty()) {
    std::vector<std::string> names;
    for (const CalleeName& callee : callees) names.push_back(callee.name);
    out += "; calls " + JoinList(names);
  }
  if (!facts.export_names.empty()) out += "; exported as " + JoinList(facts.export_names);
  out += ".";
  // Export and import names are arbitrary bytes: a '"' in one must not read as a quotation.
  for (char& c : out) {
    if (c == '"') c = '\'';
  }
  return out;
}

}  // namespace

std::string SlugOfString(std::string_view text) {
  std::string out;
  std::size_t words = 0;
  std::size_t i = 0;
  while (i < text.size() && words < kSlugWords) {
    while (i < text.size() && !IsAsciiAlnum(text[i])) ++i;
    std::size_t start = i;
    while (i < text.size() && IsAsciiAlnum(text[i])) ++i;
    if (i - start < 2) continue;
    std::string word;
    for (std::size_t k = start; k < i; ++k) word.push_back(AsciiLower(text[k]));
    if (out.size() + 1 >= kSlugChars) break;
    std::size_t room = kSlugChars - out.size() - (out.empty() ? 0 : 1);
    if (!out.empty()) out.push_back('_');
    out += word.substr(0, room);
    ++words;
  }
  return out;
}

Proposal OfflineProposal(const FunctionFacts& facts, std::span<const CalleeName> callees) {
  const std::string hex6 = StableIdHex6(facts.stable_id);
  Proposal proposal;

  // 1. Referenced strings: the first one that yields a slug.
  for (std::size_t i = 0; i < facts.referenced_strings.size(); ++i) {
    std::string slug = SlugOfString(facts.referenced_strings[i]);
    if (slug.empty()) continue;
    proposal.name = fmt::format("str_{}_{}", slug, hex6);
    proposal.confidence = kOfflineGroundedConfidence;
    proposal.cited_strings.push_back(facts.referenced_strings[i]);
    proposal.summary = Summary(facts, callees, fmt::format("referenced string {}", i + 1));
    return proposal;
  }

  // 2. A single forwarded import.
  std::string import = SingleImport(facts);
  std::string field = IdentifierPiece(FieldOf(import), kFieldChars);
  if (!field.empty()) {
    proposal.name = fmt::format("wrap_{}_{}", field, hex6);
    proposal.confidence = kOfflineGroundedConfidence;
    proposal.summary = Summary(facts, callees, "its only import call " + import);
    return proposal;
  }

  // 3. Shape of a leaf; 4. nothing.
  proposal.confidence = kOfflineShapeConfidence;
  Shape shape = ShapeOf(facts);
  std::string_view prefix = "sub";
  std::string_view evidence = "no grounding evidence";
  if (shape.leaf && shape.loads == 1 && shape.stores == 0) {
    prefix = "get";
    evidence = "a leaf with a single load";
  } else if (shape.leaf && shape.stores == 1 && shape.loads == 0) {
    prefix = "set";
    evidence = "a leaf with a single store";
  } else if (shape.leaf && shape.only_constants && shape.constants > 0) {
    prefix = "const";
    evidence = "a leaf returning constants";
  }
  proposal.name = fmt::format("{}_{}", prefix, hex6);
  proposal.summary = Summary(facts, callees, evidence);
  return proposal;
}

Result<BackendReply> OfflineBackend::Propose(const FunctionFacts& facts,
                                             std::span<const CalleeName> callees,
                                             base::Cancellation& cancel) {
  if (cancel.requested()) return Status::Cancelled("agent pass cancelled");
  BackendReply reply;
  reply.proposal = OfflineProposal(facts, callees);
  return reply;
}

}  // namespace trove::warden::agents

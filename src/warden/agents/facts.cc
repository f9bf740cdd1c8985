#include "warden/agents/facts.h"

#include <nlohmann/json.hpp>
#include <set>

#include "base/hash.h"
#include "warden/identity/identity.h"

namespace trove::warden::agents {

FunctionFacts FactsFromIdentity(const identity::FunctionIdentity& function) {
  FunctionFacts facts;
  facts.func_index = function.func_index;
  facts.stable_id = function.stable_id;
  facts.type_signature = function.type_signature;
  facts.call_targets = function.call_targets;
  facts.referenced_strings = function.referenced_strings;
  facts.raw_name = function.raw_name;
  std::vector<std::string_view> mnemonics = function.InstructionMnemonics();
  facts.instruction_mnemonics.assign(mnemonics.begin(), mnemonics.end());
  facts.is_exported = function.is_exported;
  facts.export_names = function.export_names;
  std::set<std::uint32_t> seen;
  for (wasm::FuncIndex callee : function.defined_callees) {
    if (seen.insert(callee).second) facts.defined_callees.push_back(callee);
  }
  return facts;
}

std::string FunctionFactsToJson(const FunctionFacts& facts) {
  nlohmann::ordered_json doc;
  doc["func_index"] = facts.func_index;
  doc["stable_id"] = facts.stable_id;
  doc["type_signature"] = facts.type_signature;
  doc["call_targets"] = facts.call_targets;
  doc["referenced_strings"] = facts.referenced_strings;
  doc["raw_name"] = facts.raw_name ? nlohmann::ordered_json(*facts.raw_name) : nullptr;
  doc["instruction_mnemonics"] = facts.instruction_mnemonics;
  doc["is_exported"] = facts.is_exported;
  return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

namespace {
bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
}  // namespace

std::string StableIdHex6(const std::string& stable_id) {
  std::size_t colon = stable_id.find(':');
  if (colon != std::string::npos && stable_id.size() >= colon + 7) {
    std::string hex = stable_id.substr(colon + 1, 6);
    bool all_hex = true;
    for (char c : hex) all_hex = all_hex && IsLowerHex(c);
    if (all_hex) return hex;
  }
  return base::Sha256Hex(stable_id).substr(0, 6);
}

}  // namespace trove::warden::agents

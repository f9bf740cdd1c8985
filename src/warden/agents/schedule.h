// The order of an agent pass (docs/warden.md §7.2, Decision): layers of the condensed direct
// call graph, callees before callers. Every strongly connected component (Tarjan) sits in one
// layer: 0 for components calling no other component, else one more than the highest layer
// among the components it calls. Within a layer, functions sort by their number of
// call_targets, then by index.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "warden/agents/facts.h"

namespace trove::warden::agents {

// Returns positions into `functions` in pass order. Edges are defined_callees; callees absent
// from `functions` (and self-calls) are ignored. Deterministic for equal input.
std::vector<std::size_t> ScheduleOrder(std::span<const FunctionFacts> functions);

// Returns the layer of each function (same indexing as `functions`).
std::vector<std::size_t> CallGraphLayers(std::span<const FunctionFacts> functions);

}  // namespace trove::warden::agents

#include "warden/agents/schedule.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>

namespace trove::warden::agents {

namespace {

constexpr std::size_t kUnvisited = std::numeric_limits<std::size_t>::max();

// Adjacency lists over positions, self-loops and unknown callees dropped.
std::vector<std::vector<std::size_t>> Edges(std::span<const FunctionFacts> functions) {
  std::unordered_map<std::uint32_t, std::size_t> position;
  position.reserve(functions.size());
  for (std::size_t i = 0; i < functions.size(); ++i) position.emplace(functions[i].func_index, i);
  std::vector<std::vector<std::size_t>> edges(functions.size());
  for (std::size_t i = 0; i < functions.size(); ++i) {
    for (std::uint32_t callee : functions[i].defined_callees) {
      auto it = position.find(callee);
      if (it != position.end() && it->second != i) edges[i].push_back(it->second);
    }
  }
  return edges;
}

// Tarjan's algorithm without recursion (a long call chain would overflow the stack). Returns
// the component of each node; components are numbered in the order Tarjan completes them,
// which is a reverse topological order: every component a node reaches has a smaller number.
std::vector<std::size_t> Components(const std::vector<std::vector<std::size_t>>& edges) {
  const std::size_t n = edges.size();
  std::vector<std::size_t> index(n, kUnvisited), low(n, 0), component(n, kUnvisited);
  std::vector<bool> on_stack(n, false);
  std::vector<std::size_t> stack;
  struct Frame {
    std::size_t node;
    std::size_t next_edge;
  };
  std::vector<Frame> frames;
  std::size_t counter = 0;
  std::size_t components = 0;
  for (std::size_t root = 0; root < n; ++root) {
    if (index[root] != kUnvisited) continue;
    frames.push_back({root, 0});
    index[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!frames.empty()) {
      Frame& frame = frames.back();
      std::size_t v = frame.node;
      if (frame.next_edge < edges[v].size()) {
        std::size_t w = edges[v][frame.next_edge++];
        if (index[w] == kUnvisited) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = true;
          frames.push_back({w, 0});  // invalidates `frame`
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        while (true) {
          std::size_t w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component[w] = components;
          if (w == v) break;
        }
        ++components;
      }
      frames.pop_back();
      if (!frames.empty()) {
        std::size_t parent = frames.back().node;
        low[parent] = std::min(low[parent], low[v]);
      }
    }
  }
  return component;
}

}  // namespace

std::vector<std::size_t> CallGraphLayers(std::span<const FunctionFacts> functions) {
  std::vector<std::vector<std::size_t>> edges = Edges(functions);
  std::vector<std::size_t> component = Components(edges);
  std::size_t count = 0;
  for (std::size_t c : component) count = std::max(count, c + 1);
  // Members of each component, to visit components in completion order.
  std::vector<std::vector<std::size_t>> members(count);
  for (std::size_t i = 0; i < component.size(); ++i) members[component[i]].push_back(i);
  std::vector<std::size_t> component_layer(count, 0);
  for (std::size_t c = 0; c < count; ++c) {
    std::size_t layer = 0;
    for (std::size_t v : members[c]) {
      for (std::size_t w : edges[v]) {
        if (component[w] != c) layer = std::max(layer, component_layer[component[w]] + 1);
      }
    }
    component_layer[c] = layer;
  }
  std::vector<std::size_t> layers(functions.size());
  for (std::size_t i = 0; i < functions.size(); ++i) layers[i] = component_layer[component[i]];
  return layers;
}

std::vector<std::size_t> ScheduleOrder(std::span<const FunctionFacts> functions) {
  std::vector<std::size_t> layers = CallGraphLayers(functions);
  std::vector<std::size_t> order(functions.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (layers[a] != layers[b]) return layers[a] < layers[b];
    std::size_t ta = functions[a].call_targets.size();
    std::size_t tb = functions[b].call_targets.size();
    if (ta != tb) return ta < tb;
    if (functions[a].func_index != functions[b].func_index) {
      return functions[a].func_index < functions[b].func_index;
    }
    return a < b;
  });
  return order;
}

}  // namespace trove::warden::agents

// The knowledge-maps, method-packs, provenance and identity resources (docs/librarian.md §3.5;
// decision 0063). file-tree and symbols are in librarian_tools.cc, which routes the
// other four kinds here. knowledge-maps is read as three contents of one URI: the JSON view, the
// directory dependency graph as DOT (text/vnd.graphviz) and, when Graphviz's `dot` is available
// and its circuit breaker closed, the same graph as SVG (image/svg+xml), rendered by a
// subprocess with a time limit (decision 0052's pattern).
//
// Thread safety: functions over one store connection owned by the calling thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "mcp/server.h"

namespace trove::librarian::store {
class Store;
}

namespace trove::librarian::server {

inline constexpr std::string_view kExtraResourceKinds[] = {"knowledge-maps", "method-packs",
                                                           "provenance", "identity"};
bool IsExtraResourceKind(std::string_view kind);
// Title and description of an extra kind, for the resource list.
std::string ExtraResourceTitle(std::string_view kind);
std::string ExtraResourceDescription(std::string_view kind);

struct ExtraResourceRequest {
  std::string uri;       // as read
  std::string base_uri;  // librarian://<workspace>/<kind>, for nextUri
  std::string kind;
  std::string workspace_id;
  std::string root;         // canonical
  std::int64_t offset = 0;  // from the cursor
  std::size_t limit = 1000;
};

// Reads one of kExtraResourceKinds from `store`. `ctx` gives the "graphviz" circuit breaker.
Result<std::vector<mcp::ResourceContents>> ReadExtraResource(store::Store& store,
                                                             const ExtraResourceRequest& request,
                                                             mcp::CallContext& ctx);

}  // namespace trove::librarian::server

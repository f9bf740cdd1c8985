// Bundle: `get_context_pack_bundle`'s engine (docs/librarian.md §3.8; decision
// 0063). Runs the query pipeline with `topic` as intent under the bundle type's profile:
//
//   bundleType     depth  intentType  pack types                                  maxTokens
//   task           L1     inferred    function, module, pattern, similar_tasks    10,000
//   review         L2     refactor    change_impact, pattern, decision, function, 30,000
//                                     module
//   debug          L2     debug       function, change_impact, similar_tasks,     30,000
//                                     module
//   comprehensive  L3     inferred    all six                                     80,000
//
// (v1 builds function_context and module_context packs only, so the other types never appear
// and a disclosure says so.) Bundled packs carry the seven query fields plus `codeSnippets`
// ({file, startLine, endLine, content}: the target's span for a function, the file's first
// chunks for a module), so a bundle is self-contained. Budget: packs in rank order, each
// estimated as ceil(bytes(compact JSON) / 4); a pack that does not fit is retried with only its
// first snippet; the first pack that still does not fit ends the bundle. `truncated` is true
// when any candidate was left out, `omittedCount` says how many.
//
// Thread safety: uses `store` from the calling thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/cancellation.h"
#include "base/status.h"
#include "librarian/query/query.h"

namespace trove::librarian::store {
class Store;
}

namespace trove::librarian::bundle {

inline constexpr std::string_view kBundleTypes[] = {"task", "review", "debug", "comprehensive"};
inline constexpr std::size_t kMinTokens = 100;
inline constexpr std::size_t kMaxTokens = 100'000;
// Most snippets a module pack carries.
inline constexpr std::size_t kModuleSnippets = 3;

struct Snippet {
  std::string file;
  std::uint32_t start_line = 0;
  std::uint32_t end_line = 0;
  std::string content;
};

struct BundlePack {
  std::string pack_id;
  std::string pack_type;
  std::string target_id;
  std::string summary;
  std::vector<std::string> key_facts;
  std::vector<std::string> related_files;
  double confidence = 0;  // the pack signal: an uncalibrated ranking signal
  std::vector<Snippet> code_snippets;
};

struct BundleRequest {
  std::string topic;                      // 1-2,000 characters
  std::string bundle_type;                // one of kBundleTypes
  std::optional<std::size_t> max_tokens;  // kMinTokens-kMaxTokens; default by type
};

struct Bundle {
  std::string bundle_id;  // bd_ + 16 hex digits over workspace, index generation and request
  std::string workspace;  // canonical root
  std::string topic;
  std::string bundle_type;
  std::vector<BundlePack> packs;
  std::size_t estimated_tokens = 0;
  bool truncated = false;
  std::size_t omitted_count = 0;
  std::vector<std::string> disclosures;
  std::optional<std::string> error;
  std::optional<std::string> error_code;
};

// The profile of a bundle type: depth, intent type (nullopt: inferred), allowed pack types,
// default maxTokens. nullopt for an unknown type.
struct Profile {
  query::Depth depth;
  std::optional<query::IntentType> intent_type;
  std::vector<std::string_view> pack_types;
  std::size_t default_tokens;
};
std::optional<Profile> ProfileFor(std::string_view bundle_type);

// Estimated tokens of `pack` as bundled (compact JSON with the wire names, chars / 4).
std::size_t PackTokens(const BundlePack& pack);

// Builds the bundle for `request` over `store` (the index of `workspace`). kInvalidArgument for
// an unknown bundleType ("bundleType: ..."), maxTokens out of range ("maxTokens: ...") or a bad
// topic ("topic: ..."); an unbootstrapped workspace is the query's domain outcome (`error`).
Result<Bundle> BuildBundle(store::Store& store, const query::Workspace& workspace,
                           const BundleRequest& request, base::Cancellation& cancel);

}  // namespace trove::librarian::bundle

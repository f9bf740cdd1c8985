#include "librarian/bundle/bundle.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/hash.h"
#include "librarian/store/store.h"

namespace trove::librarian::bundle {
namespace {

nlohmann::json PackJson(const BundlePack& p) {
  nlohmann::json snippets = nlohmann::json::array();
  for (const Snippet& s : p.code_snippets) {
    snippets.push_back({{"file", s.file},
                        {"startLine", s.start_line},
                        {"endLine", s.end_line},
                        {"content", s.content}});
  }
  return {{"packId", p.pack_id},        {"packType", p.pack_type},
          {"targetId", p.target_id},    {"summary", p.summary},
          {"keyFacts", p.key_facts},    {"relatedFiles", p.related_files},
          {"confidence", p.confidence}, {"codeSnippets", std::move(snippets)}};
}

Result<std::vector<Snippet>> SnippetsFor(store::Store& store, const query::Pack& p) {
  std::vector<Snippet> out;
  if (p.primary_file.empty()) return out;
  ASSIGN_OR_RETURN(std::vector<store::ChunkRow> chunks, store.FileChunks(p.primary_file));
  if (p.pack_type == query::PackType::kFunctionContext) {
    for (const store::ChunkRow& ch : chunks) {
      if (ch.target_id == p.target_id ||
          (ch.kind == "symbol" && ch.start_line == p.start_line && ch.end_line == p.end_line)) {
        out.push_back(Snippet{p.primary_file, ch.start_line, ch.end_line, ch.body});
        break;
      }
    }
    return out;
  }
  for (const store::ChunkRow& ch : chunks) {
    if (out.size() >= kModuleSnippets) break;
    out.push_back(Snippet{p.primary_file, ch.start_line, ch.end_line, ch.body});
  }
  return out;
}

}  // namespace

std::optional<Profile> ProfileFor(std::string_view bundle_type) {
  using query::Depth;
  using query::IntentType;
  if (bundle_type == "task") {
    return Profile{Depth::kL1,
                   std::nullopt,
                   {"function_context", "module_context", "pattern_context", "similar_tasks"},
                   10'000};
  }
  if (bundle_type == "review") {
    return Profile{Depth::kL2,
                   IntentType::kRefactor,
                   {"change_impact", "pattern_context", "decision_context", "function_context",
                    "module_context"},
                   30'000};
  }
  if (bundle_type == "debug") {
    return Profile{Depth::kL2,
                   IntentType::kDebug,
                   {"function_context", "change_impact", "similar_tasks", "module_context"},
                   30'000};
  }
  if (bundle_type == "comprehensive") {
    return Profile{Depth::kL3,
                   std::nullopt,
                   {"function_context", "module_context", "pattern_context", "decision_context",
                    "change_impact", "similar_tasks"},
                   80'000};
  }
  return std::nullopt;
}

std::size_t PackTokens(const BundlePack& pack) {
  return query::EstimateTokens(
      PackJson(pack).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

Result<Bundle> BuildBundle(store::Store& store, const query::Workspace& workspace,
                           const BundleRequest& request, base::Cancellation& cancel) {
  std::optional<Profile> profile = ProfileFor(request.bundle_type);
  if (!profile) {
    return Status::InvalidArgument("bundleType: must be task, review, debug or comprehensive");
  }
  if (request.max_tokens &&
      (*request.max_tokens < kMinTokens || *request.max_tokens > kMaxTokens)) {
    return Status::InvalidArgument(
        fmt::format("maxTokens: must be from {} to {}", kMinTokens, kMaxTokens));
  }
  const std::size_t budget = request.max_tokens.value_or(profile->default_tokens);
  query::QueryRequest q;
  q.intent = request.topic;
  q.intent_type = profile->intent_type;
  q.depth = profile->depth;
  q.max_results = query::BudgetFor(profile->depth).max_packs;
  for (std::string_view name : profile->pack_types) {
    if (std::optional<query::PackType> t = query::ParsePackType(name)) q.pack_types.push_back(*t);
  }
  Result<query::QueryResponse> r = query::Query(store, workspace, q, cancel);
  if (!r.ok()) {
    const std::string_view msg = r.status().message();
    if (r.status().code() == base::StatusCode::kInvalidArgument && msg.rfind("intent:", 0) == 0) {
      return Status::InvalidArgument(fmt::format("topic:{}", msg.substr(7)));
    }
    return r.status();
  }
  Bundle b;
  b.workspace = workspace.root;
  b.topic = request.topic;
  b.bundle_type = request.bundle_type;
  b.error = r->error;
  b.error_code = r->error_code;
  b.disclosures = r->disclosures;
  ASSIGN_OR_RETURN(std::string generation, store.Generation());
  b.bundle_id =
      "bd_" + base::Sha256Hex(fmt::format("{}\n{}\n{}\n{}\n{}", workspace.workspace_id, generation,
                                          request.bundle_type, budget, request.topic))
                  .substr(0, 16);
  std::vector<BundlePack> candidates;
  for (const query::Pack& p : r->packs) {
    const std::string_view type = query::PackTypeName(p.pack_type);
    if (std::find(profile->pack_types.begin(), profile->pack_types.end(), type) ==
        profile->pack_types.end()) {
      continue;
    }
    BundlePack bp{p.pack_id,   std::string(type), p.target_id, p.summary,
                  p.key_facts, p.related_files,   p.signal,    {}};
    ASSIGN_OR_RETURN(bp.code_snippets, SnippetsFor(store, p));
    candidates.push_back(std::move(bp));
  }
  std::size_t i = 0;
  for (; i < candidates.size(); ++i) {
    if (cancel.requested()) return Status::Cancelled("get_context_pack_bundle cancelled");
    BundlePack& p = candidates[i];
    std::size_t t = PackTokens(p);
    if (b.estimated_tokens + t > budget && p.code_snippets.size() > 1) {
      p.code_snippets.resize(1);  // retried with only its first snippet
      t = PackTokens(p);
    }
    if (b.estimated_tokens + t > budget) break;  // the first that does not fit ends the bundle
    b.estimated_tokens += t;
    b.packs.push_back(std::move(p));
  }
  b.omitted_count = candidates.size() - i;
  b.truncated = b.omitted_count > 0;
  return b;
}

}  // namespace trove::librarian::bundle

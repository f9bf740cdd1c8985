#include "warden/server/diff_tools.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <string>
#include <vector>

#include "mcp/describe.h"
#include "mcp/registry.h"
#include "warden/diff/diff.h"

namespace trove::warden::server {

std::string ChangelogUri(std::int64_t from_version_id, std::int64_t to_version_id) {
  return fmt::format("warden://diffs/{}/{}/changelog", from_version_id, to_version_id);
}

namespace {

using mcp::EmitNull;
using mcp::Field;
using mcp::Fields;
using mcp::Tag;

struct DiffArgs {
  std::int64_t from_version_id = 0;
  std::int64_t to_version_id = 0;
  bool include_unchanged = false;
};
inline auto DescribeFields(Tag<DiffArgs>) {
  using A = DiffArgs;
  return Fields(
      Field("from_version_id", &A::from_version_id, "The old version's id, from list_versions",
            mcp::AtLeast(1)),
      Field("to_version_id", &A::to_version_id, "The new version's id, from list_versions",
            mcp::AtLeast(1)),
      Field("include_unchanged", &A::include_unchanged,
            "Also list unchanged and moved functions (default: only counted)", mcp::NotRequired()));
}

struct CarryArgs {
  std::int64_t from_version_id = 0;
  std::int64_t to_version_id = 0;
};
inline auto DescribeFields(Tag<CarryArgs>) {
  return Fields(Field("from_version_id", &CarryArgs::from_version_id,
                      "The old version's id, whose names are carried", mcp::AtLeast(1)),
                Field("to_version_id", &CarryArgs::to_version_id,
                      "The new version's id, which receives them", mcp::AtLeast(1)));
}

struct VersionRefView {
  std::int64_t version_id = 0;
  std::string label;
  std::optional<std::string> emscripten_version;
};
inline auto DescribeFields(Tag<VersionRefView>) {
  using V = VersionRefView;
  return Fields(Field("version_id", &V::version_id, "Internal version id"),
                Field("label", &V::label, "Human label"),
                Field("emscripten_version", &V::emscripten_version,
                      "Inferred Emscripten version, if detected", EmitNull()));
}

struct OriginCounts {
  std::int64_t application = 0;
  std::int64_t runtime = 0;
  std::int64_t total = 0;
};
inline auto DescribeFields(Tag<OriginCounts>) {
  using O = OriginCounts;
  return Fields(Field("application", &O::application, "Application changes"),
                Field("runtime", &O::runtime, "Runtime churn (an Oracle name on either side)"),
                Field("total", &O::total, "Both"));
}

struct CountsView {
  OriginCounts unchanged, moved, modified, added, deleted;
};
inline auto DescribeFields(Tag<CountsView>) {
  using C = CountsView;
  return Fields(
      Field("unchanged", &C::unchanged, "Same stable_id or body, same index"),
      Field("moved", &C::moved, "Same stable_id or body, other index"),
      Field("modified", &C::modified, "Paired by the normalised, call-graph or fuzzy pass"),
      Field("new", &C::added, "Only in the new version"),
      Field("deleted", &C::deleted, "Only in the old version"));
}

struct PassesView {
  std::int64_t exact = 0, stable_id = 0, normalised = 0, call_graph = 0, fuzzy = 0;
};
inline auto DescribeFields(Tag<PassesView>) {
  using P = PassesView;
  return Fields(
      Field("exact", &P::exact, "Pairs by exact body hash"),
      Field("stable_id", &P::stable_id, "Pairs by equal stable_id"),
      Field("normalised", &P::normalised, "Pairs by structure, signature, call-outs, size"),
      Field("call_graph", &P::call_graph, "Pairs by shape and paired callees"),
      Field("fuzzy", &P::fuzzy, "Pairs by MinHash candidates above the thresholds"));
}

struct ComponentsView {
  bool exact_equal = false;
  bool base_equal = false;
  double minhash = 0, histogram_cosine = 0, call_out_jaccard = 0, structural = 0;
};
inline auto DescribeFields(Tag<ComponentsView>) {
  using C = ComponentsView;
  return Fields(
      Field("exact_equal", &C::exact_equal, "Exact hashes equal"),
      Field("base_equal", &C::base_equal, "stable_id bases equal"),
      Field("minhash", &C::minhash, "Share of equal MinHash values"),
      Field("histogram_cosine", &C::histogram_cosine, "Cosine of opcode-class histograms"),
      Field("call_out_jaccard", &C::call_out_jaccard, "Jaccard of the imports called"),
      Field("structural", &C::structural, "1 if the structural hashes are equal"));
}

struct ChangeView {
  std::string change_class;
  std::string origin;
  std::optional<std::string> pass;
  double score = 0;
  std::optional<ComponentsView> components;
  std::optional<std::int64_t> from_index, to_index;
  std::optional<std::string> from_stable_id, to_stable_id;
  std::optional<std::string> name, provenance;
  std::optional<double> confidence;
  bool locked = false;
  std::optional<std::int64_t> from_instructions, to_instructions;
  std::optional<std::string> from_type, to_type;
  std::vector<std::string> call_outs_added, call_outs_removed, strings_added, strings_removed;
};
inline auto DescribeFields(Tag<ChangeView>) {
  using C = ChangeView;
  return Fields(
      Field("class", &C::change_class, "unchanged, moved, modified, new or deleted"),
      Field("origin", &C::origin, "application or runtime"),
      Field("pass", &C::pass, "exact, stable_id, normalised, call_graph or fuzzy; null if unpaired",
            EmitNull()),
      Field("score", &C::score, "The pair's similarity; 0 if unpaired"),
      Field("components", &C::components, "The similarity's components; null if unpaired",
            EmitNull()),
      Field("from_index", &C::from_index, "Index in the old version", EmitNull()),
      Field("to_index", &C::to_index, "Index in the new version", EmitNull()),
      Field("from_stable_id", &C::from_stable_id, "stable_id in the old version", EmitNull()),
      Field("to_stable_id", &C::to_stable_id, "stable_id in the new version", EmitNull()),
      Field("name", &C::name, "Current name (the old side's, else the new side's)", EmitNull()),
      Field("provenance", &C::provenance, "The name's provenance", EmitNull()),
      Field("confidence", &C::confidence, "The name's confidence", EmitNull()),
      Field("locked", &C::locked, "Whether the name is locked by a human"),
      Field("from_instructions", &C::from_instructions, "Instructions in the old version",
            EmitNull()),
      Field("to_instructions", &C::to_instructions, "Instructions in the new version", EmitNull()),
      Field("from_type", &C::from_type, "Type signature in the old version", EmitNull()),
      Field("to_type", &C::to_type, "Type signature in the new version", EmitNull()),
      Field("call_outs_added", &C::call_outs_added, "Imports called only by the new side"),
      Field("call_outs_removed", &C::call_outs_removed, "Imports called only by the old side"),
      Field("strings_added", &C::strings_added, "Strings referenced only by the new side"),
      Field("strings_removed", &C::strings_removed, "Strings referenced only by the old side"));
}

struct DiffOut {
  VersionRefView from, to;
  bool toolchain_changed = false;
  CountsView counts;
  PassesView passes;
  std::vector<ChangeView> changes;
  std::int64_t diff_id = 0;
  std::string changelog_uri;
};
inline auto DescribeFields(Tag<DiffOut>) {
  using D = DiffOut;
  return Fields(
      Field("from", &D::from, "The old version"), Field("to", &D::to, "The new version"),
      Field("toolchain_changed", &D::toolchain_changed,
            "Both Emscripten versions are known and differ"),
      Field("counts", &D::counts, "Functions per class and origin"),
      Field("passes", &D::passes, "Pairs per pass"),
      Field("changes", &D::changes, "One entry per function (unchanged and moved only on request)"),
      Field("diff_id", &D::diff_id, "The stored report"),
      Field("changelog_uri", &D::changelog_uri, "The Markdown changelog resource"));
}

struct CarryDetailView {
  std::uint32_t from_index = 0, to_index = 0;
  std::string from_stable_id, to_stable_id, name;
  double confidence = 0;
  std::string pass;
  bool written = false;
  std::string reason;
};
inline auto DescribeFields(Tag<CarryDetailView>) {
  using C = CarryDetailView;
  return Fields(Field("from_index", &C::from_index, "Index in the old version"),
                Field("to_index", &C::to_index, "Index in the new version"),
                Field("from_stable_id", &C::from_stable_id, "The old stable_id"),
                Field("to_stable_id", &C::to_stable_id, "The new stable_id, written to"),
                Field("name", &C::name, "The carried name"),
                Field("confidence", &C::confidence, "min(score, old confidence)"),
                Field("pass", &C::pass, "The pass that paired them"),
                Field("written", &C::written, "Whether the gate accepted it"),
                Field("reason", &C::reason, "The gate's reason"));
}

struct CarryOut {
  std::int64_t diff_id = 0;
  std::int64_t pairs = 0, shared_identity = 0, unnamed_source = 0, attempted = 0, carried = 0,
               rejected = 0;
  std::vector<CarryDetailView> details;
  std::string changelog_uri;
};
inline auto DescribeFields(Tag<CarryOut>) {
  using C = CarryOut;
  return Fields(Field("diff_id", &C::diff_id, "The stored report"),
                Field("pairs", &C::pairs, "Paired functions"),
                Field("shared_identity", &C::shared_identity,
                      "Pairs sharing a stable_id: they share the annotation, nothing to write"),
                Field("unnamed_source", &C::unnamed_source, "Pairs whose old side has no name"),
                Field("attempted", &C::attempted, "Writes sent to the economy gate"),
                Field("carried", &C::carried, "Writes the gate accepted"),
                Field("rejected", &C::rejected, "Writes the gate refused"),
                Field("details", &C::details, "One entry per attempted write"),
                Field("changelog_uri", &C::changelog_uri, "The Markdown changelog resource"));
}

// Both versions must exist: an unknown id is a tool error naming it (docs/warden.md §3.1).
Status RequireVersions(kb::Kb& k, std::int64_t from, std::int64_t to) {
  for (std::int64_t id : {from, to}) {
    Result<kb::VersionInfo> v = k.GetVersion(id);
    if (v.ok()) continue;
    if (v.status().code() == base::StatusCode::kNotFound) {
      return Status::NotFound(
          fmt::format("unknown version_id {}; call list_versions for the valid ids", id));
    }
    return v.status();
  }
  if (from == to) {
    return Status::InvalidArgument(
        fmt::format("from_version_id and to_version_id are both {}; pass two versions", from));
  }
  return Status::Ok();
}

Result<std::int64_t> ParseId(const mcp::ResourceVars& vars, const std::string& key,
                             const std::string& uri) {
  auto it = vars.find(key);
  std::int64_t id = 0;
  if (it != vars.end()) {
    const std::string& s = it->second;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
    if (ec == std::errc() && end == s.data() + s.size() && id > 0) return id;
  }
  return Status::NotFound(
      fmt::format("{}: unknown resource (version ids are positive integers)", uri));
}

}  // namespace

Status RegisterDiffTools(mcp::Server& server, KbPool& pool) {
  mcp::ToolRegistry& tools = server.tools();
  Status added = tools.Add<DiffArgs, DiffOut>(
      {.name = "diff_versions",
       .description =
           "Diff two versions: pairs every defined function (exact, stable_id, normalised, "
           "call-graph and fuzzy passes), classifies it unchanged, moved, modified, new or "
           "deleted, runtime or application, and stores the report; the Markdown changelog is "
           "the resource at changelog_uri. Writes no names (carry_annotations does).",
       .annotations =
           {.read_only = false, .destructive = false, .idempotent = true, .open_world = false},
       .scopes = {"read"}},
      [&pool](const DiffArgs& args, mcp::CallContext&) -> Result<DiffOut> {
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        RETURN_IF_ERROR(RequireVersions(*k, args.from_version_id, args.to_version_id));
        ASSIGN_OR_RETURN(diff::DiffRun run,
                         diff::RunDiff(*k, args.from_version_id, args.to_version_id));
        // The engine's JSON, read through this tool's description: one shape for the CLI's
        // --json, the stored report and this result.
        mcp::Json j = mcp::Json::parse(diff::ReportJson(run.report, args.include_unchanged));
        j["diff_id"] = run.diff_id;
        j["changelog_uri"] = ChangelogUri(args.from_version_id, args.to_version_id);
        return mcp::FromJson<DiffOut>(j, "diff report");
      });
  if (!added.ok()) return added;

  added = tools.Add<CarryArgs, CarryOut>(
      {.name = "carry_annotations",
       .description =
           "Diff two versions and carry the old names to changed functions of the new one: "
           "provenance diff-carry, confidence min(pair score, old confidence), through the same "
           "economy gate as every write, so it never overwrites a human, export or Oracle "
           "name and never carries a lock.",
       .annotations =
           {.read_only = false, .destructive = false, .idempotent = false, .open_world = false},
       .scopes = {"write"}},
      [&pool](const CarryArgs& args, mcp::CallContext&) -> Result<CarryOut> {
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        RETURN_IF_ERROR(RequireVersions(*k, args.from_version_id, args.to_version_id));
        ASSIGN_OR_RETURN(diff::DiffRun run,
                         diff::RunDiff(*k, args.from_version_id, args.to_version_id));
        ASSIGN_OR_RETURN(diff::CarrySummary c, diff::CarryAnnotations(*k, run.report));
        CarryOut out{
            run.diff_id,      c.pairs,     c.shared_identity,
            c.unnamed_source, c.attempted, c.carried,
            c.rejected,       {},          ChangelogUri(args.from_version_id, args.to_version_id)};
        for (const diff::CarryDetail& d : c.details) {
          out.details.push_back({d.from_index, d.to_index, d.from_stable_id, d.to_stable_id, d.name,
                                 d.confidence, std::string(diff::PassName(d.pass)), d.written,
                                 d.reason});
        }
        return out;
      });
  if (!added.ok()) return added;

  mcp::ResourceRegistry& resources = server.resources();
  added = resources.Add(
      {.uri = "warden://diffs",
       .name = "diffs",
       .title = "Stored diffs",
       .description = "Every stored diff: version ids and labels, when it ran, and the URI of "
                      "its Markdown changelog.",
       .mime_type = "application/json"},
      [&pool](const std::string& uri, const mcp::ResourceVars&,
              mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        ASSIGN_OR_RETURN(std::vector<kb::DiffRecord> diffs, k->ListDiffs());
        mcp::Json list = mcp::Json::array();
        for (const kb::DiffRecord& d : diffs) {
          list.push_back({{"from_version_id", d.from_version},
                          {"to_version_id", d.to_version},
                          {"created_at", d.created_at},
                          {"changelog_uri", ChangelogUri(d.from_version, d.to_version)}});
        }
        const mcp::Json body = {{"diffs", std::move(list)}};
        return std::vector<mcp::ResourceContents>{mcp::ResourceContents{
            uri, "application/json", body.dump(-1, ' ', false, mcp::Json::error_handler_t::replace),
            std::nullopt}};
      });
  if (!added.ok()) return added;

  return resources.AddTemplate(
      {.uri_template = "warden://diffs/{from_version_id}/{to_version_id}/changelog",
       .name = "diff-changelog",
       .title = "Diff changelog",
       .description = "The Markdown changelog of a stored diff (run diff_versions or "
                      "carry_annotations first; warden://diffs lists them).",
       .mime_type = "text/markdown"},
      [&pool](const std::string& uri, const mcp::ResourceVars& vars,
              mcp::CallContext&) -> Result<std::vector<mcp::ResourceContents>> {
        ASSIGN_OR_RETURN(std::int64_t from, ParseId(vars, "from_version_id", uri));
        ASSIGN_OR_RETURN(std::int64_t to, ParseId(vars, "to_version_id", uri));
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        ASSIGN_OR_RETURN(std::optional<kb::DiffRecord> d, k->GetDiff(from, to));
        if (!d) {
          return Status::NotFound(fmt::format(
              "{}: no stored diff from version {} to {}; call diff_versions first", uri, from, to));
        }
        return std::vector<mcp::ResourceContents>{
            mcp::ResourceContents{uri, "text/markdown", std::move(d->changelog_md), std::nullopt}};
      },
      [&pool](std::string_view argument, std::string_view value,
              const mcp::Json&) -> std::vector<std::string> {
        std::vector<std::string> out;
        Result<KbPool::Lease> k = pool.Acquire();
        if (!k.ok()) return out;
        Result<std::vector<kb::DiffRecord>> diffs = (*k)->ListDiffs();
        if (!diffs.ok()) return out;
        for (const kb::DiffRecord& d : *diffs) {
          const std::string id =
              std::to_string(argument == "from_version_id" ? d.from_version : d.to_version);
          if (id.starts_with(value) && std::find(out.begin(), out.end(), id) == out.end()) {
            out.push_back(id);
          }
        }
        return out;
      });
}

}  // namespace trove::warden::server

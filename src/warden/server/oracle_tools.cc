#include "warden/server/oracle_tools.h"

#include <fmt/format.h>

#include "mcp/describe.h"
#include "mcp/registry.h"
#include "warden/oracle/oracle.h"

namespace trove::warden::server {

namespace {

using mcp::EmitNull;
using mcp::Field;
using mcp::Fields;
using mcp::Tag;

struct IdentifyArgs {
  std::int64_t version_id = 0;
  bool dry_run = true;
};
inline auto DescribeFields(Tag<IdentifyArgs>) {
  return Fields(Field("version_id", &IdentifyArgs::version_id,
                      "The version to name, from list_versions", mcp::AtLeast(1)),
                Field("dry_run", &IdentifyArgs::dry_run,
                      "Default true: report the matches and write nothing. false writes the names "
                      "as provenance oracle through the economy gate (needs the write scope)",
                      mcp::NotRequired()));
}

struct MatchView {
  std::uint32_t func_index = 0;
  std::string stable_id;
  std::string name;
  std::string pass;
  double score = 0;
  double confidence = 0;
  std::string library;
  std::string emscripten_version;
  std::string opt_level;
  std::uint32_t instructions = 0;
  std::int64_t candidates = 0;
  bool written = false;
  std::string reason;
};
inline auto DescribeFields(Tag<MatchView>) {
  using M = MatchView;
  return Fields(
      Field("func_index", &M::func_index, "Wasm function index"),
      Field("stable_id", &M::stable_id, "Stable function identity"),
      Field("name", &M::name, "The corpus name, as written"),
      Field("pass", &M::pass, "exact, norm, structural or fuzzy"),
      Field("score", &M::score, "The pass's score (fuzzy: the overall similarity)"),
      Field("confidence", &M::confidence, "The confidence written (or that would be)"),
      Field("library", &M::library, "Library tag of the corpus signature"),
      Field("emscripten_version", &M::emscripten_version, "Emscripten version of the corpus"),
      Field("opt_level", &M::opt_level, "Optimisation level of the corpus"),
      Field("instructions", &M::instructions, "Instruction count of the target function"),
      Field("candidates", &M::candidates, "Corpus signatures considered"),
      Field("written", &M::written, "Whether the gate accepted the name"),
      Field("reason", &M::reason, "The gate's reason, or why nothing was written"));
}

struct IdentifyOut {
  std::int64_t version_id = 0;
  std::string label;
  mcp::Json store;
  bool emscripten = true;
  std::string toolchain_reason;
  std::optional<std::string> producers;
  std::optional<std::string> note;
  bool dry_run = true;
  std::int64_t defined = 0;
  std::int64_t matched = 0;
  mcp::Json per_pass;
  mcp::Json per_library;
  std::int64_t written = 0;
  std::int64_t rejected = 0;
  std::int64_t unchanged = 0;
  mcp::Json refused;
  mcp::Json emscripten_version;
  std::vector<MatchView> matches;
};
inline auto DescribeFields(Tag<IdentifyOut>) {
  using O = IdentifyOut;
  return Fields(
      Field("version_id", &O::version_id, "Internal version id"),
      Field("label", &O::label, "Human label"),
      Field("store", &O::store, "The Oracle store: path, signatures, libraries, versions"),
      Field("emscripten", &O::emscripten, "Whether the module looks built by Emscripten"),
      Field("toolchain_reason", &O::toolchain_reason, "Why it is or is not taken for Emscripten"),
      Field("producers", &O::producers, "The producers section in one line", EmitNull()),
      Field("note", &O::note, "For a module that is not Emscripten: what was still tried",
            EmitNull()),
      Field("dry_run", &O::dry_run, "True when nothing was written"),
      Field("defined", &O::defined, "Defined functions"),
      Field("matched", &O::matched, "Functions matched"),
      Field("per_pass", &O::per_pass, "Matches per pass"),
      Field("per_library", &O::per_library, "Matches per library tag"),
      Field("written", &O::written, "Names the gate accepted"),
      Field("rejected", &O::rejected, "Names the gate refused (human, export or stronger names)"),
      Field("unchanged", &O::unchanged, "Already named so by the Oracle"),
      Field("refused", &O::refused, "Functions not matched, per precision rule"),
      Field("emscripten_version", &O::emscripten_version,
            "Inferred Emscripten version, its source (glue, oracle-vote, hint) and share"),
      Field("matches", &O::matches, "Every match, in index order"));
}

}  // namespace

Status RegisterOracleTools(mcp::Server& server, KbPool& pool, std::string store_path) {
  return server.tools().Add<IdentifyArgs, IdentifyOut>(
      {.name = "identify_runtime",
       .description =
           "Name the known runtime functions (libc, libc++, malloc...) of a version by matching "
           "them against the Emscripten Oracle store (exact, norm, structural and fuzzy passes, "
           "unique matches only). A dry run by default; with dry_run false the names are "
           "written as provenance oracle through the economy gate, which never replaces a human "
           "or export name.",
       .annotations =
           {.read_only = false, .destructive = false, .idempotent = true, .open_world = false},
       .scopes = {"read"}},
      [&pool, store_path](const IdentifyArgs& args, mcp::CallContext& ctx) -> Result<IdentifyOut> {
        if (!args.dry_run && !ctx.HasScope("write")) {
          return Status::PermissionDenied(
              "identify_runtime: writing names needs the write scope; call with dry_run true "
              "to see the matches");
        }
        ASSIGN_OR_RETURN(KbPool::Lease k, pool.Acquire());
        RETURN_IF_ERROR(k->GetVersion(args.version_id).status());
        ASSIGN_OR_RETURN(std::unique_ptr<oracle::OracleStore> store,
                         oracle::OracleStore::Open(store_path, false));
        oracle::IdentifyOptions options;
        options.dry_run = args.dry_run;
        ASSIGN_OR_RETURN(oracle::IdentifyReport report,
                         oracle::Identify(*k, args.version_id, *store, options));
        return mcp::FromJson<IdentifyOut>(mcp::Json::parse(oracle::ReportJson(report)),
                                          "identify report");
      });
}

}  // namespace trove::warden::server

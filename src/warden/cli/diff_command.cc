#include "warden/cli/diff_command.h"

#include <fmt/core.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/env.h"
#include "warden/cli/cli_support.h"
#include "warden/diff/diff.h"

namespace trove::warden::cli {

int RunDiff(base::Env& env, const GlobalOptions& global, const DiffArgs& args) {
  int exit = kExitOk;
  std::unique_ptr<kb::Kb> k = OpenKb(env, global, &exit);
  if (!k) return exit;
  Result<std::int64_t> from = ResolveVersion(*k, args.from);
  Result<std::int64_t> to = from.ok() ? ResolveVersion(*k, args.to) : from;
  if (!to.ok()) {
    Error(to.status().message());
    return ExitFor(to.status());
  }
  // On a terminal (and without --json) a bar shows the step; piped, nothing is drawn.
  TerminalProgress bar(global.stderr_is_terminal && !global.json);
  base::Progress progress = bar.Sink();
  const double steps = args.carry ? 2 : 1;
  progress.Report(0, steps, "pairing functions");
  Result<diff::DiffRun> run = diff::RunDiff(*k, *from, *to);
  progress.Report(1, steps, args.carry ? "carrying names" : "pairing functions");
  if (!run.ok()) {
    Error(run.status().message());
    return ExitFor(run.status());
  }
  std::optional<diff::CarrySummary> carry;
  if (args.carry) {
    Result<diff::CarrySummary> c = diff::CarryAnnotations(*k, run->report);
    if (!c.ok()) {
      Error(c.status().message());
      return ExitFor(c.status());
    }
    carry = std::move(c).value();
    progress.Report(2, steps, "carrying names");
  }
  bar.Clear();
  if (args.changelog) {
    const std::string path = AbsolutePath(global.cwd, *args.changelog);
    // base::Env::WriteFile writes a temporary file beside the target and renames it over it.
    Status s = env.WriteFile(path, run->changelog);
    if (!s.ok()) {
      Error(fmt::format("cannot write changelog {}: {}", *args.changelog, s.message()));
      return kExitUsage;
    }
  }
  if (global.json) {
    Json out = Json::parse(diff::ReportJson(run->report, false));
    out["diff_id"] = run->diff_id;
    if (carry) {
      out["carry"] = Json{{"pairs", carry->pairs},
                          {"shared_identity", carry->shared_identity},
                          {"unnamed_source", carry->unnamed_source},
                          {"attempted", carry->attempted},
                          {"carried", carry->carried},
                          {"rejected", carry->rejected}};
    } else {
      out["carry"] = nullptr;
    }
    PrintJson(out);
    return kExitOk;
  }
  std::string text = run->changelog;
  if (carry) {
    text += fmt::format(
        "\nCarried {} names to {} ({} rejected by the gate; {} pairs share their stable_id, {} "
        "had no name).\n",
        carry->carried, run->report.to.label, carry->rejected, carry->shared_identity,
        carry->unnamed_source);
  }
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace trove::warden::cli

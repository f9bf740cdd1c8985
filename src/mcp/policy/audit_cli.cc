#include "mcp/policy/audit_cli.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "mcp/policy/audit.h"

namespace trove::mcp::policy {
namespace {

constexpr const char* kUsage =
    "usage: audit verify FILE [--json]   check the audit log's hash chain\n"
    "       audit stats FILE [--json]    print statistics of the audit log\n";

}  // namespace

int RunAuditCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string command;
  std::string file;
  bool json = false;
  for (const std::string& arg : args) {
    if (arg == "--json") {
      json = true;
    } else if (arg == "-h" || arg == "--help") {
      out << kUsage;
      return kAuditExitOk;
    } else if (!arg.empty() && arg.front() == '-') {
      err << "audit: unknown option " << arg << "\n" << kUsage;
      return kAuditExitUsage;
    } else if (command.empty()) {
      command = arg;
    } else if (file.empty()) {
      file = arg;
    } else {
      err << "audit: unexpected argument " << arg << "\n" << kUsage;
      return kAuditExitUsage;
    }
  }
  if ((command != "verify" && command != "stats") || file.empty()) {
    err << kUsage;
    return kAuditExitUsage;
  }
  if (command == "verify") {
    Result<AuditVerifyReport> report = VerifyAuditLog(file);
    if (!report.ok()) {
      err << "audit verify: " << report.status().message() << "\n";
      return kAuditExitUsage;
    }
    if (json) {
      nlohmann::ordered_json j;
      j["ok"] = report->ok();
      j["records"] = report->records;
      j["head"] = report->head;
      if (report->first_break) {
        j["line"] = report->first_break->line;
        j["reason"] = report->first_break->reason;
      }
      out << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
    } else if (report->ok()) {
      out << fmt::format("{}: ok, {} records, head {}\n", file, report->records, report->head);
    } else {
      out << fmt::format("{}:{}: {} ({} records valid before it)\n", file,
                         report->first_break->line, report->first_break->reason, report->records);
    }
    return report->ok() ? kAuditExitOk : kAuditExitBroken;
  }
  Result<AuditStatsReport> stats = AuditStats(file);
  if (!stats.ok()) {
    err << "audit stats: " << stats.status().message() << "\n";
    return kAuditExitUsage;
  }
  if (json) {
    out << AuditStatsJson(*stats) << "\n";
    return kAuditExitOk;
  }
  out << fmt::format("total events       {}\n", stats->total_events);
  for (const auto& [type, count] : stats->by_type) {
    out << fmt::format("  type {:<14}{}\n", type, count);
  }
  for (const auto& [status, count] : stats->by_status) {
    out << fmt::format("  status {:<12}{}\n", status, count);
  }
  out << fmt::format("unique sessions    {}\n", stats->unique_sessions);
  out << fmt::format("avg tool duration  {:.1f} ms\n", stats->avg_tool_duration_ms);
  out << fmt::format("error rate         {:.1f} %\n", stats->error_rate);
  if (stats->unreadable_lines > 0) {
    out << fmt::format("unreadable lines   {}\n", stats->unreadable_lines);
  }
  return kAuditExitOk;
}

int RunAuditCommand(int argc, const char* const* argv, int first, std::ostream& out,
                    std::ostream& err) {
  std::vector<std::string> args;
  for (int i = first; i < argc; ++i) args.emplace_back(argv[i]);
  return RunAuditCommand(args, out, err);
}

}  // namespace trove::mcp::policy

#include "warden/cli/cli_support.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/env.h"
#include "base/pg.h"
#include "base/terminal.h"
#include "warden/kb/kb.h"

namespace trove::warden::cli {

using base::StatusCode;

void PrintJson(const Json& j) {
  std::fputs((j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n").c_str(), stdout);
}

void Error(std::string_view message) { base::PrintError(kProgram, message); }

std::string MalformedWasmMessage(const Status& s) {
  const std::string& message = s.message();
  if (message.starts_with("offset ")) return "malformed wasm at " + message;
  return "malformed wasm: " + message;
}

std::string Grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

int ExitFor(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound:
      return kExitUnknown;
    case StatusCode::kInvalidArgument:
    case StatusCode::kAlreadyExists:
      return kExitUsage;
    case StatusCode::kMalformed:
    case StatusCode::kUnsupported:
      return kExitMalformed;
    default:
      return kExitKb;
  }
}

Result<std::unique_ptr<kb::Kb>> FindAndOpenKb(base::Env& env, const GlobalOptions& global,
                                              const kb::KbOptions& options) {
  ASSIGN_OR_RETURN(std::string path, kb::FindDatabase(env, global.db, global.cwd));
  Result<std::unique_ptr<kb::Kb>> opened = kb::Kb::Open(env, path, options);
  // A PostgreSQL URL may carry a password: messages name it redacted (base::pg::RedactUrl).
  if (!opened.ok()) return opened.status().WithContext(base::pg::RedactUrl(path));
  return opened;
}

std::unique_ptr<kb::Kb> OpenKb(base::Env& env, const GlobalOptions& global, int* exit) {
  Result<std::unique_ptr<kb::Kb>> opened = FindAndOpenKb(env, global);
  if (!opened.ok()) {
    Error(opened.status().message());
    *exit = kExitKb;
    return nullptr;
  }
  return std::move(opened).value();
}

Result<std::int64_t> ResolveVersion(kb::Kb& k, const std::optional<std::string>& spec) {
  return k.ResolveVersion(spec ? std::optional<std::string_view>(*spec) : std::nullopt);
}

std::optional<OpenedVersion> OpenVersion(base::Env& env, const GlobalOptions& global,
                                         const std::optional<std::string>& version, int* exit) {
  std::unique_ptr<kb::Kb> k = OpenKb(env, global, exit);
  if (!k) return std::nullopt;
  Result<std::int64_t> id = ResolveVersion(*k, version);
  if (!id.ok()) {
    Error(id.status().message());
    *exit = ExitFor(id.status());
    return std::nullopt;
  }
  return OpenedVersion{std::move(k), *id};
}

std::string AbsolutePath(const std::string& cwd, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(path);
  if (p.is_relative()) p = (cwd.empty() ? fs::current_path(ec) : fs::path(cwd)) / p;
  fs::path canonical = fs::weakly_canonical(p, ec);
  return (ec ? p.lexically_normal() : canonical).string();
}

std::string OrDash(const std::optional<std::string>& s) { return s && !s->empty() ? *s : "-"; }

std::string Conf(const std::optional<double>& c) {
  return c ? views::Confidence3(*c) : std::string("-");
}

void TerminalProgress::Draw(double done, double total, const std::string& message) {
  if (!enabled_) return;
  const double fraction = total > 0 ? std::clamp(done / total, 0.0, 1.0) : 0.0;
  const int filled = static_cast<int>(fraction * kWidth);
  std::string line = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "]";
  if (total > 0) line += fmt::format(" {:3d}%", static_cast<int>(fraction * 100));
  if (!message.empty()) line += " " + message;
  // Phase counters ("read" 0/3) stay as they are; item counts are grouped.
  if (total > 3) {
    line += fmt::format(" {}/{}", Grouped(static_cast<std::uint64_t>(done)),
                        Grouped(static_cast<std::uint64_t>(total)));
  }
  // Redraw when the percentage or the message changes, not on every item.
  std::string key =
      fmt::format("{}|{}|{}", static_cast<int>(fraction * 100), message, total > 0 ? 0.0 : done);
  if (key == last_) return;
  last_ = std::move(key);
  shown_ = true;
  std::fputs(("\r\x1b[K" + line).c_str(), stderr);
  std::fflush(stderr);
}

namespace {

// The handler may only call async-signal-safe functions: the message is formatted before.
char g_sigbus_message[4096];
std::size_t g_sigbus_length = 0;
struct sigaction g_previous_sigbus {};

void OnSigbus(int /*signal*/) {
  ssize_t ignored = ::write(2, g_sigbus_message, g_sigbus_length);
  (void)ignored;
  ::_exit(kExitMalformed);
}

}  // namespace

ExitOnSigbus::ExitOnSigbus(std::string_view path) {
  const std::string message =
      base::ErrorLine(kProgram, fmt::format("malformed wasm: {} changed while it was read", path));
  g_sigbus_length = std::min(message.size(), sizeof(g_sigbus_message));
  std::memcpy(g_sigbus_message, message.data(), g_sigbus_length);
  struct sigaction action {};
  action.sa_handler = OnSigbus;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGBUS, &action, &g_previous_sigbus);
}

ExitOnSigbus::~ExitOnSigbus() { ::sigaction(SIGBUS, &g_previous_sigbus, nullptr); }

// Replaces `path` with `text`, created with mode 0600 (it may hold API keys): a temporary file
// beside it, synced, then renamed over it.
Status WritePrivateFile(const std::string& path, std::string_view text) {
  const std::string tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Io(fmt::format("{}: cannot create: {}", tmp, std::strerror(errno)));
  bool ok = ::fchmod(fd, 0600) == 0;  // an old .tmp keeps its mode through O_TRUNC
  for (std::size_t done = 0; ok && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Status::Io(fmt::format("{}: cannot write: {}", path, why));
  }
  return {};
}

}  // namespace trove::warden::cli

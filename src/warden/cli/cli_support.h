// What the `warden` commands share (commands.cc, net_commands.cc): error printing, exit codes,
// opening the KB and a version, and the terminal progress bar. Internal to cli/.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/cancellation.h"
#include "base/status.h"
#include "warden/cli/commands.h"
#include "warden/kb/kb.h"
#include "warden/views/json_views.h"

namespace trove::warden::cli {

using views::Json;

// Names and summaries need not be valid UTF-8: invalid bytes become U+FFFD.
void PrintJson(const Json& j);
// The name error lines start with (base/terminal.h), for warden and warden-net alike.
inline constexpr std::string_view kProgram = "warden";
// "warden: error: <message>" on stderr.
void Error(std::string_view message);
// The error line for a module that failed to read (docs/warden.md §4.5): "malformed wasm at offset
// 0x1a2b (6699), code section, function 17: function body: body ends inside a block" for a reader
// error, which begins with its location; "malformed wasm: <message>" for any other.
std::string MalformedWasmMessage(const Status& s);
// "2008" -> "2,008".
std::string Grouped(std::uint64_t n);
// Maps a query error to its exit code (docs/warden.md §2.4).
int ExitFor(const Status& s);

// Finds the KB (docs/warden.md §2.1) and opens it; an open error names the path. Prints nothing, so
// that `ingest` can run it on a thread of its own. Never creates a KB unless `options` say so.
Result<std::unique_ptr<kb::Kb>> FindAndOpenKb(base::Env& env, const GlobalOptions& global,
                                              const kb::KbOptions& options = {});
// The same; prints the error and sets *exit on failure.
std::unique_ptr<kb::Kb> OpenKb(base::Env& env, const GlobalOptions& global, int* exit);
Result<std::int64_t> ResolveVersion(kb::Kb& k, const std::optional<std::string>& spec);

struct OpenedVersion {
  std::unique_ptr<kb::Kb> kb;
  std::int64_t version_id = 0;
};
// Opens the KB and resolves a `<version>` argument (docs/warden.md §2.1); prints the error and sets
// *exit on failure.
std::optional<OpenedVersion> OpenVersion(base::Env& env, const GlobalOptions& global,
                                         const std::optional<std::string>& version, int* exit);

// `path` made absolute against `cwd` (the process's directory when empty), with symlinks and
// dot segments resolved as far as the file system allows.
std::string AbsolutePath(const std::string& cwd, const std::string& path);
std::string OrDash(const std::optional<std::string>& s);
// A confidence with three decimals, or "-".
std::string Conf(const std::optional<double>& c);

// While one is alive, a SIGBUS, which reading a mapped module that shrank raises
// (base::MappedFile, IngestOptions::map_module), prints "warden: error: malformed wasm: <path>
// changed while it was read" on stderr and exits with kExitMalformed (4) at once: nothing has been
// written to the KB before the module is prepared, and a KB being created meanwhile is left
// as after a kill. The previous action comes back when it is destroyed. One at a time.
class ExitOnSigbus {
 public:
  explicit ExitOnSigbus(std::string_view path);
  ~ExitOnSigbus();
  ExitOnSigbus(const ExitOnSigbus&) = delete;
  ExitOnSigbus& operator=(const ExitOnSigbus&) = delete;
};

// A progress bar on stderr when it is a terminal (docs/warden.md §2.1: decoration only on a
// terminal), e.g.
// "\r\x1b[K[##########..............]  45% export 887/1,968". It redraws only when the
// percentage or the message changes, so per-function reports cost little, and clears its line
// when destroyed.
// Without a terminal it draws nothing: piped output stays clean.
class TerminalProgress {
 public:
  static constexpr int kWidth = 24;
  explicit TerminalProgress(bool enabled) : enabled_(enabled) {}
  ~TerminalProgress() { Clear(); }
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  base::Progress Sink() {
    if (!enabled_) return base::Progress();
    return base::Progress([this](double done, double total, const std::string& message) {
      Draw(done, total, message);
    });
  }

  // Erases the bar, before results go to a terminal that may be the same one.
  void Clear() {
    if (!shown_) return;
    shown_ = false;
    last_.clear();
    std::fputs("\r\x1b[K", stderr);
    std::fflush(stderr);
  }

  // total <= 0: unknown, shown as a count without a bar fill.
  void Draw(double done, double total, const std::string& message);

 private:
  const bool enabled_;
  bool shown_ = false;
  std::string last_;
};

// Replaces `path` with `text`, created with mode 0600 (a config may hold API keys or a URL
// with a password): a temporary file beside it, synced, then renamed over it.
Status WritePrivateFile(const std::string& path, std::string_view text);

}  // namespace trove::warden::cli

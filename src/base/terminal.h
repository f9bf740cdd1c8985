// What every Trove command line shares about its terminal and its error lines (issue 24):
// decoration (progress bars, colour) only where a person watches, colour never when the user
// set NO_COLOR (https://no-color.org: present and not empty), and every error line on stderr
// starting with the program's name, so that in a pipeline's mixed stderr each line says which
// program wrote it.
//
//   const base::TerminalInfo term = base::TerminalInfo::Detect();
//   if (term.stderr_progress) ...draw a bar on stderr...
//   if (term.stdout_colour) ...wrap in "\x1b[31m" ... "\x1b[0m"...
//   base::PrintError("warden", "no WARDEN database found");  // "warden: error: no WARDEN ..."
//
// Thread safety: stateless; Detect reads the process's environment and descriptors.
#pragma once

#include <string>
#include <string_view>

namespace trove::base {

// Returns true when NO_COLOR is set to a non-empty value in `no_color` (getenv's result; null
// when unset).
bool NoColorRequested(const char* no_color);

struct TerminalInfo {
  bool stdout_terminal = false;  // stdout is a terminal
  bool stderr_terminal = false;  // stderr is a terminal
  // Colour on stdout / stderr: a terminal, and NO_COLOR not set.
  bool stdout_colour = false;
  bool stderr_colour = false;
  // A progress display on stderr: only when stderr is a terminal. Progress bars redraw a line
  // with "\r" and an erase sequence, which would litter a log file or a pipe.
  bool stderr_progress = false;

  // Reads isatty(1), isatty(2) and NO_COLOR.
  static TerminalInfo Detect();
  // The same from given facts (tests).
  static TerminalInfo From(bool stdout_terminal, bool stderr_terminal, const char* no_color);
};

// Returns "<program>: error: <message>\n".
std::string ErrorLine(std::string_view program, std::string_view message);
// Writes ErrorLine to stderr in one call.
void PrintError(std::string_view program, std::string_view message);

// Returns `text` with every line that starts with "error: " prefixed "<program>: ". For
// commands that build their stderr text before main knows how it was called.
std::string PrefixErrorLines(std::string_view program, std::string_view text);

}  // namespace trove::base

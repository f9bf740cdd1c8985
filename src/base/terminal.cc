#include "base/terminal.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace trove::base {

bool NoColorRequested(const char* no_color) { return no_color != nullptr && no_color[0] != '\0'; }

TerminalInfo TerminalInfo::From(bool stdout_terminal, bool stderr_terminal, const char* no_color) {
  const bool colour = !NoColorRequested(no_color);
  TerminalInfo t;
  t.stdout_terminal = stdout_terminal;
  t.stderr_terminal = stderr_terminal;
  t.stdout_colour = stdout_terminal && colour;
  t.stderr_colour = stderr_terminal && colour;
  t.stderr_progress = stderr_terminal;
  return t;
}

TerminalInfo TerminalInfo::Detect() {
  return From(::isatty(1) == 1, ::isatty(2) == 1, std::getenv("NO_COLOR"));
}

std::string ErrorLine(std::string_view program, std::string_view message) {
  std::string line;
  line.reserve(program.size() + message.size() + 10);
  line.append(program).append(": error: ").append(message).push_back('\n');
  return line;
}

void PrintError(std::string_view program, std::string_view message) {
  const std::string line = ErrorLine(program, message);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

std::string PrefixErrorLines(std::string_view program, std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    end = end == std::string_view::npos ? text.size() : end + 1;
    const std::string_view line = text.substr(pos, end - pos);
    if (line.starts_with("error: ")) out.append(program).append(": ");
    out.append(line);
    pos = end;
  }
  return out;
}

}  // namespace trove::base

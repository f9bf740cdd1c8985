#include "base/command_line.h"

#include <fmt/format.h>

namespace trove::base {

std::optional<std::string> FirstCommandWord(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (!arg.empty() && arg.front() != '-') return arg;
  }
  return std::nullopt;
}

std::string UnknownCommandMessage(const std::optional<std::string>& word,
                                  std::span<const std::string> commands,
                                  std::span<const CommandNote> notes, std::string_view parent) {
  std::string list;
  for (const std::string& c : commands) list += fmt::format("{}{}", list.empty() ? "" : ", ", c);
  const std::string tail = parent.empty() ? fmt::format("the commands are: {}", list)
                                          : fmt::format("the {} commands are: {}", parent, list);
  if (!word) return fmt::format("a command is required; {}", tail);
  for (const CommandNote& n : notes) {
    if (n.word == *word) return fmt::format("'{}' {}; {}", *word, n.note, tail);
  }
  return fmt::format("unknown command '{}'; {}", *word, tail);
}

}  // namespace trove::base

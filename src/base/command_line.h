// What a command line (`warden`, `kodoc`) says when its command word names no command it has:
// which word is unknown and which commands there are, or that the command is planned and not
// there yet. The CLI11 parser's own message for this case ("A subcommand is required") names
// neither. Pure functions of their arguments; the mains pass what the parser left over.
// Thread safety: stateless.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trove::base {

// A word that is not a command of the program but that a user may well type, and what to say
// about it, e.g. {"build", "is planned but not implemented yet"}.
struct CommandNote {
  std::string_view word;
  std::string_view note;
};

// Returns the first of `args` that is not an option (does not start with '-'): the word taken
// for the command. Nothing when every argument is an option.
std::optional<std::string> FirstCommandWord(const std::vector<std::string>& args);

// Returns the message (without "error: ") for a command line whose command is `word` (nothing:
// no command given) when `word` is none of `commands`:
//   "'build' is planned but not implemented yet; the commands are: check, explain, ..."
//   "unknown command 'frobnicate'; the commands are: init, ingest, ..."
//   "a command is required; the commands are: init, ingest, ..."
// `parent`, when the commands are those of a command, names it ("config" gives
// "the config commands are: set, get").
std::string UnknownCommandMessage(const std::optional<std::string>& word,
                                  std::span<const std::string> commands,
                                  std::span<const CommandNote> notes, std::string_view parent = {});

}  // namespace trove::base

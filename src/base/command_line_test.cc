#include "base/command_line.h"

#include <gtest/gtest.h>

namespace trove::base {
namespace {

const std::vector<std::string> kCommands = {"init", "ingest", "versions"};
constexpr CommandNote kNotes[] = {{"oracle", "is planned but not implemented yet"},
                                  {"run", "is not a command: build, then run the executable"}};

TEST(CommandLineTest, FirstCommandWordSkipsOptions) {
  EXPECT_EQ(FirstCommandWord({"--json", "build", "x.ko"}), "build");
  EXPECT_EQ(FirstCommandWord({"-v", "--", "oracle"}), "oracle");
  EXPECT_EQ(FirstCommandWord({"--json", "-x"}), std::nullopt);
  EXPECT_EQ(FirstCommandWord({}), std::nullopt);
}

TEST(CommandLineTest, NamesTheUnknownWordAndTheCommands) {
  EXPECT_EQ(UnknownCommandMessage("frobnicate", kCommands, kNotes),
            "unknown command 'frobnicate'; the commands are: init, ingest, versions");
  EXPECT_EQ(UnknownCommandMessage(std::nullopt, kCommands, kNotes),
            "a command is required; the commands are: init, ingest, versions");
  EXPECT_EQ(UnknownCommandMessage("frob", std::vector<std::string>{"set", "get"}, {}, "config"),
            "unknown command 'frob'; the config commands are: set, get");
}

TEST(CommandLineTest, PlannedCommandsSaySo) {
  EXPECT_EQ(
      UnknownCommandMessage("oracle", kCommands, kNotes),
      "'oracle' is planned but not implemented yet; the commands are: init, ingest, versions");
  EXPECT_EQ(UnknownCommandMessage("run", kCommands, kNotes),
            "'run' is not a command: build, then run the executable; the commands are: init, "
            "ingest, versions");
}

}  // namespace
}  // namespace trove::base

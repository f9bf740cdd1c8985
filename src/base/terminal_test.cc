#include "base/terminal.h"

#include <gtest/gtest.h>

namespace trove::base {
namespace {

TEST(TerminalTest, NoColorMeansPresentAndNotEmpty) {
  EXPECT_FALSE(NoColorRequested(nullptr));
  EXPECT_FALSE(NoColorRequested(""));
  EXPECT_TRUE(NoColorRequested("1"));
  EXPECT_TRUE(NoColorRequested("0"));  // any non-empty value, even "0" (no-color.org)
}

TEST(TerminalTest, ColourOnlyOnATerminalWithoutNoColor) {
  TerminalInfo t = TerminalInfo::From(true, true, nullptr);
  EXPECT_TRUE(t.stdout_colour);
  EXPECT_TRUE(t.stderr_colour);
  EXPECT_TRUE(t.stderr_progress);

  t = TerminalInfo::From(true, true, "yes");
  EXPECT_FALSE(t.stdout_colour);
  EXPECT_FALSE(t.stderr_colour);
  EXPECT_TRUE(t.stderr_progress);  // progress is not colour: a bar still shows on a terminal

  t = TerminalInfo::From(false, false, nullptr);
  EXPECT_FALSE(t.stdout_colour);
  EXPECT_FALSE(t.stderr_colour);
  EXPECT_FALSE(t.stderr_progress);

  t = TerminalInfo::From(true, false, "");
  EXPECT_TRUE(t.stdout_colour);
  EXPECT_FALSE(t.stderr_colour);
  EXPECT_FALSE(t.stderr_progress);
}

TEST(TerminalTest, ErrorLinesStartWithTheProgram) {
  EXPECT_EQ(ErrorLine("warden", "no WARDEN database found"),
            "warden: error: no WARDEN database found\n");
  EXPECT_EQ(PrefixErrorLines("kodoc", "error: could not read file `x`\nhint: h\nerror: two\n"),
            "kodoc: error: could not read file `x`\nhint: h\nkodoc: error: two\n");
  // Diagnostics ("error[E0201]: ...") and lines that only contain "error: " are left alone.
  EXPECT_EQ(PrefixErrorLines("kodoc", "error[E0201]: x\n  = help: error: y"),
            "error[E0201]: x\n  = help: error: y");
  EXPECT_EQ(PrefixErrorLines("kodoc", ""), "");
}

}  // namespace
}  // namespace trove::base

#include "librarian/packs/adr.h"

#include <gtest/gtest.h>

namespace trove::librarian::packs {
namespace {

TEST(AdrTest, RecognisedLayouts) {
  EXPECT_TRUE(IsAdrPath("docs/decisions/0001-use-sqlite.md"));
  EXPECT_TRUE(IsAdrPath("doc/adr/0002-record.md"));
  EXPECT_TRUE(IsAdrPath("docs/adr/0003-x.markdown"));
  EXPECT_TRUE(IsAdrPath("adr/4.md"));
  EXPECT_TRUE(IsAdrPath("docs/architecture/decisions/0005-y.md"));
  EXPECT_TRUE(IsAdrPath("notes/ADR-006-cache.md"));
  EXPECT_TRUE(IsAdrPath("adr-007-auth.md"));
  EXPECT_FALSE(IsAdrPath("docs/decisions/README.md"));
  EXPECT_FALSE(IsAdrPath("docs/decisions/0001.txt"));
  EXPECT_FALSE(IsAdrPath("docs/guide.md"));
  EXPECT_FALSE(IsAdrPath("src/adr.cc"));
}

TEST(AdrTest, ParsesNygardStyle) {
  const std::set<std::string> files = {"src/store.cc", "src/store.h", "docs/adr/0001-sqlite.md"};
  const Adr adr = ParseAdr("docs/adr/0001-sqlite.md", R"(# 1. Use SQLite for the index

Date: 2024-03-01

## Status

Accepted

## Context

We need a store. See [the store](../../src/store.cc).

## Decision

We will use SQLite in WAL mode. Readers never block the writer.

## Consequences

`src/store.h` wraps it; `src/missing.cc` does not exist.
)",
                           files);
  EXPECT_EQ(adr.title, "1. Use SQLite for the index");
  EXPECT_EQ(adr.status, "accepted");
  EXPECT_EQ(adr.date, "2024-03-01");
  EXPECT_EQ(adr.decision, "We will use SQLite in WAL mode.");
  EXPECT_EQ(adr.files, (std::vector<std::string>{"src/store.cc", "src/store.h"}));
}

TEST(AdrTest, FieldLinesAndFallbacks) {
  const Adr adr = ParseAdr("docs/decisions/0002-x.md",
                           "# 0002: keep it small\n\n* **Status**: Proposed.\n\nContext: we "
                           "chose the simple path. More text.\n",
                           {});
  EXPECT_EQ(adr.status, "proposed");
  EXPECT_EQ(adr.date, "");
  EXPECT_EQ(adr.decision, "Context: we chose the simple path.");
  const Adr bare = ParseAdr("adr/3.md", "no heading here", {});
  EXPECT_EQ(bare.title, "3.md");
}

}  // namespace
}  // namespace trove::librarian::packs

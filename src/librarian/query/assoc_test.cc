#include "librarian/query/assoc.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "librarian/query/vocabulary.h"
#include "librarian/store/store.h"

namespace trove::librarian::query {
namespace {

// A workspace whose functions named *Checksum* speak of bytes and polynomials, *Socket* ones
// of peers and ports: the model learns to predict those names from those words.
std::vector<AssocModel::Function> Corpus() {
  std::vector<AssocModel::Function> fs;
  for (int i = 0; i < 12; ++i) {
    fs.push_back({fmt::format("computeChecksum{}", i), "",
                  fmt::format("uint32_t poly = 0xEDB88320; for (byte b : bytes{}) crc ^= b;", i)});
    fs.push_back({fmt::format("openSocket{}", i), "Connects to the peer.",
                  fmt::format("int fd = connect(peer, port{}); return fd;", i)});
    fs.push_back(
        {fmt::format("renderWidget{}", i), "", fmt::format("draw(canvas, pixel{}); paint();", i)});
  }
  // Unrelated functions, so that the words above are informative (in at most a tenth).
  for (int i = 0; i < 120; ++i) {
    fs.push_back({fmt::format("helperNumber{}", i), "", fmt::format("return value{} + 1;", i)});
  }
  return fs;
}

TEST(AssocModelTest, LearnsWhichNamesTheWordsPredict) {
  AssocModel m = AssocModel::Learn(Corpus());
  EXPECT_EQ(m.functions(), 156u);
  std::unordered_map<std::string, double> e = m.Expand({CanonicalWord("peer")});
  ASSERT_TRUE(e.count(CanonicalWord("socket")));
  EXPECT_GT(e[CanonicalWord("socket")], 0.5);
  EXPECT_EQ(e.count(CanonicalWord("checksum")), 0u);
  e = m.Expand({CanonicalWord("poly"), CanonicalWord("bytes")});
  EXPECT_TRUE(e.count(CanonicalWord("checksum")));
  EXPECT_EQ(e.count(CanonicalWord("widget")), 0u);
  // Unknown words predict nothing.
  EXPECT_TRUE(m.Expand({"zebra"}).empty());
}

TEST(AssocModelTest, SerializesAndParsesBack) {
  AssocModel m = AssocModel::Learn(Corpus());
  AssocModel back = AssocModel::Parse(m.Serialize());
  EXPECT_EQ(back.functions(), m.functions());
  EXPECT_EQ(back.words(), m.words());
  EXPECT_EQ(back.Serialize(), m.Serialize());
  // Garbage lines are skipped, never fatal.
  AssocModel junk = AssocModel::Parse("no tab\n\tx\nw\ta:2 b:0.5 c:x :0.3\n");
  ASSERT_EQ(junk.Of("w").size(), 1u);
  EXPECT_EQ(junk.Of("w")[0].name_word, "b");
}

TEST(AssocModelTest, SavedInTheStoreAndLoadedOnce) {
  auto st = store::Store::Open(":memory:");
  ASSERT_TRUE(st.ok());
  auto none = AssocModel::Load(**st);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  ASSERT_TRUE(AssocModel::LearnAndSave(**st, "run_1").ok());  // an empty store: empty model
  auto loaded = AssocModel::Load(**st);
  ASSERT_TRUE(loaded.ok());
  ASSERT_NE(*loaded, nullptr);
  EXPECT_EQ((*loaded)->functions(), 0u);
  auto again = AssocModel::Load(**st);
  EXPECT_EQ(again->get(), loaded->get());  // cached
}

TEST(AssocModelTest, NameWordsAreCanonicalContentWords) {
  EXPECT_EQ(CanonicalNameWords("parseHttpHeaders"),
            (std::vector<std::string>{CanonicalWord("parse"), CanonicalWord("http"),
                                      CanonicalWord("headers")}));
  EXPECT_TRUE(CanonicalNameWords("_").empty());
}

}  // namespace
}  // namespace trove::librarian::query

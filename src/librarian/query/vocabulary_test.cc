#include "librarian/query/vocabulary.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace trove::librarian::query {
namespace {

// Examples from Porter's paper (1980) and the reference vocabulary's output file.
TEST(PorterStemTest, PaperExamples) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"caresses", "caress"},
      {"ponies", "poni"},
      {"ties", "ti"},
      {"caress", "caress"},
      {"cats", "cat"},
      {"feed", "feed"},
      {"agreed", "agre"},
      {"plastered", "plaster"},
      {"bled", "bled"},
      {"motoring", "motor"},
      {"sing", "sing"},
      {"conflated", "conflat"},
      {"troubled", "troubl"},
      {"sized", "size"},
      {"hopping", "hop"},
      {"tanned", "tan"},
      {"falling", "fall"},
      {"hissing", "hiss"},
      {"fizzed", "fizz"},
      {"failing", "fail"},
      {"filing", "file"},
      {"happy", "happi"},
      {"sky", "sky"},
      {"relational", "relat"},
      {"conditional", "condit"},
      {"rational", "ration"},
      {"valenci", "valenc"},
      {"digitizer", "digit"},
      {"conformabli", "conform"},
      {"radicalli", "radic"},
      {"differentli", "differ"},
      {"vileli", "vile"},
      {"analogousli", "analog"},
      {"vietnamization", "vietnam"},
      {"predication", "predic"},
      {"operator", "oper"},
      {"feudalism", "feudal"},
      {"decisiveness", "decis"},
      {"hopefulness", "hope"},
      {"callousness", "callous"},
      {"formaliti", "formal"},
      {"sensitiviti", "sensit"},
      {"sensibiliti", "sensibl"},
      {"triplicate", "triplic"},
      {"formative", "form"},
      {"formalize", "formal"},
      {"electriciti", "electr"},
      {"electrical", "electr"},
      {"hopeful", "hope"},
      {"goodness", "good"},
      {"revival", "reviv"},
      {"allowance", "allow"},
      {"inference", "infer"},
      {"airliner", "airlin"},
      {"gyroscopic", "gyroscop"},
      {"adjustable", "adjust"},
      {"defensible", "defens"},
      {"irritant", "irrit"},
      {"replacement", "replac"},
      {"adjustment", "adjust"},
      {"dependent", "depend"},
      {"adoption", "adopt"},
      {"homologou", "homolog"},
      {"communism", "commun"},
      {"activate", "activ"},
      {"angulariti", "angular"},
      {"homologous", "homolog"},
      {"effective", "effect"},
      {"bowdlerize", "bowdler"},
      {"probate", "probat"},
      {"rate", "rate"},
      {"cease", "ceas"},
      {"controll", "control"},
      {"roll", "roll"},
  };
  for (const auto& [word, stem] : cases) EXPECT_EQ(PorterStem(word), stem) << word;
}

TEST(PorterStemTest, InflectionsOfCodeWordsMeet) {
  EXPECT_EQ(PorterStem("carried"), PorterStem("carries"));
  EXPECT_EQ(PorterStem("credential"), PorterStem("credentials"));
  EXPECT_EQ(PorterStem("initializes"), PorterStem("initialization"));
  EXPECT_EQ(PorterStem("parsing"), PorterStem("parse"));
  EXPECT_EQ(PorterStem("sends"), "send");
}

TEST(PorterStemTest, LeavesShortAndNonLowerAsciiWordsAlone) {
  EXPECT_EQ(PorterStem("is"), "is");
  EXPECT_EQ(PorterStem("Sends"), "Sends");
  EXPECT_EQ(PorterStem("utf8"), "utf8");
  EXPECT_EQ(PorterStem(""), "");
}

TEST(CanonicalWordTest, AbbreviationsMeetTheirWords) {
  EXPECT_EQ(CanonicalWord("msg"), CanonicalWord("messages"));
  EXPECT_EQ(CanonicalWord("init"), CanonicalWord("initializes"));
  EXPECT_EQ(CanonicalWord("buf"), CanonicalWord("buffer"));
  EXPECT_EQ(CanonicalWord("cfg"), "configur");
  EXPECT_EQ(CanonicalWord("socket"), "socket");
  // An abbreviation that is a table word itself keeps its meaning: "count" is not "number".
  EXPECT_EQ(CanonicalWord("count"), "count");
  EXPECT_NE(CanonicalWord("count"), CanonicalWord("number"));
}

std::unordered_set<std::string> Canonical(std::initializer_list<std::string_view> words) {
  std::unordered_set<std::string> out;
  for (std::string_view w : words) out.insert(CanonicalWord(w));
  return out;
}

TEST(MatchNameWordsTest, SharesOfNameIntentAndOwnerWords) {
  // "Gets the current mode": content words get(s), current, mode.
  const auto intent = Canonical({"gets", "current", "mode"});
  NameWordMatch m = MatchNameWords("getMode", "Agent.getMode", intent);
  EXPECT_DOUBLE_EQ(m.name_words, 1.0);        // get, mode: both found
  EXPECT_DOUBLE_EQ(m.intent_words, 2.0 / 3);  // get, mode of three
  EXPECT_DOUBLE_EQ(m.owner_words, 0.0);       // "agent" is not in the intent
  m = MatchNameWords("getModeName", "getModeName", intent);
  EXPECT_DOUBLE_EQ(m.name_words, 2.0 / 3);  // name is not in the intent
  EXPECT_DOUBLE_EQ(m.owner_words, 0.0);     // no owner
}

TEST(MatchNameWordsTest, StopWordsLeftOutOfTheName) {
  // "Handle socket close": onClose's content sub-word is close alone.
  const auto intent = Canonical({"handle", "socket", "close"});
  NameWordMatch m = MatchNameWords("onClose", "Socks5Client.onClose", intent);
  EXPECT_DOUBLE_EQ(m.name_words, 1.0);
  EXPECT_DOUBLE_EQ(m.intent_words, 1.0 / 3);
  m = MatchNameWords("onClose", "SocketHandler.onClose", intent);
  EXPECT_DOUBLE_EQ(m.owner_words, 1.0 / 3);  // socket; "handler" stems apart from "handle"
  m = MatchNameWords("onClose", "Socks5Client.onClose", intent);
  EXPECT_DOUBLE_EQ(m.owner_words, 0.0);
  // A name of stop words only has no content: name_words 0.
  EXPECT_DOUBLE_EQ(MatchNameWords("is", "is", intent).name_words, 0.0);
}

TEST(MatchNameWordsTest, InflectionsAndAbbreviationsMeet) {
  // "Whether the request carried a credential": carries/carried, credentials/credential.
  const auto intent = Canonical({"whether", "request", "carried", "credential"});
  NameWordMatch m =
      MatchNameWords("requestCarriesCredentials", "requestCarriesCredentials", intent);
  EXPECT_DOUBLE_EQ(m.name_words, 1.0);
  EXPECT_DOUBLE_EQ(m.intent_words, 3.0 / 4);
  // "Initializes the message buffer" meets initMsgBuf.
  const auto init = Canonical({"initializes", "message", "buffer"});
  m = MatchNameWords("initMsgBuf", "initMsgBuf", init);
  EXPECT_DOUBLE_EQ(m.name_words, 1.0);
  EXPECT_DOUBLE_EQ(m.intent_words, 1.0);
  // An empty intent matches nothing.
  EXPECT_DOUBLE_EQ(MatchNameWords("initMsgBuf", "initMsgBuf", {}).name_words, 0.0);
}

}  // namespace
}  // namespace trove::librarian::query

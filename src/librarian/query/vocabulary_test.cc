#include "librarian/query/vocabulary.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace trove::librarian::query {
namespace {

// Examples from Porter's paper (1980) and the reference vocabulary's output file.
TEST(PorterStemTest, PaperExamples) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"caresses", "caress"},   {"ponies", "poni"},        {"ties", "ti"},
      {"caress", "caress"},     {"cats", "cat"},           {"feed", "feed"},
      {"agreed", "agre"},       {"plastered", "plaster"},  {"bled", "bled"},
      {"motoring", "motor"},    {"sing", "sing"},          {"conflated", "conflat"},
      {"troubled", "troubl"},   {"sized", "size"},         {"hopping", "hop"},
      {"tanned", "tan"},        {"falling", "fall"},       {"hissing", "hiss"},
      {"fizzed", "fizz"},       {"failing", "fail"},       {"filing", "file"},
      {"happy", "happi"},       {"sky", "sky"},            {"relational", "relat"},
      {"conditional", "condit"}, {"rational", "ration"},   {"valenci", "valenc"},
      {"digitizer", "digit"},   {"conformabli", "conform"}, {"radicalli", "radic"},
      {"differentli", "differ"}, {"vileli", "vile"},       {"analogousli", "analog"},
      {"vietnamization", "vietnam"}, {"predication", "predic"}, {"operator", "oper"},
      {"feudalism", "feudal"},  {"decisiveness", "decis"}, {"hopefulness", "hope"},
      {"callousness", "callous"}, {"formaliti", "formal"}, {"sensitiviti", "sensit"},
      {"sensibiliti", "sensibl"}, {"triplicate", "triplic"}, {"formative", "form"},
      {"formalize", "formal"},  {"electriciti", "electr"}, {"electrical", "electr"},
      {"hopeful", "hope"},      {"goodness", "good"},      {"revival", "reviv"},
      {"allowance", "allow"},   {"inference", "infer"},    {"airliner", "airlin"},
      {"gyroscopic", "gyroscop"}, {"adjustable", "adjust"}, {"defensible", "defens"},
      {"irritant", "irrit"},    {"replacement", "replac"}, {"adjustment", "adjust"},
      {"dependent", "depend"},  {"adoption", "adopt"},     {"homologou", "homolog"},
      {"communism", "commun"},  {"activate", "activ"},     {"angulariti", "angular"},
      {"homologous", "homolog"}, {"effective", "effect"},  {"bowdlerize", "bowdler"},
      {"probate", "probat"},    {"rate", "rate"},          {"cease", "ceas"},
      {"controll", "control"},  {"roll", "roll"},
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

TEST(AbbreviationsTest, AnyInflectionFindsTheEntry) {
  EXPECT_EQ(Abbreviations("initialize"), std::vector<std::string_view>{"init"});
  EXPECT_EQ(Abbreviations("initializes"), std::vector<std::string_view>{"init"});
  EXPECT_EQ(Abbreviations("messages"), std::vector<std::string_view>{"msg"});
  EXPECT_EQ(Abbreviations("arguments"), (std::vector<std::string_view>{"arg", "args", "argv"}));
  EXPECT_TRUE(Abbreviations("socket").empty());
  EXPECT_TRUE(Abbreviations("Message").empty());
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

TEST(PluralFormsTest, RegularPlurals) {
  EXPECT_EQ(PluralForms("credential"), std::vector<std::string>{"credentials"});
  EXPECT_EQ(PluralForms("carry"), std::vector<std::string>{"carries"});
  EXPECT_EQ(PluralForms("key"), std::vector<std::string>{"keys"});
  EXPECT_EQ(PluralForms("match"), std::vector<std::string>{"matches"});
  EXPECT_EQ(PluralForms("box"), std::vector<std::string>{"boxes"});
  EXPECT_TRUE(PluralForms("headers").empty());
  EXPECT_TRUE(PluralForms("ab").empty());
  EXPECT_TRUE(PluralForms("Name").empty());
}

}  // namespace
}  // namespace trove::librarian::query

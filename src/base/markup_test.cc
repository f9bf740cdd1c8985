#include "base/markup.h"

#include <gtest/gtest.h>

namespace trove::base {
namespace {

TEST(MarkupTest, EscapesTheFiveSpecialCharacters) {
  EXPECT_EQ(EscapeMarkup("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
  EXPECT_EQ(EscapeMarkup("a&b \"c\""), "a&amp;b &quot;c&quot;");
  EXPECT_EQ(EscapeMarkup("\" onmouseover=\"x"), "&quot; onmouseover=&quot;x");
  // An entity in the input is escaped again, not passed through.
  EXPECT_EQ(EscapeMarkup("&lt;"), "&amp;lt;");
}

TEST(MarkupTest, KeepsValidUtf8AndWhitespace) {
  EXPECT_EQ(EscapeMarkup("Kōdo \xF0\x9F\x98\x80\ttab\nline\r"),
            "Kōdo \xF0\x9F\x98\x80\ttab\nline\r");
}

TEST(MarkupTest, ReplacesWhatXmlForbids) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(EscapeMarkup(std::string("a\0b", 3)), "a" + r + "b");
  EXPECT_EQ(EscapeMarkup("\x1b[31m"), r + "[31m");
  EXPECT_EQ(EscapeMarkup("\x7f"), r);
  EXPECT_EQ(EscapeMarkup("\xff\xfe"), r + r);                   // not UTF-8
  EXPECT_EQ(EscapeMarkup("\xC0\xAF"), r + r);                   // overlong '/'
  EXPECT_EQ(EscapeMarkup("\xED\xA0\x80"), r + r + r);           // a surrogate
  EXPECT_EQ(EscapeMarkup("\xE2\x82"), r + r);                   // truncated sequence
  EXPECT_EQ(EscapeMarkup("\xEF\xBF\xBF"), r + r + r);           // U+FFFF
  EXPECT_EQ(EscapeMarkup("x\xE2\x82<"), "x" + r + r + "&lt;");  // resynchronises
}

}  // namespace
}  // namespace trove::base

#include "mcp/jsonrpc.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mcp/json.h"

namespace trove::mcp {
namespace {

ParsedMessage Parse(std::string_view text, ParseLimits limits = {}) {
  return ParseMessage(text, limits);
}

// The error response a transport writes for a message that did not parse.
std::string ErrorReply(const ParsedMessage& parsed) {
  return SerializeError(parsed.error_id, parsed.error);
}

// A request `{"jsonrpc":"2.0","id":<id>,"method":"ping"}` with `id_text` spliced in verbatim.
std::string PingWithId(std::string_view id_text) {
  return std::string(R"({"jsonrpc":"2.0","id":)") + std::string(id_text) + R"(,"method":"ping"})";
}

// ---------------------------------------------------------------------------------------------
// Classification

TEST(ParseMessageTest, ClassifiesARequest) {
  ParsedMessage p =
      Parse(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x","y":[1]}})");
  ASSERT_TRUE(p.message.has_value());
  EXPECT_EQ(p.message->kind, MessageKind::kRequest);
  EXPECT_EQ(Dump(p.message->id), "1");
  EXPECT_EQ(p.message->method, "tools/list");
  EXPECT_EQ(Dump(p.message->params), R"({"cursor":"x","y":[1]})");
  EXPECT_TRUE(p.message->result.is_null());
  EXPECT_TRUE(p.message->error.is_null());
}

TEST(ParseMessageTest, RequestWithoutParamsHasNullParams) {
  ParsedMessage p = Parse(R"({"jsonrpc":"2.0","id":"a","method":"ping"})");
  ASSERT_TRUE(p.message.has_value());
  EXPECT_EQ(p.message->kind, MessageKind::kRequest);
  EXPECT_EQ(Dump(p.message->id), R"("a")");
  EXPECT_TRUE(p.message->params.is_null());
}

TEST(ParseMessageTest, UnknownTopLevelFieldsAreIgnored) {
  ParsedMessage p = Parse(R"({"jsonrpc":"2.0","id":1,"method":"ping","extra":{"a":1}})");
  ASSERT_TRUE(p.message.has_value());
  EXPECT_EQ(p.message->kind, MessageKind::kRequest);
}

TEST(ParseMessageTest, ClassifiesANotification) {
  ParsedMessage p = Parse(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(p.message.has_value());
  EXPECT_EQ(p.message->kind, MessageKind::kNotification);
  EXPECT_EQ(p.message->method, "notifications/initialized");
  EXPECT_TRUE(p.message->id.is_null());

  ParsedMessage q =
      Parse(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}})");
  ASSERT_TRUE(q.message.has_value());
  EXPECT_EQ(q.message->kind, MessageKind::kNotification);
  EXPECT_EQ(Dump(q.message->params), R"({"requestId":5})");
}

TEST(ParseMessageTest, ClassifiesAResultResponse) {
  ParsedMessage p = Parse(R"({"jsonrpc":"2.0","id":3,"result":{"action":"accept"}})");
  ASSERT_TRUE(p.message.has_value());
  EXPECT_EQ(p.message->kind, MessageKind::kResponse);
  EXPECT_EQ(Dump(p.message->id), "3");
  EXPECT_EQ(Dump(p.message->result), R"({"action":"accept"})");
  EXPECT_TRUE(p.message->error.is_null());
  EXPECT_TRUE(p.message->method.empty());
}

TEST(ParseMessageTest, ClassifiesAnErrorResponse) {
  ParsedMessage p =
      Parse(R"({"jsonrpc":"2.0","id":"r1","error":{"code":-32601,"message":"nope"}})");
  ASSERT_TRUE(p.message.has_value());
  EXPECT_EQ(p.message->kind, MessageKind::kResponse);
  EXPECT_EQ(Dump(p.message->id), R"("r1")");
  EXPECT_EQ(Dump(p.message->error), R"({"code":-32601,"message":"nope"})");
}

TEST(ParseMessageTest, AResponseWithBothOrNeitherResultAndErrorIsInvalid) {
  for (const char* text :
       {R"({"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1}})", R"({"jsonrpc":"2.0","id":3})",
        R"({"jsonrpc":"2.0","id":3,"error":"bad"})"}) {
    SCOPED_TRACE(text);
    ParsedMessage p = Parse(text);
    ASSERT_FALSE(p.message.has_value());
    EXPECT_EQ(p.error.code, error_code::kInvalidRequest);
    EXPECT_EQ(Dump(p.error_id), "3");
  }
}

// ---------------------------------------------------------------------------------------------
// Ids keep their JSON type and value

TEST(ParseMessageTest, IdsAreEchoedWithTheirExactTypeAndValue) {
  for (const char* id : {"5", R"("5")", "-1", "9007199254740993", R"("")", "0",
                         "-9223372036854775808", "18446744073709551615", R"("a\"b")"}) {
    SCOPED_TRACE(id);
    ParsedMessage p = Parse(PingWithId(id));
    ASSERT_TRUE(p.message.has_value());
    EXPECT_EQ(p.message->kind, MessageKind::kRequest);
    EXPECT_EQ(SerializeResult(p.message->id, Json::object()),
              std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"result":{}})");
    EXPECT_EQ(SerializeError(p.message->id, ProtocolError{-32601, "m", nullptr}),
              std::string(R"({"jsonrpc":"2.0","id":)") + id +
                  R"(,"error":{"code":-32601,"message":"m"}})");
  }
}

TEST(ParseMessageTest, IdKeyDistinguishesTypes) {
  EXPECT_NE(IdKey(Json(5)), IdKey(Json("5")));
  EXPECT_EQ(IdKey(Parse(PingWithId("5")).message->id), IdKey(Json(5)));
  EXPECT_EQ(IdKey(Parse(PingWithId("-1")).message->id), IdKey(Json(-1)));
  EXPECT_EQ(IdKey(Parse(PingWithId(R"("5")")).message->id), IdKey(Json("5")));
}

TEST(ParseMessageTest, InvalidIdsAreRejectedWithNullId) {
  for (const char* id : {"null", "true", "false", "1.5", "{}", "[]", "[1]", R"({"a":1})"}) {
    SCOPED_TRACE(id);
    ParsedMessage p = Parse(PingWithId(id));
    ASSERT_FALSE(p.message.has_value());
    EXPECT_EQ(p.error.code, error_code::kInvalidRequest);
    EXPECT_TRUE(p.error_id.is_null());
    std::string reply = ErrorReply(p);
    EXPECT_EQ(reply.rfind(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,)", 0), 0u) << reply;
  }
}

// ---------------------------------------------------------------------------------------------
// Not a message object: -32600, with the id when it is valid

TEST(ParseMessageTest, BatchesAreRejected) {
  for (const char* text : {R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])", "[]",
                           R"([{"jsonrpc":"2.0","method":"notifications/initialized"}])"}) {
    SCOPED_TRACE(text);
    ParsedMessage p = Parse(text);
    ASSERT_FALSE(p.message.has_value());
    EXPECT_EQ(p.error.code, error_code::kInvalidRequest);
    EXPECT_TRUE(p.error_id.is_null());
  }
}

TEST(ParseMessageTest, ScalarsAreRejected) {
  for (const char* text : {"5", R"("ping")", "null", "true"}) {
    SCOPED_TRACE(text);
    ParsedMessage p = Parse(text);
    ASSERT_FALSE(p.message.has_value());
    EXPECT_EQ(p.error.code, error_code::kInvalidRequest);
    EXPECT_TRUE(p.error_id.is_null());
  }
}

TEST(ParseMessageTest, MissingOrWrongJsonrpcIsRejectedWithTheId) {
  struct Case {
    const char* text;
    const char* id;
  };
  for (const Case& c : {Case{R"({"id":7,"method":"ping"})", "7"},
                        Case{R"({"jsonrpc":"1.0","id":"a","method":"ping"})", R"("a")"},
                        Case{R"({"jsonrpc":2.0,"id":-3,"method":"ping"})", "-3"},
                        Case{R"({"jsonrpc":"2.0 ","id":8,"method":"ping"})", "8"},
                        Case{R"({"id":true,"method":"ping"})", "null"},
                        Case{R"({"method":"notifications/initialized"})", "null"}}) {
    SCOPED_TRACE(c.text);
    ParsedMessage p = Parse(c.text);
    ASSERT_FALSE(p.message.has_value());
    EXPECT_EQ(p.error.code, error_code::kInvalidRequest);
    EXPECT_EQ(Dump(p.error_id), c.id);
  }
}

TEST(ParseMessageTest, NonStringMethodIsRejectedWithTheId) {
  for (const char* method : {"5", "null", "{}", R"(["ping"])"}) {
    SCOPED_TRACE(method);
    ParsedMessage p = Parse(std::string(R"({"jsonrpc":"2.0","id":7,"method":)") + method + "}");
    ASSERT_FALSE(p.message.has_value());
    EXPECT_EQ(p.error.code, error_code::kInvalidRequest);
    EXPECT_EQ(Dump(p.error_id), "7");
  }
}

TEST(ParseMessageTest, NonObjectParamsAreRejectedWithTheId) {
  for (const char* params : {"[1,2]", R"("x")", "5", "null", "true"}) {
    SCOPED_TRACE(params);
    ParsedMessage p = Parse(
        std::string(R"({"jsonrpc":"2.0","id":"q","method":"tools/list","params":)") + params + "}");
    ASSERT_FALSE(p.message.has_value());
    EXPECT_EQ(p.error.code, error_code::kInvalidRequest);
    EXPECT_EQ(Dump(p.error_id), R"("q")");
  }
  // A notification with bad params has no id to answer with.
  ParsedMessage n = Parse(R"({"jsonrpc":"2.0","method":"notifications/x","params":[1]})");
  ASSERT_FALSE(n.message.has_value());
  EXPECT_EQ(n.error.code, error_code::kInvalidRequest);
  EXPECT_TRUE(n.error_id.is_null());
}

// ---------------------------------------------------------------------------------------------
// Parse errors: -32700, always with a null id

TEST(ParseMessageTest, InvalidJsonIsAParseError) {
  for (const char* text : {"not json", R"({"jsonrpc":"2.0","id":1,"method":"ping")",
                           R"({"jsonrpc":"2.0","id":1,"method":"ping"}})", "{'a':1}", "",
                           R"({"jsonrpc":"2.0","id":1,"method":"ping",})"}) {
    SCOPED_TRACE(text);
    ParsedMessage p = Parse(text);
    ASSERT_FALSE(p.message.has_value());
    EXPECT_EQ(p.error.code, error_code::kParseError);
    EXPECT_TRUE(p.error_id.is_null());
  }
}

TEST(ParseMessageTest, InvalidUtf8IsAParseError) {
  for (std::string bad : {std::string("\xff"), std::string("\xc0\xaf"), std::string("\xe2\x82"),
                          std::string("\xed\xa0\x80"), std::string("a\x80z")}) {
    std::string text = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":")" + bad + "\"}}";
    ParsedMessage p = Parse(text);
    ASSERT_FALSE(p.message.has_value());
    EXPECT_EQ(p.error.code, error_code::kParseError);
    EXPECT_TRUE(p.error_id.is_null());
  }
  // A lone surrogate escape is not valid Unicode either.
  ParsedMessage p = Parse(R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"s":"\ud800"}})");
  ASSERT_FALSE(p.message.has_value());
  EXPECT_EQ(p.error.code, error_code::kParseError);
  // Valid multi-byte UTF-8 is fine.
  EXPECT_TRUE(Parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":"
                    "{\"s\":\"h\\u00e9 \xe2\x82\xac\"}}")
                  .message.has_value());
}

// Returns a request whose params nest `extra` arrays below the params object, so that the
// whole message is 2 + extra deep.
std::string NestedRequest(int extra) {
  std::string text = R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"a":)";
  text += std::string(static_cast<std::size_t>(extra), '[');
  text += std::string(static_cast<std::size_t>(extra), ']');
  text += "}}";
  return text;
}

TEST(ParseMessageTest, NestingDeeperThanTheLimitIsAParseError) {
  ASSERT_EQ(JsonNestingDepth(NestedRequest(62), 1000), 64);
  ParsedMessage ok = Parse(NestedRequest(62));
  ASSERT_TRUE(ok.message.has_value());

  ParsedMessage p = Parse(NestedRequest(63));  // 65 deep
  ASSERT_FALSE(p.message.has_value());
  EXPECT_EQ(p.error.code, error_code::kParseError);
  EXPECT_TRUE(p.error_id.is_null());  // even though the id was readable

  ParsedMessage deep = Parse(std::string(100000, '[') + std::string(100000, ']'));
  ASSERT_FALSE(deep.message.has_value());
  EXPECT_EQ(deep.error.code, error_code::kParseError);

  ParseLimits tight;
  tight.max_depth = 2;
  EXPECT_TRUE(
      Parse(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{}})", tight).message.has_value());
  EXPECT_EQ(Parse(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[]}})", tight).error.code,
            error_code::kParseError);
}

TEST(ParseMessageTest, OversizeMessagesAreInvalidRequests) {
  ParseLimits limits;
  limits.max_message_bytes = 100;
  std::string text = R"({"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":")";
  std::string tail = "\"}}";
  std::string exact = text + std::string(100 - text.size() - tail.size(), 'x') + tail;
  ASSERT_EQ(exact.size(), 100u);
  EXPECT_TRUE(Parse(exact, limits).message.has_value());

  std::string over = text + std::string(101 - text.size() - tail.size(), 'x') + tail;
  ParsedMessage p = Parse(over, limits);
  ASSERT_FALSE(p.message.has_value());
  EXPECT_EQ(p.error.code, error_code::kInvalidRequest);
  EXPECT_TRUE(p.error_id.is_null());
  EXPECT_NE(p.error.message.find("100"), std::string::npos) << p.error.message;
}

// ---------------------------------------------------------------------------------------------
// JsonNestingDepth

TEST(JsonNestingDepthTest, CountsObjectsAndArrays) {
  EXPECT_EQ(JsonNestingDepth("", 64), 0);
  EXPECT_EQ(JsonNestingDepth("5", 64), 0);
  EXPECT_EQ(JsonNestingDepth("[]", 64), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a":{"b":[1]}})", 64), 3);
  EXPECT_EQ(JsonNestingDepth("[[],[[]],[]]", 64), 3);
}

TEST(JsonNestingDepthTest, IgnoresBracketsInsideStrings) {
  EXPECT_EQ(JsonNestingDepth(R"({"a":"[[[{{{"})", 64), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"a":"\"[[[","b":"\\"})", 64), 1);
  EXPECT_EQ(JsonNestingDepth(R"({"[[[":"]]]]]]"})", 64), 1);
  EXPECT_EQ(JsonNestingDepth(R"(["\\",[["x\"]"]]])", 64), 3);
  // A string full of brackets does not make a shallow message too deep.
  std::string text =
      R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"s":")" + std::string(200, '[') + R"("}})";
  EXPECT_EQ(JsonNestingDepth(text, 64), 2);
  EXPECT_TRUE(ParseMessage(text, {}).message.has_value());
}

TEST(JsonNestingDepthTest, StopsAtTheLimit) {
  EXPECT_EQ(JsonNestingDepth("[[[[[[", 3), 4);
  EXPECT_EQ(JsonNestingDepth("[[[]]]", 3), 3);
}

// ---------------------------------------------------------------------------------------------
// Serializers

TEST(SerializeTest, WritesCompactMessages) {
  EXPECT_EQ(SerializeResult(Json(1), Json{{"a", 1}, {"b", "x"}}),
            R"({"jsonrpc":"2.0","id":1,"result":{"a":1,"b":"x"}})");
  EXPECT_EQ(SerializeError(nullptr, ProtocolError{-32700, "parse error", nullptr}),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}})");
  EXPECT_EQ(
      SerializeError(Json("x"), ProtocolError{-32002, "resource not found: u", Json{{"uri", "u"}}}),
      R"({"jsonrpc":"2.0","id":"x","error":{"code":-32002,"message":"resource not found: u","data":{"uri":"u"}}})");
  EXPECT_EQ(SerializeNotification("notifications/initialized", nullptr),
            R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  EXPECT_EQ(SerializeNotification("notifications/progress", Json{{"progress", 1}}),
            R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}})");
  EXPECT_EQ(SerializeRequest(Json(4), "sampling/createMessage", Json{{"a", 1}}),
            R"({"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"a":1}})");
}

TEST(SerializeTest, OutputIsOneLineEvenWithNewlinesInStrings) {
  std::string s = SerializeResult(Json(1), Json{{"text", "a\nb\r\nc"}});
  EXPECT_EQ(s.find('\n'), std::string::npos);
  EXPECT_EQ(s.find('\r'), std::string::npos);
}

TEST(SerializeTest, InvalidUtf8FromHandlersBecomesReplacementCharacters) {
  std::string s = SerializeResult(Json(1), Json{{"text", std::string("a\xff"
                                                                     "b")}});
  EXPECT_EQ(s,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"a\xef\xbf\xbd"
            "b\"}}");
  EXPECT_FALSE(ParseJson(s).is_discarded());
}

// ---------------------------------------------------------------------------------------------
// QuoteForMessage

TEST(QuoteForMessageTest, QuotesAndCutsAt80Bytes) {
  EXPECT_EQ(QuoteForMessage(Json("L9")), R"("L9")");
  EXPECT_EQ(QuoteForMessage(Json(12)), "12");
  std::string long_value(100, 'x');
  std::string quoted = QuoteForMessage(Json(long_value));
  EXPECT_EQ(quoted, "\"" + std::string(79, 'x') + "...");
}

TEST(QuoteForMessageTest, DoesNotSplitAUtf8Sequence) {
  std::string value;
  for (int i = 0; i < 60; ++i) value += "\xc3\xa9";  // é
  std::string quoted = QuoteForMessage(Json(value));
  // Byte 80 of "\"éé..." is a continuation byte: the cut moves back to byte 79.
  ASSERT_GE(quoted.size(), 3u);
  EXPECT_EQ(quoted.substr(quoted.size() - 3), "...");
  std::string kept = quoted.substr(0, quoted.size() - 3);
  EXPECT_EQ(kept.size(), 79u);
  EXPECT_FALSE(ParseJson(kept + "\"").is_discarded());
}

}  // namespace
}  // namespace trove::mcp

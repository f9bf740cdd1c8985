#include "mcp/schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mcp/json.h"

namespace trove::mcp {
namespace {

using ::testing::HasSubstr;

Json J(std::string_view text) {
  Json j = ParseJson(text);
  EXPECT_FALSE(j.is_discarded()) << text;
  return j;
}

// Validates and returns "path: message" lines, in the order returned.
std::vector<std::string> Errors(const Json& schema, const Json& instance) {
  std::vector<std::string> out;
  for (const auto& e : ValidateAgainstSchema(schema, instance)) {
    out.push_back(e.path + ": " + e.message);
  }
  return out;
}

using Lines = std::vector<std::string>;

// ---------------------------------------------------------------------------------------------
// Objects

TEST(ValidateTest, RequiredPropertyMissing) {
  Json schema = J(R"({"type":"object","properties":{"name":{"type":"string"}},
                      "required":["name"]})");
  EXPECT_EQ(Errors(schema, J("{}")), Lines{"arguments.name: required property missing"});
  EXPECT_EQ(Errors(schema, J(R"({"name":"x"})")), Lines{});
}

TEST(ValidateTest, AdditionalPropertiesFalse) {
  Json schema = J(R"({"type":"object","properties":{"a":{"type":"integer"}},
                      "additionalProperties":false})");
  EXPECT_EQ(Errors(schema, J(R"({"a":1,"extra":true})")),
            Lines{"arguments.extra: unexpected property (additionalProperties is false)"});
  // Without properties every key is extra.
  EXPECT_EQ(Errors(J(R"({"type":"object","additionalProperties":false})"), J(R"({"x":1})")),
            Lines{"arguments.x: unexpected property (additionalProperties is false)"});
}

TEST(ValidateTest, AdditionalPropertiesSchema) {
  Json schema = J(R"({"type":"object","additionalProperties":{"type":"integer"}})");
  EXPECT_EQ(Errors(schema, J(R"({"a":1,"b":"x"})")),
            Lines{"arguments.b: expected integer, got string"});
}

TEST(ValidateTest, MinAndMaxProperties) {
  Json schema = J(R"({"type":"object","minProperties":1,"maxProperties":2})");
  EXPECT_EQ(Errors(schema, J("{}")), Lines{"arguments: must have at least 1 properties; got 0"});
  EXPECT_EQ(Errors(schema, J(R"({"a":1,"b":2,"c":3})")),
            Lines{"arguments: must have at most 2 properties; got 3"});
  EXPECT_EQ(Errors(schema, J(R"({"a":1})")), Lines{});
}

TEST(ValidateTest, FalseSchemaRejectsAnyValue) {
  Json schema = J(R"({"type":"object","properties":{"a":false}})");
  EXPECT_EQ(Errors(schema, J(R"({"a":1})")), Lines{"arguments.a: no value is allowed here"});
}

// ---------------------------------------------------------------------------------------------
// Types

TEST(ValidateTest, TypeMismatch) {
  Json schema = J(R"({"type":"object","properties":{
      "s":{"type":"string"},"i":{"type":"integer"},"n":{"type":"number"},
      "b":{"type":"boolean"},"a":{"type":"array"},"o":{"type":"object"},"z":{"type":"null"}}})");
  EXPECT_EQ(
      Errors(schema, J(R"({"s":5,"i":"5","n":true,"b":null,"a":{},"o":[],"z":0})")),
      (Lines{"arguments.a: expected array, got object", "arguments.b: expected boolean, got null",
             "arguments.i: expected integer, got string",
             "arguments.n: expected number, got boolean", "arguments.o: expected object, got array",
             "arguments.s: expected string, got integer",
             "arguments.z: expected null, got integer"}));
  EXPECT_EQ(Errors(schema, J(R"({"i":1.5})")), Lines{"arguments.i: expected integer, got number"});
  EXPECT_EQ(Errors(J(R"({"type":"object"})"), J("[1]")),
            Lines{"arguments: expected object, got array"});
}

TEST(ValidateTest, IntegerAcceptsAZeroFraction) {
  Json schema = J(R"({"type":"integer","minimum":1})");
  EXPECT_EQ(Errors(schema, J("30")), Lines{});
  EXPECT_EQ(Errors(schema, J("30.0")), Lines{});
  EXPECT_EQ(Errors(schema, J("-0.0")), Lines{"arguments: must be at least 1; got 0"});
  EXPECT_EQ(Errors(schema, J("30.5")), Lines{"arguments: expected integer, got number"});
  EXPECT_EQ(Errors(J(R"({"type":"number"})"), J("7")), Lines{});
}

TEST(ValidateTest, ArrayOfTypes) {
  Json schema = J(R"({"type":["string","null"]})");
  EXPECT_EQ(Errors(schema, J("null")), Lines{});
  EXPECT_EQ(Errors(schema, J(R"("x")")), Lines{});
  EXPECT_EQ(Errors(schema, J("5")), Lines{"arguments: expected string or null, got integer"});
  EXPECT_EQ(Errors(J(R"({"type":["integer","boolean","array"]})"), J(R"({"a":1})")),
            Lines{"arguments: expected integer or boolean or array, got object"});
}

TEST(ValidateTest, ATypeMismatchIsReportedAlone) {
  Json schema = J(R"({"type":"string","minLength":3,"enum":["abc"]})");
  EXPECT_EQ(Errors(schema, J("5")), Lines{"arguments: expected string, got integer"});
}

// ---------------------------------------------------------------------------------------------
// enum, const

TEST(ValidateTest, Enum) {
  Json schema = J(R"({"enum":["L0","L1","L2","L3"]})");
  EXPECT_EQ(Errors(schema, J(R"("L9")")),
            Lines{R"(arguments: must be one of "L0", "L1", "L2", "L3"; got "L9")"});
  EXPECT_EQ(Errors(schema, J(R"("L2")")), Lines{});
  EXPECT_EQ(Errors(J(R"({"enum":[1,"a",null]})"), J("2")),
            Lines{R"(arguments: must be one of 1, "a", null; got 2)"});
  EXPECT_EQ(Errors(J(R"({"enum":[1,2]})"), J("2.0")), Lines{});  // 2 and 2.0 are equal
}

TEST(ValidateTest, QuotedValuesAreCutAt80Bytes) {
  std::string long_value(200, 'v');
  std::vector<std::string> errors = Errors(J(R"({"enum":["a"]})"), Json(long_value));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], R"(arguments: must be one of "a"; got ")" + std::string(79, 'v') + "...");
}

TEST(ValidateTest, Const) {
  EXPECT_EQ(Errors(J(R"({"const":"x"})"), J(R"("y")")),
            Lines{R"(arguments: must be "x"; got "y")"});
  EXPECT_EQ(Errors(J(R"({"const":{"a":[1]}})"), J(R"({"a":[1]})")), Lines{});
  EXPECT_EQ(Errors(J(R"({"const":3})"), J("4")), Lines{"arguments: must be 3; got 4"});
}

// ---------------------------------------------------------------------------------------------
// Numbers

TEST(ValidateTest, MinimumAndMaximum) {
  Json schema = J(R"({"type":"integer","minimum":1,"maximum":1000})");
  EXPECT_EQ(Errors(schema, J("0")), Lines{"arguments: must be at least 1; got 0"});
  EXPECT_EQ(Errors(schema, J("1001")), Lines{"arguments: must be at most 1000; got 1001"});
  EXPECT_EQ(Errors(schema, J("1")), Lines{});
  EXPECT_EQ(Errors(schema, J("1000")), Lines{});
  EXPECT_EQ(Errors(J(R"({"minimum":0.5})"), J("0.25")),
            Lines{"arguments: must be at least 0.5; got 0.25"});
  // A bound written as 1.0 reads as 1.
  EXPECT_EQ(Errors(J(R"({"maximum":1.0})"), J("2")), Lines{"arguments: must be at most 1; got 2"});
}

TEST(ValidateTest, ExclusiveMinimumAndMaximum) {
  Json schema = J(R"({"exclusiveMinimum":0,"exclusiveMaximum":10})");
  EXPECT_EQ(Errors(schema, J("0")), Lines{"arguments: must be greater than 0; got 0"});
  EXPECT_EQ(Errors(schema, J("10")), Lines{"arguments: must be less than 10; got 10"});
  EXPECT_EQ(Errors(schema, J("0.001")), Lines{});
  EXPECT_EQ(Errors(schema, J("9.999")), Lines{});
}

TEST(ValidateTest, MultipleOf) {
  EXPECT_EQ(Errors(J(R"({"multipleOf":5})"), J("12")),
            Lines{"arguments: must be a multiple of 5; got 12"});
  EXPECT_EQ(Errors(J(R"({"multipleOf":5})"), J("-15")), Lines{});
  // Binary floating point: 0.3 is a multiple of 0.1.
  EXPECT_EQ(Errors(J(R"({"multipleOf":0.1})"), J("0.3")), Lines{});
  EXPECT_EQ(Errors(J(R"({"multipleOf":0.5})"), J("0.75")),
            Lines{"arguments: must be a multiple of 0.5; got 0.75"});
}

TEST(ValidateTest, NumericKeywordsIgnoreOtherTypes) {
  EXPECT_EQ(Errors(J(R"({"minimum":5,"minLength":5,"minItems":5})"), J("true")), Lines{});
  EXPECT_EQ(Errors(J(R"({"minimum":5})"), J(R"("a")")), Lines{});
}

// ---------------------------------------------------------------------------------------------
// Strings

TEST(ValidateTest, LengthCountsUtf8CodePoints) {
  Json schema = J(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_EQ(Errors(schema, Json("h\xc3\xa9\xc3\xa9")), Lines{});  // 3 code points, 5 bytes
  EXPECT_EQ(Errors(schema, Json("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac")), Lines{});  // €€€
  EXPECT_EQ(Errors(schema, Json("h\xc3\xa9\xc3\xa9l")),
            Lines{"arguments: length must be at most 3; got 4"});
  EXPECT_EQ(Errors(schema, Json("\xc3\xa9")), Lines{"arguments: length must be at least 2; got 1"});
  EXPECT_EQ(Errors(schema, Json("\xf0\x9f\x98\x80")),  // one emoji, four bytes
            Lines{"arguments: length must be at least 2; got 1"});
}

TEST(ValidateTest, SpecExampleLengthMessage) {
  EXPECT_EQ(Errors(J(R"({"maxLength":10000})"), Json(std::string(12345, 'a'))),
            Lines{"arguments: length must be at most 10000; got 12345"});
}

TEST(ValidateTest, Pattern) {
  Json schema = J(R"({"type":"string","pattern":"^[a-z]+$"})");
  EXPECT_EQ(Errors(schema, J(R"("abc")")), Lines{});
  EXPECT_EQ(Errors(schema, J(R"("A1")")),
            Lines{R"(arguments: must match pattern "^[a-z]+$"; got "A1")"});
  // Unanchored patterns match anywhere (ECMAScript search semantics).
  EXPECT_EQ(Errors(J(R"({"pattern":"b"})"), J(R"("abc")")), Lines{});
}

// ---------------------------------------------------------------------------------------------
// Arrays

TEST(ValidateTest, Items) {
  Json schema = J(R"({"type":"object","properties":{
      "include":{"type":"array","items":{"type":"string"}}}})");
  EXPECT_EQ(Errors(schema, J(R"({"include":["a","b",3]})")),
            Lines{"arguments.include[2]: expected string, got integer"});
  EXPECT_EQ(Errors(schema, J(R"({"include":[]})")), Lines{});
}

TEST(ValidateTest, PrefixItems) {
  Json schema = J(R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],
                      "items":{"type":"boolean"}})");
  EXPECT_EQ(Errors(schema, J(R"(["a",1,true,false])")), Lines{});
  EXPECT_EQ(Errors(schema, J(R"(["a"])")), Lines{});
  EXPECT_EQ(Errors(schema, J(R"(["a","b",true,5])")),
            (Lines{"arguments[1]: expected integer, got string",
                   "arguments[3]: expected boolean, got integer"}));
  Json closed = J(R"({"prefixItems":[{"type":"string"}],"items":false})");
  EXPECT_EQ(Errors(closed, J(R"(["a",1])")), Lines{"arguments[1]: no value is allowed here"});
}

TEST(ValidateTest, MinAndMaxItems) {
  Json schema = J(R"({"type":"array","minItems":2,"maxItems":3})");
  EXPECT_EQ(Errors(schema, J("[1]")), Lines{"arguments: must have at least 2 items; got 1"});
  EXPECT_EQ(Errors(schema, J("[1,2,3,4]")), Lines{"arguments: must have at most 3 items; got 4"});
  EXPECT_EQ(Errors(schema, J("[1,2]")), Lines{});
}

TEST(ValidateTest, UniqueItems) {
  Json schema = J(R"({"type":"array","uniqueItems":true})");
  EXPECT_EQ(Errors(schema, J("[1,2,1]")),
            Lines{"arguments: items must be unique; [2] repeats [0]"});
  EXPECT_EQ(Errors(schema, J("[1,1.0]")),
            Lines{"arguments: items must be unique; [1] repeats [0]"});
  EXPECT_EQ(Errors(schema, J(R"([{"a":1,"b":2},{"b":2,"a":1}])")),
            Lines{"arguments: items must be unique; [1] repeats [0]"});
  EXPECT_EQ(Errors(schema, J(R"([1,"1",[1],{"a":1}])")), Lines{});
  EXPECT_EQ(Errors(J(R"({"uniqueItems":false})"), J("[1,1]")), Lines{});
}

// Schemas built in C++ (as servers write them) hold small integers as signed JSON numbers; the
// count keywords must read them too.
TEST(ValidateTest, CountKeywordsWrittenAsSignedIntegersAreEnforced) {
  Json strings = {{"type", "string"}, {"minLength", 2}, {"maxLength", 3}};
  EXPECT_EQ(Errors(strings, Json("a")), Lines{"arguments: length must be at least 2; got 1"});
  EXPECT_EQ(Errors(strings, Json("abcd")), Lines{"arguments: length must be at most 3; got 4"});
  Json arrays = {{"type", "array"}, {"minItems", 1}, {"maxItems", 2}};
  EXPECT_EQ(Errors(arrays, Json::array()), Lines{"arguments: must have at least 1 items; got 0"});
  EXPECT_EQ(Errors(arrays, Json{1, 2, 3}), Lines{"arguments: must have at most 2 items; got 3"});
  Json objects = {{"type", "object"}, {"minProperties", 1}, {"maxProperties", 1}};
  EXPECT_EQ(Errors(objects, Json::object()),
            Lines{"arguments: must have at least 1 properties; got 0"});
}

// ---------------------------------------------------------------------------------------------
// Combinators and $ref

TEST(ValidateTest, AllOf) {
  Json schema = J(R"({"allOf":[{"minimum":1},{"maximum":3}]})");
  EXPECT_EQ(Errors(schema, J("2")), Lines{});
  EXPECT_EQ(Errors(schema, J("5")), Lines{"arguments: must be at most 3; got 5"});
  EXPECT_EQ(Errors(schema, J("0")), Lines{"arguments: must be at least 1; got 0"});
}

TEST(ValidateTest, AnyOf) {
  Json schema = J(R"({"anyOf":[{"type":"string"},{"type":"integer"}]})");
  EXPECT_EQ(Errors(schema, J(R"("x")")), Lines{});
  EXPECT_EQ(Errors(schema, J("3")), Lines{});
  EXPECT_EQ(Errors(schema, J("true")), Lines{"arguments: must match at least one schema in anyOf"});
}

TEST(ValidateTest, OneOf) {
  Json schema = J(R"({"oneOf":[{"type":"integer"},{"minimum":0}]})");
  EXPECT_EQ(Errors(schema, J("5")),
            Lines{"arguments: must match exactly one schema in oneOf; matched 2"});
  EXPECT_EQ(Errors(schema, J("-1")), Lines{});   // integer only
  EXPECT_EQ(Errors(schema, J("1.5")), Lines{});  // minimum only
  EXPECT_EQ(Errors(schema, J("-1.5")),
            Lines{"arguments: must match exactly one schema in oneOf; matched 0"});
}

TEST(ValidateTest, Not) {
  Json schema = J(R"({"not":{"type":"string"}})");
  EXPECT_EQ(Errors(schema, J(R"("x")")), Lines{"arguments: must not match the schema in not"});
  EXPECT_EQ(Errors(schema, J("1")), Lines{});
}

TEST(ValidateTest, LocalRefToDefs) {
  Json schema = J(R"({"$defs":{"pos":{"type":"integer","minimum":1},
                               "item":{"type":"object","properties":{"n":{"$ref":"#/$defs/pos"}},
                                       "required":["n"]}},
                      "type":"object",
                      "properties":{"n":{"$ref":"#/$defs/pos"},
                                    "items":{"type":"array","items":{"$ref":"#/$defs/item"}}}})");
  EXPECT_EQ(Errors(schema, J(R"({"n":1,"items":[{"n":2}]})")), Lines{});
  EXPECT_EQ(Errors(schema, J(R"({"n":0,"items":[{"n":2},{},{"n":"x"}]})")),
            (Lines{"arguments.items[1].n: required property missing",
                   "arguments.items[2].n: expected integer, got string",
                   "arguments.n: must be at least 1; got 0"}));
}

TEST(ValidateTest, UnresolvableRefIsReported) {
  Json schema = J(R"({"properties":{"a":{"$ref":"#/$defs/missing"}}})");
  EXPECT_EQ(Errors(schema, J(R"({"a":1})")),
            Lines{"arguments.a: schema error: unresolvable $ref #/$defs/missing"});
}

TEST(ValidateTest, RecursiveRefTerminates) {
  Json schema = J(R"({"$ref":"#"})");
  std::vector<ValidationError> errors = ValidateAgainstSchema(schema, J("1"));
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].message, "schema nesting too deep");
}

// ---------------------------------------------------------------------------------------------
// Paths, order, formatting

TEST(PathTest, AppendPathKey) {
  auto path = [](std::string_view key) {
    std::string p = "arguments";
    AppendPathKey(p, key);
    return p;
  };
  EXPECT_EQ(path("depth"), "arguments.depth");
  EXPECT_EQ(path("_x9"), "arguments._x9");
  EXPECT_EQ(path("max files"), "arguments['max files']");
  EXPECT_EQ(path("1a"), "arguments['1a']");
  EXPECT_EQ(path("a-b"), "arguments['a-b']");
  EXPECT_EQ(path(""), "arguments['']");
  EXPECT_EQ(path("it's"), R"(arguments['it\'s'])");
  EXPECT_EQ(path(R"(a\b)"), R"(arguments['a\\b'])");
  EXPECT_EQ(path("caf\xc3\xa9"), "arguments['caf\xc3\xa9']");
}

TEST(PathTest, ValidationPathsUseBracketsForOddKeysAndIndexes) {
  Json schema = J(R"({"type":"object","properties":{
      "max files":{"type":"integer"},
      "include":{"type":"array","items":{"type":"string"}},
      "nested":{"type":"object","properties":{"deep key":{"type":"array",
                "items":{"type":"object","properties":{"x":{"type":"boolean"}}}}}}}})");
  EXPECT_EQ(Errors(schema, J(R"({"max files":"ten","include":["a","b",1],
                                 "nested":{"deep key":[{"x":true},{"x":1}]}})")),
            (Lines{"arguments.include[2]: expected string, got integer",
                   "arguments.nested['deep key'][1].x: expected boolean, got integer",
                   "arguments['max files']: expected integer, got string"}));
}

TEST(PathTest, RootPathIsConfigurable) {
  std::vector<ValidationError> errors =
      ValidateAgainstSchema(J(R"({"required":["a"]})"), J("{}"), "structuredContent");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "structuredContent.a");
}

TEST(OrderTest, FailuresAreSortedByPath) {
  Json schema = J(R"({"type":"object","properties":{
      "zeta":{"type":"string"},"alpha":{"type":"string"},"mid":{"type":"string"}},
      "required":["zeta","alpha","mid","beta"],"additionalProperties":false})");
  std::vector<ValidationError> errors =
      ValidateAgainstSchema(schema, J(R"({"zeta":1,"extra":2,"mid":3})"));
  std::vector<std::string> paths;
  for (const auto& e : errors) paths.push_back(e.path);
  EXPECT_EQ(paths, (Lines{"arguments.alpha", "arguments.beta", "arguments.extra", "arguments.mid",
                          "arguments.zeta"}));
}

TEST(OrderTest, SpecExampleFailuresAllReported) {
  Json schema = J(R"({"type":"object","properties":{
      "depth":{"type":"integer","minimum":1},
      "level":{"type":"string","enum":["L0","L1","L2","L3"]},
      "name":{"type":"string"}},
      "required":["name"],"additionalProperties":false})");
  EXPECT_EQ(
      FormatValidationErrors(ValidateAgainstSchema(schema, J(R"({"depth":0,"level":"L9","x":1})"))),
      "arguments.depth: must be at least 1; got 0\n"
      "arguments.level: must be one of \"L0\", \"L1\", \"L2\", \"L3\"; got \"L9\"\n"
      "arguments.name: required property missing\n"
      "arguments.x: unexpected property (additionalProperties is false)");
}

TEST(FormatTest, CapsAtTwentyLines) {
  Json schema = J(R"({"type":"object","additionalProperties":false})");
  auto make = [](int n) {
    Json instance = Json::object();
    for (int i = 0; i < n; ++i) {
      char key[8];
      std::snprintf(key, sizeof key, "k%02d", i);
      instance[key] = i;
    }
    return instance;
  };
  std::string twenty = FormatValidationErrors(ValidateAgainstSchema(schema, make(20)));
  EXPECT_EQ(std::count(twenty.begin(), twenty.end(), '\n'), 19);
  EXPECT_EQ(twenty.find("more"), std::string::npos);

  std::string text = FormatValidationErrors(ValidateAgainstSchema(schema, make(25)));
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (;;) {
    std::size_t nl = text.find('\n', start);
    lines.push_back(text.substr(start, nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  ASSERT_EQ(lines.size(), 21u);
  EXPECT_EQ(lines[0], "arguments.k00: unexpected property (additionalProperties is false)");
  EXPECT_EQ(lines[19], "arguments.k19: unexpected property (additionalProperties is false)");
  EXPECT_EQ(lines[20], "... and 5 more");
}

TEST(FormatTest, EmptyIsEmpty) { EXPECT_EQ(FormatValidationErrors({}), ""); }

// ---------------------------------------------------------------------------------------------
// CheckSchemaSupported

TEST(CheckSchemaSupportedTest, LocalRefsMustResolve) {
  EXPECT_TRUE(CheckSchemaSupported(
                  J(R"({"$defs":{"a":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a"}}})"))
                  .ok());
  Status status = CheckSchemaSupported(J(R"({"properties":{"x":{"$ref":"#/$defs/missing"}}})"));
  EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "#/properties/x/$ref: $ref #/$defs/missing does not resolve");
}

TEST(CheckSchemaSupportedTest, AcceptsTheSupportedSubset) {
  Json schema = J(R"({
    "$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","$comment":"c",
    "title":"T","description":"D","type":"object",
    "$defs":{"n":{"type":"integer","minimum":0,"exclusiveMaximum":9,"multipleOf":1}},
    "properties":{
      "a":{"type":["string","null"],"minLength":1,"maxLength":5,"pattern":"^a","format":"uri",
           "default":"a","examples":["ab"],"deprecated":false,"readOnly":false,
           "writeOnly":false,"contentMediaType":"text/plain","contentEncoding":"base64"},
      "b":{"type":"array","items":{"$ref":"#/$defs/n"},"prefixItems":[{"const":1}],
           "minItems":0,"maxItems":3,"uniqueItems":true},
      "c":{"enum":["x"],"enumNames":["X"]},
      "d":{"allOf":[{}],"anyOf":[true],"oneOf":[{"type":"null"}],"not":false},
      "e":{"type":"object","minProperties":0,"maxProperties":1,"additionalProperties":{"type":"string"}}},
    "required":["a"],"additionalProperties":false})");
  Status status = CheckSchemaSupported(schema);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE(
      CheckSchemaSupported(J(R"({"$schema":"http://json-schema.org/draft-07/schema#"})")).ok());
  EXPECT_TRUE(CheckSchemaSupported(J("true")).ok());
}

TEST(CheckSchemaSupportedTest, RejectsUnknownKeywordsWithTheirPointer) {
  Status top = CheckSchemaSupported(J(R"({"type":"object","patternProperties":{}})"));
  EXPECT_EQ(top.code(), base::StatusCode::kUnsupported);
  EXPECT_EQ(top.message(), "#/patternProperties: unsupported JSON Schema keyword");

  Status nested =
      CheckSchemaSupported(J(R"({"type":"object","properties":{"a":{"type":"string","if":{}}}})"));
  EXPECT_EQ(nested.code(), base::StatusCode::kUnsupported);
  EXPECT_EQ(nested.message(), "#/properties/a/if: unsupported JSON Schema keyword");

  for (const char* text :
       {R"({"items":{"foo":1}})", R"({"anyOf":[{},{"dependentRequired":{}}]})",
        R"({"$defs":{"x":{"unevaluatedProperties":false}}})", R"({"not":{"$anchor":"a"}})",
        R"({"additionalProperties":{"propertyNames":{}}})"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(CheckSchemaSupported(J(text)).code(), base::StatusCode::kUnsupported);
  }
}

TEST(CheckSchemaSupportedTest, RejectsRemoteRefs) {
  Status status =
      CheckSchemaSupported(J(R"({"properties":{"a":{"$ref":"https://example.com/schema.json"}}})"));
  EXPECT_EQ(status.code(), base::StatusCode::kUnsupported);
  EXPECT_EQ(status.message(), "#/properties/a/$ref: only local $ref is supported");
  EXPECT_FALSE(CheckSchemaSupported(J(R"({"$ref":"other.json#/x"})")).ok());
  EXPECT_FALSE(CheckSchemaSupported(J(R"({"$ref":5})")).ok());
  EXPECT_TRUE(CheckSchemaSupported(J(R"({"$defs":{"a":{}},"$ref":"#/$defs/a"})")).ok());
}

TEST(CheckSchemaSupportedTest, RejectsUnknownDialects) {
  for (const char* dialect : {R"("http://json-schema.org/draft-04/schema#")",
                              R"("https://json-schema.org/draft/2019-09/schema")",
                              R"("https://example.com/my-dialect")", "5"}) {
    SCOPED_TRACE(dialect);
    Status status = CheckSchemaSupported(J(std::string(R"({"$schema":)") + dialect + "}"));
    EXPECT_EQ(status.code(), base::StatusCode::kUnsupported);
    EXPECT_EQ(status.message(), "#/$schema: unsupported dialect");
  }
}

TEST(CheckSchemaSupportedTest, RejectsMalformedSchemas) {
  EXPECT_FALSE(CheckSchemaSupported(J(R"({"pattern":"("})")).ok());
  EXPECT_FALSE(CheckSchemaSupported(J(R"({"pattern":5})")).ok());
  EXPECT_FALSE(CheckSchemaSupported(J(R"({"properties":[]})")).ok());
  EXPECT_FALSE(CheckSchemaSupported(J(R"({"allOf":{}})")).ok());
  EXPECT_FALSE(CheckSchemaSupported(J(R"({"items":[{"type":"string"}]})")).ok());  // draft-07 tuple
  EXPECT_FALSE(CheckSchemaSupported(J("5")).ok());
  Status status = CheckSchemaSupported(J(R"({"properties":{"a":{"pattern":"[a-"}}})"));
  EXPECT_THAT(status.message(), HasSubstr("#/properties/a/pattern"));
}

}  // namespace
}  // namespace trove::mcp

#include "mcp/describe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "mcp/json.h"
#include "mcp/registry.h"
#include "mcp/schema.h"

namespace trove::mcp {
namespace {

using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------------------
// Described types

constexpr std::string_view kLevels[] = {"L0", "L1", "L2", "L3"};

struct Inner {
  std::string name;
  std::optional<std::int32_t> depth;
  bool operator==(const Inner&) const = default;
};
auto DescribeFields(Tag<Inner>) {
  return Fields(Field("name", &Inner::name, "A name", Pattern("^[a-z]+$")),
                Field("depth", &Inner::depth, "How deep", InRange(0, 10)));
}

struct Args {
  std::int64_t version_id = 0;
  std::optional<std::int32_t> limit;
  std::vector<std::string> include;
  Inner inner;
  std::string level;
  bool verbose = false;
  double ratio = 0;
  std::optional<std::vector<Inner>> extras;
  std::string note;
  bool operator==(const Args&) const = default;
};
auto DescribeFields(Tag<Args>) {
  return Fields(Field("version_id", &Args::version_id, "A version id from list_versions"),
                Field("limit", &Args::limit, "Page size; omit for all", InRange(1, 1000)),
                Field("include", &Args::include, "Paths to include", ItemsRange(0, 50)),
                Field("inner", &Args::inner, "The inner part"),
                Field("level", &Args::level, "Detail level", OneOf(kLevels)),
                Field("verbose", &Args::verbose, "Say more", NotRequired()),
                Field("ratio", &Args::ratio, "A ratio", InRange(0, 1)),
                Field("extras", &Args::extras, "More inner parts"),
                Field("note", &Args::note, "A note", LengthRange(1, 200), NotRequired()));
}

constexpr const char* kInnerSchema =
    R"({"type":"object","properties":{)"
    R"("name":{"type":"string","description":"A name","pattern":"^[a-z]+$"},)"
    R"("depth":{"type":["integer","null"],"description":"How deep","minimum":0,"maximum":10}},)"
    R"("required":["name"],"additionalProperties":false})";

// The exact schema of Args, key order included (Json keeps insertion order).
std::string ExpectedArgsSchema() {
  std::string inner = kInnerSchema;
  std::string inner_with_description =
      inner.substr(0, inner.size() - 1) + R"(,"description":"The inner part"})";
  return std::string(R"({"type":"object","properties":{)") +
         R"("version_id":{"type":"integer","description":"A version id from list_versions"},)" +
         R"("limit":{"type":["integer","null"],"description":"Page size; omit for all","minimum":1,"maximum":1000},)" +
         R"("include":{"type":"array","items":{"type":"string"},"description":"Paths to include","minItems":0,"maxItems":50},)" +
         R"("inner":)" + inner_with_description + "," +
         R"("level":{"type":"string","description":"Detail level","enum":["L0","L1","L2","L3"]},)" +
         R"("verbose":{"type":"boolean","description":"Say more"},)" +
         R"("ratio":{"type":"number","description":"A ratio","minimum":0.0,"maximum":1.0},)" +
         R"("extras":{"type":["array","null"],"items":)" + inner +
         R"(,"description":"More inner parts"},)" +
         R"("note":{"type":"string","description":"A note","minLength":1,"maxLength":200}},)" +
         R"("required":["version_id","include","inner","level","ratio"],)" +
         R"("additionalProperties":false})";
}

TEST(SchemaForTest, BuildsTheExactSchema) {
  EXPECT_EQ(Dump(SchemaFor<Args>()), ExpectedArgsSchema());
  EXPECT_EQ(Dump(SchemaFor<Inner>()), kInnerSchema);
}

TEST(SchemaForTest, IsBuiltOnce) { EXPECT_EQ(&SchemaFor<Args>(), &SchemaFor<Args>()); }

TEST(SchemaForTest, UsesOnlySupportedKeywords) {
  Status status = CheckSchemaSupported(SchemaFor<Args>());
  EXPECT_TRUE(status.ok()) << status.ToString();
}

TEST(SchemaForTest, NoArgsIsAClosedEmptyObject) {
  EXPECT_EQ(Dump(SchemaFor<NoArgs>()), R"({"type":"object","additionalProperties":false})");
  Result<NoArgs> args = FromJson<NoArgs>(Json::object());
  EXPECT_TRUE(args.ok());
  EXPECT_EQ(Dump(ToJson(NoArgs{})), "{}");
}

struct Scalars {
  bool b = false;
  std::int8_t i8 = 0;
  std::uint16_t u16 = 0;
  float f = 0;
  Json any;
  std::optional<std::string> maybe;
};
auto DescribeFields(Tag<Scalars>) {
  return Fields(Field("b", &Scalars::b, "B"), Field("i8", &Scalars::i8, "I8", AtLeast(-5)),
                Field("u16", &Scalars::u16, "U16", AtMost(9)), Field("f", &Scalars::f, "F"),
                Field("any", &Scalars::any, "Anything"),
                Field("maybe", &Scalars::maybe, "Maybe", MaxLength(4)));
}

TEST(SchemaForTest, ScalarKinds) {
  EXPECT_EQ(Dump(SchemaFor<Scalars>()),
            R"({"type":"object","properties":{)"
            R"("b":{"type":"boolean","description":"B"},)"
            R"("i8":{"type":"integer","description":"I8","minimum":-5},)"
            R"("u16":{"type":"integer","description":"U16","maximum":9},)"
            R"("f":{"type":"number","description":"F"},)"
            R"("any":{"description":"Anything"},)"
            R"("maybe":{"type":["string","null"],"description":"Maybe","maxLength":4}},)"
            R"("required":["b","i8","u16","f","any"],"additionalProperties":false})");
}

// ---------------------------------------------------------------------------------------------
// ToJson / FromJson

Args SampleArgs() {
  Args a;
  a.version_id = 42;
  a.limit = 10;
  a.include = {"src", "lib"};
  a.inner = {"abc", 3};
  a.level = "L2";
  a.verbose = true;
  a.ratio = 0.5;
  a.extras = std::vector<Inner>{{"x", std::nullopt}, {"y", 7}};
  a.note = "hello";
  return a;
}

TEST(ToJsonTest, WritesFieldsInDeclarationOrderAndOmitsEmptyOptionals) {
  EXPECT_EQ(
      Dump(ToJson(SampleArgs())),
      R"({"version_id":42,"limit":10,"include":["src","lib"],"inner":{"name":"abc","depth":3},)"
      R"("level":"L2","verbose":true,"ratio":0.5,"extras":[{"name":"x"},{"name":"y","depth":7}],)"
      R"("note":"hello"})");
  Args minimal;
  minimal.inner.name = "q";
  EXPECT_EQ(Dump(ToJson(minimal)),
            R"({"version_id":0,"include":[],"inner":{"name":"q"},"level":"","verbose":false,)"
            R"("ratio":0.0,"note":""})");
}

TEST(ToJsonTest, OutputIsValidAgainstTheSchema) {
  std::vector<ValidationError> errors =
      ValidateAgainstSchema(SchemaFor<Args>(), ToJson(SampleArgs()));
  EXPECT_TRUE(errors.empty()) << FormatValidationErrors(errors);
}

struct NullableOut {
  std::optional<std::string> name;
  std::optional<double> confidence;
  std::optional<std::int32_t> limit;
};
inline auto DescribeFields(Tag<NullableOut>) {
  return Fields(Field("name", &NullableOut::name, "A name or null", EmitNull()),
                Field("confidence", &NullableOut::confidence, "Or null", EmitNull()),
                Field("limit", &NullableOut::limit, "Left out when empty"));
}

TEST(ToJsonTest, EmitNullWritesNullAndIsRequired) {
  EXPECT_EQ(Dump(ToJson(NullableOut{})), R"({"name":null,"confidence":null})");
  EXPECT_EQ(Dump(ToJson(NullableOut{"x", 0.5, 3})), R"({"name":"x","confidence":0.5,"limit":3})");
  EXPECT_EQ(Dump(SchemaFor<NullableOut>()["required"]), R"(["name","confidence"])");
  for (const NullableOut& v : {NullableOut{}, NullableOut{"x", 0.5, 3}}) {
    std::vector<ValidationError> errors =
        ValidateAgainstSchema(SchemaFor<NullableOut>(), ToJson(v));
    EXPECT_TRUE(errors.empty()) << FormatValidationErrors(errors);
  }
  // Without null in the schema, a null output would fail the client's validation.
  EXPECT_FALSE(
      ValidateAgainstSchema(SchemaFor<NullableOut>(), ParseJson(R"({"name":3,"confidence":null})"))
          .empty());
}

TEST(FromJsonTest, RoundTrips) {
  Args a = SampleArgs();
  Result<Args> back = FromJson<Args>(ToJson(a));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, a);
}

TEST(FromJsonTest, AppliesCppDefaultsForOmittedFields) {
  Result<Args> a = FromJson<Args>(ParseJson(
      R"({"version_id":1,"include":[],"inner":{"name":"a"},"level":"L0","ratio":0,"limit":null})"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->version_id, 1);
  EXPECT_FALSE(a->limit.has_value());
  EXPECT_FALSE(a->verbose);
  EXPECT_EQ(a->note, "");
  EXPECT_FALSE(a->extras.has_value());
  EXPECT_FALSE(a->inner.depth.has_value());
}

TEST(FromJsonTest, AcceptsIntegersWrittenWithAZeroFraction) {
  Result<Args> a = FromJson<Args>(
      ParseJson(R"({"version_id":30.0,"include":[],"inner":{"name":"a"},"level":"L0","ratio":1})"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->version_id, 30);
  EXPECT_EQ(a->ratio, 1.0);
}

TEST(FromJsonTest, ErrorsNameTheJsonPath) {
  const std::string rest = R"("include":[],"inner":{"name":"a"},"level":"L0","ratio":0)";
  auto with = [&](const std::string& fields) { return "{" + fields + "," + rest + "}"; };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{}", "arguments.version_id: required property missing"},
      {"[]", "arguments: expected object"},
      {with(R"("version_id":"7")"), "arguments.version_id: expected integer"},
      {with(R"("version_id":1.5)"), "arguments.version_id: expected integer"},
      {with(R"("version_id":1,"limit":3000000000)"), "arguments.limit: integer out of range"},
      {with(R"("version_id":1,"limit":-3000000000)"), "arguments.limit: integer out of range"},
      {with(R"("version_id":1,"verbose":"yes")"), "arguments.verbose: expected boolean"},
      {with(R"("version_id":1,"extras":[{"name":"a"},{}])"),
       "arguments.extras[1].name: required property missing"},
      {with(R"("version_id":1,"extras":{})"), "arguments.extras: expected array"},
      {R"({"version_id":1,"include":["a",3],"inner":{"name":"a"},"level":"L0","ratio":0})",
       "arguments.include[1]: expected string"},
      {R"({"version_id":1,"include":[],"inner":{"name":5},"level":"L0","ratio":0})",
       "arguments.inner.name: expected string"},
      {R"({"version_id":1,"include":[],"inner":"abc","level":"L0","ratio":0})",
       "arguments.inner: expected object"},
      {R"({"version_id":1,"include":[],"inner":{"name":"a"},"level":"L0","ratio":"x"})",
       "arguments.ratio: expected number"},
      {R"({"version_id":1,"include":[],"inner":{"name":"a"},"level":"L0"})",
       "arguments.ratio: required property missing"},
  };
  for (const auto& [json, message] : cases) {
    SCOPED_TRACE(json);
    Json j = ParseJson(json);
    ASSERT_FALSE(j.is_discarded());
    Result<Args> a = FromJson<Args>(j);
    ASSERT_FALSE(a.ok());
    EXPECT_EQ(a.status().code(), base::StatusCode::kInvalidArgument);
    EXPECT_EQ(a.status().message(), message);
  }
}

TEST(FromJsonTest, RootPathIsConfigurable) {
  Result<Inner> a = FromJson<Inner>(ParseJson(R"({"depth":1})"), "structuredContent");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), "structuredContent.name: required property missing");
}

TEST(FromJsonTest, SmallIntegerTypesCheckTheirRange) {
  Result<Scalars> ok = FromJson<Scalars>(
      ParseJson(R"({"b":true,"i8":-128,"u16":65535,"f":1.5,"any":{"x":[1]},"maybe":"m"})"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->i8, -128);
  EXPECT_EQ(ok->u16, 65535);
  EXPECT_EQ(Dump(ok->any), R"({"x":[1]})");
  EXPECT_EQ(ok->maybe, "m");

  Result<Scalars> low =
      FromJson<Scalars>(ParseJson(R"({"b":true,"i8":-129,"u16":0,"f":0,"any":null})"));
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.status().message(), "arguments.i8: integer out of range");
  Result<Scalars> high =
      FromJson<Scalars>(ParseJson(R"({"b":true,"i8":0,"u16":65536,"f":0,"any":null})"));
  ASSERT_FALSE(high.ok());
  EXPECT_EQ(high.status().message(), "arguments.u16: integer out of range");
  Result<Scalars> negative =
      FromJson<Scalars>(ParseJson(R"({"b":true,"i8":0,"u16":-1,"f":0,"any":null})"));
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().message(), "arguments.u16: integer out of range");
}

struct Wide {
  std::int64_t s = 0;
  std::uint64_t u = 0;
};
auto DescribeFields(Tag<Wide>) {
  return Fields(Field("s", &Wide::s, "Signed"), Field("u", &Wide::u, "Unsigned"));
}

TEST(FromJsonTest, SixtyFourBitLimitsConvertExactly) {
  Result<Wide> w =
      FromJson<Wide>(ParseJson(R"({"s":-9223372036854775808,"u":18446744073709551615})"));
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->s, std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(w->u, std::numeric_limits<std::uint64_t>::max());

  Result<Wide> w2 = FromJson<Wide>(ParseJson(R"({"s":9223372036854775807,"u":0})"));
  ASSERT_TRUE(w2.ok()) << w2.status().ToString();
  EXPECT_EQ(w2->s, std::numeric_limits<std::int64_t>::max());
}

TEST(FromJsonTest, IntegersBeyondInt64AreOutOfRangeNotWrapped) {
  for (const char* big : {"9223372036854775808", "18446744073709551615"}) {
    SCOPED_TRACE(big);
    Result<Wide> w = FromJson<Wide>(ParseJson(std::string(R"({"s":)") + big + R"(,"u":0})"));
    ASSERT_FALSE(w.ok()) << "converted to " << w->s;
    EXPECT_EQ(w.status().message(), "arguments.s: integer out of range");
  }
  Result<Wide> negative = FromJson<Wide>(ParseJson(R"({"s":0,"u":-1})"));
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().message(), "arguments.u: integer out of range");
}

// ---------------------------------------------------------------------------------------------
// ToolResult

TEST(ToolResultTest, TextAndStructured) {
  ToolResult t = ToolResult::Text("hi");
  EXPECT_EQ(Dump(t.content), R"([{"type":"text","text":"hi"}])");
  EXPECT_FALSE(t.structured.has_value());
  EXPECT_FALSE(t.is_error);

  Json object = {{"b", 1}, {"a", "x"}};
  ToolResult s = ToolResult::Structured(object);
  ASSERT_TRUE(s.structured.has_value());
  EXPECT_EQ(Dump(*s.structured), R"({"b":1,"a":"x"})");
  // The core writes the text mirror when it serializes the result (server_test checks it).
  EXPECT_TRUE(s.mirror_structured);
  EXPECT_FALSE(s.is_error);
}

// ---------------------------------------------------------------------------------------------
// ToolRegistry

Result<ToolResult> Ok(const Json&, CallContext&) { return ToolResult::Text("ok"); }

Json OneStringProperty() {
  return ParseJson(R"({"type":"object","properties":{"a":{"type":"string","description":"A"}},
                       "additionalProperties":false})");
}

TEST(CheckToolNameTest, AcceptsTheAllowedAlphabet) {
  for (std::string name :
       {std::string("a"), std::string("kodo.check"), std::string("list_versions"),
        std::string("A-Z_a-z.0-9"), std::string(128, 'x')}) {
    EXPECT_TRUE(CheckToolName(name).ok()) << name;
  }
}

TEST(CheckToolNameTest, RejectsBadNames) {
  for (std::string name : {std::string(), std::string(129, 'x'), std::string("has space"),
                           std::string("a/b"), std::string("caf\xc3\xa9"), std::string("tab\t"),
                           std::string("semi;colon"), std::string("a:b"), std::string("a@b")}) {
    SCOPED_TRACE(name);
    Status status = CheckToolName(name);
    EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(CheckToolName("").message(), "tool name '': must be 1-128 characters");
  EXPECT_EQ(CheckToolName("a b").message(), "tool name 'a b': only A-Z a-z 0-9 _ - . are allowed");
}

TEST(ToolRegistryTest, AddsAndFinds) {
  ToolRegistry tools;
  EXPECT_TRUE(tools.empty());
  ASSERT_TRUE(
      tools.AddRaw({.name = "t1", .description = "T1"}, OneStringProperty(), nullptr, Ok).ok());
  EXPECT_FALSE(tools.empty());
  const Tool* t = tools.Find("t1");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->spec.description, "T1");
  EXPECT_EQ(Dump(t->input_schema), Dump(OneStringProperty()));
  EXPECT_TRUE(t->output_schema.is_null());
  EXPECT_EQ(tools.Find("t2"), nullptr);
  EXPECT_EQ(tools.Find("T1"), nullptr);  // case-sensitive
  EXPECT_EQ(tools.all().size(), 1u);
}

TEST(ToolRegistryTest, RejectsBadNames) {
  ToolRegistry tools;
  for (std::string name : {std::string(), std::string(129, 'n'), std::string("two words")}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(
        tools.AddRaw({.name = name, .description = "D"}, OneStringProperty(), nullptr, Ok).code(),
        base::StatusCode::kInvalidArgument);
  }
  EXPECT_TRUE(tools.empty());
  EXPECT_TRUE(tools
                  .AddRaw({.name = std::string(128, 'n'), .description = "D"}, OneStringProperty(),
                          nullptr, Ok)
                  .ok());
}

TEST(ToolRegistryTest, RejectsDuplicates) {
  ToolRegistry tools;
  ASSERT_TRUE(
      tools.AddRaw({.name = "dup", .description = "D"}, OneStringProperty(), nullptr, Ok).ok());
  Status again =
      tools.AddRaw({.name = "dup", .description = "E"}, OneStringProperty(), nullptr, Ok);
  EXPECT_EQ(again.code(), base::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.message(), "tool 'dup': registered twice");
  EXPECT_EQ(tools.all().size(), 1u);
  EXPECT_EQ(tools.Find("dup")->spec.description, "D");
}

TEST(ToolRegistryTest, RequiresADescription) {
  ToolRegistry tools;
  Status status = tools.AddRaw({.name = "t"}, OneStringProperty(), nullptr, Ok);
  EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "tool 't': a description is required");
}

TEST(ToolRegistryTest, RequiresAPropertyDescription) {
  ToolRegistry tools;
  Json schema = ParseJson(R"({"type":"object","properties":{
      "a":{"type":"string","description":"A"},"b":{"type":"integer"}}})");
  Status status = tools.AddRaw({.name = "t", .description = "D"}, schema, nullptr, Ok);
  EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "tool 't' inputSchema.b: a property needs a description");
  EXPECT_TRUE(tools.empty());
}

struct Undescribed {
  std::int32_t x = 0;
};
auto DescribeFields(Tag<Undescribed>) { return Fields(Field("x", &Undescribed::x, "")); }

struct Outer {
  Undescribed inner;
};
auto DescribeFields(Tag<Outer>) { return Fields(Field("inner", &Outer::inner, "The inner part")); }

struct Empty {};
auto DescribeFields(Tag<Empty>) { return Fields(); }

TEST(ToolRegistryTest, TypedToolsNeedFieldDescriptions) {
  ToolRegistry tools;
  auto handler = [](const auto&, CallContext&) -> Result<Empty> { return Empty{}; };
  Status status = tools.Add<Undescribed, Empty>({.name = "t", .description = "D"}, handler);
  EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("x: a property needs a description"));
}

// Every property, also of a nested object, is read by the model and needs a description.
TEST(ToolRegistryTest, NestedPropertiesNeedDescriptionsToo) {
  ToolRegistry tools;
  auto handler = [](const Outer&, CallContext&) -> Result<Empty> { return Empty{}; };
  Status status = tools.Add<Outer, Empty>({.name = "t", .description = "D"}, handler);
  EXPECT_EQ(status.code(), base::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("a property needs a description"));

  Json schema = ParseJson(R"({"type":"object","properties":{
      "o":{"type":"object","description":"O","properties":{"deep":{"type":"string"}}}}})");
  EXPECT_FALSE(tools.AddRaw({.name = "raw", .description = "D"}, schema, nullptr, Ok).ok());
}

TEST(ToolRegistryTest, RequiresObjectSchemas) {
  ToolRegistry tools;
  for (const char* input : {R"({"type":"string"})", R"({"properties":{}})", "null", "[]"}) {
    SCOPED_TRACE(input);
    EXPECT_EQ(tools.AddRaw({.name = "t", .description = "D"}, ParseJson(input), nullptr, Ok).code(),
              base::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(tools
                .AddRaw({.name = "t", .description = "D"}, OneStringProperty(),
                        ParseJson(R"({"type":"array"})"), Ok)
                .code(),
            base::StatusCode::kInvalidArgument);
  EXPECT_TRUE(tools.empty());
}

TEST(ToolRegistryTest, RejectsUnsupportedSchemaKeywords) {
  ToolRegistry tools;
  Json input = ParseJson(R"({"type":"object","properties":{
      "a":{"type":"string","description":"A","if":{"minLength":1}}}})");
  Status status = tools.AddRaw({.name = "t", .description = "D"}, input, nullptr, Ok);
  EXPECT_EQ(status.code(), base::StatusCode::kUnsupported);
  EXPECT_EQ(status.message(),
            "tool 't' inputSchema: #/properties/a/if: unsupported JSON Schema keyword");

  Json output =
      ParseJson(R"({"type":"object","$schema":"http://json-schema.org/draft-04/schema#"})");
  Status out = tools.AddRaw({.name = "t", .description = "D"}, OneStringProperty(), output, Ok);
  EXPECT_EQ(out.code(), base::StatusCode::kUnsupported);
  EXPECT_THAT(out.message(), HasSubstr("outputSchema"));

  Json remote = ParseJson(R"({"type":"object","properties":{
      "a":{"$ref":"https://example.com/a.json"}}})");
  EXPECT_EQ(tools.AddRaw({.name = "t", .description = "D"}, remote, nullptr, Ok).code(),
            base::StatusCode::kUnsupported);
  EXPECT_TRUE(tools.empty());
}

TEST(ToolRegistryTest, RequiresAHandler) {
  ToolRegistry tools;
  EXPECT_FALSE(
      tools.AddRaw({.name = "t", .description = "D"}, OneStringProperty(), nullptr, nullptr).ok());
}

TEST(ToolRegistryTest, TypedToolsCarryTheirSchemas) {
  ToolRegistry tools;
  auto handler = [](const Args&, CallContext&) -> Result<Inner> { return Inner{"x", 1}; };
  Status added = tools.Add<Args, Inner>({.name = "typed", .description = "D"}, handler);
  ASSERT_TRUE(added.ok()) << added.ToString();
  const Tool* t = tools.Find("typed");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(Dump(t->input_schema), ExpectedArgsSchema());
  EXPECT_EQ(Dump(t->output_schema), kInnerSchema);

  auto content = [](const NoArgs&, CallContext&) -> Result<ToolResult> {
    return ToolResult::Text("t");
  };
  ASSERT_TRUE(tools.AddWithContent<NoArgs>({.name = "plain", .description = "D"}, content).ok());
  EXPECT_TRUE(tools.Find("plain")->output_schema.is_null());
}

// ---------------------------------------------------------------------------------------------
// Resources, templates, prompts

Result<std::vector<ResourceContents>> ReadNothing(const std::string&, const ResourceVars&,
                                                  CallContext&) {
  return std::vector<ResourceContents>{};
}

TEST(MatchUriTemplateTest, ExtractsVariables) {
  ResourceVars vars;
  ASSERT_TRUE(MatchUriTemplate("test://template/{id}/data", "test://template/42/data", vars));
  EXPECT_EQ(vars, (ResourceVars{{"id", "42"}}));

  ASSERT_TRUE(MatchUriTemplate("a://{x}-{y}", "a://1-2", vars));
  EXPECT_EQ(vars, (ResourceVars{{"x", "1"}, {"y", "2"}}));

  ASSERT_TRUE(
      MatchUriTemplate("librarian://workspace/{name}", "librarian://workspace/symbols", vars));
  EXPECT_EQ(vars, (ResourceVars{{"name", "symbols"}}));

  ASSERT_TRUE(MatchUriTemplate("plain://fixed", "plain://fixed", vars));
  EXPECT_TRUE(vars.empty());
}

TEST(MatchUriTemplateTest, RejectsNonMatches) {
  ResourceVars vars = {{"old", "kept"}};
  for (const char* uri :
       {"test://template//data", "test://template/4/2/data", "test://template/42/data/x",
        "test://template/42/dat", "test://other/42/data", "test://template/42"}) {
    SCOPED_TRACE(uri);
    EXPECT_FALSE(MatchUriTemplate("test://template/{id}/data", uri, vars));
  }
  EXPECT_FALSE(MatchUriTemplate("file:///{path}", "file:///a/b", vars));
  EXPECT_FALSE(MatchUriTemplate("broken://{id", "broken://{id", vars));
  EXPECT_EQ(vars, (ResourceVars{{"old", "kept"}}));  // untouched on failure
}

TEST(ResourceRegistryTest, AddsResolvesAndRejects) {
  ResourceRegistry resources;
  EXPECT_TRUE(resources.empty());
  EXPECT_FALSE(resources.Add({.uri = "", .name = "n"}, ReadNothing).ok());
  EXPECT_FALSE(resources.Add({.uri = "u://a", .name = ""}, ReadNothing).ok());
  ASSERT_TRUE(resources.Add({.uri = "u://a", .name = "a"}, ReadNothing).ok());
  EXPECT_EQ(resources.Add({.uri = "u://a", .name = "again"}, ReadNothing).code(),
            base::StatusCode::kAlreadyExists);
  EXPECT_FALSE(resources.any_subscribable());
  ASSERT_TRUE(resources.Add({.uri = "u://b", .name = "b", .subscribable = true}, ReadNothing).ok());
  EXPECT_TRUE(resources.any_subscribable());
  ASSERT_TRUE(resources.AddTemplate({.uri_template = "u://t/{id}", .name = "t"}, ReadNothing).ok());
  EXPECT_FALSE(resources.AddTemplate({.uri_template = "", .name = "t"}, ReadNothing).ok());

  const ResourceReader* reader = nullptr;
  ResourceVars vars;
  bool subscribable = false;
  ASSERT_TRUE(resources.Resolve("u://b", &reader, vars, &subscribable));
  EXPECT_TRUE(subscribable);
  ASSERT_TRUE(resources.Resolve("u://t/9", &reader, vars, &subscribable));
  EXPECT_EQ(vars, (ResourceVars{{"id", "9"}}));
  EXPECT_FALSE(resources.Resolve("u://c", &reader, vars, nullptr));
  EXPECT_NE(resources.FindTemplate("u://t/{id}"), nullptr);
  EXPECT_EQ(resources.FindTemplate("u://t/9"), nullptr);
}

TEST(PromptRegistryTest, RequiresNameAndDescriptionAndRejectsDuplicates) {
  PromptRegistry prompts;
  auto handler = [](const std::map<std::string, std::string>&, CallContext&) -> Result<Json> {
    return Json::object();
  };
  EXPECT_FALSE(prompts.Add({.name = "", .description = "D"}, handler).ok());
  EXPECT_FALSE(prompts.Add({.name = "p"}, handler).ok());
  ASSERT_TRUE(prompts.Add({.name = "p", .description = "D"}, handler).ok());
  EXPECT_EQ(prompts.Add({.name = "p", .description = "E"}, handler).code(),
            base::StatusCode::kAlreadyExists);
  ASSERT_NE(prompts.Find("p"), nullptr);
  EXPECT_EQ(prompts.Find("q"), nullptr);
}

}  // namespace
}  // namespace trove::mcp

// The producers and target_features parsers: the shapes the tool conventions define, the
// real-world values of docs/warden.md §10.4, and every malformed form with its offset.
#include "warden/wasm/custom_sections.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trove::warden::wasm {
namespace {

using ::testing::HasSubstr;
using Bytes = std::vector<std::uint8_t>;

Bytes Name(const std::string& s) {
  Bytes b;
  b.push_back(static_cast<std::uint8_t>(s.size()));  // the tests' names are shorter than 128
  for (char c : s) b.push_back(static_cast<std::uint8_t>(c));
  return b;
}
Bytes Cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
Bytes U(std::uint8_t n) { return {n}; }

// The producers section of @resvg/resvg-wasm 2.6.2 (§10.4), as its tools write it.
Bytes ResvgProducers() {
  return Cat({U(2), Name("language"), U(1), Name("Rust"), Name(""), Name("processed-by"), U(3),
              Name("rustc"), Name("1.76.0-nightly"), Name("walrus"), Name("0.20.3"),
              Name("wasm-bindgen"), Name("0.2.92")});
}

TEST(CustomSectionsTest, ParsesProducers) {
  Result<Producers> p = ParseProducers(ResvgProducers());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->size(), 2u);
  EXPECT_EQ((*p)[0].field, "language");
  EXPECT_EQ((*p)[0].values, (std::vector<ProducerValue>{{"Rust", ""}}));
  EXPECT_EQ((*p)[1].field, "processed-by");
  EXPECT_EQ((*p)[1].values,
            (std::vector<ProducerValue>{
                {"rustc", "1.76.0-nightly"}, {"walrus", "0.20.3"}, {"wasm-bindgen", "0.2.92"}}));
  EXPECT_EQ(ProducersSummary(*p), "Rust, rustc 1.76.0-nightly, walrus 0.20.3, wasm-bindgen 0.2.92");
  EXPECT_EQ(ProducersSummary({}), "");
  // Repeats are shown once; an empty field is allowed.
  Result<Producers> go =
      ParseProducers(Cat({U(3), Name("language"), U(1), Name("Go"), Name("go1.26.5"), Name("sdk"),
                          U(0), Name("processed-by"), U(1), Name("Go"), Name("go1.26.5")}));
  ASSERT_TRUE(go.ok()) << go.status().ToString();
  EXPECT_EQ(ProducersSummary(*go), "Go go1.26.5");
  Result<Producers> empty = ParseProducers(U(0));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(CustomSectionsTest, RejectsMalformedProducersWithOffsets) {
  // Cut anywhere inside, the section is refused and the error names an offset past `base`.
  const Bytes whole = ResvgProducers();
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    Result<Producers> p = ParseProducers(Bytes(whole.begin(), whole.begin() + cut), 1000);
    ASSERT_FALSE(p.ok()) << cut;
    EXPECT_EQ(p.status().code(), base::StatusCode::kMalformed);
    EXPECT_THAT(p.status().message(), HasSubstr("offset 0x")) << p.status().message();
  }
  Bytes trailing = whole;
  trailing.push_back(0);
  Result<Producers> t = ParseProducers(trailing, 1000);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("bytes after the last field"));
  EXPECT_THAT(t.status().message(), HasSubstr(std::to_string(1000 + whole.size())));
  // A count larger than the bytes could hold is refused before anything is allocated.
  Result<Producers> huge = ParseProducers(Bytes{0xff, 0xff, 0xff, 0xff, 0x0f});
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(huge.status().message(), HasSubstr("producers field count"));
}

TEST(CustomSectionsTest, ParsesTargetFeatures) {
  Result<std::vector<std::string>> f = ParseTargetFeatures(
      Cat({U(3), {'+'}, Name("simd128"), {'-'}, Name("atomics"), {'='}, Name("sign-ext")}));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*f, (std::vector<std::string>{"+simd128", "-atomics", "=sign-ext"}));
  Result<std::vector<std::string>> none = ParseTargetFeatures(U(0));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(CustomSectionsTest, RejectsMalformedTargetFeatures) {
  Result<std::vector<std::string>> bad_prefix =
      ParseTargetFeatures(Cat({U(1), {'?'}, Name("simd128")}), 16);
  ASSERT_FALSE(bad_prefix.ok());
  EXPECT_THAT(bad_prefix.status().message(), HasSubstr("unknown prefix 0x3f"));
  EXPECT_THAT(bad_prefix.status().message(), HasSubstr("(17)"));  // the prefix byte's offset
  EXPECT_FALSE(ParseTargetFeatures(Cat({U(2), {'+'}, Name("simd128")})).ok());
  EXPECT_FALSE(ParseTargetFeatures(Cat({U(1), {'+'}, Name("simd128"), U(0)})).ok());
  EXPECT_FALSE(ParseTargetFeatures({}).ok());
  EXPECT_FALSE(ParseTargetFeatures(Cat({U(1), {'+'}, {5, 'a'}})).ok());  // name runs past end
}

}  // namespace
}  // namespace trove::warden::wasm

#include "kodo/sema/name_table.h"

#include <gtest/gtest.h>

#include <string>

namespace trove::kodo::sema {
namespace {

TEST(NameTableTest, EmptyTableFindsNothing) {
  NameTable<int> table;
  EXPECT_EQ(table.Find("x"), nullptr);
  EXPECT_EQ(table.Find(""), nullptr);
  EXPECT_EQ(table.size(), 0u);
}

TEST(NameTableTest, TryEmplaceAddsOnceAndKeepsTheValue) {
  NameTable<int> table;
  auto [value, added] = table.TryEmplace("total");
  ASSERT_TRUE(added);
  EXPECT_EQ(*value, 0);  // value-initialized
  *value = 7;
  auto [again, added_again] = table.TryEmplace("total");
  EXPECT_FALSE(added_again);
  EXPECT_EQ(*again, 7);
  ASSERT_NE(table.Find("total"), nullptr);
  EXPECT_EQ(*table.Find("total"), 7);
  EXPECT_EQ(table.Find("tota"), nullptr);
  EXPECT_EQ(table.Find("totals"), nullptr);
  EXPECT_EQ(table.size(), 1u);
}

TEST(NameTableTest, ManyNamesSurviveGrowth) {
  NameTable<int> table;
  // Short names (stored in the slot) and long ones (over the small-string size), through
  // several doublings from the minimum capacity.
  for (int i = 0; i < 5000; ++i) {
    const std::string name =
        i % 2 == 0 ? "n" + std::to_string(i) : "a_rather_long_function_name_" + std::to_string(i);
    auto [value, added] = table.TryEmplace(name);
    ASSERT_TRUE(added) << name;
    *value = i;
  }
  EXPECT_EQ(table.size(), 5000u);
  for (int i = 0; i < 5000; ++i) {
    const std::string name =
        i % 2 == 0 ? "n" + std::to_string(i) : "a_rather_long_function_name_" + std::to_string(i);
    const int* value = table.Find(name);
    ASSERT_NE(value, nullptr) << name;
    EXPECT_EQ(*value, i);
  }
  EXPECT_EQ(table.Find("n5000"), nullptr);
  EXPECT_EQ(table.Find("n1"), nullptr);  // odd numbers have the long form only
}

TEST(NameTableTest, ReserveKeepsEntriesAndTheEmptyNameIsAName) {
  NameTable<std::string> table;
  *table.TryEmplace("").first = "empty";
  *table.TryEmplace("b").first = "bee";
  table.Reserve(1000);
  ASSERT_NE(table.Find(""), nullptr);
  EXPECT_EQ(*table.Find(""), "empty");
  ASSERT_NE(table.Find("b"), nullptr);
  EXPECT_EQ(*table.Find("b"), "bee");
  EXPECT_EQ(table.size(), 2u);
}

}  // namespace
}  // namespace trove::kodo::sema

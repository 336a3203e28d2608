#include "types/string_table.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>

namespace vireo {
namespace {

TEST(StringTableTest, SetAddRemove) {
  StringTable t(false);
  EXPECT_TRUE(t.Add("a"));
  EXPECT_FALSE(t.Add("a"));
  EXPECT_TRUE(t.Add(std::string(1000, 'z')));
  EXPECT_EQ(t.size(), 2u);
  EXPECT_NE(t.Peek(std::string(1000, 'z')), nullptr);
  EXPECT_TRUE(t.Remove("a"));
  EXPECT_FALSE(t.Remove("a"));
  EXPECT_EQ(t.size(), 1u);
}

TEST(StringTableTest, MapPutReplacesValues) {
  StringTable t(true);
  EXPECT_TRUE(t.Put("f", "1"));
  EXPECT_FALSE(t.Put("f", "2"));  // same length: in place
  EXPECT_EQ(t.Peek("f")->value(), "2");
  EXPECT_FALSE(t.Put("f", std::string(500, 'v')));  // longer: node replaced
  EXPECT_EQ(t.Peek("f")->value(), std::string(500, 'v'));
  EXPECT_EQ(t.size(), 1u);
}

TEST(StringTableTest, MatchesStdMapUnderRandomOps) {
  std::mt19937_64 rng(3);
  StringTable t(true);
  std::map<std::string, std::string> ref;
  for (int i = 0; i < 50000; ++i) {
    std::string k = "k" + std::to_string(rng() % 5000);
    if (rng() % 3 == 0) {
      EXPECT_EQ(t.Remove(k), ref.erase(k) == 1);
    } else {
      std::string v(rng() % 40, 'a' + static_cast<char>(rng() % 26));
      EXPECT_EQ(t.Put(k, v), ref.find(k) == ref.end());
      ref[k] = v;
    }
  }
  ASSERT_EQ(t.size(), ref.size());
  for (auto& [k, v] : ref) {
    ASSERT_NE(t.Peek(k), nullptr);
    EXPECT_EQ(t.Peek(k)->value(), v);
  }
}

TEST(StringTableTest, ScanVisitsEverything) {
  StringTable t(false);
  for (int i = 0; i < 10000; ++i) t.Add("m" + std::to_string(i));
  std::set<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = t.Scan(cursor, [&](const StringNode* n) { seen.emplace(n->key()); });
    // Grow the table mid-scan: elements present throughout must still all be reported.
    if (seen.size() > 5000 && t.size() < 20000) {
      for (int i = 10000; i < 20000; ++i) t.Add("m" + std::to_string(i));
    }
  } while (cursor != 0);
  for (int i = 0; i < 10000; ++i) EXPECT_TRUE(seen.count("m" + std::to_string(i))) << i;
}

TEST(StringTableTest, RandomNodeAndRemoveNode) {
  StringTable t(false);
  for (int i = 0; i < 100; ++i) t.Add(std::to_string(i));
  std::mt19937_64 rng(1);
  while (t.size() > 0) {
    StringNode* n = t.RandomNode(rng());
    ASSERT_NE(n, nullptr);
    t.RemoveNode(n);
  }
  EXPECT_EQ(t.RandomNode(rng()), nullptr);
}

}  // namespace
}  // namespace vireo

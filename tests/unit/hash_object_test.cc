#include "types/hash_object.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace vireo {
namespace {

std::map<std::string, std::string> Contents(const HashObject& h) {
  std::map<std::string, std::string> out;
  h.ForEach([&](std::string_view f, std::string_view v) { out.emplace(f, v); });
  return out;
}

TEST(HashObjectTest, ListpackSetGetDelete) {
  HashObject h;
  HashLimits limits;
  EXPECT_TRUE(h.Set("a", "1", limits));
  EXPECT_TRUE(h.Set("b", "2", limits));
  EXPECT_FALSE(h.Set("a", "10", limits));
  EXPECT_STREQ(h.EncodingName(), "listpack");
  EXPECT_EQ(h.Find("a"), "10");
  EXPECT_FALSE(h.Find("1").has_value());  // values are not fields
  EXPECT_TRUE(h.Delete("a"));
  EXPECT_FALSE(h.Delete("a"));
  EXPECT_EQ(h.size(), 1u);
}

TEST(HashObjectTest, ConvertsPastEntryLimit) {
  HashObject h;
  HashLimits limits{4, 64};
  for (int i = 0; i < 4; ++i) h.Set("f" + std::to_string(i), "v", limits);
  EXPECT_STREQ(h.EncodingName(), "listpack");
  h.Set("f4", "v", limits);
  EXPECT_STREQ(h.EncodingName(), "hashtable");
  EXPECT_EQ(h.size(), 5u);
  EXPECT_EQ(h.Find("f3"), "v");
}

TEST(HashObjectTest, ConvertsOnLongFieldOrValue) {
  HashLimits limits{128, 8};
  HashObject a;
  a.Set("f", std::string(8, 'x'), limits);
  EXPECT_STREQ(a.EncodingName(), "listpack");
  a.Set("g", std::string(9, 'x'), limits);
  EXPECT_STREQ(a.EncodingName(), "hashtable");
  HashObject b;
  b.Set(std::string(9, 'f'), "v", limits);
  EXPECT_STREQ(b.EncodingName(), "hashtable");
}

TEST(HashObjectTest, PrepareForArgsConvertsEarly) {
  HashLimits limits{2, 64};
  HashObject h;
  std::string_view args[] = {"a", "1", "b", "2", "a", "3"};  // 3 pairs, 2 distinct
  h.PrepareForArgs(args, limits);
  EXPECT_STREQ(h.EncodingName(), "hashtable");
}

TEST(HashObjectTest, CloneIsDeep) {
  HashLimits limits{2, 64};
  for (int n : {1, 10}) {
    HashObject h;
    for (int i = 0; i < n; ++i) h.Set("f" + std::to_string(i), std::to_string(i), limits);
    auto copy = h.Clone();
    auto* c = static_cast<HashObject*>(copy.get());
    EXPECT_EQ(Contents(*c), Contents(h));
    EXPECT_STREQ(c->EncodingName(), h.EncodingName());
    c->Set("f0", "changed", limits);
    EXPECT_EQ(h.Find("f0"), "0");
  }
}

TEST(HashObjectTest, RandomReturnsMembers) {
  HashLimits limits;
  HashObject h;
  for (int i = 0; i < 300; ++i) h.Set("f" + std::to_string(i), "v" + std::to_string(i), limits);
  for (uint64_t r = 0; r < 100; ++r) {
    auto [f, v] = h.Random(r * 7919);
    EXPECT_EQ(h.Find(f), v);
  }
}

}  // namespace
}  // namespace vireo

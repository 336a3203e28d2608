#include "types/set_object.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace vireo {
namespace {

std::vector<std::string> Members(const SetObject& s) {
  std::vector<std::string> out;
  s.ForEach([&](std::string_view m) { out.emplace_back(m); });
  return out;
}

TEST(SetObjectTest, CreatePicksEncodingLikeRedis) {
  SetLimits limits;
  EXPECT_STREQ(SetObject::Create("1", 1, limits)->EncodingName(), "intset");
  EXPECT_STREQ(SetObject::Create("a", 1, limits)->EncodingName(), "listpack");
  EXPECT_STREQ(SetObject::Create("1", 600, limits)->EncodingName(), "hashtable");
  EXPECT_STREQ(SetObject::Create("1", 200, limits)->EncodingName(), "intset");
  EXPECT_STREQ(SetObject::Create("a", 100, limits)->EncodingName(), "listpack");
  EXPECT_STREQ(SetObject::Create("a", 129, limits)->EncodingName(), "hashtable");
}

TEST(SetObjectTest, IntSetSortedAndConvertsOnString) {
  SetLimits limits;
  SetObject s(SetObject::Encoding::kIntSet);
  for (const char* m : {"3", "1", "2", "-5"}) EXPECT_TRUE(s.Add(m, limits));
  EXPECT_FALSE(s.Add("1", limits));
  EXPECT_EQ(Members(s), (std::vector<std::string>{"-5", "1", "2", "3"}));
  EXPECT_FALSE(s.Contains("01"));  // not canonical: never an integer member
  EXPECT_TRUE(s.Add("a", limits));
  EXPECT_STREQ(s.EncodingName(), "listpack");
  EXPECT_EQ(Members(s), (std::vector<std::string>{"-5", "1", "2", "3", "a"}));
}

TEST(SetObjectTest, IntSetLimits) {
  SetLimits limits{4, 128, 64};
  SetObject s(SetObject::Encoding::kIntSet);
  for (int i = 0; i < 4; ++i) s.Add(std::to_string(i), limits);
  EXPECT_STREQ(s.EncodingName(), "intset");
  s.Add("4", limits);
  EXPECT_STREQ(s.EncodingName(), "hashtable");
  // Too many integers for a listpack: a string turns the intset into a hashtable.
  SetLimits small{512, 3, 64};
  SetObject t(SetObject::Encoding::kIntSet);
  for (int i = 0; i < 3; ++i) t.Add(std::to_string(i), small);
  t.Add("x", small);
  EXPECT_STREQ(t.EncodingName(), "hashtable");
  EXPECT_EQ(t.size(), 4u);
}

TEST(SetObjectTest, ListpackLimits) {
  SetLimits limits{512, 3, 5};
  SetObject s(SetObject::Encoding::kListpack);
  s.Add("a", limits);
  s.Add("b", limits);
  s.Add("c", limits);
  EXPECT_STREQ(s.EncodingName(), "listpack");
  s.Add("d", limits);
  EXPECT_STREQ(s.EncodingName(), "hashtable");
  SetObject t(SetObject::Encoding::kListpack);
  t.Add("123456", limits);
  EXPECT_STREQ(t.EncodingName(), "hashtable");
}

TEST(SetObjectTest, PopRandomEmptiesEveryEncoding) {
  SetLimits limits;
  for (int n : {5, 50, 1000}) {
    for (bool ints : {true, false}) {
      auto s = SetObject::Create(ints ? "1" : "a", 1, limits);
      std::set<std::string> ref;
      for (int i = 0; i < n; ++i) {
        std::string m = ints ? std::to_string(i) : "m" + std::to_string(i);
        s->Add(m, limits);
        ref.insert(m);
      }
      uint64_t r = 12345;
      while (!s->empty()) {
        std::string m = s->PopRandom(r);
        r = r * 6364136223846793005ULL + 1442695040888963407ULL;
        EXPECT_EQ(ref.erase(m), 1u) << m;
      }
      EXPECT_TRUE(ref.empty());
    }
  }
}

TEST(SetObjectTest, MaybeConvertToIntSetAndEraseIndexes) {
  SetLimits limits;
  SetObject s(SetObject::Encoding::kListpack);
  for (const char* m : {"5", "3", "9"}) s.Add(m, limits);
  s.MaybeConvertToIntSet(limits);
  EXPECT_STREQ(s.EncodingName(), "intset");
  s.EraseIndexes({0, 2});
  EXPECT_EQ(Members(s), (std::vector<std::string>{"5"}));
  SetObject t(SetObject::Encoding::kListpack);
  for (const char* m : {"a", "b", "c", "d"}) t.Add(m, limits);
  t.EraseIndexes({1, 3});
  EXPECT_EQ(Members(t), (std::vector<std::string>{"a", "c"}));
  t.MaybeConvertToIntSet(limits);
  EXPECT_STREQ(t.EncodingName(), "listpack");
}

TEST(SetObjectTest, CloneKeepsEncodingAndMembers) {
  SetLimits limits;
  for (int n : {3, 300, 1000}) {
    auto s = SetObject::Create("1", 1, limits);
    for (int i = 0; i < n; ++i) s->Add(std::to_string(i * 3), limits);
    auto copy = s->Clone();
    auto* c = static_cast<SetObject*>(copy.get());
    EXPECT_STREQ(c->EncodingName(), s->EncodingName());
    auto a = Members(*c), b = Members(*s);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b);
  }
}

// A listpack kept as an unsanitized payload gave it: the repeat counts until a conversion,
// which keeps one of each member.
TEST(SetObjectTest, ListpackAsGivenKeepsRepeatsUntilConverted) {
  auto set = SetObject::ListpackAsGiven({"a", "b", "a"});
  EXPECT_EQ(set->encoding(), SetObject::Encoding::kListpack);
  EXPECT_TRUE(set->may_repeat());
  EXPECT_EQ(set->size(), 3u);
  auto copy = set->Clone();
  EXPECT_EQ(static_cast<SetObject*>(copy.get())->size(), 3u);
  EXPECT_TRUE(set->Remove("a"));
  EXPECT_TRUE(set->Contains("a"));
  EXPECT_EQ(set->size(), 2u);
  auto other = SetObject::ListpackAsGiven({"x", "y", "x", "x"});
  other->ConvertTo(SetObject::Encoding::kHashtable);
  EXPECT_FALSE(other->may_repeat());
  EXPECT_EQ(other->size(), 2u);
  EXPECT_TRUE(other->Contains("x") && other->Contains("y"));
}

}  // namespace
}  // namespace vireo

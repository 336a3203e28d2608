#include "types/intset.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace vireo {
namespace {

TEST(IntSetTest, AddKeepsSortedAndUnique) {
  IntSet s;
  EXPECT_TRUE(s.Add(5));
  EXPECT_TRUE(s.Add(1));
  EXPECT_TRUE(s.Add(3));
  EXPECT_FALSE(s.Add(3));
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s.Get(0), 1);
  EXPECT_EQ(s.Get(1), 3);
  EXPECT_EQ(s.Get(2), 5);
  EXPECT_EQ(s.width(), 2u);
}

TEST(IntSetTest, WidensForLargeValues) {
  IntSet s;
  s.Add(1);
  s.Add(-2);
  s.Add(100000);  // needs 4 bytes
  EXPECT_EQ(s.width(), 4u);
  s.Add(INT64_MIN);  // needs 8, goes first
  s.Add(INT64_MAX);  // goes last
  EXPECT_EQ(s.width(), 8u);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s.Get(0), INT64_MIN);
  EXPECT_EQ(s.Get(1), -2);
  EXPECT_EQ(s.Get(2), 1);
  EXPECT_EQ(s.Get(3), 100000);
  EXPECT_EQ(s.Get(4), INT64_MAX);
  EXPECT_TRUE(s.Contains(100000));
  EXPECT_FALSE(s.Contains(7));
}

TEST(IntSetTest, RemoveValues) {
  IntSet s;
  for (int i = 0; i < 10; ++i) s.Add(i);
  EXPECT_TRUE(s.Remove(4));
  EXPECT_FALSE(s.Remove(4));
  EXPECT_FALSE(s.Remove(1LL << 40));  // wider than the set: never present
  EXPECT_EQ(s.size(), 9u);
  s.RemoveAt(0);
  EXPECT_EQ(s.min(), 1);
  EXPECT_EQ(s.max(), 9);
}

TEST(IntSetTest, MatchesStdSetUnderRandomOps) {
  std::mt19937_64 rng(7);
  IntSet s;
  std::set<int64_t> ref;
  for (int i = 0; i < 20000; ++i) {
    int64_t v = static_cast<int64_t>(rng() % 2000) - 1000;
    if (rng() % 50 == 0) v *= 1000000000LL;
    if (rng() % 3 == 0) {
      EXPECT_EQ(s.Remove(v), ref.erase(v) == 1);
    } else {
      EXPECT_EQ(s.Add(v), ref.insert(v).second);
    }
  }
  ASSERT_EQ(s.size(), ref.size());
  size_t i = 0;
  for (int64_t v : ref) EXPECT_EQ(s.Get(i++), v);
}

}  // namespace
}  // namespace vireo

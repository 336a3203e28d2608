#include "types/zset.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace vireo {
namespace {

using Ref = std::set<std::pair<double, std::string>>;

std::vector<std::pair<double, std::string>> Dump(const ZSet& z) {
  std::vector<std::pair<double, std::string>> out;
  z.ForEach([&](std::string_view m, double s) { out.emplace_back(s, std::string(m)); });
  return out;
}

void ExpectSame(const ZSet& z, const Ref& ref) {
  ASSERT_TRUE(z.Validate());
  ASSERT_EQ(z.size(), ref.size());
  std::vector<std::pair<double, std::string>> want(ref.begin(), ref.end());
  ASSERT_EQ(Dump(z), want);
}

// Random inserts, updates, erases and range erases against a std::set, for one encoding.
void RandomOps(bool tree, int ops, int universe, uint32_t seed) {
  std::mt19937 rng(seed);
  ZSet::Limits limits{tree ? 0u : 1000000u, 1000000};
  ZSet z(0, 0, limits);
  if (tree) z.ConvertToTree();
  Ref ref;
  std::map<std::string, double> scores;
  for (int op = 0; op < ops; ++op) {
    std::string m = "m" + std::to_string(rng() % universe);
    double s = static_cast<double>(rng() % 50);
    int kind = static_cast<int>(rng() % 10);
    auto it = scores.find(m);
    if (kind < 5) {
      if (it == scores.end()) {
        z.Insert(m, s, limits);
        scores[m] = s;
        ref.insert({s, m});
      } else {
        z.Update(m, s);
        ref.erase({it->second, m});
        it->second = s;
        ref.insert({s, m});
      }
    } else if (kind < 8) {
      EXPECT_EQ(z.Erase(m), it != scores.end());
      if (it != scores.end()) {
        ref.erase({it->second, m});
        scores.erase(it);
      }
    } else if (kind == 8 && !ref.empty()) {
      size_t from = rng() % ref.size();
      size_t to = std::min(ref.size(), from + rng() % 5);
      z.EraseRanks(from, to);
      auto b = std::next(ref.begin(), static_cast<long>(from));
      auto e = std::next(ref.begin(), static_cast<long>(to));
      for (auto i = b; i != e; ++i) scores.erase(i->second);
      ref.erase(b, e);
    } else {
      double got;
      ASSERT_EQ(z.Score(m, &got), it != scores.end());
      if (it != scores.end()) {
        EXPECT_EQ(got, it->second);
        auto rank = z.Rank(m);
        ASSERT_TRUE(rank.has_value());
        EXPECT_EQ(*rank, static_cast<size_t>(std::distance(ref.begin(), ref.find({got, m}))));
      }
    }
    // Full validation is O(n): often on small sets, now and then on large ones.
    if (op % (ops >= 100000 ? 20000 : 500) == 0) ExpectSame(z, ref);
  }
  ExpectSame(z, ref);
  // Rank bounds and selection.
  for (double v = -1; v < 52; v += 0.5) {
    size_t lo = 0;
    for (auto& [s, m] : ref) lo += s < v;
    EXPECT_EQ(z.ScoreLowerBound(v, false), lo);
    size_t hi = 0;
    for (auto& [s, m] : ref) hi += s <= v;
    EXPECT_EQ(z.ScoreRangeEnd(v, false), hi);
    EXPECT_EQ(z.ScoreLowerBound(v, true), hi);
  }
  size_t rank = 0;
  for (auto& [s, m] : ref) {
    ZSet::Iter it = z.At(rank++);
    ASSERT_TRUE(it.Valid());
    EXPECT_EQ(it.member(), m);
    EXPECT_EQ(it.score(), s);
  }
  EXPECT_FALSE(z.At(ref.size()).Valid());
  // Backwards iteration from the end.
  if (!ref.empty()) {
    ZSet::Iter it = z.At(ref.size() - 1);
    for (auto r = ref.rbegin(); r != ref.rend(); ++r) {
      ASSERT_TRUE(it.Valid());
      EXPECT_EQ(it.member(), r->second);
      it.Prev();
    }
    EXPECT_FALSE(it.Valid());
  }
}

TEST(ZSetTest, PackedRandom) { RandomOps(false, 5000, 100, 1); }
TEST(ZSetTest, TreeRandomSmall) { RandomOps(true, 5000, 100, 2); }
TEST(ZSetTest, TreeRandomLarge) { RandomOps(true, 200000, 20000, 3); }
TEST(ZSetTest, TreeRandomDense) { RandomOps(true, 100000, 3000, 4); }

TEST(ZSetTest, ConvertsAtThresholds) {
  ZSet::Limits limits{4, 8};
  ZSet z(1, 1, limits);
  EXPECT_STREQ(z.EncodingName(), "listpack");
  for (int i = 0; i < 4; ++i) z.Insert("m" + std::to_string(i), i, limits);
  EXPECT_STREQ(z.EncodingName(), "listpack");
  z.Insert("m4", 4, limits);
  EXPECT_STREQ(z.EncodingName(), "skiplist");
  EXPECT_TRUE(z.Validate());
  ZSet y(1, 1, limits);
  y.Insert("123456789", 1, limits);
  EXPECT_STREQ(y.EncodingName(), "skiplist");
  z.EraseRanks(0, 2);
  z.ConvertToPackedIfFits(limits);
  EXPECT_STREQ(z.EncodingName(), "listpack");
  EXPECT_EQ(Dump(z),
            (std::vector<std::pair<double, std::string>>{{2, "m2"}, {3, "m3"}, {4, "m4"}}));
}

TEST(ZSetTest, LongMembersAndLex) {
  ZSet::Limits limits{1000, 100000};
  for (bool tree : {false, true}) {
    ZSet z(0, 0, limits);
    if (tree) z.ConvertToTree();
    std::string big(300, 'x');
    z.Insert(big, 0, limits);
    z.Insert("a", 0, limits);
    z.Insert("b", 0, limits);
    z.Insert("", 0, limits);
    EXPECT_TRUE(z.Validate());
    EXPECT_EQ(Dump(z).back().second, big);
    LexBound lo{LexBound::Kind::kValue, false, "a"};
    LexBound hi{LexBound::Kind::kValue, true, "b"};
    EXPECT_EQ(z.LexLowerBound(lo), 1u);
    EXPECT_EQ(z.LexRangeEnd(hi), 2u);
    LexBound plus{LexBound::Kind::kMax, false, ""};
    EXPECT_EQ(z.LexRangeEnd(plus), 4u);
    ZSet::Iter it = z.At(3);
    it.Prev();
    EXPECT_EQ(it.member(), "b");
    auto clone = z.Clone();
    EXPECT_TRUE(static_cast<ZSet*>(clone.get())->Validate());
    EXPECT_EQ(Dump(*static_cast<ZSet*>(clone.get())), Dump(z));
  }
}

TEST(ZSetTest, ScanVisitsEveryMember) {
  ZSet::Limits limits{0, 0};
  ZSet z(1, 1, limits);
  for (int i = 0; i < 5000; ++i) z.Insert("m" + std::to_string(i), i, limits);
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    cursor = z.Scan(cursor, 10, [&](std::string_view m, double) { seen.insert(std::string(m)); });
    // Deleting members mid-scan must not hide the others.
    if (calls++ == 100) {
      for (int i = 0; i < 5000; i += 2) z.Erase("m" + std::to_string(i));
    }
  } while (cursor != 0);
  for (int i = 1; i < 5000; i += 2) EXPECT_TRUE(seen.count("m" + std::to_string(i))) << i;
}

// ZSCAN COUNT n returns about n members per call, as Redis's bucket walk does (issue 15: the
// sparser member index used to give about half).
TEST(ZSetTest, ScanReturnsAboutCount) {
  ZSet::Limits limits{0, 0};
  ZSet z(1, 1, limits);
  for (int i = 0; i < 1000; ++i) z.Insert("m" + std::to_string(i), i, limits);
  for (size_t count : {1u, 10u, 100u, 500u}) {
    size_t got = 0;
    uint64_t cursor = z.Scan(0, count, [&](std::string_view, double) { ++got; });
    EXPECT_NE(cursor, 0u);
    EXPECT_GE(got, count);
    EXPECT_LE(got, count + count / 4 + 4);
  }
  size_t all = 0;
  EXPECT_EQ(z.Scan(0, 5000, [&](std::string_view, double) { ++all; }), 0u);
  EXPECT_EQ(all, 1000u);
}

}  // namespace
}  // namespace vireo

#include "types/lcs.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace vireo {
namespace {

LcsResult Compute(std::string_view a, std::string_view b, bool sequence, bool matches,
                  uint64_t min_match_len = 0) {
  LcsOptions options;
  options.want_sequence = sequence;
  options.want_matches = matches;
  options.min_match_len = min_match_len;
  LcsResult result;
  EXPECT_TRUE(ComputeLcs(a, b, options, &result));
  return result;
}

// Plain recursive-free reference: the classic full table, length only.
uint32_t ReferenceLength(const std::string& a, const std::string& b) {
  std::vector<std::vector<uint32_t>> t(a.size() + 1, std::vector<uint32_t>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
    }
  }
  return t[a.size()][b.size()];
}

TEST(LcsTest, RedisDocumentationExample) {
  LcsResult r = Compute("ohmytext", "mynewtext", true, true);
  EXPECT_EQ(r.length, 6u);
  EXPECT_EQ(r.sequence, "mytext");
  std::vector<LcsMatch> expected = {{4, 7, 5, 8}, {2, 3, 0, 1}};
  EXPECT_EQ(r.matches, expected);
  EXPECT_EQ(r.matches[0].length(), 4u);
  EXPECT_EQ(r.matches[1].length(), 2u);
}

TEST(LcsTest, MinMatchLenFiltersMatchesOnly) {
  LcsResult r = Compute("ohmytext", "mynewtext", true, true, 4);
  EXPECT_EQ(r.length, 6u);
  EXPECT_EQ(r.sequence, "mytext");
  std::vector<LcsMatch> expected = {{4, 7, 5, 8}};
  EXPECT_EQ(r.matches, expected);
}

TEST(LcsTest, TieBreakingMatchesRedis) {
  // Reference output from redis-server: LCS abcab bacba -> "bab", IDX ranges below.
  LcsResult r = Compute("abcab", "bacba", true, true);
  EXPECT_EQ(r.sequence, "bab");
  std::vector<LcsMatch> expected = {{4, 4, 3, 3}, {3, 3, 1, 1}, {1, 1, 0, 0}};
  EXPECT_EQ(r.matches, expected);
}

TEST(LcsTest, EmptyAndDisjointInputs) {
  for (auto [a, b] : std::vector<std::pair<std::string, std::string>>{
           {"", ""}, {"", "abc"}, {"abc", ""}, {"abc", "xyz"}}) {
    LcsResult r = Compute(a, b, true, true);
    EXPECT_EQ(r.length, 0u);
    EXPECT_EQ(r.sequence, "");
    EXPECT_TRUE(r.matches.empty());
    EXPECT_EQ(LcsLength(a, b), 0u);
  }
}

TEST(LcsTest, IdenticalStringsAreOneMatch) {
  LcsResult r = Compute("hello", "hello", true, true);
  EXPECT_EQ(r.sequence, "hello");
  std::vector<LcsMatch> expected = {{0, 4, 0, 4}};
  EXPECT_EQ(r.matches, expected);
}

TEST(LcsTest, BinarySafe) {
  std::string a("a\0b\0c", 5);
  std::string b("\0\0c", 3);
  LcsResult r = Compute(a, b, true, false);
  EXPECT_EQ(r.sequence, std::string("\0\0c", 3));
}

TEST(LcsTest, SequenceNotBuiltWhenNotWanted) {
  LcsResult r = Compute("ohmytext", "mynewtext", false, true);
  EXPECT_EQ(r.length, 6u);
  EXPECT_TRUE(r.sequence.empty());
  EXPECT_EQ(r.matches.size(), 2u);
  r = Compute("ohmytext", "mynewtext", false, false);
  EXPECT_EQ(r.length, 6u);
  EXPECT_TRUE(r.matches.empty());
}

TEST(LcsTest, TableBytes) {
  EXPECT_EQ(LcsTableBytes(0, 0), 4u);
  EXPECT_EQ(LcsTableBytes(9, 19), 10u * 20u * 4u);
  EXPECT_EQ(LcsTableBytes(SIZE_MAX - 1, SIZE_MAX - 1), UINT64_MAX);
}

// Random inputs over a small alphabet: the length agrees with the reference and with the
// two-row LcsLength; the sequence is the concatenation of the matches; every match really is
// common to both strings; matches run strictly backwards and never touch each other in both
// strings at once (they would have been one match).
TEST(LcsTest, RandomizedInvariants) {
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 500; ++iter) {
    std::uniform_int_distribution<int> len(0, 30);
    std::uniform_int_distribution<int> letter(0, 3);
    std::string a, b;
    for (int i = len(rng); i > 0; --i) a.push_back(static_cast<char>('a' + letter(rng)));
    for (int i = len(rng); i > 0; --i) b.push_back(static_cast<char>('a' + letter(rng)));

    LcsResult r = Compute(a, b, true, true);
    ASSERT_EQ(r.length, ReferenceLength(a, b)) << a << " " << b;
    ASSERT_EQ(LcsLength(a, b), r.length);
    ASSERT_EQ(LcsLength(b, a), r.length);
    ASSERT_EQ(r.sequence.size(), r.length);

    std::string joined;
    for (auto it = r.matches.rbegin(); it != r.matches.rend(); ++it) {
      ASSERT_LE(it->a_start, it->a_end);
      ASSERT_EQ(it->a_end - it->a_start, it->b_end - it->b_start);
      std::string_view in_a = std::string_view(a).substr(it->a_start, it->length());
      std::string_view in_b = std::string_view(b).substr(it->b_start, it->length());
      ASSERT_EQ(in_a, in_b);
      joined.append(in_a);
    }
    ASSERT_EQ(joined, r.sequence) << a << " " << b;
    for (size_t k = 1; k < r.matches.size(); ++k) {
      const LcsMatch& later = r.matches[k - 1];
      const LcsMatch& earlier = r.matches[k];
      ASSERT_LT(earlier.a_end, later.a_start);
      ASSERT_LT(earlier.b_end, later.b_start);
      ASSERT_FALSE(earlier.a_end + 1 == later.a_start && earlier.b_end + 1 == later.b_start);
    }

    // MINMATCHLEN drops short matches and nothing else.
    LcsResult filtered = Compute(a, b, true, true, 2);
    std::vector<LcsMatch> expected;
    for (const LcsMatch& m : r.matches) {
      if (m.length() >= 2) expected.push_back(m);
    }
    ASSERT_EQ(filtered.matches, expected);
    ASSERT_EQ(filtered.sequence, r.sequence);
  }
}

}  // namespace
}  // namespace vireo

// GlobMatch tests. Every row of the case-sensitive table was checked against Debian's
// redis-server 7.0.15 by storing the subject as the only key and running KEYS <pattern>; the
// nocase rows were checked with COMMAND LIST FILTERBY PATTERN (which matches without case)
// against the command name "get". Additionally ~12000 random patterns over "ab*?[]^-\\\x80\xff"
// agreed with the server during development.
#include "util/glob.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace vireo {
namespace {

using namespace std::literals;  // "..."sv keeps embedded NULs in the tables.

struct GlobCase {
  std::string_view pattern;
  std::string_view subject;
  bool match;
};

TEST(GlobMatch, MatchesRedisKeys) {
  const std::vector<GlobCase> cases = {
      {"hello"sv, "hello"sv, true},
      {"hello"sv, "hellO"sv, false},
      {"hello"sv, "hell"sv, false},
      {"h?llo"sv, "hello"sv, true},
      {"h?llo"sv, "hllo"sv, false},
      {"h*llo"sv, "hllo"sv, true},
      {"h*llo"sv, "heeeello"sv, true},
      {"h*llo"sv, "heeeelloo"sv, false},
      {"*"sv, "anything"sv, true},
      {"**"sv, ""sv, false},
      {"*"sv, "x"sv, true},
      {"?"sv, ""sv, false},
      {"??"sv, "a"sv, false},
      {"a*"sv, "a"sv, true},
      {"a*b"sv, "ab"sv, true},
      {"a*b"sv, "acb"sv, true},
      {"a*b"sv, "acbd"sv, false},
      {"*b"sv, "ab"sv, true},
      {"*a*"sv, "banana"sv, true},
      {"*an*an*"sv, "banana"sv, true},
      {"*an*an*a*"sv, "banana"sv, true},
      {"a**b"sv, "axxb"sv, true},
      {""sv, ""sv, true},
      {""sv, "a"sv, false},
      {"a"sv, ""sv, false},
      {"a*?"sv, "a"sv, false},
      {"h[ae]llo"sv, "hello"sv, true},
      {"h[ae]llo"sv, "hallo"sv, true},
      {"h[ae]llo"sv, "hillo"sv, false},
      {"h[^e]llo"sv, "hallo"sv, true},
      {"h[^e]llo"sv, "hello"sv, false},
      {"h[a-b]llo"sv, "hbllo"sv, true},
      {"h[a-b]llo"sv, "hcllo"sv, false},
      {"h[b-a]llo"sv, "hallo"sv, true},
      {"h[z-a]llo"sv, "hmllo"sv, true},
      {"[a-c-e]"sv, "d"sv, false},
      {"[a-c-e]"sv, "-"sv, true},
      {"[a-c-e]"sv, "e"sv, true},
      {"[a-]"sv, "b"sv, false},
      {"[a-]"sv, "^"sv, true},
      {"[a-]b"sv, "b"sv, true},
      {"[a-]b"sv, "a"sv, true},
      {"[]"sv, "]"sv, false},
      {"[]]"sv, "]"sv, false},
      {"[]a]"sv, "a"sv, false},
      {"["sv, "["sv, false},
      {"["sv, "a"sv, false},
      {"[ab"sv, "b"sv, true},
      {"[ab"sv, "ab"sv, false},
      {"[^"sv, "x"sv, true},
      {"[^"sv, ""sv, false},
      {"[^ab"sv, "c"sv, true},
      {"[\\]]"sv, "]"sv, true},
      {"[\\\\]"sv, "\\"sv, true},
      {"[\\"sv, "\\"sv, true},
      {"[a\\-z]"sv, "-"sv, true},
      {"[a\\-z]"sv, "m"sv, false},
      {"\\*"sv, "*"sv, true},
      {"\\*"sv, "a"sv, false},
      {"\\?"sv, "?"sv, true},
      {"a\\"sv, "a\\"sv, true},
      {"\\"sv, "\\"sv, true},
      {"\\a"sv, "a"sv, true},
      {"x["sv, "x["sv, false},
      {"a[!b]c"sv, "a!c"sv, true},
      {"[[]"sv, "["sv, true},
      {"[*]"sv, "*"sv, true},
      {"[*]"sv, "a"sv, false},
      {"[?]"sv, "?"sv, true},
      {"[[a]"sv, "a"sv, true},
      {"*["sv, "a["sv, false},
      {"?*?"sv, "ab"sv, true},
      {"?*?"sv, "a"sv, false},
      {"[\x80-\xff]"sv, "\xe9"sv, true},
      {"[a-\xff]"sv, "\xe9"sv, false},
      {"[a-\xff]"sv, "b"sv, false},
      {"[\xff-a]"sv, "\x80"sv, false},
      {"[a-z]"sv, "\xe9"sv, false},
      {"*a*b"sv, "xaxxbxb"sv, true},
      {"a\x00"
       "b"sv,
       "a\x00"
       "b"sv,
       true},
      {"a?b"sv,
       "a\x00"
       "b"sv,
       true},
      {"[\x00]"sv, "\x00"sv, true},
      {"*\x00"sv, "ab\x00"sv, true},
  };
  for (const GlobCase& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.subject), c.match)
        << "pattern=\"" << c.pattern << "\" subject=\"" << c.subject << "\"";
  }
}

TEST(GlobMatch, NoCase) {
  const std::vector<GlobCase> cases = {
      {"GE?", "get", true},
      {"*ET", "get", true},
      {"g[E]t", "get", true},
      {"G[A-E]T", "get", true},
      {"[F-H]et", "get", true},
      {"[^A-F]et", "get", true},
      {"[g-g]ET", "get", true},
      {"[G-G]et", "get", true},
      {"\\Get", "get", true},
      // An escaped byte inside brackets is compared exactly even without case.
      {"[\\G]et", "get", false},
      {"[\\g]ET", "get", true},
      // Range ends fold after the swap: [a-F] is 'F'..'a', folded to 'f'..'a', i.e. empty.
      {"[a-F]et", "get", false},
      {"[Z-a]et", "get", false},
  };
  for (const GlobCase& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.subject, /*nocase=*/true), c.match) << c.pattern;
  }
  EXPECT_FALSE(GlobMatch("GE?", "get"));
}

// Patterns as PSUBSCRIBE uses them (keyspace-notification channels and the like), checked
// against redis-server 7.0.15 with PSUBSCRIBE + PUBLISH (the reply counts the pattern).
TEST(GlobMatch, PubsubChannelPatterns) {
  const std::vector<GlobCase> cases = {
      {"__keyevent@*__:*", "__keyevent@0__:del", true},
      {"__keyevent@*__:*", "__keyspace@0__:k", false},
      {"__key*__:*", "__keyspace@15__:user:1", true},
      {"__keyspace@0__:user:*", "__keyspace@0__:user:", true},
      {"__keyspace@0__:user:*", "__keyspace@1__:user:1", false},
      {"news.*", "news.", true},
      {"news.*", "news", false},
      {"news.[a-c]*", "news.bar", true},
      {"news.[^a-c]*", "news.bar", false},
      {"*", "", false},  // PUBLISH "" reaches no "*" subscriber in Redis either
      {"h\\*llo", "h*llo", true},
      {"h\\*llo", "hello", false},
  };
  for (const GlobCase& c : cases) {
    EXPECT_EQ(GlobMatch(c.pattern, c.subject), c.match) << c.pattern << " / " << c.subject;
  }
}

TEST(GlobMatch, EmptySubjectOnlyMatchesEmptyPattern) {
  // KEYS and SCAN special-case the pattern "*", so an empty key is still listed by KEYS *.
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("*", ""));
  EXPECT_FALSE(GlobMatch("**", ""));
  EXPECT_FALSE(GlobMatch("[^", ""));
}

TEST(GlobMatch, NestingLimit) {
  // Each '*' recurses one level deeper; Redis gives up past 1000 levels (KEYS agreed).
  std::string p1000, p1001;
  for (int i = 0; i < 1000; ++i) p1000 += "*a";
  p1001 = p1000 + "*a";
  EXPECT_TRUE(GlobMatch(p1000, std::string(1000, 'a')));
  EXPECT_FALSE(GlobMatch(p1001, std::string(1001, 'a')));
  EXPECT_FALSE(GlobMatch(p1001, std::string(1500, 'a')));
  EXPECT_TRUE(GlobMatch(p1000.substr(2) + "*", std::string(999, 'a') + "b"));
}

TEST(GlobMatch, PathologicalPatternsAreFast) {
  // Naive backtracking is exponential in the number of stars here.
  std::string pattern;
  for (int i = 0; i < 30; ++i) pattern += "a*";
  pattern += "b";
  const std::string subject(5000, 'a');
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GlobMatch(pattern, subject));
  EXPECT_TRUE(GlobMatch(pattern, subject + "b"));
  EXPECT_FALSE(GlobMatch("*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*c", subject + "b"));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::seconds(1));
}

}  // namespace
}  // namespace vireo

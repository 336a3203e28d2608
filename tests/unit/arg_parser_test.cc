#include "core/arg_parser.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <string>
#include <vector>

namespace vireo {
namespace {

// argv plus the reply text Check() writes.
struct Fixture {
  explicit Fixture(std::vector<std::string_view> args) : argv(std::move(args)), reply(&out) {}
  ArgParser Parser(size_t first = 0) { return ArgParser(argv, &reply, first); }
  std::vector<std::string_view> argv;
  std::string out;
  ReplyBuilder reply;
};

TEST(ArgParserTest, CursorAndTypedReads) {
  Fixture f({"CMD", "12", "-3", "1.5", "rest", "more"});
  ArgParser args = f.Parser(1);
  EXPECT_EQ(args.Int(), 12);
  EXPECT_EQ(args.Int(), -3);
  EXPECT_DOUBLE_EQ(args.Double(), 1.5);
  EXPECT_EQ(args.remaining(), 2u);
  EXPECT_EQ(args.Peek(), "rest");
  EXPECT_EQ(args.Rest().size(), 2u);
  EXPECT_FALSE(args.HasNext());
  EXPECT_TRUE(args.Check());
  EXPECT_EQ(f.out, "");
}

TEST(ArgParserTest, FirstErrorWinsAndIsRepliedOnce) {
  Fixture f({"abc", "1.x", "7"});
  ArgParser args = f.Parser();
  EXPECT_EQ(args.Int(), 0);
  args.Double();             // would fail too, but the first error stays
  EXPECT_EQ(args.Int(), 0);  // nothing is read after a failure
  EXPECT_FALSE(args.ok());
  EXPECT_FALSE(args.Check());
  EXPECT_FALSE(args.Check());
  EXPECT_EQ(f.out, "-ERR value is not an integer or out of range\r\n");
}

TEST(ArgParserTest, MissingArgumentIsSyntaxError) {
  Fixture f({"CMD"});
  ArgParser args = f.Parser(1);
  args.Next();
  EXPECT_EQ(args.error(), "ERR syntax error");
}

TEST(ArgParserTest, Ranges) {
  Fixture f({"5", "-1", "0", "3000000000"});
  ArgParser a = f.Parser();
  a.IntInRange(0, 1);
  EXPECT_EQ(a.error(), "ERR value is out of range, value must between 0 and 1");
  ArgParser b = f.Parser(1);
  b.NonNegative();
  EXPECT_EQ(b.error(), "ERR value is out of range, must be positive");
  ArgParser c = f.Parser(2);
  c.Positive("ERR count should be greater than 0");
  EXPECT_EQ(c.error(), "ERR count should be greater than 0");
  ArgParser d = f.Parser(3);
  d.DbIndex();
  EXPECT_EQ(d.error(), "ERR value is out of range, value must between -2147483648 and 2147483647");
  ArgParser e = f.Parser(3);
  e.DbIndex("ERR invalid first DB index");
  EXPECT_EQ(e.error(), "ERR invalid first DB index");
}

TEST(ArgParserTest, FloatsFollowRedisRules) {
  Fixture f({"nan", "1e400", "+inf", "0x10"});
  ArgParser args = f.Parser();
  args.Double();
  EXPECT_EQ(args.error(), "ERR value is not a valid float");
  ArgParser b = f.Parser(1);
  b.Double();
  EXPECT_FALSE(b.ok());
  ArgParser c = f.Parser(2);
  EXPECT_TRUE(std::isinf(c.Double()));
  EXPECT_DOUBLE_EQ(c.Double(), 16.0);
  EXPECT_TRUE(c.ok());
}

TEST(ArgParserTest, BlockTimeouts) {
  Fixture f({"0.0015", "-0.0001", "-1", "x", "1e30", "0"});
  constexpr int64_t kNow = 1000;
  ArgParser a = f.Parser();
  EXPECT_EQ(a.BlockTimeoutMs(kNow), 2);  // rounded up
  EXPECT_EQ(a.BlockTimeoutMs(kNow), 0);  // -0.1 ms rounds to -0, not negative
  a.BlockTimeoutMs(kNow);
  EXPECT_EQ(a.error(), "ERR timeout is negative");
  ArgParser b = f.Parser(3);
  b.BlockTimeoutMs(kNow);
  EXPECT_EQ(b.error(), "ERR timeout is not a float or out of range");
  ArgParser c = f.Parser(4);
  c.BlockTimeoutMs(kNow);
  EXPECT_EQ(c.error(), "ERR timeout is out of range");
  ArgParser d = f.Parser(5);
  EXPECT_EQ(d.BlockTimeoutMs(INT64_MAX), 0);
  EXPECT_TRUE(d.ok());
}

TEST(ArgParserTest, MillisecondTimeouts) {
  Fixture f({"1500", "1.5", "-1", "9223372036854775807"});
  ArgParser a = f.Parser();
  EXPECT_EQ(a.TimeoutMs(10), 1500);
  a.TimeoutMs(10);
  EXPECT_EQ(a.error(), "ERR timeout is not an integer or out of range");
  ArgParser b = f.Parser(2);
  b.TimeoutMs(10);
  EXPECT_EQ(b.error(), "ERR timeout is negative");
  ArgParser c = f.Parser(3);
  c.TimeoutMs(10);
  EXPECT_EQ(c.error(), "ERR timeout is out of range");
}

TEST(ArgParserTest, ExpireTimes) {
  Fixture f({"10", "10", "0", "-5", "9223372036854775807"});
  ArgParser a = f.Parser();
  EXPECT_EQ(a.ExpireAtMs(TimeUnit::kSeconds, false, 1000, "set", true), 11000);
  EXPECT_EQ(a.ExpireAtMs(TimeUnit::kMilliseconds, true, 1000, "set", true), 10);
  a.ExpireAtMs(TimeUnit::kSeconds, false, 1000, "set", true);
  EXPECT_EQ(a.error(), "ERR invalid expire time in 'set' command");
  ArgParser b = f.Parser(3);
  EXPECT_EQ(b.ExpireAtMs(TimeUnit::kSeconds, false, 1000, "expire", false), -4000);
  b.ExpireAtMs(TimeUnit::kMilliseconds, false, 1000, "pexpire", false);
  EXPECT_EQ(b.error(), "ERR invalid expire time in 'pexpire' command");
}

TEST(ArgParserTest, Keywords) {
  Fixture f({"nx", "count", "5", "WITHSCORES", "limit"});
  ArgParser args = f.Parser();
  EXPECT_FALSE(args.Flag("XX"));
  EXPECT_TRUE(args.Flag("NX"));
  int64_t count = 0;
  EXPECT_TRUE(args.Option("COUNT", &count));
  EXPECT_EQ(count, 5);
  EXPECT_EQ(args.OneOf({"WITHSCORES", "LIMIT"}), 0);
  std::string_view value;
  EXPECT_FALSE(args.Option("LIMIT", &value));  // no value follows
  EXPECT_TRUE(args.HasNext());
  args.ExpectEnd();
  EXPECT_FALSE(args.ok());
  EXPECT_EQ(args.error(), "ERR syntax error");
}

TEST(ArgParserTest, OptionValueErrorsAndExclusiveSets) {
  Fixture f({"COUNT", "x"});
  ArgParser args = f.Parser();
  int64_t count = 0;
  EXPECT_FALSE(args.Option("COUNT", &count));
  EXPECT_EQ(args.error(), "ERR value is not an integer or out of range");
  ArgParser b = f.Parser();
  EXPECT_TRUE(b.Exclusive({true, false, false}));
  EXPECT_FALSE(b.Exclusive({true, true}, "ERR GT and LT"));
  EXPECT_EQ(b.error(), "ERR GT and LT");
}

TEST(ArgParserTest, FailKeepsTheFirstError) {
  Fixture f({});
  ArgParser args = f.Parser();
  EXPECT_FALSE(args.Fail("ERR one"));
  EXPECT_FALSE(args.Fail("ERR two"));
  EXPECT_FALSE(args.Check());
  EXPECT_EQ(f.out, "-ERR one\r\n");
}

TEST(ArgParserTest, IntAtLeastKeepsTheIntegerErrorApart) {
  Fixture f({"x", "-2", "-1"});
  ArgParser a = f.Parser();
  a.IntAtLeast(-1, "ERR too small");
  EXPECT_EQ(a.error(), "ERR value is not an integer or out of range");
  ArgParser b = f.Parser(1);
  b.IntAtLeast(-1, "ERR too small");
  EXPECT_EQ(b.error(), "ERR too small");
  ArgParser c = f.Parser(2);
  EXPECT_EQ(c.IntAtLeast(-1, "ERR too small"), -1);
  EXPECT_TRUE(c.ok());
}

TEST(ArgParserTest, NumKeys) {
  Fixture f({"2", "a", "b", "WEIGHTS"});
  ArgParser a = f.Parser();
  auto keys = a.NumKeys("ERR at least 1");
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[1], "b");
  EXPECT_EQ(a.Peek(), "WEIGHTS");
  Fixture g({"0", "a"});
  ArgParser b = g.Parser();
  b.NumKeys("ERR at least 1");
  EXPECT_EQ(b.error(), "ERR at least 1");
  Fixture h({"3", "a"});
  ArgParser c = h.Parser();
  c.NumKeys("ERR at least 1");
  EXPECT_EQ(c.error(), "ERR syntax error");
}

TEST(ArgParserTest, OptionNameNeedsAValue) {
  Fixture f({"COUNT"});
  ArgParser a = f.Parser();
  EXPECT_FALSE(a.OptionName("COUNT"));
  EXPECT_EQ(a.pos(), 0u);  // nothing consumed: the caller reports the syntax error
  EXPECT_EQ(a.OneOf({"LEFT", "RIGHT"}), -1);
}

TEST(ArgParserTest, TakeBeyondTheEndIsSyntaxError) {
  Fixture f({"a", "b"});
  ArgParser a = f.Parser();
  EXPECT_TRUE(a.Take(3).empty());
  EXPECT_EQ(a.error(), "ERR syntax error");
  EXPECT_FALSE(a.HasNext());  // loops stop at the first failure
}

TEST(ArgParserTest, RequiredKeywords) {
  Fixture f({"km", "yards", "right"});
  ArgParser a = f.Parser();
  EXPECT_EQ(a.Keyword({"M", "KM"}), 1);
  EXPECT_EQ(a.Keyword({"M", "KM"}, "ERR unsupported unit"), -1);
  EXPECT_EQ(a.error(), "ERR unsupported unit");
  ArgParser b = f.Parser(1);
  EXPECT_EQ(b.Keyword({"LEFT", "RIGHT"}), -1);  // consumed, but not one of them
  EXPECT_EQ(b.error(), "ERR syntax error");
  ArgParser c = f.Parser(3);
  EXPECT_EQ(c.Keyword({"LEFT"}, "ERR custom"), -1);  // past the end: a syntax error
  EXPECT_EQ(c.error(), "ERR syntax error");
  EXPECT_FALSE(c.SyntaxError());
  EXPECT_EQ(c.error(), "ERR syntax error");
}

TEST(ArgParserTest, OptionNameWithSeveralValues) {
  Fixture f({"FROMLONLAT", "1", "2", "BYBOX", "1", "2"});
  ArgParser a = f.Parser();
  EXPECT_FALSE(a.OptionName("FROMLONLAT", 6));
  EXPECT_TRUE(a.OptionName("FROMLONLAT", 2));
  EXPECT_DOUBLE_EQ(a.Double(), 1.0);
  EXPECT_DOUBLE_EQ(a.Double(), 2.0);
  EXPECT_FALSE(a.OptionName("BYBOX", 3));  // only two values follow
  EXPECT_EQ(a.Peek(), "BYBOX");
  EXPECT_TRUE(a.ok());
}

TEST(ArgParserTest, DoubleAtLeast) {
  Fixture f({"abc", "-1", "2.5"});
  ArgParser a = f.Parser();
  a.DoubleAtLeast(0, "ERR need numeric radius", "ERR radius cannot be negative");
  EXPECT_EQ(a.error(), "ERR need numeric radius");
  ArgParser b = f.Parser(1);
  b.DoubleAtLeast(0, "ERR need numeric radius", "ERR radius cannot be negative");
  EXPECT_EQ(b.error(), "ERR radius cannot be negative");
  ArgParser c = f.Parser(2);
  EXPECT_DOUBLE_EQ(c.DoubleAtLeast(0, "x", "y"), 2.5);
  EXPECT_TRUE(c.ok());
}

TEST(ArgParserTest, BitOffsets) {
  constexpr std::string_view kBad = "ERR bit offset is not an integer or out of range";
  Fixture f({"7", "#3", "#3", "-1", "800", "800", "x", "#9223372036854775807"});
  ArgParser a = f.Parser();
  EXPECT_EQ(a.BitOffset(0, -1, kBad), 7);
  EXPECT_EQ(a.BitOffset(8, -1, kBad), 24);  // the 3rd 8-bit field
  EXPECT_TRUE(a.ok());
  a.BitOffset(0, -1, kBad);  // "#3" without a field width
  EXPECT_EQ(a.error(), kBad);
  ArgParser b = f.Parser(3);
  b.BitOffset(0, -1, kBad);
  EXPECT_EQ(b.error(), kBad);
  ArgParser c = f.Parser(4);
  EXPECT_EQ(c.BitOffset(0, -1, kBad), 800);  // no limit
  c.BitOffset(0, 100, kBad);                 // byte 100 is not below 100
  EXPECT_EQ(c.error(), kBad);
  ArgParser d = f.Parser(6);
  d.BitOffset(0, -1, kBad);
  EXPECT_EQ(d.error(), kBad);
  ArgParser e = f.Parser(7);
  e.BitOffset(16, -1, kBad);  // the field index overflows
  EXPECT_EQ(e.error(), kBad);
}

TEST(ArgParserTest, ArgumentCountShapes) {
  Fixture f({"a", "b", "c", "d", "e", "f"});
  ArgParser a = f.Parser();
  EXPECT_TRUE(a.ExpectRemaining(6, 6));
  EXPECT_TRUE(a.ExpectGroupsOf(3));
  EXPECT_TRUE(a.ExpectGroupsOf(2));
  EXPECT_EQ(a.pos(), 0u);  // nothing consumed
  EXPECT_FALSE(a.ExpectGroupsOf(4));
  EXPECT_EQ(a.error(), "ERR syntax error");
  ArgParser b = f.Parser(6);
  EXPECT_FALSE(b.ExpectGroupsOf(2));  // none left is not a group
  ArgParser c = f.Parser(2);
  EXPECT_FALSE(c.ExpectRemaining(0, 3));
  EXPECT_EQ(c.error(), "ERR syntax error");
}

TEST(ArgParserTest, IntBetweenTellsNotAnIntegerFromOutside) {
  constexpr std::string_view kOutside = "ERR index out of range";
  Fixture f({"-3", "2", "3", "x"});
  ArgParser a = f.Parser();
  EXPECT_EQ(a.IntBetween(-3, 2, kOutside), -3);
  EXPECT_EQ(a.IntBetween(-3, 2, kOutside), 2);
  EXPECT_TRUE(a.ok());
  a.IntBetween(-3, 2, kOutside);
  EXPECT_EQ(a.error(), kOutside);
  ArgParser b = f.Parser(3);
  b.IntBetween(-3, 2, kOutside);
  EXPECT_EQ(b.error(), "ERR value is not an integer or out of range");
}

TEST(ArgParserTest, CursorReadsLikeStrtoul) {
  Fixture f({"0", "", "+17", "-1", "18446744073709551615", std::string_view("5\0x", 3),
             "18446744073709551616", "-", "1x", " 1"});
  ArgParser a = f.Parser();
  EXPECT_EQ(a.Cursor(), 0u);
  EXPECT_EQ(a.Cursor(), 0u);  // the empty string
  EXPECT_EQ(a.Cursor(), 17u);
  EXPECT_EQ(a.Cursor(), UINT64_MAX);  // a negative cursor wraps
  EXPECT_EQ(a.Cursor(), UINT64_MAX);
  EXPECT_EQ(a.Cursor(), 5u);  // a NUL ends the text
  EXPECT_TRUE(a.ok());
  for (size_t bad = 6; bad < f.argv.size(); ++bad) {
    ArgParser b = f.Parser(bad);
    b.Cursor();
    EXPECT_EQ(b.error(), "ERR invalid cursor") << f.argv[bad];
  }
  ArgParser c = f.Parser(8);
  c.Cursor("ERR bad");
  EXPECT_EQ(c.error(), "ERR bad");
}

TEST(ArgParserTest, StoredValuesFailInReadingOrder) {
  Fixture f({"abc", "1.5"});
  ArgParser a = f.Parser();
  EXPECT_EQ(a.IntValue("42"), 42);
  EXPECT_EQ(a.LongDoubleValue("2.5"), 2.5L);
  EXPECT_EQ(a.pos(), 0u);  // nothing consumed
  EXPECT_TRUE(a.ok());
  a.IntValue("1.5", "ERR hash value is not an integer");
  a.Int();  // the stored value failed first, so its error stays
  EXPECT_EQ(a.error(), "ERR hash value is not an integer");
  ArgParser b = f.Parser();
  b.Int();
  b.LongDoubleValue("x");
  EXPECT_EQ(b.error(), "ERR value is not an integer or out of range");
  ArgParser c = f.Parser();
  c.LongDoubleValue("nan");
  EXPECT_EQ(c.error(), "ERR value is not a valid float");
  EXPECT_FALSE(c.Check());
  EXPECT_EQ(f.out, "-ERR value is not a valid float\r\n");
}

TEST(ArgParserTest, ParsedWithCallerGrammar) {
  Fixture f({"0x1f", "abc", "7"});
  auto hex = [](std::string_view s, int* out) {
    if (s.size() < 3 || s.substr(0, 2) != "0x") return false;
    *out = std::stoi(std::string(s.substr(2)), nullptr, 16);
    return true;
  };
  ArgParser a = f.Parser();
  EXPECT_EQ(a.Parsed<int>(hex, "ERR bad hex"), 31);
  EXPECT_TRUE(a.ok());
  EXPECT_EQ(a.Parsed<int>(hex, "ERR bad hex"), 0);
  EXPECT_EQ(a.error(), "ERR bad hex");
  EXPECT_EQ(a.pos(), 2u);  // the bad argument was consumed, nothing after it
  a.Parsed<int>(hex, "ERR other");
  EXPECT_EQ(a.error(), "ERR bad hex");
  ArgParser b = f.Parser(3);
  b.Parsed<int>(hex, "ERR bad hex");  // past the end
  EXPECT_EQ(b.error(), "ERR syntax error");
}

TEST(ArgParserTest, IntBetween) {
  constexpr std::string_view kOutside = "ERR must be 1..10";
  Fixture f({"10", "1", "0", "11", "x"});
  ArgParser a = f.Parser();
  EXPECT_EQ(a.IntBetween(1, 10, kOutside), 10);
  EXPECT_EQ(a.IntBetween(1, 10, kOutside), 1);
  EXPECT_TRUE(a.ok());
  a.IntBetween(1, 10, kOutside);
  EXPECT_EQ(a.error(), kOutside);
  ArgParser b = f.Parser(3);
  b.IntBetween(1, 10, kOutside);
  EXPECT_EQ(b.error(), kOutside);
  ArgParser c = f.Parser(4);
  c.IntBetween(1, 10, kOutside);  // not a number is not "outside"
  EXPECT_EQ(c.error(), "ERR value is not an integer or out of range");
}

TEST(ArgParserTest, CountedList) {
  constexpr std::string_view kBad = "ERR bad count";
  constexpr std::string_view kFew = "ERR too few";
  Fixture f({"2", "a", "b", "c", "3", "x", "y", "0", "z"});
  ArgParser a = f.Parser();
  auto items = a.CountedList(kBad, kFew);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(items[0], "a");
  EXPECT_EQ(items[1], "b");
  EXPECT_EQ(a.Peek(), "c");
  EXPECT_TRUE(a.ok());
  ArgParser b = f.Parser(4);  // 3 wanted, 4 left: fine
  EXPECT_EQ(b.CountedList(kBad, kFew).size(), 3u);
  ArgParser c = f.Parser(7);  // 0
  EXPECT_TRUE(c.CountedList(kBad, kFew).empty());
  EXPECT_EQ(c.error(), kBad);
  ArgParser d = f.Parser(3);  // "c"
  d.CountedList(kBad, kFew);
  EXPECT_EQ(d.error(), kBad);
  Fixture g({"3", "x", "y"});
  ArgParser e = g.Parser();
  EXPECT_TRUE(e.CountedList(kBad, kFew).empty());
  EXPECT_EQ(e.error(), kFew);
}

}  // namespace
}  // namespace vireo

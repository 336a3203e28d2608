// Tests for util/strings and util/clock. Expected values marked "redis-server 7.0" were observed
// on Debian's redis-server 7.0.15 (INCRBY, XADD, ZADD+ZSCORE, INCRBYFLOAT, inline RPUSH+LRANGE);
// FormatDouble's 7.2 expectations come from running Redis 7.2's d2string/fpconv algorithm.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

using namespace std::literals;  // "..."sv keeps embedded NULs in the tables.

// ---- ParseInt64 (redis-server 7.0: INCRBY on a missing key) ----

TEST(ParseInt64, AcceptsRedisIntegers) {
  struct Case {
    std::string_view in;
    int64_t want;
  };
  for (const Case& c : std::vector<Case>{{"0", 0},
                                         {"1", 1},
                                         {"-1", -1},
                                         {"99", 99},
                                         {"-99", -99},
                                         {"9223372036854775807", INT64_MAX},
                                         {"-9223372036854775808", INT64_MIN}}) {
    int64_t v = 12345;
    EXPECT_TRUE(ParseInt64(c.in, &v)) << c.in;
    EXPECT_EQ(v, c.want) << c.in;
  }
}

TEST(ParseInt64, RejectsWhatRedisRejects) {
  for (std::string_view in : {""sv,
                              "-"sv,
                              "-0"sv,
                              "-00"sv,
                              "01"sv,
                              "000"sv,
                              "+1"sv,
                              " 1"sv,
                              "1 "sv,
                              "1a"sv,
                              "0x10"sv,
                              "1e3"sv,
                              "1.0"sv,
                              "9223372036854775808"sv,
                              "-9223372036854775809"sv,
                              "18446744073709551615"sv,
                              "18446744073709551616"sv,
                              "99999999999999999999"sv,
                              "123456789012345678901"sv,
                              "1\0"sv,
                              "\0"sv}) {
    int64_t v = 777;
    EXPECT_FALSE(ParseInt64(in, &v)) << in;
    EXPECT_EQ(v, 777) << "output must be untouched on failure: " << in;
  }
}

TEST(ParseUint64, StrictGrammarFullRange) {
  uint64_t v = 0;
  EXPECT_TRUE(ParseUint64("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseUint64("18446744073709551615", &v));
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_TRUE(ParseUint64("9223372036854775808", &v));
  EXPECT_EQ(v, uint64_t{1} << 63);
  for (std::string_view in : {""sv, "-0"sv, "-1"sv, "+1"sv, "01"sv, " 1"sv, "1 "sv,
                              "18446744073709551616"sv, "99999999999999999999"sv, "1x"sv}) {
    EXPECT_FALSE(ParseUint64(in, &v)) << in;
  }
}

// redis-server 7.0: XADD s 1-<in> f v, reading back the sequence part of the ID.
TEST(ParseUint64Lax, MatchesStreamIdParsing) {
  struct Case {
    std::string_view in;
    uint64_t want;
  };
  for (const Case& c : std::vector<Case>{{"0", 0},
                                         {"5", 5},
                                         {"05", 5},
                                         {"+6", 6},
                                         {" 7", 7},
                                         {"\t7", 7},
                                         {" -3", 18446744073709551613ull},
                                         {"-0", 0},
                                         {"18446744073709551615", UINT64_MAX},
                                         {"9223372036854775808", 9223372036854775808ull},
                                         {"09223372036854775809", 9223372036854775809ull}}) {
    uint64_t v = 1;
    EXPECT_TRUE(ParseUint64Lax(c.in, &v)) << c.in;
    EXPECT_EQ(v, c.want) << c.in;
  }
  for (std::string_view in :
       {""sv, "7 "sv, "-1"sv, "0x9"sv, "+"sv, " "sv, "18446744073709551616"sv, "1\0"sv}) {
    uint64_t v;
    EXPECT_FALSE(ParseUint64Lax(in, &v)) << in;
  }
}

// ---- ParseDouble (redis-server 7.0: ZADD, then ZSCORE printed with %.17g) ----

TEST(ParseDouble, AcceptsStrtodForms) {
  struct Case {
    std::string_view in;
    double want;
  };
  const double inf = std::numeric_limits<double>::infinity();
  for (const Case& c : std::vector<Case>{{"0x10", 16},
                                         {"0X1P4", 16},
                                         {"-0x10", -16},
                                         {"+1", 1},
                                         {".5", 0.5},
                                         {"5.", 5},
                                         {"1e5", 1e5},
                                         {"1E+5", 1e5},
                                         {"0.1", 0.1},
                                         {"inf", inf},
                                         {"+inf", inf},
                                         {"-inf", -inf},
                                         {"INFINITY", inf},
                                         {"1.7976931348623157e308", DBL_MAX},
                                         {"0x1p-1074", 0x1p-1074},
                                         {"4.9e-324", 0x1p-1074},
                                         {"3e-324", 0x1p-1074},
                                         {"1e-310", 1e-310}}) {
    double v = 0;
    EXPECT_TRUE(ParseDouble(c.in, &v)) << c.in;
    EXPECT_EQ(v, c.want) << c.in;
  }
  double v = 1;
  ASSERT_TRUE(ParseDouble("-0", &v));
  EXPECT_TRUE(v == 0 && std::signbit(v));
}

TEST(ParseDouble, RejectsWhatRedisRejects) {
  for (std::string_view in : {""sv,
                              " 1"sv,
                              "\n1"sv,
                              "\v1"sv,
                              "1 "sv,
                              "1e5\n"sv,
                              "nan"sv,
                              "-nan"sv,
                              "NaN"sv,
                              "nan(123)"sv,
                              "1e400"sv,
                              "-1e400"sv,
                              "1e-400"sv,
                              "2.4e-324"sv,
                              "1.7976931348623159e308"sv,
                              "."sv,
                              "1e"sv,
                              "1e+"sv,
                              "0x"sv,
                              "1,5"sv,
                              "1_000"sv,
                              "1\0"sv,
                              "\0"
                              "1"sv,
                              "abc"sv}) {
    double v = 42;
    EXPECT_FALSE(ParseDouble(in, &v)) << in;
    EXPECT_EQ(v, 42);
  }
}

TEST(ParseDouble, NoLengthLimit) {
  // ZADD accepted "1.000...0" of 100000 bytes on redis-server 7.0; only long doubles are capped.
  std::string big = "1." + std::string(99998, '0');
  double v = 0;
  EXPECT_TRUE(ParseDouble(big, &v));
  EXPECT_EQ(v, 1);
}

// ---- ParseLongDouble (redis-server 7.0: INCRBYFLOAT on a missing key) ----

TEST(ParseLongDouble, AcceptsAndRejectsLikeIncrbyfloat) {
  long double v = 0;
  for (std::string_view in : {"0.1"sv, "+1"sv, ".5"sv, "5."sv, "0x10"sv, "0x1p3"sv, "00001"sv,
                              "1e400"sv, "1e-400"sv, "inf"sv, "-inf"sv, "infinity"sv}) {
    EXPECT_TRUE(ParseLongDouble(in, &v)) << in;
  }
  // "inf" parses; INCRBYFLOAT itself then replies "ERR increment would produce NaN or Infinity".
  ASSERT_TRUE(ParseLongDouble("-inf", &v));
  EXPECT_TRUE(std::isinf(v) && v < 0);
  for (std::string_view in :
       {""sv, " 1"sv, "1 "sv, "nan"sv, "1e5000"sv, "1e-5000"sv, "1e"sv, "0x"sv, "abc"sv, "1\0"sv}) {
    EXPECT_FALSE(ParseLongDouble(in, &v)) << in;
  }
}

TEST(ParseLongDouble, LengthCap) {
  // 5119 bytes accepted, 5120 refused (MAX_LONG_DOUBLE_CHARS), as on redis-server 7.0.
  std::string ok = "1." + std::string(kMaxLongDoubleChars - 3, '0');
  std::string too_long = ok + "0";
  ASSERT_EQ(ok.size(), 5119u);
  long double v = 0;
  EXPECT_TRUE(ParseLongDouble(ok, &v));
  EXPECT_EQ(v, 1);
  EXPECT_FALSE(ParseLongDouble(too_long, &v));
}

// ---- FormatInt64 ----

TEST(FormatInt64, Extremes) {
  char buf[kInt64BufSize];
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{9}, int64_t{10}, int64_t{-10},
                    int64_t{1234567890123}, INT64_MAX, INT64_MIN}) {
    std::string want = std::to_string(v);
    size_t n = FormatInt64(v, buf);
    EXPECT_EQ(std::string(buf, n), want);
    EXPECT_EQ(buf[n], '\0');
    EXPECT_EQ(Int64ToString(v), want);
  }
}

// ---- FormatLongDouble (redis-server 7.0: INCRBYFLOAT replies) ----

long double ParsedLd(std::string_view s) {
  long double v = 0;
  EXPECT_TRUE(ParseLongDouble(s, &v)) << s;
  return v;
}

TEST(FormatLongDouble, MatchesIncrbyfloat) {
  struct Case {
    std::string_view in;
    std::string_view want;
  };
  for (const Case& c : std::vector<Case>{
           {"0.1", "0.1"},
           {"3.0e3", "3000"},
           {"10.5", "10.5"},
           {"1.5", "1.5"},
           {"-1.5", "-1.5"},
           {"0.3", "0.3"},
           {"-123.456", "-123.456"},
           {"5.0e-20", "0"},
           {"-5.0e-20", "0"},
           {"-1e-18", "0"},
           {"-0.0", "0"},
           {"0", "0"},
           {"1e-5", "0.00001"},
           {"0.0001234", "0.0001234"},
           {"1e-17", "0.00000000000000001"},
           {"7e-18", "0.00000000000000001"},
           {"2.5e-17", "0.00000000000000002"},
           {"0.000000000000000005", "0"},
           {"0.000000000000000015", "0.00000000000000002"},
           {"0.12345678901234567890", "0.12345678901234568"},
           {"3.14159265358979323846", "3.14159265358979324"},
           {"123456789.123456789", "123456789.12345678899873747"},
           {"99999999999999999.5", "99999999999999999.5"},
           {"1e17", "100000000000000000"},
           {"1e18", "1000000000000000000"},
           {"1e20", "100000000000000000000"},
           {"9223372036854775807", "9223372036854775807"},
           {"18446744073709551616", "18446744073709551616"},
           {"0x10", "16"},
           {"5.", "5"},
           {"1e300",
            "100000000000000000000899732407955919387052394427329074793826008232126564659618093575"
            "584915208375049719035037250861427483590359255618467298391309626052074864628732713564"
            "184365329408425510760601678972665293237003055138294762099454029477278188962060617926"
            "7611627097410650567187386105690089424915104006144"},
       }) {
    EXPECT_EQ(FormatLongDouble(ParsedLd(c.in)), c.want) << c.in;
  }
}

TEST(FormatLongDouble, HugeValuesAndSpecials) {
  // 1e400 only fits a long double; the reply has all 401 integer digits.
  std::string s = FormatLongDouble(ParsedLd("1e400"));
  EXPECT_EQ(s.size(), 401u);
  EXPECT_EQ(s.substr(0, 24), "100000000000000000002818");
  EXPECT_EQ(FormatLongDouble(std::numeric_limits<long double>::max()).size(), 4933u);
  EXPECT_EQ(FormatLongDouble(std::numeric_limits<long double>::infinity()), "inf");
  EXPECT_EQ(FormatLongDouble(-std::numeric_limits<long double>::infinity()), "-inf");
  EXPECT_EQ(FormatLongDouble(-std::numeric_limits<long double>::quiet_NaN()), "nan");
}

TEST(FormatLongDouble, RepeatedIncrementsStayHuman) {
  // INCRBYFLOAT k 0.1 ten times replies "1" at the end: long double keeps the error invisible.
  long double acc = 0;
  for (int i = 0; i < 10; ++i) acc += ParsedLd("0.1");
  EXPECT_EQ(FormatLongDouble(acc), "1");
}

// ---- FormatDouble (Redis 7.2 d2string) and FormatDoubleG17 (Redis 7.0 %.17g) ----

TEST(FormatDouble, Specials) {
  EXPECT_EQ(FormatDouble(0.0), "0");
  EXPECT_EQ(FormatDouble(-0.0), "-0");
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(FormatDouble(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(FormatDouble(-std::numeric_limits<double>::quiet_NaN()), "nan");
}

TEST(FormatDouble, MatchesRedis72) {
  struct Case {
    double in;
    std::string_view want;
  };
  for (const Case& c : std::vector<Case>{
           {0.1, "0.1"},
           {1.5, "1.5"},
           {3, "3"},
           {-3, "-3"},
           {0.5, "0.5"},
           {-0.5, "-0.5"},
           {100.25, "100.25"},
           {0.1 + 0.2, "0.30000000000000004"},
           {1.0 / 3, "0.3333333333333333"},
           {-2.0 / 3, "-0.6666666666666666"},
           {3.141592653589793, "3.141592653589793"},
           {123456.789, "123456.789"},
           {1000000000000000.5, "1000000000000000.5"},
           // Integral values up to 2^62 take the integer path.
           {1e17, "100000000000000000"},
           {1e18, "1000000000000000000"},
           {0x1p+62, "4611686018427387904"},
           {4503599627370498.0, "4503599627370498"},
           {10000000000000002.0, "10000000000000002"},
           // Beyond 2^62: Grisu digits, padded with up to 7 zeros before switching to exponent.
           {0x1.0000000000001p+62, "4611686018427389000"},
           {-0x1.0000000000001p+62, "-4611686018427389000"},
           {0x1p+63, "9223372036854776000"},
           {12345678901234567890.0, "12345678901234567000"},
           {1e20, "1e+20"},
           {1e21, "1e+21"},
           {1e22, "1e+22"},
           {1e25, "1e+25"},
           {1.5e25, "1.5e+25"},
           {1e100, "1e+100"},
           {1e300, "1e+300"},
           {DBL_MAX, "1.7976931348623157e+308"},
           // Small magnitudes: plain decimals down to 6 zeros after the point...
           {0.0001, "0.0001"},
           {0.001234, "0.001234"},
           {0.000001, "0.000001"},
           {1.2345678, "1.2345678"},
           // ...but the exponent form once the last digit is at 10^-7 or below and |v| >= 10^4
           // or the leading digit is at 10^-4 or below.
           {0.0001234, "1.234e-4"},
           {0.0000012, "1.2e-6"},
           {1e-7, "1e-7"},
           {1.5e-7, "1.5e-7"},
           {12345678.12345678, "1.234567812345678e+7"},
           {1.2345e-100, "1.2345e-100"},
           {1e-300, "1e-300"},
           {-DBL_MIN, "-2.2250738585072014e-308"},
           {0x1p-1074, "5e-324"},
           // Cases where Grisu2 is not shortest/closest; Redis 7.2 prints these exact digits.
           {0x1.1985ccc9bc7e5p+50, "1238149735313913.3"},
           {-0x1.44236e0e4f07dp+970, "-1.2635321889364134e+292"},
           {0x1.94002b5281f0bp-646, "5.4046168572124135e-195"},
           {-0x1.602f9af703e45p-85, "-3.5561693938148423e-26"},
       }) {
    EXPECT_EQ(FormatDouble(c.in), c.want) << std::hexfloat << c.in;
    char buf[kDoubleBufSize];
    size_t n = FormatDouble(c.in, buf);
    EXPECT_EQ(std::string_view(buf, n), c.want);
    EXPECT_EQ(buf[n], '\0');
  }
}

TEST(FormatDouble, AlwaysRoundTrips) {
  // Whatever digits Grisu2 picks, reading them back must give the same double.
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    double v;
    std::memcpy(&v, &x, sizeof(v));
    if (!std::isfinite(v)) continue;
    std::string s = FormatDouble(v);
    ASSERT_LT(s.size(), kDoubleBufSize);
    double back = 0;
    ASSERT_TRUE(ParseDouble(s, &back) || v == 0) << s;
    ASSERT_EQ(std::memcmp(&back, &v, sizeof(v)), 0) << s;
  }
}

TEST(FormatDoubleG17, MatchesRedis70Zscore) {
  // redis-server 7.0: ZADD z <in> m; ZSCORE z m (skiplist encoding).
  struct Case {
    std::string_view in;
    std::string_view want;
  };
  for (const Case& c : std::vector<Case>{{"0.1", "0.10000000000000001"},
                                         {"1.5", "1.5"},
                                         {"3", "3"},
                                         {"123.456", "123.456"},
                                         {"1e15", "1000000000000000"},
                                         {"1e16", "10000000000000000"},
                                         {"1e17", "1e+17"},
                                         {"1e20", "1e+20"},
                                         {"-0", "-0"},
                                         {"inf", "inf"},
                                         {"-inf", "-inf"},
                                         {"3.14159265358979323846", "3.1415926535897931"},
                                         {"1e-310", "9.9999999999999694e-311"},
                                         {"4.9e-324", "4.9406564584124654e-324"},
                                         {"1.7976931348623157e308", "1.7976931348623157e+308"},
                                         {"886713.4339966273", "886713.43399662734"}}) {
    double v = 0;
    ASSERT_TRUE(ParseDouble(c.in, &v)) << c.in;
    EXPECT_EQ(FormatDoubleG17(v), c.want) << c.in;
  }
}

// ---- Case helpers ----

TEST(CaseHelpers, AsciiOnly) {
  EXPECT_TRUE(EqualsIgnoreCase("GET", "get"));
  EXPECT_TRUE(EqualsIgnoreCase("ZrAnGeByScOrE", "ZRANGEBYSCORE"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("get", "gets"));
  EXPECT_FALSE(EqualsIgnoreCase("get", "set"));
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));  // 0x40 vs 0x60: only letters fold
  EXPECT_FALSE(EqualsIgnoreCase("\xc9", "\xe9"));
  EXPECT_EQ(ToLower("HeLLo-World_1\xc9"), "hello-world_1\xc9");
  EXPECT_EQ(ToUpper("HeLLo-World_1\xe9"), "HELLO-WORLD_1\xe9");
  EXPECT_EQ(ToUpper(std::string_view("a\0b", 3)), std::string("A\0B", 3));
}

// ---- SplitArgs (redis-server 7.0: inline "RPUSH L <line>", then LRANGE) ----

struct SplitCase {
  std::string_view line;
  bool ok;
  std::vector<std::string> args;
};

TEST(SplitArgs, MatchesInlineProtocol) {
  std::vector<SplitCase> cases = {
      {"", true, {}},
      {"   ", true, {}},
      {"a b c", true, {"a", "b", "c"}},
      {"  a   b  ", true, {"a", "b"}},
      {"a\tb\r\nc", true, {"a", "b", "c"}},
      {"\"hello world\"", true, {"hello world"}},
      {"'hello world'", true, {"hello world"}},
      {"\"a\\nb\"", true, {"a\nb"}},
      {"\"\\x41\\x4a\\x4A\"", true, {"AJJ"}},
      {"\"\\x4g\"", true, {"x4g"}},
      {"\"\\xZZ\"", true, {"xZZ"}},
      {"\"\\x4\"", true, {"x4"}},
      {"\"\\x\"", true, {"x"}},
      {"\"a\\x00b\"", true, {"a\0b"s}},
      {"\"a\\\"b\"", true, {"a\"b"}},
      {"\"\\r\\t\\b\\a\\\\\\q\"", true, {"\r\t\b\a\\q"}},
      {"'a\\'b'", true, {"a'b"}},
      {"'a\\nb'", true, {"a\\nb"}},
      {"'\"'", true, {"\""}},
      {"\"'\"", true, {"'"}},
      {"\"\"", true, {""}},
      {"''", true, {""}},
      {"\"\" \"\"", true, {"", ""}},
      {"foo\"bar\"", true, {"foobar"}},
      {"foo'bar baz' q", true, {"foobar baz", "q"}},
      {"a\\ b", true, {"a\\", "b"}},
      // \v and \f separate nothing inside a bare token but count as blanks after a quote.
      {"a\vb", true, {"a\vb"}},
      {"a\fb", true, {"a\fb"}},
      {"\"a\" \vb", true, {"a", "b"}},
      {"\"a\"\v", true, {"a"}},
      // Errors.
      {"a\"b c\"d", false, {}},
      {"\"a\"b", false, {}},
      {"'a'b", false, {}},
      {"x \"y\"z", false, {}},
      {"\"unterminated", false, {}},
      {"'unterminated", false, {}},
      {"\"\\", false, {}},
      {"\"abc\\\"", false, {}},
      {"'a\\'", false, {}},
      {"\\\"a", false, {}},
  };
  for (const SplitCase& c : cases) {
    bool ok = !c.ok;
    std::vector<std::string> got = SplitArgs(c.line, &ok);
    EXPECT_EQ(ok, c.ok) << c.line;
    EXPECT_EQ(got, c.args) << c.line;
  }
}

TEST(SplitArgs, NulEndsTheLine) {
  bool ok = false;
  EXPECT_EQ(SplitArgs("a b\0c d"sv, &ok), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(ok);
  // The unterminated quote is cut by the NUL before its closing quote.
  EXPECT_TRUE(SplitArgs("\"a\0\""sv, &ok).empty());
  EXPECT_FALSE(ok);
}

// ---- Clock ----

TEST(Clock, WallClockIsUnixTime) {
  const int64_t ms = NowMs();
  const int64_t us = NowUs();
  EXPECT_GT(ms, int64_t{1'600'000'000'000});  // after 2020
  EXPECT_LT(ms, int64_t{4'000'000'000'000});  // before 2096
  EXPECT_GE(us / 1000, ms);
  EXPECT_LT(us / 1000 - ms, 1000);
}

TEST(Clock, MonotonicNeverGoesBack) {
  int64_t prev = MonotonicUs();
  for (int i = 0; i < 100000; ++i) {
    int64_t now = MonotonicUs();
    ASSERT_GE(now, prev);
    prev = now;
  }
}

}  // namespace
}  // namespace vireo

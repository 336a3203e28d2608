#include "types/bitmap.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace vireo::bitmap {
namespace {

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

// Bit-by-bit references the word-at-a-time code is checked against.
uint64_t RefCount(const std::string& s, uint64_t first, uint64_t last) {
  uint64_t n = 0;
  for (uint64_t i = first; i <= last; ++i) n += GetBit(s, i) ? 1 : 0;
  return n;
}

int64_t RefFind(const std::string& s, bool bit, uint64_t first, uint64_t last) {
  for (uint64_t i = first; i <= last; ++i) {
    if (GetBit(s, i) == bit) return static_cast<int64_t>(i);
  }
  return -1;
}

TEST(BitmapTest, BitOrderIsMostSignificantFirst) {
  std::string s(2, '\0');
  EXPECT_FALSE(SetBit(s.data(), 0, true));
  EXPECT_TRUE(SetBit(s.data(), 0, true));
  SetBit(s.data(), 15, true);
  EXPECT_EQ(s, std::string("\x80\x01", 2));
  EXPECT_TRUE(GetBit(s, 15));
  EXPECT_FALSE(GetBit(s, 14));
  EXPECT_FALSE(GetBit(s, 1000));  // past the end reads zero
  EXPECT_TRUE(SetBit(s.data(), 0, false));
  EXPECT_EQ(s[0], '\0');
}

TEST(BitmapTest, PopcountMatchesReferenceAtEveryLengthAndAlignment) {
  std::mt19937_64 rng(7);
  const std::string data = RandomBytes(rng, 300);
  for (size_t start = 0; start < 9; ++start) {
    for (size_t len = 0; start + len <= data.size(); len += 7) {
      const std::string part = data.substr(start, len);
      const uint64_t expected = len == 0 ? 0 : RefCount(part, 0, len * 8 - 1);
      ASSERT_EQ(Popcount(part), expected) << start << " " << len;
    }
  }
  EXPECT_EQ(Popcount(std::string(1000, '\xff')), 8000u);
}

TEST(BitmapTest, CountRangeMatchesReference) {
  std::mt19937_64 rng(11);
  const std::string s = RandomBytes(rng, 70);
  for (int i = 0; i < 3000; ++i) {
    uint64_t a = rng() % (s.size() * 8);
    uint64_t b = rng() % (s.size() * 8);
    if (a > b) std::swap(a, b);
    ASSERT_EQ(CountRange(s, a, b), RefCount(s, a, b)) << a << " " << b;
  }
  EXPECT_EQ(CountRange("\xff", 3, 3), 1u);
  EXPECT_EQ(CountRange("\xf0", 4, 7), 0u);
}

TEST(BitmapTest, FindFirstMatchesReference) {
  std::mt19937_64 rng(13);
  // Long runs of equal bits, so the word skips matter, with a few odd bits in them.
  for (int round = 0; round < 40; ++round) {
    std::string s(rng() % 100 + 1, (round & 1) ? '\xff' : '\0');
    for (int k = 0; k < 2; ++k) SetBit(s.data(), rng() % (s.size() * 8), !(round & 1));
    for (int i = 0; i < 200; ++i) {
      uint64_t a = rng() % (s.size() * 8);
      uint64_t b = rng() % (s.size() * 8);
      if (a > b) std::swap(a, b);
      for (bool bit : {false, true}) {
        ASSERT_EQ(FindFirst(s, bit, a, b), RefFind(s, bit, a, b)) << a << " " << b << " " << bit;
      }
    }
  }
  EXPECT_EQ(FindFirst(std::string(64, '\0'), true, 0, 511), -1);
  EXPECT_EQ(FindFirst(std::string(64, '\xff'), false, 0, 511), -1);
  EXPECT_EQ(FindFirst("\x00\x00\x01", true, 0, 23), 23);
}

std::string Combined(Op op, std::vector<std::string_view> sources) {
  std::string out;
  Combine(op, sources, &out);
  return out;
}

TEST(BitmapTest, CombineSmallCases) {
  using namespace std::string_literals;
  EXPECT_EQ(Combined(Op::kAnd, {"\xf0\xff"s, "\x3c"s}), "\x30\x00"s);
  EXPECT_EQ(Combined(Op::kOr, {"\xf0"s, "\x0f\x01"s}), "\xff\x01"s);
  EXPECT_EQ(Combined(Op::kXor, {"\xff\x0f"s, "\x0f"s}), "\xf0\x0f"s);
  EXPECT_EQ(Combined(Op::kNot, {"\x0f\x00"s}), "\xf0\xff"s);
  EXPECT_EQ(Combined(Op::kDiff, {"\xff\xf0"s, "\x0f"s, "\x30"s}), "\xc0\xf0"s);
  EXPECT_EQ(Combined(Op::kDiff1, {"\x0f"s, "\xff"s, "\x00\x01"s}), "\xf0\x01"s);
  EXPECT_EQ(Combined(Op::kAndOr, {"\xff"s, "\x0f"s, "\x30\xff"s}), "\x3f\x00"s);
  // Bits in exactly one source: the example of Redis 8.2's documentation.
  EXPECT_EQ(Combined(Op::kOne, {"\x17"s, "\x26"s, "\x4d"s}), "\x78"s);
  EXPECT_EQ(Combined(Op::kAnd, {""s, ""s}), "");
  EXPECT_EQ(Combined(Op::kOr, {""s, "\x01"s}), "\x01"s);
}

TEST(BitmapTest, CombineMatchesBytewiseReference) {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 200; ++round) {
    const size_t n = rng() % 4 + 2;
    std::vector<std::string> owned;
    size_t max_len = 0;
    for (size_t i = 0; i < n; ++i) {
      owned.push_back(RandomBytes(rng, rng() % 90));
      max_len = std::max(max_len, owned.back().size());
    }
    std::vector<std::string_view> views(owned.begin(), owned.end());
    const auto at = [&](size_t k, size_t i) -> uint8_t {
      return i < owned[k].size() ? static_cast<uint8_t>(owned[k][i]) : 0;
    };
    for (Op op : {Op::kAnd, Op::kOr, Op::kXor, Op::kDiff, Op::kDiff1, Op::kAndOr, Op::kOne}) {
      const std::string got = Combined(op, views);
      ASSERT_EQ(got.size(), max_len);
      for (size_t i = 0; i < max_len; ++i) {
        uint8_t all_and = 0xff, any = 0, x = 0, rest = 0, count_ge2 = 0, once = 0;
        for (size_t k = 0; k < n; ++k) {
          const uint8_t b = at(k, i);
          all_and &= b;
          x ^= b;
          count_ge2 |= any & b;
          any |= b;
          if (k > 0) rest |= b;
        }
        once = any & ~count_ge2;
        const uint8_t first = at(0, i);
        uint8_t want = 0;
        switch (op) {
          case Op::kAnd:
            want = all_and;
            break;
          case Op::kOr:
            want = any;
            break;
          case Op::kXor:
            want = x;
            break;
          case Op::kDiff:
            want = first & ~rest;
            break;
          case Op::kDiff1:
            want = ~first & rest;
            break;
          case Op::kAndOr:
            want = first & rest;
            break;
          case Op::kOne:
            want = once;
            break;
          case Op::kNot:
            break;
        }
        ASSERT_EQ(static_cast<uint8_t>(got[i]), want) << static_cast<int>(op) << " at " << i;
      }
    }
  }
}

TEST(BitmapTest, ParseFieldType) {
  FieldType t;
  ASSERT_TRUE(ParseFieldType("i64", &t));
  EXPECT_TRUE(t.is_signed);
  EXPECT_EQ(t.bits, 64);
  ASSERT_TRUE(ParseFieldType("u63", &t));
  EXPECT_FALSE(t.is_signed);
  EXPECT_EQ(t.bits, 63);
  ASSERT_TRUE(ParseFieldType("u1", &t));
  for (const char* bad :
       {"u64", "i65", "u0", "i0", "I8", "U8", "x8", "u", "", "u08", "i-8", "u+8", "i8 ", "u100"}) {
    EXPECT_FALSE(ParseFieldType(bad, &t)) << bad;
  }
}

TEST(BitmapTest, FieldsRoundTripAtAnyOffset) {
  std::mt19937_64 rng(19);
  for (int i = 0; i < 5000; ++i) {
    const unsigned bits = static_cast<unsigned>(rng() % 64) + 1;
    const uint64_t offset = rng() % 80;
    std::string s = RandomBytes(rng, (offset + bits + 7) / 8 + rng() % 3);
    const std::string before = s;
    const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    const uint64_t value = rng() & mask;
    SetField(s.data(), offset, bits, value);
    ASSERT_EQ(GetUnsigned(s, offset, bits), value);
    // Bits outside the field are untouched.
    for (uint64_t b = 0; b < s.size() * 8; ++b) {
      if (b < offset || b >= offset + bits) {
        ASSERT_EQ(GetBit(s, b), GetBit(before, b));
      }
    }
    const int64_t as_signed = GetSigned(s, offset, bits);
    ASSERT_EQ(static_cast<uint64_t>(as_signed) & mask, value);
    ASSERT_EQ(as_signed < 0,
              bits < 64 ? ((value >> (bits - 1)) & 1) == 1 : static_cast<int64_t>(value) < 0);
  }
  // Reads past the end are zero-padded.
  EXPECT_EQ(GetUnsigned("\xff", 4, 8), 0xf0u);
  EXPECT_EQ(GetSigned("\xff", 4, 8), -16);
  EXPECT_EQ(GetUnsigned("", 100, 63), 0u);
}

TEST(BitmapTest, UnsignedOverflowModes) {
  uint64_t r;
  EXPECT_TRUE(AddUnsigned(250, 10, 8, Overflow::kWrap, &r));
  EXPECT_EQ(r, 4u);
  EXPECT_TRUE(AddUnsigned(250, 10, 8, Overflow::kSat, &r));
  EXPECT_EQ(r, 255u);
  EXPECT_FALSE(AddUnsigned(250, 10, 8, Overflow::kFail, &r));
  EXPECT_TRUE(AddUnsigned(5, -10, 8, Overflow::kWrap, &r));
  EXPECT_EQ(r, 251u);
  EXPECT_TRUE(AddUnsigned(5, -10, 8, Overflow::kSat, &r));
  EXPECT_EQ(r, 0u);
  EXPECT_FALSE(AddUnsigned(5, -10, 8, Overflow::kFail, &r));
  EXPECT_TRUE(AddUnsigned(5, INT64_MIN, 8, Overflow::kSat, &r));
  EXPECT_EQ(r, 0u);
  // SET of a negative value into an unsigned field overflows upwards.
  EXPECT_TRUE(AddUnsigned(static_cast<uint64_t>(-1), 0, 8, Overflow::kWrap, &r));
  EXPECT_EQ(r, 255u);
  EXPECT_TRUE(AddUnsigned(static_cast<uint64_t>(-1), 0, 8, Overflow::kSat, &r));
  EXPECT_EQ(r, 255u);
  EXPECT_TRUE(AddUnsigned(100, 155, 8, Overflow::kFail, &r));
  EXPECT_EQ(r, 255u);
}

TEST(BitmapTest, SignedOverflowModes) {
  int64_t r;
  EXPECT_TRUE(AddSigned(120, 10, 8, Overflow::kWrap, &r));
  EXPECT_EQ(r, -126);
  EXPECT_TRUE(AddSigned(120, 10, 8, Overflow::kSat, &r));
  EXPECT_EQ(r, 127);
  EXPECT_FALSE(AddSigned(120, 10, 8, Overflow::kFail, &r));
  EXPECT_TRUE(AddSigned(-120, -10, 8, Overflow::kWrap, &r));
  EXPECT_EQ(r, 126);
  EXPECT_TRUE(AddSigned(-120, -10, 8, Overflow::kSat, &r));
  EXPECT_EQ(r, -128);
  EXPECT_TRUE(AddSigned(INT64_MAX, 1, 64, Overflow::kWrap, &r));
  EXPECT_EQ(r, INT64_MIN);
  EXPECT_TRUE(AddSigned(INT64_MAX, 1, 64, Overflow::kSat, &r));
  EXPECT_EQ(r, INT64_MAX);
  EXPECT_TRUE(AddSigned(INT64_MIN, -1, 64, Overflow::kSat, &r));
  EXPECT_EQ(r, INT64_MIN);
  EXPECT_TRUE(AddSigned(INT64_MIN, INT64_MAX, 64, Overflow::kFail, &r));
  EXPECT_EQ(r, -1);
  EXPECT_TRUE(AddSigned(-1, 0, 1, Overflow::kFail, &r));
  EXPECT_EQ(r, -1);
  EXPECT_TRUE(AddSigned(1, 0, 1, Overflow::kWrap, &r));
  EXPECT_EQ(r, -1);
  // Redis's quirk: a SET this far below the type's range counts as overflow upwards.
  EXPECT_TRUE(AddSigned(INT64_MIN, 0, 8, Overflow::kSat, &r));
  EXPECT_EQ(r, 127);
  EXPECT_TRUE(AddSigned(-1000, 0, 8, Overflow::kSat, &r));
  EXPECT_EQ(r, -128);
  EXPECT_TRUE(AddSigned(INT64_MIN, 0, 8, Overflow::kWrap, &r));
  EXPECT_EQ(r, 0);
}

}  // namespace
}  // namespace vireo::bitmap

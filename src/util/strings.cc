#include "util/strings.h"

#include <fmt/format.h>

#include <bit>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vireo {
namespace {

// The C library's isspace() in the "C" locale, without consulting the locale.
bool IsCSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

char AsciiLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }
char AsciiUpper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }

// strtod and friends need a NUL-terminated string; a string_view argument is not one. Short
// arguments (the overwhelmingly common case) are copied to the stack to avoid an allocation.
class CString {
 public:
  explicit CString(std::string_view s) {
    if (s.size() < sizeof(small_)) {
      std::memcpy(small_, s.data(), s.size());
      small_[s.size()] = '\0';
      ptr_ = small_;
    } else {
      big_.assign(s.data(), s.size());
      ptr_ = big_.c_str();
    }
  }
  const char* get() const { return ptr_; }

 private:
  char small_[128];
  std::string big_;
  const char* ptr_;
};

// Accumulates the digits of s (all of which must be 0-9, the first one 1-9 unless s is "0")
// into *out; false on a non-digit, a leading zero or overflow of uint64_t.
bool ParseDigits(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  if (s.size() == 1 && s[0] == '0') {
    *out = 0;
    return true;
  }
  if (s[0] < '1' || s[0] > '9') return false;
  uint64_t v = 0;
  // Up to 19 digits cannot overflow: no per-digit overflow test (a division) on the hot path of
  // every RESP length and integer argument.
  if (s.size() <= 19) {
    for (char c : s) {
      auto d = static_cast<unsigned>(c - '0');
      if (d > 9) return false;
      v = v * 10 + d;
    }
    *out = v;
    return true;
  }
  for (char c : s) {
    auto d = static_cast<unsigned>(c - '0');
    if (d > 9) return false;
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Grisu2, as Redis 7.2 runs it (Loitsch, "Printing Floating-Point Numbers Quickly and Accurately
// with Integers", 2010). Grisu2 always round-trips but is not always shortest or closest; Redis
// shows those imperfect digits to clients, so to reply byte-identically we must make exactly the
// same choices it makes: 64-bit DiyFp products rounded half-up, boundaries narrowed by one unit,
// the same cached power of ten for each exponent, and the same final "weeding" of the last digit.
// std::to_chars would be simpler but differs from Redis on ~0.14% of random doubles.

struct DiyFp {
  uint64_t f;
  int e;
};

// The upper 64 bits of the 128-bit product, rounded half-up on the bits dropped.
DiyFp Multiply(DiyFp a, DiyFp b) {
  unsigned __int128 p = static_cast<unsigned __int128>(a.f) * b.f;
  uint64_t hi = static_cast<uint64_t>(p >> 64);
  uint64_t lo = static_cast<uint64_t>(p);
  return {hi + (lo >> 63), a.e + b.e + 64};
}

DiyFp Normalize(DiyFp x) {
  int shift = std::countl_zero(x.f);
  return {x.f << shift, x.e - shift};
}

// 10^k for k = -348, -340, ..., 340, each the nearest 64-bit significand f with f * 2^e = 10^k
// and bit 63 set. Generated with exact rational arithmetic (Python fractions); these are the
// standard Grisu constants, and the spacing of 8 decimal exponents matters for exact output.
constexpr int kFirstCachedPower = -348;
constexpr int kCachedPowerStep = 8;
constexpr int kCachedPowerCount = 87;
constexpr struct {
  uint64_t f;
  int e;
} kCachedPowers[kCachedPowerCount] = {
    {0xfa8fd5a0081c0288, -1220}, {0xbaaee17fa23ebf76, -1193}, {0x8b16fb203055ac76, -1166},
    {0xcf42894a5dce35ea, -1140}, {0x9a6bb0aa55653b2d, -1113}, {0xe61acf033d1a45df, -1087},
    {0xab70fe17c79ac6ca, -1060}, {0xff77b1fcbebcdc4f, -1034}, {0xbe5691ef416bd60c, -1007},
    {0x8dd01fad907ffc3c, -980},  {0xd3515c2831559a83, -954},  {0x9d71ac8fada6c9b5, -927},
    {0xea9c227723ee8bcb, -901},  {0xaecc49914078536d, -874},  {0x823c12795db6ce57, -847},
    {0xc21094364dfb5637, -821},  {0x9096ea6f3848984f, -794},  {0xd77485cb25823ac7, -768},
    {0xa086cfcd97bf97f4, -741},  {0xef340a98172aace5, -715},  {0xb23867fb2a35b28e, -688},
    {0x84c8d4dfd2c63f3b, -661},  {0xc5dd44271ad3cdba, -635},  {0x936b9fcebb25c996, -608},
    {0xdbac6c247d62a584, -582},  {0xa3ab66580d5fdaf6, -555},  {0xf3e2f893dec3f126, -529},
    {0xb5b5ada8aaff80b8, -502},  {0x87625f056c7c4a8b, -475},  {0xc9bcff6034c13053, -449},
    {0x964e858c91ba2655, -422},  {0xdff9772470297ebd, -396},  {0xa6dfbd9fb8e5b88f, -369},
    {0xf8a95fcf88747d94, -343},  {0xb94470938fa89bcf, -316},  {0x8a08f0f8bf0f156b, -289},
    {0xcdb02555653131b6, -263},  {0x993fe2c6d07b7fac, -236},  {0xe45c10c42a2b3b06, -210},
    {0xaa242499697392d3, -183},  {0xfd87b5f28300ca0e, -157},  {0xbce5086492111aeb, -130},
    {0x8cbccc096f5088cc, -103},  {0xd1b71758e219652c, -77},   {0x9c40000000000000, -50},
    {0xe8d4a51000000000, -24},   {0xad78ebc5ac620000, 3},     {0x813f3978f8940984, 30},
    {0xc097ce7bc90715b3, 56},    {0x8f7e32ce7bea5c70, 83},    {0xd5d238a4abe98068, 109},
    {0x9f4f2726179a2245, 136},   {0xed63a231d4c4fb27, 162},   {0xb0de65388cc8ada8, 189},
    {0x83c7088e1aab65db, 216},   {0xc45d1df942711d9a, 242},   {0x924d692ca61be758, 269},
    {0xda01ee641a708dea, 295},   {0xa26da3999aef774a, 322},   {0xf209787bb47d6b85, 348},
    {0xb454e4a179dd1877, 375},   {0x865b86925b9bc5c2, 402},   {0xc83553c5c8965d3d, 428},
    {0x952ab45cfa97a0b3, 455},   {0xde469fbd99a05fe3, 481},   {0xa59bc234db398c25, 508},
    {0xf6c69a72a3989f5c, 534},   {0xb7dcbf5354e9bece, 561},   {0x88fcf317f22241e2, 588},
    {0xcc20ce9bd35c78a5, 614},   {0x98165af37b2153df, 641},   {0xe2a0b5dc971f303a, 667},
    {0xa8d9d1535ce3b396, 694},   {0xfb9b7cd9a4a7443c, 720},   {0xbb764c4ca7a44410, 747},
    {0x8bab8eefb6409c1a, 774},   {0xd01fef10a657842c, 800},   {0x9b10a4e5e9913129, 827},
    {0xe7109bfba19c0c9d, 853},   {0xac2820d9623bf429, 880},   {0x80444b5e7aa7cf85, 907},
    {0xbf21e44003acdd2d, 933},   {0x8e679c2f5e44ff8f, 960},   {0xd433179d9c8cb841, 986},
    {0x9e19db92b4e31ba9, 1013},  {0xeb96bf6ebadf77d9, 1039},  {0xaf87023b9bf0ee6b, 1066},
};

// Grisu wants the scaled upper boundary's binary exponent in [-60, -32] so that its integral part
// fits in 32 bits. Two table entries can qualify; which one is used changes the digits in the
// cases where Grisu2 is imperfect, so the search starts from the same estimate Redis's fpconv uses
// (including its use of the table size as the bias) and walks toward the window the same way.
DiyFp CachedPowerFor(int upper_e, int* k) {
  const int estimate = static_cast<int>(-(upper_e + kCachedPowerCount) * 0.30102999566398114);
  int idx = (estimate - kFirstCachedPower) / kCachedPowerStep;
  for (;;) {
    int scaled_e = upper_e + kCachedPowers[idx].e + 64;
    if (scaled_e < -60) {
      ++idx;
    } else if (scaled_e > -32) {
      --idx;
    } else {
      break;
    }
  }
  *k = kFirstCachedPower + idx * kCachedPowerStep;
  return {kCachedPowers[idx].f, kCachedPowers[idx].e};
}

constexpr uint64_t kPow10[] = {1ull,      10ull,      100ull,      1000ull,      10000ull,
                               100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull};

// Moves the last digit down while that brings the number closer to the real value and stays
// inside the rounding interval (Grisu's "round weed" step).
void WeedLastDigit(char* digits, int n, uint64_t delta, uint64_t rest, uint64_t ten_kappa,
                   uint64_t dist_to_upper) {
  while (rest < dist_to_upper && delta - rest >= ten_kappa &&
         (rest + ten_kappa < dist_to_upper ||
          dist_to_upper - rest > rest + ten_kappa - dist_to_upper)) {
    --digits[n - 1];
    rest += ten_kappa;
  }
}

// Produces the digits of v (> 0, finite) into digits and returns their count; the value is
// digits * 10^*exp10.
int Grisu2(double v, char* digits, int* exp10) {
  const uint64_t bits = std::bit_cast<uint64_t>(v);
  constexpr uint64_t kHidden = uint64_t{1} << 52;
  const uint64_t frac = bits & (kHidden - 1);
  const int biased_e = static_cast<int>((bits >> 52) & 0x7ff);
  DiyFp w = biased_e != 0 ? DiyFp{frac | kHidden, biased_e - 1075} : DiyFp{frac, -1074};

  // The interval of reals that round to v is (lower, upper); at a power of two the gap below is
  // half the gap above.
  DiyFp upper = Normalize({(w.f << 1) + 1, w.e - 1});
  const int lower_shift = w.f == kHidden ? 2 : 1;
  DiyFp lower = {(w.f << lower_shift) - 1, w.e - lower_shift};
  lower.f <<= lower.e - upper.e;
  lower.e = upper.e;
  w = Normalize(w);

  int k;
  const DiyFp c = CachedPowerFor(upper.e, &k);
  w = Multiply(w, c);
  upper = Multiply(upper, c);
  lower = Multiply(lower, c);
  // The products may be off by one unit either way; shrink the interval so every digit string
  // chosen inside it still reads back as v.
  ++lower.f;
  --upper.f;
  *exp10 = -k;

  const int shift = -upper.e;
  const uint64_t one = uint64_t{1} << shift;
  const uint64_t dist_to_upper = upper.f - w.f;
  uint64_t delta = upper.f - lower.f;
  uint64_t integral = upper.f >> shift;
  uint64_t fractional = upper.f & (one - 1);

  // Digits of the integral part, from the 10^9 place down; stop as soon as the remainder fits
  // in the interval.
  int n = 0;
  int kappa = 10;
  while (kappa > 0) {
    const uint64_t divisor = kPow10[kappa - 1];
    const uint64_t digit = integral / divisor;
    if (digit != 0 || n != 0) digits[n++] = static_cast<char>('0' + digit);
    integral -= digit * divisor;
    --kappa;
    const uint64_t rest = (integral << shift) + fractional;
    if (rest <= delta) {
      *exp10 += kappa;
      WeedLastDigit(digits, n, delta, rest, divisor << shift, dist_to_upper);
      return n;
    }
  }
  // Then digits of the fractional part, widening the error terms by 10 each step.
  uint64_t unit = 1;
  for (;;) {
    fractional *= 10;
    delta *= 10;
    unit *= 10;
    --kappa;
    const uint64_t digit = fractional >> shift;
    if (digit != 0 || n != 0) digits[n++] = static_cast<char>('0' + digit);
    fractional &= one - 1;
    if (fractional < delta) {
      *exp10 += kappa;
      // Unsigned wrap-around in the product is what Redis computes too.
      WeedLastDigit(digits, n, delta, fractional, one, dist_to_upper * unit);
      return n;
    }
  }
}

// Lays out Grisu2 digits the way Redis's fpconv does; it resembles %g but with its own
// thresholds: plain integers while at most 7 zeros need appending, plain decimals when the
// exponent of the last digit is above -7 or the value is below 10^4, otherwise d.ddde[+-]X with
// no zero padding of the exponent ("1e+20", "1.5e-7").
size_t LayOutDigits(const char* digits, int n, int exp10, bool negative, char* out) {
  char* p = out;
  if (negative) *p++ = '-';
  const int sci_exp = exp10 + n - 1;
  const int abs_sci_exp = sci_exp < 0 ? -sci_exp : sci_exp;

  if (exp10 >= 0 && abs_sci_exp < n + 7) {
    std::memcpy(p, digits, n);
    std::memset(p + n, '0', exp10);
    return (p - out) + n + exp10;
  }
  if (exp10 < 0 && (exp10 > -7 || abs_sci_exp < 4)) {
    const int int_digits = n + exp10;
    if (int_digits <= 0) {
      *p++ = '0';
      *p++ = '.';
      std::memset(p, '0', -int_digits);
      p += -int_digits;
      std::memcpy(p, digits, n);
      return (p - out) + n;
    }
    std::memcpy(p, digits, int_digits);
    p += int_digits;
    *p++ = '.';
    std::memcpy(p, digits + int_digits, n - int_digits);
    return (p - out) + (n - int_digits);
  }

  // fpconv keeps at most 18 (17 if negative) digits here; Grisu2 never produces that many, but
  // the sign below is computed from the kept count, as there.
  const int kept = n < 18 - negative ? n : 18 - negative;
  *p++ = digits[0];
  if (kept > 1) {
    *p++ = '.';
    std::memcpy(p, digits + 1, kept - 1);
    p += kept - 1;
  }
  *p++ = 'e';
  *p++ = exp10 + kept - 1 < 0 ? '-' : '+';
  int e = abs_sci_exp;
  if (e >= 100) {
    *p++ = static_cast<char>('0' + e / 100);
    e %= 100;
    *p++ = static_cast<char>('0' + e / 10);
  } else if (e >= 10) {
    *p++ = static_cast<char>('0' + e / 10);
  }
  *p++ = static_cast<char>('0' + e % 10);
  return p - out;
}

size_t CopyLiteral(const char* s, char* buf) {
  size_t n = std::strlen(s);
  std::memcpy(buf, s, n + 1);
  return n;
}

}  // namespace

bool ParseInt64(std::string_view s, int64_t* out) {
  // Nothing valid is longer than "-9223372036854775808"; refusing early bounds the work.
  if (s.empty() || s.size() > 20) return false;
  const bool negative = s[0] == '-';
  if (negative) s.remove_prefix(1);
  uint64_t magnitude;
  if (!ParseDigits(s, &magnitude)) return false;
  if (negative) {
    // "-0" is refused: ParseDigits accepts "0", but Redis requires a digit 1-9 after '-'.
    if (magnitude == 0) return false;
    if (magnitude > uint64_t{1} << 63) return false;
    *out = static_cast<int64_t>(0 - magnitude);
  } else {
    if (magnitude > static_cast<uint64_t>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(magnitude);
  }
  return true;
}

bool ParseUint64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  return ParseDigits(s, out);
}

bool ParseUint64Lax(std::string_view s, uint64_t* out) {
  int64_t signed_value;
  if (ParseInt64(s, &signed_value)) {
    if (signed_value < 0) return false;
    *out = static_cast<uint64_t>(signed_value);
    return true;
  }
  if (s.empty() || s.find('\0') != std::string_view::npos) return false;
  CString c(s);
  const int saved_errno = errno;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(c.get(), &end, 10);
  const bool ok = errno != ERANGE && errno != EINVAL && *end == '\0';
  errno = saved_errno;
  if (!ok) return false;
  *out = v;
  return true;
}

bool ParseDouble(std::string_view s, double* out) {
  // strtod would skip leading whitespace; Redis refuses it explicitly.
  if (s.empty() || IsCSpace(s[0])) return false;
  CString c(s);
  const int saved_errno = errno;
  errno = 0;
  char* end = nullptr;
  // strtod follows LC_NUMERIC; the server never changes it from "C", as Redis doesn't.
  const double v = std::strtod(c.get(), &end);
  const bool range_error = errno == ERANGE;
  errno = saved_errno;
  // An embedded NUL stops strtod early, so the length check also rejects those.
  if (static_cast<size_t>(end - c.get()) != s.size()) return false;
  // ERANGE with a subnormal result is fine; only overflow and underflow to zero are refused.
  if (range_error && (v == HUGE_VAL || v == -HUGE_VAL || v == 0)) return false;
  if (std::isnan(v)) return false;
  *out = v;
  return true;
}

bool ParseLongDouble(std::string_view s, long double* out) {
  if (s.empty() || s.size() >= kMaxLongDoubleChars || IsCSpace(s[0])) return false;
  CString c(s);
  const int saved_errno = errno;
  errno = 0;
  char* end = nullptr;
  const long double v = std::strtold(c.get(), &end);
  const int err = errno;
  errno = saved_errno;
  if (static_cast<size_t>(end - c.get()) != s.size()) return false;
  if (err == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0)) return false;
  if (err == EINVAL || std::isnan(v)) return false;
  *out = v;
  return true;
}

size_t FormatInt64(int64_t v, char* buf) {
  // libstdc++'s to_chars already emits two digits per division, which is what a hand-rolled
  // fast path would do.
  auto result = std::to_chars(buf, buf + kInt64BufSize - 1, v);
  *result.ptr = '\0';
  return static_cast<size_t>(result.ptr - buf);
}

std::string Int64ToString(int64_t v) {
  char buf[kInt64BufSize];
  return std::string(buf, FormatInt64(v, buf));
}

std::string FormatLongDouble(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The C library prints NaN as "nan", "-nan" or "nan(...)" depending on the platform.
  if (std::isnan(v)) return "nan";
  // Up to 4933 integer digits are possible (LDBL_MAX), so measure before allocating when the
  // common small buffer is not enough.
  char small[128];
  int len = std::snprintf(small, sizeof(small), "%.17Lf", v);
  std::string text;
  if (static_cast<size_t>(len) < sizeof(small)) {
    text.assign(small, len);
  } else {
    text.resize(len + 1);
    std::snprintf(text.data(), text.size(), "%.17Lf", v);
    text.resize(len);
  }
  if (text.find('.') != std::string::npos) {
    size_t end = text.find_last_not_of('0');
    if (text[end] == '.') --end;
    text.resize(end + 1);
  }
  // Tiny negative values print as "-0.000..." and trim to "-0"; Redis reports those as "0".
  if (text == "-0") text = "0";
  return text;
}

size_t FormatDouble(double v, char* buf) {
  if (std::isnan(v)) return CopyLiteral("nan", buf);
  if (std::isinf(v)) return CopyLiteral(v > 0 ? "inf" : "-inf", buf);
  if (v == 0) return CopyLiteral(std::signbit(v) ? "-0" : "0", buf);
  // Integral values up to 2^62 in magnitude are printed as integers (Redis's double2ll fast
  // path); the bounds are what (double)(LLONG_MAX/2) rounds to.
  constexpr double kIntLimit = 4611686018427387904.0;  // 2^62
  if (v >= -kIntLimit && v <= kIntLimit) {
    const int64_t i = static_cast<int64_t>(v);
    if (static_cast<double>(i) == v) return FormatInt64(i, buf);
  }
  char digits[32];
  int exp10 = 0;
  const int n = Grisu2(std::fabs(v), digits, &exp10);
  const size_t len = LayOutDigits(digits, n, exp10, std::signbit(v), buf);
  buf[len] = '\0';
  return len;
}

std::string FormatDouble(double v) {
  char buf[kDoubleBufSize];
  return std::string(buf, FormatDouble(v, buf));
}

std::string FormatDoubleG17(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[kDoubleBufSize];
  int len = std::snprintf(buf, sizeof(buf), "%.17g", v);
  return std::string(buf, len);
}

std::string HexEncode(const uint8_t* bytes, size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(size * 2, '0');
  for (size_t i = 0; i < size; ++i) {
    out[i * 2] = kHex[bytes[i] >> 4];
    out[i * 2 + 1] = kHex[bytes[i] & 0xf];
  }
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

std::string ToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

std::string ToUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiUpper(c);
  return out;
}

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::vector<std::string> SplitArgs(std::string_view line, bool* ok) {
  // The C original stops at the first NUL; reading through a sentinel keeps lookahead simple.
  line = line.substr(0, line.find('\0'));
  auto at = [&line](size_t i) -> char { return i < line.size() ? line[i] : '\0'; };
  // After a closing quote the next byte must be blank (C isspace) or the end of the line.
  auto ends_token = [&at](size_t i) { return at(i) == '\0' || IsCSpace(at(i)); };

  std::vector<std::string> args;
  size_t i = 0;
  for (;;) {
    while (IsCSpace(at(i))) ++i;
    if (at(i) == '\0') break;

    std::string token;
    enum { kBare, kDouble, kSingle } state = kBare;
    bool done = false;
    while (!done) {
      const char c = at(i);
      if (state == kDouble) {
        if (c == '\0') {
          *ok = false;
          return {};
        }
        if (c == '\\' && at(i + 1) == 'x' && HexValue(at(i + 2)) >= 0 && HexValue(at(i + 3)) >= 0) {
          token.push_back(static_cast<char>(HexValue(at(i + 2)) * 16 + HexValue(at(i + 3))));
          i += 4;
        } else if (c == '\\' && at(i + 1) != '\0') {
          char e = at(i + 1);
          switch (e) {
            case 'n':
              e = '\n';
              break;
            case 'r':
              e = '\r';
              break;
            case 't':
              e = '\t';
              break;
            case 'b':
              e = '\b';
              break;
            case 'a':
              e = '\a';
              break;
            default:
              break;
          }
          token.push_back(e);
          i += 2;
        } else if (c == '"') {
          if (!ends_token(i + 1)) {
            *ok = false;
            return {};
          }
          ++i;
          done = true;
        } else {
          token.push_back(c);
          ++i;
        }
      } else if (state == kSingle) {
        if (c == '\0') {
          *ok = false;
          return {};
        }
        if (c == '\\' && at(i + 1) == '\'') {
          token.push_back('\'');
          i += 2;
        } else if (c == '\'') {
          if (!ends_token(i + 1)) {
            *ok = false;
            return {};
          }
          ++i;
          done = true;
        } else {
          token.push_back(c);
          ++i;
        }
      } else {
        // Outside quotes only these four end a token; \v and \f are ordinary bytes here even
        // though they are skipped between tokens, a quirk of the original kept for fidelity.
        switch (c) {
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"':
            state = kDouble;
            break;
          case '\'':
            state = kSingle;
            break;
          default:
            token.push_back(c);
            break;
        }
        if (c != '\0') ++i;
      }
    }
    args.push_back(std::move(token));
  }
  *ok = true;
  return args;
}

std::string QuoteRepr(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out += static_cast<char>(c);
        } else {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
        }
    }
  }
  out += '"';
  return out;
}

std::string FormatPercentile(double p) {
  std::string s = fmt::format("{:f}", p);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace vireo

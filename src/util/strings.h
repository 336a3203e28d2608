// Number parsing/formatting and small string helpers whose exact accept/reject rules and output
// text match what Redis clients observe. Every function here is a compatibility surface: a
// one-character difference in a reply or an accepted argument is a visible bug, so the rules are
// spelled out next to each declaration.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vireo {

// Redis refuses long-double arguments of this many bytes or more (MAX_LONG_DOUBLE_CHARS).
inline constexpr size_t kMaxLongDoubleChars = 5 * 1024;
// Enough for "-9223372036854775808" plus a NUL.
inline constexpr size_t kInt64BufSize = 21;
// Enough for any FormatDouble() output ("-2.2250738585072014e-308" is 24) plus a NUL.
inline constexpr size_t kDoubleBufSize = 32;

// Strict decimal integer, as Redis's string2ll: optional '-', then "0" or a digit 1-9 followed by
// digits. Rejects empty, '+', spaces anywhere, leading zeros ("01"), "-0", "-", and anything
// outside [INT64_MIN, INT64_MAX]. *out is written only on success.
bool ParseInt64(std::string_view s, int64_t* out);

// The unsigned counterpart with the same grammar (no sign at all), range [0, UINT64_MAX].
bool ParseUint64(std::string_view s, uint64_t* out);

// Redis's string2ull, used for stream IDs: ParseInt64's grammar first (negative -> reject), and
// if that fails, whatever strtoull accepts in full. That fallback lets leading whitespace, '+',
// leading zeros and even " -3" (wraps to 2^64-3) through, exactly like XADD s "5- -3" does.
bool ParseUint64Lax(std::string_view s, uint64_t* out);

// A double argument as Redis's getDoubleFromObject parses it (ZADD, ZINCRBY, GEOADD ...): strtod
// must consume the whole string; rejects empty, leading whitespace, trailing garbage, NaN in any
// spelling, overflow ("1e400") and underflow to zero ("1e-400"). Accepts "+1", ".5", "5.", "1e5",
// "inf"/"+inf"/"-inf"/"infinity" (any case), hex ("0x10" = 16, "0x1p3" = 8) and subnormals.
// No length limit (Redis has none for doubles; only long doubles are capped).
bool ParseDouble(std::string_view s, double* out);

// A long double argument as INCRBYFLOAT/HINCRBYFLOAT parse it (string2ld): like ParseDouble but
// with strtold and a length cap of kMaxLongDoubleChars-1 bytes. "inf" parses fine here; it is the
// command that replies "ERR increment would produce NaN or Infinity" when the sum is not finite.
bool ParseLongDouble(std::string_view s, long double* out);

// Writes the decimal form of v to buf (at least kInt64BufSize bytes), NUL-terminates it and
// returns the length without the NUL.
size_t FormatInt64(int64_t v, char* buf);
std::string Int64ToString(int64_t v);

// The text INCRBYFLOAT and HINCRBYFLOAT reply with and store: printf "%.17Lf" (17 digits after
// the point, never an exponent), trailing zeros and a bare '.' trimmed, "-0" turned into "0";
// "inf"/"-inf"/"nan" spelled explicitly. So 0.1 -> "0.1", 3.0e3 -> "3000", 5e-20 -> "0",
// 1e20 -> "100000000000000000000". Digits depend on the platform's long double (x87 80-bit here).
std::string FormatLongDouble(long double v);

// The double text Redis 7.2 replies with (ZSCORE, ZINCRBY, RESP3 doubles; d2string): "nan",
// "inf", "-inf", "0", "-0"; integral values with |v| <= 2^62 as plain integers; everything else
// through Grisu2 (reproduced bit for bit, including its rare non-shortest/non-closest digits) laid
// out as Redis's fpconv does: "0.1", "1.5", "1e+20", "1.5e-7", "0.0001", "1.234e-4",
// "9223372036854776000". Redis 7.0 prints "%.17g" instead; see FormatDoubleG17.
std::string FormatDouble(double v);
// Same, into buf (at least kDoubleBufSize bytes), NUL-terminated; returns the length.
size_t FormatDouble(double v, char* buf);

// Redis 7.0's reply text for doubles (addReplyDouble: "inf"/"-inf", otherwise "%.17g", so 0.1 ->
// "0.10000000000000001", 1e17 -> "1e+17"). Kept for differential tests against a 7.0 server.
std::string FormatDoubleG17(double v);
// "50 99 99.9": percentiles as Redis prints them (%f with trailing zeros trimmed).
std::string FormatPercentile(double p);

// ASCII-only case folding: command names and options are ASCII, and locale-aware folding would
// make matching depend on the environment.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
std::string ToLower(std::string_view s);
// Lower-case hex of `size` bytes, two digits per byte, high nibble first (digests, passwords).
std::string HexEncode(const uint8_t* bytes, size_t size);
std::string ToUpper(std::string_view s);

// Splits an inline command or config line like Redis's sdssplitargs: tokens separated by spaces,
// tabs, CR, LF; "double quotes" understand \n \r \t \b \a \xHH and \<any> (the char itself);
// 'single quotes' understand only \'; quotes may start mid-token (a"b c" -> "ab c"); a closing
// quote must be followed by whitespace or the end. A NUL byte ends the line (the C original works
// on NUL-terminated text). On unbalanced quotes or text glued to a closing quote, *ok = false
// and the result is empty; otherwise *ok = true (an empty or all-blank line gives no tokens).
std::vector<std::string> SplitArgs(std::string_view line, bool* ok);
// Redis's sdscatrepr: `s` in double quotes with \\, \", \n, \r, \t, \a, \b and \xHH escapes, the
// form SplitArgs reads back (CONFIG REWRITE, the AOF manifest).
std::string QuoteRepr(std::string_view s);

}  // namespace vireo

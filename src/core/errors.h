// Redis's shared error texts, so every family words them identically. Argument errors
// (integer, float, syntax, range) are replied by ArgParser alone (core/arg_parser.h).
#pragma once

#include <string_view>

namespace vireo {

namespace errors {
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kOutOfRange = "ERR index out of range";
inline constexpr std::string_view kDbIndexOutOfRange = "ERR DB index is out of range";
// SET and DELEX IFDEQ/IFDNE with a digest that is not 16 hex digits (Redis 8.4.1).
inline constexpr std::string_view kBadDigest = "ERR must be exactly 16 hexadecimal characters";
inline constexpr std::string_view kInvalidExpire = "ERR invalid expire time in '%s' command";
}  // namespace errors

}  // namespace vireo

// The digest Redis 8.4 gives a string value (DIGEST, and SET/DELEX IFDEQ/IFDNE): XXH3-64 of the
// value's bytes, shown as exactly 16 lowercase hex digits, leading zeros kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vireo {

inline constexpr size_t kDigestHexLength = 16;

uint64_t ValueDigest(std::string_view value);

// 16 lowercase hex digits.
std::string FormatDigest(uint64_t digest);

// A client's digest: exactly 16 hex digits of either case (Redis 8.4.1 on; earlier 8.4 builds
// compared the text as given, which failed on leading zeros and upper case). nullopt otherwise.
std::optional<uint64_t> ParseDigest(std::string_view text);

}  // namespace vireo

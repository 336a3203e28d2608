#include "types/value_digest.h"

#include <xxhash.h>

namespace vireo {

uint64_t ValueDigest(std::string_view value) { return XXH3_64bits(value.data(), value.size()); }

std::string FormatDigest(uint64_t digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(kDigestHexLength, '0');
  for (size_t i = kDigestHexLength; i-- > 0; digest >>= 4) out[i] = kHex[digest & 0xf];
  return out;
}

std::optional<uint64_t> ParseDigest(std::string_view text) {
  if (text.size() != kDigestHexLength) return std::nullopt;
  uint64_t digest = 0;
  for (char c : text) {
    int nibble;
    if (c >= '0' && c <= '9') {
      nibble = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      nibble = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      nibble = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    digest = (digest << 4) | static_cast<uint64_t>(nibble);
  }
  return digest;
}

}  // namespace vireo

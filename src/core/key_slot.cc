#include "core/key_slot.h"

#include <array>

namespace vireo::cluster {
namespace {

// Table k holds the CRC contribution of a byte followed by k zero bytes (table 0: the byte
// alone, i.e. the usual byte-at-a-time table). Eight of them let eight bytes be folded in with
// independent lookups instead of a chain of eight dependent ones ("slicing by 8"): every
// command in cluster mode hashes its keys, and the chain was a visible share of a GET.
using Crc16Tables = std::array<std::array<uint16_t, 256>, 8>;

constexpr Crc16Tables MakeCrc16Tables() {
  Crc16Tables t{};
  for (int byte = 0; byte < 256; ++byte) {
    uint16_t crc = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
    t[0][byte] = crc;
  }
  // One more zero byte shifts the register left by 8 and folds its high byte back in.
  for (size_t k = 1; k < t.size(); ++k) {
    for (int byte = 0; byte < 256; ++byte) {
      const uint16_t prev = t[k - 1][byte];
      t[k][byte] = static_cast<uint16_t>((prev << 8) ^ t[0][prev >> 8]);
    }
  }
  return t;
}

constexpr Crc16Tables kCrc16 = MakeCrc16Tables();

}  // namespace

uint16_t Crc16(std::string_view data) {
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  uint16_t crc = 0;
  for (; n >= 8; p += 8, n -= 8) {
    // The register's two bytes combine with the block's first two; each byte then
    // contributes "itself followed by the rest of the block's bytes as zeros".
    const uint16_t head = static_cast<uint16_t>(crc ^ ((p[0] << 8) | p[1]));
    crc = static_cast<uint16_t>(kCrc16[7][head >> 8] ^ kCrc16[6][head & 0xff] ^ kCrc16[5][p[2]] ^
                                kCrc16[4][p[3]] ^ kCrc16[3][p[4]] ^ kCrc16[2][p[5]] ^
                                kCrc16[1][p[6]] ^ kCrc16[0][p[7]]);
  }
  for (; n > 0; ++p, --n) {
    crc = static_cast<uint16_t>((crc << 8) ^ kCrc16[0][((crc >> 8) ^ *p) & 0xff]);
  }
  return crc;
}

std::string_view HashTag(std::string_view key) {
  const size_t open = key.find('{');
  if (open == std::string_view::npos) return key;
  const size_t close = key.find('}', open + 1);
  if (close == std::string_view::npos || close == open + 1) return key;
  return key.substr(open + 1, close - open - 1);
}

}  // namespace vireo::cluster

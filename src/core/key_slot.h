// Redis Cluster's key-to-slot mapping: CRC16 (XMODEM) of the key, or of the first non-empty
// {hash tag} in it, modulo 16384. Clients compute the same function, so it must be exact.
#ifndef VIREO_CLUSTER_KEY_SLOT_H_
#define VIREO_CLUSTER_KEY_SLOT_H_

#include <cstdint>
#include <string_view>

namespace vireo::cluster {

inline constexpr int kSlotCount = 16384;

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0, no reflection).
uint16_t Crc16(std::string_view data);

// The part of a key that is hashed: what lies between the first '{' and the next '}' when that
// is non-empty, else the whole key.
std::string_view HashTag(std::string_view key);

inline int KeySlot(std::string_view key) { return Crc16(HashTag(key)) & (kSlotCount - 1); }

}  // namespace vireo::cluster

#endif  // VIREO_CLUSTER_KEY_SLOT_H_

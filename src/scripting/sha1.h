// SHA-1 (FIPS 180-4), for the script cache keys and redis.sha1hex.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace vireo {

std::array<uint8_t, 20> Sha1(std::string_view data);
// The 40 lower-case hex digits of SHA-1(data).
std::string Sha1Hex(std::string_view data);

}  // namespace vireo

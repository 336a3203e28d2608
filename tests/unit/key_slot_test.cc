#include "core/key_slot.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace vireo::cluster {
namespace {

TEST(KeySlotTest, Crc16MatchesTheXmodemCheckValue) {
  // The standard check input for CRC-16/XMODEM.
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(Crc16(""), 0);
}

// The CRC one bit at a time, straight from the definition.
uint16_t BitwiseCrc16(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char c : data) {
    crc ^= static_cast<uint16_t>(c << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
  }
  return crc;
}

TEST(KeySlotTest, Crc16MatchesTheDefinitionAtEveryLength) {
  // Lengths around the 8-byte blocks and their byte-at-a-time tail, every byte value.
  std::mt19937 rng(17);
  for (size_t len = 0; len <= 67; ++len) {
    for (int round = 0; round < 20; ++round) {
      std::string data(len, '\0');
      for (char& c : data) c = static_cast<char>(rng() & 0xff);
      ASSERT_EQ(Crc16(data), BitwiseCrc16(data)) << "length " << len;
    }
  }
  EXPECT_EQ(Crc16("key:000000012345"), BitwiseCrc16("key:000000012345"));
}

TEST(KeySlotTest, SlotsAgreeWithRedis) {
  // Values from CLUSTER KEYSLOT on a Redis 7 cluster node.
  EXPECT_EQ(KeySlot("foo"), 12182);
  EXPECT_EQ(KeySlot("bar"), 5061);
  EXPECT_EQ(KeySlot("somekey"), 11058);
  EXPECT_EQ(KeySlot(""), 0);
}

TEST(KeySlotTest, HashTags) {
  EXPECT_EQ(HashTag("{user1000}.following"), "user1000");
  EXPECT_EQ(KeySlot("{user1000}.following"), KeySlot("{user1000}.followers"));
  // An empty tag hashes the whole key; only the first '{' counts.
  EXPECT_EQ(HashTag("foo{}{bar}"), "foo{}{bar}");
  EXPECT_EQ(HashTag("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(HashTag("foo{bar}{zap}"), "bar");
  EXPECT_EQ(HashTag("no-close{tag"), "no-close{tag");
  EXPECT_EQ(HashTag("}{x}"), "x");
}

}  // namespace
}  // namespace vireo::cluster

#include "cluster/key_slot.h"

#include <gtest/gtest.h>

namespace vireo::cluster {
namespace {

TEST(KeySlotTest, Crc16MatchesTheXmodemCheckValue) {
  // The standard check input for CRC-16/XMODEM.
  EXPECT_EQ(Crc16("123456789"), 0x31C3);
  EXPECT_EQ(Crc16(""), 0);
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

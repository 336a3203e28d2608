#include "types/value_digest.h"

#include <gtest/gtest.h>

namespace vireo {
namespace {

// The example on redis.io's DIGEST page.
TEST(ValueDigest, MatchesRedisDocumentedExample) {
  EXPECT_EQ(FormatDigest(ValueDigest("Hello world")), "b6acb9d84a38ff74");
}

// redis/redis#14496: a digest with leading zero nibbles still prints 16 digits.
TEST(ValueDigest, KeepsLeadingZeros) {
  EXPECT_EQ(FormatDigest(0x00006c38adf31777ULL), "00006c38adf31777");
  EXPECT_EQ(FormatDigest(0), "0000000000000000");
}

TEST(ValueDigest, ParsesEitherCaseAndOnlySixteenDigits) {
  EXPECT_EQ(ParseDigest("00006C38ADF31777"), 0x00006c38adf31777ULL);
  EXPECT_EQ(ParseDigest("b6acb9d84a38ff74"), 0xb6acb9d84a38ff74ULL);
  EXPECT_FALSE(ParseDigest("6c38adf31777"));
  EXPECT_FALSE(ParseDigest("00006c38adf317770"));
  EXPECT_FALSE(ParseDigest("00006c38adf3177g"));
  EXPECT_FALSE(ParseDigest(""));
}

}  // namespace
}  // namespace vireo

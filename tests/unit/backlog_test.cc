#include "replication/backlog.h"

#include <gtest/gtest.h>

#include <string>

namespace vireo {
namespace {

std::string From(const ReplicationBacklog& b, int64_t offset) {
  std::string out;
  b.CopyFrom(offset, &out);
  return out;
}

TEST(ReplicationBacklog, OffsetAdvancesWithoutARing) {
  ReplicationBacklog b;
  b.Append("abc");
  EXPECT_EQ(b.end_offset(), 3);
  EXPECT_FALSE(b.created());
  EXPECT_FALSE(b.CanContinueFrom(4));
}

TEST(ReplicationBacklog, HoldsTheNewestBytes) {
  ReplicationBacklog b;
  b.Create(8);
  b.Append("0123");
  EXPECT_EQ(b.first_offset(), 1);
  EXPECT_EQ(From(b, 1), "0123");
  EXPECT_EQ(From(b, 3), "23");
  b.Append("456789ab");  // wraps: only the last 8 survive
  EXPECT_EQ(b.end_offset(), 12);
  EXPECT_EQ(b.histlen(), 8u);
  EXPECT_EQ(b.first_offset(), 5);
  EXPECT_EQ(From(b, 5), "456789ab");
  EXPECT_EQ(From(b, 10), "9ab");
  EXPECT_TRUE(b.CanContinueFrom(5));
  EXPECT_TRUE(b.CanContinueFrom(13));  // nothing missing: continue with an empty reply
  EXPECT_FALSE(b.CanContinueFrom(4));
  EXPECT_FALSE(b.CanContinueFrom(14));
}

TEST(ReplicationBacklog, AppendLargerThanTheRing) {
  ReplicationBacklog b;
  b.Create(4);
  b.Append("abcdefghij");
  EXPECT_EQ(b.end_offset(), 10);
  EXPECT_EQ(From(b, 7), "ghij");
}

TEST(ReplicationBacklog, ResetStartsAfterTheGivenOffset) {
  ReplicationBacklog b;
  b.Create(16);
  b.Append("xyz");
  b.Reset(100);
  EXPECT_EQ(b.histlen(), 0u);
  EXPECT_TRUE(b.CanContinueFrom(101));
  EXPECT_FALSE(b.CanContinueFrom(100));
  b.Append("q");
  EXPECT_EQ(From(b, 101), "q");
}

TEST(ReplicationBacklog, ResizeKeepsTheNewestBytes) {
  ReplicationBacklog b;
  b.Create(8);
  b.Append("0123456789");
  b.Resize(4);
  EXPECT_EQ(b.end_offset(), 10);
  EXPECT_EQ(From(b, 7), "6789");
  EXPECT_FALSE(b.CanContinueFrom(6));
  b.Resize(32);
  EXPECT_EQ(From(b, 7), "6789");
  b.Append("ab");
  EXPECT_EQ(From(b, 7), "6789ab");
}

TEST(ReplicationBacklog, FreeKeepsTheOffset) {
  ReplicationBacklog b;
  b.Create(8);
  b.Append("abc");
  b.Free();
  EXPECT_EQ(b.end_offset(), 3);
  b.Create(8);
  b.Append("d");
  EXPECT_EQ(From(b, 4), "d");
  EXPECT_FALSE(b.CanContinueFrom(3));
}

}  // namespace
}  // namespace vireo

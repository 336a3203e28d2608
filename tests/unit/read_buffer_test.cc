// Client::ReadBuffer: growth and the clients cron's resize (Redis 7.2's query buffer model).
#include <gtest/gtest.h>

#include <cstring>

#include "server/client.h"

namespace vireo {
namespace {

using ReadBuffer = Client::ReadBuffer;

void Fill(ReadBuffer& buf, size_t n) {
  buf.EnsureWritable(n);
  memset(buf.data.get() + buf.end, 'x', n);
  buf.end += n;
}

TEST(ReadBufferTest, KnownRequestSizeIsNotRoundedUp) {
  ReadBuffer buf;
  Fill(buf, 16 * 1024);
  buf.EnsureWritable(300 * 1024 - buf.size(), 300 * 1024);
  EXPECT_EQ(buf.capacity, 300u * 1024);
}

TEST(ReadBufferTest, IdleBufferIsGivenBackKeepingItsBytes) {
  ReadBuffer buf;
  Fill(buf, 100);
  buf.start = 40;  // 60 bytes not yet consumed
  buf.EnsureWritable(16 * 1024);
  buf.CronResize(/*idle=*/true, 0);
  EXPECT_EQ(buf.capacity, 60u);
  EXPECT_EQ(buf.size(), 60u);
  buf.start = buf.end;
  buf.CronResize(/*idle=*/true, 0);  // 60 free bytes aren't worth a reallocation
  EXPECT_EQ(buf.capacity, 60u);
  buf.EnsureWritable(16 * 1024);
  buf.CronResize(/*idle=*/true, 0);
  EXPECT_EQ(buf.capacity, 0u);
  EXPECT_EQ(buf.data, nullptr);
}

TEST(ReadBufferTest, BusyBufferShrinksToItsRecentPeak) {
  ReadBuffer buf;
  Fill(buf, 400 * 1024);
  buf.start = buf.end;  // the big command ran
  buf.peak = 400 * 1024;
  buf.CronResize(false, 0);  // the peak of this period was the big command: kept
  EXPECT_EQ(buf.capacity, 400u * 1024);
  EXPECT_EQ(buf.peak, 0u);
  buf.peak = 16 * 1024;  // small commands since
  buf.CronResize(false, 0);
  EXPECT_EQ(buf.capacity, 16u * 1024);
  buf.CronResize(false, 0);  // at or under the 32 KB threshold: left alone while busy
  EXPECT_EQ(buf.capacity, 16u * 1024);
}

TEST(ReadBufferTest, ShrinkNeverDropsBelowTheArgumentStillArriving) {
  ReadBuffer buf;
  Fill(buf, 10);
  buf.EnsureWritable(1 << 20);
  buf.CronResize(false, 200 * 1024);
  EXPECT_EQ(buf.capacity, 200u * 1024);
  EXPECT_EQ(buf.size(), 10u);
  EXPECT_EQ(buf.peak, 200u * 1024);
}

TEST(ReadBufferTest, OnlyVeryLargeEmptiedBuffersGoAtOnce) {
  ReadBuffer buf;
  Fill(buf, 400 * 1024);
  buf.start = buf.end;
  buf.ShrinkIfIdle();
  EXPECT_EQ(buf.capacity, 400u * 1024);
  Fill(buf, 2 << 20);
  buf.start = buf.end;
  buf.ShrinkIfIdle();
  EXPECT_EQ(buf.capacity, 0u);
}

}  // namespace
}  // namespace vireo

#include "replication/repl_buffer.h"

#include <gtest/gtest.h>

#include <string>

namespace vireo {
namespace {

constexpr size_t kBlock = 16 * 1024;  // the smallest block

// What a new reader starting at `from` would read.
std::string From(ReplicationBuffer& b, int64_t from) {
  constexpr uint64_t kProbe = ~0ULL;
  b.AddReader(kProbe, from);
  std::string out;
  b.Read(kProbe, SIZE_MAX, &out);
  b.RemoveReader(kProbe);
  return out;
}

TEST(ReplicationBuffer, OffsetAdvancesWithNobodyToKeepFor) {
  ReplicationBuffer b;
  b.Append("abc");
  EXPECT_EQ(b.end_offset(), 3);
  EXPECT_FALSE(b.created());
  EXPECT_FALSE(b.CanContinueFrom(4));
  EXPECT_EQ(b.memory(), 0u);
}

TEST(ReplicationBuffer, BacklogContinuesFromAnyHeldByte) {
  ReplicationBuffer b;
  b.Create(kBlock);
  b.Append("0123");
  EXPECT_EQ(b.first_offset(), 1);
  EXPECT_EQ(b.histlen(), 4u);
  EXPECT_EQ(From(b, 1), "0123");
  EXPECT_EQ(From(b, 3), "23");
  EXPECT_TRUE(b.CanContinueFrom(5));  // nothing missing: continue with an empty reply
  EXPECT_FALSE(b.CanContinueFrom(6));
}

TEST(ReplicationBuffer, BacklogTrimsWholeBlocksPastItsSize) {
  ReplicationBuffer b;
  b.Create(kBlock);
  b.Append(std::string(kBlock, 'a'));
  b.Append(std::string(kBlock, 'b'));
  // Dropping the first block would leave exactly the size: it stays until a third comes.
  EXPECT_EQ(b.block_count(), 2u);
  b.Append("c");
  EXPECT_EQ(b.block_count(), 2u);
  EXPECT_EQ(b.first_offset(), static_cast<int64_t>(kBlock) + 1);
  EXPECT_EQ(b.histlen(), kBlock + 1);
  EXPECT_FALSE(b.CanContinueFrom(1));
}

TEST(ReplicationBuffer, ReadersShareOneCopy) {
  ReplicationBuffer b;
  b.Create(kBlock);
  b.AddReader(1, 1);
  b.AddReader(2, 1);
  const std::string data(10 * kBlock, 'x');
  b.Append(data);
  // One copy for both readers, however far behind they are (each block counted as the
  // allocator's size class holding it: jemalloc puts a 16 KB + 1 block in 20 KB).
  EXPECT_LT(b.memory(), data.size() * 5 / 4 + 2 * kBlock);
  EXPECT_EQ(b.Unread(1), data.size());
  EXPECT_EQ(b.Held(2), data.size());
  std::string out;
  EXPECT_EQ(b.Read(1, 100, &out), 100u);
  EXPECT_EQ(b.Unread(1), data.size() - 100);
  EXPECT_EQ(b.Unread(2), data.size());
}

TEST(ReplicationBuffer, ASlowReaderGrowsTheBacklogUntilItGoes) {
  ReplicationBuffer b;
  b.Create(kBlock);
  b.AddReader(7, 1);
  b.Append(std::string(8 * kBlock, 'x'));
  // Everything is kept for the reader, and a replica may continue from any of it.
  EXPECT_EQ(b.histlen(), 8 * kBlock);
  EXPECT_TRUE(b.CanContinueFrom(1));
  const size_t before = b.memory();
  b.RemoveReader(7);
  EXPECT_LT(b.memory(), before);
  EXPECT_LE(b.histlen(), 2 * kBlock);
  EXPECT_GE(b.histlen(), kBlock);
}

TEST(ReplicationBuffer, ReadingOnReleasesBlocks) {
  ReplicationBuffer b;
  b.Create(kBlock);
  b.AddReader(7, 1);
  b.Append(std::string(8 * kBlock, 'x'));
  std::string out;
  while (b.Read(7, 5000, &out) > 0) {
  }
  EXPECT_EQ(out.size(), 8 * kBlock);
  EXPECT_EQ(b.Unread(7), 0u);
  EXPECT_EQ(b.Held(7), 0u);
  EXPECT_LE(b.histlen(), 2 * kBlock);
}

TEST(ReplicationBuffer, ReadsCrossBlocks) {
  ReplicationBuffer b;
  b.Create(kBlock);
  std::string data;
  for (size_t i = 0; i < 3 * kBlock; ++i) data.push_back(static_cast<char>('a' + i % 26));
  b.AddReader(1, 1);
  b.Append(data.substr(0, 100));
  b.Append(data.substr(100));
  std::string out;
  b.Read(1, kBlock + 50, &out);
  b.Read(1, SIZE_MAX, &out);
  EXPECT_EQ(out, data);
}

TEST(ReplicationBuffer, ResetStartsAfterTheGivenOffset) {
  ReplicationBuffer b;
  b.Create(kBlock);
  b.Append("xyz");
  b.AddReader(3, 2);
  b.Reset(100);
  EXPECT_EQ(b.histlen(), 0u);
  EXPECT_EQ(b.Unread(3), 0u);
  EXPECT_TRUE(b.CanContinueFrom(101));
  EXPECT_FALSE(b.CanContinueFrom(100));
  b.Append("q");
  EXPECT_EQ(From(b, 101), "q");
}

TEST(ReplicationBuffer, ShrinkingTheBacklogTrims) {
  ReplicationBuffer b;
  b.Create(64 * kBlock);
  b.Append(std::string(32 * kBlock, 'x'));
  EXPECT_EQ(b.histlen(), 32 * kBlock);
  b.Resize(kBlock);
  // The blocks were sized for the old backlog (a 16th of it): whole ones go.
  EXPECT_LE(b.histlen(), 2 * 4 * kBlock);
  EXPECT_EQ(b.end_offset(), static_cast<int64_t>(32 * kBlock));
}

TEST(ReplicationBuffer, FreeKeepsTheOffsetAndTheReaders) {
  ReplicationBuffer b;
  b.Create(kBlock);
  b.AddReader(1, 1);
  b.Append("abc");
  b.Free();
  EXPECT_EQ(b.end_offset(), 3);
  EXPECT_EQ(b.Unread(1), 3u);
  std::string out;
  b.Read(1, SIZE_MAX, &out);
  EXPECT_EQ(out, "abc");
  b.RemoveReader(1);
  EXPECT_EQ(b.memory(), 0u);
  b.Create(kBlock);
  b.Append("d");
  EXPECT_EQ(From(b, 4), "d");
  EXPECT_FALSE(b.CanContinueFrom(3));
}

}  // namespace
}  // namespace vireo

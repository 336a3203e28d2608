#include "db/blocking.h"

#include <gtest/gtest.h>

namespace vireo {
namespace {

TEST(BlockingEngineTest, FifoPerKey) {
  BlockingEngine e;
  e.Block(1, 0, {"k"}, 0, ValueType::kList);
  e.Block(2, 0, {"k"}, 0, ValueType::kList);
  e.Block(3, 0, {"other", "k"}, 0, ValueType::kList);
  EXPECT_EQ(e.WaitersOf(0, "k"), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(e.WaitersOf(0, "other"), (std::vector<uint64_t>{3}));
  EXPECT_EQ(e.blocked_clients(), 3u);
  EXPECT_EQ(e.blocking_keys(), 2u);
}

TEST(BlockingEngineTest, UnblockLeavesEveryList) {
  BlockingEngine e;
  e.Block(7, 0, {"a", "b", "c"}, 100, ValueType::kList);
  e.Block(8, 0, {"b"}, 0, ValueType::kList);
  EXPECT_TRUE(e.Unblock(7));
  EXPECT_FALSE(e.Unblock(7));
  EXPECT_FALSE(e.HasWaiters(0, "a"));
  EXPECT_EQ(e.WaitersOf(0, "b"), (std::vector<uint64_t>{8}));
  EXPECT_EQ(e.NextDeadline(), 0);
  EXPECT_EQ(e.blocking_keys(), 1u);
}

TEST(BlockingEngineTest, DatabasesAreSeparate) {
  BlockingEngine e;
  e.Block(1, 0, {"k"}, 0, ValueType::kList);
  e.Block(2, 1, {"k"}, 0, ValueType::kList);
  EXPECT_EQ(e.WaitersOf(1, "k"), (std::vector<uint64_t>{2}));
  EXPECT_EQ(e.KeysWithWaiters(1), (std::vector<std::string>{"k"}));
  EXPECT_TRUE(e.KeysWithWaiters(2).empty());
}

TEST(BlockingEngineTest, ReadyKeysMarkedOnceAndOnlyWithWaiters) {
  BlockingEngine e;
  e.SignalKeyAsReady(0, "k");
  EXPECT_FALSE(e.HasReadyKeys());
  e.Block(1, 0, {"k", "j"}, 0, ValueType::kList);
  e.SignalKeyAsReady(0, "k");
  e.SignalKeyAsReady(0, "k");
  e.SignalKeyAsReady(0, "j");
  auto ready = e.TakeReadyKeys();
  ASSERT_EQ(ready.size(), 2u);
  EXPECT_EQ(ready[0], (BlockedKey{0, "k"}));
  EXPECT_EQ(ready[1], (BlockedKey{0, "j"}));
  EXPECT_FALSE(e.HasReadyKeys());
  e.SignalKeyAsReady(0, "k");  // marks again after a pass
  EXPECT_TRUE(e.HasReadyKeys());
}

TEST(BlockingEngineTest, DuplicateKeysWaitOnce) {
  BlockingEngine e;
  e.Block(1, 0, {"k", "k"}, 0, ValueType::kList);
  EXPECT_EQ(e.WaitersOf(0, "k"), (std::vector<uint64_t>{1}));
}

TEST(BlockingEngineTest, DeadlinesInOrder) {
  BlockingEngine e;
  e.Block(1, 0, {"a"}, 300, ValueType::kList);
  e.Block(2, 0, {"a"}, 100, ValueType::kList);
  e.Block(3, 0, {"a"}, 0, ValueType::kList);
  e.Block(4, 0, {"a"}, 200, ValueType::kList);
  EXPECT_EQ(e.NextDeadline(), 100);
  EXPECT_EQ(e.Expired(99), std::vector<uint64_t>{});
  EXPECT_EQ(e.Expired(250), (std::vector<uint64_t>{2, 4}));
  e.Unblock(2);
  EXPECT_EQ(e.NextDeadline(), 200);
}

TEST(BlockingEngineTest, ReblockReplaces) {
  BlockingEngine e;
  e.Block(1, 0, {"a"}, 50, ValueType::kList);
  e.Block(1, 0, {"b"}, 0, ValueType::kZSet);
  EXPECT_FALSE(e.HasWaiters(0, "a"));
  EXPECT_TRUE(e.HasWaiters(0, "b"));
  EXPECT_EQ(e.Find(1)->type, ValueType::kZSet);
  EXPECT_EQ(e.NextDeadline(), 0);
}

}  // namespace
}  // namespace vireo

// The keyspace: lookups, lazy and active expiry, TTL bookkeeping, SWAPDB contents.
#include "db/database.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "util/clock.h"

namespace vireo {
namespace {

class RecordingListener : public KeyspaceListener {
 public:
  void OnKeyModified(int db, std::string_view key) override { modified.emplace_back(key); }
  void OnKeyExpired(int db, std::string_view key) override { expired.emplace_back(key); }
  void OnKeyAdded(int db, std::string_view key) override { added.emplace_back(key); }
  std::vector<std::string> modified, expired, added;
};

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override { db.set_now_ms(1'000'000); }
  RecordingListener listener;
  Database db{0, &listener};
};

std::string StringOf(const DbEntry* e) {
  char scratch[24];
  return std::string(e->value.StringView(scratch));
}

TEST_F(DatabaseTest, AddFindSetDelete) {
  db.Add("a", Value::String("1"));
  ASSERT_NE(db.Find("a"), nullptr);
  EXPECT_EQ(StringOf(db.Find("a")), "1");
  db.Set("a", Value::String("two"));
  EXPECT_EQ(StringOf(db.Find("a")), "two");
  EXPECT_EQ(db.size(), 1u);
  EXPECT_TRUE(db.Delete("a"));
  EXPECT_FALSE(db.Delete("a"));
  EXPECT_EQ(db.Find("a"), nullptr);
  EXPECT_EQ(listener.added, (std::vector<std::string>{"a", "a"}));
}

TEST_F(DatabaseTest, LongKeysAndValuesLiveOnTheHeap) {
  std::string key(100, 'k'), value(1000, 'v');
  db.Add(key, Value::String(value));
  EXPECT_EQ(StringOf(db.Find(key)), value);
  EXPECT_TRUE(db.Find(key)->key.is_heap());
}

TEST_F(DatabaseTest, IntegerEncoding) {
  db.Add("n", Value::String("12345"));
  EXPECT_STREQ(db.Find("n")->value.EncodingName(), "int");
  db.Add("s", Value::String("012"));  // not canonical: stays a string
  EXPECT_STREQ(db.Find("s")->value.EncodingName(), "embstr");
}

TEST_F(DatabaseTest, LazyExpiry) {
  DbEntry* e = db.Add("t", Value::String("v"));
  db.SetExpire(e, 1'000'500);
  EXPECT_TRUE(e->has_expire());
  EXPECT_EQ(db.GetExpire(e), 1'000'500);
  EXPECT_EQ(db.expires_size(), 1u);
  db.set_now_ms(1'000'499);
  EXPECT_NE(db.Find("t"), nullptr);
  EXPECT_FALSE(db.IsLogicallyExpired("t"));
  db.set_now_ms(1'000'500);
  EXPECT_TRUE(db.IsLogicallyExpired("t"));
  EXPECT_EQ(db.Find("t"), nullptr);  // deleted on access
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.expires_size(), 0u);
  EXPECT_EQ(listener.expired, (std::vector<std::string>{"t"}));
  EXPECT_EQ(listener.modified, (std::vector<std::string>{"t"}));
}

TEST_F(DatabaseTest, SetClearsTtlUnlessKept) {
  DbEntry* e = db.Add("k", Value::String("v"));
  db.SetExpire(e, 2'000'000);
  db.Set("k", Value::String("w"), /*keep_ttl=*/true);
  EXPECT_EQ(db.GetExpire(db.Find("k")), 2'000'000);
  db.Set("k", Value::String("x"));
  EXPECT_EQ(db.GetExpire(db.Find("k")), -1);
  EXPECT_EQ(db.expires_size(), 0u);
}

TEST_F(DatabaseTest, PersistAndUpdateExpire) {
  DbEntry* e = db.Add("k", Value::String("v"));
  EXPECT_FALSE(db.Persist(e));
  db.SetExpire(e, 2'000'000);
  db.SetExpire(e, 3'000'000);
  EXPECT_EQ(db.expires_size(), 1u);
  EXPECT_EQ(db.GetExpire(e), 3'000'000);
  EXPECT_TRUE(db.Persist(e));
  EXPECT_FALSE(e->has_expire());
  EXPECT_EQ(db.GetExpire(e), -1);
}

TEST_F(DatabaseTest, ActiveExpiryRemovesExpiredKeysOnly) {
  for (int i = 0; i < 20000; ++i) {
    DbEntry* e = db.Add("k" + std::to_string(i), Value::String("v"));
    // Half expire at 1'000'100, a quarter much later, a quarter never.
    if (i % 4 < 2) db.SetExpire(e, 1'000'100);
    if (i % 4 == 2) db.SetExpire(e, 9'000'000);
  }
  db.set_now_ms(1'000'200);
  size_t deleted = 0;
  for (int round = 0; round < 1000 && deleted < 10000; ++round) {
    deleted += db.ActiveExpireCycle(MonotonicUs() + 100000);
  }
  EXPECT_EQ(deleted, 10000u);
  EXPECT_EQ(db.size(), 10000u);
  EXPECT_EQ(db.expires_size(), 5000u);
  EXPECT_GT(db.avg_ttl(), 0);
  for (int i = 0; i < 20000; ++i) {
    EXPECT_EQ(db.Peek("k" + std::to_string(i)) != nullptr, i % 4 >= 2) << i;
  }
}

TEST_F(DatabaseTest, ActiveExpiryRespectsDeadline) {
  for (int i = 0; i < 200000; ++i) {
    db.SetExpire(db.Add("k" + std::to_string(i), Value::String("v")), 1'000'001);
  }
  db.set_now_ms(2'000'000);
  int64_t start = MonotonicUs();
  size_t deleted = db.ActiveExpireCycle(start + 1000);  // a 1 ms budget
  EXPECT_GT(deleted, 0u);
  EXPECT_LT(deleted, 200000u);
  EXPECT_TRUE(db.expire_backlog());
}

TEST_F(DatabaseTest, DetachKeepsEntryAlive) {
  DbEntry* e = db.Add("k", Value::String("v"));
  db.SetExpire(e, 2'000'000);
  DbEntry* detached = db.Detach("k");
  ASSERT_EQ(detached, e);
  EXPECT_FALSE(detached->has_expire());
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.expires_size(), 0u);
  delete detached;
}

TEST_F(DatabaseTest, SwapContents) {
  Database other(1, &listener);
  db.Add("a", Value::String("1"));
  DbEntry* b = other.Add("b", Value::String("2"));
  other.SetExpire(b, 5'000'000);
  db.SwapContents(other);
  EXPECT_EQ(db.Find("a"), nullptr);
  ASSERT_NE(db.Find("b"), nullptr);
  EXPECT_EQ(db.GetExpire(db.Find("b")), 5'000'000);
  EXPECT_NE(other.Find("a"), nullptr);
  EXPECT_EQ(db.index(), 0);
}

TEST_F(DatabaseTest, ScanVisitsEveryKey) {
  for (int i = 0; i < 5000; ++i) db.Add("k" + std::to_string(i), Value::String("v"));
  std::set<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = db.Scan(cursor, [&](DbEntry* e) { seen.emplace(e->key.view()); });
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), 5000u);
}

TEST_F(DatabaseTest, ClearEmptiesEverything) {
  for (int i = 0; i < 100; ++i) {
    db.SetExpire(db.Add("k" + std::to_string(i), Value::String("v")), 2'000'000);
  }
  db.Clear();
  EXPECT_EQ(db.size(), 0u);
  EXPECT_EQ(db.expires_size(), 0u);
  EXPECT_EQ(db.Find("k1"), nullptr);
}

// The cluster slot index: counts and key lists per hash slot, kept through every way a key
// comes and goes.
class SlotIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db.set_now_ms(1'000'000);
    db.EnableSlotIndex();
  }
  RecordingListener listener;
  Database db{0, &listener};
};

TEST_F(SlotIndexTest, CountsAndListsKeysBySlot) {
  const int slot = cluster::KeySlot("{user1}");
  db.Add("{user1}.a", Value::String("1"));
  db.Add("{user1}.b", Value::String("2"));
  db.Add("{user1}.c", Value::String("3"));
  db.Add("other", Value::String("4"));
  EXPECT_EQ(db.CountKeysInSlot(slot), 3u);
  EXPECT_EQ(db.CountKeysInSlot(cluster::KeySlot("other")), 1u);
  auto keys = db.KeysInSlot(slot, 10);
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()),
            (std::set<std::string>{"{user1}.a", "{user1}.b", "{user1}.c"}));
  EXPECT_EQ(db.KeysInSlot(slot, 2).size(), 2u);
  EXPECT_TRUE(db.KeysInSlot(slot, 0).empty());
  EXPECT_EQ(db.CountKeysInSlot(-1), 0u);
  EXPECT_EQ(db.CountKeysInSlot(cluster::kSlotCount), 0u);
  EXPECT_TRUE(db.KeysInSlot(cluster::kSlotCount, 10).empty());
}

TEST_F(SlotIndexTest, DeletionFromHeadMiddleAndTail) {
  const int slot = cluster::KeySlot("{t}");
  for (const char* k : {"{t}1", "{t}2", "{t}3", "{t}4"}) db.Add(k, Value::String("v"));
  EXPECT_TRUE(db.Delete("{t}4"));  // the list head (inserted last)
  EXPECT_TRUE(db.Delete("{t}2"));  // middle
  EXPECT_TRUE(db.Delete("{t}1"));  // tail
  EXPECT_EQ(db.CountKeysInSlot(slot), 1u);
  EXPECT_EQ(db.KeysInSlot(slot, 10), (std::vector<std::string>{"{t}3"}));
  db.Set("{t}3", Value::String("replaced"));  // a replaced value keeps its entry
  EXPECT_EQ(db.CountKeysInSlot(slot), 1u);
  EXPECT_TRUE(db.Delete("{t}3"));
  EXPECT_EQ(db.CountKeysInSlot(slot), 0u);
  EXPECT_TRUE(db.KeysInSlot(slot, 10).empty());
}

TEST_F(SlotIndexTest, ExpiryAndDetachLeaveTheIndex) {
  const int slot = cluster::KeySlot("{e}");
  db.SetExpire(db.Add("{e}lazy", Value::String("v")), 1'000'100);
  db.SetExpire(db.Add("{e}active", Value::String("v")), 1'000'100);
  db.Add("{e}detached", Value::String("v"));
  EXPECT_EQ(db.CountKeysInSlot(slot), 3u);
  db.set_now_ms(1'000'200);
  // Logically expired keys still count until they are deleted, as in Redis.
  EXPECT_EQ(db.CountKeysInSlot(slot), 3u);
  EXPECT_EQ(db.Find("{e}lazy"), nullptr);
  EXPECT_EQ(db.CountKeysInSlot(slot), 2u);
  db.ActiveExpireCycle(MonotonicUs() + 1'000'000);
  EXPECT_EQ(db.CountKeysInSlot(slot), 1u);
  DbEntry* e = db.Detach("{e}detached");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(db.CountKeysInSlot(slot), 0u);
  db.FreeDetached(e);
}

TEST_F(SlotIndexTest, DeleteKeysInSlotDeletesOnlyThatSlot) {
  const int slot = cluster::KeySlot("{d}");
  for (int i = 0; i < 100; ++i) db.Add("{d}" + std::to_string(i), Value::String("v"));
  db.SetExpire(db.Find("{d}7"), 2'000'000);
  db.Add("keep", Value::String("v"));
  listener.modified.clear();
  std::vector<std::string> seen;
  EXPECT_EQ(db.DeleteKeysInSlot(slot, [&](std::string_view k) { seen.emplace_back(k); }), 100u);
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(listener.modified.size(), 100u);
  EXPECT_EQ(db.CountKeysInSlot(slot), 0u);
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.expires_size(), 0u);
  EXPECT_NE(db.Find("keep"), nullptr);
  EXPECT_EQ(db.DeleteKeysInSlot(slot), 0u);
}

TEST_F(SlotIndexTest, ClearAndSwapKeepIndexing) {
  db.Add("{s}a", Value::String("v"));
  // FLUSHALL ASYNC: the keys go to a doomed plain database, the live one stays indexed.
  Database doomed(-1, nullptr);
  doomed.SwapContents(db);
  EXPECT_TRUE(db.slot_indexed());
  EXPECT_TRUE(doomed.slot_indexed());
  EXPECT_EQ(doomed.CountKeysInSlot(cluster::KeySlot("{s}")), 1u);
  EXPECT_EQ(db.CountKeysInSlot(cluster::KeySlot("{s}")), 0u);
  db.Add("{s}b", Value::String("v"));
  EXPECT_EQ(db.CountKeysInSlot(cluster::KeySlot("{s}")), 1u);
  db.Clear();
  EXPECT_EQ(db.CountKeysInSlot(cluster::KeySlot("{s}")), 0u);
  db.Add("{s}c", Value::String("v"));
  EXPECT_EQ(db.CountKeysInSlot(cluster::KeySlot("{s}")), 1u);
  doomed.Clear();  // frees SlottedDbEntry nodes as such (ASan would catch a mismatch)
}

TEST_F(DatabaseTest, WithoutTheSlotIndexSlotQueriesAreEmpty) {
  db.Add("{x}a", Value::String("v"));
  EXPECT_FALSE(db.slot_indexed());
  EXPECT_EQ(db.CountKeysInSlot(cluster::KeySlot("{x}")), 0u);
  EXPECT_TRUE(db.KeysInSlot(cluster::KeySlot("{x}"), 10).empty());
  EXPECT_EQ(db.DeleteKeysInSlot(cluster::KeySlot("{x}")), 0u);
  db.EnableSlotIndex();  // refused: the keyspace isn't empty
  EXPECT_FALSE(db.slot_indexed());
}

}  // namespace
}  // namespace vireo

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

}  // namespace
}  // namespace vireo

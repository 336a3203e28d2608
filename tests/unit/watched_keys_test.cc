// WatchedKeys without a server: a write to a watched key makes its watchers dirty, UNWATCH
// forgets them, and keys already past their TTL when watched follow Redis 7's rules (deleting
// them changes nothing; FLUSHDB/SWAPDB judge what is stored, not what lazy expiry would see).
#include "server/watched_keys.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "db/database.h"
#include "server/client.h"

namespace vireo {
namespace {

class WatchedKeysTest : public ::testing::Test {
 protected:
  WatchedKeysTest() {
    dbs_.push_back(std::make_unique<Database>(0, nullptr));
    dbs_.push_back(std::make_unique<Database>(1, nullptr));
    for (auto& db : dbs_) db->set_now_ms(1'000'000);
  }
  Database& db(int i) { return *dbs_[i]; }
  void AddStale(Database& d, std::string_view key) {
    d.Add(key, Value::String("v"));
    d.SetExpire(d.Peek(key), 999'000);  // already past: now is 1'000'000
  }

  std::vector<std::unique_ptr<Database>> dbs_;
  WatchedKeys watched_{dbs_};
  Client a_{nullptr, 1, -1};
  Client b_{nullptr, 2, -1};
};

TEST_F(WatchedKeysTest, TouchMakesEveryWatcherOfThatKeyDirty) {
  watched_.Watch(a_, 0, "k");
  watched_.Watch(b_, 0, "other");
  watched_.Watch(b_, 1, "k");  // same name, other database
  watched_.Touch(0, "k");
  EXPECT_TRUE(a_.has(kClientDirtyCas));
  EXPECT_FALSE(b_.has(kClientDirtyCas));
  watched_.Touch(0, "unwatched");
  watched_.Touch(1, "other");
  EXPECT_FALSE(b_.has(kClientDirtyCas));
}

TEST_F(WatchedKeysTest, WatchingTwiceRecordsTheKeyOnce) {
  watched_.Watch(a_, 0, "key");
  watched_.Watch(a_, 0, "key");
  ASSERT_EQ(a_.watched_keys.size(), 1u);
  EXPECT_EQ(a_.watched_key_bytes, 3u);
}

TEST_F(WatchedKeysTest, UnwatchAllForgetsTheClient) {
  watched_.Watch(a_, 0, "k");
  watched_.Watch(a_, 1, "j");
  watched_.UnwatchAll(a_);
  EXPECT_TRUE(a_.watched_keys.empty());
  EXPECT_EQ(a_.watched_key_bytes, 0u);
  watched_.Touch(0, "k");
  watched_.Touch(1, "j");
  EXPECT_FALSE(a_.has(kClientDirtyCas));
}

TEST_F(WatchedKeysTest, TouchBeforeAnyWatchIsANoOp) {
  watched_.Touch(1, "k");
  watched_.TouchAllInDb(1);
  EXPECT_FALSE(a_.has(kClientDirtyCas));
}

TEST_F(WatchedKeysTest, DeletingAKeyStaleWhenWatchedIsNoChange) {
  AddStale(db(0), "k");
  watched_.Watch(a_, 0, "k");
  EXPECT_FALSE(watched_.AnyExpired(a_));  // it expired before WATCH, not since
  db(0).Delete("k");
  watched_.Touch(0, "k");
  EXPECT_FALSE(a_.has(kClientDirtyCas));
  // From then on it is an ordinary missing key: creating it is a change.
  db(0).Add("k", Value::String("new"));
  watched_.Touch(0, "k");
  EXPECT_TRUE(a_.has(kClientDirtyCas));
}

TEST_F(WatchedKeysTest, AnyExpiredSeesAKeyThatExpiredSinceWatch) {
  db(0).Add("k", Value::String("v"));
  db(0).SetExpire(db(0).Peek("k"), 1'000'500);
  watched_.Watch(a_, 0, "k");
  EXPECT_FALSE(watched_.AnyExpired(a_));
  db(0).set_now_ms(1'001'000);
  EXPECT_TRUE(watched_.AnyExpired(a_));
}

TEST_F(WatchedKeysTest, TouchAllInDbDirtiesWatchersOfStoredKeys) {
  db(0).Add("present", Value::String("v"));
  watched_.Watch(a_, 0, "present");
  watched_.Watch(b_, 0, "missing");
  watched_.TouchAllInDb(0);
  EXPECT_TRUE(a_.has(kClientDirtyCas));
  EXPECT_FALSE(b_.has(kClientDirtyCas));
}

TEST_F(WatchedKeysTest, SwapBringingAKeyInDirtiesItsWatchers) {
  db(1).Add("k", Value::String("v"));
  watched_.Watch(a_, 0, "k");
  watched_.TouchAllInDb(0, &db(1));  // SWAPDB 0 1: db 1's "k" arrives in db 0
  EXPECT_TRUE(a_.has(kClientDirtyCas));
}

TEST_F(WatchedKeysTest, StaleKeysOnBothSidesOfASwapAreNoChange) {
  AddStale(db(0), "k");
  AddStale(db(1), "k");
  watched_.Watch(a_, 0, "k");
  watched_.TouchAllInDb(0, &db(1));
  EXPECT_FALSE(a_.has(kClientDirtyCas));
}

TEST_F(WatchedKeysTest, AMissingKeyReplacedByAStaleOneIsNoChange) {
  AddStale(db(1), "k");
  watched_.Watch(a_, 0, "k");
  watched_.TouchAllInDb(0, &db(1));
  EXPECT_FALSE(a_.has(kClientDirtyCas));
  ASSERT_EQ(a_.watched_keys.size(), 1u);
  EXPECT_TRUE(a_.watched_keys[0].expired_at_watch);  // now judged as stale when watched
}

}  // namespace
}  // namespace vireo

// maxmemory's building blocks: the 24-bit access clock (LRU and LFU readings), the clock kept
// in a value across overwrites, the sampled eviction pool, and the allocation counter.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/access_clock.h"
#include "db/database.h"
#include "db/eviction.h"
#include "db/lazy_free.h"
#include "util/alloc_counter.h"

namespace vireo {
namespace {

constexpr int64_t kNow = 1'700'000'000'000;  // a realistic epoch time, in ms

TEST(AccessClockTest, LruIdleAcrossTheWrap) {
  EXPECT_EQ(LruIdleMs(LruClock(kNow), kNow), 0);
  EXPECT_EQ(LruIdleMs(LruClock(kNow - 5000), kNow), 5000);
  // A clock stamped just before the 24-bit wrap reads correctly just after it (to within the
  // second Redis's unwrapping arithmetic, which vireo keeps, loses there).
  const int64_t wrap_ms = static_cast<int64_t>(kAccessClockMax + 1) * 1000 * 100;
  EXPECT_NEAR(LruIdleMs(LruClock(wrap_ms - 3000), wrap_ms + 2000), 5000, 1000);
  // RESTORE IDLETIME: the clock for a given idle time reads it back.
  for (int64_t idle_s : {0, 1, 1000, 86400 * 100}) {
    EXPECT_EQ(LruIdleMs(LruClockForIdle(idle_s * 1000, kNow), kNow), idle_s * 1000);
  }
}

TEST(AccessClockTest, LfuIncrementIsLogarithmic) {
  AccessTracking t;
  t.lfu = true;
  uint32_t clock = NewKeyClock(t, kNow);
  EXPECT_EQ(LfuCounter(clock), kLfuInitCounter);
  for (int i = 0; i < 100; ++i) clock = TouchedClock(clock, t, kNow);
  const uint8_t after_100 = LfuCounter(clock);
  EXPECT_GT(after_100, kLfuInitCounter);
  EXPECT_LT(after_100, 30);
  for (int i = 0; i < 100000; ++i) clock = TouchedClock(clock, t, kNow);
  const uint8_t after_100k = LfuCounter(clock);
  EXPECT_GT(after_100k, after_100);
  EXPECT_LT(after_100k, 255);  // saturation takes about a million hits at factor 10
  // A factor of 0 counts every access.
  t.lfu_log_factor = 0;
  uint32_t c2 = NewKeyClock(t, kNow);
  for (int i = 0; i < 50; ++i) c2 = TouchedClock(c2, t, kNow);
  EXPECT_EQ(LfuCounter(c2), kLfuInitCounter + 50);
  EXPECT_EQ(LfuLogIncrement(255, 0, 0.0), 255);
}

TEST(AccessClockTest, LfuDecaysPerPeriod) {
  const uint32_t clock = LfuPack(LfuMinutes(kNow), 20);
  EXPECT_EQ(LfuDecayed(clock, kNow, 1), 20);
  EXPECT_EQ(LfuDecayed(clock, kNow + 5 * 60000, 1), 15);
  EXPECT_EQ(LfuDecayed(clock, kNow + 5 * 60000, 2), 18);
  EXPECT_EQ(LfuDecayed(clock, kNow + 500 * 60000, 1), 0);
  EXPECT_EQ(LfuDecayed(clock, kNow + 500 * 60000, 0), 20);  // lfu-decay-time 0: no decay
}

TEST(AccessClockTest, ValueKeepsItsClockWhenOverwritten) {
  Value v = Value::String("short");
  v.set_access_clock(0xabcdef);
  EXPECT_EQ(v.access_clock(), 0xabcdefu);
  // Every storage kind leaves the three clock bytes alone.
  for (const std::string& s : {std::string("12345"), std::string(19, 'x'), std::string(20, 'y'),
                               std::string(100, 'z')}) {
    v = Value::String(s);
    EXPECT_EQ(v.access_clock(), 0xabcdefu) << s.size();
    char scratch[24];
    EXPECT_EQ(v.StringView(scratch), s);
  }
  v.MutableString()->append("more");
  EXPECT_EQ(v.access_clock(), 0xabcdefu);
}

TEST(AccessClockTest, LookupsTouchAndNoTouchLookupsDont) {
  KeyspaceOptions options;
  Database db(0, nullptr, 42);
  db.set_options(&options);
  db.set_now_ms(kNow);
  db.Add("k", Value::String("v"));
  db.set_now_ms(kNow + 10'000);
  EXPECT_EQ(LruIdleMs(db.FindNoTouch("k")->value.access_clock(), kNow + 10'000), 10'000);
  options.access.touch = false;
  db.Find("k");
  EXPECT_EQ(LruIdleMs(db.Peek("k")->value.access_clock(), kNow + 10'000), 10'000);
  options.access.touch = true;
  db.Find("k");
  EXPECT_EQ(LruIdleMs(db.Peek("k")->value.access_clock(), kNow + 10'000), 0);
}

// A database of `keys` keys "k0", "k1"... created one second apart (k0 the idlest), and an
// LRU pool fed from it for `rounds` rounds of 5 samples, read at `read_at_ms`.
struct PoolFixture {
  PoolFixture(int keys, uint64_t seed) : db(0, nullptr, seed) {
    db.set_options(&options);
    for (int i = 0; i < keys; ++i) {
      db.set_now_ms(kNow + i * 1000);
      db.Add("k" + std::to_string(i), Value::String("v"));
    }
  }
  void Feed(int rounds, int64_t read_at_ms, uint64_t state) {
    db.set_now_ms(read_at_ms);
    auto next = [](void* s) -> uint64_t {
      return ++*static_cast<uint64_t*>(s) * 0x9e3779b97f4a7c15ULL;
    };
    for (int round = 0; round < rounds; ++round) {
      pool.Populate(db, EvictionPolicy::kAllKeysLru, 5, options.access, db.now_ms(), next,
                    &state);
    }
  }
  KeyspaceOptions options;
  Database db;
  EvictionPool pool;
};

// A pool fed with every key of a small database picks them in policy order.
TEST(EvictionPoolTest, PicksTheIdlestKeysFirst) {
  PoolFixture f(10, 7);
  f.Feed(50, kNow + 100'000, 1);
  ASSERT_EQ(f.pool.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    auto best = f.pool.PopBest();
    ASSERT_TRUE(best.has_value());
    EXPECT_EQ(best->key, "k" + std::to_string(i));
  }
  EXPECT_FALSE(f.pool.PopBest().has_value());
}

TEST(EvictionPoolTest, VolatileTtlPrefersTheNearestExpiry) {
  AccessTracking access;
  EXPECT_GT(EvictionPool::Score(EvictionPolicy::kVolatileTtl, 0, kNow + 1000, access, kNow),
            EvictionPool::Score(EvictionPolicy::kVolatileTtl, 0, kNow + 2000, access, kNow));
  access.lfu = true;
  EXPECT_GT(EvictionPool::Score(EvictionPolicy::kAllKeysLfu, LfuPack(LfuMinutes(kNow), 5), -1,
                                access, kNow),
            EvictionPool::Score(EvictionPolicy::kAllKeysLfu, LfuPack(LfuMinutes(kNow), 50), -1,
                                access, kNow));
}

TEST(EvictionPoolTest, KeepsOnlyTheBestWhenFull) {
  PoolFixture f(100, 9);
  f.Feed(500, kNow + 200'000, 3);
  EXPECT_EQ(f.pool.size(), EvictionPool::kSize);
  // After many rounds the pool holds the 16 idlest keys, best first.
  for (int i = 0; i < static_cast<int>(EvictionPool::kSize); ++i) {
    EXPECT_EQ(f.pool.PopBest()->key, "k" + std::to_string(i));
  }
}

TEST(EvictionPolicyTest, ParsesEveryName) {
  EXPECT_EQ(ParseEvictionPolicy("noeviction"), EvictionPolicy::kNoEviction);
  EXPECT_EQ(ParseEvictionPolicy("allkeys-lru"), EvictionPolicy::kAllKeysLru);
  EXPECT_EQ(ParseEvictionPolicy("volatile-ttl"), EvictionPolicy::kVolatileTtl);
  EXPECT_TRUE(IsVolatile(EvictionPolicy::kVolatileRandom));
  EXPECT_FALSE(IsVolatile(EvictionPolicy::kAllKeysRandom));
  EXPECT_TRUE(IsLfu(EvictionPolicy::kVolatileLfu));
  EXPECT_TRUE(IsRandom(EvictionPolicy::kAllKeysRandom));
}

TEST(AllocCounterTest, FollowsAllocationsAndFrees) {
  const size_t before = AllocatedBytes();
  void* p = std::malloc(1 << 20);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(AllocatedBytes(), before + (1 << 20));
  p = std::realloc(p, 2 << 20);
  EXPECT_GE(AllocatedBytes(), before + (2 << 20));
  std::free(p);
  auto big = std::make_unique<char[]>(3 << 20);
  EXPECT_GE(AllocatedBytes(), before + (3 << 20));
  big.reset();
  EXPECT_LT(AllocatedBytes(), before + (1 << 20));
}

TEST(LazyFreerTest, FreesBigValuesInTheBackgroundAndSmallOnesInPlace) {
  LazyFreer freer;
  Database doomed(0, nullptr, 1);
  freer.Free(Value::String("small"));
  freer.Drain();
  EXPECT_EQ(freer.freed_objects(), 0u);
  auto db = std::make_unique<Database>(-1, nullptr, 5);
  for (int i = 0; i < 10; ++i) db->Add("k" + std::to_string(i), Value::String("v"));
  freer.Free(std::move(db));
  freer.Drain();
  EXPECT_EQ(freer.freed_objects(), 10u);
  EXPECT_EQ(freer.pending_objects(), 0u);
}

}  // namespace
}  // namespace vireo

// Hash field TTLs in the keyspace: lazy expiry on lookup, the active cycle's queue of due
// hashes, and what the listener hears (propagation and `hexpired` hang off it).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "db/database.h"
#include "types/hash_object.h"
#include "util/clock.h"

namespace vireo {
namespace {

class FieldListener : public KeyspaceListener {
 public:
  void OnKeyModified(int, std::string_view) override {}
  void OnKeyExpired(int, std::string_view) override {}
  void OnKeyAdded(int, std::string_view) override {}
  void OnHashFieldsExpired(int, std::string_view key, std::span<const std::string> fields,
                           bool key_deleted) override {
    for (const auto& f : fields) expired.push_back(std::string(key) + "." + f);
    if (key_deleted) deleted.emplace_back(key);
  }
  std::vector<std::string> expired, deleted;
};

class HashFieldExpiryTest : public ::testing::Test {
 protected:
  void SetUp() override { db.set_now_ms(1'000'000); }
  // A hash with fields f0..f(n-1); field i expires at `base + i` when ttl_fields > i.
  DbEntry* AddHash(std::string_view key, int n, int ttl_fields, int64_t base) {
    auto h = std::make_unique<HashObject>();
    HashLimits limits;
    for (int i = 0; i < n; ++i) h->Set("f" + std::to_string(i), "v", limits);
    for (int i = 0; i < ttl_fields; ++i) h->SetFieldExpire("f" + std::to_string(i), base + i);
    return db.Add(key, Value::Object(ValueType::kHash, std::move(h)));
  }
  FieldListener listener;
  KeyspaceOptions options;  // outlives db, which may point at it
  Database db{0, &listener};
};

TEST_F(HashFieldExpiryTest, LookupDeletesDueFieldsAndEmptyHash) {
  AddHash("h", 3, 2, 1'000'100);
  db.set_now_ms(1'000'100);
  DbEntry* e = db.Find("h");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->value.As<HashObject>()->size(), 2u);
  EXPECT_EQ(listener.expired, std::vector<std::string>{"h.f0"});
  AddHash("all", 2, 2, 1'000'000);
  EXPECT_EQ(db.Find("all"), nullptr);
  EXPECT_EQ(listener.deleted, std::vector<std::string>{"all"});
  EXPECT_EQ(db.size(), 1u);
}

TEST_F(HashFieldExpiryTest, ActiveCycleVisitsOnlyDueHashes) {
  AddHash("soon", 2, 2, 1'000'010);
  AddHash("later", 2, 1, 5'000'000);
  AddHash("none", 2, 0, 0);
  EXPECT_EQ(db.CountHashesWithFieldTtls(), 2u);
  db.set_now_ms(1'000'011);
  EXPECT_EQ(db.ActiveExpireCycle(MonotonicUs() + 100000), 0u);  // keys: none expired
  EXPECT_EQ(db.size(), 2u);  // "soon" lost both fields and the key
  EXPECT_EQ(listener.deleted, std::vector<std::string>{"soon"});
  EXPECT_EQ(db.CountHashesWithFieldTtls(), 1u);
  db.set_now_ms(5'000'000);
  db.ActiveExpireCycle(MonotonicUs() + 100000);
  DbEntry* later = db.Peek("later");
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(later->value.As<HashObject>()->size(), 1u);
  EXPECT_EQ(db.CountHashesWithFieldTtls(), 0u);
}

TEST_F(HashFieldExpiryTest, BigHashIsExpiredInBoundedSteps) {
  AddHash("big", 1000, 1000, 1'000'001);
  db.set_now_ms(2'000'000);
  // Each visit takes at most 64 fields, then the hash goes back in the queue still due; the
  // cycle keeps going until the deadline, so one generous cycle finishes it.
  db.ActiveExpireCycle(MonotonicUs() + 1'000'000);
  EXPECT_EQ(db.Peek("big"), nullptr);
  EXPECT_EQ(listener.expired.size(), 1000u);
}

TEST_F(HashFieldExpiryTest, ReplicaKeepsFieldsForItsMaster) {
  options.now_ms = 2'000'000;
  options.expiry_view = ExpiryView::kReplicaMaster;
  db.set_options(&options);
  AddHash("h", 2, 2, 1'000'000);
  ASSERT_NE(db.Find("h"), nullptr);
  db.ActiveExpireCycle(MonotonicUs() + 100000);
  EXPECT_EQ(db.Peek("h")->value.As<HashObject>()->size(), 2u);
  EXPECT_TRUE(listener.expired.empty());
}

}  // namespace
}  // namespace vireo

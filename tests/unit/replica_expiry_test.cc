// Expiry as a replica sees it (ExpiryView): keys past their TTL stay until the master's DEL.
#include <gtest/gtest.h>

#include <string>

#include "db/database.h"

namespace vireo {
namespace {

class ReplicaExpiryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options.now_ms = 1'000'000;
    db.set_options(&options);
    DbEntry* e = db.Add("k", Value::String("v"));
    db.SetExpire(e, 1'000'100);
    options.now_ms = 1'000'200;  // past the TTL
  }
  KeyspaceOptions options;
  Database db{0, nullptr};
};

TEST_F(ReplicaExpiryTest, ClientsSeeNothingButTheKeyStays) {
  options.expiry_view = ExpiryView::kReplicaClient;
  EXPECT_EQ(db.Find("k"), nullptr);
  EXPECT_EQ(db.size(), 1u);
  EXPECT_TRUE(db.IsLogicallyExpired("k"));
}

TEST_F(ReplicaExpiryTest, TheMastersCommandsSeeTheKeyAsStored) {
  options.expiry_view = ExpiryView::kReplicaMaster;
  ASSERT_NE(db.Find("k"), nullptr);
  EXPECT_TRUE(db.Delete("k"));  // the master's DEL
  EXPECT_EQ(db.size(), 0u);
}

TEST_F(ReplicaExpiryTest, NoActiveExpiryOnAReplica) {
  options.expiry_view = ExpiryView::kReplicaClient;
  EXPECT_EQ(db.ActiveExpireCycle(INT64_MAX), 0u);
  EXPECT_EQ(db.size(), 1u);
  options.expiry_view = ExpiryView::kMaster;
  EXPECT_EQ(db.ActiveExpireCycle(INT64_MAX), 1u);
  EXPECT_EQ(db.size(), 0u);
}

TEST_F(ReplicaExpiryTest, AWritableReplicasWriteReplacesTheExpiredKey) {
  options.expiry_view = ExpiryView::kReplicaClient;
  ASSERT_EQ(db.Find("k"), nullptr);
  DbEntry* e = db.Add("k", Value::String("new"));
  EXPECT_EQ(db.size(), 1u);
  EXPECT_EQ(db.GetExpire(e), -1);
  EXPECT_EQ(db.Find("k"), e);
}

TEST_F(ReplicaExpiryTest, AMasterDeletesOnAccess) {
  EXPECT_EQ(db.Find("k"), nullptr);
  EXPECT_EQ(db.size(), 0u);
}

}  // namespace
}  // namespace vireo

#include "cluster/cluster_state.h"

#include <gtest/gtest.h>

#include "core/config.h"

namespace vireo::cluster {
namespace {

class ClusterStateTest : public ::testing::Test {
 protected:
  ClusterStateTest() {
    config_.cluster_node_timeout = 1000;
    state_.CreateMyself();
  }
  void AddAll(ClusterNode* node) {
    for (int s = 0; s < kSlotCount; ++s) state_.AddSlot(node, s);
  }

  ServerConfig config_;
  ClusterState state_{&config_};
};

TEST_F(ClusterStateTest, FreshNodeIsAMasterWithARandomId) {
  ClusterNode* me = state_.myself();
  EXPECT_EQ(me->name.size(), kNodeIdLen);
  EXPECT_EQ(me->shard_id.size(), kNodeIdLen);
  EXPECT_NE(me->name, me->shard_id);
  EXPECT_TRUE(me->is_master());
  EXPECT_TRUE(me->has(kNodeMyself));
  EXPECT_EQ(state_.Lookup(me->name), me);
  EXPECT_FALSE(state_.ok());
}

TEST_F(ClusterStateTest, OkOnlyAfterTheWritableAndRejoinDelays) {
  state_.UpdateState(10000);  // first check: the writable delay starts
  AddAll(state_.myself());
  state_.UpdateState(11000);
  EXPECT_FALSE(state_.ok());  // within 2 s of the first check
  state_.DelSlot(0);
  config_.cluster_require_full_coverage = false;
  state_.DelNodeSlots(state_.myself());
  state_.UpdateState(12100);  // no master serves slots: a "minority"
  EXPECT_FALSE(state_.ok());
  config_.cluster_require_full_coverage = true;
  AddAll(state_.myself());
  // The rejoin delay (node timeout clamped to [500, 5000] ms) runs from the last minority.
  state_.UpdateState(12600);
  EXPECT_FALSE(state_.ok());
  state_.UpdateState(13200);
  EXPECT_TRUE(state_.ok());
  EXPECT_EQ(state_.size(), 1);
  // One uncovered slot turns it down at once, unless full coverage is not required.
  state_.DelSlot(100);
  state_.UpdateState(13700);
  EXPECT_FALSE(state_.ok());
  config_.cluster_require_full_coverage = false;
  state_.UpdateState(20000);
  EXPECT_TRUE(state_.ok());
}

TEST_F(ClusterStateTest, RoutingFollowsTheSlotTable) {
  ClusterNode* other = state_.AddNode("", kNodeMaster);
  other->ip = "10.0.0.2";
  other->tcp_port = 7001;
  other->hostname = "b.example";
  state_.AddSlot(state_.myself(), 1);
  state_.AddSlot(other, 2);
  EXPECT_EQ(state_.Owner(0), SlotOwner::kUnassigned);
  EXPECT_EQ(state_.Owner(1), SlotOwner::kMyself);
  EXPECT_EQ(state_.Owner(2), SlotOwner::kOther);
  EXPECT_EQ(state_.MovedEndpoint(2), "10.0.0.2:7001");
  config_.cluster_preferred_endpoint_type = "hostname";
  EXPECT_EQ(state_.MovedEndpoint(2), "b.example:7001");
  config_.cluster_preferred_endpoint_type = "unknown-endpoint";
  EXPECT_EQ(state_.MovedEndpoint(2), ":7001");
  config_.cluster_preferred_endpoint_type = "ip";
  state_.set_migrating_to(1, other);
  EXPECT_EQ(state_.MigratingEndpoint(1), "10.0.0.2:7001");
  EXPECT_EQ(state_.MigratingEndpoint(2), "");
  state_.set_importing_from(3, other);
  EXPECT_TRUE(state_.Importing(3));
  // A replica reads its master's slots.
  ClusterNode* me = state_.myself();
  state_.DelSlot(1);
  state_.SetMyMaster(other);
  EXPECT_TRUE(me->is_replica());
  EXPECT_EQ(me->shard_id, other->shard_id);
  EXPECT_EQ(state_.Owner(2), SlotOwner::kMyMaster);
  EXPECT_EQ(state_.migrating_to(1), nullptr);  // a master turned replica closes its slots
  EXPECT_EQ(other->replicas.size(), 1u);
}

TEST_F(ClusterStateTest, DeletingANodeReleasesEverythingItHeld) {
  ClusterNode* other = state_.AddNode("", kNodeMaster);
  ClusterNode* replica = state_.AddNode("", kNodeReplica);
  replica->master = other;
  state_.AddReplica(other, replica);
  state_.AddSlot(other, 7);
  state_.set_importing_from(8, other);
  state_.myself()->fail_reports.push_back({other, 1});
  std::string name = other->name;
  state_.DeleteNode(other);
  EXPECT_EQ(state_.Lookup(name), nullptr);
  EXPECT_EQ(state_.OwnerOf(7), nullptr);
  EXPECT_EQ(state_.importing_from(8), nullptr);
  EXPECT_TRUE(state_.myself()->fail_reports.empty());
  EXPECT_EQ(replica->master, nullptr);
}

TEST_F(ClusterStateTest, BumpEpochOnlyWhenNotAlreadyTheGreatest) {
  EXPECT_TRUE(state_.BumpEpochWithoutConsensus());
  EXPECT_EQ(state_.myself()->config_epoch, 1u);
  EXPECT_EQ(state_.current_epoch(), 1u);
  EXPECT_FALSE(state_.BumpEpochWithoutConsensus());
  ClusterNode* other = state_.AddNode("", kNodeMaster);
  other->config_epoch = 5;
  EXPECT_TRUE(state_.BumpEpochWithoutConsensus());
  EXPECT_EQ(state_.myself()->config_epoch, 2u);  // current epoch + 1, not max + 1
  EXPECT_NE(state_.todo() & kTodoSaveConfig, 0u);
}

TEST_F(ClusterStateTest, ResetSoftKeepsTheIdentityHardDoesNot) {
  ClusterNode* other = state_.AddNode("", kNodeMaster);
  state_.AddSlot(state_.myself(), 1);
  state_.AddSlot(other, 2);
  state_.set_current_epoch(4);
  state_.myself()->config_epoch = 3;
  const std::string name = state_.myself()->name;
  state_.Reset(false);
  EXPECT_EQ(state_.node_count(), 1u);
  EXPECT_EQ(state_.myself()->num_slots, 0);
  EXPECT_EQ(state_.myself()->name, name);
  EXPECT_EQ(state_.current_epoch(), 4u);
  state_.Reset(true);
  EXPECT_NE(state_.myself()->name, name);
  EXPECT_EQ(state_.Lookup(state_.myself()->name), state_.myself());
  EXPECT_EQ(state_.current_epoch(), 0u);
  EXPECT_EQ(state_.myself()->config_epoch, 0u);
}

TEST_F(ClusterStateTest, ForgottenNodesStayOutForAMinute) {
  state_.BlacklistAdd("abc", 100);
  EXPECT_TRUE(state_.BlacklistContains("abc", 100));
  EXPECT_TRUE(state_.BlacklistContains("abc", 160));
  EXPECT_FALSE(state_.BlacklistContains("abc", 161));
}

TEST_F(ClusterStateTest, HandshakeValidatesAndDeduplicates) {
  using R = ClusterState::HandshakeResult;
  EXPECT_EQ(state_.StartHandshake("not-an-ip", 7000, 17000, false, 0), R::kInvalid);
  EXPECT_EQ(state_.StartHandshake("127.0.0.1", 0, 17000, false, 0), R::kInvalid);
  EXPECT_EQ(state_.StartHandshake("127.0.0.1", 7000, 70000, false, 0), R::kInvalid);
  EXPECT_EQ(state_.StartHandshake("127.0.0.1", 7000, 17000, false, 0), R::kStarted);
  EXPECT_EQ(state_.StartHandshake("127.0.0.1", 7000, 17000, false, 0), R::kInProgress);
  EXPECT_EQ(state_.StartHandshake("::0:1", 7000, 17000, false, 500), R::kStarted);
  EXPECT_EQ(state_.node_count(), 3u);
  // Unanswered handshakes go after node-timeout, at least 1 s.
  EXPECT_EQ(state_.ExpireHandshakes(1000), 0);
  EXPECT_EQ(state_.ExpireHandshakes(1001), 1);
  EXPECT_EQ(state_.ExpireHandshakes(1501), 1);
  EXPECT_EQ(state_.node_count(), 1u);
}

TEST_F(ClusterStateTest, TakeoverClaimsTheMastersSlots) {
  ClusterNode* master = state_.AddNode("", kNodeMaster);
  state_.AddSlot(master, 10);
  state_.AddSlot(master, 11);
  state_.SetMyMaster(master);
  state_.ReplaceMyMaster();
  EXPECT_TRUE(state_.myself()->is_master());
  EXPECT_EQ(state_.OwnerOf(10), state_.myself());
  EXPECT_EQ(master->num_slots, 0);
  EXPECT_TRUE(master->replicas.empty());
}

TEST_F(ClusterStateTest, SlotRangesAreMaximalRuns) {
  for (int s : {0, 1, 2, 5, 16383}) state_.AddSlot(state_.myself(), s);
  auto ranges = state_.SlotRanges(*state_.myself());
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0], std::make_pair(0, 2));
  EXPECT_EQ(ranges[1], std::make_pair(5, 5));
  EXPECT_EQ(ranges[2], std::make_pair(16383, 16383));
}

TEST_F(ClusterStateTest, FailureReportsCountOncePerReporterAndExpire) {
  ClusterNode* target = state_.AddNode("", kNodeMaster);
  ClusterNode* a = state_.AddNode("", kNodeMaster);
  ClusterNode* b = state_.AddNode("", kNodeMaster);
  EXPECT_TRUE(state_.AddFailureReport(target, a, 1000));
  EXPECT_FALSE(state_.AddFailureReport(target, a, 1500));  // refreshed, not added
  EXPECT_TRUE(state_.AddFailureReport(target, b, 1600));
  EXPECT_EQ(target->fail_reports.size(), 2u);
  // Valid for twice the node timeout (1000 ms here) from the report's time.
  state_.CleanupFailureReports(target, 3550);
  EXPECT_EQ(target->fail_reports.size(), 1u);
  EXPECT_EQ(target->fail_reports[0].reporter, b);
  // A reporter that goes away takes its reports along; deleting a missing one is false.
  state_.DeleteNode(b);
  EXPECT_TRUE(target->fail_reports.empty());
  EXPECT_FALSE(state_.DelFailureReport(target, a));
}

TEST_F(ClusterStateTest, HooksSeeDeletedNodesAndUnassignedSlots) {
  std::vector<std::string> deleted;
  std::vector<std::pair<int, ClusterNode*>> unassigned;
  state_.before_delete_node = [&](ClusterNode* n) { deleted.push_back(n->name); };
  state_.on_slot_unassigned = [&](int slot, ClusterNode* owner) {
    unassigned.emplace_back(slot, owner);
  };
  ClusterNode* other = state_.AddNode("", kNodeMaster);
  const std::string name = other->name;
  state_.AddSlot(other, 7);
  state_.AddSlot(state_.myself(), 8);
  state_.DelSlot(8);
  state_.DeleteNode(other);
  ASSERT_EQ(deleted, std::vector<std::string>{name});
  ASSERT_EQ(unassigned.size(), 2u);
  EXPECT_EQ(unassigned[0], std::make_pair(8, state_.myself()));
  EXPECT_EQ(unassigned[1].first, 7);
}

}  // namespace
}  // namespace vireo::cluster

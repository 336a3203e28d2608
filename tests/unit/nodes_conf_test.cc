#include "cluster/nodes_conf.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config.h"

namespace vireo::cluster {
namespace {

constexpr char kA[] = "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca";
constexpr char kB[] = "67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1";
constexpr char kC[] = "292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f";
constexpr char kShardA[] = "d29ae7b6b56c8bd2c3d6b2f8ea2d0f6c9c2b6a11";
constexpr char kShardB[] = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c";

// A file as Redis 7.2 writes it: myself a master with slots and an open migration, a replica
// of it, and another master with a hostname and human nodename.
std::string RedisFile() {
  std::ostringstream f;
  f << kB << " 127.0.0.1:30002@40002,,tls-port=0,shard-id=" << kShardA << " slave " << kA
    << " 0 1700000001000 3 connected\n";
  f << kA << " 127.0.0.1:30001@40001,,tls-port=0,shard-id=" << kShardA
    << " myself,master - 0 1700000000000 3 connected 0-5460 5462 [5461->-" << kC << "]\n";
  f << kC << " 127.0.0.1:30003@40003,node3.example,tls-port=0,nodename=n3,shard-id=" << kShardB
    << " master - 0 1700000002000 2 connected 5461 5463-16383\n";
  f << "vars currentEpoch 7 lastVoteEpoch 5\n";
  return f.str();
}

class NodesConfTest : public ::testing::Test {
 protected:
  ServerConfig config_;
  ClusterState state_{&config_};
};

TEST_F(NodesConfTest, ParsesARedisFile) {
  std::string error;
  ASSERT_TRUE(ParseNodesConf(RedisFile(), &state_, 42, &error)) << error;
  ASSERT_NE(state_.myself(), nullptr);
  EXPECT_EQ(state_.myself()->name, kA);
  EXPECT_EQ(state_.current_epoch(), 7u);
  EXPECT_EQ(state_.last_vote_epoch(), 5u);
  EXPECT_EQ(state_.node_count(), 3u);
  const ClusterNode* a = state_.Lookup(kA);
  const ClusterNode* b = state_.Lookup(kB);
  const ClusterNode* c = state_.Lookup(kC);
  EXPECT_TRUE(a->is_master());
  EXPECT_EQ(a->config_epoch, 3u);
  EXPECT_EQ(a->num_slots, 5462);
  EXPECT_EQ(a->ip, "127.0.0.1");
  EXPECT_EQ(a->tcp_port, 30001);
  EXPECT_EQ(a->cport, 40001);
  EXPECT_EQ(a->pong_received, 42);  // an outstanding time becomes "now"
  EXPECT_TRUE(b->is_replica());
  EXPECT_EQ(b->master, a);
  EXPECT_EQ(b->config_epoch, 0u);  // a replica's own epoch; the line shows its master's
  EXPECT_EQ(b->shard_id, kShardA);
  ASSERT_EQ(a->replicas.size(), 1u);
  EXPECT_EQ(c->hostname, "node3.example");
  EXPECT_EQ(c->human_nodename, "n3");
  EXPECT_EQ(c->shard_id, kShardB);
  EXPECT_EQ(state_.OwnerOf(5461), c);
  EXPECT_EQ(state_.OwnerOf(5462), a);
  EXPECT_EQ(state_.migrating_to(5461), c);
  EXPECT_EQ(state_.Owner(0), SlotOwner::kMyself);
  EXPECT_EQ(state_.Owner(6000), SlotOwner::kOther);
  EXPECT_EQ(state_.MovedEndpoint(6000), "127.0.0.1:30003");
}

TEST_F(NodesConfTest, WritesWhatItReads) {
  std::string error;
  ASSERT_TRUE(ParseNodesConf(RedisFile(), &state_, 42, &error)) << error;
  std::string text = NodesConfText(state_);
  ServerConfig config2;
  ClusterState again(&config2);
  ASSERT_TRUE(ParseNodesConf(text, &again, 42, &error)) << error;
  EXPECT_EQ(NodesConfText(again), text);
  // Lines in Redis 7.2's exact form (nodes in id order).
  std::string a_line = std::string(kA) + " 127.0.0.1:30001@40001,,tls-port=0,shard-id=" + kShardA +
                       " myself,master - 0 42 3 connected 0-5460 5462 [5461->-" + kC + "]\n";
  EXPECT_NE(text.find(a_line), std::string::npos) << text;
  std::string c_line =
      std::string(kC) +
      " 127.0.0.1:30003@40003,node3.example,tls-port=0,nodename=n3,shard-id=" + kShardB +
      " master - 0 42 2 disconnected 5461 5463-16383\n";
  EXPECT_NE(text.find(c_line), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("vars currentEpoch 7 lastVoteEpoch 5\n"));
  // CLUSTER NODES has no aux fields; the replica shows its master's epoch.
  std::string b_nodes = NodeDescription(state_, *state_.Lookup(kB), false, false);
  EXPECT_EQ(b_nodes,
            std::string(kB) + " 127.0.0.1:30002@40002 slave " + kA + " 0 42 3 disconnected");
  std::string c_nodes = NodeDescription(state_, *state_.Lookup(kC), false, false);
  EXPECT_EQ(c_nodes, std::string(kC) + " 127.0.0.1:30003@40003,node3.example master - 0 42 2 " +
                         "disconnected 5461 5463-16383");
}

TEST_F(NodesConfTest, ReadsOlderFormats) {
  // Redis 6: no aux fields, no @cport; the replica follows its master's (random) shard id.
  std::ostringstream f;
  f << kA << " 10.0.0.1:7000 myself,master - 0 0 1 connected 0-16383\n";
  f << kB << " 10.0.0.2:7001@17001 slave " << kA << " 0 0 1 connected\n";
  f << "vars currentEpoch 1 lastVoteEpoch 0\n";
  std::string error;
  ASSERT_TRUE(ParseNodesConf(f.str(), &state_, 1, &error)) << error;
  EXPECT_EQ(state_.myself()->cport, 17000);
  EXPECT_EQ(state_.Lookup(kB)->shard_id, state_.myself()->shard_id);
  EXPECT_TRUE(state_.myself()->num_slots == kSlotCount);
}

TEST_F(NodesConfTest, CurrentEpochIsAtLeastTheGreatestConfigEpoch) {
  std::string text = std::string(kA) + " :7000@17000 myself,master - 0 0 9 connected\n" +
                     "vars currentEpoch 2 lastVoteEpoch 0\n";
  std::string error;
  ASSERT_TRUE(ParseNodesConf(text, &state_, 1, &error)) << error;
  EXPECT_EQ(state_.current_epoch(), 9u);
}

TEST_F(NodesConfTest, CorruptFilesNameTheLine) {
  const std::string good = std::string(kA) + " :7000@17000 myself,master - 0 0 0 connected\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good + "garbage line\n", "line 2"},
      {good + std::string(kB) + " :7001@17001 master - 0 0 0 connected 0-99999\n", "line 2"},
      {good + std::string(kB) + " :7001@17001 bogusflag - 0 0 0 connected\n", "line 2"},
      {"tooshortid :7000@17000 myself,master - 0 0 0 connected\n", "line 1"},
      {good + std::string(kB) + " :7001@17001,,color=blue master - 0 0 0 connected\n", "line 2"},
      {good + std::string(kB) + " nocolon master - 0 0 0 connected\n", "line 2"},
      {good + "vars currentEpoch\n", "line 2"},
      {good + std::string(kB) + " :7001@17001 myself,master - 0 0 0 connected\n", "line 2"},
      {good + std::string(kB) + " :7001@17001 master - 0 0 0 connected [5->-short]\n", "line 2"},
  };
  for (const auto& [text, where] : cases) {
    ServerConfig config;
    ClusterState state(&config);
    std::string error;
    EXPECT_FALSE(ParseNodesConf(text, &state, 1, &error)) << text;
    EXPECT_NE(error.find(where), std::string::npos) << error;
  }
  // No myself at all.
  std::string error;
  EXPECT_FALSE(ParseNodesConf(std::string(kA) + " :7000@17000 master - 0 0 0 connected\n", &state_,
                              1, &error));
  EXPECT_NE(error.find("myself"), std::string::npos);
}

TEST_F(NodesConfTest, BlankLinesAreSkipped) {
  std::string text = "\n" + std::string(kA) + " :7000@17000 myself,master - 0 0 0 connected\n\n";
  std::string error;
  EXPECT_TRUE(ParseNodesConf(text, &state_, 1, &error)) << error;
}

TEST_F(NodesConfTest, AtomicWriteAndLoad) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("vireo-nodes-conf-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "nodes.conf").string();
  std::string error;
  EXPECT_EQ(LoadNodesConf(path, &state_, 1, &error), LoadResult::kMissing);
  { std::ofstream(path).flush(); }  // an empty file is treated as missing too
  EXPECT_EQ(LoadNodesConf(path, &state_, 1, &error), LoadResult::kMissing);
  ASSERT_TRUE(ParseNodesConf(RedisFile(), &state_, 42, &error)) << error;
  EXPECT_EQ(WriteNodesConf(path, NodesConfText(state_), true), "");
  ServerConfig config2;
  ClusterState loaded(&config2);
  EXPECT_EQ(LoadNodesConf(path, &loaded, 42, &error), LoadResult::kLoaded) << error;
  EXPECT_EQ(NodesConfText(loaded), NodesConfText(state_));
  // No temp file is left behind.
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1u);
  { std::ofstream(path) << "not a nodes file\n"; }
  ClusterState broken(&config2);
  EXPECT_EQ(LoadNodesConf(path, &broken, 1, &error), LoadResult::kError);
  EXPECT_NE(error.find("corrupted cluster config file"), std::string::npos);
  EXPECT_NE(error.find("line 1"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vireo::cluster

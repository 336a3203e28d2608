// Replication against a fake host: the master side's operations (PSYNC from the backlog, the
// stream to replicas, ACKs, ROLE, FAILOVER's checks) need nothing of a real server.
#include "replication/replication.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "db/database.h"
#include "security/tls.h"

namespace vireo {
namespace {

class FakeHost : public ReplicationHost {
 public:
  struct Client {
    std::string addr;
    std::string output;
    bool replica = false;
    bool closed = false;
    bool held = false;
  };
  std::map<uint64_t, Client> clients;
  int full_syncs = 0;
  int partial_ok = 0;
  int partial_err = 0;
  bool paused_for_failover = false;

  Client* Find(uint64_t id) {
    auto it = clients.find(id);
    return it == clients.end() ? nullptr : &it->second;
  }

  bool ClientExists(uint64_t id) override { return Find(id) != nullptr; }
  bool ClientOpen(uint64_t id) override { return Find(id) != nullptr && !Find(id)->closed; }
  std::string ClientAddress(uint64_t id) override { return Find(id) ? Find(id)->addr : ""; }
  int ClientSocket(uint64_t) override { return -1; }
  TlsSession* ClientTls(uint64_t) override { return nullptr; }
  size_t ClientOutputMemory(uint64_t id) override {
    return Find(id) ? Find(id)->output.size() : 0;
  }
  int ClientDb(uint64_t) override { return 0; }
  int64_t ClientLastInteractionMs(uint64_t) override { return 0; }
  size_t ClientUnreadInput(uint64_t) override { return 0; }
  void SendToClient(uint64_t id, std::string_view bytes) override {
    if (Client* c = Find(id)) c->output.append(bytes);
  }
  void CloseClientNow(uint64_t id) override {
    if (Client* c = Find(id)) c->closed = true;
  }
  void CloseClientAfterReply(uint64_t id) override { CloseClientNow(id); }
  void MarkReplicaClient(uint64_t id) override {
    if (Client* c = Find(id)) c->replica = true;
  }
  void HoldClientOutput(uint64_t id, bool held) override {
    if (Client* c = Find(id)) c->held = held;
  }
  void SetClientBulkPending(uint64_t, bool) override {}
  void RerunBlockedClient(uint64_t) override {}
  void UnblockClientsForRoleChange() override {}
  void WatchLinkSocket(int, uint32_t) override {}
  void UnwatchLinkSocket(int) override {}
  void WatchSnapshotPipe(int, bool) override {}
  std::unique_ptr<TlsSession> ConnectTls(int) override { return nullptr; }
  uint64_t AdoptMasterConnection(int, std::unique_ptr<TlsSession>, int) override { return 0; }
  void InjectClientInput(uint64_t, std::string_view) override {}
  int ListeningPort() override { return 0; }
  void LoadingStarted(bool, int64_t) override {}
  void LoadingProgressed(int64_t) override {}
  void LoadingEnded() override {}
  void ServeClientsWhileLoading(int, int) override {}
  bool ShuttingDown() override { return false; }
  size_t TotalKeys() override { return 0; }
  void FlushAllData(bool) override {}
  std::vector<std::unique_ptr<Database>> NewDetachedDatabases() override { return {}; }
  void SwapInLoadedData(std::vector<std::unique_ptr<Database>>&,
                        const std::vector<std::string>&) override {}
  void DiscardDatabases(std::vector<std::unique_ptr<Database>>) override {}
  void MarkDirty(uint64_t) override {}
  void SetExpiryView(ExpiryView) override {}
  bool AofOn() override { return false; }
  int64_t AofFsyncedOffset() override { return -1; }
  bool AofLoadedAtStartup() override { return false; }
  std::string RdbFilePath() override { return "dump.rdb"; }
  std::string SaveRdbFile(const std::string&, const RdbSaveOptions&) override { return "no"; }
  std::string SaveRdbToSink(const RdbSaveOptions&) override { return "no"; }
  std::string LoadRdbFile(const std::string&, const RdbLoadOptions&, RdbLoadStats*) override {
    return "no";
  }
  std::string LoadRdbFromSource(RdbByteSource, const RdbLoadOptions&, RdbLoadStats*) override {
    return "no";
  }
  void KillRdbChild() override {}
  void CountFullSync() override { ++full_syncs; }
  void CountPartialSync(bool accepted) override { ++(accepted ? partial_ok : partial_err); }
  void CountReplicationOutput(uint64_t) override {}
  void PauseWritesForFailover(bool on) override { paused_for_failover = on; }
  bool ReplicationStreamPaused() override { return false; }
};

class ReplicationTest : public ::testing::Test {
 protected:
  SyncRequest Psync(uint64_t id, std::string_view replid) {
    SyncRequest request;
    request.client_id = id;
    request.client_addr = host.clients[id].addr;
    request.psync = true;
    request.replid = replid;
    return request;
  }

  FakeHost host;
  Config config;
  ChildProcesses children;
  std::mt19937_64 rng{42};
  Replication replication{host, config, children, rng};
};

TEST_F(ReplicationTest, PsyncContinuesFromTheBacklogAndStreams) {
  replication.buffer().Create(1024);
  replication.FeedStream("abc");
  host.clients[7].addr = "10.0.0.5:4000";
  replication.ReplicaSettings(7).capa_psync2 = true;
  replication.ReplicaSettings(7).listening_port = 6380;
  SyncRequest request = Psync(7, replication.replid());
  ASSERT_EQ(replication.SyncRefusal(request), "");
  replication.Sync(request, 2);
  EXPECT_EQ(host.partial_ok, 1);
  EXPECT_TRUE(host.clients[7].replica);
  EXPECT_EQ(host.clients[7].output, "+CONTINUE " + replication.replid() + "\r\n");
  // The missing bytes follow the reply from the shared buffer, as the server's write path
  // reads them.
  std::string stream;
  replication.ReadReplicaStream(7, SIZE_MAX, &stream);
  EXPECT_EQ(stream, "bc");
  // Online: the stream goes on to it.
  replication.FeedStream("de");
  stream.clear();
  replication.ReadReplicaStream(7, SIZE_MAX, &stream);
  EXPECT_EQ(stream, "de");
  EXPECT_EQ(replication.master_repl_offset(), 5);

  // ROLE shows it with its peer IP and announced port, at the offset it acknowledged.
  EXPECT_EQ(replication.ReplicasAckedAtLeast(5), 0);
  replication.Ack(7, 5, std::nullopt);
  EXPECT_EQ(replication.ReplicasAckedAtLeast(5), 1);
  RoleInfo role = replication.Role();
  EXPECT_FALSE(role.replica);
  EXPECT_EQ(role.master_offset, 5);
  ASSERT_EQ(role.replicas.size(), 1u);
  EXPECT_EQ(role.replicas[0].ip, "10.0.0.5");
  EXPECT_EQ(role.replicas[0].port, 6380);
  EXPECT_EQ(role.replicas[0].ack_offset, 5);

  // Gone: forgotten.
  replication.OnClientClosed(7, "10.0.0.5:4000");
  EXPECT_TRUE(replication.replicas().empty());
}

TEST_F(ReplicationTest, AnUnknownHistoryGetsAFullResyncThatWaitsForTheDisklessDelay) {
  config.values().repl_diskless_sync = true;
  config.values().repl_diskless_sync_delay = 5;
  host.clients[3].addr = "127.0.0.1:5000";
  replication.ReplicaSettings(3).capa_eof = true;
  SyncRequest request = Psync(3, "0123456789012345678901234567890123456789");
  ASSERT_EQ(replication.SyncRefusal(request), "");
  replication.Sync(request, 1);
  EXPECT_EQ(host.partial_err, 1);
  EXPECT_EQ(host.full_syncs, 1);
  EXPECT_TRUE(replication.buffer().created());
  ASSERT_NE(replication.FindReplica(3), nullptr);
  EXPECT_EQ(replication.FindReplica(3)->phase, ReplicaState::Phase::kWaitBgsaveStart);
  // Until its snapshot starts it gets nothing of the stream.
  replication.FeedStream("xyz");
  EXPECT_EQ(host.clients[3].output, "");
  EXPECT_EQ(replication.ReplicaStreamUnread(3), 0u);
}

TEST_F(ReplicationTest, RefusalsAndFailoverChecks) {
  host.clients[1].addr = "127.0.0.1:1";
  SyncRequest request = Psync(1, "?");
  request.pending_output = 3;
  EXPECT_EQ(replication.SyncRefusal(request), "ERR SYNC and PSYNC are invalid with pending output");
  EXPECT_EQ(replication.Failover({}), "ERR FAILOVER requires connected replicas.");
  FailoverRequest abort;
  abort.abort = true;
  EXPECT_EQ(replication.Failover(abort), "ERR No failover in progress.");
  EXPECT_FALSE(host.paused_for_failover);
}

TEST(ReplicaAddress, AnnouncedIpElseThePeersIp) {
  ReplicaState replica;
  EXPECT_EQ(ReplicaAddress("[::1]:6379", replica), "::1");
  EXPECT_EQ(ReplicaAddress("10.1.2.3:6379", replica), "10.1.2.3");
  replica.announced_ip = "example";
  EXPECT_EQ(ReplicaAddress("10.1.2.3:6379", replica), "example");
}

}  // namespace
}  // namespace vireo

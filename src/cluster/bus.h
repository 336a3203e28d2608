// The cluster bus engine: the connections on port + 10000 and what Redis Cluster does with
// them. It speaks the Redis 7 bus (bus_message.h) with vireo and Redis nodes alike: handshakes
// (MEET), PING/PONG with gossip and the 7.x extensions, failure detection (PFAIL by timeout,
// FAIL by a majority of masters' reports), slot ownership settled by config epochs (UPDATE,
// epoch collisions), replica elections (FAILOVER_AUTH_REQUEST/ACK), manual failover (MFSTART),
// replica migration to orphaned masters, and PUBLISH/PUBLISHSHARD forwarding.
//
// Sockets are non-blocking and sit in the server's epoll set (tag kTag | link id); everything
// runs on the server's loop. The node table and slot map are ClusterState's; this class owns the
// links and the election and manual-failover state, and tells its host (bus_host.h) what to do
// about replication, keys and subscribers.
#ifndef VIREO_CLUSTER_BUS_H_
#define VIREO_CLUSTER_BUS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/bus_host.h"
#include "cluster/bus_link.h"
#include "cluster/bus_message.h"
#include "cluster/cluster_state.h"
#include "security/tls.h"

namespace vireo::cluster {

// One TCP connection of the bus. Outbound links are ours to a node (node->link); inbound ones
// were accepted and learn their node from the first message (node->inbound_link). With
// tls-cluster yes every link carries a TlsSession: nothing is sent or read as a message until
// its handshake is done.
class BusLink {
 public:
  uint64_t id = 0;
  int fd = -1;
  bool inbound = false;
  bool connected = false;  // outbound: the non-blocking connect finished
  bool dead = false;       // closed; freed after the current event
  ClusterNode* node = nullptr;
  int64_t ctime = 0;
  std::string peer_ip;
  ClusterBusLink reader;
  std::string out;
  size_t out_sent = 0;
  bool watching_write = false;
  std::unique_ptr<TlsSession> tls;  // tls-cluster yes; nullptr on the plain bus

  // Messages may flow: connected, and the TLS handshake (if any) done.
  bool ready() const { return connected && (tls == nullptr || tls->handshake_done()); }
};

class ClusterBus {
 public:
  // epoll tag bit of bus sockets; the low bits are a link or listener id.
  static constexpr uint64_t kTag = 1ull << 60;

  ClusterBus(BusHost& host, ClusterState& state);
  ~ClusterBus();
  ClusterBus(const ClusterBus&) = delete;
  ClusterBus& operator=(const ClusterBus&) = delete;

  // The server hosting the bus: CLUSTER commands that change myself's role reach replication
  // and nodes.conf through it, as the bus does.
  BusHost& host() { return host_; }

  // Listens on `port` at every address of `binds` (a leading '-' marks an optional one).
  std::string Listen(const std::vector<std::string>& binds, int port);
  void OnSocketEvent(uint64_t id, uint32_t events);
  // Every 100 ms: connects, pings, failure detection, elections, replica migration.
  void Cron();
  // Before the loop sleeps: an election or manual failover that can move now.
  void BeforeSleep();

  // PUBLISH goes to every node; SPUBLISH to the other nodes of this shard.
  void Publish(std::string_view channel, std::string_view message, bool shard);
  // CLUSTER FAILOVER [FORCE] on a replica: a manual failover (FORCE skips the master's
  // agreement on the offset).
  void StartManualFailover(bool force);
  // CLUSTER FAILOVER TAKEOVER / a lost master: tell everyone our new slots now.
  void BroadcastPong();
  // CLUSTER FORGET: the next pings carry the forgotten node for others to drop.
  void Forget(const std::string& name);
  // CLUSTER RESET: abort a manual failover, forget the election.
  void Reset();

  // DEBUG DROP-CLUSTER-PACKET-FILTER: every incoming message of this type (Redis's numbering,
  // BusType) is counted and then ignored, so tests can cut one kind of traffic (-1: none).
  void set_drop_packet_filter(int64_t type) { drop_packet_filter_ = type; }
  // DEBUG CLOSE-CLUSTER-LINK-ON-PACKET-DROP: a dropped message also frees the link carrying it.
  void set_close_link_on_packet_drop(bool on) { close_link_on_packet_drop_ = on; }
  // DEBUG CLUSTERLINK KILL: frees the link to `node` (ours, `to`) and/or the one it opened to
  // us (`from`); the cron (ours or the peer's) connects again.
  void KillLinks(ClusterNode* node, bool to, bool from);

  struct LinkInfo {
    bool inbound;
    std::string node;
    int64_t create_time;
    uint32_t events;  // 'r' / 'w' interest
    size_t send_buffer_allocated;
    size_t send_buffer_used;
  };
  std::vector<LinkInfo> Links() const;
  // INFO / CLUSTER INFO: the total links' output buffers.
  size_t links_memory() const;

 private:
  BusLink* NewLink(int fd, bool inbound, int64_t now);
  void FreeLink(BusLink* link);
  void ReapDeadLinks();
  void Connect(ClusterNode* node, int64_t now);
  void OnConnected(BusLink* link);
  // tls-cluster: starts (StartTls) and advances (ContinueTls) a link's handshake.
  void StartTls(BusLink* link);
  void ContinueTls(BusLink* link);
  // Frees links whose TLS handshake has not finished within the timeout (from Cron).
  void ExpireTlsHandshakes(int64_t now);
  // Watches the socket for writability while output waits or TLS wants the socket writable.
  void UpdateWriteInterest(BusLink* link);
  ssize_t ReadSome(BusLink* link, char* buf, size_t n);
  void Accept(int listen_fd);
  void Read(BusLink* link);
  void Flush(BusLink* link);
  void Send(BusLink* link, const BusMessage& msg);
  void Broadcast(const BusMessage& msg);
  // The outbound links of every known node but myself and handshakes.
  std::vector<BusLink*> PeerLinks() const;

  BusMessage Header(BusType type) const;
  void SendPing(BusLink* link, BusType type);
  void SendFail(const std::string& name);
  void SendUpdate(BusLink* link, const ClusterNode& node);
  void SendMfStart(ClusterNode* master);

  // clusterProcessPacket: false when the link was freed while handling it.
  void Process(BusLink* link, const BusMessage& msg);
  void ProcessPingLike(BusLink* link, const BusMessage& msg, ClusterNode* sender);
  void ProcessGossip(const BusMessage& msg, BusLink* link);
  void ProcessExtensions(const BusMessage& msg, ClusterNode* sender);
  bool UpdateAddressIfNeeded(ClusterNode* node, BusLink* link, const BusMessage& msg);
  void UpdateSlotsConfigWith(ClusterNode* sender, uint64_t sender_epoch, const SlotBitmap& slots);
  void HandleEpochCollision(ClusterNode* sender);
  void MarkFailingIfNeeded(ClusterNode* node);
  void ClearFailureIfNeeded(ClusterNode* node);
  void SetNodeAsMaster(ClusterNode* node);
  void FollowMaster(ClusterNode* master);
  std::string NodeIp(BusLink* link, const BusMessage& msg) const;
  void SetPorts(ClusterNode* node, uint16_t port, uint16_t pport) const;

  // Elections and manual failover (replica side), voting (master side).
  void HandleReplicaFailover();
  void HandleManualFailover();
  void CheckManualFailoverTimeout();
  void ResetManualFailover();
  void ReplaceMyMaster();
  void VoteIfNeeded(ClusterNode* node, const BusMessage& request);
  int ReplicaRank() const;
  void HandleReplicaMigration(int max_replicas);
  void LogCantFailover(int reason);

  BusHost& host_;
  ClusterState& state_;
  std::vector<int> listen_fds_;
  std::map<uint64_t, int> listener_ids_;  // epoll id -> listening socket
  // CLUSTER FORGET: names other nodes are told to drop (name -> expiry, unix s).
  std::map<std::string, int64_t> forgotten_;
  std::map<uint64_t, std::unique_ptr<BusLink>> links_;
  std::vector<std::unique_ptr<BusLink>> dead_links_;
  uint64_t next_id_ = 1;
  std::mt19937 rng_;
  int64_t iteration_ = 0;
  int64_t last_cron_ms_ = 0;
  int pfail_nodes_ = 0;
  uint64_t pings_sent_ = 0;
  std::map<ClusterNode*, uint64_t> last_in_gossip_;
  int64_t drop_packet_filter_ = -1;
  bool close_link_on_packet_drop_ = false;

  // Election (replica side).
  int64_t failover_auth_time_ = 0;
  int failover_auth_count_ = 0;
  bool failover_auth_sent_ = false;
  int failover_auth_rank_ = 0;
  uint64_t failover_auth_epoch_ = 0;
  bool handle_failover_now_ = false;
  int cant_failover_reason_ = 0;
  int64_t cant_failover_logged_ms_ = 0;
  int64_t cant_failover_since_ms_ = 0;
  // Manual failover: mf_end_ != 0 while one runs. A master records the replica that asked.
  int64_t mf_end_ = 0;
  ClusterNode* mf_replica_ = nullptr;
  int64_t mf_master_offset_ = -1;
  bool mf_can_start_ = false;
};

}  // namespace vireo::cluster

#endif  // VIREO_CLUSTER_BUS_H_

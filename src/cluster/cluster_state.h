// This node's view of the cluster: the node table (myself included), who owns each of the
// 16384 slots, the slots being migrated or imported, the epochs, and whether the cluster is
// up. It is plain data plus the rules Redis applies when it changes; nodes.conf
// (nodes_conf.h) persists it, the CLUSTER command edits it, and the bus engine (bus.cc, which
// owns the sockets) feeds it what gossip says. No I/O here, so it can be tested in isolation.
#ifndef VIREO_CLUSTER_CLUSTER_STATE_H_
#define VIREO_CLUSTER_CLUSTER_STATE_H_

#include <bitset>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/bus_message.h"
#include "cluster/routing.h"
#include "core/key_slot.h"

namespace vireo {
struct ServerConfig;
}  // namespace vireo

namespace vireo::cluster {

inline constexpr size_t kNodeIdLen = 40;
// How long a forgotten node stays out of the table (gossip can't re-add it meanwhile).
inline constexpr int64_t kBlacklistTtlSeconds = 60;
inline constexpr int kDefaultBusPortOffset = 10000;

// Node flags: Redis's bit values, as the bus carries them (bus_message.h defines them); Redis's
// code and the bus call a replica a "slave".
inline constexpr uint16_t kNodeReplica = kNodeSlave;

// Bus message types in Redis's numbering, for the per-type counters of CLUSTER INFO.
inline constexpr int kMessageTypeCount = 11;
// "ping", "pong", "meet", ... as CLUSTER INFO names them.
std::string_view MessageTypeName(int type);

// The engine's connection to a node (defined by bus.cc). Nodes only point at it.
class BusLink;

struct ClusterNode;
struct FailReport {
  ClusterNode* reporter;
  int64_t time_ms;
};

struct ClusterNode {
  std::string name;      // 40 hex characters
  std::string shard_id;  // 40 hex characters; a replica shares its master's
  uint16_t flags = 0;
  int64_t ctime = 0;
  uint64_t config_epoch = 0;
  // Addresses. tcp_port/tls_port are the client ports (the bus's port and pport carry them,
  // which is which depending on tls-cluster); cport is the bus port.
  std::string ip;  // "" until learned (myself: from the first MEET, or cluster-announce-ip)
  int tcp_port = 0;
  int tls_port = 0;
  int cport = 0;
  std::string hostname;        // cluster-announce-hostname, "" if none
  std::string human_nodename;  // cluster-announce-human-nodename, "" if none
  std::bitset<kSlotCount> slots;
  int num_slots = 0;
  ClusterNode* master = nullptr;  // replicas only
  std::vector<ClusterNode*> replicas;
  // Liveness, in unix ms (0: none outstanding / never).
  int64_t ping_sent = 0;
  int64_t pong_received = 0;
  int64_t data_received = 0;
  int64_t fail_time = 0;
  int64_t voted_time = 0;
  int64_t repl_offset_time = 0;
  int64_t orphaned_time = 0;
  int64_t repl_offset = 0;
  BusLink* link = nullptr;          // outbound
  BusLink* inbound_link = nullptr;  // accepted from it
  std::vector<FailReport> fail_reports;

  bool has(uint16_t flag) const { return (flags & flag) != 0; }
  bool is_master() const { return has(kNodeMaster); }
  bool is_replica() const { return has(kNodeReplica); }
  bool failed() const { return has(kNodeFail); }
  bool in_handshake() const { return has(kNodeHandshake); }
};

enum class EndpointType { kIp, kHostname, kUnknown };
EndpointType ParseEndpointType(std::string_view text);

// What must happen before the event loop sleeps (Redis's CLUSTER_TODO_*): commands and gossip
// set these, the server acts on them once per loop turn.
enum ClusterTodo : uint32_t {
  kTodoUpdateState = 1,
  kTodoSaveConfig = 2,
  kTodoFsyncConfig = 4,
};

class ClusterState : public SlotRouting {
 public:
  // `config` must outlive the state; it is read, never written.
  explicit ClusterState(const ServerConfig* config);
  ~ClusterState() override;
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // A fresh 40-hex identifier (node names, shard ids).
  std::string RandomId();

  // --- the node table ------------------------------------------------------------------------
  // Makes a brand new myself (a master with a random name and shard id), when there is no
  // nodes.conf to load.
  ClusterNode* CreateMyself();
  // Adds a node named `name` (random when empty). The name must not be taken.
  ClusterNode* AddNode(std::string name, uint16_t flags);
  ClusterNode* Lookup(std::string_view name) const;
  // Removes a node: its slots become unassigned, migrations to or from it close, its failure
  // reports about others go, and its master forgets it.
  void DeleteNode(ClusterNode* node);
  // Gives a node another name (a handshake node learns the real one).
  void RenameNode(ClusterNode* node, const std::string& new_name);
  ClusterNode* myself() const { return myself_; }
  // Loading nodes.conf names myself by its flags.
  void set_myself(ClusterNode* node);
  const std::map<std::string, std::unique_ptr<ClusterNode>, std::less<>>& nodes() const {
    return nodes_;
  }
  size_t node_count() const { return nodes_.size(); }

  // Replication links between records.
  void AddReplica(ClusterNode* master, ClusterNode* replica);
  void RemoveReplica(ClusterNode* master, ClusterNode* replica);
  // Makes myself a replica of `master` (state only: the caller starts replication). Myself
  // must own no slots. Closes open slots when myself was a master.
  void SetMyMaster(ClusterNode* master);
  // Turns a replica record into a master (a failover, RESET).
  void SetNodeAsMaster(ClusterNode* node);
  // Myself (a replica) becomes a master and takes its master's slots (a won failover,
  // CLUSTER FAILOVER TAKEOVER).
  void ReplaceMyMaster();

  // --- slots ---------------------------------------------------------------------------------
  ClusterNode* OwnerOf(int slot) const { return slots_[slot]; }
  // False when the slot already has an owner (AddSlot) or has none (DelSlot).
  bool AddSlot(ClusterNode* node, int slot);
  bool DelSlot(int slot);
  // Unassigns every slot of `node`; returns how many.
  int DelNodeSlots(ClusterNode* node);
  ClusterNode* migrating_to(int slot) const { return migrating_to_[slot]; }
  ClusterNode* importing_from(int slot) const { return importing_from_[slot]; }
  void set_migrating_to(int slot, ClusterNode* node) { migrating_to_[slot] = node; }
  void set_importing_from(int slot, ClusterNode* node) { importing_from_[slot] = node; }
  void CloseAllSlots();
  // Runs of consecutive slots owned by `node`: [start, end] pairs.
  std::vector<std::pair<int, int>> SlotRanges(const ClusterNode& node) const;

  // --- epochs --------------------------------------------------------------------------------
  uint64_t current_epoch() const { return current_epoch_; }
  void set_current_epoch(uint64_t epoch) { current_epoch_ = epoch; }
  uint64_t last_vote_epoch() const { return last_vote_epoch_; }
  void set_last_vote_epoch(uint64_t epoch) { last_vote_epoch_ = epoch; }
  // The greatest config epoch known (current epoch included).
  uint64_t MaxEpoch() const;
  // Gives myself a new config epoch unless it already has the single greatest one (CLUSTER
  // BUMPEPOCH, TAKEOVER, closing an import). True when bumped.
  bool BumpEpochWithoutConsensus();
  // A replica shows its master's epoch.
  uint64_t EffectiveConfigEpoch(const ClusterNode& node) const;

  // --- membership changes the commands make --------------------------------------------------
  // CLUSTER RESET: forget everyone, drop every slot, become a master; a hard reset also takes a
  // new name and shard id and zeroes the epochs.
  void Reset(bool hard);
  // CLUSTER FORGET / gossip: ids kept out of the table for a minute.
  void BlacklistAdd(const std::string& name, int64_t now_s);
  bool BlacklistContains(std::string_view name, int64_t now_s);
  enum class HandshakeResult { kStarted, kInvalid, kInProgress };
  // CLUSTER MEET: records a handshake node for the bus to contact. `ip` is normalized.
  HandshakeResult StartHandshake(std::string_view ip, int port, int cport, bool tls,
                                 int64_t now_ms);
  // Drops handshake nodes that did not answer within node-timeout (at least 1 s) of their
  // creation; returns how many.
  int ExpireHandshakes(int64_t now_ms);
  int FailureReportCount(const ClusterNode& node) const;
  // Failure reports (gossip from masters saying `node` is PFAIL/FAIL). Add returns true for a
  // new reporter (an old one only refreshes its time); Del true when there was one. Reports
  // older than twice node-timeout are dropped by CleanupFailureReports.
  bool AddFailureReport(ClusterNode* node, ClusterNode* reporter, int64_t now_ms);
  bool DelFailureReport(ClusterNode* node, ClusterNode* reporter);
  void CleanupFailureReports(ClusterNode* node, int64_t now_ms);

  // Called before a node record is destroyed (the bus closes its links and forgets it).
  std::function<void(ClusterNode*)> before_delete_node;
  // Called when a slot loses its owner (DelSlot): shard channels of the slot are dropped when
  // it was this shard's.
  std::function<void(int slot, ClusterNode* old_owner)> on_slot_unassigned;

  // --- health --------------------------------------------------------------------------------
  // Recomputes cluster_state (ok/fail) and size the way Redis does, including the delays
  // before a master turns ok (after start-up, and after being in a minority partition).
  void UpdateState(int64_t now_ms);
  bool ok() const { return state_ok_; }
  int size() const { return size_; }

  void Todo(uint32_t flags) { todo_ |= flags; }
  uint32_t TakeTodo() {
    uint32_t t = todo_;
    todo_ = 0;
    return t;
  }
  uint32_t todo() const { return todo_; }

  // Bus message counters (CLUSTER INFO).
  uint64_t messages_sent[kMessageTypeCount] = {};
  uint64_t messages_received[kMessageTypeCount] = {};
  uint64_t links_buffer_limit_exceeded = 0;

  // --- myself's addresses from the configuration ---------------------------------------------
  // Applies cluster-announce-*, the listening ports and cluster-replica-no-failover to myself.
  // True when something nodes.conf records changed.
  bool RefreshMyself(int port, int tls_port);

  const ServerConfig& config() const { return *config_; }
  EndpointType preferred_endpoint() const;
  // The client port of `node` as clients of this server see it (tls: the TLS port).
  int ClientPort(const ClusterNode& node, bool tls) const;
  // The endpoint CLUSTER SLOTS / -MOVED show for `node` per cluster-preferred-endpoint-type.
  std::string PreferredEndpoint(const ClusterNode& node) const;

  // SlotRouting.
  bool ClusterUp() const override { return state_ok_; }
  cluster::SlotOwner Owner(int slot) const override;
  std::string MovedEndpoint(int slot) const override;
  std::string MigratingEndpoint(int slot) const override;
  bool MigratingToMyself(int slot) const override { return migrating_to_[slot] == myself_; }
  bool Importing(int slot) const override { return importing_from_[slot] != nullptr; }
  // The redirection check's fast path: one call instead of four.
  bool ServesStableSlot(int slot) const override {
    return state_ok_ && slots_[slot] == myself_ && myself_ != nullptr &&
           migrating_to_[slot] == nullptr && importing_from_[slot] == nullptr;
  }

 private:
  std::string Endpoint(const ClusterNode& node) const;

  const ServerConfig* config_;
  std::mt19937_64 rng_;
  std::map<std::string, std::unique_ptr<ClusterNode>, std::less<>> nodes_;
  ClusterNode* myself_ = nullptr;
  ClusterNode* slots_[kSlotCount] = {};
  ClusterNode* migrating_to_[kSlotCount] = {};
  ClusterNode* importing_from_[kSlotCount] = {};
  std::map<std::string, int64_t, std::less<>> blacklist_;  // name -> expiry (unix s)
  uint64_t current_epoch_ = 0;
  uint64_t last_vote_epoch_ = 0;
  bool state_ok_ = false;
  int size_ = 0;
  uint32_t todo_ = 0;
  int64_t first_update_ms_ = 0;
  int64_t among_minority_ms_ = 0;
};

}  // namespace vireo::cluster

#endif  // VIREO_CLUSTER_CLUSTER_STATE_H_

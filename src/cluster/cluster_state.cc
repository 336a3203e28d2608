#include "cluster/cluster_state.h"

#include <arpa/inet.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

#include "core/config.h"
#include "util/clock.h"

namespace vireo::cluster {
namespace {

// Redis's timings for turning cluster_state ok: a master waits this long after its first
// check (so a rebooted master does not serve before the cluster could reconfigure it), and
// after being in a minority partition, node-timeout clamped to [500, 5000] ms.
constexpr int64_t kWritableDelayMs = 2000;
constexpr int64_t kMinRejoinDelayMs = 500;
constexpr int64_t kMaxRejoinDelayMs = 5000;

constexpr std::string_view kMessageTypeNames[kMessageTypeCount] = {
    "ping",     "pong",   "meet",    "fail",   "publish",     "auth-req",
    "auth-ack", "update", "mfstart", "module", "publishshard"};

}  // namespace

std::string_view MessageTypeName(int type) {
  return type >= 0 && type < kMessageTypeCount ? kMessageTypeNames[type] : "unknown";
}

EndpointType ParseEndpointType(std::string_view text) {
  if (text == "hostname") return EndpointType::kHostname;
  if (text == "unknown-endpoint") return EndpointType::kUnknown;
  return EndpointType::kIp;
}

ClusterState::ClusterState(const ServerConfig* config)
    : config_(config), rng_(std::random_device{}()) {}

ClusterState::~ClusterState() = default;

std::string ClusterState::RandomId() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(kNodeIdLen, '0');
  for (char& c : out) c = kHex[rng_() % 16];
  return out;
}

ClusterNode* ClusterState::CreateMyself() {
  ClusterNode* node = AddNode("", kNodeMyself | kNodeMaster);
  myself_ = node;
  return node;
}

ClusterNode* ClusterState::AddNode(std::string name, uint16_t flags) {
  if (name.empty()) {
    do {
      name = RandomId();
    } while (nodes_.count(name) != 0);
  }
  auto node = std::make_unique<ClusterNode>();
  node->name = name;
  node->shard_id = RandomId();
  node->flags = flags;
  node->ctime = 0;
  ClusterNode* raw = node.get();
  nodes_.emplace(std::move(name), std::move(node));
  return raw;
}

ClusterNode* ClusterState::Lookup(std::string_view name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : it->second.get();
}

void ClusterState::set_myself(ClusterNode* node) {
  myself_ = node;
  node->flags |= kNodeMyself;
}

void ClusterState::DeleteNode(ClusterNode* node) {
  if (before_delete_node) before_delete_node(node);
  for (int j = 0; j < kSlotCount; ++j) {
    if (importing_from_[j] == node) importing_from_[j] = nullptr;
    if (migrating_to_[j] == node) migrating_to_[j] = nullptr;
    if (slots_[j] == node) DelSlot(j);
  }
  // Its opinions about other nodes no longer count.
  for (auto& [name, other] : nodes_) {
    auto& reports = other->fail_reports;
    reports.erase(std::remove_if(reports.begin(), reports.end(),
                                 [node](const FailReport& r) { return r.reporter == node; }),
                  reports.end());
  }
  if (node->master != nullptr) RemoveReplica(node->master, node);
  for (ClusterNode* replica : node->replicas) replica->master = nullptr;
  auto it = nodes_.find(node->name);
  if (it != nodes_.end()) nodes_.erase(it);
}

void ClusterState::RenameNode(ClusterNode* node, const std::string& new_name) {
  auto it = nodes_.find(node->name);
  if (it == nodes_.end()) return;
  std::unique_ptr<ClusterNode> owned = std::move(it->second);
  nodes_.erase(it);
  owned->name = new_name;
  nodes_.emplace(new_name, std::move(owned));
}

void ClusterState::AddReplica(ClusterNode* master, ClusterNode* replica) {
  if (std::find(master->replicas.begin(), master->replicas.end(), replica) ==
      master->replicas.end()) {
    master->replicas.push_back(replica);
  }
  // A master with replicas may receive migrated replicas (replica migration's hint).
  master->flags |= kNodeMigrateTo;
}

void ClusterState::RemoveReplica(ClusterNode* master, ClusterNode* replica) {
  auto& r = master->replicas;
  r.erase(std::remove(r.begin(), r.end(), replica), r.end());
  if (r.empty()) master->flags &= ~kNodeMigrateTo;
}

void ClusterState::SetMyMaster(ClusterNode* master) {
  if (myself_->is_master()) {
    myself_->flags &= ~(kNodeMaster | kNodeMigrateTo);
    myself_->flags |= kNodeReplica;
    CloseAllSlots();
  } else if (myself_->master != nullptr) {
    RemoveReplica(myself_->master, myself_);
  }
  myself_->master = master;
  myself_->shard_id = master->shard_id;
  AddReplica(master, myself_);
}

void ClusterState::SetNodeAsMaster(ClusterNode* node) {
  if (node->is_master()) return;
  if (node->master != nullptr) {
    RemoveReplica(node->master, node);
    if (node != myself_) node->flags |= kNodeMigrateTo;
  }
  node->flags &= ~kNodeReplica;
  node->flags |= kNodeMaster;
  node->master = nullptr;
}

void ClusterState::ReplaceMyMaster() {
  ClusterNode* old = myself_->master;
  if (myself_->is_master() || old == nullptr) return;
  SetNodeAsMaster(myself_);
  for (int j = 0; j < kSlotCount; ++j) {
    if (slots_[j] == old) {
      DelSlot(j);
      AddSlot(myself_, j);
    }
  }
  Todo(kTodoUpdateState | kTodoSaveConfig | kTodoFsyncConfig);
}

bool ClusterState::AddSlot(ClusterNode* node, int slot) {
  if (slots_[slot] != nullptr) return false;
  node->slots.set(slot);
  ++node->num_slots;
  slots_[slot] = node;
  return true;
}

bool ClusterState::DelSlot(int slot) {
  ClusterNode* owner = slots_[slot];
  if (owner == nullptr) return false;
  owner->slots.reset(slot);
  --owner->num_slots;
  slots_[slot] = nullptr;
  if (on_slot_unassigned) on_slot_unassigned(slot, owner);
  return true;
}

int ClusterState::DelNodeSlots(ClusterNode* node) {
  int deleted = 0;
  for (int j = 0; j < kSlotCount && node->num_slots > 0; ++j) {
    if (slots_[j] == node) {
      DelSlot(j);
      ++deleted;
    }
  }
  return deleted;
}

void ClusterState::CloseAllSlots() {
  std::fill(std::begin(migrating_to_), std::end(migrating_to_), nullptr);
  std::fill(std::begin(importing_from_), std::end(importing_from_), nullptr);
}

std::vector<std::pair<int, int>> ClusterState::SlotRanges(const ClusterNode& node) const {
  std::vector<std::pair<int, int>> out;
  if (node.num_slots == 0) return out;
  int start = -1;
  for (int j = 0; j <= kSlotCount; ++j) {
    bool mine = j < kSlotCount && node.slots.test(j);
    if (mine && start < 0) start = j;
    if (!mine && start >= 0) {
      out.emplace_back(start, j - 1);
      start = -1;
    }
  }
  return out;
}

uint64_t ClusterState::MaxEpoch() const {
  uint64_t max = current_epoch_;
  for (const auto& [name, node] : nodes_) max = std::max(max, node->config_epoch);
  return max;
}

bool ClusterState::BumpEpochWithoutConsensus() {
  uint64_t max = MaxEpoch();
  if (myself_->config_epoch != 0 && myself_->config_epoch == max) return false;
  ++current_epoch_;
  myself_->config_epoch = current_epoch_;
  Todo(kTodoSaveConfig | kTodoFsyncConfig);
  spdlog::info("New configEpoch set to {}", myself_->config_epoch);
  return true;
}

uint64_t ClusterState::EffectiveConfigEpoch(const ClusterNode& node) const {
  if (node.is_replica() && node.master != nullptr) return node.master->config_epoch;
  return node.config_epoch;
}

void ClusterState::Reset(bool hard) {
  if (myself_->is_replica()) SetNodeAsMaster(myself_);
  CloseAllSlots();
  for (int j = 0; j < kSlotCount; ++j) DelSlot(j);
  std::vector<ClusterNode*> others;
  for (auto& [name, node] : nodes_) {
    if (node.get() != myself_) others.push_back(node.get());
  }
  for (ClusterNode* node : others) DeleteNode(node);
  blacklist_.clear();
  if (hard) {
    current_epoch_ = 0;
    last_vote_epoch_ = 0;
    myself_->config_epoch = 0;
    std::string name;
    do {
      name = RandomId();
    } while (nodes_.count(name) != 0);
    RenameNode(myself_, name);
    myself_->shard_id = RandomId();
    spdlog::info("Node hard reset, now I'm {}", myself_->name);
  }
  Todo(kTodoSaveConfig | kTodoUpdateState | kTodoFsyncConfig);
}

void ClusterState::BlacklistAdd(const std::string& name, int64_t now_s) {
  std::erase_if(blacklist_, [now_s](const auto& e) { return e.second < now_s; });
  blacklist_[name] = now_s + kBlacklistTtlSeconds;
}

bool ClusterState::BlacklistContains(std::string_view name, int64_t now_s) {
  std::erase_if(blacklist_, [now_s](const auto& e) { return e.second < now_s; });
  return blacklist_.find(name) != blacklist_.end();
}

ClusterState::HandshakeResult ClusterState::StartHandshake(std::string_view ip, int port, int cport,
                                                           bool tls, int64_t now_ms) {
  // The address is kept in its normalized text form, as the bus will compare it.
  std::string text(ip);
  char norm[INET6_ADDRSTRLEN] = {};
  in_addr v4;
  in6_addr v6;
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    inet_ntop(AF_INET, &v4, norm, sizeof(norm));
  } else if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
    inet_ntop(AF_INET6, &v6, norm, sizeof(norm));
  } else {
    return HandshakeResult::kInvalid;
  }
  if (port <= 0 || port > 65535 || cport <= 0 || cport > 65535) return HandshakeResult::kInvalid;
  for (const auto& [name, node] : nodes_) {
    if (node->in_handshake() && node->ip == norm && ClientPort(*node, tls) == port &&
        node->cport == cport) {
      return HandshakeResult::kInProgress;
    }
  }
  ClusterNode* node = AddNode("", kNodeHandshake | kNodeMeet);
  node->ctime = now_ms;
  node->ip = norm;
  (tls ? node->tls_port : node->tcp_port) = port;
  node->cport = cport;
  return HandshakeResult::kStarted;
}

int ClusterState::ExpireHandshakes(int64_t now_ms) {
  const int64_t timeout = std::max<int64_t>(config_->cluster_node_timeout, 1000);
  std::vector<ClusterNode*> expired;
  for (const auto& [name, node] : nodes_) {
    if (node->in_handshake() && now_ms - node->ctime > timeout) expired.push_back(node.get());
  }
  for (ClusterNode* node : expired) DeleteNode(node);
  return static_cast<int>(expired.size());
}

int ClusterState::FailureReportCount(const ClusterNode& node) const {
  // Reports older than twice the node timeout no longer count (Redis cleans them on read).
  const int64_t max_age = config_->cluster_node_timeout * 2;
  int64_t newest = 0;
  for (const FailReport& r : node.fail_reports) newest = std::max(newest, r.time_ms);
  int count = 0;
  for (const FailReport& r : node.fail_reports) {
    if (newest - r.time_ms <= max_age) ++count;
  }
  return count;
}

bool ClusterState::AddFailureReport(ClusterNode* node, ClusterNode* reporter, int64_t now_ms) {
  for (FailReport& r : node->fail_reports) {
    if (r.reporter == reporter) {
      r.time_ms = now_ms;
      return false;
    }
  }
  node->fail_reports.push_back({reporter, now_ms});
  return true;
}

bool ClusterState::DelFailureReport(ClusterNode* node, ClusterNode* reporter) {
  CleanupFailureReports(node, NowMs());
  auto& reports = node->fail_reports;
  auto it = std::find_if(reports.begin(), reports.end(),
                         [reporter](const FailReport& r) { return r.reporter == reporter; });
  if (it == reports.end()) return false;
  reports.erase(it);
  return true;
}

void ClusterState::CleanupFailureReports(ClusterNode* node, int64_t now_ms) {
  const int64_t max_age = config_->cluster_node_timeout * 2;
  std::erase_if(node->fail_reports,
                [&](const FailReport& r) { return now_ms - r.time_ms > max_age; });
}

void ClusterState::UpdateState(int64_t now_ms) {
  todo_ &= ~kTodoUpdateState;
  if (first_update_ms_ == 0) first_update_ms_ = now_ms;
  if (myself_->is_master() && !state_ok_ && now_ms - first_update_ms_ < kWritableDelayMs) return;

  bool new_ok = true;
  if (config_->cluster_require_full_coverage) {
    for (int j = 0; j < kSlotCount; ++j) {
      if (slots_[j] == nullptr || slots_[j]->failed()) {
        new_ok = false;
        break;
      }
    }
  }
  // The cluster's size is the number of masters serving slots; a majority of them must be
  // reachable from here.
  int reachable = 0;
  size_ = 0;
  for (const auto& [name, node] : nodes_) {
    if (node->is_master() && node->num_slots > 0) {
      ++size_;
      if (!node->has(kNodeFail | kNodePfail)) ++reachable;
    }
  }
  if (reachable < size_ / 2 + 1) {
    new_ok = false;
    among_minority_ms_ = now_ms;
  }
  if (new_ok == state_ok_) return;
  const int64_t rejoin_delay =
      std::clamp(config_->cluster_node_timeout, kMinRejoinDelayMs, kMaxRejoinDelayMs);
  if (new_ok && myself_->is_master() && now_ms - among_minority_ms_ < rejoin_delay) return;
  if (new_ok) {
    spdlog::info("Cluster state changed: ok");
  } else {
    spdlog::warn("Cluster state changed: fail");
  }
  state_ok_ = new_ok;
}

bool ClusterState::RefreshMyself(int port, int tls_port) {
  const ServerConfig& c = *config_;
  ClusterNode& me = *myself_;
  const std::string old_line = me.ip + me.hostname + me.human_nodename +
                               std::to_string(me.tcp_port) + "/" + std::to_string(me.tls_port) +
                               "/" + std::to_string(me.cport);
  me.tcp_port = c.cluster_announce_port != 0 ? c.cluster_announce_port : port;
  me.tls_port = c.cluster_announce_tls_port != 0 ? c.cluster_announce_tls_port : tls_port;
  int bus = c.cluster_port != 0 ? c.cluster_port
                                : (c.tls_cluster ? me.tls_port : port) + kDefaultBusPortOffset;
  me.cport = c.cluster_announce_bus_port != 0 ? c.cluster_announce_bus_port : bus;
  // Without an announced IP, myself keeps what the other nodes told it (MEET/PONG).
  if (!c.cluster_announce_ip.empty()) me.ip = c.cluster_announce_ip;
  me.hostname = c.cluster_announce_hostname;
  me.human_nodename = c.cluster_announce_human_nodename;
  if (c.cluster_replica_no_failover) {
    me.flags |= kNodeNoFailover;
  } else {
    me.flags &= ~kNodeNoFailover;
  }
  const std::string new_line = me.ip + me.hostname + me.human_nodename +
                               std::to_string(me.tcp_port) + "/" + std::to_string(me.tls_port) +
                               "/" + std::to_string(me.cport);
  return old_line != new_line;
}

EndpointType ClusterState::preferred_endpoint() const {
  return ParseEndpointType(config_->cluster_preferred_endpoint_type);
}

int ClusterState::ClientPort(const ClusterNode& node, bool tls) const {
  if (tls) return node.tls_port != 0 ? node.tls_port : node.tcp_port;
  return node.tcp_port != 0 ? node.tcp_port : node.tls_port;
}

std::string ClusterState::PreferredEndpoint(const ClusterNode& node) const {
  switch (preferred_endpoint()) {
    case EndpointType::kIp:
      return node.ip;
    case EndpointType::kHostname:
      return node.hostname.empty() ? "?" : node.hostname;
    case EndpointType::kUnknown:
      return "";
  }
  return node.ip;
}

std::string ClusterState::Endpoint(const ClusterNode& node) const {
  return PreferredEndpoint(node) + ":" + std::to_string(ClientPort(node, config_->tls_cluster));
}

cluster::SlotOwner ClusterState::Owner(int slot) const {
  const ClusterNode* owner = slots_[slot];
  if (owner == nullptr) return SlotOwner::kUnassigned;
  if (owner == myself_) return SlotOwner::kMyself;
  if (myself_->master == owner) return SlotOwner::kMyMaster;
  return SlotOwner::kOther;
}

std::string ClusterState::MovedEndpoint(int slot) const {
  return slots_[slot] != nullptr ? Endpoint(*slots_[slot]) : std::string();
}

std::string ClusterState::MigratingEndpoint(int slot) const {
  return migrating_to_[slot] != nullptr ? Endpoint(*migrating_to_[slot]) : std::string();
}

}  // namespace vireo::cluster

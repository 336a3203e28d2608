// The Server's part of cluster mode: creating the cluster state at start-up from nodes.conf
// (or a fresh identity), saving nodes.conf when the state asks for it, and keeping myself's
// announced addresses in step with the configuration.
#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cluster/bus.h"
#include "cluster/cluster_state.h"
#include "cluster/nodes_conf.h"
#include "replication/replica_link.h"
#include "replication/replication.h"
#include "server/notify.h"
#include "server/server.h"
#include "util/clock.h"

namespace vireo {
namespace {

// One node per nodes.conf: a second node started on the same file would overwrite the
// first one's identity. The lock lives as long as the descriptor.
std::string LockClusterConfig(const std::string& path, int* fd_out) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return fmt::format("Can't open {} in order to acquire a lock: {}", path, strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    std::string error =
        errno == EWOULDBLOCK
            ? fmt::format(
                  "Sorry, the cluster configuration file {} is already used by a different Redis "
                  "Cluster node. Please make sure that different nodes use different cluster "
                  "configuration files.",
                  path)
            : fmt::format("Impossible to lock {}: {}", path, strerror(errno));
    close(fd);
    return error;
  }
  *fd_out = fd;
  return "";
}

// cluster-port, or the client port (the TLS one with tls-cluster) + 10000.
int ClusterBusPort(const ServerConfig& c, int bound_port) {
  const int client_port = c.tls_cluster ? static_cast<int>(c.tls_port) : bound_port;
  return c.cluster_port != 0 ? c.cluster_port : client_port + cluster::kDefaultBusPortOffset;
}

}  // namespace

std::string Server::LoadClusterConfig() {
  const ServerConfig& c = config_.values();
  if (!c.cluster_enabled) return "";
  if (!c.replicaof.empty()) return "replicaof directive not allowed in cluster mode";
  const int bus_port = ClusterBusPort(c, bound_port_);
  if (bus_port > 65535) {
    return "Redis port number too high. Cluster communication port is 10,000 port numbers "
           "higher than your Redis port. Your Redis port number must be 55535 or less.";
  }
  std::error_code ec;
  std::filesystem::path path = std::filesystem::absolute(c.cluster_config_file, ec);
  cluster_config_path_ = ec ? c.cluster_config_file : path.lexically_normal().string();
  if (std::string error = LockClusterConfig(cluster_config_path_, &cluster_lock_fd_);
      !error.empty()) {
    return error;
  }
  auto state = std::make_unique<cluster::ClusterState>(&config_.values());
  std::string error;
  bool save = false;
  switch (cluster::LoadNodesConf(cluster_config_path_, state.get(), NowMs(), &error)) {
    case cluster::LoadResult::kError:
      return error;
    case cluster::LoadResult::kMissing:
      state->CreateMyself();
      spdlog::info("No cluster configuration found, I'm {}", state->myself()->name);
      save = true;
      break;
    case cluster::LoadResult::kLoaded:
      spdlog::info("Node configuration loaded, I'm {}", state->myself()->name);
      break;
  }
  if (state->RefreshMyself(bound_port_, c.tls_port)) save = true;
  loaded_cluster_ = std::move(state);
  loaded_cluster_needs_save_ = save;
  return "";
}

bool Server::LoadsAsReplica() {
  // Redis's iAmMaster(): a replica keeps the keys whose TTL passed (its master's DELs expire
  // them), whether it follows a `replicaof` line or is a replica in nodes.conf.
  if (!config_.values().replicaof.empty() || replication_->is_replica()) return true;
  const cluster::ClusterState* state = cluster_ ? cluster_.get() : loaded_cluster_.get();
  return state != nullptr && state->myself()->is_replica();
}

std::string Server::StartCluster() {
  const ServerConfig& c = config_.values();
  if (!c.cluster_enabled) return "";
  if (!loaded_cluster_) {
    if (std::string error = LoadClusterConfig(); !error.empty()) return error;
  }
  std::unique_ptr<cluster::ClusterState> state = std::move(loaded_cluster_);
  bool save = loaded_cluster_needs_save_;
  // The data loaded before us (RDB/AOF) must fit the slot table: a master claims unassigned
  // slots it holds keys for and marks the others importing, so redis-cli --cluster fix sees
  // them. A replica's data is its master's business.
  if (state->myself()->is_master()) {
    for (size_t i = 1; i < dbs_.size(); ++i) {
      if (dbs_[i]->size() != 0) {
        return "You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.";
      }
    }
    for (int slot = 0; slot < cluster::kSlotCount && !dbs_.empty(); ++slot) {
      if (dbs_[0]->CountKeysInSlot(slot) == 0) continue;
      const cluster::ClusterNode* owner = state->OwnerOf(slot);
      if (owner == state->myself() || state->importing_from(slot) != nullptr) continue;
      save = true;
      if (owner == nullptr) {
        spdlog::info("I have keys for unassigned slot {}. Taking responsibility for it.", slot);
        state->AddSlot(state->myself(), slot);
      } else {
        spdlog::info(
            "I have keys for slot {}, but the slot is assigned to another node. Setting it to "
            "importing state.",
            slot);
        state->set_importing_from(slot, state->OwnerOf(slot));
      }
    }
  }
  cluster_ = std::move(state);
  slot_routing_ = cluster_.get();
  cluster::BusHost& host = *this;
  cluster_bus_ = std::make_unique<cluster::ClusterBus>(host, *cluster_);
  // A slot leaving this shard takes its shard channels' subscriptions along.
  cluster_->on_slot_unassigned = [this](int slot, cluster::ClusterNode* old_owner) {
    const cluster::ClusterNode* me = cluster_->myself();
    if (pubsub_.shard_channel_count() == 0) return;
    if (old_owner != me && !(me->is_replica() && me->master == old_owner)) return;
    for (const std::string& channel : pubsub_.ActiveNames(PubsubKind::kShard, "", true)) {
      if (cluster::KeySlot(channel) == slot) pubsub_.DropShardChannel(channel);
    }
  };
  const int bus_port = ClusterBusPort(c, bound_port_);
  if (std::string err = cluster_bus_->Listen(c.bind, bus_port); !err.empty()) return err;
  if (save) {
    if (std::string err = SaveClusterConfig(true); !err.empty()) {
      return "Fatal: can't update cluster config file: " + err;
    }
  }
  cluster_->UpdateState(NowMs());
  // A replica in nodes.conf follows its master at once (continuing from the RDB it loaded):
  // until then it would count as a master and expire the keys it keeps for its master's DELs.
  if (cluster_->myself()->is_replica()) FollowClusterMaster(true);
  return "";
}

std::string Server::SaveClusterConfig(bool fsync) {
  if (!cluster_) return "cluster mode is off";
  std::string error =
      cluster::WriteNodesConf(cluster_config_path_, cluster::NodesConfText(*cluster_), fsync);
  if (!error.empty()) {
    spdlog::warn("{}", error);
    return error;
  }
  // The rename put a new file (inode) at the path: lock that one, or a second node could start
  // on it. Nobody else can have it yet.
  int fd = -1;
  if (LockClusterConfig(cluster_config_path_, &fd).empty()) {
    if (cluster_lock_fd_ >= 0) close(cluster_lock_fd_);
    cluster_lock_fd_ = fd;
  }
  return "";
}

void Server::ClusterBeforeSleep() {
  cluster_bus_->BeforeSleep();
  const uint32_t todo = cluster_->TakeTodo();
  if (todo & cluster::kTodoUpdateState) {
    cluster_->UpdateState(NowMs());
    // Slots may have moved or the cluster gone down: clients blocked on their keys are told
    // where to go now, as Redis 7 does.
    RedirectBlockedClientsOfSlots();
  }
  if (todo & cluster::kTodoSaveConfig) {
    // Redis exits here; vireo keeps serving and says so (the next change saves again).
    if (!SaveClusterConfig((todo & cluster::kTodoFsyncConfig) != 0).empty()) {
      spdlog::error("Can't update cluster config file {}", cluster_config_path_);
    }
  }
}

void Server::ClusterCron() {
  cluster_bus_->Cron();
  const int64_t now = NowMs();
  // MEETs nobody answered are dropped (the bus engine completes the others).
  if (cluster_->ExpireHandshakes(now) > 0) cluster_->Todo(cluster::kTodoUpdateState);
  // Until the state turns ok (the start-up and rejoin delays pass), check every tick.
  if (!cluster_->ok()) {
    cluster_->UpdateState(now);
    RedirectBlockedClientsOfSlots();
  }
}

void Server::WatchBusSocket(int fd, uint64_t tag, uint32_t events) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = tag;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0) WatchSocket(fd, tag, events);
}

int64_t Server::ClusterReplOffset() { return replication_->announced_offset(); }

int64_t Server::ClusterReplDataAgeMs() {
  ReplicaLink* link = replication_->link();
  if (link == nullptr) return 0;
  const int64_t now = NowMs();
  if (Client* master = FindClient(link->master_client_id())) {
    return now - master->last_interaction_ms;
  }
  return link->down_since_ms() != 0 ? now - link->down_since_ms() : 0;
}

void Server::ClusterDeliverPublish(std::string_view channel, std::string_view message, bool shard) {
  if (shard) {
    pubsub_.PublishShard(channel, message);
  } else {
    pubsub_.Publish(channel, message);
  }
}

void Server::ClusterPauseWrites(bool on, int64_t duration_ms) {
  if (on) {
    client_pause_.Pause(PausePurpose::kFailover, MonotonicUs() / 1000 + duration_ms, kPauseWrite);
  } else {
    client_pause_.Unpause(PausePurpose::kFailover);
  }
}

void Server::ClusterSyncReplication() { FollowClusterMaster(false); }

void Server::FollowClusterMaster(bool at_startup) {
  const cluster::ClusterNode* me = cluster_->myself();
  if (me->is_master()) {
    replication_->PromoteForCluster();
    return;
  }
  const cluster::ClusterNode* master = me->master;
  if (master == nullptr || master->ip.empty() || master->has(cluster::kNodeNoAddr)) return;
  // A replica reaches its master on the port of its own kind (TLS with tls-replication).
  const int port = config_.values().tls_replication ? master->tls_port : master->tcp_port;
  if (port == 0) return;
  replication_->FollowForCluster(master->ip, port, at_startup);
}

size_t Server::ClusterKeysInSlot(int slot) { return dbs_[0]->CountKeysInSlot(slot); }

void Server::ClusterDeleteKeysInSlot(int slot) {
  const size_t deleted = dbs_[0]->DeleteKeysInSlot(slot, [this](std::string_view key) {
    const std::string_view argv[] = {"DEL", key};
    propagator_.Feed(0, argv);
    NotifyKeyspaceEvent(*this, kNotifyGeneric, "del", key, 0);
  });
  if (deleted != 0) dirty_ += deleted;
}

void Server::ApplyClusterConfig() {
  if (cluster_ && cluster_->RefreshMyself(bound_port_, config_.values().tls_port)) {
    cluster_->Todo(cluster::kTodoSaveConfig);
  }
}

}  // namespace vireo

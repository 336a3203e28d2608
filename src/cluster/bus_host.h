// What the cluster bus engine (bus.h) needs from the server that hosts it: a place for its
// sockets in the server's event loop, the server's configuration and TLS contexts, and the
// things it tells the server to do when the cluster changes (follow another master, drop the
// keys of a lost slot, pause writes for a manual failover, deliver a forwarded PUBLISH, save
// nodes.conf). The cluster layer declares it; the server implements it (src/server/
// server_cluster.cc), as it implements db's KeyspaceListener and scripting's ScriptHost, so
// cluster/ never includes src/server/.
//
// CLUSTER commands that change myself's role (SETSLOT, REPLICATE, FAILOVER TAKEOVER, RESET,
// SAVECONFIG) reach the same operations through ClusterBus::host().
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vireo {
struct ServerConfig;
class TlsContext;
}  // namespace vireo

namespace vireo::cluster {

class BusHost {
 public:
  virtual ~BusHost() = default;

  // ---- the loop, the configuration, TLS ----
  // Puts a bus socket in the server's epoll set under `tag` (adds, or changes the events).
  virtual void WatchBusSocket(int fd, uint64_t tag, uint32_t events) = 0;
  // Takes a bus socket out of the epoll set (before it is closed).
  virtual void UnwatchBusSocket(int fd) = 0;
  virtual const ServerConfig& BusConfig() = 0;
  // The contexts bus links use with tls-cluster yes.
  virtual TlsContext& BusTls() = 0;

  // ---- replication ----
  // Our replication offset (a master's stream, a replica's processed offset).
  virtual int64_t ClusterReplOffset() = 0;
  // How long ago we last heard from our master, in ms (a replica's election data age).
  virtual int64_t ClusterReplDataAgeMs() = 0;
  // Makes replication follow what the cluster says myself is: a replica of its master's
  // address, or a master.
  virtual void ClusterSyncReplication() = 0;
  // A manual failover: writes wait on this master for `duration_ms` (on) or resume (off).
  virtual void ClusterPauseWrites(bool on, int64_t duration_ms) = 0;

  // ---- keys, subscribers, nodes.conf ----
  // Keys of `slot` in the cluster's database (db 0).
  virtual size_t ClusterKeysInSlot(int slot) = 0;
  // A slot this node lost while holding keys: they go, as DELs to replicas and the AOF.
  virtual void ClusterDeleteKeysInSlot(int slot) = 0;
  // A PUBLISH / SPUBLISH another node forwarded: delivered to local subscribers.
  virtual void ClusterDeliverPublish(std::string_view channel, std::string_view message,
                                     bool shard) = 0;
  // Writes nodes.conf now; "" or the error.
  virtual std::string SaveClusterConfig(bool fsync) = 0;
};

}  // namespace vireo::cluster

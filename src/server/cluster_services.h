// What cluster mode adds to the server's command path: who serves each hash slot, the
// redirection a command gets instead of running, moving blocked clients off slots this node
// lost, and MIGRATE's cached connections. The server implements it (src/server/
// cluster_redirect.cc) and hands it out as Server::cluster_services().
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace vireo {

class Client;
struct CommandSpec;
namespace cluster {
class MigrateConnections;  // src/cluster/migrate_conn.h
class SlotRouting;         // src/cluster/routing.h
}  // namespace cluster

class ClusterServices {
 public:
  virtual ~ClusterServices() = default;

  // Who serves each hash slot (src/cluster/routing.h); nullptr when cluster mode is off, and
  // then no redirection code runs at all.
  virtual cluster::SlotRouting* slot_routing() const = 0;
  virtual void set_slot_routing(cluster::SlotRouting* r) = 0;
  // The redirection a client's command gets instead of running (-MOVED, -ASK, -CROSSSLOT,
  // -TRYAGAIN, -CLUSTERDOWN ...), or "" to run it.
  virtual std::string ClusterRedirectError(const Client& client, const CommandSpec& spec,
                                           std::span<const std::string_view> argv) = 0;
  // Clients blocked on keys (BLPOP, BZPOPMIN, XREAD ...) whose slot this node no longer serves
  // (nor imports) are unblocked with -MOVED slot endpoint, or -CLUSTERDOWN when the slot has
  // no owner or the cluster is down, as Redis 7 does. The cluster state calls this after
  // slot ownership or the cluster state changed; cheap when nobody is blocked.
  virtual void RedirectBlockedClientsOfSlots() = 0;
  // MIGRATE's cached connections to target instances (closed after 10 s unused).
  virtual cluster::MigrateConnections& migrate_connections() = 0;
};

}  // namespace vireo

// What command routing needs to know about the cluster: who serves each slot, which slots this
// node is migrating or importing, and whether the cluster is up. The cluster state (bus,
// nodes.conf) implements it; the dispatcher's redirection check, MIGRATE and the CLUSTER
// keyspace subcommands only read it. Keeping this narrow lets the redirection rules be tested
// without a bus.
#ifndef VIREO_CLUSTER_ROUTING_H_
#define VIREO_CLUSTER_ROUTING_H_

#include <string>

#include "core/key_slot.h"

namespace vireo::cluster {

enum class SlotOwner {
  kUnassigned,  // no node serves it: -CLUSTERDOWN Hash slot not served
  kMyself,      // this node is the slot's master
  kMyMaster,    // this node replicates the slot's master (READONLY clients may read here)
  kOther,       // another node: -MOVED
};

class SlotRouting {
 public:
  virtual ~SlotRouting() = default;

  // cluster_state:ok. When false, commands get -CLUSTERDOWN (reads may still be served when
  // cluster-allow-reads-when-down is set).
  virtual bool ClusterUp() const = 0;

  virtual SlotOwner Owner(int slot) const = 0;

  // "host:port" of the slot's master as -MOVED prints it (cluster-preferred-endpoint-type
  // decides whether host is the IP, the hostname or "?"). Only called when Owner is not
  // kUnassigned.
  virtual std::string MovedEndpoint(int slot) const = 0;

  // When this node is migrating the slot: the target's endpoint for -ASK; empty otherwise.
  virtual std::string MigratingEndpoint(int slot) const = 0;

  // When this node is migrating the slot to itself (CLUSTER SETSLOT s MIGRATING <own id>): the
  // -ASK such a request would get names this node, so Redis serves it here instead.
  virtual bool MigratingToMyself(int slot) const { return false; }

  // True when this node is importing the slot (CLUSTER SETSLOT IMPORTING): ASKING clients are
  // served here.
  virtual bool Importing(int slot) const = 0;

  // The common case, asked once per command with keys before anything else: the cluster is up
  // and this node is the slot's master with the slot neither migrating nor importing, so a
  // request whose keys are all in this slot runs here whatever the client's flags. False sends
  // the request through the full rules (DecideRedirect). The default answers from the calls
  // above; an implementation may override it with one lookup in a compact table.
  virtual bool ServesStableSlot(int slot) const {
    return ClusterUp() && Owner(slot) == SlotOwner::kMyself && !Importing(slot) &&
           MigratingEndpoint(slot).empty();
  }
};

}  // namespace vireo::cluster

#endif  // VIREO_CLUSTER_ROUTING_H_

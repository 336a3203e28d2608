// nodes.conf: the cluster state as Redis 7.2 writes it, one CLUSTER NODES line per node plus
// "vars currentEpoch N lastVoteEpoch N", so Redis and vireo can read each other's files. The
// node lines in the file carry aux fields after the address that clients never see:
//   <id> <ip>:<port>@<cport>,<hostname>[,tls-port=N][,nodename=X][,shard-id=ID] <flags>
//   <master|-> <ping-sent> <pong-received> <config-epoch> <link-state> <slot>... [<slot>->-<id>]
#ifndef VIREO_CLUSTER_NODES_CONF_H_
#define VIREO_CLUSTER_NODES_CONF_H_

#include <string>
#include <string_view>

#include "cluster/cluster_state.h"

namespace vireo::cluster {

// One node's line (no newline). `for_config`: the nodes.conf form with aux fields; otherwise
// the CLUSTER NODES form. `tls`: the TLS port is the one shown (a TLS client's view).
std::string NodeDescription(const ClusterState& state, const ClusterNode& node, bool for_config,
                            bool tls);
// Every node's line, each ending in "\n", skipping nodes with any of `skip_flags`.
std::string NodesDescription(const ClusterState& state, bool for_config, bool tls,
                             uint16_t skip_flags = 0);
// The whole file: every node but those in handshake, then the vars line.
std::string NodesConfText(const ClusterState& state);

// Fills an empty `state` from nodes.conf text. On a malformed file returns false with an error
// naming the line (its number and text). `now_ms` stands in for outstanding ping/pong times and
// failure times, as Redis does on load.
bool ParseNodesConf(std::string_view text, ClusterState* state, int64_t now_ms, std::string* error);

enum class LoadResult { kLoaded, kMissing, kError };
// Reads and parses `path`. kMissing when the file does not exist or is empty (the caller
// creates a fresh myself and saves).
LoadResult LoadNodesConf(const std::string& path, ClusterState* state, int64_t now_ms,
                         std::string* error);
// Writes `text` to `path` atomically: a temp file in the same directory, fsync (when asked),
// rename, then fsync of the directory. Returns "" or the error.
std::string WriteNodesConf(const std::string& path, std::string_view text, bool fsync);

}  // namespace vireo::cluster

#endif  // VIREO_CLUSTER_NODES_CONF_H_

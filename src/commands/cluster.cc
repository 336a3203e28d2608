// CLUSTER: the node's view of the cluster (NODES, SLOTS, SHARDS, INFO...) and the changes an
// operator or redis-cli --cluster makes to it (ADDSLOTS, SETSLOT, MEET, FORGET, RESET...).
// Replies and error strings are Redis 7.2's; the state and its rules live in
// src/cluster/cluster_state.h, this file parses arguments and replies.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cluster/bus.h"
#include "cluster/cluster_state.h"
#include "cluster/nodes_conf.h"
#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "core/key_slot.h"
#include "replication/replication.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/watched_keys.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

using cluster::ClusterNode;
using cluster::ClusterState;

// The cluster state, or nullptr after replying that cluster mode is off.
ClusterState* ClusterOrReply(CommandContext& ctx) {
  ClusterState* state = ctx.cluster();
  if (state == nullptr) ctx.reply.Error("ERR This instance has cluster support disabled");
  return state;
}

// Whether this client sees TLS ports (a TLS client of a tls-cluster node).
bool TlsView(const CommandContext& ctx) {
  return ctx.cfg().tls_cluster && ctx.client.tls != nullptr;
}

// A slot number, as Redis's getSlotOrReply reads it.
int NextSlot(ArgParser& args) {
  return static_cast<int>(
      args.IntInRange(0, cluster::kSlotCount - 1, "ERR Invalid or out of range slot"));
}

ClusterNode* NodeOrReply(CommandContext& ctx, ClusterState& state, std::string_view name,
                         std::string_view format = "ERR Unknown node {}") {
  ClusterNode* node = state.Lookup(name);
  if (node == nullptr) ctx.reply.Error(fmt::format(fmt::runtime(format), name));
  return node;
}

// Redis's addReplySubcommandSyntaxError for the subcommands with optional arguments.
bool TooManyArgs(CommandContext& ctx, size_t max_argc) {
  if (ctx.argc() <= max_argc) return false;
  ctx.reply.Error(
      fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try CLUSTER HELP.",
                  ctx.arg(1)));
  return true;
}

// SETSLOT's target: a known master.
ClusterNode* MasterOrReply(CommandContext& ctx, ClusterState& state, std::string_view name,
                           std::string_view unknown_format) {
  ClusterNode* n = NodeOrReply(ctx, state, name, unknown_format);
  if (n != nullptr && n->is_replica()) {
    ctx.reply.Error("ERR Target node is not a master");
    return nullptr;
  }
  return n;
}

void ClusterHelpCommand(CommandContext& ctx) {
  // Redis checks cluster mode before anything else, HELP included.
  if (ClusterOrReply(ctx) == nullptr) return;
  ReplyHelp(ctx, "CLUSTER",
            {"ADDSLOTS <slot> [<slot> ...]",
             "    Assign slots to current node.",
             "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
             "    Assign slots which are between <start-slot> and <end-slot> to current node.",
             "BUMPEPOCH",
             "    Advance the cluster config epoch.",
             "COUNT-FAILURE-REPORTS <node-id>",
             "    Return number of failure reports for <node-id>.",
             "COUNTKEYSINSLOT <slot>",
             "    Return the number of keys in <slot>.",
             "DELSLOTS <slot> [<slot> ...]",
             "    Delete slots information from current node.",
             "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
             "    Delete slots information which are between <start-slot> and <end-slot> from "
             "current node.",
             "FAILOVER [FORCE|TAKEOVER]",
             "    Promote current replica node to being a master.",
             "FORGET <node-id>",
             "    Remove a node from the cluster.",
             "GETKEYSINSLOT <slot> <count>",
             "    Return key names stored by current node in a slot.",
             "FLUSHSLOTS",
             "    Delete current node own slots information.",
             "INFO",
             "    Return information about the cluster.",
             "KEYSLOT <key>",
             "    Return the hash slot for <key>.",
             "MEET <ip> <port> [<bus-port>]",
             "    Connect nodes into a working cluster.",
             "MYID",
             "    Return the node id.",
             "MYSHARDID",
             "    Return the node's shard id.",
             "NODES",
             "    Return cluster configuration seen by node. Output format:",
             "    <id> <ip:port@bus-port[,hostname]> <flags> <master> <pings> <pongs> <epoch> "
             "<link> <slot> ...",
             "REPLICATE <node-id>",
             "    Configure current node as replica to <node-id>.",
             "RESET [HARD|SOFT]",
             "    Reset current node (default: soft).",
             "SET-CONFIG-EPOCH <epoch>",
             "    Set config epoch of current node.",
             "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
             "    Set slot state.",
             "REPLICAS <node-id>",
             "    Return <node-id> replicas.",
             "SAVECONFIG",
             "    Force saving cluster configuration on disk.",
             "SLOTS",
             "    Return information about slots range mappings. Each range is made of:",
             "    start, end, master and replicas IP addresses, ports and ids",
             "SHARDS",
             "    Return information about slot range mappings and the nodes associated with "
             "them.",
             "LINKS",
             "    Return information about all network links between this node and its peers.",
             "    Output format is an array where each array element is a map containing "
             "attributes of a link"});
}

void ClusterInfoCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  int assigned = 0, ok = 0, pfail = 0, fail = 0;
  for (int j = 0; j < cluster::kSlotCount; ++j) {
    const ClusterNode* n = state->OwnerOf(j);
    if (n == nullptr) continue;
    ++assigned;
    if (n->failed()) {
      ++fail;
    } else if (n->has(cluster::kNodePfail)) {
      ++pfail;
    } else {
      ++ok;
    }
  }
  std::string info = fmt::format(
      "cluster_state:{}\r\ncluster_slots_assigned:{}\r\ncluster_slots_ok:{}\r\n"
      "cluster_slots_pfail:{}\r\ncluster_slots_fail:{}\r\ncluster_known_nodes:{}\r\n"
      "cluster_size:{}\r\ncluster_current_epoch:{}\r\ncluster_my_epoch:{}\r\n",
      state->ok() ? "ok" : "fail", assigned, ok, pfail, fail, state->node_count(), state->size(),
      state->current_epoch(), state->EffectiveConfigEpoch(*state->myself()));
  // Per-type counters appear once a message of that type was seen, then the totals.
  for (bool sent : {true, false}) {
    const uint64_t* counts = sent ? state->messages_sent : state->messages_received;
    const char* way = sent ? "sent" : "received";
    uint64_t total = 0;
    for (int t = 0; t < cluster::kMessageTypeCount; ++t) {
      if (counts[t] == 0) continue;
      total += counts[t];
      info += fmt::format("cluster_stats_messages_{}_{}:{}\r\n", cluster::MessageTypeName(t), way,
                          counts[t]);
    }
    info += fmt::format("cluster_stats_messages_{}:{}\r\n", way, total);
  }
  info += fmt::format("total_cluster_links_buffer_limit_exceeded:{}\r\n",
                      state->links_buffer_limit_exceeded);
  ctx.reply.Verbatim(info);
}

void ClusterMyIdCommand(CommandContext& ctx) {
  if (ClusterState* state = ClusterOrReply(ctx)) ctx.reply.Bulk(state->myself()->name);
}

void ClusterMyShardIdCommand(CommandContext& ctx) {
  if (ClusterState* state = ClusterOrReply(ctx)) ctx.reply.Bulk(state->myself()->shard_id);
}

void ClusterNodesCommand(CommandContext& ctx) {
  if (ClusterState* state = ClusterOrReply(ctx)) {
    ctx.reply.Verbatim(cluster::NodesDescription(*state, false, TlsView(ctx)));
  }
}

// One node of CLUSTER SLOTS: endpoint, port, id, and the networking metadata that is not the
// preferred endpoint.
void ReplySlotsNode(CommandContext& ctx, const ClusterState& state, const ClusterNode& node) {
  const cluster::EndpointType type = state.preferred_endpoint();
  ctx.reply.Array(4);
  if (type == cluster::EndpointType::kUnknown) {
    ctx.reply.Null();
  } else {
    ctx.reply.Bulk(state.PreferredEndpoint(node));
  }
  ctx.reply.Integer(state.ClientPort(node, TlsView(ctx)));
  ctx.reply.Bulk(node.name);
  const bool show_ip = type != cluster::EndpointType::kIp;
  const bool show_host = type != cluster::EndpointType::kHostname && !node.hostname.empty();
  ctx.reply.Map((show_ip ? 1 : 0) + (show_host ? 1 : 0));
  if (show_ip) {
    ctx.reply.Bulk("ip");
    ctx.reply.Bulk(node.ip);
  }
  if (show_host) {
    ctx.reply.Bulk("hostname");
    ctx.reply.Bulk(node.hostname);
  }
}

// Replicas listed by CLUSTER SLOTS: not failed, and done with their first sync.
// A replica that has received something: nodes don't update their own record's offset, so
// myself's is the replication's.
bool ReplicaAvailable(CommandContext& ctx, const ClusterNode& node) {
  if (node.failed()) return false;
  const int64_t offset =
      node.has(cluster::kNodeMyself) ? ctx.replication().announced_offset() : node.repl_offset;
  return offset != 0;
}

void ClusterSlotsCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  std::vector<std::pair<int, int>> runs;  // consecutive slots with one owner
  for (int j = 0; j < cluster::kSlotCount; ++j) {
    if (state->OwnerOf(j) == nullptr) continue;
    if (!runs.empty() && runs.back().second == j - 1 &&
        state->OwnerOf(runs.back().first) == state->OwnerOf(j)) {
      runs.back().second = j;
    } else {
      runs.emplace_back(j, j);
    }
  }
  ctx.reply.Array(runs.size());
  for (const auto& [first, last] : runs) {
    const ClusterNode& master = *state->OwnerOf(first);
    size_t replicas = 0;
    for (const ClusterNode* r : master.replicas) replicas += ReplicaAvailable(ctx, *r) ? 1 : 0;
    ctx.reply.Array(3 + replicas);
    ctx.reply.Integer(first);
    ctx.reply.Integer(last);
    ReplySlotsNode(ctx, *state, master);
    for (const ClusterNode* r : master.replicas) {
      if (ReplicaAvailable(ctx, *r)) ReplySlotsNode(ctx, *state, *r);
    }
  }
}

void ReplyShardNode(CommandContext& ctx, const ClusterState& state, const ClusterNode& node) {
  const bool myself = node.has(cluster::kNodeMyself);
  // Myself's offset is the replication stream's (a replica's is what it has applied).
  const int64_t offset = myself ? ctx.replication().announced_offset() : node.repl_offset;
  size_t fields = 0;
  const size_t mark = ctx.reply.DeferLength();
  auto str = [&](std::string_view k, std::string_view v) {
    ctx.reply.Bulk(k);
    ctx.reply.Bulk(v);
    ++fields;
  };
  auto num = [&](std::string_view k, int64_t v) {
    ctx.reply.Bulk(k);
    ctx.reply.Integer(v);
    ++fields;
  };
  str("id", node.name);
  if (node.tcp_port != 0) num("port", node.tcp_port);
  if (node.tls_port != 0) num("tls-port", node.tls_port);
  str("ip", node.ip);
  str("endpoint", state.preferred_endpoint() == cluster::EndpointType::kUnknown
                      ? std::string()
                      : state.PreferredEndpoint(node));
  if (!node.hostname.empty()) str("hostname", node.hostname);
  str("role", node.is_replica() ? "replica" : "master");
  num("replication-offset", offset);
  str("health", node.failed() ? "fail" : (node.is_replica() && offset == 0) ? "loading" : "online");
  ctx.reply.SetDeferredMap(mark, fields);
}

void ClusterShardsCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  // Shards by id, in the order their first node appears.
  std::vector<std::pair<std::string, std::vector<const ClusterNode*>>> shards;
  for (const auto& [name, node] : state->nodes()) {
    if (node->in_handshake()) continue;
    auto it = std::find_if(shards.begin(), shards.end(),
                           [&](const auto& s) { return s.first == node->shard_id; });
    if (it == shards.end()) {
      shards.emplace_back(node->shard_id, std::vector<const ClusterNode*>{});
      it = shards.end() - 1;
    }
    it->second.push_back(node.get());
  }
  ctx.reply.Array(shards.size());
  for (const auto& [id, members] : shards) {
    const ClusterNode* master = members.front();
    for (const ClusterNode* n : members) {
      if (n->is_master()) master = n;
    }
    if (master->is_replica() && master->master != nullptr) master = master->master;
    ctx.reply.Map(2);
    ctx.reply.Bulk("slots");
    auto ranges = state->SlotRanges(*master);
    ctx.reply.Array(ranges.size() * 2);
    for (const auto& [first, last] : ranges) {
      ctx.reply.Integer(first);
      ctx.reply.Integer(last);
    }
    ctx.reply.Bulk("nodes");
    ctx.reply.Array(members.size());
    for (const ClusterNode* n : members) ReplyShardNode(ctx, *state, *n);
  }
}

// ADDSLOTS/DELSLOTS and their RANGE forms: every slot is checked before any changes.
void ChangeSlots(CommandContext& ctx, bool del, bool ranges) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  if (ranges && ctx.argc() % 2 == 1) {
    ctx.reply.Error(fmt::format("ERR wrong number of arguments for '{}' command",
                                ctx.spec != nullptr ? ctx.spec->name : "cluster"));
    return;
  }
  std::vector<uint8_t> seen(cluster::kSlotCount, 0);
  // Whether slots first..last may change hands; else replies the error.
  auto check = [&](int first, int last) {
    for (int s = first; s <= last; ++s) {
      if (del && state->OwnerOf(s) == nullptr) {
        ctx.reply.Error(fmt::format("ERR Slot {} is already unassigned", s));
        return false;
      }
      if (!del && state->OwnerOf(s) != nullptr) {
        ctx.reply.Error(fmt::format("ERR Slot {} is already busy", s));
        return false;
      }
      if (seen[s]++ == 1) {
        ctx.reply.Error(fmt::format("ERR Slot {} specified multiple times", s));
        return false;
      }
    }
    return true;
  };
  // Redis's order of errors: the RANGE forms check each range against the table as soon as it
  // parses; the plain forms parse every slot before checking any.
  std::vector<int> single;
  ArgParser args(ctx, 2);
  while (args.HasNext()) {
    const int first = NextSlot(args);
    if (!ranges) {
      single.push_back(first);
      continue;
    }
    const int last = NextSlot(args);
    if (args.ok() && first > last) {
      args.Fail(
          fmt::format("ERR start slot number {} is greater than end slot number {}", first, last));
    }
    if (!args.Check() || !check(first, last)) return;
  }
  if (!args.Check()) return;
  for (int s : single) {
    if (!check(s, s)) return;
  }
  for (int s = 0; s < cluster::kSlotCount; ++s) {
    if (!seen[s]) continue;
    // Owning the slot (or giving it up) ends an import of it.
    state->set_importing_from(s, nullptr);
    if (del) {
      state->DelSlot(s);
    } else {
      state->AddSlot(state->myself(), s);
    }
  }
  state->Todo(cluster::kTodoUpdateState | cluster::kTodoSaveConfig);
  ctx.reply.Ok();
}

void ClusterAddSlotsCommand(CommandContext& ctx) { ChangeSlots(ctx, false, false); }
void ClusterDelSlotsCommand(CommandContext& ctx) { ChangeSlots(ctx, true, false); }
void ClusterAddSlotsRangeCommand(CommandContext& ctx) { ChangeSlots(ctx, false, true); }
void ClusterDelSlotsRangeCommand(CommandContext& ctx) { ChangeSlots(ctx, true, true); }

void ClusterFlushSlotsCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  if (ctx.database(0).size() != 0) {
    ctx.reply.Error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
    return;
  }
  state->DelNodeSlots(state->myself());
  state->Todo(cluster::kTodoUpdateState | cluster::kTodoSaveConfig);
  ctx.reply.Ok();
}

// SETSLOT <slot> NODE <id>: the slot's owner changes (the end of a migration, or a fix).
bool SetSlotNode(CommandContext& ctx, ClusterState& state, int slot, ClusterNode* n) {
  ClusterNode* me = state.myself();
  if (state.OwnerOf(slot) == me && n != me && ctx.database(0).CountKeysInSlot(slot) != 0) {
    ctx.reply.Error(fmt::format(
        "ERR Can't assign hashslot {} to a different node while I still hold keys for this "
        "hash slot.",
        slot));
    return false;
  }
  // A migration with no keys left ends when the slot is handed over.
  if (state.migrating_to(slot) != nullptr && ctx.database(0).CountKeysInSlot(slot) == 0) {
    state.set_migrating_to(slot, nullptr);
  }
  const bool was_mine = state.OwnerOf(slot) == me;
  state.DelSlot(slot);
  state.AddSlot(n, slot);
  // A master left without slots follows the new owner, if replica migration is allowed.
  if (was_mine && n != me && me->num_slots == 0 && ctx.cfg().cluster_allow_replica_migration) {
    state.SetMyMaster(n);
    ctx.cluster_bus()->host().ClusterSyncReplication();
    state.Todo(cluster::kTodoSaveConfig | cluster::kTodoUpdateState | cluster::kTodoFsyncConfig);
  }
  // Taking over an imported slot: claim it with a new epoch so the change wins in gossip.
  if (n == me && state.importing_from(slot) != nullptr) {
    state.BumpEpochWithoutConsensus();
    state.set_importing_from(slot, nullptr);
  }
  return true;
}

void ClusterSetSlotCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  if (state->myself()->is_replica()) {
    ctx.reply.Error("ERR Please use SETSLOT only with masters.");
    return;
  }
  ArgParser args(ctx, 2);
  const int slot = NextSlot(args);
  if (!args.Check()) return;
  // The action, then a node for all but STABLE.
  enum Action { kMigrating, kImporting, kStable, kNode };
  const int action = args.OneOf({"MIGRATING", "IMPORTING", "STABLE", "NODE"});
  if (action < 0 || args.remaining() != (action == kStable ? 0u : 1u)) {
    args.Fail("ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
  }
  if (!args.Check()) return;
  ClusterNode* me = state->myself();
  if (action == kMigrating) {
    if (state->OwnerOf(slot) != me) {
      ctx.reply.Error(fmt::format("ERR I'm not the owner of hash slot {}", slot));
      return;
    }
    ClusterNode* n = MasterOrReply(ctx, *state, ctx.arg(4), "ERR I don't know about node {}");
    if (n == nullptr) return;
    state->set_migrating_to(slot, n);
  } else if (action == kImporting) {
    if (state->OwnerOf(slot) == me) {
      ctx.reply.Error(fmt::format("ERR I'm already the owner of hash slot {}", slot));
      return;
    }
    ClusterNode* n = MasterOrReply(ctx, *state, ctx.arg(4), "ERR I don't know about node {}");
    if (n == nullptr) return;
    state->set_importing_from(slot, n);
  } else if (action == kStable) {
    state->set_importing_from(slot, nullptr);
    state->set_migrating_to(slot, nullptr);
  } else {
    ClusterNode* n = MasterOrReply(ctx, *state, ctx.arg(4), "ERR Unknown node {}");
    if (n == nullptr || !SetSlotNode(ctx, *state, slot, n)) return;
  }
  state->Todo(cluster::kTodoSaveConfig | cluster::kTodoUpdateState);
  ctx.reply.Ok();
}

void ClusterBumpEpochCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  bool bumped = state->BumpEpochWithoutConsensus();
  ctx.reply.SimpleString(
      fmt::format("{} {}", bumped ? "BUMPED" : "STILL", state->myself()->config_epoch));
}

void ClusterSaveConfigCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  std::string error = ctx.cluster_bus()->host().SaveClusterConfig(true);
  if (error.empty()) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error("ERR error saving the cluster node config: " + error);
  }
}

void ClusterKeySlotCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  ctx.reply.Integer(cluster::KeySlot(ctx.arg(2)));
}

void ClusterCountKeysInSlotCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  ArgParser args(ctx, 2);
  const int64_t slot = args.IntBetween(0, cluster::kSlotCount - 1, "ERR Invalid slot");
  if (!args.Check()) return;
  ctx.reply.Integer(static_cast<int64_t>(ctx.database(0).CountKeysInSlot(static_cast<int>(slot))));
}

void ClusterGetKeysInSlotCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  ArgParser args(ctx, 2);
  int64_t slot = args.Int();
  int64_t max = args.Int();
  // Both are read before either is range-checked, as in Redis.
  if (args.ok() && (slot < 0 || slot >= cluster::kSlotCount || max < 0)) {
    args.Fail("ERR Invalid slot or number of keys");
  }
  if (!args.Check()) return;
  std::vector<std::string> keys =
      ctx.database(0).KeysInSlot(static_cast<int>(slot), static_cast<size_t>(max));
  ctx.reply.Array(keys.size());
  for (const std::string& k : keys) ctx.reply.Bulk(k);
}

void ClusterForgetCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  const int64_t now_s = NowMs() / 1000;
  ClusterNode* n = state->Lookup(ctx.arg(2));
  if (n == nullptr) {
    // Forgotten already (perhaps through another node's gossip): nothing to do.
    if (state->BlacklistContains(ctx.arg(2), now_s)) {
      ctx.reply.Ok();
    } else {
      ctx.reply.Error(fmt::format("ERR Unknown node {}", ctx.arg(2)));
    }
    return;
  }
  if (n == state->myself()) {
    ctx.reply.Error("ERR I tried hard but I can't forget myself...");
    return;
  }
  if (state->myself()->is_replica() && state->myself()->master == n) {
    ctx.reply.Error("ERR Can't forget my master!");
    return;
  }
  state->BlacklistAdd(n->name, now_s);
  ctx.cluster_bus()->Forget(n->name);
  state->DeleteNode(n);
  state->Todo(cluster::kTodoUpdateState | cluster::kTodoSaveConfig);
  ctx.reply.Ok();
}

void ClusterReplicateCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  ClusterNode* n = NodeOrReply(ctx, *state, ctx.arg(2));
  if (n == nullptr) return;
  ClusterNode* me = state->myself();
  if (n == me) {
    ctx.reply.Error("ERR Can't replicate myself");
    return;
  }
  if (n->is_replica()) {
    ctx.reply.Error("ERR I can only replicate a master, not a replica.");
    return;
  }
  if (me->is_master() && (me->num_slots != 0 || ctx.database(0).size() != 0)) {
    ctx.reply.Error("ERR To set a master the node must be empty and without assigned slots.");
    return;
  }
  state->SetMyMaster(n);
  ctx.cluster_bus()->host().ClusterSyncReplication();
  state->Todo(cluster::kTodoUpdateState | cluster::kTodoSaveConfig);
  ctx.reply.Ok();
}

void ClusterReplicasCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  ClusterNode* n = NodeOrReply(ctx, *state, ctx.arg(2));
  if (n == nullptr) return;
  if (n->is_replica()) {
    ctx.reply.Error("ERR The specified node is not a master");
    return;
  }
  ctx.reply.Array(n->replicas.size());
  for (const ClusterNode* r : n->replicas) {
    ctx.reply.Bulk(cluster::NodeDescription(*state, *r, false, TlsView(ctx)));
  }
}

void ClusterCountFailureReportsCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  if (ClusterNode* n = NodeOrReply(ctx, *state, ctx.arg(2))) {
    ctx.reply.Integer(state->FailureReportCount(*n));
  }
}

void ClusterFailoverCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  if (TooManyArgs(ctx, 3)) return;
  ArgParser args(ctx, 2);
  const int option = args.HasNext() ? args.Keyword({"FORCE", "TAKEOVER"}) : -1;
  if (!args.Check()) return;
  const bool force = option >= 0, takeover = option == 1;
  const ClusterNode* me = state->myself();
  if (me->is_master()) {
    ctx.reply.Error("ERR You should send CLUSTER FAILOVER to a replica");
    return;
  }
  if (me->master == nullptr) {
    ctx.reply.Error("ERR I'm a replica but my master is unknown to me");
    return;
  }
  if (!force && (me->master->failed() || me->master->link == nullptr)) {
    ctx.reply.Error("ERR Master is down or failed, please use CLUSTER FAILOVER FORCE");
    return;
  }
  // A takeover needs no one's agreement: a new epoch, and the master's slots are ours.
  // Otherwise the bus runs a manual failover (MFSTART, then an election the masters vote in).
  if (takeover) {
    spdlog::info("Taking over the master (user request).");
    state->BumpEpochWithoutConsensus();
    state->ReplaceMyMaster();
    ctx.cluster_bus()->host().ClusterSyncReplication();
    ctx.cluster_bus()->BroadcastPong();
  } else {
    ctx.cluster_bus()->StartManualFailover(force);
  }
  ctx.reply.Ok();
}

void ClusterSetConfigEpochCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  ArgParser args(ctx, 2);
  int64_t epoch = args.Int();
  if (args.ok() && epoch < 0) {
    args.Fail(fmt::format("ERR Invalid config epoch specified: {}", epoch));
  }
  if (!args.Check()) return;
  if (state->node_count() > 1) {
    ctx.reply.Error(
        "ERR The user can assign a config epoch only when the node does not know any other "
        "node.");
  } else if (state->myself()->config_epoch != 0) {
    ctx.reply.Error("ERR Node config epoch is already non-zero");
  } else {
    state->myself()->config_epoch = static_cast<uint64_t>(epoch);
    if (state->current_epoch() < static_cast<uint64_t>(epoch)) {
      state->set_current_epoch(static_cast<uint64_t>(epoch));
    }
    state->Todo(cluster::kTodoUpdateState | cluster::kTodoSaveConfig);
    ctx.reply.Ok();
  }
}

void ClusterResetCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  if (TooManyArgs(ctx, 3)) return;
  ArgParser args(ctx, 2);
  const bool hard = args.HasNext() && args.Keyword({"SOFT", "HARD"}) == 1;
  if (!args.Check()) return;
  if (state->myself()->is_master() && ctx.db.size() != 0) {
    ctx.reply.Error("ERR CLUSTER RESET can't be called with master nodes containing keys");
    return;
  }
  const bool was_replica = state->myself()->is_replica();
  ctx.cluster_bus()->Reset();
  state->Reset(hard);
  ctx.cluster_bus()->host().ClusterSyncReplication();
  // A replica's data was its master's: a reset node starts empty, as in Redis.
  if (was_replica) {
    for (int i = 0; i < ctx.db_count(); ++i) {
      ctx.watched_keys().TouchAllInDb(i);
      ctx.database(i).Clear();
      ctx.blocking().SignalFlushedDb(i);
    }
  }
  ctx.reply.Ok();
}

void ClusterMeetCommand(CommandContext& ctx) {
  ClusterState* state = ClusterOrReply(ctx);
  if (state == nullptr) return;
  if (TooManyArgs(ctx, 5)) return;
  ArgParser args(ctx, 3);
  const int64_t port = args.Int(fmt::format("ERR Invalid base port specified: {}", args.Peek()));
  const int64_t cport =
      args.HasNext() ? args.Int(fmt::format("ERR Invalid bus port specified: {}", args.Peek()))
                     : port + cluster::kDefaultBusPortOffset;
  if (!args.Check()) return;
  auto result = state->StartHandshake(ctx.arg(2), static_cast<int>(port), static_cast<int>(cport),
                                      ctx.cfg().tls_cluster, NowMs());
  if (result == ClusterState::HandshakeResult::kInvalid || port > 65535 || cport > 65535) {
    ctx.reply.Error(
        fmt::format("ERR Invalid node address specified: {}:{}", ctx.arg(2), ctx.arg(3)));
    return;
  }
  ctx.reply.Ok();
}

void ClusterLinksCommand(CommandContext& ctx) {
  if (ClusterOrReply(ctx) == nullptr) return;
  const auto links = ctx.cluster_bus()->Links();
  ctx.reply.Array(links.size());
  for (const cluster::ClusterBus::LinkInfo& link : links) {
    ctx.reply.Map(6);
    ctx.reply.Bulk("direction");
    ctx.reply.Bulk(link.inbound ? "from" : "to");
    ctx.reply.Bulk("node");
    ctx.reply.Bulk(link.node);
    ctx.reply.Bulk("create-time");
    ctx.reply.Integer(link.create_time);
    ctx.reply.Bulk("events");
    ctx.reply.Bulk(link.events == 3 ? "rw" : "r");
    ctx.reply.Bulk("send-buffer-allocated");
    ctx.reply.Integer(static_cast<int64_t>(link.send_buffer_allocated));
    ctx.reply.Bulk("send-buffer-used");
    ctx.reply.Integer(static_cast<int64_t>(link.send_buffer_used));
  }
}

void ClusterContainerCommand(CommandContext& ctx) {
  ctx.reply.Error(fmt::format("ERR unknown subcommand '{}'. Try CLUSTER HELP.",
                              ctx.argc() > 1 ? ctx.arg(1) : ""));
}

// COMMAND DOCS as Redis 7.2 declares CLUSTER's arguments where the syntax mini-language
// guesses otherwise (slots, ports and epochs are integers; KEYSLOT's key is a plain string;
// group names; SETSLOT's node ids are named after their tokens).
void MatchRedisArgDocs(std::vector<CommandArg>& args) {
  for (CommandArg& a : args) {
    if (a.name == "slot" || a.name == "start-slot" || a.name == "end-slot" ||
        a.name == "config-epoch" || a.name == "cluster-bus-port") {
      a.type = "integer";
    } else if (a.name == "key") {
      a.type = "string";
    } else if (a.name == "start-slot-end-slot") {
      a.name = "range";
    } else if (a.name == "force-takeover") {
      a.name = "options";
    } else if (a.name == "hard-soft") {
      a.name = "reset-type";
    } else if (a.type == "oneof" && a.name.starts_with("node-id")) {
      a.name = "subcommand";
      for (CommandArg& member : a.subargs) {
        if (member.name != "node-id") continue;
        member.name = ToLower(member.token);
        member.display_text = "node-id";
      }
    }
    MatchRedisArgDocs(a.subargs);
  }
}

}  // namespace

void RegisterClusterCommands(CommandTable& table) {
  constexpr const char* kGroup = "cluster";
  constexpr uint64_t kAdmin = kCmdAdmin | kCmdStale | kCmdNoAsyncLoading;
  table.Add({"cluster", -2, 0, Keys(), 0, kGroup, "3.0.0",
             "A container for Redis Cluster commands.", "", ClusterContainerCommand,
             "Depends on subcommand."});
  auto sub = [&](const char* name, int arity, uint32_t flags, const char* since,
                 const char* summary, const char* syntax, CommandHandler handler,
                 const char* complexity = "O(1)") {
    CommandSpec* spec = table.AddSubcommand(
        "cluster",
        {name, arity, flags, Keys(), 0, kGroup, since, summary, syntax, handler, complexity});
    MatchRedisArgDocs(spec->args);
  };
  sub("addslots", -3, kAdmin, "3.0.0", "Assigns new hash slots to a node.", "slot [slot ...]",
      ClusterAddSlotsCommand, "O(N) where N is the total number of hash slot arguments");
  sub("addslotsrange", -4, kAdmin, "7.0.0", "Assigns new hash slot ranges to a node.",
      "start-slot end-slot [start-slot end-slot ...]", ClusterAddSlotsRangeCommand,
      "O(N) where N is the total number of the slots between the start slot and end slot "
      "arguments.");
  sub("bumpepoch", 2, kAdmin, "3.0.0", "Advances the cluster config epoch.", "",
      ClusterBumpEpochCommand);
  sub("count-failure-reports", 3, kCmdAdmin | kCmdStale, "3.0.0",
      "Returns the number of active failure reports active for a node.", "node-id",
      ClusterCountFailureReportsCommand, "O(N) where N is the number of failure reports");
  sub("countkeysinslot", 3, kCmdStale, "3.0.0", "Returns the number of keys in a hash slot.",
      "slot", ClusterCountKeysInSlotCommand);
  sub("delslots", -3, kAdmin, "3.0.0", "Sets hash slots as unbound for a node.", "slot [slot ...]",
      ClusterDelSlotsCommand, "O(N) where N is the total number of hash slot arguments");
  sub("delslotsrange", -4, kAdmin, "7.0.0", "Sets hash slot ranges as unbound for a node.",
      "start-slot end-slot [start-slot end-slot ...]", ClusterDelSlotsRangeCommand,
      "O(N) where N is the total number of the slots between the start slot and end slot "
      "arguments.");
  sub("failover", -2, kAdmin, "3.0.0",
      "Forces a replica to perform a manual failover of its master.", "[FORCE | TAKEOVER]",
      ClusterFailoverCommand);
  sub("flushslots", 2, kAdmin, "3.0.0", "Deletes all slots information from a node.", "",
      ClusterFlushSlotsCommand);
  sub("forget", 3, kAdmin, "3.0.0", "Removes a node from the nodes table.", "node-id",
      ClusterForgetCommand);
  sub("getkeysinslot", 4, kCmdStale, "3.0.0", "Returns the key names in a hash slot.", "slot count",
      ClusterGetKeysInSlotCommand, "O(N) where N is the number of requested keys");
  sub("help", 2, kCmdLoading | kCmdStale, "5.0.0",
      "Returns helpful text about the different subcommands.", "", ClusterHelpCommand);
  sub("info", 2, kCmdStale, "3.0.0", "Returns information about the state of a node.", "",
      ClusterInfoCommand);
  sub("keyslot", 3, kCmdStale, "3.0.0", "Returns the hash slot for a key.", "key",
      ClusterKeySlotCommand, "O(N) where N is the number of bytes in the key");
  sub("links", 2, kCmdStale, "7.0.0", "Returns a list of all TCP links to and from peer nodes.", "",
      ClusterLinksCommand, "O(N) where N is the total number of Cluster nodes");
  sub("meet", -4, kAdmin, "3.0.0", "Forces a node to handshake with another node.",
      "ip port [cluster-bus-port]", ClusterMeetCommand);
  sub("myid", 2, kCmdStale, "3.0.0", "Returns the ID of a node.", "", ClusterMyIdCommand);
  sub("myshardid", 2, kCmdStale, "7.2.0", "Returns the shard ID of a node.", "",
      ClusterMyShardIdCommand);
  sub("nodes", 2, kCmdStale, "3.0.0", "Returns the cluster configuration for a node.", "",
      ClusterNodesCommand, "O(N) where N is the total number of Cluster nodes");
  sub("replicas", 3, kCmdAdmin | kCmdStale, "5.0.0", "Lists the replica nodes of a master node.",
      "node-id", ClusterReplicasCommand, "O(N) where N is the number of replicas.");
  sub("replicate", 3, kAdmin, "3.0.0", "Configure a node as replica of a master node.", "node-id",
      ClusterReplicateCommand);
  sub("reset", -2, kCmdAdmin | kCmdStale | kCmdNoScript, "3.0.0", "Resets a node.", "[HARD | SOFT]",
      ClusterResetCommand,
      "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side "
      "effect.");
  sub("saveconfig", 2, kAdmin, "3.0.0", "Forces a node to save the cluster configuration to disk.",
      "", ClusterSaveConfigCommand);
  sub("set-config-epoch", 3, kAdmin, "3.0.0", "Sets the configuration epoch for a new node.",
      "config-epoch", ClusterSetConfigEpochCommand);
  sub("setslot", -4, kAdmin, "3.0.0", "Binds a hash slot to a node.",
      "slot (IMPORTING node-id | MIGRATING node-id | NODE node-id | STABLE)",
      ClusterSetSlotCommand);
  sub("shards", 2, kCmdLoading | kCmdStale, "7.0.0",
      "Returns the mapping of cluster slots to shards.", "", ClusterShardsCommand,
      "O(N) where N is the total number of cluster nodes");
  sub("slaves", 3, kCmdAdmin | kCmdStale, "3.0.0", "Lists the replica nodes of a master node.",
      "node-id", ClusterReplicasCommand, "O(N) where N is the number of replicas.");
  sub("slots", 2, kCmdLoading | kCmdStale, "3.0.0",
      "Returns the mapping of cluster slots to nodes.", "", ClusterSlotsCommand,
      "O(N) where N is the total number of Cluster nodes");
}

}  // namespace vireo

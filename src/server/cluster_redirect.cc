// The server's side of cluster redirections: builds the request the pure decision
// (src/cluster/redirect.h) reads from a client's command, its MULTI queue or a script's call,
// and redirects clients blocked on keys of slots that moved.
#include <string>
#include <vector>

#include "cluster/migrate_conn.h"
#include "cluster/redirect.h"
#include "cluster/routing.h"
#include "scripting/lua_engine.h"
#include "server/client.h"
#include "server/server.h"
#include "util/clock.h"

namespace vireo {
namespace {

// SPUBLISH, SSUBSCRIBE, SUNSUBSCRIBE: the pub/sub commands whose channels route like keys.
bool IsPubsubShard(const CommandSpec& spec) { return spec.has(kCmdPubsub) && spec.HasKeys(); }

// Only needed while the cluster is down.
cluster::RedirectOptions ReadRedirectOptions(const ServerConfig& config) {
  cluster::RedirectOptions options;
  options.allow_reads_when_down = config.cluster_allow_reads_when_down;
  options.allow_pubsubshard_when_down = config.cluster_allow_pubsubshard_when_down;
  return options;
}

// The flags every request takes from its command and the client that sent it.
void FillFromCommand(cluster::RedirectRequest& request, const CommandSpec& spec,
                     const Client& client) {
  request.command_is_write = spec.has(kCmdWrite);
  request.pubsub_shard = IsPubsubShard(spec);
  request.migrate = spec.has(kCmdMigratesKeys);
  request.asking = client.has(kClientAsking) || spec.has(kCmdAsking);
  request.readonly = client.has(kClientReadonly);
}

cluster::RedirectDecision Decide(const cluster::RedirectRequest& request,
                                 const cluster::SlotRouting& routing, Database& db0,
                                 const Config& config) {
  // Whether a key is here, without touching it or deleting it if expired.
  auto exists = [&db0](std::string_view key) {
    DbEntry* entry = db0.Peek(key);
    return entry != nullptr && !db0.IsExpired(entry);
  };
  const cluster::RedirectOptions options =
      routing.ClusterUp() ? cluster::RedirectOptions{} : ReadRedirectOptions(config.values());
  return cluster::DecideRedirect(request, routing, options, exists);
}

// The fast path: the one slot all keys of the request hash to (kNoKeys when none has keys)
// when every command's keys sit at fixed positions, else kSlowPath. EXEC looks at its queue.
int FixedRequestSlot(const Client& client, const CommandSpec& spec, bool exec,
                     std::span<const std::string_view> argv) {
  if (!exec) return cluster::FixedKeysSlot(spec, argv);
  int slot = cluster::kNoKeys;
  for (const QueuedCommand& q : client.multi_queue) {
    const int queued = cluster::FixedKeysSlot(*q.spec, q.argv);
    if (queued == cluster::kNoKeys) continue;
    if (queued == cluster::kSlowPath || (slot != cluster::kNoKeys && queued != slot)) {
      return cluster::kSlowPath;
    }
    slot = queued;
  }
  return slot;
}

}  // namespace

// A script that declares its flags (shebang) replaces EVAL's: without no-writes it counts as a
// write, so a READONLY replica redirects it to the master instead of running it (Redis's
// getCommandFlags). Scripts without a shebang keep EVAL's flags.
bool Server::WritesForRedirect(const CommandSpec& spec, std::span<const std::string_view> argv) {
  if (spec.has(kCmdWrite)) return true;
  if (!spec.has(kCmdRunsScript)) return false;
  std::optional<uint32_t> flags = ScriptDeclaredFlags(spec, argv);
  return flags && (*flags & kScriptNoWrites) == 0;
}

std::string Server::ClusterRedirectError(const Client& client, const CommandSpec& spec,
                                         std::span<const std::string_view> argv) {
  // Keys of a slot served here, stable: no other rule can apply. This is nearly every command
  // of a healthy cluster, and it costs a key hash and one routing call, no allocation.
  const bool exec = spec.has(kCmdRunsQueued);
  if (!exec || client.has(kClientMulti)) {
    const int slot = FixedRequestSlot(client, spec, exec, argv);
    if (slot >= 0 && slot_routing_->ServesStableSlot(slot)) return {};
  }
  cluster::RedirectRequest request;
  cluster::RoutedCommand single{&spec, argv};
  std::vector<cluster::RoutedCommand> queued;
  std::vector<std::vector<std::string_view>> queued_argv;
  if (exec) {
    // EXEC without MULTI just fails by itself. Otherwise every queued key counts.
    if (!client.has(kClientMulti)) return {};
    queued_argv.reserve(client.multi_queue.size());
    for (const QueuedCommand& q : client.multi_queue) {
      queued_argv.emplace_back(q.argv.begin(), q.argv.end());
      queued.push_back({q.spec, queued_argv.back()});
      if (WritesForRedirect(*q.spec, queued_argv.back())) request.any_write = true;
    }
    request.commands = queued;
  } else {
    request.commands = {&single, 1};
    request.any_write = WritesForRedirect(spec, argv);
  }
  FillFromCommand(request, spec, client);
  const cluster::RedirectDecision decision = Decide(request, *slot_routing_, *dbs_[0], config_);
  if (decision.kind == cluster::Redirect::kNone) return {};
  return cluster::RedirectError(decision);
}

std::string Server::ScriptClusterError(ScriptRun& run, const CommandSpec& spec,
                                       std::span<const std::string_view> argv) {
  // Our master's scripts apply whatever the slot.
  if (slot_routing_ == nullptr || run.from_master) return {};
  cluster::RedirectDecision decision;
  if (const int slot = cluster::FixedKeysSlot(spec, argv);
      slot >= 0 && slot_routing_->ServesStableSlot(slot)) {
    decision.slot = slot;  // served here, as the full rules would say
  } else {
    cluster::RedirectRequest request;
    cluster::RoutedCommand cmd{&spec, argv};
    request.commands = {&cmd, 1};
    // The script runs with its caller's ASKING / READONLY.
    FillFromCommand(request, spec, *script_caller_);
    request.any_write = spec.has(kCmdWrite);
    decision = Decide(request, *slot_routing_, *dbs_[0], config_);
  }
  if (decision.kind != cluster::Redirect::kNone) {
    return std::string(cluster::ScriptRedirectError(decision.kind));
  }
  // Served here: undeclared keys must still stay in one slot unless the script says
  // allow-cross-slot-keys.
  if (decision.slot != -1 && !run.allow_cross_slot) {
    if (run.cluster_slot == -1) {
      run.cluster_slot = decision.slot;
    } else if (run.cluster_slot != decision.slot) {
      return std::string(cluster::kScriptCrossSlotError);
    }
  }
  return {};
}

void Server::RedirectBlockedClientsOfSlots() {
  if (slot_routing_ == nullptr || blocking_.blocked_clients() == 0) return;
  std::vector<std::pair<uint64_t, std::string>> redirected;
  for (const auto& [id, client] : clients_) {
    if (!client->has(kClientBlocked) || client->has(kClientPostponed)) continue;
    const BlockingEngine::Waiter* waiter = blocking_.Find(id);
    // WAIT / WAITAOF wait on no key.
    if (waiter == nullptr || waiter->keys.empty()) continue;
    const CommandSpec* spec = client->blocked.spec;
    const bool readonly_read =
        client->has(kClientReadonly) && spec != nullptr && !spec->has(kCmdWrite);
    // A blocking command's keys are all in one slot (it was routed): the first tells.
    const cluster::RedirectDecision decision =
        cluster::DecideBlockedRedirect(waiter->keys.front(), readonly_read, *slot_routing_);
    if (decision.kind != cluster::Redirect::kNone) {
      redirected.emplace_back(id, cluster::RedirectError(decision));
    }
  }
  for (const auto& [id, error] : redirected) {
    if (Client* client = FindClient(id)) UnblockClient(*client, UnblockReason::kError, error);
  }
}

size_t Server::migrate_cached_sockets() const {
  return migrate_connections_ == nullptr ? 0 : migrate_connections_->size();
}

cluster::MigrateConnections& Server::migrate_connections() {
  if (migrate_connections_ == nullptr) {
    migrate_connections_ = std::make_unique<cluster::MigrateConnections>();
  }
  return *migrate_connections_;
}

}  // namespace vireo

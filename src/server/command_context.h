// What a command handler sees: the client, its database, the reply builder, the arguments, and
// the server's services it may use, each one component with its own header. The server itself
// stays out of sight: command handlers never include server/server.h (the `layering` test
// checks it), so a handler's dependencies are the services it names.
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"
#include "core/propagator.h"
#include "db/database.h"
#include "protocol/reply_builder.h"

namespace vireo {

class Server;
class Client;
struct CommandSpec;
class CommandTable;
class Config;
struct ServerConfig;
struct ServerStats;
struct DebugSettings;
class ProcessInfo;
class ClientRegistry;
class BlockingService;
class ClientPause;
class MemoryView;
class EventLoop;
class ShutdownControl;
class ClusterServices;
class Tracking;
class WatchedKeys;
class Monitors;
class PubsubEngine;
class ClientEviction;
class Slowlog;
enum class CommandlogType;
class CommandClock;
class CommandStatsTable;
class LatencyMonitor;
class AclRegistry;
class AclService;
class ServerReports;
class Scripting;
class Aof;
class PersistenceHost;
class Replication;
class Propagator;
class ChildProcesses;
class TlsContext;
namespace cluster {
class ClusterState;
class ClusterBus;
}  // namespace cluster

class CommandContext {
 public:
  CommandContext(Server& server, Client& client, Database& db, ReplyBuilder& reply,
                 std::span<const std::string_view> argv, const CommandSpec* spec)
      : client(client), db(db), reply(reply), argv(argv), spec(spec), server_(server) {}

  size_t argc() const { return argv.size(); }
  std::string_view arg(size_t i) const { return argv[i]; }

  // True while running inside EXEC or a script: blocking commands must not block there.
  bool in_exec = false;
  // Blocking commands call this to decide: false inside MULTI/EXEC and scripts, where they
  // behave as their non-blocking forms.
  bool may_block() const { return !in_exec; }

  // Replication/AOF: by default a write command that changed data (dirty > 0) is logged as
  // received. Commands whose effect is not deterministic from their arguments (SPOP, EXPIRE's
  // relative times, XADD *, INCRBYFLOAT, blocking pops...) log what they did instead: each
  // PropagateInstead call adds one command to the replacement, in order. PropagateNothing logs
  // nothing for this call.
  void PropagateInstead(std::vector<std::string> command, uint8_t targets = kEffectToAll) {
    effects.Replace(std::move(command), targets);
  }
  void PropagateNothing() { effects.overridden = true; }
  CallEffects effects;

  // The services a handler may need beyond its client and database, defined in
  // src/server/command_context.cc. Each returns a component of the server; the header named
  // beside it declares what it offers.
  const ServerConfig& cfg() const;      // core/config.h: the current values
  Config& config() const;               // core/config.h: CONFIG GET/SET/REWRITE
  Database& database(int index) const;  // db/database.h: any database by number
  int db_count() const;
  std::mt19937_64& rng() const;                    // random picks (RANDOMKEY, SPOP, ...)
  ServerStats& stats() const;                      // server/server_stats.h
  ProcessInfo& process() const;                    // server/process_info.h: dirty, run id, hz, ...
  ClientRegistry& clients() const;                 // server/client_registry.h
  BlockingService& blocking() const;               // server/blocking_service.h
  ClientPause& client_pause() const;               // server/client_pause.h
  MemoryView& memory() const;                      // server/memory_view.h
  EventLoop& loop() const;                         // server/event_loop.h
  ShutdownControl& shutdown() const;               // server/shutdown.h: SHUTDOWN, SHUTDOWN ABORT
  ClusterServices& cluster_services() const;       // server/cluster_services.h
  Tracking& tracking() const;                      // server/tracking.h
  WatchedKeys& watched_keys() const;               // server/watched_keys.h
  Monitors& monitors() const;                      // server/monitors.h
  PubsubEngine& pubsub() const;                    // server/pubsub.h
  ClientEviction& client_eviction() const;         // server/client_eviction.h
  Slowlog& slowlog() const;                        // server/slowlog.h
  Slowlog& commandlog(CommandlogType type) const;  // COMMANDLOG's logs, server/slowlog.h
  CommandClock& command_clock() const;             // server/command_clock.h
  CommandStatsTable& command_stats() const;        // server/command_stats.h
  LatencyMonitor& latency() const;                 // core/latency_monitor.h
  DebugSettings& debug_settings() const;           // server/debug_settings.h
  AclRegistry& acl() const;                        // security/acl.h: users and the ACL log
  AclService acl_service() const;                  // server/acl_server.h
  ServerReports reports() const;                   // server/info.h: INFO, CLIENT LIST lines, memory
  Scripting& scripting() const;                    // scripting/scripting.h
  PersistenceHost& persistence() const;            // persistence/snapshot.h's operations take it
  Aof& aof() const;                                // persistence/aof.h
  Replication& replication() const;                // replication/replication.h
  Propagator& propagator() const;                  // core/propagator.h
  ChildProcesses& children() const;                // core/child_processes.h: forked children
  TlsContext& tls() const;                         // security/tls.h
  cluster::ClusterState* cluster() const;    // cluster/cluster_state.h; nullptr unless cluster mode
  cluster::ClusterBus* cluster_bus() const;  // cluster/bus.h; nullptr unless cluster mode
  const CommandTable& commands() const;      // core/command_table.h
  // argv[0]'s command through the server's lookup cache, nullptr when unknown.
  const CommandSpec* LookupCommand(std::string_view name) const;
  // Whether a dataset is loading (the -LOADING state of a replica's full sync).
  bool loading_dataset() const;
  // Whether the reply being built has taken the client past its client-output-buffer-limit
  // hard limit (it is then closed once the command ends, its output dropped): a reply that
  // grows as long as the client asks stops there, as Redis's stops when the client is killed.
  // Never for a client without a connection (a script's), which has no limit.
  bool reply_over_output_limit() const;
  // EXEC: runs one queued command of `client` as part of the transaction.
  void CallQueued(Client& client, const CommandSpec& spec,
                  std::span<const std::string_view> argv) const;

  Client& client;
  Database& db;
  ReplyBuilder& reply;
  std::span<const std::string_view> argv;
  const CommandSpec* spec;

 private:
  Server& server_;
};

}  // namespace vireo

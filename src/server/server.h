// The server: owns the event loop, the configuration, the databases and every client, and runs
// each command to completion on the one thread that owns all data.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cluster/bus_host.h"
#include "cluster/cluster_state.h"
#include "cluster/routing.h"
#include "core/child_processes.h"
#include "core/command_table.h"
#include "core/config.h"
#include "core/latency_monitor.h"
#include "core/propagator.h"
#include "db/blocking.h"
#include "db/database.h"
#include "db/defrag.h"
#include "db/eviction.h"
#include "db/lazy_free.h"
#include "persistence/persistence_host.h"
#include "persistence/snapshot.h"
#include "replication/replication.h"
#include "scripting/script_host.h"
#include "security/acl.h"
#include "security/tls.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/client_eviction.h"
#include "server/client_pause.h"
#include "server/client_registry.h"
#include "server/cluster_services.h"
#include "server/command_clock.h"
#include "server/command_stats.h"
#include "server/debug_settings.h"
#include "server/event_loop.h"
#include "server/memory_view.h"
#include "server/monitors.h"
#include "server/oom_score.h"
#include "server/process_info.h"
#include "server/pubsub.h"
#include "server/server_stats.h"
#include "server/shutdown.h"
#include "server/slowlog.h"
#include "server/tracking.h"
#include "server/watched_keys.h"
#include "util/clock.h"

namespace vireo {

struct ServerLoop;  // server_loop.h: the io_context and the server's timers

class Scripting;  // src/scripting/scripting.h
class Aof;        // src/persistence/aof.h
namespace cluster {
class SlotRouting;         // src/cluster/routing.h
class MigrateConnections;  // src/cluster/migrate_conn.h
class ClusterBus;          // src/cluster/bus.h
}  // namespace cluster

// Database tells the server what changed through KeyspaceListener; the subsystems reach it
// through the host interfaces they declare (docs/architecture.md). The overrides are private:
// only the databases and the subsystems call them. Command handlers reach the clients, the
// blocked clients, the memory accounting, the process facts, the loop and the cluster-mode
// command path through one accessor each (clients(), blocking(), memory(), process(), loop(),
// cluster_services()): narrow interfaces which Server
// implements privately too.
class Server : public KeyspaceListener,
               public PersistenceHost,
               private ScriptHost,
               private ReplicationHost,
               private cluster::BusHost,
               private ClientRegistry,
               private BlockingService,
               private MemoryView,
               private ProcessInfo,
               private EventLoop,
               private ClusterServices,
               private ShutdownControl {
 public:
  // `commands` (BuildCommandTable(), commands/) outlives the server.
  Server(Config config, const CommandTable& commands);
  ~Server() override;

  // Opens the listeners and starts serving (Listen = OpenListeners + StartServing). Returns ""
  // or an error (e.g. the port is taken).
  std::string Listen();
  // Start-up in two steps, as Redis: the sockets open first so clients can connect (and get
  // -LOADING) while the data loads; the cluster, the cron and `replicaof` start once it has.
  std::string OpenListeners();
  std::string StartServing();
  // set-proc-title: the process title from proc-title-template (ps, /proc/<pid>/cmdline).
  void ApplyProcTitle();
  // Runs the event loop until Shutdown(). Call from the thread that owns the server.
  void Run();
  // Thread-safe request to stop the loop (embedding API): no shutdown sequence.
  void RequestShutdown();
  // SIGTERM / SIGINT (main's handler; async-signal-safe): the cron starts the shutdown
  // sequence (src/server/shutdown.h) with shutdown-on-sigterm's / -sigint's flags.
  void NoteShutdownSignal(int sig);
  bool shutdown_signal_pending() const { return shutdown_signal_.load() != 0; }
  // The dataset is being loaded at start-up (RDB or AOF).
  bool loading_at_startup() const;
  // INFO's shutdown_in_milliseconds: time left to wait for replicas, -1 when not waiting.
  int64_t shutdown_in_ms() const;
  int bound_port() const { return bound_port_; }
  // Overrides the configured port for Listen(): -1 picks a free port (embedding, tests).
  void set_listen_port(int port) { listen_port_override_ = port; }

  Config& config() { return config_; }
  const ServerConfig& cfg() const { return config_.values(); }
  Database& db(int index) { return *dbs_[index]; }
  // An empty database outside the keyspace that shares the server's keyspace options (a
  // replica's swapdb load fills these, then swaps their contents in).
  std::unique_ptr<Database> NewDetachedDatabase();
  int db_count() const { return static_cast<int>(dbs_.size()); }
  ServerStats& stats() { return stats_; }
  // The connected clients (src/server/client_registry.h).
  ClientRegistry& clients() { return *this; }
  // Start time, run id, hz, lastsave and the dirty counter (src/server/process_info.h).
  ProcessInfo& process() { return *this; }

  // Runs one command for `client` as if it arrived from the network (used for EXEC too).
  void ExecuteCommand(Client& client, std::span<const std::string_view> argv);
  // Runs an already-resolved command with no MULTI/auth checks (EXEC, scripts).
  void Call(Client& client, const CommandSpec& spec, std::span<const std::string_view> argv,
            bool in_exec);
  // Client-side caching (src/server/tracking.h).
  Tracking& tracking() { return tracking_; }

  // WATCH (src/server/watched_keys.h).
  WatchedKeys& watched_keys() { return watched_keys_; }

  // MONITOR (src/server/monitors.h).
  Monitors& monitors() { return monitors_; }
  // ACL users and the ACL log (src/security/acl.h, src/server/acl_server.h).
  AclRegistry& acl() { return acl_; }
  // Pub/sub (src/server/pubsub.h): subscriptions and message delivery.
  PubsubEngine& pubsub() { return pubsub_; }
  // maxmemory-clients (src/server/client_eviction.h).
  ClientEviction& client_eviction() { return client_eviction_; }
  // SLOWLOG (src/server/slowlog.h).
  Slowlog& slowlog() { return slowlog_; }
  // COMMANDLOG's logs; kSlow is the SLOWLOG.
  Slowlog& commandlog(CommandlogType type) {
    switch (type) {
      case CommandlogType::kLargeRequest:
        return large_request_log_;
      case CommandlogType::kLargeReply:
        return large_reply_log_;
      default:
        return slowlog_;
    }
  }

  // Clients blocked on keys (src/server/blocking_service.h, src/server/blocking_clients.cc).
  BlockingService& blocking() { return *this; }
  // CLIENT PAUSE and the pauses of FAILOVER (src/server/client_pause.h). A change of a pause
  // tells the server, so postponed clients resume when it ends.
  ClientPause& client_pause() { return client_pause_; }

  // The time commands see (src/server/command_clock.h).
  CommandClock& command_clock() { return command_clock_; }

  // Memory accounting, the lazy freer and the keyspace options (src/server/memory_view.h).
  MemoryView& memory() { return *this; }

  // The switches DEBUG flips for tests (src/commands/debug.cc).
  DebugSettings& debug_settings() { return debug_settings_; }

  // The event loop: io(), timers, one turn, shutdown (src/server/event_loop.h).
  EventLoop& loop() { return *this; }
  // SHUTDOWN and SHUTDOWN ABORT (src/server/shutdown.h).
  ShutdownControl& shutdown_control() { return *this; }

  // Scripting (src/scripting/scripting.cc): the Lua engines, script cache and function
  // libraries, created on first use.
  Scripting& scripting();
  // Null until something ran or loaded a script: reports (INFO) must not build the
  // interpreter, whose memory would then count against maxmemory from the first INFO on.
  Scripting* scripting_if_built() { return scripting_.get(); }
  // A command building a long reply checks its client's output limit as it goes (true: over
  // the limit, scheduled to close).
  bool OutputOverLimit(Client& client) { return EnforceOutputLimit(client); }
  // The append-only file (src/persistence/aof.h): the command log, BGREWRITEAOF, start-up load.
  Aof& aof() { return *aof_; }
  // The effect stream (src/core/propagator.h): what changed, framed once, fanned out to the
  // AOF and the replication stream.
  Propagator& propagator() { return propagator_; }
  // Forked children: BGSAVE, BGREWRITEAOF, full-sync RDBs (src/core/child_processes.h).
  ChildProcesses& children() { return children_; }
  // Replication (src/replication/replication.h): both sides of PSYNC2, the backlog, WAIT.
  Replication& replication() { return *replication_; }
  // TLS (src/security/tls.h): the contexts for accepted and outgoing connections.
  TlsContext& tls() { return tls_; }
  // Cluster mode (src/server/server_cluster.cc): the cluster state, created at start-up when
  // cluster-enabled is yes (nullptr otherwise); it is also the slot_routing() below.
  cluster::ClusterState* cluster() { return cluster_.get(); }
  // The cluster bus engine (src/cluster/bus.h), nullptr when cluster mode is off; its host()
  // is this server.
  cluster::ClusterBus* cluster_bus() { return cluster_bus_.get(); }
  // The command table through this server's lookup cache (argv[0] of every request).
  const CommandSpec* LookupCommand(std::string_view name) {
    return command_cache_.Find(commands_, name);
  }
  const CommandTable& commands() const { return commands_; }
  // Random picks by commands (RANDOMKEY, SPOP, SRANDMEMBER, ...), seeded from the OS.
  std::mt19937_64& rng() { return rng_; }
  // INFO commandstats, per server (src/server/command_stats.h).
  CommandStatsTable& command_stats() { return command_stats_; }
  // LATENCY and latency-tracking (src/core/latency_monitor.h).
  LatencyMonitor& latency() { return latency_; }
  // A dataset loading while the loop keeps serving (a replica's full sync, src/server/
  // loading.cc): kSync refuses every command without the "loading" flag with -LOADING; kAsync
  // (repl-diskless-load swapdb from the same history) serves the old data and refuses only the
  // commands flagged no-async-loading.
  enum class LoadingMode { kNone, kSync, kAsync };
  struct LoadingProgress {
    LoadingMode mode = LoadingMode::kNone;
    int64_t start_unix = 0;
    int64_t start_ms = 0;
    int64_t total_bytes = 0;  // 0 when unknown (an EOF-framed diskless payload)
    int64_t loaded_bytes = 0;
  };
  const LoadingProgress& loading() const { return loading_; }
  // INFO persistence's loading_* fields (empty when not loading).
  std::vector<std::pair<std::string, std::string>> LoadingInfoFields() const;
  // The replica side of replication (src/replication/replica_link.cc). The link to our master
  // is a socket on the loop's epoll set under its own tag while it connects, handshakes and
  // reads the RDB (ReplicationHost::WatchLinkSocket); then it becomes a client (kClientMaster)
  // whose commands are applied.
  static constexpr uint64_t kReplicaLinkTag = 1ull << 61;
  // The pipe a diskless sync child writes for TLS replicas (ReplicationHost::WatchSnapshotPipe).
  static constexpr uint64_t kSnapshotPipeTag = 1ull << 59;

  // Cluster mode's command path: slot routing, redirections, MIGRATE's connections
  // (src/server/cluster_services.h).
  ClusterServices& cluster_services() { return *this; }
  // INFO's migrate_cached_sockets: 0 until a MIGRATE made the cache.
  size_t migrate_cached_sockets() const;

 private:
  // KeyspaceListener (src/db/database.h): what the databases tell the server.
  void OnKeyModified(int db, std::string_view key) override;
  void OnKeyExpired(int db, std::string_view key) override;
  void OnKeyAdded(int db, std::string_view key) override;
  void OnKeyCreated(int db, std::string_view key) override;
  void OnKeyOverwritten(int db, std::string_view key, ValueType old_type,
                        ValueType new_type) override;
  void OnHashFieldsExpired(int db, std::string_view key, std::span<const std::string> fields,
                           bool key_deleted) override;

  // Counts an error reply with its code ("ERR", "WRONGTYPE"...) in INFO errorstats and
  // total_error_replies: the clients' reply builders' hook (and the scripts' client's).
  static void CountError(void* ctx, std::string_view code);
  // The ready-keys pass: serves waiters of every key marked ready, oldest first, one element
  // to one waiter, including keys made ready while serving. Runs after each command.
  void ServeReadyKeys();
  // maxmemory (src/server/maxmemory.cc). Evicts keys by maxmemory-policy until used memory
  // (less what doesn't count) is within the limit, for at most the time
  // maxmemory-eviction-tenacity allows; the rest continues from a timer.
  enum class EvictResult { kOk, kRunning, kFail };
  EvictResult PerformEvictions();
  // Used memory as maxmemory sees it.
  size_t MemoryCountedForEviction() const;

  // ClientRegistry (src/server/client_registry.h), in src/server/server.cc.
  const ClientMap& All() const override { return clients_; }
  Client* FindClient(uint64_t id) override;
  void CloseAfterReply(Client& client) override;
  void CloseClient(Client& client) override;
  void ResetClientState(Client& client) override;
  Client* current_client() const override { return current_client_; }
  void PushToClient(Client& client, std::string_view bytes) override;
  // Also the replica side of replication: the link to our master becomes a client whose
  // leftover bytes (read past the RDB payload) are injected.
  Client& AdoptConnection(int fd, uint32_t flags, std::unique_ptr<TlsSession> tls) override;
  void InjectInput(Client& client, std::string_view input) override;

  // BlockingService (src/server/blocking_service.h), in src/server/blocking_clients.cc.
  void BlockClient(CommandContext& ctx, std::vector<std::string> keys, int64_t timeout_ms,
                   ValueType type, BlockOptions options) override;
  void SignalKeyAsReady(int db, std::string_view key) override {
    blocking_.SignalKeyAsReady(db, key);
  }
  void SignalSwappedDbs(int a, int b) override;
  void SignalFlushedDb(int db) override;
  bool UnblockClient(Client& client, UnblockReason reason, std::string_view error) override;
  const BlockingEngine& engine() const override { return blocking_; }

  // The pauses (client_pause_) in effect now.
  bool Paused(uint32_t action) { return client_pause_.Paused(action, MonotonicUs() / 1000); }
  // client_pause_'s change callback, and after postponing a client: ends the pauses whose
  // time is up, re-arms the pause timer for the next end, resumes postponed clients when
  // nothing is paused any more.
  void PauseChanged();

  // MemoryView (src/server/memory_view.h); the accounting is in src/server/maxmemory.cc.
  size_t UsedMemory() const override;
  size_t MemoryNotCountedForEviction() const override;
  uint64_t current_eviction_exceeded_us() const override;
  LazyFreer& lazy_freer() override { return lazy_freer_; }
  Defragmenter& defragmenter() override { return defrag_; }
  const KeyspaceOptions& keyspace_options() const override { return keyspace_options_; }
  EvictionPolicy eviction_policy() const override { return eviction_policy_; }

  // ProcessInfo (src/server/process_info.h).
  int64_t start_time_ms() const override { return start_time_ms_; }
  const std::string& run_id() const override { return run_id_; }
  int hz() const override { return effective_hz_; }
  int64_t lastsave() const override { return lastsave_; }
  void set_lastsave(int64_t unix_seconds) override { lastsave_ = unix_seconds; }
  uint64_t dirty() const override { return dirty_; }
  void AddDirty(uint64_t n) override { dirty_ += n; }

  // EventLoop (src/server/event_loop.h); the loop itself is in src/server/server.cc.
  asio::io_context& io() override;
  void PollEvents(int timeout_ms) override;
  void UnwatchSocket(int fd) override;
  std::string RebindTcp(bool* tls_failed) override;
  bool shutting_down() const override { return shutdown_requested_; }
  void Shutdown() override { shutdown_requested_ = true; }
  void NoteTimerDeadline(const void* timer,
                         std::chrono::steady_clock::time_point deadline) override;

  // ShutdownControl (src/server/shutdown.h), in src/server/shutdown.cc.
  void ShutdownFromCommand(CommandContext& ctx, uint32_t flags) override;
  bool AbortShutdown() override;
  enum class ShutdownOutcome { kExit, kWaiting, kFailed };
  // Redis's prepareForShutdown: waits for lagging replicas (kWaiting), or finishes now.
  ShutdownOutcome PrepareShutdown(uint32_t flags);
  // The final steps; true when the loop is to end. On failure the shutdown is cancelled.
  bool FinishShutdown();
  // Forgets the shutdown: SHUTDOWN's blocked clients get the error, writes resume.
  void CancelShutdown();
  // From the cron: acts on a signal, ends the wait for replicas when they caught up or time
  // is up.
  void ShutdownCron();
  std::atomic<int> shutdown_signal_{0};  // the signal not yet acted on (Redis's shutdown_asap)
  uint32_t shutdown_flags_ = 0;
  int64_t shutdown_deadline_ms_ = 0;        // waiting for replicas until then (wall clock ms)
  std::vector<uint64_t> shutdown_waiters_;  // clients blocked in SHUTDOWN

  // ClusterServices (src/server/cluster_services.h), in src/server/cluster_redirect.cc.
  cluster::SlotRouting* slot_routing() const override { return slot_routing_; }
  void set_slot_routing(cluster::SlotRouting* r) override { slot_routing_ = r; }
  // The flags a script running command (EVAL*, FCALL*) declares, if any (shebang, function).
  std::optional<uint32_t> ScriptDeclaredFlags(const CommandSpec& spec,
                                              std::span<const std::string_view> argv);
  // Whether the command counts as a write when deciding a cluster redirect.
  bool WritesForRedirect(const CommandSpec& spec, std::span<const std::string_view> argv);
  std::string ClusterRedirectError(const Client& client, const CommandSpec& spec,
                                   std::span<const std::string_view> argv) override;
  void RedirectBlockedClientsOfSlots() override;
  cluster::MigrateConnections& migrate_connections() override;
  // Applies configuration changes that need action (CONFIG SET, through Config::on_change).
  void ApplyConfigChange(const std::string& name);
  // What the dispatcher (dispatcher.cc), blocking_clients.cc and script_host.cc call the work
  // of the components below (command_stats_, watched_keys_, monitors_, slowlog_) by.
  CommandStats& command_stats(const CommandSpec& spec) { return command_stats_.For(spec); }
  void UnwatchAll(Client& client) { watched_keys_.UnwatchAll(client); }
  void FeedMonitors(const Client& client, std::span<const std::string_view> argv) {
    monitors_.Feed(client, argv);
  }
  void AddToSlowlog(const Client& client, std::span<const std::string_view> argv,
                    int64_t duration_us) {
    slowlog_.Add(client, argv, duration_us, config_.values().slowlog_log_slower_than,
                 config_.values().slowlog_max_len);
  }
  // COMMANDLOG large-request / large-reply: the command's request and reply sizes in bytes.
  void AddToSizeLogs(const Client& client, std::span<const std::string_view> argv,
                     int64_t request_bytes, int64_t reply_bytes) {
    const ServerConfig& c = config_.values();
    large_request_log_.Add(client, argv, request_bytes, c.commandlog_request_larger_than,
                           c.commandlog_large_request_max_len);
    large_reply_log_.Add(client, argv, reply_bytes, c.commandlog_reply_larger_than,
                         c.commandlog_large_reply_max_len);
  }

  // ScriptHost (src/scripting/script_host.h), in src/server/script_host.cc: the script's
  // commands run on script_client_ for script_caller_, the client whose command started it.
  void ScriptStarted(ScriptRun& run) override;
  void ScriptEnded() override;
  const AclUser* ScriptCallerUser() override;
  std::string ScriptAclError(const CommandSpec& spec,
                             std::span<const std::string_view> argv) override;
  std::string_view MinReplicasError() override;
  std::string DiskWriteError() override;
  bool PreCommandOom() override { return pre_command_oom_; }
  bool IsReplica() override;
  bool StaleReplica() override;
  bool DenyScriptsDisabled() override { return debug_settings_.disable_deny_scripts; }
  // In src/server/cluster_redirect.cc.
  std::string ScriptClusterError(ScriptRun& run, const CommandSpec& spec,
                                 std::span<const std::string_view> argv) override;
  void CountScriptRejection(const CommandSpec* spec, std::string_view message) override;
  std::string& RunScriptCommand(const CommandSpec& spec, std::span<const std::string_view> argv,
                                int resp) override;
  void SetBusyScript(int kind) override { busy_script_ = kind; }
  void ServeClientsWhileBusy() override;
  bool ShuttingDown() override { return shutting_down(); }
  // One loop turn without reading from `caller`, whose buffer holds the running script's
  // arguments (src/server/loading.cc).
  void ProcessEventsWhileBusy(Client& caller);

  // PersistenceHost (src/persistence/persistence_host.h), in src/server/persistence_host.cc.
  // The base is public so the server can be handed to RDB and AOF functions as their host;
  // the overrides are private, so they add nothing to the server's own surface.
  int PersistedDbCount() override;
  Database& PersistedDb(int index) override;
  Scripting& FunctionLibraries() override;
  EvictionPolicy PersistedEvictionPolicy() override;
  const KeyspaceOptions& PersistedKeyspaceOptions() override;
  size_t PersistedUsedMemory() override;
  const ServerConfig& PersistenceConfig() override;
  ChildProcesses& PersistenceChildren() override;
  LatencyMonitor& PersistenceLatency() override;
  Propagator& PersistenceEffects() override;
  RdbState& SnapshotState() override;
  uint64_t DirtyCount() override;
  int64_t LastSaveTime() override;
  void SetLastSaveTime(int64_t unix_seconds) override;
  bool PersistedReplicationInfo(RdbReplicationInfo* info) override;
  bool LoadsAsReplica() override;
  int64_t ReplicationOffset() override;
  const CommandTable& PersistenceCommands() override;
  std::unique_ptr<AofReplayClient> NewAofReplayClient() override;
  void SetCommandTimeMs(int64_t ms) override;
  void RefreshCommandTime() override;
  void StartupLoadBegan(int64_t total_bytes) override;
  bool StartupLoadProgressed(int64_t loaded_bytes) override;
  void StartupLoadEnded() override { loading_ = LoadingProgress{}; }
  void WhileBlockedCron() override;

  // ReplicationHost (src/replication/replication_host.h), in src/server/replication_host.cc:
  // replication names clients by id and reaches the loop, the loading state, the databases
  // and persistence through these. (ShuttingDown, above, serves both hosts.) Below them, the
  // server's own helpers that only replication needed from outside.
  bool ClientExists(uint64_t id) override;
  bool ClientOpen(uint64_t id) override;
  std::string ClientAddress(uint64_t id) override;
  int ClientSocket(uint64_t id) override;
  TlsSession* ClientTls(uint64_t id) override;
  size_t ClientOutputMemory(uint64_t id) override;
  int ClientDb(uint64_t id) override;
  int64_t ClientLastInteractionMs(uint64_t id) override;
  size_t ClientUnreadInput(uint64_t id) override;
  void SendToClient(uint64_t id, std::string_view bytes) override;
  void CloseClientNow(uint64_t id) override;
  void CloseClientAfterReply(uint64_t id) override;
  void MarkReplicaClient(uint64_t id) override;
  void HoldClientOutput(uint64_t id, bool held) override;
  void SetClientBulkPending(uint64_t id, bool pending) override;
  void WatchSnapshotPipe(int fd, bool on) override;
  void RerunBlockedClient(uint64_t id) override;
  void UnblockClientsForRoleChange() override;
  void WatchLinkSocket(int fd, uint32_t events) override;  // adds, or changes the events
  void UnwatchLinkSocket(int fd) override { UnwatchSocket(fd); }
  std::unique_ptr<TlsSession> ConnectTls(int fd) override;
  uint64_t AdoptMasterConnection(int fd, std::unique_ptr<TlsSession> tls, int db) override;
  void InjectClientInput(uint64_t id, std::string_view input) override;
  int ListeningPort() override { return bound_port_; }
  void LoadingStarted(bool async, int64_t total_bytes) override;
  void LoadingProgressed(int64_t loaded_bytes) override { loading_.loaded_bytes = loaded_bytes; }
  void LoadingEnded() override { loading_ = LoadingProgress{}; }
  void ServeClientsWhileLoading(int wait_fd, int timeout_ms) override;
  size_t TotalKeys() override;
  void FlushAllData(bool async) override;
  std::vector<std::unique_ptr<Database>> NewDetachedDatabases() override;
  void SwapInLoadedData(std::vector<std::unique_ptr<Database>>& loaded,
                        const std::vector<std::string>& libraries) override;
  void DiscardDatabases(std::vector<std::unique_ptr<Database>> dbs) override;
  void MarkDirty(uint64_t changes) override { dirty_ += changes; }
  void SetExpiryView(ExpiryView view) override { keyspace_options_.expiry_view = view; }
  bool AofOn() override;
  int64_t AofFsyncedOffset() override;
  bool AofLoadedAtStartup() override;
  std::string RdbFilePath() override;
  std::string SaveRdbFile(const std::string& path, const RdbSaveOptions& options) override;
  std::string SaveRdbToSink(const RdbSaveOptions& options) override;
  std::string LoadRdbFile(const std::string& path, const RdbLoadOptions& options,
                          RdbLoadStats* stats) override;
  std::string LoadRdbFromSource(RdbByteSource source, const RdbLoadOptions& options,
                                RdbLoadStats* stats) override;
  void KillRdbChild() override;
  void CountFullSync() override { ++stats_.sync_full; }
  void CountPartialSync(bool accepted) override {
    ++(accepted ? stats_.sync_partial_ok : stats_.sync_partial_err);
  }
  void CountReplicationOutput(uint64_t bytes) override {
    stats_.total_net_repl_output_bytes += bytes;
  }
  void PauseWritesForFailover(bool on) override;
  bool ReplicationStreamPaused() override { return Paused(kPauseReplica); }
  // A dataset loading while the loop serves (src/server/loading.cc): see LoadingMode.
  void StartLoading(LoadingMode mode, int64_t total_bytes);
  // From inside a load: serves other clients for one loop turn, first waiting up to
  // timeout_ms for them, a timer or `wait_fd` (-1: none). True when wait_fd is readable.
  bool ProcessEventsWhileLoading(int wait_fd, int timeout_ms);
  // After a replica's swapdb load replaced the contents of every database.
  void SignalReplacedDbs();
  // Runs a blocked client's command again now, as the ready-keys pass does (WAIT when replicas
  // acknowledged): it replies, or blocks again with its original deadline.
  void RunBlockedCommandAgain(Client& client, bool may_block = true);

  struct Listener;
  std::string ListenTcp(const std::string& addr, bool optional, int port, bool tls);
  void OnAccept(Listener& listener);
  // Descriptor exhaustion in OnAccept: answer with the spare descriptor, or stop listening
  // briefly; log at most once a second.
  void RejectMaxClients(int fd);
  void LogAcceptError(int error);
  bool RefuseWithSpareFd(Listener& listener);
  void PauseAccepting();
  // Stops listening (and removes the unix socket file): the last step of a shutdown.
  void CloseListeners();
  void WatchSocket(int fd, uint64_t tag, uint32_t events);
  void OnSocketEvent(uint64_t tag, uint32_t events);
  void RunDueTimers();
  int MsUntilNextTimer();
  void AcceptClient(int fd, bool unix_socket);
  void ReadFromClient(Client& client);
  // A TLS client's socket event: drives its handshake (closing it if the handshake fails);
  // true when the event goes on to the ordinary read and write handling.
  bool OnTlsEvent(Client& client, uint32_t events);
  // CONFIG SET of tls-* options: rebuilds the TLS contexts when TLS is in use.
  std::string ApplyTlsConfig(const std::vector<std::string>& names, std::string* culprit);
  // One read and what it completes; true to read again in this turn (a big argument arriving).
  bool ReadAndProcess(Client& client, size_t* budget);
  void ProcessInput(Client& client);
  // client-query-buffer-limit: unparsed input plus the arguments MULTI has queued.
  bool QueryBufferOverLimit(const Client& client) const;
  void QueueWrite(Client& client);
  // A replica with stream bytes in the shared replication buffer it hasn't read.
  bool ReplicaStreamPending(const Client& client) const;
  // client-output-buffer-limit (src/server/output_limits.cc): true when the client is over
  // its class's limit and scheduled to close (in FlushPendingWrites, via CloseOverLimitClient).
  bool EnforceOutputLimit(Client& client);
  bool ScheduleCloseForOutputLimit(Client& client);
  void CloseOverLimitClient(Client& client);
  // Drops the already-written prefix of a large, partly written output buffer.
  void CompactOutput(Client& client);
  void FlushPendingWrites();
  bool WriteToClient(Client& client);
  void WaitWritable(Client& client);
  void FreeClient(uint64_t id);
  void BeforeSleep();
  void ScheduleCron();
  void ArmBlockTimer();
  void OnBlockTimer();
  void Cron();
  // Active defragmentation's slice of a cron tick (src/db/defrag.h).
  void DefragCron();
  // Extra short expiry cycles while the cron's share of time can't keep up with expired keys.
  void ScheduleFastExpire();
  // Accounts one active expiry cycle that began at start_us (INFO stats, latency monitor).
  void NoteExpireCycle(int64_t start_us);
  // A paused command waits (kClientBlocked | kClientPostponed) in postponed_ until
  // ResumePostponedClients runs it through the dispatcher again.
  void PostponeClient(Client& client, const CommandSpec& spec,
                      std::span<const std::string_view> argv);
  void ResumePostponedClients();
  // maxmemory helpers (src/server/maxmemory.cc).
  void ApplyMemoryConfig();
  void ApplyLatencyConfig();
  bool EvictOneKey(size_t* freed);
  // Eviction past its time slice continues once per loop turn, after the clients' I/O.
  void StartEvictionTimer() { eviction_pending_ = true; }
  void ContinueEvictions();

  Config config_;
  const CommandTable& commands_;
  // The io_context and the timers (cron, blocked clients, fast expiry, accept pause, client
  // pause). Destroyed late, as the io_context was: after the clients and engines below.
  std::unique_ptr<ServerLoop> loop_;
  int64_t block_timer_deadline_ = 0;  // what block_timer_ is armed for (0 = not armed)
  BlockingEngine blocking_;
  bool serving_ready_keys_ = false;
  int64_t reblock_deadline_ = 0;  // set while a served client's command runs again
  bool reprocessing_ = false;     // a served client's command is running again: MONITOR saw it
  std::vector<std::unique_ptr<Listener>> listeners_;
  int bound_port_ = 0;
  int listen_port_override_ = -2;  // -2: use the configured port
  // Before the databases, which point at them.
  LazyFreer lazy_freer_;
  KeyspaceOptions keyspace_options_;
  CommandClock command_clock_{keyspace_options_};
  std::vector<std::unique_ptr<Database>> dbs_;
  EvictionPolicy eviction_policy_ = EvictionPolicy::kNoEviction;
  EvictionPool eviction_pool_;
  uint64_t eviction_rng_ = 0x9e3779b97f4a7c15ULL;
  size_t eviction_next_db_ = 0;  // random policies: the database the next victim comes from
  bool eviction_pending_ = false;
  int64_t eviction_exceeded_since_us_ = 0;  // 0: within the limit
  bool pre_command_oom_ = false;
  std::map<uint64_t, std::unique_ptr<Client>> clients_;
  std::vector<uint64_t> pending_writes_;
  std::vector<uint64_t> pending_close_;
  std::vector<uint64_t> pending_input_;  // clients with buffered commands to resume
  Monitors monitors_{[this](Client& monitor) { QueueWrite(monitor); }};
  PubsubEngine pubsub_{clients()};
  AclRegistry acl_;
  ClientEviction client_eviction_{*this};
  WatchedKeys watched_keys_{dbs_};
  Slowlog slowlog_;
  Slowlog large_request_log_;
  Slowlog large_reply_log_;
  ServerStats stats_;
  uint64_t next_client_id_ = 1;
  int64_t start_time_ms_ = 0;
  int64_t lastsave_ = 0;
  uint64_t dirty_ = 0;
  std::string run_id_;
  uint64_t run_id_hash_ = 0;
  std::atomic<bool> shutdown_requested_{false};
  size_t executing_depth_ = 0;
  // Loops stepped from inside a long operation (a load, a busy script): their cron ticks don't
  // re-arm the watchdog, since the loop's own turn is still stuck in that operation (as
  // Redis's serverCron doesn't run then, and its watchdog reports the load or script).
  int nested_loops_ = 0;
  // total_error_replies when the last command (possibly one a script or EXEC ran) began or
  // ended: a command failed if errors were counted since, so a script whose redis.pcall caught
  // an error its command already counted didn't fail itself (Redis's "errors since the last
  // call" rule).
  uint64_t error_mark_ = 0;
  // The client whose request is running (set by the outermost Call: a script's commands and
  // EXEC's run on its behalf), for client-side caching.
  Client* current_client_ = nullptr;
  Tracking tracking_{clients(), config_.values()};
  size_t cron_db_cursor_ = 0;  // the database the next cron tick starts with
  DebugSettings debug_settings_;
  int epoll_fd_ = -1;  // client and listener sockets, level-triggered
  int wake_fd_ = -1;   // eventfd: another thread posted work to io_
  int spare_fd_ = -1;  // /dev/null, closed to make room for refusing a client on EMFILE
  bool accept_paused_ = false;
  int64_t accept_error_logged_ms_ = 0;
  uint64_t accept_errors_unlogged_ = 0;
  // TLS contexts (tls-port, tls-replication); built by Listen and CONFIG SET.
  TlsContext tls_;
  // Armed asio timers and their deadlines (one entry per timer).
  std::vector<std::pair<const void*, std::chrono::steady_clock::time_point>> timer_deadlines_;
  static constexpr int kTimerSafetyPollMs = 100;
  std::chrono::steady_clock::time_point last_timer_poll_{};
  // Event-loop cycle measurement (INFO's eventloop_* fields): Run() is looping, and how deep
  // PollEvents is nested (a command or a load polls from inside a cycle).
  bool running_main_loop_ = false;
  int poll_depth_ = 0;
  void EndEventLoopCycle(int64_t start_us, uint64_t commands_before);
  bool fast_expire_armed_ = false;
  // Waiters on keys of `db`, whose contents were replaced, re-check their keys.
  void SignalReplacedDb(int db);
  // While a script runs past busy-reply-threshold, other clients get -BUSY: 0 = no script
  // is busy, 1 = an EVAL script, 2 = a function. Set by the script engine.
  int busy_script_ = 0;
  cluster::SlotRouting* slot_routing_ = nullptr;
  std::unique_ptr<cluster::MigrateConnections> migrate_connections_;
  LoadingProgress loading_;
  // Where Call records the writes of the commands a script runs (the script's effects, which
  // are propagated instead of the script, when anything consumes effects); nullptr outside
  // scripts.
  ScriptEffects* script_effects_ = nullptr;
  // The database the script's recorded effects run in: a SELECT in the script becomes a SELECT
  // effect before its next write there (the stream only knows the script command's db).
  int script_effects_db_ = 0;
  Client* script_caller_ = nullptr;  // the client a running script runs for
  ChildProcesses children_;
  ClientPause client_pause_{[this] { PauseChanged(); }};
  std::vector<uint64_t> postponed_;
  RdbState rdb_state_;
  Propagator propagator_;
  std::unique_ptr<Replication> replication_;
  CommandLookupCache command_cache_;
  std::mt19937_64 rng_{std::random_device{}()};
  CommandStatsTable command_stats_;
  LatencyMonitor latency_;
  Defragmenter defrag_;
  int64_t last_blocked_cron_us_ = 0;  // WhileBlockedCron's last run
  // oom-score-adj: the score written for the role the server last had (see Cron).
  OomScore oom_score_;
  OomRole oom_role_ = OomRole::kMaster;
  int effective_hz_ = 10;  // hz, raised by dynamic-hz while many clients are connected
  // Last, so the engines (and their client) go before the io_context and the clients.
  std::unique_ptr<Scripting, void (*)(Scripting*)> scripting_{nullptr, nullptr};
  std::unique_ptr<Client> script_client_;  // the client scripts' commands run as
  // Before the io_context and the clients too: it flushes and fsyncs the log when destroyed.
  std::unique_ptr<Aof> aof_;
  // Cluster mode: loads or creates nodes.conf (after the listeners, whose ports myself
  // announces); "" or the start-up error. The before-sleep step saves nodes.conf and
  // recomputes cluster_state when something asked for it; the cron re-checks the state.
  std::string StartCluster();
  // Its first half, at the end of OpenListeners (before the data loads, as Redis's
  // clusterInit): locks and reads nodes.conf into loaded_cluster_, so the load knows whether
  // myself is a replica.
  std::string LoadClusterConfig();
  void ClusterBeforeSleep();
  void ClusterCron();
  void ApplyClusterConfig();
  // cluster::BusHost (src/cluster/bus_host.h), in src/server/server_cluster.cc: what the bus
  // engine, and the CLUSTER commands through ClusterBus::host(), ask of the server.
  void WatchBusSocket(int fd, uint64_t tag, uint32_t events) override;
  void UnwatchBusSocket(int fd) override { UnwatchSocket(fd); }
  const ServerConfig& BusConfig() override { return cfg(); }
  TlsContext& BusTls() override { return tls_; }
  int64_t ClusterReplOffset() override;
  int64_t ClusterReplDataAgeMs() override;
  void ClusterSyncReplication() override;
  // Its work; `at_startup` continues from the loaded RDB's replication ID and offset.
  void FollowClusterMaster(bool at_startup);
  void ClusterPauseWrites(bool on, int64_t duration_ms) override;
  size_t ClusterKeysInSlot(int slot) override;
  void ClusterDeleteKeysInSlot(int slot) override;
  void ClusterDeliverPublish(std::string_view channel, std::string_view message,
                             bool shard) override;
  std::string SaveClusterConfig(bool fsync) override;

  std::unique_ptr<cluster::ClusterState> cluster_;
  std::unique_ptr<cluster::ClusterState> loaded_cluster_;  // LoadClusterConfig -> StartCluster
  bool loaded_cluster_needs_save_ = false;
  std::unique_ptr<cluster::ClusterBus> cluster_bus_;
  int cluster_lock_fd_ = -1;  // flock on nodes.conf: one node per file
  std::string cluster_config_path_;
  // ExecuteCommand's checks and call, under CLIENT REPLY's suppression.
  void DispatchCommand(Client& client, std::span<const std::string_view> argv);
  // A command from our master answered with an error (`reply`: what it wrote): logged and
  // counted (INFO's unexpected_error_replies), as Redis does.
  void ReportErrorToMaster(const Client& client, std::string_view reply);
};

}  // namespace vireo

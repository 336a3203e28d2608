// What RDB snapshots and the AOF need from the server that hosts them. The persistence layer
// declares it; the server implements it (src/server/persistence_host.cc), as it implements
// db's KeyspaceListener and scripting's ScriptHost. What lives in lower layers is handed out
// as the object itself (the databases, the configuration, the child processes, the latency
// monitor, the function library); what belongs to the server's own state or to a higher
// layer (the dirty counter, the clock, the replication position, running a command) is a
// call of its own.
//
// Everything here is called on the server's thread, or in a forked child that only reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace vireo {

class ChildProcesses;
class Database;
class LatencyMonitor;
class Propagator;
class Scripting;
class CommandTable;
struct CommandSpec;
struct KeyspaceOptions;
struct RdbReplicationInfo;
struct RdbState;
struct ServerConfig;
enum class EvictionPolicy : uint8_t;

// Replaying an AOF file: its commands run one by one on a connection-less client of the
// server (SELECT moves it between databases, starting at 0). They run as inside EXEC: they
// never block, and the clock stays where the loader put it.
class AofReplayClient {
 public:
  virtual ~AofReplayClient() = default;
  virtual void Run(const CommandSpec& spec, std::span<const std::string_view> argv) = 0;
};

class PersistenceHost {
 public:
  virtual ~PersistenceHost() = default;

  // ---- the dataset a snapshot writes and a load fills ----
  virtual int PersistedDbCount() = 0;
  virtual Database& PersistedDb(int index) = 0;
  // Function libraries travel in RDB and AOF files (built on first use).
  virtual Scripting& FunctionLibraries() = 0;
  // Which access hint (LRU idle time, LFU counter) goes before each key, and how loaded
  // hints become access clocks.
  virtual EvictionPolicy PersistedEvictionPolicy() = 0;
  virtual const KeyspaceOptions& PersistedKeyspaceOptions() = 0;
  // AUX used-mem.
  virtual size_t PersistedUsedMemory() = 0;

  // ---- the server's facilities persistence uses ----
  // dbfilename, appendonly, appendfsync, rdbcompression, the encodings' limits, ...
  virtual const ServerConfig& PersistenceConfig() = 0;
  // BGSAVE and BGREWRITEAOF children (one at a time, with a full sync's RDB child).
  virtual ChildProcesses& PersistenceChildren() = 0;
  // aof-write, aof-fsync-always, aof-rename events.
  virtual LatencyMonitor& PersistenceLatency() = 0;
  // The effect stream: turning AOF on inside a call (depth > 1) schedules the rewrite.
  virtual Propagator& PersistenceEffects() = 0;
  // SAVE/BGSAVE bookkeeping, kept by the server so embedded servers don't share it.
  virtual RdbState& SnapshotState() = 0;

  // ---- counters ----
  // Changes since start (the server's dirty counter): save points compare it.
  virtual uint64_t DirtyCount() = 0;
  // Unix seconds of the last successful save (LASTSAVE).
  virtual int64_t LastSaveTime() = 0;
  virtual void SetLastSaveTime(int64_t unix_seconds) = 0;

  // ---- replication ----
  // The replication position an RDB records in its repl-* AUX fields (so a restarted replica
  // can continue with a partial resync). False when there is none to record: no backlog and
  // not a replica.
  virtual bool PersistedReplicationInfo(RdbReplicationInfo* info) = 0;
  // The replication stream's offset now: what the AOF has written reaches up to it (WAITAOF).
  virtual int64_t ReplicationOffset() = 0;
  // A replica (replicaof, or a replica in nodes.conf) loads keys whose TTL passed: they expire
  // through its master's DELs, as in Redis.
  virtual bool LoadsAsReplica() = 0;

  // ---- replaying an AOF ----
  virtual const CommandTable& PersistenceCommands() = 0;
  virtual std::unique_ptr<AofReplayClient> NewAofReplayClient() = 0;
  // The time commands see: replaying sets it to 0 (nothing expires meanwhile), then back to
  // the real clock.
  virtual void SetCommandTimeMs(int64_t ms) = 0;
  virtual void RefreshCommandTime() = 0;

  // ---- loading at start-up ----
  // As in Redis, clients connect while the RDB or AOF loads at start-up and get -LOADING: the
  // loaders announce the load, step the server's loop from inside it, and end it. DEBUG
  // LOADAOF's reload is announced too (loading:1, -LOADING to clients a slow script in it lets
  // through) but does not step the loop: it runs inside a command.
  virtual void StartupLoadBegan(int64_t total_bytes) = 0;
  // Every loading-process-events-interval-bytes of RDB or 1024 AOF commands: records the
  // progress (INFO loading_*) and serves clients for one loop turn. False when a shutdown was
  // asked for meanwhile: the load stops.
  virtual bool StartupLoadProgressed(int64_t loaded_bytes) = 0;
  virtual void StartupLoadEnded() = 0;
  // Every 1024 AOF commands of any load, DEBUG LOADAOF's included: the server's periodic work
  // that must go on while a load blocks it (Redis's whileBlockedCron), at most once per cron
  // period.
  virtual void WhileBlockedCron() {}
};

}  // namespace vireo

// Server as the persistence layer's host (src/persistence/persistence_host.h): RDB snapshots
// and the AOF reach the databases, the configuration, the children, the counters and the
// replication position through these, and replay an AOF's commands on a client of their own.
#include <memory>

#include "persistence/rdb.h"
#include "replication/replica_link.h"
#include "scripting/scripting.h"
#include "server/server.h"

namespace vireo {

namespace {

// The id of the client that replays the AOF (Redis gives it a reserved id too).
constexpr uint64_t kAofClientId = UINT64_MAX - 1;

class ServerAofClient : public AofReplayClient {
 public:
  explicit ServerAofClient(Server& server) : server_(server), client_(&server, kAofClientId, -1) {}

  void Run(const CommandSpec& spec, std::span<const std::string_view> argv) override {
    // in_exec: never blocks (an AOF client must not wait for anyone) and keeps the clock
    // where the loader put it.
    server_.Call(client_, spec, argv, /*in_exec=*/true);
    client_.output().clear();
  }

 private:
  Server& server_;
  Client client_;
};

}  // namespace

int Server::PersistedDbCount() { return db_count(); }

Database& Server::PersistedDb(int index) { return db(index); }

Scripting& Server::FunctionLibraries() { return scripting(); }

EvictionPolicy Server::PersistedEvictionPolicy() { return eviction_policy_; }

const KeyspaceOptions& Server::PersistedKeyspaceOptions() { return keyspace_options_; }

size_t Server::PersistedUsedMemory() { return UsedMemory(); }

const ServerConfig& Server::PersistenceConfig() { return cfg(); }

ChildProcesses& Server::PersistenceChildren() { return children_; }

LatencyMonitor& Server::PersistenceLatency() { return latency_; }

Propagator& Server::PersistenceEffects() { return propagator_; }

RdbState& Server::SnapshotState() { return rdb_state_; }

uint64_t Server::DirtyCount() { return dirty_; }

int64_t Server::LastSaveTime() { return lastsave_; }

void Server::SetLastSaveTime(int64_t unix_seconds) { lastsave_ = unix_seconds; }

bool Server::PersistedReplicationInfo(RdbReplicationInfo* info) {
  Replication& repl = *replication_;
  if (!repl.is_replica() && !repl.buffer().created()) return false;
  // The database the stream has selected: a replica's master link's; a master restarts its
  // stream with a SELECT anyway.
  info->stream_db = repl.is_replica() ? repl.link()->stream_db() : 0;
  info->replid = repl.replid();
  info->offset = repl.master_repl_offset();
  return true;
}

int64_t Server::ReplicationOffset() { return replication_->master_repl_offset(); }

const CommandTable& Server::PersistenceCommands() { return commands_; }

std::unique_ptr<AofReplayClient> Server::NewAofReplayClient() {
  return std::make_unique<ServerAofClient>(*this);
}

void Server::SetCommandTimeMs(int64_t ms) { command_clock_.set_ms(ms); }

void Server::RefreshCommandTime() { command_clock_.Update(); }

}  // namespace vireo

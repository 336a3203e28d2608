// A PersistenceHost for tests of RDB saving and loading without a Server: a few databases,
// a default configuration, and the replication position the test sets. It has no function
// library (tests save with kRdbExcludeFunctions and load images without FUNCTION2 records)
// and runs no commands (no AOF replay).
#pragma once

#include <cstdlib>
#include <memory>
#include <vector>

#include "core/child_processes.h"
#include "core/command_table.h"
#include "core/config.h"
#include "core/latency_monitor.h"
#include "core/propagator.h"
#include "db/database.h"
#include "db/eviction.h"
#include "persistence/persistence_host.h"
#include "persistence/rdb.h"
#include "persistence/snapshot.h"

namespace vireo {

class FakePersistenceHost : public PersistenceHost {
 public:
  explicit FakePersistenceHost(int databases = 4) {
    for (int i = 0; i < databases; ++i) {
      dbs_.push_back(std::make_unique<Database>(i, nullptr));
      dbs_.back()->set_options(&keyspace_);
    }
  }

  int PersistedDbCount() override { return static_cast<int>(dbs_.size()); }
  Database& PersistedDb(int index) override { return *dbs_[index]; }
  Scripting& FunctionLibraries() override { std::abort(); }  // see the file comment
  EvictionPolicy PersistedEvictionPolicy() override { return EvictionPolicy::kNoEviction; }
  const KeyspaceOptions& PersistedKeyspaceOptions() override { return keyspace_; }
  size_t PersistedUsedMemory() override { return 0; }
  const ServerConfig& PersistenceConfig() override { return config_; }
  ChildProcesses& PersistenceChildren() override { return children_; }
  LatencyMonitor& PersistenceLatency() override { return latency_; }
  Propagator& PersistenceEffects() override { return effects_; }
  RdbState& SnapshotState() override { return state_; }
  uint64_t DirtyCount() override { return 0; }
  int64_t LastSaveTime() override { return lastsave_; }
  void SetLastSaveTime(int64_t unix_seconds) override { lastsave_ = unix_seconds; }
  bool PersistedReplicationInfo(RdbReplicationInfo* info) override {
    if (replication.replid.empty()) return false;
    *info = replication;
    return true;
  }
  int64_t ReplicationOffset() override { return replication.offset; }
  bool LoadsAsReplica() override { return false; }
  const CommandTable& PersistenceCommands() override { return commands_; }
  std::unique_ptr<AofReplayClient> NewAofReplayClient() override { std::abort(); }
  void SetCommandTimeMs(int64_t ms) override { keyspace_.now_ms = ms; }
  void RefreshCommandTime() override {}
  void StartupLoadBegan(int64_t) override {}
  bool StartupLoadProgressed(int64_t) override { return true; }
  void StartupLoadEnded() override {}

  // What PersistedReplicationInfo reports (none while replid is empty).
  RdbReplicationInfo replication;

 private:
  std::vector<std::unique_ptr<Database>> dbs_;
  KeyspaceOptions keyspace_;
  ServerConfig config_;
  ChildProcesses children_;
  LatencyMonitor latency_;
  Propagator effects_;
  RdbState state_;
  CommandTable commands_;
  int64_t lastsave_ = 0;
};

}  // namespace vireo

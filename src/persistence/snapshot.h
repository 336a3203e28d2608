// SAVE / BGSAVE and everything around them: the forked child that writes the snapshot (the
// parent keeps serving; the child sees a copy-on-write image of the data), reaping it from the
// cron, save points, loading the dump at start-up, SHUTDOWN's save, and the rdb_* fields of
// INFO persistence.
//
// Everything reaches the server through its PersistenceHost (persistence_host.h). The state
// is kept by the host (SnapshotState()), so embedded servers in one process don't share it;
// the child itself belongs to the host's ChildProcesses manager. Everything here runs on the
// server's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "persistence/rdb.h"

namespace vireo {

class PersistenceHost;

struct RdbState {
  uint64_t dirty_before_bgsave = 0;  // host.DirtyCount() when the child forked
  uint64_t dirty_at_last_save = 0;   // host.DirtyCount() the last successful save captured
  bool last_bgsave_ok = true;
  int64_t last_bgsave_time_sec = -1;
  int64_t last_bgsave_try = 0;  // unix seconds of the last BGSAVE attempt
  bool bgsave_scheduled = false;
  uint64_t saves = 0;    // SAVE commands and BGSAVE forks attempted (INFO rdb_saves)
  bool loading = false;  // a start-up load (RDB or AOF) is in progress
  uint64_t last_load_keys_loaded = 0;
  uint64_t last_load_keys_expired = 0;
  bool shutdown_handled = false;  // RdbSaveOnShutdown ran (SHUTDOWN), so exit needn't save
};

RdbState& RdbStateOf(PersistenceHost& host);  // host.SnapshotState()

// The dump file path: dir is the working directory (CONFIG SET dir chdir()s), so dbfilename.
std::string RdbPath(PersistenceHost& host);

// SAVE: writes the snapshot on this thread. Returns "" or the error text.
std::string RdbSaveNow(PersistenceHost& host);
// BGSAVE: forks a child (host.PersistenceChildren(), ChildKind::kRdb) that writes the snapshot; its
// exit is handled when the cron reaps it. Returns "" or an error text (fork failure, or a
// child already running).
std::string RdbBackgroundSave(PersistenceHost& host);
// An RDB child runs: BGSAVE's own or a replication full sync's (Redis counts both).
bool RdbChildActive(PersistenceHost& host);
// Some other child (an AOF rewrite) runs: BGSAVE waits (SCHEDULE) or refuses, since only one
// child runs at a time.
bool OtherChildActive(PersistenceHost& host);

// From the server cron, after the children were reaped: scheduled BGSAVEs and save points.
void RdbCron(PersistenceHost& host);
// Kills a running RDB child (SHUTDOWN) with SIGUSR1, which its exit handler takes as a
// cancellation (for BGSAVE: temp file removed, rdb_last_bgsave_status unchanged).
void RdbKillChild(PersistenceHost& host);

// Loads dir/dbfilename at start-up. Returns "" (also when the file doesn't exist) or an error
// for the log; the server should exit on error, as Redis does. `expired` (if set) is told of
// each key skipped as expired; `replication` (if set) gets the image's repl-id / repl-offset /
// repl-stream-db (offset -1: none).
std::string RdbLoadAtStartup(PersistenceHost& host,
                             std::function<void(int db, std::string_view key)> expired = {},
                             RdbReplicationInfo* replication = nullptr);

// SHUTDOWN: saves when `save` (SHUTDOWN SAVE), or when save points are configured unless
// `nosave`. Returns "" or the error that must stop the shutdown (none with `force`: the
// failure is only logged).
std::string RdbSaveOnShutdown(PersistenceHost& host, bool save, bool nosave, bool force = false);

// DEBUG RELOAD's options (Redis's MERGE, NOFLUSH, NOSAVE).
struct RdbReloadOptions {
  bool save = true;    // save the dataset first (NOSAVE: load the file as it is)
  bool flush = true;   // empty every database first (NOFLUSH keeps what is there)
  bool merge = false;  // a key (or function library) in the file replaces one in memory
};

// DEBUG RELOAD: SAVE, empty every database, load the file again. Returns "" or the error reply.
std::string RdbDebugReload(PersistenceHost& host, const RdbReloadOptions& options = {});

// The -MISCONF refusal for write commands after a failed background save, or "".
std::string RdbWriteError(PersistenceHost& host);

// INFO persistence: from "loading" to "rdb_last_load_keys_loaded", in Redis's order.
// `loading_sync` / `loading_async`: a dataset is loading while the loop serves (the server's
// loading mode, a replica's full sync), refusing every command or only some.
std::vector<std::pair<std::string, std::string>> RdbInfoFields(PersistenceHost& host,
                                                               bool loading_sync,
                                                               bool loading_async);

}  // namespace vireo

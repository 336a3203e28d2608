#include "persistence/snapshot.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "core/child_processes.h"
#include "core/config.h"
#include "db/database.h"
#include "persistence/persistence_host.h"
#include "persistence/rdb.h"
#include "scripting/scripting.h"
#include "util/clock.h"

namespace vireo {

namespace {

// Redis waits this long after a failed BGSAVE before a save point may try again.
constexpr int64_t kBgsaveRetryDelaySec = 5;

RdbSaveOptions SaveOptions(PersistenceHost& host) {
  RdbSaveOptions o;
  o.compress = host.PersistenceConfig().rdbcompression;
  o.checksum = host.PersistenceConfig().rdbchecksum;
  return o;
}

void SaveSucceeded(PersistenceHost& host, RdbState& st, uint64_t dirty_captured) {
  st.dirty_at_last_save = dirty_captured;
  host.SetLastSaveTime(time(nullptr));
  st.last_bgsave_ok = true;
}

// Writes the dump (SAVE on this thread, or in BGSAVE's child) and logs the outcome.
std::string SaveLogged(PersistenceHost& host) {
  std::string err = RdbSaveFile(host, RdbPath(host), SaveOptions(host));
  if (err.empty()) {
    spdlog::info("DB saved on disk");
  } else {
    spdlog::warn("Failed saving the DB: {}", err);
  }
  return err;
}

std::string TempFileOf(pid_t pid) { return "temp-" + std::to_string(pid) + ".rdb"; }

// BGSAVE's child has been reaped (only BGSAVE's own children: a replication full sync's RDB
// child has its own exit handler and leaves this bookkeeping alone, as in Redis).
void BackgroundSaveDone(PersistenceHost& host, const ChildExit& exit) {
  RdbState& st = RdbStateOf(host);
  st.last_bgsave_time_sec = exit.duration_ms / 1000;
  if (exit.ok()) {
    spdlog::info("Background saving terminated with success");
    SaveSucceeded(host, st, st.dirty_before_bgsave);
    return;
  }
  if (exit.signal != 0) {
    spdlog::warn("Background saving terminated by signal {}", exit.signal);
  } else {
    spdlog::warn("Background saving error");
  }
  // SIGUSR1 is how a save is cancelled on purpose: not a disk error.
  if (exit.signal != SIGUSR1) st.last_bgsave_ok = false;
  unlink(TempFileOf(exit.pid).c_str());
}

}  // namespace

RdbState& RdbStateOf(PersistenceHost& host) { return host.SnapshotState(); }

std::string RdbPath(PersistenceHost& host) { return host.PersistenceConfig().dbfilename; }

bool OtherChildActive(PersistenceHost& host) {
  return host.PersistenceChildren().active() && !host.PersistenceChildren().active(ChildKind::kRdb);
}

bool RdbChildActive(PersistenceHost& host) {
  return host.PersistenceChildren().active(ChildKind::kRdb);
}

std::string RdbSaveNow(PersistenceHost& host) {
  RdbState& st = RdbStateOf(host);
  uint64_t dirty = host.DirtyCount();
  std::string err = SaveLogged(host);
  if (!err.empty()) {
    st.last_bgsave_ok = false;
    return err;
  }
  SaveSucceeded(host, st, dirty);
  return "";
}

std::string RdbBackgroundSave(PersistenceHost& host) {
  RdbState& st = RdbStateOf(host);
  if (host.PersistenceChildren().active()) return "a child process is already active";
  ++st.saves;  // Redis counts attempts (INFO rdb_saves), failed ones too
  st.last_bgsave_try = time(nullptr);
  st.dirty_before_bgsave = host.DirtyCount();
  pid_t pid = host.PersistenceChildren().Start(
      ChildKind::kRdb, [&host] { return SaveLogged(host).empty() ? 0 : 1; },
      [&host](const ChildExit& exit) { BackgroundSaveDone(host, exit); });
  if (pid < 0) {
    st.last_bgsave_ok = false;
    std::string err = std::strerror(errno);
    spdlog::warn("Can't save in background: fork: {}", err);
    return err;
  }
  spdlog::info("Background saving started by pid {}", pid);
  st.bgsave_scheduled = false;
  return "";
}

void RdbKillChild(PersistenceHost& host) {
  if (host.PersistenceChildren().active(ChildKind::kRdb)) host.PersistenceChildren().Kill(SIGUSR1);
}

void RdbCron(PersistenceHost& host) {
  RdbState& st = RdbStateOf(host);
  // One child at a time; a finished one was reaped (and its exit handled) just before.
  if (host.PersistenceChildren().active()) return;
  if (st.bgsave_scheduled) {
    RdbBackgroundSave(host);
    return;
  }
  int64_t now = time(nullptr);
  uint64_t changes = host.DirtyCount() - st.dirty_at_last_save;
  for (const auto& [seconds, min_changes] : host.PersistenceConfig().save_params) {
    if (changes >= static_cast<uint64_t>(min_changes) && now - host.LastSaveTime() > seconds &&
        (now - st.last_bgsave_try > kBgsaveRetryDelaySec || st.last_bgsave_ok)) {
      spdlog::info("{} changes in {} seconds. Saving...", min_changes, seconds);
      RdbBackgroundSave(host);
      return;
    }
  }
}

std::string RdbLoadAtStartup(PersistenceHost& host,
                             std::function<void(int db, std::string_view key)> expired,
                             RdbReplicationInfo* replication) {
  if (replication != nullptr) *replication = RdbReplicationInfo();
  RdbState& st = RdbStateOf(host);
  const std::string path = RdbPath(host);
  // Redis's words for a file that is there but can't be read (a missing one: an empty start).
  constexpr const char* kFatal = "Fatal error loading the DB, check server logs. Exiting.";
  struct stat file {};
  if (int probe = open(path.c_str(), O_RDONLY | O_CLOEXEC); probe < 0) {
    if (errno == ENOENT) return "";
    spdlog::warn("Fatal error: can't open the RDB file {} for reading: {}", path,
                 std::strerror(errno));
    return kFatal;
  } else {
    fstat(probe, &file);
    close(probe);
  }
  int64_t start = MonotonicUs();
  RdbLoadStats stats;
  bool missing = false;
  RdbLoadOptions options;
  options.deep_sanitize = host.PersistenceConfig().sanitize_dump_payload == "yes";
  options.keep_expired = host.LoadsAsReplica();
  // Clients are served (with -LOADING) while it loads, as Redis does.
  options.progress_interval = host.PersistenceConfig().loading_process_events_interval_bytes;
  options.progress = [&host](int64_t bytes) { return host.StartupLoadProgressed(bytes); };
  options.expired = std::move(expired);
  st.loading = true;
  host.StartupLoadBegan(file.st_size);
  std::string err = RdbLoadFile(host, path, options, &stats, &missing);
  host.StartupLoadEnded();
  st.loading = false;
  if (!err.empty() && RdbStateOf(host).shutdown_handled) return err;  // SHUTDOWN stopped it
  if (!err.empty()) {
    // Redis's last words on a data file it cannot read (tests and operators look for them).
    spdlog::warn("{}", err);
    return "Terminating server after rdb file reading failure.";
  }
  if (missing) return "";
  if (replication != nullptr) *replication = stats.replication;
  st.last_load_keys_loaded = stats.keys_loaded;
  st.last_load_keys_expired = stats.keys_expired;
  st.dirty_at_last_save = host.DirtyCount();
  if (stats.empty_keys_skipped > 0) {
    spdlog::info("Done loading RDB, keys loaded: {}, keys expired: {}, empty keys skipped: {}.",
                 stats.keys_loaded, stats.keys_expired, stats.empty_keys_skipped);
  } else {
    spdlog::info("Done loading RDB, keys loaded: {}, keys expired: {}.", stats.keys_loaded,
                 stats.keys_expired);
  }
  spdlog::info("DB loaded from disk: {:.3f} seconds",
               static_cast<double>(MonotonicUs() - start) / 1e6);
  return "";
}

std::string RdbSaveOnShutdown(PersistenceHost& host, bool save, bool nosave, bool force) {
  RdbStateOf(host).shutdown_handled = true;
  RdbKillChild(host);
  // A half-loaded dataset is never saved over the file it comes from (Redis: NOSAVE while
  // loading).
  if (nosave || RdbStateOf(host).loading ||
      (!save && host.PersistenceConfig().save_params.empty())) {
    return "";
  }
  spdlog::info("Saving the final RDB snapshot before exiting.");
  // A failed final save doesn't turn on MISCONF for the server that goes on running (Redis's
  // synchronous save leaves the background save status alone).
  const bool last_bgsave_ok = RdbStateOf(host).last_bgsave_ok;
  std::string err = RdbSaveNow(host);
  RdbStateOf(host).last_bgsave_ok = last_bgsave_ok;
  if (err.empty()) return "";
  if (force) {
    spdlog::warn("Error trying to save the DB. Exit anyway.");
    return "";
  }
  spdlog::warn("Error trying to save the DB, can't exit.");
  return err;
}

std::string RdbDebugReload(PersistenceHost& host, const RdbReloadOptions& options) {
  if (options.save && !RdbSaveNow(host).empty()) return "ERR Error trying to save the DB";
  if (options.flush) {
    for (int i = 0; i < host.PersistedDbCount(); ++i) host.PersistedDb(i).Clear();
    host.FunctionLibraries().FlushLibraries();
  }
  RdbLoadStats stats;
  RdbLoadOptions load;
  load.allow_duplicates = options.merge;
  load.keep_expired = host.LoadsAsReplica();
  std::string err = RdbLoadFile(host, RdbPath(host), load, &stats);
  if (!err.empty()) {
    spdlog::warn("Error trying to load the RDB dump: {}", err);
    return "ERR Error trying to load the RDB dump, check server logs.";
  }
  RdbState& st = RdbStateOf(host);
  st.last_load_keys_loaded = stats.keys_loaded;
  st.last_load_keys_expired = stats.keys_expired;
  return "";
}

std::string RdbWriteError(PersistenceHost& host) {
  const RdbState& st = RdbStateOf(host);
  if (!host.PersistenceConfig().stop_writes_on_bgsave_error ||
      host.PersistenceConfig().save_params.empty() || st.last_bgsave_ok) {
    return "";
  }
  return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
         "persist to disk. Commands that may modify the data set are disabled, because this "
         "instance is configured to report errors during writes if RDB snapshotting fails "
         "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "
         "the RDB error.";
}

std::vector<std::pair<std::string, std::string>> RdbInfoFields(PersistenceHost& host,
                                                               bool loading_sync,
                                                               bool loading_async) {
  RdbState& st = RdbStateOf(host);
  auto num = [](int64_t v) { return std::to_string(v); };
  bool in_progress = RdbChildActive(host);
  const ChildProcesses& children = host.PersistenceChildren();
  const ChildProgress& child = children.progress();
  // How far the running child (a snapshot or an AOF rewrite) is through the keys.
  double fork_perc = 0;
  if (children.active() && child.keys_total > 0) {
    fork_perc =
        100.0 * static_cast<double>(child.keys_processed) / static_cast<double>(child.keys_total);
  }
  const int64_t cow_age =
      child.cow_updated_ms != 0 ? ((MonotonicUs() / 1000) - child.cow_updated_ms) / 1000 : 0;
  return {
      {"loading", st.loading || loading_sync ? "1" : "0"},
      {"async_loading", loading_async ? "1" : "0"},
      {"current_cow_peak", num(child.cow_peak)},
      {"current_cow_size", num(child.cow_bytes)},
      {"current_cow_size_age", num(cow_age)},
      {"current_fork_perc", fmt::format("{:.2f}", fork_perc)},
      {"current_save_keys_processed", num(static_cast<int64_t>(child.keys_processed))},
      {"current_save_keys_total", num(static_cast<int64_t>(child.keys_total))},
      {"rdb_changes_since_last_save",
       num(static_cast<int64_t>(host.DirtyCount() - st.dirty_at_last_save))},
      {"rdb_bgsave_in_progress", in_progress ? "1" : "0"},
      {"rdb_last_save_time", num(host.LastSaveTime())},
      {"rdb_last_bgsave_status", st.last_bgsave_ok ? "ok" : "err"},
      {"rdb_last_bgsave_time_sec", num(st.last_bgsave_time_sec)},
      {"rdb_current_bgsave_time_sec",
       num(in_progress ? (NowMs() - host.PersistenceChildren().start_ms()) / 1000 : -1)},
      {"rdb_saves", num(static_cast<int64_t>(st.saves))},
      {"rdb_last_cow_size", num(children.last_cow_bytes(ChildKind::kRdb))},
      {"rdb_last_load_keys_expired", num(static_cast<int64_t>(st.last_load_keys_expired))},
      {"rdb_last_load_keys_loaded", num(static_cast<int64_t>(st.last_load_keys_loaded))},
  };
}

}  // namespace vireo

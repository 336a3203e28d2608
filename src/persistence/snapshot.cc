#include "persistence/snapshot.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "persistence/rdb.h"
#include "scripting/scripting.h"
#include "server/server.h"
#include "util/clock.h"

namespace vireo {

namespace {

// Redis waits this long after a failed BGSAVE before a save point may try again.
constexpr int64_t kBgsaveRetryDelaySec = 5;

RdbSaveOptions SaveOptions(Server& server) {
  RdbSaveOptions o;
  o.compress = server.cfg().rdbcompression;
  o.checksum = server.cfg().rdbchecksum;
  return o;
}

void SaveSucceeded(Server& server, RdbState& st, uint64_t dirty_captured) {
  st.dirty_at_last_save = dirty_captured;
  server.set_lastsave(time(nullptr));
  st.last_bgsave_ok = true;
}

// Writes the dump (SAVE on this thread, or in BGSAVE's child) and logs the outcome.
std::string SaveLogged(Server& server) {
  std::string err = RdbSaveFile(server, RdbPath(server), SaveOptions(server));
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
void BackgroundSaveDone(Server& server, const ChildExit& exit) {
  RdbState& st = RdbStateOf(server);
  st.last_bgsave_time_sec = exit.duration_ms / 1000;
  if (exit.ok()) {
    spdlog::info("Background saving terminated with success");
    SaveSucceeded(server, st, st.dirty_before_bgsave);
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

RdbState& RdbStateOf(Server& server) { return server.rdb_state(); }

std::string RdbPath(Server& server) { return server.cfg().dbfilename; }

bool OtherChildActive(Server& server) {
  return server.children().active() && !server.children().active(ChildKind::kRdb);
}

bool RdbChildActive(Server& server) { return server.children().active(ChildKind::kRdb); }

std::string RdbSaveNow(Server& server) {
  RdbState& st = RdbStateOf(server);
  uint64_t dirty = server.dirty();
  std::string err = SaveLogged(server);
  if (!err.empty()) {
    st.last_bgsave_ok = false;
    return err;
  }
  SaveSucceeded(server, st, dirty);
  return "";
}

std::string RdbBackgroundSave(Server& server) {
  RdbState& st = RdbStateOf(server);
  if (server.children().active()) return "a child process is already active";
  ++st.saves;  // Redis counts attempts (INFO rdb_saves), failed ones too
  st.last_bgsave_try = time(nullptr);
  st.dirty_before_bgsave = server.dirty();
  pid_t pid = server.children().Start(
      ChildKind::kRdb, [&server] { return SaveLogged(server).empty() ? 0 : 1; },
      [&server](const ChildExit& exit) { BackgroundSaveDone(server, exit); });
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

void RdbKillChild(Server& server) {
  if (server.children().active(ChildKind::kRdb)) server.children().Kill(SIGUSR1);
}

void RdbCron(Server& server) {
  RdbState& st = RdbStateOf(server);
  // One child at a time; a finished one was reaped (and its exit handled) just before.
  if (server.children().active()) return;
  if (st.bgsave_scheduled) {
    RdbBackgroundSave(server);
    return;
  }
  int64_t now = time(nullptr);
  uint64_t changes = server.dirty() - st.dirty_at_last_save;
  for (const auto& [seconds, min_changes] : server.cfg().save_params) {
    if (changes >= static_cast<uint64_t>(min_changes) && now - server.lastsave() > seconds &&
        (now - st.last_bgsave_try > kBgsaveRetryDelaySec || st.last_bgsave_ok)) {
      spdlog::info("{} changes in {} seconds. Saving...", min_changes, seconds);
      RdbBackgroundSave(server);
      return;
    }
  }
}

std::string RdbLoadAtStartup(Server& server) {
  RdbState& st = RdbStateOf(server);
  st.loading = true;
  int64_t start = MonotonicUs();
  RdbLoadStats stats;
  bool missing = false;
  RdbLoadOptions options;
  options.deep_sanitize = server.cfg().sanitize_dump_payload == "yes";
  std::string err = RdbLoadFile(server, RdbPath(server), options, &stats, &missing);
  st.loading = false;
  if (!err.empty()) return err;
  if (missing) return "";
  st.last_load_keys_loaded = stats.keys_loaded;
  st.last_load_keys_expired = stats.keys_expired;
  st.dirty_at_last_save = server.dirty();
  spdlog::info("Done loading RDB, keys loaded: {}, keys expired: {}.", stats.keys_loaded,
               stats.keys_expired);
  spdlog::info("DB loaded from disk: {:.3f} seconds",
               static_cast<double>(MonotonicUs() - start) / 1e6);
  return "";
}

std::string RdbSaveOnShutdown(Server& server, bool save, bool nosave) {
  RdbStateOf(server).shutdown_handled = true;
  RdbKillChild(server);
  if (nosave || (!save && server.cfg().save_params.empty())) return "";
  spdlog::info("Saving the final RDB snapshot before exiting.");
  std::string err = RdbSaveNow(server);
  if (!err.empty()) spdlog::warn("Error trying to save the DB, can't exit.");
  return err;
}

std::string RdbDebugReload(Server& server, const RdbReloadOptions& options) {
  if (options.save && !RdbSaveNow(server).empty()) return "ERR Error trying to save the DB";
  if (options.flush) {
    for (int i = 0; i < server.db_count(); ++i) server.db(i).Clear();
    server.scripting().FlushLibraries();
  }
  RdbLoadStats stats;
  RdbLoadOptions load;
  load.allow_duplicates = options.merge;
  std::string err = RdbLoadFile(server, RdbPath(server), load, &stats);
  if (!err.empty()) {
    spdlog::warn("Error trying to load the RDB dump: {}", err);
    return "ERR Error trying to load the RDB dump, check server logs.";
  }
  RdbState& st = RdbStateOf(server);
  st.last_load_keys_loaded = stats.keys_loaded;
  st.last_load_keys_expired = stats.keys_expired;
  return "";
}

std::string RdbWriteError(Server& server) {
  const RdbState& st = RdbStateOf(server);
  if (!server.cfg().stop_writes_on_bgsave_error || server.cfg().save_params.empty() ||
      st.last_bgsave_ok) {
    return "";
  }
  return "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
         "persist to disk. Commands that may modify the data set are disabled, because this "
         "instance is configured to report errors during writes if RDB snapshotting fails "
         "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about "
         "the RDB error.";
}

std::vector<std::pair<std::string, std::string>> RdbInfoFields(Server& server) {
  RdbState& st = RdbStateOf(server);
  auto num = [](int64_t v) { return std::to_string(v); };
  bool in_progress = RdbChildActive(server);
  return {
      {"loading", st.loading || server.loading().mode == Server::LoadingMode::kSync ? "1" : "0"},
      {"async_loading", server.loading().mode == Server::LoadingMode::kAsync ? "1" : "0"},
      {"current_cow_peak", "0"},
      {"current_cow_size", "0"},
      {"current_cow_size_age", "0"},
      {"current_fork_perc", "0.00"},
      {"current_save_keys_processed", "0"},
      {"current_save_keys_total", "0"},
      {"rdb_changes_since_last_save",
       num(static_cast<int64_t>(server.dirty() - st.dirty_at_last_save))},
      {"rdb_bgsave_in_progress", in_progress ? "1" : "0"},
      {"rdb_last_save_time", num(server.lastsave())},
      {"rdb_last_bgsave_status", st.last_bgsave_ok ? "ok" : "err"},
      {"rdb_last_bgsave_time_sec", num(st.last_bgsave_time_sec)},
      {"rdb_current_bgsave_time_sec",
       num(in_progress ? (NowMs() - server.children().start_ms()) / 1000 : -1)},
      {"rdb_saves", num(static_cast<int64_t>(st.saves))},
      {"rdb_last_cow_size", "0"},
      {"rdb_last_load_keys_expired", num(static_cast<int64_t>(st.last_load_keys_expired))},
      {"rdb_last_load_keys_loaded", num(static_cast<int64_t>(st.last_load_keys_loaded))},
  };
}

}  // namespace vireo

// The append-only file, in Redis 7's multi-part layout: <dir>/<appenddirname>/ holds a base
// file (an RDB image, or commands), incremental files of commands, and the manifest listing
// them (see aof_manifest.h), so redis-server and vireo load each other's AOF directories.
//
// The command log is a sink of the server's effect stream (src/core/propagator.h),
// which decides what is logged and frames each top-level call's commands in MULTI/EXEC; the
// AOF puts a SELECT before any command whose database differs from the previous one in the
// file, and `#TS:` annotations with aof-timestamp-enabled.
//
// Durability. Logged commands collect in a buffer that BeforeSleep writes to the file before
// any reply of that loop turn goes out (so an acknowledged write has been handed to the
// kernel). appendfsync always also fdatasyncs there; everysec hands an fdatasync to a
// background thread at most once a second; no leaves it to the kernel.
//
// Rewrites (BGREWRITEAOF, the automatic rewrite, turning AOF on at run time) fork a child that
// writes the dataset as the next base file (an RDB image with aof-use-rdb-preamble yes) while
// the parent keeps logging into a new incremental file opened when the rewrite started. When
// the child succeeds the manifest is replaced atomically (temp file + rename) and the files
// the new base makes redundant are deleted in the background.
//
// The server is reached only through its PersistenceHost (persistence_host.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/child_processes.h"
#include "core/propagator.h"
#include "persistence/aof_manifest.h"

namespace vireo {

class BackgroundIo;
class PersistenceHost;

class Aof : public EffectSink {
 public:
  enum class State { kOff, kOn, kWaitRewrite };

  explicit Aof(PersistenceHost& host);
  ~Aof() override;  // writes and fsyncs what is buffered
  Aof(const Aof&) = delete;
  Aof& operator=(const Aof&) = delete;

  // Start-up, with the loop serving -LOADING. With appendonly yes: reads the manifest
  // (moving an old single-file AOF into the directory first), replays the base and incremental
  // files, then opens the log for appending, creating the first base and incremental files
  // when there are none. With appendonly no it only reads the manifest, so a later CONFIG SET
  // appendonly yes retires the old files. Returns "" or the fatal error; one starting with
  // kAofFileLoadFailed was logged already (as Redis, the reason is the log's last line).
  std::string LoadAndOpen();
  // True when AOF was on at start-up: then the AOF alone holds the data and the RDB file is not
  // loaded, even when there were no AOF files yet (as in Redis).
  bool loaded_at_startup() const { return loaded_at_startup_; }

  // True while the AOF is being replayed at start-up (its RESTOREs are trusted input).
  bool loading() const { return loading_; }
  // Whether commands are being logged now (AOF on, not loading).
  bool Logging() const;

  // EffectSink: logging is on (and not loading); one command of the effect stream.
  bool Accepting() const override { return Logging(); }
  uint8_t target() const override { return kEffectToAof; }
  void AppendEffect(int db, std::string_view resp) override;

  // Event-loop hooks: BeforeSleep writes the buffer (before replies go out); Cron runs at hz
  // (background fsync for everysec, finished rewrite children, automatic rewrites).
  void BeforeSleep();
  void Cron();
  void ApplyConfigChange(const std::string& name);
  // Writes and fsyncs everything buffered (SHUTDOWN, exit).
  void FlushAndSync();
  // SHUTDOWN's AOF step: stops a rewrite child and fsyncs the log. False (logged) when the
  // first rewrite after switching AOF on still runs, unless `force`.
  bool PrepareForShutdown(bool force);
  // DEBUG LOADAOF: writes what is buffered, empties every database and replays the files the
  // manifest on disk lists. Returns "" or why loading failed.
  std::string DebugReload();
  // WAITAOF: the replication offset up to which every effect is fsynced to the AOF, or -1
  // while the AOF is off (Redis's fsynced_reploff). Moves in BeforeSleep.
  int64_t fsynced_reploff() const { return fsynced_reploff_; }

  // BGREWRITEAOF: starts a rewrite, or schedules it while another child runs or inside
  // MULTI/EXEC (`in_exec`). The command replies with Redis's text for each outcome.
  enum class RewriteRequest { kInProgress, kScheduled, kStarted, kFailed };
  RewriteRequest RequestRewrite(bool in_exec);
  // The rewrite child runs in the server's ChildProcesses, which allows one child at a time:
  // a rewrite asked for while another child (BGSAVE) runs is scheduled for when it is done.
  bool rewrite_in_progress() const;

  State state() const { return state_; }
  // aof_last_write_status is err: Redis refuses writes with MISCONF until a write succeeds.
  bool write_failed() const { return last_write_errno_ != 0; }
  // Bytes held by the buffer of logged commands not yet written (INFO mem_aof_buffer).
  size_t buffer_bytes() const { return buf_.capacity(); }
  std::string write_error() const;

  // INFO persistence: the aof_* fields Redis always prints (aof_enabled ... aof_last_cow_size),
  // and those it prints only while AOF is on (aof_current_size ... aof_delayed_fsync).
  std::vector<std::pair<std::string, std::string>> InfoFields() const;
  std::vector<std::pair<std::string, std::string>> InfoEnabledFields() const;

 private:
  void RecordWriteLatency(int64_t ms);
  // --- the log
  // Writes the buffer; `force` also when a background fsync is running. Exits the process on
  // a write error under appendfsync always, like Redis.
  void Flush(bool force = false);
  void MaybeBackgroundFsync(bool force);

  // --- files
  std::string DirPath() const;
  std::string PathOf(const std::string& name) const;
  std::string PersistManifest(const AofManifest& manifest);
  // Opens (appending) the incremental file for the current state; see StartRewrite.
  int OpenIncr(const std::string& name, bool truncate, std::string* error);
  std::string CreateBaseNow();
  void DeleteHistory();
  int64_t FileSize(const std::string& name) const;

  // --- rewrites
  bool StartRewrite(std::string* error);
  // The child's OnExit (src/core/child_processes.h): cleanup after KillChild, else RewriteDone.
  void RewriteExited(const ChildExit& exit);
  // Installs the new base from `temp`, or (not ok) removes it and records the `failure`.
  void RewriteDone(bool ok, const std::string& temp, const std::string& failure);
  // Stops a running rewrite child (SIGKILL) and removes its temp file.
  void KillChild();
  // Whether the rewrite limit holds back an automatic or scheduled rewrite now (logs when the
  // limit starts a new wait).
  bool RewriteLimited();
  // In the child: writes the dataset to `fd`. Returns "" or an error.
  std::string WriteSnapshot(int fd, bool rdb_preamble);

  // --- on/off at run time
  void StartAppendOnly();
  void StopAppendOnly();

  PersistenceHost& host_;
  std::unique_ptr<BackgroundIo> bio_;
  State state_ = State::kOff;
  bool loaded_at_startup_ = false;
  bool loading_ = false;

  AofManifest manifest_;
  int fd_ = -1;               // the incremental file being appended to
  std::string buf_;           // logged commands not yet written
  int selected_db_ = -1;      // the database the file's last SELECT chose (-1: none yet)
  int64_t current_size_ = 0;  // base + incremental files, bytes
  int64_t base_size_ = 0;     // current_size_ after the last rewrite (or at start-up)
  int64_t written_ = 0;       // bytes written to fd_ since it was opened
  // WAITAOF bookkeeping, in replication-stream offsets: what the file holds, what the queued
  // background fsync covers, what is known fsynced.
  int64_t written_reploff_ = 0;
  int64_t queued_fsync_reploff_ = 0;
  int64_t synced_reploff_ = 0;
  int64_t fsynced_reploff_ = -1;
  int64_t fsync_requested_ = 0;  // written_ when the last fsync was requested
  int64_t last_fsync_ms_ = 0;
  int64_t postponed_since_ms_ = 0;  // everysec: a write waits for the running fsync since then
  uint64_t delayed_fsyncs_ = 0;     // writes that stopped waiting (INFO aof_delayed_fsync)
  int last_write_errno_ = 0;
  int64_t last_ts_annotation_ = 0;

  // Rewrite state (the child itself is in host_.PersistenceChildren()).
  bool child_rdb_preamble_ = true;
  bool scheduled_ = false;
  int64_t last_rewrite_time_sec_ = -1;
  bool last_rewrite_ok_ = true;
  uint64_t rewrites_ = 0;
  uint64_t consecutive_failures_ = 0;
  // After kRewriteLimitThreshold consecutive failures, automatic and scheduled rewrites wait
  // 1, 2, 4 ... 60 minutes between attempts (Redis's limit; BGREWRITEAOF is never held back).
  static constexpr uint64_t kRewriteLimitThreshold = 3;
  int64_t limit_delay_minutes_ = 0;
  int64_t limit_until_sec_ = 0;
  bool killing_ = false;  // KillChild is reaping the child: its exit is no failure
};

}  // namespace vireo

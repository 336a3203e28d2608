#include "persistence/aof.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/command_table.h"
#include "core/config.h"
#include "core/latency_monitor.h"
#include "db/database.h"
#include "persistence/aof_loader.h"
#include "persistence/aof_rewrite.h"
#include "persistence/background_io.h"
#include "persistence/persistence_host.h"
#include "persistence/rdb.h"
#include "persistence/snapshot.h"
#include "scripting/scripting.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

bool PathExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

bool DirExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::string ChildTempName(pid_t pid) { return fmt::format("temp-rewriteaof-bg-{}.aof", pid); }

}  // namespace

Aof::Aof(PersistenceHost& host) : host_(host), bio_(std::make_unique<BackgroundIo>()) {}

Aof::~Aof() {
  KillChild();
  FlushAndSync();
  if (fd_ >= 0) bio_->Close(fd_, false);
  fd_ = -1;
  bio_.reset();  // runs what is queued, then joins
}

// ---------------------------------------------------------------------------------------------
// The command log

bool Aof::Logging() const {
  if (loading_) return false;
  // While AOF is being turned on, only what happens after the rewrite child forked matters:
  // everything before is in its snapshot.
  return state_ == State::kOn || (state_ == State::kWaitRewrite && rewrite_in_progress());
}

void Aof::AppendEffect(int db, std::string_view resp) {
  if (host_.PersistenceConfig().aof_timestamp_enabled) {
    int64_t now_sec = NowMs() / 1000;
    if (now_sec > last_ts_annotation_) {
      last_ts_annotation_ = now_sec;
      fmt::format_to(std::back_inserter(buf_), "#TS:{}\r\n", now_sec);
    }
  }
  if (db != kNoDb && db != selected_db_) {
    std::string index = std::to_string(db);
    fmt::format_to(std::back_inserter(buf_), "*2\r\n$6\r\nSELECT\r\n${}\r\n{}\r\n", index.size(),
                   index);
    selected_db_ = db;
  }
  buf_.append(resp);
}

// ---------------------------------------------------------------------------------------------
// Writing and fsync

void Aof::BeforeSleep() {
  Flush();
  // The one background fsync at a time has finished: what it covered is on disk.
  if (bio_->pending_fsyncs() == 0)
    synced_reploff_ = std::max(synced_reploff_, queued_fsync_reploff_);
  // While AOF is being turned on, nothing counts until the first rewrite is done.
  if (state_ == State::kOn) {
    fsynced_reploff_ = std::max<int64_t>(fsynced_reploff_, synced_reploff_);
  } else {
    fsynced_reploff_ = -1;
  }
}

// Redis's AOF write events: "aof-write" always, and one naming what the disk was busy with.
void Aof::RecordWriteLatency(int64_t ms) {
  LatencyMonitor& monitor = host_.PersistenceLatency();
  if (monitor.threshold_ms() == 0 || ms < monitor.threshold_ms()) return;
  monitor.AddSampleIfNeeded("aof-write", ms);
  if (bio_->pending_fsyncs() > 0) {
    monitor.AddSampleIfNeeded("aof-write-pending-fsync", ms);
  } else if (host_.PersistenceChildren().active()) {
    monitor.AddSampleIfNeeded("aof-write-active-child", ms);
  } else {
    monitor.AddSampleIfNeeded("aof-write-alone", ms);
  }
}

void Aof::Flush(bool force) {
  if (buf_.empty()) return;
  if (fd_ < 0) {
    buf_.clear();
    return;
  }
  const bool everysec = host_.PersistenceConfig().appendfsync == "everysec";
  if (everysec && !force && bio_->pending_fsyncs() > 0) {
    // A write(2) to a file being fdatasync'd can wait for the disk (pages under writeback are
    // kept stable). With everysec the replies may go out before the write, so hold the buffer
    // while the background fsync runs, as Redis does, but no longer than a second (Redis
    // waits two) so at most the last second is lost in a crash.
    const int64_t now = NowMs();
    if (postponed_since_ms_ == 0) postponed_since_ms_ = now;
    if (now - postponed_since_ms_ < 1000) return;
    ++delayed_fsyncs_;
    spdlog::warn(
        "Asynchronous AOF fsync is taking too long (disk is busy?). Writing the AOF buffer "
        "without waiting for fsync to complete, this may slow down Redis.");
  }
  postponed_since_ms_ = 0;
  size_t done = 0;
  int err = 0;
  const int64_t write_start_us = MonotonicUs();
  while (done < buf_.size()) {
    ssize_t n = write(fd_, buf_.data() + done, buf_.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    if (n == 0) {
      err = ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  RecordWriteLatency((MonotonicUs() - write_start_us) / 1000);
  const bool always = host_.PersistenceConfig().appendfsync == "always";
  if (err != 0) {
    if (always) {
      // The replies of this turn can't be taken back and their writes are not on disk.
      spdlog::warn("Error writing to the AOF file: {}", strerror(err));
      spdlog::warn(
          "Can't recover from AOF write error when the AOF fsync policy is 'always'. "
          "Exiting...");
      std::_Exit(1);
    }
    // Never leave half a command in the file: cut a partial write off again if possible.
    if (done > 0 && ftruncate(fd_, written_) == 0) done = 0;
    written_ += static_cast<int64_t>(done);
    current_size_ += static_cast<int64_t>(done);
    buf_.erase(0, done);
    if (last_write_errno_ == 0) spdlog::warn("Error writing to the AOF file: {}", strerror(err));
    last_write_errno_ = err;
    return;
  }
  written_ += static_cast<int64_t>(done);
  current_size_ += static_cast<int64_t>(done);
  // Every effect up to the current stream offset is in the file now.
  written_reploff_ = host_.ReplicationOffset();
  if (last_write_errno_ != 0) {
    spdlog::warn("AOF write error looks solved, Redis can write again.");
    last_write_errno_ = 0;
  }
  buf_.clear();
  if (buf_.capacity() > (4u << 20)) buf_.shrink_to_fit();

  // Like Redis, any child (BGSAVE too) counts: its disk writes are what makes fsync stall.
  if (host_.PersistenceConfig().no_appendfsync_on_rewrite && host_.PersistenceChildren().active())
    return;
  if (always) {
    const int64_t fsync_start_us = MonotonicUs();
    const int fsync_result = fdatasync(fd_);
    host_.PersistenceLatency().AddSampleIfNeeded("aof-fsync-always",
                                                 (MonotonicUs() - fsync_start_us) / 1000);
    if (fsync_result == -1) {
      spdlog::warn(
          "Can't persist AOF for fsync error when the AOF fsync policy is 'always': {}. "
          "Exiting...",
          strerror(errno));
      std::_Exit(1);
    }
    fsync_requested_ = written_;
    last_fsync_ms_ = NowMs();
    synced_reploff_ = written_reploff_;
  } else if (everysec) {
    MaybeBackgroundFsync(false);
  }
}

void Aof::MaybeBackgroundFsync(bool force) {
  if (fd_ < 0 || written_ == fsync_requested_) return;
  // One at a time: a second fsync queued behind a slow one would only wait too.
  if (bio_->pending_fsyncs() > 0) return;
  int64_t now = NowMs();
  if (!force && now - last_fsync_ms_ < 1000) return;
  bio_->Fsync(fd_, written_);
  fsync_requested_ = written_;
  queued_fsync_reploff_ = written_reploff_;
  last_fsync_ms_ = now;
}

void Aof::FlushAndSync() {
  Flush(/*force=*/true);
  if (fd_ >= 0) {
    bio_->Drain();
    fdatasync(fd_);
    fsync_requested_ = written_;
    synced_reploff_ = written_reploff_;
  }
}

bool Aof::PrepareForShutdown(bool force) {
  if (rewrite_in_progress()) {
    // AOF switched on and its first rewrite hasn't finished: the files don't hold the data
    // yet, so exiting now would lose it.
    if (state_ == State::kWaitRewrite) {
      if (!force) {
        spdlog::warn("Writing initial AOF, can't exit.");
        return false;
      }
      spdlog::warn("Writing initial AOF. Exit anyway.");
    }
    // The log we have holds the whole dataset too, just longer.
    spdlog::warn("There is a child rewriting the AOF. Killing it!");
    KillChild();
  }
  if (state_ != State::kOff) {
    spdlog::info("Calling fsync() on the AOF file.");
    FlushAndSync();
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Files

std::string Aof::DirPath() const { return host_.PersistenceConfig().appenddirname; }

std::string Aof::PathOf(const std::string& name) const { return DirPath() + "/" + name; }

int64_t Aof::FileSize(const std::string& name) const {
  struct stat st {};
  return stat(PathOf(name).c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

std::string Aof::PersistManifest(const AofManifest& manifest) {
  std::string err = WriteFileAtomically(
      DirPath(), AofManifestName(host_.PersistenceConfig().appendfilename), manifest.ToString());
  if (!err.empty()) spdlog::warn("Can't persist the AOF manifest: {}", err);
  return err;
}

int Aof::OpenIncr(const std::string& name, bool truncate, std::string* error) {
  int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  int fd = open(PathOf(name).c_str(), flags, 0644);
  if (fd < 0) {
    *error = fmt::format("Can't open the append-only file {}: {}", name, strerror(errno));
    spdlog::warn("{}", *error);
  }
  return fd;
}

std::string Aof::WriteSnapshot(int fd, bool rdb_preamble) {
  if (!rdb_preamble) {
    // A base of commands opens with the time of its snapshot, so redis-check-aof
    // --truncate-to-timestamp can place it (an RDB preamble has no room for annotations).
    std::string annotation;
    if (host_.PersistenceConfig().aof_timestamp_enabled) {
      annotation = fmt::format("#TS:{}\r\n", NowMs() / 1000);
    }
    return WriteDatasetAsCommands(host_, fd, annotation);
  }
  RdbSaveOptions options;
  options.compress = host_.PersistenceConfig().rdbcompression;
  options.checksum = host_.PersistenceConfig().rdbchecksum;
  options.aof_base = true;
  return RdbSave(host_, fd, options);
}

std::string Aof::CreateBaseNow() {
  const bool preamble = host_.PersistenceConfig().aof_use_rdb_preamble;
  AofManifest next = manifest_;
  AofFileInfo base = next.NextBase(host_.PersistenceConfig().appendfilename, preamble);
  std::string temp = PathOf("temp-" + base.name);
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("Can't create the AOF base file {}: {}", temp, strerror(errno));
  std::string err = WriteSnapshot(fd, preamble);
  if (err.empty() && fsync(fd) != 0) err = strerror(errno);
  close(fd);
  if (err.empty() && rename(temp.c_str(), PathOf(base.name).c_str()) != 0) err = strerror(errno);
  if (!err.empty()) {
    unlink(temp.c_str());
    return fmt::format("Can't create the AOF base file {}: {}", base.name, err);
  }
  next.ReplaceBase(base, next.incrs.size());
  manifest_ = next;
  spdlog::info("Creating AOF base file {} on server start", base.name);
  return "";
}

void Aof::DeleteHistory() {
  // aof-disable-auto-gc (a test knob): the old files stay on disk until it is turned off.
  if (host_.PersistenceConfig().aof_disable_auto_gc || manifest_.history.empty()) return;
  for (const AofFileInfo& info : manifest_.history) {
    spdlog::info("Removing the history file {} in the background", info.name);
    bio_->Unlink(PathOf(info.name));
  }
  manifest_.history.clear();
  // The manifest listed them as history until now (that is how Redis's tests see them while
  // auto gc is off); a failure here only leaves stale history lines, which loading ignores.
  if (std::string err = PersistManifest(manifest_); !err.empty()) spdlog::warn("{}", err);
}

// ---------------------------------------------------------------------------------------------
// DEBUG LOADAOF

std::string Aof::DebugReload() {
  if (fd_ >= 0) FlushAndSync();
  for (int i = 0; i < host_.PersistedDbCount(); ++i) host_.PersistedDb(i).Clear();
  host_.FunctionLibraries().FlushLibraries();
  const std::string dir = DirPath();
  const std::string path = PathOf(AofManifestName(host_.PersistenceConfig().appendfilename));
  if (!PathExists(path)) return "";  // nothing to load: an empty dataset, as Redis's AOF_EMPTY
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  AofManifest manifest;
  int line = 0;
  if (std::string err = manifest.Parse(text.str(), &line); !err.empty()) return err;
  // Like Redis, the manifest on disk becomes the server's: the sequence numbers of the next
  // files continue from it (after a rewrite with AOF off the incremental numbering restarts),
  // and its history files are collected.
  manifest_ = std::move(manifest);
  DeleteHistory();
  loading_ = true;
  AofLoadOptions options;
  options.load_truncated = host_.PersistenceConfig().aof_load_truncated;
  bool loaded_any = false;
  std::string err = LoadAofFiles(host_, dir, manifest_, options, &loaded_any);
  loading_ = false;
  // The replayed commands are the files' own content, not changes to save (Redis zeroes its
  // dirty counter here).
  if (err.empty()) RdbStateOf(host_).dirty_at_last_save = host_.DirtyCount();
  return err;
}

// ---------------------------------------------------------------------------------------------
// Start-up

std::string Aof::LoadAndOpen() {
  const ServerConfig& c = host_.PersistenceConfig();
  const std::string dir = DirPath();
  const std::string manifest_name = AofManifestName(c.appendfilename);
  if (DirExists(dir) && PathExists(PathOf(manifest_name))) {
    std::ifstream in(PathOf(manifest_name), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::string content = text.str();
    int line = 0;
    std::string err = manifest_.Parse(content, &line);
    if (!err.empty()) {
      std::string message = AofManifestErrorReport(content, line, err);
      if (c.appendonly) return message;
      // AOF is off: the files are not ours to judge until it is turned on.
      spdlog::warn("{}", message);
      manifest_ = AofManifest();
    }
  }
  if (!c.appendonly) return "";
  loaded_at_startup_ = true;

  // An AOF from before Redis 7 (one file in `dir`) moves into the directory as the base.
  if (PathExists(c.appendfilename) &&
      (!DirExists(dir) || manifest_.empty() ||
       (manifest_.base.has_value() && manifest_.incrs.empty() &&
        manifest_.base->name == c.appendfilename && !PathExists(PathOf(c.appendfilename))))) {
    if (!DirExists(dir) && mkdir(dir.c_str(), 0755) != 0) {
      return fmt::format("Can't open or create append-only dir {}: {}", dir, strerror(errno));
    }
    AofManifest upgraded;
    upgraded.base = AofFileInfo{c.appendfilename, 1, AofFileType::kBase};
    upgraded.base_seq = 1;
    if (std::string err = PersistManifest(upgraded); !err.empty()) return err;
    if (rename(c.appendfilename.c_str(), PathOf(c.appendfilename).c_str()) != 0) {
      return fmt::format("Error moving the AOF file {} into the AOF directory: {}",
                         c.appendfilename, strerror(errno));
    }
    manifest_ = upgraded;
    spdlog::info("Successfully migrated an old-style AOF into the AOF directory {}", dir);
  }

  if (!manifest_.empty()) {
    loading_ = true;
    RdbStateOf(host_).loading = true;
    AofLoadOptions options;
    options.load_truncated = c.aof_load_truncated;
    options.serve_clients = true;
    bool loaded_any = false;
    std::string err = LoadAofFiles(host_, dir, manifest_, options, &loaded_any);
    RdbStateOf(host_).loading = false;
    loading_ = false;
    if (!err.empty()) return err;
  }

  if (!DirExists(dir) && mkdir(dir.c_str(), 0755) != 0) {
    return fmt::format("Can't open or create append-only dir {}: {}", dir, strerror(errno));
  }
  // Nothing at all yet: the first base is the (empty) dataset, so the directory is complete
  // and loadable by Redis from the first write on.
  if (manifest_.empty()) {
    if (std::string err = CreateBaseNow(); !err.empty()) return err;
  }
  std::string err;
  if (!manifest_.incrs.empty()) {
    fd_ = OpenIncr(manifest_.incrs.back().name, false, &err);
  } else {
    AofFileInfo incr = manifest_.NextIncr(c.appendfilename);
    fd_ = OpenIncr(incr.name, true, &err);
    manifest_.incrs.push_back(incr);
  }
  if (fd_ < 0) return err;
  if (err = PersistManifest(manifest_); !err.empty()) return err;
  DeleteHistory();

  current_size_ = manifest_.base.has_value() ? FileSize(manifest_.base->name) : 0;
  for (const AofFileInfo& info : manifest_.incrs) current_size_ += FileSize(info.name);
  base_size_ = current_size_;
  written_ = fsync_requested_ = 0;
  selected_db_ = -1;
  last_fsync_ms_ = NowMs();
  bio_->reset_fsynced_offset(0);
  state_ = State::kOn;
  return "";
}

// ---------------------------------------------------------------------------------------------
// Rewrites

bool Aof::rewrite_in_progress() const {
  return host_.PersistenceChildren().active(ChildKind::kAof);
}

bool Aof::StartRewrite(std::string* error) {
  if (rewrite_in_progress()) {
    *error = "Background append only file rewriting already in progress";
    return false;
  }
  // Checked before the files change: the fork below must not fail for this reason.
  if (host_.PersistenceChildren().active()) {
    *error = "Another child process is active";
    return false;
  }
  const ServerConfig& c = host_.PersistenceConfig();
  if (!DirExists(DirPath()) && mkdir(DirPath().c_str(), 0755) != 0) {
    *error = fmt::format("Can't open or create append-only dir {}: {}", DirPath(), strerror(errno));
    spdlog::warn("{}", *error);
    return false;
  }
  // What is logged so far belongs to the files the new base will replace (it is in the
  // child's snapshot too, so it must not reach the new incremental file).
  Flush(/*force=*/true);
  // Commands logged from the fork on go to a new incremental file. While AOF is being turned
  // on it has a temporary name: until the base exists, the manifest can't refer to it.
  if (state_ == State::kOn) {
    AofManifest next = manifest_;
    AofFileInfo incr = next.NextIncr(c.appendfilename);
    int fd = OpenIncr(incr.name, true, error);
    if (fd < 0) return false;
    next.incrs.push_back(incr);
    if (std::string err = PersistManifest(next); !err.empty()) {
      close(fd);
      unlink(PathOf(incr.name).c_str());
      *error = err;
      return false;
    }
    manifest_ = next;
    if (fd_ >= 0) bio_->Close(fd_, true);
    fd_ = fd;
    spdlog::info("Creating AOF incr file {} on background rewrite", incr.name);
  } else if (state_ == State::kWaitRewrite) {
    int fd = OpenIncr(AofTempIncrName(c.appendfilename), true, error);
    if (fd < 0) return false;
    if (fd_ >= 0) bio_->Close(fd_, false);
    fd_ = fd;
    // The base will hold everything up to now: once it is done, the fsynced offset is this
    // one (a replica after a full sync acknowledges the new master's offset with FACK, even
    // with appendfsync no), never one of an earlier stream (Redis's fsynced_reploff_pending).
    bio_->Drain();
    synced_reploff_ = queued_fsync_reploff_ = host_.ReplicationOffset();
  }
  written_ = fsync_requested_ = 0;
  selected_db_ = -1;

  const bool preamble = c.aof_use_rdb_preamble;
  const pid_t parent = getpid();
  pid_t pid = host_.PersistenceChildren().Start(
      ChildKind::kAof,
      [this, parent, preamble] {
        // The snapshot is worthless without the parent, so die with it.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) return 1;
        std::string temp = ChildTempName(getpid());
        int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        bool ok = fd >= 0;
        if (ok) ok = WriteSnapshot(fd, preamble).empty() && fsync(fd) == 0;
        if (fd >= 0) close(fd);
        return ok ? 0 : 1;
      },
      [this](const ChildExit& exit) { RewriteExited(exit); });
  const int fork_errno = errno;
  if (pid < 0) {
    *error =
        fmt::format("Can't rewrite append only file in background: fork: {}", strerror(fork_errno));
    spdlog::warn("{}", *error);
    return false;
  }
  child_rdb_preamble_ = preamble;
  scheduled_ = false;
  ++rewrites_;
  spdlog::info("Background append only file rewriting started by pid {}", pid);
  return true;
}

void Aof::RewriteExited(const ChildExit& exit) {
  const std::string temp = ChildTempName(exit.pid);
  if (killing_) {
    // Stopped on purpose (AOF turned off or on again, shutdown): not a failed rewrite.
    unlink(temp.c_str());
    return;
  }
  last_rewrite_time_sec_ = exit.duration_ms / 1000;
  if (exit.signal != 0) {
    RewriteDone(false, temp,
                fmt::format("Background AOF rewrite terminated by signal {}", exit.signal));
  } else if (!exit.ok()) {
    RewriteDone(
        false, temp,
        fmt::format("Background AOF rewrite terminated with error (exit code {})", exit.exit_code));
  } else {
    RewriteDone(true, temp, "");
  }
}

void Aof::RewriteDone(bool ok, const std::string& temp, const std::string& failure) {
  const ServerConfig& c = host_.PersistenceConfig();
  auto fail = [&](const std::string& why) {
    spdlog::warn("{}", why);
    unlink(temp.c_str());
    last_rewrite_ok_ = false;
    ++consecutive_failures_;
    if (state_ == State::kWaitRewrite) {
      // What the temporary incremental file gathered belongs to the failed snapshot: the next
      // attempt starts a fresh one. Turning AOF on must eventually succeed: try again later.
      const std::string temp_incr = AofTempIncrName(c.appendfilename);
      spdlog::info("Removing the temp incr aof file {} in the background", temp_incr);
      if (fd_ >= 0) bio_->Close(fd_, false);
      fd_ = -1;
      buf_.clear();
      // Unlinked now, not queued: the retry reopens the same name right away.
      unlink(PathOf(temp_incr).c_str());
      scheduled_ = true;
    }
  };
  if (!ok) {
    fail(failure);
    return;
  }
  spdlog::info("Background AOF rewrite terminated with success");
  AofManifest next = manifest_;
  AofFileInfo base = next.NextBase(c.appendfilename, child_rdb_preamble_);
  const int64_t rename_start_us = MonotonicUs();
  const int renamed = rename(temp.c_str(), PathOf(base.name).c_str());
  host_.PersistenceLatency().AddSampleIfNeeded("aof-rename",
                                               (MonotonicUs() - rename_start_us) / 1000);
  if (renamed != 0) {
    fail(fmt::format("Error trying to rename the temporary AOF base file {} into {}: {}", temp,
                     base.name, strerror(errno)));
    return;
  }
  spdlog::info("Successfully renamed the temporary AOF base file {} into {}", temp, base.name);
  if (state_ == State::kWaitRewrite) {
    AofFileInfo incr = next.NextIncr(c.appendfilename);
    if (rename(PathOf(AofTempIncrName(c.appendfilename)).c_str(), PathOf(incr.name).c_str()) != 0) {
      unlink(PathOf(base.name).c_str());
      fail(fmt::format("Error trying to rename the temporary AOF incr file into {}: {}", incr.name,
                       strerror(errno)));
      return;
    }
    next.ReplaceBase(base, 0);
    next.incrs.push_back(incr);
  } else {
    // With AOF on, the incremental file opened when the rewrite started stays; every older
    // one is in the new base. With AOF off there is none to keep.
    next.ReplaceBase(base, state_ == State::kOn ? 1 : 0);
  }
  if (std::string err = PersistManifest(next); !err.empty()) {
    unlink(PathOf(base.name).c_str());
    fail("Background AOF rewrite failed: " + err);
    return;
  }
  manifest_ = next;
  DeleteHistory();
  if (state_ == State::kWaitRewrite) {
    state_ = State::kOn;
    spdlog::info("AOF rewrite finished: append only file enabled");
  }
  current_size_ = FileSize(base.name) + written_;
  base_size_ = current_size_;
  last_rewrite_ok_ = true;
  consecutive_failures_ = 0;
  spdlog::info("Background AOF rewrite finished successfully");
}

void Aof::KillChild() {
  if (!rewrite_in_progress()) return;
  killing_ = true;
  host_.PersistenceChildren().Kill(SIGKILL);  // RewriteExited runs: it only cleans up
  killing_ = false;
}

Aof::RewriteRequest Aof::RequestRewrite(bool in_exec) {
  if (rewrite_in_progress()) return RewriteRequest::kInProgress;
  if (host_.PersistenceChildren().active() || in_exec) {
    scheduled_ = true;
    consecutive_failures_ = 0;  // a manual request is not held back by the limit
    return RewriteRequest::kScheduled;
  }
  std::string error;
  return StartRewrite(&error) ? RewriteRequest::kStarted : RewriteRequest::kFailed;
}

// ---------------------------------------------------------------------------------------------
// Cron, configuration, INFO

void Aof::Cron() {
  const ServerConfig& c = host_.PersistenceConfig();
  if (state_ != State::kOff && c.appendfsync == "everysec" &&
      !(c.no_appendfsync_on_rewrite && host_.PersistenceChildren().active())) {
    MaybeBackgroundFsync(false);
  }
  // One child at a time (a finished one was reaped just before this cron).
  if (host_.PersistenceChildren().active()) return;
  if (scheduled_ && !RewriteLimited()) {
    std::string error;
    StartRewrite(&error);
    return;
  }
  if (state_ == State::kOn && c.auto_aof_rewrite_percentage > 0 &&
      current_size_ > c.auto_aof_rewrite_min_size) {
    int64_t base = base_size_ > 0 ? base_size_ : 1;
    int64_t growth = current_size_ * 100 / base - 100;
    if (growth >= c.auto_aof_rewrite_percentage && !RewriteLimited()) {
      spdlog::info("Starting automatic rewriting of AOF on {}% growth", growth);
      std::string error;
      StartRewrite(&error);
    }
  }
}

bool Aof::RewriteLimited() {
  if (consecutive_failures_ < kRewriteLimitThreshold) {
    limit_delay_minutes_ = 0;  // recovered (or never limited)
    limit_until_sec_ = 0;
    return false;
  }
  const int64_t now_sec = NowMs() / 1000;
  if (limit_until_sec_ != 0) {
    if (now_sec < limit_until_sec_) return true;
    limit_until_sec_ = 0;  // one attempt when the wait is over
    return false;
  }
  limit_delay_minutes_ =
      limit_delay_minutes_ == 0 ? 1 : std::min<int64_t>(limit_delay_minutes_ * 2, 60);
  limit_until_sec_ = now_sec + limit_delay_minutes_ * 60;
  spdlog::warn(
      "Background AOF rewrite has repeatedly failed and triggered the limit, will retry in {} "
      "minutes",
      limit_delay_minutes_);
  return true;
}

void Aof::ApplyConfigChange(const std::string& name) {
  if (name == "aof-disable-auto-gc") DeleteHistory();
  if (name == "appendonly") {
    if (host_.PersistenceConfig().appendonly) {
      StartAppendOnly();
    } else {
      StopAppendOnly();
    }
  }
}

void Aof::StartAppendOnly() {
  if (state_ != State::kOff) return;
  if (!DirExists(DirPath()) && mkdir(DirPath().c_str(), 0755) != 0) {
    spdlog::warn("Can't open or create append-only dir {}: {}", DirPath(), strerror(errno));
    return;
  }
  state_ = State::kWaitRewrite;
  last_fsync_ms_ = NowMs();
  if (rewrite_in_progress()) {
    spdlog::warn(
        "AOF was enabled but there is already an AOF rewriting in background. Stopping "
        "background AOF and starting a rewrite now.");
    KillChild();
  }
  if (host_.PersistenceChildren().active() || host_.PersistenceEffects().depth() > 1) {
    scheduled_ = true;
    spdlog::warn(
        "AOF was enabled but there is already another background operation. An AOF background "
        "was scheduled to start when possible.");
    return;
  }
  std::string error;
  if (!StartRewrite(&error)) {
    spdlog::warn(
        "Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. "
        "Check the above logs for more info about the error.");
    if (fd_ >= 0) bio_->Close(fd_, false);
    fd_ = -1;
    state_ = State::kOff;
  }
}

void Aof::StopAppendOnly() {
  if (state_ == State::kOff) return;
  const bool waiting = state_ == State::kWaitRewrite;
  Flush(/*force=*/true);
  if (fd_ >= 0) {
    bio_->Close(fd_, true);
    bio_->Drain();
    fd_ = -1;
  }
  if (rewrite_in_progress()) {
    spdlog::info("Killing running AOF rewrite child: {}", host_.PersistenceChildren().pid());
    KillChild();
  }
  if (waiting) unlink(PathOf(AofTempIncrName(host_.PersistenceConfig().appendfilename)).c_str());
  buf_.clear();
  state_ = State::kOff;
  scheduled_ = false;
  selected_db_ = -1;
}

std::string Aof::write_error() const {
  return fmt::format("Errors writing to the AOF file: {}", strerror(last_write_errno_));
}

std::vector<std::pair<std::string, std::string>> Aof::InfoFields() const {
  auto s = [](int64_t v) { return std::to_string(v); };
  int64_t current = -1;
  if (rewrite_in_progress()) current = (NowMs() - host_.PersistenceChildren().start_ms()) / 1000;
  return {
      {"aof_enabled", s(state_ != State::kOff ? 1 : 0)},
      {"aof_rewrite_in_progress", s(rewrite_in_progress() ? 1 : 0)},
      {"aof_rewrite_scheduled", s(scheduled_ ? 1 : 0)},
      {"aof_last_rewrite_time_sec", s(last_rewrite_time_sec_)},
      {"aof_current_rewrite_time_sec", s(current)},
      {"aof_last_bgrewrite_status", last_rewrite_ok_ ? "ok" : "err"},
      {"aof_rewrites", s(static_cast<int64_t>(rewrites_))},
      {"aof_rewrites_consecutive_failures", s(static_cast<int64_t>(consecutive_failures_))},
      {"aof_last_write_status", last_write_errno_ == 0 ? "ok" : "err"},
      {"aof_last_cow_size", s(host_.PersistenceChildren().last_cow_bytes(ChildKind::kAof))},
  };
}

std::vector<std::pair<std::string, std::string>> Aof::InfoEnabledFields() const {
  if (state_ == State::kOff) return {};
  auto s = [](int64_t v) { return std::to_string(v); };
  return {
      {"aof_current_size", s(current_size_)},
      {"aof_base_size", s(base_size_)},
      {"aof_pending_rewrite", s(scheduled_ ? 1 : 0)},
      {"aof_buffer_length", s(static_cast<int64_t>(buf_.size()))},
      {"aof_pending_bio_fsync", s(bio_->pending_fsyncs())},
      {"aof_delayed_fsync", s(static_cast<int64_t>(delayed_fsyncs_))},
  };
}

}  // namespace vireo

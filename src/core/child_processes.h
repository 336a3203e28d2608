// The server's forked children: BGSAVE, BGREWRITEAOF and the RDB of a replication full sync.
// One manager per Server, so embedded servers in one process never see each other's children,
// and at most one child runs at a time (Redis's rule: a second fork would double the
// copy-on-write cost; BGSAVE waits for an AOF rewrite and the other way round).
//
// The child runs a function and _exit()s with its result; it never returns into the event
// loop. The parent reaps it from the cron (Reap) and hands the exit to the callback given at
// Start, on the server's thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>

namespace vireo {

class LatencyMonitor;  // core/latency_monitor.h

enum class ChildKind {
  kNone,
  kRdb,  // BGSAVE, or the snapshot of a replication full sync (to disk or to sockets)
  kAof,  // BGREWRITEAOF
};

struct ChildExit {
  pid_t pid = -1;
  ChildKind kind = ChildKind::kNone;
  bool exited = false;  // exited normally: exit_code is set
  int exit_code = 0;
  int signal = 0;  // killed by this signal (0 when exited)
  int64_t duration_ms = 0;
  // The copy-on-write size the child measured when its work was done (INFO rdb_last_cow_size,
  // aof_last_cow_size), -1 when it reported none (it failed or was killed).
  int64_t cow_bytes = -1;
  bool ok() const { return exited && exit_code == 0; }
};

// What the running child last reported about itself (INFO current_cow_size, current_fork_perc,
// ...); all zero while no child runs.
struct ChildProgress {
  int64_t cow_bytes = 0;       // its private dirty memory: the pages fork's copy-on-write cost
  int64_t cow_peak = 0;        // the largest cow_bytes reported
  int64_t cow_updated_ms = 0;  // monotonic ms of that measurement, 0 before the first
  uint64_t keys_processed = 0;
  uint64_t keys_total = 0;  // the dataset's keys when the child was forked
};

class ChildProcesses {
 public:
  using Body = std::function<int()>;
  using OnExit = std::function<void(const ChildExit&)>;

  ChildProcesses() = default;
  // Kills (SIGKILL) and reaps a child still running, without running its OnExit: the owner
  // the callback refers to is being destroyed too.
  ~ChildProcesses();
  ChildProcesses(const ChildProcesses&) = delete;
  ChildProcesses& operator=(const ChildProcesses&) = delete;

  // Forks. In the child: SIGINT ignored, SIGTERM default, then `body` runs and its return
  // value is the exit code (_exit, no atexit handlers or destructors). In the parent: returns
  // the pid, or -1 with errno set (EBUSY when a child is already running, else fork's errno).
  pid_t Start(ChildKind kind, Body body, OnExit on_exit);

  bool active() const { return pid_ > 0; }
  ChildKind kind() const { return kind_; }
  bool active(ChildKind kind) const { return pid_ > 0 && kind_ == kind; }
  pid_t pid() const { return pid_; }
  int64_t start_ms() const { return start_ms_; }  // wall clock, ms
  // Where fork() durations go as the "fork" latency event (the server's monitor).
  void set_latency_monitor(LatencyMonitor* monitor) { latency_ = monitor; }
  // Runs in every child right after fork(), before its body (the child's OOM score).
  void set_child_setup(std::function<void()> setup) { child_setup_ = std::move(setup); }
  // The dataset's key count, taken at each fork (ChildProgress::keys_total).
  void set_key_count(std::function<uint64_t()> count) { key_count_ = std::move(count); }
  int64_t last_fork_usec() const { return last_fork_usec_; }  // INFO latest_fork_usec
  uint64_t total_forks() const { return total_forks_; }       // INFO total_forks

  // From the cron: takes in what the child reported, and if it has finished, reaps it and
  // runs its OnExit.
  void Reap();
  const ChildProgress& progress() const { return progress_; }
  // The copy-on-write size the last child of `kind` reported at its end (0 before any).
  int64_t last_cow_bytes(ChildKind kind) const { return last_cow_bytes_[Index(kind)]; }

  // In a child (a no-op in the server itself): one more key written. About once a second the
  // child measures its copy-on-write size and reports it with the count, as Redis's children
  // do, so the server can show how far a save is and what it costs while it runs.
  void ChildKeyProcessed();
  // Sends `sig` to the running child, waits for it and runs its OnExit (with signal = sig).
  void Kill(int sig);

 private:
  pid_t pid_ = -1;
  ChildKind kind_ = ChildKind::kNone;
  int64_t start_ms_ = 0;
  int64_t last_fork_usec_ = 0;
  LatencyMonitor* latency_ = nullptr;
  uint64_t total_forks_ = 0;
  OnExit on_exit_;
  std::function<void()> child_setup_;
  std::function<uint64_t()> key_count_;
  ChildProgress progress_;
  int64_t last_cow_bytes_[3] = {0, 0, 0};
  int64_t final_cow_bytes_ = -1;  // the running child's final report, until Finish
  // The report pipe: the server reads its end without blocking; in the child, report_fd_ is
  // the write end (the child's copy of this object is its own).
  int report_fd_ = -1;
  bool in_child_ = false;
  // The child's side of the reports.
  uint64_t child_keys_ = 0;
  int64_t child_last_report_ms_ = 0;
  int64_t child_cow_ = 0;
  int64_t child_cow_peak_ = 0;
  int64_t child_cow_sum_ = 0;
  int64_t child_cow_readings_ = 0;
  int64_t child_cow_at_ms_ = 0;
  int64_t child_cow_cost_us_ = 0;

  static int Index(ChildKind kind) { return static_cast<int>(kind); }
  int WaitBlocking();  // the running child's wait status
  void Finish(int status);
  void ReadReports();
  void CloseReports();
  // In the child: measures (unless a recent measurement is still fresh, for a progress report)
  // and writes one report.
  void ChildReport(bool final);
};

}  // namespace vireo

#include "core/child_processes.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>

#include "core/latency_monitor.h"
#include "util/clock.h"
#include "util/table_resize.h"

namespace vireo {

namespace {

// One report through the pipe; far below PIPE_BUF, so a write of it is never split.
struct Report {
  int64_t cow_bytes;
  int64_t cow_updated_ms;
  uint64_t keys;
  bool final;
};

// The child checks the clock once per this many keys (a clock read per key would cost more
// than the keys).
constexpr uint64_t kKeysPerClockCheck = 1024;
constexpr int64_t kReportIntervalMs = 1000;
// Reading smaps walks every mapping: a progress report measures again only when the last
// reading took less than 1/kCowReadDutyCycle of the time since, so measuring stays ~1% of
// the child's time on a huge dataset.
constexpr int64_t kCowReadDutyCycle = 100;

// This process's private dirty memory: in a forked child, the pages the kernel copied because
// either side wrote them since the fork.
int64_t PrivateDirtyBytes() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Private_Dirty:", 0) == 0) return std::atoll(line.c_str() + 14) * 1024;
  }
  return 0;
}

const char* ChildName(ChildKind kind) { return kind == ChildKind::kAof ? "AOF rewrite" : "RDB"; }

}  // namespace

ChildProcesses::~ChildProcesses() {
  if (active()) {
    kill(pid_, SIGKILL);
    WaitBlocking();
  }
  CloseReports();
}

int ChildProcesses::WaitBlocking() {
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return W_EXITCODE(1, 0);  // already reaped elsewhere: a failure
  }
  return status;
}

pid_t ChildProcesses::Start(ChildKind kind, Body body, OnExit on_exit) {
  if (active()) {
    errno = EBUSY;
    return -1;
  }
  int fds[2] = {-1, -1};
  // Without the pipe the child just reports nothing.
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) fds[0] = fds[1] = -1;
  const int64_t start_us = MonotonicUs();
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    if (fds[0] >= 0) close(fds[0]);
    report_fd_ = fds[1];
    in_child_ = true;
    kind_ = kind;
    child_last_report_ms_ = (MonotonicUs() / 1000);
    // The child sees the data as it was at fork(); pages the parent writes afterwards are
    // copied by the kernel. It must never return into the event loop, nor run the parent's
    // atexit handlers and destructors.
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    // A child dies with the server (a SIGKILLed server must not leave a snapshot writer
    // behind); if the server is already gone, getppid() no longer names it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    SetTableResize(TableResize::kForbid);
    if (child_setup_) child_setup_();
    const int code = body();
    // Only a finished piece of work reports what it cost (a failed one is not a save).
    if (code == 0) ChildReport(true);
    _exit(code);
  }
  const int fork_errno = errno;
  last_fork_usec_ = MonotonicUs() - start_us;
  if (latency_ != nullptr) latency_->AddSampleIfNeeded("fork", last_fork_usec_ / 1000);
  if (fds[1] >= 0) close(fds[1]);
  if (pid < 0) {
    if (fds[0] >= 0) close(fds[0]);
    errno = fork_errno;
    return -1;
  }
  ++total_forks_;
  pid_ = pid;
  SetTableResize(TableResize::kAvoid);
  kind_ = kind;
  start_ms_ = NowMs();
  on_exit_ = std::move(on_exit);
  report_fd_ = fds[0];
  progress_ = {};
  progress_.keys_total = key_count_ ? key_count_() : 0;
  final_cow_bytes_ = -1;
  return pid;
}

void ChildProcesses::ChildKeyProcessed() {
  if (!in_child_) return;
  if (++child_keys_ % kKeysPerClockCheck != 0) return;
  if ((MonotonicUs() / 1000) - child_last_report_ms_ < kReportIntervalMs) return;
  ChildReport(false);
}

void ChildProcesses::ChildReport(bool final) {
  if (report_fd_ < 0) return;
  const int64_t start_us = MonotonicUs();
  if (final || child_cow_at_ms_ == 0 ||
      (start_us / 1000 - child_cow_at_ms_) * 1000 > child_cow_cost_us_ * kCowReadDutyCycle) {
    child_cow_ = PrivateDirtyBytes();
    const int64_t end_us = MonotonicUs();
    child_cow_at_ms_ = end_us / 1000;
    child_cow_cost_us_ = end_us - start_us;
    child_cow_peak_ = std::max(child_cow_peak_, child_cow_);
    child_cow_sum_ += child_cow_;
    ++child_cow_readings_;
    if (final || child_cow_ > 0) {
      auto line = [&] {
        return fmt::format("Fork CoW for {}: current {} MB, peak {} MB, average {} MB",
                           ChildName(kind_), child_cow_ >> 20, child_cow_peak_ >> 20,
                           (child_cow_sum_ / child_cow_readings_) >> 20);
      };
      if (final) {
        spdlog::info("{}", line());
      } else {
        spdlog::debug("{}", line());
      }
    }
  }
  child_last_report_ms_ = (MonotonicUs() / 1000);
  Report report{child_cow_, child_cow_at_ms_, child_keys_, final};
  // A full pipe (the server is busy) loses this report; the next one says more anyway.
  [[maybe_unused]] ssize_t n = write(report_fd_, &report, sizeof(report));
}

void ChildProcesses::ReadReports() {
  if (report_fd_ < 0) return;
  Report report;
  while (read(report_fd_, &report, sizeof(report)) == sizeof(report)) {
    if (report.final) {
      final_cow_bytes_ = report.cow_bytes;
      continue;
    }
    progress_.cow_bytes = report.cow_bytes;
    progress_.cow_peak = std::max(progress_.cow_peak, report.cow_bytes);
    progress_.cow_updated_ms = report.cow_updated_ms;
    progress_.keys_processed = report.keys;
  }
}

void ChildProcesses::CloseReports() {
  if (report_fd_ >= 0) close(report_fd_);
  report_fd_ = -1;
}

void ChildProcesses::Finish(int status) {
  ChildExit exit;
  exit.pid = pid_;
  exit.kind = kind_;
  exit.exited = WIFEXITED(status);
  exit.exit_code = exit.exited ? WEXITSTATUS(status) : 0;
  exit.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  exit.duration_ms = NowMs() - start_ms_;
  // The child is gone: whatever it wrote is in the pipe.
  ReadReports();
  CloseReports();
  exit.cow_bytes = final_cow_bytes_;
  if (final_cow_bytes_ >= 0) last_cow_bytes_[Index(kind_)] = final_cow_bytes_;
  final_cow_bytes_ = -1;
  progress_ = {};
  pid_ = -1;
  kind_ = ChildKind::kNone;
  SetTableResize(TableResize::kEnable);
  // The callback may start the next child (a BGSAVE that waited): take it out first.
  OnExit on_exit = std::move(on_exit_);
  on_exit_ = nullptr;
  if (on_exit) on_exit(exit);
}

void ChildProcesses::Reap() {
  if (!active()) return;
  ReadReports();
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    Finish(status);
  } else if (r < 0 && errno == ECHILD) {
    // Someone else reaped it (should not happen): report it as failed rather than waiting
    // forever.
    Finish(W_EXITCODE(1, 0));
  }
}

void ChildProcesses::Kill(int sig) {
  if (!active()) return;
  kill(pid_, sig);
  Finish(WaitBlocking());
}

}  // namespace vireo

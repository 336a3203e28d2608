#include "core/child_processes.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "core/latency_monitor.h"
#include "util/clock.h"
#include "util/table_resize.h"

namespace vireo {

ChildProcesses::~ChildProcesses() {
  if (!active()) return;
  kill(pid_, SIGKILL);
  WaitBlocking();
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
  const int64_t start_us = MonotonicUs();
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
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
    _exit(body());
  }
  const int fork_errno = errno;
  last_fork_usec_ = MonotonicUs() - start_us;
  if (latency_ != nullptr) latency_->AddSampleIfNeeded("fork", last_fork_usec_ / 1000);
  if (pid < 0) {
    errno = fork_errno;
    return -1;
  }
  ++total_forks_;
  pid_ = pid;
  SetTableResize(TableResize::kAvoid);
  kind_ = kind;
  start_ms_ = NowMs();
  on_exit_ = std::move(on_exit);
  return pid;
}

void ChildProcesses::Finish(int status) {
  ChildExit exit;
  exit.pid = pid_;
  exit.kind = kind_;
  exit.exited = WIFEXITED(status);
  exit.exit_code = exit.exited ? WEXITSTATUS(status) : 0;
  exit.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  exit.duration_ms = NowMs() - start_ms_;
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

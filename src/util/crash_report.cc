#include "util/crash_report.h"

#include <execinfo.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <ctime>

namespace vireo {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUnderAsan = true;
#else
constexpr bool kUnderAsan = false;
#endif
#else
constexpr bool kUnderAsan = false;
#endif

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Fixed buffers filled at start-up: a handler can't allocate.
char g_logfile[4096];
char g_version[64];
bool g_installed = false;
bool g_configured = false;
timer_t g_watchdog;  // SIGALRM to the thread that armed it
bool g_watchdog_created = false;
bool g_watchdog_armed = false;  // InstallCrashHandlers ran: main() owns the signal dispositions
// A stack of its own, so a stack overflow's SIGSEGV can still be reported.
alignas(16) char g_alt_stack[64 * 1024];

// A line built in a fixed buffer (truncated when full).
class Line {
 public:
  Line& Add(std::string_view s) {
    size_t n = std::min(s.size(), sizeof(buf_) - len_);
    std::memcpy(buf_ + len_, s.data(), n);
    len_ += n;
    return *this;
  }
  Line& Int(int64_t v) {
    char digits[24];
    size_t n = 0;
    uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    do {
      digits[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (v < 0) Add("-");
    while (n > 0) Add(std::string_view(&digits[--n], 1));
    return *this;
  }
  Line& Hex(uintptr_t v) {
    static constexpr char kDigits[] = "0123456789abcdef";
    char digits[2 * sizeof(v)];
    size_t n = 0;
    do {
      digits[n++] = kDigits[v & 0xf];
      v >>= 4;
    } while (v != 0);
    Add("0x");
    while (n > 0) Add(std::string_view(&digits[--n], 1));
    return *this;
  }
  std::string_view view() const { return {buf_, len_}; }

 private:
  char buf_[512];
  size_t len_ = 0;
};

int OpenLog() {
  if (g_logfile[0] == '\0') return STDOUT_FILENO;
  return open(g_logfile, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
}

void CloseLog(int fd) {
  if (fd != STDOUT_FILENO && fd >= 0) close(fd);
}

void WriteAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = write(fd, s.data(), s.size());
    if (n <= 0) return;
    s.remove_prefix(static_cast<size_t>(n));
  }
}

void WriteLine(int fd, std::string_view msg) {
  Line line;
  line.Int(getpid()).Add(":signal-handler (").Int(time(nullptr)).Add(") ").Add(msg).Add("\n");
  WriteAll(fd, line.view());
}

void WriteStackTrace(int fd) {
  WriteAll(fd, "Backtrace:\n");
  void* frames[100];
  int depth = backtrace(frames, 100);
  backtrace_symbols_fd(frames, depth, fd);
}

// The watchdog fired: the thread it targets (the loop's) has been busy for a whole period.
void OnWatchdog(int /*sig*/, siginfo_t* /*info*/, void* /*context*/) {
  int fd = OpenLog();
  if (fd < 0) return;
  WriteAll(fd, "\n--- WATCHDOG TIMER EXPIRED ---\n");
  WriteStackTrace(fd);
  WriteAll(fd, "--------\n");
  CloseLog(fd);
}

void OnCrash(int sig, siginfo_t* info, void* /*context*/) {
  int fd = OpenLog();
  if (fd >= 0) {
    WriteAll(fd, "\n\n=== VIREO BUG REPORT START: Cut & paste starting from here ===\n");
    Line what;
    what.Add("vireo ").Add(g_version).Add(" crashed by signal: ").Int(sig);
    what.Add(", si_code: ").Int(info != nullptr ? info->si_code : 0);
    WriteLine(fd, what.view());
    if (info != nullptr && (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL)) {
      Line addr;
      addr.Add("Accessing address: ").Hex(reinterpret_cast<uintptr_t>(info->si_addr));
      WriteLine(fd, addr.view());
    }
    // Sent by a process (kill, abort's raise), not raised by a fault.
    if (info != nullptr && (info->si_code == SI_USER || info->si_code == SI_TKILL)) {
      Line by;
      by.Add("Killed by PID: ").Int(info->si_pid).Add(", UID: ").Int(info->si_uid);
      WriteLine(fd, by.view());
    }
    WriteAll(fd, "\n------ STACK TRACE ------\n\n");
    WriteStackTrace(fd);
    WriteAll(fd,
             "\n=== VIREO BUG REPORT END. Make sure to include from START to END. ===\n\n"
             "       Please report the crash by opening an issue on github.\n\n");
    CloseLog(fd);
  }
  // Die of the same signal with the default action (a core dump where enabled): pending
  // until this handler returns, or, for a fault, raised again by the faulting instruction.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  kill(getpid(), sig);
}

void CopyInto(char* dst, size_t size, std::string_view src) {
  size_t n = std::min(src.size(), size - 1);
  std::memcpy(dst, src.data(), n);
  dst[n] = '\0';
}

}  // namespace

void InstallCrashHandlers(std::string_view logfile, std::string_view version, bool enabled) {
  // Absolute: CONFIG SET dir changes the working directory later.
  char cwd[2048];
  if (!logfile.empty() && logfile.front() != '/' && getcwd(cwd, sizeof(cwd)) != nullptr) {
    size_t n = std::strlen(cwd);
    CopyInto(g_logfile, sizeof(g_logfile), std::string_view(cwd, n));
    if (n + 1 < sizeof(g_logfile)) {
      g_logfile[n] = '/';
      CopyInto(g_logfile + n + 1, sizeof(g_logfile) - n - 1, logfile);
    }
  } else {
    CopyInto(g_logfile, sizeof(g_logfile), logfile);
  }
  CopyInto(g_version, sizeof(g_version), version);
  // backtrace() loads libgcc on its first call, which allocates: not in the handler.
  void* warm[1];
  backtrace(warm, 1);
  stack_t alt{};
  alt.ss_sp = g_alt_stack;
  alt.ss_size = sizeof(g_alt_stack);
  if (!kUnderAsan) sigaltstack(&alt, nullptr);
  g_configured = true;
  SetCrashLogEnabled(enabled);
}

void SetCrashLogEnabled(bool enabled) {
  if (kUnderAsan || !g_configured || enabled == g_installed) return;
  struct sigaction act {};
  sigemptyset(&act.sa_mask);
  if (enabled) {
    act.sa_flags = SA_SIGINFO | SA_ONSTACK;
    act.sa_sigaction = OnCrash;
  } else {
    act.sa_handler = SIG_DFL;
  }
  for (int sig : kCrashSignals) sigaction(sig, &act, nullptr);
  g_installed = enabled;
}

void ArmWatchdog(int64_t period_ms) {
  if (!g_configured || (period_ms <= 0 && !g_watchdog_armed)) return;
  if (!g_watchdog_created) {
    struct sigaction act {};
    sigemptyset(&act.sa_mask);
    act.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    act.sa_sigaction = OnWatchdog;
    sigaction(SIGALRM, &act, nullptr);
    // Aimed at this thread: a process-wide SIGALRM could land on a background thread, whose
    // stack says nothing about the stalled loop.
    sigevent ev{};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGALRM;
    ev._sigev_un._tid = gettid();
    if (timer_create(CLOCK_MONOTONIC, &ev, &g_watchdog) != 0) return;
    g_watchdog_created = true;
  }
  itimerspec when{};
  if (period_ms > 0) {
    when.it_value.tv_sec = period_ms / 1000;
    when.it_value.tv_nsec = (period_ms % 1000) * 1000000;
  }
  timer_settime(g_watchdog, 0, &when, nullptr);
  g_watchdog_armed = period_ms > 0;
}

void LogFromSignalHandler(std::string_view msg) {
  int fd = OpenLog();
  if (fd < 0) return;
  WriteLine(fd, msg);
  CloseLog(fd);
}

}  // namespace vireo

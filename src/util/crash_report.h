// Crash reports and logging from signal handlers, as Redis does them: on SIGSEGV, SIGBUS,
// SIGFPE, SIGILL or SIGABRT the server writes a bug report (the signal, the faulting address,
// who sent it, a stack trace) to its log, then dies of the same signal with the default
// action, so a core dump is still made where enabled.
//
// Everything here may run inside a signal handler: only async-signal-safe calls (open, write,
// close, getpid, time), no allocation. Signal dispositions belong to the process, so this
// state is process-wide by nature: only the binary's main() installs the handlers (an embedded
// server leaves the host's handlers alone).
#pragma once

#include <cstdint>
#include <string_view>

namespace vireo {

// Where the report and LogFromSignalHandler lines go: the log file, or standard output when
// `logfile` is empty. `version` goes into the report. Installs the crash handlers unless
// `enabled` is false (crash-log-enabled no); under AddressSanitizer they are never installed,
// since ASan reports those signals itself.
void InstallCrashHandlers(std::string_view logfile, std::string_view version, bool enabled);
// CONFIG SET crash-log-enabled: installs or removes the handlers.
void SetCrashLogEnabled(bool enabled);
// watchdog-period: re-armed by every cron tick, the watchdog logs a stack trace of the calling
// (loop) thread when a tick is more than `period_ms` late, i.e. something blocked the loop that
// long ("--- WATCHDOG TIMER EXPIRED ---"). 0 disarms it. Only after InstallCrashHandlers.
void ArmWatchdog(int64_t period_ms);
// One log line from a signal handler ("<pid>:signal-handler (<unix time>) <msg>", Redis's
// form for such lines), appended to the log chosen above.
void LogFromSignalHandler(std::string_view msg);

}  // namespace vireo

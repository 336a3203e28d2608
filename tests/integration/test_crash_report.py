"""Crash reports: on SIGSEGV, SIGABRT (and SIGBUS, SIGFPE, SIGILL) the server writes Redis's kind
of bug report to its log (the signal, who sent it, a stack trace), then dies of the same signal,
so a core dump is still made where enabled. crash-log-enabled no leaves the default action.
watchdog-period logs a stack trace when the event loop is blocked that long.

Skipped under the sanitizers: AddressSanitizer reports these signals itself, and the server
leaves them to it."""

from __future__ import annotations

import os
import signal

import pytest
import redis


crash_test = pytest.mark.skipif(os.environ.get("VIREO_SANITIZED") == "1",
                                reason="ASan handles the crash signals itself")


def crashed_with_report(srv, sig: int) -> str:
    assert srv.proc.wait(10) == -sig
    log = srv.log_path.read_text(errors="replace")
    assert f"crashed by signal: {sig}" in log
    assert "------ STACK TRACE ------" in log
    assert "=== VIREO BUG REPORT END." in log
    return log


@crash_test
def test_debug_segfault_writes_a_report_and_dies_of_sigsegv(server_factory):
    srv = server_factory(["--crash-memcheck-enabled", "no"])
    srv.expect_exit = True
    with pytest.raises(redis.ConnectionError):
        srv.client().execute_command("DEBUG", "SEGFAULT")
    log = crashed_with_report(srv, signal.SIGSEGV)
    assert "Accessing address:" in log


@crash_test
def test_sigabrt_from_another_process_names_the_sender(server_factory):
    srv = server_factory()
    srv.expect_exit = True
    srv.proc.send_signal(signal.SIGABRT)
    log = crashed_with_report(srv, signal.SIGABRT)
    assert f"Killed by PID: {os.getpid()}" in log


@crash_test
def test_debug_assert_aborts_with_a_report(server_factory):
    srv = server_factory()
    srv.expect_exit = True
    with pytest.raises(redis.ConnectionError):
        srv.client().execute_command("DEBUG", "ASSERT")
    log = crashed_with_report(srv, signal.SIGABRT)
    assert "ASSERTION FAILED" in log


@crash_test
@pytest.mark.parametrize("how", ["config-file", "config-set"])
def test_crash_log_disabled_dies_without_a_report(server_factory, how):
    srv = server_factory(["--crash-log-enabled", "no"] if how == "config-file" else [])
    if how == "config-set":
        srv.client().config_set("crash-log-enabled", "no")
    srv.expect_exit = True
    srv.proc.send_signal(signal.SIGSEGV)
    assert srv.proc.wait(10) == -signal.SIGSEGV
    assert "crashed by signal" not in srv.log_path.read_text(errors="replace")


def test_watchdog_logs_a_stack_trace_while_the_loop_is_blocked(server_factory):
    srv = server_factory()
    c = srv.client()
    c.config_set("watchdog-period", 200)
    c.execute_command("DEBUG", "SLEEP", "1")
    log = srv.log_path.read_text(errors="replace")
    assert log.count("--- WATCHDOG TIMER EXPIRED ---") == 1
    assert "Backtrace:" in log
    # Disarmed: a blocked loop goes unreported.
    c.config_set("watchdog-period", 0)
    c.execute_command("DEBUG", "SLEEP", "0.5")
    assert srv.log_path.read_text(errors="replace").count("WATCHDOG TIMER EXPIRED") == 1

"""The shutdown sequence as Redis 7.2 runs it: SHUTDOWN and SIGTERM/SIGINT wait (up to
shutdown-timeout) for lagging replicas with writes paused, SHUTDOWN ABORT cancels, a failing
save or an unfinished initial AOF stops the shutdown unless FORCE, a second SIGINT exits at
once, and the log lines Redis prints."""

from __future__ import annotations

import os
import signal
import time

import pytest

from conftest import wait_for


def info_field(client, section: str, name: str) -> str | None:
    value = client.info(section).get(name)
    return None if value is None else str(value)


def wait_log(srv, text: str, timeout: float = 10.0) -> None:
    wait_for(lambda: text in srv.log_path.read_text(errors="replace"), timeout,
             message=f"{text!r} not in the log:\n{srv.log_text()}")


def server_with_slow_saves(server_factory, args, keys: int, delay_us: int):
    """A server holding `keys` keys whose snapshots (and AOF rewrites) take delay_us per key."""
    srv = server_factory(args)
    c = srv.client()
    for i in range(keys):
        c.set(i, i)
    c.config_set("rdb-key-save-delay", delay_us)
    return srv, c


def replicate(server_factory, master_args=()):
    """A master and a replica in sync; returns (master, replica, their clients)."""
    master = server_factory(list(master_args))
    replica = server_factory()
    m, r = master.client(), replica.client()
    r.replicaof("127.0.0.1", master.port)
    wait_for(lambda: info_field(r, "replication", "master_link_status") == "up", 10)
    m.set("k", 1)
    wait_for(lambda: r.get("k") == b"1", 10)
    return master, replica, m, r


def stop_replica_behind(master, replica, m):
    """Freezes the replica and writes one more command it won't have acknowledged."""
    replica.proc.send_signal(signal.SIGSTOP)
    m.incr("k")


def test_abort_without_shutdown_and_bad_combinations(raw, server):
    assert raw.execute("SHUTDOWN", "ABORT") == b"-ERR No shutdown in progress.\r\n"
    assert raw.execute("SHUTDOWN", "ABORT", "NOSAVE") == b"-ERR syntax error\r\n"
    assert raw.execute("SHUTDOWN", "SAVE", "NOSAVE") == b"-ERR syntax error\r\n"
    assert server.alive()


def test_abort_cancels_a_pending_sigterm(server_factory):
    srv = server_factory(["--save", "900 1"])
    c = srv.client()
    # With the cron paused the signal is noted but not acted on, as in Redis.
    c.execute_command("DEBUG", "PAUSE-CRON", "1")
    srv.proc.send_signal(signal.SIGTERM)
    wait_log(srv, "Received SIGTERM scheduling shutdown...")
    assert c.execute_command("SHUTDOWN", "ABORT") is True
    wait_log(srv, "Shutdown manually aborted.")
    c.execute_command("DEBUG", "PAUSE-CRON", "0")
    assert c.ping()
    assert srv.alive()


def test_failing_save_stops_the_shutdown_unless_nosave_or_force(server_factory):
    srv = server_factory(["--save", "900 1"])
    c = srv.client()
    c.set("a", 1)
    # A directory where the dump goes: the final rename fails.
    (srv.workdir / "dump.rdb").mkdir()
    srv.proc.send_signal(signal.SIGINT)
    wait_log(srv, "Error trying to save the DB, can't exit.")
    wait_log(srv, "Errors trying to shut down the server. Check the logs for more information.")
    assert c.ping()
    raw = srv.raw()
    assert raw.execute("SHUTDOWN") == b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
    assert srv.alive()
    srv.expect_exit = True
    raw.send_command("SHUTDOWN", "FORCE")
    assert raw.read_until_closed() == b""
    assert srv.proc.wait(10) == 0
    wait_log(srv, "Error trying to save the DB. Exit anyway.")
    wait_log(srv, "ready to exit, bye bye")


def test_sigterm_refused_while_the_initial_aof_is_written(server_factory):
    srv, c = server_with_slow_saves(server_factory, ["--appendonly", "no"], 10, 10000000)
    c.config_set("appendonly", "yes")
    wait_for(lambda: info_field(c, "persistence", "aof_rewrite_in_progress") == "1", 10)
    srv.proc.send_signal(signal.SIGTERM)
    wait_log(srv, "Writing initial AOF, can't exit.")
    assert c.ping()
    # With FORCE the signal's shutdown goes ahead (the rewrite child is killed).
    c.config_set("shutdown-on-sigterm", "force")
    srv.expect_exit = True
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(10) == 0
    wait_log(srv, "Writing initial AOF. Exit anyway.")


def test_second_sigint_exits_at_once_and_removes_the_temp_file(server_factory):
    # The final save takes 2 s.
    srv, c = server_with_slow_saves(server_factory, ["--save", "900 1"], 20, 100000)
    temp = srv.workdir / f"temp-{srv.proc.pid}.rdb"
    srv.proc.send_signal(signal.SIGINT)
    wait_for(temp.exists, 10, message="the final save never started")
    srv.expect_exit = True
    srv.proc.send_signal(signal.SIGINT)
    assert srv.proc.wait(10) == 1
    assert not temp.exists()
    wait_log(srv, "You insist... exiting now.")


@pytest.mark.parametrize("how", ["sigterm", "shutdown"])
def test_master_waits_for_a_lagging_replica(server_factory, how):
    master, replica, m, r = replicate(server_factory)
    m.config_set("shutdown-timeout", 300)
    stop_replica_behind(master, replica, m)
    master.expect_exit = True
    try:
        if how == "sigterm":
            master.proc.send_signal(signal.SIGTERM)
        else:
            conn = master.raw()
            conn.send_command("SHUTDOWN")
        wait_for(lambda: int(info_field(m, "server", "shutdown_in_milliseconds") or 0) > 0, 10)
        # Writes wait meanwhile; the master is still there.
        assert master.alive()
        if how == "shutdown":
            assert info_field(m, "clients", "blocked_clients") == "1"
    finally:
        replica.proc.send_signal(signal.SIGCONT)
    assert master.proc.wait(10) == 0
    assert r.get("k") == b"2"
    wait_log(master, "Waiting for replicas before shutting down.")
    wait_log(master, "1 of 1 replicas are in sync when shutting down.")
    assert "Lagging replica" not in master.log_text(100000)


def test_master_gives_up_on_a_replica_after_shutdown_timeout(server_factory):
    master, replica, m, r = replicate(server_factory)
    m.config_set("shutdown-timeout", 1)
    stop_replica_behind(master, replica, m)
    master.expect_exit = True
    try:
        start = time.monotonic()
        master.proc.send_signal(signal.SIGTERM)
        assert master.proc.wait(10) == 0
        assert time.monotonic() - start >= 0.9
        wait_log(master, "Lagging replica")
        wait_log(master, "0 of 1 replicas are in sync when shutting down.")
    finally:
        replica.proc.send_signal(signal.SIGCONT)


def test_shutdown_now_does_not_wait(server_factory):
    master, replica, m, r = replicate(server_factory)
    stop_replica_behind(master, replica, m)
    master.expect_exit = True
    try:
        conn = master.raw()
        conn.send_command("SHUTDOWN", "NOW")
        assert conn.read_until_closed() == b""
        assert master.proc.wait(10) == 0
    finally:
        replica.proc.send_signal(signal.SIGCONT)
    assert "Waiting for replicas" not in master.log_text(100000)


@pytest.mark.parametrize("ending", ["abort", "failure"])
def test_waiting_shutdown_clients_get_the_error(server_factory, ending):
    master, replica, m, r = replicate(server_factory)
    stop_replica_behind(master, replica, m)
    try:
        c1, c2 = master.raw(), master.raw()
        c1.send_command("SHUTDOWN")
        c2.send_command("SHUTDOWN")
        wait_for(lambda: info_field(m, "clients", "blocked_clients") == "2", 10)
        # The replica isn't counted among the clients, as in Redis.
        assert info_field(m, "clients", "connected_clients") == "3"
        if ending == "abort":
            assert m.execute_command("SHUTDOWN", "ABORT") is True
        else:
            # An initial AOF rewrite that won't finish makes the final steps fail.
            m.config_set("rdb-key-save-delay", 30000000)
            m.config_set("appendonly", "yes")
    finally:
        replica.proc.send_signal(signal.SIGCONT)
    error = b"-ERR Errors trying to SHUTDOWN. Check logs.\r\n"
    assert c1.read_reply() == error
    assert c2.read_reply() == error
    assert master.alive()
    # Writes go on again.
    assert m.incr("k") == 3
    if ending == "abort":
        wait_log(master, "Shutdown manually aborted.")
    else:
        wait_log(master, "1 of 1 replicas are in sync when shutting down.")
        wait_log(master, "Writing initial AOF, can't exit.")
        master.expect_exit = True
        conn = master.raw()
        conn.send_command("SHUTDOWN", "NOSAVE", "FORCE")
        assert conn.read_until_closed() == b""
        assert master.proc.wait(10) == 0


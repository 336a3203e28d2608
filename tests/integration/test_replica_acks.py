"""A replica's answers to its master's stream: the errors it logs (the master never sees them),
and its FACK (WAITAOF) after a full sync."""

from __future__ import annotations

from conftest import HOST, wait_for
from repl_helpers import procs, start_vireo, wait_in_sync, wait_link_up  # noqa: F401


def linked_pair(procs, *args):
    master = start_vireo(procs, *args)
    replica = start_vireo(procs, *args)
    r = replica.client()
    r.replicaof(HOST, master.port)
    wait_link_up(r)
    return master, replica


def critical_lines(handle) -> list[str]:
    return [l for l in handle.log_text(200_000).splitlines() if "== CRITICAL ==" in l]


def test_replica_logs_an_error_it_sends_to_its_master(procs):
    master, replica = linked_pair(procs)
    m, r = master.client(), replica.client()
    m.execute_command("DEBUG", "REPLICATE", "fake-command-1")
    m.set("foo", "bar")
    wait_in_sync(m, r)
    lines = critical_lines(replica)
    assert len(lines) == 1, lines
    assert ("This replica is sending an error to its master: 'ERR unknown command "
            "'fake-command-1'") in lines[0]
    assert r.info("stats")["unexpected_error_replies"] == 1
    # A writable replica's own change makes the master's command fail there: logged too.
    r.config_set("replica-read-only", "no")
    r.set("number", "foo")
    m.incrby("number", 1)
    wait_in_sync(m, r)
    lines = critical_lines(replica)
    assert len(lines) == 2 and "after processing the command 'incrby'" in lines[1], lines
    assert r.get("number") == b"foo"
    # Nothing of the sort for a command that succeeds, or on the master.
    assert critical_lines(master) == []


def test_waitaof_acknowledged_by_full_sync_with_appendfsync_no(procs):
    # The replica never fsyncs (appendfsync no): only its full sync, whose AOF rewrite holds
    # everything up to the master's offset, makes its FACK cover the write.
    master = start_vireo(procs, "--appendonly", "yes", "--appendfsync", "always")
    other = start_vireo(procs)
    replica = start_vireo(procs, "--appendonly", "yes", "--appendfsync", "no")
    r = replica.client()
    r.replicaof(HOST, other.port)
    wait_link_up(r)
    waiter = master.client(socket_timeout=30)
    waiter.set("boo", "11")  # WAITAOF waits for its own connection's last write
    r.replicaof(HOST, master.port)
    assert waiter.execute_command("WAITAOF", 1, 1, 0) == [1, 1]
    wait_for(lambda: r.get("boo") == b"11", timeout=10)

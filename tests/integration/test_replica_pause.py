"""CLIENT PAUSE on a replica holds its master's stream too (Redis 7.2): the bytes are read (the
read offset grows) but not applied until the pause ends, and then in order."""

from __future__ import annotations

from conftest import HOST, wait_for
from repl_helpers import procs, start_vireo, wait_in_sync, wait_link_up  # noqa: F401


def offsets(replica):
    i = replica.info("replication")
    return i["slave_read_repl_offset"], i["slave_repl_offset"]


def linked(procs):
    master_h = start_vireo(procs)
    replica_h = start_vireo(procs)
    master, replica = master_h.client(), replica_h.client()
    replica.replicaof(HOST, master_h.port)
    wait_link_up(replica)
    return master, replica


def test_write_pause_holds_the_master_stream_until_unpaused(procs):
    master, replica = linked(procs)
    master.set("foo", "bar")
    wait_in_sync(master, replica)
    applied = master.info("replication")["master_repl_offset"]

    replica.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    master.set("foo2", "bar2")
    master.incr("counter")
    target = master.info("replication")["master_repl_offset"]
    wait_for(lambda: offsets(replica)[0] == target, message="replica never read the stream")
    assert offsets(replica)[1] == applied
    assert replica.get("foo2") is None
    # Reads still run during a write pause.
    assert replica.get("foo") == b"bar"

    replica.execute_command("CLIENT", "UNPAUSE")
    wait_for(lambda: offsets(replica) == (target, target), message="stream not applied")
    assert replica.get("foo2") == b"bar2"
    assert replica.get("counter") == b"1"
    # The link goes on normally afterwards.
    master.set("after", "1")
    wait_in_sync(master, replica)
    assert replica.get("after") == b"1"


def test_a_transaction_held_by_the_pause_counts_once_it_ran(procs):
    master, replica = linked(procs)
    wait_in_sync(master, replica)
    applied = master.info("replication")["master_repl_offset"]

    replica.execute_command("CLIENT", "PAUSE", 100000, "WRITE")
    with master.pipeline(transaction=True) as p:
        p.set("a", 1)
        p.set("b", 2)
        p.execute()
    target = master.info("replication")["master_repl_offset"]
    wait_for(lambda: offsets(replica)[0] == target, message="replica never read the stream")
    assert offsets(replica)[1] == applied
    replica.execute_command("CLIENT", "UNPAUSE")
    wait_for(lambda: offsets(replica)[1] == target, message="transaction not applied")
    assert replica.mget("a", "b") == [b"1", b"2"]

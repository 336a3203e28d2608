"""Writable replicas (replica-read-only no) and what a vireo replica does with its own writes:
keys its clients give a TTL expire on the replica itself (Redis's slaveKeysWithExpire), while
the master's keys still wait for the master's DELs. Redis's integration/replication-3 and
unit/expire check the same."""

from __future__ import annotations

import threading

import redis

from conftest import wait_for
from repl_helpers import procs, start_vireo, wait_in_sync, wait_link_up  # noqa: F401


def vireo_pair(procs):
    m = start_vireo(procs)
    rep = start_vireo(procs, "--replicaof", "127.0.0.1", m.port, "--replica-read-only", "no")
    mc, rc = m.client(), rep.client()
    wait_link_up(rc)
    return mc, rc


def test_keys_written_with_ttl_on_a_writable_replica_expire_there(procs):
    mc, rc = vireo_pair(procs)
    before = rc.info("stats")["expired_keys"]
    rc.set("k1", "1", px=50)
    rc.set("k2", "2")
    rc.pexpire("k2", 50)
    rc.set("k3", "3", px=50)
    rc.persist("k3")  # no TTL any more: it stays
    assert rc.dbsize() == 3
    # The replica's cron deletes them (not a read: DBSIZE counts stored keys).
    wait_for(lambda: rc.dbsize() == 1, timeout=10, message="replica-written keys never expired")
    assert rc.info("stats")["expired_keys"] == before + 2
    assert rc.get("k3") == b"3"
    assert mc.dbsize() == 0


def test_master_keys_still_wait_for_the_masters_del(procs):
    mc, rc = vireo_pair(procs)
    mc.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    mc.set("key1", "5", px=10)
    mc.set("key2", "5", px=10)
    wait_in_sync(mc, rc)
    # Past their TTL they read as missing on the replica, but stay stored.
    wait_for(lambda: rc.exists("key1", "key2") == 0, timeout=5)
    # The replica's cron runs meanwhile (a key of its own expires) and leaves them alone.
    rc.set("own", "x", px=10)
    wait_for(lambda: rc.dbsize() == 2, timeout=10, message="the replica's own key never expired")
    # A write sees the expired key as absent: INCR starts over, without a TTL.
    assert rc.incr("key1") == 1
    assert rc.ttl("key1") == -1
    assert rc.get("key2") is None
    assert rc.dbsize() == 2


def test_flushdb_of_an_empty_db_in_a_script_is_replicated(procs):
    # No PINGs to move the offset meanwhile.
    m = start_vireo(procs, "--repl-ping-replica-period", "3600")
    rep = start_vireo(procs, "--replicaof", "127.0.0.1", m.port)
    mc, rc = m.client(), rep.client()
    wait_link_up(rc)
    mc.set("warm", "1")  # the stream's SELECT goes out now, not with the FLUSHDB below
    mc.delete("warm")
    wait_in_sync(mc, rc)

    def offset():
        return mc.info("replication")["master_repl_offset"]

    # A plain FLUSHDB of the empty database goes out (Redis forces it); so does one run by a
    # script, and FLUSHALL either way.
    for command in ("flushdb", "flushall"):
        start = offset()
        mc.execute_command(command.upper())
        plain = offset() - start
        assert plain > 0
        start = offset()
        mc.eval(f"redis.call('{command}')", 0)
        assert offset() - start == plain


def test_master_stream_waits_while_the_replica_runs_a_busy_script(procs):
    m = start_vireo(procs)
    rep = start_vireo(procs, "--replicaof", "127.0.0.1", m.port, "--busy-reply-threshold", "100")
    mc, rc = m.client(), rep.client()
    wait_link_up(rc)
    runner = rep.client()
    result = {}

    def spin():
        try:
            runner.eval("while true do end", 0)
        except redis.ResponseError as e:
            result["error"] = str(e)

    thread = threading.Thread(target=spin)
    thread.start()

    def busy():
        try:
            rc.ping()
            return False
        except redis.exceptions.BusyLoadingError:
            return True
        except redis.ResponseError as e:
            return str(e).startswith("BUSY")

    wait_for(busy, timeout=10, message="the script never became busy")
    for _ in range(200):
        mc.incr("ctr")
    # The stream is not applied meanwhile (its commands would only get -BUSY).
    assert busy()
    rc.execute_command("SCRIPT", "KILL")
    thread.join(10)
    assert "Script killed" in result.get("error", "")
    wait_in_sync(mc, rc)
    assert rc.get("ctr") == b"200"

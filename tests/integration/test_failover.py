"""FAILOVER: a coordinated hand-over from a vireo master to a vireo replica (and to a real Redis
7 replica), PSYNC ... FAILOVER, its errors, timeouts, FORCE and ABORT; WAITAOF."""

from __future__ import annotations

import pytest
import redis

from conftest import wait_for
from repl_helpers import (assert_same_data, populate, procs, start_redis, start_vireo,
                          wait_in_sync, wait_link_up)


def group(procs, n=2):
    """A vireo master with `n` vireo replicas, in sync."""
    m = start_vireo(procs)
    mc = m.client()
    populate(mc)
    reps = [start_vireo(procs, "--replicaof", "127.0.0.1", m.port) for _ in range(n)]
    clients = [r.client() for r in reps]
    for rc in clients:
        wait_link_up(rc)
        wait_in_sync(mc, rc)
    wait_for(lambda: all(s["state"] == "online" for k, s in mc.info("replication").items()
                         if k.startswith("slave")))
    return m, mc, reps, clients


def role(c):
    return c.execute_command("ROLE")


def test_failover_to_a_named_replica(procs):
    m, mc, reps, (ac, bc) = group(procs)
    target = reps[0]
    mc.set("last-write", "before")
    assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", target.port, "TIMEOUT", 10000)
    # The target takes over; the old master follows it and catches up.
    wait_for(lambda: role(ac)[0] == b"master", timeout=15)
    wait_for(lambda: role(mc)[0] == b"slave" and role(mc)[2] == target.port, timeout=15)
    wait_link_up(mc)
    assert mc.info("replication")["master_failover_state"] == "no-failover"
    ac.set("after", "new master")
    wait_in_sync(ac, mc)
    assert mc.get("after") == b"new master"
    assert_same_data(ac, mc)
    # The old master's history continues: it resynced partially with the new master.
    assert ac.info("stats")["sync_partial_ok"] >= 1
    assert ac.info("replication")["master_replid2"] == mc.info("replication")["master_replid2"]


def test_failover_to_any_replica(procs):
    m, mc, reps, clients = group(procs)
    assert mc.execute_command("FAILOVER")
    wait_for(lambda: any(role(c)[0] == b"master" for c in clients), timeout=15)
    wait_for(lambda: role(mc)[0] == b"slave", timeout=15)
    new_master = next(c for c in clients if role(c)[0] == b"master")
    wait_link_up(mc)
    wait_in_sync(new_master, mc)
    assert_same_data(new_master, mc)


def test_writes_wait_during_failover_until_it_aborts(procs):
    m, mc, reps, _ = group(procs, 1)
    writer = m.client()
    import threading

    out = {}

    def write():
        try:
            writer.set("during", 1)
            out["r"] = "ok"
        except redis.ResponseError as e:
            out["r"] = str(e)

    # A FAILOVER that cannot finish (the target is paused) holds writes.
    reps[0].proc.send_signal(19)  # SIGSTOP
    try:
        mc.set("unacknowledged", 1)  # the stopped replica can't catch up with this
        assert mc.execute_command("FAILOVER", "TIMEOUT", 500)
        assert mc.info("replication")["master_failover_state"] == "waiting-for-sync"
        t = threading.Thread(target=write)
        t.start()
        wait_for(lambda: any("b" in c["flags"] for c in mc.client_list()))
        assert mc.get("during") is None  # reads go on
        # The timeout passes without a caught-up replica: aborted, writes resume.
        t.join(10)
        assert out["r"] == "ok"
        assert mc.info("replication")["master_failover_state"] == "no-failover"
        assert role(mc)[0] == b"master"
    finally:
        reps[0].proc.send_signal(18)  # SIGCONT


def test_failover_errors_and_abort(procs):
    m = start_vireo(procs)
    mc = m.client()
    with pytest.raises(redis.ResponseError, match="FAILOVER requires connected replicas."):
        mc.execute_command("FAILOVER")
    with pytest.raises(redis.ResponseError, match="No failover in progress."):
        mc.execute_command("FAILOVER", "ABORT")
    rep = start_vireo(procs, "--replicaof", "127.0.0.1", m.port)
    rc = rep.client()
    wait_link_up(rc)
    wait_for(lambda: mc.info("replication")["slave0"]["state"] == "online")
    with pytest.raises(redis.ResponseError, match="FAILOVER timeout must be greater than 0"):
        mc.execute_command("FAILOVER", "TIMEOUT", 0)
    with pytest.raises(redis.ResponseError, match="requires both a timeout and target HOST"):
        mc.execute_command("FAILOVER", "FORCE")
    with pytest.raises(redis.ResponseError, match="is not a replica"):
        mc.execute_command("FAILOVER", "TO", "127.0.0.1", 1)
    with pytest.raises(redis.ResponseError, match="syntax error"):
        mc.execute_command("FAILOVER", "BOGUS")
    with pytest.raises(redis.ResponseError, match="FAILOVER is not valid when server is a replica."):
        rc.execute_command("FAILOVER")
    # ABORT while waiting: writes flow again.
    rep.proc.send_signal(19)
    try:
        mc.set("unacknowledged", 1)
        assert mc.execute_command("FAILOVER")
        with pytest.raises(redis.ResponseError, match="FAILOVER already in progress."):
            mc.execute_command("FAILOVER")
        with pytest.raises(redis.ResponseError, match="REPLICAOF not allowed while failing over."):
            mc.execute_command("REPLICAOF", "127.0.0.1", rep.port)
        assert mc.execute_command("FAILOVER", "ABORT")
        assert mc.set("k", "v")
    finally:
        rep.proc.send_signal(18)


def test_psync_failover_needs_the_right_replid(procs):
    m = start_vireo(procs)
    mc = m.client()
    with pytest.raises(redis.ResponseError, match="PSYNC FAILOVER replid must match my replid."):
        mc.execute_command("PSYNC", "0" * 40, 1, "FAILOVER")


def test_failover_to_a_real_redis_replica(procs):
    m = start_vireo(procs)
    mc = m.client()
    populate(mc)
    rep = start_redis(["--replicaof", "127.0.0.1", str(m.port)])
    procs.append(rep)
    rc = rep.client()
    wait_link_up(rc)
    wait_in_sync(mc, rc)
    wait_for(lambda: mc.info("replication")["slave0"]["state"] == "online")
    assert mc.execute_command("FAILOVER", "TO", "127.0.0.1", rep.port)
    wait_for(lambda: role(rc)[0] == b"master", timeout=15)
    wait_for(lambda: role(mc)[0] == b"slave", timeout=15)
    wait_link_up(mc)
    rc.set("from-redis", 1)
    wait_in_sync(rc, mc)
    assert_same_data(rc, mc)


def test_waitaof(procs, tmp_path):
    m = start_vireo(procs, "--appendonly", "yes", "--appendfsync", "always")
    mc = m.client()
    with pytest.raises(redis.ResponseError, match="value must between 0 and 1"):
        mc.execute_command("WAITAOF", 2, 0, 0)
    with pytest.raises(redis.ResponseError, match="must be positive"):
        mc.execute_command("WAITAOF", 0, -1, 0)
    mc.set("k", "v")
    assert mc.execute_command("WAITAOF", 1, 0, 0) == [1, 0]
    rep = start_vireo(procs, "--replicaof", "127.0.0.1", m.port, "--appendonly", "yes",
                "--appendfsync", "always")
    rc = rep.client()
    wait_link_up(rc)
    mc.set("k2", "v")
    assert mc.execute_command("WAITAOF", 1, 1, 5000) == [1, 1]
    # A replica without AOF never confirms: the count at the timeout.
    plain = start_vireo(procs, "--replicaof", "127.0.0.1", m.port)
    wait_link_up(plain.client())
    mc.set("k3", "v")
    assert mc.execute_command("WAITAOF", 1, 2, 300) == [1, 1]
    with pytest.raises(redis.ResponseError, match="cannot be used with replica instances"):
        rc.execute_command("WAITAOF", 0, 0, 0)
    off = start_vireo(procs)
    with pytest.raises(redis.ResponseError, match="appendonly is disabled"):
        off.client().execute_command("WAITAOF", 1, 0, 0)

"""A master's snapshot streamed to replicas' sockets (repl-diskless-sync yes) says how it ended
with Redis's log lines, and stops when every replica it was for has gone (Redis's
integration/replication "diskless ... replicas drop during rdb pipe" tests read these lines)."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest
import redis

from conftest import wait_for
from repl_helpers import procs, start_vireo, wait_link_up  # noqa: F401


def diskless_master(procs, *args):
    m = start_vireo(procs, "--repl-diskless-sync", "yes", "--repl-diskless-sync-max-replicas", "2",
                    "--repl-diskless-sync-delay", "5", "--save", "", *args)
    mc = m.client()
    mc.execute_command("DEBUG", "POPULATE", "2000", "key", "100")
    return m, mc


def test_done_reading_line_counts_the_replicas_still_up(procs):
    m, mc = diskless_master(procs)
    replicas = [start_vireo(procs, "--replicaof", "127.0.0.1", m.port) for _ in range(2)]
    for r in replicas:
        wait_link_up(r.client())
    wait_for(lambda: "done reading from pipe" in m.log_text(), timeout=10)
    assert "Diskless rdb transfer, done reading from pipe, 2 replicas still up." in m.log_text()


def test_last_replica_dropped_kills_the_child(procs):
    # 1 ms per key: the child takes seconds, so the replicas go while it streams.
    m, mc = diskless_master(procs, "--rdb-key-save-delay", "1000")
    replicas = [start_vireo(procs, "--replicaof", "127.0.0.1", m.port) for _ in range(2)]
    wait_for(lambda: mc.info("persistence")["rdb_bgsave_in_progress"] == 1, timeout=10)
    for r in replicas:
        r.stop()
    wait_for(lambda: mc.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=10,
             message="the child went on streaming to nobody")
    log = m.log_text()
    assert "Diskless rdb transfer, last replica dropped, killing fork child." in log
    assert "done reading from pipe" not in log


def test_master_survives_its_transfer_child_being_killed(procs):
    m, mc = diskless_master(procs, "--rdb-key-save-delay", "1000")
    rep = start_vireo(procs, "--replicaof", "127.0.0.1", m.port)
    wait_for(lambda: mc.info("persistence")["rdb_bgsave_in_progress"] == 1, timeout=10)
    child = subprocess.run(["pgrep", "-P", str(m.proc.pid)], capture_output=True, text=True)
    os.kill(int(child.stdout.split()[0]), signal.SIGKILL)
    # The failed transfer drops the replica; the master goes on (it used to crash here, closing
    # the replica while walking its replicas), and the replica syncs again.
    wait_for(lambda: "SYNC failed. BGSAVE child returned an error" in m.log_text(), timeout=10)
    assert mc.ping()
    mc.config_set("rdb-key-save-delay", "0")
    wait_link_up(rep.client())
    assert rep.client().dbsize() == 2000


def test_psync_with_a_wrong_offset_is_refused_and_logged(procs):
    m = start_vireo(procs)
    mc = m.client()
    try:
        mc.execute_command("PSYNC", "replicationid", "offset_str")
        raise AssertionError("PSYNC accepted a bad offset")
    except redis.ResponseError as e:
        assert str(e) == "value is not an integer or out of range"
    wait_for(lambda: "asks for synchronization but with a wrong offset" in m.log_text(), timeout=5)
    assert mc.ping()
    assert mc.info("stats")["sync_full"] == 0


@pytest.mark.parametrize("sync,command,name", [
    (("SYNC",), ("PING",), "ping"),
    (("PSYNC", "replicationid", "-1"), ("GET", "foo"), "get"),
    (("PSYNC", "replicationid", "-1"), ("SLOWLOG", "GET"), "slowlog|get"),
])
def test_a_reply_on_a_replica_link_disconnects_the_replica(procs, sync, command, name):
    m = start_vireo(procs)
    mc = m.client()
    conn = m.raw()
    conn.send_command(*sync)
    if sync[0] == "PSYNC":
        assert conn.read_reply().startswith(b"+FULLRESYNC")
    conn.send_command(*command)
    wait_for(lambda: f"Replica generated a reply to command '{name}', disconnecting it: " in m.log_text(),
             timeout=10)
    if name == "get":
        assert "This master is sending an error to its replica: 'ERR Replica can't interact with the keyspace'" \
            in m.log_text()
    # The reply never reached the link, which the master closed.
    data = conn.read_until_closed(timeout=10)
    assert b"PONG" not in data and b"-ERR" not in data
    assert mc.ping()


@pytest.mark.parametrize("save,killed", [("", True), ("900 1", False)])
def test_disk_snapshot_for_replicas_killed_when_the_last_one_leaves(procs, save, killed):
    m = start_vireo(procs, "--repl-diskless-sync", "no", "--save", save,
                    "--rdb-key-save-delay", "1000000")
    mc = m.client()
    for i in range(10):
        mc.set(i, i)
    replicas = [start_vireo(procs, "--replicaof", "127.0.0.1", m.port) for _ in range(2)]
    wait_for(lambda: mc.info("persistence")["rdb_bgsave_in_progress"] == 1 and
             all("wait_bgsave" in str(mc.info("replication").get(f"slave{i}", "")) for i in (0, 1)),
             timeout=10)
    replicas[0].client().replicaof("no", "one")
    wait_for(lambda: "slave1" not in mc.info("replication"), timeout=10)
    assert mc.info("persistence")["rdb_bgsave_in_progress"] == 1  # one still waits for it
    replicas[1].client().replicaof("no", "one")
    if killed:
        wait_for(lambda: mc.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=10)
        assert "persistence disabled, last replica dropped, killing fork child." in m.log_text()
    else:
        wait_for(lambda: mc.info("replication")["connected_slaves"] == 0, timeout=10)
        assert mc.info("persistence")["rdb_bgsave_in_progress"] == 1
        m.expect_exit = True
        m.proc.kill()


def test_replica_stalled_past_a_changed_repl_timeout_is_dropped(procs):
    # The image is bigger than the socket buffers, so the child waits on the replica that
    # stops reading. A repl-timeout set during the transfer applies: the master drops that
    # replica (Redis's line) and the other one gets the whole image.
    m, mc = diskless_master(procs, "--rdbcompression", "no")
    mc.execute_command("DEBUG", "POPULATE", "3000", "big", "10000")
    slow = start_vireo(procs, "--repl-diskless-load", "swapdb", "--key-load-delay", "100",
                       "--replicaof", "127.0.0.1", m.port)
    fast = start_vireo(procs, "--replicaof", "127.0.0.1", m.port)
    wait_for(lambda: "Loading DB in memory" in slow.log_text(1 << 20), timeout=10)
    os.kill(slow.proc.pid, signal.SIGSTOP)
    try:
        mc.config_set("repl-timeout", 2)
        wait_for(lambda: "Disconnecting timedout replica (full sync)" in m.log_text(1 << 20),
                 timeout=15, message="the stalled replica was never dropped")
        wait_for(lambda: mc.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=30)
        assert ("Diskless rdb transfer, done reading from pipe, 1 replicas still up."
                in m.log_text(1 << 20))
        fc = fast.client()
        wait_link_up(fc)
        wait_for(lambda: fc.dbsize() == mc.dbsize(), timeout=10)
        assert fc.execute_command("DEBUG", "DIGEST") == mc.execute_command("DEBUG", "DIGEST")
    finally:
        os.kill(slow.proc.pid, signal.SIGCONT)


def test_replica_acknowledging_the_snapshot_reaps_the_child(procs):
    # With the cron held, only the replica's ACK after its load can end the transfer on the
    # master (as Redis's REPLCONF ACK checks for the finished child): the replica is online and
    # the child gone without waiting for a cron tick, so an AOF turned on right after the
    # replica reports its link up starts at once instead of being scheduled.
    m, mc = diskless_master(procs, "--rdb-key-save-delay", "200", "--repl-diskless-sync-delay",
                            "0")
    rep = start_vireo(procs, "--replicaof", "127.0.0.1", m.port)
    wait_for(lambda: mc.info("persistence")["rdb_bgsave_in_progress"] == 1, timeout=10)
    mc.execute_command("DEBUG", "PAUSE-CRON", "1")
    try:
        wait_link_up(rep.client())
        wait_for(lambda: mc.info("persistence")["rdb_bgsave_in_progress"] == 0, timeout=5,
                 message="the transfer's child was left for the cron")
        assert mc.info("replication")["slave0"]["state"] == "online"
        assert "Synchronization with replica" in m.log_text(1 << 20)
    finally:
        mc.execute_command("DEBUG", "PAUSE-CRON", "0")

"""The master's one replication buffer, shared by the backlog and every replica (Redis 7), and a
master restarted on its RDB continuing its replication stream.

A replica stuck waiting for its snapshot (rdb-key-save-delay keeps the RDB child busy) holds
on to the stream from the fork on: that is how these tests get a slow replica without pausing
processes. The stuck replicas are raw connections that sent PSYNC, so closing one is the
replica going away."""

from __future__ import annotations


import pytest
import redis

from conftest import HOST, RawConnection, restart_in_place, wait_for
from repl_helpers import procs, start_vireo, wait_in_sync, wait_link_up  # noqa: F401

MB = 1024 * 1024


def repl(c: redis.Redis) -> dict:
    return c.info("replication")


def mem(c: redis.Redis) -> dict:
    return c.info("memory")


def stuck_replicas(master, n: int = 1) -> list[RawConnection]:
    """`n` replicas whose full sync never finishes: one diskless child serves them all, and it
    is slowed to a key a second (rdb-key-save-delay) right after forking."""
    m = master.client()
    m.config_set("repl-diskless-sync", "yes")
    m.config_set("repl-diskless-sync-delay", 5)
    m.config_set("repl-diskless-sync-max-replicas", n)
    m.config_set("rdb-key-save-delay", 1_000_000)
    for i in range(20):
        m.set(f"filler:{i}", "x")
    conns = [RawConnection(HOST, master.port) for _ in range(n)]
    for conn in conns:
        assert conn.execute("REPLCONF", "capa", "eof", "capa", "psync2").startswith(b"+OK")
        conn.send_command("PSYNC", "?", "-1")
    for conn in conns:
        assert conn._line().startswith(b"+FULLRESYNC")
    return conns


def linked_replica(procs, master) -> redis.Redis:
    """A vireo replica of `master`, its link up; returns a client of it."""
    r = start_vireo(procs).client()
    r.replicaof(HOST, master.port)
    wait_link_up(r)
    return r


def write_mb(m: redis.Redis, megabytes: int, prefix: str = "k") -> None:
    value = "v" * 1024
    pipe = m.pipeline(transaction=False)
    for i in range(megabytes * 1024):
        pipe.set(f"{prefix}:{i}", value)
    pipe.execute()


def connected_slaves(m: redis.Redis) -> int:
    return repl(m)["connected_slaves"]


@pytest.fixture
def master(procs):
    return start_vireo(procs, "--repl-backlog-size", "16384")


def test_replicas_share_one_buffer(procs, master):
    m = master.client()
    r = linked_replica(procs, master)
    stuck1, stuck2 = stuck_replicas(master, 2)
    wait_for(lambda: connected_slaves(m) == 3, timeout=10)
    write_mb(m, 2)
    total = mem(m)["mem_total_replication_buffers"]
    # Two replicas hold the whole 2 MB: one copy of it, not two (or three with the online one).
    assert 2 * MB <= total < 3 * MB
    info = repl(m)
    # The backlog grows past repl-backlog-size while a replica needs the older blocks.
    assert info["repl_backlog_histlen"] >= 2 * MB
    assert mem(m)["mem_clients_slaves"] >= total - 16384 - 1024
    # One of the two going changes nothing: the other still holds the same blocks.
    stuck1.close()
    wait_for(lambda: connected_slaves(m) == 2, timeout=10)
    assert mem(m)["mem_total_replication_buffers"] == total
    # The last one going lets the buffer shrink to about the backlog's size.
    wait_in_sync(m, r)
    stuck2.close()
    wait_for(lambda: connected_slaves(m) == 1, timeout=10)
    wait_for(lambda: mem(m)["mem_total_replication_buffers"] < 256 * 1024, timeout=10)
    assert repl(m)["repl_backlog_histlen"] < 256 * 1024
    assert mem(m)["mem_clients_slaves"] < 64 * 1024
    m.config_set("rdb-key-save-delay", 0)


def test_partial_resync_from_beyond_the_backlog_size(procs, master):
    m = master.client()
    r = linked_replica(procs, master)
    (stuck,) = stuck_replicas(master)
    wait_for(lambda: connected_slaves(m) == 2, timeout=10)
    wait_in_sync(m, r)
    stuck_port = stuck.sock.getsockname()[1]
    real_id = next(c["id"] for c in m.client_list(_type="replica")
                   if int(c["addr"].rsplit(":", 1)[1]) != stuck_port)
    # Drop the real replica's link and write 1 MB (64 times the backlog's size) before it can
    # come back: only the stuck replica keeps those bytes.
    before = m.info("stats")["sync_partial_ok"]
    pipe = m.pipeline(transaction=True)
    pipe.execute_command("CLIENT", "KILL", "ID", real_id)
    for i in range(1024):
        pipe.set(f"big:{i}", "v" * 1024)
    pipe.execute()
    wait_in_sync(m, r)
    assert m.info("stats")["sync_partial_ok"] == before + 1
    assert r.get("big:1023") == b"v" * 1024
    assert r.execute_command("DEBUG", "DIGEST") == m.execute_command("DEBUG", "DIGEST")
    stuck.close()
    m.config_set("rdb-key-save-delay", 0)


def test_output_limit_counts_the_shared_blocks_a_replica_holds(procs, master):
    m = master.client()
    (stuck,) = stuck_replicas(master)
    wait_for(lambda: connected_slaves(m) == 1, timeout=10)
    write_mb(m, 1)
    assert repl(m)["repl_backlog_histlen"] >= MB
    m.config_set("client-output-buffer-limit", "replica 128kb 0 0")
    # The limit is checked as the stream grows.
    m.set("trigger", "x" * 64 * 1024)
    wait_for(lambda: connected_slaves(m) == 0, timeout=10)
    assert m.info("stats")["client_output_buffer_limit_disconnections"] >= 1
    wait_for(lambda: repl(m)["repl_backlog_histlen"] < 256 * 1024, timeout=10)
    stuck.close()
    m.config_set("rdb-key-save-delay", 0)


def test_hard_limit_below_the_backlog_size_counts_as_the_backlog_size(procs):
    master = start_vireo(procs, "--repl-backlog-size", "8mb",
                         "--client-output-buffer-limit", "replica 512kb 0 0")
    m = master.client()
    r = linked_replica(procs, master)
    wait_in_sync(m, r)
    big = "A" * (2 * MB)
    pipe = m.pipeline(transaction=True)
    pipe.execute_command("CLIENT", "KILL", "TYPE", "replica")
    pipe.set("key", big)
    pipe.set("key", big)
    pipe.execute()
    wait_in_sync(m, r)
    stats = m.info("stats")
    assert stats["sync_full"] == 1
    assert stats["sync_partial_ok"] == 1
    assert stats["client_output_buffer_limit_disconnections"] == 0


def test_backlog_size_changes_at_run_time(procs):
    master = start_vireo(procs, "--repl-backlog-size", "4mb")
    m = master.client()
    r = linked_replica(procs, master)
    write_mb(m, 3)
    wait_in_sync(m, r)
    assert repl(m)["repl_backlog_histlen"] >= 3 * MB
    m.config_set("repl-backlog-size", "64kb")
    info = repl(m)
    assert info["repl_backlog_size"] == 65536
    assert info["repl_backlog_histlen"] < 256 * 1024
    assert mem(m)["mem_replication_backlog"] < 256 * 1024


# ---- a master restarted on its RDB -----------------------------------------------------------


def restart(handle, how: str = "shutdown") -> None:
    """Stops the server (SHUTDOWN NOW, or SIGTERM) and starts it again with its argv, directory
    and port, so it loads the RDB it saved on the way down."""
    c = handle.client()
    if how == "shutdown":
        try:
            c.execute_command("SHUTDOWN", "NOW")
        except redis.ConnectionError:
            pass
    else:
        handle.proc.terminate()
    handle.proc.wait(timeout=20)
    restart_in_place(handle)


@pytest.fixture
def chain(procs):
    """A master saving on shutdown, its replica, and a replica of that replica."""
    master = start_vireo(procs, "--save", "3600 1", "--repl-ping-replica-period", "3600")
    replica = start_vireo(procs)
    sub = start_vireo(procs)
    replica.client().replicaof(HOST, master.port)
    sub.client().replicaof(HOST, replica.port)
    wait_link_up(replica.client())
    wait_link_up(sub.client())
    return master, replica, sub


def both_linked(replica, sub) -> bool:
    return (repl(replica.client())["master_link_status"] == "up"
            and repl(sub.client())["master_link_status"] == "up")


def test_restarted_master_continues_its_stream(chain):
    master, replica, sub = chain
    m = master.client()
    for i in range(100):
        m.set(f"key:{i}", i)
    wait_in_sync(m, replica.client())
    wait_in_sync(replica.client(), sub.client())
    before = repl(m)
    replica.client().config_resetstat()
    restart(master)
    m = master.client()
    wait_for(lambda: both_linked(replica, sub), timeout=20)
    after = repl(m)
    assert after["master_replid"] != before["master_replid"]
    assert after["master_replid2"] == before["master_replid"]
    assert after["master_repl_offset"] == before["master_repl_offset"]
    assert after["second_repl_offset"] == before["master_repl_offset"] + 1
    assert after["repl_backlog_active"] == 1
    assert after["repl_backlog_first_byte_offset"] == before["master_repl_offset"] + 1
    assert after["repl_backlog_histlen"] == 0
    assert m.info("stats")["sync_partial_ok"] == 1
    assert m.info("stats")["sync_full"] == 0
    m.set("after", "restart")
    wait_in_sync(m, replica.client())
    assert replica.client().get("after") == b"restart"


def test_restarted_master_sends_the_dels_of_keys_that_expired(chain):
    master, replica, sub = chain
    m = master.client()
    m.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
    for i in range(64):
        master.client(db=i % 4).set(f"short:{i}", "v", px=50)
    m.set("keep", "1")
    offset = repl(m)["master_repl_offset"]
    wait_in_sync(m, replica.client())
    # Until the TTLs have passed by the server's clock (touching the keys would expire them).
    now_ms = lambda: (lambda t: t[0] * 1000 + t[1] // 1000)(m.time())  # noqa: E731
    deadline = now_ms() + 100
    wait_for(lambda: now_ms() > deadline, timeout=5)
    restart(master, how="sigterm")
    m = master.client()
    wait_for(lambda: both_linked(replica, sub), timeout=20)
    assert m.info("persistence")["rdb_last_load_keys_expired"] == 64
    info = repl(m)
    # The DELs are the stream after the RDB's offset (and the replicas got them). The RDB's
    # offset is ours, or 37 bytes on when the shutdown found a replica's last ACK behind and
    # asked for a new one first (REPLCONF GETACK *, as Redis does).
    getack = len(b"*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n")
    rdb_offset = info["master_repl_offset"] - info["repl_backlog_histlen"]
    assert rdb_offset in (offset, offset + getack)
    assert info["repl_backlog_histlen"] > 0
    assert m.info("stats")["sync_partial_ok"] == 1
    wait_in_sync(m, replica.client())
    wait_in_sync(replica.client(), sub.client())
    assert replica.client().dbsize() == sub.client().dbsize() == 1


def test_replica_moving_between_masters_continues_in_the_selected_db(procs, master):
    # The master's stream selects database 9 once; a replica that follows another master for
    # a while and comes back continues (PSYNC) in database 9, where the stream left it.
    m = master.client(db=9)
    r = linked_replica(procs, master)
    m.set("before", "1")
    wait_in_sync(m, r)
    partial = m.info("stats")["sync_partial_ok"]
    r.replicaof(HOST, 1)  # nobody listens there: the link never comes up
    m.set("after", "2")
    r.replicaof(HOST, master.port)
    wait_in_sync(m, r)
    assert m.info("stats")["sync_partial_ok"] == partial + 1
    r9 = redis.Redis(host=HOST, port=r.connection_pool.connection_kwargs["port"], db=9)
    assert r9.get("after") == b"2"
    assert r.dbsize() == 0

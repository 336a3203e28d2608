"""Replication faults between vireo servers (issue 16, "Bad input and faults").

A replica that goes away in the middle of its full sync (alone, and while another replica
shares the same diskless transfer); a master that dies in the middle of the RDB, with both
payload framings; REPLICAOF naming the server itself; a master that wants a password the
replica does not have. Each gets Redis's log line and a retry, never a crash or a half-loaded
dataset. What test_replica_of_redis.py already checks against a real Redis master (a 9-byte
truncated or a corrupt payload, a silent master, masterauth on a Redis master) is not repeated.
"""

from __future__ import annotations

import os
import socket

import pytest

from conftest import HOST, RawConnection, _finish, start_server, wait_for
from repl_helpers import (
    FakeMaster,
    assert_same_data,
    fullresync,
    link_up,
    log_count,
    populate,
    wait_in_sync,
    wait_link_up,
)

SYNC_TIMEOUT = 20.0
# x 256 KB of incompressible bytes: more than loopback socket buffers hold, so a replica that
# stops reading is sure to leave the transfer unfinished.
BIG_VALUES = 40


@pytest.fixture
def procs():
    started = []

    def start(*args, **kw):
        h = start_server(list(args), **kw)
        started.append(h)
        return h

    yield start
    errors = [e for e in (_finish(h) for h in started) if e]
    if errors:
        pytest.fail("\n\n".join(errors), pytrace=False)


def big_dataset(r) -> None:
    populate(r)
    pipe = r.pipeline(transaction=False)
    for i in range(BIG_VALUES):
        pipe.set(f"big:{i}", os.urandom(256 << 10))
    pipe.execute()


def start_raw_sync(master, rcvbuf: int = 16 << 10) -> tuple[RawConnection, bytes]:
    """A hand-made replica: handshake and PSYNC ? -1; returns it with the +FULLRESYNC line."""
    raw = master.raw(timeout=10)
    raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    assert raw.execute("REPLCONF", "capa", "eof", "capa", "psync2") == b"+OK\r\n"
    raw.send_command("PSYNC", "?", "-1")
    # Newlines keep the link alive while the replica waits for the snapshot to start.
    line = raw._line().lstrip(b"\n")
    assert line.startswith(b"+FULLRESYNC "), line
    return raw, line


def read_some_and_close(raw: RawConnection, n: int) -> str:
    """Reads n bytes of the payload and hangs up; returns the address the master knew us by."""
    addr = "%s:%d" % raw.sock.getsockname()
    got = len(raw.buf) - raw.pos
    while got < n:
        chunk = raw.sock.recv(65536)
        assert chunk, "the master closed before sending what we wanted to read"
        got += len(chunk)
    raw.close()
    return addr


def assert_transfer_failed(master, addr: str) -> None:
    assert f"Synchronization with replica {addr} succeeded" not in master.log_text(1 << 24), (
        "the transfer finished before the replica hung up: the test proved nothing")


# ---- a replica that goes away mid-transfer --------------------------------------------------


@pytest.mark.parametrize("diskless", ["yes", "no"])
def test_replica_gone_mid_transfer(procs, diskless):
    master = procs("--repl-diskless-sync", diskless, "--repl-diskless-sync-delay", "0")
    m = master.client()
    big_dataset(m)
    raw, _ = start_raw_sync(master)
    wait_for(lambda: m.info("replication").get("slave0", {}).get("state") in
             ("wait_bgsave", "send_bulk"))
    addr = read_some_and_close(raw, 100_000)

    # The master drops it and keeps serving; the next replica gets a complete sync.
    wait_for(lambda: m.info("replication")["connected_slaves"] == 0, timeout=SYNC_TIMEOUT)
    assert m.ping()
    m.set("after-the-drop", 1)
    replica = procs("--replicaof", HOST, str(master.port))
    s = replica.client()
    wait_link_up(s, timeout=SYNC_TIMEOUT)
    m.incr("after-the-drop")
    wait_in_sync(m, s)
    assert_same_data(m, s)
    assert m.info("stats")["sync_full"] == 2
    assert_transfer_failed(master, addr)


def test_replica_gone_mid_shared_diskless_transfer(procs):
    # One child streams the snapshot to both; losing one must not cost the other its sync.
    master = procs("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "30",
                   "--repl-diskless-sync-max-replicas", "2")
    m = master.client()
    big_dataset(m)
    replica = procs("--replicaof", HOST, str(master.port))
    wait_for(lambda: m.info("replication")["connected_slaves"] == 1, timeout=SYNC_TIMEOUT)
    raw, _ = start_raw_sync(master)  # the second one: the transfer starts now, to both
    addr = read_some_and_close(raw, 100_000)
    s = replica.client()
    wait_link_up(s, timeout=SYNC_TIMEOUT)
    wait_in_sync(m, s)
    assert_same_data(m, s)
    stats = m.info("stats")
    assert stats["sync_full"] == 2, "the good replica needed a second full sync"
    assert log_count(replica, "Full resync from master") == 1
    assert log_count(master, "Starting BGSAVE for SYNC with target: replicas sockets") == 1
    assert m.info("replication")["connected_slaves"] == 1
    assert_transfer_failed(master, addr)


# ---- a master that dies mid-RDB -------------------------------------------------------------


@pytest.fixture
def rdb_source(procs):
    """A vireo server with the populated dataset and its RDB file's bytes."""
    src = procs()
    c = src.client()
    populate(c)
    assert c.save()
    return src, (src.workdir / "dump.rdb").read_bytes()


@pytest.mark.parametrize("framing", ["length", "eof"])
def test_master_dies_mid_rdb_then_a_whole_one_loads(procs, rdb_source, framing):
    src, rdb = rdb_source
    mark = b"0123456789abcdef0123456789abcdef01234567"
    if framing == "length":
        head, tail = b"$%d\r\n" % len(rdb), b""
    else:
        head, tail = b"$EOF:" + mark + b"\r\n", mark
    half = head + rdb[: len(rdb) // 2]
    fake = FakeMaster([(fullresync() + half, "until_release"), (fullresync() + head + rdb + tail, "hold")])
    try:
        replica = procs()
        s = replica.client()
        s.set("old", "data")
        s.execute_command("REPLICAOF", HOST, fake.port)

        # Half of the snapshot is in: the old data is what is served, the sync shows as running.
        wait_for(lambda: s.info("replication")["master_sync_in_progress"] == 1,
                 timeout=SYNC_TIMEOUT)
        assert s.get("old") == b"data"
        assert s.dbsize() == 1
        assert not link_up(s)

        # The master dies: nothing of the half is loaded, the replica logs it and retries, and
        # the retry's whole snapshot is loaded.
        fake.release()
        wait_for(lambda: fake.syncs >= 2, timeout=SYNC_TIMEOUT)
        assert log_count(replica, "I/O error trying to sync with MASTER") >= 1
        wait_link_up(s, timeout=SYNC_TIMEOUT)
        assert s.get("old") is None
        assert_same_data(src.client(), s)
        assert replica.alive()
    finally:
        fake.close()


def test_a_failed_transfer_reconnects_at_once(procs, rdb_source):
    # As Redis's replica: the sync that failed is retried straight away, not at the cron's next
    # connection attempt a second later (a master that keeps cutting transfers short).
    src, rdb = rdb_source
    head = b"$%d\r\n" % len(rdb)
    fake = FakeMaster([(fullresync() + head + rdb[: len(rdb) // 2], "until_release"),
                       (fullresync() + head + rdb, "hold")])
    try:
        replica = procs()
        s = replica.client()
        s.execute_command("REPLICAOF", HOST, fake.port)
        wait_for(lambda: s.info("replication")["master_sync_in_progress"] == 1,
                 timeout=SYNC_TIMEOUT)
        fake.release()
        wait_link_up(s, timeout=SYNC_TIMEOUT)
        assert fake.syncs == 2
        assert log_count(replica, f"Reconnecting to MASTER {HOST}:{fake.port} after failure") == 1
        # Only the first connection came from the cron.
        assert log_count(replica, "Connecting to MASTER") == 1
        assert_same_data(src.client(), s)
    finally:
        fake.close()


# ---- REPLICAOF itself -----------------------------------------------------------------------


def test_replicaof_itself(procs):
    # As Redis 7.2: accepted, and the server becomes a replica of itself that can never sync
    # (its own PSYNC is refused with -NOMASTERLINK); it retries, keeps its data and serves reads.
    h = procs()
    c = h.client()
    c.set("k", "v")
    assert c.execute_command("REPLICAOF", HOST, h.port) == b"OK"
    line = "Master is currently unable to PSYNC but should be in the future: -NOMASTERLINK"
    wait_for(lambda: log_count(h, line) >= 2, timeout=SYNC_TIMEOUT)
    fields = c.info("replication")
    assert (fields["role"], fields["master_link_status"]) == ("slave", "down")
    assert c.get("k") == b"v"
    assert c.info("stats")["sync_full"] == 0
    assert c.execute_command("REPLICAOF", "NO", "ONE") == b"OK"
    assert c.set("k2", "v2")
    assert c.dbsize() == 2


# ---- AUTH failures --------------------------------------------------------------------------


def test_masterauth_missing_then_wrong_then_right(procs):
    master = procs("--repl-diskless-sync-delay", "0")
    m = master.client()
    populate(m)
    m.config_set("requirepass", "sekret")  # after populate(), whose own clients have none
    m = master.client(password="sekret")
    replica = procs()
    s = replica.client()
    s.execute_command("REPLICAOF", HOST, master.port)
    # No password: the handshake goes on (-NOAUTH is fine for PING), PSYNC is refused.
    wait_for(lambda: log_count(replica, "Unexpected reply to PSYNC from master: -NOAUTH") >= 2,
             timeout=SYNC_TIMEOUT)
    s.config_set("masterauth", "wrong")
    wait_for(lambda: log_count(replica, "Unable to AUTH to MASTER: -WRONGPASS") >= 2,
             timeout=SYNC_TIMEOUT)
    assert not link_up(s)
    assert m.info("stats")["sync_full"] == 0
    s.config_set("masterauth", "sekret")
    wait_link_up(s, timeout=SYNC_TIMEOUT)
    wait_in_sync(m, s)
    assert_same_data(m, s)


# ---- connections closed while a fork child runs ---------------------------------------------


def test_killed_replica_sees_the_drop_while_a_child_runs(procs):
    # A fork child (here a diskless sync stuck on a replica that never reads) holds copies of
    # every socket the master had at fork time. A replica the master drops meanwhile must see
    # its connection end at once (Redis 7.2 shuts the socket down), not when the child exits:
    # until then it would take a dead link for a live one.
    master = procs("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0")
    m = master.client()
    m.set("k", "v")
    replica = procs("--replicaof", HOST, str(master.port))
    s = replica.client()
    wait_link_up(s, timeout=SYNC_TIMEOUT)
    big_dataset(m)
    # Caught up first: the 10 MB just written outgrow the 1 MB backlog, so a replica still behind
    # when it is dropped could only resync in full, which waits for the stuck child.
    wait_in_sync(m, s, timeout=SYNC_TIMEOUT)
    stuck, _ = start_raw_sync(master, rcvbuf=4096)  # never reads: the child blocks on it
    wait_for(lambda: m.info("persistence")["rdb_bgsave_in_progress"] == 1)
    replica_id = next(c["id"] for c in m.client_list() if c["flags"] == "S"
                      and int(c["addr"].rsplit(":", 1)[1]) != stuck.sock.getsockname()[1])
    assert m.execute_command("CLIENT", "KILL", "ID", replica_id) == 1
    wait_for(lambda: log_count(replica, "Connection with master lost") == 1, timeout=5)
    # It continues from the backlog while the child still runs.
    wait_link_up(s, timeout=SYNC_TIMEOUT)
    assert m.info("persistence")["rdb_bgsave_in_progress"] == 1
    assert m.info("stats")["sync_partial_ok"] == 1
    m.incr("k2")
    wait_in_sync(m, s)
    assert s.get("k2") == b"1"
    stuck.close()


# ---- a transaction cut by the link ----------------------------------------------------------


def resp(*args) -> bytes:
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


def test_transaction_cut_by_the_link_is_not_counted_as_applied(procs):
    # As Redis: the offset moves past a MULTI only at its EXEC. A link lost between them (or a
    # snapshot taken then) must not count the queued commands, or the master's resend starts
    # after them and the transaction is lost on the replica.
    empty = procs()
    c = empty.client()
    assert c.save()
    rdb = (empty.workdir / "dump.rdb").read_bytes()
    before = resp("SET", "a", "1")
    cut = resp("MULTI") + resp("INCR", "x")
    rest = resp("INCR", "x") + resp("EXEC")
    start = 100
    fake = FakeMaster([
        (fullresync(start) + b"$%d\r\n" % len(rdb) + rdb + before + cut, "until_release"),
        (b"+CONTINUE\r\n" + cut + rest, "hold"),
    ])
    try:
        replica = procs()
        s = replica.client()
        s.execute_command("REPLICAOF", HOST, fake.port)
        wait_for(lambda: s.get("a") == b"1", timeout=SYNC_TIMEOUT)
        # The queued INCR is not applied, and the offset stops before MULTI.
        wait_for(lambda: s.info("replication")["slave_read_repl_offset"]
                 == start + len(before) + len(cut), timeout=SYNC_TIMEOUT)
        assert s.info("replication")["master_repl_offset"] == start + len(before)
        assert s.get("x") is None

        fake.release()  # the link drops mid-transaction; the replica asks from MULTI on
        wait_for(lambda: fake.syncs >= 2, timeout=SYNC_TIMEOUT)
        assert fake.psyncs[1][1] == start + len(before) + 1
        wait_for(lambda: s.get("x") == b"2", timeout=SYNC_TIMEOUT)
        assert s.info("replication")["master_repl_offset"] == start + len(before + cut + rest)
        assert replica.alive()
    finally:
        fake.close()

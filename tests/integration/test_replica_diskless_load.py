"""How a replica loads its master's snapshot (issue 16): repl-diskless-load disabled /
on-empty-db / swapdb, and what other clients see meanwhile.

A fake master (repl_helpers.FakeMaster) sends part of a snapshot and then waits, which holds
the replica in the middle of its load for as long as a test needs: clients get -LOADING (or,
with an async swapdb load, the old data), INFO shows the load, and a master that dies there
leaves the old data (swapdb) or none (a flushed replica). Real vireo masters check the
three modes end to end.
"""

from __future__ import annotations

import pytest
import redis

from conftest import HOST, wait_for
from repl_helpers import (
    FakeMaster,
    assert_same_data,
    fullresync,
    link_up,
    log_count,
    populate,
    procs,  # noqa: F401 (fixture)
    start_vireo,
    wait_in_sync,
    wait_link_up,
)

SYNC_TIMEOUT = 20.0
MARK = b"0123456789abcdef0123456789abcdef01234567"
LOADING = "LOADING Redis is loading the dataset in memory"


@pytest.fixture
def rdb_source(procs):  # noqa: F811
    """A vireo server with the populated dataset and its RDB file's bytes."""
    src = start_vireo(procs)
    c = src.client()
    populate(c)
    assert c.save()
    return src, (src.workdir / "dump.rdb").read_bytes()


def eof_payload(rdb: bytes) -> tuple[bytes, bytes]:
    """The diskless framing of `rdb`, split in two halves."""
    whole = b"$EOF:" + MARK + b"\r\n" + rdb + MARK
    cut = len(whole) // 2
    return whole[:cut], whole[cut:]


def loading_error(handle, *cmd) -> str:
    """The error line a command gets (raw: redis-py turns -LOADING into a ConnectionError)."""
    with handle.raw() as raw:
        reply = raw.execute(*cmd)
    assert reply.startswith(b"-"), reply
    return reply[1:].rstrip(b"\r\n").decode()


def persistence(c: redis.Redis) -> dict:
    return c.info("persistence")


def swapdb_replica_of(procs, fake, *args):  # noqa: F811
    """A swapdb replica holding old=data that has started to sync with `fake`."""
    replica = start_vireo(procs, "--repl-diskless-load", "swapdb", *args)
    s = replica.client()
    s.set("old", "data")
    s.execute_command("REPLICAOF", HOST, fake.port)
    return replica, s


# ---- real masters ----------------------------------------------------------------------------


def test_swapdb_replaces_old_data_from_the_socket(procs):  # noqa: F811
    master = start_vireo(procs)
    m = master.client()
    populate(m)
    m.execute_command("FUNCTION", "LOAD",
                      "#!lua name=fromMaster\nredis.register_function('f', function() return 1 end)")
    replica = start_vireo(procs, "--repl-diskless-load", "swapdb")
    s = replica.client()
    s.mset({"old:1": "a", "old:2": "b"})
    s.execute_command("FUNCTION", "LOAD",
                      "#!lua name=fromReplica\nredis.register_function('g', function() return 2 end)")
    s.execute_command("REPLICAOF", HOST, master.port)
    wait_link_up(s, timeout=SYNC_TIMEOUT)
    wait_in_sync(m, s)
    assert_same_data(m, s)
    assert s.exists("old:1", "old:2") == 0
    libs = [lib[1] for lib in s.execute_command("FUNCTION", "LIST")]
    assert libs == [b"fromMaster"]
    assert log_count(replica, "receiving streamed RDB from master with EOF to parser") == 1
    assert log_count(replica, "MASTER <-> REPLICA sync: Swapping active DB with loaded DB") == 1
    assert log_count(replica, "Flushing old data") == 0
    # The stream continues after the swap.
    m.set("after", "sync")
    wait_in_sync(m, s)
    assert s.get("after") == b"sync"


@pytest.mark.parametrize("replica_has_keys", [False, True])
def test_on_empty_db_loads_from_the_socket_only_when_empty(procs, replica_has_keys):  # noqa: F811
    master = start_vireo(procs)
    m = master.client()
    populate(m)
    replica = start_vireo(procs, "--repl-diskless-load", "on-empty-db")
    s = replica.client()
    if replica_has_keys:
        s.set("mine", "1")
    s.execute_command("REPLICAOF", HOST, master.port)
    wait_link_up(s, timeout=SYNC_TIMEOUT)
    wait_in_sync(m, s)
    assert_same_data(m, s)
    where = "disk" if replica_has_keys else "parser"
    assert log_count(replica, f"receiving streamed RDB from master with EOF to {where}") == 1
    assert log_count(replica, "Flushing old data") == 1


def test_swapdb_load_from_a_disk_based_master(procs):  # noqa: F811
    master = start_vireo(procs, "--repl-diskless-sync", "no")
    m = master.client()
    populate(m)
    replica = start_vireo(procs, "--repl-diskless-load", "swapdb")
    s = replica.client()
    s.execute_command("REPLICAOF", HOST, master.port)
    wait_link_up(s, timeout=SYNC_TIMEOUT)
    wait_in_sync(m, s)
    assert_same_data(m, s)
    # A length-framed payload loads from the socket too.
    assert log_count(replica, "bytes from master to parser") == 1


# ---- a master that stops half-way ------------------------------------------------------------


def test_loading_replies_while_an_empty_replica_loads(procs, rdb_source):  # noqa: F811
    src, rdb = rdb_source
    first, rest = eof_payload(rdb)
    fake = FakeMaster([(fullresync() + first, "until_release", rest)])
    try:
        replica = start_vireo(procs, "--repl-diskless-load", "on-empty-db",
                              "--loading-process-events-interval-bytes", "1024")
        s = replica.client()
        s.execute_command("REPLICAOF", HOST, fake.port)
        wait_for(lambda: persistence(s)["loading"] == 1, timeout=SYNC_TIMEOUT)
        fields = persistence(s)
        assert fields["async_loading"] == 0
        assert fields["loading_loaded_bytes"] > 0
        assert "loading_eta_seconds" in fields
        # Commands without the "loading" flag are refused; those with it run.
        assert loading_error(replica, "GET", "k") == LOADING
        assert loading_error(replica, "DBSIZE") == LOADING
        assert loading_error(replica, "PING") == LOADING
        assert s.config_get("repl-diskless-load") == {"repl-diskless-load": "on-empty-db"}
        assert s.info("replication")["master_sync_in_progress"] == 1
        # In MULTI the refusal aborts the transaction.
        with replica.raw() as raw:
            assert raw.execute("MULTI") == b"+OK\r\n"
            assert raw.execute("GET", "k") == b"-" + LOADING.encode() + b"\r\n"
            assert raw.execute("EXEC").startswith(b"-EXECABORT")
        fake.release()
        wait_link_up(s, timeout=SYNC_TIMEOUT)
        assert persistence(s)["loading"] == 0
        assert "loading_start_time" not in persistence(s)
        assert_same_data(src.client(), s)
    finally:
        fake.close()


def test_async_swapdb_load_serves_the_old_data(procs, rdb_source):  # noqa: F811
    src, rdb = rdb_source
    first, rest = eof_payload(rdb)
    replica = start_vireo(procs, "--repl-diskless-load", "swapdb",
                          "--loading-process-events-interval-bytes", "1024")
    s = replica.client()
    s.set("old", "data")
    # The master's history is ours: the old data is an earlier point of it.
    replid = s.info("replication")["master_replid"].encode()
    fake = FakeMaster([(fullresync(replid=replid) + first, "until_release", rest)])
    try:
        s.execute_command("REPLICAOF", HOST, fake.port)
        wait_for(lambda: persistence(s)["async_loading"] == 1, timeout=SYNC_TIMEOUT)
        assert persistence(s)["loading"] == 0
        assert s.get("old") == b"data"
        assert s.dbsize() == 1
        # Commands flagged no-async-loading wait for the load.
        assert loading_error(replica, "SAVE") == LOADING
        assert loading_error(replica, "REPLICAOF", "NO", "ONE") == LOADING
        fake.release()
        wait_link_up(s, timeout=SYNC_TIMEOUT)
        assert persistence(s)["async_loading"] == 0
        assert s.get("old") is None
        assert_same_data(src.client(), s)
    finally:
        fake.close()


def test_swapdb_keeps_the_old_data_when_the_master_dies(procs, rdb_source):  # noqa: F811
    src, rdb = rdb_source
    first, rest = eof_payload(rdb)
    # First sync: half a snapshot, then the master hangs up; the second is whole.
    fake = FakeMaster([(fullresync() + first, "until_release"),
                       (fullresync() + first + rest, "hold")])
    try:
        replica, s = swapdb_replica_of(procs, fake, "--loading-process-events-interval-bytes",
                                       "1024")
        # Another history: the old data can't be served meanwhile.
        wait_for(lambda: persistence(s)["loading"] == 1, timeout=SYNC_TIMEOUT)
        assert loading_error(replica, "GET", "old") == LOADING
        fake.release()
        wait_for(lambda: log_count(replica, "Discarding temporary DB in background") >= 1,
                 timeout=SYNC_TIMEOUT)
        assert log_count(replica, "I/O error trying to sync with MASTER") >= 1
        wait_link_up(s, timeout=SYNC_TIMEOUT)
        assert s.get("old") is None
        assert_same_data(src.client(), s)
    finally:
        fake.close()


def test_old_data_survives_a_failed_swapdb_load(procs, rdb_source):  # noqa: F811
    _, rdb = rdb_source
    first, _ = eof_payload(rdb)
    # The replica connects again at once after the failure: that sync gets no payload, so the
    # replica isn't loading when REPLICAOF NO ONE comes.
    fake = FakeMaster([(fullresync() + first, "until_release"), (fullresync(), "hold")])
    try:
        replica, s = swapdb_replica_of(procs, fake)
        wait_for(lambda: persistence(s)["loading"] == 1, timeout=SYNC_TIMEOUT)
        fake.release()
        wait_for(lambda: log_count(replica, "Discarding temporary DB in background") >= 1,
                 timeout=SYNC_TIMEOUT)
        wait_for(lambda: fake.syncs == 2, timeout=SYNC_TIMEOUT)
        s.execute_command("REPLICAOF", "NO", "ONE")
        assert s.get("old") == b"data"
        assert s.dbsize() == 1
        assert not link_up(s)
    finally:
        fake.close()


def test_broken_eof_mark_is_refused(procs, rdb_source):  # noqa: F811
    _, rdb = rdb_source
    bad = b"$EOF:" + MARK + b"\r\n" + rdb + b"X" * 40
    fake = FakeMaster([(fullresync() + bad, "hold")])
    try:
        replica, s = swapdb_replica_of(procs, fake)
        wait_for(lambda: log_count(replica, "Discarding temporary DB in background") >= 1,
                 timeout=SYNC_TIMEOUT)
        assert log_count(replica, "Replication stream EOF marker is broken") >= 1
        s.execute_command("REPLICAOF", "NO", "ONE")
        assert s.get("old") == b"data"
    finally:
        fake.close()


def test_watchdog_reports_a_load_that_holds_the_loop(procs, rdb_source):  # noqa: F811
    # The load runs inside one turn of the loop (it steps the loop itself to serve -LOADING
    # replies): the cron ticks it steps don't re-arm the watchdog, which reports the load once,
    # as Redis's does; the interrupted waits (EINTR) don't break the load.
    src, rdb = rdb_source
    first, rest = eof_payload(rdb)
    fake = FakeMaster([(fullresync() + first, "until_release", rest)])
    try:
        replica = start_vireo(procs, "--repl-diskless-load", "on-empty-db")
        s = replica.client()
        s.config_set("watchdog-period", 200)
        s.execute_command("REPLICAOF", HOST, fake.port)
        wait_for(lambda: "Loading DB in memory" in replica.log_text(1 << 20), timeout=SYNC_TIMEOUT)
        wait_for(lambda: "WATCHDOG TIMER EXPIRED" in
                 replica.log_text(1 << 20).split("Loading DB in memory", 1)[1],
                 timeout=SYNC_TIMEOUT, message="the watchdog never reported the load")
        assert persistence(s)["loading"] == 1
        fake.release()
        wait_link_up(s, timeout=SYNC_TIMEOUT)
        assert_same_data(src.client(), s)
        assert log_count(replica, "MASTER <-> REPLICA sync: Finished with success") == 1
        assert log_count(replica, "WATCHDOG TIMER EXPIRED") == 1
        # Out of the load the next cron tick arms it again: a blocked loop is reported again.
        def reported_after_a_stall():
            s.execute_command("DEBUG", "SLEEP", "0.3")
            return log_count(replica, "WATCHDOG TIMER EXPIRED") == 2

        wait_for(reported_after_a_stall, timeout=5)
    finally:
        fake.close()


def test_a_load_cut_short_reconnects_at_once(procs):  # noqa: F811
    """The master drops the replica mid-load: the replica connects again right away
    ("Reconnecting to MASTER ... after failure", as Redis), not at its next once-a-second
    attempt, and completes the sync."""
    master = start_vireo(procs, "--repl-diskless-sync", "yes", "--rdbcompression", "no")
    m = master.client()
    m.execute_command("DEBUG", "POPULATE", 20000, "k", 1000)  # 20 MB: more than the buffers
    replica = start_vireo(procs, "--repl-diskless-load", "swapdb", "--key-load-delay", "100")
    s = replica.client()
    s.execute_command("REPLICAOF", HOST, master.port)
    wait_for(lambda: log_count(replica, "Loading DB in memory") == 1)
    assert m.execute_command("CLIENT", "KILL", "TYPE", "replica") == 1
    wait_for(lambda: log_count(replica, f"Reconnecting to MASTER {HOST}:{master.port} after "
                                        "failure") == 1)
    s.config_set("key-load-delay", "0")
    wait_link_up(s, timeout=SYNC_TIMEOUT)
    wait_in_sync(m, s)
    assert s.dbsize() == 20000

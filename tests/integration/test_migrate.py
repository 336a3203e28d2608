"""MIGRATE in non-cluster mode: single key and KEYS, COPY, REPLACE, AUTH/AUTH2, the target
database, NOKEY, the target's errors, -IOERR on connect and read failures, the cached connection
(reused, re-opened when stale, closed after 10 s idle), and transfers between vireo and Debian's
redis-server 7.0 in both directions. Redis 7.2's migrateCommand is the reference."""

from __future__ import annotations

import shutil
import socket
import threading

import pytest
import redis

from conftest import HOST, call, call_error, start_server, wait_for

REDIS_SERVER = shutil.which("redis-server")
needs_redis = pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server is not installed")


@pytest.fixture(scope="module")
def target():
    """A second vireo: the destination."""
    handle = start_server()
    yield handle
    handle.stop()
    handle.cleanup()


@pytest.fixture
def dst(target):
    client = target.client(decode_responses=True)
    for db in (0, 3):
        client.execute_command("SELECT", db)
        client.flushdb()
    client.execute_command("SELECT", 0)
    yield client
    client.close()


@pytest.fixture
def src(server):
    client = server.client(decode_responses=True)
    client.flushall()
    yield client
    client.close()


def migrate(client, port, *args):
    return call(client, "MIGRATE", HOST, port, *args)


def test_single_key_moves_with_its_ttl(src, dst, target):
    src.set("k", "hello", px=60000)
    assert migrate(src, target.port, "k", 0, 5000) == "OK"
    assert src.exists("k") == 0
    assert dst.get("k") == "hello"
    assert 55000 < dst.pttl("k") <= 60000
    src.rpush("list", "a", "b", "c")
    assert migrate(src, target.port, "list", 0, 5000) == "OK"
    assert dst.lrange("list", 0, -1) == ["a", "b", "c"]
    assert dst.ttl("list") == -1


def test_missing_key_is_nokey(src, target):
    assert migrate(src, target.port, "nosuchkey", 0, 1000) == "NOKEY"
    # NOKEY is answered before any connection is made.
    assert migrate(src, 1, "nosuchkey", 0, 1000) == "NOKEY"


def test_copy_and_replace(src, dst, target):
    src.set("k", "new")
    assert migrate(src, target.port, "k", 0, 5000, "COPY") == "OK"
    assert src.get("k") == "new" and dst.get("k") == "new"
    # The target refuses to overwrite without REPLACE; the key stays here.
    dst.set("k", "old")
    assert call_error(src, "MIGRATE", HOST, target.port, "k", 0, 5000) == (
        "Target instance replied with error: BUSYKEY Target key name already exists.")
    assert src.get("k") == "new" and dst.get("k") == "old"
    assert migrate(src, target.port, "k", 0, 5000, "REPLACE") == "OK"
    assert src.exists("k") == 0 and dst.get("k") == "new"
    src.set("k", "again")
    assert migrate(src, target.port, "k", 0, 5000, "COPY", "REPLACE") == "OK"
    assert src.get("k") == "again" and dst.get("k") == "again"


def test_keys_option(src, dst, target):
    src.set("s", "v")
    src.hset("h", mapping={"f1": "1", "f2": "2"})
    src.zadd("z", {"a": 1.5, "b": 2})
    src.sadd("set", "x", "y")
    src.xadd("st", {"f": "v"}, id="1-1")
    assert migrate(src, target.port, "", 0, 5000, "KEYS", "s", "h", "z", "set", "st",
                   "absent") == "OK"
    assert src.dbsize() == 0
    assert dst.get("s") == "v"
    assert dst.hgetall("h") == {"f1": "1", "f2": "2"}
    assert dst.zrange("z", 0, -1, withscores=True) == [("a", 1.5), ("b", 2.0)]
    assert dst.smembers("set") == {"x", "y"}
    assert dst.xrange("st") == [("1-1", {"f": "v"})]
    assert migrate(src, target.port, "", 0, 5000, "KEYS", "gone1", "gone2") == "NOKEY"


def test_argument_errors(src, target):
    src.set("k", "v")
    assert call_error(src, "MIGRATE", HOST, target.port, "k", 0, 1000, "KEYS", "a") == (
        "When using MIGRATE KEYS option, the key argument must be set to the empty string")
    assert call_error(src, "MIGRATE", HOST, target.port, "k", 0, 1000, "BOGUS") == "syntax error"
    assert call_error(src, "MIGRATE", HOST, target.port, "k", 0, 1000, "AUTH") == "syntax error"
    assert call_error(src, "MIGRATE", HOST, target.port, "k", 0, 1000, "AUTH2", "u") == (
        "syntax error")
    assert call_error(src, "MIGRATE", HOST, target.port, "k", 0, "x") == (
        "value is not an integer or out of range")
    assert call_error(src, "MIGRATE", HOST, target.port, "k", "x", 1000) == (
        "value is not an integer or out of range")
    assert call_error(src, "MIGRATE", HOST, target.port, "k", 0) == (
        "wrong number of arguments for 'migrate' command")
    assert src.get("k") == "v"


def test_destination_db_and_target_errors(src, dst, target):
    src.set("k", "v")
    assert migrate(src, target.port, "k", 3, 5000) == "OK"
    dst.execute_command("SELECT", 3)
    assert dst.get("k") == "v"
    # The cached connection has db 3 selected; a migration to db 0 must SELECT again.
    src.set("k2", "v2")
    assert migrate(src, target.port, "k2", 0, 5000) == "OK"
    assert dst.get("k2") is None
    dst.execute_command("SELECT", 0)
    assert dst.get("k2") == "v2"
    src.set("k3", "v3")
    assert call_error(src, "MIGRATE", HOST, target.port, "k3", 99, 5000) == (
        "Target instance replied with error: ERR DB index is out of range")
    assert src.get("k3") == "v3"


def test_auth_and_auth2(src, server_factory):
    protected = server_factory(["--requirepass", "secret"])
    client = protected.client(decode_responses=True, password="secret")
    client.execute_command("ACL", "SETUSER", "mover", "on", ">pw", "~*", "+@all")
    src.set("a", "1")
    assert migrate(src, protected.port, "a", 0, 5000, "AUTH", "secret") == "OK"
    src.set("b", "2")
    assert migrate(src, protected.port, "b", 0, 5000, "AUTH2", "mover", "pw") == "OK"
    assert client.mget("a", "b") == ["1", "2"]
    src.set("c", "3")
    assert call_error(src, "MIGRATE", HOST, protected.port, "c", 0, 5000, "AUTH", "wrong") == (
        "Target instance replied with error: WRONGPASS invalid username-password pair or user "
        "is disabled.")
    assert src.get("c") == "3"
    client.close()


def test_ioerr_connecting(src):
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        src.set("k", "v")
        assert call_error(src, "MIGRATE", HOST, port, "k", 0, 1000) == (
            "IOERR error or timeout connecting to the client")
    assert src.get("k") == "v"


def test_ioerr_reading_from_a_silent_target(src):
    """A target that accepts and reads but never answers: the timeout ends the wait, with no
    retry (it was a timeout) and the key left in place."""
    listener = socket.socket()
    listener.bind((HOST, 0))
    listener.listen(4)
    accepted = []

    def accept():
        try:
            while True:
                conn, _ = listener.accept()
                accepted.append(conn)
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        src.set("k", "v")
        assert call_error(src, "MIGRATE", HOST, listener.getsockname()[1], "k", 0, 200) == (
            "IOERR error or timeout reading to target instance")
        assert src.get("k") == "v"
        assert len(accepted) == 1
    finally:
        listener.close()
        for conn in accepted:
            conn.close()


def client_ids_from(target_client):
    """The target's clients that are MIGRATE connections (their last command)."""
    return [c["id"] for c in target_client.client_list() if c.get("cmd") in ("restore", "select")]


def test_connection_is_cached_and_reopened_when_stale(src, dst, target):
    src.set("first", "v")
    assert migrate(src, target.port, "first", 0, 5000) == "OK"
    before = int(dst.info("stats")["total_connections_received"])
    for i in range(3):
        src.set(f"k{i}", "v")
        assert migrate(src, target.port, f"k{i}", 0, 5000) == "OK"
    # The first connection serves the next three.
    assert int(dst.info("stats")["total_connections_received"]) == before
    ids = client_ids_from(dst)
    assert len(ids) == 1
    # The target drops it: the next MIGRATE notices and reconnects once, transparently.
    dst.client_kill_filter(_id=ids[0])
    src.set("k3", "v")
    assert migrate(src, target.port, "k3", 0, 5000) == "OK"
    assert dst.get("k3") == "v"
    assert int(dst.info("stats")["total_connections_received"]) == before + 1


def test_idle_connection_closed_after_ten_seconds(src, dst, target):
    src.set("k", "v")
    assert migrate(src, target.port, "k", 0, 5000) == "OK"
    wait_for(lambda: len(client_ids_from(dst)) == 1, timeout=2)
    # Redis closes cached MIGRATE sockets unused for more than 10 s (from its cron).
    wait_for(lambda: len(client_ids_from(dst)) == 0, timeout=15, interval=0.2,
             message="the idle MIGRATE connection was not closed")


def test_info_counts_cached_sockets(server_factory, dst, target):
    # INFO stats' migrate_cached_sockets is the size of the cache (unit/dump reads it).
    fresh = server_factory().client(decode_responses=True)
    assert fresh.info("stats")["migrate_cached_sockets"] == 0
    fresh.set("k", "v")
    assert migrate(fresh, target.port, "k", 0, 5000) == "OK"
    assert fresh.info("stats")["migrate_cached_sockets"] == 1
    wait_for(lambda: fresh.info("stats")["migrate_cached_sockets"] == 0, timeout=15,
             interval=0.2, message="the idle MIGRATE connection was not dropped from the count")
    fresh.close()


def test_migrate_deletes_are_replicated_as_del(server, src, server_factory, target):
    replica = server_factory(["--replicaof", HOST, str(server.port)])
    rc = replica.client(decode_responses=True)
    wait_for(lambda: rc.info("replication")["master_link_status"] == "up", timeout=10)
    src.set("gone", "v")
    src.set("kept", "v")
    wait_for(lambda: rc.exists("gone", "kept") == 2)
    assert migrate(src, target.port, "gone", 0, 5000) == "OK"
    assert migrate(src, target.port, "kept", 0, 5000, "COPY", "REPLACE") == "OK"
    wait_for(lambda: rc.exists("gone") == 0)
    assert rc.get("kept") == "v"
    rc.close()


@needs_redis
def test_between_vireo_and_redis_70(src, server):
    ref = start_server(["--appendonly", "no"], binary=REDIS_SERVER)
    try:
        rc = ref.client(decode_responses=True)
        src.set("str", "value", px=50000)
        src.rpush("list", *[str(i) for i in range(200)])
        src.hset("hash", mapping={f"f{i}": str(i) for i in range(10)})
        src.zadd("zset", {"m1": 1, "m2": 2.5})
        src.xadd("stream", {"a": "1"}, id="5-1")
        assert migrate(src, ref.port, "", 0, 5000, "KEYS", "str", "list", "hash", "zset",
                       "stream") == "OK"
        assert src.dbsize() == 0
        assert rc.get("str") == "value" and 45000 < rc.pttl("str") <= 50000
        assert rc.lrange("list", 0, -1) == [str(i) for i in range(200)]
        assert rc.hlen("hash") == 10
        assert rc.zscore("zset", "m2") == 2.5
        assert rc.xrange("stream") == [("5-1", {"a": "1"})]
        # And back: Redis's MIGRATE into vireo.
        assert call(rc, "MIGRATE", HOST, server.port, "", 0, 5000, "KEYS", "str", "list",
                    "hash", "zset", "stream") == "OK"
        assert rc.dbsize() == 0
        assert src.get("str") == "value" and src.pttl("str") > 40000
        assert src.lrange("list", 0, -1) == [str(i) for i in range(200)]
        assert src.hgetall("hash") == {f"f{i}": str(i) for i in range(10)}
        assert src.zrange("zset", 0, -1, withscores=True) == [("m1", 1.0), ("m2", 2.5)]
        assert src.xrange("stream") == [("5-1", {"a": "1"})]
        # Redis's error replies as MIGRATE relays them.
        src.set("str", "again")
        rc.set("str", "taken")
        assert call_error(src, "MIGRATE", HOST, ref.port, "str", 0, 5000) == (
            "Target instance replied with error: BUSYKEY Target key name already exists.")
        rc.close()
    finally:
        ref.stop()
        ref.cleanup()


def test_cluster_commands_need_cluster_mode(src):
    for cmd in ("ASKING", "READONLY", "READWRITE"):
        assert call_error(src, cmd) == "This instance has cluster support disabled"


def test_restore_asking_is_restore(src, server):
    raw = server.client()
    raw.set("k", "v")
    payload = raw.dump("k")
    raw.delete("k")
    assert raw.execute_command("RESTORE-ASKING", "k", 0, payload) == b"OK"
    assert src.get("k") == "v"
    with pytest.raises(redis.ResponseError, match="BUSYKEY"):
        raw.execute_command("RESTORE-ASKING", "k", 0, payload)
    raw.close()

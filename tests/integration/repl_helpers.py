"""Helpers shared by the replication tests: real redis-server processes, a dataset with every
type and encoding, and a key-by-key comparison of two servers.

Import with `from repl_helpers import ...` (pytest puts this directory on sys.path)."""

from __future__ import annotations

import shutil
import socket
import threading

import pytest
import redis

from conftest import HOST, _finish, start_server, wait_for

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"


@pytest.fixture
def procs():
    """Servers a test starts (append them); all are stopped, and judged, at teardown."""
    started = []
    yield started
    errors = [e for e in (_finish(h) for h in started) if e]
    if errors:
        pytest.fail("\n\n".join(errors), pytrace=False)


def start_vireo(procs, *args):
    """A vireo on a free port that starts full syncs at once (no diskless delay)."""
    h = start_server(["--repl-diskless-sync-delay", "0", *map(str, args)])
    procs.append(h)
    return h


def start_redis(extra_args=()):
    """A real Redis (Debian's 7.0) on a free port, without persistence."""
    return start_server(["--appendonly", "no", *extra_args], binary=REDIS_SERVER)


def info(client: redis.Redis, section: str = "replication") -> dict:
    return client.info(section)


def link_up(replica: redis.Redis) -> bool:
    i = replica.info("replication")
    return i.get("role") == "slave" and i.get("master_link_status") == "up"


def wait_link_up(replica: redis.Redis, timeout: float = 20.0) -> None:
    wait_for(lambda: link_up(replica), timeout=timeout, message="replica link never came up")


def wait_in_sync(master: redis.Redis, replica: redis.Redis, timeout: float = 20.0) -> None:
    """Until the replica has processed everything the master has written so far."""

    def caught_up():
        target = master.info("replication")["master_repl_offset"]
        return link_up(replica) and replica.info("replication")["slave_repl_offset"] >= target

    wait_for(caught_up, timeout=timeout, message="replica never caught up")


def populate(r: redis.Redis, prefix: str = "") -> None:
    """Every type in its small and large encodings, TTLs, several databases."""
    p = prefix
    r.set(p + "str", "hello")
    r.set(p + "int", 12345)
    r.set(p + "big", "x" * 200_000)
    r.set(p + "ttl", "soon", ex=3600)
    r.rpush(p + "list:small", *range(5))
    r.rpush(p + "list:big", *[f"item-{i}" * 3 for i in range(2000)])
    r.hset(p + "hash:small", mapping={"a": 1, "b": 2})
    r.hset(p + "hash:big", mapping={f"f{i}": "v" * (i % 100) for i in range(1000)})
    r.sadd(p + "set:int", *range(50))
    r.sadd(p + "set:small", "a", "b", "c")
    r.sadd(p + "set:big", *[f"m{i}" for i in range(1000)])
    r.zadd(p + "zset:small", {"a": 1, "b": 2.5})
    r.zadd(p + "zset:big", {f"m{i}": i / 3 for i in range(1000)})
    for i in range(300):
        r.xadd(p + "stream", {"n": i, "payload": "p" * (i % 20)})
    r.xgroup_create(p + "stream", "g1", id="0")
    r.xgroup_create(p + "stream", "g2", id="$")
    r.xreadgroup("g1", "alice", {p + "stream": ">"}, count=10)
    r.xreadgroup("g1", "bob", {p + "stream": ">"}, count=5)
    r.pexpire(p + "hash:small", 3_600_000)
    db3 = redis.Redis(host=r.connection_pool.connection_kwargs["host"],
                      port=r.connection_pool.connection_kwargs["port"], db=3)
    db3.set(p + "in-db3", "three")
    db3.close()


def _value(r: redis.Redis, key: bytes, kind: bytes):
    if kind == b"string":
        return r.get(key)
    if kind == b"list":
        return r.lrange(key, 0, -1)
    if kind == b"hash":
        return sorted(r.hgetall(key).items())
    if kind == b"set":
        return sorted(r.smembers(key))
    if kind == b"zset":
        return r.zrange(key, 0, -1, withscores=True)
    if kind == b"stream":
        groups = r.xinfo_groups(key)
        summary = []
        for g in groups:
            name = g["name"]
            pending = r.xpending_range(key, name, min="-", max="+", count=100000)
            summary.append((name, g["last-delivered-id"], g["pending"],
                            [(p["message_id"], p["consumer"]) for p in pending]))
        return (r.xrange(key), sorted(summary))
    raise AssertionError(f"unexpected type {kind!r}")


def snapshot(client: redis.Redis, dbs=range(16)) -> dict:
    """{(db, key): (type, has_ttl, value)} of every key of every database."""
    kw = client.connection_pool.connection_kwargs
    out = {}
    for db in dbs:
        r = redis.Redis(host=kw["host"], port=kw["port"], db=db, password=kw.get("password"))
        for key in r.scan_iter(count=1000):
            kind = r.type(key)
            out[(db, key)] = (kind, r.pttl(key) > 0, _value(r, key, kind))
        r.close()
    return out


def assert_same_data(master: redis.Redis, replica: redis.Redis) -> None:
    a = snapshot(master)
    b = snapshot(replica)
    assert a.keys() == b.keys(), (sorted(set(a) ^ set(b))[:20])
    for k in a:
        assert a[k] == b[k], k


def log_count(handle, line: str) -> int:
    return handle.log_text(1 << 24).count(line)


def fullresync(offset: int = 100, replid: bytes = b"f" * 40) -> bytes:
    return b"+FULLRESYNC " + replid + b" %d\r\n" % offset


class FakeMaster:
    """Answers the replication handshake; the n-th PSYNC gets replies[n] (the last one repeats).
    A reply is (bytes, then[, more]): after sending, "hold" stays connected (reading and
    dropping what the replica sends) until close(), "until_release" until release() as well;
    with `more`, release() sends it instead of hanging up, and the connection is held."""

    def __init__(self, replies):
        self.replies = replies
        self.syncs = 0
        self.psyncs: list[tuple[str, int]] = []  # (replid, offset) of each PSYNC received
        self.released = threading.Event()
        self.stopping = False
        self.sock = socket.socket()
        self.sock.bind((HOST, 0))
        self.sock.listen(4)
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                try:
                    self.serve(conn)
                except OSError:
                    pass

    def serve(self, conn):
        conn.settimeout(0.1)
        buf = b""
        # PING, REPLCONF listening-port, REPLCONF capa ..., PSYNC: one reply each.
        for marker, reply in ((b"PING\r\n", b"+PONG\r\n"), (b"psync2\r\n", b"+OK\r\n+OK\r\n")):
            buf = self.read_until(conn, buf, marker)
            conn.sendall(reply)
        buf = self.read_until(conn, buf, b"PSYNC")
        # The rest of the command: \r\n $len replid $len offset, each line ending in \r\n.
        lines = []
        for _ in range(5):
            line, buf = self.read_line(conn, buf)
            lines.append(line)
        self.psyncs.append((lines[2].decode(), int(lines[4])))
        payload, then, *more = self.replies[min(self.syncs, len(self.replies) - 1)]
        self.syncs += 1
        conn.sendall(payload)
        if more:
            self.released.wait()
            conn.sendall(more[0])
            then = "hold"
        while not self.stopping and not (then == "until_release" and self.released.is_set()):
            try:
                if not conn.recv(65536):
                    return
            except socket.timeout:
                pass

    def read_until(self, conn, buf, marker):
        """What follows the first `marker` (reading until it has come)."""
        return self.read_through(conn, buf, marker)[1]

    def read_line(self, conn, buf):
        """(the next line without its CRLF, what follows it)."""
        return self.read_through(conn, buf, b"\r\n")

    def read_through(self, conn, buf, marker):
        while marker not in buf:
            if self.stopping:
                raise OSError("stopping")
            try:
                data = conn.recv(65536)
            except socket.timeout:
                continue
            if not data:
                raise OSError("closed")
            buf += data
        at = buf.index(marker)
        return buf[:at], buf[at + len(marker):]

    def release(self):
        self.released.set()

    def close(self):
        self.stopping = True
        self.released.set()
        self.thread.join()
        self.sock.close()

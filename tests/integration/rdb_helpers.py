"""Shared by test_rdb.py and test_dump_restore.py: a dataset with every type in its small and
large encodings, a snapshot of it that compares across servers, and a redis-server runner."""

import os
import shutil
import struct
import socket
import subprocess
import time

import redis

REDIS_SERVER = shutil.which("redis-server")
REDIS_CHECK_RDB = shutil.which("redis-check-rdb")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fill(r, types=("string", "list", "hash", "set", "zset", "stream")):
    """Keys of each type in each encoding; returns the key names."""
    keys = []
    if "string" in types:
        r.set("s:int", 12345)
        r.set("s:neg", -9876543210)
        r.set("s:embstr", "hello")
        r.set("s:raw", "x" * 100)  # LZF-compressible
        r.set("s:rand", os.urandom(300))
        r.set("s:empty", "")
        r.set("s:ttl", "v", px=3_600_000)
        keys += ["s:int", "s:neg", "s:embstr", "s:raw", "s:rand", "s:empty", "s:ttl"]
    if "list" in types:
        r.rpush("l:small", "a", 1, -2, "b" * 40, 2**40)
        r.rpush("l:big", *[f"item-{i}" for i in range(3000)])
        r.rpush("l:huge-elem", "z" * 20000, "y")
        keys += ["l:small", "l:big", "l:huge-elem"]
    if "hash" in types:
        r.hset("h:small", mapping={"f1": "v1", "f2": 2, "f3": "x" * 30})
        r.hset("h:big", mapping={f"field-{i}": f"value-{i}" for i in range(500)})
        r.hset("h:longval", mapping={"a": "q" * 100})
        keys += ["h:small", "h:big", "h:longval"]
    if "set" in types:
        r.sadd("set:int", 1, 2, 3, -7, 2**40)
        r.sadd("set:str", "a", "b", "c")
        r.sadd("set:bigint", *range(1000))
        r.sadd("set:big", *[f"m{i}" for i in range(500)])
        keys += ["set:int", "set:str", "set:bigint", "set:big"]
    if "zset" in types:
        r.zadd("z:small", {"a": 1, "b": 2.5, "c": -3, "d": float("inf")})
        r.zadd("z:big", {f"m{i}": i * 1.5 for i in range(500)})
        r.zadd("z:longmember", {"x" * 100: 1})
        keys += ["z:small", "z:big", "z:longmember"]
    if "stream" in types:
        for i in range(250):
            r.xadd("x:s", {"f": i, "g": "v"} if i % 7 else {"other": i}, id=f"{1000 + i}-{i % 3}")
        r.xdel("x:s", "1005-2", "1010-1")
        r.xgroup_create("x:s", "g1", id="0")
        r.xgroup_create("x:s", "g2", id="$")
        r.xreadgroup("g1", "alice", {"x:s": ">"}, count=5)
        r.xreadgroup("g1", "bob", {"x:s": ">"}, count=3)
        r.xack("x:s", "g1", "1000-0")
        r.xadd("x:empty", {"a": 1}, id="5-5")
        r.xdel("x:empty", "5-5")
        keys += ["x:s", "x:empty"]
    return keys


def _norm(v):
    return v


def snapshot(r, keys):
    """Type, contents and TTL presence of every key, comparable between servers."""
    out = {}
    for k in keys:
        t = r.type(k).decode()
        if t == "string":
            val = r.get(k)
        elif t == "list":
            val = r.lrange(k, 0, -1)
        elif t == "hash":
            val = sorted(r.hgetall(k).items())
        elif t == "set":
            val = sorted(r.smembers(k))
        elif t == "zset":
            val = r.zrange(k, 0, -1, withscores=True)
        elif t == "stream":
            info = r.xinfo_stream(k)
            groups = []
            for g in r.xinfo_groups(k):
                consumers = [(c["name"], c["pending"]) for c in r.xinfo_consumers(k, g["name"])]
                pending = r.xpending_range(k, g["name"], "-", "+", 1000)
                groups.append((g["name"], g["last-delivered-id"], g["pending"], g.get("entries-read"),
                               sorted(consumers),
                               [(p["message_id"], p["consumer"], p["times_delivered"]) for p in pending]))
            val = (r.xrange(k), info["length"], info["last-generated-id"],
                   info.get("max-deleted-entry-id"), info.get("entries-added"), groups)
        else:
            val = None
        out[k] = (t, val, r.pttl(k) > 0)
    return out


class RedisServer:
    """A Debian redis-server in its own directory, for cross-checks."""

    def __init__(self, workdir, dbfilename="dump.rdb", extra=()):
        self.port = free_port()
        self.workdir = str(workdir)
        self.log = open(os.path.join(self.workdir, f"redis-{self.port}.log"), "wb")
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", self.workdir, "--dbfilename", dbfilename, *extra],
            stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.client = redis.Redis(port=self.port, socket_timeout=15)
        deadline = time.monotonic() + 30
        while True:
            try:
                if self.client.ping():
                    break
            except (redis.ConnectionError, redis.BusyLoadingError):
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("redis-server did not start: " + self.log_text())
            time.sleep(0.02)

    def log_text(self):
        with open(self.log.name, "rb") as f:
            return f.read().decode(errors="replace")[-3000:]

    def stop(self):
        self.client.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)
        self.log.close()


# ---- hand-built payloads and files (hostile-input tests) -------------------------------------

_CRC64_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x95AC9329AC4BC9B5 if _c & 1 else _c >> 1
    _CRC64_TABLE.append(_c)


def crc64(data: bytes, crc: int = 0) -> int:
    """Redis's CRC64 (Jones, reflected)."""
    for b in data:
        crc = _CRC64_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def rdb_len(n: int) -> bytes:
    """An RDB length: 6-bit, 14-bit, 32-bit or (0x81) 64-bit big-endian."""
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    if n <= 0xFFFFFFFF:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def rdb_str(s: bytes) -> bytes:
    return rdb_len(len(s)) + s


def dump_payload(body: bytes, version: int = 11) -> bytes:
    """A DUMP payload: type byte + value (body), then the RDB version and the CRC64."""
    body += struct.pack("<H", version)
    return body + struct.pack("<Q", crc64(body))


def listpack(elems) -> bytes:
    """A listpack of short strings (each < 64 bytes), stored as strings."""
    entries = b""
    for e in elems:
        entry = bytes([0x80 | len(e)]) + e
        entries += entry + bytes([len(entry)])
    blob_len = 6 + len(entries) + 1
    return struct.pack("<IH", blob_len, len(elems)) + entries + b"\xff"


def intset(values, width=2) -> bytes:
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    return struct.pack("<II", width, len(values)) + b"".join(struct.pack(fmt, v) for v in values)


def rdb_file(key: bytes, type_byte: int, value: bytes, version: int = 11) -> bytes:
    """A dump.rdb holding one key in db 0, with its checksum."""
    data = b"REDIS%04d" % version + b"\xfe\x00" + bytes([type_byte]) + rdb_str(key) + value + b"\xff"
    return data + struct.pack("<Q", crc64(data))

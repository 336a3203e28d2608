#!/usr/bin/python3
"""Differential tester: vireo versus redis-server, reply by reply.

Both servers are started on free loopback ports.  A seeded random command
sequence is sent to both over raw sockets and the raw RESP2 replies are
compared byte for byte (or, for commands whose replies are legitimately
unordered or nondeterministic, after normalisation).  The first difference
is printed with the seed, the op index, the command, both replies and the
commands leading up to it, and the script exits 1.

    /usr/bin/python3 tests/differential/differential.py --seed 1 --ops 20000
    ... --vireo build/vireo-server --redis redis-server --family strings,tx -v

Adding a family: in a new file family_NAME.py (loaded automatically), write `def family_NAME() -> list[Op]` returning
(weight, generator, compare-mode) entries, decorate it with
@register_family("NAME", share=...) (cluster=True: it runs afterwards against a second pair of
servers in cluster mode, each a lone node serving every slot), and optionally register a state dumper
for a new data type in STATE_DUMPERS and a command's prelude in PRELUDES.
A generator is `gen(rng, ctx)` and returns either an argv list (str/bytes/int items) or a Seq of
(argv, mode) steps that are sent in order on the same connection (used for
MULTI/EXEC blocks).  Compare modes are the keys of COMPARATORS plus "scan".
"""

from __future__ import annotations

import argparse
import bisect
import os
import random
import shlex
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

HOST = "127.0.0.1"
REPO_ROOT = Path(__file__).resolve().parents[2]
READ_TIMEOUT = 10.0

# ==========================================================================
# RESP2 wire handling


class Reply:
    """One parsed reply that keeps its exact wire bytes.

    kind is the RESP2 type byte as a str ('+', '-', ':', '$', '*'); value is
    bytes / int / None / list[Reply]; raw is the verbatim encoding, which is
    what exact comparison uses.
    """

    __slots__ = ("kind", "value", "raw")

    def __init__(self, kind, value, raw):
        self.kind = kind
        self.value = value
        self.raw = raw

    @property
    def is_error(self):
        return self.kind == "-"


class ProtocolError(Exception):
    pass


class RespConn:
    def __init__(self, host: str, port: int, timeout: float = READ_TIMEOUT):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def _fill(self) -> None:
        chunk = self.sock.recv(262144)
        if not chunk:
            raise ProtocolError("connection closed by server")
        if self.pos > 262144:
            del self.buf[: self.pos]
            self.pos = 0
        self.buf += chunk

    def _line(self) -> bytes:
        while True:
            idx = self.buf.find(b"\r\n", self.pos)
            if idx >= 0:
                line = bytes(self.buf[self.pos: idx])
                self.pos = idx + 2
                return line
            self._fill()

    def _exact(self, n: int) -> bytes:
        while len(self.buf) - self.pos < n:
            self._fill()
        data = bytes(self.buf[self.pos: self.pos + n])
        self.pos += n
        return data

    def read(self) -> Reply:
        """Read exactly one RESP2 reply, recursing into arrays."""
        line = self._line()
        kind = chr(line[0]) if line else "?"
        body = line[1:]
        head = line + b"\r\n"
        if kind in "+-":
            return Reply(kind, body, head)
        try:
            if kind == ":":
                return Reply(kind, int(body), head)
            if kind == "$":
                n = int(body)
                if n < 0:
                    return Reply(kind, None, head)
                data = self._exact(n + 2)
                if data[-2:] != b"\r\n":
                    raise ProtocolError(f"bulk string of length {n} not followed by CRLF")
                return Reply(kind, data[:-2], head + data)
            if kind == "*":
                n = int(body)
                if n < 0:
                    return Reply(kind, None, head)
                items = [self.read() for _ in range(n)]
                return Reply(kind, items, head + b"".join(i.raw for i in items))
        except ValueError:
            raise ProtocolError(f"bad length/integer in line {line!r}") from None
        # RESP3 types or garbage: a RESP2 client must never see them.
        raise ProtocolError(f"unexpected reply line {line!r}")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def to_bytes(a) -> bytes:
    if isinstance(a, bytes):
        return a
    if isinstance(a, str):
        return a.encode()
    return str(a).encode()


def encode(argv) -> bytes:
    parts = [b"*%d\r\n" % len(argv)]
    for a in argv:
        b = to_bytes(a)
        parts.append(b"$%d\r\n%s\r\n" % (len(b), b))
    return b"".join(parts)


def show_arg(a) -> str:
    b = to_bytes(a)
    if b and all(33 <= c < 127 and c not in b"\"'\\" for c in b):
        return b.decode()
    return repr(b)[1:]  # python escaping, without the b prefix


def show_argv(argv, limit=300) -> str:
    s = " ".join(show_arg(a) for a in argv)
    return s if len(s) <= limit else s[:limit] + f"... ({len(s)} chars)"


def show_reply(raw: bytes, limit=1500) -> str:
    s = repr(raw)
    return s if len(s) <= limit else s[:limit] + f"... ({len(raw)} bytes)"


# ==========================================================================
# Servers


class Server:
    def __init__(self, name, binary=None, extra_args=(), addr=None, cluster=False):
        self.name = name
        self.proc = None
        self.workdir = None
        self.cluster_port = None
        if addr:
            host, _, port = addr.rpartition(":")
            self.host, self.port = host or HOST, int(port)
            return
        self.host = HOST
        path = shutil.which(binary) or binary
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            sys.exit(f"{name}: server binary not found: {binary}")
        last = ""
        for _ in range(3):  # retry in case another process grabbed the free port first
            self.workdir = tempfile.mkdtemp(prefix=f"vireo-diff-{name}-")
            self.port = free_port()
            argv = [path, "--port", str(self.port), "--bind", HOST, *extra_args]
            if cluster:
                # A lone cluster node; its bus port is chosen explicitly so port + 10000 need
                # not be free (or exist).
                self.cluster_port = free_port()
                argv += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                         "--cluster-port", str(self.cluster_port)]
            self.log = os.path.join(self.workdir, "server.log")
            with open(self.log, "wb") as log:
                self.proc = subprocess.Popen(argv, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.proc.poll() is None:
                if ping_ok(self.port):
                    return
                time.sleep(0.02)
            last = f"{name}: {' '.join(argv)} did not start\n{self.log_tail()}"
            self.stop()
        sys.exit(last)

    def log_tail(self, n=3000) -> str:
        try:
            with open(self.log, "rb") as f:
                return f.read().decode(errors="replace")[-n:]
        except (OSError, AttributeError):
            return ""

    def dead(self) -> bool:
        return self.proc is not None and self.proc.poll() is not None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def ping_ok(port) -> bool:
    try:
        with socket.create_connection((HOST, port), timeout=0.5) as s:
            s.sendall(b"*1\r\n$4\r\nPING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


# ==========================================================================
# Comparison modes


class Options:
    errors = "exact"  # or "prefix": compare only the error code word (ERR, WRONGTYPE...)


def canon(rep: Reply):
    """Comparable form of a reply honouring --errors; raw bytes when exact."""
    if Options.errors == "exact":
        return rep.raw
    if rep.kind == "-":
        return ("-", rep.value.split(b" ", 1)[0])
    if rep.kind == "*" and rep.value is not None:
        return ("*", tuple(canon(i) for i in rep.value))
    return rep.raw


def cmp_exact(a: Reply, b: Reply) -> bool:
    return canon(a) == canon(b)


def cmp_sorted(a: Reply, b: Reply) -> bool:
    # Unordered collections (KEYS, SMEMBERS...): same elements, any order.
    if a.kind == b.kind == "*" and a.value is not None and b.value is not None:
        return sorted(i.raw for i in a.value) == sorted(i.raw for i in b.value)
    return cmp_exact(a, b)


def cmp_pairs(a: Reply, b: Reply) -> bool:
    # Flat field/value arrays (HGETALL, ZRANGE WITHSCORES of equal scores...):
    # order of pairs is free, pairing is not.
    def pairs(r):
        v = [i.raw for i in r.value]
        return sorted(zip(v[0::2], v[1::2])) if len(v) % 2 == 0 else None
    if a.kind == b.kind == "*" and a.value is not None and b.value is not None:
        pa, pb = pairs(a), pairs(b)
        return pa is not None and pa == pb
    return cmp_exact(a, b)


def cmp_shape(a: Reply, b: Reply) -> bool:
    # Random results (RANDOMKEY, SPOP...): same type, nil-ness and length.
    if a.is_error or b.is_error:
        return cmp_exact(a, b)
    if a.kind != b.kind or (a.value is None) != (b.value is None):
        return False
    if a.kind == "*" and a.value is not None:
        return len(a.value) == len(b.value)
    return True


def make_tolerant_int(tol: int):
    # TTLs are computed from each server's own clock at slightly different
    # moments; negative sentinels (-1 no TTL, -2 missing) must match exactly.
    def cmp(a: Reply, b: Reply) -> bool:
        if a.kind == b.kind == ":":
            if a.value < 0 or b.value < 0:
                return a.value == b.value
            return abs(a.value - b.value) <= tol
        return cmp_exact(a, b)
    return cmp


COMPARATORS = {
    "exact": cmp_exact,
    "sorted": cmp_sorted,
    "pairs": cmp_pairs,
    "shape": cmp_shape,
    "ttl": make_tolerant_int(2),      # seconds (TTL, EXPIRETIME)
    "pttl": make_tolerant_int(2500),  # milliseconds (PTTL, PEXPIRETIME)
}
# "scan" is handled by the runner: it iterates each server independently.

# ==========================================================================
# Generator framework


class Seq:
    """Several commands sent in order as one op (e.g. a MULTI ... EXEC block)."""

    def __init__(self, steps):
        self.steps = steps  # list of (argv, mode)


FAMILIES: dict = {}          # name -> (share, builder)
STATE_DUMPERS: dict = {}     # TYPE reply -> fn(key) -> list[(argv, mode)]
TX_SAFE_FAMILIES = set()     # families whose exact single commands may be queued in MULTI
CLUSTER_FAMILIES = set()     # families run against servers in cluster mode (see run_group)
# In cluster mode, an argv word that the runner replaces with each server's own node id.
OWN_NODE_ID = b"<own-node-id>"
# Upper-case command name (bytes) -> argv sent to both servers, exact-compared, right before every
# command of that name, inside MULTI too (there it is queued just ahead). For a Redis quirk that
# depends on hidden process state left by earlier commands, which vireo deliberately lacks: the
# prelude resets that state without touching the keyspace or the random sequence.
PRELUDES: dict = {}


def register_family(name, share=1.0, tx_safe=False, cluster=False):
    def deco(fn):
        FAMILIES[name] = (share, fn)
        if tx_safe:
            TX_SAFE_FAMILIES.add(name)
        if cluster:
            CLUSTER_FAMILIES.add(name)
        return fn
    return deco


class Ctx:
    """State shared by generators: keyspace, clocks for TTLs, reference probe."""

    def __init__(self, rng, nkeys, probe, families):
        self.rng = rng
        self.keys = make_keys(nkeys)
        self.probe = probe
        self.families = families
        self.start = int(time.time())
        self.ttl_counter = 0
        self.last_abs_s = None
        self.tx_pool = None  # built lazily by the tx family

    def key(self, rng):
        return rng.choice(self.keys)

    def tick(self):
        self.ttl_counter += 1
        return self.ttl_counter

    # TTL values are built so that nothing expires during a run and every
    # NX/XX/GT/LT decision is the same on both servers even though each one
    # reads its own clock: a bucket B (1e8 s apart) plus a counter that grows
    # by one second per generated TTL.  Within a bucket a later command always
    # sets a later deadline by >= 1 s (more than any gap between the two
    # servers' clocks), across buckets the difference dwarfs the run time.
    # Absolute deadlines sit half a bucket away from relative ones.
    def rel_seconds(self, rng):
        return rng.randint(1, 9) * 10**8 + self.tick()

    def rel_ms(self, rng):
        return self.rel_seconds(rng) * 1000 + rng.randint(0, 999)

    def abs_seconds(self, rng):
        if self.last_abs_s is not None and rng.random() < 0.1:
            return self.last_abs_s  # exercise the "equal deadline" branch of GT/LT
        self.last_abs_s = self.start + rng.randint(1, 9) * 10**8 + 5 * 10**7 + self.tick()
        return self.last_abs_s

    def abs_ms(self, rng):
        return self.abs_seconds(rng) * 1000 + rng.randint(0, 999)


def make_keys(n):
    # Mostly plain names, plus a few that stress glob matching and binary safety.
    specials = [b"k*x", b"k[1]", b"k\\y", b"", "k\u00e9".encode(), b"user:1:name", b"k?", b"a"]
    specials = specials[: max(0, min(len(specials), n // 3))]
    return [f"k{i}".encode() for i in range(n - len(specials))] + specials


def cmd(rng, name):
    # Command names and option keywords are case-insensitive; mix the case
    # now and then so vireo's matching is exercised.
    r = rng.random()
    if r < 0.9:
        return name.upper()
    if r < 0.95:
        return name.lower()
    return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in name)


INT_EDGES = ["9223372036854775807", "-9223372036854775808", "9223372036854775806",
             "-9223372036854775807", "9223372036854775808", "-9223372036854775809",
             "4611686018427387904", "18446744073709551615", "0", "-1"]
FLOATS = ["3.14", "-0.5", "1e10", "1.5e-5", "inf", "-inf", "+inf", "nan", "3.0", "0.1", "-0.0", "10.5",
          "1.7976931348623157e308", "5e-324", "1e308", "-1e308", "123456789.123456789", "1E3", "0.0001"]
BAD_NUMBERS = [" 1", "1 ", "01", "+1", "1a", "--1", "1.", ".5", "0x1f", "1e", "", "-", "-0", "1,5", "\t1"]


def rand_bytes(rng, n):
    return bytes(rng.choice(b"\x00\r\n\xff\x01 abc\"'\\") for _ in range(n))


def gen_value(rng):
    r = rng.random()
    if r < 0.22:
        return str(rng.randint(-100, 100))
    if r < 0.30:
        return rng.choice(INT_EDGES)
    if r < 0.38:
        return rng.choice(FLOATS)
    if r < 0.45:
        return rng.choice(BAD_NUMBERS)
    if r < 0.50:
        return ""
    if r < 0.65:
        return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(rng.randint(1, 20)))
    if r < 0.78:
        # Small alphabet so LCS finds real common subsequences.
        return "".join(rng.choice("abc") for _ in range(rng.randint(0, 24)))
    if r < 0.9:
        return rand_bytes(rng, rng.randint(1, 16))
    # Lengths around the 44-byte embstr limit and a few longer values.
    return rng.choice("xyz") * rng.choice([43, 44, 45, 63, 64, 100, 300])


def gen_int_arg(rng):
    r = rng.random()
    if r < 0.6:
        return str(rng.randint(-1000, 1000))
    if r < 0.85:
        return rng.choice(INT_EDGES)
    return rng.choice(BAD_NUMBERS + ["1.5", "abc"])


def gen_float_arg(rng):
    r = rng.random()
    if r < 0.4:
        return str(rng.randint(-100, 100))
    if r < 0.8:
        return rng.choice(FLOATS)
    return rng.choice(BAD_NUMBERS + INT_EDGES)


def gen_index(rng):
    r = rng.random()
    if r < 0.85:
        return str(rng.randint(-60, 60))
    return rng.choice(["9223372036854775807", "-9223372036854775808", "abc", "1.5", ""])


# Arity as redis defines it: n > 0 means exactly n words including the
# command name, -n means at least n.  Used to produce wrong-arity calls.
ARITY = {
    "get": 2, "set": -3, "getset": 3, "getdel": 2, "getex": -2, "mget": -2, "mset": -3, "msetnx": -3,
    "setnx": 3, "setex": 4, "psetex": 4, "append": 3, "strlen": 2, "getrange": 4, "substr": 4,
    "setrange": 4, "incr": 2, "decr": 2, "incrby": 3, "decrby": 3, "incrbyfloat": 3, "lcs": -3,
    "del": -2, "unlink": -2, "exists": -2, "type": 2, "rename": 3, "renamenx": 3, "copy": -3,
    "touch": -2, "keys": 2, "scan": -2, "expire": -3, "pexpire": -3, "expireat": -3, "pexpireat": -3,
    "ttl": 2, "pttl": 2, "expiretime": 2, "pexpiretime": 2, "persist": 2, "dbsize": 1, "randomkey": 1,
    "multi": 1, "exec": 1, "discard": 1, "watch": -2, "unwatch": 1, "echo": 2,
    "lpush": -3, "rpush": -3, "lpushx": -3, "rpushx": -3, "lpop": -2, "rpop": -2, "llen": 2,
    "lrange": 4, "lindex": 3, "lset": 4, "linsert": 5, "lrem": 4, "ltrim": 4, "lpos": -3,
    "lmove": 5, "rpoplpush": 3, "lmpop": -4, "blpop": -3, "brpop": -3, "brpoplpush": 4,
    "blmove": 6, "blmpop": -5,
}
STRING_COMMANDS = ["get", "set", "getset", "getdel", "getex", "mget", "mset", "msetnx", "setnx", "setex",
                   "psetex", "append", "strlen", "getrange", "substr", "setrange", "incr", "decr", "incrby",
                   "decrby", "incrbyfloat", "lcs"]
LIST_COMMANDS = ["lpush", "rpush", "lpushx", "rpushx", "lpop", "rpop", "llen", "lrange", "lindex",
                 "lset", "linsert", "lrem", "ltrim", "lpos", "lmove", "rpoplpush", "lmpop", "blpop",
                 "brpop", "brpoplpush", "blmove", "blmpop"]
KEY_COMMANDS = ["del", "unlink", "exists", "type", "rename", "renamenx", "copy", "touch", "keys", "scan",
                "expire", "pexpire", "expireat", "pexpireat", "ttl", "pttl", "expiretime", "pexpiretime",
                "persist", "dbsize", "randomkey"]


def wrong_arity(rng, ctx, names):
    name = rng.choice(names)
    a = ARITY[name]
    if a > 0:
        choices = [n for n in (a - 1, a + 1, a + 2) if n >= 1]
    else:
        choices = list(range(1, -a))
    if not choices:
        choices = [1]
    argc = rng.choice(choices)
    argv = [cmd(rng, name)]
    while len(argv) < argc:
        argv.append(ctx.key(rng) if rng.random() < 0.5 else gen_value(rng))
    return argv


# --------------------------------------------------------------------------
# strings


# Rejected (or, for the ms variants, astronomically long) TTL arguments.  A
# small positive TTL is never generated: the key would expire mid-run at a
# moment that differs between the two servers.
BAD_TTLS = ["0", "-1", "abc", "1.5", "", " 5", "9223372036854775807", "9223372036854775", "-9223372036854775808"]


def expire_option(rng, ctx, allow_past=False):
    """One EX/PX/EXAT/PXAT clause, sometimes with an invalid value."""
    kind = rng.choice(["EX", "PX", "EXAT", "PXAT"])
    if rng.random() < 0.12:
        return [cmd(rng, kind), rng.choice(BAD_TTLS)]
    if allow_past and kind in ("EXAT", "PXAT") and rng.random() < 0.1:
        # A deadline already gone: GETEX deletes the key immediately.
        return [cmd(rng, kind), rng.choice(["1", str(ctx.start - 1000)])]
    value = {"EX": ctx.rel_seconds, "PX": ctx.rel_ms, "EXAT": ctx.abs_seconds, "PXAT": ctx.abs_ms}[kind](rng)
    return [cmd(rng, kind), value]


def g_set(rng, ctx):
    clauses = []
    if rng.random() < 0.3:
        clauses.append([cmd(rng, rng.choice(["NX", "XX"]))])
    if rng.random() < 0.25:
        clauses.append([cmd(rng, "GET")])
    r = rng.random()
    if r < 0.45:
        clauses.append(expire_option(rng, ctx))
    elif r < 0.55:
        clauses.append([cmd(rng, "KEEPTTL")])
    if rng.random() < 0.1:
        # Conflicting or repeated options: NX XX, EX with PX, KEEPTTL with EX...
        extra = rng.choice([["NX"], ["XX"], ["GET"], ["KEEPTTL"], ["BOGUS"], None])
        clauses.append([cmd(rng, extra[0])] if extra else expire_option(rng, ctx))
    rng.shuffle(clauses)
    argv = [cmd(rng, "SET"), ctx.key(rng), gen_value(rng)] + [w for c in clauses for w in c]
    if rng.random() < 0.03:
        argv.append(rng.choice(["EX", "PX", "EXAT", "PXAT"]))  # option missing its value
    return argv


def g_set_plain(rng, ctx):
    return ["SET", ctx.key(rng), gen_value(rng)]


def g_getex(rng, ctx):
    argv = [cmd(rng, "GETEX"), ctx.key(rng)]
    r = rng.random()
    if r < 0.5:
        argv += expire_option(rng, ctx, allow_past=True)
    elif r < 0.65:
        argv.append(cmd(rng, "PERSIST"))
    if rng.random() < 0.08:
        argv += rng.choice([["PERSIST"], expire_option(rng, ctx), ["KEEPTTL"], ["NX"], ["EX"]])
    return argv


def g_mset(rng, ctx, name="MSET"):
    n = rng.randint(1, 4)
    argv = [cmd(rng, name)]
    for _ in range(n):
        argv += [ctx.key(rng), gen_value(rng)]
    if rng.random() < 0.05:
        argv.pop()  # odd number of arguments
    return argv


def g_lcs(rng, ctx):
    a, b = ctx.key(rng), ctx.key(rng)
    # LCS needs len(a)*len(b) memory on the server; values can grow through
    # APPEND/SETRANGE, so ask the reference how big they are and shrink first.
    la = ctx.probe(["STRLEN", a])
    lb = ctx.probe(["STRLEN", b])
    la = la.value if la.kind == ":" else 0
    lb = lb.value if lb.kind == ":" else 0
    if la * lb > 200_000:
        return ["SET", a if la >= lb else b, gen_value(rng)[:30]]
    argv = [cmd(rng, "LCS"), a, b]
    opts = []
    if rng.random() < 0.3:
        opts.append([cmd(rng, "LEN")])
    if rng.random() < 0.5:
        opts.append([cmd(rng, "IDX")])
    if rng.random() < 0.35:
        opts.append([cmd(rng, "MINMATCHLEN"), rng.choice(["0", "1", "2", "3", "5", "-1", "abc", "100"])])
    if rng.random() < 0.35:
        opts.append([cmd(rng, "WITHMATCHLEN")])
    if rng.random() < 0.03:
        opts.append([rng.choice(["BOGUS", "MINMATCHLEN"])])
    rng.shuffle(opts)
    argv += [w for o in opts for w in o]
    if rng.random() < 0.4 and a != b:
        # Random keys rarely hold related strings; half the time set up two
        # that share a lot so the match lists are not trivially empty.
        abc = lambda: "".join(rng.choice("abc") for _ in range(rng.randint(0, 40)))  # noqa: E731
        return Seq([(["SET", a, abc()], "exact"), (["SET", b, abc()], "exact"), (argv, "exact")])
    return argv


@register_family("strings", share=4.0, tx_safe=True)
def family_strings():
    k = lambda name: (lambda rng, ctx: [cmd(rng, name), ctx.key(rng)])  # noqa: E731
    return [
        (12, g_set, "exact"),
        (10, k("GET"), "exact"),
        (2, lambda rng, ctx: [cmd(rng, "GETSET"), ctx.key(rng), gen_value(rng)], "exact"),
        (2, k("GETDEL"), "exact"),
        (4, g_getex, "exact"),
        (3, lambda rng, ctx: [cmd(rng, "MGET")] + [ctx.key(rng) for _ in range(rng.randint(1, 5))], "exact"),
        (2, g_mset, "exact"),
        (2, lambda rng, ctx: g_mset(rng, ctx, "MSETNX"), "exact"),
        (2, lambda rng, ctx: [cmd(rng, "SETNX"), ctx.key(rng), gen_value(rng)], "exact"),
        (2, lambda rng, ctx: [cmd(rng, "SETEX"), ctx.key(rng),
                              ctx.rel_seconds(rng) if rng.random() < 0.85 else rng.choice(BAD_TTLS),
                              gen_value(rng)], "exact"),
        (2, lambda rng, ctx: [cmd(rng, "PSETEX"), ctx.key(rng),
                              ctx.rel_ms(rng) if rng.random() < 0.85 else rng.choice(BAD_TTLS),
                              gen_value(rng)], "exact"),
        (4, lambda rng, ctx: [cmd(rng, "APPEND"), ctx.key(rng), gen_value(rng)[:20]], "exact"),
        (3, k("STRLEN"), "exact"),
        (3, lambda rng, ctx: [cmd(rng, rng.choice(["GETRANGE", "SUBSTR"])), ctx.key(rng),
                              gen_index(rng), gen_index(rng)], "exact"),
        (3, lambda rng, ctx: [cmd(rng, "SETRANGE"), ctx.key(rng),
                              str(rng.randint(0, 64)) if rng.random() < 0.85 else
                              rng.choice(["-1", "536870912", str(1 << 40), "abc"]),
                              gen_value(rng)[:20]], "exact"),
        (5, k("INCR"), "exact"),
        (3, k("DECR"), "exact"),
        (4, lambda rng, ctx: [cmd(rng, "INCRBY"), ctx.key(rng), gen_int_arg(rng)], "exact"),
        (3, lambda rng, ctx: [cmd(rng, "DECRBY"), ctx.key(rng), gen_int_arg(rng)], "exact"),
        (4, lambda rng, ctx: [cmd(rng, "INCRBYFLOAT"), ctx.key(rng), gen_float_arg(rng)], "exact"),
        (3, g_lcs, "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, STRING_COMMANDS), "exact"),
    ]


STATE_DUMPERS["string"] = lambda key: [(["GET", key], "exact")]

# --------------------------------------------------------------------------
# keys

GLOB_FIXED = ["*", "k*", "k?", "k[0-9]", "k1*", "k[^1]*", "k[!1]*", "k\\*x", "k\\[1]", "k[\\]]*", "k\\\\y",
              "*:*", "k[a-", "[", "\\", "k[9-0]", "k[1-]", "", "?", "??", "k*1", "*x", "a", "k[*]x", "*[",
              "k[]", "k[^]", "k\\", "*\\", "user:*", "k\u00e9", "k?*", "**", "k[1-3][0-9]", "[^k]*", "[a-k]"]
GLOB_ATOMS = ["k", "*", "?", "[0-5]", "[^3]", "1", "\\*", "[a-z]", "x", "\\", "[", "]", "^", "-", ":"]


def gen_pattern(rng):
    if rng.random() < 0.6:
        return rng.choice(GLOB_FIXED)
    return "".join(rng.choice(GLOB_ATOMS) for _ in range(rng.randint(1, 5)))


def g_scan(rng, ctx):
    argv = [cmd(rng, "SCAN"), "0"]
    opts = []
    if rng.random() < 0.5:
        opts.append([cmd(rng, "MATCH"), gen_pattern(rng)])
    if rng.random() < 0.6:
        opts.append([cmd(rng, "COUNT"), rng.choice(["1", "2", "3", "5", "10", "100", "1000"])])
    if rng.random() < 0.2:
        opts.append([cmd(rng, "TYPE"), rng.choice(["string", "STRING", "list", "hash", "set", "zset",
                                                   "stream", "none"])])
    rng.shuffle(opts)
    return argv + [w for o in opts for w in o]


def g_scan_bad(rng, ctx):
    # Invalid cursors and options: a single exact-compared SCAN call.
    return rng.choice([
        ["SCAN", rng.choice(["abc", "1.5", " 1", "18446744073709551616"])],  # only cursors every server must reject
        ["SCAN", "0", "COUNT", rng.choice(["0", "-1", "abc"])],
        ["SCAN", "0", "COUNT"],
        ["SCAN", "0", "MATCH"],
        ["SCAN", "0", "BOGUS", "1"],
    ])


def g_expire(rng, ctx):
    name = rng.choice(["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
    r = rng.random()
    if r < 0.8:
        value = {"EXPIRE": ctx.rel_seconds, "PEXPIRE": ctx.rel_ms,
                 "EXPIREAT": ctx.abs_seconds, "PEXPIREAT": ctx.abs_ms}[name](rng)
    elif r < 0.9:
        # Zero, negative or past deadlines delete the key on the spot.
        value = rng.choice(["0", "-1", "-100", "1"] if name.endswith("AT") else ["0", "-1", "-100"])
    else:
        value = rng.choice(["abc", "1.5", "", "9223372036854775807", "-9223372036854775808",
                            "9223372036854775", "92233720368547758"])
    argv = [cmd(rng, name), ctx.key(rng), value]
    for _ in range(rng.choice([0, 0, 1, 1, 1, 2])):
        argv.append(cmd(rng, rng.choice(["NX", "XX", "GT", "LT", "NX", "XX", "GT", "LT", "BOGUS"])))
    return argv


def g_keys_multi(name, lo=1, hi=4):
    return lambda rng, ctx: [cmd(rng, name)] + [ctx.key(rng) for _ in range(rng.randint(lo, hi))]


@register_family("keys", share=3.0, tx_safe=True)
def family_keys():
    k = lambda name: (lambda rng, ctx: [cmd(rng, name), ctx.key(rng)])  # noqa: E731
    return [
        (8, g_set_plain, "exact"),   # keep the keyspace populated when running this family alone
        (3, g_set, "exact"),
        (3, g_keys_multi("DEL"), "exact"),
        (2, g_keys_multi("UNLINK"), "exact"),
        (4, g_keys_multi("EXISTS", 1, 5), "exact"),
        (4, k("TYPE"), "exact"),
        (3, lambda rng, ctx: [cmd(rng, "RENAME"), ctx.key(rng), ctx.key(rng)], "exact"),
        (2, lambda rng, ctx: [cmd(rng, "RENAMENX"), ctx.key(rng), ctx.key(rng)], "exact"),
        (3, lambda rng, ctx: [cmd(rng, "COPY"), ctx.key(rng), ctx.key(rng)]
            + ([cmd(rng, "REPLACE")] if rng.random() < 0.5 else [])
            + ([rng.choice(["BOGUS", "REPLACE"])] if rng.random() < 0.03 else []), "exact"),
        (2, g_keys_multi("TOUCH"), "exact"),
        # Access data (issue 19): FREQ's policy error (or nil) is exact; an idle time is only
        # compared by shape, since a second boundary may fall between the two servers' reads.
        (1, lambda rng, ctx: [cmd(rng, "OBJECT"), cmd(rng, "FREQ"), ctx.key(rng)], "exact"),
        (1, lambda rng, ctx: [cmd(rng, "OBJECT"), cmd(rng, "IDLETIME"), ctx.key(rng)], "shape"),
        (4, lambda rng, ctx: [cmd(rng, "KEYS"), gen_pattern(rng)], "sorted"),
        (3, g_scan, "scan"),
        (1, g_scan_bad, "exact"),
        (8, g_expire, "exact"),
        (3, k("TTL"), "ttl"),
        (3, k("PTTL"), "pttl"),
        (2, k("EXPIRETIME"), "ttl"),
        (2, k("PEXPIRETIME"), "pttl"),
        (3, k("PERSIST"), "exact"),
        (2, lambda rng, ctx: [cmd(rng, "DBSIZE")], "exact"),
        (1, lambda rng, ctx: [cmd(rng, "RANDOMKEY")], "shape"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, KEY_COMMANDS), "exact"),
    ]


# --------------------------------------------------------------------------
# lists
#
# Known Redis 7.0 vs 7.2 differences the generator stays away from (vireo follows 7.2):
#  * OBJECT ENCODING: 7.2 keeps small lists as "listpack", 7.0 always says "quicklist".
#  * LPOS ... RANK -9223372036854775808: 7.2 rejects it ("value is out of range, value must
#    between ..."), 7.0 negates it and answers.
#  * Blocking timeouts whose milliseconds overflow (inf, 1e400, 0x7FFFFFFFFFFFFF, ...): 7.2
#    says "timeout is out of range", 7.0 "timeout is negative".
#  * Blocking commands that would really block: the generator only sends them when a key
#    exists (so they answer at once) or, rarely, with a 0.01 s timeout on empty keys.
#  * Served BLPOP/BLMOVE dirty counts and blocked-command commandstats (not compared anyway).

LIST_ELEMENTS = ["a", "b", "c", "1", "2", "-1", "10", "", "x" * 70, "007", "9223372036854775807"]
# Rejected on both versions, and never a timeout that blocks: "-0.0005" would mean forever.
BAD_TIMEOUTS = ["-1", "-2.5", "abc", "", "nan", " 1", "1 ", "1e", "0x", "--1"]
LIST_COUNTS = ["0", "1", "2", "3", "5", "100", "-1", "-5", "abc", "1.5", "", "9223372036854775807",
               "-9223372036854775808", "18446744073709551616"]


def list_elem(rng):
    return rng.choice(LIST_ELEMENTS) if rng.random() < 0.7 else gen_value(rng)


def list_items(ctx, key):
    """The reference server's list at key (empty if none or another type)."""
    rep = ctx.probe(["TYPE", key])
    if rep.value != b"list":
        return []
    rep = ctx.probe(["LRANGE", key, "0", "-1"])
    return [i.value for i in rep.value]


def list_member(rng, ctx, key):
    items = list_items(ctx, key)
    return rng.choice(items) if items and rng.random() < 0.7 else list_elem(rng)


def list_index(rng, ctx, key):
    if rng.random() < 0.5:
        n = len(list_items(ctx, key))
        if n:
            return str(rng.randint(-n - 1, n))
    return gen_index(rng)


def list_dir(rng):
    return cmd(rng, rng.choice(["LEFT", "RIGHT"])) if rng.random() < 0.95 else rng.choice(["UP", "", "LEFTX"])


def g_lpush(rng, ctx):
    name = rng.choice(["LPUSH", "RPUSH", "LPUSH", "RPUSH", "LPUSHX", "RPUSHX"])
    n = rng.choice([1, 1, 2, 3, 5, 20]) if rng.random() < 0.98 else 150
    return [cmd(rng, name), ctx.key(rng)] + [list_elem(rng) for _ in range(n)]


def g_lpop(rng, ctx):
    argv = [cmd(rng, rng.choice(["LPOP", "RPOP"])), ctx.key(rng)]
    if rng.random() < 0.5:
        argv.append(rng.choice(LIST_COUNTS))
    return argv


def g_lrange(rng, ctx):
    key = ctx.key(rng)
    return [cmd(rng, "LRANGE"), key, list_index(rng, ctx, key), list_index(rng, ctx, key)]


def g_lset(rng, ctx):
    key = ctx.key(rng)
    return [cmd(rng, "LSET"), key, list_index(rng, ctx, key), list_elem(rng)]


def g_linsert(rng, ctx):
    key = ctx.key(rng)
    where = rng.choice(["BEFORE", "AFTER"]) if rng.random() < 0.95 else rng.choice(["MIDDLE", ""])
    return [cmd(rng, "LINSERT"), key, cmd(rng, where), list_member(rng, ctx, key), list_elem(rng)]


def g_lrem(rng, ctx):
    key = ctx.key(rng)
    count = str(rng.randint(-3, 3)) if rng.random() < 0.85 else rng.choice(LIST_COUNTS)
    return [cmd(rng, "LREM"), key, count, list_member(rng, ctx, key)]


def g_ltrim(rng, ctx):
    key = ctx.key(rng)
    return [cmd(rng, "LTRIM"), key, list_index(rng, ctx, key), list_index(rng, ctx, key)]


def g_lpos(rng, ctx):
    key = ctx.key(rng)
    argv = [cmd(rng, "LPOS"), key, list_member(rng, ctx, key)]
    opts = []
    if rng.random() < 0.4:
        # Never -9223372036854775808: 7.0 and 7.2 differ there (see above).
        opts.append(["RANK", rng.choice(["1", "2", "-1", "-2", "0", "5", "abc",
                                         "9223372036854775807", "-9223372036854775807"])])
    if rng.random() < 0.4:
        opts.append(["COUNT", rng.choice(["0", "1", "2", "10", "-1", "abc"])])
    if rng.random() < 0.3:
        opts.append(["MAXLEN", rng.choice(["0", "1", "2", "5", "-1", "x"])])
    if rng.random() < 0.05:
        # An unknown option (with a value or not), or a known one missing its value.
        opts.append(rng.choice([["FOO"], ["FOO", "abc"], ["FOO", "1"], ["RANK"], ["MAXLEN"]]))
    if rng.random() < 0.1 and opts:
        opts.append(rng.choice(opts))  # repeated option: the last one wins
    rng.shuffle(opts)
    for o in opts:
        argv.append(cmd(rng, o[0]))
        argv += o[1:]
    return argv


def g_lmove(rng, ctx):
    src = ctx.key(rng)
    dst = src if rng.random() < 0.15 else ctx.key(rng)
    if rng.random() < 0.3:
        return [cmd(rng, "RPOPLPUSH"), src, dst]
    return [cmd(rng, "LMOVE"), src, dst, list_dir(rng), list_dir(rng)]


def mpop_tail(rng, ctx, keys):
    """numkeys key ... <LEFT | RIGHT> [COUNT count], now and then malformed."""
    r = rng.random()
    if r < 0.9:
        numkeys = str(len(keys))
    elif r < 0.95:
        numkeys = rng.choice(["0", "-1", "abc", "1.5"])
    else:
        # Too many, but never near LLONG_MAX: numkeys + index would overflow in Redis.
        numkeys = rng.choice([str(len(keys) + 1), "1000", "4611686018427387904"])
    argv = [numkeys] + keys + [list_dir(rng)]
    if rng.random() < 0.5:
        argv += [cmd(rng, "COUNT"), rng.choice(LIST_COUNTS[:8]) if rng.random() < 0.9 else
                 rng.choice(LIST_COUNTS)]
    if rng.random() < 0.04:
        argv += rng.choice([["COUNT", "2"], ["COUNT"], ["BOGUS"]])
    return argv


def g_lmpop(rng, ctx):
    keys = [ctx.key(rng) for _ in range(rng.randint(1, 3))]
    return [cmd(rng, "LMPOP")] + mpop_tail(rng, ctx, keys)


def any_key_exists(ctx, keys):
    return ctx.probe(["EXISTS"] + keys).value > 0


def g_blocking(rng, ctx):
    name = rng.choice(["BLPOP", "BRPOP", "BLMPOP", "BLMOVE", "BRPOPLPUSH"])
    keys = [ctx.key(rng) for _ in range(rng.randint(1, 3))]
    # What decides whether the command would wait: BLMOVE/BRPOPLPUSH look at their source
    # only. A key of another type answers WRONGTYPE at once.
    watched = keys[:1] if name in ("BLMOVE", "BRPOPLPUSH") else keys
    if rng.random() < 0.1:
        timeout = rng.choice(BAD_TIMEOUTS)  # rejected before any key is looked at
    elif any_key_exists(ctx, watched):
        timeout = rng.choice(["0", "0.5", "3", "1e3"])
    elif rng.random() < 0.05:
        timeout = "0.01"  # rare: both servers really block and time out
    else:
        return [cmd(rng, "LLEN"), keys[0]]
    if name in ("BLPOP", "BRPOP"):
        return [cmd(rng, name)] + keys + [timeout]
    if name == "BLMPOP":
        argv = [cmd(rng, name), timeout] + mpop_tail(rng, ctx, keys)
        # A malformed tail can make the keys differ from `watched`; only well-formed calls
        # with an existing key or a bad timeout are safe, so fall back when unsure.
        if argv[2] != str(len(keys)) and timeout not in BAD_TIMEOUTS:
            return [cmd(rng, "LLEN"), keys[0]]
        return argv
    dst = ctx.key(rng)
    if name == "BRPOPLPUSH":
        return [cmd(rng, name), keys[0], dst, timeout]
    return [cmd(rng, name), keys[0], dst, list_dir(rng), list_dir(rng), timeout]


@register_family("lists", share=3.0, tx_safe=True)
def family_lists():
    k = lambda name: (lambda rng, ctx: [cmd(rng, name), ctx.key(rng)])  # noqa: E731
    return [
        (14, g_lpush, "exact"),
        (6, g_lpop, "exact"),
        (3, k("LLEN"), "exact"),
        (5, g_lrange, "exact"),
        (3, lambda rng, ctx: [cmd(rng, "LINDEX"), ctx.key(rng), list_index(rng, ctx, ctx.key(rng))],
         "exact"),
        (3, g_lset, "exact"),
        (3, g_linsert, "exact"),
        (3, g_lrem, "exact"),
        (3, g_ltrim, "exact"),
        (4, g_lpos, "exact"),
        (4, g_lmove, "exact"),
        (3, g_lmpop, "exact"),
        (4, g_blocking, "exact"),
        # Strings in the same keyspace, so list commands meet WRONGTYPE even when run alone,
        # and DEL so that a key taken by a string becomes a list again.
        (1, lambda rng, ctx: ["SET", ctx.key(rng), gen_value(rng)], "exact"),
        (3, lambda rng, ctx: ["DEL", ctx.key(rng)], "exact"),
        (1, lambda rng, ctx: wrong_arity(rng, ctx, LIST_COMMANDS), "exact"),
    ]


STATE_DUMPERS["list"] = lambda key: [(["LRANGE", key, "0", "-1"], "exact")]


# --------------------------------------------------------------------------
# tx


def tx_pool(ctx):
    """Weighted single-command, exact-compared generators that may go inside MULTI."""
    if ctx.tx_pool is None:
        names = [f for f in ctx.families if f in TX_SAFE_FAMILIES] or ["strings", "keys"]
        entries = []
        for name in names:
            for w, gen, mode in FAMILIES[name][1]():
                if mode == "exact" and gen not in (g_lcs,):  # g_lcs probes; keep probes out of MULTI
                    entries.append((w, gen))
        ctx.tx_pool = (entries, list(accumulate(w for w, _ in entries)))
    return ctx.tx_pool


def accumulate(ws):
    total = 0
    for w in ws:
        total += w
        yield total


def pick_weighted(rng, entries, cum):
    i = bisect.bisect_right(cum, rng.random() * cum[-1])
    return entries[min(i, len(entries) - 1)]


def g_tx(rng, ctx):
    entries, cum = tx_pool(ctx)
    steps = []
    watched = []
    if rng.random() < 0.3:
        watched = [ctx.key(rng) for _ in range(rng.randint(1, 3))]
        steps.append(([cmd(rng, "WATCH")] + watched, "exact"))
        r = rng.random()
        if r < 0.35:
            # Touching a watched key from this very connection still aborts EXEC.
            steps.append((["SET", rng.choice(watched), gen_value(rng)], "exact"))
        elif r < 0.5:
            steps.append((["GET", rng.choice(watched)], "exact"))
        elif r < 0.6:
            steps.append(([cmd(rng, "UNWATCH")], "exact"))
    steps.append(([cmd(rng, "MULTI")], "exact"))
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        if r < 0.04:
            steps.append(([rng.choice(["NOSUCHCMD", "GETT"]), ctx.key(rng)], "exact"))  # aborts EXEC
        elif r < 0.07:
            steps.append((wrong_arity(rng, ctx, STRING_COMMANDS), "exact"))  # aborts EXEC
        elif r < 0.09:
            steps.append(([cmd(rng, "MULTI")], "exact"))  # nested MULTI is an error but no abort
        elif r < 0.11:
            steps.append(([cmd(rng, "WATCH"), ctx.key(rng)], "exact"))  # WATCH inside MULTI
        else:
            _, gen = pick_weighted(rng, entries, cum)
            out = gen(rng, ctx)
            if not isinstance(out, Seq):  # a multi-step op cannot be nested in this block
                steps.append((out, "exact"))
    steps.append(([cmd(rng, "EXEC" if rng.random() < 0.8 else "DISCARD")], "exact"))
    r = rng.random()
    if r < 0.05:
        steps.append(([cmd(rng, rng.choice(["EXEC", "DISCARD"]))], "exact"))  # without MULTI
    return Seq(steps)


@register_family("tx", share=1.0)
def family_tx():
    return [
        (10, g_tx, None),
        (1, lambda rng, ctx: [cmd(rng, rng.choice(["EXEC", "DISCARD", "UNWATCH"]))], "exact"),
    ]


# --------------------------------------------------------------------------
# errors

UNKNOWN_NAMES = [b"NOSUCHCMD", b"gett", b"SETT", b"x" * 200, b"hello world", b"get\r\nset", b"\xff\xfe", b"",
                 b"'quoted'", b"CONFIGG", b"%s%n"]


def g_unknown(rng, ctx):
    argv = [rng.choice(UNKNOWN_NAMES)]
    for _ in range(rng.randint(0, 4)):
        r = rng.random()
        if r < 0.5:
            argv.append(ctx.key(rng))
        elif r < 0.7:
            argv.append(b"a\r\nb")
        elif r < 0.85:
            argv.append(b"y" * rng.choice([60, 127, 128, 129, 300]))
        else:
            argv.append(gen_value(rng))
    return argv


@register_family("errors", share=0.5)
def family_errors():
    return [
        (5, g_unknown, "exact"),
        (5, lambda rng, ctx: wrong_arity(rng, ctx, list(ARITY)), "exact"),
        (1, lambda rng, ctx: ["PING", "a", "b"], "exact"),
        (1, lambda rng, ctx: [cmd(rng, "ECHO"), gen_value(rng)], "exact"),
    ]


# ==========================================================================
# Runner


class Mismatch(Exception):
    pass


class Runner:
    def __init__(self, args, vireo: Server, redis: Server):
        self.args = args
        self.vs, self.rs = vireo, redis
        self.v = RespConn(vireo.host, vireo.port)
        self.r = RespConn(redis.host, redis.port)
        self.probe_conn = RespConn(redis.host, redis.port)
        self.history = deque(maxlen=20)
        self.verbose = args.verbose
        # Cluster mode: argv words standing for each server's own value (OWN_* -> (vireo, redis))
        # and the (vireo, redis) spellings rewritten in vireo's replies; see claim_all_slots.
        self.own = {}
        self.renames = []

    def probe(self, argv):
        # Reads the reference state to steer generation; never sent to vireo.
        self.probe_conn.send(encode(argv))
        return self.probe_conn.read()

    def both(self, argv):
        data = [encode(argv)] * 2
        if self.own and any(to_bytes(a) in self.own for a in argv):
            data = [encode([self.own.get(to_bytes(a), (a, a))[i] for a in argv]) for i in (0, 1)]
        replies = []
        for (name, conn, srv), d in zip((("vireo", self.v, self.vs), ("redis", self.r, self.rs)), data):
            try:
                conn.send(d)
            except OSError as e:
                raise Mismatch(f"{name}: send failed: {e}{self.death_note(srv)}")
        for name, conn, srv in (("vireo", self.v, self.vs), ("redis", self.r, self.rs)):
            try:
                replies.append(conn.read())
            except (OSError, ProtocolError) as e:
                raise Mismatch(f"{name}: no valid reply: {e!r}{self.death_note(srv)}")
        if self.renames:
            replies[0] = self.renamed(replies[0])
        return replies

    def renamed(self, rep):
        """vireo's reply with its own node id and ports spelled as redis' (equal lengths, so the
        RESP framing stays valid): cluster replies then compare byte for byte."""
        raw = rep.raw
        for mine, theirs in self.renames:
            raw = raw.replace(mine, theirs)
        if raw == rep.raw:
            return rep
        parser = RespConn.__new__(RespConn)
        parser.buf, parser.pos = bytearray(raw), 0
        return parser.read()

    @staticmethod
    def death_note(srv):
        if srv.dead():
            return f"\n{srv.name} exited with status {srv.proc.returncode}; log tail:\n{srv.log_tail()}"
        return ""

    def step(self, label, argv, mode):
        prelude = PRELUDES.get(to_bytes(argv[0]).upper()) if argv else None
        if prelude:
            self.step(f"{label}/prelude", prelude, "exact")
        self.history.append((label, argv))
        if mode == "scan":
            return self.scan_step(label, argv)
        a, b = self.both(argv)
        if self.verbose:
            print(f"{label}: {show_argv(argv)} -> {show_reply(b.raw, 200)}")
        if not COMPARATORS[mode](a, b):
            self.fail(label, argv, mode, a.raw, b.raw)

    def scan_step(self, label, argv):
        # Cursors are implementation details, so each server is walked to the
        # end on its own and the sets of returned keys are compared.
        cursor_at = 1 if to_bytes(argv[0]).upper() == b"SCAN" else 2
        pairs = to_bytes(argv[0]).upper() in (b"HSCAN", b"ZSCAN")
        results = []
        for name, conn, srv in (("vireo", self.v, self.vs), ("redis", self.r, self.rs)):
            cur = list(argv)
            cursor = b"0"
            seen = set()
            first = None
            for _ in range(100000):
                cur[cursor_at] = cursor
                try:
                    conn.send(encode(cur))
                    rep = conn.read()
                except (OSError, ProtocolError) as e:
                    raise Mismatch(f"{name}: no valid reply to {show_argv(cur)}: {e!r}{self.death_note(srv)}")
                if first is None:
                    first = rep
                if rep.is_error or rep.kind != "*" or rep.value is None or len(rep.value) != 2 \
                        or rep.value[0].kind != "$" or rep.value[1].kind != "*" or rep.value[1].value is None:
                    seen = ("reply", rep.raw if rep is first else b"mid-iteration: " + rep.raw)
                    break
                items = [i.raw for i in rep.value[1].value]
                if pairs:
                    items = list(zip(items[0::2], items[1::2]))
                seen.update(items)
                cursor = rep.value[0].value
                if cursor == b"0":
                    break
            else:
                seen = ("reply", b"iteration did not finish")
            results.append(seen)
        a, b = results
        same = a == b
        if not same and isinstance(a, tuple) and isinstance(b, tuple) and Options.errors != "exact":
            same = a[1].split(b" ", 1)[0] == b[1].split(b" ", 1)[0]
        if self.verbose:
            print(f"{label}: {show_argv(argv)} -> scan {len(b) if isinstance(b, set) else b}")
        if not same:
            fmt = lambda s: repr(sorted(s))[:1500] if isinstance(s, set) else repr(s[1])  # noqa: E731
            self.fail(label, argv, "scan", fmt(a), fmt(b))

    def fail(self, label, argv, mode, va, ra):
        msg = [f"MISMATCH at {label} (mode {mode})",
               f"command: {show_argv(argv, 2000)}",
               f"vireo:   {va if isinstance(va, str) else show_reply(va)}",
               f"redis:   {ra if isinstance(ra, str) else show_reply(ra)}"]
        raise Mismatch("\n".join(msg))

    def state_check(self, ctx, label):
        """Compare the whole keyspace: key set, each key's type, value and TTL class."""
        self.step(f"{label}/keys", ["KEYS", "*"], "sorted")
        self.step(f"{label}/dbsize", ["DBSIZE"], "exact")
        for key in ctx.keys:
            a, b = self.both(["TYPE", key])
            self.history.append((f"{label}/type", ["TYPE", key]))
            if a.raw != b.raw:
                self.fail(f"{label}/type", ["TYPE", key], "exact", a.raw, b.raw)
            self.step(f"{label}/pttl", ["PTTL", key], "pttl")
            tname = b.value.decode() if b.kind == "+" else ""
            dumper = STATE_DUMPERS.get(tname)
            if dumper:
                for argv, mode in dumper(key):
                    self.step(f"{label}/{tname}", argv, mode)

    def run(self, seed, ops, families):
        rng = random.Random(seed)
        ctx = Ctx(rng, self.args.keys, self.probe, families)
        entries = []
        for fam in families:
            share, builder = FAMILIES[fam]
            items = builder()
            total = sum(w for w, _, _ in items)
            for w, gen, mode in items:
                entries.append((share * w / total, fam, gen, mode))
        cum = list(accumulate(e[0] for e in entries))
        for i in range(ops):
            _, fam, gen, mode = pick_weighted(rng, entries, cum)
            out = gen(rng, ctx)
            if isinstance(out, Seq):
                for j, (argv, m) in enumerate(out.steps):
                    self.step(f"op {i}.{j} [{fam}]", argv, m)
            else:
                self.step(f"op {i} [{fam}]", out, mode)
            if self.args.check_every and (i + 1) % self.args.check_every == 0 and not self.args.no_state_check:
                self.state_check(ctx, f"state check after op {i}")
        if not self.args.no_state_check:
            self.state_check(ctx, "final state check")

    @staticmethod
    def probe_other(srv, argv):
        conn = RespConn(srv.host, srv.port)
        try:
            conn.send(encode(argv))
            return conn.read()
        finally:
            conn.close()

    def reset(self):
        # Between seeds of one invocation; also drops any MULTI/WATCH state.
        for conn in (self.v, self.r):
            for argv in (["DISCARD"], ["UNWATCH"], ["FLUSHALL"]):
                conn.send(encode(argv))
                conn.read()

    def claim_all_slots(self, timeout=15.0):
        """Makes each server a one-node cluster serving every slot and waits for cluster_state:ok
        (Redis holds a fresh master in the fail state for its first 2 seconds)."""
        ids = [self.probe_other(srv, ["CLUSTER", "MYID"]).value for srv in (self.vs, self.rs)]
        self.own = {OWN_NODE_ID: tuple(ids)}
        pairs = [tuple(ids)] + [(str(v).encode(), str(r).encode()) for v, r in (
            (self.vs.port, self.rs.port), (self.vs.cluster_port, self.rs.cluster_port))]
        # Ephemeral ports all have five digits; a pair that differs in length is left alone.
        self.renames = [(v, r) for v, r in pairs if len(v) == len(r) and v != r]
        self.step("setup", ["CLUSTER", "ADDSLOTSRANGE", "0", "16383"], "exact")
        for name, port in (("vireo", self.vs.port), ("redis", self.rs.port)):
            conn = RespConn(HOST, port)
            try:
                deadline = time.monotonic() + timeout
                while True:
                    conn.send(encode(["CLUSTER", "INFO"]))
                    if b"cluster_state:ok" in (conn.read().value or b""):
                        break
                    if time.monotonic() > deadline:
                        raise Mismatch(f"{name}: cluster_state not ok {timeout}s after ADDSLOTSRANGE")
                    time.sleep(0.05)
            finally:
                conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vireo", default=os.environ.get("VIREO_SERVER", str(REPO_ROOT / "build" / "vireo-server")),
                    help="server under test (default $VIREO_SERVER or build/vireo-server)")
    ap.add_argument("--redis", default="redis-server", help="reference server binary (default: redis-server)")
    ap.add_argument("--vireo-args", default="", help="extra vireo arguments, one shell-quoted string")
    ap.add_argument("--vireo-addr", help="HOST:PORT of an already running vireo instead of starting one")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=1, help="run seeds seed..seed+runs-1 (FLUSHALL between)")
    ap.add_argument("--ops", type=int, default=10000)
    ap.add_argument("--keys", type=int, default=20, help="keyspace size")
    ap.add_argument("--family", default="", help=f"comma list, default all of: {','.join(FAMILIES)}")
    ap.add_argument("--check-every", type=int, default=2000,
                    help="full keyspace comparison every N ops (0: only at end)")
    ap.add_argument("--no-state-check", action="store_true", help="skip the keyspace comparisons")
    ap.add_argument("--errors", choices=["exact", "prefix"], default="exact",
                    help="compare error replies exactly or only by their first word")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every command and redis' reply")
    args = ap.parse_args()

    families = [f.strip() for f in args.family.split(",") if f.strip()] or list(FAMILIES)
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        sys.exit(f"unknown families {unknown}; known: {', '.join(FAMILIES)}")
    Options.errors = args.errors

    # The servers run in their own work dirs, so a relative binary path must be resolved first.
    if os.sep in args.vireo:
        args.vireo = os.path.abspath(args.vireo)
    # Cluster families need both servers started with cluster-enabled, which the other families
    # must not see (only db 0, CROSSSLOT): they run afterwards against a second pair of servers,
    # for their share of --ops on top of the plain run, which keeps its sequence unchanged.
    plain = [f for f in families if f not in CLUSTER_FAMILIES]
    clustered = [f for f in families if f in CLUSTER_FAMILIES]
    code = 0
    if plain:
        code = run_group(args, plain, args.ops, cluster=False)
    if clustered:
        if args.vireo_addr:
            print(f"skipped {','.join(clustered)}: cluster families start their own vireo")
        else:
            total = sum(FAMILIES[f][0] for f in families)
            share = sum(FAMILIES[f][0] for f in clustered)
            ops = args.ops if not plain else max(1, round(args.ops * share / total))
            code = run_group(args, clustered, ops, cluster=True) or code
    return code


def run_group(args, families, ops, cluster):
    """Starts both servers, runs the seeds over `families` and stops them; 0 when all matched."""
    # DEBUG is off by default in both (Redis 7's enable-debug-command no); families may use it.
    debug = ["--enable-debug-command", "yes"]
    redis_srv = Server("redis", args.redis, ["--save", "", "--appendonly", "no", *debug],
                       cluster=cluster)
    try:
        vireo_srv = Server("vireo", args.vireo, [*debug, *shlex.split(args.vireo_args)],
                           addr=None if cluster else args.vireo_addr, cluster=cluster)
    except SystemExit:
        redis_srv.stop()
        raise
    t0 = time.monotonic()
    code = 0
    runner = None
    try:
        runner = Runner(args, vireo_srv, redis_srv)
        if cluster:
            runner.claim_all_slots()
        for n in range(args.runs):
            seed = args.seed + n
            if n:
                runner.reset()
            try:
                runner.run(seed, ops, families)
            except Mismatch as e:
                print(str(e))
                print(f"seed {seed}, families {','.join(families)}, keys {args.keys}")
                print("last commands (oldest first):")
                for label, argv in runner.history:
                    print(f"  {label}: {show_argv(argv)}")
                print(f"reproduce: {sys.argv[0]} --vireo {args.vireo} --redis {args.redis} --seed {seed} "
                      f"--ops {ops} --keys {args.keys} --family {','.join(families)}"
                      + (f" --errors {args.errors}" if args.errors != "exact" else "")
                      + (f" --vireo-args {shlex.quote(args.vireo_args)}" if args.vireo_args else ""))
                code = 1
                break
            if args.verbose or args.runs > 1:
                print(f"seed {seed}: ok")
        if code == 0:
            print(f"OK: {args.runs} run(s) x {ops} ops, seeds {args.seed}..{args.seed + args.runs - 1}, "
                  f"families {','.join(families)}{' (cluster mode)' if cluster else ''}, "
                  f"{time.monotonic() - t0:.1f}s")
    finally:
        for srv in (vireo_srv, redis_srv):
            srv.stop()
    return code


def load_family_modules():
    """Families of later command groups live in family_<name>.py next to this file; each does
    `from differential import register_family, ARITY, STATE_DUMPERS, ...` and registers itself
    (and adds its ARITY entries) at import."""
    import importlib
    sys.modules.setdefault("differential", sys.modules[__name__])
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    for path in sorted(here.glob("family_*.py")):
        importlib.import_module(path.stem)


if __name__ == "__main__":
    load_family_modules()
    sys.exit(main())

"""Blocking list commands under load: every element is consumed exactly once.

4 producers push 200 000 unique elements into a few lists; 16 consumers take them with BLPOP,
BRPOP, BLMPOP (with COUNT) and BLMOVE (which forwards into a list the others also wait on),
all with short timeouts so the timeout path runs too. At the end the multiset of what the
consumers were sent equals the set produced, every list is empty and no consumer is stuck.

The second run does the same while a chaos client CLIENT KILLs random blocked consumers. A
consumer records every reply it reads, also the ones still buffered when its connection is
killed, so anything the server popped for a client must show up: the server must never pop
for a client that is gone, and must send a client what it was served before closing it.

Consumers are raw sockets with a minimal RESP reader (redis-py is too slow for 200 000
elements on this 2-core machine). The whole module is bounded to well under a minute and is
skipped under sanitizers (VIREO_SANITIZED), where it would take far longer.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from collections import Counter

import pytest

from conftest import wait_for

pytestmark = [pytest.mark.load,
              pytest.mark.skipif(bool(os.environ.get("VIREO_SANITIZED")),
                                 reason="load test: too slow under sanitizers")]

HOST = "127.0.0.1"
QUEUES = [b"q0", b"q1", b"q2", b"q3"]
STAGE = b"stage"  # BLMOVE consumers forward here; the poppers wait on it too
ALL_KEYS = QUEUES + [STAGE]
PRODUCERS = 4
CONSUMERS_PER_KIND = 4  # x 4 kinds = 16 consumers
TOTAL = 200_000
RUN_DEADLINE = 120.0  # seconds; a hang fails the test instead of stalling CI


class Closed(Exception):
    """The server closed the connection."""


class RespError(Exception):
    pass


def encode(args) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    """One connection, one outstanding command at a time."""

    def __init__(self, port: int, name: str | None = None):
        self.sock = socket.create_connection((HOST, port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0
        if name:
            assert self.call("CLIENT", "SETNAME", name) == b"OK"
        self.id = self.call("CLIENT", "ID")

    def send(self, *args) -> None:
        try:
            self.sock.sendall(encode(args))
        except OSError as e:
            raise Closed() from e

    def call(self, *args):
        self.send(*args)
        return self.read()

    def _fill(self) -> None:
        try:
            data = self.sock.recv(1 << 16)
        except (ConnectionResetError, BrokenPipeError) as e:
            raise Closed() from e
        if not data:
            raise Closed()
        if self.pos > 1 << 16:
            del self.buf[: self.pos]
            self.pos = 0
        self.buf += data

    def _line(self) -> bytes:
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos: i])
                self.pos = i + 2
                return line
            self._fill()

    def read(self):
        line = self._line()
        kind = line[:1]
        if kind == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._fill()
            value = bytes(self.buf[self.pos: self.pos + n])
            self.pos += n + 2
            return value
        if kind == b"*":
            n = int(line[1:])
            return None if n < 0 else [self.read() for _ in range(n)]
        if kind == b":":
            return int(line[1:])
        if kind == b"+":
            return line[1:]
        if kind == b"-":
            raise RespError(line[1:].decode())
        raise AssertionError(f"unexpected reply line {line!r}")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


class Run:
    """Shared state of one run."""

    def __init__(self, port: int, total: int, seed: int):
        self.port = port
        self.total = total
        self.seed = seed
        self.producers_done = threading.Event()
        self.stop_movers = threading.Event()
        self.stop_poppers = threading.Event()
        self.stop_chaos = threading.Event()
        self.lock = threading.Lock()
        self.consumed: list[bytes] = []   # every element a popper was sent
        self.moved: list[bytes] = []      # every element a mover was sent
        self.killed_seen = 0              # connections consumers found closed
        self.kills = 0                    # CLIENT KILLs that hit
        self.errors: list[str] = []

    def fail(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)


def producer(run: Run, index: int) -> None:
    rng = random.Random(run.seed * 100 + index)
    conn = Conn(run.port, f"producer-{index}")
    try:
        per = run.total // PRODUCERS
        next_i = 0
        while next_i < per:
            n = min(rng.randint(1, 24), per - next_i)
            batch = [b"p%d-%d" % (index, i) for i in range(next_i, next_i + n)]
            next_i += n
            key = STAGE if rng.random() < 0.05 else rng.choice(QUEUES)
            length = conn.call(rng.choice(("RPUSH", "LPUSH")), key, *batch)
            # Keep the lists short so that consumers keep blocking instead of draining a
            # backlog (a throttle, not synchronisation).
            if length > 300:
                time.sleep(0.001)
    except Exception as e:  # noqa: BLE001 - reported by the test
        run.fail(f"producer {index}: {e!r}")
    finally:
        conn.close()


def consumer(run: Run, index: int, kind: str) -> None:
    rng = random.Random(run.seed * 1000 + index)
    name = f"consumer-{index}"
    stop = run.stop_movers if kind == "BLMOVE" else run.stop_poppers
    got: list[bytes] = []
    conn = None
    try:
        conn = Conn(run.port, name)
        while not stop.is_set():
            timeout = rng.choice(("0.02", "0.05", "0.1", "0.2"))
            if kind == "BLMOVE":
                argv = ("BLMOVE", rng.choice(QUEUES), STAGE, rng.choice(("LEFT", "RIGHT")),
                        rng.choice(("LEFT", "RIGHT")), timeout)
            else:
                keys = ALL_KEYS[:]
                rng.shuffle(keys)
                keys = keys[: rng.randint(1, len(keys))]
                if STAGE not in keys:
                    keys.append(STAGE)
                if kind == "BLMPOP":
                    argv = ("BLMPOP", timeout, len(keys), *keys, rng.choice(("LEFT", "RIGHT")),
                            "COUNT", rng.randint(1, 100))
                else:
                    argv = (kind, *keys, timeout)
            try:
                reply = conn.call(*argv)
            except Closed:
                # Killed: whatever it was sent before the close was read above. Carry on with
                # a new connection.
                with run.lock:
                    run.killed_seen += 1
                conn.close()
                conn = Conn(run.port, name)
                continue
            if reply is None:
                continue
            if kind == "BLMOVE":
                got.append(reply)
            elif kind == "BLMPOP":
                got.extend(reply[1])
            else:
                got.append(reply[1])
    except Exception as e:  # noqa: BLE001 - reported by the test
        run.fail(f"consumer {index} ({kind}): {e!r}")
    finally:
        if conn is not None:
            conn.close()
        with run.lock:
            (run.moved if kind == "BLMOVE" else run.consumed).extend(got)


def chaos(run: Run) -> None:
    rng = random.Random(run.seed)
    admin = Conn(run.port, "chaos")
    try:
        while not run.stop_chaos.is_set():
            listing = admin.call("CLIENT", "LIST").decode()
            blocked = [line.split(" ", 1)[0][3:] for line in listing.splitlines()
                       if " name=consumer-" in line and " flags=b " in line]
            if blocked:
                if admin.call("CLIENT", "KILL", "ID", rng.choice(blocked)) == 1:
                    run.kills += 1
            time.sleep(rng.uniform(0.001, 0.01))
    except Exception as e:  # noqa: BLE001
        run.fail(f"chaos: {e!r}")
    finally:
        admin.close()


def run_once(port: int, total: int, seed: int, with_chaos: bool) -> tuple[Run, float]:
    run = Run(port, total, seed)
    admin = Conn(port)
    kinds = ["BLPOP", "BRPOP", "BLMPOP", "BLMOVE"]
    consumers = []
    for i in range(CONSUMERS_PER_KIND * len(kinds)):
        kind = kinds[i % len(kinds)]
        t = threading.Thread(target=consumer, args=(run, i, kind), daemon=True)
        consumers.append((kind, t))
    producers = [threading.Thread(target=producer, args=(run, i), daemon=True)
                 for i in range(PRODUCERS)]
    chaos_thread = threading.Thread(target=chaos, args=(run,), daemon=True)
    start = time.monotonic()
    deadline = start + RUN_DEADLINE
    for _, t in consumers:
        t.start()
    for t in producers:
        t.start()
    if with_chaos:
        chaos_thread.start()
    try:
        for t in producers:
            t.join(max(0.0, deadline - time.monotonic()))
            assert not t.is_alive(), "producer did not finish"
        run.producers_done.set()
        # Drain in order: the queues first, then stop the forwarders, then the stage list.
        wait_for(lambda: all(admin.call("LLEN", k) == 0 for k in QUEUES) or run.errors,
                 timeout=max(1.0, deadline - time.monotonic()), interval=0.01,
                 message="queues never drained")
        run.stop_chaos.set()
        if with_chaos:
            chaos_thread.join(10)
        run.stop_movers.set()
        for kind, t in consumers:
            if kind == "BLMOVE":
                t.join(max(1.0, deadline - time.monotonic()))
                assert not t.is_alive(), "a BLMOVE consumer is stuck"
        wait_for(lambda: admin.call("LLEN", STAGE) == 0 or run.errors,
                 timeout=max(1.0, deadline - time.monotonic()), interval=0.01,
                 message="stage list never drained")
        run.stop_poppers.set()
        for kind, t in consumers:
            t.join(max(1.0, deadline - time.monotonic()))
            assert not t.is_alive(), f"a {kind} consumer is stuck"
        elapsed = time.monotonic() - start
        assert not run.errors, run.errors
        assert admin.call("EXISTS", *ALL_KEYS) == 0, "elements left behind"
        wait_for(lambda: admin.call("INFO", "clients").find(b"blocked_clients:0\r\n") >= 0,
                 message="a client is still blocked")
    finally:
        for ev in (run.producers_done, run.stop_chaos, run.stop_movers, run.stop_poppers):
            ev.set()
        admin.close()
    return run, elapsed


def check_accounting(run: Run) -> None:
    produced = {b"p%d-%d" % (p, i) for p in range(PRODUCERS) for i in range(run.total // PRODUCERS)}
    consumed = Counter(run.consumed)
    duplicates = [e for e, n in consumed.items() if n > 1]
    assert not duplicates, f"{len(duplicates)} elements consumed twice, e.g. {duplicates[:5]}"
    missing = produced - consumed.keys()
    assert not missing, f"{len(missing)} elements never consumed, e.g. {sorted(missing)[:5]}"
    extra = consumed.keys() - produced
    assert not extra, f"consumed elements nobody produced: {sorted(extra)[:5]}"
    # Every forwarded element reached the stage list and was consumed from there, once.
    moved = Counter(run.moved)
    assert all(n == 1 for n in moved.values()), "an element was forwarded twice"
    assert moved.keys() <= consumed.keys()


@pytest.fixture
def stress_server(server_factory):
    return server_factory()


def test_every_element_consumed_exactly_once(stress_server):
    run, elapsed = run_once(stress_server.port, TOTAL, seed=1, with_chaos=False)
    check_accounting(run)
    assert run.killed_seen == 0
    assert len(run.moved) > 0
    print(f"\n{TOTAL} elements, {PRODUCERS} producers, {CONSUMERS_PER_KIND * 4} consumers: "
          f"{elapsed:.1f}s ({len(run.moved)} forwarded by BLMOVE)")


def test_every_element_consumed_exactly_once_with_kills(stress_server):
    # Real Redis fails this one now and then: a client served in the same event-loop turn as
    # the CLIENT KILL that hits it loses the reply (and the element) with its connection;
    # vireo sends what a client was already given before closing it.
    admin = Conn(stress_server.port)
    if b"vireo_version" not in admin.call("INFO", "server"):
        admin.close()
        pytest.skip("redis-server drops the pending reply of a killed client")
    admin.close()
    run, elapsed = run_once(stress_server.port, TOTAL, seed=2, with_chaos=True)
    check_accounting(run)
    assert run.kills > 0, "the chaos client never killed a blocked consumer"
    print(f"\n{TOTAL} elements with {run.kills} consumers killed while blocked "
          f"({run.killed_seen} seen by consumers): {elapsed:.1f}s")

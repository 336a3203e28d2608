"""The issue's reliable-consumer scenario: consumers built only on XREADGROUP ... CLAIM (no
separate XAUTOCLAIM/XCLAIM loop) crash at random points, and still every produced entry is
processed at least once and, in the end, acknowledged (XPENDING count 0).

Two variants: threads whose consumer "crashes" (drops its connection and its name, leaving its
unacknowledged deliveries behind) at seeded random points, before or after processing an entry;
and real processes that SIGKILL themselves at seeded random points and are replaced.
"""

import os
import random
import signal
import subprocess
import sys
import threading
import time

from conftest import wait_for

MIN_IDLE_MS = 30


def read_claim(conn, name, count=10, block=100):
    return conn.execute_command("XREADGROUP", "GROUP", "g", name, "COUNT", str(count), "BLOCK",
                                str(block), "CLAIM", str(MIN_IDLE_MS), "STREAMS", "s", ">")


def all_done(r, total, processed_count):
    return processed_count() == total and int(r.execute_command("XPENDING", "s", "g")[0]) == 0


def test_reliable_consumers_threads(server, r):
    total = 600
    workers = 4
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    lock = threading.Lock()
    processed = {}  # id -> times processed
    crashes = [0]
    stop = threading.Event()
    produced = threading.Event()

    def producer():
        conn = server.client(decode_responses=True)
        rng = random.Random(1)
        sent = 0
        while sent < total:
            n = min(total - sent, rng.randint(1, 20))
            pipe = conn.pipeline(transaction=False)
            for k in range(n):
                pipe.execute_command("XADD", "s", "*", "n", str(sent + k))
            pipe.execute()
            sent += n
        produced.set()
        conn.close()

    def worker(index):
        rng = random.Random(100 + index)
        generation = 0
        conn = server.client(decode_responses=True)
        conn.response_callbacks.clear()
        while not stop.is_set():
            name = f"w{index}-{generation}"
            reply = read_claim(conn, name)
            if not reply:
                continue
            crashed = False
            for entry_id, _fields, _idle, _previous in reply[0][1]:
                roll = rng.random()
                if roll < 0.03:  # crash before processing this entry
                    crashed = True
                    break
                with lock:
                    processed[entry_id] = processed.get(entry_id, 0) + 1
                if roll < 0.06:  # crash after processing, before the acknowledgement
                    crashed = True
                    break
                conn.execute_command("XACK", "s", "g", entry_id)
            if crashed:
                # The consumer is gone for good: a new one (new name, new connection) replaces it.
                with lock:
                    crashes[0] += 1
                conn.close()
                conn = server.client(decode_responses=True)
                conn.response_callbacks.clear()
                generation += 1
        conn.close()

    threads = [threading.Thread(target=producer)]
    threads += [threading.Thread(target=worker, args=(i,)) for i in range(workers)]
    for t in threads:
        t.start()
    try:
        r.response_callbacks.pop("XPENDING", None)

        def count():
            with lock:
                return len(processed)

        wait_for(lambda: produced.is_set() and all_done(r, total, count), timeout=60,
                 interval=0.02, message="entries left unprocessed or unacknowledged")
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=30)
    assert len(processed) == total
    assert crashes[0] > 0
    # Some entries were processed twice: delivered again after a crash between the work and XACK.
    assert any(n > 1 for n in processed.values())
    assert r.xlen("s") == total


CONSUMER = r"""
import os, random, signal, sys
import redis
port, name, seed = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
c = redis.Redis(port=port, decode_responses=True)
c.response_callbacks.clear()
die_after = rng.randint(1, 40)  # entries handled before this process kills itself
handled = 0
while True:
    reply = c.execute_command("XREADGROUP", "GROUP", "g", name, "COUNT", "5", "BLOCK", "100",
                              "CLAIM", "%d", "STREAMS", "s", ">")
    if not reply:
        continue
    for entry_id, fields, idle, previous in reply[0][1]:
        handled += 1
        if handled == die_after and rng.random() < 0.5:
            os.kill(os.getpid(), signal.SIGKILL)   # before processing
        c.sadd("processed", entry_id)
        if handled == die_after:
            os.kill(os.getpid(), signal.SIGKILL)   # processed, not acknowledged
        c.xack("s", "g", entry_id)
""" % MIN_IDLE_MS


def test_reliable_consumers_killed_processes(server, r):
    total = 300
    workers = 3
    r.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    pipe = r.pipeline(transaction=False)
    for k in range(total):
        pipe.execute_command("XADD", "s", "*", "n", str(k))
    pipe.execute()
    r.response_callbacks.pop("XPENDING", None)
    procs = []
    spawned = [0]
    kills = [0]

    def spawn():
        seed = spawned[0]
        spawned[0] += 1
        return subprocess.Popen([sys.executable, "-c", CONSUMER, str(server.port),
                                 f"p{seed}", str(seed)])

    def step():
        # Replace every consumer that killed itself, then check whether the work is done.
        for i, p in enumerate(procs):
            if p.poll() is not None:
                assert p.returncode == -signal.SIGKILL, p.returncode
                kills[0] += 1
                procs[i] = spawn()
        return all_done(r, total, lambda: r.scard("processed"))

    try:
        procs.extend(spawn() for _ in range(workers))
        wait_for(step, timeout=90, interval=0.02,
                 message="entries left unprocessed or unacknowledged")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()
    assert kills[0] > 0
    assert r.scard("processed") == total
    assert int(r.execute_command("XPENDING", "s", "g")[0]) == 0

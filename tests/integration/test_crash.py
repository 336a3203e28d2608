"""Crash safety of the AOF: writers send 50 000 writes and note each one the server
acknowledged; the server is killed with SIGKILL at a random moment and restarted from its AOF.

appendfsync always: every acknowledged write must be there. everysec: at most the writes
acknowledged in the last second before the kill may be missing (a killed process loses no page
cache, so in practice none are; a power loss could lose that second).
"""

from __future__ import annotations

import os
import random
import threading
import time

import pytest
import redis

from conftest import start_server

SANITIZED = os.environ.get("VIREO_SANITIZED") == "1"
TOTAL_WRITES = 50000
WRITERS = 8
BATCH = 25


def run_and_kill(data, fsync: str, seed: int):
    """Returns (acks, kill_time): acks[key] = (value, time acknowledged)."""
    h = start_server(["--dir", str(data), "--appendonly", "yes", "--appendfsync", fsync])
    acks: dict[str, tuple[bytes, float]] = {}
    lock = threading.Lock()
    per_writer = TOTAL_WRITES // WRITERS
    rng = random.Random(seed)

    def writer(n: int):
        c = h.client(socket_timeout=10)
        i = 0
        try:
            while i < per_writer:
                pipe = c.pipeline(transaction=False)
                batch = []
                for _ in range(min(BATCH, per_writer - i)):
                    key, value = f"w{n}:{i}", f"v{i}:{n}"
                    # Alternate plain writes with ones whose logged form differs.
                    if i % 3 == 0:
                        pipe.set(key, value)
                    elif i % 3 == 1:
                        pipe.set(key, value, ex=3600)
                    else:
                        pipe.execute_command("MSET", key, value, f"{key}:b", "b")
                    batch.append((key, value.encode()))
                    i += 1
                pipe.execute()
                now = time.monotonic()
                with lock:
                    for key, value in batch:
                        acks[key] = (value, now)
        except (redis.ConnectionError, redis.TimeoutError, ConnectionError, OSError):
            pass  # the kill

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    start = time.monotonic()
    for t in threads:
        t.start()
    # A random moment while the writes are flowing.
    while len(acks) < 500 and time.monotonic() - start < 20:
        time.sleep(0.005)
    time.sleep(rng.uniform(0.05, 1.5))
    kill_time = time.monotonic()
    h.proc.kill()
    h.proc.wait()
    for t in threads:
        t.join(20)
    h.cleanup()
    return acks, kill_time


def check_after_restart(data, acks, kill_time, tolerance_s: float):
    h = start_server(["--dir", str(data), "--appendonly", "yes"])
    try:
        c = h.client()
        keys = list(acks)
        missing_early = []
        missing = 0
        for start in range(0, len(keys), 1000):
            chunk = keys[start:start + 1000]
            for key, got in zip(chunk, c.mget(chunk)):
                value, acked_at = acks[key]
                if got == value:
                    continue
                assert got is None, f"{key} holds {got!r}, wrote {value!r}"
                missing += 1
                if acked_at < kill_time - tolerance_s:
                    missing_early.append(key)
        assert not missing_early, f"{len(missing_early)} acknowledged writes lost: {missing_early[:5]}"
        # TTLs written as SET EX survive as absolute times.
        ex_keys = [k for k in keys if int(k.split(":")[1]) % 3 == 1][:50]
        for k in ex_keys:
            if c.exists(k):
                assert 3500 < c.ttl(k) <= 3600
        return missing
    finally:
        h.stop()
        h.cleanup()


@pytest.mark.load
@pytest.mark.skipif(SANITIZED, reason="load test")
@pytest.mark.parametrize("seed", [1, 2])
def test_sigkill_with_appendfsync_always_loses_nothing(tmp_path, seed):
    data = tmp_path / "data"
    data.mkdir()
    acks, kill_time = run_and_kill(data, "always", seed)
    assert len(acks) >= 500
    missing = check_after_restart(data, acks, kill_time, tolerance_s=0.0)
    assert missing == 0
    print(f"\nalways: {len(acks)} acknowledged writes before SIGKILL, all present")


@pytest.mark.load
@pytest.mark.skipif(SANITIZED, reason="load test")
def test_sigkill_with_appendfsync_everysec_loses_at_most_a_second(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    acks, kill_time = run_and_kill(data, "everysec", 3)
    assert len(acks) >= 500
    missing = check_after_restart(data, acks, kill_time, tolerance_s=1.0)
    print(f"\neverysec: {len(acks)} acknowledged writes before SIGKILL, {missing} missing")


def test_sigkill_small(tmp_path):
    """The same check, small enough for sanitizer builds."""
    data = tmp_path / "data"
    data.mkdir()
    h = start_server(["--dir", str(data), "--appendonly", "yes", "--appendfsync", "always"])
    c = h.client()
    for i in range(200):
        c.set(f"k{i}", i)
        c.rpush("list", i)
    h.proc.kill()
    h.proc.wait()
    h.cleanup()
    h2 = start_server(["--dir", str(data), "--appendonly", "yes"])
    try:
        c2 = h2.client()
        assert c2.mget([f"k{i}" for i in range(200)]) == [str(i).encode() for i in range(200)]
        assert c2.llen("list") == 200
    finally:
        h2.stop()
        h2.cleanup()

"""The Lua work-pool suite: 4 workers and 20 000 tasks, nothing lost, nothing duplicated,
ordered partitions processed in order; and the scripts' replies compared with redis-server."""
import random
import shutil
import subprocess
import tempfile
import sys
import threading
import time
from pathlib import Path

import pytest
import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workpool import WorkPool  # noqa: E402

from conftest import free_port, wait_for  # noqa: E402

N_TASKS = 20000
N_PARTITIONS = 40
N_WORKERS = 4


def make_tasks(n, seed=7, delayed_every=0):
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        # Two thirds ordered (partitioned), the rest free; a few priorities.
        part = f"p{rng.randrange(N_PARTITIONS)}" if i % 3 else ""
        prio = rng.choice((0, 0, 0, 1, 5))
        delay = 150 if delayed_every and i % delayed_every == 0 else 0
        tasks.append((f"t{i}", f"payload-{i}", part, prio, delay))
    return tasks


def test_work_pool_4_workers_20000_tasks(server):
    admin = server.client()
    admin.flushall()
    pool = WorkPool(admin, prefix="wp", visibility_ms=60000, heartbeat_s=1)
    tasks = make_tasks(N_TASKS, delayed_every=97)
    order_of = {t[0]: i for i, t in enumerate(tasks)}
    part_of = {t[0]: t[2] for t in tasks}
    for i in range(0, N_TASKS, 100):
        assert pool.publish(tasks[i:i + 100]) == len(tasks[i:i + 100])
    # Publishing again is a no-op (idempotent ids).
    assert pool.publish(tasks[:100]) == 0

    lock = threading.Lock()
    acked: list[str] = []
    per_partition: dict[str, list[int]] = {}
    deliveries: dict[str, int] = {}
    errors: list[BaseException] = []

    # A consumer that takes a batch and dies without acking or heartbeating.
    ghost = WorkPool(server.client(), prefix="wp", visibility_ms=60000, heartbeat_s=1)
    ghost_batch = ghost.get("ghost", 20)
    assert len(ghost_batch) > 0

    def worker(name, prefetch):
        try:
            wp = WorkPool(server.client(), prefix="wp", visibility_ms=60000, heartbeat_s=5)
            rng = random.Random(name)
            idle_since = None
            while True:
                batch = wp.get(name, prefetch)
                if not batch:
                    stats = wp.stats()
                    if stats[4] == N_TASKS:
                        return
                    wp.reclaim()
                    idle_since = idle_since or time.monotonic()
                    if time.monotonic() - idle_since > 30:
                        raise AssertionError(f"stuck: {stats}")
                    time.sleep(0.01)
                    continue
                idle_since = None
                for task_id, payload, attempts in batch:
                    task_id = task_id.decode()
                    with lock:
                        deliveries[task_id] = deliveries.get(task_id, 0) + 1
                    assert payload == f"payload-{task_id[1:]}".encode()
                    if attempts == 1 and rng.random() < 0.02:
                        assert wp.reject(name, task_id, True) == 1
                        continue
                    with lock:
                        n = wp.ack(name, task_id)
                        assert n == 1, (task_id, n)
                        acked.append(task_id)
                        part = part_of[task_id]
                        if part:
                            per_partition.setdefault(part, []).append(order_of[task_id])
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(f"w{i}", (1, 5, 10, 3)[i]))
               for i in range(N_WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors[0]
    assert not any(t.is_alive() for t in threads)
    # Nothing lost, nothing acknowledged twice.
    assert len(acked) == N_TASKS
    assert len(set(acked)) == N_TASKS
    # The ghost's tasks were reclaimed and processed by others; its late ack counts for nothing.
    assert ghost.ack("ghost", ghost_batch[0][0]) == 0
    # Ordered partitions were processed in publish order (delayed tasks join when due).
    for part, seen in per_partition.items():
        delayed = {order_of[t[0]] for t in tasks if t[2] == part and t[4] > 0}
        plain = [i for i in seen if i not in delayed]
        assert plain == sorted(plain), part
    assert pool.stats() == [0, 0, 0, 0, N_TASKS]


@pytest.fixture(scope="module")
def reference_redis():
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    port = free_port()
    # In an empty directory: a dump.rdb where the tests run (vireo's, maybe with types Redis
    # can't load) must not stop the reference server from starting.
    workdir = tempfile.TemporaryDirectory(prefix="ref-redis-")
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, cwd=workdir.name)
    client = redis.Redis(port=port)

    def up():
        try:
            return client.ping()
        except redis.ConnectionError:
            return False

    wait_for(up, timeout=10)
    yield client
    proc.terminate()
    proc.wait()
    workdir.cleanup()


def scenario(client):
    """A deterministic sequence of script calls; returns every reply."""
    client.flushall()
    pool = WorkPool(client, prefix="q{1}", visibility_ms=60000, heartbeat_s=100)
    out = [pool.publish(make_tasks(60, seed=3))]
    out.append(pool.publish(make_tasks(5, seed=3)))
    out.append(pool.get("c1", 5))
    out.append(pool.get("c2", 10))
    first = [t[0] for t in out[2]]
    out.append(pool.ack("c1", *first[:3]))
    out.append(pool.reject("c1", first[3], True))
    out.append(pool.reject("c1", first[4], False))
    out.append(pool.get("c1", 7))
    out.append(pool.ack("c2", *[t[0] for t in out[3]]))
    out.append(pool.heartbeat("c3", 100))
    out.append(pool.get("c3", 4))
    client.delete("q{1}:hb:c3")
    out.append(pool.reclaim())
    out.append(pool.get("c4", 50))
    out.append(pool.stats())
    # Wrong uses: errors must match too.
    for bad in (("publish", "x"), ("ack",), ("get", "c9", "notanumber", 1, 1)):
        try:
            out.append(client.evalsha(pool.sha[bad[0]], 1, "q{1}", *bad[1:]))
        except redis.ResponseError as e:
            out.append(("error", str(e)))
    return out


def test_replies_match_redis(server, reference_redis):
    ours = scenario(server.client())
    theirs = scenario(reference_redis)
    assert ours == theirs

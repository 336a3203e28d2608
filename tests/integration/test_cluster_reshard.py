"""`redis-cli --cluster reshard` (a few hundred slots between two masters) and `--cluster
rebalance --cluster-use-empty-masters` (after `--cluster add-node` of an empty master) while a
writer thread keeps adding unique keys through RedisCluster: afterwards every key written is
readable, the masters hold each exactly once (DBSIZE sums to the number written), the replicas
caught up, and `redis-cli --cluster check` is clean.

Runs against $VIREO_CLUSTER_NODE_BINARY (e.g. redis-server) or vireo; see cluster_helpers."""

from __future__ import annotations

import itertools
import threading
import time

import pytest
import redis

from cluster_helpers import (get_all, info_dict, keys_in_slots, module_cluster, needs_redis,  # noqa: F401
                             parse_nodes_self, redis_cli, set_all, six_nodes, slot_map, sum_dbsize, wait_for)

pytestmark = needs_redis


@pytest.fixture(scope="module")
def cl(six_nodes):  # noqa: F811
    return six_nodes


class Writer(threading.Thread):
    """Writes unique keys through RedisCluster until stopped; every other key goes into `hot`
    slots (the ones being moved). A write that fails is retried with the same key and value,
    so `written` is exactly the set of keys that must exist at the end."""

    def __init__(self, cl, hot_keys, prefix):
        super().__init__(daemon=True)
        self.rc = cl.cluster_client()
        self.hot = iter(hot_keys)
        self.prefix = prefix
        self.written: list[str] = []
        self.retries = 0
        self.stop_event = threading.Event()
        self.error: BaseException | None = None

    def run(self):
        try:
            for i in itertools.count():
                if self.stop_event.is_set():
                    return
                key = next(self.hot, None) if i % 2 else None
                key = key or f"{self.prefix}:cold:{i}"
                self._set(key)
                self.written.append(key)
                # Pacing, not synchronisation: it leaves the 2 cores to the nodes and redis-cli
                # and bounds how many keys the end-of-test verification has to read.
                time.sleep(0.001)
        except BaseException as exc:  # reported by the test, not lost in the thread
            self.error = exc

    def _set(self, key):
        for attempt in range(100):
            try:
                assert self.rc.set(key, key)
                return
            except (redis.exceptions.TryAgainError, redis.exceptions.ClusterDownError,
                    redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
                    redis.exceptions.ClusterError):
                # A refused write is retried after a short pause; it must land exactly once.
                self.retries += 1
                time.sleep(0.01)
        raise AssertionError(f"SET {key} kept failing")

    def finish(self, min_writes=200):
        wait_for(lambda: len(self.written) >= min_writes or self.error, timeout=30,
                 message="the writer made no progress")
        self.stop_event.set()
        self.join(30)
        assert not self.is_alive()
        if self.error:
            raise self.error
        print(f"writer {self.prefix}: {len(self.written)} keys, {self.retries} retried writes")
        return self.written


def verify(cl, base, expected_keys):
    """Every key readable with its value, each stored once, replicas caught up, check clean."""
    cl.wait_agree(timeout=30)
    cl.wait_ok()
    assert get_all(cl.cluster_client(), expected_keys) == expected_keys
    masters = cl.masters()
    assert sum_dbsize(masters) - base == len(expected_keys)
    for m in masters:
        for r in cl.replicas_of(m):
            wait_for(lambda: int(r.call("DBSIZE")) == int(m.call("DBSIZE")), timeout=20,
                     message=f"replica {r!r} never caught up with {m!r}")
    out = cl.check()
    assert "[OK] All nodes agree about slots configuration." in out
    assert "[WARNING]" not in out and "[ERR]" not in out, out


def test_reshard_under_writes(cl):
    masters = cl.masters()
    src, dst = masters[0], masters[1]
    src_slots = sorted(parse_nodes_self(src)["slots"])
    moving = src_slots[:300]  # redis-cli takes a source's slots from the lowest
    base = sum_dbsize(masters)
    preload = keys_in_slots(moving, 3000, prefix="pre")
    set_all(cl.cluster_client(), preload)

    writer = Writer(cl, keys_in_slots(moving, 20000, prefix="hot")[3000:], "rs")
    writer.start()
    wait_for(lambda: len(writer.written) >= 100 or writer.error, timeout=20)
    redis_cli("--cluster", "reshard", src.addr, "--cluster-from", src.myid(), "--cluster-to", dst.myid(),
              "--cluster-slots", len(moving), "--cluster-yes", timeout=120)
    written = writer.finish()

    owners = slot_map(src)
    assert all(owners[s] == dst.myid() for s in moving)
    assert int(src.call("CLUSTER", "COUNTKEYSINSLOT", moving[0])) == 0
    verify(cl, base, preload + written)


def test_add_node_and_rebalance_under_writes(cl):
    masters = cl.masters()
    base = sum_dbsize(masters)
    newcomer = cl.start_node()
    redis_cli("--cluster", "add-node", newcomer.addr, masters[0].addr)
    cl.wait_agree(timeout=30)
    # A node that just joined reports cluster_state:fail for a moment (the rejoin delay) and
    # its RESTORE-ASKING answers CLUSTERDOWN meanwhile: rebalance would fail, as with Redis.
    cl.wait_ok([newcomer])
    assert parse_nodes_self(newcomer)["slots"] == set()

    # The writer's hot keys are spread over every slot: rebalance moves slots from all masters.
    writer = Writer(cl, [], "rb")
    writer.start()
    wait_for(lambda: len(writer.written) >= 100 or writer.error, timeout=20)
    redis_cli("--cluster", "rebalance", masters[0].addr, "--cluster-use-empty-masters",
              "--cluster-pipeline", 50, timeout=120)
    written = writer.finish()

    counts = sorted(len(parse_nodes_self(m)["slots"]) for m in cl.masters())
    assert len(counts) == 4 and counts[0] >= 4000 and counts[-1] <= 4200, counts
    assert int(info_dict(newcomer.call("CLUSTER", "INFO"))["cluster_known_nodes"]) == 7
    verify(cl, base, written)


def test_fix_finishes_an_interrupted_migration(cl):
    """A reshard killed half-way leaves a slot MIGRATING on one node and IMPORTING on the other,
    with its keys split between them; `redis-cli --cluster fix` gathers them on one node and
    closes the slot. (redis-cli 7.0 picks the node holding most of the keys, here the source:
    "Case 2: Moving all the slot keys to its owner".)"""
    masters = cl.masters()
    base = sum_dbsize(masters)
    src, dst = masters[0], masters[2]
    slot = max(parse_nodes_self(src)["slots"])
    already = int(src.call("CLUSTER", "COUNTKEYSINSLOT", slot))  # the writers' keys
    keys = keys_in_slots([slot], 100, prefix="fix")
    set_all(cl.cluster_client(), keys)
    dst.call("CLUSTER", "SETSLOT", slot, "IMPORTING", src.myid())
    src.call("CLUSTER", "SETSLOT", slot, "MIGRATING", dst.myid())
    src.call("MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", *keys[:40])
    out = redis_cli("--cluster", "check", src.addr, check=False).stdout
    assert f"The following slots are open: {slot}" in out, out

    redis_cli("--cluster", "fix", src.addr)
    assert int(src.call("CLUSTER", "COUNTKEYSINSLOT", slot)) == already + 100
    assert int(dst.call("CLUSTER", "COUNTKEYSINSLOT", slot)) == 0
    for n in cl.live():
        wait_for(lambda: slot_map(n)[slot] == src.myid(), timeout=20,
                 message=f"{n!r} does not see the slot back with its owner")
    verify(cl, base, keys)

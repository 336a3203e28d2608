"""DEBUG HTSTATS / HTSTATS-KEY report the real hash tables, and the tables resize as Redis 7.2's
dict does where that shows: not while a fork child shares the pages, not past maxmemory, and
shrinking below 10 % fill (src/types/hash_table.h, src/util/table_resize.h)."""

import os
import re
import signal

import pytest
import redis
from conftest import wait_for
from test_children import child_pid


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def htstats(r, *args):
    return text(r.execute_command("DEBUG", "HTSTATS", *args))


def htstats_key(r, key, *args):
    return text(r.execute_command("DEBUG", "HTSTATS-KEY", key, *args))


def test_htstats_shape(r):
    r.flushall()
    assert htstats(r, 0) == (
        "[Dictionary HT]\nHash table 0 stats (main hash table):\n"
        "No stats available for empty dictionaries\n"
        "[Expires HT]\nHash table 0 stats (main hash table):\n"
        "No stats available for empty dictionaries\n")
    r.execute_command("DEBUG", "POPULATE", 100)
    r.expire("key:1", 100)
    assert htstats(r, 0) == (
        "[Dictionary HT]\nHash table 0 stats (main hash table):\n"
        " table size: 128\n number of elements: 100\n"
        "[Expires HT]\nHash table 0 stats (main hash table):\n"
        " table size: 4\n number of elements: 1\n")
    full = htstats(r, 0, "full")
    keyspace = full.split("[Expires HT]")[0]
    m = re.search(r" table size: 128\n number of elements: 100\n different slots: (\d+)\n"
                  r" max chain length: (\d+)\n avg chain length \(counted\): (\d+\.\d\d)\n"
                  r" avg chain length \(computed\): (\d+\.\d\d)\n Chain length distribution:\n"
                  r"((?:   \d+: \d+ \(\d+\.\d\d%\)\n)+)$", keyspace)
    assert m, keyspace
    slots = int(m.group(1))
    assert m.group(3) == m.group(4) == f"{100 / slots:.2f}"
    dist = [tuple(map(int, re.match(r"   (\d+): (\d+)", line).groups()))
            for line in m.group(5).splitlines()]
    assert sum(n for _, n in dist) == 128
    assert sum(length * n for length, n in dist) == 100
    assert max(length for length, _ in dist) == int(m.group(2))


def test_htstats_key_shows_the_rehashing_target(r):
    r.flushall()
    r.sadd("s", *[f"m:{i}" for i in range(1000)])
    stats = htstats_key(r, "s")
    assert stats == ("Hash table 0 stats (main hash table):\n"
                     " table size: 1024\n number of elements: 1000\n")
    # Below 10 % fill a set starts shrinking to the smallest power of two holding the rest.
    r.srem("s", *[f"m:{i}" for i in range(1000 - 102)])
    stats = htstats_key(r, "s")
    assert "Hash table 1 stats (rehashing target):" in stats, stats
    assert re.search(r"Hash table 1 stats \(rehashing target\):\n table size: 128\n", stats) or \
        "Hash table 1 stats (rehashing target):\nNo stats available" in stats, stats
    assert "different slots" not in stats
    assert "different slots" in htstats_key(r, "s", "full")
    while "rehashing target" in htstats_key(r, "s"):
        r.srandmember("s")
    assert htstats_key(r, "s") == ("Hash table 0 stats (main hash table):\n"
                                   " table size: 128\n number of elements: 102\n")


@pytest.fixture
def delayed_save(server_factory):
    srv = server_factory()
    r = redis.Redis(host=srv.host, port=srv.port)
    r.config_set("rdb-key-save-delay", 1000000)
    yield srv, r
    r.config_set("rdb-key-save-delay", 0)


def kill_child(srv, r):
    os.kill(child_pid(srv), signal.SIGKILL)
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0, 10)


def test_no_grow_while_a_child_exists(delayed_save):
    srv, r = delayed_save
    r.select(9)
    r.execute_command("DEBUG", "POPULATE", 4096, "", 1)
    r.bgsave()
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 1, 5)
    r.mset({"k1": "v1", "k2": "v2"})
    assert "table size: 8192" not in htstats(r, 9)
    kill_child(srv, r)
    r.set("k3", "v3")
    assert "table size: 8192" in htstats(r, 9)


def test_no_shrink_while_a_child_exists(delayed_save):
    srv, r = delayed_save
    r.sadd("s", *[f"m:{i}" for i in range(1000)])
    r.bgsave()
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 1, 5)
    r.srem("s", *[f"m:{i}" for i in range(990)])
    assert htstats_key(r, "s") == ("Hash table 0 stats (main hash table):\n"
                                   " table size: 1024\n number of elements: 10\n")
    kill_child(srv, r)
    r.srem("s", "m:990")
    assert "Hash table 1 stats (rehashing target)" in htstats_key(r, "s")


def test_keyspace_shrinks_from_the_cron(r):
    r.flushall()
    r.execute_command("DEBUG", "POPULATE", 1000)
    r.delete(*[f"key:{i}" for i in range(990)])
    # Deleting doesn't shrink the keyspace; the cron does, then rehashes it.
    wait_for(lambda: htstats(r, 0).startswith(
        "[Dictionary HT]\nHash table 0 stats (main hash table):\n table size: 16\n"), 5)


def test_no_grow_past_maxmemory(server_factory):
    srv = server_factory()
    r = redis.Redis(host=srv.host, port=srv.port)
    # Latency tracking allocates a histogram per command on its first call: keep it out of the
    # 10 KiB margin, as Redis's test does.
    r.config_set("latency-tracking", "no")
    r.config_set("maxmemory-policy", "allkeys-random")
    r.execute_command("DEBUG", "POPULATE", 4096, "", 1)
    r.info("memory")  # INFO's own first-call allocations
    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory", used + 10 * 1024)
    r.set("k1", "v1")
    r.set("k2", "v2")
    # A grow to 8192 buckets (64 KiB) would have pushed used memory over the limit and made the
    # next write evict.
    assert r.dbsize() == 4098
    assert " table size: 4096\n" in htstats(r, 0)
    r.config_set("maxmemory", 0)
    r.set("k3", "v3")
    assert "table size: 8192" in htstats(r, 0)

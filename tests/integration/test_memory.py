"""MEMORY USAGE / STATS / DOCTOR / MALLOC-STATS / PURGE / HELP."""

import pytest
import redis


def test_usage_every_type(r):
    r.set("s", "v")
    r.set("long", "x" * 1000)
    r.rpush("l", *range(100))
    r.hset("h", mapping={f"f{i}": i for i in range(50)})
    r.sadd("set", *range(50))
    r.zadd("z", {f"m{i}": i for i in range(50)})
    r.xadd("x", {"f": "v"})
    r.set("ttl", "v", ex=100)
    sizes = {k: r.memory_usage(k) for k in ("s", "long", "l", "h", "set", "z", "x", "ttl")}
    assert all(isinstance(v, int) and v > 0 for v in sizes.values()), sizes
    assert sizes["long"] > sizes["s"] + 900
    assert sizes["ttl"] >= sizes["s"]
    assert r.memory_usage("l", samples=0) == sizes["l"]
    assert r.memory_usage("missing") is None


@pytest.mark.parametrize("args,error", [
    (("k", "SAMPLES", "-1"), "syntax error"),
    (("k", "SAMPLES", "x"), "value is not an integer or out of range"),
    (("k", "FOO", "1"), "syntax error"),
    (("k", "SAMPLES"), "syntax error"),
    ((), "wrong number of arguments for 'memory|usage' command"),
])
def test_usage_errors(r, args, error):
    r.set("k", "v")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("MEMORY", "USAGE", *args)
    assert str(e.value) == error


def test_usage_does_not_count_as_a_keyspace_hit(r):
    r.set("k", "v")
    before = r.info("stats")["keyspace_hits"]
    r.memory_usage("k")
    r.memory_usage("missing")
    stats = r.info("stats")
    assert stats["keyspace_hits"] == before


def test_stats_doctor_purge_help(r):
    r.set("k", "v")
    stats = r.memory_stats()
    for field in ("peak.allocated", "total.allocated", "keys.count", "dataset.bytes",
                  "fragmentation", "db.0"):
        assert field in stats, field
    assert stats["keys.count"] == 1
    assert stats["db.0"]["overhead.hashtable.main"] > 0
    assert r.execute_command("MEMORY", "DOCTOR")
    assert r.execute_command("MEMORY", "MALLOC-STATS")
    assert r.memory_purge()
    help_lines = r.execute_command("MEMORY", "HELP")
    assert help_lines[0].startswith(b"MEMORY <subcommand>")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("MEMORY", "NOPE")
    assert str(e.value) == "unknown subcommand 'NOPE'. Try MEMORY HELP."


def test_first_reply_does_not_move_used_memory(server):
    # A client holds its 16 KB reply buffer from the start, as Redis allocates it with the
    # client: the first reply that needs room (here INFO's ~6 KB) doesn't grow used_memory
    # afterwards. unit/maxmemory's "Don't rehash if used memory exceeds maxmemory after rehash"
    # sets maxmemory 10 KB above what its first INFO says and expects no eviction.
    warm = server.client()
    warm.config_set("latency-tracking", "no")  # a histogram per command on its first call
    warm.info()  # the server's own first-INFO work
    fresh = server.client()
    try:
        first = fresh.info()["used_memory"]
        assert fresh.info()["used_memory"] - first < 1024
        assert fresh.info()["used_memory"] - first < 1024
    finally:
        fresh.close()
        warm.config_set("latency-tracking", "yes")
        warm.close()

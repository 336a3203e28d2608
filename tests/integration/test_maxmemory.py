"""maxmemory: used-memory accounting, every eviction policy, OOM replies, eviction inside
MULTI and scripts, evicted-key notifications and propagation, lowering the limit under load.

Modelled on Redis's tests/unit/maxmemory.tcl; limits are set relative to the used memory the
server reports when a test starts, so the tests don't depend on the allocator's baseline.
"""

from __future__ import annotations

import os
import threading
import time

import pytest
import redis

from conftest import wait_for

OOM = "OOM command not allowed when used memory > 'maxmemory'."
SANITIZED = bool(os.environ.get("VIREO_SANITIZED"))


@pytest.fixture
def mm(server):
    """A client on an empty keyspace; memory settings are back to defaults afterwards."""
    client = server.client(decode_responses=True)
    client.flushall()
    # A previous test's lazy frees may still be on the background thread: let them finish, so
    # they don't count in this test's lazyfreed_objects.
    wait_for(lambda: int(client.info("memory")["lazyfree_pending_objects"]) == 0)
    client.config_resetstat()
    yield client
    client.config_set("maxmemory", 0)
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory-eviction-tenacity", 10)
    client.config_set("lazyfree-lazy-eviction", "no")
    client.config_set("notify-keyspace-events", "")
    client.flushall()
    client.close()


def used(r) -> int:
    return int(r.info("memory")["used_memory"])


def limit_above_usage(r, extra: int) -> int:
    """Sets maxmemory to the current usage plus `extra` bytes and returns it."""
    limit = used(r) + extra
    r.config_set("maxmemory", limit)
    return limit


def fill(r, prefix: str, count: int, size: int = 100, ttl: int | None = None, batch: int = 500):
    """SETs `count` keys of `size` bytes, pipelined; returns the replies (OOM errors included)."""
    replies = []
    value = "x" * size
    for start in range(0, count, batch):
        p = r.pipeline(transaction=False)
        for i in range(start, min(count, start + batch)):
            if ttl is None:
                p.set(f"{prefix}:{i}", value)
            else:
                p.set(f"{prefix}:{i}", value, ex=ttl)
        replies.extend(p.execute(raise_on_error=False))
    return replies


def evicted(r) -> int:
    return int(r.info("stats")["evicted_keys"])


# --------------------------------------------------------------------------------------------
# Accounting


def test_used_memory_follows_the_dataset(mm):
    before = used(mm)
    fill(mm, "k", 20000, size=100)
    grown = used(mm) - before
    # 20000 keys of 100 bytes: at least the values themselves, and not wildly more.
    assert 20000 * 100 < grown < 20000 * 400
    mm.flushall()
    assert used(mm) < before + 20000 * 50


def test_memory_info_fields(mm):
    info = mm.info("memory")
    for field in ("used_memory", "maxmemory", "maxmemory_policy", "mem_not_counted_for_evict",
                  "mem_aof_buffer", "lazyfree_pending_objects", "lazyfreed_objects"):
        assert field in info
    stats = mm.info("stats")
    for field in ("evicted_keys", "evicted_clients", "total_eviction_exceeded_time",
                  "current_eviction_exceeded_time"):
        assert field in stats


# --------------------------------------------------------------------------------------------
# Configuration errors


def test_maxmemory_config_values(mm):
    assert mm.config_set("maxmemory", "100mb")
    assert mm.config_get("maxmemory") == {"maxmemory": str(100 * 1024 * 1024)}
    assert mm.config_set("maxmemory", "1gb")
    assert mm.config_get("maxmemory") == {"maxmemory": str(1024 ** 3)}
    for bad in ("abc", "10xb", "-1", "1.5mb"):
        with pytest.raises(redis.ResponseError, match="CONFIG SET failed"):
            mm.config_set("maxmemory", bad)
    with pytest.raises(redis.ResponseError, match="argument\\(s\\) must be one of the following"):
        mm.config_set("maxmemory-policy", "allkeys-lur")
    with pytest.raises(redis.ResponseError, match="must be between 0 and 100"):
        mm.config_set("maxmemory-eviction-tenacity", 101)
    for name in ("lfu-log-factor", "lfu-decay-time"):
        with pytest.raises(redis.ResponseError):
            mm.config_set(name, -1)
    for name, value in (("maxmemory-eviction-tenacity", "10"), ("lfu-log-factor", "10"),
                        ("lfu-decay-time", "1"), ("lazyfree-lazy-eviction", "no"),
                        ("lazyfree-lazy-expire", "no"), ("lazyfree-lazy-server-del", "no"),
                        ("replica-lazy-flush", "no")):
        assert mm.config_get(name) == {name: value}


# --------------------------------------------------------------------------------------------
# Policies


def test_noeviction_refuses_deny_oom_commands(mm):
    limit_above_usage(mm, 1_000_000)
    replies = fill(mm, "k", 30000, size=100)
    errors = [r for r in replies if isinstance(r, redis.ResponseError)]
    assert errors and str(errors[0]) == OOM
    assert evicted(mm) == 0
    # Reads and deletions still work; deny-oom commands of every kind are refused.
    assert mm.get("k:0") == "x" * 100
    for args in (("LPUSH", "l", "a"), ("SADD", "s", "a"), ("HSET", "h", "f", "v"),
                 ("APPEND", "k:0", "y"), ("SETRANGE", "k:0", 0, "y")):
        with pytest.raises(redis.ResponseError, match="^" + OOM.replace(".", "\\.")):
            mm.execute_command(*args)
    assert mm.delete("k:0", "k:1") == 2
    mm.config_set("maxmemory", 0)
    assert mm.set("k:0", "again")


@pytest.mark.parametrize("policy", ["allkeys-lru", "allkeys-lfu", "allkeys-random"])
def test_allkeys_policies_stay_under_the_limit(mm, policy):
    mm.config_set("maxmemory-policy", policy)
    limit = limit_above_usage(mm, 2_000_000)
    replies = fill(mm, "k", 60000, size=100)
    assert not any(isinstance(r, redis.ResponseError) for r in replies)
    assert evicted(mm) > 0
    assert mm.dbsize() < 60000
    # Within the limit after every write (plus what one write may add).
    assert used(mm) <= limit + 100_000


@pytest.mark.parametrize("policy", ["volatile-lru", "volatile-lfu", "volatile-random",
                                    "volatile-ttl"])
def test_volatile_policies_never_evict_persistent_keys(mm, policy):
    mm.config_set("maxmemory-policy", policy)
    fill(mm, "persistent", 2000, size=100)
    limit_above_usage(mm, 1_500_000)
    replies = fill(mm, "volatile", 30000, size=100, ttl=10000)
    assert evicted(mm) > 0
    for i in range(0, 2000, 97):
        assert mm.exists(f"persistent:{i}") == 1
    assert not any(isinstance(r, redis.ResponseError) for r in replies[:5000])
    # Once only persistent keys remain, writes fail with OOM.
    mm.config_set("maxmemory", used(mm) - 200_000)
    replies = fill(mm, "more", 40000, size=100)
    assert any(isinstance(r, redis.ResponseError) and str(r) == OOM for r in replies)
    assert mm.info("keyspace")["db0"]["expires"] == 0
    for i in range(0, 2000, 97):
        assert mm.exists(f"persistent:{i}") == 1


def test_volatile_ttl_evicts_nearest_expiry_first(mm):
    mm.config_set("maxmemory-policy", "volatile-ttl")
    # Ten bands of keys, band b expiring after (b + 1) * 1000 seconds.
    for band in range(10):
        fill(mm, f"band{band}", 1000, size=100, ttl=(band + 1) * 1000)
    mm.config_set("maxmemory", used(mm) - 1_000_000)
    mm.set("trigger", "x")
    survivors = [sum(mm.exists(f"band{b}:{i}") for i in range(0, 1000, 10)) for b in range(10)]
    # The nearest bands went first: the first band lost most, the last band kept nearly all.
    assert survivors[0] < survivors[-1]
    assert survivors[-1] >= 95
    assert sum(survivors[:3]) < sum(survivors[-3:])


def test_lru_evicts_idle_keys_first(mm):
    mm.config_set("maxmemory-policy", "allkeys-lru")
    mm.config_set("maxmemory-samples", 10)
    fill(mm, "old", 5000, size=100)
    # The LRU clock has one-second resolution: let time pass between old and recent accesses.
    time.sleep(1.1)
    hot = [f"old:{i}" for i in range(0, 5000, 5)]
    for start in range(0, len(hot), 500):
        mm.mget(hot[start:start + 500])
    limit_above_usage(mm, 0)
    fill(mm, "new", 2500, size=100)
    assert evicted(mm) > 1000
    hot_left = sum(mm.exists(k) for k in hot)
    cold = [f"old:{i}" for i in range(5000) if i % 5 != 0]
    cold_left = sum(mm.exists(k) for k in cold[::4])
    # Sampled LRU: the recently read keys survive far better than the idle ones.
    assert hot_left / len(hot) > 0.9
    assert cold_left / len(cold[::4]) < 0.5


def test_lfu_keeps_frequently_used_keys(mm):
    mm.config_set("maxmemory-policy", "allkeys-lfu")
    mm.config_set("maxmemory-samples", 10)
    fill(mm, "k", 5000, size=100)
    hot = [f"k:{i}" for i in range(0, 5000, 10)]
    for _ in range(20):
        for start in range(0, len(hot), 500):
            mm.mget(hot[start:start + 500])
    assert int(mm.object("freq", hot[0])) > 5
    limit_above_usage(mm, 0)
    fill(mm, "new", 2500, size=100)
    assert evicted(mm) > 1000
    assert sum(mm.exists(k) for k in hot) / len(hot) > 0.95


def test_single_value_larger_than_maxmemory(mm):
    mm.config_set("maxmemory-policy", "allkeys-lru")
    limit_above_usage(mm, 500_000)
    fill(mm, "k", 1000, size=100)
    # Either accepted (memory was under the limit when the check ran) or refused after
    # everything evictable went: the 2 MB argument itself counts as used memory once it has
    # arrived, so which one happens depends on when the read completes. Then everything that
    # can go goes, including the big value itself; the next write is refused only if nothing
    # is left.
    try:
        assert mm.set("big", "x" * 2_000_000)
    except redis.ResponseError as e:
        assert str(e) == OOM
    assert mm.ping()
    reply = None
    try:
        reply = mm.set("after", "y")
    except redis.ResponseError as e:
        assert str(e) == OOM
    assert reply in (True, None)
    # Eviction may continue between loop turns (tenacity's time slices) before it reaches it.
    wait_for(lambda: mm.exists("big") == 0, timeout=10)
    assert mm.ping()


# --------------------------------------------------------------------------------------------
# MULTI/EXEC and scripts


def over_limit_noeviction(r):
    fill(r, "k", 2000, size=100)
    r.config_set("maxmemory", used(r) - 100_000)


def test_multi_refuses_queueing_when_out_of_memory(mm):
    over_limit_noeviction(mm)
    p = mm.pipeline(transaction=True)
    p.get("k:1")
    p.set("x", "y")
    with pytest.raises(redis.ResponseError):
        p.execute()
    # MULTI itself and DISCARD are allowed.
    raw = mm.connection_pool.get_connection("_")
    try:
        raw.send_command("MULTI")
        assert raw.read_response() == "OK"
        raw.send_command("GET", "k:1")
        with pytest.raises(redis.ResponseError, match="^OOM"):
            raw.read_response()
        raw.send_command("EXEC")
        with pytest.raises(redis.exceptions.ExecAbortError, match="previous errors"):
            raw.read_response()
    finally:
        mm.connection_pool.release(raw)


def test_exec_with_queued_deny_oom_command_is_refused(mm):
    raw = mm.connection_pool.get_connection("_")
    try:
        raw.send_command("MULTI")
        assert raw.read_response() == "OK"
        raw.send_command("SET", "x", "y")
        assert raw.read_response() == "QUEUED"
        over_limit_noeviction(mm)
        raw.send_command("EXEC")
        with pytest.raises(redis.exceptions.ExecAbortError, match="because of: OOM command not allowed"):
            raw.read_response()
    finally:
        mm.connection_pool.release(raw)
    assert mm.get("x") is None


def test_scripts_and_oom(mm):
    over_limit_noeviction(mm)
    # Without a shebang: the first deny-oom command fails...
    with pytest.raises(redis.ResponseError, match="^OOM"):
        mm.eval("return redis.call('set', 'x', 'y')", 0)
    # ...but reads are fine, and pcall sees the error as a value.
    assert mm.eval("return redis.call('get', 'k:1')", 0) == "x" * 100
    assert "OOM" in mm.eval(
        "local r = redis.pcall('set', 'x', 'y'); return r['err']", 0)
    # With flags: a script that may write is refused before it runs; allow-oom and no-writes run.
    with pytest.raises(redis.ResponseError, match="^OOM"):
        mm.eval("#!lua\nreturn redis.call('get', 'k:1')", 0)
    assert mm.eval("#!lua flags=allow-oom\nreturn redis.call('set', 'x', 'y')", 0) == "OK"
    assert mm.eval("#!lua flags=no-writes\nreturn redis.call('get', 'x')", 0) == "y"


def test_script_that_already_wrote_may_continue(mm):
    mm.config_set("maxmemory-policy", "noeviction")
    limit_above_usage(mm, 300_000)
    # The script starts under the limit, so every write inside it is allowed even once it
    # pushes memory over.
    n = mm.eval("for i = 1, 5000 do redis.call('set', 'k' .. i, string.rep('x', 100)) end "
                "return redis.call('dbsize')", 0)
    assert n == 5000
    with pytest.raises(redis.ResponseError, match="^OOM"):
        mm.set("after", "x")


# --------------------------------------------------------------------------------------------
# Notifications, propagation, lazy freeing


def test_evicted_keys_fire_notifications(mm, server):
    mm.config_set("notify-keyspace-events", "Ee")
    sub = server.client(decode_responses=True).pubsub()
    sub.subscribe("__keyevent@0__:evicted")
    wait_for(lambda: sub.get_message(timeout=0.1) is not None)
    mm.config_set("maxmemory-policy", "allkeys-random")
    limit_above_usage(mm, 500_000)
    fill(mm, "k", 10000, size=100)
    n = evicted(mm)
    assert n > 0
    got = set()

    def drain():
        while (m := sub.get_message(timeout=0.05)) is not None:
            got.add(m["data"])
        return len(got) >= n

    wait_for(drain, timeout=10)
    assert all(k.startswith("k:") for k in got)
    sub.close()


def test_evictions_reach_the_aof_as_deletions(server_factory, tmp_path):
    srv = server_factory(["--appendonly", "yes", "--appendfsync", "always",
                          "--maxmemory-policy", "allkeys-lru"])
    r = srv.client(decode_responses=True)
    limit_above_usage(r, 500_000)
    fill(r, "k", 8000, size=100)
    assert evicted(r) > 0
    # No more evictions from here on (the KEYS reply below would count as used memory).
    r.config_set("maxmemory", 0)
    before = r.dbsize()
    keys = set(r.keys("*"))
    # A restart replays the log, deletions included: the same keys come back.
    srv.stop()
    restarted = server_factory(["--appendonly", "yes", "--dir", str(srv.workdir)])
    r2 = restarted.client(decode_responses=True)
    assert r2.dbsize() == before
    assert set(r2.keys("*")) == keys


def test_lazyfree_lazy_eviction(mm):
    mm.config_set("maxmemory-policy", "allkeys-lru")
    mm.config_set("lazyfree-lazy-eviction", "yes")
    for i in range(20):
        mm.sadd(f"set:{i}", *range(1000))
    limit_above_usage(mm, 0)
    fill(mm, "k", 5000, size=100)
    assert evicted(mm) > 0
    wait_for(lambda: int(mm.info("memory")["lazyfreed_objects"]) > 0, timeout=10)


def test_lazyfree_counts_unlink(mm):
    mm.sadd("big", *range(10000))
    mm.sadd("small", 1, 2, 3)
    mm.unlink("big", "small")
    wait_for(lambda: int(mm.info("memory")["lazyfree_pending_objects"]) == 0)
    # Only the big set was worth handing to the background thread.
    assert int(mm.info("memory")["lazyfreed_objects"]) == 1
    mm.config_resetstat()
    assert int(mm.info("memory")["lazyfreed_objects"]) == 0


# --------------------------------------------------------------------------------------------
# Lowering the limit under load


@pytest.mark.load
@pytest.mark.skipif(SANITIZED, reason="latency bound only meaningful in the release build")
def test_lowering_maxmemory_evicts_without_stalling(mm, server):
    mm.config_set("maxmemory-policy", "allkeys-random")
    p = mm.pipeline(transaction=False)
    for i in range(300000):
        p.set(f"k:{i}", "x" * 50)
        if i % 5000 == 4999:
            p.execute()
    p.execute()
    stop = threading.Event()
    worst = [0.0]

    def pinger():
        c = server.client()
        while not stop.is_set():
            t = time.perf_counter()
            c.ping()
            worst[0] = max(worst[0], time.perf_counter() - t)
        c.close()

    t = threading.Thread(target=pinger)
    t.start()
    try:
        mm.config_set("maxmemory", used(mm) // 3)
        wait_for(lambda: mm.dbsize() < 150000, timeout=20)
    finally:
        stop.set()
        t.join()
    assert evicted(mm) > 100000
    assert worst[0] < 0.05, f"PING took {worst[0] * 1000:.1f} ms while evicting"


def test_tenacity_zero_still_converges(mm):
    mm.config_set("maxmemory-policy", "allkeys-lru")
    mm.config_set("maxmemory-eviction-tenacity", 0)
    fill(mm, "k", 20000, size=100)
    limit = used(mm) - 1_000_000
    mm.config_set("maxmemory", limit)
    # Eviction proceeds between loop turns, 16 keys a slice, until memory is under the limit
    # (INFO's own reply, being built when it reads the figure, is the slack).
    wait_for(lambda: used(mm) <= limit + 64 * 1024, timeout=10)
    # Once under the limit, the over-the-limit stretch has ended and joined the total.
    wait_for(lambda: int(mm.info("stats")["current_eviction_exceeded_time"]) == 0, timeout=10)
    assert evicted(mm) > 0


def test_info_does_not_build_the_script_interpreter(server_factory):
    # Redis measures used_memory, sets maxmemory a little above it and fills up to it: the
    # first INFO must not build the Lua interpreter (over 100 KB counted from then on) and
    # push memory past a limit taken from before it.
    r = server_factory().client()
    first = r.info("memory")
    assert first["used_memory_lua"] == 0 and first["number_of_cached_scripts"] == 0
    settled = used(r)
    assert used(r) == settled
    assert r.info("memory")["used_memory_lua"] == 0
    r.eval("return 1", 0)
    assert r.info("memory")["used_memory_lua"] > 0


def test_replica_output_buffer_is_not_counted_for_eviction(server_factory):
    # A stalled replica's output buffer grows with every write, but Redis leaves all the memory
    # it holds (room reserved for more included) out of what is compared with maxmemory: the
    # writes neither evict nor fail while the dataset stays the same size.
    import signal
    master_srv = server_factory(["--save", "", "--appendonly", "no"])
    replica_srv = server_factory(["--save", "", "--appendonly", "no"])
    master, replica = master_srv.client(), replica_srv.client()
    for j in range(20):
        master.setrange(f"key:{j}", 100000, "asdf")
    master.config_set("client-output-buffer-limit", "replica 100000000 100000000 300")
    master.config_set("maxmemory-policy", "allkeys-random")
    # A small backlog, as Redis's test: the backlog is counted (only what replicas hold beyond
    # it is not), and a 1 MB one filling up would look like growth here.
    master.config_set("repl-backlog-size", 10 * 1024)
    replica.replicaof("127.0.0.1", master_srv.port)
    wait_for(lambda: replica.info("replication")["master_link_status"] == "up", timeout=10)

    def counted(m):
        return m["used_memory"] - m["mem_not_counted_for_evict"] - m["mem_clients_normal"]

    # As Redis's test: no per-command latency histograms appearing on first use meanwhile.
    master.config_set("latency-tracking", "no")
    master.info("memory")
    before = counted(master.info("memory"))
    master.config_set("maxmemory", before + 64 * 1024)
    os.kill(replica_srv.proc.pid, signal.SIGSTOP)
    try:
        # Small batches: a long pipeline would fill the query buffer, which does count. ~14 MB
        # of stream in all: well past the 1 MB backlog and what the stalled replica's socket
        # takes in, so its buffer holds megabytes whatever the kernel's socket sizes.
        for _ in range(500):
            pipe = master.pipeline(transaction=False)
            for _ in range(200):
                pipe.setrange("key:0", 0, "A" * 100)
            pipe.execute()
        m = master.info("memory")
        assert m["mem_clients_slaves"] > 2 * 1024 * 1024
        assert abs(counted(m) - before) < 64 * 1024
        assert master.dbsize() == 20 and evicted(master) == 0
    finally:
        os.kill(replica_srv.proc.pid, signal.SIGCONT)


def _client_field(r, name, field):
    for line in r.execute_command("CLIENT", "LIST").decode().splitlines():
        if f" name={name} " in line:
            return int(line.split(f" {field}=")[1].split()[0])
    raise AssertionError(f"client {name} not listed")


def test_reply_buffer_shrinks_when_idle_and_grows_with_big_replies(server_factory):
    # Redis's reply buffer (CLIENT LIST rbs): 16 KB at first, down to 1 KB for an idle client,
    # doubled back up to 16 KB while replies fill it (DEBUG REPLYBUFFER drives the peak reset).
    srv = server_factory()
    r = srv.client()
    r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "100")
    tc = srv.client()
    tc.client_setname("tc")
    wait_for(lambda: 1024 <= _client_field(r, "tc", "rbs") < 2048, timeout=5)
    r.set("bigval", "x" * 32768)
    r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "NEVER")

    def grown():
        tc.get("bigval")
        return 16384 <= _client_field(r, "tc", "rbs") < 32768

    wait_for(grown, timeout=5)
    r.execute_command("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "RESET")


def test_tracking_invalidations_do_not_drain_the_keyspace(server_factory):
    # Evicting a key sends an invalidation to every client caching it; once written, the output
    # memory they took is released (as Redis frees its reply blocks), so eviction stops near
    # the limit instead of feeding on its own invalidations until no key is left.
    import socket
    srv = server_factory()
    r = srv.client()
    r.config_set("latency-tracking", "no")
    r.config_set("maxmemory-policy", "allkeys-lru")
    r.config_set("maxmemory-eviction-tenacity", 100)
    socks = []
    for _ in range(10):
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.settimeout(5)
        for cmd in (b"HELLO 3\r\n", b"CLIENT TRACKING on\r\n"):
            s.sendall(cmd)
            s.recv(65536)
        socks.append(s)
    for j in range(300):
        key = f"{j}" + "x" * 1000
        r.set(key, "x")
        for s in socks:
            s.sendall(b"*2\r\n$3\r\nget\r\n$%d\r\n%s\r\n" % (len(key), key.encode()))
            data = b""
            while not data.endswith(b"\r\n"):
                data += s.recv(65536)
    # The cron trims what the GETs' replies left in the query and reply buffers.
    wait_for(lambda: all(v <= 2048 for v in _client_field_by_flag(r, "t", "rbs")), timeout=5)
    r.config_set("maxmemory", used(r) - 40000)
    assert 200 <= r.dbsize() <= 300
    assert 10 <= evicted(r) <= 50
    for s in socks:
        s.close()


def _client_field_by_flag(r, flag, field):
    out = []
    for line in r.execute_command("CLIENT", "LIST").decode().splitlines():
        if f" flags={flag} " in line:
            out.append(int(line.split(f" {field}=")[1].split()[0]))
    return out

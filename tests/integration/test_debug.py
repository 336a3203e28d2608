"""DEBUG subcommands the Redis test suite uses (src/commands/debug.cc)."""

import os
import re
import time

import pytest
import redis
from conftest import wait_for

ZERO_DIGEST = "0" * 40


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def digest(r):
    return text(r.execute_command("DEBUG", "DIGEST"))


def fill(r, order):
    """The same logical dataset, written in a given order (and so with other layouts)."""
    members = [f"m{i}" for i in range(200)]
    if order:
        members.reverse()
    r.set("s", "v")
    r.set("n", 12345)
    for m in members:
        r.sadd("set", m)
        r.hset("hash", m, m.upper())
        r.zadd("zset", {m: len(m)})
    r.rpush("list", *range(10))
    r.sadd("small", "a", "b", "c")
    r.hset("smallhash", mapping={"f1": "1", "f2": "2"} if not order else {"f2": "2", "f1": "1"})
    r.xadd("stream", {"a": "1"}, id="1-1")
    r.pexpireat("s", 4102444800000)


def test_digest_empty_is_zero(r):
    assert digest(r) == ZERO_DIGEST


def test_digest_depends_only_on_content(server_factory):
    a = server_factory().client(decode_responses=True)
    b = server_factory().client(decode_responses=True)
    fill(a, False)
    fill(b, True)
    da = digest(a)
    assert len(da) == 40 and da != ZERO_DIGEST
    assert da == digest(b)
    # Encodings differ (listpack vs hashtable after conversion) but content decides.
    a.delete("small")
    a.sadd("small", "c", "b", "a", *[f"x{i}" for i in range(300)])
    a.srem("small", *[f"x{i}" for i in range(300)])
    assert a.object("encoding", "small") != b.object("encoding", "small")
    assert digest(a) == digest(b)
    # Any change shows: a value, a TTL, a key in another database.
    a.set("s", "w")
    assert digest(a) != da
    a.set("s", "v", pxat=4102444800000)
    assert digest(a) == da
    a.persist("s")
    assert digest(a) != da


def test_digest_survives_reload(r):
    fill(r, False)
    before = digest(r)
    assert r.execute_command("DEBUG", "RELOAD") in (b"OK", "OK")
    assert digest(r) == before


def test_digest_value(r):
    r.rpush("a", 1, 2, 3)
    r.copy("a", "b")
    r.rpush("c", 3, 2, 1)
    da, db, dc, missing = r.execute_command("DEBUG", "DIGEST-VALUE", "a", "b", "c", "nokey")
    assert da == db != dc
    assert text(missing) == ZERO_DIGEST
    assert r.execute_command("DEBUG", "DIGEST-VALUE") == []


def test_reload_options(r):
    r.set("k", "saved")
    r.save()
    r.set("k", "memory")
    r.set("only-in-memory", "1")
    # NOSAVE loads the file as it is; by default memory is emptied first.
    assert r.execute_command("DEBUG", "RELOAD", "NOSAVE") == b"OK"
    assert r.get("k") == b"saved" and not r.exists("only-in-memory")
    r.set("k", "memory")
    r.set("only-in-memory", "1")
    # NOFLUSH without MERGE: a key in both is an error.
    with pytest.raises(redis.ResponseError, match="Error trying to load the RDB dump"):
        r.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH")
    r.set("k", "memory")
    r.set("only-in-memory", "1")
    assert r.execute_command("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE") == b"OK"
    assert r.get("k") == b"saved" and r.get("only-in-memory") == b"1"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("DEBUG", "RELOAD", "bogus")
    assert str(e.value) == "DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."


def test_loadaof(server_factory):
    srv = server_factory(["--appendonly", "yes"])
    r = srv.client()
    r.set("a", "1")
    r.rpush("l", "x", "y")
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert r.get("a") == b"1" and r.lrange("l", 0, -1) == [b"x", b"y"]
    # The replay is not logged again: one more load gives the same data.
    assert r.execute_command("DEBUG", "LOADAOF") == b"OK"
    assert r.lrange("l", 0, -1) == [b"x", b"y"]


def test_populate(r):
    r.set("key:1", "mine")
    assert r.execute_command("DEBUG", "POPULATE", 3) == b"OK"
    assert r.mget("key:0", "key:1", "key:2") == [b"value:0", b"mine", b"value:2"]
    assert r.execute_command("DEBUG", "POPULATE", 2, "p", 10) == b"OK"
    assert r.get("p:1") == b"value:1\x00\x00\x00"
    assert r.execute_command("DEBUG", "POPULATE", 1, "q", 3) == b"OK"
    assert r.get("q:0") == b"val"
    with pytest.raises(redis.ResponseError):
        r.execute_command("DEBUG", "POPULATE", -1)


def test_populate_is_neither_replicated_nor_counted_as_changes(server_factory):
    # Redis's sentinel suite fills a master with DEBUG POPULATE and expects its replicas to stay
    # empty (a full sync to them after a failover is then quick).
    master = server_factory()
    replica = server_factory(["--replicaof", "127.0.0.1", str(master.port)])
    m, rep = master.client(), replica.client()
    wait_for(lambda: rep.info("replication")["master_link_status"] == "up", timeout=20)
    changes = m.info("persistence")["rdb_changes_since_last_save"]
    assert m.execute_command("DEBUG", "POPULATE", 100) == b"OK"
    assert m.info("persistence")["rdb_changes_since_last_save"] == changes
    m.set("marker", "1")
    wait_for(lambda: rep.get("marker") == b"1", timeout=20)
    assert m.dbsize() == 101
    assert rep.dbsize() == 1


def test_structure_and_settings(r):
    r.rpush("l", "a")
    r.set("s", "x")
    assert r.execute_command("DEBUG", "LISTPACK", "l") == b"Listpack structure printed on stdout"
    with pytest.raises(redis.ResponseError, match="^Not a listpack encoded object.$"):
        r.execute_command("DEBUG", "LISTPACK", "s")
    with pytest.raises(redis.ResponseError, match="^Not a quicklist encoded object.$"):
        r.execute_command("DEBUG", "QUICKLIST", "l")
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.execute_command("DEBUG", "LISTPACK", "missing")
    assert r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100mb") == b"OK"
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb")
    assert str(e.value) == "argument must be a memory value bigger than 1 and smaller than 4gb"
    for args in (("SET-SKIP-CHECKSUM-VALIDATION", 1), ("AOF-FLUSH-SLEEP", 0),
                 ("PAUSE-CRON", 0), ("REPLYBUFFER", "PEAK-RESET-TIME", "never"),
                 ("REPLYBUFFER", "PEAK-RESET-TIME", "reset"), ("REPLYBUFFER", "RESIZING", 1),
                 ("CHANGE-REPL-ID",)):
        assert r.execute_command("DEBUG", *args) == b"OK", args
    with pytest.raises(redis.ResponseError, match="unknown subcommand"):
        r.execute_command("DEBUG", "REPLYBUFFER", "bogus", 1)
    assert r.execute_command("DEBUG", "STRINGMATCH-TEST") == (
        b"Apparently Redis did not crash: test passed")
    assert b"[Dictionary HT]" in r.execute_command("DEBUG", "HTSTATS", 0)
    with pytest.raises(redis.ResponseError, match="Out of range database"):
        r.execute_command("DEBUG", "HTSTATS", 99)
    with pytest.raises(redis.ResponseError, match="unknown subcommand"):
        r.execute_command("DEBUG", "NO-SUCH-THING")
    help_lines = r.execute_command("DEBUG", "HELP")
    assert help_lines[0].startswith(b"DEBUG <subcommand>")
    assert b"DIGEST-VALUE <key> [<key> ...]" in help_lines


def test_change_repl_id(r):
    before = r.info("replication")["master_replid"]
    r.execute_command("DEBUG", "CHANGE-REPL-ID")
    assert r.info("replication")["master_replid"] != before


def test_disable_deny_scripts(r):
    script = "return redis.call('debug', 'sleep', '0')"
    with pytest.raises(redis.ResponseError, match="not allowed from script"):
        r.eval(script, 0)
    r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 1)
    try:
        assert r.eval(script, 0) == b"OK"
    finally:
        r.execute_command("DEBUG", "SET-DISABLE-DENY-SCRIPTS", 0)


def test_rdb_key_save_delay_is_hidden_and_kills_with_flushall(r):
    assert r.config_get("rdb-key-save-delay") == {"rdb-key-save-delay": "0"}
    # Hidden: globs don't list it.
    assert "rdb-key-save-delay" not in r.config_get("*")
    r.set("k", "v")
    r.config_set("rdb-key-save-delay", 10000000)
    r.bgsave()
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 1
    r.config_set("rdb-key-save-delay", 0)
    r.flushall()
    from conftest import wait_for
    wait_for(lambda: r.info("persistence")["rdb_bgsave_in_progress"] == 0)


# ---------------------------------------------------------------------------------------------
# The rest of Redis 7.2.6's DEBUG HELP (issue 15).


def test_help_lists_the_added_subcommands(r):
    help_text = "\n".join(text(line) for line in r.execute_command("DEBUG", "HELP"))
    for sub in ("SEGFAULT", "PANIC", "ASSERT", "OOM", "RESTART", "CRASH-AND-RECOVER", "LEAK",
                "REPLICATE", "SDSLEN", "HTSTATS-KEY", "CLIENT-EVICTION"):
        assert f"\n{sub}" in help_text, sub
    # The jemalloc controls exist only where jemalloc is linked (not in the sanitizer build),
    # as in Redis; test_allocator.py covers them.
    if r.info("memory")["mem_allocator"].startswith("jemalloc"):
        assert "\nMALLCTL <key> [<val>]\n" in help_text
        assert "\nMALLCTL-STR <key> [<val>]\n" in help_text
    else:
        assert "MALLCTL" not in help_text
        with pytest.raises(redis.ResponseError, match="unknown subcommand"):
            r.execute_command("DEBUG", "MALLCTL", "opt.narenas")


def test_htstats_key(r):
    r.hset("small", "f", "v")
    with pytest.raises(redis.ResponseError, match="not represented using an hash table"):
        r.execute_command("DEBUG", "HTSTATS-KEY", "small")
    r.hset("big", mapping={f"f{i}": "v" for i in range(600)})
    stats = text(r.execute_command("DEBUG", "HTSTATS-KEY", "big"))
    # 600 fields: grown to 1024 buckets, maybe still moving nodes there from the 512 ones.
    assert "table size: 1024" in stats
    assert sum(int(n) for n in re.findall(r"number of elements: (\d+)", stats)) == 600
    r.zadd("z", {f"m{i}": i for i in range(200)})
    assert "number of elements: 200" in text(r.execute_command("DEBUG", "HTSTATS-KEY", "z"))
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.execute_command("DEBUG", "HTSTATS-KEY", "missing")


def test_sdslen(r):
    r.set("s", "hello world")
    reply = text(r.execute_command("DEBUG", "SDSLEN", "s"))
    assert reply.startswith("key_sds_len:1, key_sds_avail:0") and "val_sds_len:11" in reply
    r.set("n", 42)
    with pytest.raises(redis.ResponseError, match="Not an sds encoded string"):
        r.execute_command("DEBUG", "SDSLEN", "n")


def test_leak_and_client_eviction(r):
    assert r.execute_command("DEBUG", "LEAK", "x") in (b"OK", "OK", True)
    with pytest.raises(redis.ResponseError, match="maxmemory-clients is disabled"):
        r.execute_command("DEBUG", "CLIENT-EVICTION")
    r.config_set("maxmemory-clients", "100mb")
    try:
        buckets = text(r.execute_command("DEBUG", "CLIENT-EVICTION")).splitlines()
        assert len(buckets) == 19
        assert buckets[0].startswith("bucket          0 -      32767: tot-mem:")
        assert sum(int(line.rsplit(" ", 1)[1]) for line in buckets) >= 1
    finally:
        r.config_set("maxmemory-clients", "0")


def test_replicate_reaches_replicas_only(server_factory):
    master = server_factory(["--appendonly", "yes"])
    replica = server_factory()
    rc = replica.client()
    rc.execute_command("REPLICAOF", "127.0.0.1", master.port)
    m = master.client(decode_responses=True)
    m.set("k", "1")
    # As in Redis, what is fed while no replica is attached goes nowhere: wait for the link.
    deadline = time.monotonic() + 10
    while m.info("replication").get("slave0", {}).get("state") != "online":
        assert time.monotonic() < deadline, m.info("replication")
        time.sleep(0.01)
    assert m.execute_command("DEBUG", "REPLICATE", "SET", "k", "diverged") in ("OK", True)
    m.set("after", "1")
    m.execute_command("WAIT", 1, 5000)
    assert rc.get("k") == b"diverged"
    assert m.get("k") == "1"
    aof = "".join(p.read_text(errors="replace") for p in (master.workdir / "appendonlydir").glob("*.incr.aof"))
    assert "diverged" not in aof


@pytest.mark.parametrize("sub,status", [("SEGFAULT", -11), ("PANIC", -6), ("ASSERT", -6),
                                        ("OOM", -6)])
def test_crashes_on_purpose(server_factory, sub, status):
    h = server_factory()
    h.expect_exit = True
    with pytest.raises(redis.ConnectionError):
        h.client().execute_command("DEBUG", sub)
    if sub == "SEGFAULT" and os.environ.get("VIREO_SANITIZED") == "1":
        # A real fault: the sanitizer's own SEGV handler reports it and exits with status 1.
        status = 1
    assert h.proc.wait(10) == status
    if sub != "SEGFAULT":
        assert {"PANIC": "Guru Meditation", "ASSERT": "ASSERTION FAILED",
                "OOM": "Out Of Memory"}[sub] in h.log_text()


def test_panic_exits_under_use_exit_on_panic(server_factory):
    h = server_factory(["--use-exit-on-panic", "yes"])
    h.expect_exit = True
    with pytest.raises(redis.ConnectionError):
        h.client().execute_command("DEBUG", "PANIC")
    assert h.proc.wait(10) == 1


def wait_ping(h):
    """A client on `h` once the (re-executed) server answers PING again."""
    deadline = time.monotonic() + 10
    while True:
        c = h.client(socket_timeout=5, decode_responses=True)
        try:
            c.ping()
            return c
        except redis.ConnectionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_restart_keeps_data_and_crash_and_recover_does_not_save(server_factory):
    # The process image is replaced but the pid stays, so the fixture stops it as usual.
    h = server_factory(["--save", "3600 1"], config_text="maxmemory 2mb\n")
    c = h.client(decode_responses=True)
    c.set("kept", "1")
    c.config_set("maxmemory", "3mb")
    with pytest.raises(redis.ConnectionError):
        c.execute_command("DEBUG", "RESTART")
    c2 = wait_ping(h)
    assert c2.get("kept") == "1"
    # RESTART rewrote the config file first.
    assert c2.config_get("maxmemory")["maxmemory"] == str(3 * 1024 * 1024)
    c2.set("lost", "1")
    with pytest.raises(redis.ConnectionError):
        c2.execute_command("DEBUG", "CRASH-AND-RECOVER")
    c3 = wait_ping(h)
    assert c3.get("kept") == "1" and c3.get("lost") is None

"""Generic keyspace commands: DEL, UNLINK, EXISTS, TYPE, RENAME, RENAMENX, COPY, MOVE, TOUCH,
KEYS, SCAN, RANDOMKEY, OBJECT, DBSIZE, FLUSHDB, FLUSHALL, SWAPDB."""

import time

import pytest
import redis

from conftest import wait_for


def watcher(server, db=0):
    """A client on one connection, so WATCH and the later EXEC share a session."""
    return server.client(db=db, single_connection_client=True)


def watch_then_exec(c):
    """Runs MULTI PING EXEC on a client that WATCHed something: None if the watch fired."""
    c.execute_command("MULTI")
    c.execute_command("PING")
    return c.execute_command("EXEC")


def err(r, *args) -> str:
    with pytest.raises(redis.ResponseError) as info:
        r.execute_command(*args)
    return str(info.value)


def need(r, *probe):
    """Skip when a command from another family isn't available yet."""
    try:
        r.execute_command(*probe)
    except redis.ResponseError as e:
        if "unknown command" in str(e):
            pytest.skip(f"{probe[0]} not implemented")


# --------------------------------------------------------------------------
# DEL, UNLINK, EXISTS, TOUCH, TYPE


@pytest.mark.parametrize("cmd", ["DEL", "UNLINK"])
def test_delete_counts_only_existing_keys(r, cmd):
    r.mset({"a": 1, "b": 2, "c": 3})
    assert r.execute_command(cmd, "a", "missing", "b", "a") == 2
    assert r.exists("a", "b") == 0
    assert r.get("c") == b"3"
    assert r.execute_command(cmd, "nothing") == 0


@pytest.mark.parametrize("cmd", ["DEL", "UNLINK", "EXISTS", "TOUCH"])
def test_multi_key_arity(r, cmd):
    assert err(r, cmd) == f"wrong number of arguments for '{cmd.lower()}' command"


def test_unlink_large_value(r):
    need(r, "RPUSH", "probe", "x")
    r.rpush("big", *range(10000))
    assert r.unlink("big", "probe") == 2
    assert r.exists("big") == 0
    r.rpush("big", 1)
    assert r.lrange("big", 0, -1) == [b"1"]


def test_unlink_reclaims_memory_in_background(server):
    # Redis 7.2's unit/lazyfree "UNLINK can reclaim memory in background", on one connection as
    # there: the set goes to the background, and what its 100000-argument SADD needed (the
    # parser's argument slots) is given back when the next command starts.
    c = server.client(single_connection_client=True)
    orig = c.info("memory")["used_memory"]
    c.sadd("myset", *range(100000))
    assert c.scard("myset") == 100000
    peak = c.info("memory")["used_memory"]
    assert peak > orig + 1_000_000
    assert c.unlink("myset") == 1
    wait_for(lambda: c.info("memory")["used_memory"] < min(peak, orig * 2), timeout=10,
             message="memory not reclaimed by UNLINK")
    wait_for(lambda: c.info("memory")["lazyfree_pending_objects"] == 0)
    c.close()


def test_exists_and_touch_count_duplicates(r):
    r.set("a", 1)
    assert r.exists("a", "a", "missing", "a") == 3
    assert r.touch("a", "a", "missing") == 2
    assert r.exists("missing") == 0


def test_type(r):
    r.set("s", "x")
    assert r.type("s") == b"string"
    assert r.type("missing") == b"none"
    assert r.execute_command("TYPE", "s") == b"string"
    assert err(r, "TYPE") == "wrong number of arguments for 'type' command"
    assert err(r, "TYPE", "a", "b") == "wrong number of arguments for 'type' command"


def test_type_wire_format_is_simple_string(server, r):
    r.set("s", "x")
    raw = server.raw()
    assert raw.execute("TYPE", "s") == b"+string\r\n"
    assert raw.execute("TYPE", "nope") == b"+none\r\n"


def test_type_of_collections(r):
    need(r, "RPUSH", "l", "x")
    assert r.type("l") == b"list"
    need(r, "HSET", "h", "f", "v")
    assert r.type("h") == b"hash"
    need(r, "SADD", "st", "m")
    assert r.type("st") == b"set"
    need(r, "ZADD", "z", 1, "m")
    assert r.type("z") == b"zset"


def test_keyspace_hits_and_misses(r):
    try:
        before = r.info("stats")
    except redis.ResponseError:
        pytest.skip("INFO not implemented")
    if "keyspace_hits" not in before:
        pytest.skip("INFO has no keyspace stats")
    r.set("k", 1)
    r.exists("k", "nope")
    r.type("k")
    after = r.info("stats")
    assert after["keyspace_hits"] - before["keyspace_hits"] == 2
    assert after["keyspace_misses"] - before["keyspace_misses"] == 1


# --------------------------------------------------------------------------
# RENAME, RENAMENX


def test_rename_basic_and_overwrite(r):
    r.set("a", "va")
    r.set("b", "vb", ex=100)
    assert r.rename("a", "b") is True
    assert r.get("a") is None
    assert r.get("b") == b"va"
    # The destination's old TTL goes away with its old value.
    assert r.ttl("b") == -1


def test_rename_moves_ttl(r):
    r.set("a", "v", px=100000)
    r.rename("a", "b")
    assert 99000 < r.pttl("b") <= 100000
    assert r.pttl("a") == -2


def test_rename_errors_and_same_key(r):
    assert err(r, "RENAME", "missing", "x") == "no such key"
    assert err(r, "RENAMENX", "missing", "x") == "no such key"
    assert err(r, "RENAME", "missing", "missing") == "no such key"
    r.set("a", "v", ex=100)
    assert r.rename("a", "a") is True
    assert r.get("a") == b"v"
    assert r.ttl("a") > 0
    assert r.renamenx("a", "a") is False
    assert err(r, "RENAME", "a") == "wrong number of arguments for 'rename' command"


def test_renamenx(r):
    r.set("a", "1")
    r.set("b", "2")
    assert r.renamenx("a", "b") is False
    assert r.get("a") == b"1" and r.get("b") == b"2"
    assert r.renamenx("a", "c") is True
    assert r.get("c") == b"1" and r.exists("a") == 0


def test_rename_invalidates_watch_on_both_keys(server, r):
    r.set("src", "1")
    for watched in ("src", "dst"):
        r.set("src", "1")
        c = watcher(server)
        c.execute_command("WATCH", watched)
        r.rename("src", "dst")
        assert watch_then_exec(c) is None
        c.close()


def test_rename_collection_keeps_value(r):
    need(r, "RPUSH", "l", "a", "b")
    r.rename("l", "l2")
    assert r.lrange("l2", 0, -1) == [b"a", b"b"]


# --------------------------------------------------------------------------
# COPY, MOVE


def test_copy_basic(r):
    r.set("a", "v", px=50000)
    assert r.copy("a", "b") is True
    assert r.get("b") == b"v"
    assert 0 < r.pttl("b") <= 50000
    # Destination exists: nothing happens without REPLACE.
    r.set("c", "old")
    assert r.copy("a", "c") is False
    assert r.get("c") == b"old"
    assert r.copy("a", "c", replace=True) is True
    assert r.get("c") == b"v"
    assert r.copy("missing", "d") is False
    assert r.exists("d") == 0


def test_copy_replace_drops_destination_ttl(r):
    r.set("a", "v")
    r.set("b", "w", ex=100)
    assert r.copy("a", "b", replace=True)
    assert r.ttl("b") == -1


def test_copy_to_other_db(server, r):
    r.set("a", "v")
    assert r.execute_command("COPY", "a", "a", "DB", 3) == 1
    other = server.client(db=3)
    assert other.get("a") == b"v"
    assert r.execute_command("COPY", "a", "a", "DB", 3) == 0
    assert r.execute_command("COPY", "a", "a", "db", 3, "replace") == 1


def test_copy_errors(r):
    r.set("a", "v")
    same = "source and destination objects are the same"
    assert err(r, "COPY", "a", "a") == same
    assert err(r, "COPY", "a", "a", "DB", 0) == same
    assert err(r, "COPY", "missing", "missing") == same
    assert err(r, "COPY", "a", "b", "DB", 99) == "DB index is out of range"
    assert err(r, "COPY", "a", "b", "DB", -1) == "DB index is out of range"
    assert err(r, "COPY", "a", "b", "DB", "x") == "value is not an integer or out of range"
    assert err(r, "COPY", "a", "b", "DB", 99999999999) == (
        "value is out of range, value must between -2147483648 and 2147483647")
    assert err(r, "COPY", "a", "b", "DB") == "syntax error"
    assert err(r, "COPY", "a", "b", "FOO") == "syntax error"
    assert err(r, "COPY", "a") == "wrong number of arguments for 'copy' command"


def test_copy_is_deep(r):
    need(r, "RPUSH", "l", "a")
    assert r.copy("l", "l2")
    r.rpush("l2", "b")
    assert r.lrange("l", 0, -1) == [b"a"]
    assert r.lrange("l2", 0, -1) == [b"a", b"b"]


def test_copy_integer_and_long_strings(r):
    r.set("i", 12345)
    r.set("long", "x" * 100)
    assert r.copy("i", "i2") and r.copy("long", "long2")
    assert r.get("i2") == b"12345"
    assert r.get("long2") == b"x" * 100
    assert r.object("encoding", "i2") == b"int"


def test_move(server, r):
    r.set("a", "v", ex=100)
    assert r.move("a", 2) is True
    assert r.exists("a") == 0
    other = server.client(db=2)
    assert other.get("a") == b"v"
    assert 0 < other.ttl("a") <= 100
    # Key present in the destination: nothing moves.
    r.set("a", "again")
    assert r.move("a", 2) is False
    assert r.get("a") == b"again"
    assert r.move("missing", 2) is False


def test_move_errors(r):
    r.set("a", "v")
    assert err(r, "MOVE", "a", 0) == "source and destination objects are the same"
    assert err(r, "MOVE", "missing", 0) == "source and destination objects are the same"
    assert err(r, "MOVE", "a", 16) == "DB index is out of range"
    assert err(r, "MOVE", "a", -1) == "DB index is out of range"
    assert err(r, "MOVE", "a", "x") == "value is not an integer or out of range"
    assert err(r, "MOVE", "a", 2147483648) == (
        "value is out of range, value must between -2147483648 and 2147483647")
    assert err(r, "MOVE", "a") == "wrong number of arguments for 'move' command"


def test_move_invalidates_watch_in_destination(server, r):
    r.set("a", "v")
    c = watcher(server, 1)
    c.execute_command("WATCH", "a")
    assert r.move("a", 1)
    assert watch_then_exec(c) is None


# --------------------------------------------------------------------------
# KEYS


def test_keys_patterns(r):
    r.mset({"hello": 1, "hallo": 2, "hxllo": 3, "hllo": 4, "heeeello": 5, "other": 6})
    assert sorted(r.keys("h?llo")) == [b"hallo", b"hello", b"hxllo"]
    assert sorted(r.keys("h*llo")) == [b"hallo", b"heeeello", b"hello", b"hllo", b"hxllo"]
    assert sorted(r.keys("h[ae]llo")) == [b"hallo", b"hello"]
    assert sorted(r.keys("h[^e]llo")) == [b"hallo", b"hxllo"]
    assert sorted(r.keys("h[a-b]llo")) == [b"hallo"]
    assert len(r.keys("*")) == 6
    assert r.keys("nomatch*") == []


def test_keys_star_matches_empty_key(r):
    r.set("", "empty")
    r.set("x", 1)
    assert sorted(r.keys("*")) == [b"", b"x"]
    assert r.keys("?") == [b"x"]


def test_keys_skips_expired(r):
    r.set("live", 1)
    r.set("dying", 1, px=1)
    deadline = time.monotonic() + 0.01
    while time.monotonic() < deadline:
        pass
    assert r.keys("*") == [b"live"]


def test_keys_arity(r):
    assert err(r, "KEYS") == "wrong number of arguments for 'keys' command"
    assert err(r, "KEYS", "a", "b") == "wrong number of arguments for 'keys' command"


# --------------------------------------------------------------------------
# SCAN


def full_scan(r, **kw):
    cursor, seen, calls = 0, [], 0
    while True:
        cursor, keys = r.scan(cursor, **kw)
        seen.extend(keys)
        calls += 1
        if cursor == 0:
            return seen, calls


def test_scan_returns_every_key(r):
    keys = {f"key:{i}".encode() for i in range(1000)}
    r.mset({k: 1 for k in keys})
    seen, calls = full_scan(r)
    assert set(seen) == keys
    assert calls > 1


def test_scan_count_is_a_hint(r):
    r.mset({f"k{i}": 1 for i in range(1000)})
    cursor, keys = r.scan(0, count=100)
    assert cursor != 0
    assert 50 <= len(keys) <= 200
    seen, _ = full_scan(r, count=1000000)
    assert len(set(seen)) == 1000


def test_scan_match_and_type(r):
    r.mset({f"user:{i}": 1 for i in range(50)})
    r.mset({f"item:{i}": 1 for i in range(50)})
    seen, _ = full_scan(r, match="user:*")
    assert set(seen) == {f"user:{i}".encode() for i in range(50)}
    seen, _ = full_scan(r, match="*", count=7)
    assert len(set(seen)) == 100
    seen, _ = full_scan(r, _type="string")
    assert len(set(seen)) == 100
    seen, _ = full_scan(r, _type="STRING", match="item:1*")
    assert set(seen) == {f"item:{i}".encode() for i in [1] + list(range(10, 20))}
    # Redis 7.2 accepts unknown type names and matches nothing.
    seen, _ = full_scan(r, _type="nosuchtype")
    assert seen == []
    seen, _ = full_scan(r, _type="list")
    assert seen == []


def test_scan_type_with_collections(r):
    need(r, "RPUSH", "l1", "x")
    r.rpush("l2", "y")
    r.set("s", 1)
    seen, _ = full_scan(r, _type="list")
    assert sorted(seen) == [b"l1", b"l2"]


def test_scan_cursor_parsing(r):
    r.set("a", 1)
    assert r.execute_command("SCAN", "0") == (0, [b"a"])
    # strtoul semantics: the empty string is 0, a sign is accepted.
    assert r.execute_command("SCAN", "") == (0, [b"a"])
    assert r.execute_command("SCAN", "+0") == (0, [b"a"])
    assert r.execute_command("SCAN", "-0") == (0, [b"a"])
    r.execute_command("SCAN", "-1")
    r.execute_command("SCAN", "18446744073709551615")
    for bad in ("abc", " 1", "1 ", "18446744073709551616", "0x10", "-", "+", "1.5"):
        assert err(r, "SCAN", bad) == "invalid cursor", bad


def test_scan_option_errors(r):
    assert err(r, "SCAN", "0", "COUNT", "0") == "syntax error"
    assert err(r, "SCAN", "0", "COUNT", "-1") == "syntax error"
    assert err(r, "SCAN", "0", "COUNT", "x") == "value is not an integer or out of range"
    assert err(r, "SCAN", "0", "MATCH") == "syntax error"
    assert err(r, "SCAN", "0", "COUNT") == "syntax error"
    assert err(r, "SCAN", "0", "TYPE") == "syntax error"
    assert err(r, "SCAN", "0", "FOO", "bar") == "syntax error"
    assert err(r, "SCAN", "x", "FOO") == "invalid cursor"
    assert err(r, "SCAN") == "wrong number of arguments for 'scan' command"


def test_scan_wire_format(server, r):
    r.set("k", "v")
    raw = server.raw()
    assert raw.execute("SCAN", "0") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nk\r\n"
    r.delete("k")
    assert raw.execute("SCAN", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"


def test_scan_filters_and_deletes_expired_keys(r):
    r.mset({f"live{i}": 1 for i in range(20)})
    for i in range(20):
        r.set(f"dying{i}", 1, px=1)
    deadline = time.monotonic() + 0.01
    while time.monotonic() < deadline:
        pass
    seen, _ = full_scan(r, count=5)
    assert set(seen) == {f"live{i}".encode() for i in range(20)}
    assert r.dbsize() == 20


def test_scan_survives_table_growth(r):
    """Keys present for the whole scan are returned even as the table grows under it."""
    initial = {f"initial:{i}".encode() for i in range(1000)}
    r.mset({k: 1 for k in initial})
    cursor, seen, batch = 0, set(), 0
    while True:
        cursor, keys = r.scan(cursor, count=20)
        seen.update(keys)
        # Grow the keyspace between calls: several doublings happen mid-scan.
        r.mset({f"added:{batch}:{j}": 1 for j in range(100)})
        batch += 1
        if cursor == 0:
            break
    assert r.dbsize() > 4 * len(initial)
    missing = initial - seen
    assert not missing, f"{len(missing)} keys never returned"


def test_scan_survives_table_shrink(r):
    """Keys present for the whole scan are returned even as the table shrinks under it."""
    keep = {f"keep:{i}".encode() for i in range(200)}
    doomed = [f"doomed:{i}" for i in range(8000)]
    r.mset({k: 1 for k in keep})
    for i in range(0, len(doomed), 1000):
        r.mset({k: 1 for k in doomed[i:i + 1000]})
    cursor, seen = 0, set()
    while True:
        cursor, keys = r.scan(cursor, count=50)
        seen.update(keys)
        if doomed:
            r.delete(*doomed[:800])
            del doomed[:800]
        if cursor == 0:
            break
    assert not keep - seen


# --------------------------------------------------------------------------
# RANDOMKEY


def test_randomkey(r):
    assert r.randomkey() is None
    r.mset({"a": 1, "b": 2, "c": 3})
    seen = {r.randomkey() for _ in range(200)}
    assert seen == {b"a", b"b", b"c"}
    assert err(r, "RANDOMKEY", "x") == "wrong number of arguments for 'randomkey' command"


def test_randomkey_skips_expired(r):
    for i in range(50):
        r.set(f"dying{i}", 1, px=1)
    deadline = time.monotonic() + 0.01
    while time.monotonic() < deadline:
        pass
    assert r.randomkey() is None
    r.set("live", 1)
    for i in range(20):
        r.set(f"dying{i}", 1, px=1)
    deadline = time.monotonic() + 0.01
    while time.monotonic() < deadline:
        pass
    assert r.randomkey() == b"live"


# --------------------------------------------------------------------------
# OBJECT


def test_object_encoding(r):
    r.set("int", 12345)
    r.set("neg", -5)
    r.set("short", "hello")
    r.set("embstr44", "x" * 44)
    r.set("raw45", "x" * 45)
    assert r.object("encoding", "int") == b"int"
    assert r.object("encoding", "neg") == b"int"
    assert r.object("encoding", "short") == b"embstr"
    assert r.object("encoding", "embstr44") == b"embstr"
    assert r.object("encoding", "raw45") == b"raw"
    assert r.object("encoding", "missing") is None


def test_object_refcount(r):
    # Redis shares the objects for 0..9999: their refcount reads as INT_MAX.
    r.set("small", 100)
    r.set("zero", 0)
    r.set("big", 10000)
    r.set("neg", -1)
    r.set("str", "abc")
    assert r.object("refcount", "small") == 2147483647
    assert r.object("refcount", "zero") == 2147483647
    assert r.object("refcount", "big") == 1
    assert r.object("refcount", "neg") == 1
    assert r.object("refcount", "str") == 1
    assert r.object("refcount", "missing") is None


def test_object_idletime_and_freq(r):
    r.set("k", "v")
    assert r.object("idletime", "k") == 0
    assert r.object("idletime", "missing") is None
    assert err(r, "OBJECT", "FREQ", "k") == (
        "An LFU maxmemory policy is not selected, access frequency not tracked. Please note that "
        "when switching between policies at runtime LRU and LFU data will take some time to "
        "adjust.")
    assert r.object("freq", "missing") is None


def test_object_with_lfu_policy(server_factory):
    srv = server_factory(["--maxmemory-policy", "allkeys-lfu"])
    c = srv.client()
    c.set("k", "v")
    assert isinstance(c.object("freq", "k"), int)
    assert err(c, "OBJECT", "IDLETIME", "k") == (
        "An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.")


def test_object_help_and_errors(server, r):
    raw = server.raw()
    reply = raw.execute("OBJECT", "HELP")
    lines = reply.split(b"\r\n")
    assert lines[0] == b"*15"
    assert lines[1] == b"+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:"
    assert lines[2] == b"+ENCODING <key>"
    assert lines[-3:] == [b"+HELP", b"+    Prints this help.", b""]
    assert err(r, "OBJECT", "FOO", "k") == "unknown subcommand 'FOO'. Try OBJECT HELP."
    assert err(r, "OBJECT") == "wrong number of arguments for 'object' command"
    assert err(r, "OBJECT", "ENCODING") == (
        "wrong number of arguments for 'object|encoding' command")
    assert err(r, "OBJECT", "encoding", "a", "b") == (
        "wrong number of arguments for 'object|encoding' command")
    assert err(r, "OBJECT", "HELP", "x") == "wrong number of arguments for 'object|help' command"


def test_object_null_wire_format_resp3(server, r):
    raw = server.raw()
    raw.execute("HELLO", "3")
    assert raw.execute("OBJECT", "ENCODING", "missing") == b"_\r\n"
    raw.execute("HELLO", "2")
    assert raw.execute("OBJECT", "ENCODING", "missing") == b"$-1\r\n"


# --------------------------------------------------------------------------
# DBSIZE, FLUSHDB, FLUSHALL, SWAPDB


def test_dbsize_and_flushdb(server, r):
    other = server.client(db=1)
    r.mset({"a": 1, "b": 2})
    other.set("c", 3)
    assert r.dbsize() == 2
    assert r.flushdb() is True
    assert r.dbsize() == 0
    assert other.dbsize() == 1
    assert err(r, "DBSIZE", "x") == "wrong number of arguments for 'dbsize' command"


@pytest.mark.parametrize("mode", ["ASYNC", "SYNC", "async", "sync"])
def test_flush_modes(server, r, mode):
    other = server.client(db=5)
    r.mset({f"k{i}": i for i in range(5000)})
    other.mset({f"k{i}": i for i in range(100)})
    assert r.execute_command("FLUSHDB", mode) is True
    assert r.dbsize() == 0 and other.dbsize() == 100
    r.set("after", 1)
    assert r.execute_command("FLUSHALL", mode) is True
    assert r.dbsize() == 0 and other.dbsize() == 0
    # The flushed databases are usable right away.
    r.set("k1", "new")
    assert r.get("k1") == b"new"


def test_flush_syntax_errors(r):
    for cmd in ("FLUSHDB", "FLUSHALL"):
        assert err(r, cmd, "LATER") == "syntax error"
        assert err(r, cmd, "ASYNC", "SYNC") == "syntax error"


def test_flush_async_large_collections(r):
    need(r, "RPUSH", "probe", "x")
    for i in range(20):
        r.rpush(f"list{i}", *range(1000))
    assert r.flushall(asynchronous=True)
    assert r.dbsize() == 0
    r.rpush("list0", "fresh")
    assert r.lrange("list0", 0, -1) == [b"fresh"]


def test_flushdb_invalidates_watch_only_for_existing_keys(server, r):
    r.set("present", 1)
    c1, c2 = watcher(server), watcher(server)
    c1.execute_command("WATCH", "present")
    c2.execute_command("WATCH", "absent")
    r.flushdb()
    assert watch_then_exec(c1) is None
    assert watch_then_exec(c2) == [b"PONG"]


def test_flushall_invalidates_watch_in_other_db(server, r):
    c = watcher(server, 4)
    c.set("w", 1)
    c.execute_command("WATCH", "w")
    r.flushall()
    assert watch_then_exec(c) is None


def test_swapdb(server, r):
    other = server.client(db=1)
    r.set("a", "db0", ex=100)
    other.set("b", "db1")
    assert r.swapdb(0, 1) is True
    assert r.get("a") is None and r.get("b") == b"db1"
    assert other.get("a") == b"db0" and 0 < other.ttl("a") <= 100
    assert r.swapdb(1, 1) is True
    assert other.get("a") == b"db0"
    r.swapdb(1, 0)
    assert r.get("a") == b"db0"


def test_swapdb_errors(r):
    assert err(r, "SWAPDB", "a", 1) == "invalid first DB index"
    assert err(r, "SWAPDB", 0, "b") == "invalid second DB index"
    assert err(r, "SWAPDB", 9999999999, 0) == "invalid first DB index"
    assert err(r, "SWAPDB", 0, 9999999999) == "invalid second DB index"
    assert err(r, "SWAPDB", 0, 16) == "DB index is out of range"
    assert err(r, "SWAPDB", -1, 0) == "DB index is out of range"
    assert err(r, "SWAPDB", 0) == "wrong number of arguments for 'swapdb' command"


def test_swapdb_invalidates_watch_in_both_dbs(server, r):
    r.set("x", 1)
    watcher0 = watcher(server, 0)
    watcher1 = watcher(server, 1)
    bystander = watcher(server, 0)
    watcher0.execute_command("WATCH", "x")  # exists in db 0: vanishes from it
    watcher1.execute_command("WATCH", "x")  # absent in db 1: appears in it
    bystander.execute_command("WATCH", "nothing")  # absent on both sides: unaffected
    r.swapdb(0, 1)
    assert watch_then_exec(watcher0) is None
    assert watch_then_exec(watcher1) is None
    assert watch_then_exec(bystander) == [b"PONG"]


def test_del_and_expire_invalidate_watch(server, r):
    r.set("k", 1)
    c = watcher(server)
    c.execute_command("WATCH", "k")
    r.delete("k")
    assert watch_then_exec(c) is None
    r.set("k", 1)
    c.execute_command("WATCH", "k")
    r.expire("k", 100)
    assert watch_then_exec(c) is None
    c.execute_command("WATCH", "k")
    r.persist("k")
    assert watch_then_exec(c) is None
    # Failed writes change nothing.
    c.execute_command("WATCH", "k")
    r.persist("k")
    r.delete("missing")
    r.expire("k", 100, gt=True)
    assert watch_then_exec(c) == [b"PONG"]


def test_commands_inside_multi(r):
    r.set("a", 1)
    p = r.pipeline(transaction=True)
    p.rename("a", "b").exists("a", "b").copy("b", "c").dbsize().type("c")
    assert p.execute() == [True, 1, True, 2, b"string"]

"""Hash commands: HSET ... HSCAN, encodings, RESP3 shapes, notifications and propagation.

Expected replies and error texts are Redis 7.2's. Checks where the 7.0 reference server
differs are marked `only_72`.
"""

import pytest
import redis

from conftest import arity, err

INT64_MAX = 9223372036854775807
INT64_MIN = -9223372036854775808
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INT = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
SYNTAX = "ERR syntax error"


def enc(r, key):
    return r.object("encoding", key)


@pytest.fixture
def hash_limits(r):
    """Set hash-max-listpack-entries/value for one test and restore them afterwards."""
    old = r.config_get("hash-max-listpack-*")

    def set_limits(entries=None, value=None):
        if entries is not None:
            r.config_set("hash-max-listpack-entries", entries)
        if value is not None:
            r.config_set("hash-max-listpack-value", value)

    yield set_limits
    for k, v in old.items():
        r.config_set(k, v)


# ---------------------------------------------------------------------------------------------
# HSET / HMSET / HSETNX / HGET / HMGET


def test_hset_hget_basic(r):
    assert r.hset("h", "f", "v") == 1
    assert r.hset("h", mapping={"f": "v2", "g": "w"}) == 1
    assert r.hget("h", "f") == b"v2"
    assert r.hget("h", "g") == b"w"
    assert r.hget("h", "nope") is None
    assert r.hget("nokey", "f") is None
    assert r.type("h") == b"hash"


def test_hset_arity(raw):
    assert err(raw, "HSET", "h") == arity("hset")
    assert err(raw, "HSET", "h", "f") == arity("hset")
    assert err(raw, "HSET", "h", "f", "v", "g") == arity("hset")
    assert err(raw, "HMSET", "h", "f", "v", "g") == arity("hmset")
    assert err(raw, "HGET", "h") == arity("hget")
    assert err(raw, "HSETNX", "h", "f") == arity("hsetnx")


def test_hmset_replies_ok(raw):
    assert raw.execute("HMSET", "h", "a", "1", "b", "2") == b"+OK\r\n"
    assert raw.execute("HMGET", "h", "a", "x", "b") == b"*3\r\n$1\r\n1\r\n$-1\r\n$1\r\n2\r\n"


def test_hmget_missing_key_and_wrongtype(r, raw):
    assert r.hmget("nokey", "a", "b") == [None, None]
    r.set("s", "x")
    assert err(raw, "HMGET", "s", "a") == WRONGTYPE


def test_hsetnx(r):
    assert r.hsetnx("h", "f", "1") == 1
    assert r.hsetnx("h", "f", "2") == 0
    assert r.hget("h", "f") == b"1"


def test_wrongtype_everywhere(r, raw):
    r.set("s", "x")
    for cmd in (["HSET", "s", "f", "v"], ["HSETNX", "s", "f", "v"], ["HGET", "s", "f"],
                ["HDEL", "s", "f"], ["HLEN", "s"], ["HSTRLEN", "s", "f"], ["HEXISTS", "s", "f"],
                ["HKEYS", "s"], ["HVALS", "s"], ["HGETALL", "s"], ["HINCRBY", "s", "f", "1"],
                ["HINCRBYFLOAT", "s", "f", "1"], ["HRANDFIELD", "s"], ["HRANDFIELD", "s", "2"],
                ["HSCAN", "s", "0"], ["HMSET", "s", "f", "v"]):
        assert err(raw, *cmd) == WRONGTYPE, cmd


# ---------------------------------------------------------------------------------------------
# HDEL / HLEN / HSTRLEN / HEXISTS / HKEYS / HVALS / HGETALL


def test_hdel_deletes_empty_key(r):
    r.hset("h", mapping={"a": "1", "b": "2"})
    assert r.hdel("h", "a", "a", "zz") == 1
    assert r.hlen("h") == 1
    assert r.hdel("h", "b", "c") == 1
    assert r.exists("h") == 0
    assert r.hdel("h", "b") == 0


def test_hlen_hstrlen_hexists(r):
    r.hset("h", mapping={"a": "hello", "n": "12345"})
    assert r.hlen("h") == 2
    assert r.hlen("nokey") == 0
    assert r.hstrlen("h", "a") == 5
    assert r.hstrlen("h", "n") == 5
    assert r.hstrlen("h", "zz") == 0
    assert r.hstrlen("nokey", "a") == 0
    assert r.hexists("h", "a") == 1
    assert r.hexists("h", "zz") == 0
    assert r.hexists("nokey", "a") == 0


def test_hkeys_hvals_hgetall_order_listpack(r):
    r.hset("h", "c", "3")
    r.hset("h", "a", "1")
    r.hset("h", "b", "2")
    r.hset("h", "a", "10")  # update keeps the place
    assert r.hkeys("h") == [b"c", b"a", b"b"]
    assert r.hvals("h") == [b"3", b"10", b"2"]
    assert r.hgetall("h") == {b"c": b"3", b"a": b"10", b"b": b"2"}
    assert r.hkeys("nokey") == []
    assert r.hvals("nokey") == []
    assert r.hgetall("nokey") == {}


def test_hgetall_large(r):
    data = {f"f{i}".encode(): f"v{i}".encode() for i in range(1000)}
    r.hset("h", mapping=data)
    assert enc(r, "h") == b"hashtable"
    assert r.hgetall("h") == data
    assert sorted(r.hkeys("h")) == sorted(data)
    assert sorted(r.hvals("h")) == sorted(data.values())


def test_resp3_shapes(server):
    raw = server.raw()
    assert raw.execute("HELLO", "3").startswith(b"%")
    raw.execute("DEL", "h")
    raw.execute("HSET", "h", "a", "1")
    assert raw.execute("HGETALL", "h") == b"%1\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert raw.execute("HGETALL", "nokey") == b"%0\r\n"
    assert raw.execute("HKEYS", "h") == b"*1\r\n$1\r\na\r\n"
    assert raw.execute("HRANDFIELD", "h", "1", "WITHVALUES") == b"*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"
    assert raw.execute("HRANDFIELD", "h", "-2", "WITHVALUES") == (
        b"*2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
    assert raw.execute("HRANDFIELD", "nokey") == b"_\r\n"
    assert raw.execute("HGET", "h", "zz") == b"_\r\n"
    raw.execute("DEL", "h")
    raw.close()


# ---------------------------------------------------------------------------------------------
# HINCRBY / HINCRBYFLOAT


def test_hincrby(r, raw):
    assert r.hincrby("h", "n", 5) == 5
    assert r.hincrby("h", "n", -7) == -2
    r.hset("h", "s", "abc")
    assert err(raw, "HINCRBY", "h", "s", "1") == "ERR hash value is not an integer"
    r.hset("h", "sp", " 1")
    assert err(raw, "HINCRBY", "h", "sp", "1") == "ERR hash value is not an integer"
    assert err(raw, "HINCRBY", "h", "n", "x") == NOT_INT
    assert err(raw, "HINCRBY", "h", "n", "1.5") == NOT_INT
    assert err(raw, "HINCRBY", "h", "n", "99999999999999999999") == NOT_INT
    r.hset("h", "big", str(INT64_MAX - 1))
    assert r.hincrby("h", "big", 1) == INT64_MAX
    assert err(raw, "HINCRBY", "h", "big", "1") == "ERR increment or decrement would overflow"
    r.hset("h", "small", str(INT64_MIN + 1))
    assert r.hincrby("h", "small", -1) == INT64_MIN
    assert err(raw, "HINCRBY", "h", "small", "-1") == "ERR increment or decrement would overflow"
    # A bad increment on a missing key creates nothing.
    assert err(raw, "HINCRBY", "new", "f", "x") == NOT_INT
    assert r.exists("new") == 0


def test_hincrbyfloat(r, raw):
    assert r.hincrbyfloat("h", "f", 10.5) == 10.5
    assert raw.execute("HINCRBYFLOAT", "h", "f", "0.1") == b"$4\r\n10.6\r\n"
    assert raw.execute("HINCRBYFLOAT", "h", "f", "-10.6") == b"$1\r\n0\r\n"
    assert raw.execute("HINCRBYFLOAT", "h", "e", "5.0e3") == b"$4\r\n5000\r\n"
    r.hset("h", "i", "3")
    assert raw.execute("HINCRBYFLOAT", "h", "i", "1.5") == b"$3\r\n4.5\r\n"
    r.hset("h", "s", "abc")
    assert err(raw, "HINCRBYFLOAT", "h", "s", "1") == "ERR hash value is not a float"
    assert err(raw, "HINCRBYFLOAT", "h", "f", "abc") == NOT_FLOAT
    assert err(raw, "HINCRBYFLOAT", "h", "f", "nan") == NOT_FLOAT
    # Long double arithmetic: the sum of two near-DBL_MAX values is still finite.
    r.hset("h", "huge", "1.7e308")
    assert raw.execute("HINCRBYFLOAT", "h", "huge", "1.7e308").startswith(b"$309\r\n34")


def test_hincrbyfloat_infinity(r, raw, only_72):
    assert err(raw, "HINCRBYFLOAT", "h", "f", "inf") == "ERR value is NaN or Infinity"
    assert err(raw, "HINCRBYFLOAT", "h", "f", "-inf") == "ERR value is NaN or Infinity"
    r.hset("h", "inf", "inf")
    assert err(raw, "HINCRBYFLOAT", "h", "inf", "1") == "ERR increment would produce NaN or Infinity"
    assert r.exists("h") == 1


# ---------------------------------------------------------------------------------------------
# HRANDFIELD


def test_hrandfield_basic(r, raw):
    assert r.hrandfield("nokey") is None
    assert r.hrandfield("nokey", 3) == []
    assert r.hrandfield("nokey", 3, withvalues=True) == []
    data = {b"a": b"1", b"b": b"2", b"c": b"3"}
    r.hset("h", mapping=data)
    assert r.hrandfield("h") in data
    assert r.hrandfield("h", 0) == []
    got = r.hrandfield("h", 2)
    assert len(got) == 2 and len(set(got)) == 2 and set(got) <= set(data)
    assert sorted(r.hrandfield("h", 10)) == sorted(data)
    got = r.hrandfield("h", -10)
    assert len(got) == 10 and set(got) <= set(data)
    flat = r.hrandfield("h", 5, withvalues=True)
    assert len(flat) == 6
    for f, v in zip(flat[::2], flat[1::2]):
        assert data[f] == v
    flat = r.hrandfield("h", -5, withvalues=True)
    assert len(flat) == 10
    for f, v in zip(flat[::2], flat[1::2]):
        assert data[f] == v


@pytest.mark.parametrize("size", [50, 1000])
def test_hrandfield_distinct_counts(r, size):
    data = {f"f{i}".encode(): f"v{i}".encode() for i in range(size)}
    r.hset("h", mapping=data)
    for count in (1, 5, size // 3, size // 2, size - 1, size):
        got = r.hrandfield("h", count, withvalues=True)
        fields = got[::2]
        assert len(fields) == count and len(set(fields)) == count
        for f, v in zip(got[::2], got[1::2]):
            assert data[f] == v


def test_hrandfield_errors(r, raw):
    r.hset("h", "a", "1")
    assert err(raw, "HRANDFIELD", "h", "x") == NOT_INT
    assert err(raw, "HRANDFIELD", "h", "1", "WITHSCORES") == SYNTAX
    assert err(raw, "HRANDFIELD", "h", "1", "WITHVALUES", "x") == SYNTAX
    assert err(raw, "HRANDFIELD", "h", str(INT64_MIN)) == (
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807")
    assert err(raw, "HRANDFIELD", "h", str(-INT64_MAX // 2 - 1), "WITHVALUES") == (
        "ERR value is out of range")
    # The count is checked before the key.
    assert err(raw, "HRANDFIELD", "nokey", "x") == NOT_INT


# ---------------------------------------------------------------------------------------------
# HSCAN


def test_hscan_small_returns_all_at_once(r, raw):
    r.hset("h", mapping={"a": "1", "b": "2", "zz": "3"})
    cursor, items = r.hscan("h", 0, count=1)
    assert cursor == 0
    assert items == {b"a": b"1", b"b": b"2", b"zz": b"3"}
    cursor, items = r.hscan("h", 0, match="z*")
    assert items == {b"zz": b"3"}
    assert r.hscan("nokey", 0) == (0, {})


def test_hscan_large_full_iteration(r):
    data = {f"f{i}".encode(): f"v{i}".encode() for i in range(2000)}
    r.hset("h", mapping=data)
    seen = {}
    cursor = 0
    calls = 0
    while True:
        cursor, items = r.hscan("h", cursor, count=20)
        seen.update(items)
        calls += 1
        if cursor == 0:
            break
    assert seen == data
    assert calls > 10
    seen = {}
    for f, v in r.hscan_iter("h", match="f1*"):
        seen[f] = v
    assert seen == {f: v for f, v in data.items() if f.startswith(b"f1")}


def test_hscan_errors(r, raw):
    r.hset("h", "a", "1")
    assert err(raw, "HSCAN", "h", "x") == "ERR invalid cursor"
    assert err(raw, "HSCAN", "nokey", "x") == "ERR invalid cursor"
    assert err(raw, "HSCAN", "h", "0", "COUNT", "0") == SYNTAX
    assert err(raw, "HSCAN", "h", "0", "COUNT", "x") == NOT_INT
    assert err(raw, "HSCAN", "h", "0", "TYPE", "string") == SYNTAX
    assert err(raw, "HSCAN", "h", "0", "MATCH") == SYNTAX
    assert err(raw, "HSCAN", "h") == arity("hscan")
    # Options are not looked at when the key is missing, as in Redis.
    assert raw.execute("HSCAN", "nokey", "0", "COUNT", "0") == b"*2\r\n$1\r\n0\r\n*0\r\n"


# ---------------------------------------------------------------------------------------------
# Encodings


def test_encoding_entries_threshold(r, hash_limits):
    hash_limits(entries=4, value=64)
    for i in range(4):
        r.hset("h", f"f{i}", "v")
    assert enc(r, "h") == b"listpack"
    r.hset("h", "f4", "v")
    assert enc(r, "h") == b"hashtable"
    # Never converts back.
    r.hdel("h", "f0", "f1", "f2")
    assert enc(r, "h") == b"hashtable"


def test_encoding_default_thresholds(r):
    # Redis's built-in default is 512 fields (redis.conf's example value is 128).
    r.hset("h", mapping={f"f{i}": "v" for i in range(512)})
    assert enc(r, "h") == b"listpack"
    r.hset("h", "extra", "v")
    assert enc(r, "h") == b"hashtable"
    r.hset("v", "f", "x" * 64)
    assert enc(r, "v") == b"listpack"
    r.hset("v", "g", "x" * 65)
    assert enc(r, "v") == b"hashtable"
    r.hset("k", "x" * 65, "v")
    assert enc(r, "k") == b"hashtable"


def test_encoding_many_args_convert_early(r, hash_limits, only_72):
    hash_limits(entries=2, value=64)
    # Three pairs with a repeated field: Redis converts on the argument count.
    r.hset("h", mapping={"a": "1"})
    r.execute_command("HSET", "h", "a", "1", "a", "2", "a", "3")
    assert r.hlen("h") == 1
    assert enc(r, "h") == b"hashtable"


def test_encoding_hincrby_long_field(r, hash_limits):
    hash_limits(value=5)
    r.hincrby("h", "short", 1)
    assert enc(r, "h") == b"listpack"
    r.hincrby("h", "longfield", 1)
    assert enc(r, "h") == b"hashtable"
    r.hincrbyfloat("g", "f", 1234567.5)
    assert enc(r, "g") == b"hashtable"


def test_config_aliases(r, hash_limits):
    r.config_set("hash-max-ziplist-entries", 7)
    assert r.config_get("hash-max-listpack-entries")["hash-max-listpack-entries"] == "7"
    r.config_set("hash-max-ziplist-value", 9)
    assert r.config_get("hash-max-listpack-value")["hash-max-listpack-value"] == "9"


# ---------------------------------------------------------------------------------------------
# Keyspace integration: COPY, RENAME, DEL, SCAN TYPE, MEMORY USAGE, WATCH, notifications


def test_copy_rename_scan_type(r):
    r.hset("small", "a", "1")
    r.hset("big", mapping={f"f{i}": i for i in range(600)})
    assert r.copy("small", "small2") == 1
    assert r.copy("big", "big2") == 1
    r.hset("big2", "f0", "changed")
    assert r.hget("big", "f0") == b"0"
    assert enc(r, "big2") == b"hashtable"
    assert enc(r, "small2") == b"listpack"
    assert r.hgetall("small2") == {b"a": b"1"}
    r.rename("small2", "renamed")
    assert r.hget("renamed", "a") == b"1"
    assert sorted(r.scan(0, _type="hash", count=100)[1]) == [b"big", b"big2", b"renamed", b"small"]
    assert r.delete("big", "big2") == 2


def test_watch_invalidated_by_hset(server, r):
    r.hset("h", "a", "1")
    p = r.pipeline()
    p.watch("h")
    other = server.client()
    other.hset("h", "a", "2")
    p.multi()
    p.hget("h", "a")
    with pytest.raises(redis.WatchError):
        p.execute()


def test_keyspace_notifications(server, r):
    r.config_set("notify-keyspace-events", "KEA")
    try:
        p = r.pubsub()
        p.psubscribe("__keyevent@0__:*")
        assert p.get_message(timeout=2)["type"] == "psubscribe"
        r.hset("h", "a", "1")
        r.hsetnx("h", "b", "2")
        r.hincrby("h", "n", 1)
        r.hincrbyfloat("h", "x", 1.5)
        r.hdel("h", "a", "b", "n", "x")
        events = []
        while len(events) < 6:
            m = p.get_message(timeout=2)
            assert m is not None, events
            if m["type"] == "pmessage":
                events.append(m["channel"].decode().split(":", 1)[1])
        assert events == ["hset", "hset", "hincrby", "hincrbyfloat", "hdel", "del"]
        p.close()
    finally:
        r.config_set("notify-keyspace-events", "")

"""Set commands: SADD ... SSCAN, encodings, RESP3 shapes, notifications and propagation.

Expected replies and error texts are Redis 7.2's. Checks where the 7.0 reference server
differs (the listpack encoding of small sets arrived in 7.2) are marked `only_72`.
"""

import pytest
import redis

from conftest import arity, err

INT64_MAX = 9223372036854775807
INT64_MIN = -9223372036854775808
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INT = "ERR value is not an integer or out of range"
SYNTAX = "ERR syntax error"
MUST_BE_POSITIVE = "ERR value is out of range, must be positive"


def enc(r, key):
    return r.object("encoding", key)


@pytest.fixture
def set_limits(r):
    """Change set-max-* for one test and restore them afterwards."""
    old = r.config_get("set-max-*")

    def set_all(**kw):
        for k, v in kw.items():
            r.config_set("set-max-" + k.replace("_", "-"), v)

    yield set_all
    for k, v in old.items():
        r.config_set(k, v)


# ---------------------------------------------------------------------------------------------
# SADD / SREM / SCARD / SISMEMBER / SMISMEMBER / SMEMBERS


def test_sadd_srem_basic(r):
    assert r.sadd("s", "a", "b", "a") == 2
    assert r.sadd("s", "b", "c") == 1
    assert r.scard("s") == 3
    assert r.scard("nokey") == 0
    assert r.type("s") == b"set"
    assert r.srem("s", "a", "zz", "a") == 1
    assert r.srem("nokey", "a") == 0
    assert r.srem("s", "b", "c") == 2
    assert r.exists("s") == 0


def test_arity(raw):
    assert err(raw, "SADD", "s") == arity("sadd")
    assert err(raw, "SREM", "s") == arity("srem")
    assert err(raw, "SISMEMBER", "s") == arity("sismember")
    assert err(raw, "SMISMEMBER", "s") == arity("smismember")
    assert err(raw, "SMOVE", "a", "b") == arity("smove")
    assert err(raw, "SINTERSTORE", "d") == arity("sinterstore")
    assert err(raw, "SINTERCARD", "1") == arity("sintercard")
    assert err(raw, "SPOP") == arity("spop")
    assert err(raw, "SSCAN", "s") == arity("sscan")


def test_membership(r):
    r.sadd("s", "a", "1")
    assert r.sismember("s", "a") == 1
    assert r.sismember("s", "1") == 1
    assert r.sismember("s", "b") == 0
    assert r.sismember("nokey", "a") == 0
    assert r.smismember("s", "a", "b", "1") == [1, 0, 1]
    assert r.smismember("nokey", "a", "b") == [0, 0]


def array(raw, *args):
    """The bulk strings of an array reply, in order."""
    reply = raw.execute(*args)
    assert reply[:1] in (b"*", b"~"), reply
    lines = reply.split(b"\r\n")
    return lines[2:-1:2]


def test_smembers_intset_sorted(r, raw):
    r.sadd("s", 5, -3, 100, 0)
    assert enc(r, "s") == b"intset"
    assert array(raw, "SMEMBERS", "s") == [b"-3", b"0", b"5", b"100"]
    assert r.smembers("nokey") == set()


def test_smembers_listpack_insertion_order(r, raw, only_72):
    r.sadd("s", "c", "a", "b")
    assert enc(r, "s") == b"listpack"
    assert array(raw, "SMEMBERS", "s") == [b"c", b"a", b"b"]


def test_wrongtype_everywhere(r, raw):
    r.set("str", "x")
    r.sadd("s", "a")
    for cmd in (["SADD", "str", "a"], ["SREM", "str", "a"], ["SCARD", "str"],
                ["SISMEMBER", "str", "a"], ["SMISMEMBER", "str", "a"], ["SMEMBERS", "str"],
                ["SPOP", "str"], ["SPOP", "str", "2"], ["SRANDMEMBER", "str"],
                ["SRANDMEMBER", "str", "2"], ["SMOVE", "str", "s", "a"], ["SMOVE", "s", "str", "a"],
                ["SINTER", "s", "str"], ["SINTER", "nokey", "str"], ["SINTERSTORE", "d", "s", "str"],
                ["SINTERCARD", "2", "s", "str"], ["SUNION", "s", "str"],
                ["SUNIONSTORE", "d", "str"], ["SDIFF", "s", "str"], ["SDIFFSTORE", "d", "str"],
                ["SSCAN", "str", "0"]):
        assert err(raw, *cmd) == WRONGTYPE, cmd


def test_resp3_shapes(server):
    raw = server.raw()
    raw.execute("HELLO", "3")
    raw.execute("DEL", "s", "t")
    raw.execute("SADD", "s", "1")
    assert raw.execute("SMEMBERS", "s") == b"~1\r\n$1\r\n1\r\n"
    assert raw.execute("SMEMBERS", "nokey") == b"~0\r\n"
    assert raw.execute("SINTER", "s", "s") == b"~1\r\n$1\r\n1\r\n"
    assert raw.execute("SINTER", "s", "nokey") == b"~0\r\n"
    assert raw.execute("SUNION", "s") == b"~1\r\n$1\r\n1\r\n"
    assert raw.execute("SDIFF", "s", "nokey") == b"~1\r\n$1\r\n1\r\n"
    assert raw.execute("SRANDMEMBER", "s", "1") == b"*1\r\n$1\r\n1\r\n"
    assert raw.execute("SPOP", "nokey", "1") == b"~0\r\n"
    assert raw.execute("SPOP", "s", "0") == b"~0\r\n"
    assert raw.execute("SPOP", "s", "5") == b"~1\r\n$1\r\n1\r\n"
    assert raw.execute("SPOP", "nokey") == b"_\r\n"
    assert raw.execute("SRANDMEMBER", "nokey") == b"_\r\n"
    raw.close()


# ---------------------------------------------------------------------------------------------
# SPOP / SRANDMEMBER


@pytest.mark.parametrize("members", [
    [str(i) for i in range(10)],            # intset
    [f"m{i}" for i in range(10)],           # listpack
    [f"m{i}" for i in range(300)],          # hashtable
    [str(i) for i in range(1000)],          # hashtable of integers
])
@pytest.mark.parametrize("count", [1, 3, 9, 250, 5000])
def test_spop_with_count(r, members, count):
    r.sadd("s", *members)
    before = set(m.encode() for m in members)
    popped = r.spop("s", count)
    assert len(popped) == min(count, len(members))
    assert len(set(popped)) == len(popped)
    assert set(popped) <= before
    left = r.smembers("s")
    assert left == before - set(popped)
    if not left:
        assert r.exists("s") == 0


def test_spop_single(r):
    r.sadd("s", "a", "b")
    a = r.spop("s")
    b = r.spop("s")
    assert {a, b} == {b"a", b"b"}
    assert r.exists("s") == 0
    assert r.spop("s") is None


def test_spop_errors(r, raw):
    r.sadd("s", "a")
    assert err(raw, "SPOP", "s", "x") == MUST_BE_POSITIVE
    assert err(raw, "SPOP", "s", "1", "2") == SYNTAX
    assert r.spop("nokey", 3) == []
    assert r.spop("s", 0) == []


def test_spop_keeps_ttl_and_rebuilds_encoding(r):
    r.sadd("s", *[f"m{i}" for i in range(300)])
    r.expire("s", 1000)
    assert enc(r, "s") == b"hashtable"
    assert len(r.spop("s", 290)) == 290
    assert r.scard("s") == 10
    assert r.ttl("s") > 0
    assert enc(r, "s") in (b"listpack", b"hashtable")


def test_spop_rebuild_to_listpack(r, only_72):
    r.sadd("s", *[f"m{i}" for i in range(300)])
    r.spop("s", 290)
    assert enc(r, "s") == b"listpack"
    r.sadd("i", *range(1000))
    r.spop("i", 990)
    # A hashtable hands its survivors over as strings: a listpack, not an intset.
    assert enc(r, "i") == b"listpack"


@pytest.mark.parametrize("size", [5, 50, 500])
def test_srandmember(r, size):
    members = {f"m{i}".encode() for i in range(size)}
    r.sadd("s", *members)
    assert r.srandmember("s") in members
    for count in (1, 2, size // 3, size // 2, size - 1, size, size + 5):
        got = r.srandmember("s", count)
        assert len(got) == min(count, size)
        assert len(set(got)) == len(got)
        assert set(got) <= members
    got = r.srandmember("s", -(size * 3))
    assert len(got) == size * 3 and set(got) <= members
    assert r.srandmember("s", 0) == []
    assert r.scard("s") == size


def test_spop_negative_count(r, raw, only_72):
    r.sadd("s", "a")
    assert err(raw, "SPOP", "s", "-1") == MUST_BE_POSITIVE


def test_srandmember_errors(r, raw):
    assert r.srandmember("nokey") is None
    assert r.srandmember("nokey", 5) == []
    r.sadd("s", "a")
    assert err(raw, "SRANDMEMBER", "s", "x") == NOT_INT
    assert err(raw, "SRANDMEMBER", "s", "1", "2") == SYNTAX
    assert err(raw, "SRANDMEMBER", "s", str(INT64_MIN)) == (
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807")


# ---------------------------------------------------------------------------------------------
# SMOVE


def test_smove(r, raw):
    r.sadd("a", "x", "y")
    assert r.smove("a", "b", "x") == 1
    assert r.smembers("a") == {b"y"}
    assert r.smembers("b") == {b"x"}
    assert r.smove("a", "b", "zz") == 0
    assert r.smove("nokey", "b", "x") == 0
    assert r.smove("a", "a", "y") == 1
    assert r.smove("a", "a", "zz") == 0
    r.sadd("b", "y")
    assert r.smove("a", "b", "y") == 1
    assert r.exists("a") == 0
    assert r.smembers("b") == {b"x", b"y"}
    r.set("str", "v")
    # A missing source wins over a wrong-typed destination.
    assert r.smove("nokey", "str", "x") == 0
    assert err(raw, "SMOVE", "b", "str", "x") == WRONGTYPE
    assert r.smembers("b") == {b"x", b"y"}


def test_smove_creates_intset(r):
    r.sadd("a", "1", "x")
    r.smove("a", "b", "1")
    assert enc(r, "b") == b"intset"


# ---------------------------------------------------------------------------------------------
# SINTER / SINTERCARD / SINTERSTORE


def test_sinter(r):
    r.sadd("a", 1, 2, 3, "x")
    r.sadd("b", 2, 3, 4, "x")
    r.sadd("c", 3, "x", 9)
    assert r.sinter("a", "b") == {b"2", b"3", b"x"}
    assert r.sinter("a", "b", "c") == {b"3", b"x"}
    assert r.sinter("a", "nokey") == set()
    assert r.sinter("a") == {b"1", b"2", b"3", b"x"}
    assert r.sinter("a", "a") == {b"1", b"2", b"3", b"x"}


def test_sinterstore(r):
    r.sadd("a", 1, 2, 3)
    r.sadd("b", 2, 3, 4)
    assert r.sinterstore("d", "a", "b") == 2
    assert r.smembers("d") == {b"2", b"3"}
    assert enc(r, "d") == b"intset"
    r.expire("d", 100)
    assert r.sinterstore("d", "a", "b") == 2
    assert r.ttl("d") == -1
    assert r.sinterstore("d", "a", "nokey") == 0
    assert r.exists("d") == 0
    r.sadd("e", "x")
    assert r.sinterstore("d", "a", "e") == 0
    r.set("d", "string")
    assert r.sinterstore("d", "a", "b") == 2
    assert r.type("d") == b"set"


def test_sinterstore_encodings(r, only_72):
    r.sadd("a", "1", "2", "x", "y")
    r.sadd("b", "1", "2", "x")
    r.sinterstore("d", "a", "b")
    assert enc(r, "d") == b"listpack"
    r.sadd("c", "1", "2", "z")
    # Only integers in the result: an intset even though the sources are listpacks.
    r.sinterstore("d", "a", "c")
    assert enc(r, "d") == b"intset"


def test_sintercard(r, raw):
    r.sadd("a", 1, 2, 3, 4)
    r.sadd("b", 2, 3, 4, 5)
    assert r.sintercard(2, ["a", "b"]) == 3
    assert r.sintercard(2, ["a", "b"], limit=2) == 2
    assert r.sintercard(2, ["a", "b"], limit=0) == 3
    assert r.sintercard(1, ["a"]) == 4
    assert r.sintercard(2, ["a", "nokey"]) == 0
    assert err(raw, "SINTERCARD", "0", "a") == "ERR numkeys should be greater than 0"
    assert err(raw, "SINTERCARD", "x", "a") == "ERR numkeys should be greater than 0"
    assert err(raw, "SINTERCARD", "3", "a", "b") == (
        "ERR Number of keys can't be greater than number of args")
    assert err(raw, "SINTERCARD", "1", "a", "LIMIT", "-1") == "ERR LIMIT can't be negative"
    assert err(raw, "SINTERCARD", "1", "a", "LIMIT", "x") == "ERR LIMIT can't be negative"
    assert err(raw, "SINTERCARD", "1", "a", "LIMIT") == SYNTAX
    assert err(raw, "SINTERCARD", "1", "a", "b") == SYNTAX
    assert array(raw, "COMMAND", "GETKEYS", "SINTERCARD", "2", "a", "b", "LIMIT", "1") == [
        b"a", b"b"]


# ---------------------------------------------------------------------------------------------
# SUNION / SDIFF and STORE forms


def test_sunion_sdiff(r):
    r.sadd("a", 1, 2, 3, "x")
    r.sadd("b", 3, 4, "x")
    assert r.sunion("a", "b") == {b"1", b"2", b"3", b"4", b"x"}
    assert r.sunion("a", "nokey") == {b"1", b"2", b"3", b"x"}
    assert r.sunion("nokey") == set()
    assert r.sdiff("a", "b") == {b"1", b"2"}
    assert r.sdiff("a", "nokey") == {b"1", b"2", b"3", b"x"}
    assert r.sdiff("nokey", "a") == set()
    assert r.sdiff("a", "a") == set()
    assert r.sdiff("a", "b", "a") == set()


def test_sdiff_large_both_algorithms(r):
    r.sadd("big", *range(2000))
    r.sadd("small", *range(0, 2000, 2))
    r.sadd("tiny", 1, 3)
    assert r.sdiff("big", "small") == {str(i).encode() for i in range(1, 2000, 2)}
    assert r.sdiff("tiny", "big") == set()
    assert r.sdiff("big", "small", "tiny") == {str(i).encode() for i in range(5, 2000, 2)}


def test_store_forms(r):
    r.sadd("a", 1, 2, 3)
    r.sadd("b", 3, 4)
    assert r.sunionstore("u", "a", "b") == 4
    assert r.smembers("u") == {b"1", b"2", b"3", b"4"}
    assert enc(r, "u") == b"intset"
    assert r.sdiffstore("d", "a", "b") == 2
    assert r.smembers("d") == {b"1", b"2"}
    assert r.sdiffstore("d", "a", "a") == 0
    assert r.exists("d") == 0
    assert r.sunionstore("u", "nokey") == 0
    assert r.exists("u") == 0
    # The destination may be a source.
    assert r.sunionstore("a", "a", "b") == 4
    assert r.smembers("a") == {b"1", b"2", b"3", b"4"}


def test_sunion_order_small(r, raw, only_72):
    r.sadd("a", "x", "3", "1")
    assert enc(r, "a") == b"listpack"
    assert array(raw, "SUNION", "a") == [b"x", b"3", b"1"]
    r.sadd("b", "3", "1", "x")
    # The result set starts as an intset: the integers before "x" get sorted.
    assert array(raw, "SUNION", "b") == [b"1", b"3", b"x"]


# ---------------------------------------------------------------------------------------------
# SSCAN


def test_sscan(r, raw):
    r.sadd("s", "1", "2", "33")  # an intset: returned whole
    cursor, items = r.sscan("s", 0, count=1)
    assert cursor == 0 and sorted(items) == [b"1", b"2", b"33"]
    assert r.sscan("s", 0, match="3*") == (0, [b"33"])
    assert r.sscan("nokey", 0) == (0, [])
    r.sadd("big", *[f"m{i}" for i in range(3000)])
    seen = set()
    cursor = 0
    while True:
        cursor, items = r.sscan("big", cursor, count=50)
        seen.update(items)
        if cursor == 0:
            break
    assert len(seen) == 3000
    assert set(r.sscan_iter("big", match="m29*")) == {
        f"m{i}".encode() for i in range(3000) if f"m{i}".startswith("m29")}
    assert err(raw, "SSCAN", "s", "x") == "ERR invalid cursor"
    assert err(raw, "SSCAN", "s", "0", "COUNT", "0") == SYNTAX
    assert err(raw, "SSCAN", "s", "0", "FOO", "1") == SYNTAX


# ---------------------------------------------------------------------------------------------
# Encodings


def test_intset_to_hashtable_at_limit(r, set_limits):
    set_limits(intset_entries=10)
    r.sadd("s", *range(10))
    assert enc(r, "s") == b"intset"
    r.sadd("s", 10)
    assert enc(r, "s") == b"hashtable"


def test_default_intset_threshold(r):
    r.sadd("s", *range(512))
    assert enc(r, "s") == b"intset"
    r.sadd("s", 512)
    assert enc(r, "s") == b"hashtable"


def test_listpack_thresholds(r, set_limits, only_72):
    r.sadd("s", *[f"m{i}" for i in range(128)])
    assert enc(r, "s") == b"listpack"
    r.sadd("s", "one-more")
    assert enc(r, "s") == b"hashtable"
    r.sadd("v", "x" * 64)
    assert enc(r, "v") == b"listpack"
    r.sadd("v", "y" * 65)
    assert enc(r, "v") == b"hashtable"
    set_limits(listpack_entries=3, listpack_value=4)
    r.sadd("w", "a", "b", "c")
    assert enc(r, "w") == b"listpack"
    r.sadd("w", "d")
    assert enc(r, "w") == b"hashtable"


def test_intset_to_listpack_and_hashtable(r, set_limits, only_72):
    r.sadd("s", 1, 2, 3)
    r.sadd("s", "a")
    assert enc(r, "s") == b"listpack"
    r.sadd("t", *range(200))
    r.sadd("t", "a")  # more integers than a listpack may hold
    assert enc(r, "t") == b"hashtable"
    set_limits(listpack_value=3)
    r.sadd("u", 12345)
    r.sadd("u", "a")  # the integers are longer than a listpack value may be
    assert enc(r, "u") == b"hashtable"


def test_sadd_size_hint_conversions(r, only_72):
    # A new key with many arguments starts in the encoding that will hold them all.
    r.sadd("s", "a", *[f"m{i}" for i in range(200)])
    assert enc(r, "s") == b"hashtable"
    r.sadd("i", *range(600))
    assert enc(r, "i") == b"hashtable"
    # An existing small set converts on the argument count, duplicates or not.
    r.sadd("l", "a")
    r.execute_command("SADD", "l", *(["a"] * 129))
    assert r.scard("l") == 1
    assert enc(r, "l") == b"hashtable"


# ---------------------------------------------------------------------------------------------
# Keyspace integration


def test_copy_rename_scan_type(r):
    r.sadd("i", 1, 2)
    r.sadd("h", *[f"m{i}" for i in range(300)])
    assert r.copy("i", "i2") == 1
    assert r.copy("h", "h2") == 1
    assert enc(r, "i2") == b"intset"
    assert enc(r, "h2") == b"hashtable"
    r.srem("h2", "m0")
    assert r.sismember("h", "m0") == 1
    r.rename("i2", "renamed")
    assert r.smembers("renamed") == {b"1", b"2"}
    assert sorted(r.scan(0, _type="set", count=100)[1]) == [b"h", b"h2", b"i", b"renamed"]


def test_watch_invalidated_by_spop(server, r):
    r.sadd("s", "a", "b")
    p = r.pipeline()
    p.watch("s")
    server.client().spop("s")
    p.multi()
    p.scard("s")
    with pytest.raises(redis.WatchError):
        p.execute()


def test_keyspace_notifications(server, r):
    r.config_set("notify-keyspace-events", "KEA")
    try:
        p = r.pubsub()
        p.psubscribe("__keyevent@0__:*")
        assert p.get_message(timeout=2)["type"] == "psubscribe"
        r.sadd("a", "x", "y")
        r.srem("a", "y")
        r.smove("a", "b", "x")       # srem, del (a emptied), sadd
        r.sadd("c", "1", "2")
        r.spop("c")
        r.sinterstore("d", "b", "b")
        r.sunionstore("e", "b")
        r.sdiffstore("e", "b", "b")  # empty result deletes e
        expected = ["sadd", "srem", "srem", "del", "sadd", "sadd", "spop", "sinterstore",
                    "sunionstore", "del"]
        events = []
        while len(events) < len(expected):
            m = p.get_message(timeout=2)
            assert m is not None, events
            if m["type"] == "pmessage":
                events.append(m["channel"].decode().split(":", 1)[1])
        assert events == expected
        p.close()
    finally:
        r.config_set("notify-keyspace-events", "")

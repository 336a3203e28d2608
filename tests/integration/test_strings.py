"""String commands: SET family, GET family, MGET/MSET, APPEND, ranges, counters, LCS.

Expected replies and error texts are Redis 7.2's; the suite also passes against a real
redis-server (VIREO_SERVER=$(command -v redis-server)).
"""

import time

import pytest
import redis

from conftest import wait_for, err, arity

INT64_MAX = 9223372036854775807
INT64_MIN = -9223372036854775808
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NOT_INT = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
SYNTAX = "ERR syntax error"


def invalid_expire(cmd):
    return f"ERR invalid expire time in '{cmd}' command"


def make_nonstring(r, key):
    """Create a key of some non-string type with whatever type commands the server has."""
    for create in (lambda: r.lpush(key, "x"), lambda: r.sadd(key, "x"),
                   lambda: r.hset(key, "f", "v"), lambda: r.zadd(key, {"x": 1})):
        try:
            create()
            return
        except redis.ResponseError as e:
            if "unknown command" not in str(e):
                raise
    pytest.skip("no non-string type available on this server yet")


def stats(r):
    info = r.info("stats")
    return info["keyspace_hits"], info["keyspace_misses"]


def hello3(raw):
    reply = raw.execute("HELLO", "3")
    assert reply.startswith(b"%")


# --------------------------------------------------------------------------------------------
# SET


def test_set_and_get_basic(r):
    assert r.set("k", "v") is True
    assert r.get("k") == b"v"
    assert r.set("k", "w") is True
    assert r.get("k") == b"w"


def test_set_binary_and_empty_values(r):
    value = bytes(range(256)) * 3
    r.set("bin", value)
    assert r.get("bin") == value
    r.set("empty", "")
    assert r.get("empty") == b""
    assert r.strlen("empty") == 0


def test_set_replaces_other_types(r):
    make_nonstring(r, "k")
    assert r.set("k", "v") is True
    assert r.type("k") == b"string"
    assert r.get("k") == b"v"


def test_set_arity(raw):
    assert err(raw, "SET", "k") == arity("set")
    assert err(raw, "SET") == arity("set")


def test_set_nx_xx(r):
    assert r.set("k", "1", nx=True) is True
    assert r.set("k", "2", nx=True) is None
    assert r.get("k") == b"1"
    assert r.set("k", "3", xx=True) is True
    assert r.get("k") == b"3"
    assert r.set("missing", "x", xx=True) is None
    assert r.exists("missing") == 0


def test_set_options_case_insensitive_and_repeatable(r, raw):
    assert raw.execute("SET", "k", "v", "nx") == b"+OK\r\n"
    assert raw.execute("SET", "k", "w", "xX", "Xx") == b"+OK\r\n"
    assert r.get("k") == b"w"
    # The same expire option given twice: the last one wins.
    assert raw.execute("SET", "k", "v", "EX", "100", "ex", "200") == b"+OK\r\n"
    assert 190 <= r.ttl("k") <= 200
    assert raw.execute("SET", "k", "v", "GET", "GET") == b"$1\r\nv\r\n"


@pytest.mark.parametrize("opts", [
    ["NX", "XX"], ["XX", "NX"], ["EX", "10", "PX", "100"], ["PX", "100", "EX", "10"],
    ["EX", "10", "EXAT", "99999999999"], ["PXAT", "99999999999999", "PX", "10"],
    ["EX", "10", "KEEPTTL"], ["KEEPTTL", "EX", "10"], ["KEEPTTL", "PXAT", "1"],
    ["EX"], ["PX"], ["EXAT"], ["PXAT"], ["NX", "EX"], ["PERSIST"], ["FOO"], ["GETX"],
    ["EX", "10", "BAR"], ["NXX"],
])
def test_set_syntax_errors(r, raw, opts):
    r.set("k", "old")
    assert err(raw, "SET", "k", "v", *opts) == SYNTAX
    assert r.get("k") == b"old"


def test_set_syntax_error_wins_over_bad_expire(raw):
    assert err(raw, "SET", "k", "v", "EX", "0", "NX", "XX") == SYNTAX
    assert err(raw, "SET", "k", "v", "EX", "abc", "KEEPTTL") == SYNTAX


@pytest.mark.parametrize("opts,expected", [
    (["EX", "0"], invalid_expire("set")),
    (["EX", "-1"], invalid_expire("set")),
    (["PX", "0"], invalid_expire("set")),
    (["PX", "-100"], invalid_expire("set")),
    (["EXAT", "0"], invalid_expire("set")),
    (["PXAT", "-5"], invalid_expire("set")),
    # Seconds that overflow once multiplied by 1000.
    (["EX", str(INT64_MAX)], invalid_expire("set")),
    (["EXAT", str(INT64_MAX // 1000 + 1)], invalid_expire("set")),
    # Relative times that overflow once added to the current time.
    (["EX", str(INT64_MAX // 1000)], invalid_expire("set")),
    (["PX", str(INT64_MAX)], invalid_expire("set")),
    (["EX", "abc"], NOT_INT),
    (["EX", "1.5"], NOT_INT),
    (["PX", " 10"], NOT_INT),
    (["EX", str(INT64_MAX + 1)], NOT_INT),
])
def test_set_invalid_expire(r, raw, opts, expected):
    r.set("k", "old")
    assert err(raw, "SET", "k", "v", *opts) == expected
    assert r.get("k") == b"old"


def test_set_far_future_absolute_expire_is_valid(r, raw):
    assert raw.execute("SET", "k", "v", "PXAT", str(INT64_MAX)) == b"+OK\r\n"
    assert r.pttl("k") > 10 ** 18
    assert raw.execute("SET", "k", "v", "EXAT", str(INT64_MAX // 1000)) == b"+OK\r\n"
    assert r.ttl("k") > 10 ** 15


def test_set_expire_options_set_ttl(r):
    now_ms = int(time.time() * 1000)
    r.set("ex", "v", ex=100)
    assert 99_000 <= r.pttl("ex") <= 100_000
    r.set("px", "v", px=100_000)
    assert 99_000 <= r.pttl("px") <= 100_000
    r.set("exat", "v", exat=now_ms // 1000 + 100)
    assert 98 <= r.ttl("exat") <= 101
    r.set("pxat", "v", pxat=now_ms + 100_000)
    assert 98_000 <= r.pttl("pxat") <= 100_000


def test_set_removes_ttl_unless_keepttl(r):
    r.set("k", "v", ex=100)
    r.set("k", "w")
    assert r.ttl("k") == -1
    r.set("k", "v", ex=100)
    assert r.set("k", "w", keepttl=True) is True
    assert 99 <= r.ttl("k") <= 100
    assert r.get("k") == b"w"
    # A new expire replaces the old one.
    r.set("k", "x", px=500_000)
    assert 490_000 <= r.pttl("k") <= 500_000


def test_set_expire_in_the_past_deletes_key(r, raw):
    r.set("k", "v")
    assert raw.execute("SET", "k", "w", "PXAT", "1") == b"+OK\r\n"
    assert r.exists("k") == 0
    assert raw.execute("SET", "new", "w", "EXAT", "1") == b"+OK\r\n"
    assert r.exists("new") == 0
    r.set("k", "old")
    assert raw.execute("SET", "k", "w", "PXAT", "1", "GET") == b"$3\r\nold\r\n"
    assert r.get("k") is None


def test_set_px_expires(r):
    r.set("k", "v", px=50)
    assert r.get("k") == b"v"
    wait_for(lambda: r.exists("k") == 0, timeout=5)
    assert r.get("k") is None


def test_set_get_option(r, raw):
    assert r.set("k", "1", get=True) is None
    assert r.get("k") == b"1"
    assert r.set("k", "2", get=True) == b"1"
    assert r.get("k") == b"2"
    # Integer-encoded old values come back as their text.
    r.set("n", 12345)
    assert r.set("n", "x", get=True) == b"12345"


def test_set_get_with_conditions(r):
    r.set("k", "old")
    # NX on an existing key: replies the old value, sets nothing.
    assert r.set("k", "new", nx=True, get=True) == b"old"
    assert r.get("k") == b"old"
    # XX on a missing key: replies nil, sets nothing.
    assert r.set("missing", "new", xx=True, get=True) is None
    assert r.exists("missing") == 0
    assert r.set("k", "new", xx=True, get=True) == b"old"
    assert r.get("k") == b"new"
    assert r.set("fresh", "v", nx=True, get=True) is None
    assert r.get("fresh") == b"v"


def test_set_get_wrongtype_does_not_set(r, raw):
    make_nonstring(r, "k")
    assert err(raw, "SET", "k", "v", "GET") == WRONGTYPE
    assert r.type("k") != b"string"
    # The expire time is validated before the old value is read.
    assert err(raw, "SET", "k", "v", "GET", "EX", "0") == invalid_expire("set")


def test_set_get_keeps_ttl_semantics(r, raw):
    r.set("k", "v", ex=100)
    assert r.set("k", "w", get=True) == b"v"
    assert r.ttl("k") == -1
    r.set("k", "v", ex=100)
    assert raw.execute("SET", "k", "w", "GET", "KEEPTTL") == b"$1\r\nv\r\n"
    assert r.ttl("k") > 0


def test_setnx(r, raw):
    assert r.setnx("k", "1") is True
    assert r.setnx("k", "2") is False
    assert r.get("k") == b"1"
    assert raw.execute("SETNX", "k", "3") == b":0\r\n"
    assert raw.execute("SETNX", "k2", "3") == b":1\r\n"
    assert err(raw, "SETNX", "k") == arity("setnx")
    assert err(raw, "SETNX", "k", "v", "x") == arity("setnx")


def test_setnx_on_other_type_is_zero(r):
    make_nonstring(r, "k")
    assert r.setnx("k", "v") is False


def test_setex_psetex(r, raw):
    assert r.setex("k", 100, "v") is True
    assert r.get("k") == b"v"
    assert 99 <= r.ttl("k") <= 100
    assert r.psetex("p", 100_000, "v") is True
    assert 99_000 <= r.pttl("p") <= 100_000
    # Overwrites the value and the TTL.
    r.setex("k", 500, "w")
    assert r.get("k") == b"w"
    assert 490 <= r.ttl("k") <= 500


@pytest.mark.parametrize("cmd", ["SETEX", "PSETEX"])
def test_setex_psetex_errors(r, raw, cmd):
    name = cmd.lower()
    assert err(raw, cmd, "k", "0", "v") == invalid_expire(name)
    assert err(raw, cmd, "k", "-10", "v") == invalid_expire(name)
    assert err(raw, cmd, "k", "abc", "v") == NOT_INT
    assert err(raw, cmd, "k", "10") == arity(name)
    assert err(raw, cmd, "k", "10", "v", "x") == arity(name)
    assert err(raw, cmd, "k", str(INT64_MAX), "v") == invalid_expire(name)
    assert r.exists("k") == 0


def test_psetex_expires(r):
    r.psetex("k", 50, "v")
    wait_for(lambda: r.get("k") is None, timeout=5)


# --------------------------------------------------------------------------------------------
# GET, GETSET, GETDEL, GETEX


def test_get(r, raw):
    assert r.get("missing") is None
    assert raw.execute("GET", "missing") == b"$-1\r\n"
    r.set("k", "hello")
    assert raw.execute("GET", "k") == b"$5\r\nhello\r\n"
    assert err(raw, "GET") == arity("get")
    assert err(raw, "GET", "a", "b") == arity("get")


def test_get_wrongtype(r, raw):
    make_nonstring(r, "k")
    assert err(raw, "GET", "k") == WRONGTYPE


def test_get_integer_values_round_trip(r):
    for v in ["0", "-1", "12345", str(INT64_MAX), str(INT64_MIN), "01", "-0", "+1", " 1",
              "1.0", str(INT64_MAX + 1), "123456789012345678901"]:
        r.set("k", v)
        assert r.get("k") == v.encode()
        assert r.strlen("k") == len(v)


def test_getset(r, raw):
    assert r.getset("k", "1") is None
    assert r.get("k") == b"1"
    assert r.getset("k", "2") == b"1"
    assert r.get("k") == b"2"
    r.set("t", "v", ex=100)
    assert r.getset("t", "w") == b"v"
    assert r.ttl("t") == -1
    make_nonstring(r, "l")
    assert err(raw, "GETSET", "l", "v") == WRONGTYPE
    assert r.type("l") != b"string"
    assert err(raw, "GETSET", "k") == arity("getset")


def test_getdel(r, raw):
    assert r.getdel("missing") is None
    r.set("k", "v", ex=100)
    assert r.getdel("k") == b"v"
    assert r.exists("k") == 0
    r.set("n", 42)
    assert r.getdel("n") == b"42"
    make_nonstring(r, "l")
    assert err(raw, "GETDEL", "l") == WRONGTYPE
    assert r.exists("l") == 1
    assert err(raw, "GETDEL") == arity("getdel")
    assert err(raw, "GETDEL", "a", "b") == arity("getdel")


def test_getex_without_options_keeps_ttl(r):
    r.set("k", "v", ex=100)
    assert r.getex("k") == b"v"
    assert 99 <= r.ttl("k") <= 100
    r.set("p", "v")
    assert r.getex("p") == b"v"
    assert r.ttl("p") == -1


def test_getex_sets_expire(r):
    now_ms = int(time.time() * 1000)
    r.set("k", "v")
    assert r.getex("k", ex=100) == b"v"
    assert 99 <= r.ttl("k") <= 100
    assert r.getex("k", px=200_000) == b"v"
    assert 199_000 <= r.pttl("k") <= 200_000
    assert r.getex("k", exat=now_ms // 1000 + 300) == b"v"
    assert 298 <= r.ttl("k") <= 301
    assert r.getex("k", pxat=now_ms + 400_000) == b"v"
    assert 398_000 <= r.pttl("k") <= 400_000
    assert r.getex("k", persist=True) == b"v"
    assert r.ttl("k") == -1
    assert r.getex("k", persist=True) == b"v"


def test_getex_past_absolute_time_deletes(r):
    r.set("k", "v")
    assert r.execute_command("GETEX", "k", "PXAT", "1") == b"v"
    assert r.exists("k") == 0
    r.set("k", "v")
    assert r.execute_command("GETEX", "k", "EXAT", "1") == b"v"
    assert r.exists("k") == 0


def test_getex_px_expires(r):
    r.set("k", "v")
    assert r.getex("k", px=50) == b"v"
    wait_for(lambda: r.exists("k") == 0, timeout=5)


@pytest.mark.parametrize("opts", [
    ["EX", "10", "PX", "10"], ["PERSIST", "EX", "10"], ["EX", "10", "PERSIST"],
    ["NX"], ["XX"], ["GET"], ["KEEPTTL"], ["EX"], ["PXAT"], ["FOO"],
])
def test_getex_syntax_errors(r, raw, opts):
    r.set("k", "v", ex=100)
    assert err(raw, "GETEX", "k", *opts) == SYNTAX
    assert r.ttl("k") > 0


def test_getex_errors(r, raw):
    r.set("k", "v")
    assert err(raw, "GETEX", "k", "EX", "0") == invalid_expire("getex")
    assert err(raw, "GETEX", "k", "PXAT", "-1") == invalid_expire("getex")
    assert err(raw, "GETEX", "k", "EX", str(INT64_MAX)) == invalid_expire("getex")
    assert err(raw, "GETEX", "k", "EX", "x") == NOT_INT
    assert r.ttl("k") == -1
    # A missing key replies nil before the expire time is even looked at.
    assert raw.execute("GETEX", "missing", "EX", "0") == b"$-1\r\n"
    assert raw.execute("GETEX", "missing", "EX", "abc") == b"$-1\r\n"
    # ... but option syntax is checked first.
    assert err(raw, "GETEX", "missing", "NX") == SYNTAX
    make_nonstring(r, "l")
    assert err(raw, "GETEX", "l") == WRONGTYPE
    assert err(raw, "GETEX", "l", "EX", "0") == WRONGTYPE
    assert err(raw, "GETEX") == arity("getex")


# --------------------------------------------------------------------------------------------
# MGET, MSET, MSETNX


def test_mget(r, raw):
    r.set("a", "1")
    r.set("b", "two")
    make_nonstring(r, "l")
    assert r.mget("a", "missing", "b", "l", "a") == [b"1", None, b"two", None, b"1"]
    assert raw.execute("MGET", "missing", "a") == b"*2\r\n$-1\r\n$1\r\n1\r\n"
    assert err(raw, "MGET") == arity("mget")


def test_mset(r, raw):
    assert r.mset({"a": "1", "b": "2"}) is True
    assert r.mget("a", "b") == [b"1", b"2"]
    r.set("t", "v", ex=100)
    assert raw.execute("MSET", "t", "x", "dup", "1", "dup", "2") == b"+OK\r\n"
    assert r.ttl("t") == -1
    assert r.get("dup") == b"2"
    assert err(raw, "MSET", "a") == arity("mset")
    assert err(raw, "MSET", "a", "1", "b") == arity("mset")
    assert err(raw, "MSET") == arity("mset")


def test_mset_replaces_other_types(r):
    make_nonstring(r, "l")
    r.mset({"l": "v"})
    assert r.get("l") == b"v"


def test_msetnx(r, raw):
    assert r.msetnx({"a": "1", "b": "2"}) is True
    assert r.msetnx({"b": "x", "c": "3"}) is False
    assert r.get("b") == b"2"
    assert r.exists("c") == 0
    # A key given twice is set once, the last value winning.
    assert r.execute_command("MSETNX", "d", "1", "d", "2") == 1
    assert r.get("d") == b"2"
    make_nonstring(r, "l")
    assert r.msetnx({"l": "v", "e": "1"}) is False
    assert err(raw, "MSETNX", "a", "1", "b") == arity("msetnx")
    assert err(raw, "MSETNX", "a") == arity("msetnx")


def test_msetnx_sees_expired_keys_as_missing(r):
    r.set("a", "1", px=50)
    wait_for(lambda: r.pttl("a") == -2, timeout=5)
    assert r.msetnx({"a": "2"}) is True
    assert r.get("a") == b"2"


# --------------------------------------------------------------------------------------------
# APPEND, STRLEN


def test_append(r, raw):
    assert r.append("k", "Hello") == 5
    assert r.append("k", " World") == 11
    assert r.get("k") == b"Hello World"
    assert r.append("k", "") == 11
    r.set("n", 12)
    assert r.append("n", 34) == 4
    assert r.get("n") == b"1234"
    make_nonstring(r, "l")
    assert err(raw, "APPEND", "l", "x") == WRONGTYPE
    assert err(raw, "APPEND", "k") == arity("append")


def test_append_keeps_ttl(r):
    r.set("k", "v", ex=100)
    r.append("k", "w")
    assert r.ttl("k") > 0


def test_strlen(r, raw):
    assert r.strlen("missing") == 0
    r.set("k", "hello")
    assert r.strlen("k") == 5
    r.set("n", -12345)
    assert r.strlen("n") == 6
    r.set("e", "")
    assert r.strlen("e") == 0
    make_nonstring(r, "l")
    assert err(raw, "STRLEN", "l") == WRONGTYPE
    assert err(raw, "STRLEN") == arity("strlen")


# --------------------------------------------------------------------------------------------
# Encodings


def encoding(r, key):
    return r.object("encoding", key)


def test_encodings_of_set_values(r):
    cases = {"123": b"int", "-9223372036854775808": b"int", str(INT64_MAX): b"int",
             str(INT64_MAX + 1): b"embstr", "01": b"embstr", "-0": b"embstr",
             "abc": b"embstr", "x" * 44: b"embstr", "x" * 45: b"raw", "": b"embstr"}
    for value, expected in cases.items():
        r.set("k", value)
        assert encoding(r, "k") == expected, value


def test_encoding_changes(r):
    r.incr("c")
    assert encoding(r, "c") == b"int"
    r.incrby("c", 1000000)
    assert encoding(r, "c") == b"int"
    r.append("c", "1")
    assert encoding(r, "c") == b"raw"
    # INCR on a raw string holding an integer turns it back into an int.
    r.incr("c")
    assert encoding(r, "c") == b"int"
    r.append("new", "42")
    assert encoding(r, "new") == b"int"
    r.set("s", "abc")
    r.setrange("s", 1, "x")
    assert encoding(r, "s") == b"raw"
    r.setrange("fresh", 0, "x")
    assert encoding(r, "fresh") == b"raw"
    r.set("i", 10)
    r.setrange("i", 0, "2")
    assert encoding(r, "i") == b"raw"
    assert r.get("i") == b"20"
    # INCRBYFLOAT stores text, even for integral results.
    r.set("f", 10)
    assert r.incrbyfloat("f", 1) == 11.0
    assert encoding(r, "f") == b"embstr"
    r.mset({"m": "77"})
    assert encoding(r, "m") == b"int"


# --------------------------------------------------------------------------------------------
# GETRANGE / SUBSTR / SETRANGE


@pytest.mark.parametrize("cmd", ["GETRANGE", "SUBSTR"])
@pytest.mark.parametrize("start,end,expected", [
    (0, 4, b"Hello"), (0, -1, b"Hello World"), (-5, -1, b"World"), (-3, -1, b"rld"),
    (6, 100, b"World"), (5, 3, b""), (-1, -5, b""), (0, -100, b"H"), (-100, -50, b"H"),
    (-100, 2, b"Hel"), (10, 10, b"d"), (11, 20, b""), (INT64_MAX, INT64_MIN, b""),
    (INT64_MIN, INT64_MAX, b"Hello World"), (INT64_MIN, INT64_MIN, b"H"),
])
def test_getrange(r, cmd, start, end, expected):
    r.set("k", "Hello World")
    assert r.execute_command(cmd, "k", start, end) == expected


def test_getrange_special_cases(r, raw):
    assert raw.execute("GETRANGE", "missing", "0", "-1") == b"$0\r\n\r\n"
    r.set("n", 123456)
    assert r.getrange("n", 1, 3) == b"234"
    assert r.getrange("n", -2, -1) == b"56"
    r.set("e", "")
    assert raw.execute("GETRANGE", "e", "0", "-1") == b"$0\r\n\r\n"
    assert raw.execute("GETRANGE", "e", "-1", "0") == b"$0\r\n\r\n"
    assert err(raw, "GETRANGE", "missing", "a", "1") == NOT_INT
    assert err(raw, "GETRANGE", "n", "0", "1.5") == NOT_INT
    assert err(raw, "GETRANGE", "n", "0", str(INT64_MAX + 1)) == NOT_INT
    make_nonstring(r, "l")
    assert err(raw, "GETRANGE", "l", "0", "1") == WRONGTYPE
    assert err(raw, "SUBSTR", "l", "0", "1") == WRONGTYPE
    assert err(raw, "GETRANGE", "k", "0") == arity("getrange")
    assert err(raw, "SUBSTR", "k", "0") == arity("substr")


def test_setrange(r, raw):
    r.set("k", "Hello World")
    assert r.setrange("k", 6, "Redis") == 11
    assert r.get("k") == b"Hello Redis"
    assert r.setrange("k", 11, "!!") == 13
    assert r.get("k") == b"Hello Redis!!"
    assert r.setrange("pad", 5, "x") == 6
    assert r.get("pad") == b"\x00\x00\x00\x00\x00x"
    assert r.setrange("k", 20, "") == 13
    assert r.get("k") == b"Hello Redis!!"
    # Nothing to write on a missing key: no key is created.
    assert r.setrange("none", 10, "") == 0
    assert r.exists("none") == 0
    r.set("n", 1234)
    assert r.setrange("n", 1, "9") == 4
    assert r.get("n") == b"1934"


def test_setrange_keeps_ttl(r):
    r.set("k", "v", ex=100)
    r.setrange("k", 0, "w")
    assert r.ttl("k") > 0


def test_setrange_on_a_new_key_allocates_its_length(r):
    # Zeros then the patch, sized once: not doubled by appending the patch (Redis's unit/maxmemory
    # fills 5 MB this way and expects 5 MB).
    assert r.setrange("grown", 100_000, "x") == 100_001
    assert 100_001 <= r.memory_usage("grown") < 110_000


def test_setrange_errors(r, raw):
    assert err(raw, "SETRANGE", "k", "-1", "x") == "ERR offset is out of range"
    assert err(raw, "SETRANGE", "k", "-1", "") == "ERR offset is out of range"
    assert err(raw, "SETRANGE", "k", "abc", "x") == NOT_INT
    assert err(raw, "SETRANGE", "k", str(INT64_MAX + 1), "x") == NOT_INT
    too_big = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
    assert err(raw, "SETRANGE", "k", str(512 * 1024 * 1024), "x") == too_big
    assert err(raw, "SETRANGE", "k", str(INT64_MAX), "x") == too_big
    assert r.exists("k") == 0
    make_nonstring(r, "l")
    assert err(raw, "SETRANGE", "l", "0", "x") == WRONGTYPE
    assert err(raw, "SETRANGE", "l", "0", "") == WRONGTYPE
    assert err(raw, "SETRANGE", "l", "-1", "x") == "ERR offset is out of range"
    assert err(raw, "SETRANGE", "k", "0") == arity("setrange")


def test_string_size_limit_follows_proto_max_bulk_len(server_factory):
    srv = server_factory(["--proto-max-bulk-len", "1mb"])
    r = srv.client()
    raw = srv.raw()
    too_big = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
    limit = 1024 * 1024
    assert r.setrange("k", limit - 1, "x") == limit
    assert err(raw, "SETRANGE", "k", str(limit), "x") == too_big
    assert err(raw, "SETRANGE", "k", str(limit - 1), "xy") == too_big
    assert err(raw, "APPEND", "k", "x") == too_big
    assert r.strlen("k") == limit
    assert err(raw, "SETRANGE", "other", str(limit), "x") == too_big
    assert r.exists("other") == 0
    r.set("small", "x" * 100)
    assert err(raw, "APPEND", "small", "y" * (limit - 99)) == too_big
    assert r.append("small", "y" * (limit - 100)) == limit


# --------------------------------------------------------------------------------------------
# INCR / DECR / INCRBY / DECRBY


def test_incr_decr(r):
    assert r.incr("k") == 1
    assert r.incr("k") == 2
    assert r.decr("k") == 1
    assert r.decr("d") == -1
    assert r.incrby("k", 10) == 11
    assert r.incrby("k", -20) == -9
    assert r.decrby("k", 1) == -10
    assert r.decrby("k", -15) == 5
    assert r.get("k") == b"5"


def test_incr_parses_string_values(r):
    r.set("k", "41")
    assert r.incr("k") == 42
    r.append("raw", "1")
    r.append("raw", "0")
    assert r.incr("raw") == 11


@pytest.mark.parametrize("value", ["abc", "1.5", " 1", "1 ", "01", "+1", "-0", "",
                                   str(INT64_MAX + 1), "123456789012345678901", "1e3"])
def test_incr_non_integer_value(r, raw, value):
    r.set("k", value)
    assert err(raw, "INCR", "k") == NOT_INT
    assert err(raw, "DECRBY", "k", "1") == NOT_INT
    assert r.get("k") == value.encode()


def test_incr_keeps_ttl(r):
    r.set("k", 1, ex=100)
    assert r.incr("k") == 2
    assert 99 <= r.ttl("k") <= 100
    r.set("s", "5", ex=100)
    r.append("s", "0")
    assert r.incrby("s", 1) == 51
    assert r.ttl("s") > 0


def test_incr_overflow(r, raw):
    overflow = "ERR increment or decrement would overflow"
    r.set("max", INT64_MAX)
    assert err(raw, "INCR", "max") == overflow
    assert err(raw, "INCRBY", "max", "1") == overflow
    assert r.incrby("max", 0) == INT64_MAX
    assert r.decr("max") == INT64_MAX - 1
    r.set("min", INT64_MIN)
    assert err(raw, "DECR", "min") == overflow
    assert err(raw, "INCRBY", "min", "-1") == overflow
    assert err(raw, "DECRBY", "min", "1") == overflow
    assert r.get("min") == str(INT64_MIN).encode()
    assert r.incrby("zero", INT64_MIN) == INT64_MIN
    assert r.incrby("zero2", INT64_MAX) == INT64_MAX
    r.set("neg", -1)
    assert r.incrby("neg", INT64_MIN + 1) == INT64_MIN
    assert err(raw, "DECRBY", "x", str(INT64_MIN)) == "ERR decrement would overflow"
    assert r.decrby("x", INT64_MAX) == -INT64_MAX


def test_incr_argument_errors(r, raw):
    for bad in ["abc", "1.0", str(INT64_MAX + 1), str(INT64_MIN - 1), "", " 1"]:
        assert err(raw, "INCRBY", "k", bad) == NOT_INT
        assert err(raw, "DECRBY", "k", bad) == NOT_INT
    assert r.exists("k") == 0
    make_nonstring(r, "l")
    for args in (["INCR", "l"], ["DECR", "l"], ["INCRBY", "l", "1"], ["DECRBY", "l", "1"],
                 ["INCRBYFLOAT", "l", "1"]):
        assert err(raw, *args) == WRONGTYPE
    assert err(raw, "INCR") == arity("incr")
    assert err(raw, "INCR", "a", "b") == arity("incr")
    assert err(raw, "DECR") == arity("decr")
    assert err(raw, "INCRBY", "k") == arity("incrby")
    assert err(raw, "DECRBY", "k") == arity("decrby")
    assert err(raw, "INCRBYFLOAT", "k") == arity("incrbyfloat")


def test_incr_reply_type(raw):
    assert raw.execute("INCR", "k") == b":1\r\n"
    assert raw.execute("DECRBY", "k", "5") == b":-4\r\n"


# --------------------------------------------------------------------------------------------
# INCRBYFLOAT


def test_incrbyfloat(r, raw):
    r.set("k", "10.50")
    assert raw.execute("INCRBYFLOAT", "k", "0.1") == b"$4\r\n10.6\r\n"
    assert raw.execute("INCRBYFLOAT", "k", "-5") == b"$3\r\n5.6\r\n"
    r.set("e", "5.0e3")
    assert raw.execute("INCRBYFLOAT", "e", "2.0e2") == b"$4\r\n5200\r\n"
    assert raw.execute("INCRBYFLOAT", "new", "1") == b"$1\r\n1\r\n"
    assert raw.execute("INCRBYFLOAT", "h", "0.1") == b"$3\r\n0.1\r\n"
    assert raw.execute("INCRBYFLOAT", "h", "0.2") == b"$3\r\n0.3\r\n"
    assert r.get("h") == b"0.3"
    assert raw.execute("INCRBYFLOAT", "z", "-0") == b"$1\r\n0\r\n"
    assert raw.execute("INCRBYFLOAT", "tiny", "1.0e-20") == b"$1\r\n0\r\n"
    r.set("p", "1.23456789012345678")
    assert r.incrbyfloat("p", 0) == pytest.approx(1.2345678901234568)
    assert r.get("p") == b"1.23456789012345678"
    r.set("i", 10)
    assert raw.execute("INCRBYFLOAT", "i", "1.5") == b"$4\r\n11.5\r\n"
    assert raw.execute("INCRBYFLOAT", "hex", "0x10") == b"$2\r\n16\r\n"


def test_incrbyfloat_keeps_ttl(r):
    r.set("k", "1", ex=100)
    r.incrbyfloat("k", 1.5)
    assert 99 <= r.ttl("k") <= 100


def test_incrbyfloat_long_double_range(r, raw):
    # Long doubles hold far more than doubles: 1e400 is fine and printed in full.
    assert raw.execute("INCRBYFLOAT", "k", "1e400").startswith(b"$401\r\n1000000000000000000")
    assert r.strlen("k") == 401


def test_incrbyfloat_errors(r, raw):
    nan_inf = "ERR increment would produce NaN or Infinity"
    assert err(raw, "INCRBYFLOAT", "k", "inf") == nan_inf
    assert err(raw, "INCRBYFLOAT", "k", "-inf") == nan_inf
    assert err(raw, "INCRBYFLOAT", "k", "nan") == NOT_FLOAT
    assert r.exists("k") == 0
    for bad in ["abc", "", " 1", "1 ", "1.5x", "1,5"]:
        assert err(raw, "INCRBYFLOAT", "k", bad) == NOT_FLOAT
    for bad in ["abc", "  3", "3 ", "1.5.5"]:
        r.set("v", bad)
        assert err(raw, "INCRBYFLOAT", "v", "1") == NOT_FLOAT
        assert r.get("v") == bad.encode()
    r.set("big", "1e4932")
    assert err(raw, "INCRBYFLOAT", "big", "1e4932") == nan_inf
    assert r.get("big") == b"1e4932"


# --------------------------------------------------------------------------------------------
# LCS


def test_lcs(r, raw):
    r.mset({"a": "ohmytext", "b": "mynewtext"})
    assert r.execute_command("LCS", "a", "b") == b"mytext"
    assert r.execute_command("LCS", "a", "b", "LEN") == 6
    assert r.execute_command("LCS", "a", "b", "len") == 6
    assert raw.execute("LCS", "a", "b", "LEN") == b":6\r\n"
    assert r.execute_command("LCS", "a", "b", "IDX") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert r.execute_command("LCS", "a", "b", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN") == [
        b"matches", [[[4, 7], [5, 8], 4]], b"len", 6]
    assert r.execute_command("LCS", "a", "b", "IDX", "WITHMATCHLEN") == [
        b"matches", [[[4, 7], [5, 8], 4], [[2, 3], [0, 1], 2]], b"len", 6]
    # Negative minimum lengths count as zero; WITHMATCHLEN alone changes nothing.
    assert r.execute_command("LCS", "a", "b", "IDX", "MINMATCHLEN", "-5") == [
        b"matches", [[[4, 7], [5, 8]], [[2, 3], [0, 1]]], b"len", 6]
    assert r.execute_command("LCS", "a", "b", "WITHMATCHLEN", "MINMATCHLEN", "3") == b"mytext"


def test_lcs_tie_breaking_matches_redis(r):
    r.mset({"c": "abcab", "d": "bacba"})
    assert r.execute_command("LCS", "c", "d") == b"bab"
    assert r.execute_command("LCS", "c", "d", "IDX") == [
        b"matches", [[[4, 4], [3, 3]], [[3, 3], [1, 1]], [[1, 1], [0, 0]]], b"len", 3]


def test_lcs_missing_and_integer_keys(r, raw):
    assert raw.execute("LCS", "x", "y") == b"$0\r\n\r\n"
    assert r.execute_command("LCS", "x", "y", "LEN") == 0
    assert r.execute_command("LCS", "x", "y", "IDX") == [b"matches", [], b"len", 0]
    r.set("n", 1234512)
    r.set("s", "abc1x2")
    assert r.execute_command("LCS", "n", "s") == b"12"
    assert r.execute_command("LCS", "n", "missing") == b""


def test_lcs_errors(r, raw):
    r.mset({"a": "ohmytext", "b": "mynewtext"})
    assert err(raw, "LCS", "a", "b", "IDX", "LEN") == \
        "ERR If you want both the length and indexes, please just use IDX."
    assert err(raw, "LCS", "a", "b", "FOO") == SYNTAX
    assert err(raw, "LCS", "a", "b", "MINMATCHLEN") == SYNTAX
    assert err(raw, "LCS", "a", "b", "MINMATCHLEN", "x") == NOT_INT
    assert err(raw, "LCS", "a") == arity("lcs")
    make_nonstring(r, "l")
    wrong = "ERR The specified keys must contain string values"
    assert err(raw, "LCS", "l", "a") == wrong
    assert err(raw, "LCS", "a", "l") == wrong
    # The key types are checked before the options.
    assert err(raw, "LCS", "a", "l", "FOO") == wrong


def test_lcs_table_limit(server_factory):
    srv = server_factory(["--proto-max-bulk-len", "1mb"])
    r = srv.client()
    raw = srv.raw()
    r.set("a", "x" * 400)
    r.set("b", "x" * 400)
    # The table takes (401 * 401 * 4) bytes < 1mb
    assert r.execute_command("LCS", "a", "b", "LEN") == 400
    assert r.execute_command("LCS", "a", "b") == b"x" * 400
    r.set("b", "x" * 700)
    expected = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
    assert err(raw, "LCS", "a", "b", "LEN") == expected
    assert err(raw, "LCS", "a", "b") == expected


def test_lcs_resp3(r, raw):
    r.mset({"a": "ohmytext", "b": "mynewtext"})
    hello3(raw)
    assert raw.execute("LCS", "a", "b", "IDX", "WITHMATCHLEN", "MINMATCHLEN", "4") == (
        b"%2\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n"
        b"$3\r\nlen\r\n:6\r\n")
    assert raw.execute("LCS", "a", "b") == b"$6\r\nmytext\r\n"
    assert raw.execute("LCS", "a", "b", "LEN") == b":6\r\n"


# --------------------------------------------------------------------------------------------
# Reply shapes in RESP2 and RESP3


def test_resp2_reply_shapes(r, raw):
    assert raw.execute("SET", "k", "v") == b"+OK\r\n"
    assert raw.execute("SET", "k", "v", "NX") == b"$-1\r\n"
    assert raw.execute("SET", "k", "w", "GET") == b"$1\r\nv\r\n"
    assert raw.execute("SET", "k2", "w", "GET") == b"$-1\r\n"
    assert raw.execute("GETDEL", "nope") == b"$-1\r\n"
    assert raw.execute("GETEX", "nope") == b"$-1\r\n"
    assert raw.execute("GETSET", "nope", "x") == b"$-1\r\n"
    assert raw.execute("MSETNX", "k", "1") == b":0\r\n"
    assert raw.execute("MSET", "k", "1") == b"+OK\r\n"
    assert raw.execute("APPEND", "k", "2") == b":2\r\n"
    assert raw.execute("STRLEN", "k") == b":2\r\n"
    assert raw.execute("SETRANGE", "k", "0", "x") == b":2\r\n"
    assert raw.execute("SETEX", "e", "100", "v") == b"+OK\r\n"
    assert raw.execute("PSETEX", "e", "100000", "v") == b"+OK\r\n"


def test_resp3_reply_shapes(r, raw):
    hello3(raw)
    assert raw.execute("GET", "missing") == b"_\r\n"
    assert raw.execute("SET", "k", "v") == b"+OK\r\n"
    assert raw.execute("SET", "k", "v", "NX") == b"_\r\n"
    assert raw.execute("SET", "nope", "v", "XX") == b"_\r\n"
    assert raw.execute("SET", "k", "w", "GET") == b"$1\r\nv\r\n"
    assert raw.execute("MGET", "k", "missing") == b"*2\r\n$1\r\nw\r\n_\r\n"
    assert raw.execute("GETDEL", "missing") == b"_\r\n"
    assert raw.execute("GETEX", "missing") == b"_\r\n"
    assert raw.execute("GETSET", "fresh", "v") == b"_\r\n"
    assert raw.execute("INCR", "c") == b":1\r\n"
    # INCRBYFLOAT replies with a bulk string in RESP3 too.
    assert raw.execute("INCRBYFLOAT", "f", "1.5") == b"$3\r\n1.5\r\n"
    assert raw.execute("GETRANGE", "missing", "0", "1") == b"$0\r\n\r\n"
    assert raw.execute("SETNX", "k", "v") == b":0\r\n"
    assert raw.execute("LCS", "x", "y", "IDX") == b"%2\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n"


# --------------------------------------------------------------------------------------------
# Keyspace statistics, WATCH


def test_keyspace_hits_and_misses(r):
    r.set("a", "1")
    base_hits, base_misses = stats(r)

    def delta():
        hits, misses = stats(r)
        return hits - base_hits, misses - base_misses

    r.get("a")
    r.get("missing")
    assert delta() == (1, 1)
    r.mget("a", "missing", "a")
    assert delta() == (3, 2)
    r.strlen("a")
    r.getrange("missing", 0, 1)
    assert delta() == (4, 3)
    r.execute_command("LCS", "a", "missing")
    assert delta() == (5, 4)
    # Writing commands do not count...
    r.set("b", "2")
    r.incr("c")
    r.append("d", "x")
    r.setrange("e", 0, "x")
    r.mset({"f": "1"})
    r.msetnx({"g": "1"})
    r.setnx("a", "2")
    assert delta() == (5, 4)
    # ... except those that read the old value.
    r.set("a", "3", get=True)
    r.getset("missing2", "1")
    r.getdel("missing3")
    r.getex("a")
    assert delta() == (7, 6)


def test_writes_invalidate_watch(server, r):
    other = server.client()
    for write in (lambda: other.set("k", "x"), lambda: other.incr("k"),
                  lambda: other.append("k", "1"), lambda: other.setrange("k", 0, "9"),
                  lambda: other.mset({"k": "5"}), lambda: other.getdel("k"),
                  lambda: other.incrbyfloat("k", 1), lambda: other.getex("k", ex=100)):
        r.set("k", "1")
        with r.pipeline(transaction=True) as pipe:
            pipe.watch("k")
            write()
            pipe.multi()
            pipe.get("k")
            with pytest.raises(redis.WatchError):
                pipe.execute()


def test_failed_conditional_writes_do_not_invalidate_watch(server, r):
    other = server.client()
    r.set("k", "1")
    with r.pipeline(transaction=True) as pipe:
        pipe.watch("k")
        other.set("k", "x", nx=True)
        other.setnx("k", "x")
        other.msetnx({"k": "x"})
        other.getex("k")
        other.setrange("k", 5, "")
        pipe.multi()
        pipe.get("k")
        assert pipe.execute() == [b"1"]


def test_set_after_big_value_keeps_no_slack(r):
    # Redis 7.2's unit/type/string "trim on SET with big value" (run there only with jemalloc):
    # a value that once came in a large request buffer takes about its own size.
    r.set("key", "A" * 100000)
    r.set("key", "A" * 33000)
    assert r.memory_usage("key") < 42000
    assert r.strlen("key") == 33000


def test_big_request_buffer_is_released_when_idle(r):
    r.set("key", "A" * 100000)
    me = r.client_id()
    other = redis.Redis(host=r.connection_pool.connection_kwargs["host"],
                        port=r.connection_pool.connection_kwargs["port"])
    try:
        def query_buffer():
            return next(int(c["qbuf"]) + int(c["qbuf-free"]) for c in other.client_list()
                        if int(c["id"]) == me)
        wait_for(lambda: query_buffer() < 64 * 1024, timeout=10)
    finally:
        other.close()

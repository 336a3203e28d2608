"""Sorted sets: every command and option, their errors, reply shapes (RESP2 and RESP3), score
formatting, encodings at the thresholds, keyspace notifications and WATCH.

Expected replies are Redis 7.2's (checked side by side with redis-server where 7.0 agrees).
"""

import pytest
import redis

from conftest import call as x
from conftest import call_error as err

WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


@pytest.fixture
def z(plain):
    return plain


# --------------------------------------------------------------------------------------------
# ZADD / ZINCRBY


def test_zadd_basic_and_flags(z):
    assert x(z, "ZADD", "k", 1, "a", 2, "b") == 2
    assert x(z, "ZADD", "k", 3, "a") == 0
    assert x(z, "ZSCORE", "k", "a") == "3"
    assert x(z, "ZADD", "k", "CH", 4, "a", 5, "c") == 2
    assert x(z, "ZADD", "k", "NX", 10, "a", 6, "d") == 1
    assert x(z, "ZSCORE", "k", "a") == "4"
    assert x(z, "ZADD", "k", "XX", 10, "a", 7, "e") == 0
    assert x(z, "ZSCORE", "k", "a") == "10"
    assert x(z, "ZSCORE", "k", "e") is None
    assert x(z, "ZADD", "k", "GT", "CH", 1, "a", 20, "b") == 1
    assert x(z, "ZSCORE", "k", "a") == "10"
    assert x(z, "ZADD", "k", "LT", "CH", 1, "a", 30, "b") == 1
    assert x(z, "ZRANGE", "k", 0, -1, "WITHSCORES") == [
        "a", "1", "c", "5", "d", "6", "b", "20"]
    # GT/LT still add new members.
    assert x(z, "ZADD", "k", "GT", 0, "new") == 1


def test_zadd_incr(z):
    assert x(z, "ZADD", "k", "INCR", 1.5, "a") == "1.5"
    assert x(z, "ZADD", "k", "INCR", 1, "a") == "2.5"
    assert x(z, "ZADD", "k", "NX", "INCR", 1, "a") is None
    assert x(z, "ZADD", "k", "XX", "INCR", 1, "zz") is None
    assert x(z, "ZADD", "k", "GT", "INCR", -1, "a") is None
    assert x(z, "ZADD", "nokey", "XX", "INCR", 1, "a") is None
    assert x(z, "ZADD", "nokey", "XX", 1, "a") == 0
    assert x(z, "EXISTS", "nokey") == 0
    assert x(z, "ZINCRBY", "k", 10, "a") == "12.5"
    assert x(z, "ZINCRBY", "k", "-inf", "b") == "-inf"
    assert err(z, "ZINCRBY", "k", "+inf", "b") == "resulting score is not a number (NaN)"
    assert x(z, "ZSCORE", "k", "b") == "-inf"


def test_zadd_errors(z):
    assert err(z, "ZADD", "k", 1) == "wrong number of arguments for 'zadd' command"
    assert err(z, "ZADD", "k", 1, "a", 2) == "syntax error"
    assert err(z, "ZADD", "k", "NX", "XX", 1, "a") == (
        "XX and NX options at the same time are not compatible")
    for opts in (("GT", "LT"), ("NX", "GT"), ("NX", "LT")):
        assert err(z, "ZADD", "k", *opts, 1, "a") == (
            "GT, LT, and/or NX options at the same time are not compatible")
    assert err(z, "ZADD", "k", "INCR", 1, "a", 2, "b") == (
        "INCR option supports a single increment-element pair")
    for bad in ("x", "nan", "", " 1", "1e400", "1x"):
        assert err(z, "ZADD", "k", bad, "a") == "value is not a valid float"
    assert err(z, "ZINCRBY", "k", "x", "a") == "value is not a valid float"
    assert x(z, "EXISTS", "k") == 0
    z.set("s", "v")
    assert err(z, "ZADD", "s", 1, "a") == WRONGTYPE
    assert err(z, "ZINCRBY", "s", 1, "a") == WRONGTYPE


def test_score_formatting(z):
    cases = {"0.1": "0.1", "1.5": "1.5", "1e20": "1e+20", "3": "3", "-0": "0",
             "inf": "inf", "-inf": "-inf", "+inf": "inf", "0x10": "16",
             "1.7976931348623157e308": "1.7976931348623157e+308", "5e-324": "5e-324",
             "123456789012345678": "123456789012345680"}
    for i, (given, shown) in enumerate(cases.items()):
        x(z, "ZADD", "k", given, f"m{i}")
        assert x(z, "ZSCORE", "k", f"m{i}") == shown, given
    assert x(z, "ZINCRBY", "k", "0.2", "m0") == "0.30000000000000004"
    # A listpack keeps integral scores as integers, so -0 becomes 0; a skiplist keeps it.
    for i in range(130):
        x(z, "ZADD", "big", i, f"m{i}")
    x(z, "ZADD", "big", "-0", "neg")
    assert x(z, "ZSCORE", "big", "neg") == "-0"


def test_resp3_doubles_and_pairs(raw):
    raw.execute("HELLO", "3")
    raw.execute("ZADD", "k", "1.5", "a", "2", "b", "inf", "c")
    assert raw.execute("ZSCORE", "k", "a") == b",1.5\r\n"
    assert raw.execute("ZSCORE", "k", "c") == b",inf\r\n"
    assert raw.execute("ZRANGE", "k", "0", "0", "WITHSCORES") == b"*1\r\n*2\r\n$1\r\na\r\n,1.5\r\n"
    assert raw.execute("ZRANGE", "k", "0", "1") == b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert raw.execute("ZMSCORE", "k", "a", "nope") == b"*2\r\n,1.5\r\n_\r\n"
    assert raw.execute("ZRANK", "k", "b", "WITHSCORE") == b"*2\r\n:1\r\n,2\r\n"
    assert raw.execute("ZPOPMIN", "k") == b"*2\r\n$1\r\na\r\n,1.5\r\n"
    assert raw.execute("ZPOPMIN", "k", "1") == b"*1\r\n*2\r\n$1\r\nb\r\n,2\r\n"
    assert raw.execute("ZRANDMEMBER", "k", "1", "WITHSCORES") == b"*1\r\n*2\r\n$1\r\nc\r\n,inf\r\n"
    assert raw.execute("ZUNION", "1", "k", "WITHSCORES") == b"*1\r\n*2\r\n$1\r\nc\r\n,inf\r\n"
    assert raw.execute("ZMPOP", "1", "k", "MIN") == b"*2\r\n$1\r\nk\r\n*1\r\n*2\r\n$1\r\nc\r\n,inf\r\n"
    assert raw.execute("ZPOPMIN", "k") == b"*0\r\n"
    assert raw.execute("ZMPOP", "1", "k", "MIN") == b"_\r\n"


# --------------------------------------------------------------------------------------------
# ZREM, ZCARD, ZSCORE, ZMSCORE, ZRANK


def test_zrem_zcard_zscore(z):
    x(z, "ZADD", "k", 1, "a", 2, "b", 3, "c")
    assert x(z, "ZCARD", "k") == 3
    assert x(z, "ZCARD", "nokey") == 0
    assert x(z, "ZREM", "k", "a", "x", "a") == 1
    assert x(z, "ZMSCORE", "k", "b", "x", "c") == ["2", None, "3"]
    assert x(z, "ZMSCORE", "nokey", "b") == [None]
    assert x(z, "ZREM", "k", "b", "c") == 2
    assert x(z, "EXISTS", "k") == 0
    assert x(z, "ZREM", "k", "b") == 0
    assert err(z, "ZREM", "k") == "wrong number of arguments for 'zrem' command"
    assert err(z, "ZMSCORE", "k") == "wrong number of arguments for 'zmscore' command"
    z.set("s", "v")
    for cmd in (("ZREM", "s", "a"), ("ZCARD", "s"), ("ZSCORE", "s", "a"), ("ZMSCORE", "s", "a"),
                ("ZRANK", "s", "a")):
        assert err(z, *cmd) == WRONGTYPE


def test_zrank(z):
    x(z, "ZADD", "k", 1, "a", 2, "b", 3, "c")
    assert x(z, "ZRANK", "k", "a") == 0
    assert x(z, "ZREVRANK", "k", "a") == 2
    assert x(z, "ZRANK", "k", "c", "WITHSCORE") == [2, "3"]
    assert x(z, "ZREVRANK", "k", "c", "withscore") == [0, "3"]
    assert x(z, "ZRANK", "k", "x") is None
    assert x(z, "ZRANK", "k", "x", "WITHSCORE") is None
    assert x(z, "ZRANK", "nokey", "x") is None
    assert err(z, "ZRANK", "k", "a", "foo") == "syntax error"
    assert err(z, "ZRANK", "k", "a", "WITHSCORE", "x") == (
        "wrong number of arguments for 'zrank' command")


# --------------------------------------------------------------------------------------------
# Ranges


@pytest.fixture
def abc(z):
    x(z, "ZADD", "k", 1, "a", 2, "b", 3, "c", 4, "d", 5, "e")
    return z


def test_zrange_by_rank(abc):
    z = abc
    assert x(z, "ZRANGE", "k", 0, -1) == list("abcde")
    assert x(z, "ZRANGE", "k", 1, 2, "WITHSCORES") == ["b", "2", "c", "3"]
    assert x(z, "ZRANGE", "k", -2, 100) == ["d", "e"]
    assert x(z, "ZRANGE", "k", 3, 1) == []
    assert x(z, "ZRANGE", "k", 0, 1, "REV") == ["e", "d"]
    assert x(z, "ZREVRANGE", "k", 0, 1, "WITHSCORES") == ["e", "5", "d", "4"]
    assert x(z, "ZRANGE", "k", 0, -1, "LIMIT", 0, -1) == list("abcde")
    assert x(z, "ZRANGE", "nokey", 0, -1) == []


def test_zrange_by_score(abc):
    z = abc
    assert x(z, "ZRANGE", "k", "(1", 3, "BYSCORE") == ["b", "c"]
    assert x(z, "ZRANGE", "k", "-inf", "+inf", "BYSCORE", "LIMIT", 1, 2) == ["b", "c"]
    assert x(z, "ZRANGE", "k", "-inf", "+inf", "BYSCORE", "LIMIT", 1, -1) == ["b", "c", "d", "e"]
    assert x(z, "ZRANGE", "k", "-inf", "+inf", "BYSCORE", "LIMIT", -1, 2) == []
    assert x(z, "ZRANGE", "k", 4, 2, "BYSCORE", "REV") == ["d", "c", "b"]
    assert x(z, "ZRANGE", "k", 4, 2, "BYSCORE", "REV", "LIMIT", 1, 1, "WITHSCORES") == ["c", "3"]
    assert x(z, "ZRANGEBYSCORE", "k", 2, "(4", "WITHSCORES") == ["b", "2", "c", "3"]
    assert x(z, "ZRANGEBYSCORE", "k", "", 1) == ["a"]  # strtod: "" is 0
    assert x(z, "ZREVRANGEBYSCORE", "k", "+inf", "(3", "LIMIT", 0, 1) == ["e"]
    assert x(z, "ZRANGEBYSCORE", "k", 3, 2) == []
    assert x(z, "ZRANGEBYSCORE", "k", "(2", "(2") == []
    assert err(z, "ZRANGEBYSCORE", "k", "x", 2) == "min or max is not a float"
    assert err(z, "ZRANGEBYSCORE", "k", 1, "nan") == "min or max is not a float"
    assert err(z, "ZRANGEBYSCORE", "k", 1, 2, "LIMIT", 1) == "syntax error"
    assert err(z, "ZRANGEBYSCORE", "k", 1, 2, "REV") == "syntax error"
    assert err(z, "ZRANGEBYSCORE", "k", 1, 2, "LIMIT", "a", 1) == (
        "value is not an integer or out of range")


def test_zrange_by_lex(z):
    x(z, "ZADD", "k", 0, "a", 0, "b", 0, "c", 0, "d")
    assert x(z, "ZRANGE", "k", "[b", "+", "BYLEX") == ["b", "c", "d"]
    assert x(z, "ZRANGE", "k", "(b", "[d", "BYLEX", "LIMIT", 1, 5) == ["d"]
    assert x(z, "ZRANGE", "k", "+", "-", "BYLEX", "REV") == ["d", "c", "b", "a"]
    assert x(z, "ZRANGEBYLEX", "k", "-", "(c") == ["a", "b"]
    assert x(z, "ZREVRANGEBYLEX", "k", "(c", "-") == ["b", "a"]
    assert x(z, "ZRANGEBYLEX", "k", "+", "-") == []
    assert x(z, "ZLEXCOUNT", "k", "[b", "(d") == 2
    assert x(z, "ZLEXCOUNT", "k", "-", "+") == 4
    for bad in (("a", "+"), ("-", "+x"), ("", "+"), ("[a", "b")):
        assert err(z, "ZRANGEBYLEX", "k", *bad) == "min or max not valid string range item"
        assert err(z, "ZLEXCOUNT", "k", *bad) == "min or max not valid string range item"
    assert err(z, "ZRANGE", "k", "-", "+", "BYLEX", "WITHSCORES") == (
        "syntax error, WITHSCORES not supported in combination with BYLEX")


def test_zrange_option_errors(abc):
    z = abc
    assert err(z, "ZRANGE", "k", 0, 1, "LIMIT", 0, 1) == (
        "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
    assert err(z, "ZRANGE", "k", 0, 1, "REV", "REV") == "syntax error"
    assert err(z, "ZRANGE", "k", 0, 1, "BYSCORE", "BYLEX") == "syntax error"
    assert err(z, "ZRANGE", "k", "a", 1) == "value is not an integer or out of range"
    assert err(z, "ZRANGE", "k", 0) == "wrong number of arguments for 'zrange' command"
    assert err(z, "ZREVRANGE", "k", 0, 1, "LIMIT", 0, 1) == (
        "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
    z.set("s", "v")
    assert err(z, "ZRANGE", "s", 0, 1) == WRONGTYPE


def test_zcount(abc):
    z = abc
    assert x(z, "ZCOUNT", "k", 2, 4) == 3
    assert x(z, "ZCOUNT", "k", "(2", "(4") == 1
    assert x(z, "ZCOUNT", "k", "-inf", "+inf") == 5
    assert x(z, "ZCOUNT", "nokey", 0, 1) == 0
    assert err(z, "ZCOUNT", "k", "a", 1) == "min or max is not a float"


def test_zrangestore(abc):
    z = abc
    assert x(z, "ZRANGESTORE", "dst", "k", 1, 2) == 2
    assert x(z, "ZRANGE", "dst", 0, -1, "WITHSCORES") == ["b", "2", "c", "3"]
    assert x(z, "ZRANGESTORE", "dst", "k", 5, 2, "BYSCORE", "REV", "LIMIT", 0, 2) == 2
    assert x(z, "ZRANGE", "dst", 0, -1) == ["d", "e"]
    assert x(z, "ZRANGESTORE", "dst", "k", "[a", "[b", "BYLEX") == 2
    assert x(z, "ZRANGESTORE", "dst", "nokey", 0, -1) == 0
    assert x(z, "EXISTS", "dst") == 0
    assert err(z, "ZRANGESTORE", "dst", "k", 0, -1, "WITHSCORES") == "syntax error"
    z.set("str", "v")
    assert x(z, "ZRANGESTORE", "str", "k", 0, 0) == 1
    assert x(z, "TYPE", "str") == "zset"


def test_zremrange(abc):
    z = abc
    assert x(z, "ZREMRANGEBYRANK", "k", 0, 0) == 1
    assert x(z, "ZREMRANGEBYSCORE", "k", "(2", 3) == 1
    assert x(z, "ZRANGE", "k", 0, -1) == ["b", "d", "e"]
    assert x(z, "ZREMRANGEBYRANK", "k", 5, 10) == 0
    assert x(z, "ZREMRANGEBYRANK", "k", -1, -1) == 1
    x(z, "ZADD", "l", 0, "a", 0, "b", 0, "c")
    assert x(z, "ZREMRANGEBYLEX", "l", "[a", "(c") == 2
    assert x(z, "ZREMRANGEBYLEX", "l", "-", "+") == 1
    assert x(z, "EXISTS", "l") == 0
    assert x(z, "ZREMRANGEBYSCORE", "k", "-inf", "+inf") == 2
    assert x(z, "EXISTS", "k") == 0
    assert err(z, "ZREMRANGEBYRANK", "k", "a", 1) == "value is not an integer or out of range"
    assert err(z, "ZREMRANGEBYSCORE", "nokey", "a", 1) == "min or max is not a float"
    assert err(z, "ZREMRANGEBYLEX", "nokey", "a", "b") == "min or max not valid string range item"


# --------------------------------------------------------------------------------------------
# Pops


def test_zpop(abc):
    z = abc
    assert x(z, "ZPOPMIN", "k") == ["a", "1"]
    assert x(z, "ZPOPMAX", "k", 2) == ["e", "5", "d", "4"]
    assert x(z, "ZPOPMIN", "k", 0) == []
    assert x(z, "ZPOPMIN", "k", 10) == ["b", "2", "c", "3"]
    assert x(z, "EXISTS", "k") == 0
    assert x(z, "ZPOPMIN", "k") == []
    assert x(z, "ZPOPMAX", "k", 3) == []
    assert err(z, "ZPOPMIN", "k", -1) == "value is out of range, must be positive"
    assert err(z, "ZPOPMIN", "k", "x") == "value is out of range, must be positive"
    assert err(z, "ZPOPMIN", "k", 1, 2) == "syntax error"


def test_zmpop(abc):
    z = abc
    assert x(z, "ZMPOP", 2, "nokey", "k", "MIN") == ["k", [["a", "1"]]]
    assert x(z, "ZMPOP", 1, "k", "MAX", "COUNT", 10) == [
        "k", [["e", "5"], ["d", "4"], ["c", "3"], ["b", "2"]]]
    assert x(z, "ZMPOP", 1, "k", "MIN") is None
    assert err(z, "ZMPOP", 0, "k", "MIN") == "numkeys should be greater than 0"
    assert err(z, "ZMPOP", 1, "k", "FOO") == "syntax error"
    assert err(z, "ZMPOP", 2, "k", "MIN") == "syntax error"
    assert err(z, "ZMPOP", 1, "k", "MIN", "COUNT", 0) == "count should be greater than 0"
    assert err(z, "ZMPOP", 1, "k", "MIN", "COUNT", 1, "COUNT", 1) == "syntax error"
    z.set("s", "v")
    assert err(z, "ZMPOP", 1, "s", "MIN") == WRONGTYPE


def test_bzpop_nonblocking_paths(abc):
    z = abc
    assert x(z, "BZPOPMIN", "nokey", "k", 0) == ["k", "a", "1"]
    assert x(z, "BZPOPMAX", "k", "0.5") == ["k", "e", "5"]
    assert x(z, "BZMPOP", 0, 1, "k", "MIN", "COUNT", 2) == ["k", [["b", "2"], ["c", "3"]]]
    assert err(z, "BZPOPMIN", "k", -1) == "timeout is negative"
    assert err(z, "BZPOPMIN", "k", "x") == "timeout is not a float or out of range"
    assert err(z, "BZMPOP", -1, 1, "k", "MIN") == "timeout is negative"
    assert x(z, "BZPOPMIN", "nokey", "0.01") is None
    z.set("s", "v")
    assert err(z, "BZPOPMIN", "s", 0) == WRONGTYPE


# --------------------------------------------------------------------------------------------
# Set operations


def test_zunion_zinter_zdiff(z):
    x(z, "ZADD", "a", 1, "x", 2, "y", 3, "z")
    x(z, "ZADD", "b", 10, "y", 20, "z", 30, "w")
    x(z, "SADD", "s", "z", "w", "v")
    assert x(z, "ZUNION", 2, "a", "b", "WITHSCORES") == [
        "x", "1", "y", "12", "z", "23", "w", "30"]
    assert x(z, "ZINTER", 2, "a", "b", "WITHSCORES", "AGGREGATE", "MAX") == [
        "y", "10", "z", "20"]
    assert x(z, "ZINTER", 2, "a", "b", "WEIGHTS", 2, 0.5, "WITHSCORES") == [
        "y", "9", "z", "16"]
    assert x(z, "ZINTER", 3, "a", "b", "s", "WITHSCORES", "AGGREGATE", "MIN") == ["z", "1"]
    assert x(z, "ZUNION", 2, "a", "s", "WITHSCORES") == [
        "v", "1", "w", "1", "x", "1", "y", "2", "z", "4"]
    assert x(z, "ZDIFF", 2, "a", "b", "WITHSCORES") == ["x", "1"]
    assert x(z, "ZDIFF", 2, "b", "s") == ["y"]
    assert x(z, "ZUNION", 2, "a", "nokey") == ["x", "y", "z"]
    assert x(z, "ZINTER", 2, "a", "nokey") == []
    # inf * 0 is NaN, which counts as 0.
    x(z, "ZADD", "i", "inf", "x")
    assert x(z, "ZUNION", 1, "i", "WEIGHTS", 0, "WITHSCORES") == ["x", "0"]
    x(z, "ZADD", "ni", "-inf", "x")
    assert x(z, "ZUNION", 2, "i", "ni", "WITHSCORES") == ["x", "0"]


def test_store_forms(z):
    x(z, "ZADD", "a", 1, "x", 2, "y")
    x(z, "ZADD", "b", 3, "y")
    assert x(z, "ZUNIONSTORE", "d", 2, "a", "b") == 2
    assert x(z, "ZRANGE", "d", 0, -1, "WITHSCORES") == ["x", "1", "y", "5"]
    assert x(z, "ZINTERSTORE", "d", 2, "a", "b", "AGGREGATE", "MIN") == 1
    assert x(z, "ZRANGE", "d", 0, -1, "WITHSCORES") == ["y", "2"]
    assert x(z, "ZDIFFSTORE", "d", 2, "a", "b") == 1
    assert x(z, "ZRANGE", "d", 0, -1) == ["x"]
    assert x(z, "ZINTERSTORE", "d", 2, "a", "nokey") == 0
    assert x(z, "EXISTS", "d") == 0
    # The destination may be an input.
    assert x(z, "ZUNIONSTORE", "a", 2, "a", "b", "WEIGHTS", 1, 2) == 2
    assert x(z, "ZRANGE", "a", 0, -1, "WITHSCORES") == ["x", "1", "y", "8"]


def test_setop_errors(z):
    x(z, "ZADD", "a", 1, "x")
    assert err(z, "ZUNIONSTORE", "d", 0, "a") == (
        "at least 1 input key is needed for 'zunionstore' command")
    assert err(z, "ZUNION", 0, "a") == "at least 1 input key is needed for 'zunion' command"
    assert err(z, "ZUNION", "x", "a") == "value is not an integer or out of range"
    assert err(z, "ZUNION", 2, "a") == "syntax error"
    assert err(z, "ZINTER", 1, "a", "WEIGHTS", "x") == "weight value is not a float"
    assert err(z, "ZINTER", 1, "a", "WEIGHTS") == "syntax error"
    assert err(z, "ZINTER", 1, "a", "AGGREGATE", "foo") == "syntax error"
    assert err(z, "ZDIFF", 1, "a", "WEIGHTS", 1) == "syntax error"
    assert err(z, "ZUNIONSTORE", "d", 1, "a", "WITHSCORES") == "syntax error"
    z.set("str", "v")
    assert err(z, "ZUNION", 2, "a", "str") == WRONGTYPE
    # The type check comes before the options are parsed.
    assert err(z, "ZUNION", 2, "a", "str", "FOO") == WRONGTYPE


def test_zintercard(z):
    x(z, "ZADD", "a", 1, "x", 2, "y", 3, "z")
    x(z, "ZADD", "b", 1, "y", 2, "z")
    x(z, "SADD", "s", "z")
    assert x(z, "ZINTERCARD", 2, "a", "b") == 2
    assert x(z, "ZINTERCARD", 2, "a", "b", "LIMIT", 1) == 1
    assert x(z, "ZINTERCARD", 2, "a", "b", "LIMIT", 0) == 2
    assert x(z, "ZINTERCARD", 3, "a", "b", "s") == 1
    assert x(z, "ZINTERCARD", 2, "a", "nokey") == 0
    assert err(z, "ZINTERCARD", 0, "a") == (
        "at least 1 input key is needed for 'zintercard' command")
    assert err(z, "ZINTERCARD", 3, "a") == "syntax error"
    assert err(z, "ZINTERCARD", 1, "a", "LIMIT", -1) == "LIMIT can't be negative"
    assert err(z, "ZINTERCARD", 1, "a", "FOO", 1) == "syntax error"


# --------------------------------------------------------------------------------------------
# ZRANDMEMBER, ZSCAN


def test_zrandmember(abc):
    z = abc
    assert x(z, "ZRANDMEMBER", "k") in list("abcde")
    assert x(z, "ZRANDMEMBER", "nokey") is None
    assert x(z, "ZRANDMEMBER", "nokey", 3) == []
    assert x(z, "ZRANDMEMBER", "k", 0) == []
    got = x(z, "ZRANDMEMBER", "k", 3)
    assert len(got) == 3 and len(set(got)) == 3
    assert sorted(x(z, "ZRANDMEMBER", "k", 10)) == list("abcde")
    got = x(z, "ZRANDMEMBER", "k", -20)
    assert len(got) == 20 and set(got) <= set("abcde")
    got = x(z, "ZRANDMEMBER", "k", 2, "WITHSCORES")
    assert len(got) == 4 and x(z, "ZSCORE", "k", got[0]) == got[1]
    assert err(z, "ZRANDMEMBER", "k", 1, "FOO") == "syntax error"
    assert err(z, "ZRANDMEMBER", "k", "x") == "value is not an integer or out of range"
    assert err(z, "ZRANDMEMBER", "k", -9223372036854775808) == (
        "value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807")
    assert err(z, "ZRANDMEMBER", "k", -9223372036854775807, "WITHSCORES") == (
        "value is out of range")


@pytest.mark.parametrize("n", [5, 500])
def test_zscan(z, n):
    members = {f"m{i}": str(i) for i in range(n)}
    for m, s in members.items():
        x(z, "ZADD", "k", s, m)
    seen = {}
    cursor = "0"
    while True:
        cursor, items = x(z, "ZSCAN", "k", cursor, "COUNT", 20)
        for i in range(0, len(items), 2):
            seen[items[i]] = items[i + 1]
        if cursor == "0":
            break
    assert seen == members
    cursor, items = x(z, "ZSCAN", "k", 0, "MATCH", "m1*", "COUNT", 10000)
    assert cursor == "0"
    assert sorted(items[::2]) == sorted(m for m in members if m.startswith("m1"))
    assert x(z, "ZSCAN", "nokey", 0) == ["0", []]
    assert err(z, "ZSCAN", "k", "x") == "invalid cursor"
    assert err(z, "ZSCAN", "k", 0, "COUNT", 0) == "syntax error"


# --------------------------------------------------------------------------------------------
# Encodings


def test_encoding_thresholds(z):
    for i in range(128):
        x(z, "ZADD", "k", i, f"m{i}")
    assert x(z, "OBJECT", "ENCODING", "k") == "listpack"
    x(z, "ZADD", "k", 128, "m128")
    assert x(z, "OBJECT", "ENCODING", "k") == "skiplist"
    x(z, "ZADD", "v", 1, "a" * 64)
    assert x(z, "OBJECT", "ENCODING", "v") == "listpack"
    x(z, "ZADD", "v", 1, "a" * 65)
    assert x(z, "OBJECT", "ENCODING", "v") == "skiplist"
    # Removals never convert back, but a stored result gets the encoding its size calls for.
    x(z, "ZREMRANGEBYRANK", "k", 0, 100)
    assert x(z, "OBJECT", "ENCODING", "k") == "skiplist"
    x(z, "ZUNIONSTORE", "u", 1, "k")
    assert x(z, "OBJECT", "ENCODING", "u") == "listpack"
    # ZADD with more pairs than the limit starts in the big encoding even for one member.
    x(z, "ZADD", "dup", *([1, "same"] * 129))
    assert x(z, "OBJECT", "ENCODING", "dup") == "skiplist"
    assert x(z, "ZCARD", "dup") == 1


def test_encoding_config(z):
    try:
        x(z, "CONFIG", "SET", "zset-max-listpack-entries", 4)
        x(z, "CONFIG", "SET", "zset-max-ziplist-value", 3)
        assert x(z, "CONFIG", "GET", "zset-max-ziplist-entries") == ["zset-max-ziplist-entries", "4"]
        x(z, "ZADD", "k", 1, "a", 2, "b", 3, "c", 4, "d")
        assert x(z, "OBJECT", "ENCODING", "k") == "listpack"
        x(z, "ZADD", "k", 5, "e")
        assert x(z, "OBJECT", "ENCODING", "k") == "skiplist"
        x(z, "ZADD", "w", 1, "abcd")
        assert x(z, "OBJECT", "ENCODING", "w") == "skiplist"
        x(z, "CONFIG", "SET", "zset-max-listpack-entries", 0)
        x(z, "ZADD", "zero", 1, "a")
        assert x(z, "OBJECT", "ENCODING", "zero") == "skiplist"
    finally:
        x(z, "CONFIG", "SET", "zset-max-listpack-entries", 128)
        x(z, "CONFIG", "SET", "zset-max-listpack-value", 64)


def test_big_set_behaves_like_small(z):
    import random
    rnd = random.Random(5)
    for key in ("small", "big"):
        n = 100 if key == "small" else 3000
        pairs = []
        for i in range(n):
            pairs += [rnd.randint(0, 50), f"m{i}"]
        x(z, "ZADD", key, *pairs)
    assert x(z, "OBJECT", "ENCODING", "big") == "skiplist"
    full = x(z, "ZRANGE", "big", 0, -1, "WITHSCORES")
    ordered = sorted(((float(full[i + 1]), full[i]) for i in range(0, len(full), 2)))
    assert [m for _, m in ordered] == full[::2]
    assert x(z, "ZRANK", "big", full[1000]) == 500
    assert x(z, "ZCOUNT", "big", 10, 20) == sum(1 for s, _ in ordered if 10 <= s <= 20)
    assert x(z, "ZRANGEBYSCORE", "big", "(10", 11) == [m for s, m in ordered if 10 < s <= 11]
    assert x(z, "ZREVRANGE", "big", 0, 2) == [m for _, m in ordered[::-1][:3]]
    assert x(z, "ZREMRANGEBYSCORE", "big", 0, 25) == sum(1 for s, _ in ordered if s <= 25)
    assert x(z, "ZCARD", "big") == sum(1 for s, _ in ordered if s > 25)


def test_copy(z):
    x(z, "ZADD", "k", 1, "a", 2, "b")
    assert x(z, "COPY", "k", "c") == 1
    x(z, "ZADD", "k", 3, "c")
    assert x(z, "ZRANGE", "c", 0, -1) == ["a", "b"]
    for i in range(300):
        x(z, "ZADD", "big", i, f"member{i}")
    assert x(z, "COPY", "big", "big2") == 1
    assert x(z, "ZRANGE", "big2", 0, -1) == x(z, "ZRANGE", "big", 0, -1)
    assert x(z, "OBJECT", "ENCODING", "big2") == "skiplist"


# --------------------------------------------------------------------------------------------
# Notifications and WATCH


def test_keyspace_notifications(server, z):
    x(z, "CONFIG", "SET", "notify-keyspace-events", "KEA")
    try:
        sub = server.client(decode_responses=True)
        p = sub.pubsub()
        p.psubscribe("__keyevent@0__:*")
        assert p.get_message(timeout=2)["type"] == "psubscribe"
        x(z, "ZADD", "k", 1, "a", 2, "b", 3, "c", 4, "d")
        x(z, "ZINCRBY", "k", 1, "a")
        x(z, "ZADD", "k", "INCR", 1, "a")
        x(z, "ZREM", "k", "a")
        x(z, "ZREMRANGEBYSCORE", "k", 2, 2)
        x(z, "ZREMRANGEBYRANK", "k", 0, 0)
        x(z, "ZADD", "k", 0, "p", 0, "q", 5, "r")
        x(z, "ZREMRANGEBYLEX", "k", "[p", "[p")
        x(z, "ZPOPMIN", "k")
        x(z, "ZPOPMAX", "k")
        x(z, "ZADD", "k", 1, "a", 2, "b")
        x(z, "ZUNIONSTORE", "u", 1, "k")
        x(z, "ZINTERSTORE", "u", 1, "k")
        x(z, "ZDIFFSTORE", "u", 1, "k")
        x(z, "ZRANGESTORE", "u", "k", 0, 0)
        x(z, "ZREM", "k", "a", "b", "d")
        x(z, "ZADD", "k", "XX", 1, "a")  # no change: no event
        events = []
        while True:
            m = p.get_message(timeout=0.5)
            if m is None:
                break
            events.append((m["channel"].split(":", 1)[1], m["data"]))
        assert events == [
            ("zadd", "k"), ("zincr", "k"), ("zincr", "k"), ("zrem", "k"),
            ("zremrangebyscore", "k"), ("zremrangebyrank", "k"), ("zadd", "k"),
            ("zremrangebylex", "k"), ("zpopmin", "k"), ("zpopmax", "k"), ("zadd", "k"),
            ("zunionstore", "u"), ("zinterstore", "u"), ("zdiffstore", "u"),
            ("zrangestore", "u"), ("zrem", "k"), ("del", "k")]
        p.close()
    finally:
        x(z, "CONFIG", "SET", "notify-keyspace-events", "")


def test_watch_sees_zset_writes(server, z):
    x(z, "ZADD", "k", 1, "a")
    other = server.client()
    for cmd in (("ZADD", "k", 2, "b"), ("ZINCRBY", "k", 1, "a"), ("ZREM", "k", "b"),
                ("ZPOPMIN", "k")):
        pipe = z.pipeline()
        pipe.watch("k")
        other.execute_command(*cmd)
        pipe.multi()
        pipe.execute_command("ZCARD", "k")
        with pytest.raises(redis.WatchError):
            pipe.execute()
        pipe.reset()

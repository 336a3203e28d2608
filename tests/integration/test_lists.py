"""List commands without blocking: pushes, pops, ranges, edits, LPOS, LMOVE, LMPOP, encodings.

Expected replies and error texts are Redis 7.2's. The suite also passes against a real
redis-server 7.0 (VIREO_SERVER=$(command -v redis-server)); the few checks where 7.0 and 7.2
differ (listpack encodings, LPOS RANK LLONG_MIN) are marked `only_72` and skipped there.
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
NUMKEYS = "ERR numkeys should be greater than 0"
COUNT_GT0 = "ERR count should be greater than 0"
RANK_ZERO = ("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
             "or use negative to start from the end of the list")


@pytest.fixture
def listpack_size(r):
    """Set list-max-listpack-size for one test and restore it afterwards."""
    old = r.config_get("list-max-listpack-size")["list-max-listpack-size"]

    def set_size(n):
        r.config_set("list-max-listpack-size", n)

    yield set_size
    r.config_set("list-max-listpack-size", old)


def encoding(r, key):
    return r.object("encoding", key)


def hello3(raw):
    assert raw.execute("HELLO", "3").startswith(b"%")


# --------------------------------------------------------------------------------------------
# Pushes


def test_push_order_and_lengths(r):
    assert r.lpush("l", "a", "b", "c") == 3
    assert r.rpush("l", "x", "y") == 5
    assert r.lrange("l", 0, -1) == [b"c", b"b", b"a", b"x", b"y"]
    assert r.type("l") == b"list"


def test_push_binary_integer_and_empty_elements(r):
    values = [b"", b"0", b"-1", b"12345678901234567890", b"9223372036854775807",
              b"-9223372036854775808", b"007", b"+1", b" 1", bytes(range(256)), b"x" * 70000,
              b"3.14", b"\r\n"]
    r.rpush("l", *values)
    assert r.lrange("l", 0, -1) == values
    for i, v in enumerate(values):
        assert r.lindex("l", i) == v
    assert r.lpos("l", b"007") == 6
    assert r.lpos("l", b"7") is None


def test_pushx_only_on_existing(r):
    assert r.lpushx("l", "a") == 0
    assert r.execute_command("RPUSHX", "l", "a", "b") == 0
    assert r.exists("l") == 0
    r.rpush("l", "m")
    assert r.lpushx("l", "a", "b") == 3
    assert r.execute_command("RPUSHX", "l", "y", "z") == 5
    assert r.lrange("l", 0, -1) == [b"b", b"a", b"m", b"y", b"z"]


@pytest.mark.parametrize("cmd", ["LPUSH", "RPUSH", "LPUSHX", "RPUSHX"])
def test_push_errors(r, raw, cmd):
    assert err(raw, cmd) == arity(cmd.lower())
    assert err(raw, cmd, "l") == arity(cmd.lower())
    r.set("s", "v")
    assert err(raw, cmd, "s", "a") == WRONGTYPE
    assert r.get("s") == b"v"


# --------------------------------------------------------------------------------------------
# LPOP / RPOP


def test_pop_single_and_count(r, raw):
    r.rpush("l", "a", "b", "c", "d", "e")
    assert r.lpop("l") == b"a"
    assert r.rpop("l") == b"e"
    assert raw.execute("LPOP", "l", "2") == b"*2\r\n$1\r\nb\r\n$1\r\nc\r\n"
    assert raw.execute("RPOP", "l", "0") == b"*0\r\n"
    assert raw.execute("RPOP", "l", "10") == b"*1\r\n$1\r\nd\r\n"
    assert r.exists("l") == 0


def test_pop_missing_key_shapes(raw):
    assert raw.execute("LPOP", "nokey") == b"$-1\r\n"
    assert raw.execute("RPOP", "nokey") == b"$-1\r\n"
    assert raw.execute("LPOP", "nokey", "0") == b"*-1\r\n"
    assert raw.execute("RPOP", "nokey", "1") == b"*-1\r\n"


def test_pop_errors(r, raw):
    r.rpush("l", "a")
    r.set("s", "v")
    assert err(raw, "LPOP") == arity("lpop")
    assert err(raw, "LPOP", "l", "1", "2") == arity("lpop")
    assert err(raw, "RPOP", "l", "1", "2") == arity("rpop")
    for bad in ["-1", "abc", "1.5", "", str(INT64_MIN), "99999999999999999999"]:
        assert err(raw, "LPOP", "l", bad) == MUST_BE_POSITIVE
        assert err(raw, "RPOP", "nokey", bad) == MUST_BE_POSITIVE
    # The count is checked before the key's type.
    assert err(raw, "LPOP", "s", "-1") == MUST_BE_POSITIVE
    assert err(raw, "LPOP", "s") == WRONGTYPE
    assert err(raw, "RPOP", "s", "1") == WRONGTYPE
    assert r.lrange("l", 0, -1) == [b"a"]


def test_pop_huge_count(r):
    r.rpush("l", *range(10))
    assert r.lpop("l", INT64_MAX) == [str(i).encode() for i in range(10)]
    assert r.exists("l") == 0


# --------------------------------------------------------------------------------------------
# LLEN, LRANGE, LINDEX


def test_llen(r, raw):
    assert r.llen("nokey") == 0
    r.rpush("l", "a", "b")
    assert r.llen("l") == 2
    r.set("s", "v")
    assert err(raw, "LLEN", "s") == WRONGTYPE
    assert err(raw, "LLEN") == arity("llen")
    assert err(raw, "LLEN", "a", "b") == arity("llen")


@pytest.mark.parametrize("start,stop,expected", [
    (0, -1, "0123456789"), (1, -2, "12345678"), (-3, -1, "789"), (4, 4, "4"), (6, 2, ""),
    (-1000, 1000, "0123456789"), (0, -10, "0"), (0, -11, ""), (10, 20, ""), (-1, -2, ""),
    (INT64_MIN, INT64_MAX, "0123456789"), (INT64_MAX, INT64_MIN, ""), (9, INT64_MAX, "9"),
    (-10, -10, "0"), (-11, 0, "0"),
])
def test_lrange(r, start, stop, expected):
    r.rpush("l", *range(10))
    assert r.lrange("l", start, stop) == [c.encode() for c in expected]


def test_lrange_errors(r, raw):
    r.rpush("l", "a")
    r.set("s", "v")
    assert raw.execute("LRANGE", "nokey", "0", "-1") == b"*0\r\n"
    assert err(raw, "LRANGE", "l", "a", "1") == NOT_INT
    assert err(raw, "LRANGE", "l", "0", "1.0") == NOT_INT
    assert err(raw, "LRANGE", "l", "0", "9223372036854775808") == NOT_INT
    # Indexes are parsed before the key is looked up.
    assert err(raw, "LRANGE", "nokey", "x", "1") == NOT_INT
    assert err(raw, "LRANGE", "s", "x", "1") == NOT_INT
    assert err(raw, "LRANGE", "s", "0", "1") == WRONGTYPE
    assert err(raw, "LRANGE", "l", "0") == arity("lrange")
    assert err(raw, "LRANGE", "l", "0", "1", "2") == arity("lrange")


def test_lindex(r, raw):
    r.rpush("l", "a", "b", "c")
    assert r.lindex("l", 0) == b"a"
    assert r.lindex("l", -1) == b"c"
    assert r.lindex("l", -3) == b"a"
    assert r.lindex("l", 3) is None
    assert r.lindex("l", -4) is None
    assert r.lindex("l", INT64_MAX) is None
    assert r.lindex("l", INT64_MIN) is None
    assert r.lindex("nokey", 0) is None


def test_lindex_errors_key_checked_first(r, raw):
    r.rpush("l", "a")
    r.set("s", "v")
    assert err(raw, "LINDEX", "l", "abc") == NOT_INT
    # A missing key is nil and a wrong type is WRONGTYPE, whatever the index says.
    assert raw.execute("LINDEX", "nokey", "abc") == b"$-1\r\n"
    assert err(raw, "LINDEX", "s", "abc") == WRONGTYPE
    assert err(raw, "LINDEX", "l") == arity("lindex")


def test_lindex_long_list_both_directions(r):
    r.rpush("l", *range(1000))
    for i in range(0, 1000, 37):
        assert r.lindex("l", i) == str(i).encode()
        assert r.lindex("l", -1 - i) == str(999 - i).encode()


# --------------------------------------------------------------------------------------------
# LSET, LINSERT, LREM, LTRIM


def test_lset(r):
    r.rpush("l", "99", "98", "97", "96", "95")
    assert r.lset("l", 1, "foo") is True
    assert r.lset("l", -1, "bar") is True
    assert r.lrange("l", 0, -1) == [b"99", b"foo", b"97", b"96", b"bar"]


def test_lset_errors(r, raw):
    r.rpush("l", "a", "b")
    r.set("s", "v")
    assert err(raw, "LSET", "l", "2", "x") == "ERR index out of range"
    assert err(raw, "LSET", "l", "-3", "x") == "ERR index out of range"
    assert err(raw, "LSET", "l", "abc", "x") == NOT_INT
    assert err(raw, "LSET", "nokey", "0", "x") == "ERR no such key"
    # The key is checked before the index.
    assert err(raw, "LSET", "nokey", "abc", "x") == "ERR no such key"
    assert err(raw, "LSET", "s", "abc", "x") == WRONGTYPE
    assert err(raw, "LSET", "s", "0", "x") == WRONGTYPE
    assert err(raw, "LSET", "l", "0") == arity("lset")
    assert r.lrange("l", 0, -1) == [b"a", b"b"]
    assert r.exists("nokey") == 0


def test_linsert(r):
    r.rpush("l", "a", "b", "c", "d")
    assert r.linsert("l", "before", "c", "zz") == 5
    assert r.linsert("l", "AFTER", "c", "yy") == 6
    assert r.linsert("l", "after", "d", "dd") == 7
    assert r.linsert("l", "before", "a", "aa") == 8
    assert r.linsert("l", "after", "bad", "x") == -1
    assert r.lrange("l", 0, -1) == [b"aa", b"a", b"b", b"zz", b"c", b"yy", b"d", b"dd"]
    # Only the first match is a pivot; integers compare by value as strings do.
    r.delete("n")
    r.rpush("n", "1", "2", "1")
    assert r.linsert("n", "after", "1", "42") == 4
    assert r.lrange("n", 0, -1) == [b"1", b"42", b"2", b"1"]
    assert r.linsert("n", "before", "01", "x") == -1


def test_linsert_errors(r, raw):
    r.rpush("l", "a")
    r.set("s", "v")
    assert err(raw, "LINSERT", "l", "aft3r", "a", "x") == SYNTAX
    # The direction is checked before the key.
    assert err(raw, "LINSERT", "nokey", "middle", "a", "x") == SYNTAX
    assert err(raw, "LINSERT", "s", "middle", "a", "x") == SYNTAX
    assert err(raw, "LINSERT", "s", "before", "a", "x") == WRONGTYPE
    assert raw.execute("LINSERT", "nokey", "before", "a", "x") == b":0\r\n"
    assert r.exists("nokey") == 0
    assert err(raw, "LINSERT", "l", "before", "a") == arity("linsert")
    assert err(raw, "LINSERT", "l", "before", "a", "b", "c") == arity("linsert")


def test_lrem(r):
    items = ["e", "foo", "bar", "foobar", "foobared", "zap", "bar", "test", "foo", "foo"]
    r.rpush("l", *items)
    assert r.lrem("l", 0, "bar") == 2
    assert r.lrem("l", 1, "foo") == 1
    assert r.lrem("l", -1, "foo") == 1
    assert r.lrem("l", 1, "nosuch") == 0
    assert r.lrange("l", 0, -1) == [b"e", b"foobar", b"foobared", b"zap", b"test", b"foo"]
    r.rpush("n", "1", "2", "3", "2")
    assert r.lrem("n", -1, "2") == 1
    assert r.lrange("n", 0, -1) == [b"1", b"2", b"3"]
    assert r.lrem("n", INT64_MIN, "1") == 1
    assert r.lrem("n", INT64_MAX, "2") == 1
    assert r.lrem("n", 0, "3") == 1
    assert r.exists("n") == 0


def test_lrem_errors(r, raw):
    r.set("s", "v")
    assert raw.execute("LREM", "nokey", "1", "a") == b":0\r\n"
    assert err(raw, "LREM", "nokey", "abc", "a") == NOT_INT
    assert err(raw, "LREM", "s", "abc", "a") == NOT_INT
    assert err(raw, "LREM", "s", "1", "a") == WRONGTYPE
    assert err(raw, "LREM", "s", "1") == arity("lrem")


@pytest.mark.parametrize("start,stop,expected", [
    (0, 0, "1"), (0, 1, "12"), (1, 2, "23"), (1, -1, "2345"), (1, -2, "234"), (-2, -1, "45"),
    (-1, -1, "5"), (-5, -1, "12345"), (-10, 10, "12345"), (0, 10, "12345"), (0, -5, "1"),
    (0, -6, ""), (3, 1, ""), (5, 10, ""), (INT64_MIN, INT64_MAX, "12345"),
])
def test_ltrim(r, start, stop, expected):
    r.rpush("l", "1", "2", "3", "4", "5")
    assert r.ltrim("l", start, stop) is True
    assert r.lrange("l", 0, -1) == [c.encode() for c in expected]
    assert r.exists("l") == (1 if expected else 0)


def test_ltrim_errors(r, raw):
    r.set("s", "v")
    assert raw.execute("LTRIM", "nokey", "0", "1") == b"+OK\r\n"
    assert r.exists("nokey") == 0
    assert err(raw, "LTRIM", "nokey", "a", "1") == NOT_INT
    assert err(raw, "LTRIM", "s", "0", "b") == NOT_INT
    assert err(raw, "LTRIM", "s", "0", "1") == WRONGTYPE
    assert err(raw, "LTRIM", "s", "0") == arity("ltrim")


# --------------------------------------------------------------------------------------------
# LPOS


@pytest.fixture
def lpos_list(r):
    r.rpush("l", "a", "b", "c", "x" * 500, "2", "3", "c", "c")
    return "l"


def test_lpos_basic_and_rank(r, lpos_list):
    assert r.lpos("l", "a") == 0
    assert r.lpos("l", "c") == 2
    assert r.lpos("l", "c", rank=1) == 2
    assert r.lpos("l", "c", rank=2) == 6
    assert r.lpos("l", "c", rank=4) is None
    assert r.lpos("l", "c", rank=-1) == 7
    assert r.lpos("l", "c", rank=-2) == 6
    assert r.lpos("l", "x" * 500) == 3
    assert r.lpos("l", "2") == 4
    assert r.lpos("l", "zz") is None


def test_lpos_count_maxlen(r, raw, lpos_list):
    assert r.lpos("l", "c", count=0) == [2, 6, 7]
    assert r.lpos("l", "c", count=1) == [2]
    assert r.lpos("l", "c", count=2) == [2, 6]
    assert r.lpos("l", "c", count=100) == [2, 6, 7]
    assert r.lpos("l", "c", count=0, rank=2) == [6, 7]
    assert r.lpos("l", "c", count=2, rank=-1) == [7, 6]
    assert r.lpos("l", "a", count=0, maxlen=1) == [0]
    assert r.lpos("l", "c", count=0, maxlen=1) == []
    assert r.lpos("l", "c", count=0, maxlen=3) == [2]
    assert r.lpos("l", "c", count=0, maxlen=3, rank=-1) == [7, 6]
    assert r.lpos("l", "c", count=0, maxlen=7, rank=2) == [6]
    assert r.lpos("l", "c", maxlen=2) is None
    assert raw.execute("LPOS", "l", "zz", "COUNT", "0") == b"*0\r\n"
    assert raw.execute("LPOS", "nokey", "c", "COUNT", "0", "RANK", "2") == b"*0\r\n"
    assert raw.execute("LPOS", "nokey", "c") == b"$-1\r\n"
    # Options may repeat; the last one wins.
    assert r.execute_command("LPOS", "l", "c", "RANK", "1", "RANK", "-1") == 7
    assert r.execute_command("LPOS", "l", "c", "rank", "9", "RANK", "2", "count", "0") == [6, 7]


def test_lpos_rank_beyond_matches(r):
    r.lpush("l", "a")
    assert r.lpos("l", "b", count=10, rank=5) == []
    assert r.lpos("l", "a", rank=INT64_MAX) is None
    assert r.lpos("l", "a", rank=-INT64_MAX) is None


def test_lpos_errors(r, raw, lpos_list):
    r.set("s", "v")
    assert err(raw, "LPOS", "l", "c", "RANK", "0") == RANK_ZERO
    assert err(raw, "LPOS", "l", "c", "RANK", "abc") == NOT_INT
    assert err(raw, "LPOS", "l", "c", "COUNT", "-1") == "ERR COUNT can't be negative"
    # COUNT and MAXLEN say "can't be negative" for anything that is not a non-negative integer.
    assert err(raw, "LPOS", "l", "c", "COUNT", "abc") == "ERR COUNT can't be negative"
    assert err(raw, "LPOS", "l", "c", "MAXLEN", "-1") == "ERR MAXLEN can't be negative"
    assert err(raw, "LPOS", "l", "c", "MAXLEN", "1.5") == "ERR MAXLEN can't be negative"
    # An unknown option, or one missing its value, is a syntax error before any value parses.
    assert err(raw, "LPOS", "l", "c", "FOO", "abc") == SYNTAX
    assert err(raw, "LPOS", "l", "c", "RANK") == SYNTAX
    assert err(raw, "LPOS", "l", "c", "RANK", "1", "COUNT") == SYNTAX
    assert err(raw, "LPOS", "l", "c", "RANK", "1", "BAR", "x") == SYNTAX
    # Options are parsed before the key is looked up.
    assert err(raw, "LPOS", "s", "c", "RANK", "0") == RANK_ZERO
    assert err(raw, "LPOS", "nokey", "c", "COUNT", "-1") == "ERR COUNT can't be negative"
    assert err(raw, "LPOS", "s", "c") == WRONGTYPE
    assert err(raw, "LPOS", "l") == arity("lpos")


def test_lpos_rank_min_is_out_of_range(raw, lpos_list, only_72):
    assert err(raw, "LPOS", "l", "c", "RANK", str(INT64_MIN)) == (
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807")


# --------------------------------------------------------------------------------------------
# LMOVE / RPOPLPUSH


@pytest.mark.parametrize("wherefrom", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("whereto", ["LEFT", "RIGHT"])
def test_lmove_directions(r, wherefrom, whereto):
    r.rpush("src", "a", "b", "c")
    r.rpush("dst", "x")
    moved = r.lmove("src", "dst", wherefrom, whereto)
    assert moved == (b"a" if wherefrom == "LEFT" else b"c")
    expected_dst = [moved, b"x"] if whereto == "LEFT" else [b"x", moved]
    assert r.lrange("dst", 0, -1) == expected_dst


@pytest.mark.parametrize("wherefrom", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("whereto", ["LEFT", "RIGHT"])
def test_lmove_same_list_rotates(r, wherefrom, whereto):
    r.rpush("l", "a", "b", "c")
    r.lmove("l", "l", wherefrom, whereto)
    expected = {("LEFT", "LEFT"): "abc", ("LEFT", "RIGHT"): "bca",
                ("RIGHT", "LEFT"): "cab", ("RIGHT", "RIGHT"): "abc"}[(wherefrom, whereto)]
    assert r.lrange("l", 0, -1) == [c.encode() for c in expected]
    # A single element moved onto itself: the key survives.
    r.rpush("one", "z")
    assert r.lmove("one", "one", wherefrom, whereto) == b"z"
    assert r.lrange("one", 0, -1) == [b"z"]


def test_rpoplpush(r):
    r.rpush("src", "a", "b", "c")
    assert r.rpoplpush("src", "dst") == b"c"
    assert r.rpoplpush("src", "dst") == b"b"
    assert r.rpoplpush("src", "dst") == b"a"
    assert r.exists("src") == 0
    assert r.lrange("dst", 0, -1) == [b"a", b"b", b"c"]
    assert r.rpoplpush("src", "dst") is None
    assert r.exists("src") == 0


def test_lmove_errors(r, raw):
    r.rpush("l", "a")
    r.set("s", "v")
    assert raw.execute("LMOVE", "nokey", "dst", "LEFT", "RIGHT") == b"$-1\r\n"
    assert raw.execute("RPOPLPUSH", "nokey", "dst") == b"$-1\r\n"
    assert r.exists("dst") == 0
    assert err(raw, "LMOVE", "l", "d", "UP", "RIGHT") == SYNTAX
    assert err(raw, "LMOVE", "l", "d", "LEFT", "DOWN") == SYNTAX
    assert err(raw, "LMOVE", "nokey", "d", "UP", "RIGHT") == SYNTAX
    assert err(raw, "LMOVE", "s", "d", "LEFT", "RIGHT") == WRONGTYPE
    assert err(raw, "RPOPLPUSH", "s", "d") == WRONGTYPE
    # A wrong-type destination is an error only when there is something to move.
    assert err(raw, "LMOVE", "l", "s", "LEFT", "RIGHT") == WRONGTYPE
    assert err(raw, "RPOPLPUSH", "l", "s") == WRONGTYPE
    assert raw.execute("LMOVE", "nokey", "s", "LEFT", "RIGHT") == b"$-1\r\n"
    assert r.lrange("l", 0, -1) == [b"a"]
    assert r.get("s") == b"v"
    assert err(raw, "LMOVE", "l", "d", "LEFT") == arity("lmove")
    assert err(raw, "RPOPLPUSH", "l") == arity("rpoplpush")


# --------------------------------------------------------------------------------------------
# LMPOP


def test_lmpop(r, raw):
    r.rpush("a", "1", "2", "3")
    r.rpush("b", "x", "y")
    assert r.lmpop(2, "nokey", "a", direction="LEFT") == [b"a", [b"1"]]
    assert r.lmpop(2, "a", "b", direction="RIGHT", count=10) == [b"a", [b"3", b"2"]]
    assert r.exists("a") == 0
    assert r.lmpop(2, "a", "b", direction="LEFT", count=1) == [b"b", [b"x"]]
    assert raw.execute("LMPOP", "2", "a", "b", "left", "count", "5") == (
        b"*2\r\n$1\r\nb\r\n*1\r\n$1\r\ny\r\n")
    assert raw.execute("LMPOP", "2", "a", "b", "LEFT") == b"*-1\r\n"
    # The same key twice.
    r.rpush("m", "a", "b", "c", "d", "e", "f")
    assert r.lmpop(2, "m", "m", direction="LEFT", count=2) == [b"m", [b"a", b"b"]]
    assert r.lmpop(2, "m", "m", direction="RIGHT", count=2) == [b"m", [b"f", b"e"]]
    assert r.llen("m") == 2


@pytest.mark.parametrize("args,expected", [
    ([], arity("lmpop")), (["1"], arity("lmpop")), (["1", "l"], arity("lmpop")),
    (["0", "l", "LEFT"], NUMKEYS), (["a", "l", "LEFT"], NUMKEYS), (["-1", "l", "RIGHT"], NUMKEYS),
    (["1.5", "l", "LEFT"], NUMKEYS), ([str(INT64_MIN), "l", "LEFT"], NUMKEYS),
    (["2", "l", "LEFT"], SYNTAX), ([str(INT64_MAX), "l", "LEFT"], SYNTAX),
    (["1", "l", "bad_where"], SYNTAX), (["1", "l", "LEFT", "bar_arg"], SYNTAX),
    (["1", "l", "RIGHT", "LEFT"], SYNTAX), (["1", "l", "COUNT"], SYNTAX),
    (["1", "l", "LEFT", "COUNT"], SYNTAX), (["1", "l", "LEFT", "COUNT", "1", "COUNT", "2"], SYNTAX),
    (["2", "l", "l2", "bad_arg"], SYNTAX),
    (["1", "l", "LEFT", "COUNT", "0"], COUNT_GT0), (["1", "l", "RIGHT", "COUNT", "a"], COUNT_GT0),
    (["1", "l", "LEFT", "COUNT", "-1"], COUNT_GT0),
    (["2", "l", "l2", "RIGHT", "COUNT", "-1"], COUNT_GT0),
    # Arguments are checked before any key's type.
    (["1", "s", "LEFT", "COUNT", "0"], COUNT_GT0), (["1", "s", "UP"], SYNTAX),
    (["1", "s", "LEFT"], WRONGTYPE), (["2", "nokey", "s", "LEFT"], WRONGTYPE),
])
def test_lmpop_errors(r, raw, args, expected):
    r.set("s", "v")
    assert err(raw, "LMPOP", *args) == expected


def test_lmpop_wrong_type_after_nonempty_key_is_not_reached(r):
    r.rpush("l", "a")
    r.set("s", "v")
    assert r.lmpop(2, "l", "s", direction="LEFT") == [b"l", [b"a"]]
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.lmpop(2, "l", "s", direction="LEFT")


# --------------------------------------------------------------------------------------------
# Lifetime of list keys


def test_emptied_lists_are_deleted(r):
    for setup, empty in [
        (lambda: r.rpush("l", "a"), lambda: r.lpop("l")),
        (lambda: r.rpush("l", "a"), lambda: r.rpop("l", 5)),
        (lambda: r.rpush("l", "a", "a"), lambda: r.lrem("l", 0, "a")),
        (lambda: r.rpush("l", "a", "b"), lambda: r.ltrim("l", 2, 1)),
        (lambda: r.rpush("l", "a"), lambda: r.lmove("l", "other", "LEFT", "LEFT")),
        (lambda: r.rpush("l", "a"), lambda: r.rpoplpush("l", "other")),
        (lambda: r.rpush("l", "a", "b"), lambda: r.lmpop(1, "l", direction="LEFT", count=3)),
    ]:
        setup()
        empty()
        assert r.exists("l") == 0
        assert r.type("l") == b"none"
        r.delete("other")


def test_list_writes_count_as_changes_and_invalidate_watch(server, r):
    r.rpush("l", "a", "b")
    watcher = server.client()
    pipe = watcher.pipeline()
    pipe.watch("l")
    r.lset("l", 0, "z")
    pipe.multi()
    pipe.get("x")
    with pytest.raises(redis.WatchError):
        pipe.execute()
    # Writes that change nothing leave WATCH alone.
    pipe = watcher.pipeline()
    pipe.watch("l")
    assert r.lrem("l", 0, "nosuch") == 0
    assert r.linsert("l", "BEFORE", "nosuch", "x") == -1
    assert r.lpushx("nokey", "a") == 0
    pipe.multi()
    pipe.get("x")
    assert pipe.execute() == [None]


def test_list_commands_in_multi(r):
    r.rpush("l", "a", "b", "c")
    pipe = r.pipeline()
    pipe.lpop("l")
    pipe.rpush("l", "d")
    pipe.lrange("l", 0, -1)
    pipe.lmpop(1, "l", direction="RIGHT", count=2)
    pipe.llen("l")
    assert pipe.execute() == [b"a", 3, [b"b", b"c", b"d"], [b"l", [b"d", b"c"]], 1]


# --------------------------------------------------------------------------------------------
# RESP3


def test_resp3_null_shapes(r, raw):
    hello3(raw)
    r.rpush("l", "a")
    assert raw.execute("LPOP", "nokey") == b"_\r\n"
    assert raw.execute("RPOP", "nokey", "0") == b"_\r\n"
    assert raw.execute("LPOP", "nokey", "3") == b"_\r\n"
    assert raw.execute("LINDEX", "l", "5") == b"_\r\n"
    assert raw.execute("LPOS", "l", "zz") == b"_\r\n"
    assert raw.execute("LPOS", "l", "zz", "COUNT", "0") == b"*0\r\n"
    assert raw.execute("LMOVE", "nokey", "l", "LEFT", "LEFT") == b"_\r\n"
    assert raw.execute("RPOPLPUSH", "nokey", "l") == b"_\r\n"
    assert raw.execute("LMPOP", "1", "nokey", "LEFT") == b"_\r\n"
    assert raw.execute("LRANGE", "nokey", "0", "-1") == b"*0\r\n"
    assert raw.execute("LPOP", "l", "0") == b"*0\r\n"
    assert raw.execute("LMPOP", "1", "l", "LEFT") == b"*2\r\n$1\r\nl\r\n*1\r\n$1\r\na\r\n"


# --------------------------------------------------------------------------------------------
# Encodings (Redis 7.2: small lists are listpacks)


def test_encoding_listpack_to_quicklist(r, listpack_size, only_72):
    for size, large in [(3, "x"), (-1, "x" * 5000)]:
        listpack_size(size)
        r.delete("l")
        r.rpush("l", "a", "b", "c")
        assert encoding(r, "l") == b"listpack"
        r.rpush("l", large)
        assert encoding(r, "l") == b"quicklist"

        r.delete("l")
        r.rpush("l", "a", "b", "c")
        r.linsert("l", "after", "b", large)
        assert encoding(r, "l") == b"quicklist"

        r.delete("l")
        r.rpush("l", "a", "b", "c")
        r.lset("l", 0, large if size < 0 else "x" * 9000)
        assert encoding(r, "l") == b"quicklist"

        r.delete("src", "dst")
        r.rpush("src", "a", "b", "c", large)
        assert encoding(r, "src") == b"quicklist"
        r.rpush("dst", "d", "e", "f")
        assert encoding(r, "dst") == b"listpack"
        r.lmove("src", "dst", "RIGHT", "RIGHT")
        assert encoding(r, "dst") == b"quicklist"


def test_encoding_quicklist_to_listpack(r, listpack_size, only_72):
    listpack_size(3)
    for fill, shrink in [
        ("a b c d", lambda: r.rpop("l", 3)),
        ("a a a d", lambda: r.lrem("l", 3, "a")),
        ("a b c d", lambda: r.ltrim("l", 1, 1)),
    ]:
        r.delete("l")
        r.rpush("l", *fill.split())
        assert encoding(r, "l") == b"quicklist"
        shrink()
        assert encoding(r, "l") == b"listpack"
    # Shrinking converts back only under half the limit, so a list at the limit doesn't flip.
    r.delete("l")
    r.rpush("l", "a", "b", "c", "d")
    r.rpop("l")
    assert encoding(r, "l") == b"quicklist"

    listpack_size(-1)
    large = "x" * 5000
    r.delete("l")
    r.rpush("l", "a", "b", "c", large)
    assert encoding(r, "l") == b"quicklist"
    r.rpop("l")
    assert encoding(r, "l") == b"listpack"

    r.delete("l")
    r.rpush("l", "a", large)
    r.lrem("l", 1, large)
    assert encoding(r, "l") == b"listpack"

    r.delete("l")
    r.rpush("l", "a", "b", large)
    r.ltrim("l", 0, 1)
    assert encoding(r, "l") == b"listpack"

    r.delete("l")
    r.rpush("l", large, "a", "b")
    r.rpop("l", 2)
    assert encoding(r, "l") == b"quicklist"
    r.lset("l", -1, "c")
    assert encoding(r, "l") == b"listpack"


def test_encoding_default_size_threshold(r, only_72):
    # list-max-listpack-size -2 is 8 KB: an empty listpack is 7 bytes and the check counts
    # only the added strings' lengths.
    r.rpush("fits", "x" * 8185)
    assert encoding(r, "fits") == b"listpack"
    r.rpush("over", "x" * 8186)
    assert encoding(r, "over") == b"quicklist"
    r.rpush("many", *(["y" * 100] * 80))
    assert encoding(r, "many") == b"listpack"
    r.rpush("many", "y" * 100)
    assert encoding(r, "many") == b"quicklist"


def test_encoding_odd_configs(r, listpack_size, only_72):
    # 0 acts as 1: one element is still a listpack.
    listpack_size(0)
    r.delete("l")
    r.rpush("l", "a")
    assert encoding(r, "l") == b"listpack"
    r.rpush("l", "b")
    assert encoding(r, "l") == b"quicklist"
    # Below -5 acts as -5 (64 KB).
    listpack_size(-6)
    r.delete("l")
    r.rpush("l", "x" * 60000)
    assert encoding(r, "l") == b"listpack"
    r.rpush("l", "x" * 5536)
    assert encoding(r, "l") == b"quicklist"


def test_encoding_lmove_same_list(r, listpack_size, only_72):
    # Pop, push, then the shrink check: a list at the count limit rotates without converting.
    listpack_size(4)
    r.rpush("l", "a", "b", "c", "d")
    assert encoding(r, "l") == b"listpack"
    r.lmove("l", "l", "LEFT", "RIGHT")
    assert encoding(r, "l") == b"listpack"
    assert r.lrange("l", 0, -1) == [b"b", b"c", b"d", b"a"]
    # A one-node quicklist of 3 (over half the limit) stays a quicklist: after the pop it would
    # qualify (2 <= 4/2), but the check comes after the push.
    r.delete("q")
    r.rpush("q", "a", "b", "c", "d", "e")
    r.rpop("q", 2)
    assert encoding(r, "q") == b"quicklist"
    r.lmove("q", "q", "LEFT", "RIGHT")
    assert encoding(r, "q") == b"quicklist"
    assert r.lrange("q", 0, -1) == [b"b", b"c", b"a"]
    # With another destination the source converts as soon as it is small enough.
    r.lmove("q", "other", "LEFT", "RIGHT")
    assert encoding(r, "q") == b"listpack"


def test_long_list_consistency(r, listpack_size):
    listpack_size(5)
    r.rpush("l", *range(500))
    for i in range(0, 500, 7):
        assert r.lindex("l", i) == str(i).encode()
        assert r.lindex("l", -1 - i) == str(499 - i).encode()
    assert r.lrange("l", 100, 104) == [b"100", b"101", b"102", b"103", b"104"]
    r.linsert("l", "before", "250", "x")
    assert r.lindex("l", 250) == b"x"
    assert r.lrem("l", 0, "x") == 1
    assert sum(int(v) for v in r.lrange("l", 0, -1)) == sum(range(500))
    total = 0
    for _ in range(250):
        total += int(r.lpop("l")) + int(r.rpop("l"))
    assert total == sum(range(500))
    assert r.exists("l") == 0


def test_changes_counted_per_element(r):
    def dirty():
        return r.info("persistence")["rdb_changes_since_last_save"]

    cases = [
        (lambda: r.rpush("l", "a", "b", "c"), 3),
        (lambda: r.lpushx("nokey", "a", "b"), 0),
        (lambda: r.lpop("l", 2), 2),
        (lambda: r.rpush("l", "d", "e", "f", "g"), 4),
        (lambda: r.rpop("l"), 1),
        (lambda: r.lpop("l", 0), 0),
        (lambda: r.lset("l", 0, "x"), 1),
        (lambda: r.linsert("l", "BEFORE", "x", "y"), 1),
        (lambda: r.linsert("l", "BEFORE", "nosuch", "y"), 0),
        (lambda: r.lrem("l", 0, "y"), 1),
        (lambda: r.ltrim("l", 0, -1), 0),
        (lambda: r.ltrim("l", 1, 1), 3),
        (lambda: r.rpush("l", "1", "2", "3"), 3),
        (lambda: r.lmove("l", "m", "LEFT", "LEFT"), 1),
        (lambda: r.lmove("l", "l", "LEFT", "RIGHT"), 1),
        (lambda: r.lmpop(1, "l", direction="LEFT", count=2), 2),
        (lambda: r.blmpop(0, 2, "l", "m", direction="LEFT", count=5), 1),
        (lambda: r.blpop(["m"], 0), 1),
        (lambda: r.lmpop(1, "nokey", direction="LEFT"), 0),
    ]
    for action, expected in cases:
        before = dirty()
        action()
        assert dirty() - before == expected, action


def test_command_getkeys(raw):
    def keys(*argv):
        return raw.execute("COMMAND", "GETKEYS", *argv)

    ab = b"*2\r\n$1\r\na\r\n$1\r\nb\r\n"
    assert keys("LMPOP", "2", "a", "b", "LEFT") == ab
    assert keys("BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "3") == ab
    assert keys("BLPOP", "a", "b", "0") == ab
    assert keys("LMOVE", "a", "b", "LEFT", "LEFT") == ab
    assert keys("BRPOPLPUSH", "a", "b", "0") == ab
    for bad in (["LMPOP", "0", "a", "LEFT"], ["LMPOP", "-1", "a", "LEFT"],
                ["LMPOP", "5", "a", "LEFT"], ["BLMPOP", "0", "x", "a", "LEFT"]):
        assert err(raw, "COMMAND", "GETKEYS", *bad) == "ERR Invalid arguments specified for command"

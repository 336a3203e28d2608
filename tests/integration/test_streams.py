"""Streams, the log: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID, XREAD (non-blocking).

Expected replies and errors are Redis 7.2's; the suite also runs against redis-server 7.0
(VIREO_SERVER=$(command -v redis-server)), where the few 7.2-only checks are skipped.
"""

import pytest

from conftest import arity, err


@pytest.fixture
def x(server, raw):
    """A client that returns replies as plain (decoded) lists, without redis-py's reshaping."""
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    c.flushall()
    yield c
    c.close()


INVALID_ID = "ERR Invalid stream ID specified as stream command argument"


# ---------------------------------------------------------------------------------------------
# XADD


def test_xadd_explicit_ids_and_reply(x):
    assert x.execute_command("XADD", "s", "1-1", "a", "1") == "1-1"
    assert x.execute_command("XADD", "s", "1-2", "b", "2", "c", "3") == "1-2"
    assert x.execute_command("XADD", "s", "5", "d", "4") == "5-0"
    assert x.execute_command("XLEN", "s") == 3
    assert x.execute_command("TYPE", "s") == "stream"
    assert x.execute_command("OBJECT", "ENCODING", "s") == "stream"
    assert x.execute_command("XRANGE", "s", "-", "+") == [
        ["1-1", ["a", "1"]],
        ["1-2", ["b", "2", "c", "3"]],
        ["5-0", ["d", "4"]],
    ]


def test_xadd_auto_ids(x):
    first = x.execute_command("XADD", "s", "*", "f", "v")
    ms, seq = map(int, first.split("-"))
    assert ms > 1_600_000_000_000
    second = x.execute_command("XADD", "s", "*", "f", "v")
    ms2, seq2 = map(int, second.split("-"))
    assert (ms2, seq2) > (ms, seq)
    # <ms>-* picks the next sequence for that millisecond.
    assert x.execute_command("XADD", "t", "7-*", "f", "v") == "7-0"
    assert x.execute_command("XADD", "t", "7-*", "f", "v") == "7-1"
    assert x.execute_command("XADD", "t", "8-*", "f", "v") == "8-0"
    assert x.execute_command("XADD", "u", "0-*", "f", "v") == "0-1"
    # A time before the last entry's takes the last ID's time.
    x.execute_command("XADD", "v", "99999999999999-5", "f", "v")
    assert x.execute_command("XADD", "v", "*", "f", "v") == "99999999999999-6"


def test_xadd_id_errors(x, raw):
    x.execute_command("XADD", "s", "5-5", "f", "v")
    top = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
    assert err(raw, "XADD", "s", "5-5", "f", "v") == top
    assert err(raw, "XADD", "s", "5-4", "f", "v") == top
    assert err(raw, "XADD", "s", "4-*", "f", "v") == top
    assert err(raw, "XADD", "s", "5", "f", "v") == top
    assert err(raw, "XADD", "new", "0-0", "f", "v") == "ERR The ID specified in XADD must be greater than 0-0"
    assert err(raw, "XADD", "new", "0", "f", "v") == "ERR The ID specified in XADD must be greater than 0-0"
    assert x.execute_command("EXISTS", "new") == 0
    for bad in ("abc", "1-x", "-", "+", "1-2-3", "-1", "*-1", "x" * 200):
        assert err(raw, "XADD", "s", bad, "f", "v") == INVALID_ID, bad
    # The ID space runs out.
    x.execute_command("XADD", "max", "18446744073709551615-18446744073709551614", "f", "v")
    assert x.execute_command("XADD", "max", "18446744073709551615-*", "f", "v") == (
        "18446744073709551615-18446744073709551615")
    assert err(raw, "XADD", "max", "*", "f", "v") == (
        "ERR The stream has exhausted the last possible ID, unable to add more items")
    x.execute_command("XADD", "max2", "18446744073709551615-18446744073709551615", "f", "v")
    assert err(raw, "XADD", "max2", "18446744073709551615-*", "f", "v") == (
        "ERR The stream has exhausted the last possible ID, unable to add more items")


def test_xadd_arity_and_syntax(x, raw):
    assert err(raw, "XADD", "s", "*") == arity("xadd")
    assert err(raw, "XADD", "s", "*", "f") == arity("xadd")
    assert err(raw, "XADD", "s", "*", "f", "v", "g") == arity("xadd")
    assert err(raw, "XADD", "s", "MAXLEN", "5", "*", "f") == arity("xadd")
    assert err(raw, "XADD", "s", "MAXLEN", "x", "*", "f", "v") == "ERR value is not an integer or out of range"
    assert err(raw, "XADD", "s", "MAXLEN", "-1", "*", "f", "v") == "ERR The MAXLEN argument must be >= 0."
    assert err(raw, "XADD", "s", "MAXLEN", "1", "MINID", "1", "*", "f", "v") == (
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible")
    assert err(raw, "XADD", "s", "MAXLEN", "1", "LIMIT", "5", "*", "f", "v") == (
        "ERR syntax error, LIMIT cannot be used without the special ~ option")
    assert err(raw, "XADD", "s", "LIMIT", "5", "*", "f", "v") == (
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
    assert err(raw, "XADD", "s", "MAXLEN", "~", "1", "LIMIT", "-1", "*", "f", "v") == (
        "ERR The LIMIT argument must be >= 0.")
    assert err(raw, "XADD", "s", "MINID", "x", "*", "f", "v") == INVALID_ID
    assert x.execute_command("EXISTS", "s") == 0
    raw.execute("SET", "str", "x")
    assert err(raw, "XADD", "str", "*", "f", "v").startswith("WRONGTYPE")


def test_xadd_nomkstream(x):
    assert x.execute_command("XADD", "s", "NOMKSTREAM", "*", "f", "v") is None
    assert x.execute_command("EXISTS", "s") == 0
    x.execute_command("XADD", "s", "1-0", "f", "v")
    assert x.execute_command("XADD", "s", "NOMKSTREAM", "2-0", "f", "v") == "2-0"
    assert x.execute_command("XLEN", "s") == 2


def test_xadd_maxlen_and_minid(x):
    for i in range(1, 11):
        x.execute_command("XADD", "s", "MAXLEN", "5", f"{i}-0", "f", str(i))
    assert x.execute_command("XLEN", "s") == 5
    assert x.execute_command("XRANGE", "s", "-", "+", "COUNT", "1") == [["6-0", ["f", "6"]]]
    x.execute_command("XADD", "s", "MAXLEN", "=", "3", "11-0", "f", "11")
    assert x.execute_command("XLEN", "s") == 3
    x.execute_command("XADD", "s", "MINID", "10", "12-0", "f", "12")
    assert [e[0] for e in x.execute_command("XRANGE", "s", "-", "+")] == ["10-0", "11-0", "12-0"]
    # An empty stream can be created.
    assert x.execute_command("XADD", "e", "MAXLEN", "0", "1-0", "f", "v") == "1-0"
    assert x.execute_command("XLEN", "e") == 0
    assert x.execute_command("EXISTS", "e") == 1


def test_xadd_approximate_trimming_keeps_whole_nodes(x):
    x.execute_command("CONFIG", "SET", "stream-node-max-entries", "10")
    try:
        for i in range(1, 101):
            x.execute_command("XADD", "s", f"{i}-0", "f", "v")
        x.execute_command("XADD", "s", "MAXLEN", "~", "55", "101-0", "f", "v")
        # Only whole nodes of 10 go: at least 55 entries stay.
        n = x.execute_command("XLEN", "s")
        assert 55 <= n < 65
        assert x.execute_command("XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "10") == 10
        assert x.execute_command("XTRIM", "s", "MAXLEN", "~", "5", "LIMIT", "0") > 0
        assert x.execute_command("XLEN", "s") >= 5
    finally:
        x.execute_command("CONFIG", "SET", "stream-node-max-entries", "100")


# ---------------------------------------------------------------------------------------------
# XRANGE / XREVRANGE


@pytest.fixture
def five(x):
    for i in range(1, 6):
        x.execute_command("XADD", "s", f"{i}-1", "n", str(i))
    return x


def ids(reply):
    return [e[0] for e in reply]


def test_xrange_bounds(five):
    x = five
    assert ids(x.execute_command("XRANGE", "s", "-", "+")) == ["1-1", "2-1", "3-1", "4-1", "5-1"]
    assert ids(x.execute_command("XRANGE", "s", "2", "4")) == ["2-1", "3-1", "4-1"]
    assert ids(x.execute_command("XRANGE", "s", "2-1", "4-0")) == ["2-1", "3-1"]
    assert ids(x.execute_command("XRANGE", "s", "(2-1", "(5-1")) == ["3-1", "4-1"]
    assert ids(x.execute_command("XRANGE", "s", "-", "+", "COUNT", "2")) == ["1-1", "2-1"]
    assert ids(x.execute_command("XREVRANGE", "s", "+", "-", "COUNT", "2")) == ["5-1", "4-1"]
    assert ids(x.execute_command("XREVRANGE", "s", "(5-1", "(1-1")) == ["4-1", "3-1", "2-1"]
    assert ids(x.execute_command("XREVRANGE", "s", "4", "2")) == ["4-1", "3-1", "2-1"]
    assert x.execute_command("XRANGE", "s", "4", "2") == []
    assert x.execute_command("XRANGE", "s", "-", "+", "COUNT", "0") is None
    assert x.execute_command("XRANGE", "s", "-", "+", "COUNT", "-5") is None
    assert x.execute_command("XRANGE", "missing", "-", "+") == []
    assert x.execute_command("XRANGE", "missing", "-", "+", "COUNT", "0") == []
    assert x.execute_command("XRANGE", "s", "-", "+", "count", "1", "COUNT", "3") == [
        ["1-1", ["n", "1"]], ["2-1", ["n", "2"]], ["3-1", ["n", "3"]]]


def test_xrange_errors(five, raw):
    assert err(raw, "XRANGE", "s", "-") == arity("xrange")
    assert err(raw, "XRANGE", "s", "x", "+") == INVALID_ID
    assert err(raw, "XRANGE", "s", "(-", "+") == INVALID_ID
    assert err(raw, "XRANGE", "s", "-", "(+") == INVALID_ID
    assert err(raw, "XRANGE", "s", "(18446744073709551615-18446744073709551615", "+") == (
        "ERR invalid start ID for the interval")
    assert err(raw, "XRANGE", "s", "-", "(0-0") == "ERR invalid end ID for the interval"
    assert err(raw, "XREVRANGE", "s", "(0-0", "-") == "ERR invalid end ID for the interval"
    assert err(raw, "XRANGE", "s", "-", "+", "COUNT") == "ERR syntax error"
    assert err(raw, "XRANGE", "s", "-", "+", "LIMIT", "1") == "ERR syntax error"
    assert err(raw, "XRANGE", "s", "-", "+", "COUNT", "x") == "ERR value is not an integer or out of range"
    raw.execute("SET", "str", "x")
    assert err(raw, "XRANGE", "str", "-", "+").startswith("WRONGTYPE")


# ---------------------------------------------------------------------------------------------
# XDEL / XTRIM / XLEN


def test_xdel(five, raw):
    x = five
    assert x.execute_command("XDEL", "s", "1-1", "3-1", "9-9") == 2
    assert x.execute_command("XDEL", "s", "1-1") == 0
    assert ids(x.execute_command("XRANGE", "s", "-", "+")) == ["2-1", "4-1", "5-1"]
    assert x.execute_command("XDEL", "missing", "1-1") == 0
    assert err(raw, "XDEL", "s", "4-1", "bad") == INVALID_ID
    assert x.execute_command("XLEN", "s") == 3  # nothing deleted when an ID is bad
    assert err(raw, "XDEL", "s") == arity("xdel")
    info = dict(zip(*[iter(x.execute_command("XINFO", "STREAM", "s"))] * 2))
    assert info["max-deleted-entry-id"] == "3-1"
    assert info["recorded-first-entry-id"] == "2-1"
    # Deleting everything keeps the key (an empty stream).
    x.execute_command("XDEL", "s", "2-1", "4-1", "5-1")
    assert x.execute_command("XLEN", "s") == 0
    assert x.execute_command("EXISTS", "s") == 1


def test_xtrim(five, raw):
    x = five
    assert x.execute_command("XTRIM", "s", "MAXLEN", "3") == 2
    assert x.execute_command("XTRIM", "s", "MAXLEN", "=", "3") == 0
    assert x.execute_command("XTRIM", "s", "MINID", "5") == 2
    assert ids(x.execute_command("XRANGE", "s", "-", "+")) == ["5-1"]
    assert x.execute_command("XTRIM", "missing", "MAXLEN", "0") == 0
    assert err(raw, "XTRIM", "s", "FOO", "1") == "ERR syntax error"
    assert err(raw, "XTRIM", "s", "LIMIT", "1") == (
        "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
    assert err(raw, "XTRIM", "s", "NOMKSTREAM", "MAXLEN", "1") == "ERR syntax error"
    assert err(raw, "XTRIM", "s", "MAXLEN", "1", "LIMIT", "1") == (
        "ERR syntax error, LIMIT cannot be used without the special ~ option")
    assert err(raw, "XTRIM", "s", "MAXLEN", "-1") == "ERR The MAXLEN argument must be >= 0."
    assert err(raw, "XTRIM", "s", "MAXLEN") == arity("xtrim")
    assert err(raw, "XTRIM", "missing", "MAXLEN", "x") == "ERR value is not an integer or out of range"
    raw.execute("SET", "str", "x")
    assert err(raw, "XTRIM", "str", "MAXLEN", "1").startswith("WRONGTYPE")
    assert err(raw, "XLEN", "str").startswith("WRONGTYPE")
    assert x.execute_command("XLEN", "missing") == 0
    info = dict(zip(*[iter(x.execute_command("XINFO", "STREAM", "s"))] * 2))
    assert info["max-deleted-entry-id"] == "0-0"  # trimming never sets it
    assert info["recorded-first-entry-id"] == "5-1"


# ---------------------------------------------------------------------------------------------
# XSETID


def test_xsetid(five, raw, only_72):
    x = five
    assert x.execute_command("XSETID", "s", "100-0") == "OK"
    assert x.execute_command("XADD", "s", "*", "f", "v").startswith(
        tuple(str(d) for d in range(1, 10)))
    x.execute_command("XADD", "t", "5-0", "f", "v")
    assert err(raw, "XSETID", "t", "4-0") == (
        "ERR The ID specified in XSETID is smaller than the target stream top item")
    assert err(raw, "XSETID", "missing", "4-0") == "ERR no such key"
    assert err(raw, "XSETID", "t", "6-0", "ENTRIESADDED", "0") == (
        "ERR The entries_added specified in XSETID is smaller than the target stream length")
    assert err(raw, "XSETID", "t", "6-0", "ENTRIESADDED", "-1") == "ERR entries_added must be positive"
    assert err(raw, "XSETID", "t", "6-0", "MAXDELETEDID", "7-0") == (
        "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
    assert err(raw, "XSETID", "t", "6-0", "0") == "ERR syntax error"
    assert err(raw, "XSETID", "t", "bad") == INVALID_ID
    assert x.execute_command("XSETID", "t", "6-0", "ENTRIESADDED", "9", "MAXDELETEDID", "5-5") == "OK"
    info = dict(zip(*[iter(x.execute_command("XINFO", "STREAM", "t"))] * 2))
    assert info["last-generated-id"] == "6-0"
    assert info["entries-added"] == 9
    assert info["max-deleted-entry-id"] == "5-5"
    assert err(raw, "XSETID", "t", "5-4") == (
        "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id")
    # An empty stream takes any ID.
    x.execute_command("XADD", "e", "MAXLEN", "0", "9-0", "f", "v")
    assert x.execute_command("XSETID", "e", "1-0") == "OK"


# ---------------------------------------------------------------------------------------------
# XREAD (non-blocking)


def test_xread(five, raw):
    x = five
    x.execute_command("XADD", "t", "9-0", "g", "w")
    assert x.execute_command("XREAD", "STREAMS", "s", "3-1") == [
        ["s", [["4-1", ["n", "4"]], ["5-1", ["n", "5"]]]]]
    assert x.execute_command("XREAD", "COUNT", "1", "STREAMS", "s", "t", "0", "0") == [
        ["s", [["1-1", ["n", "1"]]]], ["t", [["9-0", ["g", "w"]]]]]
    # Streams with nothing new are left out; nothing at all is a nil array.
    assert x.execute_command("XREAD", "STREAMS", "s", "t", "5-1", "0") == [["t", [["9-0", ["g", "w"]]]]]
    assert x.execute_command("XREAD", "STREAMS", "s", "$") is None
    assert x.execute_command("XREAD", "STREAMS", "missing", "0") is None
    assert raw.execute("XREAD", "STREAMS", "s", "$") == b"*-1\r\n"
    assert x.execute_command("XREAD", "COUNT", "-3", "STREAMS", "s", "4") == [
        ["s", [["4-1", ["n", "4"]], ["5-1", ["n", "5"]]]]]


def test_xread_errors(five, raw, only_72):
    assert err(raw, "XREAD", "STREAMS", "s") == arity("xread")
    assert err(raw, "XREAD", "STREAMS", "s", "t", "0") == (
        "ERR Unbalanced 'xread' list of streams: for each stream key an ID or '$' must be specified.")
    assert err(raw, "XREAD", "COUNT", "1", "s", "0") == "ERR syntax error"
    assert err(raw, "XREAD", "STREAMS", "s", "x") == INVALID_ID
    assert err(raw, "XREAD", "STREAMS", "s", ">") == (
        "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
        "<consumer> option.")
    assert err(raw, "XREAD", "GROUP", "g", "c", "STREAMS", "s", "0") == (
        "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
    assert err(raw, "XREAD", "NOACK", "STREAMS", "s", "0") == (
        "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
    assert err(raw, "XREAD", "COUNT", "x", "STREAMS", "s", "0") == "ERR value is not an integer or out of range"
    assert err(raw, "XREAD", "BLOCK", "x", "STREAMS", "s", "0") == "ERR timeout is not an integer or out of range"
    assert err(raw, "XREAD", "BLOCK", "-1", "STREAMS", "s", "0") == "ERR timeout is negative"
    raw.execute("SET", "str", "x")
    assert err(raw, "XREAD", "STREAMS", "s", "str", "0", "0").startswith("WRONGTYPE")


def test_resp3_xread_is_a_map(server):
    c = server.raw()
    c.execute("HELLO", "3")
    c.execute("XADD", "r3", "1-0", "f", "v")
    assert c.execute("XREAD", "STREAMS", "r3", "0") == (
        b"%1\r\n$2\r\nr3\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
    assert c.execute("XREAD", "STREAMS", "r3", "$") == b"_\r\n"
    c.close()


def test_copy_and_memory(five):
    x = five
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "2", "STREAMS", "s", ">")
    assert x.execute_command("COPY", "s", "s2") == 1
    assert x.execute_command("XRANGE", "s2", "-", "+") == x.execute_command("XRANGE", "s", "-", "+")
    assert x.execute_command("XPENDING", "s2", "g") == x.execute_command("XPENDING", "s", "g")
    x.execute_command("XADD", "s2", "9-0", "f", "v")
    assert x.execute_command("XLEN", "s") == 5


def test_watch_is_invalidated_by_stream_writes(server, five):
    x = five
    other = server.client()
    for write in (["XADD", "s", "9-0", "f", "v"], ["XDEL", "s", "1-1"], ["XTRIM", "s", "MAXLEN", "0"],
                  ["XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"]):
        x.execute_command("WATCH", write[2] if write[0] == "XGROUP" else "s")
        other.execute_command(*write)
        x.execute_command("MULTI")
        x.execute_command("PING")
        assert x.execute_command("EXEC") is None, write
    # Consumer-group state and XSETID change no watched key, as in Redis.
    for write in (["XGROUP", "CREATE", "s", "g", "0"], ["XSETID", "s", "99-0"],
                  ["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"], ["XACK", "s", "g", "2-1"],
                  ["XCLAIM", "s", "g", "d", "0", "3-1"], ["XGROUP", "DESTROY", "s", "g"]):
        x.execute_command("WATCH", "s")
        other.execute_command(*write)
        x.execute_command("MULTI")
        x.execute_command("PING")
        assert x.execute_command("EXEC") == ["PONG"], write
    other.close()


def test_command_info_flags(x):
    info = x.execute_command("COMMAND", "INFO", "xadd", "xread", "xreadgroup", "xrange")
    by_name = {i[0]: i for i in info}
    assert sorted(by_name["xadd"][2]) == sorted(["write", "denyoom", "fast"])
    assert by_name["xadd"][1] == -5
    assert "blocking" in by_name["xread"][2] and "movablekeys" in by_name["xread"][2]
    assert "write" in by_name["xreadgroup"][2]
    assert x.execute_command("COMMAND", "GETKEYS", "XREAD", "COUNT", "2", "STREAMS", "a", "b", "0", "0") == ["a", "b"]


def test_approximate_trim_drops_the_nodes_redis_drops(x):
    # Issue 15: blocks end where Redis's 4096-byte listpack nodes end, counting entries whose
    # field names differ from the node's master entry at their full size.
    x.execute_command("XADD", "s1", "*", "x", "1")
    for i in range(109):
        x.execute_command("XADD", "s1", "*", "event", "completed", "jobId", str(i),
                          "returnvalue", "null", "prev", "active")
    assert x.execute_command("XTRIM", "s1", "MAXLEN", "~", "20") == 59
    assert x.execute_command("XLEN", "s1") == 51
    # MINID ~ and LIMIT drop whole nodes too: 300 entries of 50 listpack bytes fill nodes of 81.
    for i in range(1, 301):
        x.execute_command("XADD", "s2", f"{i}-0", "f", "v" * 40)
    assert x.execute_command("XTRIM", "s2", "MINID", "~", "170") == 162
    assert x.execute_command("XTRIM", "s2", "MAXLEN", "~", "0", "LIMIT", "80") == 0
    assert x.execute_command("XTRIM", "s2", "MAXLEN", "~", "0", "LIMIT", "81") == 81
    assert x.execute_command("XLEN", "s2") == 57

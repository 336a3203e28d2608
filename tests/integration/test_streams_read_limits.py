"""XREAD / XREADGROUP MAXCOUNT and MAXSIZE (Redis 8.10): one budget of entries and reply bytes
for the whole command, across its streams in order (redis.io's XREAD / XREADGROUP pages).
Argument errors, the cumulative cap, MAXSIZE's at-least-one-entry rule, PEL reads, entries left
undelivered by the cap, CLAIM, the blocking forms, RESP3, MULTI and scripts, COMMAND GETKEYS.
"""

import threading

import pytest

from conftest import wait_blocked


@pytest.fixture
def x(server, raw):
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    c.flushall()
    c.plain = server.client(decode_responses=True)
    yield c
    c.plain.close()
    c.close()


def fill(x, key, n, value="v"):
    return [x.execute_command("XADD", key, "*", "f", value) for _ in range(n)]


def shape(reply):
    """[(key, number of entries)] of an XREAD reply (RESP2)."""
    return [(k, len(entries)) for k, entries in reply or []]


def three_streams(x, n=10):
    for k in ("s1", "s2", "s3"):
        fill(x, k, n)


def test_maxcount_caps_the_total_filling_from_the_first_stream(x):
    three_streams(x)
    assert shape(x.execute_command("XREAD", "MAXCOUNT", 7, "STREAMS", "s1", "s2", "s3",
                                   0, 0, 0)) == [("s1", 7)]
    assert shape(x.execute_command("XREAD", "COUNT", 4, "MAXCOUNT", 10, "STREAMS", "s1", "s2",
                                   "s3", 0, 0, 0)) == [("s1", 4), ("s2", 4), ("s3", 2)]
    # Without a cap it is COUNT per stream, as before.
    assert shape(x.execute_command("XREAD", "COUNT", 4, "STREAMS", "s1", "s2", "s3",
                                   0, 0, 0)) == [("s1", 4), ("s2", 4), ("s3", 4)]
    # A cap larger than what there is changes nothing.
    assert shape(x.execute_command("XREAD", "MAXCOUNT", 1000, "STREAMS", "s1", "s2", "s3",
                                   0, 0, 0)) == [("s1", 10), ("s2", 10), ("s3", 10)]


def test_maxsize_returns_at_least_one_entry_and_stops_once_over(x):
    fill(x, "s1", 3, "a" * 1000)
    fill(x, "s2", 3, "b" * 1000)
    # One entry is bigger than 10 bytes: it comes anyway, alone.
    assert shape(x.execute_command("XREAD", "MAXSIZE", 10, "STREAMS", "s1", "s2", 0, 0)) == [
        ("s1", 1)]
    # Each entry is a little over 1000 reply bytes. The budget is checked before each entry, so
    # the entry that crosses the line is the last one: 2500 gives three, 3500 four.
    got = shape(x.execute_command("XREAD", "MAXSIZE", 2500, "STREAMS", "s1", "s2", 0, 0))
    assert got == [("s1", 3)]
    got = shape(x.execute_command("XREAD", "MAXSIZE", 3500, "STREAMS", "s1", "s2", 0, 0))
    assert got == [("s1", 3), ("s2", 1)]
    # Whichever bound is reached first wins.
    assert shape(x.execute_command("XREAD", "MAXCOUNT", 2, "MAXSIZE", 100000, "STREAMS", "s1",
                                   "s2", 0, 0)) == [("s1", 2)]
    assert shape(x.execute_command("XREAD", "MAXCOUNT", 5, "MAXSIZE", 1, "STREAMS", "s1",
                                   "s2", 0, 0)) == [("s1", 1)]


@pytest.mark.parametrize("cmd", [["XREAD"], ["XREADGROUP", "GROUP", "g", "c"]])
def test_argument_errors(x, cmd):
    x.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    idarg = ">" if len(cmd) > 1 else "0"

    def e(*opts):
        with pytest.raises(Exception) as info:
            x.execute_command(*cmd, *opts, "STREAMS", "s", idarg)
        return str(info.value)

    assert e("MAXCOUNT", 0) == "MAXCOUNT must be a positive integer"
    assert e("MAXCOUNT", -1) == "MAXCOUNT must be a positive integer"
    assert e("MAXSIZE", 0) == "MAXSIZE must be a positive integer"
    assert e("MAXSIZE", -5) == "MAXSIZE must be a positive integer"
    assert e("MAXCOUNT", "x") == "value is not an integer or out of range"
    assert e("MAXSIZE", "9223372036854775808") == "value is not an integer or out of range"
    assert e("COUNT", 5, "MAXCOUNT", 4) == "MAXCOUNT must be greater than or equal to COUNT"
    assert e("MAXCOUNT", 4, "COUNT", 5) == "MAXCOUNT must be greater than or equal to COUNT"
    # Equal is fine, and INT64_MAX is just "no cap" in practice.
    x.execute_command(*cmd, "COUNT", 5, "MAXCOUNT", 5, "STREAMS", "s", idarg)
    x.execute_command(*cmd, "MAXCOUNT", "9223372036854775807", "MAXSIZE",
                      "9223372036854775807", "STREAMS", "s", idarg)


def test_xreadgroup_entries_over_the_cap_stay_undelivered(x):
    three_streams(x, 5)
    for k in ("s1", "s2", "s3"):
        x.execute_command("XGROUP", "CREATE", k, "g", "0")
    got = x.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", 3, "MAXCOUNT", 4,
                            "STREAMS", "s1", "s2", "s3", ">", ">", ">")
    assert shape(got) == [("s1", 3), ("s2", 1)]
    assert x.execute_command("XPENDING", "s1", "g")[0] == 3
    assert x.execute_command("XPENDING", "s2", "g")[0] == 1
    assert x.execute_command("XPENDING", "s3", "g")[0] == 0
    # The group's last ID moved only past what was delivered: the rest comes next.
    got = x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s1", "s2", "s3",
                            ">", ">", ">")
    assert shape(got) == [("s1", 2), ("s2", 4), ("s3", 5)]
    # History (PEL) reads obey the cap too.
    got = x.execute_command("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", 6, "STREAMS", "s1",
                            "s2", "s3", 0, 0, 0)
    assert shape(got) == [("s1", 5), ("s2", 1)]


def test_xreadgroup_maxsize_skipped_entry_is_not_pending(x):
    fill(x, "s", 4, "z" * 500)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    got = x.execute_command("XREADGROUP", "GROUP", "g", "c", "MAXSIZE", 600, "STREAMS", "s", ">")
    assert shape(got) == [("s", 2)]
    assert x.execute_command("XPENDING", "s", "g")[0] == 2
    assert x.execute_command("XINFO", "GROUPS", "s")[0][9] == 2  # entries-read


def test_claim_shares_maxcount(x):
    ids = fill(x, "s", 6)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c1", "COUNT", 3, "STREAMS", "s", ">")
    x.execute_command("XCLAIM", "s", "g", "c1", "0", *ids[:3], "IDLE", "100000", "JUSTID")
    got = x.execute_command("XREADGROUP", "GROUP", "g", "c2", "CLAIM", 1000, "MAXCOUNT", 2,
                            "STREAMS", "s", ">")
    assert [e[0] for e in got[0][1]] == ids[:2]
    got = x.execute_command("XREADGROUP", "GROUP", "g", "c2", "CLAIM", 1000, "MAXCOUNT", 3,
                            "STREAMS", "s", ">")
    assert [e[0] for e in got[0][1]] == [ids[2], ids[3], ids[4]]


def test_resp3_map(server):
    c = server.raw()
    c.execute("HELLO", "3")
    c.execute("DEL", "r1", "r2")
    for k in ("r1", "r2"):
        c.execute("XADD", k, "1-0", "f", "v")
        c.execute("XADD", k, "2-0", "f", "v")
    # Two streams named, the cap reached inside the first: a map of one.
    assert c.execute("XREAD", "MAXCOUNT", "2", "STREAMS", "r1", "r2", "0", "0") == (
        b"%1\r\n$2\r\nr1\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n"
        b"*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n")
    c.close()


def test_blocking_read_honours_the_cap_when_served(server, x):
    other = server.client(decode_responses=True)
    other.response_callbacks.clear()
    out = {}

    def reader():
        out["r"] = other.execute_command("XREAD", "MAXCOUNT", 2, "BLOCK", 5000, "STREAMS",
                                         "s1", "s2", "$", "$")

    t = threading.Thread(target=reader)
    t.start()
    wait_blocked(x.plain, 1)
    x.execute_command("MULTI")
    for _ in range(3):
        x.execute_command("XADD", "s2", "*", "f", "v")
    x.execute_command("EXEC")
    t.join(5)
    assert shape(out["r"]) == [("s2", 2)]
    other.close()


def test_blocking_xreadgroup_honours_the_cap(server, x):
    x.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    other = server.client(decode_responses=True)
    other.response_callbacks.clear()
    out = {}

    def reader():
        out["r"] = other.execute_command("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", 1,
                                         "BLOCK", 5000, "STREAMS", "s", ">")

    t = threading.Thread(target=reader)
    t.start()
    wait_blocked(x.plain, 1)
    x.execute_command("MULTI")
    x.execute_command("XADD", "s", "*", "f", "1")
    x.execute_command("XADD", "s", "*", "f", "2")
    x.execute_command("EXEC")
    t.join(5)
    assert shape(out["r"]) == [("s", 1)]
    assert x.execute_command("XPENDING", "s", "g")[0] == 1
    other.close()


def test_multi_and_scripts(x):
    fill(x, "s1", 3)
    fill(x, "s2", 3)
    x.execute_command("MULTI")
    x.execute_command("XREAD", "MAXCOUNT", 4, "STREAMS", "s1", "s2", 0, 0)
    got = x.execute_command("EXEC")[0]
    assert shape(got) == [("s1", 3), ("s2", 1)]
    got = x.execute_command(
        "EVAL", "return redis.call('XREAD', 'MAXCOUNT', 2, 'STREAMS', KEYS[1], KEYS[2], 0, 0)",
        2, "s1", "s2")
    assert shape(got) == [("s1", 2)]


def test_getkeys_skips_the_new_options(x):
    assert x.execute_command("COMMAND", "GETKEYS", "XREAD", "MAXCOUNT", 5, "MAXSIZE", 9,
                             "STREAMS", "a", "b", 0, 0) == ["a", "b"]
    assert x.execute_command("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "MAXCOUNT",
                             5, "STREAMS", "a", ">") == ["a"]

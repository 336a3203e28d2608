"""Blocking sorted-set pops: BZPOPMIN, BZPOPMAX, BZMPOP.

The same ordering cases as the list suite (test_blocking.py): first blocked is served first,
one member to one waiter, a waiter's own key order, MULTI/EXEC serving after EXEC and the
non-blocking behaviour inside MULTI, timeouts. Every wait for a client to block polls INFO
(wait_blocked); nothing sleeps to synchronise.
"""

import pytest

from conftest import arr, wait_blocked

NIL_ARRAY = b"*-1\r\n"


@pytest.fixture
def conns(server, r):
    made = []

    def make():
        c = server.raw(timeout=10)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()
    wait_blocked(r, 0)


def block(r, conn, n, *command):
    conn.send_command(*command)
    wait_blocked(r, n)


def test_first_blocked_is_served_first(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BZPOPMIN", "k", "0")
    block(r, w2, 2, "BZPOPMIN", "k", "0")
    assert r.zadd("k", {"a": 1}) == 1
    assert w1.read_reply() == arr("k", "a", "1")
    wait_blocked(r, 1)
    assert r.exists("k") == 0
    r.zadd("k", {"b": 2})
    assert w2.read_reply() == arr("k", "b", "2")


def test_one_member_per_waiter(r, conns):
    ws = [conns() for _ in range(3)]
    for i, w in enumerate(ws):
        block(r, w, i + 1, "BZPOPMAX", "k", "0")
    assert r.zadd("k", {"a": 1, "b": 2, "c": 3}) == 3
    assert [w.read_reply() for w in ws] == [
        arr("k", "c", "3"), arr("k", "b", "2"), arr("k", "a", "1")]
    assert r.exists("k") == 0


def test_more_members_than_waiters_leaves_the_rest(r, conns):
    w = conns()
    block(r, w, 1, "BZPOPMIN", "k", "0")
    r.zadd("k", {"a": 1, "b": 2})
    assert w.read_reply() == arr("k", "a", "1")
    assert r.zrange("k", 0, -1) == [b"b"]


def test_data_present_returns_at_once(r, conns):
    w = conns()
    r.zadd("k", {"a": 1})
    assert w.execute("BZPOPMIN", "k", "0") == arr("k", "a", "1")


def test_first_nonempty_key_in_the_waiters_order(r, conns):
    w = conns()
    block(r, w, 1, "BZPOPMIN", "a", "b", "0")
    pipe = r.pipeline()
    pipe.zadd("b", {"fromb": 1})
    pipe.zadd("a", {"froma": 1})
    pipe.execute()
    assert w.read_reply() == arr("a", "froma", "1")
    assert r.zrange("b", 0, -1) == [b"fromb"]


def test_served_from_the_key_that_gets_data(r, conns):
    w = conns()
    block(r, w, 1, "BZPOPMIN", "k1", "k2", "0")
    r.zadd("k2", {"x": 5})
    assert w.read_reply() == arr("k2", "x", "5")
    r.zadd("k1", {"y": 1})
    assert r.zrange("k1", 0, -1) == [b"y"]


def test_multi_serves_after_exec(r, conns):
    w = conns()
    block(r, w, 1, "BZPOPMIN", "k", "0")
    pipe = r.pipeline()
    pipe.zadd("k", {"a": 3})
    pipe.zadd("k", {"b": 1})
    pipe.execute()
    assert w.read_reply() == arr("k", "b", "1")
    assert r.zrange("k", 0, -1) == [b"a"]


def test_added_and_removed_in_multi_wakes_nobody(r, conns):
    w = conns()
    block(r, w, 1, "BZPOPMIN", "k", "0")
    pipe = r.pipeline()
    pipe.zadd("k", {"a": 1})
    pipe.delete("k")
    pipe.execute()
    wait_blocked(r, 1)
    r.zadd("k", {"b": 1})
    assert w.read_reply() == arr("k", "b", "1")


def test_inside_multi_does_not_block(r):
    pipe = r.pipeline()
    pipe.execute_command("BZPOPMIN", "k", "0")
    pipe.execute_command("BZMPOP", "0", "1", "k", "MIN")
    assert pipe.execute() == [None, None]
    r.zadd("k", {"a": 1})
    pipe = r.pipeline()
    pipe.execute_command("BZPOPMAX", "k", "0")
    assert pipe.execute() == [(b"k", b"a", 1.0)]


def test_timeout_replies_null(r, conns):
    w = conns()
    assert w.execute("BZPOPMIN", "k", "0.05") == NIL_ARRAY
    assert w.execute("BZMPOP", "0.05", "1", "k", "MAX") == NIL_ARRAY


def test_wrong_type_keeps_waiting(r, conns):
    w = conns()
    block(r, w, 1, "BZPOPMIN", "k", "0")
    r.set("k", "str")
    r.delete("k")
    wait_blocked(r, 1)
    r.rpush("k", "x")  # a list does not serve a zset waiter
    wait_blocked(r, 1)
    r.delete("k")
    r.zadd("k", {"m": 1})
    assert w.read_reply() == arr("k", "m", "1")


def test_bzmpop_served(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BZMPOP", "0", "2", "a", "b", "MIN", "COUNT", "2")
    block(r, w2, 2, "BZMPOP", "0", "1", "b", "MAX")
    r.zadd("b", {"x": 1, "y": 2, "z": 3})
    assert w1.read_reply() == arr("b", [["x", "1"], ["y", "2"]])
    assert w2.read_reply() == arr("b", [["z", "3"]])
    assert r.exists("b") == 0


def test_zadd_to_existing_key_serves_waiter_blocked_on_other_key(r, conns):
    # A waiter on two keys is served by ZUNIONSTORE creating one of them.
    w = conns()
    r.zadd("src", {"m": 7})
    block(r, w, 1, "BZPOPMIN", "dst", "0")
    r.zunionstore("dst", ["src"])
    assert w.read_reply() == arr("dst", "m", "7")


def test_resp3_reply_shapes(server, r, conns):
    w = conns()
    w.execute("HELLO", "3")
    block(r, w, 1, "BZPOPMIN", "k", "0")
    r.zadd("k", {"a": 1.5})
    assert w.read_reply() == b"*3\r\n$1\r\nk\r\n$1\r\na\r\n,1.5\r\n"
    assert w.execute("BZPOPMIN", "k", "0.01") == b"_\r\n"

"""Blocking list commands: BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP.

Serving order, MULTI, timeouts, CLIENT UNBLOCK, disconnects, keyspace commands that hand a
waiter its key, and the INFO / CLIENT LIST view of blocked clients. Every wait for a client to
block polls INFO (wait_blocked); nothing sleeps to synchronise.

Expected replies are Redis 7.2's. The suite also passes against a real redis-server 7.0
(VIREO_SERVER=$(command -v redis-server)); the checks where 7.0 and 7.2 differ are marked
`only_72` and skipped there.
"""

import re
import time

import pytest

from conftest import arr, wait_blocked, wait_for

NIL_ARRAY = b"*-1\r\n"
NIL_BULK = b"$-1\r\n"


def bulk(s):
    if isinstance(s, str):
        s = s.encode()
    return b"$%d\r\n%s\r\n" % (len(s), s)


def client_id(raw):
    reply = raw.execute("CLIENT", "ID")
    assert reply.startswith(b":")
    return int(reply[1:-2])


class ClientsInfo(dict):
    """INFO clients; fields Redis 7.0 lacks (total_blocking_keys...) compare equal to anything."""

    def __getitem__(self, key):
        if key not in self and key in ("total_blocking_keys", "total_blocking_keys_on_nokey"):
            return _Anything()
        return super().__getitem__(key)


class _Anything:
    def __eq__(self, other):
        return True


def clients_info(r):
    return ClientsInfo(r.info("clients"))


def client_line(r, cid):
    for line in r.execute_command("CLIENT", "LIST").decode().splitlines():
        if f"id={cid} " in line:
            return line
    return None


@pytest.fixture
def conns(server, r):
    """Raw connections made on demand; all closed at teardown."""
    made = []

    def make():
        c = server.raw(timeout=10)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()
    # Nothing may stay blocked into the next test.
    wait_blocked(r, 0)


def block(r, conn, n, *command):
    """Send a blocking command and wait until the server counts n blocked clients."""
    conn.send_command(*command)
    wait_blocked(r, n)


# --------------------------------------------------------------------------------------------
# Serving order


def test_first_blocked_is_served_first(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BRPOP", "k", "0")
    block(r, w2, 2, "BRPOP", "k", "0")
    assert r.lpush("k", "a") == 1
    assert w1.read_reply() == arr("k", "a")
    wait_blocked(r, 1)
    assert r.exists("k") == 0
    r.lpush("k", "b")
    assert w2.read_reply() == arr("k", "b")


def test_data_present_returns_at_once(r, conns):
    w = conns()
    r.lpush("k", "a")
    assert w.execute("BRPOP", "k", "0") == arr("k", "a")
    assert r.exists("k") == 0


def test_waiter_blocked_before_the_push_wins_over_a_later_one(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BRPOP", "k", "0")
    r.lpush("k", "a")
    assert w1.read_reply() == arr("k", "a")
    block(r, w2, 1, "BRPOP", "k", "0")
    r.lpush("k", "b")
    assert w2.read_reply() == arr("k", "b")


@pytest.mark.parametrize("cmd,expected", [("BRPOP", "abc"), ("BLPOP", "cba")])
def test_variadic_push_feeds_waiters_in_order(r, conns, cmd, expected):
    ws = [conns() for _ in range(3)]
    for i, w in enumerate(ws):
        block(r, w, i + 1, cmd, "k", "0")
    assert r.lpush("k", "a", "b", "c") == 3
    assert [w.read_reply() for w in ws] == [arr("k", e) for e in expected]
    assert r.exists("k") == 0
    wait_blocked(r, 0)


def test_variadic_push_with_one_waiter_leaves_the_rest(r, conns):
    w = conns()
    block(r, w, 1, "BLPOP", "blist", "0")
    assert r.lpush("blist", "foo", "bar") == 2
    assert w.read_reply() == arr("blist", "bar")
    assert r.lrange("blist", 0, -1) == [b"foo"]


def test_multi_pushes_serve_after_exec(r, conns):
    w = conns()
    block(r, w, 1, "BLPOP", "list", "0")
    pipe = r.pipeline()
    pipe.lpush("list", "a")
    pipe.lpush("list", "b")
    pipe.lpush("list", "c")
    pipe.execute()
    assert w.read_reply() == arr("list", "c")
    assert r.lrange("list", 0, -1) == [b"b", b"a"]


def test_two_keys_served_from_the_one_that_gets_data(r, conns):
    w = conns()
    cid = client_id(w)
    block(r, w, 1, "BRPOP", "k1", "k2", "0")
    info = clients_info(r)
    assert info["blocked_clients"] == 1
    assert info["total_blocking_keys"] == 2
    r.rpush("k2", "x")
    assert w.read_reply() == arr("k2", "x")
    wait_blocked(r, 0)
    # The client left k1's list too: a later push to k1 stays there.
    assert clients_info(r)["total_blocking_keys"] == 0
    assert "flags=b" not in client_line(r, cid)
    r.rpush("k1", "y")
    assert r.lrange("k1", 0, -1) == [b"y"]


def test_first_nonempty_key_in_the_waiters_own_order(r, conns, only_72):
    w = conns()
    block(r, w, 1, "BLPOP", "a", "b", "0")
    pipe = r.pipeline()
    pipe.rpush("b", "fromb")
    pipe.rpush("a", "froma")
    pipe.execute()
    assert w.read_reply() == arr("a", "froma")
    assert r.lrange("b", 0, -1) == [b"fromb"]


def test_same_key_several_times(r, conns):
    w = conns()
    block(r, w, 1, "BLPOP", "l1", "l2", "l2", "l1", "0")
    assert clients_info(r)["total_blocking_keys"] == 2
    r.lpush("l1", "a")
    assert w.read_reply() == arr("l1", "a")
    block(r, w, 1, "BLPOP", "l1", "l2", "l2", "l1", "0")
    r.lpush("l2", "b")
    assert w.read_reply() == arr("l2", "b")
    r.lpush("l1", "a")
    r.lpush("l2", "b")
    assert w.execute("BLPOP", "l1", "l2", "l2", "l1", "0") == arr("l1", "a")
    assert w.execute("BLPOP", "l1", "l2", "l2", "l1", "0") == arr("l2", "b")


def test_blmpop_waiters_take_counts_in_order(r, conns):
    w1, w2, w3, w4 = conns(), conns(), conns(), conns()
    block(r, w1, 1, "BLMPOP", "0", "2", "blist", "blist2", "LEFT", "COUNT", "1")
    block(r, w2, 2, "BLMPOP", "0", "2", "blist", "blist2", "RIGHT", "COUNT", "10")
    block(r, w3, 3, "BLMPOP", "0", "2", "blist", "blist2", "LEFT", "COUNT", "10")
    block(r, w4, 4, "BLMPOP", "0", "2", "blist", "blist2", "RIGHT", "COUNT", "1")
    pipe = r.pipeline()
    pipe.lpush("blist", "a", "b", "c", "d", "e")
    pipe.lpush("blist2", "1", "2", "3", "4", "5")
    pipe.execute()
    assert w1.read_reply() == arr("blist", ["e"])
    assert w2.read_reply() == arr("blist", ["a", "b", "c", "d"])
    assert w3.read_reply() == arr("blist2", ["5", "4", "3", "2", "1"])
    wait_blocked(r, 1)
    r.lpush("blist2", "1", "2", "3")
    assert w4.read_reply() == arr("blist2", ["1"])
    assert r.lrange("blist2", 0, -1) == [b"3", b"2"]


@pytest.mark.parametrize("command", [
    ["BLPOP", "l", "0"], ["BRPOP", "l", "0"], ["BLMPOP", "0", "1", "l", "LEFT"],
    ["BLMPOP", "0", "1", "l", "RIGHT", "COUNT", "1"],
])
def test_each_blocking_pop_is_served(r, conns, command):
    w = conns()
    block(r, w, 1, *command)
    r.rpush("l", "foo")
    reply = w.read_reply()
    assert reply in (arr("l", "foo"), arr("l", ["foo"]))
    assert r.exists("l") == 0


# --------------------------------------------------------------------------------------------
# Moves


@pytest.mark.parametrize("wherefrom", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("whereto", ["LEFT", "RIGHT"])
def test_blmove_blocks_then_moves(r, conns, wherefrom, whereto):
    w = conns()
    r.rpush("target", "bar")
    block(r, w, 1, "BLMOVE", "blist", "target", wherefrom, whereto, "0")
    r.rpush("blist", "foo")
    assert w.read_reply() == bulk("foo")
    expected = [b"bar", b"foo"] if whereto == "RIGHT" else [b"foo", b"bar"]
    assert r.lrange("target", 0, -1) == expected
    assert r.exists("blist") == 0


@pytest.mark.parametrize("wherefrom", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("whereto", ["LEFT", "RIGHT"])
def test_blmove_feeds_a_waiter_on_the_destination(r, conns, wherefrom, whereto):
    popper, mover = conns(), conns()
    block(r, popper, 1, "BLPOP", "target", "0")
    block(r, mover, 2, "BLMOVE", "blist", "target", wherefrom, whereto, "0")
    r.rpush("blist", "foo")
    assert mover.read_reply() == bulk("foo")
    assert popper.read_reply() == arr("target", "foo")
    assert r.exists("target") == 0
    assert r.exists("blist") == 0


def test_linked_blmoves_in_one_pass(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BLMOVE", "list1", "list2", "RIGHT", "LEFT", "0")
    block(r, w2, 2, "BLMOVE", "list2", "list3", "LEFT", "RIGHT", "0")
    r.rpush("list1", "foo")
    assert w1.read_reply() == bulk("foo")
    assert w2.read_reply() == bulk("foo")
    assert r.lrange("list1", 0, -1) == []
    assert r.lrange("list2", 0, -1) == []
    assert r.lrange("list3", 0, -1) == [b"foo"]


def test_circular_brpoplpush(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BRPOPLPUSH", "list1", "list2", "0")
    block(r, w2, 2, "BRPOPLPUSH", "list2", "list1", "0")
    r.rpush("list1", "foo")
    assert w1.read_reply() == bulk("foo")
    assert w2.read_reply() == bulk("foo")
    assert r.lrange("list1", 0, -1) == [b"foo"]
    assert r.lrange("list2", 0, -1) == []


def test_self_referential_brpoplpush(r, conns):
    w = conns()
    block(r, w, 1, "BRPOPLPUSH", "blist", "blist", "0")
    r.rpush("blist", "foo")
    assert w.read_reply() == bulk("foo")
    assert r.lrange("blist", 0, -1) == [b"foo"]


def test_nested_unblock_keeps_fifo(r, conns):
    w1, w2, w3 = conns(), conns(), conns()
    block(r, w1, 1, "BRPOPLPUSH", "l1", "l3", "0")
    block(r, w2, 2, "BLPOP", "l2", "0")
    block(r, w3, 3, "BLMPOP", "0", "2", "l2", "l3", "LEFT", "COUNT", "1")
    pipe = r.pipeline()
    pipe.lpush("l1", "1")
    pipe.lpush("l2", "2")
    pipe.execute()
    wait_blocked(r, 0)
    assert w1.read_reply() == bulk("1")
    assert w2.read_reply() == arr("l2", "2")
    assert w3.read_reply() == arr("l3", ["1"])


def test_blocked_move_to_wrong_type_destination_errors_and_keeps_element(r, conns):
    w = conns()
    r.set("target", "nolist")
    block(r, w, 1, "BRPOPLPUSH", "blist", "target", "0")
    r.rpush("blist", "a", "b", "c")
    assert w.read_reply().startswith(b"-WRONGTYPE")
    assert r.lrange("blist", 0, -1) == [b"a", b"b", b"c"]


def test_failed_waiter_passes_the_element_on(r, conns):
    w1, w2 = conns(), conns()
    r.set("target1", "nolist")
    block(r, w1, 1, "BRPOPLPUSH", "blist", "target1", "0")
    block(r, w2, 2, "BRPOPLPUSH", "blist", "target2", "0")
    r.lpush("blist", "foo")
    assert w1.read_reply().startswith(b"-WRONGTYPE")
    assert w2.read_reply() == bulk("foo")
    assert r.lrange("target2", 0, -1) == [b"foo"]


def test_wrong_type_key_before_the_ready_one_errors_when_rerun(r, conns, only_72):
    # 7.2 runs a served command again in full: BLPOP a b finds a is now a string.
    w = conns()
    block(r, w, 1, "BLPOP", "a", "b", "0")
    r.set("a", "str")
    r.rpush("b", "x")
    assert w.read_reply().startswith(b"-WRONGTYPE")
    assert r.lrange("b", 0, -1) == [b"x"]


def test_brpoplpush_served_push_invalidates_watch(server, r, conns):
    w = conns()
    r.set("somekey", "somevalue")
    block(r, w, 1, "BRPOPLPUSH", "srclist", "dstlist", "0")
    watcher = server.raw()
    assert watcher.execute("WATCH", "dstlist") == b"+OK\r\n"
    assert watcher.execute("MULTI") == b"+OK\r\n"
    assert watcher.execute("GET", "somekey") == b"+QUEUED\r\n"
    r.lpush("srclist", "element")
    assert w.read_reply() == bulk("element")
    assert watcher.execute("EXEC") == NIL_ARRAY


# --------------------------------------------------------------------------------------------
# MULTI and keys that change under a waiter


def test_blocking_commands_in_multi_never_block(r, raw):
    r.lpush("xlist", "foo", "bar")
    assert raw.execute("MULTI") == b"+OK\r\n"
    for _ in range(3):
        assert raw.execute("BLPOP", "xlist", "0") == b"+QUEUED\r\n"
    assert raw.execute("BLMOVE", "nokey", "dst", "LEFT", "LEFT", "0") == b"+QUEUED\r\n"
    assert raw.execute("BRPOPLPUSH", "nokey", "dst", "0") == b"+QUEUED\r\n"
    assert raw.execute("BLMPOP", "0", "1", "nokey", "LEFT") == b"+QUEUED\r\n"
    assert raw.execute("BRPOP", "nokey", "0") == b"+QUEUED\r\n"
    assert raw.execute("EXEC") == (b"*7\r\n" + arr("xlist", "bar") + arr("xlist", "foo") +
                                   NIL_ARRAY + NIL_BULK + NIL_BULK + NIL_ARRAY + NIL_ARRAY)
    assert clients_info(r)["blocked_clients"] == 0


def test_brpoplpush_in_multi(r):
    r.lpush("xlist", "foo", "bar")
    pipe = r.pipeline()
    for _ in range(3):
        pipe.brpoplpush("xlist", "target", 0)
    pipe.lrange("xlist", 0, -1)
    pipe.lrange("target", 0, -1)
    assert pipe.execute() == [b"foo", b"bar", None, [], [b"bar", b"foo"]]


def test_push_and_delete_in_one_multi_wakes_nobody(r, conns):
    w = conns()
    block(r, w, 1, "BLPOP", "list", "0")
    pipe = r.pipeline()
    pipe.lpush("list", "a")
    pipe.delete("list")
    pipe.execute()
    assert clients_info(r)["blocked_clients"] == 1
    r.lpush("list", "b")
    assert w.read_reply() == arr("list", "b")


def test_push_delete_set_in_one_multi_wakes_nobody(r, conns):
    w = conns()
    block(r, w, 1, "BLMPOP", "0", "1", "list", "LEFT", "COUNT", "1")
    pipe = r.pipeline()
    pipe.lpush("list", "a")
    pipe.delete("list")
    pipe.set("list", "foo")
    pipe.execute()
    assert clients_info(r)["blocked_clients"] == 1
    r.delete("list")
    r.lpush("list", "b")
    assert w.read_reply() == arr("list", ["b"])


def test_key_overwritten_with_another_type_keeps_waiter_blocked(r, conns):
    w = conns()
    block(r, w, 1, "BLPOP", "k", "0")
    r.set("k", "str")
    assert clients_info(r)["blocked_clients"] == 1
    r.lpush("other", "x")
    r.delete("k")
    assert clients_info(r)["blocked_clients"] == 1
    r.rpush("k", "v")
    assert w.read_reply() == arr("k", "v")


# --------------------------------------------------------------------------------------------
# Keyspace commands that hand a waiter its key


def test_rename_serves_waiter(r, conns):
    w = conns()
    block(r, w, 1, "BLPOP", "foo", "0")
    r.lpush("bob", "abc", "def", "hij")
    r.rename("bob", "foo")
    assert w.read_reply() == arr("foo", "hij")
    assert r.lrange("foo", 0, -1) == [b"def", b"abc"]


def test_copy_serves_waiter(r, conns):
    w = conns()
    block(r, w, 1, "BRPOP", "foo", "0")
    r.rpush("src", "a", "b")
    assert r.copy("src", "foo") == 1
    assert w.read_reply() == arr("foo", "b")
    assert r.lrange("src", 0, -1) == [b"a", b"b"]


def test_copy_to_other_db_serves_waiter(r, conns):
    w = conns()
    assert w.execute("SELECT", "1") == b"+OK\r\n"
    block(r, w, 1, "BLPOP", "foo", "0")
    r.rpush("src", "a")
    assert r.execute_command("COPY", "src", "foo", "DB", "1") == 1
    assert w.read_reply() == arr("foo", "a")


def test_move_serves_waiter_in_target_db(r, conns):
    w = conns()
    assert w.execute("SELECT", "1") == b"+OK\r\n"
    block(r, w, 1, "BLPOP", "k", "0")
    r.rpush("k", "hello")
    assert r.move("k", 1) is True
    assert w.read_reply() == arr("k", "hello")


def test_swapdb_serves_waiter(r, conns):
    w = conns()
    assert w.execute("SELECT", "1") == b"+OK\r\n"
    block(r, w, 1, "BRPOP", "k", "5")
    r.rpush("k", "hello")
    assert r.swapdb(0, 1) is True
    assert w.read_reply() == arr("k", "hello")
    r.swapdb(0, 1)


def test_swapdb_with_expired_key_keeps_waiter_blocked(r, conns):
    w = conns()
    assert w.execute("SELECT", "1") == b"+OK\r\n"
    cid = client_id(w)
    block(r, w, 1, "BRPOP", "k", "0")
    r.rpush("k", "hello")
    r.pexpire("k", 30)
    wait_for(lambda: r.execute_command("PTTL", "k") < 0)
    r.swapdb(0, 1)
    assert "flags=b" in client_line(r, cid)
    assert r.client_unblock(cid) == 1
    assert w.read_reply() == NIL_ARRAY
    r.swapdb(0, 1)


def test_rpush_onto_waited_key_serves(r, conns):
    w = conns()
    block(r, w, 1, "BLPOP", "k", "0")
    r.rpush("k", "a", "b")
    assert w.read_reply() == arr("k", "a")
    assert r.lrange("k", 0, -1) == [b"b"]


def test_lmove_from_another_client_serves_waiter(r, conns):
    w = conns()
    block(r, w, 1, "BLPOP", "dst", "0")
    r.rpush("src", "x")
    assert r.lmove("src", "dst", "LEFT", "LEFT") == b"x"
    assert w.read_reply() == arr("dst", "x")


# --------------------------------------------------------------------------------------------
# Timeouts


@pytest.mark.parametrize("command,timeout", [
    (["BLPOP", "k1", "k2"], 0.1), (["BRPOP", "k"], 0.25), (["BLMPOP", None, "1", "k", "LEFT"], 0.1),
    (["BLMOVE", "k", "d", "LEFT", "RIGHT"], 0.25), (["BRPOPLPUSH", "k", "d"], 0.1),
])
def test_timeout_precision(r, conns, command, timeout):
    w = conns()
    if command[0] == "BLMPOP":
        argv = ["BLMPOP", str(timeout)] + command[2:]
    else:
        argv = command + [str(timeout)]
    start = time.monotonic()
    w.send_command(*argv)
    reply = w.read_reply()
    elapsed = time.monotonic() - start
    # A blocked BLMOVE / BRPOPLPUSH that times out answers a nil array too, not a nil bulk.
    assert reply == NIL_ARRAY
    assert elapsed >= timeout, f"timed out after {elapsed:.4f}s, asked {timeout}s"
    # Generous: the machine is small and shared.
    assert elapsed < timeout + 1.0
    assert clients_info(r)["blocked_clients"] == 0
    assert r.exists("d") == 0


def test_tiny_timeout_does_not_block_forever(r, conns):
    w = conns()
    for argv in (["BLPOP", "k", "0.001"], ["BLMPOP", "0.001", "1", "k", "RIGHT"],
                 ["BLMOVE", "k", "d", "LEFT", "LEFT", "0.0001"]):
        assert w.execute(*argv) == NIL_ARRAY


def test_timeout_in_timeout_table(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BLPOP", "k", "100")
    block(r, w2, 2, "BLPOP", "k", "0")
    info = clients_info(r)
    assert info["clients_in_timeout_table"] == 1
    r.rpush("k", "a", "b")
    w1.read_reply()
    w2.read_reply()
    wait_blocked(r, 0)
    assert clients_info(r)["clients_in_timeout_table"] == 0


def test_zero_and_negative_zero_timeouts_block_forever(r, conns):
    # "-0.0005" rounds up to 0 ms: forever, like 0. So does "-0.001", whose long double
    # product with 1000 is a hair above -1.
    for t in ("0", "-0.0005", "0.0", "-0.001"):
        w = conns()
        cid = client_id(w)
        block(r, w, 1, "BLPOP", "k", t)
        assert r.client_unblock(cid) == 1
        assert w.read_reply() == NIL_ARRAY
        wait_blocked(r, 0)


def test_timer_keeps_working_after_a_far_timeout(r, conns):
    # A timeout centuries away must not break the timer for the others.
    far, near = conns(), conns()
    far_id = client_id(far)
    block(r, far, 1, "BLPOP", "k", "1e10")
    assert near.execute("BLPOP", "k", "0.05") == NIL_ARRAY
    assert clients_info(r)["blocked_clients"] == 1
    assert r.client_unblock(far_id) == 1
    assert far.read_reply() == NIL_ARRAY


TIMEOUT_ERRORS = [
    ("-1", "ERR timeout is negative"), ("-0.002", "ERR timeout is negative"),
    ("abc", "ERR timeout is not a float or out of range"),
    ("nan", "ERR timeout is not a float or out of range"),
    ("", "ERR timeout is not a float or out of range"),
    (" 1", "ERR timeout is not a float or out of range"),
    ("1 ", "ERR timeout is not a float or out of range"),
    ("-inf", "ERR timeout is negative"),
]
TIMEOUT_ERRORS_72 = [
    ("inf", "ERR timeout is out of range"), ("1e400", "ERR timeout is out of range"),
    ("0x7FFFFFFFFFFFFF", "ERR timeout is out of range"),
    ("9223372036854775", "ERR timeout is out of range"),
]


def timeout_argv(cmd, timeout):
    return {
        "BLPOP": ["BLPOP", "k", timeout], "BRPOP": ["BRPOP", "k", "k2", timeout],
        "BRPOPLPUSH": ["BRPOPLPUSH", "k", "d", timeout],
        "BLMOVE": ["BLMOVE", "k", "d", "LEFT", "RIGHT", timeout],
        "BLMPOP": ["BLMPOP", timeout, "1", "k", "LEFT"],
    }[cmd]


@pytest.mark.parametrize("cmd", ["BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BLMPOP"])
def test_timeout_errors(r, raw, cmd):
    for timeout, expected in TIMEOUT_ERRORS:
        reply = raw.execute(*timeout_argv(cmd, timeout))
        assert reply == b"-" + expected.encode() + b"\r\n", (cmd, timeout)
    assert clients_info(r)["blocked_clients"] == 0


@pytest.mark.parametrize("cmd", ["BLPOP", "BLMOVE", "BLMPOP"])
def test_timeout_out_of_range(r, raw, cmd, only_72):
    for timeout, expected in TIMEOUT_ERRORS_72:
        reply = raw.execute(*timeout_argv(cmd, timeout))
        assert reply == b"-" + expected.encode() + b"\r\n", (cmd, timeout)


def test_argument_errors_come_in_redis_order(r, raw):
    r.set("s", "v")
    # BLMOVE checks its directions before the timeout; BLMPOP checks numkeys, the direction and
    # COUNT before the timeout; BLPOP the timeout before the keys.
    assert raw.execute("BLMOVE", "k", "d", "UP", "LEFT", "-1") == b"-ERR syntax error\r\n"
    assert raw.execute("BLMPOP", "-1", "0", "k", "LEFT") == (
        b"-ERR numkeys should be greater than 0\r\n")
    assert raw.execute("BLMPOP", "abc", "1", "k", "UP") == b"-ERR syntax error\r\n"
    assert raw.execute("BLMPOP", "abc", "1", "k", "LEFT", "COUNT", "0") == (
        b"-ERR count should be greater than 0\r\n")
    assert raw.execute("BLPOP", "s", "-1") == b"-ERR timeout is negative\r\n"
    assert raw.execute("BLPOP", "s", "0").startswith(b"-WRONGTYPE")
    assert raw.execute("BLPOP", "k", "s", "0").startswith(b"-WRONGTYPE")
    assert raw.execute("BLMPOP", "0", "2", "k", "s", "LEFT").startswith(b"-WRONGTYPE")
    assert raw.execute("BLMOVE", "s", "d", "LEFT", "LEFT", "0").startswith(b"-WRONGTYPE")
    r.rpush("l", "x")
    assert raw.execute("BLMOVE", "l", "s", "LEFT", "LEFT", "0").startswith(b"-WRONGTYPE")
    assert raw.execute("BLPOP", "k") == b"-ERR wrong number of arguments for 'blpop' command\r\n"
    assert raw.execute("BLMPOP", "0", "1", "k") == (
        b"-ERR wrong number of arguments for 'blmpop' command\r\n")
    assert raw.execute("BLMOVE", "k", "d", "LEFT", "LEFT") == (
        b"-ERR wrong number of arguments for 'blmove' command\r\n")
    assert raw.execute("BRPOPLPUSH", "k", "d") == (
        b"-ERR wrong number of arguments for 'brpoplpush' command\r\n")
    assert clients_info(r)["blocked_clients"] == 0


# --------------------------------------------------------------------------------------------
# CLIENT UNBLOCK, disconnects, CLIENT KILL


@pytest.mark.parametrize("command", [
    ["BLPOP", "l", "0"], ["BLMPOP", "0", "1", "l", "RIGHT", "COUNT", "1"],
    ["BLMOVE", "l", "d", "LEFT", "LEFT", "0"],
])
def test_client_unblock(r, conns, command):
    w = conns()
    cid = client_id(w)
    block(r, w, 1, *command)
    assert r.client_unblock(cid) == 1
    assert w.read_reply() == NIL_ARRAY
    block(r, w, 1, *command)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "TIMEOUT") == 1
    assert w.read_reply() == NIL_ARRAY
    block(r, w, 1, *command)
    assert r.execute_command("CLIENT", "UNBLOCK", cid, "error") == 1
    assert w.read_reply() == b"-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n"
    wait_blocked(r, 0)
    # Not blocked any more: 0.
    assert r.client_unblock(cid) == 0
    # The client and the list still work.
    block(r, w, 1, *command)
    r.lpush("l", "foo")
    assert w.read_reply() in (arr("l", "foo"), arr("l", ["foo"]), bulk("foo"))


def test_client_unblock_errors(r, raw):
    assert raw.execute("CLIENT", "UNBLOCK", "asd") == (
        b"-ERR value is not an integer or out of range\r\n")
    assert raw.execute("CLIENT", "UNBLOCK", "1", "FOO") == (
        b"-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n")
    assert raw.execute("CLIENT", "UNBLOCK", "999999", "ERROR") == b":0\r\n"
    assert raw.execute("CLIENT", "UNBLOCK", str(client_id(raw))) == b":0\r\n"


def test_disconnected_waiter_leaves_every_list(server, r):
    w = server.raw()
    block(r, w, 1, "BLPOP", "k1", "k2", "k3", "0")
    assert clients_info(r)["total_blocking_keys"] == 3
    w.close()
    wait_blocked(r, 0)
    assert clients_info(r)["total_blocking_keys"] == 0
    r.rpush("k2", "x")
    assert r.lrange("k2", 0, -1) == [b"x"]


def test_killed_waiter_gets_nothing(server, r, conns):
    w, w2 = server.raw(), conns()
    cid = client_id(w)
    block(r, w, 1, "BLMOVE", "src", "dst", "LEFT", "LEFT", "0")
    block(r, w2, 2, "BLPOP", "other", "0")
    assert r.client_kill_filter(_id=cid) == 1
    wait_blocked(r, 1)
    assert clients_info(r)["total_blocking_keys"] == 1
    r.rpush("src", "x")
    assert r.lrange("src", 0, -1) == [b"x"]
    assert r.exists("dst") == 0
    w.settimeout(5)
    assert w.read_until_closed() == b""
    w.close()
    r.rpush("other", "y")
    assert w2.read_reply() == arr("other", "y")


def test_killed_waiter_is_skipped_in_the_fifo(server, r, conns):
    w1, w2 = server.raw(), conns()
    cid = client_id(w1)
    block(r, w1, 1, "BRPOP", "k", "0")
    block(r, w2, 2, "BRPOP", "k", "0")
    r.client_kill_filter(_id=cid)
    wait_blocked(r, 1)
    r.lpush("k", "a", "b")
    assert w2.read_reply() == arr("k", "a")
    assert r.lrange("k", 0, -1) == [b"b"]
    w1.close()


# --------------------------------------------------------------------------------------------
# Pipelining


def test_pipelined_commands_run_after_the_blocking_one(r, conns):
    w = conns()
    w.send(w.encode("BLPOP", "k", "0") + w.encode("SET", "after", "1") + w.encode("GET", "after"))
    wait_blocked(r, 1)
    assert r.get("after") is None
    r.rpush("k", "v")
    assert w.read_reply() == arr("k", "v")
    assert w.read_reply() == b"+OK\r\n"
    assert w.read_reply() == bulk("1")


def test_pipelined_commands_run_after_timeout_and_unblock(r, conns):
    w = conns()
    cid = client_id(w)
    w.send(w.encode("BLPOP", "k", "0.05") + w.encode("PING") + w.encode("BLPOP", "k", "0") +
           w.encode("ECHO", "done"))
    assert w.read_reply() == NIL_ARRAY
    assert w.read_reply() == b"+PONG\r\n"
    wait_blocked(r, 1)
    r.client_unblock(cid, error=True)
    assert w.read_reply().startswith(b"-UNBLOCKED")
    assert w.read_reply() == bulk("done")


def test_pipelined_push_and_pop_keep_fairness(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BLPOP", "mylist", "0")
    w2.send(w2.encode("LPUSH", "mylist", "1") + w2.encode("BLPOP", "mylist", "0"))
    assert w1.read_reply() == arr("mylist", "1")
    assert w2.read_reply() == b":1\r\n"
    wait_blocked(r, 1)
    r.lpush("mylist", "2")
    assert w2.read_reply() == arr("mylist", "2")


def test_served_clients_pipeline_chain(r, conns):
    # A served BLMOVE's pipelined BLPOP blocks again and is served by the next push.
    w = conns()
    w.send(w.encode("BLMOVE", "a", "b", "LEFT", "LEFT", "0") + w.encode("BLPOP", "c", "0"))
    wait_blocked(r, 1)
    r.rpush("a", "1")
    assert w.read_reply() == bulk("1")
    wait_blocked(r, 1)
    r.rpush("c", "2")
    assert w.read_reply() == arr("c", "2")


# --------------------------------------------------------------------------------------------
# RESP3, INFO, CLIENT LIST, statistics


def test_resp3_shapes(r, conns):
    w = conns()
    assert w.execute("HELLO", "3").startswith(b"%")
    for argv in (["BLPOP", "k", "0.01"], ["BRPOP", "k", "0.01"],
                 ["BLMPOP", "0.01", "1", "k", "LEFT"], ["BLMOVE", "k", "d", "LEFT", "LEFT", "0.01"],
                 ["BRPOPLPUSH", "k", "d", "0.01"]):
        assert w.execute(*argv) == b"_\r\n", argv
    assert w.execute("MULTI") == b"+OK\r\n"
    w.execute("BLPOP", "k", "0")
    w.execute("BLMOVE", "k", "d", "LEFT", "LEFT", "0")
    assert w.execute("EXEC") == b"*2\r\n_\r\n_\r\n"
    cid = client_id(w)
    block(r, w, 1, "BLPOP", "k", "0")
    r.client_unblock(cid)
    assert w.read_reply() == b"_\r\n"
    block(r, w, 1, "BLMPOP", "0", "1", "k", "LEFT")
    r.rpush("k", "v")
    assert w.read_reply() == b"*2\r\n$1\r\nk\r\n*1\r\n$1\r\nv\r\n"


def test_info_and_client_list_while_blocked(r, conns):
    w = conns()
    cid = client_id(w)
    block(r, w, 1, "BLPOP", "a", "b", "0")
    info = clients_info(r)
    assert info["blocked_clients"] == 1
    assert info["total_blocking_keys"] == 2
    assert info["total_blocking_keys_on_nokey"] == 0
    line = client_line(r, cid)
    assert re.search(r" flags=b ", line), line
    assert " cmd=blpop " in line
    r.rpush("b", "x")
    assert w.read_reply() == arr("b", "x")
    wait_blocked(r, 0)
    line = client_line(r, cid)
    assert " flags=N " in line
    assert clients_info(r)["total_blocking_keys"] == 0


def cmdstat(r, name):
    return r.info("commandstats").get(f"cmdstat_{name}", {})


def test_blocking_command_counted_once(r, conns, only_72):
    w = conns()
    cid = client_id(w)
    r.config_resetstat()
    block(r, w, 1, "BLPOP", "mylist", "0")
    r.lpush("mylist", "1")
    w.read_reply()
    stat = cmdstat(r, "blpop")
    assert (stat["calls"], stat["rejected_calls"], stat["failed_calls"]) == (1, 0, 0)
    r.config_resetstat()
    block(r, w, 1, "BLPOP", "mylist", "0")
    r.client_unblock(cid)
    w.read_reply()
    stat = cmdstat(r, "blpop")
    assert (stat["calls"], stat["rejected_calls"], stat["failed_calls"]) == (1, 0, 0)
    r.config_resetstat()
    assert w.execute("BLPOP", "mylist", "0.01") == NIL_ARRAY
    stat = cmdstat(r, "blpop")
    assert (stat["calls"], stat["failed_calls"]) == (1, 0)


def test_served_pops_count_as_changes(r, conns, only_72):
    w = conns()
    dirty = r.info("persistence")["rdb_changes_since_last_save"]
    block(r, w, 1, "BLPOP", "lst", "0")
    r.lpush("lst", "a")
    assert w.read_reply() == arr("lst", "a")
    assert r.info("persistence")["rdb_changes_since_last_save"] == dirty + 2
    dirty += 2
    block(r, w, 1, "BLMOVE", "lst", "lst1", "LEFT", "LEFT", "0")
    r.lpush("lst", "a")
    assert w.read_reply() == bulk("a")
    assert r.info("persistence")["rdb_changes_since_last_save"] == dirty + 2


def test_many_waiters_many_keys(r, conns):
    ws = [conns() for _ in range(20)]
    for i, w in enumerate(ws):
        block(r, w, i + 1, "BLPOP", f"k{i % 4}", "k-common", "0")
    assert clients_info(r)["total_blocking_keys"] == 5
    # One push to the common key serves its oldest waiter only.
    r.rpush("k-common", "c")
    assert ws[0].read_reply() == arr("k-common", "c")
    wait_blocked(r, 19)
    for i in range(4):
        r.rpush(f"k{i}", *[f"v{i}-{j}" for j in range(5)])
    wait_blocked(r, 0)
    # Each key's waiters were served oldest first, one element each.
    position = {}
    for i in range(1, 20):
        key = i % 4
        n = position.get(key, 0)
        position[key] = n + 1
        assert ws[i].read_reply() == arr(f"k{key}", f"v{key}-{n}")
    assert r.lrange("k0", 0, -1) == [b"v0-4"]


def test_client_reply_off_and_skip_cover_the_served_reply(r, conns):
    w = conns()
    cid = client_id(w)
    w.send(w.encode("CLIENT", "REPLY", "OFF") + w.encode("BLPOP", "rk", "0") +
           w.encode("CLIENT", "REPLY", "ON") + w.encode("PING"))
    wait_blocked(r, 1)
    r.rpush("rk", "x")
    assert w.read_reply() == b"+OK\r\n"
    assert w.read_reply() == b"+PONG\r\n"
    # SKIP applies to the blocking command, whose reply comes later.
    w.send(w.encode("CLIENT", "REPLY", "SKIP") + w.encode("BLPOP", "rk", "0") + w.encode("PING"))
    wait_blocked(r, 1)
    r.rpush("rk", "y")
    assert w.read_reply() == b"+PONG\r\n"
    assert r.exists("rk") == 0
    w.send(w.encode("CLIENT", "REPLY", "SKIP") + w.encode("BLPOP", "rk", "0") + w.encode("PING"))
    wait_blocked(r, 1)
    assert r.client_unblock(cid) == 1
    assert w.read_reply() == b"+PONG\r\n"
    w.send(w.encode("CLIENT", "REPLY", "OFF") + w.encode("BLPOP", "rk", "0.01") +
           w.encode("CLIENT", "REPLY", "ON") + w.encode("ECHO", "after"))
    assert w.read_reply() == b"+OK\r\n"
    assert w.read_reply() == bulk("after")


def test_monitor_sees_a_served_command_once(server, r, conns):
    mon, w = server.raw(), conns()
    assert mon.execute("MONITOR") == b"+OK\r\n"
    block(r, w, 1, "BLPOP", "mk", "0")
    r.rpush("mk", "x")
    assert w.read_reply() == arr("mk", "x")
    r.execute_command("ECHO", "marker")
    seen = []
    while not seen or b'"marker"' not in seen[-1]:
        seen.append(mon.read_reply())
    mon.close()
    # (wait_blocked's INFO calls show up too.)
    commands = [line.split(b"] ", 1)[1] for line in seen]
    assert [c for c in commands if not c.startswith(b'"INFO"')] == [
        b'"BLPOP" "mk" "0"\r\n', b'"RPUSH" "mk" "x"\r\n', b'"ECHO" "marker"\r\n']

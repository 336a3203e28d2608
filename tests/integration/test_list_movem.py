"""Redis 8.10's LMOVEM and BLMOVEM: several list elements moved in one command. Replies in
RESP2 and RESP3, OBO versus BULK order, EXACTLY, errors, keyspace events, MULTI and scripts,
blocking through the one blocking engine (one push wakes one waiter), CLIENT UNBLOCK, timeouts,
and what reaches the AOF (the stream replicas get too)."""

import pytest
import redis

from conftest import arr, call_error, err, start_server, wait_blocked, wait_for
from test_blocking import block, conns  # noqa: F401 (a fixture)
from test_strings_cas import _aof_commands

NIL_ARRAY = b"*-1\r\n"


# Source [a b c d], two elements moved to an empty destination: (reply, destination).
@pytest.mark.parametrize("wherefrom,whereto,order,moved,dest", [
    ("LEFT", "RIGHT", "OBO", ["a", "b"], ["a", "b"]),
    ("LEFT", "RIGHT", "BULK", ["a", "b"], ["a", "b"]),
    ("RIGHT", "LEFT", "OBO", ["c", "d"], ["c", "d"]),
    ("RIGHT", "LEFT", "BULK", ["c", "d"], ["c", "d"]),
    # Same ends: OBO is repeated LMOVE (the block reversed), BULK keeps the source order.
    ("LEFT", "LEFT", "OBO", ["b", "a"], ["b", "a"]),
    ("LEFT", "LEFT", "BULK", ["a", "b"], ["a", "b"]),
    ("RIGHT", "RIGHT", "OBO", ["d", "c"], ["d", "c"]),
    ("RIGHT", "RIGHT", "BULK", ["c", "d"], ["c", "d"]),
])
def test_orders(plain, wherefrom, whereto, order, moved, dest):
    plain.rpush("s", "a", "b", "c", "d")
    reply = plain.execute_command("LMOVEM", "s", "d", wherefrom, whereto, "COUNT", 2, order)
    assert reply == moved
    assert plain.lrange("d", 0, -1) == dest
    assert plain.llen("s") == 2


def test_without_how_many_it_is_lmove_with_an_array_reply(plain):
    plain.rpush("s", "a", "b")
    plain.rpush("d", "x")
    assert plain.execute_command("LMOVEM", "s", "d", "RIGHT", "LEFT") == ["b"]
    assert plain.lrange("d", 0, -1) == ["b", "x"]
    assert plain.execute_command("LMOVEM", "s", "d", "right", "left") == ["a"]
    assert not plain.exists("s")


def test_count_takes_what_there_is_exactly_all_or_nothing(plain):
    plain.rpush("s", "a", "b", "c")
    assert plain.execute_command("LMOVEM", "s", "d", "LEFT", "RIGHT", "EXACTLY", 4, "BULK") is None
    assert plain.llen("s") == 3 and not plain.exists("d")
    assert plain.execute_command("LMOVEM", "s", "d", "LEFT", "RIGHT", "EXACTLY", 2, "OBO") == [
        "a", "b"]
    huge = 2**63 - 1
    assert plain.execute_command("LMOVEM", "s", "d", "LEFT", "RIGHT", "COUNT", huge, "OBO") == [
        "c"]
    assert not plain.exists("s")
    assert plain.lrange("d", 0, -1) == ["a", "b", "c"]


def test_same_key(plain):
    # redis.io's LMOVEM examples.
    plain.rpush("mylist", 1, 2, 3, 4)
    assert plain.execute_command("LMOVEM", "mylist", "myotherlist", "LEFT", "LEFT", "COUNT", 2,
                                 "OBO") == ["2", "1"]
    assert plain.lrange("mylist", 0, -1) == ["3", "4"]
    assert plain.lrange("myotherlist", 0, -1) == ["2", "1"]
    assert plain.execute_command("LMOVEM", "mylist", "myotherlist", "LEFT", "LEFT", "EXACTLY", 5,
                                 "BULK") is None
    plain.rpush("somelist", "a", "b", "c")
    assert plain.execute_command("LMOVEM", "somelist", "somelist", "LEFT", "LEFT", "EXACTLY", 2,
                                 "OBO") == ["b", "a"]
    assert plain.lrange("somelist", 0, -1) == ["b", "a", "c"]
    # BULK on one end gives the list back unchanged.
    assert plain.execute_command("LMOVEM", "somelist", "somelist", "LEFT", "LEFT", "COUNT", 2,
                                 "BULK") == ["b", "a"]
    assert plain.lrange("somelist", 0, -1) == ["b", "a", "c"]
    plain.execute_command("LMOVEM", "somelist", "somelist", "LEFT", "RIGHT", "COUNT", 2, "OBO")
    assert plain.lrange("somelist", 0, -1) == ["c", "b", "a"]


def test_missing_source(raw):
    # An empty array, but a nil when EXACTLY can't be met.
    assert raw.execute("LMOVEM", "s", "d", "LEFT", "LEFT") == b"*0\r\n"
    assert raw.execute("LMOVEM", "s", "d", "LEFT", "LEFT", "COUNT", 3, "OBO") == b"*0\r\n"
    assert raw.execute("LMOVEM", "s", "d", "LEFT", "LEFT", "EXACTLY", 3, "OBO") == b"$-1\r\n"
    assert raw.execute("EXISTS", "d") == b":0\r\n"


def test_resp3(raw):
    assert raw.execute("HELLO", "3").startswith(b"%")
    raw.execute("RPUSH", "s", "a", "b")
    assert raw.execute("LMOVEM", "s", "d", "LEFT", "RIGHT", "COUNT", 5, "BULK") == arr("a", "b")
    assert raw.execute("LMOVEM", "s", "d", "LEFT", "RIGHT", "EXACTLY", 1, "OBO") == b"_\r\n"


def test_errors(raw):
    raw.execute("RPUSH", "s", "a")
    raw.execute("SET", "str", "x")
    syntax = "ERR syntax error"
    assert err(raw, "LMOVEM", "s", "d", "LEFT") == \
        "ERR wrong number of arguments for 'lmovem' command"
    assert err(raw, "LMOVEM", "s", "d", "UP", "LEFT") == syntax
    assert err(raw, "LMOVEM", "s", "d", "LEFT", "LEFT", "COUNT", 2) == syntax
    assert err(raw, "LMOVEM", "s", "d", "LEFT", "LEFT", "OBO") == syntax
    assert err(raw, "LMOVEM", "s", "d", "LEFT", "LEFT", "COUNT", 1, "OBO", "x") == syntax
    assert err(raw, "LMOVEM", "s", "d", "LEFT", "LEFT", "COUNT", 1, "SOME") == syntax
    # As LMPOP's COUNT: one message for every bad count, INT64 overflow included.
    for bad in ("0", "-1", "x", "9223372036854775808"):
        for selector in ("COUNT", "EXACTLY"):
            assert err(raw, "LMOVEM", "s", "d", "LEFT", "LEFT", selector, bad, "OBO") == \
                "ERR count should be greater than 0"
    assert err(raw, "LMOVEM", "str", "d", "LEFT", "LEFT").startswith("WRONGTYPE")
    # The destination's type is checked before anything moves.
    assert err(raw, "LMOVEM", "s", "str", "LEFT", "LEFT").startswith("WRONGTYPE")
    assert raw.execute("LLEN", "s") == b":1\r\n"
    assert err(raw, "BLMOVEM", "s", "d", "LEFT", "LEFT", "-1") == \
        "ERR timeout is negative"
    assert err(raw, "BLMOVEM", "s", "d", "LEFT", "LEFT", "x") == \
        "ERR timeout is not a float or out of range"


def test_keyspace_events(server, r):
    r.config_set("notify-keyspace-events", "KEA")
    try:
        p = r.pubsub()
        p.psubscribe("__keyspace@0__:*")
        wait_for(lambda: p.get_message(timeout=0.1) is not None)
        r.rpush("s", "a", "b")
        p.get_message(timeout=1)  # rpush on s
        r.execute_command("LMOVEM", "s", "d", "LEFT", "RIGHT", "COUNT", 5, "OBO")
        got = []
        wait_for(lambda: got.append(p.get_message(timeout=0.1)) or
                 len([m for m in got if m]) >= 3)
        events = [(m["channel"].decode(), m["data"].decode()) for m in got if m]
        assert events[:3] == [("__keyspace@0__:d", "rpush"), ("__keyspace@0__:s", "lpop"),
                              ("__keyspace@0__:s", "del")]
        p.close()
    finally:
        r.config_set("notify-keyspace-events", "")


def test_in_multi_and_scripts_blmovem_does_not_block(r):
    with r.pipeline() as p:
        p.execute_command("BLMOVEM", "s", "d", "LEFT", "RIGHT", 0, "COUNT", 2, "OBO")
        p.rpush("s", "a")
        p.execute_command("BLMOVEM", "s", "d", "LEFT", "RIGHT", 0, "EXACTLY", 2, "OBO")
        p.execute_command("BLMOVEM", "s", "d", "LEFT", "RIGHT", 0, "COUNT", 2, "OBO")
        assert p.execute() == [None, 1, None, [b"a"]]
    assert r.eval("return redis.call('BLMOVEM', KEYS[1], KEYS[2], 'LEFT', 'LEFT', 0)", 2,
                  "s", "d") is None
    assert r.eval("return redis.call('LMOVEM', KEYS[1], KEYS[2], 'LEFT', 'LEFT')", 2,
                  "s", "d") == []
    r.rpush("s", "z")
    assert r.eval("return redis.call('LMOVEM', KEYS[1], KEYS[2], 'LEFT', 'LEFT', 'COUNT', 3, "
                  "'BULK')", 2, "s", "d") == [b"z"]


def test_getkeys(plain):
    assert plain.execute_command("COMMAND", "GETKEYS", "BLMOVEM", "a", "b", "LEFT", "LEFT", "0",
                             "COUNT", "2", "OBO") == ["a", "b"]


def test_blmovem_blocks_then_moves_up_to_count(r, conns):
    w = conns()
    block(r, w, 1, "BLMOVEM", "s", "d", "LEFT", "RIGHT", "0", "COUNT", "3", "BULK")
    r.rpush("s", "a", "b")
    assert w.read_reply() == arr("a", "b")
    assert r.lrange("d", 0, -1) == [b"a", b"b"] and not r.exists("s")


def test_one_push_wakes_exactly_one_waiter(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BLMOVEM", "s", "d1", "LEFT", "RIGHT", "0", "COUNT", "5", "OBO")
    block(r, w2, 2, "BLMOVEM", "s", "d2", "LEFT", "RIGHT", "0", "COUNT", "5", "OBO")
    r.rpush("s", "a", "b", "c")
    assert w1.read_reply() == arr("a", "b", "c")
    wait_blocked(r, 1)
    r.rpush("s", "x")
    assert w2.read_reply() == arr("x")


def test_blmovem_exactly_waits_for_enough_elements(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BLMOVEM", "s", "d", "LEFT", "RIGHT", "0", "EXACTLY", "3", "OBO")
    block(r, w2, 2, "BLMOVEM", "s", "e", "LEFT", "RIGHT", "0", "COUNT", "1", "OBO")
    # Too short for the first waiter: it stays blocked and the next one is served.
    r.rpush("s", "a")
    assert w2.read_reply() == arr("a")
    wait_blocked(r, 1)
    r.rpush("s", "b", "c")
    wait_blocked(r, 1)
    r.rpush("s", "d")
    assert w1.read_reply() == arr("b", "c", "d")
    wait_blocked(r, 0)


def test_blmovem_timeout_and_client_unblock(r, conns):
    w = conns()
    w.send_command("BLMOVEM", "s", "d", "LEFT", "RIGHT", "0.05")
    assert w.read_reply() == NIL_ARRAY
    cid = int(w.execute("CLIENT", "ID")[1:-2])
    block(r, w, 1, "BLMOVEM", "s", "d", "LEFT", "RIGHT", "0")
    assert r.client_unblock(cid, error=True)
    assert w.read_reply().startswith(b"-UNBLOCKED")
    block(r, w, 1, "BLMOVEM", "s", "d", "LEFT", "RIGHT", "0")
    assert r.client_unblock(cid)
    assert w.read_reply() == NIL_ARRAY


def test_acl(server, r):
    r.acl_setuser("nolist", enabled=True, passwords=["+pw"], keys=["*"],
                  commands=["+@all", "-@list"])
    user = server.client(username="nolist", password="pw")
    try:
        for cmd in (["LMOVEM", "s", "d", "LEFT", "LEFT"],
                    ["BLMOVEM", "s", "d", "LEFT", "LEFT", "0"]):
            assert "no permissions" in call_error(user, *cmd)
    finally:
        user.close()
        r.acl_deluser("nolist")


def test_propagation(tmp_path):
    handle = start_server(["--dir", str(tmp_path), "--appendonly", "yes",
                           "--appendfsync", "always", "--aof-use-rdb-preamble", "yes"])
    try:
        c = handle.client()
        c.rpush("s", "a", "b", "c", "d")
        c.execute_command("LMOVEM", "s", "d", "LEFT", "RIGHT", "COUNT", 2, "BULK")
        c.execute_command("LMOVEM", "s", "d", "LEFT", "RIGHT", "EXACTLY", 9, "BULK")  # nothing
        c.execute_command("BLMOVEM", "s", "d", "RIGHT", "LEFT", 0, "COUNT", 9, "OBO")
        c.execute_command("RPUSH", "s", "e")
        c.execute_command("BLMOVEM", "s", "d", "RIGHT", "LEFT", 0)
        incr = next((tmp_path / "appendonlydir").glob("*.incr.aof"))
        wait_for(lambda: len(_aof_commands(incr)) >= 5, timeout=5)
        cmds = _aof_commands(incr)
        assert cmds[1] == [b"LMOVEM", b"s", b"d", b"LEFT", b"RIGHT", b"COUNT", b"2", b"BULK"]
        # A served BLMOVEM is the LMOVEM that moves exactly what it moved.
        assert cmds[2] == [b"LMOVEM", b"s", b"d", b"RIGHT", b"LEFT", b"EXACTLY", b"2", b"OBO"]
        assert cmds[4] == [b"LMOVEM", b"s", b"d", b"RIGHT", b"LEFT"]
        assert len(cmds) == 5
        before = c.lrange("d", 0, -1)
        c.close()
    finally:
        handle.stop()
    again = start_server(["--dir", str(tmp_path), "--appendonly", "yes"])
    try:
        c = again.client()
        assert c.lrange("d", 0, -1) == before and not c.exists("s")
        c.close()
    finally:
        again.stop()


def test_wrongtype_waiter_errors_when_rerun(r, conns):
    w = conns()
    r.set("str", "x")
    block(r, w, 1, "BLMOVEM", "s", "str", "LEFT", "RIGHT", "0")
    r.rpush("s", "a")
    assert w.read_reply().startswith(b"-WRONGTYPE")
    assert r.lrange("s", 0, -1) == [b"a"]
    with pytest.raises(redis.ResponseError):
        r.execute_command("LMOVEM", "s", "str", "LEFT", "RIGHT")

"""Redis 8.12's ZMOVE, BZMOVE and ZMOVEMEMBER: selection (MIN, MAX, BYSCORE, named members with
NX/XX), scores kept and overwritten, same-key and missing-key nils, errors, RESP2/RESP3 replies,
keyspace events, MULTI and scripts, blocking through the engine, and what reaches the AOF.
The reply shape (members with scores, as ZPOPMIN with a count) is vireo's reading of redis.io:
see docs/redis8-moves.md."""

import pytest

from conftest import arr, call_error, err, start_server, wait_blocked, wait_for
from test_blocking import block, conns  # noqa: F401 (a fixture)
from test_command_table_redis8 import doc_args
from repl_helpers import procs, start_vireo, wait_in_sync, wait_link_up  # noqa: F401
from test_strings_cas import _aof_commands

NIL_ARRAY = b"*-1\r\n"


def test_zmove_min_max_byscore(plain):
    plain.zadd("s", {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5})
    plain.zadd("d", {"b": 100, "z": 0})
    assert plain.execute_command("ZMOVE", "s", "d", "MIN", "COUNT", 2) == ["a", "1", "b", "2"]
    # b's score in the destination is overwritten; z is kept.
    assert plain.zrange("d", 0, -1, withscores=True) == ["z", "0", "a", "1", "b", "2"]
    assert plain.execute_command("ZMOVE", "s", "d", "MAX") == ["e", "5"]
    assert plain.execute_command("ZMOVE", "s", "d", "BYSCORE", "(3", "+inf", "COUNT", 9) == [
        "d", "4"]
    assert plain.execute_command("ZMOVE", "s", "d", "BYSCORE", 10, 20) is None
    assert plain.execute_command("ZMOVE", "s", "d", "BYSCORE", "-inf", "inf") == ["c", "3"]
    assert not plain.exists("s")
    assert plain.execute_command("ZMOVE", "s", "d", "MIN") is None
    # The largest count takes what there is.
    assert plain.execute_command("ZMOVE", "d", "s", "MAX", "COUNT", 2**63 - 1)[:2] == ["e", "5"]
    assert plain.zcard("s") == 6 and not plain.exists("d")


def test_zmove_keeps_ttls_and_creates_destination_without_one(plain):
    plain.zadd("s", {"a": 1, "b": 2})
    plain.expire("s", 1000)
    plain.execute_command("ZMOVE", "s", "d", "MIN")
    assert plain.ttl("s") > 900 and plain.ttl("d") == -1


def test_same_key_and_types(raw):
    raw.execute("ZADD", "s", "1", "a")
    raw.execute("SET", "str", "x")
    assert raw.execute("ZMOVE", "s", "s", "MIN") == NIL_ARRAY
    assert raw.execute("ZMOVEMEMBER", "s", "s", "MEMBERS", 1, "a") == NIL_ARRAY
    assert err(raw, "ZMOVE", "s", "str", "MIN").startswith("WRONGTYPE")
    assert err(raw, "ZMOVE", "str", "s", "MIN").startswith("WRONGTYPE")
    # Only an existing source makes the destination's type matter.
    assert raw.execute("ZMOVE", "nosuch", "str", "MIN") == NIL_ARRAY
    assert raw.execute("ZCARD", "s") == b":1\r\n"


def test_errors(raw):
    syntax = "ERR syntax error"
    assert err(raw, "ZMOVE", "s", "d") == "ERR wrong number of arguments for 'zmove' command"
    assert err(raw, "ZMOVE", "s", "d", "MID") == syntax
    assert err(raw, "ZMOVE", "s", "d", "MIN", "COUNT") == syntax
    assert err(raw, "ZMOVE", "s", "d", "MIN", "LIMIT", 1) == syntax
    assert err(raw, "ZMOVE", "s", "d", "BYSCORE", 1) == syntax
    assert err(raw, "ZMOVE", "s", "d", "BYSCORE", "x", 1) == "ERR min or max is not a float"
    for bad in ("0", "-1", "x", "9223372036854775808"):
        assert err(raw, "ZMOVE", "s", "d", "MIN", "COUNT", bad) == \
            "ERR count should be greater than 0"
        assert err(raw, "BZMOVE", "s", "d", "MIN", 0, "COUNT", bad) == \
            "ERR count should be greater than 0"
    assert err(raw, "BZMOVE", "s", "d", "BYSCORE", 0) == syntax
    assert err(raw, "BZMOVE", "s", "d", "MIN", -1) == "ERR timeout is negative"
    assert err(raw, "ZMOVEMEMBER", "s", "d", "MEMBERS", 2, "a") == syntax
    assert err(raw, "ZMOVEMEMBER", "s", "d", "NX", "XX", "MEMBERS", 1, "a") == syntax
    assert err(raw, "ZMOVEMEMBER", "s", "d", "a", "MEMBERS", 1) == syntax
    assert err(raw, "ZMOVEMEMBER", "s", "d", "MEMBERS", 0, "a") == \
        "ERR num-members should be greater than 0"


def test_zmovemember(plain):
    plain.zadd("s", {"a": 1, "b": 2, "c": 3})
    plain.zadd("d", {"b": 50})
    # NX: only members absent from the destination; missing ones skipped; duplicates once.
    assert plain.execute_command("ZMOVEMEMBER", "s", "d", "NX", "MEMBERS", 5,
                                 "c", "b", "nope", "c", "a") == ["c", "3", "a", "1"]
    assert plain.zrange("s", 0, -1) == ["b"]
    assert plain.execute_command("ZMOVEMEMBER", "s", "d", "NX", "MEMBERS", 1, "b") is None
    assert plain.execute_command("ZMOVEMEMBER", "s", "d", "XX", "MEMBERS", 1, "b") == ["b", "2"]
    assert not plain.exists("s")
    assert plain.zscore("d", "b") == "2"
    assert plain.execute_command("ZMOVEMEMBER", "s", "d", "MEMBERS", 1, "b") is None


def test_resp3_pairs(raw):
    raw.execute("HELLO", "3")
    raw.execute("ZADD", "s", "1", "a", "2.5", "b")
    assert raw.execute("ZMOVE", "s", "d", "MIN", "COUNT", 2) == \
        b"*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"
    assert raw.execute("ZMOVE", "s", "d", "MIN") == b"_\r\n"


def test_keyspace_events(r):
    r.config_set("notify-keyspace-events", "KEA")
    try:
        p = r.pubsub()
        p.psubscribe("__keyspace@0__:*")
        wait_for(lambda: p.get_message(timeout=0.1) is not None)
        r.zadd("s", {"a": 1})
        p.get_message(timeout=1)  # zadd on s
        r.execute_command("ZMOVE", "s", "d", "MIN")
        got = []
        wait_for(lambda: got.append(p.get_message(timeout=0.1)) or
                 len([m for m in got if m]) >= 3)
        events = [(m["channel"].decode(), m["data"].decode()) for m in got if m]
        assert events[:3] == [("__keyspace@0__:s", "zrem"), ("__keyspace@0__:s", "del"),
                              ("__keyspace@0__:d", "zadd")]
        p.close()
    finally:
        r.config_set("notify-keyspace-events", "")


def test_bzmove_blocks_then_moves(r, conns):
    w1, w2 = conns(), conns()
    block(r, w1, 1, "BZMOVE", "s", "d1", "MAX", "0", "COUNT", "5")
    block(r, w2, 2, "BZMOVE", "s", "d2", "MIN", "0")
    # Changes to the destination wake nobody.
    r.zadd("d1", {"x": 1})
    r.zadd("s", {"a": 1, "b": 2})
    assert w1.read_reply() == arr("b", "2", "a", "1")
    wait_blocked(r, 1)
    r.zadd("s", {"c": 3})
    assert w2.read_reply() == arr("c", "3")


def test_bzmove_same_key_timeout_unblock_multi(r, conns):
    w = conns()
    assert w.execute("BZMOVE", "s", "s", "MIN", "0") == NIL_ARRAY
    assert w.execute("BZMOVE", "s", "d", "MIN", "0.05") == NIL_ARRAY
    cid = int(w.execute("CLIENT", "ID")[1:-2])
    block(r, w, 1, "BZMOVE", "s", "d", "MIN", "0")
    assert r.client_unblock(cid, error=True)
    assert w.read_reply().startswith(b"-UNBLOCKED")
    with r.pipeline() as p:
        p.execute_command("BZMOVE", "s", "d", "MIN", 0)
        p.zadd("s", {"a": 1})
        p.execute_command("BZMOVE", "s", "d", "MIN", 0)
        assert p.execute() == [None, 1, [b"a", b"1"]]
    assert r.eval("return redis.call('BZMOVE', KEYS[1], KEYS[2], 'MIN', 0)", 2, "s", "d") is None


def test_acl_and_keys(server, r, plain):
    assert plain.execute_command("COMMAND", "GETKEYS", "ZMOVEMEMBER", "a", "b", "MEMBERS", "1",
                                 "x") == ["a", "b"]
    r.acl_setuser("nozset", enabled=True, passwords=["+pw"], keys=["*"],
                  commands=["+@all", "-@sortedset"])
    user = server.client(username="nozset", password="pw")
    try:
        for cmd in (["ZMOVE", "s", "d", "MIN"], ["BZMOVE", "s", "d", "MIN", "0"],
                    ["ZMOVEMEMBER", "s", "d", "MEMBERS", "1", "a"]):
            assert "no permissions" in call_error(user, *cmd)
    finally:
        user.close()
        r.acl_deluser("nozset")


@pytest.mark.parametrize("name,arity,flags", [
    ("zmove", -4, ["denyoom", "write"]),
    ("bzmove", -5, ["blocking", "denyoom", "write"]),
    ("zmovemember", -6, ["denyoom", "write"]),
])
def test_command_info(plain, name, arity, flags):
    # Arity, flags and ACL categories from the commands' redis.io metadata (8.12).
    entry = plain.execute_command("COMMAND", "INFO", name)[0]
    assert entry[1] == arity and sorted(entry[2]) == flags
    cats = ["@slow", "@sortedset", "@write"] + (["@blocking"] if name == "bzmove" else [])
    assert sorted(entry[6]) == sorted(cats)


def test_propagation(tmp_path):
    handle = start_server(["--dir", str(tmp_path), "--appendonly", "yes",
                           "--appendfsync", "always", "--aof-use-rdb-preamble", "yes"])
    try:
        c = handle.client()
        c.zadd("s", {"a": 1, "b": 2, "c": 3, "d": 4})
        c.execute_command("ZMOVE", "s", "d", "MIN")
        c.execute_command("ZMOVE", "s", "d", "BYSCORE", 100, 200)  # nothing
        c.execute_command("BZMOVE", "s", "d", "MAX", 0, "COUNT", 9)
        c.execute_command("ZMOVEMEMBER", "d", "e", "MEMBERS", 1, "a")
        incr = next((tmp_path / "appendonlydir").glob("*.incr.aof"))
        wait_for(lambda: len(_aof_commands(incr)) >= 4, timeout=5)
        cmds = _aof_commands(incr)
        assert cmds[1] == [b"ZMOVE", b"s", b"d", b"MIN"]
        assert cmds[2] == [b"ZMOVE", b"s", b"d", b"MAX", b"COUNT", b"3"]
        assert cmds[3] == [b"ZMOVEMEMBER", b"d", b"e", b"MEMBERS", b"1", b"a"]
        assert len(cmds) == 4
        c.close()
    finally:
        handle.stop()
    again = start_server(["--dir", str(tmp_path), "--appendonly", "yes"])
    try:
        c = again.client(decode_responses=True)
        assert c.zrange("d", 0, -1, withscores=True) == [("b", 2), ("c", 3), ("d", 4)]
        assert c.zrange("e", 0, -1, withscores=True) == [("a", 1)]
        c.close()
    finally:
        again.stop()


def test_replica_applies_the_moves(procs):  # noqa: F811
    master = start_vireo(procs)
    replica = start_vireo(procs, "--replicaof", "127.0.0.1", master.port)
    m = master.client(decode_responses=True)
    s = replica.client(decode_responses=True)
    wait_link_up(s)
    m.rpush("l", *"abcdef")
    m.execute_command("LMOVEM", "l", "l2", "LEFT", "LEFT", "COUNT", 2, "OBO")
    m.execute_command("BLMOVEM", "l", "l2", "RIGHT", "LEFT", 0, "EXACTLY", 2, "BULK")
    m.zadd("z", {"a": 1, "b": 2, "c": 3, "d": 4})
    m.execute_command("ZMOVE", "z", "z2", "BYSCORE", 2, 3)
    m.execute_command("BZMOVE", "z", "z2", "MAX", 0)
    m.execute_command("ZMOVEMEMBER", "z2", "z3", "XX", "MEMBERS", 1, "b")
    m.execute_command("ZMOVEMEMBER", "z2", "z3", "MEMBERS", 2, "b", "d")
    m.execute_command("ZUNIONSTORE", "u", 2, "z", "z3", "AGGREGATE", "COUNT")
    wait_in_sync(m, s)
    for key in ("l", "l2"):
        assert s.lrange(key, 0, -1) == m.lrange(key, 0, -1), key
    for key in ("z", "z2", "z3", "u"):
        assert s.zrange(key, 0, -1, withscores=True) == m.zrange(key, 0, -1, withscores=True), key
    assert s.lrange("l2", 0, -1) == ["e", "f", "b", "a"]
    assert s.zrange("z3", 0, -1, withscores=True) == [("b", 2), ("d", 4)]


def test_command_docs_arguments(plain):
    # The argument trees of the commands' redis.io metadata (8.12).
    def tok(name):
        return {"name": name.lower(), "type": "pure-token", "token": name}
    keys = [{"name": "source", "type": "key"}, {"name": "destination", "type": "key"}]
    count = {"name": "count", "type": "integer", "token": "COUNT", "flags": ["optional"]}
    expected = {
        "zmove": keys + [
            {"name": "selection", "type": "oneof", "arguments": [
                tok("MIN"), tok("MAX"),
                {"name": "score-range", "type": "block", "arguments": [
                    tok("BYSCORE"), {"name": "score-min", "type": "double"},
                    {"name": "score-max", "type": "double"}]}]},
            count],
        "zmovemember": keys + [
            {"name": "condition", "type": "oneof", "flags": ["optional"],
             "arguments": [tok("NX"), tok("XX")]},
            {"name": "members", "type": "block", "token": "MEMBERS", "arguments": [
                {"name": "num-members", "type": "integer"},
                {"name": "member", "type": "string", "flags": ["multiple"]}]}],
    }
    for name, args in expected.items():
        docs = plain.execute_command("COMMAND", "DOCS", name)[1]
        assert doc_args(dict(zip(docs[0::2], docs[1::2]))["arguments"]) == args, name

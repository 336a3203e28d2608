"""Redis 8.2 reference-aware stream deletion: KEEPREF | DELREF | ACKED on XADD and XTRIM,
XACKDEL and XDELEX (redis-semantics.md sections 1 and 2).

Redis 7 has none of this, so the expected values come from the Redis 8 documentation and
test suite as the reference file cites them.
"""

import pytest

from conftest import arity, err, start_server, wait_for


@pytest.fixture
def x(server):
    """Decoded replies, without redis-py's reshaping."""
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    c.flushall()
    c.config_set("stream-node-max-entries", "100")
    yield c
    c.config_set("stream-node-max-entries", "100")
    c.close()


def fill(x, key, n, start=1):
    for i in range(start, start + n):
        x.execute_command("XADD", key, f"{i}-0", "f", "v")


def ids(x, key):
    return [e[0] for e in x.execute_command("XRANGE", key, "-", "+")]


def pending_count(x, key, group):
    return x.execute_command("XPENDING", key, group)[0]


# ---------------------------------------------------------------------------------------------
# XADD / XTRIM with KEEPREF | DELREF | ACKED


def test_xadd_maxlen_acked(x):
    fill(x, "s", 5)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    # Nothing was delivered to the group: nothing is acknowledged, nothing trimmed.
    x.execute_command("XADD", "s", "MAXLEN", "=", "1", "ACKED", "6-0", "f", "v")
    assert x.execute_command("XLEN", "s") == 6
    read = x.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    x.execute_command("XACK", "s", "g", read[0][1][0][0])
    assert pending_count(x, "s", "g") == 0
    x.execute_command("XADD", "s", "MAXLEN", "=", "1", "ACKED", "7-0", "f", "v")
    assert x.execute_command("XLEN", "s") == 6
    assert ids(x, "s")[0] == "2-0"
    read = x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    x.execute_command("XACK", "s", "g", *[e[0] for e in read[0][1]])
    x.execute_command("XADD", "s", "MAXLEN", "=", "1", "ACKED", "*", "f", "v")
    assert x.execute_command("XLEN", "s") == 1


def test_xadd_acked_after_debug_reload(x):
    x.execute_command("XADD", "s", "1-0", "f", "v")
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    x.execute_command("DEBUG", "RELOAD")
    x.execute_command("XADD", "s", "MAXLEN", "=", "1", "ACKED", "2-0", "f", "v")
    assert x.execute_command("XLEN", "s") == 2
    x.execute_command("XACK", "s", "g", "1-0")
    x.execute_command("DEBUG", "RELOAD")
    # 2-0 was never delivered: 1-0 goes, 2-0 stays with the new entry.
    x.execute_command("XADD", "s", "MAXLEN", "=", "1", "ACKED", "3-0", "f", "v")
    assert ids(x, "s") == ["2-0", "3-0"]


def test_xadd_maxlen_delref(x):
    fill(x, "s", 5)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
    x.execute_command("XADD", "s", "MAXLEN", "=", "1", "DELREF", "*", "f", "v")
    assert x.execute_command("XLEN", "s") == 1
    assert pending_count(x, "s", "g") == 0


def test_xadd_keepref_is_the_default(x):
    fill(x, "s", 3)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    x.execute_command("XADD", "s", "MAXLEN", "1", "*", "f", "v")
    assert pending_count(x, "s", "g") == 3
    x.execute_command("XADD", "s", "KEEPREF", "MAXLEN", "1", "*", "f", "v")
    assert pending_count(x, "s", "g") == 3
    # The dangling references read back as [id, nil].
    hist = x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "0")
    assert hist[0][1][0] == ["1-0", None]


def test_xtrim_approx_acked_continues_past_kept_node(x):
    x.config_set("stream-node-max-entries", "2")
    fill(x, "s", 5)  # nodes {1,2} {3,4} {5}
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    x.execute_command("XACK", "s", "g", "1-0", "2-0", "4-0")
    assert x.execute_command("XTRIM", "s", "MINID", "~", "6-0", "ACKED") == 3
    assert x.execute_command("XRANGE", "s", "-", "+") == [["3-0", ["f", "v"]], ["5-0", ["f", "v"]]]


def test_xtrim_approx_acked_first_node_only(x):
    x.config_set("stream-node-max-entries", "2")
    fill(x, "s", 4)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    x.execute_command("XACK", "s", "g", "1-0", "2-0")
    assert x.execute_command("XTRIM", "s", "MINID", "~", "5-0", "ACKED") == 2
    assert ids(x, "s") == ["3-0", "4-0"]


def test_xtrim_approx_delref(x):
    x.config_set("stream-node-max-entries", "2")
    fill(x, "s", 4)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert x.execute_command("XTRIM", "s", "MINID", "~", "5-0", "DELREF") == 4
    assert x.execute_command("XLEN", "s") == 0
    assert x.execute_command("XPENDING", "s", "g") == [0, None, None, None]


def test_xtrim_acked_stops_at_undelivered(x):
    fill(x, "s", 6)
    x.execute_command("XGROUP", "CREATE", "s", "g1", "0")
    x.execute_command("XGROUP", "CREATE", "s", "g2", "0")
    x.execute_command("XREADGROUP", "GROUP", "g1", "c", "STREAMS", "s", ">")
    x.execute_command("XREADGROUP", "GROUP", "g2", "c", "COUNT", "3", "STREAMS", "s", ">")
    x.execute_command("XACK", "s", "g1", *[f"{i}-0" for i in range(1, 7)])
    x.execute_command("XACK", "s", "g2", "1-0", "3-0")
    # g2 still holds 2-0 and was never delivered 4-0..6-0.
    assert x.execute_command("XTRIM", "s", "MAXLEN", "0", "ACKED") == 2
    assert ids(x, "s") == ["2-0", "4-0", "5-0", "6-0"]
    assert x.execute_command("XTRIM", "s", "MINID", "5-0", "ACKED") == 0


def test_acked_without_groups_trims_normally(x):
    for i in range(1110, 1114):
        x.execute_command("XADD", "foo", str(i), "x", "y")
    assert x.execute_command("XTRIM", "foo", "MINID", "~", "1114", "LIMIT", "4", "ACKED") == 4
    assert x.execute_command("XLEN", "foo") == 0
    fill(x, "s", 3)
    assert x.execute_command("XTRIM", "s", "MAXLEN", "1", "DELREF") == 2


def test_ref_options_anywhere(x):
    fill(x, "s", 3)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert x.execute_command("XADD", "s", "ACKED", "MAXLEN", "5", "10-0", "f", "v") == "10-0"
    assert x.execute_command("XADD", "s", "MAXLEN", "5", "DELREF", "11-0", "f", "v") == "11-0"
    assert x.execute_command("XADD", "s", "NOMKSTREAM", "KEEPREF", "12-0", "f", "v") == "12-0"
    assert x.execute_command("XTRIM", "s", "ACKED", "MAXLEN", "1") == 0
    assert x.execute_command("XTRIM", "s", "MAXLEN", "~", "1", "DELREF", "LIMIT", "10") == 0
    # Repeating the same strategy is harmless; naming two different ones is not.
    assert x.execute_command("XTRIM", "s", "ACKED", "MAXLEN", "1", "ACKED") == 0


def test_two_strategies_is_a_syntax_error(raw):
    raw.execute("XADD", "s", "1-0", "f", "v")
    for pair in (("KEEPREF", "DELREF"), ("DELREF", "ACKED"), ("ACKED", "KEEPREF")):
        assert err(raw, "XADD", "s", *pair, "*", "f", "v") == "ERR syntax error"
        assert err(raw, "XTRIM", "s", "MAXLEN", "1", *pair) == "ERR syntax error"
    assert err(raw, "XTRIM", "s", "ACKED", "ACKED") == (
        "ERR syntax error, XTRIM must be called with a trimming strategy")
    assert err(raw, "XTRIM", "s", "MAXLEN", "1", "BOGUS") == "ERR syntax error"
    # After the ID a strategy word is a field name.
    assert raw.execute("XADD", "s", "2-0", "ACKED", "v") == b"$3\r\n2-0\r\n"


def test_acked_trim_propagates_to_aof(server_factory, tmp_path):
    def stream_state(c):
        return (c.execute_command("XRANGE", "s", "-", "+"),
                c.execute_command("XPENDING", "s", "g", "-", "+", "100"),
                c.execute_command("XLEN", "t"), c.execute_command("XRANGE", "t", "-", "+"))

    h = server_factory(["--dir", str(tmp_path), "--appendonly", "yes",
                        "--stream-node-max-entries", "2"])
    c = h.client(decode_responses=True)
    c.response_callbacks.clear()
    fill(c, "s", 9)
    c.execute_command("XGROUP", "CREATE", "s", "g", "0")
    c.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "7", "STREAMS", "s", ">")
    c.execute_command("XACK", "s", "g", "1-0", "2-0", "4-0", "6-0")
    # Nodes {1,2} {3,4} {5,6} {7,8} {9}; 3, 5, 7 pending; the group got up to 7: stops at 8.
    assert c.execute_command("XTRIM", "s", "MAXLEN", "~", "2", "ACKED") == 4
    c.execute_command("XADD", "s", "MINID", "~", "100", "DELREF", "LIMIT", "4", "20-0", "f", "v")
    fill(c, "t", 10)
    c.execute_command("XGROUP", "CREATE", "t", "g", "0")
    c.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "STREAMS", "t", ">")
    c.execute_command("XACK", "t", "g", "1-0", "2-0", "3-0", "5-0")
    c.execute_command("XADD", "t", "MAXLEN", "~", "1", "ACKED", "*", "f", "v")
    before = stream_state(c)
    h.stop()
    # Another node size on replay: the exact forms logged must not depend on it.
    h2 = server_factory(["--dir", str(tmp_path), "--appendonly", "yes",
                         "--stream-node-max-entries", "100"])
    c2 = h2.client(decode_responses=True)
    c2.response_callbacks.clear()
    assert [p[:2] for p in stream_state(c2)[1]] == [p[:2] for p in before[1]]
    assert stream_state(c2)[0] == before[0]
    assert stream_state(c2)[2:] == before[2:]


# ---------------------------------------------------------------------------------------------
# XDELEX


def test_xdelex_arity_and_missing_key(raw):
    assert err(raw, "XDELEX", "s", "DELREF") == arity("xdelex")
    assert err(raw, "XDELEX", "s", "IDS", "1") == arity("xdelex")
    assert raw.execute("XDELEX", "nonexist", "IDS", "2", "1-1", "2-2") == b"*2\r\n:-1\r\n:-1\r\n"


def test_xdelex_ids_validation(x, raw):
    x.execute_command("XADD", "s", "1-0", "f", "v")
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    for bad in ("abc", "0", "-5", "1.5", "99999999999999999999"):
        assert err(raw, "XDELEX", "s", "IDS", bad, "1-1") == (
            "ERR Number of IDs must be a positive integer")
    assert err(raw, "XDELEX", "s", "IDS", "3", "1-1", "2-2") == (
        "ERR The `numids` parameter must match the number of arguments")
    assert err(raw, "XDELEX", "s", "IDS", "1", "1-1", "2-2") == "ERR syntax error"
    assert err(raw, "XDELEX", "s", "IDS", "1", "bad") == (
        "ERR Invalid stream ID specified as stream command argument")
    assert err(raw, "XDELEX", "s", "KEEPREF", "1-1", "2-2") == "ERR syntax error"
    assert err(raw, "XDELEX", "s", "KEEPREF", "KEEPREF", "1-1") == "ERR syntax error"
    assert x.execute_command("XDELEX", "s", "IDS", "2", "1-1", "2-2") == [-1, -1]
    raw.execute("SET", "str", "v")
    assert err(raw, "XDELEX", "str", "IDS", "1", "1-1").startswith("WRONGTYPE")


def test_xdelex_strategy_validation(raw):
    for pair in (("KEEPREF", "DELREF"), ("KEEPREF", "ACKED"), ("ACKED", "DELREF")):
        assert err(raw, "XDELEX", "s", *pair, "IDS", "1", "1-1") == "ERR syntax error"


def test_xdelex_ids_block_anywhere(x):
    fill(x, "s", 3)
    assert x.execute_command("XDELEX", "s", "IDS", "1", "1-0", "DELREF") == [1]
    assert x.execute_command("XDELEX", "s", "IDS", "2", "2-0", "2-0", "KEEPREF") == [1, -1]


def test_xdelex_delref_cleans_all_pels(x):
    fill(x, "s", 2)
    for g in ("group1", "group2"):
        x.execute_command("XGROUP", "CREATE", "s", g, "0")
        x.execute_command("XREADGROUP", "GROUP", g, "c" + g, "STREAMS", "s", ">")
    assert x.execute_command("XDELEX", "s", "DELREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert x.execute_command("XLEN", "s") == 0
    assert x.execute_command("XPENDING", "s", "group1") == [0, None, None, None]
    assert x.execute_command("XPENDING", "s", "group2") == [0, None, None, None]


def test_xdelex_delref_drops_dangling_refs(x):
    fill(x, "s", 2)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    x.execute_command("XDEL", "s", "1-0")
    assert x.execute_command("XDELEX", "s", "DELREF", "IDS", "1", "1-0") == [-1]
    assert x.execute_command("XPENDING", "s", "g")[0] == 1


def test_xdelex_acked_needs_every_group(x):
    fill(x, "s", 2)
    for g in ("group1", "group2", "group3"):
        x.execute_command("XGROUP", "CREATE", "s", g, "0")
    x.execute_command("XREADGROUP", "GROUP", "group1", "c1", "STREAMS", "s", ">")
    x.execute_command("XREADGROUP", "GROUP", "group2", "c2", "STREAMS", "s", ">")
    x.execute_command("XACK", "s", "group1", "1-0", "2-0")
    assert x.execute_command("XDELEX", "s", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    x.execute_command("XACK", "s", "group2", "1-0", "2-0")
    assert x.execute_command("XDELEX", "s", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    x.execute_command("XREADGROUP", "GROUP", "group3", "c3", "STREAMS", "s", ">")
    assert x.execute_command("XDELEX", "s", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    assert x.execute_command("XLEN", "s") == 2
    x.execute_command("XACK", "s", "group3", "1-0", "2-0")
    assert x.execute_command("XDELEX", "s", "ACKED", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert x.execute_command("XLEN", "s") == 0


def test_xdelex_acked_new_group_blocks(x):
    fill(x, "s", 3)
    x.execute_command("XGROUP", "CREATE", "s", "group1", "0")
    x.execute_command("XREADGROUP", "GROUP", "group1", "c", "STREAMS", "s", ">")
    assert x.execute_command("XACK", "s", "group1", "1-0", "2-0", "3-0") == 3
    assert x.execute_command("XDELEX", "s", "ACKED", "IDS", "1", "1-0") == [1]
    x.execute_command("XGROUP", "CREATE", "s", "group2", "0")
    assert x.execute_command("XDELEX", "s", "ACKED", "IDS", "1", "2-0") == [2]
    x.execute_command("XREADGROUP", "GROUP", "group2", "c", "STREAMS", "s", ">")
    assert x.execute_command("XACK", "s", "group2", "2-0", "3-0") == 2
    assert x.execute_command("XDELEX", "s", "ACKED", "IDS", "2", "2-0", "3-0") == [1, 1]


def test_xdelex_acked_without_groups_deletes(x):
    # UNVERIFIED in the reference (the docs say 2): no group can reference the entry, so it
    # is deleted; an absent ID is -1.
    fill(x, "s", 2)
    assert x.execute_command("XDELEX", "s", "ACKED", "IDS", "2", "1-0", "9-0") == [1, -1]


def test_xdelex_keepref(x):
    fill(x, "s", 2)
    for g, c in (("group1", "consumer1"), ("group2", "consumer2")):
        x.execute_command("XGROUP", "CREATE", "s", g, "0")
        x.execute_command("XREADGROUP", "GROUP", g, c, "STREAMS", "s", ">")
    assert x.execute_command("XDELEX", "s", "KEEPREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert x.execute_command("XLEN", "s") == 0
    assert x.execute_command("XPENDING", "s", "group1") == [2, "1-0", "2-0", [["consumer1", "2"]]]
    assert x.execute_command("XPENDING", "s", "group2") == [2, "1-0", "2-0", [["consumer2", "2"]]]
    # Deletion updates max-deleted-entry-id like XDEL.
    info = x.execute_command("XINFO", "STREAM", "s")
    assert info[info.index("max-deleted-entry-id") + 1] == "2-0"


def test_xdelex_resp3_shape(server):
    conn = server.raw()
    conn.execute("HELLO", "3")
    conn.execute("XADD", "r3", "1-0", "f", "v")
    assert conn.execute("XDELEX", "r3", "IDS", "2", "1-0", "5-0") == b"*2\r\n:1\r\n:-1\r\n"
    conn.execute("DEL", "r3")
    conn.close()


# ---------------------------------------------------------------------------------------------
# XACKDEL


def test_xackdel_arity(raw):
    for args in (("XACKDEL",), ("XACKDEL", "s"), ("XACKDEL", "s", "g"),
                 ("XACKDEL", "s", "g", "IDS", "1")):
        assert err(raw, *args) == arity("xackdel")


def test_xackdel_missing_key_or_group(x):
    assert x.execute_command("XACKDEL", "s", "g", "IDS", "2", "1-0", "2-0") == [-1, -1]
    fill(x, "s", 2)
    assert x.execute_command("XACKDEL", "s", "g", "IDS", "2", "1-0", "2-0") == [-1, -1]
    assert x.execute_command("XLEN", "s") == 2


def test_xackdel_argument_errors(x, raw):
    fill(x, "s", 1)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert err(raw, "XACKDEL", "s", "g", "IDS", "0", "1-0") == (
        "ERR Number of IDs must be a positive integer")
    assert err(raw, "XACKDEL", "s", "g", "IDS", "2", "1-0") == (
        "ERR The `numids` parameter must match the number of arguments")
    assert err(raw, "XACKDEL", "s", "g", "IDS", "1", "1-0", "2-0") == "ERR syntax error"
    assert err(raw, "XACKDEL", "s", "g", "ACKED", "DELREF", "IDS", "1", "1-0") == (
        "ERR syntax error")
    assert err(raw, "XACKDEL", "s", "g", "IDS", "1", "x") == (
        "ERR Invalid stream ID specified as stream command argument")


def two_groups_read(x):
    fill(x, "s", 2)
    for g, c in (("group1", "consumer1"), ("group2", "consumer2")):
        x.execute_command("XGROUP", "CREATE", "s", g, "0")
        x.execute_command("XREADGROUP", "GROUP", g, c, "STREAMS", "s", ">")


def test_xackdel_delref(x):
    two_groups_read(x)
    assert x.execute_command("XACKDEL", "s", "group1", "DELREF", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert x.execute_command("XLEN", "s") == 0
    assert x.execute_command("XPENDING", "s", "group1")[0] == 0
    assert x.execute_command("XPENDING", "s", "group2")[0] == 0
    assert x.execute_command("XACKDEL", "s", "group2", "DELREF", "IDS", "2", "1-0", "2-0") == [
        -1, -1]


def test_xackdel_acked(x):
    two_groups_read(x)
    assert x.execute_command("XACKDEL", "s", "group1", "ACKED", "IDS", "2", "1-0", "2-0") == [2, 2]
    assert x.execute_command("XPENDING", "s", "group1")[0] == 0
    assert x.execute_command("XPENDING", "s", "group2") == [2, "1-0", "2-0", [["consumer2", "2"]]]
    assert x.execute_command("XACKDEL", "s", "group2", "ACKED", "IDS", "2", "1-0", "2-0") == [1, 1]
    assert x.execute_command("XLEN", "s") == 0


def test_xackdel_keepref(x):
    two_groups_read(x)
    assert x.execute_command("XACKDEL", "s", "group1", "KEEPREF", "IDS", "2", "1-0", "2-0") == [
        1, 1]
    assert x.execute_command("XLEN", "s") == 0
    assert x.execute_command("XPENDING", "s", "group2")[0] == 2
    # Still pending in group2: acknowledged there although the entries are gone.
    assert x.execute_command("XACKDEL", "s", "group2", "KEEPREF", "IDS", "2", "1-0", "2-0") == [
        1, 1]
    assert x.execute_command("XPENDING", "s", "group2")[0] == 0


def test_xackdel_not_pending_in_group(x):
    # UNVERIFIED in the reference: an ID in the stream but not pending in this group is
    # neither acknowledged nor deleted (-1).
    fill(x, "s", 2)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert x.execute_command("XACKDEL", "s", "g", "IDS", "1", "1-0") == [-1]
    assert x.execute_command("XLEN", "s") == 2


def test_xackdel_many_ids(x):
    fill(x, "s", 50)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    all_ids = [f"{i}-0" for i in range(1, 51)]
    assert x.execute_command("XACKDEL", "s", "g", "IDS", "50", *all_ids) == [1] * 50
    assert x.execute_command("XLEN", "s") == 0


# ---------------------------------------------------------------------------------------------
# Side effects: keyspace events, WATCH, dirty, propagation, command table


def test_deletions_notify_xdel(server, x):
    x.config_set("notify-keyspace-events", "KEA")
    sub = server.client(decode_responses=True)
    ps = sub.pubsub()
    ps.psubscribe("__keyevent@0__:*")
    wait_for(lambda: ps.get_message(timeout=0.1))
    try:
        fill(x, "s", 2)
        x.execute_command("XGROUP", "CREATE", "s", "g", "0")
        x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
        x.execute_command("XDELEX", "s", "IDS", "1", "9-0")  # nothing deleted: no event
        x.execute_command("XDELEX", "s", "IDS", "1", "1-0")
        x.execute_command("XACKDEL", "s", "g", "IDS", "1", "2-0")
        events = []

        def two_xdel():
            m = ps.get_message(timeout=0.05)
            if m is not None and m["type"] == "pmessage":
                events.append(m["channel"].split(":", 1)[1])
            return events.count("xdel") >= 2

        wait_for(two_xdel)
        noise = ("xadd", "xgroup-create", "xgroup-createconsumer")
        assert [e for e in events if e not in noise] == ["xdel", "xdel"]
    finally:
        x.config_set("notify-keyspace-events", "")
        ps.close()
        sub.close()


def test_deletion_invalidates_watch(server, x):
    fill(x, "s", 2)
    other = server.client(decode_responses=True)
    with x.pipeline() as p:
        p.watch("s")
        other.execute_command("XDELEX", "s", "IDS", "1", "9-0")  # no deletion: WATCH holds
        p.multi()
        p.execute_command("XLEN", "s")
        assert p.execute() == [2]
    with x.pipeline() as p:
        p.watch("s")
        other.execute_command("XDELEX", "s", "IDS", "1", "1-0")
        p.multi()
        p.execute_command("XLEN", "s")
        with pytest.raises(Exception):
            p.execute()
    other.close()


def test_deletions_are_dirty(x, server):
    plain = server.client(decode_responses=True)
    fill(x, "s", 3)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")

    def dirty():
        return plain.info("persistence")["rdb_changes_since_last_save"]

    before = dirty()
    x.execute_command("XDELEX", "s", "IDS", "1", "9-0")
    assert dirty() == before
    x.execute_command("XDELEX", "s", "IDS", "1", "1-0")
    assert dirty() > before
    before = dirty()
    x.execute_command("XACKDEL", "s", "g", "ACKED", "IDS", "1", "2-0")
    assert dirty() > before


def test_deletions_replay_from_aof(server_factory, tmp_path):
    h = server_factory(["--dir", str(tmp_path), "--appendonly", "yes"])
    c = h.client(decode_responses=True)
    c.response_callbacks.clear()
    fill(c, "s", 6)
    for g in ("g1", "g2"):
        c.execute_command("XGROUP", "CREATE", "s", g, "0")
        c.execute_command("XREADGROUP", "GROUP", g, "c", "STREAMS", "s", ">")
    c.execute_command("XACKDEL", "s", "g1", "ACKED", "IDS", "3", "1-0", "2-0", "3-0")
    c.execute_command("XACKDEL", "s", "g2", "ACKED", "IDS", "2", "1-0", "2-0")
    c.execute_command("XDELEX", "s", "DELREF", "IDS", "1", "4-0")
    before = (c.execute_command("XRANGE", "s", "-", "+"),
              c.execute_command("XPENDING", "s", "g1"), c.execute_command("XPENDING", "s", "g2"))
    assert [e[0] for e in before[0]] == ["3-0", "5-0", "6-0"]
    h.stop()
    h2 = server_factory(["--dir", str(tmp_path), "--appendonly", "yes"])
    c2 = h2.client(decode_responses=True)
    c2.response_callbacks.clear()
    after = (c2.execute_command("XRANGE", "s", "-", "+"),
             c2.execute_command("XPENDING", "s", "g1"), c2.execute_command("XPENDING", "s", "g2"))
    assert after == before


def test_command_table_entries(x):
    info = x.execute_command("COMMAND", "INFO", "xackdel", "xdelex")
    assert info[0][0] == "xackdel" and info[0][1] == -6
    assert info[1][0] == "xdelex" and info[1][1] == -5
    for entry in info:
        assert set(entry[2]) >= {"write", "fast"}
    docs = x.execute_command("COMMAND", "DOCS", "xdelex")
    assert "8.2.0" in [str(v) for v in docs[1]]


# ---------------------------------------------------------------------------------------------
# Persistence of the NACK state (XNACK itself is the CLAIM/XNACK helper's; rdb_stream.cc keeps
# the unowned entries in NACK-zone order)


def test_nack_state_persists(server, x):
    if x.execute_command("COMMAND", "INFO", "xnack")[0] is None:
        pytest.skip("XNACK not built")
    fill(x, "s", 3)
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    x.execute_command("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
    assert x.execute_command("XNACK", "s", "g", "FAIL", "IDS", "1", "3-0") == 1
    assert x.execute_command("XNACK", "s", "g", "FATAL", "IDS", "1", "1-0") == 1

    def pending(key):
        return [(p[0], p[1], p[3]) for p in
                x.execute_command("XPENDING", key, "g", "-", "+", "10")]

    before = pending("s")
    assert before == [("1-0", "", 9223372036854775807), ("2-0", "c", 1), ("3-0", "", 1)]
    b = server.client()
    payload = b.execute_command("DUMP", "s")
    assert payload[0] == 120
    b.execute_command("RESTORE", "t", "0", payload)
    b.close()
    x.execute_command("DEBUG", "RELOAD")
    assert pending("s") == before and pending("t") == before

    def claim_order(key):
        got = x.execute_command("XREADGROUP", "GROUP", "g", "c2", "COUNT", "2", "CLAIM", "0",
                                "STREAMS", key, ">")
        return [e[0] for e in got[0][1]]

    # The NACK zone is FIFO: 3-0 was released first.
    assert claim_order("s") == claim_order("t") == ["3-0", "1-0"]

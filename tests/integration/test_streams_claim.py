"""XREADGROUP ... CLAIM min-idle-time (Redis 8.4): argument errors, the 4-element entry format,
claim order (NACKed, then longest idle, then new), the shared COUNT, NOACK, deleted entries,
blocking (wake when an entry becomes claimable, on XNACK, on XADD; timeout), MULTI, and the
state a restart from the AOF rebuilds from what the command propagated.

Entries are aged with XCLAIM ... IDLE/TIME JUSTID (which sets the delivery time without
counting a delivery) instead of sleeping; blocked clients are awaited through INFO.
"""

import re
import threading
import time

import pytest

from conftest import arity, err, start_server, wait_blocked, wait_for

I64_MAX = "9223372036854775807"


@pytest.fixture
def x(server, raw):
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    c.flushall()
    c.plain = server.client(decode_responses=True)  # for INFO, which needs redis-py's parsing
    yield c
    c.plain.close()
    c.close()


def rg(x, consumer, *args, group="g"):
    return x.execute_command("XREADGROUP", "GROUP", group, consumer, *args)


def age(x, ids, ms, owner="c1", key="s", group="g"):
    """Makes pending `ids` look delivered `ms` ago to `owner` (no delivery counted)."""
    x.execute_command("XCLAIM", key, group, owner, "0", *ids, "IDLE", str(ms), "JUSTID")


def pending(x, key="s", group="g"):
    return [(p[0], p[1], p[3]) for p in x.execute_command("XPENDING", key, group, "-", "+", "100")]


@pytest.fixture
def grp(x):
    """Stream s with 1-0..3-0 and group g at 0."""
    for i in range(1, 4):
        x.execute_command("XADD", "s", f"{i}-0", "f", f"v{i}")
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    return x


# ---------------------------------------------------------------------------------------------
# Arguments


@pytest.mark.parametrize("bad", ["test", "5.5", "+10", "10e", "-0", "", " 1", "99999999999999999999"])
def test_claim_min_idle_not_an_integer(grp, raw, bad):
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "CLAIM", bad, "STREAMS", "s", ">") == (
        "ERR min-idle-time is not an integer")


def test_claim_min_idle_negative(grp, raw):
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "CLAIM", "-10", "STREAMS", "s", ">") == (
        "ERR min-idle-time must be a positive integer")
    # 0 is allowed.
    assert len(rg(grp, "c", "CLAIM", "0", "STREAMS", "s", ">")[0][1]) == 3


def test_claim_on_xread(grp, raw):
    assert err(raw, "XREAD", "CLAIM", "10", "STREAMS", "s", "0") == (
        "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.")
    # Without its value CLAIM is just a syntax error.
    assert err(raw, "XREAD", "CLAIM") == arity("xread")
    assert err(raw, "XREAD", "COUNT", "1", "CLAIM", "STREAMS", "s") == (
        "ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.")


def test_claim_inside_group_clause_is_a_syntax_error(grp, raw):
    assert err(raw, "XREADGROUP", "GROUP", "g", "CLAIM", "50", "consumer1", "STREAMS", "s",
               ">") == "ERR syntax error"


def test_claim_after_streams_is_a_key(grp, raw):
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "CLAIM", "50") == (
        "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be "
        "specified.")
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "CLAIM", ">", "50") == (
        "NOGROUP No such key 'CLAIM' or consumer group 'g' in XREADGROUP with GROUP option")
    x = grp
    x.execute_command("XGROUP", "CREATE", "CLAIM", "g", "$", "MKSTREAM")
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "CLAIM", ">", "50x") == (
        "ERR Invalid stream ID specified as stream command argument")


def test_claim_any_position_and_last_wins(grp):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0", "2-0", "3-0"], 55)
    # Before GROUP, and repeated: the last CLAIM counts (60 > 55: nothing is claimable).
    assert rg(x, "c2", "CLAIM", "50", "COUNT", "1", "CLAIM", "60", "STREAMS", "s", ">") is None
    got = x.execute_command("XREADGROUP", "CLAIM", "60", "GROUP", "g", "c2", "COUNT", "1",
                            "CLAIM", "50", "STREAMS", "s", ">")
    assert [e[0] for e in got[0][1]] == ["1-0"]


def test_claim_huge_min_idle_is_accepted(grp):
    x = grp
    rg(x, "c1", "COUNT", "1", "STREAMS", "s", ">")
    age(x, ["1-0"], 10**9)
    got = rg(x, "c2", "CLAIM", I64_MAX, "STREAMS", "s", ">")
    # Nothing qualifies for the claim; the new entries still come.
    assert [e[0] for e in got[0][1]] == ["2-0", "3-0"]


def test_claim_missing_group_and_key(grp, raw):
    assert err(raw, "XREADGROUP", "GROUP", "nope", "c", "CLAIM", "0", "STREAMS", "s", ">") == (
        "NOGROUP No such key 's' or consumer group 'nope' in XREADGROUP with GROUP option")
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "CLAIM", "0", "STREAMS", "nokey", ">") == (
        "NOGROUP No such key 'nokey' or consumer group 'g' in XREADGROUP with GROUP option")


def test_getkeys_skips_claim_value(grp):
    assert grp.execute_command("COMMAND", "GETKEYS", "XREADGROUP", "GROUP", "g", "c", "CLAIM",
                               "10", "STREAMS", "s1", "s2", ">", ">") == ["s1", "s2"]


def test_command_docs_show_claim(x):
    docs = x.execute_command("COMMAND", "DOCS", "xreadgroup")
    assert "CLAIM" in str(docs)


# ---------------------------------------------------------------------------------------------
# Reply format


def test_claim_reply_raw_resp2(grp, raw):
    """[T-CG] "XREADGROUP CLAIM field types are correct": idle and count are integers."""
    x = grp
    x.execute_command("DEL", "s")
    x.execute_command("XADD", "mystream", "1-0", "f", "v1")
    x.execute_command("XGROUP", "CREATE", "mystream", "group1", "0")
    rg(x, "consumer1", "STREAMS", "mystream", ">", group="group1")
    age(x, ["1-0"], 100, owner="consumer1", key="mystream", group="group1")
    reply = raw.execute("XREADGROUP", "GROUP", "group1", "consumer2", "CLAIM", "50", "STREAMS",
                        "mystream", ">")
    m = re.fullmatch(rb"\*1\r\n\*2\r\n\$8\r\nmystream\r\n\*1\r\n\*4\r\n\$3\r\n1-0\r\n"
                     rb"\*2\r\n\$1\r\nf\r\n\$2\r\nv1\r\n:(\d+)\r\n:1\r\n", reply)
    assert m, reply
    assert int(m.group(1)) >= 100


def test_new_entries_have_zero_idle_and_count(grp, raw):
    reply = raw.execute("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "CLAIM", "100", "STREAMS",
                        "s", ">")
    assert reply == (b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n1-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv1\r\n"
                     b":0\r\n:0\r\n")


def test_claim_reply_resp3(grp, server):
    x = grp
    rg(x, "c1", "COUNT", "1", "STREAMS", "s", ">")
    age(x, ["1-0"], 100)
    conn = server.raw()
    conn.execute("HELLO", "3")
    reply = conn.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", "2", "CLAIM", "50", "STREAMS",
                         "s", ">")
    assert re.fullmatch(rb"%1\r\n\$1\r\ns\r\n\*2\r\n"
                        rb"\*4\r\n\$3\r\n1-0\r\n\*2\r\n\$1\r\nf\r\n\$2\r\nv1\r\n:\d+\r\n:1\r\n"
                        rb"\*4\r\n\$3\r\n2-0\r\n\*2\r\n\$1\r\nf\r\n\$2\r\nv2\r\n:0\r\n:0\r\n", reply), reply


def test_previous_delivery_count(grp):
    """consumer2's claim shows 1 (the count before), XPENDING then shows 2; three more: 4."""
    x = grp
    rg(x, "consumer1", "COUNT", "1", "STREAMS", "s", ">")
    age(x, ["1-0"], 100, owner="consumer1")
    got = rg(x, "consumer2", "COUNT", "1", "CLAIM", "50", "STREAMS", "s", ">")[0][1]
    assert got[0][0] == "1-0" and got[0][3] == 1 and got[0][2] >= 100
    assert pending(x) == [("1-0", "consumer2", 2)]
    for _ in range(3):
        age(x, ["1-0"], 100, owner="consumer2")
        got = rg(x, "consumer2", "COUNT", "1", "CLAIM", "50", "STREAMS", "s", ">")[0][1]
    assert got[0][3] == 4
    assert pending(x) == [("1-0", "consumer2", 5)]


def test_specific_id_ignores_claim(grp):
    """[T-CG] "XREADGROUP CLAIM with specific ID": normal 2-element entries."""
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0", "2-0", "3-0"], 100)
    got = rg(x, "c1", "CLAIM", "50", "BLOCK", "10", "NOACK", "STREAMS", "s", "0")
    assert got == [["s", [["1-0", ["f", "v1"]], ["2-0", ["f", "v2"]], ["3-0", ["f", "v3"]]]]]
    # Nothing was claimed by somebody else.
    assert rg(x, "c2", "CLAIM", "50", "STREAMS", "s", "0") == [["s", []]]


# ---------------------------------------------------------------------------------------------
# What gets claimed, and in what order


def test_claim_order_nacked_then_longest_idle_then_new(x):
    for i in range(1, 7):
        x.execute_command("XADD", "s", f"{i}-0", "f", str(i))
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rg(x, "c1", "COUNT", "5", "STREAMS", "s", ">")
    age(x, ["1-0"], 1000)
    age(x, ["2-0"], 3000)
    age(x, ["3-0"], 2000)
    age(x, ["4-0", "5-0"], 5000)
    x.execute_command("XNACK", "s", "g", "FAIL", "IDS", "1", "5-0")
    x.execute_command("XNACK", "s", "g", "FAIL", "IDS", "1", "4-0")
    got = rg(x, "c2", "CLAIM", "1500", "STREAMS", "s", ">")[0][1]
    assert [e[0] for e in got] == ["5-0", "4-0", "2-0", "3-0", "6-0"]
    assert [e[2] for e in got][:2] == [-1, -1]
    assert [e[3] for e in got] == [1, 1, 1, 1, 0]
    # 1-0 (idle 1000 < 1500) stayed with c1.
    assert ("1-0", "c1", 1) in pending(x)


def test_claim_takes_entries_of_every_owner_including_self(grp):
    x = grp
    rg(x, "c1", "COUNT", "1", "STREAMS", "s", ">")
    rg(x, "c2", "COUNT", "1", "STREAMS", "s", ">")
    got = rg(x, "c2", "CLAIM", "0", "STREAMS", "s", ">")[0][1]
    assert [e[0] for e in got] == ["1-0", "2-0", "3-0"]
    assert [p[1] for p in pending(x)] == ["c2", "c2", "c2"]


def test_claim_with_count_limit(grp):
    """[T-CG] "CLAIM with COUNT limit": 3 pending, COUNT 2 CLAIM 50 -> 2."""
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0", "2-0", "3-0"], 100)
    got = rg(x, "c2", "COUNT", "2", "CLAIM", "50", "STREAMS", "s", ">")[0][1]
    assert len(got) == 2


def test_count_is_shared_between_claimed_and_new(x):
    """The docs' example scaled down: 2 idle + 10 new, COUNT 5 -> 2 idle + 3 new."""
    for i in range(1, 3):
        x.execute_command("XADD", "s", f"{i}-0", "f", str(i))
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0", "2-0"], 100)
    for i in range(3, 13):
        x.execute_command("XADD", "s", f"{i}-0", "f", str(i))
    got = rg(x, "c2", "COUNT", "5", "CLAIM", "50", "STREAMS", "s", ">")[0][1]
    assert [e[0] for e in got] == ["1-0", "2-0", "3-0", "4-0", "5-0"]
    assert [e[3] for e in got] == [1, 1, 0, 0, 0]


def test_count_is_one_budget_across_streams(x):
    for key in ("a", "b"):
        for i in range(1, 4):
            x.execute_command("XADD", key, f"{i}-0", "f", str(i))
        x.execute_command("XGROUP", "CREATE", key, "g", "0")
    got = rg(x, "c", "COUNT", "4", "CLAIM", "1000", "STREAMS", "a", "b", ">", ">")
    assert [(k, [e[0] for e in es]) for k, es in got] == [("a", ["1-0", "2-0", "3-0"]),
                                                          ("b", ["1-0"])]
    # Once the budget is spent, later streams are left out of the reply.
    got = rg(x, "c", "COUNT", "1", "CLAIM", "0", "STREAMS", "a", "b", ">", ">")
    assert [k for k, _ in got] == ["a"]
    # Without CLAIM, COUNT stays per stream.
    x.execute_command("XADD", "a", "4-0", "f", "4")
    x.execute_command("XADD", "b", "4-0", "f", "4")
    got = rg(x, "c2", "COUNT", "1", "STREAMS", "a", "b", ">", ">")
    assert [(k, len(es)) for k, es in got] == [("a", 1), ("b", 1)]


def test_claim_skips_and_drops_deleted_entries(grp):
    """[T-CG] "CLAIM when pending messages get trimmed": nothing returned (and, vireo's choice,
    the dangling PEL entries are dropped as XCLAIM drops them)."""
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0", "2-0", "3-0"], 100)
    x.execute_command("XTRIM", "s", "MAXLEN", "0")
    assert rg(x, "c2", "CLAIM", "50", "STREAMS", "s", ">") is None
    assert x.execute_command("XPENDING", "s", "g")[0] == 0


def test_claim_deleted_entries_do_not_use_count(grp):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0", "2-0", "3-0"], 100)
    x.execute_command("XDEL", "s", "1-0", "2-0")
    got = rg(x, "c2", "COUNT", "1", "CLAIM", "50", "STREAMS", "s", ">")[0][1]
    assert [e[0] for e in got] == ["3-0"]


def test_claim_after_delconsumer(grp):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0", "2-0", "3-0"], 100)
    assert x.execute_command("XGROUP", "DELCONSUMER", "s", "g", "c1") == 3
    assert rg(x, "c2", "CLAIM", "0", "STREAMS", "s", ">") is None


def test_claim_with_noack(x):
    """[T-CG]: 1 pending + 1 new with NOACK CLAIM 50 -> 2 returned, 1 pending; the next call
    returns only the pending one."""
    x.execute_command("XADD", "s", "1-0", "f", "v1")
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0"], 100)
    x.execute_command("XADD", "s", "2-0", "f", "v2")
    got = rg(x, "c2", "NOACK", "CLAIM", "50", "STREAMS", "s", ">")[0][1]
    assert [e[0] for e in got] == ["1-0", "2-0"]
    assert x.execute_command("XPENDING", "s", "g")[0] == 1
    age(x, ["1-0"], 100, owner="c2")
    got = rg(x, "c2", "NOACK", "CLAIM", "50", "STREAMS", "s", ">")[0][1]
    assert [e[0] for e in got] == ["1-0"]


def test_claim_creates_consumer_and_updates_times(grp):
    x = grp
    assert len(rg(x, "fresh", "CLAIM", "0", "COUNT", "1", "STREAMS", "s", ">")[0][1]) == 1
    names = [c[1] for c in x.execute_command("XINFO", "CONSUMERS", "s", "g")]
    assert names == ["fresh"]


def test_claim_nothing_returns_nil(grp):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    assert rg(x, "c2", "CLAIM", "100000", "STREAMS", "s", ">") is None


# ---------------------------------------------------------------------------------------------
# Blocking


@pytest.fixture
def blocker(server, x):
    conns = []

    def start(*args):
        conn = server.raw(timeout=20)
        conns.append(conn)
        conn.send_command(*args)
        return conn

    yield start
    for c in conns:
        c.close()
    wait_for(lambda: int(x.plain.info("clients")["blocked_clients"]) == 0)


def test_block_claim_zero_returns_at_once(grp, blocker):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    c = blocker("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "CLAIM", "0", "STREAMS", "s", ">")
    assert c.read_reply().startswith(b"*1\r\n*2\r\n$1\r\ns\r\n*3\r\n")


def test_block_claim_wakes_when_entry_becomes_claimable(grp, blocker):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0", "2-0", "3-0"], 0)
    started = time.monotonic()
    c = blocker("XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "BLOCK", "10000", "CLAIM", "300",
                "STREAMS", "s", ">")
    wait_blocked(x.plain, 1)
    reply = c.read_reply()  # the server wakes it when 1-0 has been idle 300 ms
    elapsed = time.monotonic() - started
    assert re.fullmatch(rb"\*1\r\n\*2\r\n\$1\r\ns\r\n\*1\r\n\*4\r\n\$3\r\n1-0\r\n.*:1\r\n", reply,
                        re.S), reply
    assert 0.25 <= elapsed < 5
    assert ("1-0", "c2", 2) in pending(x)


def test_block_claim_rearms_after_ack(grp, blocker):
    """The first entry due to become claimable is acked meanwhile: the reader waits for the
    next one instead of waking for nothing or sleeping forever."""
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["2-0", "3-0"], 0)
    age(x, ["1-0"], 200)
    started = time.monotonic()
    c = blocker("XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "BLOCK", "10000", "CLAIM", "400",
                "STREAMS", "s", ">")
    wait_blocked(x.plain, 1)
    assert x.execute_command("XACK", "s", "g", "1-0") == 1
    reply = c.read_reply()
    assert b"$3\r\n2-0\r\n" in reply, reply
    assert time.monotonic() - started >= 0.35


def test_block_claim_timeout_racing_the_claim_timer(grp, blocker):
    """The client's timeout and its claim timer fall due in the same loop turn: whichever wins,
    the reply is the entry or nil, and the server survives the loser's late timer."""
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    c = blocker("PING")
    assert c.read_reply() == b"+PONG\r\n"
    for _ in range(40):
        age(x, ["1-0", "2-0", "3-0"], 0)
        c.send_command("XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "BLOCK", "20", "CLAIM",
                       "20", "STREAMS", "s", ">")
        reply = c.read_reply()
        assert reply == b"*-1\r\n" or b"$3\r\n1-0\r\n" in reply, reply
        assert x.execute_command("PING") == "PONG"


def test_block_claim_wakes_on_xnack(grp, blocker):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    c = blocker("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "CLAIM", "3600000", "STREAMS", "s",
                ">")
    wait_blocked(x.plain, 1)
    assert x.execute_command("XNACK", "s", "g", "FAIL", "IDS", "1", "2-0") == 1
    reply = c.read_reply()
    assert reply == (b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n2-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv2\r\n"
                     b":-1\r\n:1\r\n")


def test_block_claim_wakes_on_xadd(grp, blocker):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    c = blocker("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "CLAIM", "3600000", "STREAMS", "s",
                ">")
    wait_blocked(x.plain, 1)
    x.execute_command("XADD", "s", "4-0", "f", "v4")
    assert c.read_reply() == (
        b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*4\r\n$3\r\n4-0\r\n*2\r\n$1\r\nf\r\n$2\r\nv4\r\n:0\r\n:0\r\n")


def test_block_claim_times_out(grp, blocker):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    c = blocker("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "100", "CLAIM", "3600000", "STREAMS",
                "s", ">")
    assert c.read_reply() == b"*-1\r\n"
    assert [p[1] for p in pending(x)] == ["c1", "c1", "c1"]


def test_block_claim_on_empty_group_wakes_on_xadd(x, blocker):
    x.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
    c = blocker("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "CLAIM", "10", "STREAMS", "s", ">")
    wait_blocked(x.plain, 1)
    x.execute_command("XADD", "s", "1-0", "f", "v")
    assert b"$3\r\n1-0\r\n" in c.read_reply()


def test_block_claim_group_destroyed(grp, blocker):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    c = blocker("XREADGROUP", "GROUP", "g", "c2", "BLOCK", "0", "CLAIM", "3600000", "STREAMS", "s",
                ">")
    wait_blocked(x.plain, 1)
    x.execute_command("XGROUP", "DESTROY", "s", "g")
    assert c.read_reply().startswith(b"-NOGROUP")


# ---------------------------------------------------------------------------------------------
# MULTI


def test_claim_in_multi(grp, raw):
    x = grp
    rg(x, "c1", "STREAMS", "s", ">")
    age(x, ["1-0"], 100)
    raw.execute("MULTI")
    assert raw.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", "1", "CLAIM", "50", "STREAMS",
                       "s", ">") == b"+QUEUED\r\n"
    assert raw.execute("XREADGROUP", "GROUP", "g", "c3", "BLOCK", "1000", "CLAIM", "3600000",
                       "STREAMS", "s", ">") == b"+QUEUED\r\n"
    reply = raw.execute("EXEC")
    assert re.fullmatch(rb"\*2\r\n\*1\r\n\*2\r\n\$1\r\ns\r\n\*1\r\n\*4\r\n\$3\r\n1-0\r\n.*:1\r\n"
                        rb"\*-1\r\n", reply, re.S), reply
    assert ("1-0", "c2", 2) in pending(x)


# ---------------------------------------------------------------------------------------------
# Propagation: a restart from the AOF rebuilds what the claims did


def test_claim_state_survives_aof_replay(tmp_path):
    srv = start_server(["--dir", str(tmp_path), "--appendonly", "yes"])
    try:
        c = srv.client(decode_responses=True)
        c.response_callbacks.clear()
        for i in range(1, 6):
            c.execute_command("XADD", "s", f"{i}-0", "f", str(i))
        c.execute_command("XGROUP", "CREATE", "s", "g", "0")
        rg(c, "c1", "COUNT", "3", "STREAMS", "s", ">")
        age(c, ["1-0", "2-0"], 1000)
        c.execute_command("XNACK", "s", "g", "SILENT", "IDS", "1", "3-0")
        c.execute_command("XDEL", "s", "2-0")
        got = rg(c, "c2", "COUNT", "3", "CLAIM", "500", "STREAMS", "s", ">")[0][1]
        assert [e[0] for e in got] == ["3-0", "1-0", "4-0"]
        rg(c, "c3", "NOACK", "CLAIM", "500", "STREAMS", "s", ">")
        before = pending(c)
        info_before = c.execute_command("XINFO", "GROUPS", "s")
        c.close()
    finally:
        srv.stop()
    srv = start_server(["--dir", str(tmp_path), "--appendonly", "yes"])
    try:
        c = srv.client(decode_responses=True)
        c.response_callbacks.clear()
        assert pending(c) == before == [("1-0", "c2", 2), ("3-0", "c2", 1), ("4-0", "c2", 1)]
        assert c.execute_command("XINFO", "GROUPS", "s") == info_before
        c.close()
    finally:
        srv.stop()

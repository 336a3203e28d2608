"""XNACK (Redis 8.8) and the NACK zone: modes, RETRYCOUNT, FORCE, the reply count, every
argument error, and how NACKed (unowned) entries show in and are taken by XPENDING, XCLAIM,
XAUTOCLAIM, XREADGROUP, XGROUP DELCONSUMER/DESTROY, XACK, XINFO, COPY and an AOF replay.
"""

import pytest

from conftest import arity, err, start_server

I64_MAX = 9223372036854775807


@pytest.fixture
def x(server, raw):
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    c.flushall()
    yield c
    c.close()


def as_dict(flat):
    return dict(zip(flat[::2], flat[1::2]))


def rg(x, consumer, *args, group="g"):
    return x.execute_command("XREADGROUP", "GROUP", group, consumer, *args)


def nack(x, mode, *ids, extra=(), key="s", group="g"):
    return x.execute_command("XNACK", key, group, mode, "IDS", str(len(ids)), *ids, *extra)


def pending(x, key="s", group="g"):
    return [tuple(p) for p in x.execute_command("XPENDING", key, group, "-", "+", "100")]


def group_info(x, key="s"):
    full = as_dict(x.execute_command("XINFO", "STREAM", key, "FULL"))
    return [as_dict(g) for g in full["groups"]]


@pytest.fixture
def grp(x):
    """Stream s with 1-0..5-0, group g at 0, c1 has read 1-0..3-0 (count 1 each)."""
    for i in range(1, 6):
        x.execute_command("XADD", "s", f"{i}-0", "f", str(i))
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    rg(x, "c1", "COUNT", "3", "STREAMS", "s", ">")
    return x


# ---------------------------------------------------------------------------------------------
# Modes and the reply


def test_nack_fail_keeps_count_and_unowns(grp):
    x = grp
    assert nack(x, "FAIL", "1-0") == 1
    assert pending(x)[0] == ("1-0", "", -1, 1)
    assert [p[1] for p in pending(x)] == ["", "c1", "c1"]


def test_nack_silent_decrements_count(grp):
    x = grp
    assert nack(x, "SILENT", "1-0") == 1
    assert pending(x)[0] == ("1-0", "", -1, 0)
    # Clamped at 0.
    assert nack(x, "silent", "1-0") == 1
    assert pending(x)[0] == ("1-0", "", -1, 0)


def test_nack_fatal_sets_max_count(grp):
    x = grp
    assert nack(x, "FATAL", "2-0") == 1
    assert pending(x)[1] == ("2-0", "", -1, I64_MAX)
    # Claiming it does not wrap the count around.
    x.execute_command("XCLAIM", "s", "g", "c2", "0", "2-0")
    assert pending(x)[1][3] == I64_MAX


def test_nack_retrycount_overrides_mode(grp):
    x = grp
    for mode in ("SILENT", "FAIL", "FATAL"):
        assert nack(x, mode, "1-0", extra=("RETRYCOUNT", "7")) == 1
        assert pending(x)[0] == ("1-0", "", -1, 7)
    assert nack(x, "FAIL", "1-0", extra=("RETRYCOUNT", "0")) == 1
    assert pending(x)[0][3] == 0


def test_nack_reply_counts(grp):
    x = grp
    # 4-0 isn't pending, 9-0 isn't anywhere: skipped. Duplicates count twice.
    assert nack(x, "FAIL", "1-0", "4-0", "9-0", "1-0") == 2
    # Already NACKed counts as a success.
    assert nack(x, "FAIL", "1-0") == 1


def test_nack_empty_pel(x):
    x.execute_command("XADD", "s", "1-0", "f", "v")
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert nack(x, "FAIL", "1-0") == 0
    assert x.execute_command("XPENDING", "s", "g") == [0, None, None, None]


def test_nack_force(grp):
    x = grp
    # 4-0 is in the stream but not pending: FORCE creates an unowned entry with count 0.
    assert nack(x, "FAIL", "4-0", extra=("FORCE",)) == 1
    assert ("4-0", "", -1, 0) in pending(x)
    assert nack(x, "FATAL", "5-0", extra=("FORCE",)) == 1
    assert ("5-0", "", -1, I64_MAX) in pending(x)
    x.execute_command("XACK", "s", "g", "4-0", "5-0")
    assert nack(x, "SILENT", "4-0", extra=("FORCE", "RETRYCOUNT", "3")) == 1
    assert ("4-0", "", -1, 3) in pending(x)
    # Not in the stream: nothing to create.
    assert nack(x, "FAIL", "9-0", extra=("FORCE",)) == 0
    # Pending already: the normal path (one entry, the mode applied).
    assert nack(x, "SILENT", "1-0", extra=("FORCE",)) == 1
    assert [p for p in pending(x) if p[0] == "1-0"] == [("1-0", "", -1, 0)]


def test_nack_options_before_ids(grp):
    x = grp
    assert x.execute_command("XNACK", "s", "g", "FAIL", "FORCE", "RETRYCOUNT", "5", "IDS", "1",
                             "4-0") == 1
    assert ("4-0", "", -1, 5) in pending(x)
    assert x.execute_command("XNACK", "s", "g", "FAIL", "RETRYCOUNT", "2", "IDS", "1", "1-0",
                             "FORCE") == 1
    assert pending(x)[0] == ("1-0", "", -1, 2)


# ---------------------------------------------------------------------------------------------
# Errors


def test_nack_arity(grp, raw):
    assert err(raw, "XNACK", "s", "g", "SILENT", "IDS", "1") == arity("xnack")
    assert err(raw, "XNACK", "s", "g", "SILENT", "IDS") == arity("xnack")
    assert err(raw, "XNACK") == arity("xnack")


def test_nack_nogroup_and_wrongtype(grp, raw):
    assert err(raw, "XNACK", "nokey", "g", "FAIL", "IDS", "1", "1-0") == (
        "NOGROUP No such key 'nokey' or consumer group 'g'")
    assert err(raw, "XNACK", "s", "nogroup", "FAIL", "IDS", "1", "1-0") == (
        "NOGROUP No such key 's' or consumer group 'nogroup'")
    raw.execute("SET", "str", "v")
    assert err(raw, "XNACK", "str", "g", "FAIL", "IDS", "1", "1-0").startswith("WRONGTYPE")


def test_nack_bad_mode(grp, raw):
    assert err(raw, "XNACK", "s", "g", "RETRY", "IDS", "1", "1-0") == (
        "ERR mode must be SILENT, FAIL, or FATAL")
    assert err(raw, "XNACK", "s", "g", "IDS", "1", "1-0", "FAIL") == (
        "ERR mode must be SILENT, FAIL, or FATAL")


def test_nack_second_mode_and_unknown_option(grp, raw):
    assert err(raw, "XNACK", "s", "g", "FAIL", "SILENT", "IDS", "1", "1-0") == (
        "ERR Unrecognized XNACK option 'SILENT'")
    assert err(raw, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "BOGUS") == (
        "ERR Unrecognized XNACK option 'BOGUS'")


def test_nack_missing_ids(grp, raw):
    assert err(raw, "XNACK", "s", "g", "SILENT", "FORCE", "RETRYCOUNT", "5") == (
        "ERR syntax error, expected IDS keyword")


@pytest.mark.parametrize("numids", ["0", "-1", "abc", "1.5"])
def test_nack_numids_not_positive(grp, raw, numids):
    assert err(raw, "XNACK", "s", "g", "FAIL", "IDS", numids, "1-0") == (
        "ERR numids must be a positive integer")


def test_nack_ids_count_mismatch(grp, raw):
    assert err(raw, "XNACK", "s", "g", "FAIL", "IDS", "3", "1-0", "2-0") == (
        "ERR number of IDs doesn't match numids")
    # A surplus ID is read as an option.
    assert err(raw, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "2-0") == (
        "ERR Unrecognized XNACK option '2-0'")


def test_nack_bad_id(grp, raw):
    assert err(raw, "XNACK", "s", "g", "FAIL", "IDS", "2", "1-0", "bad") == (
        "ERR Invalid stream ID specified as stream command argument")
    # All or nothing: 1-0 was not released.
    assert pending(grp)[0][1] == "c1"


@pytest.mark.parametrize("value", ["abc", "1.5", "99999999999999999999"])
def test_nack_retrycount_not_integer(grp, raw, value):
    assert err(raw, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "RETRYCOUNT", value) == (
        "ERR value is not an integer or out of range")


def test_nack_retrycount_negative(grp, raw):
    assert err(raw, "XNACK", "s", "g", "FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "-1") == (
        "ERR Invalid RETRYCOUNT value, must be >= 0")


def test_nack_command_info(x):
    info = x.execute_command("COMMAND", "INFO", "xnack")[0]
    assert info[0] == "xnack" and info[1] == -7
    assert set(info[2]) == {"write", "fast"}
    assert (info[3], info[4], info[5]) == (1, 1, 1)
    docs = as_dict(x.execute_command("COMMAND", "DOCS", "xnack")[1])
    assert docs["since"] == "8.8.0" and docs["group"] == "stream"


# ---------------------------------------------------------------------------------------------
# The NACK zone


def test_nacked_entries_are_claimed_first_in_nack_order(grp):
    x = grp
    nack(x, "FAIL", "3-0")
    nack(x, "FAIL", "1-0")
    nack(x, "FAIL", "2-0")
    nack(x, "FAIL", "3-0")  # re-NACK: to the end of the zone
    got = x.execute_command("XAUTOCLAIM", "s", "g", "c2", str(I64_MAX // 2), "0-0", "COUNT", "2")
    assert [e[0] for e in got[1]] == ["1-0", "2-0"]
    got = rg(x, "c3", "COUNT", "1", "CLAIM", str(I64_MAX), "STREAMS", "s", ">")
    assert got[0][1][0][0] == "3-0"


def test_xclaim_takes_nacked_at_any_min_idle(grp):
    x = grp
    nack(x, "FAIL", "2-0")
    assert x.execute_command("XCLAIM", "s", "g", "c2", str(I64_MAX), "1-0", "2-0") == [
        ["2-0", ["f", "2"]]]
    entry = [p for p in pending(x) if p[0] == "2-0"][0]
    assert (entry[1], entry[3]) == ("c2", 2) and 0 <= entry[2] < 5000
    assert group_info(x)[0]["nacked-count"] == 0


def test_xautoclaim_takes_nacked_regardless_of_cursor(grp):
    x = grp
    nack(x, "FAIL", "1-0")
    got = x.execute_command("XAUTOCLAIM", "s", "g", "c2", "3600000", "3-0")
    assert [e[0] for e in got[1]] == ["1-0"]
    assert got[2] == []


def test_xreadgroup_history_skips_nacked(grp):
    x = grp
    nack(x, "FAIL", "2-0")
    got = rg(x, "c1", "STREAMS", "s", "0")
    assert [e[0] for e in got[0][1]] == ["1-0", "3-0"]


def test_nack_does_not_create_consumers_and_pending_drops(grp):
    x = grp
    nack(x, "FAIL", "1-0", "2-0")
    consumers = [as_dict(c) for c in x.execute_command("XINFO", "CONSUMERS", "s", "g")]
    assert [(c["name"], c["pending"]) for c in consumers] == [("c1", 1)]
    # XPENDING summary: NACKed entries count in the total but belong to no consumer.
    assert x.execute_command("XPENDING", "s", "g") == [3, "1-0", "3-0", [["c1", "1"]]]
    # With a consumer filter they are not listed; with IDLE they are (claimable at any idle).
    assert [p[0] for p in x.execute_command("XPENDING", "s", "g", "-", "+", "10", "c1")] == ["3-0"]
    assert [p[0] for p in x.execute_command("XPENDING", "s", "g", "IDLE", "3600000", "-", "+",
                                            "10")] == ["1-0", "2-0"]


def test_delconsumer_keeps_nacked(grp):
    x = grp
    nack(x, "FAIL", "1-0")
    assert x.execute_command("XGROUP", "DELCONSUMER", "s", "g", "c1") == 2
    assert pending(x) == [("1-0", "", -1, 1)]
    got = rg(x, "c2", "CLAIM", "3600000", "STREAMS", "s", ">")
    assert [e[0] for e in got[0][1]][0] == "1-0"


def test_destroy_removes_nacked(grp):
    x = grp
    nack(x, "FAIL", "1-0")
    assert x.execute_command("XGROUP", "DESTROY", "s", "g") == 1
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    assert x.execute_command("XPENDING", "s", "g")[0] == 0


def test_xack_of_nacked_and_nacked_count(grp):
    x = grp
    nack(x, "FAIL", "1-0", "2-0", "3-0")
    g = group_info(x)[0]
    assert (g["nacked-count"], g["pel-count"]) == (3, 3)
    # Unowned entries in the group PEL: consumer "" and delivery time 0.
    assert g["pending"][0] == ["1-0", "", 0, 1]
    assert x.execute_command("XACK", "s", "g", "1-0") == 1
    g = group_info(x)[0]
    assert (g["nacked-count"], g["pel-count"]) == (2, 2)
    x.execute_command("XCLAIM", "s", "g", "c2", "0", "2-0")
    g = group_info(x)[0]
    assert (g["nacked-count"], g["pel-count"]) == (1, 2)
    assert list(g)[-1] == "nacked-count"


def test_nacked_ghosts(grp):
    x = grp
    nack(x, "FAIL", "1-0", "2-0")
    x.execute_command("XDEL", "s", "1-0", "2-0")
    # XCLAIM of a ghost returns nothing and drops it.
    assert x.execute_command("XCLAIM", "s", "g", "c2", "0", "1-0") == []
    assert [p[0] for p in pending(x)] == ["2-0", "3-0"]
    # XAUTOCLAIM lists it among the deleted IDs.
    got = x.execute_command("XAUTOCLAIM", "s", "g", "c2", "0", "0-0")
    assert got[2] == ["2-0"]
    assert [e[0] for e in got[1]] == ["3-0"]
    assert group_info(x)[0]["nacked-count"] == 0


def test_copy_keeps_nack_zone_order(grp):
    x = grp
    nack(x, "FAIL", "3-0")
    nack(x, "SILENT", "1-0")
    assert x.execute_command("COPY", "s", "s2") == 1
    same = lambda rows: [(p[0], p[1], p[3], p[2] if p[1] == "" else None) for p in rows]
    assert same(pending(x, key="s2")) == same(pending(x))
    got = rg(x, "c9", "CLAIM", str(I64_MAX), "STREAMS", "s2", ">")[0][1]
    assert [(e[0], e[3]) for e in got][:2] == [("3-0", 1), ("1-0", 0)]
    # The original is untouched.
    assert group_info(x)[0]["nacked-count"] == 2


def test_nack_state_survives_aof_replay(tmp_path):
    srv = start_server(["--dir", str(tmp_path), "--appendonly", "yes"])
    try:
        c = srv.client(decode_responses=True)
        c.response_callbacks.clear()
        for i in range(1, 6):
            c.execute_command("XADD", "s", f"{i}-0", "f", str(i))
        c.execute_command("XGROUP", "CREATE", "s", "g", "0")
        rg(c, "c1", "COUNT", "4", "STREAMS", "s", ">")
        nack(c, "FAIL", "3-0")
        nack(c, "SILENT", "1-0")
        nack(c, "FATAL", "5-0", extra=("FORCE",))
        nack(c, "FAIL", "9-0")  # no effect, not logged
        c.execute_command("XDEL", "s", "3-0")
        c.execute_command("XCLAIM", "s", "g", "c2", "0", "3-0")  # drops the ghost
        before = pending(c)
        c.close()
    finally:
        srv.stop()
    srv = start_server(["--dir", str(tmp_path), "--appendonly", "yes"])
    try:
        c = srv.client(decode_responses=True)
        c.response_callbacks.clear()
        after = pending(c)
        # Idle times moved on (and delivery times came back from the log: small, not "since 1970").
        assert [(p[0], p[1], p[3]) for p in after] == [(p[0], p[1], p[3]) for p in before] == [
            ("1-0", "", 0), ("2-0", "c1", 1), ("4-0", "c1", 1), ("5-0", "", I64_MAX)]
        assert [p[2] for p in after if p[1] == ""] == [-1, -1]
        assert all(0 <= p[2] < 60000 for p in after if p[1] != "")
        # The zone's order came back too.
        got = rg(c, "c3", "COUNT", "2", "CLAIM", str(I64_MAX), "STREAMS", "s", ">")[0][1]
        assert [e[0] for e in got] == ["1-0", "5-0"]
        c.close()
    finally:
        srv.stop()

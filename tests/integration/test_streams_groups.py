"""Stream consumer groups: XGROUP, XREADGROUP (non-blocking), XACK, XPENDING, XCLAIM, XAUTOCLAIM,
XINFO, and the crash-recovery timeline.

Expected replies are Redis 7.2's; checks where 7.0 differs are marked `only_72`.
"""

import time

import pytest

from conftest import arity, err


@pytest.fixture
def x(server, raw):
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    c.flushall()
    yield c
    c.close()


def as_dict(flat):
    return dict(zip(flat[::2], flat[1::2]))


@pytest.fixture
def grp(x):
    """Stream s with 1-0..5-0 and group g at 0."""
    for i in range(1, 6):
        x.execute_command("XADD", "s", f"{i}-0", "f", str(i))
    assert x.execute_command("XGROUP", "CREATE", "s", "g", "0") == "OK"
    return x


def rg(x, consumer, *args, group="g"):
    return x.execute_command("XREADGROUP", "GROUP", group, consumer, *args)


# ---------------------------------------------------------------------------------------------
# XGROUP


def test_xgroup_create_and_errors(x, raw):
    assert err(raw, "XGROUP", "CREATE", "s", "g", "$") == (
        "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
        "to use the MKSTREAM option to create an empty stream automatically.")
    assert x.execute_command("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM") == "OK"
    assert x.execute_command("XLEN", "s") == 0
    assert err(raw, "XGROUP", "CREATE", "s", "g", "$") == "BUSYGROUP Consumer Group name already exists"
    assert err(raw, "XGROUP", "CREATE", "s", "g2", "bad") == (
        "ERR Invalid stream ID specified as stream command argument")
    assert err(raw, "XGROUP", "CREATE", "s", "g2", "$", "FOO") == (
        "ERR unknown subcommand or wrong number of arguments for 'CREATE'. Try XGROUP HELP.")
    assert err(raw, "XGROUP", "CREATE", "s", "g2", "$", "ENTRIESREAD", "-3") == (
        "ERR value for ENTRIESREAD must be positive or -1")
    assert err(raw, "XGROUP", "CREATE", "s", "g2") == arity("xgroup|create")
    assert err(raw, "XGROUP", "FOO", "s") == "ERR unknown subcommand 'FOO'. Try XGROUP HELP."
    assert err(raw, "XGROUP", "SETID", "s", "nope", "0") == (
        "NOGROUP No such consumer group 'nope' for key name 's'")
    assert err(raw, "XGROUP", "CREATECONSUMER", "s", "nope", "c") == (
        "NOGROUP No such consumer group 'nope' for key name 's'")
    assert err(raw, "XGROUP", "DELCONSUMER", "s", "nope", "c") == (
        "NOGROUP No such consumer group 'nope' for key name 's'")
    assert x.execute_command("XGROUP", "DESTROY", "s", "nope") == 0
    assert x.execute_command("XGROUP", "DESTROY", "s", "g") == 1
    raw.execute("SET", "str", "x")
    assert err(raw, "XGROUP", "CREATE", "str", "g", "$", "MKSTREAM").startswith("WRONGTYPE")
    help_reply = x.execute_command("XGROUP", "HELP")
    assert help_reply[0].startswith("XGROUP <subcommand>")


def test_xgroup_consumers(grp, raw):
    x = grp
    assert x.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "alice") == 1
    assert x.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "alice") == 0
    rg(x, "bob", "COUNT", "2", "STREAMS", "s", ">")
    assert x.execute_command("XGROUP", "DELCONSUMER", "s", "g", "bob") == 2
    assert x.execute_command("XGROUP", "DELCONSUMER", "s", "g", "bob") == 0
    assert x.execute_command("XPENDING", "s", "g") == [0, None, None, None]
    names = [as_dict(c)["name"] for c in x.execute_command("XINFO", "CONSUMERS", "s", "g")]
    assert names == ["alice"]


def test_xgroup_setid(grp):
    x = grp
    rg(x, "a", "STREAMS", "s", ">")
    assert x.execute_command("XGROUP", "SETID", "s", "g", "2-0") == "OK"
    # Entries after 2-0 are delivered again (to whoever reads), with the count reset.
    got = rg(x, "b", "COUNT", "1", "STREAMS", "s", ">")
    assert got == [["s", [["3-0", ["f", "3"]]]]]
    pending = x.execute_command("XPENDING", "s", "g", "-", "+", "10")
    owners = {p[0]: (p[1], p[3]) for p in pending}
    assert owners["3-0"] == ("b", 1)
    assert owners["4-0"] == ("a", 1)
    assert x.execute_command("XGROUP", "SETID", "s", "g", "$") == "OK"
    assert rg(x, "b", "STREAMS", "s", ">") is None
    assert x.execute_command("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "0") == "OK"
    info = as_dict(x.execute_command("XINFO", "GROUPS", "s")[0])
    assert info["entries-read"] == 0 and info["lag"] == 5


# ---------------------------------------------------------------------------------------------
# XREADGROUP / XACK / XPENDING


def test_xreadgroup_new_and_history(grp, raw):
    x = grp
    assert rg(x, "alice", "COUNT", "2", "STREAMS", "s", ">") == [
        ["s", [["1-0", ["f", "1"]], ["2-0", ["f", "2"]]]]]
    assert rg(x, "bob", "STREAMS", "s", ">") == [
        ["s", [["3-0", ["f", "3"]], ["4-0", ["f", "4"]], ["5-0", ["f", "5"]]]]]
    assert rg(x, "alice", "STREAMS", "s", ">") is None
    # History: the consumer's own pending entries after the ID.
    assert rg(x, "alice", "STREAMS", "s", "0") == [["s", [["1-0", ["f", "1"]], ["2-0", ["f", "2"]]]]]
    assert rg(x, "alice", "STREAMS", "s", "1-0") == [["s", [["2-0", ["f", "2"]]]]]
    assert rg(x, "carol", "STREAMS", "s", "0") == [["s", []]]
    # Delivery counts went up with the history reads.
    pending = {p[0]: p[3] for p in x.execute_command("XPENDING", "s", "g", "-", "+", "10", "alice")}
    assert pending == {"1-0": 2, "2-0": 3}
    # A deleted entry shows as [id, nil] in the history.
    x.execute_command("XDEL", "s", "1-0")
    assert rg(x, "alice", "STREAMS", "s", "0") == [["s", [["1-0", None], ["2-0", ["f", "2"]]]]]
    assert x.execute_command("XACK", "s", "g", "1-0", "2-0", "9-0") == 2
    assert x.execute_command("XACK", "s", "g", "1-0") == 0
    assert rg(x, "alice", "STREAMS", "s", "0") == [["s", []]]


def test_xreadgroup_noack(grp):
    x = grp
    assert len(rg(x, "a", "NOACK", "STREAMS", "s", ">")[0][1]) == 5
    assert x.execute_command("XPENDING", "s", "g") == [0, None, None, None]


def test_xreadgroup_errors(grp, raw, is_70):
    assert err(raw, "XREADGROUP", "GROUP", "nope", "c", "STREAMS", "s", ">") == (
        "NOGROUP No such key 's' or consumer group 'nope' in XREADGROUP with GROUP option")
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "missing", ">") == (
        "NOGROUP No such key 'missing' or consumer group 'g' in XREADGROUP with GROUP option")
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "$").startswith(
        "ERR The $ ID is meaningless in the context of XREADGROUP")
    assert err(raw, "XREADGROUP", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">") == (
        "ERR Missing GROUP option for XREADGROUP")
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s") == arity("xreadgroup")
    if not is_70:  # 7.2 names the command it was
        assert err(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "t", ">") == (
            "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' must be "
            "specified.")
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", "bad") == (
        "ERR Invalid stream ID specified as stream command argument")
    raw.execute("SET", "str", "x")
    assert err(raw, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "str", ">").startswith("WRONGTYPE")
    assert err(raw, "XACK", "s", "g", "bad") == "ERR Invalid stream ID specified as stream command argument"
    assert err(raw, "XACK", "s", "g") == arity("xack")
    assert err(raw, "XACK", "str", "g", "1-0").startswith("WRONGTYPE")


def test_xpending_forms(grp, raw):
    x = grp
    rg(x, "alice", "COUNT", "2", "STREAMS", "s", ">")
    rg(x, "bob", "COUNT", "1", "STREAMS", "s", ">")
    assert x.execute_command("XPENDING", "s", "g") == [3, "1-0", "3-0", [["alice", "2"], ["bob", "1"]]]
    ext = x.execute_command("XPENDING", "s", "g", "-", "+", "10")
    assert [(p[0], p[1], p[3]) for p in ext] == [("1-0", "alice", 1), ("2-0", "alice", 1), ("3-0", "bob", 1)]
    assert all(isinstance(p[2], int) and p[2] >= 0 for p in ext)
    assert [p[0] for p in x.execute_command("XPENDING", "s", "g", "(1-0", "+", "10")] == ["2-0", "3-0"]
    assert [p[0] for p in x.execute_command("XPENDING", "s", "g", "-", "+", "1")] == ["1-0"]
    assert [p[0] for p in x.execute_command("XPENDING", "s", "g", "-", "+", "10", "bob")] == ["3-0"]
    assert x.execute_command("XPENDING", "s", "g", "-", "+", "10", "nobody") == []
    assert x.execute_command("XPENDING", "s", "g", "-", "+", "-1") == []
    assert x.execute_command("XPENDING", "s", "g", "IDLE", "100000", "-", "+", "10") == []
    assert len(x.execute_command("XPENDING", "s", "g", "IDLE", "0", "-", "+", "10")) == 3
    assert err(raw, "XPENDING", "s", "g", "-") == "ERR syntax error"
    assert err(raw, "XPENDING", "s", "g", "IDLE", "5", "-", "+") == "ERR syntax error"
    assert err(raw, "XPENDING", "s", "g", "-", "+", "x") == "ERR value is not an integer or out of range"
    assert err(raw, "XPENDING", "s", "g", "IDLE", "x", "-", "+", "10") == (
        "ERR value is not an integer or out of range")
    assert err(raw, "XPENDING", "s", "g", "x", "+", "10") == (
        "ERR Invalid stream ID specified as stream command argument")
    assert err(raw, "XPENDING", "s", "nope") == "NOGROUP No such key 's' or consumer group 'nope'"
    assert err(raw, "XPENDING", "missing", "g") == "NOGROUP No such key 'missing' or consumer group 'g'"
    assert err(raw, "XPENDING", "s") == arity("xpending")


# ---------------------------------------------------------------------------------------------
# XCLAIM / XAUTOCLAIM


def test_xclaim(grp, raw):
    x = grp
    rg(x, "alice", "COUNT", "3", "STREAMS", "s", ">")
    time.sleep(0.02)
    assert x.execute_command("XCLAIM", "s", "g", "bob", "100000", "1-0") == []
    assert x.execute_command("XCLAIM", "s", "g", "bob", "10", "1-0", "9-0") == [["1-0", ["f", "1"]]]
    assert x.execute_command("XCLAIM", "s", "g", "bob", "0", "2-0", "JUSTID") == ["2-0"]
    pending = {p[0]: (p[1], p[3]) for p in x.execute_command("XPENDING", "s", "g", "-", "+", "10")}
    # JUSTID does not count a delivery.
    assert pending == {"1-0": ("bob", 2), "2-0": ("bob", 1), "3-0": ("alice", 1)}
    assert x.execute_command("XCLAIM", "s", "g", "carol", "0", "3-0", "RETRYCOUNT", "7", "IDLE", "5000") == [
        ["3-0", ["f", "3"]]]
    p = x.execute_command("XPENDING", "s", "g", "3-0", "3-0", "1")[0]
    assert p[1] == "carol" and p[3] == 7 and p[2] >= 5000
    # FORCE creates a PEL entry for a stream entry nobody had read.
    assert x.execute_command("XCLAIM", "s", "g", "dave", "0", "5-0", "FORCE", "JUSTID") == ["5-0"]
    assert x.execute_command("XCLAIM", "s", "g", "dave", "0", "4-0", "JUSTID") == []
    # LASTID moves the group forward.
    x.execute_command("XCLAIM", "s", "g", "dave", "0", "5-0", "LASTID", "4-0")
    assert as_dict(x.execute_command("XINFO", "GROUPS", "s")[0])["last-delivered-id"] == "4-0"
    # A deleted entry is dropped from the PEL instead of being claimed.
    x.execute_command("XDEL", "s", "1-0")
    assert x.execute_command("XCLAIM", "s", "g", "dave", "0", "1-0") == []
    assert "1-0" not in [p[0] for p in x.execute_command("XPENDING", "s", "g", "-", "+", "10")]
    # TIME in the future means now.
    x.execute_command("XCLAIM", "s", "g", "dave", "0", "2-0", "TIME", str(10**15))
    assert x.execute_command("XPENDING", "s", "g", "2-0", "2-0", "1")[0][2] < 1000
    assert err(raw, "XCLAIM", "s", "g", "c", "x", "1-0") == "ERR Invalid min-idle-time argument for XCLAIM"
    assert err(raw, "XCLAIM", "s", "g", "c", "0", "1-0", "FOO") == "ERR Unrecognized XCLAIM option 'FOO'"
    assert err(raw, "XCLAIM", "s", "g", "c", "0", "1-0", "IDLE", "x") == (
        "ERR Invalid IDLE option argument for XCLAIM")
    assert err(raw, "XCLAIM", "s", "g", "c", "0", "1-0", "TIME", "x") == (
        "ERR Invalid TIME option argument for XCLAIM")
    assert err(raw, "XCLAIM", "s", "g", "c", "0", "1-0", "RETRYCOUNT", "x") == (
        "ERR Invalid RETRYCOUNT option argument for XCLAIM")
    assert err(raw, "XCLAIM", "s", "g", "c", "0", "1-0", "LASTID", "x") == (
        "ERR Invalid stream ID specified as stream command argument")
    assert err(raw, "XCLAIM", "s", "nope", "c", "0", "1-0") == "NOGROUP No such key 's' or consumer group 'nope'"
    assert err(raw, "XCLAIM", "s", "g", "c", "0") == arity("xclaim")


def test_xautoclaim(grp, raw):
    x = grp
    rg(x, "alice", "STREAMS", "s", ">")
    reply = x.execute_command("XAUTOCLAIM", "s", "g", "bob", "0", "0", "COUNT", "2")
    assert reply == ["3-0", [["1-0", ["f", "1"]], ["2-0", ["f", "2"]]], []]
    reply = x.execute_command("XAUTOCLAIM", "s", "g", "bob", "0", reply[0], "JUSTID")
    assert reply == ["0-0", ["3-0", "4-0", "5-0"], []]
    counts = {p[0]: p[3] for p in x.execute_command("XPENDING", "s", "g", "-", "+", "10")}
    assert counts == {"1-0": 2, "2-0": 2, "3-0": 1, "4-0": 1, "5-0": 1}
    assert x.execute_command("XAUTOCLAIM", "s", "g", "carol", "100000", "0") == ["0-0", [], []]
    x.execute_command("XDEL", "s", "2-0", "4-0")
    assert x.execute_command("XAUTOCLAIM", "s", "g", "carol", "0", "0") == [
        "0-0", [["1-0", ["f", "1"]], ["3-0", ["f", "3"]], ["5-0", ["f", "5"]]], ["2-0", "4-0"]]
    assert x.execute_command("XPENDING", "s", "g")[0] == 3
    # COUNT bounds the PEL entries looked at to COUNT*10.
    for i in range(6, 40):
        x.execute_command("XADD", "s", f"{i}-0", "f", "v")
    rg(x, "alice", "STREAMS", "s", ">")
    reply = x.execute_command("XAUTOCLAIM", "s", "g", "dave", "100000", "0", "COUNT", "1")
    assert reply[1] == [] and reply[0] != "0-0"
    assert err(raw, "XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "0") == "ERR COUNT must be > 0"
    assert err(raw, "XAUTOCLAIM", "s", "g", "c", "0", "0", "COUNT", "x") == "ERR COUNT must be > 0"
    assert err(raw, "XAUTOCLAIM", "s", "g", "c", "x", "0") == "ERR Invalid min-idle-time argument for XAUTOCLAIM"
    assert err(raw, "XAUTOCLAIM", "s", "g", "c", "0", "x") == (
        "ERR Invalid stream ID specified as stream command argument")
    assert err(raw, "XAUTOCLAIM", "s", "g", "c", "0", "0", "FOO") == "ERR syntax error"
    assert err(raw, "XAUTOCLAIM", "s", "nope", "c", "0", "0") == (
        "NOGROUP No such key 's' or consumer group 'nope'")


# ---------------------------------------------------------------------------------------------
# XINFO


IDMP_FIELDS = ["idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added",
               "iids-duplicates"]


def test_xinfo_stream(grp, raw):
    x = grp
    info = as_dict(x.execute_command("XINFO", "STREAM", "s"))
    assert info["length"] == 5
    assert info["last-generated-id"] == "5-0"
    assert info["entries-added"] == 5
    assert info["recorded-first-entry-id"] == "1-0"
    assert info["groups"] == 1
    assert info["first-entry"] == ["1-0", ["f", "1"]]
    assert info["last-entry"] == ["5-0", ["f", "5"]]
    # Redis 8.6's IDMP fields come only with a stream that uses IDMP (test_streams_idmp.py):
    # this one answers in Redis 7.2's shape.
    assert list(info) == ["length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                          "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
                          "groups", "first-entry", "last-entry"]
    x.execute_command("XADD", "e", "MAXLEN", "0", "1-0", "f", "v")
    empty = as_dict(x.execute_command("XINFO", "STREAM", "e"))
    assert empty["first-entry"] is None and empty["last-entry"] is None
    assert err(raw, "XINFO", "STREAM", "missing") == "ERR no such key"
    assert err(raw, "XINFO", "STREAM", "s", "FOO") == (
        "ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.")
    assert err(raw, "XINFO", "STREAM") == arity("xinfo|stream")


def test_xinfo_stream_full(grp, is_70):
    x = grp
    rg(x, "alice", "COUNT", "2", "STREAMS", "s", ">")
    full = as_dict(x.execute_command("XINFO", "STREAM", "s", "FULL"))
    # Without IDMP state, Redis 7.2's 9 fields (unit/type/stream-cgroups counts them).
    assert list(full) == ["length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                          "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
                          "entries", "groups"]
    x.execute_command("XCFGSET", "s", "IDMP-DURATION", "50")
    full = as_dict(x.execute_command("XINFO", "STREAM", "s", "FULL"))
    assert list(full)[7:] == [*IDMP_FIELDS, "entries", "groups"]
    assert len(full["entries"]) == 5
    g = as_dict(full["groups"][0])
    # Redis 8.8 adds nacked-count (XNACK) as the last group field.
    assert list(g) == ["name", "last-delivered-id", "entries-read", "lag", "pel-count", "pending",
                       "consumers", "nacked-count"]
    assert g["nacked-count"] == 0
    assert g["entries-read"] == 2 and g["lag"] == 3 and g["pel-count"] == 2
    assert [p[0] for p in g["pending"]] == ["1-0", "2-0"]
    assert g["pending"][0][1] == "alice" and g["pending"][0][3] == 1
    c = as_dict(g["consumers"][0])
    assert c["name"] == "alice" and c["pel-count"] == 2
    if not is_70:  # 7.2 added active-time
        assert list(c) == ["name", "seen-time", "active-time", "pel-count", "pending"]
        assert abs(c["active-time"] - int(time.time() * 1000)) < 10000
    limited = as_dict(x.execute_command("XINFO", "STREAM", "s", "FULL", "COUNT", "1"))
    assert len(limited["entries"]) == 1
    assert len(as_dict(limited["groups"][0])["pending"]) == 1
    everything = as_dict(x.execute_command("XINFO", "STREAM", "s", "FULL", "COUNT", "0"))
    assert len(everything["entries"]) == 5


def test_xinfo_groups_and_consumers(grp, raw, is_70):
    x = grp
    x.execute_command("XGROUP", "CREATE", "s", "a-first", "$")
    rg(x, "alice", "COUNT", "2", "STREAMS", "s", ">")
    x.execute_command("XGROUP", "CREATECONSUMER", "s", "g", "idle-one")
    groups = [as_dict(g) for g in x.execute_command("XINFO", "GROUPS", "s")]
    assert [g["name"] for g in groups] == ["a-first", "g"]
    assert list(groups[1]) == ["name", "consumers", "pending", "last-delivered-id", "entries-read", "lag"]
    assert groups[1]["consumers"] == 2 and groups[1]["pending"] == 2
    assert groups[1]["entries-read"] == 2 and groups[1]["lag"] == 3
    consumers = [as_dict(c) for c in x.execute_command("XINFO", "CONSUMERS", "s", "g")]
    assert [c["name"] for c in consumers] == ["alice", "idle-one"]
    assert consumers[0]["pending"] == 2
    if not is_70:  # 7.2 added inactive
        assert list(consumers[0]) == ["name", "pending", "idle", "inactive"]
        assert consumers[0]["inactive"] >= 0
        assert consumers[1]["inactive"] == -1
    assert err(raw, "XINFO", "CONSUMERS", "s", "nope") == "NOGROUP No such consumer group 'nope' for key name 's'"
    assert err(raw, "XINFO", "GROUPS", "missing") == "ERR no such key"
    x.execute_command("XADD", "plain", "1-0", "f", "v")
    assert x.execute_command("XINFO", "GROUPS", "plain") == []


def test_lag_with_deletions_and_trimming(x):
    for i in range(1, 6):
        x.execute_command("XADD", "s", f"{i}-0", "f", "v")
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    lag = lambda: as_dict(x.execute_command("XINFO", "GROUPS", "s")[0])["lag"]  # noqa: E731
    entries_read = lambda: as_dict(x.execute_command("XINFO", "GROUPS", "s")[0])["entries-read"]  # noqa: E731
    assert lag() == 5
    rg(x, "c", "COUNT", "1", "STREAMS", "s", ">")
    assert lag() == 4 and entries_read() == 1
    x.execute_command("XDEL", "s", "3-0")
    assert lag() is None  # a tombstone after the group's position: unknown
    rg(x, "c", "STREAMS", "s", ">")
    assert lag() == 0 and entries_read() == 5
    x.execute_command("XADD", "s", "6-0", "f", "v")
    assert lag() == 1
    x.execute_command("XTRIM", "s", "MAXLEN", "0")
    x.execute_command("XGROUP", "CREATE", "s", "late", "0")
    groups = {as_dict(g)["name"]: as_dict(g) for g in x.execute_command("XINFO", "GROUPS", "s")}
    assert groups["late"]["lag"] == 0


# ---------------------------------------------------------------------------------------------
# Crash recovery


def test_crash_recovery_timeline(server, x):
    """A consumer reads without ACK and disconnects; another finds the entry with XPENDING, takes
    it over with XAUTOCLAIM; delivery counts and idle times are right; XACK clears it."""
    x.execute_command("XGROUP", "CREATE", "jobs", "workers", "$", "MKSTREAM")
    job = x.execute_command("XADD", "jobs", "*", "task", "resize", "image", "42")
    crashing = server.client(decode_responses=True)
    crashing.response_callbacks.clear()
    got = crashing.execute_command("XREADGROUP", "GROUP", "workers", "w1", "COUNT", "1", "STREAMS", "jobs", ">")
    assert got[0][1][0][0] == job
    crashing.close()  # crashed before XACK

    summary = x.execute_command("XPENDING", "jobs", "workers")
    assert summary == [1, job, job, [["w1", "1"]]]
    time.sleep(0.05)
    pending = x.execute_command("XPENDING", "jobs", "workers", "IDLE", "40", "-", "+", "10")
    assert len(pending) == 1
    entry_id, owner, idle, deliveries = pending[0]
    assert (entry_id, owner, deliveries) == (job, "w1", 1) and idle >= 40

    cursor, claimed, deleted = x.execute_command("XAUTOCLAIM", "jobs", "workers", "w2", "40", "0-0")
    assert cursor == "0-0" and deleted == []
    assert claimed == [[job, ["task", "resize", "image", "42"]]]
    entry_id, owner, idle, deliveries = x.execute_command("XPENDING", "jobs", "workers", "-", "+", "10")[0]
    assert owner == "w2" and deliveries == 2 and idle < 40
    # Nothing else idle enough to steal now.
    assert x.execute_command("XAUTOCLAIM", "jobs", "workers", "w3", "1000", "0-0") == ["0-0", [], []]
    consumers = {as_dict(c)["name"]: as_dict(c) for c in x.execute_command("XINFO", "CONSUMERS", "jobs", "workers")}
    assert consumers["w1"]["pending"] == 0 and consumers["w2"]["pending"] == 1

    assert x.execute_command("XACK", "jobs", "workers", job) == 1
    assert x.execute_command("XPENDING", "jobs", "workers") == [0, None, None, None]
    assert x.execute_command("XACK", "jobs", "workers", job) == 0

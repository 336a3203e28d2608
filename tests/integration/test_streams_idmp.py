"""Redis 8.6 idempotent production: XADD IDMP / IDMPAUTO, XCFGSET, the stream-idmp-* configs,
the XINFO STREAM fields, persistence and propagation (redis-semantics.md section 4).
"""

import pytest

from conftest import arity, err, wait_for

ID_RE = r"^\d+-\d+$"


@pytest.fixture
def x(server):
    c = server.client(decode_responses=True)
    c.response_callbacks.clear()
    c.flushall()
    yield c
    c.config_set("stream-idmp-duration", "100")
    c.config_set("stream-idmp-maxsize", "100")
    c.close()


def xadd(c, *args):
    return c.execute_command("XADD", "s", *args)


def info(c, key="s", *extra):
    flat = c.execute_command("XINFO", "STREAM", key, *extra)
    return dict(zip(flat[::2], flat[1::2]))


def is_id(v):
    import re
    return isinstance(v, str) and re.match(ID_RE, v) is not None


# ---------------------------------------------------------------------------------------------
# XADD IDMP


def test_idmp_syntax_errors(raw):
    e = lambda *a: err(raw, "XADD", "s", *a)  # noqa: E731
    assert e("IDMP", "p1", "*", "f", "v") == (
        "ERR Invalid stream ID specified as stream command argument")
    assert e("IDMP", "p1", "iid1", "1-1", "f", "v") == (
        "ERR IDMP/IDMPAUTO can be used only with auto-generated IDs")
    assert e("IDMP", "p1", "iid1", "5-*", "f", "v") == (
        "ERR IDMP/IDMPAUTO can be used only with auto-generated IDs")
    assert e("IDMP", "p1", "iid1", "IDMP", "p2", "iid2", "*", "f", "v") == (
        "ERR IDMP/IDMPAUTO specified multiple times")
    assert e("IDMPAUTO", "p1", "IDMP", "p2", "iid2", "*", "f", "v") == (
        "ERR IDMP/IDMPAUTO specified multiple times")
    assert e("IDMP", "p1", "iid1", "IDMPAUTO", "p2", "*", "f", "v") == (
        "ERR IDMP/IDMPAUTO specified multiple times")
    assert e("IDMPAUTO", "p1", "IDMPAUTO", "p2", "*", "f", "v") == (
        "ERR IDMP/IDMPAUTO specified multiple times")
    assert e("IDMP", "", "iid1", "*", "f", "v") == "ERR IDMP requires a non-empty producer ID"
    assert e("IDMP", "p1", "", "*", "f", "v") == "ERR IDMP requires a non-empty idempotent ID"
    assert e("IDMPAUTO", "", "*", "f", "v") == "ERR IDMPAUTO requires a non-empty producer ID"
    assert e("IDMPAUTO", "p1", "1-1", "f", "v") == (
        "ERR IDMP/IDMPAUTO can be used only with auto-generated IDs")
    assert e("IDMP", "p1", "iid1", "*", "f") == arity("xadd")
    assert raw.execute("EXISTS", "s") == b":0\r\n"


def test_idmp_any_iid_string(x):
    iids = ["1", "A", "B", "-", "+", "*", "^", "$", "#", "@", "?", "\\", "IDMP", "123-456",
            "9999999999999-9999999999999", "hello世界", "héllo", "line1\nline2", "tab\there",
            'quote"test', "with spaces", "long" * 100, "x" * 1000, "special!@#$%^&*()",
            "path/to/file", "key:value"]
    for iid in iids:
        assert is_id(xadd(x, "IDMP", "p1", iid, "*", "f", "v"))
    assert x.execute_command("XLEN", "s") == 26


def test_idmp_duplicate_returns_original(x):
    id1 = xadd(x, "IDMP", "p1", "payment-abc", "*", "amount", "100", "currency", "USD")
    id2 = xadd(x, "IDMP", "p1", "payment-abc", "*", "amount", "200", "currency", "EUR")
    assert id1 == id2
    assert x.execute_command("XRANGE", "s", "-", "+") == [
        [id1, ["amount", "100", "currency", "USD"]]]


def test_idmp_distinct_iids(x):
    ids = [xadd(x, "IDMP", "p1", f"req-{i}", "*", "user", u)
           for i, u in enumerate(["alice", "bob", "charlie"])]
    assert len(set(ids)) == 3
    assert x.execute_command("XLEN", "s") == 3


def test_idmp_binary_and_long(x, server):
    b = server.client()
    b.response_callbacks.clear()
    iid = b"\x00\x01\x02\xff"
    id1 = b.execute_command("XADD", "s", "IDMP", "p1", iid, "*", "field", "value")
    assert b.execute_command("XADD", "s", "IDMP", "p1", iid, "*", "field", "dup") == id1
    pid1, pid2 = b"\x00\x01\x02", b"\x03\x04\x05"
    a = b.execute_command("XADD", "s", "IDMP", pid1, "req-1", "*", "f", "v1")
    c = b.execute_command("XADD", "s", "IDMP", pid2, "req-1", "*", "f", "v2")
    assert a != c
    assert b.execute_command("XADD", "s", "IDMP", pid1, "req-1", "*", "f", "d") == a
    long_iid = "x" * 65536
    id3 = xadd(x, "IDMP", "p1", long_iid, "*", "field", "value")
    assert xadd(x, "IDMP", "p1", long_iid, "*", "field", "value") == id3
    long_pid = "a" * 1000
    id4 = xadd(x, "IDMP", long_pid, "req-1", "*", "f", "v")
    assert xadd(x, "IDMP", long_pid, "req-1", "*", "f", "v") == id4
    b.close()


def test_idmp_with_trim_and_nomkstream(x):
    id1 = xadd(x, "IDMP", "p1", "req-1", "MAXLEN", "~", "100", "*", "field", "value1")
    xadd(x, "IDMP", "p1", "req-2", "MAXLEN", "~", "100", "*", "field", "value2")
    assert xadd(x, "IDMP", "p1", "req-1", "MAXLEN", "~", "100", "*", "field", "v3") == id1
    assert x.execute_command("XLEN", "s") == 2
    x.delete("s")
    id1 = xadd(x, "IDMP", "p1", "req-1", "MINID", "~", "1000000000-0", "*", "f", "v")
    assert xadd(x, "IDMP", "p1", "req-1", "MINID", "~", "1000000000-0", "*", "f", "v") == id1
    x.delete("s")
    assert xadd(x, "NOMKSTREAM", "IDMP", "p1", "req-1", "*", "field", "value") is None
    assert x.exists("s") == 0
    xadd(x, "IDMP", "p1", "req-2", "*", "field", "value")
    assert is_id(xadd(x, "NOMKSTREAM", "IDMP", "p1", "req-3", "*", "field", "value"))
    assert x.execute_command("XLEN", "s") == 2
    x.delete("s")
    id1 = xadd(x, "IDMP", "p1", "req-1", "KEEPREF", "MAXLEN", "~", "1000", "LIMIT", "10", "*",
               "field1", "value1", "field2", "value2")
    assert xadd(x, "IDMP", "p1", "req-1", "KEEPREF", "MAXLEN", "~", "1000", "LIMIT", "10", "*",
                "field3", "value3") == id1
    assert x.execute_command("XRANGE", "s", "-", "+")[0][1] == ["field1", "value1", "field2",
                                                                "value2"]


def test_idmp_argument_orders(x):
    assert is_id(xadd(x, "IDMP", "p1", "req-1", "MAXLEN", "~", "100", "*", "f", "1"))
    assert is_id(xadd(x, "MAXLEN", "~", "100", "IDMP", "p1", "req-2", "*", "f", "2"))
    assert is_id(xadd(x, "NOMKSTREAM", "IDMP", "p1", "req-3", "MAXLEN", "~", "100", "*", "f", "3"))
    assert is_id(xadd(x, "KEEPREF", "IDMPAUTO", "p1", "*", "f", "4"))
    assert is_id(xadd(x, "IDMPAUTO", "p1", "KEEPREF", "*", "f", "5"))
    assert is_id(xadd(x, "ACKED", "IDMP", "p1", "req-6", "MAXLEN", "=", "100", "*", "f", "6"))
    assert x.execute_command("XLEN", "s") == 6


def test_duplicate_does_nothing_else(x, server):
    plain = server.client(decode_responses=True)
    x.config_set("notify-keyspace-events", "KEA")
    sub = server.client(decode_responses=True)
    ps = sub.pubsub()
    ps.psubscribe("__keyevent@0__:*")
    wait_for(lambda: ps.get_message(timeout=0.1))

    def events_until_marker(marker):
        """The events up to (not including) the `set` of `marker`."""
        x.execute_command("SET", marker, "1")
        seen = []

        def got_marker():
            m = ps.get_message(timeout=0.05)
            if m is not None and m["type"] == "pmessage":
                if m["channel"].endswith(":set") and m["data"] == marker:
                    return True
                seen.append(m["channel"].split(":", 1)[1])
            return False

        wait_for(got_marker)
        return seen

    try:
        for i in range(3):
            x.execute_command("XADD", "s", f"{i + 1}-0", "f", "v")
        id1 = xadd(x, "IDMP", "p1", "a", "*", "f", "v")
        assert events_until_marker("m1") == ["xadd"] * 4
        dirty = plain.info("persistence")["rdb_changes_since_last_save"]
        # A duplicate carrying a trim: no trim, no write, no event.
        assert xadd(x, "IDMP", "p1", "a", "MAXLEN", "1", "*", "f", "v") == id1
        assert x.execute_command("XLEN", "s") == 4
        assert plain.info("persistence")["rdb_changes_since_last_save"] == dirty
        assert events_until_marker("m2") == []
    finally:
        x.config_set("notify-keyspace-events", "")
        ps.close()
        sub.close()


def test_duplicate_of_deleted_entry_keeps_original_id(x):
    id1 = xadd(x, "IDMP", "p1", "a", "*", "f", "v")
    x.execute_command("XDEL", "s", id1)
    assert xadd(x, "IDMP", "p1", "a", "*", "f", "v") == id1
    assert x.execute_command("XLEN", "s") == 0


def test_idmp_producers_are_isolated(x):
    id1 = xadd(x, "IDMP", "producer1", "req-123", "*", "field", "from-p1")
    id2 = xadd(x, "IDMP", "producer2", "req-123", "*", "field", "from-p2")
    assert id1 != id2
    assert xadd(x, "IDMP", "producer1", "req-123", "*", "field", "dup") == id1
    assert xadd(x, "IDMP", "producer2", "req-123", "*", "field", "dup") == id2
    assert x.execute_command("XLEN", "s") == 2
    for i in range(50):
        xadd(x, "IDMP", f"producer-{i}", "request-1", "*", "field", f"value-{i}")
    i = info(x)
    assert (i["pids-tracked"], i["iids-tracked"]) == (52, 52)


def test_idmp_maxsize_per_producer(x):
    xadd(x, "IDMP", "p1", "init", "*", "field", "init")
    assert x.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", "3", "IDMP-DURATION", "60") == "OK"
    p1 = [xadd(x, "IDMP", "p1", f"req-{i}", "*", "f", "v") for i in (1, 2, 3)]
    p2 = [xadd(x, "IDMP", "p2", f"req-{i}", "*", "f", "v") for i in (1, 2, 3)]
    for i, want in enumerate(p1, 1):
        assert xadd(x, "IDMP", "p1", f"req-{i}", "*", "f", "dup") == want
    for i, want in enumerate(p2, 1):
        assert xadd(x, "IDMP", "p2", f"req-{i}", "*", "f", "dup") == want
    assert info(x)["pids-tracked"] == 2
    # A 4th iid evicts p1's oldest.
    xadd(x, "IDMP", "p1", "req-4", "*", "f", "v4")
    assert xadd(x, "IDMP", "p1", "req-1", "*", "f", "new") != p1[0]
    assert xadd(x, "IDMP", "p1", "req-3", "*", "f", "dup2") == p1[2]


def test_idmp_maxsize_wraparound(x):
    xadd(x, "IDMP", "p1", "init", "*", "field", "init")
    x.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", "8", "IDMP-DURATION", "60")
    ids = [xadd(x, "IDMP", "p1", f"req-{i}", "*", "field", f"v{i}") for i in range(1, 101)]
    for i in range(93, 101):
        assert xadd(x, "IDMP", "p1", f"req-{i}", "*", "field", "dup") == ids[i - 1]
    for i in range(1, 93):
        assert xadd(x, "IDMP", "p1", f"req-{i}", "*", "field", "new") != ids[i - 1]
    assert x.execute_command("XLEN", "s") == 193


def test_idmp_duration_expiry(x):
    xadd(x, "IDMP", "p1", "req-1", "*", "field", "value1")
    x.execute_command("XCFGSET", "s", "IDMP-DURATION", "1")
    id1 = xadd(x, "IDMP", "p1", "req-1", "*", "field", "value1")
    assert xadd(x, "IDMP", "p1", "req-1", "*", "field", "value2") == id1
    # Poll the tracked count rather than sleeping a fixed time.
    wait_for(lambda: info(x)["iids-tracked"] == 0, timeout=5, interval=0.05)
    assert info(x)["pids-tracked"] == 0
    id3 = xadd(x, "IDMP", "p1", "req-1", "*", "field", "value3")
    assert id3 != id1
    assert info(x)["iids-added"] == 3


# ---------------------------------------------------------------------------------------------
# IDMPAUTO


def test_idmpauto_dedupes_by_content(x):
    id1 = xadd(x, "IDMPAUTO", "p1", "*", "amount", "100", "currency", "USD")
    assert is_id(id1)
    assert xadd(x, "IDMPAUTO", "p1", "*", "amount", "100", "currency", "USD") == id1
    assert xadd(x, "IDMPAUTO", "p1", "*", "amount", "200", "currency", "USD") != id1
    assert x.execute_command("XLEN", "s") == 2


def test_idmpauto_order_independent(x):
    id1 = xadd(x, "IDMPAUTO", "p1", "*", "field1", "a", "field2", "b", "field3", "c")
    assert xadd(x, "IDMPAUTO", "p1", "*", "field2", "b", "field3", "c", "field1", "a") == id1
    assert xadd(x, "IDMPAUTO", "p1", "*", "field3", "c", "field1", "a", "field2", "b") == id1
    assert xadd(x, "IDMPAUTO", "p1", "*", "field3", "c", "field1", "x", "field2", "b") != id1
    assert x.execute_command("XLEN", "s") == 2


def test_idmpauto_content_variations(x):
    a = xadd(x, "IDMPAUTO", "p1", "*", "user", "alice", "action", "login")
    b = xadd(x, "IDMPAUTO", "p1", "*", "user", "bob", "action", "login")
    c = xadd(x, "IDMPAUTO", "p1", "*", "user", "alice", "action", "logout")
    assert len({a, b, c}) == 3
    # Field names matter; the field/value split matters; empty values are fine.
    assert xadd(x, "IDMPAUTO", "p1", "*", "field1", "value") != xadd(
        x, "IDMPAUTO", "p1", "*", "field2", "value")
    assert xadd(x, "IDMPAUTO", "p1", "*", "ab", "c") != xadd(x, "IDMPAUTO", "p1", "*", "a", "bc")
    e1 = xadd(x, "IDMPAUTO", "p1", "*", "field", "")
    assert xadd(x, "IDMPAUTO", "p1", "*", "field", "") == e1
    assert xadd(x, "IDMPAUTO", "p1", "*", "field", "value") != e1
    many = ["f%d" % i if j == 0 else "v%d" % i for i in range(8) for j in (0, 1)]
    m1 = xadd(x, "IDMPAUTO", "p1", "*", *many)
    assert xadd(x, "IDMPAUTO", "p1", "*", *many) == m1
    assert xadd(x, "IDMPAUTO", "p1", "*", *many[:-1], "different") != m1
    long_val = "x" * 10000
    l1 = xadd(x, "IDMPAUTO", "p1", "*", "data", long_val)
    assert xadd(x, "IDMPAUTO", "p1", "*", "data", long_val) == l1
    # Per producer.
    assert xadd(x, "IDMPAUTO", "p2", "*", "user", "alice", "action", "login") != a


def test_idmpauto_and_idmp_mixed(x):
    id1 = xadd(x, "IDMP", "p1", "explicit-iid", "*", "field", "v1")
    id2 = xadd(x, "IDMPAUTO", "p2", "*", "field", "v1")
    id3 = xadd(x, "IDMP", "p3", "another-iid", "*", "field", "v1")
    id4 = xadd(x, "IDMPAUTO", "p4", "*", "field", "v1")
    assert len({id1, id2, id3, id4}) == 4
    assert xadd(x, "IDMP", "p1", "explicit-iid", "*", "field", "dup") == id1
    assert xadd(x, "IDMPAUTO", "p2", "*", "field", "v1") == id2
    assert info(x)["pids-tracked"] == 4


def test_idmpauto_with_nomkstream_and_groups(x):
    assert xadd(x, "NOMKSTREAM", "IDMPAUTO", "p1", "*", "field", "value") is None
    xadd(x, "*", "initial", "value")
    x.execute_command("XGROUP", "CREATE", "s", "g", "0")
    id1 = xadd(x, "IDMPAUTO", "p1", "*", "event", "login", "user", "alice")
    xadd(x, "IDMPAUTO", "p1", "*", "event", "logout", "user", "bob")
    assert xadd(x, "IDMPAUTO", "p1", "*", "event", "login", "user", "alice") == id1
    read = x.execute_command("XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "s", ">")
    assert len(read[0][1]) == 3


# ---------------------------------------------------------------------------------------------
# Lost replies, transactions, several clients


def test_producer_retry_after_lost_replies(server, x):
    """The same IDMP pair sent three times, the first two replies lost: one entry."""
    cmd = ("XADD", "orders", "IDMP", "producer-7", "order-991", "*", "item", "book", "qty", "1")

    def added():
        return x.execute_command("XLEN", "orders") == 1

    def duplicates(n):
        return lambda: info(x, "orders")["iids-duplicates"] == n

    lost = server.raw()
    lost.send_command(*cmd)
    lost.close()  # the reply is never read
    wait_for(added)
    lost = server.raw()
    lost.send_command(*cmd)
    lost.close()
    wait_for(duplicates(1))
    conn = server.raw()
    reply = conn.execute(*cmd)
    conn.close()
    entries = x.execute_command("XRANGE", "orders", "-", "+")
    assert len(entries) == 1
    assert reply == b"$%d\r\n%s\r\n" % (len(entries[0][0]), entries[0][0].encode())
    assert entries[0][1] == ["item", "book", "qty", "1"]
    i = info(x, "orders")
    assert (i["iids-added"], i["iids-duplicates"]) == (1, 2)


def test_idmp_in_multi(x):
    with x.pipeline(transaction=True) as p:
        p.execute_command("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value1")
        p.execute_command("XADD", "s", "IDMP", "p1", "req-2", "*", "field", "value2")
        p.execute_command("XADD", "s", "IDMP", "p1", "req-1", "*", "field", "value3")
        p.execute_command("XADD", "s", "IDMP", "p2", "req-1", "*", "field", "value4")
        p.execute_command("XADD", "s", "IDMPAUTO", "p3", "*", "field", "value5")
        p.execute_command("XADD", "s", "IDMPAUTO", "p3", "*", "field", "value5")
        res = p.execute()
    assert res[0] == res[2] and res[4] == res[5]
    assert len({res[0], res[1], res[3], res[4]}) == 4
    assert x.execute_command("XLEN", "s") == 4
    assert info(x)["pids-tracked"] == 3


def test_idmp_across_clients(server, x):
    clients = [server.client(decode_responses=True) for _ in range(3)]
    got = [c.execute_command("XADD", "s", "IDMP", "p1", "concurrent-req", "*", "client", str(i))
           for i, c in enumerate(clients)]
    assert len(set(got)) == 1
    assert x.execute_command("XLEN", "s") == 1
    for c in clients:
        c.close()


# ---------------------------------------------------------------------------------------------
# XCFGSET and the configs


def test_xcfgset_sets_values(x):
    xadd(x, "IDMP", "p1", "req-1", "*", "field", "value")
    assert x.execute_command("XCFGSET", "s", "IDMP-DURATION", "5") == "OK"
    assert info(x)["idmp-duration"] == 5
    assert x.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", "5000") == "OK"
    assert info(x)["idmp-maxsize"] == 5000
    assert x.execute_command("XCFGSET", "s", "idmp-duration", "3", "idmp-maxsize", "10000") == "OK"
    i = info(x)
    assert (i["idmp-duration"], i["idmp-maxsize"]) == (3, 10000)
    full = info(x, "s", "FULL")
    assert (full["idmp-duration"], full["idmp-maxsize"]) == (3, 10000)
    x.execute_command("XCFGSET", "s", "IDMP-DURATION", "86400")
    x.execute_command("XCFGSET", "s", "IDMP-DURATION", "1", "IDMP-DURATION", "600")
    assert info(x)["idmp-duration"] == 600


def test_xcfgset_errors(x, raw):
    assert err(raw, "XCFGSET", "s", "IDMP-DURATION", "5") == "ERR no such key"
    assert err(raw, "XCFGSET") == arity("xcfgset")
    raw.execute("SET", "str", "v")
    assert err(raw, "XCFGSET", "str", "IDMP-DURATION", "5").startswith("WRONGTYPE")
    xadd(x, "IDMP", "p1", "req-1", "*", "field", "value")
    assert err(raw, "XCFGSET", "s") == "ERR At least one parameter must be specified"
    for args in (("IDMP-DURATION",), ("IDMP-MAXSIZE",), ("INVALID",), ("IDMP-DURATION", "5", "X")):
        assert err(raw, "XCFGSET", "s", *args) == "ERR syntax error"
    for opt in ("IDMP-DURATION", "IDMP-MAXSIZE"):
        for bad in ("A", "AAA", "*", "-", "+", "120-5", "3.14", "000000000", opt):
            assert err(raw, "XCFGSET", "s", opt, bad) == (
                "ERR value is not an integer or out of range")
        assert err(raw, "XCFGSET", "s", opt, opt, opt) == (
            "ERR value is not an integer or out of range")
    assert err(raw, "XCFGSET", "s", "IDMP-DURATION", "INVALID", "IDMP-MAXSIZE") == (
        "ERR value is not an integer or out of range")
    for bad in ("0", "-100", "86401"):
        assert err(raw, "XCFGSET", "s", "IDMP-DURATION", bad) == (
            "ERR IDMP-DURATION must be between 1 and 86400")
    for bad in ("0", "-50", "10001"):
        assert err(raw, "XCFGSET", "s", "IDMP-MAXSIZE", bad) == (
            "ERR IDMP-MAXSIZE must be between 1 and 10000")
    # Nothing changed by the failed calls.
    i = info(x)
    assert (i["idmp-duration"], i["idmp-maxsize"], i["iids-tracked"]) == (100, 100, 1)


def test_xcfgset_change_clears_history(x):
    id1 = xadd(x, "IDMP", "p1", "req-1", "*", "field", "value1", "data", "data1")
    xadd(x, "IDMP", "p2", "req-1", "*", "field", "value2")
    xadd(x, "IDMP", "p1", "req-1", "*", "field", "dup")
    x.execute_command("XCFGSET", "s", "IDMP-DURATION", "100")  # same value: kept
    assert xadd(x, "IDMP", "p1", "req-1", "*", "field", "dup") == id1
    x.execute_command("XCFGSET", "s", "IDMP-DURATION", "100", "IDMP-MAXSIZE", "100")
    i = info(x)
    assert (i["pids-tracked"], i["iids-tracked"], i["iids-added"], i["iids-duplicates"]) == (
        2, 2, 2, 2)
    x.execute_command("XCFGSET", "s", "IDMP-DURATION", "60")
    i = info(x)
    assert (i["pids-tracked"], i["iids-tracked"], i["iids-added"], i["iids-duplicates"]) == (
        0, 0, 2, 2)
    # Entries untouched; the pair is new again.
    assert x.execute_command("XRANGE", "s", "-", "+")[0][1] == ["field", "value1", "data", "data1"]
    new_id = xadd(x, "IDMP", "p1", "req-1", "*", "field", "new")
    assert new_id != id1
    assert xadd(x, "IDMP", "p1", "req-1", "*", "field", "dup") == new_id
    x.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", "5000")
    assert xadd(x, "IDMP", "p1", "req-1", "*", "field", "again") != new_id


def test_xcfgset_on_stream_without_idmp(x):
    xadd(x, "*", "field", "init")
    x.execute_command("XCFGSET", "s", "IDMP-DURATION", "10", "IDMP-MAXSIZE", "5000")
    id1 = xadd(x, "IDMP", "p1", "req-1", "*", "field", "value1")
    for _ in range(3):
        x.execute_command("XCFGSET", "s", "IDMP-DURATION", "10", "IDMP-MAXSIZE", "5000")
    assert xadd(x, "IDMP", "p1", "req-1", "*", "field", "dup") == id1


def test_counters(x):
    xadd(x, "*", "field", "value")
    # A stream without IDMP state answers in Redis 7.2's shape (no IDMP fields).
    assert "idmp-duration" not in info(x) and "idmp-duration" not in info(x, "s", "FULL")
    xadd(x, "IDMP", "p1", "init", "*", "field", "init")
    i = info(x)
    assert [i[k] for k in ("idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked",
                           "iids-added", "iids-duplicates")] == [100, 100, 1, 1, 1, 0]
    x.execute_command("XCFGSET", "s", "IDMP-MAXSIZE", "3")
    for args in (("req-1",), ("req-1",), ("req-2",), ("req-2",)):
        xadd(x, "IDMP", "p1", *args, "*", "field", "v")
    i = info(x)
    assert (i["iids-tracked"], i["iids-added"], i["iids-duplicates"]) == (2, 3, 2)
    xadd(x, "IDMP", "p1", "req-3", "*", "field", "v3")
    xadd(x, "IDMP", "p1", "req-4", "*", "field", "v4")
    i = info(x)
    assert (i["iids-tracked"], i["iids-added"], i["iids-duplicates"]) == (3, 5, 2)
    full = info(x, "s", "FULL")
    assert (full["iids-tracked"], full["iids-added"], full["pids-tracked"]) == (3, 5, 1)


def test_xinfo_field_order(x):
    xadd(x, "IDMP", "p1", "a", "*", "f", "v")
    plain = x.execute_command("XINFO", "STREAM", "s")[::2]
    assert plain == ["length", "radix-tree-keys", "radix-tree-nodes", "last-generated-id",
                     "max-deleted-entry-id", "entries-added", "recorded-first-entry-id",
                     "idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked",
                     "iids-added", "iids-duplicates", "groups", "first-entry", "last-entry"]
    full = x.execute_command("XINFO", "STREAM", "s", "FULL")[::2]
    assert full[:13] == plain[:13]
    assert full[13:] == ["entries", "groups"]


def test_xinfo_resp3_map(server):
    conn = server.raw()
    conn.execute("HELLO", "3")
    conn.execute("DEL", "r3")
    conn.execute("XADD", "r3", "IDMP", "p", "i", "*", "f", "v")
    reply = conn.execute("XINFO", "STREAM", "r3")
    assert reply.startswith(b"%16\r\n")
    assert b"$12\r\niids-tracked\r\n:1\r\n" in reply
    reply = conn.execute("XINFO", "STREAM", "r3", "FULL")
    assert reply.startswith(b"%15\r\n")
    conn.execute("DEL", "r3")
    conn.close()


def test_config_validation(x, raw, server):
    x = server.client(decode_responses=True)
    assert x.config_get("stream-idmp-*") == {"stream-idmp-duration": "100",
                                              "stream-idmp-maxsize": "100"}
    for name, bad in (("stream-idmp-duration", "86401"), ("stream-idmp-duration", "0"),
                      ("stream-idmp-duration", "-1"), ("stream-idmp-maxsize", "10001"),
                      ("stream-idmp-maxsize", "0"), ("stream-idmp-maxsize", "-100")):
        e = err(raw, "CONFIG", "SET", name, bad)
        assert "must be between" in e, e
    assert err(raw, "CONFIG", "SET", "stream-idmp-maxsize", "50000") == (
        "ERR CONFIG SET failed (possibly related to argument 'stream-idmp-maxsize') - argument "
        "must be between 1 and 10000 inclusive")
    for name, v in (("stream-idmp-duration", "86400"), ("stream-idmp-maxsize", "10000"),
                    ("stream-idmp-duration", "1"), ("stream-idmp-maxsize", "1")):
        assert x.config_set(name, v)
        assert x.config_get(name) == {name: v}
    # The defaults apply to streams that get IDMP state from now on.
    x.config_set("stream-idmp-duration", "7")
    x.execute_command("XADD", "s", "IDMP", "p", "a", "*", "f", "v")
    assert x.xinfo_stream("s")["idmp-duration"] == 7
    x.config_set("stream-idmp-duration", "100")
    x.config_set("stream-idmp-maxsize", "100")


# ---------------------------------------------------------------------------------------------
# XIDMPRECORD (internal: what XADD IDMP propagates as)


def test_xidmprecord(x, raw):
    assert err(raw, "XIDMPRECORD", "s", "p", "i") == arity("xidmprecord")
    assert err(raw, "XIDMPRECORD", "s", "p", "i", "1-0") == "ERR no such key"
    id1 = xadd(x, "*", "f", "v")
    assert err(raw, "XIDMPRECORD", "s", "p", "i", "bad") == (
        "ERR Invalid stream ID specified as stream command argument")
    assert err(raw, "XIDMPRECORD", "s", "", "i", id1).startswith("ERR")
    assert x.execute_command("XIDMPRECORD", "s", "p", "i", id1) == "OK"
    assert x.execute_command("XIDMPRECORD", "s", "p", "i", id1) == "OK"
    assert err(raw, "XIDMPRECORD", "s", "p", "i", id1 + "1").startswith("ERR")
    assert xadd(x, "IDMP", "p", "i", "*", "f", "v") == id1
    assert info(x)["iids-added"] == 1
    # The record's age is its entry ID's time: a pair recorded for an ID older than the
    # duration is already forgotten.
    assert x.execute_command("XIDMPRECORD", "s", "p", "old", "1-0") == "OK"
    assert info(x)["iids-tracked"] == 1


# ---------------------------------------------------------------------------------------------
# Persistence and copies


def snapshot(c, key="s"):
    i = info(c, key)
    keys = ("idmp-duration", "idmp-maxsize", "pids-tracked", "iids-tracked", "iids-added",
            "iids-duplicates")
    return c.execute_command("XRANGE", key, "-", "+"), [i[k] for k in keys]


def populate(c):
    ids = {}
    for p in ("p1", "p2", "p3"):
        xadd(c, "IDMP", p, "req-1", "*", "field", p)
    c.execute_command("XCFGSET", "s", "IDMP-DURATION", "75", "IDMP-MAXSIZE", "2")
    for i in range(1, 5):  # maxsize 2: req-1 and req-2 are evicted again
        ids[f"req-{i}"] = xadd(c, "IDMP", "p1", f"req-{i}", "*", "field", str(i))
    ids["auto"] = xadd(c, "IDMPAUTO", "pa", "*", "b", "2", "a", "1")
    assert xadd(c, "IDMP", "p1", "req-4", "*", "field", "dup") == ids["req-4"]
    return ids


def check_dedup(c, ids, key="s", full=True):
    n = c.execute_command("XLEN", key)
    assert c.execute_command("XADD", key, "IDMP", "p1", "req-4", "*", "f", "v") == ids["req-4"]
    assert c.execute_command("XADD", key, "IDMPAUTO", "pa", "*", "a", "1", "b", "2") == ids["auto"]
    assert c.execute_command("XLEN", key) == n
    if not full:
        return
    assert c.execute_command("XADD", key, "IDMP", "p1", "req-3", "*", "f", "v") == ids["req-3"]
    # An evicted pair is new again.
    assert c.execute_command("XADD", key, "IDMP", "p1", "req-2", "*", "f", "v") != ids["req-2"]
    assert c.execute_command("XLEN", key) == n + 1


def test_debug_reload_keeps_idmp(x):
    ids = populate(x)
    before = snapshot(x)
    assert before[1] == [75, 2, 2, 3, 8, 1]
    x.execute_command("DEBUG", "RELOAD")
    assert snapshot(x) == before
    check_dedup(x, ids)


def test_dump_restore_and_copy(x, server):
    ids = populate(x)
    before = snapshot(x)
    b = server.client()
    payload = b.execute_command("DUMP", "s")
    assert payload[0] == 120  # vireo's stream type with the Redis 8 sections
    b.execute_command("RESTORE", "t", "0", payload)
    b.close()
    assert snapshot(x, "t") == before
    check_dedup(x, ids, "t")
    assert x.execute_command("COPY", "s", "u") == 1
    assert snapshot(x, "u") == before
    check_dedup(x, ids, "u")
    assert snapshot(x) == before  # the copies are independent


def test_plain_stream_keeps_redis7_format(server, x):
    b = server.client()
    b.execute_command("XADD", "plain", "1-0", "f", "v")
    b.execute_command("XGROUP", "CREATE", "plain", "g", "0")
    assert b.execute_command("DUMP", "plain")[0] == 19  # RDB_TYPE_STREAM_LISTPACKS_2
    # IDMP settings equal to the defaults and no history: still Redis 7's format.
    b.execute_command("XCFGSET", "plain", "IDMP-DURATION", "100")
    assert b.execute_command("DUMP", "plain")[0] == 19
    b.execute_command("XCFGSET", "plain", "IDMP-DURATION", "50")
    assert b.execute_command("DUMP", "plain")[0] == 120
    b.close()


def test_restart_with_aof(server_factory, tmp_path):
    args = ["--dir", str(tmp_path), "--appendonly", "yes"]
    h = server_factory(args)
    c = h.client(decode_responses=True)
    c.response_callbacks.clear()
    ids = populate(c)
    with c.pipeline(transaction=True) as p:
        p.execute_command("XADD", "s", "IDMP", "p9", "m", "*", "f", "v")
        p.execute_command("XADD", "s", "IDMP", "p9", "m", "*", "f", "v")
        p.execute()
    before = snapshot(c)
    h.stop()
    h2 = server_factory(args)
    c2 = h2.client(decode_responses=True)
    c2.response_callbacks.clear()
    after = snapshot(c2)
    assert after[0] == before[0]
    # Everything but the duplicate counter replays (duplicates are not logged).
    assert after[1][:5] == before[1][:5]
    check_dedup(c2, ids)
    # A rewrite (RESTORE payloads) keeps the counters too.
    p2 = h2.client(decode_responses=True)
    rewrites = p2.info("persistence")["aof_rewrites"]
    c2.execute_command("BGREWRITEAOF")

    def rewritten():
        i = p2.info("persistence")
        return (not i["aof_rewrite_in_progress"] and not i["aof_rewrite_scheduled"]
                and i["aof_rewrites"] > rewrites)

    wait_for(rewritten, timeout=20)
    before = snapshot(c2)
    h2.stop()
    h3 = server_factory(args)
    c3 = h3.client(decode_responses=True)
    c3.response_callbacks.clear()
    assert snapshot(c3) == before
    check_dedup(c3, ids, full=False)


def test_restart_with_rdb(server_factory, tmp_path):
    args = ["--dir", str(tmp_path), "--appendonly", "no", "--save", ""]
    h = server_factory(args)
    c = h.client(decode_responses=True)
    c.response_callbacks.clear()
    ids = populate(c)
    before = snapshot(c)
    c.execute_command("SAVE")
    h.stop()
    h2 = server_factory(args)
    c2 = h2.client(decode_responses=True)
    c2.response_callbacks.clear()
    assert snapshot(c2) == before
    check_dedup(c2, ids)


def test_command_table_entries(x):
    info_ = x.execute_command("COMMAND", "INFO", "xcfgset")
    assert info_[0][0] == "xcfgset" and info_[0][1] == -2
    assert set(info_[0][2]) >= {"write", "fast"}

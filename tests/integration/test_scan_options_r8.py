"""Options later Redis / Valkey releases added to existing commands: HSCAN ... NOVALUES (Redis
7.4), ZSCAN ... NOSCORES (Valkey 8.0), XREAD's "+" ID (Redis 7.4: the stream's last entry)."""

from conftest import err


def _full_scan(r, cmd, key, *opts):
    cursor, out = 0, []
    while True:
        cursor, items = r.execute_command(cmd, key, cursor, *opts)
        out.extend(items)
        if int(cursor) == 0:
            return out


def test_hscan_novalues(plain):
    plain.hset("small", mapping={"f1": "v1", "f2": "v2"})
    cursor, items = plain.execute_command("HSCAN", "small", 0, "NOVALUES")
    assert cursor == "0" and sorted(items) == ["f1", "f2"]
    plain.hset("big", mapping={f"f{i}": f"v{i}" for i in range(1000)})  # hash table encoding
    fields = _full_scan(plain, "HSCAN", "big", "COUNT", 50, "NOVALUES", "MATCH", "f1*")
    assert sorted(set(fields)) == sorted(f"f{i}" for i in range(1000)
                                         if str(i).startswith("1"))
    assert _full_scan(plain, "HSCAN", "missing", "NOVALUES") == []


def test_zscan_noscores(plain):
    plain.zadd("small", {"a": 1, "b": 2})
    cursor, items = plain.execute_command("ZSCAN", "small", 0, "NOSCORES")
    assert cursor == "0" and sorted(items) == ["a", "b"]
    plain.zadd("big", {f"m{i}": i for i in range(1000)})  # skiplist encoding
    members = _full_scan(plain, "ZSCAN", "big", "NOSCORES", "COUNT", 100)
    assert sorted(set(members)) == sorted(f"m{i}" for i in range(1000))


def test_scan_option_errors(raw):
    raw.execute("HSET", "h", "f", "v")
    raw.execute("ZADD", "z", "1", "m")
    raw.execute("SADD", "s", "m")
    assert err(raw, "HSCAN", "h", 0, "NOSCORES") == "ERR syntax error"
    assert err(raw, "ZSCAN", "z", 0, "NOVALUES") == "ERR syntax error"
    assert err(raw, "SSCAN", "s", 0, "NOVALUES") == "ERR syntax error"


def test_resp3_shapes(raw):
    raw.execute("HELLO", "3")
    raw.execute("HSET", "h", "f", "v")
    raw.execute("ZADD", "z", "1", "m")
    assert raw.execute("HSCAN", "h", 0, "NOVALUES") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nf\r\n"
    assert raw.execute("ZSCAN", "z", 0, "NOSCORES") == b"*2\r\n$1\r\n0\r\n*1\r\n$1\r\nm\r\n"


def test_xread_plus_reads_the_last_entry(plain):
    assert plain.execute_command("XREAD", "STREAMS", "missing", "+") is None
    plain.xadd("s", {"a": "1"}, id="1-1")
    plain.xadd("s", {"a": "2"}, id="2-5")
    plain.xadd("t", {"b": "1"}, id="7-0")
    reply = plain.execute_command("XREAD", "COUNT", 10, "STREAMS", "s", "t", "+", "0")
    assert reply == [["s", [["2-5", ["a", "2"]]]], ["t", [["7-0", ["b", "1"]]]]]
    # The last entry deleted: "+" is the entry before it.
    plain.xdel("s", "2-5")
    reply = plain.execute_command("XREAD", "STREAMS", "s", "+")
    assert reply[0][0] == "s" and [e[0] for e in reply[0][1]] == ["1-1"]
    plain.xdel("s", "1-1")
    assert plain.execute_command("XREAD", "STREAMS", "s", "+") is None

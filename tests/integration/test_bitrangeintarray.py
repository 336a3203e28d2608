"""BITRANGEINTARRAY (Redis 8.12): the bit offsets of the set (ZEROS: clear) bits in a BITCOUNT
style range, ascending, LIMIT count of them at most."""

from conftest import call_error, err


def setbits(r, key, *offsets):
    for o in offsets:
        r.setbit(key, o, 1)


def test_offsets_in_byte_and_bit_ranges(r):
    setbits(r, "b", 3, 9, 20)
    assert r.execute_command("BITRANGEINTARRAY", "b", 0, -1) == [3, 9, 20]
    assert r.execute_command("BITRANGEINTARRAY", "b", 1, 1) == [9]
    assert r.execute_command("BITRANGEINTARRAY", "b", 1, 1, "BYTE") == [9]
    assert r.execute_command("BITRANGEINTARRAY", "b", 0, 10, "BIT") == [3, 9]
    assert r.execute_command("BITRANGEINTARRAY", "b", -1, -1) == [20]
    assert r.execute_command("BITRANGEINTARRAY", "b", -4, -1, "BIT") == [20]
    assert r.execute_command("BITRANGEINTARRAY", "b", 2, 1) == []
    assert r.execute_command("BITRANGEINTARRAY", "b", -1, -2) == []
    assert r.execute_command("BITRANGEINTARRAY", "b", 5, 100) == []
    assert r.execute_command("BITRANGEINTARRAY", "missing", 0, -1) == []


def test_limit_and_zeros(r):
    setbits(r, "b", 3, 9, 20)
    assert r.execute_command("BITRANGEINTARRAY", "b", 0, -1, "LIMIT", 2) == [3, 9]
    assert r.execute_command("BITRANGEINTARRAY", "b", 0, -1, "LIMIT", 0) == [3, 9, 20]
    assert r.execute_command("BITRANGEINTARRAY", "b", 0, 0, "ZEROS") == [0, 1, 2, 4, 5, 6, 7]
    assert r.execute_command("BITRANGEINTARRAY", "b", 0, 15, "BIT", "ZEROS", "LIMIT", 3) == \
        [0, 1, 2]
    r.set("full", b"\xff\xff")
    assert r.execute_command("BITRANGEINTARRAY", "full", 0, -1, "ZEROS") == []
    assert len(r.execute_command("BITRANGEINTARRAY", "full", 0, -1)) == 16


def test_errors(r, raw):
    assert err(raw, "BITRANGEINTARRAY", "b", 0) == \
        "ERR wrong number of arguments for 'bitrangeintarray' command"
    assert err(raw, "BITRANGEINTARRAY", "b", "x", 1) == "ERR value is not an integer or out of range"
    assert err(raw, "BITRANGEINTARRAY", "b", 0, 1, "LIMIT", -1) == "ERR LIMIT can't be negative"
    assert err(raw, "BITRANGEINTARRAY", "b", 0, 1, "LIMIT") == "ERR syntax error"
    assert err(raw, "BITRANGEINTARRAY", "b", 0, 1, "FOO") == "ERR syntax error"
    r.rpush("l", "a")
    assert call_error(r, "BITRANGEINTARRAY", "l", 0, -1).startswith("WRONGTYPE")


def test_resp3_is_an_array_of_integers(raw):
    raw.execute("HELLO", "3")
    raw.execute("SETBIT", "b", "1", "1")
    assert raw.execute("BITRANGEINTARRAY", "b", "0", "-1") == b"*1\r\n:1\r\n"
    assert raw.execute("BITRANGEINTARRAY", "nokey", "0", "-1") == b"*0\r\n"

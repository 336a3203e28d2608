"""RDB files and RESTORE payloads in the encodings older Redis versions wrote (ziplist, zipmap,
intset, quicklist 1): converted on load as Redis 7.2 converts them, validated, and refused with
Redis's error and log line when corrupt. Payloads marked "Redis 7.2 suite" are copied from
Redis's tests/integration/corrupt-dump.tcl (test data)."""

import struct

import pytest
from conftest import err, start_server, wait_for
from rdb_helpers import crc64, dump_payload, intset, listpack, rdb_len, rdb_str

# ---- builders for the old encodings ------------------------------------------------------------


def _zl_entry(prev: int, value) -> bytes:
    prevlen = bytes([prev]) if prev < 254 else b"\xfe" + struct.pack("<I", prev)
    if isinstance(value, int):
        if 0 <= value <= 12:
            enc = bytes([0xF1 + value])
        else:
            enc = b"\xc0" + struct.pack("<h", value)  # int16
    else:
        assert len(value) < 64
        enc = bytes([len(value)]) + value
    return prevlen + enc


def ziplist(elems) -> bytes:
    """A ziplist (Redis <= 6.2) of short strings and small integers."""
    body, prev, tail = b"", 0, 10
    for e in elems:
        entry = _zl_entry(prev, e)
        tail = 10 + len(body)
        body += entry
        prev = len(entry)
    total = 10 + len(body) + 1
    return struct.pack("<IIH", total, tail, len(elems)) + body + b"\xff"


def zipmap(pairs) -> bytes:
    """A zipmap (Redis <= 2.4 hashes): count, then len/field len/free/value pairs."""
    out = bytes([len(pairs)])
    for f, v in pairs:
        out += bytes([len(f)]) + f + bytes([len(v)]) + b"\x00" + v
    return out + b"\xff"


def restore(r, raw, payload, key="k", *extra):
    r.delete(key)
    return raw.execute("RESTORE", key, "0", payload, *extra)


def verbose_server():
    # Redis logs why a payload was refused at verbose level.
    return start_server(["--loglevel", "verbose"])


# ---- conversions --------------------------------------------------------------------------------

VALID = {
    "list ziplist": (10, rdb_str(ziplist([b"a", 7, b"b", 300])), "list"),
    "quicklist 1": (14, rdb_len(2) + rdb_str(ziplist([b"a", 7])) + rdb_str(ziplist([b"b", 300])),
                    "list"),
    "hash ziplist": (13, rdb_str(ziplist([b"f1", b"v1", b"f2", 2])), "hash"),
    "hash zipmap": (9, rdb_str(zipmap([(b"f1", b"v1"), (b"f2", b"2")])), "hash"),
    "zset ziplist": (12, rdb_str(ziplist([b"a", 1, b"b", b"2.5"])), "zset"),
    "set intset": (11, rdb_str(intset([1, 5, 300])), "set"),
}


def contents(r, kind):
    if kind == "list":
        return r.lrange("k", 0, -1)
    if kind == "hash":
        return r.hgetall("k")
    if kind == "zset":
        return r.zrange("k", 0, -1, withscores=True)
    return sorted(r.smembers("k"))


EXPECTED = {
    "list ziplist": [b"a", b"7", b"b", b"300"],
    "quicklist 1": [b"a", b"7", b"b", b"300"],
    "hash ziplist": {b"f1": b"v1", b"f2": b"2"},
    "hash zipmap": {b"f1": b"v1", b"f2": b"2"},
    "zset ziplist": [(b"a", 1.0), (b"b", 2.5)],
    "set intset": [b"1", b"300", b"5"],
}


@pytest.mark.parametrize("name", sorted(VALID))
def test_restore_converts_old_encodings(r, raw, name):
    type_byte, body, kind = VALID[name]
    payload = dump_payload(bytes([type_byte]) + body, version=9)
    for mode in ("no", "yes", "clients"):
        r.config_set("sanitize-dump-payload", mode)
        assert restore(r, raw, payload) == b"+OK\r\n", (name, mode)
        assert r.type("k").decode() == kind
        assert contents(r, kind) == EXPECTED[name], (name, mode)
    # Compact encodings come out as the listpack/intset forms of today.
    assert r.object("encoding", "k") in (b"listpack", b"intset", b"quicklist")


def test_old_encodings_over_the_limits_convert_to_big_encodings(r, raw):
    r.config_set("hash-max-listpack-entries", 1)
    r.config_set("zset-max-listpack-entries", 1)
    for type_byte, body, enc in [
        (13, rdb_str(ziplist([b"f1", b"v1", b"f2", b"v2"])), b"hashtable"),
        (9, rdb_str(zipmap([(b"f1", b"v1"), (b"f2", b"v2")])), b"hashtable"),
        (12, rdb_str(ziplist([b"a", 1, b"b", 2])), b"skiplist"),
    ]:
        assert restore(r, raw, dump_payload(bytes([type_byte]) + body, version=9)) == b"+OK\r\n"
        assert r.object("encoding", "k") == enc


def test_rdb_file_in_old_encodings_loads(tmp_path):
    keys = [
        (b"l", 10, rdb_str(ziplist([b"x", b"y"]))),
        (b"q", 14, rdb_len(1) + rdb_str(ziplist([b"x", 3]))),
        (b"h", 13, rdb_str(ziplist([b"f", b"v"]))),
        (b"m", 9, rdb_str(zipmap([(b"f", b"v")]))),
        (b"z", 12, rdb_str(ziplist([b"m", 4]))),
        (b"s", 11, rdb_str(intset([2, 4]))),
    ]
    data = b"REDIS0009\xfe\x00"
    for key, type_byte, body in keys:
        data += bytes([type_byte]) + rdb_str(key) + body
    data += b"\xff"
    (tmp_path / "dump.rdb").write_bytes(data + struct.pack("<Q", crc64(data)))
    h = start_server(["--dir", str(tmp_path)])
    try:
        r = h.client()
        assert r.dbsize() == 6
        assert r.lrange("l", 0, -1) == [b"x", b"y"]
        assert r.lrange("q", 0, -1) == [b"x", b"3"]
        assert r.hgetall("h") == {b"f": b"v"}
        assert r.hgetall("m") == {b"f": b"v"}
        assert r.zrange("z", 0, -1, withscores=True) == [(b"m", 4.0)]
        assert r.smembers("s") == {b"2", b"4"}
    finally:
        h.stop()
        h.cleanup()


# ---- corrupt payloads ---------------------------------------------------------------------------

# (name, sanitize-dump-payload, skip checksum, payload, the reason Redis logs or None)
CORRUPT = [
    # Redis 7.2 suite: "#7445 - with sanitize" (quicklist 1, a ziplist entry running past the end).
    ("7445", "yes", False,
     b"\x0E\x01\x1D\x1D\x00\x00\x00\x16\x00\x00\x00\x03\x00\x00\x04\x43\x43\x43\x43\x06\x04\x42\x42"
     b"\x42\x42\x06\x3F\x41\x41\x41\x41\xFF\x09\x00\x88\xA5\xCA\xA8\xC5\x41\xF4\x35",
     "Ziplist integrity check failed."),
    # Redis 7.2 suite: "hash with valid zip list header, invalid entry len".
    ("hash ziplist entry len", "no", False,
     b"\x0D\x1B\x1B\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00\x04\x14\x63"
     b"\x00\x04\x02\x64\x00\xFF\x09\x00\xD9\x10\x54\x92\x15\xF5\x5F\x52",
     "Hash ziplist integrity check failed."),
    # Redis 7.2 suite: "invalid zlbytes header".
    ("zlbytes", "no", False,
     b"\x0D\x1B\x25\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00\x04\x02\x63"
     b"\x00\x04\x02\x64\x00\xFF\x09\x00\xB7\xF7\x6E\x9F\x43\x43\x14\xC6",
     "Hash ziplist integrity check failed."),
    # Redis 7.2 suite: "valid zipped hash header, dup records".
    ("hash ziplist dup", "no", False,
     b"\x0D\x1B\x1B\x00\x00\x00\x16\x00\x00\x00\x04\x00\x00\x02\x61\x00\x04\x02\x62\x00\x04\x02\x61"
     b"\x00\x04\x02\x64\x00\xFF\x09\x00\xA1\x98\x36\x78\xCC\x8E\x93\x2E",
     "Hash ziplist integrity check failed."),
    # Redis 7.2 suite: "quicklist big ziplist prev len" (ziplist nodes are always checked deeply).
    ("quicklist prev len", "no", False,
     b"\x0E\x01\x13\x13\x00\x00\x00\x0E\x00\x00\x00\x02\x00\x00\x02\x61\x00\x0E\x02\x62\x00\xFF\x09"
     b"\x00\x49\x97\x30\xB2\x0D\xA1\xED\xAA",
     "Ziplist integrity check failed."),
    # Redis 7.2 suite: "hash empty zipmap" (its checksum is not valid: the suite skips the check).
    ("empty zipmap", "no", True,
     b"\x09\x02\x00\xFF\x09\x00\xC0\xF1\xB8\x67\x4C\x16\xAC\xE3",
     "Zipmap integrity check failed."),
    # Redis 7.2 suite: "fuzzer findings - empty set listpack" (header count 0 over 10 entries).
    ("set listpack count 0", "no", True,
     b"\x14\x25\x25\x00\x00\x00\x00\x00\x02\x01\x82\x5F\x37\x03\x06\x01\x82\x5F\x35\x03\x82\x5F\x33"
     b"\x03\x00\x01\x82\x5F\x31\x03\x82\x5F\x39\x03\x04\xA9\x08\x01\xFF\x0B\x00\xA3\x26\x49\xB4\x86"
     b"\xB0\x0F\x41",
     None),  # Redis takes the header's count: an empty key, refused without a log line
]


@pytest.mark.parametrize("case", CORRUPT, ids=[c[0] for c in CORRUPT])
def test_corrupt_old_encoding_is_bad_data_format_and_logged(case):
    name, mode, skip_crc, payload, reason = case
    h = verbose_server()
    try:
        r = h.client()
        r.config_set("sanitize-dump-payload", mode)
        if skip_crc:
            r.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1")
        with h.raw() as raw:
            assert err(raw, "RESTORE", "k", "0", payload) == "ERR Bad data format"
        assert r.exists("k") == 0
        if reason is not None:
            wait_for(lambda: "Internal error in RDB reading offset" in h.log_text()
                     and reason in h.log_text(), message=f"{name}: {reason} not logged")
        assert r.ping()
    finally:
        h.stop()
        h.cleanup()


def test_skip_checksum_validation(r, raw):
    payload = bytearray(dump_payload(b"\x00" + rdb_str(b"hello")))
    payload[-1] ^= 0xFF
    payload = bytes(payload)
    assert err(raw, "RESTORE", "k", "0", payload) == "ERR DUMP payload version or checksum are wrong"
    r.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1")
    assert restore(r, raw, payload) == b"+OK\r\n"
    assert r.get("k") == b"hello"
    r.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "0")
    assert err(raw, "RESTORE", "k2", "0", payload) == "ERR DUMP payload version or checksum are wrong"
    # A version newer than ours is refused whatever the checksum setting.
    r.execute_command("DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1")
    newer = dump_payload(b"\x00" + rdb_str(b"x"), version=99)
    assert err(raw, "RESTORE", "k3", "0", newer) == "ERR DUMP payload version or checksum are wrong"


def test_sanitize_clients_spares_skip_sanitize_payload_users(server):
    # A listpack whose header count is wrong: only deep sanitization notices.
    lp = bytearray(listpack([b"a", b"b"]))
    lp[4] = 7
    payload = dump_payload(b"\x14" + rdb_str(bytes(lp)))
    r = server.client()
    r.config_set("sanitize-dump-payload", "no")
    with server.raw() as raw:
        assert restore(r, raw, payload) == b"+OK\r\n"
    r.config_set("sanitize-dump-payload", "yes")
    with server.raw() as raw:
        assert err(raw, "RESTORE", "k", "0", payload, "REPLACE") == "ERR Bad data format"
    r.config_set("sanitize-dump-payload", "clients")
    with server.raw() as raw:
        assert err(raw, "RESTORE", "k", "0", payload, "REPLACE") == "ERR Bad data format"
    r.execute_command("ACL", "SETUSER", "trusted", "on", "nopass", "skip-sanitize-payload", "~*",
                      "+@all")
    with server.raw() as raw:
        assert raw.execute("AUTH", "trusted", "x") == b"+OK\r\n"
        assert raw.execute("RESTORE", "k", "0", payload, "REPLACE") == b"+OK\r\n"
    assert sorted(r.smembers("k")) == [b"a", b"b"]


# ---- RDB files at start-up ----------------------------------------------------------------------


def test_rdb_file_with_empty_keys_skips_them(tmp_path):
    # Older Redis versions could save empty containers; Redis 7.2 skips them with a log line.
    keys = [
        (b"set", 2, rdb_len(0)),
        (b"list_ziplist", 10, rdb_str(ziplist([]))),
        (b"list_quicklist", 14, rdb_len(0)),
        (b"hash", 4, rdb_len(0)),
        (b"zset", 3, rdb_len(0)),
    ]
    data = b"REDIS0009\xfe\x00"
    for key, type_byte, body in keys:
        data += bytes([type_byte]) + rdb_str(key) + body
    data += b"\x00" + rdb_str(b"kept") + rdb_str(b"v") + b"\xff"
    (tmp_path / "dump.rdb").write_bytes(data + struct.pack("<Q", crc64(data)))
    h = start_server(["--dir", str(tmp_path), "--loglevel", "verbose"])
    try:
        r = h.client()
        assert r.keys("*") == [b"kept"]
        log = h.log_text(tail=20000)
        for key, _, _ in keys:
            assert f"rdbLoadObject skipping empty key: {key.decode()}" in log
        assert "keys loaded: 1, keys expired: 0, empty keys skipped: 5." in log
    finally:
        h.stop()
        h.cleanup()


def test_corrupt_rdb_file_terminates_with_redis_log_lines(tmp_path):
    bad = ziplist([b"a", b"b"])
    bad = bad[:13] + b"\x09" + bad[14:]  # the second entry's previous-length is wrong
    data = b"REDIS0009\xfe\x00\x0a" + rdb_str(b"k") + rdb_str(bad) + b"\xff"
    (tmp_path / "dump.rdb").write_bytes(data + struct.pack("<Q", crc64(data)))
    with pytest.raises(RuntimeError) as info:
        start_server(["--dir", str(tmp_path)])
    text = str(info.value)
    assert "exited with status 1 during startup" in text
    assert "List ziplist integrity check failed." in text
    assert "Terminating server after rdb file reading failure." in text


def test_rdb_file_with_a_wrong_checksum(tmp_path):
    data = b"REDIS0011\xfe\x00\x00" + rdb_str(b"k") + rdb_str(b"v") + b"\xff"
    (tmp_path / "dump.rdb").write_bytes(data + b"foobar00")
    with pytest.raises(RuntimeError) as info:
        start_server(["--dir", str(tmp_path)])
    text = str(info.value)
    assert "Wrong RDB checksum expected: (" in text
    assert "-> RDB CRC error" in text
    # rdbchecksum no loads it without looking at the trailer, as Redis does.
    h = start_server(["--dir", str(tmp_path), "--rdbchecksum", "no"])
    try:
        assert h.client().get("k") == b"v"
    finally:
        h.stop()
        h.cleanup()


# ---- streams in the forms Redis 6.2 / 7.0 wrote -------------------------------------------------

# Redis 7.2 suite (unit/type/stream-cgroups.tcl): a type 15 (STREAM_LISTPACKS, Redis <= 6.2)
# payload of a stream with two groups, trimmed to two entries.
STREAM_LISTPACKS_1 = (
    b"\x0F\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\xC3"
    b"\x40\x4A\x40\x57\x16\x57\x00\x00\x00\x23\x00\x02\x01\x04\x01\x01\x01\x84\x64\x61"
    b"\x74\x61\x05\x00\x01\x03\x01\x00\x20\x01\x03\x81\x61\x02\x04\x20\x0A\x00\x01\x40"
    b"\x0A\x00\x62\x60\x0A\x00\x02\x40\x0A\x00\x63\x60\x0A\x40\x22\x01\x81\x64\x20\x0A"
    b"\x40\x39\x20\x0A\x00\x65\x60\x0A\x00\x05\x40\x0A\x00\x66\x20\x0A\x00\xFF\x02\x06"
    b"\x00\x02\x02\x67\x31\x05\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00"
    b"\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
    b"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01\x00\x00\x01\x00\x00"
    b"\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x3E\xF7\x83\x43\x7A\x01"
    b"\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00\x00\x3E"
    b"\xF7\x83\x43\x7A\x01\x00\x00\x01\x01\x03\x63\x31\x31\x3E\xF7\x83\x43\x7A\x01\x00"
    b"\x00\x04\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    b"\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    b"\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00"
    b"\x00\x00\x00\x00\x00\x00\x02\x67\x32\x00\x00\x00\x00\x09\x00\x3D\x52\xEF\x68\x67"
    b"\x52\x1D\xFA"
)
# Redis 7.2 suite: a type 19 (STREAM_LISTPACKS_2, Redis 7.0) payload, one group, one consumer.
STREAM_LISTPACKS_2 = (
    b"\x13\x01\x10\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x1D"
    b"\x1D\x00\x00\x00\x0A\x00\x01\x01\x00\x01\x01\x01\x81\x66\x02\x00\x01\x02\x01\x00"
    b"\x01\x00\x01\x81\x76\x02\x04\x01\xFF\x01\x01\x01\x01\x01\x00\x00\x01\x01\x01\x67"
    b"\x01\x01\x01\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01"
    b"\xF5\x5A\x71\xC7\x84\x01\x00\x00\x01\x01\x05\x41\x6C\x69\x63\x65\xF5\x5A\x71\xC7"
    b"\x84\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00"
    b"\x01\x0B\x00\xA7\xA9\x14\xA5\x27\xFF\x9B\x9B"
)


def test_restore_old_stream_forms(r, raw):
    assert restore(r, raw, STREAM_LISTPACKS_1, "x") == b"+OK\r\n"
    info = r.xinfo_stream("x", full=True)
    # Fields the old form lacks are derived as Redis 7.2 derives them.
    assert info["entries-added"] == 2
    assert info["max-deleted-entry-id"] == b"0-0"
    g1, g2 = info["groups"]
    assert (g1["entries-read"], g1["lag"]) == (1, 1)
    assert (g2["entries-read"], g2["lag"]) == (0, 2)
    assert restore(r, raw, STREAM_LISTPACKS_2, "x") == b"+OK\r\n"
    flat = r.xinfo_stream("x", full=True)["groups"][0]["consumers"][0]
    consumer = dict(zip(flat[::2], flat[1::2]))  # redis-py leaves consumers as flat lists
    # Redis 7.0 had no active-time: it is taken from seen-time.
    assert consumer[b"seen-time"] == consumer[b"active-time"] == 1669793405685

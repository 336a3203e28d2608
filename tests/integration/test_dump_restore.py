"""DUMP / RESTORE: round trips of every type and encoding, payloads exchanged with redis-server
in both directions, options and Redis's exact errors."""

import time

import pytest
import redis
from conftest import arity, err
from rdb_helpers import REDIS_SERVER, RedisServer, fill, snapshot
from test_rdb import available_types


def copy_all(src, dst, keys, replace=False):
    for k in keys:
        payload = src.dump(k)
        assert payload is not None, k
        ttl = max(src.pttl(k), 0)
        args = ["RESTORE", k, ttl, payload] + (["REPLACE"] if replace else [])
        assert dst.execute_command(*args) == b"OK", k


def test_round_trip_every_type(r):
    keys = fill(r, available_types(r))
    before = snapshot(r, keys)
    encodings = {k: r.object("encoding", k) for k in keys}
    copy_all(r, r, keys, replace=True)
    assert snapshot(r, keys) == before
    for k in keys:
        assert r.object("encoding", k) == encodings[k], k


def test_dump_missing_key(r):
    assert r.dump("nope") is None


def test_restore_errors(r, raw):
    r.set("src", "value")
    payload = r.dump("src")
    assert err(raw, "RESTORE", "src", "0", payload) == "BUSYKEY Target key name already exists."
    assert err(raw, "RESTORE", "new", "0", b"garbage") == "ERR DUMP payload version or checksum are wrong"
    bad = bytearray(payload)
    bad[0] ^= 1
    assert err(raw, "RESTORE", "new", "0", bytes(bad)) == "ERR DUMP payload version or checksum are wrong"
    assert err(raw, "RESTORE", "new", "-1", payload) == "ERR Invalid TTL value, must be >= 0"
    assert err(raw, "RESTORE", "new", "abc", payload) == "ERR value is not an integer or out of range"
    assert err(raw, "RESTORE", "new", "0", payload, "IDLETIME", "-1") == \
        "ERR Invalid IDLETIME value, must be >= 0"
    assert err(raw, "RESTORE", "new", "0", payload, "FREQ", "256") == \
        "ERR Invalid FREQ value, must be >= 0 and <= 255"
    assert err(raw, "RESTORE", "new", "0", payload, "FREQ", "x") == \
        "ERR value is not an integer or out of range"
    assert err(raw, "RESTORE", "new", "0", payload, "IDLETIME", "1", "FREQ", "1") == "ERR syntax error"
    assert err(raw, "RESTORE", "new", "0", payload, "BOGUS") == "ERR syntax error"
    assert err(raw, "RESTORE", "new", "0") == arity("restore")
    assert err(raw, "DUMP") == arity("dump")
    # Options are checked before the key's existence, the key before the TTL.
    assert err(raw, "RESTORE", "src", "-1", payload, "BOGUS") == "ERR syntax error"
    assert err(raw, "RESTORE", "src", "-1", payload) == "BUSYKEY Target key name already exists."


def test_restore_ttl_and_options(r):
    r.set("src", "value")
    payload = r.dump("src")
    assert r.restore("a", 10_000, payload)
    assert 9_000 < r.pttl("a") <= 10_000
    when = int(time.time() * 1000) + 50_000
    assert r.restore("b", when, payload, absttl=True)
    assert 45_000 < r.pttl("b") <= 50_000
    # An absolute time in the past: OK, but no key.
    assert r.restore("c", 1000, payload, absttl=True)
    assert r.exists("c") == 0
    r.set("d", "old")
    assert r.restore("d", 1000, payload, replace=True, absttl=True)
    assert r.exists("d") == 0
    assert r.restore("e", 0, payload, idletime=100)
    assert r.object("idletime", "e") is not None
    assert r.restore("f", 0, payload, frequency=5)
    assert r.restore("src", 0, r.dump("a"), replace=True)
    assert r.get("src") == b"value" and r.pttl("src") == -1


def test_restore_wrong_payload_type_byte(r, raw):
    # A valid footer around an unknown type byte is "Bad data format".
    import struct

    def crc64(data):
        poly = 0x95AC9329AC4BC9B5
        crc = 0
        for b in data:
            crc ^= b
            for _ in range(8):
                crc = (crc >> 1) ^ poly if crc & 1 else crc >> 1
        return crc

    body = b"\x63\x00" + struct.pack("<H", 10)
    payload = body + struct.pack("<Q", crc64(body))
    assert err(raw, "RESTORE", "k", "0", payload) == "ERR Bad data format"
    # A newer RDB version than we know.
    body = b"\x00\x01a" + struct.pack("<H", 99)
    payload = body + struct.pack("<Q", crc64(body))
    assert err(raw, "RESTORE", "k", "0", payload) == "ERR DUMP payload version or checksum are wrong"


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed")
def test_payloads_cross_redis_both_ways(r, tmp_path):
    red = RedisServer(tmp_path)
    try:
        types = available_types(r)
        keys = fill(r, types)
        before = snapshot(r, keys)
        copy_all(r, red.client, keys)
        assert snapshot(red.client, keys) == before
        r.flushall()
        copy_all(red.client, r, keys)
        assert snapshot(r, keys) == before
        # Redis 7.0 has no listpack lists or sets (7.2 does, and so do we): compare the rest.
        for k in keys:
            if r.type(k) in (b"hash", b"zset"):
                assert r.object("encoding", k) == red.client.object("encoding", k), k
    finally:
        red.stop()


def test_restore_propagates_absolute_ttl(server_factory, tmp_path):
    s = server_factory(["--dir", str(tmp_path), "--save", "", "--appendonly", "yes"])
    r = s.client()
    r.set("src", "v")
    r.restore("k", 100_000, r.dump("src"))
    aof_dir = tmp_path / "appendonlydir"
    deadline = time.time() + 5
    text = b""
    while time.time() < deadline:
        text = b"".join(p.read_bytes() for p in aof_dir.glob("*.incr.aof"))
        if b"ABSTTL" in text:
            break
        time.sleep(0.05)
    assert b"RESTORE" in text and b"ABSTTL" in text

"""Hash field expiration (Redis 7.4 / 8.0): HEXPIRE & co, HTTL & co, HPERSIST, HGETEX, HSETEX,
HGETDEL; lazy and active field expiry, `hexpired` events, propagation, RDB, DUMP/RESTORE and
AOF rewrite round trips.

Debian's Redis 7.0 has none of these commands, so the expectations follow the 7.4.1 source and
the redis.io pages of the 8.0 commands."""

from __future__ import annotations

import time

import pytest
import redis

from conftest import arity, call, call_error, start_server, wait_for
from repl_helpers import procs, start_vireo, wait_in_sync, wait_link_up  # noqa: F401

FIELDS_MISSING = "Mandatory argument FIELDS is missing or not at the right position"
MISMATCH = "The `numfields` parameter must match the number of arguments"
NUMFIELDS_POSITIVE = "Number of fields must be a positive integer"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def now_ms() -> int:
    return int(time.time() * 1000)


def plain_client(handle):
    """A client of `handle` without redis-py's reply conversions (like the `plain` fixture)."""
    c = handle.client(decode_responses=True)
    c.response_callbacks.clear()
    return c


def arity_text(cmd: str) -> str:
    """The arity error as redis-py reports it (without the ERR prefix)."""
    return arity(cmd).removeprefix("ERR ")


def info_int(client, section: str, name: str) -> int:
    """An INFO field through a client without reply conversions."""
    for line in client.execute_command("INFO", section).splitlines():
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise KeyError(name)


@pytest.fixture
def h(plain):
    plain.execute_command("HSET", "h", "f1", "v1", "f2", "v2", "f3", "v3")
    return plain


# ---------------------------------------------------------------------------------------------
# HEXPIRE family: reply codes, conditions, errors


def test_hexpire_sets_and_reports_codes(h):
    assert call(h, "HEXPIRE", "h", 100, "FIELDS", 2, "f1", "nope") == [1, -2]
    assert call(h, "HTTL", "h", "FIELDS", 3, "f1", "f2", "nope") == [100, -1, -2]
    pttl = call(h, "HPTTL", "h", "FIELDS", 1, "f1")[0]
    assert 99000 < pttl <= 100000
    at = call(h, "HPEXPIRETIME", "h", "FIELDS", 1, "f1")[0]
    assert abs(at - (now_ms() + 100000)) < 2000
    assert call(h, "HEXPIRETIME", "h", "FIELDS", 1, "f1") == [(at + 999) // 1000]
    assert call(h, "HPEXPIRE", "h", 50000, "FIELDS", 1, "f2") == [1]
    assert 49000 < call(h, "HPTTL", "h", "FIELDS", 1, "f2")[0] <= 50000
    secs = now_ms() // 1000 + 500
    assert call(h, "HEXPIREAT", "h", secs, "FIELDS", 1, "f3") == [1]
    assert call(h, "HEXPIRETIME", "h", "FIELDS", 1, "f3") == [secs]
    assert call(h, "HPEXPIREAT", "h", secs * 1000 + 7, "FIELDS", 1, "f3") == [1]
    assert call(h, "HPEXPIRETIME", "h", "FIELDS", 1, "f3") == [secs * 1000 + 7]
    # A missing key: every field is -2.
    assert call(h, "HEXPIRE", "missing", 10, "FIELDS", 2, "a", "b") == [-2, -2]
    assert call(h, "HTTL", "missing", "FIELDS", 1, "a") == [-2]
    assert call(h, "HPERSIST", "missing", "FIELDS", 1, "a") == [-2]


def test_hexpire_conditions(h):
    # No TTL: NX sets, XX and GT fail, LT sets (no TTL counts as infinite).
    assert call(h, "HEXPIRE", "h", 100, "XX", "FIELDS", 1, "f1") == [0]
    assert call(h, "HEXPIRE", "h", 100, "GT", "FIELDS", 1, "f1") == [0]
    assert call(h, "HEXPIRE", "h", 100, "LT", "FIELDS", 1, "f1") == [1]
    assert call(h, "HEXPIRE", "h", 100, "NX", "FIELDS", 1, "f2") == [1]
    # With a TTL: NX fails, XX sets, GT/LT compare.
    assert call(h, "HEXPIRE", "h", 200, "NX", "FIELDS", 1, "f1") == [0]
    assert call(h, "HEXPIRE", "h", 200, "xx", "FIELDS", 1, "f1") == [1]
    assert call(h, "HEXPIRE", "h", 150, "GT", "FIELDS", 1, "f1") == [0]
    assert call(h, "HEXPIRE", "h", 300, "gt", "FIELDS", 1, "f1") == [1]
    assert call(h, "HEXPIRE", "h", 400, "LT", "FIELDS", 1, "f1") == [0]
    assert call(h, "HEXPIRE", "h", 250, "LT", "FIELDS", 2, "f1", "f3") == [1, 1]
    assert call(h, "HTTL", "h", "FIELDS", 3, "f1", "f2", "f3") == [250, 100, 250]


def test_hexpire_in_the_past_deletes(h):
    assert call(h, "HEXPIRE", "h", 0, "FIELDS", 2, "f1", "nope") == [2, -2]
    assert call(h, "HPEXPIREAT", "h", 1, "FIELDS", 1, "f2") == [2]
    assert call(h, "HGETALL", "h") == ["f3", "v3"]
    # The last field going deletes the key.
    assert call(h, "HEXPIREAT", "h", 1, "FIELDS", 1, "f3") == [2]
    assert call(h, "EXISTS", "h") == 0
    assert info_int(h, "stats", "expired_subkeys") >= 3


def test_hexpire_errors(h):
    h.execute_command("SET", "s", "x")
    assert call_error(h, "HEXPIRE", "s", 10, "FIELDS", 1, "a") == WRONGTYPE
    assert call_error(h, "HTTL", "s", "FIELDS", 1, "a") == WRONGTYPE
    assert call_error(h, "HPERSIST", "s", "FIELDS", 1, "a") == WRONGTYPE
    assert call_error(h, "HEXPIRE", "h", "x", "FIELDS", 1, "a") == \
        "value is not an integer or out of range"
    assert call_error(h, "HEXPIRE", "h", -1, "FIELDS", 1, "a") == \
        "invalid expire time, must be >= 0"
    assert call_error(h, "HEXPIRE", "h", 2 ** 62, "FIELDS", 1, "a") == \
        "invalid expire time in 'hexpire' command"
    assert call_error(h, "HPEXPIREAT", "h", 2 ** 46, "FIELDS", 1, "a") == \
        "invalid expire time in 'hpexpireat' command"
    assert call_error(h, "HEXPIRE", "h", 10, "FIELD", 1, "a") == FIELDS_MISSING
    assert call_error(h, "HEXPIRE", "h", 10, "NX", "XX", 1, "a") == FIELDS_MISSING
    assert call_error(h, "HEXPIRE", "h", 10, "FIELDS", 0, "a") == \
        "Parameter `numFields` should be greater than 0"
    assert call_error(h, "HEXPIRE", "h", 10, "FIELDS", 2, "a") == MISMATCH
    assert call_error(h, "HEXPIRE", "h", 10, "FIELDS", 1, "a", "b") == MISMATCH
    assert call_error(h, "HTTL", "h", "FIELDS", 0, "a") == NUMFIELDS_POSITIVE
    assert call_error(h, "HTTL", "h", "FIELDS", "x", "a") == NUMFIELDS_POSITIVE
    assert call_error(h, "HTTL", "h", "FIELDS", 3, "a") == MISMATCH
    assert call_error(h, "HPERSIST", "h", "NOTFIELDS", 1, "a") == FIELDS_MISSING
    assert call_error(h, "HEXPIRE", "h", 10, "FIELDS", 1) == arity_text("hexpire")
    assert call_error(h, "HTTL", "h", "FIELDS", 1) == arity_text("httl")


# ---------------------------------------------------------------------------------------------
# HPERSIST and how other writes treat TTLs


def test_hpersist(h):
    call(h, "HEXPIRE", "h", 100, "FIELDS", 1, "f1")
    assert call(h, "HPERSIST", "h", "FIELDS", 3, "f1", "f2", "nope") == [1, -1, -2]
    assert call(h, "HTTL", "h", "FIELDS", 1, "f1") == [-1]
    assert "subexpiry=0" in h.execute_command("INFO", "keyspace")


def test_writes_and_ttls(h):
    call(h, "HEXPIRE", "h", 100, "FIELDS", 3, "f1", "f2", "f3")
    h.execute_command("HSET", "h", "f1", "new")  # overwriting drops the TTL
    h.execute_command("HSET", "h", "n", "5")
    call(h, "HEXPIRE", "h", 100, "FIELDS", 1, "n")
    h.execute_command("HINCRBY", "h", "n", 1)  # an increment keeps it (Redis 7.4)
    h.execute_command("HSETNX", "h", "f2", "x")  # no write: keeps it
    h.execute_command("HDEL", "h", "f3")
    assert call(h, "HTTL", "h", "FIELDS", 4, "f1", "f2", "f3", "n") == [-1, 100, -2, 100]
    h.execute_command("HSET", "h", "fl", "1.5")
    call(h, "HEXPIRE", "h", 100, "FIELDS", 1, "fl")
    assert h.execute_command("HINCRBYFLOAT", "h", "fl", "1") == "2.5"
    assert call(h, "HTTL", "h", "FIELDS", 1, "fl") == [100]
    # The key as a whole: RENAME, COPY and MOVE keep field TTLs.
    h.execute_command("RENAME", "h", "h2")
    assert call(h, "HTTL", "h2", "FIELDS", 1, "f2") == [100]
    h.execute_command("COPY", "h2", "h3")
    assert call(h, "HTTL", "h3", "FIELDS", 1, "n") == [100]
    h.execute_command("MOVE", "h3", 1)
    h.execute_command("SELECT", 1)
    assert call(h, "HTTL", "h3", "FIELDS", 1, "n") == [100]
    h.execute_command("SELECT", 0)
    # The encoding does not change with TTLs.
    assert h.execute_command("OBJECT", "ENCODING", "h2") == "listpack"


def test_hashtable_encoding_with_ttls(plain):
    args = []
    for i in range(600):  # past hash-max-listpack-entries (512)
        args += [f"f{i}", "v"]
    plain.execute_command("HSET", "big", *args)
    fields = [f"f{i}" for i in range(0, 200, 2)]
    assert call(plain, "HPEXPIRE", "big", 100000, "FIELDS", len(fields), *fields) == [1] * 100
    assert plain.execute_command("OBJECT", "ENCODING", "big") == "hashtable"
    assert call(plain, "HEXPIRE", "big", 0, "FIELDS", 2, "f0", "f1") == [2, 2]
    assert plain.execute_command("HLEN", "big") == 598


def test_memory_usage_with_ttls_is_modest(plain):
    args = []
    for i in range(100):
        args += [f"field:{i}", "value"]
    plain.execute_command("HSET", "m", *args)
    before = plain.execute_command("MEMORY", "USAGE", "m")
    fields = [f"field:{i}" for i in range(100)]
    call(plain, "HEXPIRE", "m", 1000, "FIELDS", 100, *fields)
    after = plain.execute_command("MEMORY", "USAGE", "m")
    assert after > before
    assert (after - before) / 100 <= 160  # bytes per field with a TTL
    call(plain, "HPERSIST", "m", "FIELDS", 100, *fields)
    assert plain.execute_command("MEMORY", "USAGE", "m") == before


# ---------------------------------------------------------------------------------------------
# Lazy and active expiry, events


def test_lazy_expiry_on_read(server, plain):
    plain.execute_command("CONFIG", "SET", "hz", "1")  # the active cycle won't get there first
    try:
        plain.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    except redis.ResponseError:
        pass
    try:
        plain.execute_command("HSET", "lz", "a", "1", "b", "2")
        call(plain, "HPEXPIRE", "lz", 30, "FIELDS", 1, "a")
        wait_for(lambda: plain.execute_command("HGET", "lz", "a") is None, timeout=5)
        assert plain.execute_command("HGETALL", "lz") == ["b", "2"]
        assert plain.execute_command("HLEN", "lz") == 1
        call(plain, "HPEXPIRE", "lz", 30, "FIELDS", 1, "b")
        wait_for(lambda: plain.execute_command("HLEN", "lz") == 0, timeout=5)
        assert plain.execute_command("EXISTS", "lz") == 0
    finally:
        try:
            plain.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
        except redis.ResponseError:
            pass
        plain.execute_command("CONFIG", "SET", "hz", "10")


def test_active_expiry_and_events(server, plain):
    plain.execute_command("CONFIG", "SET", "notify-keyspace-events", "Eghx")
    sub = server.client(decode_responses=True).pubsub()
    sub.psubscribe("__keyevent@0__:*")
    wait_for(lambda: sub.get_message(timeout=0.01) is not None)  # the psubscribe confirmation
    try:
        plain.execute_command("HSET", "ae", "a", "1", "b", "2")
        plain.execute_command("HSET", "keep", "a", "1", "b", "2")
        call(plain, "HPEXPIRE", "ae", 20, "FIELDS", 2, "a", "b")
        call(plain, "HPEXPIRE", "keep", 20, "FIELDS", 1, "a")
        # Nothing reads these keys: only the active cycle can delete them.
        wait_for(lambda: plain.execute_command("DBSIZE") == 1, timeout=10,
                 message="active expiry never removed the hash")
        events = []
        wait_for(lambda: (m := sub.get_message(timeout=0.05)) is None or
                 not events.append((m["channel"].split(":")[-1], m["data"])) and
                 ("del", "ae") in events and ("hexpired", "keep") in events, timeout=5)
        ae = [e for e, k in events if k == "ae"]
        assert ae[:2] == ["hset", "hexpire"]
        assert ae.index("hexpired") < ae.index("del")
        assert plain.execute_command("HGETALL", "keep") == ["b", "2"]
    finally:
        sub.close()
        plain.execute_command("CONFIG", "SET", "notify-keyspace-events", "")


def test_info_keyspace_subexpiry(plain):
    plain.execute_command("HSET", "a", "f", "v")
    plain.execute_command("HSET", "b", "f", "v")
    call(plain, "HEXPIRE", "a", 100, "FIELDS", 1, "f")
    assert "db0:keys=2,expires=0,avg_ttl=0,subexpiry=1" in plain.execute_command("INFO", "keyspace")


# ---------------------------------------------------------------------------------------------
# HGETDEL, HGETEX, HSETEX (Redis 8.0)


def test_hgetdel(h):
    assert call(h, "HGETDEL", "h", "FIELDS", 3, "f1", "nope", "f1") == ["v1", None, None]
    assert call(h, "HGETALL", "h") == ["f2", "v2", "f3", "v3"]
    assert call(h, "HGETDEL", "h", "FIELDS", 2, "f2", "f3") == ["v2", "v3"]
    assert call(h, "EXISTS", "h") == 0
    assert call(h, "HGETDEL", "h", "FIELDS", 1, "x") == [None]
    assert call_error(h, "HGETDEL", "h", "FIELDS", 0, "x") == NUMFIELDS_POSITIVE
    assert call_error(h, "HGETDEL", "h", "FIELDS", 2, "x") == MISMATCH
    assert call_error(h, "HGETDEL", "h", "X", 1, "x") == FIELDS_MISSING
    h.execute_command("SET", "s", "x")
    assert call_error(h, "HGETDEL", "s", "FIELDS", 1, "x") == WRONGTYPE


def test_hgetex(h):
    assert call(h, "HGETEX", "h", "FIELDS", 2, "f1", "nope") == ["v1", None]
    assert call(h, "HTTL", "h", "FIELDS", 1, "f1") == [-1]
    assert call(h, "HGETEX", "h", "EX", 100, "FIELDS", 2, "f1", "nope") == ["v1", None]
    assert call(h, "HTTL", "h", "FIELDS", 1, "f1") == [100]
    assert call(h, "HGETEX", "h", "PX", 50000, "FIELDS", 1, "f2") == ["v2"]
    assert 49000 < call(h, "HPTTL", "h", "FIELDS", 1, "f2")[0] <= 50000
    secs = now_ms() // 1000 + 300
    assert call(h, "HGETEX", "h", "EXAT", secs, "FIELDS", 1, "f3") == ["v3"]
    assert call(h, "HEXPIRETIME", "h", "FIELDS", 1, "f3") == [secs]
    assert call(h, "HGETEX", "h", "PXAT", secs * 1000 + 1, "FIELDS", 1, "f3") == ["v3"]
    assert call(h, "HPEXPIRETIME", "h", "FIELDS", 1, "f3") == [secs * 1000 + 1]
    assert call(h, "HGETEX", "h", "PERSIST", "FIELDS", 2, "f1", "f2") == ["v1", "v2"]
    assert call(h, "HTTL", "h", "FIELDS", 2, "f1", "f2") == [-1, -1]
    # A time in the past: the value is returned, then the field is gone.
    assert call(h, "HGETEX", "h", "EX", 0, "FIELDS", 1, "f1") == ["v1"]
    assert call(h, "HEXISTS", "h", "f1") == 0
    assert call(h, "HGETEX", "missing", "EX", 10, "FIELDS", 1, "a") == [None]
    assert call_error(h, "HGETEX", "h", "EX", -1, "FIELDS", 1, "a") == \
        "invalid expire time, must be >= 0"
    assert call_error(h, "HGETEX", "h", "EX", "x", "FIELDS", 1, "a") == \
        "value is not an integer or out of range"
    assert call_error(h, "HGETEX", "h", "EX", 2 ** 60, "FIELDS", 1, "a") == \
        "invalid expire time in 'hgetex' command"
    assert call_error(h, "HGETEX", "h", "EX", 10, "PERSIST", 1, "a") == FIELDS_MISSING
    assert call_error(h, "HGETEX", "h", "FIELDS", 0, "a") == NUMFIELDS_POSITIVE
    assert call_error(h, "HGETEX", "h", "FIELDS", 2, "a") == MISMATCH
    h.execute_command("SET", "s", "x")
    assert call_error(h, "HGETEX", "s", "FIELDS", 1, "a") == WRONGTYPE


def test_hsetex(plain):
    assert call(plain, "HSETEX", "k", "FIELDS", 2, "a", "1", "b", "2") == 1
    assert call(plain, "HTTL", "k", "FIELDS", 1, "a") == [-1]
    assert call(plain, "HSETEX", "k", "EX", 100, "FIELDS", 1, "a", "x") == 1
    assert call(plain, "HTTL", "k", "FIELDS", 1, "a") == [100]
    assert call(plain, "HSETEX", "k", "KEEPTTL", "FIELDS", 1, "a", "y") == 1
    assert call(plain, "HTTL", "k", "FIELDS", 1, "a") == [100]
    assert call(plain, "HSETEX", "k", "FIELDS", 1, "a", "z") == 1  # no option: TTL dropped
    assert call(plain, "HTTL", "k", "FIELDS", 1, "a") == [-1]
    assert call(plain, "HSETEX", "k", "PX", 5000, "FIELDS", 1, "c", "3") == 1
    assert 4000 < call(plain, "HPTTL", "k", "FIELDS", 1, "c")[0] <= 5000
    secs = now_ms() // 1000 + 100
    assert call(plain, "HSETEX", "k", "EXAT", secs, "FIELDS", 1, "d", "4") == 1
    assert call(plain, "HEXPIRETIME", "k", "FIELDS", 1, "d") == [secs]
    assert call(plain, "HSETEX", "k", "PXAT", secs * 1000 + 5, "FIELDS", 1, "d", "4") == 1
    assert call(plain, "HPEXPIRETIME", "k", "FIELDS", 1, "d") == [secs * 1000 + 5]
    # FNX: only if none exist; FXX: only if all exist.
    assert call(plain, "HSETEX", "k", "FNX", "FIELDS", 2, "a", "1", "new", "1") == 0
    assert call(plain, "HSETEX", "k", "FNX", "EX", 10, "FIELDS", 1, "new", "1") == 1
    assert call(plain, "HSETEX", "k", "FXX", "FIELDS", 2, "a", "1", "nope", "1") == 0
    assert call(plain, "HSETEX", "k", "FXX", "FIELDS", 2, "a", "A", "b", "B") == 1
    assert call(plain, "HSETEX", "nokey", "FXX", "FIELDS", 1, "a", "1") == 0
    assert call(plain, "EXISTS", "nokey") == 0
    assert call(plain, "HMGET", "k", "a", "b", "new") == ["A", "B", "1"]
    # A time in the past deletes what it set.
    assert call(plain, "HSETEX", "gone", "PXAT", 1, "FIELDS", 1, "a", "1") == 1
    assert call(plain, "EXISTS", "gone") == 0


def test_hsetex_errors(plain):
    assert call_error(plain, "HSETEX", "k", "EX", 10, "PX", 10, "FIELDS", 1, "a", "1") == \
        "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
    assert call_error(plain, "HSETEX", "k", "KEEPTTL", "EX", 10, "FIELDS", 1, "a", "1") == \
        "Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
    assert call_error(plain, "HSETEX", "k", "FNX", "FXX", "FIELDS", 1, "a", "1") == \
        "Only one of FXX or FNX arguments can be specified"
    assert call_error(plain, "HSETEX", "k", "BOGUS", "FIELDS", 1, "a", "1") == \
        "unknown argument: BOGUS"
    assert call_error(plain, "HSETEX", "k", "FIELDS", 0, "a", "1") == "invalid number of fields"
    assert call_error(plain, "HSETEX", "k", "FIELDS", 2, "a", "1") == arity_text("hsetex")
    assert call_error(plain, "HSETEX", "k", "FIELDS", 1, "a", "1", "b") == arity_text("hsetex")
    assert call_error(plain, "HSETEX", "k", "EX", -1, "FIELDS", 1, "a", "1") == \
        "invalid expire time, must be >= 0"
    assert call_error(plain, "HSETEX", "k", "FNX", "KEEPTTL", "FNX", "EX") == \
        "Only one of FXX or FNX arguments can be specified"
    assert call_error(plain, "HSETEX", "k", "FXX", "KEEPTTL", "FIELDS", "EX") == arity_text("hsetex")
    plain.execute_command("SET", "s", "x")
    assert call_error(plain, "HSETEX", "s", "FIELDS", 1, "a", "1") == WRONGTYPE


# ---------------------------------------------------------------------------------------------
# Propagation and persistence


def test_replica_follows_field_ttls(procs):  # noqa: F811
    master = start_vireo(procs)
    replica = start_vireo(procs, "--replicaof", "127.0.0.1", master.port)
    m = master.client(decode_responses=True)
    s = replica.client(decode_responses=True)
    wait_link_up(s)
    m.execute_command("HSET", "h", "a", "1", "b", "2", "c", "3", "d", "4", "e", "5")
    m.execute_command("HEXPIRE", "h", 100, "FIELDS", 1, "a")
    m.execute_command("HSETEX", "h", "PX", 200000, "FIELDS", 1, "b", "B")
    m.execute_command("HGETEX", "h", "EX", 300, "FIELDS", 1, "c")
    m.execute_command("HEXPIRE", "h", 0, "FIELDS", 1, "d")  # deleted: an HDEL
    m.execute_command("HPEXPIRE", "h", 50, "FIELDS", 1, "e")
    m.execute_command("HSET", "fl", "x", "1.5")
    m.execute_command("HEXPIRE", "fl", 100, "FIELDS", 1, "x")
    m.execute_command("HINCRBYFLOAT", "fl", "x", "1")
    wait_in_sync(m, s)
    fields = ("a", "b", "c", "d")
    assert s.execute_command("HPEXPIRETIME", "h", "FIELDS", 4, *fields) == \
        m.execute_command("HPEXPIRETIME", "h", "FIELDS", 4, *fields)
    assert s.execute_command("HGET", "h", "b") == "B"
    assert s.execute_command("HEXISTS", "h", "d") == 0
    assert s.execute_command("HGET", "fl", "x") == "2.5"
    assert s.execute_command("HTTL", "fl", "FIELDS", 1, "x") == [100]
    # e expires on the master (actively); the replica gets the HDEL.
    wait_for(lambda: s.execute_command("HEXISTS", "h", "e") == 0, timeout=10)
    m.execute_command("HPERSIST", "h", "FIELDS", 1, "a")
    wait_in_sync(m, s)
    assert s.execute_command("HTTL", "h", "FIELDS", 1, "a") == [-1]


def test_rdb_round_trip(tmp_path):
    h = start_server(["--dir", str(tmp_path), "--save", ""])
    try:
        c = plain_client(h)
        c.execute_command("HSET", "small", "a", "1", "b", "2", "c", "3")
        c.execute_command("HPEXPIRE", "small", 100000, "FIELDS", 1, "a")
        c.execute_command("HPEXPIRE", "small", 200000, "FIELDS", 1, "b")
        args = []
        for i in range(600):
            args += [f"f{i}", f"v{i}"]
        c.execute_command("HSET", "big", *args)
        c.execute_command("HPEXPIRE", "big", 300000, "FIELDS", 2, "f1", "f299")
        c.execute_command("HSET", "plain", "x", "y")
        c.execute_command("HSET", "soon", "x", "y", "z", "w")
        c.execute_command("HPEXPIRE", "soon", 100, "FIELDS", 1, "x")
        before = {k: c.execute_command("HPEXPIRETIME", k, "FIELDS", 2, *f)
                  for k, f in (("small", ("a", "b")), ("big", ("f1", "f299")))}
        c.execute_command("SAVE")
        h.stop()
        time.sleep(0.15)  # let "soon"'s field pass while the server is down
        h = start_server(["--dir", str(tmp_path), "--save", ""])
        c = plain_client(h)
        for k, f in (("small", ("a", "b")), ("big", ("f1", "f299"))):
            assert c.execute_command("HPEXPIRETIME", k, "FIELDS", 2, *f) == before[k]
        assert c.execute_command("HTTL", "small", "FIELDS", 1, "c") == [-1]
        assert c.execute_command("HLEN", "big") == 600
        assert c.execute_command("OBJECT", "ENCODING", "small") == "listpack"
        assert c.execute_command("OBJECT", "ENCODING", "big") == "hashtable"
        assert c.execute_command("HGETALL", "soon") == ["z", "w"]
        assert c.execute_command("HGETALL", "plain") == ["x", "y"]
    finally:
        h.stop()
        h.cleanup()


def test_dump_restore_round_trip(server, plain):
    plain.execute_command("HSET", "d", "a", "1", "b", "2")
    plain.execute_command("HPEXPIRE", "d", 100000, "FIELDS", 1, "a")
    at = plain.execute_command("HPEXPIRETIME", "d", "FIELDS", 1, "a")
    raw = server.client()
    payload = raw.execute_command("DUMP", "d")
    assert payload[0] == 24  # RDB_TYPE_HASH_METADATA
    raw.execute_command("RESTORE", "d2", 0, payload)
    assert plain.execute_command("HPEXPIRETIME", "d2", "FIELDS", 2, "a", "b") == at + [-1]
    assert plain.execute_command("HGETALL", "d2") == ["a", "1", "b", "2"]
    # A hash without TTLs still dumps as Redis 7.0 writes it (listpack).
    plain.execute_command("HSET", "p", "a", "1")
    assert raw.execute_command("DUMP", "p")[0] == 16


def test_aof_rewrite_round_trip(tmp_path):
    args = ["--dir", str(tmp_path), "--appendonly", "yes", "--aof-use-rdb-preamble", "no"]
    h = start_server(args)
    try:
        c = plain_client(h)
        c.execute_command("HSET", "h", "a", "1", "b", "2")
        c.execute_command("HPEXPIRE", "h", 100000, "FIELDS", 1, "a")
        c.execute_command("HSETEX", "h2", "EX", 100, "FIELDS", 1, "x", "y")
        at = c.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "a")
        at2 = c.execute_command("HPEXPIRETIME", "h2", "FIELDS", 1, "x")
        rewrites = info_int(c, "persistence", "aof_rewrites")
        c.execute_command("BGREWRITEAOF")
        wait_for(lambda: info_int(c, "persistence", "aof_rewrites") > rewrites and
                 not info_int(c, "persistence", "aof_rewrite_in_progress"), timeout=20)
        base = next((tmp_path / "appendonlydir").glob("*.base.aof")).read_bytes()
        assert b"HPEXPIREAT" in base
        c.execute_command("HPEXPIRE", "h", 200000, "FIELDS", 1, "b")  # into the incr file
        bt = c.execute_command("HPEXPIRETIME", "h", "FIELDS", 1, "b")
        incr = next((tmp_path / "appendonlydir").glob("*.incr.aof")).read_bytes()
        assert b"HPEXPIREAT" in incr and str(bt[0]).encode() in incr
        h.stop()
        h = start_server(args)
        c = plain_client(h)
        assert c.execute_command("HPEXPIRETIME", "h", "FIELDS", 2, "a", "b") == at + bt
        assert c.execute_command("HPEXPIRETIME", "h2", "FIELDS", 1, "x") == at2
        assert c.execute_command("HGETALL", "h") == ["a", "1", "b", "2"]
    finally:
        h.stop()
        h.cleanup()

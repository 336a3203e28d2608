"""Key expiry: EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT with NX|XX|GT|LT, TTL/PTTL/EXPIRETIME/
PEXPIRETIME, PERSIST, lazy expiry on access and active expiry of a million keys."""

import os
import socket
import threading
import time

import pytest
import redis

from conftest import wait_for

# A million keys take too long under ASan/UBSan, which slow the server several-fold.
load_test = pytest.mark.skipif(bool(os.environ.get("VIREO_SANITIZED")),
                               reason="timing-sensitive load test; skipped in sanitizer builds")


def err(r, *args) -> str:
    with pytest.raises(redis.ResponseError) as info:
        r.execute_command(*args)
    return str(info.value)


def wait_past(deadline_ms: int) -> None:
    """Let the wall clock pass a key's expiry time (there is no event to wait on)."""
    while time.time() * 1000 <= deadline_ms + 2:
        time.sleep(0.002)


# --------------------------------------------------------------------------
# Setting and reading TTLs


def test_expire_and_ttl(r):
    r.set("k", "v")
    assert r.ttl("k") == -1 and r.pttl("k") == -1
    assert r.ttl("missing") == -2 and r.pttl("missing") == -2
    assert r.expire("k", 100) is True
    assert 99 <= r.ttl("k") <= 100
    assert 99000 < r.pttl("k") <= 100000
    assert r.pexpire("k", 5000) is True
    assert 4000 < r.pttl("k") <= 5000
    assert r.expire("missing", 100) is False
    assert r.pexpire("missing", 100) is False


def test_ttl_rounds_to_nearest_second(r):
    r.set("k", "v")
    r.pexpire("k", 2400)
    assert r.ttl("k") == 2
    r.pexpire("k", 2600)
    assert r.ttl("k") == 3


def test_expireat_and_expiretime(r):
    r.set("k", "v")
    assert r.expiretime("k") == -1 and r.pexpiretime("k") == -1
    assert r.execute_command("EXPIRETIME", "missing") == -2
    assert r.execute_command("PEXPIRETIME", "missing") == -2
    at = int(time.time()) + 1000
    assert r.expireat("k", at) is True
    assert r.expiretime("k") == at
    assert r.pexpiretime("k") == at * 1000
    assert r.pexpireat("k", at * 1000 + 1234) is True
    assert r.pexpiretime("k") == at * 1000 + 1234
    # EXPIRETIME rounds milliseconds to the nearest second.
    assert r.expiretime("k") == at + 1
    assert 998 <= r.ttl("k") <= 1002


def test_past_or_negative_times_delete_the_key(r):
    for args in (("EXPIRE", -1), ("PEXPIRE", 0), ("EXPIREAT", 1), ("PEXPIREAT", 1000),
                 ("EXPIRE", -9223372036854775)):
        r.set("k", "v")
        assert r.execute_command(args[0], "k", args[1]) == 1, args
        assert r.exists("k") == 0, args
    assert r.execute_command("EXPIRE", "missing", -1) == 0


def test_expire_deletion_is_not_counted_as_expired_key(r):
    try:
        before = r.info("stats")["expired_keys"]
    except (redis.ResponseError, KeyError):
        pytest.skip("INFO stats not available")
    r.set("k", "v")
    r.expire("k", -1)
    assert r.info("stats")["expired_keys"] == before


def test_set_clears_ttl_and_persist(r):
    r.set("k", "v", ex=100)
    assert r.ttl("k") > 0
    r.set("k", "v2")
    assert r.ttl("k") == -1
    r.set("k", "v", ex=100)
    assert r.persist("k") is True
    assert r.ttl("k") == -1
    assert r.persist("k") is False
    assert r.persist("missing") is False
    assert r.get("k") == b"v"


def test_set_keepttl(r):
    r.set("k", "v", ex=100)
    try:
        r.set("k", "v2", keepttl=True)
    except redis.ResponseError:
        pytest.skip("SET KEEPTTL not available")
    assert 0 < r.ttl("k") <= 100


def test_condition_flags(r):
    r.set("k", "v")
    # NX: only without a TTL.
    assert r.expire("k", 100, nx=True) is True
    assert r.expire("k", 200, nx=True) is False
    assert 99 <= r.ttl("k") <= 100
    # XX: only with a TTL.
    assert r.expire("k", 200, xx=True) is True
    r.persist("k")
    assert r.expire("k", 200, xx=True) is False
    assert r.ttl("k") == -1
    # GT: no TTL counts as infinite, so GT never applies to it.
    assert r.expire("k", 100, gt=True) is False
    assert r.ttl("k") == -1
    r.expire("k", 100)
    assert r.expire("k", 50, gt=True) is False
    assert r.expire("k", 200, gt=True) is True
    assert 199 <= r.ttl("k") <= 200
    # LT: always applies to a key without TTL.
    assert r.expire("k", 300, lt=True) is False
    assert r.expire("k", 50, lt=True) is True
    assert 49 <= r.ttl("k") <= 50
    r.persist("k")
    assert r.expire("k", 300, lt=True) is True
    assert 299 <= r.ttl("k") <= 300
    # XX and GT together.
    assert r.execute_command("EXPIRE", "k", 400, "XX", "GT") == 1
    assert r.execute_command("EXPIRE", "k", 100, "xx", "gt") == 0
    assert r.execute_command("PEXPIRE", "k", 1000, "LT", "XX") == 1
    assert r.execute_command("PEXPIRE", "missing", 1000, "NX") == 0


def test_lt_with_past_time_deletes(r):
    r.set("k", "v", ex=100)
    assert r.execute_command("EXPIRE", "k", -5, "LT") == 1
    assert r.exists("k") == 0
    r.set("k", "v", ex=100)
    assert r.execute_command("EXPIRE", "k", -5, "GT") == 0
    assert r.exists("k") == 1


@pytest.mark.parametrize("cmd", ["EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"])
def test_expire_errors(r, cmd):
    r.set("k", "v")
    name = cmd.lower()
    incompatible = "NX and XX, GT or LT options at the same time are not compatible"
    for flags in (("NX", "XX"), ("NX", "GT"), ("LT", "NX"), ("nx", "nx", "xx")):
        assert err(r, cmd, "k", 100, *flags) == incompatible
    assert err(r, cmd, "k", 100, "GT", "LT") == "GT and LT options at the same time are not compatible"
    assert err(r, cmd, "k", 100, "FOO") == "Unsupported option FOO"
    assert err(r, cmd, "k", 100, "NX", "bar") == "Unsupported option bar"
    # Options are checked before the number.
    assert err(r, cmd, "k", "abc", "NX", "XX") == incompatible
    assert err(r, cmd, "k", "abc") == "value is not an integer or out of range"
    assert err(r, cmd, "k", "1.5") == "value is not an integer or out of range"
    assert err(r, cmd, "k", "9223372036854775808") == "value is not an integer or out of range"
    assert err(r, cmd, "k") == f"wrong number of arguments for '{name}' command"
    assert r.ttl("k") == -1


def test_expire_overflow(r):
    r.set("k", "v")
    for cmd, value in (("EXPIRE", 9223372036854776), ("EXPIRE", -9223372036854776),
                       ("EXPIRE", 9223372036854775), ("PEXPIRE", 9223372036854775807),
                       ("EXPIREAT", 9223372036854776), ("EXPIREAT", -9223372036854776)):
        assert err(r, cmd, "k", value) == f"invalid expire time in '{cmd.lower()}' command"
    # The key is untouched, even for a missing key the error comes first.
    assert r.ttl("k") == -1
    assert err(r, "EXPIRE", "missing", 9223372036854776) == (
        "invalid expire time in 'expire' command")
    # PEXPIREAT adds nothing, so any 64-bit value is a valid time.
    assert r.execute_command("PEXPIREAT", "k", 9223372036854775807) == 1
    assert r.pexpiretime("k") == 9223372036854775807


@pytest.mark.parametrize("cmd", ["TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"])
def test_single_key_arity(r, cmd):
    message = f"wrong number of arguments for '{cmd.lower()}' command"
    assert err(r, cmd) == message
    assert err(r, cmd, "a", "b") == message


# --------------------------------------------------------------------------
# Lazy expiry


def test_lazy_expiry_on_access(server_factory):
    # hz 1: the active cycle runs once a second, so the key is still stored when read.
    srv = server_factory(["--hz", "1"])
    c = srv.client()
    deadline = int(time.time() * 1000) + 100
    c.set("k", "v", pxat=deadline)
    c.set("other", "v", pxat=deadline)
    c.set("live", "v")
    assert c.get("k") == b"v"
    wait_past(deadline)
    assert c.get("k") is None
    assert c.exists("k") == 0
    assert c.ttl("other") == -2
    assert c.type("other") == b"none"
    assert c.keys("*") == [b"live"]
    assert c.randomkey() == b"live"
    assert c.dbsize() == 1


def test_expired_key_cannot_be_renamed_or_moved(r):
    deadline = int(time.time() * 1000) + 50
    r.set("a", "v", pxat=deadline)
    r.set("b", "v", pxat=deadline)
    r.set("c", "v", pxat=deadline)
    wait_past(deadline)
    assert err(r, "RENAME", "a", "x") == "no such key"
    assert r.move("b", 1) is False
    assert r.copy("c", "y") is False
    assert r.persist("c") is False
    assert r.expire("c", 100) is False


def test_expired_destination_is_replaced(r):
    deadline = int(time.time() * 1000) + 50
    r.set("dst", "old", pxat=deadline)
    r.set("src", "new")
    wait_past(deadline)
    assert r.renamenx("src", "dst") is True
    assert r.get("dst") == b"new" and r.ttl("dst") == -1


def test_expire_inside_multi_uses_one_clock(r):
    r.set("k", "v")
    p = r.pipeline(transaction=True)
    p.pexpire("k", 1).pttl("k").exists("k")
    result = p.execute()
    assert result[0] is True
    # Time stands still inside EXEC: the key can't expire between the commands.
    assert result[1] == 1 and result[2] == 1


# --------------------------------------------------------------------------
# Active expiry


def test_active_expiry_removes_unaccessed_keys(r):
    for i in range(100):
        r.set(f"k{i}", "v", px=100)
    r.set("live", "v")
    wait_for(lambda: r.dbsize() == 1, timeout=5, message="active expiry did not run")
    assert r.get("live") == b"v"


@pytest.mark.load
@load_test
def test_million_keys_expire_without_stalling_clients(server_factory):
    """1M keys with 1 s TTLs disappear within seconds, in cycles that yield to other clients.

    Behaviour, not timing: another client's PINGs are answered while the expiry backlog is
    still draining, and INFO shows cycles that stopped at their time budget.
    """
    srv = server_factory()
    loader = srv.client()
    pinger = srv.client()
    total, batch = 1_000_000, 10_000

    pings_while_draining = 0
    stop = threading.Event()

    def ping_loop():
        nonlocal pings_while_draining
        while not stop.is_set():
            pinger.ping()
            left = pinger.dbsize()
            if 0 < left < total:
                pings_while_draining += 1
            time.sleep(0.005)

    thread = threading.Thread(target=ping_loop, daemon=True)
    thread.start()
    try:
        for base in range(0, total, batch):
            pipe = loader.pipeline(transaction=False)
            for i in range(base, base + batch):
                pipe.set(b"key:%d" % i, b"value", px=1000)
            assert all(reply is True for reply in pipe.execute())
        wait_for(lambda: loader.dbsize() == 0, timeout=30, interval=0.05,
                 message=f"keys left: {loader.dbsize()}")
    finally:
        stop.set()
        thread.join()
    stats = loader.info("stats")
    assert stats["expired_keys"] == total
    assert stats["expired_time_cap_reached_count"] > 0
    assert pings_while_draining > 0


def load_raw(port: int, keys: int, ttl_ms: int, batch: int = 10_000) -> None:
    """SET key:i value PX ttl_ms for `keys` keys, pre-encoded and pipelined in batches.

    Several times faster than redis-py, which spends ~20 s on a million commands.
    """
    ttl = str(ttl_ms).encode()
    tail = b"$5\r\nvalue\r\n$2\r\nPX\r\n$%d\r\n%s\r\n" % (len(ttl), ttl)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        for base in range(0, keys, batch):
            parts = []
            for i in range(base, min(base + batch, keys)):
                key = b"key:%d" % i
                parts.append(b"*5\r\n$3\r\nSET\r\n$%d\r\n%s\r\n%s" % (len(key), key, tail))
            sock.sendall(b"".join(parts))
            expected = b"+OK\r\n" * len(parts)
            got = bytearray()
            while len(got) < len(expected):
                chunk = sock.recv(1 << 20)
                assert chunk, "server closed the connection"
                got += chunk
            assert got == expected


@pytest.mark.load
@load_test
def test_million_keys_expiring_together(server_factory):
    """The harder case: a million keys whose TTL has passed, all waiting for active expiry.

    Active expiry is paused while loading, so every key is still stored (and logically
    expired) when it resumes; then the whole backlog must drain in cycles that leave room for
    this client's commands.
    """
    srv = server_factory()
    c = srv.client()
    try:
        c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    except redis.ResponseError:
        pytest.skip("DEBUG SET-ACTIVE-EXPIRE not available")
    total = 1_000_000
    load_raw(srv.port, total, ttl_ms=1000)
    wait_past(int(time.time() * 1000) + 1000)
    assert c.dbsize() == total
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)
    # The backlog drains in budgeted cycles: this client is answered between them.
    answered_while_draining = 0
    wait_start = time.monotonic()
    while True:
        c.ping()
        left = c.dbsize()
        if left == 0:
            break
        if left < total:
            answered_while_draining += 1
        assert time.monotonic() - wait_start < 30, f"{left} keys left after 30 s"
        time.sleep(0.005)
    assert answered_while_draining > 0
    stats = c.info("stats")
    assert stats["expired_keys"] == total
    assert stats["expired_time_cap_reached_count"] > 0

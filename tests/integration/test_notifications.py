"""Keyspace notifications (notify-keyspace-events) for the strings, keys and lists families,
expiry (lazy and active), key creation ("new") and misses ("keymiss").

Each scenario lists the (db, event, key) triples Redis publishes on __keyevent@<db>__:<event>
for a command sequence; they were recorded from redis-server 7.0.15, and where a redis-server
binary is installed the same scenarios also run against it side by side.
"""

from __future__ import annotations

import shutil

import pytest
import redis

from conftest import start_server, wait_for, _finish


@pytest.fixture(scope="module")
def ref():
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    handle = start_server(["--save", "", "--appendonly", "no"], binary=binary)
    yield handle
    _finish(handle)


SENTINEL = "__sentinel__"


class EventLog:
    """A subscriber to every keyspace and keyevent channel, read up to a sentinel message."""

    def __init__(self, handle):
        self.client = handle.client()
        self.pubsub = self.client.pubsub()
        self.pubsub.psubscribe("__key*__:*")
        self.pubsub.subscribe(SENTINEL)
        for _ in range(2):
            assert self.pubsub.get_message(timeout=5)["type"] in ("psubscribe", "subscribe")

    def collect(self, keyspace=False):
        """Everything published since the last call: keyevent triples (db, event, key), or
        keyspace triples (db, key, event) with keyspace=True."""
        self.client.publish(SENTINEL, "end")
        out = []
        while True:
            m = self.pubsub.get_message(timeout=5)
            assert m is not None, "sentinel never arrived"
            if m["type"] == "message" and m["channel"] == SENTINEL.encode():
                return out
            channel = m["channel"].decode()
            prefix, _, rest = channel.partition("@")
            db, _, name = rest.partition("__:")
            is_keyspace = prefix == "__keyspace"
            if is_keyspace == keyspace:
                out.append((int(db), name, m["data"].decode()))

    def close(self):
        self.pubsub.close()
        self.client.close()


# (flags, setup commands, commands, expected keyevent triples (db, event, key))
SCENARIOS = {
    "strings": ("E$", [], [
        ("SET", "s", "v"),
        ("SET", "s", "v2", "GET"),
        ("SETNX", "s", "x"),
        ("SETNX", "s2", "x"),
        ("APPEND", "s", "more"),
        ("SETRANGE", "s", "1", "ZZ"),
        ("INCR", "n"),
        ("DECR", "n"),
        ("INCRBY", "n", "5"),
        ("DECRBY", "n", "5"),
        ("INCRBYFLOAT", "n", "1.5"),
        ("MSET", "a", "1", "b", "2"),
        ("MSETNX", "c", "1", "d", "2"),
        ("MSETNX", "c", "1", "e", "2"),
        ("GETSET", "a", "9"),
        ("GET", "a"),
        ("STRLEN", "a"),
    ], [
        (0, "set", "s"), (0, "set", "s"), (0, "set", "s2"), (0, "append", "s"),
        (0, "setrange", "s"), (0, "incrby", "n"), (0, "incrby", "n"), (0, "incrby", "n"),
        (0, "incrby", "n"), (0, "incrbyfloat", "n"), (0, "set", "a"), (0, "set", "b"),
        (0, "set", "c"), (0, "set", "d"), (0, "set", "a"),
    ]),
    "strings_with_ttl": ("E$g", [], [
        ("SET", "k", "v", "EX", "100"),
        ("SETEX", "k", "100", "v"),
        ("PSETEX", "k", "100000", "v"),
        ("GETEX", "k", "EX", "50"),
        ("GETEX", "k", "PERSIST"),
        ("GETEX", "k"),
        ("GETDEL", "k"),
        ("GETDEL", "k"),
        ("SET", "k", "v"),
        ("GETEX", "k", "PXAT", "1"),
        ("SET", "k", "v", "KEEPTTL"),
    ], [
        (0, "set", "k"), (0, "expire", "k"), (0, "set", "k"), (0, "expire", "k"),
        (0, "set", "k"), (0, "expire", "k"), (0, "expire", "k"), (0, "persist", "k"),
        (0, "del", "k"), (0, "set", "k"), (0, "del", "k"), (0, "set", "k"),
    ]),
    "generic": ("Eg", [("SET", "a", "1"), ("SET", "b", "2"), ("SET", "c", "3")], [
        ("DEL", "a", "nope", "b"),
        ("SET", "a", "1"),
        ("UNLINK", "a"),
        ("RENAME", "c", "d"),
        ("RENAME", "d", "d"),
        ("SET", "e", "1"),
        ("RENAMENX", "d", "e"),
        ("RENAMENX", "d", "f"),
        ("EXPIRE", "f", "100"),
        ("PEXPIRE", "f", "100000"),
        ("EXPIREAT", "f", "99999999999"),
        ("PEXPIREAT", "f", "99999999999999"),
        ("EXPIRE", "f", "100", "NX"),
        ("PERSIST", "f"),
        ("PERSIST", "f"),
        ("COPY", "f", "g"),
        ("COPY", "f", "g", "REPLACE"),
        ("MOVE", "g", "1"),
        ("EXPIRE", "f", "-1"),
        ("SET", "h", "1"),
        ("PEXPIREAT", "h", "1"),
        ("TOUCH", "e"),
        ("FLUSHDB",),
    ], [
        (0, "del", "a"), (0, "del", "b"), (0, "del", "a"), (0, "rename_from", "c"),
        (0, "rename_to", "d"), (0, "rename_from", "d"), (0, "rename_to", "f"),
        (0, "expire", "f"), (0, "expire", "f"), (0, "expire", "f"), (0, "expire", "f"),
        (0, "persist", "f"), (0, "copy_to", "g"), (0, "copy_to", "g"), (0, "move_from", "g"),
        (1, "move_to", "g"), (0, "del", "f"), (0, "del", "h"),
    ]),
    "lists": ("El", [], [
        ("LPUSH", "l", "a", "b"),
        ("RPUSH", "l", "c"),
        ("LPUSHX", "l", "d"),
        ("RPUSHX", "l", "e"),
        ("LPUSHX", "none", "d"),
        ("LINSERT", "l", "BEFORE", "c", "x"),
        ("LINSERT", "l", "BEFORE", "zz", "x"),
        ("LSET", "l", "0", "D"),
        ("LREM", "l", "0", "x"),
        ("LREM", "l", "0", "nope"),
        ("LTRIM", "l", "0", "3"),
        ("LPOP", "l"),
        ("RPOP", "l", "2"),
        ("RPOPLPUSH", "l", "m"),
        ("RPUSH", "m", "1", "2", "3"),
        ("LMOVE", "m", "n", "LEFT", "RIGHT"),
        ("LMPOP", "1", "m", "RIGHT", "COUNT", "1"),
        ("BLPOP", "m", "0"),
        ("BRPOP", "n", "0"),
        ("BLMOVE", "none", "m", "LEFT", "LEFT", "0.01"),
        ("LRANGE", "m", "0", "-1"),
    ], [
        (0, "lpush", "l"), (0, "rpush", "l"), (0, "lpush", "l"), (0, "rpush", "l"),
        (0, "linsert", "l"), (0, "lset", "l"), (0, "lrem", "l"), (0, "ltrim", "l"),
        (0, "lpop", "l"), (0, "rpop", "l"), (0, "lpush", "m"), (0, "rpop", "l"),
        (0, "rpush", "m"), (0, "rpush", "n"), (0, "lpop", "m"), (0, "rpop", "m"),
        (0, "lpop", "m"), (0, "rpop", "n"),
    ]),
    "lists_emptied": ("Elg", [("RPUSH", "l", "a", "b", "c")], [
        ("LTRIM", "l", "5", "10"),
        ("RPUSH", "l", "a", "b"),
        ("LREM", "l", "0", "a"),
        ("LMOVE", "l", "l2", "LEFT", "LEFT"),
        ("LPOP", "l2", "5"),
        ("RPUSH", "l", "a"),
        ("RPOPLPUSH", "l", "l"),
        ("LPOP", "l"),
    ], [
        (0, "ltrim", "l"), (0, "del", "l"), (0, "rpush", "l"), (0, "lrem", "l"),
        (0, "lpush", "l2"), (0, "lpop", "l"), (0, "del", "l"), (0, "lpop", "l2"),
        (0, "del", "l2"), (0, "rpush", "l"), (0, "lpush", "l"), (0, "rpop", "l"),
        (0, "lpop", "l"), (0, "del", "l"),
    ]),
    "new": ("En", [("SET", "old", "1")], [
        ("SET", "old", "2"),
        ("SET", "fresh", "1"),
        ("RPUSH", "list", "a"),
        ("RPUSH", "list", "b"),
        ("INCR", "counter"),
        ("APPEND", "app", "x"),
        ("GET", "missing"),
    ], [
        (0, "new", "fresh"), (0, "new", "list"), (0, "new", "counter"), (0, "new", "app"),
    ]),
    "keymiss": ("Em", [("SET", "here", "1")], [
        ("GET", "missing"),
        ("GET", "here"),
        ("MGET", "here", "m1", "m2"),
        ("LRANGE", "nolist", "0", "-1"),
        ("STRLEN", "m3"),
        ("SET", "w", "1"),
        ("DEL", "nokey"),
    ], [
        (0, "keymiss", "missing"), (0, "keymiss", "m1"), (0, "keymiss", "m2"),
        (0, "keymiss", "nolist"), (0, "keymiss", "m3"),
    ]),
    "all_excludes_new_and_keymiss": ("EA", [], [
        ("GET", "missing"),
        ("SET", "k", "v"),
        ("LPUSH", "l", "x"),
        ("DEL", "k"),
    ], [
        (0, "set", "k"), (0, "lpush", "l"), (0, "del", "k"),
    ]),
    "class_filter": ("Eg", [], [
        ("SET", "k", "v"),
        ("LPUSH", "l", "x"),
        ("DEL", "k", "l"),
    ], [
        (0, "del", "k"), (0, "del", "l"),
    ]),
}


def run_scenario(handle, name):
    flags, setup, commands, _ = SCENARIOS[name]
    return run_events(handle, flags, setup, commands)


def run_events(handle, flags, setup, commands, keyspace=False):
    """The events `commands` publish with notify-keyspace-events `flags`, after `setup`; a
    command's error is ignored."""
    r = handle.client()
    r.flushall()
    r.config_set("notify-keyspace-events", "")
    for command in setup:
        r.execute_command(*command)
    log = EventLog(handle)
    try:
        r.config_set("notify-keyspace-events", flags)
        for command in commands:
            try:
                r.execute_command(*command)
            except redis.ResponseError:
                pass
        return log.collect(keyspace=keyspace)
    finally:
        r.config_set("notify-keyspace-events", "")
        log.close()
        r.close()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_keyevents(server, name):
    assert run_scenario(server, name) == SCENARIOS[name][3]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_keyevents_match_redis(ref, name):
    if ref is None:
        pytest.skip("redis-server not installed")
    assert run_scenario(ref, name) == SCENARIOS[name][3]


def test_keyspace_channel_format(server, r):
    log = EventLog(server)
    try:
        r.config_set("notify-keyspace-events", "K$")
        r.set("key:1", "v")
        r.execute_command("SELECT", "3")
        r.set("x", "y")
        assert log.collect(keyspace=True) == [(0, "key:1", "set"), (3, "x", "set")]
        assert log.collect() == []
        r.config_set("notify-keyspace-events", "KE$")
        r.set("both", "w")
        events = []
        log.client.publish(SENTINEL, "end")
        while True:
            m = log.pubsub.get_message(timeout=5)
            if m["channel"] == SENTINEL.encode():
                break
            events.append((m["channel"], m["data"]))
        assert events == [(b"__keyspace@3__:both", b"set"), (b"__keyevent@3__:set", b"both")]
    finally:
        r.config_set("notify-keyspace-events", "")
        r.execute_command("SELECT", "0")
        log.close()


def test_expired_lazily(server, r):
    log = EventLog(server)
    try:
        try:
            r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "0")
        except redis.ResponseError:
            pytest.skip("DEBUG disabled (redis-server without enable-debug-command)")
        r.config_set("notify-keyspace-events", "Ex")
        r.set("gone", "v", px=1)
        wait_for(lambda: r.pttl("gone") in (-2, -1) or r.exists("gone") == 0)
        assert r.get("gone") is None
        assert log.collect() == [(0, "expired", "gone")]
    finally:
        try:
            r.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", "1")
        except redis.ResponseError:
            pass
        r.config_set("notify-keyspace-events", "")
        log.close()


def test_expired_actively(server, r):
    log = EventLog(server)
    try:
        r.config_set("notify-keyspace-events", "KEx")
        r.set("active", "v", px=20)
        # Nothing touches the key: the expiry cycle deletes it and publishes.
        events = []

        def arrived():
            m = log.pubsub.get_message(timeout=0.1)
            if m is not None:
                events.append((m["channel"], m["data"]))
            return len(events) >= 2

        wait_for(arrived, timeout=10)
        assert events == [(b"__keyspace@0__:active", b"expired"),
                          (b"__keyevent@0__:expired", b"active")]
    finally:
        r.config_set("notify-keyspace-events", "")
        log.close()


def test_config_notify_keyspace_events(r):
    try:
        for given, shown in [("KEA", "AKE"), ("Kx", "xK"), ("AKEm", "AKEm"), ("g$lshzxetd", "A"),
                             ("", ""), ("Elg", "glE")]:
            r.config_set("notify-keyspace-events", given)
            assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": shown}
        with pytest.raises(redis.ResponseError) as exc:
            r.config_set("notify-keyspace-events", "Z")
        assert str(exc.value) == (
            "CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - Invalid "
            "event class character. Use 'Ag$lshzxeKEtmdnoc'.")
    finally:
        r.config_set("notify-keyspace-events", "")


def test_no_events_when_disabled(server, r):
    log = EventLog(server)
    try:
        r.set("k", "v")
        r.delete("k")
        assert log.collect() == []
    finally:
        log.close()

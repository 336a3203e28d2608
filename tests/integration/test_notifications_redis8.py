"""Keyspace events Redis 8.2 added: "overwritten" (class o) when a write that sets a key
replaces an existing value whole, and "type_changed" (class c) when that write also changes the
key's type. Neither is part of A. Commands that change a value in place (APPEND, INCR, LPUSH...)
raise neither; a key that did not exist raises "new" instead.

Kept apart from test_notifications.py, whose scenarios also run against Redis 7.0, which has
neither class.
"""

from __future__ import annotations

import pytest

from test_notifications import run_events as events


def test_set_over_an_existing_key(server):
    got = events(server, "E$oc", [("SET", "s", "1"), ("RPUSH", "l", "a")], [
        ("SET", "s", "2"),          # same type: overwritten only
        ("SET", "l", "x"),          # list -> string: overwritten, type_changed
        ("SET", "fresh", "1"),      # new key: neither
        ("SET", "s", "3", "NX"),    # not written: nothing
    ])
    assert got == [
        (0, "overwritten", "s"), (0, "set", "s"),
        (0, "overwritten", "l"), (0, "type_changed", "l"), (0, "set", "l"),
        (0, "set", "fresh"),
    ]


def test_in_place_changes_raise_neither(server):
    got = events(server, "Eoc", [("SET", "s", "1"), ("RPUSH", "l", "a"), ("HSET", "h", "f", "v")], [
        ("APPEND", "s", "x"), ("INCR", "s"), ("SETRANGE", "s", "0", "9"), ("RPUSH", "l", "b"),
        ("HSET", "h", "f", "w"), ("EXPIRE", "s", "100"), ("SADD", "newset", "m"),
    ])
    assert got == []


def test_classes_are_separate(server):
    setup = [("SET", "s", "1"), ("RPUSH", "l", "a")]
    cmds = [("SET", "s", "2"), ("SET", "l", "x")]
    assert events(server, "Eo", setup, cmds) == [(0, "overwritten", "s"), (0, "overwritten", "l")]
    assert events(server, "Ec", setup, cmds) == [(0, "type_changed", "l")]
    # A does not include them.
    assert events(server, "EA", setup, cmds) == [(0, "set", "s"), (0, "set", "l")]


def test_keyspace_channel(server):
    got = events(server, "Koc", [("RPUSH", "k", "a")], [("SET", "k", "v")], keyspace=True)
    assert got == [(0, "k", "overwritten"), (0, "k", "type_changed")]


def test_store_commands_and_mset(server):
    got = events(server, "Eoc", [
        ("SET", "d1", "x"), ("SADD", "a", "1", "2"), ("SADD", "b", "2"), ("ZADD", "z1", "1", "m"),
        ("ZADD", "dz", "5", "q"), ("RPUSH", "src", "3", "1"), ("SET", "dl", "x"),
        ("SET", "bd", "x"), ("SET", "m1", "x"), ("RPUSH", "m2", "x"), ("SET", "gs", "x"),
    ], [
        ("SUNIONSTORE", "d1", "a", "b"),             # string -> set
        ("ZUNIONSTORE", "dz", "1", "z1"),            # zset -> zset
        ("SORT", "src", "STORE", "dl"),              # string -> list
        ("BITOP", "OR", "bd", "bd"),                 # string -> string
        ("MSET", "m1", "1", "m2", "2", "m3", "3"),   # string, list -> string, new
        ("GETSET", "gs", "y"),
        ("SUNIONSTORE", "nothing", "a"),             # new key
    ])
    assert got == [
        (0, "overwritten", "d1"), (0, "type_changed", "d1"),
        (0, "overwritten", "dz"),
        (0, "overwritten", "dl"), (0, "type_changed", "dl"),
        (0, "overwritten", "bd"),
        (0, "overwritten", "m1"), (0, "overwritten", "m2"), (0, "type_changed", "m2"),
        (0, "overwritten", "gs"),
    ]


def test_multi_and_scripts(server):
    got = events(server, "Eoc", [("SET", "k", "1"), ("RPUSH", "l", "a")], [
        ("MULTI",), ("SET", "k", "2"), ("EXEC",),
        ("EVAL", "return redis.call('SET', KEYS[1], 'v')", 1, "l"),
    ])
    assert got == [(0, "overwritten", "k"), (0, "overwritten", "l"), (0, "type_changed", "l")]


@pytest.mark.parametrize("given,shown", [
    ("Eo", "oE"), ("Ec", "cE"), ("KEnoc", "nocKE"), ("g$oc", "g$oc"),
    # A bare "A" is printed for all of A's classes and hides n, o and c, as Redis prints it;
    # they stay set (test_all_plus_o_still_fires).
    ("AKEoc", "AKE"),
])
def test_config_get_rendering(r, given, shown):
    try:
        r.config_set("notify-keyspace-events", given)
        assert r.config_get("notify-keyspace-events") == {"notify-keyspace-events": shown}
    finally:
        r.config_set("notify-keyspace-events", "")


def test_all_plus_o_still_fires(server):
    got = events(server, "AEo", [("SET", "k", "1")], [("SET", "k", "2")])
    assert got == [(0, "overwritten", "k"), (0, "set", "k")]

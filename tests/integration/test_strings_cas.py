"""Redis 8's compare-and-set strings: DIGEST, DELEX, SET IFEQ/IFNE/IFDEQ/IFDNE, MSETEX, and
Valkey's DELIFEQ. Replies in RESP2 and RESP3, errors, keyspace events, MULTI and scripts, key
specs (COMMAND GETKEYSANDFLAGS) and what reaches the AOF (the same stream replicas get)."""

import redis

from conftest import call, call_error, err, start_server, wait_for
from repl_helpers import procs, start_vireo, wait_in_sync, wait_link_up  # noqa: F401


def test_digest_is_xxh3_as_16_lowercase_hex_digits(r):
    # The example on redis.io's DIGEST page.
    r.set("k", "Hello world")
    assert r.execute_command("DIGEST", "k") == b"b6acb9d84a38ff74"
    assert r.execute_command("DIGEST", "missing") is None
    # An int-encoded value hashes its text.
    r.set("n", 12345)
    r.set("s", "12345")
    assert call(r, "DIGEST", "n") == call(r, "DIGEST", "s")
    r.rpush("l", "a")
    assert call_error(r, "DIGEST", "l").startswith("WRONGTYPE")


def test_digest_arity(raw):
    assert err(raw, "DIGEST") == "ERR wrong number of arguments for 'digest' command"
    assert err(raw, "DIGEST", "a", "b") == "ERR wrong number of arguments for 'digest' command"


def test_set_ifeq_ifne_on_existing_and_missing_keys(plain):
    # IFEQ / IFDEQ never create a key; IFNE / IFDNE do.
    assert plain.execute_command("SET", "k", "v", "IFEQ", "v") is None
    assert plain.execute_command("SET", "k", "v", "IFDEQ", "b6acb9d84a38ff74") is None
    assert not plain.exists("k")
    assert plain.execute_command("SET", "k", "v1", "IFNE", "x") == "OK"
    assert plain.execute_command("SET", "k2", "v1", "IFDNE", "0000000000000000") == "OK"
    assert plain.get("k") == "v1"
    # On an existing key the comparison decides.
    assert plain.execute_command("SET", "k", "v2", "IFEQ", "nope") is None
    assert plain.execute_command("SET", "k", "v2", "IFNE", "v1") is None
    assert plain.get("k") == "v1"
    assert plain.execute_command("SET", "k", "v2", "IFEQ", "v1") == "OK"
    assert plain.execute_command("SET", "k", "v3", "IFNE", "v1") == "OK"
    assert plain.get("k") == "v3"


def test_set_ifdeq_ifdne_compare_digests_case_insensitively(plain):
    plain.set("k", "Hello world")
    assert plain.execute_command("SET", "k", "a", "IFDNE", "b6acb9d84a38ff74") is None
    assert plain.execute_command("SET", "k", "a", "IFDEQ", "B6ACB9D84A38FF74") == "OK"
    digest = plain.execute_command("DIGEST", "k")
    assert plain.execute_command("SET", "k", "b", "IFDEQ", "0123456789abcdef") is None
    assert plain.execute_command("SET", "k", "b", "IFDEQ", digest) == "OK"
    assert plain.get("k") == "b"


def test_set_bad_digest_and_syntax_errors(raw):
    bad = "ERR must be exactly 16 hexadecimal characters"
    assert err(raw, "SET", "k", "v", "IFDEQ", "abc") == bad
    assert err(raw, "SET", "k", "v", "IFDNE", "0123456789abcdeg") == bad
    assert err(raw, "SET", "k", "v", "IFDEQ", "0123456789abcdef0") == bad
    for args in (["IFEQ"], ["IFEQ", "a", "NX"], ["XX", "IFNE", "a"], ["IFEQ", "a", "IFNE", "b"],
                 ["IFDEQ", "0123456789abcdef", "IFEQ", "a"]):
        assert err(raw, "SET", "k", "v", *args) == "ERR syntax error", args


def test_set_if_on_a_non_string_key_is_wrongtype(plain):
    plain.rpush("l", "a")
    for cond in ("IFEQ", "IFNE"):
        assert call_error(plain, "SET", "l", "v", cond, "a").startswith("WRONGTYPE")
    assert call_error(plain, "SET", "l", "v", "IFDNE", "0123456789abcdef").startswith("WRONGTYPE")
    assert plain.type("l") == "list"


def test_set_if_with_get_and_expiry(plain):
    plain.set("k", "old", ex=1000)
    # GET replies the old value whether or not the condition held.
    assert plain.execute_command("SET", "k", "new", "IFEQ", "x", "GET") == "old"
    assert plain.get("k") == "old"
    assert plain.execute_command("SET", "k", "new", "GET", "IFEQ", "old", "KEEPTTL") == "old"
    assert plain.get("k") == "new" and plain.ttl("k") > 900
    # Without KEEPTTL a successful conditional SET drops the TTL, like SET.
    assert plain.execute_command("SET", "k", "v", "IFNE", "zz") == "OK"
    assert plain.ttl("k") == -1
    assert plain.execute_command("SET", "k", "w", "IFEQ", "v", "PX", 50000) == "OK"
    assert 0 < plain.pttl("k") <= 50000
    assert plain.execute_command("SET", "missing", "w", "IFEQ", "v", "GET") is None
    assert not plain.exists("missing")


def test_set_if_resp3_null(raw):
    assert raw.execute("HELLO", "3").startswith(b"%")
    assert raw.execute("SET", "k", "v", "IFEQ", "x") == b"_\r\n"
    assert raw.execute("DIGEST", "k") == b"_\r\n"
    assert raw.execute("SET", "k", "v", "IFNE", "x") == b"+OK\r\n"
    assert raw.execute("DELEX", "k", "IFEQ", "v") == b":1\r\n"


def test_delex(r):
    assert r.execute_command("DELEX", "missing") == 0
    r.rpush("l", "a")
    assert r.execute_command("DELEX", "l") == 1  # no condition: any type
    r.set("k", "v")
    assert r.execute_command("DELEX", "k", "IFEQ", "x") == 0
    assert r.execute_command("DELEX", "k", "IFNE", "v") == 0
    assert r.execute_command("DELEX", "k", "IFDNE", r.execute_command("DIGEST", "k")) == 0
    assert r.exists("k")
    assert r.execute_command("DELEX", "k", "IFEQ", "v") == 1
    r.set("k", "v")
    assert r.execute_command("DELEX", "k", "IFDEQ", r.execute_command("DIGEST", "k")) == 1
    r.set("k", "v")
    assert r.execute_command("DELEX", "k", "IFNE", "x") == 1
    assert r.execute_command("DELEX", "k", "IFEQ", "x") == 0
    r.rpush("l", "a")
    assert call_error(r, "DELEX", "l", "IFEQ", "a").startswith("WRONGTYPE")


def test_delex_errors(raw):
    assert err(raw, "DELEX") == "ERR wrong number of arguments for 'delex' command"
    assert err(raw, "DELEX", "k", "IFEQ") == "ERR syntax error"
    assert err(raw, "DELEX", "k", "FOO", "x") == "ERR syntax error"
    assert err(raw, "DELEX", "k", "IFEQ", "a", "b") == "ERR syntax error"
    assert err(raw, "DELEX", "k", "IFDEQ", "xyz") == "ERR must be exactly 16 hexadecimal characters"


def test_delifeq(r):
    r.set("lock", "token")
    assert r.execute_command("DELIFEQ", "lock", "other") == 0
    assert r.execute_command("DELIFEQ", "lock", "token") == 1
    assert r.execute_command("DELIFEQ", "lock", "token") == 0
    r.sadd("s", "token")
    assert call_error(r, "DELIFEQ", "s", "token").startswith("WRONGTYPE")


def test_msetex(r):
    assert r.execute_command("MSETEX", 2, "a", "1", "b", "2", "EX", 100) == 1
    assert r.mget("a", "b") == [b"1", b"2"] and 90 < r.ttl("b") <= 100
    # NX: only when none exists; XX: only when all exist.
    assert r.execute_command("MSETEX", 2, "a", "x", "c", "y", "NX") == 0
    assert r.execute_command("MSETEX", 2, "a", "x", "c", "y", "XX") == 0
    assert not r.exists("c") and r.get("a") == b"1"
    assert r.execute_command("MSETEX", 2, "c", "3", "d", "4", "NX", "PX", 100000) == 1
    # Options in any order; KEEPTTL keeps each key's TTL.
    assert r.execute_command("MSETEX", 2, "a", "5", "b", "6", "KEEPTTL", "XX") == 1
    assert r.get("a") == b"5" and r.ttl("a") > 90
    # No expiry option: like MSET, TTLs are dropped.
    assert r.execute_command("MSETEX", 1, "a", "7") == 1
    assert r.ttl("a") == -1
    # Overwrites any type, as SET.
    r.rpush("l", "x")
    assert r.execute_command("MSETEX", 1, "l", "s") == 1 and r.get("l") == b"s"


def test_msetex_errors(raw):
    assert err(raw, "MSETEX", 1, "a") == "ERR wrong number of arguments for 'msetex' command"
    assert err(raw, "MSETEX", 2, "a", "1", "b") == "ERR wrong number of key-value pairs"
    assert err(raw, "MSETEX", 0, "a", "1") == "ERR invalid numkeys value"
    assert err(raw, "MSETEX", "x", "a", "1") == "ERR invalid numkeys value"
    assert err(raw, "MSETEX", 1, "a", "1", "NX", "XX") == "ERR syntax error"
    assert err(raw, "MSETEX", 1, "a", "1", "EX", 1, "PX", 1) == "ERR syntax error"
    assert err(raw, "MSETEX", 1, "a", "1", "EX", 1, "KEEPTTL") == "ERR syntax error"
    assert err(raw, "MSETEX", 1, "a", "1", "FOO") == "ERR syntax error"
    assert err(raw, "MSETEX", 1, "a", "1", "EX", 0) == "ERR invalid expire time in 'msetex' command"
    assert err(raw, "MSETEX", 1, "a", "1", "EX", "x") == "ERR value is not an integer or out of range"
    assert err(raw, "MSETEX", 1, "a", "1", "PX", 2**63 - 1) == \
        "ERR invalid expire time in 'msetex' command"


def test_msetex_past_time_expires_the_keys(r):
    assert r.execute_command("MSETEX", 2, "a", "1", "b", "2", "PXAT", 1) == 1
    assert r.exists("a", "b") == 0


def test_keys_of_the_new_commands(plain):
    assert plain.execute_command("COMMAND", "GETKEYS", "MSETEX", 3, "a", 1, "", 2, "c", 3, "NX") == \
        ["a", "", "c"]
    assert plain.execute_command("COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v", "IFEQ", "x") == \
        [["k", ["RW", "access", "update"]]]
    assert plain.execute_command("COMMAND", "GETKEYSANDFLAGS", "SET", "k", "v") == \
        [["k", ["OW", "update"]]]
    assert plain.execute_command("COMMAND", "GETKEYS", "DELEX", "k", "IFEQ", "v") == ["k"]


def test_keyspace_events(server):
    c = server.client()
    c.flushall()
    c.config_set("notify-keyspace-events", "KEA")
    p = c.pubsub()
    p.psubscribe("__keyspace@0__:*")
    p.get_message(timeout=1)
    try:
        c.execute_command("SET", "k", "v", "IFNE", "x")
        c.execute_command("SET", "k", "w", "IFEQ", "nope")  # no event: not set
        c.execute_command("MSETEX", 1, "m", "1", "EX", 100)
        c.execute_command("DELEX", "k", "IFEQ", "nope")  # no event
        c.execute_command("DELEX", "k", "IFEQ", "v")
        c.execute_command("INCREX", "n", "EX", 100)
        c.execute_command("INCREX", "n", "BYINT", 5, "UBOUND", 2)  # skipped: no event
        c.execute_command("INCREX", "f", "BYFLOAT", "0.5", "PERSIST")
        c.execute_command("DELIFEQ", "n", "1")
        events = []
        wait_for(lambda: (m := p.get_message(timeout=0.1)) is None and len(events) >= 8
                 or (m is not None and events.append((m["channel"], m["data"])) and False),
                 timeout=5)
        assert events == [(b"__keyspace@0__:k", b"set"), (b"__keyspace@0__:m", b"set"),
                          (b"__keyspace@0__:m", b"expire"), (b"__keyspace@0__:k", b"del"),
                          (b"__keyspace@0__:n", b"incrby"), (b"__keyspace@0__:n", b"expire"),
                          (b"__keyspace@0__:f", b"incrbyfloat"), (b"__keyspace@0__:n", b"del")]
    finally:
        c.config_set("notify-keyspace-events", "")
        p.close()
        c.close()


def test_multi_and_scripts(plain):
    plain.set("k", "v")
    pipe = plain.pipeline(transaction=True)
    pipe.execute_command("SET", "k", "w", "IFEQ", "v", "GET")
    pipe.execute_command("DIGEST", "k")
    pipe.execute_command("DELEX", "k", "IFEQ", "w")
    pipe.execute_command("MSETEX", 1, "m", "1", "PX", 100000)
    replies = pipe.execute()
    assert replies[0] == "v" and len(replies[1]) == 16 and replies[2:] == [1, 1]
    assert not plain.exists("k") and plain.get("m") == "1"
    script = "redis.call('SET', KEYS[1], 'a'); return redis.call('DELEX', KEYS[1], 'IFEQ', ARGV[1])"
    assert plain.eval(script, 1, "s", "a") == 1
    assert plain.eval("return redis.call('DIGEST', KEYS[1])", 1, "m") == \
        plain.execute_command("DIGEST", "m")


def test_acl_categories(r):
    string_cmds = set(r.acl_cat("string"))
    assert {"digest", "delex", "msetex", "delifeq"} <= string_cmds
    assert "digest" in set(r.acl_cat("read")) and "delex" in set(r.acl_cat("write"))
    assert "msetex" in set(r.acl_cat("slow")) and "delex" in set(r.acl_cat("fast"))
    # A user without @string can't run them.
    r.acl_setuser("nostr", enabled=True, nopass=True, commands=["+@all", "-@string"], keys=["*"])
    user = redis.Redis(host=r.connection_pool.connection_kwargs["host"],
                       port=r.connection_pool.connection_kwargs["port"],
                       username="nostr", password="x")
    try:
        for cmd in (["DIGEST", "k"], ["DELEX", "k"], ["MSETEX", 1, "k", "v"],
                    ["DELIFEQ", "k", "v"]):
            assert "no permissions" in call_error(user, *cmd)
    finally:
        user.close()
        r.acl_deluser("nostr")


def _aof_commands(path):
    """The commands in an AOF incr file, as lists of bytes."""
    data = path.read_bytes()
    out, i = [], 0
    while i < len(data):
        assert data[i:i + 1] == b"*"
        j = data.index(b"\r\n", i)
        n = int(data[i + 1:j])
        i = j + 2
        cmd = []
        for _ in range(n):
            j = data.index(b"\r\n", i)
            size = int(data[i + 1:j])
            cmd.append(data[j + 2:j + 2 + size])
            i = j + 4 + size
        out.append(cmd)
    return [c for c in out if c[0].upper() not in (b"SELECT", b"MULTI", b"EXEC")]


def test_propagation_is_unconditional(tmp_path):
    handle = start_server(["--dir", str(tmp_path), "--appendonly", "yes",
                           "--appendfsync", "always", "--aof-use-rdb-preamble", "yes"])
    try:
        c = handle.client()
        c.execute_command("SET", "k", "v", "IFNE", "x")
        c.execute_command("SET", "k", "w", "IFEQ", "nope")  # not set: not logged
        c.execute_command("SET", "k", "w", "IFEQ", "v", "KEEPTTL")
        c.execute_command("SET", "k", "x", "IFDEQ", c.execute_command("DIGEST", "k"), "EX", 100)
        c.execute_command("DELEX", "k", "IFEQ", "nope")  # not deleted: not logged
        c.execute_command("DELEX", "k", "IFEQ", "x")
        c.execute_command("DELIFEQ", "missing", "x")
        c.execute_command("MSETEX", 2, "a", "1", "b", "2", "NX", "EX", 100)
        c.execute_command("MSETEX", 1, "a", "3", "XX", "KEEPTTL")
        incr = next((tmp_path / "appendonlydir").glob("*.incr.aof"))
        wait_for(lambda: len(_aof_commands(incr)) >= 6, timeout=5)
        cmds = _aof_commands(incr)
        assert cmds[0] == [b"SET", b"k", b"v"]
        assert cmds[1] == [b"SET", b"k", b"w", b"KEEPTTL"]
        assert cmds[2][:4] == [b"SET", b"k", b"x", b"PXAT"]
        assert cmds[3] == [b"DEL", b"k"]
        assert cmds[4][:7] == [b"MSETEX", b"2", b"a", b"1", b"b", b"2", b"PXAT"]
        assert cmds[5] == [b"MSETEX", b"1", b"a", b"3", b"KEEPTTL"]
        assert len(cmds) == 6
        c.close()
    finally:
        handle.stop()


def test_aof_replay_restores_the_state(tmp_path):
    args = ["--dir", str(tmp_path), "--appendonly", "yes", "--appendfsync", "always"]
    handle = start_server(args)
    c = handle.client()
    c.execute_command("SET", "k", "v", "IFNE", "x", "EX", 1000)
    c.execute_command("MSETEX", 2, "a", "1", "b", "2", "PX", 1000000)
    c.execute_command("DELEX", "b", "IFEQ", "2")
    c.close()
    handle.stop()
    handle = start_server(args)
    try:
        c = handle.client()
        assert c.get("k") == b"v" and c.ttl("k") > 900
        assert c.get("a") == b"1" and c.ttl("a") > 900 and not c.exists("b")
        c.close()
    finally:
        handle.stop()


# INCREX (Redis 8.8): [new value, applied increment], bounds, SATURATE, TTL options.

def test_increx_examples_from_redis_docs(r):
    assert r.execute_command("INCREX", "c") == [1, 1]
    assert r.execute_command("INCREX", "c") == [2, 1]
    r.set("n", 100)
    assert r.execute_command("INCREX", "n", "BYINT", 5) == [105, 5]
    assert r.execute_command("INCREX", "n", "BYINT", -10) == [95, -10]
    r.set("f", 1.5)
    assert r.execute_command("INCREX", "f", "BYFLOAT", "0.25") == [b"1.75", b"0.25"]
    assert r.execute_command("INCREX", "e", "BYINT", 1, "EX", 100) == [1, 1]
    assert r.ttl("e") == 100
    r.set("w", 10)
    assert r.execute_command("INCREX", "w", "BYINT", 1, "EX", 100, "ENX") == [11, 1]
    assert r.ttl("w") == 100
    r.set("w", 10, ex=500)
    assert r.execute_command("INCREX", "w", "BYINT", 1, "EX", 10, "ENX") == [11, 1]
    assert r.ttl("w") > 400
    r.set("p", 5, ex=1000)
    assert r.execute_command("INCREX", "p", "BYINT", 1, "PERSIST") == [6, 1]
    assert r.ttl("p") == -1
    # No expiration option keeps the TTL.
    r.set("k", 1, ex=1000)
    assert r.execute_command("INCREX", "k") == [2, 1] and r.ttl("k") > 900


def test_increx_bounds_and_saturate(r):
    # Out of bounds: skipped, [current, 0], nothing created or changed.
    assert r.execute_command("INCREX", "b", "BYINT", 5, "UBOUND", 3) == [0, 0]
    assert not r.exists("b")
    assert r.execute_command("INCREX", "b", "BYINT", 5, "UBOUND", 3, "SATURATE") == [3, 3]
    assert r.execute_command("INCREX", "b", "BYINT", -10, "LBOUND", -2, "SATURATE") == [-2, -5]
    r.set("t", 7, ex=1000)
    assert r.execute_command("INCREX", "t", "BYINT", 5, "UBOUND", 10, "PERSIST") == [7, 0]
    assert r.ttl("t") > 900  # untouched when skipped
    # The type limits are the default bounds.
    r.set("big", 2**63 - 1)
    assert r.execute_command("INCREX", "big") == [2**63 - 1, 0]
    assert r.execute_command("INCREX", "big", "BYINT", 1, "SATURATE") == [2**63 - 1, 0]
    r.set("small", -2**63)
    assert r.execute_command("INCREX", "small", "BYINT", -1) == [-2**63, 0]
    assert r.execute_command("INCREX", "fb", "BYFLOAT", "2.5", "UBOUND", "1.5", "SATURATE") == \
        [b"1.5", b"1.5"]
    assert r.execute_command("INCREX", "fb", "BYFLOAT", "-5", "LBOUND", "0") == [b"1.5", b"0"]


def test_increx_errors(raw):
    assert err(raw, "INCREX") == "ERR wrong number of arguments for 'increx' command"
    assert err(raw, "INCREX", "k", "LBOUND", 5, "UBOUND", 1) == \
        "ERR LBOUND can't be greater than UBOUND"
    assert err(raw, "INCREX", "k", "ENX") == "ERR ENX flag requires an expiration"
    for args in (["PERSIST", "ENX", "EX", 1], ["EX", 1, "PERSIST"], ["BYINT"], ["FOO"],
                 ["BYINT", 1, "BYFLOAT", 1], ["EX", 1, "PX", 1]):
        assert err(raw, "INCREX", "k", *args) == "ERR syntax error", args
    assert err(raw, "INCREX", "k", "BYINT", "1.5") == "ERR value is not an integer or out of range"
    assert err(raw, "INCREX", "k", "BYFLOAT", "x") == "ERR value is not a valid float"
    assert err(raw, "INCREX", "k", "EX", 0) == "ERR invalid expire time in 'increx' command"
    raw.execute("SET", "f", "1.5")
    assert err(raw, "INCREX", "f") == "ERR value is not an integer or out of range"
    assert err(raw, "INCREX", "f", "BYFLOAT", "1e5000") == "ERR value is not a valid float"
    raw.execute("RPUSH", "l", "a")
    assert err(raw, "INCREX", "l").startswith("WRONGTYPE")


def test_increx_resp3_and_propagation(tmp_path):
    handle = start_server(["--dir", str(tmp_path), "--appendonly", "yes",
                           "--appendfsync", "always"])
    try:
        raw = handle.raw()
        raw.execute("HELLO", "3")
        assert raw.execute("INCREX", "c", "BYINT", 2) == b"*2\r\n:2\r\n:2\r\n"
        assert raw.execute("INCREX", "f", "BYFLOAT", "0.5", "PX", 100000) == \
            b"*2\r\n$3\r\n0.5\r\n$3\r\n0.5\r\n"
        raw.execute("INCREX", "c", "BYINT", 5, "UBOUND", 3)  # skipped: not logged
        raw.execute("INCREX", "c", "PERSIST")
        raw.close()
        incr = next((tmp_path / "appendonlydir").glob("*.incr.aof"))
        wait_for(lambda: len(_aof_commands(incr)) >= 3, timeout=5)
        cmds = _aof_commands(incr)
        assert cmds[0] == [b"SET", b"c", b"2", b"KEEPTTL"]
        assert cmds[1][:4] == [b"SET", b"f", b"0.5", b"PXAT"]
        assert cmds[2] == [b"SET", b"c", b"3"]
        assert len(cmds) == 3
    finally:
        handle.stop()


def test_replica_applies_the_outcomes(procs):  # noqa: F811
    master = start_vireo(procs)
    replica = start_vireo(procs, "--replicaof", "127.0.0.1", master.port)
    m = master.client(decode_responses=True)
    s = replica.client(decode_responses=True)
    wait_link_up(s)
    m.set("lock", "me", ex=1000)
    m.execute_command("SET", "lock", "you", "IFEQ", "me", "KEEPTTL")
    m.execute_command("SET", "cas", "1", "IFNE", "x", "PX", 500000)
    m.execute_command("MSETEX", 2, "a", "1", "b", "2", "NX", "EX", 1000)
    m.execute_command("INCREX", "n", "BYINT", 7, "EX", 1000)
    m.execute_command("INCREX", "n", "BYINT", 100, "UBOUND", 10, "SATURATE")
    m.execute_command("INCREX", "f", "BYFLOAT", "0.1")
    m.set("gone", "v")
    m.execute_command("DELEX", "gone", "IFDEQ", m.execute_command("DIGEST", "gone"))
    m.set("gone2", "v")
    m.execute_command("DELIFEQ", "gone2", "v")
    wait_in_sync(m, s)
    for key in ("lock", "cas", "a", "b", "n", "f"):
        assert s.get(key) == m.get(key), key
        assert abs(s.pexpiretime(key) - m.pexpiretime(key)) == 0, key
    assert s.get("lock") == "you" and s.get("n") == "10" and s.ttl("n") > 900
    assert s.exists("gone", "gone2") == 0

"""Redirections on a real cluster-mode server, without the bus: the node starts from a nodes.conf
that names a second master owning slots 8192-16383, so every rule of Redis 7.2's routing can be
driven from one process: -MOVED, -CROSSSLOT, -ASK and -TRYAGAIN while a slot migrates, ASKING on
an importing slot, -CLUSTERDOWN for a slot nobody serves, MULTI/EXEC and scripts checked as a
whole, and a client blocked on a key whose slot moves away told where it went."""

from __future__ import annotations

import shutil
import socket
import tempfile
import time
from pathlib import Path

import pytest
import redis

from conftest import start_server, wait_for

ME = "a" * 40
OTHER = "b" * 40
OTHER_ADDR = "127.0.0.1:7001"


def slot_of(client, key: str) -> int:
    return client.execute_command("CLUSTER", "KEYSLOT", key)


def key_in(client, lo: int, hi: int, prefix: str = "k") -> str:
    for i in range(100000):
        key = f"{prefix}{i}"
        if lo <= slot_of(client, key) <= hi:
            return key
    raise AssertionError("no key found")


@pytest.fixture
def node():
    workdir = Path(tempfile.mkdtemp(prefix="vireo-redirect-"))
    conf = workdir / "nodes.conf"
    conf.write_text(
        f"{ME} 127.0.0.1:0@0 myself,master - 0 0 1 connected 0-8191\n"
        f"{OTHER} {OTHER_ADDR}@17001 master - 0 0 2 connected 8192-16383\n"
        "vars currentEpoch 2 lastVoteEpoch 0\n")
    handle = start_server(["--cluster-enabled", "yes", "--cluster-config-file", str(conf),
                           "--cluster-node-timeout", "600000"])
    try:
        yield handle
    finally:
        handle.stop()
        handle.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def c(node):
    client = node.client(decode_responses=True)
    client.response_callbacks.clear()
    wait_for(lambda: "cluster_state:ok" in client.execute_command("CLUSTER", "INFO"),
             timeout=15, message="cluster_state never turned ok")
    yield client
    client.close()


def error_of(client, *args) -> str:
    with pytest.raises(redis.ResponseError) as info:
        client.execute_command(*args)
    return str(info.value)


def raw(port: int, payload: bytes, expect_lines: int = 1) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(payload)
        data = b""
        while data.count(b"\r\n") < expect_lines:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        return data


def test_moved_and_served(node, c):
    mine, theirs = key_in(c, 0, 8191), key_in(c, 8192, 16383)
    assert c.execute_command("SET", mine, "v") == "OK"
    assert c.execute_command("GET", mine) == "v"
    # The exact wire form clients parse.
    slot = slot_of(c, theirs)
    cmd = f"*2\r\n$3\r\nGET\r\n${len(theirs)}\r\n{theirs}\r\n".encode()
    assert raw(node.port, cmd) == f"-MOVED {slot} {OTHER_ADDR}\r\n".encode()
    # Commands without keys run anywhere.
    assert c.execute_command("PING") == "PONG"


def test_crossslot_and_hash_tags(c):
    assert error_of(c, "MSET", "a", "1", "b", "2").startswith(
        "CROSSSLOT Keys in request don't hash to the same slot")
    slot = slot_of(c, "{user1}")
    tagged = ["{user1}.a", "1", "{user1}.b", "2"]
    if slot <= 8191:
        assert c.execute_command("MSET", *tagged) == "OK"
    else:
        assert error_of(c, "MSET", *tagged).startswith(f"MOVED {slot} ")


def test_select_and_friends_refused(c):
    assert error_of(c, "SELECT", "1") == "SELECT is not allowed in cluster mode"
    assert c.execute_command("SELECT", "0") == "OK"


def test_slot_not_served_is_clusterdown(c):
    key = key_in(c, 8192, 16383)
    slot = slot_of(c, key)
    assert c.execute_command("CONFIG", "SET", "cluster-require-full-coverage", "no") == "OK"
    assert c.execute_command("CLUSTER", "DELSLOTS", str(slot)) == "OK"
    # DELSLOTS only forgets the slot here (it was never ours): nobody serves it now.
    assert error_of(c, "GET", key) == "CLUSTERDOWN Hash slot not served"


def test_migrating_slot_ask_and_tryagain(c):
    key = key_in(c, 0, 8191)
    slot = slot_of(c, key)
    present, missing = f"{{{key}}}present", f"{{{key}}}missing"
    assert slot_of(c, present) == slot_of(c, missing) == slot_of(c, key)
    c.execute_command("SET", present, "here")
    assert c.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", OTHER) == "OK"
    # A key still here is served; a missing one is asked for on the target.
    assert c.execute_command("GET", present) == "here"
    assert error_of(c, "GET", missing) == f"ASK {slot} {OTHER_ADDR}"
    # Several keys, some gone: the client must retry once the move is done.
    assert error_of(c, "MGET", present, missing).startswith("TRYAGAIN")
    assert c.execute_command("CLUSTER", "SETSLOT", slot, "STABLE") == "OK"
    assert c.execute_command("GET", missing) is None


def test_key_expired_since_the_last_command_is_asked_for(c):
    """unit/cluster/misc: a key whose TTL passed counts as missing in a migrating slot, even
    when no command ran since it expired (the redirect reads the clock afresh)."""
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 0)
    key = key_in(c, 0, 8191)
    slot = slot_of(c, key)
    c.execute_command("SET", key, "v", "PX", 20)
    assert c.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", OTHER) == "OK"
    # The time passing is what is tested: no command may run meanwhile (each reads the clock).
    time.sleep(0.05)
    assert error_of(c, "GET", key) == f"ASK {slot} {OTHER_ADDR}"
    c.execute_command("DEBUG", "SET-ACTIVE-EXPIRE", 1)


def test_slot_migrating_to_myself_is_served(c):
    # SETSLOT MIGRATING to this very node: Redis's -ASK would name this node, so it serves the
    # request; only a multi-key request with some keys gone still gets -TRYAGAIN.
    key = key_in(c, 0, 8191)
    slot = slot_of(c, key)
    present, missing = f"{{{key}}}present", f"{{{key}}}missing"
    c.execute_command("SET", present, "here")
    assert c.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ME) == "OK"
    assert c.execute_command("GET", missing) is None
    assert c.execute_command("SET", missing, "new") == "OK"
    assert c.execute_command("MGET", present, missing) == ["here", "new"]
    assert error_of(c, "MGET", present, f"{{{key}}}gone").startswith("TRYAGAIN")
    assert c.execute_command("CLUSTER", "SETSLOT", slot, "STABLE") == "OK"


def test_sort_patterns_refused(c):
    key = key_in(c, 0, 8191)
    c.execute_command("RPUSH", key, "2", "1")
    assert error_of(c, "SORT", key, "BY", "w_*") == "BY option of SORT denied in Cluster mode."
    assert error_of(c, "SORT", key, "GET", "#") == "GET option of SORT denied in Cluster mode."
    # A BY pattern without '*' only means "don't sort": allowed.
    assert c.execute_command("SORT", key, "BY", "nosort") == ["2", "1"]


def test_importing_slot_needs_asking(node, c):
    key = key_in(c, 8192, 16383)
    slot = slot_of(c, key)
    assert c.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", OTHER) == "OK"
    assert error_of(c, "SET", key, "v").startswith(f"MOVED {slot} ")
    # ASKING covers exactly the next command.
    reply = raw(node.port,
                b"*1\r\n$6\r\nASKING\r\n"
                + f"*3\r\n$3\r\nSET\r\n${len(key)}\r\n{key}\r\n$1\r\nv\r\n".encode()
                + f"*2\r\n$3\r\nGET\r\n${len(key)}\r\n{key}\r\n".encode(), expect_lines=3)
    assert reply == f"+OK\r\n+OK\r\n-MOVED {slot} {OTHER_ADDR}\r\n".encode()


def test_transaction_checked_as_a_whole(c):
    mine, theirs = key_in(c, 0, 8191), key_in(c, 8192, 16383)
    # Each queued command is checked as it is queued (a -MOVED flags the transaction) ...
    pipe = c.pipeline(transaction=True)
    pipe.execute_command("SET", mine, "1")
    pipe.execute_command("SET", theirs, "2")
    with pytest.raises(redis.ResponseError) as info:
        pipe.execute()
    assert f"MOVED {slot_of(c, theirs)} {OTHER_ADDR}" in str(info.value)
    assert c.execute_command("EXISTS", mine) == 0
    # ... and EXEC checks them together: two of our slots in one transaction are refused.
    other_mine = next(k for k in (key_in(c, 0, 8191, p) for p in "xyzw")
                      if slot_of(c, k) != slot_of(c, mine))
    pipe = c.pipeline(transaction=True)
    pipe.execute_command("SET", mine, "1")
    pipe.execute_command("SET", other_mine, "2")
    with pytest.raises(redis.ResponseError) as info:
        pipe.execute()
    assert str(info.value).startswith("CROSSSLOT"), str(info.value)
    assert c.execute_command("EXISTS", mine) == c.execute_command("EXISTS", other_mine) == 0


def test_scripts_checked(c):
    mine, theirs = key_in(c, 0, 8191), key_in(c, 8192, 16383)
    assert c.execute_command("EVAL", "return redis.call('SET', KEYS[1], 'x')", 1, mine) == "OK"
    assert error_of(c, "EVAL", "return 1", 1, theirs).startswith(
        f"MOVED {slot_of(c, theirs)} ")
    # A key the script did not declare, in a slot served elsewhere.
    err = error_of(c, "EVAL", "return redis.call('GET', ARGV[1])", 0, theirs)
    assert "Script attempted to access a non local key in a cluster node" in err, err
    # Undeclared local keys of another slot: refused with a shebang, allowed without (Redis keeps
    # pre-7.0 scripts working).
    other_mine = next(k for k in (key_in(c, 0, 8191, p) for p in "xyzw")
                      if slot_of(c, k) != slot_of(c, mine))
    script = "redis.call('GET', KEYS[1]); return redis.call('GET', ARGV[1])"
    assert c.execute_command("EVAL", script, 1, mine, other_mine) is None
    err = error_of(c, "EVAL", "#!lua\n" + script, 1, mine, other_mine)
    assert "Script attempted to access keys that do not hash to the same slot" in err, err


def test_blocked_client_is_redirected_when_its_slot_moves(node, c):
    key = key_in(c, 0, 8191)
    slot = slot_of(c, key)
    blocked = node.client(decode_responses=True)
    blocked.response_callbacks.clear()
    waiter_id = blocked.execute_command("CLIENT", "ID")
    conn = blocked.connection_pool.get_connection("BLPOP")
    conn.send_command("BLPOP", key, 0)
    wait_for(lambda: c.execute_command("CLIENT", "LIST", "ID", waiter_id).find("cmd=blpop") >= 0,
             timeout=5, message="the client never blocked")
    assert c.execute_command("CLUSTER", "SETSLOT", slot, "NODE", OTHER) == "OK"
    with pytest.raises(redis.ResponseError) as info:
        conn.read_response()
    assert str(info.value) == f"MOVED {slot} {OTHER_ADDR}"
    blocked.connection_pool.release(conn)
    blocked.close()

"""A 6-node cluster (3 masters + 3 replicas) driven by redis-py's RedisCluster (python3-redis
4.3.4) and by plain connections to single nodes: thousands of keys across slots, MOVED with a
stale slot map, ASK (and TRYAGAIN) while a slot is half migrated by hand (SETSLOT IMPORTING /
MIGRATING + MIGRATE), CROSSSLOT for commands, transactions and scripts, a hash-tagged MULTI/EXEC,
Lua with hash-tagged keys, a blocking pop woken by another client, classic PUBLISH reaching
subscribers on every node over the bus, and SPUBLISH/SSUBSCRIBE kept within the shard.

Runs against $VIREO_CLUSTER_NODE_BINARY (e.g. redis-server) or vireo; see cluster_helpers."""

from __future__ import annotations

import threading

import pytest
import redis

# module_cluster and six_nodes are fixtures: importing them is what makes them visible here.
from cluster_helpers import (HOST, get_all, info_dict, keys_in_slots, migrate_slot,  # noqa: F401
                             module_cluster, needs_redis, parse_nodes_self, set_all, six_nodes,
                             slot_map, sum_dbsize, tag_for_slot, wait_for)
from conftest import RawConnection

pytestmark = needs_redis


@pytest.fixture(scope="module")
def cl(six_nodes):  # noqa: F811
    return six_nodes


def masters_by_id(cl):
    return {parse_nodes_self(m)["id"]: m for m in cl.masters()}


def owner_of(cl, slot):
    return masters_by_id(cl)[slot_map(cl.masters()[0])[slot]]


def error_of(node, *args) -> str:
    try:
        reply = node.call(*args)
    except redis.ResponseError as exc:
        return str(exc)
    raise AssertionError(f"{args} answered {reply!r}, not an error")


def raw_error(port, *args) -> bytes:
    """One command over a raw socket; redis-py would follow or rewrap some cluster errors."""
    with RawConnection(HOST, port) as c:
        reply = c.execute(*args)
    assert reply.startswith(b"-"), reply
    return reply[1:].rstrip(b"\r\n")


def test_thousands_of_keys_across_slots(cl):
    rc = cl.cluster_client()
    before = sum_dbsize(cl.masters())
    keys = [f"bulk:{i}" for i in range(5000)]
    set_all(rc, keys)
    assert get_all(rc, keys) == keys
    assert sum_dbsize(cl.masters()) - before == len(keys)
    # Each key sits on the master that owns its slot, and the server hashes as we do.
    owners = slot_map(cl.masters()[0])
    by_id = masters_by_id(cl)
    for k in keys[:300]:
        slot = rc.keyslot(k)
        assert int(by_id[owners[slot]].call("CLUSTER", "KEYSLOT", k)) == slot
        assert by_id[owners[slot]].call("GET", k) == k
    # The slot index: GETKEYSINSLOT on each master returns exactly its share of the keys.
    for m in cl.masters():
        mine = {k for k in keys if by_id[owners[rc.keyslot(k)]] is m}
        listed = set()
        for s in {rc.keyslot(k) for k in mine}:
            listed.update(k for k in m.call("CLUSTER", "GETKEYSINSLOT", s, 1000) if k.startswith("bulk:"))
        assert listed == mine


def seed_slot(cl, rc, slot, prefix):
    """20 keys in `slot` (value: "v-" + key); returns its owner, another master, the keys."""
    src = owner_of(cl, slot)
    dst = next(m for m in cl.masters() if m is not src)
    keys = keys_in_slots([slot], 20, prefix=prefix)
    for k in keys:
        rc.set(k, "v-" + k)
    return src, dst, keys


def test_moved_with_a_stale_slot_map(cl):
    rc = cl.cluster_client()  # learns the slot map now
    slot = 1000
    src, dst, keys = seed_slot(cl, rc, slot, "moved")
    assert migrate_slot(src, dst, slot, cl.masters()) == 20
    # The old owner redirects; RedisCluster follows MOVED and refreshes its map.
    assert raw_error(src.port, "GET", keys[0]) == f"MOVED {slot} {HOST}:{dst.port}".encode()
    assert [rc.get(k) for k in keys] == ["v-" + k for k in keys]
    assert rc.set(keys[0], "new") and dst.call("GET", keys[0]) == "new"
    assert int(dst.call("CLUSTER", "COUNTKEYSINSLOT", slot)) == 20
    assert int(src.call("CLUSTER", "COUNTKEYSINSLOT", slot)) == 0
    cl.wait_agree()


def test_ask_and_tryagain_during_a_migration(cl):
    rc = cl.cluster_client()
    slot = 2000
    src, dst, keys = seed_slot(cl, rc, slot, "ask")
    dst.call("CLUSTER", "SETSLOT", slot, "IMPORTING", src.myid())
    src.call("CLUSTER", "SETSLOT", slot, "MIGRATING", dst.myid())
    moved, stay = keys[:10], keys[10:]
    assert src.call("MIGRATE", HOST, dst.port, "", 0, 5000, "KEYS", *moved) == "OK"

    assert raw_error(src.port, "GET", moved[0]) == f"ASK {slot} {HOST}:{dst.port}".encode()
    assert src.call("GET", stay[0]) == "v-" + stay[0]
    assert raw_error(dst.port, "GET", moved[0]) == f"MOVED {slot} {HOST}:{src.port}".encode()
    with RawConnection(HOST, dst.port) as c:
        assert c.execute("ASKING") == b"+OK\r\n"
        assert c.execute("GET", moved[0]) == b"$%d\r\nv-%s\r\n" % (len(moved[0]) + 2, moved[0].encode())
    # A multi-key command over keys on both sides of the move cannot be served anywhere.
    assert raw_error(src.port, "MGET", moved[0], stay[0]).startswith(b"TRYAGAIN ")
    # RedisCluster follows ASK for reads, and a new key lands on the importing node.
    assert [rc.get(k) for k in keys] == ["v-" + k for k in keys]
    fresh = keys_in_slots([slot], 21, prefix="ask")[20]
    assert rc.set(fresh, "fresh")
    with RawConnection(HOST, dst.port) as c:
        c.execute("ASKING")
        assert c.execute("EXISTS", fresh) == b":1\r\n"
    assert raw_error(src.port, "EXISTS", fresh) == f"ASK {slot} {HOST}:{dst.port}".encode()

    # Everything left in the slot moves, not just this test's keys (the first test's keys
    # may share the slot): a source still holding keys refuses SETSLOT NODE.
    rest = src.call("CLUSTER", "GETKEYSINSLOT", slot, 1000)
    assert set(stay) <= set(rest)
    assert src.call("MIGRATE", HOST, dst.port, "", 0, 5000, "KEYS", *rest) == "OK"
    assert int(src.call("CLUSTER", "COUNTKEYSINSLOT", slot)) == 0
    for n in [dst, src] + [m for m in cl.masters() if m not in (src, dst)]:
        n.call("CLUSTER", "SETSLOT", slot, "NODE", dst.myid())
    assert int(dst.call("CLUSTER", "COUNTKEYSINSLOT", slot)) == 21 + len(rest) - len(stay)
    assert [rc.get(k) for k in keys + [fresh]] == ["v-" + k for k in keys] + ["fresh"]
    cl.wait_agree()


def test_crossslot_errors(cl):
    m = cl.masters()[0]
    mine = sorted(parse_nodes_self(m)["slots"])
    a, b = tag_for_slot(mine[0]), tag_for_slot(mine[1])
    crossslot = "CROSSSLOT Keys in request don't hash to the same slot"
    assert error_of(m, "MSET", f"{{{a}}}1", "x", f"{{{b}}}1", "y") == crossslot
    assert error_of(m, "EVAL", "return 1", 2, f"{{{a}}}1", f"{{{b}}}1") == crossslot
    # Redis 8's multi-key commands route by their key specs (MSETEX's key value pairs).
    assert error_of(m, "MSETEX", 2, f"{{{a}}}1", "x", f"{{{b}}}1", "y", "PX", 1000) == crossslot
    assert error_of(m, "SUNIONCARD", 2, f"{{{a}}}1", f"{{{b}}}1") == crossslot
    assert error_of(m, "SDIFFCARD", 2, f"{{{a}}}1", f"{{{b}}}1") == crossslot
    # The moves route by their two key specs, source and destination.
    for cmd in (["LMOVEM", f"{{{a}}}1", f"{{{b}}}1", "LEFT", "LEFT"],
                ["BLMOVEM", f"{{{a}}}1", f"{{{b}}}1", "LEFT", "LEFT", 0],
                ["ZMOVE", f"{{{a}}}1", f"{{{b}}}1", "MIN"],
                ["BZMOVE", f"{{{a}}}1", f"{{{b}}}1", "MIN", 0],
                ["ZMOVEMEMBER", f"{{{a}}}1", f"{{{b}}}1", "MEMBERS", 1, "x"],
                ["ZUNION", 2, f"{{{a}}}1", f"{{{b}}}1", "AGGREGATE", "COUNT"]):
        assert error_of(m, *cmd) == crossslot, cmd
    assert m.call("LMOVEM", f"{{{a}}}l1", f"{{{a}}}l2", "LEFT", "LEFT") == []
    assert m.call("MSETEX", 2, f"{{{a}}}m1", "x", f"{{{a}}}m2", "y", "PX", 100000) == 1
    assert m.call("SUNIONCARD", 2, f"{{{a}}}s1", f"{{{a}}}s2") == 0
    # In a transaction each command is fine on its own; EXEC sees the slots differ.
    with RawConnection(HOST, m.port) as c:
        assert c.execute("MULTI") == b"+OK\r\n"
        assert c.execute("SET", f"{{{a}}}tx", "1") == b"+QUEUED\r\n"
        assert c.execute("SET", f"{{{b}}}tx", "2") == b"+QUEUED\r\n"
        assert c.execute("EXEC").startswith(b"-CROSSSLOT ")
    assert m.call("EXISTS", f"{{{a}}}tx") == m.call("EXISTS", f"{{{b}}}tx") == 0
    # Hash tags put different keys in one slot: the same command is served.
    assert m.call("MSET", f"{{{a}}}1", "x", f"{{{a}}}2", "y") == "OK"


def test_hash_tagged_transaction(cl):
    rc = cl.cluster_client()
    conn = rc.get_redis_connection(rc.get_node_from_key("{user:1}name"))
    pipe = conn.pipeline(transaction=True)
    pipe.set("{user:1}name", "ann")
    pipe.incr("{user:1}visits")
    pipe.rpush("{user:1}log", "a", "b")
    pipe.get("{user:1}name")
    assert pipe.execute() == [True, 1, 2, "ann"]
    assert rc.lrange("{user:1}log", 0, -1) == ["a", "b"]
    assert rc.get("{user:1}visits") == "1"


def test_lua_with_hash_tagged_keys(cl):
    rc = cl.cluster_client()
    script = ("redis.call('SET', KEYS[1], ARGV[1]) "
              "return redis.call('INCRBY', KEYS[2], ARGV[2])")
    # One tag per master so every node runs a script.
    seen = set()
    for m in cl.masters():
        tag = tag_for_slot(min(parse_nodes_self(m)["slots"]))
        assert rc.eval(script, 2, f"{{{tag}}}a", f"{{{tag}}}n", "v", 5) == 5
        assert rc.eval(script, 2, f"{{{tag}}}a", f"{{{tag}}}n", "w", 2) == 7
        assert m.call("GET", f"{{{tag}}}a") == "w"
        seen.add(m.port)
    assert len(seen) == 3
    sha = rc.script_load("return redis.call('GET', KEYS[1])")
    tag = tag_for_slot(min(parse_nodes_self(cl.masters()[1])["slots"]))
    assert rc.evalsha(sha, 1, f"{{{tag}}}a") == "w"


def test_blocking_pop_woken_by_another_client(cl):
    key = "{queue:7}jobs"
    owner = owner_of(cl, cl.cluster_client().keyslot(key))
    waiter, pusher = cl.cluster_client(), cl.cluster_client()
    result = {}

    def pop():
        result["value"] = waiter.blpop(key, timeout=20)

    t = threading.Thread(target=pop)
    t.start()
    wait_for(lambda: info_dict(owner.call("INFO", "clients"))["blocked_clients"] == "1", timeout=10,
             message="the BLPOP never blocked on the key's owner")
    assert pusher.rpush(key, "job-1") == 1
    t.join(20)
    assert not t.is_alive()
    assert list(result["value"]) == [key, "job-1"]
    assert pusher.llen(key) == 0


def test_publish_reaches_subscribers_on_every_node(cl):
    subs = []
    try:
        for n in cl.nodes:
            c = RawConnection(HOST, n.port, timeout=10)
            subs.append(c)
            assert c.execute("SUBSCRIBE", "news") == b"*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n"
        for publisher in (cl.masters()[0], cl.replicas_of(cl.masters()[1])[0], cl.masters()[2]):
            # PUBLISH counts the receivers on the node it ran on; the bus carries it to the rest
            # (and only the bus: a master's replicas would otherwise see it twice, which the
            # next read would catch).
            assert publisher.call("PUBLISH", "news", f"from-{publisher.port}") == 1
            expected = b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$10\r\nfrom-%d\r\n" % publisher.port
            for c in subs:
                assert c.read_reply() == expected
    finally:
        for c in subs:
            c.close()


def test_sharded_pubsub_stays_in_the_shard(cl):
    channel = "orders{eu}"
    rc = cl.cluster_client()
    slot = rc.keyslot(channel)
    owner = owner_of(cl, slot)
    replica = cl.replicas_of(owner)[0]
    other = next(m for m in cl.masters() if m is not owner)
    moved = f"MOVED {slot} {HOST}:{owner.port}".encode()
    assert raw_error(other.port, "SSUBSCRIBE", channel) == moved
    assert raw_error(other.port, "SPUBLISH", channel, "x") == moved
    assert raw_error(owner.port, "SSUBSCRIBE", channel, "other{us}").startswith(b"CROSSSLOT ")
    subs, outsider = [], RawConnection(HOST, other.port, timeout=10)
    try:
        for n in (owner, replica):  # a replica serves shard channels of its master's slots
            c = RawConnection(HOST, n.port, timeout=10)
            subs.append(c)
            assert c.execute("SSUBSCRIBE", channel) == (
                b"*3\r\n$10\r\nssubscribe\r\n$10\r\norders{eu}\r\n:1\r\n")
        # Classic subscribers to the same name elsewhere see nothing of SPUBLISH.
        assert outsider.execute("SUBSCRIBE", channel).startswith(b"*3\r\n$9\r\nsubscribe")
        # Each message arrives once: over the bus (PUBLISHSHARD) to the replica, not also in its
        # replication stream, so the second read is the second message, not a duplicate.
        for text in (b"hello", b"again"):
            assert owner.call("SPUBLISH", channel, text.decode()) == 1
            for c in subs:
                assert c.read_reply() == b"*3\r\n$8\r\nsmessage\r\n$10\r\norders{eu}\r\n$5\r\n%s\r\n" % text
        # A classic PUBLISH still goes everywhere and proves the outsider's connection works:
        # the first thing it receives is this, not the shard message.
        assert owner.call("PUBLISH", channel, "classic") == 0
        assert outsider.read_reply() == b"*3\r\n$7\r\nmessage\r\n$10\r\norders{eu}\r\n$7\r\nclassic\r\n"
    finally:
        outsider.close()
        for c in subs:
            c.close()
